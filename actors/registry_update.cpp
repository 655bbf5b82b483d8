// Updates through the API (PUT and PATCH of every kind; api/update.hpp decodes and
// checks them first), and the changes of spec the scheduling side takes from either world: an
// update made durable here, or a watch event of the apiserver (registry_world.cpp).

#include "actors/operator_log.hpp"
#include "actors/registry_internal.hpp"

#include "scheduler/job.hpp"
#include "scheduler/validation.hpp"


namespace phalanx::actors::registry_detail {

using api::resource_kind;

void change_node(self_ptr self, registry_state::node_entry& n, scheduler::node next) {
  auto& st = self->state;
  const auto& was = *n.node;
  // What placements read: a change of anything else (its version, annotations: a kubelet's
  // status write in Kubernetes mode) is kept and told to no one.
  const bool placement_changed = was.allocatable != next.allocatable || was.taints != next.taints ||
                                 was.unschedulable != next.unschedulable ||
                                 was.meta.labels != next.meta.labels;
  auto before = was.allocatable;
  if (placement_changed)
    oplog::info(was.unschedulable == next.unschedulable ? "node changed"
                : next.unschedulable                    ? "node cordoned"
                                                        : "node uncordoned")
        .kv("node", next.meta.name.view())
        .kv("allocatable", next.allocatable.to_string())
        .kv("taints", static_cast<uint64_t>(next.taints.size()))
        .kv("labels", static_cast<uint64_t>(next.meta.labels.size()));
  n.node = std::make_shared<const scheduler::node>(std::move(next));
  if (!placement_changed)
    return;
  self->send(n.actor, spec_atom::value, n.node);
  // Gangs that no node could hold may fit now: it was uncordoned, lost a taint or gained a label
  // they need (the cluster actor wakes every queue).
  self->send(st.cluster, capacity_atom::value, n.node->allocatable, before);
}

void record_cordon_event(self_ptr self, const std::string& node, bool unschedulable) {
  record_event(self, resource_kind::node, "", node, "Normal",
               unschedulable ? "NodeNotSchedulable" : "NodeSchedulable",
               unschedulable ? "node cordoned" : "node uncordoned");
}

void change_queue(self_ptr self, registry_state::queue_entry& q, scheduler::queue next) {
  auto spec_of = [](scheduler::queue x) {
    x.meta = {};
    return x;
  };
  const bool spec_changed = spec_of(*q.queue) != spec_of(next);
  if (spec_changed)
    oplog::info("queue changed")
        .kv("queue", next.meta.name.view())
        .kv("parent", next.parent)
        .kv("weight", int64_t{next.weight})
        .kv("state", scheduler::to_string(next.state))
        .kv("capability", next.capability.to_string());
  q.queue = std::make_shared<const scheduler::queue>(std::move(next));
  refresh_queue_states(self);  // Its actor takes the spec; a new parent may close it.
  // Gangs that slept on its capability or weight try again under the new ones. Not for a change
  // of its metadata alone: in Kubernetes mode every write of its status comes back so.
  if (spec_changed)
    self->send(q.actor, wake_atom::value);
}

group_entry& change_group(self_ptr self, group_entry& g, scheduler::pod_group next) {
  const auto& was = *g.group;
  const bool replan = was.min_member != next.min_member ||
                      was.min_task_member != next.min_task_member ||
                      was.min_resources != next.min_resources || was.queue != next.queue ||
                      was.priority != next.priority ||
                      was.sla_waiting_time != next.sla_waiting_time;
  auto updated = std::make_shared<const scheduler::pod_group>(std::move(next));
  if (!replan) {
    g.group = std::move(updated);
    if (g.actor)
      self->send(g.actor, spec_atom::value, g.group);
    return g;
  }
  return renew_gang(self, g.gang, std::move(updated));
}

std::string change_key(resource_kind kind, std::string_view key) {
  return std::string(api::to_string(kind)) + "/" + std::string(key);
}

bool change_on_its_way(const registry_state& st, resource_kind kind, std::string_view key) {
  return st.changing.count(change_key(kind, key)) != 0;
}

void persist_change(self_ptr self, resource_kind kind, const std::string& key,
                    storage::write_batch batch, std::function<void(const status&)> then) {
  auto marker = change_key(kind, key);
  self->state.changing.insert(marker);
  persist(self, std::move(batch),
          [self, marker = std::move(marker), then = std::move(then)](const status& s) {
            self->state.changing.erase(marker);
            then(s);
          });
}

status change_refused(resource_kind kind, std::string_view name) {
  return {errc::conflict, "Operation cannot be fulfilled on " + kind_plural(kind) + " \"" +
                              std::string(name) +
                              "\": another change of it is on its way to the store; please "
                              "apply your changes to the latest version and try again"};
}

namespace {

status stale_version(resource_kind kind, std::string_view name) {
  return {errc::conflict, "Operation cannot be fulfilled on " + kind_plural(kind) + " \"" +
                              std::string(name) +
                              "\": the object has been modified; please apply your changes to "
                              "the latest version and try again"};
}

// The common steps of an update: refused when the object changed since the version it names
// (0: none named) or another change of it is under way; else `write` is made durable and
// `apply` runs once it is (with `ok` false when it failed), the change marked under way until
// then.
template <class Apply>
void write_update(self_ptr self, resource_kind kind, const std::string& key,
                  storage::write_batch batch, object_reply reply, Apply apply) {
  persist_change(self, kind, key, std::move(batch),
                 [reply, apply = std::move(apply)](const status& s) mutable {
                   if (!s.ok())
                     return respond(reply, result<api::object>{s});
                   apply();
                 });
}

// What the server set at creation stays; the version is the current one, so that an update that
// changes nothing compares equal and keeps it.
void keep_server_meta(scheduler::object_meta& next, const scheduler::object_meta& current) {
  next.uid = current.uid;
  next.creation_time = current.creation_time;
  next.resource_version = current.resource_version;
}

// The checks every update makes before its own: nothing else under way, the version named the
// current one. Answers `reply` and returns false when refused.
bool may_update(self_ptr self, resource_kind kind, const std::string& key, std::string_view name,
                uint64_t asked_version, uint64_t current_version, const object_reply& reply) {
  if (change_on_its_way(self->state, kind, key)) {
    respond(reply, result<api::object>{change_refused(kind, name)});
    return false;
  }
  if (asked_version != 0 && asked_version != current_version) {
    respond(reply, result<api::object>{stale_version(kind, name)});
    return false;
  }
  return true;
}

void update_pod(self_ptr self, scheduler::pod want, bool dry_run, object_reply reply) {
  auto& st = self->state;
  const std::string name = want.meta.name.str();
  const auto key = object_key(want.meta.namespace_name, want.meta.name);
  auto id = pod_id_of(st, key);
  if (id == 0)
    return respond(reply, result<api::object>{not_found(resource_kind::pod, name)});
  const auto& e = st.pods.at(id);
  auto current = current_pod(e);
  auto refuse = [&](errc code, std::string why) {
    respond(reply, result<api::object>{status{code, std::move(why)}});
  };
  if (!may_update(self, resource_kind::pod, key, name, want.meta.resource_version,
                  current->meta.resource_version, reply))
    return;
  if (e.delete_requested)
    return refuse(errc::failed_precondition, "pods \"" + name + "\" is being deleted");
  // What would move the pod to another gang or queue, or add a gate (the API checked the rest).
  scheduler::field_errors errs;
  const auto& gates = current->placement().scheduling_gates;
  for (const auto& gate : want.placement().scheduling_gates)
    if (std::find(gates.begin(), gates.end(), gate) == gates.end())
      errs.push_back(scheduler::forbidden_error(
          "spec.schedulingGates", "only deletion is allowed, but found new scheduling gate " +
                                      scheduler::go_quote(gate)));
  const std::string set_at_creation = "a pod's PodGroup, task and queue are set when it is created";
  if (want.group != current->group)
    errs.push_back(scheduler::forbidden_error(
        "metadata.annotations[" + std::string(scheduler::pod_group_annotation) + "]",
        set_at_creation));
  if (want.role != current->role)
    errs.push_back(scheduler::forbidden_error(
        "metadata.annotations[" + std::string(scheduler::task_spec_key) + "]", set_at_creation));
  if (implicit_queue_of(want) != implicit_queue_of(*current))
    errs.push_back(scheduler::forbidden_error(
        "metadata.annotations[scheduling.volcano.sh/queue-name]", set_at_creation));
  if (!errs.empty())
    return respond(reply, result<api::object>{scheduler::to_status("Pod", name, errs)});
  // The change: labels, annotations, the gates removed (the checks above and the API's leave
  // nothing else), made to the pod as it is when written.
  auto change = [want = std::move(want)](scheduler::pod& next) {
    next.meta.labels = want.meta.labels;
    next.meta.annotations = want.meta.annotations;
    if (want.placement().scheduling_gates != next.placement().scheduling_gates) {
      auto constraints = std::make_shared<scheduler::placement_constraints>(next.placement());
      constraints->scheduling_gates = want.placement().scheduling_gates;
      next.constraints = std::move(constraints);
    }
    next.spec_json = want.spec_json;
  };
  if (dry_run) {
    auto view = pod_view(st, id, e);
    view.pod = *current;
    change(view.pod);
    return respond(reply, result<api::object>{api::object{std::move(view)}});
  }
  // The record is written whole, runtime state included: written while a state update of the
  // pod (its binding, a phase change) is on its way to the store, it would carry the older
  // state and win over that update at the next start. So it waits until none is; meanwhile the
  // pod counts as changing (another update is refused, as while the record is on its way).
  const auto marker = change_key(resource_kind::pod, key);
  st.changing.insert(marker);
  when_no_state_write(self, id, [self, id, uid = current->meta.uid, key, name, marker,
                                 change = std::move(change), reply]() {
    auto& st = self->state;
    st.changing.erase(marker);
    auto p = st.pods.find(id);
    if (p == st.pods.end() || p->second.pod->meta.uid != uid)
      return respond(reply, result<api::object>{not_found(resource_kind::pod, name)});
    if (p->second.delete_requested)
      return respond(reply, result<api::object>{status{
                                errc::failed_precondition,
                                "pods \"" + name + "\" is being deleted"}});
    auto next = std::make_shared<scheduler::pod>(*current_pod(p->second));
    change(*next);
    next->meta.resource_version = next_version(self);
    pod_ptr stored = std::move(next);
    storage::write_batch batch;
    batch.put(stored);
    write_update(self, resource_kind::pod, key, std::move(batch), reply,
                 [self, id, stored, name, reply] {
                   auto& st = self->state;
                   auto p = st.pods.find(id);
                   if (p == st.pods.end())
                     return respond(reply,
                                    result<api::object>{not_found(resource_kind::pod, name)});
                   auto& e = p->second;
                   // A pod stored as its job (storage/README.md) has a record now, which wins
                   // over the job's expansion at a start; its deletion's tombstone, newer, wins
                   // over the record. Its runtime state is the record's, and a state update sent
                   // since (newer) is applied after this.
                   if (e.changed)
                     e.changed->state.resource_version = stored->meta.resource_version;
                   const bool relabelled = e.pod->meta.labels != stored->meta.labels;
                   ungate_pod(self, id, stored);
                   if (relabelled)
                     pod_relabelled(self, id);
                   auto view = pod_view(st, id, p->second);
                   if (is_watched(self, resource_kind::pod))
                     announce(self, api::watch_event::type::modified, view);
                   respond(reply, result<api::object>{api::object{std::move(view)}});
                 });
  });
}

void update_node(self_ptr self, const scheduler::node& want, bool dry_run,
                 object_reply reply) {
  auto& st = self->state;
  const std::string name = want.meta.name.str();
  auto i = st.cache.nodes.find(name);
  if (i == st.cache.nodes.end() || !i->second.live)
    return respond(reply, result<api::object>{not_found(resource_kind::node, name)});
  const auto& current = *i->second.node;
  if (!may_update(self, resource_kind::node, name, name, want.meta.resource_version,
                  current.meta.resource_version, reply))
    return;
  // Its status (allocatable) is the kubelet's, here the simulation's: kept.
  auto next = current;
  next.meta.labels = want.meta.labels;
  next.meta.annotations = want.meta.annotations;
  next.taints = want.taints;
  next.unschedulable = want.unschedulable;
  if (next == current)  // Nothing changed: nothing written, the version stays (as Kubernetes).
    return respond(reply, result<api::object>{api::object{node_view(i->second)}});
  if (dry_run) {
    auto view = node_view(i->second);
    view.node = std::move(next);
    return respond(reply, result<api::object>{api::object{std::move(view)}});
  }
  next.meta.resource_version = next_version(self);
  const bool cordoned = next.unschedulable != current.unschedulable;
  storage::write_batch batch;
  batch.put(next);
  write_update(self, resource_kind::node, name, std::move(batch), reply,
               [self, name, next, cordoned, reply] {
                 auto& st = self->state;
                 auto i = st.cache.nodes.find(name);
                 if (i == st.cache.nodes.end() || !i->second.live)
                   return respond(reply,
                                  result<api::object>{not_found(resource_kind::node, name)});
                 change_node(self, i->second, next);
                 if (cordoned)
                   record_cordon_event(self, name, next.unschedulable);
                 auto view = node_view(i->second);
                 announce(self, api::watch_event::type::modified, view);
                 respond(reply, result<api::object>{api::object{std::move(view)}});
               });
}

void update_queue(self_ptr self, const scheduler::queue& want, bool dry_run,
                  object_reply reply) {
  auto& st = self->state;
  const std::string name = want.meta.name.str();
  auto i = st.cache.queues.find(name);
  if (i == st.cache.queues.end())
    return respond(reply, result<api::object>{not_found(resource_kind::queue, name)});
  const auto& current = *i->second.queue;
  if (!may_update(self, resource_kind::queue, name, name, want.meta.resource_version,
                  current.meta.resource_version, reply))
    return;
  auto next = want;
  keep_server_meta(next.meta, current.meta);
  next.state = current.state;  // status.state: the open and close actions change it.
  if (next == current)
    return respond(reply, result<api::object>{api::object{queue_view(st, i->second)}});
  // The tree's rules, as for a create: the parent exists, no cycle, guarantees within the
  // parent's and above the children's.
  if (auto errors = scheduler::check_queue_tree(next, queue_specs(st.cache)); !errors.empty())
    return respond(reply, result<api::object>{scheduler::to_status("Queue", name, errors)});
  if (next.parent != current.parent && !next.parent.empty())
    if (auto gangs = st.cache.gangs_by_queue.find(next.parent);
        gangs != st.cache.gangs_by_queue.end() && !gangs->second.empty())
      return respond(reply, result<api::object>{scheduler::to_status(
                                "Queue", name,
                                {scheduler::forbidden_error(
                                    "spec.parent",
                                    "queue \"" + next.parent +
                                        "\" has PodGroups; only a queue without PodGroups can "
                                        "become a parent (only leaf queues take work)")})});
  if (dry_run) {
    auto view = queue_view(st, i->second);
    view.queue = std::move(next);
    return respond(reply, result<api::object>{api::object{std::move(view)}});
  }
  next.meta.resource_version = next_version(self);
  storage::write_batch batch;
  batch.put(storage::queue_record{next});
  write_update(self, resource_kind::queue, name, std::move(batch), reply,
               [self, name, next, reply] {
                 auto& st = self->state;
                 auto i = st.cache.queues.find(name);
                 if (i == st.cache.queues.end())
                   return respond(reply,
                                  result<api::object>{not_found(resource_kind::queue, name)});
                 change_queue(self, i->second, next);
                 auto view = queue_view(st, i->second);
                 announce(self, api::watch_event::type::modified, view);
                 respond(reply, result<api::object>{api::object{std::move(view)}});
               });
}

// True when a pod of the group is bound, on its way to being bound, or ended: the gang has
// started in its queue.
bool gang_started(const registry_state& st, const group_entry& g) {
  for (auto id : g.pods)
    if (auto p = st.pods.find(id); p != st.pods.end())
      if (p->second.is_bound() || p->second.binding || scheduler::is_terminal(p->second.phase()))
        return true;
  return false;
}

// The pods of the job's gang that its spec no longer makes: "<job>-<task>-<index>" with an index
// at or past the task's replicas (a scale-down), as Volcano's syncJob deletes them.
std::vector<uint64_t> pods_past_replicas(const registry_state& st, const group_entry& g,
                                         const scheduler::job& j) {
  std::vector<uint64_t> out;
  for (auto id : g.pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end() || p->second.delete_requested)
      continue;
    auto split = scheduler::split_job_pod_name(p->second.pod->meta.name.view());
    if (!split)
      continue;  // Not one of the job's own (a driver's executor).
    for (std::size_t t = 0; t < j.tasks.size(); ++t)
      if (split->first == scheduler::job_task_prefix(j.meta.name, scheduler::task_name(j.tasks[t], t))) {
        if (split->second >= j.tasks[t].replicas)
          out.push_back(id);
        break;
      }
  }
  return out;
}

// A job whose pods were its creation-time expansion, found by position (job_entry::first_pod),
// finds them by name from now on: its spec changes, and the positions with it. On disk they stay
// the expansion's, made again at a start from the record at its expansion_version.
void find_job_pods_by_name(registry_state& st, registry_state::job_entry& j) {
  if (j.first_pod == 0)
    return;
  uint64_t count = 0;
  for (const auto& t : j.job->tasks)
    count += static_cast<uint64_t>(std::max(t.replicas, 0));
  for (uint64_t id = j.first_pod; id < j.first_pod + count; ++id)
    if (auto p = st.pods.find(id); p != st.pods.end())
      st.pod_ids.insert({p->second.pod->meta.namespace_name, p->second.pod->meta.name}, id);
  release_job_pods(st, object_key(j.job->meta.namespace_name, j.job->meta.name), *j.job);
  j.first_pod = 0;
}

// A Volcano Job's update (the API let through what Volcano's webhook lets change: minAvailable,
// each task's replicas and minAvailable, priorityClassName, and metadata): the record and the
// PodGroup's spec in one write, then the job's controller scales it as Volcano's syncJob does:
// pods past a task's replicas are deleted, missing ones made, and the gang plans again under
// its new minimum.
void update_job(self_ptr self, const scheduler::job& want, bool dry_run, object_reply reply) {
  auto& st = self->state;
  const std::string name = want.meta.name.str();
  const auto key = object_key(want.meta.namespace_name, want.meta.name);
  auto i = st.jobs.find(key);
  if (i == st.jobs.end())
    return respond(reply, result<api::object>{not_found(resource_kind::job, name)});
  auto& entry = i->second;
  const auto& current = *entry.job;
  if (!may_update(self, resource_kind::job, key, name, want.meta.resource_version,
                  current.meta.resource_version, reply))
    return;
  if (entry.deleting)
    return respond(reply, result<api::object>{status{errc::failed_precondition,
                                                     "jobs \"" + name + "\" is being deleted"}});
  // The job's own Running or end on its way to the store: the update follows it (its write
  // carries the spec it read), as on Kubernetes a status write never refuses a spec update.
  if (entry.acting && entry.writing_own_phase) {
    entry.waiting.push_back(
        [self, want, dry_run, reply] { update_job(self, want, dry_run, reply); });
    return;
  }
  if (entry.acting)  // Its controller's step is on its way to the store.
    return respond(reply, result<api::object>{change_refused(resource_kind::job, name)});
  auto next = std::make_shared<scheduler::job>(current);
  next->meta.labels = want.meta.labels;
  next->meta.annotations = want.meta.annotations;
  next->min_available = want.min_available;
  for (std::size_t t = 0; t < next->tasks.size() && t < want.tasks.size(); ++t) {
    next->tasks[t].replicas = want.tasks[t].replicas;
    next->tasks[t].min_available = want.tasks[t].min_available;
  }
  if (want.priority_class_name != current.priority_class_name) {
    auto prio = resolve_priority(st, want.priority_class_name, 0, "spec.priorityClassName");
    if (!prio)
      return respond(reply, result<api::object>{prio.error()});
    next->priority_class_name = want.priority_class_name;
    next->priority = *prio;
  }
  next->spec_json = want.spec_json;
  const auto gang = st.cache.group_ids.find(entry.group_key);
  if (gang == 0)
    return respond(reply, result<api::object>{status{
                              errc::failed_precondition,
                              "jobs \"" + name + "\" has no PodGroup to change"}});
  const auto& g = st.cache.groups.at(gang);
  auto expanded = scheduler::expand_job(*next);
  if (!expanded)
    return respond(reply, result<api::object>{expanded.error()});
  scheduler::pod_group group = *g.group;
  group.min_member = expanded->group.min_member;
  group.min_task_member = expanded->group.min_task_member;
  group.min_resources = expanded->group.min_resources;
  if (next->priority != current.priority)
    group.priority = next->priority;
  auto status = entry.status;
  status.min_available = group.min_member;
  const bool changed = next->meta.labels != current.meta.labels ||
                       next->meta.annotations != current.meta.annotations ||
                       next->min_available != current.min_available ||
                       next->priority_class_name != current.priority_class_name ||
                       !std::equal(next->tasks.begin(), next->tasks.end(), current.tasks.begin(),
                                   [](const auto& a, const auto& b) {
                                     return a.replicas == b.replicas &&
                                            a.min_available == b.min_available;
                                   });
  if (!changed)  // Nothing to write: the job as served, its version kept.
    return respond(reply, result<api::object>{api::object{job_view(st, entry)}});
  if (dry_run)
    return respond(reply, result<api::object>{api::job_object{*next, status}});
  // Its pods stored as the job keep their version: the record says which (expansion_version).
  if (entry.first_pod != 0 && next->expansion_version == 0)
    next->expansion_version = current.meta.resource_version;
  next->meta.resource_version = next_version(self);
  group.meta.resource_version = next->meta.resource_version;
  storage::write_batch batch;
  batch.put(storage::job_record{*next, status});
  batch.put(storage::pod_group_record{group});
  std::shared_ptr<const scheduler::job> stored = std::move(next);
  write_update(self, resource_kind::job, key, std::move(batch), reply,
               [self, key, name, stored, status, group = std::move(group), reply]() mutable {
    auto& st = self->state;
    auto i = st.jobs.find(key);
    if (i == st.jobs.end())
      return respond(reply, result<api::object>{not_found(resource_kind::job, name)});
    auto& entry = i->second;
    find_job_pods_by_name(st, entry);
    entry.job = stored;
    entry.status = status;
    std::vector<uint64_t> surplus;
    if (auto gang = st.cache.group_ids.find(entry.group_key); gang != 0) {
      auto& g = change_group(self, st.cache.groups.at(gang), std::move(group));
      surplus = pods_past_replicas(st, g, *stored);
      group_changed(self, g);
    }
    record_event(self, resource_kind::job, stored->meta.namespace_name, stored->meta.name,
                 "Normal", "Updated",
                 "minAvailable " + std::to_string(status.min_available) + "; " +
                     std::to_string(surplus.size()) + " pod(s) past their task's replicas deleted");
    auto view = job_view(st, entry);
    announce(self, api::watch_event::type::modified, view);
    respond(reply, result<api::object>{api::object{std::move(view)}});
    // Then the controller: pods past their task's replicas go, missing ones are made.
    delete_pods(self, std::move(surplus), [self, key](const phalanx::status& s) {
      if (!s.ok())
        oplog::error("a job's pods past its replicas not deleted")
            .kv("job", key)
            .kv("error", s.to_string());
      sync_job_pods(self, key);
    });
  });
}

void update_group(self_ptr self, scheduler::pod_group want, bool dry_run,
                  object_reply reply) {
  auto& st = self->state;
  const std::string name = want.meta.name.str();
  const auto key = object_key(want.meta.namespace_name, want.meta.name);
  auto gang = st.cache.group_ids.find(key);
  if (gang == 0)
    return respond(reply, result<api::object>{not_found(resource_kind::pod_group, name)});
  auto& g = st.cache.groups.at(gang);
  const auto& current = *g.group;
  if (!may_update(self, resource_kind::pod_group, key, name, want.meta.resource_version,
                  current.meta.resource_version, reply))
    return;
  if (g.implicit)
    return respond(reply, result<api::object>{status{
                              errc::failed_precondition,
                              "podgroups \"" + name + "\" belongs to its pod; change the pod"}});
  if (!g.job_key.empty())
    return respond(reply, result<api::object>{status{
                              errc::failed_precondition,
                              "podgroups \"" + name + "\" belongs to job " + g.job_key +
                                  ": its controller writes it from the job"}});
  auto next = std::move(want);
  keep_server_meta(next.meta, current.meta);
  auto prio = resolve_priority(st, next.priority_class_name, 0, "spec.priorityClassName");
  if (!prio)
    return respond(reply, result<api::object>{prio.error()});
  next.priority = *prio;
  if (next == current)
    return respond(reply, result<api::object>{api::object{group_view(st, g)}});
  if (next.queue != current.queue) {
    if (gang_started(st, g))
      return respond(reply, result<api::object>{scheduler::to_status(
                                "PodGroup", name,
                                {scheduler::forbidden_error(
                                    "spec.queue", "a PodGroup's queue cannot change once a pod "
                                                  "of it is bound")})});
    if (auto s = check_queue_accepts(st.cache, next.queue, "spec.queue"); !s.ok())
      return respond(reply, result<api::object>{s});
  }
  if (dry_run) {
    auto view = group_view(st, g);
    view.group = std::move(next);
    return respond(reply, result<api::object>{api::object{std::move(view)}});
  }
  next.meta.resource_version = next_version(self);
  storage::write_batch batch;
  batch.put(storage::pod_group_record{next});
  write_update(self, resource_kind::pod_group, key, std::move(batch), reply,
               [self, key, name, next, reply] {
                 auto& st = self->state;
                 auto gang = st.cache.group_ids.find(key);
                 if (gang == 0 || st.cache.groups.at(gang).group->meta.uid != next.meta.uid)
                   return respond(reply,
                                  result<api::object>{not_found(resource_kind::pod_group, name)});
                 auto& changed = change_group(self, st.cache.groups.at(gang), next);
                 auto view = group_view(st, changed);
                 if (is_watched(self, resource_kind::pod_group))
                   announce(self, api::watch_event::type::modified, view);
                 mark_emitted(st, changed);
                 respond(reply, result<api::object>{api::object{std::move(view)}});
               });
}

void update_priority_class(self_ptr self, const scheduler::priority_class& want, bool dry_run,
                           object_reply reply) {
  auto& st = self->state;
  const std::string name = want.meta.name.str();
  auto i = st.priority_classes.find(name);
  if (i == st.priority_classes.end())
    return respond(reply, result<api::object>{not_found(resource_kind::priority_class, name)});
  const auto& current = *i->second;
  if (!may_update(self, resource_kind::priority_class, name, name, want.meta.resource_version,
                  current.meta.resource_version, reply))
    return;
  auto next = want;
  keep_server_meta(next.meta, current.meta);
  if (next == current)
    return respond(reply, result<api::object>{api::object{api::priority_class_object{current}}});
  // The API refuses these already (api/update.cpp); the catalog holds them whatever asks.
  scheduler::field_errors errors;
  if (next.value != current.value)
    errors.push_back(scheduler::forbidden_error("value", "may not be changed in an update."));
  if (next.preemption != current.preemption)
    errors.push_back({scheduler::field_error_type::invalid, "preemptionPolicy",
                      scheduler::go_quote(scheduler::to_string(next.preemption)),
                      "field is immutable"});
  if (!errors.empty())
    return respond(reply, result<api::object>{scheduler::to_status("PriorityClass", name, errors)});
  if (auto s = check_sole_default(st, next); !s.ok())
    return respond(reply, result<api::object>{s});
  if (dry_run)
    return respond(reply, result<api::object>{api::object{api::priority_class_object{next}}});
  next.meta.resource_version = next_version(self);
  if (next.global_default)
    st.default_class_on_its_way = name;
  storage::write_batch batch;
  batch.put(next);
  persist_change(self, resource_kind::priority_class, name, std::move(batch),
                 [self, name, next, reply](const status& s) {
                   auto& st = self->state;
                   if (st.default_class_on_its_way == name)
                     st.default_class_on_its_way.clear();
                   if (!s.ok())
                     return respond(reply, result<api::object>{s});
                   auto stored = std::make_shared<const scheduler::priority_class>(next);
                   st.priority_classes[name] = stored;
                   api::object view{api::priority_class_object{*stored}};
                   announce(self, api::watch_event::type::modified, view);
                   respond(reply, result<api::object>{std::move(view)});
                 });
}

} // namespace

void do_update(self_ptr self, api::object obj, bool dry_run, object_reply reply) {
  if (refuses_writes(self, reply))
    return;
  std::visit(
      [&](auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, api::pod_object>)
          update_pod(self, std::move(o.pod), dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::node_object>)
          update_node(self, o.node, dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::queue_object>)
          update_queue(self, o.queue, dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::pod_group_object>)
          update_group(self, std::move(o.group), dry_run, std::move(reply));
        else if constexpr (std::is_same_v<T, api::priority_class_object>)
          update_priority_class(self, o.priority_class, dry_run, std::move(reply));
        else
          update_job(self, o.job, dry_run, std::move(reply));
      },
      obj);
}

} // namespace phalanx::actors::registry_detail
