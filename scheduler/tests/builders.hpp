#pragma once

// Fluent builders for tests (STYLE.md "Tests"): make_node("n1").cpu("4").memory("16Gi"),
// make_pod("w-0").cpu("1").role("worker"), make_gang("tf", 3).task("ps", 1, cpu).task(...).
// Quantities are parsed with the real parser; a bad literal aborts the test binary loudly.

#include "scheduler/model.hpp"
#include "scheduler/quantity.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler::testing {

/// Parses a test literal or aborts: tests must not run on a silently wrong amount.
inline int64_t amount(std::string_view resource, std::string_view text) {
  auto r = parse_resource_amount(resource, text);
  if (!r) {
    std::fprintf(stderr, "bad test literal %.*s=%.*s: %s\n", int(resource.size()), resource.data(),
                 int(text.size()), text.data(), r.error().to_string().c_str());
    std::abort();
  }
  return *r;
}

/// resources{} from literals: res("cpu", "2", "memory", "4Gi").
template <class... Args>
resources res(Args&&... args) {
  static_assert(sizeof...(Args) % 2 == 0, "res() takes name/value pairs");
  resources out;
  std::string_view parts[] = {std::string_view(args)...};
  for (std::size_t i = 0; i < sizeof...(Args); i += 2)
    out.set(parts[i], amount(parts[i], parts[i + 1]));
  return out;
}

class node_builder {
 public:
  explicit node_builder(std::string name) {
    node_.meta.name = std::move(name);
    node_.allocatable.pods = 110;
  }
  node_builder& cpu(std::string_view q) { return set(cpu_resource, q); }
  node_builder& memory(std::string_view q) { return set(memory_resource, q); }
  node_builder& ephemeral(std::string_view q) { return set(ephemeral_storage_resource, q); }
  node_builder& pods(int64_t n) { node_.allocatable.pods = n; return *this; }
  node_builder& gpu(int64_t n) { node_.allocatable.set("nvidia.com/gpu", n); return *this; }
  node_builder& extended(std::string_view name, int64_t n) {
    node_.allocatable.set(name, n);
    return *this;
  }
  node_builder& label(std::string key, std::string value) {
    node_.meta.labels.set(std::move(key), std::move(value));
    return *this;
  }
  node_builder& taint(std::string key, std::string value,
                      taint_effect effect = taint_effect::no_schedule) {
    node_.taints.push_back({std::move(key), std::move(value), effect});
    return *this;
  }
  node_builder& unschedulable(bool value = true) {
    node_.unschedulable = value;
    return *this;
  }
  node obj() const { return node_; }
  operator node() const { return node_; }  // NOLINT: builders convert implicitly.

 private:
  node_builder& set(std::string_view name, std::string_view q) {
    node_.allocatable.set(name, amount(name, q));
    return *this;
  }
  node node_;
};

inline node_builder make_node(std::string name) { return node_builder(std::move(name)); }

class pod_builder {
 public:
  explicit pod_builder(std::string name) {
    pod_.meta.name = std::move(name);
    pod_.meta.namespace_name = "default";
    pod_.meta.uid = "uid-" + pod_.meta.name;
    pod_.requests.pods = 1;
  }
  pod_builder& ns(std::string value) { pod_.meta.namespace_name = std::move(value); return *this; }
  pod_builder& uid(std::string value) { pod_.meta.uid = std::move(value); return *this; }
  pod_builder& cpu(std::string_view q) { return set(cpu_resource, q); }
  pod_builder& memory(std::string_view q) { return set(memory_resource, q); }
  pod_builder& ephemeral(std::string_view q) { return set(ephemeral_storage_resource, q); }
  pod_builder& gpu(int64_t n) { pod_.requests.set("nvidia.com/gpu", n); return *this; }
  pod_builder& extended(std::string_view name, int64_t n) {
    pod_.requests.set(name, n);
    return *this;
  }
  pod_builder& requests(resources r) {
    r.pods = 1;
    pod_.requests = std::move(r);
    return *this;
  }
  pod_builder& role(std::string value) { pod_.role = std::move(value); return *this; }
  pod_builder& group(std::string value) { pod_.group = std::move(value); return *this; }
  pod_builder& priority(int32_t value) { pod_.priority = value; return *this; }
  pod_builder& created(timestamp t) { pod_.meta.creation_time = t; return *this; }
  pod_builder& selector(std::string key, std::string value) {
    mutable_constraints().node_selector.set(std::move(key), std::move(value));
    return *this;
  }
  pod_builder& affinity(node_selector_term term) {
    mutable_constraints().required_node_affinity.push_back(std::move(term));
    return *this;
  }
  pod_builder& tolerate(std::string key, std::string value,
                        std::optional<taint_effect> effect = taint_effect::no_schedule) {
    mutable_constraints().tolerations.push_back(
        {std::move(key), toleration_operator::equal, std::move(value), effect, std::nullopt});
    return *this;
  }
  /// A scheduling gate (spec.schedulingGates).
  pod_builder& gate(std::string name) {
    mutable_constraints().scheduling_gates.push_back(std::move(name));
    return *this;
  }
  pod_builder& label(std::string key, std::string value) {
    pod_.meta.labels.set(std::move(key), std::move(value));
    return *this;
  }
  /// Required podAffinity / podAntiAffinity terms, and preferred ones.
  pod_builder& pod_affinity(pod_affinity_term term) {
    mutable_constraints().required_pod_affinity.push_back(std::move(term));
    return *this;
  }
  pod_builder& anti_affinity(pod_affinity_term term) {
    mutable_constraints().required_pod_anti_affinity.push_back(std::move(term));
    return *this;
  }
  pod_builder& preferred_affinity(int32_t weight, pod_affinity_term term) {
    mutable_constraints().preferred_pod_affinity.push_back({weight, std::move(term)});
    return *this;
  }
  pod_builder& preferred_anti_affinity(int32_t weight, pod_affinity_term term) {
    mutable_constraints().preferred_pod_anti_affinity.push_back({weight, std::move(term)});
    return *this;
  }
  /// A preferred node affinity term.
  pod_builder& prefer_nodes(int32_t weight, node_selector_term term) {
    mutable_constraints().preferred_node_affinity.push_back({weight, std::move(term)});
    return *this;
  }
  /// A ScheduleAnyway topology spread constraint over pods labelled key=value.
  pod_builder& spread_anyway(std::string topology_key, int32_t max_skew, std::string key,
                             std::string value) {
    spread(std::move(topology_key), max_skew, std::move(key), std::move(value));
    last_spread().do_not_schedule = false;
    return *this;
  }
  /// A DoNotSchedule topology spread constraint over pods labelled key=value.
  pod_builder& spread(std::string topology_key, int32_t max_skew, std::string key,
                      std::string value) {
    topology_spread_constraint t;
    t.topology_key = std::move(topology_key);
    t.max_skew = max_skew;
    t.selector.emplace();
    t.selector->match_labels.set(std::move(key), std::move(value));
    mutable_constraints().topology_spread.push_back(std::move(t));
    return *this;
  }
  /// The last spread constraint, to adjust.
  topology_spread_constraint& last_spread() { return mutable_constraints().topology_spread.back(); }
  /// A container port with this hostPort.
  pod_builder& host_port(int32_t port, std::string protocol = "TCP", std::string ip = "") {
    mutable_constraints().host_ports.push_back({std::move(protocol), std::move(ip), port});
    return *this;
  }
  pod_builder& tolerate_exists(std::string key, std::optional<taint_effect> effect = {}) {
    mutable_constraints().tolerations.push_back(
        {std::move(key), toleration_operator::exists, "", effect, std::nullopt});
    return *this;
  }
  pod_builder& bound_to(std::string node_name, pod_phase phase = pod_phase::running) {
    pod_.node_name = std::move(node_name);
    pod_.phase = phase;
    return *this;
  }
  pod obj() const {
    pod out = pod_;
    if (constraints_)
      out.constraints = std::make_shared<const placement_constraints>(*constraints_);
    return out;
  }
  operator pod() const { return obj(); }  // NOLINT: builders convert implicitly.

 private:
  pod_builder& set(std::string_view name, std::string_view q) {
    pod_.requests.set(name, amount(name, q));
    return *this;
  }
  placement_constraints& mutable_constraints() {
    if (!constraints_)
      constraints_ = std::make_shared<placement_constraints>();
    return *constraints_;
  }
  pod pod_;
  std::shared_ptr<placement_constraints> constraints_;
};

inline pod_builder make_pod(std::string name) { return pod_builder(std::move(name)); }

/// A pod affinity term selecting pods labelled key=value in the owner's namespace, over the
/// domains of `topology_key`.
inline pod_affinity_term pods_labelled(std::string key, std::string value,
                                       std::string topology_key = "kubernetes.io/hostname") {
  pod_affinity_term t;
  t.selector.emplace();
  t.selector->match_labels.set(std::move(key), std::move(value));
  t.topology_key = std::move(topology_key);
  return t;
}

/// A PodGroup and its pods. Pods of one task share one constraints instance, like a job's pods.
struct gang {
  pod_group group;
  std::vector<pod> pods;
  /// Pointers into `pods` for a gang_request; valid while this gang lives and is not resized.
  std::vector<const pod*> pod_pointers() const {
    std::vector<const pod*> out;
    for (const auto& p : pods)
      out.push_back(&p);
    return out;
  }
};

class gang_builder {
 public:
  gang_builder(std::string name, int32_t min_member) {
    gang_.group.meta.name = std::move(name);
    gang_.group.meta.namespace_name = "default";
    gang_.group.meta.uid = "uid-" + gang_.group.meta.name;
    gang_.group.min_member = min_member;
  }
  /// Adds `replicas` pods of `role` named "<gang>-<role>-<i>" with the given requests.
  gang_builder& task(std::string role, int32_t replicas, resources requests,
                     std::optional<int32_t> min = std::nullopt) {
    requests.pods = 1;
    for (int32_t i = 0; i < replicas; ++i) {
      pod p;
      p.meta.name = gang_.group.meta.name + "-" + role + "-" + std::to_string(i);
      p.meta.namespace_name = gang_.group.meta.namespace_name;
      p.meta.uid = "uid-" + p.meta.name;
      p.group = gang_.group.meta.name;
      p.role = role;
      p.requests = requests;
      p.priority = gang_.group.priority;
      p.constraints = constraints_;
      gang_.pods.push_back(std::move(p));
    }
    if (min) {
      gang_.group.min_task_member.push_back({role, *min});
      std::sort(gang_.group.min_task_member.begin(), gang_.group.min_task_member.end(),
                [](const auto& a, const auto& b) { return a.role < b.role; });
    }
    return *this;
  }
  gang_builder& queue(std::string name) { gang_.group.queue = std::move(name); return *this; }
  gang_builder& priority(int32_t value) {
    gang_.group.priority = value;
    for (auto& p : gang_.pods)
      p.priority = value;
    return *this;
  }
  gang_builder& min_resources(resources r) { gang_.group.min_resources = std::move(r); return *this; }
  gang_builder& created(timestamp t) { gang_.group.meta.creation_time = t; return *this; }
  /// Constraints for the tasks added after this call.
  gang_builder& constraints(placement_constraints c) {
    constraints_ = std::make_shared<const placement_constraints>(std::move(c));
    return *this;
  }
  gang obj() const { return gang_; }
  operator gang() const { return gang_; }  // NOLINT: builders convert implicitly.

 private:
  gang gang_;
  std::shared_ptr<const placement_constraints> constraints_;
};

inline gang_builder make_gang(std::string name, int32_t min_member) {
  return gang_builder(std::move(name), min_member);
}

} // namespace phalanx::scheduler::testing
