#include "scheduler/room_reservation.hpp"

#include "scheduler/predicates.hpp"

#include <algorithm>

namespace phalanx::scheduler {

namespace {

// The pods a reservation is for: every role minimum's pods first (the first pods of the role in
// preference order), then others in preference order up to min_pods. Empty with `why` set when
// the gang's pods cannot make its minimum.
std::vector<std::size_t> pods_of_minimum(const gang_request& request, std::string& why) {
  std::vector<std::size_t> chosen;
  std::vector<bool> used(request.pods.size(), false);
  for (const auto& rm : request.min_per_role) {
    int32_t taken = 0;
    for (std::size_t i = 0; i < request.pods.size() && taken < rm.min; ++i)
      if (!used[i] && request.pods[i]->role.view() == rm.role) {
        used[i] = true;
        chosen.push_back(i);
        ++taken;
      }
    if (taken < rm.min) {
      why = "role " + rm.role + " has " + std::to_string(taken) + " pending pod(s) of the " +
            std::to_string(rm.min) + " its minimum needs";
      return {};
    }
  }
  for (std::size_t i = 0;
       i < request.pods.size() && static_cast<int32_t>(chosen.size()) < request.min_pods; ++i)
    if (!used[i]) {
      used[i] = true;
      chosen.push_back(i);
    }
  if (static_cast<int32_t>(chosen.size()) < request.min_pods) {
    why = std::to_string(chosen.size()) + " pending pod(s) cannot make a minimum of " +
          std::to_string(request.min_pods);
    return {};
  }
  return chosen;
}

struct ranked_node {
  std::size_t node = 0;
  int32_t fitting_now = 0;  // Of the chosen pods, how many its free room holds now.
  ratio used_share;         // Dominant share of allocatable in use.
};

} // namespace

reservation_choice choose_reserved_nodes(const node_view& view, const gang_request& request,
                                         const std::function<bool(std::size_t)>& taken) {
  reservation_choice out;
  if (request.min_pods <= 0) {
    out.detail = "the gang's minimum is placed: nothing to reserve";
    return out;
  }
  std::string why;
  auto chosen = pods_of_minimum(request, why);
  if (chosen.empty()) {
    out.detail = std::move(why);
    return out;
  }

  // Rank the nodes by how soon they would hold the gang's pods.
  std::vector<ranked_node> ranked;
  resources free;
  for (std::size_t n = 0; n < view.size(); ++n) {
    if (!view.is_live(n) || (taken && taken(n)))
      continue;
    const node& info = view.at(n);
    view.read_free(n, free);
    ranked_node r{n, 0, dominant_share((info.allocatable - free).clamped_at_zero(),
                                       info.allocatable)};
    bool admits_any = false;
    for (auto i : chosen) {
      const pod& p = *request.pods[i];
      if (!check_static(info, p.constraints.get(), p.requests).ok())
        continue;
      admits_any = true;
      if (fits(p.requests, free)) {
        free -= p.requests;
        ++r.fitting_now;
      }
    }
    if (admits_any)
      ranked.push_back(r);
  }
  std::sort(ranked.begin(), ranked.end(), [](const ranked_node& a, const ranked_node& b) {
    if (a.fitting_now != b.fitting_now)
      return a.fitting_now > b.fitting_now;
    if (a.used_share != b.used_share)
      return a.used_share < b.used_share;
    return a.node < b.node;
  });

  // Fill each node, in that order, up to its allocatable.
  std::vector<bool> assigned(chosen.size(), false);
  std::size_t left = chosen.size();
  for (const auto& r : ranked) {
    if (left == 0)
      break;
    const node& info = view.at(r.node);
    room_claim claim{r.node, {}, 0};
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      if (assigned[k])
        continue;
      const pod& p = *request.pods[chosen[k]];
      if (!check_static(info, p.constraints.get(), p.requests).ok() ||
          !fits(p.requests, info.allocatable - claim.amount))
        continue;
      claim.amount += p.requests;
      ++claim.pods;
      assigned[k] = true;
      --left;
    }
    if (claim.pods > 0)
      out.nodes.push_back(std::move(claim));
  }
  if (left > 0) {
    out.nodes.clear();
    out.detail = std::to_string(left) + " of the " + std::to_string(chosen.size()) +
                 " pod(s) of the gang's minimum fit no node left to reserve";
    return out;
  }
  std::sort(out.nodes.begin(), out.nodes.end(),
            [](const room_claim& a, const room_claim& b) { return a.node < b.node; });
  out.found = true;
  out.detail = std::to_string(out.nodes.size()) + " node(s) for " +
               std::to_string(chosen.size()) + " pod(s): ";
  constexpr std::size_t named = 3;
  for (std::size_t i = 0; i < out.nodes.size() && i < named; ++i)
    out.detail += (i == 0 ? "" : ", ") + view.at(out.nodes[i].node).meta.name.str();
  if (out.nodes.size() > named)
    out.detail += " and " + std::to_string(out.nodes.size() - named) + " more";
  return out;
}

resources withheld_room(const resources& free, const resources& reserved) {
  return resources::min(reserved, free.clamped_at_zero());
}

std::string reservation_reason(const reservation_choice& choice) {
  return "It has waited past the starvation bound and reserves " + choice.detail +
         "; they take no other gang's pods that would delay it.";
}

} // namespace phalanx::scheduler
