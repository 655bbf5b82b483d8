#pragma once

// The scheduler's metrics, recorded into the same Prometheus registry the HTTP server renders at
// /metrics. docs/METRICS.md lists every family: what it counts, its type, labels and unit. Three
// sets of names: Phalanx's own (phalanx_*), the names of Volcano's scheduler and controllers
// (volcano_*) and of kube-scheduler (scheduler_*) that users' dashboards already query, with
// their types, labels and units, and the process_* and *_build_info every exporter has.

#include "api/metrics.hpp"
#include "api/process_metrics.hpp"

#include <array>
#include <string_view>

namespace phalanx::actors {

/// Buckets of a gang's scheduling latencies in seconds, 0.1 ms to 2.5 s.
inline std::vector<double> gang_latency_buckets_seconds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
}

/// The same in milliseconds, for Volcano's *_milliseconds histograms.
inline std::vector<double> gang_latency_buckets_milliseconds() {
  return {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500};
}

/// kube-scheduler's pending pod queues (scheduler_pending_pods{queue}); docs/METRICS.md says which
/// of a gang's states each one stands for.
enum class kube_pending_queue : uint8_t { none, active, backoff, unschedulable, gated };
std::string_view to_string(kube_pending_queue q) noexcept;  // "" for none.
inline constexpr kube_pending_queue kube_pending_queue_last = kube_pending_queue::gated;

/// The result label of scheduler_schedule_attempts_total and volcano_schedule_attempts_total.
enum class attempt_result : uint8_t { scheduled, unschedulable, error };
std::string_view to_string(attempt_result r) noexcept;
inline constexpr attempt_result attempt_result_last = attempt_result::error;

/// The PodGroup phases Volcano counts per queue (volcano_queue_pod_group_<phase>_count), in the
/// order of scheduler::pod_group_phase (pending, inqueue, running, unknown, completed).
inline constexpr std::array<std::string_view, 5> pod_group_count_names = {
    "volcano_queue_pod_group_pending_count", "volcano_queue_pod_group_inqueue_count",
    "volcano_queue_pod_group_running_count", "volcano_queue_pod_group_unknown_count",
    "volcano_queue_pod_group_completed_count"};

/// One resource dimension's family, in each unit set, of a queue amount (allocated, deserved,
/// request, inqueue).
struct queue_amount_families {
  api::metric_family<api::gauge>* cpu_cores = nullptr;
  api::metric_family<api::gauge>* memory_bytes = nullptr;
  api::metric_family<api::gauge>* ephemeral_storage_bytes = nullptr;
  api::metric_family<api::gauge>* pods = nullptr;
  api::metric_family<api::gauge>* extended = nullptr;  // {queue, resource}
  api::metric_family<api::gauge>* volcano_milli_cpu = nullptr;
  api::metric_family<api::gauge>* volcano_memory_bytes = nullptr;
  api::metric_family<api::gauge>* volcano_scalar = nullptr;  // {queue_name, resource}
};

struct runtime_metrics {
  api::metrics_registry registry;

  runtime_metrics();

  /// Removes every series of the queue `name` (the families labelled `queue` or `queue_name` by
  /// a Phalanx queue): called when the queue is deleted, so that its series do not stay forever.
  /// The queue actor's own series are shared (share()): its last updates land nowhere.
  void remove_queue_series(std::string_view name);

  api::counter& pods_scheduled = registry.add_counter(
      "phalanx_pods_scheduled_total", "Pods bound to a node by the scheduler.");
  api::counter& gangs_scheduled = registry.add_counter(
      "phalanx_gangs_scheduled_total", "Reserve rounds that committed (a gang or an elastic round).");
  api::counter& reserve_rounds = registry.add_counter(
      "phalanx_reserve_rounds_total", "Two-phase reserve rounds started.");
  api::counter& reserve_refusals = registry.add_counter(
      "phalanx_reserve_refusals_total", "Reserve rounds refused by a node (conflict or room).");
  api::counter& reserve_waits = registry.add_counter(
      "phalanx_reserve_waits_total",
      "Reserves a node queued until younger gangs' holds end (wait-die: the older waits).");
  api::counter& reserve_rules_refused = registry.add_counter(
      "phalanx_reserve_rules_refused_total",
      "Reserves a node refused because a pod would break inter-pod affinity, anti-affinity or "
      "host ports beside the pods there (its view was stale or another gang came first).");
  api::counter& preemption_rounds = registry.add_counter(
      "phalanx_preemption_rounds_total",
      "Reserve rounds of a gang that evicts lower-priority pods of its queue to fit.");
  api::counter& pods_evicted = registry.add_counter(
      "phalanx_pods_evicted_total", "Pods evicted for a higher-priority gang of their queue.");
  api::counter& room_reservations = registry.add_counter(
      "phalanx_room_reservations_total",
      "Reservations of nodes by a gang blocked past scheduling.starvationBound.");
  api::counter& plan_failures = registry.add_counter(
      "phalanx_plan_failures_total", "Plans that found no placement (unschedulable, unresolvable).");
  api::histogram& gang_decision_seconds = registry.add_histogram(
      "phalanx_gang_decision_seconds",
      "From a planning slot granted to every node committed, per successful round.",
      gang_latency_buckets_seconds());
  api::histogram& gang_placed_seconds = registry.add_histogram(
      "phalanx_gang_placed_seconds",
      "From a planning slot granted to every node voted yes (planned and reserved, before the "
      "bindings are made durable), per successful round.",
      gang_latency_buckets_seconds());
  api::histogram& store_commit_seconds = registry.add_histogram(
      "phalanx_store_commit_seconds", "Duration of one group-committed, synced RocksDB write.",
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1});
  api::histogram& store_batch_records = registry.add_histogram(
      "phalanx_store_batch_records", "Records per group-committed write.",
      {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384});
  api::counter& store_idle_flushes = registry.add_counter(
      "phalanx_store_idle_flushes_total",
      "Memtable flushes the store writer started once writes paused, freeing the write buffers.");
  api::gauge& parked_gangs = registry.add_gauge(
      "phalanx_parked_gangs", "PodGroups whose actor was ended while idle; a pod change wakes it.");
  api::gauge& ready = registry.add_gauge("phalanx_ready", "1 once restart recovery finished.");
  api::gauge& restart_seconds = registry.add_gauge(
      "phalanx_restart_seconds", "Seconds from opening the store to ready.");

  // -- Per queue (written by the registry: PodGroup phases; by the queue actor: amounts).

  api::metric_family<api::gauge>& pending_gangs = registry.gauge_family(
      "phalanx_queue_pending_gangs",
      "PodGroups of the queue not running their minimum yet: phase Pending (waiting for "
      "admission) or Inqueue (admitted: waiting for a planning slot, planning, backing off or "
      "unschedulable). The Pending and Inqueue counts of the queue's status.",
      {"queue"});
  queue_amount_families allocated = amount_families(
      "allocated", "allocated to the queue's bound pods (and placeholders)", "allocated");
  queue_amount_families deserved = amount_families(
      "deserved", "the queue deserves by fair share", "deserved");
  /// Volcano's names only: Phalanx's own amounts are allocated and deserved.
  queue_amount_families request = volcano_amount_families(
      "request", "requested by the queue's pods, bound and pending (allocated plus demand)");
  queue_amount_families inqueue = volcano_amount_families(
      "inqueue",
      "claimed by the queue's admitted PodGroups not running yet (minResources less allocated)");
  api::metric_family<api::gauge>& volcano_queue_share = registry.gauge_family(
      "volcano_queue_share",
      "The queue's share: the largest allocated / deserved over its resources (pods not "
      "counted); 1 and above is overused.",
      {"queue_name"});
  api::metric_family<api::gauge>& volcano_queue_weight = registry.gauge_family(
      "volcano_queue_weight", "The queue's spec.weight.", {"queue_name"});
  api::metric_family<api::gauge>& volcano_queue_overused = registry.gauge_family(
      "volcano_queue_overused",
      "1 while the queue holds at least its deserved share in every resource it deserves (it "
      "starts nothing new), else 0.",
      {"queue_name"});
  std::array<api::metric_family<api::gauge>*, 5> pod_group_counts = pod_group_count_families();

  // -- Scheduling attempts: one planning slot of one gang (see docs/METRICS.md).

  api::metric_family<api::counter>& schedule_attempts = registry.counter_family(
      "scheduler_schedule_attempts_total",
      "Planning slots of gangs that ended, by result: scheduled (every node reserved the gang), "
      "unschedulable (no placement, or a node refused the reserve), error (the round failed). One "
      "attempt places a whole gang; profile is the scheduler's first schedulerName.",
      {"result", "profile"});
  api::metric_family<api::histogram>& attempt_duration = registry.histogram_family(
      "scheduler_scheduling_attempt_duration_seconds",
      "From a gang's planning slot granted to its end (planned and reserved, or failed), in "
      "seconds, by result and profile as scheduler_schedule_attempts_total.",
      gang_latency_buckets_seconds(), {"result", "profile"});
  api::metric_family<api::counter>& volcano_schedule_attempts = registry.counter_family(
      "volcano_schedule_attempts_total",
      "The same attempts as scheduler_schedule_attempts_total, by result only.", {"result"});
  api::histogram& volcano_e2e_scheduling_latency = registry.add_histogram(
      "volcano_e2e_scheduling_latency_milliseconds",
      "One scheduling decision, in milliseconds: a gang's planning slot from granted to its end, "
      "whatever the result (Phalanx decides gang by gang, not in periodic sessions).",
      gang_latency_buckets_milliseconds());
  api::histogram& volcano_e2e_job_scheduling_latency = registry.add_histogram(
      "volcano_e2e_job_scheduling_latency_milliseconds",
      "From a PodGroup's creation to its phase Running (its minimum bound), in milliseconds, "
      "once per PodGroup that starts.",
      {10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000,
       600000, 1800000, 3600000});
  api::metric_family<api::gauge>& pending_pods = registry.gauge_family(
      "scheduler_pending_pods",
      "Pods waiting to be placed, by kube-scheduler's queue: gated (their PodGroup is not "
      "admitted: phase Pending), active (admitted, waiting for or holding a planning slot), "
      "backoff (their gang's last reserve was refused or failed; it retries after a backoff), "
      "unschedulable (their gang's last plan found no room; it retries when room frees up or "
      "after a backoff). As of each gang's last report to its queue.",
      {"queue"});

 private:
  queue_amount_families amount_families(std::string_view what, std::string_view help,
                                        std::string_view volcano_what);
  queue_amount_families volcano_amount_families(std::string_view what, std::string_view help);
  std::array<api::metric_family<api::gauge>*, 5> pod_group_count_families();
};

} // namespace phalanx::actors
