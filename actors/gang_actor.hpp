#pragma once

// The PodGroup actor (DESIGN.md section 4): coordinates one gang's placement with a two-phase
// commit across node actors.
//
// A round: plan with the pure planner against the cluster view -> one `reserve` per chosen node
// (preparing) -> every node voted `reserved` -> the registry makes the bindings durable in one
// atomic write (committing) -> `commit` to every node -> running. Any refusal aborts every hold of
// the round and replans at once (a bounded number of times), then backs off with jitter and
// reports why the gang is pending. Pods beyond the minimum (elastic members, executors a running
// driver creates) are placed in later rounds of a running gang when room exists.
//
// The actor is a thin shell: placement decisions come from scheduler::gang_planner, the legal
// moves from scheduler::gang_state_machine, vote counting from scheduler::vote_tally.

#include "actors/interfaces.hpp"
#include "actors/runtime_context.hpp"

#include "scheduler/gang_state.hpp"
#include "scheduler/planner.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace phalanx::actors {

struct gang_actor_state {
  static inline const char* name = "phalanx.gang";

  enum class member_status : uint8_t { pending, reserving, bound, finished };
  struct member {
    pod_ref ref;
    member_status status = member_status::pending;
    uint32_t node = 0;
    scheduler::pod_phase final_phase = scheduler::pod_phase::pending;  // When finished.
    /// Room held for a member not created yet (scheduler/placeholders.hpp). A released or
    /// taken-over placeholder is `finished`.
    bool placeholder = false;
    /// A bound placeholder that a swap under way hands to a pod.
    bool claimed = false;
    /// A pod in a swap under way: the member index of the placeholder it takes over.
    std::size_t takes_over = SIZE_MAX;
  };

  context_ptr ctx;
  uint64_t id = 0;
  pod_group_ptr group;
  queue_actor queue;
  gang_sink_actor sink;
  scheduler::gang_state_machine machine;

  std::vector<member> members;  // In arrival order: the planner's preference order.
  /// (pod id, index in `members`) of every member but placeholders, sorted by id: 16 bytes a
  /// member where a hash map took ~40, and a gang's actor lives as long as its PodGroup.
  std::vector<std::pair<uint64_t, uint32_t>> member_index;

  bool admitted = false;
  bool registered = false;      // A `waiting` entry is at the queue.
  bool members_joined = false;  // Pods joined since the last `waiting` entry (gang_entry says so).
  bool waiting_for_pods = false;// Backoff without a timer: fewer pods exist than minMember.
  bool admit_before_pods = false;  // gang_start::before_its_pods.

  // The current round.
  uint32_t round = 0;
  scheduler::vote_tally tally;
  std::unordered_map<uint32_t, std::vector<std::size_t>> round_members;  // node -> members.
  std::size_t commits_pending = 0;
  int32_t replans = 0;
  scheduler::ratio share;
  caf::actor_clock::time_point slot_granted{};

  /// A preemption under way: the plan that failed while the registry chooses victims, then the
  /// round that evicts them. Null otherwise: most gangs never preempt, and it is 240 bytes.
  struct preemption_state {
    std::optional<scheduler::plan_result> failed_plan;  // Reported if no victims are found.
    std::vector<std::size_t> failed_candidates;
    // The round: the nodes where it evicts, those that said their victims are gone, the
    // victims, whether the evictions were ordered (the round waits for `cleared`), and whether
    // they are other queues' (reclaim) rather than its own queue's.
    std::vector<uint32_t> victim_nodes;
    std::vector<uint32_t> cleared_nodes;
    std::vector<uint64_t> round_victims;
    bool evicting = false;
    bool reclaim = false;
  };
  std::unique_ptr<preemption_state> preemption;
  /// Asks sent to the registry (the last one's number), and whether this slot asked already.
  uint64_t preemption_asks = 0;
  bool asked_this_slot = false;
  /// The slot was given back before the round ended (a preemptor waiting for its victims).
  bool slot_finished = false;

  /// No starving gang (scheduler/room_reservation.hpp): when the gang's minimum first found no
  /// room (zero while it has not, and once it is ready), and the nodes it reserves after
  /// scheduling.starvationBound with the sentence its pending reason ends with. Null without a
  /// reservation, which most gangs never make.
  caf::actor_clock::time_point blocked_since{};
  struct reservation_state {
    std::vector<uint32_t> nodes;
    std::string reason;
  };
  std::unique_ptr<reservation_state> reservation;

  // The placeholder swap under way (one at a time): pods taking over placeholders, one `swap`
  // per node once their bindings are durable.
  bool swapping = false;
  scheduler::txn_id swap_txn;
  std::size_t swap_nodes_pending = 0;
  std::vector<std::size_t> swap_members;
  uint32_t next_placeholder = 0;

  // Backoff.
  uint64_t backoff_epoch = 0;
  std::chrono::milliseconds backoff{0};
  scheduler::rng random;

  /// Pod messages (pods, finished) had from the registry. A park request carries it, so the
  /// registry refuses a request that one of its messages overtook (docs/NOTES.md "Idle gangs are
  /// parked").
  uint64_t heard_from_registry = 0;

  // What the registry last heard, so unchanged reports are not repeated.
  std::string last_reason;
  scheduler::gang_phase last_reported = scheduler::gang_phase::failed;
  int32_t last_placeholders = 0;
};

/// How a gang's actor starts: for a new or restored PodGroup, or woken from parking. A new
/// PodGroup whose pods another controller makes once it is admitted (Volcano's job controller
/// waits for Inqueue) starts `before_its_pods`: it asks for admission with no pod.
enum class gang_start : uint8_t { fresh, woken, before_its_pods };

/// Spawn with: sys.spawn(gang_actor_impl, ctx, id, group, initial pods, queue, sink, start).
gang_actor::behavior_type gang_actor_impl(gang_actor::stateful_pointer<gang_actor_state> self,
                                          context_ptr ctx, uint64_t id, pod_group_ptr group,
                                          pod_refs pods, queue_actor queue, gang_sink_actor sink,
                                          gang_start start);

} // namespace phalanx::actors
