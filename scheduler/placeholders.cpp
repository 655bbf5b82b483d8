#include "scheduler/placeholders.hpp"

#include "scheduler/predicates.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace phalanx::scheduler {

bool reserves_missing_members(const pod_group& group) {
  auto v = group.meta.annotations.find(reserve_missing_members_key);
  return v && *v == "true";
}

std::vector<pod> make_placeholders(const pod_group& group, std::span<const pod* const> members) {
  const auto present = static_cast<int32_t>(members.size());
  if (present >= group.min_member || group.min_resources.is_zero() ||
      !reserves_missing_members(group))
    return {};
  const int32_t missing = group.min_member - present;

  resources covered;
  // Views of the members' role names, which outlive this call: no copy per member.
  std::map<std::string_view, int32_t> per_role;
  for (const auto* m : members) {
    covered += m->requests;
    ++per_role[m->role];
  }
  // Dimensions minResources names: an even share of what the members leave of it. Dimensions it
  // does not name: as much as a member of the same role requests (the user said nothing about
  // them, so the missing members are taken to look like the present ones).
  const resources share = (group.min_resources - covered).clamped_at_zero().scaled(1, missing);
  auto size_like = [&](const pod* model) {
    resources r = model ? model->requests : resources{};
    group.min_resources.for_each([&](std::string_view name, int64_t) { r.set(name, share.get(name)); });
    r.pods = 1;
    return r;
  };

  // Roles still short of minTaskMember first, in role order; the rest without a role.
  std::vector<std::string> roles;
  for (const auto& rm : group.min_task_member)
    for (int32_t i = per_role[rm.role]; i < rm.min && static_cast<int32_t>(roles.size()) < missing;
         ++i)
      roles.push_back(rm.role);
  roles.resize(static_cast<std::size_t>(missing));

  // The member the placeholder takes after: one of its role, else the first.
  auto model_for = [&](const std::string& role) -> const pod* {
    for (const auto* m : members)
      if (m->role == role)
        return m;
    return members.empty() ? nullptr : members.front();
  };

  std::vector<pod> out;
  out.reserve(roles.size());
  for (std::size_t i = 0; i < roles.size(); ++i) {
    pod p;
    p.meta.name = group.meta.name + "-placeholder-" + std::to_string(i);
    p.meta.namespace_name = group.meta.namespace_name;
    p.group = group.meta.name;
    p.role = roles[i];
    const pod* model = model_for(roles[i]);
    p.requests = size_like(model);
    p.priority = group.priority;
    p.constraints = model ? model->constraints : nullptr;
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<std::size_t> pick_placeholder(const pod& p, std::span<const placeholder_slot> slots) {
  std::optional<std::size_t> best;
  int best_rank = 2;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    if (!fits(p.requests, s.placeholder->requests))
      continue;
    if (!check_placement(*s.where, p.constraints.get()).ok())
      continue;
    // A placeholder held for another role stays for it: taking it could leave that role short of
    // its minTaskMember for good.
    if (s.placeholder->role != p.role && !s.placeholder->role.empty())
      continue;
    int rank = s.placeholder->role == p.role ? 0 : 1;
    if (rank < best_rank) {
      best = i;
      best_rank = rank;
    }
  }
  return best;
}

} // namespace phalanx::scheduler
