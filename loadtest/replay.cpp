#include "loadtest/replay.hpp"

#include "loadtest/progress.hpp"
#include "loadtest/report.hpp"
#include "loadtest/scheduling_run.hpp"
#include "loadtest/stats.hpp"

#include "scheduler/fair_share.hpp"
#include "scheduler/quantity.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;
namespace sch = phalanx::scheduler;

result<std::vector<sch::sim_policy>> parse_policies(const std::string& text) {
  std::vector<sch::sim_policy> out;
  std::size_t start = 0;
  int index = 0;
  while (true) {
    auto comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ++index;
    bool found = false;
    std::string known;
    for (int i = 0; i <= static_cast<int>(sch::sim_policy_last); ++i) {
      const auto p = static_cast<sch::sim_policy>(i);
      known += (i == 0 ? "" : ", ") + std::string(sch::to_string(p));
      if (sch::to_string(p) == item) {
        if (std::find(out.begin(), out.end(), p) != out.end())
          return status{errc::invalid_argument,
                        "item " + std::to_string(index) + " \"" + item + "\": named twice"};
        out.push_back(p);
        found = true;
      }
    }
    if (!found)
      return status{errc::invalid_argument, "item " + std::to_string(index) + " \"" + item +
                                                "\": unknown policy; known: " + known};
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

result<std::vector<std::pair<std::string, std::string>>> parse_name_values(
    const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t start = 0;
  int index = 0;
  while (true) {
    auto comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ++index;
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return status{errc::invalid_argument,
                    "item " + std::to_string(index) + " \"" + item + "\": expected NAME=VALUE"};
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

result<std::vector<sch::sim_queue>> replay_queues(
    const std::map<std::string, int64_t>& vc_sizes, std::span<const sch::sim_job> jobs,
    std::span<const std::pair<std::string, std::string>> parents,
    std::span<const std::pair<std::string, int64_t>> weights) {
  std::vector<sch::sim_queue> queues;
  std::map<std::string, std::size_t> index;
  auto add = [&](std::string name, int64_t weight) {
    if (index.count(name))
      return;
    index[name] = queues.size();
    sch::sim_queue q;
    q.name = std::move(name);
    q.weight = static_cast<int32_t>(std::clamp<int64_t>(weight, 1, 65535));
    queues.push_back(std::move(q));
  };
  for (const auto& [vc, size] : vc_sizes)
    add(dns_safe_name(vc), size);  // As to_sim_jobs names the jobs' queues.
  for (const auto& j : jobs)
    add(j.group.queue, 1);
  // A parent that is no queue yet is made; it hangs under the root unless it is given a parent.
  for (const auto& [queue, parent] : parents)
    if (!sch::is_child_of_root(parent))
      add(dns_safe_name(parent), 1);
  std::set<std::string> given;
  for (std::size_t i = 0; i < parents.size(); ++i) {
    const auto name = dns_safe_name(parents[i].first);
    const std::string item = "item " + std::to_string(i + 1) + " \"" + parents[i].first + "=" +
                             parents[i].second + "\"";
    if (!given.insert(name).second)
      return status{errc::invalid_argument, item + ": queue " + name + " is given a parent twice"};
    if (!index.count(name))
      return status{errc::invalid_argument,
                    item + ": no queue " + name + " (neither a VC, a queue of the trace, nor a "
                           "parent)"};
    queues[index.at(name)].parent =
        sch::is_child_of_root(parents[i].second) ? "" : dns_safe_name(parents[i].second);
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const auto name = dns_safe_name(weights[i].first);
    const std::string item = "item " + std::to_string(i + 1) + " \"" + weights[i].first + "=" +
                             std::to_string(weights[i].second) + "\"";
    auto it = index.find(name);
    if (it == index.end())
      return status{errc::invalid_argument,
                    item + ": no queue " + name + " (neither a VC, a queue of the trace, nor a "
                           "parent)"};
    if (weights[i].second < 1 || weights[i].second > 65535)
      return status{errc::invalid_argument, item + ": the weight must be between 1 and 65535"};
    queues[it->second].weight = static_cast<int32_t>(weights[i].second);
  }
  return queues;
}

void apply_priority_gpus(std::vector<sch::sim_job>& jobs, int64_t gpus) {
  if (gpus <= 0)
    return;
  for (auto& j : jobs) {
    int64_t asked = 0;
    for (const auto& p : j.pods)
      asked += p.spec.requests.get(sch::gpu_resource);
    if (asked < gpus)
      continue;
    j.group.priority = priority_high;
    for (auto& p : j.pods)
      p.spec.priority = priority_high;
  }
}

namespace {

double seconds(sch::duration d) {
  return std::chrono::duration<double>(d).count();
}

double mean_of(const std::vector<double>& values) {
  return values.empty() ? 0
                        : std::accumulate(values.begin(), values.end(), 0.0) /
                              double(values.size());
}

// A job's JCT and queueing delay, each with whether it is censored at the end of the run.
struct job_times {
  double jct_s = 0;
  bool jct_censored = false;
  double wait_s = 0;
  bool wait_censored = false;
};

// Per queue: job counts, and JCT and queueing over every job, censored ones at their bounds.
std::map<std::string, queue_outcome> by_queue(const std::vector<sch::sim_job_result>& jobs,
                                              const std::vector<job_times>& times) {
  std::map<std::string, std::vector<double>> jcts, waits, big_waits;
  std::map<std::string, queue_outcome> out;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    auto& q = out[j.queue];
    ++q.jobs;
    if (j.phase == sch::sim_job_phase::completed)
      ++q.completed;
    q.evicted_pods += j.evicted_pods;
    q.wasted_gpu_hours += double(j.wasted_gpu_ms) / 3'600'000.0;
    q.reclaim_evicted_pods += j.reclaim_evicted_pods;
    q.reclaim_wasted_gpu_hours += double(j.reclaim_wasted_gpu_ms) / 3'600'000.0;
    if (j.requests.get(sch::gpu_resource) >= big_job_gpus) {
      ++q.big_jobs;
      if (j.time_to_start) {
        const double wait = seconds(*j.time_to_start);
        big_waits[j.queue].push_back(wait);
        q.big_jobs_waited += wait > 0;
        q.big_longest_wait_s = std::max(q.big_longest_wait_s, wait);
      }
    }
    jcts[j.queue].push_back(times[i].jct_s);
    q.jct_censored += times[i].jct_censored;
    waits[j.queue].push_back(times[i].wait_s);
  }
  for (auto& [name, q] : out) {
    auto& v = jcts[name];
    std::sort(v.begin(), v.end());
    q.mean_jct_s = mean_of(v);
    q.p95_jct_s = percentile_sorted(v, 0.95);
    q.mean_queueing_s = mean_of(waits[name]);
    q.big_mean_wait_s = mean_of(big_waits[name]);
  }
  return out;
}

// GPU- and cpu-core-seconds of useful work a job did inside [from, to] (see policy_outcome):
// none unless it started; each pod from the start for its run time, cut at the job's end.
std::pair<double, double> useful_work(const sch::sim_job& in, const sch::sim_job_result& out,
                                      double run_end_s, double from, double to) {
  if (!out.started_at || out.phase == sch::sim_job_phase::deadlocked)
    return {0, 0};
  const double start = seconds(*out.started_at);
  const double end = out.completed_at ? seconds(*out.completed_at) : run_end_s;
  double gpu = 0, cpu = 0;
  for (const auto& pod : in.pods) {
    const double a = std::max(start, from);
    const double b = std::min({start + seconds(pod.run_time), end, to});
    if (b <= a)
      continue;
    gpu += double(pod.spec.requests.get(sch::gpu_resource)) * (b - a);
    cpu += double(pod.spec.requests.cpu_milli) / 1000.0 * (b - a);
  }
  return {gpu, cpu};
}

big_job_outcome big_job_waits(const std::vector<sch::sim_job_result>& jobs) {
  big_job_outcome out;
  std::vector<double> waits;
  for (const auto& j : jobs) {
    if (j.requests.get(sch::gpu_resource) < big_job_gpus)
      continue;
    ++out.jobs;
    if (!j.time_to_start)
      continue;
    ++out.started;
    const double wait = seconds(*j.time_to_start);
    waits.push_back(wait);
    if (out.longest_wait_job.empty() || wait > out.longest_wait_s) {
      out.longest_wait_s = wait;
      out.longest_wait_job = j.name;
    }
  }
  std::sort(waits.begin(), waits.end());
  out.mean_wait_s = mean_of(waits);
  out.p95_wait_s = percentile_sorted(waits, 0.95);
  return out;
}

// What was held, useful or not, over the makespan, from every partition's changes of use
// (at, cpu delta, GPU delta): the step function of the plot and the held fractions.
void held_over_makespan(std::vector<std::tuple<sch::duration, int64_t, int64_t>>& deltas,
                        sch::duration makespan, const sch::resources& total,
                        policy_outcome& out) {
  std::stable_sort(deltas.begin(), deltas.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  int64_t cpu = 0, gpu = 0;
  double cpu_area = 0, gpu_area = 0; // Unit-seconds.
  sch::duration last{};
  out.utilization.push_back({0.0, 0.0, 0.0});
  for (std::size_t i = 0; i < deltas.size();) {
    auto at = std::get<0>(deltas[i]);
    cpu_area += double(cpu) / 1000.0 * seconds(at - last);
    gpu_area += double(gpu) * seconds(at - last);
    last = at;
    while (i < deltas.size() && std::get<0>(deltas[i]) == at) {
      cpu += std::get<1>(deltas[i]);
      gpu += std::get<2>(deltas[i]);
      ++i;
    }
    out.utilization.push_back({seconds(at), double(gpu), double(cpu) / 1000.0});
  }
  if (makespan > last) {
    cpu_area += double(cpu) / 1000.0 * seconds(makespan - last);
    gpu_area += double(gpu) * seconds(makespan - last);
  }
  double span = seconds(makespan);
  double total_gpu = double(total.get(sch::gpu_resource));
  double total_cpu = double(total.cpu_milli) / 1000.0;
  out.gpu_held_fraction = span > 0 && total_gpu > 0 ? gpu_area / (total_gpu * span) : 0;
  out.cpu_held_fraction = span > 0 && total_cpu > 0 ? cpu_area / (total_cpu * span) : 0;
}

} // namespace

policy_outcome merge_results(sch::sim_policy policy, const std::vector<partition_run>& parts,
                             const sch::resources& total) {
  policy_outcome out;
  out.policy = policy;
  std::vector<double> jcts, completed_jcts;
  std::vector<job_times> times;
  double queueing_sum = 0, started_queueing_sum = 0;
  int64_t started = 0;
  sch::duration makespan{};
  // Use changes of every partition as deltas, then one sweep.
  std::vector<std::tuple<sch::duration, int64_t, int64_t>> deltas;
  int64_t wasted_gpu_ms = 0;
  int64_t reclaim_wasted_gpu_ms = 0;
  double useful_gpu = 0, useful_cpu = 0, gpu_capacity = 0, cpu_capacity = 0;
  for (const auto& part : parts) {
    const auto* r = part.result;
    out.events += r->events_processed;
    out.preemptions += r->summary.preemptions;
    out.reclaims += r->summary.reclaims;
    out.reclaim_evicted_pods += r->summary.reclaim_evicted_pods;
    reclaim_wasted_gpu_ms += r->summary.reclaim_wasted_gpu_ms;
    out.evicted_pods += r->summary.evicted_pods;
    out.evicted_jobs += r->summary.evicted_jobs;
    out.restarts += r->summary.restarts;
    wasted_gpu_ms += r->summary.wasted_gpu_ms;
    makespan = std::max(makespan, r->summary.makespan);
    for (const auto& v : r->violations)
      out.violations.push_back(v);
    int64_t prev_cpu = 0, prev_gpu = 0;
    for (const auto& s : r->utilization) {
      deltas.emplace_back(s.at, s.cpu_milli - prev_cpu, s.gpu - prev_gpu);
      prev_cpu = s.cpu_milli;
      prev_gpu = s.gpu;
    }
    // The partition's arrival window, the same under every policy.
    const double run_end = seconds(r->summary.makespan);
    double first = 0, last = 0;
    for (std::size_t i = 0; i < part.jobs.size(); ++i) {
      const double at = seconds(part.jobs[i].arrival);
      first = i == 0 ? at : std::min(first, at);
      last = i == 0 ? at : std::max(last, at);
    }
    if (last <= first)
      last = std::max(first, run_end);
    auto& po = out.partitions[part.name];
    po.jobs = static_cast<int64_t>(r->jobs.size());
    po.window_s = last - first;
    double part_gpu = 0, part_cpu = 0;
    for (std::size_t i = 0; i < r->jobs.size(); ++i) {
      const auto& j = r->jobs[i];
      switch (j.phase) {
        case sch::sim_job_phase::completed:
          ++out.completed;
          break;
        case sch::sim_job_phase::deadlocked:
          ++out.deadlocked;
          break;
        case sch::sim_job_phase::pending:
          ++out.starved;
          break;
        case sch::sim_job_phase::running:
          ++out.running;
          break;
      }
      // Censored at the end of the partition's run: a job that did not complete took at least
      // that long, one that never started waited at least that long.
      const double arrival = i < part.jobs.size() ? seconds(part.jobs[i].arrival) : 0;
      const double bound = std::max(0.0, run_end - arrival);
      job_times t;
      t.jct_censored = !j.completion_time;
      t.jct_s = j.completion_time ? seconds(*j.completion_time) : bound;
      t.wait_censored = !j.time_to_start;
      t.wait_s = j.time_to_start ? seconds(*j.time_to_start) : bound;
      jcts.push_back(t.jct_s);
      out.jct_censored += t.jct_censored;
      queueing_sum += t.wait_s;
      out.queueing_censored += t.wait_censored;
      times.push_back(t);
      if (j.completion_time)
        completed_jcts.push_back(seconds(*j.completion_time));
      if (j.time_to_start) {
        started_queueing_sum += seconds(*j.time_to_start);
        ++started;
      } else {
        ++out.never_started;
      }
      if (j.reserved_at)
        ++out.reserved;
      if (i < part.jobs.size()) {
        auto [g, c] = useful_work(part.jobs[i], j, run_end, first, last);
        part_gpu += g;
        part_cpu += c;
      }
      out.jobs.push_back(j);
    }
    const double gpus = double(part.capacity.get(sch::gpu_resource));
    const double cores = double(part.capacity.cpu_milli) / 1000.0;
    po.gpu_utilization = gpus > 0 && po.window_s > 0 ? part_gpu / (gpus * po.window_s) : 0;
    po.cpu_utilization = cores > 0 && po.window_s > 0 ? part_cpu / (cores * po.window_s) : 0;
    useful_gpu += part_gpu;
    useful_cpu += part_cpu;
    gpu_capacity += gpus * po.window_s;
    cpu_capacity += cores * po.window_s;
  }
  std::sort(jcts.begin(), jcts.end());
  std::sort(completed_jcts.begin(), completed_jcts.end());
  out.mean_jct_s = mean_of(jcts);
  out.p95_jct_s = percentile_sorted(jcts, 0.95);
  out.mean_jct_completed_s = mean_of(completed_jcts);
  out.mean_queueing_s = times.empty() ? 0 : queueing_sum / double(times.size());
  out.mean_queueing_started_s = started > 0 ? started_queueing_sum / double(started) : 0;
  out.gpu_utilization = gpu_capacity > 0 ? useful_gpu / gpu_capacity : 0;
  out.cpu_utilization = cpu_capacity > 0 ? useful_cpu / cpu_capacity : 0;
  out.makespan_s = seconds(makespan);
  out.wasted_gpu_hours = double(wasted_gpu_ms) / 3'600'000.0;
  out.reclaim_wasted_gpu_hours = double(reclaim_wasted_gpu_ms) / 3'600'000.0;
  out.queues = by_queue(out.jobs, times);
  out.big_jobs = big_job_waits(out.jobs);

  held_over_makespan(deltas, makespan, total, out);
  return out;
}

namespace {

// The step function u[i][column] (from u[i][0] to u[i + 1][0]; the last holds until `end_s`) as
// at most `max_points` time-weighted means over equal bins, in hours and fractions of `scale`.
json::array downsample_steps(const std::vector<std::array<double, 3>>& u, std::size_t column,
                             double scale, double end_s, std::size_t max_points) {
  json::array pts;
  if (u.empty() || scale <= 0)
    return pts;
  end_s = std::max(end_s, u.back()[0]);
  if (end_s <= 0)
    return pts;
  const double width = end_s / double(max_points);
  std::vector<double> area(max_points, 0.0);
  for (std::size_t i = 0; i < u.size(); ++i) {
    double a = u[i][0];
    double b = i + 1 < u.size() ? u[i + 1][0] : end_s;
    double v = u[i][column];
    if (v == 0 || b <= a)
      continue;
    // Every bin the interval [a, b) overlaps; the last bin also takes what rounding leaves.
    auto first = std::min<std::size_t>(max_points - 1, static_cast<std::size_t>(a / width));
    for (std::size_t k = first; k < max_points; ++k) {
      double lo = std::max(a, double(k) * width);
      double hi = k + 1 == max_points ? b : std::min(b, double(k + 1) * width);
      if (hi > lo)
        area[k] += v * (hi - lo);
      if (double(k + 1) * width >= b)
        break;
    }
  }
  for (std::size_t k = 0; k < max_points; ++k)
    pts.push_back(json::array{(double(k) + 0.5) * width / 3600.0, area[k] / width / scale});
  return pts;
}

// The CDF of the completion times of the jobs `keep` selects, as a fraction of those jobs:
// jobs that never complete keep it below 1.
json::array cdf_points(const std::vector<sch::sim_job_result>& jobs, std::size_t max_points,
                       const std::function<bool(const sch::sim_job_result&)>& keep = {}) {
  std::vector<double> jcts;
  std::size_t selected = 0;
  for (const auto& j : jobs) {
    if (keep && !keep(j))
      continue;
    ++selected;
    if (j.completion_time)
      jcts.push_back(std::max(1e-3, seconds(*j.completion_time)));
  }
  std::sort(jcts.begin(), jcts.end());
  json::array pts;
  if (jcts.empty())
    return pts;
  const double n = double(selected);
  // The curve rises from 0 at the first completion (one job: a vertical step, still drawn).
  pts.push_back(json::array{jcts.front(), 0.0});
  std::size_t stride = std::max<std::size_t>(1, jcts.size() / max_points);
  for (std::size_t i = 0; i < jcts.size(); i += stride)
    pts.push_back(json::array{jcts[i], double(i + 1) / n});
  pts.push_back(json::array{jcts.back(), double(jcts.size()) / n});
  return pts;
}

// The JCT CDF per job size (the big ones as big_job_gpus defines them), one plot per size that
// has jobs, side by side: small jobs are most of a trace and hide how the policies treat the big
// ones.
json::array jct_cdf_by_size(const std::vector<policy_outcome>& outcomes) {
  struct size_class {
    const char* id;
    const char* title;
    int64_t min_gpus, max_gpus;
  };
  json::array plots;
  for (const auto& c :
       {size_class{"jct_cdf_small", "jobs of at most 1 GPU", 0, 1},
        size_class{"jct_cdf_medium", "jobs of 2 to 7 GPUs", 2, big_job_gpus - 1},
        size_class{"jct_cdf_big", "big jobs, 8 GPUs or more", big_job_gpus,
                   std::numeric_limits<int64_t>::max()}}) {
    auto keep = [&](const sch::sim_job_result& j) {
      auto g = j.requests.get(sch::gpu_resource);
      return g >= c.min_gpus && g <= c.max_gpus;
    };
    int64_t n = 0;
    if (!outcomes.empty())
      n = std::count_if(outcomes.front().jobs.begin(), outcomes.front().jobs.end(), keep);
    if (n == 0)
      continue;
    json::array lines;
    for (const auto& out : outcomes)
      lines.push_back(json::object{{"name", std::string(sch::to_string(out.policy))},
                                   {"points", cdf_points(out.jobs, 400, keep)}});
    plots.push_back(json::object{
        {"id", c.id},
        {"kind", "line"},
        {"row", "jct_by_size"},
        {"title", std::string("JCT CDF, ") + c.title + " (" + std::to_string(n) + ")"},
        {"x_label", "job completion time (s, log scale)"},
        {"y_label", "fraction of these jobs"},
        {"x_log", true},
        {"y_max", 1.0},
        {"lines", std::move(lines)}});
  }
  return plots;
}

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", s);
  return buf;
}

json::object policy_json(const policy_outcome& out) {
  json::object p;
  p["jobs"] = static_cast<int64_t>(out.jobs.size());
  p["completed"] = out.completed;
  p["deadlocked"] = out.deadlocked;
  p["starved"] = out.starved;
  p["running_at_end"] = out.running;
  p["never_started"] = out.never_started;
  p["censoring"] = "jobs that did not complete count with JCT = end of run - arrival, jobs that "
                   "never started with queueing delay = end of run - arrival: lower bounds";
  p["mean_jct_s"] = out.mean_jct_s;
  p["p95_jct_s"] = out.p95_jct_s;
  p["jct_censored_jobs"] = out.jct_censored;
  p["mean_jct_is_lower_bound"] = out.jct_censored > 0;
  p["mean_queueing_delay_s"] = out.mean_queueing_s;
  p["queueing_censored_jobs"] = out.queueing_censored;
  p["mean_queueing_delay_is_lower_bound"] = out.queueing_censored > 0;
  p["mean_jct_completed_s"] = out.mean_jct_completed_s;
  p["mean_queueing_delay_started_s"] = out.mean_queueing_started_s;
  p["utilization_definition"] =
      "useful work (GPU or cpu time of the pods of jobs that started, up to their run time) "
      "over each partition's capacity from its first job's arrival to its last one's";
  p["gpu_utilization"] = out.gpu_utilization;
  p["cpu_utilization"] = out.cpu_utilization;
  p["gpu_held_fraction_over_makespan"] = out.gpu_held_fraction;
  p["cpu_held_fraction_over_makespan"] = out.cpu_held_fraction;
  json::object partitions;
  for (const auto& [name, part] : out.partitions)
    partitions[name] = json::object{{"jobs", part.jobs},
                                    {"window_s", part.window_s},
                                    {"gpu_utilization", part.gpu_utilization},
                                    {"cpu_utilization", part.cpu_utilization}};
  p["partitions"] = std::move(partitions);
  p["makespan_s"] = out.makespan_s;
  p["events"] = out.events;
  p["simulation_wall_seconds"] = out.wall_seconds;
  p["invariant_violations"] = static_cast<int64_t>(out.violations.size());
  p["reserved_gangs"] = out.reserved;
  p["preemptions"] = out.preemptions;
  p["evicted_pods"] = out.evicted_pods;
  p["evicted_jobs"] = out.evicted_jobs;
  p["restarted_jobs"] = out.restarts;
  p["wasted_gpu_hours"] = out.wasted_gpu_hours;
  p["reclaims"] = out.reclaims;
  p["reclaim_evicted_pods"] = out.reclaim_evicted_pods;
  p["reclaim_wasted_gpu_hours"] = out.reclaim_wasted_gpu_hours;
  json::object queues;
  for (const auto& [name, q] : out.queues)
    queues[name] = json::object{{"jobs", q.jobs},
                                {"completed", q.completed},
                                {"jct_censored_jobs", q.jct_censored},
                                {"mean_jct_s", q.mean_jct_s},
                                {"p95_jct_s", q.p95_jct_s},
                                {"mean_queueing_delay_s", q.mean_queueing_s},
                                {"evicted_pods", q.evicted_pods},
                                {"wasted_gpu_hours", q.wasted_gpu_hours},
                                {"reclaim_evicted_pods", q.reclaim_evicted_pods},
                                {"reclaim_wasted_gpu_hours", q.reclaim_wasted_gpu_hours},
                                {"big_jobs", q.big_jobs},
                                {"big_jobs_waited", q.big_jobs_waited},
                                {"big_mean_wait_s", q.big_mean_wait_s},
                                {"big_longest_wait_s", q.big_longest_wait_s}};
  p["queues"] = std::move(queues);
  const auto& big = out.big_jobs;
  p["big_jobs"] = json::object{
      {"definition", "at least " + std::to_string(big_job_gpus) + " GPUs requested in all"},
      {"jobs", big.jobs},
      {"started", big.started},
      {"mean_wait_s", big.mean_wait_s},
      {"p95_wait_s", big.p95_wait_s},
      {"longest_wait_s", big.longest_wait_s},
      {"longest_wait_job", big.longest_wait_job}};
  json::array stuck;
  for (const auto& j : out.jobs)
    if ((j.phase == sch::sim_job_phase::deadlocked || j.phase == sch::sim_job_phase::pending) &&
        stuck.size() < 20)
      stuck.push_back(json::object{{"job", j.name},
                                   {"phase", std::string(sch::to_string(j.phase))},
                                   {"reason", j.reason.substr(0, 400)}});
  p["stuck_jobs"] = std::move(stuck);
  json::array violations;
  for (std::size_t i = 0; i < out.violations.size() && i < 20; ++i)
    violations.push_back(json::value(out.violations[i]));
  p["violations"] = std::move(violations);
  return p;
}

// The per-queue table: a row per queue, a mean and a p95 JCT column per policy and, when pods
// may be evicted, the pods its queue lost and those of them reclaim took.
// The per-partition table: a row per partition (a VC simulated on its own, or the one cluster)
// with its arrival window and each policy's useful GPU utilization over it.
json::object partition_table(const std::vector<policy_outcome>& outcomes) {
  json::array columns{"partition", "jobs", "arrival window (h)"};
  for (const auto& out : outcomes)
    columns.push_back(json::value(std::string(sch::to_string(out.policy)) + " useful GPU (%)"));
  json::array rows;
  if (!outcomes.empty())
    for (const auto& [name, first] : outcomes.front().partitions) {
      json::array row{json::value(name), first.jobs, first.window_s / 3600.0};
      for (const auto& out : outcomes) {
        auto it = out.partitions.find(name);
        row.push_back(it == out.partitions.end() ? json::value(nullptr)
                                                 : json::value(it->second.gpu_utilization * 100));
      }
      rows.push_back(std::move(row));
    }
  return json::object{{"title", "Per partition: useful GPU utilization over its arrival window"},
                      {"columns", std::move(columns)},
                      {"rows", std::move(rows)}};
}

json::object queue_table(const std::vector<policy_outcome>& outcomes, bool evictions) {
  json::array columns{"queue", "jobs"};
  for (const auto& out : outcomes) {
    const std::string name(sch::to_string(out.policy));
    columns.push_back(json::value(name + " mean JCT (s)"));
    columns.push_back(json::value(name + " p95 JCT (s)"));
    if (evictions) {
      columns.push_back(json::value(name + " evicted pods"));
      columns.push_back(json::value(name + " of them by reclaim"));
    }
  }
  json::array rows;
  if (!outcomes.empty())
    for (const auto& [queue, first] : outcomes.front().queues) {
      json::array row{json::value(queue), first.jobs};
      for (const auto& out : outcomes) {
        auto it = out.queues.find(queue);
        const queue_outcome none;
        const auto& q = it == out.queues.end() ? none : it->second;
        row.push_back(q.mean_jct_s);
        row.push_back(q.p95_jct_s);
        if (evictions) {
          row.push_back(q.evicted_pods);
          row.push_back(q.reclaim_evicted_pods);
        }
      }
      rows.push_back(std::move(row));
    }
  return json::object{{"title", "Per queue (VC): JCT over all its jobs (those that did not "
                                "complete at their lower bound)"},
                      {"columns", std::move(columns)},
                      {"rows", std::move(rows)}};
}

void print_tables(const std::vector<policy_outcome>& outcomes, bool evictions) {
  std::printf("%-12s %9s %10s %8s %13s %12s %12s %14s %8s %9s %14s %8s %12s %12s %10s %13s\n",
              "policy", "completed", "deadlocked", "starved", "never started", "mean JCT s",
              "p95 JCT s", "mean queue s", "GPU %", "reserved", "big max wait s", "evicted",
              "evicted jobs", "wasted GPU-h", "reclaimed", "reclaim GPU-h");
  for (const auto& out : outcomes)
    std::printf(
        "%-12s %9lld %10lld %8lld %13lld %12s %12s %14s %8.1f %9lld %14s %8lld %12lld %12.1f "
        "%10lld %13.1f\n",
        std::string(sch::to_string(out.policy)).c_str(), static_cast<long long>(out.completed),
        static_cast<long long>(out.deadlocked), static_cast<long long>(out.starved),
        static_cast<long long>(out.never_started),
        ((out.jct_censored > 0 ? ">=" : "") + fmt_s(out.mean_jct_s)).c_str(),
        ((out.jct_censored > 0 ? ">=" : "") + fmt_s(out.p95_jct_s)).c_str(),
        ((out.queueing_censored > 0 ? ">=" : "") + fmt_s(out.mean_queueing_s)).c_str(),
        out.gpu_utilization * 100,
        static_cast<long long>(out.reserved), fmt_s(out.big_jobs.longest_wait_s).c_str(),
        static_cast<long long>(out.evicted_pods), static_cast<long long>(out.evicted_jobs),
        out.wasted_gpu_hours, static_cast<long long>(out.reclaim_evicted_pods),
        out.reclaim_wasted_gpu_hours);
  if (outcomes.empty() || outcomes.front().big_jobs.jobs == 0)
    return;
  std::printf("big jobs (>= %lld GPUs): %lld; wait to start, mean / p95 / longest (s):\n",
              static_cast<long long>(big_job_gpus),
              static_cast<long long>(outcomes.front().big_jobs.jobs));
  for (const auto& out : outcomes) {
    const auto& big = out.big_jobs;
    std::string never;
    if (big.started < big.jobs)
      never = ", " + std::to_string(big.jobs - big.started) + " never started";
    std::printf("  %-12s %s / %s / %s (%s)%s\n", std::string(sch::to_string(out.policy)).c_str(),
                fmt_s(big.mean_wait_s).c_str(), fmt_s(big.p95_wait_s).c_str(),
                fmt_s(big.longest_wait_s).c_str(), big.longest_wait_job.c_str(), never.c_str());
  }
  std::printf("JCT and queueing over every job; \">=\": jobs that did not complete (start) count "
              "with the time to the end of the run, a lower bound. GPU %%: useful work over the "
              "arrival window (jobs that never started did none)\n");
  std::printf("per queue, mean / p95 JCT (s)%s:\n%-10s %6s",
              evictions ? ", evicted pods (of them by reclaim)" : "", "queue", "jobs");
  const int width = evictions ? 31 : 21;
  for (const auto& out : outcomes)
    std::printf(" %*s", width, std::string(sch::to_string(out.policy)).c_str());
  std::printf("\n");
  for (const auto& [queue, first] : outcomes.front().queues) {
    std::printf("%-10s %6lld", queue.c_str(), static_cast<long long>(first.jobs));
    for (const auto& out : outcomes) {
      auto it = out.queues.find(queue);
      std::string cell = "-";
      if (it != out.queues.end()) {
        const auto& q = it->second;
        cell = fmt_s(q.mean_jct_s) + " / " + fmt_s(q.p95_jct_s);
        if (evictions)
          cell += ", " + std::to_string(q.evicted_pods) + " (" +
                  std::to_string(q.reclaim_evicted_pods) + ")";
      }
      std::printf(" %*s", width, cell.c_str());
    }
    std::printf("\n");
  }
}

} // namespace

result<json::object> run_replay(const replay_options& o) {
  auto machine0 = machine_info();
  auto trace_text = read_text_file(o.trace_path);
  if (!trace_text)
    return status{errc::invalid_argument, "--trace: " + trace_text.error().message()};
  auto tr = read_trace(*trace_text, o.trace_path, o.read);
  if (!tr)
    return tr.error();
  if (tr->jobs.empty())
    return status{errc::invalid_argument, o.trace_path + ": the trace has no job"};

  replay_cluster cluster;
  int sources = (!o.cluster_path.empty()) + (!o.vc_path.empty()) + (o.uniform_nodes > 0);
  if (sources != 1)
    return status{errc::invalid_argument,
                  "give exactly one cluster: --cluster FILE (YAML or node list CSV), "
                  "--cluster-from-vc FILE, or --nodes N"};
  if (!o.vc_path.empty()) {
    auto text = read_text_file(o.vc_path);
    if (!text)
      return status{errc::invalid_argument, "--cluster-from-vc: " + text.error().message()};
    auto c = cluster_from_vc_sizes(*text, o.vc_path, o.vc_scale, o.shape);
    if (!c)
      return c.error();
    cluster = std::move(*c);
  } else if (!o.cluster_path.empty()) {
    auto text = read_text_file(o.cluster_path);
    if (!text)
      return status{errc::invalid_argument, "--cluster: " + text.error().message()};
    auto first = text->find_first_not_of(" \t\r\n");
    bool csv = first != std::string::npos && text->compare(first, 3, "sn,") == 0;
    auto c = csv ? cluster_from_node_list(*text, o.cluster_path)
                 : cluster_from_yaml(*text, o.cluster_path);
    if (!c)
      return c.error();
    cluster = std::move(*c);
  } else {
    cluster = uniform_cluster(o.uniform_nodes, o.shape);
  }

  bool separate =
      o.partition == "separate" || (o.partition == "auto" && !cluster.partitions.empty());
  if (separate && cluster.partitions.empty())
    return status{errc::invalid_argument,
                  "--partition separate: the cluster has no VC partitions (use "
                  "--cluster-from-vc)"};
  if (separate && o.reclaim)
    return status{errc::invalid_argument,
                  "--reclaim: each VC is simulated on its own, with no other queue to reclaim "
                  "from (use --partition pooled)"};

  replay_model model = o.model;
  if (separate || o.partition == "pooled")
    model.pin_to_vc = false; // Each partition's nodes are the VC's nodes already, or all nodes
                             // are every VC's.
  auto jobs = to_sim_jobs(*tr, model, cluster);
  apply_priority_gpus(jobs, o.priority_gpus);

  // Partitions: job indices and node indices per part.
  struct part {
    std::string name;
    std::vector<std::size_t> jobs;
    sch::cluster_snapshot nodes;
    std::vector<sch::sim_job> job_values;
  };
  std::vector<part> parts;
  if (separate) {
    std::map<std::string, std::size_t> index_of;
    for (const auto& [vc, members] : cluster.partitions) {
      index_of[vc] = parts.size();
      part p;
      p.name = vc;
      for (auto n : members)
        p.nodes.add_node(cluster.nodes[n]);
      parts.push_back(std::move(p));
    }
    // to_sim_jobs ordered jobs by submit time; map them back to their trace jobs' VC.
    std::vector<const trace_job*> order;
    for (const auto& j : tr->jobs)
      order.push_back(&j);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return a->submit_s < b->submit_s; });
    for (std::size_t i = 0; i < order.size(); ++i) {
      auto it = index_of.find(order[i]->group);
      if (it == index_of.end())
        return status{errc::invalid_argument, o.trace_path + ":" + std::to_string(order[i]->line) +
                                                  ": job " + order[i]->name + " runs in VC \"" +
                                                  order[i]->group + "\", which " + o.vc_path +
                                                  " does not list"};
      parts[it->second].jobs.push_back(i);
    }
  } else {
    part p;
    p.name = "cluster";
    for (const auto& n : cluster.nodes)
      p.nodes.add_node(n);
    for (std::size_t i = 0; i < jobs.size(); ++i)
      p.jobs.push_back(i);
    parts.push_back(std::move(p));
  }
  for (auto& p : parts)
    for (auto i : p.jobs)
      p.job_values.push_back(jobs[i]);

  // Queues for the phalanx policy: the VCs weighted by their size, else weight 1, under their
  // parents.
  auto queues = replay_queues(cluster.vc_sizes, jobs, o.queue_parents, o.queue_weights);
  if (!queues)
    return status{errc::invalid_argument, queues.error().message()};

  sch::resources total;
  for (const auto& n : cluster.nodes)
    total += n.allocatable;
  std::printf(
      "replay: %s: %zu jobs (%s); cluster %s; %s; policies:", o.trace_path.c_str(), tr->jobs.size(),
      std::string(to_string(tr->format)).c_str(), cluster.description.c_str(),
      separate ? ("each of " + std::to_string(parts.size()) + " VCs simulated on its own").c_str()
      : o.partition == "pooled" ? "one pooled cluster, VCs as queues"
                                : "one shared cluster");
  for (auto p : o.policies)
    std::printf(" %s", std::string(sch::to_string(p)).c_str());
  std::printf("\n");
  std::fflush(stdout);

  // Every (policy, part) simulation, on `parallel` threads.
  struct task {
    std::size_t policy = 0;
    std::size_t part = 0;
    std::optional<sch::sim_result> out;
    status error;
    double wall = 0;
  };
  std::vector<task> tasks;
  for (std::size_t p = 0; p < o.policies.size(); ++p)
    for (std::size_t k = 0; k < parts.size(); ++k)
      if (!parts[k].job_values.empty()) {
        task t;
        t.policy = p;
        t.part = k;
        tasks.push_back(std::move(t));
      }
  std::atomic<std::size_t> next{0};
  std::atomic<int64_t> done{0};
  progress_meter meter(stdout, stdout_is_tty(), "simulated", "runs",
                       static_cast<int64_t>(tasks.size()));
  std::mutex meter_mutex;
  auto worker = [&] {
    while (true) {
      auto i = next.fetch_add(1);
      if (i >= tasks.size())
        return;
      auto& t = tasks[i];
      sch::sim_config cfg;
      cfg.policy = o.policies[t.policy];
      cfg.pod_start_delay = sch::duration(o.pod_start_delay_ns);
      cfg.queues = *queues;
      cfg.starvation_bound = sch::duration(o.starvation_bound_ns);
      cfg.preemption = o.preemption;
      cfg.reclaim = o.reclaim;
      cfg.seed = o.seed;
      if (o.end_time_ns > 0)
        cfg.end_time = sch::duration(o.end_time_ns);
      auto t0 = std::chrono::steady_clock::now();
      auto r = sch::simulate(parts[t.part].nodes, parts[t.part].job_values, cfg);
      if (r.ok())
        t.out = std::move(*r);
      else
        t.error = r.error();
      t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      auto d = done.fetch_add(1) + 1;
      std::lock_guard lock(meter_mutex);
      meter.update(d);
    }
  };
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < std::max<int64_t>(1, o.parallel); ++i)
    threads.emplace_back(worker);
  for (auto& t : threads)
    t.join();
  meter.finish(done.load());
  for (const auto& t : tasks)
    if (!t.out)
      return status{t.error.code(), "simulation of " + parts[t.part].name + " under " +
                                        std::string(sch::to_string(o.policies[t.policy])) + ": " +
                                        t.error.message()};

  std::vector<sch::resources> part_capacity(parts.size());
  for (std::size_t k = 0; k < parts.size(); ++k)
    for (std::size_t n = 0; n < parts[k].nodes.size(); ++n)
      part_capacity[k] += parts[k].nodes.at(n).allocatable;
  std::vector<policy_outcome> outcomes;
  for (std::size_t p = 0; p < o.policies.size(); ++p) {
    std::vector<partition_run> results;
    double wall = 0;
    for (const auto& t : tasks)
      if (t.policy == p) {
        results.push_back({parts[t.part].name, &*t.out, parts[t.part].job_values,
                           part_capacity[t.part]});
        wall += t.wall;
      }
    auto merged = merge_results(o.policies[p], results, total);
    merged.wall_seconds = wall;
    outcomes.push_back(std::move(merged));
  }

  // The report.
  json::object rep;
  rep["mode"] = "replay";
  rep["tool"] = "phalanx-loadtest";
  rep["command"] = o.command;
  rep["started_at"] = utc_now_rfc3339();
  json::object params;
  params["trace"] = o.trace_path;
  params["trace_format"] = std::string(to_string(tr->format));
  params["cluster"] = o.cluster_path;
  params["cluster_from_vc"] = o.vc_path;
  params["vc_scale"] = o.vc_scale;
  params["uniform_nodes"] = o.uniform_nodes;
  params["partition"] = separate ? "separate" : o.partition == "pooled" ? "pooled" : "shared";
  params["pod_interval"] = sch::format_duration_ns(o.model.pod_interval_ns);
  params["wait_for_gang"] = o.model.wait_for_gang;
  params["pin_to_vc"] = model.pin_to_vc;
  params["starvation_bound"] = sch::format_duration_ns(o.starvation_bound_ns);
  params["priority_gpus"] = o.priority_gpus;
  params["preemption"] = o.preemption;
  params["reclaim"] = o.reclaim;
  json::object tree;
  for (const auto& q : *queues)
    tree[q.name] = json::object{{"weight", q.weight},
                                {"parent", q.parent.empty() ? "root" : q.parent}};
  params["queues"] = std::move(tree);
  params["pod_start_delay"] = sch::format_duration_ns(o.pod_start_delay_ns);
  params["end_time"] = o.end_time_ns > 0 ? json::value(sch::format_duration_ns(o.end_time_ns))
                                         : json::value(nullptr);
  params["max_jobs"] = o.read.max_jobs;
  params["seed"] = o.seed;
  params["parallel"] = o.parallel;
  json::object given;
  for (const auto& [k, v] : o.flags_given)
    given[k] = v;
  params["flags_given"] = std::move(given);
  rep["parameters"] = std::move(params);
  rep["machine"] = json::object{{"at_start", machine0}, {"at_end", machine_info()}};
  json::object cl;
  cl["description"] = cluster.description;
  cl["nodes"] = static_cast<int64_t>(cluster.nodes.size());
  cl["gpus"] = total.get(sch::gpu_resource);
  cl["cpu_cores"] = double(total.cpu_milli) / 1000.0;
  cl["partitions"] = static_cast<int64_t>(separate ? parts.size() : 1);
  json::object vcs;
  for (const auto& [vc, members] : cluster.partitions)
    vcs[vc] = json::object{{"nodes_before_scale", cluster.vc_sizes[vc]},
                           {"nodes", static_cast<int64_t>(members.size())}};
  if (!vcs.empty())
    cl["vcs"] = std::move(vcs);
  rep["cluster"] = std::move(cl);
  rep["jobs"] = static_cast<int64_t>(tr->jobs.size());
  int64_t gangs = 0;
  for (const auto& j : tr->jobs)
    gangs += j.pods > 1 ? 1 : 0;
  rep["multi_pod_jobs"] = gangs;

  json::object per_policy;
  json::array table_rows;
  json::array cdf_lines, util_lines;
  for (const auto& out : outcomes) {
    per_policy[sch::to_string(out.policy)] = policy_json(out);
    auto at_least = [](double v, bool censored) {
      return censored ? json::value(">= " + format_count(std::llround(v))) : json::value(v);
    };
    table_rows.push_back(json::array{
        json::value(std::string(sch::to_string(out.policy))), out.completed, out.deadlocked,
        out.starved, out.never_started, at_least(out.mean_jct_s, out.jct_censored > 0),
        at_least(out.p95_jct_s, out.jct_censored > 0),
        at_least(out.mean_queueing_s, out.queueing_censored > 0), out.gpu_utilization * 100,
        out.makespan_s / 3600.0, static_cast<int64_t>(out.violations.size()),
        out.big_jobs.longest_wait_s, out.evicted_pods, out.evicted_jobs, out.wasted_gpu_hours,
        out.reclaims, out.reclaim_evicted_pods, out.reclaim_wasted_gpu_hours});
    cdf_lines.push_back(json::object{{"name", std::string(sch::to_string(out.policy))},
                                     {"points", cdf_points(out.jobs, 400)}});
    util_lines.push_back(json::object{
        {"name", std::string(sch::to_string(out.policy))},
        {"points", downsample_steps(out.utilization, 1, double(total.get(sch::gpu_resource)),
                                    out.makespan_s, 300)}});
  }
  rep["policies"] = std::move(per_policy);

  // Targets (DESIGN.md section 9), when the three policies ran.
  json::array targets;
  const policy_outcome* pods = nullptr;
  const policy_outcome* fifo = nullptr;
  const policy_outcome* phx = nullptr;
  for (const auto& out : outcomes) {
    if (out.policy == sch::sim_policy::pod_by_pod)
      pods = &out;
    if (out.policy == sch::sim_policy::gang_fifo)
      fifo = &out;
    if (out.policy == sch::sim_policy::phalanx)
      phx = &out;
  }
  bool all_ok = true;
  if (phx) {
    bool ok = phx->deadlocked == 0;
    all_ok &= ok;
    targets.push_back(make_target("phalanx: no deadlocked job", "policies.phalanx.deadlocked == 0",
                                  0, double(phx->deadlocked), ok));
  }
  if (phx && fifo) {
    bool ok = phx->completed >= fifo->completed && phx->mean_jct_s < fifo->mean_jct_s;
    all_ok &= ok;
    targets.push_back(make_target(
        "phalanx: lower mean JCT than gang FIFO",
        "policies.phalanx.mean_jct_s < policies.gang-fifo.mean_jct_s (and as many completed)",
        fifo->mean_jct_s, phx->mean_jct_s, ok));
  }
  if (pods) {
    bool ok = pods->deadlocked > 0;
    all_ok &= ok;
    targets.push_back(make_target("pod-by-pod shows the deadlocks",
                                  "policies.pod-by-pod.deadlocked > 0", 1, double(pods->deadlocked),
                                  ok));
  }
  bool no_violations = std::all_of(outcomes.begin(), outcomes.end(),
                                   [](const auto& x) { return x.violations.empty(); });
  targets.push_back(make_target("simulation invariants", "no violation under any policy", 0,
                                no_violations ? 0 : 1, no_violations));
  rep["targets"] = std::move(targets);
  rep["targets_met"] = all_ok && no_violations;
  rep["invariants_ok"] = no_violations;

  json::array summary;
  summary.push_back(json::array{"trace", o.trace_path + " (" + std::to_string(tr->jobs.size()) +
                                             " jobs, " + std::to_string(gangs) +
                                             " of them gangs)"});
  summary.push_back(json::array{"cluster", cluster.description});
  summary.push_back(json::array{
      "partitions", separate                     ? std::to_string(parts.size()) +
                                                       " VCs, each its own scheduler"
                    : o.partition == "pooled" ? std::string("one pooled cluster, VCs as queues")
                                              : std::string("one shared cluster")});
  rep["summary"] = std::move(summary);
  rep["tables"] = json::array{
      json::object{{"title", "Per policy: JCT and queueing over every job (\">=\": jobs that "
                             "did not complete or start count with the time to the end of the "
                             "run, a lower bound); GPU utilization is useful work over the "
                             "arrival window"},
                   {"columns", json::array{"policy", "completed", "deadlocked", "starved",
                                           "never started", "mean JCT (s)", "p95 JCT (s)",
                                           "mean queueing (s)", "useful GPU util (%)",
                                           "makespan (h)", "violations",
                                           "longest big-job wait (s)", "evicted pods",
                                           "evicted jobs", "wasted GPU-hours", "reclaims",
                                           "pods evicted by reclaim",
                                           "GPU-hours wasted by reclaim"}},
                   {"rows", std::move(table_rows)}},
      queue_table(outcomes, o.preemption || o.reclaim), partition_table(outcomes)};
  json::array plots;
  plots.push_back(json::object{{"id", "jct_cdf"},
                               {"kind", "line"},
                               {"title", "CDF of job completion time per policy"},
                               {"note", "Fraction of all jobs completed within the time; jobs "
                                        "that never complete keep a curve below 1."},
                               {"x_label", "job completion time (s, log scale)"},
                               {"y_label", "fraction of jobs"},
                               {"x_log", true},
                               {"y_max", 1.0},
                               {"lines", std::move(cdf_lines)}});
  if (total.get(sch::gpu_resource) > 0)
    plots.push_back(
        json::object{{"id", "gpu_utilization"},
                     {"kind", "line"},
                     {"title", "GPUs held over time per policy"},
                     {"note", "Allocated, useful or not (a deadlocked job's pods are held to the "
                              "end); time-weighted mean over 300 equal intervals of the run."},
                     {"x_label", "simulated hours"},
                     {"y_label", "fraction of the cluster's GPUs"},
                     {"y_max", 1.0},
                     {"lines", std::move(util_lines)}});
  for (auto& p : jct_cdf_by_size(outcomes))
    plots.push_back(std::move(p));
  rep["plots"] = std::move(plots);

  print_tables(outcomes, o.preemption || o.reclaim);
  std::fflush(stdout);
  return rep;
}

} // namespace phalanx::loadtest
