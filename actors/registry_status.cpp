// Status as Volcano shows it, computed from the catalog: pod conditions, PodGroup phase and
// counts, queue counts and allocation (a recount from pods, which is what invariant I4 compares
// the queue actors' accounting with), job phase and per-task counts.

#include "actors/registry_internal.hpp"
#include "actors/world_port.hpp"

#include "api/job_plugins.hpp"
#include "scheduler/random.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <functional>
#include <string_view>

namespace phalanx::actors::registry_detail {

namespace {

struct pod_counts {
  int32_t total = 0;
  int32_t pending = 0;    // Not bound, not finished.
  int32_t bound = 0;      // Bound, not finished.
  int32_t running = 0;    // Phase Running.
  int32_t succeeded = 0;
  int32_t failed = 0;
};

pod_counts count(const registry_state& st, const group_entry& g) {
  pod_counts c;
  for (auto id : g.pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end())
      continue;
    const auto& e = p->second;
    ++c.total;
    switch (e.phase()) {
      case scheduler::pod_phase::succeeded:
        ++c.succeeded;
        continue;
      case scheduler::pod_phase::failed:
        ++c.failed;
        continue;
      case scheduler::pod_phase::running:
        ++c.running;
        break;
      default:
        break;
    }
    if (e.is_bound())
      ++c.bound;
    else
      ++c.pending;
  }
  return c;
}

} // namespace

namespace {

// What its job's volumes and plugins give a job's pod (api/job_plugins.hpp): the claims'
// volumes and mounts, the task index variables, host names and annotations Volcano's controller
// writes into the pods it creates. Made where a pod is shown rather than kept in each pod, as a
// restart makes a job's pods again from the job: only the pods of jobs with volumes or plugins
// pay for it. Standalone only: in Kubernetes mode the apiserver's pods already carry them, and
// no job is in the catalog.
void add_job_plugins(const registry_state& st, const pod_entry& e, scheduler::pod& pod) {
  if (e.gang == 0)
    return;
  auto g = st.cache.groups.find(e.gang);
  if (g == st.cache.groups.end() || g->second.job_key.empty())
    return;
  auto j = st.jobs.find(g->second.job_key.view());
  if (j == st.jobs.end() || (j->second.job->plugins.empty() && j->second.job->volumes.empty()))
    return;
  const auto& job = *j->second.job;
  const auto settings = scheduler::plugin_settings_of(job);
  if (settings == scheduler::job_plugin_settings{} && job.volumes.empty())
    return;  // Nothing that adds to a pod.
  boost::json::object spec;
  if (!pod.spec_json.empty()) {
    boost::system::error_code ec;
    auto parsed = boost::json::parse(pod.spec_json.view(), ec);
    if (!ec && parsed.is_object())
      spec = std::move(parsed.as_object());
  }
  const std::string index(pod.meta.annotations.find(scheduler::task_index_key).value_or(""));
  api::add_job_to_pod(spec, pod.meta.annotations, job, settings, pod.meta.name.view(),
                      pod.role.view(), index);
  pod.spec_json = boost::json::serialize(spec);
}

} // namespace

api::pod_object pod_view(const registry_state& st, uint64_t id, const pod_entry& e) {
  api::pod_object out{*e.pod, {}, {}};
  add_job_plugins(st, e, out.pod);
  if (e.changed)
    scheduler::set_runtime(out.pod, e.changed->state);
  if (scheduler::is_terminal(e.phase()))
    out.exit_code = st.world->exit_code(e);
  if (auto t = st.terminating.find(id); t != st.terminating.end() && t->second.shown) {
    out.termination = t->second.shown;
    out.pod.meta.resource_version =
        std::max(out.pod.meta.resource_version, t->second.shown_version);
  }
  scheduler::condition c;
  c.type = "PodScheduled";
  if (e.is_bound()) {
    c.status = "True";
    c.last_transition_time = out.pod.start_time;
  } else if (e.pod->is_gated()) {
    c.status = "False";
    c.reason = scheduler::scheduling_gated_reason;
    c.message = scheduler::scheduling_gated_message;
    c.last_transition_time = e.pod->meta.creation_time;
  } else if (auto why = pending_reason(st, id, e); !why.empty()) {
    c.status = "False";
    c.reason = "Unschedulable";
    c.message = std::string(why);
    // Unscheduled since it came: the time changes only with the status (False to True at its
    // binding), not at every read, as Kubernetes keeps a condition's transition time.
    c.last_transition_time = e.pod->meta.creation_time;
  } else {
    return out;
  }
  out.conditions.push_back(std::move(c));
  return out;
}

namespace {

scheduler::pod_group_phase phase_of(const pod_counts& c, const group_entry& g) {
  if (c.total > 0 && c.pending == 0 && c.bound == 0)
    return scheduler::pod_group_phase::completed;
  const int32_t placed = c.bound + c.succeeded;
  if (placed >= g.group->min_member && placed > 0)
    return scheduler::pod_group_phase::running;
  if (g.last_report.phase == scheduler::gang_phase::running && c.bound > 0)
    // The gang ran. With placeholders holding room for members to come it still runs; below
    // its minimum otherwise (a member deleted or failed, its replacement not placed) it is
    // Volcano's Unknown: pods run, and the gang as a whole is not there. It runs again once
    // the replacements are bound.
    return placed + g.last_report.placeholders >= g.group->min_member
               ? scheduler::pod_group_phase::running
               : scheduler::pod_group_phase::unknown;
  if (g.last_report.admitted)
    return scheduler::pod_group_phase::inqueue;
  return scheduler::pod_group_phase::pending;
}

} // namespace

group_summary summarize_group(const registry_state& st, const group_entry& g) {
  auto c = count(st, g);
  group_summary out;
  out.phase = phase_of(c, g);
  out.running = c.running;
  // What group_status shows, and only that (an input it does not show, such as the count of
  // pods bound but not running while the group is pending, would announce an unchanged status):
  // mixed word by word with SplitMix64's finalizer.
  auto mix = [&out](uint64_t v) {
    out.digest = scheduler::mix64(out.digest + v + 0x9e3779b97f4a7c15ULL);
  };
  auto word = [](int32_t a, int32_t b) {
    return (uint64_t{static_cast<uint32_t>(a)} << 32) | static_cast<uint32_t>(b);
  };
  std::hash<std::string_view> text;
  mix(word(static_cast<int32_t>(out.phase), c.running));
  mix(word(c.succeeded, c.failed));
  mix(text(g.stall_message));
  if (out.phase == scheduler::pod_group_phase::pending ||
      out.phase == scheduler::pod_group_phase::inqueue) {
    if (!g.last_report.pending_reason.empty()) {
      mix(text(g.last_report.pending_reason));
      mix(text(g.last_report.reason_code));
    }
  } else if (out.phase == scheduler::pod_group_phase::running) {
    mix(word(c.bound + c.succeeded, c.total));
    mix(word(g.group->min_member, g.last_report.placeholders));
  }
  return out;
}

void mark_emitted(registry_state& st, group_entry& g) {
  auto summary = summarize_group(st, g);
  set_emitted_phase(st.cache, g, summary.phase);
  g.emitted_digest = summary.digest;
}

namespace {

void publish_phase_counts(const std::array<int64_t, 5>& counts,
                          const registry_state::queue_entry& q) {
  if (q.pending_gangs == nullptr)
    return;
  for (std::size_t i = 0; i < counts.size(); ++i)
    q.pod_groups_by_phase[i]->set(double(counts[i]));
  using scheduler::pod_group_phase;
  q.pending_gangs->set(double(counts[static_cast<std::size_t>(pod_group_phase::pending)] +
                              counts[static_cast<std::size_t>(pod_group_phase::inqueue)]));
}

} // namespace

void count_phase(scheduling_cache& cache, const std::string& queue,
                 scheduler::pod_group_phase phase, int64_t delta) {
  auto [at, fresh] = cache.phases_by_queue.try_emplace(queue);
  auto& counts = at->second;
  counts[static_cast<std::size_t>(phase)] += delta;
  if (auto q = cache.queues.find(queue); q != cache.queues.end())
    publish_phase_counts(counts, q->second);
  if (std::all_of(counts.begin(), counts.end(), [](int64_t n) { return n == 0; }))
    cache.phases_by_queue.erase(at);
}

void set_emitted_phase(scheduling_cache& cache, group_entry& g, scheduler::pod_group_phase phase) {
  if (phase == g.emitted_phase)
    return;
  if (auto q = cache.gangs_by_queue.find(g.group->queue);
      q != cache.gangs_by_queue.end() && q->second.count(g.gang) != 0) {
    count_phase(cache, g.group->queue, g.emitted_phase, -1);
    count_phase(cache, g.group->queue, phase, +1);
  }
  g.emitted_phase = phase;
}

void bind_queue_series(registry_state& st, registry_state::queue_entry& q) {
  auto& m = *st.ctx->metrics;
  const std::string name = q.queue->meta.name.str();
  for (std::size_t i = 0; i < q.pod_groups_by_phase.size(); ++i)
    q.pod_groups_by_phase[i] = &m.pod_group_counts[i]->with({name});
  q.pending_gangs = &m.pending_gangs.with({name});
  auto counts = st.cache.phases_by_queue.find(name);
  publish_phase_counts(counts != st.cache.phases_by_queue.end() ? counts->second
                                                          : std::array<int64_t, 5>{},
                       q);
}

scheduler::pod_group_status group_status(const registry_state& st, const group_entry& g) {
  auto c = count(st, g);
  scheduler::pod_group_status s;
  s.running = c.running;
  s.succeeded = c.succeeded;
  s.failed = c.failed;
  s.phase = phase_of(c, g);

  if (!g.stall_message.empty()) {
    scheduler::condition stalled;
    stalled.type = "Stalled";
    stalled.status = "True";
    stalled.reason = "Deadlock";
    stalled.message = g.stall_message;
    s.conditions.push_back(std::move(stalled));
  }
  if (s.phase == scheduler::pod_group_phase::pending ||
      s.phase == scheduler::pod_group_phase::inqueue) {
    if (!g.last_report.pending_reason.empty()) {
      scheduler::condition u;
      u.type = "Unschedulable";
      u.status = "True";
      u.reason = g.last_report.reason_code.empty() ? "NotEnoughResources"
                                                   : g.last_report.reason_code;
      u.message = g.last_report.pending_reason;
      u.last_transition_time = g.group->meta.creation_time;  // Not running since it came.
      s.conditions.push_back(std::move(u));
    }
  } else if (s.phase == scheduler::pod_group_phase::running) {
    scheduler::condition sc;
    sc.type = "Scheduled";
    sc.status = "True";
    sc.reason = "tasks in gang are ready";
    sc.message = std::to_string(c.bound + c.succeeded) + "/" + std::to_string(c.total) +
                 " tasks in gang are bound, minMember " + std::to_string(g.group->min_member);
    if (g.last_report.placeholders > 0)
      sc.message += "; " + std::to_string(g.last_report.placeholders) +
                    " placeholder(s) hold room for members not created yet";
    s.conditions.push_back(std::move(sc));
  }
  return s;
}

api::pod_group_object group_view(const registry_state& st, const group_entry& g) {
  return {*g.group, group_status(st, g)};
}

api::node_object node_view(const registry_state::node_entry& n) {
  return {*n.node, n.allocated, n.pod_count};
}

// Volcano's queue states as a user sees them: a queue closed, or under a closed ancestor, is
// Closing while PodGroups of it have not completed (they run on; nothing new is admitted), and
// Closed once none is left.
void show_state(const registry_state& st, api::queue_object& out) {
  const bool closed = out.queue.state != scheduler::queue_state::open ||
                      closed_ancestor(st.cache, out.queue) != nullptr;
  if (!closed)
    return;
  const auto& s = out.status;
  out.queue.state = s.pending + s.inqueue + s.running + s.unknown > 0
                        ? scheduler::queue_state::closing
                        : scheduler::queue_state::closed;
}

api::queue_object queue_view(const registry_state& st, const registry_state::queue_entry& q) {
  api::queue_object out{*q.queue, {}};
  auto& s = out.status;
  auto gangs = st.cache.gangs_by_queue.find(q.queue->meta.name.str());
  if (gangs == st.cache.gangs_by_queue.end()) {
    s.deserved = q.deserved;
    show_state(st, out);
    return out;
  }
  for (auto gang : gangs->second) {
    auto i = st.cache.groups.find(gang);
    if (i == st.cache.groups.end())
      continue;
    const auto& g = i->second;
    if (g.removed)
      continue;
    switch (summarize_group(st, g).phase) {
      case scheduler::pod_group_phase::pending:
        ++s.pending;
        break;
      case scheduler::pod_group_phase::inqueue:
        ++s.inqueue;
        break;
      case scheduler::pod_group_phase::running:
        ++s.running;
        break;
      case scheduler::pod_group_phase::unknown:
        ++s.unknown;
        break;
      case scheduler::pod_group_phase::completed:
        ++s.completed;
        break;
    }
    for (auto id : g.pods)
      if (auto p = st.pods.find(id); p != st.pods.end() && p->second.is_bound() &&
                                     !scheduler::is_terminal(p->second.phase()))
        s.allocated += p->second.pod->requests;
  }
  s.deserved = q.deserved;
  show_state(st, out);
  return out;
}

scheduler::job_phase job_phase_of(const registry_state::job_entry& j, const job_pod_totals& t,
                                  int32_t min_available) {
  using scheduler::job_phase;
  // Phases the job controller reached and persisted (registry_jobs.cpp) hold until it moves
  // the job on; Pending, Running and the end of a job's own run are read from its pods.
  // Restarting holds while the controller's step is under way (a targeted restart leaves pods
  // of other tasks running meanwhile); a resumed job is written Restarting with its new pods,
  // and is read from them.
  const auto stored = j.status.phase;
  const bool held = stored == job_phase::failed || stored == job_phase::completed ||
                    stored == job_phase::terminated || stored == job_phase::terminating ||
                    stored == job_phase::completing || stored == job_phase::aborting ||
                    (stored == job_phase::restarting && j.acting);
  if (j.job->suspended)
    return job_phase::aborted;
  if (held)
    return stored;
  if (t.total == 0)
    return stored == job_phase::restarting ? job_phase::restarting : job_phase::pending;
  if (t.succeeded + t.failed == t.total)
    return t.succeeded >= min_available ? job_phase::completed : job_phase::failed;
  // Volcano's syncs (scheduler/job_lifecycle.hpp): a Running job goes back to Pending only when
  // more pods are pending than minAvailable leaves room for (it lost members that are being
  // made again), not when one failed; a Pending one runs once minAvailable pods ran or ended.
  const int32_t pending = t.total - t.running - t.succeeded - t.failed;
  if (stored == job_phase::running) {
    int32_t replicas = 0;
    for (const auto& task : j.job->tasks)
      replicas += task.replicas;
    return pending > replicas - min_available ? job_phase::pending : job_phase::running;
  }
  if (t.running + t.succeeded + t.failed >= min_available)
    return job_phase::running;
  return job_phase::pending;
}

job_pod_totals pod_totals(const registry_state& st, const group_entry& g) {
  job_pod_totals t;
  for (auto id : g.pods)
    if (auto p = st.pods.find(id); p != st.pods.end()) {
      ++t.total;
      switch (p->second.phase()) {
        case scheduler::pod_phase::running: ++t.running; break;
        case scheduler::pod_phase::succeeded: ++t.succeeded; break;
        case scheduler::pod_phase::failed: ++t.failed; break;
        default: break;
      }
    }
  return t;
}

scheduler::job_status job_status_of(const registry_state& st,
                                    const registry_state::job_entry& j) {
  auto s = j.status;
  s.pending = s.running = s.succeeded = s.failed = s.terminating = s.unknown = 0;
  s.tasks.clear();
  const group_entry* g = nullptr;
  if (auto gang = st.cache.group_ids.find(j.group_key); gang != 0)
    g = &st.cache.groups.at(gang);
  int32_t total = 0;
  if (g != nullptr) {
    s.min_available = g->group->min_member;
    // Keyed by views of the pods' role names (alive for this call): a task's name is copied
    // once, when its first pod is counted, not twice per pod.
    std::map<std::string_view, scheduler::task_counts> tasks;
    for (auto id : g->pods) {
      auto p = st.pods.find(id);
      if (p == st.pods.end())
        continue;
      const auto& pod = *p->second.pod;
      auto [at, inserted] = tasks.try_emplace(pod.role);
      auto& t = at->second;
      if (inserted)
        t.task = pod.role.str();
      ++total;
      switch (p->second.phase()) {
        case scheduler::pod_phase::running:
          ++s.running;
          ++t.running;
          break;
        case scheduler::pod_phase::succeeded:
          ++s.succeeded;
          ++t.succeeded;
          break;
        case scheduler::pod_phase::failed:
          ++s.failed;
          ++t.failed;
          break;
        case scheduler::pod_phase::unknown:
          ++s.unknown;
          ++t.unknown;
          break;
        case scheduler::pod_phase::pending:
          ++s.pending;
          ++t.pending;
          break;
      }
    }
    for (auto& [name, t] : tasks)
      s.tasks.push_back(std::move(t));
  }
  s.phase = job_phase_of(j, {total, s.running, s.succeeded, s.failed}, s.min_available);
  // Pending and Running (the phases the controller leaves to its pods) are what a sync gives:
  // job_phase_of's totals cannot tell minSuccess reached, or a task that ended below its
  // minAvailable. A job stored Pending whose pods all ended runs and ends in one read.
  using scheduler::job_phase;
  const auto stored = j.status.phase;
  if (total > 0 && !j.job->suspended &&
      (stored == job_phase::pending || stored == job_phase::running)) {
    auto synced = scheduler::phase_by_sync(*j.job, stored, s.tasks);
    if (stored == job_phase::pending && synced.phase == job_phase::running)
      if (auto ended = scheduler::phase_by_sync(*j.job, job_phase::running, s.tasks);
          ended.phase != job_phase::running)
        synced = std::move(ended);
    s.phase = synced.phase;
    if (synced.phase != stored && !synced.reason.empty()) {
      s.reason = std::move(synced.reason);
      s.message = std::move(synced.message);
    }
  }
  return s;
}

api::job_object job_view(const registry_state& st, const registry_state::job_entry& j) {
  return {*j.job, job_status_of(st, j)};
}

registry_snapshot snapshot(const registry_state& st) {
  registry_snapshot out;
  out.resource_version = st.resource_version;
  for (const auto& [id, e] : st.pods) {
    registry_snapshot::pod_fact f;
    f.id = id;
    f.key = object_key(e.pod->meta.namespace_name, e.pod->meta.name);
    if (auto g = st.cache.groups.find(e.gang); g != st.cache.groups.end())
      f.group_key = g->second.key.str();
    f.node = e.node_name();
    f.phase = e.phase();
    f.requests = e.pod->requests;
    f.role = e.pod->role;
    f.object = e.pod;
    out.pods.push_back(std::move(f));
  }
  for (const auto& [gang, g] : st.cache.groups) {
    out.groups.push_back(
        {g.key.str(), g.group->queue, g.group->min_member, g.group->min_task_member, gang, g.parked,
         g.last_report.phase == scheduler::gang_phase::completed, g.sent_to_actor});
    if (g.actor)
      out.gang_actors[gang] = caf::actor_cast<caf::strong_actor_ptr>(g.actor);
  }
  for (const auto& [name, q] : st.cache.queues)
    out.queue_actors[name] = caf::actor_cast<caf::strong_actor_ptr>(q.actor);
  for (const auto& [name, n] : st.cache.nodes)
    if (n.live) {
      out.node_allocatable[name] = n.node->allocatable;
      out.node_index[name] = n.index;
    }
  return out;
}

} // namespace phalanx::actors::registry_detail
