// The deadlock, shown: the same jobs on the same cluster, pod by pod and as gangs.
//
// (a) Six Spark-like jobs on 6 CPUs. Each driver (1 CPU) starts first and, once running, creates
//     two 1-CPU executors; the job finishes when its executors do. Pod by pod, the six drivers
//     take all six CPUs and their twelve executors wait forever: every job is deadlocked. As gangs
//     (minMember 3, minResources 3 CPU) two jobs run at a time and all six complete.
// (b) Two TensorFlow jobs of 4 one-GPU workers on 4 GPUs; workers wait for all their peers. Pod
//     by pod their pods interleave, each job gets 2 GPUs and both hang. As gangs they run one
//     after the other.

#include "scheduler/simulation.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;
using namespace std::chrono_literals;

constexpr sim_policy all_policies[] = {sim_policy::pod_by_pod, sim_policy::gang_fifo,
                                       sim_policy::volcano_like, sim_policy::phalanx};

std::string violations_of(const sim_result& r) {
  std::string out;
  for (const auto& v : r.violations)
    out += v + "\n";
  return out;
}

sim_result run(const cluster_snapshot& cluster, const std::vector<sim_job>& jobs,
               sim_policy policy) {
  sim_config config;
  config.policy = policy;
  config.pod_start_delay = 1s;
  auto r = simulate(cluster, jobs, config);
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->violations.empty()) << violations_of(*r);
  return std::move(r).value();
}

// A driver (1 CPU, 1 s of its own work) that creates two executors (1 CPU, 10 s) when it runs.
sim_job spark_job(int index) {
  const std::string name = "spark-" + std::to_string(index);
  sim_job j;
  j.group = make_gang(name, 3).min_resources(res("cpu", "3")).obj().group;
  j.pods.push_back({make_pod(name + "-driver").group(name).role("driver").cpu("1").obj(), 1s,
                    std::nullopt, {}});
  for (int e = 0; e < 2; ++e)
    j.pods.push_back({make_pod(name + "-exec-" + std::to_string(e))
                          .group(name)
                          .role("executor")
                          .cpu("1")
                          .obj(),
                      10s, std::size_t{0}, {}});
  return j;
}

cluster_snapshot six_cpus() {
  cluster_snapshot c;
  for (int n = 1; n <= 3; ++n)
    c.add_node(make_node("node-" + std::to_string(n)).cpu("2").memory("8Gi"));
  return c;
}

struct expected_job {
  sim_job_phase phase;
  int32_t running, succeeded;
  std::optional<duration> started_at, completed_at;
};

void expect_jobs(const sim_result& r, const std::vector<expected_job>& want) {
  ASSERT_EQ(r.jobs.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& got = r.jobs[i];
    SCOPED_TRACE(got.name + " under " + std::string(to_string(r.policy)));
    EXPECT_EQ(got.phase, want[i].phase) << got.reason;
    EXPECT_EQ(got.running, want[i].running);
    EXPECT_EQ(got.succeeded, want[i].succeeded);
    EXPECT_EQ(got.started_at, want[i].started_at);
    EXPECT_EQ(got.completed_at, want[i].completed_at);
  }
}

TEST(Deadlock, SparkDriversPodByPodDeadlockAndGangsComplete) {
  std::vector<sim_job> jobs;
  for (int i = 1; i <= 6; ++i)
    jobs.push_back(spark_job(i));
  const auto cluster = six_cpus();

  std::vector<sim_result> results;
  for (auto policy : all_policies)
    results.push_back(run(cluster, jobs, policy));
  std::cout << render_job_table(results);

  // Pod by pod: six drivers take the six CPUs, twelve executors never fit, nothing finishes.
  const auto& pods = results[0];
  const expected_job stuck{sim_job_phase::deadlocked, 1, 0, std::nullopt, std::nullopt};
  expect_jobs(pods, std::vector<expected_job>(6, stuck));
  EXPECT_EQ(pods.summary.deadlocked, 6);
  EXPECT_EQ(pods.summary.completed, 0);
  EXPECT_EQ(pods.summary.makespan, 2s);  // Drivers start at 1 s, their own work ends at 2 s.
  EXPECT_FALSE(pods.summary.mean_jct);
  for (const auto& j : pods.jobs) {
    EXPECT_NE(j.reason.find("holds cpu: 1, pods: 1 on 1 pod, 1 of minMember 3 running; no event "
                            "is left to change it: pod " + j.name + "-exec-"),
              std::string::npos)
        << j.reason;
  }

  // As gangs, two at a time: placed at 0, 12 and 24 s; the driver starts 1 s after the bind, the
  // executors 1 s after it created them (2 s: the gang has 3 running), 10 s of work each.
  const std::vector<expected_job> two_at_a_time = {
      {sim_job_phase::completed, 0, 3, 2s, 12s},  {sim_job_phase::completed, 0, 3, 2s, 12s},
      {sim_job_phase::completed, 0, 3, 14s, 24s}, {sim_job_phase::completed, 0, 3, 14s, 24s},
      {sim_job_phase::completed, 0, 3, 26s, 36s}, {sim_job_phase::completed, 0, 3, 26s, 36s},
  };
  for (std::size_t k = 1; k < results.size(); ++k) {
    const auto& r = results[k];
    expect_jobs(r, two_at_a_time);
    EXPECT_EQ(r.summary.completed, 6);
    EXPECT_EQ(r.summary.deadlocked, 0);
    EXPECT_EQ(r.summary.makespan, 36s);
    EXPECT_EQ(r.summary.mean_jct, 24s);
    EXPECT_EQ(r.summary.p95_jct, 36s);
    EXPECT_EQ(r.summary.mean_queueing_delay, 14s);
    // Never more than two jobs (six pods) hold CPUs.
    for (const auto& s : r.utilization)
      EXPECT_LE(s.cpu_milli, 6000);
  }

  // The table the demo shows.
  const std::string table = render_job_table(results[0]);
  EXPECT_EQ(table.substr(0, table.find('\n', table.find('\n') + 1) + 1),
            "JOB       POLICY       PHASE        MIN   RUNNING   SUCCEEDED   STARTED AFTER\n"
            "spark-1   pod-by-pod   Deadlocked   3     1         0           -\n");
}

// Four workers of one GPU that wait for each other; job b arrives 1 s after a, and the pods of
// each job are created 2 s apart (a controller creating them one by one), so pod by pod they
// interleave: a-0, b-0, a-1, b-1.
sim_job tf_job(const std::string& name, duration arrival) {
  sim_job j;
  j.group = make_gang(name, 4).min_resources(res("nvidia.com/gpu", "4")).obj().group;
  for (int w = 0; w < 4; ++w)
    j.pods.push_back({make_pod(name + "-worker-" + std::to_string(w))
                          .group(name)
                          .role("worker")
                          .cpu("1")
                          .gpu(1)
                          .obj(),
                      60s, std::nullopt, duration(2s) * w});
  j.arrival = arrival;
  j.wait_for_gang = true;
  return j;
}

TEST(Deadlock, TensorFlowWorkersPodByPodHangAndGangsRunInTurn) {
  cluster_snapshot cluster;
  cluster.add_node(make_node("gpu-1").cpu("16").memory("64Gi").gpu(2));
  cluster.add_node(make_node("gpu-2").cpu("16").memory("64Gi").gpu(2));
  const std::vector<sim_job> jobs = {tf_job("tf-a", 0s), tf_job("tf-b", 1s)};

  std::vector<sim_result> results;
  for (auto policy : all_policies)
    results.push_back(run(cluster, jobs, policy));
  std::cout << render_job_table(results);

  // Pod by pod: 2 GPUs each, waiting for 2 workers that never fit.
  expect_jobs(results[0], {{sim_job_phase::deadlocked, 2, 0, std::nullopt, std::nullopt},
                           {sim_job_phase::deadlocked, 2, 0, std::nullopt, std::nullopt}});
  EXPECT_EQ(results[0].summary.deadlocked, 2);
  EXPECT_NE(results[0].jobs[0].reason.find(
                "holds cpu: 2, pods: 2, nvidia.com/gpu: 2 on 2 pods, 2 of minMember 4 running"),
            std::string::npos)
      << results[0].jobs[0].reason;
  // GPUs are held from the bind: 1, 2, 3, 4 from 0, 1, 2, 3 s until the last event (b-3
  // created) at 7 s: 22 GPU-seconds of 28.
  EXPECT_EQ(results[0].summary.makespan, 7s);
  EXPECT_EQ(results[0].summary.gpu_utilization_ppm, 1'000'000 * 22 / 28);

  // As gangs: tf-a reserves all four GPUs at 0 s; its last worker is created at 6 s and runs at
  // 7 s, so the gang starts at 7 s and ends at 67 s. tf-b's workers all exist by then; bound at
  // 67 s, running at 68 s, done at 128 s.
  for (std::size_t k = 1; k < results.size(); ++k) {
    const auto& r = results[k];
    expect_jobs(r, {{sim_job_phase::completed, 0, 4, 7s, 67s},
                    {sim_job_phase::completed, 0, 4, 68s, 128s}});
    EXPECT_EQ(r.jobs[1].time_to_start, 67s);
    EXPECT_EQ(r.summary.deadlocked, 0);
    for (const auto& s : r.utilization)
      EXPECT_LE(s.gpu, 4);
  }
}

} // namespace
} // namespace phalanx::scheduler
