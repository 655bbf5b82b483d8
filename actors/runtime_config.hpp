#pragma once

// Policy knobs and runtime settings of phalanxd, with their defaults. `phalanxd --config FILE`
// reads them from YAML (config.cpp); every field has the default written beside it.

#include "k8s/config.hpp"
#include "scheduler/enqueue_gate.hpp"
#include "scheduler/model.hpp"
#include "scheduler/planner.hpp"
#include "scheduler/result.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace phalanx::actors {

struct scheduling_config {
  /// Schedule whole gangs (minMember, minTaskMember, minResources gate). When false, every pod is
  /// placed on its own as the default kube-scheduler does (the demo's comparison run).
  /// Default: true.
  bool gang_scheduling = true;
  /// The enqueue gate. Default: overcommit factor 1.2.
  scheduler::enqueue_config enqueue;
  /// The planner. Default: binpack, adaptive sampling, min 100 feasible nodes.
  scheduler::planner_config planner;
  /// Gangs of one queue planning at once: from its slot to every node's vote. More slots queue
  /// more plans and reserves behind each other in the two threads' run queues, and lengthen the
  /// decision's tail without placing more per second (docs/PERFORMANCE.md, fifteenth session:
  /// with three queues the backlog's slot-to-placed p99 was 4-29 ms at 8, 0.7-2.0 ms at 2).
  /// Default: 2.
  int32_t max_planning_per_queue = 2;
  /// Immediate replans after a refused reserve round before backing off. Default: 2.
  int32_t max_replans = 2;
  /// A gang counts the reserves it sends against their nodes in the cluster view until each node
  /// reads its reserve (docs/NOTES.md "Reserves in flight"), so gangs planning meanwhile do not
  /// choose the same room. Off: planners see only what nodes published, as stale as the nodes'
  /// mailboxes are long (the wait-die tests use it to make gangs collide). Default: true.
  bool count_reserves_in_flight = true;
  /// Backoff after a failed attempt: starts here, doubles, with +-50% jitter. Default: 5 ms.
  std::chrono::milliseconds backoff_initial{5};
  /// Backoff cap. Default: 1 s.
  std::chrono::milliseconds backoff_max{1000};
  /// Debounce of the fair-share recomputation. Default: 10 ms.
  std::chrono::milliseconds fair_share_debounce{10};
  /// A gang idle this long (running or completed, every pod bound or ended, nothing in flight)
  /// has its actor ended; the registry starts a new one from the pods when one of them changes
  /// (docs/NOTES.md "Idle gangs are parked"). Zero keeps every gang's actor. Default: 2 s.
  std::chrono::milliseconds park_idle_gangs_after{2'000};
  /// Priority preemption within a queue (Volcano's `preempt` action): an admitted gang that
  /// cannot be placed evicts pods of lower-priority gangs of its own queue (docs/NOTES.md
  /// "Preemption"). Off by default, as `preempt` is not among Volcano's default actions.
  bool preemption = false;
  /// Reclaim across queues (Volcano's `reclaim` action): an admitted gang that cannot be placed,
  /// and whose queue stays within its deserved share with the gang's minimum, evicts pods of
  /// reclaimable queues above their deserved shares, down to them, never below a queue's
  /// guarantee (docs/NOTES.md "Preemption"). Off by default, as in Volcano.
  bool reclaim = false;
  /// How long a preemptor holds the room its victims free while it waits for them to go (a
  /// Kubernetes pod terminates within its grace period, 30 s by default); then it gives the
  /// room back and tries again later. Default: 90 s.
  std::chrono::milliseconds preemption_wait{90'000};
  /// No starving gang (scheduler/room_reservation.hpp, docs/NOTES.md "No starving gang"): a
  /// gang admitted and not ready whose minimum found no room for this long reserves the nodes
  /// where it would fit soonest; they take no other gang's pods that would delay it, while other
  /// gangs keep flowing elsewhere. Zero turns it off (Volcano's behaviour). Default: 6 h, from
  /// the Philly replay, where shorter bounds reserved more than they saved (docs/PERFORMANCE.md,
  /// "the replay runs the live runtime's reservation"); a cluster whose big gangs wait behind
  /// streams of small ones wants a shorter bound.
  std::chrono::milliseconds starvation_bound{6 * 3600 * 1000};
  /// Pods whose spec.schedulerName is one of these are scheduled; others are stored and left
  /// alone. An empty schedulerName counts as ours. Default: phalanx, volcano.
  std::vector<std::string> scheduler_names{"phalanx", "volcano"};
  /// priorityClassName -> priority: in standalone mode, PriorityClasses created at start when
  /// the store has none of that name (a class deleted comes back at the next start; one changed
  /// through the API keeps its change). Kubernetes' two system classes are created whatever this
  /// says. In Kubernetes mode, the priorities used until the cluster's classes are watched.
  /// Default: the two system classes.
  std::map<std::string, int32_t, std::less<>> priority_classes{
      {"system-cluster-critical", 2000000000}, {"system-node-critical", 2000001000}};
};

struct store_config {
  /// The group-commit window: records arriving within it, after the first of a group, share one
  /// synced write. A record that finds the writer quiet (the last group held fewer than four
  /// callers' batches, or ended a window or more ago) goes at once. Default: 1 ms. Zero flushes as
  /// soon as the writer's mailbox is drained (the group is then what arrived during the previous
  /// sync): ~15% fewer pods/s under load (docs/PERFORMANCE.md).
  std::chrono::microseconds commit_window{1000};
  /// Flush earlier once this many records are buffered. Default: 4096.
  std::size_t max_batch_records = 4096;
  /// Once no write has come for this long, the writer has RocksDB flush its memtables in the
  /// background, freeing what a burst left in them (up to 32 MiB for pods) instead of keeping it
  /// until later writes fill them; the WAL a crash replays shrinks too. Zero: never. Default: 2 s.
  std::chrono::milliseconds flush_when_idle_after{2000};
  /// ... when they hold at least this many bytes: smaller table files would only make more
  /// compaction work for little memory. Default: 1 MiB.
  std::size_t flush_when_idle_above = std::size_t{1} << 20;
};

struct simulation_config {
  /// A bound pod goes Running after this delay. Default: 0 (at once).
  std::chrono::milliseconds pod_start_delay{0};
  /// How often the simulated cluster checks whether nothing can progress. Default: 1 s.
  std::chrono::milliseconds stall_check_interval{1000};
};

/// Kubernetes mode (DESIGN.md section 6): the apiserver is the truth, this process its batch
/// scheduler. phalanxd --mode kubernetes fills it from its flags.
struct kubernetes_config {
  /// Kubernetes mode instead of the standalone world. Default: false.
  bool enabled = false;
  /// How to reach the apiserver (--kubeconfig, or in cluster). Default: none.
  k8s::connection_config connection;
  /// Bind only while holding the Lease lock_namespace/lock_name (--leader-elect). Default: true.
  bool leader_elect = true;
  /// Default: "volcano-system".
  std::string lock_namespace = "volcano-system";
  /// Default: "phalanx".
  std::string lock_name = "phalanx";
  /// This process in the Lease. Default: empty, meaning "<hostname>_<pid>".
  std::string identity;
  /// The Lease's timing, client-go's defaults. Default: 15 s, 10 s, 2 s.
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  /// Bindings posted at once (each a request within the client's QPS). The client gets a
  /// connection for each, and four more for status, events and lone pods' PodGroups, so that
  /// the workers do not queue for connections (with client-go's pool of four, eight workers
  /// posted about 480 Bindings/s where the apiserver took 1,400; docs/PERFORMANCE.md).
  /// Default: 16.
  int32_t binding_workers = 16;
  /// Run Volcano's job controller too (`--controllers job`; actors/kube_job_controller.hpp):
  /// batch.volcano.sh Jobs get their PodGroup, pods and status from this process. Off by
  /// default: where Volcano is installed, its vc-controller-manager does that, and two job
  /// controllers would fight over the same pods. Default: false.
  bool job_controller = false;
  /// The job controller tries a job's failing step again this many times, then terminates the
  /// job ("Job failed on action X for retry limit reached"), as vc-controller-manager's
  /// --max-requeue-num; -1: without end. Default: 15, Volcano's.
  int32_t job_max_requeue = 15;
};

struct runtime_config {
  scheduling_config scheduling;
  kubernetes_config kubernetes;
  store_config store;
  simulation_config simulation;
  /// CAF scheduler worker threads. Default: 2 (this project's machines have 2 cores; CAF would
  /// otherwise pick 4).
  int32_t threads = 2;
  /// How many changes of the watched kinds the API keeps (`watchHistory`): a watch resumes
  /// from a version they reach back to, and a list continues from its first page
  /// (api/list_page.hpp) until a change made after that page is dropped; then the token is 410
  /// Expired, as kube-apiserver's after etcd compacts. Default: 8192 changes.
  std::size_t watch_history = 8192;
  /// Seed of every random choice (planner scan start, backoff jitter, uids). Default: taken from
  /// the clock at start; tests set it.
  uint64_t seed = 0;
  /// Deterministic mode: CAF's test coordinator (scheduler.policy = testing), for tests only.
  bool deterministic = false;
};

/// Parses phalanxd's YAML config. Unknown keys and bad values are errors naming the key path.
result<runtime_config> parse_runtime_config(const std::string& yaml_text);

/// True when a pod with this schedulerName is ours.
bool is_our_scheduler(const scheduling_config& config, std::string_view scheduler_name);

/// The priority of a priority class; nullopt when unknown.
std::optional<int32_t> priority_of(const scheduling_config& config, std::string_view class_name);

} // namespace phalanx::actors
