#include "scheduler/queue_book.hpp"

#include "scheduler/random.hpp"
#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::res;
using book_type = queue_book<const pod_group*>;

// A gang of minMember `min` claiming `min_cpu` at the gate, created at second `created`.
pod_group gang(std::string name, int32_t min, const char* min_cpu, int64_t created = 0,
               int32_t priority = 0) {
  return make_gang(std::move(name), min)
      .min_resources(res("cpu", min_cpu))
      .priority(priority)
      .created(timestamp{} + std::chrono::seconds(created))
      .obj()
      .group;
}

usage_change took(const char* cpu, int64_t pods) { return {res("cpu", cpu), {}, pods, 0}; }
usage_change gave(const char* cpu, int64_t pods) { return {{}, res("cpu", cpu), 0, pods}; }

std::vector<uint64_t> ids(const queue_order& order) {
  std::vector<uint64_t> out;
  for (const auto& k : order)
    out.push_back(k.gang);
  return out;
}

// One gang's life, step by step: what the queue's sums and its claim are after each.
TEST(QueueBook, TheLifeOfAGangTable) {
  const auto spark = gang("spark", 4, "8");  // Four pods of 2 cpu.
  book_type book;
  struct row {
    const char* what;
    std::function<claim_change(book_type&)> step;
    const char* claim_before;  // The change the step returns.
    const char* claim_after;
    const char* inqueue;
    const char* allocated;
    const char* demand;
    bool started;
    std::vector<uint64_t> to_admit, to_plan;
  };
  const row rows[] = {
      {"filed: waits for the gate, claims nothing",
       [&](book_type& b) { return b.file(1, &spark, res("cpu", "8"), false, false); }, "0", "0",
       "0", "0", "8", false, {1}, {}},
      {"admitted: waits for a slot, claims its minResources",
       [&](book_type& b) { return b.admit(1); }, "0", "8", "8", "0", "8", false, {}, {1}},
      {"admitted again: nothing happens", [&](book_type& b) { return b.admit(1); }, "0", "0", "8",
       "0", "8", false, {}, {1}},
      {"a planning slot: it leaves the order",
       [&](book_type& b) {
         b.stop_waiting(1);
         return claim_change{};
       },
       "0", "0", "8", "0", "8", false, {}, {}},
      {"three pods bound: it claims what it does not hold",
       [&](book_type& b) { return *b.use(1, took("6", 3)); }, "8", "2", "2", "6", "2", false, {},
       {}},
      {"the fourth: started, it claims nothing",
       [&](book_type& b) { return *b.use(1, took("2", 1)); }, "2", "0", "0", "8", "0", true, {},
       {}},
      {"the driver ends: still nothing (not 2 cpu for a pod no one makes)",
       [&](book_type& b) { return *b.use(1, gave("2", 1)); }, "0", "0", "0", "6", "0", true, {},
       {}},
      {"filed for an elastic round: in the order, still nothing claimed",
       [&](book_type& b) { return b.file(1, &spark, res("cpu", "2"), true, true); }, "0", "0",
       "0", "6", "2", true, {}, {1}},
      {"forgotten: its part leaves every sum",
       [&](book_type& b) { return b.forget(1); }, "0", "0", "0", "0", "0", false, {}, {}},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    auto change = r.step(book);
    EXPECT_EQ(change.before, res("cpu", r.claim_before));
    EXPECT_EQ(change.after, res("cpu", r.claim_after));
    EXPECT_EQ(book.inqueue(), res("cpu", r.inqueue));
    EXPECT_EQ(book.allocated(), res("cpu", r.allocated));
    EXPECT_EQ(book.demand(), res("cpu", r.demand));
    const auto* g = book.find(1);
    EXPECT_EQ(g != nullptr && g->started, r.started);
    EXPECT_EQ(ids(book.to_admit()), r.to_admit);
    EXPECT_EQ(ids(book.to_plan()), r.to_plan);
  }
  EXPECT_EQ(book.find(1), nullptr);
}

// Gangs short of their minimum first, then priority, then creation, then id; elastic rounds last.
TEST(QueueBook, OrdersGangsAsVolcanosGangOrder) {
  const auto old_low = gang("old-low", 1, "1", 10, 0);
  const auto new_high = gang("new-high", 1, "1", 50, 100);
  const auto newer_low = gang("newer-low", 1, "1", 20, 0);
  const auto running_high = gang("running-high", 1, "1", 0, 1000);
  book_type book;
  book.file(1, &old_low, {}, true, false);
  book.file(2, &new_high, {}, true, false);
  book.file(3, &newer_low, {}, true, false);
  book.file(4, &running_high, {}, true, true);  // Runs its minimum: an elastic round.
  EXPECT_EQ(ids(book.to_plan()), (std::vector<uint64_t>{2, 1, 3, 4}));
  // Filed again not ready (it lost members), it comes first.
  book.file(4, &running_high, {}, true, false);
  EXPECT_EQ(ids(book.to_plan()), (std::vector<uint64_t>{4, 2, 1, 3}));
  // The same PodGroup under two ids (a renewed gang): the id decides.
  book.file(5, &old_low, {}, false, false);
  book.file(0, &old_low, {}, false, false);
  EXPECT_EQ(ids(book.to_admit()), (std::vector<uint64_t>{0, 5}));
}

TEST(QueueBook, UsageOfAGangItDoesNotKnow) {
  const auto g = gang("g", 2, "4");
  book_type book;
  // Only a removal: the last usage of a gang forgotten since. Nothing is made of it.
  EXPECT_FALSE(book.use(7, gave("2", 1)));
  EXPECT_EQ(book.find(7), nullptr);
  EXPECT_EQ(book.allocated(), resources{});
  // An addition (a gang restored with bound pods, before it waited): kept from the first one,
  // with no PodGroup, in no order, claiming nothing.
  book.use(7, took("4", 2));
  ASSERT_NE(book.find(7), nullptr);
  EXPECT_EQ(book.allocated(), res("cpu", "4"));
  EXPECT_TRUE(book.to_admit().empty());
  EXPECT_TRUE(book.to_plan().empty());
  // A whole count replaces what the book had.
  book.use(7, {res("cpu", "2"), {}, 1, 0, true});
  EXPECT_EQ(book.allocated(), res("cpu", "2"));
  EXPECT_EQ(book.find(7)->holding, 1);
  // Its PodGroup comes, restored admitted and ready: started, so it claims nothing more.
  book.file(7, &g, {}, true, true);
  EXPECT_TRUE(book.find(7)->started);
  EXPECT_EQ(book.inqueue(), resources{});
  book.forget(7);
  EXPECT_EQ(book.allocated(), resources{});
}

TEST(QueueBook, AGangIsSetAsideOnlyWhileItHoldsNothing) {
  const auto g = gang("g", 2, "4");
  book_type book;
  book.file(1, &g, res("cpu", "4"), false, false);
  EXPECT_FALSE(book.set_aside(1)) << "not admitted: nothing to give back";
  book.admit(1);
  book.stop_waiting(1);
  book.use(1, took("2", 1));
  EXPECT_FALSE(book.set_aside(1)) << "it holds a pod";
  book.use(1, gave("2", 1));
  auto change = book.set_aside(1);
  ASSERT_TRUE(change);
  EXPECT_EQ(change->before, res("cpu", "4"));
  EXPECT_EQ(change->after, resources{});
  EXPECT_EQ(book.inqueue(), resources{});
  EXPECT_TRUE(book.find(1)->unresolvable);
  EXPECT_FALSE(book.find(1)->admitted);
  // It waits for the gate again, skipped there until the nodes change or new pods come.
  book.file(1, &g, res("cpu", "4"), false, false);
  EXPECT_TRUE(book.find(1)->unresolvable);
  book.nodes_changed();
  EXPECT_FALSE(book.find(1)->unresolvable);
  book.set_aside(1);  // Not admitted: stays as it is.
  book.admit(1);
  book.stop_waiting(1);
  book.set_aside(1);
  book.file(1, &g, res("cpu", "4"), false, false, true);
  EXPECT_FALSE(book.find(1)->unresolvable) << "a member joined";
}

TEST(QueueBook, AGangThatStartsOverClaimsItsWholeMinimumAgain) {
  const auto g = gang("g", 2, "4");
  book_type book;
  book.file(1, &g, res("cpu", "4"), false, false);
  book.admit(1);
  book.stop_waiting(1);
  book.use(1, took("4", 2));
  EXPECT_TRUE(book.find(1)->started);
  book.use(1, gave("4", 2));  // Evicted whole.
  EXPECT_EQ(book.inqueue(), resources{});
  auto change = book.start_over(1);
  EXPECT_EQ(change.after, res("cpu", "4"));
  EXPECT_EQ(book.inqueue(), res("cpu", "4"));
  EXPECT_TRUE(book.to_plan().empty()) << "it waits once its caller files it back";
  book.wait_again(1);
  EXPECT_EQ(ids(book.to_plan()), (std::vector<uint64_t>{1}));
}

TEST(QueueBook, AChangedMinResourcesMovesTheClaim) {
  const auto small = gang("g", 2, "4");
  const auto big = gang("g", 2, "6");
  book_type book;
  book.file(1, &small, {}, false, false);
  book.admit(1);
  auto change = book.file(1, &big, {}, true, false);
  EXPECT_EQ(change.before, res("cpu", "4"));
  EXPECT_EQ(change.after, res("cpu", "6"));
  EXPECT_EQ(book.inqueue(), res("cpu", "6"));
  EXPECT_EQ(ids(book.to_plan()), (std::vector<uint64_t>{1})) << "once, not twice";
}

// Whatever the steps, each sum is the sum of its gangs' parts, each order holds exactly the
// gangs with a PodGroup that wait there, and the claims returned add up to the inqueue sum.
TEST(QueueBook, SumsAndOrdersAgreeWithTheGangsUnderRandomSteps) {
  std::vector<pod_group> groups;
  for (int i = 0; i < 6; ++i)
    groups.push_back(gang("g" + std::to_string(i), 1 + i % 3, i % 2 ? "3" : "0", i, i % 2));
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    rng random(seed);
    book_type book;
    std::map<uint64_t, bool> waiting;  // Gang -> waits in an order (per the steps).
    resources told;                     // Claims as the caller hears of them.
    for (int step = 0; step < 400; ++step) {
      const uint64_t id = random() % 6;
      const auto* group = &groups[id];
      claim_change c;
      switch (random() % 9) {
        case 0:
        case 1:
          c = book.file(id, group, res("cpu", std::to_string(random() % 5).c_str()),
                        random() % 4 == 0, random() % 4 == 0, random() % 2 == 0);
          waiting[id] = true;
          break;
        case 2:
          if (const auto* g = book.find(id); g != nullptr && g->group != nullptr && !g->admitted)
            waiting[id] = true;
          c = book.admit(id);
          break;
        case 3:
        case 4: {
          const auto n = int64_t(random() % 3);
          c = book.use(id, took(std::to_string(n).c_str(), n)).value_or(claim_change{});
          break;
        }
        case 5:
          if (const auto* g = book.find(id); g != nullptr && g->holding > 0)
            c = *book.use(id, gave("1", 1));
          break;
        case 6:
          book.stop_waiting(id);
          waiting[id] = false;
          break;
        case 7:
          if (auto s = book.set_aside(id)) {
            c = *s;
            waiting[id] = false;
          }
          break;
        case 8:
          c = random() % 2 ? book.forget(id) : book.start_over(id);
          if (book.find(id) == nullptr)
            waiting[id] = false;
          break;
      }
      told -= c.before;
      told += c.after;
      resources allocated, inqueue, demand;
      std::size_t in_orders = 0;
      for (const auto& [gid, g] : book.gangs()) {
        allocated += g.allocated;
        demand += g.demand;
        inqueue += book_type::claim_of(g);
        // A gang without a PodGroup has no key; it must be in no order (counted below).
        const auto key = book_type::key_of(g, gid);
        const bool in_admit = g.group != nullptr && book.to_admit().count(key) != 0;
        const bool in_plan = g.group != nullptr && book.to_plan().count(key) != 0;
        ASSERT_FALSE(in_admit && in_plan);
        if (g.group != nullptr && waiting[gid]) {
          ASSERT_TRUE(g.admitted ? in_plan : in_admit) << "gang " << gid << " step " << step;
        } else {
          ASSERT_FALSE(in_admit || in_plan) << "gang " << gid << " step " << step;
        }
        in_orders += (in_admit || in_plan) ? 1 : 0;
      }
      ASSERT_EQ(in_orders, book.to_admit().size() + book.to_plan().size());
      ASSERT_EQ(book.allocated(), allocated);
      ASSERT_EQ(book.demand(), demand);
      ASSERT_EQ(book.inqueue(), inqueue);
      ASSERT_EQ(told, inqueue);
    }
  }
}

} // namespace
} // namespace phalanx::scheduler
