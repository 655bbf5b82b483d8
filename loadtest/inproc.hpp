#pragma once

// `phalanx-loadtest inproc`: the push workload inside one process against the actor runtime
// (actors/runtime.hpp, through its api::service), with no HTTP, to separate the scheduler's cost
// from the API's. The store is a real RocksDB in a temporary directory (durable: every
// acknowledged change is a synced write, as in phalanxd).
//
// After the actors, the same gangs in the same order are planned by the pure planner in one tight
// loop against a node view (scheduler::cluster_snapshot; no actors, no store): its pods/s is
// loop_pods_per_second, and pods_per_second / loop_pods_per_second is the actor overhead ratio.

#include "loadtest/scheduling_run.hpp"

#include "scheduler/planner.hpp"

#include <boost/json/object.hpp>

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
};

/// Runs the inproc mode and returns its report (already written to the JSON/HTML paths when
/// set). Progress goes to stdout. Errors: setup failures (store, runtime, creating nodes).
result<boost::json::object> run_inproc(const inproc_options& options);

} // namespace phalanx::loadtest
