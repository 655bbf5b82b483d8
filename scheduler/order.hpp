#pragma once

// The orders of the scheduling core (DESIGN.md sections 1, 4 and 7):
// - gang order within a queue: priority descending, the sla-waiting-time deadline, creation time
//   ascending, uid ascending (Volcano's priority and sla plugins, then its default job order);
// - queue order: priority descending, then the lowest share allocated / deserved (Volcano's
//   proportion plugin), then name;
// - the conflict ticket of the two-phase gang commit: (queue share, priority descending,
//   creation time, uid), lower is older; an older gang wins a node conflict (wait-die).
//
// Pure functions over values; thread-safe.

#include "scheduler/fair_share.hpp"
#include "scheduler/model.hpp"

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

// ---------------------------------------------------------------------------------------------
// Gang order

/// Priority descending, then the sla-waiting-time deadline (scheduler/sla.hpp: gangs with one
/// first, the earliest first), then creation time ascending, then uid ascending. `less` means
/// "goes first". Two gangs compare equal only when all three are equal (the same gang, in practice).
std::strong_ordering compare_gangs(const pod_group& a, const pod_group& b) noexcept;

/// compare_gangs(a, b) < 0: a strict weak order for std::sort.
inline bool gang_before(const pod_group& a, const pod_group& b) noexcept {
  return compare_gangs(a, b) < 0;
}

// ---------------------------------------------------------------------------------------------
// Conflict ticket

/// Queue shares in tickets are quantized down to steps of 1/ticket_share_steps (whole percent)
/// and capped at ticket_share_max_steps (10 times the deserved share). Why: a queue's share moves
/// a little with every gang that commits or finishes; with exact shares two gangs of queues at
/// nearly the same share would swap ages from one round to the next, and a gang refused as
/// "younger" in one round could be "older" in the next for no real reason. Whole-percent steps
/// keep such gangs ordered by priority and age, which do not move.
inline constexpr int64_t ticket_share_steps = 100;
inline constexpr int32_t ticket_share_max_steps = 1000;

/// floor(share * ticket_share_steps), clamped to [0, ticket_share_max_steps].
int32_t quantize_share(ratio share) noexcept;

/// The global order of gangs for conflicts (DESIGN.md section 1). Lower is older and wins.
///
/// A gang takes a ticket when a reserve round starts (make_ticket) and carries that value in every
/// reserve of the round, however the queue share moves meanwhile: the wait-die argument (waits
/// only for younger gangs, so no cycle) needs one fixed order within a round. Across rounds,
/// keeping the first round's ticket until the gang commits is what makes wait-die starvation-free
/// (a refused gang only grows older relative to newcomers); a fresh ticket per round keeps the
/// share current instead. The whole-percent quantization makes the two agree unless the queue's
/// share crossed a step between rounds.
struct ticket {
  /// The gang's queue share when the round started, quantized (see quantize_share). A gang of an
  /// under-served queue is older.
  int32_t share_steps = 0;
  /// Higher priority is older.
  int32_t priority = 0;
  /// Earlier creation is older.
  timestamp creation_time{};
  /// Final tie-break; unique per gang. Its PodGroup's.
  object_uid uid;

  /// share ascending, priority descending, creation ascending, uid ascending.
  friend std::strong_ordering operator<=>(const ticket& a, const ticket& b) noexcept;
  friend bool operator==(const ticket& a, const ticket& b) noexcept {
    return (a <=> b) == std::strong_ordering::equal;
  }

  /// "share 0.25, priority 10, created 1700000000.000000000, uid 1234" for messages.
  std::string to_string() const;
};

/// The ticket of `group` whose queue has share `queue_share` now.
ticket make_ticket(const pod_group& group, ratio queue_share);

/// True when `a` is older than `b` (a < b): `a` wins a conflict with `b`.
inline bool is_older(const ticket& a, const ticket& b) noexcept { return a < b; }

// ---------------------------------------------------------------------------------------------
// Queue order

/// A queue's place in the queue order, for engines that keep the share themselves (the
/// simulation moves it as gangs start): priority descending, then the share ascending, then
/// the name ascending. Lower goes first.
struct queue_rank {
  int32_t priority = 0;
  /// queue_share(allocated, deserved), or with what admitted gangs claim counted as allocated
  /// (the enqueue order, so admissions interleave by weight).
  ratio share;
  std::string_view name;

  friend std::strong_ordering operator<=>(const queue_rank& a, const queue_rank& b) noexcept;
  friend bool operator==(const queue_rank& a, const queue_rank& b) noexcept {
    return (a <=> b) == std::strong_ordering::equal;
  }
};

/// A queue as the order sees it.
struct queue_standing {
  std::string name;
  int32_t priority = 0;
  /// Requests of the queue's pods that hold resources.
  resources allocated;
  /// From compute_deserved.
  resources deserved;
};

/// Priority descending, then queue_share(allocated, deserved) ascending, then name ascending.
std::strong_ordering compare_queues(const queue_standing& a, const queue_standing& b);

/// Sorts `queues` into scheduling order (compare_queues).
void sort_queues(std::vector<queue_standing>& queues);

} // namespace phalanx::scheduler
