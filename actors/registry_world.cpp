// The Kubernetes world (DESIGN.md section 4a, actors/world_port.hpp): the apiserver is the truth.
// Its deltas (watch events, lists) are applied to the cache at once, as they come, and written to
// the store behind them as a checkpoint with each collection's watch resourceVersion, so a restart
// loads the cache and resumes the watches instead of listing a big cluster again. Bindings are
// written as intents before any node commits; the binder posts them and tells what became of each.
//
// The cache is the one the standalone world's catalog fills: deltas enter it through the same
// add_ and change_ functions as the catalog's writes. phalanxd's own HTTP API only reads here
// (the port's api_write_refusal).

#include "actors/operator_log.hpp"
#include "actors/world_port.hpp"


#include <unordered_set>

namespace phalanx::actors::registry_detail {

using api::resource_kind;

namespace {

std::string intent_key(const scheduler::pod& p) {
  return "intent/" + object_key(p.meta.namespace_name, p.meta.name);
}

std::string watch_key(resource_kind kind) { return "watch/" + std::string(api::to_string(kind)); }

// The checkpoint of one delta: its records, and the collection's resourceVersion with them.
storage::write_batch checkpoint_of(const world_delta& d) {
  storage::write_batch batch;
  if (!d.collection_version.empty())
    batch.put_world_meta(watch_key(d.kind), d.collection_version);
  return batch;
}

void persist_checkpoint(self_ptr self, storage::write_batch batch) {
  if (batch.empty())
    return;
  persist(self, std::move(batch), [](const status& s) {
    if (!s.ok())
      oplog::error("checkpoint not written").kv("error", s.to_string());
  });
}

class kubernetes_world final : public world_port {
public:
  std::string_view name() const noexcept override { return "kubernetes"; }

  std::string_view api_write_refusal() const noexcept override {
    return "phalanxd runs in Kubernetes mode: objects are created, changed and deleted through "
           "the cluster's apiserver (kubectl against the cluster), not here";
  }

  bool plans_from_start() const noexcept override { return false; }

  // Queues (Volcano installs "default") and PriorityClasses are the apiserver's, from its watch.
  void provide_defaults(self_ptr) override {}

  void restored(self_ptr self, restored_pods,
                const std::map<std::string, std::string>& world_meta) override {
    // The checkpoint: gangs start once this process may bind (lead), and it is ready once the
    // watches have caught up with the apiserver (do_world_delta, synced). Running pods are their
    // kubelets'.
    auto& st = self->state;
    restore_intents(st, world_meta);
    for (auto& [gang, g] : st.cache.groups)
      mark_emitted(st, g);
    oplog::info("checkpoint restored")
        .kv("nodes", static_cast<uint64_t>(st.cache.nodes.size()))
        .kv("queues", static_cast<uint64_t>(st.cache.queues.size()))
        .kv("podgroups", static_cast<uint64_t>(st.cache.groups.size()))
        .kv("pods", static_cast<uint64_t>(st.pods.size()))
        .kv("binding_intents", static_cast<uint64_t>(intents.size()));
  }

  void lead(self_ptr self) override {
    auto& st = self->state;
    if (st.cache.scheduling)
      return;
    st.cache.scheduling = true;
    oplog::info("scheduling starts")
        .kv("gangs", static_cast<uint64_t>(st.cache.groups.size()))
        .kv("intents", static_cast<uint64_t>(intents.size()));
    for (auto& [gang, g] : st.cache.groups)
      if (!g.actor && !g.parked && !restore_parked(self, g))
        spawn_gang(self, g);
    // Intents of an earlier run that the apiserver has not confirmed: post them again.
    std::unordered_map<uint32_t, pod_refs> by_node;
    for (const auto& [id, node] : intents)
      if (auto p = st.pods.find(id); p != st.pods.end())
        if (auto n = st.cache.nodes.find(node); n != st.cache.nodes.end())
          by_node[n->second.index].push_back({id, current_pod(p->second)});
    for (auto& [index, pods] : by_node)
      self->send(st.binder, bind_pods_atom::value, index,
                 st.cache.node_at[index] ? st.cache.node_at[index]->node->meta.name
                                   : scheduler::shared_string{},
                 std::move(pods));
  }

  // A restart posts again what the apiserver lacks.
  void bindings_written(self_ptr self, storage::write_batch& batch,
                        const std::vector<durable_binding>& bindings) override {
    auto& st = self->state;
    for (const auto& b : bindings) {
      auto p = st.pods.find(b.id);
      if (p == st.pods.end())
        continue;
      const auto& pod = *p->second.pod;
      batch.put_world_meta(intent_key(pod), pod.meta.uid.str() + " " + b.state.node_name.str());
    }
  }

  // Until the watch shows it (update_pod), or the binder finds it not ours to bind.
  void binding_durable(const durable_binding& b) override {
    intents[b.id] = b.state.node_name.str();
  }

  // Undone before any was posted.
  void bindings_undone(self_ptr self, storage::write_batch& batch,
                       const std::vector<uint64_t>& pods) override {
    auto& st = self->state;
    for (auto id : pods)
      if (auto p = st.pods.find(id); p != st.pods.end())
        batch.erase_world_meta(intent_key(*p->second.pod));
  }

  void binding_outcomes(self_ptr self, std::vector<binding_outcome> outcomes) override {
    auto& st = self->state;
    storage::write_batch batch;
    for (const auto& o : outcomes) {
      auto p = st.pods.find(o.pod);
      if (p == st.pods.end())
        continue;
      // The apiserver has the binding now, so a restart needs no record of it. The cache keeps
      // the intent until its watch shows the pod bound: the watch may still deliver a version
      // from before the binding (a condition written while the gang waited), and that one must
      // not unbind the pod, or the binding the watch shows next looks like someone else's.
      if (o.what == binding_outcome::type::gone)
        intents.erase(o.pod);
      batch.erase_world_meta(intent_key(*p->second.pod));
      if (o.what == binding_outcome::type::gone)
        oplog::warn("binding dropped")
            .kv("pod", p->second.pod->meta.namespace_name + "/" + p->second.pod->meta.name)
            .kv("reason", o.message);
    }
    persist_checkpoint(self, std::move(batch));
  }

  // The world writes each pod's PodScheduled condition from its reason, from the registry's
  // watch of pods: tell it of the pod.
  void pending_reason_changed(self_ptr self, uint64_t id, const pod_entry& e) override {
    if (is_watched(self, resource_kind::pod))
      announce(self, api::watch_event::type::modified, pod_view(self->state, id, e));
  }

  std::optional<int32_t> exit_code(const pod_entry&) const override { return std::nullopt; }

  // Deletes with a uid precondition, by the binder; the pods leave the cache when the watch
  // shows them gone.
  void evict(self_ptr self, std::vector<uint64_t> victims, const std::string& message,
             const eviction_order& order) override {
    auto& st = self->state;
    eviction_batch batch;
    for (auto id : victims) {
      const auto& pod = *st.pods.at(id).pod;
      batch.evictions.push_back(
          {pod.meta.namespace_name.str(), pod.meta.name.str(), pod.meta.uid.str(), message});
    }
    for (const auto& [pod, node] : order.nominated) {
      auto p = st.pods.find(pod);
      auto* n = node_at(st.cache, node);
      if (p != st.pods.end() && n)
        batch.nominations.push_back({p->second.pod->meta.namespace_name.str(),
                                     p->second.pod->meta.name.str(), n->node->meta.name.str()});
    }
    self->send(st.binder, evict_atom::value, std::move(batch));
  }

  /// Bindings made durable and not yet seen by the watch, by pod id (the node's name): posted
  /// again when a restarted process may bind; ended when the watch shows the pod bound there,
  /// when the pod leaves, or by the binder's `gone`.
  std::unordered_map<uint64_t, std::string> intents;

private:
  // The intents a restart found in the checkpoint, for the pods still there with the same uid.
  void restore_intents(const registry_state& st,
                       const std::map<std::string, std::string>& world_meta) {
    for (const auto& [key, value] : world_meta) {
      if (!key.starts_with("intent/"))
        continue;
      auto space = value.find(' ');
      if (space == std::string::npos)
        continue;
      auto uid = value.substr(0, space);
      auto node = value.substr(space + 1);
      auto id = pod_id_of(st, key.substr(7));
      if (id == 0 || st.pods.at(id).pod->meta.uid != uid)
        continue;  // Gone, or another pod now: nothing to post; the stale key is overwritten later.
      intents[id] = node;
    }
  }
};

// Deltas come only in Kubernetes mode (do_world_delta checks), whose world this is.
kubernetes_world& world_of(registry_state& st) {
  return static_cast<kubernetes_world&>(*st.world);
}

// Counts a pod bound on a node (by anyone) in that node's ledger and the registry's figures.
void count_on_node(self_ptr self, uint64_t id, const pod_entry& e) {
  auto& st = self->state;
  auto n = st.cache.nodes.find(e.node_name());
  if (n == st.cache.nodes.end())
    return;  // A node not (yet) known: its pods are counted when it comes (restore, upsert).
  n->second.allocated += e.pod->requests;
  ++n->second.pod_count;
  self->send(n->second.actor, adopt_atom::value, pod_refs{{id, current_pod(e)}});
}

void uncount_on_node(self_ptr self, uint64_t id, const pod_entry& e) {
  auto& st = self->state;
  auto n = st.cache.nodes.find(e.node_name());
  if (n == st.cache.nodes.end())
    return;
  n->second.allocated -= e.pod->requests;
  --n->second.pod_count;
  self->send(n->second.actor, release_atom::value, std::vector<uint64_t>{id});
}

// -- nodes

void upsert_node(self_ptr self, scheduler::node n, storage::write_batch& batch) {
  auto& st = self->state;
  auto name = n.meta.name.str();
  batch.put(n);
  auto i = st.cache.nodes.find(name);
  if (i == st.cache.nodes.end() || !i->second.live) {
    // Pods already bound to it (seen before it) count from the start.
    pod_refs committed;
    for (auto& [id, e] : st.pods)
      if (e.node_name() == name && !scheduler::is_terminal(e.phase()))
        committed.push_back({id, current_pod(e)});
    if (i != st.cache.nodes.end())
      st.cache.nodes.erase(i);
    add_node(self, std::move(n), std::move(committed));
    return;
  }
  if (*i->second.node != n)
    change_node(self, i->second, std::move(n));
}

void remove_node(self_ptr self, const std::string& name, storage::write_batch& batch) {
  batch.erase(storage::record_kind::node, name);
  // Its pods stay in the cache until the apiserver deletes them (the node lifecycle controller
  // does); they hold no room anywhere else meanwhile.
  remove_node_entry(self, name);
}

// -- queues

void upsert_queue(self_ptr self, scheduler::queue q, storage::write_batch& batch) {
  auto& st = self->state;
  auto name = q.meta.name.str();
  batch.put(storage::queue_record{q});
  auto i = st.cache.queues.find(name);
  if (i == st.cache.queues.end()) {
    add_queue(self, std::move(q));
    // Gangs that waited for their queue get their actors now. Parked ones (a queue of the name
    // removed and made again) wake: the new queue counts what they hold from their actors'
    // first usage.
    auto gangs = st.cache.gangs_by_queue.find(name);
    if (gangs == st.cache.gangs_by_queue.end())
      return;
    const std::vector<uint64_t> ids(gangs->second.begin(), gangs->second.end());
    for (auto gang : ids) {
      auto g = st.cache.groups.find(gang);
      if (g == st.cache.groups.end() || g->second.actor)
        continue;
      if (g->second.parked)
        wake_gang(self, g->second);
      else
        spawn_gang(self, g->second);
    }
    return;
  }
  if (*i->second.queue != q)
    change_queue(self, i->second, std::move(q));
}

void remove_queue(self_ptr self, const std::string& name, storage::write_batch& batch) {
  batch.erase(storage::record_kind::queue, name);
  remove_queue_entry(self, name);
}

// -- PodGroups

// A PodGroup's priority from its priorityClassName, as Volcano resolves it: the cluster's
// PriorityClass of that name once the world watches them, else the configuration's; a group
// naming none takes the globalDefault class's. nullopt: nothing to resolve it from.
std::optional<int32_t> class_priority(const registry_state& st, std::string_view class_name) {
  if (!st.priority_classes_watched)
    return priority_of(st.ctx->config.scheduling, class_name);
  if (class_name.empty()) {
    const auto* fallback = default_priority_class(st);
    return fallback ? std::optional<int32_t>(fallback->value) : std::nullopt;
  }
  auto i = st.priority_classes.find(class_name);
  if (i == st.priority_classes.end())
    return std::nullopt;
  return i->second->value;
}

void upsert_group(self_ptr self, scheduler::pod_group g, storage::write_batch& batch) {
  auto& st = self->state;
  auto key = object_key(g.meta.namespace_name, g.meta.name);
  if (auto p = class_priority(st, g.priority_class_name); p && g.priority == 0)
    g.priority = *p;
  batch.put(storage::pod_group_record{g});
  if (auto gang = st.cache.group_ids.find(key); gang != 0) {
    auto& entry = st.cache.groups.at(gang);
    // A lone pod's gang meets its PodGroup object ("podgroup-<pod uid>", made by us or by
    // Volcano's controller): the same group, now on the apiserver. The gang goes on under the
    // object, its actor and whatever it is doing (a round, a binding on its way to the store)
    // untouched: ending it for a new one under the object cost a round per lone pod, undid
    // bindings in flight, and dipped its queue's usage, which woke every sleeping gang of the
    // queue, at the rate PodGroups were created (found by `phalanx-loadtest k8s`: 10,000 lone
    // pods stalled after 437). Later changes of the object are spec changes like any other.
    const bool adopting = entry.implicit;
    if (!adopting && entry.group->meta.uid == g.meta.uid) {
      if (*entry.group != g)
        group_changed(self, change_group(self, entry, std::move(g)));
      return;
    }
    if (adopting) {
      // The object may say more than the gang made for the pod (minResources, as Volcano's
      // controller writes it): the actor plans with it. A new queue or priority places it anew
      // in its queue's order: a new incarnation.
      bool queue_changed = entry.group->queue != g.queue || entry.group->priority != g.priority;
      auto updated = std::make_shared<const scheduler::pod_group>(std::move(g));
      entry.implicit = false;
      if (queue_changed) {
        renew_gang(self, entry.gang, std::move(updated));
        return;
      }
      entry.group = updated;
      if (entry.actor)
        self->send(entry.actor, spec_atom::value, entry.group);
      // The object's status is empty on the apiserver while the gang's did not change: told as
      // a change whatever the digest says, so that the world writes it.
      mark_emitted(st, entry);
      if (is_watched(self, resource_kind::pod_group))
        announce(self, api::watch_event::type::modified, group_view(st, entry));
      return;
    }
    // Another PodGroup under the name: the old one was deleted (the watch may fold the two). The
    // index reads a gang's key in `groups`: the entry leaves the index before it leaves the map.
    unindex_group(st.cache, entry);
    auto old = st.cache.groups.extract(gang);
    end_gang(self, old.mapped());
    for (auto id : old.mapped().pods)
      if (auto p = st.pods.find(id); p != st.pods.end())
        p->second.gang = 0;
    st.cache.orphans[key] = old.mapped().pods;
  }
  auto& entry = add_group(self, key, std::make_shared<const scheduler::pod_group>(std::move(g)));
  if (is_watched(self, resource_kind::pod_group))
    announce(self, api::watch_event::type::added, group_view(st, entry));
}

void remove_group(self_ptr self, const std::string& key, storage::write_batch& batch) {
  auto& st = self->state;
  batch.erase(storage::record_kind::pod_group, key);
  auto gang = st.cache.group_ids.find(key);
  if (gang == 0)
    return;
  auto view = group_view(st, st.cache.groups.at(gang));
  remove_group_entry(self, gang);
  if (is_watched(self, resource_kind::pod_group))
    announce(self, api::watch_event::type::deleted, view);
}

// -- pods

void remove_pod_ids(self_ptr self, std::vector<uint64_t> ids) {
  auto& st = self->state;
  // The checkpoint's records go with them (delete_pods erases each pod's key), and their intents.
  storage::write_batch batch;
  for (auto id : ids)
    if (world_of(st).intents.erase(id) != 0)
      if (auto p = st.pods.find(id); p != st.pods.end())
        batch.erase_world_meta(intent_key(*p->second.pod));
  delete_pods(self, std::move(ids), std::move(batch), pod_keys::tombstone, [](const status& s) {
    if (!s.ok())
      oplog::error("deleted pods not removed from the checkpoint").kv("error", s.to_string());
  });
}

// What a pod's apiserver state means for the cache's entry of the same pod (same uid).
void update_pod(self_ptr self, uint64_t id, const scheduler::pod& seen,
                storage::write_batch& batch) {
  auto& st = self->state;
  auto& e = st.pods.at(id);
  auto now = e.state();
  auto next = scheduler::runtime_of(seen);
  if (e.pod->is_gated() && !seen.is_gated() && !next.is_bound()) {
    // Its gates were removed (Kueue, or a user's patch): it joins its gang now.
    auto fresh = seen;
    fresh.priority = e.pod->priority;  // As resolved when it came (upsert_pod).
    fresh.requests.pods = 1;
    share_pod_names(st, fresh);
    auto pod = std::make_shared<const scheduler::pod>(std::move(fresh));
    batch.put(pod);
    ungate_pod(self, id, pod);
    if (is_watched(self, resource_kind::pod))
      if (auto p = st.pods.find(id); p != st.pods.end())
        announce(self, api::watch_event::type::modified, pod_view(st, id, p->second));
    return;
  }
  if (seen.meta.labels != e.pod->meta.labels) {
    // Relabelled (kubectl label): what rules between pods match, its own and its neighbours'.
    auto fresh = std::make_shared<scheduler::pod>(*e.pod);
    fresh->meta.labels = seen.meta.labels;
    e.pod = std::move(fresh);
    pod_relabelled(self, id);
    if (next.node_name == now.node_name && next.phase == now.phase) {
      auto kept = *e.pod;
      scheduler::set_runtime(kept, now);
      batch.put(kept);
    }
  }
  bool intent = world_of(st).intents.count(id) != 0;
  if (intent && !next.is_bound() && !scheduler::is_terminal(next.phase)) {
    // Our binding is on its way: the apiserver has not seen it yet. Keep it.
    next.node_name = now.node_name;
  }
  if (intent && next.is_bound() && next.node_name == now.node_name)
    world_of(st).intents.erase(id);  // Confirmed; the binder's outcome erases the stored intent.
  if (next.node_name == now.node_name && next.phase == now.phase)
    return;
  // The checkpoint keeps the pod as the cache holds it: bound where an intent of ours binds it.
  auto kept = seen;
  scheduler::set_runtime(kept, next);
  batch.put(kept);
  const bool held_before = now.is_bound() && !scheduler::is_terminal(now.phase);
  const bool holds_now = next.is_bound() && !scheduler::is_terminal(next.phase);
  const bool moved = now.node_name != next.node_name;
  if (held_before && (!holds_now || moved))
    uncount_on_node(self, id, e);
  e.set_state(next);
  if (holds_now && (!held_before || moved)) {
    count_on_node(self, id, e);
    // Bound by someone else while ours to place: its gang no longer places it.
    if (e.gang != 0 && !intent)
      if (auto g = st.cache.groups.find(e.gang); g != st.cache.groups.end())
        tell_gang(self, g->second, finished_atom::value,
                  std::vector<pod_outcome>{{id, scheduler::pod_phase::failed, true}});
  }
  if (scheduler::is_terminal(next.phase) && !scheduler::is_terminal(now.phase) && e.gang != 0)
    if (auto g = st.cache.groups.find(e.gang); g != st.cache.groups.end()) {
      tell_gang(self, g->second, finished_atom::value,
                std::vector<pod_outcome>{{id, next.phase, false}});
      group_changed(self, g->second);
    }
  if (is_watched(self, resource_kind::pod))
    announce(self, api::watch_event::type::modified, pod_view(st, id, e));
}

void upsert_pod(self_ptr self, scheduler::pod p, storage::write_batch& batch,
                std::vector<uint64_t>& replaced) {
  auto& st = self->state;
  auto key = object_key(p.meta.namespace_name, p.meta.name);
  if (auto id = pod_id_of(st, key); id != 0) {
    if (st.pods.at(id).pod->meta.uid == p.meta.uid)
      return update_pod(self, id, p, batch);
    replaced.push_back(id);  // Another pod under the name: the old one is gone.
    return;  // The new one comes once the old one is removed (upsert_pods does it in order).
  }
  if (auto prio = class_priority(st, p.priority_class_name); prio && p.priority == 0)
    p.priority = *prio;
  p.requests.pods = 1;
  share_pod_names(st, p);
  auto pod = std::make_shared<const scheduler::pod>(std::move(p));
  batch.put(pod);
  auto& slot = insert_pod(self, pod);
  auto& [id, e] = slot;
  if (e.is_bound() && !scheduler::is_terminal(e.phase()))
    count_on_node(self, id, e);
  if (!e.is_bound())
    attach_pod(self, slot);
  else if (!e.pod->group.empty() && is_our_scheduler(st.ctx->config.scheduling,
                                                     e.pod->scheduler_name)) {
    // A member bound before (by us, before a restart without checkpoint): its gang counts it.
    auto gkey = object_key(e.pod->meta.namespace_name, e.pod->group);
    if (auto gang = st.cache.group_ids.find(gkey); gang != 0) {
      auto& g = st.cache.groups.at(gang);
      e.gang = gang;
      g.pods.push_back(id);
      tell_gang(self, g, pods_atom::value, pod_refs{{id, current_pod(e)}});
    }
  }
  if (is_watched(self, resource_kind::pod))
    announce(self, api::watch_event::type::added, pod_view(st, id, e));
}

// Applies upserts of pods; a pod whose name now holds another pod waits for the old one's removal.
void upsert_pods(self_ptr self, std::vector<api::object> objects, storage::write_batch batch) {
  std::vector<uint64_t> replaced;
  std::vector<scheduler::pod> waiting;
  for (auto& o : objects) {
    auto& p = std::get<api::pod_object>(o).pod;
    auto before = replaced.size();
    upsert_pod(self, p, batch, replaced);
    if (replaced.size() != before)
      waiting.push_back(std::move(p));
  }
  persist_checkpoint(self, std::move(batch));
  if (replaced.empty())
    return;
  auto& st = self->state;
  storage::write_batch intents;
  for (auto id : replaced)
    if (world_of(st).intents.erase(id) != 0)
      intents.erase_world_meta(intent_key(*st.pods.at(id).pod));
  delete_pods(self, std::move(replaced), std::move(intents), pod_keys::tombstone,
              [self, waiting = std::move(waiting)](const status&) {
    storage::write_batch later;
    std::vector<uint64_t> again;
    for (auto p : waiting)
      upsert_pod(self, std::move(p), later, again);
    persist_checkpoint(self, std::move(later));
  });
}

// The keys the cache holds of a kind (for a list's replace: what the list lacks was deleted).
std::vector<std::string> cached_keys(const registry_state& st, resource_kind kind) {
  std::vector<std::string> out;
  switch (kind) {
    case resource_kind::node:
      for (const auto& [name, n] : st.cache.nodes)
        if (n.live)
          out.push_back(name);
      break;
    case resource_kind::queue:
      for (const auto& [name, q] : st.cache.queues)
        out.push_back(name);
      break;
    case resource_kind::pod_group:
      for (const auto& [gang, g] : st.cache.groups)
        if (!g.implicit)
          out.push_back(g.key.str());
      break;
    case resource_kind::pod:
      for (const auto& [id, e] : st.pods)
        out.push_back(object_key(e.pod->meta.namespace_name, e.pod->meta.name));
      break;
    case resource_kind::job:
    case resource_kind::priority_class:  // Sent whole (apply_priority_classes).
      break;
  }
  return out;
}

std::string key_of(const api::object& o) {
  const auto& m = api::meta_of(o);
  return object_key(m.namespace_name, m.name);
}

void remove_objects(self_ptr self, resource_kind kind, const std::vector<std::string>& keys,
                    storage::write_batch& batch) {
  auto& st = self->state;
  std::vector<uint64_t> pods;
  for (const auto& key : keys) {
    switch (kind) {
      case resource_kind::node:
        remove_node(self, key, batch);
        break;
      case resource_kind::queue:
        remove_queue(self, key, batch);
        break;
      case resource_kind::pod_group:
        remove_group(self, key, batch);
        break;
      case resource_kind::pod:
        if (auto id = pod_id_of(st, key); id != 0)
          pods.push_back(id);
        break;
      case resource_kind::job:
      case resource_kind::priority_class:
        break;
    }
  }
  persist_checkpoint(self, std::move(batch));
  batch = storage::write_batch{};
  if (!pods.empty())
    remove_pod_ids(self, std::move(pods));
}

// The cluster's PriorityClasses, whole: kept, and every PodGroup whose priority they change
// gets the new one (Volcano resolves a PodGroup's priority again at every session). A class
// deleted leaves the priorities it gave as they are, as a pod's admitted priority stays.
void apply_priority_classes(self_ptr self, world_delta& d) {
  auto& st = self->state;
  st.priority_classes.clear();
  for (auto& o : d.objects) {
    auto& c = std::get<api::priority_class_object>(o).priority_class;
    auto name = c.meta.name.str();
    st.priority_classes[name] = std::make_shared<const scheduler::priority_class>(std::move(c));
  }
  st.priority_classes_watched = true;
  std::vector<scheduler::pod_group> changed;
  for (const auto& [gang, g] : st.cache.groups) {
    // A lone pod's own gang has the pod's priority, which the apiserver's admission resolved.
    if (g.removed || g.implicit)
      continue;
    auto p = class_priority(st, g.group->priority_class_name);
    if (!p || *p == g.group->priority)
      continue;
    changed.push_back(*g.group);
    changed.back().priority = *p;
  }
  storage::write_batch batch;
  for (auto& g : changed)
    upsert_group(self, std::move(g), batch);
  persist_checkpoint(self, std::move(batch));
}

// The cluster's Namespaces' labels, whole: published for the plans and votes that match
// namespaceSelectors. Pods such a selector kept out may fit now, and pods it let in may not:
// every queue's waiting gangs try again, as kube-scheduler moves pods with affinity terms back
// to its active queue on a Namespace change. Bound pods stay where they are (the rules hold
// at scheduling, IgnoredDuringExecution).
void apply_namespaces(self_ptr self, scheduler::namespace_directory_ptr namespaces) {
  auto& st = self->state;
  auto was = st.ctx->view->namespaces();
  if (was && namespaces && *was == *namespaces)
    return;
  st.ctx->view->publish_namespaces(std::move(namespaces));
  for (auto& [name, q] : st.cache.queues)
    self->send(q.actor, wake_atom::value);
}

} // namespace

void do_world_delta(self_ptr self, world_delta d) {
  auto& st = self->state;
  if (!dynamic_cast<kubernetes_world*>(st.world.get())) {
    oplog::error("a delta from the apiserver reached another world; dropped")
        .kv("world", st.world->name());
    return;
  }
  if (d.what == world_delta::type::priority_classes)
    return apply_priority_classes(self, d);
  if (d.what == world_delta::type::namespaces)
    return apply_namespaces(self, std::move(d.namespaces));
  if (d.what == world_delta::type::synced) {
    if (!st.ready->load()) {
      oplog::info("caches synced")
          .kv("nodes", static_cast<uint64_t>(st.cache.nodes.size()))
          .kv("queues", static_cast<uint64_t>(st.cache.queues.size()))
          .kv("podgroups", static_cast<uint64_t>(st.cache.groups.size()))
          .kv("pods", static_cast<uint64_t>(st.pods.size()));
      st.ready->store(true);
      st.ctx->metrics->ready.set(1);
    }
    return;
  }
  auto batch = checkpoint_of(d);
  if (d.what == world_delta::type::remove) {
    std::vector<std::string> keys;
    for (const auto& o : d.objects)
      keys.push_back(key_of(o));
    return remove_objects(self, d.kind, keys, batch);
  }
  if (d.what == world_delta::type::replace_all) {
    std::unordered_set<std::string> listed;
    for (const auto& o : d.objects)
      listed.insert(key_of(o));
    std::vector<std::string> gone;
    for (auto& key : cached_keys(st, d.kind))
      if (!listed.count(key))
        gone.push_back(std::move(key));
    if (!gone.empty()) {
      storage::write_batch removals;
      remove_objects(self, d.kind, gone, removals);
    }
  }
  switch (d.kind) {
    case resource_kind::node:
      for (auto& o : d.objects)
        upsert_node(self, std::move(std::get<api::node_object>(o).node), batch);
      break;
    case resource_kind::queue:
      for (auto& o : d.objects)
        upsert_queue(self, std::move(std::get<api::queue_object>(o).queue), batch);
      break;
    case resource_kind::pod_group:
      for (auto& o : d.objects)
        upsert_group(self, std::move(std::get<api::pod_group_object>(o).group), batch);
      break;
    case resource_kind::pod:
      return upsert_pods(self, std::move(d.objects), std::move(batch));
    case resource_kind::job:
    case resource_kind::priority_class:
      break;
  }
  persist_checkpoint(self, std::move(batch));
}

std::unique_ptr<world_port> make_kubernetes_world() {
  return std::make_unique<kubernetes_world>();
}

} // namespace phalanx::actors::registry_detail
