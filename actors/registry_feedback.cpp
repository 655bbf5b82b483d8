// The registry's side of scheduling: bindings made durable for PodGroup actors, their reports,
// pod phase changes from the binder, pods a running pod spawns, stalls, and pod deletion.

#include "actors/world_port.hpp"

#include "actors/operator_log.hpp"
#include "actors/sim_cluster.hpp"

#include "scheduler/job.hpp"


#include <algorithm>
#include <set>
#include <unordered_set>

namespace phalanx::actors::registry_detail {

using api::resource_kind;

namespace {

registry_state::pod_slot& add_pod_entry(registry_state& st, pod_ptr pod, uint64_t id) {
  auto& slot = *st.pods.try_emplace(id).first;
  auto behavior = parse_sim_behavior(*pod);
  slot.second.declares_end = behavior && behavior->declares_end();
  slot.second.pod = std::move(pod);
  return slot;
}

} // namespace

pod_ptr current_pod(const pod_entry& e) {
  if (!e.changed)
    return e.pod;
  auto copy = std::make_shared<scheduler::pod>(*e.pod);
  scheduler::set_runtime(*copy, e.changed->state);
  return copy;
}

registry_state::pod_slot& insert_pod(self_ptr self, pod_ptr pod) {
  auto& st = self->state;
  auto& slot = add_pod_entry(st, std::move(pod), st.next_pod++);
  const auto& p = *slot.second.pod;
  st.pod_ids.insert({p.meta.namespace_name, p.meta.name}, slot.first);
  return slot;
}

registry_state::pod_slot& insert_pod(self_ptr self, pod_ptr pod, const std::string& reserved) {
  auto& st = self->state;
  st.reserved_names[kind_index(resource_kind::pod)].erase(reserved);
  return insert_pod(self, std::move(pod));
}

registry_state::pod_slot& insert_job_pod(registry_state& st, pod_ptr pod, uint64_t id) {
  st.next_pod = std::max(st.next_pod, id + 1);
  auto& slot = add_pod_entry(st, std::move(pod), id);
  slot.second.stored_as_job = true;
  return slot;
}

bool name_taken(const registry_state& st, resource_kind kind, const std::string& key) {
  if (st.reserved_names[kind_index(kind)].count(key))
    return true;
  switch (kind) {
    case resource_kind::pod:
      return st.pod_ids.contains(split_object_key(key));
    case resource_kind::node:
      return st.cache.nodes.count(key) != 0;
    case resource_kind::pod_group:
      return st.cache.group_ids.contains(key);
    case resource_kind::queue:
      return st.cache.queues.count(key) != 0;
    case resource_kind::job:
      return st.jobs.count(key) != 0;
    case resource_kind::priority_class:
      return st.priority_classes.count(key) != 0;
  }
  return false;
}

bool reserve_pod_name(registry_state& st, const std::string& key) {
  if (job_task_of(st, key) || name_taken(st, resource_kind::pod, key))
    return false;
  return st.reserved_names[kind_index(resource_kind::pod)].insert(key).second;
}

void share_pod_names(registry_state& st, scheduler::pod& p) {
  st.pod_names.share_into(p.meta.namespace_name);
  st.pod_names.share_into(p.node_name);
  st.pod_names.share_into(p.group);
  st.pod_names.share_into(p.role);
  st.pod_names.share_into(p.priority_class_name);
  st.pod_names.share_into(p.scheduler_name);
}

void release_pod_name(registry_state& st, const std::string& reserved) {
  // Only a reservation is released: a pod that exists keeps its name (insert_pod ended its
  // reservation).
  st.reserved_names[kind_index(resource_kind::pod)].erase(reserved);
}

const scheduler::pod* reserve_pod_names(registry_state& st, const std::vector<scheduler::pod>& pods,
                                        std::vector<std::string>& names) {
  names.clear();
  names.reserve(pods.size());
  for (const auto& p : pods) {
    auto name = object_key(p.meta.namespace_name, p.meta.name);
    if (!reserve_pod_name(st, name)) {
      release_pod_names(st, names);
      names.clear();
      return &p;
    }
    names.push_back(std::move(name));
  }
  return nullptr;
}

void release_pod_names(registry_state& st, const std::vector<std::string>& names) {
  for (const auto& name : names)
    release_pod_name(st, name);
}

uint64_t pod_id_of(const registry_state& st, const std::string& key) {
  if (auto id = st.pod_ids.find(split_object_key(key)); id != 0)
    return id;
  uint32_t position = 0;
  const auto* task = job_task_of(st, key, &position);
  if (task == nullptr)
    return 0;
  auto j = st.jobs.find(task->job_key);
  if (j == st.jobs.end() || j->second.first_pod == 0)
    return 0;  // Its job's creation is not durable yet.
  auto id = j->second.first_pod + position;
  return st.pods.count(id) != 0 ? id : 0;  // Or it was deleted on its own.
}

const registry_state::job_task_pods* job_task_of(const registry_state& st, std::string_view key,
                                                 uint32_t* position) {
  if (st.job_tasks.empty())
    return nullptr;
  // "<ns>/<job>-<task>" and the index: the index has no '/', so the split is in the name.
  auto split = scheduler::split_job_pod_name(key);
  if (!split)
    return nullptr;
  auto t = st.job_tasks.find(std::string(split->first));
  if (t == st.job_tasks.end() || split->second >= t->second.replicas)
    return nullptr;
  if (position != nullptr)
    *position = t->second.first + static_cast<uint32_t>(split->second);
  return &t->second;
}

namespace {

// Calls f("<ns>/<job>-<task>", its pods) for each task of `j` that makes pods.
template <class F>
void for_each_job_task(const std::string& job_key, const scheduler::job& j, F&& f) {
  for (auto& r : scheduler::job_task_ranges(j))
    f(object_key(j.meta.namespace_name, r.prefix),
      registry_state::job_task_pods{job_key, r.first, r.replicas});
}

} // namespace

std::string claim_job_pods(registry_state& st, const std::string& job_key,
                           const scheduler::job& j, const std::vector<scheduler::pod>& pods) {
  // Another job's pods have the same names exactly when one of its tasks has the same
  // "<job>-<task>" (the index is the part after the last dash).
  std::vector<std::pair<std::string, registry_state::job_task_pods>> tasks;
  std::string taken;
  for_each_job_task(job_key, j, [&](std::string prefix, registry_state::job_task_pods task) {
    if (taken.empty() && st.job_tasks.count(prefix) != 0)
      taken = prefix.substr(prefix.find('/') + 1) + "-0";  // Its first pod's name.
    tasks.emplace_back(std::move(prefix), std::move(task));
  });
  if (!taken.empty())
    return taken;
  // Pods of their own, of a resumed job, or being created.
  if (!st.pod_ids.empty() || !st.reserved_names[kind_index(resource_kind::pod)].empty())
    for (const auto& p : pods)
      if (name_taken(st, resource_kind::pod, object_key(p.meta.namespace_name, p.meta.name)))
        return p.meta.name.str();
  for (auto& [prefix, task] : tasks)
    st.job_tasks.emplace(std::move(prefix), std::move(task));
  return {};
}

void release_job_pods(registry_state& st, const std::string& job_key, const scheduler::job& j) {
  for_each_job_task(job_key, j, [&](const std::string& prefix, const auto&) {
    if (auto t = st.job_tasks.find(prefix); t != st.job_tasks.end() && t->second.job_key == job_key)
      st.job_tasks.erase(t);
  });
}

registry_state::node_entry* node_at(scheduling_cache& cache, uint32_t index) {
  auto* n = index < cache.node_at.size() ? cache.node_at[index] : nullptr;
  // A node added again under its name moves to a new slot; its old slot names nothing.
  return n && n->index == index ? n : nullptr;
}

group_entry& make_implicit_group(self_ptr self, const scheduler::pod& p) {
  auto& st = self->state;
  auto g = std::make_shared<scheduler::pod_group>();
  // Volcano's controller names the PodGroup of a lone pod "podgroup-<pod uid>".
  g->meta.name = "podgroup-" + p.meta.uid;
  g->meta.namespace_name = p.meta.namespace_name;
  g->meta.uid = p.meta.uid;
  g->meta.creation_time = p.meta.creation_time;
  g->meta.resource_version = p.meta.resource_version;
  g->min_member = 1;
  g->queue = implicit_queue_of(p);
  g->priority = p.priority;
  g->priority_class_name = p.priority_class_name;
  auto gang = st.cache.next_gang++;
  auto& entry = st.cache.groups[gang];
  entry.gang = gang;
  entry.key = object_key(g->meta.namespace_name, g->meta.name);
  entry.group = std::move(g);
  entry.implicit = true;
  index_group(st.cache, entry);
  return entry;
}

void spawn_gang(self_ptr self, group_entry& g, gang_start start) {
  auto& st = self->state;
  if (!st.cache.scheduling)
    return;  // Before this process may bind: the world's lead spawns it.
  auto q = st.cache.queues.find(g.group->queue);
  if (q == st.cache.queues.end()) {
    g.pods_reason = "queue \"" + g.group->queue + "\" does not exist";
    note_group_events_changed(self, g.key.view());
    return;
  }
  pod_refs refs;
  refs.reserve(g.pods.size());
  for (auto id : g.pods)
    if (auto p = st.pods.find(id); p != st.pods.end())
      refs.push_back({id, current_pod(p->second)});
  // A PodGroup that never ran, with no pod yet and no job of ours to make them, asks for
  // admission without them, as Volcano's enqueue does: whoever makes its pods may wait for
  // Inqueue (Volcano's job controller does). Our job controller makes a job's pods with its
  // PodGroup, and a PodGroup that ran and lost its pods (a job that ended) is not Pending.
  if (start == gang_start::fresh && refs.empty() && g.job_key.empty() &&
      g.emitted_phase == scheduler::pod_group_phase::pending)
    start = gang_start::before_its_pods;
  g.actor = self->home_system().spawn(gang_actor_impl, st.ctx, g.gang, g.group, std::move(refs),
                                      q->second.actor, gang_sink_actor{self}, start);
  g.sent_to_actor = 0;
  g.last_active = self->clock().now();
}

void arm_park_sweep(self_ptr self) {
  auto& st = self->state;
  auto after = st.ctx->config.scheduling.park_idle_gangs_after;
  if (after.count() <= 0 || st.cache.park_sweep_armed)
    return;
  st.cache.park_sweep_armed = true;
  // Half the idle time: a gang is parked after 1 to 1.5 times it.
  self->delayed_send(self, std::max(after / 2, std::chrono::milliseconds{1}), idle_atom::value);
}

void sweep_idle_gangs(self_ptr self) {
  auto& st = self->state;
  st.cache.park_sweep_armed = false;
  auto after = st.ctx->config.scheduling.park_idle_gangs_after;
  auto now = self->clock().now();
  bool candidates = false;
  for (auto& [gang, g] : st.cache.groups) {
    auto phase = g.last_report.phase;
    if (!g.actor || (phase != scheduler::gang_phase::running &&
                     phase != scheduler::gang_phase::completed))
      continue;
    candidates = true;
    if (now - g.last_active < after)
      continue;
    // Asked once per idle period: a gang that is not idle (pods still pending) is asked again
    // only after another one.
    g.last_active = now;
    self->send(g.actor, idle_atom::value);
  }
  if (candidates)
    arm_park_sweep(self);
}

void end_gang(self_ptr self, group_entry& g) {
  auto& st = self->state;
  self->send_exit(g.actor, caf::exit_reason::user_shutdown);
  g.actor = nullptr;
  if (auto q = st.cache.queues.find(g.group->queue); q != st.cache.queues.end())
    self->send(q->second.actor, removed_atom::value, g.gang);
  if (g.parked) {
    g.parked = false;
    st.ctx->metrics->parked_gangs.set(static_cast<double>(--st.cache.parked_gangs));
  }
}

void do_park(self_ptr self, uint64_t gang, uint64_t heard, const gang_actor& actor) {
  auto& st = self->state;
  auto i = st.cache.groups.find(gang);
  if (i == st.cache.groups.end())
    return;
  auto& g = i->second;
  // A request from an actor replaced since, or sent before a pod message it has not seen yet:
  // not granted. The sweep asks the gang again after another quiet period.
  if (g.parked || g.actor != actor || heard != g.sent_to_actor)
    return;
  // The queue first: a woken actor's messages to it come after this (it is spawned later).
  if (auto q = st.cache.queues.find(g.group->queue); q != st.cache.queues.end())
    self->send(q->second.actor, park_atom::value, gang);
  self->send(g.actor, park_atom::value);
  g.actor = nullptr;
  g.parked = true;
  st.ctx->metrics->parked_gangs.set(static_cast<double>(++st.cache.parked_gangs));
}

void wake_gang(self_ptr self, group_entry& g) {
  auto& st = self->state;
  if (g.last_report.phase == scheduler::gang_phase::completed)
    return;
  g.parked = false;
  st.ctx->metrics->parked_gangs.set(static_cast<double>(--st.cache.parked_gangs));
  // The new actor tells the queue the gang's whole usage, which replaces the parked one's.
  spawn_gang(self, g, gang_start::woken);
}

void index_group(scheduling_cache& cache, const group_entry& g) {
  cache.group_ids.insert(g.key, g.gang);
  if (cache.gangs_by_queue[g.group->queue].insert(g.gang).second)
    count_phase(cache, g.group->queue, g.emitted_phase, +1);
}

void unindex_group(scheduling_cache& cache, const group_entry& g) {
  cache.group_ids.erase(g.gang);
  if (auto q = cache.gangs_by_queue.find(g.group->queue); q != cache.gangs_by_queue.end()) {
    if (q->second.erase(g.gang) != 0)
      count_phase(cache, g.group->queue, g.emitted_phase, -1);
    if (q->second.empty())
      cache.gangs_by_queue.erase(q);
  }
}

group_entry& renew_gang(self_ptr self, uint64_t gang, pod_group_ptr spec) {
  auto& st = self->state;
  // Indexed by gang and queue: the new id (and queue) replaces the old one. The index reads a
  // gang's key in `groups`, so the entry leaves the index before it leaves the map, and comes
  // back after.
  unindex_group(st.cache, st.cache.groups.at(gang));
  auto entry = st.cache.groups.extract(gang);
  auto& g = entry.mapped();
  if (g.actor || g.parked)
    end_gang(self, g);  // Under the spec it had: its queue hears that it left.
  if (spec)
    g.group = std::move(spec);
  auto id = st.cache.next_gang++;
  entry.key() = id;
  g.gang = id;
  g.actor = nullptr;
  g.last_report = gang_report{};
  g.last_report.gang = id;
  g.stall_message.clear();
  for (auto pod : g.pods)
    if (auto p = st.pods.find(pod); p != st.pods.end())
      p->second.gang = id;
  auto& renewed = st.cache.groups.insert(std::move(entry)).position->second;
  index_group(st.cache, renewed);
  spawn_gang(self, renewed);
  return renewed;
}

bool not_ours(registry_state& st, const registry_state::pod_slot& slot) {
  const auto& scheduler_name = slot.second.pod->scheduler_name;
  if (is_our_scheduler(st.ctx->config.scheduling, scheduler_name))
    return false;
  set_pending_reason(st.cache, slot.first,
                     "schedulerName \"" + scheduler_name + "\" is not served by this scheduler");
  return true;
}

bool held_by_gates(registry_state& st, const registry_state::pod_slot& slot) {
  const auto& [id, e] = slot;
  if (!e.pod->is_gated() || e.is_bound())
    return false;
  set_pending_reason(st.cache, id, {});  // pod_view shows why: SchedulingGated.
  return true;
}

void ungate_pod(self_ptr self, uint64_t id, pod_ptr pod) {
  auto& st = self->state;
  auto p = st.pods.find(id);
  if (p == st.pods.end())
    return;
  // Held back until now: gated, in no gang, not bound (held_by_gates).
  const bool was_held = p->second.pod->is_gated() && p->second.gang == 0 && !p->second.is_bound();
  p->second.pod = std::move(pod);
  if (!was_held || p->second.pod->is_gated())
    return;
  attach_pod(self, *p);
}

void pod_relabelled(self_ptr self, uint64_t id) {
  auto& st = self->state;
  auto p = st.pods.find(id);
  if (p == st.pods.end() || scheduler::is_terminal(p->second.phase()))
    return;
  auto& e = p->second;
  if (e.is_bound()) {
    if (auto n = st.cache.nodes.find(e.node_name()); n != st.cache.nodes.end() && n->second.live)
      self->send(n->second.actor, labels_atom::value, pod_refs{{id, current_pod(e)}});
    return;
  }
  if (e.gang == 0)
    return;
  if (auto g = st.cache.groups.find(e.gang);
      g != st.cache.groups.end() && (g->second.actor || g->second.parked))
    renew_gang(self, e.gang);
}

bool join_job_gang(registry_state& st, registry_state::pod_slot& slot, group_entry& g) {
  if (not_ours(st, slot) || held_by_gates(st, slot))
    return false;
  slot.second.gang = g.gang;
  g.pods.push_back(slot.first);
  st.cache.pending_reasons.erase(slot.first);  // Its gang's reason is its own now.
  return true;
}

void wait_for_group(scheduling_cache& cache, registry_state::pod_slot& slot,
                    const std::string& group_key) {
  auto& [id, e] = slot;
  cache.orphans[group_key].push_back(id);
  set_pending_reason(cache, id,
                     "pod group \"" + e.pod->group + "\" not found; the pod waits for it");
}

bool has_pending_pod(const registry_state& st, const group_entry& g) {
  return std::any_of(g.pods.begin(), g.pods.end(), [&](uint64_t id) {
    auto p = st.pods.find(id);
    return p != st.pods.end() && !p->second.is_bound() && !p->second.delete_requested &&
           !scheduler::is_terminal(p->second.phase());
  });
}

// Tells the gang of a pod that joined it. A completed gang (every pod of its PodGroup ended or
// was deleted) starts over under a new actor: its PodGroup has pods to place again (a
// controller made them anew, or a user did). Its actor would keep them pending forever.
void join_gang(self_ptr self, group_entry& g, uint64_t id, const pod_entry& e) {
  g.pods.push_back(id);
  note_group_events_changed(self, g.key.view());
  self->state.cache.pending_reasons.erase(id);  // Its gang's reason is its own now.
  if (g.last_report.phase == scheduler::gang_phase::completed) {
    renew_gang(self, g.gang);
    return;
  }
  // The gang said why it waits before this pod came (a PodGroup is admitted, or refused, before
  // its pods): the pod says so too (pending_reason reads the gang's), which the world shows.
  if (!g.pods_reason.empty() && !e.is_bound() && !scheduler::is_terminal(e.phase()))
    self->state.world->pending_reason_changed(self, id, e);
  tell_gang(self, g, pods_atom::value, pod_refs{{id, current_pod(e)}});
}

void attach_pod(self_ptr self, registry_state::pod_slot& slot) {
  auto& st = self->state;
  auto& [id, e] = slot;
  const auto& p = *e.pod;
  if (not_ours(st, slot))
    return;
  if (scheduler::is_terminal(e.phase()))
    return;
  if (held_by_gates(st, slot))
    return;
  // A lone pod's PodGroup may exist as an object already (Kubernetes mode: Volcano's controller,
  // or our world, created "podgroup-<pod uid>" on the apiserver): the pod joins it, as it would
  // once its group-name annotation is set.
  if (p.group.empty())
    if (auto gang =
            st.cache.group_ids.find(object_key(p.meta.namespace_name, "podgroup-" + p.meta.uid));
        gang != 0) {
      auto& g = st.cache.groups.at(gang);
      e.gang = g.gang;
      join_gang(self, g, id, e);
      return;
    }
  if (p.group.empty()) {
    auto& g = make_implicit_group(self, p);
    e.gang = g.gang;
    g.pods.push_back(id);
    spawn_gang(self, g);
    mark_emitted(st, g);
    if (is_watched(self, resource_kind::pod_group))
      announce(self, api::watch_event::type::added, group_view(st, g));
    return;
  }
  auto key = object_key(p.meta.namespace_name, p.group);
  auto gang = st.cache.group_ids.find(key);
  if (gang == 0) {
    wait_for_group(st.cache, slot, key);
    return;
  }
  auto& g = st.cache.groups.at(gang);
  e.gang = g.gang;
  join_gang(self, g, id, e);
}

void end_followers(self_ptr self, group_entry& g) {
  auto& st = self->state;
  bool any_declaring = false;
  std::vector<pod_outcome> followers;
  for (auto id : g.pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end())
      continue;
    if (p->second.declares_end) {
      any_declaring = true;
      if (!scheduler::is_terminal(p->second.phase()))
        return;  // Someone with a declared end still runs: the job has not ended.
    } else if (p->second.phase() == scheduler::pod_phase::running) {
      followers.push_back({id, scheduler::pod_phase::succeeded, false});
    }
  }
  if (any_declaring && !followers.empty())
    self->send(st.binder, finished_atom::value, std::move(followers));
}

namespace {

// A PodGroup's phase changed: the line an operator reads (admitted, placed, lost members,
// completed). Why it waits is logged where the gang says so (do_report).
void log_phase_change(const group_entry& g, scheduler::pod_group_phase from,
                      const group_summary& now) {
  using scheduler::pod_group_phase;
  if (!oplog::enabled(spdlog::level::info))
    return;  // Two phase changes a gang: its key is not built for nothing.
  std::string_view what = "gang phase";
  if (now.phase == pod_group_phase::inqueue && from == pod_group_phase::pending)
    what = "gang admitted";
  else if (now.phase == pod_group_phase::running)
    what = "gang placed";
  else if (now.phase == pod_group_phase::unknown)
    what = "gang below its minimum";
  else if (now.phase == pod_group_phase::completed)
    what = "gang completed";
  auto line = oplog::info(what);
  line.kv("gang", g.group->meta.namespace_name + "/" + g.group->meta.name)
      .kv("phase", scheduler::to_string(now.phase))
      .kv("from", scheduler::to_string(from))
      .kv("queue", g.group->queue)
      .kv("running", int64_t{now.running})
      .kv("pods", static_cast<uint64_t>(g.pods.size()))
      .kv("min_member", int64_t{g.group->min_member});
  if (!g.job_key.empty())
    line.kv("job", g.job_key.view());
}

} // namespace

void group_changed(self_ptr self, group_entry& g) {
  auto& st = self->state;
  auto summary = summarize_group(st, g);
  if (summary.digest == g.emitted_digest)
    return;
  if (summary.phase != g.emitted_phase)
    log_phase_change(g, g.emitted_phase, summary);
  bool became_running = summary.phase == scheduler::pod_group_phase::running &&
                        g.emitted_phase != scheduler::pod_group_phase::running;
  set_emitted_phase(st.cache, g, summary.phase);
  g.emitted_digest = summary.digest;
  if (became_running && g.group->meta.creation_time != scheduler::timestamp{})
    st.ctx->metrics->volcano_e2e_job_scheduling_latency.observe(
        std::chrono::duration<double, std::milli>(st.ctx->now() - g.group->meta.creation_time)
            .count());
  if (became_running)
    record_event(self, resource_kind::pod_group, g.group->meta.namespace_name,
                 g.group->meta.name, "Normal", "Scheduled",
                 std::to_string(summary.running) + "/" + std::to_string(g.pods.size()) +
                     " tasks in gang running, minMember " + std::to_string(g.group->min_member));
  // Views are built only for a watcher: announce drops events of unwatched kinds, and a job's
  // view (its tasks and templates) costs more than the change it reports.
  if (is_watched(self, resource_kind::pod_group))
    announce(self, api::watch_event::type::modified, group_view(st, g));
  if (!g.job_key.empty() && is_watched(self, resource_kind::job))
    if (auto j = st.jobs.find(g.job_key); j != st.jobs.end())
      announce(self, api::watch_event::type::modified, job_view(st, j->second));
}

namespace {

// True while the gang that asked for a binding is the one its pods belong to: not deleted, not
// replaced by another PodGroup under its name (a lone pod's gang meeting its PodGroup object in
// Kubernetes mode), not renewed as a new incarnation.
bool gang_still_asks(const scheduling_cache& cache, uint64_t gang) {
  auto g = cache.groups.find(gang);
  return g != cache.groups.end() && !g->second.removed;
}

// The gang that asked ended while its bindings were being made durable. Its nodes dropped its
// holds when its actor ended, so no node will commit them, nor hand the pods to the binder:
// applied, the pods would show bound to nodes that never counted them, and (Kubernetes mode)
// their Bindings would never be posted. The bindings are undone instead, durably (the pods'
// states without a node, their intents erased), and the pods' gangs, if they have one now,
// retry at once (a gang that asked for them meanwhile was refused: they were in a binding).
void undo_orphaned_bindings(self_ptr self, const std::vector<durable_binding>& bound) {
  auto& st = self->state;
  storage::write_batch undo;
  std::vector<uint64_t> ids;
  const auto version = next_version(self);
  for (const auto& b : bound) {
    auto p = st.pods.find(b.id);
    if (p == st.pods.end())
      continue;
    auto& e = p->second;
    e.binding = false;
    // A pod whose deletion is under way is left to it: a state written after its erase would
    // bring it back at the next start ("Deleting a pod while its binding is written").
    if (e.delete_requested)
      continue;
    auto state = e.state();
    state.resource_version = version;
    undo.put_pod_state(e.pod, state);
    ids.push_back(b.id);
  }
  st.world->bindings_undone(self, undo, ids);
  auto written = ids;
  persist_state(self, std::move(undo), std::move(written), [self, ids = std::move(ids)](const status& s) {
    auto& st = self->state;
    if (!s.ok())
      oplog::error("undoing the bindings of an ended gang failed; a restart resolves them")
          .kv("pods", static_cast<uint64_t>(ids.size()))
          .kv("error", s.to_string());
    std::unordered_set<uint64_t> woken;
    for (auto id : ids) {
      auto p = st.pods.find(id);
      if (p == st.pods.end() || p->second.gang == 0 || !woken.insert(p->second.gang).second)
        continue;
      auto g = st.cache.groups.find(p->second.gang);
      if (g == st.cache.groups.end() || g->second.removed)
        continue;
      if (g->second.parked)
        wake_gang(self, g->second);
      else if (g->second.actor)
        self->send(g->second.actor, wake_atom::value);
    }
  });
}

} // namespace

void do_bind_gang(self_ptr self, binding_request req, gang_actor gang) {
  auto& st = self->state;
  auto refuse = [&](std::string why) {
    self->send(gang, bound_atom::value,
               bound_result{req.txn, status{errc::conflict, std::move(why)}});
  };
  storage::write_batch batch;
  std::vector<durable_binding> bound;
  bound.reserve(req.bindings.size());
  for (const auto& b : req.bindings) {
    auto p = st.pods.find(b.pod);
    if (p == st.pods.end())
      return refuse("a pod of the round was deleted");
    auto& e = p->second;
    if (e.gang != req.gang || e.binding || e.delete_requested || e.is_bound() ||
        scheduler::is_terminal(e.phase()))
      return refuse("pod " + e.pod->meta.name + " is no longer pending in this gang");
    auto* node = node_at(st.cache, b.node);
    if (!node)
      return refuse("node " + std::to_string(b.node) + " no longer exists");
    auto state = e.state();
    state.node_name = node->node->meta.name;
    bound.push_back({b.pod, std::move(state), b.node});
  }
  auto version = next_version(self);
  for (auto& [id, state, node] : bound) {
    state.resource_version = version;
    auto& e = st.pods.at(id);
    batch.put_pod_state(e.pod, state); // Only the node name and version: the rest is stored.
    e.binding = true;
  }
  st.world->bindings_written(self, batch, bound);
  std::vector<uint64_t> written;
  written.reserve(bound.size());
  for (const auto& b : bound)
    written.push_back(b.id);
  persist_state(self, std::move(batch), std::move(written),
                [self, req = std::move(req), bound = std::move(bound),
                 gang = std::move(gang)](const status& s) mutable {
    auto& st = self->state;
    if (s.ok() && !gang_still_asks(st.cache, req.gang))
      return undo_orphaned_bindings(self, bound);
    for (auto& b : bound) {
      auto& [id, state, node] = b;
      auto p = st.pods.find(id);
      if (p == st.pods.end())
        continue;
      auto& e = p->second;
      e.binding = false;
      // A pod deleted meanwhile is bound all the same: its deletion, written after this
      // binding, removes it (and gives the room back) once durable (delete_pods).
      if (!s.ok())
        continue;
      st.world->binding_durable(b);
      e.set_state(std::move(state));
      st.cache.pending_reasons.erase(id);
      // The node may have been deleted (and its slot taken by another) meanwhile.
      if (auto* n = node_at(st.cache, node); n && n->node->meta.name == e.node_name()) {
        n->allocated += e.pod->requests;
        ++n->pod_count;
      }
      e.changed->bound_at = st.ctx->now(); // Its "Scheduled" event (do_events); set_state above
                                           // made `changed`.
      note_pod_bound(self, e);
      if (is_watched(self, resource_kind::pod))
        announce(self, api::watch_event::type::modified, pod_view(st, id, e));
    }
    // The gang first: a node's answer to the commit goes to the gang, which must have heard
    // that the round is durable before it counts the answers.
    self->send(gang, bound_atom::value, bound_result{req.txn, s});
    if (s.ok())
      commit_durable_round(self, *st.ctx->nodes, req);
    if (auto g = st.cache.groups.find(req.gang); g != st.cache.groups.end())
      group_changed(self, g->second);
  });
}

void do_report(self_ptr self, gang_report report) {
  auto& st = self->state;
  auto i = st.cache.groups.find(report.gang);
  if (i == st.cache.groups.end())
    return;
  auto& g = i->second;
  bool new_reason = !report.pending_reason.empty() &&
                    report.pending_reason != g.last_report.pending_reason;
  // Its pods' reason is the gang's latest: the pod that could not be placed says its own, the
  // others the gang's. One reason for all of them (pending_reason reads it). A report without
  // one (admitted now, or placing them) clears it: a gate's refusal is not why an admitted
  // gang's pods wait, nor an old shortage why a pod that joined a running gang does. The world
  // hears of reasons, not of their clearing (a Kubernetes pod keeps its condition until bound).
  const auto& why =
      report.origin_pod_reason.empty() ? report.pending_reason : report.origin_pod_reason;
  if (why != g.pods_reason) {
    g.pods_reason = why;
    note_group_events_changed(self, g.key.view());
    if (!why.empty())
      for (auto id : g.pods)
        if (auto p = st.pods.find(id); p != st.pods.end() && !p->second.is_bound() &&
                                       !scheduler::is_terminal(p->second.phase()))
          st.world->pending_reason_changed(self, id, p->second);
  }
  if (new_reason) {
    // Once per new reason, but a cluster filling up changes thousands of gangs' reasons at once.
    static oplog::rate_limit limit{std::chrono::seconds(1), 50};
    if (auto left_out = limit.pass())
      oplog::info("gang unschedulable")
          .kv("gang", g.group->meta.namespace_name + "/" + g.group->meta.name)
          .kv("code", report.reason_code.empty() ? std::string_view("Unschedulable")
                                                 : report.reason_code.view())
          .kv("reason", report.pending_reason.view())
          .kv("suppressed", *left_out);
    record_event(
        self, resource_kind::pod_group, g.group->meta.namespace_name, g.group->meta.name, "Warning",
        report.reason_code.empty() ? std::string_view("Unschedulable") : report.reason_code.view(),
        report.pending_reason.view());
    if (!g.job_key.empty())
      if (auto j = st.jobs.find(g.job_key); j != st.jobs.end())
        record_event(self, resource_kind::job, j->second.job->meta.namespace_name,
                     j->second.job->meta.name, "Warning", "PodGroupPending",
                     report.pending_reason.view());
  }
  g.last_report = std::move(report);
  g.last_active = self->clock().now();
  if (g.last_report.phase == scheduler::gang_phase::running ||
      g.last_report.phase == scheduler::gang_phase::completed)
    arm_park_sweep(self);
  group_changed(self, g);
  // Pods that joined while its completion was on its way here: the gang starts over for them.
  if (g.last_report.phase == scheduler::gang_phase::completed && has_pending_pod(st, g))
    renew_gang(self, g.gang);
}

void do_pod_status(self_ptr self, std::vector<pod_status_update> updates) {
  auto& st = self->state;
  storage::write_batch batch;
  std::vector<std::pair<uint64_t, scheduler::pod_runtime>> changed;
  std::vector<uint64_t> written;
  std::unordered_set<uint64_t> lost_with_node;
  // A pod's updates in one batch build on each other (it went Running and its container
  // restarted in the same tick): its entry in `changed`.
  std::unordered_map<uint64_t, std::size_t> change_of;
  auto version = next_version(self);
  for (auto& u : updates) {
    auto p = st.pods.find(u.pod);
    if (p == st.pods.end() || p->second.delete_requested)
      continue;  // Deleted (or being deleted: writing it now would bring it back).
    const auto& e = p->second;
    auto earlier = change_of.find(u.pod);
    if (e.status_writing && earlier == change_of.end()) {
      // Its last change is not durable yet, so not applied: built on the state before it, a
      // Succeeded would take its end for its start, a restart its time. It waits for the
      // writes on their way, and looks at the bit again (a pod that changes twice within one
      // write: common when the store is slow and pods are short).
      st.status_waiting.push_back(u);
      if (st.status_waiting.size() == 1)
        after_state_writes_in_flight(self, [self] {
          auto waiting = std::move(self->state.status_waiting);
          self->state.status_waiting.clear();
          do_pod_status(self, std::move(waiting));
        });
      continue;
    }
    auto next = earlier != change_of.end() ? changed[earlier->second].second : e.state();
    const bool restarted = u.restart_count && *u.restart_count != next.restart_count;
    if (scheduler::is_terminal(next.phase) || (next.phase == u.phase && !restarted))
      continue;
    if (next.phase != u.phase) {
      next.phase = u.phase;
      if (u.phase == scheduler::pod_phase::running)
        next.start_time = u.at;
      if (scheduler::is_terminal(u.phase)) {
        if (next.start_time == scheduler::timestamp{})
          next.start_time = u.at;
        next.finish_time = u.at;
      }
    }
    if (restarted)
      next.restart_count = *u.restart_count;
    next.resource_version = version;
    if (earlier != change_of.end()) {
      changed[earlier->second].second = std::move(next);
    } else {
      change_of.emplace(u.pod, changed.size());
      changed.emplace_back(u.pod, std::move(next));
      written.push_back(u.pod);
    }
    if (u.message == pod_lost_with_its_node)
      lost_with_node.insert(u.pod);
  }
  if (changed.empty())
    return;
  for (const auto& [id, next] : changed) {
    auto& e = st.pods.at(id);
    batch.put_pod_state(e.pod, next);
    e.status_writing = true;
  }
  persist_state(self, std::move(batch), std::move(written),
                [self, changed = std::move(changed),
                 lost_with_node = std::move(lost_with_node)](const status& s) mutable {
    auto& st = self->state;
    if (!s.ok()) {
      oplog::error("pod status changes not persisted").kv("error", s.to_string());
      for (const auto& [id, next] : changed)
        if (auto p = st.pods.find(id); p != st.pods.end())
          p->second.status_writing = false;
      return;
    }
    std::unordered_map<uint32_t, std::vector<uint64_t>> releases;
    std::unordered_map<uint64_t, std::vector<pod_outcome>> finished;
    std::unordered_set<uint64_t> touched;
    // A job's pod failed (PodFailed), succeeded (TaskCompleted, if its task is complete) or
    // restarted its containers (TaskFailed, if its task failed).
    std::vector<job_pod_event> job_events;
    // Jobs whose tasks wait for others (dependsOn) and one of whose pods ran or succeeded.
    std::set<std::string> dependency_syncs;
    // Gangs of jobs one of whose pods went Running: their jobs may go Running
    // (persist_own_starts). Gangs, not job keys: a key's copy per pod cost on a burst's path.
    std::unordered_set<uint64_t> job_starts;
    for (auto& [id, next] : changed) {
      auto p = st.pods.find(id);
      if (p == st.pods.end())
        continue;
      auto& e = p->second;
      e.status_writing = false;
      const auto phase_before = e.phase();
      const bool restarted = next.restart_count > e.restart_count();
      e.set_state(std::move(next));
      if (is_watched(self, resource_kind::pod))
        announce(self, api::watch_event::type::modified, pod_view(st, id, e));
      if (restarted)
        if (auto je = restart_event_of(st, id, phase_before))
          job_events.push_back(std::move(*je));
      if (e.phase() == phase_before)
        continue;  // Only its containers restarted: nothing else about it changed.
      if (e.phase() == scheduler::pod_phase::failed ||
          e.phase() == scheduler::pod_phase::succeeded)
        if (auto je = job_event_of(st, id,
                                   lost_with_node.count(id) ? scheduler::job_event::pod_evicted
                                   : e.phase() == scheduler::pod_phase::failed
                                       ? scheduler::job_event::pod_failed
                                       : scheduler::job_event::task_completed,
                                   false))
          job_events.push_back(std::move(*je));
      if ((e.phase() == scheduler::pod_phase::running ||
           e.phase() == scheduler::pod_phase::succeeded) &&
          e.gang != 0)
        if (auto g = st.cache.groups.find(e.gang); g != st.cache.groups.end()) {
          if (g->second.job_waits_on_tasks)
            dependency_syncs.insert(g->second.job_key.str());
          if (!g->second.job_key.empty())
            job_starts.insert(e.gang);
        }
      if (scheduler::is_terminal(e.phase()) && e.is_bound()) {
        if (auto n = st.cache.nodes.find(e.node_name()); n != st.cache.nodes.end()) {
          n->second.allocated -= e.pod->requests;
          --n->second.pod_count;
          releases[n->second.index].push_back(id);
        }
        if (e.gang != 0)
          finished[e.gang].push_back({id, e.phase(), false});
      }
      if (e.gang != 0)
        touched.insert(e.gang);
    }
    for (auto& [index, ids] : releases)
      if (auto handle = st.ctx->nodes->at(index))
        self->send(handle, release_atom::value, std::move(ids));
    for (auto& [gang, outcomes] : finished)
      if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end())
        tell_gang(self, g->second, finished_atom::value, std::move(outcomes));
    for (auto gang : touched)
      if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end()) {
        g->second.stall_message.clear();  // Something moved.
        end_followers(self, g->second);
        group_changed(self, g->second);
        note_group_events_changed(self, g->second.key.view());  // A pod that ended waits no more.
      }
    for (const auto& je : job_events)
      on_job_pod_event(self, je);
    for (const auto& key : dependency_syncs)
      sync_job_pods(self, key);
    std::vector<std::string> started_jobs;
    for (auto gang : job_starts)
      if (auto g = st.cache.groups.find(gang);
          g != st.cache.groups.end() && !g->second.job_key.empty())
        started_jobs.push_back(g->second.job_key.str());
    persist_own_starts(self, started_jobs);
  });
}

void do_spawn(self_ptr self, spawn_request req) {
  auto& st = self->state;
  auto parent = st.pods.find(req.parent);
  if (parent == st.pods.end() || scheduler::is_terminal(parent->second.phase()))
    return;
  storage::write_batch batch;
  std::vector<std::pair<pod_ptr, std::string>> created; // With its reserved name.
  auto version = next_version(self);
  for (auto& p : req.pods) {
    // Idempotent: after a restart the simulation asks again for children that exist.
    auto name = object_key(p.meta.namespace_name, p.meta.name);
    if (!reserve_pod_name(st, name))
      continue;
    p.meta.uid = new_uid(self);
    p.meta.creation_time = st.ctx->now();
    p.meta.resource_version = version;
    p.phase = scheduler::pod_phase::pending;
    share_pod_names(st, p);
    auto pod = std::make_shared<const scheduler::pod>(std::move(p));
    batch.put(pod);
    created.emplace_back(std::move(pod), std::move(name));
  }
  if (created.empty())
    return;
  persist(self, std::move(batch), [self, created = std::move(created)](const status& s) {
    auto& st = self->state;
    if (!s.ok()) {
      for (const auto& [pod, name] : created)
        release_pod_name(st, name);
      oplog::error("spawned pods not persisted").kv("error", s.to_string());
      return;
    }
    for (const auto& [pod, name] : created) {
      auto& slot = insert_pod(self, pod, name);
      attach_pod(self, slot);
      record_event(self, resource_kind::pod, pod->meta.namespace_name, pod->meta.name, "Normal",
                   "Created", "created by its running driver");
      announce(self, api::watch_event::type::added, pod_view(st, slot.first, slot.second));
    }
  });
}

void do_stalled(self_ptr self, const stall_report& report) {
  auto& st = self->state;
  for (const auto& key : report.stuck_groups) {
    auto gang = st.cache.group_ids.find(key);
    if (gang == 0)
      continue;
    auto& g = st.cache.groups.at(gang);
    if (!g.stall_message.empty())
      continue;  // Reported already: the simulator repeats its report while nothing changes.
    // A deadlock only once the scheduler has tried every pending pod and said why it cannot
    // place it: a pod without a reason is still on its way (after a restart, every gang's
    // pending pods wait for their first round while the simulator already sees its running pods
    // stuck), and calling that a deadlock would be a false alarm on every such gang.
    int32_t pending = 0;
    int32_t running = 0;
    bool untried = false;
    for (auto id : g.pods)
      if (auto p = st.pods.find(id); p != st.pods.end()) {
        if (p->second.phase() == scheduler::pod_phase::running) {
          ++running;
        } else if (!p->second.is_bound() && !scheduler::is_terminal(p->second.phase())) {
          ++pending;
          untried |= pending_reason(st, id, p->second).empty();
        }
      }
    if (pending == 0 || untried)
      continue;
    g.stall_message = "deadlock: " + std::to_string(running) +
                      " running pod(s) wait for " + std::to_string(pending) +
                      " pod(s) that cannot be placed, and no running pod will finish on its "
                      "own; nothing can progress";
    record_event(self, resource_kind::pod_group, g.group->meta.namespace_name, g.group->meta.name,
                 "Warning", "Deadlock", g.stall_message.view());
    if (!g.job_key.empty())
      if (auto j = st.jobs.find(g.job_key); j != st.jobs.end())
        record_event(self, resource_kind::job, j->second.job->meta.namespace_name,
                     j->second.job->meta.name, "Warning", "Deadlock", g.stall_message.view());
    group_changed(self, g);
  }
}

namespace {

// One delete_pods call whose deletion is durable, removing its pods from the catalog a slice at
// a time (remove_deleted_pods).
struct pod_removal {
  std::vector<uint64_t> ids;
  std::size_t next = 0;
  uint64_t version = 0;
  std::unordered_set<uint64_t> gangs; // Gangs that lost pods, settled after the last slice.
  std::function<void(const status&)> then;
};

// Pods removed per turn of the registry: a job of 300,000 pods goes in some 75 turns, with the
// API's other requests served in between instead of after all of it.
constexpr std::size_t removal_slice = 4096;

// After the last slice: each gang that lost pods drops them from its members in one pass (a pass
// per slice, or per pod, made deleting a big gang quadratic), and shows its status once. Until
// then its members list names pods already gone, which every reader of it skips.
void settle_gangs_after_removal(self_ptr self, const pod_removal& work) {
  auto& st = self->state;
  for (auto gang : work.gangs) {
    auto g = st.cache.groups.find(gang);
    if (g == st.cache.groups.end())
      continue;
    std::erase_if(g->second.pods, [&](uint64_t id) { return st.pods.count(id) == 0; });
    if (g->second.implicit && g->second.pods.empty()) {
      // A lone pod's PodGroup goes with it.
      auto view = group_view(st, g->second);
      end_gang(self, g->second);
      unindex_group(st.cache, g->second);
      st.cache.groups.erase(g);
      if (is_watched(self, resource_kind::pod_group))
        announce(self, api::watch_event::type::deleted, view);
      continue;
    }
    end_followers(self, g->second);
    group_changed(self, g->second);
  }
}

void remove_deleted_pods(self_ptr self, std::shared_ptr<pod_removal> work) {
  auto& st = self->state;
  auto end = std::min(work->ids.size(), work->next + removal_slice);
  std::unordered_map<uint32_t, std::vector<uint64_t>> releases;
  std::unordered_map<uint64_t, std::vector<pod_outcome>> gone;
  std::vector<uint64_t> forgotten;
  std::vector<std::vector<std::function<void(const status&)>>> waiters;
  const bool announce_pods = is_watched(self, resource_kind::pod);
  for (auto k = work->next; k < end; ++k) {
    auto id = work->ids[k];
    auto p = st.pods.find(id);
    if (p == st.pods.end())
      continue;
    const auto& pod = p->second.pod;
    auto state = p->second.state();
    auto gang = p->second.gang;
    if (state.is_bound() && !scheduler::is_terminal(state.phase))
      if (auto n = st.cache.nodes.find(state.node_name); n != st.cache.nodes.end()) {
        n->second.allocated -= pod->requests;
        --n->second.pod_count;
        releases[n->second.index].push_back(id);
      }
    // A pod held in a reserve round needs nothing here: that round can no longer bind it
    // (do_bind_gang refuses a pod being deleted), so its gang aborts the hold.
    forgotten.push_back(id);
    if (gang != 0)
      gone[gang].push_back({id, scheduler::pod_phase::failed, true});
    if (!pod->group.empty())
      if (auto o = st.cache.orphans.find(object_key(pod->meta.namespace_name, pod->group));
          o != st.cache.orphans.end())
        std::erase(o->second, id);
    if (announce_pods) {
      api::pod_object view{*pod, {}};
      scheduler::set_runtime(view.pod, state);
      view.pod.meta.resource_version = work->version;
      announce(self, api::watch_event::type::deleted, view);
    }
    // Before `pods` does: the index finds it by its pod's names. A pod stored as its job is
    // there only once its job was updated (find_job_pods_by_name); erase tells.
    note_pod_leaving(self, p->second);
    st.pod_ids.erase(id);
    st.cache.pending_reasons.erase(id);
    st.terminating.erase(id);
    st.pods.erase(p);
    if (auto w = st.removal_waiters.extract(id))
      waiters.push_back(std::move(w.mapped()));
  }
  work->next = end;
  if (!forgotten.empty())
    self->send(st.binder, forget_atom::value, std::move(forgotten));
  for (auto& [index, ids] : releases)
    if (auto handle = st.ctx->nodes->at(index))
      self->send(handle, release_atom::value, std::move(ids));
  for (auto& [gang, outcomes] : gone) {
    work->gangs.insert(gang);
    if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end())
      tell_gang(self, g->second, finished_atom::value, std::move(outcomes));
  }
  for (auto& list : waiters)
    for (auto& f : list)
      f(status{});
  if (work->next < work->ids.size()) {
    // The rest after whatever else waits in the mailbox.
    run_later(self, [self, work] { remove_deleted_pods(self, work); });
    return;
  }
  settle_gangs_after_removal(self, *work);
  work->then(status{});
}

} // namespace

void delete_pods(self_ptr self, std::vector<uint64_t> ids, storage::write_batch batch,
                 pod_keys keys, std::function<void(const status&)> then) {
  auto& st = self->state;
  std::vector<uint64_t> now;
  now.reserve(ids.size());
  // The deletion's version, minted now: a tombstone must be newer than every update written
  // for its pod before it, a binding on its way to the store included (its version is not in
  // the pod's state until that binding is applied), for the store keeps the newest of a key's
  // updates (storage/README.md).
  const auto version = next_version(self);
  // Pods already being deleted are left to that deletion; this one's `then` waits for their
  // removal too, so an acknowledged delete always finds the pod gone (a client that sends its
  // delete again, its connection having dropped, is answered only then).
  std::vector<uint64_t> already;
  for (auto id : ids) {
    auto p = st.pods.find(id);
    if (p != st.pods.end() && p->second.delete_requested)
      already.push_back(id);
    if (p == st.pods.end() || p->second.delete_requested)
      continue;
    // The deletion is written now even for a pod whose binding is on its way to the store: the
    // writer keeps order, so the binding lands first and this deletion after it, and the pod is
    // removed from the catalog only once both are durable (after do_bind_gang applied the
    // binding). Nothing is written for the pod after this: a binding, a phase change or a
    // tombstone written later would land on a key that a job deleted or created again under
    // the same name may own by then (storage/README.md).
    if (p->second.stored_as_job) {
      if (keys == pod_keys::tombstone)
        batch.put_pod_tombstone(*p->second.pod, version);
    } else {
      batch.erase(storage::record_kind::pod,
                  object_key(p->second.pod->meta.namespace_name, p->second.pod->meta.name));
      // The erased record hid its job's expansion of the key; the tombstone (merged onto
      // nothing, after the erase) keeps the pod deleted.
      if (p->second.made_again_over_expansion && keys == pod_keys::tombstone)
        batch.put_pod_tombstone(*p->second.pod, version);
    }
    // A graceful deletion's mark goes with the pod.
    if (st.terminating.count(id) != 0)
      batch.erase_world_meta(termination_key(*p->second.pod));
    // From now on no binding may start for it (do_bind_gang refuses it), nor any phase change
    // be written for it.
    p->second.delete_requested = true;
    now.push_back(id);
  }
  if (!already.empty()) {
    // One answer when this deletion (if any) and the earlier ones are all done.
    struct join {
      std::size_t parts = 0;
      status first;
      std::function<void(const status&)> then;
    };
    auto j = std::make_shared<join>();
    j->parts = already.size() + (batch.empty() ? 0 : 1);
    j->then = std::move(then);
    then = [j](const status& s) {
      if (!s.ok() && j->first.ok())
        j->first = s;
      if (--j->parts == 0)
        j->then(j->first);
    };
    for (auto id : already)
      st.removal_waiters[id].push_back(then);
  }
  if (batch.empty())
    return already.empty() ? then(status{}) : void();
  persist(self, std::move(batch), [self, version, now = std::move(now), then = std::move(then)](
                                      const status& s) mutable {
    if (!s.ok()) {
      // Not deleted: whoever waits for these pods' removal learns it now.
      auto& st = self->state;
      for (auto id : now)
        if (auto w = st.removal_waiters.extract(id))
          for (auto& f : w.mapped())
            f(s);
      return then(s);
    }
    auto work = std::make_shared<pod_removal>();
    work->ids = std::move(now);
    work->version = version;
    work->then = std::move(then);
    remove_deleted_pods(self, std::move(work));
  });
}

void delete_pods(self_ptr self, std::vector<uint64_t> ids,
                 std::function<void(const status&)> then) {
  delete_pods(self, std::move(ids), storage::write_batch{}, pod_keys::tombstone, std::move(then));
}

void delete_evicted_pods(self_ptr self, std::vector<uint64_t> ids,
                         std::function<void(const status&)> then) {
  auto& st = self->state;
  std::vector<job_pod_event> evicted;  // Taken now: the pods are gone when they are told.
  for (auto id : ids)
    if (auto p = st.pods.find(id); p != st.pods.end())
      if (auto e = job_event_of(st, id, scheduler::job_event::pod_evicted,
                                scheduler::is_terminal(p->second.phase())))
        evicted.push_back(std::move(*e));
  delete_pods(self, std::move(ids),
              [self, evicted = std::move(evicted), then = std::move(then)](const status& s) {
    then(s);
    if (s.ok())
      for (const auto& e : evicted)
        on_job_pod_event(self, e);
  });
}

} // namespace phalanx::actors::registry_detail
