#include "actors/node_actor.hpp"

#include "actors/operator_log.hpp"

#include "scheduler/pod_neighbourhood.hpp"
#include "scheduler/quantity.hpp"

#include <caf/all.hpp>

#include <atomic>

namespace phalanx::actors {

namespace {

using self_ptr = node_actor::stateful_pointer<node_actor_state>;

void publish(self_ptr self) {
  auto& st = self->state;
  const auto reserved_for = st.ledger->room_reserved_for();
  if (reserved_for == 0 && !st.withholding) {
    st.ctx->view->publish_free(st.index, st.ledger->free());
    return;
  }
  // Free room first when a reservation starts, the reservation first when it ends: a planner
  // reading in between sees less room, never more.
  auto withheld = st.ledger->withheld();
  if (reserved_for != 0) {
    st.ctx->view->publish_free(st.index, st.ledger->free() - withheld);
    st.ctx->view->publish_reservation(st.index, reserved_for, withheld);
  } else {
    st.ctx->view->publish_reservation(st.index, 0, withheld);
    st.ctx->view->publish_free(st.index, st.ledger->free());
  }
  st.withholding = reserved_for != 0;
}

// The view's pods of a reserve leave with it: it was aborted or refused.
void forget_reserved_pods(node_actor_state& st, const scheduler::txn_id& txn) {
  auto i = st.reserved_pods.find(txn);
  if (i == st.reserved_pods.end())
    return;
  for (auto id : i->second)
    st.ctx->view->remove_pod(st.index, id);
  st.reserved_pods.erase(i);
}

// The rules between pods (scheduler/pod_neighbourhood.hpp), decided for the pods of a reserve
// on this node: its own pods exactly (this actor alone changes them), other nodes' as the view
// shows them, for the domains (zones, racks) this node shares with them. Returns the first rule
// an item breaks, or none; items are checked in order, each beside the ones before it.
//
// Publish, then check: the caller has put the items among this node's pods in the view before
// calling (and takes them out again if this refuses), with a sequentially consistent fence in
// between. Two reserves on different nodes of one zone that would break a rule together then
// cannot both pass: each publishes before it reads, so at least one sees the other (the
// store-buffer case the fences forbid). Both may see each other and both be refused; their
// gangs plan again.
scheduler::predicate_failure rules_refuse(const node_actor_state& st,
                                          const std::vector<node_ledger_type::item>& items) {
  const scheduler::node& here = *st.spec;
  scheduler::pod_neighbourhood hood;
  auto namespaces = st.ctx->view->namespaces();
  hood.set_namespaces(namespaces.get());
  std::vector<uint32_t> kinds;
  std::vector<const scheduler::pod*> deciding;
  kinds.reserve(items.size());
  deciding.reserve(items.size());
  for (const auto& it : items) {
    kinds.push_back(hood.prepare(*it.payload));
    deciding.push_back(it.payload.get());
  }
  hood.gather(*st.ctx->view, st.index, deciding);
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto failure = hood.check(kinds[i], st.index, here);
    if (failure != scheduler::predicate_failure::none)
      return failure;
    hood.add(st.index, here, *items[i].payload);
  }
  return scheduler::predicate_failure::none;
}

// Sends the votes of waiters the ledger decided after a change.
void answer_waiters(self_ptr self) {
  auto& st = self->state;
  for (auto& d : st.ledger->recheck_waiters()) {
    if (d.outcome.vote != scheduler::vote_kind::reserved)
      forget_reserved_pods(st, d.txn);
    auto i = st.coordinators.find(d.owner);
    if (i == st.coordinators.end())
      continue;
    self->send(i->second, vote_atom::value,
               vote{d.txn, st.index, d.outcome.vote, std::move(d.outcome.missing)});
  }
}

// Tells preemptors whose victims here are all gone that the room is theirs.
void answer_cleared(self_ptr self) {
  auto& st = self->state;
  for (const auto& c : st.ledger->take_cleared())
    if (auto i = st.coordinators.find(c.owner); i != st.coordinators.end())
      self->send(i->second, cleared_atom::value, c.txn, st.index);
}

// Hands committed pods (never placeholders) to the binder and tells the coordinator.
void hand_over(self_ptr self, const scheduler::txn_id& txn, pod_refs pods) {
  auto& st = self->state;
  std::erase_if(pods, [](const pod_ref& p) { return is_placeholder(p.id); });
  if (st.binder && !pods.empty())
    self->send(st.binder, bind_pods_atom::value, st.index, st.spec->meta.name, std::move(pods));
  if (auto i = st.coordinators.find(txn.gang); i != st.coordinators.end())
    self->send(i->second, committed_atom::value, txn, st.index);
}

void forget_placeholder(node_actor_state& st, uint64_t id) {
  for (auto i = st.placeholders_of.begin(); i != st.placeholders_of.end(); ++i)
    if (std::erase(i->second, id) > 0) {
      if (i->second.empty())
        st.placeholders_of.erase(i);
      return;
    }
}

void remember_coordinator(self_ptr self, uint64_t gang, const gang_actor& coordinator) {
  auto& st = self->state;
  auto [known, fresh] = st.coordinators.try_emplace(gang, coordinator);
  if (!fresh) {
    if (known->second == coordinator)
      return;
    // A parked gang's new actor (the same gang id): the old one ended idle, holding nothing
    // here, and its down message, which may come after this, must not abort the new one's holds.
    // The new actor counts its rounds from 1 again: the old one's finished rounds are no guide.
    st.gang_of.erase(known->second.address());
    known->second = coordinator;
    st.ledger->forget_finished(gang);
  }
  self->monitor(coordinator);
  st.gang_of.emplace(coordinator.address(), gang);
}

} // namespace

node_actor::behavior_type node_actor_impl(self_ptr self, context_ptr ctx, uint32_t index,
                                          node_ptr spec, binder_actor binder,
                                          pod_refs committed) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.index = index;
  st.spec = spec;
  st.binder = std::move(binder);
  st.ledger = std::make_unique<node_ledger_type>(spec->allocatable);
  st.ledger->reserve_committed(committed.size());
  for (const auto& ref : committed) {
    st.ledger->adopt(ref.id, ref.pod->requests, ref.pod);
    st.ctx->view->add_pod(index, ref.id, ref.pod);
  }
  publish(self);
  self->set_down_handler([self](caf::down_msg& msg) {
    auto& st = self->state;
    auto i = st.gang_of.find(msg.source);
    if (i == st.gang_of.end())
      return;
    auto gang = i->second;
    st.gang_of.erase(i);
    st.coordinators.erase(gang);
    bool changed = st.ledger->abort_owner(gang) > 0;
    st.ledger->forget_finished(gang); // Nothing more comes from it.
    std::vector<scheduler::txn_id> ended;
    for (const auto& [txn, _] : st.reserved_pods)
      if (txn.gang == gang)
        ended.push_back(txn);
    for (const auto& txn : ended)
      forget_reserved_pods(st, txn);
    if (auto p = st.placeholders_of.find(gang); p != st.placeholders_of.end()) {
      for (auto id : p->second) {
        changed |= st.ledger->release(id);
        st.ctx->view->remove_pod(st.index, id);
      }
      st.placeholders_of.erase(p);
    }
    if (changed) {
      publish(self);
      answer_waiters(self);
    }
  });
  return {
    [self](reserve_atom, reserve_request& req, gang_actor& coordinator) {
      auto& st = self->state;
      remember_coordinator(self, req.txn.gang, coordinator);
      // Each reserve's decision is a trace line (issue 30: the details below debug): the gang
      // is named as its PodGroup, read before the pods move into the ledger.
      std::string traced_gang;
      const std::size_t victim_count = req.victims.size();
      if (oplog::enabled(spdlog::level::trace) && !req.items.empty()) {
        const auto& first = *req.items.front().pod;  // A lone pod is its own gang.
        traced_gang = first.meta.namespace_name + "/" +
                      (first.group.empty() ? first.meta.name : first.group);
      }
      std::vector<node_ledger_type::item> items;
      items.reserve(req.items.size());
      for (auto& ref : req.items)
        items.push_back({ref.id, ref.pod->requests, std::move(ref.pod)});
      // The items join the view's pods here before anything is decided (rules_refuse says why),
      // and leave again unless the reserve is held or waits.
      std::vector<uint64_t> ids;
      std::vector<uint64_t> added;
      ids.reserve(items.size());
      for (const auto& it : items) {
        ids.push_back(it.pod_id);
        if (st.ctx->view->add_pod(st.index, it.pod_id, it.payload))
          added.push_back(it.pod_id);
      }
      std::atomic_thread_fence(std::memory_order_seq_cst);
      const bool rules = st.ctx->view->anti_affinity_pods() > 0 ||
                         std::any_of(items.begin(), items.end(), [](const auto& it) {
                           return scheduler::has_neighbour_rules(*it.payload);
                         });
      scheduler::vote_outcome outcome;
      auto broken = rules ? rules_refuse(st, items) : scheduler::predicate_failure::none;
      if (broken != scheduler::predicate_failure::none) {
        // A conflict, not a shortage: the pods in the way may go, and the gang's next plan
        // sees them.
        outcome.vote = scheduler::vote_kind::refused_conflict;
        st.ctx->metrics->reserve_rules_refused.inc();
      } else {
        outcome = req.victims.empty()
                      ? st.ledger->reserve(req.txn, req.ticket, req.txn.gang, std::move(items),
                                           req.may_wait)
                      : st.ledger->reserve_evicting(req.txn, req.ticket, req.txn.gang,
                                                    std::move(items), std::move(req.victims));
      }
      if (outcome.vote == scheduler::vote_kind::reserved ||
          outcome.vote == scheduler::vote_kind::waiting) {
        st.reserved_pods.insert_or_assign(req.txn, std::move(ids));
      } else {
        for (auto id : added)
          st.ctx->view->remove_pod(st.index, id);
      }
      if (!traced_gang.empty()) {
        std::string missing;
        for (const auto& m : outcome.missing)
          missing += (missing.empty() ? "" : ", ") + m.resource + " " +
                     scheduler::format_resource_amount(m.resource, m.requested) + " > " +
                     scheduler::format_resource_amount(m.resource, m.available);
        oplog::trace("reserve")
            .kv("node", st.spec->meta.name.view())
            .kv("gang", traced_gang)
            .kv("round", req.txn.round)
            .kv("pods", static_cast<uint64_t>(ids.size()))
            .kv("vote", scheduler::to_string(outcome.vote))
            .kv("rule", broken == scheduler::predicate_failure::none
                            ? std::string_view()
                            : scheduler::to_string(broken))
            .kv("victims", static_cast<uint64_t>(victim_count))
            .kv("missing", missing);
      }
      if (outcome.vote == scheduler::vote_kind::reserved)
        publish(self);
      // After the hold is published: a planner reading in between counts the room twice, which
      // errs on the side of not choosing the node.
      if (!req.in_flight.is_zero())
        st.ctx->view->remove_in_flight(st.index, req.in_flight);
      if (outcome.vote == scheduler::vote_kind::waiting)
        st.ctx->metrics->reserve_waits.inc();
      else
        self->send(coordinator, vote_atom::value,
                   vote{req.txn, st.index, outcome.vote, std::move(outcome.missing)});
      answer_cleared(self);  // A preemptor whose victims were gone already.
    },
    [self](commit_atom, scheduler::txn_id txn) {
      auto& st = self->state;
      auto items = st.ledger->commit(txn);
      if (items.empty())
        return;  // Unknown, aborted or already committed: commits are idempotent.
      st.reserved_pods.erase(txn);  // Its pods stay in the view, committed.
      publish(self);
      pod_refs pods;
      pods.reserve(items.size());
      for (auto& it : items) {
        if (is_placeholder(it.pod_id))
          st.placeholders_of[txn.gang].push_back(it.pod_id);
        pods.push_back({it.pod_id, std::move(it.payload)});
      }
      hand_over(self, txn, std::move(pods));
      answer_waiters(self);
    },
    [self](swap_atom, scheduler::txn_id txn, placeholder_swaps& swaps) {
      auto& st = self->state;
      pod_refs pods;
      bool changed = false;
      for (auto& s : swaps) {
        bool first_time = st.ledger->is_bound(s.placeholder);
        switch (st.ledger->replace(s.placeholder, s.pod.id, s.pod.pod->requests, s.pod.pod)) {
          case node_ledger_type::replace_outcome::replaced:
            if (first_time) {  // A repeated swap hands nothing over twice.
              forget_placeholder(st, s.placeholder);
              st.ctx->view->remove_pod(st.index, s.placeholder);
              st.ctx->view->add_pod(st.index, s.pod.id, s.pod.pod);
              pods.push_back(std::move(s.pod));
            }
            break;
          case node_ledger_type::replace_outcome::pod_gone:
            forget_placeholder(st, s.placeholder);
            st.ctx->view->remove_pod(st.index, s.placeholder);
            changed = true;
            break;
          case node_ledger_type::replace_outcome::refused:
            // The coordinator picked the placeholder because the pod fits in it: a bug. The pod
            // is not committed here (its binding is durable, so invariant checks will name it).
            oplog::error("pod cannot take over its placeholder")
                .kv("node", st.spec->meta.name)
                .kv("pod", s.pod.pod->meta.name)
                .kv("placeholder", s.placeholder);
            break;
        }
      }
      if (pods.empty() && !changed)
        return;  // A repeat: answered the first time.
      publish(self);
      hand_over(self, txn, std::move(pods));
      answer_waiters(self);
    },
    [self](abort_atom, scheduler::txn_id txn) {
      auto& st = self->state;
      forget_reserved_pods(st, txn);
      if (st.ledger->abort(txn)) {
        publish(self);
        answer_waiters(self);
      }
    },
    [self](release_atom, const std::vector<uint64_t>& pods) {
      auto& st = self->state;
      bool changed = false;
      for (auto id : pods) {
        changed |= st.ledger->release(id);
        st.ctx->view->remove_pod(st.index, id);
        if (is_placeholder(id))
          forget_placeholder(st, id);
      }
      if (changed) {
        publish(self);
        answer_cleared(self);
        answer_waiters(self);
      }
    },
    [self](adopt_atom, const pod_refs& pods) {
      auto& st = self->state;
      for (const auto& p : pods) {
        st.ledger->adopt(p.id, p.pod->requests, p.pod);
        st.ctx->view->add_pod(st.index, p.id, p.pod);
      }
      publish(self);
    },
    [self](labels_atom, const pod_refs& pods) {
      auto& st = self->state;
      for (const auto& p : pods)
        st.ctx->view->replace_pod(st.index, p.id, p.pod);
    },
    [self](room_atom, uint64_t gang, scheduler::resources& amount, gang_actor& coordinator) {
      auto& st = self->state;
      remember_coordinator(self, gang, coordinator);
      bool granted = st.ledger->reserve_room(gang, std::move(amount));
      if (granted)
        publish(self);
      self->send(coordinator, room_atom::value, st.index, granted);
    },
    [self](unreserve_atom, uint64_t gang) {
      auto& st = self->state;
      if (st.ledger->release_room(gang)) {
        publish(self);
        answer_waiters(self);
      }
    },
    [self](spec_atom, node_ptr spec) {
      auto& st = self->state;
      st.spec = spec;
      st.ledger->set_allocatable(spec->allocatable);
      st.ctx->view->publish_node(st.index, spec);
      publish(self);
      answer_waiters(self);
    },
    [self](inspect_atom) {
      auto& st = self->state;
      node_snapshot snap;
      snap.index = st.index;
      snap.name = st.spec->meta.name;
      snap.allocatable = st.ledger->allocatable();
      snap.committed = st.ledger->committed();
      snap.held = st.ledger->held();
      snap.holds = st.ledger->hold_count();
      snap.waiters = st.ledger->waiter_count();
      snap.bound_pods = st.ledger->bound_pod_ids();
      snap.in_flight = st.ctx->view->in_flight(st.index);
      snap.remembered_gangs = st.ledger->remembered_gang_count();
      snap.claimed_victims = st.ledger->claimed_victim_count();
      snap.claimed = st.ledger->claimed_room();
      snap.room_reserved_for = st.ledger->room_reserved_for();
      snap.labels = st.spec->meta.labels;
      return snap;
    },
  };
}

} // namespace phalanx::actors
