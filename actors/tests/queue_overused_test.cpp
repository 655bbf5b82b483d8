// Volcano's overused rule on the whole runtime (scheduler::queue_overused): a queue that holds
// its deserved share in every dimension but pods starts nothing new while it does, even with room
// idle, and starts again once what it holds drops. Volcano's preempt action does not skip an
// overused queue, so with preemption on a gang short of its minimum still plans.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using namespace std::chrono_literals;

// A gang of `pods` 1-cpu pods "<name>-<i>", minMember `pods`, in `queue`. No memory: a queue's
// deserved share of a dimension no one lacks is all it asks for, waiting pods included, so with
// memory requests a queue with pods waiting never holds its share in every dimension.
void gang(runtime_harness& h, const std::string& name, int32_t pods, const std::string& queue) {
  auto g = group_of(name, pods);
  g.group.queue = queue;
  runtime_harness::must_ok(h.create(g), name);
  for (int32_t i = 0; i < pods; ++i)
    runtime_harness::must_ok(
        h.create(api::pod_object{
            make_pod(name + "-" + std::to_string(i)).cpu("1").group(name), {}}),
        name);
}

int64_t deserved_cpu(runtime_harness& h, const std::string& queue) {
  auto r = h.get(api::resource_kind::queue, "", queue);
  runtime_harness::must_ok(r, "queue " + queue);
  return std::get<api::queue_object>(*r).status.deserved.cpu_milli;
}

// 4 cpus; queues a and b of weight 1. a-long holds 3 cpus in a; b-pair (2 cpus) cannot start on
// the 1 left, so b deserves 2 and a 2: a holds more than its share. a-small (1 cpu) waits with
// the cpu idle, as in Volcano; a-long's end brings a below its share and both start.
TEST(QueueOverused, AQueueHoldingItsShareStartsNothingNewUntilItHoldsLess) {
  for (bool preemption : {false, true}) {
    SCOPED_TRACE(preemption ? "preemption on" : "preemption off");
    auto config = deterministic_config(3);
    config.scheduling.preemption = preemption;
    runtime_harness h{config, {make_node("n-0").cpu("4").memory("16Gi")}};
    for (const char* name : {"a", "b"}) {
      api::queue_object q;
      q.queue.meta.name = name;
      q.queue.weight = 1;
      runtime_harness::must_ok(h.create(q), name);
    }
    gang(h, "a-long", 3, "a");
    ASSERT_TRUE(h.run_until([&] { return h.bound("a-long-2"); }, 5000ms, 10ms));
    gang(h, "b-pair", 2, "b");
    ASSERT_TRUE(h.run_until([&] { return deserved_cpu(h, "b") == 2'000; }, 5000ms, 10ms))
        << deserved_cpu(h, "b");
    gang(h, "a-small", 1, "a");
    ASSERT_TRUE(h.run_until(
        [&] {
          return h.group("a-small").status.phase != scheduler::pod_group_phase::pending;
        },
        5000ms, 10ms));
    h.pass(3000ms);
    if (preemption) {
      // A gang short of its minimum plans in an overused queue when it may preempt; here it
      // fits on the idle cpu, as Volcano's preempt pipelines a preemptor onto idle room.
      EXPECT_TRUE(h.bound("a-small-0"));
      continue;
    }
    EXPECT_FALSE(h.bound("a-small-0")) << "a-small started in an overused queue";
    EXPECT_FALSE(h.bound("b-pair-0"));
    // Held back without planning, it still says why.
    std::string why;
    for (const auto& c : h.group("a-small").status.conditions)
      if (c.type == "Unschedulable" && c.status == "True")
        why = c.reason + ": " + c.message;
    EXPECT_EQ(why, "QueueOverused: queue \"a\" is overused: it holds cpu: 3 against a deserved "
                   "share of cpu: 2, and starts nothing new until it holds less");
    for (int i = 0; i < 3; ++i)
      runtime_harness::must_ok(
          h.remove(api::resource_kind::pod, "default", "a-long-" + std::to_string(i)), "a-long");
    ASSERT_TRUE(h.run_until([&] { return h.bound("a-small-0") && h.bound("b-pair-1"); }, 5000ms,
                            10ms));
    EXPECT_INVARIANTS(h);
  }
}

} // namespace
} // namespace phalanx::actors::testing
