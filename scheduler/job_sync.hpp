#pragma once

// A Volcano job's pods as a job controller sees them in a list of pods (Kubernetes mode: the
// apiserver's), and what its sync does with them (Volcano's syncJob): which pods are missing and
// made, which are deleted, and which a step's kill takes. The lifecycle decides what to do
// (scheduler/job_lifecycle.hpp); this says to which pods, by name, so that a controller that
// holds pods as a list (actors/kube_job_controller.cpp) and not as the catalog's entries drives
// the same table.
//
// Names follow job_pod_name ("<job>-<task>-<index>"); a pod is the job's when the controller
// owner of the pod is the job (the caller checks that); its task is its volcano.sh/task-spec.
//
// Pure functions of their arguments; thread-safe.

#include "scheduler/job_lifecycle.hpp"
#include "scheduler/model.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace phalanx::scheduler {

/// One pod of a job as its controller sees it.
struct job_pod_view {
  std::string name;
  /// Its volcano.sh/task-spec; empty when it names none (then it counts under no task).
  std::string task;
  pod_phase phase = pod_phase::pending;
  /// Its deletion was requested (metadata.deletionTimestamp, or a delete of this controller):
  /// it counts as terminating, whatever its phase, until it is gone.
  bool terminating = false;
  /// Marked by a kill of this controller (volcano.sh/controller-out-of-sync): a sync deletes it,
  /// and its events raise OutOfSync.
  bool out_of_sync = false;
  /// How often its containers restarted, init containers included (Kubernetes' restartCount,
  /// summed over status.containerStatuses and status.initContainerStatuses); what TaskFailed
  /// counts (task_restarts). Never negative.
  int32_t restarts = 0;
  friend bool operator==(const job_pod_view&, const job_pod_view&) = default;
};

/// The annotation Volcano's controller puts on the pods a kill takes before it deletes them.
inline constexpr std::string_view out_of_sync_key = "volcano.sh/controller-out-of-sync";

/// The pods by task and phase for the lifecycle (job_pods): terminating pods count as
/// terminating, the others by phase, under their task; one entry per task that has pods, sorted
/// by task name. `pod_group_admitted` is passed on.
job_pods count_job_pods(std::span<const job_pod_view> pods, bool pod_group_admitted);

/// The restarts of task `task`'s pods that are Pending or Running and not terminating, summed
/// (what Volcano's cache compares with the task's maxRetry for TaskFailed: task_failed());
/// saturates at the largest int32_t. Pods of other tasks or phases do not count.
int32_t task_restarts(std::span<const job_pod_view> pods, std::string_view task) noexcept;

/// task_restarts' rule for one pod, for callers that hold pods otherwise: its restarts count
/// while it is Pending or Running and not terminating.
constexpr bool restarts_count_for_task(pod_phase phase, bool terminating) noexcept {
  return !terminating && (phase == pod_phase::pending || phase == pod_phase::running);
}
/// A sum of restarts as task_restarts gives it: saturated at the largest int32_t.
int32_t saturated_restarts(int64_t sum) noexcept;

/// Whether `kill` (a transition's) takes `p`: scope job, every pod but finished ones when
/// keep_finished; task, every pod of the task; pod, the pod of that name; none, no pod. Whether
/// the pod is terminating already does not matter here (its deletion needs no second request).
bool kill_takes(const pod_kill& kill, const job_pod_view& p) noexcept;

/// What a sync does with the pods of a job that goes on (Volcano's syncJob).
struct job_sync_plan {
  /// The positions (job_task_ranges: task first + index) with no pod of their name, a
  /// terminating one counting as there, ascending; only of tasks whose pods may be made now
  /// (task_dependencies_ready). make_job_pods makes them.
  std::vector<uint32_t> create;
  /// The pods to delete, by name, in the order given: pods not terminating that are marked out
  /// of sync, or are no pod of the job's spec (a name job_pod_name does not give for an index
  /// below its task's replicas: a scale-down's surplus, a task the job no longer has).
  std::vector<std::string> remove;
  friend bool operator==(const job_sync_plan&, const job_sync_plan&) = default;
};

/// The sync of `j` over its pods `pods` (see job_sync_plan). Duplicate names count once.
job_sync_plan plan_job_sync(const job& j, std::span<const job_pod_view> pods);

} // namespace phalanx::scheduler
