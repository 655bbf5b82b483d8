#pragma once

// The Kubernetes world (DESIGN.md sections 4a and 6): the apiserver is the truth, and this is what
// ties it to the scheduling side.
//
// - In: a reflector per collection (k8s/reflector.hpp: nodes, pods (all: other schedulers' pods
//   use node room too), PodGroups and Queues of scheduling.volcano.sh/v1beta1, and
//   PriorityClasses, sent whole at each change for PodGroups' priorities) decodes what it
//   lists and watches (api::decode_object) and sends it to the registry as world_delta messages,
//   each with its collection's resourceVersion for the checkpoint. An object that does not decode
//   (garbage from the API: a PodGroup with `minMember: "x"`) is left out, logged once per change,
//   and gets a Warning event; nothing crashes. Once every collection was listed (or resumed from
//   the checkpoint), the registry is told that the cache is whole (synced): /readyz.
// - Out: the binder. Node actors hand it the pods of each committed round (binder_actor); their
//   intents are durable by then (registry, do_bind_gang). It posts one Binding per pod, with the
//   pod's uid as precondition, on `binding_workers` threads within the client's QPS; 409 "already
//   assigned" to the same node counts as done, 404 or another uid ends the intent (the watch tells
//   the cache what became of the pod), 5xx and timeouts retry with a backoff. The outcomes go back
//   to the registry, which ends the intents. Preemption's evictions come the same way
//   (evict_atom): each victim gets DisruptionTarget, an Evict event and a DELETE with its uid as
//   precondition (k8s::evict_pod), and the preemptor's pods get status.nominatedNodeName, on the
//   thread that writes events and pod conditions; a victim's room counts as free when the
//   watch shows it gone.
// - Status: it watches the registry's PodGroups (api::service::watch) and writes each PodGroup's
//   status to the apiserver as Volcano's scheduler does (PUT of the whole object, no status
//   subresource: Volcano's CRD has none), only when it changed, and a Normal "Scheduled" or
//   Warning "Unschedulable" event on the PodGroup when its phase or pending reason changes. A pod
//   whose pending reason changes gets PodScheduled=False with it (pods/status, strategic merge)
//   and a FailedScheduling event; a bound pod a Scheduled event, as kube-scheduler writes them.
//   Events and conditions go through a bounded queue on a thread of their own: they never hold a
//   Binding back, and the oldest are dropped (counted) when the apiserver cannot keep up.
//   Each Queue's status (PodGroups by phase, allocated, state) is read from the registry every
//   second and written to its status subresource when it changed. A pending pod of ours with no
//   group gets a PodGroup of one, "podgroup-<pod uid>" owned by the pod, as Volcano's pg
//   controller makes it (409: someone, Volcano's controller, made it first).
// - Leadership: with leader election, a Lease (k8s/lease.hpp). Gangs are planned only once this
//   process leads and its caches are synced (lead_atom); standbys keep their caches warm. I6:
//   every Binding is posted only while lease_elector::leading_now() holds (computed from the last
//   renewal, not from a flag set later), and a process that stops leading reports a failure,
//   which makes phalanxd exit (a restarted process comes back as a standby).
//
// Thread model: the reflectors, the elector, the binding workers and the status writer each run
// on threads of their own and talk to actors by anonymous messages only; the binder actor is a
// thin shell that queues the pods it is handed. Created and stopped by the runtime.

#include "actors/interfaces.hpp"
#include "actors/registry.hpp"
#include "actors/runtime_config.hpp"

#include "api/metrics.hpp"
#include "api/service.hpp"
#include "k8s/client.hpp"
#include "scheduler/result.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace phalanx::actors {

/// What the world tells the runtime about itself, for metrics and tests.
struct kube_world_counters {
  uint64_t bindings_posted = 0;
  uint64_t bindings_done = 0;     // Bound, or found bound there already.
  uint64_t bindings_gone = 0;     // 404, another uid, bound elsewhere.
  uint64_t bindings_retried = 0;  // Transient failures, tried again.
  uint64_t bindings_refused = 0;  // 403, 422, ...: logged as errors.
  uint64_t bindings_dropped_not_leading = 0;  // I6: not posted, the lease was not held.
  uint64_t status_writes = 0;
  uint64_t queue_status_writes = 0;
  uint64_t lone_groups_created = 0;  // PodGroups of one made for pods of ours without a group.
  uint64_t owner_groups_created = 0; // PodGroups made for the pods of one owner (a ReplicaSet...).
  uint64_t pod_conditions_written = 0;
  uint64_t events_written = 0;
  uint64_t pods_evicted = 0;         // Preemption victims deleted (uid precondition).
  uint64_t nominations_written = 0;  // Preemptors' pods given status.nominatedNodeName.
  uint64_t events_dropped = 0;  // The apiserver could not keep up: the oldest went first.
  uint64_t undecodable_objects = 0;
};

class kube_world {
 public:
  /// Connects nothing yet; checks the configuration; registers its counters in `metrics`
  /// (phalanx_kube_*). Errors: invalid_argument (the connection settings, the lease's).
  /// `scheduling` tells which pods are ours (schedulerNames).
  static result<std::unique_ptr<kube_world>> create(const kubernetes_config& config,
                                                    const scheduling_config& scheduling,
                                                    api::metrics_registry& metrics);

  ~kube_world();
  kube_world(const kube_world&) = delete;
  kube_world& operator=(const kube_world&) = delete;

  /// The binder for the node actors and the registry (spawned in `sys`, once).
  binder_actor spawn_binder(caf::actor_system& sys);

  /// Starts the watches (resuming from `watch_versions`, the checkpoint's "watch/<kind>"
  /// entries, when given), the election and the status writer. `registry` receives the deltas
  /// and lead_atom; `service` is watched for PodGroup status; `on_failure` is called once if
  /// this process loses its lease (it must stop binding and exit).
  void start(registry_actor registry, api::service& service,
             const std::map<std::string, std::string>& watch_versions,
             std::function<void(std::string)> on_failure);

  /// Stops every thread (the lease is released). Idempotent.
  void stop();

  /// True while this process may bind: it holds the lease (or no election runs).
  bool may_bind() const;

  kube_world_counters counters() const;

  struct impl;

 private:
  explicit kube_world(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace phalanx::actors
