#pragma once

// Node scores (DESIGN.md section 7): how good a feasible node is for one more pod.
//
// - binpack: weighted most-allocated, as Volcano's binpack plugin computes it: over the
//   dimensions the pod requests, (used + request) / allocatable, weighted and averaged. Fills
//   nodes so whole nodes stay free for big gangs.
// - spread: weighted least-allocated, as kube-scheduler's NodeResourcesFit LeastAllocated:
//   (allocatable - used - request) / allocatable over cpu and memory always and the other
//   dimensions the pod requests, weighted and averaged.
//
// A dimension the node lacks (allocatable 0) or whose weight is 0 is skipped; a node where the
// pod does not fit scores 0. Scores are exact integers in [0, max_node_score] with a fixed
// rounding (each dimension rounds down, then the weighted average rounds down): no doubles, so
// every planner on every machine ranks nodes the same way. 10000 steps instead of Kubernetes'
// 100 keep near-equal nodes apart.
//
// Beside the resource score (kube-scheduler's NodeResourcesFit, weight 1), the score plugins of
// kube-scheduler's default profile, each normalized over the nodes scored for one pod to
// [0, max_node_score] and weighted as that profile weighs them (docs/NOTES.md, "Scores as
// kube-scheduler's plugins"):
// - TaintToleration (weight 3): the PreferNoSchedule taints the pod does not tolerate, fewer is
//   better; DefaultNormalizeScore reversed.
// - NodeAffinity (weight 2): the summed weights of the preferred node affinity terms a node
//   matches; DefaultNormalizeScore.
// - PodTopologySpread (weight 2): pods its ScheduleAnyway constraints select per domain, fewer
//   is better (pod_preferences.hpp counts them).
// - InterPodAffinity (weight 2): preferred (anti-)affinity both ways and existing pods' required
//   affinity, by topology domain (pod_preferences.hpp sums them); min-max normalized.
// Integers throughout: the one logarithm (the spread's weight per constraint) is computed in
// fixed point by integer arithmetic (log_q32).

#include "scheduler/model.hpp"
#include "scheduler/resources.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::scheduler {

/// The best score a node can get.
inline constexpr int64_t max_node_score = 10000;

enum class score_strategy { binpack, spread };
std::string_view to_string(score_strategy s) noexcept; // "binpack", "spread"
/// Parses "binpack" or "spread" (the config file's spelling); nullopt otherwise.
std::optional<score_strategy> score_strategy_from_string(std::string_view text) noexcept;
inline constexpr score_strategy score_strategy_last = score_strategy::spread;

/// Per-resource weights of the score: an integer in [0, max_weight] per dimension; 0 leaves the
/// dimension out.
struct score_weights {
  static constexpr int64_t max_weight = 1000;

  /// Default: 1.
  int64_t cpu = 1;
  /// Default: 1.
  int64_t memory = 1;
  /// Default: 0 (not scored).
  int64_t ephemeral_storage = 0;
  /// The pods dimension. Default: 0 (not scored).
  int64_t pods = 0;
  /// Every extended resource without its own entry. Default: 1.
  int64_t extended_default = 1;
  /// Weights of named extended resources ("nvidia.com/gpu"), sorted by name, names unique.
  std::vector<std::pair<std::string, int64_t>> extended;

  /// The weight of a dimension by its Kubernetes name.
  int64_t weight_of(std::string_view name) const noexcept;

  /// Sets the weight of a dimension by name ("cpu", "memory", "ephemeral-storage", "pods", any
  /// extended name). errc::invalid_argument when the weight is outside [0, max_weight] or the
  /// name is empty.
  status set(std::string_view name, int64_t weight);

  /// Defaults overridden by name/value pairs, as the config file lists them. Fails on the first
  /// bad pair, naming it.
  static result<score_weights> from_pairs(std::span<const std::pair<std::string, int64_t>> pairs);

  friend bool operator==(const score_weights&, const score_weights&) = default;
};

/// The score of one dimension in [0, max_node_score]: for binpack (used_after / allocatable),
/// for spread ((allocatable - used_after) / allocatable), times max_node_score, rounded down.
/// `used_after` is the node's usage including the pod. 0 when allocatable <= 0 or used_after is
/// outside [0, allocatable]. Exact for every int64 input.
inline int64_t dimension_score(score_strategy s, int64_t used_after, int64_t allocatable) noexcept {
  if (allocatable <= 0 || used_after < 0 || used_after > allocatable)
    return 0;
  int64_t x = s == score_strategy::binpack ? used_after : allocatable - used_after;
  // x * max_node_score fits int64 for every realistic amount; the wide path keeps it exact near
  // the int64 range (petabytes of memory in bytes). Inline: the planner calls it per node.
  if (x <= std::numeric_limits<int64_t>::max() / max_node_score) [[likely]]
    return x * max_node_score / allocatable;
  return int64_t((__int128(x) * max_node_score) / allocatable);
}

/// The score of placing a pod with `request` on a node with `allocatable` and `free` resources.
/// 0 when the pod does not fit in `free` or no dimension is scored.
int64_t node_score(score_strategy s, const score_weights& w, const resources& request,
                   const resources& free, const resources& allocatable);

// ---------------------------------------------------------------------------------------------
// kube-scheduler's score plugins

/// The weights of kube-scheduler's default profile; the resource score has weight 1.
inline constexpr int64_t taint_toleration_weight = 3;
inline constexpr int64_t node_affinity_weight = 2;
inline constexpr int64_t pod_topology_spread_weight = 2;
inline constexpr int64_t inter_pod_affinity_weight = 2;
/// InterPodAffinityArgs.hardPodAffinityWeight, at its default: what an existing pod's required
/// affinity term that selects the incoming pod adds to the nodes of its domain.
inline constexpr int64_t hard_pod_affinity_weight = 1;

/// The most a node can score, every plugin at its best. Below 2^32: the planner keeps a score in
/// the upper half of a 64-bit heap key.
inline constexpr int64_t max_combined_score =
    max_node_score * (1 + taint_toleration_weight + node_affinity_weight +
                      pod_topology_spread_weight + inter_pod_affinity_weight);
static_assert(max_combined_score < (int64_t(1) << 32));

/// The normalized scores of one node for one pod, each in [0, max_node_score].
struct plugin_scores {
  int64_t resources = 0;  // NodeResourcesFit: binpack or spread (node_score).
  int64_t taint_toleration = 0;
  int64_t node_affinity = 0;
  int64_t pod_topology_spread = 0;
  int64_t inter_pod_affinity = 0;
};

/// The weighted sum kube-scheduler ranks nodes by, in [0, max_combined_score].
constexpr int64_t combined_score(const plugin_scores& s) noexcept {
  return s.resources + taint_toleration_weight * s.taint_toleration +
         node_affinity_weight * s.node_affinity +
         pod_topology_spread_weight * s.pod_topology_spread +
         inter_pod_affinity_weight * s.inter_pod_affinity;
}

/// TaintToleration's raw score: the PreferNoSchedule taints of `n` that no toleration with an
/// empty or PreferNoSchedule effect tolerates (NoSchedule and NoExecute taints are the filter's).
int64_t intolerable_preferred_taints(const node& n,
                                     std::span<const toleration> tolerations) noexcept;

/// NodeAffinity's raw score: the summed weights of the preferred terms `n` matches. A term
/// without requirements matches no node, and a term of weight 0 counts for none.
int64_t preferred_node_affinity_score(const node& n,
                                      std::span<const weighted_node_selector_term> terms) noexcept;

/// kube-scheduler's DefaultNormalizeScore of one raw score, given the largest raw score among
/// the nodes scored: raw * max_node_score / max_raw (rounded down), and with `reverse`
/// max_node_score minus that. With max_raw 0 every node gets 0, or max_node_score if reversed.
/// Precondition: 0 <= raw <= max_raw.
constexpr int64_t default_normalized(int64_t raw, int64_t max_raw, bool reverse) noexcept {
  if (max_raw == 0)
    return reverse ? max_node_score : 0;
  int64_t score = raw * max_node_score / max_raw;
  return reverse ? max_node_score - score : score;
}

/// InterPodAffinity's normalization of one raw score (negative for anti-affinity) given the
/// smallest and largest among the nodes scored: (raw - min) * max_node_score / (max - min),
/// rounded down; 0 for every node when they are all equal.
constexpr int64_t min_max_normalized(int64_t raw, int64_t min_raw, int64_t max_raw) noexcept {
  return max_raw > min_raw ? (raw - min_raw) * max_node_score / (max_raw - min_raw) : 0;
}

/// PodTopologySpread's normalization of one raw score of a node that has every key, given the
/// smallest and largest among those nodes (the largest taken as at least 0):
/// max_node_score * (max + min - raw) / max, rounded down; max_node_score when max is 0. Nodes
/// lacking a key get 0 instead.
constexpr int64_t spread_normalized(int64_t raw, int64_t min_raw, int64_t max_raw) noexcept {
  return max_raw == 0 ? max_node_score : max_node_score * (max_raw + min_raw - raw) / max_raw;
}

/// The same three over every node scored, in place: `raw` holds one node's raw score per entry.
void normalize_taint_toleration(std::span<int64_t> raw) noexcept;
void normalize_node_affinity(std::span<int64_t> raw) noexcept;
void normalize_inter_pod_affinity(std::span<int64_t> raw) noexcept;
/// `ignored[i]` marks a node lacking a key of the constraints: it gets 0 and its raw score takes
/// no part in the extremes.
void normalize_topology_spread(std::span<int64_t> raw, std::span<const uint8_t> ignored) noexcept;

/// The natural logarithm of n >= 1 in fixed point with 32 fraction bits, computed with integers
/// only (binary logarithm digit by digit, times ln 2), so it is the same on every machine.
/// Within 2^-30 of the exact value.
int64_t log_q32(uint64_t n) noexcept;

/// PodTopologySpread's weight of a constraint whose key has `domains` values among the nodes
/// scored: ln(domains + 2), in fixed point (log_q32), so a domain's count weighs more in a
/// topology with more domains.
inline int64_t topology_weight_q32(int64_t domains) noexcept {
  return log_q32(uint64_t(domains) + 2);
}

} // namespace phalanx::scheduler
