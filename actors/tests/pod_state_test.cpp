// A pod's runtime state (phase, node, start and finish times, resource version) on the whole
// runtime under CAF's test coordinator. The registry keeps it beside the pod it created rather
// than in a copy of the pod per change, so these tests check every way the state is read back:
// the API view, the store after a restart, and a node deleted under running pods.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

scheduler::pod get_pod(runtime_harness& h, const std::string& name) {
  auto r = h.get(api::resource_kind::pod, "default", name);
  runtime_harness::must_ok(r, "get pod " + name);
  return std::get<api::pod_object>(*r).pod;
}

bool all_running(runtime_harness& h, std::size_t count) {
  auto pods = h.pods();
  if (pods.size() != count)
    return false;
  for (const auto& p : pods)
    if (p.pod.phase != scheduler::pod_phase::running)
      return false;
  return true;
}

TEST(PodState, TheViewAndARestartShowWhatBindingAndStartingWrote) {
  runtime_harness h{deterministic_config(11), {make_node("n-0").cpu("4").memory("8Gi")}};
  auto created = h.create(api::pod_object{make_pod("a").cpu("1"), {}});
  runtime_harness::must_ok(created, "create a");
  auto created_version = std::get<api::pod_object>(*created).pod.meta.resource_version;
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 1); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));

  auto running = get_pod(h, "a");
  EXPECT_EQ(running.node_name, "n-0");
  EXPECT_NE(running.start_time, scheduler::timestamp{});
  EXPECT_EQ(running.finish_time, scheduler::timestamp{});
  EXPECT_GT(running.meta.resource_version, created_version);
  // The spec is the one created.
  EXPECT_EQ(running.requests.cpu_milli, 1000);
  EXPECT_EQ(running.meta.uid, std::get<api::pod_object>(*created).pod.meta.uid);

  h.restart();
  auto restored = get_pod(h, "a");
  EXPECT_EQ(scheduler::runtime_of(restored), scheduler::runtime_of(running));
  EXPECT_EQ(restored.meta.uid, running.meta.uid);
}

TEST(PodState, ANodeDeletedUnderRunningPodsFailsThemWhereTheyRan) {
  runtime_harness h{deterministic_config(11), {make_node("n-0").cpu("2").memory("8Gi"),
                                               make_node("n-1").cpu("2").memory("8Gi")}};
  // Two 2-CPU pods: one on each node.
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("a").cpu("2"), {}}), "create a");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("b").cpu("2"), {}}), "create b");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 2); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  const std::string lost = "a";
  const std::string kept = "b";
  auto lost_node = get_pod(h, lost).node_name;
  ASSERT_FALSE(lost_node.empty());
  ASSERT_NE(get_pod(h, kept).node_name, lost_node);

  runtime_harness::must_ok(h.remove(api::resource_kind::node, "", lost_node), "delete the node");
  ASSERT_TRUE(h.run_until(
      [&] { return get_pod(h, lost).phase == scheduler::pod_phase::failed; },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  auto failed = get_pod(h, lost);
  EXPECT_EQ(failed.node_name, lost_node);
  EXPECT_NE(failed.start_time, scheduler::timestamp{});
  EXPECT_NE(failed.finish_time, scheduler::timestamp{});
  EXPECT_EQ(get_pod(h, kept).phase, scheduler::pod_phase::running);

  auto report = h.invariants(true);
  EXPECT_TRUE(report.ok()) << report.to_string();
  h.restart();
  EXPECT_EQ(get_pod(h, lost).phase, scheduler::pod_phase::failed);
  EXPECT_EQ(get_pod(h, lost).node_name, lost_node);
  EXPECT_EQ(get_pod(h, kept).phase, scheduler::pod_phase::running);
}

} // namespace
} // namespace phalanx::actors::testing
