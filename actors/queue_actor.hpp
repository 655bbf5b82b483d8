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
#include "scheduler/queue_book.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <array>
#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace phalanx::actors {

/// An annotation of the effective spec the registry gives a queue actor (refresh_queue_states),
/// never of a stored queue: why the queue admits nothing although its own state is Open (it has
/// child queues, or an ancestor is not Open), for the reason its waiting gangs give.
inline constexpr std::string_view effective_closed_reason_key = "phalanx.io/closed-because";

struct queue_actor_state {
  static inline const char* name = "phalanx.queue";

  /// What the actor keeps beside each gang of its book (scheduler/queue_book.hpp keeps the
  /// rest: the PodGroup, admission, what it holds, claims and asks for, and the order).
  struct gang_extra {
    gang_actor handle;
    bool sleeping = false;  // Its last slot failed for lack of room; woken when room appears.
    /// Where its pending pods (demand.pods) are counted in scheduler_pending_pods, and how many:
    /// the gauge moves by the difference when either changes (file_pending_pods).
    kube_pending_queue pending_in = kube_pending_queue::none;
    int64_t pending_pods = 0;
  };
  using book_type = scheduler::queue_book<pod_group_ptr, gang_extra>;
  using book_gang = book_type::gang;

  context_ptr ctx;
  queue_ptr spec;
  cluster_actor cluster;
  /// The queue's gangs in the order they wait in, and its sums (allocated, inqueue, demand).
  book_type book;
  /// The actor of each gang with a handle here, by address: the queue monitors it, and a gang
  /// whose current actor went down without being parked first is forgotten. An actor ended by
  /// the registry (its PodGroup deleted, or renewed under a new id) may have sent a last
  /// `waiting` or usage after the registry's removed_atom overtook it, which filed it again: its
  /// down message comes after all it sent, and ends that entry (which would otherwise be offered
  /// planning slots that no one answers).
  std::unordered_map<caf::actor_addr, uint64_t> gang_of_actor;
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
  scheduler::queue_order asleep;
  std::unordered_set<uint64_t> woken_for_order;
  bool admitting = false;
  /// Gangs told that the queue admits nothing now (it is not Open); cleared when its spec changes.
  std::unordered_set<uint64_t> told_not_open;
  /// Gangs told that the queue starts nothing now because it is overused; cleared when it
  /// starts something again (the gang then plans and says its own reason).
  std::unordered_set<uint64_t> told_overused;
  /// A gang began to wait for a slot since the held-back gangs were last told: only then are
  /// they walked again (a queue may hold thousands, and dispatch runs at every message).
  bool ready_grew = false;

  scheduler::resources deserved;
  bool deserved_known = false;
  /// Other queues' claims cut the deserved share (scheduler::share_cut_by_others): only then is
  /// the queue held back when it holds its share.
  bool share_cut = false;

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
