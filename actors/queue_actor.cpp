#include "actors/queue_actor.hpp"

#include "scheduler/enqueue_gate.hpp"
#include "scheduler/fair_share.hpp"
#include "scheduler/order.hpp"
#include "scheduler/quantity.hpp"
#include "scheduler/sla.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <optional>
#include <utility>

namespace phalanx::actors {

void queue_actor_state::pending_pod_tally::move(kube_pending_queue from, int64_t from_pods,
                                                kube_pending_queue to, int64_t to_pods) {
  auto add = [this](kube_pending_queue q, int64_t n) {
    auto i = static_cast<std::size_t>(q);
    if (q == kube_pending_queue::none || n == 0 || gauges[i] == nullptr)
      return;
    pods[i] += n;
    gauges[i]->add(double(n));
  };
  add(from, -from_pods);
  add(to, to_pods);
}

queue_actor_state::pending_pod_tally::~pending_pod_tally() {
  // The series are shared by every queue: an ended queue takes back what it added.
  for (std::size_t i = 0; i < pods.size(); ++i)
    if (gauges[i] != nullptr && pods[i] != 0)
      gauges[i]->add(-double(pods[i]));
}

namespace {

using self_ptr = queue_actor::stateful_pointer<queue_actor_state>;
using book_gang = queue_actor_state::book_gang;
using book_type = queue_actor_state::book_type;

bool is_open(const queue_actor_state& st) {
  return st.spec->state == scheduler::queue_state::open;
}

// Volcano's "overused" (scheduler::queue_overused): the queue starts nothing new until its
// share drops.
bool overused(const queue_actor_state& st) {
  return st.deserved_known &&
         scheduler::queue_overused(st.book.allocated(), st.deserved, st.share_cut);
}

using amount_series = queue_actor_state::amount_series;

amount_series bind_amount(const queue_amount_families& f, const std::string& queue) {
  amount_series s;
  if (f.cpu_cores != nullptr) {
    s.cpu_cores = f.cpu_cores->share({queue});
    s.memory_bytes = f.memory_bytes->share({queue});
    s.ephemeral_storage_bytes = f.ephemeral_storage_bytes->share({queue});
    s.pods = f.pods->share({queue});
  }
  s.milli_cpu = f.volcano_milli_cpu->share({queue});
  s.volcano_memory_bytes = f.volcano_memory_bytes->share({queue});
  s.volcano_pods = f.volcano_scalar->share({queue, std::string(scheduler::pods_resource)});
  s.volcano_ephemeral =
      f.volcano_scalar->share({queue, std::string(scheduler::ephemeral_storage_resource)});
  return s;
}

// Volcano keeps ephemeral-storage and extended resources in thousandths of their unit.
constexpr double volcano_scalar_scale = 1000;

// Sets the series of `s` to `r` (plus `more`, when given: request is allocated plus demand,
// summed here rather than into a new resources, which would allocate on every message).
void put_amount(amount_series& s, const queue_amount_families& f, std::string_view queue,
                const scheduler::resources& r, const scheduler::resources* more = nullptr) {
  auto amount = [&](auto field) { return double(r.*field + (more ? (*more).*field : 0)); };
  if (s.cpu_cores) {
    s.cpu_cores->set(amount(&scheduler::resources::cpu_milli) / 1000.0);
    s.memory_bytes->set(amount(&scheduler::resources::memory_bytes));
    s.ephemeral_storage_bytes->set(amount(&scheduler::resources::ephemeral_bytes));
    s.pods->set(amount(&scheduler::resources::pods));
  }
  s.milli_cpu->set(amount(&scheduler::resources::cpu_milli));
  s.volcano_memory_bytes->set(amount(&scheduler::resources::memory_bytes));
  s.volcano_pods->set(amount(&scheduler::resources::pods));
  s.volcano_ephemeral->set(amount(&scheduler::resources::ephemeral_bytes) * volcano_scalar_scale);
  // A label lookup takes the metrics registry's mutex: once per queue and resource. A resource
  // seen once keeps its series, which reads 0 when the amount is gone (resources drop zeros).
  auto discover = [&](const scheduler::resources& from) {
    for (const auto& e : from.extended())
      if (std::none_of(s.extended.begin(), s.extended.end(),
                       [&](const auto& x) { return x.name == e.name; })) {
        const std::string name(queue), resource(e.name.str());
        s.extended.push_back(
            {e.name, f.extended != nullptr ? f.extended->share({name, resource}) : nullptr,
             f.volcano_scalar->share({name, resource})});
      }
  };
  discover(r);
  if (more)
    discover(*more);
  for (const auto& x : s.extended) {
    const double v = double(r.get(x.name) + (more ? more->get(x.name) : 0));
    if (x.base)
      x.base->set(v);
    x.milli->set(v * volcano_scalar_scale);
  }
}

void publish_gauges(self_ptr self) {
  auto& st = self->state;
  auto& m = *st.ctx->metrics;
  auto& s = st.series;
  const auto name = st.spec->meta.name.view();
  if (!s.bound) {
    const std::string queue(name);
    s.allocated = bind_amount(m.allocated, queue);
    s.deserved = bind_amount(m.deserved, queue);
    s.request = bind_amount(m.request, queue);
    s.inqueue = bind_amount(m.inqueue, queue);
    s.share = m.volcano_queue_share.share({queue});
    s.weight = m.volcano_queue_weight.share({queue});
    s.overused = m.volcano_queue_overused.share({queue});
    s.bound = true;
  }
  put_amount(s.allocated, m.allocated, name, st.book.allocated());
  put_amount(s.deserved, m.deserved, name, st.deserved);
  put_amount(s.request, m.request, name, st.book.allocated(), &st.book.demand());
  put_amount(s.inqueue, m.inqueue, name, st.book.inqueue());
  if (std::exchange(s.share_stale, false))  // Copies the allocation: only once it changed.
    s.share->set(scheduler::queue_share(st.book.allocated(), st.deserved).to_double());
  s.weight->set(double(st.spec->weight));
  s.overused->set(overused(st) ? 1 : 0);
}

// Files the gang's pending pods (its demand's pod count) under `where` in
// scheduler_pending_pods, moving them from where they were counted.
void file_pending_pods(queue_actor_state& st, book_gang& g, kube_pending_queue where) {
  auto& x = g.extra;
  const int64_t pods = where == kube_pending_queue::none ? 0 : g.demand.pods;
  if (where == x.pending_in && pods == x.pending_pods)
    return;
  st.pending_pods.move(x.pending_in, x.pending_pods, where, pods);
  x.pending_in = where;
  x.pending_pods = pods;
}

// The attempt a planning slot was (docs/METRICS.md): nullopt for a slot that had nothing to do.
std::optional<attempt_result> attempt_of(plan_outcome outcome) {
  switch (outcome) {
    case plan_outcome::bound:
      return attempt_result::scheduled;
    case plan_outcome::unschedulable:
    case plan_outcome::unresolvable:
    case plan_outcome::refused:
      return attempt_result::unschedulable;
    case plan_outcome::failed:
      return attempt_result::error;
    case plan_outcome::nothing_to_do:
      return std::nullopt;
  }
  return std::nullopt;
}

// Where a gang's pending pods wait after a slot that ended so.
kube_pending_queue waiting_after(plan_outcome outcome) {
  switch (outcome) {
    case plan_outcome::bound:
      return kube_pending_queue::none;  // Placed; pods left over ask again (waiting_atom).
    case plan_outcome::refused:
    case plan_outcome::failed:
      return kube_pending_queue::backoff;
    case plan_outcome::unschedulable:
    case plan_outcome::unresolvable:
    case plan_outcome::nothing_to_do:
      return kube_pending_queue::unschedulable;
  }
  return kube_pending_queue::unschedulable;
}

void bind_attempt_series(queue_actor_state& st) {
  auto& m = *st.ctx->metrics;
  const auto& names = st.ctx->config.scheduling.scheduler_names;
  const std::string profile = names.empty() ? "phalanx" : names.front();
  for (int i = 0; i <= static_cast<int>(attempt_result_last); ++i) {
    const std::string result(to_string(static_cast<attempt_result>(i)));
    st.attempts.count[i] = &m.schedule_attempts.with({result, profile});
    st.attempts.seconds[i] = &m.attempt_duration.with({result, profile});
    st.attempts.volcano_count[i] = &m.volcano_schedule_attempts.with({result});
  }
  st.attempts.volcano_milliseconds = &m.volcano_e2e_scheduling_latency;
  for (int i = 1; i <= static_cast<int>(kube_pending_queue_last); ++i)
    st.pending_pods.gauges[i] =
        &m.pending_pods.with({to_string(static_cast<kube_pending_queue>(i))});
}

void report_usage(self_ptr self) {
  auto& st = self->state;
  self->send(st.cluster, usage_atom::value, st.spec->meta.name.str(), st.book.allocated(),
             st.book.allocated() + st.book.demand());
  publish_gauges(self);
}

// Tells the cluster actor gang `gang`'s claim after `change` when it differs from what the
// cluster recorded: `told`, the claim before the change unless the cluster recorded another.
void tell_claim(self_ptr self, uint64_t gang, const scheduler::claim_change& change,
                const scheduler::resources& told) {
  auto& st = self->state;
  if (change.after != told)
    self->send(st.cluster, claim_atom::value, gang, st.spec->meta.name.str(), change.after);
}
void tell_claim(self_ptr self, uint64_t gang, const scheduler::claim_change& change) {
  tell_claim(self, gang, change, change.before);
}

void fall_asleep(queue_actor_state& st, uint64_t gang, book_gang& g) {
  if (g.extra.sleeping)
    return;
  g.extra.sleeping = true;
  if (!st.woken_for_order.count(gang))
    st.asleep.insert(book_type::key_of(g, gang));
}

void stop_sleeping(queue_actor_state& st, uint64_t gang, book_gang& g) {
  if (!g.extra.sleeping)
    return;
  g.extra.sleeping = false;
  st.asleep.erase(book_type::key_of(g, gang));
}

// Wakes a sleeping gang; the queue holds its gate and slots until it answers (`waking`).
void wake(self_ptr self, uint64_t gang, book_gang& g) {
  auto& st = self->state;
  stop_sleeping(st, gang, g);
  if (!g.extra.handle)
    return;
  if (st.waking.empty())  // Each woken gang answers at once; the limit only covers one that
                          // ended meanwhile without its removal reaching this queue yet.
    self->delayed_send(self, std::chrono::milliseconds(100), woken_atom::value, uint64_t{0});
  st.waking.insert(gang);
  self->send(g.extra.handle, wake_atom::value);
}

// Wakes the gangs asleep ahead of `next` in the order (each at most once until a slot goes to a
// gang behind it, `woken_for_order`). True if any.
bool wake_ahead_of(self_ptr self, const scheduler::queue_order_key& next) {
  auto& st = self->state;
  bool woke = false;
  while (!st.asleep.empty() && st.asleep.key_comp()(*st.asleep.begin(), next)) {
    auto gang = st.asleep.begin()->gang;
    st.woken_for_order.insert(gang);
    wake(self, gang, *st.book.find(gang));
    woke = true;
  }
  return woke;
}

// A gang short of its minimum holds a planning slot.
bool minimum_planning(const queue_actor_state& st) {
  return std::any_of(st.planning.begin(), st.planning.end(), [&](const auto& slot) {
    const auto* g = st.book.find(slot.first);
    return g != nullptr && !g->ready;
  });
}

// The gangs waiting for a slot that an overused queue holds back hear why, once each: without
// a slot they plan nothing, and would say nothing.
void tell_held_back(self_ptr self, bool preemptors_plan) {
  auto& st = self->state;
  if (!st.ready_grew)
    return;
  st.ready_grew = false;
  const std::string why = "queue \"" + st.spec->meta.name.str() + "\" is overused: it holds " +
                          scheduler::without_pods(st.book.allocated()).to_string() +
                          " against a deserved share of " +
                          scheduler::without_pods(st.deserved).to_string() +
                          ", and starts nothing new until it holds less";
  for (const auto& key : st.book.to_plan()) {
    if (preemptors_plan && !key.elastic)
      continue;
    if (!st.told_overused.insert(key.gang).second)
      continue;
    if (auto* g = st.book.find(key.gang); g != nullptr && g->extra.handle) {
      admission held;
      held.gang = key.gang;
      held.reason = why;
      held.held_back = true;
      self->send(g->extra.handle, admission_atom::value, std::move(held));
    }
  }
}

void dispatch(self_ptr self) {
  auto& st = self->state;
  if (!is_open(st) || !st.waking.empty())
    return;
  const auto limit =
      static_cast<std::size_t>(std::max(1, st.ctx->config.scheduling.max_planning_per_queue));
  const bool held = overused(st);
  if (!held && !st.told_overused.empty()) {
    st.told_overused.clear();
    st.ready_grew = true;  // Held back again later, they are told again.
  }
  const auto& to_plan = st.book.to_plan();
  while (st.planning.size() < limit && !to_plan.empty()) {
    // Overused (Volcano's allocate skips the queue): nothing new starts, but a gang short of its
    // minimum still plans when it may preempt (Volcano's preempt does not skip the queue).
    const bool preemptors_plan = st.ctx->config.scheduling.preemption;
    if (held && (!preemptors_plan || to_plan.begin()->elastic)) {
      tell_held_back(self, preemptors_plan);
      break;
    }
    if (wake_ahead_of(self, *to_plan.begin()))
      break;  // They answer first, and come before it if they wait again.
    // Elastic rounds come after every gang short of its minimum (the order puts those first),
    // and wait while one plans: its room is not given to another gang's extras meanwhile.
    if (to_plan.begin()->elastic && minimum_planning(st))
      break;
    const uint64_t gang = to_plan.begin()->gang;
    auto& g = *st.book.find(gang);  // The book keeps only its own gangs in its order.
    st.book.stop_waiting(gang);
    st.planning.emplace(gang, self->clock().now());
    // A slot went to a gang behind the ones woken for it (not to one of them): the next gang
    // that asks may wake them again.
    if (!st.woken_for_order.empty() && !st.woken_for_order.count(gang)) {
      for (auto woken : st.woken_for_order)
        if (auto* w = st.book.find(woken); w != nullptr && w->extra.sleeping)
          st.asleep.insert(book_type::key_of(*w, woken));
      st.woken_for_order.clear();
    }
    auto share = scheduler::queue_share(st.book.allocated(), st.deserved);
    self->send(g.extra.handle, plan_atom::value, share);
  }
  publish_gauges(self);
}

// Gang `gang` passed the gate (or has none to pass): it waits for a slot, and claims its
// minResources. Returns the claim's change, for the cluster actor.
scheduler::claim_change admit_locally(self_ptr self, uint64_t gang, book_gang& g) {
  auto& st = self->state;
  auto change = st.book.admit(gang);
  st.ready_grew = true;
  file_pending_pods(st, g, kube_pending_queue::active);
  self->send(g.extra.handle, admission_atom::value, admission{gang, true, {}});
  return change;
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
    for (const auto& key : st.book.to_admit())
      if (st.told_not_open.insert(key.gang).second)
        self->send(st.book.find(key.gang)->extra.handle, admission_atom::value,
                   admission{key.gang, false, why});
    return;
  }
  if (st.admitting || !st.waking.empty())
    return;
  const auto& to_admit = st.book.to_admit();
  for (auto it = to_admit.begin(); it != to_admit.end();) {
    auto gang = it->gang;
    ++it;  // admit_locally erases the current element.
    if (st.refused_since_wake.count(gang))
      continue;
    auto& g = *st.book.find(gang);
    if (g.unresolvable)
      continue;
    // Without gang scheduling there is no gate (the default scheduler has none); a gang without
    // minResources passes the gate as soon as its queue is open. The cluster actor recorded no
    // claim for it: it hears the claim (if any) now.
    if (!st.ctx->config.scheduling.gang_scheduling || g.group->min_resources.is_zero()) {
      tell_claim(self, gang, admit_locally(self, gang, g));
      continue;
    }
    st.admitting = true;
    admit_request req;
    req.gang = gang;
    req.queue = st.spec->meta.name;
    req.group = g.group;
    self->send(st.cluster, admit_atom::value, std::move(req), queue_actor_fwd{self});
    return;
  }
}

void forget(self_ptr self, uint64_t gang) {
  auto& st = self->state;
  auto* g = st.book.find(gang);
  if (g == nullptr)
    return;
  if (g->group)  // A gang known only from its usage never slept.
    stop_sleeping(st, gang, *g);
  st.woken_for_order.erase(gang);
  st.told_not_open.erase(gang);
  st.told_overused.erase(gang);
  st.planning.erase(gang);
  file_pending_pods(st, *g, kube_pending_queue::none);
  st.refused_since_wake.erase(gang);
  if (g->extra.handle)
    st.gang_of_actor.erase(g->extra.handle.address());
  st.series.share_stale = true;
  tell_claim(self, gang, st.book.forget(gang));
}

} // namespace

queue_actor::behavior_type queue_actor_impl(self_ptr self, context_ptr ctx, queue_ptr spec,
                                            cluster_actor cluster) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.spec = std::move(spec);
  st.cluster = std::move(cluster);
  bind_attempt_series(st);
  publish_gauges(self);
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    auto i = st.gang_of_actor.find(msg.source);
    if (i == st.gang_of_actor.end())
      return;  // Parked first, or replaced by a newer actor of its gang.
    auto gang = i->second;
    st.gang_of_actor.erase(i);
    st.waking.erase(gang);
    forget(self, gang);
    report_usage(self);
    try_admit(self);
    dispatch(self);
  });
  return {
    [self](admission_atom, admission& a) {
      auto& st = self->state;
      st.admitting = false;
      auto* g = st.book.find(a.gang);
      if (g != nullptr && !g->admitted) {
        if (a.admitted) {
          // The cluster actor recorded the whole minResources as the claim, to be told if part
          // of it is allocated already.
          tell_claim(self, a.gang, admit_locally(self, a.gang, *g), g->group->min_resources);
        } else {
          st.refused_since_wake.insert(a.gang);
          // A gang with an sla-waiting-time asks again once it has waited that long, without
          // waiting for room to free up: the gate admits it then.
          if (auto deadline = scheduler::sla_deadline(*g->group)) {
            auto now = st.ctx->now();
            if (now < *deadline)
              self->delayed_send(self, *deadline - now, sla_atom::value, a.gang);
          }
          self->send(g->extra.handle, admission_atom::value, std::move(a));
        }
      }
      try_admit(self);
      dispatch(self);
    },
    [self](deserved_atom, scheduler::resources deserved, bool share_cut) {
      auto& st = self->state;
      st.deserved = std::move(deserved);
      st.share_cut = share_cut;
      st.deserved_known = true;
      st.series.share_stale = true;
      // Published here, not only by dispatch: a queue that plans nothing (Closed, or a parent
      // queue) has a deserved share too, and dispatch returns before it publishes.
      publish_gauges(self);
      dispatch(self);
    },
    [self](waiting_atom, gang_entry& e, gang_actor& handle) {
      auto& st = self->state;
      st.waking.erase(e.gang);
      if (auto* known = st.book.find(e.gang); known != nullptr && known->group)
        stop_sleeping(st, e.gang, *known);  // Asleep under its key before this change.
      // Its claim follows the PodGroup as it is now (its minResources may have changed). Its
      // new pods plan again before it is set aside as unresolvable; `admitted`: restored after
      // a restart, or an elastic round of a running gang.
      auto change = st.book.file(e.gang, std::move(e.group), std::move(e.demand), e.admitted,
                                 e.ready, e.members_joined);
      auto& g = *st.book.find(e.gang);
      if (g.extra.handle != handle) {
        if (g.extra.handle)
          st.gang_of_actor.erase(g.extra.handle.address());
        self->monitor(handle);
        st.gang_of_actor.insert_or_assign(handle.address(), e.gang);
      }
      g.extra.handle = std::move(handle);
      tell_claim(self, e.gang, change);
      if (g.admitted)
        st.ready_grew = true;
      file_pending_pods(st, g, g.admitted ? kube_pending_queue::active : kube_pending_queue::gated);
      report_usage(self);
      try_admit(self);
      dispatch(self);
    },
    [self](planned_atom, uint64_t gang, plan_outcome outcome) {
      auto& st = self->state;
      if (auto slot = st.planning.find(gang); slot != st.planning.end()) {
        if (auto result = attempt_of(outcome)) {
          const double seconds =
              std::chrono::duration<double>(self->clock().now() - slot->second).count();
          const auto r = static_cast<std::size_t>(*result);
          st.attempts.count[r]->inc();
          st.attempts.seconds[r]->observe(seconds);
          st.attempts.volcano_count[r]->inc();
          st.attempts.volcano_milliseconds->observe(seconds * 1000);
        }
        st.planning.erase(slot);
      }
      if (auto* g = st.book.find(gang)) {
        file_pending_pods(st, *g, waiting_after(outcome));
        if (outcome == plan_outcome::unschedulable || outcome == plan_outcome::refused ||
            outcome == plan_outcome::unresolvable)
          fall_asleep(st, gang, *g);
        else
          stop_sleeping(st, gang, *g);
        // As its gang actor does (fail_plan): a gang that can never run here and holds nothing
        // leaves the enqueue budget until the nodes change.
        if (outcome == plan_outcome::unresolvable) {
          if (auto change = st.book.set_aside(gang)) {
            tell_claim(self, gang, *change);
            try_admit(self);
          }
        }
      }
      dispatch(self);
    },
    [self](capacity_atom) {
      // Nodes were added, resized or changed: a gang that could not fit any may fit now.
      auto& st = self->state;
      st.book.nodes_changed();
      try_admit(self);
      dispatch(self);
    },
    [self](usage_atom, usage_delta& d) {
      auto& st = self->state;
      // A removal from a gang this queue does not know was sent by a gang forgotten since: the
      // registry's removed_atom (the PodGroup deleted) overtook the last usage its actor sent
      // as its pods went. Forgetting took the gang's whole allocation off already; taking it
      // off again drove the queue's below zero (PowerLossChurn, seed 5212). A gang's first
      // delta adds (its first binding) or is whole (an actor started from bound pods).
      // So is a whole count of nothing: a parked gang woken as its PodGroup went (its last pod
      // deleted) starts an actor whose first count can come after the removal, and an entry
      // made from it was never forgotten (the invariants' queue check found it).
      // A gang's usage may arrive before it ever waited here (a gang restored with bound pods):
      // the book keeps it per gang from the first delta on, or forgetting the gang would undo
      // it wrongly. A pod counts one pod slot in its requests. A gang actor started from its
      // pods sends its whole count, which replaces the book's.
      const int64_t pods_added = d.added.pods, pods_removed = d.removed.pods;
      auto change = st.book.use(d.gang, {std::move(d.added), std::move(d.removed), pods_added,
                                         pods_removed, d.whole});
      if (!change)
        return;
      st.series.share_stale = true;
      auto& g = *st.book.find(d.gang);
      file_pending_pods(st, g, g.extra.pending_in);
      tell_claim(self, d.gang, *change);
      report_usage(self);
      dispatch(self);
    },
    [self](park_atom, uint64_t gang) {
      // Its actor is ending: drop the handle (it would keep the ended actor's memory), keep the
      // allocation, which is still in use.
      auto& st = self->state;
      if (auto* g = st.book.find(gang)) {
        if (g->extra.handle)
          st.gang_of_actor.erase(g->extra.handle.address());
        g->extra.handle = nullptr;
        if (g->group)
          stop_sleeping(st, gang, *g);
        file_pending_pods(st, *g, kube_pending_queue::none);
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
      for (auto& [id, g] : st.book.gangs())
        if (g.extra.sleeping)
          wake(self, id, g);
      try_admit(self);
      dispatch(self);
    },
    [self](sla_atom, uint64_t gang) {
      auto& st = self->state;
      if (st.refused_since_wake.erase(gang) == 0)
        return;  // Admitted, gone, or already asking again.
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
      snap.allocated = st.book.allocated();
      snap.inqueue = st.book.inqueue();
      snap.deserved = st.deserved;
      snap.waiting = st.book.to_admit().size() + st.book.to_plan().size();
      snap.planning = st.planning.size();
      snap.gangs = st.book.gangs().size();
      for (const auto& [id, g] : st.book.gangs()) {
        snap.admitted += g.admitted ? 1 : 0;
        snap.gang_ids.push_back(id);
      }
      std::sort(snap.gang_ids.begin(), snap.gang_ids.end());
      return snap;
    },
  };
}

} // namespace phalanx::actors
