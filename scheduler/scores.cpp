#include "scheduler/scores.hpp"

#include "scheduler/predicates.hpp"

#include <algorithm>

namespace phalanx::scheduler {

std::string_view to_string(score_strategy s) noexcept {
  switch (s) {
    case score_strategy::binpack:
      return "binpack";
    case score_strategy::spread:
      return "spread";
  }
  return "unknown";
}

std::optional<score_strategy> score_strategy_from_string(std::string_view text) noexcept {
  if (text == "binpack")
    return score_strategy::binpack;
  if (text == "spread")
    return score_strategy::spread;
  return std::nullopt;
}

int64_t score_weights::weight_of(std::string_view name) const noexcept {
  if (name == cpu_resource)
    return cpu;
  if (name == memory_resource)
    return memory;
  if (name == ephemeral_storage_resource)
    return ephemeral_storage;
  if (name == pods_resource)
    return pods;
  auto it = std::lower_bound(extended.begin(), extended.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  if (it != extended.end() && it->first == name)
    return it->second;
  return extended_default;
}

status score_weights::set(std::string_view name, int64_t weight) {
  if (name.empty())
    return {errc::invalid_argument, "score weight: resource name must not be empty"};
  if (weight < 0 || weight > max_weight)
    return {errc::invalid_argument, "score weight of " + std::string(name) + ": " +
                                        std::to_string(weight) + " is outside [0, " +
                                        std::to_string(max_weight) + "]"};
  if (name == cpu_resource) {
    cpu = weight;
  } else if (name == memory_resource) {
    memory = weight;
  } else if (name == ephemeral_storage_resource) {
    ephemeral_storage = weight;
  } else if (name == pods_resource) {
    pods = weight;
  } else {
    auto it = std::lower_bound(extended.begin(), extended.end(), name,
                               [](const auto& e, std::string_view n) { return e.first < n; });
    if (it != extended.end() && it->first == name)
      it->second = weight;
    else
      extended.insert(it, {std::string(name), weight});
  }
  return {};
}

result<score_weights>
score_weights::from_pairs(std::span<const std::pair<std::string, int64_t>> pairs) {
  score_weights out;
  for (const auto& [name, weight] : pairs) {
    auto st = out.set(name, weight);
    if (!st.ok())
      return st;
  }
  return out;
}

namespace {

// One scored dimension: adds weight * score to the running sums.
void add_dimension(score_strategy s, int64_t weight, int64_t request, int64_t free,
                   int64_t allocatable, int64_t& sum, int64_t& weight_sum) {
  if (weight <= 0 || allocatable <= 0)
    return;
  int64_t used_after = saturating_add(saturating_sub(allocatable, free), request);
  sum += weight * dimension_score(s, used_after, allocatable);
  weight_sum += weight;
}

} // namespace

int64_t node_score(score_strategy s, const score_weights& w, const resources& request,
                   const resources& free, const resources& allocatable) {
  if (!fits(request, free))
    return 0;
  int64_t sum = 0;
  int64_t weight_sum = 0;
  // Binpack (Volcano) scores only what the pod requests; spread (kube-scheduler) always scores
  // cpu and memory, and other dimensions only when requested.
  bool all_std = s == score_strategy::spread;
  if (all_std || request.cpu_milli > 0)
    add_dimension(s, w.cpu, request.cpu_milli, free.cpu_milli, allocatable.cpu_milli, sum,
                  weight_sum);
  if (all_std || request.memory_bytes > 0)
    add_dimension(s, w.memory, request.memory_bytes, free.memory_bytes, allocatable.memory_bytes,
                  sum, weight_sum);
  if (request.ephemeral_bytes > 0)
    add_dimension(s, w.ephemeral_storage, request.ephemeral_bytes, free.ephemeral_bytes,
                  allocatable.ephemeral_bytes, sum, weight_sum);
  if (request.pods > 0)
    add_dimension(s, w.pods, request.pods, free.pods, allocatable.pods, sum, weight_sum);
  for (const auto& e : request.extended()) {
    if (e.amount > 0)
      add_dimension(s, w.weight_of(e.name.str()), e.amount, free.get(e.name),
                    allocatable.get(e.name), sum, weight_sum);
  }
  return weight_sum == 0 ? 0 : sum / weight_sum;
}

// ---------------------------------------------------------------------------------------------
// kube-scheduler's score plugins

int64_t intolerable_preferred_taints(const node& n,
                                     std::span<const toleration> tolerations) noexcept {
  int64_t count = 0;
  for (const auto& tn : n.taints) {
    if (tn.effect != taint_effect::prefer_no_schedule)
      continue;
    // kube-scheduler first keeps the tolerations with an empty or PreferNoSchedule effect;
    // tolerates() already asks that of the effect, so every toleration can be offered.
    bool tolerated = std::any_of(tolerations.begin(), tolerations.end(),
                                 [&](const toleration& t) { return tolerates(t, tn); });
    count += tolerated ? 0 : 1;
  }
  return count;
}

int64_t preferred_node_affinity_score(const node& n,
                                      std::span<const weighted_node_selector_term> terms) noexcept {
  int64_t score = 0;
  for (const auto& t : terms)
    if (t.weight != 0 && matches_term(n, t.preference))
      score += t.weight;
  return score;
}

void normalize_taint_toleration(std::span<int64_t> raw) noexcept {
  int64_t max_raw = 0;
  for (int64_t r : raw)
    max_raw = std::max(max_raw, r);
  for (int64_t& r : raw)
    r = default_normalized(r, max_raw, true);
}

void normalize_node_affinity(std::span<int64_t> raw) noexcept {
  int64_t max_raw = 0;
  for (int64_t r : raw)
    max_raw = std::max(max_raw, r);
  for (int64_t& r : raw)
    r = default_normalized(r, max_raw, false);
}

void normalize_inter_pod_affinity(std::span<int64_t> raw) noexcept {
  if (raw.empty())
    return;
  auto [lo, hi] = std::minmax_element(raw.begin(), raw.end());
  int64_t min_raw = *lo;
  int64_t max_raw = *hi;
  for (int64_t& r : raw)
    r = min_max_normalized(r, min_raw, max_raw);
}

void normalize_topology_spread(std::span<int64_t> raw, std::span<const uint8_t> ignored) noexcept {
  int64_t min_raw = std::numeric_limits<int64_t>::max();
  int64_t max_raw = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (ignored[i])
      continue;
    min_raw = std::min(min_raw, raw[i]);
    max_raw = std::max(max_raw, raw[i]);
  }
  for (std::size_t i = 0; i < raw.size(); ++i)
    raw[i] = ignored[i] ? 0 : spread_normalized(raw[i], min_raw, max_raw);
}

int64_t log_q32(uint64_t n) noexcept {
  if (n <= 1)
    return 0;
  // n = 2^k * y with y in [1, 2), y in fixed point with 62 fraction bits. Squaring y doubles its
  // binary logarithm: each square at or above 2 gives the next fraction bit of log2(y).
  int k = 63 - __builtin_clzll(n);
  constexpr int frac_bits = 62;
  unsigned __int128 y = k <= frac_bits ? (unsigned __int128)(n) << (frac_bits - k)
                                       : (unsigned __int128)(n) >> (k - frac_bits);
  const unsigned __int128 two = (unsigned __int128)(2) << frac_bits;
  uint64_t fraction = 0;
  for (int bit = 31; bit >= 0; --bit) {
    y = (y * y) >> frac_bits;
    if (y >= two) {
      y >>= 1;
      fraction |= uint64_t(1) << bit;
    }
  }
  uint64_t log2_q32 = (uint64_t(k) << 32) | fraction;
  // ln 2 with 64 fraction bits, rounded.
  constexpr uint64_t ln2_q64 = 0xB17217F7D1CF79ACull;
  return int64_t(((unsigned __int128)(log2_q32) * ln2_q64) >> 64);
}

} // namespace phalanx::scheduler
