// The Volcano job controller of the standalone world (actors/registry_jobs.cpp) on the whole
// runtime under CAF's test coordinator: a job's lifecycle policies act on its pods' events as
// Volcano's job controller does (scheduler/job_lifecycle.hpp), the phase it reaches is persisted,
// and a restart between a RestartJob's two steps finishes it with no pod made twice.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "api/codec.hpp"
#include "scheduler/job.hpp"
#include "scheduler/job_plugins.hpp"
#include "scheduler/job_volumes.hpp"
#include "scheduler/tests/builders.hpp"

#include "scheduler/placeholders.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using namespace std::chrono_literals;

scheduler::job_task make_task(std::string name, int32_t replicas, const std::string& cpu) {
  scheduler::job_task t;
  t.name = std::move(name);
  t.replicas = replicas;
  t.pod_template = make_pod("template").cpu(cpu);
  return t;
}

api::job_object make_job(const std::string& name, std::vector<scheduler::job_task> tasks) {
  api::job_object o;
  o.job.meta.name = name;
  o.job.meta.namespace_name = "default";
  o.job.tasks = std::move(tasks);
  return o;
}

// A TensorFlow-shaped job as the examples' (one ps, two workers, minAvailable 3) with one
// job-level policy `event -> action`, and maxRetry `max_retry`. `worker_annotation` is set on
// the workers' template (the simulated kubelet's instructions).
api::job_object tf_job(const std::string& name, const std::string& event,
                       const std::string& action, int32_t max_retry,
                       std::pair<std::string, std::string> worker_annotation = {}) {
  auto worker = make_task("worker", 2, "1");
  if (!worker_annotation.first.empty())
    worker.pod_template.meta.annotations.set(worker_annotation.first, worker_annotation.second);
  auto o = make_job(name, {make_task("ps", 1, "1"), worker});
  o.job.max_retry = max_retry;
  o.job.policies.push_back({action, event, {}, {}, {}});
  return o;
}

// Gives every task of `job` a pod spec of one container `name` running `image` (what the job
// plugins write into: env, mounts, commands).
void give_container(api::job_object& job, const std::string& image,
                    const std::string& name = "main") {
  for (auto& t : job.job.tasks)
    t.pod_template.spec_json =
        R"({"containers":[{"image":")" + image + R"(","name":")" + name + R"("}]})";
}

scheduler::job_status status_of(runtime_harness& h, const std::string& job) {
  auto r = h.get(api::resource_kind::job, "default", job);
  runtime_harness::must_ok(r, "get job " + job);
  return std::get<api::job_object>(*r).status;
}

// The simulated kubelet fails running pod `pod` (namespace "default") now.
void fail_pod(runtime_harness& h, const std::string& pod) {
  runtime_harness::must_ok(
      h.act(api::resource_kind::pod, "default", pod, api::object_action::type::fail_pod),
      "fail " + pod);
}

std::string job_events(runtime_harness& h, const std::string& job) {
  std::string out;
  for (const auto& e : h.events(api::resource_kind::job, job))
    out += e.reason + ": " + e.message + "\n";
  return out;
}

bool has_job_event(runtime_harness& h, const std::string& job, const std::string& reason) {
  for (const auto& e : h.events(api::resource_kind::job, job))
    if (e.reason == reason)
      return true;
  return false;
}

// Job "tf" (`job`) starts its three pods; then pod `pod` fails, and the job's policy makes pods
// again: once retryCount is 1 and all three run, `before` and `after` hold its pods.
void fail_and_run_again(runtime_harness& h, const api::job_object& job, const std::string& pod,
                        pod_facts& before, pod_facts& after) {
  runtime_harness::must_ok(h.create(job), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  before = pods_of(h, "tf");
  fail_pod(h, pod);
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "tf").retry_count == 1 && all_running(h, "tf", 3); }, 5000ms,
      10ms))
      << scheduler::to_string(status_of(h, "tf").phase) << "\n" << job_events(h, "tf");
  after = pods_of(h, "tf");
}

// The examples' TensorFlow job says `PodEvicted: RestartJob`: a worker deleted restarts the
// whole job as a new incarnation (every pod made again, new uids), counted as one retry, and
// the job runs again.
TEST(JobController, AnEvictedPodRestartsTheJobAsItsPolicySays) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{deterministic_config(seed), two_job_nodes()};
    runtime_harness::must_ok(h.create(tf_job("tf", "PodEvicted", "RestartJob", 3)), "tf");
    ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
    auto before = pods_of(h, "tf");
    runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "tf-worker-1"),
                             "delete");
    ASSERT_TRUE(h.run_until(
        [&] {
          auto now = status_of(h, "tf");
          return now.retry_count == 1 && all_running(h, "tf", 3) && !now.conditions.empty() &&
                 now.conditions.back().status == scheduler::job_phase::running;
        },
        5000ms, 10ms))
        << scheduler::to_string(status_of(h, "tf").phase);
    auto after = pods_of(h, "tf");
    for (const auto& [name, p] : after)
      EXPECT_NE(p.first, before[name].first) << name << " was not made again";
    auto s = status_of(h, "tf");
    EXPECT_EQ(s.phase, scheduler::job_phase::running);
    EXPECT_EQ(s.version, 1);
    // Its history: created Pending, Running, Restarting, then Pending and Running again (each
    // phase once, at its latest entry), with their times.
    ASSERT_EQ(s.conditions.size(), 3u);
    EXPECT_EQ(s.conditions[0].status, scheduler::job_phase::restarting);
    EXPECT_EQ(s.conditions[1].status, scheduler::job_phase::pending);
    EXPECT_EQ(s.conditions[2].status, scheduler::job_phase::running);
    EXPECT_LE(s.conditions[0].last_transition_time, s.conditions[1].last_transition_time);
    EXPECT_LE(s.conditions[1].last_transition_time, s.conditions[2].last_transition_time);
    EXPECT_EQ(s.last_transition_time, s.conditions[2].last_transition_time);
    EXPECT_GT(s.conditions[0].last_transition_time, scheduler::timestamp{});
    EXPECT_TRUE(has_job_event(h, "tf", "RestartJob"));
    std::string events;
    for (const auto& e : h.events(api::resource_kind::job, "tf"))
      events += e.reason + ": " + e.message + "\n";
    EXPECT_NE(events.find("RestartJob: pod tf-worker-1 evicted: RestartJob (1 of 2 retries)"),
              std::string::npos)
        << events;
    EXPECT_INVARIANTS(h);
    // It is what was persisted: the same after a restart.
    h.restart();
    ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
    EXPECT_EQ(status_of(h, "tf").retry_count, 1);
    EXPECT_EQ(status_of(h, "tf").conditions, s.conditions);
    EXPECT_EQ(pods_of(h, "tf"), after);
  }
}

// A node lost under the job: Kubernetes' garbage collector deletes the pods of a deleted node,
// so the job sees them evicted, and the examples' `PodEvicted: RestartJob` restarts it on the
// nodes left (the issue found it Failed with retryCount 0).
TEST(JobController, ANodeLostUnderTheJobRestartsItElsewhere) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(tf_job("tf", "PodEvicted", "RestartJob", 3)), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  std::set<std::string> used;
  for (const auto& p : h.pods("default"))
    used.insert(p.pod.node_name.str());
  const auto lost = *used.begin();
  runtime_harness::must_ok(h.remove(api::resource_kind::node, "", lost), "delete node");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "tf").retry_count == 1 && all_running(h, "tf", 3); }, 5000ms,
      10ms))
      << scheduler::to_string(status_of(h, "tf").phase) << " retries "
      << status_of(h, "tf").retry_count;
  for (const auto& p : h.pods("default"))
    EXPECT_NE(p.pod.node_name.str(), lost) << p.pod.meta.name.str();
  EXPECT_INVARIANTS(h);
}

// A pod deleted with no policy for PodEvicted leaves the gang below its minimum while the other
// pods run: its PodGroup is Unknown, and the job's `Unknown: RestartJob` restarts it.
TEST(JobController, AGangLeftBelowItsMinimumRaisesUnknown) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(tf_job("tf", "Unknown", "RestartJob", 3)), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "tf-ps-0"), "delete");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "tf").retry_count == 1 && all_running(h, "tf", 3); }, 5000ms,
      10ms));
  EXPECT_INVARIANTS(h);
}

// A policy with a timeout: `PodPending: RestartJob` after 2 s. A job whose pods cannot be
// placed (its gang needs more than the cluster has free) restarts every 2 s until maxRetry is
// used up; a job placed at once is never restarted (its pods did not stay pending).
TEST(JobController, APodPendingPastItsTimeoutActsAndOnePlacedInTimeDoesNot) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  // A holder takes 14 of the 16 cpu, so the 3-pod job waits.
  auto holder = tf_job("holder", "PodFailed", "RestartJob", 3);
  holder.job.tasks[0].pod_template = make_pod("template").cpu("6");
  holder.job.tasks[1].pod_template = make_pod("template").cpu("4");
  runtime_harness::must_ok(h.create(holder), "holder");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "holder", 3); }, 5000ms, 10ms));
  auto waits = tf_job("waits", "PodPending", "RestartJob", 3);
  waits.job.policies[0].timeout = std::chrono::seconds(2);
  runtime_harness::must_ok(h.create(waits), "waits");
  h.pass(1500ms);
  EXPECT_EQ(status_of(h, "waits").retry_count, 0);  // Not before the timeout.
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "waits").phase == scheduler::job_phase::failed; }, 20000ms,
      100ms))
      << scheduler::to_string(status_of(h, "waits").phase) << " retries "
      << status_of(h, "waits").retry_count;
  EXPECT_EQ(status_of(h, "waits").retry_count, 3);

  auto placed = tf_job("placed", "PodPending", "RestartJob", 3);
  placed.job.policies[0].timeout = std::chrono::seconds(2);
  runtime_harness::must_ok(h.remove(api::resource_kind::job, "default", "holder"), "holder");
  runtime_harness::must_ok(h.create(placed), "placed");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "placed", 3); }, 2000ms, 10ms));
  h.pass(5000ms);
  EXPECT_EQ(status_of(h, "placed").retry_count, 0);
  EXPECT_INVARIANTS(h);
}

// Without a policy for the event the job only syncs, as Volcano's syncJob does: the deleted pod
// is made again under its name with a new uid, and nothing else changes (no retry, the other
// pods untouched). The examples' MPI job has no PodEvicted policy: the issue found it Pending for
// ever after its pods were deleted.
TEST(JobController, AnEventNoPolicyNamesSyncsTheJobMakingTheDeletedPodAgain) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(tf_job("tf", "PodFailed", "RestartJob", 3)), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  auto before = pods_of(h, "tf");
  // A graceful delete: the pod terminates (at once: it declares no stop time), goes, and is made
  // again.
  auto made_again = [&](const auto& was) {
    return all_running(h, "tf", 3) && pods_of(h, "tf")["tf-worker-1"].first !=
                                          was.at("tf-worker-1").first;
  };
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "tf-worker-1"), "delete");
  ASSERT_TRUE(h.run_until([&] { return made_again(before); }, 5000ms, 10ms));
  auto after = pods_of(h, "tf");
  EXPECT_NE(after["tf-worker-1"].first, before["tf-worker-1"].first) << "made again: a new uid";
  EXPECT_EQ(after["tf-ps-0"], before["tf-ps-0"]);
  EXPECT_EQ(after["tf-worker-0"], before["tf-worker-0"]);
  auto s = status_of(h, "tf");
  EXPECT_EQ(s.retry_count, 0);
  EXPECT_EQ(s.version, 0);
  EXPECT_EQ(s.phase, scheduler::job_phase::running);
  EXPECT_TRUE(has_job_event(h, "tf", "SyncJob"));
  EXPECT_FALSE(has_job_event(h, "tf", "RestartJob"));
  auto made = h.get(api::resource_kind::pod, "default", "tf-worker-1");
  runtime_harness::must_ok(made, "get tf-worker-1");
  const auto& pod = std::get<api::pod_object>(*made).pod;
  EXPECT_EQ(pod.meta.annotations.find(scheduler::task_index_key).value_or(""), "1");
  EXPECT_EQ(pod.meta.labels.find(scheduler::task_spec_key).value_or(""), "worker");
  EXPECT_EQ(pod.role.str(), "worker");
  EXPECT_INVARIANTS(h);

  // The pod made again is a record over a key of the job's expansion: it, not the expansion's
  // pod, is there after a restart; deleted again, it is made again again; and a deletion of it
  // stays a deletion across a restart (its tombstone hides the expansion's pod).
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "tf"), after);
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "tf-worker-1"), "again");
  ASSERT_TRUE(h.run_until([&] { return made_again(after); }, 5000ms, 10ms));
  auto third = pods_of(h, "tf");
  EXPECT_NE(third["tf-worker-1"].first, after["tf-worker-1"].first);
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "tf"), third);
  EXPECT_EQ(status_of(h, "tf").retry_count, 0);
  EXPECT_INVARIANTS(h);
  // Deleting the job takes every key of it: created again under its name, it starts afresh.
  runtime_harness::must_ok(h.remove(api::resource_kind::job, "default", "tf"), "delete job");
  ASSERT_TRUE(h.run_until([&] { return pods_of(h, "tf").empty(); }, 5000ms, 10ms));
  runtime_harness::must_ok(h.create(tf_job("tf", "PodFailed", "RestartJob", 3)), "tf again");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  auto fresh = pods_of(h, "tf");
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "tf"), fresh);
  EXPECT_INVARIANTS(h);
}

// A pod that succeeded, deleted while its job goes on, is PodEvicted as in Volcano: the TF
// job's `PodEvicted: RestartJob` restarts it. Deleted once the job ended by its pods, it is a
// clean-up: nothing restarts.
TEST(JobController, AFinishedPodDeletedActsOnlyWhileItsJobGoesOn) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("tf", "PodEvicted", "RestartJob", 3, {std::string(sim_duration_key), "1s"});
  // The ps runs on (a pod without a declared end would follow the workers' end).
  job.job.tasks[0].pod_template.meta.annotations.set(std::string(sim_duration_key), "1h");
  runtime_harness::must_ok(h.create(job), "tf");
  ASSERT_TRUE(h.run_until(
      [&] {
        auto pods = pods_of(h, "tf");
        return pods.size() == 3 &&
               pods["tf-worker-0"].second == scheduler::pod_phase::succeeded &&
               pods["tf-ps-0"].second == scheduler::pod_phase::running;
      },
      5000ms, 10ms));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "tf-worker-0"), "del");
  ASSERT_TRUE(h.run_until([&] { return status_of(h, "tf").retry_count == 1; }, 5000ms, 10ms))
      << job_events(h, "tf");
  EXPECT_TRUE(has_job_event(h, "tf", "RestartJob"));

  // Every pod of this one ends: the job ended by its pods, and its pods' clean-up acts on nothing.
  auto done = tf_job("done", "PodEvicted", "RestartJob", 3);
  for (auto& t : done.job.tasks)
    t.pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  runtime_harness::must_ok(h.create(done), "done");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "done").phase == scheduler::job_phase::completed; }, 5000ms,
      10ms));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "done-worker-0"), "del");
  h.pass(1000ms);
  EXPECT_EQ(status_of(h, "done").retry_count, 0);
  EXPECT_EQ(status_of(h, "done").phase, scheduler::job_phase::completed);
  EXPECT_EQ(pods_of(h, "done").size(), 2u);
  EXPECT_INVARIANTS(h);
}

// Several pods of a job deleted at once (a node lost under it, with no policy): every one is
// made again, once, although their events come while the first sync is under way.
TEST(JobController, PodsLostTogetherAreAllMadeAgainOnce) {
  runtime_harness h{deterministic_config(1), {make_node("n-0").cpu("3").memory("32Gi"),
                                              make_node("n-1").cpu("3").memory("32Gi"),
                                              make_node("n-2").cpu("3").memory("32Gi")}};
  auto job = tf_job("wide", "PodFailed", "RestartJob", 3);
  job.job.tasks[1].replicas = 4;
  runtime_harness::must_ok(h.create(job), "wide");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "wide", 5); }, 5000ms, 10ms));
  std::map<std::string, int> per_node;
  for (const auto& p : h.pods("default"))
    ++per_node[p.pod.node_name.str()];
  auto busiest = std::max_element(per_node.begin(), per_node.end(), [](auto& a, auto& b) {
                   return a.second < b.second;
                 })->first;
  ASSERT_GE(per_node[busiest], 2);
  runtime_harness::must_ok(h.remove(api::resource_kind::node, "", busiest), "delete node");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "wide", 5); }, 5000ms, 10ms))
      << pods_of(h, "wide").size();
  h.pass(1000ms);
  EXPECT_EQ(pods_of(h, "wide").size(), 5u);
  for (const auto& p : h.pods("default"))
    EXPECT_NE(p.pod.node_name.str(), busiest);
  EXPECT_EQ(status_of(h, "wide").retry_count, 0);
  EXPECT_INVARIANTS(h);
}

// RestartTask: a failed worker restarts its task (every worker made again, the ps untouched),
// counted as a retry; RestartPod: only the failed pod is made again. Both keep the job's
// version (no whole-job kill), and the last retry ends the job Failed with no pod left.
TEST(JobController, RestartTaskAndRestartPodMakeTheirTargetsAgain) {
  for (const std::string action : {"RestartTask", "RestartPod"}) {
    SCOPED_TRACE(action);
    runtime_harness h{deterministic_config(1), two_job_nodes()};
    auto job = tf_job("tf", "PodEvicted", "RestartJob", 3);
    job.job.tasks[1].policies.push_back({action, "PodFailed", {}, {}, {}});
    pod_facts before, after;
    ASSERT_NO_FATAL_FAILURE(fail_and_run_again(h, job, "tf-worker-1", before, after));
    EXPECT_EQ(after["tf-ps-0"], before["tf-ps-0"]);
    EXPECT_NE(after["tf-worker-1"].first, before["tf-worker-1"].first);
    if (action == "RestartTask")
      EXPECT_NE(after["tf-worker-0"].first, before["tf-worker-0"].first);
    else
      EXPECT_EQ(after["tf-worker-0"], before["tf-worker-0"]);
    auto s = status_of(h, "tf");
    EXPECT_EQ(s.version, 0);
    EXPECT_EQ(s.phase, scheduler::job_phase::running);
    EXPECT_TRUE(has_job_event(h, "tf", action));
    EXPECT_INVARIANTS(h);
    h.restart();
    ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
    EXPECT_EQ(pods_of(h, "tf"), after);

    // Two more failures use up maxRetry 3: Failed, the ps deleted, the last failed pod kept.
    for (int round = 2; round <= 3; ++round) {
      fail_pod(h, "tf-worker-1");
      ASSERT_TRUE(h.run_until([&] { return status_of(h, "tf").retry_count == round; }, 5000ms,
                              10ms));
      ASSERT_TRUE(h.run_until(
          [&] {
            return round == 3 ? status_of(h, "tf").phase == scheduler::job_phase::failed
                              : all_running(h, "tf", 3);
          },
          5000ms, 10ms))
          << scheduler::to_string(status_of(h, "tf").phase);
    }
    // The targeted kill took the failed pod (Volcano's killTarget retains nothing), and the
    // Failed job's pods that still ran went after it.
    h.pass(1000ms);
    EXPECT_TRUE(pods_of(h, "tf").empty()) << pods_of(h, "tf").begin()->first;
    EXPECT_EQ(status_of(h, "tf").phase, scheduler::job_phase::failed);
    EXPECT_EQ(status_of(h, "tf").retry_count, 3);
    EXPECT_INVARIANTS(h);
  }
}

// A task's policy comes before the job's for the same event (Volcano's applyPolicies): the job
// says `PodFailed: AbortJob`, its worker task `PodFailed: RestartTask`. A failed worker restarts
// the worker task and the job runs on; a failed ps, whose task names no policy, aborts the job.
TEST(JobController, ATasksPolicyComesBeforeTheJobsForTheSameEvent) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("tf", "PodFailed", "AbortJob", 3);
  job.job.tasks[1].policies.push_back({"RestartTask", "PodFailed", {}, {}, {}});
  pod_facts before, after;
  ASSERT_NO_FATAL_FAILURE(fail_and_run_again(h, job, "tf-worker-0", before, after));
  EXPECT_EQ(after["tf-ps-0"], before["tf-ps-0"]);
  EXPECT_NE(after["tf-worker-0"].first, before["tf-worker-0"].first);
  EXPECT_NE(after["tf-worker-1"].first, before["tf-worker-1"].first);
  EXPECT_TRUE(has_job_event(h, "tf", "RestartTask")) << job_events(h, "tf");
  EXPECT_FALSE(has_job_event(h, "tf", "AbortJob")) << job_events(h, "tf");

  fail_pod(h, "tf-ps-0");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "tf").phase == scheduler::job_phase::aborted; }, 5000ms, 10ms))
      << scheduler::to_string(status_of(h, "tf").phase) << "\n" << job_events(h, "tf");
  EXPECT_TRUE(has_job_event(h, "tf", "AbortJob")) << job_events(h, "tf");
  EXPECT_EQ(status_of(h, "tf").retry_count, 1);
  EXPECT_INVARIANTS(h);
}

// `"*"` (Volcano's AnyEvent) matches every event a policy may name: a failed pod terminates one
// job, a deleted pod (PodEvicted) another. Their pods' creation and start are no such event:
// both run first.
TEST(JobController, AnAnyEventPolicyActsOnAFailedPodAndOnADeletedOne) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  for (const std::string name : {"fails", "evicted"})
    runtime_harness::must_ok(h.create(tf_job(name, "*", "TerminateJob", 3)), name);
  ASSERT_TRUE(h.run_until(
      [&] { return all_running(h, "fails", 3) && all_running(h, "evicted", 3); }, 5000ms, 10ms));
  h.pass(500ms);
  EXPECT_EQ(status_of(h, "fails").phase, scheduler::job_phase::running);
  fail_pod(h, "fails-worker-0");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "evicted-ps-0"),
                           "delete");
  for (const std::string name : {"fails", "evicted"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(h.run_until(
        [&] { return status_of(h, name).phase == scheduler::job_phase::terminated; }, 5000ms,
        10ms))
        << scheduler::to_string(status_of(h, name).phase) << "\n" << job_events(h, name);
    EXPECT_TRUE(has_job_event(h, name, "TerminateJob")) << job_events(h, name);
    // Each whole-job kill wrote runningDuration: the last transition less the creation.
    auto got = h.get(api::resource_kind::job, "default", name);
    runtime_harness::must_ok(got, "get job " + name);
    const auto& o = std::get<api::job_object>(*got);
    ASSERT_TRUE(o.status.running_duration);
    EXPECT_EQ(*o.status.running_duration,
              o.status.last_transition_time - o.job.meta.creation_time);
  }
  auto failed = pods_of(h, "fails");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed.begin()->first, "fails-worker-0");
  EXPECT_TRUE(pods_of(h, "evicted").empty());
  EXPECT_INVARIANTS(h);
}

// An exitCode policy (Volcano's `exitCode: 137 -> RestartJob`) acts on a failed pod's exit code,
// which the simulated kubelet gives from sim.phalanx.io/exit-code (default 1) and the pod shows
// in its containerStatuses; a pod failing with another code is left to the other policies.
TEST(JobController, AnExitCodePolicyActsOnThePodsExitCodeOnly) {
  for (const std::string code : {"137", "3"}) {
    SCOPED_TRACE(code);
    runtime_harness h{deterministic_config(2), two_job_nodes()};
    auto job = tf_job("tf", "PodEvicted", "RestartJob", 3, {"sim.phalanx.io/exit-code", code});
    job.job.policies.push_back({"RestartJob", {}, {}, 137, {}});
    runtime_harness::must_ok(h.create(job), "tf");
    ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
    auto before = pods_of(h, "tf");
    fail_pod(h, "tf-worker-1");
    if (code == "137") {
      ASSERT_TRUE(h.run_until(
          [&] { return status_of(h, "tf").retry_count == 1 && all_running(h, "tf", 3); },
          5000ms, 10ms))
          << scheduler::to_string(status_of(h, "tf").phase) << "\n" << job_events(h, "tf");
      EXPECT_NE(pods_of(h, "tf")["tf-ps-0"].first, before["tf-ps-0"].first);  // A new incarnation.
      EXPECT_NE(job_events(h, "tf").find("failed with exit code 137"), std::string::npos)
          << job_events(h, "tf");
    } else {
      // No policy takes a PodFailed with code 3: the failed pod stays, nothing restarts.
      h.pass(2000ms);
      auto s = status_of(h, "tf");
      EXPECT_EQ(s.retry_count, 0);
      EXPECT_EQ(s.phase, scheduler::job_phase::running)
          << scheduler::to_string(s.phase) << " pending " << s.pending << " running " << s.running
          << " failed " << s.failed << "\n"
          << job_events(h, "tf");
      auto failed = h.pod("tf-worker-1");
      EXPECT_EQ(failed.pod.phase, scheduler::pod_phase::failed);
      ASSERT_TRUE(failed.exit_code);
      EXPECT_EQ(*failed.exit_code, 3);
      // As kubectl reads it: the container's terminated state.
      auto v = api::encode_object(api::object{failed});
      const auto& terminated =
          v.at("status").at("containerStatuses").at(0).at("state").at("terminated");
      EXPECT_EQ(terminated.at("exitCode"), 3) << v;
      EXPECT_EQ(terminated.at("reason"), "Error") << v;
      // A running pod has no exit code; the same after a restart of phalanxd.
      EXPECT_FALSE(h.pod("tf-worker-0").exit_code);
      h.restart();
      ASSERT_TRUE(h.run_until([&] { return h.pod("tf-worker-1").exit_code.has_value(); },
                              5000ms, 10ms));
      EXPECT_EQ(*h.pod("tf-worker-1").exit_code, 3);
    }
    EXPECT_INVARIANTS(h);
  }
}

// A worker that always fails (PodFailed: RestartJob) restarts the job until maxRetry is used up;
// the last retry ends the job Failed: its running pods deleted, the pod that failed last kept.
TEST(JobController, FailuresPastMaxRetryEndTheJobFailedKeepingTheLastFailedPod) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(
      h.create(tf_job("mnist", "PodFailed", "RestartJob", 3,
                      {std::string(sim_fail_after_key), "1s"})),
      "mnist");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "mnist").phase == scheduler::job_phase::failed; }, 20000ms,
      50ms))
      << scheduler::to_string(status_of(h, "mnist").phase);
  auto s = status_of(h, "mnist");
  EXPECT_EQ(s.retry_count, 3);
  auto pods = pods_of(h, "mnist");
  ASSERT_FALSE(pods.empty());
  for (const auto& [name, p] : pods)
    EXPECT_EQ(p.second, scheduler::pod_phase::failed) << name << " should have been deleted";
  // It stays Failed: more events change nothing.
  h.pass(3000ms);
  EXPECT_EQ(status_of(h, "mnist").phase, scheduler::job_phase::failed);
  EXPECT_EQ(status_of(h, "mnist").retry_count, 3);
  EXPECT_INVARIANTS(h);
}

// TerminateJob and AbortJob: the unfinished pods go; Terminated stays, Aborted is the suspended
// job that `phalanxctl job resume` brings back.
TEST(JobController, TerminateAndAbortKillThePodsAndHoldTheirPhase) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(tf_job("term", "PodEvicted", "TerminateJob", 3)), "term");
  runtime_harness::must_ok(h.create(tf_job("abrt", "PodEvicted", "AbortJob", 3)), "abrt");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "term", 3) && all_running(h, "abrt", 3); },
                          5000ms, 10ms));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "term-ps-0"), "delete");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "abrt-ps-0"), "delete");
  h.pass(1000ms);
  EXPECT_EQ(status_of(h, "term").phase, scheduler::job_phase::terminated);
  EXPECT_TRUE(pods_of(h, "term").empty());
  EXPECT_EQ(status_of(h, "abrt").phase, scheduler::job_phase::aborted);
  EXPECT_TRUE(pods_of(h, "abrt").empty());
  runtime_harness::must_ok(h.act(api::resource_kind::job, "default", "abrt",
                                 api::object_action::type::resume),
                           "resume");
  EXPECT_TRUE(h.run_until([&] { return all_running(h, "abrt", 3); }, 5000ms, 10ms));
  h.restart();
  EXPECT_EQ(status_of(h, "term").phase, scheduler::job_phase::terminated);
  EXPECT_INVARIANTS(h);
}

// A resume is Volcano's ResumeJob: one retry more, and the restart check of the next sync, so
// the resume that uses up maxRetry fails the job instead of making its pods. Each suspension
// is a whole-job kill, which writes runningDuration.
TEST(JobController, AResumeThatReachesMaxRetryFailsTheJob) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(tf_job("sus", "PodEvicted", "RestartJob", 2)), "sus");
  auto act = [&](api::object_action::type what) {
    runtime_harness::must_ok(h.act(api::resource_kind::job, "default", "sus", what), "act");
    h.pass(500ms);
  };
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "sus", 3); }, 5000ms, 10ms));
  EXPECT_FALSE(status_of(h, "sus").running_duration);
  act(api::object_action::type::suspend);
  auto s = status_of(h, "sus");
  ASSERT_EQ(s.phase, scheduler::job_phase::aborted);
  ASSERT_TRUE(s.running_duration);
  EXPECT_GT(*s.running_duration, scheduler::duration::zero());
  EXPECT_EQ(s.version, 1);  // Each whole-job kill raises it: the suspension's, the resume's.
  act(api::object_action::type::resume);
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "sus", 3); }, 5000ms, 10ms));
  EXPECT_EQ(status_of(h, "sus").retry_count, 1);
  EXPECT_EQ(status_of(h, "sus").version, 2);
  act(api::object_action::type::suspend);
  act(api::object_action::type::resume);
  s = status_of(h, "sus");
  EXPECT_EQ(s.phase, scheduler::job_phase::failed);
  EXPECT_EQ(s.retry_count, 2);
  EXPECT_EQ(s.reason, "MaxRetryReached");
  EXPECT_TRUE(pods_of(h, "sus").empty());
  // A finished job has nothing to suspend (Volcano's AbortJob leaves its phase).
  auto refused =
      h.act(api::resource_kind::job, "default", "sus", api::object_action::type::suspend);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(),
            "jobs \"sus\" is Failed; only a job that has not finished can be suspended");
  h.restart();
  EXPECT_EQ(status_of(h, "sus").phase, scheduler::job_phase::failed);
  EXPECT_TRUE(pods_of(h, "sus").empty());
  EXPECT_INVARIANTS(h);
}

// The examples' MPI job: its master task says `TaskCompleted: CompleteJob`. Once the master
// succeeded the workers (which would run for ever) are killed and the job is Completed.
TEST(JobController, ACompletedTaskCompletesTheJobAsItsPolicySays) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto master = make_task("mpimaster", 1, "1");
  master.pod_template.meta.annotations.set(std::string(sim_duration_key), "2s");
  master.policies.push_back({"CompleteJob", "TaskCompleted", {}, {}, {}});
  auto o = make_job("mpi", {master, make_task("mpiworker", 2, "1")});
  runtime_harness::must_ok(h.create(o), "mpi");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "mpi").phase == scheduler::job_phase::completed; }, 10000ms,
      50ms))
      << scheduler::to_string(status_of(h, "mpi").phase);
  auto pods = pods_of(h, "mpi");
  ASSERT_EQ(pods.size(), 1u);  // The workers were killed; the master, finished, stays.
  EXPECT_EQ(pods.begin()->first, "mpi-mpimaster-0");
  EXPECT_EQ(pods.begin()->second.second, scheduler::pod_phase::succeeded);
  EXPECT_TRUE(has_job_event(h, "mpi", "CompleteJob"));
  h.restart();
  EXPECT_EQ(status_of(h, "mpi").phase, scheduler::job_phase::completed);
  EXPECT_INVARIANTS(h);
}

// minSuccess: a job completes once that many of its pods succeeded, whatever still runs (which
// is killed), as Volcano's runningState sync says (MinSuccessMet).
TEST(JobController, AJobCompletesOnceMinSuccessPodsSucceeded) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto quick = make_task("quick", 2, "1");
  quick.pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  auto slow = make_task("slow", 1, "1");
  slow.pod_template.meta.annotations.set(std::string(sim_duration_key), "1h");
  auto o = make_job("ms", {quick, slow});
  o.job.min_success = 2;
  runtime_harness::must_ok(h.create(o), "ms");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "ms").phase == scheduler::job_phase::completed; }, 10000ms,
      50ms))
      << scheduler::to_string(status_of(h, "ms").phase) << "\n" << job_events(h, "ms");
  EXPECT_NE(job_events(h, "ms").find("minSuccess 2"), std::string::npos) << job_events(h, "ms");
  ASSERT_TRUE(h.run_until([&] { return pods_of(h, "ms").count("ms-slow-0") == 0; }, 5000ms, 50ms))
      << "the pod that still ran was not killed";
  EXPECT_INVARIANTS(h);
}

// minSuccess missed: once every pod finished with fewer succeeded than minSuccess, the job is
// Failed, although its minAvailable succeeded (Volcano's runningState sync). Here one of three
// fails and two succeed, against minAvailable 2 and minSuccess 3 (a job minAvailable below the
// tasks' sum, so the tasks' own minimums are not what decides, as in Volcano).
TEST(JobController, AJobWhosePodsAllEndedBelowMinSuccessFails) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto quick = make_task("quick", 3, "1");
  quick.pod_template.meta.annotations.set(std::string(sim_duration_key), "2s");
  auto o = make_job("ms", {quick});
  o.job.min_available = 2;
  o.job.min_success = 3;
  runtime_harness::must_ok(h.create(o), "ms");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "ms", 3); }, 5000ms, 10ms));
  fail_pod(h, "ms-quick-0");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "ms").phase == scheduler::job_phase::failed; }, 10000ms, 50ms))
      << scheduler::to_string(status_of(h, "ms").phase) << "\n" << job_events(h, "ms");
  EXPECT_NE(job_events(h, "ms").find("minSuccess 3"), std::string::npos) << job_events(h, "ms");
  EXPECT_EQ(pods_of(h, "ms").size(), 3u);  // Finished pods stay.
  h.restart();
  EXPECT_EQ(status_of(h, "ms").phase, scheduler::job_phase::failed);
  EXPECT_INVARIANTS(h);
}

// A task's minAvailable: once every pod finished, a task with fewer succeeded pods than its
// minAvailable fails the job, although the job's own minAvailable was met (Volcano's
// TaskMinAvailableNotMet; checked as Volcano checks it, when the job's minAvailable is at least
// the sum of the tasks').
TEST(JobController, AJobWhoseTaskEndedBelowItsMinAvailableFails) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto a = make_task("a", 2, "1");
  a.min_available = 2;
  a.pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  auto b = make_task("b", 2, "1");
  b.min_available = 1;
  b.pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  auto o = make_job("tm", {a, b});
  o.job.min_available = 3;  // Met by 3 of the 4 succeeding; the tasks' minimums sum to 3.
  runtime_harness::must_ok(h.create(o), "tm");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tm", 4); }, 5000ms, 10ms));
  // One of task a's pods fails before its time; no policy takes it.
  fail_pod(h, "tm-a-1");
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "tm").phase == scheduler::job_phase::failed; }, 10000ms, 50ms))
      << scheduler::to_string(status_of(h, "tm").phase) << "\n" << job_events(h, "tm");
  EXPECT_NE(job_events(h, "tm").find("task a has 1 succeeded, minAvailable 2"),
            std::string::npos)
      << job_events(h, "tm");
  EXPECT_INVARIANTS(h);
}

// phalanxd stopped between a RestartJob's two steps: the job is stored Restarting, its version
// raised and its old pods gone, with no new pod yet. At the start it finishes the restart:
// every pod made once, the job running, one retry counted.
TEST(JobController, ARestartBetweenTheTwoStepsFinishesTheRestart) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("tf", "PodEvicted", "RestartJob", 3);
  runtime_harness::must_ok(h.create(job), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  auto stored = std::get<api::job_object>(*h.get(api::resource_kind::job, "default", "tf"));
  auto before = pods_of(h, "tf");
  h.restart_after([&](storage::store& s) {
    // What the first step writes: the job Restarting, one retry, version 1, the pods deleted
    // (the pods of version 0 are the job's expansion: a raised version leaves none).
    auto status = stored.status;
    status.phase = scheduler::job_phase::restarting;
    status.retry_count = 1;
    status.version = 1;
    storage::write_batch b;
    b.put(storage::job_record{stored.job, status});
    runtime_harness::must_ok(result<int>{[&]() -> result<int> {
                               auto w = s.write(b);
                               if (!w.ok())
                                 return w;
                               return 0;
                             }()},
                             "write the first step");
  });
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  auto after = pods_of(h, "tf");
  EXPECT_EQ(after.size(), 3u);
  for (const auto& [name, p] : after)
    EXPECT_NE(p.first, before[name].first) << name;
  auto s = status_of(h, "tf");
  EXPECT_EQ(s.retry_count, 1);
  EXPECT_EQ(s.phase, scheduler::job_phase::running);
  // Once, and for good: another start finds the same pods.
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "tf"), after);
  EXPECT_INVARIANTS(h);
}

// phalanxd stopped after a job's pod was deleted (its tombstone durable) and before the sync made
// it again: the start finds the job missing the pod and makes it then, once.
TEST(JobController, APodDeletedJustBeforeAStopIsMadeAgainAtTheStart) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(tf_job("tf", "PodFailed", "RestartJob", 3)), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  auto before = pods_of(h, "tf");
  auto gone = h.get(api::resource_kind::pod, "default", "tf-worker-0");
  runtime_harness::must_ok(gone, "get tf-worker-0");
  const auto pod = std::get<api::pod_object>(*gone).pod;
  h.restart_after([&](storage::store& s) {
    // What the deletion writes for a pod stored as its job: a tombstone newer than its state.
    storage::write_batch b;
    b.put_pod_tombstone(pod, pod.meta.resource_version + 1000);
    ASSERT_TRUE(s.write(b).ok());
  });
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  auto after = pods_of(h, "tf");
  EXPECT_NE(after["tf-worker-0"].first, before["tf-worker-0"].first);
  EXPECT_EQ(after["tf-ps-0"], before["tf-ps-0"]);
  EXPECT_EQ(status_of(h, "tf").retry_count, 0);
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "tf"), after);
  EXPECT_INVARIANTS(h);
}

// dependsOn: a task's pods are made only once the tasks it depends on run. The job's PodGroup
// reserves room for the members not made yet (placeholders, from its minResources), so the
// first task starts although the gang's minimum counts every task.
TEST(JobController, ATaskStartsOnceTheTasksItDependsOnRun) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto train = make_task("train", 2, "2");
  train.depends_on = {"prepare"};
  auto report = make_task("report", 1, "1");
  report.depends_on = {"train"};
  auto o = make_job("pipe", {make_task("prepare", 1, "1"), train, report});
  // Its minAvailable counts every task: its gang reserves room for the tasks not made yet (as
  // Volcano, without the annotation, would need minAvailable lowered to the first task's).
  o.job.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
  // The simulated kubelet starts a pod a while after its binding: the dependents' creation
  // waits for that.
  runtime_harness::must_ok(h.create(o), "pipe");
  ASSERT_TRUE(h.run_until([&] { return pods_of(h, "pipe").size() == 1; }, 5000ms, 10ms));
  EXPECT_TRUE(pods_of(h, "pipe").count("pipe-prepare-0"));
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "pipe", 4); }, 5000ms, 10ms))
      << pods_of(h, "pipe").size() << "\n" << job_events(h, "pipe");
  // Each pod was made after the ones it waited for started.
  std::map<std::string, scheduler::timestamp> made;
  for (const auto& p : h.pods("default"))
    made[p.pod.meta.name.str()] = p.pod.meta.creation_time;
  std::map<std::string, scheduler::timestamp> started;
  for (const auto& p : h.pods("default"))
    started[p.pod.meta.name.str()] = p.pod.start_time;
  EXPECT_GE(made["pipe-train-0"], started["pipe-prepare-0"]);
  EXPECT_GE(made["pipe-train-1"], started["pipe-prepare-0"]);
  EXPECT_GE(made["pipe-report-0"], std::max(started["pipe-train-0"], started["pipe-train-1"]));
  EXPECT_EQ(status_of(h, "pipe").phase, scheduler::job_phase::running);
  EXPECT_INVARIANTS(h);
  auto before = pods_of(h, "pipe");
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "pipe", 4); }, 5000ms, 10ms));
  EXPECT_EQ(pods_of(h, "pipe"), before) << "its pods are records of their own";
  EXPECT_INVARIANTS(h);
  // Deleted, a pod of a task that depends on another is made again like any (its dependency
  // still runs).
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "pipe-train-1"), "del");
  ASSERT_TRUE(h.run_until(
      [&] { return all_running(h, "pipe", 4) && pods_of(h, "pipe")["pipe-train-1"] !=
                                                     before["pipe-train-1"]; },
      5000ms, 10ms));
  EXPECT_INVARIANTS(h);
}

// A job's own end (its pods all succeeded, no policy) is persisted once, with its time and
// condition; with ttlSecondsAfterFinished the job is deleted that long after it, pods and all
// (Volcano's garbage collector), also when phalanxd restarted meanwhile. maxRetry 0 is
// Volcano's default, 3, as its admission webhook makes it.
TEST(JobController, AFinishedJobIsKeptUntilItsTtlAfterFinishedThenDeleted) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("short", "PodEvicted", "RestartJob", 0);
  for (auto& t : job.job.tasks)
    t.pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  job.job.ttl_seconds_after_finished = 5;
  runtime_harness::must_ok(h.create(job), "short");
  auto kept = tf_job("kept", "PodEvicted", "RestartJob", 0);
  for (auto& t : kept.job.tasks)
    t.pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  runtime_harness::must_ok(h.create(kept), "kept");
  EXPECT_EQ(std::get<api::job_object>(*h.get(api::resource_kind::job, "default", "kept"))
                .job.max_retry,
            3);
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "short").phase == scheduler::job_phase::completed; }, 10000ms,
      50ms));
  auto s = status_of(h, "short");
  ASSERT_FALSE(s.conditions.empty());
  EXPECT_EQ(s.conditions.back().status, scheduler::job_phase::completed);
  EXPECT_EQ(s.conditions.back().last_transition_time, s.last_transition_time);
  EXPECT_TRUE(has_job_event(h, "short", "Completed"));
  h.pass(3000ms);
  EXPECT_TRUE(h.get(api::resource_kind::job, "default", "short").ok()) << "before its TTL";
  h.restart();  // The end is stored, and the collection armed again at the start.
  EXPECT_EQ(status_of(h, "short").last_transition_time, s.last_transition_time);
  ASSERT_TRUE(h.run_until(
      [&] { return !h.get(api::resource_kind::job, "default", "short").ok(); }, 10000ms, 100ms));
  EXPECT_TRUE(pods_of(h, "short").empty());
  // Without a TTL a finished job stays.
  EXPECT_EQ(status_of(h, "kept").phase, scheduler::job_phase::completed);
  EXPECT_EQ(pods_of(h, "kept").size(), 3u);
  EXPECT_INVARIANTS(h);
}

// The spec of a job's pod as the API shows it.
boost::json::object shown_spec(runtime_harness& h, const std::string& pod) {
  auto shown = h.pod(pod).pod.spec_json;
  return boost::json::parse(shown.view()).as_object();
}

// A job's plugins (env, svc, ssh, hcclrank) give its pods what Volcano's controller writes into
// the pods it creates: the task index, host name and subdomain, the svc ConfigMap's host
// variables and mount, the ssh Secret's mount, the rank annotation. Its pods are made again from
// the job at a restart, and show the same; a pod of a job without plugins shows its template's
// spec untouched.
TEST(JobController, PluginsGiveTheJobsPodsTheirIndexHostNameAndMountsAcrossARestart) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("tf", "PodEvicted", "RestartJob", 3);
  give_container(job, "busybox");
  auto plain = job;
  plain.job.meta.name = "plain";
  job.job.plugins = {{"env", {}}, {"hcclrank", {"--master=ps"}}, {"ssh", {}}, {"svc", {}}};
  runtime_harness::must_ok(h.create(job), "tf");
  runtime_harness::must_ok(h.create(plain), "plain");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));

  auto check = [&] {
    auto spec = shown_spec(h, "tf-worker-1");
    EXPECT_EQ(spec.at("hostname"), "tf-worker-1");
    EXPECT_EQ(spec.at("subdomain"), "tf");
    const auto& container = spec.at("containers").at(0).as_object();
    std::map<std::string, std::string> env;
    for (const auto& v : container.at("env").as_array()) {
      const auto& o = v.as_object();
      env[std::string(o.at("name").as_string())] =
          o.contains("value") ? std::string(o.at("value").as_string())
                              : std::string(o.at("valueFrom")
                                                .at("configMapKeyRef")
                                                .at("key")
                                                .as_string());
    }
    EXPECT_EQ(env, (std::map<std::string, std::string>{{"VK_TASK_INDEX", "1"},
                                                       {"VC_TASK_INDEX", "1"},
                                                       {"VC_PS_HOSTS", "VC_PS_HOSTS"},
                                                       {"VC_PS_NUM", "VC_PS_NUM"},
                                                       {"VC_WORKER_HOSTS", "VC_WORKER_HOSTS"},
                                                       {"VC_WORKER_NUM", "VC_WORKER_NUM"}}));
    std::vector<std::string> mounts;
    for (const auto& m : container.at("volumeMounts").as_array())
      mounts.push_back(std::string(m.at("mountPath").as_string()));
    EXPECT_EQ(mounts, (std::vector<std::string>{"/root/.ssh", "/etc/volcano"}));
    EXPECT_EQ(shown_spec(h, "tf-ps-0").at("containers").at(0).at("env").at(0).at("value"), "0");
    EXPECT_EQ(shown_spec(h, "plain-worker-1"),
              boost::json::parse(R"({"containers":[{"image":"busybox","name":"main"}]})"));
    // hcclrank: the ps (its --master) first, then the workers.
    // A copy: the pod read is a temporary, its annotations' views go with it.
    auto rank = [&](const std::string& pod) -> std::string {
      auto shown = h.pod(pod);
      return std::string(shown.pod.meta.annotations.find(scheduler::hccl_rank_key)
                             .value_or("(none)"));
    };
    EXPECT_EQ(rank("tf-ps-0"), "0");
    EXPECT_EQ(rank("tf-worker-0"), "1");
    EXPECT_EQ(rank("tf-worker-1"), "2");
    EXPECT_EQ(rank("plain-worker-1"), "(none)");
  };
  check();
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
  check();
}

// A job naming mpi gets svc and ssh added at its creation, as Volcano's admission webhook adds
// them (the launcher's host list is svc's host names, reached over ssh), and its launcher's
// containers the workers' hosts.
TEST(JobController, AnMpiJobGetsTheSvcAndSshPluginsItNeedsAndItsLauncherTheHosts) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("lm", "PodEvicted", "RestartJob", 3);
  give_container(job, "mpi");
  job.job.plugins = {{"mpi", {"--master=ps"}}};
  runtime_harness::must_ok(h.create(job), "lm");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "lm", 3); }, 5000ms, 10ms));
  auto got = h.get(api::resource_kind::job, "default", "lm");
  runtime_harness::must_ok(got, "get lm");
  EXPECT_EQ(std::get<api::job_object>(*got).job.plugins,
            (decltype(job.job.plugins){{"mpi", {"--master=ps"}}, {"ssh", {}}, {"svc", {}}}));
  auto launcher = shown_spec(h, "lm-ps-0").at("containers").at(0).as_object();
  std::string hosts;
  for (const auto& v : launcher.at("env").as_array())
    if (v.at("name") == "MPI_HOST")
      hosts = std::string(v.at("value").as_string());
  EXPECT_EQ(hosts, "lm-worker-0.lm,lm-worker-1.lm");
  EXPECT_EQ(launcher.at("ports").at(0).at("containerPort"), 22);
}

// A ray job, as Volcano's ray plugin makes it: svc added at its creation, the head container's
// three ports and `ray start --head`, each worker container's `ray start` at the head's first
// pod under the job's subdomain, and the status recording the plugin; across a restart, which
// makes the pods again from the job.
TEST(JobController, ARayJobsHeadAndWorkersStartRayAndItsStatusRecordsThePlugin) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = make_job("rc", {make_task("head", 1, "1"), make_task("worker", 2, "1")});
  give_container(job, "rayproject/ray", "ray");
  job.job.plugins = {{"ray", {"--headContainer=ray", "--workerContainer=ray"}}};
  runtime_harness::must_ok(h.create(job), "rc");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "rc", 3); }, 5000ms, 10ms));

  auto check = [&] {
    auto got = h.get(api::resource_kind::job, "default", "rc");
    runtime_harness::must_ok(got, "get rc");
    EXPECT_EQ(std::get<api::job_object>(*got).job.plugins,
              (decltype(job.job.plugins){{"ray", {"--headContainer=ray", "--workerContainer=ray"}},
                                         {"svc", {}}}));
    EXPECT_EQ(api::encode_object(*got).at("status").at("controlledResources"),
              boost::json::parse(R"({"plugin-ray":"ray","plugin-svc":"svc"})"));
    const auto head = shown_spec(h, "rc-head-0").at("containers").at(0);
    EXPECT_EQ(head.at("command"),
              boost::json::parse(R"(["sh","-c","ray start --head --block )"
                                 R"(--dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 )"
                                 R"(--ray-client-server-port=10001"])"));
    EXPECT_EQ(head.at("ports"), boost::json::parse(R"([{"name":"gcs","containerPort":6379},
        {"name":"dashboard","containerPort":8265},
        {"name":"client-server","containerPort":10001}])"));
    EXPECT_EQ(shown_spec(h, "rc-worker-1").at("containers").at(0).at("command"),
              boost::json::parse(R"(["sh","-c","ray start --block --address=rc-head-0.rc:6379"])"));
  };
  check();
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "rc", 3); }, 5000ms, 10ms));
  check();
}

// A job's volumes in standalone mode, which simulates no storage: the claim of the volume that
// describes one is named at the job's creation (Volcano's generated name, from the job's uid and
// the volume's index) and shown in its spec and status; every container of every pod mounts
// each claim; across a restart, the same. A volume naming a claim and describing one is refused
// at creation, as Volcano's webhook refuses it.
TEST(JobController, AJobsVolumesAreNamedShownAndMountedInEveryPod) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  auto job = tf_job("vj", "PodEvicted", "RestartJob", 3);
  give_container(job, "busybox");
  job.job.volumes = {{"/data", "shared", false}, {"/scratch", "", true}};
  job.job.spec_json = R"({"volumes":[{"mountPath":"/data","volumeClaimName":"shared"},
      {"mountPath":"/scratch","volumeClaim":{"accessModes":["ReadWriteOnce"]}}]})";

  auto both = job;
  both.job.meta.name = "both";
  both.job.volumes[1].volume_claim_name = "mine";
  auto refused = h.create(both);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), errc::invalid_argument);
  EXPECT_NE(refused.error().message().find("spec.volumes[1].volumeClaim: Forbidden"),
            std::string::npos)
      << refused.error().message();

  runtime_harness::must_ok(h.create(job), "vj");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "vj", 3); }, 5000ms, 10ms));
  auto check = [&] {
    auto got = h.get(api::resource_kind::job, "default", "vj");
    runtime_harness::must_ok(got, "get vj");
    const auto& j = std::get<api::job_object>(*got).job;
    const auto claim = scheduler::generated_claim_name("vj", j.meta.uid.str(), 1);
    EXPECT_EQ(j.volumes[1].volume_claim_name, claim);
    const auto shown = api::encode_object(*got);
    EXPECT_EQ(shown.at("spec").at("volumes").at(1),
              boost::json::value(boost::json::object{
                  {"mountPath", "/scratch"},
                  {"volumeClaim", boost::json::parse(R"({"accessModes":["ReadWriteOnce"]})")},
                  {"volumeClaimName", claim}}));
    EXPECT_EQ(shown.at("status").at("controlledResources"),
              boost::json::value(boost::json::object{{"volume-pvc-shared", "shared"},
                                                     {"volume-pvc-" + claim, claim}}));
    for (const auto* pod : {"vj-ps-0", "vj-worker-1"}) {
      const auto spec = shown_spec(h, pod);
      EXPECT_EQ(spec.at("volumes").at(1).at("persistentVolumeClaim").at("claimName"),
                claim.c_str())
          << pod;
      std::vector<std::string> mounts;
      for (const auto& m : spec.at("containers").at(0).at("volumeMounts").as_array())
        mounts.push_back(std::string(m.at("mountPath").as_string()));
      EXPECT_EQ(mounts, (std::vector<std::string>{"/data", "/scratch"})) << pod;
    }
  };
  check();
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "vj", 3); }, 5000ms, 10ms));
  check();
}

} // namespace
} // namespace phalanx::actors::testing
