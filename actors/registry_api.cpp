// The registry's API operations: create, get, list, delete, actions, events, watch.

#include "actors/operator_log.hpp"
#include "actors/world_port.hpp"

#include "api/list_page.hpp"

#include "scheduler/job.hpp"
#include "scheduler/job_lifecycle.hpp"
#include "scheduler/job_plugins.hpp"
#include "scheduler/job_volumes.hpp"
#include "scheduler/validation.hpp"


#include <optional>
#include <set>
#include <tuple>

namespace phalanx::actors::registry_detail {

using api::resource_kind;

// Objects restored or listed at a start are summed up in one line ("restored", "caches
// synced"); changes after it get a line each.
bool started(const registry_state& st) { return st.ready && st.ready->load(); }

// -- nodes

void add_node(self_ptr self, scheduler::node n, pod_refs committed) {
  auto& st = self->state;
  auto spec = std::make_shared<const scheduler::node>(std::move(n));
  if (started(st))
    oplog::info("node added")
        .kv("node", spec->meta.name.view())
        .kv("allocatable", spec->allocatable.to_string())
        .kv("unschedulable", spec->unschedulable);
  const auto used = total_requests(committed);
  auto index = st.ctx->view->add_slot(spec, spec->allocatable - used);
  auto handle = self->home_system().spawn(node_actor_impl, st.ctx, static_cast<uint32_t>(index),
                                          spec, st.binder, committed);
  st.ctx->nodes->publish(index, handle);
  auto& e = st.cache.nodes[spec->meta.name.str()];
  e.index = static_cast<uint32_t>(index);
  e.node = spec;
  e.actor = handle;
  e.allocated = used;
  e.pod_count = static_cast<int32_t>(committed.size());
  if (st.cache.node_at.size() <= index)
    st.cache.node_at.resize(index + 1);
  st.cache.node_at[index] = &e;
  self->send(st.cluster, capacity_atom::value, spec->allocatable, scheduler::resources{});
}

void remove_node_entry(self_ptr self, const std::string& name) {
  auto& st = self->state;
  auto i = st.cache.nodes.find(name);
  if (i == st.cache.nodes.end())
    return;
  auto& n = i->second;
  oplog::info("node removed").kv("node", name).kv("pods", int64_t{n.pod_count});
  n.live = false;
  st.ctx->view->set_live(n.index, false);
  self->send(st.cluster, capacity_atom::value, scheduler::resources{}, n.node->allocatable);
  self->send_exit(n.actor, caf::exit_reason::user_shutdown);
  if (node_at(st.cache, n.index) == &n)
    st.cache.node_at[n.index] = nullptr;
  st.cache.nodes.erase(i);
}

// -- queues

group_entry& add_group(self_ptr self, const std::string& key, pod_group_ptr group) {
  auto& st = self->state;
  auto gang = st.cache.next_gang++;
  auto& entry = st.cache.groups[gang];
  entry.gang = gang;
  entry.key = key;
  entry.group = std::move(group);
  index_group(st.cache, entry);
  // Pods that arrived before their PodGroup join it now.
  if (auto o = st.cache.orphans.find(key); o != st.cache.orphans.end()) {
    for (auto id : o->second)
      if (auto p = st.pods.find(id); p != st.pods.end()) {
        p->second.gang = gang;
        st.cache.pending_reasons.erase(id);
        entry.pods.push_back(id);
      }
    st.cache.orphans.erase(o);
  }
  note_group_events_changed(self, key);
  spawn_gang(self, entry);
  mark_emitted(st, entry);
  return entry;
}

void remove_group_entry(self_ptr self, uint64_t gang) {
  auto& st = self->state;
  auto i = st.cache.groups.find(gang);
  if (i == st.cache.groups.end())
    return;
  auto& g = i->second;
  end_gang(self, g);
  auto& waiting = st.cache.orphans[g.key.str()];
  scheduler::shared_string why = "pod group \"" + g.group->meta.name + "\" was deleted";
  for (auto id : g.pods)
    if (auto p = st.pods.find(id); p != st.pods.end()) {
      p->second.gang = 0;
      if (!p->second.is_bound() && !scheduler::is_terminal(p->second.phase())) {
        set_pending_reason(st.cache, id, why);
        waiting.push_back(id);
      }
    }
  note_group_events_changed(self, g.key.view());  // Its pods' FailedScheduling leave.
  unindex_group(st.cache, g);
  st.cache.groups.erase(i);
}

void add_queue(self_ptr self, scheduler::queue q) {
  auto& st = self->state;
  auto spec = std::make_shared<const scheduler::queue>(std::move(q));
  auto handle = self->home_system().spawn(queue_actor_impl, st.ctx, spec, st.cluster);
  if (started(st))
    oplog::info("queue added")
        .kv("queue", spec->meta.name.view())
        .kv("parent", spec->parent)
        .kv("weight", int64_t{spec->weight})
        .kv("state", scheduler::to_string(spec->state));
  auto& entry = st.cache.queues[spec->meta.name.str()];
  entry = {spec, handle, {}, nullptr, {}};
  bind_queue_series(st, entry);
  self->send(st.cluster, spec_atom::value, spec, queue_actor_fwd{handle});
  refresh_queue_states(self);  // It may close its parent to new work, or be closed by it.
}

void remove_queue_entry(self_ptr self, const std::string& name) {
  auto& st = self->state;
  auto i = st.cache.queues.find(name);
  if (i == st.cache.queues.end())
    return;
  oplog::info("queue removed").kv("queue", name);
  // Only the apiserver removes a queue with gangs (the registry's own API refuses it). Their
  // actors end with it: they would keep the ended actor's handle and wait for planning slots no
  // one gives. They wait for a queue of the name, as a gang that came before its queue does,
  // and one made again under the name takes them (upsert_queue). Parked gangs have no actor.
  if (auto gangs = st.cache.gangs_by_queue.find(name); gangs != st.cache.gangs_by_queue.end())
    for (auto gang : gangs->second)
      if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end() && g->second.actor) {
        end_gang(self, g->second);
        g->second.pods_reason = "queue \"" + name + "\" does not exist";
        note_group_events_changed(self, g->second.key.view());
      }
  self->send_exit(i->second.actor, caf::exit_reason::user_shutdown);
  self->send(st.cluster, removed_atom::value, name);
  st.cache.queues.erase(i);
  st.ctx->metrics->remove_queue_series(name);
  refresh_queue_states(self);  // Its parent may be a leaf again.
}

std::string kind_plural(resource_kind k) { return std::string(api::to_string(k)); }

status already_exists(resource_kind k, std::string_view name) {
  return {errc::already_exists, kind_plural(k) + " \"" + std::string(name) + "\" already exists"};
}

status not_found(resource_kind k, std::string_view name) {
  return {errc::not_found, kind_plural(k) + " \"" + std::string(name) + "\" not found"};
}

// The world's objects may be another's (Kubernetes mode: the apiserver's); phalanxd's own API
// then only reads.
bool refused_by_the_world(self_ptr self, const object_reply& reply) {
  auto why = self->state.world->api_write_refusal();
  if (why.empty())
    return false;
  respond(reply, result<api::object>{status{errc::failed_precondition, std::string(why)}});
  return true;
}

bool refuses_writes(self_ptr self, const object_reply& reply) {
  if (refused_by_the_world(self, reply))
    return true;
  if (self->state.ready->load())
    return false;
  respond(reply, result<api::object>{status{errc::unavailable, "restart recovery is not finished"}});
  return true;
}

namespace {

void stamp_new(self_ptr self, scheduler::object_meta& meta) {
  if (meta.uid.empty())
    meta.uid = new_uid(self);
  meta.creation_time = self->state.ctx->now();
}

void create_node(self_ptr self, scheduler::node n, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto key = n.meta.name.str();
  if (name_taken(st, resource_kind::node, key))
    return respond(reply, result<api::object>{already_exists(resource_kind::node, key)});
  stamp_new(self, n.meta);
  if (dry_run)
    return respond(reply, result<api::object>{api::node_object{std::move(n), {}, 0}});
  st.reserved_names[kind_index(resource_kind::node)].insert(key);
  n.meta.resource_version = next_version(self);
  storage::write_batch batch;
  batch.put(n);
  persist(self, std::move(batch), [self, n, key, reply](const status& s) mutable {
    auto& st = self->state;
    st.reserved_names[kind_index(resource_kind::node)].erase(key);
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    add_node(self, std::move(n), {});
    auto view = node_view(st.cache.nodes.at(key));
    record_event(self, resource_kind::node, "", key, "Normal", "Registered",
                 "simulated node registered with " + view.node.allocatable.to_string());
    announce(self, api::watch_event::type::added, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

void create_queue(self_ptr self, scheduler::queue q, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto key = q.meta.name.str();
  if (name_taken(st, resource_kind::queue, key))
    return respond(reply, result<api::object>{already_exists(resource_kind::queue, key)});
  // The tree's rules: the parent exists, no cycle, guarantees within the parent's.
  if (auto errors = scheduler::check_queue_tree(q, queue_specs(st.cache)); !errors.empty())
    return respond(reply, result<api::object>{scheduler::to_status("Queue", key, errors)});
  stamp_new(self, q.meta);
  if (dry_run)
    return respond(reply, result<api::object>{api::queue_object{std::move(q), {}}});
  q.meta.resource_version = next_version(self);
  st.reserved_names[kind_index(resource_kind::queue)].insert(key);
  storage::write_batch batch;
  batch.put(storage::queue_record{q});
  persist(self, std::move(batch), [self, q, key, reply](const status& s) mutable {
    auto& st = self->state;
    st.reserved_names[kind_index(resource_kind::queue)].erase(key);
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    add_queue(self, std::move(q));
    auto view = queue_view(st, st.cache.queues.at(key));
    announce(self, api::watch_event::type::added, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

void create_priority_class(self_ptr self, scheduler::priority_class c, bool dry_run,
                           object_reply reply) {
  auto& st = self->state;
  auto key = c.meta.name.str();
  if (name_taken(st, resource_kind::priority_class, key))
    return respond(reply, result<api::object>{already_exists(resource_kind::priority_class, key)});
  if (auto s = check_sole_default(st, c); !s.ok())
    return respond(reply, result<api::object>{s});
  stamp_new(self, c.meta);
  if (dry_run)
    return respond(reply, result<api::object>{api::priority_class_object{std::move(c)}});
  c.meta.resource_version = next_version(self);
  st.reserved_names[kind_index(resource_kind::priority_class)].insert(key);
  if (c.global_default)
    st.default_class_on_its_way = key;
  storage::write_batch batch;
  batch.put(c);
  persist(self, std::move(batch), [self, c, key, reply](const status& s) mutable {
    auto& st = self->state;
    st.reserved_names[kind_index(resource_kind::priority_class)].erase(key);
    if (st.default_class_on_its_way == key)
      st.default_class_on_its_way.clear();
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    auto stored = std::make_shared<const scheduler::priority_class>(std::move(c));
    st.priority_classes[key] = stored;
    api::object view{api::priority_class_object{*stored}};
    announce(self, api::watch_event::type::added, view);
    respond(reply, result<api::object>{std::move(view)});
  });
}

void create_group(self_ptr self, scheduler::pod_group g, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto key = object_key(g.meta.namespace_name, g.meta.name);
  if (name_taken(st, resource_kind::pod_group, key))
    return respond(reply, result<api::object>{already_exists(resource_kind::pod_group, g.meta.name)});
  if (auto s = check_queue_accepts(st.cache, g.queue, "spec.queue"); !s.ok())
    return respond(reply, result<api::object>{s});
  auto prio = resolve_priority(st, g.priority_class_name, g.priority, "spec.priorityClassName");
  if (!prio)
    return respond(reply, result<api::object>{prio.error()});
  g.priority = *prio;
  stamp_new(self, g.meta);
  if (dry_run)
    return respond(reply, result<api::object>{api::pod_group_object{std::move(g), {}}});
  g.meta.resource_version = next_version(self);
  st.reserved_names[kind_index(resource_kind::pod_group)].insert(key);
  storage::write_batch batch;
  batch.put(storage::pod_group_record{g});
  persist(self, std::move(batch), [self, g, key, reply](const status& s) mutable {
    auto& st = self->state;
    st.reserved_names[kind_index(resource_kind::pod_group)].erase(key);
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    auto& entry = add_group(self, key, std::make_shared<const scheduler::pod_group>(std::move(g)));
    auto view = group_view(st, entry);
    announce(self, api::watch_event::type::added, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

void create_pod(self_ptr self, scheduler::pod p, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto key = object_key(p.meta.namespace_name, p.meta.name);
  if (name_taken(st, resource_kind::pod, key))
    return respond(reply, result<api::object>{already_exists(resource_kind::pod, p.meta.name)});
  // A name a job's expansion makes is the job's, and stays the job's after that pod alone was
  // deleted: a pod of another owner under it would be lost or doubled at the next start
  // (storage/README.md). Volcano's job controller would make the pod again; here the name is
  // taken until the job goes.
  if (const auto* task = job_task_of(st, key)) {
    if (pod_id_of(st, key) != 0)
      return respond(reply,
                     result<api::object>{already_exists(resource_kind::pod, p.meta.name)});
    return respond(reply, result<api::object>{status{
                            errc::already_exists,
                            "pods \"" + p.meta.name + "\" already exists: the name belongs to a "
                            "pod of job \"" +
                                task->job_key.substr(task->job_key.find('/') + 1) +
                                "\" (the job keeps its pods' names until it is deleted)"}});
  }
  if (p.is_bound())
    return respond(reply, result<api::object>{status{
                            errc::invalid_argument,
                            "spec.nodeName: Forbidden: pods are bound by the scheduler; a pod "
                            "cannot be created bound to a node"}});
  bool ours = is_our_scheduler(st.ctx->config.scheduling, p.scheduler_name);
  if (ours && p.group.empty())
    if (auto s = check_queue_accepts(st.cache, implicit_queue_of(p),
                                     "metadata.annotations[scheduling.volcano.sh/queue-name]");
        !s.ok())
      return respond(reply, result<api::object>{s});
  auto prio = resolve_priority(st, p.priority_class_name, p.priority, "spec.priorityClassName");
  if (!prio)
    return respond(reply, result<api::object>{prio.error()});
  p.priority = *prio;
  p.phase = scheduler::pod_phase::pending;
  p.requests.pods = 1;
  stamp_new(self, p.meta);
  if (dry_run)
    return respond(reply, result<api::object>{api::pod_object{std::move(p), {}}});
  p.meta.resource_version = next_version(self);
  if (!reserve_pod_name(st, key)) // name_taken said no, and nothing ran in between.
    return respond(reply, result<api::object>{already_exists(resource_kind::pod, p.meta.name)});
  share_pod_names(st, p);
  storage::write_batch batch;
  auto pod = std::make_shared<const scheduler::pod>(std::move(p));
  batch.put(pod);
  persist(self, std::move(batch), [self, pod, key = std::move(key), reply](const status& s) {
    auto& st = self->state;
    if (!s.ok()) {
      release_pod_name(st, key);
      return respond(reply, result<api::object>{s});
    }
    auto& slot = insert_pod(self, pod, key);
    attach_pod(self, slot);
    auto view = pod_view(st, slot.first, slot.second);
    announce(self, api::watch_event::type::added, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

void create_job(self_ptr self, api::job_object obj, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto& j = obj.job;
  auto key = object_key(j.meta.namespace_name, j.meta.name);
  if (name_taken(st, resource_kind::job, key))
    return respond(reply, result<api::object>{already_exists(resource_kind::job, j.meta.name)});
  // Volcano's webhook's rule for a new job only: its stored volumes carry their claims' names.
  if (auto errors = scheduler::validate_creation(j); !errors.empty())
    return respond(reply,
                   result<api::object>{scheduler::to_status("Job", j.meta.name.view(), errors)});
  if (auto s = check_queue_accepts(st.cache, j.queue, "spec.queue"); !s.ok())
    return respond(reply, result<api::object>{s});
  auto prio = resolve_priority(st, j.priority_class_name, j.priority, "spec.priorityClassName");
  if (!prio)
    return respond(reply, result<api::object>{prio.error()});
  j.priority = *prio;
  for (std::size_t i = 0; i < j.tasks.size(); ++i) {
    auto& tmpl = j.tasks[i].pod_template;
    auto tp = resolve_priority(st, tmpl.priority_class_name, tmpl.priority,
                               "spec.tasks[" + std::to_string(i) +
                                   "].template.spec.priorityClassName");
    if (!tp)
      return respond(reply, result<api::object>{tp.error()});
    tmpl.priority = *tp;
  }
  stamp_new(self, j.meta);
  // Volcano's admission webhook makes maxRetry 0 (or unset) its default, 3.
  if (j.max_retry == 0)
    j.max_retry = 3;
  // It also adds the plugins the distributed-framework plugins need (svc; ssh for mpi).
  scheduler::add_implied_plugins(j);
  // Volcano's controller names the claim of each volume that describes one, in the job's spec
  // (createJobIOIfNotExist). There is no claim to make here: no storage is simulated.
  scheduler::name_volume_claims(j);
  auto expanded = scheduler::expand_job(j);
  if (!expanded)
    return respond(reply, result<api::object>{expanded.error()});
  auto& group = expanded->group;
  auto group_key = object_key(group.meta.namespace_name, group.meta.name);
  if (name_taken(st, resource_kind::pod_group, group_key))
    return respond(reply,
                 result<api::object>{already_exists(resource_kind::pod_group, group.meta.name)});
  // The pods' names are taken now, through the job's tasks (one entry per task), and the pods
  // found from them through the job once durable.
  if (auto taken = claim_job_pods(st, key, j, expanded->pods); !taken.empty())
    return respond(reply, result<api::object>{already_exists(resource_kind::pod, taken)});
  if (dry_run) {
    release_job_pods(st, key, j);
    scheduler::job_status would_be;
    would_be.phase = scheduler::job_phase::pending;
    would_be.min_available = group.min_member;
    return respond(reply, result<api::object>{api::job_object{std::move(j), would_be}});
  }
  if (group.priority == 0)
    group.priority = j.priority;

  j.meta.resource_version = next_version(self);
  group.meta.resource_version = j.meta.resource_version;
  scheduler::job_status status;
  status.phase = scheduler::job_phase::pending;
  status.min_available = group.min_member;
  status.last_transition_time = j.meta.creation_time;
  scheduler::append_condition(status.conditions, {status.phase, status.last_transition_time});
  storage::write_batch batch;
  batch.put(storage::job_record{j, status});
  batch.put(storage::pod_group_record{group});
  // The pods are not written: they are the job's expansion, made again from the job record at
  // the next start (storage/README.md); only their state changes are (delete_job erases what
  // those left under their keys). A job whose tasks wait for others (dependsOn) makes none now:
  // its controller makes each task's pods, as records, once the tasks it depends on run.
  const bool waits = scheduler::has_task_dependencies(j);
  auto pods = std::make_shared<std::vector<pod_ptr>>();
  if (!waits) {
    pods->reserve(expanded->pods.size());
    for (auto& p : expanded->pods) {
      scheduler::prepare_job_pod(p, j.meta.resource_version);
      pods->push_back(std::make_shared<const scheduler::pod>(std::move(p)));
    }
  }
  st.reserved_names[kind_index(resource_kind::job)].insert(key);
  st.reserved_names[kind_index(resource_kind::pod_group)].insert(group_key);
  auto group_ptr = std::make_shared<const scheduler::pod_group>(std::move(group));
  auto job = std::make_shared<const scheduler::job>(std::move(j));
  persist(self, std::move(batch), [self, job, group_ptr, pods, status, key, group_key, waits,
                                   reply](const phalanx::status& s) {
    auto& st = self->state;
    st.reserved_names[kind_index(resource_kind::job)].erase(key);
    st.reserved_names[kind_index(resource_kind::pod_group)].erase(group_key);
    if (!s.ok()) {
      release_job_pods(st, key, *job);
      return respond(reply, result<api::object>{s});
    }
    // Ids by position only for pods stored as the job (job_entry::first_pod).
    const uint64_t first_pod = waits ? 0 : st.next_pod;
    st.jobs[key] = {job, status, group_key, first_pod};
    auto gang = st.cache.next_gang++;
    auto& g = st.cache.groups[gang];
    g.gang = gang;
    g.key = group_key;
    g.job_key = key;
    g.job_waits_on_tasks = waits;
    g.group = group_ptr;
    index_group(st.cache, g);
    g.pods.reserve(pods->size());
    for (std::size_t i = 0; i < pods->size(); ++i)
      join_job_gang(st, insert_job_pod(st, (*pods)[i], first_pod + i), g);
    spawn_gang(self, g);
    mark_emitted(st, g);
    record_event(self, resource_kind::job, job->meta.namespace_name, job->meta.name, "Normal",
                 "Created",
                 "created PodGroup " + g.group->meta.name +
                     (waits ? "; each task's pods are made once the tasks it depends on run"
                            : " and " + std::to_string(pods->size()) + " pods"));
    if (is_watched(self, resource_kind::pod))
      for (uint64_t id = first_pod; id < first_pod + pods->size(); ++id)
        announce(self, api::watch_event::type::added, pod_view(st, id, st.pods.at(id)));
    if (is_watched(self, resource_kind::pod_group))
      announce(self, api::watch_event::type::added, group_view(st, g));
    auto view = job_view(st, st.jobs.at(key));
    announce(self, api::watch_event::type::added, view);
    respond(reply, result<api::object>{api::object{view}});
    if (waits)
      sync_job_pods(self, key);  // The tasks that wait for none.
    else
      job_pods_made(self, key);
  });
}

// Calls f(meta, view) for every object of `kind`: its stored metadata (the key and labels a
// list selects by), and a function that makes its view (the object with its status), which
// costs a copy of the object and more: a list makes the views of its page only.
template <class F>
void for_each_entry(const registry_state& st, resource_kind kind, F&& f) {
  switch (kind) {
    case resource_kind::pod:
      for (const auto& [id, e] : st.pods)
        f(e.pod->meta, [&] { return api::object{pod_view(st, id, e)}; });
      break;
    case resource_kind::node:
      for (const auto& [name, n] : st.cache.nodes)
        if (n.live)
          f(n.node->meta, [&] { return api::object{node_view(n)}; });
      break;
    case resource_kind::pod_group:
      for (const auto& [gang, g] : st.cache.groups)
        if (!g.removed)
          f(g.group->meta, [&] { return api::object{group_view(st, g)}; });
      break;
    case resource_kind::queue:
      for (const auto& [name, q] : st.cache.queues)
        f(q.queue->meta, [&] { return api::object{queue_view(st, q)}; });
      break;
    case resource_kind::job:
      for (const auto& [key, j] : st.jobs)
        f(j.job->meta, [&] { return api::object{job_view(st, j)}; });
      break;
    case resource_kind::priority_class:
      for (const auto& [name, c] : st.priority_classes)
        f(c->meta, [&] { return api::object{api::priority_class_object{*c}}; });
      break;
  }
}

template <class F>
void for_each_object(const registry_state& st, resource_kind kind, F&& f) {
  for_each_entry(st, kind, [&](const scheduler::object_meta&, const auto& view) { f(view()); });
}

bool matches(const api::list_options& options, const scheduler::object_meta& meta) {
  if (!options.namespace_name.empty() && meta.namespace_name != options.namespace_name)
    return false;
  return options.selector.matches(meta.labels);
}

bool matches(const api::list_options& options, const api::object& obj) {
  return matches(options, api::meta_of(obj));
}

void delete_group(self_ptr self, uint64_t gang, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto& g = st.cache.groups.at(gang);
  auto key = g.key.str();
  if (change_on_its_way(st, resource_kind::pod_group, key))
    return respond(reply, result<api::object>{
                              change_refused(resource_kind::pod_group, g.group->meta.name)});
  if (dry_run)
    return respond(reply, result<api::object>{api::object{group_view(st, g)}});
  storage::write_batch batch;
  batch.erase(storage::record_kind::pod_group, key);
  persist_change(self, resource_kind::pod_group, key, std::move(batch),
                 [self, gang, reply](const status& s) {
    auto& st = self->state;
    auto i = st.cache.groups.find(gang);
    if (i == st.cache.groups.end())
      return respond(reply, result<api::object>{status{errc::not_found, "gone"}});
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    auto view = group_view(st, i->second);
    view.group.meta.resource_version = next_version(self);
    remove_group_entry(self, gang);
    announce(self, api::watch_event::type::deleted, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

} // namespace

void delete_job(self_ptr self, const std::string& key, bool dry_run, object_reply reply) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  if (dry_run)
    return respond(reply, result<api::object>{api::object{job_view(st, j)}});
  j.deleting = true;  // Its controller makes no pod any more (registry_jobs.cpp).
  j.waiting.clear();
  std::vector<uint64_t> pods;
  uint64_t gang = 0;
  if (auto g = st.cache.group_ids.find(j.group_key); g != 0) {
    gang = g;
    pods = st.cache.groups.at(gang).pods;
  }
  // One write: the job, its PodGroup, and every key of its pods' expansion, which hold their
  // state updates or tombstones (they have no records: storage/README.md). Its pods leave the
  // catalog after it is durable, and the job with its last one, so nothing is written under
  // those keys after they are erased: a job created again under this name owns them then.
  storage::write_batch batch;
  batch.erase(storage::record_kind::job, key);
  batch.erase(storage::record_kind::pod_group, j.group_key);
  batch.erase_job_pods(j.job);
  delete_pods(
      self, std::move(pods), std::move(batch), pod_keys::erased_by_caller,
      [self, key, gang, reply](const status& s) {
        auto& st = self->state;
        if (!s.ok()) {
          if (auto i = st.jobs.find(key); i != st.jobs.end())
            i->second.deleting = false;
          return respond(reply, result<api::object>{s});
        }
        auto i = st.jobs.find(key);
        if (i == st.jobs.end())
          return respond(reply, result<api::object>{status{errc::not_found, key}});
        auto view = job_view(st, i->second);
        view.job.meta.resource_version = next_version(self);
        if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end()) {
          auto gv = group_view(st, g->second);
          end_gang(self, g->second);
          unindex_group(st.cache, g->second);
          st.cache.groups.erase(g);
          announce(self, api::watch_event::type::deleted, gv);
        }
        release_job_pods(st, key, *i->second.job);
        st.jobs.erase(i);
        announce(self, api::watch_event::type::deleted, view);
        respond(reply, result<api::object>{api::object{view}});
      });
}

namespace {

void delete_queue(self_ptr self, const std::string& name, bool dry_run, object_reply reply) {
  auto& st = self->state;
  if (name == scheduler::default_queue_name)
    return respond(
        reply, result<api::object>{status{errc::failed_precondition,
                                          "queues \"default\" cannot be deleted: it takes every "
                                          "PodGroup that names no queue"}});
  for (const auto& [child, q] : st.cache.queues)
    if (q.queue->parent == name)
      return respond(reply, result<api::object>{status{
                                errc::failed_precondition,
                                "queues \"" + name + "\" is the parent of queue \"" + child +
                                    "\": delete its child queues first"}});
  if (auto gangs = st.cache.gangs_by_queue.find(name); gangs != st.cache.gangs_by_queue.end())
    return respond(
        reply, result<api::object>{status{
                   errc::failed_precondition,
                   "queues \"" + name + "\" still has PodGroups (" +
                       st.cache.groups.at(*gangs->second.begin()).key +
                       "): delete them first, or close the queue to stop new work"}});
  if (change_on_its_way(st, resource_kind::queue, name))
    return respond(reply, result<api::object>{change_refused(resource_kind::queue, name)});
  if (dry_run)
    return respond(reply,
                   result<api::object>{api::object{queue_view(st, st.cache.queues.at(name))}});
  storage::write_batch batch;
  batch.erase(storage::record_kind::queue, name);
  persist_change(self, resource_kind::queue, name, std::move(batch),
                 [self, name, reply](const status& s) {
    auto& st = self->state;
    auto i = st.cache.queues.find(name);
    if (i == st.cache.queues.end())
      return respond(reply, result<api::object>{not_found(resource_kind::queue, name)});
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    auto view = queue_view(st, i->second);
    view.queue.meta.resource_version = next_version(self);
    remove_queue_entry(self, name);
    announce(self, api::watch_event::type::deleted, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

void delete_priority_class(self_ptr self, const std::string& name, bool dry_run,
                           object_reply reply) {
  auto& st = self->state;
  // kube-apiserver's rule, in its words: pods of the system's own components name them.
  if (scheduler::find_system_priority_class(name))
    return respond(reply,
                   result<api::object>{status{errc::forbidden,
                                              "priorityclasses.scheduling.k8s.io \"" + name +
                                                  "\" is forbidden: this is a system priority "
                                                  "class and cannot be deleted"}});
  if (change_on_its_way(st, resource_kind::priority_class, name))
    return respond(reply,
                   result<api::object>{change_refused(resource_kind::priority_class, name)});
  if (dry_run)
    return respond(reply, result<api::object>{
                              api::object{api::priority_class_object{*st.priority_classes.at(name)}}});
  storage::write_batch batch;
  batch.erase(storage::record_kind::priority_class, name);
  // Objects keep the priority they took from it, as Kubernetes' pods keep their admitted one.
  persist_change(self, resource_kind::priority_class, name, std::move(batch),
                 [self, name, reply](const status& s) {
    auto& st = self->state;
    auto i = st.priority_classes.find(name);
    if (i == st.priority_classes.end())
      return respond(reply,
                     result<api::object>{not_found(resource_kind::priority_class, name)});
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    api::priority_class_object view{*i->second};
    view.priority_class.meta.resource_version = next_version(self);
    st.priority_classes.erase(i);
    announce(self, api::watch_event::type::deleted, view);
    respond(reply, result<api::object>{api::object{view}});
  });
}

void delete_node(self_ptr self, const std::string& name, bool dry_run, object_reply reply) {
  auto& st = self->state;
  if (change_on_its_way(st, resource_kind::node, name))
    return respond(reply, result<api::object>{change_refused(resource_kind::node, name)});
  if (dry_run)
    return respond(reply, result<api::object>{api::object{node_view(st.cache.nodes.at(name))}});
  storage::write_batch batch;
  batch.erase(storage::record_kind::node, name);
  // Pods on a deleted node cannot go on: they fail, as after a node loss. A version of its own:
  // an update must be newer than the pod's updates on their way to the store.
  std::vector<uint64_t> lost;
  const auto version = next_version(self);
  for (auto& [id, e] : st.pods)
    if (e.node_name() == name && !scheduler::is_terminal(e.phase()) &&
        !e.delete_requested) {
      auto failed = e.state();
      failed.phase = scheduler::pod_phase::failed;
      failed.finish_time = st.ctx->now();
      failed.resource_version = version;
      batch.put_pod_state(e.pod, failed);
      lost.push_back(id);
    }
  // The node's removal writes its pods' states: a change of the node, and a state write of each.
  st.changing.insert(change_key(resource_kind::node, name));
  persist_state(self, std::move(batch), lost, [self, name, lost, reply](const status& s) {
    self->state.changing.erase(change_key(resource_kind::node, name));
    auto& st = self->state;
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    auto i = st.cache.nodes.find(name);
    if (i == st.cache.nodes.end())
      return respond(reply, result<api::object>{not_found(resource_kind::node, name)});
    auto view = node_view(i->second);
    view.node.meta.resource_version = next_version(self);
    std::vector<pod_status_update> updates;
    for (auto id : lost)
      updates.push_back({id, scheduler::pod_phase::failed, st.ctx->now(),
                         std::string(pod_lost_with_its_node)});
    remove_node_entry(self, name);
    announce(self, api::watch_event::type::deleted, view);
    // The lost pods were persisted as Failed with the node's removal; apply them in memory.
    if (!updates.empty())
      do_pod_status(self, std::move(updates));
    respond(reply, result<api::object>{api::object{view}});
  });
}

void act_on_job(self_ptr self, const std::string& key, bool suspend, object_reply reply) {
  auto& st = self->state;
  auto& j = st.jobs.at(key);
  if (j.job->suspended == suspend)
    return respond(reply, result<api::object>{api::object{job_view(st, j)}});
  // Volcano's AbortJob leaves a finished job's phase as it is: there is nothing to suspend.
  if (const auto phase = job_status_of(st, j).phase; suspend && scheduler::is_finished(phase))
    return respond(reply, result<api::object>{status{
                              errc::failed_precondition,
                              "jobs \"" + j.job->meta.name.str() + "\" is " +
                                  std::string(scheduler::to_string(phase)) +
                                  "; only a job that has not finished can be suspended"}});
  auto copy = std::make_shared<scheduler::job>(*j.job);
  copy->suspended = suspend;
  copy->meta.resource_version = next_version(self);
  if (!suspend) {
    resume_job(self, key, copy, [self, key, reply](const phalanx::status& s) {
      if (!s.ok())
        return respond(reply, result<api::object>{s});
      auto& st = self->state;
      auto i = st.jobs.find(key);
      if (i == st.jobs.end())
        return respond(reply, result<api::object>{not_found(resource_kind::job, key)});
      respond(reply, result<api::object>{api::object{job_view(st, i->second)}});
    });
    return;
  }
  // Volcano's AbortJob: Aborting while its pods go, then Aborted. Here they go in the write
  // that records it, so the history has both at once.
  auto status = j.status;
  status.last_transition_time = st.ctx->now();
  status.running_duration = scheduler::running_duration(*copy, status);
  ++status.version;  // As every whole-job kill raises it.
  status.phase = scheduler::job_phase::aborted;
  status.reason = "Suspended";
  status.message = "suspended on request; its pods were deleted";
  scheduler::append_condition(status.conditions,
                              {scheduler::job_phase::aborting, status.last_transition_time});
  scheduler::append_condition(status.conditions, {status.phase, status.last_transition_time});
  storage::write_batch batch;
  batch.put(storage::job_record{*copy, status});
  auto apply = [self, key, copy, status, reply](const phalanx::status& s) {
    auto& st = self->state;
    if (!s.ok())
      return respond(reply, result<api::object>{s});
    auto i = st.jobs.find(key);
    if (i == st.jobs.end())
      return respond(reply, result<api::object>{not_found(resource_kind::job, key)});
    // Its pods are gone and the next incarnation's will be its own (scheduler::
    // pods_are_expansion): their names are free again.
    release_job_pods(st, key, *i->second.job);
    i->second.first_pod = 0;
    i->second.job = copy;
    i->second.status = status;
    record_event(self, resource_kind::job, copy->meta.namespace_name, copy->meta.name, "Normal",
                 status.reason, status.message);
    auto view = job_view(st, i->second);
    announce(self, api::watch_event::type::modified, view);
    respond(reply, result<api::object>{api::object{view}});
  };
  // The suspension and its pods' deletion in one write.
  std::vector<uint64_t> pods;
  if (auto g = st.cache.group_ids.find(j.group_key); g != 0)
    pods = st.cache.groups.at(g).pods;
  delete_pods(self, std::move(pods), std::move(batch), pod_keys::tombstone, apply);
}

} // namespace

void do_create(self_ptr self, api::object obj, bool dry_run, object_reply reply) {
  if (refuses_writes(self, reply))
    return;
  std::visit(
      [&](auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, api::node_object>)
          create_node(self, std::move(o.node), dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::queue_object>)
          create_queue(self, std::move(o.queue), dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::pod_group_object>)
          create_group(self, std::move(o.group), dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::pod_object>)
          create_pod(self, std::move(o.pod), dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::priority_class_object>)
          create_priority_class(self, std::move(o.priority_class), dry_run, std::move(reply));
        else
          create_job(self, std::move(o), dry_run, std::move(reply));
      },
      obj);
}

namespace {

// The object of a kind by namespace and name, as the API shows it; nullopt when there is none.
std::optional<api::object> find_object(const registry_state& st, resource_kind kind,
                                       const std::string& ns, const std::string& name) {
  auto key = object_key(ns, name);
  std::optional<api::object> found;
  switch (kind) {
    case resource_kind::pod:
      if (auto id = pod_id_of(st, key))
        found = pod_view(st, id, st.pods.at(id));
      break;
    case resource_kind::node:
      if (auto i = st.cache.nodes.find(name); i != st.cache.nodes.end() && i->second.live)
        found = node_view(i->second);
      break;
    case resource_kind::pod_group:
      if (auto gang = st.cache.group_ids.find(key); gang != 0)
        found = group_view(st, st.cache.groups.at(gang));
      break;
    case resource_kind::queue:
      if (auto i = st.cache.queues.find(name); i != st.cache.queues.end())
        found = queue_view(st, i->second);
      break;
    case resource_kind::job:
      if (auto i = st.jobs.find(key); i != st.jobs.end())
        found = job_view(st, i->second);
      break;
    case resource_kind::priority_class:
      if (auto i = st.priority_classes.find(name); i != st.priority_classes.end())
        found = api::priority_class_object{*i->second};
      break;
  }
  return found;
}

} // namespace

void do_get(self_ptr self, resource_kind kind, const std::string& ns, const std::string& name,
            const object_reply& reply) {
  auto found = find_object(self->state, kind, ns, name);
  if (!found)
    return respond(reply, result<api::object>{not_found(kind, name)});
  respond(reply, result<api::object>{std::move(*found)});
}

void do_list(self_ptr self, resource_kind kind, const api::list_options& options,
             const list_reply& reply) {
  auto& st = self->state;
  const auto& page = options.page;
  // The history dropped a change made after the list's first page: a watch from that page's
  // version could not replay it (as etcd's compaction, for kube-apiserver).
  if (page.first_version != 0 && page.first_version < st.history_dropped_through)
    return respond(reply, result<api::object_list>{status{
                              errc::failed_precondition,
                              "the list's first page (version " +
                                  std::to_string(page.first_version) +
                                  ") is older than the changes this server keeps"}});
  // Two walks: the keys of the objects selected find the page's end (api/list_page.hpp), then
  // the page's objects are viewed, and only they.
  api::page_finder finder(page);
  for_each_entry(st, kind, [&](const scheduler::object_meta& meta, const auto&) {
    if (matches(options, meta))
      finder.offer({meta.namespace_name, meta.name});
  });
  const auto end = finder.end();
  api::object_list out;
  out.resource_version = st.resource_version;
  out.remaining = end.remaining;
  for_each_entry(st, kind, [&](const scheduler::object_meta& meta, const auto& view) {
    if (matches(options, meta) && api::in_page({meta.namespace_name, meta.name}, page, end))
      out.items.push_back(view());
  });
  // By namespace, then name: the list's order, which kubectl shows and pages follow.
  std::sort(out.items.begin(), out.items.end(), [](const auto& a, const auto& b) {
    const auto& ma = api::meta_of(a);
    const auto& mb = api::meta_of(b);
    return std::tie(ma.namespace_name, ma.name) < std::tie(mb.namespace_name, mb.name);
  });
  respond(reply, result<api::object_list>{std::move(out)});
}

void do_delete(self_ptr self, resource_kind kind, const std::string& ns, const std::string& name,
               const api::write_options& options, object_reply reply) {
  if (refused_by_the_world(self, reply))
    return;
  auto& st = self->state;
  auto key = object_key(ns, name);
  const bool dry_run = options.dry_run;
  switch (kind) {
    case resource_kind::pod: {
      auto id = pod_id_of(st, key);
      if (id == 0)
        return respond(reply, result<api::object>{not_found(kind, name)});
      return delete_pod(self, id, options, std::move(reply));
    }
    case resource_kind::node:
      if (auto i = st.cache.nodes.find(name); i == st.cache.nodes.end() || !i->second.live)
        return respond(reply, result<api::object>{not_found(kind, name)});
      return delete_node(self, name, dry_run, std::move(reply));
    case resource_kind::pod_group: {
      auto gang = st.cache.group_ids.find(key);
      if (gang == 0)
        return respond(reply, result<api::object>{not_found(kind, name)});
      auto& g = st.cache.groups.at(gang);
      if (g.implicit)
        return respond(
            reply, result<api::object>{status{errc::failed_precondition,
                                              "podgroups \"" + name +
                                                  "\" belongs to its pod; delete the pod"}});
      if (!g.job_key.empty())
        return respond(
            reply, result<api::object>{status{errc::failed_precondition,
                                              "podgroups \"" + name + "\" belongs to job " +
                                                  g.job_key + "; delete the job"}});
      return delete_group(self, gang, dry_run, std::move(reply));
    }
    case resource_kind::queue:
      if (!st.cache.queues.count(name))
        return respond(reply, result<api::object>{not_found(kind, name)});
      return delete_queue(self, name, dry_run, std::move(reply));
    case resource_kind::job:
      if (!st.jobs.count(key))
        return respond(reply, result<api::object>{not_found(kind, name)});
      return delete_job(self, key, dry_run, std::move(reply));
    case resource_kind::priority_class:
      if (!st.priority_classes.count(name))
        return respond(reply, result<api::object>{not_found(kind, name)});
      return delete_priority_class(self, name, dry_run, std::move(reply));
  }
}

void do_act(self_ptr self, resource_kind kind, const std::string& ns, const std::string& name,
            api::object_action action, object_reply reply) {
  if (refused_by_the_world(self, reply))
    return;
  auto& st = self->state;
  using action_type = api::object_action::type;
  auto wrong_kind = [&] {
    respond(
        reply, result<api::object>{status{errc::invalid_argument,
                                          std::string(api::to_string(action.kind)) +
                                              " does not apply to " + kind_plural(kind)}});
  };
  switch (action.kind) {
    case action_type::cordon:
    case action_type::uncordon: {
      if (kind != resource_kind::node)
        return wrong_kind();
      auto i = st.cache.nodes.find(name);
      if (i == st.cache.nodes.end() || !i->second.live)
        return respond(reply, result<api::object>{not_found(kind, name)});
      if (change_on_its_way(st, kind, name))
        return respond(reply, result<api::object>{change_refused(kind, name)});
      auto copy = *i->second.node;
      copy.unschedulable = action.kind == action_type::cordon;
      copy.meta.resource_version = next_version(self);
      storage::write_batch batch;
      batch.put(copy);
      persist_change(self, kind, name, std::move(batch), [self, name, copy, reply](const status& s) {
        auto& st = self->state;
        if (!s.ok())
          return respond(reply, result<api::object>{s});
        auto i = st.cache.nodes.find(name);
        if (i == st.cache.nodes.end() || !i->second.live)
          return respond(reply, result<api::object>{not_found(resource_kind::node, name)});
        change_node(self, i->second, copy);
        record_cordon_event(self, name, copy.unschedulable);
        auto view = node_view(i->second);
        announce(self, api::watch_event::type::modified, view);
        respond(reply, result<api::object>{api::object{view}});
      });
      return;
    }
    case action_type::open:
    case action_type::close: {
      if (kind != resource_kind::queue)
        return wrong_kind();
      auto i = st.cache.queues.find(name);
      if (i == st.cache.queues.end())
        return respond(reply, result<api::object>{not_found(kind, name)});
      if (change_on_its_way(st, kind, name))
        return respond(reply, result<api::object>{change_refused(kind, name)});
      auto copy = *i->second.queue;
      copy.state = action.kind == action_type::open ? scheduler::queue_state::open
                                                    : scheduler::queue_state::closed;
      copy.meta.resource_version = next_version(self);
      storage::write_batch batch;
      batch.put(storage::queue_record{copy});
      persist_change(self, kind, name, std::move(batch), [self, name, copy, reply](const status& s) {
        auto& st = self->state;
        if (!s.ok())
          return respond(reply, result<api::object>{s});
        auto i = st.cache.queues.find(name);
        if (i == st.cache.queues.end())
          return respond(reply, result<api::object>{not_found(resource_kind::queue, name)});
        change_queue(self, i->second, copy);  // This queue, and the subtree it opens or closes.
        record_event(self, resource_kind::queue, "", name, "Normal",
                     copy.state == scheduler::queue_state::open ? "Opened" : "Closed",
                     "queue state set to " + std::string(scheduler::to_string(copy.state)));
        auto view = queue_view(st, i->second);
        announce(self, api::watch_event::type::modified, view);
        respond(reply, result<api::object>{api::object{view}});
      });
      return;
    }
    case action_type::suspend:
    case action_type::resume:
      if (kind != resource_kind::job)
        return wrong_kind();
      if (!st.jobs.count(object_key(ns, name)))
        return respond(reply, result<api::object>{not_found(kind, name)});
      return act_on_job(self, object_key(ns, name), action.kind == action_type::suspend,
                        std::move(reply));
    case action_type::fail_pod: {
      if (kind != resource_kind::pod)
        return wrong_kind();
      auto id = pod_id_of(st, object_key(ns, name));
      if (id == 0)
        return respond(reply, result<api::object>{not_found(kind, name)});
      const auto& e = st.pods.at(id);
      if (e.phase() != scheduler::pod_phase::running)
        return respond(
            reply, result<api::object>{status{errc::failed_precondition,
                                              "pods \"" + name + "\" is " +
                                                  std::string(scheduler::to_string(e.phase())) +
                                                  "; only a Running pod can be failed"}});
      self->send(st.binder, fail_atom::value, id);
      return respond(reply, result<api::object>{api::object{pod_view(st, id, e)}});
    }
  }
}

void do_watch(self_ptr self, uint64_t id, resource_kind kind, api::list_options options,
              uint64_t from_version, watch_sink_ptr sink) {
  auto& st = self->state;
  if (from_version == 0) {
    std::vector<api::object> current;
    for_each_object(st, kind, [&](api::object obj) {
      if (matches(options, obj))
        current.push_back(std::move(obj));
    });
    for (auto& obj : current)
      if (!sink->on_event({api::watch_event::type::added, std::move(obj)}))
        return;
  } else {
    if (from_version < st.resource_version &&
        (st.history.empty() || st.history.front().first > from_version + 1) &&
        from_version + st.history.size() < st.resource_version) {
      sink->on_close(status{errc::failed_precondition,
                            "too old resource version: " + std::to_string(from_version) +
                                " (the oldest this server remembers is " +
                                std::to_string(st.history.empty() ? st.resource_version
                                                                  : st.history.front().first) +
                                ")"});
      return;
    }
    for (const auto& [version, event] : st.history) {
      if (version <= from_version || api::kind_of(event.obj) != kind)
        continue;
      if (!matches(options, event.obj))
        continue;
      if (!sink->on_event(event))
        return;
    }
  }
  st.watchers.push_back({id, kind, std::move(options), std::move(sink)});
  st.watched[kind_index(kind)] = true;
}

} // namespace phalanx::actors::registry_detail
