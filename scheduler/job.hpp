#pragma once

// Expansion of a Volcano job (batch.volcano.sh/v1alpha1) into its PodGroup and pods, exactly as
// Volcano's admission webhook and job controller do it, so users' tooling finds the objects it
// expects:
// - defaults (webhook mutate): an empty task name becomes "default<index>"; a task's minAvailable
//   defaults to its replicas; the job's minAvailable (when unset or 0) defaults to the sum of the
//   tasks' minAvailable;
// - the PodGroup is named "<job>-<job uid>" (Volcano >= 1.6; 1.5 and older used "<job>", which
//   collided when a job was deleted and re-created under the same name). Its minMember is the
//   job's minAvailable, minTaskMember holds every task's minAvailable, minResources follows
//   calcPGMinResources (below), queue and priority class come from the job, labels and
//   annotations are the job's;
// - pods are "<job>-<task>-<index>", carry the template's labels and annotations plus Volcano's
//   keys, and share their task's constraints and spec_json pointers.
//
// minResources (Volcano's CalcPGMinResources): tasks are sorted by the priority of their pod
// template, highest first (ties keep the job's task order), then
//   1. every task contributes min(its minAvailable, what is left of the job's minAvailable)
//      pods, in that order, until the job's minAvailable is reached;
//   2. if pods are still missing, the tasks' remaining replicas (replicas - minAvailable) fill
//      up to the job's minAvailable, in the same order.
// Each pod counts its effective requests (pod::requests, including one "pods" unit, as
// Kubernetes' quota usage that Volcano sums counts "pods").
//
// Pure functions; thread-safe when the uid generator is.

#include "scheduler/model.hpp"
#include "scheduler/object_status.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// Further keys Volcano's job controller writes on pods (beside those of model.hpp).
inline constexpr std::string_view template_uid_key = "volcano.sh/template-uid";
inline constexpr std::string_view job_retry_count_key = "volcano.sh/job-retry-count";

/// The name Volcano gives an unnamed task: "default" + its index.
inline constexpr std::string_view default_task_prefix = "default";

/// Makes the uid of an object a job creates from the job's uid and the object's name. Must be
/// deterministic for a deterministic expansion.
using uid_generator =
    std::function<object_uid(std::string_view job_uid, std::string_view object_name)>;

/// The default uid generator: a UUID (RFC 9562 version 8, "custom") built from a 128-bit hash
/// of job uid and name, so the same job always expands to the same uids and different pods get
/// different ones.
object_uid derived_uid(std::string_view job_uid, std::string_view object_name);

/// A task's name after defaulting: its own, or "default<index>".
std::string task_name(const job_task& task, std::size_t index);
/// The task of `j` named `name` (after defaulting, task_name); null when it has none.
const job_task* task_named(const job& j, std::string_view name);

/// A task's minAvailable after defaulting: its own, or its replicas.
int32_t task_min_available(const job_task& task) noexcept;

/// The job's minAvailable after defaulting: its own when > 0, else the sum of the tasks'
/// minAvailable.
int32_t job_min_available(const job& j) noexcept;

/// minResources of the job's PodGroup (see the file comment).
resources job_min_resources(const job& j);

/// "<job>-<job uid>".
std::string pod_group_name(const job& j);

/// "<job>-<task>": what a task's pod names share (job_task_ranges, split_job_pod_name).
std::string job_task_prefix(std::string_view job_name, std::string_view task);
/// "<job>-<task>-<index>": job_task_prefix, a dash, the index.
std::string job_pod_name(std::string_view job_name, std::string_view task, int32_t index);
/// The same into `out` from the task's prefix, reusing out's room (a task's pods, one by one).
void write_job_pod_name(std::string& out, std::string_view task_prefix, int32_t index);

/// A job's PodGroup and pods.
struct expanded_job {
  pod_group group;
  /// Task by task in the job's order, index ascending within a task.
  std::vector<pod> pods;
};

/// Expands `j`. The pods are Pending and unbound, created at the job's creation time, in the
/// job's namespace, with `group` = the PodGroup's name, `role` = the task name, and the scheduler
/// name of the template (or the job's when the template names none). errc::invalid_argument when
/// the job has no name or uid, two tasks share a name, a task has negative replicas, or a
/// generated name is longer than 253 characters (a DNS-1123 subdomain).
result<expanded_job> expand_job(const job& j, const uid_generator& make_uid = derived_uid);

/// The pods at `positions` (ascending; position = job_task_range::first + index) of `j`'s
/// expansion, made exactly as expand_job makes them: what Volcano's syncJob creates again for
/// the pods of a job that are missing. errc::invalid_argument as expand_job, and when the
/// positions do not ascend or one is past the last pod.
result<std::vector<pod>> make_job_pods(const job& j, const std::vector<uint32_t>& positions,
                                       const uid_generator& make_uid = derived_uid);

/// What the runtime sets on an expanded pod before it exists: its resource version (the job's at
/// creation) and its one pod slot (requests.pods = 1). The same at creation and when a restart
/// makes the pods again from the stored job.
void prepare_job_pod(pod& p, uint64_t resource_version);

/// The "<namespace>/<name>" keys of the pods expand_job makes for `j`, without making them.
std::vector<std::string> job_pod_keys(const job& j);

/// Whether a task of `j` names dependsOn: its pods are made only once the tasks it depends on
/// run (scheduler::task_dependencies_ready), so the job's pods are not all made at its creation.
bool has_task_dependencies(const job& j) noexcept;

/// Whether `j`'s pods are its creation-time expansion, stored as the job rather than as records
/// of their own (storage/README.md): it is not suspended, was never resumed (a resume makes
/// new incarnations, with random uids, and raises the status version), and no task waits for
/// another (has_task_dependencies: its pods are made as their dependencies run).
bool pods_are_expansion(const job& j, const job_status& s) noexcept;

/// The pods of one task in a job's expansion: "<prefix>-<i>" for i < replicas, at positions
/// first + i of expand_job's list. The names two jobs' expansions share are exactly those of
/// tasks with the same prefix ("<job>-<task>"), since an index has no dash.
struct job_task_range {
  std::string prefix;
  uint32_t first = 0;
  int32_t replicas = 0;
};
/// One per task that makes pods, in expansion order.
std::vector<job_task_range> job_task_ranges(const job& j);
/// A name as job_pod_name writes it, split at its last dash into "<job>-<task>" and the index
/// (digits without sign or leading zero); nullopt for any other name.
std::optional<std::pair<std::string_view, int32_t>> split_job_pod_name(std::string_view name);

} // namespace phalanx::scheduler
