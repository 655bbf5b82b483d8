#include "loadtest/kube_bench.hpp"

#include "loadtest/interrupt.hpp"
#include "loadtest/parallel.hpp"
#include "loadtest/phalanxd_process.hpp"
#include "loadtest/report.hpp"

#include "k8s/config.hpp"
#include "k8s/operations.hpp"
#include "k8s/reflector.hpp"
#include "k8s/testing/control_plane.hpp"
#include "k8s/testing/manifests.hpp"

#include "scheduler/random.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

namespace phalanx::loadtest {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

constexpr const char* bench_label = "phalanx.io/bench";
constexpr int64_t node_cpu_milli = 32000;
constexpr int node_pod_limit = 110;
// The binder's pods name a scheduler nobody else serves.
constexpr const char* binder_scheduler_name = "phalanx-bench-binder";

const std::vector<std::string> known_schedulers = {"binder", "kube-scheduler", "phalanx"};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

double seconds_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// -- the workload

struct bench_pod {
  std::string name;
  std::string group;  // gang: its PodGroup; basic: empty.
  int64_t cpu_milli = 0;
};

struct bench_group {
  std::string name;
  int64_t size = 0;
};

struct workload {
  std::vector<bench_group> groups;
  std::vector<bench_pod> pods;
  std::string memory;  // Every pod's memory request.
};

workload make_workload(const kube_bench_options& o) {
  workload w;
  if (o.workload == "basic") {
    w.memory = "500Mi";
    for (int64_t i = 0; i < o.pods; ++i)
      w.pods.push_back({"pod-" + std::to_string(i), "", 100});
    return w;
  }
  w.memory = "64Mi";
  scheduler::rng random(static_cast<uint64_t>(o.seed));
  std::uniform_int_distribution<int64_t> size(1, o.max_gang_size);
  int64_t total = 0;
  for (int64_t g = 0; g < o.podgroups; ++g) {
    w.groups.push_back({"g-" + std::to_string(g), size(random)});
    total += w.groups.back().size;
  }
  // Every pod asks the same cpu, so that the gangs' pods add up to `demand` of the cluster.
  const auto cpu = std::max<int64_t>(
      1, static_cast<int64_t>(o.demand * double(o.nodes) * double(node_cpu_milli) / double(total)));
  for (const auto& g : w.groups)
    for (int64_t k = 0; k < g.size; ++k)
      w.pods.push_back({g.name + "-" + std::to_string(k), g.name, cpu});
  return w;
}

std::string scheduler_name_for(const std::string& scheduler) {
  if (scheduler == "binder")
    return binder_scheduler_name;
  if (scheduler == "kube-scheduler")
    return "default-scheduler";
  return "volcano";
}

json::value pod_json(const std::string& ns, const bench_pod& p, const std::string& memory,
                     const std::string& scheduler_name) {
  json::object meta{{"name", p.name}, {"namespace", ns}};
  if (!p.group.empty())
    meta["annotations"] = json::object{{"scheduling.k8s.io/group-name", p.group}};
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", std::move(meta)},
      {"spec",
       json::object{{"schedulerName", scheduler_name},
                    {"containers",
                     json::array{json::object{
                         {"name", "main"},
                         {"image", "registry.k8s.io/pause:3.10"},
                         {"resources",
                          json::object{{"requests",
                                        json::object{{"cpu", std::to_string(p.cpu_milli) + "m"},
                                                     {"memory", memory}}}}}}}}}}};
}

json::value group_json(const std::string& ns, const bench_group& g) {
  return json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                      {"kind", "PodGroup"},
                      {"metadata", json::object{{"name", g.name}, {"namespace", ns}}},
                      {"spec", json::object{{"minMember", g.size}, {"queue", "default"}}}};
}

status create_node(k8s::client& c, const std::string& name) {
  json::value node = {{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", {{bench_label, "true"}}}}}};
  if (auto r = k8s::post_json(c, "/api/v1/nodes", node); !r && r.error().code() != errc::already_exists)
    return r.error();
  json::object resources{{"cpu", std::to_string(node_cpu_milli / 1000)},
                         {"memory", "128Gi"},
                         {"pods", std::to_string(node_pod_limit)}};
  json::value patch = {{"status",
                        {{"capacity", resources},
                         {"allocatable", resources},
                         {"conditions", json::array{{{"type", "Ready"},
                                                     {"status", "True"},
                                                     {"reason", "KubeletReady"},
                                                     {"message", "a phalanx-loadtest k8s node"}}}}}}};
  if (auto r = k8s::patch_json(c, "/api/v1/nodes/" + name + "/status", patch,
                               k8s::patch_type::merge);
      !r)
    return r.error();
  return {};
}

// Deletes a collection at once (grace period 0: no kubelet confirms a pod's end here).
status delete_collection(k8s::client& c, const std::string& path) {
  auto r = c.request({"DELETE", path + "?gracePeriodSeconds=0", "", "", false});
  if (!r)
    return r.error();
  if (r->status >= 300 && r->status != 404)
    return k8s::status_of(*r, "DELETE " + path);
  return {};
}

// -- watching binds

// Notes, from a watch of one namespace's pods, when each pod of the workload first shows bound
// and where; a pod seen bound to one node and later to another breaks I1.
class bind_watch final : public k8s::reflector_sink {
 public:
  explicit bind_watch(const workload& w) {
    for (std::size_t i = 0; i < w.pods.size(); ++i)
      index_.emplace(w.pods[i].name, i);
    bound_at_.assign(w.pods.size(), clock_type::time_point{});
    node_.assign(w.pods.size(), std::string{});
  }

  void on_list(std::vector<json::value> items, const std::string&) override {
    for (auto& item : items)
      note(item);
  }
  void on_event(k8s::event_type type, json::value object, const std::string&) override {
    if (type != k8s::event_type::deleted)
      note(object);
  }
  void on_bookmark(const std::string&) override {}

  /// The warm-up pod (not of the workload) is bound.
  bool warm() const { return warm_.load(); }
  int64_t bound() const { return bound_count_.load(); }
  clock_type::time_point last_bind() const {
    std::lock_guard lock(mutex_);
    return last_bind_;
  }
  std::vector<clock_type::time_point> bound_times() const {
    std::lock_guard lock(mutex_);
    return bound_at_;
  }
  std::vector<std::string> nodes() const {
    std::lock_guard lock(mutex_);
    return node_;
  }
  std::vector<std::string> violations() const {
    std::lock_guard lock(mutex_);
    return violations_;
  }

 private:
  void note(const json::value& pod) {
    auto node = k8s::string_at(pod, {"spec", "nodeName"});
    if (node.empty())
      return;
    auto name = k8s::string_at(pod, {"metadata", "name"});
    if (name == "warmup") {
      warm_ = true;
      return;
    }
    auto i = index_.find(name);
    if (i == index_.end())
      return;
    const auto now = clock_type::now();
    std::lock_guard lock(mutex_);
    auto& seen = node_[i->second];
    if (seen.empty()) {
      seen = node;
      bound_at_[i->second] = now;
      last_bind_ = now;
      ++bound_count_;
    } else if (seen != node && violations_.size() < 20) {
      violations_.push_back("I1: pod " + name + " was bound to " + seen + " and then to " + node);
    }
  }

  std::unordered_map<std::string, std::size_t> index_;
  mutable std::mutex mutex_;
  std::vector<clock_type::time_point> bound_at_;
  std::vector<std::string> node_;
  std::vector<std::string> violations_;
  clock_type::time_point last_bind_{};
  std::atomic<int64_t> bound_count_{0};
  std::atomic<bool> warm_{false};
};

// -- the do-nothing binder

// Watches the namespace's unbound pods of its scheduler name and binds each to the next node,
// round-robin, on `threads` threads: no filter, no score, no cache. What the apiserver allows.
class round_robin_binder final : public k8s::reflector_sink {
 public:
  round_robin_binder(k8s::client& c, std::string ns, std::vector<std::string> nodes,
                     int64_t threads)
      : client_(c), ns_(std::move(ns)), nodes_(std::move(nodes)) {
    for (int64_t t = 0; t < threads; ++t)
      workers_.emplace_back([this] { work(); });
  }
  ~round_robin_binder() override { stop(); }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& w : workers_)
      if (w.joinable())
        w.join();
  }

  void on_list(std::vector<json::value> items, const std::string&) override {
    for (auto& item : items)
      take(item);
  }
  void on_event(k8s::event_type type, json::value object, const std::string&) override {
    if (type != k8s::event_type::deleted)
      take(object);
  }
  void on_bookmark(const std::string&) override {}

  uint64_t failures() const { return failures_.load(); }

 private:
  void take(const json::value& pod) {
    if (!k8s::string_at(pod, {"spec", "nodeName"}).empty())
      return;
    auto name = k8s::string_at(pod, {"metadata", "name"});
    auto uid = k8s::string_at(pod, {"metadata", "uid"});
    {
      std::lock_guard lock(mutex_);
      if (!taken_.insert(uid).second)
        return;  // Seen before: a status change of a pod already queued.
      queue_.emplace_back(std::move(name), std::move(uid));
    }
    ready_.notify_one();
  }

  void work() {
    for (;;) {
      std::pair<std::string, std::string> pod;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (stopping_)
          return;
        pod = std::move(queue_.front());
        queue_.pop_front();
      }
      const auto& node = nodes_[next_node_++ % nodes_.size()];
      for (int attempt = 0; attempt < 5; ++attempt) {
        auto out = k8s::bind_pod(client_, ns_, pod.first, pod.second, node);
        if (out.result != k8s::bind_result::retry)
          break;
        ++failures_;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }

  k8s::client& client_;
  const std::string ns_;
  const std::vector<std::string> nodes_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<std::string, std::string>> queue_;
  std::set<std::string> taken_;
  bool stopping_ = false;
  std::atomic<uint64_t> next_node_{0};
  std::atomic<uint64_t> failures_{0};
  std::vector<std::thread> workers_;
};

// -- one scheduler's run

struct scheduler_run {
  std::string name;
  int64_t pods = 0;
  int64_t bound = 0;
  bool all_bound = false;
  double create_seconds = 0;
  double seconds = 0;  // First creation to last bind.
  double pods_per_second = 0;
  double p50_pod_ms = 0;
  double p99_pod_ms = 0;
  int64_t gangs_whole = 0;
  int64_t gangs_partial = 0;
  int64_t partial_gang_pods = 0;  // Pods bound in gangs below their minMember.
  bool invariants_ok = false;
  std::vector<std::string> violations;
  std::vector<std::string> unbound_sample;  // A few pods never bound, to look at.
  json::array series;  // [seconds since the first creation, pods bound]
  std::string error;
};

double quantile_ms(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(std::ceil(q * double(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// The state of the namespace's pods and nodes on the apiserver, checked: I2 (no node over its
// cpu or pod count) and the gangs' all-or-nothing.
void check_from_apiserver(k8s::client& c, const std::string& ns, const workload& w,
                          scheduler_run& run) {
  std::map<std::string, std::pair<int64_t, int64_t>> per_node;  // cpu milli, pods
  std::map<std::string, int64_t> bound_per_group;
  std::string next;
  do {
    auto page = k8s::get_json(c, "/api/v1/namespaces/" + ns + "/pods?limit=2000" +
                                     (next.empty() ? "" : "&continue=" + k8s::query_escape(next)));
    if (!page) {
      run.violations.push_back("could not list the pods: " + page.error().to_string());
      return;
    }
    for (const auto& item : page->as_object().at("items").as_array()) {
      auto node = k8s::string_at(item, {"spec", "nodeName"});
      auto name = k8s::string_at(item, {"metadata", "name"});
      if (node.empty() || name == "warmup")
        continue;
      auto& n = per_node[node];
      ++n.second;
      const auto& containers = item.at("spec").at("containers").as_array();
      for (const auto& ctr : containers) {
        auto cpu = k8s::string_at(ctr, {"resources", "requests", "cpu"});
        if (!cpu.empty() && cpu.back() == 'm')
          n.first += std::stoll(cpu.substr(0, cpu.size() - 1));
        else if (!cpu.empty())
          n.first += std::stoll(cpu) * 1000;
      }
      auto group = k8s::string_at(item, {"metadata", "annotations", "scheduling.k8s.io/group-name"});
      if (!group.empty())
        ++bound_per_group[group];
    }
    next = k8s::string_at(*page, {"metadata", "continue"});
  } while (!next.empty());
  for (const auto& [node, use] : per_node) {
    if (use.first > node_cpu_milli || use.second > node_pod_limit)
      run.violations.push_back("I2: node " + node + " holds " + std::to_string(use.first) +
                               "m cpu and " + std::to_string(use.second) + " pods (allocatable " +
                               std::to_string(node_cpu_milli) + "m, " +
                               std::to_string(node_pod_limit) + ")");
  }
  for (const auto& g : w.groups) {
    auto i = bound_per_group.find(g.name);
    const int64_t bound = i == bound_per_group.end() ? 0 : i->second;
    if (bound >= g.size) {
      ++run.gangs_whole;
    } else if (bound > 0) {
      ++run.gangs_partial;
      run.partial_gang_pods += bound;
    }
  }
}

// A running scheduler, whichever it is; stopped by its destructor.
class running_scheduler {
 public:
  virtual ~running_scheduler() = default;
};

class binder_process final : public running_scheduler {
 public:
  static result<std::unique_ptr<binder_process>> start(const k8s::connection_config& config,
                                                       const std::string& ns,
                                                       std::vector<std::string> nodes,
                                                       int64_t threads) {
    auto c = k8s::client::create(config);
    if (!c)
      return c.error();
    std::unique_ptr<binder_process> b(new binder_process());
    b->client_ = std::move(*c);
    b->binder_ = std::make_unique<round_robin_binder>(*b->client_, ns, std::move(nodes), threads);
    k8s::reflector_options ro;
    ro.path = "/api/v1/namespaces/" + ns + "/pods";
    ro.kind = "Pod";
    ro.api_version = "v1";
    ro.field_selector = std::string("spec.nodeName=,spec.schedulerName=") + binder_scheduler_name;
    auto r = k8s::reflector::create(*b->client_, ro, *b->binder_);
    if (!r)
      return r.error();
    b->reflector_ = std::move(*r);
    b->reflector_->start();
    return b;
  }
  ~binder_process() override {
    if (reflector_)
      reflector_->stop();
    if (binder_)
      binder_->stop();
  }

 private:
  binder_process() = default;
  std::unique_ptr<k8s::client> client_;
  std::unique_ptr<round_robin_binder> binder_;
  std::unique_ptr<k8s::reflector> reflector_;
};

class child_scheduler final : public running_scheduler {
 public:
  explicit child_scheduler(pid_t pid) : pid_(pid) {}
  ~child_scheduler() override { stop_process(pid_, std::chrono::seconds(10)); }

 private:
  pid_t pid_;
};

class phalanxd_scheduler final : public running_scheduler {
 public:
  explicit phalanxd_scheduler(std::unique_ptr<phalanxd_process> p) : process_(std::move(p)) {}
  ~phalanxd_scheduler() override { (void)process_->stop(std::chrono::seconds(30)); }

 private:
  std::unique_ptr<phalanxd_process> process_;
};

struct bench_context {
  const kube_bench_options& options;
  const workload& work;
  k8s::client& admin;
  k8s::connection_config scheduler_connection;  // The admin's identity, with the bench's QPS.
  std::string kubeconfig;
  std::string kube_scheduler_binary;
  std::vector<std::string> node_names;
  fs::path dir;   // Scratch: data dirs, configs.
  fs::path logs;
};

result<std::unique_ptr<running_scheduler>> start_scheduler(const bench_context& b,
                                                           const std::string& scheduler,
                                                           const std::string& ns) {
  if (scheduler == "binder") {
    auto r = binder_process::start(b.scheduler_connection, ns, b.node_names,
                                   b.options.binder_threads);
    if (!r)
      return r.error();
    return std::unique_ptr<running_scheduler>(std::move(*r));
  }
  if (scheduler == "kube-scheduler") {
    auto config = (b.dir / "kube-scheduler.yaml").string();
    std::ofstream out(config);
    out << "apiVersion: kubescheduler.config.k8s.io/v1\n"
        << "kind: KubeSchedulerConfiguration\n"
        << "clientConnection:\n"
        << "  kubeconfig: " << b.kubeconfig << "\n"
        << "  qps: " << b.options.qps << "\n"
        << "  burst: " << b.options.burst << "\n"
        << "leaderElection:\n"
        << "  leaderElect: false\n";
    out.close();
    auto pid = spawn_with_log({b.kube_scheduler_binary, "--config", config, "--secure-port", "0"},
                              (b.logs / "kube-scheduler.log").string());
    if (!pid)
      return pid.error();
    return std::unique_ptr<running_scheduler>(std::make_unique<child_scheduler>(*pid));
  }
  phalanxd_options po;
  if (!b.options.phalanxd_binary.empty())
    po.binary = b.options.phalanxd_binary;
  po.data_dir = (b.dir / "phalanxd-data").string();
  po.log_file = (b.logs / "phalanxd.log").string();
  po.ready_timeout = std::chrono::minutes(5);
  po.extra_args = {"--mode",
                   "kubernetes",
                   "--kubeconfig",
                   b.kubeconfig,
                   "--leader-elect=false",
                   "--kube-api-qps",
                   std::to_string(static_cast<int64_t>(b.options.qps)),
                   "--kube-api-burst",
                   std::to_string(b.options.burst)};
  std::istringstream more(b.options.phalanxd_flags);
  for (std::string flag; more >> flag;)
    po.extra_args.push_back(flag);
  auto p = phalanxd_process::start(po);
  if (!p)
    return p.error();
  return std::unique_ptr<running_scheduler>(std::make_unique<phalanxd_scheduler>(std::move(*p)));
}

status wait_for(const std::function<bool()>& done, std::chrono::seconds limit,
                const std::string& what) {
  auto deadline = clock_type::now() + limit;
  while (clock_type::now() < deadline) {
    if (done())
      return {};
    if (!sleep_unless_interrupted(std::chrono::milliseconds(20)))
      return interrupted_while("waiting for " + what);
  }
  return status{errc::unavailable, what + " did not happen within " +
                                       std::to_string(limit.count()) + " s"};
}

scheduler_run run_one(const bench_context& b, const std::string& scheduler) {
  scheduler_run run;
  run.name = scheduler;
  run.pods = static_cast<int64_t>(b.work.pods.size());
  const std::string ns = "bench-" + scheduler;
  const std::string scheduler_name = scheduler_name_for(scheduler);
  auto fail = [&](const status& s) {
    run.error = s.to_string();
    std::printf("k8s: %s: %s\n", scheduler.c_str(), run.error.c_str());
    std::fflush(stdout);
    return run;
  };
  if (auto s = k8s::testing::apply(b.admin, json::object{{"apiVersion", "v1"},
                                                         {"kind", "Namespace"},
                                                         {"metadata", json::object{{"name", ns}}}});
      !s.ok())
    return fail(s);
  // The PodGroups first, untimed: a gang's group exists before its pods, as a Volcano Job's does.
  if (auto s = in_parallel(static_cast<int64_t>(b.work.groups.size()), b.options.creators,
                           [&](int64_t g) {
                             return k8s::testing::apply(b.admin, group_json(ns, b.work.groups[g]));
                           });
      !s.ok())
    return fail(s);

  bind_watch watch(b.work);
  k8s::reflector_options ro;
  ro.path = "/api/v1/namespaces/" + ns + "/pods";
  ro.kind = "Pod";
  ro.api_version = "v1";
  auto reflector = k8s::reflector::create(b.admin, ro, watch);
  if (!reflector)
    return fail(reflector.error());
  (*reflector)->start();

  std::vector<clock_type::time_point> created(b.work.pods.size());
  auto create_pods = [&]() -> status {
    std::printf("k8s: %s: creating %lld pods\n", scheduler.c_str(),
                static_cast<long long>(run.pods));
    std::fflush(stdout);
    const auto start = clock_type::now();
    auto s = in_parallel(run.pods, b.options.creators, [&](int64_t i) {
      const auto& p = b.work.pods[static_cast<std::size_t>(i)];
      auto r = k8s::post_json(b.admin, "/api/v1/namespaces/" + ns + "/pods",
                              pod_json(ns, p, b.work.memory, scheduler_name));
      if (!r)
        return r.error();
      created[static_cast<std::size_t>(i)] = clock_type::now();
      return status{};
    });
    run.create_seconds = seconds_between(start, clock_type::now());
    return s;
  };

  // Backlog: every pod waits before the scheduler starts, and the clock starts with it (its
  // start, first list and catching up are part of what is measured). Streaming: the scheduler
  // runs, warmed up, and the clock starts with the first creation.
  clock_type::time_point t0;
  result<std::unique_ptr<running_scheduler>> started = status{errc::internal, "not started"};
  if (b.options.backlog) {
    if (auto s = create_pods(); !s.ok())
      return fail(s);
    t0 = clock_type::now();
    started = start_scheduler(b, scheduler, ns);
    if (!started)
      return fail(started.error());
  } else {
    started = start_scheduler(b, scheduler, ns);
    if (!started)
      return fail(started.error());
    // Warm up: one pod of its own bound, so the timed part finds it running, its caches synced.
    bench_pod warm{"warmup", "", 100};
    if (!b.work.groups.empty()) {
      warm.group = "warmup";
      if (auto s = k8s::testing::apply(b.admin, group_json(ns, {"warmup", 1})); !s.ok())
        return fail(s);
    }
    if (auto s = k8s::testing::apply(b.admin, pod_json(ns, warm, b.work.memory, scheduler_name));
        !s.ok())
      return fail(s);
    if (auto s = wait_for([&] { return watch.warm(); }, std::chrono::seconds(300),
                          scheduler + "'s warm-up pod bound");
        !s.ok())
      return fail(s);
    t0 = clock_type::now();
    if (auto s = create_pods(); !s.ok())
      return fail(s);
  }

  // Until every pod is bound, or no bind for stall_seconds.
  int64_t last_count = -1;
  auto last_progress = clock_type::now();
  while (watch.bound() < run.pods) {
    const auto n = watch.bound();
    if (n != last_count) {
      last_count = n;
      last_progress = clock_type::now();
    } else if (clock_type::now() - last_progress > std::chrono::seconds(b.options.stall_seconds)) {
      break;
    }
    if (!sleep_unless_interrupted(std::chrono::milliseconds(50))) {
      // Its pods are deleted below all the same: the cluster is left as it was found.
      run.error = interrupted_while("waiting for " + scheduler + "'s binds").message();
      break;
    }
  }
  started->reset();  // The scheduler stops before anything is read back.
  (*reflector)->stop();

  run.bound = watch.bound();
  run.all_bound = run.bound == run.pods;
  const auto bound_at = watch.bound_times();
  std::vector<double> latencies;
  std::vector<double> bind_seconds;
  for (std::size_t i = 0; i < bound_at.size(); ++i) {
    if (bound_at[i] == clock_type::time_point{}) {
      if (run.unbound_sample.size() < 10)
        run.unbound_sample.push_back(b.work.pods[i].name);
      continue;
    }
    // Backlog: from the scheduler's start (each pod was created before it).
    const auto from = b.options.backlog ? t0 : created[i];
    latencies.push_back(1000 * std::max(0.0, seconds_between(from, bound_at[i])));
    bind_seconds.push_back(seconds_between(t0, bound_at[i]));
  }
  if (run.bound > 0) {
    run.seconds = seconds_between(t0, watch.last_bind());
    run.pods_per_second = run.seconds > 0 ? double(run.bound) / run.seconds : 0;
  }
  run.p50_pod_ms = quantile_ms(latencies, 0.5);
  run.p99_pod_ms = quantile_ms(latencies, 0.99);
  std::sort(bind_seconds.begin(), bind_seconds.end());
  const std::size_t step = std::max<std::size_t>(1, bind_seconds.size() / 300);
  run.series.push_back(json::array{0.0, 0});
  for (std::size_t i = 0; i < bind_seconds.size(); i += step)
    run.series.push_back(json::array{bind_seconds[i], static_cast<int64_t>(i + 1)});
  if (!bind_seconds.empty())
    run.series.push_back(
        json::array{bind_seconds.back(), static_cast<int64_t>(bind_seconds.size())});

  // What the apiserver says of a few pods left unbound: the scheduler's PodScheduled condition.
  for (auto& name : run.unbound_sample) {
    auto pod = k8s::get_json(b.admin, "/api/v1/namespaces/" + ns + "/pods/" + name);
    if (!pod)
      continue;
    const auto* conditions = pod->at("status").as_object().if_contains("conditions");
    if (conditions == nullptr || !conditions->is_array())
      continue;
    for (const auto& c : conditions->as_array())
      if (k8s::string_at(c, {"type"}) == "PodScheduled")
        name += ": " + k8s::string_at(c, {"reason"}) + " " + k8s::string_at(c, {"message"});
  }
  run.violations = watch.violations();
  check_from_apiserver(b.admin, ns, b.work, run);
  // Gang-aware schedulers promise all-or-nothing; kube-scheduler and the binder do not, and their
  // partial gangs are reported, not counted against them.
  if (scheduler == "phalanx" && run.gangs_partial > 0)
    run.violations.push_back("I3: " + std::to_string(run.gangs_partial) +
                             " gangs are bound below their minMember");
  run.invariants_ok = run.violations.empty();

  std::printf("k8s: %s: %lld/%lld pods bound in %.2f s (%.0f pods/s; creation took %.2f s), "
              "p50 %.0f ms, p99 %.0f ms; gangs whole %lld, partial %lld; invariants %s\n",
              scheduler.c_str(), static_cast<long long>(run.bound),
              static_cast<long long>(run.pods), run.seconds, run.pods_per_second,
              run.create_seconds, run.p50_pod_ms, run.p99_pod_ms,
              static_cast<long long>(run.gangs_whole), static_cast<long long>(run.gangs_partial),
              run.invariants_ok ? "ok" : "VIOLATED");
  for (const auto& name : run.unbound_sample)
    std::printf("k8s: %s: not bound: %s\n", scheduler.c_str(), name.c_str());
  std::fflush(stdout);

  // Its pods and groups go before the next scheduler starts, so each sees the nodes empty. One
  // DELETE per pod on the creators' threads: the apiserver deletes a collection a pod at a time
  // (--delete-collection-workers 1), about 50 pods/s here, so a run of 30,000 pods outlasted any
  // reasonable wait and the next scheduler found the nodes full. A collection delete then takes
  // what is left (the warm-up pod, anything the scheduler made).
  if (auto d = in_parallel(run.pods, b.options.creators,
                           [&](int64_t i) {
                             auto r = k8s::delete_object(
                                 b.admin, "/api/v1/namespaces/" + ns + "/pods/" +
                                              b.work.pods[static_cast<std::size_t>(i)].name,
                                 "", 0);
                             return r.ok() || r.code() == errc::not_found ? status{} : r;
                           });
      !d.ok())
    run.error = d.to_string();
  if (auto d = delete_collection(b.admin, "/api/v1/namespaces/" + ns + "/pods"); !d.ok())
    run.error = d.to_string();
  // PodGroups too, those Phalanx made for lone pods included (no garbage collector runs here).
  if (auto d = delete_collection(
          b.admin, "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + ns + "/podgroups");
      !d.ok())
    run.error = d.to_string();
  // The next scheduler must find the nodes empty: a deletion that does not end fails the run.
  if (auto gone = wait_for(
          [&] {
            auto left = k8s::get_json(b.admin, "/api/v1/namespaces/" + ns + "/pods?limit=1");
            return left && left->as_object().at("items").as_array().empty();
          },
          std::chrono::seconds(1800), "the deletion of " + ns + "'s pods");
      !gone.ok() && run.error.empty())
    run.error = gone.to_string();
  return run;
}

json::object run_json(const scheduler_run& r) {
  json::object o;
  o["pods"] = r.pods;
  o["bound"] = r.bound;
  o["all_bound"] = r.all_bound;
  o["pods_per_second"] = r.pods_per_second;
  o["p50_pod_ms"] = r.p50_pod_ms;
  o["p99_pod_ms"] = r.p99_pod_ms;
  o["seconds"] = r.seconds;
  o["create_seconds"] = r.create_seconds;
  o["gangs_whole"] = r.gangs_whole;
  o["gangs_partial"] = r.gangs_partial;
  o["partial_gang_pods"] = r.partial_gang_pods;
  o["invariants_ok"] = r.invariants_ok;
  json::array v;
  for (const auto& s : r.violations)
    v.push_back(json::value(s));
  o["invariant_violations"] = std::move(v);
  json::array unbound;
  for (const auto& name : r.unbound_sample)
    unbound.push_back(json::value(name));
  o["unbound_sample"] = std::move(unbound);
  if (!r.error.empty())
    o["error"] = r.error;
  return o;
}

std::string json_key(const std::string& scheduler) {
  return scheduler == "kube-scheduler" ? "kube_scheduler" : scheduler;
}

} // namespace

status validate(const kube_bench_options& o) {
  if (o.workload != "basic" && o.workload != "gang")
    return status{errc::invalid_argument,
                  "--workload: \"" + o.workload + "\" is not a workload (basic or gang)"};
  auto names = split_list(o.schedulers);
  if (names.empty())
    return status{errc::invalid_argument, "--schedulers: name at least one scheduler"};
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (std::find(known_schedulers.begin(), known_schedulers.end(), n) == known_schedulers.end())
      return status{errc::invalid_argument,
                    "--schedulers: \"" + n + "\" is not binder, kube-scheduler or phalanx"};
    if (!seen.insert(n).second)
      return status{errc::invalid_argument, "--schedulers: \"" + n + "\" is named twice"};
  }
  return {};
}

result<json::object> run_kube_bench(const kube_bench_options& o) {
  if (auto s = validate(o); !s.ok())
    return s;
  const auto schedulers = split_list(o.schedulers);
  const auto work = make_workload(o);

  // The apiserver: the test control plane, or the cluster of --kubeconfig.
  std::unique_ptr<k8s::client> own_admin;
  k8s::client* admin = nullptr;
  k8s::connection_config connection;
  std::string kubeconfig = o.kubeconfig;
  std::string kube_scheduler_binary = o.kube_scheduler_binary;
  if (o.kubeconfig.empty()) {
    auto& cp = k8s::testing::control_plane::shared();
    admin = &cp.admin();
    connection = cp.admin_config();
    kubeconfig = cp.kubeconfig_path();
    if (kube_scheduler_binary.empty()) {
      const char* bin = std::getenv("PHALANX_CONTROL_PLANE_BIN");
      kube_scheduler_binary =
          std::string(bin != nullptr && *bin != '\0' ? bin : "") + "/kube-scheduler";
      if (bin == nullptr || *bin == '\0') {
        // The control plane found its binaries through the build script; ask it the same way.
        std::string cmd = std::string("bash ") + PHALANX_SOURCE_DIR +
                          "/k8s/testing/build-control-plane.sh --print-dir 2>/dev/null";
        std::string out;
        if (FILE* f = ::popen(cmd.c_str(), "r")) {
          char buf[512];
          while (std::fgets(buf, sizeof buf, f) != nullptr)
            out += buf;
          ::pclose(f);
        }
        while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
          out.pop_back();
        kube_scheduler_binary = out.substr(out.rfind('\n') == std::string::npos
                                               ? 0
                                               : out.rfind('\n') + 1) +
                                "/kube-scheduler";
      }
    }
  } else {
    auto config = k8s::load_kubeconfig(o.kubeconfig);
    if (!config)
      return config.error();
    connection = *config;
    connection.qps = 0;
    connection.connections = static_cast<int>(o.creators);
    auto c = k8s::client::create(connection);
    if (!c)
      return c.error();
    own_admin = std::move(*c);
    admin = own_admin.get();
  }
  if (std::find(schedulers.begin(), schedulers.end(), "kube-scheduler") != schedulers.end() &&
      !fs::exists(kube_scheduler_binary))
    return status{errc::not_found, "--kube-scheduler: " + kube_scheduler_binary +
                                       " does not exist (make k8s-control-plane builds it)"};

  // Volcano's CRDs and the default Queue, unless the cluster has them (a cluster running Volcano
  // keeps its own).
  const std::string queues_path = "/apis/scheduling.volcano.sh/v1beta1/queues";
  if (!k8s::get_json(*admin, queues_path)) {
    const std::string source = PHALANX_SOURCE_DIR;
    if (auto s = k8s::testing::apply_file(*admin,
                                          source + "/k8s/deploy/crd-scheduling.volcano.sh.yaml");
        !s.ok())
      return s;
    if (auto s = wait_for([&] { return bool(k8s::get_json(*admin, queues_path)); },
                          std::chrono::seconds(30), "the Volcano CRDs served");
        !s.ok())
      return s;
  }
  if (!k8s::get_json(*admin, queues_path + "/default"))
    if (auto s = k8s::testing::apply(
            *admin, json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                                 {"kind", "Queue"},
                                 {"metadata", json::object{{"name", "default"}}},
                                 {"spec", json::object{{"weight", 1}}}});
        !s.ok())
      return s;

  std::printf("k8s: %s workload, %lld nodes, %zu pods in %zu PodGroups; schedulers %s\n",
              o.workload.c_str(), static_cast<long long>(o.nodes), work.pods.size(),
              work.groups.size(), o.schedulers.c_str());
  std::fflush(stdout);
  std::vector<std::string> node_names;
  for (int64_t i = 0; i < o.nodes; ++i)
    node_names.push_back("bench-node-" + std::to_string(i));
  const auto setup_start = clock_type::now();
  if (auto s = in_parallel(o.nodes, o.creators,
                           [&](int64_t i) { return create_node(*admin, node_names[i]); });
      !s.ok())
    return s;
  const double setup_seconds = seconds_between(setup_start, clock_type::now());

  auto dir = fs::temp_directory_path() / ("phalanx-k8s-bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path logs = o.log_dir.empty() ? dir / "logs" : fs::path(o.log_dir);
  fs::create_directories(logs);

  auto scheduler_connection = connection;
  scheduler_connection.qps = o.qps;
  scheduler_connection.burst = static_cast<int>(o.burst);
  scheduler_connection.connections = static_cast<int>(o.binder_threads);
  bench_context b{o,          work,         *admin, scheduler_connection, kubeconfig,
                  kube_scheduler_binary, node_names, dir,    logs};
  std::vector<scheduler_run> runs;
  for (const auto& s : schedulers) {
    runs.push_back(run_one(b, s));
    if (!runs.back().error.empty())
      break;  // Set-up failed, or its pods are still there: the next would not run on empty nodes.
  }

  if (!o.kubeconfig.empty())
    (void)in_parallel(o.nodes, o.creators, [&](int64_t i) {
      return k8s::delete_object(*admin, "/api/v1/nodes/" + node_names[i]);
    });

  json::object rep;
  rep["mode"] = "k8s";
  rep["tool"] = "phalanx-loadtest";
  rep["command"] = o.command;
  rep["parameters"] = json::object{{"workload", o.workload},
                                   {"nodes", o.nodes},
                                   {"pods", static_cast<int64_t>(work.pods.size())},
                                   {"podgroups", static_cast<int64_t>(work.groups.size())},
                                   {"max_gang_size", o.max_gang_size},
                                   {"demand", o.demand},
                                   {"schedulers", o.schedulers},
                                   {"qps", o.qps},
                                   {"burst", o.burst},
                                   {"creators", o.creators},
                                   {"binder_threads", o.binder_threads},
                                   {"backlog", o.backlog},
                                   {"phalanxd_flags", o.phalanxd_flags},
                                   {"stall_seconds", o.stall_seconds},
                                   {"seed", o.seed},
                                   {"node_shape", "32 cpu, 128Gi, 110 pods"},
                                   {"apiserver",
                                    o.kubeconfig.empty()
                                        ? "the test control plane (kube-apiserver 1.37.2, etcd "
                                          "3.6.16): --max-requests-inflight=3000 "
                                          "--max-mutating-requests-inflight=1000 "
                                          "--enable-priority-and-fairness=false"
                                        : "the cluster of " + o.kubeconfig}};
  rep["machine"] = machine_info();
  rep["started_at"] = utc_now_rfc3339();
  rep["setup_seconds"] = setup_seconds;
  json::object by_name;
  const scheduler_run* phalanx = nullptr;
  const scheduler_run* kube = nullptr;
  const scheduler_run* binder = nullptr;
  for (const auto& r : runs) {
    by_name[json_key(r.name)] = run_json(r);
    if (r.name == "phalanx")
      phalanx = &r;
    else if (r.name == "kube-scheduler")
      kube = &r;
    else
      binder = &r;
  }
  rep["schedulers"] = std::move(by_name);
  auto ratio = [](const scheduler_run* a, const scheduler_run* b) -> json::value {
    if (a == nullptr || b == nullptr || b->pods_per_second <= 0)
      return nullptr;
    return a->pods_per_second / b->pods_per_second;
  };
  rep["ratio_vs_kube_scheduler"] = ratio(phalanx, kube);
  rep["ratio_vs_binder"] = ratio(phalanx, binder);

  json::array targets;
  bool all_met = true;
  auto target = [&](std::string name, std::string rule, double goal, double value, bool met) {
    all_met = all_met && met;
    targets.push_back(make_target(std::move(name), std::move(rule), goal, value, met));
  };
  // The binder looks at nothing, so it overcommits nodes when the pods do not fit: its
  // invariants are reported, not a target.
  for (const auto& r : runs)
    if (r.name != "binder")
      target(r.name + ": the invariants hold", "schedulers." + json_key(r.name) + ".invariants_ok",
             1, r.invariants_ok ? 1 : 0, r.invariants_ok && r.error.empty());
  if (phalanx != nullptr && o.workload == "basic") {
    if (kube != nullptr) {
      const double v = kube->pods_per_second > 0 ? phalanx->pods_per_second / kube->pods_per_second : 0;
      target("Phalanx's pods/s over kube-scheduler's", "ratio_vs_kube_scheduler >= 2", 2, v, v >= 2);
    }
    if (binder != nullptr) {
      const double v =
          binder->pods_per_second > 0 ? phalanx->pods_per_second / binder->pods_per_second : 0;
      target("Phalanx's pods/s over the binder's", "ratio_vs_binder >= 0.8", 0.8, v, v >= 0.8);
    }
  }
  if (phalanx != nullptr && o.workload == "gang")
    target("Phalanx: every gang all-or-nothing", "schedulers.phalanx.gangs_partial == 0", 0,
           double(phalanx->gangs_partial), phalanx->gangs_partial == 0);
  rep["targets"] = std::move(targets);

  json::array summary;
  json::array lines;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    char text[256];
    std::snprintf(text, sizeof text,
                  "%lld/%lld bound, %.0f pods/s, p50 %.0f ms, p99 %.0f ms, partial gangs %lld",
                  static_cast<long long>(r.bound), static_cast<long long>(r.pods),
                  r.pods_per_second, r.p50_pod_ms, r.p99_pod_ms,
                  static_cast<long long>(r.gangs_partial));
    summary.push_back(json::array{json::value(r.name), json::value(text)});
    lines.push_back(json::object{{"name", r.name}, {"points", r.series}});
  }
  rep["summary"] = std::move(summary);
  rep["plots"] = json::array{json::object{{"id", "bound"},
                                          {"title", o.backlog
                                                        ? "Pods bound over time, from the scheduler's start"
                                                        : "Pods bound over time, from the first creation"},
                                          {"x_label", "seconds"},
                                          {"y_label", "pods bound"},
                                          {"lines", std::move(lines)}}};

  if (interrupt_signal() != 0) {
    // Partial figures: the verdict says so, and the exit code is the signal's.
    rep["outcome"] = "interrupted";
    rep["outcome_message"] = std::string("interrupted by ") + signal_name(interrupt_signal()) +
                             " during the run of " + (runs.empty() ? "none" : runs.back().name) +
                             " (" +
                             std::to_string(runs.size()) + " of " +
                             std::to_string(schedulers.size()) + " schedulers)";
  }
  const bool clean = (all_met || interrupt_signal() != 0) && o.log_dir.empty();
  if (clean)
    fs::remove_all(dir);
  else
    std::printf("k8s: the schedulers' logs are in %s\n", logs.c_str());
  std::fflush(stdout);
  return rep;
}

} // namespace phalanx::loadtest
