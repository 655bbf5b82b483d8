#include "scheduler/scores.hpp"

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

} // namespace phalanx::scheduler
