#pragma once

// No starving gang (DESIGN.md section 7, beyond Volcano). Volcano's allocate lets small gangs pass
// a big one for ever (volcano #3373): every release is taken by whichever small gang plans next,
// and the big gang never sees enough room at once. A gang blocked longer than a bound reserves
// the nodes where it would fit soonest: those nodes keep the room it needs from every other gang
// (it accumulates there as their pods end), while gangs that fit elsewhere keep flowing
// (backfill). The live runtime (node ledgers, the gang actor) and the trace simulation apply the
// same three rules from here: when a gang starves, which nodes it reserves, and what a reserved
// node keeps from the others.
//
// "Soonest" without runtime estimates (a scheduler has none): the nodes with the most of the
// gang's pods fitting in their free room now, then the most free room, hold the least that must
// end first. Each reserved node is filled up to its allocatable, so the gang needs as few nodes as
// its pods allow and drains as few as it can.
//
// Pure and deterministic: the same view and request give the same choice.

#include "scheduler/model.hpp"
#include "scheduler/node_view.hpp"
#include "scheduler/planner.hpp"
#include "scheduler/resources.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace phalanx::scheduler {

/// True when a gang blocked (no placement for its minimum) since `blocked_since` has waited at
/// least `bound` at `now`. A zero bound turns reservations off.
constexpr bool is_starving(timestamp blocked_since, timestamp now, duration bound) noexcept {
  return bound > duration::zero() && now - blocked_since >= bound;
}

/// What a starving gang reserves on one node: the room its pods there need.
struct room_claim {
  std::size_t node = 0;  // Index in the view.
  resources amount;      // The sum of the requests of the pods it puts there.
  int32_t pods = 0;
  friend bool operator==(const room_claim&, const room_claim&) = default;
};

struct reservation_choice {
  /// False when the gang's minimum cannot be covered by the nodes not taken (then `nodes` is
  /// empty and `detail` says why).
  bool found = false;
  /// Sorted by node index; each node once.
  std::vector<room_claim> nodes;
  /// "8 node(s) for 64 pod(s): node-3, node-7, node-9 and 5 more", or why none.
  std::string detail;
};

/// Chooses the nodes a starving gang reserves for the pods of its minimum: `request.min_pods`
/// pods of `request.pods` with every role minimum met (the role minimums' pods first, then
/// the others in preference order). `taken(i)` is true for a node another gang reserved already;
/// those are skipped. Only live nodes whose static predicates admit a pod take it, within
/// their allocatable.
reservation_choice choose_reserved_nodes(const node_view& view, const gang_request& request,
                                         const std::function<bool(std::size_t)>& taken);

/// What a node reserved for one gang keeps from every other gang now: per dimension, the smaller
/// of the reserved amount and the node's free room (never below zero). Other gangs see the node's
/// free room minus this; the reserving gang sees it whole.
resources withheld_room(const resources& free, const resources& reserved);

/// The sentence a reserving gang's pending reason ends with: "It has waited past the starvation
/// bound and reserves 8 node(s) for 64 pod(s): node-3, ...; they take no other gang's pods that
/// would delay it."
std::string reservation_reason(const reservation_choice& choice);

} // namespace phalanx::scheduler
