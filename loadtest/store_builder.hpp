#pragma once

// Builds a store shaped like DESIGN.md section 9's restart target: 150,000 pods in 20,000
// PodGroups (a "ps" and "worker" task each, pods of one task sharing constraints and spec_json),
// 5,000 nodes (one in ten with 8 GPUs and a taint), queues; the first `jobs` PodGroups are Volcano
// jobs', stored as the runtime stores a job (the job and its PodGroup; its pods, the job's
// expansion, only through their state updates), the rest PodGroups with pods of their own. Every
// second pod is bound and Running. Used by `phalanx-loadtest restart` and by
// storage_load_bench (loadtest/bench/store_load_bench.cpp), which times open + load alone.
//
// Writes through storage::store in batches of about 1,000 records, each one synced write.

#include "scheduler/result.hpp"

#include <cstdint>
#include <string>

namespace phalanx::loadtest {

struct restart_store_spec {
  /// Default: 150,000.
  int64_t pods = 150'000;
  /// PodGroups; pods are spread evenly over them. Default: 20,000.
  int64_t groups = 20'000;
  /// Default: 5,000.
  int64_t nodes = 5'000;
  /// Default: 20.
  int64_t queues = 20;
  /// The first `jobs` PodGroups belong to Volcano jobs (their pods are the jobs' expansions).
  /// Default: 2,000.
  int64_t jobs = 2'000;
  /// Size of each task's pod spec JSON (shared by the task's pods). Default: 1,024.
  int64_t spec_bytes = 1024;
  /// Pods without Volcano's four labels and two annotations. Default: false.
  bool bare_pods = false;
  /// Every pod bound and running, so every gang has nothing to do once restored (a cluster in its
  /// steady state), instead of every second pod. Default: false.
  bool all_bound = false;
  /// End as kill -9 would (nothing flushed at close, the WAL keeps the tail) instead of a clean
  /// close. Default: false.
  bool end_like_kill = false;
};

/// Checks the counts (pods >= groups >= 1, nodes >= 1, queues >= 1, jobs <= groups, ...).
status validate(const restart_store_spec& spec);

/// What was written.
struct restart_store_stats {
  int64_t records = 0;
  int64_t bound_pods = 0;
  double seconds = 0;
};

/// Creates the store in `dir` (which must not hold a store yet) and closes it.
result<restart_store_stats> build_restart_store(const restart_store_spec& spec,
                                                const std::string& dir);

} // namespace phalanx::loadtest
