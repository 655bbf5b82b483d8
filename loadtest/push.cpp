#include "loadtest/push.hpp"

#include "loadtest/phalanxd_process.hpp"
#include "loadtest/progress.hpp"
#include "loadtest/report.hpp"

#include "api/client.hpp"
#include "api/codec.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr std::string_view pods_path = "/api/v1/namespaces/";
constexpr std::string_view volcano = "/apis/scheduling.volcano.sh/v1beta1";
constexpr std::string_view batch = "/apis/batch.volcano.sh/v1alpha1";

struct request_item {
  std::string target;
  std::string body;
  int64_t gang = -1; // -1: not a gang's object.
  int32_t of = 1;    // Objects of the gang.
};

std::string encode(const api::object& o) {
  return api::to_json_text(api::encode_object(o));
}

// Sends every item as a POST from `threads` client threads (one connection each) and reports
// each answer. `stop` ends the work early.
template <class OnResult>
void post_all(const api::client_options& client, int64_t threads,
              const std::vector<request_item>& items, OnResult on_result,
              const std::atomic<bool>* stop = nullptr) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  auto n = static_cast<std::size_t>(std::max<int64_t>(1, threads));
  n = std::min(n, std::max<std::size_t>(1, items.size()));
  for (std::size_t t = 0; t < n; ++t)
    workers.emplace_back([&] {
      api::http_client c(client);
      api::client_request req;
      req.method = "POST";
      req.content_type = "application/json";
      while (true) {
        if (stop != nullptr && stop->load())
          return;
        auto i = next.fetch_add(1);
        if (i >= items.size())
          return;
        req.target = items[i].target;
        req.body = items[i].body;
        on_result(items[i], c.send(req));
      }
    });
  for (auto& w : workers)
    w.join();
}

std::string label_selector_query() {
  // "loadtest.phalanx.io/gang" (exists), percent-encoded.
  std::string out;
  for (char c : gang_index_label)
    out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

// The PodGroup watch: records Running and Completed gangs; reopens when the stream ends.
void watch_pod_groups(const api::client_options& client, run_recorder& recorder,
                      const std::atomic<bool>& stop) {
  api::client_request req;
  req.target = std::string(volcano) + "/podgroups?watch=1&labelSelector=" + label_selector_query();
  int failures = 0;
  while (!stop) {
    auto stream = api::watch_stream::open(client, req);
    if (!stream || (*stream)->status() != 200) {
      if (++failures == 20) {
        recorder.failed(
            "the PodGroup watch cannot be opened: " +
            (stream ? "HTTP " + std::to_string((*stream)->status()) : stream.error().message()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    while (!stop) {
      auto line = (*stream)->next_line(std::chrono::milliseconds(100));
      if (!line) {
        if ((*stream)->ended())
          break;
        continue;
      }
      boost::system::error_code ec;
      auto v = json::parse(*line, ec);
      if (ec || !v.is_object())
        continue;
      const auto* obj = v.as_object().if_contains("object");
      if (obj == nullptr || !obj->is_object())
        continue;
      const auto* meta = obj->as_object().if_contains("metadata");
      const auto* st = obj->as_object().if_contains("status");
      if (meta == nullptr || st == nullptr || !meta->is_object() || !st->is_object())
        continue;
      const auto* labels = meta->as_object().if_contains("labels");
      const auto* phase = st->as_object().if_contains("phase");
      if (labels == nullptr || phase == nullptr || !labels->is_object() || !phase->is_string())
        continue;
      const auto* idx = labels->as_object().if_contains(gang_index_label);
      if (idx == nullptr || !idx->is_string())
        continue;
      auto index = parse_int(std::string(idx->as_string()));
      if (!index)
        continue;
      if (phase->as_string() == "Completed")
        recorder.observed_completed(*index);
      else if (phase->as_string() == "Running")
        recorder.observed_running(*index);
    }
  }
}

result<std::vector<api::object>> list_objects(api::http_client& c, api::resource_kind kind,
                                              const std::string& target) {
  api::client_request req;
  req.target = target;
  auto res = c.send(req);
  if (!res)
    return status{res.error().code(), "GET " + target + ": " + res.error().message()};
  if (res->status != 200)
    return status{errc::unavailable, "GET " + target + ": HTTP " + std::to_string(res->status) +
                                         ": " + res->body.substr(0, 300)};
  api::parse_limits limits;
  limits.max_bytes = res->body.size() + 1;
  limits.max_depth = 64;
  auto parsed = api::parse_json(res->body, limits);
  if (!parsed)
    return status{errc::invalid_argument, "GET " + target + ": " + parsed.error().message};
  auto decoded = api::decode_list(*parsed, kind);
  if (!decoded)
    return status{errc::invalid_argument, "GET " + target + ": " + decoded.error().message};
  return std::move(decoded->items);
}

} // namespace

actors::system_facts facts_from_api(const std::vector<api::object>& pods,
                                    const std::vector<api::object>& groups,
                                    const std::vector<api::object>& nodes,
                                    const std::vector<api::object>& queues) {
  actors::system_facts f;
  std::map<std::string, std::vector<std::string>> bound;
  for (const auto& o : pods) {
    const auto* p = std::get_if<api::pod_object>(&o);
    if (p == nullptr)
      continue;
    const auto& pod = p->pod;
    actors::system_facts::pod fp;
    fp.key = pod.meta.namespace_name + "/" + pod.meta.name;
    fp.group_key = pod.group.empty() ? "" : pod.meta.namespace_name + "/" + pod.group;
    fp.node = pod.node_name;
    fp.phase = pod.phase;
    fp.requests = pod.requests;
    fp.role = pod.role;
    if (!pod.node_name.empty() && !scheduler::is_terminal(pod.phase))
      bound[pod.node_name.str()].push_back(fp.key);
    f.pods.push_back(std::move(fp));
  }
  for (const auto& o : groups) {
    const auto* g = std::get_if<api::pod_group_object>(&o);
    if (g == nullptr)
      continue;
    actors::system_facts::group fg;
    fg.key = g->group.meta.namespace_name + "/" + g->group.meta.name;
    fg.queue = g->group.queue;
    fg.min_member = g->group.min_member;
    fg.min_task_member = g->group.min_task_member;
    f.groups.push_back(std::move(fg));
  }
  for (const auto& o : nodes) {
    const auto* n = std::get_if<api::node_object>(&o);
    if (n == nullptr)
      continue;
    actors::system_facts::node fn;
    fn.name = n->node.meta.name;
    fn.allocatable = n->node.allocatable;
    fn.committed = n->allocated;
    fn.bound_pods = bound[fn.name];
    f.nodes.push_back(std::move(fn));
  }
  for (const auto& o : queues) {
    const auto* q = std::get_if<api::queue_object>(&o);
    if (q == nullptr)
      continue;
    f.queues.push_back({q->queue.meta.name.str(), q->status.allocated, {}});  // Gangs: not shown by the API.
  }
  return f;
}

result<json::object> run_push(const push_options& options) {
  run_options o = options.run;
  if (o.concurrency == 0)
    o.concurrency = 32;
  auto machine0 = machine_info();
  const bool tty = stdout_is_tty();
  const workload w = generate_announced("push", o.workload);

  auto dir = make_temp_dir(o.work_dir, "phalanx-loadtest-push-");
  if (!dir)
    return dir.error();
  dir_cleanup cleanup(*dir, o.keep);

  std::unique_ptr<phalanxd_process> daemon;
  api::client_options client;
  double daemon_start_seconds = 0;
  run_extras x;
  if (options.server.empty()) {
    std::string config_path = *dir + "/config.yaml";
    {
      std::ofstream cfg(config_path);
      cfg << "threads: " << o.threads << "\n";
      auto classes = priority_classes(o.workload);
      if (!classes.empty()) {
        cfg << "scheduling:\n  priorityClasses:\n";
        for (const auto& [name, value] : classes)
          cfg << "    " << name << ": " << value << "\n";
      }
    }
    phalanxd_options po;
    if (!options.phalanxd_binary.empty())
      po.binary = options.phalanxd_binary;
    po.data_dir = *dir + "/data";
    po.config_file = config_path;
    po.log_file = *dir + "/phalanxd.log";
    // Ctrl-C at a terminal reaches the whole foreground process group: in its own group the
    // daemon is stopped by this process, in order, after the partial report's last sample. If
    // this process dies without stopping it (SIGKILL, a crash), the kernel kills it.
    po.own_process_group = true;
    po.die_with_parent = true;
    po.extra_args = {"--http-threads", std::to_string(options.http_threads),
                     "--seed",         std::to_string(o.workload.seed + 1),
                     "--log-level",    "warn"};
    auto started = phalanxd_process::start(po);
    if (!started)
      return status{started.error().code(), "start phalanxd: " + started.error().message()};
    daemon = std::move(*started);
    client = daemon->client_options();
    daemon_start_seconds = daemon->seconds_to_ready();
    std::printf("push: phalanxd (pid %d) ready at %s in %.2f s; log %s\n",
                static_cast<int>(daemon->pid()), daemon->url().c_str(), daemon_start_seconds,
                po.log_file.c_str());
    x.mode_parameters["phalanxd"] = po.binary;
    x.mode_parameters["http_threads"] = options.http_threads;
  } else {
    auto address = api::parse_server_address(options.server);
    if (!address)
      return status{errc::invalid_argument, "--server: " + address.error().message()};
    client.server = *address;
    client.token = options.token;
    x.mode_parameters["server"] = options.server;
  }
  client.timeout = std::chrono::seconds(120);
  client.max_body_bytes = std::size_t{1} << 30;

  // Set-up: nodes and queues, through the API.
  auto setup0 = clock_type::now();
  {
    std::vector<request_item> items;
    for (const auto& n : w.nodes)
      items.push_back({"/api/v1/nodes", encode(api::node_object{n, {}, 0})});
    for (const auto& q : to_queues(o.workload))
      items.push_back({std::string(volcano) + "/queues", encode(q)});
    std::mutex m;
    std::string first_error;
    post_all(client, o.concurrency, items,
             [&](const request_item& item, const result<api::client_response>& r) {
               if (r.ok() && (r->status == 201 || r->status == 409))
                 return;
               std::lock_guard lock(m);
               if (first_error.empty())
                 first_error =
                     "POST " + item.target + ": " +
                     (r.ok() ? "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 300)
                             : r.error().message());
             });
    if (!first_error.empty())
      return status{errc::unavailable, "create nodes and queues: " + first_error};
  }
  x.setup_seconds = std::chrono::duration<double>(clock_type::now() - setup0).count();
  std::printf("push: %zu nodes and %zu queues created in %.2f s\n", w.nodes.size(),
              o.workload.queues.size(), x.setup_seconds);

  // Every body is encoded before the clock starts.
  std::vector<request_item> items;
  for (std::size_t i = 0; i < w.gangs.size(); ++i) {
    auto ns = namespace_of(o, static_cast<int64_t>(i));
    auto gang = static_cast<int64_t>(i);
    if (o.submit == submit_method::jobs) {
      auto j = to_job(w.gangs[i], o.workload);
      j.job.meta.namespace_name = ns;
      items.push_back({std::string(batch) + "/namespaces/" + ns + "/jobs", encode(j), gang, 1});
    } else {
      auto pods = to_pods(w.gangs[i], o.workload);
      auto of = static_cast<int32_t>(pods.size() + 1);
      auto g = to_pod_group(w.gangs[i], o.workload);
      g.group.meta.namespace_name = ns;
      items.push_back(
          {std::string(volcano) + "/namespaces/" + ns + "/podgroups", encode(g), gang, of});
      for (auto& p : pods) {
        p.pod.meta.namespace_name = ns;
        items.push_back({std::string(pods_path) + ns + "/pods", encode(p), gang, of});
      }
    }
  }
  std::size_t body_bytes = 0;
  for (const auto& it : items)
    body_bytes += it.body.size();
  std::printf("push: %zu requests (%.1f MiB of JSON) from %lld connections\n", items.size(),
              double(body_bytes) / 1048576.0, static_cast<long long>(o.concurrency));
  std::fflush(stdout);

  run_recorder recorder(w);
  std::atomic<bool> stop{false};
  std::thread watcher([&] { watch_pod_groups(client, recorder, stop); });
  // Let the watch connect before the clock starts.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  std::atomic<bool> submitter_done{false};
  recorder.start();
  std::thread submitter([&] {
    post_all(
        client, o.concurrency, items,
        [&](const request_item& item, const result<api::client_response>& r) {
          if (r.ok() && r->status == 201)
            recorder.acknowledged(item.gang, item.of);
          else
            recorder.failed(
                "POST " + item.target + ": " +
                (r.ok() ? "HTTP " + std::to_string(r->status) + ": " + r->body.substr(0, 300)
                        : r.error().message()));
        },
        &stop);
    submitter_done = true;
  });

  api::http_client metrics_client(client);
  bool last_settled = false;
  auto take_sample = [&]() -> std::optional<std::vector<prom_sample>> {
    api::client_request req;
    req.target = "/metrics";
    auto res = metrics_client.send(req);
    if (!res || res->status != 200)
      return std::nullopt;
    auto parsed = parse_prometheus_text(res->body);
    if (!parsed)
      return std::nullopt;
    auto s = sample_from_metrics(*parsed, o.workload.queues);
    s.t = recorder.seconds_since_start();
    s.pods_submitted = recorder.pods_submitted();
    s.pods_running = recorder.pods_running();
    last_settled = settled(s, w.total_pods);
    recorder.add_sample(std::move(s));
    return std::move(*parsed);
  };

  const bool wait_completion = o.workload.pod_duration_ns.has_value();
  const auto n_gangs = static_cast<int64_t>(w.gangs.size());
  // With a pod duration the run waits for completions, and the line counts those.
  progress_meter meter(stdout, tty, wait_completion ? "completed" : "scheduled", "pods",
                       w.total_pods);
  wait_plan plan{n_gangs, wait_completion, o.timeout_ns, o.sample_interval_ns,
                 std::chrono::milliseconds(5), o.stall_after_ns};
  const run_outcome outcome = wait_for_gangs(
      plan, recorder, meter, submitter_done, [&] { take_sample(); },
      [&] {
        if (!daemon || daemon->running())
          return false;
        recorder.failed("phalanxd exited during the run; its log ends with:\n" +
                        daemon->log_tail(2000));
        return true;
      });
  x.outcome = outcome;
  x.outcome_message = describe_outcome(outcome, plan, recorder, recorder.seconds_since_start());
  // The queues' accounting trails the watch by a few messages: let it settle for the last sample.
  auto final_metrics = take_sample();
  for (auto settle_until = clock_type::now() + std::chrono::seconds(2);
       !wait_completion && !last_settled && outcome == run_outcome::completed &&
       clock_type::now() < settle_until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (auto m = take_sample())
      final_metrics = std::move(m);
  }
  meter.finish(wait_completion ? recorder.pods_completed() : recorder.pods_running());
  stop = true;
  submitter.join();
  watcher.join();
  if (outcome != run_outcome::completed)
    std::printf("push: %s\n", x.outcome_message.c_str());
  if (final_metrics)
    read_runtime_histograms(*final_metrics, x);

  // Invariants from what the API lists; an interrupted run stops without them.
  if ((!daemon || daemon->running()) && outcome != run_outcome::interrupted) {
    std::printf("push: checking invariants I1-I4 from the API's lists\n");
    std::fflush(stdout);
    api::http_client c(client);
    std::vector<api::object> pods, groups, nodes, queues;
    status list_error;
    auto add = [&](std::vector<api::object>& into, api::resource_kind kind,
                   const std::string& target) {
      if (!list_error.ok())
        return;
      auto r = list_objects(c, kind, target);
      if (!r) {
        list_error = r.error();
        return;
      }
      for (auto& obj : *r)
        into.push_back(std::move(obj));
    };
    for (int64_t n = 0; n < std::max<int64_t>(1, o.namespaces); ++n) {
      auto ns = namespace_of(o, n);
      add(pods, api::resource_kind::pod, std::string(pods_path) + ns + "/pods");
      add(groups, api::resource_kind::pod_group,
          std::string(volcano) + "/namespaces/" + ns + "/podgroups");
    }
    add(nodes, api::resource_kind::node, "/api/v1/nodes");
    add(queues, api::resource_kind::queue, std::string(volcano) + "/queues");
    if (list_error.ok()) {
      x.invariants = actors::check_invariants(facts_from_api(pods, groups, nodes, queues), true);
      x.invariants_checked = true;
      x.invariants_source =
          "api: pods, PodGroups, nodes (status.allocated) and queues (status.allocated) as "
          "listed";
    } else {
      recorder.failed("invariant check: " + list_error.message());
    }
  }

  json::object figures;
  figures["timed_out"] = outcome == run_outcome::timed_out;
  figures["daemon_start_seconds"] = daemon_start_seconds;
  figures["request_count"] = static_cast<int64_t>(items.size());
  figures["request_body_bytes"] = static_cast<int64_t>(body_bytes);
  if (daemon) {
    auto code = daemon->stop();
    figures["daemon_exit_code"] = code.ok() ? json::value(*code) : json::value(nullptr);
    if (!code.ok() || *code != 0)
      recorder.failed("phalanxd did not stop cleanly: " +
                      (code.ok() ? "exit code " + std::to_string(*code) : code.error().message()) +
                      "; its log ends with:\n" + daemon->log_tail(2000));
    if (o.keep)
      figures["daemon_log"] = daemon->log_file();
  }
  x.mode_figures = std::move(figures);

  auto rep = build_run_report("push", o, w, recorder, x, machine0);
  const auto* v = rep.if_contains("pods_per_second");
  double pps = v != nullptr && v->is_number() ? v->to_number<double>()
                                              : std::numeric_limits<double>::quiet_NaN();
  bool inv_ok = rep["invariants_ok"].as_bool();
  json::array targets;
  targets.push_back(make_target("end to end through the HTTP API",
                                "pods_per_second >= 20000 (submitted and scheduled)", 20000, pps,
                                std::isfinite(pps) && pps >= 20000));
  targets.push_back(make_target("invariants I1-I4", "invariants_ok", 1, inv_ok ? 1 : 0, inv_ok));
  rep["targets"] = std::move(targets);
  return rep;
}

} // namespace phalanx::loadtest
