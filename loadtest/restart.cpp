#include "loadtest/restart.hpp"
#include "loadtest/interrupt.hpp"

#include "loadtest/phalanxd_process.hpp"
#include "loadtest/progress.hpp"
#include "loadtest/report.hpp"
#include "loadtest/scheduling_run.hpp"
#include "loadtest/stats.hpp"

#include "api/client.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <tuple>
#include <utility>

namespace phalanx::loadtest {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

// Counts the items of a list answer without decoding the objects.
int64_t count_items(api::http_client& c, const std::string& target, std::string& error) {
  api::client_request req;
  req.target = target;
  auto res = c.send(req);
  if (!res || res->status != 200) {
    error = "GET " + target + ": " +
            (res ? "HTTP " + std::to_string(res->status) : res.error().message());
    return -1;
  }
  boost::system::error_code ec;
  auto v = json::parse(res->body, ec);
  if (ec || !v.is_object()) {
    error = "GET " + target + ": the answer is not a JSON object";
    return -1;
  }
  const auto* items = v.as_object().if_contains("items");
  if (items == nullptr || !items->is_array()) {
    error = "GET " + target + ": no items";
    return -1;
  }
  return static_cast<int64_t>(items->as_array().size());
}

// The resident set of a process (VmRSS of /proc/PID/status), -1 when it cannot be read.
int64_t resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("VmRSS:")) {
      long long kib = -1;
      if (std::sscanf(line.c_str() + 6, "%lld", &kib) == 1)
        return kib * 1024;
    }
  return -1;
}

// The resident set once it stops moving: read every 200 ms until five readings in a row (one
// second) stay within 0.5% of each other, for at most `limit`. Returns the last reading and the
// seconds it took (-1 seconds when it never settled).
std::pair<int64_t, double> settled_resident_bytes(pid_t pid, std::chrono::seconds limit) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  int64_t previous = resident_bytes(pid);
  int steady = 0;
  while (previous >= 0 && clock::now() - start < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int64_t now = resident_bytes(pid);
    if (now < 0)
      return {previous, -1};
    steady = std::abs(now - previous) * 200 <= previous ? steady + 1 : 0;
    previous = now;
    if (steady == 5)
      return {now, std::chrono::duration<double>(clock::now() - start).count()};
  }
  return {previous, -1};
}

std::string fixed3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

} // namespace

result<json::object> run_restart(const restart_options& o) {
  if (auto s = validate(o.store); !s.ok())
    return s;
  auto machine0 = machine_info();
  auto dir = make_temp_dir(o.work_dir, "phalanx-loadtest-restart-");
  if (!dir)
    return dir.error();
  dir_cleanup cleanup(*dir, o.keep);
  const std::string pristine = *dir + "/pristine";

  std::printf("restart: building a store of %s pods in %s PodGroups on %s nodes in %s\n",
              format_count(o.store.pods).c_str(), format_count(o.store.groups).c_str(),
              format_count(o.store.nodes).c_str(), pristine.c_str());
  std::fflush(stdout);
  auto built = build_restart_store(o.store, pristine);
  if (!built)
    return built.error();
  std::uintmax_t store_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(pristine))
    if (e.is_regular_file())
      store_bytes += e.file_size();
  std::printf("restart: built in %.2f s (%s records, %.1f MiB)\n", built->seconds,
              format_count(built->records).c_str(), double(store_bytes) / 1048576.0);

  std::vector<restart_round> rounds;
  progress_meter meter(stdout, stdout_is_tty(), "restarts", "rounds", o.repeat);
  for (int64_t round = 0; round < o.repeat && interrupt_signal() == 0; ++round) {
    std::string data = *dir + "/round-" + std::to_string(round);
    std::error_code ec;
    fs::copy(pristine, data, fs::copy_options::recursive, ec);
    if (ec)
      return status{errc::io_error, "copy the store to " + data + ": " + ec.message()};
    phalanxd_options po;
    if (!o.phalanxd_binary.empty())
      po.binary = o.phalanxd_binary;
    po.data_dir = data;
    po.log_file = data + ".log";
    po.ready_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::nanoseconds(o.ready_timeout_ns));
    po.extra_args = {"--log-level", "info"};
    auto d = phalanxd_process::start(po);
    if (!d)
      return status{d.error().code(),
                    "round " + std::to_string(round + 1) + ": " + d.error().message()};
    const auto ready_at = std::chrono::steady_clock::now();
    restart_round r;
    r.restart_seconds = (*d)->seconds_to_ready();
    r.rss_bytes = resident_bytes((*d)->pid());  // Before the lists below allocate answers.
    std::tie(r.rss_settled_bytes, r.settle_seconds) =
        settled_resident_bytes((*d)->pid(), std::chrono::seconds(10));
    if (o.steady_after_ns > 0) {
      // Slept in steps, so a Ctrl-C does not wait out --steady-after.
      const auto until = ready_at + std::chrono::nanoseconds(o.steady_after_ns);
      while (std::chrono::steady_clock::now() < until && interrupt_signal() == 0)
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
            until - std::chrono::steady_clock::now(), std::chrono::milliseconds(100)));
      if (interrupt_signal() == 0)
        r.rss_steady_bytes = resident_bytes((*d)->pid());
    }
    {
      auto client = (*d)->client_options();
      client.timeout = std::chrono::seconds(120);
      client.max_body_bytes = std::size_t{1} << 30;
      api::http_client c(client);
      api::client_request req;
      req.target = "/metrics";
      if (auto res = c.send(req); res && res->status == 200)
        if (auto parsed = parse_prometheus_text(res->body)) {
          if (auto v = find_sample(*parsed, "phalanx_restart_seconds"))
            r.restore_seconds = *v;
          if (auto v = find_sample(*parsed, "phalanx_parked_gangs"))
            r.parked_gangs = static_cast<int64_t>(*v);
        }
      std::string error;
      r.podgroups_listed = count_items(c, "/apis/scheduling.volcano.sh/v1beta1/podgroups", error);
      r.nodes_listed = count_items(c, "/api/v1/nodes", error);
      if (!error.empty())
        std::printf("restart: round %lld: %s\n", static_cast<long long>(round + 1), error.c_str());
    }
    auto code = (*d)->stop();
    r.exit_code = code.ok() ? *code : -1;
    rounds.push_back(r);
    meter.update(round + 1);
    if (!o.keep)
      fs::remove_all(data, ec);
  }
  meter.finish(static_cast<int64_t>(rounds.size()));
  // Interrupted (interrupt.hpp): the rounds done are the report; none done, nothing to report.
  const int sig = interrupt_signal();
  if (sig != 0 && rounds.empty())
    return status{errc::unavailable, std::string("interrupted by ") + signal_name(sig) +
                                         " before the first restart was measured"};

  std::vector<double> times, restores;
  std::vector<int64_t> rss, settled, steady;
  for (const auto& r : rounds) {
    times.push_back(r.restart_seconds);
    if (r.restore_seconds >= 0)
      restores.push_back(r.restore_seconds);
    if (r.rss_bytes >= 0)
      rss.push_back(r.rss_bytes);
    if (r.rss_settled_bytes >= 0)
      settled.push_back(r.rss_settled_bytes);
    if (r.rss_steady_bytes >= 0)
      steady.push_back(r.rss_steady_bytes);
  }
  // Everything the daemon holds (code, RocksDB's caches, actors, the pods) over the pods held:
  // an upper bound of the per-pod cost.
  auto median_of = [](std::vector<int64_t>& v) -> int64_t {
    std::sort(v.begin(), v.end());
    return v.empty() ? -1 : v[v.size() / 2];
  };
  auto per_pod = [&o](int64_t bytes) {
    return bytes < 0 || o.store.pods == 0 ? NAN : double(bytes) / double(o.store.pods);
  };
  int64_t rss_median = median_of(rss);
  double rss_per_pod = per_pod(rss_median);
  // The target is judged on the settled figure: the one at ready moves with the work the
  // daemon does right after it (docs/PERFORMANCE.md, "Memory").
  int64_t settled_median = median_of(settled);
  double settled_per_pod = per_pod(settled_median);
  int64_t steady_median = median_of(steady);
  double steady_per_pod = per_pod(steady_median);
  std::sort(times.begin(), times.end());
  std::sort(restores.begin(), restores.end());
  double median = times[times.size() / 2];
  double restore_median = restores.empty() ? NAN : restores[restores.size() / 2];
  bool complete = std::all_of(rounds.begin(), rounds.end(), [&](const restart_round& r) {
    return r.podgroups_listed == o.store.groups && r.nodes_listed == o.store.nodes;
  });
  bool clean = std::all_of(rounds.begin(), rounds.end(),
                           [](const restart_round& r) { return r.exit_code == 0; });

  json::object rep;
  rep["mode"] = "restart";
  rep["tool"] = "phalanx-loadtest";
  rep["command"] = o.command;
  rep["started_at"] = utc_now_rfc3339();
  rep["outcome"] = sig != 0 ? "interrupted" : "completed";
  rep["outcome_message"] =
      sig != 0 ? std::string("interrupted by ") + signal_name(sig) + " after " +
                     std::to_string(rounds.size()) + " of " + std::to_string(o.repeat) +
                     " rounds; the figures are over those"
               : "completed: " + std::to_string(rounds.size()) + " rounds";
  if (sig != 0)
    rep["interrupted_by"] = signal_name(sig);
  json::object params{
      {"pods", o.store.pods},
      {"podgroups", o.store.groups},
      {"nodes", o.store.nodes},
      {"queues", o.store.queues},
      {"jobs", o.store.jobs},
      {"spec_bytes", o.store.spec_bytes},
      {"bare_pods", o.store.bare_pods},
      {"all_bound", o.store.all_bound},
      {"repeat", o.repeat},
      {"ready_timeout", scheduler::format_duration_ns(o.ready_timeout_ns)},
      {"phalanxd", o.phalanxd_binary.empty() ? built_phalanxd_path() : o.phalanxd_binary}};
  json::object given;
  for (const auto& [k, v] : o.flags_given)
    given[k] = v;
  params["flags_given"] = std::move(given);
  rep["parameters"] = std::move(params);
  rep["machine"] = json::object{{"at_start", machine0}, {"at_end", machine_info()}};
  rep["store"] = json::object{{"records", built->records},
                              {"bound_pods", built->bound_pods},
                              {"build_seconds", built->seconds},
                              {"bytes", static_cast<int64_t>(store_bytes)}};
  rep["restart_seconds"] = median;
  rep["restart_seconds_min"] = times.front();
  rep["restart_seconds_max"] = times.back();
  rep["restore_seconds"] = json_number(restore_median);
  rep["rss_bytes"] = rss_median;
  rep["rss_bytes_per_pod"] = json_number(rss_per_pod);
  rep["rss_settled_bytes"] = settled_median;
  rep["rss_settled_bytes_per_pod"] = json_number(settled_per_pod);
  rep["rss_steady_bytes"] = steady_median;
  rep["rss_steady_bytes_per_pod"] = json_number(steady_per_pod);
  rep["all_objects_back"] = complete;
  rep["clean_stops"] = clean;
  json::array round_list;
  json::array bars;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    const auto& r = rounds[i];
    round_list.push_back(json::object{{"restart_seconds", r.restart_seconds},
                                      {"restore_seconds", json_number(r.restore_seconds)},
                                      {"podgroups_listed", r.podgroups_listed},
                                      {"nodes_listed", r.nodes_listed},
                                      {"rss_bytes", r.rss_bytes},
                                      {"rss_settled_bytes", r.rss_settled_bytes},
                                      {"rss_steady_bytes", r.rss_steady_bytes},
                                      {"parked_gangs", r.parked_gangs},
                                      {"settle_seconds", json_number(r.settle_seconds < 0
                                                                         ? NAN
                                                                         : r.settle_seconds)},
                                      {"exit_code", r.exit_code}});
    bars.push_back(
        json::object{{"label", "round " + std::to_string(i + 1)}, {"value", r.restart_seconds}});
  }
  rep["rounds"] = std::move(round_list);
  rep["targets"] = json::array{
      make_target("restart to ready, " + format_count(o.store.pods) + " pods",
                  "restart_seconds (median, fork to /readyz 200) <= 1", 1, median, median <= 1),
      make_target("every PodGroup and node back", "all_objects_back", 1, complete ? 1 : 0,
                  complete),
      make_target("memory per pod held",
                  "rss_settled_bytes_per_pod (resident set once settled after ready / pods) "
                  "<= 1024",
                  1024, settled_per_pod,
                  std::isfinite(settled_per_pod) && settled_per_pod <= 1024)};
  rep["summary"] = json::array{
      json::array{"store", format_count(o.store.pods) + " pods, " + format_count(o.store.groups) +
                               " PodGroups, " + format_count(o.store.nodes) + " nodes"},
      json::array{"restart_seconds median / min / max",
                  fixed3(median) + " / " + fixed3(times.front()) + " / " + fixed3(times.back())},
      json::array{"runtime restore (phalanx_restart_seconds), median",
                  std::isfinite(restore_median) ? fixed3(restore_median) : "n/a"},
      json::array{"resident memory once ready, median",
                  rss_median < 0 ? std::string("n/a")
                                 : fixed3(double(rss_median) / 1048576.0) + " MiB (" +
                                       std::to_string(int64_t(rss_per_pod)) + " B per pod)"},
      json::array{"resident memory once settled, median",
                  settled_median < 0 ? std::string("n/a")
                                     : fixed3(double(settled_median) / 1048576.0) + " MiB (" +
                                           std::to_string(int64_t(settled_per_pod)) +
                                           " B per pod)"},
      json::array{"resident memory at --steady-after, median",
                  steady_median < 0 ? std::string("n/a")
                                    : fixed3(double(steady_median) / 1048576.0) + " MiB (" +
                                          std::to_string(int64_t(steady_per_pod)) +
                                          " B per pod)"}};
  rep["plots"] = json::array{json::object{{"id", "restarts"},
                                          {"kind", "bars"},
                                          {"title", "Fork to /readyz 200 per round"},
                                          {"x_label", "round"},
                                          {"y_label", "seconds"},
                                          {"bars", std::move(bars)}}};
  std::printf("restart: restart_seconds median %.3f (min %.3f, max %.3f) over %lld rounds; "
              "runtime restore %.3f s; resident %.1f MiB (%.0f B per pod) at ready, %.1f MiB "
              "(%.0f B per pod) settled\n",
              median, times.front(), times.back(), static_cast<long long>(o.repeat),
              restore_median, double(rss_median) / 1048576.0, rss_per_pod,
              double(settled_median) / 1048576.0, settled_per_pod);
  if (steady_median >= 0)
    std::printf("restart: resident %.1f MiB (%.0f B per pod) %.0f s after ready\n",
                double(steady_median) / 1048576.0, steady_per_pod, double(o.steady_after_ns) / 1e9);
  std::fflush(stdout);
  return rep;
}

} // namespace phalanx::loadtest
