#pragma once

// Status of objects as Volcano and Kubernetes show it: PodGroup phase and counts with conditions,
// queue counts, job phase and per-task counts, pod conditions, events. The runtime computes them;
// the API renders them; storage persists the parts that cannot be recomputed (job phase and
// retries, queue state).

#include "scheduler/model.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// A Kubernetes-style condition.
struct condition {
  std::string type;    // "Unschedulable", "Scheduled", "PodScheduled"
  std::string status;  // "True", "False", "Unknown"
  std::string reason;  // "NotEnoughResources", "Unschedulable"
  std::string message;
  timestamp last_transition_time{};
  friend bool operator==(const condition&, const condition&) = default;
};

/// Volcano's PodGroupStatus.
struct pod_group_status {
  pod_group_phase phase = pod_group_phase::pending;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::vector<condition> conditions;
  friend bool operator==(const pod_group_status&, const pod_group_status&) = default;
};

/// Volcano's QueueStatus plus what Phalanx adds: allocated and deserved resources.
struct queue_status {
  int32_t pending = 0;    // PodGroups by phase.
  int32_t inqueue = 0;
  int32_t running = 0;
  int32_t unknown = 0;
  int32_t completed = 0;
  resources allocated;    // Requests of the queue's bound, non-terminal pods.
  resources deserved;     // From fair share.
  friend bool operator==(const queue_status&, const queue_status&) = default;
};

/// Volcano's job phases (batch.volcano.sh/v1alpha1 JobPhase).
enum class job_phase {
  pending,
  aborting,
  aborted,
  running,
  restarting,
  completing,
  completed,
  terminating,
  terminated,
  failed,
};
std::string_view to_string(job_phase p) noexcept;  // "Pending", "Aborting", ...
inline constexpr job_phase job_phase_last = job_phase::failed;

/// Pod counts of one task (Volcano's TaskStatusCount, flattened).
struct task_counts {
  std::string task;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t unknown = 0;
  friend bool operator==(const task_counts&, const task_counts&) = default;
};

/// Volcano's JobStatus.
/// One entry of a job's phase history (Volcano's JobCondition): the phase entered and when.
struct job_condition {
  job_phase status = job_phase::pending;
  timestamp last_transition_time{};
  friend bool operator==(const job_condition&, const job_condition&) = default;
};

struct job_status {
  job_phase phase = job_phase::pending;
  std::string reason;
  std::string message;
  timestamp last_transition_time{};
  int32_t min_available = 0;
  int32_t pending = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t terminating = 0;
  int32_t unknown = 0;
  int32_t retry_count = 0;
  int32_t version = 0;
  std::vector<task_counts> tasks;
  /// The phases the job entered, each once at its latest entry, oldest first
  /// (scheduler::append_condition): what the job controller persisted. Phases read from the pods
  /// (Pending and Running, a job's own end) are not in it.
  std::vector<job_condition> conditions;
  /// Volcano's runningDuration: the last transition's time less the job's creation, set when
  /// the controller killed pods (a restart of the job, a task or a pod, an abort, an end, what
  /// a finished job left running) and never when it only synced; nullopt until then.
  std::optional<duration> running_duration;
  friend bool operator==(const job_status&, const job_status&) = default;
};

/// A Kubernetes Event about an object, as `describe` shows it.
struct event {
  std::string type;    // "Normal" or "Warning".
  std::string reason;  // "Scheduled", "Unschedulable", "Evict"...
  std::string message;
  int32_t count = 1;
  timestamp first_time{};
  timestamp last_time{};
  friend bool operator==(const event&, const event&) = default;
};

} // namespace phalanx::scheduler
