// The standalone world (DESIGN.md 4a, actors/world_port.hpp): the catalog is the truth (the HTTP
// API's objects, RocksDB, uids and versions minted here), the simulated kubelet runs what is
// bound, and a preemption's victims are deleted through the catalog.

#include "actors/operator_log.hpp"
#include "actors/sim_cluster.hpp"
#include "actors/world_port.hpp"


namespace phalanx::actors::registry_detail {

namespace {

class standalone_world final : public world_port {
public:
  std::string_view name() const noexcept override { return "standalone"; }

  std::string_view api_write_refusal() const noexcept override { return {}; }

  bool plans_from_start() const noexcept override { return true; }

  void provide_defaults(self_ptr self) override {
    auto& st = self->state;
    // Volcano installs a "default" queue; gangs that name no queue go there.
    if (!st.cache.queues.count(std::string(scheduler::default_queue_name))) {
      scheduler::queue q;
      q.meta.name = std::string(scheduler::default_queue_name);
      q.meta.uid = new_uid(self);
      q.meta.creation_time = st.ctx->now();
      q.meta.resource_version = next_version(self);
      q.weight = 1;
      q.reclaimable = true;
      storage::write_batch batch;
      batch.put(storage::queue_record{q});
      // Made again at the next start should this write be lost.
      persist(self, std::move(batch), [](const status& s) {
        if (!s.ok())
          oplog::error("default queue not persisted").kv("error", s.to_string());
      });
      add_queue(self, std::move(q));
    }
    create_default_priority_classes(self);
  }

  void restored(self_ptr self, restored_pods pods,
                const std::map<std::string, std::string>& world_meta) override {
    auto& st = self->state;
    for (auto& [gang, g] : st.cache.groups) {
      if (!restore_parked(self, g))
        spawn_gang(self, g);
      mark_emitted(st, g);
    }
    // Resume the simulation: what finished before, then what was running, node by node, then
    // the graceful deletions under way.
    if (!pods.finished.empty())
      self->send(st.binder, adopt_atom::value, std::move(pods.finished));
    for (auto& [name, running] : pods.running)
      if (auto n = st.cache.nodes.find(name); n != st.cache.nodes.end())
        self->send(st.binder, bind_pods_atom::value, n->second.index, name, std::move(running));
    restore_terminations(self, world_meta);
    resume_terminations(self);
    oplog::info("restored")
        .kv("nodes", static_cast<uint64_t>(st.cache.nodes.size()))
        .kv("queues", static_cast<uint64_t>(st.cache.queues.size()))
        .kv("podgroups", static_cast<uint64_t>(st.cache.groups.size()))
        .kv("pods", static_cast<uint64_t>(st.pods.size()))
        .kv("jobs", static_cast<uint64_t>(st.jobs.size()));
    start_job_controller(self);
    st.ready->store(true);
    st.ctx->metrics->ready.set(1);
  }

  // Planning starts with the process (plans_from_start); nobody sends lead here.
  void lead(self_ptr) override {}

  // The simulated kubelet starts a pod once its node commits, and a restart resumes the bound
  // pods from their stored states: a binding needs no record of its own.
  void bindings_written(self_ptr, storage::write_batch&,
                        const std::vector<durable_binding>&) override {}
  void binding_durable(const durable_binding&) override {}
  void bindings_undone(self_ptr, storage::write_batch&, const std::vector<uint64_t>&) override {}
  void binding_outcomes(self_ptr, std::vector<binding_outcome>) override {}

  // A pod's PodScheduled condition is built from its reason when the pod is read.
  void pending_reason_changed(self_ptr, uint64_t, const pod_entry&) override {}

  std::optional<int32_t> exit_code(const pod_entry& e) const override {
    if (!scheduler::is_terminal(e.phase()))
      return std::nullopt;
    return simulated_exit_code(*e.pod, e.state());
  }

  void evict(self_ptr self, std::vector<uint64_t> victims, const std::string&,
             const eviction_order&) override {
    // Stopped at once, deleted as an API delete would (durably; their nodes get their room back
    // once the deletion is, and the preemptor's holds take it). Each victim of a job is
    // PodEvicted for its job, as Volcano's controller sees it.
    delete_evicted_pods(self, std::move(victims), [](const status& s) {
      if (!s.ok())
        oplog::error("evicted pods not deleted").kv("error", s.to_string());
    });
  }
};

} // namespace

std::unique_ptr<world_port> make_standalone_world() {
  return std::make_unique<standalone_world>();
}

} // namespace phalanx::actors::registry_detail
