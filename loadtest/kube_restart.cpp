#include "loadtest/kube_restart.hpp"

#include "loadtest/interrupt.hpp"
#include "loadtest/parallel.hpp"
#include "loadtest/phalanxd_process.hpp"
#include "loadtest/report.hpp"

#include "k8s/operations.hpp"
#include "k8s/testing/control_plane.hpp"
#include "k8s/testing/manifests.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;
constexpr const char* load_namespace = "load";

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

json::value pod_json(const std::string& name, const std::string& group, const std::string& node) {
  json::object spec{
      {"schedulerName", "volcano"},
      {"containers",
       json::array{json::object{
           {"name", "main"},
           {"image", "registry.k8s.io/pause:3.10"},
           {"resources",
            json::object{{"requests", json::object{{"cpu", "100m"}, {"memory", "64Mi"}}}}}}}}};
  if (!node.empty())
    spec["nodeName"] = node;
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", json::object{{"name", name},
                                                {"namespace", load_namespace},
                                                {"annotations", json::object{{"scheduling.k8s.io/group-name", group}}}}},
                      {"spec", std::move(spec)}};
}

json::value group_json(const std::string& name, int64_t min_member) {
  return json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                      {"kind", "PodGroup"},
                      {"metadata", json::object{{"name", name}, {"namespace", load_namespace}}},
                      {"spec", json::object{{"minMember", min_member}, {"queue", "default"}}}};
}

// Creates a new gang of two pods (unbound) while phalanxd is down.
status new_gang(k8s::client& c, const std::string& name) {
  if (auto s = k8s::testing::apply(c, group_json(name, 2)); !s.ok())
    return s;
  for (int i = 0; i < 2; ++i)
    if (auto s = k8s::testing::apply(c, pod_json(name + "-" + std::to_string(i), name, ""));
        !s.ok())
      return s;
  return {};
}

bool bound(k8s::client& c, const std::string& pod) {
  auto p = k8s::get_json(c, std::string("/api/v1/namespaces/") + load_namespace + "/pods/" + pod);
  if (!p)
    return false;
  const auto* spec = p->as_object().if_contains("spec");
  const auto* node = spec ? spec->as_object().if_contains("nodeName") : nullptr;
  return node && node->is_string() && !node->as_string().empty();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

result<json::object> run_kube_restart(const kube_restart_options& o) {
  auto& cp = k8s::testing::control_plane::shared();
  auto& admin = cp.admin();
  const std::string source = PHALANX_SOURCE_DIR;
  if (auto s = k8s::testing::apply_file(admin, source + "/k8s/deploy/crd-scheduling.volcano.sh.yaml");
      !s.ok())
    return s;
  for (int i = 0; i < 100 && !k8s::get_json(admin, "/apis/scheduling.volcano.sh/v1beta1/queues"); ++i)
    if (!sleep_unless_interrupted(std::chrono::milliseconds(100)))
      return interrupted_while("waiting for the Volcano CRDs");
  if (auto s = k8s::testing::apply(
          admin, json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                              {"kind", "Queue"},
                              {"metadata", json::object{{"name", "default"}}},
                              {"spec", json::object{{"weight", 1}}}});
      !s.ok())
    return s;
  if (auto s = cp.create_namespace(load_namespace); !s.ok())
    return s;

  std::printf("k8s-restart: creating %lld nodes and %lld bound pods on %s\n",
              static_cast<long long>(o.nodes), static_cast<long long>(o.pods), cp.server().c_str());
  std::fflush(stdout);
  auto setup_start = clock_type::now();
  if (auto s = in_parallel(o.nodes, 8,
                           [&](int64_t i) {
                             return cp.create_node("node-" + std::to_string(i), "32", "128Gi");
                           });
      !s.ok())
    return s;
  const int64_t groups = (o.pods + o.gang_size - 1) / o.gang_size;
  if (auto s = in_parallel(groups, 8,
                           [&](int64_t g) {
                             return k8s::testing::apply(
                                 admin, group_json("g-" + std::to_string(g), o.gang_size));
                           });
      !s.ok())
    return s;
  if (auto s = in_parallel(o.pods, 8,
                           [&](int64_t i) {
                             auto g = "g-" + std::to_string(i / o.gang_size);
                             auto node = "node-" + std::to_string(i % o.nodes);
                             return k8s::testing::apply(
                                 admin, pod_json(g + "-" + std::to_string(i % o.gang_size), g, node));
                           });
      !s.ok())
    return s;
  double setup_seconds = seconds_since(setup_start);

  auto dir = fs::temp_directory_path() / ("phalanx-k8s-restart-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path logs = o.log_dir.empty() ? dir : fs::path(o.log_dir);
  fs::create_directories(logs);
  phalanxd_options po;
  if (!o.phalanxd_binary.empty())
    po.binary = o.phalanxd_binary;
  po.data_dir = (dir / "data").string();
  po.ready_timeout = std::chrono::minutes(5);
  po.extra_args = {"--mode",          "kubernetes", "--kubeconfig",     cp.kubeconfig_path(),
                   "--leader-elect=false",          "--kube-api-qps", "500",
                   "--kube-api-burst", "1000"};

  // An interrupted run leaves nothing behind but the logs asked for with --log-dir (a failed one
  // keeps its logs: below).
  auto interrupted = [&](std::unique_ptr<phalanxd_process>& d, std::string_view doing) {
    d.reset();  // Killed before its directory goes.
    std::error_code ec;
    fs::remove_all(o.log_dir.empty() ? dir : fs::path(po.data_dir), ec);
    return interrupted_while(doing);
  };
  auto start = [&](const std::string& log) -> result<std::unique_ptr<phalanxd_process>> {
    po.log_file = (logs / log).string();
    return phalanxd_process::start(po);
  };
  // First start: lists everything.
  auto first = start("first.log");
  if (!first)
    return first.error();
  double first_ready = (*first)->seconds_to_ready();
  if (!sleep_unless_interrupted(std::chrono::seconds(3)))  // The checkpoint catches up.
    return interrupted(*first, "the first phalanxd checkpointed");

  // A restart: kill, a new gang meanwhile, start again, time to the new gang's first bind.
  auto restart = [&](std::unique_ptr<phalanxd_process>& d, const std::string& gang,
                     const std::string& log, bool restart_apiserver, double& ready,
                     double& first_bind) -> status {
    d->kill();
    if (auto s = new_gang(admin, gang); !s.ok())
      return s;
    if (restart_apiserver)
      if (auto s = cp.restart_apiserver(); !s.ok())
        return s;
    auto& client = cp.admin();
    auto t0 = clock_type::now();
    auto again = start(log);
    if (!again)
      return again.error();
    d = std::move(*again);
    ready = d->seconds_to_ready();
    auto deadline = clock_type::now() + std::chrono::minutes(5);
    while (clock_type::now() < deadline) {
      if (bound(client, gang + "-0") || bound(client, gang + "-1")) {
        first_bind = seconds_since(t0);
        return {};
      }
      if (!sleep_unless_interrupted(std::chrono::milliseconds(5)))
        return interrupted(d, "waiting for " + gang + " to be bound");
    }
    return status{errc::unavailable, "the new gang " + gang + " was not bound within 5 minutes"};
  };
  auto d = std::move(*first);
  double short_ready = 0, short_bind = 0, long_ready = 0, long_bind = 0;
  if (auto s = restart(d, "after-short", "short.log", false, short_ready, short_bind); !s.ok())
    return s;
  if (!sleep_unless_interrupted(std::chrono::seconds(3)))
    return interrupted(d, "between the restarts");
  if (auto s = restart(d, "after-long", "long.log", true, long_ready, long_bind); !s.ok())
    return s;
  auto stopped = d->stop();
  auto short_log = read_file((logs / "short.log").string());
  auto long_log = read_file((logs / "long.log").string());
  bool short_resumed = short_log.find("msg=\"checkpoint restored\"") != std::string::npos &&
                       short_log.find("msg=\"listed\" kind=pods") == std::string::npos;
  bool long_relisted = long_log.find("msg=\"listed\" kind=pods") != std::string::npos;
  const bool all_met = short_bind <= 2 && short_resumed && long_relisted;
  if (all_met || !o.log_dir.empty())
    fs::remove_all(po.data_dir);
  if (all_met && o.log_dir.empty())
    fs::remove_all(dir);
  else
    std::printf("k8s-restart: phalanxd's logs are in %s\n", logs.c_str());

  json::object rep;
  rep["mode"] = "k8s-restart";
  rep["tool"] = "phalanx-loadtest";
  rep["command"] = o.command;
  rep["parameters"] = json::object{{"nodes", o.nodes}, {"pods", o.pods}, {"gang_size", o.gang_size}};
  rep["machine"] = machine_info();
  rep["started_at"] = utc_now_rfc3339();
  rep["setup_seconds"] = setup_seconds;
  rep["first_start_to_ready_seconds"] = first_ready;
  rep["short_outage"] = json::object{{"start_to_ready_seconds", short_ready},
                                     {"start_to_first_new_bind_seconds", short_bind},
                                     {"resumed_without_list", short_resumed}};
  rep["long_outage"] = json::object{{"start_to_ready_seconds", long_ready},
                                    {"start_to_first_new_bind_seconds", long_bind},
                                    {"listed_again_after_410", long_relisted}};
  rep["clean_stop"] = stopped.ok() && *stopped == 0;
  rep["targets"] = json::array{
      make_target("restart to the first new bind, short outage",
                  "short_outage.start_to_first_new_bind_seconds <= 2", 2, short_bind,
                  short_bind <= 2),
      make_target("the short outage resumed its watches", "short_outage.resumed_without_list", 1,
                  short_resumed ? 1 : 0, short_resumed),
      make_target("the long outage listed again after 410", "long_outage.listed_again_after_410",
                  1, long_relisted ? 1 : 0, long_relisted)};
  std::printf("k8s-restart: %lld nodes, %lld pods: first start to ready %.2f s; short outage: "
              "ready %.2f s, first new bind %.2f s (resumed: %s); long outage (410): ready "
              "%.2f s, first new bind %.2f s (listed again: %s)\n",
              static_cast<long long>(o.nodes), static_cast<long long>(o.pods), first_ready,
              short_ready, short_bind, short_resumed ? "yes" : "no", long_ready, long_bind,
              long_relisted ? "yes" : "no");
  std::fflush(stdout);
  return rep;
}

} // namespace phalanx::loadtest
