// The two seed deadlock scenarios on the whole runtime (registry, queues, PodGroup and node
// actors, store, simulated cluster) under CAF's test coordinator, both ways:
//   (a) 6 CPUs, six Spark-like jobs: a 1-CPU driver that, once running, creates two 1-CPU
//       executors and finishes when they do. PodGroup minMember 3, minResources 3 CPU.
//       Pod by pod: all six drivers run, no executor fits, nothing ever finishes, and the stall is
//       reported as a deadlock. As gangs: all six complete, never more than two at a time.
//   (b) 4 GPUs, two TensorFlow jobs of four 1-GPU workers that only make progress once all four
//       run. Pod by pod: each gets two and both hang. As gangs: both finish, one after the other.
// The invariants I1-I4 are checked at every sampled instant, and I3 at rest at the end.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include "scheduler/placeholders.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::pod_group_phase;
using scheduler::pod_phase;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using scheduler::testing::res;

runtime_config deterministic_config(bool gangs) {
  runtime_config c;
  c.deterministic = true;
  c.seed = 7;
  c.scheduling.gang_scheduling = gangs;
  c.simulation.stall_check_interval = 1000ms;
  c.simulation.pod_start_delay = 2s;  // Pulling an image and starting a container take time.
  return c;
}

scheduler::pod_group make_group(const std::string& name, int32_t min_member,
                                scheduler::resources min_resources) {
  scheduler::pod_group g;
  g.meta.name = name;
  g.meta.namespace_name = "default";
  g.min_member = min_member;
  g.min_resources = std::move(min_resources);
  g.queue = "default";
  return g;
}

// Six Spark jobs submitted at once: every PodGroup and driver is in flight together.
void create_spark_jobs(runtime_harness& h) {
  std::vector<api::object> objects;
  for (int i = 0; i < 6; ++i) {
    auto name = "spark-" + std::to_string(i);
    // Each driver's gang reserves room for its two executors (placeholders), which it creates
    // once it runs.
    auto group = make_group(name, 3, res("cpu", "3"));
    group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
    objects.push_back(api::pod_group_object{std::move(group), {}});
  }
  for (int i = 0; i < 6; ++i) {
    auto name = "spark-" + std::to_string(i);
    scheduler::pod driver =
        make_pod(name + "-driver").cpu("1").memory("1Gi").role("driver").group(name);
    driver.meta.annotations.set(std::string(sim_spawn_key), "2");
    driver.meta.annotations.set(std::string(sim_spawn_cpu_key), "1");
    driver.meta.annotations.set(std::string(sim_spawn_memory_key), "1Gi");
    driver.meta.annotations.set(std::string(sim_spawn_duration_key), "20s");
    objects.push_back(api::pod_object{driver, {}});
  }
  h.create_all(std::move(objects));
}

// Two TensorFlow jobs submitted together: their controllers create the workers concurrently, so
// the pods arrive interleaved (a-0, b-0, a-1, b-1, ...), as they do on a real API server.
void create_tf_jobs(runtime_harness& h) {
  for (const char* name : {"tf-a", "tf-b"})
    runtime_harness::must_ok(
        h.create(api::pod_group_object{make_group(name, 4, res("nvidia.com/gpu", "4")), {}}),
        std::string("create podgroup ") + name);
  for (int w = 0; w < 4; ++w)
    for (std::string name : {"tf-a", "tf-b"}) {
      scheduler::pod worker = make_pod(name + "-worker-" + std::to_string(w))
                                  .cpu("1")
                                  .gpu(1)
                                  .role("worker")
                                  .group(name);
      worker.meta.annotations.set(std::string(sim_duration_key), "30s");
      worker.meta.annotations.set(std::string(sim_barrier_key), "4");
      runtime_harness::must_ok(h.create(api::pod_object{worker, {}}), "create " + worker.meta.name);
    }
}

std::map<std::string, api::pod_group_object> groups_by_name(runtime_harness& h) {
  auto r = h.list(api::resource_kind::pod_group);
  runtime_harness::must_ok(r, "list podgroups");
  std::map<std::string, api::pod_group_object> out;
  for (auto& o : r->items) {
    auto g = std::get<api::pod_group_object>(o);
    out[g.group.meta.name.str()] = g;
  }
  return out;
}

int count_phase(const std::map<std::string, api::pod_group_object>& groups, pod_group_phase p) {
  return static_cast<int>(std::count_if(groups.begin(), groups.end(),
                                        [p](const auto& kv) { return kv.second.status.phase == p; }));
}

bool has_deadlock_condition(const api::pod_group_object& g) {
  return std::any_of(g.status.conditions.begin(), g.status.conditions.end(), [](const auto& c) {
    return c.message.find("deadlock") != std::string::npos;
  });
}

// What the PodGroups and pods look like, for failure messages.
std::string dump(runtime_harness& h) {
  std::string out;
  for (const auto& [name, g] : groups_by_name(h)) {
    out += name + ": " + std::string(scheduler::to_string(g.status.phase));
    for (const auto& c : g.status.conditions)
      out += " [" + c.type + ": " + c.message + "]";
    out += "\n";
  }
  for (const auto& p : h.pods())
    out += "  " + p.pod.meta.name + " " + std::string(scheduler::to_string(p.pod.phase)) + " on '" +
           p.pod.node_name + "'\n";
  return out;
}

std::vector<scheduler::node> six_cpus() {
  return {make_node("cpu-0").cpu("2").memory("16Gi"), make_node("cpu-1").cpu("2").memory("16Gi"),
          make_node("cpu-2").cpu("2").memory("16Gi")};
}

TEST(DeadlockScenarios, SparkAsGangsCompletesAllSixTwoAtATime) {
  runtime_harness h{deterministic_config(true), six_cpus()};
  create_spark_jobs(h);
  int most_running_at_once = 0;
  bool done = h.run_until(
      [&] {
        auto groups = groups_by_name(h);
        most_running_at_once =
            std::max(most_running_at_once, count_phase(groups, pod_group_phase::running));
        auto inv = h.invariants(false);
        EXPECT_TRUE(inv.ok()) << inv.to_string();
        return count_phase(groups, pod_group_phase::completed) == 6;
      },
      10min, 1s);
  ASSERT_TRUE(done) << "not every Spark job completed within 10 simulated minutes\n" << dump(h);
  EXPECT_EQ(most_running_at_once, 2);
  for (const auto& p : h.pods())
    EXPECT_EQ(p.pod.phase, pod_phase::succeeded) << p.pod.meta.name;
  EXPECT_EQ(h.pods().size(), 18u);  // Six drivers and their twelve executors.
  auto inv = h.invariants(true);
  EXPECT_TRUE(inv.ok()) << inv.to_string();
}

TEST(DeadlockScenarios, SparkPodByPodDeadlocksAndTheStallIsReported) {
  runtime_harness h{deterministic_config(false), six_cpus()};
  create_spark_jobs(h);
  bool reported = h.run_until(
      [&] {
        auto groups = groups_by_name(h);
        return std::all_of(groups.begin(), groups.end(),
                           [](const auto& kv) { return has_deadlock_condition(kv.second); });
      },
      5min, 1s);
  ASSERT_TRUE(reported) << "the deadlock was not reported on every PodGroup";
  // Nothing progresses: ten more simulated minutes change nothing.
  h.pass(10min);
  int drivers_running = 0;
  int executors_pending = 0;
  for (const auto& p : h.pods()) {
    EXPECT_NE(p.pod.phase, pod_phase::succeeded) << p.pod.meta.name;
    if (p.pod.role == "driver" && p.pod.phase == pod_phase::running)
      ++drivers_running;
    if (p.pod.role == "executor" && !p.pod.is_bound())
      ++executors_pending;
  }
  EXPECT_EQ(drivers_running, 6);
  EXPECT_EQ(executors_pending, 12);
  auto groups = groups_by_name(h);
  EXPECT_EQ(count_phase(groups, pod_group_phase::completed), 0);
  auto inv = h.invariants(false);
  EXPECT_TRUE(inv.ok()) << inv.to_string();
}

std::vector<scheduler::node> four_gpus() {
  return {make_node("gpu-0").cpu("8").memory("32Gi").gpu(2),
          make_node("gpu-1").cpu("8").memory("32Gi").gpu(2)};
}

TEST(DeadlockScenarios, TensorFlowAsGangsRunsOneAfterTheOther) {
  runtime_harness h{deterministic_config(true), four_gpus()};
  create_tf_jobs(h);
  int most_running_at_once = 0;
  bool done = h.run_until(
      [&] {
        auto groups = groups_by_name(h);
        most_running_at_once =
            std::max(most_running_at_once, count_phase(groups, pod_group_phase::running));
        auto inv = h.invariants(false);
        EXPECT_TRUE(inv.ok()) << inv.to_string();
        return count_phase(groups, pod_group_phase::completed) == 2;
      },
      5min, 1s);
  ASSERT_TRUE(done) << "both TensorFlow jobs should complete\n" << dump(h);
  EXPECT_EQ(most_running_at_once, 1);
  auto inv = h.invariants(true);
  EXPECT_TRUE(inv.ok()) << inv.to_string();
}

TEST(DeadlockScenarios, TensorFlowPodByPodHangsWithTwoWorkersEach) {
  runtime_harness h{deterministic_config(false), four_gpus()};
  create_tf_jobs(h);
  bool reported = h.run_until(
      [&] {
        auto groups = groups_by_name(h);
        return std::all_of(groups.begin(), groups.end(),
                           [](const auto& kv) { return has_deadlock_condition(kv.second); });
      },
      5min, 1s);
  h.pass(10min);
  std::map<std::string, int> running_per_job;
  for (const auto& p : h.pods()) {
    EXPECT_NE(p.pod.phase, pod_phase::succeeded) << p.pod.meta.name;
    if (p.pod.phase == pod_phase::running)
      ++running_per_job[p.pod.group.str()];
  }
  // Pod by pod in arrival order: each job gets two GPUs and waits forever for the other two.
  EXPECT_EQ(running_per_job["tf-a"], 2);
  EXPECT_EQ(running_per_job["tf-b"], 2);
  EXPECT_TRUE(reported) << "the hang was not reported as a deadlock";
}

} // namespace
} // namespace phalanx::actors::testing
