#pragma once

// The cluster view of DESIGN.md section 4: per node slot, the node's static facts and its free
// resources (allocatable - committed - held) as atomics. Only the node actor owning a slot writes
// them; planners on any thread read them without locks. It may be stale: the node actor's vote is
// the truth, the view is a hint.
//
// Beside the free amounts, each slot counts its reserves in flight: what gang actors asked the
// node to hold in reserves the node actor has not read yet. The sender adds the amount when it
// sends, the node actor takes the same amount off when the reserve arrives (after publishing the
// hold, if it made one), and planners read free minus in flight. Without it, every gang planning
// before the node read the first reserve saw the node as free; under binpack they all chose the
// same most-allocated nodes, and the younger ones were refused (docs/NOTES.md, "Reserves in
// flight"). These counters are the one thing in the view that actors other than the owner write.
//
// Slots live in fixed chunks that never move, so a reader never races a reallocation. Static facts
// change rarely (cordon, uncordon); every version stays alive until the view is destroyed, so a
// `const node&` a planner holds stays valid for the whole plan.

#include "scheduler/node_view.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace phalanx::actors {

class cluster_view final : public scheduler::node_view {
 public:
  /// The most node slots a view holds (chunks of 1024 allocated on demand).
  static constexpr std::size_t max_slots = 1 << 20;

  cluster_view();
  ~cluster_view() override;
  cluster_view(const cluster_view&) = delete;
  cluster_view& operator=(const cluster_view&) = delete;

  /// Appends a slot for `n` (shared, never copied) with free = `free`; returns its index.
  /// Thread-safe with respect to readers; callers serialize adds (the registry does). Fails
  /// (returns max_slots) when full.
  std::size_t add_slot(std::shared_ptr<const scheduler::node> n,
                       const scheduler::resources& free);

  // -- Writers: only the node actor owning `index`.

  /// Publishes the slot's free resources. Extended dimensions the node lacks are ignored.
  void publish_free(std::size_t index, const scheduler::resources& free) noexcept;
  /// Replaces the static facts (cordon, uncordon). Old versions stay valid for readers.
  void publish_node(std::size_t index, std::shared_ptr<const scheduler::node> n);
  /// Marks the slot removed (its node was deleted) or live again; either way it holds no pods.
  void set_live(std::size_t index, bool live) noexcept;

  // -- Reserves in flight: the sender of a reserve adds, the node actor owning `index` removes.

  /// Counts `amount` as asked of the node and not yet read by its actor. Extended dimensions the
  /// node lacks are ignored (the node refuses such a reserve anyway).
  void add_in_flight(std::size_t index, const scheduler::resources& amount) noexcept;
  /// Takes off what add_in_flight added for one reserve, once the node actor has read it.
  void remove_in_flight(std::size_t index, const scheduler::resources& amount) noexcept;
  /// What is in flight to the node now (zero when no reserve is on its way).
  scheduler::resources in_flight(std::size_t index) const;

  // -- A starving gang's reservation (scheduler/room_reservation.hpp): the owner publishes it.

  /// Publishes that `gang` (0: none) holds the node's reservation and that it keeps `withheld`
  /// of the published free room from every other gang.
  void publish_reservation(std::size_t index, uint64_t gang,
                           const scheduler::resources& withheld) noexcept;
  /// The gang holding the node's reservation, or 0.
  uint64_t reserved_for(std::size_t index) const noexcept;
  /// What the node's reservation keeps from the other gangs (zero without one).
  void read_withheld(std::size_t index, scheduler::resources& out) const;

  // -- Pods on the node, for the rules between pods (scheduler/pod_neighbourhood.hpp): what is
  // committed there and what reserves hold or wait for. Only the owner writes; planners and
  // other nodes' actors read under the slot's lock. Counting the pods with rules is what lets
  // a plan without rules skip them all.

  /// Adds `p` (pod id `id`) to the node's pods; false when the id was there already.
  bool add_pod(std::size_t index, uint64_t id, std::shared_ptr<const scheduler::pod> p);
  /// Removes the pod `id`; unknown ids are ignored.
  void remove_pod(std::size_t index, uint64_t id);
  /// Shows the pod `id` as `p` from now on (its labels changed); unknown ids are ignored.
  void replace_pod(std::size_t index, uint64_t id, std::shared_ptr<const scheduler::pod> p);

  // -- node_view: any thread.

  std::size_t size() const noexcept override { return size_.load(std::memory_order_acquire); }
  const scheduler::node& at(std::size_t index) const noexcept override;
  /// The node's published free resources minus its reserves in flight. A reserved node's
  /// published free room is already less what its reservation withholds.
  void read_free(std::size_t index, scheduler::resources& out) const override;
  bool is_live(std::size_t index) const noexcept override;
  void visit_pods(std::size_t index, const scheduler::pod_visitor& visit) const override;
  scheduler::pod_rule_counts rule_counts(std::size_t index) const noexcept override;
  int64_t anti_affinity_pods() const noexcept override {
    return anti_affinity_pods_.load(std::memory_order_seq_cst);
  }
  int64_t scoring_term_pods() const noexcept override {
    return scoring_term_pods_.load(std::memory_order_seq_cst);
  }
  scheduler::namespace_directory_ptr namespaces() const override;

  // -- The namespaces' labels (Kubernetes mode watches Namespaces): the registry publishes a
  // new snapshot whole; plans and votes that match namespaceSelectors hold the one they read.
  void publish_namespaces(scheduler::namespace_directory_ptr namespaces);

 private:
  struct slot;
  static constexpr std::size_t chunk_size = 1024;
  using chunk = std::array<slot, chunk_size>;

  slot& slot_at(std::size_t index) const noexcept;
  // Adds `sign` (1 or -1) for `p` to the slot's counts and the view's anti-affinity and
  // scoring-term counts.
  void count_pod(slot& s, const scheduler::pod& p, int32_t sign) noexcept;

  std::array<std::atomic<chunk*>, max_slots / chunk_size> chunks_{};
  std::atomic<std::size_t> size_{0};
  std::atomic<int64_t> anti_affinity_pods_{0};
  std::atomic<int64_t> scoring_term_pods_{0};
  std::mutex add_mutex_;  // Serializes add_slot and chunk allocation; readers never take it.
  mutable std::mutex namespaces_mutex_;
  scheduler::namespace_directory_ptr namespaces_;  // Under namespaces_mutex_.
};

/// The cluster view as a gang holding reservations sees it: on the nodes reserved for it, the
/// room withheld from the others is its own. Wraps the view for that gang's plans only, so the
/// ordinary plan reads the view directly.
class reserving_gang_view final : public scheduler::node_view {
 public:
  reserving_gang_view(const cluster_view& base, uint64_t gang) : base_(base), gang_(gang) {}
  std::size_t size() const noexcept override { return base_.size(); }
  const scheduler::node& at(std::size_t index) const noexcept override { return base_.at(index); }
  void read_free(std::size_t index, scheduler::resources& out) const override;
  bool is_live(std::size_t index) const noexcept override { return base_.is_live(index); }
  void visit_pods(std::size_t index, const scheduler::pod_visitor& visit) const override {
    base_.visit_pods(index, visit);
  }
  scheduler::pod_rule_counts rule_counts(std::size_t index) const noexcept override {
    return base_.rule_counts(index);
  }
  int64_t anti_affinity_pods() const noexcept override { return base_.anti_affinity_pods(); }
  int64_t scoring_term_pods() const noexcept override { return base_.scoring_term_pods(); }
  scheduler::namespace_directory_ptr namespaces() const override { return base_.namespaces(); }

 private:
  const cluster_view& base_;
  uint64_t gang_;
  mutable scheduler::resources withheld_;  // Scratch: read_free runs on the planning thread.
};

} // namespace phalanx::actors
