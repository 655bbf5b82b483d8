// Hierarchical queues (Volcano's `spec.parent`) on the whole runtime: deserved shares computed
// down the tree, only leaf queues taking work, the tree's rules checked at creation with errors
// that name the field, and a closed parent closing its subtree to new work.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using scheduler::testing::res;
using namespace std::chrono_literals;

scheduler::queue queue_named(const std::string& name, const std::string& parent, int32_t weight,
                             const std::string& guarantee_cpu = "") {
  scheduler::queue q;
  q.meta.name = name;
  q.parent = parent;
  q.weight = weight;
  if (!guarantee_cpu.empty())
    q.guarantee = res("cpu", guarantee_cpu);
  return q;
}

result<api::object> make_queue(runtime_harness& h, const std::string& name,
                               const std::string& parent, int32_t weight,
                               const std::string& guarantee_cpu = "") {
  return h.create(api::queue_object{queue_named(name, parent, weight, guarantee_cpu), {}});
}

int64_t deserved_cpu(runtime_harness& h, const std::string& queue) {
  auto r = h.get(api::resource_kind::queue, "", queue);
  runtime_harness::must_ok(r, "queue " + queue);
  return std::get<api::queue_object>(*r).status.deserved.cpu_milli;
}

// A gang of one pod of `cpu` in `queue`, which cannot all fit: its demand is what the share
// computation sees.
void demand(runtime_harness& h, const std::string& name, const std::string& queue,
            const std::string& cpu) {
  auto g = group_of(name, 1);
  g.group.queue = queue;
  runtime_harness::must_ok(h.create(g), name);
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod(name + "-0").cpu(cpu).group(name), {}}), name);
}

// Two departments weighted 1 and 3 share 16 cpu (4 and 12); the first divides its 4 between
// two teams of equal weight, the second gives all 12 to its one team. Every team asks for more
// than the cluster.
TEST(QueueTree, DeservedSharesAreComputedDownTheTree) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("16").memory("64Gi")}};
  runtime_harness::must_ok(make_queue(h, "dept-a", "", 1), "dept-a");
  runtime_harness::must_ok(make_queue(h, "dept-b", "", 3), "dept-b");
  runtime_harness::must_ok(make_queue(h, "a1", "dept-a", 1), "a1");
  runtime_harness::must_ok(make_queue(h, "a2", "dept-a", 1), "a2");
  runtime_harness::must_ok(make_queue(h, "b1", "dept-b", 1), "b1");
  demand(h, "ga1", "a1", "20");
  demand(h, "ga2", "a2", "20");
  demand(h, "gb1", "b1", "20");
  ASSERT_TRUE(h.run_until([&] { return deserved_cpu(h, "b1") == 12'000; }, 5000ms, 10ms))
      << deserved_cpu(h, "b1");
  EXPECT_EQ(deserved_cpu(h, "dept-a"), 4'000);
  EXPECT_EQ(deserved_cpu(h, "dept-b"), 12'000);
  EXPECT_EQ(deserved_cpu(h, "a1"), 2'000);
  EXPECT_EQ(deserved_cpu(h, "a2"), 2'000);
}

// The tree's rules, checked when a queue or a PodGroup is created: 422 naming the field.
TEST(QueueTree, TheTreesRulesAreCheckedAtCreation) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("16").memory("64Gi")}};
  runtime_harness::must_ok(make_queue(h, "dept", "", 1, "8"), "dept");
  runtime_harness::must_ok(make_queue(h, "team", "dept", 1, "6"), "team");

  auto missing = make_queue(h, "orphan", "nowhere", 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), errc::invalid_argument);
  EXPECT_NE(missing.error().message().find("spec.parent"), std::string::npos)
      << missing.error().message();

  auto above = make_queue(h, "greedy", "dept", 1, "9");
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.error().message().find("spec.guarantee"), std::string::npos)
      << above.error().message();

  auto sum = make_queue(h, "second", "dept", 1, "4");  // 6 + 4 > 8.
  ASSERT_FALSE(sum.ok());
  EXPECT_NE(sum.error().message().find("spec.guarantee"), std::string::npos)
      << sum.error().message();

  auto g = group_of("work", 1);
  g.group.queue = "dept";
  auto into_parent = h.create(g);
  ASSERT_FALSE(into_parent.ok());
  EXPECT_EQ(into_parent.error().code(), errc::invalid_argument);
  EXPECT_NE(into_parent.error().message().find("spec.queue"), std::string::npos)
      << into_parent.error().message();
  g.group.queue = "team";
  runtime_harness::must_ok(h.create(g), "a PodGroup in the leaf");

  auto parent_gone = h.remove(api::resource_kind::queue, "", "dept");
  ASSERT_FALSE(parent_gone.ok());
  EXPECT_NE(parent_gone.error().message().find("team"), std::string::npos)
      << parent_gone.error().message();
}

scheduler::queue_state state_of(runtime_harness& h, const std::string& queue) {
  auto r = h.get(api::resource_kind::queue, "", queue);
  runtime_harness::must_ok(r, "queue " + queue);
  return std::get<api::queue_object>(*r).queue.state;
}

// Volcano's Closing: a closed queue whose PodGroups still run shows Closing (they go on; nothing
// new is admitted), and Closed once none is left.
TEST(QueueTree, AClosedQueueIsClosingWhileItsWorkRuns) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("16").memory("64Gi")}};
  runtime_harness::must_ok(make_queue(h, "team", "", 1), "team");
  demand(h, "work", "team", "2");
  ASSERT_TRUE(h.run_until([&] { return h.pod("work-0").pod.is_bound(); }, 5000ms, 10ms));
  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "team",
                                 api::object_action::type::close),
                           "close team");
  EXPECT_EQ(state_of(h, "team"), scheduler::queue_state::closing);
  EXPECT_TRUE(h.pod("work-0").pod.is_bound());
  runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", "work"), "work");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "work-0"), "work-0");
  EXPECT_TRUE(h.run_until(
      [&] { return state_of(h, "team") == scheduler::queue_state::closed; }, 5000ms, 10ms));
}

// A closed parent closes its subtree to new work; opening the child alone does not reopen it.
TEST(QueueTree, AClosedParentClosesItsChildren) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("16").memory("64Gi")}};
  runtime_harness::must_ok(make_queue(h, "dept", "", 1), "dept");
  runtime_harness::must_ok(make_queue(h, "team", "dept", 1), "team");
  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "dept",
                                 api::object_action::type::close),
                           "close dept");
  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "team",
                                 api::object_action::type::open),
                           "open team");
  EXPECT_EQ(state_of(h, "team"), scheduler::queue_state::closed);  // Its parent's state shows.
  auto g = group_of("work", 1);
  g.group.queue = "team";
  auto refused = h.create(g);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("dept"), std::string::npos)
      << refused.error().message();
  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "dept",
                                 api::object_action::type::open),
                           "open dept");
  runtime_harness::must_ok(h.create(g), "work after the parent opened");
}

// A gang already waiting in a child queue when its parent closes starts nothing while the parent
// is closed, as in a closed queue of its own, and is placed once the parent opens again.
TEST(QueueTree, AGangWaitingInAChildWaitsWhileTheParentIsClosed) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(make_queue(h, "dept", "", 1), "dept");
  runtime_harness::must_ok(make_queue(h, "team", "dept", 1), "team");
  demand(h, "holder", "team", "4");
  ASSERT_TRUE(h.run_until([&] { return h.pod("holder-0").pod.is_bound(); }, 5000ms, 10ms));
  demand(h, "waiting", "team", "2");  // Admitted or not, it cannot run while the holder runs.
  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "dept",
                                 api::object_action::type::close),
                           "close dept");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "holder-0"), "holder");
  h.pass(3000ms);
  EXPECT_FALSE(h.pod("waiting-0").pod.is_bound());

  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "dept",
                                 api::object_action::type::open),
                           "open dept");
  EXPECT_TRUE(h.run_until([&] { return h.pod("waiting-0").pod.is_bound(); }, 5000ms, 10ms));
}

// A gang waiting for admission says which rule of the tree holds it back: its Open queue got a
// child queue (only leaves admit), or the queue's parent closed.
TEST(QueueTree, AGangWaitingForAdmissionSaysWhichQueueHoldsItBack) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(make_queue(h, "dept", "", 1), "dept");
  runtime_harness::must_ok(make_queue(h, "team", "dept", 1), "team");
  // minResources above what the gate admits on 4 cpu: it waits for admission.
  auto g = group_of("big", 1);
  g.group.queue = "team";
  g.group.min_resources = scheduler::testing::res("cpu", "6");
  runtime_harness::must_ok(h.create(g), "big");
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("big-0").cpu("1").group("big"), {}}), "big-0");
  h.pass(500ms);
  auto reason = [&] {
    std::string out;
    for (const auto& c : h.group("big").status.conditions)
      out += c.message + "\n";
    return out;
  };
  runtime_harness::must_ok(h.act(api::resource_kind::queue, "", "dept",
                                 api::object_action::type::close),
                           "close dept");
  h.pass(500ms);
  EXPECT_NE(reason().find("queue \"team\" admits no new PodGroups now: it is under queue "
                          "\"dept\", which is Closed"),
            std::string::npos)
      << reason() << " events: " << [&] {
           std::string e;
           for (const auto& ev : h.events(api::resource_kind::pod_group, "big"))
             e += ev.reason + ": " + ev.message + "\n";
           return e;
         }();
}

} // namespace
} // namespace phalanx::actors::testing
