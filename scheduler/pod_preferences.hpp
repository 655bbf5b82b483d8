#pragma once

// The scores that depend on where other pods are (DESIGN.md section 7): kube-scheduler's
// InterPodAffinity and PodTopologySpread score plugins, raw, before normalization (scores.hpp
// normalizes and weighs them). The counterpart of pod_neighbourhood.hpp, which holds the
// required rules; built the same way for one plan: told which pods are being placed (`prepare`)
// and where the pods that matter are (`gather`, then `add` and `remove` as the plan tries and
// undoes placements), so a pod of a gang sees the members placed before it, as kube-scheduler's
// next pod sees the ones it bound.
//
// The rules, as kube-scheduler v1.37's (pkg/scheduler/framework/plugins/interpodaffinity/
// scoring.go, podtopologyspread/scoring.go):
// - InterPodAffinity: every (topologyKey, value) domain collects weights. For each pod p on a
//   node with the key: +weight for each preferred affinity term of the incoming pod selecting
//   p, -weight for each preferred anti-affinity term; and, for p's own terms selecting the
//   incoming pod, +hard_pod_affinity_weight per required affinity term, +weight per preferred
//   affinity term, -weight per preferred anti-affinity term. A node's raw score is the sum, over
//   the keys that collected anything, of its domain's weight. The incoming pod is not counted
//   against itself. Terms select pods as the required rules do (term_selects).
// - PodTopologySpread, ScheduleAnyway constraints only: the pods a constraint selects (in the
//   incoming pod's namespace, its selector plus matchLabelKeys with the pod's own values) are
//   counted per domain over the eligible nodes (every key of the pod's ScheduleAnyway
//   constraints present, node affinity unless nodeAffinityPolicy is Ignore, taints if
//   nodeTaintsPolicy is Honor); on kubernetes.io/hostname, the node's own pods. A node's raw
//   score is round(sum over constraints of count * ln(domains + 2) + maxSkew - 1), where domains
//   are the key's values among the nodes being scored (nodes for hostname); a node lacking a key
//   is not scored (it gets 0 after normalization).
//   kube-scheduler also gives pods without constraints of their own its system defaults (zone
//   and hostname, ScheduleAnyway), but only pods that a Service, ReplicaSet, StatefulSet or
//   ReplicationController selects, by that selector. Phalanx places gangs' pods and knows none
//   of those objects, so no pod gets defaults here.
//
// Not thread-safe; reuse one per thread.

#include "scheduler/model.hpp"
#include "scheduler/node_view.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace phalanx::scheduler {

/// The node label kube-scheduler counts per node for topology spread.
inline constexpr std::string_view hostname_label = "kubernetes.io/hostname";

/// True when the pod has preferred pod (anti-)affinity terms or ScheduleAnyway topology spread
/// constraints: its own scores depend on where other pods are.
bool has_pod_preferences(const pod& p) noexcept;
/// True when the pod has terms other pods' InterPodAffinity scores read: required pod affinity
/// or preferred pod (anti-)affinity.
bool has_scoring_terms(const pod& p) noexcept;
/// True when some scoring term of `owner` (see has_scoring_terms) selects `incoming`.
bool scoring_terms_select(const pod& owner, const pod& incoming) noexcept;

class pod_preferences {
 public:
  /// Forgets everything; keeps storage.
  void clear();

  /// Declares an incoming pod kind; returns its handle. Pods that share namespace, labels and
  /// constraints may share one handle. Call before any add().
  uint32_t prepare(const pod& incoming);

  /// After prepare(): adds the pods of `view` that can matter to the prepared kinds. Every pod
  /// when some kind has preferences of its own (any pod may match its terms or selectors);
  /// otherwise only pods with scoring terms, found through the view's counts, so a plan reads no
  /// pod when none has any.
  void gather(const node_view& view);

  /// `p` is on node `node_index` (whose facts are `n`, alive until clear()). Pods placed
  /// tentatively are added the same way and removed with remove() in reverse order.
  void add(uint32_t node_index, const node& n, const pod& p);
  /// Undoes the matching add().
  void remove(uint32_t node_index, const node& n, const pod& p);

  /// True when the scores of `kind` depend on where pods are: it has preferences of its own, or
  /// a pod added so far has terms that select it.
  bool depends_on_pods(uint32_t kind) const noexcept;
  /// True when `kind` has ScheduleAnyway constraints.
  bool spreads(uint32_t kind) const noexcept;

  /// InterPodAffinity's raw score of node `n` for `kind`, with the pods added so far.
  int64_t inter_pod_affinity_score(uint32_t kind, const node& n) const;

  /// PodTopologySpread's weight of each ScheduleAnyway constraint of `kind` (topology_weight_q32)
  /// over `scored`, the nodes being scored for it: their values of its key, among those having
  /// every key. Writes one per constraint into `weights_q32`.
  void topology_weights(uint32_t kind, std::span<const node* const> scored,
                        std::vector<int64_t>& weights_q32) const;
  /// PodTopologySpread's raw score of node `n` (index `node_index`) for `kind`, with the pods
  /// added so far and the weights from topology_weights(); nullopt when the node lacks a key.
  std::optional<int64_t> topology_spread_score(uint32_t kind, uint32_t node_index, const node& n,
                                               std::span<const int64_t> weights_q32) const;

 private:
  struct domain {
    std::string_view key;
    std::string_view value;
    friend bool operator==(const domain&, const domain&) = default;
  };
  struct domain_hash {
    std::size_t operator()(const domain& d) const noexcept;
  };

  // One ScheduleAnyway constraint of a kind, with its counts.
  struct spread {
    const topology_spread_constraint* constraint = nullptr;
    label_selector selector;  // With matchLabelKeys folded in; unused when selects_none.
    bool selects_none = false;
    bool per_node = false;    // Keyed by hostname: counted per node.
    std::unordered_map<domain, int64_t, domain_hash> counts;
    std::unordered_map<uint32_t, int64_t> node_counts;  // per_node only.
  };

  struct kind {
    const pod* first = nullptr;
    bool own_terms = false;  // Preferred pod (anti-)affinity terms of its own.
    std::unordered_map<domain, int64_t, domain_hash> weights;  // InterPodAffinity, by domain.
    std::vector<std::string_view> weight_keys;                  // The distinct keys of weights.
    std::vector<spread> spreads;
  };

  void update(uint32_t node_index, const node& n, const pod& p, int64_t delta);
  static void add_weight(kind& k, std::string_view key, const node& n, int64_t weight);
  static bool has_spread_keys(const kind& k, const node& n);
  static bool spread_eligible(const kind& k, const spread& sp, const node& n);

  std::vector<kind> kinds_;
  mutable std::unordered_set<std::string_view> values_;  // topology_weights' scratch.
};

} // namespace phalanx::scheduler
