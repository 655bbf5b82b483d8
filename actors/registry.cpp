#include "actors/operator_log.hpp"
#include "actors/world_port.hpp"

#include "scheduler/fair_share.hpp"
#include "scheduler/validation.hpp"


#include <cstdio>

namespace phalanx::actors {

namespace registry_detail {

void persist(self_ptr self, storage::write_batch batch, std::function<void(const status&)> then) {
  auto& st = self->state;
  auto cookie = st.next_cookie++;
  st.in_flight.emplace(cookie, std::move(then));
  self->send(st.writer, persist_atom::value,
             std::make_shared<storage::write_batch>(std::move(batch)), cookie,
             persist_listener_actor{self});
}

void persist_state(self_ptr self, storage::write_batch batch, std::vector<uint64_t> pods,
                   std::function<void(const status&)> then) {
  auto& st = self->state;
  const auto ticket = st.next_state_write++;
  st.state_writes.emplace_back(ticket, std::move(pods));
  persist(self, std::move(batch), [self, ticket, then = std::move(then)](const status& s) {
    then(s);  // The states are applied (or the write failed) before anyone waiting looks.
    auto& st = self->state;
    // The first on its way, but for a write the store failed out of turn.
    if (!st.state_writes.empty() && st.state_writes.front().first == ticket)
      st.state_writes.pop_front();
    else
      std::erase_if(st.state_writes, [ticket](const auto& w) { return w.first == ticket; });
    auto waiting = st.after_state_write.extract(ticket);
    if (waiting.empty())
      return;
    for (auto& work : waiting.mapped())
      work();
  });
}

void after_state_writes_in_flight(self_ptr self, std::function<void()> work) {
  auto& st = self->state;
  if (st.state_writes.empty())
    return work();
  st.after_state_write[st.state_writes.back().first].push_back(std::move(work));
}

void when_no_state_write(self_ptr self, uint64_t id, std::function<void()> work) {
  auto& st = self->state;
  // A scan of the pods on their way: a pod's record written whole (a relabel) is rare, and it
  // scans again only once the writes on their way when it came have ended.
  for (const auto& [ticket, pods] : st.state_writes)
    if (std::find(pods.begin(), pods.end(), id) != pods.end()) {
      after_state_writes_in_flight(self, [self, id, work = std::move(work)]() mutable {
        when_no_state_write(self, id, std::move(work));
      });
      return;
    }
  work();
}

void run_later(self_ptr self, std::function<void()> work) {
  auto& st = self->state;
  auto cookie = st.next_cookie++;
  st.continuations.emplace(cookie, std::move(work));
  self->send(self, continue_atom::value, cookie);
}

void run_after(self_ptr self, scheduler::duration delay, std::function<void()> work) {
  auto& st = self->state;
  auto cookie = st.next_cookie++;
  st.continuations.emplace(cookie, std::move(work));
  self->delayed_send(self, std::chrono::duration_cast<std::chrono::milliseconds>(delay),
                     continue_atom::value, cookie);
}

namespace {

// Versions reserved per durable ceiling; a new ceiling is asked for once half of the room left
// under the last one is used, so the store confirms it long before the versions reach it.
constexpr uint64_t version_block = uint64_t{1} << 22;

} // namespace

void reserve_versions(self_ptr self) {
  auto& st = self->state;
  st.version_ceiling = st.resource_version + version_block;
  storage::write_batch batch;
  batch.reserve_versions_through(st.version_ceiling);
  persist(self, std::move(batch), [self, ceiling = st.version_ceiling](const status& s) {
    if (!s.ok()) {
      oplog::error("resource versions not made durable")
          .kv("ceiling", uint64_t{ceiling})
          .kv("error", s.to_string());
      return;
    }
    auto& st = self->state;
    st.durable_version_ceiling = std::max(st.durable_version_ceiling, ceiling);
  });
}

uint64_t next_version(self_ptr self) {
  auto& st = self->state;
  auto version = ++st.resource_version;
  if (version + version_block / 2 > st.version_ceiling)
    reserve_versions(self);
  // Only if the store took longer to confirm a ceiling than the registry took to hand out
  // 2 million versions: a crash now could hand this version out again after the restart. Not
  // during a start's restore, whose first write asks the new ceiling: what the restore creates
  // (the default queue, the default PriorityClasses) is written after it.
  if (version == st.durable_version_ceiling + 1 && st.durable_version_ceiling != 0 &&
      st.ready->load())
    oplog::warn("resource version handed out above the durable ceiling")
        .kv("version", uint64_t{version})
        .kv("ceiling", uint64_t{st.durable_version_ceiling});
  return version;
}

scheduler::object_uid new_uid(self_ptr self) {
  auto& r = self->state.random;
  const uint64_t hi = r();
  return scheduler::object_uid::make_uuid(hi, r(), 4);
}

bool is_watched(self_ptr self, api::resource_kind kind) {
  return self->state.watched[kind_index(kind)];
}

void announce(self_ptr self, api::watch_event::type type, api::object obj) {
  auto& st = self->state;
  auto kind = api::kind_of(obj);
  auto version = api::meta_of(obj).resource_version;
  api::watch_event event{type, std::move(obj)};
  if (!st.watched[kind_index(kind)])
    return;
  bool any_closed = false;
  for (auto& w : st.watchers) {
    if (w.kind != kind || !w.sink)
      continue;
    const auto& meta = api::meta_of(event.obj);
    if (!w.options.namespace_name.empty() && meta.namespace_name != w.options.namespace_name)
      continue;
    if (!w.options.selector.matches(meta.labels))
      continue;
    if (!w.sink->on_event(event)) {
      w.sink = nullptr;
      any_closed = true;
    }
  }
  if (any_closed) {
    std::erase_if(st.watchers, [](const auto& w) { return !w.sink; });
    st.watched.fill(false);
    for (const auto& w : st.watchers)
      st.watched[kind_index(w.kind)] = true;
  }
  st.history.emplace_back(version, std::move(event));
  if (st.history.size() > st.ctx->config.watch_history) {
    st.history_dropped_through = st.history.front().first;
    st.history.pop_front();
  }
}

std::string implicit_queue_of(const scheduler::pod& p) {
  if (auto q = p.meta.annotations.find("scheduling.volcano.sh/queue-name"))
    return std::string(*q);
  return std::string(scheduler::default_queue_name);
}

status check_queue_accepts(const scheduling_cache& cache, const std::string& queue,
                           std::string_view field) {
  auto i = cache.queues.find(queue);
  if (i == cache.queues.end())
    return {errc::invalid_argument, std::string(field) + ": Not found: \"" + queue +
                                        "\": queue does not exist"};
  if (i->second.queue->state != scheduler::queue_state::open)
    return {errc::failed_precondition,
            std::string(field) + ": Forbidden: queue \"" + queue + "\" is " +
                std::string(scheduler::to_string(i->second.queue->state)) +
                "; only Open queues accept new work"};
  if (const auto* child = first_child(cache, queue))
    return {errc::invalid_argument, std::string(field) + ": Invalid value: \"" + queue +
                                        "\": the queue has child queues (\"" + *child +
                                        "\"); only leaf queues take PodGroups and jobs"};
  // A closed ancestor closes its subtree to new work (Volcano's hierarchical queues).
  if (const auto* closed = closed_ancestor(cache, *i->second.queue))
    return {errc::failed_precondition,
            std::string(field) + ": Forbidden: queue \"" + queue + "\" is under queue \"" +
                closed->meta.name.str() + "\", which is Closed; only queues whose ancestors are "
                "Open accept new work"};
  return {};
}

const std::string* first_child(const scheduling_cache& cache, std::string_view queue) {
  // Every create asks: a walk of the queues' parents, no copy of their specs.
  for (const auto& [name, q] : cache.queues)
    if (q.queue->parent == queue)
      return &name;
  return nullptr;
}

const scheduler::queue* closed_ancestor(const scheduling_cache& cache, const scheduler::queue& q) {
  std::set<std::string, std::less<>> seen{q.meta.name.str()};
  for (auto parent = q.parent; !scheduler::is_child_of_root(parent);) {
    auto p = cache.queues.find(parent);
    if (p == cache.queues.end() || !seen.insert(parent).second)
      return nullptr;
    if (p->second.queue->state != scheduler::queue_state::open)
      return p->second.queue.get();
    parent = p->second.queue->parent;
  }
  return nullptr;
}

void refresh_queue_states(self_ptr self) {
  auto& st = self->state;
  for (auto& [name, q] : st.cache.queues) {
    auto effective = q.queue;
    if (q.queue->state == scheduler::queue_state::open) {
      // Why it admits nothing, for its waiting gangs' reason.
      std::string because;
      if (const auto* child = first_child(st.cache, name))
        because = "it has child queues (\"" + *child + "\"); only leaf queues take PodGroups";
      else if (const auto* closed = closed_ancestor(st.cache, *q.queue))
        because = "it is under queue \"" + closed->meta.name.str() + "\", which is " +
                  std::string(scheduler::to_string(closed->state));
      if (!because.empty()) {
        auto copy = *q.queue;
        copy.state = scheduler::queue_state::closed;
        copy.meta.annotations.set(effective_closed_reason_key, because);
        effective = std::make_shared<const scheduler::queue>(std::move(copy));
      }
    }
    if (q.effective && *q.effective == *effective)
      continue;
    const bool first = !q.effective;
    q.effective = effective;
    if (!first || effective != q.queue)  // Spawned with its own spec: nothing to tell.
      self->send(q.actor, spec_atom::value, effective);
  }
}

std::vector<scheduler::queue> queue_specs(const scheduling_cache& cache) {
  std::vector<scheduler::queue> out;
  out.reserve(cache.queues.size());
  for (const auto& [name, q] : cache.queues)
    out.push_back(*q.queue);
  return out;
}

const scheduler::priority_class* default_priority_class(const registry_state& st) {
  // At most one is the default (create and update refuse a second); should a store hold two,
  // the lowest value wins, as kube-apiserver's admission picks.
  const scheduler::priority_class* found = nullptr;
  for (const auto& [name, c] : st.priority_classes)
    if (c->global_default && (!found || c->value < found->value))
      found = c.get();
  return found;
}

status check_sole_default(const registry_state& st, const scheduler::priority_class& c) {
  if (!c.global_default)
    return {};
  std::string other = st.default_class_on_its_way;
  if (const auto* d = default_priority_class(st); d && d->meta.name != c.meta.name)
    other = d->meta.name.str();
  if (other.empty() || other == c.meta.name)
    return {};
  return {errc::forbidden, "priorityclasses.scheduling.k8s.io \"" + c.meta.name.str() +
                               "\" is forbidden: PriorityClass " + other +
                               " is already marked as default. Only one default can exist"};
}

result<int32_t> resolve_priority(const registry_state& st, std::string_view class_name,
                                 int32_t given, std::string_view field) {
  if (class_name.empty()) {
    // Kubernetes' admission gives the default class's value; a priority written in the spec is
    // kept (the apiserver would refuse it; our manifests and load tests set it directly).
    if (given != 0)
      return given;
    const auto* fallback = default_priority_class(st);
    return fallback ? fallback->value : 0;
  }
  auto i = st.priority_classes.find(class_name);
  if (i == st.priority_classes.end())
    return status{errc::invalid_argument,
                  std::string(field) + ": Not found: \"" + std::string(class_name) +
                      "\": no PriorityClass with name " + std::string(class_name) +
                      " was found"};
  return i->second->value;
}

} // namespace registry_detail

namespace {

const scheduler::pod& pod_of(const registry_state::pod_map& pods, uint64_t id) {
  return *pods.at(id).pod;
}

} // namespace

// The pod names pod_ids is searched by (registry.hpp).
std::size_t registry_state::pod_name_ops::hash(const pod_name& key) const noexcept {
  return scheduler::hash_namespaced_name(key.first, key.second);
}

std::size_t registry_state::pod_name_ops::hash_of(uint64_t id) const {
  const auto& p = pod_of(*pods, id);
  return scheduler::hash_namespaced_name(p.meta.namespace_name, p.meta.name);
}

bool registry_state::pod_name_ops::matches(const pod_name& key, uint64_t id) const {
  const auto& p = pod_of(*pods, id);
  return p.meta.name == key.second && p.meta.namespace_name == key.first;
}

// The PodGroup keys group_ids is searched by (registry.hpp).
std::size_t registry_state::group_key_ops::hash(std::string_view key) const noexcept {
  return std::hash<std::string_view>{}(key);
}

std::size_t registry_state::group_key_ops::hash_of(uint64_t gang) const {
  return hash(groups->at(gang).key);
}

bool registry_state::group_key_ops::matches(std::string_view key, uint64_t gang) const {
  return groups->at(gang).key == key;
}

namespace {

/// How many changes of the events the journal keeps. A watch of events asks for them 4 times a
/// second: this covers a burst of 100,000 pods bound in between, each a Scheduled ADDED and a
/// FailedScheduling DELETED (some 70 MB while events are watched).
constexpr std::size_t event_changes_kept = 200000;

/// The events' first version in this run: its start in milliseconds, shifted by 20 bits, so that
/// a version another run gave (before, or after a clock step back of less than a run) is not
/// one of this run's, unless this run made more than a million changes per millisecond it ran.
uint64_t first_event_version() {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  return static_cast<uint64_t>(ms) << 20;
}

} // namespace

registry_state::registry_state()
    : event_journal(event_changes_kept, first_event_version()) {}
registry_state::~registry_state() = default;

using namespace registry_detail;

registry_actor::behavior_type registry_impl(self_ptr self, context_ptr ctx,
                                            std::shared_ptr<std::atomic<bool>> ready,
                                            loaded_state_ptr loaded, store_writer_actor writer,
                                            binder_actor binder, cluster_actor cluster) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.ready = std::move(ready);
  st.writer = std::move(writer);
  st.binder = std::move(binder);
  st.cluster = std::move(cluster);
  st.random.seed(st.ctx->config.seed ^ 0x5EED5EED5EEDULL);
  st.world = st.ctx->config.kubernetes.enabled ? make_kubernetes_world() : make_standalone_world();
  st.cache.scheduling = st.world->plans_from_start();
  self->send(st.cluster, spec_atom::value, deserved_listener_actor{self});
  // On shutdown, take every actor spawned here along.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    auto& st = self->state;
    for (auto& [gang, g] : st.cache.groups)
      if (g.actor)
        self->send_exit(g.actor, msg.reason);
    for (auto& [name, q] : st.cache.queues)
      self->send_exit(q.actor, msg.reason);
    for (auto& [name, n] : st.cache.nodes)
      self->send_exit(n.actor, msg.reason);
    for (auto& w : st.watchers)
      if (w.sink)
        w.sink->on_close(status{errc::unavailable, "the scheduler is shutting down"});
    st.watchers.clear();
    self->quit(msg.reason);
  });
  restore(self, *loaded);
  loaded.reset();
  return {
    // -- gang sink
    [self](bind_gang_atom, binding_request& req, gang_actor& gang) {
      do_bind_gang(self, std::move(req), std::move(gang));
    },
    [self](report_atom, gang_report& report) { do_report(self, std::move(report)); },
    [self](park_atom, uint64_t gang, uint64_t heard, const gang_actor& actor) {
      do_park(self, gang, heard, actor);
    },
    [self](preempt_atom, preemption_ask& ask, gang_actor& gang) {
      do_preempt(self, std::move(ask), gang);
    },
    [self](evict_atom, eviction_order& order) { do_evict(self, std::move(order)); },
    [self](idle_atom) { sweep_idle_gangs(self); },
    [self](delta_atom, world_delta& d) { do_world_delta(self, std::move(d)); },
    [self](lead_atom) { self->state.world->lead(self); },
    [self](outcome_atom, std::vector<binding_outcome>& outcomes) {
      self->state.world->binding_outcomes(self, std::move(outcomes));
    },
    [self](continue_atom, uint64_t cookie) {
      auto& st = self->state;
      auto i = st.continuations.find(cookie);
      if (i == st.continuations.end())
        return;
      auto work = std::move(i->second);
      st.continuations.erase(i);
      work();
    },
    // -- status sink
    [self](pod_status_atom, std::vector<pod_status_update>& updates) {
      do_pod_status(self, std::move(updates));
    },
    [self](spawn_atom, spawn_request& req) { do_spawn(self, std::move(req)); },
    [self](stalled_atom, const stall_report& report) { do_stalled(self, report); },
    // -- persist listener
    [self](persisted_atom, uint64_t cookie, const status& outcome) {
      auto& st = self->state;
      auto i = st.in_flight.find(cookie);
      if (i == st.in_flight.end())
        return;
      auto then = std::move(i->second);
      st.in_flight.erase(i);
      then(outcome);
    },
    // -- deserved listener
    [self](deserved_atom, const std::string& queue, scheduler::resources& deserved) {
      auto& st = self->state;
      if (auto i = st.cache.queues.find(queue); i != st.cache.queues.end())
        i->second.deserved = std::move(deserved);
    },
    // -- API
    [self](create_atom, api::object& obj, bool dry_run, object_reply& reply) {
      do_create(self, std::move(obj), dry_run, std::move(reply));
    },
    [self](read_atom, api::resource_kind kind, const std::string& ns, const std::string& name,
           const object_reply& reply) { do_get(self, kind, ns, name, reply); },
    [self](list_atom, api::resource_kind kind, const api::list_options& options,
           const list_reply& reply) { do_list(self, kind, options, reply); },
    [self](delete_atom, api::resource_kind kind, const std::string& ns, const std::string& name,
           const api::write_options& options, object_reply& reply) {
      do_delete(self, kind, ns, name, options, std::move(reply));
    },
    [self](terminated_atom, const std::vector<uint64_t>& pods) { do_terminated(self, pods); },
    [self](update_atom, api::object& obj, bool dry_run, object_reply& reply) {
      do_update(self, std::move(obj), dry_run, std::move(reply));
    },
    [self](act_atom, api::resource_kind kind, const std::string& ns, const std::string& name,
           api::object_action action, object_reply& reply) {
      do_act(self, kind, ns, name, action, std::move(reply));
    },
    [self](events_atom, api::resource_kind kind, const std::string& ns, const std::string& name,
           const events_reply& reply) { do_events(self, kind, ns, name, reply); },
    [self](all_events_atom, const all_events_reply& reply) { do_all_events(self, reply); },
    [self](event_changes_atom, uint64_t from, const event_changes_reply& reply) {
      do_event_changes(self, from, reply);
    },
    [self](watch_atom, uint64_t id, api::resource_kind kind, api::list_options& options,
           uint64_t from_version, watch_sink_ptr& sink) {
      do_watch(self, id, kind, std::move(options), from_version, std::move(sink));
    },
    [self](unwatch_atom, uint64_t id) {
      auto& st = self->state;
      std::erase_if(st.watchers, [id](const auto& w) { return w.id == id; });
      st.watched.fill(false);
      for (const auto& w : st.watchers)
        st.watched[kind_index(w.kind)] = true;
    },
    [self](inspect_atom) { return snapshot(self->state); },
  };
}

} // namespace phalanx::actors
