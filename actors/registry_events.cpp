// The events the registry records about objects, and the changes of them that watches of
// events replay (issue 30): what `kubectl get events`, `get events -w` and `describe` read.
//
// Most events are kept as they are recorded (record_event). Two kinds are made when read, so
// that the scheduling path keeps nothing per pod for them: a bound pod's Scheduled (from its
// binding time) and a pending pod's FailedScheduling (its gang's reason, at the count and times
// of its gang's last warning). The journal of changes (api::event_journal) hears of each kind
// where it changes: a kept event where it is recorded, dropped or forgotten; a Scheduled where
// its pod is bound and where its pod leaves; the FailedScheduling of a gang's pods by comparing
// them, once per turn, with what the journal last has of them, for the PodGroups whose gang's
// reason, warnings or pods changed (note_group_events_changed).

#include "actors/registry_internal.hpp"

#include "actors/operator_log.hpp"
#include "api/events.hpp"

#include <algorithm>
#include <chrono>
#include <set>

namespace phalanx::actors {

namespace registry_detail {

using api::resource_kind;

namespace {

// Bounds on what the registry remembers for describe, and of the events' changes for watches.
constexpr std::size_t events_per_object = 20;
constexpr std::size_t event_objects_limit = 50000;

// The journal keeps changes while events are watched, or were listed this long ago at most
// (kubectl lists, then watches from the list's version).
constexpr auto events_idle_after = std::chrono::seconds(60);

std::string_view kind_title(resource_kind kind) {
  switch (kind) {
    case resource_kind::pod:
      return "Pod";
    case resource_kind::node:
      return "Node";
    case resource_kind::pod_group:
      return "PodGroup";
    case resource_kind::queue:
      return "Queue";
    case resource_kind::job:
      return "Job";
    case resource_kind::priority_class:
      return "PriorityClass";
  }
  return "Object";
}

// The uid of the object an event is about, as the event names it; empty once the object is gone
// (its events outlive it).
std::string object_uid(const registry_state& st, resource_kind kind, std::string_view ns,
                       std::string_view name) {
  auto key = object_key(ns, name);
  switch (kind) {
    case resource_kind::pod:
      if (auto id = pod_id_of(st, key))
        return st.pods.at(id).pod->meta.uid.str();
      break;
    case resource_kind::node:
      if (auto i = st.cache.nodes.find(name); i != st.cache.nodes.end() && i->second.live)
        return i->second.node->meta.uid.str();
      break;
    case resource_kind::pod_group:
      if (auto gang = st.cache.group_ids.find(key); gang != 0)
        return st.cache.groups.at(gang).group->meta.uid.str();
      break;
    case resource_kind::queue:
      if (auto i = st.cache.queues.find(std::string(name)); i != st.cache.queues.end())
        return i->second.queue->meta.uid.str();
      break;
    case resource_kind::job:
      if (auto i = st.jobs.find(key); i != st.jobs.end())
        return i->second.job->meta.uid.str();
      break;
    case resource_kind::priority_class:
      if (auto i = st.priority_classes.find(name); i != st.priority_classes.end())
        return i->second->meta.uid.str();
      break;
  }
  return {};
}

scheduler::event event_of(const registry_state::kept_event& kept) {
  return {kept.type.str(), kept.reason.str(), kept.message.str(), kept.count, kept.first_time,
          kept.last_time};
}

// Tells the journal of a change of a kept event of the object `key` names.
void journal_kept(registry_state& st, api::watch_event::type type, const std::string& key,
                  const registry_state::kept_event& kept) {
  if (!st.event_journal.keeping())
    return;
  auto subject = parse_event_key(key);
  if (!subject)
    return;
  auto& [kind, ns, name] = *subject;
  auto uid = object_uid(st, kind, ns, name);
  st.event_journal.add(type, {kind, std::move(ns), std::move(name), std::move(uid),
                              event_of(kept)});
}

// A bound pod's "Scheduled" event, made from its binding time (pod_entry::bound_at); none for a
// pod not bound in this run.
std::optional<scheduler::event> scheduled_event(const pod_entry& p) {
  if (p.bound_at() == scheduler::timestamp{})
    return std::nullopt;
  const auto& pod = *p.pod;
  scheduler::event e;
  e.type = "Normal";
  e.reason = "Scheduled";
  e.message = "Successfully assigned " + pod.meta.namespace_name + "/" + pod.meta.name + " to " +
              p.node_name();
  e.first_time = e.last_time = p.bound_at();
  return e;
}

// A pending pod's "FailedScheduling" event, as kube-scheduler writes one on each pod it could
// not place (kubectl describe pod shows events, not the PodScheduled condition's message): the
// pod's own reason, at the times and count of its gang's last warning (Unschedulable, ...). None
// for a pod that is bound, ended, without a reason, or whose gang has warned of nothing.
std::optional<scheduler::event> failed_scheduling_event(const registry_state& st, uint64_t id,
                                                        const pod_entry& p) {
  if (p.is_bound() || scheduler::is_terminal(p.phase()))
    return std::nullopt;
  auto why = pending_reason(st, id, p);
  auto g = st.cache.groups.find(p.gang);
  if (why.empty() || g == st.cache.groups.end())
    return std::nullopt;
  auto kept = st.events.find(event_key(resource_kind::pod_group,
                                       g->second.group->meta.namespace_name,
                                       g->second.group->meta.name));
  if (kept == st.events.end())
    return std::nullopt;
  for (auto e = kept->second.rbegin(); e != kept->second.rend(); ++e)
    if (e->type == "Warning")
      return scheduler::event{"Warning", "FailedScheduling", std::string(why), e->count,
                              e->first_time, e->last_time};
  return std::nullopt;
}

api::object_event pod_event(const pod_entry& p, scheduler::event e) {
  const auto& meta = p.pod->meta;
  return {resource_kind::pod, meta.namespace_name.str(), meta.name.str(), meta.uid.str(),
          std::move(e)};
}

// The FailedScheduling events of the pods of the PodGroup `group_key` names, in the order of
// its gang's pods; none without a gang.
std::vector<api::object_event> failed_scheduling_events(const registry_state& st,
                                                        std::string_view group_key) {
  std::vector<api::object_event> out;
  auto g = st.cache.groups.find(st.cache.group_ids.find(group_key));
  if (g == st.cache.groups.end())
    return out;
  for (auto id : g->second.pods)
    if (auto p = st.pods.find(id); p != st.pods.end())
      if (auto e = failed_scheduling_event(st, id, p->second))
        out.push_back(pod_event(p->second, std::move(*e)));
  return out;
}

// The events of one object, oldest first: those kept, and for a pod the ones made when read.
std::vector<scheduler::event> events_of(const registry_state& st, resource_kind kind,
                                        const std::string& ns, const std::string& name) {
  std::vector<scheduler::event> out;
  if (auto i = st.events.find(event_key(kind, ns, name)); i != st.events.end())
    for (const auto& kept : i->second)
      out.push_back(event_of(kept));
  if (kind != resource_kind::pod)
    return out;
  auto id = pod_id_of(st, object_key(ns, name));
  auto p = st.pods.find(id);
  if (p == st.pods.end())
    return out;
  for (auto made : {scheduled_event(p->second), failed_scheduling_event(st, id, p->second)})
    if (made) {
      auto later = [](scheduler::timestamp t, const scheduler::event& e) {
        return t < e.first_time;
      };
      out.insert(std::upper_bound(out.begin(), out.end(), made->first_time, later),
                 std::move(*made));
    }
  return out;
}

// Every event, of every object, as all_events lists them.
std::vector<api::object_event> every_event(const registry_state& st) {
  // Every object with kept events, and the pods whose Scheduled or FailedScheduling event is
  // made when read: those bound in this run and those with a pending reason. Other pods have
  // none, and are not named (a list would otherwise build a key for each of a million pods).
  std::set<event_subject> objects;
  for (const auto& [key, kept] : st.events)
    if (auto subject = parse_event_key(key))
      objects.insert(std::move(*subject));
  for (const auto& [id, e] : st.pods)
    if (e.pod && (e.bound_at() != scheduler::timestamp{} || !pending_reason(st, id, e).empty()))
      objects.insert(
          {resource_kind::pod, e.pod->meta.namespace_name.str(), e.pod->meta.name.str()});
  std::vector<api::object_event> out;
  for (const auto& [kind, ns, name] : objects) {
    auto events = events_of(st, kind, ns, name);
    if (events.empty())
      continue;
    auto uid = object_uid(st, kind, ns, name);
    for (auto& e : events)
      out.push_back({kind, ns, name, uid, std::move(e)});
  }
  return out;
}

// Tells the journal how the FailedScheduling events of the PodGroups noted changed since it
// last heard of them.
void flush_event_changes(registry_state& st) {
  st.events_flush_queued = false;
  auto groups = std::move(st.groups_with_event_changes);
  st.groups_with_event_changes.clear();
  if (!st.event_journal.keeping())
    return;
  for (auto& key : groups) {
    auto now = failed_scheduling_events(st, key);
    auto before = st.failed_scheduling_published.find(key);
    static const std::vector<api::object_event> none;
    st.event_journal.add_diff(
        before == st.failed_scheduling_published.end() ? none : before->second, now);
    if (now.empty()) {
      if (before != st.failed_scheduling_published.end())
        st.failed_scheduling_published.erase(before);
    } else {
      st.failed_scheduling_published.insert_or_assign(key, std::move(now));
    }
  }
}

void stop_keeping_event_changes(registry_state& st) {
  st.event_journal.stop();
  st.failed_scheduling_published = {};
  st.groups_with_event_changes = {};
}

// Checks now and then that someone still reads the events' changes; stops keeping them when
// nobody has for events_idle_after.
void check_events_idle(self_ptr self) {
  auto& st = self->state;
  if (!st.event_journal.keeping())
    return;
  auto idle = st.ctx->now() - st.events_last_read;
  if (idle >= events_idle_after) {
    stop_keeping_event_changes(st);
    return;
  }
  run_after(self, events_idle_after - idle, [self] { check_events_idle(self); });
}

// Events are read: the journal keeps their changes from now on (for a watch from this read's
// version), and what was noted of them is told to it first, so that the read and the journal
// agree on what happened up to its version.
void events_read(self_ptr self) {
  auto& st = self->state;
  st.events_last_read = st.ctx->now();
  if (st.event_journal.keeping())
    return flush_event_changes(st);
  st.event_journal.start();
  st.groups_with_event_changes.clear();
  for (const auto& [gang, g] : st.cache.groups)
    if (!g.pods_reason.empty())
      if (auto now = failed_scheduling_events(st, g.key.view()); !now.empty())
        st.failed_scheduling_published.emplace(g.key.str(), std::move(now));
  run_after(self, events_idle_after, [self] { check_events_idle(self); });
}

} // namespace

std::string event_key(resource_kind kind, std::string_view ns, std::string_view name) {
  auto title = kind_title(kind);
  std::string key;
  key.reserve(title.size() + ns.size() + name.size() + 2);
  key.append(title).push_back('/');
  if (!ns.empty())
    key.append(ns).push_back('/');
  key.append(name);
  return key;
}

std::optional<event_subject> parse_event_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos)
    return std::nullopt;
  for (std::size_t i = 0; i < api::resource_kind_count; ++i) {
    auto kind = resource_kind(i);
    if (kind_title(kind) != key.substr(0, slash))
      continue;
    auto [ns, name] = split_object_key(key.substr(slash + 1));
    return event_subject{kind, std::string(ns), std::string(name)};
  }
  return std::nullopt;
}

void record_event(self_ptr self, resource_kind kind, std::string_view ns, std::string_view name,
                  std::string_view type, std::string_view reason, std::string_view message) {
  auto& st = self->state;
  // A job's actions and phase changes are its events (Volcano's job controller writes them so):
  // each is an operator's line too. Other kinds' events have lines of their own where they
  // happen, or would be a storm (a pending pod's FailedScheduling).
  if (kind == resource_kind::job)
    oplog::info("job event")
        .kv("job", std::string(ns) + "/" + std::string(name))
        .kv("type", type)
        .kv("reason", reason)
        .kv("message", message);
  // A PodGroup's warnings give its pending pods their FailedScheduling.
  if (kind == resource_kind::pod_group && st.event_journal.keeping())
    note_group_events_changed(self, object_key(ns, name));
  auto now = st.ctx->now();
  auto [it, fresh] = st.events.try_emplace(event_key(kind, ns, name));
  auto& list = it->second;
  if (fresh) {
    st.event_order.push_back(&it->first);
    if (st.event_order.size() > event_objects_limit) {
      auto oldest = st.events.find(*st.event_order.front());
      for (const auto& kept : oldest->second)
        journal_kept(st, api::watch_event::type::deleted, oldest->first, kept);
      if (auto subject = parse_event_key(oldest->first);
          subject && std::get<0>(*subject) == resource_kind::pod_group)
        note_group_events_changed(self, object_key(std::get<1>(*subject), std::get<2>(*subject)));
      st.events.erase(oldest);
      st.event_order.pop_front();
    }
  }
  // Repeats of the last event count up instead of piling up, as Kubernetes aggregates them.
  if (!list.empty() && list.back().reason == reason && list.back().message == message &&
      list.back().type == type) {
    ++list.back().count;
    list.back().last_time = now;
    journal_kept(st, api::watch_event::type::modified, it->first, list.back());
    return;
  }
  registry_state::kept_event e;
  e.type = st.event_texts.share(type);
  e.reason = st.event_texts.share(reason);
  e.message = st.event_texts.share(message);
  e.first_time = e.last_time = now;
  if (list.size() >= events_per_object) {
    journal_kept(st, api::watch_event::type::deleted, it->first, list.front());
    list.erase(list.begin());
  }
  list.push_back(std::move(e));
  journal_kept(st, api::watch_event::type::added, it->first, list.back());
}

void note_group_events_changed(self_ptr self, std::string_view group_key) {
  auto& st = self->state;
  if (!st.event_journal.keeping())
    return;
  st.groups_with_event_changes.emplace(group_key);
  // Once per turn of changes: the flush runs after the messages already waiting.
  if (!st.events_flush_queued) {
    st.events_flush_queued = true;
    run_later(self, [self] { flush_event_changes(self->state); });
  }
}

void note_gang_events_changed(self_ptr self, uint64_t gang) {
  auto& st = self->state;
  if (!st.event_journal.keeping())
    return;
  if (auto g = st.cache.groups.find(gang); g != st.cache.groups.end())
    note_group_events_changed(self, g->second.key.view());
}

namespace {

// Pod `p`'s Scheduled event came (ADDED) or goes (DELETED); its gang's FailedScheduling events
// may change with it.
void journal_scheduled(self_ptr self, const pod_entry& p, api::watch_event::type type) {
  auto& st = self->state;
  if (!st.event_journal.keeping())
    return;
  if (auto e = scheduled_event(p))
    st.event_journal.add(type, pod_event(p, std::move(*e)));
  note_gang_events_changed(self, p.gang);
}

} // namespace

void note_pod_bound(self_ptr self, const pod_entry& p) {
  journal_scheduled(self, p, api::watch_event::type::added);
}

void note_pod_leaving(self_ptr self, const pod_entry& p) {
  journal_scheduled(self, p, api::watch_event::type::deleted);
}

void do_events(self_ptr self, resource_kind kind, const std::string& ns, const std::string& name,
               const events_reply& reply) {
  respond(reply, result<std::vector<scheduler::event>>{events_of(self->state, kind, ns, name)});
}

void do_all_events(self_ptr self, const all_events_reply& reply) {
  events_read(self);
  const auto& st = self->state;
  api::event_list out;
  out.items = every_event(st);
  out.resource_version = st.event_journal.version();
  respond(reply, result<api::event_list>{std::move(out)});
}

void do_event_changes(self_ptr self, uint64_t from, const event_changes_reply& reply) {
  events_read(self);
  const auto& st = self->state;
  if (from != 0)
    return respond(reply, st.event_journal.since(from));
  api::event_change_list out;
  out.resource_version = st.event_journal.version();
  for (auto& e : every_event(st))
    out.items.push_back({api::watch_event::type::added, std::move(e), out.resource_version});
  respond(reply, result<api::event_change_list>{std::move(out)});
}

} // namespace registry_detail

} // namespace phalanx::actors
