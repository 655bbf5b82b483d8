#include "scheduler/gang_book.hpp"

#include <algorithm>

namespace phalanx::scheduler {

gang_book::gang_book(const pod_group& group) : ready_by_role_(group.min_task_member.size(), 0) {}

std::size_t gang_book::role_index(const pod_group& group, std::string_view role) noexcept {
  // min_task_member is sorted by role, and has a handful of entries at most.
  for (std::size_t r = 0; r < group.min_task_member.size(); ++r)
    if (group.min_task_member[r].role == role)
      return r;
  return no_role;
}

void gang_book::count(std::size_t role, int32_t delta) noexcept {
  ready_ += delta;
  if (role != no_role)
    ready_by_role_[role] += delta;
}

bool gang_book::runs_minimum(const pod_group& group) const noexcept {
  return members_short(group) == 0;
}

int32_t gang_book::members_short(const pod_group& group) const noexcept {
  int32_t short_by = std::max(0, group.min_member - ready_);
  for (std::size_t r = 0; r < ready_by_role_.size(); ++r)
    short_by = std::max(short_by, group.min_task_member[r].min - ready_by_role_[r]);
  return short_by;
}

void gang_book::ask_for_minimum(const pod_group& group, gang_request& request) const {
  request.min_pods = std::max(0, group.min_member - ready_);
  request.min_per_role.clear();
  for (std::size_t r = 0; r < ready_by_role_.size(); ++r) {
    const auto& minimum = group.min_task_member[r];
    if (minimum.min > ready_by_role_[r])
      request.min_per_role.push_back({minimum.role, minimum.min - ready_by_role_[r]});
  }
}

victim_gang gang_book::as_victim(const pod_group& group, uint64_t gang) const noexcept {
  victim_gang v{gang, ready_, std::max(1, group.min_member)};
  if (!group.min_task_member.empty())
    v.min_member = std::max(v.min_member, v.ready);
  return v;
}

} // namespace phalanx::scheduler
