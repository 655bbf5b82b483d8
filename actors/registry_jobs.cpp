// The Volcano job controller of the standalone world (issue 29 §2). A job's pod that is evicted
// (deleted by a user or a preemptor, or lost with its node), fails, completes its task, or
// restarts its containers until its task's pods restarted maxRetry times (TaskFailed) raises
// Volcano's event (and Unknown when the gang is left below its minimum while pods run);
// scheduler::resolve_action finds the action the job's lifecycle policies name, and
// scheduler::next_state says what to do. The catalog executes it, and the phase it reaches is
// persisted with the job, not derived from its pods on a read.
//
// What is built: SyncJob (the job's missing pods made again, as Volcano's syncJob does: a pod
// deleted with no policy for it comes back under its name with a new uid), RestartJob (all pods
// killed and made again as a new incarnation, counted against maxRetry; the last retry ends in
// Failed with the finished pods kept), RestartTask and RestartPod (the task's pods, or the pod,
// killed and made again, counted as a retry), AbortJob (the job suspended, as `phalanxctl job
// suspend`), TerminateJob and CompleteJob (the unfinished pods killed, the job Terminated or
// Completed), each also after a policy's timeout (a PodPending policy acts on a pod still
// pending then). A task with dependsOn gets its pods once the tasks it names run. A job's own
// end (read from its pods) is persisted when seen, and a finished job with
// ttlSecondsAfterFinished is deleted when it is due.
//
// A job takes one step at a time: events that come while a step is under way wait, and are
// acted on in order once it ends. A step that kills is two durable writes. The first writes the
// job's new status (Restarting, its retry counted; for a whole-job kill its version raised)
// with the killed pods' deletion in one batch; the second writes the pods made again with the
// job's next status. A restart between the two finds the job Restarting, or a job with pods
// missing, and start_job_controller finishes the step then: no pod is made twice, none is lost.
//
// A pod made again is a record of its own (new uid, the job's version and retry count). While
// the job's other pods are stored as the job (storage/README.md), its key is one the job's
// expansion makes: the record wins over the expansion at a start, and its deletion leaves a
// tombstone (pod_entry::made_again_over_expansion).

#include "actors/operator_log.hpp"
#include "actors/registry_internal.hpp"
#include "actors/world_port.hpp"

#include "scheduler/job.hpp"
#include "scheduler/job_lifecycle.hpp"
#include "scheduler/job_sync.hpp"


#include <algorithm>
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

const group_entry* group_of_job(const scheduling_cache& cache, const registry_state::job_entry& j) {
  auto gang = cache.group_ids.find(j.group_key);
  return gang == 0 ? nullptr : &cache.groups.at(gang);
}

// The job's status to persist after a step: the transition's phase, retry count, version,
// reason, message and time, over the stored status (counts are derived on reads).
scheduler::job_status persisted_status(const registry_state::job_entry& j,
                                       const scheduler::job_transition& t) {
  auto s = j.status;
  s.phase = t.status.phase;
  s.retry_count = t.status.retry_count;
  s.version = t.status.version;
  s.running_duration = t.status.running_duration;
  if (t.phase_changed) {
    s.reason = t.status.reason;
    s.message = t.status.message;
    s.last_transition_time = t.status.last_transition_time;
    s.conditions = t.status.conditions;
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

// The positions (scheduler::job_task_ranges) of the job's pods "<job>-<task>-<index>" that no
// pod of its gang has, a terminating one included: Volcano's syncJob makes a pod again only once
// no pod of its name is left.
std::vector<uint32_t> missing_positions(const registry_state& st,
                                        const registry_state::job_entry& entry,
                                        const scheduler::job& j, const group_entry& g) {
  if (entry.first_pod != 0 && entry.job.get() == &j) {
    // Pods stored as the job have ids by position (first_pod + k), unused once deleted: when
    // every one is there, nothing is missing, found without a name (a start syncs every job).
    uint64_t total = 0;
    for (const auto& t : j.tasks)
      total += static_cast<uint64_t>(std::max(t.replicas, 0));
    bool all = true;
    for (uint64_t k = 0; k < total && all; ++k)
      all = st.pods.count(entry.first_pod + k) != 0;
    if (all)
      return {};
  }
  const auto ranges = scheduler::job_task_ranges(j);
  uint32_t total = 0;
  for (const auto& r : ranges)
    total = std::max(total, r.first + static_cast<uint32_t>(r.replicas));
  std::vector<bool> present(total, false);
  for (auto id : g.pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end())
      continue;
    auto split = scheduler::split_job_pod_name(p->second.pod->meta.name.view());
    if (!split)
      continue;  // Spawned by a running driver, or created on its own into the group.
    for (const auto& r : ranges)
      if (r.prefix == split->first && split->second < r.replicas) {
        present[r.first + static_cast<uint32_t>(split->second)] = true;
        break;
      }
  }
  std::vector<uint32_t> out;
  for (uint32_t k = 0; k < total; ++k)
    if (!present[k])
      out.push_back(k);
  return out;
}

bool has_unfinished_pods(const registry_state& st, const group_entry* g) {
  if (g == nullptr)
    return false;
  return std::any_of(g->pods.begin(), g->pods.end(), [&](uint64_t id) {
    auto p = st.pods.find(id);
    return p != st.pods.end() && !p->second.delete_requested &&
           !scheduler::is_terminal(p->second.phase());
  });
}

// A step of the job's controller ended: the events that waited for it are acted on, in order
// (the first that starts a step makes the rest wait again).
void end_step(self_ptr self, const std::string& key) {
  auto i = self->state.jobs.find(key);
  if (i == self->state.jobs.end())
    return;
  i->second.acting = false;
  i->second.writing_own_phase = false;
  auto waiting = std::move(i->second.waiting);
  i->second.waiting.clear();
  for (auto& act : waiting)
    act();
}

// The job's pods that ended with their node (deleted under them): Kubernetes' pod garbage
// collector deletes such pods, and Volcano's controller then makes them again.
std::vector<uint64_t> pods_of_lost_nodes(const registry_state& st, const group_entry& g) {
  std::vector<uint64_t> out;
  for (auto id : g.pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end() || p->second.delete_requested || !p->second.is_bound() ||
        !scheduler::is_terminal(p->second.phase()))
      continue;
    auto n = st.cache.nodes.find(p->second.node_name().view());
    if (n == st.cache.nodes.end() || !n->second.live)
      out.push_back(id);
  }
  return out;
}

// Volcano's syncJob for a job that goes on (Pending or Running): its pods lost with their nodes
// deleted, and its missing pods made again.
void sync_job(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  const auto* g = group_of_job(st.cache, j);
  if (g == nullptr)
    return;
  auto lost = pods_of_lost_nodes(st, *g);
  if (lost.empty() && missing_positions(st, j, *j.job, *g).empty())
    return;
  j.acting = true;
  auto make = [self, key] {
    auto i = self->state.jobs.find(key);
    if (i == self->state.jobs.end())
      return;
    make_missing_job_pods(self, key, i->second.job, i->second.status, false,
                          [self, key](const phalanx::status& s) {
                            // not_found: the job went meanwhile, and its pods with it.
                            if (!s.ok() && s.code() != errc::not_found)
                              oplog::error("a job's missing pods not made again")
                                  .kv("job", key)
                                  .kv("error", s.to_string());
                            end_step(self, key);
                          });
  };
  if (lost.empty())
    return make();
  delete_pods(self, std::move(lost), [self, key, make](const phalanx::status& s) {
    if (!s.ok()) {
      oplog::error("a job's pods lost with their nodes not deleted")
          .kv("job", key)
          .kv("error", s.to_string());
      return end_step(self, key);
    }
    make();
  });
}

// A finished job with ttlSecondsAfterFinished is deleted once it is due (Volcano's garbage
// collector), if it is still the same job, finished, when the time comes.
void collect_when_due(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  auto due = scheduler::deletion_due(*i->second.job, i->second.status);
  if (!due)
    return;
  const auto uid = i->second.job->meta.uid.str();
  const auto delay = std::max(scheduler::duration::zero(), *due - st.ctx->now());
  run_after(self, delay, [self, key, uid] {
    auto& st = self->state;
    auto i = st.jobs.find(key);
    if (i == st.jobs.end() || i->second.deleting || i->second.job->meta.uid != uid ||
        !scheduler::is_due_for_deletion(*i->second.job, i->second.status, st.ctx->now()))
      return;
    oplog::info("job deleted: ttlSecondsAfterFinished passed").kv("job", key);
    job_event(self, *i->second.job, "Normal", "TTLExpired",
              "ttlSecondsAfterFinished passed since it finished: deleted");
    delete_job(self, key, /*dry_run=*/false, nullptr);
  });
}

// A step's new phase is out: the job gets an event for it (a Warning for Failed), watchers see
// it, and a job that ended with a TTL is armed for collection.
void announce_phase(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  const auto& s = i->second.status;
  job_event(self, *i->second.job, s.phase == scheduler::job_phase::failed ? "Warning" : "Normal",
            s.reason, s.message);
  announce_job(self, key);
  collect_when_due(self, key);
}

// Writes the job's new status (its step's last write); once durable the job takes it, its
// phase is announced and the step ends.
namespace {
// A status write of the job's step is durable (or failed): the job takes the status, its phase
// is announced, and the step ends.
void status_written(self_ptr self, const std::string& key, const phalanx::status& s,
                    scheduler::job_status status) {
  auto i = self->state.jobs.find(key);
  if (i == self->state.jobs.end())
    return;
  if (!s.ok()) {
    oplog::error("job status not persisted").kv("job", key).kv("error", s.to_string());
    return end_step(self, key);
  }
  i->second.status = std::move(status);
  announce_phase(self, key);
  end_step(self, key);
}
} // namespace

void persist_status(self_ptr self, const std::string& key, scheduler::job_status status) {
  auto& j = self->state.jobs.at(key);
  storage::write_batch batch;
  batch.put(storage::job_record{*j.job, status});
  persist(self, std::move(batch), [self, key, status](const phalanx::status& s) {
    status_written(self, key, s, status);
  });
}

void kill_and_persist(self_ptr self, const std::string& key, scheduler::job_status status,
                      std::shared_ptr<const scheduler::job> job,
                      const scheduler::job_transition& t, std::function<void()> then);

// The job's own end, read from its pods (every pod finished, or minSuccess reached) with no
// policy acting on it, is persisted once, with its time: from then on it is read as stored, and
// ttlSecondsAfterFinished counts from it.
void persist_own_end(self_ptr self, const std::string& key, const scheduler::job_status& ended) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  auto status = j.status;
  status.phase = ended.phase;
  status.reason = ended.phase == scheduler::job_phase::completed ? "Completed" : "Failed";
  status.message = std::to_string(ended.succeeded) + " pod(s) succeeded and " +
                   std::to_string(ended.failed) + " failed, of minAvailable " +
                   std::to_string(ended.min_available);
  // And the rule that ended it, when not the counts against minAvailable: minSuccess, or a
  // task below its own minAvailable (job_status_of's sync).
  if (ended.reason != "PodsSucceeded" && ended.reason != "MinAvailableNotMet" &&
      ended.reason != j.status.reason && !ended.message.empty())
    status.message += "; " + ended.message;
  status.last_transition_time = st.ctx->now();
  scheduler::append_condition(status.conditions, {status.phase, status.last_transition_time});
  // Volcano's next sync of a finished job kills what is left of it, which writes it.
  status.running_duration = scheduler::running_duration(*j.job, status);
  j.acting = true;
  if (has_unfinished_pods(st, group_of_job(st.cache, j))) {
    // minSuccess reached while pods still run: they go with the end's write, the finished ones
    // kept, as Volcano kills what is left of a finished job at its next sync.
    scheduler::job_transition rest;
    rest.kill = {scheduler::kill_scope::job, {}, {}, true};
    kill_and_persist(self, key, std::move(status), j.job, rest, [self, key] {
      announce_phase(self, key);
      end_step(self, key);
    });
    return;
  }
  j.writing_own_phase = true;
  persist_status(self, key, std::move(status));
}

// Kills the pods a transition names, with the job's new status in the same write; `then` runs
// once they are gone (the step goes on), or not at all when the write failed (the step ends).
void kill_and_persist(self_ptr self, const std::string& key, scheduler::job_status status,
                      std::shared_ptr<const scheduler::job> job,
                      const scheduler::job_transition& t, std::function<void()> then) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  const auto* g = group_of_job(st.cache, j);
  std::vector<uint64_t> doomed;
  bool every_pod = true;
  if (g != nullptr)
    for (auto id : g->pods) {
      const auto& e = st.pods.at(id);
      bool dies = false;
      switch (t.kill.scope) {
        case scheduler::kill_scope::none: break;
        case scheduler::kill_scope::job:
          dies = !(t.kill.keep_finished && scheduler::is_terminal(e.phase()));
          break;
        case scheduler::kill_scope::task: dies = e.pod->role.view() == t.kill.task; break;
        case scheduler::kill_scope::pod: dies = e.pod->meta.name.view() == t.kill.pod; break;
      }
      if (dies)
        doomed.push_back(id);
      else
        every_pod = false;
    }
  storage::write_batch batch;
  batch.put(storage::job_record{*job, status});
  // Every pod dies and the next incarnation's pods are records of their own: the keys of the
  // old expansion are erased in this, the step's first write, rather than given tombstones, so
  // a stop between the step's two writes leaves none of them behind (the start would find them
  // holding state updates of no pod, and erase them then).
  const bool drop_expansion =
      every_pod && j.first_pod != 0 && !scheduler::pods_are_expansion(*job, status);
  if (drop_expansion)
    batch.erase_job_pods(j.job);
  auto after = [self, key, status, job, every_pod,
                then = std::move(then)](const phalanx::status& s) {
    auto& st = self->state;
    auto i = st.jobs.find(key);
    if (i == st.jobs.end())
      return;
    if (!s.ok()) {
      oplog::error("job lifecycle step not persisted").kv("job", key).kv("error", s.to_string());
      end_step(self, key);
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
  delete_pods(self, std::move(doomed), std::move(batch),
              drop_expansion ? pod_keys::erased_by_caller : pod_keys::tombstone, std::move(after));
}

// The step after a kill, once the pods are gone: the lifecycle syncs the job. From Restarting
// its restart check gives Failed (retries used up) or Pending, and then the pods the kill took
// are made again; Terminating, Completing and Aborting end in Terminated, Completed and Aborted.
void settle_after_kill(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  auto& j = i->second;
  if (j.job->suspended || j.deleting)  // Aborted: shown as such while suspended.
    return end_step(self, key);
  const auto* g = group_of_job(st.cache, j);
  auto current = job_status_of(st, j);
  scheduler::resolved_action sync;
  sync.action = scheduler::job_action::sync_job;
  sync.source = scheduler::action_source::internal_event;
  auto t = scheduler::next_state(*j.job, current, pods_of_job(st, g), sync, st.ctx->now());
  auto status = persisted_status(j, t);
  if (status.phase == scheduler::job_phase::restarting) {
    // Not here: delete_pods answers once the old pods are gone.
    oplog::warn("job still restarting after its pods were deleted").kv("job", key);
    return end_step(self, key);
  }
  if (!t.phase_changed)
    return end_step(self, key);
  if (scheduler::is_finished(status.phase) && has_unfinished_pods(st, g)) {
    // A targeted restart's last retry: the job failed, and what still runs of it goes (Volcano
    // kills the pods of a job in Failed at its next sync), the finished pods kept.
    scheduler::job_transition rest;
    rest.kill = {scheduler::kill_scope::job, {}, {}, true};
    kill_and_persist(self, key, status, j.job, rest, [self, key] {
      announce_phase(self, key);
      end_step(self, key);
    });
    return;
  }
  if (!t.create_missing_pods || status.phase != scheduler::job_phase::pending)
    return persist_status(self, key, std::move(status));
  make_missing_job_pods(self, key, j.job, status, true, [self, key](const phalanx::status& s) {
    if (!s.ok())
      oplog::error("a job's pods not made again").kv("job", key).kv("error", s.to_string());
    end_step(self, key);
  });
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
    if (j.acting || j.deleting || j.job->suspended || j.status.version != version)
      return;
    const auto* g = group_of_job(st.cache, j);
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

void make_missing_job_pods(self_ptr self, const std::string& key,
                           std::shared_ptr<const scheduler::job> job, scheduler::job_status status,
                           bool write_status, std::function<void(const phalanx::status&)> then) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return then(phalanx::status{errc::not_found, "jobs \"" + key + "\" not found"});
  const auto* g = group_of_job(st.cache, i->second);
  if (g == nullptr)
    return then(phalanx::status{errc::not_found, "the job's PodGroup is gone"});
  const auto gang = g->gang;
  const auto job_uid = job->meta.uid.str();
  const bool whole = g->pods.empty();  // A new incarnation: its gang starts over.
  auto positions = missing_positions(st, i->second, *job, *g);
  if (scheduler::has_task_dependencies(*job)) {
    // A task's pods are made once the tasks it depends on run (dependsOn).
    const auto pods_now = pods_of_job(st, g);
    std::vector<std::pair<uint32_t, bool>> task_ends;  // (end position, ready), in task order.
    uint32_t end = 0;
    for (std::size_t t = 0; t < job->tasks.size(); ++t) {
      end += static_cast<uint32_t>(std::max(job->tasks[t].replicas, 0));
      task_ends.emplace_back(end, scheduler::task_dependencies_ready(*job, t, pods_now));
    }
    std::erase_if(positions, [&](uint32_t p) {
      auto t = std::upper_bound(task_ends.begin(), task_ends.end(), p,
                                [](uint32_t v, const auto& e) { return v < e.first; });
      return t == task_ends.end() || !t->second;
    });
  }
  auto made = scheduler::make_job_pods(
      *job, positions, [self](std::string_view, std::string_view) { return new_uid(self); });
  if (!made)
    return then(made.error());
  storage::write_batch batch;
  if (write_status)
    batch.put(storage::job_record{*job, status});
  // Names another pod took meanwhile (a job's names are free while a new incarnation is made):
  // such a pod is not made, as Volcano's creation fails with AlreadyExists.
  std::vector<std::string> taken;
  auto pods = std::make_shared<std::vector<std::pair<pod_ptr, std::string>>>();
  const auto version = next_version(self);
  for (auto& p : *made) {
    auto name = object_key(p.meta.namespace_name, p.meta.name);
    const auto* claim = job_task_of(st, name);
    if ((claim != nullptr && claim->job_key != key) ||
        name_taken(st, api::resource_kind::pod, name)) {
      taken.push_back(p.meta.name.str());
      continue;
    }
    st.reserved_names[kind_index(api::resource_kind::pod)].insert(name);
    p.meta.creation_time = st.ctx->now();
    scheduler::prepare_job_pod(p, version);
    p.meta.annotations.set(scheduler::job_version_key, std::to_string(status.version));
    p.meta.annotations.set(scheduler::job_retry_count_key, std::to_string(status.retry_count));
    share_pod_names(st, p);
    auto pod = std::make_shared<const scheduler::pod>(std::move(p));
    batch.put(pod);
    pods->emplace_back(std::move(pod), std::move(name));
  }
  if (!taken.empty())
    job_event(self, *job, "Warning", "FailedCreate",
              "pod " + taken.front() +
                  (taken.size() > 1 ? " and " + std::to_string(taken.size() - 1) + " more" : "") +
                  " not made again: the name is taken by a pod that is not the job's");
  if (pods->empty() && !write_status)
    return then(phalanx::status{});
  // While the job's other pods are stored as the job, these records hide its expansion's keys.
  const bool over_expansion = scheduler::pods_are_expansion(*job, status);
  persist(self, std::move(batch),
          [self, key, job, status, write_status, pods, gang, job_uid, whole, over_expansion,
           then = std::move(then)](const phalanx::status& s) {
            auto& st = self->state;
            for (const auto& [pod, name] : *pods)
              release_pod_name(st, name);
            if (!s.ok())
              return then(s);
            auto i = st.jobs.find(key);
            if (i == st.jobs.end() || i->second.deleting || i->second.job->meta.uid != job_uid ||
                !st.cache.groups.count(gang) || (!write_status && i->second.job->suspended)) {
              // The job went (or goes, or was suspended) meanwhile: what was written for it
              // goes too.
              storage::write_batch undo;
              for (const auto& [pod, name] : *pods)
                undo.erase(storage::record_kind::pod, name);
              persist(self, std::move(undo), [](const phalanx::status&) {});
              return then(phalanx::status{errc::not_found, "jobs \"" + key + "\" went"});
            }
            if (write_status) {
              i->second.job = job;
              i->second.status = status;
            }
            auto& group = st.cache.groups.at(gang);
            pod_refs joined;
            for (const auto& [pod, name] : *pods) {
              auto& slot = insert_pod(self, pod, name);
              slot.second.made_again_over_expansion = over_expansion;
              if (join_job_gang(st, slot, group))
                joined.push_back({slot.first, pod});
              announce(self, api::watch_event::type::added,
                       pod_view(st, slot.first, slot.second));
            }
            if (!joined.empty()) {
              note_group_events_changed(self, group.key.view());
              // A new incarnation, or a gang whose actor completed when its last pods went,
              // starts over; a running one takes the pods as new members.
              if (whole || group.last_report.phase == scheduler::gang_phase::completed)
                group_changed(self, renew_gang(self, group.gang));
              else {
                tell_gang(self, group, pods_atom::value, std::move(joined));
                group_changed(self, group);
              }
            }
            if (!pods->empty())
              job_event(self, *job, "Normal", whole ? status.reason : "SyncJob",
                        whole ? status.message
                              : "made " + std::to_string(pods->size()) + " missing pod(s): " +
                                    pods->front().first->meta.name.str() +
                                    (pods->size() > 1 ? " and others" : ""));
            announce_job(self, key);
            then(phalanx::status{});
            job_pods_made(self, key);
          });
}

namespace {
// Pod `pod` and its gang, when the gang is a job's; nullopt for a pod of no job.
std::optional<std::pair<const pod_entry*, const group_entry*>> job_pod_of(const registry_state& st,
                                                                          uint64_t pod) {
  auto p = st.pods.find(pod);
  if (p == st.pods.end() || p->second.gang == 0)
    return std::nullopt;
  auto g = st.cache.groups.find(p->second.gang);
  if (g == st.cache.groups.end() || g->second.job_key.empty())
    return std::nullopt;
  return std::pair{&p->second, &g->second};
}
} // namespace

std::optional<job_pod_event> job_event_of(const registry_state& st, uint64_t pod,
                                          scheduler::job_event event, bool was_finished) {
  auto found = job_pod_of(st, pod);
  if (!found)
    return std::nullopt;
  const auto& [e, g] = *found;
  job_pod_event out;
  out.was_finished = was_finished;
  out.job_key = g->job_key.str();
  out.info.event = event;
  out.info.task = e->pod->role.str();
  out.info.pod = e->pod->meta.name.str();
  if (event != scheduler::job_event::pod_evicted)
    out.info.pod_state = e->phase();
  // exitCode policies read a failed pod's container's exit code.
  if (event == scheduler::job_event::pod_failed)
    out.info.exit_code = st.world->exit_code(*e);
  int32_t version = 0;
  if (auto v = e->pod->meta.annotations.find(scheduler::job_version_key)) {
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), version);
    if (ec != std::errc{} || end != v->data() + v->size())
      version = 0;
  }
  out.info.job_version = version;
  return out;
}

std::optional<job_pod_event> restart_event_of(const registry_state& st, uint64_t pod,
                                              scheduler::pod_phase phase_before) {
  auto found = job_pod_of(st, pod);
  if (!found)
    return std::nullopt;
  const auto& [e, g] = *found;
  auto j = st.jobs.find(g->job_key.view());
  if (j == st.jobs.end())
    return std::nullopt;
  const auto& role = e->pod->role;
  const auto* task = scheduler::task_named(*j->second.job, role.view());
  if (task == nullptr)
    return std::nullopt;
  // Volcano's cache sums the restarts of the task's Pending and Running pods, init containers
  // included (pod::restart_count holds both): scheduler::task_restarts' rule, on the catalog's
  // pods.
  int64_t restarts = 0;
  for (auto id : g->pods) {
    auto q = st.pods.find(id);
    if (q != st.pods.end() && q->second.pod->role == role &&
        scheduler::restarts_count_for_task(q->second.phase(), q->second.delete_requested))
      restarts += q->second.restart_count();
  }
  scheduler::pod_change_info change;
  change.change = scheduler::pod_change::updated;
  change.old_phase = phase_before;
  change.new_phase = e->phase();
  change.task_failed = scheduler::task_failed(*task, scheduler::saturated_restarts(restarts));
  if (scheduler::pod_event(change) != scheduler::job_event::task_failed)
    return std::nullopt;
  return job_event_of(st, pod, scheduler::job_event::task_failed, false);
}

void on_job_pod_event(self_ptr self, const job_pod_event& e) {
  auto& st = self->state;
  auto i = st.jobs.find(e.job_key);
  if (i == st.jobs.end())
    return;
  auto& j = i->second;
  if (j.deleting || j.job->suspended)
    return;
  if (j.acting) {  // One step at a time: the event waits for the step under way.
    j.waiting.push_back([self, e] { on_job_pod_event(self, e); });
    return;
  }
  auto current = job_status_of(st, j);
  if (e.was_finished && scheduler::is_finished(current.phase)) {
    // The clean-up of a job that ended by its pods: no policy acts, and its end is persisted if
    // it was not yet. (A finished pod deleted from a job that goes on is PodEvicted like any,
    // as in Volcano.)
    if (!scheduler::is_finished(j.status.phase))
      persist_own_end(self, e.job_key, current);
    return;
  }
  const auto read_from_pods = current;
  if (scheduler::is_finished(current.phase)) {
    if (scheduler::is_finished(j.status.phase))
      return;  // Ended as the controller persisted it: nothing acts on it any more.
    // Read from its pods as ended only because of this event (its last live pods failed or
    // went): until it, the job ran, and its policies decide what the event does.
    current.phase = scheduler::job_phase::running;
  }
  const auto* g = group_of_job(st.cache, j);
  auto pods = pods_of_job(st, g);
  // A pod that succeeded raises TaskCompleted only once every replica of its task has.
  if (e.info.event == scheduler::job_event::task_completed &&
      !scheduler::task_completed(*j.job, pods, e.info.task)) {
    if (scheduler::is_finished(read_from_pods.phase))  // minSuccess reached.
      persist_own_end(self, e.job_key, read_from_pods);
    return;
  }
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
    action.cause = e.info;  // A RestartPod or RestartTask for it targets the event's pod.
  }
  if (action.delay > scheduler::duration::zero()) {
    delay_action(self, e, action, current.version);
    return;
  }
  // ResumeJob on a job that runs is a sync (scheduler::next_state). Only a pod that went leaves
  // one missing (a failed or finished pod stays), so only then is there anything to make. A job
  // its pods show ended has its end persisted.
  if (action.action == job_action::sync_job || action.action == job_action::resume_job) {
    if (scheduler::is_finished(read_from_pods.phase))
      persist_own_end(self, e.job_key, read_from_pods);
    else if (e.info.event == scheduler::job_event::pod_evicted)
      sync_job(self, e.job_key);
    return;
  }
  execute_action(self, e, std::move(action), current, pods);
}

void resume_job(self_ptr self, const std::string& key,
                std::shared_ptr<const scheduler::job> resumed,
                std::function<void(const phalanx::status&)> then) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  const auto now = st.ctx->now();
  scheduler::resolved_action resume;
  resume.action = scheduler::job_action::resume_job;
  resume.source = scheduler::action_source::command;
  resume.cause.event = scheduler::job_event::command_issued;
  // A suspended job has no pods (they went with the suspension).
  auto status = scheduler::next_state(*resumed, j.status, {}, resume, now).status;
  status.reason = "Resumed";
  status.message = "resumed on request; its pods are created again";
  scheduler::resolved_action sync;
  sync.action = scheduler::job_action::sync_job;
  sync.source = scheduler::action_source::internal_event;
  auto check = scheduler::next_state(*resumed, status, {}, sync, now);
  if (check.status.phase != scheduler::job_phase::failed)
    return make_missing_job_pods(self, key, std::move(resumed), std::move(status), true,
                                 std::move(then));
  storage::write_batch batch;
  batch.put(storage::job_record{*resumed, check.status});
  persist(self, std::move(batch),
          [self, key, resumed, failed = check.status, then](const phalanx::status& s) {
    if (s.ok())
      if (auto i = self->state.jobs.find(key); i != self->state.jobs.end()) {
        i->second.job = resumed;
        i->second.status = failed;
        announce_phase(self, key);
      }
    then(s);
  });
}

void sync_job_pods(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end() || i->second.deleting || i->second.job->suspended ||
      scheduler::is_finished(i->second.status.phase))
    return;
  if (i->second.acting) {
    i->second.waiting.push_back([self, key] { sync_job_pods(self, key); });
    return;
  }
  if (!scheduler::is_finished(job_status_of(st, i->second).phase))
    sync_job(self, key);
}

// Jobs whose pods now run their minimum go Running, as Volcano's syncJob moves them: the phase
// is persisted with its time and appended to the job's conditions, as its own end is, so that
// its history reads Pending (or Restarting), then Running. Its phase is still read from its pods
// (registry_status.cpp); what this keeps is when it changed. One write for all of them: a burst
// starts thousands of jobs in a few turns, and a write each made as many batches for the store
// writer, whose groups then looked busy and waited (docs/PERFORMANCE.md, thirtieth session).
void persist_own_starts(self_ptr self, std::span<const std::string> keys) {
  auto& st = self->state;
  storage::write_batch batch;
  std::vector<std::pair<std::string, scheduler::job_status>> starts;
  for (const auto& key : keys) {
    auto i = st.jobs.find(key);
    if (i == st.jobs.end())
      continue;
    auto& j = i->second;
    if (j.acting || j.deleting || j.job->suspended ||
        j.status.phase == scheduler::job_phase::running)
      continue;
    // The phase as job_status_of reads it, from its pods' totals: most calls come before the
    // job runs its minimum (a gang's pods start over several turns), and the whole status, with
    // its counts per task, was most of this path's cost.
    const auto* g = group_of_job(st.cache, j);
    if (g == nullptr)
      continue;
    const auto totals = pod_totals(st, *g);
    const int32_t min_available = g->group->min_member;
    if (job_phase_of(j, totals, min_available) != scheduler::job_phase::running)
      continue;
    auto status = j.status;
    status.phase = scheduler::job_phase::running;
    status.reason = "Running";
    status.message = std::to_string(totals.running + totals.succeeded) +
                     " pod(s) running or succeeded, of minAvailable " +
                     std::to_string(min_available);
    status.last_transition_time = st.ctx->now();
    scheduler::append_condition(status.conditions, {status.phase, status.last_transition_time});
    j.acting = true;
    j.writing_own_phase = true;
    batch.put(storage::job_record{*j.job, status});
    starts.emplace_back(key, std::move(status));
  }
  if (starts.empty())
    return;
  persist(self, std::move(batch), [self, starts = std::move(starts)](const phalanx::status& s) {
    for (auto& [key, status] : starts)
      status_written(self, key, s, std::move(status));
  });
}

void start_job_controller(self_ptr self) {
  auto& st = self->state;
  std::vector<std::string> restarting;
  std::vector<std::string> going_on;
  std::vector<std::string> started;
  for (const auto& [key, j] : st.jobs) {
    if (j.job->suspended)
      continue;
    if (scheduler::deletion_due(*j.job, j.status))
      collect_when_due(self, key);
    if (j.status.phase == scheduler::job_phase::restarting) {
      restarting.push_back(key);
      continue;
    }
    if (scheduler::is_finished(j.status.phase))
      continue;
    // Maybe running since before the stop, the transition not persisted yet (a store written
    // before the transition was): persisted now, with the time of this start.
    if (j.status.phase == scheduler::job_phase::pending)
      started.push_back(key);
    // Whether it misses pods first: it is cheap (mostly one id lookup per pod), and a job's
    // status, read from its pods with their task names, is not.
    const auto* g = group_of_job(st.cache, j);
    if (g != nullptr &&
        (!pods_of_lost_nodes(st, *g).empty() || !missing_positions(st, j, *j.job, *g).empty()) &&
        !scheduler::is_finished(job_status_of(st, j).phase))
      going_on.push_back(key);
  }
  for (const auto& key : restarting) {
    oplog::info("job was restarting when phalanxd stopped: it finishes now").kv("job", key);
    st.jobs.at(key).acting = true;
    settle_after_kill(self, key);
  }
  // A pod deleted just before a stop, whose job had not made it again yet: a sync makes it now,
  // as Volcano's controller syncs every job when it starts.
  for (const auto& key : going_on)
    if (auto i = st.jobs.find(key); i != st.jobs.end() && !i->second.acting) {
      sync_job(self, key);
      if (i->second.acting)
        oplog::info("job misses pods at the start: they are made again").kv("job", key);
    }
  persist_own_starts(self, started);
}

void job_pods_made(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return;
  const auto* g = group_of_job(st.cache, i->second);
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
