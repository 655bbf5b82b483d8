#pragma once

// The gang book (issue 28 section 1): what a gang holds toward its minimum, and the rules of
// that minimum. It is the one place where minMember and minTaskMember decide anything about a
// gang's placement:
// - whether the gang runs its minimum (Volcano's gang plugin: JobReady);
// - what a planning round must still place (the planner's min_pods and min_per_role);
// - how many pods it lacks;
// - what an eviction may take of it (Volcano's gang rule for preemption and reclaim).
//
// Both engines keep one: the gang actor counts its members into a book when it decides, and the
// trace simulation keeps a book per job as its pods are placed and evicted. What counts as ready
// is theirs to say (a bound or succeeded pod, a bound placeholder); what follows from the counts
// is said here, so `phalanx-loadtest replay` measures the rules phalanxd runs.
//
// A value type without a reference to its PodGroup: the rules take the group, which must be the
// one whose role minimums the book was made for (or one with the same roles).

#include "scheduler/model.hpp"
#include "scheduler/planner.hpp"
#include "scheduler/preemption.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

class gang_book {
public:
  /// The role index of a member whose role has no minimum (or of a placeholder, which counts
  /// toward minMember but stands for no known member of a role).
  static constexpr std::size_t no_role = SIZE_MAX;

  gang_book() = default;
  /// An empty book for `group`'s role minimums.
  explicit gang_book(const pod_group& group);

  /// The index of `role` among `group`'s role minimums (min_task_member), or no_role.
  static std::size_t role_index(const pod_group& group, std::string_view role) noexcept;

  /// A member of role index `role` became ready (`delta` 1) or stopped being ready (-1).
  void count(std::size_t role, int32_t delta = 1) noexcept;

  /// Members that count as ready now, of every role.
  int32_t ready() const noexcept { return ready_; }
  /// Of them, those of role index `role` (not no_role).
  int32_t ready_of(std::size_t role) const noexcept { return ready_by_role_[role]; }

  /// The gang runs its minimum: minMember ready members and every role's minimum.
  bool runs_minimum(const pod_group& group) const noexcept;

  /// How many more ready members the gang needs before it runs its minimum: the most that
  /// minMember or any one role's minimum still lacks (0 when it runs it).
  int32_t members_short(const pod_group& group) const noexcept;

  /// Sets `request.min_pods` and `request.min_per_role` to what a round must still place for
  /// the gang to run its minimum (only the roles still short are named).
  void ask_for_minimum(const pod_group& group, gang_request& request) const;

  /// The gang as a victim of preemption or reclaim (scheduler/preemption.hpp): it may lose the
  /// ready members beyond minMember one by one, and otherwise only go whole. The planner counts
  /// pods, not roles, so a pod beyond minMember may be the last its role needs: a gang with
  /// role minimums has no spare members (it goes whole or keeps every one, I7 per role).
  victim_gang as_victim(const pod_group& group, uint64_t gang) const noexcept;

private:
  int32_t ready_ = 0;
  std::vector<int32_t> ready_by_role_;  // Aligned with the group's min_task_member.
};

} // namespace phalanx::scheduler
