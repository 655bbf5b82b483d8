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

} // namespace phalanx::scheduler
