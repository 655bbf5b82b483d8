// Updates of nodes, queues and PodGroups (PUT and PATCH through api::service::update) on the whole
// runtime, under CAF's test coordinator: each change reaches the scheduling side at once (a taint
// keeps pods off, a label lets a selector match, a raised capability admits, a lowered minMember
// starts a gang), what was written survives restarts, what may not change is refused, and a
// change on its way to the store refuses another (an update after a delete would otherwise write
// the deleted object's record again).

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <future>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

api::node_object node_named(runtime_harness& h, const std::string& name) {
  auto r = h.get(api::resource_kind::node, "", name);
  runtime_harness::must_ok(r, "get node " + name);
  return std::get<api::node_object>(*r);
}

api::queue_object queue_named(runtime_harness& h, const std::string& name) {
  auto r = h.get(api::resource_kind::queue, "", name);
  runtime_harness::must_ok(r, "get queue " + name);
  return std::get<api::queue_object>(*r);
}

std::string pending_reason(runtime_harness& h, const std::string& pod) {
  for (const auto& c : h.pod(pod).conditions)
    if (c.type == "PodScheduled")
      return c.message;
  return {};
}

TEST(NodeUpdates, ATaintKeepsPodsOffALabelLetsASelectorMatchAndBothOutliveARestart) {
  runtime_harness h{deterministic_config(31), {make_node("n-0").cpu("8").memory("16Gi")}};
  auto n = node_named(h, "n-0");
  const auto allocatable = n.node.allocatable;
  n.node.taints.push_back({"dedicated", "infra", scheduler::taint_effect::no_schedule});
  n.node.allocatable = {};  // Status: not the update's to change.
  auto tainted = h.update(api::object{n});
  runtime_harness::must_ok(tainted, "taint n-0");
  EXPECT_GT(api::meta_of(*tainted).resource_version, n.node.meta.resource_version);

  h.create_pod(make_pod("plain").cpu("1"));
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("picky").cpu("1").selector("disk", "ssd").tolerate(
                                   "dedicated", "infra"),
                               {}}),
      "picky");
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_FALSE(h.bound("plain"));
  EXPECT_NE(pending_reason(h, "plain").find("untolerated taint {dedicated: infra}"),
            std::string::npos)
      << pending_reason(h, "plain");
  EXPECT_FALSE(h.bound("picky"));

  h.restart();
  n = node_named(h, "n-0");
  ASSERT_EQ(n.node.taints.size(), 1u) << "the taint must outlive a restart";
  EXPECT_EQ(n.node.allocatable, allocatable) << "a node's status is not an update's to change";
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_FALSE(h.bound("plain"));

  // The label the selector needs: picky (which tolerates the taint) binds, plain does not.
  n.node.meta.labels.set("disk", "ssd");
  runtime_harness::must_ok(h.update(api::object{n}), "label n-0");
  ASSERT_TRUE(h.run_until([&] { return h.bound("picky"); }, settle_limit, settle_step));
  EXPECT_FALSE(h.bound("plain"));

  // The taint removed: plain binds too.
  n = node_named(h, "n-0");
  n.node.taints.clear();
  runtime_harness::must_ok(h.update(api::object{n}), "untaint n-0");
  ASSERT_TRUE(h.run_until([&] { return h.bound("plain"); }, settle_limit, settle_step));
  EXPECT_INVARIANTS(h);

  h.restart();
  n = node_named(h, "n-0");
  EXPECT_TRUE(n.node.taints.empty());
  EXPECT_EQ(n.node.meta.labels.find("disk"), "ssd");
  EXPECT_TRUE(h.bound("plain") && h.bound("picky"));
}

TEST(NodeUpdates, AStaleVersionIsRefusedAndAnUnchangedNodeKeepsItsVersion) {
  runtime_harness h{deterministic_config(32), {make_node("n-0").cpu("8").memory("16Gi")}};
  auto n = node_named(h, "n-0");
  auto same = h.update(api::object{n});
  runtime_harness::must_ok(same, "no change");
  EXPECT_EQ(api::meta_of(*same).resource_version, n.node.meta.resource_version);

  n.node.unschedulable = true;
  auto cordoned = h.update(api::object{n});
  runtime_harness::must_ok(cordoned, "cordon by update");
  n = std::get<api::node_object>(*cordoned);
  n.node.meta.labels.set("zone", "a");
  runtime_harness::must_ok(h.update(api::object{n}), "label");
  auto stale = h.update(api::object{n});  // The version it read is gone.
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), errc::conflict);
  EXPECT_NE(stale.error().message().find("the object has been modified"), std::string::npos);
  auto events = h.events(api::resource_kind::node, "n-0", "");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().reason, "NodeNotSchedulable");
}

TEST(QueueUpdates, ARaisedCapabilityAdmitsTheGangItHeldBackAndIsKept) {
  runtime_harness h{deterministic_config(33), {make_node("n-0").cpu("8").memory("16Gi")}};
  api::queue_object q;
  q.queue.meta.name = "research";
  q.queue.weight = 1;
  q.queue.capability.set(scheduler::cpu_resource, 2000);
  runtime_harness::must_ok(h.create(api::object{q}), "queue");
  auto g = group_of("train", 2);
  g.group.queue = "research";
  // A queue's capability holds gangs back at admission, by their minResources.
  g.group.min_resources.set(scheduler::cpu_resource, 4000);
  runtime_harness::must_ok(h.create(api::object{g}), "group");
  for (const char* name : {"w-0", "w-1"})
    h.create_pod(make_pod(name).cpu("2").group("train"));
  h.pass(std::chrono::milliseconds(2000));
  EXPECT_FALSE(h.bound("w-0")) << "4 CPUs do not fit a capability of 2";

  auto research = queue_named(h, "research");
  research.queue.capability.set(scheduler::cpu_resource, 4000);
  research.queue.weight = 3;
  auto raised = h.update(api::object{research});
  runtime_harness::must_ok(raised, "raise the capability");
  EXPECT_EQ(std::get<api::queue_object>(*raised).queue.weight, 3);
  ASSERT_TRUE(h.run_until([&] { return h.bound("w-0") && h.bound("w-1"); },
                          settle_limit, settle_step));
  EXPECT_INVARIANTS(h);

  // A queue that has PodGroups cannot become another's parent: only leaves take work.
  auto other = api::queue_object{};
  other.queue.meta.name = "other";
  runtime_harness::must_ok(h.create(api::object{other}), "other");
  auto child = queue_named(h, "other");
  child.queue.parent = "research";
  auto refused = h.update(api::object{child});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), errc::invalid_argument);
  EXPECT_NE(refused.error().message().find("spec.parent: Forbidden: queue \"research\" has "
                                           "PodGroups"),
            std::string::npos)
      << refused.error().message();

  h.restart();
  research = queue_named(h, "research");
  EXPECT_EQ(research.queue.weight, 3);
  EXPECT_EQ(research.queue.capability.get(scheduler::cpu_resource), 4000);
  EXPECT_EQ(research.queue.state, scheduler::queue_state::open)
      << "an update leaves the state to the open and close actions";
}

TEST(PodGroupUpdates, ALoweredMinMemberStartsTheGangAndARaisedOneMakesItUnknownUntilFilled) {
  runtime_harness h{deterministic_config(34), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_of("train", 3)), "group");
  for (const char* name : {"w-0", "w-1"})
    h.create_pod(make_pod(name).cpu("1").group("train"));
  h.pass(std::chrono::milliseconds(2000));
  EXPECT_FALSE(h.bound("w-0")) << "two pods of a gang of three";

  auto g = h.group("train");
  g.group.min_member = 2;
  runtime_harness::must_ok(h.update(api::object{g}), "minMember 2");
  ASSERT_TRUE(h.run_until([&] { return h.bound("w-0") && h.bound("w-1"); },
                          settle_limit, settle_step));
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("train").status.phase == scheduler::pod_group_phase::running; },
          settle_limit,
      settle_step));

  // Its queue is set once a pod of it is bound.
  g = h.group("train");
  g.group.queue = "elsewhere";
  auto moved = h.update(api::object{g});
  ASSERT_FALSE(moved);
  EXPECT_NE(moved.error().message().find("spec.queue: Forbidden: a PodGroup's queue cannot "
                                         "change once a pod of it is bound"),
            std::string::npos)
      << moved.error().message();

  // Raised above what runs: Unknown, until a third pod is bound.
  g = h.group("train");
  g.group.min_member = 3;
  runtime_harness::must_ok(h.update(api::object{g}), "minMember 3");
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("train").status.phase == scheduler::pod_group_phase::unknown; },
          settle_limit,
      settle_step));
  h.create_pod(make_pod("w-2").cpu("1").group("train"));
  ASSERT_TRUE(h.run_until([&] { return h.bound("w-2"); }, settle_limit, settle_step));
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("train").status.phase == scheduler::pod_group_phase::running; },
          settle_limit,
      settle_step));
  EXPECT_INVARIANTS(h);

  h.restart();
  EXPECT_EQ(h.group("train").group.min_member, 3);
  EXPECT_TRUE(h.bound("w-0") && h.bound("w-1") && h.bound("w-2"));
}

// A pending PodGroup moved to another queue: its new queue schedules it, the old one forgets it
// (the invariants check that a queue's actor knows only gangs the registry has in that queue)
// and goes on scheduling its own gangs, and the move outlives a restart.
TEST(PodGroupUpdates, APendingGangMovedToAnotherQueueIsScheduledThere) {
  runtime_harness h{deterministic_config(38), {make_node("n-0").cpu("4").memory("16Gi")}};
  for (const char* name : {"a", "b"}) {
    api::queue_object q;
    q.queue.meta.name = name;
    runtime_harness::must_ok(h.create(api::object{q}), name);
  }
  // Two pods of 3 CPUs on one node of 4: the gang waits in queue a for room.
  auto g = group_of("mover", 2);
  g.group.queue = "a";
  runtime_harness::must_ok(h.create(api::object{g}), "mover");
  for (const char* name : {"m-0", "m-1"})
    h.create_pod(make_pod(name).cpu("3").group("mover"));
  h.pass(std::chrono::milliseconds(1000));
  ASSERT_FALSE(h.bound("m-0"));
  auto moved = h.group("mover");
  moved.group.queue = "b";
  runtime_harness::must_ok(h.update(api::object{moved}), "move to b");
  EXPECT_EQ(h.group("mover").group.queue, "b");
  runtime_harness::must_ok(
      h.create(api::node_object{make_node("n-1").cpu("4").memory("16Gi"), {}, 0}), "n-1");
  auto stay = group_of("stay", 1);
  stay.group.queue = "a";
  runtime_harness::must_ok(h.create(api::object{stay}), "stay");
  h.create_pod(make_pod("s-0").cpu("1").group("stay"));
  ASSERT_TRUE(h.run_until(
      [&] { return h.bound("m-0") && h.bound("m-1") && h.bound("s-0"); },
          settle_limit, settle_step));
  h.pass(std::chrono::milliseconds(500));
  EXPECT_INVARIANTS(h);
  h.restart();
  EXPECT_EQ(h.group("mover").group.queue, "b");
}

TEST(PodGroupUpdates, AJobsPodGroupIsItsJobsToChange) {
  runtime_harness h{deterministic_config(35), {make_node("n-0").cpu("8").memory("16Gi")}};
  auto job = h.create(api::object{one_task_job("etl", 2)});
  runtime_harness::must_ok(job, "job");
  // Volcano names a job's PodGroup "<job>-<job uid>".
  auto g = h.group("etl-" + api::meta_of(*job).uid.str());
  g.group.min_member = 1;
  auto refused = h.update(api::object{g});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), errc::failed_precondition);
  EXPECT_NE(refused.error().message().find("belongs to job default/etl"), std::string::npos)
      << refused.error().message();
}

// dryRun=All through the registry: the answer is what would be stored, and nothing is: no name
// taken, no spec changed, no version spent; what would be refused is refused the same.
TEST(DryRun, CreatesAndUpdatesAreCheckedAndAnsweredAndChangeNothing) {
  runtime_harness h{deterministic_config(37), {make_node("n-0").cpu("8").memory("16Gi")}};
  api::write_options dry;
  dry.dry_run = true;
  auto issue_create = [&](api::object obj) {
    return h.call<result<api::object>>(
        [&](auto done) { h.svc().create(std::move(obj), dry, done); });
  };
  auto issue_update = [&](api::object obj) {
    return h.call<result<api::object>>(
        [&](auto done) { h.svc().update(std::move(obj), dry, done); });
  };
  auto pod = issue_create(api::pod_object{make_pod("ghost").cpu("1"), {}});
  runtime_harness::must_ok(pod, "dry-run pod");
  EXPECT_FALSE(api::meta_of(*pod).uid.empty());
  EXPECT_FALSE(h.get(api::resource_kind::pod, "default", "ghost")) << "a dry run stores nothing";
  auto job = issue_create(api::object{one_task_job("etl", 2)});
  runtime_harness::must_ok(job, "dry-run job");
  // Its pods' names were not kept: the job is created for real under them.
  runtime_harness::must_ok(h.create(api::object{one_task_job("etl", 2)}), "etl");
  auto again = issue_create(api::object{one_task_job("etl", 2)});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), errc::already_exists);

  auto n = node_named(h, "n-0");
  const auto version = n.node.meta.resource_version;
  n.node.taints.push_back({"dedicated", "infra", scheduler::taint_effect::no_schedule});
  auto tainted = issue_update(api::object{n});
  runtime_harness::must_ok(tainted, "dry-run taint");
  EXPECT_EQ(std::get<api::node_object>(*tainted).node.taints.size(), 1u);
  EXPECT_TRUE(node_named(h, "n-0").node.taints.empty());
  EXPECT_EQ(node_named(h, "n-0").node.meta.resource_version, version);
  h.create_pod(make_pod("real").cpu("1"));
  ASSERT_TRUE(h.run_until([&] { return h.bound("real"); }, settle_limit, settle_step))
      << "the node took no taint";

  n.node.meta.resource_version = version + 100;
  auto stale = issue_update(api::object{n});
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), errc::conflict);
}

// dryRun=All on deletes: every kind answers with the object as it is and keeps it; the checks a
// delete makes still refuse (a queue with PodGroups). The objects then go for real.
TEST(DryRun, DeletesAreCheckedAndAnsweredAndRemoveNothing) {
  runtime_harness h{deterministic_config(38), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(api::object{one_task_job("etl", 2)}), "etl");
  h.create_pod(make_pod("solo").cpu("1"));
  ASSERT_TRUE(h.run_until([&] { return h.bound("solo") && h.bound("etl-worker-1"); },
                          settle_limit, settle_step));
  api::write_options dry;
  dry.dry_run = true;
  auto issue_delete = [&](api::resource_kind kind, const std::string& ns, const std::string& name) {
    return h.call<result<api::object>>(
        [&](auto done) { h.svc().remove(kind, ns, name, dry, done); });
  };
  struct target {
    api::resource_kind kind;
    std::string ns, name;
  };
  const std::vector<target> targets = {{api::resource_kind::pod, "default", "solo"},
                                       {api::resource_kind::pod, "default", "etl-worker-0"},
                                       {api::resource_kind::job, "default", "etl"},
                                       {api::resource_kind::node, "", "n-0"},
                                       {api::resource_kind::priority_class, "", "system-x"}};
  for (const auto& t : targets) {
    auto answer = issue_delete(t.kind, t.ns, t.name);
    if (t.kind == api::resource_kind::priority_class) {
      ASSERT_FALSE(answer);  // No such class: a dry run finds what the delete would.
      EXPECT_EQ(answer.error().code(), errc::not_found);
      continue;
    }
    runtime_harness::must_ok(answer, "dry-run delete " + t.name);
    EXPECT_EQ(api::meta_of(*answer).name, t.name);
    EXPECT_TRUE(h.get(t.kind, t.ns, t.name)) << t.name << " must still be there";
  }
  auto system = issue_delete(api::resource_kind::priority_class, "", "system-node-critical");
  ASSERT_FALSE(system);
  EXPECT_EQ(system.error().code(), errc::forbidden);
  auto default_queue = issue_delete(api::resource_kind::queue, "", "default");
  ASSERT_FALSE(default_queue);
  EXPECT_EQ(default_queue.error().code(), errc::failed_precondition);
  // Nothing moved: both pods still run, on a live node, and the job still owns its pods.
  h.pass(std::chrono::milliseconds(500));
  EXPECT_TRUE(h.bound("solo"));
  EXPECT_TRUE(h.bound("etl-worker-0"));
  EXPECT_INVARIANTS(h);
  runtime_harness::must_ok(h.remove(api::resource_kind::job, "default", "etl"), "delete etl");
  EXPECT_FALSE(h.get(api::resource_kind::pod, "default", "etl-worker-0"));
  EXPECT_INVARIANTS(h);
}

// Two changes of one object sent together: the second is refused while the first is on its way
// to the store. `first` and `second` issue them; returns both answers.
template <class First, class Second>
std::pair<result<api::object>, result<api::object>> together(runtime_harness& h, First first,
                                                             Second second) {
  std::promise<result<api::object>> a, b;
  auto fa = a.get_future();
  auto fb = b.get_future();
  first([&a](result<api::object> r) { a.set_value(std::move(r)); });
  second([&b](result<api::object> r) { b.set_value(std::move(r)); });
  return {h.wait(fa), h.wait(fb)};
}

TEST(ObjectUpdates, AnUpdateAfterADeleteOnItsWayIsRefusedAndTheObjectStaysDeleted) {
  runtime_harness h{deterministic_config(36),
                    {make_node("n-0").cpu("8").memory("16Gi"), make_node("n-1").cpu("8")}};
  auto n = node_named(h, "n-1");
  n.node.meta.labels.set("zone", "b");
  auto [deleted, updated] = together(
      h,
      [&](auto done) { h.svc().remove(api::resource_kind::node, "", "n-1", done); },
      [&](auto done) { h.svc().update(api::object{n}, done); });
  runtime_harness::must_ok(deleted, "delete n-1");
  ASSERT_FALSE(updated);
  EXPECT_EQ(updated.error().code(), errc::conflict);
  EXPECT_NE(updated.error().message().find("another change of it is on its way"),
            std::string::npos)
      << updated.error().message();

  // The other order: the delete waits for nothing, it is refused while the update is on its way.
  auto q = api::queue_object{};
  q.queue.meta.name = "team";
  runtime_harness::must_ok(h.create(api::object{q}), "team");
  auto team = queue_named(h, "team");
  team.queue.weight = 5;
  auto [changed, removed] = together(
      h, [&](auto done) { h.svc().update(api::object{team}, done); },
      [&](auto done) { h.svc().remove(api::resource_kind::queue, "", "team", done); });
  runtime_harness::must_ok(changed, "update team");
  ASSERT_FALSE(removed);
  EXPECT_EQ(removed.error().code(), errc::conflict);

  h.restart();
  EXPECT_FALSE(h.get(api::resource_kind::node, "", "n-1"))
      << "a node deleted must not come back from an update written after its deletion";
  EXPECT_EQ(queue_named(h, "team").queue.weight, 5);
}

} // namespace
} // namespace phalanx::actors::testing
