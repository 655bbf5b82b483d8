#pragma once

// The simulated cluster of standalone mode: the binder that "runs" bound pods. A bound pod goes
// Running after simulation_config::pod_start_delay and then follows its annotations:
//
//   sim.phalanx.io/duration: 30s       Succeeded 30 s after it started.
//   sim.phalanx.io/fail-after: 10s     Failed 10 s after it started.
//   sim.phalanx.io/exit-code: "137"    The exit code its container fails with (at fail-after, or
//                                      on request: phalanxctl fail): 1 to 255, default 1. Shown
//                                      in its containerStatuses; a Volcano job's exitCode
//                                      policies act on it.
//   sim.phalanx.io/spawn: "2"          Once Running, creates 2 further pods of its gang (a Spark
//                                      driver creating executors), named <pod>-exec-<i>, and
//                                      finishes when they all have (Failed if one failed).
//   sim.phalanx.io/spawn-cpu: "1"      Requests of the spawned pods (also -memory, -gpu), their
//   sim.phalanx.io/spawn-duration: 20s duration and role (sim.phalanx.io/spawn-role, default
//                                      "executor").
//   sim.phalanx.io/barrier: "4"        Its declared duration starts only once 4 pods of its gang
//                                      run (TensorFlow or MPI workers wait for their peers).
//   sim.phalanx.io/stop-after: 20s     Deleted gracefully, it takes 20 s to stop (killed at the
//                                      end of its grace period if that comes first); without
//                                      it, a pod stops as soon as it is told to.
//   sim.phalanx.io/restart-every: 2s   While it runs, its container restarts every 2 s (a crash
//                                      the kubelet restarts it from): its restart count, shown in
//                                      status.containerStatuses[].restartCount, grows by one each
//                                      time. Its declared end does not move. A Volcano job's
//                                      task raises TaskFailed once its pods restarted maxRetry
//                                      times.
//   sim.phalanx.io/restarts: "3"       With restart-every: it stops restarting once its count
//                                      is 3 (a count kept from before a restart of phalanxd
//                                      included); without it, it restarts until it ends.
//   (none of the above)                Runs until every pod of its gang that declares an end has
//                                      finished ("until its job ends"): a TensorFlow ps, an MPI
//                                      master. With no such pod in the gang: until deleted.
//
// It reports phase changes to the registry in batches, and, when no timer is pending while pods
// wait for others that are not running (drivers whose executors cannot be placed), it reports a
// stall: the deadlock the default scheduler's pod-by-pod placement produces.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"
#include "scheduler/shared_string.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace phalanx::actors {

/// The simulation annotations, all under one prefix.
inline constexpr std::string_view sim_key_prefix = "sim.phalanx.io/";
inline constexpr std::string_view sim_duration_key = "sim.phalanx.io/duration";
inline constexpr std::string_view sim_fail_after_key = "sim.phalanx.io/fail-after";
inline constexpr std::string_view sim_spawn_key = "sim.phalanx.io/spawn";
inline constexpr std::string_view sim_spawn_cpu_key = "sim.phalanx.io/spawn-cpu";
inline constexpr std::string_view sim_spawn_memory_key = "sim.phalanx.io/spawn-memory";
inline constexpr std::string_view sim_spawn_gpu_key = "sim.phalanx.io/spawn-gpu";
inline constexpr std::string_view sim_spawn_duration_key = "sim.phalanx.io/spawn-duration";
inline constexpr std::string_view sim_spawn_role_key = "sim.phalanx.io/spawn-role";
inline constexpr std::string_view sim_barrier_key = "sim.phalanx.io/barrier";
inline constexpr std::string_view sim_stop_after_key = "sim.phalanx.io/stop-after";
inline constexpr std::string_view sim_restart_every_key = "sim.phalanx.io/restart-every";
inline constexpr std::string_view sim_restarts_key = "sim.phalanx.io/restarts";
inline constexpr std::string_view sim_exit_code_key = "sim.phalanx.io/exit-code";

/// How a simulated pod ends, read from its annotations.
struct sim_behavior {
  std::optional<scheduler::duration> duration;
  std::optional<scheduler::duration> fail_after;
  int32_t spawn = 0;
  scheduler::resources spawn_requests;
  std::optional<scheduler::duration> spawn_duration;
  std::string spawn_role = "executor";
  /// Its clock starts once this many pods of its gang run; 0: at once.
  int32_t barrier = 0;
  /// How long it takes to stop once deleted gracefully; unset: it stops at once.
  std::optional<scheduler::duration> stop_after;
  /// How often its container restarts while it runs; unset: never. Greater than zero.
  std::optional<scheduler::duration> restart_every;
  /// With restart_every: the restart count at which it stops restarting; unset: never stops.
  std::optional<uint16_t> restarts;
  /// The exit code it fails with at fail_after.
  int32_t exit_code = 1;
  /// Declares its own end (duration, fail-after or spawn).
  bool declares_end() const noexcept { return duration || fail_after || spawn > 0; }
};

/// Reads the annotations; errors name the annotation and the rule.
result<sim_behavior> parse_sim_behavior(const scheduler::pod& p);

/// The exit code of pod `p`'s container, which ended as `state` says: 0 once it succeeded, its
/// sim.phalanx.io/exit-code (default 1) once it failed (at its fail-after, or on request);
/// none before it ended or when it never ran. Derived from what is kept of the pod, so it needs
/// no record of its own and survives a restart. A pod lost with its node shows one too: the
/// simulated cluster keeps it Failed, where Kubernetes' pod garbage collector deletes it.
std::optional<int32_t> simulated_exit_code(const scheduler::pod& p,
                                           const scheduler::pod_runtime& state);

/// The pods a spawning pod creates (names <pod>-exec-<i>), in its gang.
std::vector<scheduler::pod> spawned_pods(const scheduler::pod& parent, const sim_behavior& b);

struct sim_cluster_state {
  static inline const char* name = "phalanx.sim_cluster";

  enum class sim_phase : uint8_t { starting, running, done };
  struct spawned_children {
    std::vector<std::string> names;  // The spawned pods' keys.
    int32_t done = 0;
    bool failed = false;
  };
  /// What a pod with sim.phalanx.io/ annotations declares, and a spawner's children once it
  /// spawned them. Most pods declare nothing and hold none (a cluster holds every bound pod).
  struct declared_behavior {
    sim_behavior behavior;
    std::optional<spawned_children> spawned;
    /// Its container restarts so far: the pod's count when bound here (a restored pod keeps
    /// its own), then one more at each restart.
    uint16_t restart_count = 0;
  };
  struct sim_pod {
    pod_ptr pod;
    /// Null for a pod without sim.phalanx.io/ annotations. Owned, not shared (each pod parses
    /// its own): 8 bytes.
    std::unique_ptr<declared_behavior> declared;
    const sim_behavior& behavior() const noexcept {
      static const sim_behavior none;
      return declared ? declared->behavior : none;
    }
    spawned_children* spawned() const noexcept {
      return declared && declared->spawned ? &*declared->spawned : nullptr;
    }
    /// Its position in its gang's `pods` (a removal moves the last pod there).
    uint32_t slot = 0;
    sim_phase phase = sim_phase::starting;
    bool at_barrier = false; // Running, waiting for its peers.
  };
  // 32 bytes: with its id and the next pointer, a map node fills jemalloc's 48-byte class. The
  // gang is found again from the pod (its namespace and group share the pod's blocks), not
  // pointed to, which would take it to 40 and the node to 64.
  static_assert(sizeof(sim_pod) <= 32);

  /// A gang: a namespace and the PodGroup's name, or the pod's own for a pod without one.
  struct gang_key {
    scheduler::shared_string namespace_name;
    scheduler::shared_string name;
    friend bool operator==(const gang_key&, const gang_key&) = default;
  };
  struct gang_key_hash {
    std::size_t operator()(const gang_key& k) const noexcept {
      return scheduler::hash_namespaced_name(k.namespace_name, k.name);
    }
  };
  struct sim_gang {
    std::vector<uint64_t> pods; // Known here, in no order (see sim_pod::slot).
    /// A pod of the gang waits at a barrier: only such gangs are walked when one of their pods
    /// starts (walking every gang at every start is quadratic in the gang's size).
    bool has_barrier = false;
  };
  struct timer {
    caf::actor_clock::time_point due;
    uint64_t pod;
    /// stop: a terminating pod's containers have stopped (or its grace period ended);
    /// restart: a running pod's container restarts (sim.phalanx.io/restart-every).
    enum class what : uint8_t { start, succeed, fail, stop, restart } action;
    friend bool operator>(const timer& a, const timer& b) {
      return a.due != b.due ? a.due > b.due : a.pod > b.pod;
    }
  };

  context_ptr ctx;
  status_sink_actor sink;
  std::unordered_map<uint64_t, sim_pod> pods;
  /// The gangs of the pods known here: 8 bytes per pod in a vector, where a hash set of ids took
  /// a 16-byte node and a bucket.
  std::unordered_map<gang_key, sim_gang, gang_key_hash> gangs;
  /// Children (spawned pods) that ended, while their spawner may still wait for them.
  std::set<std::string> finished_names;                // "<ns>/<name>"
  std::unordered_map<std::string, uint64_t> parent_of; // Child "<ns>/<name>" -> spawner id.
  std::priority_queue<timer, std::vector<timer>, std::greater<>> timers;
  /// How many of `timers` are restarts: they end no pod, so a stall is reported even while they
  /// are pending.
  std::size_t restart_timers = 0;
  std::optional<caf::actor_clock::time_point> armed;   // The next tick already scheduled.
  std::vector<pod_status_update> outbox;
  /// Pods being deleted gracefully, until their stop timer fires; and those that stopped, for
  /// the sink (terminated_atom). Kept apart from `pods`: a pod that ended on its own while it
  /// terminates is gone from there and still has to be removed.
  std::unordered_set<uint64_t> terminating;
  std::vector<uint64_t> terminated;
  /// Bumped by every change of a pod here; the stall check walks the pods only when it moved.
  uint64_t changes = 0;
  uint64_t changes_at_last_walk = ~uint64_t{0};
  std::vector<std::string> stuck_groups;  // Found by the last walk.
};

/// Spawn with: sys.spawn(sim_cluster_impl, ctx, sink).
binder_actor::behavior_type
sim_cluster_impl(binder_actor::stateful_pointer<sim_cluster_state> self, context_ptr ctx,
                 status_sink_actor sink);

} // namespace phalanx::actors
