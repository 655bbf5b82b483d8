#pragma once

// The queue book (issue 28 section 1): one queue's gangs as both engines keep them, and the
// queue's sums. The queue actor wraps one (actors/queue_actor.cpp) and the trace simulation
// keeps one per queue (scheduler/simulation.cpp), so the bookkeeping `phalanx-loadtest replay`
// measures is the one phalanxd runs:
// - waiting: the gangs the enqueue gate has not admitted, in gang order;
// - admitted: those that passed it and wait for a planning slot, in gang order, gangs short of
//   their minimum before gangs waiting for an elastic round (Volcano's gang order);
// - allocated: what the queue's gangs hold, each gang's part kept, so that a gang forgotten
//   takes away exactly its part;
// - claims: what admitted gangs still claim at the gate (scheduler::gate_claim), summed as the
//   queue's inqueue amount. A change that moves a gang's claim returns the claim before and
//   after, for the cluster-wide sum its caller keeps (the cluster actor's, the simulation's);
// - demand: what the gangs' pending pods ask for.
// Whether a gang has started (held its minMember since its admission) is decided here too: its
// claim depends on it.
//
// What each engine decides for itself: when to ask the gate, when a gang gets a planning slot
// (the actor bounds how many plan at once and wakes gangs asleep ahead of the next; the
// simulation walks the order once per pass), and what a gang's pods are.
//
// A value type; not thread-safe. `GroupRef` is how an entry refers to its PodGroup (the
// actor's shared pointer keeps it alive; the simulation's plain pointer points into its job).
// `Extra` is what an engine keeps beside each gang (the actor's handle, whether it sleeps...);
// the book never reads it.

#include "scheduler/enqueue_gate.hpp"
#include "scheduler/model.hpp"
#include "scheduler/order.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

namespace phalanx::scheduler {

/// How a gang's claim at the gate moved with one change of the book.
struct claim_change {
  resources before;
  resources after;
  bool changed() const noexcept { return before != after; }
};

/// What a gang's members took or gave back since its last change.
struct usage_change {
  resources added;
  resources removed;
  int64_t pods_added = 0;    // Members that began to hold resources.
  int64_t pods_removed = 0;  // Members that stopped.
  /// `added` and `pods_added` are all the gang holds: they replace what the book counted (an
  /// actor started from a gang's bound pods counts them afresh).
  bool whole = false;
};

/// A gang's place in its queue's order.
struct queue_order_key {
  const pod_group* group;
  uint64_t gang;
  bool elastic = false;  // It runs its minimum and waits for an elastic round.
};

/// Gangs short of their minimum before elastic rounds, then compare_gangs, then the gang's id.
struct queue_order_less {
  bool operator()(const queue_order_key& a, const queue_order_key& b) const noexcept;
};

using queue_order = std::set<queue_order_key, queue_order_less>;

struct no_extra {};

template <class GroupRef, class Extra = no_extra>
class queue_book {
public:
  struct gang {
    GroupRef group{};  // Null while the gang is known only from its usage.
    bool admitted = false;
    /// It held its minMember pods since it was admitted (Volcano's PodGroup went Running).
    bool started = false;
    /// It runs its minimum: it waits for an elastic round.
    bool ready = false;
    /// Its last plan found that no node could ever hold a member, and it held nothing: it gave
    /// its admission back, and the gate skips it until the nodes change.
    bool unresolvable = false;
    int64_t holding = 0;  // Members holding resources.
    resources allocated;
    resources demand;  // What its pending pods ask for.
    Extra extra{};
  };

  /// Only `extra` is the caller's to change.
  gang* find(uint64_t id) {
    auto i = gangs_.find(id);
    return i == gangs_.end() ? nullptr : &i->second;
  }
  const gang* find(uint64_t id) const {
    auto i = gangs_.find(id);
    return i == gangs_.end() ? nullptr : &i->second;
  }
  /// Every gang, in no order; only their `extra` is the caller's to change.
  auto& gangs() noexcept { return gangs_; }
  const auto& gangs() const noexcept { return gangs_; }

  const queue_order& to_admit() const noexcept { return to_admit_; }
  const queue_order& to_plan() const noexcept { return to_plan_; }

  const resources& allocated() const noexcept { return allocated_; }
  const resources& inqueue() const noexcept { return inqueue_; }
  const resources& demand() const noexcept { return demand_; }

  static queue_order_key key_of(const gang& g, uint64_t id) noexcept {
    return {std::to_address(g.group), id, g.ready};
  }

  /// What gang `g` claims at the gate now: gate_claim while admitted, nothing otherwise.
  static resources claim_of(const gang& g) {
    if (!g.admitted || !g.group)
      return {};
    return gate_claim(*g.group, g.started, g.holding, g.allocated);
  }

  /// Gang `id` waits, with its PodGroup as it is now and the demand of its pending pods: for
  /// the gate, or for a slot when `admitted` (restored after a restart, or an elastic round of
  /// a running gang); `ready` when it runs its minimum. `members_joined`: new pods came, so a
  /// gang set aside as unresolvable is planned again before it is set aside again.
  claim_change file(uint64_t id, GroupRef group, resources demand, bool admitted, bool ready,
                    bool members_joined = false) {
    auto [i, fresh] = gangs_.try_emplace(id);
    auto& g = i->second;
    if (!fresh)
      leave_order(id, g);
    claim_change out{claim_of(g), {}};
    g.group = std::move(group);
    set_demand(g, std::move(demand));
    if (members_joined)
      g.unresolvable = false;
    if (admitted)
      g.admitted = true;
    g.ready = ready;
    note_started(g, ready);
    out.after = claim_of(g);
    move_claim(out);
    enter_order(id, g);
    return out;
  }

  /// The gate admitted waiting gang `id`: it waits for a slot now, and claims its minResources
  /// (less what it holds). Nothing for a gang unknown or admitted already.
  claim_change admit(uint64_t id) {
    auto* g = find(id);
    if (g == nullptr || g->admitted || !g->group)
      return {};
    to_admit_.erase(key_of(*g, id));
    g->admitted = true;
    claim_change out{{}, claim_of(*g)};
    move_claim(out);
    to_plan_.insert(key_of(*g, id));
    return out;
  }

  /// Gang `id`'s members took or gave back resources. A gang's first change adds, or is whole:
  /// a change that only removes from a gang the book does not know comes from one forgotten
  /// since (its last usage overtaken by its removal), and is ignored (nullopt). A gang first
  /// known so has no PodGroup until it is filed, and waits nowhere.
  std::optional<claim_change> use(uint64_t id, const usage_change& u) {
    if (u.added.is_zero() && u.pods_added == 0 && gangs_.count(id) == 0)
      return std::nullopt;
    auto& g = gangs_[id];
    claim_change out{claim_of(g), {}};
    if (u.whole) {
      allocated_ -= g.allocated;
      g.allocated = {};
      g.holding = 0;
    }
    allocated_ += u.added;
    allocated_ -= u.removed;
    g.allocated += u.added;
    g.allocated -= u.removed;
    g.holding += u.pods_added - u.pods_removed;
    note_started(g);
    set_demand(g, (g.demand - u.added).clamped_at_zero());
    out.after = claim_of(g);
    move_claim(out);
    return out;
  }

  /// What gang `id`'s pending pods ask for now.
  void set_demand(uint64_t id, resources demand) {
    if (auto* g = find(id))
      set_demand(*g, std::move(demand));
  }

  /// Gang `id`'s plan found that no node could ever hold a member: if it holds nothing it
  /// gives its admission back (its claim ends) until the nodes change; nullopt if it does not.
  std::optional<claim_change> set_aside(uint64_t id) {
    auto* g = find(id);
    if (g == nullptr || !g->admitted || !g->allocated.is_zero())
      return std::nullopt;
    leave_order(id, *g);
    claim_change out{claim_of(*g), {}};
    g->admitted = false;
    g->started = false;
    g->unresolvable = true;
    move_claim(out);
    return out;
  }

  /// The nodes changed: every gang set aside may fit now.
  void nodes_changed() noexcept {
    for (auto& [id, g] : gangs_)
      g.unresolvable = false;
  }

  /// Gang `id` lost every member and starts from scratch with its admission kept (a restarted
  /// job's gang in the simulation): it claims its whole minimum again. It waits again once the
  /// caller files it back (wait_again).
  claim_change start_over(uint64_t id) {
    auto* g = find(id);
    if (g == nullptr)
      return {};
    claim_change out{claim_of(*g), {}};
    g->started = false;
    out.after = claim_of(*g);
    move_claim(out);
    return out;
  }

  /// Gang `id` leaves the order: it got a planning slot, or it started.
  void stop_waiting(uint64_t id) {
    if (auto* g = find(id))
      leave_order(id, *g);
  }
  /// Gang `id` waits again where its admission puts it.
  void wait_again(uint64_t id) {
    if (auto* g = find(id))
      enter_order(id, *g);
  }

  /// Gang `id` is gone: what it held, asked for and claimed leaves the queue's sums.
  claim_change forget(uint64_t id) {
    auto i = gangs_.find(id);
    if (i == gangs_.end())
      return {};
    auto& g = i->second;
    leave_order(id, g);
    allocated_ -= g.allocated;
    demand_ -= g.demand;
    claim_change out{claim_of(g), {}};
    move_claim(out);
    gangs_.erase(i);
    return out;
  }

private:
  // An admitted gang has started once it holds its minMember members, or once its engine says
  // it runs its minimum (`ready`: after a restart, its members that succeeded counted, as a
  // PodGroup stays Running in Volcano). It stays started until it is set aside or starts over.
  void note_started(gang& g, bool ready = false) {
    if (g.admitted && g.group && (ready || g.holding >= g.group->min_member))
      g.started = true;
  }
  void set_demand(gang& g, resources demand) {
    demand_ -= g.demand;
    demand_ += demand;
    g.demand = std::move(demand);
  }
  void move_claim(const claim_change& c) {
    if (!c.changed())
      return;
    inqueue_ -= c.before;
    inqueue_ += c.after;
  }
  void enter_order(uint64_t id, const gang& g) {
    if (g.group)
      (g.admitted ? to_plan_ : to_admit_).insert(key_of(g, id));
  }
  void leave_order(uint64_t id, const gang& g) {
    if (!g.group)
      return;  // A gang known only from its usage never waited.
    to_admit_.erase(key_of(g, id));
    to_plan_.erase(key_of(g, id));
  }

  std::unordered_map<uint64_t, gang> gangs_;
  queue_order to_admit_;
  queue_order to_plan_;
  resources allocated_;
  resources inqueue_;
  resources demand_;
};

} // namespace phalanx::scheduler
