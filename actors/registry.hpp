#pragma once

// The registry: the one owner of the object catalog (nodes, queues, PodGroups, pods, jobs), the
// backend of the HTTP API's service interface, and the orderer of persistence. Every accepted
// change is written through the store writer and applied to the catalog only once durable, then
// announced to watchers and to the actors that schedule (DESIGN.md section 5: acknowledged means
// durable). It spawns the node, queue and PodGroup actors, computes the status Volcano shows, keeps
// events, and restores everything from the store at start.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"

#include "api/events.hpp"
#include "api/service.hpp"
#include "scheduler/id_index.hpp"
#include "scheduler/planner.hpp"
#include "storage/store.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace phalanx::actors {

namespace registry_detail {
class world_port;
}

/// The REGISTRY actor interface.
using registry_actor = gang_sink_actor::extend_with<status_sink_actor, persist_listener_actor,
                                                    deserved_listener_actor>::extend<
  // Create a decoded, validated object; answer with the stored object once durable (dry run:
  // with the object as it would be, storing nothing).
  caf::reacts_to<create_atom, api::object, bool, object_reply>,
  // Get one object (kind, namespace, name).
  caf::reacts_to<read_atom, api::resource_kind, std::string, std::string, object_reply>,
  // List objects of a kind.
  caf::reacts_to<list_atom, api::resource_kind, api::list_options, list_reply>,
  // Delete an object; answer with the object as it was, once durable (dry run: at once, with
  // nothing changed). A bound pod's delete with a grace period answers once the pod is marked
  // terminating; it goes when its containers have stopped.
  caf::reacts_to<delete_atom, api::resource_kind, std::string, std::string, api::write_options,
                 object_reply>,
  // Take a PUT's or PATCH's changes (api::service::update); answer once durable (dry run: with
  // the object as it would be, storing nothing).
  caf::reacts_to<update_atom, api::object, bool, object_reply>,
  // Apply an action (cordon, suspend, open, fail...) to an object.
  caf::reacts_to<act_atom, api::resource_kind, std::string, std::string, api::object_action,
                 object_reply>,
  // The events recorded about an object.
  caf::reacts_to<events_atom, api::resource_kind, std::string, std::string, events_reply>,
  // Every event kept, of every object (api::service::all_events).
  caf::reacts_to<all_events_atom, all_events_reply>,
  // The changes of the events after a version (api::service::event_changes).
  caf::reacts_to<event_changes_atom, uint64_t, event_changes_reply>,
  // Start watch `id` of a kind from a resource version.
  caf::reacts_to<watch_atom, uint64_t, api::resource_kind, api::list_options, uint64_t,
                 watch_sink_ptr>,
  // End watch `id`.
  caf::reacts_to<unwatch_atom, uint64_t>,
  // Internal: the parking sweep (docs/NOTES.md "Idle gangs are parked").
  caf::reacts_to<idle_atom>,
  // Internal: the next part of work split over several turns (run_later), by its cookie.
  caf::reacts_to<continue_atom, uint64_t>,
  // Kubernetes mode: a change the world saw (a watch event, or a whole list).
  caf::reacts_to<delta_atom, world_delta>,
  // Kubernetes mode: this process may bind now (it leads, or no election runs): gangs start.
  caf::reacts_to<lead_atom>,
  // Kubernetes mode: what became of the bindings the world posted.
  caf::reacts_to<outcome_atom, std::vector<binding_outcome>>,
  // Consistency facts, for tests and invariant checks.
  caf::replies_to<inspect_atom>::with<registry_snapshot>>;

struct registry_state {
  static inline const char* name = "phalanx.registry";

  registry_state();
  ~registry_state();  // Where world_port is complete.

  /// What changed of a pod in this run: its runtime state, and when its binding became durable.
  struct pod_change {
    scheduler::pod_runtime state;
    /// Its "Scheduled" event is made from this when events are read: one event per bound pod
    /// recorded as it happens cost a key, a message and a list per pod on the scheduling path
    /// (and is lost at a restart all the same). Zero for a pod not bound in this run.
    scheduler::timestamp bound_at{};
  };
  /// A pod in the catalog; its id is its key in `pods`. 32 bytes, so that the map's node (a
  /// next pointer and the key besides) is 48: one per pod (docs/NOTES.md, "Memory the daemon no
  /// longer keeps"). Why a pending pod is pending is its gang's `pods_reason`, or, in no gang, kept
  /// beside in `pending_reasons`.
  struct pod_entry {
    /// The pod as created or restored, shared with its gang's actor, the binder and the store
    /// writer. A binding or phase change does not copy it: its runtime fields keep the values
    /// it had then, and `changed` holds the current ones once there was a change. Read the
    /// current state through the accessors below.
    pod_ptr pod;
    /// Null while the pod's own runtime fields are current (every pod at restore, so a restored
    /// pod costs a pointer here rather than a second copy of its state).
    std::unique_ptr<pod_change> changed;
    /// 0: not scheduled by a gang (its group is missing, or not ours). The gang id and the six
    /// flags below share one word; a gang id is a counter, and 58 bits last 9,000 years at a
    /// million gangs a second.
    uint64_t gang : 58 = 0;
    uint64_t binding : 1 = false; // In a binding being made durable.
    uint64_t delete_requested : 1 = false;
    /// The simulation: the pod declares when it ends (a duration or a failure time). Read once
    /// from its annotations, which never change, rather than at every status of its gang.
    uint64_t declares_end : 1 = false;
    /// A pod its job made at creation, stored as its job (storage/README.md): no record of its
    /// own, so deleting it writes a tombstone under its key rather than erasing the key.
    uint64_t stored_as_job : 1 = false;
    /// A pod its job's controller made again (a sync) while the job's other pods are stored as
    /// its job: it has a record, under a key the job's expansion also makes. Deleting it erases
    /// the record and writes a tombstone, or the expansion would bring it back at the next start.
    uint64_t made_again_over_expansion : 1 = false;
    /// A phase change or restart of it (do_pod_status) is on its way to the store, not applied
    /// yet: its next update waits for it, or a Succeeded that follows its Running within a
    /// write would be built on Pending (its start time taken from its end).
    uint64_t status_writing : 1 = false;

    scheduler::pod_phase phase() const noexcept {
      return changed ? changed->state.phase : pod->phase;
    }
    uint16_t restart_count() const noexcept {
      return changed ? changed->state.restart_count : pod->restart_count;
    }
    bool is_bound() const noexcept { return !node_name().empty(); }
    const scheduler::shared_string& node_name() const noexcept {
      return changed ? changed->state.node_name : pod->node_name;
    }
    scheduler::pod_runtime state() const {
      return changed ? changed->state : scheduler::runtime_of(*pod);
    }
    void set_state(scheduler::pod_runtime s) {
      if (changed)
        changed->state = std::move(s);
      else
        changed = std::make_unique<pod_change>(pod_change{std::move(s)});
    }
    scheduler::timestamp bound_at() const noexcept {
      return changed ? changed->bound_at : scheduler::timestamp{};
    }
  };
  static_assert(sizeof(pod_entry) <= 32, "a pod's entry outgrew its 48-byte map node");
  using pod_map = std::unordered_map<uint64_t, pod_entry>;
  /// An entry of `pods`: its id and the entry.
  using pod_slot = pod_map::value_type;
  /// A pod's key in `pod_ids`: its namespace and name.
  using pod_name = std::pair<std::string_view, std::string_view>;
  /// Hashes and equality of `pod_ids` (scheduler/id_index.hpp): an id stands for the names of
  /// its pod in `pods`, where the index reads them. A pod leaves pod_ids before it leaves pods.
  struct pod_name_ops {
    const pod_map* pods = nullptr;
    std::size_t hash(const pod_name& key) const noexcept;
    std::size_t hash_of(uint64_t id) const;
    bool matches(const pod_name& key, uint64_t id) const;
  };
  struct group_entry {
    uint64_t gang = 0;
    scheduler::shared_string key; // "<ns>/<name>"
    pod_group_ptr group;
    gang_actor actor;
    scheduler::shared_string job_key; // The job that owns it, if any.
    std::vector<uint64_t> pods;
    gang_report last_report;
    /// Why its pending pods wait: the reason of its gang's latest report (or the missing
    /// queue); empty while it gives none. A pod in a gang has no reason of its own
    /// (pending_reason reads this one): a copy per pod cost a map entry for every pod that
    /// joined a waiting gang, on the path of a burst.
    scheduler::shared_string pods_reason;
    scheduler::shared_string stall_message; // Set while the simulation reports a deadlock.
    /// What watchers last saw of its status: the phase, and a digest of what the status is
    /// made of (mark_emitted; group_changed finds a change without building the status).
    scheduler::pod_group_phase emitted_phase = scheduler::pod_group_phase::pending;
    // The flags beside the phase, in the word it starts.
    bool implicit = false;    // Made for a pod without a PodGroup; not persisted.
    /// Its job has tasks that wait for others (dependsOn): a pod of it that runs or succeeds
    /// makes the job sync. Kept here so that a pod's status change asks no job.
    bool job_waits_on_tasks = false;
    bool removed = false;
    /// Its actor was ended while idle (docs/NOTES.md "Idle gangs are parked"); `actor` is null
    /// and tell_gang starts a new one when a pod of the gang changes.
    bool parked = false;
    uint64_t emitted_digest = 0;  // With emitted_phase, what watchers last saw.
    /// Pod messages sent to the current actor: a park request must have heard them all.
    uint64_t sent_to_actor = 0;
    /// When the registry last heard from or told its actor anything (a report, a pod message,
    /// its start); the parking sweep asks gangs quiet for long enough.
    caf::actor_clock::time_point last_active{};
  };
  // With its id and next pointer a map node of 192 bytes, jemalloc's class of that size; the
  // texts are shared_strings (a report's are empty while the gang runs) for that: four
  // std::strings and a report's three made it 336 bytes, a 384-byte slot.
  static_assert(sizeof(group_entry) <= 176);
  using group_map = std::unordered_map<uint64_t, group_entry>;
  /// Hashes and equality of `group_ids`: a gang stands for its entry's key, "<ns>/<name>", in
  /// `groups`. A gang leaves group_ids before it leaves groups.
  struct group_key_ops {
    const group_map* groups = nullptr;
    std::size_t hash(std::string_view key) const noexcept;
    std::size_t hash_of(uint64_t gang) const;
    bool matches(std::string_view key, uint64_t gang) const;
  };
  struct node_entry {
    uint32_t index = 0;
    /// Its name (meta.name) is the block every pod bound here shares as its node_name.
    node_ptr node;
    node_actor actor;
    scheduler::resources allocated;
    int32_t pod_count = 0;
    bool live = true;
  };
  struct queue_entry {
    queue_ptr queue;
    queue_actor actor;
    /// Its PodGroup counts' series (volcano_queue_pod_group_<phase>_count by phase, and
    /// phalanx_queue_pending_gangs), bound by bind_queue_series; the registry is their only
    /// writer, and removes them with the queue.
    std::array<api::gauge*, 5> pod_groups_by_phase{};
    api::gauge* pending_gangs = nullptr;
    scheduler::resources deserved;
    /// The spec its actor was last given: `queue`, or a copy marked Closed while the queue tree
    /// keeps it from taking work (refresh_queue_states).
    queue_ptr effective{};
  };
  struct job_entry {
    std::shared_ptr<const scheduler::job> job;
    scheduler::job_status status;
    std::string group_key;
    /// While its pods are its creation-time expansion (scheduler::pods_are_expansion): the id
    /// of the expansion's first pod, the pod at position k having id first_pod + k (a pod
    /// deleted on its own leaves its id unused). 0 otherwise: its pods are in pod_ids.
    uint64_t first_pod = 0;
    /// The job controller has a step under way (registry_jobs.cpp): events wait for it.
    bool acting = false;
    /// The step is only the write of a phase the job reached on its own (its Running, its
    /// end): a user's update waits the few milliseconds for it instead of being refused.
    bool writing_own_phase = false;
    /// Its deletion was asked for: the controller takes no step any more.
    bool deleting = false;
    /// Events that came while a step was under way, acted on in order once it ends (as
    /// Volcano's controller takes a job's events one at a time from its queue).
    std::vector<std::function<void()>> waiting{};
  };
  /// The pods of one task of such a job: "<job>-<task>-<i>" for i < replicas.
  struct job_task_pods {
    std::string job_key;
    uint32_t first = 0;     // The position of the task's first pod in the job's expansion.
    int32_t replicas = 0;
  };
  struct watcher {
    uint64_t id = 0;
    api::resource_kind kind;
    api::list_options options;
    watch_sink_ptr sink;
  };

  /// The scheduling side's state (DESIGN.md 4a, the scheduler cache): the gangs, nodes and
  /// queues the scheduling actors work with, what waits for them, and preemption's victims. Both
  /// worlds fill it through the same functions (add_node, change_group, remove_queue_entry...);
  /// the standalone catalog's objects and the Kubernetes world's deltas are what feed them. The
  /// pods are the catalog's (`pods`), which both sides read: a pod's entry names its gang.
  struct scheduling_cache {
    uint64_t next_gang = 1;
    int64_t parked_gangs = 0;  // Groups whose actor is parked (the gauge phalanx_parked_gangs).
    bool park_sweep_armed = false;
    /// Why a pending pod in no gang is pending (its PodScheduled=False message): not ours, gated,
    /// or waiting for its PodGroup. A pod in a gang reads its gang's `pods_reason` instead. Set
    /// and read through set_pending_reason and pending_reason (registry_internal.hpp).
    std::unordered_map<uint64_t, scheduler::shared_string> pending_reasons;
    group_map groups;
    /// "<ns>/<name>" -> gang, the key's text being the gang's entry's (a map from a copy of the
    /// text cost about 75 bytes per PodGroup).
    scheduler::id_index<std::string_view, group_key_ops> group_ids{group_key_ops{&groups}};
    /// Queue name -> the gangs of its PodGroups, so a queue's status walks its own groups only
    /// (a list of Q queues was Q walks of every group). Kept by index_group and unindex_group.
    std::unordered_map<std::string, std::unordered_set<uint64_t>> gangs_by_queue;
    /// Queue name -> its indexed PodGroups by the phase watchers last saw (emitted_phase), in the
    /// order of scheduler::pod_group_phase: the queue's status counts, kept as phases change
    /// (count_phase) so that its metrics move with each change instead of a recount.
    std::unordered_map<std::string, std::array<int64_t, 5>> phases_by_queue;
    std::unordered_map<std::string, std::vector<uint64_t>> orphans;  // Missing group -> pods.
    std::map<std::string, node_entry, std::less<>> nodes;            // Found by any string type.
    /// By view index: the live node in that slot of the cluster view, or null. Bindings name
    /// nodes by index; the entries are the map's own (they stay put as it changes).
    std::vector<node_entry*> node_at;
    std::map<std::string, queue_entry> queues;
    /// Gangs are planned (the world's plans_from_start, else from its lead); before that (a
    /// standby, or caches not synced) the cache is kept warm and nothing is planned.
    bool scheduling = true;
    /// Preemption (registry_preemption.cpp): the planner that chooses victims, made at the first
    /// ask, and the pods whose eviction the world was asked for (they stay in the cache until the
    /// world removes them, and are not chosen twice meanwhile).
    std::unique_ptr<scheduler::gang_planner> preemption_planner;
    std::unordered_set<uint64_t> evicting;
    /// Victims offered to a preemptor whose round is not through yet (pod -> the preemptor's gang
    /// and when): not offered to another, and not counted in their gangs' ready pods, so that two
    /// preemptors choosing at once cannot take a victim gang below its minMember between them.
    /// Ended by the eviction order, by the preemptor's next ask, or after offer_lifetime.
    struct offered_victim {
      uint64_t preemptor = 0;
      caf::actor_clock::time_point at{};
    };
    std::unordered_map<uint64_t, offered_victim> offered;
  };
  scheduling_cache cache;

  context_ptr ctx;
  std::shared_ptr<std::atomic<bool>> ready;
  store_writer_actor writer;
  binder_actor binder;
  cluster_actor cluster;

  uint64_t next_pod = 1;
  uint64_t next_cookie = 1;
  uint64_t resource_version = 0;
  scheduler::rng random;

  pod_map pods;
  /// The ids of the pods in `pods`, found by namespace and name (pod_id_of): 11-16 bytes per
  /// pod, where a node-based set of ids cost 31 and a map from the name's text 64 and most often
  /// a heap block for the text. Not the pods a job made at its creation: those are found through
  /// job_tasks. A pod whose creation is on its way to the store has its name in reserved_names
  /// instead.
  scheduler::id_index<pod_name, pod_name_ops> pod_ids{pod_name_ops{&pods}};
  /// "<ns>/<job>-<task>" -> that task's pods, for every job whose pods are its creation-time
  /// expansion, from the moment its creation is accepted until it is deleted or suspended. A
  /// job pod's name is taken through its task, one entry per task instead of one per pod, and
  /// it stays taken after that pod alone is deleted (storage/README.md).
  std::unordered_map<std::string, job_task_pods> job_tasks;
  std::map<std::string, job_entry, std::less<>> jobs; // Found by any string type.
  /// The names of creations not yet durable, by kind (reserve_pod_name for pods).
  std::unordered_set<std::string> reserved_names[api::resource_kind_count];
  /// The names pods created one at a time (through the API, by a simulated spawner) share with
  /// the other pods of their group: share_pod_names. A job's pods share them already.
  scheduler::shared_string_pool pod_names;

  /// Changes through the API on their way to the store, by "<kind>/<key>"
  /// (registry_detail::persist_change).
  std::unordered_set<std::string> changing;
  /// Writes of pods' runtime states on their way to the store (bindings, phase changes), in the
  /// order they were sent (the store writer answers in that order): each one's ticket and the
  /// pods it carries (registry_detail::persist_state). A pod's record written whole (a relabel)
  /// waits until none carries the pod; written meanwhile, it would carry an older state and win
  /// over theirs at the next start.
  std::deque<std::pair<uint64_t, std::vector<uint64_t>>> state_writes;
  uint64_t next_state_write = 1;
  /// Work waiting for the state writes on their way when it came (after_state_writes_in_flight),
  /// by the ticket of the last of them: run when that write ends, not at every write's end
  /// (thousands of pods changing twice within a write each scanned every write, at every end).
  std::unordered_map<uint64_t, std::vector<std::function<void()>>> after_state_write;
  /// Pod status updates waiting for their pod's last change to be durable (do_pod_status),
  /// taken up again together, as one write, once the writes on their way have ended.
  std::vector<pod_status_update> status_waiting;
  std::unordered_map<uint64_t, std::function<void(const status&)>> in_flight;
  /// Deletions waiting for a pod whose deletion was already under way (delete_pods), by pod id:
  /// called once that pod is removed (or its deletion failed).
  std::unordered_map<uint64_t, std::vector<std::function<void(const status&)>>> removal_waiters;
  /// Work continued after the messages waiting now (run_later), by cookie.
  std::unordered_map<uint64_t, std::function<void()>> continuations;
  /// The world this registry's scheduling side runs in (actors/world_port.hpp): standalone, or
  /// Kubernetes, where the apiserver is the truth and the store a checkpoint.
  std::unique_ptr<registry_detail::world_port> world;
  /// Pods being deleted gracefully (registry_termination.cpp), by id: the mark asked for last
  /// (on its way to the store or durable) and the durable one, which views show
  /// (metadata.deletionTimestamp); each with the resource version it was written with.
  struct terminating_pod {
    scheduler::pod_termination latest;
    uint64_t latest_version = 0;
    std::optional<scheduler::pod_termination> shown;
    uint64_t shown_version = 0;
  };
  std::unordered_map<uint64_t, terminating_pod> terminating;
  /// The PriorityClasses (scheduling.k8s.io/v1), by name: served in standalone mode, where
  /// objects take their priority from them at creation (resolve_priority); the cluster's in
  /// Kubernetes mode, once watched (priority_classes_watched; until then PodGroups resolve from
  /// the configuration's priorityClasses).
  std::map<std::string, std::shared_ptr<const scheduler::priority_class>, std::less<>>
      priority_classes;
  bool priority_classes_watched = false;
  /// A class whose write making it the global default (a create or an update) is on its way to
  /// the store, or empty: no other may become the default meanwhile.
  std::string default_class_on_its_way;
  /// Resource versions are handed out up to a ceiling made durable ahead of them (next_version):
  /// the ceiling last asked of the store, and the largest one the store confirmed.
  uint64_t version_ceiling = 0;
  uint64_t durable_version_ceiling = 0;

  std::vector<watcher> watchers;
  /// The changes of the watched kinds, newest last, at most config.watch_history of them.
  std::deque<std::pair<uint64_t, api::watch_event>> history;  // (resource version, event)
  /// The version of the newest change the history dropped for its size (0: none): a list
  /// continued from a first page older than it could not be replayed by a watch (api
  /// list_page::first_version).
  uint64_t history_dropped_through = 0;
  std::array<bool, api::resource_kind_count> watched{};       // Any watcher per kind.

  /// An event as kept: `scheduler::event` with its texts shared through `event_texts`, 48
  /// bytes where the event's three strings take 120 and a heap block for a long message. Every
  /// PodGroup has one or two, and most texts recur across objects (a few reasons and types; a
  /// message per gang size and shape of shortage); docs/NOTES.md "Memory the daemon no longer
  /// keeps".
  struct kept_event {
    scheduler::shared_string type;
    scheduler::shared_string reason;
    scheduler::shared_string message;
    int32_t count = 1;
    scheduler::timestamp first_time{};
    scheduler::timestamp last_time{};
  };
  static_assert(sizeof(kept_event) <= 48, "a kept event outgrew its 48 bytes");
  // "<Kind>/<namespace>/<name>" -> its last events, oldest first (a few: a vector, not a deque,
  // whose first block alone is 512 bytes per object).
  std::unordered_map<std::string, std::vector<kept_event>> events;
  scheduler::shared_string_pool event_texts;
  // The keys of `events`, oldest first, to bound memory. Pointers to the map's own keys, which
  // stay put when the map rehashes.
  std::deque<const std::string*> event_order;
  /// The changes of the events, for watches of events (actors/registry_events.cpp): kept while
  /// events are watched or were listed lately.
  api::event_journal event_journal;
  /// When events were last listed or their changes read.
  scheduler::timestamp events_last_read{};
  /// The FailedScheduling events of the pending pods of each PodGroup (by key: a gang renewed
  /// keeps it) as the journal last heard of them, while it keeps changes: what the next look at
  /// the PodGroup compares with.
  std::unordered_map<std::string, std::vector<api::object_event>> failed_scheduling_published;
  /// PodGroups whose pods' FailedScheduling may have changed since the journal last heard, and
  /// whether the look at them is queued.
  std::unordered_set<std::string> groups_with_event_changes;
  bool events_flush_queued = false;
};

/// Spawn with: sys.spawn(registry_impl, ctx, ready, loaded, writer, binder, cluster).
registry_actor::behavior_type
registry_impl(registry_actor::stateful_pointer<registry_state> self, context_ptr ctx,
              std::shared_ptr<std::atomic<bool>> ready, loaded_state_ptr loaded,
              store_writer_actor writer, binder_actor binder, cluster_actor cluster);

} // namespace phalanx::actors

