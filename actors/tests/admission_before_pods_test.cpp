// A PodGroup is admitted before its pods exist, as Volcano's enqueue admits it: Volcano's job
// controller makes a job's pods only once the job's PodGroup is Inqueue, so a scheduler that
// waited for the pods would never start a Volcano Job. Admitted, it claims its minResources at
// the enqueue gate, which holds back a PodGroup that would overcommit the cluster.

#include "actors/tests/runtime_harness.hpp"

#include "actors/sim_cluster.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using scheduler::testing::res;
using namespace std::chrono_literals;

api::pod_group_object group_asking(const std::string& name, int32_t min_member,
                                   const std::string& cpu) {
  auto g = group_of(name, min_member);
  g.group.min_resources = res("cpu", cpu);
  return g;
}

scheduler::pod_group_phase phase_of(runtime_harness& h, const std::string& group) {
  return h.group(group).status.phase;
}

TEST(AdmissionBeforePods, APodGroupWithoutPodsIsAdmittedAndClaimsItsMinResources) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{deterministic_config(seed), {make_node("n-0").cpu("8").memory("16Gi")}};
    runtime_harness::must_ok(h.create(group_asking("first", 2, "6")), "first");
    ASSERT_TRUE(h.run_until(
        [&] { return phase_of(h, "first") == scheduler::pod_group_phase::inqueue; }, 5000ms,
        10ms))
        << scheduler::to_string(phase_of(h, "first"));
    // Its claim counts at the gate: 6 of 8 cpu (x1.2 overcommit: 9.6) leave no room for 6 more.
    runtime_harness::must_ok(h.create(group_asking("second", 2, "6")), "second");
    h.pass(2000ms);
    EXPECT_EQ(phase_of(h, "second"), scheduler::pod_group_phase::pending);
    // Its pods come, as a controller that waited for Inqueue makes them, and run.
    for (int i = 0; i < 2; ++i)
      runtime_harness::must_ok(
          h.create(api::pod_object{
              make_pod("first-" + std::to_string(i)).cpu("3").group("first"), {}}),
          "pod");
    ASSERT_TRUE(h.run_until([&] { return h.bound("first-0") && h.bound("first-1"); }, 5000ms,
                            10ms));
    EXPECT_EQ(phase_of(h, "first"), scheduler::pod_group_phase::running);
    EXPECT_INVARIANTS(h);
  }
}

// A started gang whose pods are finishing claims nothing more at the gate (Volcano's overcommit
// plugin counts a Running PodGroup only while it holds minMember pods): its room goes back as
// its pods end, and is not claimed again for pods no one will make. Here the first of two 3-cpu
// pods succeeds; counted, the rest of the 6-cpu claim (3) would leave 3 + 3 + 6 = 12 cpu
// against 8 x 1.2 = 9.6 and hold the second gang back.
TEST(AdmissionBeforePods, AStartedGangWhosePodsAreFinishingClaimsNothingMore) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_asking("first", 2, "6")), "first");
  for (int i = 0; i < 2; ++i) {
    scheduler::pod p = make_pod("first-" + std::to_string(i)).cpu("3").group("first");
    p.meta.annotations.set(std::string(sim_duration_key), i == 0 ? "1s" : "1h");
    runtime_harness::must_ok(h.create(api::pod_object{std::move(p), {}}), "pod");
  }
  ASSERT_TRUE(h.run_until(
      [&] { return h.pod("first-0").pod.phase == scheduler::pod_phase::succeeded; }, 10000ms,
      10ms));
  ASSERT_EQ(h.pod("first-1").pod.phase, scheduler::pod_phase::running);
  runtime_harness::must_ok(h.create(group_asking("second", 2, "6")), "second");
  EXPECT_TRUE(h.run_until(
      [&] { return phase_of(h, "second") == scheduler::pod_group_phase::inqueue; }, 5000ms,
      10ms))
      << scheduler::to_string(phase_of(h, "second"));
  EXPECT_INVARIANTS(h);
}

} // namespace
} // namespace phalanx::actors::testing
