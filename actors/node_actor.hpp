#pragma once

// The node actor (DESIGN.md section 4): a thin shell around scheduler::node_ledger. It decodes
// reserve/commit/abort/release, asks the ledger, sends the votes the ledger decided, publishes the
// node's free resources to the cluster view after every change, and hands committed pods to the
// binder. It monitors every coordinator holding something here: a coordinator's death aborts its
// holds and waiting reserves (no timer ever decides a hold) and releases its committed
// placeholders, which only it could have released.

#include "actors/interfaces.hpp"
#include "actors/node_directory.hpp"
#include "actors/runtime_context.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <unordered_map>
#include <vector>

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
  /// The view shows a reservation of this node (cluster_view::publish_reservation).
  bool withholding = false;
  /// Committed placeholders by their gang: a gang that dies leaves none behind.
  std::unordered_map<uint64_t, std::vector<uint64_t>> placeholders_of;
  /// The pods of reserves held or waiting here, shown in the view's pods of this node until the
  /// reserve commits (they stay, committed) or ends (they go).
  std::unordered_map<scheduler::txn_id, std::vector<uint64_t>, scheduler::txn_id_hash>
      reserved_pods;
};

/// A gang's round is decided: its bindings are durable. Tells every node holding a pod of the
/// round to commit it, or to swap each pod into its placeholder's room: whoever made the bindings
/// durable (the registry) calls this right after telling the gang (a node answers the gang, which
/// must know the round is durable before it counts answers), in the same turn. The decision must
/// reach the nodes even if the gang ends right then (its PodGroup or job deleted): its nodes,
/// seeing it die, would drop holds whose pods are bound. Sent before anything can end the gang,
/// these reach each node before that death does. The gang tells only the nodes that hold nothing
/// but placeholders (never bound); commits and swaps are idempotent, a node answers once.
template <class Self>
void commit_durable_round(Self* self, const node_directory& nodes, const binding_request& req) {
  std::vector<uint32_t> commits;
  std::unordered_map<uint32_t, placeholder_swaps> swaps;
  for (const auto& b : req.bindings) {
    if (b.takes_over == 0) {
      if (std::find(commits.begin(), commits.end(), b.node) == commits.end())
        commits.push_back(b.node);
    } else {
      swaps[b.node].push_back({b.takes_over, pod_ref{b.pod, b.swapped}});
    }
  }
  for (auto node : commits)
    if (auto handle = nodes.at(node))
      self->send(handle, commit_atom::value, req.txn);
  for (auto& [node, list] : swaps)
    if (auto handle = nodes.at(node))
      self->send(handle, swap_atom::value, req.txn, std::move(list));
}

/// Spawn with: sys.spawn(node_actor_impl, ctx, index, spec, binder, committed). `committed` are
/// the pods bound here before a restart; passing them at spawn (rather than in a message) means no
/// reserve can ever be decided before they count.
node_actor::behavior_type node_actor_impl(node_actor::stateful_pointer<node_actor_state> self,
                                          context_ptr ctx, uint32_t index, node_ptr spec,
                                          binder_actor binder, pod_refs committed);

} // namespace phalanx::actors
