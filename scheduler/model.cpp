#include "scheduler/model.hpp"

#include <algorithm>
#include <array>

namespace phalanx::scheduler {

// ---------------------------------------------------------------------------------------------
// label_set

namespace {

using label_entry = label_set::entry;

bool key_less(const label_entry& e, std::string_view key) noexcept {
  return e.first < key;
}

} // namespace

label_set::label_set(std::initializer_list<entry> entries) {
  mutable_entries().reserve(entries.size());
  for (const auto& e : entries)
    set(e.first, e.second);
}

const std::vector<label_entry>& label_set::no_entries() noexcept {
  static const std::vector<label_entry> none;
  return none;
}

std::vector<label_entry>& label_set::mutable_entries() {
  // use_count() == 1 means no other label_set holds the list, and none can start to without going
  // through this one, which the caller is changing: the list is ours to change in place.
  if (!entries_)
    entries_ = std::make_shared<std::vector<entry>>();
  else if (entries_.use_count() != 1) {
    auto copy = std::make_shared<std::vector<entry>>();
    copy->reserve(entries_->size() + 1); // Room for the insert that usually follows.
    copy->assign(entries_->begin(), entries_->end());
    entries_ = std::move(copy);
  }
  return *entries_;
}

const std::string* label_set::find(std::string_view key) const noexcept {
  const auto& list = entries();
  auto it = std::lower_bound(list.begin(), list.end(), key, key_less);
  if (it != list.end() && it->first == key)
    return &it->second;
  return nullptr;
}

bool label_set::has_key_with_prefix(std::string_view prefix) const noexcept {
  const auto& list = entries();
  auto it = std::lower_bound(list.begin(), list.end(), prefix, key_less);
  return it != list.end() && std::string_view(it->first).starts_with(prefix);
}

void label_set::set(std::string key, std::string value) {
  if (const auto* current = find(key); current != nullptr && *current == value)
    return; // Unchanged: keep sharing.
  auto& list = mutable_entries();
  auto it = std::lower_bound(list.begin(), list.end(), std::string_view(key), key_less);
  if (it != list.end() && it->first == key)
    it->second = std::move(value);
  else
    list.insert(it, entry{std::move(key), std::move(value)});
}

bool label_set::erase(std::string_view key) {
  if (!contains(key))
    return false;
  auto& list = mutable_entries();
  list.erase(std::lower_bound(list.begin(), list.end(), key, key_less));
  return true;
}

// ---------------------------------------------------------------------------------------------
// Enum names. Each table lists every value in declaration order; the tests walk them, so a new
// enumerator without a name fails a test instead of printing "unknown".

namespace {

template <class Enum, std::size_t N>
using name_table = std::array<std::pair<Enum, std::string_view>, N>;

template <class Enum, std::size_t N>
std::string_view name_of(const name_table<Enum, N>& table, Enum value) noexcept {
  for (const auto& [e, name] : table)
    if (e == value)
      return name;
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> value_of(const name_table<Enum, N>& table, std::string_view text) noexcept {
  for (const auto& [e, name] : table)
    if (name == text)
      return e;
  return std::nullopt;
}

constexpr name_table<taint_effect, 3> taint_effect_names{{
    {taint_effect::no_schedule, "NoSchedule"},
    {taint_effect::prefer_no_schedule, "PreferNoSchedule"},
    {taint_effect::no_execute, "NoExecute"},
}};

constexpr name_table<toleration_operator, 2> toleration_operator_names{{
    {toleration_operator::equal, "Equal"},
    {toleration_operator::exists, "Exists"},
}};

constexpr name_table<selector_operator, 6> selector_operator_names{{
    {selector_operator::in, "In"},
    {selector_operator::not_in, "NotIn"},
    {selector_operator::exists, "Exists"},
    {selector_operator::does_not_exist, "DoesNotExist"},
    {selector_operator::gt, "Gt"},
    {selector_operator::lt, "Lt"},
}};

constexpr name_table<pod_phase, 5> pod_phase_names{{
    {pod_phase::pending, "Pending"},
    {pod_phase::running, "Running"},
    {pod_phase::succeeded, "Succeeded"},
    {pod_phase::failed, "Failed"},
    {pod_phase::unknown, "Unknown"},
}};

constexpr name_table<pod_group_phase, 5> pod_group_phase_names{{
    {pod_group_phase::pending, "Pending"},
    {pod_group_phase::inqueue, "Inqueue"},
    {pod_group_phase::running, "Running"},
    {pod_group_phase::unknown, "Unknown"},
    {pod_group_phase::completed, "Completed"},
}};

constexpr name_table<queue_state, 3> queue_state_names{{
    {queue_state::open, "Open"},
    {queue_state::closed, "Closed"},
    {queue_state::closing, "Closing"},
}};

} // namespace

std::string_view to_string(taint_effect e) noexcept {
  return name_of(taint_effect_names, e);
}
std::optional<taint_effect> taint_effect_from_string(std::string_view text) noexcept {
  return value_of(taint_effect_names, text);
}

std::string_view to_string(toleration_operator op) noexcept {
  return name_of(toleration_operator_names, op);
}
std::optional<toleration_operator> toleration_operator_from_string(std::string_view text) noexcept {
  return value_of(toleration_operator_names, text);
}

std::string_view to_string(selector_operator op) noexcept {
  return name_of(selector_operator_names, op);
}
std::optional<selector_operator> selector_operator_from_string(std::string_view text) noexcept {
  return value_of(selector_operator_names, text);
}

std::string_view to_string(pod_phase p) noexcept {
  return name_of(pod_phase_names, p);
}
std::optional<pod_phase> pod_phase_from_string(std::string_view text) noexcept {
  return value_of(pod_phase_names, text);
}

std::string_view to_string(pod_group_phase p) noexcept {
  return name_of(pod_group_phase_names, p);
}
std::optional<pod_group_phase> pod_group_phase_from_string(std::string_view text) noexcept {
  return value_of(pod_group_phase_names, text);
}

std::string_view to_string(queue_state s) noexcept {
  return name_of(queue_state_names, s);
}
std::optional<queue_state> queue_state_from_string(std::string_view text) noexcept {
  return value_of(queue_state_names, text);
}

// ---------------------------------------------------------------------------------------------
// Pods

resources effective_requests(const std::vector<container_resources>& containers,
                             const std::vector<container_resources>& init_containers,
                             const resources& overhead) {
  // Regular containers run together, so their requests add up; init containers run one at a
  // time before them, so only the largest matters (kube-scheduler's computePodResourceRequest).
  resources sum;
  for (const auto& c : containers)
    sum += c.requests;
  resources init_max;
  for (const auto& c : init_containers)
    init_max = resources::max(init_max, c.requests);
  resources out = resources::max(sum, init_max);
  out += overhead;
  out.pods = 1; // A pod occupies one pod slot whatever its containers declare.
  return out;
}

const placement_constraints& pod::placement() const noexcept {
  static const placement_constraints none;
  return constraints ? *constraints : none;
}

} // namespace phalanx::scheduler
