#pragma once

// Predicates (DESIGN.md section 7): may pod P run on node N?
//
// Two families with different retry meanings (STYLE.md "Values", Ray's is_feasible/is_available):
// - static predicates do not depend on what is running: the node is unschedulable, the pod's
//   nodeSelector or required node affinity does not match, a NoSchedule/NoExecute taint is not
//   tolerated, or the request exceeds the node's allocatable ("could never fit"). Waiting does not
//   help: the reason is unresolvable.
// - the dynamic predicate is resource fit against the node's free resources. Waiting for running
//   pods to finish helps: the reason is resolvable.
//
// Reasons use kube-scheduler's texts, so users see the messages they know, and a node is rejected
// by the first failing predicate in kube-scheduler's filter order (NodeUnschedulable,
// TaintToleration, NodeAffinity, NodeResourcesFit); resource fit reports every short dimension.
//
// Pure functions; no allocation except where a std::string is returned.

#include "scheduler/model.hpp"
#include "scheduler/resources.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// Kubernetes' texts for the reasons a node is rejected.
inline constexpr std::string_view reason_node_unschedulable = "node(s) were unschedulable";
inline constexpr std::string_view reason_node_affinity =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view reason_too_many_pods = "Too many pods";

/// The taint kube-scheduler's NodeUnschedulable plugin lets a pod tolerate to land on a cordoned
/// node (DaemonSets tolerate it).
inline constexpr std::string_view unschedulable_taint_key = "node.kubernetes.io/unschedulable";

/// The first failing predicate of a pod on a node, in kube-scheduler's filter order.
enum class predicate_failure : uint8_t {
  none,                   // Every predicate passed.
  node_unschedulable,     // The node is cordoned (static).
  untolerated_taint,      // A NoSchedule or NoExecute taint is not tolerated (static).
  node_affinity,          // nodeSelector or required node affinity does not match (static).
  exceeds_allocatable,    // The request exceeds the node's allocatable: never fits (static).
  insufficient_resources, // The request exceeds the node's free resources now (dynamic).
  // Rules between pods (pod_neighbourhood.hpp), dynamic: the pods in the way may go.
  host_ports,                 // A hostPort is taken on the node.
  existing_pod_anti_affinity, // A pod there (or in its domain) keeps this pod away.
  pod_affinity,               // No pod it must be beside is in the node's domain.
  pod_anti_affinity,          // A pod it must keep away from is in the node's domain.
  topology_spread,            // Its domain would hold too many of the pods it spreads with.
  topology_spread_label,      // The node lacks a key its topology spread constraints name.
};
std::string_view to_string(predicate_failure f) noexcept; // "None", "NodeUnschedulable", ...
inline constexpr predicate_failure predicate_failure_last =
    predicate_failure::topology_spread_label;

/// True for the failures waiting cannot fix: the static predicates.
constexpr bool is_unresolvable(predicate_failure f) noexcept {
  return f != predicate_failure::none && f < predicate_failure::insufficient_resources;
}

// ---------------------------------------------------------------------------------------------
// Single predicates

/// Kubernetes' ToleratesTaint: the effect matches (or the toleration names none), the key
/// matches (or the toleration's key is empty), and the value is equal (operator Equal) or
/// anything (operator Exists).
bool tolerates(const toleration& t, const taint& tn) noexcept;

/// The index in `n.taints` of the first NoSchedule or NoExecute taint no toleration tolerates,
/// or -1. PreferNoSchedule taints never filter.
int32_t first_untolerated_taint(const node& n, std::span<const toleration> tolerations) noexcept;

/// "node(s) had untolerated taint {gpu: true}".
std::string untolerated_taint_reason(const taint& tn);

/// One requirement against a label set (matchExpressions) or, for matchFields, against the
/// node's fields. In: the key exists with one of the values; NotIn: the key is absent or has none
/// of the values; Exists / DoesNotExist; Gt / Lt: the key exists and both the label and the single
/// value parse as base-10 int64 and compare as asked (anything else does not match).
bool matches_requirement(const label_set& labels, const node_selector_requirement& r) noexcept;

/// A matchFields requirement; only "metadata.name" is a supported field (others never match).
bool matches_field_requirement(const node& n, const node_selector_requirement& r) noexcept;

/// Every requirement of the term holds. A term without requirements matches nothing, as in
/// Kubernetes.
bool matches_term(const node& n, const node_selector_term& term) noexcept;

/// nodeSelector (every pair equal) and required node affinity (some term matches; no terms means
/// any node).
bool matches_node_affinity(const node& n, const placement_constraints& c) noexcept;

/// True when the constraints tolerate the cordon taint, so an unschedulable node may be used.
bool tolerates_unschedulable(const placement_constraints& c) noexcept;

// ---------------------------------------------------------------------------------------------
// Combined checks

/// The outcome of the static predicates of a pod on a node.
struct static_verdict {
  predicate_failure failure = predicate_failure::none;
  /// For untolerated_taint: the index of the taint in node.taints.
  int32_t taint_index = -1;
  bool ok() const noexcept { return failure == predicate_failure::none; }
  friend bool operator==(const static_verdict&, const static_verdict&) = default;
};

/// The static predicates that do not look at amounts: unschedulable, taints, affinity/selector,
/// in that order. `c` may be null (no constraints).
static_verdict check_placement(const node& n, const placement_constraints* c) noexcept;

/// check_placement, then "could never fit": the request against the node's allocatable.
static_verdict check_static(const node& n, const placement_constraints* c,
                            const resources& request) noexcept;

/// "Insufficient cpu", "Insufficient nvidia.com/gpu", or "Too many pods" for the pods dimension.
std::string insufficient_reason(std::string_view resource);

// ---------------------------------------------------------------------------------------------
// Diagnosis

/// Counts the reasons a pod was rejected over the nodes of a cluster, as kube-scheduler's
/// FitError and Volcano's FitErrors do. A node may contribute several reasons (one per short
/// resource), so the counts may add up to more than the nodes. Value type; not thread-safe.
class fit_diagnosis {
 public:
  struct entry {
    std::string text;         // "Insufficient cpu".
    int64_t count = 0;        // Nodes that gave this reason.
    int64_t unresolvable = 0; // How many of them gave it as an unresolvable reason.
    friend bool operator==(const entry&, const entry&) = default;
  };

  fit_diagnosis() = default;
  explicit fit_diagnosis(int64_t node_total) : node_total_(node_total) {}

  /// The nodes considered (the N of "0/N nodes are available").
  int64_t node_total() const noexcept { return node_total_; }
  void set_node_total(int64_t n) noexcept { node_total_ = n; }

  /// Counts `text` for `nodes` more nodes.
  void add(std::string_view text, bool unresolvable, int64_t nodes = 1);
  /// Counts the static failure of one node (the text of a taint failure names the taint, so
  /// `n` is needed). For exceeds_allocatable, adds one "Insufficient X" per dimension of
  /// `request` above `n.allocatable`.
  void add_static(const node& n, const static_verdict& v, const resources& request);
  /// Counts one unresolvable or resolvable "Insufficient X" (or "Too many pods") per dimension
  /// where `request` exceeds `available`.
  void add_resources(const resources& request, const resources& available, bool unresolvable);

  /// Reasons sorted by text.
  const std::vector<entry>& entries() const noexcept { return entries_; }
  bool empty() const noexcept { return entries_.empty(); }
  /// True when at least one reason was counted and every one was unresolvable: no node can
  /// take the pod however long it waits.
  bool all_unresolvable() const noexcept;
  /// Forgets the reasons, keeps the node total; keeps the storage for reuse.
  void clear() noexcept { entries_.clear(); }

  /// kube-scheduler's wording: "0/6 nodes are available: 4 Insufficient cpu, 2 node(s) had
  /// untolerated taint {gpu: true}." Reasons by count descending, then text ascending.
  /// "0/6 nodes are available." when no reason was counted.
  std::string to_string() const;
  /// Volcano's FitErrors wording: "0/6 nodes are unavailable: 6 Insufficient cpu." Reasons
  /// ordered as Volcano orders them: the "<count> <text>" strings sorted as strings.
  std::string to_volcano_string() const;

  friend bool operator==(const fit_diagnosis&, const fit_diagnosis&) = default;

 private:
  int64_t node_total_ = 0;
  std::vector<entry> entries_; // Sorted by text, texts unique.
};

/// Runs every predicate of one pod (request and constraints) on one node with `free` resources
/// and adds the node's reasons to `out` (nothing when it fits). Returns the first failure.
/// For tests and the pending-reason report; the planner uses a cached, projected form.
predicate_failure diagnose_node(const node& n, const resources& free, const resources& request,
                                const placement_constraints* c, fit_diagnosis& out);

} // namespace phalanx::scheduler
