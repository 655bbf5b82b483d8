// Why a pod is pending, as the API shows it (PodScheduled=False with a message), on the whole
// runtime under CAF's test coordinator: the reasons the registry gives itself (a missing PodGroup,
// a deleted one) and that they go once the cause does.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// The PodScheduled=False message of a pod, or "" when it has none.
std::string pending_message(runtime_harness& h, const std::string& name) {
  for (const auto& c : h.pod(name).conditions)
    if (c.type == "PodScheduled" && c.status == "False")
      return c.message;
  return "";
}

TEST(PendingReason, APodWaitsForItsPodGroupThenForItsGang) {
  runtime_harness h{deterministic_config(3), {make_node("n-0").cpu("4").memory("8Gi")}};
  for (const char* name : {"w-0", "w-1"})
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod(name).cpu("1").group("train"), {}}), name);
  EXPECT_EQ(pending_message(h, "w-0"), "pod group \"train\" not found; the pod waits for it");
  EXPECT_EQ(pending_message(h, "w-1"), "pod group \"train\" not found; the pod waits for it");

  // Its PodGroup wants three pods: the two wait for the third (the gang's report, one reason
  // shared by both).
  runtime_harness::must_ok(h.create(group_of("train", 3)), "create the PodGroup");
  ASSERT_TRUE(h.run_until(
      [&] {
        auto m = pending_message(h, "w-0");
        return !m.empty() && m.find("not found") == std::string::npos;
      },
      settle_limit, settle_step));
  EXPECT_EQ(pending_message(h, "w-0"), pending_message(h, "w-1"));

  // Deleting the PodGroup leaves the pods waiting for one of that name again.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", "train"),
                           "delete the PodGroup");
  EXPECT_EQ(pending_message(h, "w-1"), "pod group \"train\" was deleted");

  // The third pod and the PodGroup again: the gang runs, and no reason is left.
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("w-2").cpu("1").group("train"), {}}), "w-2");
  runtime_harness::must_ok(h.create(group_of("train", 3)), "create the PodGroup again");
  ASSERT_TRUE(h.run_until(
      [&] {
        for (const auto& p : h.pods())
          if (!p.pod.is_bound())
            return false;
        return true;
      },
      settle_limit, settle_step));
  for (const char* name : {"w-0", "w-1", "w-2"})
    EXPECT_EQ(pending_message(h, name), "") << name;
}

// kubectl describe pod shows events, not the condition's message: a pod its gang could not place
// has a FailedScheduling warning with its own reason, and once bound only its Scheduled event.
TEST(PendingReason, APodThatCannotBePlacedHasAFailedSchedulingEventUntilItIsBound) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("2").memory("8Gi")}};
  runtime_harness::must_ok(h.create(group_of("big", 2)), "big");
  for (const char* name : {"b-0", "b-1"})
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod(name).cpu("2").group("big"), {}}), name);
  auto failed = [&](const std::string& pod) -> std::optional<scheduler::event> {
    for (const auto& e : h.events(api::resource_kind::pod, pod))
      if (e.reason == "FailedScheduling")
        return e;
    return std::nullopt;
  };
  ASSERT_TRUE(h.run_until([&] { return failed("b-0").has_value(); },
                          settle_limit, settle_step));
  auto e = *failed("b-0");
  EXPECT_EQ(e.type, "Warning");
  EXPECT_EQ(e.message, pending_message(h, "b-0"));
  EXPECT_NE(e.message.find("Insufficient cpu"), std::string::npos) << e.message;

  // Room for both: bound, and the warning is gone.
  runtime_harness::must_ok(
      h.create(api::node_object{make_node("n-1").cpu("2").memory("8Gi"), {}, 0}), "n-1");
  ASSERT_TRUE(h.run_until([&] { return h.bound("b-0") && h.bound("b-1"); },
                          settle_limit, settle_step));
  EXPECT_FALSE(failed("b-0"));
  bool scheduled = false;
  for (const auto& ev : h.events(api::resource_kind::pod, "b-0"))
    scheduled |= ev.reason == "Scheduled";
  EXPECT_TRUE(scheduled);
}

// A condition's lastTransitionTime moves with its status only: read again later, a pending pod's
// PodScheduled=False and its group's Unschedulable keep theirs (they showed the time of the read).
TEST(PendingReason, AConditionsTransitionTimeStaysWhileItsStatusDoes) {
  runtime_harness h{deterministic_config(5), {make_node("n-0").cpu("1").memory("8Gi")}};
  runtime_harness::must_ok(h.create(group_of("big", 1)), "the PodGroup");
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("b-0").cpu("4").group("big"), {}}), "b-0");
  auto transition = [&] {
    std::pair<scheduler::timestamp, scheduler::timestamp> out{};
    for (const auto& c : h.pod("b-0").conditions)
      if (c.type == "PodScheduled" && c.status == "False")
        out.first = c.last_transition_time;
    for (const auto& c : h.group("big").status.conditions)
      if (c.type == "Unschedulable")
        out.second = c.last_transition_time;
    return out;
  };
  ASSERT_TRUE(h.run_until([&] { return transition().second != scheduler::timestamp{}; },
                          settle_limit, settle_step));
  auto first = transition();
  EXPECT_NE(first.first, scheduler::timestamp{});
  h.pass(std::chrono::milliseconds(5000));
  EXPECT_EQ(transition(), first);
}

// What a watcher of PodGroups sees: a MODIFIED event for each change of a group's status, its
// pending reason included, and none when nothing changed. The registry finds a change by a digest
// of what the status is made of, without building it (registry_detail::summarize_group).
TEST(PendingReason, AWatcherSeesEachChangeOfAGroupsStatusOnce) {
  struct collecting_sink : api::watch_sink {
    std::mutex mu;
    std::vector<api::watch_event> events;
    bool on_event(const api::watch_event& e) override {
      std::lock_guard lock(mu);
      events.push_back(e);
      return true;
    }
    void on_close(status) override {}
    std::vector<scheduler::pod_group_status> modified() {
      std::lock_guard lock(mu);
      std::vector<scheduler::pod_group_status> out;
      for (const auto& e : events)
        if (e.kind == api::watch_event::type::modified)
          out.push_back(std::get<api::pod_group_object>(e.obj).status);
      return out;
    }
  };
  runtime_harness h{deterministic_config(3), {make_node("n-0").cpu("4").memory("8Gi")}};
  auto sink = std::make_shared<collecting_sink>();
  auto watch = h.svc().watch(api::resource_kind::pod_group, {}, 0, sink);
  for (const char* name : {"w-0", "w-1"})
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod(name).cpu("1").group("train"), {}}), name);
  runtime_harness::must_ok(h.create(group_of("train", 3)), "create the PodGroup");
  // Only the reason changes: the gang reports that it waits for a third pod.
  auto unschedulable = [](const scheduler::pod_group_status& s) {
    for (const auto& c : s.conditions)
      if (c.type == "Unschedulable")
        return c.message;
    return std::string();
  };
  ASSERT_TRUE(h.run_until(
      [&] {
        auto m = sink->modified();
        return !m.empty() && !unschedulable(m.back()).empty();
      },
      settle_limit, settle_step));
  EXPECT_NE(sink->modified().back().phase, scheduler::pod_group_phase::running);

  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("w-2").cpu("1").group("train"), {}}), "w-2");
  ASSERT_TRUE(h.run_until(
      [&] {
        auto m = sink->modified();
        return !m.empty() && m.back().phase == scheduler::pod_group_phase::running &&
               m.back().running == 3;
      },
      settle_limit, settle_step));
  h.pass(std::chrono::milliseconds(500));
  auto seen = sink->modified();
  for (std::size_t i = 1; i < seen.size(); ++i)
    EXPECT_FALSE(seen[i] == seen[i - 1]) << "event " << i << " repeats the status before it";
  EXPECT_EQ(seen.back(), h.group("train").status) << "the last event is the current status";
}

// A gang past its minimum places its extra pods when room exists; one that finds none says so.
// Its pods run until deleted, so nothing will ever make room: once the pending pod has a reason,
// the simulator's stall report makes the registry report a deadlock (a pending pod without a
// reason is one the scheduler has not tried yet, which is no deadlock).
TEST(PendingReason, AnExtraPodWithoutRoomSaysWhyAndItsStallIsReported) {
  auto config = deterministic_config(5);
  config.simulation.stall_check_interval = std::chrono::milliseconds(1000);
  runtime_harness h{config, {make_node("n-0").cpu("2").memory("8Gi")}};
  runtime_harness::must_ok(h.create(group_of("svc", 1)), "create the PodGroup");
  for (const char* name : {"s-0", "s-1", "s-2"})
    runtime_harness::must_ok(h.create(api::pod_object{make_pod(name).cpu("1").group("svc"), {}}),
                             name);
  auto stalled = [&] {
    auto r = h.list(api::resource_kind::pod_group);
    runtime_harness::must_ok(r, "list podgroups");
    for (auto& o : r->items)
      for (const auto& c : std::get<api::pod_group_object>(o).status.conditions)
        if (c.message.find("deadlock") != std::string::npos)
          return true;
    return false;
  };
  ASSERT_TRUE(
      h.run_until(stalled, std::chrono::milliseconds(10000), std::chrono::milliseconds(100)))
      << "the stall was not reported";
  int bound = 0;
  std::string waiting;
  for (const auto& p : h.pods())
    if (p.pod.is_bound())
      ++bound;
    else
      waiting = p.pod.meta.name;
  EXPECT_EQ(bound, 2);
  ASSERT_FALSE(waiting.empty());
  // The pod says why as kube-scheduler would; its PodGroup's condition says it is an extra.
  EXPECT_EQ(pending_message(h, waiting), "0/1 nodes are available: 1 Insufficient cpu.");
  bool told = false;
  for (const auto& e : h.events(api::resource_kind::pod_group, "svc"))
    told |= e.message.find("no node has room for the 1 pod(s) beyond the gang's minimum now (") !=
            std::string::npos;
  EXPECT_TRUE(told) << "the gang's event names the extra pod and the planner's detail";
}

// A gang that no node could ever hold (3 pods of 12 CPUs on nodes of 8) must not keep the
// enqueue budget from gangs that can run: admitted, it claimed 36 of the 38.4 CPUs that
// 1.2 x allocatable allows, and a 2 x 2 CPU gang waited behind it with "cluster overcommit:
// needs cpu 4, 2400m left". It gives the budget back after its first plan and says so; once a
// node that can hold its pods comes, it is admitted again and runs.
TEST(PendingReason, AGangNoNodeCanHoldLeavesTheEnqueueBudget) {
  std::vector<scheduler::node> nodes;
  for (int i = 0; i < 4; ++i)
    nodes.push_back(make_node("n-" + std::to_string(i)).cpu("8").memory("32Gi"));
  runtime_harness h{deterministic_config(5), nodes};
  auto group_with = [](const std::string& name, int32_t members, const char* cpu) {
    auto g = group_of(name, members);
    g.group.min_resources = scheduler::testing::make_pod("x").cpu(cpu).obj().requests;
    g.group.min_resources.pods = 0;
    return g;
  };
  for (int i = 0; i < 3; ++i)
    runtime_harness::must_ok(h.create(api::pod_object{
                                 make_pod("big-" + std::to_string(i)).cpu("12").group("big"), {}}),
                             "big pod");
  runtime_harness::must_ok(h.create(group_with("big", 3, "36")), "the big PodGroup");
  auto group_message = [&](const std::string& name) {
    std::string out;
    for (const auto& c : h.group(name).status.conditions)
      out += c.message;
    return out;
  };
  ASSERT_TRUE(h.run_until(
      [&] { return group_message("big").find("outside the enqueue budget") != std::string::npos; },
      settle_limit, settle_step))
      << group_message("big");
  EXPECT_EQ(h.group("big").status.phase, scheduler::pod_group_phase::pending);

  for (int i = 0; i < 2; ++i)
    runtime_harness::must_ok(h.create(api::pod_object{
                                 make_pod("small-" + std::to_string(i)).cpu("2").group("small"),
                                 {}}),
                             "small pod");
  runtime_harness::must_ok(h.create(group_with("small", 2, "4")), "the small PodGroup");
  ASSERT_TRUE(h.run_until([&] { return h.pod("small-0").pod.is_bound() &&
                                       h.pod("small-1").pod.is_bound(); },
                          settle_limit, settle_step))
      << "the small gang waits: " << pending_message(h, "small-0");

  // A node that holds a 12-CPU pod, and two more: the big gang is admitted again and runs.
  for (int i = 4; i < 7; ++i)
    runtime_harness::must_ok(
        h.create(api::node_object{make_node("n-" + std::to_string(i)).cpu("16").memory("32Gi"),
                                  {}, 0}),
        "a bigger node");
  ASSERT_TRUE(h.run_until(
      [&] {
        for (int i = 0; i < 3; ++i)
          if (!h.pod("big-" + std::to_string(i)).pod.is_bound())
            return false;
        return true;
      },
      std::chrono::milliseconds(10000), std::chrono::milliseconds(10)))
      << group_message("big");
  EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
}

// A gang short of a role's pods (a ps and one worker of two) waits for the pod, not for nodes:
// it keeps its place at the gate and runs as soon as the worker comes. (The first version of the
// budget rule above took "the gang has too few pods" for "no node can hold it" and held the gang
// out of the budget until the nodes changed: found by the Kubernetes-mode test.)
TEST(PendingReason, AGangShortOfARolesPodsRunsWhenThePodComes) {
  runtime_harness h{deterministic_config(6), {make_node("n-0").cpu("4").memory("8Gi")}};
  auto g = group_of("roles", 2);
  g.group.min_task_member = {{"ps", 1}, {"worker", 2}};
  runtime_harness::must_ok(h.create(api::pod_object{
                               make_pod("ps").cpu("100m").group("roles").role("ps"), {}}),
                           "ps");
  runtime_harness::must_ok(h.create(api::pod_object{
                               make_pod("w-0").cpu("100m").group("roles").role("worker"), {}}),
                           "w-0");
  runtime_harness::must_ok(h.create(g), "the PodGroup");
  ASSERT_TRUE(h.run_until([&] { return !pending_message(h, "ps").empty(); },
                          settle_limit, settle_step));
  runtime_harness::must_ok(h.create(api::pod_object{
                               make_pod("w-1").cpu("100m").group("roles").role("worker"), {}}),
                           "w-1");
  ASSERT_TRUE(h.run_until([&] { return h.pod("w-1").pod.is_bound(); },
                          settle_limit, settle_step))
      << pending_message(h, "ps");
  EXPECT_TRUE(h.pod("ps").pod.is_bound());
}

} // namespace
} // namespace phalanx::actors::testing
