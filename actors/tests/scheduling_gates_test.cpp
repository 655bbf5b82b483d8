// Scheduling gates (spec.schedulingGates) and pod updates on the whole runtime, under CAF's test
// coordinator: a gated pod is neither placed nor counted, its gang waits for it, a patch that
// removes the last gate lets it in, and what a patch wrote survives restarts. Also PodGroup
// phase Unknown: a running gang below its minimum.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

const scheduler::condition* scheduled_condition(const api::pod_object& p) {
  for (const auto& c : p.conditions)
    if (c.type == "PodScheduled")
      return &c;
  return nullptr;
}

// The pod as a PATCH leaves it: `edit` applied to the pod as served.
template <class Edit>
api::object patched(runtime_harness& h, const std::string& name, Edit edit) {
  auto pod = h.pod(name);
  edit(pod.pod);
  return api::object{std::move(pod)};
}

void set_gates(scheduler::pod& p, std::vector<std::string> gates) {
  auto c = std::make_shared<scheduler::placement_constraints>(p.placement());
  c->scheduling_gates = std::move(gates);
  p.constraints = std::move(c);
}

// A pod, its PodScheduled condition and its PodGroup's status: for failure messages.
std::string describe(runtime_harness& h, const std::string& name) {
  auto p = h.pod(name);
  std::string out = "pod " + name + " group \"" + p.pod.group.str() + "\"";
  if (const auto* c = scheduled_condition(p))
    out += " " + c->status + " " + c->reason + " \"" + c->message + "\"";
  if (p.pod.group.empty())
    return out;
  auto g = h.group(p.pod.group.str());
  out += "; group " + std::string(scheduler::to_string(g.status.phase));
  for (const auto& c : g.status.conditions)
    out += " " + c.type + " \"" + c.message + "\"";
  return out;
}

int bound_count(runtime_harness& h) {
  int n = 0;
  for (const auto& p : h.pods())
    n += p.pod.is_bound() ? 1 : 0;
  return n;
}

TEST(SchedulingGates, AGatedMemberHoldsItsGangBackUntilItsLastGateIsRemoved) {
  runtime_harness h{deterministic_config(11), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_of("train", 3)), "the PodGroup");
  for (const char* name : {"w-0", "w-1"})
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod(name).cpu("1").group("train"), {}}), name);
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("w-2").cpu("1").group("train").gate("example.com/a").gate(
                                   "example.com/b"),
                               {}}),
      "w-2");
  h.pass(std::chrono::milliseconds(2000));
  EXPECT_EQ(bound_count(h), 0) << "a gang of three with one member gated must wait";
  auto gated = h.pod("w-2");
  const auto* c = scheduled_condition(gated);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "SchedulingGated");
  EXPECT_EQ(c->message, "Scheduling is blocked due to non-empty scheduling gates");

  // A gate may not be added.
  auto added = h.update(patched(h, "w-2", [](scheduler::pod& p) {
    set_gates(p, {"example.com/a", "example.com/b", "example.com/c"});
  }));
  ASSERT_FALSE(added);
  EXPECT_EQ(added.error().code(), errc::invalid_argument);
  EXPECT_NE(added.error().message().find(
                "spec.schedulingGates: Forbidden: only deletion is allowed, but found new "
                "scheduling gate \"example.com/c\""),
            std::string::npos)
      << added.error().message();

  // One gate of two removed: still gated.
  runtime_harness::must_ok(
      h.update(patched(h, "w-2", [](scheduler::pod& p) { set_gates(p, {"example.com/b"}); })),
      "remove gate a");
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_EQ(bound_count(h), 0);
  ASSERT_EQ(h.pod("w-2").pod.placement().scheduling_gates,
            std::vector<std::string>{"example.com/b"});

  // The last one: the gang runs whole.
  runtime_harness::must_ok(
      h.update(patched(h, "w-2", [](scheduler::pod& p) { set_gates(p, {}); })), "remove gate b");
  ASSERT_TRUE(h.run_until([&] { return bound_count(h) == 3; }, settle_limit, settle_step));
  auto report = h.invariants(false);
  EXPECT_TRUE(report.ok()) << report.to_string();

  h.restart();
  EXPECT_EQ(bound_count(h), 3);
  EXPECT_TRUE(h.pod("w-2").pod.placement().scheduling_gates.empty());
}

TEST(SchedulingGates, AGatedPodStaysGatedAcrossARestartAndItsPatchedLabelsAreKept) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("lone").cpu("1").gate("kueue.x-k8s.io/admission"), {}}),
      "lone");
  h.pass(std::chrono::milliseconds(1000));
  h.restart();
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_FALSE(h.pod("lone").pod.is_bound()) << "the gate must outlive a restart";

  auto labelled = h.update(patched(h, "lone", [](scheduler::pod& p) {
    p.meta.labels.set("team", "vision");
  }));
  runtime_harness::must_ok(labelled, "label it");
  h.restart();
  auto lone = h.pod("lone");
  ASSERT_TRUE(lone.pod.meta.labels.find("team"));
  EXPECT_EQ(*lone.pod.meta.labels.find("team"), "vision");
  EXPECT_FALSE(h.pod("lone").pod.is_bound());

  runtime_harness::must_ok(
      h.update(patched(h, "lone", [](scheduler::pod& p) { set_gates(p, {}); })), "ungate");
  ASSERT_TRUE(h.run_until([&] { return h.pod("lone").pod.is_bound(); }, settle_limit, settle_step));
}

TEST(SchedulingGates, AnUpdateIsRefusedWhenStaleOrWhenItWouldMoveThePod) {
  runtime_harness h{deterministic_config(13), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("p").cpu("1").gate("example.com/wait"), {}}), "p");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("q").cpu("1"), {}}), "q");
  ASSERT_TRUE(h.run_until([&] { return h.pod("q").pod.is_bound(); }, settle_limit, settle_step));

  // Stale: a change in between (a label) moved its resourceVersion on.
  auto stale = patched(h, "p", [](scheduler::pod& p) { p.meta.labels.set("a", "1"); });
  runtime_harness::must_ok(
      h.update(patched(h, "p", [](scheduler::pod& p) { p.meta.labels.set("b", "2"); })), "b");
  auto conflict = h.update(stale);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), errc::conflict) << conflict.error().to_string();

  // Its PodGroup is set at creation.
  auto moved = h.update(patched(h, "p", [](scheduler::pod& p) { p.group = "elsewhere"; }));
  ASSERT_FALSE(moved);
  EXPECT_NE(moved.error().message().find("metadata.annotations[scheduling.k8s.io/group-name]"),
            std::string::npos)
      << moved.error().message();

  // A bound pod's labels change too (BoundPodLabels.*).
  auto bound = h.update(patched(h, "q", [](scheduler::pod& p) { p.meta.labels.set("a", "1"); }));
  ASSERT_TRUE(bound) << bound.error().to_string();
  EXPECT_EQ(h.pod("q").pod.meta.labels.find("a").value_or(""), "1");

  EXPECT_FALSE(h.update(api::object{api::pod_object{make_pod("nobody"), {}}}));
}

TEST(SchedulingGates, AJobsPatchedPodDeletedNeverComesBackFromItsRecord) {
  runtime_harness h{deterministic_config(14), {make_node("n-0").cpu("8").memory("16Gi")}};
  auto job = one_task_job("gated", 2);
  set_gates(job.job.tasks[0].pod_template, {"example.com/hold"});
  job.job.min_available = 1;
  job.job.tasks[0].min_available = 1;  // One worker alone may run.
  runtime_harness::must_ok(h.create(job), "the job");
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_EQ(bound_count(h), 0);

  // Its pods are stored as the job; the patch gives this one a record of its own.
  runtime_harness::must_ok(
      h.update(patched(h, "gated-worker-0",
                       [](scheduler::pod& p) {
                         set_gates(p, {});
                         p.meta.labels.set("picked", "yes");
                       })),
      "ungate worker 0");
  ASSERT_TRUE(h.run_until([&] { return h.pod("gated-worker-0").pod.is_bound(); },
                          settle_limit, settle_step))
      << describe(h, "gated-worker-0");
  EXPECT_FALSE(h.pod("gated-worker-1").pod.is_bound());
  h.restart();
  EXPECT_TRUE(h.pod("gated-worker-0").pod.is_bound());
  EXPECT_TRUE(h.pod("gated-worker-0").pod.meta.labels.find("picked"));
  EXPECT_FALSE(h.pod("gated-worker-1").pod.is_bound());

  // Deleted, the pod is made again by its job's controller (PodEvicted syncs the job): a new
  // pod from the template, gated again, never the patched record.
  const auto patched_uid = h.pod("gated-worker-0").pod.meta.uid;
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "gated-worker-0"),
                           "delete worker 0");
  h.pass(std::chrono::milliseconds(1000));
  for (int restart = 0; restart < 2; ++restart) {
    h.restart();
    for (const auto& p : h.pods()) {
      if (p.pod.meta.name.str() != "gated-worker-0")
        continue;
      EXPECT_NE(p.pod.meta.uid, patched_uid) << "the deleted pod came back";
      EXPECT_FALSE(p.pod.meta.labels.find("picked"));
      EXPECT_TRUE(p.pod.is_gated());
      EXPECT_FALSE(p.pod.is_bound());
    }
  }
  auto report = h.invariants(false);
  EXPECT_TRUE(report.ok()) << report.to_string();
}

TEST(PodGroupPhase, ARunningGangBelowItsMinimumIsUnknownUntilItsReplacementIsBound) {
  runtime_harness h{deterministic_config(15), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_of("ring", 3)), "the PodGroup");
  for (const char* name : {"r-0", "r-1", "r-2"})
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod(name).cpu("1").group("ring"), {}}), name);
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("ring").status.phase == scheduler::pod_group_phase::running; },
          settle_limit,
      settle_step));

  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "r-1"), "lose r-1");
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("ring").status.phase == scheduler::pod_group_phase::unknown; },
          settle_limit,
      settle_step));
  auto queue = h.get(api::resource_kind::queue, "", "default");
  ASSERT_TRUE(queue);
  EXPECT_EQ(std::get<api::queue_object>(*queue).status.unknown, 1);

  runtime_harness::must_ok(
      h.create(api::pod_object{make_pod("r-3").cpu("1").group("ring"), {}}), "the replacement");
  ASSERT_TRUE(h.run_until(
      [&] { return h.group("ring").status.phase == scheduler::pod_group_phase::running; },
          settle_limit,
      settle_step));
}

} // namespace
} // namespace phalanx::actors::testing
