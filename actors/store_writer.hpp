#pragma once

// The store writer (DESIGN.md sections 4 and 5): the only writer to RocksDB. It group-commits
// every batch that arrives within a short window after the first of a group
// (store_config::commit_window, default 1 ms; `store.commitWindow` in the config file) or until
// max_batch_records are buffered, as one atomic WriteBatch with a synced WAL, then answers each
// writer. A batch that finds the writer quiet (its last group held fewer than four batches, or
// ended a window or more ago) is written once the mailbox holds nothing older, without waiting
// for the window: one gang at a time is then placed 2.5 times as fast (docs/PERFORMANCE.md). No
// synced write per record: at 0.2-1 ms per sync, that is what makes "acknowledged means durable"
// affordable at tens of thousands of records per second. A window of zero flushes once the mailbox
// holds nothing older than the flush.
//
// Once writes pause (store_config::flush_when_idle_after, default 2 s) it has RocksDB flush the
// memtables in the background: what a burst wrote would otherwise stay in them, in memory, until
// later writes filled them (docs/NOTES.md, "The write buffers are flushed when writes pause").
//
// phalanxd spawns it detached (its own thread), because a synced write blocks; deterministic
// tests spawn it on the test coordinator.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"

#include "storage/store.hpp"

#include <caf/actor_clock.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <memory>
#include <vector>

namespace phalanx::actors {

struct store_writer_state {
  static inline const char* name = "phalanx.store_writer";

  struct pending_write {
    batch_ptr batch;
    uint64_t cookie = 0;
    persist_listener_actor listener;
  };

  context_ptr ctx;
  std::shared_ptr<storage::store> store;
  std::vector<pending_write> buffer;
  std::size_t buffered_records = 0;
  bool flush_scheduled = false;

  // When the last write ended and how many batches it held (what tells a quiet writer, which
  // skips the window), and whether the idle flush's check (store_config::flush_when_idle_after)
  // is on its way.
  caf::actor_clock::time_point last_write;
  std::size_t last_group_batches = 0;
  bool idle_check_scheduled = false;
};

/// Spawn with: sys.spawn<caf::detached>(store_writer_impl, ctx, store).
store_writer_actor::behavior_type
store_writer_impl(store_writer_actor::stateful_pointer<store_writer_state> self, context_ptr ctx,
                  std::shared_ptr<storage::store> store);

} // namespace phalanx::actors
