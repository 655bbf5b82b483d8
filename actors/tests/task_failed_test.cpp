// Volcano's TaskFailed in the standalone world, end to end under CAF's test coordinator: the
// simulated kubelet restarts a running pod's container (sim.phalanx.io/restart-every), the
// registry persists the restart count with the pod's state and shows it
// (status.containerStatuses[].restartCount, the table's Restarts), and once a task's pending and
// running pods restarted its maxRetry times in all, the job's `TaskFailed` policy acts.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "api/codec.hpp"
#include "api/table.hpp"
#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_pod;
using namespace std::chrono_literals;

// A job of one ps and `workers` workers whose containers restart every 100 ms (at most
// `restarts_each` times each when set), the workers' task with maxRetry `task_max_retry`, and,
// when `action` is set, the job-level policy `TaskFailed: <action>`.
api::job_object restarting_job(const std::string& name, int32_t workers, int32_t task_max_retry,
                               const std::string& action, const std::string& restarts_each = {}) {
  api::job_object o;
  o.job.meta.name = name;
  o.job.meta.namespace_name = "default";
  scheduler::job_task ps;
  ps.name = "ps";
  ps.replicas = 1;
  ps.pod_template = make_pod("template").cpu("1");
  scheduler::job_task worker;
  worker.name = "worker";
  worker.replicas = workers;
  worker.max_retry = task_max_retry;
  worker.pod_template = make_pod("template").cpu("1");
  worker.pod_template.meta.annotations.set(sim_restart_every_key, "100ms");
  if (!restarts_each.empty())
    worker.pod_template.meta.annotations.set(sim_restarts_key, restarts_each);
  o.job.tasks = {ps, worker};
  if (!action.empty())
    o.job.policies.push_back({action, "TaskFailed", {}, {}, {}});
  return o;
}

scheduler::job_status status_of(runtime_harness& h, const std::string& job) {
  auto r = h.get(api::resource_kind::job, "default", job);
  runtime_harness::must_ok(r, "get job " + job);
  return std::get<api::job_object>(*r).status;
}

bool has_job_event(runtime_harness& h, const std::string& job, const std::string& reason) {
  for (const auto& e : h.events(api::resource_kind::job, job))
    if (e.reason == reason)
      return true;
  return false;
}

std::string job_events(runtime_harness& h, const std::string& job) {
  std::string out;
  for (const auto& e : h.events(api::resource_kind::job, job))
    out += e.reason + ": " + e.message + "\n";
  return out;
}

// Lets `span` of virtual time pass in 10 ms steps, as the simulated kubelet's restarts come.
void let_pass(runtime_harness& h, std::chrono::milliseconds span) {
  for (auto t = 0ms; t < span; t += 10ms)
    h.pass(10ms);
}

// What the API shows of a pod's restarts: status.containerStatuses[0].restartCount, -1 when the
// pod shows no container status.
int64_t shown_restarts(runtime_harness& h, const std::string& pod) {
  auto json = api::encode_object(api::object{h.pod(pod)});
  const auto* status = json.as_object().if_contains("status");
  if (status == nullptr)
    return -1;
  const auto* statuses = status->as_object().if_contains("containerStatuses");
  if (statuses == nullptr || statuses->as_array().empty())
    return -1;
  const auto* count = statuses->as_array().front().as_object().if_contains("restartCount");
  return count == nullptr ? -1 : count->to_number<int64_t>();
}

// Two workers restarting every 100 ms with the task's maxRetry 2: the task fails at their second
// restart in all, and the job's `TaskFailed: TerminateJob` ends it Terminated, its pods killed.
TEST(TaskFailed, ATaskWhosePodsRestartedMaxRetryTimesRunsItsPolicy) {
  for (const auto& [action, ends] :
       {std::pair{"TerminateJob", scheduler::job_phase::terminated},
        std::pair{"CompleteJob", scheduler::job_phase::completed}}) {
    SCOPED_TRACE(action);
    runtime_harness h{deterministic_config(1), two_job_nodes()};
    runtime_harness::must_ok(h.create(restarting_job("tf", 2, 2, action)), "tf");
    ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 3); }, 5000ms, 10ms));
    ASSERT_TRUE(h.run_until([&] { return status_of(h, "tf").phase == ends; }, 5000ms, 10ms))
        << scheduler::to_string(status_of(h, "tf").phase) << "\n"
        << job_events(h, "tf");
    EXPECT_TRUE(has_job_event(h, "tf", action)) << job_events(h, "tf");
    EXPECT_NE(job_events(h, "tf").find("task worker failed: its pods restarted too often"),
              std::string::npos)
        << job_events(h, "tf");
    EXPECT_EQ(status_of(h, "tf").retry_count, 0);
    // Its unfinished pods were killed: nothing of it runs or restarts any more.
    EXPECT_TRUE(h.run_until([&] { return pods_of(h, "tf").empty(); }, 5000ms, 10ms));
    EXPECT_INVARIANTS(h);
  }
}

// The negatives. Restarts below the task's maxRetry (two workers stopping at 2 restarts each, 4
// of maxRetry 5) do nothing, though the job has a TaskFailed policy; restarts past it do nothing
// either for a job without one, as in Volcano. Both jobs run on, their pods never made again,
// and the API shows each pod's restarts.
TEST(TaskFailed, RestartsBelowMaxRetryOrWithoutAPolicyDoNothing) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(restarting_job("below", 2, 5, "TerminateJob", "2")), "below");
  runtime_harness::must_ok(h.create(restarting_job("nopolicy", 1, 2, "")), "nopolicy");
  ASSERT_TRUE(h.run_until(
      [&] { return all_running(h, "below", 3) && all_running(h, "nopolicy", 2); }, 5000ms, 10ms));
  const auto before = pods_of(h, "below");
  const auto nopolicy_before = pods_of(h, "nopolicy");
  ASSERT_TRUE(h.run_until(
      [&] {
        return h.pod("below-worker-0").pod.restart_count == 2 &&
               h.pod("below-worker-1").pod.restart_count == 2 &&
               h.pod("nopolicy-worker-0").pod.restart_count >= 4;
      },
      5000ms, 10ms));
  let_pass(h, 1000ms);  // Ten more intervals: the capped workers stay at 2.
  for (const auto* job : {"below", "nopolicy"}) {
    SCOPED_TRACE(job);
    auto s = status_of(h, job);
    EXPECT_EQ(s.phase, scheduler::job_phase::running) << job_events(h, job);
    EXPECT_EQ(s.retry_count, 0);
    EXPECT_FALSE(has_job_event(h, job, "TerminateJob")) << job_events(h, job);
  }
  EXPECT_EQ(pods_of(h, "below"), before);
  EXPECT_EQ(pods_of(h, "nopolicy"), nopolicy_before);
  EXPECT_EQ(h.pod("below-worker-0").pod.restart_count, 2);
  EXPECT_GE(h.pod("nopolicy-worker-0").pod.restart_count, 12);
  EXPECT_EQ(h.pod("below-ps-0").pod.restart_count, 0);

  // The API: the container status of a bound pod, and the table's Restarts cell.
  EXPECT_EQ(shown_restarts(h, "below-worker-1"), 2);
  EXPECT_EQ(shown_restarts(h, "below-ps-0"), 0);
  auto cells = api::table_cells(api::object{h.pod("below-worker-1")}, scheduler::timestamp{});
  ASSERT_GE(cells.size(), 4u);
  EXPECT_EQ(cells[3].as_string(), "2");
  EXPECT_INVARIANTS(h);
}

// The count is part of the pod's persisted state: a restart of the runtime in the middle keeps
// it, the simulated kubelet goes on from it, and the task fails at maxRetry 4 counting the
// restarts from before the restart.
TEST(TaskFailed, TheRestartCountSurvivesARestartOfTheRuntime) {
  runtime_harness h{deterministic_config(1), two_job_nodes()};
  runtime_harness::must_ok(h.create(restarting_job("tf", 1, 4, "TerminateJob")), "tf");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, "tf", 2); }, 5000ms, 10ms));
  ASSERT_TRUE(h.run_until([&] { return h.pod("tf-worker-0").pod.restart_count >= 2; }, 5000ms,
                          10ms));
  const auto before = h.pod("tf-worker-0").pod.restart_count;
  ASSERT_LT(before, 4);
  const auto uids = pods_of(h, "tf");

  h.restart();
  EXPECT_EQ(h.pod("tf-worker-0").pod.restart_count, before);
  EXPECT_EQ(shown_restarts(h, "tf-worker-0"), before);
  EXPECT_EQ(pods_of(h, "tf"), uids);
  ASSERT_TRUE(h.run_until([&] { return h.pod("tf-worker-0").pod.restart_count != before; },
                          5000ms, 10ms));
  EXPECT_EQ(h.pod("tf-worker-0").pod.restart_count, before + 1);  // From where it was.
  ASSERT_TRUE(h.run_until(
      [&] { return status_of(h, "tf").phase == scheduler::job_phase::terminated; }, 5000ms, 10ms))
      << scheduler::to_string(status_of(h, "tf").phase) << "\n"
      << job_events(h, "tf");
  EXPECT_INVARIANTS(h);
}

// The annotations' rules, with the annotation named in each refusal.
TEST(TaskFailed, TheRestartAnnotationsAreChecked) {
  using annotations = std::vector<std::pair<std::string_view, std::string_view>>;
  auto behavior_of = [](const annotations& kv) {
    auto p = make_pod("p").cpu("1").obj();
    for (auto [k, v] : kv)
      p.meta.annotations.set(k, v);
    return parse_sim_behavior(p);
  };
  auto ok = behavior_of({{sim_restart_every_key, "2s"}, {sim_restarts_key, "3"}});
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_EQ(ok->restart_every, std::chrono::seconds(2));
  EXPECT_EQ(ok->restarts, 3);
  EXPECT_FALSE(ok->declares_end());  // Restarts end nothing.
  struct refused {
    annotations given;
    std::string message;
  };
  for (const auto& r : std::vector<refused>{
           {{{sim_restart_every_key, "0s"}},
            "metadata.annotations[sim.phalanx.io/restart-every]: must be longer than zero"},
           {{{sim_restart_every_key, "1s"}, {sim_restarts_key, "-1"}},
            "metadata.annotations[sim.phalanx.io/restarts]: must be an integer between 0 and "
            "65535"},
           {{{sim_restart_every_key, "1s"}, {sim_restarts_key, "65536"}},
            "metadata.annotations[sim.phalanx.io/restarts]: must be an integer between 0 and "
            "65535"},
           {{{sim_restarts_key, "2"}},
            "metadata.annotations[sim.phalanx.io/restarts]: needs sim.phalanx.io/restart-every"},
       }) {
    auto b = behavior_of(r.given);
    ASSERT_FALSE(b) << r.message;
    EXPECT_EQ(b.error().message(), r.message);
  }
}

} // namespace
} // namespace phalanx::actors::testing
