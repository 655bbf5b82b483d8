#include "scheduler/node_view.hpp"

#include "scheduler/pod_neighbourhood.hpp"
#include "scheduler/pod_preferences.hpp"

#include <algorithm>

namespace phalanx::scheduler {

void namespace_directory::set(std::string name, label_set labels) {
  labels_.insert_or_assign(std::move(name), std::move(labels));
}

const label_set* namespace_directory::find(std::string_view name) const noexcept {
  auto i = labels_.find(name);
  return i == labels_.end() ? nullptr : &i->second;
}

std::size_t cluster_snapshot::add_node(node n) {
  free_.push_back(n.allocatable);
  nodes_.push_back(std::move(n));
  live_.push_back(true);
  return nodes_.size() - 1;
}

void cluster_snapshot::allocate(std::size_t index, const resources& request) {
  free_[index] -= request;
}

void cluster_snapshot::release(std::size_t index, const resources& request) {
  free_[index] += request;
}

resources cluster_snapshot::total_allocatable() const {
  resources out;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (live_[i])
      out += nodes_[i].allocatable;
  return out;
}

resources cluster_snapshot::total_free() const {
  resources out;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (live_[i])
      out += free_[i];
  return out;
}

std::size_t cluster_snapshot::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].meta.name == name)
      return i;
  return nodes_.size();
}

} // namespace phalanx::scheduler

namespace phalanx::scheduler {

void cluster_snapshot::add_pod(std::size_t index, std::shared_ptr<const pod> p) {
  if (pods_.size() <= index)
    pods_.resize(index + 1);
  anti_affinity_pods_ += has_required_anti_affinity(*p) ? 1 : 0;
  scoring_term_pods_ += has_scoring_terms(*p) ? 1 : 0;
  pods_[index].push_back(std::move(p));
}

void cluster_snapshot::remove_pod(std::size_t index, const pod* p) {
  if (index >= pods_.size())
    return;
  auto& on_node = pods_[index];
  auto i = std::find_if(on_node.begin(), on_node.end(), [&](const auto& q) { return q.get() == p; });
  if (i == on_node.end())
    return;
  anti_affinity_pods_ -= has_required_anti_affinity(**i) ? 1 : 0;
  scoring_term_pods_ -= has_scoring_terms(**i) ? 1 : 0;
  on_node.erase(i);
}

void cluster_snapshot::visit_pods(std::size_t index, const pod_visitor& visit) const {
  if (index >= pods_.size())
    return;
  for (const auto& p : pods_[index])
    visit(*p);
}

pod_rule_counts cluster_snapshot::rule_counts(std::size_t index) const noexcept {
  pod_rule_counts out;
  if (index >= pods_.size())
    return out;
  for (const auto& p : pods_[index]) {
    out.anti_affinity += has_required_anti_affinity(*p) ? 1 : 0;
    out.host_ports += p->placement().host_ports.empty() ? 0 : 1;
    out.scoring_terms += has_scoring_terms(*p) ? 1 : 0;
    ++out.pods;
  }
  return out;
}

} // namespace phalanx::scheduler
