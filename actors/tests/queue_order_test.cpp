// A queue's order decides who gets room that frees up: when capacity appears, every gang that
// slept for lack of room is woken at once, and the queue holds its gate and its planning slots
// until each woken gang has answered, so that they compete in the queue's order (priority, then
// age) rather than in the order their answers come from the scheduler's threads. On the whole
// runtime under CAF's test coordinator.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

bool unschedulable(runtime_harness& h, const std::string& group) {
  for (const auto& c : h.group(group).status.conditions)
    if (c.type == "Unschedulable" && c.status == "True")
      return true;
  return false;
}

// Three waiting gangs of one 3-CPU pod each, created low, high, middle, on a node held whole by
// a fourth; the holder goes, and the room goes to the highest priority. One planning slot per
// queue: the order alone decides. Each seed orders the scheduler's messages differently.
TEST(QueueOrder, RoomThatFreesUpGoesToTheHighestPriorityGangThatWaits) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto config = deterministic_config(seed);
    config.scheduling.max_planning_per_queue = 1;
    config.scheduling.priority_classes["high"] = 1000;
    config.scheduling.priority_classes["middle"] = 500;
    runtime_harness h{config, {make_node("n-0").cpu("4").memory("8Gi")}};
    runtime_harness::must_ok(h.create(group_of("holder", 1)), "holder group");
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod("holder-0").cpu("4").group("holder"), {}}), "holder");
    ASSERT_TRUE(h.run_until([&] { return h.pod("holder-0").pod.is_bound(); },
                            std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
    for (const char* name : {"low", "high", "middle"}) {
      auto g = group_of(name, 1);
      if (std::string(name) != "low")
        g.group.priority_class_name = name;
      runtime_harness::must_ok(h.create(g), name);
      runtime_harness::must_ok(
          h.create(api::pod_object{make_pod(std::string(name) + "-0").cpu("3").group(name), {}}),
          name);
    }
    ASSERT_TRUE(h.run_until(
        [&] {
          return unschedulable(h, "low") && unschedulable(h, "high") &&
                 unschedulable(h, "middle");
        },
        std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
    runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "holder-0"),
                             "delete the holder");
    ASSERT_TRUE(h.run_until([&] { return h.pod("high-0").pod.is_bound(); },
                            std::chrono::milliseconds(5000), std::chrono::milliseconds(10)))
        << "low bound: " << h.pod("low-0").pod.is_bound()
        << ", middle bound: " << h.pod("middle-0").pod.is_bound();
    EXPECT_FALSE(h.pod("low-0").pod.is_bound());
    EXPECT_FALSE(h.pod("middle-0").pod.is_bound());
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
  }
}

} // namespace
} // namespace phalanx::actors::testing
