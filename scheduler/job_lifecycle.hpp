#pragma once

// The lifecycle of a Volcano job (batch.volcano.sh/v1alpha1; DESIGN.md section 7): what an event
// about a job or one of its pods makes the job controller do, and which phase the job is in
// afterwards, as Volcano's job controller decides it (pkg/controllers/job: applyPolicies, the
// per-phase handlers of state/*.go, killJob/killTarget/syncJob). The controller persists the
// phase with its history (conditions with transition times); nothing here derives a phase from
// pods on a read.
//
// Two steps, as in Volcano:
//   1. resolve_action: event -> action. A command's action is taken as is; internal events
//      (OutOfSync, CommandIssued, PodRunning), events about pods of another job with the same
//      name and events from pods of an older job version sync; otherwise the first policy of the
//      pod's task that matches (its event, "*", or the pod's exit code), then the first policy of
//      the job that matches, then SyncJob. A PodPending policy needs a timeout; a policy with a
//      timeout delays its action (the controller runs it when the timeout passes, unless the
//      pod's next event cancels it: pod_event_cancels_delay).
//   2. next_state: (phase, action, pods) -> what to kill or create, the next status, and the
//      condition to append. Per phase (Volcano's state/*.go):
//
//   phase         action                        pods killed               retry  next phase
//   Pending or    RestartJob                    all (*)                   +1     Restarting
//   Running       RestartTask / RestartPod      the task's / the pod      +1     Restarting
//                 AbortJob                      all but finished          -      Aborting
//                 CompleteJob                   all but finished          -      Completing
//                 TerminateJob                  all but finished          -      Terminating
//                 SyncJob, ResumeJob            none; create missing pods -      see sync below
//   Restarting    SyncJob                       none; create missing pods -      restart check
//                 RestartTask / RestartPod      the task's / the pod      -      restart check
//                 any other                     all (*)                   -      restart check
//   Aborting      ResumeJob                     all but finished          +1     Restarting
//                 any other                     all but finished          -      Aborted when
//                                                                                none is alive
//   Aborted       ResumeJob                     all but finished          +1     Restarting
//                 any other                     all but finished          -      Aborted
//   Completing    any                           all but finished          -      Completed when
//                                                                                none is alive
//   Terminating   any                           all but finished          -      Terminated when
//                                                                                none is alive
//   Completed, Failed, Terminated: any          all but finished          -      unchanged
//
//   (*) finished (Succeeded and Failed) pods are kept at the last retry, when
//       status.retryCount >= maxRetry - 1, so the pod that failed last stays for its logs.
//   sync, Pending: Running when minAvailable <= running + succeeded + failed.
//   sync, Running: Completed when succeeded >= minSuccess; once every pod finished (succeeded +
//       failed = replicas): Failed when a task has fewer succeeded than its minAvailable (checked
//       only if the job's minAvailable >= the sum of the tasks'), or fewer than minSuccess, else
//       Completed when succeeded >= minAvailable, else Failed; otherwise Pending when more pods
//       are pending than replicas - minAvailable (the gang lost members).
//   restart check: Failed when retryCount >= maxRetry; else Pending when replicas - terminating
//       >= minAvailable (the old pods are gone); else still Restarting.
//   "alive": pending, running, unknown or terminating pods.
//
// So maxRetry bounds the restarts: with maxRetry 3 a job restarts twice, and the third restart
// ends in Failed. A whole-job kill also deletes the PodGroup (a later sync makes it again) and
// raises status.version, which outdates every event from the older pods.
//
// The controller marks the pods it kills out of sync before deleting them (Volcano's
// volcano.sh/controller-out-of-sync annotation), so their deletion comes back as OutOfSync, not as
// PodEvicted, and does not trigger the policies again.
//
// Volcano's job has no Inqueue phase (its PodGroup has): a job stays Pending while its PodGroup
// waits for the enqueue gate, and job_pods::pod_group_admitted carries the PodGroup's side.
// RestartPartition (task partitions) is left out: the model has no partition policy.
//
// Where this differs from Volcano (the first two only in what a transient status shows):
// - counts are the live pods the caller passes, with the pods this step kills as terminating.
//   Volcano writes the counts of the pods it touched (a targeted kill counts only its targets; a
//   PodGroup still Pending leaves the previous counts), so its restart check may end Restarting
//   while pods of other tasks are still terminating;
// - a step that ends in Completed or Failed creates no pods (Volcano's syncJob creates missing
//   pods first and kills them on the next event);
// - job-level events (no pod) carry no job version. Volcano compares their version 0 with
//   status.version, so after the first whole-job kill an Unknown event always syncs and its
//   policy never fires; here it keeps its policy.
//
// Pure functions of their arguments; thread-safe.

#include "scheduler/model.hpp"
#include "scheduler/object_status.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// Volcano's job events (bus/v1alpha1 Event).
enum class job_event {
  /// "*": in a policy, every event. Never raised.
  any,
  /// A pod was created, or went back to Pending.
  pod_pending,
  /// A pod went Running. Internal: policies never see it (it cancels delayed actions).
  pod_running,
  /// A pod went Failed; carries the exit code of its first container.
  pod_failed,
  /// A pod was deleted by someone other than this controller.
  pod_evicted,
  /// The job's PodGroup went Unknown: part of the gang cannot be scheduled while other pods run.
  unknown,
  /// Every replica of a task succeeded.
  task_completed,
  /// A task's live pods restarted their containers maxRetry times (task_failed()).
  task_failed,
  /// Something changed that needs no policy (a pod this controller killed, a spec change, the
  /// PodGroup's phase). Internal.
  out_of_sync,
  /// A user command (vcctl job suspend/resume...); carries its action. Internal.
  command_issued,
  /// Raised by Volcano's controller before 1.0 on a scale up or down; policies may name it.
  job_updated,
};
std::string_view to_string(job_event e) noexcept;  // "*", "PodPending", ... Volcano's spelling.
/// Exact inverse of to_string, case-sensitive; nullopt otherwise.
std::optional<job_event> job_event_from_string(std::string_view text) noexcept;
inline constexpr job_event job_event_last = job_event::job_updated;

/// Volcano's job actions (bus/v1alpha1 Action) that the job controller executes.
enum class job_action {
  /// Create missing pods, delete surplus ones, recount and update the phase. The default.
  sync_job,
  /// Kill every pod and start again; counts a retry.
  restart_job,
  /// Kill the pods of the event's task; they are created again. Counts a retry.
  restart_task,
  /// Kill the event's pod; it is created again. Counts a retry.
  restart_pod,
  /// Kill the unfinished pods; the job can be resumed.
  abort_job,
  /// Kill the unfinished pods; the job completes.
  complete_job,
  /// Kill the unfinished pods; the job ends Terminated and cannot be resumed.
  terminate_job,
  /// Restart an Aborting or Aborted job; counts a retry.
  resume_job,
};
std::string_view to_string(job_action a) noexcept;  // "SyncJob", "RestartJob", ...
std::optional<job_action> job_action_from_string(std::string_view text) noexcept;
inline constexpr job_action job_action_last = job_action::resume_job;

/// Appends `c`, first removing any condition with the same phase, so the history holds each phase
/// once, at its latest entry, oldest first (Volcano's appendJobCondition).
void append_condition(std::vector<job_condition>& conditions, const job_condition& c);

/// An event about a job, as the controller raises it.
struct job_event_info {
  job_event event = job_event::out_of_sync;
  /// The pod's task (its volcano.sh/task-spec), empty for a job-level event (Unknown, a command,
  /// a spec change). Only events with a task consult the task's policies.
  std::string task;
  /// The pod's name; empty for a job-level event.
  std::string pod;
  /// The pod's phase now; nullopt when it is gone (PodEvicted) or the event is about no pod.
  std::optional<pod_phase> pod_state;
  /// PodFailed: the exit code of the pod's first container (Volcano reads only the first).
  std::optional<int32_t> exit_code;
  /// CommandIssued: the command's action, executed without consulting policies.
  std::optional<job_action> command;
  /// Pod events: the uid of the job that owns the pod. Differs from the job's after the job was
  /// deleted and created again under its name; such events sync.
  std::optional<object_uid> job_uid;
  /// Pod events: the pod's volcano.sh/job-version. Older than status.version: the pod belongs to
  /// an incarnation a whole-job kill ended, and its event syncs.
  std::optional<int32_t> job_version;
};

/// Why resolve_action chose its action.
enum class action_source {
  /// No policy matched: SyncJob.
  no_policy,
  /// The action of a command.
  command,
  /// An internal event: SyncJob.
  internal_event,
  /// The pod belongs to another job of the same name: SyncJob.
  other_job,
  /// The pod belongs to an older version of the job: SyncJob.
  outdated,
  /// A policy of the pod's task.
  task_policy,
  /// A policy of the job.
  job_policy,
};
std::string_view to_string(action_source s) noexcept;  // "NoPolicy", "Command", ...
inline constexpr action_source action_source_last = action_source::job_policy;

/// The action for an event (Volcano's delayAction): what to do, when, and about what.
struct resolved_action {
  job_action action = job_action::sync_job;
  /// The matched policy's timeout: run the action this long after the event. Zero: now.
  duration delay{};
  action_source source = action_source::no_policy;
  /// The index of the matched policy in its task's or the job's list; nullopt without one.
  std::optional<std::size_t> policy_index;
  /// The event that led here; its task and pod are RestartTask's and RestartPod's target.
  job_event_info cause;
};

/// Resolves the action for `e` against the policies of `j` (see the file comment). `status` is
/// the job's current status (its version). A policy whose action is not one of Volcano's
/// user actions (validation refuses those) resolves to SyncJob, as Volcano's handlers treat an
/// unknown action.
resolved_action resolve_action(const job& j, const job_status& status, const job_event_info& e);

/// Whether some policy of the job or of one of its tasks acts on PodPending: it names the event
/// (or "*") and has a timeout, as a PodPending policy must. Only then do a job's new pods need
/// PodPending raised.
bool acts_on_pod_pending(const job& j);

/// Whether `incoming`, an event about the same pod, cancels the action a policy delayed for
/// `delayed` (Volcano's CleanPodDelayActionsIfNeed): any later event but PodPending about the same
/// pod incarnation (`same_pod_uid`) cancels a PodPending timeout; PodRunning cancels a delayed
/// PodFailed or PodEvicted action.
bool pod_event_cancels_delay(job_event delayed, job_event incoming, bool same_pod_uid) noexcept;

/// Whether executing `done` cancels the pending delayed action `delayed` (Volcano's
/// cleanupDelayActions): SyncJob cancels nothing; a job-wide action cancels the job-wide ones;
/// RestartTask those of the same task; RestartPod those of the same pod.
bool action_cancels_delay(const resolved_action& done, const resolved_action& delayed) noexcept;

/// The pods of one task as the controller sees them now.
struct task_pods {
  /// Pods not being deleted, by phase; `counts.task` names the task.
  task_counts counts;
  /// Pods whose deletion was requested and that are not gone yet, whatever their phase.
  int32_t terminating = 0;
};

/// A job's pods: one entry per task of the job (a task without an entry has no pods).
struct job_pods {
  std::vector<task_pods> tasks;
  /// The PodGroup is past Pending (Inqueue, Running, ...): only then does a sync create missing
  /// pods (Volcano's syncTask), so pods appear once the scheduler admitted the gang.
  bool pod_group_admitted = false;
};

/// Which pods the controller must delete.
enum class kill_scope {
  none,
  /// Every pod of the job, except finished ones when `keep_finished`.
  job,
  /// Every pod of `task`, finished or not.
  task,
  /// The pod `pod` of `task`, if it still exists.
  pod,
};
std::string_view to_string(kill_scope s) noexcept;  // "None", "Job", "Task", "Pod"
inline constexpr kill_scope kill_scope_last = kill_scope::pod;

struct pod_kill {
  kill_scope scope = kill_scope::none;
  std::string task;
  std::string pod;
  /// Succeeded and Failed pods are kept (Volcano's PodRetainPhaseSoft).
  bool keep_finished = false;
  friend bool operator==(const pod_kill&, const pod_kill&) = default;
};

/// What one step does: the controller's work and the status to persist afterwards.
struct job_transition {
  /// The next status: phase, counts after this step (killed pods count as terminating, created
  /// ones as pending), retry count, version; when the phase changed, reason, message and
  /// last_transition_time too (otherwise they are the current ones).
  job_status status;
  bool phase_changed = false;
  /// Set when the phase changed; status.conditions has it appended (append_condition).
  std::optional<job_condition> condition;
  pod_kill kill;
  /// Create the missing pods ("<job>-<task>-<index>" for every index < replicas that has no pod,
  /// not even a terminating one). A sync also deletes pods with an index >= replicas and pods
  /// marked out of sync, as Volcano's syncJob does; the counts here do not foresee those.
  bool create_missing_pods = false;
  /// A whole-job kill: delete the PodGroup too (a later sync makes it again).
  bool delete_pod_group = false;
  /// 0 or 1: status.retry_count grew by this much.
  int32_t retry_increment = 0;
};

/// The status of a new job (Volcano's initJobStatus): Pending since `now`, with its condition.
job_transition initial_transition(const job& j, timestamp now);

/// One step of the state machine (see the file comment): the job in `current` (which must hold a
/// phase the job reached; its counts are not used), its pods as the controller sees them now, and
/// the action to execute now (a delayed action when its timeout passed). The transition assumes
/// the kills and creations succeed: when one fails, the controller persists nothing and retries
/// the step (Volcano requeues the event), and after too many failures executes TerminateJob.
job_transition next_state(const job& j, const job_status& current, const job_pods& pods,
                          const resolved_action& action, timestamp now);

/// Volcano's runningDuration as its killPods writes it: the time from the job's creation to
/// `s`'s last transition. next_state sets it at every kill, of the whole job or of a target.
inline duration running_duration(const job& j, const job_status& s) noexcept {
  return s.last_transition_time - j.meta.creation_time;
}

/// What a sync of a Pending or Running job gives it from its pods' counts per task (Volcano's
/// pendingState and runningState defaults, as next_state's SyncJob): its phase, and when that
/// is not `current`, why (reason, message). A controller that reads a job's phase from its pods
/// between its steps reads it so, so that minSuccess and the tasks' minAvailable end a job as
/// a sync would.
struct synced_phase {
  job_phase phase = job_phase::pending;
  std::string reason;
  std::string message;
};
synced_phase phase_by_sync(const job& j, job_phase current,
                           const std::vector<task_counts>& tasks);

/// True when the state machine may move `from -> to` (a different phase); next_state only makes
/// such moves.
bool is_legal_transition(job_phase from, job_phase to) noexcept;

/// Completed, Failed and Terminated: the phases a job never leaves (Aborted may be resumed).
bool is_finished(job_phase p) noexcept;

/// When a finished job is due for deletion (Volcano's garbage collector): its last transition
/// time plus the job's ttlSecondsAfterFinished. nullopt when the job is not finished, has no TTL,
/// or no transition time (Volcano then refuses to guess).
std::optional<timestamp> deletion_due(const job& j, const job_status& s) noexcept;

/// True once deletion_due is at or before `now`.
bool is_due_for_deletion(const job& j, const job_status& s, timestamp now) noexcept;

/// Every replica of `task` succeeded (Volcano's TaskCompleted check): `task` has replicas > 0 and
/// at least that many succeeded pods. An unknown task is not completed.
bool task_completed(const job& j, const job_pods& pods, std::string_view task) noexcept;

/// Whether the pods of task `task` (an index into j.tasks) may be made (Volcano's
/// waitDependsOnTaskMeetCondition): a task without dependsOn always; otherwise a task it names is
/// ready when at least its minAvailable (defaulted) of its pods are running or succeeded, and
/// every task named must be ready, or any one when dependsOn.iteration is "any" and names more
/// than one. A name the job has no task of is never ready (validation refuses it).
bool task_dependencies_ready(const job& j, std::size_t task, const job_pods& pods);

/// A task failed (Volcano's TaskFailed check): its pending and running pods restarted their
/// containers (init containers included) `restarts` times in total, at least the task's maxRetry
/// (unset or 0: 3; negative: never).
bool task_failed(const job_task& task, int32_t restarts) noexcept;

/// What changed about a pod, for pod_event.
enum class pod_change { added, updated, deleted };

struct pod_change_info {
  pod_change change = pod_change::updated;
  /// updated: the phase before.
  pod_phase old_phase = pod_phase::pending;
  /// added, updated: the phase now.
  pod_phase new_phase = pod_phase::pending;
  /// The pod carries the out-of-sync mark (a kill of this controller); for a deletion also true
  /// when the controller did not know the pod.
  bool out_of_sync = false;
  /// After the change, task_completed() for the pod's task.
  bool task_completed = false;
  /// After the change, task_failed() for the pod's task.
  bool task_failed = false;
};

/// The event a pod change raises (Volcano's addPod, updatePod, deletePod): a marked pod raises
/// OutOfSync; a new pod PodPending; a deleted one PodEvicted; an update into Failed PodFailed,
/// into Succeeded TaskCompleted when its task completed; into Running PodRunning, into Pending
/// PodPending; a Running or Pending pod that stays so raises TaskFailed when its task failed;
/// anything else OutOfSync.
job_event pod_event(const pod_change_info& c) noexcept;

} // namespace phalanx::scheduler
