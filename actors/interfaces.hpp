#pragma once

// Every typed actor interface of the runtime (STYLE.md "The protocol is declared in one place"),
// each with a title and a comment per handler. Messages and atoms are in protocol.hpp.
//
// Hot paths use one-way messages with explicit replies (reacts_to), never request/response:
// measured on this machine, one-way sends are 2-8x cheaper than request().then().

#include "actors/protocol.hpp"

#include <caf/typed_actor.hpp>

namespace phalanx::actors {

/// The PODGROUP actor interface: coordinates one gang's two-phase commit.
using gang_actor = caf::typed_actor<
  // A node's vote on a reserve of this gang's current round. Stale votes are ignored.
  caf::reacts_to<vote_atom, vote>,
  // A node turned this gang's hold into committed usage.
  caf::reacts_to<committed_atom, scheduler::txn_id, uint32_t>,
  // The enqueue gate's decision: admitted (Pending -> Inqueue) or why not.
  caf::reacts_to<admission_atom, admission>,
  // The queue granted a planning slot; `share` is the queue's share now, for this round's ticket.
  caf::reacts_to<plan_atom, scheduler::ratio>,
  // The registry made this round's bindings durable (or could not).
  caf::reacts_to<bound_atom, bound_result>,
  // Pods were added to the gang (at creation, later by a job or a running driver).
  caf::reacts_to<pods_atom, pod_refs>,
  // Pods finished or were deleted.
  caf::reacts_to<finished_atom, std::vector<pod_outcome>>,
  // Capacity was freed somewhere: a gang in backoff retries now instead of at its timer.
  caf::reacts_to<wake_atom>,
  // The backoff timer of attempt `epoch` fired.
  caf::reacts_to<retry_atom, uint64_t>,
  // The registry's answer to a preemption ask: where to place and whom to evict.
  caf::reacts_to<offer_atom, preemption_offer>,
  // A node: every victim of the preemptor's round `txn` there is gone; the room is this gang's.
  caf::reacts_to<cleared_atom, scheduler::txn_id, uint32_t>,
  // The wait for round `round`'s victims to go (scheduling.preemptionWait) ended.
  caf::reacts_to<evict_atom, uint32_t>,
  // A node's answer to this gang's reservation of room there (granted or not).
  caf::reacts_to<room_atom, uint32_t, bool>,
  // The PodGroup spec changed.
  caf::reacts_to<spec_atom, pod_group_ptr>,
  // The registry heard nothing of this gang for scheduling.parkIdleGangsAfter: if it is idle
  // (parkable), it asks to be parked.
  caf::reacts_to<idle_atom>,
  // The registry parked this gang: it ends now, and the registry starts it again from its pods
  // when one of them changes (docs/NOTES.md "Idle gangs are parked").
  caf::reacts_to<park_atom>,
  // A snapshot of the coordinator's state, for tests and invariant checks.
  caf::replies_to<inspect_atom>::with<gang_snapshot>>;

/// The NODE actor interface: owns one node's allocatable, committed usage and holds.
using node_actor = caf::typed_actor<
  // reserve(txn, ticket, items) for `coordinator`, which gets a vote now or, when the request
  // waits for younger holds, once they resolve. The node monitors the coordinator: its death
  // aborts its holds.
  caf::reacts_to<reserve_atom, reserve_request, gang_actor>,
  // Turn the hold of txn into committed usage, hand its pods to the binder, and tell the
  // coordinator. Idempotent.
  caf::reacts_to<commit_atom, scheduler::txn_id>,
  // Drop the hold or waiting reserve of txn. Idempotent.
  caf::reacts_to<abort_atom, scheduler::txn_id>,
  // Pods take over committed placeholders of the coordinator of txn (their bindings are durable):
  // commit each in its placeholder's room, hand them to the binder, and answer
  // committed(txn, node). Idempotent.
  caf::reacts_to<swap_atom, scheduler::txn_id, placeholder_swaps>,
  // Return finished or deleted pods' (or released placeholders') resources. Unknown ids are
  // ignored.
  caf::reacts_to<release_atom, std::vector<uint64_t>>,
  // Pods bound here by someone else (Kubernetes mode: another scheduler, or a binding seen only
  // in the apiserver): count them as committed. Idempotent per pod.
  caf::reacts_to<adopt_atom, pod_refs>,
  // Pods here changed their labels: the cluster's view shows them with the new ones, which is
  // what other pods' affinity, anti-affinity and spread match. Unknown ids are ignored.
  caf::reacts_to<labels_atom, pod_refs>,
  // A starving gang reserves room here (scheduler/room_reservation.hpp): the node keeps that
  // much from every other gang until the gang commits here, gives it back or ends. Answered
  // with room(node, granted); refused while another gang holds the node's reservation.
  caf::reacts_to<room_atom, uint64_t, scheduler::resources, gang_actor>,
  // The gang gives its reservation here back. Idempotent.
  caf::reacts_to<unreserve_atom, uint64_t>,
  // The node's static facts changed (cordon, uncordon, labels, taints).
  caf::reacts_to<spec_atom, node_ptr>,
  // A snapshot of the ledger, for tests and invariant checks.
  caf::replies_to<inspect_atom>::with<node_snapshot>>;

/// The STATUS SINK interface: what the binder reports about pods.
using status_sink_actor = caf::typed_actor<
  // Pods changed phase (Running, Succeeded, Failed).
  caf::reacts_to<pod_status_atom, std::vector<pod_status_update>>,
  // A running pod creates further pods of its gang (a Spark driver's executors).
  caf::reacts_to<spawn_atom, spawn_request>,
  // These terminating pods' containers have stopped: remove them (a kubelet's final delete).
  caf::reacts_to<terminated_atom, std::vector<uint64_t>>,
  // The simulated cluster sees that nothing can progress any more.
  caf::reacts_to<stalled_atom, stall_report>>;

/// The BINDER interface: starts bound pods. Standalone mode: the simulated cluster.
using binder_actor = caf::typed_actor<
  // These pods were committed on node `node` (index, name: the node's own block, no copy of
  // its text per commit): start them.
  caf::reacts_to<bind_pods_atom, uint32_t, scheduler::shared_string, pod_refs>,
  // The pods were deleted: stop simulating them.
  caf::reacts_to<forget_atom, std::vector<uint64_t>>,
  // Make the pod fail now (standalone simulation only).
  caf::reacts_to<fail_atom, uint64_t>,
  // Restart: pods that finished before, so pods waiting on them (a driver on its executors) see
  // them as done.
  caf::reacts_to<adopt_atom, pod_refs>,
  // Evict preemption victims and nominate the preemptor's pods (Kubernetes mode: deletes with a
  // uid precondition; the pods leave the cache when the watch shows them gone). Standalone mode
  // evicts through the catalog (the registry deletes the pods), and the simulated cluster hears
  // of it as of any deletion (forget).
  caf::reacts_to<evict_atom, eviction_batch>,
  // End these running pods now with the given phase (their job ended: a ps after its workers).
  caf::reacts_to<finished_atom, std::vector<pod_outcome>>,
  // These pods are being deleted gracefully: stop them by their deadline and answer
  // terminated (standalone only; in Kubernetes mode each pod's kubelet does it).
  caf::reacts_to<terminate_atom, std::vector<termination_order>>,
  // Internal: the next simulation timer is due.
  caf::reacts_to<tick_atom>,
  // Internal: the periodic check whether nothing can progress any more.
  caf::reacts_to<stalled_atom>,
  // Where to report pod phases (the registry; the two are spawned one after the other).
  caf::reacts_to<spec_atom, status_sink_actor>>;

/// The GANG SINK interface: what a PodGroup actor asks of the registry.
using gang_sink_actor = caf::typed_actor<
  // Make these bindings durable as one atomic write, then answer `gang` with bound(txn, status).
  caf::reacts_to<bind_gang_atom, binding_request, gang_actor>,
  // The gang's phase or pending reason changed.
  caf::reacts_to<report_atom, gang_report>,
  // Gang `id`, idle (running or completed, nothing pending, no round, swap or placeholder), asks
  // to be parked; `heard` counts the pod messages it has had from the registry, so a request
  // overtaken by one is refused (by silence). Granted with `park` to `gang`.
  caf::reacts_to<park_atom, uint64_t, uint64_t, gang_actor>,
  // Gang `ask.gang` cannot be placed: choose victims for it among lower-priority gangs of its
  // queue; answer `gang` with offer(preemption_offer).
  caf::reacts_to<preempt_atom, preemption_ask, gang_actor>,
  // Every node of the preemptor's round voted yes: evict its victims.
  caf::reacts_to<evict_atom, eviction_order>>;

/// The DESERVED LISTENER interface: who hears each queue's deserved share (the registry, for
/// queue status).
using deserved_listener_actor =
    caf::typed_actor<caf::reacts_to<deserved_atom, std::string, scheduler::resources>>;

/// The CLUSTER actor interface: fair share between queues and the cluster-wide enqueue gate.
using queue_actor_fwd = caf::typed_actor<
  caf::reacts_to<admission_atom, admission>,
  // Its deserved share, and whether other queues' claims cut it (share_cut_by_others).
  caf::reacts_to<deserved_atom, scheduler::resources, bool>,
  // The cluster's nodes changed: gangs that no node could hold may fit now.
  caf::reacts_to<capacity_atom>>;

using cluster_actor = caf::typed_actor<
  // Live nodes' allocatable changed by +added -removed.
  caf::reacts_to<capacity_atom, scheduler::resources, scheduler::resources>,
  // A queue was created or changed; `handle` receives its deserved share.
  caf::reacts_to<spec_atom, queue_ptr, queue_actor_fwd>,
  // A queue was deleted.
  caf::reacts_to<removed_atom, std::string>,
  // A queue's allocated and requested (allocated + pending demand) resources.
  caf::reacts_to<usage_atom, std::string, scheduler::resources, scheduler::resources>,
  // Admit a gang through the enqueue gate; the answer goes to `queue`.
  caf::reacts_to<admit_atom, admit_request, queue_actor_fwd>,
  // An admitted gang (id, queue) has this remaining claim now (minResources - allocated, at
  // least 0); a gang that left (finished, deleted) claims nothing.
  caf::reacts_to<claim_atom, uint64_t, std::string, scheduler::resources>,
  // Internal: the debounced fair-share recomputation.
  caf::reacts_to<recompute_atom>,
  // Also tell `listener` every queue's deserved share.
  caf::reacts_to<spec_atom, deserved_listener_actor>>;

/// The QUEUE actor interface: one Volcano queue's pending gangs, gate and accounting.
using queue_actor = queue_actor_fwd::extend<
  // A gang wants scheduling (new, after backoff, or for an elastic round).
  caf::reacts_to<waiting_atom, gang_entry, gang_actor>,
  // A gang's planning slot ended with `outcome`.
  caf::reacts_to<planned_atom, uint64_t, plan_outcome>,
  // A gang's allocation changed.
  caf::reacts_to<usage_atom, usage_delta>,
  // A gang was deleted or completed.
  caf::reacts_to<removed_atom, uint64_t>,
  // A gang was parked: its actor is gone, its allocation stays (a woken gang's actor replaces
  // it with a `whole` usage delta).
  caf::reacts_to<park_atom, uint64_t>,
  // The queue spec changed (weight, capability, state Open/Closed).
  caf::reacts_to<spec_atom, queue_ptr>,
  // Capacity was freed: retry gangs that wait for room.
  caf::reacts_to<wake_atom>,
  // A gang woken by this queue does not wait for a slot now (it has nothing to plan); 0: the
  // queue's own time limit on waiting for its woken gangs.
  caf::reacts_to<woken_atom, uint64_t>,
  // Gang `gang`'s sla-waiting-time ran out (scheduler/sla.hpp): refused by the gate before, it
  // asks again now, and the gate admits it.
  caf::reacts_to<sla_atom, uint64_t>,
  // A snapshot, for tests and invariant checks.
  caf::replies_to<inspect_atom>::with<queue_snapshot>>;

/// The PERSIST LISTENER interface: who the store writer answers.
using persist_listener_actor = caf::typed_actor<
  // The write with `cookie` is durable (ok) or failed.
  caf::reacts_to<persisted_atom, uint64_t, status>>;

/// The STORE WRITER interface: the only writer to RocksDB; group-commits.
using store_writer_actor = caf::typed_actor<
  // Persist `batch`; answer `listener` with persisted(cookie, status) once it is durable.
  caf::reacts_to<persist_atom, batch_ptr, uint64_t, persist_listener_actor>,
  // Internal: the group-commit window closed.
  caf::reacts_to<flush_atom>,
  // Internal: writes may have paused for store.flushWhenIdleAfter; if so, flush the memtables.
  caf::reacts_to<idle_atom>>;

/// The Kubernetes-mode JOB CONTROLLER interface (--controllers job): Volcano's job controller
/// over the apiserver (actors/kube_job_controller.hpp).
using kube_job_controller_actor = caf::typed_actor<
  // One of its watches (Jobs, their pods, PodGroups, Commands) listed its collection or saw a
  // change.
  caf::reacts_to<watched_atom, kube_job_input_ptr>,
  // A policy's timeout passed (its delayed action), or a failed step is due to be tried again.
  caf::reacts_to<timeout_atom, kube_job_timer_ptr>,
  // Internal: sync job `key` ("<namespace>/<name>") again (a step changed its phase).
  caf::reacts_to<job_sync_atom, std::string>,
  // Internal, every second: whether this process leads now (a new leader syncs every job).
  caf::reacts_to<tick_atom>>;

} // namespace phalanx::actors
