#pragma once

// The cluster view of DESIGN.md section 4: per node slot, the node's static facts and its free
// resources (allocatable - committed - held) as atomics. Only the node actor owning a slot writes
// it; planners on any thread read it without locks. It may be stale: the node actor's vote is the
// truth, the view is a hint.
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
  /// Marks the slot removed (its node was deleted) or live again.
  void set_live(std::size_t index, bool live) noexcept;

  // -- node_view: any thread.

  std::size_t size() const noexcept override { return size_.load(std::memory_order_acquire); }
  const scheduler::node& at(std::size_t index) const noexcept override;
  void read_free(std::size_t index, scheduler::resources& out) const override;
  bool is_live(std::size_t index) const noexcept override;

 private:
  struct slot;
  static constexpr std::size_t chunk_size = 1024;
  using chunk = std::array<slot, chunk_size>;

  slot& slot_at(std::size_t index) const noexcept;

  std::array<std::atomic<chunk*>, max_slots / chunk_size> chunks_{};
  std::atomic<std::size_t> size_{0};
  std::mutex add_mutex_;  // Serializes add_slot and chunk allocation; readers never take it.
};

} // namespace phalanx::actors
