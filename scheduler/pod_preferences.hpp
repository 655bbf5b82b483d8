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
/// True when some scoring term of `owner` (see has_scoring_terms) selects `incoming`, matching
/// namespaceSelectors against `namespaces` (term_selects).
bool scoring_terms_select(const pod& owner, const pod& incoming,
                          const namespace_directory* namespaces = nullptr) noexcept;

/// A node being scored: its index in the view and its facts.
struct scored_node {
  uint32_t index = 0;
  const node* facts = nullptr;
};

class pod_preferences {
 public:
  /// Forgets everything; keeps storage.
  void clear();
  /// The namespaces' labels that terms' namespaceSelectors match (null: names alone), as
  /// pod_neighbourhood::set_namespaces.
  void set_namespaces(const namespace_directory* namespaces) noexcept { namespaces_ = namespaces; }

  /// Declares an incoming pod kind; returns its handle. Pods that share namespace, labels and
  /// constraints may share one handle. Call before any add().
  uint32_t prepare(const pod& incoming);

  /// After prepare(): adds the pods of `view` that can matter to the prepared kinds. Every pod
  /// when some kind has preferences of its own (any pod may match its terms or selectors);
  /// otherwise only pods with scoring terms, found through the view's counts, so a plan reads no
  /// pod when none has any.
  void gather(const node_view& view);

  /// `p` is on node `node_index` (whose facts are `n`, alive until clear(); one index names one
  /// node until then). Pods placed tentatively are added the same way and removed with remove()
  /// in reverse order.
  void add(uint32_t node_index, const node& n, const pod& p);
  /// Undoes the matching add().
  void remove(uint32_t node_index, const node& n, const pod& p);

  /// True when the scores of `kind` depend on where pods are: it has preferences of its own, or
  /// a pod added so far has terms that select it.
  bool depends_on_pods(uint32_t kind) const noexcept;
  /// True when `kind` has ScheduleAnyway constraints.
  bool spreads(uint32_t kind) const noexcept;

  /// InterPodAffinity's raw score of node `n` for `kind`, with the pods added so far.
  int64_t inter_pod_affinity_score(uint32_t kind, scored_node n) const;

  /// PodTopologySpread's weight of each ScheduleAnyway constraint of `kind` (topology_weight_q32)
  /// over `scored`, the nodes being scored for it: their values of its key, among those having
  /// every key. Writes one per constraint into `weights_q32`.
  void topology_weights(uint32_t kind, std::span<const scored_node> scored,
                        std::vector<int64_t>& weights_q32) const;
  /// PodTopologySpread's raw score of node `n` for `kind`, with the pods added so far and the
  /// weights from topology_weights(); nullopt when the node lacks a key.
  std::optional<int64_t> topology_spread_score(uint32_t kind, scored_node n,
                                               std::span<const int64_t> weights_q32) const;

 private:
  // Domains are interned for the plan: each (key, value) pair gets a dense id, and each node's
  // id per key is looked up once, so a pick that scores every candidate reads arrays instead of
  // hashing label values.
  static constexpr uint32_t not_looked_up = UINT32_MAX;
  static constexpr uint32_t no_domain = UINT32_MAX - 1;  // The node lacks the key.
  struct value_key {
    uint32_t key = 0;
    std::string_view value;
    friend bool operator==(const value_key&, const value_key&) = default;
  };
  struct value_key_hash {
    std::size_t operator()(const value_key& d) const noexcept;
  };

  // One ScheduleAnyway constraint of a kind, with its counts.
  struct spread {
    const topology_spread_constraint* constraint = nullptr;
    uint32_t key = 0;         // Its topology key's index.
    label_selector selector;  // With matchLabelKeys folded in; unused when selects_none.
    bool selects_none = false;
    bool per_node = false;    // Keyed by hostname: counted per node.
    std::vector<int64_t> counts;       // By domain id; per_node: by node index.
  };

  struct kind {
    const pod* first = nullptr;
    bool own_terms = false;  // Preferred pod (anti-)affinity terms of its own.
    std::vector<int64_t> weights;       // InterPodAffinity, by domain id.
    std::vector<uint32_t> weight_keys;  // The distinct keys (indices) of the weighted domains.
    std::vector<spread> spreads;
  };

  uint32_t key_index(std::string_view key);
  // The id of node `node_index`'s domain of key `key`, or no_domain.
  uint32_t domain_of(uint32_t node_index, const node& n, uint32_t key) const;
  void update(uint32_t node_index, const node& n, const pod& p, int64_t delta);
  void add_weight(kind& k, std::string_view key, uint32_t node_index, const node& n,
                  int64_t weight);
  bool has_spread_keys(const kind& k, uint32_t node_index, const node& n) const;
  bool spread_eligible(const kind& k, const spread& sp, uint32_t node_index, const node& n) const;
  static void bump(std::vector<int64_t>& counts, uint32_t at, int64_t delta);

  std::vector<kind> kinds_;
  std::vector<std::string_view> keys_;  // Every topology key read, by index.
  mutable std::unordered_map<value_key, uint32_t, value_key_hash> ids_;
  mutable std::vector<std::vector<uint32_t>> node_domains_;  // [key][node index] -> id.
  mutable std::vector<uint32_t> seen_;  // topology_weights' scratch: by domain id, a stamp.
  mutable uint32_t stamp_ = 0;
  const namespace_directory* namespaces_ = nullptr;
};

} // namespace phalanx::scheduler
