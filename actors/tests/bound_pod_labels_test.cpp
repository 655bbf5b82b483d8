// Labels and annotations of bound pods in standalone mode (`kubectl label pod` on a running pod),
// on the whole runtime under CAF's test coordinator. The pod's record is written whole, its
// runtime state included, so it must not be written while a state update of the pod is on its
// way to the store: it would carry the older state and win over that update at the next start.

#include "actors/runtime_probe.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <future>
#include <stdexcept>
#include <string>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;

api::object relabelled(runtime_harness& h, const std::string& name, const std::string& key,
                       const std::string& value) {
  auto pod = h.pod(name);
  pod.pod.meta.labels.set(key, value);
  pod.pod.meta.annotations.set("note", value);
  return api::object{std::move(pod)};
}

// Sends the registry what the simulated cluster would when pod `name` fails, without letting
// anything run: the registry takes it (and sends its write to the store) in the same turn as
// whatever the test sends it next.
void fail_now(runtime_harness& h, const std::string& name) {
  for (const auto& p : runtime_probe::snapshot(h.rt()).pods)
    if (p.key == "default/" + name) {
      caf::anon_send(runtime_probe::registry(h.rt()), pod_status_atom::value,
                     std::vector<pod_status_update>{
                         {p.id, scheduler::pod_phase::failed, scheduler::timestamp{} + 1s, ""}});
      return;
    }
  throw std::runtime_error("no pod " + name);
}

// Pod `name` fails and a relabel of it (as `kubectl label` sends it: no resourceVersion
// precondition) follows at once: both reach the registry together, so the failure's state update
// is on its way to the store when the relabel comes. The relabel's answer, once it is given.
std::future<result<api::object>> relabel_as_it_fails(runtime_harness& h, const std::string& name,
                                                     const std::string& key,
                                                     const std::string& value) {
  auto change = relabelled(h, name, key, value);
  api::meta_of(change).resource_version = 0;
  fail_now(h, name);
  auto updated = std::make_shared<std::promise<result<api::object>>>();
  auto answer = updated->get_future();
  h.svc().update(std::move(change),
                 [updated](result<api::object> r) { updated->set_value(std::move(r)); });
  return answer;
}

bool running(runtime_harness& h, const std::string& name) {
  return h.pod(name).pod.phase == scheduler::pod_phase::running;
}

TEST(BoundPodLabels, ARunningPodsLabelsChangeAndSurviveARestart) {
  runtime_harness h{deterministic_config(81), {make_node("n-0").cpu("2").memory("8Gi")}};
  h.create_pod(make_pod("a").cpu("1").label("app", "web"));
  ASSERT_TRUE(h.run_until([&] { return running(h, "a"); }, 5000ms, 10ms));
  const auto before = h.pod("a").pod;
  auto r = h.update(relabelled(h, "a", "team", "blue"));
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& answered = std::get<api::pod_object>(*r).pod;
  EXPECT_EQ(answered.meta.labels.find("team").value_or(""), "blue");
  EXPECT_EQ(answered.meta.labels.find("app").value_or(""), "web");
  EXPECT_EQ(answered.meta.annotations.find("note").value_or(""), "blue");
  EXPECT_GT(answered.meta.resource_version, before.meta.resource_version);
  EXPECT_EQ(scheduler::runtime_of(answered).phase, scheduler::pod_phase::running);
  EXPECT_EQ(answered.node_name, "n-0");
  EXPECT_EQ(answered.start_time, before.start_time);
  EXPECT_INVARIANTS(h);

  h.restart();
  auto after = h.pod("a").pod;
  EXPECT_EQ(after.meta.labels.find("team").value_or(""), "blue");
  EXPECT_EQ(after.phase, scheduler::pod_phase::running);
  EXPECT_EQ(after.node_name, "n-0");
  EXPECT_EQ(after.start_time, before.start_time);
  EXPECT_GE(after.meta.resource_version, answered.meta.resource_version);
  EXPECT_INVARIANTS(h);
}

// The pod fails (its phase change is on its way to the store, waiting for the writer's group
// commit) when its relabel comes: the record is written after the failure is durable and carries
// it. Written at once, it would carry Running, land after the failure, and bring the pod back
// Running at the restart.
TEST(BoundPodLabels, ARelabelWaitsForAPhaseChangeOnItsWayAndCarriesIt) {
  runtime_harness h{deterministic_config(82), {make_node("n-0").cpu("2").memory("8Gi")}};
  h.create_pod(make_pod("a").cpu("1"));
  ASSERT_TRUE(h.run_until([&] { return running(h, "a"); }, 5000ms, 10ms));
  auto answer = relabel_as_it_fails(h, "a", "team", "red");
  auto r = h.wait(answer);
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& answered = std::get<api::pod_object>(*r).pod;
  EXPECT_EQ(answered.meta.labels.find("team").value_or(""), "red");
  EXPECT_EQ(answered.phase, scheduler::pod_phase::failed);

  h.restart();
  auto after = h.pod("a").pod;
  EXPECT_EQ(after.phase, scheduler::pod_phase::failed)
      << "the relabel's record, written whole, undid the failure on its way before it";
  EXPECT_EQ(after.meta.labels.find("team").value_or(""), "red");
  EXPECT_INVARIANTS(h);
}

// A relabel that waits sees the pod's deletion: it is not written (its record would bring the
// pod back at the next start) and says why.
TEST(BoundPodLabels, ARelabelOfAPodDeletedWhileItWaitsWritesNothing) {
  runtime_harness h{deterministic_config(83), {make_node("n-0").cpu("2").memory("8Gi")}};
  h.create_pod(make_pod("a").cpu("1"));
  ASSERT_TRUE(h.run_until([&] { return running(h, "a"); }, 5000ms, 10ms));
  auto answer = relabel_as_it_fails(h, "a", "team", "green");
  api::write_options force;
  force.grace_period_seconds = 0;
  h.svc().remove(api::resource_kind::pod, "default", "a", force, [](result<api::object>) {});
  auto r = h.wait(answer);
  ASSERT_FALSE(r);
  h.pass(100ms);
  h.restart();
  auto gone = h.get(api::resource_kind::pod, "default", "a");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code(), errc::not_found);
}

} // namespace
} // namespace phalanx::actors::testing
