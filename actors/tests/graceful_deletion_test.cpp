// Graceful deletion of pods in standalone mode, on the whole runtime under CAF's test coordinator
// (virtual time): a bound pod that has not finished is marked terminating (deletionTimestamp,
// deletionGracePeriodSeconds), keeps its room until the simulated kubelet has stopped it, and the
// mark survives a restart; everything else, and a grace period of 0, goes at once. The rules are
// kube-apiserver's (its pod strategy's CheckGracefulDelete and BeforeDelete).

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// A pod of `cpu` that takes `stop_after` to stop once told to.
scheduler::pod slow_stopper(const std::string& name, std::string_view cpu,
                            std::string_view stop_after) {
  scheduler::pod p = make_pod(name).cpu(cpu);
  p.meta.annotations.set(std::string(sim_stop_after_key), std::string(stop_after));
  return p;
}

result<api::object> remove_pod(runtime_harness& h, const std::string& name,
                               api::write_options options = {}) {
  return h.call<result<api::object>>([&](auto done) {
    h.svc().remove(api::resource_kind::pod, "default", name, options, done);
  });
}

api::write_options grace(int64_t seconds) {
  api::write_options o;
  o.grace_period_seconds = seconds;
  return o;
}

bool is_gone(runtime_harness& h, const std::string& name) {
  auto r = h.get(api::resource_kind::pod, "default", name);
  return !r.ok() && r.error().code() == errc::not_found;
}

bool running(runtime_harness& h, const std::string& name) {
  return h.pod(name).pod.phase == scheduler::pod_phase::running;
}

// Node n-0 of 2 cpu, with pod "a" of 2 cpu running on it.
struct one_full_node {
  runtime_harness h{deterministic_config(91), {make_node("n-0").cpu("2").memory("8Gi")}};
  explicit one_full_node(std::string_view stop_after) {
    h.create_pod(slow_stopper("a", "2", stop_after));
    EXPECT_TRUE(h.run_until([&] { return running(h, "a"); }, 5000ms, 10ms));
  }
};

TEST(GracefulDeletion, ARunningPodTerminatesAndKeepsItsRoomUntilItHasStopped) {
  one_full_node f{"20s"};
  auto& h = f.h;
  const auto before = h.pod("a");
  auto r = remove_pod(h, "a");
  runtime_harness::must_ok(r, "delete a");
  // Answered with the pod marked: Kubernetes' default grace period of 30 s from now (the Killing
  // event is recorded as the mark is durable, a group commit after the delete came).
  const auto& answered = std::get<api::pod_object>(*r);
  ASSERT_TRUE(answered.termination);
  EXPECT_EQ(answered.termination->grace_seconds, 30);
  std::optional<scheduler::timestamp> killing_at;
  for (const auto& e : h.events(api::resource_kind::pod, "a"))
    if (e.reason == "Killing")
      killing_at = e.first_time;
  ASSERT_TRUE(killing_at) << "no Killing event on the terminating pod";
  EXPECT_LE(answered.termination->deadline - 30s, *killing_at);
  EXPECT_GT(answered.termination->deadline - 30s, *killing_at - 1s);
  EXPECT_GT(answered.pod.meta.resource_version, before.pod.meta.resource_version);
  // Read back the same, and still bound and running.
  auto marked = h.pod("a");
  ASSERT_TRUE(marked.termination);
  EXPECT_EQ(*marked.termination, *answered.termination);
  EXPECT_EQ(marked.pod.meta.resource_version, answered.pod.meta.resource_version);
  EXPECT_EQ(marked.pod.node_name, "n-0");

  // Its room is kept: a pod that needs it waits.
  h.create_pod(make_pod("b").cpu("2"));
  h.pass(10s);
  EXPECT_FALSE(is_gone(h, "a"));
  EXPECT_FALSE(h.bound("b"));
  EXPECT_INVARIANTS(h);

  h.pass(9s);
  EXPECT_FALSE(is_gone(h, "a"));
  // It stops after its 20 s; then it is gone and b takes the room.
  ASSERT_TRUE(h.run_until([&] { return is_gone(h, "a"); }, 2000ms, 100ms));
  ASSERT_TRUE(h.run_until([&] { return h.bound("b"); }, 5000ms, 10ms));
  EXPECT_INVARIANTS(h);
}

TEST(GracefulDeletion, TheGracePeriodCutsAStopShort) {
  one_full_node f{"1h"};
  auto& h = f.h;
  runtime_harness::must_ok(remove_pod(h, "a", grace(5)), "delete a");
  h.pass(3s);
  EXPECT_FALSE(is_gone(h, "a"));
  ASSERT_TRUE(h.run_until([&] { return is_gone(h, "a"); }, 3000ms, 100ms))
      << "killed at the end of its grace period";
}

TEST(GracefulDeletion, ASecondDeleteMayOnlyShortenTheGracePeriod) {
  one_full_node f{"1h"};
  auto& h = f.h;
  auto first = remove_pod(h, "a", grace(60));
  runtime_harness::must_ok(first, "delete a");
  const auto mark = *std::get<api::pod_object>(*first).termination;

  auto longer = remove_pod(h, "a", grace(120));
  runtime_harness::must_ok(longer, "delete a again");
  EXPECT_EQ(*std::get<api::pod_object>(*longer).termination, mark);
  EXPECT_EQ(*h.pod("a").termination, mark);

  // A shorter one moves the deadline: it counts from the first delete.
  auto shorter = remove_pod(h, "a", grace(10));
  runtime_harness::must_ok(shorter, "delete a, shorter");
  const auto moved = *std::get<api::pod_object>(*shorter).termination;
  EXPECT_EQ(moved.grace_seconds, 10);
  EXPECT_EQ(moved.deadline, mark.deadline - 50s);
  EXPECT_EQ(*h.pod("a").termination, moved);
  ASSERT_TRUE(h.run_until([&] { return is_gone(h, "a"); }, 11000ms, 100ms));
  EXPECT_INVARIANTS(h);
}

// A delete sent again while the first one's mark is on its way to the store (a client that
// retried) is answered only once a mark is durable: a read sent with each answer finds the pod
// terminating.
TEST(GracefulDeletion, ASecondDeleteWhileTheMarkIsOnItsWayIsAnsweredOnceItIsDurable) {
  one_full_node f{"1h"};
  auto& h = f.h;
  auto reads = std::make_shared<std::vector<bool>>();
  auto remove = [&] {
    h.svc().remove(api::resource_kind::pod, "default", "a", grace(60),
                   [&h, reads](result<api::object> r) {
                     ASSERT_TRUE(r.ok()) << r.error().to_string();
                     h.svc().get(api::resource_kind::pod, "default", "a",
                                 [reads](result<api::object> g) {
                                   reads->push_back(
                                       g.ok() && std::get<api::pod_object>(*g).termination);
                                 });
                   });
  };
  remove();
  remove();
  ASSERT_TRUE(h.run_until([&] { return reads->size() == 2; }, 1000ms, 1ms));
  EXPECT_EQ(*reads, (std::vector<bool>{true, true}))
      << "a delete was answered terminating while the pod read back was not";
}

TEST(GracefulDeletion, AForcedDeleteRemovesATerminatingPodAtOnce) {
  one_full_node f{"1h"};
  auto& h = f.h;
  runtime_harness::must_ok(remove_pod(h, "a"), "delete a");
  auto forced = remove_pod(h, "a", grace(0));
  runtime_harness::must_ok(forced, "delete a --grace-period=0 --force");
  EXPECT_TRUE(is_gone(h, "a"));
  EXPECT_INVARIANTS(h);
  // And nothing of its mark is left: the deletion erased it in the same write.
  std::size_t marks = 0;
  h.restart_after([&](storage::store& s) {
    auto loaded = s.load();
    runtime_harness::must_ok(loaded, "load");
    for (const auto& [key, value] : loaded->world_meta)
      marks += key.starts_with("terminating/");
  });
  EXPECT_EQ(marks, 0u);
  EXPECT_TRUE(is_gone(h, "a"));
}

TEST(GracefulDeletion, PodsNoKubeletRunsGoAtOnce) {
  runtime_harness h{deterministic_config(92), {make_node("n-0").cpu("2").memory("8Gi")}};
  // Pending: too big for any node.
  h.create_pod(make_pod("big").cpu("8"));
  h.pass(1s);
  auto r = remove_pod(h, "big", grace(30));
  runtime_harness::must_ok(r, "delete big");
  EXPECT_FALSE(std::get<api::pod_object>(*r).termination);
  EXPECT_TRUE(is_gone(h, "big"));
  // Finished.
  scheduler::pod quick = make_pod("quick").cpu("1");
  quick.meta.annotations.set(std::string(sim_duration_key), "1s");
  h.create_pod(quick);
  ASSERT_TRUE(h.run_until(
      [&] { return h.pod("quick").pod.phase == scheduler::pod_phase::succeeded; }, 5000ms, 10ms));
  runtime_harness::must_ok(remove_pod(h, "quick"), "delete quick");
  EXPECT_TRUE(is_gone(h, "quick"));
  EXPECT_INVARIANTS(h);
}

TEST(GracefulDeletion, ThePodsOwnGracePeriodIsTheDefault) {
  runtime_harness h{deterministic_config(93), {make_node("n-0").cpu("2").memory("8Gi")}};
  scheduler::pod p = slow_stopper("a", "1", "1h");
  p.spec_json = R"({"containers":[{"name":"c"}],"terminationGracePeriodSeconds":7})";
  h.create_pod(p);
  ASSERT_TRUE(h.run_until([&] { return running(h, "a"); }, 5000ms, 10ms));
  auto r = remove_pod(h, "a");
  runtime_harness::must_ok(r, "delete a");
  EXPECT_EQ(std::get<api::pod_object>(*r).termination->grace_seconds, 7);
  ASSERT_TRUE(h.run_until([&] { return is_gone(h, "a"); }, 8000ms, 100ms));
}

TEST(GracefulDeletion, ADryRunMarksNothing) {
  one_full_node f{"1h"};
  auto& h = f.h;
  api::write_options dry;
  dry.dry_run = true;
  auto r = remove_pod(h, "a", dry);
  runtime_harness::must_ok(r, "delete a --dry-run=server");
  EXPECT_TRUE(std::get<api::pod_object>(*r).termination);
  EXPECT_FALSE(h.pod("a").termination);
  h.pass(60s);
  EXPECT_TRUE(running(h, "a"));
}

// The mark is durable before the delete is answered: a restart in the grace period finds the pod
// terminating with the same deadline, its room still held, and the kubelet stops it in time.
TEST(GracefulDeletion, TheMarkSurvivesARestartAndThePodStillGoesByItsDeadline) {
  one_full_node f{"1h"};
  auto& h = f.h;
  auto r = remove_pod(h, "a", grace(600));
  runtime_harness::must_ok(r, "delete a");
  const auto answered = std::get<api::pod_object>(*r);
  h.pass(100s);
  h.restart();
  auto after = h.pod("a");
  ASSERT_TRUE(after.termination) << "the acknowledged graceful delete was lost at the restart";
  EXPECT_EQ(*after.termination, *answered.termination);
  EXPECT_GE(after.pod.meta.resource_version, answered.pod.meta.resource_version);
  EXPECT_EQ(after.pod.node_name, "n-0");
  h.create_pod(make_pod("b").cpu("2"));
  h.pass(5s);
  EXPECT_FALSE(h.bound("b"));
  EXPECT_INVARIANTS(h);
  // The virtual clock starts again at the restart: the deadline is what the store kept, so the
  // pod goes at the latest 600 s after it was asked, wherever the new clock stands.
  ASSERT_TRUE(h.run_until([&] { return is_gone(h, "a"); }, 601000ms, 1000ms));
  ASSERT_TRUE(h.run_until([&] { return h.bound("b"); }, 5000ms, 10ms));
  EXPECT_INVARIANTS(h);
}

// A name a terminating pod holds is not free until it is gone (409 for a create under it), and
// a pod created under it afterwards carries no mark of the old one across a restart.
TEST(GracefulDeletion, ANameIsFreeOnlyOnceTheTerminatingPodIsGone) {
  one_full_node f{"5s"};
  auto& h = f.h;
  runtime_harness::must_ok(remove_pod(h, "a"), "delete a");
  auto again = h.create(api::pod_object{make_pod("a").cpu("1"), {}});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), errc::already_exists);
  ASSERT_TRUE(h.run_until([&] { return is_gone(h, "a"); }, 6000ms, 100ms));
  h.create_pod(make_pod("a").cpu("1"));
  h.restart();
  EXPECT_FALSE(h.pod("a").termination);
  EXPECT_INVARIANTS(h);
}

} // namespace
} // namespace phalanx::actors::testing
