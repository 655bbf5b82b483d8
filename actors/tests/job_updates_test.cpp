// Updates of Volcano Jobs in standalone mode (kubectl edit, patch or apply of a changed job), on
// the whole runtime under CAF's test coordinator: what Volcano's webhook lets change
// (minAvailable, each task's replicas and minAvailable, priorityClassName) is written with the
// PodGroup's new minimum, and the job's controller scales the job as Volcano's syncJob does.
// Its pods stored as the job (storage/README.md) stay so across restarts, at their own version.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// A job of two tasks, "ps" (1 pod) before "worker" (`workers` pods), 1 cpu each.
api::job_object two_task_job(const std::string& name, int32_t workers) {
  api::job_object o;
  o.job.meta.name = name;
  o.job.meta.namespace_name = "default";
  for (auto [task, replicas] : {std::pair{"ps", 1}, {"worker", workers}}) {
    scheduler::job_task t;
    t.name = task;
    t.replicas = replicas;
    t.pod_template = make_pod("template").cpu("1");
    o.job.tasks.push_back(std::move(t));
  }
  return o;
}

api::job_object job_of(runtime_harness& h, const std::string& name) {
  auto r = h.get(api::resource_kind::job, "default", name);
  runtime_harness::must_ok(r, "get job " + name);
  return std::get<api::job_object>(*r);
}

int32_t min_member_of(runtime_harness& h, const api::job_object& j) {
  return h.group(j.job.meta.name + "-" + j.job.meta.uid.str()).group.min_member;
}

result<api::object> scale(runtime_harness& h, const std::string& name, int32_t workers,
                          int32_t min_available) {
  auto j = job_of(h, name);
  j.job.tasks[1].replicas = workers;
  j.job.min_available = min_available;
  return h.update(api::object{j});
}

TEST(JobUpdates, ScalingUpAndDownMakesAndDeletesPodsAndSurvivesRestarts) {
  runtime_harness h{deterministic_config(71), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(two_task_job("etl", 2)), "etl");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 3); }, 5000ms, 10ms));
  const auto before = pods_of(h, "etl");
  const auto created = job_of(h, "etl");

  auto up = scale(h, "etl", 4, 4);
  ASSERT_TRUE(up) << up.error().to_string();
  EXPECT_GT(api::meta_of(*up).resource_version, created.job.meta.resource_version);
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 5); }, 5000ms, 10ms));
  auto scaled = pods_of(h, "etl");
  for (const auto& [name, p] : before)
    EXPECT_EQ(scaled.at(name).first, p.first) << name << " kept its uid";
  EXPECT_TRUE(scaled.count("etl-worker-3"));
  auto j = job_of(h, "etl");
  EXPECT_EQ(j.status.min_available, 4);
  EXPECT_EQ(min_member_of(h, j), 4);
  EXPECT_INVARIANTS(h);

  // The pods made at the creation are still the job's expansion: a restart makes them again at
  // their version, with their states, beside the scale-up's records.
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 5); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "etl"), scaled);
  EXPECT_EQ(min_member_of(h, job_of(h, "etl")), 4);
  EXPECT_INVARIANTS(h);

  auto down = scale(h, "etl", 1, 2);
  ASSERT_TRUE(down) << down.error().to_string();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 2); }, 5000ms, 10ms))
      << pods_of(h, "etl").size() << " pods";
  auto shrunk = pods_of(h, "etl");
  EXPECT_TRUE(shrunk.count("etl-ps-0"));
  EXPECT_TRUE(shrunk.count("etl-worker-0"));
  EXPECT_EQ(min_member_of(h, job_of(h, "etl")), 2);
  EXPECT_INVARIANTS(h);
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 2); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "etl"), shrunk) << "a deleted pod came back, or a kept one changed";
  EXPECT_INVARIANTS(h);

  // Up again within one run, after the restart: the names free again are made anew.
  ASSERT_TRUE(scale(h, "etl", 3, 4));
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 4); }, 5000ms, 10ms));
  EXPECT_NE(pods_of(h, "etl").at("etl-worker-1").first, scaled.at("etl-worker-1").first);
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "etl", 4); }, 5000ms, 10ms));
  EXPECT_INVARIANTS(h);
}

TEST(JobUpdates, AStaleVersionAndAnUnknownPriorityClassAreRefused) {
  runtime_harness h{deterministic_config(72), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(two_task_job("etl", 1)), "etl");
  auto stale = job_of(h, "etl");
  ASSERT_TRUE(scale(h, "etl", 2, 2));
  stale.job.tasks[1].replicas = 3;
  auto conflict = h.update(api::object{stale});
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code(), errc::conflict);

  auto j = job_of(h, "etl");
  j.job.priority_class_name = "no-such-class";
  auto unknown = h.update(api::object{j});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("spec.priorityClassName"), std::string::npos)
      << unknown.error().to_string();
  // Nothing of it was taken.
  EXPECT_EQ(job_of(h, "etl").job.priority_class_name, "");
  EXPECT_EQ(job_of(h, "etl").job.tasks[1].replicas, 2);
}

} // namespace
} // namespace phalanx::actors::testing
