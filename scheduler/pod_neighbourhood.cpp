#include "scheduler/pod_neighbourhood.hpp"

#include <algorithm>
#include <functional>

namespace phalanx::scheduler {

std::string_view neighbour_reason(predicate_failure f) noexcept {
  switch (f) {
    case predicate_failure::host_ports:
      return reason_host_ports;
    case predicate_failure::existing_pod_anti_affinity:
      return reason_existing_pod_anti_affinity;
    case predicate_failure::pod_affinity:
      return reason_pod_affinity;
    case predicate_failure::pod_anti_affinity:
      return reason_pod_anti_affinity;
    case predicate_failure::topology_spread:
      return reason_topology_spread;
    case predicate_failure::topology_spread_label:
      return reason_topology_spread_label;
    default:
      return {};
  }
}

bool matches(const label_selector& selector, const label_set& labels) noexcept {
  for (const auto& [key, value] : selector.match_labels.entries()) {
    auto have = labels.find(key);
    if (!have || *have != value)
      return false;
  }
  // In, NotIn, Exists and DoesNotExist read a label set as node selectors do.
  return std::all_of(selector.match_expressions.begin(), selector.match_expressions.end(),
                     [&](const node_selector_requirement& r) {
                       return matches_requirement(labels, r);
                     });
}

bool spread_includes_node(const topology_spread_constraint& t, const placement_constraints& c,
                          const node& n) noexcept {
  if (t.honor_node_affinity && !matches_node_affinity(n, c))
    return false;
  return !t.honor_node_taints || first_untolerated_taint(n, c.tolerations) < 0;
}

label_selector spread_selector(const topology_spread_constraint& t, const pod& incoming) {
  label_selector out = t.selector.value_or(label_selector{});
  for (const auto& key : t.match_label_keys)
    if (auto v = incoming.meta.labels.find(key))
      out.match_labels.set(key, std::string(*v));
  return out;
}

label_set namespace_labels(std::string_view name) {
  return label_set{{namespace_name_label, name}};
}

namespace {

bool selects_namespace(const pod_affinity_term& term, std::string_view owner_namespace,
                       std::string_view other_namespace,
                       const namespace_directory* namespaces) noexcept {
  if (std::find(term.namespaces.begin(), term.namespaces.end(), other_namespace) !=
      term.namespaces.end())
    return true;
  if (term.namespace_selector) {
    const auto& s = *term.namespace_selector;
    if (s.match_labels.empty() && s.match_expressions.empty())
      return true;  // Every namespace, without building a label set per pod compared.
    if (const label_set* known = namespaces ? namespaces->find(other_namespace) : nullptr)
      return matches(s, *known);
    return matches(s, namespace_labels(other_namespace));
  }
  return term.namespaces.empty() && owner_namespace == other_namespace;
}

bool selects_all(std::span<const pod_affinity_term> terms, std::string_view owner_namespace,
                 const pod& other, const namespace_directory* namespaces) noexcept {
  return std::all_of(terms.begin(), terms.end(), [&](const pod_affinity_term& t) {
    return term_selects(t, owner_namespace, other, namespaces);
  });
}

std::string_view address_of(const host_port& p) noexcept {
  return p.host_ip.empty() ? std::string_view("0.0.0.0") : std::string_view(p.host_ip);
}

} // namespace

bool term_selects(const pod_affinity_term& term, std::string_view owner_namespace,
                  const pod& other, const namespace_directory* namespaces) noexcept {
  return term.selector &&
         selects_namespace(term, owner_namespace, other.meta.namespace_name, namespaces) &&
         matches(*term.selector, other.meta.labels);
}

bool ports_conflict(const host_port& a, const host_port& b) noexcept {
  if (a.port != b.port || a.protocol != b.protocol)
    return false;
  auto ia = address_of(a);
  auto ib = address_of(b);
  return ia == "0.0.0.0" || ib == "0.0.0.0" || ia == ib;
}

bool any_port_conflict(std::span<const host_port> wanted, std::span<const host_port> used) noexcept {
  for (const auto& w : wanted)
    for (const auto& u : used)
      if (ports_conflict(w, u))
        return true;
  return false;
}

bool has_neighbour_rules(const pod& p) noexcept {
  const auto* c = p.constraints.get();
  return c && (!c->required_pod_affinity.empty() || !c->required_pod_anti_affinity.empty() ||
               !c->host_ports.empty() ||
               std::any_of(c->topology_spread.begin(), c->topology_spread.end(),
                           [](const auto& t) { return t.do_not_schedule; }));
}

bool has_required_anti_affinity(const pod& p) noexcept {
  return p.constraints && !p.constraints->required_pod_anti_affinity.empty();
}

std::size_t pod_neighbourhood::domain_hash::operator()(const domain& d) const noexcept {
  auto h = std::hash<std::string_view>{}(d.key);
  return h ^ (std::hash<std::string_view>{}(d.value) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

void pod_neighbourhood::clear() {
  kinds_.clear();
  ports_.clear();
  spreads_ = false;
  ++generation_;
}

uint32_t pod_neighbourhood::prepare(const pod& incoming) {
  auto& k = kinds_.emplace_back();
  k.first = &incoming;
  const auto& c = incoming.placement();
  k.matches_own_affinity =
      selects_all(c.required_pod_affinity, incoming.meta.namespace_name, incoming, namespaces_);
  for (const auto& t : c.topology_spread) {
    if (!t.do_not_schedule)
      continue;
    auto& sp = k.spreads.emplace_back();
    sp.constraint = &t;
    sp.selects_none = !t.selector;
    sp.selector = spread_selector(t, incoming);
    sp.self_match = !sp.selects_none && matches(sp.selector, incoming.meta.labels);
    spreads_ = true;
  }
  return uint32_t(kinds_.size() - 1);
}

bool pod_neighbourhood::spread_eligible(const kind& k, const spread& sp, const node& n) {
  const auto& c = k.first->placement();
  // A node counts only when it has every key of the pod's DoNotSchedule constraints.
  for (const auto& other : k.spreads)
    if (!n.meta.labels.contains(other.constraint->topology_key))
      return false;
  return spread_includes_node(*sp.constraint, c, n);
}

void pod_neighbourhood::add_node(uint32_t /*node_index*/, const node& n) {
  for (auto& k : kinds_)
    for (auto& sp : k.spreads)
      if (spread_eligible(k, sp, n)) {
        auto v = n.meta.labels.find(sp.constraint->topology_key);
        if (sp.counts.try_emplace({sp.constraint->topology_key, *v}, 0).second)
          ++generation_;
        sp.fewest_stale = true;
      }
}

void pod_neighbourhood::bump(domain_counts& counts, domain d, int32_t delta) {
  auto [i, fresh] = counts.try_emplace(d, 0);
  i->second += delta;
  // Verdicts read only whether a domain is counted, not how often.
  if (fresh)
    ++generation_;
  if (i->second <= 0) {
    counts.erase(i);
    ++generation_;
  }
}

void pod_neighbourhood::add(uint32_t node_index, const node& n, const pod& p) {
  update(node_index, n, p, +1);
}

void pod_neighbourhood::remove(uint32_t node_index, const node& n, const pod& p) {
  update(node_index, n, p, -1);
}

void pod_neighbourhood::update(uint32_t node_index, const node& n, const pod& p, int32_t delta) {
  const auto& labels = n.meta.labels;
  const auto& pc = p.placement();
  for (auto& k : kinds_) {
    const pod& in = *k.first;
    const auto& ic = in.placement();
    // Topology spread: the pods a constraint selects, in the pod's namespace, on eligible nodes.
    for (auto& sp : k.spreads)
      if (!sp.selects_none && p.meta.namespace_name == in.meta.namespace_name &&
          matches(sp.selector, p.meta.labels) && spread_eligible(k, sp, n)) {
        auto v = labels.find(sp.constraint->topology_key);
        sp.counts[{sp.constraint->topology_key, *v}] += delta;
        sp.fewest_stale = true;
        ++generation_;  // Skew verdicts read the counts themselves.
      }
    // The incoming pod's affinity: pods matching every term mark each term's domain.
    if (!ic.required_pod_affinity.empty() &&
        selects_all(ic.required_pod_affinity, in.meta.namespace_name, p, namespaces_))
      for (const auto& t : ic.required_pod_affinity)
        if (auto v = labels.find(t.topology_key))
          bump(k.affinity, {t.topology_key, *v}, delta);
    // Its anti-affinity: a pod matching a term marks that term's domain.
    for (const auto& t : ic.required_pod_anti_affinity)
      if (term_selects(t, in.meta.namespace_name, p, namespaces_))
        if (auto v = labels.find(t.topology_key))
          bump(k.anti_affinity, {t.topology_key, *v}, delta);
    // The other pod's anti-affinity against the incoming pod.
    for (const auto& t : pc.required_pod_anti_affinity)
      if (term_selects(t, p.meta.namespace_name, in, namespaces_))
        if (auto v = labels.find(t.topology_key)) {
          bump(k.existing_anti, {t.topology_key, *v}, delta);
          if (std::find(k.existing_anti_keys.begin(), k.existing_anti_keys.end(),
                        std::string_view(t.topology_key)) == k.existing_anti_keys.end())
            k.existing_anti_keys.push_back(t.topology_key);
        }
  }
  if (pc.host_ports.empty())
    return;
  ++generation_;
  auto& used = ports_[node_index];
  if (delta > 0) {
    used.insert(used.end(), pc.host_ports.begin(), pc.host_ports.end());
    return;
  }
  for (const auto& port : pc.host_ports)
    if (auto i = std::find(used.begin(), used.end(), port); i != used.end())
      used.erase(i);
  if (used.empty())
    ports_.erase(node_index);
}

predicate_failure pod_neighbourhood::check(uint32_t kind_index, uint32_t node_index,
                                           const node& n) const {
  const kind& k = kinds_[kind_index];
  const auto& ic = k.first->placement();
  const auto& labels = n.meta.labels;
  if (!ic.host_ports.empty())
    if (auto used = ports_.find(node_index); used != ports_.end() &&
                                             any_port_conflict(ic.host_ports, used->second))
      return predicate_failure::host_ports;
  if (!k.spreads.empty())
    if (auto f = check_spread(k, n); f != predicate_failure::none)
      return f;
  for (auto key : k.existing_anti_keys)
    if (auto v = labels.find(key); v && k.existing_anti.count({key, *v}) != 0)
      return predicate_failure::existing_pod_anti_affinity;
  if (!ic.required_pod_affinity.empty()) {
    bool pods_exist = true;
    for (const auto& t : ic.required_pod_affinity) {
      auto v = labels.find(t.topology_key);
      if (!v)
        return predicate_failure::pod_affinity;  // Every topology key must be on the node.
      if (k.affinity.count({t.topology_key, *v}) == 0)
        pods_exist = false;
    }
    if (!pods_exist && !(k.affinity.empty() && k.matches_own_affinity))
      return predicate_failure::pod_affinity;
  }
  for (const auto& t : ic.required_pod_anti_affinity)
    if (auto v = labels.find(t.topology_key); v && k.anti_affinity.count({t.topology_key, *v}))
      return predicate_failure::pod_anti_affinity;
  return predicate_failure::none;
}

void pod_neighbourhood::gather(const node_view& view, std::size_t vote_node,
                               std::span<const pod* const> exclude) {
  bool terms = false;  // Some kind's inter-pod terms may select any pod.
  bool ports = false;
  std::vector<std::string_view> keys;  // Their topology keys.
  for (const auto& k : kinds_) {
    const auto& c = k.first->placement();
    for (const auto* list : {&c.required_pod_affinity, &c.required_pod_anti_affinity})
      for (const auto& t : *list) {
        terms = true;
        if (std::find(keys.begin(), keys.end(), std::string_view(t.topology_key)) == keys.end())
          keys.push_back(t.topology_key);
      }
    ports |= !c.host_ports.empty();
  }
  const bool voting = vote_node != no_node;
  const node* here = voting ? &view.at(vote_node) : nullptr;
  auto shares_a_domain = [&](const node& other) {
    for (auto key : keys) {
      auto mine = here->meta.labels.find(key);
      auto theirs = other.meta.labels.find(key);
      if (mine && theirs && *mine == *theirs)
        return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < view.size(); ++i) {
    if (i != vote_node && !view.is_live(i))
      continue;
    const node& n = view.at(i);
    if (spreads_)
      add_node(uint32_t(i), n);
    auto counts = view.rule_counts(i);
    if (counts.pods == 0)
      continue;
    const bool every_pod =
        i == vote_node || spreads_ || (terms && (!voting || shares_a_domain(n)));
    const bool port_holders = ports && !voting;  // A vote's own node reads every pod anyway.
    if (!every_pod && counts.anti_affinity == 0 && !(port_holders && counts.host_ports > 0))
      continue;
    view.visit_pods(i, [&](const pod& p) {
      if (std::find(exclude.begin(), exclude.end(), &p) != exclude.end())
        return;
      if (every_pod || has_required_anti_affinity(p) ||
          (port_holders && !p.placement().host_ports.empty()))
        add(uint32_t(i), n, p);
    });
  }
}

predicate_failure pod_neighbourhood::check_spread(const kind& k, const node& n) {
  for (const auto& sp : k.spreads) {
    const auto& t = *sp.constraint;
    auto v = n.meta.labels.find(t.topology_key);
    if (!v)
      return predicate_failure::topology_spread_label;
    if (sp.fewest_stale) {
      sp.fewest = 0;
      bool first = true;
      for (const auto& [_, count] : sp.counts) {
        sp.fewest = first ? count : std::min(sp.fewest, count);
        first = false;
      }
      sp.fewest_stale = false;
    }
    int32_t fewest = sp.fewest;
    if (t.min_domains && int64_t(sp.counts.size()) < *t.min_domains)
      fewest = 0;
    auto here = sp.counts.find({t.topology_key, *v});
    int32_t in_domain = here == sp.counts.end() ? 0 : here->second;
    if (in_domain + (sp.self_match ? 1 : 0) - fewest > t.max_skew)
      return predicate_failure::topology_spread;
  }
  return predicate_failure::none;
}

} // namespace phalanx::scheduler
