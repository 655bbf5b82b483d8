#pragma once

// `phalanx-loadtest inproc`: the push workload inside one process against the actor runtime
// (actors/runtime.hpp, through its api::service), with no HTTP, to separate the scheduler's cost
// from the API's. The store is a real RocksDB in a temporary directory (durable: every
// acknowledged change is a synced write, as in phalanxd).
//
// Three runs of the same gangs:
// - the burst: every gang submitted (1,024 calls in flight) while the scheduler places them, so
//   `pods_per_second` counts creating the objects as well as scheduling them;
// - the backlog: every gang stored first by a runtime that serves another schedulerName, then a
//   runtime that serves theirs restarts on that store and schedules them (as after a restart with
//   pending work, or a Kubernetes scheduler's first sync): `backlog_pods_per_second` counts the
//   decisions alone, from ready to the last gang Running;
// - the loop: the pure planner plans them one after another against a node view
//   (scheduler::cluster_snapshot; no actors, no store; every pod built before the clock starts):
//   `loop_pods_per_second`.
// `actor_overhead_ratio` is backlog / loop, the same decisions on pods that exist before the
// clock starts, with and without the actors (and the durable bindings); `end_to_end_ratio` is
// burst / loop, which also counts the API's creating every object.

#include "loadtest/scheduling_run.hpp"

#include "scheduler/planner.hpp"

#include <boost/json/object.hpp>

#include <optional>

namespace phalanx::loadtest {

/// The tight planner loop over a workload.
struct planner_loop_result {
  int64_t placed_pods = 0;
  int64_t placed_gangs = 0;
  int64_t failed_gangs = 0;
  double seconds = 0;
  double pods_per_second = 0;
  latency_summary gang_ms; // Per gang: plan plus charging the placements to the view.
};

/// Plans every gang of `w` in order against a fresh snapshot of its nodes, charging each
/// successful plan to the snapshot.
planner_loop_result run_planner_loop(const workload& w, const workload_spec& spec,
                                     const scheduler::planner_config& config, uint64_t seed);

struct inproc_options {
  run_options run;
  /// Skip the tight loop. Default: false.
  bool skip_loop = false;
  /// Skip the backlog run. Default: false.
  bool skip_backlog = false;
  /// Policy knobs for the runtime (phalanxd's --config YAML); threads and seed come from the
  /// flags. Default: every default.
  actors::runtime_config config;
  /// Where `config` came from, for the report. Default: none.
  std::string config_path;
};

/// The backlog run: the workload stored, then scheduled by a restarted runtime.
struct backlog_result {
  double ready_seconds = 0;          // Restart to ready.
  int64_t pods_scheduled_at_ready = 0; // Placed while the registry was still restoring.
  double seconds = 0;                // Ready to the last gang seen Running.
  double pods_per_second = 0;        // The pods placed after ready / seconds.
  bool timed_out = false;                 // Ended other than completed (outcome says how).
  run_outcome outcome = run_outcome::completed;
  std::string outcome_message;
  bool all_scheduled = false;             // Every gang seen Running.
  std::optional<histogram_data> placed;   // phalanx_gang_placed_seconds of the restarted runtime.
  std::optional<histogram_data> decision; // phalanx_gang_decision_seconds.
  std::optional<histogram_data> store_commit; // phalanx_store_commit_seconds: the synced writes.
  actors::invariant_report invariants;    // At rest, once every gang runs.
  /// The runtime's metrics every sample interval from ready, and once settled at the end.
  std::vector<run_sample> samples;
};

/// Runs the inproc mode and returns its report (already written to the JSON/HTML paths when
/// set). Progress goes to stdout. Errors: setup failures (store, runtime, creating nodes).
result<boost::json::object> run_inproc(const inproc_options& options);

} // namespace phalanx::loadtest
