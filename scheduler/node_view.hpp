#pragma once

// What the planner reads of the cluster: per node, static facts and current free resources.
//
// The actor runtime implements node_view over the cluster view of DESIGN.md section 4 (atomics
// written only by each node's actor; the view may be stale and the node's vote is the truth).
// `cluster_snapshot` implements it over plain vectors for tests, benchmarks and simulations.

#include "scheduler/model.hpp"

#include <cstddef>
#include <vector>

namespace phalanx::scheduler {

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

  /// Sums over live nodes.
  resources total_allocatable() const;
  resources total_free() const;

  /// The index of the node named `name`, or size() when absent. Linear; for tests.
  std::size_t find(std::string_view name) const noexcept;

 private:
  std::vector<node> nodes_;
  std::vector<resources> free_;
  std::vector<bool> live_;
};

} // namespace phalanx::scheduler
