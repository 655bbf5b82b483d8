#include "scheduler/job_lifecycle.hpp"

#include "scheduler/job.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <string>

namespace phalanx::scheduler {

namespace {

constexpr std::array<std::string_view, 11> event_names{
    "*",          "PodPending", "PodRunning", "PodFailed",     "PodEvicted", "Unknown",
    "TaskCompleted", "TaskFailed", "OutOfSync", "CommandIssued", "JobUpdated"};
static_assert(event_names.size() == std::size_t(job_event_last) + 1);

constexpr std::array<std::string_view, 8> action_names{
    "SyncJob",  "RestartJob",  "RestartTask",  "RestartPod",
    "AbortJob", "CompleteJob", "TerminateJob", "ResumeJob"};
static_assert(action_names.size() == std::size_t(job_action_last) + 1);

constexpr std::array<std::string_view, 7> source_names{
    "NoPolicy", "Command", "InternalEvent", "OtherJob", "Outdated", "TaskPolicy", "JobPolicy"};
static_assert(source_names.size() == std::size_t(action_source_last) + 1);

constexpr std::array<std::string_view, 4> kill_scope_names{"None", "Job", "Task", "Pod"};
static_assert(kill_scope_names.size() == std::size_t(kill_scope_last) + 1);

template <std::size_t N>
std::string_view name_at(const std::array<std::string_view, N>& names, std::size_t i) noexcept {
  return i < N ? names[i] : std::string_view("Invalid");
}

template <typename Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names,
                               std::string_view text) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text)
      return Enum(i);
  return std::nullopt;
}

// Volcano's isInternalEvent: no policy applies to these.
bool is_internal(job_event e) noexcept {
  return e == job_event::out_of_sync || e == job_event::command_issued ||
         e == job_event::pod_running;
}

bool is_pod_event(job_event e) noexcept {
  return e == job_event::pod_pending || e == job_event::pod_running ||
         e == job_event::pod_failed || e == job_event::pod_evicted;
}

bool names_event(const lifecycle_policy& p, std::string_view event) {
  auto named = [&](const std::string& e) { return e == event || e == "*"; };
  return (!p.event.empty() && named(p.event)) ||
         std::any_of(p.events.begin(), p.events.end(), named);
}

// Volcano's policy loop (the same for a task's and the job's policies): the first policy that
// names the event ("*" included; PodPending only with a timeout) or the exit code wins.
bool match_policies(const std::vector<lifecycle_policy>& policies, const job_event_info& e,
                    resolved_action& out) {
  for (std::size_t i = 0; i < policies.size(); ++i) {
    const auto& p = policies[i];
    bool by_event = names_event(p, to_string(e.event)) &&
                    (e.event != job_event::pod_pending || p.timeout.has_value());
    bool by_exit_code = p.exit_code && e.exit_code && *p.exit_code == *e.exit_code;
    if (!by_event && !by_exit_code)
      continue;
    out.action = job_action_from_string(p.action).value_or(job_action::sync_job);
    out.delay = p.timeout.value_or(duration::zero());
    out.policy_index = i;
    return true;
  }
  return false;
}

// Which delayed actions an executed one supersedes (Volcano's GetActionType).
kill_scope scope_of(job_action a) noexcept {
  switch (a) {
    case job_action::restart_task:
      return kill_scope::task;
    case job_action::restart_pod:
      return kill_scope::pod;
    default:
      return kill_scope::job;
  }
}

int32_t total_replicas(const job& j) noexcept {
  int32_t n = 0;
  for (const auto& t : j.tasks)
    n += t.replicas;
  return n;
}

int32_t total_task_min_available(const job& j) noexcept {
  int32_t n = 0;
  for (const auto& t : j.tasks)
    n += task_min_available(t);
  return n;
}

const task_pods* find_task(const std::vector<task_pods>& tasks, std::string_view name) noexcept {
  for (const auto& t : tasks)
    if (t.counts.task == name)
      return &t;
  return nullptr;
}

task_pods* find_task(std::vector<task_pods>& tasks, std::string_view name) noexcept {
  for (auto& t : tasks)
    if (t.counts.task == name)
      return &t;
  return nullptr;
}

struct totals {
  int32_t pending = 0, running = 0, succeeded = 0, failed = 0, unknown = 0, terminating = 0;
  int32_t alive() const noexcept { return pending + running + unknown + terminating; }
};

totals sum(const std::vector<task_pods>& tasks) noexcept {
  totals s;
  for (const auto& t : tasks) {
    s.pending += t.counts.pending;
    s.running += t.counts.running;
    s.succeeded += t.counts.succeeded;
    s.failed += t.counts.failed;
    s.unknown += t.counts.unknown;
    s.terminating += t.terminating;
  }
  return s;
}

// The counts after a kill: the killed pods are terminating.
void kill_all_of(task_pods& t, bool keep_finished) noexcept {
  auto& c = t.counts;
  t.terminating += c.pending + c.running + c.unknown;
  c.pending = c.running = c.unknown = 0;
  if (!keep_finished) {
    t.terminating += c.succeeded + c.failed;
    c.succeeded = c.failed = 0;
  }
}

void kill_one(task_pods& t, pod_phase phase) noexcept {
  int32_t* count = nullptr;
  switch (phase) {
    case pod_phase::pending:
      count = &t.counts.pending;
      break;
    case pod_phase::running:
      count = &t.counts.running;
      break;
    case pod_phase::succeeded:
      count = &t.counts.succeeded;
      break;
    case pod_phase::failed:
      count = &t.counts.failed;
      break;
    case pod_phase::unknown:
      count = &t.counts.unknown;
      break;
  }
  if (count != nullptr && *count > 0) {
    --*count;
    ++t.terminating;
  }
}

// The pods a sync would create: per task of the job, the indices below replicas without a pod.
// Adds an entry for a task that has no pods yet.
std::vector<int32_t> missing_pods(const job& j, std::vector<task_pods>& tasks) {
  std::vector<int32_t> missing(j.tasks.size(), 0);
  for (std::size_t i = 0; i < j.tasks.size(); ++i) {
    auto name = task_name(j.tasks[i], i);
    auto* t = find_task(tasks, name);
    if (t == nullptr) {
      tasks.push_back({});
      t = &tasks.back();
      t->counts.task = name;
    }
    const auto& c = t->counts;
    int32_t present = c.pending + c.running + c.succeeded + c.failed + c.unknown + t->terminating;
    missing[i] = std::max(0, j.tasks[i].replicas - present);
  }
  return missing;
}

void add_created(const job& j, std::vector<task_pods>& tasks, const std::vector<int32_t>& missing) {
  for (std::size_t i = 0; i < j.tasks.size(); ++i)
    if (missing[i] > 0)
      find_task(tasks, task_name(j.tasks[i], i))->counts.pending += missing[i];
}

std::string format_duration(duration d) {
  using namespace std::chrono;
  if (d % seconds(1) == duration::zero())
    return std::to_string(duration_cast<seconds>(d).count()) + "s";
  return std::to_string(duration_cast<milliseconds>(d).count()) + "ms";
}

// What happened, for the message of an action's transition: "pod tf-worker-1 evicted".
std::string cause_text(const resolved_action& a) {
  const auto& e = a.cause;
  switch (e.event) {
    case job_event::pod_failed: {
      std::string s = "pod " + e.pod + " failed";
      if (e.exit_code)
        s += " with exit code " + std::to_string(*e.exit_code);
      return s;
    }
    case job_event::pod_evicted:
      return "pod " + e.pod + " evicted";
    case job_event::pod_pending:
      if (a.delay > duration::zero())
        return "pod " + e.pod + " pending for " + format_duration(a.delay);
      return "pod " + e.pod + " pending";
    case job_event::pod_running:
      return "pod " + e.pod + " running";
    case job_event::unknown:
      return "pod group Unknown: part of the gang cannot be scheduled while other pods run";
    case job_event::task_completed:
      return "task " + e.task + " completed";
    case job_event::task_failed:
      return "task " + e.task + " failed: its pods restarted too often";
    case job_event::command_issued:
      return "command issued";
    case job_event::job_updated:
      return "job updated";
    case job_event::out_of_sync:
    case job_event::any:
      break;
  }
  // An exit code matched on an event of another kind.
  if (e.exit_code && !e.pod.empty())
    return "pod " + e.pod + " exited with code " + std::to_string(*e.exit_code);
  return "job synced";
}

std::string action_text(const resolved_action& a) {
  std::string s(to_string(a.action));
  if (a.action == job_action::restart_task && !a.cause.task.empty())
    s += " " + a.cause.task;
  return s;
}

// " (1 of 2 retries)": maxRetry counts the attempts, so a job restarts maxRetry - 1 times and
// the restart that reaches maxRetry ends in Failed.
std::string retries_text(int32_t retry_count, int32_t max_retry) {
  if (retry_count < max_retry)
    return " (" + std::to_string(retry_count) + " of " + std::to_string(max_retry - 1) +
           " retries)";
  return " (maxRetry " + std::to_string(max_retry) + " reached)";
}

// The decision of one step before it is written into a transition.
struct step {
  job_phase phase;
  std::string reason;
  std::string message;
};

// Volcano's pendingState default: Running once minAvailable pods run or finished.
step sync_pending(const job& j, const totals& after) {
  int32_t min = job_min_available(j);
  int32_t started = after.running + after.succeeded + after.failed;
  if (min <= started)
    return {job_phase::running, "MinAvailableMet",
            std::to_string(started) + " pods running or finished, minAvailable " +
                std::to_string(min)};
  return {job_phase::pending, {}, {}};
}

// Volcano's runningState default.
step sync_running(const job& j, const std::vector<task_pods>& tasks, const totals& after) {
  int32_t replicas = total_replicas(j);
  if (replicas == 0)  // Scaled down to nothing: the phase stays.
    return {job_phase::running, {}, {}};
  int32_t min = job_min_available(j);
  auto n = [](int32_t v) { return std::to_string(v); };
  const auto& min_success = j.min_success;
  if (min_success && after.succeeded >= *min_success)
    return {job_phase::completed, "MinSuccessMet",
            n(after.succeeded) + " pods succeeded, minSuccess " + n(*min_success)};
  if (after.succeeded + after.failed == replicas) {
    std::string finished = "all " + n(replicas) + " pods finished: ";
    if (min >= total_task_min_available(j)) {
      for (std::size_t i = 0; i < j.tasks.size(); ++i) {
        auto name = task_name(j.tasks[i], i);
        const auto* t = find_task(tasks, name);
        int32_t task_min = task_min_available(j.tasks[i]);
        if (t != nullptr && t->counts.succeeded < task_min)
          return {job_phase::failed, "TaskMinAvailableNotMet",
                  finished + "task " + name + " has " + n(t->counts.succeeded) +
                      " succeeded, minAvailable " + n(task_min)};
      }
    }
    if (min_success && after.succeeded < *min_success)
      return {job_phase::failed, "MinSuccessNotMet",
              finished + n(after.succeeded) + " succeeded, minSuccess " + n(*min_success)};
    if (after.succeeded >= min)
      return {job_phase::completed, "PodsSucceeded",
              finished + n(after.succeeded) + " succeeded, minAvailable " + n(min)};
    return {job_phase::failed, "MinAvailableNotMet",
            finished + n(after.succeeded) + " succeeded, minAvailable " + n(min)};
  }
  if (after.pending > replicas - min)
    return {job_phase::pending, "PodsPending",
            n(after.pending) + " pods pending, more than the " + n(replicas - min) +
                " that minAvailable " + n(min) + " of " + n(replicas) + " allows"};
  return {job_phase::running, {}, {}};
}

// Volcano's restartingUpdateStatus.
step restart_check(const job& j, int32_t retry_count, const totals& after) {
  auto n = [](int32_t v) { return std::to_string(v); };
  if (retry_count >= j.max_retry)
    return {job_phase::failed, "MaxRetryReached",
            "retryCount " + n(retry_count) + " reached maxRetry " + n(j.max_retry)};
  int32_t replicas = total_replicas(j);
  int32_t min = job_min_available(j);
  if (replicas - after.terminating >= min)
    return {job_phase::pending, "Restarted",
            n(after.terminating) + " of " + n(replicas) + " pods terminating, minAvailable " +
                n(min) + ": creating pods again"};
  return {job_phase::restarting, {}, {}};
}

step stopped_when_none_alive(job_phase stay, job_phase done, const totals& after) {
  if (after.alive() != 0)
    return {stay, {}, {}};
  return {done, "PodsStopped", "no pod pending, running or terminating"};
}

} // namespace

std::string_view to_string(job_event e) noexcept { return name_at(event_names, std::size_t(e)); }

std::optional<job_event> job_event_from_string(std::string_view text) noexcept {
  return parse_name<job_event>(event_names, text);
}

std::string_view to_string(job_action a) noexcept {
  return name_at(action_names, std::size_t(a));
}

std::optional<job_action> job_action_from_string(std::string_view text) noexcept {
  return parse_name<job_action>(action_names, text);
}

std::string_view to_string(action_source s) noexcept {
  return name_at(source_names, std::size_t(s));
}

std::string_view to_string(kill_scope s) noexcept {
  return name_at(kill_scope_names, std::size_t(s));
}

void append_condition(std::vector<job_condition>& conditions, const job_condition& c) {
  std::erase_if(conditions, [&](const job_condition& old) { return old.status == c.status; });
  conditions.push_back(c);
}

bool acts_on_pod_pending(const job& j) {
  auto acts = [](const std::vector<lifecycle_policy>& policies) {
    return std::any_of(policies.begin(), policies.end(), [](const lifecycle_policy& p) {
      return p.timeout.has_value() && names_event(p, to_string(job_event::pod_pending));
    });
  };
  return acts(j.policies) ||
         std::any_of(j.tasks.begin(), j.tasks.end(),
                     [&](const job_task& t) { return acts(t.policies); });
}

resolved_action resolve_action(const job& j, const job_status& status, const job_event_info& e) {
  resolved_action r;
  r.cause = e;
  if (e.command) {
    r.action = *e.command;
    r.source = action_source::command;
    return r;
  }
  if (is_internal(e.event)) {
    r.source = action_source::internal_event;
    return r;
  }
  if (e.job_uid && !(*e.job_uid == j.meta.uid)) {
    r.source = action_source::other_job;
    return r;
  }
  if (e.job_version && *e.job_version < status.version) {
    r.source = action_source::outdated;
    return r;
  }
  if (!e.task.empty()) {
    for (std::size_t i = 0; i < j.tasks.size(); ++i) {
      if (task_name(j.tasks[i], i) != e.task)
        continue;
      if (match_policies(j.tasks[i].policies, e, r)) {
        r.source = action_source::task_policy;
        return r;
      }
      break;
    }
  }
  if (match_policies(j.policies, e, r)) {
    r.source = action_source::job_policy;
    return r;
  }
  return r;
}

bool pod_event_cancels_delay(job_event delayed, job_event incoming, bool same_pod_uid) noexcept {
  if (!is_pod_event(incoming) || incoming == job_event::pod_pending)
    return false;
  if (delayed == job_event::pod_pending)
    return same_pod_uid;
  return (delayed == job_event::pod_failed || delayed == job_event::pod_evicted) &&
         incoming == job_event::pod_running;
}

bool action_cancels_delay(const resolved_action& done, const resolved_action& delayed) noexcept {
  if (done.action == job_action::sync_job)
    return false;
  auto scope = scope_of(done.action);
  if (scope != scope_of(delayed.action))
    return false;
  if (scope == kill_scope::task)
    return done.cause.task == delayed.cause.task;
  if (scope == kill_scope::pod)
    return done.cause.pod == delayed.cause.pod;
  return true;
}

bool task_dependencies_ready(const job& j, std::size_t task, const job_pods& pods) {
  const auto& t = j.tasks.at(task);
  if (t.depends_on.empty())
    return true;
  auto ready = [&](const std::string& name) {
    for (std::size_t i = 0; i < j.tasks.size(); ++i) {
      if (task_name(j.tasks[i], i) != name)
        continue;
      int32_t up = 0;
      for (const auto& p : pods.tasks)
        if (p.counts.task == name)
          up = p.counts.running + p.counts.succeeded;
      return up >= task_min_available(j.tasks[i]);
    }
    return false;
  };
  if (t.depends_on.size() > 1 && t.depends_on_iteration == "any")
    return std::any_of(t.depends_on.begin(), t.depends_on.end(), ready);
  return std::all_of(t.depends_on.begin(), t.depends_on.end(), ready);
}

job_transition initial_transition(const job& j, timestamp now) {
  job_transition t;
  t.status.phase = job_phase::pending;
  t.status.min_available = job_min_available(j);
  t.status.last_transition_time = now;
  t.phase_changed = true;
  t.condition = job_condition{job_phase::pending, now};
  append_condition(t.status.conditions, *t.condition);
  return t;
}

synced_phase phase_by_sync(const job& j, job_phase current,
                           const std::vector<task_counts>& tasks) {
  std::vector<task_pods> counted;
  counted.reserve(tasks.size());
  for (const auto& t : tasks)
    counted.push_back({t, 0});
  auto after = sum(counted);
  auto s = current == job_phase::running ? sync_running(j, counted, after)
                                         : sync_pending(j, after);
  if (s.phase == current)
    return {current, {}, {}};
  return {s.phase, std::move(s.reason), std::move(s.message)};
}

job_transition next_state(const job& j, const job_status& current, const job_pods& pods,
                          const resolved_action& action, timestamp now) {
  job_transition t;
  std::vector<task_pods> tasks = pods.tasks;
  int32_t retry_count = current.retry_count;
  step next{current.phase, {}, {}};

  auto kill_job = [&](bool keep_finished) {
    // At the last retry the finished pods stay, whatever the action asked (Volcano's killPods).
    keep_finished = keep_finished || current.retry_count >= j.max_retry - 1;
    for (auto& task : tasks)
      kill_all_of(task, keep_finished);
    t.kill = {kill_scope::job, {}, {}, keep_finished};
    t.delete_pod_group = true;
    ++t.status.version;
  };
  auto kill_target = [&] {
    const auto& cause = action.cause;
    if (action.action == job_action::restart_task) {
      t.kill = {kill_scope::task, cause.task, {}, false};
      if (auto* task = find_task(tasks, cause.task))
        kill_all_of(*task, false);
    } else {
      t.kill = {kill_scope::pod, cause.task, cause.pod, false};
      auto* task = find_task(tasks, cause.task);
      if (task != nullptr && cause.pod_state)
        kill_one(*task, *cause.pod_state);
    }
  };
  auto retry = [&] {
    ++retry_count;
    t.retry_increment = 1;
  };
  // The transition an action causes by itself (Restarting, Aborting, ...).
  auto by_action = [&](job_phase to, bool with_retries) {
    std::string message = cause_text(action) + ": " + action_text(action);
    if (with_retries)
      message += retries_text(retry_count, j.max_retry);
    next = {to, std::string(to_string(action.action)), std::move(message)};
  };
  // A sync: the pods a sync may create count as pending while the phase is decided, and are
  // created only if the job goes on (not into Completed or Failed).
  auto sync = [&](auto decide) {
    auto missing = missing_pods(j, tasks);
    bool creates = pods.pod_group_admitted &&
                   std::any_of(missing.begin(), missing.end(), [](int32_t m) { return m > 0; });
    auto with_created = tasks;
    if (creates)
      add_created(j, with_created, missing);
    next = decide(with_created, sum(with_created));
    if (creates && !is_finished(next.phase)) {
      tasks = std::move(with_created);
      t.create_missing_pods = true;
    }
  };

  t.status = current;
  switch (current.phase) {
    case job_phase::pending:
    case job_phase::running:
      switch (action.action) {
        case job_action::restart_job:
          kill_job(false);
          retry();
          by_action(job_phase::restarting, true);
          break;
        case job_action::restart_task:
        case job_action::restart_pod:
          kill_target();
          retry();
          by_action(job_phase::restarting, true);
          break;
        case job_action::abort_job:
          kill_job(true);
          by_action(job_phase::aborting, false);
          break;
        case job_action::complete_job:
          kill_job(true);
          by_action(job_phase::completing, false);
          break;
        case job_action::terminate_job:
          kill_job(true);
          by_action(job_phase::terminating, false);
          break;
        case job_action::sync_job:
        case job_action::resume_job:
          if (current.phase == job_phase::pending)
            sync([&](const std::vector<task_pods>&, const totals& after) {
              return sync_pending(j, after);
            });
          else
            sync([&](const std::vector<task_pods>& counted, const totals& after) {
              return sync_running(j, counted, after);
            });
          break;
      }
      break;
    case job_phase::restarting:
      switch (action.action) {
        case job_action::sync_job:
          if (retry_count >= j.max_retry)
            next = restart_check(j, retry_count, sum(tasks));
          else
            sync([&](const std::vector<task_pods>&, const totals& after) {
              return restart_check(j, retry_count, after);
            });
          break;
        case job_action::restart_task:
        case job_action::restart_pod:
          kill_target();
          next = restart_check(j, retry_count, sum(tasks));
          break;
        default:
          kill_job(false);
          next = restart_check(j, retry_count, sum(tasks));
          break;
      }
      break;
    case job_phase::aborting:
    case job_phase::aborted:
      kill_job(true);
      if (action.action == job_action::resume_job) {
        retry();
        by_action(job_phase::restarting, true);
      } else if (current.phase == job_phase::aborting) {
        next = stopped_when_none_alive(job_phase::aborting, job_phase::aborted, sum(tasks));
      }
      break;
    case job_phase::completing:
      kill_job(true);
      next = stopped_when_none_alive(job_phase::completing, job_phase::completed, sum(tasks));
      break;
    case job_phase::terminating:
      kill_job(true);
      next = stopped_when_none_alive(job_phase::terminating, job_phase::terminated, sum(tasks));
      break;
    case job_phase::completed:
    case job_phase::failed:
    case job_phase::terminated:
      kill_job(true);
      break;
  }

  auto after = sum(tasks);
  auto& s = t.status;
  s.min_available = job_min_available(j);
  s.pending = after.pending;
  s.running = after.running;
  s.succeeded = after.succeeded;
  s.failed = after.failed;
  s.unknown = after.unknown;
  s.terminating = after.terminating;
  s.retry_count = retry_count;
  s.tasks.clear();
  for (const auto& task : tasks) {
    const auto& c = task.counts;
    if (c.pending + c.running + c.succeeded + c.failed + c.unknown > 0)
      s.tasks.push_back(c);
  }
  if (next.phase != current.phase) {
    s.phase = next.phase;
    s.reason = std::move(next.reason);
    s.message = std::move(next.message);
    s.last_transition_time = now;
    t.phase_changed = true;
    t.condition = job_condition{next.phase, now};
    append_condition(s.conditions, *t.condition);
  }
  // Volcano's killPods, which every kill goes through (killJob and killTarget alike), writes
  // it; a sync leaves it as it was.
  if (t.kill.scope != kill_scope::none)
    s.running_duration = running_duration(j, s);
  return t;
}

bool is_legal_transition(job_phase from, job_phase to) noexcept {
  using p = job_phase;
  switch (from) {
    case p::pending:
      return to == p::running || to == p::restarting || to == p::aborting ||
             to == p::completing || to == p::terminating;
    case p::running:
      return to == p::pending || to == p::restarting || to == p::aborting ||
             to == p::completing || to == p::terminating || to == p::completed ||
             to == p::failed;
    case p::restarting:
      return to == p::pending || to == p::failed;
    case p::aborting:
      return to == p::aborted || to == p::restarting;
    case p::aborted:
      return to == p::restarting;
    case p::completing:
      return to == p::completed;
    case p::terminating:
      return to == p::terminated;
    case p::completed:
    case p::failed:
    case p::terminated:
      return false;
  }
  return false;
}

bool is_finished(job_phase p) noexcept {
  return p == job_phase::completed || p == job_phase::failed || p == job_phase::terminated;
}

std::optional<timestamp> deletion_due(const job& j, const job_status& s) noexcept {
  if (!is_finished(s.phase) || !j.ttl_seconds_after_finished ||
      s.last_transition_time == timestamp{})
    return std::nullopt;
  return s.last_transition_time + std::chrono::seconds(*j.ttl_seconds_after_finished);
}

bool is_due_for_deletion(const job& j, const job_status& s, timestamp now) noexcept {
  auto due = deletion_due(j, s);
  return due && *due <= now;
}

bool task_completed(const job& j, const job_pods& pods, std::string_view task) noexcept {
  const auto* spec = task_named(j, task);
  if (spec == nullptr)
    return false;
  const auto* t = find_task(pods.tasks, task);
  return spec->replicas > 0 && t != nullptr && t->counts.succeeded >= spec->replicas;
}

bool task_failed(const job_task& task, int32_t restarts) noexcept {
  int32_t max_retry = task.max_retry.value_or(0);
  if (task.replicas == 0 || max_retry < 0)
    return false;
  if (max_retry == 0)  // Volcano's webhook makes an unset (0) task maxRetry 3.
    max_retry = 3;
  return restarts >= max_retry;
}

job_event pod_event(const pod_change_info& c) noexcept {
  if (c.out_of_sync)
    return job_event::out_of_sync;
  switch (c.change) {
    case pod_change::added:
      return job_event::pod_pending;
    case pod_change::deleted:
      return job_event::pod_evicted;
    case pod_change::updated:
      break;
  }
  switch (c.new_phase) {
    case pod_phase::failed:
      if (c.old_phase != pod_phase::failed)
        return job_event::pod_failed;
      break;
    case pod_phase::succeeded:
      if (c.old_phase != pod_phase::succeeded && c.task_completed)
        return job_event::task_completed;
      break;
    case pod_phase::running:
      if (c.old_phase != pod_phase::running)
        return job_event::pod_running;
      if (c.task_failed)
        return job_event::task_failed;
      break;
    case pod_phase::pending:
      if (c.old_phase != pod_phase::pending)
        return job_event::pod_pending;
      if (c.task_failed)
        return job_event::task_failed;
      break;
    case pod_phase::unknown:
      break;
  }
  return job_event::out_of_sync;
}

} // namespace phalanx::scheduler
