// Preemption within a queue and reclaim across queues, the registry's part (docs/NOTES.md
// "Preemption"): it knows every bound pod, its gang, its queue, its priority and every queue's
// deserved share, so it chooses the victims (scheduler/preemption.hpp) and evicts them once the
// preemptor's nodes hold their room for it.

#include "actors/operator_log.hpp"
#include "actors/world_port.hpp"

#include "scheduler/gang_book.hpp"
#include "scheduler/preemption.hpp"


#include <limits>
#include <span>

namespace phalanx::actors::registry_detail {

namespace {

using api::resource_kind;

// What a victim is evicted for, on its pod and in the Evict event.
std::string eviction_message(const group_entry& preemptor, bool reclaim) {
  auto who = "PodGroup " + preemptor.group->meta.namespace_name.str() + "/" +
             preemptor.group->meta.name.str();
  if (reclaim)
    return "reclaimed by " + who + " of queue " + preemptor.group->queue +
           ", which is below its deserved share";
  return "preempted by " + who + " (priority " + std::to_string(preemptor.group->priority) +
         ") of queue " + preemptor.group->queue;
}

// A pod leaving already: being deleted (gracefully too: it is terminating), evicted, or offered
// to a preemptor as its victim.
bool leaving(const registry_state& st, uint64_t id, const pod_entry& e) {
  return e.delete_requested || st.terminating.count(id) != 0 || st.cache.evicting.count(id) != 0 ||
         st.cache.offered.count(id) != 0;
}

bool may_be_victim(const registry_state& st, uint64_t id, const pod_entry& e) {
  return e.is_bound() && !scheduler::is_terminal(e.phase()) && !leaving(st, id, e);
}

// An offer not followed by its evictions within this (its round was refused or aborted, and
// its gang has not asked again) frees its victims for others. A round's votes take
// milliseconds; the preemptor asks again after its backoff.
constexpr auto offer_lifetime = std::chrono::seconds(10);

// The victims one plan chooses among: bound, running pods of some gangs, with their gangs.
struct candidate_set {
  std::vector<scheduler::preemption_candidate> candidates;
  std::vector<scheduler::victim_gang> gangs;
};

// Adds the running pods of `queue`'s gangs of priority below `below` (all but `except`) to
// `set`, as candidates of queue index `queue_index`; returns what the queue's bound pods hold.
scheduler::resources add_candidates(const registry_state& st, const std::string& queue,
                                    uint32_t queue_index, int32_t below, uint64_t except,
                                    candidate_set& set) {
  scheduler::resources allocated;
  auto q = st.cache.gangs_by_queue.find(queue);
  if (q == st.cache.gangs_by_queue.end())
    return allocated;
  for (auto gang_id : q->second) {
    auto g = st.cache.groups.find(gang_id);
    if (g == st.cache.groups.end() || g->second.removed)
      continue;
    const auto& group = *g->second.group;
    const bool eligible = gang_id != except && group.priority < below;
    scheduler::gang_book book(group);
    const auto before = set.candidates.size();
    for (auto id : g->second.pods) {
      auto p = st.pods.find(id);
      if (p == st.pods.end())
        continue;
      const auto& e = p->second;
      const bool holds = e.is_bound() && !scheduler::is_terminal(e.phase());
      if (holds)
        allocated += e.pod->requests;
      // A pod on its way out no longer counts for its gang's minimum: two preemptors may not
      // both take a gang's spare pods.
      if (e.phase() == scheduler::pod_phase::succeeded || (holds && !leaving(st, id, e)))
        book.count(scheduler::gang_book::role_index(group, e.pod->role));
      if (!eligible || !may_be_victim(st, id, e))
        continue;
      auto n = st.cache.nodes.find(e.node_name().view());
      if (n == st.cache.nodes.end() || !n->second.live)
        continue;
      auto state = e.state();
      scheduler::preemption_candidate c;
      c.pod_id = id;
      c.node = n->second.index;
      c.gang = gang_id;
      c.priority = group.priority;
      c.start_time = state.start_time != scheduler::timestamp{} ? state.start_time : e.bound_at();
      c.request = e.pod->requests;
      c.queue = queue_index;
      set.candidates.push_back(std::move(c));
    }
    if (set.candidates.size() != before)
      set.gangs.push_back(book.as_victim(group, gang_id));
  }
  return allocated;
}

// Plans the preemptor's minimum against `set` (scheduler::plan_preemption).
scheduler::preemption_plan plan_for(self_ptr self, const preemption_ask& ask,
                                    const candidate_set& set, int32_t priority,
                                    std::span<const scheduler::victim_queue> queues) {
  auto& st = self->state;
  std::vector<const scheduler::pod*> pods;
  pods.reserve(ask.pods.size());
  for (const auto& ref : ask.pods)
    pods.push_back(ref.pod.get());
  scheduler::preemption_request req;
  req.gang.pods = pods;
  req.gang.min_pods = ask.min_pods;
  req.gang.min_per_role = ask.min_per_role;
  req.gang.place_extra = false;
  req.priority = priority;
  req.candidates = set.candidates;
  req.gangs = set.gangs;
  req.queues = queues;
  if (!st.cache.preemption_planner)
    st.cache.preemption_planner =
        std::make_unique<scheduler::gang_planner>(st.ctx->config.scheduling.planner);
  return scheduler::plan_preemption(*st.cache.preemption_planner, *st.ctx->view, req, st.random);
}

// What the preemptor's minimum asks for: its first min_pods pods, the planner's preference.
scheduler::resources minimum_request(const preemption_ask& ask) {
  scheduler::resources need;
  for (std::size_t i = 0; i < ask.pods.size() && i < static_cast<std::size_t>(ask.min_pods); ++i)
    need += ask.pods[i].pod->requests;
  return need;
}

// A queue's deserved share as allocations compare with it: no limit on the pod count, which
// every request carries and no share names (a queue with a pod would look above its share).
scheduler::resources as_share(scheduler::resources deserved) {
  return std::move(deserved.with_pods(std::numeric_limits<int64_t>::max() / 2));
}

// A gang whose PriorityClass says preemptionPolicy Never evicts no one of its queue, as
// kube-scheduler's DefaultPreemption leaves such a pod waiting (its class's policy never changes,
// so reading it now is reading it at admission). The classes are those served (standalone) or
// watched (Kubernetes mode).
bool preempts_never(const registry_state& st, std::string_view class_name) {
  if (class_name.empty())
    return false;
  auto i = st.priority_classes.find(class_name);
  return i != st.priority_classes.end() &&
         i->second->preemption == scheduler::preemption_policy::never;
}

} // namespace

void do_preempt(self_ptr self, preemption_ask ask, const gang_actor& gang) {
  auto& st = self->state;
  const auto& cfg = st.ctx->config.scheduling;
  preemption_offer offer;
  offer.ask = ask.ask;
  auto answer = [&] { self->send(gang, offer_atom::value, std::move(offer)); };
  auto offer_plan = [&](scheduler::preemption_plan& plan, bool reclaim) {
    offer.found = true;
    offer.reclaim = reclaim;
    for (const auto& p : plan.placements)
      offer.placements.emplace_back(ask.pods[p.pod].id, static_cast<uint32_t>(p.node));
    for (const auto& [node, pods] : plan.victims_by_node)
      for (auto id : pods)
        st.cache.offered[id] = {ask.gang, self->clock().now()};
    offer.victims_by_node = std::move(plan.victims_by_node);
    answer();
  };
  auto me = st.cache.groups.find(ask.gang);
  if (me == st.cache.groups.end() || me->second.removed) {
    offer.detail = "its PodGroup is gone";
    answer();
    return;
  }
  const auto& preemptor = *me->second.group;
  std::erase_if(st.cache.evicting, [&](uint64_t id) { return st.pods.count(id) == 0; });
  // This gang's earlier offer is void (it asks again), and so are stale or orphaned ones.
  const auto now = self->clock().now();
  std::erase_if(st.cache.offered, [&](const auto& o) {
    return o.second.preemptor == ask.gang || now - o.second.at > offer_lifetime ||
           st.pods.count(o.first) == 0 || st.cache.groups.count(o.second.preemptor) == 0;
  });
  std::vector<std::string> why_not;
  // Preempt first (Volcano's `preempt`): lower-priority gangs of its own queue.
  scheduler::resources own_allocated;
  {
    candidate_set set;
    own_allocated = add_candidates(st, preemptor.queue, 0, preemptor.priority, ask.gang, set);
    const bool never = preempts_never(st, preemptor.priority_class_name);
    if (cfg.preemption && never)
      why_not.push_back("its PriorityClass " + preemptor.priority_class_name +
                        " has preemptionPolicy Never");
    if (cfg.preemption && !never) {
      auto plan = set.candidates.empty()
                      ? scheduler::preemption_plan{}
                      : plan_for(self, ask, set, preemptor.priority, {});
      if (plan.found) {
        offer_plan(plan, false);
        return;
      }
      why_not.push_back(set.candidates.empty()
                            ? "no pod of a lower-priority gang of queue " + preemptor.queue +
                                  " is running"
                            : plan.detail);
    }
  }
  // Then reclaim (Volcano's `reclaim`): a queue that stays within its deserved share with this
  // gang's minimum takes room from reclaimable queues above theirs, down to their deserved,
  // never below their guarantee. The reclaimer ends within its share and its victims' queues at
  // or above theirs, so neither can reclaim from the other afterwards: no loop.
  if (cfg.reclaim) {
    auto own = st.cache.queues.find(preemptor.queue);
    const auto deserved =
        as_share(own != st.cache.queues.end() ? own->second.deserved : scheduler::resources{});
    if (!scheduler::fits(own_allocated + minimum_request(ask), deserved)) {
      // As the simulation says it: as_share's unbounded pods are not the user's.
      why_not.push_back("queue " + preemptor.queue + " would exceed its deserved share " +
                        scheduler::without_pods(deserved).to_string() +
                        " with this gang's minimum (it holds " +
                        scheduler::without_pods(own_allocated).to_string() + ")");
    } else {
      candidate_set set;
      std::vector<scheduler::victim_queue> queues;
      for (const auto& [name, q] : st.cache.queues) {
        if (name == preemptor.queue || !q.queue->reclaimable)
          continue;
        auto index = static_cast<uint32_t>(queues.size());
        auto allocated = add_candidates(st, name, index, std::numeric_limits<int32_t>::max(),
                                        ask.gang, set);
        const auto share = as_share(q.deserved);
        if (!scheduler::fits(allocated, share))  // Above its share: it may give some up.
          queues.push_back({index, allocated, share, q.queue->guarantee});
        else
          std::erase_if(set.candidates, [&](const auto& c) { return c.queue == index; });
      }
      auto plan = set.candidates.empty()
                      ? scheduler::preemption_plan{}
                      : plan_for(self, ask, set, std::numeric_limits<int32_t>::max(), queues);
      if (plan.found) {
        offer_plan(plan, true);
        return;
      }
      why_not.push_back(set.candidates.empty()
                            ? std::string("no reclaimable queue holds more than its deserved share")
                            : "reclaim: " + plan.detail);
    }
  }
  for (const auto& w : why_not)
    offer.detail += (offer.detail.empty() ? "" : "; ") + w;
  answer();
}

void do_evict(self_ptr self, eviction_order order) {
  auto& st = self->state;
  auto me = st.cache.groups.find(order.gang);
  if (me == st.cache.groups.end() || me->second.removed)
    return;  // The preemptor is gone: its holds went with it, and nobody needs the room.
  const auto message = eviction_message(me->second, order.reclaim);
  std::vector<uint64_t> victims;
  std::map<uint64_t, int32_t> per_gang;  // Victims per victim gang, for one event each.
  for (auto id : order.victims) {
    // Offered to this preemptor: evicted now (an offer to another, which cannot be, or a pod
    // already going, is left alone: its node releases it all the same).
    if (auto o = st.cache.offered.find(id);
        o != st.cache.offered.end() && o->second.preemptor == order.gang)
      st.cache.offered.erase(o);
    auto p = st.pods.find(id);
    if (p == st.pods.end() || !may_be_victim(st, id, p->second))
      continue;
    const auto& pod = *p->second.pod;
    record_event(self, resource_kind::pod, pod.meta.namespace_name, pod.meta.name, "Warning",
                 "Evict", "Pod evicted: " + message);
    ++per_gang[p->second.gang];
    victims.push_back(id);
    st.cache.evicting.insert(id);
  }
  for (const auto& [gang, count] : per_gang)
    if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end())
      record_event(self, resource_kind::pod_group, g->second.group->meta.namespace_name,
                   g->second.group->meta.name, "Warning",
                   order.reclaim ? "Reclaimed" : "Preempted",
                   std::to_string(count) + " pod(s) evicted: " + message);
  oplog::info(order.reclaim ? "reclaiming" : "preempting")
      .kv("preemptor", me->second.group->meta.namespace_name + "/" + me->second.group->meta.name)
      .kv("victims", static_cast<uint64_t>(victims.size()));
  st.world->evict(self, std::move(victims), message, order);
}

} // namespace phalanx::actors::registry_detail
