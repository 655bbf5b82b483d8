#include "actors/queue_actor.hpp"

#include "scheduler/fair_share.hpp"
#include "scheduler/order.hpp"
#include "scheduler/quantity.hpp"

#include <caf/all.hpp>

#include <algorithm>

namespace phalanx::actors {

bool queue_actor_state::order_less::operator()(const order_key& a,
                                               const order_key& b) const noexcept {
  auto c = scheduler::compare_gangs(*a.group, *b.group);
  if (c != 0)
    return c < 0;
  return a.gang < b.gang;
}

namespace {

using self_ptr = queue_actor::stateful_pointer<queue_actor_state>;
using book = queue_actor_state::gang_book;

bool is_open(const queue_actor_state& st) {
  return st.spec->state == scheduler::queue_state::open;
}

// Volcano's "overused": the queue holds at least its deserved share in every dimension it
// deserves. An overused queue starts nothing new until its share drops.
bool overused(const queue_actor_state& st) {
  if (!st.deserved_known || st.deserved.is_zero())
    return false;
  return scheduler::fits(st.deserved, st.allocated);
}

constexpr std::array<std::string_view, 4> standard_resources = {
    scheduler::cpu_resource, scheduler::memory_resource, scheduler::ephemeral_storage_resource,
    scheduler::pods_resource};

void publish_gauges(self_ptr self) {
  auto& st = self->state;
  auto& m = *st.ctx->metrics;
  const auto& name = st.spec->meta.name;
  auto& g = st.gauge;
  if (g.pending_gangs == nullptr) {
    g.pending_gangs = &m.pending_gangs.with({name});
    for (std::size_t i = 0; i < standard_resources.size(); ++i) {
      g.allocated[i] = &m.queue_allocated.with({name, standard_resources[i]});
      g.deserved[i] = &m.queue_deserved.with({name, standard_resources[i]});
    }
  }
  g.pending_gangs->set(double(st.to_admit.size() + st.ready.size()));
  auto put = [&](api::metric_family<api::gauge>& family, const std::array<api::gauge*, 4>& standard,
                 std::vector<std::pair<scheduler::resource_name, api::gauge*>>& extended,
                 const scheduler::resources& r) {
    for (std::size_t i = 0; i < standard_resources.size(); ++i) {
      double v = double(r.get(standard_resources[i]));
      if (standard_resources[i] == scheduler::cpu_resource)
        v /= 1000.0;  // Cores, as Prometheus users read cpu.
      standard[i]->set(v);
    }
    // A label lookup takes the metrics registry's mutex: once per queue and resource. A resource
    // seen once keeps its gauge, which reads 0 when the amount is gone (resources drop zeros).
    for (const auto& e : r.extended())
      if (std::none_of(extended.begin(), extended.end(),
                       [&](const auto& x) { return x.first == e.name; }))
        extended.emplace_back(e.name, &family.with({name, std::string(e.name.str())}));
    for (const auto& [resource, gauge] : extended)
      gauge->set(double(r.get(resource)));
  };
  put(m.queue_allocated, g.allocated, g.extended_allocated, st.allocated);
  put(m.queue_deserved, g.deserved, g.extended_deserved, st.deserved);
}

void report_usage(self_ptr self) {
  auto& st = self->state;
  self->send(st.cluster, usage_atom::value, st.spec->meta.name.str(), st.allocated,
             st.allocated + st.demand);
  publish_gauges(self);
}

void set_demand(queue_actor_state& st, book& b, scheduler::resources demand) {
  st.demand -= b.demand;
  st.demand += demand;
  b.demand = std::move(demand);
}

// The part of its minResources an admitted gang still claims from the queue; nothing when not
// admitted (or known only from its usage, without a PodGroup).
scheduler::resources claim_of(const book& b) {
  if (!b.admitted || !b.group)
    return {};
  return (b.group->min_resources - b.allocated).clamped_at_zero();
}

// After a change to what the gang's claim derives from: the queue's inqueue sum counted
// `counted` for it and the cluster actor recorded `told`; both move to the claim now.
void sync_claim(self_ptr self, uint64_t gang, const book& b, const scheduler::resources& counted,
                const scheduler::resources& told) {
  auto& st = self->state;
  auto now = claim_of(b);
  if (now != counted) {
    st.inqueue -= counted;
    st.inqueue += now;
  }
  if (now != told)
    self->send(st.cluster, claim_atom::value, gang, st.spec->meta.name.str(), now);
}

// The same when both knew the claim as it was before the change: `before` (claim_of then).
void sync_claim(self_ptr self, uint64_t gang, const book& b, const scheduler::resources& before) {
  sync_claim(self, gang, b, before, before);
}

void fall_asleep(queue_actor_state& st, uint64_t gang, book& b) {
  if (b.sleeping)
    return;
  b.sleeping = true;
  if (!st.woken_for_order.count(gang))
    st.asleep.insert({b.group.get(), gang});
}

void stop_sleeping(queue_actor_state& st, uint64_t gang, book& b) {
  if (!b.sleeping)
    return;
  b.sleeping = false;
  st.asleep.erase({b.group.get(), gang});
}

// Wakes a sleeping gang; the queue holds its gate and slots until it answers (`waking`).
void wake(self_ptr self, uint64_t gang, book& b) {
  auto& st = self->state;
  stop_sleeping(st, gang, b);
  if (!b.handle)
    return;
  if (st.waking.empty())  // Each woken gang answers at once; the limit only covers one that
                          // ended meanwhile without its removal reaching this queue yet.
    self->delayed_send(self, std::chrono::milliseconds(100), woken_atom::value, uint64_t{0});
  st.waking.insert(gang);
  self->send(b.handle, wake_atom::value);
}

// Wakes the gangs asleep ahead of `next` in the order (each at most once until a slot goes to a
// gang behind it, `woken_for_order`). True if any.
bool wake_ahead_of(self_ptr self, const queue_actor_state::order_key& next) {
  auto& st = self->state;
  bool woke = false;
  while (!st.asleep.empty() && st.asleep.key_comp()(*st.asleep.begin(), next)) {
    auto gang = st.asleep.begin()->gang;
    st.woken_for_order.insert(gang);
    wake(self, gang, st.gangs.at(gang));
    woke = true;
  }
  return woke;
}

void dispatch(self_ptr self) {
  auto& st = self->state;
  if (!is_open(st) || !st.waking.empty())
    return;
  auto limit = static_cast<std::size_t>(std::max(1, st.ctx->config.scheduling.max_planning_per_queue));
  while (st.planning.size() < limit && !st.ready.empty()) {
    if (overused(st))
      break;
    if (wake_ahead_of(self, *st.ready.begin()))
      break;  // They answer first, and come before it if they wait again.
    auto key = *st.ready.begin();
    st.ready.erase(st.ready.begin());
    auto i = st.gangs.find(key.gang);
    if (i == st.gangs.end())
      continue;
    st.planning.insert(key.gang);
    // A slot went to a gang behind the ones woken for it (not to one of them): the next gang
    // that asks may wake them again.
    if (!st.woken_for_order.empty() && !st.woken_for_order.count(key.gang)) {
      for (auto gang : st.woken_for_order)
        if (auto w = st.gangs.find(gang); w != st.gangs.end() && w->second.sleeping)
          st.asleep.insert({w->second.group.get(), gang});
      st.woken_for_order.clear();
    }
    auto share = scheduler::queue_share(st.allocated, st.deserved);
    self->send(i->second.handle, plan_atom::value, share);
  }
  publish_gauges(self);
}

void admit_locally(self_ptr self, uint64_t gang, book& b) {
  auto& st = self->state;
  b.admitted = true;
  st.to_admit.erase({b.group.get(), gang});
  st.ready.insert({b.group.get(), gang});
  self->send(b.handle, admission_atom::value, admission{gang, true, {}});
}

void try_admit(self_ptr self) {
  auto& st = self->state;
  if (!is_open(st)) {
    // Its gangs say why they wait, once each (the gate says so of gangs it sees; a gang with no
    // minResources never goes to the gate).
    const auto because = st.spec->meta.annotations.find(effective_closed_reason_key);
    const std::string why = "queue \"" + st.spec->meta.name.str() +
                            "\" admits no new PodGroups now: " +
                            (because ? std::string(*because) : "it is Closed");
    for (const auto& key : st.to_admit)
      if (st.told_not_open.insert(key.gang).second)
        if (auto b = st.gangs.find(key.gang); b != st.gangs.end())
          self->send(b->second.handle, admission_atom::value, admission{key.gang, false, why});
    return;
  }
  if (st.admitting || !st.waking.empty())
    return;
  for (auto it = st.to_admit.begin(); it != st.to_admit.end();) {
    auto gang = it->gang;
    ++it;  // admit_locally may erase the current element.
    if (st.refused_since_wake.count(gang))
      continue;
    auto& b = st.gangs.at(gang);
    if (b.unresolvable)
      continue;
    // Without gang scheduling there is no gate (the default scheduler has none); a gang without
    // minResources passes the gate as soon as its queue is open.
    if (!st.ctx->config.scheduling.gang_scheduling || b.group->min_resources.is_zero()) {
      admit_locally(self, gang, b);
      continue;
    }
    st.admitting = true;
    admit_request req;
    req.gang = gang;
    req.queue = st.spec->meta.name;
    req.group = b.group;
    self->send(st.cluster, admit_atom::value, std::move(req), queue_actor_fwd{self});
    return;
  }
}

void forget(self_ptr self, uint64_t gang) {
  auto& st = self->state;
  auto i = st.gangs.find(gang);
  if (i == st.gangs.end())
    return;
  auto& b = i->second;
  if (b.group) {  // A gang known only from its usage never waited in the order sets.
    st.to_admit.erase({b.group.get(), gang});
    st.ready.erase({b.group.get(), gang});
    stop_sleeping(st, gang, b);
  }
  st.woken_for_order.erase(gang);
  st.told_not_open.erase(gang);
  st.planning.erase(gang);
  st.refused_since_wake.erase(gang);
  st.allocated -= b.allocated;
  set_demand(st, b, {});
  auto claim = claim_of(b);
  b.admitted = false;
  sync_claim(self, gang, b, claim);
  st.gangs.erase(i);
}

} // namespace

queue_actor::behavior_type queue_actor_impl(self_ptr self, context_ptr ctx, queue_ptr spec,
                                            cluster_actor cluster) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.spec = std::move(spec);
  st.cluster = std::move(cluster);
  publish_gauges(self);
  return {
    [self](admission_atom, admission& a) {
      auto& st = self->state;
      st.admitting = false;
      auto i = st.gangs.find(a.gang);
      if (i != st.gangs.end() && !i->second.admitted) {
        auto& b = i->second;
        if (a.admitted) {
          admit_locally(self, a.gang, b);
          // Nothing was counted for it yet; the cluster actor recorded the whole minResources
          // as the claim, to be told if part of it is allocated already.
          sync_claim(self, a.gang, b, {}, b.group->min_resources);
        } else {
          st.refused_since_wake.insert(a.gang);
          self->send(b.handle, admission_atom::value, std::move(a));
        }
      }
      try_admit(self);
      dispatch(self);
    },
    [self](deserved_atom, scheduler::resources deserved) {
      auto& st = self->state;
      st.deserved = std::move(deserved);
      st.deserved_known = true;
      dispatch(self);
    },
    [self](waiting_atom, gang_entry& e, gang_actor& handle) {
      auto& st = self->state;
      st.waking.erase(e.gang);
      auto [i, fresh] = st.gangs.try_emplace(e.gang);
      auto& b = i->second;
      if (!fresh && b.group) {
        st.to_admit.erase({b.group.get(), e.gang});
        st.ready.erase({b.group.get(), e.gang});
        stop_sleeping(st, e.gang, b);
      }
      // Its claim follows the PodGroup as it is now (its minResources may have changed).
      auto claim = claim_of(b);
      b.group = std::move(e.group);
      b.handle = std::move(handle);
      set_demand(st, b, std::move(e.demand));
      if (e.members_joined)
        b.unresolvable = false;  // Planned again with its new pods before it is set aside.
      if (e.admitted)
        b.admitted = true;  // Restored after a restart, or an elastic round of a running gang.
      sync_claim(self, e.gang, b, claim);
      if (b.admitted)
        st.ready.insert({b.group.get(), e.gang});
      else
        st.to_admit.insert({b.group.get(), e.gang});
      report_usage(self);
      try_admit(self);
      dispatch(self);
    },
    [self](planned_atom, uint64_t gang, plan_outcome outcome) {
      auto& st = self->state;
      st.planning.erase(gang);
      if (auto i = st.gangs.find(gang); i != st.gangs.end()) {
        auto& b = i->second;
        if (outcome == plan_outcome::unschedulable || outcome == plan_outcome::refused ||
            outcome == plan_outcome::unresolvable)
          fall_asleep(st, gang, b);
        else
          stop_sleeping(st, gang, b);
        // As its gang actor does (on_plan_failure): a gang that can never run here and holds
        // nothing leaves the enqueue budget until the nodes change.
        if (outcome == plan_outcome::unresolvable && b.admitted && b.allocated.is_zero()) {
          auto claim = claim_of(b);
          b.admitted = false;
          b.unresolvable = true;
          sync_claim(self, gang, b, claim);
          try_admit(self);
        }
      }
      dispatch(self);
    },
    [self](capacity_atom) {
      // Nodes were added, resized or changed: a gang that could not fit any may fit now.
      auto& st = self->state;
      for (auto& [id, b] : st.gangs)
        b.unresolvable = false;
      try_admit(self);
      dispatch(self);
    },
    [self](usage_atom, usage_delta& d) {
      auto& st = self->state;
      // A gang's usage may arrive before it ever waited here (a gang restored with bound pods):
      // keep it per gang from the first delta on, or forgetting the gang would undo it wrongly.
      auto& b = st.gangs[d.gang];
      auto claim = claim_of(b);
      if (d.whole) {  // A gang actor started from its pods: its count replaces ours.
        st.allocated -= b.allocated;
        b.allocated = {};
      }
      st.allocated += d.added;
      st.allocated -= d.removed;
      b.allocated += d.added;
      b.allocated -= d.removed;
      set_demand(st, b, (b.demand - d.added).clamped_at_zero());
      sync_claim(self, d.gang, b, claim);
      report_usage(self);
      dispatch(self);
    },
    [self](park_atom, uint64_t gang) {
      // Its actor is ending: drop the handle (it would keep the ended actor's memory), keep the
      // allocation, which is still in use.
      auto& st = self->state;
      if (auto i = st.gangs.find(gang); i != st.gangs.end()) {
        i->second.handle = nullptr;
        if (i->second.group)
          stop_sleeping(st, gang, i->second);
      }
      if (self->state.waking.erase(gang) != 0) {
        try_admit(self);
        dispatch(self);
      }
    },
    [self](removed_atom, uint64_t gang) {
      self->state.waking.erase(gang);
      forget(self, gang);
      report_usage(self);
      try_admit(self);
      dispatch(self);
    },
    [self](spec_atom, queue_ptr spec) {
      auto& st = self->state;
      st.spec = std::move(spec);
      st.told_not_open.clear();
      self->send(st.cluster, spec_atom::value, st.spec, queue_actor_fwd{self});
      try_admit(self);
      dispatch(self);
    },
    [self](wake_atom) {
      auto& st = self->state;
      st.refused_since_wake.clear();
      st.woken_for_order.clear();
      for (auto& [id, b] : st.gangs)
        if (b.sleeping)
          wake(self, id, b);
      try_admit(self);
      dispatch(self);
    },
    [self](woken_atom, uint64_t gang) {
      auto& st = self->state;
      if (gang == 0)
        st.waking.clear();
      else
        st.waking.erase(gang);
      try_admit(self);
      dispatch(self);
    },
    [self](inspect_atom) {
      auto& st = self->state;
      queue_snapshot snap;
      snap.name = st.spec->meta.name;
      snap.allocated = st.allocated;
      snap.inqueue = st.inqueue;
      snap.deserved = st.deserved;
      snap.waiting = st.to_admit.size() + st.ready.size();
      snap.planning = st.planning.size();
      snap.gangs = st.gangs.size();
      for (const auto& [id, b] : st.gangs)
        snap.admitted += b.admitted ? 1 : 0;
      return snap;
    },
  };
}

} // namespace phalanx::actors
