#pragma once

// Every atom and message type of the actor runtime, in one place (STYLE.md "The protocol is
// declared in one place"): CAF 0.17 atoms hold at most 10 characters and two atoms with the same
// text are one type, so keeping them together keeps collisions visible.
//
// Messages stay inside one process, so their types are registered as local-only
// (CAF_ALLOW_UNSAFE_MESSAGE_TYPE): they carry shared pointers to immutable pods and specs instead
// of copies, which is what keeps a 64-pod gang's reserve round cheap.

#include "api/service.hpp"
#include "scheduler/gang_state.hpp"
#include "scheduler/model.hpp"
#include "scheduler/node_ledger.hpp"
#include "scheduler/object_status.hpp"
#include "scheduler/order.hpp"
#include "scheduler/resources.hpp"
#include "scheduler/result.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/type_id.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::storage {
class write_batch;
struct loaded_state;
}

namespace phalanx::actors {

// -- Payloads ---------------------------------------------------------------------------------

using pod_ptr = std::shared_ptr<const scheduler::pod>;
using pod_group_ptr = std::shared_ptr<const scheduler::pod_group>;
using queue_ptr = std::shared_ptr<const scheduler::queue>;
using node_ptr = std::shared_ptr<const scheduler::node>;

/// A pod with the runtime's numeric id (uids are strings; ids make the node ledger cheap).
struct pod_ref {
  uint64_t id = 0;
  pod_ptr pod;
};
using pod_refs = std::vector<pod_ref>;

/// What the pods ask for together.
inline scheduler::resources total_requests(const pod_refs& pods) {
  scheduler::resources sum;
  for (const auto& ref : pods)
    sum += ref.pod->requests;
  return sum;
}

/// Ids of placeholders (scheduler/placeholders.hpp) have this bit set; pod ids never do. A node
/// commits a placeholder like a pod but never hands it to the binder.
inline constexpr uint64_t placeholder_id_bit = uint64_t(1) << 63;
constexpr bool is_placeholder(uint64_t pod_id) noexcept { return (pod_id & placeholder_id_bit) != 0; }

/// A pod taking over a committed placeholder's room on a node.
struct placeholder_swap {
  uint64_t placeholder = 0;
  pod_ref pod;
};
using placeholder_swaps = std::vector<placeholder_swap>;

/// reserve(txn, ticket, items): the pods of one gang for one node.
struct reserve_request {
  scheduler::txn_id txn;
  scheduler::ticket ticket;
  pod_refs items;
  /// What the sender added to the node's reserves in flight in the cluster view (the items'
  /// requests; zero when it added nothing): the node actor takes it off when it reads this.
  scheduler::resources in_flight;
  /// False: refuse (conflict) rather than wait for younger holds; the coordinator has replans
  /// left and would rather place the gang elsewhere now.
  bool may_wait = true;
  /// A preemptor's reserve: pods committed on the node that are evicted for it. Their room is
  /// held for it alone (scheduler::node_ledger::reserve_evicting), and the node says `cleared`
  /// once they are gone. Empty for an ordinary reserve.
  std::vector<uint64_t> victims{};
};

/// A gang that cannot be placed asks the registry (which knows every bound pod, its gang,
/// queue and priority) for victims among lower-priority gangs of its queue
/// (scheduler/preemption.hpp).
struct preemption_ask {
  uint64_t gang = 0;
  /// Asks are numbered by the gang; the offer carries the number back, so an offer for an ask
  /// the gang no longer waits for is ignored.
  uint64_t ask = 0;
  /// Its pending pods, in the planner's preference order, and what must be placed of them.
  pod_refs pods;
  int32_t min_pods = 0;
  std::vector<scheduler::role_minimum> min_per_role;
};

/// The registry's answer: where the preemptor's pods go and whom to evict for them.
struct preemption_offer {
  uint64_t ask = 0;
  bool found = false;
  /// (pod id, node index) for each pod to place.
  std::vector<std::pair<uint64_t, uint32_t>> placements;
  /// Per node index, the pods evicted there (committed on that node).
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> victims_by_node;
  /// When not found: why not (no final period).
  std::string detail;
  /// The victims are of other queues, above their deserved shares (Volcano's `reclaim`), not of
  /// lower priority in the preemptor's queue.
  bool reclaim = false;
};

/// Every node of a preemptor's round voted yes: evict the victims (the registry, or the world
/// behind it in Kubernetes mode). `nominated` are the preemptor's pods and the nodes they wait
/// for (Kubernetes: status.nominatedNodeName).
struct eviction_order {
  uint64_t gang = 0;
  std::vector<uint64_t> victims;
  std::vector<std::pair<uint64_t, uint32_t>> nominated;
  bool reclaim = false;  // As the offer's.
};

/// One pod to evict in Kubernetes mode (the binder's world deletes it with its uid as
/// precondition, after a DisruptionTarget condition and an Evict event).
struct pod_eviction {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string message;
};
/// A preemptor's pod waiting for room on a node (Kubernetes: status.nominatedNodeName).
struct pod_nomination {
  std::string namespace_name;
  std::string name;
  std::string node;
};
struct eviction_batch {
  std::vector<pod_eviction> evictions;
  std::vector<pod_nomination> nominations;
};

/// A node's answer to a reserve.
struct vote {
  scheduler::txn_id txn;
  uint32_t node = 0;
  scheduler::vote_kind kind = scheduler::vote_kind::reserved;
  std::vector<scheduler::shortfall> missing;  // For refused_insufficient.
};

/// What a PodGroup actor tells its queue when it wants to be scheduled.
struct gang_entry {
  uint64_t gang = 0;
  pod_group_ptr group;         // Order: priority, creation time, uid; minResources for the gate.
  bool admitted = false;       // Already Inqueue (a retry after backoff, or an elastic round).
  scheduler::resources demand; // Requests of its pending pods (for the fair-share request).
  /// Pods joined since it last waited: a gang no node could hold (planned with placeholders in
  /// place of members not created yet) may fit with them, so its queue admits it again.
  bool members_joined = false;
  /// It runs its minimum already: it waits for an elastic round (pods beyond the minimum), which
  /// its queue grants only after every gang still short of its minimum (Volcano's allocate).
  bool ready = false;
};

/// How a planning slot ended.
enum class plan_outcome { bound, unschedulable, unresolvable, refused, nothing_to_do, failed };
std::string_view to_string(plan_outcome o) noexcept;

/// A change of a gang's allocation (bound pods' requests), for queue and cluster accounting.
struct usage_delta {
  uint64_t gang = 0;
  scheduler::resources added;
  scheduler::resources removed;
  /// `added` is the gang's whole allocation, replacing what the queue held for it: sent by a
  /// gang actor started from its pods (a restart, or a parked gang woken up), whose queue may
  /// still count the allocation its previous actor reported.
  bool whole = false;
};

/// A request to the cluster actor to admit a gang.
struct admit_request {
  uint64_t gang = 0;
  std::string queue;
  pod_group_ptr group;
  scheduler::queue_state queue_state = scheduler::queue_state::open;
  scheduler::resource_limit capability;
  scheduler::resources queue_allocated;
  scheduler::resources queue_inqueue;
};

/// The cluster actor's answer.
struct admission {
  uint64_t gang = 0;
  bool admitted = false;
  std::string reason;
  /// Admitted already, but its queue holds its deserved share (overused) and starts nothing
  /// new: `reason` says so, and the gang waits for a planning slot as before.
  bool held_back = false;
};

/// A PodGroup actor asks the registry to make its bindings durable.
struct binding_request {
  uint64_t gang = 0;
  scheduler::txn_id txn;
  /// (pod id, node index) for each placed pod.
  struct binding {
    uint64_t pod = 0;
    uint32_t node = 0;
    /// The placeholder whose room the pod takes over on that node (a swap), or 0.
    uint64_t takes_over = 0;
    /// For a swap: the pod itself (the node needs its request). Null otherwise.
    pod_ptr swapped;
  };
  std::vector<binding> bindings;
};

/// A PodGroup actor's report of its state, for PodGroup status and events.
struct gang_report {
  uint64_t gang = 0;
  scheduler::gang_phase phase = scheduler::gang_phase::pending;
  bool admitted = false;
  // shared_strings (8 bytes, empty without a block): the registry keeps each gang's last report,
  // and the three texts are empty for every gang that runs.
  /// Empty when nothing is wrong; otherwise the Volcano-style condition message.
  scheduler::shared_string pending_reason;
  /// "Unschedulable", "NotEnoughResources", "Admission", ...
  scheduler::shared_string reason_code;
  /// Per pending pod that could not be placed, its own reason (PodScheduled condition).
  scheduler::shared_string origin_pod_reason;
  /// Placeholders holding room for members not created yet.
  int32_t placeholders = 0;
};

/// A pod that finished or was deleted, as the PodGroup actor learns it.
struct pod_outcome {
  uint64_t pod = 0;
  scheduler::pod_phase phase = scheduler::pod_phase::succeeded;
  bool deleted = false;
};

/// A pod's phase change, or a restart of its containers, reported by the binder (the simulated
/// cluster in standalone mode).
struct pod_status_update {
  uint64_t pod = 0;
  scheduler::pod_phase phase = scheduler::pod_phase::running;
  scheduler::timestamp at{};
  std::string message;
  /// Set when its containers restarted: how many times in all (scheduler::pod::restart_count),
  /// not how many more, so an update told twice counts once. Unset: unchanged.
  std::optional<uint16_t> restart_count = std::nullopt;
};

/// A graceful deletion the registry made durable, for the pod's kubelet (standalone: the
/// simulated cluster): stop the pod's containers, by the deadline at the latest, then say so
/// (terminated_atom) and the registry removes the pod.
struct termination_order {
  uint64_t pod = 0;
  scheduler::timestamp deadline{};
};

/// Pods the simulated cluster creates for a running pod (a Spark driver's executors).
struct spawn_request {
  uint64_t parent = 0;
  std::vector<scheduler::pod> pods;  // Namespace, group and role set; names unique.
};

/// The simulated cluster found that nothing can progress.
struct stall_report {
  std::vector<std::string> stuck_groups;  // "<namespace>/<group>"
  std::string message;
};

/// A change the world saw, for the registry's cache (Kubernetes mode: a watch event, or a whole
/// list after a (re)list). The objects carry the apiserver's uids and resourceVersions.
struct world_delta {
  enum class type : uint8_t {
    upsert,       // The objects were added or changed.
    remove,       // The objects were deleted.
    replace_all,  // `objects` is the whole collection of `kind`: what the cache holds beyond it
                  // was deleted.
    synced,       // Every collection has been listed once: the cache is whole (no objects).
    priority_classes,  // `objects` is the cluster's whole set of PriorityClasses.
    namespaces,        // `namespaces` holds the cluster's Namespaces with their labels.
  };
  type what = type::upsert;
  api::resource_kind kind = api::resource_kind::pod;
  std::vector<api::object> objects;
  /// type::namespaces: every Namespace's labels, for terms' namespaceSelectors.
  scheduler::namespace_directory_ptr namespaces;
  /// The collection's watch resourceVersion once this is applied, kept in the checkpoint with it
  /// ("world/watch/<kind>"); empty: none.
  std::string collection_version;
};

/// What became of a binding the Kubernetes world posted.
struct binding_outcome {
  enum class type : uint8_t {
    done,  // Bound (or found bound there already): the intent is fulfilled.
    gone,  // Not ours to bind any more (deleted, replaced, bound elsewhere): the intent ends,
           // and the watch tells the cache what became of the pod.
  };
  type what = type::done;
  uint64_t pod = 0;  // The registry's id.
  std::string message;
};

/// A write for the store writer and who to tell.
using batch_ptr = std::shared_ptr<storage::write_batch>;

/// The Kubernetes-mode job controller's inputs (actors/kube_job_controller.cpp defines them):
/// what its watches listed or saw change, and a policy's delayed action or a step to try again.
/// Passed by pointer, so that this header needs no JSON.
struct kube_job_input;
struct kube_job_timer;
using kube_job_input_ptr = std::shared_ptr<const kube_job_input>;
using kube_job_timer_ptr = std::shared_ptr<const kube_job_timer>;

/// Bindings persisted (or not) for a txn.
struct bound_result {
  scheduler::txn_id txn;
  status outcome;
};

// Snapshots for tests and invariant checks.
struct node_snapshot {
  uint32_t index = 0;
  std::string name;
  scheduler::resources allocatable;
  scheduler::resources committed;
  scheduler::resources held;
  std::size_t holds = 0;
  std::size_t waiters = 0;
  std::vector<uint64_t> bound_pods;
  /// The cluster view's reserves in flight to this node, read when the snapshot was taken.
  scheduler::resources in_flight;
  /// Gangs whose finished rounds the ledger remembers (node_ledger::forget_finished).
  std::size_t remembered_gangs = 0;
  /// Pods claimed as victims by a preemptor's hold here, and the room they still occupy.
  std::size_t claimed_victims = 0;
  scheduler::resources claimed;
  /// The gang holding the node's reservation of room (0: none).
  uint64_t room_reserved_for = 0;
  /// The node's labels: its topology domains.
  scheduler::label_set labels;
};

struct gang_snapshot {
  /// A committed placeholder, for the invariant checks (it holds room like a pod).
  struct placeholder {
    uint64_t id = 0;
    std::string name;
    std::string role;
    uint32_t node = 0;
    scheduler::resources requests;
  };
  uint64_t gang = 0;
  std::vector<placeholder> placeholders;
  scheduler::gang_phase phase = scheduler::gang_phase::pending;
  int32_t bound = 0;
  int32_t pending = 0;
  int32_t finished = 0;
  int32_t rounds = 0;
};

struct queue_snapshot {
  std::string name;
  scheduler::resources allocated;
  scheduler::resources inqueue;
  scheduler::resources deserved;
  std::size_t waiting = 0;
  std::size_t planning = 0;
  std::size_t admitted = 0;
  std::size_t gangs = 0;
  std::vector<uint64_t> gang_ids;  // The gangs it knows, sorted.
};

// The API service, relayed into the registry: callbacks travel as shared pointers.
using object_reply = std::shared_ptr<api::service::object_callback>;
using list_reply = std::shared_ptr<api::service::list_callback>;
using events_reply = std::shared_ptr<api::service::events_callback>;
using all_events_reply = std::shared_ptr<api::service::all_events_callback>;
using event_changes_reply = std::shared_ptr<api::service::event_changes_callback>;
using watch_sink_ptr = std::shared_ptr<api::watch_sink>;
using loaded_state_ptr = std::shared_ptr<storage::loaded_state>;

/// Consistency facts for invariant checks (I1-I4), computed from the catalog.
struct registry_snapshot {
  struct pod_fact {
    uint64_t id = 0;
    std::string key;
    std::string group_key;
    std::string node;
    scheduler::pod_phase phase = scheduler::pod_phase::pending;
    scheduler::resources requests;
    std::string role;
    /// The pod itself: labels and rules between pods, for the invariant checks.
    std::shared_ptr<const scheduler::pod> object;
  };
  struct group_fact {
    std::string key;
    std::string queue;
    int32_t min_member = 0;
    std::vector<scheduler::role_minimum> min_task_member;
    uint64_t gang = 0;
    bool parked = false;     // No actor: idle, woken by a change of its pods.
    bool completed = false;  // Its gang last reported completed.
    /// Pod messages the registry sent its current actor (a park request must have heard all).
    uint64_t pod_messages = 0;
  };
  std::vector<pod_fact> pods;
  std::vector<group_fact> groups;
  std::map<std::string, scheduler::resources> node_allocatable;
  std::map<std::string, uint32_t> node_index;
  uint64_t resource_version = 0;
  /// Handles for collecting the actors' own accounting (queue allocated, gang phases).
  std::map<std::string, caf::strong_actor_ptr> queue_actors;
  std::map<uint64_t, caf::strong_actor_ptr> gang_actors;
};

} // namespace phalanx::actors

// -- The type-ID block: every atom and message type of Phalanx ---------------------------

CAF_BEGIN_TYPE_ID_BLOCK(phalanx, caf::first_custom_type_id)

  // Two-phase gang commit (node actor <-> PodGroup actor).
  CAF_ADD_ATOM(phalanx, phalanx::actors, reserve_atom, "reserve")
  CAF_ADD_ATOM(phalanx, phalanx::actors, vote_atom, "vote")
  CAF_ADD_ATOM(phalanx, phalanx::actors, commit_atom, "commit")
  CAF_ADD_ATOM(phalanx, phalanx::actors, committed_atom, "committed")
  CAF_ADD_ATOM(phalanx, phalanx::actors, abort_atom, "abort")
  CAF_ADD_ATOM(phalanx, phalanx::actors, release_atom, "release")
  CAF_ADD_ATOM(phalanx, phalanx::actors, adopt_atom, "adopt")
  CAF_ADD_ATOM(phalanx, phalanx::actors, labels_atom, "labels")
  CAF_ADD_ATOM(phalanx, phalanx::actors, swap_atom, "swap")
  CAF_ADD_ATOM(phalanx, phalanx::actors, cleared_atom, "cleared")
  // A starving gang's reservation of room (gang <-> node actor).
  CAF_ADD_ATOM(phalanx, phalanx::actors, room_atom, "room")
  CAF_ADD_ATOM(phalanx, phalanx::actors, unreserve_atom, "unreserve")
  // Preemption (PodGroup actor <-> registry <-> world).
  CAF_ADD_ATOM(phalanx, phalanx::actors, preempt_atom, "preempt")
  CAF_ADD_ATOM(phalanx, phalanx::actors, offer_atom, "offer")
  CAF_ADD_ATOM(phalanx, phalanx::actors, evict_atom, "evict")
  // Queue <-> PodGroup and cluster.
  CAF_ADD_ATOM(phalanx, phalanx::actors, waiting_atom, "waiting")
  CAF_ADD_ATOM(phalanx, phalanx::actors, plan_atom, "plan")
  CAF_ADD_ATOM(phalanx, phalanx::actors, planned_atom, "planned")
  CAF_ADD_ATOM(phalanx, phalanx::actors, usage_atom, "usage")
  CAF_ADD_ATOM(phalanx, phalanx::actors, admit_atom, "admit")
  CAF_ADD_ATOM(phalanx, phalanx::actors, admission_atom, "admission")
  CAF_ADD_ATOM(phalanx, phalanx::actors, claim_atom, "claim")
  CAF_ADD_ATOM(phalanx, phalanx::actors, deserved_atom, "deserved")
  CAF_ADD_ATOM(phalanx, phalanx::actors, capacity_atom, "capacity")
  CAF_ADD_ATOM(phalanx, phalanx::actors, recompute_atom, "recompute")
  CAF_ADD_ATOM(phalanx, phalanx::actors, wake_atom, "wake")
  CAF_ADD_ATOM(phalanx, phalanx::actors, woken_atom, "woken")
  CAF_ADD_ATOM(phalanx, phalanx::actors, sla_atom, "sla")
  CAF_ADD_ATOM(phalanx, phalanx::actors, retry_atom, "retry")
  // Registry (the service backend) and the PodGroup actors.
  CAF_ADD_ATOM(phalanx, phalanx::actors, bind_gang_atom, "bindgang")
  CAF_ADD_ATOM(phalanx, phalanx::actors, bound_atom, "bound")
  CAF_ADD_ATOM(phalanx, phalanx::actors, report_atom, "report")
  CAF_ADD_ATOM(phalanx, phalanx::actors, pods_atom, "pods")
  CAF_ADD_ATOM(phalanx, phalanx::actors, finished_atom, "finished")
  CAF_ADD_ATOM(phalanx, phalanx::actors, spec_atom, "spec")
  CAF_ADD_ATOM(phalanx, phalanx::actors, removed_atom, "removed")
  CAF_ADD_ATOM(phalanx, phalanx::actors, idle_atom, "idle")
  CAF_ADD_ATOM(phalanx, phalanx::actors, park_atom, "park")
  CAF_ADD_ATOM(phalanx, phalanx::actors, continue_atom, "continue")
  // Binder and simulated cluster.
  CAF_ADD_ATOM(phalanx, phalanx::actors, bind_pods_atom, "bindpods")
  CAF_ADD_ATOM(phalanx, phalanx::actors, pod_status_atom, "podstatus")
  CAF_ADD_ATOM(phalanx, phalanx::actors, spawn_atom, "spawn")
  CAF_ADD_ATOM(phalanx, phalanx::actors, forget_atom, "forget")
  CAF_ADD_ATOM(phalanx, phalanx::actors, fail_atom, "fail")
  CAF_ADD_ATOM(phalanx, phalanx::actors, tick_atom, "tick")
  CAF_ADD_ATOM(phalanx, phalanx::actors, stalled_atom, "stalled")
  CAF_ADD_ATOM(phalanx, phalanx::actors, terminate_atom, "terminate")
  CAF_ADD_ATOM(phalanx, phalanx::actors, terminated_atom, "terminated")
  // Store writer.
  CAF_ADD_ATOM(phalanx, phalanx::actors, persist_atom, "persist")
  CAF_ADD_ATOM(phalanx, phalanx::actors, persisted_atom, "persisted")
  CAF_ADD_ATOM(phalanx, phalanx::actors, flush_atom, "flush")
  // The API service, relayed into the registry.
  CAF_ADD_ATOM(phalanx, phalanx::actors, create_atom, "create")
  CAF_ADD_ATOM(phalanx, phalanx::actors, read_atom, "read")
  CAF_ADD_ATOM(phalanx, phalanx::actors, list_atom, "list")
  CAF_ADD_ATOM(phalanx, phalanx::actors, delete_atom, "delete")
  CAF_ADD_ATOM(phalanx, phalanx::actors, act_atom, "act")
  CAF_ADD_ATOM(phalanx, phalanx::actors, events_atom, "events")
  CAF_ADD_ATOM(phalanx, phalanx::actors, all_events_atom, "allevents")
  CAF_ADD_ATOM(phalanx, phalanx::actors, event_changes_atom, "evchanges")
  CAF_ADD_ATOM(phalanx, phalanx::actors, watch_atom, "watch")
  CAF_ADD_ATOM(phalanx, phalanx::actors, unwatch_atom, "unwatch")
  CAF_ADD_ATOM(phalanx, phalanx::actors, update_atom, "update")
  // Introspection for tests and invariant checks.
  CAF_ADD_ATOM(phalanx, phalanx::actors, inspect_atom, "inspect")
  // The world (Kubernetes mode) and the registry.
  CAF_ADD_ATOM(phalanx, phalanx::actors, delta_atom, "delta")
  CAF_ADD_ATOM(phalanx, phalanx::actors, lead_atom, "lead")
  CAF_ADD_ATOM(phalanx, phalanx::actors, outcome_atom, "outcome")
  // The Kubernetes-mode job controller.
  CAF_ADD_ATOM(phalanx, phalanx::actors, watched_atom, "watched")
  CAF_ADD_ATOM(phalanx, phalanx::actors, timeout_atom, "timeout")
  CAF_ADD_ATOM(phalanx, phalanx::actors, job_sync_atom, "jobsync")

  // Message types.
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::pod_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::pod_group_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::queue_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::node_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::pod_refs))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::reserve_request))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::placeholder_swaps))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::vote))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::gang_entry))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::plan_outcome))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::usage_delta))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::admit_request))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::admission))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::binding_request))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::gang_report))
  CAF_ADD_TYPE_ID(phalanx, (std::vector<phalanx::actors::pod_outcome>))
  CAF_ADD_TYPE_ID(phalanx, (std::vector<phalanx::actors::pod_status_update>))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::spawn_request))
  CAF_ADD_TYPE_ID(phalanx, (std::vector<phalanx::actors::termination_order>))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::stall_report))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::batch_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::bound_result))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::node_snapshot))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::gang_snapshot))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::queue_snapshot))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::scheduler::txn_id))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::scheduler::ratio))
  CAF_ADD_TYPE_ID(phalanx, (std::vector<uint64_t>))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::scheduler::resources))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::scheduler::shared_string))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::scheduler::queue_state))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::status))

  CAF_ADD_TYPE_ID(phalanx, (phalanx::api::object))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::api::resource_kind))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::api::list_options))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::api::object_action))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::api::write_options))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::object_reply))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::list_reply))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::events_reply))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::all_events_reply))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::event_changes_reply))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::watch_sink_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::loaded_state_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::registry_snapshot))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::world_delta))
  CAF_ADD_TYPE_ID(phalanx, (std::vector<phalanx::actors::binding_outcome>))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::preemption_ask))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::preemption_offer))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::eviction_order))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::eviction_batch))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::kube_job_input_ptr))
  CAF_ADD_TYPE_ID(phalanx, (phalanx::actors::kube_job_timer_ptr))

CAF_END_TYPE_ID_BLOCK(phalanx)

// Local-only: these types never leave the process, so they need no inspect() and may carry
// shared pointers.

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::pod_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::scheduler::shared_string)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::pod_group_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::queue_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::node_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::pod_refs)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::reserve_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::placeholder_swaps)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::vote)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::gang_entry)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::plan_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::usage_delta)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::admit_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::admission)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::binding_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::gang_report)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<phalanx::actors::pod_outcome>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<phalanx::actors::pod_status_update>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::spawn_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<phalanx::actors::termination_order>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::stall_report)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::batch_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::bound_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::node_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::gang_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::queue_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::scheduler::txn_id)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::scheduler::ratio)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<uint64_t>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::scheduler::resources)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::scheduler::queue_state)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::status)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::api::object)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::api::resource_kind)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::api::list_options)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::api::object_action)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::api::write_options)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::object_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::list_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::events_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::all_events_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::event_changes_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::watch_sink_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::loaded_state_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::registry_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::world_delta)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<phalanx::actors::binding_outcome>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::preemption_ask)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::preemption_offer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::eviction_order)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::eviction_batch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::kube_job_input_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(phalanx::actors::kube_job_timer_ptr)
