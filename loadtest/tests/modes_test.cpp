// Short runs of the inproc and replay modes through the command line (the e2e suites run push,
// restart and the HTML render), and the command line's errors.

#include "loadtest/replay.hpp"
#include "loadtest/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

namespace phalanx::loadtest {
namespace {

using testing::number;
using testing::read_report;
using testing::run;
using testing::scratch_dir;
using testing::testdata;

TEST(LoadtestInproc, SmallRunSchedulesEveryGangAndKeepsTheInvariants) {
  scratch_dir dir;
  auto json = dir.path + "/inproc.json";
  ASSERT_EQ(run({"inproc", "--nodes", "50", "--podgroups", "200", "--gang-sizes", "1:40,2-16:60",
                 "--pod-cpu", "250m-1", "--gpu-gang-fraction", "0.02", "--work-dir", dir.path,
                 "--sample-interval", "20ms", "--json", json}),
            0);
  auto rep = read_report(json);
  EXPECT_EQ(rep["mode"].as_string(), "inproc");
  EXPECT_TRUE(rep["all_scheduled"].as_bool());
  EXPECT_TRUE(rep["invariants_ok"].as_bool())
      << boost::json::serialize(rep["invariant_violations"]);
  EXPECT_EQ(rep["gangs_running"].as_int64(), 200);
  EXPECT_GT(number(rep, "pods_per_second"), 0);
  EXPECT_GE(number(rep, "p99_gang_ms"), number(rep, "p50_gang_ms"));
  EXPECT_GT(number(rep, "loop_pods_per_second"), 0);
  EXPECT_EQ(rep["loop_failed_gangs"].as_int64(), 0);
  EXPECT_EQ(number(rep, "loop_placed_pods"), number(rep["workload"].as_object(), "pods"));
  // The backlog: the same gangs stored, then scheduled by a restarted runtime.
  auto& backlog = rep["backlog"].as_object();
  EXPECT_FALSE(backlog["timed_out"].as_bool());
  EXPECT_TRUE(backlog["all_scheduled"].as_bool());
  ASSERT_FALSE(backlog["series"].as_array().empty());
  EXPECT_EQ(backlog["series"].as_array().back().as_array()[2].as_int64(),
            rep["workload"].as_object()["pods"].as_int64())
      << "the last sample sees every pod running";
  EXPECT_TRUE(backlog["invariants_ok"].as_bool())
      << boost::json::serialize(backlog["invariant_violations"]);
  EXPECT_GT(number(backlog, "pods_per_second"), 0);
  EXPECT_GT(number(backlog, "ready_seconds"), 0);
  EXPECT_LT(number(backlog, "pods_scheduled_at_ready"), number(rep["workload"].as_object(), "pods"));
  EXPECT_GE(number(backlog, "p99_placed_ms"), number(backlog, "p50_placed_ms"));
  EXPECT_DOUBLE_EQ(number(rep, "backlog_pods_per_second"), number(backlog, "pods_per_second"));
  EXPECT_DOUBLE_EQ(number(rep, "actor_overhead_ratio"),
                   number(backlog, "pods_per_second") / number(rep, "loop_pods_per_second"));
  EXPECT_DOUBLE_EQ(number(rep, "end_to_end_ratio"),
                   number(rep, "pods_per_second") / number(rep, "loop_pods_per_second"));
  EXPECT_TRUE(rep["durable"].as_bool());
  EXPECT_EQ(rep["submission_failures"].as_int64(), 0);
  EXPECT_EQ(rep["queues"].as_array().size(), 3u);
  EXPECT_FALSE(rep["plots"].as_array().empty());
  // The temporary store is gone.
  std::size_t left = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path))
    ++left;
  EXPECT_EQ(left, 1u) << "only the report should remain in " << dir.path;
}

TEST(LoadtestInproc, PodGroupsThenPodsAlsoSchedule) {
  scratch_dir dir;
  auto json = dir.path + "/inproc.json";
  ASSERT_EQ(run({"inproc",     "--nodes",
                 "20",         "--podgroups",
                 "40",         "--gang-sizes",
                 "1-8:1",      "--submit",
                 "podgroups",  "--gpu-gang-fraction",
                 "0",          "--queues",
                 "a:1,b:3",    "--priorities",
                 "0:1",        "--skip-loop",
                 "--work-dir", dir.path,
                 "--json",     json}),
            0);
  auto rep = read_report(json);
  EXPECT_TRUE(rep["all_scheduled"].as_bool());
  EXPECT_TRUE(rep["invariants_ok"].as_bool());
  EXPECT_EQ(rep["parameters"].as_object()["submit"].as_string(), "podgroups");
  EXPECT_FALSE(rep.contains("loop_pods_per_second"));
  EXPECT_FALSE(rep.contains("actor_overhead_ratio"));
  EXPECT_TRUE(rep["backlog"].as_object()["invariants_ok"].as_bool());
}

// --config takes phalanxd's YAML knobs; a bad one is a usage error that names the key.
TEST(LoadtestInproc, TheRuntimeTakesAConfigFile) {
  scratch_dir dir;
  auto config = dir.path + "/phalanx.yaml";
  std::ofstream(config) << "scheduling:\n  maxPlanningPerQueue: 1\n  planner:\n    strategy: spread\n";
  auto json = dir.path + "/inproc.json";
  ASSERT_EQ(run({"inproc", "--nodes", "10", "--podgroups", "20", "--gang-sizes", "1-4:1",
                 "--skip-loop", "--skip-backlog", "--config", config, "--work-dir", dir.path,
                 "--json", json}),
            0);
  auto rep = read_report(json);
  EXPECT_TRUE(rep["all_scheduled"].as_bool());
  EXPECT_EQ(rep["parameters"].as_object()["config"].as_string(), config);
  EXPECT_FALSE(rep.contains("backlog"));

  auto bad = dir.path + "/bad.yaml";
  std::ofstream(bad) << "scheduling:\n  maxPlanningPerQueue: 0\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"inproc", "--config", bad}), 2);
  EXPECT_EQ(run({"inproc", "--config", dir.path + "/missing.yaml"}), 2);
  auto err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("scheduling.maxPlanningPerQueue"), std::string::npos) << err;
  EXPECT_NE(err.find("--config: cannot read " + dir.path + "/missing.yaml"), std::string::npos)
      << err;
}

TEST(LoadtestReplay, PodByPodDeadlocksAndGangPoliciesDoNotOnAPhillyExcerpt) {
  scratch_dir dir;
  auto json = dir.path + "/replay.json";
  ASSERT_EQ(run({"replay", "--trace", testdata("philly_excerpt.csv"), "--cluster-from-vc",
                 testdata("vc_nodes_excerpt.csv"), "--vc-scale", "0.5", "--pod-interval", "30s",
                 "--json", json}),
            0);
  auto rep = read_report(json);
  auto& policies = rep["policies"].as_object();
  auto& pods = policies["pod-by-pod"].as_object();
  auto& fifo = policies["gang-fifo"].as_object();
  auto& volcano = policies["volcano-like"].as_object();
  auto& phx = policies["phalanx"].as_object();
  EXPECT_GT(pods["deadlocked"].as_int64(), 0);
  EXPECT_EQ(fifo["deadlocked"].as_int64(), 0);
  EXPECT_EQ(volcano["deadlocked"].as_int64(), 0);
  EXPECT_EQ(phx["deadlocked"].as_int64(), 0);
  EXPECT_EQ(phx["completed"].as_int64(), 60);
  EXPECT_EQ(volcano["completed"].as_int64(), 60);
  EXPECT_EQ(fifo["completed"].as_int64(), 60);
  EXPECT_LT(pods["completed"].as_int64(), 60);
  EXPECT_EQ(volcano["reserved_gangs"].as_int64(), 0);
  for (auto* p : {&pods, &fifo, &volcano, &phx}) {
    EXPECT_EQ((*p)["invariant_violations"].as_int64(), 0);
    for (const char* key : {"mean_jct_s", "p95_jct_s", "mean_queueing_delay_s", "gpu_utilization",
                            "starved", "reserved_gangs"})
      EXPECT_TRUE(p->contains(key)) << key;
    // Per queue (VC): every job counted once.
    int64_t jobs = 0;
    for (const auto& [name, q] : (*p)["queues"].as_object()) {
      jobs += q.as_object().at("jobs").as_int64();
      EXPECT_TRUE(q.as_object().contains("p95_jct_s")) << name;
    }
    EXPECT_EQ(jobs, 60);
    auto& big = (*p)["big_jobs"].as_object();
    EXPECT_EQ(big["definition"].as_string(), "at least 8 GPUs requested in all");
    EXPECT_TRUE(big.contains("longest_wait_s"));
  }
  EXPECT_EQ(rep["cluster"].as_object()["nodes"].as_int64(), 12);
  EXPECT_EQ(rep["cluster"].as_object()["gpus"].as_int64(), 96);
  EXPECT_EQ(rep["parameters"].as_object()["partition"].as_string(), "separate");
  // The CDF plot has one line per policy.
  EXPECT_EQ(rep["plots"].as_array()[0].as_object()["lines"].as_array().size(), 4u);
  EXPECT_EQ(rep["tables"].as_array().size(), 3u);  // Per policy, per queue, per partition.
  // A row per VC, with its window and a useful utilization per policy.
  auto& parts = rep["tables"].as_array()[2].as_object();
  EXPECT_EQ(parts["rows"].as_array().size(), 2u);
  EXPECT_EQ(parts["columns"].as_array().size(), 3u + 4u);
  for (auto& p : {&pods, &fifo, &volcano, &phx})
    EXPECT_EQ((*p)["partitions"].as_object().size(), 2u);
}

// One VC of 5 nodes (40 GPUs) full of 1-GPU jobs of 1000 s; an 8-GPU job comes at 10 s. With
// --priority-gpus 8 it has priority 1000, and with --preemption it evicts the 8 pods of one node
// under volcano-like and phalanx (the gate admits it: 40 + 8 <= 1.2 x 40), wasting 8 x 10
// GPU-seconds; gang FIFO does not preempt.
TEST(LoadtestReplay, PreemptionOfBigJobsIsReportedPerPolicy) {
  scratch_dir dir;
  const auto trace = dir.path + "/trace.csv";
  const auto vcs = dir.path + "/vcs.csv";
  {
    std::ofstream out(trace);
    out << "job_id,submit_s,num_pods,gpu_per_pod,cpu_per_pod,mem_per_pod,duration_s,total_gpus,"
           "vc,timestamp\n";
    for (int i = 0; i < 40; ++i)
      out << "small-" << i << ",0,1,1,,,1000,1,vc1,2017-10-01 00:00:00\n";
    out << "big,10,1,8,,,100,8,vc1,2017-10-01 00:00:10\n";
    std::ofstream(vcs) << "vc,node num\nvc1,5\n";
  }
  auto replay = [&](std::vector<std::string> extra) {
    const auto json = dir.path + "/replay-" + std::to_string(extra.size()) + ".json";
    std::vector<std::string> args = {"replay", "--trace", trace, "--cluster-from-vc", vcs,
                                     "--policies", "gang-fifo,volcano-like,phalanx", "--json",
                                     json};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(run(args), 0);
    return read_report(json);
  };
  auto rep = replay({"--priority-gpus", "8", "--preemption"});
  auto& params = rep["parameters"].as_object();
  EXPECT_EQ(params["priority_gpus"].as_int64(), 8);
  EXPECT_TRUE(params["preemption"].as_bool());
  auto& policies = rep["policies"].as_object();
  auto& fifo = policies["gang-fifo"].as_object();
  EXPECT_EQ(fifo["evicted_pods"].as_int64(), 0);
  EXPECT_EQ(fifo["wasted_gpu_hours"].to_number<double>(), 0.0);
  for (const char* name : {"volcano-like", "phalanx"}) {
    auto& p = policies[name].as_object();
    EXPECT_EQ(p["completed"].as_int64(), 41) << name;
    EXPECT_EQ(p["invariant_violations"].as_int64(), 0) << name;
    EXPECT_EQ(p["preemptions"].as_int64(), 1) << name;
    EXPECT_EQ(p["evicted_pods"].as_int64(), 8) << name;
    EXPECT_EQ(p["evicted_jobs"].as_int64(), 8) << name;
    EXPECT_EQ(p["restarted_jobs"].as_int64(), 8) << name;
    EXPECT_DOUBLE_EQ(p["wasted_gpu_hours"].to_number<double>(), 80.0 / 3600) << name;
    EXPECT_DOUBLE_EQ(p["big_jobs"].as_object()["longest_wait_s"].to_number<double>(), 0) << name;
  }
  // Without preemption the big job, first in its queue, waits for the first ends (1000 s).
  auto off = replay({"--priority-gpus", "8"});
  for (const char* name : {"volcano-like", "phalanx"}) {
    auto& p = off["policies"].as_object()[name].as_object();
    EXPECT_EQ(p["evicted_pods"].as_int64(), 0) << name;
    EXPECT_DOUBLE_EQ(p["big_jobs"].as_object()["longest_wait_s"].to_number<double>(), 990) << name;
  }
}

// Two VCs pooled on 5 nodes of 8 GPUs (weights 3 and 2): vc1's five 8-GPU jobs of 1000 s fill
// every GPU; vc2's 8-GPU job comes at 10 s (the gate admits it: 40 + 8 <= 1.2 x 40). Deserved
// GPUs: vc2 8 (its demand), vc1 32. With --reclaim, vc2 evicts one pod of vc1 (40 -> 32, never
// below vc1's share), wasting 8 x 10 GPU-seconds, whether the VCs hang under the root or under a
// parent of their own; separate partitions refuse --reclaim.
TEST(LoadtestReplay, ReclaimAcrossPooledVcsIsReportedPerPolicyAndQueue) {
  scratch_dir dir;
  const auto trace = dir.path + "/trace.csv";
  const auto vcs = dir.path + "/vcs.csv";
  {
    std::ofstream out(trace);
    out << "job_id,submit_s,num_pods,gpu_per_pod,cpu_per_pod,mem_per_pod,duration_s,total_gpus,"
           "vc,timestamp\n";
    for (int i = 0; i < 5; ++i)
      out << "whole-" << i << ",0,1,8,,,1000,8,vc1,2017-10-01 00:00:00\n";
    out << "big,10,1,8,,,100,8,vc2,2017-10-01 00:00:10\n";
    std::ofstream(vcs) << "vc,node num\nvc1,3\nvc2,2\n";
  }
  int runs = 0;
  auto replay = [&](std::vector<std::string> extra) {
    const auto json = dir.path + "/replay-" + std::to_string(++runs) + ".json";
    std::vector<std::string> args = {"replay",     "--trace",    trace,
                                     "--cluster-from-vc", vcs,   "--partition",
                                     "pooled",     "--policies", "gang-fifo,volcano-like,phalanx",
                                     "--json",     json};
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(run(args), 0);
    return read_report(json);
  };
  for (const auto& tree : std::vector<std::vector<std::string>>{
           {}, {"--queue-parents", "vc1=org,vc2=org", "--queue-weights", "org=4"}}) {
    SCOPED_TRACE(tree.empty() ? "flat" : "under org");
    auto args = tree;
    args.push_back("--reclaim");
    auto rep = replay(args);
    auto& params = rep["parameters"].as_object();
    EXPECT_TRUE(params["reclaim"].as_bool());
    EXPECT_EQ(params["partition"].as_string(), "pooled");
    auto& queues = params["queues"].as_object();
    EXPECT_EQ(queues["vc1"].as_object()["weight"].as_int64(), 3);
    EXPECT_EQ(queues["vc1"].as_object()["parent"].as_string(), tree.empty() ? "root" : "org");
    if (!tree.empty()) {
      EXPECT_EQ(queues["org"].as_object()["weight"].as_int64(), 4);
      EXPECT_EQ(queues["org"].as_object()["parent"].as_string(), "root");
    }
    auto& policies = rep["policies"].as_object();
    EXPECT_EQ(policies["gang-fifo"].as_object()["reclaim_evicted_pods"].as_int64(), 0);
    for (const char* name : {"volcano-like", "phalanx"}) {
      auto& p = policies[name].as_object();
      EXPECT_EQ(p["completed"].as_int64(), 6) << name;
      EXPECT_EQ(p["invariant_violations"].as_int64(), 0) << name;
      EXPECT_EQ(p["preemptions"].as_int64(), 0) << name;
      EXPECT_EQ(p["reclaims"].as_int64(), 1) << name;
      EXPECT_EQ(p["evicted_pods"].as_int64(), 1) << name;
      EXPECT_EQ(p["reclaim_evicted_pods"].as_int64(), 1) << name;
      EXPECT_DOUBLE_EQ(p["reclaim_wasted_gpu_hours"].to_number<double>(), 80.0 / 3600) << name;
      EXPECT_DOUBLE_EQ(p["wasted_gpu_hours"].to_number<double>(), 80.0 / 3600) << name;
      auto& vc1 = p["queues"].as_object()["vc1"].as_object();
      EXPECT_EQ(vc1["reclaim_evicted_pods"].as_int64(), 1) << name;
      EXPECT_DOUBLE_EQ(vc1["reclaim_wasted_gpu_hours"].to_number<double>(), 80.0 / 3600) << name;
      EXPECT_DOUBLE_EQ(p["big_jobs"].as_object()["longest_wait_s"].to_number<double>(), 0) << name;
    }
    // The per-queue table shows the evictions beside the JCTs.
    auto& table = rep["tables"].as_array()[1].as_object();
    EXPECT_EQ(table["columns"].as_array().size(), 2u + 3 * 4);
  }
  // Without --reclaim the big job waits for the first ends (1000 s).
  auto off = replay({});
  for (const char* name : {"volcano-like", "phalanx"}) {
    auto& p = off["policies"].as_object()[name].as_object();
    EXPECT_EQ(p["reclaims"].as_int64(), 0) << name;
    EXPECT_DOUBLE_EQ(p["big_jobs"].as_object()["longest_wait_s"].to_number<double>(), 990) << name;
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"replay", "--trace", trace, "--cluster-from-vc", vcs, "--reclaim"}), 1);
  EXPECT_EQ(run({"replay", "--trace", trace, "--cluster-from-vc", vcs, "--partition", "pooled",
                 "--queue-parents", "vc9=org"}),
            1);
  EXPECT_EQ(run({"replay", "--trace", trace, "--cluster-from-vc", vcs, "--partition", "pooled",
                 "--queue-weights", "vc1=x"}),
            2);
  auto err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--reclaim: each VC is simulated on its own, with no other queue to reclaim "
                     "from (use --partition pooled)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("item 1 \"vc9=org\": no queue vc9 (neither a VC, a queue of the trace, nor "
                     "a parent)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--queue-weights: item 1 \"vc1=x\": the weight is not an integer"),
            std::string::npos)
      << err;
}

// The queues of a replay: VCs by node count, the trace's other queues and new parents at 1.
TEST(LoadtestReplay, ReplayQueuesPutVcsUnderParents) {
  std::vector<scheduler::sim_job> jobs(2);
  jobs[0].group.queue = "vc1";
  jobs[1].group.queue = "other";
  const std::map<std::string, int64_t> sizes = {{"vc1", 10}, {"vc2", 4}};
  const std::vector<std::pair<std::string, std::string>> parents = {
      {"vc1", "dept"}, {"vc2", "dept"}, {"dept", "org"}, {"other", "root"}};
  const std::vector<std::pair<std::string, int64_t>> weights = {{"org", 7}};
  auto queues = replay_queues(sizes, jobs, parents, weights);
  ASSERT_TRUE(queues.ok()) << queues.error().to_string();
  std::vector<std::tuple<std::string, int32_t, std::string>> got;
  for (const auto& q : *queues)
    got.emplace_back(q.name, q.weight, q.parent);
  EXPECT_EQ(got, (std::vector<std::tuple<std::string, int32_t, std::string>>{
                     {"vc1", 10, "dept"},
                     {"vc2", 4, "dept"},
                     {"other", 1, ""},
                     {"dept", 1, "org"},
                     {"org", 7, ""}}));
  const std::vector<std::pair<std::string, std::string>> twice = {{"vc1", "a"}, {"vc1", "b"}};
  auto bad = replay_queues(sizes, jobs, twice, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "item 2 \"vc1=b\": queue vc1 is given a parent twice");
  const std::vector<std::pair<std::string, int64_t>> zero = {{"vc2", 0}};
  auto bad_weight = replay_queues(sizes, jobs, {}, zero);
  ASSERT_FALSE(bad_weight.ok());
  EXPECT_EQ(bad_weight.error().message(),
            "item 1 \"vc2=0\": the weight must be between 1 and 65535");
}

TEST(LoadtestReplay, PriorityGpusRaisesOnlyBigJobs) {
  auto make = [](std::string name, int pods, int64_t gpus) {
    scheduler::sim_job j;
    j.group.meta.name = name;
    for (int i = 0; i < pods; ++i) {
      scheduler::sim_pod p;
      p.spec.requests.set(scheduler::gpu_resource, gpus);
      j.pods.push_back(std::move(p));
    }
    return j;
  };
  // 8 GPUs in all, as one pod or as a gang, are big; 4 are not.
  std::vector<scheduler::sim_job> jobs = {make("one", 1, 8), make("gang", 2, 4),
                                          make("small", 1, 4)};
  auto off = jobs;
  apply_priority_gpus(off, 0);
  for (const auto& j : off)
    EXPECT_EQ(j.group.priority, 0) << j.group.meta.name;
  apply_priority_gpus(jobs, 8);
  EXPECT_EQ(jobs[0].group.priority, priority_high);
  EXPECT_EQ(jobs[1].group.priority, priority_high);
  EXPECT_EQ(jobs[1].pods[1].spec.priority, priority_high);
  EXPECT_EQ(jobs[2].group.priority, 0);
  EXPECT_EQ(jobs[2].pods[0].spec.priority, 0);
}

TEST(LoadtestReplay, PolluxAndOpenbRunOnTheirClusters) {
  scratch_dir dir;
  ASSERT_EQ(run({"replay", "--trace", testdata("pollux_workload_excerpt.csv"), "--cluster",
                 testdata("pollux_cluster.yaml"), "--json", dir.path + "/pollux.json"}),
            0);
  auto pollux = read_report(dir.path + "/pollux.json");
  EXPECT_EQ(pollux["jobs"].as_int64(), 30);
  EXPECT_EQ(pollux["policies"].as_object()["phalanx"].as_object()["completed"].as_int64(), 30);
  ASSERT_EQ(run({"replay", "--trace", testdata("openb_pods_excerpt.csv"), "--cluster",
                 testdata("openb_nodes_excerpt.csv"), "--policies", "gang-fifo,phalanx", "--json",
                 dir.path + "/openb.json"}),
            0);
  auto openb = read_report(dir.path + "/openb.json");
  EXPECT_EQ(openb["cluster"].as_object()["nodes"].as_int64(), 20);
  EXPECT_EQ(openb["policies"].as_object().size(), 2u);
  EXPECT_EQ(openb["policies"].as_object()["phalanx"].as_object()["deadlocked"].as_int64(), 0);
}

TEST(LoadtestReplay, MergesPartitionsIntoOneUtilization) {
  // Two partitions: 2 GPUs used for 10 s in one, 4 GPUs for 5 s in the other; 8 GPUs in all.
  scheduler::sim_result a, b;
  a.utilization = {{scheduler::duration{0}, 0, 2}, {std::chrono::seconds(10), 0, 0}};
  a.summary.makespan = std::chrono::seconds(10);
  b.utilization = {{scheduler::duration{0}, 0, 4}, {std::chrono::seconds(5), 0, 0}};
  b.summary.makespan = std::chrono::seconds(5);
  scheduler::sim_job_result done;
  done.name = "done";
  done.queue = "vc-a";
  done.phase = scheduler::sim_job_phase::completed;
  done.completion_time = std::chrono::seconds(10);
  done.time_to_start = std::chrono::seconds(2);
  done.requests.set(scheduler::gpu_resource, 8);  // A big job: 8 GPUs.
  done.reserved_at = std::chrono::seconds(1);
  auto small = done;
  small.name = "small";
  small.requests.set(scheduler::gpu_resource, 1);
  small.completion_time = std::chrono::seconds(30);
  small.time_to_start = std::chrono::seconds(20);  // Longer, but not big.
  small.reserved_at.reset();
  small.evicted_pods = 2;  // Two pods of 1 GPU evicted after 30 min: 1 GPU-hour wasted.
  small.wasted_gpu_ms = 3'600'000;
  a.summary.preemptions = 1;
  a.summary.evicted_pods = 2;
  a.summary.evicted_jobs = 1;
  a.summary.wasted_gpu_ms = 3'600'000;
  b.summary.preemptions = 1;
  b.summary.evicted_pods = 1;
  b.summary.evicted_jobs = 1;
  b.summary.restarts = 1;
  b.summary.wasted_gpu_ms = 1'800'000;
  a.jobs = {done, small};
  scheduler::sim_job_result stuck;
  stuck.name = "stuck";
  stuck.queue = "vc-b";
  stuck.phase = scheduler::sim_job_phase::deadlocked;
  stuck.requests.set(scheduler::gpu_resource, 16);  // Big, never started.
  b.jobs = {stuck};
  scheduler::resources total;
  total.set(scheduler::gpu_resource, 8);
  auto m = merge_results(scheduler::sim_policy::phalanx,
                         {{"vc-a", &a, {}, total}, {"vc-b", &b, {}, total}}, total);
  EXPECT_EQ(m.completed, 2);
  EXPECT_EQ(m.deadlocked, 1);
  EXPECT_EQ(m.reserved, 1);
  // stuck never completed nor started: it counts with the 5 s to the end of its partition.
  EXPECT_DOUBLE_EQ(m.mean_jct_s, (10 + 30 + 5) / 3.0);
  EXPECT_EQ(m.jct_censored, 1);
  EXPECT_DOUBLE_EQ(m.mean_jct_completed_s, 20);
  EXPECT_DOUBLE_EQ(m.mean_queueing_s, (2 + 20 + 5) / 3.0);
  EXPECT_EQ(m.queueing_censored, 1);
  EXPECT_EQ(m.never_started, 1);
  EXPECT_DOUBLE_EQ(m.mean_queueing_started_s, 11);
  ASSERT_EQ(m.queues.size(), 2u);
  EXPECT_EQ(m.queues["vc-a"].jobs, 2);
  EXPECT_EQ(m.queues["vc-a"].completed, 2);
  EXPECT_DOUBLE_EQ(m.queues["vc-a"].mean_jct_s, 20);
  EXPECT_DOUBLE_EQ(m.queues["vc-a"].p95_jct_s, 30);
  EXPECT_EQ(m.queues["vc-b"].jobs, 1);
  EXPECT_EQ(m.queues["vc-b"].completed, 0);
  EXPECT_DOUBLE_EQ(m.queues["vc-b"].mean_jct_s, 5);
  EXPECT_EQ(m.queues["vc-b"].jct_censored, 1);
  EXPECT_EQ(m.queues["vc-a"].big_jobs, 1);  // done: 8 GPUs, waited 2 s.
  EXPECT_EQ(m.queues["vc-a"].big_jobs_waited, 1);
  EXPECT_DOUBLE_EQ(m.queues["vc-a"].big_mean_wait_s, 2);
  EXPECT_DOUBLE_EQ(m.queues["vc-a"].big_longest_wait_s, 2);
  EXPECT_EQ(m.queues["vc-b"].big_jobs, 1);  // stuck: never started.
  EXPECT_EQ(m.queues["vc-b"].big_jobs_waited, 0);
  EXPECT_EQ(m.queues["vc-a"].evicted_pods, 2);
  EXPECT_DOUBLE_EQ(m.queues["vc-a"].wasted_gpu_hours, 1);
  // Evictions summed over partitions.
  EXPECT_EQ(m.preemptions, 2);
  EXPECT_EQ(m.evicted_pods, 3);
  EXPECT_EQ(m.evicted_jobs, 2);
  EXPECT_EQ(m.restarts, 1);
  EXPECT_DOUBLE_EQ(m.wasted_gpu_hours, 1.5);
  EXPECT_EQ(m.big_jobs.jobs, 2);
  EXPECT_EQ(m.big_jobs.started, 1);
  EXPECT_DOUBLE_EQ(m.big_jobs.longest_wait_s, 2);
  EXPECT_EQ(m.big_jobs.longest_wait_job, "done");
  EXPECT_DOUBLE_EQ(m.makespan_s, 10);
  // Held: (2 * 10 + 4 * 5) GPU-seconds over 8 GPUs x 10 s.
  EXPECT_DOUBLE_EQ(m.gpu_held_fraction, 40.0 / 80.0);
}

// One partition of 8 GPUs. "ran" (4 GPUs, 100 s) arrives at 0 and completes; "stuck" (2 pods of
// 2 GPUs) arrives at 100 and deadlocks holding 2 GPUs to the end (1000 s); "late" (1 GPU,
// 400 s) arrives at 200. Jobs arrive over [0, 200]: the useful work in it is ran's 400
// GPU-seconds of 8 x 200; the deadlocked job's held GPUs are not work, and the figure does not
// depend on how long the run went on after the last arrival.
TEST(LoadtestReplay, UtilizationIsUsefulWorkOverTheArrivalWindow) {
  auto job = [](const char* name, int64_t arrival_s, int pods, int64_t gpus, int64_t run_s) {
    scheduler::sim_job j;
    j.group.meta.name = name;
    j.arrival = std::chrono::seconds(arrival_s);
    for (int i = 0; i < pods; ++i) {
      scheduler::sim_pod p;
      p.spec.requests.set(scheduler::gpu_resource, gpus);
      p.run_time = std::chrono::seconds(run_s);
      j.pods.push_back(std::move(p));
    }
    return j;
  };
  std::vector<scheduler::sim_job> jobs{job("ran", 0, 1, 4, 100), job("stuck", 100, 2, 2, 50),
                                       job("late", 200, 1, 1, 400)};
  scheduler::sim_result r;
  r.summary.makespan = std::chrono::seconds(1000);
  r.utilization = {{scheduler::duration{0}, 0, 4},
                   {std::chrono::seconds(100), 0, 2},
                   {std::chrono::seconds(200), 0, 3},
                   {std::chrono::seconds(600), 0, 2}};
  scheduler::sim_job_result ran, stuck, late;
  ran.name = "ran";
  ran.phase = scheduler::sim_job_phase::completed;
  ran.started_at = std::chrono::seconds(0);
  ran.time_to_start = std::chrono::seconds(0);
  ran.completed_at = std::chrono::seconds(100);
  ran.completion_time = std::chrono::seconds(100);
  stuck.name = "stuck";
  stuck.phase = scheduler::sim_job_phase::deadlocked;
  stuck.placed = 1;
  late.name = "late";
  late.phase = scheduler::sim_job_phase::completed;
  late.started_at = std::chrono::seconds(200);
  late.time_to_start = std::chrono::seconds(0);
  late.completed_at = std::chrono::seconds(600);
  late.completion_time = std::chrono::seconds(400);
  r.jobs = {ran, stuck, late};
  scheduler::resources gpus8;
  gpus8.set(scheduler::gpu_resource, 8);
  auto m = merge_results(scheduler::sim_policy::pod_by_pod, {{"vc", &r, jobs, gpus8}}, gpus8);
  EXPECT_DOUBLE_EQ(m.gpu_utilization, 400.0 / (8 * 200));
  EXPECT_DOUBLE_EQ(m.partitions["vc"].window_s, 200);
  EXPECT_DOUBLE_EQ(m.partitions["vc"].gpu_utilization, 0.25);
  // What was held over the makespan, the deadlock's 2 GPUs included, is reported apart.
  EXPECT_DOUBLE_EQ(m.gpu_held_fraction, (4 * 100 + 2 * 100 + 3 * 400 + 2 * 400) / 8000.0);
  // The deadlocked job: never started, in the figures at its lower bound (1000 - 100 s).
  EXPECT_EQ(m.never_started, 1);
  EXPECT_EQ(m.queueing_censored, 1);
  EXPECT_DOUBLE_EQ(m.mean_queueing_s, (0 + 900 + 0) / 3.0);
  EXPECT_DOUBLE_EQ(m.mean_jct_s, (100 + 900 + 400) / 3.0);
  EXPECT_EQ(m.jct_censored, 1);
}

TEST(LoadtestReplay, ParsesEveryPolicyOnce) {
  auto all = parse_policies("pod-by-pod,gang-fifo,volcano-like,phalanx");
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(*all, (std::vector<scheduler::sim_policy>{
                      scheduler::sim_policy::pod_by_pod, scheduler::sim_policy::gang_fifo,
                      scheduler::sim_policy::volcano_like, scheduler::sim_policy::phalanx}));
  auto twice = parse_policies("phalanx,phalanx");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().message(), "item 2 \"phalanx\": named twice");
  auto unknown = parse_policies("volcano");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(),
            "item 1 \"volcano\": unknown policy; known: pod-by-pod, gang-fifo, volcano-like, "
            "phalanx");
}

TEST(LoadtestCli, BadUsageExitsWithTwoAndNamesTheFlag) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"inproc", "--podgroups", "ten"}), 2);
  EXPECT_EQ(run({"inproc", "--gang-sizes", "0-4:1"}), 2);
  EXPECT_EQ(run({"replay", "--trace", "x.csv"}), 2);
  EXPECT_EQ(run({"replay", "--trace", "x.csv", "--nodes", "4", "--policies", "fifo"}), 2);
  EXPECT_EQ(run({"restart", "--pods", "10", "--podgroups", "20"}), 2);
  EXPECT_EQ(run({"teleport"}), 2);
  EXPECT_EQ(run({}), 2);
  auto err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("phalanx-loadtest inproc: --podgroups: \"ten\" is not an integer"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--gang-sizes: item 1 \"0-4:1\": sizes must satisfy"), std::string::npos)
      << err;
  EXPECT_NE(err.find("give exactly one of --cluster FILE, --cluster-from-vc FILE or --nodes N"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("--policies: item 1 \"fifo\": unknown policy"), std::string::npos) << err;
  EXPECT_NE(err.find("--pods: must be at least --podgroups"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown mode \"teleport\""), std::string::npos) << err;
}

// A workload that can never run is refused before anything starts, naming the gang and the
// resource (exit 2); one whose gangs must queue is a warning with the fraction asked.
TEST(LoadtestCli, AWorkloadThatCannotFitIsRefusedBeforeItStarts) {
  scratch_dir dir;
  // 5 GPU nodes of 8: 40 GPUs; 49 gangs of one 1-GPU pod ask 122% of them at once.
  const std::vector<std::string> gpus{"inproc", "--nodes", "10", "--gpu-node-fraction", "0.5",
                                      "--podgroups", "49", "--gang-sizes", "1:1",
                                      "--gpu-gang-fraction", "1", "--work-dir", dir.path};
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run(gpus), 2);
  // A gang of 12 pods of 2 cpu on two nodes of 4 cpu, which hold 4 of them.
  EXPECT_EQ(run({"inproc", "--nodes", "2", "--node-cpu", "4", "--gpu-node-fraction", "0",
                 "--gpu-gang-fraction", "0", "--podgroups", "1", "--gang-sizes", "12:1",
                 "--pod-cpu", "2", "--pod-duration", "1s", "--work-dir", dir.path}),
            2);
  auto err = ::testing::internal::GetCapturedStderr();
  auto out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(err.find("phalanx-loadtest inproc: the workload cannot fit its cluster:\n  the gangs "
                     "ask 122% of the cluster's nvidia.com/gpu (49 of 40) at once, and pods run "
                     "until the end (no --pod-duration)\n  the run waits for every gang to run "
                     "at once, which can never happen: ask less"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("  gang pg-000000 needs 11 worker pods at once; the nodes they may use "
                     "hold at most 4 of them, even empty"),
            std::string::npos)
      << err;
  EXPECT_EQ(out.find("inproc: generating"), std::string::npos) << "refused before it started";
  EXPECT_TRUE(std::filesystem::is_empty(dir.path));

  // Against --server, whose cluster may have more nodes, the same is a warning (and the run
  // then fails to connect).
  auto served = gpus;
  served[0] = "push";
  for (const char* extra : {"--server", "http://127.0.0.1:1"})
    served.push_back(extra);
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(served), 1);
  out = ::testing::internal::GetCapturedStdout();
  ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("push: warning: on the generated nodes alone: the gangs ask 122% of the "
                     "cluster's nvidia.com/gpu (49 of 40) at once"),
            std::string::npos)
      << out;

  // With completing pods the same demand queues: a warning, and the run completes.
  auto queued = gpus;
  for (const char* extra : {"--pod-duration", "200ms", "--skip-loop", "--skip-backlog", "--json",
                            "q.json"})
    queued.push_back(extra);
  queued.back() = dir.path + "/q.json";
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run(queued), 0);
  out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("inproc: warning: the gangs ask 122% of the cluster's nvidia.com/gpu (49 of "
                     "40) in all; they will queue for it"),
            std::string::npos)
      << out;
  auto rep = read_report(dir.path + "/q.json");
  EXPECT_EQ(rep["workload"].as_object()["fit_warnings"].as_array().size(), 1u);
  EXPECT_EQ(rep["outcome"].as_string(), "completed");
}

TEST(LoadtestCli, StallAfterMustOutlastThePods) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"inproc", "--pod-duration", "1m", "--stall-after", "30s"}), 2);
  auto err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("phalanx-loadtest inproc: --stall-after: 30s must be longer than "
                     "--pod-duration 1m0s (a gang's pods run that long without completing), or "
                     "0 to never stop early"),
            std::string::npos)
      << err;
}

// A missed target is reported, and with --fail-on-target it is exit code 3. Without
// --pod-interval pod-by-pod cannot deadlock on the excerpt, so its target is missed.
TEST(LoadtestCli, FailOnTargetTurnsAMissedTargetIntoExitThree) {
  scratch_dir dir;
  const std::vector<std::string> replay{"replay", "--trace", testdata("philly_excerpt.csv"),
                                        "--cluster-from-vc", testdata("vc_nodes_excerpt.csv"),
                                        "--vc-scale", "0.5", "--json", dir.path + "/r.json"};
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run(replay), 0);
  auto with_flag = replay;
  with_flag.push_back("--fail-on-target");
  EXPECT_EQ(run(with_flag), 3);
  ::testing::internal::GetCapturedStdout();
  auto err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("phalanx-loadtest replay: target missed: pod-by-pod shows the deadlocks "
                     "(policies.pod-by-pod.deadlocked > 0; value 0)"),
            std::string::npos)
      << err;
  auto rep = read_report(dir.path + "/r.json");
  EXPECT_EQ(rep["verdict"].as_object()["result"].as_string(), "targets missed");
  EXPECT_EQ(rep["verdict"].as_object()["targets_missed"].as_int64(), 1);
}

TEST(LoadtestCli, BadTraceExitsWithOneAndNamesTheLine) {
  scratch_dir dir;
  auto trace = dir.path + "/bad.csv";
  {
    std::ofstream out(trace);
    out << "name,time,application,num_replicas,batch_size\na-0,10,ncf,2,32\na-1,x,ncf,2,32\n";
  }
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(run({"replay", "--trace", trace, "--nodes", "2"}), 1);
  auto err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find(trace + ":3:2 (time): \"x\" is not an integer"), std::string::npos) << err;
}

TEST(LoadtestCli, HelpListsTheFlags) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(run({"push", "--help"}), 0);
  EXPECT_EQ(run({"replay", "--help"}), 0);
  auto out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("--server VALUE"), std::string::npos);
  EXPECT_NE(out.find("--cluster-from-vc VALUE"), std::string::npos);
  EXPECT_NE(out.find("--vc-scale X"), std::string::npos);
  EXPECT_NE(out.find("--priority-gpus N"), std::string::npos);
  EXPECT_NE(out.find("--preemption"), std::string::npos);
}

} // namespace
} // namespace phalanx::loadtest
