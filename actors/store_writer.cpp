#include "actors/store_writer.hpp"

#include "actors/operator_log.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace phalanx::actors {

namespace {

using self_ptr = store_writer_actor::stateful_pointer<store_writer_state>;

// A group of this many batches (callers) or more means load: the next group waits for the
// window. One gang's round makes one or two batches (its bindings, its pods' starts).
constexpr std::size_t busy_group_batches = 4;

void schedule_idle_check(self_ptr self, caf::timespan after) {
  self->state.idle_check_scheduled = true;
  self->delayed_send(self, after, idle_atom::value);
}

void flush(self_ptr self) {
  auto& st = self->state;
  if (st.buffer.empty())
    return;
  std::vector<const storage::write_batch*> batches;
  batches.reserve(st.buffer.size());
  for (const auto& w : st.buffer)
    batches.push_back(w.batch.get());
  auto started = std::chrono::steady_clock::now();
  auto outcome = st.store->write(batches);
  auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  st.ctx->metrics->store_commit_seconds.observe(elapsed.count());
  st.ctx->metrics->store_batch_records.observe(double(st.buffered_records));
  if (!outcome.ok())
    oplog::error("store write failed")
        .kv("records", static_cast<uint64_t>(st.buffered_records))
        .kv("error", outcome.to_string());
  for (auto& w : st.buffer)
    self->send(w.listener, persisted_atom::value, w.cookie, outcome);
  st.last_group_batches = st.buffer.size();
  st.buffer.clear();
  st.buffered_records = 0;

  st.last_write = self->clock().now();
  auto idle_after = st.ctx->config.store.flush_when_idle_after;
  if (!st.idle_check_scheduled && idle_after.count() > 0)
    schedule_idle_check(self, idle_after);
}

// One check per quiet period, not one timer per write: a check that finds a write younger than
// the idle time waits for the rest of it. Only a write arms it, so each check follows one.
void check_idle(self_ptr self) {
  auto& st = self->state;
  st.idle_check_scheduled = false;
  auto idle_after = st.ctx->config.store.flush_when_idle_after;
  if (auto quiet = self->clock().now() - st.last_write; quiet < idle_after)
    return schedule_idle_check(self, idle_after - quiet);
  auto stats = st.store->stats();
  if (stats.flushing) // RocksDB's own or our last one: the memtables are on their way out.
    return schedule_idle_check(self, idle_after);
  if (stats.write_buffer_bytes < st.ctx->config.store.flush_when_idle_above)
    return;
  if (auto outcome = st.store->flush_write_buffers(); !outcome.ok()) {
    if (outcome.code() == errc::unavailable) // An earlier flush still writes.
      return schedule_idle_check(self, idle_after);
    oplog::warn("store write buffers not flushed").kv("error", outcome.to_string());
    return;
  }
  st.ctx->metrics->store_idle_flushes.inc();
  oplog::debug("store writes paused; write buffers flushed")
      .kv("bytes", static_cast<uint64_t>(stats.write_buffer_bytes));
}

} // namespace

store_writer_actor::behavior_type store_writer_impl(self_ptr self, context_ptr ctx,
                                                    std::shared_ptr<storage::store> store) {
  self->state.ctx = std::move(ctx);
  self->state.store = std::move(store);
  return {
    [self](persist_atom, batch_ptr& batch, uint64_t cookie, persist_listener_actor& listener) {
      auto& st = self->state;
      st.buffered_records += batch->size();
      st.buffer.push_back({std::move(batch), cookie, std::move(listener)});
      if (st.buffered_records >= st.ctx->config.store.max_batch_records) {
        flush(self);
        return;
      }
      if (!st.flush_scheduled) {
        // The flush queues behind every persist already in the mailbox (those that arrived
        // during the previous synced write), so they all join this group. A quiet writer does
        // not wait for the window: company is not coming, and the window would only add to the
        // latency of a lone gang's bindings. Under load each group gathers many writers, and
        // the window makes the next one larger still.
        st.flush_scheduled = true;
        auto window = st.ctx->config.store.commit_window;
        bool quiet = st.last_group_batches < busy_group_batches ||
                     self->clock().now() - st.last_write >= window;
        if (window.count() > 0 && !quiet)
          self->delayed_send(self, window, flush_atom::value);
        else
          self->send(self, flush_atom::value);
      }
    },
    [self](flush_atom) {
      self->state.flush_scheduled = false;
      flush(self);
    },
    [self](idle_atom) { check_idle(self); },
  };
}

} // namespace phalanx::actors
