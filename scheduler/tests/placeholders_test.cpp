#include "scheduler/placeholders.hpp"
#include "scheduler/validation.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;

pod_group group_of(int32_t min_member, resources min_resources,
                   std::vector<role_minimum> roles = {}) {
  pod_group g;
  g.meta.name = "spark";
  g.meta.namespace_name = "jobs";
  g.min_member = min_member;
  g.min_resources = std::move(min_resources);
  g.min_task_member = std::move(roles);
  g.priority = 7;
  g.meta.annotations.set(reserve_missing_members_key, "true");
  return g;
}

// Without the annotation (or with "false") a gang short of minMember reserves nothing: it waits
// for its pods, as Volcano's gangs do, whatever minResources says.
TEST(Placeholders, OnlyAPodGroupThatAsksForThemGetsThem) {
  pod driver = make_pod("spark-driver").cpu("1").memory("1Gi");
  const pod* members[] = {&driver};
  auto asks = group_of(3, res("cpu", "3", "memory", "3Gi"));
  EXPECT_TRUE(reserves_missing_members(asks));
  EXPECT_EQ(make_placeholders(asks, members).size(), 2u);
  auto silent = asks;
  silent.meta.annotations = {};
  EXPECT_FALSE(reserves_missing_members(silent));
  EXPECT_TRUE(make_placeholders(silent, members).empty());
  auto declines = asks;
  declines.meta.annotations.set(reserve_missing_members_key, "false");
  EXPECT_TRUE(make_placeholders(declines, members).empty());
}

TEST(Placeholders, TheAnnotationIsTrueOrFalseAndABadValueNamesIt) {
  auto g = group_of(3, res("cpu", "3"));
  g.meta.uid = "u";
  EXPECT_TRUE(validate(g).empty());
  g.meta.annotations.set(reserve_missing_members_key, "yes");
  auto errors = validate(g);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "metadata.annotations[scheduling.phalanx.io/reserve-missing-members]");
  EXPECT_EQ(errors[0].detail, "must be \"true\" or \"false\"");
}

TEST(Placeholders, SparkDriverLeavesTwoExecutorsWorthOfRoom) {
  pod driver = make_pod("spark-driver").cpu("1").memory("1Gi").role("driver").selector("zone", "a");
  const pod* members[] = {&driver};
  auto ph = make_placeholders(group_of(3, res("cpu", "3", "memory", "3Gi")), members);
  ASSERT_EQ(ph.size(), 2u);
  for (std::size_t i = 0; i < ph.size(); ++i) {
    EXPECT_EQ(ph[i].meta.name, "spark-placeholder-" + std::to_string(i));
    EXPECT_EQ(ph[i].meta.namespace_name, "jobs");
    EXPECT_EQ(ph[i].group, "spark");
    EXPECT_EQ(ph[i].requests, res("cpu", "1", "memory", "1Gi", "pods", "1"));
    EXPECT_EQ(ph[i].priority, 7);
    EXPECT_EQ(ph[i].role, "");
    // Constraints of the first member: executors go where the driver may.
    EXPECT_EQ(ph[i].constraints, driver.constraints);
  }
}

TEST(Placeholders, NoneWhenTheMembersReachMinMemberOrNothingSaysHowBig) {
  pod a = make_pod("a").cpu("1");
  pod b = make_pod("b").cpu("1");
  const pod* two[] = {&a, &b};
  EXPECT_TRUE(make_placeholders(group_of(2, res("cpu", "2")), two).empty());
  EXPECT_TRUE(make_placeholders(group_of(3, resources{}), two).empty());
}

TEST(Placeholders, ShareWhatIsLeftEvenlyRoundedDownAndNeverNegative) {
  pod big = make_pod("big").cpu("5").memory("1Gi");
  const pod* members[] = {&big};
  auto ph = make_placeholders(group_of(4, res("cpu", "6", "memory", "2Gi", "nvidia.com/gpu", "2")),
                              members);
  ASSERT_EQ(ph.size(), 3u);
  // cpu: 1 left / 3 = 333m; memory: 1Gi / 3 rounded down; gpu: 2 / 3 = 0.
  EXPECT_EQ(ph[0].requests.cpu_milli, 333);
  EXPECT_EQ(ph[0].requests.memory_bytes, (int64_t(1) << 30) / 3);
  EXPECT_EQ(ph[0].requests.get("nvidia.com/gpu"), 0);
  pod huge = make_pod("huge").cpu("10");
  const pod* over[] = {&huge};
  auto none_left = make_placeholders(group_of(2, res("cpu", "3")), over);
  ASSERT_EQ(none_left.size(), 1u);
  EXPECT_EQ(none_left[0].requests, res("pods", "1"));
}

TEST(Placeholders, DimensionsMinResourcesLeavesOutAreSizedLikeAMemberOfTheRole) {
  pod ps = make_pod("ps-0").cpu("2").memory("4Gi").role("ps");
  pod worker = make_pod("worker-0").cpu("1").memory("2Gi").gpu(1).role("worker");
  const pod* members[] = {&ps, &worker};
  // minResources names only GPUs: cpu and memory come from the present worker.
  auto ph = make_placeholders(group_of(4, res("nvidia.com/gpu", "3"), {{"worker", 3}}), members);
  ASSERT_EQ(ph.size(), 2u);
  for (const auto& p : ph) {
    EXPECT_EQ(p.role, "worker");
    EXPECT_EQ(p.requests, res("cpu", "1", "memory", "2Gi", "nvidia.com/gpu", "1", "pods", "1"));
  }
}

TEST(Placeholders, TakeTheRolesMinTaskMemberStillMisses) {
  pod ps = make_pod("ps-0").cpu("1").role("ps");
  const pod* members[] = {&ps};
  auto ph = make_placeholders(group_of(4, res("cpu", "4"), {{"ps", 1}, {"worker", 2}}), members);
  ASSERT_EQ(ph.size(), 3u);
  EXPECT_EQ(ph[0].role, "worker");
  EXPECT_EQ(ph[1].role, "worker");
  EXPECT_EQ(ph[2].role, "");
}

TEST(Placeholders, NewPodTakesOverOnlyWhatCoversItWhereItMayRun) {
  node plain = make_node("plain").cpu("8");
  node tainted = make_node("gpu").cpu("8").taint("gpu", "true");
  pod small = make_pod("ph-small").cpu("500m").role("executor");
  pod any_role = make_pod("ph-any").cpu("2");
  pod same_role = make_pod("ph-same").cpu("2").role("executor");
  pod other_role = make_pod("ph-other").cpu("4").role("driver");
  pod on_taint = make_pod("ph-taint").cpu("4").role("executor");

  pod executor = make_pod("exec-0").cpu("1").role("executor");
  std::vector<placeholder_slot> slots = {{&small, &plain},
                                         {&other_role, &plain},
                                         {&on_taint, &tainted},
                                         {&any_role, &plain},
                                         {&same_role, &plain}};
  // Too small, another role's, an untolerated taint: skipped; the same role beats no role.
  EXPECT_EQ(pick_placeholder(executor, slots), std::optional<std::size_t>(4));
  slots.pop_back();
  EXPECT_EQ(pick_placeholder(executor, slots), std::optional<std::size_t>(3));
  slots.pop_back();
  EXPECT_EQ(pick_placeholder(executor, slots), std::nullopt);
  pod tolerant = make_pod("exec-1").cpu("1").role("executor").tolerate("gpu", "true");
  EXPECT_EQ(pick_placeholder(tolerant, slots), std::optional<std::size_t>(2));
}

} // namespace
} // namespace phalanx::scheduler
