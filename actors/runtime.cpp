#include "actors/runtime.hpp"
#include "actors/runtime_probe.hpp"

#include "actors/cluster_actor.hpp"
#include "actors/gang_actor.hpp"
#include "actors/kube_job_controller.hpp"
#include "actors/kube_world.hpp"
#include "actors/node_actor.hpp"
#include "actors/operator_log.hpp"
#include "actors/queue_actor.hpp"
#include "actors/registry.hpp"
#include "actors/sim_cluster.hpp"
#include "actors/store_writer.hpp"

#include "scheduler/pod_neighbourhood.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unordered_map>

namespace phalanx::actors {

namespace {

/// Why the runtime cannot go on, once a vital actor stopped (runtime::failure()).
struct failure_note {
  mutable std::mutex mutex;
  std::string why;
  std::string read() const {
    std::lock_guard lock(mutex);
    return why;
  }
};

/// The API's service, relayed into the registry actor.
class runtime_service final : public api::service {
 public:
  runtime_service(registry_actor registry, std::shared_ptr<std::atomic<bool>> ready,
                  context_ptr ctx, std::shared_ptr<const failure_note> failure)
    : registry_(std::move(registry)), ready_(std::move(ready)), ctx_(std::move(ctx)),
      failure_(std::move(failure)) {}

  using api::service::create;
  using api::service::update;
  using api::service::remove;
  void create(api::object obj, const api::write_options& options, object_callback done) override {
    caf::anon_send(registry_, create_atom::value, std::move(obj), options.dry_run,
                   std::make_shared<object_callback>(std::move(done)));
  }
  void get(api::resource_kind kind, std::string ns, std::string name,
           object_callback done) override {
    caf::anon_send(registry_, read_atom::value, kind, std::move(ns), std::move(name),
                   std::make_shared<object_callback>(std::move(done)));
  }
  void list(api::resource_kind kind, api::list_options options, list_callback done) override {
    caf::anon_send(registry_, list_atom::value, kind, std::move(options),
                   std::make_shared<list_callback>(std::move(done)));
  }
  void remove(api::resource_kind kind, std::string ns, std::string name,
              const api::write_options& options, object_callback done) override {
    caf::anon_send(registry_, delete_atom::value, kind, std::move(ns), std::move(name), options,
                   std::make_shared<object_callback>(std::move(done)));
  }
  void update(api::object obj, const api::write_options& options, object_callback done) override {
    caf::anon_send(registry_, update_atom::value, std::move(obj), options.dry_run,
                   std::make_shared<object_callback>(std::move(done)));
  }
  void act(api::resource_kind kind, std::string ns, std::string name, api::object_action action,
           object_callback done) override {
    caf::anon_send(registry_, act_atom::value, kind, std::move(ns), std::move(name), action,
                   std::make_shared<object_callback>(std::move(done)));
  }
  void events(api::resource_kind kind, std::string ns, std::string name,
              events_callback done) override {
    caf::anon_send(registry_, events_atom::value, kind, std::move(ns), std::move(name),
                   std::make_shared<events_callback>(std::move(done)));
  }
  void all_events(all_events_callback done) override {
    caf::anon_send(registry_, all_events_atom::value,
                   std::make_shared<all_events_callback>(std::move(done)));
  }
  void event_changes(uint64_t from, event_changes_callback done) override {
    caf::anon_send(registry_, event_changes_atom::value, from,
                   std::make_shared<event_changes_callback>(std::move(done)));
  }
  api::watch_handle watch(api::resource_kind kind, api::list_options options,
                          uint64_t resource_version,
                          std::shared_ptr<api::watch_sink> sink) override {
    auto id = next_watch_.fetch_add(1) + 1;
    caf::anon_send(registry_, watch_atom::value, id, kind, std::move(options), resource_version,
                   std::move(sink));
    auto registry = registry_;
    return api::watch_handle{[registry, id] { caf::anon_send(registry, unwatch_atom::value, id); }};
  }
  bool ready() const override { return ready_->load() && failure().empty(); }
  std::string failure() const override { return failure_->read(); }
  std::string metrics_text() const override { return ctx_->metrics->registry.render(); }

 private:
  registry_actor registry_;
  std::shared_ptr<std::atomic<bool>> ready_;
  context_ptr ctx_;
  std::shared_ptr<const failure_note> failure_;
  std::atomic<uint64_t> next_watch_{0};
};

// Records in `note` that a vital actor ended other than by shutdown: from then on the service
// reports the failure (/readyz and /healthz), and phalanxd exits.
template <class Handle>
void watch_vital(const Handle& handle, std::string_view what, std::shared_ptr<failure_note> note) {
  auto* actor = caf::actor_cast<caf::abstract_actor*>(handle);
  actor->attach_functor([what = std::string(what), note](const caf::error& reason) {
    if (reason == caf::exit_reason::user_shutdown || reason == caf::exit_reason::normal)
      return;
    std::lock_guard lock(note->mutex);
    if (!note->why.empty())
      return;
    note->why = "the " + what + " stopped: " + caf::to_string(reason);
    oplog::line(spdlog::level::critical, "a vital actor stopped")
        .kv("actor", what)
        .kv("reason", caf::to_string(reason));
  });
}

/// Gathers system_facts from the registry and every actor, without blocking any actor.
struct collector_state {
  static inline const char* name = "phalanx.collector";
  std::shared_ptr<std::promise<system_facts>> done;
  system_facts facts;
  struct gang_fact {
    std::string key;
    std::size_t group_index = 0;  // Into facts.groups.
  };
  std::unordered_map<uint64_t, gang_fact> gangs;
  std::map<uint32_t, std::string> node_names;
  std::map<uint64_t, std::string> key_of_id;  // Pods and placeholders.
  std::vector<node_snapshot> nodes;           // Resolved to keys once every answer is in.
  std::size_t outstanding = 0;
};

// Placeholders hold room like pods: the invariant checks see them as members of their gang,
// bound to their node and running.
void add_placeholder_facts(collector_state& st, const gang_snapshot& g) {
  auto gang = st.gangs.find(g.gang);
  if (gang == st.gangs.end())
    return;
  const auto& group_key = gang->second.key;
  auto ns = group_key.substr(0, group_key.find('/'));
  for (const auto& ph : g.placeholders) {
    system_facts::pod p;
    p.key = ns + "/" + ph.name;
    p.group_key = group_key;
    p.node = st.node_names.count(ph.node) ? st.node_names[ph.node] : "#" + std::to_string(ph.node);
    p.phase = scheduler::pod_phase::running;
    p.requests = ph.requests;
    p.role = ph.role;
    st.key_of_id[ph.id] = p.key;
    st.facts.pods.push_back(std::move(p));
  }
}

void resolve_nodes(collector_state& st) {
  for (auto& n : st.nodes) {
    system_facts::node fact;
    fact.name = n.name;
    fact.allocatable = n.allocatable;
    fact.committed = n.committed;
    fact.held = n.held;
    fact.claimed = n.claimed;
    fact.in_flight = n.in_flight;
    fact.remembered_gangs = n.remembered_gangs;
    fact.labels = n.labels;
    if (n.room_reserved_for != 0) {
      auto g = st.gangs.find(n.room_reserved_for);
      fact.room_reserved_for =
          g != st.gangs.end() ? g->second.key : "#" + std::to_string(n.room_reserved_for);
    }
    for (auto id : n.bound_pods) {
      auto k = st.key_of_id.find(id);
      fact.bound_pods.push_back(k == st.key_of_id.end() ? "#" + std::to_string(id) : k->second);
    }
    st.facts.nodes.push_back(std::move(fact));
  }
}

caf::behavior collector(caf::stateful_actor<collector_state>* self, registry_actor registry,
                        context_ptr ctx, std::shared_ptr<std::promise<system_facts>> done) {
  self->state.done = std::move(done);
  auto finish_one = [self] {
    if (--self->state.outstanding == 0) {
      resolve_nodes(self->state);
      self->state.done->set_value(std::move(self->state.facts));
      self->quit();
    }
  };
  self->request(registry, caf::infinite, inspect_atom::value)
      .then([self, ctx, finish_one](registry_snapshot& snap) {
        auto& st = self->state;
        for (auto& [name, index] : snap.node_index)
          st.node_names[index] = name;
        for (auto& p : snap.pods) {
          st.key_of_id[p.id] = p.key;
          st.facts.pods.push_back(
              {p.key, p.group_key, p.node, p.phase, p.requests, p.role, std::move(p.object)});
        }
        for (auto& g : snap.groups) {
          st.gangs[g.gang] = {g.key, st.facts.groups.size()};
          st.facts.groups.push_back({g.key, g.queue, g.min_member, g.min_task_member, false,
                                     g.parked, g.completed, g.gang});
        }
        st.outstanding = 1;  // Released at the end of this handler.
        for (auto& [name, index] : snap.node_index) {
          auto handle = ctx->nodes->at(index);
          if (!handle)
            continue;
          ++st.outstanding;
          self->request(handle, caf::infinite, inspect_atom::value)
              .then([self, finish_one](node_snapshot& n) {
                self->state.nodes.push_back(std::move(n));
                finish_one();
              });
        }
        for (auto& [name, ptr] : snap.queue_actors) {
          ++st.outstanding;
          self->request(caf::actor_cast<queue_actor>(ptr), caf::infinite, inspect_atom::value)
              .then([self, finish_one](queue_snapshot& q) {
                self->state.facts.queues.push_back({q.name, q.allocated, std::move(q.gang_ids)});
                finish_one();
              });
        }
        for (auto& [gang, ptr] : snap.gang_actors) {
          ++st.outstanding;
          self->request(caf::actor_cast<gang_actor>(ptr), caf::infinite, inspect_atom::value)
              .then(
                  [self, finish_one](gang_snapshot& g) {
                    auto& st = self->state;
                    using scheduler::gang_phase;
                    bool in_flight = g.phase == gang_phase::planning ||
                                     g.phase == gang_phase::preparing ||
                                     g.phase == gang_phase::committing;
                    if (auto k = st.gangs.find(g.gang); k != st.gangs.end())
                      st.facts.groups[k->second.group_index].in_flight = in_flight;
                    add_placeholder_facts(st, g);
                    finish_one();
                  },
                  [finish_one](caf::error&) { finish_one(); });  // It ended meanwhile.
        }
        finish_one();
      });
  return {[](caf::unit_t) {}};
}

void add_violation(invariant_report& r, std::string text) { r.violations.push_back(std::move(text)); }

// A parked gang that has not completed has no pod waiting to be placed: a pod added to it wakes
// it (docs/NOTES.md "Idle gangs are parked"), so one left waiting would wait forever. The
// registry's pods and groups come from one snapshot, so this holds on a busy system too.
void check_parked_gangs(const system_facts& facts, invariant_report& r) {
  std::set<std::string> parked_running;
  for (const auto& g : facts.groups)
    if (g.parked && !g.completed)
      parked_running.insert(g.key);
  for (const auto& p : facts.pods)
    if (p.node.empty() && !scheduler::is_terminal(p.phase) && parked_running.count(p.group_key))
      add_violation(r, "parking: gang " + p.group_key + " is parked while its pod " + p.key +
                           " waits to be placed");
}

// The rules between pods hold among the pods bound and not ended: no two on a node share a host
// port, and no pod is in a domain of its own required anti-affinity terms with a pod they select
// (either way round, as every pod is checked). A bound pod's labels and rules cannot change, so
// what held at binding holds now. Required affinity is not checked: it asks only for the pods
// that were there at binding, which may have ended since.
void check_rules_between_pods(const system_facts& facts, invariant_report& r) {
  std::map<std::string, const scheduler::label_set*> labels_of;
  for (const auto& n : facts.nodes)
    labels_of[n.name] = &n.labels;
  std::vector<const system_facts::pod*> live;
  for (const auto& p : facts.pods)
    if (!p.node.empty() && !scheduler::is_terminal(p.phase) && p.object && labels_of.count(p.node))
      live.push_back(&p);
  for (const auto* a : live) {
    const auto& rules = a->object->placement();
    if (rules.host_ports.empty() && rules.required_pod_anti_affinity.empty())
      continue;
    const auto& here = *labels_of[a->node];
    for (const auto* b : live) {
      if (a == b)
        continue;
      if (a->node == b->node &&
          scheduler::any_port_conflict(rules.host_ports, b->object->placement().host_ports))
        add_violation(r, "rules: pods " + a->key + " and " + b->key + " share a host port on " +
                             a->node);
      const auto& there = *labels_of[b->node];
      for (const auto& t : rules.required_pod_anti_affinity) {
        auto mine = here.find(t.topology_key);
        auto theirs = there.find(t.topology_key);
        if (mine && theirs && *mine == *theirs &&
            scheduler::term_selects(t, a->object->meta.namespace_name, *b->object))
          add_violation(r, "rules: pod " + a->key + " on " + a->node + " and pod " + b->key +
                               " on " + b->node + " share the " + t.topology_key + " domain " +
                               std::string(*mine) + " against its anti-affinity");
      }
    }
  }
}

} // namespace

std::string invariant_report::to_string() const {
  if (violations.empty())
    return "all invariants hold";
  std::ostringstream out;
  out << violations.size() << " invariant violation(s):";
  for (const auto& v : violations)
    out << "\n  " << v;
  return out.str();
}

invariant_report check_invariants(const system_facts& facts, bool at_rest) {
  invariant_report r;
  std::map<std::string, const system_facts::pod*> pods;
  for (const auto& p : facts.pods)
    pods[p.key] = &p;

  // I1: a pod is committed on at most one node, and on the node its record names.
  std::map<std::string, std::string> committed_on;
  for (const auto& n : facts.nodes)
    for (const auto& key : n.bound_pods) {
      auto [it, fresh] = committed_on.emplace(key, n.name);
      if (!fresh)
        add_violation(r, "I1: pod " + key + " is committed on two nodes: " + it->second +
                             " and " + n.name);
      auto p = pods.find(key);
      if (p != pods.end() && p->second->node != n.name)
        add_violation(r, "I1: pod " + key + " is committed on " + n.name +
                             " but its record says node '" + p->second->node + "'");
    }
  for (const auto& p : facts.pods)
    if (!p.node.empty() && !scheduler::is_terminal(p.phase) && !committed_on.count(p.key))
      add_violation(r, "I1: pod " + p.key + " is bound to " + p.node +
                           " but no node ledger holds it");

  // I2: committed (and held) requests never exceed allocatable; also by a recount from pods.
  std::map<std::string, scheduler::resources> recount;
  for (const auto& p : facts.pods)
    if (!p.node.empty() && !scheduler::is_terminal(p.phase))
      recount[p.node] += p.requests;
  for (const auto& n : facts.nodes) {
    // A preemptor's hold takes the room its victims still occupy: that room counts once.
    if (!scheduler::fits(n.committed + n.held - n.claimed, n.allocatable))
      add_violation(r, "I2: node " + n.name + " is over capacity: committed " +
                           n.committed.to_string() + " + held " + n.held.to_string() +
                           " - claimed by preemptors " + n.claimed.to_string() +
                           " > allocatable " + n.allocatable.to_string());
    if (!scheduler::fits(recount[n.name], n.allocatable))
      add_violation(r, "I2: pods bound to node " + n.name + " request " +
                           recount[n.name].to_string() + " > allocatable " +
                           n.allocatable.to_string());
    if (recount[n.name] != n.committed)
      add_violation(r, "I2: node " + n.name + " ledger commits " + n.committed.to_string() +
                           " but its bound pods request " + recount[n.name].to_string());
  }

  // I3: at rest, a gang has none or at least minMember pods placed (and each role its minimum).
  if (at_rest) {
    std::map<std::string, std::vector<const system_facts::pod*>> members;
    for (const auto& p : facts.pods)
      if (!p.group_key.empty())
        members[p.group_key].push_back(&p);
    for (const auto& g : facts.groups) {
      if (g.in_flight)
        continue;
      int32_t placed = 0;
      int32_t live = 0;  // Placed and not ended: holding room.
      std::map<std::string, int32_t> per_role;
      for (const auto* p : members[g.key])
        if (!p->node.empty()) {
          ++placed;
          ++per_role[p->role];
          live += scheduler::is_terminal(p->phase) ? 0 : 1;
        }
      // A gang whose placed pods have all ended holds nothing: a failed job keeps its last
      // failed pod and none other (Volcano), which is not a gang half placed.
      if (live == 0)
        continue;
      if (placed > 0 && placed < g.min_member)
        add_violation(r, "I3: gang " + g.key + " has " + std::to_string(placed) +
                             " pods placed, fewer than minMember " +
                             std::to_string(g.min_member));
      if (placed > 0)
        for (const auto& rm : g.min_task_member)
          if (per_role[rm.role] < rm.min)
            add_violation(r, "I3: gang " + g.key + " role " + rm.role + " has " +
                                 std::to_string(per_role[rm.role]) + " pods placed, fewer than " +
                                 std::to_string(rm.min));
    }
  }

  // A starving gang's reservation ends when it is ready or gone: at rest, a node keeps room
  // only for a live gang with fewer than its minimum placed.
  if (at_rest) {
    std::map<std::string, int32_t> placed;
    for (const auto& p : facts.pods)
      if (!p.group_key.empty() && !p.node.empty())
        ++placed[p.group_key];
    for (const auto& n : facts.nodes) {
      if (n.room_reserved_for.empty())
        continue;
      auto g = std::find_if(facts.groups.begin(), facts.groups.end(),
                            [&](const auto& x) { return x.key == n.room_reserved_for; });
      if (g == facts.groups.end() || g->parked || g->completed)
        add_violation(r, "reservation: node " + n.name + " keeps room for " +
                             n.room_reserved_for + ", which has no live actor");
      else if (!g->in_flight && placed[g->key] >= g->min_member)
        add_violation(r, "reservation: node " + n.name + " keeps room for " + g->key +
                             ", which is ready");
    }
  }

  // The view's reserves in flight: every reserve sent was read once nothing is under way.
  if (at_rest && std::none_of(facts.groups.begin(), facts.groups.end(),
                              [](const auto& g) { return g.in_flight; }))
    for (const auto& n : facts.nodes)
      if (!n.in_flight.is_zero())
        add_violation(r, "view: node " + n.name + " counts " + n.in_flight.to_string() +
                             " of reserves in flight with no reserve round under way");

  // Memory that follows the live gangs: a node remembers finished rounds only of gangs whose
  // actor lives (the facts list every PodGroup; a parked one has no actor).
  if (at_rest) {
    auto live = static_cast<std::size_t>(std::count_if(facts.groups.begin(), facts.groups.end(),
                                                       [](const auto& g) { return !g.parked; }));
    for (const auto& n : facts.nodes)
      if (n.remembered_gangs > live)
        add_violation(r, "memory: node " + n.name + " remembers the finished rounds of " +
                             std::to_string(n.remembered_gangs) + " gangs, but only " +
                             std::to_string(live) + " gangs have an actor");
  }

  // A queue's actor knows only gangs the registry has in that queue: one that moved to another
  // queue or started over under a new id must have left the old entry, or the queue would offer
  // planning slots to an actor that ended.
  if (at_rest) {
    std::map<uint64_t, const std::string*> queue_of_gang;
    for (const auto& g : facts.groups)
      queue_of_gang[g.gang] = &g.queue;
    for (const auto& q : facts.queues)
      for (auto gang : q.gangs)
        if (auto g = queue_of_gang.find(gang); g == queue_of_gang.end() || *g->second != q.name)
          add_violation(r, "queue " + q.name + " knows gang " + std::to_string(gang) +
                               (g == queue_of_gang.end() ? ", which the registry does not have"
                                                         : ", which is in queue " + *g->second));
  }

  // I4: each queue's accounting equals a recount from its pods.
  std::map<std::string, std::string> queue_of_group;
  for (const auto& g : facts.groups)
    queue_of_group[g.key] = g.queue;
  std::map<std::string, scheduler::resources> queue_recount;
  for (const auto& p : facts.pods)
    if (!p.node.empty() && !scheduler::is_terminal(p.phase) && !p.group_key.empty())
      if (auto q = queue_of_group.find(p.group_key); q != queue_of_group.end())
        queue_recount[q->second] += p.requests;
  for (const auto& q : facts.queues)
    if (q.allocated != queue_recount[q.name])
      add_violation(r, "I4: queue " + q.name + " accounts " + q.allocated.to_string() +
                           " allocated, a recount from pods gives " +
                           queue_recount[q.name].to_string());
  check_parked_gangs(facts, r);
  check_rules_between_pods(facts, r);
  return r;
}

invariant_report check_live_invariants(const system_facts& facts) {
  invariant_report r;
  std::map<std::string, const system_facts::pod*> pods;
  for (const auto& p : facts.pods)
    pods[p.key] = &p;
  std::map<std::string, std::string> committed_on;
  for (const auto& n : facts.nodes) {
    // A preemptor's hold takes the room its victims still occupy: that room counts once.
    if (!scheduler::fits(n.committed + n.held - n.claimed, n.allocatable))
      add_violation(r, "I2: node " + n.name + " is over capacity: committed " +
                           n.committed.to_string() + " + held " + n.held.to_string() +
                           " - claimed by preemptors " + n.claimed.to_string() +
                           " > allocatable " + n.allocatable.to_string());
    for (const auto& key : n.bound_pods) {
      auto [it, fresh] = committed_on.emplace(key, n.name);
      if (!fresh)
        add_violation(r, "I1: pod " + key + " is committed on two nodes: " + it->second +
                             " and " + n.name);
      auto p = pods.find(key);
      if (p != pods.end() && !p->second->node.empty() && p->second->node != n.name)
        add_violation(r, "I1: pod " + key + " is committed on " + n.name +
                             " but its record says node '" + p->second->node + "'");
    }
  }
  check_parked_gangs(facts, r);
  check_rules_between_pods(facts, r);
  return r;
}

struct runtime::impl {
  std::shared_ptr<runtime_context> ctx;
  std::shared_ptr<storage::store> store;
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> system;
  std::shared_ptr<std::atomic<bool>> ready = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<failure_note> failure = std::make_shared<failure_note>();
  /// Kubernetes mode: the world behind the binder (null in standalone mode).
  std::unique_ptr<kube_world> world;
  /// Kubernetes mode with --controllers job: Volcano's job controller (null otherwise).
  std::unique_ptr<kube_job_controller> job_controller;
  cluster_actor cluster;
  store_writer_actor writer;
  binder_actor binder;
  registry_actor registry;
  std::unique_ptr<runtime_service> service;
  std::chrono::steady_clock::time_point started;
  double ready_seconds = -1;
  bool stopped = false;

  caf::scheduler::test_coordinator* test_sched() const {
    return ctx->config.deterministic
               ? &dynamic_cast<caf::scheduler::test_coordinator&>(system->scheduler())
               : nullptr;
  }
};

runtime::runtime(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

runtime::~runtime() { shutdown(); }

result<std::unique_ptr<runtime>> runtime::start(runtime_config config,
                                                std::shared_ptr<storage::store> store) {
  auto p = std::make_unique<impl>();
  p->started = std::chrono::steady_clock::now();
  auto loaded = store->load();
  if (!loaded)
    return loaded.error();
  if (config.seed == 0)
    config.seed = static_cast<uint64_t>(
        std::chrono::system_clock::now().time_since_epoch().count());

  p->cfg = std::make_unique<caf::actor_system_config>();
  if (config.deterministic)
    p->cfg->set("scheduler.policy", caf::atom("testing"));
  else
    p->cfg->set("scheduler.max-threads", static_cast<size_t>(std::max(1, config.threads)));
  p->cfg->set("logger.verbosity", caf::atom("quiet"));
  p->system = std::make_unique<caf::actor_system>(*p->cfg);

  auto ctx = std::make_shared<runtime_context>();
  ctx->config = std::move(config);
  ctx->clock = &p->system->clock();
  ctx->clock_base = p->system->clock().now();
  ctx->wall_base = ctx->config.deterministic
                       ? scheduler::timestamp{std::chrono::seconds{1767225600}}  // 2026-01-01
                       : std::chrono::time_point_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now());
  p->ctx = ctx;
  p->store = std::move(store);

  auto& sys = *p->system;
  p->cluster = sys.spawn(cluster_actor_impl, context_ptr{ctx});
  p->writer = ctx->config.deterministic
                  ? sys.spawn(store_writer_impl, context_ptr{ctx}, p->store)
                  : sys.spawn<caf::detached>(store_writer_impl, context_ptr{ctx}, p->store);
  // Kubernetes mode: the world's binder posts Bindings; standalone: the simulated cluster.
  std::map<std::string, std::string> watch_versions;
  if (ctx->config.kubernetes.enabled) {
    auto world = kube_world::create(ctx->config.kubernetes, ctx->config.scheduling,
                                    ctx->metrics->registry);
    if (!world)
      return world.error();
    p->world = std::move(*world);
    p->binder = p->world->spawn_binder(sys);
    if (ctx->config.kubernetes.job_controller) {
      auto controller = kube_job_controller::create(ctx->config.kubernetes);
      if (!controller)
        return controller.error();
      p->job_controller = std::move(*controller);
    }
    for (const auto& [key, value] : loaded->world_meta)
      if (key.starts_with("watch/"))
        watch_versions.emplace(key, value);
  } else {
    p->binder = sys.spawn(sim_cluster_impl, context_ptr{ctx}, status_sink_actor{});
  }
  auto state = std::make_shared<storage::loaded_state>(std::move(*loaded));
  p->registry = sys.spawn(registry_impl, context_ptr{ctx}, p->ready, state, p->writer, p->binder,
                          p->cluster);
  caf::anon_send(p->binder, spec_atom::value, status_sink_actor{p->registry});
  p->service = std::make_unique<runtime_service>(p->registry, p->ready, ctx, p->failure);
  // Without any of these nothing can be answered or scheduled any more.
  watch_vital(p->registry, "registry (every API call goes through it)", p->failure);
  watch_vital(p->writer, "store writer", p->failure);
  watch_vital(p->cluster, "cluster actor", p->failure);
  watch_vital(p->binder, p->world ? "binder" : "simulated cluster", p->failure);

  std::unique_ptr<runtime> rt{new runtime(std::move(p))};
  if (auto& world = rt->impl_->world) {
    // Ready once the watches have the whole cluster (/readyz says so meanwhile): not waited for
    // here, since an apiserver that is away would hold the start for as long.
    auto note = rt->impl_->failure;
    world->start(rt->impl_->registry, *rt->impl_->service, watch_versions,
                 [note](std::string why) {
                   std::lock_guard lock(note->mutex);
                   if (note->why.empty())
                     note->why = std::move(why);
                 });
    if (auto& controller = rt->impl_->job_controller) {
      // It acts only while this process may bind: a standby's controller keeps its watches.
      auto* w = world.get();
      auto actor = controller->start(*rt->impl_->system, [w] { return w->may_bind(); });
      watch_vital(actor, "job controller", note);
    }
    rt->impl_->ready_seconds = 0;
    return rt;
  }
  if (rt->impl_->ctx->config.deterministic) {
    rt->run_until_idle();
  } else {
    while (!rt->impl_->ready->load())
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  rt->impl_->ready_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - rt->impl_->started).count();
  rt->impl_->ctx->metrics->restart_seconds.set(rt->impl_->ready_seconds);
  return rt;
}

api::service& runtime::service() { return *impl_->service; }

bool runtime::ready() const { return impl_->ready->load() && failure().empty(); }

std::string runtime::failure() const { return impl_->failure->read(); }

double runtime::seconds_to_ready() const { return impl_->ready_seconds; }

system_facts runtime::facts() {
  auto done = std::make_shared<std::promise<system_facts>>();
  auto future = done->get_future();
  impl_->system->spawn(collector, impl_->registry, context_ptr{impl_->ctx}, done);
  if (auto* sched = impl_->test_sched()) {
    sched->run();
    return future.get();
  }
  return future.get();
}

void runtime::shutdown() {
  if (!impl_ || impl_->stopped)
    return;
  impl_->stopped = true;
  if (impl_->job_controller) {
    impl_->job_controller->stop();  // Its watches send to it, and it asks the world.
    impl_->job_controller.reset();  // Its handles to its actor go before the actor system.
  }
  if (impl_->world)
    impl_->world->stop();  // Its threads send to the actors below: first.
  auto reason = caf::exit_reason::user_shutdown;
  caf::anon_send_exit(impl_->registry, reason);
  caf::anon_send_exit(impl_->binder, reason);
  caf::anon_send_exit(impl_->cluster, reason);
  caf::anon_send_exit(impl_->writer, reason);
  if (auto* sched = impl_->test_sched())
    sched->run();
  impl_->registry = nullptr;
  impl_->binder = nullptr;
  impl_->cluster = nullptr;
  impl_->writer = nullptr;
  impl_->service.reset();
  if (auto* sched = impl_->test_sched())
    sched->run();
  impl_->ctx->nodes->clear();
  impl_->system.reset();  // Waits for every actor.
}

registry_actor runtime_probe::registry(runtime& rt) {
  return rt.impl_->registry;
}

registry_snapshot runtime_probe::snapshot(runtime& rt) {
  auto* sched = rt.impl_->test_sched();
  if (sched == nullptr)
    throw std::logic_error("runtime_probe needs a deterministic runtime");
  using answer = std::shared_ptr<std::optional<registry_snapshot>>;
  auto out = std::make_shared<std::optional<registry_snapshot>>();
  // The handles go in as arguments: CAF 0.17 spawning a function of the actor alone binds a
  // reference to a null argument tuple (UBSan reports it).
  rt.impl_->system->spawn(
      [](caf::event_based_actor* self, const registry_actor& registry, const answer& out) {
        self->request(registry, caf::infinite, inspect_atom::value)
            .then([out](registry_snapshot& s) { *out = std::move(s); });
      },
      rt.impl_->registry, out);
  sched->run();
  if (!*out)
    throw std::logic_error("the registry did not answer its inspection");
  return std::move(**out);
}

std::size_t runtime::run_until_idle() {
  auto* sched = impl_->test_sched();
  return sched ? sched->run() : 0;
}

std::size_t runtime::advance(std::chrono::milliseconds by) {
  auto* sched = impl_->test_sched();
  if (!sched)
    return 0;
  sched->advance_time(by);
  return sched->run();
}

bool runtime::has_pending_timer() const {
  auto* sched = impl_->test_sched();
  return sched != nullptr && sched->has_pending_timeout();
}

} // namespace phalanx::actors
