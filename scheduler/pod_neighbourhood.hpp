#pragma once

// Placement rules between pods (DESIGN.md section 7): inter-pod affinity and anti-affinity and
// host ports, as kube-scheduler's InterPodAffinity and NodePorts filters decide them.
//
// A pod_neighbourhood is built for one decision (a plan, or a node's vote): it is told where the
// pods that matter already are (`add`, per node) and which pods are being placed (`prepare`),
// then answers "may this pod go to that node" (`check`). Pods placed tentatively are added and
// removed again as a plan tries and undoes them, so two members of one gang with mutual
// anti-affinity land apart.
//
// The rules, exactly as kube-scheduler's (pkg/scheduler/framework/plugins/interpodaffinity):
// - A topology domain is a (topologyKey, value) pair; a node is in the domains of its labels.
// - Required anti-affinity of the incoming pod: a node fails when, for some term whose key the
//   node has, a pod matching that term is in the node's domain of that key.
// - Existing pods' required anti-affinity: a node fails when some pod there or in its domain has
//   a term matching the incoming pod (the symmetry users rely on: "keep away from me").
// - Required affinity: a node passes when it has every term's key and, for every term, a pod
//   matching all the terms is in its domain of that term's key. When no pod anywhere matches
//   all the terms and the incoming pod matches them itself, every node with all the keys passes
//   (the first pod of a group with affinity to itself).
// - A term selects a pod by labels (no selector: no pod) in its namespaces (none listed and no
//   namespace selector: the incoming pod's own; an empty namespace selector: every namespace).
//   A non-empty namespace selector matches the namespaces' labels in the namespace_directory
//   the decision is given (set_namespaces; Kubernetes mode watches Namespaces), or the one label
//   every namespace has, its name (docs/NOTES.md, "Namespaces' labels").
// - Host ports: two ports conflict when protocol and port are equal and either address is
//   0.0.0.0 (or empty) or both are equal.
// - Topology spread (PodTopologySpread, whenUnsatisfiable DoNotSchedule): the domains are those
//   of the eligible nodes (every node given to add_node that has all the pod's constraints' keys,
//   passes its node affinity unless nodeAffinityPolicy is Ignore, and its taints if
//   nodeTaintsPolicy is Honor); a node fails when it lacks the key, or when the pods the
//   constraint selects (in the pod's namespace, selector plus matchLabelKeys with the pod's own
//   values) in its domain, plus the pod itself if it matches, exceed the fewest in any domain by
//   more than maxSkew. With fewer domains than minDomains the fewest is taken as 0.
//   ScheduleAnyway constraints only score, and are not applied here.
//
// Failures are resolvable: the pods in the way may go. Not thread-safe; reuse one per thread.

#include "scheduler/model.hpp"
#include "scheduler/node_view.hpp"
#include "scheduler/predicates.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace phalanx::scheduler {

/// kube-scheduler's texts.
inline constexpr std::string_view reason_host_ports =
    "node(s) didn't have free ports for the requested pod ports";
inline constexpr std::string_view reason_existing_pod_anti_affinity =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view reason_pod_affinity = "node(s) didn't match pod affinity rules";
inline constexpr std::string_view reason_pod_anti_affinity =
    "node(s) didn't match pod anti-affinity rules";
inline constexpr std::string_view reason_topology_spread =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view reason_topology_spread_label =
    "node(s) didn't match pod topology spread constraints (missing required label)";

/// The text of a neighbour failure (one of the six above); empty for anything else.
std::string_view neighbour_reason(predicate_failure f) noexcept;

/// Every matchLabels pair and every matchExpressions requirement hold.
bool matches(const label_selector& selector, const label_set& labels) noexcept;

/// The pods a topology spread constraint of `incoming` counts: its selector with matchLabelKeys
/// folded in as the pod's own values of those labels (keys it lacks are ignored), as
/// kube-scheduler merges them. Empty when the constraint has no selector (it selects none).
label_selector spread_selector(const topology_spread_constraint& t, const pod& incoming);

/// The node inclusion policies of a topology spread constraint of a pod with constraints `c`:
/// nodeAffinityPolicy Honor counts only nodes its node affinity and selector pass,
/// nodeTaintsPolicy Honor only nodes whose taints it tolerates. Whether the node has the
/// constraints' keys is the caller's to check.
bool spread_includes_node(const topology_spread_constraint& t, const placement_constraints& c,
                          const node& n) noexcept;

/// The label the apiserver gives every namespace, its name (immutable since Kubernetes 1.22).
inline constexpr std::string_view namespace_name_label = "kubernetes.io/metadata.name";
/// The labels of a namespace no directory holds: namespace_name_label alone, which every
/// namespace has (standalone mode has no Namespace objects).
label_set namespace_labels(std::string_view name);

/// The term of a pod in namespace `owner_namespace` selects `other`: its selector matches the
/// pod's labels, in the term's namespaces (and those its namespaceSelector selects), or in the
/// owner's own when it names neither. A namespaceSelector is matched against `namespaces`' labels
/// of the other pod's namespace; one the directory does not hold (or no directory) has
/// namespace_labels alone.
bool term_selects(const pod_affinity_term& term, std::string_view owner_namespace,
                  const pod& other, const namespace_directory* namespaces = nullptr) noexcept;

/// Kubernetes' HostPortInfo conflict rule.
bool ports_conflict(const host_port& a, const host_port& b) noexcept;

/// True when some port of `wanted` conflicts with some port of `used`.
bool any_port_conflict(std::span<const host_port> wanted, std::span<const host_port> used) noexcept;

/// True when the pod has required inter-pod terms, host ports or DoNotSchedule topology spread
/// constraints: rules its placement obeys.
bool has_neighbour_rules(const pod& p) noexcept;
/// True when the pod has required anti-affinity terms: a rule other pods' placement obeys.
bool has_required_anti_affinity(const pod& p) noexcept;

class pod_neighbourhood {
 public:
  /// Forgets everything; keeps storage.
  void clear();
  /// The namespaces' labels that terms' namespaceSelectors match (null: names alone); kept
  /// across clear(). The caller keeps the directory alive while this uses it. Call before
  /// prepare().
  void set_namespaces(const namespace_directory* namespaces) noexcept { namespaces_ = namespaces; }

  /// Declares an incoming pod kind; returns its handle for check(). Pods that share namespace,
  /// labels and constraints may share one handle. Call before any add().
  uint32_t prepare(const pod& incoming);
  std::size_t prepared() const noexcept { return kinds_.size(); }

  /// Node `node_index` exists: a domain for topology spread if eligible. Call for every live
  /// node, before the pods on it, when some prepared pod has spread constraints.
  void add_node(uint32_t node_index, const node& n);
  /// True when some prepared pod has DoNotSchedule topology spread constraints: every node and
  /// every pod matter then.
  bool spreads() const noexcept { return spreads_; }

  /// `p` is on node `node_index` (whose facts are `n`, alive until clear()). Pods placed
  /// tentatively are added the same way and removed with remove() in reverse order.
  void add(uint32_t node_index, const node& n, const pod& p);
  /// Undoes the matching add().
  void remove(uint32_t node_index, const node& n, const pod& p);

  /// Index meaning "no node" for gather().
  static constexpr std::size_t no_node = SIZE_MAX;
  /// After prepare(): adds the nodes and pods of `view` that can matter to the prepared kinds,
  /// reading only those. Every node is a domain when some kind spreads. Pods: every pod where
  /// some kind has inter-pod terms or spreads (any pod may match), else only pods that keep
  /// others away and, if some kind asks for host ports, pods holding some. With `vote_node`, the
  /// decision is that node's: all of its pods count, host ports only there, and other nodes'
  /// pods only where they share a domain of a term's key with it (or keep others away).
  /// `exclude` (the pods being decided, already published) are left out.
  void gather(const node_view& view, std::size_t vote_node = no_node,
              std::span<const pod* const> exclude = {});

  /// The first rule kind `kind` breaks on node `n` (index `node_index`), in kube-scheduler's
  /// order: host ports, topology spread, existing pods' anti-affinity, affinity, anti-affinity.
  /// `none` if none.
  predicate_failure check(uint32_t kind, uint32_t node_index, const node& n) const;

  /// Moves whenever a verdict of check() may change: a domain gains its first counted pod or
  /// loses its last, a spread count or a node's host ports change, or clear(). A caller may keep
  /// verdicts while it stands still (a full pass per pick re-checks every candidate otherwise,
  /// though a placement in a domain already counted changes none).
  uint64_t generation() const noexcept { return generation_; }

 private:
  struct domain {
    std::string_view key;
    std::string_view value;
    friend bool operator==(const domain&, const domain&) = default;
  };
  struct domain_hash {
    std::size_t operator()(const domain& d) const noexcept;
  };
  using domain_counts = std::unordered_map<domain, int32_t, domain_hash>;

  // One DoNotSchedule topology spread constraint of a kind, with its counts per domain.
  struct spread {
    const topology_spread_constraint* constraint = nullptr;
    label_selector selector;  // With matchLabelKeys folded in; absent when selects_none.
    bool selects_none = false;
    bool self_match = false;  // The incoming pod matches its own selector.
    std::unordered_map<domain, int32_t, domain_hash> counts;  // Eligible domains; zeros kept.
    mutable int32_t fewest = 0;      // The smallest count, cached.
    mutable bool fewest_stale = true;
  };

  struct kind {
    const pod* first = nullptr;
    domain_counts affinity;       // Domains of pods matching all its required affinity terms.
    domain_counts anti_affinity;  // Domains of pods matching one of its anti-affinity terms.
    domain_counts existing_anti;  // Domains where some pod's anti-affinity term selects it.
    std::vector<std::string_view> existing_anti_keys; // The distinct keys of existing_anti.
    bool matches_own_affinity = false;
    std::vector<spread> spreads;
  };

  void update(uint32_t node_index, const node& n, const pod& p, int32_t delta);
  static bool spread_eligible(const kind& k, const spread& sp, const node& n);
  static predicate_failure check_spread(const kind& k, const node& n);
  void bump(domain_counts& counts, domain d, int32_t delta);

  std::vector<kind> kinds_;
  // Host ports in use, by node: only nodes with a pod asking for some.
  std::unordered_map<uint32_t, std::vector<host_port>> ports_;
  bool spreads_ = false;
  uint64_t generation_ = 0;
  const namespace_directory* namespaces_ = nullptr;
};

} // namespace phalanx::scheduler
