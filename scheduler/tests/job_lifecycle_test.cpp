#include "scheduler/job_lifecycle.hpp"

#include "scheduler/job.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const timestamp t0 = timestamp{} + std::chrono::hours(1000);

// A job as Volcano's YAML writes it: make_job("tf").task("ps", 1).task("worker", 2)...
class job_builder {
 public:
  explicit job_builder(std::string name) {
    j_.meta.name = std::move(name);
    j_.meta.namespace_name = "default";
    j_.meta.uid = "6f0c1a2e-1111-4222-8333-444455556666";
  }
  job_builder& task(std::string name, int32_t replicas, std::optional<int32_t> min = {}) {
    job_task t;
    t.name = std::move(name);
    t.replicas = replicas;
    t.min_available = min;
    j_.tasks.push_back(std::move(t));
    return *this;
  }
  job_builder& min_available(int32_t n) {
    j_.min_available = n;
    return *this;
  }
  job_builder& max_retry(int32_t n) {
    j_.max_retry = n;
    return *this;
  }
  // A job-level policy; on_task() moves the next ones to the last task.
  job_builder& on(std::string event, std::string action, std::optional<duration> timeout = {}) {
    target().push_back({std::move(action), std::move(event), {}, std::nullopt, timeout});
    return *this;
  }
  job_builder& on_events(std::vector<std::string> events, std::string action) {
    target().push_back({std::move(action), {}, std::move(events), std::nullopt, std::nullopt});
    return *this;
  }
  job_builder& on_exit(int32_t code, std::string action) {
    target().push_back({std::move(action), {}, {}, code, std::nullopt});
    return *this;
  }
  job_builder& on_task() {
    task_policies_ = true;
    return *this;
  }
  job_builder& on_job() {
    task_policies_ = false;
    return *this;
  }
  job obj() const { return j_; }

 private:
  std::vector<lifecycle_policy>& target() {
    return task_policies_ ? j_.tasks.back().policies : j_.policies;
  }
  job j_;
  bool task_policies_ = false;
};

job_builder make_job(std::string name) { return job_builder(std::move(name)); }

// examples/tensorflow-job.yaml: an evicted pod restarts the job; the workers' completion
// completes it. maxRetry is Volcano's default, 3.
job tensorflow_job() {
  return make_job("tensorflow-dist-mnist")
      .min_available(3)
      .on("PodEvicted", "RestartJob")
      .task("ps", 1)
      .task("worker", 2)
      .on_task()
      .on("TaskCompleted", "CompleteJob")
      .obj();
}

// examples/mpi-job.yaml: no job policy; the launcher's completion completes the job.
job mpi_job() {
  return make_job("lm-mpi-job")
      .min_available(4)
      .max_retry(2)
      .task("mpimaster", 1)
      .on_task()
      .on("TaskCompleted", "CompleteJob")
      .task("mpiworker", 3)
      .obj();
}

// Pods in a compact notation: "ps:R worker:RT", one letter per pod: P pending, R running,
// S succeeded, F failed, U unknown, T terminating.
job_pods pods_of(std::string_view spec, bool admitted = true) {
  job_pods out;
  out.pod_group_admitted = admitted;
  std::istringstream in{std::string(spec)};
  std::string word;
  while (in >> word) {
    auto colon = word.find(':');
    task_pods t;
    t.counts.task = word.substr(0, colon);
    for (char c : word.substr(colon + 1)) {
      auto& n = t.counts;
      int32_t* slot = c == 'P'   ? &n.pending
                      : c == 'R' ? &n.running
                      : c == 'S' ? &n.succeeded
                      : c == 'F' ? &n.failed
                      : c == 'U' ? &n.unknown
                      : c == 'T' ? &t.terminating
                                 : nullptr;
      if (slot == nullptr)
        ADD_FAILURE() << "bad pod letter " << c;
      else
        ++*slot;
    }
    out.tasks.push_back(std::move(t));
  }
  return out;
}

// The status's counts in the same letters, in the order P R S F U T.
std::string letters(const job_status& s) {
  std::string out;
  out.append(std::size_t(s.pending), 'P');
  out.append(std::size_t(s.running), 'R');
  out.append(std::size_t(s.succeeded), 'S');
  out.append(std::size_t(s.failed), 'F');
  out.append(std::size_t(s.unknown), 'U');
  out.append(std::size_t(s.terminating), 'T');
  return out;
}

// "none", "job", "job keep-finished", "task worker", "pod tf-ps-0".
std::string describe(const pod_kill& k) {
  switch (k.scope) {
    case kill_scope::none:
      return "none";
    case kill_scope::job:
      return k.keep_finished ? "job keep-finished" : "job";
    case kill_scope::task:
      return "task " + k.task;
    case kill_scope::pod:
      return "pod " + k.pod;
  }
  return "?";
}

// Events as the controller raises them.
job_event_info synced() { return {}; }
job_event_info evicted(const job& j, std::string task, int index) {
  job_event_info e;
  e.event = job_event::pod_evicted;
  e.pod = j.meta.name.str() + "-" + task + "-" + std::to_string(index);
  e.task = std::move(task);
  return e;
}
job_event_info failed(const job& j, std::string task, int index, int32_t exit_code) {
  job_event_info e = evicted(j, std::move(task), index);
  e.event = job_event::pod_failed;
  e.pod_state = pod_phase::failed;
  e.exit_code = exit_code;
  return e;
}
job_event_info of_task(job_event ev, std::string task) {
  job_event_info e;
  e.event = ev;
  e.task = std::move(task);
  return e;
}
job_event_info unknown() {
  job_event_info e;
  e.event = job_event::unknown;
  return e;
}
job_event_info command(job_action a) {
  job_event_info e;
  e.event = job_event::command_issued;
  e.command = a;
  return e;
}

job_status status_in(job_phase p, int32_t retry_count = 0) {
  job_status s;
  s.phase = p;
  s.retry_count = retry_count;
  s.last_transition_time = t0 - minutes(5);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Enums

TEST(JobLifecycleEnums, EveryValueHasAUniqueNameThatParsesBack) {
  std::set<std::string_view> events;
  for (int i = 0; i <= int(job_event_last); ++i) {
    auto name = to_string(job_event(i));
    EXPECT_NE(name, "Invalid") << i;
    EXPECT_TRUE(events.insert(name).second) << name;
    EXPECT_EQ(job_event_from_string(name), job_event(i));
  }
  std::set<std::string_view> actions;
  for (int i = 0; i <= int(job_action_last); ++i) {
    auto name = to_string(job_action(i));
    EXPECT_NE(name, "Invalid") << i;
    EXPECT_TRUE(actions.insert(name).second) << name;
    EXPECT_EQ(job_action_from_string(name), job_action(i));
  }
  for (int i = 0; i <= int(action_source_last); ++i)
    EXPECT_NE(to_string(action_source(i)), "Invalid") << i;
  for (int i = 0; i <= int(kill_scope_last); ++i)
    EXPECT_NE(to_string(kill_scope(i)), "Invalid") << i;
  EXPECT_EQ(to_string(job_event::any), "*");
  EXPECT_EQ(to_string(job_event::unknown), "Unknown");
  EXPECT_EQ(to_string(job_action::restart_pod), "RestartPod");
  EXPECT_EQ(job_event_from_string("podEvicted"), std::nullopt);
  EXPECT_EQ(job_action_from_string("RestartPartition"), std::nullopt);
  EXPECT_EQ(to_string(job_event(99)), "Invalid");
}

// ---------------------------------------------------------------------------------------------
// The table: phase x event -> action, next phase, kill, creation, retry, counts and message.

// One job for the whole table: ps 1 and worker 2, minAvailable 3, maxRetry 3, and a policy for
// most actions.
job table_job() {
  return make_job("tf")
      .min_available(3)
      .on("PodEvicted", "RestartJob")
      .on("Unknown", "AbortJob")
      .on("TaskFailed", "TerminateJob")
      .on_exit(137, "RestartPod")
      .task("ps", 1)
      .task("worker", 2)
      .on_task()
      .on("TaskCompleted", "CompleteJob")
      .on("PodFailed", "RestartTask")
      .obj();
}

struct lifecycle_case {
  const char* name;
  job_phase phase;
  int32_t retry_count;
  const char* pods;
  bool admitted;
  job_event_info event;
  // Expected:
  job_action action;
  job_phase next;
  const char* kill;
  bool create;
  int32_t retry_increment;
  const char* after;  // Counts after the step, in pods_of's letters.
  const char* reason;
  const char* message;
};

std::ostream& operator<<(std::ostream& os, const lifecycle_case& c) { return os << c.name; }

const job tj = table_job();
using p = job_phase;
using a = job_action;

const lifecycle_case lifecycle_cases[] = {
    // Pending.
    {"PendingSyncCreatesPodsOnceAdmitted", p::pending, 0, "", true, synced(), a::sync_job,
     p::pending, "none", true, 0, "PPP", "", ""},
    {"PendingSyncWaitsForAdmission", p::pending, 0, "", false, synced(), a::sync_job, p::pending,
     "none", false, 0, "", "", ""},
    {"PendingToRunningAtMinAvailable", p::pending, 0, "ps:R worker:RR", true, synced(),
     a::sync_job, p::running, "none", false, 0, "RRR", "MinAvailableMet",
     "3 pods running or finished, minAvailable 3"},
    {"PendingEvictedRestartsJob", p::pending, 0, "ps:R worker:P", true, evicted(tj, "worker", 1),
     a::restart_job, p::restarting, "job", false, 1, "TT", "RestartJob",
     "pod tf-worker-1 evicted: RestartJob (1 of 2 retries)"},
    {"PendingUnknownAbortsJob", p::pending, 0, "ps:R worker:SP", true, unknown(), a::abort_job,
     p::aborting, "job keep-finished", false, 0, "STT", "AbortJob",
     "pod group Unknown: part of the gang cannot be scheduled while other pods run: AbortJob"},
    // Running.
    {"RunningSyncStays", p::running, 0, "ps:R worker:RR", true, synced(), a::sync_job,
     p::running, "none", false, 0, "RRR", "", ""},
    {"RunningLostMemberGoesPending", p::running, 0, "ps:R worker:R", true, synced(), a::sync_job,
     p::pending, "none", true, 0, "PRR", "PodsPending",
     "1 pods pending, more than the 0 that minAvailable 3 of 3 allows"},
    {"RunningFailedPodWithoutPolicySyncs", p::running, 0, "ps:F worker:RR", true,
     failed(tj, "ps", 0, 1), a::sync_job, p::running, "none", false, 0, "RRF", "", ""},
    {"RunningExitCodeRestartsPod", p::running, 0, "ps:F worker:RR", true,
     failed(tj, "ps", 0, 137), a::restart_pod, p::restarting, "pod tf-ps-0", false, 1, "RRT",
     "RestartPod", "pod tf-ps-0 failed with exit code 137: RestartPod (1 of 2 retries)"},
    {"RunningTaskPolicyBeatsJobExitCode", p::running, 0, "ps:R worker:RF", true,
     failed(tj, "worker", 1, 137), a::restart_task, p::restarting, "task worker", false, 1,
     "RTT", "RestartTask",
     "pod tf-worker-1 failed with exit code 137: RestartTask worker (1 of 2 retries)"},
    {"RunningTaskCompletedCompletesJob", p::running, 0, "ps:R worker:SS", true,
     of_task(job_event::task_completed, "worker"), a::complete_job, p::completing,
     "job keep-finished", false, 0, "SST", "CompleteJob", "task worker completed: CompleteJob"},
    {"RunningTaskFailedTerminatesJob", p::running, 0, "ps:R worker:RR", true,
     of_task(job_event::task_failed, "worker"), a::terminate_job, p::terminating,
     "job keep-finished", false, 0, "TTT", "TerminateJob",
     "task worker failed: its pods restarted too often: TerminateJob"},
    {"RunningAllSucceededCompletes", p::running, 0, "ps:S worker:SS", true, synced(),
     a::sync_job, p::completed, "none", false, 0, "SSS", "PodsSucceeded",
     "all 3 pods finished: 3 succeeded, minAvailable 3"},
    {"RunningTaskBelowItsMinimumFails", p::running, 0, "ps:S worker:SF", true, synced(),
     a::sync_job, p::failed, "none", false, 0, "SSF", "TaskMinAvailableNotMet",
     "all 3 pods finished: task worker has 1 succeeded, minAvailable 2"},
    {"RunningLastRetryKeepsTheFailedPod", p::running, 2, "ps:R worker:F", true,
     evicted(tj, "worker", 1), a::restart_job, p::restarting, "job keep-finished", false, 1, "FT",
     "RestartJob", "pod tf-worker-1 evicted: RestartJob (maxRetry 3 reached)"},
    {"RunningCommandAborts", p::running, 0, "ps:R worker:RS", true, command(a::abort_job),
     a::abort_job, p::aborting, "job keep-finished", false, 0, "STT", "AbortJob",
     "command issued: AbortJob"},
    {"RunningResumeIsASync", p::running, 0, "ps:R worker:RR", true, command(a::resume_job),
     a::resume_job, p::running, "none", false, 0, "RRR", "", ""},
    // Restarting (retry 1 already counted).
    {"RestartingWaitsForTerminatingPods", p::restarting, 1, "ps:T worker:TT", false, synced(),
     a::sync_job, p::restarting, "none", false, 0, "TTT", "", ""},
    {"RestartingToPendingOncePodsAreGone", p::restarting, 1, "", false, synced(), a::sync_job,
     p::pending, "none", false, 0, "", "Restarted",
     "0 of 3 pods terminating, minAvailable 3: creating pods again"},
    {"RestartingCreatesPodsWhenAdmitted", p::restarting, 1, "", true, synced(), a::sync_job,
     p::pending, "none", true, 0, "PPP", "Restarted",
     "0 of 3 pods terminating, minAvailable 3: creating pods again"},
    {"RestartingFailsAtMaxRetry", p::restarting, 3, "worker:F", true, synced(), a::sync_job,
     p::failed, "none", false, 0, "F", "MaxRetryReached", "retryCount 3 reached maxRetry 3"},
    {"RestartingEvictionKillsAgainWithoutRetry", p::restarting, 1, "ps:P worker:P", true,
     evicted(tj, "worker", 1), a::restart_job, p::restarting, "job", false, 0, "TT", "", ""},
    {"RestartingAbortOnlyKills", p::restarting, 1, "ps:R", true, command(a::abort_job),
     a::abort_job, p::restarting, "job", false, 0, "T", "", ""},
    {"RestartingRestartTaskWithoutRetry", p::restarting, 1, "ps:T worker:F", true,
     failed(tj, "worker", 0, 137), a::restart_task, p::restarting, "task worker", false, 0, "TT",
     "", ""},
    // Aborting and Aborted.
    {"AbortingWaitsForAlivePods", p::aborting, 0, "ps:R worker:S", true, synced(), a::sync_job,
     p::aborting, "job keep-finished", false, 0, "ST", "", ""},
    {"AbortingToAbortedWhenNoneAlive", p::aborting, 0, "worker:SF", true, synced(), a::sync_job,
     p::aborted, "job keep-finished", false, 0, "SF", "PodsStopped",
     "no pod pending, running or terminating"},
    {"AbortingResumeRestarts", p::aborting, 0, "ps:R", true, command(a::resume_job),
     a::resume_job, p::restarting, "job keep-finished", false, 1, "T", "ResumeJob",
     "command issued: ResumeJob (1 of 2 retries)"},
    {"AbortedStays", p::aborted, 0, "worker:S", true, synced(), a::sync_job, p::aborted,
     "job keep-finished", false, 0, "S", "", ""},
    {"AbortedResumeRestarts", p::aborted, 1, "", true, command(a::resume_job), a::resume_job,
     p::restarting, "job keep-finished", false, 1, "", "ResumeJob",
     "command issued: ResumeJob (2 of 2 retries)"},
    // Completing and Terminating.
    {"CompletingWaitsForAlivePods", p::completing, 0, "ps:R worker:SS", true, synced(),
     a::sync_job, p::completing, "job keep-finished", false, 0, "SST", "", ""},
    {"CompletingToCompleted", p::completing, 0, "worker:SS", true, synced(), a::sync_job,
     p::completed, "job keep-finished", false, 0, "SS", "PodsStopped",
     "no pod pending, running or terminating"},
    {"TerminatingWaitsForTerminatingPods", p::terminating, 0, "ps:T", true, synced(),
     a::sync_job, p::terminating, "job keep-finished", false, 0, "T", "", ""},
    {"TerminatingToTerminated", p::terminating, 0, "", true, synced(), a::sync_job,
     p::terminated, "job keep-finished", false, 0, "", "PodsStopped",
     "no pod pending, running or terminating"},
    // Finished: every action only kills what is left.
    {"CompletedKillsLeftovers", p::completed, 0, "ps:R worker:SS", true, synced(), a::sync_job,
     p::completed, "job keep-finished", false, 0, "SST", "", ""},
    {"FailedIgnoresRestart", p::failed, 3, "worker:F", true, evicted(tj, "ps", 0),
     a::restart_job, p::failed, "job keep-finished", false, 0, "F", "", ""},
    {"TerminatedIgnoresResume", p::terminated, 0, "", true, command(a::resume_job),
     a::resume_job, p::terminated, "job keep-finished", false, 0, "", "", ""},
};

class JobLifecycleTable : public ::testing::TestWithParam<lifecycle_case> {};

TEST_P(JobLifecycleTable, Step) {
  const auto& c = GetParam();
  auto current = status_in(c.phase, c.retry_count);
  auto resolved = resolve_action(tj, current, c.event);
  EXPECT_EQ(to_string(resolved.action), to_string(c.action));
  auto t = next_state(tj, current, pods_of(c.pods, c.admitted), resolved, t0);
  EXPECT_EQ(to_string(t.status.phase), to_string(c.next));
  EXPECT_EQ(describe(t.kill), c.kill);
  EXPECT_EQ(t.create_missing_pods, c.create);
  EXPECT_EQ(t.retry_increment, c.retry_increment);
  EXPECT_EQ(t.status.retry_count, c.retry_count + c.retry_increment);
  EXPECT_EQ(letters(t.status), c.after);
  EXPECT_EQ(t.status.reason, c.reason);
  EXPECT_EQ(t.status.message, c.message);
  EXPECT_EQ(t.status.min_available, 3);
  // A whole-job kill deletes the PodGroup and outdates the old pods' events.
  bool whole = t.kill.scope == kill_scope::job;
  EXPECT_EQ(t.delete_pod_group, whole);
  EXPECT_EQ(t.status.version, current.version + (whole ? 1 : 0));
  // The history grows exactly on a phase change, stamped `now`, by a legal move.
  EXPECT_EQ(t.phase_changed, c.next != c.phase);
  if (t.phase_changed) {
    EXPECT_TRUE(is_legal_transition(c.phase, c.next));
    ASSERT_TRUE(t.condition.has_value());
    EXPECT_EQ(*t.condition, (job_condition{c.next, t0}));
    EXPECT_EQ(t.status.last_transition_time, t0);
  } else {
    EXPECT_FALSE(t.condition.has_value());
    EXPECT_EQ(t.status.last_transition_time, current.last_transition_time);
  }
}

INSTANTIATE_TEST_SUITE_P(JobLifecycle, JobLifecycleTable, ::testing::ValuesIn(lifecycle_cases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(JobLifecycleTransitions, FinishedPhasesHaveNoWayOut) {
  for (auto from : {p::completed, p::failed, p::terminated})
    for (int to = 0; to <= int(job_phase_last); ++to)
      EXPECT_FALSE(is_legal_transition(from, job_phase(to)));
  EXPECT_TRUE(is_legal_transition(p::aborted, p::restarting));
  EXPECT_FALSE(is_legal_transition(p::aborted, p::running));
  EXPECT_FALSE(is_legal_transition(p::restarting, p::running));  // Always through Pending.
  EXPECT_TRUE(is_finished(p::terminated));
  EXPECT_FALSE(is_finished(p::aborted));
}

TEST(JobLifecycleTransitions, ANewJobStartsPending) {
  auto t = initial_transition(tensorflow_job(), t0);
  EXPECT_EQ(t.status.phase, p::pending);
  EXPECT_EQ(t.status.min_available, 3);
  EXPECT_EQ(t.status.last_transition_time, t0);
  EXPECT_EQ(t.condition, (job_condition{p::pending, t0}));
}

TEST(JobLifecycleTransitions, ConditionsKeepEachPhaseOnceAtItsLatestEntry) {
  std::vector<job_condition> history;
  append_condition(history, {p::pending, t0});
  append_condition(history, {p::running, t0 + seconds(1)});
  append_condition(history, {p::restarting, t0 + seconds(2)});
  append_condition(history, {p::pending, t0 + seconds(3)});
  append_condition(history, {p::running, t0 + seconds(4)});
  EXPECT_EQ(history, (std::vector<job_condition>{{p::restarting, t0 + seconds(2)},
                                                 {p::pending, t0 + seconds(3)},
                                                 {p::running, t0 + seconds(4)}}));
}

// ---------------------------------------------------------------------------------------------
// Scenarios

// Runs one event through both steps and persists the result as the controller does.
struct controller_sim {
  job j;
  job_status status;
  std::vector<job_condition> history;

  job_transition on(const job_event_info& e, const job_pods& pods, timestamp now) {
    auto t = next_state(j, status, pods, resolve_action(j, status, e), now);
    status = t.status;
    if (t.condition)
      append_condition(history, *t.condition);
    return t;
  }
};

controller_sim start(job j, timestamp now) {
  controller_sim sim{std::move(j), {}, {}};
  auto t = initial_transition(sim.j, now);
  sim.status = t.status;
  append_condition(sim.history, *t.condition);
  return sim;
}

TEST(JobLifecycleScenario, TensorFlowEvictionRestartsTheJobOnce) {
  auto sim = start(tensorflow_job(), t0);
  sim.on(synced(), pods_of("ps:R worker:RR"), t0 + seconds(10));
  ASSERT_EQ(sim.status.phase, p::running);

  // worker-1 is evicted (deleted by someone else): PodEvicted -> RestartJob.
  auto t = sim.on(evicted(sim.j, "worker", 1), pods_of("ps:R worker:R"), t0 + minutes(1));
  EXPECT_EQ(sim.status.phase, p::restarting);
  EXPECT_EQ(sim.status.retry_count, 1);
  EXPECT_EQ(sim.status.version, 1);
  EXPECT_EQ(sim.status.reason, "RestartJob");
  EXPECT_EQ(sim.status.message,
            "pod tensorflow-dist-mnist-worker-1 evicted: RestartJob (1 of 2 retries)");
  EXPECT_EQ(describe(t.kill), "job");
  EXPECT_TRUE(t.delete_pod_group);

  // The killed pods were marked out of sync: their deletion syncs. Two still terminating.
  t = sim.on(synced(), pods_of("ps:T worker:T", false), t0 + minutes(1) + seconds(5));
  EXPECT_EQ(sim.status.phase, p::restarting);
  EXPECT_FALSE(t.create_missing_pods);
  // Gone, and the new PodGroup admitted: Pending, the pods are created again.
  t = sim.on(synced(), pods_of("", true), t0 + minutes(1) + seconds(30));
  EXPECT_EQ(sim.status.phase, p::pending);
  EXPECT_TRUE(t.create_missing_pods);
  EXPECT_EQ(letters(sim.status), "PPP");
  // An event from the old incarnation (version 0) no longer restarts anything.
  auto stale = evicted(sim.j, "worker", 0);
  stale.job_version = 0;
  EXPECT_EQ(resolve_action(sim.j, sim.status, stale).source, action_source::outdated);

  sim.on(synced(), pods_of("ps:R worker:RR"), t0 + minutes(2));
  EXPECT_EQ(sim.status.phase, p::running);
  EXPECT_EQ(sim.status.retry_count, 1);
  EXPECT_EQ(sim.history, (std::vector<job_condition>{{p::restarting, t0 + minutes(1)},
                                                     {p::pending, t0 + minutes(1) + seconds(30)},
                                                     {p::running, t0 + minutes(2)}}));

  // The workers complete: CompleteJob kills the parameter server, then the job is Completed.
  t = sim.on(of_task(job_event::task_completed, "worker"), pods_of("ps:R worker:SS"),
             t0 + minutes(30));
  EXPECT_EQ(sim.status.phase, p::completing);
  EXPECT_EQ(describe(t.kill), "job keep-finished");
  sim.on(synced(), pods_of("worker:SS"), t0 + minutes(31));
  EXPECT_EQ(sim.status.phase, p::completed);
}

TEST(JobLifecycleScenario, TensorFlowFailsWhenEvictionsExceedMaxRetry) {
  auto sim = start(tensorflow_job(), t0);
  sim.status.phase = p::running;
  timestamp now = t0;
  for (int restart = 1; restart <= 2; ++restart) {
    now += minutes(10);
    sim.on(evicted(sim.j, "worker", 1), pods_of("ps:R worker:R"), now);
    EXPECT_EQ(sim.status.phase, p::restarting);
    EXPECT_EQ(sim.status.retry_count, restart);
    sim.on(synced(), pods_of(""), now + seconds(30));
    EXPECT_EQ(sim.status.phase, p::pending) << restart;
    sim.on(synced(), pods_of("ps:R worker:RR"), now + minutes(1));
    EXPECT_EQ(sim.status.phase, p::running) << restart;
  }
  // The third: the last retry keeps the finished pods (worker-0 failed, for its logs).
  now += minutes(10);
  auto t = sim.on(evicted(sim.j, "worker", 1), pods_of("ps:R worker:F"), now);
  EXPECT_EQ(sim.status.phase, p::restarting);
  EXPECT_EQ(sim.status.retry_count, 3);
  EXPECT_EQ(describe(t.kill), "job keep-finished");
  EXPECT_EQ(letters(sim.status), "FT");
  EXPECT_EQ(sim.status.message,
            "pod tensorflow-dist-mnist-worker-1 evicted: RestartJob (maxRetry 3 reached)");
  t = sim.on(synced(), pods_of("worker:F"), now + seconds(30));
  EXPECT_EQ(sim.status.phase, p::failed);
  EXPECT_EQ(sim.status.reason, "MaxRetryReached");
  EXPECT_FALSE(t.create_missing_pods);
  EXPECT_EQ(letters(sim.status), "F");
}

// Volcano's runningDuration is what its killPods writes: the last transition's time less the
// job's creation, at every kill (of the job, a task or a pod; an end; a finished job's
// leftovers), and never at a sync.
TEST(JobLifecycleScenario, RunningDurationIsWrittenByKillsOnly) {
  auto j = tensorflow_job();
  j.meta.creation_time = t0 - seconds(30);
  j.tasks[0].policies.push_back({"RestartPod", "PodFailed", {}, std::nullopt, std::nullopt});
  auto sim = start(j, t0);
  sim.on(synced(), pods_of("ps:R worker:RR"), t0 + seconds(10));
  EXPECT_FALSE(sim.status.running_duration);
  // A targeted kill: the ps pod alone is made again; Restarting 50 s after the creation.
  auto t = sim.on(failed(sim.j, "ps", 0, 1), pods_of("ps:F worker:RR"), t0 + seconds(20));
  ASSERT_EQ(describe(t.kill), "pod tensorflow-dist-mnist-ps-0");
  EXPECT_EQ(sim.status.running_duration, seconds(50));
  sim.on(synced(), pods_of("ps:P worker:RR"), t0 + seconds(30));  // Restarting: Pending.
  sim.on(synced(), pods_of("ps:R worker:RR"), t0 + seconds(40));
  ASSERT_EQ(sim.status.phase, p::running);
  EXPECT_EQ(sim.status.running_duration, seconds(50));  // Syncs keep it.
  // A whole-job kill: the restart's transition, 1 min 30 s after the creation.
  sim.on(evicted(sim.j, "worker", 1), pods_of("ps:R worker:R"), t0 + minutes(1));
  ASSERT_EQ(sim.status.phase, p::restarting);
  EXPECT_EQ(sim.status.running_duration, seconds(90));
  // Syncs keep it.
  sim.on(synced(), pods_of("", true), t0 + minutes(2));
  sim.on(synced(), pods_of("ps:R worker:RR"), t0 + minutes(3));
  ASSERT_EQ(sim.status.phase, p::running);
  EXPECT_EQ(sim.status.running_duration, seconds(90));
  // The end: CompleteJob, then Completed once the ps is gone.
  sim.on(of_task(job_event::task_completed, "worker"), pods_of("ps:R worker:SS"),
         t0 + minutes(30));
  EXPECT_EQ(sim.status.running_duration, minutes(30) + seconds(30));
  sim.on(synced(), pods_of("worker:SS"), t0 + minutes(31));
  ASSERT_EQ(sim.status.phase, p::completed);
  EXPECT_EQ(sim.status.running_duration, minutes(31) + seconds(30));
}

TEST(JobLifecycleScenario, MpiJobWithDeletedPodsFallsBackToPendingThenCompletes) {
  auto sim = start(mpi_job(), t0);
  sim.on(synced(), pods_of("mpimaster:R mpiworker:RRR"), t0 + seconds(10));
  ASSERT_EQ(sim.status.phase, p::running);

  // Two workers deleted by someone else: no PodEvicted policy, so a sync recreates them and the
  // gang, below minAvailable 4, is Pending again. Nothing restarts, no retry is counted.
  auto e = evicted(sim.j, "mpiworker", 1);
  EXPECT_EQ(resolve_action(sim.j, sim.status, e).action, a::sync_job);
  auto t = sim.on(e, pods_of("mpimaster:R mpiworker:R"), t0 + minutes(1));
  EXPECT_TRUE(t.create_missing_pods);
  EXPECT_EQ(sim.status.phase, p::pending);
  EXPECT_EQ(sim.status.retry_count, 0);
  EXPECT_EQ(sim.status.message, "2 pods pending, more than the 0 that minAvailable 4 of 4 allows");
  sim.on(synced(), pods_of("mpimaster:R mpiworker:RRR"), t0 + minutes(2));
  EXPECT_EQ(sim.status.phase, p::running);

  // The launcher completes: its task policy completes the job and the workers are killed.
  t = sim.on(of_task(job_event::task_completed, "mpimaster"), pods_of("mpimaster:S mpiworker:RRR"),
             t0 + minutes(20));
  EXPECT_EQ(sim.status.phase, p::completing);
  EXPECT_EQ(letters(sim.status), "STTT");
  sim.on(synced(), pods_of("mpimaster:S mpiworker:T"), t0 + minutes(20) + seconds(5));
  EXPECT_EQ(sim.status.phase, p::completing);
  sim.on(synced(), pods_of("mpimaster:S"), t0 + minutes(20) + seconds(40));
  EXPECT_EQ(sim.status.phase, p::completed);
  EXPECT_EQ(sim.status.last_transition_time, t0 + minutes(20) + seconds(40));
}

TEST(JobLifecycleScenario, MinSuccessCompletesEarlyAndFailsWhenMissed) {
  auto j = make_job("sweep").task("trial", 4, 1).min_available(1).obj();
  j.min_success = 2;
  auto running = status_in(p::running);
  auto t = next_state(j, running, pods_of("trial:SSRR"), resolve_action(j, running, synced()),
                      t0);
  EXPECT_EQ(t.status.phase, p::completed);
  EXPECT_EQ(t.status.reason, "MinSuccessMet");
  EXPECT_EQ(t.status.message, "2 pods succeeded, minSuccess 2");

  t = next_state(j, running, pods_of("trial:SFFF"), resolve_action(j, running, synced()), t0);
  EXPECT_EQ(t.status.phase, p::failed);
  EXPECT_EQ(t.status.message, "all 4 pods finished: 1 succeeded, minSuccess 2");

  // Without minSuccess, one success reaches minAvailable 1.
  j.min_success.reset();
  t = next_state(j, running, pods_of("trial:SFFF"), resolve_action(j, running, synced()), t0);
  EXPECT_EQ(t.status.phase, p::completed);
  EXPECT_EQ(t.status.message, "all 4 pods finished: 1 succeeded, minAvailable 1");
}

// What a reader of the job's pods between steps sees (phase_by_sync): the same rules as a
// sync's, so minSuccess and a task's minAvailable end a job read so too.
TEST(JobLifecycleScenario, PhaseBySyncIsTheSyncsPhase) {
  auto j = make_job("sweep").task("trial", 4, 1).min_available(1).obj();
  j.min_success = 2;
  auto counts = [](const job_pods& pods) {
    std::vector<task_counts> out;
    for (const auto& t : pods.tasks)
      out.push_back(t.counts);
    return out;
  };
  auto r = phase_by_sync(j, p::running, counts(pods_of("trial:SSRR")));
  EXPECT_EQ(r.phase, p::completed);
  EXPECT_EQ(r.reason, "MinSuccessMet");
  EXPECT_EQ(phase_by_sync(j, p::running, counts(pods_of("trial:SRRR"))).phase, p::running);
  EXPECT_TRUE(phase_by_sync(j, p::running, counts(pods_of("trial:SRRR"))).reason.empty());
  EXPECT_EQ(phase_by_sync(j, p::pending, counts(pods_of("trial:RPPP"))).phase, p::running);
  EXPECT_EQ(phase_by_sync(j, p::pending, counts(pods_of("trial:PPPP"))).phase, p::pending);
  // A task that ended below its minAvailable fails the job its minAvailable let through.
  auto two = make_job("two").task("a", 2, 2).task("b", 2, 1).min_available(3).obj();
  r = phase_by_sync(two, p::running, counts(pods_of("a:SF b:SS")));
  EXPECT_EQ(r.phase, p::failed);
  EXPECT_EQ(r.reason, "TaskMinAvailableNotMet");
}

TEST(JobLifecycleScenario, ExitCodePolicies) {
  auto j = make_job("train")
               .on_exit(3, "AbortJob")
               .on("PodFailed", "RestartJob")
               .task("worker", 2)
               .on_task()
               .on_exit(42, "RestartPod")
               .obj();
  auto running = status_in(p::running);
  struct row {
    int32_t exit_code;
    job_action action;
    action_source source;
  };
  // Task policies first (exit code 42), then the job's in order: exit code 3 before PodFailed.
  for (const auto& r : {row{42, a::restart_pod, action_source::task_policy},
                        row{3, a::abort_job, action_source::job_policy},
                        row{1, a::restart_job, action_source::job_policy}}) {
    auto resolved = resolve_action(j, running, failed(j, "worker", 0, r.exit_code));
    EXPECT_EQ(resolved.action, r.action) << r.exit_code;
    EXPECT_EQ(resolved.source, r.source) << r.exit_code;
  }
  // An exit code matches only an event that carries one.
  auto no_code = failed(j, "worker", 0, 3);
  no_code.exit_code.reset();
  EXPECT_EQ(resolve_action(j, running, no_code).action, a::restart_job);

  auto t = next_state(j, running, pods_of("worker:RF"),
                      resolve_action(j, running, failed(j, "worker", 1, 3)), t0);
  EXPECT_EQ(t.status.phase, p::aborting);
  EXPECT_EQ(t.status.message, "pod train-worker-1 failed with exit code 3: AbortJob");
}

TEST(JobLifecycleScenario, TaskPolicyBeatsJobPolicy) {
  auto j = make_job("tf")
               .on("PodFailed", "AbortJob")
               .task("ps", 1)
               .task("worker", 2)
               .on_task()
               .on("PodFailed", "RestartTask")
               .obj();
  auto running = status_in(p::running);
  auto worker = resolve_action(j, running, failed(j, "worker", 0, 1));
  EXPECT_EQ(worker.action, a::restart_task);
  EXPECT_EQ(worker.source, action_source::task_policy);
  EXPECT_EQ(worker.policy_index, 0u);
  auto ps = resolve_action(j, running, failed(j, "ps", 0, 1));
  EXPECT_EQ(ps.action, a::abort_job);
  EXPECT_EQ(ps.source, action_source::job_policy);
  // A job-level event never reads task policies.
  auto jt = make_job("tf").task("worker", 2).on_task().on("Unknown", "RestartJob").obj();
  EXPECT_EQ(resolve_action(jt, running, unknown()).action, a::sync_job);
}

TEST(JobLifecycleScenario, AnyEventPolicy) {
  auto j = make_job("any").on("*", "RestartJob").task("worker", 2).obj();
  auto running = status_in(p::running);
  for (auto e : {failed(j, "worker", 0, 1), evicted(j, "worker", 0), unknown(),
                 of_task(job_event::task_completed, "worker"),
                 of_task(job_event::task_failed, "worker"),
                 of_task(job_event::job_updated, "")})
    EXPECT_EQ(resolve_action(j, running, e).action, a::restart_job) << to_string(e.event);
  // Internal events never reach policies; PodPending needs a policy with a timeout.
  for (auto ev : {job_event::out_of_sync, job_event::pod_running, job_event::pod_pending})
    EXPECT_EQ(resolve_action(j, running, of_task(ev, "worker")).action, a::sync_job)
        << to_string(ev);
  auto k = make_job("any").on("*", "RestartJob", minutes(2)).task("worker", 2).obj();
  auto pending_pod = of_task(job_event::pod_pending, "worker");
  auto resolved = resolve_action(k, running, pending_pod);
  EXPECT_EQ(resolved.action, a::restart_job);
  EXPECT_EQ(resolved.delay, minutes(2));
  // Which jobs need PodPending raised for their new pods: those whose policies act on it.
  EXPECT_FALSE(acts_on_pod_pending(j));  // "*" without a timeout.
  EXPECT_TRUE(acts_on_pod_pending(k));   // "*" with one.
  EXPECT_TRUE(acts_on_pod_pending(
      make_job("t").task("worker", 2).on_task().on("PodPending", "RestartJob", minutes(1)).obj()));
  EXPECT_FALSE(acts_on_pod_pending(make_job("f").on("PodFailed", "RestartJob", minutes(1))
                                       .task("worker", 2).obj()));
  // A command's action goes through whatever the policies say.
  EXPECT_EQ(resolve_action(j, running, command(a::abort_job)).action, a::abort_job);
  EXPECT_EQ(resolve_action(j, running, command(a::abort_job)).source, action_source::command);
}

TEST(JobLifecycleScenario, PodPendingTimeoutIsDelayedAndCancelledByTheNextPodEvent) {
  auto j = make_job("stuck")
               .on_events({"PodPending", "PodEvicted"}, "RestartPod")
               .task("worker", 2)
               .obj();
  auto running = status_in(p::running);
  auto e = of_task(job_event::pod_pending, "worker");
  e.pod = "stuck-worker-1";
  e.pod_state = pod_phase::pending;
  // Without a timeout the PodPending event falls through to SyncJob.
  EXPECT_EQ(resolve_action(j, running, e).action, a::sync_job);

  auto k = make_job("stuck").on("PodPending", "RestartPod", minutes(5)).task("worker", 2).obj();
  auto delayed = resolve_action(k, running, e);
  EXPECT_EQ(delayed.action, a::restart_pod);
  EXPECT_EQ(delayed.delay, minutes(5));
  // The pod starts: the delay is cancelled. A new pod's PodPending (other uid) does not cancel.
  EXPECT_TRUE(pod_event_cancels_delay(job_event::pod_pending, job_event::pod_running, true));
  EXPECT_TRUE(pod_event_cancels_delay(job_event::pod_pending, job_event::pod_evicted, true));
  EXPECT_FALSE(pod_event_cancels_delay(job_event::pod_pending, job_event::pod_running, false));
  EXPECT_FALSE(pod_event_cancels_delay(job_event::pod_pending, job_event::pod_pending, true));
  EXPECT_TRUE(pod_event_cancels_delay(job_event::pod_failed, job_event::pod_running, true));
  EXPECT_FALSE(pod_event_cancels_delay(job_event::pod_failed, job_event::pod_evicted, true));
  EXPECT_FALSE(pod_event_cancels_delay(job_event::pod_evicted, job_event::task_failed, true));

  // Still pending after five minutes: the controller runs the action.
  auto t = next_state(k, running, pods_of("worker:RP"), delayed, t0);
  EXPECT_EQ(t.status.phase, p::restarting);
  EXPECT_EQ(describe(t.kill), "pod stuck-worker-1");
  EXPECT_EQ(letters(t.status), "RT");
  EXPECT_EQ(t.status.message, "pod stuck-worker-1 pending for 300s: RestartPod (1 of 2 retries)");
}

TEST(JobLifecycleScenario, ExecutedActionsCancelDelayedOnesOfTheirScope) {
  auto act = [](job_action action, std::string task, std::string pod) {
    resolved_action r;
    r.action = action;
    r.cause.task = std::move(task);
    r.cause.pod = std::move(pod);
    return r;
  };
  auto abort = act(a::abort_job, "", "");
  EXPECT_TRUE(action_cancels_delay(abort, act(a::restart_job, "w", "w-0")));
  EXPECT_FALSE(action_cancels_delay(abort, act(a::restart_task, "w", "w-0")));
  EXPECT_TRUE(action_cancels_delay(act(a::restart_task, "w", "w-1"),
                                   act(a::restart_task, "w", "w-0")));
  EXPECT_FALSE(action_cancels_delay(act(a::restart_task, "ps", "ps-0"),
                                    act(a::restart_task, "w", "w-0")));
  EXPECT_TRUE(action_cancels_delay(act(a::restart_pod, "w", "w-0"),
                                   act(a::restart_pod, "w", "w-0")));
  EXPECT_FALSE(action_cancels_delay(act(a::restart_pod, "w", "w-1"),
                                    act(a::restart_pod, "w", "w-0")));
  EXPECT_FALSE(action_cancels_delay(act(a::sync_job, "", ""), act(a::restart_job, "", "")));
}

TEST(JobLifecycleScenario, EventsOfOtherIncarnationsSync) {
  auto j = tensorflow_job();
  auto s = status_in(p::running);
  s.version = 2;
  auto e = evicted(j, "worker", 0);
  e.job_version = 2;
  EXPECT_EQ(resolve_action(j, s, e).action, a::restart_job);
  e.job_version = 1;
  EXPECT_EQ(resolve_action(j, s, e).source, action_source::outdated);
  e.job_version = 2;
  e.job_uid = object_uid("11111111-2222-4333-8444-555555555555");
  EXPECT_EQ(resolve_action(j, s, e).source, action_source::other_job);
  e.job_uid = j.meta.uid;
  EXPECT_EQ(resolve_action(j, s, e).source, action_source::job_policy);
  // A job-level event carries no version and keeps its policy after restarts.
  auto jp = make_job("tf").on("Unknown", "RestartJob").task("worker", 2).obj();
  EXPECT_EQ(resolve_action(jp, s, unknown()).action, a::restart_job);
}

TEST(JobLifecycleScenario, TtlSecondsAfterFinished) {
  auto ttl = make_job("done").task("t", 1).obj();
  ttl.ttl_seconds_after_finished = 600;
  auto done = status_in(p::completed);
  done.last_transition_time = t0;
  EXPECT_EQ(deletion_due(ttl, done), t0 + minutes(10));
  EXPECT_FALSE(is_due_for_deletion(ttl, done, t0 + minutes(10) - seconds(1)));
  EXPECT_TRUE(is_due_for_deletion(ttl, done, t0 + minutes(10)));
  for (auto phase : {p::failed, p::terminated}) {
    done.phase = phase;
    EXPECT_EQ(deletion_due(ttl, done), t0 + minutes(10)) << to_string(phase);
  }
  // Not finished (Aborted can be resumed), no TTL, or no transition time: never.
  for (auto phase : {p::aborted, p::running, p::completing}) {
    done.phase = phase;
    EXPECT_EQ(deletion_due(ttl, done), std::nullopt) << to_string(phase);
  }
  done.phase = p::completed;
  auto no_ttl = ttl;
  no_ttl.ttl_seconds_after_finished.reset();
  EXPECT_EQ(deletion_due(no_ttl, done), std::nullopt);
  auto at_once = ttl;
  at_once.ttl_seconds_after_finished = 0;
  EXPECT_TRUE(is_due_for_deletion(at_once, done, t0));
  done.last_transition_time = {};
  EXPECT_EQ(deletion_due(ttl, done), std::nullopt);
}

// ---------------------------------------------------------------------------------------------
// Events from pod changes

TEST(JobLifecyclePodEvents, FollowVolcanosPodHandlers) {
  using pp = pod_phase;
  struct row {
    pod_change change;
    pp from, to;
    bool out_of_sync, completed, task_failed;
    job_event event;
  };
  const row rows[] = {
      {pod_change::added, pp::pending, pp::pending, false, false, false, job_event::pod_pending},
      {pod_change::added, pp::pending, pp::pending, true, false, false, job_event::out_of_sync},
      {pod_change::deleted, pp::running, pp::running, false, false, false,
       job_event::pod_evicted},
      {pod_change::deleted, pp::running, pp::running, true, false, false,
       job_event::out_of_sync},
      {pod_change::updated, pp::running, pp::failed, false, false, false, job_event::pod_failed},
      {pod_change::updated, pp::failed, pp::failed, false, false, false, job_event::out_of_sync},
      {pod_change::updated, pp::running, pp::succeeded, false, true, false,
       job_event::task_completed},
      {pod_change::updated, pp::running, pp::succeeded, false, false, false,
       job_event::out_of_sync},
      {pod_change::updated, pp::pending, pp::running, false, false, true,
       job_event::pod_running},
      {pod_change::updated, pp::running, pp::running, false, false, true,
       job_event::task_failed},
      {pod_change::updated, pp::pending, pp::pending, false, false, true,
       job_event::task_failed},
      {pod_change::updated, pp::running, pp::pending, false, false, false,
       job_event::pod_pending},
      {pod_change::updated, pp::running, pp::failed, true, false, false, job_event::out_of_sync},
      {pod_change::updated, pp::running, pp::unknown, false, false, false,
       job_event::out_of_sync},
  };
  for (std::size_t i = 0; i < std::size(rows); ++i) {
    const auto& r = rows[i];
    pod_change_info c{r.change, r.from, r.to, r.out_of_sync, r.completed, r.task_failed};
    EXPECT_EQ(to_string(pod_event(c)), to_string(r.event)) << "row " << i;
  }
}

TEST(JobLifecyclePodEvents, TaskCompletedAndTaskFailed) {
  auto j = tensorflow_job();
  EXPECT_TRUE(task_completed(j, pods_of("ps:R worker:SS"), "worker"));
  EXPECT_FALSE(task_completed(j, pods_of("ps:R worker:SR"), "worker"));
  EXPECT_FALSE(task_completed(j, pods_of("ps:S"), "chief"));
  job_task t = j.tasks[1];
  EXPECT_FALSE(task_failed(t, 2));  // Unset maxRetry: 3.
  EXPECT_TRUE(task_failed(t, 3));
  t.max_retry = 5;
  EXPECT_FALSE(task_failed(t, 4));
  EXPECT_TRUE(task_failed(t, 5));
  t.max_retry = -1;
  EXPECT_FALSE(task_failed(t, 100));
}

} // namespace
// dependsOn (Volcano's waitDependsOnTaskMeetCondition): a task's pods are made once the tasks it
// names have their minAvailable running or succeeded; all of them, or any one with iteration
// "any" and several names.
TEST(JobLifecycleDependencies, ATaskWaitsForTheTasksItDependsOn) {
  auto j = make_job("pipeline")
               .task("prepare", 2, 1)
               .task("train", 4)
               .task("serve", 1)
               .task("report", 1)
               .obj();
  j.tasks[1].depends_on = {"prepare"};
  j.tasks[2].depends_on = {"prepare", "train"};
  j.tasks[3].depends_on = {"prepare", "train"};
  j.tasks[3].depends_on_iteration = "any";
  struct row {
    std::string pods;
    bool train, serve, report;
  };
  for (const auto& r : std::vector<row>{
           {"", false, false, false},
           {"prepare:PP", false, false, false},
           {"prepare:PR", true, false, true},    // prepare's minAvailable is 1.
           {"prepare:SP", true, false, true},    // Succeeded counts as ready.
           {"prepare:FF", false, false, false},  // Failed does not.
           {"prepare:R train:RRRP", true, false, true},
           {"prepare:R train:RRRR", true, true, true},
           {"prepare:P train:RRRR", false, false, true},  // "any": train alone suffices.
           {"prepare:T train:SSSS", false, false, true},  // Terminating is not ready.
       }) {
    SCOPED_TRACE(r.pods);
    auto pods = pods_of(r.pods);
    EXPECT_TRUE(task_dependencies_ready(j, 0, pods));
    EXPECT_EQ(task_dependencies_ready(j, 1, pods), r.train);
    EXPECT_EQ(task_dependencies_ready(j, 2, pods), r.serve);
    EXPECT_EQ(task_dependencies_ready(j, 3, pods), r.report);
  }
  EXPECT_TRUE(has_task_dependencies(j));
  EXPECT_FALSE(pods_are_expansion(j, job_status{}));
  EXPECT_FALSE(has_task_dependencies(tensorflow_job()));
}

} // namespace phalanx::scheduler
