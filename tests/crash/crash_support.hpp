#pragma once

// Shared pieces of the crash tests (tests/crash/): scratch directories, the seeded gang workload
// (PodGroups and their pods as the API takes them), reading the whole state back through the
// HTTP API, and the invariant checks of DESIGN.md section 8 on that state (I1, I2, I3; I5 is
// checked by each test against what it recorded as acknowledged).

#include "api/client.hpp"
#include "api/service.hpp"

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::crash_tests {

/// True when PHALANX_LONG_TESTS=1: run the long variants (ctest label `slow`).
bool long_tests();

/// A fresh directory under $TEST_TMPDIR, else /dev/shm, else /tmp, removed with its contents.
/// Durability here comes from the kernel keeping a killed process's writes, or from
/// power_loss_simulator, never from the disk, so a RAM file system only makes the tests faster.
class scratch_dir {
 public:
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

/// Writes `text` to `path`; false on failure.
bool write_text_file(const std::string& path, const std::string& text);

/// The namespace of every workload object.
inline constexpr std::string_view workload_namespace = "crash";

/// The simulated cluster of the crash tests: `count` nodes "node-<i>", each 8 CPUs and 32 GiB.
struct cluster_shape {
  int count = 12;
  int64_t cpu_milli = 8000;
  int64_t memory_bytes = int64_t(32) << 30;
  /// The cluster file phalanxd reads (--cluster).
  std::string yaml() const;
  /// The nodes as API bodies (for an in-process runtime).
  std::vector<std::string> node_bodies() const;
  scheduler::resources total() const;
};

/// One gang of the workload: a PodGroup with `pods` pods and minMember `min_member` (pods, or
/// one less for an elastic gang whose last pod may start in a later round), and with roles one
/// "ps" and the rest "worker" (minTaskMember ps: 1, worker: min_member - 1) when `roles`.
struct gang_spec {
  std::string name;
  int pods = 1;
  int min_member = 1;
  bool roles = false;
  int64_t cpu_milli = 500;  // Per pod.
  int64_t memory_bytes = 0; // Per pod.
  int duration_ms = 50;     // sim.phalanx.io/duration of every pod.
  /// minResources exceed the whole cluster: the enqueue gate never admits it (Pending forever).
  bool oversized = false;

  scheduler::resources min_resources() const;
  std::string pod_name(int index) const;
  std::string role_of(int index) const;
  std::string podgroup_body() const;
  std::string pod_body(int index) const;
};

/// A seeded workload of `count` gangs of 1-4 pods on `cluster`; about a quarter of the gangs of
/// 3-4 pods are elastic (minMember = pods - 1); about one in 100 is oversized (none when count <
/// 100). Names are "g<seed>-<i>".
std::vector<gang_spec> make_gangs(uint64_t seed, int count, const cluster_shape& cluster,
                                  int max_duration_ms);

/// True when a gang's minResources fit the cluster's total: it must run eventually.
bool feasible(const gang_spec& g, const cluster_shape& cluster);

/// API paths of the workload namespace.
std::string pods_path();
std::string podgroups_path();

/// An object as read back through the API.
struct seen_pod {
  std::string group;
  std::string role;
  std::string node;
  scheduler::pod_phase phase = scheduler::pod_phase::pending;
  scheduler::resources requests;
  std::string uid;
};
struct seen_group {
  int32_t min_member = 0;
  std::vector<scheduler::role_minimum> min_task_member;
  scheduler::resources min_resources;
  scheduler::pod_group_phase phase = scheduler::pod_group_phase::pending;
  std::string uid;
};
struct api_state {
  std::map<std::string, seen_pod> pods;              // By "<namespace>/<name>".
  std::map<std::string, seen_group> groups;          // By "<namespace>/<name>".
  std::map<std::string, scheduler::resources> nodes; // Name -> allocatable.
};

/// Lists pods, PodGroups and nodes (in that order; each list is one snapshot of the registry).
/// An error when a request fails, answers non-200, or a list does not decode, or names an object
/// twice (I1: one pod, one record).
result<api_state> read_state(api::http_client& client);

/// What the checks remember across observations and restarts: the node every pod was seen
/// bound to and the furthest phase seen. A binding or phase is shown only once durable, so after
/// a restart it must still be there (I1's second half and I5 for the runtime's own writes).
struct observation_history {
  std::map<std::string, std::string> node_of;
  std::map<std::string, scheduler::pod_phase> phase_of;
  std::set<std::string> groups_ran; // PodGroups seen Running or Completed.
};

/// Checks one state read through the API and records it in `history`:
///  I1: a pod seen bound to a node is still bound there (never unbound, never another node);
///  I2: per node, the requests of its non-terminal pods fit its allocatable;
///  I3: every PodGroup has 0 or >= minMember pods bound, and each role its minTaskMember.
///      Through the API every state is "at rest" for this check: the registry shows a round's
///      bindings only once they are durable, all of them in one step (one WriteBatch, applied in
///      one handler), and a restart serves exactly what was durable, so a gang seen with some but
///      not enough pods bound is a violation at any moment, right after a restart included.
///      (An elastic gang's later round binds pods beyond minMember: the count only grows.)
///      The workloads create a gang's pods before its PodGroup, so every member exists when the
///      gang is first planned and it never runs on placeholders (room held for members not
///      created yet, neither bound nor persisted). A gang on placeholders has fewer than minMember
///      pods bound by design, and the API shows their number only in a condition message that
///      the gang reports after its bindings are shown, so no API snapshot could check it;
///      PlaceholdersAcrossRestart (power_loss_test.cpp) covers them in process.
///  Phases never go back (Pending < Running < Succeeded/Failed) across observations.
/// Returns the violations (empty when all hold).
std::vector<std::string> check_state(const api_state& state, observation_history& history);

/// Joins violation texts for a failure message (at most `limit` of them).
std::string join(const std::vector<std::string>& lines, std::size_t limit = 20);

} // namespace phalanx::crash_tests
