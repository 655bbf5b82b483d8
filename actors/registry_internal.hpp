#pragma once

// Helpers shared by the registry's source files (registry*.cpp). Not a public interface.

#include "actors/gang_actor.hpp"
#include "actors/node_actor.hpp"
#include "actors/queue_actor.hpp"
#include "actors/registry.hpp"

#include "scheduler/job_lifecycle.hpp"

#include <caf/all.hpp>

#include <optional>
#include <span>
#include <string>
#include <tuple>

namespace phalanx::actors::registry_detail {

using self_ptr = registry_actor::stateful_pointer<registry_state>;
using pod_entry = registry_state::pod_entry;
using group_entry = registry_state::group_entry;
using scheduling_cache = registry_state::scheduling_cache;

/// The catalog's keys are the store's: "<ns>/<name>" for a namespaced object (a PodGroup's key
/// in `groups` is the one its record is erased under), the name alone for a cluster-scoped one.
using storage::object_key;

/// A key as its namespace and name (none: a cluster-scoped object's name).
inline std::pair<std::string_view, std::string_view> split_object_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos)
    return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

/// Sets why pod `id`, in no gang, is pending; an empty reason clears it.
inline void set_pending_reason(scheduling_cache& cache, uint64_t id,
                               scheduler::shared_string why) {
  if (why.empty())
    cache.pending_reasons.erase(id);
  else
    cache.pending_reasons.insert_or_assign(id, std::move(why));
}
/// Why pod `id` (entry `e`) is pending: its gang's reason, or its own when in no gang; empty
/// when it has none or is bound.
inline std::string_view pending_reason(const registry_state& st, uint64_t id,
                                       const pod_entry& e) {
  if (e.is_bound())
    return {};
  if (e.gang != 0) {
    auto g = st.cache.groups.find(e.gang);
    return g == st.cache.groups.end() ? std::string_view{} : g->second.pods_reason.view();
  }
  auto i = st.cache.pending_reasons.find(id);
  return i == st.cache.pending_reasons.end() ? std::string_view{} : i->second.view();
}

inline std::size_t kind_index(api::resource_kind k) { return static_cast<std::size_t>(k); }

/// Writes `batch` through the store writer; `then` runs in the registry once it is durable (or
/// failed).
void persist(self_ptr self, storage::write_batch batch, std::function<void(const status&)> then);

/// persist() for a batch of pod state updates (bindings, phase changes) of `pods`: while it is
/// on its way, work that would write one of them whole waits (when_no_state_write).
void persist_state(self_ptr self, storage::write_batch batch, std::vector<uint64_t> pods,
                   std::function<void(const status&)> then);
/// Runs `work` now if no state update of pod `id` is on its way to the store, else as soon as
/// none is (the registry's turn that applied the last of them), so that a record of the pod
/// written whole by `work` carries its latest state.
void when_no_state_write(self_ptr self, uint64_t id, std::function<void()> work);
/// Runs `work` once the state writes on their way now have ended (now if none is): the last of
/// them ends last, but for a write the store failed out of turn, so `work` checks again what it
/// waited for.
void after_state_writes_in_flight(self_ptr self, std::function<void()> work);

/// The next resource version. Versions are handed out only under a ceiling the store holds
/// (storage::write_batch::reserve_versions_through), asked for ahead of need, so no version is
/// handed out twice across a restart: a delete's version is kept by no record.
uint64_t next_version(self_ptr self);
/// Asks the store to keep a new ceiling, a block of versions above the current one; the first
/// write of a start, so that every later acknowledgment comes after it is durable.
void reserve_versions(self_ptr self);
/// Runs `work` in a later turn of the registry, after the messages waiting now: for work split
/// into slices so that one request does not hold every other.
void run_later(self_ptr self, std::function<void()> work);
/// Runs `work` in the registry once `delay` has passed (a policy's timeout).
void run_after(self_ptr self, scheduler::duration delay, std::function<void()> work);

/// A fresh random UUID (version 4) from the registry's seeded RNG.
scheduler::object_uid new_uid(self_ptr self);

// Events (registry_events.cpp).

/// Records an event about an object ("Pod", "PodGroup", "Job", "Queue", "Node").
void record_event(self_ptr self, api::resource_kind kind, std::string_view ns,
                  std::string_view name, std::string_view type, std::string_view reason,
                  std::string_view message);
/// The FailedScheduling events of the pods of the PodGroup `group_key` names may have changed:
/// its gang's reason, its warnings or its pods did. Watches of events hear of what did by the
/// end of the turn. Call it wherever one of those changes without going through the two below.
void note_group_events_changed(self_ptr self, std::string_view group_key);
/// The same for gang `gang`'s PodGroup (none for 0 or a gang that is gone).
void note_gang_events_changed(self_ptr self, uint64_t gang);
/// Pod `p`'s binding became durable (its Scheduled event is made from now on; its
/// FailedScheduling ends).
void note_pod_bound(self_ptr self, const pod_entry& p);
/// Pod `p` leaves the catalog, with the events made of it.
void note_pod_leaving(self_ptr self, const pod_entry& p);

/// Tells watchers of `kind` (and keeps the event for watches that resume from a version).
void announce(self_ptr self, api::watch_event::type type, api::object obj);
bool is_watched(self_ptr self, api::resource_kind kind);

// Views: the API objects with their computed status.
api::pod_object pod_view(const registry_state& st, uint64_t id, const pod_entry& e);
api::pod_group_object group_view(const registry_state& st, const group_entry& g);
api::node_object node_view(const registry_state::node_entry& n);
api::queue_object queue_view(const registry_state& st, const registry_state::queue_entry& q);
api::job_object job_view(const registry_state& st, const registry_state::job_entry& j);
scheduler::pod_group_status group_status(const registry_state& st, const group_entry& g);
/// What group_status shows (phase, counts, the conditions' inputs), reduced to the phase and a
/// 64-bit digest without building the status's strings: equal digests mean an equal status (but
/// for a collision, one in 2^64). A change to group_status must change this with it.
struct group_summary {
  scheduler::pod_group_phase phase = scheduler::pod_group_phase::pending;
  int32_t running = 0;
  uint64_t digest = 0;
};
group_summary summarize_group(const registry_state& st, const group_entry& g);
/// Records the group's current status as the one watchers have seen (at its creation; changes
/// go through group_changed).
void mark_emitted(registry_state& st, group_entry& g);
/// Adds `delta` PodGroups in `phase` to the queue's counts and publishes them.
void count_phase(scheduling_cache& cache, const std::string& queue,
                 scheduler::pod_group_phase phase, int64_t delta);
/// Sets the phase watchers saw of the group, moving it between its queue's phase counts (and
/// their metrics) while it is indexed.
void set_emitted_phase(scheduling_cache& cache, group_entry& g, scheduler::pod_group_phase phase);
/// Binds a new queue's PodGroup count series and sets them from the counts kept.
void bind_queue_series(registry_state& st, registry_state::queue_entry& q);
scheduler::job_status job_status_of(const registry_state& st, const registry_state::job_entry& j);
/// A job's pods by phase, as its phase is read from them (job_phase_of).
struct job_pod_totals {
  int32_t total = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
};
/// The totals of gang `g`'s pods: one walk, without the per-task counts of job_status_of.
job_pod_totals pod_totals(const registry_state& st, const group_entry& g);
/// The job's phase from its pods' totals: job_status_of's, and persist_own_starts' without
/// building the whole status. `min_available`: its PodGroup's minMember.
scheduler::job_phase job_phase_of(const registry_state::job_entry& j, const job_pod_totals& t,
                                  int32_t min_available);

/// Announces the group's (and its job's) status when it changed since last announced.
void group_changed(self_ptr self, group_entry& g);

/// Sends the follower rule of the simulation: pods without a declared end finish once every pod
/// of their gang that declares one has finished.
void end_followers(self_ptr self, group_entry& g);

// Scheduling plumbing.
void wake_gang(self_ptr self, group_entry& g);
/// Ends the gang's actor (or its parked state) and removes it from its queue: the group is
/// deleted, or renewed under a new id.
void end_gang(self_ptr self, group_entry& g);
// The cache's entries, as both worlds add and remove them (the standalone catalog's writes once
// durable, the Kubernetes world's deltas).
void add_node(self_ptr self, scheduler::node n, pod_refs committed);
/// Takes node `name` out of scheduling: its room leaves the cluster, its actor ends. Its pods
/// are the caller's (standalone: they fail; Kubernetes: the apiserver deletes them).
void remove_node_entry(self_ptr self, const std::string& name);
void add_queue(self_ptr self, scheduler::queue q);
/// Takes queue `name` out: its actor ends, the fair share and the queue tree forget it.
void remove_queue_entry(self_ptr self, const std::string& name);
/// Registers a PodGroup under `key` (a new gang id): the pods that waited for it join, and its
/// actor starts (once scheduling runs). The caller announces it.
group_entry& add_group(self_ptr self, const std::string& key, pod_group_ptr group);
/// Forgets a deleted PodGroup: its gang ends, and its pods stay (as in Kubernetes), the pending
/// ones waiting for a PodGroup of that name again. The caller announces it.
void remove_group_entry(self_ptr self, uint64_t gang);
void spawn_gang(self_ptr self, group_entry& g, gang_start start = gang_start::fresh);
/// Tells the gang's actor of pods that were added to it or ended (`pods` or `finished`). A parked
/// running gang is woken instead: a new actor starts from the pods as they are now, which already
/// show the change. A parked completed gang stays parked (its actor would ignore both).
template <class Atom, class Payload>
void tell_gang(self_ptr self, group_entry& g, Atom atom, Payload&& payload) {
  if (g.parked) {
    wake_gang(self, g);
    return;
  }
  if (!g.actor)
    return;
  ++g.sent_to_actor;
  g.last_active = self->clock().now();
  self->send(g.actor, atom, std::forward<Payload>(payload));
}
/// Arms the parking sweep, if parking is on and it is not armed.
void arm_park_sweep(self_ptr self);
/// The sweep: asks every gang running or completed, quiet for scheduling.parkIdleGangsAfter,
/// whether it is idle; re-arms while such gangs remain.
void sweep_idle_gangs(self_ptr self);
/// Grants an idle gang's request to be parked, unless a pod message overtook it.
void do_park(self_ptr self, uint64_t gang, uint64_t heard, const gang_actor& actor);
/// A new incarnation of a gang (a resumed job): its actor ends and a fresh one starts under a new
/// gang id, so nothing of the old one (a completed state, transactions the nodes remember) is
/// taken for the new one. With `spec`, the new incarnation takes it: the old one is ended under
/// the queue it was in (its actor there hears that it left). Returns the entry under its new id.
group_entry& renew_gang(self_ptr self, uint64_t gang, pod_group_ptr spec = nullptr);
group_entry& make_implicit_group(self_ptr self, const scheduler::pod& p);
/// Registers a new group under its key and its queue; unindex_group undoes both.
void index_group(scheduling_cache& cache, const group_entry& g);
void unindex_group(scheduling_cache& cache, const group_entry& g);
void attach_pod(self_ptr self, registry_state::pod_slot& slot);
/// The pod's new version `pod` (same uid) has fewer scheduling gates than the one the catalog
/// holds: it takes its place, and once no gate is left it joins its gang (attach_pod). The
/// caller writes the pod and announces it.
void ungate_pod(self_ptr self, uint64_t id, pod_ptr pod);
/// The catalog's pod `id` has new labels (an update through the API, or the apiserver's watch):
/// what other pods' rules and its own match. A bound pod's node shows the new pod in the
/// cluster's view; a pending member's gang starts over (renew_gang), since its actor plans with
/// the pods it was given. Nothing for an ended pod.
void pod_relabelled(self_ptr self, uint64_t id);
/// True when a pod of the group waits to be placed (not bound, not ended, not being deleted).
bool has_pending_pod(const registry_state& st, const group_entry& g);
/// True, with the pod's pending reason set, when its schedulerName is not served here.
bool not_ours(registry_state& st, const registry_state::pod_slot& slot);
/// True when the pod has scheduling gates (and is not bound): it joins
/// no gang until they are gone (ungate_pod). It is neither placed nor counted in its gang's
/// minimum or its queue's inqueue quota; its gang waits for it as for a member not created yet.
bool held_by_gates(registry_state& st, const registry_state::pod_slot& slot);
/// Makes a pod of a job a member of the job's gang `g`, unless its schedulerName is not served
/// here (not_ours: it is stored and left alone, as at a restart) or it is gated
/// (held_by_gates). True when it joined.
bool join_job_gang(registry_state& st, registry_state::pod_slot& slot, group_entry& g);
/// Files a pod whose PodGroup (key `group_key`) does not exist under it, until the group comes.
void wait_for_group(scheduling_cache& cache, registry_state::pod_slot& slot,
                    const std::string& group_key);
/// Adds a pod to the catalog under a new id; returns its id and entry (valid until it is
/// erased).
registry_state::pod_slot& insert_pod(self_ptr self, pod_ptr pod);
/// The same for a pod whose name reserve_pod_name took (`reserved`): ends the reservation.
registry_state::pod_slot& insert_pod(self_ptr self, pod_ptr pod, const std::string& reserved);
/// Adds a pod of a job's creation-time expansion under id `id` (its job's first_pod plus its
/// position; at least next_pod), found by name through job_tasks rather than pod_ids.
registry_state::pod_slot& insert_job_pod(registry_state& st, pod_ptr pod, uint64_t id);
/// The pod with its current runtime state: the entry's own pod while no binding or phase change
/// happened since it was created or restored, else a copy with `changed` applied. For actors
/// that are handed pods (a gang's actor at its spawn), which read their state.
pod_ptr current_pod(const pod_entry& e);

/// True when an object of `kind` named `key` ("<ns>/<name>", or the name of a cluster-scoped
/// kind) exists or its creation is on its way to the store. A job's expanded pods are not
/// looked at (job_task_of).
bool name_taken(const registry_state& st, api::resource_kind kind, const std::string& key);
/// Takes a pod's name ("<ns>/<name>") for a creation on its way to the store: false if a pod
/// has it, a creation reserved it or a job's expansion names it (job_task_of). insert_pod ends
/// the reservation; release it with release_pod_name if the creation fails.
bool reserve_pod_name(registry_state& st, const std::string& key);
/// Makes `p`'s namespace, node (a pod may arrive bound), group, role, priority class and
/// scheduler names share the blocks of the pods created before it with the same names
/// (scheduler/shared_string.hpp).
void share_pod_names(registry_state& st, scheduler::pod& p);
/// Ends a reservation (nothing once its pod was inserted).
void release_pod_name(registry_state& st, const std::string& reserved);
/// The same for every pod of a list, all or none: null with `names` holding the reservations in
/// the pods' order, or the first pod whose name is taken (and nothing reserved).
const scheduler::pod* reserve_pod_names(registry_state& st, const std::vector<scheduler::pod>& pods,
                                        std::vector<std::string>& names);
void release_pod_names(registry_state& st, const std::vector<std::string>& names);
/// The id of the pod named `key`, or 0 if there is none (or its creation is not durable yet).
uint64_t pod_id_of(const registry_state& st, const std::string& key);
/// The task of the job whose creation-time expansion names the pod `key` ("<ns>/<name>"), or
/// null; with that pod's position in the job's expansion. Such a name is the job's while the
/// job's creation is on its way to the store and until the job is deleted or suspended, whether
/// or not the pod still exists.
const registry_state::job_task_pods* job_task_of(const registry_state& st, std::string_view key,
                                                 uint32_t* position = nullptr);
/// Takes the names of the pods job `job_key` makes at its creation (`pods`, its expansion in
/// order) through its tasks: returns the name of the first that another pod or job has (and
/// takes nothing), or an empty string when all are now the job's.
std::string claim_job_pods(registry_state& st, const std::string& job_key,
                           const scheduler::job& j, const std::vector<scheduler::pod>& pods);
/// Gives back what claim_job_pods took for the job (its creation failed, or it is deleted or
/// suspended).
void release_job_pods(registry_state& st, const std::string& job_key, const scheduler::job& j);
/// The live node in slot `index` of the cluster view, or null.
registry_state::node_entry* node_at(scheduling_cache& cache, uint32_t index);

/// The queue a pod without a PodGroup runs in: the annotation Volcano uses, else "default".
std::string implicit_queue_of(const scheduler::pod& p);

/// A queue that names `queue` as its parent, or null: only leaf queues take work.
const std::string* first_child(const scheduling_cache& cache, std::string_view queue);
/// The nearest ancestor of `q` that is not Open, or null: it closes q's subtree to new work.
const scheduler::queue* closed_ancestor(const scheduling_cache& cache, const scheduler::queue& q);
/// Gives every queue actor its effective spec after the queues changed: a queue with child
/// queues, or under an ancestor that is not Open, takes no new work (Volcano's hierarchical
/// queues), so its actor is given it as Closed; the catalog keeps the state as set.
void refresh_queue_states(self_ptr self);
/// Every queue's spec (the tree checks of scheduler/validation.hpp take them whole).
std::vector<scheduler::queue> queue_specs(const scheduling_cache& cache);
/// Runtime checks of a create (names, queues, priority classes). A queue accepts new work when
/// it and every ancestor are Open and it is a leaf (has no child queues).
status check_queue_accepts(const scheduling_cache& cache, const std::string& queue,
                           std::string_view field);
/// The priority of an object created now naming `class_name` (at `field`), as Kubernetes'
/// Priority admission resolves it, from the PriorityClasses served: the class's value; with no
/// class, `given` if not 0, else the global default class's value, else 0. invalid_argument
/// naming the field when no class has that name.
result<int32_t> resolve_priority(const registry_state& st, std::string_view class_name,
                                 int32_t given, std::string_view field);
/// The PriorityClass marked globalDefault, or null.
const scheduler::priority_class* default_priority_class(const registry_state& st);
/// Forbidden (403, kube-apiserver's words) when `c` would be the global default while another
/// class is, or is becoming it.
status check_sole_default(const registry_state& st, const scheduler::priority_class& c);
/// Creates what the configuration's priorityClasses (and Kubernetes' system classes) name and
/// the store lacks: the defaults a start makes, as kube-apiserver makes its system classes.
void create_default_priority_classes(self_ptr self);

// API operations (registry_api.cpp).
/// Dry run (api::write_options): every check, and the answer the object as it would be.
void do_create(self_ptr self, api::object obj, bool dry_run, object_reply reply);
void do_get(self_ptr self, api::resource_kind kind, const std::string& ns,
            const std::string& name, const object_reply& reply);
void do_list(self_ptr self, api::resource_kind kind, const api::list_options& options,
             const list_reply& reply);
/// Dry run: every check of the delete, and the answer the object as it is; nothing changes.
/// A pod goes as kube-apiserver deletes one (delete_pod).
void do_delete(self_ptr self, api::resource_kind kind, const std::string& ns,
               const std::string& name, const api::write_options& options, object_reply reply);
/// Answers for the API's operations.
std::string kind_plural(api::resource_kind k);
status already_exists(api::resource_kind k, std::string_view name);
status not_found(api::resource_kind k, std::string_view name);
/// True, with `reply` answered, when the world refuses writes through phalanxd's API (Kubernetes
/// mode: objects change through the apiserver there).
bool refused_by_the_world(self_ptr self, const object_reply& reply);
/// True, with `reply` answered, when a create or update cannot be taken: Kubernetes mode, or
/// restart recovery not finished.
bool refuses_writes(self_ptr self, const object_reply& reply);

// Updates (registry_update.cpp).
/// A PUT's or PATCH's result (api::service::update), decoded and checked by the API
/// (api/update.hpp); what may change given the object's state is decided here:
/// - pods: labels and annotations (a bound pod's once no state update of it is on its way to
///   the store: when_no_state_write), and the removal of scheduling gates;
/// - nodes: labels, annotations, taints and unschedulable (their status, allocatable
///   included, is the kubelet's, here the simulation's);
/// - queues: labels, annotations and the spec, checked with the tree's rules as a create is;
///   its state (status.state) changes by the open and close actions;
/// - PodGroups: labels, annotations and the spec, its queue only while no pod of it is bound.
///   A PodGroup of a job or of a lone pod is its owner's to change.
/// Dry run: every check, and the answer the object as it would be; nothing written or changed.
void do_update(self_ptr self, api::object obj, bool dry_run, object_reply reply);
/// Writes of a node, queue, PodGroup or pod through the API on their way to the store (an update,
/// a delete, an action), by kind and key: while one is, another change of the object is refused
/// (change_refused, 409), so that neither an acknowledged update is lost under another nor a
/// deleted object's record written again after its deletion's. persist_change writes `batch`
/// (persist) with the object's change marked under way until `then` runs.
bool change_on_its_way(const registry_state& st, api::resource_kind kind, std::string_view key);
/// The mark of such a change in `changing`.
std::string change_key(api::resource_kind kind, std::string_view key);
void persist_change(self_ptr self, api::resource_kind kind, const std::string& key,
                    storage::write_batch batch, std::function<void(const status&)> then);
status change_refused(api::resource_kind kind, std::string_view name);
/// The scheduling side takes an object's new spec, from an update through the API or from the
/// apiserver's watch: a node's actor and the cluster's view take it and waiting gangs try
/// again; a queue's actor takes it (and the tree's effective states are renewed); a PodGroup
/// whose scheduling spec changed (minMember, minTaskMember, minResources, queue, priority,
/// sla-waiting-time) starts over as a new incarnation of its gang, which plans from its pods as
/// they are, so nothing planned under the old spec is committed under the new one.
/// `change_group` returns the group's entry, under its new gang id when it started over.
void change_node(self_ptr self, registry_state::node_entry& n, scheduler::node next);
/// The event a node's cordon or uncordon records (NodeNotSchedulable, NodeSchedulable).
void record_cordon_event(self_ptr self, const std::string& node, bool unschedulable);
void change_queue(self_ptr self, registry_state::queue_entry& q, scheduler::queue next);
group_entry& change_group(self_ptr self, group_entry& g, scheduler::pod_group next);
void do_act(self_ptr self, api::resource_kind kind, const std::string& ns,
            const std::string& name, api::object_action action, object_reply reply);
/// The key of an object's events: "<Kind>/<namespace>/<name>" ("Node/<name>" when cluster-scoped).
std::string event_key(api::resource_kind kind, std::string_view ns, std::string_view name);
/// The object an event key names: (kind, namespace, name); nullopt for a key event_key did not
/// make.
using event_subject = std::tuple<api::resource_kind, std::string, std::string>;
std::optional<event_subject> parse_event_key(std::string_view key);
void do_events(self_ptr self, api::resource_kind kind, const std::string& ns,
               const std::string& name, const events_reply& reply);
void do_all_events(self_ptr self, const all_events_reply& reply);
void do_event_changes(self_ptr self, uint64_t from, const event_changes_reply& reply);
void do_watch(self_ptr self, uint64_t id, api::resource_kind kind, api::list_options options,
              uint64_t from_version, watch_sink_ptr sink);

// Feedback from the scheduling actors and the binder (registry_feedback.cpp).
void do_bind_gang(self_ptr self, binding_request req, gang_actor gang);
void do_report(self_ptr self, gang_report report);
void do_pod_status(self_ptr self, std::vector<pod_status_update> updates);
void do_spawn(self_ptr self, spawn_request req);
void do_stalled(self_ptr self, const stall_report& report);
/// How delete_pods writes the deletion of pods stored as their job (storage/README.md).
enum class pod_keys {
  tombstone,         // A tombstone under each such pod's key (the pod is deleted on its own).
  erased_by_caller,  // Nothing: the caller's batch erases every key of the job's expansion.
};
/// Deletes pods: writes their deletion in one batch with the caller's `batch` (tombstones or
/// erases; `keys` says which for pods stored as their job), then, once durable, removes them
/// from the catalog, gives their room back and tells their gangs, a slice at a time
/// (run_later). `then` runs once every pod is removed. A pod already being deleted is left to
/// that deletion; nothing more is written for a pod once its deletion is.
void delete_pods(self_ptr self, std::vector<uint64_t> ids, storage::write_batch batch,
                 pod_keys keys, std::function<void(const status&)> then);
void delete_pods(self_ptr self, std::vector<uint64_t> ids, std::function<void(const status&)> then);
/// delete_pods for pods someone other than their job's controller removes (an API delete, a
/// preemption's eviction, a kubelet ending a graceful delete): once the deletion is durable and
/// `then` ran, each job pod's job hears PodEvicted, as Volcano's controller does.
void delete_evicted_pods(self_ptr self, std::vector<uint64_t> ids,
                         std::function<void(const status&)> then);

/// The message of the pod status update that ends a pod whose node was deleted: its job sees it
/// evicted (Kubernetes' pod garbage collector deletes such pods), not failed.
inline constexpr std::string_view pod_lost_with_its_node = "node deleted";

// The Volcano job controller of the standalone world (registry_jobs.cpp).
/// An event about a pod of a job, taken before the pod goes.
struct job_pod_event {
  std::string job_key;
  scheduler::job_event_info info;
  /// The pod had finished (Succeeded or Failed) before this event: when its job has ended too,
  /// its going is a clean-up that triggers no policy.
  bool was_finished = false;
};
/// The event `event` about pod `pod`, if it belongs to a job. For a pod about to be deleted,
/// `was_finished` is whether it has ended; a pod that ended just now (the event is its end) was
/// not.
std::optional<job_pod_event> job_event_of(const registry_state& st, uint64_t pod,
                                          scheduler::job_event event, bool was_finished);
/// The event a restart of pod `pod`'s containers raises (Volcano's updatePod), its phase before
/// the update being `phase_before`: TaskFailed when it is in a job, Running or Pending, and the
/// pending and running pods of its task (those not being deleted) restarted their containers the
/// task's maxRetry times in all (scheduler::task_failed), again at each restart after; otherwise
/// none. (Volcano's OutOfSync for such an update only syncs the job, which makes nothing here.)
/// O(the job's pods).
std::optional<job_pod_event> restart_event_of(const registry_state& st, uint64_t pod,
                                              scheduler::pod_phase phase_before);
/// Acts on an event as the job's lifecycle policies say (scheduler/job_lifecycle.hpp).
void on_job_pod_event(self_ptr self, const job_pod_event& e);
/// Makes the job's pods that no pod of its gang has ("<job>-<task>-<index>", a terminating pod
/// counting as there): a new incarnation's every pod, or those a sync makes again. They get new
/// uids and the job version and retry count of `status`, and are written in one batch (with the
/// job record `job`, `status` when `write_status`); once durable the job entry takes `job` and
/// `status`, and the pods join the job's gang (which starts over when it had no pod, or its
/// actor completed). A name another pod took is skipped, with a Warning event on the job. `then`
/// runs once done.
void make_missing_job_pods(self_ptr self, const std::string& key,
                           std::shared_ptr<const scheduler::job> job, scheduler::job_status status,
                           bool write_status, std::function<void(const phalanx::status&)> then);
/// Resumes suspended job `key` as `resumed` (its copy, not suspended; Volcano's ResumeJob from
/// Aborted): Restarting with a new version and one retry more, then the restart check its next
/// sync runs: Failed when that retry reached maxRetry (no pods made), else the new
/// incarnation's pods, written with the job. `then` runs once written.
void resume_job(self_ptr self, const std::string& key,
                std::shared_ptr<const scheduler::job> resumed,
                std::function<void(const phalanx::status&)> then);
/// A sync of the job asked from outside its events: a pod of a job whose tasks depend on others
/// ran or succeeded (dependsOn: the tasks waiting for it may start), or the job was created. It
/// waits for a step under way; a job that ended or is suspended is left alone.
void sync_job_pods(self_ptr self, const std::string& key);
/// Jobs one of whose pods went Running: those whose pods now run their minimum have their
/// Running phase persisted with its time and condition, in one write (registry_jobs.cpp).
void persist_own_starts(self_ptr self, std::span<const std::string> keys);
/// Deletes a job with its PodGroup and pods (the API's delete, and the collector of finished
/// jobs past their ttlSecondsAfterFinished); `reply` may be null. Dry run: the answer only.
void delete_job(self_ptr self, const std::string& key, bool dry_run, object_reply reply);
/// At a start: jobs stored Restarting (stopped between a step's two writes) finish the step, and
/// jobs that go on make the pods they miss (deleted before a stop, not yet made again).
void start_job_controller(self_ptr self);
/// A job's pods were made (its creation, a new incarnation): each pending one raises
/// PodPending, which a policy with a timeout acts on if the pod is still pending then.
void job_pods_made(self_ptr self, const std::string& key);

// Graceful deletion of pods in standalone mode (registry_termination.cpp; docs/NOTES.md
// "Graceful deletion").
/// Deletes pod `id` as kube-apiserver does: a pod that is bound and not finished, given a grace
/// period above 0 (the delete's, else its spec's terminationGracePeriodSeconds, else 30 s), is
/// marked terminating (deletionTimestamp: now + the grace period), durably, and keeps its room;
/// the simulated kubelet stops it and the registry then removes it (do_terminated). A second
/// delete may only shorten the grace period. Any other pod, or a grace period of 0 (`kubectl
/// delete --grace-period=0 --force`), is removed at once.
void delete_pod(self_ptr self, uint64_t id, const api::write_options& options,
                object_reply reply);
/// The simulated kubelet stopped these terminating pods: remove them.
void do_terminated(self_ptr self, const std::vector<uint64_t>& pods);
/// The world-meta key of a pod's terminating mark ("terminating/<ns>/<name>"), which holds its
/// uid, deadline, grace period and the mark's resource version.
std::string termination_key(const scheduler::pod& p);
/// At a start: the marks of pods still there (same uid) become terminating entries again, and
/// stale ones are erased. Standalone only.
void restore_terminations(self_ptr self, const std::map<std::string, std::string>& world_meta);
/// Tells the simulated kubelet of every terminating pod (after a restart).
void resume_terminations(self_ptr self);

// Preemption (registry_preemption.cpp).
/// Chooses victims for a gang that cannot be placed, among the bound pods of lower-priority
/// gangs of its queue (scheduler::plan_preemption), and answers `gang` with the offer.
void do_preempt(self_ptr self, preemption_ask ask, const gang_actor& gang);
/// Evicts a preemptor's victims: records them as leaving, with their events, and asks the world
/// port to evict them.
void do_evict(self_ptr self, eviction_order order);

// Kubernetes mode (registry_world.cpp): the apiserver's deltas enter the cache. The rest of
// what differs between the worlds is the world port's (actors/world_port.hpp).
void do_world_delta(self_ptr self, world_delta delta);

// Start-up (registry_restore.cpp).
void restore(self_ptr self, storage::loaded_state& loaded);
/// A restored gang with nothing to do (every pod bound or ended, nothing to place, no placeholder
/// its actor would make) starts parked, as its actor would soon be; true when it did.
bool restore_parked(self_ptr self, group_entry& g);
registry_snapshot snapshot(const registry_state& st);

template <class T>
void respond(const std::shared_ptr<T>& callback, auto&& value) {
  if (callback && *callback)
    (*callback)(std::forward<decltype(value)>(value));
}

} // namespace phalanx::actors::registry_detail
