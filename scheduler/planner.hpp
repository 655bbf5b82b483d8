#pragma once

// The gang planner (DESIGN.md sections 4 and 7): given a node view and a gang, choose nodes for
// at least the gang's minimum of pods with every role minimum met, or say why not.
//
// - The answer carries a code with a retry meaning (STYLE.md "Values"): `unschedulable` means
//   waiting can help (resources are busy now); `unresolvable` means it never can with these nodes
//   (some required pod fits no node even when the node is empty, or the roles cannot be met).
// - Tentative placements go through an undo log, so a failed plan leaves nothing behind and the
//   search can back out of a dead end.
// - On large clusters it scores a bounded sample of feasible nodes (kube-scheduler's
//   percentageOfNodesToScore), but it never reports `unschedulable` because of the sample: when
//   the sample cannot hold the gang it widens to every node, and then searches (bounded) before
//   giving up.
//
// - Among the nodes a pod may use, it prefers the best by kube-scheduler's default profile: the
//   resource score (config.strategy) with TaintToleration, NodeAffinity, PodTopologySpread and
//   InterPodAffinity (scores.hpp), each normalized over the pod's candidates in the sample. A pod
//   whose scores depend on where other pods are sees the members of its gang placed before it.
//   Preferences only rank: they never make a plan fail.
//
// Deterministic: the same view, request, config and RNG state give the same plan.

#include "scheduler/model.hpp"
#include "scheduler/node_view.hpp"
#include "scheduler/predicates.hpp"
#include "scheduler/random.hpp"
#include "scheduler/scores.hpp"

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace phalanx::scheduler {

// The RNG every randomized decision of the core takes from its caller: scheduler::rng.

/// Policy knobs of the planner. Defaults are what phalanxd uses without a config file.
struct planner_config {
  /// How nodes are ranked. Default: binpack (fill nodes, keep whole nodes free for big gangs).
  score_strategy strategy = score_strategy::binpack;
  /// Per-resource weights of the score. Default: cpu 1, memory 1, extended resources 1.
  score_weights weights;
  /// Percentage of nodes to consider once enough feasible ones were found; 0 means adaptive as in
  /// kube-scheduler: max(5, 50 - nodes / 125). Default: 0.
  int32_t percentage_of_nodes_to_score = 0;
  /// Never stop the scan before this many feasible nodes were found. Default: 100.
  int32_t min_feasible_nodes = 100;
  /// Node assignments the bounded backtracking search may try after greedy placement failed.
  /// Default: 20000.
  int64_t search_budget = 20000;
};

/// What to place: the pending pods of one gang, and how many of them must be placed.
struct gang_request {
  /// Candidate pods, in preference order. Pods sharing a `constraints` pointer and equal requests
  /// are treated as one class.
  std::span<const pod* const> pods;
  /// How many of `pods` must be placed for the gang to be ready (minMember minus pods already
  /// bound). Zero means the gang is already ready and every placement is optional.
  int32_t min_pods = 0;
  /// For each role, how many more pods of that role must be placed (already reduced by bound
  /// pods); roles with 0 may be omitted.
  std::vector<role_minimum> min_per_role;
  /// Also place pods beyond the minimum when room exists (elastic gangs). Default: true.
  bool place_extra = true;
};

enum class plan_code { success, unschedulable, unresolvable };
std::string_view to_string(plan_code c) noexcept;  // "Success", "Unschedulable", ...
inline constexpr plan_code plan_code_last = plan_code::unresolvable;

/// One decision: request.pods[pod] goes to view node `node`.
struct placement {
  std::size_t pod = 0;
  std::size_t node = 0;
  friend bool operator==(const placement&, const placement&) = default;
};

struct plan_result {
  plan_code code = plan_code::unschedulable;
  /// On success: at least min_pods placements meeting every role minimum, then any extras.
  /// Otherwise empty.
  std::vector<placement> placements;
  /// When not success, or when a request with nothing required placed no pod at all (a ready
  /// gang's extras): the pod that could not be placed (index into request.pods) and why, as
  /// counted predicate reasons over every node.
  std::size_t origin_pod = 0;
  fit_diagnosis origin;
  /// When not success (or as for `origin` above), the precise sentence: "worker needs 2 cpu per pod for 3 pods; the most
  /// free on any node is 1500m cpu (node-4); 6 nodes lack cpu" - names the resource, the amount
  /// missing and the node counts. No final period, so callers can append or embed it.
  std::string detail;
  /// Work done, for metrics and benchmarks.
  int64_t nodes_evaluated = 0;
  int64_t search_steps = 0;
  /// True when the sample could not hold the gang and every node was considered.
  bool widened = false;
  /// True when the backtracking search ran out of config.search_budget, so an `unschedulable`
  /// answer may be wrong (a placement may exist that the search did not reach).
  bool search_exhausted = false;
  /// With `unresolvable`: the gang has fewer pods than its minimums (minMember, a role's
  /// minTaskMember), so more pods resolve it, not other nodes. False: some pods can never fit
  /// these nodes, whatever else changes.
  bool lacks_pods = false;
};

/// Plans gangs. Holds scratch buffers reused between calls, so keep one per thread; not
/// thread-safe. The view must not change during a call except through its own (possibly stale)
/// free amounts.
class gang_planner {
 public:
  explicit gang_planner(planner_config config = {});

  /// A copy gets the config and scratch buffers of its own, so copies may plan on different
  /// threads. Moves take the buffers along; a moved-from planner may only be assigned or
  /// destroyed.
  gang_planner(const gang_planner& other);
  gang_planner& operator=(const gang_planner& other);
  gang_planner(gang_planner&&) noexcept = default;
  gang_planner& operator=(gang_planner&&) noexcept = default;
  ~gang_planner() = default;

  const planner_config& config() const noexcept { return config_; }

  /// Plans `request` against `view`. `random` picks where the node scan starts, spreading
  /// concurrent planners over the cluster.
  plan_result plan(const node_view& view, const gang_request& request, rng& random);

  /// The same, writing into `out` and reusing its storage: with a warm planner and a reused
  /// `out`, a plan that succeeds allocates nothing. The hot path of the PodGroup actor.
  void plan(const node_view& view, const gang_request& request, rng& random, plan_result& out);

 private:
  struct scratch;
  planner_config config_;
  std::shared_ptr<scratch> scratch_;
};

/// The condition message Volcano writes on a PodGroup that cannot start, with our precise detail:
/// "3/4 tasks in gang unschedulable: pod group is not ready, 1 Running, 3 Pending, 4 minAvailable;
/// Pending: 3 Unschedulable. Origin reason is worker-2: 0/6 nodes are unavailable: 6 Insufficient
/// cpu." then `detail` as a sentence. As in Volcano, the status histogram lists every status with
/// pods plus minAvailable, sorted as strings; the first number is min_available minus the ready
/// (running and succeeded) pods.
struct gang_status_counts {
  int32_t total = 0;      // Pods in the gang.
  int32_t running = 0;    // Bound and not terminal.
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t pending = 0;    // Not bound.
  int32_t min_available = 0;
};
std::string gang_unschedulable_message(const gang_status_counts& counts,
                                       std::string_view origin_pod_name,
                                       const fit_diagnosis& origin, std::string_view detail);

} // namespace phalanx::scheduler
