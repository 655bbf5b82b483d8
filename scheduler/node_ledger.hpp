#pragma once

// The node's truth (DESIGN.md section 4): allocatable, committed usage and held reservations, and
// the wait-die rule that decides every reserve. The node actor is a thin shell around it: it
// decodes a message, calls the ledger, and sends what the ledger returned.
//
// Wait-die, for a reserve with ticket t (lower ticket = older gang):
// - it fits in allocatable - committed - held - (what older waiters wait for): hold it, `reserved`;
// - it would fit if every younger hold were gone: `waiting` (the older gang waits for younger
//   holds, which always end by commit or abort, so waits never form a cycle);
// - it would fit in allocatable - committed, but older holds or older waiters are in the way:
//   `refused_conflict` (the younger gang dies and retries later with the same ticket, so it
//   eventually becomes the oldest);
// - it does not fit even in allocatable - committed: `refused_insufficient`, naming what is
//   missing.
// Older waiters count against younger requests so that a stream of small young gangs cannot
// starve an old one waiting for room.
//
// A starving gang's reservation (room_reservation.hpp): at most one gang at a time reserves room
// on a node. Every other gang's reserve is decided as if the node had that much less room (a
// reserve that fits only in the reserved room is a conflict), and the view shows the node's free
// room minus withheld() to them; the reserving gang's own reserves see the node whole.
//
// Every operation is idempotent: repeating a reserve returns the current answer, a commit or abort
// of an unknown or finished transaction does nothing, a release of an unknown pod does nothing.
// Owned by one node actor; not thread-safe.

#include "scheduler/model.hpp"
#include "scheduler/resources.hpp"
#include "scheduler/room_reservation.hpp"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace phalanx::scheduler {

enum class vote_kind { reserved, waiting, refused_conflict, refused_insufficient };
std::string_view to_string(vote_kind v) noexcept;  // "reserved", "waiting", ...
inline constexpr vote_kind vote_kind_last = vote_kind::refused_insufficient;

/// A transaction: one reserve round of one gang on one node.
struct txn_id {
  uint64_t gang = 0;
  uint32_t round = 0;
  friend auto operator<=>(const txn_id&, const txn_id&) = default;
};

struct txn_id_hash {
  std::size_t operator()(const txn_id& t) const noexcept {
    return std::hash<uint64_t>{}(t.gang * 0x9E3779B97F4A7C15ULL ^ t.round);
  }
};

/// The answer to a reserve.
struct vote_outcome {
  vote_kind vote = vote_kind::reserved;
  /// For refused_insufficient: what is missing against allocatable - committed.
  std::vector<shortfall> missing;
};

/// One pod of a reserve: its id and request. `Payload` carries what the actor needs back at
/// commit (the pod itself, for the binder).
template <class Payload>
struct hold_item {
  uint64_t pod_id = 0;
  resources request;
  Payload payload{};
};

/// What a ledger keeps of each committed pod, to give its request back at release: the request
/// itself, unless the payload is the pod, whose requests are the request (the runtime's ledgers:
/// the pointer costs 16 bytes where a copy of the request cost 56, in a map node of 80).
template <class Payload>
struct committed_pod {
  resources request;
  static committed_pod of(const resources& request, const Payload&) { return {request}; }
  const resources& requested() const noexcept { return request; }
};
template <>
struct committed_pod<std::shared_ptr<const pod>> {
  std::shared_ptr<const pod> pod_ref;
  static committed_pod of(const resources& request, const std::shared_ptr<const pod>& p) {
    assert(p && p->requests == request && "a pod's request is its requests");
    (void)request;
    return {p};
  }
  const resources& requested() const noexcept { return pod_ref->requests; }
};

/// Values by a pod's id, in a vector sorted by id: a ledger's committed pods. An unordered_map
/// spent a 32-byte node and 8-16 bytes of buckets on each 16-byte payload (a pod's pointer);
/// here it is 24 bytes and the vector's spare room. A node holds tens of pods (110 by
/// Kubernetes' default), and ids mostly come in increasing order (the registry numbers pods as
/// they are created), so an insertion is usually an append, a lookup a binary search over a few
/// cache lines, and an erasure moves what follows it (a node allowing thousands of pods pays
/// microseconds of memmove per erasure).
template <class V>
class sorted_id_map {
 public:
  using value_type = std::pair<uint64_t, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  iterator begin() noexcept { return items_.begin(); }
  iterator end() noexcept { return items_.end(); }
  const_iterator begin() const noexcept { return items_.begin(); }
  const_iterator end() const noexcept { return items_.end(); }
  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  std::size_t capacity() const noexcept { return items_.capacity(); }
  void reserve(std::size_t n) { items_.reserve(n); }

  iterator find(uint64_t id) { return find_in(items_, id); }
  const_iterator find(uint64_t id) const { return find_in(items_, id); }
  std::size_t count(uint64_t id) const { return find(id) != end() ? 1 : 0; }

  /// Inserts unless `id` is present; true when it inserted.
  bool try_emplace(uint64_t id, V value) {
    auto i = lower_bound_in(items_, id);
    if (i != items_.end() && i->first == id)
      return false;
    emplace_at(i, id, std::move(value));
    return true;
  }
  void insert_or_assign(uint64_t id, V value) {
    auto i = lower_bound_in(items_, id);
    if (i != items_.end() && i->first == id)
      i->second = std::move(value);
    else
      emplace_at(i, id, std::move(value));
  }
  void erase(iterator i) {
    items_.erase(i);
    // A node emptied by a wave of completions gives most of its room back.
    if (items_.capacity() > 32 && items_.size() < items_.capacity() / 4)
      items_.shrink_to_fit();
  }

 private:
  template <class Items> // const or not
  static auto lower_bound_in(Items& items, uint64_t id) {
    // The newest pod is the likeliest to be added after the rest.
    if (items.empty() || items.back().first < id)
      return items.end();
    return std::lower_bound(items.begin(), items.end(), id,
                            [](const value_type& v, uint64_t key) { return v.first < key; });
  }
  template <class Items>
  static auto find_in(Items& items, uint64_t id) {
    auto i = lower_bound_in(items, id);
    return i != items.end() && i->first == id ? i : items.end();
  }
  // Grows by a quarter (at least 4 entries) where the vector would double: a node's pods come a
  // round at a time and stay, and doubling left about a third of 5,000 ledgers' room empty after
  // a restart's burst (docs/NOTES.md "Memory the daemon no longer keeps"). For a node's tens of
  // pods it reallocates about as often as doubling does.
  void emplace_at(iterator i, uint64_t id, V value) {
    if (items_.size() == items_.capacity()) {
      auto at = i - items_.begin();
      items_.reserve(items_.size() + items_.size() / 4 + 4);
      i = items_.begin() + at;
    }
    items_.emplace(i, id, std::move(value));
  }

  std::vector<value_type> items_;
};

/// The last `capacity` distinct values inserted, for "have I seen this lately". Allocates nothing
/// until the first insert: every node has a ledger, most nodes never abort or release early, and
/// the two std::deques this replaced cost 1.2 KB per node as soon as they were constructed.
template <class T, class Set>
class recent_values {
 public:
  explicit recent_values(std::size_t capacity) : capacity_(capacity) {}
  std::size_t count(const T& value) const { return set_.count(value); }
  std::size_t size() const noexcept { return set_.size(); }
  void insert(const T& value) {
    if (!set_.insert(value).second)
      return;
    if (order_.size() < capacity_) {
      order_.push_back(value);
      return;
    }
    // Full: the oldest value (at oldest_, the ring's start) makes room.
    set_.erase(order_[oldest_]);
    order_[oldest_] = value;
    oldest_ = (oldest_ + 1) % capacity_;
  }

 private:
  std::size_t capacity_;
  Set set_;
  std::vector<T> order_;  // Insertion order, a ring once it holds `capacity_` values.
  std::size_t oldest_ = 0;
};

template <class Ticket, class Payload = std::monostate>
class node_ledger {
 public:
  using item = hold_item<Payload>;

  explicit node_ledger(resources allocatable) : allocatable_(std::move(allocatable)) {}

  const resources& allocatable() const noexcept { return allocatable_; }
  const resources& committed() const noexcept { return committed_; }
  const resources& held() const noexcept { return held_; }
  /// allocatable - committed - held.
  resources free() const { return allocatable_ - committed_ - held_; }

  /// A starving gang's standing reservation of room here (room_reservation.hpp).
  struct room_reservation {
    uint64_t gang = 0;  // The owner, as in reserve(): the gang's coordinator id.
    resources amount;
  };
  /// Reserves `amount` here for `gang`, replacing its earlier reservation. False, changing
  /// nothing, while another gang holds the reservation: the first starving gang keeps it until
  /// it is placed, ends or gives it back.
  bool reserve_room(uint64_t gang, resources amount) {
    if (reservation_ && reservation_->gang != gang)
      return false;
    reservation_ = std::make_unique<room_reservation>(room_reservation{gang, std::move(amount)});
    return true;
  }
  /// Ends `gang`'s reservation; true when it held one.
  bool release_room(uint64_t gang) {
    if (!reservation_ || reservation_->gang != gang)
      return false;
    reservation_.reset();
    return true;
  }
  /// The gang holding the reservation, or 0.
  uint64_t room_reserved_for() const noexcept { return reservation_ ? reservation_->gang : 0; }
  /// What the reservation keeps from every other gang now (zero without one).
  resources withheld() const {
    return reservation_ ? withheld_room(free(), unheld_reservation()) : resources{};
  }
  /// What the cluster view publishes to every gang but the reserving one: free() - withheld().
  resources published_free() const {
    return reservation_ ? free() - withheld() : free();
  }

  std::size_t hold_count() const noexcept { return holds_.size(); }
  std::size_t waiter_count() const noexcept { return waiters_.size(); }
  std::size_t committed_pod_count() const noexcept { return bound_.size(); }
  bool is_held(const txn_id& txn) const { return holds_.count(txn) != 0; }
  bool is_waiting(const txn_id& txn) const { return waiter_index(txn) != waiters_.size(); }

  /// Changes allocatable (the node was updated). Committed usage stays; it may now exceed
  /// allocatable, which only makes later reserves fail.
  void set_allocatable(resources allocatable) { allocatable_ = std::move(allocatable); }

  /// Decides a reserve. `owner` identifies the coordinator, for abort_owner(). A reserve that
  /// would wait for younger holds (or older waiters) is refused as a conflict instead when
  /// `may_wait` is false: its coordinator would rather plan again at once than wait for those
  /// holds to commit (docs/NOTES.md "An older gang replans before it waits").
  vote_outcome reserve(const txn_id& txn, const Ticket& ticket, uint64_t owner,
                       std::vector<item> items, bool may_wait = true) {
    if (holds_.count(txn))
      return {vote_kind::reserved, {}};
    if (is_waiting(txn))
      return {vote_kind::waiting, {}};
    if (is_finished(txn))
      return {vote_kind::refused_conflict, {}}; // A late duplicate of a finished round.
    entry e{ticket, owner, std::move(items), {}, {}};
    for (const auto& i : e.items)
      e.total += i.request;
    auto outcome = decide(e);
    if (outcome.vote == vote_kind::waiting && !may_wait)
      outcome.vote = vote_kind::refused_conflict;
    if (outcome.vote == vote_kind::reserved) {
      held_ += e.total;
      holds_.emplace(txn, std::move(e));
    } else if (outcome.vote == vote_kind::waiting) {
      waiters_.push_back({txn, std::move(e)});
      sort_waiters();
    } else {
      remember_finished(txn);
    }
    return outcome;
  }

  /// Decides a preemptor's reserve (scheduler/preemption.hpp): `victims`, pods committed here
  /// that are being evicted for it, count as room for this reserve only. The hold is granted
  /// against allocatable - committed - held + claimed_room() + the victims' room (it keeps
  /// committed + held - claimed_room() within allocatable, I2), so until the victims are gone
  /// the node's free amount may be below zero: the room they free goes to nobody else. Victims
  /// already released count as free room; a victim claimed by another preemptor's hold makes it
  /// a conflict. A preemptor never waits (wait-die): it is refused and plans again instead.
  /// The hold commits only once every victim is released (victims_pending, take_cleared).
  vote_outcome reserve_evicting(const txn_id& txn, const Ticket& ticket, uint64_t owner,
                                std::vector<item> items, std::vector<uint64_t> victims) {
    if (holds_.count(txn))
      return {vote_kind::reserved, {}};
    if (is_finished(txn))
      return {vote_kind::refused_conflict, {}};
    entry e{ticket, owner, std::move(items), {}, {}};
    for (const auto& i : e.items)
      e.total += i.request;
    resources victims_room;
    for (auto id : victims) {
      if (claimed_victims_.count(id) != 0) {
        remember_finished(txn);
        return {vote_kind::refused_conflict, {}};
      }
      if (auto b = bound_.find(id); b != bound_.end()) {
        victims_room += b->second.requested();
        e.victims.push_back(id);
      }
    }
    // Room other preemptors' victims occupy for their holds is counted in committed and held
    // both: once is enough (claimed_room). This reserve's own victims make room for it alone.
    const resources after_usage = allocatable_ - committed_ + victims_room;
    vote_outcome outcome;
    if (fits(e.total, after_usage - held_ + claimed_room() - reserved_against(owner)))
      outcome.vote = vote_kind::reserved;
    else if (fits(e.total, after_usage))
      outcome.vote = vote_kind::refused_conflict;
    else
      outcome = {vote_kind::refused_insufficient,
                 shortfalls(e.total, after_usage.clamped_at_zero())};
    if (outcome.vote != vote_kind::reserved) {
      remember_finished(txn);
      return outcome;
    }
    for (auto id : e.victims)
      claimed_victims_.emplace(id, txn);
    if (e.victims.empty())
      cleared_.push_back({txn, owner});
    held_ += e.total;
    holds_.emplace(txn, std::move(e));
    return outcome;
  }

  /// The victims of a preemptor's hold not released yet (0 for any other transaction).
  std::size_t victims_pending(const txn_id& txn) const {
    auto i = holds_.find(txn);
    return i == holds_.end() ? 0 : i->second.victims.size();
  }
  /// Pods claimed as victims by some preemptor's hold (tests and invariant checks).
  std::size_t claimed_victim_count() const noexcept { return claimed_victims_.size(); }
  /// The room counted twice while victims go: per preemptor's hold, the part of it that its
  /// victims still occupy (per dimension, the smaller of the hold and their room). It is in
  /// `committed` (the victims) and in `held` (the hold) both, so committed + held -
  /// claimed_room() is what the node carries (invariant I2). Only the smaller counts: room a
  /// victim holds beyond its preemptor's need is no one else's until the victim is gone.
  resources claimed_room() const {
    resources room;
    for (const auto& [txn, e] : holds_) {
      if (e.victims.empty())
        continue;
      resources victims_room;
      for (auto id : e.victims)
        if (auto b = bound_.find(id); b != bound_.end())
          victims_room += b->second.requested();
      room += resources::min(e.total, victims_room);
    }
    return room;
  }

  /// The preemptors' holds whose last victim was released (or that had none left at their
  /// reserve) since the last call, with their owners: they may commit now.
  struct cleared {
    txn_id txn;
    uint64_t owner = 0;
  };
  std::vector<cleared> take_cleared() { return std::exchange(cleared_, {}); }

  /// Turns a hold into committed usage; returns the committed items (empty when the txn is not
  /// held: unknown, already committed or aborted).
  std::vector<item> commit(const txn_id& txn) {
    auto i = holds_.find(txn);
    // A preemptor's hold whose victims still occupy the room would commit more than the node
    // has: its coordinator commits only after take_cleared named it, so this is never asked.
    if (i == holds_.end() || !i->second.victims.empty())
      return {};
    held_ -= i->second.total;
    committed_ += i->second.total;
    // The gang the room was kept for has it now: its round commits only once it is ready.
    if (reservation_ && reservation_->gang == i->second.owner)
      reservation_.reset();
    std::vector<item> items = std::move(i->second.items);
    for (const auto& it : items)
      bound_.insert_or_assign(it.pod_id, committed_entry::of(it.request, it.payload));
    holds_.erase(i);
    remember_finished(txn);
    return items;
  }

  /// Drops a hold or a waiting reserve. Returns true when something was dropped.
  bool abort(const txn_id& txn) {
    remember_finished(txn);
    if (auto i = holds_.find(txn); i != holds_.end()) {
      // Its claim on the victims ends: the room they free when they go is anyone's.
      for (auto id : i->second.victims)
        claimed_victims_.erase(id);
      held_ -= i->second.total;
      holds_.erase(i);
      return true;
    }
    auto w = waiter_index(txn);
    if (w != waiters_.size()) {
      waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(w));
      return true;
    }
    return false;
  }

  /// Forgets `gang`'s finished rounds: its coordinator ended, so nothing more comes from it, or
  /// a new one took over (a parked gang's new actor, which counts its rounds from 1 again).
  void forget_finished(uint64_t gang) {
    if (auto i = finished_.find(gang); i != finished_.end())
      finished_.erase(i);
  }
  /// Gangs with finished rounds remembered (tests).
  std::size_t remembered_gang_count() const noexcept { return finished_.size(); }

  /// Drops every hold, waiting reserve and room reservation of a coordinator that died. Returns
  /// how many.
  std::size_t abort_owner(uint64_t owner) {
    std::vector<txn_id> doomed;
    for (const auto& [txn, e] : holds_)
      if (e.owner == owner)
        doomed.push_back(txn);
    for (const auto& w : waiters_)
      if (w.second.owner == owner)
        doomed.push_back(w.first);
    for (const auto& txn : doomed)
      abort(txn);
    return doomed.size() + (release_room(owner) ? 1 : 0);
  }

  /// Makes room for `n` committed pods at once (restart: a node's persisted bindings), instead of
  /// growing step by step and leaving the smaller blocks behind.
  void reserve_committed(std::size_t n) { bound_.reserve(n); }

  /// Adds committed usage directly (restart: persisted bindings). Idempotent per pod.
  void adopt(uint64_t pod_id, const resources& request, const Payload& payload = {}) {
    if (bound_.try_emplace(pod_id, committed_entry::of(request, payload)))
      committed_ += request;
  }

  /// Returns a finished or deleted pod's resources, whether committed or only held: a pod deleted
  /// while its gang commits must not stay charged once the commit arrives. False when the pod is
  /// neither bound nor held here.
  bool release(uint64_t pod_id) {
    if (auto i = bound_.find(pod_id); i != bound_.end()) {
      committed_ -= i->second.requested();
      bound_.erase(i);
      if (auto c = claimed_victims_.find(pod_id); c != claimed_victims_.end()) {
        auto h = holds_.find(c->second);
        claimed_victims_.erase(c);
        if (h != holds_.end() && std::erase(h->second.victims, pod_id) > 0 &&
            h->second.victims.empty())
          cleared_.push_back({h->first, h->second.owner});
      }
      return true;
    }
    for (auto& [txn, e] : holds_) {
      auto it = std::find_if(e.items.begin(), e.items.end(),
                             [&](const item& x) { return x.pod_id == pod_id; });
      if (it == e.items.end())
        continue;
      held_ -= it->request;
      e.total -= it->request;
      e.items.erase(it);
      return true;
    }
    remember_released(pod_id);
    return false;
  }

  enum class replace_outcome {
    replaced,   // The pod holds the placeholder's room now (also for a repeat).
    pod_gone,   // The pod was released here before it came (deleted meanwhile): the placeholder
                // is released too, and the pod is not committed.
    refused,    // Nothing changed: the placeholder is not committed here, or the pod is larger
                // than the placeholder and the difference is not free.
  };

  /// A committed placeholder's room goes to the pod that takes it over (placeholders.hpp): the
  /// placeholder is released and `pod_id` committed with `request`, in one step, so nothing else
  /// can take the room in between.
  replace_outcome replace(uint64_t placeholder, uint64_t pod_id, const resources& request,
                          const Payload& payload = {}) {
    auto ph = bound_.find(placeholder);
    if (ph == bound_.end())
      return bound_.count(pod_id) != 0 ? replace_outcome::replaced : replace_outcome::refused;
    if (bound_.count(pod_id) != 0)
      return replace_outcome::refused;
    const resources room = ph->second.requested();
    if (released_.count(pod_id) != 0) {
      committed_ -= room;
      bound_.erase(ph);
      return replace_outcome::pod_gone;
    }
    // Within the placeholder's room it always fits (even if allocatable shrank meanwhile: usage
    // does not grow); beyond it, the difference must be free.
    if (!fits(request, room) && !fits(request, allocatable_ - committed_ - held_ + room))
      return replace_outcome::refused;
    committed_ -= room;
    committed_ += request;
    bound_.erase(ph);
    bound_.insert_or_assign(pod_id, committed_entry::of(request, payload));
    return replace_outcome::replaced;
  }

  bool is_bound(uint64_t pod_id) const { return bound_.count(pod_id) != 0; }

  /// The committed pods, sorted (tests and invariant checks).
  std::vector<uint64_t> bound_pod_ids() const {
    std::vector<uint64_t> out;
    out.reserve(bound_.size());
    for (const auto& [id, r] : bound_)
      out.push_back(id);
    std::sort(out.begin(), out.end());
    return out;
  }

  /// Re-decides waiting reserves, oldest first, after holds or usage changed. Returns the
  /// waiters that are decided now (no longer `waiting`), with their owners, in decision order.
  struct decided {
    txn_id txn;
    uint64_t owner = 0;
    vote_outcome outcome;
  };
  std::vector<decided> recheck_waiters() {
    std::vector<decided> out;
    for (std::size_t i = 0; i < waiters_.size();) {
      auto outcome = decide(waiters_[i].second, i);
      if (outcome.vote == vote_kind::waiting) {
        ++i;
        continue;
      }
      auto [txn, e] = std::move(waiters_[i]);
      waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      out.push_back({txn, e.owner, outcome});
      if (outcome.vote == vote_kind::reserved) {
        held_ += e.total;
        holds_.emplace(txn, std::move(e));
      } else {
        remember_finished(txn);
      }
    }
    return out;
  }

 private:
  struct entry {
    Ticket ticket;
    uint64_t owner = 0;
    std::vector<item> items;
    resources total;
    /// A preemptor's hold: the victims still committed here (reserve_evicting).
    std::vector<uint64_t> victims;
  };

  // Decides `e`. `self_waiter` is e's own position among the waiters (so it does not count
  // against itself), or waiters_.size() for a new request.
  vote_outcome decide(const entry& e, std::size_t self_waiter = SIZE_MAX) const {
    resources older_holds;
    for (const auto& [txn, h] : holds_)
      if (h.ticket < e.ticket)
        older_holds += h.total;
    resources older_waiting;
    for (std::size_t i = 0; i < waiters_.size(); ++i)
      if (i != self_waiter && waiters_[i].second.ticket < e.ticket)
        older_waiting += waiters_[i].second.total;

    const resources after_usage = allocatable_ - committed_;
    // Another gang's reservation: its room is not this reserve's, though it is not used yet.
    // Where younger holds are counted gone, so are the reserving gang's younger holds, and the
    // reservation then keeps its whole amount less only what the gang holds of the older ones.
    resources room = after_usage - held_ - older_waiting;
    if (reservation_)
      room -= reserved_against(e.owner);
    if (fits(e.total, room))
      return {vote_kind::reserved, {}};
    room = after_usage - older_holds - older_waiting;
    if (reservation_)
      room -= reserved_against(e.owner, &e.ticket);
    if (fits(e.total, room))
      return {vote_kind::waiting, {}};
    if (fits(e.total, after_usage))
      return {vote_kind::refused_conflict, {}};
    return {vote_kind::refused_insufficient, shortfalls(e.total, after_usage.clamped_at_zero())};
  }

  // The room a reservation of another gang than `gang` keeps from it (zero when none). With
  // `older_than`, only the reserving gang's holds older than that ticket count as its own room
  // taken (decide's "if younger holds were gone").
  resources reserved_against(uint64_t gang, const Ticket* older_than = nullptr) const {
    return reservation_ && reservation_->gang != gang ? unheld_reservation(older_than)
                                                      : resources{};
  }
  // The reservation less what its gang holds here already (only its holds older than
  // `older_than`, when given): that part is in held_. Precondition: a reservation exists.
  resources unheld_reservation(const Ticket* older_than = nullptr) const {
    resources own;
    for (const auto& [txn, h] : holds_)
      if (h.owner == reservation_->gang && (!older_than || h.ticket < *older_than))
        own += h.total;
    return own.is_zero() ? reservation_->amount : (reservation_->amount - own).clamped_at_zero();
  }

  std::size_t waiter_index(const txn_id& txn) const {
    for (std::size_t i = 0; i < waiters_.size(); ++i)
      if (waiters_[i].first == txn)
        return i;
    return waiters_.size();
  }

  void sort_waiters() {
    std::stable_sort(waiters_.begin(), waiters_.end(),
                     [](const auto& a, const auto& b) { return a.second.ticket < b.second.ticket; });
  }

  // Remembers that a round finished here (committed, aborted, refused), so that a reserve of it
  // that comes later (a duplicate, or one an abort overtook) cannot resurrect it. One coordinator's
  // rounds are numbered in the order it starts them and its messages arrive in the order sent,
  // so a reserve arriving after a later round of its gang finished here is late too: the highest
  // finished round per gang is all there is to keep, until forget_finished.
  void remember_finished(const txn_id& txn) {
    if (auto i = finished_.find(txn.gang); i != finished_.end())
      i->second = std::max(i->second, txn.round);
    else
      finished_.try_emplace(txn.gang, txn.round);
  }
  bool is_finished(const txn_id& txn) const {
    auto i = finished_.find(txn.gang);
    return i != finished_.end() && txn.round <= i->second;
  }

  // Pods released before anything of theirs arrived here: a pod deleted while it was on its way
  // to take over a placeholder (its release and its swap cross) must not be committed after.
  // Pod ids are never reused, so remembering the recent ones is enough.
  void remember_released(uint64_t pod_id) { released_.insert(pod_id); }

  static constexpr std::size_t released_memory = 4096;

  resources allocatable_;
  resources committed_;
  resources held_;
  std::unordered_map<txn_id, entry, txn_id_hash> holds_;
  std::vector<std::pair<txn_id, entry>> waiters_;  // Sorted by ticket, oldest first.
  using committed_entry = committed_pod<Payload>;
  sorted_id_map<committed_entry> bound_; // Committed pods.
  // The highest finished round of each gang (remember_finished): 16 bytes per gang whose
  // coordinator lives. It replaced the last 1,024 finished transactions of any gang, which every
  // node filled in a long-running cluster (64 KB per node, 330 MB for 5,000 nodes) and which
  // forgot a round after 1,024 others.
  sorted_id_map<uint32_t> finished_;
  recent_values<uint64_t, std::unordered_set<uint64_t>> released_{released_memory};
  /// Victim pod -> the preemptor's hold that its room goes to (reserve_evicting).
  std::unordered_map<uint64_t, txn_id> claimed_victims_;
  std::vector<cleared> cleared_;
  /// A starving gang's reservation; a pointer, since few nodes ever have one.
  std::unique_ptr<room_reservation> reservation_;
};

} // namespace phalanx::scheduler
