#include "scheduler/fair_share.hpp"

#include <algorithm>
#include <cassert>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace phalanx::scheduler {

namespace {

using i128 = __int128;

// A breakpoint of the water level: amount / weight, compared exactly.
struct level {
  int64_t amount = 0;
  int64_t weight = 1;
};

bool level_less(const level& a, const level& b) {
  return i128{a.amount} * b.weight < i128{b.amount} * a.weight;
}

bool level_equal(const level& a, const level& b) {
  return i128{a.amount} * b.weight == i128{b.amount} * a.weight;
}

// amount / weight compared with a level: <0, 0, >0.
int compare_to_level(int64_t amount, int64_t weight, const level& l) {
  i128 lhs = i128{amount} * l.weight;
  i128 rhs = i128{l.amount} * weight;
  return lhs < rhs ? -1 : (lhs > rhs ? 1 : 0);
}

} // namespace

std::vector<int64_t> water_fill(int64_t total, std::span<const int64_t> weights,
                                std::span<const int64_t> floors, std::span<const int64_t> ceilings,
                                std::span<const std::string> names) {
  const std::size_t n = weights.size();
  assert(floors.size() == n && ceilings.size() == n && names.size() == n);
  std::vector<int64_t> lo(n), hi(n);
  i128 sum_lo = 0, sum_hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lo[i] = std::max<int64_t>(0, floors[i]);
    // A queue without weight takes no part in the pouring: it gets its floor and nothing more.
    hi[i] = weights[i] > 0 ? std::max(lo[i], ceilings[i]) : lo[i];
    sum_lo += lo[i];
    sum_hi += hi[i];
  }
  if (sum_lo >= total)
    return lo;
  if (sum_hi <= total)
    return hi;

  // Each queue's amount is clamp(L * w, lo, hi) for the water level L; the sum is piecewise linear
  // and nondecreasing in L, with corners at lo/w and hi/w. Find the segment holding the level
  // where the sum reaches the total, then solve the linear piece exactly.
  std::vector<level> corners;
  corners.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    if (weights[i] <= 0)
      continue;
    corners.push_back({lo[i], weights[i]});
    corners.push_back({hi[i], weights[i]});
  }
  std::sort(corners.begin(), corners.end(), level_less);
  corners.erase(std::unique(corners.begin(), corners.end(), level_equal), corners.end());

  // True when the sum at level `l` is <= total.
  auto sum_at_most_total = [&](const level& l) {
    i128 constant = 0;
    i128 middle_weight = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (weights[i] <= 0 || compare_to_level(lo[i], weights[i], l) >= 0)
        constant += lo[i];
      else if (compare_to_level(hi[i], weights[i], l) <= 0)
        constant += hi[i];
      else
        middle_weight += weights[i];
    }
    return constant * l.weight + i128{l.amount} * middle_weight <= i128{total} * l.weight;
  };

  // The last corner where the sum is still <= total; the sum at the last corner is sum_hi > total.
  auto first_over = std::partition_point(corners.begin(), corners.end(), sum_at_most_total);
  assert(first_over != corners.end());
  const level upper = *first_over;
  const level lower = first_over == corners.begin() ? level{0, 1} : *(first_over - 1);

  // Inside (lower, upper) no corner lies, so each queue is floored, capped or filling throughout.
  std::vector<int64_t> out(n);
  std::vector<std::size_t> filling;
  i128 constant = 0;
  i128 filling_weight = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (weights[i] <= 0 || compare_to_level(lo[i], weights[i], upper) >= 0) {
      out[i] = lo[i];
    } else if (compare_to_level(hi[i], weights[i], lower) <= 0) {
      out[i] = hi[i];
    } else {
      filling.push_back(i);
      filling_weight += weights[i];
      continue;
    }
    constant += out[i];
  }
  assert(!filling.empty() && filling_weight > 0);
  const i128 pour = i128{total} - constant;
  std::vector<int64_t> remainder(n, 0);
  i128 given = 0;
  for (auto i : filling) {
    i128 exact = pour * weights[i];
    out[i] = static_cast<int64_t>(exact / filling_weight);
    remainder[i] = static_cast<int64_t>(exact % filling_weight);
    given += out[i];
  }
  // Units lost to flooring: one each to the largest remainders, then by name.
  std::sort(filling.begin(), filling.end(), [&](std::size_t a, std::size_t b) {
    if (remainder[a] != remainder[b])
      return remainder[a] > remainder[b];
    return names[a] < names[b];
  });
  auto leftover = static_cast<std::size_t>(pour - given);
  assert(leftover <= filling.size());
  for (std::size_t k = 0; k < leftover; ++k)
    ++out[filling[k]];
  return out;
}

namespace {

// The flat computation: `total` poured over one set of sibling queues, per dimension in `dims`.
// Returns each sibling's deserved, in the order of `siblings`.
std::vector<resources> fill_siblings(const resources& total, std::span<const queue_demand> siblings,
                                     std::span<const std::string> dims) {
  const std::size_t n = siblings.size();
  std::vector<resources> out(n);
  std::vector<std::string> names;
  names.reserve(n);
  std::vector<int64_t> weights;
  weights.reserve(n);
  for (const auto& q : siblings) {
    names.push_back(q.name);
    weights.push_back(q.weight);
  }
  std::vector<int64_t> floors(n), ceilings(n);
  for (const auto& dim : dims) {
    const int64_t dim_total = total.get(dim);
    int64_t guaranteed = 0;
    for (const auto& q : siblings)
      guaranteed = saturating_add(guaranteed, std::max<int64_t>(0, q.guarantee.get(dim)));
    for (std::size_t i = 0; i < n; ++i) {
      const auto& q = siblings[i];
      const int64_t floor = std::max<int64_t>(0, q.guarantee.get(dim));
      // Volcano's realCapability: what the siblings are guaranteed is never ours.
      int64_t ceiling = saturating_add(saturating_sub(dim_total, guaranteed), floor);
      if (auto cap = q.capability.get(dim))
        ceiling = std::min(ceiling, *cap);
      ceiling = std::min(ceiling, q.request.get(dim));
      floors[i] = floor;
      ceilings[i] = std::max(ceiling, floor);
    }
    auto amounts = water_fill(dim_total, weights, floors, ceilings, names);
    for (std::size_t i = 0; i < n; ++i)
      if (amounts[i] != 0)
        out[i].set(dim, amounts[i]);
  }
  return out;
}

// The queue tree: each queue's parent as an index, the root being `queues.size()`.
struct queue_tree {
  std::size_t root = 0;
  std::vector<std::size_t> parent;
  std::vector<std::vector<std::size_t>> children; // Indexed by queue, then the root; input order.
  std::vector<std::size_t> top_down;              // Every queue, each after its parent.
};

queue_tree make_tree(std::span<const queue_demand> queues) {
  const std::size_t n = queues.size();
  queue_tree t;
  t.root = n;
  t.parent.assign(n, n);
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i)
    index.emplace(queues[i].name, i);
  for (std::size_t i = 0; i < n; ++i) {
    if (is_child_of_root(queues[i].parent))
      continue;
    if (auto it = index.find(queues[i].parent); it != index.end())
      t.parent[i] = it->second;
  }

  // Cut every cycle by hanging its queues under the root. Which queues lie on a cycle depends on
  // the parent links alone, so the result does not depend on input order. Each walk stops at a
  // queue already seen, so every queue is walked once.
  enum class mark : uint8_t { unseen, on_path, done };
  std::vector<mark> marks(n, mark::unseen);
  std::vector<bool> on_cycle(n, false);
  std::vector<std::size_t> path;
  for (std::size_t i = 0; i < n; ++i) {
    path.clear();
    std::size_t j = i;
    while (j != t.root && marks[j] == mark::unseen) {
      marks[j] = mark::on_path;
      path.push_back(j);
      j = t.parent[j];
    }
    if (j != t.root && marks[j] == mark::on_path) // The walk came back to itself at j.
      for (auto k = std::find(path.begin(), path.end(), j); k != path.end(); ++k)
        on_cycle[*k] = true;
    for (auto k : path)
      marks[k] = mark::done;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (on_cycle[i])
      t.parent[i] = t.root;

  t.children.resize(n + 1);
  for (std::size_t i = 0; i < n; ++i)
    t.children[t.parent[i]].push_back(i);
  // Breadth first from the root: a parent always comes before its children.
  t.top_down.reserve(n);
  for (auto i : t.children[t.root])
    t.top_down.push_back(i);
  for (std::size_t k = 0; k < t.top_down.size(); ++k)
    for (auto child : t.children[t.top_down[k]])
      t.top_down.push_back(child);
  assert(t.top_down.size() == n);
  return t;
}

} // namespace

std::vector<queue_deserved> compute_deserved(const resources& total,
                                             std::span<const queue_demand> queues) {
  std::vector<std::string> dims;
  auto collect = [&](std::string_view name, int64_t) { dims.emplace_back(name); };
  total.for_each(collect);
  for (const auto& q : queues) {
    q.request.for_each(collect);
    q.guarantee.for_each(collect);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());

  const auto tree = make_tree(queues);
  // What each queue stands for before its parent: its subtree's request and guarantee (a leaf is
  // itself). Children before parents, so each child's subtree is complete when its parent sums.
  std::vector<queue_demand> subtree(queues.begin(), queues.end());
  for (auto it = tree.top_down.rbegin(); it != tree.top_down.rend(); ++it) {
    const auto& kids = tree.children[*it];
    if (kids.empty())
      continue;
    auto& q = subtree[*it];
    resources children_guarantee;
    for (auto k : kids) {
      q.request += subtree[k].request.clamped_at_zero();
      children_guarantee += subtree[k].guarantee.clamped_at_zero();
    }
    q.guarantee = resources::max(q.guarantee, children_guarantee);
  }

  std::vector<resources> deserved(queues.size());
  std::vector<queue_demand> siblings;
  auto pour = [&](const resources& amount, const std::vector<std::size_t>& members) {
    siblings.clear();
    for (auto k : members)
      siblings.push_back(subtree[k]);
    auto shares = fill_siblings(amount, siblings, dims);
    for (std::size_t m = 0; m < members.size(); ++m)
      deserved[members[m]] = std::move(shares[m]);
  };
  pour(total, tree.children[tree.root]);
  for (auto i : tree.top_down)
    if (!tree.children[i].empty())
      pour(deserved[i], tree.children[i]);

  std::vector<queue_deserved> out;
  out.reserve(queues.size());
  for (std::size_t i = 0; i < queues.size(); ++i)
    out.push_back({queues[i].name, std::move(deserved[i])});
  return out;
}

resources without_pods(resources amount) {
  amount.pods = 0;
  return amount;
}

ratio drf_share(const resources& allocated, const resources& total) {
  resources a = allocated;
  a.pods = 0;
  return dominant_share(a, total);
}

ratio queue_share(const resources& allocated, const resources& deserved) {
  resources a = allocated;
  a.pods = 0;
  return dominant_share(a, deserved);
}

bool share_cut_by_others(const resources& deserved, const resources& request,
                         const resources& total) noexcept {
  auto cut = [](int64_t d, int64_t r, int64_t t) { return d < std::min(r, t); };
  if (cut(deserved.cpu_milli, request.cpu_milli, total.cpu_milli) ||
      cut(deserved.memory_bytes, request.memory_bytes, total.memory_bytes) ||
      cut(deserved.ephemeral_bytes, request.ephemeral_bytes, total.ephemeral_bytes))
    return true;
  for (const auto& e : request.extended())
    if (cut(deserved.get(e.name), e.amount, total.get(e.name)))
      return true;
  return false;
}

bool queue_overused(const resources& allocated, const resources& deserved, bool cut) noexcept {
  if (!cut)
    return false;
  // Pods are left out as queue_share leaves them out (Volcano keeps the pod count apart from
  // the resources it compares): a queue with pods waiting deserves as many pods as it asks
  // for, so counting them would keep it from ever being overused.
  const bool names_a_resource = deserved.cpu_milli != 0 || deserved.memory_bytes != 0 ||
                                deserved.ephemeral_bytes != 0 || !deserved.extended().empty();
  if (!names_a_resource)
    return false;
  if (deserved.pods <= allocated.pods)
    return fits(deserved, allocated);  // Its pods cannot fail the comparison: no copy.
  resources share = deserved;
  share.pods = 0;
  return fits(share, allocated);
}

} // namespace phalanx::scheduler
