#include "actors/cluster_view.hpp"

#include "scheduler/pod_neighbourhood.hpp"
#include "scheduler/pod_preferences.hpp"

#include <iterator>
#include <utility>

namespace phalanx::actors {

using scheduler::resource_name;
using scheduler::resources;

namespace {

// The four dimensions every node has, as members of `resources`.
constexpr int64_t resources::*scalar_dimensions[] = {
    &resources::cpu_milli, &resources::memory_bytes, &resources::ephemeral_bytes, &resources::pods};

// An amount of each of a node's dimensions as atomics: the scalar ones, and the extended ones in
// the order of the slot's extended_names. A slot holds two: what is free, and what is in flight.
struct atomic_amounts {
  std::atomic<int64_t> scalars[std::size(scalar_dimensions)]{};
  // Sized when the slot is made, from the node's allocatable, so it never changes size while
  // readers look at it.
  std::unique_ptr<std::atomic<int64_t>[]> extended;

  void store(const resources& r, const std::vector<resource_name>& names) noexcept {
    for (std::size_t k = 0; k < std::size(scalars); ++k)
      scalars[k].store(r.*scalar_dimensions[k], std::memory_order_relaxed);
    for (std::size_t i = 0; i < names.size(); ++i)
      extended[i].store(r.get(names[i]), std::memory_order_relaxed);
  }
  // Adds `sign` times `r`. Dimensions the node lacks are ignored.
  void add(const resources& r, int64_t sign, const std::vector<resource_name>& names) noexcept {
    for (std::size_t k = 0; k < std::size(scalars); ++k)
      scalars[k].fetch_add(sign * (r.*scalar_dimensions[k]), std::memory_order_relaxed);
    for (std::size_t i = 0; i < names.size(); ++i)
      if (auto amount = r.get(names[i]); amount != 0)
        extended[i].fetch_add(sign * amount, std::memory_order_relaxed);
  }
};

// `a` minus `b` (`b` may be null: nothing), dimension by dimension, into `out`.
void read_difference(const atomic_amounts& a, const atomic_amounts* b,
                     const std::vector<resource_name>& names, resources& out) {
  out.reset();
  for (std::size_t k = 0; k < std::size(a.scalars); ++k)
    out.*scalar_dimensions[k] = a.scalars[k].load(std::memory_order_relaxed) -
                                (b ? b->scalars[k].load(std::memory_order_relaxed) : 0);
  for (std::size_t i = 0; i < names.size(); ++i)
    out.set(names[i], a.extended[i].load(std::memory_order_relaxed) -
                          (b ? b->extended[i].load(std::memory_order_relaxed) : 0));
}

} // namespace

struct cluster_view::slot {
  std::atomic<const scheduler::node*> info{nullptr};
  std::atomic<bool> live{false};
  // The node's extended dimensions, fixed when the slot is created (from allocatable).
  std::vector<resource_name> extended_names;
  atomic_amounts free;
  // Reserves sent and not yet read by the node actor (the header says who writes them).
  atomic_amounts in_flight;
  // A starving gang's reservation: its gang (0: none) and what it withholds from the others.
  std::atomic<uint64_t> reserved_for{0};
  atomic_amounts withheld;
  // Every version of the static facts, kept so references handed to planners stay valid (a
  // reader holds the node, never an element of this list, so the list may reallocate). Only the
  // owner appends (under the view's add mutex for the first one). The first version is the
  // registry's own spec, shared rather than copied; a vector, because a deque's first push costs
  // a 512-byte block per node for the one or two versions a node ever has.
  std::vector<std::shared_ptr<const scheduler::node>> versions;
  std::mutex versions_mutex;
  // The node's pods for the rules between pods, by id; under pods_mutex. The counts are read
  // without it (hints), with sequential consistency, which the node's vote relies on
  // (node_actor.cpp, "publish, then check").
  std::vector<std::pair<uint64_t, std::shared_ptr<const scheduler::pod>>> pods;
  mutable std::mutex pods_mutex;
  std::atomic<int32_t> pod_count{0};
  std::atomic<int32_t> anti_affinity{0};
  std::atomic<int32_t> host_ports{0};
  std::atomic<int32_t> scoring_terms{0};
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
  s.free.extended = std::make_unique<std::atomic<int64_t>[]>(s.extended_names.size());
  s.in_flight.extended = std::make_unique<std::atomic<int64_t>[]>(s.extended_names.size());
  s.withheld.extended = std::make_unique<std::atomic<int64_t>[]>(s.extended_names.size());
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
  s.free.store(free, s.extended_names);
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
  auto& s = slot_at(index);
  s.live.store(live, std::memory_order_release);
  // A removed node's pods are nowhere now, and a node coming back starts with none: its new
  // actor adds what it holds.
  std::vector<std::pair<uint64_t, std::shared_ptr<const scheduler::pod>>> gone;
  {
    std::lock_guard<std::mutex> guard{s.pods_mutex};
    gone.swap(s.pods);
  }
  for (const auto& [_, p] : gone)
    count_pod(s, *p, -1);
}

void cluster_view::count_pod(slot& s, const scheduler::pod& p, int32_t sign) noexcept {
  s.pod_count.fetch_add(sign);
  if (scheduler::has_required_anti_affinity(p)) {
    s.anti_affinity.fetch_add(sign);
    anti_affinity_pods_.fetch_add(sign);
  }
  if (!p.placement().host_ports.empty())
    s.host_ports.fetch_add(sign);
  if (scheduler::has_scoring_terms(p)) {
    s.scoring_terms.fetch_add(sign);
    scoring_term_pods_.fetch_add(sign);
  }
}

void cluster_view::add_in_flight(std::size_t index, const resources& amount) noexcept {
  auto& s = slot_at(index);
  s.in_flight.add(amount, 1, s.extended_names);
}

void cluster_view::remove_in_flight(std::size_t index, const resources& amount) noexcept {
  auto& s = slot_at(index);
  s.in_flight.add(amount, -1, s.extended_names);
}

resources cluster_view::in_flight(std::size_t index) const {
  const auto& s = slot_at(index);
  resources out;
  read_difference(s.in_flight, nullptr, s.extended_names, out);
  return out;
}

void cluster_view::publish_reservation(std::size_t index, uint64_t gang,
                                       const resources& withheld) noexcept {
  auto& s = slot_at(index);
  s.withheld.store(withheld, s.extended_names);
  s.reserved_for.store(gang, std::memory_order_release);
}

uint64_t cluster_view::reserved_for(std::size_t index) const noexcept {
  return slot_at(index).reserved_for.load(std::memory_order_acquire);
}

void cluster_view::read_withheld(std::size_t index, resources& out) const {
  const auto& s = slot_at(index);
  read_difference(s.withheld, nullptr, s.extended_names, out);
}

void reserving_gang_view::read_free(std::size_t index, resources& out) const {
  base_.read_free(index, out);
  if (base_.reserved_for(index) != gang_)
    return;
  base_.read_withheld(index, withheld_);
  out += withheld_;
}

const scheduler::node& cluster_view::at(std::size_t index) const noexcept {
  return *slot_at(index).info.load(std::memory_order_acquire);
}

void cluster_view::read_free(std::size_t index, resources& out) const {
  const auto& s = slot_at(index);
  read_difference(s.free, &s.in_flight, s.extended_names, out);
}

bool cluster_view::is_live(std::size_t index) const noexcept {
  return slot_at(index).live.load(std::memory_order_acquire);
}

bool cluster_view::add_pod(std::size_t index, uint64_t id,
                           std::shared_ptr<const scheduler::pod> p) {
  auto& s = slot_at(index);
  const scheduler::pod& counted = *p;
  {
    std::lock_guard<std::mutex> guard{s.pods_mutex};
    for (const auto& [known, _] : s.pods)
      if (known == id)
        return false;
    s.pods.emplace_back(id, std::move(p));
  }
  // After the pod is listed: a reader that sees the count finds the pod (node_actor.cpp,
  // "publish, then check").
  count_pod(s, counted, +1);
  return true;
}

void cluster_view::remove_pod(std::size_t index, uint64_t id) {
  auto& s = slot_at(index);
  std::shared_ptr<const scheduler::pod> gone;
  {
    std::lock_guard<std::mutex> guard{s.pods_mutex};
    // Newest last: a hold aborted or a pod released soon after it came is near the end.
    for (auto i = s.pods.rbegin(); i != s.pods.rend(); ++i)
      if (i->first == id) {
        gone = std::move(i->second);
        *i = std::move(s.pods.back());
        s.pods.pop_back();
        break;
      }
  }
  if (gone)
    count_pod(s, *gone, -1);
}

void cluster_view::replace_pod(std::size_t index, uint64_t id,
                               std::shared_ptr<const scheduler::pod> p) {
  auto& s = slot_at(index);
  const scheduler::pod& counted = *p;
  std::shared_ptr<const scheduler::pod> was;
  {
    std::lock_guard<std::mutex> guard{s.pods_mutex};
    for (auto& [known, pod] : s.pods)
      if (known == id) {
        was = std::exchange(pod, std::move(p));
        break;
      }
  }
  if (!was)
    return;
  // The new pod's rules counted before the old one's leave, as add_pod counts after listing: a
  // reader never sees fewer rules than the listed pods carry.
  count_pod(s, counted, +1);
  count_pod(s, *was, -1);
}

void cluster_view::visit_pods(std::size_t index, const scheduler::pod_visitor& visit) const {
  const auto& s = slot_at(index);
  std::lock_guard<std::mutex> guard{s.pods_mutex};
  for (const auto& [_, p] : s.pods)
    visit(*p);
}

scheduler::pod_rule_counts cluster_view::rule_counts(std::size_t index) const noexcept {
  const auto& s = slot_at(index);
  return {s.anti_affinity.load(), s.host_ports.load(), s.pod_count.load(),
          s.scoring_terms.load()};
}

scheduler::namespace_directory_ptr cluster_view::namespaces() const {
  std::lock_guard<std::mutex> guard{namespaces_mutex_};
  return namespaces_;
}

void cluster_view::publish_namespaces(scheduler::namespace_directory_ptr namespaces) {
  std::lock_guard<std::mutex> guard{namespaces_mutex_};
  namespaces_ = std::move(namespaces);
}

} // namespace phalanx::actors
