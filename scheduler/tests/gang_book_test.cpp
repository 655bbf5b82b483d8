#include "scheduler/gang_book.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

// A TensorFlow-like gang: minMember `min_member`, and role minimums ps and worker when given.
pod_group tf_gang(int32_t min_member, std::vector<role_minimum> roles = {}) {
  pod_group g;
  g.meta.name = "tf";
  g.min_member = min_member;
  g.min_task_member = std::move(roles);
  return g;
}

// A book of `g` with `ready` members of each role named ("" for a member without a minimum).
gang_book book_with(const pod_group& g, const std::vector<std::pair<std::string, int32_t>>& ready) {
  gang_book book(g);
  for (const auto& [role, n] : ready)
    for (int32_t i = 0; i < n; ++i)
      book.count(gang_book::role_index(g, role));
  return book;
}

TEST(GangBook, RoleIndexIsThePositionOfTheRolesMinimum) {
  auto g = tf_gang(3, {{"ps", 1}, {"worker", 2}});
  EXPECT_EQ(gang_book::role_index(g, "ps"), 0u);
  EXPECT_EQ(gang_book::role_index(g, "worker"), 1u);
  EXPECT_EQ(gang_book::role_index(g, "chief"), gang_book::no_role);
  EXPECT_EQ(gang_book::role_index(g, ""), gang_book::no_role);
  EXPECT_EQ(gang_book::role_index(tf_gang(3), "ps"), gang_book::no_role);
}

TEST(GangBook, CountsReadyMembersInAllAndByRole) {
  auto g = tf_gang(3, {{"ps", 1}, {"worker", 2}});
  auto book = book_with(g, {{"ps", 1}, {"worker", 2}, {"", 1}});
  EXPECT_EQ(book.ready(), 4);
  EXPECT_EQ(book.ready_of(0), 1);
  EXPECT_EQ(book.ready_of(1), 2);
  book.count(1, -1);  // A worker evicted.
  EXPECT_EQ(book.ready(), 3);
  EXPECT_EQ(book.ready_of(1), 1);
  book.count(gang_book::no_role, -1);
  EXPECT_EQ(book.ready(), 2);
}

// The table of the minimum: minMember, then each role's minimum, the most short decides.
TEST(GangBook, TheMinimumTable) {
  struct row {
    const char* what;
    pod_group group;
    std::vector<std::pair<std::string, int32_t>> ready;
    bool runs;
    int32_t short_by;
    int32_t min_pods;
    std::vector<role_minimum> min_per_role;
  };
  const std::vector<row> rows = {
      {"nothing placed", tf_gang(3), {}, false, 3, 3, {}},
      {"one short of minMember", tf_gang(3), {{"", 2}}, false, 1, 1, {}},
      {"minMember met", tf_gang(3), {{"", 3}}, true, 0, 0, {}},
      {"beyond minMember", tf_gang(3), {{"", 5}}, true, 0, 0, {}},
      {"roles, nothing placed", tf_gang(3, {{"ps", 1}, {"worker", 2}}), {}, false, 3, 3,
       {{"ps", 1}, {"worker", 2}}},
      {"minMember met by workers alone: ps still short", tf_gang(3, {{"ps", 1}, {"worker", 2}}),
       {{"worker", 3}}, false, 1, 0, {{"ps", 1}}},
      {"a role short by more than minMember", tf_gang(2, {{"worker", 4}}), {{"worker", 1}},
       false, 3, 1, {{"worker", 3}}},
      {"members of no role count toward minMember only",
       tf_gang(3, {{"ps", 1}}), {{"", 3}}, false, 1, 0, {{"ps", 1}}},
      {"every minimum met", tf_gang(3, {{"ps", 1}, {"worker", 2}}), {{"ps", 1}, {"worker", 2}},
       true, 0, 0, {}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    auto book = book_with(r.group, r.ready);
    EXPECT_EQ(book.runs_minimum(r.group), r.runs);
    EXPECT_EQ(book.members_short(r.group), r.short_by);
    gang_request request;
    request.min_per_role = {{"stale", 9}};  // What was there before is replaced.
    book.ask_for_minimum(r.group, request);
    EXPECT_EQ(request.min_pods, r.min_pods);
    EXPECT_EQ(request.min_per_role, r.min_per_role);
  }
}

// Volcano's gang rule as the preemption planner takes it: the ready members beyond minMember
// may go one by one; a gang with role minimums has none to spare.
TEST(GangBook, AsAVictimItSparesOnlyWhatItsMinimumDoesNotNeed) {
  struct row {
    const char* what;
    pod_group group;
    std::vector<std::pair<std::string, int32_t>> ready;
    int32_t spare;  // ready - min_member of the victim_gang, at least 0.
  };
  const std::vector<row> rows = {
      {"two beyond minMember", tf_gang(3), {{"", 5}}, 2},
      {"exactly minMember", tf_gang(3), {{"", 3}}, 0},
      {"below minMember (it ran and lost pods)", tf_gang(3), {{"", 1}}, 0},
      {"minMember 0 is taken as 1", tf_gang(0), {{"", 2}}, 1},
      {"role minimums: nothing spare", tf_gang(2, {{"worker", 1}}), {{"worker", 4}}, 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    auto v = book_with(r.group, r.ready).as_victim(r.group, 42);
    EXPECT_EQ(v.gang, 42u);
    EXPECT_EQ(v.ready, book_with(r.group, r.ready).ready());
    EXPECT_EQ(std::max(0, v.ready - v.min_member), r.spare);
    EXPECT_GE(v.min_member, 1);
  }
}

} // namespace
} // namespace phalanx::scheduler
