#pragma once

// Shared helpers of the storage tests: temporary directories, field-by-field comparison of model
// objects (pods and jobs have no operator== because of their shared pointers), and seeded random
// objects of every kind.

#include "scheduler/model.hpp"
#include "scheduler/object_status.hpp"
#include "storage/store.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace phalanx::storage::testing {

namespace sch = phalanx::scheduler;

/// True when PHALANX_LONG_TESTS=1: run the long variants.
inline bool long_tests() {
  const char* v = std::getenv("PHALANX_LONG_TESTS");
  return v != nullptr && std::string_view(v) == "1";
}

/// A fresh directory under $TEST_TMPDIR, else /dev/shm when it exists, else /tmp; removed with
/// everything in it. Durability in these tests comes from power_loss_simulator, not from the disk,
/// so a RAM file system only makes them faster (an fsync there costs nothing).
class temp_dir {
 public:
  temp_dir() {
    const char* env = std::getenv("TEST_TMPDIR");
    std::string base = env ? env : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string pattern = base + "/phalanx-storage-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      std::abort();
    path_ = buf.data();
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  std::string sub(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// ------------------------------------------------------------------------------------------------
// Comparison: "" when equal, else the first differing field.

inline std::string diff_pointee(const auto& a, const auto& b, std::string_view field) {
  if (!a && !b)
    return "";
  if (!a || !b)
    return std::string(field) + ": one is null";
  if (!(*a == *b))
    return std::string(field) + ": contents differ";
  return "";
}

inline std::string diff(const sch::pod& a, const sch::pod& b) {
#define PHALANX_CMP(f)                                                                             \
  if (!(a.f == b.f))                                                                               \
    return #f;
  PHALANX_CMP(meta)
  PHALANX_CMP(group)
  PHALANX_CMP(role)
  PHALANX_CMP(requests)
  PHALANX_CMP(priority)
  PHALANX_CMP(priority_class_name)
  PHALANX_CMP(scheduler_name)
  PHALANX_CMP(phase)
  PHALANX_CMP(restart_count)
  PHALANX_CMP(node_name)
  PHALANX_CMP(start_time)
  PHALANX_CMP(finish_time)
#undef PHALANX_CMP
  if (auto d = diff_pointee(a.constraints, b.constraints, "constraints"); !d.empty())
    return d;
  return a.spec_json == b.spec_json ? "" : "spec_json: contents differ";
}

inline std::string diff(const sch::job& a, const sch::job& b) {
#define PHALANX_CMP(f)                                                                             \
  if (!(a.f == b.f))                                                                               \
    return #f;
  PHALANX_CMP(meta)
  PHALANX_CMP(queue)
  PHALANX_CMP(scheduler_name)
  PHALANX_CMP(priority_class_name)
  PHALANX_CMP(priority)
  PHALANX_CMP(min_available)
  PHALANX_CMP(max_retry)
  PHALANX_CMP(policies)
  PHALANX_CMP(plugins)
  PHALANX_CMP(volumes)
  PHALANX_CMP(min_success)
  PHALANX_CMP(ttl_seconds_after_finished)
  PHALANX_CMP(suspended)
  PHALANX_CMP(expansion_version)
#undef PHALANX_CMP
  if (a.tasks.size() != b.tasks.size())
    return "tasks: sizes differ";
  for (std::size_t i = 0; i < a.tasks.size(); ++i) {
    const auto& x = a.tasks[i];
    const auto& y = b.tasks[i];
    std::string at = "tasks[" + std::to_string(i) + "].";
    if (x.name != y.name)
      return at + "name";
    if (x.replicas != y.replicas)
      return at + "replicas";
    if (x.min_available != y.min_available)
      return at + "min_available";
    if (x.policies != y.policies)
      return at + "policies";
    if (x.max_retry != y.max_retry)
      return at + "max_retry";
    if (auto d = diff(x.pod_template, y.pod_template); !d.empty())
      return at + "pod_template." + d;
  }
  return a.spec_json == b.spec_json ? "" : "spec_json: contents differ";
}

inline std::string diff(const job_record& a, const job_record& b) {
  if (auto d = diff(a.job, b.job); !d.empty())
    return d;
  if (!(a.status == b.status))
    return "status";
  return "";
}
inline std::string diff(const sch::node& a, const sch::node& b) {
  return a == b ? "" : "node";
}
inline std::string diff(const queue_record& a, const queue_record& b) {
  return a.queue == b.queue ? "" : "queue";
}
inline std::string diff(const pod_group_record& a, const pod_group_record& b) {
  return a.group == b.group ? "" : "group";
}
inline std::string diff(const sch::priority_class& a, const sch::priority_class& b) {
  return a == b ? "" : "priority class";
}

template <class T>
std::string diff_lists(const std::vector<T>& a, const std::vector<T>& b, std::string_view what) {
  if (a.size() != b.size())
    return std::string(what) + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    if (auto d = diff(a[i], b[i]); !d.empty())
      return std::string(what) + "[" + std::to_string(i) + "]." + d;
  return "";
}

inline std::string diff(const loaded_state& a, const loaded_state& b) {
  for (auto d : {diff_lists(a.nodes, b.nodes, "nodes"), diff_lists(a.queues, b.queues, "queues"),
                 diff_lists(a.pod_groups, b.pod_groups, "pod_groups"),
                 diff_lists(a.pods, b.pods, "pods"), diff_lists(a.jobs, b.jobs, "jobs"),
                 diff_lists(a.priority_classes, b.priority_classes, "priority_classes")})
    if (!d.empty())
      return d;
  return "";
}

// ------------------------------------------------------------------------------------------------
// Random objects. Deterministic for a seed. Free text may hold any byte (records keep bytes
// exactly); names are DNS-like so keys stay readable.

class random_objects {
 public:
  explicit random_objects(uint64_t seed) : rng_(seed) {}

  std::mt19937_64& rng() { return rng_; }

  int64_t between(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool chance(int percent) { return between(0, 99) < percent; }

  std::string name(std::size_t max_len = 12) {
    static constexpr std::string_view chars = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::size_t n = static_cast<std::size_t>(between(1, static_cast<int64_t>(max_len)));
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(chars[static_cast<std::size_t>(between(0, chars.size() - 1))]);
    return out;
  }

  // Any bytes, including NUL, invalid UTF-8 and long runs.
  std::string text(std::size_t max_len = 24) {
    std::size_t n = static_cast<std::size_t>(between(0, static_cast<int64_t>(max_len)));
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(static_cast<char>(between(0, 255)));
    return out;
  }

  int64_t any_i64() {
    switch (between(0, 4)) {
      case 0:
        return 0;
      case 1:
        return INT64_MAX;
      case 2:
        return INT64_MIN;
      case 3:
        return between(-1000, 1000);
      default:
        return static_cast<int64_t>(rng_());
    }
  }
  int32_t any_i32() { return static_cast<int32_t>(any_i64()); }

  sch::timestamp time() { return sch::timestamp{sch::duration{any_i64()}}; }

  sch::label_set labels(int max = 5) {
    sch::label_set out;
    for (int64_t i = between(0, max); i > 0; --i)
      out.set((chance(50) ? "example.com/" : "") + name(), text());
    return out;
  }

  sch::object_meta meta(bool namespaced) {
    sch::object_meta m;
    m.name = name(20);
    if (namespaced)
      m.namespace_name = chance(80) ? "default" : name();
    m.uid = text(36);
    m.labels = labels();
    m.annotations = labels();
    m.creation_time = time();
    m.resource_version = static_cast<uint64_t>(between(0, INT64_MAX));
    return m;
  }

  sch::resources resources() {
    static constexpr std::string_view extended[] = {"nvidia.com/gpu", "example.com/fpga",
                                                    "hugepages-2Mi", "amd.com/gpu"};
    sch::resources r;
    r.cpu_milli = any_i64();
    r.memory_bytes = any_i64();
    r.ephemeral_bytes = chance(50) ? any_i64() : 0;
    r.pods = between(0, 3);
    for (auto e : extended)
      if (chance(30))
        r.set(e, between(1, 8) * (chance(10) ? -1 : 1));
    return r;
  }

  sch::resource_limit limit() {
    static constexpr std::string_view names[] = {"cpu", "memory", "pods", "nvidia.com/gpu",
                                                 "example.com/fpga"};
    sch::resource_limit l;
    for (auto n : names)
      if (chance(40))
        l.set(n, any_i64());
    return l;
  }

  sch::taint_effect effect() {
    return static_cast<sch::taint_effect>(between(0, int(sch::taint_effect_last)));
  }

  std::vector<sch::node_selector_requirement> requirements() {
    std::vector<sch::node_selector_requirement> out;
    for (int64_t i = between(0, 3); i > 0; --i) {
      sch::node_selector_requirement r;
      r.key = name();
      r.op = static_cast<sch::selector_operator>(between(0, int(sch::selector_operator_last)));
      for (int64_t j = between(0, 3); j > 0; --j)
        r.values.push_back(text(10));
      out.push_back(std::move(r));
    }
    return out;
  }

  // Absent, empty and filled selectors: an absent one and an empty one must stay apart.
  std::optional<sch::label_selector> label_selector(int present_percent) {
    if (!chance(present_percent))
      return std::nullopt;
    sch::label_selector s;
    if (chance(80)) {
      s.match_labels = labels(3);
      s.match_expressions = requirements();
    }
    return s;
  }

  sch::pod_affinity_term pod_affinity_term() {
    sch::pod_affinity_term t;
    t.selector = label_selector(80);
    for (int64_t i = between(0, 2); i > 0; --i)
      t.namespaces.push_back(name());
    t.namespace_selector = label_selector(30);
    t.topology_key = chance(90) ? (chance(50) ? "kubernetes.io/" : "") + name() : text(8);
    return t;
  }

  std::vector<sch::weighted_pod_affinity_term> weighted_pod_affinity_terms() {
    std::vector<sch::weighted_pod_affinity_term> out;
    for (int64_t i = between(0, 2); i > 0; --i)
      out.push_back({any_i32(), pod_affinity_term()});
    return out;
  }

  sch::host_port host_port() {
    static constexpr std::string_view protocols[] = {"TCP", "UDP", "SCTP"};
    sch::host_port hp;
    hp.protocol = chance(90) ? std::string(protocols[between(0, 2)]) : text(4);
    if (chance(30))
      hp.host_ip = chance(80) ? "10.0.0." + std::to_string(between(1, 254)) : text(8);
    hp.port = chance(90) ? static_cast<int32_t>(between(1, 65535)) : any_i32();
    return hp;
  }

  // Every field drawn apart: the flags against their defaults, min_domains absent or not (0 and
  // negative values included), selectors absent, empty or filled.
  sch::topology_spread_constraint topology_spread_constraint() {
    sch::topology_spread_constraint t;
    t.max_skew = chance(90) ? static_cast<int32_t>(between(1, 5)) : any_i32();
    t.topology_key = chance(90) ? (chance(50) ? "topology.kubernetes.io/" : "") + name() : text(8);
    t.do_not_schedule = chance(50);
    t.selector = label_selector(80);
    if (chance(40))
      t.min_domains = chance(80) ? static_cast<int32_t>(between(1, 5)) : any_i32();
    t.honor_node_affinity = chance(50);
    t.honor_node_taints = chance(50);
    for (int64_t i = between(0, 2); i > 0; --i)
      t.match_label_keys.push_back(chance(80) ? name() : text(8));
    return t;
  }

  sch::placement_constraints constraints() {
    sch::placement_constraints c;
    c.node_selector = labels(3);
    for (int64_t i = between(0, 2); i > 0; --i)
      c.required_node_affinity.push_back({requirements(), requirements()});
    for (int64_t i = between(0, 3); i > 0; --i) {
      sch::toleration t;
      t.key = chance(80) ? name() : "";
      t.op = static_cast<sch::toleration_operator>(between(0, int(sch::toleration_operator_last)));
      t.value = text(8);
      if (chance(60))
        t.effect = effect();
      if (chance(30))
        t.toleration_seconds = any_i64();
      c.tolerations.push_back(std::move(t));
    }
    for (int64_t i = between(0, 2); i > 0; --i)
      c.scheduling_gates.push_back(chance(50) ? "example.com/" + name() : text(8));
    for (int64_t i = between(0, 2); i > 0; --i)
      c.required_pod_affinity.push_back(pod_affinity_term());
    for (int64_t i = between(0, 2); i > 0; --i)
      c.required_pod_anti_affinity.push_back(pod_affinity_term());
    c.preferred_pod_affinity = weighted_pod_affinity_terms();
    c.preferred_pod_anti_affinity = weighted_pod_affinity_terms();
    for (int64_t i = between(0, 3); i > 0; --i)
      c.host_ports.push_back(host_port());
    for (int64_t i = between(0, 2); i > 0; --i)
      c.topology_spread.push_back(topology_spread_constraint());
    for (int64_t i = between(0, 2); i > 0; --i)
      c.preferred_node_affinity.push_back(
          {int32_t(between(-5, 120)), {requirements(), requirements()}});
    return c;
  }

  sch::node node() {
    sch::node n;
    n.meta = meta(false);
    n.allocatable = resources();
    for (int64_t i = between(0, 3); i > 0; --i)
      n.taints.push_back({name(), text(8), effect()});
    n.unschedulable = chance(20);
    return n;
  }

  queue_record queue() {
    queue_record q;
    q.queue.meta = meta(false);
    q.queue.weight = static_cast<int32_t>(between(1, 65535));
    q.queue.capability = limit();
    q.queue.guarantee = resources();
    q.queue.deserved = limit();
    q.queue.reclaimable = chance(50);
    q.queue.state = static_cast<sch::queue_state>(between(0, int(sch::queue_state_last)));
    q.queue.parent = chance(50) ? name() : "";
    q.queue.priority = any_i32();
    return q;
  }

  sch::priority_class priority_class() {
    sch::priority_class c;
    c.meta = meta(false);
    c.value = any_i32();
    c.global_default = chance(50);
    c.description = chance(50) ? text(40) : "";
    c.preemption =
        static_cast<sch::preemption_policy>(between(0, int(sch::preemption_policy_last)));
    return c;
  }

  pod_group_record pod_group() {
    pod_group_record g;
    g.group.meta = meta(true);
    g.group.min_member = any_i32();
    for (int64_t i = between(0, 3); i > 0; --i)
      g.group.min_task_member.push_back({name(), any_i32()});
    g.group.min_resources = resources();
    g.group.queue = name();
    g.group.priority_class_name = chance(50) ? name() : "";
    g.group.priority = any_i32();
    return g;
  }

  /// A pod; shares `constraints` and `spec` when given (pods of one template).
  sch::pod pod(std::shared_ptr<const sch::placement_constraints> constraints = nullptr,
               sch::shared_string spec = {}) {
    sch::pod p;
    p.meta = meta(true);
    p.group = chance(80) ? name() : "";
    p.role = chance(70) ? name(8) : "";
    p.requests = resources();
    p.priority = any_i32();
    p.priority_class_name = chance(50) ? name() : "";
    p.scheduler_name = chance(50) ? "phalanx" : text(8);
    if (constraints)
      p.constraints = std::move(constraints);
    else if (chance(60))
      p.constraints = std::make_shared<const sch::placement_constraints>(
          chance(10) ? sch::placement_constraints{} : this->constraints());
    if (spec)
      p.spec_json = std::move(spec);
    else if (chance(60))
      p.spec_json = sch::shared_string(text(200));
    p.phase = static_cast<sch::pod_phase>(between(0, int(sch::pod_phase_last)));
    p.node_name = chance(50) ? name() : "";
    p.start_time = time();
    p.finish_time = time();
    p.restart_count = chance(30) ? static_cast<uint16_t>(between(1, 65535)) : 0;
    return p;
  }

  std::vector<sch::lifecycle_policy> policies() {
    std::vector<sch::lifecycle_policy> out;
    for (int64_t i = between(0, 3); i > 0; --i) {
      sch::lifecycle_policy p;
      p.action = name();
      p.event = chance(50) ? name() : "";
      for (int64_t j = between(0, 2); j > 0; --j)
        p.events.push_back(name());
      if (chance(40))
        p.exit_code = any_i32();
      if (chance(40))
        p.timeout = sch::duration{any_i64()};
      out.push_back(std::move(p));
    }
    return out;
  }

  job_record job() {
    job_record r;
    auto& j = r.job;
    j.meta = meta(true);
    j.queue = name();
    j.scheduler_name = chance(50) ? "phalanx" : "";
    j.priority_class_name = chance(50) ? name() : "";
    j.priority = any_i32();
    if (chance(50))
      j.min_available = any_i32();
    j.max_retry = any_i32();
    for (int64_t i = between(0, 3); i > 0; --i) {
      sch::job_task t;
      t.name = name();
      t.replicas = any_i32();
      if (chance(50))
        t.min_available = any_i32();
      t.pod_template = pod();
      t.policies = policies();
      if (chance(50))
        t.max_retry = any_i32();
      j.tasks.push_back(std::move(t));
    }
    j.policies = policies();
    for (int64_t i = between(0, 3); i > 0; --i) {
      std::vector<std::string> args;
      for (int64_t k = between(0, 2); k > 0; --k)
        args.push_back(text(12));
      j.plugins.emplace_back(name(), std::move(args));
    }
    j.suspended = chance(20);
    if (chance(70))
      j.spec_json = sch::shared_string(text(300));
    auto& s = r.status;
    s.phase = static_cast<sch::job_phase>(between(0, int(sch::job_phase_last)));
    s.reason = text(10);
    s.message = text(40);
    s.last_transition_time = time();
    s.min_available = any_i32();
    s.pending = any_i32();
    s.running = any_i32();
    s.succeeded = any_i32();
    s.failed = any_i32();
    s.terminating = any_i32();
    s.unknown = any_i32();
    s.retry_count = any_i32();
    s.version = any_i32();
    for (int64_t i = between(0, 3); i > 0; --i)
      s.tasks.push_back({name(), any_i32(), any_i32(), any_i32(), any_i32(), any_i32()});
    for (int64_t i = between(0, 4); i > 0; --i)
      s.conditions.push_back(
          {static_cast<sch::job_phase>(between(0, int(sch::job_phase_last))), time()});
    if (chance(50))
      s.running_duration = sch::duration(any_i64());
    return r;
  }

 private:
  std::mt19937_64 rng_;
};

} // namespace phalanx::storage::testing
