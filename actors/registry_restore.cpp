// Start-up: rebuild the catalog from the store, respawn the actors, restore node usage from the
// persisted bindings, resume simulated pods, and only then report ready (DESIGN.md section 5).

#include "actors/registry_internal.hpp"

#include "scheduler/job.hpp"

#include <spdlog/spdlog.h>

namespace phalanx::actors::registry_detail {

void restore(self_ptr self, storage::loaded_state& loaded) {
  auto& st = self->state;
  st.resource_version = loaded.max_resource_version;

  bool has_default = false;
  for (auto& q : loaded.queues) {
    has_default |= q.queue.meta.name == scheduler::default_queue_name;
    add_queue(self, std::move(q.queue));
  }
  if (!has_default) {
    // Volcano installs a "default" queue; gangs that name no queue go there.
    scheduler::queue q;
    q.meta.name = std::string(scheduler::default_queue_name);
    q.meta.uid = new_uid(self);
    q.meta.creation_time = st.ctx->now();
    q.meta.resource_version = next_version(self);
    q.weight = 1;
    q.reclaimable = true;
    storage::write_batch batch;
    batch.put(storage::queue_record{q});
    persist(self, std::move(batch), [](const status& s) {
      if (!s.ok())
        spdlog::error("could not persist the default queue: {}", s.to_string());
    });
    add_queue(self, std::move(q));
  }

  std::unordered_map<std::string, std::string> job_of_group;
  for (auto& j : loaded.jobs) {
    auto key = object_key(j.job.meta.namespace_name, j.job.meta.name);
    auto group_key = object_key(j.job.meta.namespace_name, scheduler::pod_group_name(j.job));
    job_of_group[group_key] = key;
    st.jobs[key] = {std::make_shared<const scheduler::job>(std::move(j.job)), j.status,
                    group_key};
  }
  for (auto& r : loaded.pod_groups) {
    auto gang = st.next_gang++;
    auto& g = st.groups[gang];
    g.gang = gang;
    g.key = object_key(r.group.meta.namespace_name, r.group.meta.name);
    g.group = std::make_shared<const scheduler::pod_group>(std::move(r.group));
    if (auto j = job_of_group.find(g.key); j != job_of_group.end())
      g.job_key = j->second;
    // A restored gang was admitted if it had bound pods; the gang actor reports again anyway.
    index_group(st, g);
  }

  std::unordered_map<std::string, pod_refs> committed;  // node -> bound, not finished
  std::unordered_map<std::string, pod_refs> resume;     // The same, for the binder.
  pod_refs finished;
  for (auto& p : loaded.pods) {
    auto& e = insert_pod(self, std::make_shared<const scheduler::pod>(std::move(p)));
    auto id = e.id;
    const auto& pod = *e.pod;
    if (pod.is_bound() && !scheduler::is_terminal(pod.phase)) {
      committed[pod.node_name].push_back({id, e.pod});
      resume[pod.node_name].push_back({id, e.pod});
    }
    if (scheduler::is_terminal(pod.phase))
      finished.push_back({id, e.pod});
    if (!is_our_scheduler(st.ctx->config.scheduling, pod.scheduler_name)) {
      e.reason = std::make_shared<const std::string>(
          "schedulerName \"" + pod.scheduler_name + "\" is not served by this scheduler");
      continue;
    }
    if (pod.group.empty()) {
      if (scheduler::is_terminal(pod.phase))
        continue;
      auto& g = make_implicit_group(self, pod);
      e.gang = g.gang;
      g.pods.push_back(id);
      continue;
    }
    auto key = object_key(pod.meta.namespace_name, pod.group);
    if (auto g = st.group_ids.find(key); g != st.group_ids.end()) {
      e.gang = g->second;
      st.groups.at(g->second).pods.push_back(id);
    } else if (!scheduler::is_terminal(pod.phase)) {
      st.orphans[key].push_back(id);
      e.reason = std::make_shared<const std::string>("pod group \"" + pod.group +
                                                     "\" not found; the pod waits for it");
    }
  }

  for (auto& n : loaded.nodes) {
    auto name = n.meta.name;
    auto c = committed.find(name);
    add_node(self, std::move(n), c == committed.end() ? pod_refs{} : std::move(c->second));
  }
  for (const auto& [node, refs] : committed)
    if (!st.nodes.count(node) && !refs.empty())
      spdlog::warn("{} pods are bound to node {}, which is not in the store", refs.size(), node);

  for (auto& [gang, g] : st.groups) {
    spawn_gang(self, g);
    g.emitted = group_status(st, g);
  }

  // Resume the simulation: what finished before, then what was running, node by node.
  if (!finished.empty())
    self->send(st.binder, adopt_atom::value, std::move(finished));
  for (auto& [name, running] : resume)
    if (auto n = st.nodes.find(name); n != st.nodes.end())
      self->send(st.binder, bind_pods_atom::value, n->second.index, name, std::move(running));

  if (!loaded.quarantined.empty())
    spdlog::warn("{} undecodable records were quarantined at start", loaded.quarantined.size());
  spdlog::info("restored {} nodes, {} queues, {} PodGroups, {} pods, {} jobs", st.nodes.size(),
               st.queues.size(), st.groups.size(), st.pods.size(), st.jobs.size());
  st.ready->store(true);
  st.ctx->metrics->ready.set(1);
}

} // namespace phalanx::actors::registry_detail
