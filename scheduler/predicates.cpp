#include "scheduler/predicates.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

namespace phalanx::scheduler {

std::string_view to_string(predicate_failure f) noexcept {
  switch (f) {
    case predicate_failure::none:
      return "None";
    case predicate_failure::node_unschedulable:
      return "NodeUnschedulable";
    case predicate_failure::untolerated_taint:
      return "UntoleratedTaint";
    case predicate_failure::node_affinity:
      return "NodeAffinity";
    case predicate_failure::exceeds_allocatable:
      return "ExceedsAllocatable";
    case predicate_failure::insufficient_resources:
      return "InsufficientResources";
    case predicate_failure::host_ports:
      return "NodePorts";
    case predicate_failure::existing_pod_anti_affinity:
      return "ExistingPodAntiAffinity";
    case predicate_failure::pod_affinity:
      return "PodAffinity";
    case predicate_failure::pod_anti_affinity:
      return "PodAntiAffinity";
    case predicate_failure::topology_spread:
      return "PodTopologySpread";
    case predicate_failure::topology_spread_label:
      return "PodTopologySpreadLabel";
  }
  return "unknown";
}

bool tolerates(const toleration& t, const taint& tn) noexcept {
  if (t.effect && *t.effect != tn.effect)
    return false;
  if (!t.key.empty() && t.key != tn.key)
    return false;
  return t.op == toleration_operator::exists || t.value == tn.value;
}

int32_t first_untolerated_taint(const node& n, std::span<const toleration> tolerations) noexcept {
  for (std::size_t i = 0; i < n.taints.size(); ++i) {
    const auto& tn = n.taints[i];
    if (tn.effect == taint_effect::prefer_no_schedule)
      continue;
    bool ok = std::any_of(tolerations.begin(), tolerations.end(),
                          [&](const toleration& t) { return tolerates(t, tn); });
    if (!ok)
      return int32_t(i);
  }
  return -1;
}

std::string untolerated_taint_reason(const taint& tn) {
  std::string out = "node(s) had untolerated taint {";
  out += tn.key;
  out += ": ";
  out += tn.value;
  out += '}';
  return out;
}

namespace {

// Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits, nothing else.
std::optional<int64_t> parse_int64(std::string_view s) noexcept {
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  if (s.empty() || (s.size() == 1 && s.front() == '-'))
    return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size())
    return std::nullopt;
  return v;
}

// The shared semantics of matchExpressions and matchFields: `value` is the label or field value,
// or null when absent.
bool matches_value(std::optional<std::string_view> value,
                   const node_selector_requirement& r) noexcept {
  switch (r.op) {
    case selector_operator::in:
      return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
    case selector_operator::not_in:
      return !value || std::find(r.values.begin(), r.values.end(), *value) == r.values.end();
    case selector_operator::exists:
      return value.has_value();
    case selector_operator::does_not_exist:
      return !value.has_value();
    case selector_operator::gt:
    case selector_operator::lt: {
      if (!value || r.values.size() != 1)
        return false;
      auto have = parse_int64(*value);
      auto want = parse_int64(r.values.front());
      if (!have || !want)
        return false;
      return r.op == selector_operator::gt ? *have > *want : *have < *want;
    }
  }
  return false;
}

} // namespace

bool matches_requirement(const label_set& labels, const node_selector_requirement& r) noexcept {
  return matches_value(labels.find(r.key), r);
}

bool matches_field_requirement(const node& n, const node_selector_requirement& r) noexcept {
  if (r.key != "metadata.name")
    return false;
  return matches_value(std::string_view(n.meta.name), r);
}

bool matches_term(const node& n, const node_selector_term& term) noexcept {
  if (term.match_expressions.empty() && term.match_fields.empty())
    return false;
  for (const auto& r : term.match_expressions)
    if (!matches_requirement(n.meta.labels, r))
      return false;
  for (const auto& r : term.match_fields)
    if (!matches_field_requirement(n, r))
      return false;
  return true;
}

bool matches_node_affinity(const node& n, const placement_constraints& c) noexcept {
  for (const auto& [key, value] : c.node_selector.entries()) {
    auto have = n.meta.labels.find(key);
    if (!have || *have != value)
      return false;
  }
  if (c.required_node_affinity.empty())
    return true;
  return std::any_of(c.required_node_affinity.begin(), c.required_node_affinity.end(),
                     [&](const node_selector_term& t) { return matches_term(n, t); });
}

bool tolerates_unschedulable(const placement_constraints& c) noexcept {
  // tolerates() against {node.kubernetes.io/unschedulable: "", NoSchedule}, without building
  // the taint: this runs per node in the planner's scan.
  return std::any_of(c.tolerations.begin(), c.tolerations.end(), [](const toleration& t) {
    if (t.effect && *t.effect != taint_effect::no_schedule)
      return false;
    if (!t.key.empty() && t.key != unschedulable_taint_key)
      return false;
    return t.op == toleration_operator::exists || t.value.empty();
  });
}

static_verdict check_placement(const node& n, const placement_constraints* c) noexcept {
  if (n.unschedulable && !(c && tolerates_unschedulable(*c)))
    return {predicate_failure::node_unschedulable, -1};
  if (!n.taints.empty()) {
    std::span<const toleration> tols;
    if (c)
      tols = c->tolerations;
    int32_t t = first_untolerated_taint(n, tols);
    if (t >= 0)
      return {predicate_failure::untolerated_taint, t};
  }
  if (c && !matches_node_affinity(n, *c))
    return {predicate_failure::node_affinity, -1};
  return {};
}

static_verdict check_static(const node& n, const placement_constraints* c,
                            const resources& request) noexcept {
  auto v = check_placement(n, c);
  if (v.ok() && !fits(request, n.allocatable))
    v.failure = predicate_failure::exceeds_allocatable;
  return v;
}

std::string insufficient_reason(std::string_view resource) {
  if (resource == pods_resource)
    return std::string(reason_too_many_pods);
  std::string out = "Insufficient ";
  out += resource;
  return out;
}

void fit_diagnosis::add(std::string_view text, bool unresolvable, int64_t nodes) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), text,
                             [](const entry& e, std::string_view t) { return e.text < t; });
  if (it == entries_.end() || it->text != text)
    it = entries_.insert(it, entry{std::string(text), 0, 0});
  it->count += nodes;
  if (unresolvable)
    it->unresolvable += nodes;
}

void fit_diagnosis::add_static(const node& n, const static_verdict& v, const resources& request) {
  switch (v.failure) {
    case predicate_failure::none:
    case predicate_failure::insufficient_resources:
    case predicate_failure::host_ports:
    case predicate_failure::existing_pod_anti_affinity:
    case predicate_failure::pod_affinity:
    case predicate_failure::pod_anti_affinity:
    case predicate_failure::topology_spread:
    case predicate_failure::topology_spread_label:
      return;  // Not static.
    case predicate_failure::node_unschedulable:
      add(reason_node_unschedulable, true);
      return;
    case predicate_failure::untolerated_taint:
      add(untolerated_taint_reason(n.taints[std::size_t(v.taint_index)]), true);
      return;
    case predicate_failure::node_affinity:
      add(reason_node_affinity, true);
      return;
    case predicate_failure::exceeds_allocatable:
      add_resources(request, n.allocatable, true);
      return;
  }
}

void fit_diagnosis::add_resources(const resources& request, const resources& available,
                                  bool unresolvable) {
  request.for_each([&](std::string_view name, int64_t amount) {
    if (amount > 0 && amount > available.get(name))
      add(insufficient_reason(name), unresolvable);
  });
}

bool fit_diagnosis::all_unresolvable() const noexcept {
  if (entries_.empty())
    return false;
  return std::all_of(entries_.begin(), entries_.end(),
                     [](const entry& e) { return e.unresolvable == e.count; });
}

namespace {

std::string render(std::string_view head, int64_t node_total, std::vector<std::string> parts) {
  std::string out = "0/" + std::to_string(node_total);
  out += head;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    out += i == 0 ? ": " : ", ";
    out += parts[i];
  }
  out += '.';
  return out;
}

} // namespace

std::string fit_diagnosis::to_string() const {
  std::vector<const entry*> order;
  order.reserve(entries_.size());
  for (const auto& e : entries_)
    order.push_back(&e);
  // Entries are unique by text, so this order is total.
  std::sort(order.begin(), order.end(), [](const entry* a, const entry* b) {
    if (a->count != b->count)
      return a->count > b->count;
    return a->text < b->text;
  });
  std::vector<std::string> parts;
  parts.reserve(order.size());
  for (const auto* e : order)
    parts.push_back(std::to_string(e->count) + " " + e->text);
  return render(" nodes are available", node_total_, std::move(parts));
}

std::string fit_diagnosis::to_volcano_string() const {
  std::vector<std::string> parts;
  parts.reserve(entries_.size());
  for (const auto& e : entries_)
    parts.push_back(std::to_string(e.count) + " " + e.text);
  // Volcano sorts the formatted "<count> <reason>" strings, so "10 x" sorts before "2 y".
  std::sort(parts.begin(), parts.end());
  return render(" nodes are unavailable", node_total_, std::move(parts));
}

predicate_failure diagnose_node(const node& n, const resources& free, const resources& request,
                                const placement_constraints* c, fit_diagnosis& out) {
  auto v = check_static(n, c, request);
  if (!v.ok()) {
    out.add_static(n, v, request);
    return v.failure;
  }
  if (!fits(request, free)) {
    out.add_resources(request, free, false);
    return predicate_failure::insufficient_resources;
  }
  return predicate_failure::none;
}

} // namespace phalanx::scheduler
