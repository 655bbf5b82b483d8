#pragma once

// The cluster actor: fair share between queues (scheduler::compute_deserved, recomputed with a
// debounce whenever totals or demands change) and the cluster-wide part of the enqueue gate
// (scheduler::enqueue_gate): it owns the ledger of admitted gangs' claims, so two queues admitting
// at once cannot both take the last room. It also wakes every queue when capacity was freed.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <map>
#include <unordered_map>

namespace phalanx::actors {

struct cluster_actor_state {
  static inline const char* name = "phalanx.cluster";

  struct queue_info {
    queue_ptr spec;
    queue_actor_fwd handle;
    scheduler::resources allocated;
    scheduler::resources request;
    scheduler::resources claims;
  };

  context_ptr ctx;
  scheduler::resources allocatable;  // Live nodes.
  scheduler::resources used;         // Sum of queues' allocated.
  scheduler::resources inqueue;      // Sum of claims.
  std::map<std::string, queue_info> queues;
  struct claim_entry {
    std::string queue;
    scheduler::resources amount;
  };
  std::unordered_map<uint64_t, claim_entry> claims;
  bool recompute_scheduled = false;
  bool wake_pending = false;
  /// Nodes were added, removed or changed since the last recomputation: queues are told, so
  /// that gangs no node could hold are admitted again (capacity_atom).
  bool nodes_changed = false;
  deserved_listener_actor listener;
};

/// Spawn with: sys.spawn(cluster_actor_impl, ctx).
cluster_actor::behavior_type
cluster_actor_impl(cluster_actor::stateful_pointer<cluster_actor_state> self, context_ptr ctx);

} // namespace phalanx::actors
