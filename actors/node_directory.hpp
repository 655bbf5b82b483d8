#pragma once

// Node actor handles by cluster-view slot, readable from any thread without locks. The registry
// appends a handle when it spawns a node actor; PodGroup actors look handles up to send reserves.
// Same chunked layout as cluster_view: entries never move once published.

#include "actors/interfaces.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

namespace phalanx::actors {

class node_directory {
 public:
  static constexpr std::size_t max_slots = 1 << 20;

  node_directory() = default;
  ~node_directory() {
    for (auto& c : chunks_)
      delete c.load(std::memory_order_relaxed);
  }
  node_directory(const node_directory&) = delete;
  node_directory& operator=(const node_directory&) = delete;

  /// Publishes the handle of slot `index`. Called once per slot, by the registry.
  void publish(std::size_t index, node_actor handle) {
    std::lock_guard<std::mutex> guard{mutex_};
    auto& c = chunks_[index / chunk_size];
    if (c.load(std::memory_order_relaxed) == nullptr)
      c.store(new chunk, std::memory_order_release);
    auto& e = (*c.load(std::memory_order_relaxed))[index % chunk_size];
    e.handle = std::move(handle);
    e.ready.store(true, std::memory_order_release);
  }

  /// The handle of slot `index`, or an invalid handle when none was published.
  node_actor at(std::size_t index) const {
    auto* c = chunks_[index / chunk_size].load(std::memory_order_acquire);
    if (c == nullptr)
      return {};
    const auto& e = (*c)[index % chunk_size];
    if (!e.ready.load(std::memory_order_acquire))
      return {};
    return e.handle;
  }

  /// Drops every handle (shutdown), so the actor system can finish.
  void clear() {
    std::lock_guard<std::mutex> guard{mutex_};
    for (auto& c : chunks_) {
      auto* p = c.load(std::memory_order_relaxed);
      if (p == nullptr)
        continue;
      for (auto& e : *p) {
        e.ready.store(false, std::memory_order_release);
        e.handle = nullptr;
      }
    }
  }

 private:
  struct entry {
    std::atomic<bool> ready{false};
    node_actor handle;
  };
  static constexpr std::size_t chunk_size = 1024;
  using chunk = std::array<entry, chunk_size>;
  std::array<std::atomic<chunk*>, max_slots / chunk_size> chunks_{};
  std::mutex mutex_;
};

} // namespace phalanx::actors
