#include "actors/cluster_view.hpp"

namespace phalanx::actors {

using scheduler::resource_name;
using scheduler::resources;

struct cluster_view::slot {
  std::atomic<const scheduler::node*> info{nullptr};
  std::atomic<bool> live{false};
  std::atomic<int64_t> cpu_milli{0};
  std::atomic<int64_t> memory_bytes{0};
  std::atomic<int64_t> ephemeral_bytes{0};
  std::atomic<int64_t> pods{0};
  // The node's extended dimensions are fixed when the slot is created (from allocatable), so the
  // array never changes size while readers look at it.
  std::vector<resource_name> extended_names;
  std::unique_ptr<std::atomic<int64_t>[]> extended_amounts;
  // Reserves sent and not yet read by the node actor (the header says who writes them).
  std::atomic<int64_t> in_flight_cpu_milli{0};
  std::atomic<int64_t> in_flight_memory_bytes{0};
  std::atomic<int64_t> in_flight_ephemeral_bytes{0};
  std::atomic<int64_t> in_flight_pods{0};
  std::unique_ptr<std::atomic<int64_t>[]> in_flight_extended; // Beside extended_names.
  // Every version of the static facts, kept so references handed to planners stay valid (a
  // reader holds the node, never an element of this list, so the list may reallocate). Only the
  // owner appends (under the view's add mutex for the first one). The first version is the
  // registry's own spec, shared rather than copied; a vector, because a deque's first push costs
  // a 512-byte block per node for the one or two versions a node ever has.
  std::vector<std::shared_ptr<const scheduler::node>> versions;
  std::mutex versions_mutex;
};

cluster_view::cluster_view() = default;

cluster_view::~cluster_view() {
  for (auto& c : chunks_)
    delete c.load(std::memory_order_relaxed);
}

cluster_view::slot& cluster_view::slot_at(std::size_t index) const noexcept {
  auto* c = chunks_[index / chunk_size].load(std::memory_order_acquire);
  return (*c)[index % chunk_size];
}

std::size_t cluster_view::add_slot(std::shared_ptr<const scheduler::node> n,
                                   const resources& free) {
  std::lock_guard<std::mutex> guard{add_mutex_};
  auto index = size_.load(std::memory_order_relaxed);
  if (index >= max_slots)
    return max_slots;
  auto& chunk_ptr = chunks_[index / chunk_size];
  if (chunk_ptr.load(std::memory_order_relaxed) == nullptr)
    chunk_ptr.store(new chunk, std::memory_order_release);
  auto& s = slot_at(index);
  for (const auto& e : n->allocatable.extended())
    s.extended_names.push_back(e.name);
  s.extended_amounts = std::make_unique<std::atomic<int64_t>[]>(s.extended_names.size());
  s.in_flight_extended = std::make_unique<std::atomic<int64_t>[]>(s.extended_names.size());
  s.info.store(n.get(), std::memory_order_relaxed);
  s.versions.push_back(std::move(n));
  s.live.store(true, std::memory_order_relaxed);
  publish_free(index, free);
  // Publishing the size last makes the fully built slot visible to readers at once.
  size_.store(index + 1, std::memory_order_release);
  return index;
}

void cluster_view::publish_free(std::size_t index, const resources& free) noexcept {
  auto& s = slot_at(index);
  s.cpu_milli.store(free.cpu_milli, std::memory_order_relaxed);
  s.memory_bytes.store(free.memory_bytes, std::memory_order_relaxed);
  s.ephemeral_bytes.store(free.ephemeral_bytes, std::memory_order_relaxed);
  s.pods.store(free.pods, std::memory_order_relaxed);
  for (std::size_t i = 0; i < s.extended_names.size(); ++i)
    s.extended_amounts[i].store(free.get(s.extended_names[i]), std::memory_order_relaxed);
}

void cluster_view::publish_node(std::size_t index, std::shared_ptr<const scheduler::node> n) {
  auto& s = slot_at(index);
  const auto* raw = n.get();
  {
    std::lock_guard<std::mutex> guard{s.versions_mutex};
    s.versions.push_back(std::move(n));
  }
  s.info.store(raw, std::memory_order_release);
}

void cluster_view::set_live(std::size_t index, bool live) noexcept {
  slot_at(index).live.store(live, std::memory_order_release);
}

namespace {

// Adds `sign` times `amount` to the slot's in-flight counters.
template <typename Slot>
void change_in_flight(Slot& s, const resources& amount, int64_t sign) noexcept {
  s.in_flight_cpu_milli.fetch_add(sign * amount.cpu_milli, std::memory_order_relaxed);
  s.in_flight_memory_bytes.fetch_add(sign * amount.memory_bytes, std::memory_order_relaxed);
  s.in_flight_ephemeral_bytes.fetch_add(sign * amount.ephemeral_bytes, std::memory_order_relaxed);
  s.in_flight_pods.fetch_add(sign * amount.pods, std::memory_order_relaxed);
  for (const auto& e : amount.extended())
    for (std::size_t i = 0; i < s.extended_names.size(); ++i)
      if (s.extended_names[i] == e.name)
        s.in_flight_extended[i].fetch_add(sign * e.amount, std::memory_order_relaxed);
}

} // namespace

void cluster_view::add_in_flight(std::size_t index, const resources& amount) noexcept {
  change_in_flight(slot_at(index), amount, 1);
}

void cluster_view::remove_in_flight(std::size_t index, const resources& amount) noexcept {
  change_in_flight(slot_at(index), amount, -1);
}

resources cluster_view::in_flight(std::size_t index) const {
  const auto& s = slot_at(index);
  resources out;
  out.cpu_milli = s.in_flight_cpu_milli.load(std::memory_order_relaxed);
  out.memory_bytes = s.in_flight_memory_bytes.load(std::memory_order_relaxed);
  out.ephemeral_bytes = s.in_flight_ephemeral_bytes.load(std::memory_order_relaxed);
  out.pods = s.in_flight_pods.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < s.extended_names.size(); ++i)
    if (auto v = s.in_flight_extended[i].load(std::memory_order_relaxed); v != 0)
      out.set(s.extended_names[i], v);
  return out;
}

const scheduler::node& cluster_view::at(std::size_t index) const noexcept {
  return *slot_at(index).info.load(std::memory_order_acquire);
}

void cluster_view::read_free(std::size_t index, resources& out) const {
  const auto& s = slot_at(index);
  out.reset();
  out.cpu_milli = s.cpu_milli.load(std::memory_order_relaxed) -
                  s.in_flight_cpu_milli.load(std::memory_order_relaxed);
  out.memory_bytes = s.memory_bytes.load(std::memory_order_relaxed) -
                     s.in_flight_memory_bytes.load(std::memory_order_relaxed);
  out.ephemeral_bytes = s.ephemeral_bytes.load(std::memory_order_relaxed) -
                        s.in_flight_ephemeral_bytes.load(std::memory_order_relaxed);
  out.pods =
      s.pods.load(std::memory_order_relaxed) - s.in_flight_pods.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < s.extended_names.size(); ++i)
    out.set(s.extended_names[i], s.extended_amounts[i].load(std::memory_order_relaxed) -
                                     s.in_flight_extended[i].load(std::memory_order_relaxed));
}

bool cluster_view::is_live(std::size_t index) const noexcept {
  return slot_at(index).live.load(std::memory_order_acquire);
}

} // namespace phalanx::actors
