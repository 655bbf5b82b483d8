#pragma once

// One running Phalanx scheduler: the actor system and every actor, restored from a store, serving
// the API's service interface. phalanxd, the load tester (inproc mode) and the integration tests
// all start one of these. No CAF type appears here, so users of this header need no CAF.

#include "actors/runtime_config.hpp"

#include "api/service.hpp"
#include "storage/store.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::actors {

/// Consistency facts of the whole system, for the invariant checks of DESIGN.md section 8.
struct system_facts {
  struct pod {
    std::string key;       // "<namespace>/<name>"
    std::string group_key; // "<namespace>/<podgroup>"; empty when in no gang
    std::string node;      // Empty when unbound.
    scheduler::pod_phase phase = scheduler::pod_phase::pending;
    scheduler::resources requests;
    std::string role;
    std::shared_ptr<const scheduler::pod> object;  // Labels and rules between pods.
  };
  struct group {
    std::string key;
    std::string queue;
    int32_t min_member = 0;
    std::vector<scheduler::role_minimum> min_task_member;
    bool in_flight = false;  // A reserve round is under way (I3 is checked at rest only).
    bool parked = false;     // Its actor was ended while idle (a pod change wakes it).
    bool completed = false;  // Its gang last reported completed.
    uint64_t gang = 0;       // Its gang's id (a new one when it starts over).
  };
  struct node {
    std::string name;
    scheduler::resources allocatable;
    scheduler::resources committed;  // The node actor's ledger.
    scheduler::resources held;
    /// Room of committed pods being evicted that preemptors' holds count again (node_ledger::
    /// claimed_room): committed + held - claimed is what the node carries.
    scheduler::resources claimed;
    std::vector<std::string> bound_pods;  // Pod keys committed in the ledger.
    /// The cluster view's reserves in flight to it (sent, not yet read by its actor).
    scheduler::resources in_flight;
    /// Gangs whose finished rounds its ledger remembers: only gangs whose actor lives.
    std::size_t remembered_gangs = 0;
    /// The group key of the gang its room is reserved for (a starving gang), or empty.
    std::string room_reserved_for;
    scheduler::label_set labels;  // Its topology domains.
  };
  struct queue {
    std::string name;
    scheduler::resources allocated;  // The queue actor's accounting.
    std::vector<uint64_t> gangs;     // The gangs its actor knows, sorted.
  };
  std::vector<pod> pods;
  std::vector<group> groups;
  std::vector<node> nodes;
  std::vector<queue> queues;
};

/// The outcome of checking the invariants: empty `violations` means all hold.
struct invariant_report {
  std::vector<std::string> violations;
  bool ok() const noexcept { return violations.empty(); }
  std::string to_string() const;
};

/// Checks I1 (no pod bound twice: a pod committed on one node only, and on the node its record
/// names), I2 (no node over capacity), I3 (at rest, every gang 0 or >= minMember bound, each role
/// its minimum), I4 (queue accounting equals a recount from pods), that no parked gang but a
/// completed one has a pod waiting to be placed (it would wait forever), and, at rest with no
/// reserve round under way, that the cluster view counts no reserve in flight (one left there
/// would hide the node's room from every planner), and, at rest, that no node remembers the
/// finished rounds of more gangs than have a live actor (a parked or deleted gang's rounds are
/// forgotten when its actor ends; remembered, they would grow without bound), at rest, that a
/// queue's actor knows only gangs the registry has in that queue (a gang that moved or started
/// over left its old entry), and that the rules between pods hold among the bound pods (no host
/// port twice on a node, no pod in a domain of its required anti-affinity with a pod it
/// selects).
/// Precondition: the facts are one consistent cut (nothing changed while they were collected):
/// deterministic mode, or a system at rest. On a busy system runtime::facts() asks actor after
/// actor, and a pod bound in between looks unbound in one source and bound in another: use
/// check_live_invariants there.
invariant_report check_invariants(const system_facts& facts, bool at_rest);

/// The checks no race between the sources of `facts` can fake, for a system that runs while they
/// are collected: I1 (a pod committed on two nodes, or on a node other than the one its record
/// names: records only ever go from no node to one node) and I2 (a node's committed plus held
/// requests over its allocatable: each node answers for itself at one instant), the parked
/// gangs' check (the registry's pods and groups are one snapshot) and the rules between bound
/// pods (a binding is never undone, and a bound pod's labels change only by a user's relabel in
/// Kubernetes mode, after which required rules are IgnoredDuringExecution: a check of such a
/// cluster must not relabel bound pods into a rule's match).
invariant_report check_live_invariants(const system_facts& facts);

class runtime {
 public:
  /// Loads everything from `store`, spawns the actors, restores node usage from persisted
  /// bindings and resumes pending gangs. In normal mode it returns once ready; in deterministic
  /// mode the caller drives the test coordinator (run_until_idle) to finish the restore.
  static result<std::unique_ptr<runtime>> start(runtime_config config,
                                                std::shared_ptr<storage::store> store);

  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  /// The API's view of the scheduler. Lives as long as the runtime.
  api::service& service();

  bool ready() const;

  /// Empty while the runtime works; else why it cannot any more: an actor without which nothing
  /// is answered or scheduled (the registry, the store writer, the cluster actor, the simulated
  /// cluster) stopped other than by shutdown(), e.g. of an exception. ready() is false from then
  /// on; phalanxd exits.
  std::string failure() const;

  /// Seconds from start() to ready (restart time).
  double seconds_to_ready() const;

  /// Collects the facts for check_invariants (asks every actor; blocks the calling thread). In
  /// deterministic mode it drives the test coordinator itself.
  system_facts facts();

  /// Stops every actor and waits for them. Idempotent; the destructor calls it.
  void shutdown();

  // -- Deterministic mode (runtime_config::deterministic) only.

  /// Runs every pending message; returns how many ran.
  std::size_t run_until_idle();
  /// Advances the virtual clock, firing due timers, then runs until idle. Returns messages run.
  std::size_t advance(std::chrono::milliseconds by);
  /// True when a timer is pending.
  bool has_pending_timer() const;

  struct impl;

 private:
  friend struct runtime_probe; // actors/runtime_probe.hpp: the actors' handles, for tests.
  explicit runtime(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace phalanx::actors
