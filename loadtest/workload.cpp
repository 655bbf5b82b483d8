#include "loadtest/workload.hpp"

#include "loadtest/flags.hpp"

#include "scheduler/planner.hpp"
#include "scheduler/quantity.hpp"
#include "scheduler/simulation.hpp"
#include "scheduler/validation.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <sstream>

namespace phalanx::loadtest {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

status item_error(std::size_t index, const std::string& item, const std::string& rule) {
  return {errc::invalid_argument,
          "item " + std::to_string(index + 1) + " \"" + item + "\": " + rule};
}

// "X:W" -> (X, W) with W a positive number.
result<std::pair<std::string, double>> split_weight(std::size_t index, const std::string& item) {
  auto colon = item.rfind(':');
  if (colon == std::string::npos)
    return item_error(index, item, "expected VALUE:WEIGHT");
  auto w = parse_number(item.substr(colon + 1));
  if (!w || !(*w > 0))
    return item_error(index, item, "the weight must be a number greater than 0");
  return std::make_pair(item.substr(0, colon), *w);
}

// Picks an index by weight.
std::size_t pick(std::mt19937_64& g, const std::vector<double>& cumulative) {
  std::uniform_real_distribution<double> u(0, cumulative.back());
  double x = u(g);
  auto it = std::upper_bound(cumulative.begin(), cumulative.end(), x);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative.begin()),
                               cumulative.size() - 1);
}

std::vector<double> cumulative_of(const std::vector<double>& weights) {
  std::vector<double> c;
  double sum = 0;
  for (double w : weights)
    c.push_back(sum += w);
  return c;
}

int64_t uniform_step(std::mt19937_64& g, int64_t lo, int64_t hi, int64_t step) {
  if (hi <= lo)
    return lo;
  int64_t steps = (hi - lo) / step;
  std::uniform_int_distribution<int64_t> d(0, steps);
  return lo + d(g) * step;
}

std::string gang_name(int64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "pg-%06lld", static_cast<long long>(index));
  return buf;
}

} // namespace

result<std::vector<size_bucket>> parse_gang_sizes(const std::string& text) {
  std::vector<size_bucket> out;
  auto items = split(text, ',');
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto kv = split_weight(i, items[i]);
    if (!kv)
      return kv.error();
    const auto& range = kv->first;
    size_bucket b;
    b.weight = kv->second;
    auto dash = range.find('-');
    auto lo = parse_int(range.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_int(range.substr(dash + 1));
    if (!lo || !hi)
      return item_error(i, items[i], "expected SIZE:WEIGHT or MIN-MAX:WEIGHT with integer sizes");
    if (*lo < 1 || *hi > 10000 || *lo > *hi)
      return item_error(i, items[i], "sizes must satisfy 1 <= MIN <= MAX <= 10000");
    b.min = static_cast<int32_t>(*lo);
    b.max = static_cast<int32_t>(*hi);
    out.push_back(b);
  }
  return out;
}

result<std::vector<queue_spec>> parse_queues(const std::string& text) {
  std::vector<queue_spec> out;
  std::set<std::string> seen;
  auto items = split(text, ',');
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto colon = items[i].rfind(':');
    std::string name = items[i].substr(0, colon);
    int64_t weight = 1;
    if (colon != std::string::npos) {
      auto w = parse_int(items[i].substr(colon + 1));
      if (!w || *w < scheduler::min_queue_weight || *w > scheduler::max_queue_weight)
        return item_error(i, items[i], "the weight must be an integer from 1 to 65535");
      weight = *w;
    }
    if (name.empty() || !scheduler::is_dns1123_subdomain(name).empty())
      return item_error(i, items[i],
                        "the queue name must be a DNS-1123 subdomain (lowercase letters, digits, "
                        "'-' and '.', starting and ending alphanumeric)");
    if (!seen.insert(name).second)
      return item_error(i, items[i], "queue named twice");
    out.push_back({name, static_cast<int32_t>(weight)});
  }
  return out;
}

result<std::vector<weighted_value>> parse_priorities(const std::string& text) {
  std::vector<weighted_value> out;
  auto items = split(text, ',');
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto kv = split_weight(i, items[i]);
    if (!kv)
      return kv.error();
    auto v = parse_int(kv->first);
    if (!v || *v < 0 || *v > 1000000000)
      return item_error(i, items[i], "the priority must be an integer from 0 to 1000000000");
    out.push_back({static_cast<int32_t>(*v), kv->second});
  }
  return out;
}

result<std::pair<int64_t, int64_t>> parse_amount_range(std::string_view resource,
                                                       const std::string& text) {
  auto dash = text.find('-');
  auto lo = scheduler::parse_resource_amount(resource, text.substr(0, dash));
  if (!lo)
    return status{errc::invalid_argument, "\"" + text + "\": " + lo.error().message()};
  int64_t hi_value = *lo;
  if (dash != std::string::npos) {
    auto hi = scheduler::parse_resource_amount(resource, text.substr(dash + 1));
    if (!hi)
      return status{errc::invalid_argument, "\"" + text + "\": " + hi.error().message()};
    hi_value = *hi;
  }
  if (*lo <= 0 || *lo > hi_value)
    return status{errc::invalid_argument,
                  "\"" + text + "\": the range must satisfy 0 < MIN <= MAX"};
  return std::make_pair(*lo, hi_value);
}

int32_t gang_spec::size() const noexcept {
  int32_t n = 0;
  for (const auto& t : tasks)
    n += t.count;
  return n;
}

scheduler::resources gang_spec::total_requests() const {
  scheduler::resources r;
  for (const auto& t : tasks)
    r += t.requests.times(t.count);
  return r;
}

status validate(const workload_spec& spec) {
  auto bad = [](const std::string& flag, const std::string& rule) {
    return status{errc::invalid_argument, "--" + flag + ": " + rule};
  };
  if (spec.nodes < 1)
    return bad("nodes", "must be at least 1");
  if (spec.podgroups < 1)
    return bad("podgroups", "must be at least 1");
  if (spec.gang_sizes.empty())
    return bad("gang-sizes", "needs at least one size");
  if (spec.queues.empty())
    return bad("queues", "needs at least one queue");
  if (spec.priorities.empty())
    return bad("priorities", "needs at least one priority");
  if (spec.gpu_gang_fraction > 0 && (spec.gpu_node_fraction <= 0 || spec.gpus_per_node <= 0))
    return bad("gpu-gang-fraction",
               "GPU gangs need GPU nodes: set --gpu-node-fraction and --gpus-per-node above 0");
  if (spec.gpus_per_pod > spec.gpus_per_node && spec.gpu_gang_fraction > 0)
    return bad("gpus-per-pod", "must not exceed --gpus-per-node");
  if (spec.pod_cpu_max_milli > spec.node_cpu_milli)
    return bad("pod-cpu", "the largest request must fit a node (--node-cpu)");
  if (spec.pod_memory_max_bytes > spec.node_memory_bytes)
    return bad("pod-memory", "the largest request must fit a node (--node-memory)");
  return {};
}

std::string priority_class_of(int32_t priority) {
  return priority == 0 ? std::string() : "loadtest-p" + std::to_string(priority);
}

std::vector<std::pair<std::string, int32_t>> priority_classes(const workload_spec& spec) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const auto& p : spec.priorities)
    if (p.value != 0) {
      auto name = priority_class_of(p.value);
      if (std::none_of(out.begin(), out.end(), [&](const auto& e) { return e.first == name; }))
        out.emplace_back(name, p.value);
    }
  return out;
}

workload generate_workload(const workload_spec& spec) {
  workload w;
  std::mt19937_64 g(spec.seed);
  const auto gpu_nodes =
      static_cast<int64_t>(static_cast<double>(spec.nodes) * spec.gpu_node_fraction + 0.5);
  // GPU nodes spread evenly: node i is a GPU node when its share crosses an integer.
  for (int64_t i = 0; i < spec.nodes; ++i) {
    scheduler::node n;
    char buf[32];
    std::snprintf(buf, sizeof buf, "node-%05lld", static_cast<long long>(i));
    n.meta.name = buf;
    n.meta.labels.set("kubernetes.io/hostname", n.meta.name);
    n.meta.labels.set("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3));
    n.allocatable.cpu_milli = spec.node_cpu_milli;
    n.allocatable.memory_bytes = spec.node_memory_bytes;
    n.allocatable.pods = spec.node_pods;
    bool gpu = (i + 1) * gpu_nodes / spec.nodes != i * gpu_nodes / spec.nodes;
    if (gpu) {
      n.allocatable.set(scheduler::gpu_resource, spec.gpus_per_node);
      n.meta.labels.set("accelerator", "gpu");
      n.taints.push_back(
          {std::string(scheduler::gpu_resource), "present", scheduler::taint_effect::no_schedule});
    }
    w.capacity += n.allocatable;
    w.nodes.push_back(std::move(n));
  }

  std::vector<double> size_weights, queue_weights, priority_weights;
  for (const auto& b : spec.gang_sizes)
    size_weights.push_back(b.weight);
  // Gangs spread evenly over the queues; the weights shape the shares.
  queue_weights.assign(spec.queues.size(), 1.0);
  for (const auto& p : spec.priorities)
    priority_weights.push_back(p.weight);
  auto size_cdf = cumulative_of(size_weights);
  auto queue_cdf = cumulative_of(queue_weights);
  auto priority_cdf = cumulative_of(priority_weights);
  std::bernoulli_distribution is_gpu(std::clamp(spec.gpu_gang_fraction, 0.0, 1.0));
  w.gangs_per_bucket.assign(spec.gang_sizes.size(), 0);

  for (int64_t i = 0; i < spec.podgroups; ++i) {
    gang_spec gang;
    gang.index = i;
    gang.name = gang_name(i);
    auto bucket = pick(g, size_cdf);
    ++w.gangs_per_bucket[bucket];
    const auto& b = spec.gang_sizes[bucket];
    int32_t size = std::uniform_int_distribution<int32_t>(b.min, b.max)(g);
    gang.queue = spec.queues[pick(g, queue_cdf)].name;
    gang.priority = spec.priorities[pick(g, priority_cdf)].value;
    bool gpu = is_gpu(g);
    scheduler::resources r;
    r.cpu_milli = uniform_step(g, spec.pod_cpu_min_milli, spec.pod_cpu_max_milli, 250);
    r.memory_bytes =
        uniform_step(g, spec.pod_memory_min_bytes, spec.pod_memory_max_bytes, int64_t{256} << 20);
    r.pods = 1;
    if (gpu)
      r.set(scheduler::gpu_resource, spec.gpus_per_pod);
    if (size >= spec.ps_min_gang) {
      // A parameter server is lighter on cpu than its workers and needs no GPU.
      scheduler::resources ps;
      ps.cpu_milli = spec.pod_cpu_min_milli;
      ps.memory_bytes = r.memory_bytes;
      ps.pods = 1;
      gang.tasks.push_back({"ps", 1, ps, gpu});
      gang.tasks.push_back({"worker", size - 1, r, gpu});
    } else {
      gang.tasks.push_back({"worker", size, r, gpu});
    }
    w.total_pods += size;
    w.total_requests += gang.total_requests();
    w.gangs.push_back(std::move(gang));
  }
  return w;
}

namespace {

std::shared_ptr<const scheduler::placement_constraints> gpu_toleration() {
  static const auto c = [] {
    scheduler::placement_constraints pc;
    pc.tolerations.push_back({std::string(scheduler::gpu_resource),
                              scheduler::toleration_operator::exists, "",
                              scheduler::taint_effect::no_schedule, std::nullopt});
    return std::make_shared<const scheduler::placement_constraints>(std::move(pc));
  }();
  return c;
}

scheduler::pod pod_template(const gang_spec& gang, const gang_task& task,
                            const workload_spec& spec) {
  scheduler::pod p;
  p.meta.namespace_name = spec.namespace_name;
  p.meta.labels.set(gang_index_label, std::to_string(gang.index));
  if (spec.pod_duration_ns)
    p.meta.annotations.set("sim.phalanx.io/duration",
                           scheduler::format_duration_ns(*spec.pod_duration_ns));
  p.role = task.role;
  p.requests = task.requests;
  p.priority = gang.priority;
  p.priority_class_name = priority_class_of(gang.priority);
  p.scheduler_name = std::string(workload_scheduler_name);
  if (task.gpu)
    p.constraints = gpu_toleration();
  return p;
}

} // namespace

api::job_object to_job(const gang_spec& gang, const workload_spec& spec) {
  api::job_object o;
  auto& j = o.job;
  j.meta.name = gang.name;
  j.meta.namespace_name = spec.namespace_name;
  j.meta.labels.set(gang_index_label, std::to_string(gang.index));
  j.queue = gang.queue;
  j.priority_class_name = priority_class_of(gang.priority);
  j.scheduler_name = std::string(workload_scheduler_name);
  j.min_available = gang.size();
  j.max_retry = 0;
  for (const auto& t : gang.tasks) {
    scheduler::job_task task;
    task.name = t.role;
    task.replicas = t.count;
    task.pod_template = pod_template(gang, t, spec);
    j.tasks.push_back(std::move(task));
  }
  return o;
}

api::pod_group_object to_pod_group(const gang_spec& gang, const workload_spec& spec) {
  api::pod_group_object o;
  auto& g = o.group;
  g.meta.name = gang.name;
  g.meta.namespace_name = spec.namespace_name;
  g.meta.labels.set(gang_index_label, std::to_string(gang.index));
  g.min_member = gang.size();
  if (gang.tasks.size() > 1)
    for (const auto& t : gang.tasks)
      g.min_task_member.push_back({t.role, t.count});
  std::sort(g.min_task_member.begin(), g.min_task_member.end(),
            [](const auto& a, const auto& b) { return a.role < b.role; });
  g.min_resources = gang.total_requests();
  g.queue = gang.queue;
  g.priority_class_name = priority_class_of(gang.priority);
  g.priority = gang.priority;
  return o;
}

std::vector<api::pod_object> to_pods(const gang_spec& gang, const workload_spec& spec) {
  std::vector<api::pod_object> out;
  out.reserve(static_cast<std::size_t>(gang.size()));
  for (const auto& t : gang.tasks) {
    auto tmpl = pod_template(gang, t, spec);
    tmpl.group = gang.name;
    tmpl.meta.annotations.set(scheduler::pod_group_annotation, gang.name);
    tmpl.meta.annotations.set(scheduler::task_spec_key, t.role);
    for (int32_t i = 0; i < t.count; ++i) {
      api::pod_object p;
      p.pod = tmpl;
      p.pod.meta.name = gang.name + "-" + t.role + "-" + std::to_string(i);
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<api::queue_object> to_queues(const workload_spec& spec) {
  std::vector<api::queue_object> out;
  for (const auto& q : spec.queues) {
    if (q.name == scheduler::default_queue_name)
      continue; // Exists from the start.
    api::queue_object o;
    o.queue.meta.name = q.name;
    o.queue.weight = q.weight;
    o.queue.reclaimable = true;
    out.push_back(std::move(o));
  }
  return out;
}

namespace {

// The resources a generated workload asks for, with their names in messages.
struct resource_axis {
  const char* name;
  int64_t (*get)(const scheduler::resources&);
};
constexpr resource_axis axes[] = {
    {"cpu", [](const scheduler::resources& r) { return r.cpu_milli; }},
    {"memory", [](const scheduler::resources& r) { return r.memory_bytes; }},
    {"pods", [](const scheduler::resources& r) { return r.pods; }},
    {"nvidia.com/gpu",
     [](const scheduler::resources& r) { return r.get(scheduler::gpu_resource); }},
};

// An amount in its resource's unit, as a person writes it.
std::string amount_text(const resource_axis& a, int64_t v) {
  char buf[48];
  if (std::string_view(a.name) == "cpu")
    std::snprintf(buf, sizeof buf, v % 1000 == 0 ? "%.0f" : "%.3g", double(v) / 1000);
  else if (std::string_view(a.name) == "memory")
    std::snprintf(buf, sizeof buf, "%.4gGi", double(v) / double(int64_t{1} << 30));
  else
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  return buf;
}

// Nodes grouped by shape: the same allocatable and the same taint, `count` of them.
struct node_shape_count {
  scheduler::resources allocatable;
  bool tainted = false;
  int64_t count = 0;
};

std::vector<node_shape_count> shapes_of(const workload& w) {
  std::vector<node_shape_count> shapes;
  for (const auto& n : w.nodes) {
    bool tainted = !n.taints.empty();
    auto it = std::find_if(shapes.begin(), shapes.end(), [&](const node_shape_count& s) {
      return s.tainted == tainted && s.allocatable == n.allocatable;
    });
    if (it == shapes.end())
      shapes.push_back({n.allocatable, tainted, 1});
    else
      ++it->count;
  }
  return shapes;
}

// Why a gang can never run on the empty cluster, or "" when both necessary conditions hold.
std::string gang_refusal(const gang_spec& g, const std::vector<node_shape_count>& shapes) {
  scheduler::resources usable; // What the nodes any of its pods may use hold.
  bool any_tolerates = false;
  for (const auto& t : g.tasks)
    any_tolerates |= t.gpu;
  for (const auto& s : shapes)
    if (!s.tainted || any_tolerates)
      for (int64_t k = 0; k < s.count; ++k)
        usable += s.allocatable;
  for (const auto& t : g.tasks) {
    // The pods of this task each node shape can hold, and the resource that limits it.
    int64_t capacity = 0;
    int64_t largest[std::size(axes)] = {};
    for (const auto& s : shapes) {
      if (s.tainted && !t.gpu)
        continue;
      int64_t per_node = std::numeric_limits<int64_t>::max();
      for (std::size_t a = 0; a < std::size(axes); ++a) {
        largest[a] = std::max(largest[a], axes[a].get(s.allocatable));
        if (int64_t want = axes[a].get(t.requests); want > 0)
          per_node = std::min(per_node, axes[a].get(s.allocatable) / want);
      }
      capacity += per_node == std::numeric_limits<int64_t>::max() ? t.count : per_node * s.count;
    }
    for (std::size_t a = 0; a < std::size(axes); ++a) {
      int64_t want = axes[a].get(t.requests);
      if (want > largest[a])
        return "gang " + g.name + ": a " + t.role + " pod asks " + amount_text(axes[a], want) +
               " " + axes[a].name + "; the largest node it may use has " +
               amount_text(axes[a], largest[a]);
    }
    if (t.count > capacity)
      return "gang " + g.name + " needs " + std::to_string(t.count) + " " + t.role +
             " pods at once; the nodes they may use hold at most " + std::to_string(capacity) +
             " of them, even empty";
  }
  auto total = g.total_requests();
  for (const auto& a : axes)
    if (a.get(total) > a.get(usable))
      return "gang " + g.name + " asks " + amount_text(a, a.get(total)) + " " + a.name +
             " at once; the nodes its pods may use have " + amount_text(a, a.get(usable));
  return {};
}

std::string percent_text(int64_t num, int64_t den) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * double(num) / double(den));
  return buf;
}

} // namespace

fit_check check_fit(const workload& w, const workload_spec& spec) {
  fit_check out;
  const auto shapes = shapes_of(w);
  int64_t refused = 0;
  for (const auto& g : w.gangs) {
    auto why = gang_refusal(g, shapes);
    if (why.empty())
      continue;
    if (++refused <= 5)
      out.refusals.push_back(why);
  }
  if (refused > 5)
    out.refusals.push_back(std::to_string(refused - 5) + " more gangs cannot fit either (" +
                           std::to_string(refused) + " of " + std::to_string(w.gangs.size()) +
                           ")");

  // Demand at once against capacity: every pod on every node, and the pods that do not
  // tolerate the GPU taint on the untainted nodes.
  scheduler::resources plain_demand, plain_capacity;
  for (const auto& g : w.gangs)
    for (const auto& t : g.tasks)
      if (!t.gpu)
        for (int32_t k = 0; k < t.count; ++k)
          plain_demand += t.requests;
  for (const auto& s : shapes)
    if (!s.tainted)
      for (int64_t k = 0; k < s.count; ++k)
        plain_capacity += s.allocatable;
  // Each resource once: the cluster's figure, else the CPU nodes' when only that one is over.
  std::vector<std::string_view> reported;
  bool refused_demand = false;
  auto over = [&](const scheduler::resources& demand, const scheduler::resources& capacity,
                  const char* whose, const char* where) {
    for (const auto& a : axes) {
      int64_t want = a.get(demand), have = a.get(capacity);
      if (want == 0 || want <= have ||
          std::find(reported.begin(), reported.end(), a.name) != reported.end())
        continue;
      reported.push_back(a.name);
      std::string what = std::string(whose) + " ask " +
                         (have > 0 ? percent_text(want, have) + " of " : std::string()) + where +
                         " " + a.name + " (" + amount_text(a, want) + " of " +
                         amount_text(a, have) + ")";
      if (spec.pod_duration_ns) {
        out.warnings.push_back(what + " in all; they will queue for it");
      } else {
        out.refusals.push_back(what + " at once, and pods run until the end (no --pod-duration)");
        refused_demand = true;
      }
    }
  };
  over(w.total_requests, w.capacity, "the gangs", "the cluster's");
  over(plain_demand, plain_capacity, "the pods without GPUs", "the CPU nodes'");
  if (refused_demand)
    out.refusals.push_back(
        "the run waits for every gang to run at once, which can never happen: ask less (fewer "
        "--podgroups, smaller --gang-sizes, --pod-cpu, --pod-memory, --gpu-gang-fraction or "
        "--gpus-per-pod), give more (--nodes, --node-cpu, --node-memory, --node-pods, "
        "--gpu-node-fraction or --gpus-per-node), or give --pod-duration so that gangs queue and "
        "complete");
  return out;
}

} // namespace phalanx::loadtest
