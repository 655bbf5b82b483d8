#pragma once

// Fair share between queues (DESIGN.md sections 4 and 7): each queue's deserved resources by
// weighted water-filling, and the dominant-share helpers that order queues and gangs.
//
// Semantics follow Volcano's proportion plugin (pkg/scheduler/plugins/proportion), stated as the
// fixed point its float loop converges to, and computed exactly:
// - a queue's real capability is min(capability, total - sum of every guarantee + its own
//   guarantee): no queue can be promised what other queues are guaranteed;
// - per resource dimension, the total is poured into the queues in proportion to their weights;
//   a queue stops filling at min(real capability, request), where request = allocated + pending
//   demand (it never deserves more than it asks for);
// - deserved never drops below the queue's guarantee;
// - what a satisfied queue does not take flows to the others, until the total is gone or every
//   queue is satisfied (the remainder then stays unassigned, as in Volcano).
// Volcano fills all dimensions together and repeats its rounds with float64; filling each
// dimension on its own gives the same fixed point without the rounds, and with integers the
// result is the same on every machine.
//
// Hierarchy (Volcano's hierarchical queues, `spec.parent`): queues form a tree under the root,
// which stands for the cluster. The root's total is poured into the root's children as above;
// then each parent's deserved is poured into its children the same way, down the tree, with the
// parent's deserved as the total and its children as the only queues (so the real-capability rule
// subtracts the guarantees of siblings only). To its parent, a queue with children looks like one
// queue standing for its subtree:
// - request: its own plus its descendants' (only leaf queues take jobs, so a parent's own request
//   is normally empty);
// - capability: its own, capping the whole subtree;
// - guarantee: per dimension, the larger of its own and the sum of its children's (so the
//   children's floors always fit in what the parent deserves).
// What a satisfied queue does not take thus goes to its siblings first and, only when the whole
// subtree is satisfied, up to the parent's siblings. Without parents this is the flat computation.
//
// Rounding: within a dimension the water level is an exact rational; each queue gets the floor
// of its exact amount, and the units lost to flooring go one each to the queues with the largest
// fractional remainders, ties broken by queue name. So deserved amounts sum exactly to the total
// (while some queue is unsatisfied) and never depend on input order.
//
// Pure functions; thread-safe.

#include "scheduler/resources.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// What the water-filling knows about one queue.
struct queue_demand {
  std::string name;
  /// Share of the total relative to the other queues; Volcano's range is 1..65535. A weight
  /// <= 0 gets only the guarantee.
  int32_t weight = 1;
  /// Hard cap; unlisted dimensions are unlimited.
  resource_limit capability;
  /// Deserved never drops below this.
  resources guarantee;
  /// Allocated plus pending demand: the most the queue could use now.
  resources request;
  /// The parent queue's name; empty or "root" for a child of the root. Initialised so that
  /// callers listing the other fields in order need not name it.
  std::string parent = {};
};

/// The name of the tree's root: it stands for the whole cluster and is never a queue_demand.
inline constexpr std::string_view root_queue_name = "root";

/// True when a queue whose spec.parent is `parent` hangs directly under the root: `parent` is
/// empty or "root". The one place that says how the root is spelled.
constexpr bool is_child_of_root(std::string_view parent) noexcept {
  return parent.empty() || parent == root_queue_name;
}

/// The deserved resources of one queue.
struct queue_deserved {
  std::string name;
  resources deserved;
  friend bool operator==(const queue_deserved&, const queue_deserved&) = default;
};

/// Weighted water-filling of `total` over the tree of `queues`, per dimension, from the root down
/// (see the file comment). Returns one entry per input queue, parents included, in input order;
/// a parent's entry is what its whole subtree deserves. Dimensions are those of `total`, of the
/// requests and of the guarantees. When the guarantees of a dimension exceed the total, every
/// queue gets its guarantee and nothing more (guarantees are promises; the caller's validation
/// should have refused them).
///
/// The tree is the caller's to validate (check_queue_tree in validation.hpp); this function only
/// stays defined on a bad one: a queue whose parent is not in `queues` is a child of the root, and
/// a queue on a parent cycle (itself included) is a child of the root too, which breaks the cycle.
/// Names are expected to be unique; a parent name refers to the first queue of that name.
/// Building the tree costs O(n) besides the filling.
std::vector<queue_deserved> compute_deserved(const resources& total,
                                             std::span<const queue_demand> queues);

/// The water-filling of one dimension, exposed for tests: `total` units over queues with the
/// given weights, floors and ceilings (ceilings already capped by request and capability and
/// raised to the floor). `names` break remainder ties. All spans have the same length.
std::vector<int64_t> water_fill(int64_t total, std::span<const int64_t> weights,
                                std::span<const int64_t> floors, std::span<const int64_t> ceilings,
                                std::span<const std::string> names);

/// `amount` without its pods dimension: the pod count is a limit, not a share of the cluster, and
/// would otherwise dominate for queues of many small pods.
resources without_pods(resources amount);

/// DRF's dominant share of `allocated` over the cluster `total` (pods not counted): the largest
/// allocated_d / total_d. A dimension the cluster lacks counts as share 1.
ratio drf_share(const resources& allocated, const resources& total);

/// Volcano's queue share: the largest allocated_d / deserved_d over the dimensions of either
/// (pods not counted); a dimension with nothing deserved and something allocated counts as 1,
/// nothing allocated counts as 0.
ratio queue_share(const resources& allocated, const resources& deserved);

/// Whether other queues' claims cut the queue's `deserved` share below what it would get alone:
/// below the smaller of its `request` and the cluster's `total` in some dimension but pods.
bool share_cut_by_others(const resources& deserved, const resources& request,
                         const resources& total) noexcept;

/// Volcano's proportion plugin's "overused": the queue holds at least its deserved share in
/// every dimension the share names but pods (Volcano keeps the pod count apart). An overused
/// queue starts nothing new, neither a gang nor an extra pod, until what it holds drops or its
/// share grows; the queue actor and the simulation both ask here.
///
/// Unlike Volcano, only while other queues cut its share (`cut`, share_cut_by_others): alone, a
/// queue at its share holds the whole cluster or all it asks for, and holding it back would
/// leave room idle that no one else wants, and keep a starving gang from planning the
/// reservation that ends its starvation (in the Philly replay, Volcano's rule took phalanx's
/// reservations from 62 to 5). Nothing is overused while its share is zero (not computed yet).
bool queue_overused(const resources& allocated, const resources& deserved, bool cut) noexcept;

} // namespace phalanx::scheduler
