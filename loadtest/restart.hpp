#pragma once

// `phalanx-loadtest restart`: builds a store of the restart target's shape
// (loadtest/store_builder.hpp: 150,000 pods in 20,000 PodGroups on 5,000 nodes by default), then
// starts the real phalanxd on a fresh copy of it `repeat` times (loadtest/phalanxd_process.hpp)
// and measures restart_seconds: from the start of the process (fork) to /readyz answering 200.
// Each round also reads the daemon's own restore time (phalanx_restart_seconds) and checks that
// every PodGroup and node came back through the API.

#include "loadtest/store_builder.hpp"

#include "scheduler/result.hpp"

#include <boost/json/object.hpp>

#include <string>
#include <vector>

namespace phalanx::loadtest {

struct restart_options {
  restart_store_spec store;
  /// Restarts measured, each on a fresh copy of the built store. Default: 3.
  int64_t repeat = 3;
  /// How long one start may take before it counts as failed. Default: 120 s.
  int64_t ready_timeout_ns = int64_t{120} * 1'000'000'000;
  /// When above 0, the resident set is read again this long after ready (`rss_steady_bytes`),
  /// once the store's pending pods are bound and idle gangs parked (scheduling.parkIdleGangsAfter,
  /// 2 s by default). Default: 0 (not read).
  int64_t steady_after_ns = 0;
  /// The phalanxd binary. Default: the one this build made.
  std::string phalanxd_binary;
  std::string work_dir;
  bool keep = false;
  std::string json_path;
  std::string html_path;
  std::string command;
  std::vector<std::pair<std::string, std::string>> flags_given;
};

/// One measured restart.
struct restart_round {
  double restart_seconds = 0;  // Fork to /readyz 200.
  double restore_seconds = -1; // The runtime's own (phalanx_restart_seconds), -1 if unknown.
  int64_t podgroups_listed = -1;
  int64_t nodes_listed = -1;
  int64_t rss_bytes = -1;       // phalanxd's resident memory once ready, -1 if unknown.
  /// The same once it stopped moving (settled_resident_bytes): the restored gangs and the
  /// simulated cluster work on right after ready, so the figure at ready depends on how far they
  /// got. -1 if unknown.
  int64_t rss_settled_bytes = -1;
  double settle_seconds = -1;   // After ready; -1 when it did not settle within the limit.
  int64_t rss_steady_bytes = -1; // At restart_options::steady_after_ns after ready; -1 if not read.
  int64_t parked_gangs = -1;     // phalanx_parked_gangs when the last figure was read.
  int exit_code = -1;
};

result<boost::json::object> run_restart(const restart_options& options);

} // namespace phalanx::loadtest
