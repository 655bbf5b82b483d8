#pragma once

// Which bound pods to evict so that a pending gang's minimum fits, for two of Volcano's actions:
//
// - `preempt`, within one queue: the caller passes the preemptor's priority and the bound pods of
//   its queue, and no `queues`.
// - `reclaim`, across queues: the caller passes priority INT32_MAX (victims of any priority, the
//   lowest first), the bound pods of the other queues, and those queues in `queues` with their
//   allocation, deserved share and guarantee. Volcano's proportion rule limits each: a queue
//   loses a pod only while what it still holds exceeds its deserved share in some dimension, and
//   never below its guarantee, so it may end one pod below its deserved share; a queue within its
//   deserved share loses nothing.
//
// The rules, in both:
// - Only pods of strictly lower priority are ever chosen, and never pods on a removed node.
// - Volcano's gang rule: a victim gang keeps at least its minMember of ready pods, unless all of
//   its candidates go (the whole gang is evicted).
// - Preference, in this order: lower priorities (a pod of priority 5 stays when pods of
//   priority 1 can make room, however many; kube-scheduler's first criterion, and Volcano
//   evicts in priority order too), then the fewest victims, then the most recently started,
//   then the largest pod id. Fewest victims is a heuristic (the exact problem is a set cover):
//   a single pod or gang that alone makes room on a node goes before several, pods that free
//   the most room are tried first across nodes, and victims that turn out not to be needed are
//   dropped again. The queue limit bends the preference: a pod its queue cannot lose is passed
//   over for the next one.
//
// Pure: no clock, no I/O. Deterministic for the same view, request, planner config and RNG state.

#include "scheduler/model.hpp"
#include "scheduler/node_view.hpp"
#include "scheduler/planner.hpp"
#include "scheduler/random.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace phalanx::scheduler {

/// A bound pod that may be evicted for a preemptor (the caller passes the pods of the
/// preemptor's queue, or of the other queues for reclaim; this function itself drops those of
/// equal or higher priority).
struct preemption_candidate {
  uint64_t pod_id = 0;        // Unique among the candidates.
  uint32_t node = 0;          // Index in the node_view.
  uint64_t gang = 0;          // Its gang; 0 = a pod that is a gang of its own (minMember 1).
  /// Its gang's priority. The candidates of one gang should agree; if they do not, the highest
  /// counts for all of them, so eligibility never splits a gang.
  int32_t priority = 0;
  timestamp start_time{};     // When it was bound/started; the most recently started go first.
  resources request;          // What it occupies on its node.
  /// Its queue: a victim_queue::queue of the request's `queues`. Ignored when `queues` is empty.
  /// The candidates of one gang should agree; if one is in a queue not given, none is eligible.
  uint32_t queue = 0;
};

/// A gang that owns candidates: how many of its pods count as ready now (bound or succeeded)
/// and its minMember. It may lose `ready - min_member` pods; beyond that, only all of its
/// candidates together (the whole gang is evicted), Volcano's gang rule. A gang named by a
/// candidate but missing here has no spare: it can only go whole.
struct victim_gang {
  uint64_t gang = 0;
  int32_t ready = 0;
  int32_t min_member = 1;
};

/// A queue whose pods are candidates for reclaim, with what limits how much of it may go.
/// Dimensions compare as fits() does: one `allocated` uses but `deserved` lacks (0) counts as
/// over the deserved share, so give both the same dimensions (and leave `pods` out of both
/// unless it is shared out too).
struct victim_queue {
  uint32_t queue = 0;    // Referenced by preemption_candidate::queue; unique among the queues.
  resources allocated;   // What its bound pods hold now.
  resources deserved;    // Its deserved share now.
  resources guarantee;   // Never evicted below this.
};

struct preemption_request {
  /// The preemptor's pending pods and its minimums (planner.hpp); extras are never preempted
  /// for: only the minimum is placed (place_extra is ignored).
  gang_request gang;
  /// The preemptor's priority.
  int32_t priority = 0;
  std::span<const preemption_candidate> candidates;
  /// Every gang named by a candidate (gang != 0).
  std::span<const victim_gang> gangs;
  /// Reclaim: the queues of the candidates, each losing pods only within its limit (see the top
  /// of this file); a candidate of a queue not given is not eligible. Empty (the default):
  /// preemption within one queue, no queue limit.
  std::span<const victim_queue> queues;
};

struct preemption_plan {
  /// True when the preemptor's minimum fits once `victims_by_node` are gone. Found with no
  /// victims when it fits now.
  bool found = false;
  /// As plan_result's: request.gang.pods index -> node. Empty when not found.
  std::vector<placement> placements;
  /// Victims per node, each node once, nodes ascending; pod ids in the order chosen. A whole
  /// gang's eviction lists all of its candidates, on every node. Empty when not found. With
  /// `queues`, each queue's victims keep its limit taken in the order chosen (which may
  /// interleave nodes).
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> victims_by_node;
  std::size_t victim_count() const;
  /// When not found: why, one sentence without a final period ("no lower-priority pods of the
  /// queue can make room: ...", for reclaim "no pods of queues over their deserved share can
  /// make room: ...", or the planner's detail on the room victims would free).
  std::string detail;

  friend bool operator==(const preemption_plan&, const preemption_plan&) = default;
};

/// Chooses victims among `request.candidates` so that the preemptor's minimum fits. `view` shows
/// free resources now (allocatable - committed - held); the candidates' requests are part of
/// what is committed. Deterministic for the same inputs and rng.
///
/// Runs the planner at most 2 + 2 * ceil(log2(candidates + 1)) times, once more with `queues`
/// (a binary search over how many of the eligible candidates, in preference order, make room),
/// each on `view` plus the room of those candidates; preemption_plan::detail then also names a
/// node left short if the planner placed pods where even every eligible pod there would not
/// make room (a broken promise, never expected). `planner` lends its config and scratch, so one
/// call at a time per planner, as with gang_planner::plan; the view is only read.
[[nodiscard]] preemption_plan plan_preemption(gang_planner& planner, const node_view& view,
                                              const preemption_request& request, rng& random);

} // namespace phalanx::scheduler
