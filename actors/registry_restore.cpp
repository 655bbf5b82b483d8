// Start-up: rebuild the catalog from the store, respawn the actors, restore node usage from the
// persisted bindings, resume simulated pods, and only then report ready (DESIGN.md section 5).

#include "actors/operator_log.hpp"
#include "actors/world_port.hpp"

#include "scheduler/job.hpp"
#include "scheduler/placeholders.hpp"
#include "scheduler/validation.hpp"


#include <algorithm>
#include <map>

#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace phalanx::actors::registry_detail {

namespace {

// The pods the jobs made at their creation, which are stored as their jobs (storage/README.md):
// expanded again, with the state updates found under their keys, and without those a tombstone
// marks deleted. Appended to `loaded.pods`. A key that holds a record keeps it (a store written
// before pods were stored as their jobs, or a pod the job's controller made again after it was
// deleted: registry_jobs.cpp). Only jobs whose pods are their expansion
// (scheduler::pods_are_expansion) are expanded: a resumed job's pods have records of their own,
// and a suspended job has none.
//
// Every position of every expansion gets a slot, numbered across the jobs in order, kept or not:
// a pod's id is the first expanded id plus its slot, so a job finds its pods by position
// (registry_state::job_entry::first_pod).
struct stored_expansions {
  std::size_t first_index = 0;     // In loaded.pods, of the first pod appended.
  std::vector<uint64_t> slot_of;   // Of each pod appended, in order.
  /// Job key -> the slot of its first pod, for the jobs expanded.
  std::unordered_map<std::string, uint64_t> first_slot;
  uint64_t slots = 0;
  /// Pod keys whose updates belong to no pod the jobs make now (left by a pod of an earlier job
  /// of that name, or by a job gone): erased at the start, so they cannot meet a later pod.
  std::vector<std::string> stale_keys;
  /// Keys of an expansion that hold a record: the record is the pod (a job's controller made it
  /// again), and deleting it must leave a tombstone (pod_entry::made_again_over_expansion).
  std::unordered_set<std::string> recorded;
};

stored_expansions expand_stored_jobs(storage::loaded_state& loaded) {
  stored_expansions out;
  out.first_index = loaded.pods.size();
  std::vector<std::pair<scheduler::pod, uint64_t>> made;  // (pod, slot)
  for (const auto& j : loaded.jobs) {
    if (!scheduler::pods_are_expansion(j.job, j.status))
      continue;
    auto expanded = scheduler::expand_job(j.job);
    if (!expanded) {
      oplog::error("a stored job's pods cannot be made")
          .kv("job", j.job.meta.namespace_name + "/" + j.job.meta.name)
          .kv("error", expanded.error().to_string());
      continue;
    }
    out.first_slot[object_key(j.job.meta.namespace_name, j.job.meta.name)] = out.slots;
    for (auto& p : expanded->pods) {
      scheduler::prepare_job_pod(p, j.job.expansion_version != 0 ? j.job.expansion_version
                                                                 : j.job.meta.resource_version);
      made.emplace_back(std::move(p), out.slots++);
    }
  }
  // The states a pod made now takes; any other is an earlier pod's (below).
  std::vector<bool> taken(loaded.pod_states.size(), false);
  std::size_t earlier = 0;
  if (!made.empty()) {
    // Keys that hold a record: only pods whose name the expansion also made can collide.
    std::unordered_set<std::string_view> names;
    for (const auto& [p, slot] : made)
      names.insert(p.meta.name);
    auto& recorded = out.recorded;
    for (const auto& p : loaded.pods)
      if (names.count(p.meta.name))
        recorded.insert(object_key(p.meta.namespace_name, p.meta.name));
    std::unordered_map<std::string_view, std::size_t> states;
    states.reserve(loaded.pod_states.size());
    for (std::size_t i = 0; i < loaded.pod_states.size(); ++i)
      states.emplace(loaded.pod_states[i].key, i);
    loaded.pods.reserve(loaded.pods.size() + made.size());
    out.slot_of.reserve(made.size());
    for (auto& [p, slot] : made) {
      auto key = object_key(p.meta.namespace_name, p.meta.name);
      if (recorded.count(key))
        continue;
      if (auto s = states.find(key); s != states.end()) {
        const auto& found = loaded.pod_states[s->second];
        // An update older than the job that makes this pod now belongs to an earlier pod of
        // that name (a job deleted and created again), never to this one: each of this pod's
        // updates is made after its job's creation. The key then holds nothing of this pod.
        if (found.state.resource_version >= p.meta.resource_version) {
          taken[s->second] = true;
          if (found.deleted)
            continue;
          scheduler::set_runtime(p, found.state);
        } else {
          ++earlier;
        }
      }
      loaded.pods.push_back(std::move(p));
      out.slot_of.push_back(slot);
    }
  }
  // Keys no pod made now takes: an earlier pod's updates, a job deleted while a write for one
  // of its pods was on its way (stores written before a delete waited for such writes), the pods
  // of a suspended job. Erased at the start, so that no later pod of the name ever meets them.
  for (std::size_t i = 0; i < loaded.pod_states.size(); ++i)
    if (!taken[i])
      out.stale_keys.push_back(loaded.pod_states[i].key);
  if (!out.stale_keys.empty())
    oplog::warn("pod keys hold state updates of no pod the jobs make now; erased")
        .kv("keys", static_cast<uint64_t>(out.stale_keys.size()))
        .kv("of_earlier_pods", static_cast<uint64_t>(earlier));
  return out;
}

} // namespace

void restore(self_ptr self, storage::loaded_state& loaded) {
  auto& st = self->state;
  // Past every version handed out before, also those no record keeps (a delete's), and a new
  // ceiling as the first write: every acknowledgment of this run comes after it is durable.
  st.resource_version = std::max(loaded.max_resource_version, loaded.version_ceiling);
  st.durable_version_ceiling = st.resource_version;
  reserve_versions(self);
  // Uids come from the seeded generator: seeded the same at every start, it would hand out the
  // uids of the previous run again (with --seed, or in deterministic mode). The versions this
  // start begins above are new to every start, and the same for the same store (replays stay
  // deterministic).
  st.random.seed(st.ctx->config.seed ^ 0x5EED5EED5EEDULL ^
                 (st.resource_version * 0x9E3779B97F4A7C15ULL));
  // First: the jobs are moved into the catalog below.
  const auto expanded = expand_stored_jobs(loaded);
  if (!expanded.stale_keys.empty()) {
    storage::write_batch batch;
    for (const auto& key : expanded.stale_keys)
      batch.erase(storage::record_kind::pod, key);
    persist(self, std::move(batch), [](const status& s) {
      if (!s.ok())
        oplog::error("stale pod keys not erased").kv("error", s.to_string());
    });
  }
  // The pods with records take the ids before the expansions' slots.
  const uint64_t first_expanded_id = st.next_pod + expanded.first_index;

  for (auto& q : loaded.queues)
    add_queue(self, std::move(q.queue));
  for (auto& c : loaded.priority_classes) {
    auto name = c.meta.name.str();
    st.priority_classes[name] = std::make_shared<const scheduler::priority_class>(std::move(c));
  }
  st.world->provide_defaults(self);

  std::unordered_map<std::string, std::string> job_of_group;
  for (auto& j : loaded.jobs) {
    auto key = object_key(j.job.meta.namespace_name, j.job.meta.name);
    auto group_key = object_key(j.job.meta.namespace_name, scheduler::pod_group_name(j.job));
    job_of_group[group_key] = key;
    auto& entry = st.jobs[key] = {std::make_shared<const scheduler::job>(std::move(j.job)),
                                  j.status, group_key};
    if (auto f = expanded.first_slot.find(key); f != expanded.first_slot.end()) {
      entry.first_pod = first_expanded_id + f->second;
      // Creation kept the names of jobs' pods apart; a store that has two jobs making the same
      // names was written by something else.
      if (auto taken = claim_job_pods(st, key, *entry.job, {}); !taken.empty())
        oplog::warn("a job makes a pod another job makes too; the pod is found through the other")
            .kv("job", key)
            .kv("pod", taken);
    }
  }
  // Room for everything restored at once: no rehash on the way, and tables no larger than that.
  st.cache.groups.reserve(loaded.pod_groups.size());
  st.cache.group_ids.reserve(loaded.pod_groups.size());
  st.pods.reserve(loaded.pods.size());
  st.pod_ids.reserve(expanded.first_index); // The others are found through their jobs.
  for (auto& r : loaded.pod_groups) {
    auto gang = st.cache.next_gang++;
    auto& g = st.cache.groups[gang];
    g.gang = gang;
    const std::string key = object_key(r.group.meta.namespace_name, r.group.meta.name);
    g.key = key;
    g.group = std::make_shared<const scheduler::pod_group>(std::move(r.group));
    if (auto j = job_of_group.find(key); j != job_of_group.end()) {
      g.job_key = j->second;
      g.job_waits_on_tasks = scheduler::has_task_dependencies(*st.jobs.at(j->second).job);
    }
    // A restored gang was admitted if it had bound pods; the gang actor reports again anyway.
    index_group(st.cache, g);
  }

  // Node name -> its pods bound and not finished; by the pods' shared name blocks, no copy.
  std::unordered_map<scheduler::shared_string, pod_refs> committed;
  std::unordered_map<scheduler::shared_string, pod_refs> resume; // The same, for the binder.
  pod_refs finished;
  for (std::size_t i = 0; i < loaded.pods.size(); ++i) {
    auto pod_ptr = std::make_shared<const scheduler::pod>(std::move(loaded.pods[i]));
    auto& slot =
        i < expanded.first_index
            ? insert_pod(self, std::move(pod_ptr))
            : insert_job_pod(st, std::move(pod_ptr),
                             first_expanded_id + expanded.slot_of[i - expanded.first_index]);
    auto& [id, e] = slot;
    const auto& pod = *e.pod;
    if (i < expanded.first_index && !expanded.recorded.empty() &&
        expanded.recorded.count(object_key(pod.meta.namespace_name, pod.meta.name)))
      e.made_again_over_expansion = true;
    if (pod.is_bound() && !scheduler::is_terminal(pod.phase)) {
      committed[pod.node_name].push_back({id, e.pod});
      resume[pod.node_name].push_back({id, e.pod});
    }
    if (scheduler::is_terminal(pod.phase))
      finished.push_back({id, e.pod});
    if (not_ours(st, slot) || held_by_gates(st, slot))
      continue;
    if (pod.group.empty()) {
      if (scheduler::is_terminal(pod.phase))
        continue;
      auto& g = make_implicit_group(self, pod);
      e.gang = g.gang;
      g.pods.push_back(id);
      continue;
    }
    auto key = object_key(pod.meta.namespace_name, pod.group);
    if (auto gang = st.cache.group_ids.find(key); gang != 0) {
      e.gang = gang;
      st.cache.groups.at(gang).pods.push_back(id);
    } else if (!scheduler::is_terminal(pod.phase)) {
      wait_for_group(st.cache, slot, key);
    }
  }

  // Ids stay unique past the expansions' last slot, kept or not.
  st.next_pod = std::max(st.next_pod, first_expanded_id + expanded.slots);

  for (auto& n : loaded.nodes) {
    auto c = committed.find(n.meta.name);
    add_node(self, std::move(n), c == committed.end() ? pod_refs{} : std::move(c->second));
  }
  for (const auto& [node, refs] : committed)
    if (!st.cache.nodes.count(node) && !refs.empty())
      oplog::warn("pods are bound to a node not in the store")
          .kv("pods", static_cast<uint64_t>(refs.size()))
          .kv("node", node.view());

  if (!loaded.quarantined.empty())
    oplog::warn("undecodable records quarantined at start")
        .kv("records", static_cast<uint64_t>(loaded.quarantined.size()));
  st.world->restored(self, restored_pods{std::move(resume), std::move(finished)},
                     loaded.world_meta);
}

void create_default_priority_classes(self_ptr self) {
  auto& st = self->state;
  std::map<std::string, int32_t, std::less<>> wanted(st.ctx->config.scheduling.priority_classes);
  for (const auto& c : scheduler::system_priority_classes)
    wanted.emplace(std::string(c.name), c.value);
  storage::write_batch batch;
  for (const auto& [name, value] : wanted) {
    if (auto i = st.priority_classes.find(name); i != st.priority_classes.end()) {
      // The stored class is the truth: it was created so, or changed through the API since.
      if (i->second->value != value)
        oplog::warn("PriorityClass kept as stored")
            .kv("name", name)
            .kv("value", int64_t{i->second->value})
            .kv("configured", int64_t{value});
      continue;
    }
    scheduler::priority_class c;
    c.meta.name = name;
    c.value = value;
    c.description = scheduler::find_system_priority_class(name)
                        ? "Used for system critical pods that must run in the cluster"
                        : "Created at start from phalanxd's configuration (priorityClasses)";
    if (auto errors = scheduler::validate(c); !errors.empty()) {
      oplog::error("configured PriorityClass not created")
          .kv("name", name)
          .kv("error", scheduler::to_status("PriorityClass", name, errors).message());
      continue;
    }
    c.meta.uid = new_uid(self);
    c.meta.creation_time = st.ctx->now();
    c.meta.resource_version = next_version(self);
    batch.put(c);
    st.priority_classes[name] = std::make_shared<const scheduler::priority_class>(std::move(c));
  }
  if (batch.empty())
    return;
  // As the default queue: made again at the next start should this write be lost.
  persist(self, std::move(batch), [](const status& s) {
    if (!s.ok())
      oplog::error("default PriorityClasses not persisted").kv("error", s.to_string());
  });
}

bool restore_parked(self_ptr self, group_entry& g) {
  auto& st = self->state;
  if (st.ctx->config.scheduling.park_idle_gangs_after.count() <= 0)
    return false;
  auto q = st.cache.queues.find(g.group->queue);
  if (q == st.cache.queues.end())
    return false;  // spawn_gang gives its pods the reason.
  int32_t bound = 0, succeeded = 0, ended = 0;
  std::vector<const scheduler::pod*> present;  // Pods that count toward minMember.
  usage_delta usage;
  usage.gang = g.gang;
  usage.whole = true;
  for (auto id : g.pods) {
    const auto& e = st.pods.at(id);
    if (scheduler::is_terminal(e.phase())) {
      ++ended;
      if (e.phase() == scheduler::pod_phase::succeeded) {
        ++succeeded;
        present.push_back(e.pod.get());
      }
    } else if (e.is_bound()) {
      ++bound;
      present.push_back(e.pod.get());
      usage.added += e.pod->requests;
    } else {
      return false;  // A pod to place: the gang has work to do.
    }
  }
  if (bound + ended == 0)
    return false;  // Nothing ever ran: a new gang.
  // A running gang short of its minimum makes placeholders for the missing members at once when
  // minResources sizes them (gang_actor_impl): that is work, and room no pod records.
  if (bound > 0 && st.ctx->config.scheduling.gang_scheduling &&
      bound + succeeded < g.group->min_member &&
      !scheduler::make_placeholders(*g.group, present).empty())
    return false;
  // What the gang's actor would report, started from these pods: running (admitted, its usage
  // at the queue) or completed (its queue forgets it at once, so it is never told).
  g.last_report = gang_report{};
  g.last_report.gang = g.gang;
  g.last_report.admitted = true;
  g.last_report.phase =
      bound > 0 ? scheduler::gang_phase::running : scheduler::gang_phase::completed;
  if (bound > 0)
    self->send(q->second.actor, usage_atom::value, std::move(usage));
  g.parked = true;
  st.ctx->metrics->parked_gangs.set(static_cast<double>(++st.cache.parked_gangs));
  return true;
}

} // namespace phalanx::actors::registry_detail
