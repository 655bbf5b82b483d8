#include "scheduler/node_view.hpp"

namespace phalanx::scheduler {

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
