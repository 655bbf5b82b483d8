#include "tests/k8s/kube_harness.hpp"

#include "api/codec.hpp"
#include "k8s/operations.hpp"
#include "k8s/testing/manifests.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace phalanx::kube_tests {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

int64_t cpu_milli(const std::string& text) {
  auto q = scheduler::parse_quantity(text, scheduler::quantity_unit::milli);
  return q ? *q : 0;
}

} // namespace

kube_harness::kube_harness(std::string ns)
    : cp_(k8s::testing::control_plane::shared()), ns_(std::move(ns)) {
  scratch_ = (fs::temp_directory_path() / ("phalanx-kube-" + std::to_string(::getpid()) + "-" +
                                           std::to_string(std::rand())))
                 .string();
  fs::create_directories(scratch_);
  apply_file("k8s/deploy/crd-scheduling.volcano.sh.yaml");
  apply_file("k8s/deploy/crd-batch.volcano.sh.yaml");
  apply_file("k8s/deploy/crd-bus.volcano.sh.yaml");
  apply_file("k8s/deploy/rbac.yaml");
  // The CRDs serve once established.
  if (!wait_for([&] {
        return k8s::get_json(admin(), "/apis/scheduling.volcano.sh/v1beta1/queues").ok() &&
               k8s::get_json(admin(), "/apis/bus.volcano.sh/v1alpha1/commands").ok();
      }))
    throw std::runtime_error("the PodGroup, Queue and Command CRDs were not established");
  apply_file("k8s/deploy/queue-default.yaml");
  if (auto s = cp_.create_namespace(ns_); !s.ok())
    throw std::runtime_error("namespace " + ns_ + ": " + s.to_string());
}

kube_harness::~kube_harness() {
  std::error_code ec;
  fs::remove_all(scratch_, ec);
}

void kube_harness::apply(const json::value& object) {
  if (auto s = k8s::testing::apply(admin(), object); !s.ok())
    throw std::runtime_error(s.to_string());
}

void kube_harness::apply_file(const std::string& repo_path) {
  if (auto s = k8s::testing::apply_file(admin(), std::string(PHALANX_SOURCE_DIR) + "/" + repo_path);
      !s.ok())
    throw std::runtime_error(s.to_string());
}

void kube_harness::node(const std::string& name, const std::string& cpu,
                        const std::string& memory,
                        const std::map<std::string, std::string>& labels) {
  auto all = labels;
  all.emplace("kubernetes.io/hostname", name);
  if (auto s = cp_.create_node(name, cpu, memory, 110, all); !s.ok())
    throw std::runtime_error("node " + name + ": " + s.to_string());
}

void kube_harness::queue(const std::string& name, int weight) {
  apply(json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                     {"kind", "Queue"},
                     {"metadata", json::object{{"name", name}}},
                     {"spec", json::object{{"weight", weight}, {"reclaimable", true}}}});
}

void kube_harness::podgroup(const std::string& name, int min_member,
                            const std::map<std::string, int>& min_task_member,
                            const std::string& min_cpu, const std::string& queue) {
  json::object spec{{"minMember", min_member}, {"queue", queue}};
  if (!min_task_member.empty()) {
    json::object roles;
    for (const auto& [role, n] : min_task_member)
      roles[role] = n;
    spec["minTaskMember"] = std::move(roles);
  }
  if (!min_cpu.empty())
    spec["minResources"] = json::object{{"cpu", min_cpu}};
  apply(json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                     {"kind", "PodGroup"},
                     {"metadata", json::object{{"name", name}, {"namespace", ns_}}},
                     {"spec", std::move(spec)}});
}

void kube_harness::pod(const std::string& name, const std::string& group, const std::string& cpu,
                       const std::string& scheduler, const std::string& role) {
  json::object annotations;
  if (!group.empty())
    annotations["scheduling.k8s.io/group-name"] = group;
  if (!role.empty())
    annotations["volcano.sh/task-spec"] = role;
  apply(json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", json::object{{"name", name}, {"namespace", ns_}, {"annotations", annotations}}},
      {"spec",
       json::object{{"schedulerName", scheduler},
                    {"containers",
                     json::array{json::object{
                         {"name", "main"},
                         {"image", "registry.k8s.io/pause:3.10"},
                         {"resources", json::object{{"requests", json::object{
                                                                     {"cpu", cpu},
                                                                     {"memory", "64Mi"}}}}}}}}}}});
}

void kube_harness::delete_pod(const std::string& name) {
  k8s::request_spec r;
  r.method = "DELETE";
  r.target = "/api/v1/namespaces/" + ns_ + "/pods/" + name + "?gracePeriodSeconds=0";
  auto res = admin().request(r);
  if (!res || (res->status != 200 && res->status != 404))
    throw std::runtime_error("delete pod " + name);
}

void kube_harness::bind(const std::string& pod, const std::string& node) {
  auto p = k8s::get_json(admin(), "/api/v1/namespaces/" + ns_ + "/pods/" + pod);
  if (!p)
    throw std::runtime_error("get pod " + pod + ": " + p.error().to_string());
  auto outcome = k8s::bind_pod(admin(), ns_, pod, k8s::string_at(*p, {"metadata", "uid"}), node);
  if (outcome.result != k8s::bind_result::bound)
    throw std::runtime_error("bind " + pod + ": " + outcome.message);
}

std::map<std::string, seen_pod> kube_harness::pods() {
  std::map<std::string, seen_pod> out;
  auto list = k8s::get_json(admin(), "/api/v1/namespaces/" + ns_ + "/pods");
  if (!list)
    throw std::runtime_error("list pods: " + list.error().to_string());
  for (const auto& item : list->as_object().at("items").as_array()) {
    seen_pod p;
    p.uid = k8s::string_at(item, {"metadata", "uid"});
    p.node = k8s::string_at(item, {"spec", "nodeName"});
    p.group = k8s::string_at(item, {"metadata", "annotations", "scheduling.k8s.io/group-name"});
    p.phase = k8s::string_at(item, {"status", "phase"});
    p.scheduler = k8s::string_at(item, {"spec", "schedulerName"});
    p.terminating = !k8s::string_at(item, {"metadata", "deletionTimestamp"}).empty();
    p.nominated_node = k8s::string_at(item, {"status", "nominatedNodeName"});
    if (const auto* status = item.as_object().if_contains("status"))
      if (const auto* conditions = status->as_object().if_contains("conditions"))
        for (const auto& c : conditions->as_array())
          if (k8s::string_at(c, {"type"}) == "DisruptionTarget" &&
              k8s::string_at(c, {"status"}) == "True")
            p.disruption_reason = k8s::string_at(c, {"reason"});
    out[k8s::string_at(item, {"metadata", "name"})] = std::move(p);
  }
  return out;
}

std::map<std::string, seen_group> kube_harness::groups() {
  std::map<std::string, seen_group> out;
  auto list =
      k8s::get_json(admin(), "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + ns_ + "/podgroups");
  if (!list)
    throw std::runtime_error("list podgroups: " + list.error().to_string());
  for (const auto& item : list->as_object().at("items").as_array()) {
    seen_group g;
    g.phase = k8s::string_at(item, {"status", "phase"});
    if (const auto* m = item.at("spec").as_object().if_contains("minMember"); m && m->is_int64())
      g.min_member = static_cast<int32_t>(m->as_int64());
    if (const auto* c = item.as_object().if_contains("status"))
      if (const auto* conds = c->as_object().if_contains("conditions"); conds && conds->is_array())
        for (const auto& cond : conds->as_array())
          g.message = k8s::string_at(cond, {"message"});
    out[k8s::string_at(item, {"metadata", "name"})] = std::move(g);
  }
  return out;
}

std::vector<std::string> kube_harness::check_invariants() {
  std::vector<std::string> v;
  auto all = pods();
  // I1: once seen bound, on that node for as long as the pod lives.
  for (const auto& [name, p] : all) {
    if (p.node.empty())
      continue;
    auto [at, fresh] = bound_before_.try_emplace(p.uid, p.node);
    if (!fresh && at->second != p.node)
      v.push_back("I1: pod " + name + " moved from " + at->second + " to " + p.node);
  }
  // I2: per node, the requests of its bound, unfinished pods within its allocatable (cpu).
  std::map<std::string, int64_t> used;
  auto list = k8s::get_json(admin(), "/api/v1/pods");
  if (list)
    for (const auto& item : list->as_object().at("items").as_array()) {
      auto node = k8s::string_at(item, {"spec", "nodeName"});
      auto phase = k8s::string_at(item, {"status", "phase"});
      if (node.empty() || phase == "Succeeded" || phase == "Failed")
        continue;
      for (const auto& c : item.at("spec").at("containers").as_array())
        used[node] += cpu_milli(k8s::string_at(c, {"resources", "requests", "cpu"}));
    }
  auto nodes = k8s::get_json(admin(), "/api/v1/nodes");
  if (nodes)
    for (const auto& item : nodes->as_object().at("items").as_array()) {
      auto name = k8s::string_at(item, {"metadata", "name"});
      auto allocatable = cpu_milli(k8s::string_at(item, {"status", "allocatable", "cpu"}));
      if (used[name] > allocatable)
        v.push_back("I2: node " + name + " holds " + std::to_string(used[name]) +
                    "m cpu of bound pods, over its " + std::to_string(allocatable) + "m");
    }
  // I3: each gang 0 or >= minMember bound.
  std::map<std::string, int> bound;
  for (const auto& [name, p] : all)
    if (!p.group.empty() && !p.node.empty())
      ++bound[p.group];
  for (const auto& [name, g] : groups())
    if (bound[name] != 0 && bound[name] < g.min_member)
      v.push_back("I3: gang " + name + " has " + std::to_string(bound[name]) +
                  " pods bound, fewer than minMember " + std::to_string(g.min_member));
  return v;
}

bool kube_harness::wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::string kube_harness::kubeconfig_for(const std::string& account) {
  auto token = cp_.service_account_token("phalanx-system", account);
  if (!token)
    throw std::runtime_error("token of " + account + ": " + token.error().to_string());
  auto path = scratch_ + "/" + account + ".kubeconfig";
  std::ofstream out(path);
  out << "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
      << "clusters:\n- name: test\n  cluster:\n    server: " << cp_.server()
      << "\n    certificate-authority: " << cp_.ca_file() << "\n"
      << "users:\n- name: " << account << "\n  user:\n    token: " << *token << "\n"
      << "contexts:\n- name: test\n  context:\n    cluster: test\n    user: " << account
      << "\n    namespace: phalanx-system\n";
  return path;
}

std::unique_ptr<loadtest::phalanxd_process>
kube_harness::start_phalanxd(const std::string& data, const std::vector<std::string>& extra,
                             const std::string& kubeconfig, const std::string& on_data) {
  loadtest::phalanxd_options o;
  o.data_dir = scratch_ + "/" + (on_data.empty() ? data : on_data);
  o.log_file = scratch_ + "/" + data + ".log";
  o.extra_args = {"--mode", "kubernetes", "--kubeconfig",
                  kubeconfig.empty() ? kubeconfig_for() : kubeconfig, "--lock-namespace",
                  "phalanx-system"};
  for (const auto& e : extra)
    o.extra_args.push_back(e);
  auto d = loadtest::phalanxd_process::start(o);
  if (!d)
    throw std::runtime_error("phalanxd did not start: " + d.error().message());
  return std::move(*d);
}

test_kubelet::test_kubelet(kube_harness& h) : h_(h) {
  thread_ = std::thread([this] {
    while (!stopping_.load()) {
      step();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
}

test_kubelet::~test_kubelet() {
  stopping_ = true;
  thread_.join();
}

bool test_kubelet::restart_due(const json::value& pod, const std::string& uid,
                               std::chrono::steady_clock::time_point running_since,
                               int64_t restarts) {
  auto every = scheduler::parse_duration_ns(
      k8s::string_at(pod, {"metadata", "annotations", "sim.phalanx.io/restart-every"}));
  if (!every || *every <= 0)
    return false;
  auto cap = k8s::string_at(pod, {"metadata", "annotations", "sim.phalanx.io/restarts"});
  int64_t most = 0;
  if (!cap.empty() &&
      std::from_chars(cap.data(), cap.data() + cap.size(), most).ec == std::errc() &&
      restarts >= most)
    return false;
  auto last = restarted_.find(uid);
  auto since = last == restarted_.end() ? running_since : last->second;
  return std::chrono::steady_clock::now() - since >= std::chrono::nanoseconds(*every);
}

void test_kubelet::step() {
  auto list = k8s::get_json(h_.admin(), "/api/v1/namespaces/" + h_.ns() + "/pods");
  if (!list)
    return;
  auto now_text = api::format_time(scheduler::timestamp{
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())});
  for (const auto& item : list->as_object().at("items").as_array()) {
    auto name = k8s::string_at(item, {"metadata", "name"});
    auto uid = k8s::string_at(item, {"metadata", "uid"});
    auto path = "/api/v1/namespaces/" + h_.ns() + "/pods/" + name;
    if (!k8s::string_at(item, {"metadata", "deletionTimestamp"}).empty()) {
      k8s::delete_object(h_.admin(), path, uid, 0).permit_unchecked();
      started_.erase(uid);
      restarted_.erase(uid);
      continue;
    }
    if (k8s::string_at(item, {"spec", "nodeName"}).empty())
      continue;
    auto phase = k8s::string_at(item, {"status", "phase"});
    const auto& container = item.at("spec").at("containers").at(0);
    // The count so far is the apiserver's (the first container's, where this kubelet writes it),
    // so a test that restarts the kubelet or phalanxd goes on from it.
    int64_t restarts = 0;
    if (const auto* n = k8s::value_at(item, {"status", "containerStatuses"});
        n != nullptr && n->is_array() && !n->as_array().empty())
      if (const auto* c = k8s::value_at(n->as_array()[0], {"restartCount"});
          c != nullptr && c->is_int64())
        restarts = c->as_int64();
    json::object status_of_container{{"name", container.at("name")},
                                     {"image", container.at("image")},
                                     {"imageID", ""},
                                     {"restartCount", restarts}};
    json::object status;
    if (phase == "Pending") {
      status_of_container["ready"] = true;
      status_of_container["state"] =
          json::object{{"running", json::object{{"startedAt", now_text}}}};
      status = json::object{{"phase", "Running"}, {"startTime", now_text}};
      started_[uid] = std::chrono::steady_clock::now();
    } else if (phase == "Running") {
      auto at = started_.find(uid);
      if (at == started_.end())  // Running before this kubelet: from now.
        at = started_.emplace(uid, std::chrono::steady_clock::now()).first;
      auto annotation = [&](const char* key) {
        return k8s::string_at(item, {"metadata", "annotations", key});
      };
      bool fails = !annotation("sim.phalanx.io/fail-after").empty();
      auto after = annotation(fails ? "sim.phalanx.io/fail-after" : "sim.phalanx.io/duration");
      auto ns = scheduler::parse_duration_ns(after);
      if (after.empty() || !ns ||
          std::chrono::steady_clock::now() - at->second < std::chrono::nanoseconds(*ns)) {
        if (!restart_due(item, uid, at->second, restarts))
          continue;
        // The container crashed and was started again: the pod stays Running, its count + 1.
        status_of_container["restartCount"] = restarts + 1;
        status_of_container["ready"] = true;
        status_of_container["state"] =
            json::object{{"running", json::object{{"startedAt", now_text}}}};
        status_of_container["lastState"] = json::object{
            {"terminated", json::object{{"exitCode", 1},
                                        {"reason", "Error"},
                                        {"startedAt", now_text},
                                        {"finishedAt", now_text}}}};
        status = json::object{{"phase", "Running"}};
        // The interval runs from this attempt; one not written is made at the next interval, its
        // count read again from the pod.
        restarted_[uid] = std::chrono::steady_clock::now();
      } else {
        int64_t exit_code = 0;
        if (fails) {
          exit_code = 1;
          auto code = annotation("sim.phalanx.io/exit-code");
          std::from_chars(code.data(), code.data() + code.size(), exit_code);  // Else 1.
        }
        status_of_container["ready"] = false;
        status_of_container["state"] = json::object{
            {"terminated", json::object{{"exitCode", exit_code},
                                        {"reason", fails ? "Error" : "Completed"},
                                        {"startedAt", now_text},
                                        {"finishedAt", now_text}}}};
        status = json::object{{"phase", fails ? "Failed" : "Succeeded"}};
      }
    } else {
      continue;
    }
    status["containerStatuses"] = json::array{std::move(status_of_container)};
    json::object patch{{"metadata", json::object{{"uid", uid}}}, {"status", std::move(status)}};
    // A write that failed is made again at the next step, the pod still being where it was.
    k8s::patch_json(h_.admin(), path + "/status", patch, k8s::patch_type::merge)
        .error()
        .permit_unchecked();
  }
}

} // namespace phalanx::kube_tests
