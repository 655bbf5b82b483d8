#pragma once

// The PodGroup coordinator's state machine (DESIGN.md section 4), in the style of Ray's placement
// group scheduler: every state is named and documented, and the state changes only through
// `transition`, which refuses illegal moves.
//
//   pending -> inqueue -> planning -> preparing -> committing -> running -> completed
//                 ^          |            |                        |
//                 |          v            v                        v
//                 +------ backoff <-------+             planning (elastic round for pods
//                                                        beyond the minimum, or pods added later)
//
// A running gang that gets more pods (elastic members, executors a driver creates) plans them in
// another round: running -> planning -> preparing -> committing -> running, and a failed elastic
// round goes back to running rather than to backoff's pending world (the gang stays ready).

#include "scheduler/node_ledger.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

enum class gang_phase {
  /// Waiting for admission by the enqueue gate (minResources, queue state and capability).
  pending,
  /// Admitted; waiting for a planning slot of its queue.
  inqueue,
  /// Choosing nodes with the planner against the cluster view.
  planning,
  /// The first phase of the two-phase commit: `reserve` sent to each chosen node; collecting votes.
  preparing,
  /// Every node voted `reserved`; the bindings are being made durable, then `commit` goes to every
  /// node.
  committing,
  /// At least the minimum of pods are bound; pods run.
  running,
  /// Every pod finished.
  completed,
  /// The last attempt failed (unschedulable, or refused too often); waiting before retrying.
  backoff,
  /// The gang cannot run and will not be retried (deleted mid-flight, or its job failed).
  failed,
};
std::string_view to_string(gang_phase p) noexcept;  // "pending", "inqueue", ...
inline constexpr gang_phase gang_phase_last = gang_phase::failed;

/// True when the state machine allows `from -> to`.
bool is_legal_transition(gang_phase from, gang_phase to) noexcept;

/// Holds the phase; the only way to change it is `transition`.
class gang_state_machine {
 public:
  gang_phase phase() const noexcept { return phase_; }
  /// Whether the gang reached its minimum at least once (so failed elastic rounds return to
  /// running instead of backoff).
  bool was_ready() const noexcept { return was_ready_; }

  /// Moves to `to`; an illegal move returns errc::internal and changes nothing.
  status transition(gang_phase to);

  /// Restart only: a pending gang whose bindings were persisted resumes as running.
  status restore_running();

 private:
  gang_phase phase_ = gang_phase::pending;
  bool was_ready_ = false;
};

/// Tallies the votes of one reserve round: one per node.
class vote_tally {
 public:
  vote_tally() = default;
  /// Starts a round expecting one vote from each of `nodes`.
  void start(txn_id txn, std::vector<uint32_t> nodes);

  const txn_id& txn() const noexcept { return txn_; }
  const std::vector<uint32_t>& nodes() const noexcept { return nodes_; }

  enum class result_kind { pending, all_reserved, refused };
  /// Records a vote; duplicate or unknown votes are ignored. `waiting` votes leave the node
  /// undecided.
  result_kind record(uint32_t node, vote_kind vote);
  result_kind state() const noexcept;

  /// Nodes that refused, and whether any refusal was `refused_insufficient`.
  const std::vector<uint32_t>& refused_nodes() const noexcept { return refused_; }
  bool any_insufficient() const noexcept { return any_insufficient_; }

 private:
  txn_id txn_{};
  std::vector<uint32_t> nodes_;    // Sorted.
  std::vector<uint8_t> decided_;   // Per node in nodes_: 0 undecided, 1 reserved, 2 refused.
  std::vector<uint32_t> refused_;
  std::size_t reserved_count_ = 0;
  bool any_insufficient_ = false;
};

} // namespace phalanx::scheduler
