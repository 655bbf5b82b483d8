#include "actors/cluster_actor.hpp"

#include "scheduler/enqueue_gate.hpp"
#include "scheduler/fair_share.hpp"

#include <caf/all.hpp>

namespace phalanx::actors {

namespace {

using self_ptr = cluster_actor::stateful_pointer<cluster_actor_state>;

void schedule_recompute(self_ptr self) {
  auto& st = self->state;
  if (st.recompute_scheduled)
    return;
  st.recompute_scheduled = true;
  self->delayed_send(self, st.ctx->config.scheduling.fair_share_debounce, recompute_atom::value);
}

void recompute(self_ptr self) {
  auto& st = self->state;
  st.recompute_scheduled = false;
  std::vector<scheduler::queue_demand> demands;
  demands.reserve(st.queues.size());
  for (const auto& [name, q] : st.queues)
    demands.push_back(
        {name, q.spec->weight, q.spec->capability, q.spec->guarantee, q.request, q.spec->parent});
  auto deserved = scheduler::compute_deserved(st.allocatable, demands);
  std::size_t i = 0;
  for (auto& [name, q] : st.queues) {
    if (st.listener)
      self->send(st.listener, deserved_atom::value, name, deserved[i].deserved);
    const bool cut = scheduler::share_cut_by_others(deserved[i].deserved, q.request,
                                                    st.allocatable);
    self->send(q.handle, deserved_atom::value, std::move(deserved[i].deserved), cut);
    ++i;
  }
  if (st.nodes_changed) {
    st.nodes_changed = false;
    for (auto& [name, q] : st.queues)
      self->send(q.handle, capacity_atom::value);
  }
  if (st.wake_pending) {
    st.wake_pending = false;
    for (auto& [name, q] : st.queues)
      if (auto handle = caf::actor_cast<queue_actor>(q.handle))
        self->send(handle, wake_atom::value);
  }
}

void set_claim(self_ptr self, uint64_t gang, const std::string& queue,
               scheduler::resources amount) {
  auto& st = self->state;
  auto i = st.claims.find(gang);
  if (i != st.claims.end()) {
    st.inqueue -= i->second.amount;
    if (auto q = st.queues.find(i->second.queue); q != st.queues.end())
      q->second.claims -= i->second.amount;
    if (!scheduler::fits(i->second.amount, amount))
      st.wake_pending = true;  // A claim shrank: room for another admission.
    st.claims.erase(i);
  }
  if (amount.is_zero())
    return;
  st.inqueue += amount;
  if (auto q = st.queues.find(queue); q != st.queues.end())
    q->second.claims += amount;
  st.claims.emplace(gang, cluster_actor_state::claim_entry{queue, std::move(amount)});
}

} // namespace

cluster_actor::behavior_type cluster_actor_impl(self_ptr self, context_ptr ctx) {
  self->state.ctx = std::move(ctx);
  return {
    [self](capacity_atom, const scheduler::resources& added,
           const scheduler::resources& removed) {
      auto& st = self->state;
      st.allocatable += added;
      st.allocatable -= removed;
      if (!added.is_zero())
        st.wake_pending = true;
      st.nodes_changed = true;
      schedule_recompute(self);
    },
    [self](spec_atom, queue_ptr spec, queue_actor_fwd handle) {
      auto& st = self->state;
      auto& q = st.queues[spec->meta.name.str()];
      bool reopened = q.spec && q.spec->state != scheduler::queue_state::open &&
                      spec->state == scheduler::queue_state::open;
      q.spec = std::move(spec);
      q.handle = std::move(handle);
      if (reopened)
        st.wake_pending = true;
      schedule_recompute(self);
    },
    [self](removed_atom, const std::string& queue) {
      auto& st = self->state;
      auto i = st.queues.find(queue);
      if (i == st.queues.end())
        return;
      st.used -= i->second.allocated;
      st.inqueue -= i->second.claims;
      std::erase_if(st.claims, [&](const auto& c) { return c.second.queue == queue; });
      st.queues.erase(i);
      st.wake_pending = true;
      schedule_recompute(self);
    },
    [self](usage_atom, const std::string& queue, scheduler::resources& allocated,
           scheduler::resources& request) {
      auto& st = self->state;
      auto i = st.queues.find(queue);
      if (i == st.queues.end())
        return;
      auto& q = i->second;
      if (!scheduler::fits(q.allocated, allocated))
        st.wake_pending = true;  // Something was released.
      st.used -= q.allocated;
      st.used += allocated;
      q.allocated = std::move(allocated);
      q.request = std::move(request);
      schedule_recompute(self);
    },
    [self](admit_atom, admit_request& req, queue_actor_fwd& reply_to) {
      auto& st = self->state;
      admission answer{req.gang, false, {}};
      auto i = st.queues.find(req.queue);
      if (i == st.queues.end()) {
        answer.reason = "queue \"" + req.queue + "\" does not exist";
      } else {
        const auto& q = i->second;
        scheduler::enqueue_gate gate{st.ctx->config.scheduling.enqueue, st.allocatable, st.used,
                                     st.inqueue, st.ctx->now()};
        scheduler::queue_usage usage;
        usage.name = req.queue;
        usage.state = q.spec->state;
        usage.capability = q.spec->capability;
        usage.allocated = q.allocated;
        usage.inqueue = q.claims;
        auto decision = gate.check(*req.group, usage);
        answer.admitted = decision.admitted();
        answer.reason = std::move(decision.reason);
        if (answer.admitted)
          set_claim(self, req.gang, req.queue, req.group->min_resources);
      }
      self->send(reply_to, admission_atom::value, std::move(answer));
    },
    [self](claim_atom, uint64_t gang, const std::string& queue,
           scheduler::resources& remaining) {
      set_claim(self, gang, queue, std::move(remaining));
      if (self->state.wake_pending)
        schedule_recompute(self);
    },
    [self](recompute_atom) { recompute(self); },
    [self](spec_atom, deserved_listener_actor& listener) {
      self->state.listener = std::move(listener);
    },
  };
}

} // namespace phalanx::actors
