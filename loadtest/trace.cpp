#include "loadtest/trace.hpp"

#include "loadtest/flags.hpp"

#include "actors/cluster_file.hpp"
#include "scheduler/quantity.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>

namespace phalanx::loadtest {

std::string_view to_string(trace_format f) noexcept {
  switch (f) {
    case trace_format::philly:
      return "philly";
    case trace_format::pollux:
      return "pollux";
    case trace_format::openb:
      return "openb";
  }
  return "unknown";
}

std::map<std::string, int64_t> default_app_durations() {
  return {{"bert", 1800},      {"cifar10", 900}, {"deepspeech2", 3600},
          {"imagenet", 43200}, {"ncf", 120},     {"yolov3", 7200}};
}

result<std::map<std::string, int64_t>> parse_app_durations(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::size_t start = 0;
  int index = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ++index;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return status{errc::invalid_argument, "item " + std::to_string(index) + " \"" + item +
                                                "\": expected APPLICATION=DURATION"};
    auto d = scheduler::parse_duration_ns(item.substr(eq + 1));
    if (!d || *d < 1'000'000'000)
      return status{errc::invalid_argument,
                    "item " + std::to_string(index) + " \"" + item +
                        "\": the duration must be at least 1s, written like 90s, 15m or 2h"};
    out[item.substr(0, eq)] = *d / 1'000'000'000;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

namespace {

constexpr int64_t max_seconds = int64_t{10} * 365 * 24 * 3600; // Ten years.
constexpr int64_t max_pods = 10000;

template <class T>
status take(result<std::optional<T>> r, T& out, T fallback = T{}) {
  if (!r)
    return r.error();
  out = r->value_or(fallback);
  return {};
}

#define PHALANX_TRY(expr)                                                                          \
  do {                                                                                             \
    if (auto s_ = (expr); !s_.ok())                                                                \
      return s_;                                                                                   \
  } while (false)

result<trace> read_philly(const csv_table& t, const trace_read_options& o) {
  trace out;
  out.format = trace_format::philly;
  out.source = t.source;
  std::size_t c_id, c_submit, c_pods, c_gpu, c_cpu, c_mem, c_duration, c_vc;
  for (auto [name, slot] : {std::pair{"job_id", &c_id},
                            {"submit_s", &c_submit},
                            {"num_pods", &c_pods},
                            {"gpu_per_pod", &c_gpu},
                            {"cpu_per_pod", &c_cpu},
                            {"mem_per_pod", &c_mem},
                            {"duration_s", &c_duration},
                            {"vc", &c_vc}}) {
    auto c = t.column(name);
    if (!c)
      return c.error();
    *slot = *c;
  }
  for (const auto& row : t.rows) {
    if (o.max_jobs > 0 && static_cast<int64_t>(out.jobs.size()) >= o.max_jobs)
      break;
    trace_job j;
    j.line = row.line;
    auto name = t.get_text(row, c_id);
    if (!name)
      return name.error();
    j.name = *name;
    int64_t pods = 0;
    PHALANX_TRY(take(t.get_int(row, c_submit, 0, max_seconds), j.submit_s));
    PHALANX_TRY(take(t.get_int(row, c_pods, 1, max_pods), pods));
    j.pods = static_cast<int32_t>(pods);
    PHALANX_TRY(take(t.get_int(row, c_gpu, 0, 1024), j.gpu_per_pod));
    double cpu = 0, mem = 0;
    PHALANX_TRY(take(t.get_number(row, c_cpu, 0, 1e6, true), cpu));
    PHALANX_TRY(take(t.get_number(row, c_mem, 0, 1e9, true), mem));
    j.cpu_milli_per_pod = static_cast<int64_t>(std::ceil(cpu * 1000));
    j.memory_bytes_per_pod = static_cast<int64_t>(std::ceil(mem * 1024 * 1024 * 1024));
    PHALANX_TRY(take(t.get_int(row, c_duration, 0, max_seconds), j.duration_s));
    auto vc = t.get_text(row, c_vc);
    if (!vc)
      return vc.error();
    j.group = *vc;
    j.queue = *vc;
    out.jobs.push_back(std::move(j));
  }
  return out;
}

result<trace> read_pollux(const csv_table& t, const trace_read_options& o) {
  trace out;
  out.format = trace_format::pollux;
  out.source = t.source;
  std::size_t c_name, c_time, c_app, c_replicas;
  for (auto [name, slot] : {std::pair{"name", &c_name},
                            {"time", &c_time},
                            {"application", &c_app},
                            {"num_replicas", &c_replicas}}) {
    auto c = t.column(name);
    if (!c)
      return c.error();
    *slot = *c;
  }
  auto durations = o.app_duration_s.empty() ? default_app_durations() : o.app_duration_s;
  for (const auto& row : t.rows) {
    if (o.max_jobs > 0 && static_cast<int64_t>(out.jobs.size()) >= o.max_jobs)
      break;
    trace_job j;
    j.line = row.line;
    auto name = t.get_text(row, c_name);
    if (!name)
      return name.error();
    j.name = *name;
    int64_t replicas = 0;
    PHALANX_TRY(take(t.get_int(row, c_time, 0, max_seconds), j.submit_s));
    PHALANX_TRY(take(t.get_int(row, c_replicas, 1, max_pods), replicas));
    auto app = t.get_text(row, c_app);
    if (!app)
      return app.error();
    j.pods = static_cast<int32_t>(replicas);
    j.gpu_per_pod = 1;
    j.group = *app;
    j.queue = "default";
    auto d = durations.find(*app);
    j.duration_s = d == durations.end() ? o.default_duration_s : d->second;
    out.jobs.push_back(std::move(j));
  }
  return out;
}

result<trace> read_openb(const csv_table& t, const trace_read_options& o) {
  trace out;
  out.format = trace_format::openb;
  out.source = t.source;
  std::size_t c_id, c_submit, c_pods, c_gpu, c_cpu, c_mem, c_duration;
  for (auto [name, slot] : {std::pair{"job_id", &c_id},
                            {"submit_s", &c_submit},
                            {"num_pods", &c_pods},
                            {"gpu_per_pod", &c_gpu},
                            {"cpu_per_pod", &c_cpu},
                            {"mem_per_pod_mib", &c_mem},
                            {"duration_s", &c_duration}}) {
    auto c = t.column(name);
    if (!c)
      return c.error();
    *slot = *c;
  }
  auto c_milli = t.find_column("gpu_milli");
  auto c_qos = t.find_column("qos");
  for (const auto& row : t.rows) {
    if (o.max_jobs > 0 && static_cast<int64_t>(out.jobs.size()) >= o.max_jobs)
      break;
    trace_job j;
    j.line = row.line;
    auto name = t.get_text(row, c_id);
    if (!name)
      return name.error();
    j.name = *name;
    int64_t pods = 0;
    PHALANX_TRY(take(t.get_int(row, c_submit, 0, max_seconds), j.submit_s));
    PHALANX_TRY(take(t.get_int(row, c_pods, 1, max_pods), pods));
    j.pods = static_cast<int32_t>(pods);
    PHALANX_TRY(take(t.get_int(row, c_gpu, 0, 1024), j.gpu_per_pod));
    if (c_milli) {
      int64_t milli = 0;
      PHALANX_TRY(take(t.get_int(row, *c_milli, 0, 1024 * 1000, true), milli));
      if (j.gpu_per_pod == 0 && milli > 0)
        j.gpu_per_pod = (milli + 999) / 1000; // A GPU share takes a whole GPU.
    }
    double cpu = 0;
    int64_t mem_mib = 0;
    PHALANX_TRY(take(t.get_number(row, c_cpu, 0, 1e6, false), cpu));
    PHALANX_TRY(take(t.get_int(row, c_mem, 0, int64_t{1} << 30, false), mem_mib));
    j.cpu_milli_per_pod = static_cast<int64_t>(std::ceil(cpu * 1000 - 1e-6));
    j.memory_bytes_per_pod = mem_mib * 1024 * 1024;
    PHALANX_TRY(take(t.get_int(row, c_duration, 0, max_seconds), j.duration_s));
    std::string qos = "default";
    if (c_qos && !row.fields[*c_qos].empty()) {
      qos = row.fields[*c_qos];
      std::transform(qos.begin(), qos.end(), qos.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    }
    j.group = qos;
    j.queue = qos;
    out.jobs.push_back(std::move(j));
  }
  return out;
}

} // namespace

std::string dns_safe_name(std::string_view in) {
  std::string out;
  for (char c : in) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u))
      out += static_cast<char>(std::tolower(u));
    else if (c == '-' || c == '.')
      out += c;
    else
      out += '-';
  }
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.front())))
    out.erase(out.begin());
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back())))
    out.pop_back();
  if (out.empty())
    out = "x";
  return out;
}

namespace {

std::string dns_name(std::string_view in) {
  return dns_safe_name(in);
}

} // namespace

result<trace> read_trace(std::string_view text, std::string source,
                         const trace_read_options& options) {
  auto table = parse_csv(text, std::move(source));
  if (!table)
    return table.error();
  auto has = [&](std::string_view c) { return table->find_column(c).has_value(); };
  if (has("job_id") && has("vc") && has("num_pods"))
    return read_philly(*table, options);
  if (has("job_id") && has("mem_per_pod_mib"))
    return read_openb(*table, options);
  if (has("num_replicas") && has("application"))
    return read_pollux(*table, options);
  std::string header;
  for (const auto& h : table->header)
    header += (header.empty() ? "" : ",") + h;
  return status{errc::invalid_argument,
                table->source + ":1: unknown trace format (header: " + header +
                    "); expected the normalised Philly trace (job_id,...,vc,...), a Pollux "
                    "workload (name,time,application,num_replicas,...) or the normalised openb "
                    "pods (job_id,...,mem_per_pod_mib,...)"};
}

namespace {

scheduler::node make_node(std::string name, const node_shape& shape) {
  scheduler::node n;
  n.meta.name = std::move(name);
  n.meta.labels.set("kubernetes.io/hostname", n.meta.name);
  n.allocatable.cpu_milli = shape.cpu_milli;
  n.allocatable.memory_bytes = shape.memory_bytes;
  n.allocatable.pods = shape.pods;
  if (shape.gpus > 0)
    n.allocatable.set(scheduler::gpu_resource, shape.gpus);
  return n;
}

std::string cluster_totals(const std::vector<scheduler::node>& nodes) {
  scheduler::resources total;
  for (const auto& n : nodes)
    total += n.allocatable;
  return std::to_string(nodes.size()) + " nodes, " +
         std::to_string(total.get(scheduler::gpu_resource)) + " GPUs, " +
         scheduler::format_resource_amount("cpu", total.cpu_milli) + " cpu";
}

} // namespace

result<replay_cluster> cluster_from_vc_sizes(std::string_view text, std::string source,
                                             double scale, const node_shape& shape) {
  if (!(scale > 0))
    return status{errc::invalid_argument, "--vc-scale: must be greater than 0"};
  auto table = parse_csv(text, source);
  if (!table)
    return table.error();
  if (table->header.size() != 2)
    return status{errc::invalid_argument,
                  table->source + ":1: expected two columns: vc,node count (as vc_nodes.csv)"};
  replay_cluster c;
  for (const auto& row : table->rows) {
    auto vc = table->get_text(row, 0);
    if (!vc)
      return vc.error();
    auto count = table->get_int(row, 1, 1, 100000);
    if (!count)
      return count.error();
    if (c.vc_sizes.count(*vc))
      return table->field_error(row, 0, "VC \"" + *vc + "\" is listed twice");
    c.vc_sizes[*vc] = **count;
    auto scaled = std::max<int64_t>(
        1, static_cast<int64_t>(std::llround(static_cast<double>(**count) * scale)));
    auto& members = c.partitions[*vc];
    for (int64_t i = 0; i < scaled; ++i) {
      auto n = make_node("vc-" + dns_name(*vc) + "-" + std::to_string(i), shape);
      n.meta.labels.set(vc_label, *vc);
      members.push_back(c.nodes.size());
      c.nodes.push_back(std::move(n));
    }
  }
  if (c.nodes.empty())
    return status{errc::invalid_argument, table->source + ": no VC listed"};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", scale);
  c.description = table->source + " x " + buf + ": " + std::to_string(c.partitions.size()) +
                  " VCs, " + cluster_totals(c.nodes);
  return c;
}

result<replay_cluster> cluster_from_node_list(std::string_view text, std::string source) {
  auto table = parse_csv(text, std::move(source));
  if (!table)
    return table.error();
  std::size_t c_sn, c_cpu, c_mem, c_gpu;
  for (auto [name, slot] :
       {std::pair{"sn", &c_sn}, {"cpu_milli", &c_cpu}, {"memory_mib", &c_mem}, {"gpu", &c_gpu}}) {
    auto c = table->column(name);
    if (!c)
      return c.error();
    *slot = *c;
  }
  auto c_model = table->find_column("model");
  replay_cluster c;
  for (const auto& row : table->rows) {
    auto sn = table->get_text(row, c_sn);
    if (!sn)
      return sn.error();
    auto cpu = table->get_int(row, c_cpu, 1, int64_t{1} << 40);
    if (!cpu)
      return cpu.error();
    auto mem = table->get_int(row, c_mem, 1, int64_t{1} << 30);
    if (!mem)
      return mem.error();
    auto gpu = table->get_int(row, c_gpu, 0, 1024);
    if (!gpu)
      return gpu.error();
    node_shape shape;
    shape.cpu_milli = **cpu;
    shape.memory_bytes = **mem * 1024 * 1024;
    shape.gpus = **gpu;
    auto n = make_node(dns_name(*sn), shape);
    if (c_model && !row.fields[*c_model].empty())
      n.meta.labels.set("phalanx.io/gpu-model", dns_name(row.fields[*c_model]));
    c.nodes.push_back(std::move(n));
  }
  if (c.nodes.empty())
    return status{errc::invalid_argument, table->source + ": no node listed"};
  c.description = table->source + ": " + cluster_totals(c.nodes);
  return c;
}

result<replay_cluster> cluster_from_yaml(const std::string& text, std::string source) {
  auto nodes = actors::parse_cluster_file(text);
  if (!nodes)
    return status{errc::invalid_argument, source + ": " + nodes.error().message()};
  replay_cluster c;
  c.nodes = std::move(*nodes);
  if (c.nodes.empty())
    return status{errc::invalid_argument, source + ": no node described"};
  c.description = source + ": " + cluster_totals(c.nodes);
  return c;
}

replay_cluster uniform_cluster(int64_t count, const node_shape& shape) {
  replay_cluster c;
  for (int64_t i = 0; i < count; ++i)
    c.nodes.push_back(make_node("node-" + std::to_string(i), shape));
  c.description = "uniform: " + cluster_totals(c.nodes);
  return c;
}

std::vector<scheduler::sim_job> to_sim_jobs(const trace& t, const replay_model& model,
                                            const replay_cluster& cluster) {
  std::vector<const trace_job*> order;
  for (const auto& j : t.jobs)
    order.push_back(&j);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->submit_s < b->submit_s; });
  const int64_t epoch = order.empty() ? 0 : order.front()->submit_s;
  std::map<std::string, std::shared_ptr<const scheduler::placement_constraints>> pins;
  std::vector<scheduler::sim_job> out;
  out.reserve(order.size());
  for (const auto* tj : order) {
    scheduler::sim_job j;
    auto name = dns_name(tj->name);
    j.group.meta.name = name;
    j.group.meta.namespace_name = "trace";
    j.group.meta.uid = name;
    j.group.min_member = tj->pods;
    j.group.queue = dns_name(tj->queue);
    j.arrival = std::chrono::seconds(tj->submit_s - epoch);
    j.wait_for_gang = model.wait_for_gang && tj->pods > 1;
    scheduler::resources per_pod;
    per_pod.cpu_milli = tj->cpu_milli_per_pod;
    per_pod.memory_bytes = tj->memory_bytes_per_pod;
    per_pod.pods = 1;
    if (tj->gpu_per_pod > 0)
      per_pod.set(scheduler::gpu_resource, tj->gpu_per_pod);
    j.group.min_resources = per_pod.times(tj->pods);
    std::shared_ptr<const scheduler::placement_constraints> pin;
    if (model.pin_to_vc && cluster.partitions.count(tj->group)) {
      auto& p = pins[tj->group];
      if (!p) {
        scheduler::placement_constraints pc;
        pc.node_selector.set(vc_label, tj->group);
        p = std::make_shared<const scheduler::placement_constraints>(std::move(pc));
      }
      pin = p;
    }
    for (int32_t i = 0; i < tj->pods; ++i) {
      scheduler::sim_pod p;
      p.spec.meta.name = name + "-" + std::to_string(i);
      p.spec.meta.namespace_name = "trace";
      p.spec.meta.uid = p.spec.meta.name.view();
      p.spec.group = name;
      p.spec.role = "worker";
      p.spec.requests = per_pod;
      p.spec.constraints = pin;
      p.run_time = std::chrono::seconds(tj->duration_s);
      p.created_after = scheduler::duration(model.pod_interval_ns * i);
      j.pods.push_back(std::move(p));
    }
    out.push_back(std::move(j));
  }
  return out;
}

} // namespace phalanx::loadtest
