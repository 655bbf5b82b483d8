#include "actors/sim_cluster.hpp"

#include "actors/operator_log.hpp"

#include "scheduler/quantity.hpp"
#include "storage/store.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cassert>
#include <limits>

namespace phalanx::actors {

namespace {

using self_ptr = binder_actor::stateful_pointer<sim_cluster_state>;
using sim_phase = sim_cluster_state::sim_phase;
using timer = sim_cluster_state::timer;

using gang_key = sim_cluster_state::gang_key;

// A pod's group, or the pod itself when it is its own gang.
const scheduler::shared_string& gang_name_of(const scheduler::pod& p) {
  return p.group.empty() ? p.meta.name : p.group;
}

// A pod has a namespace (validation requires one), so these are "<namespace>/<name>".
std::string key_of(const scheduler::pod& p) {
  return storage::object_key(p.meta.namespace_name, p.meta.name);
}

// Shares the pod's blocks: no text is copied.
gang_key gang_key_of(const scheduler::pod& p) {
  return {p.meta.namespace_name, gang_name_of(p)};
}

// "<namespace>/<group>", as the stall report names a gang.
std::string gang_text(const gang_key& k) {
  return storage::object_key(k.namespace_name, k.name);
}

// gang_key_of(p) == key, without copying the names.
bool same_gang(const gang_key& key, const scheduler::pod& p) {
  return key.namespace_name == p.meta.namespace_name && key.name == gang_name_of(p);
}

result<std::optional<scheduler::duration>> duration_annotation(const scheduler::pod& p,
                                                                 std::string_view key) {
  auto text = p.meta.annotations.find(key);
  if (!text)
    return std::optional<scheduler::duration>{};
  auto ns = scheduler::parse_duration_ns(*text);
  if (!ns)
    return status{errc::invalid_argument, "metadata.annotations[" + std::string(key) +
                                              "]: " + ns.error().message()};
  return std::optional<scheduler::duration>{scheduler::duration{*ns}};
}

void arm(self_ptr self) {
  auto& st = self->state;
  if (st.timers.empty())
    return;
  auto due = st.timers.top().due;
  if (st.armed && *st.armed <= due)
    return;
  st.armed = due;
  auto now = self->clock().now();
  auto delay = due > now ? due - now : caf::actor_clock::duration_type{0};
  self->delayed_send(self, delay, tick_atom::value);
}

void emit(self_ptr self, uint64_t id, scheduler::pod_phase phase, std::string message = {},
          std::optional<uint16_t> restart_count = std::nullopt) {
  auto& st = self->state;
  ++st.changes;
  st.outbox.push_back({id, phase, st.ctx->now(), std::move(message), restart_count});
}

void flush_outbox(self_ptr self) {
  auto& st = self->state;
  if (!st.sink)
    return;  // Without a sink yet, keep the changes until it arrives.
  if (!st.outbox.empty()) {
    self->send(st.sink, pod_status_atom::value, std::move(st.outbox));
    st.outbox.clear();
  }
  if (!st.terminated.empty()) {
    self->send(st.sink, terminated_atom::value, std::move(st.terminated));
    st.terminated.clear();
  }
}

void end_pod(self_ptr self, uint64_t id, scheduler::pod_phase phase, std::string message);

void child_ended(self_ptr self, const std::string& child_key, bool failed) {
  auto& st = self->state;
  auto parent = st.parent_of.find(child_key);
  if (parent == st.parent_of.end())
    return;
  auto p = st.pods.find(parent->second);
  st.parent_of.erase(parent);
  if (p == st.pods.end() || p->second.phase != sim_phase::running)
    return;
  auto* spawned = p->second.spawned();
  if (!spawned)
    return;
  auto& children = *spawned;
  ++children.done;
  children.failed |= failed;
  if (children.done >= static_cast<int32_t>(children.names.size()))
    end_pod(self, p->first,
            children.failed ? scheduler::pod_phase::failed : scheduler::pod_phase::succeeded,
            children.failed ? "a spawned pod failed" : "every spawned pod finished");
}

// Forgets an ended pod: the simulation keeps only what is still to happen, so a long run does
// not grow. A spawner's children it still waits for stay known by name (finished_names).
void drop_pod(sim_cluster_state& st, uint64_t id) {
  auto i = st.pods.find(id);
  if (i == st.pods.end())
    return;
  auto& sp = i->second;
  if (auto* children = sp.spawned())
    for (const auto& child : children->names) {
      st.parent_of.erase(child);
      st.finished_names.erase(child);
    }
  if (auto g = st.gangs.find(gang_key_of(*sp.pod)); g != st.gangs.end()) {
    auto& members = g->second.pods;
    const uint32_t at = sp.slot;
    assert(at < members.size() && members[at] == id);
    if (at + 1 != members.size()) { // The last pod takes the leaving one's place.
      members[at] = members.back();
      if (auto moved = st.pods.find(members[at]); moved != st.pods.end())
        moved->second.slot = at;
    }
    members.pop_back();
    if (members.empty())
      st.gangs.erase(g);
  }
  st.pods.erase(i);
  ++st.changes;
}

void end_pod(self_ptr self, uint64_t id, scheduler::pod_phase phase, std::string message) {
  auto& st = self->state;
  auto i = st.pods.find(id);
  if (i == st.pods.end() || i->second.phase == sim_phase::done)
    return;
  i->second.phase = sim_phase::done;
  auto key = key_of(*i->second.pod);
  bool is_child = st.parent_of.count(key) != 0;
  emit(self, id, phase, std::move(message));
  child_ended(self, key, phase == scheduler::pod_phase::failed);
  if (is_child)
    st.finished_names.insert(key);
  drop_pod(st, id);
}

// The children a spawner waits for: <pod>-exec-<i>; some may have ended before a restart.
void expect_children(uint64_t parent, sim_cluster_state::sim_pod& sp, sim_cluster_state& st) {
  auto& children = sp.declared->spawned.emplace(); // A spawner declared its spawn.
  for (const auto& child : spawned_pods(*sp.pod, sp.behavior())) {
    auto key = key_of(child);
    children.names.push_back(key);
    if (st.finished_names.count(key))
      ++children.done;
    else
      st.parent_of[key] = parent;
  }
}

void start_clock(self_ptr self, uint64_t id, sim_cluster_state::sim_pod& sp) {
  auto& st = self->state;
  auto now = self->clock().now();
  if (sp.behavior().fail_after &&
      (!sp.behavior().duration || *sp.behavior().fail_after < *sp.behavior().duration))
    st.timers.push({now + *sp.behavior().fail_after, id, timer::what::fail});
  else if (sp.behavior().duration)
    st.timers.push({now + *sp.behavior().duration, id, timer::what::succeed});
}

// The next restart of a running pod's container, unless it declares none or has restarted as
// often as it declares.
void schedule_restart(self_ptr self, uint64_t id, const sim_cluster_state::sim_pod& sp) {
  auto& st = self->state;
  const auto& b = sp.behavior();
  if (!b.restart_every || (b.restarts && sp.declared->restart_count >= *b.restarts))
    return;
  st.timers.push({self->clock().now() + *b.restart_every, id, timer::what::restart});
  ++st.restart_timers;
}

// A kubelet restarting a crashed container: the pod stays Running and its restart count grows,
// which the registry hears as a status update (Volcano's job controller reads it for TaskFailed).
void restart_container(self_ptr self, uint64_t id) {
  auto& st = self->state;
  auto i = st.pods.find(id);
  if (i == st.pods.end() || i->second.phase != sim_phase::running || !i->second.declared)
    return;  // Ended or deleted since.
  auto& sp = i->second;
  sp.declared->restart_count = scheduler::add_restarts(sp.declared->restart_count, 1);
  emit(self, id, scheduler::pod_phase::running, "its container restarted",
       sp.declared->restart_count);
  schedule_restart(self, id, sp);
}

// Starts the clocks of a gang's pods waiting at a barrier once enough of the gang runs.
void release_barrier(self_ptr self, const gang_key& key) {
  auto& st = self->state;
  auto g = st.gangs.find(key);
  if (g == st.gangs.end() || !g->second.has_barrier)
    return;
  int32_t running = 0;
  for (auto id : g->second.pods)
    if (auto p = st.pods.find(id); p != st.pods.end() && p->second.phase == sim_phase::running)
      ++running;
  for (auto id : g->second.pods) {
    auto p = st.pods.find(id);
    if (p == st.pods.end() || !p->second.at_barrier || p->second.behavior().barrier > running)
      continue;
    p->second.at_barrier = false;
    start_clock(self, id, p->second);
  }
}

void start_pod(self_ptr self, uint64_t id) {
  auto& st = self->state;
  auto& sp = st.pods.at(id);
  if (sp.phase != sim_phase::starting)
    return;
  sp.phase = sim_phase::running;
  emit(self, id, scheduler::pod_phase::running);
  schedule_restart(self, id, sp);
  if (sp.behavior().barrier > 0)
    sp.at_barrier = true;
  else
    start_clock(self, id, sp);
  release_barrier(self, gang_key_of(*sp.pod));
  if (sp.behavior().spawn > 0) {
    expect_children(id, sp, st);
    spawn_request req;
    req.parent = id;
    req.pods = spawned_pods(*sp.pod, sp.behavior());
    if (st.sink)
      self->send(st.sink, spawn_atom::value, std::move(req));
  }
}

void check_stall(self_ptr self) {
  auto& st = self->state;
  if (st.timers.size() > st.restart_timers)
    return;  // Some pod will still start, finish or fail on its own (a restart ends none).
  // Walking every pod is what costs (a loaded cluster holds 10^5 pods that run until deleted):
  // when no pod changed since the last walk, the stuck groups are the same ones. They are still
  // reported again, because the registry may have learnt of pending pods for them since.
  // The walk goes gang by gang and stops at a gang's first stuck pod, so a gang's name is made
  // once, not once per pod (a set of 10^5 strings, nearly all of them repeats).
  if (st.changes != st.changes_at_last_walk) {
    st.changes_at_last_walk = st.changes;
    auto stuck = [&](uint64_t id) {
      auto p = st.pods.find(id);
      if (p == st.pods.end())
        return false;
      const auto& sp = p->second;
      return sp.phase == sim_phase::running &&
             (sp.at_barrier || sp.behavior().spawn > 0 || !sp.behavior().declares_end());
    };
    st.stuck_groups.clear();
    for (const auto& [key, gang] : st.gangs)
      if (std::any_of(gang.pods.begin(), gang.pods.end(), stuck))
        st.stuck_groups.push_back(gang_text(key));
    std::sort(st.stuck_groups.begin(), st.stuck_groups.end());
  }
  if (st.stuck_groups.empty())
    return;
  stall_report report;
  report.stuck_groups = st.stuck_groups;
  report.message = "no simulated pod will finish on its own: every running pod waits for pods "
                   "that are not running";
  if (st.sink)
    self->send(st.sink, stalled_atom::value, std::move(report));
}

} // namespace

std::optional<int32_t> simulated_exit_code(const scheduler::pod& p,
                                           const scheduler::pod_runtime& state) {
  if (!state.is_bound() || !scheduler::is_terminal(state.phase))
    return std::nullopt;
  if (state.phase == scheduler::pod_phase::succeeded)
    return 0;
  if (!p.meta.annotations.has_key_with_prefix(sim_key_prefix))
    return 1;
  auto b = parse_sim_behavior(p);
  return b ? b->exit_code : 1;
}

result<sim_behavior> parse_sim_behavior(const scheduler::pod& p) {
  sim_behavior b;
  // Most pods carry no simulation annotation: one search for the prefix instead of nine lookups.
  if (!p.meta.annotations.has_key_with_prefix(sim_key_prefix))
    return b;
  auto d = duration_annotation(p, sim_duration_key);
  if (!d)
    return d.error();
  b.duration = *d;
  auto f = duration_annotation(p, sim_fail_after_key);
  if (!f)
    return f.error();
  b.fail_after = *f;
  auto sd = duration_annotation(p, sim_spawn_duration_key);
  if (!sd)
    return sd.error();
  b.spawn_duration = *sd;
  if (auto n = p.meta.annotations.find(sim_spawn_key)) {
    auto count = scheduler::parse_quantity(*n, scheduler::quantity_unit::whole);
    if (!count || *count < 0 || *count > 10000)
      return status{errc::invalid_argument, "metadata.annotations[" +
                                                std::string(sim_spawn_key) +
                                                "]: must be an integer between 0 and 10000"};
    b.spawn = static_cast<int32_t>(*count);
  }
  struct spawn_resource {
    std::string_view key;
    std::string_view resource;
  };
  for (auto [key, resource] :
       {spawn_resource{sim_spawn_cpu_key, scheduler::cpu_resource},
        spawn_resource{sim_spawn_memory_key, scheduler::memory_resource},
        spawn_resource{sim_spawn_gpu_key, "nvidia.com/gpu"}}) {
    if (auto text = p.meta.annotations.find(key)) {
      auto amount = scheduler::parse_resource_amount(resource, *text);
      if (!amount)
        return status{errc::invalid_argument, "metadata.annotations[" + std::string(key) +
                                                  "]: " + amount.error().message()};
      b.spawn_requests.set(resource, *amount);
    }
  }
  auto stop = duration_annotation(p, sim_stop_after_key);
  if (!stop)
    return stop.error();
  b.stop_after = *stop;
  auto every = duration_annotation(p, sim_restart_every_key);
  if (!every)
    return every.error();
  if (*every && **every <= scheduler::duration::zero())
    return status{errc::invalid_argument, "metadata.annotations[" +
                                              std::string(sim_restart_every_key) +
                                              "]: must be longer than zero"};
  b.restart_every = *every;
  if (auto n = p.meta.annotations.find(sim_restarts_key)) {
    auto count = scheduler::parse_quantity(*n, scheduler::quantity_unit::whole);
    if (!count || *count < 0 || *count > std::numeric_limits<uint16_t>::max())
      return status{errc::invalid_argument, "metadata.annotations[" +
                                                std::string(sim_restarts_key) +
                                                "]: must be an integer between 0 and 65535"};
    if (!b.restart_every)
      return status{errc::invalid_argument, "metadata.annotations[" +
                                                std::string(sim_restarts_key) + "]: needs " +
                                                std::string(sim_restart_every_key)};
    b.restarts = static_cast<uint16_t>(*count);
  }
  if (auto role = p.meta.annotations.find(sim_spawn_role_key))
    b.spawn_role = *role;
  if (auto n = p.meta.annotations.find(sim_exit_code_key)) {
    auto code = scheduler::parse_quantity(*n, scheduler::quantity_unit::whole);
    if (!code || *code < 1 || *code > 255)
      return status{errc::invalid_argument, "metadata.annotations[" +
                                                std::string(sim_exit_code_key) +
                                                "]: must be an integer between 1 and 255"};
    b.exit_code = static_cast<int32_t>(*code);
  }
  if (auto n = p.meta.annotations.find(sim_barrier_key)) {
    auto count = scheduler::parse_quantity(*n, scheduler::quantity_unit::whole);
    if (!count || *count < 0 || *count > 100000)
      return status{errc::invalid_argument, "metadata.annotations[" +
                                                std::string(sim_barrier_key) +
                                                "]: must be an integer between 0 and 100000"};
    b.barrier = static_cast<int32_t>(*count);
  }
  return b;
}

std::vector<scheduler::pod> spawned_pods(const scheduler::pod& parent, const sim_behavior& b) {
  std::vector<scheduler::pod> out;
  out.reserve(static_cast<std::size_t>(b.spawn));
  for (int32_t i = 0; i < b.spawn; ++i) {
    scheduler::pod child;
    child.meta.name = parent.meta.name + "-exec-" + std::to_string(i + 1);
    child.meta.namespace_name = parent.meta.namespace_name;
    child.meta.labels = parent.meta.labels;
    if (!parent.group.empty())
      child.meta.annotations.set(scheduler::pod_group_annotation, parent.group);
    if (b.spawn_duration)
      child.meta.annotations.set(sim_duration_key,
                                 scheduler::format_duration_ns(b.spawn_duration->count()));
    child.group = parent.group;
    child.role = b.spawn_role;
    child.requests = b.spawn_requests;
    child.requests.pods = 1;
    child.priority = parent.priority;
    child.priority_class_name = parent.priority_class_name;
    child.scheduler_name = parent.scheduler_name;
    child.constraints = parent.constraints;
    out.push_back(std::move(child));
  }
  return out;
}

binder_actor::behavior_type sim_cluster_impl(self_ptr self, context_ptr ctx,
                                             status_sink_actor sink) {
  self->state.ctx = std::move(ctx);
  self->state.sink = std::move(sink);
  auto interval = self->state.ctx->config.simulation.stall_check_interval;
  if (interval.count() > 0)
    self->delayed_send(self, interval, stalled_atom::value);
  return {
    [self](bind_pods_atom, uint32_t, const scheduler::shared_string&, const pod_refs& pods) {
      auto& st = self->state;
      auto now = self->clock().now();
      auto wall_now = st.ctx->now();
      // The pods of one message are usually one gang's: its entry is looked up once.
      std::pair<const gang_key, sim_cluster_state::sim_gang>* gang = nullptr;
      for (const auto& ref : pods) {
        if (st.pods.count(ref.id))
          continue;  // Bound twice would be a bug upstream; simulate once.
        if (!gang || !same_gang(gang->first, *ref.pod))
          gang = &*st.gangs.try_emplace(gang_key_of(*ref.pod)).first;
        sim_cluster_state::sim_pod sp;
        sp.pod = ref.pod;
        sp.slot = static_cast<uint32_t>(gang->second.pods.size());
        gang->second.pods.push_back(ref.id);
        // A pod without sim.phalanx.io/ annotations (most) runs with the default behavior.
        if (ref.pod->meta.annotations.has_key_with_prefix(sim_key_prefix)) {
          auto behavior = parse_sim_behavior(*ref.pod);
          if (behavior)
            sp.declared = std::make_unique<sim_cluster_state::declared_behavior>(
                sim_cluster_state::declared_behavior{std::move(*behavior), std::nullopt,
                                                     ref.pod->restart_count});
          else
            oplog::warn("simulating a pod without an end")
                .kv("pod", key_of(*ref.pod))
                .kv("error", behavior.error().message());
        }
        if (sp.behavior().barrier > 0)
          gang->second.has_barrier = true;
        bool resumed = ref.pod->phase == scheduler::pod_phase::running &&
                       ref.pod->start_time != scheduler::timestamp{};
        if (resumed) {
          // Restart: it was running; it ends when it would have.
          sp.phase = sim_phase::running;
          auto ran = std::chrono::duration_cast<caf::actor_clock::duration_type>(
              wall_now - ref.pod->start_time);
          auto until = [&](scheduler::duration d) {
            auto left = std::chrono::duration_cast<caf::actor_clock::duration_type>(d) - ran;
            return now + std::max(left, caf::actor_clock::duration_type{0});
          };
          if (sp.behavior().fail_after)
            st.timers.push({until(*sp.behavior().fail_after), ref.id, timer::what::fail});
          else if (sp.behavior().duration)
            st.timers.push({until(*sp.behavior().duration), ref.id, timer::what::succeed});
          // Its restarts go on from its count, the next one an interval from now.
          schedule_restart(self, ref.id, sp);
          if (sp.behavior().spawn > 0) {
            expect_children(ref.id, sp, st);
            spawn_request req;  // Idempotent at the registry: existing children are kept.
            req.parent = ref.id;
            req.pods = spawned_pods(*sp.pod, sp.behavior());
            self->send(st.sink, spawn_atom::value, std::move(req));
          }
        } else {
          st.timers.push({now + st.ctx->config.simulation.pod_start_delay, ref.id,
                          timer::what::start});
        }
        st.pods.emplace(ref.id, std::move(sp));
        ++st.changes;
      }
      arm(self);
    },
    [self](forget_atom, const std::vector<uint64_t>& ids) {
      for (auto id : ids) {
        drop_pod(self->state, id);  // Its timers find nothing and do nothing.
        self->state.terminating.erase(id);
      }
    },
    // A kubelet's part of a graceful deletion: the containers are told to stop and take their
    // declared time (sim.phalanx.io/stop-after), cut short by the deadline; then the pod is
    // removed. A pod not running here (ended, or its binding not here yet) stops at once.
    [self](terminate_atom, const std::vector<termination_order>& orders) {
      auto& st = self->state;
      const auto now = self->clock().now();
      const auto wall_now = st.ctx->now();
      for (const auto& order : orders) {
        // Told again (a shorter grace period): a second timer; the first to fire stops it.
        st.terminating.insert(order.pod);
        scheduler::duration left = std::max(order.deadline - wall_now, scheduler::duration{0});
        scheduler::duration stop_after{0};
        if (auto i = st.pods.find(order.pod); i != st.pods.end())
          stop_after = i->second.behavior().stop_after.value_or(scheduler::duration{0});
        auto delay = std::chrono::duration_cast<caf::actor_clock::duration_type>(
            std::min(left, stop_after));
        st.timers.push({now + delay, order.pod, sim_cluster_state::timer::what::stop});
      }
      arm(self);
    },
    [self](fail_atom, uint64_t id) {
      end_pod(self, id, scheduler::pod_phase::failed, "failed on request");
      flush_outbox(self);
    },
    // Standalone mode evicts through the catalog: the registry deletes the victims, and this
    // hears of it as of any deletion (forget_atom). Nothing else comes here.
    [](evict_atom, const eviction_batch&) {},
    [self](adopt_atom, const pod_refs& finished) {
      auto& st = self->state;
      for (const auto& ref : finished)
        st.finished_names.insert(key_of(*ref.pod));
    },
    [self](finished_atom, const std::vector<pod_outcome>& outcomes) {
      for (const auto& o : outcomes)
        end_pod(self, o.pod, o.phase, "its job ended");
      flush_outbox(self);
    },
    [self](tick_atom) {
      auto& st = self->state;
      auto now = self->clock().now();
      if (st.armed && *st.armed <= now)
        st.armed.reset();
      while (!st.timers.empty() && st.timers.top().due <= now) {
        auto t = st.timers.top();
        st.timers.pop();
        if (t.action == timer::what::restart) {
          --st.restart_timers;
          restart_container(self, t.pod);
          continue;
        }
        if (t.action == timer::what::stop) {
          if (st.terminating.erase(t.pod) != 0) {
            drop_pod(st, t.pod);  // Stopped: no phase of it is reported any more.
            st.terminated.push_back(t.pod);
          }
          continue;
        }
        auto i = st.pods.find(t.pod);
        if (i == st.pods.end())
          continue;
        switch (t.action) {
          case timer::what::start:
            start_pod(self, t.pod);
            break;
          case timer::what::succeed:
            end_pod(self, t.pod, scheduler::pod_phase::succeeded, {});
            break;
          case timer::what::fail:
            end_pod(self, t.pod, scheduler::pod_phase::failed,
                    "failed after its declared time with exit code " +
                        std::to_string(i->second.behavior().exit_code));
            break;
          case timer::what::stop:
          case timer::what::restart:
            break;  // Handled above.

        }
      }
      flush_outbox(self);
      arm(self);
    },
    [self](spec_atom, status_sink_actor& sink) {
      self->state.sink = std::move(sink);
      flush_outbox(self);
    },
    [self](stalled_atom) {
      check_stall(self);
      auto interval = self->state.ctx->config.simulation.stall_check_interval;
      if (interval.count() > 0)
        self->delayed_send(self, interval, stalled_atom::value);
    },
  };
}

} // namespace phalanx::actors
