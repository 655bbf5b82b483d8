#pragma once

// The scheduler's metrics (issue: pods scheduled, gang decision latency, pending gangs per queue,
// queue allocated and deserved per resource, store commit latency), recorded into the same
// Prometheus registry the HTTP server renders at /metrics.

#include "api/metrics.hpp"

namespace phalanx::actors {

struct runtime_metrics {
  api::metrics_registry registry;

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
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5});
  api::histogram& gang_placed_seconds = registry.add_histogram(
      "phalanx_gang_placed_seconds",
      "From a planning slot granted to every node voted yes (planned and reserved, before the "
      "bindings are made durable), per successful round.",
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5});
  api::histogram& store_commit_seconds = registry.add_histogram(
      "phalanx_store_commit_seconds", "Duration of one group-committed, synced RocksDB write.",
      {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1});
  api::histogram& store_batch_records = registry.add_histogram(
      "phalanx_store_batch_records", "Records per group-committed write.",
      {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384});
  api::counter& store_idle_flushes = registry.add_counter(
      "phalanx_store_idle_flushes_total",
      "Memtable flushes the store writer started once writes paused, freeing the write buffers.");
  api::metric_family<api::gauge>& pending_gangs = registry.gauge_family(
      "phalanx_queue_pending_gangs", "Gangs of the queue waiting to be scheduled.", {"queue"});
  api::metric_family<api::gauge>& queue_allocated = registry.gauge_family(
      "phalanx_queue_allocated", "Resources allocated to the queue's pods (cpu in cores, others in "
      "base units).", {"queue", "resource"});
  api::metric_family<api::gauge>& queue_deserved = registry.gauge_family(
      "phalanx_queue_deserved", "The queue's deserved share from fair share (cpu in cores).",
      {"queue", "resource"});
  api::gauge& parked_gangs = registry.add_gauge(
      "phalanx_parked_gangs", "PodGroups whose actor was ended while idle; a pod change wakes it.");
  api::gauge& ready = registry.add_gauge("phalanx_ready", "1 once restart recovery finished.");
  api::gauge& restart_seconds = registry.add_gauge(
      "phalanx_restart_seconds", "Seconds from opening the store to ready.");
};

} // namespace phalanx::actors
