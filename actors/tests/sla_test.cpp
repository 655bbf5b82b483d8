// Volcano's sla plugin on the whole runtime (scheduler/sla.hpp), under CAF's test coordinator:
// a gang that waited past its sla-waiting-time is enqueued although the cluster's overcommitted
// room would hold it back, and the gang of the same size without one keeps waiting.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/sla.hpp"
#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;

std::string group_message(runtime_harness& h, const std::string& name) {
  std::string out;
  for (const auto& c : h.group(name).status.conditions)
    out += c.message;
  return out;
}

TEST(SlaWaitingTime, AGangThatWaitedPastItIsEnqueuedBeyondTheOvercommitRoom) {
  // One node of 4 CPUs, held whole: 1.2 x 4 - 4 = 0.8 CPU of enqueue room.
  runtime_harness h{deterministic_config(7), {make_node("n-0").cpu("4").memory("8Gi")}};
  auto gang = [&](const std::string& name, const char* sla) {
    auto g = group_of(name, 1);
    g.group.min_resources = make_pod("x").cpu("4").obj().requests;
    g.group.min_resources.pods = 0;
    if (sla) {
      g.group.meta.annotations.set(scheduler::sla_waiting_time_key, sla);
      g.group.sla_waiting_time = **scheduler::read_sla_waiting_time(g.group.meta);
    }
    runtime_harness::must_ok(h.create(g), name + " group");
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod(name + "-0").cpu("4").group(name), {}}), name);
  };
  gang("holder", nullptr);
  ASSERT_TRUE(h.run_until([&] { return h.pod("holder-0").pod.is_bound(); }, settle_limit,
                          settle_step));
  gang("plain", nullptr);
  gang("late", "30s");
  ASSERT_TRUE(h.run_until(
      [&] {
        return group_message(h, "plain").find("cluster overcommit") != std::string::npos &&
               group_message(h, "late").find("cluster overcommit") != std::string::npos;
      },
      settle_limit, settle_step))
      << group_message(h, "plain") << " | " << group_message(h, "late");
  EXPECT_EQ(h.group("late").status.phase, scheduler::pod_group_phase::pending);

  // Thirty seconds on, nothing else changed: the late gang is enqueued (its pod still has no
  // room), the plain one still waits at the gate.
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("late").status.phase == scheduler::pod_group_phase::inqueue; },
      std::chrono::milliseconds(40000), std::chrono::milliseconds(100)))
      << group_message(h, "late");
  EXPECT_EQ(h.group("plain").status.phase, scheduler::pod_group_phase::pending);
  EXPECT_FALSE(h.pod("late-0").pod.is_bound());

  // The holder goes: the late gang, admitted, takes the node; the plain one stays outside the
  // room the late one claims.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "holder-0"),
                           "delete the holder");
  ASSERT_TRUE(h.run_until([&] { return h.pod("late-0").pod.is_bound(); }, settle_limit,
                          settle_step))
      << group_message(h, "late");
  EXPECT_FALSE(h.pod("plain-0").pod.is_bound());
  EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
}

} // namespace
} // namespace phalanx::actors::testing
