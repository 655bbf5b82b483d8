#pragma once

// The world port (DESIGN.md 4a): what the registry's scheduling side asks of the world it runs
// in. Gangs, nodes, queues and the cache of them ask the port, never which mode runs; each world
// keeps what is its own (Kubernetes: the binding intents the apiserver has not confirmed).
//
// Two worlds implement it:
// - the standalone world (standalone_world.cpp): the catalog is the truth, the simulated kubelet
//   runs bound pods, evicted pods are deleted through the catalog;
// - the Kubernetes world (registry_world.cpp): the apiserver is the truth, bindings are posted
//   by the binder and kept as intents until confirmed, evictions are deletes on the apiserver.
//
// Deltas come in as they do in each world: the apiserver's as world_delta messages
// (do_world_delta), the catalog's as its API writes (registry_api.cpp, registry_update.cpp);
// both enter the cache through the same add_/change_ functions.
//
// Not an actor of its own: the write that makes a gang's bindings durable carries the world's
// record of them (an intent) in the same batch, and the cache, the catalog and the world change
// on one turn of the registry once it is durable. A separate actor would need a message and a
// second ordering per gang to keep "durable, then committed" (I3) true.

#include "actors/registry_internal.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace phalanx::actors::registry_detail {

/// One pod of a gang's round whose binding is being made durable: the state it will have
/// (its node's name set) and its node's view index.
struct durable_binding {
  uint64_t id;
  scheduler::pod_runtime state;
  uint32_t node;
};

/// What a restart found of the pods the world runs: by node name, the bound ones not finished;
/// and those that finished.
struct restored_pods {
  std::unordered_map<scheduler::shared_string, pod_refs> running;
  pod_refs finished;
};

class world_port {
public:
  virtual ~world_port() = default;

  /// "standalone" or "kubernetes", for logs.
  virtual std::string_view name() const noexcept = 0;

  /// Why the registry's own API may not create, change or delete objects in this world (the
  /// objects are another's); empty when it may.
  virtual std::string_view api_write_refusal() const noexcept = 0;

  /// True: gangs are planned from the start. False: once this process may bind (lead).
  virtual bool plans_from_start() const noexcept = 0;

  /// At a start, once the store's queues and PriorityClasses are in the cache: make those this
  /// world has without anyone creating them.
  virtual void provide_defaults(self_ptr self) = 0;

  /// At a start, once every stored object is in the cache: start what runs, and the gangs (or
  /// wait for lead). `world_meta` is the store's world-meta records.
  virtual void restored(self_ptr self, restored_pods pods,
                        const std::map<std::string, std::string>& world_meta) = 0;

  /// This process may bind now (it leads, or no election runs).
  virtual void lead(self_ptr self) = 0;

  /// A gang's bindings are about to be made durable by `batch`: add what this world needs to
  /// carry them out after a crash.
  virtual void bindings_written(self_ptr self, storage::write_batch& batch,
                                const std::vector<durable_binding>& bindings) = 0;

  /// The write that carried binding `b` is durable: it is this world's to carry out.
  virtual void binding_durable(const durable_binding& b) = 0;

  /// Bindings made durable and never committed (their gang ended first) are undone by `batch`.
  virtual void bindings_undone(self_ptr self, storage::write_batch& batch,
                               const std::vector<uint64_t>& pods) = 0;

  /// What became of the bindings this world carried out.
  virtual void binding_outcomes(self_ptr self, std::vector<binding_outcome> outcomes) = 0;

  /// Pending pod `id`'s reason (its PodScheduled=False condition) changed.
  virtual void pending_reason_changed(self_ptr self, uint64_t id, const pod_entry& e) = 0;

  /// The exit code of pod `e`'s container once it ended, as this world knows it (standalone:
  /// the simulated kubelet's; Kubernetes: none here, the apiserver's pod has it).
  virtual std::optional<int32_t> exit_code(const pod_entry& e) const = 0;

  /// Evict a preemptor's `victims` (chosen and recorded by the scheduling side, which counts
  /// them as leaving from now on) with `message`; `order` names the preemptor's pods to
  /// nominate.
  virtual void evict(self_ptr self, std::vector<uint64_t> victims, const std::string& message,
                     const eviction_order& order) = 0;
};

std::unique_ptr<world_port> make_standalone_world();
std::unique_ptr<world_port> make_kubernetes_world();

} // namespace phalanx::actors::registry_detail
