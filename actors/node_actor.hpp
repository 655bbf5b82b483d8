#pragma once

// The node actor (DESIGN.md section 4): a thin shell around scheduler::node_ledger. It decodes
// reserve/commit/abort/release, asks the ledger, sends the votes the ledger decided, publishes the
// node's free resources to the cluster view after every change, and hands committed pods to the
// binder. It monitors every coordinator holding something here: a coordinator's death aborts its
// holds and waiting reserves (no timer ever decides a hold) and releases its committed
// placeholders, which only it could have released.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <unordered_map>

namespace phalanx::actors {

using node_ledger_type = scheduler::node_ledger<scheduler::ticket, pod_ptr>;

struct node_actor_state {
  static inline const char* name = "phalanx.node";

  context_ptr ctx;
  uint32_t index = 0;
  node_ptr spec;
  binder_actor binder;
  std::unique_ptr<node_ledger_type> ledger;
  /// Coordinators with something here, by gang id; monitored.
  std::unordered_map<uint64_t, gang_actor> coordinators;
  std::unordered_map<caf::actor_addr, uint64_t> gang_of;
  /// Committed placeholders by their gang: a gang that dies leaves none behind.
  std::unordered_map<uint64_t, std::vector<uint64_t>> placeholders_of;
};

/// Spawn with: sys.spawn(node_actor_impl, ctx, index, spec, binder, committed). `committed` are
/// the pods bound here before a restart; passing them at spawn (rather than in a message) means no
/// reserve can ever be decided before they count.
node_actor::behavior_type node_actor_impl(node_actor::stateful_pointer<node_actor_state> self,
                                          context_ptr ctx, uint32_t index, node_ptr spec,
                                          binder_actor binder, pod_refs committed);

} // namespace phalanx::actors
