#include "loadtest/scheduling_run.hpp"

#include "loadtest/interrupt.hpp"
#include "loadtest/progress.hpp"
#include "loadtest/report.hpp"

#include "scheduler/quantity.hpp"
#include "scheduler/simulation.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;

result<std::string> make_temp_dir(const std::string& base, const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  std::string tmpl = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    return status{errc::io_error,
                  "cannot create a directory in " + base + ": " + std::strerror(errno)};
  return tmpl;
}

dir_cleanup::~dir_cleanup() {
  if (keep_ || path_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string_view to_string(submit_method m) noexcept {
  switch (m) {
    case submit_method::jobs:
      return "jobs";
    case submit_method::podgroups:
      return "podgroups";
  }
  return "unknown";
}

std::string_view to_string(run_outcome o) noexcept {
  switch (o) {
    case run_outcome::completed:
      return "completed";
    case run_outcome::failed:
      return "failed";
    case run_outcome::stalled:
      return "stalled";
    case run_outcome::timed_out:
      return "timed out";
    case run_outcome::interrupted:
      return "interrupted";
  }
  return "unknown";
}

json::value json_number(double v) {
  return std::isfinite(v) ? json::value(v) : json::value(nullptr);
}

void add_run_flags(flag_set& f, run_options& o, run_flag_texts& t) {
  auto& w = o.workload;
  f.add_int("nodes", &w.nodes, 1, 100000, "simulated nodes");
  f.add_int("podgroups", &w.podgroups, 1, 1000000, "PodGroups (gangs) to submit");
  f.add_string("gang-sizes", &t.gang_sizes,
               "gang size distribution: SIZE:WEIGHT or MIN-MAX:WEIGHT items, comma-separated");
  f.add_string("queues", &t.queues, "queues with their weights: NAME:WEIGHT, comma-separated");
  f.add_string("priorities", &t.priorities,
               "gang priorities with weights: PRIORITY:WEIGHT, comma-separated (non-zero ones "
               "use priority classes loadtest-p<PRIORITY>)");
  f.add_string("pod-cpu", &t.pod_cpu, "per-pod cpu request range MIN-MAX (steps of 250m)");
  f.add_string("pod-memory", &t.pod_memory,
               "per-pod memory request range MIN-MAX (steps of 256Mi)");
  f.add_double("gpu-gang-fraction", &w.gpu_gang_fraction, 0, 1,
               "share of gangs whose pods request GPUs");
  f.add_int("gpus-per-pod", &w.gpus_per_pod, 1, 64, "GPUs per pod of a GPU gang");
  f.add_string("node-cpu", &t.node_cpu, "cpu of every node");
  f.add_string("node-memory", &t.node_memory, "memory of every node");
  f.add_int("node-pods", &w.node_pods, 1, 100000, "pods per node");
  f.add_double("gpu-node-fraction", &w.gpu_node_fraction, 0, 1,
               "share of nodes with GPUs (tainted nvidia.com/gpu)");
  f.add_int("gpus-per-node", &w.gpus_per_node, 0, 1024, "GPUs of a GPU node");
  f.add_duration("pod-duration", &t.pod_duration_ns, 0, int64_t{24} * 3600 * 1'000'000'000,
                 "how long pods run once Running; 0 runs them until the end and the run waits "
                 "for Running, otherwise it also waits for every gang to complete");
  t.seed = static_cast<int64_t>(w.seed);
  f.add_int("seed", &t.seed, 0, std::numeric_limits<int64_t>::max(),
            "seed of the workload generator");
  f.add_choice("submit", &t.submit, {"jobs", "podgroups"},
               "jobs: one Volcano job per gang (PodGroup and pods in one request); podgroups: "
               "the PodGroup, then each pod");
  f.add_int("namespaces", &o.namespaces, 1, 1000, "namespaces the gangs are spread over");
  f.add_duration("sample-interval", &o.sample_interval_ns, 10'000'000, 60'000'000'000,
                 "how often the metrics are sampled for the time series");
  f.add_duration("timeout", &o.timeout_ns, 1'000'000'000, int64_t{24} * 3600 * 1'000'000'000,
                 "give up waiting for the gangs after this");
  f.add_duration("stall-after", &o.stall_after_ns, 0, int64_t{24} * 3600 * 1'000'000'000,
                 "stop early, as stalled, when no gang started or completed for this long (0: "
                 "never; with --pod-duration D the default is 30s + D)");
  f.add_int("threads", &o.threads, 1, 64, "scheduler worker threads");
  f.add_string("json", &o.json_path, "write the JSON report here");
  f.add_string("html", &o.html_path, "write the HTML report here");
  f.add_string("work-dir", &o.work_dir, "where temporary directories go (default $TMPDIR or /tmp)");
  f.add_bool("keep", &o.keep, "keep the temporary directory (store, logs)");
}

status finish_run_flags(run_options& o, const run_flag_texts& t) {
  auto& w = o.workload;
  o.submit = t.submit == "podgroups" ? submit_method::podgroups : submit_method::jobs;
  auto sizes = parse_gang_sizes(t.gang_sizes);
  if (!sizes)
    return {errc::invalid_argument, "--gang-sizes: " + sizes.error().message()};
  w.gang_sizes = *sizes;
  auto queues = parse_queues(t.queues);
  if (!queues)
    return {errc::invalid_argument, "--queues: " + queues.error().message()};
  w.queues = *queues;
  auto priorities = parse_priorities(t.priorities);
  if (!priorities)
    return {errc::invalid_argument, "--priorities: " + priorities.error().message()};
  w.priorities = *priorities;
  auto cpu = parse_amount_range("cpu", t.pod_cpu);
  if (!cpu)
    return {errc::invalid_argument, "--pod-cpu: " + cpu.error().message()};
  w.pod_cpu_min_milli = cpu->first;
  w.pod_cpu_max_milli = cpu->second;
  auto mem = parse_amount_range("memory", t.pod_memory);
  if (!mem)
    return {errc::invalid_argument, "--pod-memory: " + mem.error().message()};
  w.pod_memory_min_bytes = mem->first;
  w.pod_memory_max_bytes = mem->second;
  auto node_cpu = scheduler::parse_resource_amount("cpu", t.node_cpu);
  if (!node_cpu || *node_cpu <= 0)
    return {errc::invalid_argument,
            "--node-cpu: \"" + t.node_cpu + "\" must be a positive cpu quantity (64, 500m)"};
  w.node_cpu_milli = *node_cpu;
  auto node_mem = scheduler::parse_resource_amount("memory", t.node_memory);
  if (!node_mem || *node_mem <= 0)
    return {errc::invalid_argument,
            "--node-memory: \"" + t.node_memory + "\" must be a positive quantity (256Gi)"};
  w.node_memory_bytes = *node_mem;
  if (t.pod_duration_ns > 0) {
    w.pod_duration_ns = t.pod_duration_ns;
    // A gang runs for the pod duration without completing: a stall window shorter than that
    // would stop healthy runs.
    if (!t.stall_after_given)
      o.stall_after_ns += t.pod_duration_ns;
    else if (o.stall_after_ns > 0 && o.stall_after_ns <= t.pod_duration_ns)
      return {errc::invalid_argument,
              "--stall-after: " + scheduler::format_duration_ns(o.stall_after_ns) +
                  " must be longer than --pod-duration " +
                  scheduler::format_duration_ns(t.pod_duration_ns) +
                  " (a gang's pods run that long without completing), or 0 to never stop early"};
  }
  w.seed = static_cast<uint64_t>(t.seed);
  if (o.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    o.work_dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  return validate(w);
}

std::string namespace_of(const run_options& o, int64_t index) {
  if (o.namespaces <= 1)
    return o.workload.namespace_name;
  return o.workload.namespace_name + "-" + std::to_string(index % o.namespaces);
}

run_sample sample_from_metrics(const std::vector<prom_sample>& metrics,
                               const std::vector<queue_spec>& queues) {
  run_sample s;
  s.pods_scheduled =
      static_cast<int64_t>(find_sample(metrics, "phalanx_pods_scheduled_total").value_or(0));
  for (const auto& q : queues) {
    queue_point p;
    auto get = [&](const char* family) {
      return find_sample(metrics, family, {{"queue", q.name}}).value_or(0);
    };
    auto gpus = [&](const char* family) {
      return find_sample(metrics, family, {{"queue", q.name}, {"resource", "nvidia.com/gpu"}})
          .value_or(0);
    };
    p.allocated_cpu = get("phalanx_queue_allocated_cpu_cores");
    p.allocated_memory = get("phalanx_queue_allocated_memory_bytes");
    p.allocated_gpu = gpus("phalanx_queue_allocated_extended_resources");
    p.allocated_pods = get("phalanx_queue_allocated_pods");
    p.deserved_cpu = get("phalanx_queue_deserved_cpu_cores");
    p.deserved_memory = get("phalanx_queue_deserved_memory_bytes");
    p.deserved_gpu = gpus("phalanx_queue_deserved_extended_resources");
    s.queues[q.name] = p;
  }
  return s;
}

bool settled(const run_sample& s, int64_t total_pods) {
  double pods = 0;
  for (const auto& [name, q] : s.queues)
    pods += q.allocated_pods;
  return s.pods_scheduled >= total_pods && static_cast<int64_t>(pods) >= total_pods;
}

run_recorder::run_recorder(const workload& w)
    : workload_(&w), t0_(std::chrono::steady_clock::now()), gangs_(new gang_times[w.gangs.size()]) {
}

void run_recorder::start() {
  t0_ = std::chrono::steady_clock::now();
}

int64_t run_recorder::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              t0_)
      .count();
}

double run_recorder::seconds_since_start() const {
  return double(now_ns()) / 1e9;
}

void run_recorder::acknowledged(int64_t index, int32_t of) {
  if (index < 0 || static_cast<std::size_t>(index) >= workload_->gangs.size())
    return;
  auto& g = gangs_[static_cast<std::size_t>(index)];
  if (g.acked.fetch_add(1) + 1 == of) {
    g.submitted_ns.store(now_ns());
    gangs_submitted_.fetch_add(1);
    pods_submitted_.fetch_add(workload_->gangs[static_cast<std::size_t>(index)].size());
  }
}

void run_recorder::observed_running(int64_t index) {
  if (index < 0 || static_cast<std::size_t>(index) >= workload_->gangs.size())
    return;
  auto& g = gangs_[static_cast<std::size_t>(index)];
  int64_t expected = -1;
  if (g.running_ns.compare_exchange_strong(expected, now_ns())) {
    gangs_running_.fetch_add(1);
    pods_running_.fetch_add(workload_->gangs[static_cast<std::size_t>(index)].size());
  }
}

void run_recorder::observed_completed(int64_t index) {
  if (index < 0 || static_cast<std::size_t>(index) >= workload_->gangs.size())
    return;
  observed_running(index); // Completed implies it ran.
  auto& g = gangs_[static_cast<std::size_t>(index)];
  int64_t expected = -1;
  if (g.completed_ns.compare_exchange_strong(expected, now_ns())) {
    gangs_completed_.fetch_add(1);
    pods_completed_.fetch_add(workload_->gangs[static_cast<std::size_t>(index)].size());
  }
}

void run_recorder::failed(const std::string& message) {
  failures_.fetch_add(1);
  std::lock_guard lock(mutex_);
  if (failure_messages_.size() < 10)
    failure_messages_.push_back(message);
}

std::vector<std::string> run_recorder::failure_messages() const {
  std::lock_guard lock(mutex_);
  return failure_messages_;
}

void run_recorder::add_sample(run_sample s) {
  std::lock_guard lock(mutex_);
  samples_.push_back(std::move(s));
}

std::vector<run_sample> run_recorder::samples() const {
  std::lock_guard lock(mutex_);
  return samples_;
}

double run_recorder::last_submitted_s() const {
  int64_t m = -1;
  for (std::size_t i = 0; i < workload_->gangs.size(); ++i)
    m = std::max(m, gangs_[i].submitted_ns.load());
  return m < 0 ? -1 : double(m) / 1e9;
}

double run_recorder::last_running_s() const {
  int64_t m = -1;
  for (std::size_t i = 0; i < workload_->gangs.size(); ++i)
    m = std::max(m, gangs_[i].running_ns.load());
  return m < 0 ? -1 : double(m) / 1e9;
}

double run_recorder::last_completed_s() const {
  int64_t m = -1;
  for (std::size_t i = 0; i < workload_->gangs.size(); ++i)
    m = std::max(m, gangs_[i].completed_ns.load());
  return m < 0 ? -1 : double(m) / 1e9;
}

std::vector<double> run_recorder::submit_to_running_ms() const {
  std::vector<double> out;
  for (std::size_t i = 0; i < workload_->gangs.size(); ++i) {
    auto s = gangs_[i].submitted_ns.load();
    auto r = gangs_[i].running_ns.load();
    if (s >= 0 && r >= 0)
      out.push_back(double(std::max<int64_t>(0, r - s)) / 1e6);
  }
  return out;
}

workload generate_announced(std::string_view mode, const workload_spec& spec) {
  std::printf("%.*s: generating %lld PodGroups on %lld nodes (seed %llu)\n",
              static_cast<int>(mode.size()), mode.data(), static_cast<long long>(spec.podgroups),
              static_cast<long long>(spec.nodes), static_cast<unsigned long long>(spec.seed));
  std::fflush(stdout);
  return generate_workload(spec);
}

void read_runtime_histograms(const std::vector<prom_sample>& metrics, run_extras& x) {
  x.decision_histogram = find_histogram(metrics, "phalanx_gang_decision_seconds");
  x.placed_histogram = find_histogram(metrics, "phalanx_gang_placed_seconds");
  x.store_commit_histogram = find_histogram(metrics, "phalanx_store_commit_seconds");
  x.store_batch_histogram = find_histogram(metrics, "phalanx_store_batch_records");
}

run_outcome wait_for_gangs(const wait_plan& plan, run_recorder& r, progress_meter& meter,
                           const std::atomic<bool>& submitter_done,
                           const std::function<void()>& take_sample,
                           const std::function<bool()>& stop_early) {
  using clock_type = std::chrono::steady_clock;
  auto deadline = clock_type::now() + std::chrono::nanoseconds(plan.timeout_ns);
  auto next_sample = clock_type::now();
  auto last_progress = clock_type::now();
  int64_t last_moved = 0;
  while (true) {
    auto now = clock_type::now();
    if (now >= next_sample) {
      take_sample();
      next_sample = now + std::chrono::nanoseconds(plan.sample_interval_ns);
    }
    meter.update(plan.wait_completion ? r.pods_completed() : r.pods_running());
    bool done = plan.wait_completion ? r.gangs_completed() == plan.gangs
                                     : r.gangs_running() == plan.gangs;
    if (done)
      return run_outcome::completed;
    if (interrupt_signal() != 0)
      return run_outcome::interrupted;
    // Progress is a gang starting or completing; submissions alone do not count, since a run
    // whose gangs are all queued behind one that never fits keeps submitting.
    const int64_t moved = r.gangs_running() + r.gangs_completed();
    if (moved != last_moved) {
      last_moved = moved;
      last_progress = now;
    }
    // Failed submissions never run: stop once nothing moved for a while after the last one.
    if (submitter_done && r.failures() > 0 && now - last_progress > std::chrono::seconds(10))
      return run_outcome::failed;
    if (stop_early && stop_early())
      return run_outcome::failed;
    if (plan.stall_after_ns > 0 &&
        now - last_progress >= std::chrono::nanoseconds(plan.stall_after_ns))
      return run_outcome::stalled;
    if (now >= deadline)
      return run_outcome::timed_out;
    std::this_thread::sleep_for(plan.poll);
  }
}

std::string describe_outcome(run_outcome o, const wait_plan& plan, const run_recorder& r,
                             double seconds) {
  char when[64];
  std::snprintf(when, sizeof when, "%.1f s into the run", seconds);
  std::string state = std::to_string(r.gangs_running()) + " of " + std::to_string(plan.gangs) +
                      " gangs running";
  if (plan.wait_completion)
    state += ", " + std::to_string(r.gangs_completed()) + " completed";
  switch (o) {
    case run_outcome::completed:
      return "completed: " + state;
    case run_outcome::failed:
      return std::string("failed ") + when + ": " + state +
             " (submissions failed or phalanxd exited; see the failures)";
    case run_outcome::stalled:
      return "stalled: no gang started or completed for " +
             scheduler::format_duration_ns(plan.stall_after_ns) + ", stopped " + when + "; " +
             state;
    case run_outcome::timed_out:
      return "timed out after " + scheduler::format_duration_ns(plan.timeout_ns) + ": " + state;
    case run_outcome::interrupted:
      return std::string("interrupted by ") + signal_name(interrupt_signal()) + " " + when +
             "; " + state + "; the figures are partial";
  }
  return "unknown";
}

bool record_pod_group(run_recorder& r, const api::pod_group_object& g) {
  auto label = g.group.meta.labels.find(gang_index_label);
  if (!label)
    return false;
  auto index = parse_int(*label);
  if (!index)
    return false;
  if (g.status.phase == scheduler::pod_group_phase::completed)
    r.observed_completed(*index);
  else if (g.status.phase == scheduler::pod_group_phase::running)
    r.observed_running(*index);
  return true;
}

namespace {

json::array point(double t, double v) {
  return json::array{json_number(t), json_number(v)};
}

json::object line(std::string name, json::array points, bool dashed = false, int color = -1) {
  json::object l;
  l["name"] = std::move(name);
  l["points"] = std::move(points);
  if (dashed)
    l["dashed"] = true;
  if (color >= 0)
    l["color"] = color;
  return l;
}

json::object line_plot(std::string id, std::string title, std::string x_label, std::string y_label,
                       json::array lines, std::string note = {}) {
  json::object p;
  p["id"] = std::move(id);
  p["kind"] = "line";
  p["title"] = std::move(title);
  p["x_label"] = std::move(x_label);
  p["y_label"] = std::move(y_label);
  p["lines"] = std::move(lines);
  if (!note.empty())
    p["note"] = std::move(note);
  return p;
}

std::string ms_label(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "<=%gms", seconds * 1000);
  return buf;
}

std::string fixed(double v, int digits = 1) {
  if (!std::isfinite(v))
    return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

} // namespace

json::object build_run_report(std::string_view mode, const run_options& o, const workload& w,
                              const run_recorder& r, const run_extras& x,
                              const json::object& machine_at_start) {
  json::object rep;
  rep["mode"] = std::string(mode);
  rep["tool"] = "phalanx-loadtest";
  rep["command"] = o.command;
  rep["started_at"] = utc_now_rfc3339();
  rep["outcome"] = std::string(to_string(x.outcome));
  rep["outcome_message"] = x.outcome_message;
  if (x.outcome == run_outcome::interrupted)
    rep["interrupted_by"] = signal_name(interrupt_signal());

  // Parameters: every effective setting.
  json::object params;
  const auto& ws = o.workload;
  params["nodes"] = ws.nodes;
  params["podgroups"] = ws.podgroups;
  json::array sizes;
  for (const auto& b : ws.gang_sizes)
    sizes.push_back(json::object{{"min", b.min}, {"max", b.max}, {"weight", b.weight}});
  params["gang_sizes"] = std::move(sizes);
  json::array queues;
  for (const auto& q : ws.queues)
    queues.push_back(json::object{{"name", q.name}, {"weight", q.weight}});
  params["queues"] = std::move(queues);
  json::array prios;
  for (const auto& p : ws.priorities)
    prios.push_back(json::object{{"priority", p.value}, {"weight", p.weight}});
  params["priorities"] = std::move(prios);
  params["pod_cpu_milli"] = json::array{ws.pod_cpu_min_milli, ws.pod_cpu_max_milli};
  params["pod_memory_bytes"] = json::array{ws.pod_memory_min_bytes, ws.pod_memory_max_bytes};
  params["gpu_gang_fraction"] = ws.gpu_gang_fraction;
  params["gpus_per_pod"] = ws.gpus_per_pod;
  params["node_cpu_milli"] = ws.node_cpu_milli;
  params["node_memory_bytes"] = ws.node_memory_bytes;
  params["node_pods"] = ws.node_pods;
  params["gpu_node_fraction"] = ws.gpu_node_fraction;
  params["gpus_per_node"] = ws.gpus_per_node;
  params["ps_min_gang"] = ws.ps_min_gang;
  params["pod_duration"] = ws.pod_duration_ns
                               ? json::value(scheduler::format_duration_ns(*ws.pod_duration_ns))
                               : json::value(nullptr);
  params["seed"] = ws.seed;
  params["submit"] = std::string(to_string(o.submit));
  params["concurrency"] = o.concurrency;
  params["namespaces"] = o.namespaces;
  params["threads"] = o.threads;
  params["sample_interval"] = scheduler::format_duration_ns(o.sample_interval_ns);
  params["timeout"] = scheduler::format_duration_ns(o.timeout_ns);
  params["stall_after"] = scheduler::format_duration_ns(o.stall_after_ns);
  for (const auto& kv : x.mode_parameters)
    params[kv.key()] = kv.value();
  json::object given;
  for (const auto& [k, v] : o.flags_given)
    given[k] = v;
  params["flags_given"] = std::move(given);
  rep["parameters"] = std::move(params);
  rep["machine"] = json::object{{"at_start", machine_at_start}, {"at_end", machine_info()}};

  // Workload.
  json::object wl;
  wl["nodes"] = static_cast<int64_t>(w.nodes.size());
  wl["podgroups"] = static_cast<int64_t>(w.gangs.size());
  wl["pods"] = w.total_pods;
  wl["mean_gang_size"] = w.gangs.empty() ? 0.0 : double(w.total_pods) / double(w.gangs.size());
  json::array per_bucket;
  for (auto n : w.gangs_per_bucket)
    per_bucket.push_back(n);
  wl["gangs_per_size_bucket"] = std::move(per_bucket);
  auto frac = [](int64_t a, int64_t b) { return b > 0 ? double(a) / double(b) : 0.0; };
  const auto gpu = scheduler::gpu_resource;
  wl["demand_fraction"] =
      json::object{{"cpu", frac(w.total_requests.cpu_milli, w.capacity.cpu_milli)},
                   {"memory", frac(w.total_requests.memory_bytes, w.capacity.memory_bytes)},
                   {"pods", frac(w.total_requests.pods, w.capacity.pods)},
                   {"gpu", frac(w.total_requests.get(gpu), w.capacity.get(gpu))}};
  json::array fit_warnings;
  for (const auto& text : o.fit_warnings)
    fit_warnings.push_back(json::value(text));
  wl["fit_warnings"] = std::move(fit_warnings);
  wl["capacity"] = w.capacity.to_string();
  wl["total_requests"] = w.total_requests.to_string();
  rep["workload"] = std::move(wl);

  // Throughput.
  const double t_submitted = r.last_submitted_s();
  const double t_running = r.last_running_s();
  const bool all_running = r.gangs_running() == static_cast<int64_t>(w.gangs.size());
  const bool all_submitted = r.gangs_submitted() == static_cast<int64_t>(w.gangs.size());
  const double pods = double(w.total_pods);
  double scheduled_rate =
      all_running && t_running > 0 ? pods / t_running : std::numeric_limits<double>::quiet_NaN();
  double submitted_rate = all_submitted && t_submitted > 0
                              ? pods / t_submitted
                              : std::numeric_limits<double>::quiet_NaN();
  rep["pods_per_second"] = json_number(scheduled_rate);
  rep["scheduled_pods_per_second"] = json_number(scheduled_rate);
  rep["submitted_pods_per_second"] = json_number(submitted_rate);
  rep["time_to_submit_all_seconds"] = json_number(all_submitted ? t_submitted : NAN);
  rep["time_to_schedule_all_seconds"] = json_number(all_running ? t_running : NAN);
  if (ws.pod_duration_ns) {
    bool all_done = r.gangs_completed() == static_cast<int64_t>(w.gangs.size());
    rep["time_to_complete_all_seconds"] = json_number(all_done ? r.last_completed_s() : NAN);
  }
  rep["gangs_submitted"] = r.gangs_submitted();
  rep["gangs_running"] = r.gangs_running();
  rep["gangs_completed"] = r.gangs_completed();
  rep["pods_scheduled"] = r.pods_running();
  rep["all_scheduled"] = all_running;
  rep["submission_failures"] = r.failures();
  json::array failures;
  for (const auto& m : r.failure_messages())
    failures.push_back(json::value(m));
  rep["submission_failure_messages"] = std::move(failures);
  rep["setup_seconds"] = x.setup_seconds;

  // Gang decision latency (the runtime's histogram).
  double p50 = NAN, p90 = NAN, p99 = NAN, maxb = NAN, mean = NAN;
  json::array latency_bars;
  if (x.decision_histogram && x.decision_histogram->count > 0) {
    const auto& h = *x.decision_histogram;
    p50 = histogram_quantile(h, 0.50) * 1000;
    p90 = histogram_quantile(h, 0.90) * 1000;
    p99 = histogram_quantile(h, 0.99) * 1000;
    maxb = histogram_max_bound(h) * 1000;
    mean = h.sum / double(h.count) * 1000;
    json::array buckets;
    uint64_t prev = 0;
    for (std::size_t i = 0; i < h.upper_bounds.size(); ++i) {
      uint64_t n = h.cumulative[i] - prev;
      prev = h.cumulative[i];
      buckets.push_back(json::object{{"le_ms", h.upper_bounds[i] * 1000}, {"count", n}});
      latency_bars.push_back(json::object{{"label", ms_label(h.upper_bounds[i])}, {"value", n}});
    }
    buckets.push_back(json::object{{"le_ms", nullptr}, {"count", h.count - prev}});
    // Rounds slower than the largest bucket bound: quantiles that fall among them are reported
    // as that bound (as Prometheus does), so they are lower bounds.
    const double largest_ms = h.upper_bounds.empty() ? 0 : h.upper_bounds.back() * 1000;
    const uint64_t beyond = h.count - prev;
    rep["max_gang_ms_above"] = beyond > 0 ? json::value(largest_ms) : json::value(nullptr);
    latency_bars.push_back(json::object{{"label", "+Inf"}, {"value", h.count - prev}});
    rep["gang_decision"] = json::object{
        {"source", "phalanx_gang_decision_seconds: planning slot granted to every node "
                   "committed, per committed reserve round; quantiles interpolated within "
                   "buckets, max is the upper bound of the highest non-empty bucket"},
        {"rounds", h.count},
        {"rounds_beyond_largest_bucket", h.count - prev},
        {"mean_ms", mean},
        {"buckets", std::move(buckets)}};
  }
  rep["p50_gang_ms"] = json_number(p50);
  rep["p90_gang_ms"] = json_number(p90);
  rep["p99_gang_ms"] = json_number(p99);
  rep["max_gang_ms"] = json_number(maxb);
  rep["mean_gang_ms"] = json_number(mean);

  if (x.placed_histogram && x.placed_histogram->count > 0) {
    const auto& h = *x.placed_histogram;
    rep["gang_placed"] = json::object{
        {"source", "phalanx_gang_placed_seconds: planning slot granted to every node voted yes, "
                   "before the bindings' synced write"},
        {"rounds", h.count},
        {"mean_ms", h.sum / double(h.count) * 1000}};
    rep["p50_placed_ms"] = histogram_quantile(h, 0.5) * 1000;
    rep["p99_placed_ms"] = histogram_quantile(h, 0.99) * 1000;
  }

  if (x.store_commit_histogram && x.store_commit_histogram->count > 0) {
    const auto& h = *x.store_commit_histogram;
    json::object st{{"writes", h.count},
                    {"mean_ms", h.sum / double(h.count) * 1000},
                    {"p50_ms", histogram_quantile(h, 0.5) * 1000},
                    {"p99_ms", histogram_quantile(h, 0.99) * 1000}};
    if (x.store_batch_histogram && x.store_batch_histogram->count > 0)
      st["mean_records_per_write"] =
          x.store_batch_histogram->sum / double(x.store_batch_histogram->count);
    rep["store_commit"] = std::move(st);
  }

  auto e2e = summarize(r.submit_to_running_ms());
  rep["submit_to_running_ms"] =
      json::object{{"gangs", e2e.count}, {"mean", e2e.mean}, {"p50", e2e.p50},
                   {"p90", e2e.p90},     {"p99", e2e.p99},   {"max", e2e.max}};

  // Time series.
  auto samples = r.samples();
  json::array sched_pts, submitted_pts, running_pts, cpu_pts, mem_pts, gpu_pts;
  std::map<std::string, json::array> q_alloc, q_deserved;
  const double cap_cpu = double(w.capacity.cpu_milli) / 1000;
  const double cap_mem = double(w.capacity.memory_bytes);
  const double cap_gpu = double(w.capacity.get(gpu));
  double peak_cpu = 0, peak_gpu = 0;
  for (const auto& s : samples) {
    sched_pts.push_back(point(s.t, double(s.pods_scheduled)));
    submitted_pts.push_back(point(s.t, double(s.pods_submitted)));
    running_pts.push_back(point(s.t, double(s.pods_running)));
    double c = 0, m = 0, g = 0;
    for (const auto& [name, q] : s.queues) {
      c += q.allocated_cpu;
      m += q.allocated_memory;
      g += q.allocated_gpu;
      q_alloc[name].push_back(point(s.t, q.allocated_cpu));
      q_deserved[name].push_back(point(s.t, q.deserved_cpu));
    }
    double uc = cap_cpu > 0 ? c / cap_cpu : 0, um = cap_mem > 0 ? m / cap_mem : 0,
           ug = cap_gpu > 0 ? g / cap_gpu : 0;
    peak_cpu = std::max(peak_cpu, uc);
    peak_gpu = std::max(peak_gpu, ug);
    cpu_pts.push_back(point(s.t, uc));
    mem_pts.push_back(point(s.t, um));
    gpu_pts.push_back(point(s.t, ug));
  }
  // The fastest stretch of binding: the largest rise of the runtime's pods-scheduled counter over
  // any window of at least half a second (or the whole run when it is shorter).
  double peak_rate = 0;
  for (std::size_t i = 0, j = 0; j < samples.size(); ++j) {
    while (i + 1 < j && samples[j].t - samples[i + 1].t >= 0.5)
      ++i;
    double dt = samples[j].t - samples[i].t;
    if (dt >= 0.5 || (i == 0 && j + 1 == samples.size() && dt > 0))
      peak_rate =
          std::max(peak_rate, double(samples[j].pods_scheduled - samples[i].pods_scheduled) / dt);
  }
  rep["peak_scheduled_pods_per_second"] = peak_rate;

  json::object util;
  util["peak_cpu"] = peak_cpu;
  util["peak_gpu"] = peak_gpu;
  if (!samples.empty()) {
    const auto& last = samples.back();
    double c = 0, m = 0, g = 0;
    for (const auto& [name, q] : last.queues) {
      c += q.allocated_cpu;
      m += q.allocated_memory;
      g += q.allocated_gpu;
    }
    util["final_cpu"] = cap_cpu > 0 ? c / cap_cpu : 0;
    util["final_memory"] = cap_mem > 0 ? m / cap_mem : 0;
    util["final_gpu"] = cap_gpu > 0 ? g / cap_gpu : 0;
  }
  rep["utilization"] = std::move(util);

  // Per-queue share versus deserved, at the last sample.
  json::array queue_rows;
  json::array queue_table_rows;
  int64_t weight_sum = 0;
  for (const auto& q : ws.queues)
    weight_sum += q.weight;
  double alloc_sum = 0;
  if (!samples.empty())
    for (const auto& [name, q] : samples.back().queues)
      alloc_sum += q.allocated_cpu;
  for (const auto& q : ws.queues) {
    queue_point p;
    if (!samples.empty())
      if (auto it = samples.back().queues.find(q.name); it != samples.back().queues.end())
        p = it->second;
    double share = p.deserved_cpu > 0 ? p.allocated_cpu / p.deserved_cpu : NAN;
    queue_rows.push_back(json::object{
        {"name", q.name},
        {"weight", q.weight},
        {"weight_fraction", weight_sum > 0 ? double(q.weight) / double(weight_sum) : 0.0},
        {"allocated_cpu", p.allocated_cpu},
        {"allocated_gpu", p.allocated_gpu},
        {"deserved_cpu", p.deserved_cpu},
        {"deserved_gpu", p.deserved_gpu},
        {"allocated_fraction", alloc_sum > 0 ? p.allocated_cpu / alloc_sum : 0.0},
        {"share_of_deserved", json_number(share)}});
    queue_table_rows.push_back(json::array{json::value(q.name), q.weight,
                                           json_number(p.allocated_cpu),
                                           json_number(p.deserved_cpu), json_number(share)});
  }
  rep["queues"] = std::move(queue_rows);

  // Invariants.
  rep["invariants_checked"] = x.invariants_checked;
  rep["invariants_ok"] = x.invariants_checked && x.invariants.ok();
  rep["invariants_source"] = x.invariants_source;
  json::array violations;
  for (std::size_t i = 0; i < x.invariants.violations.size() && i < 50; ++i)
    violations.push_back(json::value(x.invariants.violations[i]));
  rep["invariant_violations"] = std::move(violations);
  rep["invariant_violation_count"] = static_cast<int64_t>(x.invariants.violations.size());

  for (const auto& kv : x.mode_figures)
    rep[kv.key()] = kv.value();

  rep["targets"] = json::array{}; // The mode adds its targets.

  // Summary rows for the HTML page.
  json::array summary;
  auto row = [&](std::string k, std::string v) {
    summary.push_back(json::array{json::value(std::move(k)), json::value(std::move(v))});
  };
  row("workload", std::to_string(w.nodes.size()) + " nodes, " + std::to_string(w.gangs.size()) +
                      " PodGroups, " + format_count(w.total_pods) + " pods, submitted as " +
                      std::string(to_string(o.submit)));
  row("pods/s (submitted and scheduled)", fixed(scheduled_rate, 0));
  row("submitted pods/s", fixed(submitted_rate, 0));
  row("peak binding rate (pods/s over >= 0.5 s)", fixed(peak_rate, 0));
  row("time to schedule all", fixed(all_running ? t_running : NAN, 3) + " s");
  {
    // A quantile at the largest finite bucket bound may be anything above it.
    double top = x.decision_histogram && !x.decision_histogram->upper_bounds.empty()
                     ? x.decision_histogram->upper_bounds.back() * 1000
                     : NAN;
    auto q = [&](double v) { return (v >= top ? ">=" : "") + fixed(v, 3); };
    row("gang decision p50 / p90 / p99 / max (ms)",
        q(p50) + " / " + q(p90) + " / " + q(p99) + " / " +
            (std::isfinite(maxb) ? "<=" + fixed(maxb, 3) : ">" + fixed(top, 0)));
  }
  if (x.placed_histogram && x.placed_histogram->count > 0)
    row("gang placed (before the durable write) p50 / p99 (ms)",
        fixed(histogram_quantile(*x.placed_histogram, 0.5) * 1000, 3) + " / " +
            fixed(histogram_quantile(*x.placed_histogram, 0.99) * 1000, 3));
  row("submit to Running p50 / p99 / max (ms)",
      fixed(e2e.p50, 1) + " / " + fixed(e2e.p99, 1) + " / " + fixed(e2e.max, 1));
  if (x.store_commit_histogram && x.store_commit_histogram->count > 0)
    row("synced store writes: count, p50 / p99 (ms)",
        std::to_string(x.store_commit_histogram->count) + ", " +
            fixed(histogram_quantile(*x.store_commit_histogram, 0.5) * 1000, 3) + " / " +
            fixed(histogram_quantile(*x.store_commit_histogram, 0.99) * 1000, 3));
  row("invariants I1-I4",
      x.invariants_checked
          ? (x.invariants.ok() ? std::string("hold") : x.invariants.to_string().substr(0, 300))
          : std::string("not checked"));
  for (const auto& [k, v] : x.mode_summary)
    row(k, v);
  rep["summary"] = std::move(summary);
  rep["tables"] = json::array{json::object{
      {"title", "Queues: share versus deserved (cpu cores, at the end)"},
      {"columns", json::array{"queue", "weight", "allocated", "deserved", "allocated/deserved"}},
      {"rows", std::move(queue_table_rows)}}};

  // Plots.
  json::array plots;
  plots.push_back(line_plot("scheduled", "Pods over time", "seconds since submission started",
                            "pods",
                            json::array{line("scheduled (runtime counter)", std::move(sched_pts)),
                                        line("submitted (acknowledged)", std::move(submitted_pts)),
                                        line("in Running gangs (watch)", std::move(running_pts))}));
  if (!latency_bars.empty()) {
    json::object p;
    p["id"] = "latency";
    p["kind"] = "bars";
    p["title"] = "Gang decision latency (runtime histogram)";
    p["x_label"] = "bucket";
    p["y_label"] = "reserve rounds";
    p["bars"] = std::move(latency_bars);
    plots.push_back(std::move(p));
  }
  {
    // Client-side latency, in powers of two of milliseconds.
    auto lat = r.submit_to_running_ms();
    json::array bars;
    if (!lat.empty()) {
      std::vector<int64_t> counts(24, 0);
      for (double v : lat) {
        int b = v <= 1 ? 0 : std::min(23, static_cast<int>(std::ceil(std::log2(v))));
        ++counts[static_cast<std::size_t>(b)];
      }
      int last = 0;
      for (int b = 0; b < 24; ++b)
        if (counts[static_cast<std::size_t>(b)] > 0)
          last = b;
      for (int b = 0; b <= last; ++b)
        bars.push_back(json::object{{"label", "<=" + std::to_string(int64_t{1} << b) + "ms"},
                                    {"value", counts[static_cast<std::size_t>(b)]},
                                    {"color", "#ff7f0e"}});
    }
    json::object p;
    p["id"] = "submit_latency";
    p["kind"] = "bars";
    p["title"] = "Submission acknowledged to PodGroup Running (client side, queueing included)";
    p["x_label"] = "bucket";
    p["y_label"] = "gangs";
    p["bars"] = std::move(bars);
    plots.push_back(std::move(p));
  }
  {
    json::array lines{line("cpu", std::move(cpu_pts)), line("memory", std::move(mem_pts))};
    if (cap_gpu > 0)
      lines.push_back(line("gpu", std::move(gpu_pts)));
    auto p = line_plot("utilization", "Cluster utilization (allocated / allocatable)",
                       "seconds since submission started", "fraction", std::move(lines));
    p["y_max"] = 1.0;
    plots.push_back(std::move(p));
  }
  {
    // One colour per queue: allocated solid, deserved dashed.
    json::array lines;
    int color = 0;
    for (auto& [name, pts] : q_alloc) {
      lines.push_back(line(name + " allocated", std::move(pts), false, color));
      lines.push_back(line(name + " deserved", std::move(q_deserved[name]), true, color));
      ++color;
    }
    plots.push_back(line_plot("queues", "Per-queue share: allocated versus deserved cpu",
                              "seconds since submission started", "cpu cores", std::move(lines)));
  }
  rep["plots"] = std::move(plots);
  return rep;
}

} // namespace phalanx::loadtest
