#include "scheduler/pod_preferences.hpp"

#include "scheduler/pod_neighbourhood.hpp"
#include "scheduler/predicates.hpp"
#include "scheduler/scores.hpp"

#include <algorithm>
#include <functional>

namespace phalanx::scheduler {

namespace {

bool has_schedule_anyway(const placement_constraints& c) noexcept {
  return std::any_of(c.topology_spread.begin(), c.topology_spread.end(),
                     [](const auto& t) { return !t.do_not_schedule; });
}

bool any_weighted_selects(const std::vector<weighted_pod_affinity_term>& terms,
                          std::string_view owner_namespace, const pod& other,
                          const namespace_directory* namespaces) noexcept {
  return std::any_of(terms.begin(), terms.end(), [&](const weighted_pod_affinity_term& w) {
    return term_selects(w.term, owner_namespace, other, namespaces);
  });
}

} // namespace

bool has_pod_preferences(const pod& p) noexcept {
  const auto* c = p.constraints.get();
  return c && (!c->preferred_pod_affinity.empty() || !c->preferred_pod_anti_affinity.empty() ||
               has_schedule_anyway(*c));
}

bool has_scoring_terms(const pod& p) noexcept {
  const auto* c = p.constraints.get();
  return c && (!c->required_pod_affinity.empty() || !c->preferred_pod_affinity.empty() ||
               !c->preferred_pod_anti_affinity.empty());
}

bool scoring_terms_select(const pod& owner, const pod& incoming,
                          const namespace_directory* namespaces) noexcept {
  const auto& c = owner.placement();
  std::string_view ns = owner.meta.namespace_name;
  return std::any_of(c.required_pod_affinity.begin(), c.required_pod_affinity.end(),
                     [&](const pod_affinity_term& t) {
                       return term_selects(t, ns, incoming, namespaces);
                     }) ||
         any_weighted_selects(c.preferred_pod_affinity, ns, incoming, namespaces) ||
         any_weighted_selects(c.preferred_pod_anti_affinity, ns, incoming, namespaces);
}

std::size_t pod_preferences::value_key_hash::operator()(const value_key& d) const noexcept {
  return std::hash<std::string_view>{}(d.value) ^ (std::size_t(d.key) * 0x9e3779b97f4a7c15ULL);
}

void pod_preferences::clear() {
  kinds_.clear();
  keys_.clear();
  ids_.clear();
  for (auto& by_node : node_domains_)
    by_node.clear();
}

uint32_t pod_preferences::key_index(std::string_view key) {
  auto i = std::find(keys_.begin(), keys_.end(), key);
  if (i != keys_.end())
    return uint32_t(i - keys_.begin());
  keys_.push_back(key);
  if (node_domains_.size() < keys_.size())
    node_domains_.emplace_back();
  return uint32_t(keys_.size() - 1);
}

uint32_t pod_preferences::domain_of(uint32_t node_index, const node& n, uint32_t key) const {
  auto& by_node = node_domains_[key];
  if (by_node.size() <= node_index)
    by_node.resize(std::size_t(node_index) + 1, not_looked_up);
  uint32_t& id = by_node[node_index];
  if (id == not_looked_up) {
    auto v = n.meta.labels.find(keys_[key]);
    id = v ? ids_.try_emplace({key, *v}, uint32_t(ids_.size())).first->second : no_domain;
  }
  return id;
}

void pod_preferences::bump(std::vector<int64_t>& counts, uint32_t at, int64_t delta) {
  if (counts.size() <= at)
    counts.resize(std::size_t(at) + 1, 0);
  counts[at] += delta;
}

uint32_t pod_preferences::prepare(const pod& incoming) {
  auto& k = kinds_.emplace_back();
  k.first = &incoming;
  const auto& c = incoming.placement();
  k.own_terms = !c.preferred_pod_affinity.empty() || !c.preferred_pod_anti_affinity.empty();
  for (const auto& t : c.topology_spread) {
    if (t.do_not_schedule)
      continue;
    auto& sp = k.spreads.emplace_back();
    sp.constraint = &t;
    sp.key = key_index(t.topology_key);
    sp.selects_none = !t.selector;
    sp.selector = spread_selector(t, incoming);  // As for DoNotSchedule constraints.
    sp.per_node = t.topology_key == hostname_label;
  }
  return uint32_t(kinds_.size() - 1);
}

void pod_preferences::gather(const node_view& view) {
  const bool every_pod = std::any_of(kinds_.begin(), kinds_.end(), [](const kind& k) {
    return k.own_terms || !k.spreads.empty();
  });
  if (!every_pod && view.scoring_term_pods() == 0)
    return;
  for (std::size_t i = 0; i < view.size(); ++i) {
    if (!view.is_live(i))
      continue;
    auto counts = view.rule_counts(i);
    if (counts.pods == 0 || (!every_pod && counts.scoring_terms == 0))
      continue;
    const node& n = view.at(i);
    view.visit_pods(i, [&](const pod& p) {
      if (every_pod || has_scoring_terms(p))
        add(uint32_t(i), n, p);
    });
  }
}

void pod_preferences::add(uint32_t node_index, const node& n, const pod& p) {
  update(node_index, n, p, +1);
}

void pod_preferences::remove(uint32_t node_index, const node& n, const pod& p) {
  update(node_index, n, p, -1);
}

bool pod_preferences::has_spread_keys(const kind& k, uint32_t node_index, const node& n) const {
  return std::all_of(k.spreads.begin(), k.spreads.end(), [&](const spread& sp) {
    return domain_of(node_index, n, sp.key) != no_domain;
  });
}

bool pod_preferences::spread_eligible(const kind& k, const spread& sp, uint32_t node_index,
                                      const node& n) const {
  return has_spread_keys(k, node_index, n) &&
         spread_includes_node(*sp.constraint, k.first->placement(), n);
}

void pod_preferences::add_weight(kind& k, std::string_view key, uint32_t node_index,
                                 const node& n, int64_t weight) {
  uint32_t key_at = key_index(key);
  uint32_t id = domain_of(node_index, n, key_at);
  if (id == no_domain)
    return;
  bump(k.weights, id, weight);
  if (std::find(k.weight_keys.begin(), k.weight_keys.end(), key_at) == k.weight_keys.end())
    k.weight_keys.push_back(key_at);
}

void pod_preferences::update(uint32_t node_index, const node& n, const pod& p, int64_t delta) {
  const auto& pc = p.placement();
  std::string_view p_namespace = p.meta.namespace_name;
  for (auto& k : kinds_) {
    const pod& in = *k.first;
    const auto& ic = in.placement();
    std::string_view in_namespace = in.meta.namespace_name;
    for (auto& sp : k.spreads) {
      if (sp.selects_none || p_namespace != in_namespace || !matches(sp.selector, p.meta.labels))
        continue;
      // kube-scheduler counts a hostname constraint on the scored node itself, other keys over
      // the eligible nodes of each domain.
      if (sp.per_node)
        bump(sp.counts, node_index, delta);
      else if (spread_eligible(k, sp, node_index, n))
        bump(sp.counts, domain_of(node_index, n, sp.key), delta);
    }
    // The incoming pod's preferences about p.
    for (const auto& w : ic.preferred_pod_affinity)
      if (term_selects(w.term, in_namespace, p, namespaces_))
        add_weight(k, w.term.topology_key, node_index, n, delta * w.weight);
    for (const auto& w : ic.preferred_pod_anti_affinity)
      if (term_selects(w.term, in_namespace, p, namespaces_))
        add_weight(k, w.term.topology_key, node_index, n, -delta * w.weight);
    // p's terms about the incoming pod: its required affinity counts too
    // (hard_pod_affinity_weight), its required anti-affinity only filters.
    for (const auto& t : pc.required_pod_affinity)
      if (term_selects(t, p_namespace, in, namespaces_))
        add_weight(k, t.topology_key, node_index, n, delta * hard_pod_affinity_weight);
    for (const auto& w : pc.preferred_pod_affinity)
      if (term_selects(w.term, p_namespace, in, namespaces_))
        add_weight(k, w.term.topology_key, node_index, n, delta * w.weight);
    for (const auto& w : pc.preferred_pod_anti_affinity)
      if (term_selects(w.term, p_namespace, in, namespaces_))
        add_weight(k, w.term.topology_key, node_index, n, -delta * w.weight);
  }
}

bool pod_preferences::depends_on_pods(uint32_t kind_index) const noexcept {
  const kind& k = kinds_[kind_index];
  return k.own_terms || !k.spreads.empty() || !k.weight_keys.empty();
}

bool pod_preferences::spreads(uint32_t kind_index) const noexcept {
  return !kinds_[kind_index].spreads.empty();
}

int64_t pod_preferences::inter_pod_affinity_score(uint32_t kind_index, scored_node n) const {
  const kind& k = kinds_[kind_index];
  int64_t score = 0;
  for (uint32_t key : k.weight_keys) {
    uint32_t id = domain_of(n.index, *n.facts, key);
    if (id < k.weights.size())
      score += k.weights[id];
  }
  return score;
}

void pod_preferences::topology_weights(uint32_t kind_index, std::span<const scored_node> scored,
                                       std::vector<int64_t>& weights_q32) const {
  const kind& k = kinds_[kind_index];
  weights_q32.clear();
  for (const auto& sp : k.spreads) {
    // The distinct domains, counted with a fresh stamp per constraint instead of a set.
    ++stamp_;
    if (seen_.size() < ids_.size())
      seen_.resize(ids_.size(), 0);
    int64_t scored_nodes = 0;
    int64_t domains = 0;
    for (const auto& n : scored) {
      if (!has_spread_keys(k, n.index, *n.facts))
        continue;
      ++scored_nodes;
      if (sp.per_node)
        continue;
      uint32_t id = domain_of(n.index, *n.facts, sp.key);
      if (seen_.size() <= id)
        seen_.resize(std::size_t(id) + 1, 0);
      if (seen_[id] != stamp_) {
        seen_[id] = stamp_;
        ++domains;
      }
    }
    weights_q32.push_back(topology_weight_q32(sp.per_node ? scored_nodes : domains));
  }
}

std::optional<int64_t> pod_preferences::topology_spread_score(
    uint32_t kind_index, scored_node n, std::span<const int64_t> weights_q32) const {
  const kind& k = kinds_[kind_index];
  if (!has_spread_keys(k, n.index, *n.facts))
    return std::nullopt;
  // count * ln(domains + 2) + maxSkew - 1 per constraint, summed in fixed point and rounded
  // half up once, as kube-scheduler rounds the float sum.
  int64_t sum_q32 = 0;
  for (std::size_t i = 0; i < k.spreads.size(); ++i) {
    const auto& sp = k.spreads[i];
    uint32_t at = sp.per_node ? n.index : domain_of(n.index, *n.facts, sp.key);
    int64_t count = at < sp.counts.size() ? sp.counts[at] : 0;
    sum_q32 += count * weights_q32[i] + (int64_t(sp.constraint->max_skew - 1) << 32);
  }
  return (sum_q32 + (int64_t(1) << 31)) >> 32;
}

} // namespace phalanx::scheduler
