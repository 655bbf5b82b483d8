#pragma once

// What every actor of one runtime shares: the configuration, the cluster view, the node
// directory, the clock and the metrics. Built before the actors, immutable afterwards except for
// the thread-safe view, directory and metrics.

#include "actors/cluster_view.hpp"
#include "actors/node_directory.hpp"
#include "actors/runtime_config.hpp"
#include "actors/runtime_metrics.hpp"

#include <caf/actor_clock.hpp>

#include <atomic>
#include <memory>

namespace phalanx::actors {

/// A new number per runtime of the process.
inline uint64_t next_generation() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

struct runtime_context {
  runtime_config config;
  /// Distinguishes runtimes of one process (tests start many), for per-thread caches.
  uint64_t generation = next_generation();
  std::shared_ptr<cluster_view> view = std::make_shared<cluster_view>();
  std::shared_ptr<node_directory> nodes = std::make_shared<node_directory>();
  std::shared_ptr<runtime_metrics> metrics = std::make_shared<runtime_metrics>();

  /// Wall time = wall_base + (actor clock now - clock_base). Under CAF's test coordinator the
  /// actor clock is virtual, so timestamps in deterministic tests are reproducible.
  scheduler::timestamp wall_base{};
  caf::actor_clock::time_point clock_base{};
  const caf::actor_clock* clock = nullptr;

  scheduler::timestamp now() const {
    if (clock == nullptr)
      return wall_base;
    return wall_base +
           std::chrono::duration_cast<scheduler::duration>(clock->now() - clock_base);
  }
};

using context_ptr = std::shared_ptr<const runtime_context>;

} // namespace phalanx::actors
