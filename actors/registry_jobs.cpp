// The Volcano job controller of the standalone world (issue 29 §2). A job's pod that is evicted
// (deleted by a user or a preemptor, or lost with its node), fails, or completes its task
// raises Volcano's event (and Unknown when the gang is left below its minimum while pods run); scheduler::resolve_action finds the action the job's lifecycle
// policies name, and scheduler::next_state says what to do. The catalog executes it as suspend
// and resume do, and the phase it reaches is persisted with the job, not derived from its pods
// on a read.
//
// What is built: RestartJob (all pods killed and made again as a new incarnation, counted
// against maxRetry; the last retry ends in Failed with the finished pods kept), AbortJob (the
// job suspended, as `phalanxctl job suspend`), TerminateJob and CompleteJob (the unfinished pods
// killed, the job Terminated or Completed), each also after a policy's timeout (a PodPending
// policy acts on a pod still pending then). RestartTask and RestartPod are not: the job is told
// so in an event and syncs (docs/NOTES.md "The Volcano job lifecycle"). Nor is a sync's
// re-creation of a deleted pod (Volcano's syncJob makes missing pods again): a pod of a job
// stored as its expansion would first need a record of its own.
//
// A RestartJob is two durable steps. The first writes the job Restarting (its retry counted, its
// version raised) with every pod's deletion in one batch; the second writes the new
// incarnation's pods with the job Pending. A restart between the two finds the job Restarting
// with no pods, and finish_job_restarts makes the pods then: no pod is made twice, none is lost.

#include "actors/registry_internal.hpp"

#include "scheduler/job.hpp"
#include "scheduler/job_lifecycle.hpp"

#include <spdlog/spdlog.h>

#include <charconv>

namespace phalanx::actors::registry_detail {

namespace {

// A job's pods as the lifecycle sees them: per task, by phase; pods being deleted are
// terminating. Standalone makes every pod of a job at once (the gate holds the gang), so its
// PodGroup counts as admitted.
scheduler::job_pods pods_of_job(const registry_state& st, const group_entry* g) {
  scheduler::job_pods out;
  out.pod_group_admitted = true;
  if (g == nullptr)
    return out;
  std::map<std::string_view, scheduler::task_pods> tasks;
  for (auto id : g->pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end())
      continue;
    auto& t = tasks[p->second.pod->role.view()];
    t.counts.task = p->second.pod->role.str();
    if (p->second.delete_requested) {
      ++t.terminating;
      continue;
    }
    switch (p->second.phase()) {
      case scheduler::pod_phase::pending: ++t.counts.pending; break;
      case scheduler::pod_phase::running: ++t.counts.running; break;
      case scheduler::pod_phase::succeeded: ++t.counts.succeeded; break;
      case scheduler::pod_phase::failed: ++t.counts.failed; break;
      case scheduler::pod_phase::unknown: ++t.counts.unknown; break;
    }
  }
  for (auto& [name, t] : tasks)
    out.tasks.push_back(std::move(t));
  return out;
}

// A PodGroup Volcano shows Unknown: pods still run, but fewer than the job's minAvailable are
// running or done (the others failed or went).
bool below_minimum_while_running(const scheduler::job& j, const scheduler::job_pods& pods) {
  int32_t running = 0;
  int32_t succeeded = 0;
  for (const auto& t : pods.tasks) {
    running += t.counts.running;
    succeeded += t.counts.succeeded;
  }
  return running > 0 && running + succeeded < scheduler::job_min_available(j);
}

const group_entry* group_of_job(const registry_state& st, const registry_state::job_entry& j) {
  auto gang = st.group_ids.find(j.group_key);
  return gang == 0 ? nullptr : &st.groups.at(gang);
}

// The job's status to persist after a step: the transition's phase, retry count, version,
// reason, message and time, over the stored status (counts are derived on reads).
scheduler::job_status persisted_status(const registry_state::job_entry& j,
                                       const scheduler::job_transition& t) {
  auto s = j.status;
  s.phase = t.status.phase;
  s.retry_count = t.status.retry_count;
  s.version = t.status.version;
  if (t.phase_changed) {
    s.reason = t.status.reason;
    s.message = t.status.message;
    s.last_transition_time = t.status.last_transition_time;
  }
  return s;
}

void announce_job(self_ptr self, const std::string& key) {
  auto& st = self->state;
  if (auto i = st.jobs.find(key); i != st.jobs.end())
    announce(self, api::watch_event::type::modified, job_view(st, i->second));
}

void job_event(self_ptr self, const scheduler::job& j, std::string_view type,
               std::string_view reason, std::string_view message) {
  record_event(self, api::resource_kind::job, j.meta.namespace_name, j.meta.name, type, reason,
               message);
}

// The step after a kill, once the pods are gone: the lifecycle syncs the job. From Restarting
// its restart check gives Failed (retries used up) or Pending, and then the new incarnation's
// pods are made; Terminating, Completing and Aborting end in Terminated, Completed and Aborted.
void settle_after_kill(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  auto& j = i->second;
  if (j.job->suspended) {  // Aborted: shown as such while suspended, until a resume.
    j.acting = false;
    return;
  }
  const auto* g = group_of_job(st, j);
  auto current = job_status_of(st, j);
  scheduler::resolved_action sync;
  sync.action = scheduler::job_action::sync_job;
  sync.source = scheduler::action_source::internal_event;
  auto t = scheduler::next_state(*j.job, current, pods_of_job(st, g), sync, st.ctx->now());
  auto status = persisted_status(j, t);
  if (status.phase == scheduler::job_phase::restarting) {
    // Not here: delete_pods answers once the old pods are gone.
    spdlog::warn("job {}: still restarting after its pods were deleted", key);
    j.acting = false;
    return;
  }
  if (!t.phase_changed) {
    j.acting = false;
    return;
  }
  if (!t.create_missing_pods || status.phase != scheduler::job_phase::pending) {
    storage::write_batch batch;
    batch.put(storage::job_record{*j.job, status});
    persist(self, std::move(batch), [self, key, status](const phalanx::status& s) {
      auto& st = self->state;
      auto i = st.jobs.find(key);
      if (!s.ok() || i == st.jobs.end())
        return;
      i->second.status = status;
      i->second.acting = false;
      job_event(self, *i->second.job,
                status.phase == scheduler::job_phase::failed ? "Warning" : "Normal",
                status.reason, status.message);
      announce_job(self, key);
    });
    return;
  }
  start_job_incarnation(self, key, j.job, status, [self, key](const phalanx::status& s) {
    auto& st = self->state;
    auto i = st.jobs.find(key);
    if (i == st.jobs.end())
      return;
    i->second.acting = false;
    if (!s.ok())
      spdlog::error("job {}: its pods were not made again: {}", key, s.to_string());
  });
}

// Kills the pods a transition names, with the job's new status in the same write; `then` runs
// once they are gone.
void kill_and_persist(self_ptr self, const std::string& key, scheduler::job_status status,
                      std::shared_ptr<const scheduler::job> job,
                      const scheduler::job_transition& t, std::function<void()> then) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  const auto* g = group_of_job(st, j);
  std::vector<uint64_t> doomed;
  bool every_pod = true;
  if (g != nullptr)
    for (auto id : g->pods) {
      const auto& e = st.pods.at(id);
      if (t.kill.keep_finished && scheduler::is_terminal(e.phase())) {
        every_pod = false;
        continue;
      }
      doomed.push_back(id);
    }
  storage::write_batch batch;
  batch.put(storage::job_record{*job, status});
  auto after = [self, key, status, job, every_pod,
                then = std::move(then)](const phalanx::status& s) {
    auto& st = self->state;
    auto i = st.jobs.find(key);
    if (i == st.jobs.end())
      return;
    if (!s.ok()) {
      i->second.acting = false;
      spdlog::error("job {}: the lifecycle's step was not persisted: {}", key,
                    s.to_string());
      return;
    }
    // With every pod gone and the version raised, the next incarnation's pods are
    // records of their own (scheduler::pods_are_expansion): the names are free.
    if (every_pod && i->second.first_pod != 0 &&
        !scheduler::pods_are_expansion(*job, status)) {
      release_job_pods(st, key, *i->second.job);
      i->second.first_pod = 0;
    }
    i->second.job = job;
    i->second.status = status;
    announce_job(self, key);
    then();
  };
  delete_pods(self, std::move(doomed), std::move(batch), pod_keys::tombstone, std::move(after));
}

void execute_action(self_ptr self, const job_pod_event& e, scheduler::resolved_action action,
                    const scheduler::job_status& current, const scheduler::job_pods& pods) {
  using scheduler::job_action;
  auto& st = self->state;
  auto& j = st.jobs.at(e.job_key);
  auto t = scheduler::next_state(*j.job, current, pods, action, st.ctx->now());
  auto status = persisted_status(j, t);
  // A kill that keeps pods of a job stored as its expansion keeps its version: a raised version
  // would make the kept pods records of their own, which they are not (storage/README.md).
  if (t.kill.keep_finished && j.first_pod != 0)
    status.version = current.version;
  auto job = j.job;
  if (action.action == job_action::abort_job) {
    auto copy = std::make_shared<scheduler::job>(*j.job);
    copy->suspended = true;  // As `phalanxctl job suspend`: ResumeJob brings it back.
    job = std::move(copy);
    // A suspended job has no pods stored (scheduler::pods_are_expansion): its finished pods go
    // too, as a suspend's do. Volcano keeps them.
    t.kill.keep_finished = false;
  }
  j.acting = true;
  std::string key = e.job_key;
  job_event(self, *j.job, "Normal", std::string(scheduler::to_string(action.action)),
            status.message.empty() ? "pod " + e.info.pod + " " +
                                         std::string(scheduler::to_string(e.info.event))
                                   : status.message);
  kill_and_persist(self, key, status, job, t, [self, key] { settle_after_kill(self, key); });
}

// A policy with a timeout (Volcano's delayed action): the action runs once the timeout passed,
// unless what it answered changed meanwhile, as the pod's next event or another action cancels
// it in Volcano (CleanPodDelayActionsIfNeed): a step of the job since (its version moved, or one
// is under way), or, for a pod that waited Pending, the pod no longer pending.
void delay_action(self_ptr self, const job_pod_event& e, scheduler::resolved_action action,
                  int32_t version) {
  const auto delay = action.delay;
  action.delay = {};
  run_after(self, delay, [self, e, action, version] {
    auto& st = self->state;
    auto i = st.jobs.find(e.job_key);
    if (i == st.jobs.end())
      return;
    auto& j = i->second;
    if (j.acting || j.job->suspended || j.status.version != version)
      return;
    const auto* g = group_of_job(st, j);
    if (e.info.event == scheduler::job_event::pod_pending) {
      bool still_pending = false;
      if (g != nullptr)
        for (auto id : g->pods)
          if (auto p = st.pods.find(id);
              p != st.pods.end() && p->second.pod->meta.name.view() == e.info.pod)
            still_pending = !p->second.delete_requested &&
                            p->second.phase() == scheduler::pod_phase::pending;
      if (!still_pending)
        return;
    }
    auto current = job_status_of(st, j);
    if (scheduler::is_finished(current.phase))
      return;
    execute_action(self, e, action, current, pods_of_job(st, g));
  });
}

} // namespace

void start_job_incarnation(self_ptr self, const std::string& key,
                           std::shared_ptr<const scheduler::job> job, scheduler::job_status status,
                           std::function<void(const phalanx::status&)> then) {
  auto& st = self->state;
  storage::write_batch batch;
  batch.put(storage::job_record{*job, status});
  auto pods = std::make_shared<std::vector<pod_ptr>>();
  auto pod_names = std::make_shared<std::vector<std::string>>();
  auto expanded = scheduler::expand_job(*job);
  if (!expanded)
    return then(expanded.error());
  if (const auto* taken = reserve_pod_names(st, expanded->pods, *pod_names))
    return then(phalanx::status{errc::already_exists,
                                "pods \"" + taken->meta.name.str() + "\" already exists"});
  for (auto& p : expanded->pods) {
    // A new incarnation: new uids, so nothing of the old pods is confused with them.
    p.meta.uid = new_uid(self);
    p.meta.creation_time = st.ctx->now();
    p.meta.annotations.set(scheduler::job_version_key, std::to_string(status.version));
    scheduler::prepare_job_pod(p, job->meta.resource_version);
    pods->push_back(std::make_shared<const scheduler::pod>(std::move(p)));
    batch.put(pods->back());
  }
  persist(self, std::move(batch),
          [self, key, job, status, pods, pod_names,
           then = std::move(then)](const phalanx::status& s) {
            auto& st = self->state;
            if (!s.ok()) {
              release_pod_names(st, *pod_names);
              return then(s);
            }
            auto i = st.jobs.find(key);
            if (i == st.jobs.end()) {
              release_pod_names(st, *pod_names);
              return then(phalanx::status{errc::not_found, "jobs \"" + key + "\" not found"});
            }
            i->second.job = job;
            i->second.status = status;
            auto g = st.group_ids.find(i->second.group_key);
            if (g == 0) {
              release_pod_names(st, *pod_names);
            } else {
              auto& group = st.groups.at(g);
              for (std::size_t k = 0; k < pods->size(); ++k) {
                auto& slot = insert_pod(self, (*pods)[k], (*pod_names)[k]);
                join_job_gang(st, slot, group);
                announce(self, api::watch_event::type::added,
                         pod_view(st, slot.first, slot.second));
              }
              // The old incarnation's actor may have completed when its pods were deleted.
              group_changed(self, renew_gang(self, group.gang));
            }
            job_event(self, *job, "Normal", status.reason, status.message);
            announce_job(self, key);
            then(phalanx::status{});
            job_pods_made(self, key);
          });
}

std::optional<job_pod_event> job_event_of(const registry_state& st, uint64_t pod,
                                          scheduler::job_event event, bool was_finished) {
  auto p = st.pods.find(pod);
  if (p == st.pods.end() || p->second.gang == 0)
    return std::nullopt;
  auto g = st.groups.find(p->second.gang);
  if (g == st.groups.end() || g->second.job_key.empty())
    return std::nullopt;
  job_pod_event out;
  out.was_finished = was_finished;
  out.job_key = g->second.job_key.str();
  out.info.event = event;
  out.info.task = p->second.pod->role.str();
  out.info.pod = p->second.pod->meta.name.str();
  if (event != scheduler::job_event::pod_evicted)
    out.info.pod_state = p->second.phase();
  int32_t version = 0;
  if (auto v = p->second.pod->meta.annotations.find(scheduler::job_version_key)) {
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), version);
    if (ec != std::errc{} || end != v->data() + v->size())
      version = 0;
  }
  out.info.job_version = version;
  return out;
}

void on_job_pod_event(self_ptr self, const job_pod_event& e) {
  auto& st = self->state;
  auto i = st.jobs.find(e.job_key);
  if (i == st.jobs.end())
    return;
  auto& j = i->second;
  // One step at a time: events while a step is under way are about pods it is replacing.
  if (j.acting || j.job->suspended || e.was_finished)
    return;
  auto current = job_status_of(st, j);
  if (scheduler::is_finished(current.phase)) {
    if (scheduler::is_finished(j.status.phase))
      return;  // Ended as the controller persisted it: nothing acts on it any more.
    // Read from its pods as ended only because of this event (its last live pods failed or
    // went): until it, the job ran, and its policies decide what the event does.
    current.phase = scheduler::job_phase::running;
  }
  const auto* g = group_of_job(st, j);
  auto pods = pods_of_job(st, g);
  // A pod that succeeded raises TaskCompleted only once every replica of its task has.
  if (e.info.event == scheduler::job_event::task_completed &&
      !scheduler::task_completed(*j.job, pods, e.info.task))
    return;
  auto action = scheduler::resolve_action(*j.job, current, e.info);
  using scheduler::job_action;
  if (action.action == job_action::sync_job && below_minimum_while_running(*j.job, pods) &&
      (e.info.event == scheduler::job_event::pod_failed ||
       e.info.event == scheduler::job_event::pod_evicted)) {
    // The gang lost members below its minimum while others run: its PodGroup is Unknown, which
    // raises Volcano's job-level Unknown event.
    scheduler::job_event_info unknown;
    unknown.event = scheduler::job_event::unknown;
    action = scheduler::resolve_action(*j.job, current, unknown);
  }
  if (action.action == job_action::sync_job)
    return;
  if (action.action == job_action::restart_task || action.action == job_action::restart_pod ||
      action.action == job_action::resume_job) {
    job_event(self, *j.job, "Warning", "ActionNotSupported",
              "pod " + e.info.pod + " " + std::string(scheduler::to_string(e.info.event)) +
                  ": " + std::string(scheduler::to_string(action.action)) +
                  " is not carried out in this version; the job goes on as it is");
    return;
  }
  if (action.delay > scheduler::duration::zero()) {
    delay_action(self, e, action, current.version);
    return;
  }
  execute_action(self, e, std::move(action), current, pods);
}

void finish_job_restarts(self_ptr self) {
  std::vector<std::string> restarting;
  for (const auto& [key, j] : self->state.jobs)
    if (j.status.phase == scheduler::job_phase::restarting && !j.job->suspended)
      restarting.push_back(key);
  for (const auto& key : restarting) {
    spdlog::info("job {} was restarting when phalanxd stopped: it finishes now", key);
    self->state.jobs.at(key).acting = true;
    settle_after_kill(self, key);
  }
}

void job_pods_made(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  const auto* g = group_of_job(st, i->second);
  if (!scheduler::acts_on_pod_pending(*i->second.job) || g == nullptr)
    return;  // Most jobs have no PodPending policy.
  std::vector<job_pod_event> events;
  for (auto id : g->pods)
    if (auto p = st.pods.find(id); p != st.pods.end() &&
                                   p->second.phase() == scheduler::pod_phase::pending &&
                                   !p->second.delete_requested)
      if (auto e = job_event_of(st, id, scheduler::job_event::pod_pending, false))
        events.push_back(std::move(*e));
  for (const auto& e : events)
    on_job_pod_event(self, e);
}

} // namespace phalanx::actors::registry_detail
