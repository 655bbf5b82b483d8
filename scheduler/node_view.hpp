#pragma once

// What the planner reads of the cluster: per node, static facts and current free resources.
//
// The actor runtime implements node_view over the cluster view of DESIGN.md section 4 (atomics
// written only by each node's actor; the view may be stale and the node's vote is the truth).
// `cluster_snapshot` implements it over plain vectors for tests, benchmarks and simulations.

#include "scheduler/model.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace phalanx::scheduler {

/// How many pods on a node carry rules other pods' placement depends on: cheap hints that let a
/// plan without rules between pods look at no pod (pod_neighbourhood.hpp, pod_preferences.hpp).
struct pod_rule_counts {
  int32_t anti_affinity = 0;  // Pods with required pod anti-affinity.
  int32_t host_ports = 0;     // Pods asking for host ports.
  int32_t pods = 0;           // Every pod the node holds for the rules (bound or held).
  int32_t scoring_terms = 0;  // Pods with terms other pods' scores read (has_scoring_terms).
};

/// The cluster's namespaces with their labels, as kube-scheduler's Namespace informer holds them
/// (Kubernetes mode watches them): what a term's namespaceSelector is matched against. Built
/// whole, then shared immutable (namespace_directory_ptr) by every decision that reads it.
class namespace_directory {
 public:
  /// Namespace `name` has `labels` (the apiserver's own, kubernetes.io/metadata.name, among them).
  void set(std::string name, label_set labels);
  /// The labels of namespace `name`, or null when the directory does not hold it.
  const label_set* find(std::string_view name) const noexcept;
  std::size_t size() const noexcept { return labels_.size(); }
  friend bool operator==(const namespace_directory&, const namespace_directory&) = default;

 private:
  std::map<std::string, label_set, std::less<>> labels_;
};
using namespace_directory_ptr = std::shared_ptr<const namespace_directory>;

using pod_visitor = std::function<void(const pod&)>;

class node_view {
 public:
  virtual ~node_view() = default;

  /// The number of node slots. Indices are stable while a plan runs.
  virtual std::size_t size() const noexcept = 0;

  /// Static facts of node `index`: labels, taints, allocatable, unschedulable.
  /// Precondition: index < size(). The reference stays valid while the plan runs.
  virtual const node& at(std::size_t index) const noexcept = 0;

  /// Writes the free resources of node `index` (allocatable - committed - held) into `out`,
  /// reusing its storage so a hot loop does not allocate. May be stale.
  virtual void read_free(std::size_t index, resources& out) const = 0;

  /// False for a slot whose node was removed; the planner skips it. Default: every slot is live.
  virtual bool is_live(std::size_t /*index*/) const noexcept { return true; }

  // Pods on nodes, for the rules between pods (inter-pod affinity, host ports). A view without
  // them (the default) has no pod anywhere.

  /// Calls `visit` for every pod on node `index`: bound, and held by gangs committing there.
  /// May be stale, like the free amounts; the node's vote is the truth.
  virtual void visit_pods(std::size_t /*index*/, const pod_visitor& /*visit*/) const {}
  /// The hints of node `index`.
  virtual pod_rule_counts rule_counts(std::size_t /*index*/) const noexcept { return {}; }
  /// Pods with required pod anti-affinity on every node together; 0 means no pod anywhere keeps
  /// others away, so a plan of pods without rules need not look.
  virtual int64_t anti_affinity_pods() const noexcept { return 0; }
  /// Pods with scoring terms (required pod affinity, preferred pod (anti-)affinity) on every node
  /// together; 0 means no pod anywhere moves others' scores, so a plan of pods without
  /// preferences need not look.
  virtual int64_t scoring_term_pods() const noexcept { return 0; }

  /// The namespaces' labels, for terms' namespaceSelectors; null (the default) when the view
  /// knows none (then every namespace has its name label alone). The snapshot stays valid while
  /// the caller holds it.
  virtual namespace_directory_ptr namespaces() const { return nullptr; }
};

/// A node_view over vectors, with the bookkeeping a simulation needs. Not thread-safe.
class cluster_snapshot final : public node_view {
 public:
  /// Appends a node with free = allocatable; returns its index.
  std::size_t add_node(node n);

  std::size_t size() const noexcept override { return nodes_.size(); }
  const node& at(std::size_t index) const noexcept override { return nodes_[index]; }
  void read_free(std::size_t index, resources& out) const override { out = free_[index]; }
  bool is_live(std::size_t index) const noexcept override { return live_[index]; }

  const resources& free(std::size_t index) const noexcept { return free_[index]; }
  /// Charges `request` to node `index` (free -= request). Precondition: it fits.
  void allocate(std::size_t index, const resources& request);
  /// Returns `request` to node `index` (free += request).
  void release(std::size_t index, const resources& request);
  /// Marks a slot removed (its index stays reserved).
  void remove(std::size_t index) { live_[index] = false; }
  void set_unschedulable(std::size_t index, bool value) { nodes_[index].unschedulable = value; }
  /// Puts `p` on node `index` for the rules between pods (free amounts are not charged: use
  /// allocate). Removed again by remove_pod (by identity).
  void add_pod(std::size_t index, std::shared_ptr<const pod> p);
  void remove_pod(std::size_t index, const pod* p);

  void visit_pods(std::size_t index, const pod_visitor& visit) const override;
  pod_rule_counts rule_counts(std::size_t index) const noexcept override;
  int64_t anti_affinity_pods() const noexcept override { return anti_affinity_pods_; }
  int64_t scoring_term_pods() const noexcept override { return scoring_term_pods_; }
  namespace_directory_ptr namespaces() const override { return namespaces_; }
  void set_namespaces(namespace_directory_ptr namespaces) { namespaces_ = std::move(namespaces); }

  /// Sums over live nodes.
  resources total_allocatable() const;
  resources total_free() const;

  /// The index of the node named `name`, or size() when absent. Linear; for tests.
  std::size_t find(std::string_view name) const noexcept;

 private:
  std::vector<node> nodes_;
  std::vector<resources> free_;
  std::vector<bool> live_;
  std::vector<std::vector<std::shared_ptr<const pod>>> pods_;  // Only nodes given a pod.
  int64_t anti_affinity_pods_ = 0;
  int64_t scoring_term_pods_ = 0;
  namespace_directory_ptr namespaces_;
};

} // namespace phalanx::scheduler
