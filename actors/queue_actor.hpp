#pragma once

// The queue actor (DESIGN.md section 4): one Volcano queue's pending gangs in order (priority,
// creation time, uid), the enqueue gate (through the cluster actor, which owns the cluster-wide
// overcommit ledger), a bounded number of gangs planning at once, and the queue's allocated and
// inqueue accounting.
//
// Admission and planning are separate steps, as in Volcano's enqueue and allocate actions: a gang
// refused by the gate does not block the ones behind it, and only admitted gangs get planning
// slots. A queue that is Closed admits and plans nothing; a queue whose allocation reached its
// deserved share (overused) plans nothing new until it drops or other queues stop asking.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <array>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace phalanx::actors {

/// An annotation of the effective spec the registry gives a queue actor (refresh_queue_states),
/// never of a stored queue: why the queue admits nothing although its own state is Open (it has
/// child queues, or an ancestor is not Open), for the reason its waiting gangs give.
inline constexpr std::string_view effective_closed_reason_key = "phalanx.io/closed-because";

struct queue_actor_state {
  static inline const char* name = "phalanx.queue";

  struct gang_book {
    pod_group_ptr group;
    gang_actor handle;
    bool admitted = false;
    bool sleeping = false;      // Its last slot failed for lack of room; woken when room appears.
    /// Its last plan found that no node could ever hold a member, and it holds nothing: it gave
    /// its admission back and is not admitted again until the nodes change (capacity_atom).
    bool unresolvable = false;
    scheduler::resources allocated;
    /// It held its minMember pods since it was admitted (Volcano's PodGroup went Running): from
    /// then on it claims nothing at the gate while it holds fewer (scheduler::gate_claim).
    bool started = false;
    // Its claim on the queue's inqueue sum (scheduler::gate_claim while admitted) is not kept:
    // claim_of() derives it, and each change of what it derives from moves the sum from the
    // value before to the value after (a 56-byte copy per gang less).
    scheduler::resources demand;
    /// Where its pending pods (demand.pods) are counted in scheduler_pending_pods, and how many:
    /// the gauge moves by the difference when either changes (file_pending_pods).
    kube_pending_queue pending_in = kube_pending_queue::none;
    int64_t pending_pods = 0;
    /// It runs its minimum: it waits for an elastic round (gang_entry::ready).
    bool ready = false;
  };

  /// Gang order key: gangs short of their minimum before elastic rounds (Volcano's gang order),
  /// then the PodGroup's order (kept alive by its book), then its id.
  struct order_key {
    const scheduler::pod_group* group;
    uint64_t gang;
    bool elastic = false;
  };
  static order_key key_of(const gang_book& b, uint64_t gang) {
    return {b.group.get(), gang, b.ready};
  }
  struct order_less {
    bool operator()(const order_key& a, const order_key& b) const noexcept;
  };

  context_ptr ctx;
  queue_ptr spec;
  cluster_actor cluster;
  std::unordered_map<uint64_t, gang_book> gangs;
  /// The actor of each gang with a handle here, by address: the queue monitors it, and a gang
  /// whose current actor went down without being parked first is forgotten. An actor ended by
  /// the registry (its PodGroup deleted, or renewed under a new id) may have sent a last
  /// `waiting` or usage after the registry's removed_atom overtook it, which filed it again: its
  /// down message comes after all it sent, and ends that entry (which would otherwise be offered
  /// planning slots that no one answers).
  std::unordered_map<caf::actor_addr, uint64_t> gang_of_actor;
  std::set<order_key, order_less> to_admit;  // Waiting for the gate.
  std::set<order_key, order_less> ready;     // Admitted, waiting for a planning slot.
  /// Gangs holding a planning slot, and when it was granted (the attempt's duration).
  std::unordered_map<uint64_t, caf::actor_clock::time_point> planning;
  std::unordered_set<uint64_t> refused_since_wake;
  /// Gangs woken by wake_atom that have not answered yet (waiting_atom or woken_atom): admission
  /// and slots wait for them, so that they compete in the queue's order (priority first) rather
  /// than in the order their answers happen to arrive from two threads.
  std::unordered_set<uint64_t> waking;
  /// Gangs asleep (their last slot failed for lack of room) that a gang behind them in the order
  /// may still wake: before a slot goes to a gang, those ahead of it are woken and plan first,
  /// since room may have freed up that the cluster has not announced yet (Volcano considers every
  /// job in order at each session). A gang woken so is not woken so again until a slot went to
  /// a gang behind it or the next wake_atom (`woken_for_order`): each gang that asks for a slot
  /// wakes those ahead of it at most once.
  std::set<order_key, order_less> asleep;
  std::unordered_set<uint64_t> woken_for_order;
  bool admitting = false;
  /// Gangs told that the queue admits nothing now (it is not Open); cleared when its spec changes.
  std::unordered_set<uint64_t> told_not_open;
  /// Gangs told that the queue starts nothing now because it is overused; cleared when it
  /// starts something again (the gang then plans and says its own reason).
  std::unordered_set<uint64_t> told_overused;
  /// A gang entered `ready` since the held-back gangs were last told: only then are they walked
  /// again (a queue may hold thousands, and dispatch runs at every message).
  bool ready_grew = false;

  scheduler::resources allocated;
  scheduler::resources inqueue;
  scheduler::resources deserved;
  bool deserved_known = false;
  /// Other queues' claims cut the deserved share (scheduler::share_cut_by_others): only then is
  /// the queue held back when it holds its share.
  bool share_cut = false;
  /// The sum of every gang's demand, kept as demands change: reporting usage after each message
  /// must not walk every gang of the queue.
  scheduler::resources demand;

  /// One amount of the queue (allocated, deserved, request, inqueue) as series of each unit
  /// set (runtime_metrics.hpp), looked up once: a label lookup takes the registry's mutex. Shared:
  /// the registry removes the queue's series when the queue is deleted, maybe while this actor
  /// still records.
  struct amount_series {
    // Phalanx's own families; null for the amounts only Volcano's names show.
    std::shared_ptr<api::gauge> cpu_cores, memory_bytes, ephemeral_storage_bytes, pods;
    std::shared_ptr<api::gauge> milli_cpu, volcano_memory_bytes, volcano_pods, volcano_ephemeral;
    /// Extended resources (nvidia.com/gpu, ...), found once each as they first appear: in their
    /// base unit (Phalanx's, null where Phalanx has none) and in thousandths (Volcano's).
    struct extended_series {
      scheduler::resource_name name;
      std::shared_ptr<api::gauge> base, milli;
    };
    std::vector<extended_series> extended;
  };
  struct queue_series {
    amount_series allocated, deserved, request, inqueue;
    std::shared_ptr<api::gauge> share, weight, overused;
    bool bound = false;
    bool share_stale = true;  // Allocated or deserved changed since the share was published.
  };
  queue_series series;

  /// What this queue adds to scheduler_pending_pods (not labelled by queue: every queue actor
  /// adds to the same series); taken back when the actor ends.
  struct pending_pod_tally {
    std::array<api::gauge*, 5> gauges{};  // By kube_pending_queue; none has none.
    std::array<int64_t, 5> pods{};
    void move(kube_pending_queue from, int64_t from_pods, kube_pending_queue to, int64_t to_pods);
    pending_pod_tally() = default;
    pending_pod_tally(const pending_pod_tally&) = delete;
    pending_pod_tally& operator=(const pending_pod_tally&) = delete;
    ~pending_pod_tally();
  };
  pending_pod_tally pending_pods;

  /// Scheduling attempts' series (scheduler_*, volcano_*), by attempt_result.
  struct attempt_series {
    std::array<api::counter*, 3> count{};
    std::array<api::histogram*, 3> seconds{};
    std::array<api::counter*, 3> volcano_count{};
    api::histogram* volcano_milliseconds = nullptr;
  };
  attempt_series attempts;
};

/// Spawn with: sys.spawn(queue_actor_impl, ctx, spec, cluster).
queue_actor::behavior_type queue_actor_impl(queue_actor::stateful_pointer<queue_actor_state> self,
                                            context_ptr ctx, queue_ptr spec,
                                            cluster_actor cluster);

} // namespace phalanx::actors
