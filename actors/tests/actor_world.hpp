#pragma once

// A deterministic world for actor tests: node and PodGroup actors on CAF's test coordinator, with
// recording fakes for the queue, the gang sink (the registry's role: make bindings durable) and
// the binder. The test chooses which actor runs each next message, so it can enumerate
// interleavings, and reads actor state directly between steps to check invariants.

#include "actors/gang_actor.hpp"
#include "actors/node_actor.hpp"
#include "actors/runtime_context.hpp"

#include "scheduler/tests/builders.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include <map>
#include <set>
#include <vector>

namespace phalanx::actors::testing {

/// What the fakes saw.
struct world_log {
  std::set<uint64_t> durable_pods;            // Pods in bindings the fake sink made durable.
  std::map<uint64_t, int32_t> durable_rounds; // Gang -> rounds made durable.
  std::vector<std::pair<uint32_t, uint64_t>> bound;  // (node, pod) handed to the binder.
  std::map<uint64_t, scheduler::gang_phase> reported;
  int32_t plan_grants = 0;
  /// Gang -> its requests to be parked, each with the count of pod messages it had heard.
  std::map<uint64_t, std::vector<uint64_t>> park_requests;
};

/// The queue's role, minimal: every gang that waits gets a slot at once.
struct fake_queue_state {
  std::shared_ptr<world_log> log;
};
inline queue_actor::behavior_type fake_queue(queue_actor::stateful_pointer<fake_queue_state> self,
                                             std::shared_ptr<world_log> log) {
  self->state.log = std::move(log);
  return {
    [](admission_atom, admission&) {},
    [](deserved_atom, scheduler::resources&, bool) {},
    [](capacity_atom) {},
    [self](waiting_atom, gang_entry& e, gang_actor& g) {
      if (!e.admitted)
        self->send(g, admission_atom::value, admission{e.gang, true, {}});
      ++self->state.log->plan_grants;
      self->send(g, plan_atom::value, scheduler::ratio{0, 1});
    },
    [](planned_atom, uint64_t, plan_outcome) {},
    [](usage_atom, usage_delta&) {},
    [](removed_atom, uint64_t) {},
    [](park_atom, uint64_t) {},
    [](spec_atom, queue_ptr) {},
    [](wake_atom) {},
    [](woken_atom, uint64_t) {},
    [](sla_atom, uint64_t) {},
    [](inspect_atom) { return queue_snapshot{}; },
  };
}

/// The registry's role for bindings: durable at once (recorded), then answer the gang.
struct fake_sink_state {
  std::shared_ptr<world_log> log;
  context_ptr ctx;
};
inline gang_sink_actor::behavior_type fake_sink(gang_sink_actor::stateful_pointer<fake_sink_state> self,
                                                std::shared_ptr<world_log> log, context_ptr ctx) {
  self->state.log = std::move(log);
  self->state.ctx = std::move(ctx);
  return {
    [self](bind_gang_atom, binding_request& req, gang_actor& g) {
      for (const auto& b : req.bindings)
        self->state.log->durable_pods.insert(b.pod);
      ++self->state.log->durable_rounds[req.gang];
      // As the registry does once the bindings are durable.
      self->send(g, bound_atom::value, bound_result{req.txn, status{}});
      commit_durable_round(self, *self->state.ctx->nodes, req);
    },
    [self](report_atom, gang_report& r) { self->state.log->reported[r.gang] = r.phase; },
    [self](park_atom, uint64_t gang, uint64_t heard, gang_actor&) {
      // Never granted: the world's gangs live on.
      self->state.log->park_requests[gang].push_back(heard);
    },
    // No preemption in these worlds: no victims, and nothing to evict.
    [self](preempt_atom, preemption_ask& ask, gang_actor& g) {
      self->send(g, offer_atom::value,
                 preemption_offer{ask.ask, false, {}, {}, "no preemption in this world"});
    },
    [](evict_atom, eviction_order&) {},
  };
}

struct fake_binder_state {
  std::shared_ptr<world_log> log;
};
inline binder_actor::behavior_type fake_binder(binder_actor::stateful_pointer<fake_binder_state> self,
                                               std::shared_ptr<world_log> log) {
  self->state.log = std::move(log);
  return {
    [self](bind_pods_atom, uint32_t node, const scheduler::shared_string&, const pod_refs& pods) {
      for (const auto& p : pods)
        self->state.log->bound.emplace_back(node, p.id);
    },
    [](forget_atom, const std::vector<uint64_t>&) {},
    [](fail_atom, uint64_t) {},
    [](adopt_atom, const pod_refs&) {},
    [](evict_atom, const eviction_batch&) {},
    [](finished_atom, const std::vector<pod_outcome>&) {},
    [](terminate_atom, const std::vector<termination_order>&) {},
    [](tick_atom) {},
    [](stalled_atom) {},
    [](spec_atom, status_sink_actor&) {},
  };
}

/// Direct access to an actor's state (single-threaded under the test coordinator only).
template <class State, class Handle>
State& state_of(const Handle& h) {
  using base = typename Handle::base;
  auto* ptr = caf::actor_cast<caf::abstract_actor*>(h);
  auto* typed = dynamic_cast<caf::stateful_actor<State, base>*>(ptr);
  if (typed == nullptr)
    throw std::logic_error("state_of: wrong actor type");
  return typed->state;
}

/// A world of nodes and gangs.
class actor_world {
 public:
  explicit actor_world(uint64_t seed = 1) {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    cfg_.set("logger.verbosity", caf::atom("quiet"));
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());
    auto ctx = std::make_shared<runtime_context>();
    ctx->config.deterministic = true;
    ctx->config.seed = seed;
    ctx->config.scheduling.backoff_initial = std::chrono::milliseconds{5};
    ctx->config.scheduling.backoff_max = std::chrono::milliseconds{40};
    ctx->clock = &sys_->clock();
    ctx->clock_base = sys_->clock().now();
    ctx_ = ctx;
    log = std::make_shared<world_log>();
    queue = sys_->spawn(fake_queue, log);
    sink = sys_->spawn(fake_sink, log, context_ptr{ctx});
    binder = sys_->spawn(fake_binder, log);
  }

  ~actor_world() {
    for (auto& g : gangs)
      caf::anon_send_exit(g, caf::exit_reason::user_shutdown);
    for (auto& n : nodes)
      caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(queue, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(binder, caf::exit_reason::user_shutdown);
    sched_->run();
    ctx_->nodes->clear();
    gangs.clear();
    nodes.clear();
    queue = nullptr;
    sink = nullptr;
    binder = nullptr;
    sys_.reset();
  }

  runtime_context& ctx() { return *ctx_; }
  caf::scheduler::test_coordinator& sched() { return *sched_; }

  uint32_t add_node(scheduler::node n) {
    auto spec = std::make_shared<const scheduler::node>(std::move(n));
    auto index = static_cast<uint32_t>(ctx_->view->add_slot(spec, spec->allocatable));
    auto h = sys_->spawn(node_actor_impl, context_ptr{ctx_}, index, spec, binder, pod_refs{});
    ctx_->nodes->publish(index, h);
    nodes.push_back(h);
    return index;
  }

  /// Spawns a PodGroup actor for `g`; pod ids are gang * 100 + position.
  uint64_t add_gang(const scheduler::testing::gang& g, uint64_t id) {
    pod_refs refs;
    for (std::size_t i = 0; i < g.pods.size(); ++i)
      refs.push_back({id * 100 + i, std::make_shared<const scheduler::pod>(g.pods[i])});
    add_gang_actor(id, g.group, std::move(refs), gang_start::fresh);
    return id;
  }

  /// Spawns a PodGroup actor for gang `id` with these pods (a woken gang's new actor, for one);
  /// returns its position in `gangs`.
  std::size_t add_gang_actor(uint64_t id, const scheduler::pod_group& group, pod_refs refs,
                             gang_start start) {
    gang_ids.push_back(id);
    gang_sizes[id] = group.min_member;
    gangs.push_back(sys_->spawn(gang_actor_impl, context_ptr{ctx_}, id,
                                std::make_shared<const scheduler::pod_group>(group),
                                std::move(refs), queue, sink, start));
    return gangs.size() - 1;
  }

  node_actor_state& node_state(std::size_t i) { return state_of<node_actor_state>(nodes[i]); }
  gang_actor_state& gang_state(std::size_t i) { return state_of<gang_actor_state>(gangs[i]); }

  /// The invariants that must hold after every single message:
  /// I1: a pod is held or committed on at most one node;
  /// I2: no node's committed + held exceeds allocatable;
  /// all-or-nothing: no node commits a pod (not a placeholder) whose binding is not durable yet.
  std::string check_step() {
    std::map<uint64_t, uint32_t> where;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!node_state(i).ledger)
        continue;  // Not initialized yet: actors build their state on their first run.
      auto& l = *node_state(i).ledger;
      if (!scheduler::fits(l.committed() + l.held(), l.allocatable()))
        return "I2: node " + std::to_string(i) + " over capacity";
      for (auto pod : l.bound_pod_ids()) {
        if (!where.emplace(pod, uint32_t(i)).second)
          return "I1: pod " + std::to_string(pod) + " committed on two nodes";
        // A placeholder holds room and is never bound: it commits with the round that made its
        // gang's pods durable, and the durable log names pods only.
        if (!is_placeholder(pod) && !log->durable_pods.count(pod))
          return "all-or-nothing: pod " + std::to_string(pod) + " committed before durable";
      }
    }
    return {};
  }

  /// I3 at rest: every gang has 0 or >= minMember pods committed.
  std::string check_at_rest() {
    std::map<uint64_t, int32_t> per_gang;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (node_state(i).ledger)
        for (auto pod : node_state(i).ledger->bound_pod_ids())
        ++per_gang[pod / 100];
    for (auto [gang, n] : per_gang)
      if (n > 0 && n < gang_sizes[gang])
        return "I3: gang " + std::to_string(gang) + " has " + std::to_string(n) + " pods committed";
    // Every reserve sent was read: none may still hide a node's room from the planners.
    for (std::size_t i = 0; i < nodes.size(); ++i)
      if (auto f = ctx_->view->in_flight(i); !f.is_zero())
        return "view: node " + std::to_string(i) + " counts " + f.to_string() + " in flight";
    return {};
  }

  /// Runs one message of the job at `index` in the coordinator's queue.
  void run_job(std::size_t index) {
    auto& jobs = sched_->jobs;
    if (index != 0)
      std::rotate(jobs.begin(), jobs.begin() + static_cast<std::ptrdiff_t>(index),
                  jobs.begin() + static_cast<std::ptrdiff_t>(index) + 1);
    sched_->run_once();
  }

  std::shared_ptr<world_log> log;
  queue_actor queue;
  gang_sink_actor sink;
  binder_actor binder;
  std::vector<node_actor> nodes;
  std::vector<gang_actor> gangs;
  std::vector<uint64_t> gang_ids;
  std::map<uint64_t, int32_t> gang_sizes;

 private:
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  std::shared_ptr<runtime_context> ctx_;
};

} // namespace phalanx::actors::testing
