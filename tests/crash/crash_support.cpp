#include "tests/crash/crash_support.hpp"

#include "api/codec.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace phalanx::crash_tests {

namespace fs = std::filesystem;

bool long_tests() {
  const char* v = std::getenv("PHALANX_LONG_TESTS");
  return v != nullptr && std::string_view(v) == "1";
}

scratch_dir::scratch_dir() {
  const char* env = std::getenv("TEST_TMPDIR");
  std::string base = env ? env : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  std::string pattern = base + "/phalanx-crash-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    std::abort();
  path_ = buf.data();
}

scratch_dir::~scratch_dir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

bool write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

// ------------------------------------------------------------------------------------------------
// The workload

namespace {

std::string memory_text(int64_t bytes) {
  return std::to_string(bytes >> 20) + "Mi";
}

std::string cpu_text(int64_t milli) {
  return std::to_string(milli) + "m";
}

} // namespace

std::string cluster_shape::yaml() const {
  std::ostringstream out;
  out << "nodes:\n  - name: node\n    count: " << count << "\n    cpu: \"" << cpu_text(cpu_milli)
      << "\"\n    memory: " << memory_text(memory_bytes) << "\n";
  return out.str();
}

std::vector<std::string> cluster_shape::node_bodies() const {
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i)
    out.push_back(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-)" +
                  std::to_string(i) + R"("},"status":{"allocatable":{"cpu":")" +
                  cpu_text(cpu_milli) + R"(","memory":")" + memory_text(memory_bytes) +
                  R"(","pods":"110"}}})");
  return out;
}

scheduler::resources cluster_shape::total() const {
  scheduler::resources r;
  r.cpu_milli = cpu_milli * count;
  r.memory_bytes = memory_bytes * count;
  r.pods = int64_t(110) * count;
  return r;
}

scheduler::resources gang_spec::min_resources() const {
  scheduler::resources r;
  r.cpu_milli = oversized ? cpu_milli * 1000 : cpu_milli * min_member;
  r.memory_bytes = memory_bytes * min_member;
  return r;
}

std::string gang_spec::pod_name(int index) const {
  return name + "-" + std::to_string(index);
}

std::string gang_spec::role_of(int index) const {
  if (!roles)
    return "";
  return index == 0 ? "ps" : "worker";
}

std::string gang_spec::podgroup_body() const {
  auto min = min_resources();
  std::string body = R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",)"
                     R"("metadata":{"name":")" +
                     name + R"(","namespace":")" + std::string(workload_namespace) +
                     R"("},"spec":{"minMember":)" + std::to_string(min_member);
  if (roles)
    body += R"(,"minTaskMember":{"ps":1,"worker":)" + std::to_string(min_member - 1) + "}";
  body += R"(,"minResources":{"cpu":")" + cpu_text(min.cpu_milli) + R"(","memory":")" +
          memory_text(min.memory_bytes) + R"("},"queue":"default"}})";
  return body;
}

std::string gang_spec::pod_body(int index) const {
  std::string annotations = R"("scheduling.k8s.io/group-name":")" + name +
                            R"(","sim.phalanx.io/duration":")" + std::to_string(duration_ms) +
                            R"(ms")";
  if (roles)
    annotations += R"(,"volcano.sh/task-spec":")" + role_of(index) + R"(")";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + pod_name(index) +
         R"(","namespace":")" + std::string(workload_namespace) + R"(","annotations":{)" +
         annotations +
         R"(}},"spec":{"schedulerName":"phalanx","containers":[{"name":"main","image":"sim",)"
         R"("resources":{"requests":{"cpu":")" +
         cpu_text(cpu_milli) + R"(","memory":")" + memory_text(memory_bytes) + R"("}}}]}})";
}

std::vector<gang_spec> make_gangs(uint64_t seed, int count, const cluster_shape& cluster,
                                  int max_duration_ms) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 17);
  std::vector<gang_spec> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    gang_spec g;
    g.name = "g" + std::to_string(seed) + "-" + std::to_string(i);
    g.pods = 1 + static_cast<int>(rng() % 4);
    g.min_member = g.pods >= 3 && rng() % 4 == 0 ? g.pods - 1 : g.pods;
    g.roles = g.pods >= 2 && rng() % 2 == 0;
    g.cpu_milli = 250 * (1 + static_cast<int64_t>(rng() % 8)); // 250m .. 2
    g.memory_bytes = int64_t(256) << 20 << (rng() % 4);        // 256Mi .. 2Gi
    g.duration_ms = 5 + static_cast<int>(rng() % static_cast<uint64_t>(max_duration_ms));
    g.oversized = count >= 100 && rng() % 100 == 0;
    if (g.cpu_milli > cluster.cpu_milli)
      g.cpu_milli = cluster.cpu_milli;
    out.push_back(std::move(g));
  }
  return out;
}

bool feasible(const gang_spec& g, const cluster_shape& cluster) {
  return scheduler::fits(g.min_resources(), cluster.total());
}

std::string pods_path() {
  return "/api/v1/namespaces/" + std::string(workload_namespace) + "/pods";
}

std::string podgroups_path() {
  return "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + std::string(workload_namespace) +
         "/podgroups";
}

// ------------------------------------------------------------------------------------------------
// Reading the state back

namespace {

result<api::object_list> list_of(api::http_client& client, const std::string& path,
                                 api::resource_kind kind) {
  api::client_request req;
  req.target = path;
  req.accept = "application/json";
  auto res = client.send(req);
  if (!res)
    return res.error();
  if (res->status != 200)
    return status{errc::unavailable,
                  "GET " + path + " answered " + std::to_string(res->status) + ": " + res->body};
  api::parse_limits limits;
  limits.max_bytes = std::size_t{256} << 20; // A list of every pod, not a request body.
  auto json = api::parse_json(res->body, limits);
  if (!json)
    return status{errc::internal, "GET " + path + ": " + json.error().message};
  auto list = api::decode_list(*json, kind);
  if (!list)
    return status{errc::internal, "GET " + path + " does not decode: " + list.error().message};
  return std::move(*list);
}

std::string key_of(const scheduler::object_meta& m) {
  return m.namespace_name.empty() ? m.name.str() : m.namespace_name + "/" + m.name;
}

} // namespace

result<api_state> read_state(api::http_client& client) {
  api_state s;
  auto pods = list_of(client, pods_path(), api::resource_kind::pod);
  if (!pods)
    return pods.error();
  for (auto& o : pods->items) {
    const auto& p = std::get<api::pod_object>(o).pod;
    seen_pod v{p.group.str(), p.role.str(), p.node_name.str(),
               p.phase,       p.requests,   p.meta.uid.str()};
    if (!s.pods.emplace(key_of(p.meta), std::move(v)).second)
      return status{errc::internal, "I1: the pod list names pod " + key_of(p.meta) + " twice"};
  }
  auto groups = list_of(client, podgroups_path(), api::resource_kind::pod_group);
  if (!groups)
    return groups.error();
  for (auto& o : groups->items) {
    const auto& g = std::get<api::pod_group_object>(o);
    seen_group v{g.group.min_member, g.group.min_task_member, g.group.min_resources, g.status.phase,
                 g.group.meta.uid.str()};
    if (!s.groups.emplace(key_of(g.group.meta), std::move(v)).second)
      return status{errc::internal, "the PodGroup list names " + key_of(g.group.meta) + " twice"};
  }
  auto nodes = list_of(client, "/api/v1/nodes", api::resource_kind::node);
  if (!nodes)
    return nodes.error();
  for (auto& o : nodes->items) {
    const auto& n = std::get<api::node_object>(o).node;
    s.nodes[n.meta.name.str()] = n.allocatable;
  }
  return s;
}

namespace {

int phase_rank(scheduler::pod_phase p) {
  switch (p) {
    case scheduler::pod_phase::pending:
    case scheduler::pod_phase::unknown:
      return 0;
    case scheduler::pod_phase::running:
      return 1;
    case scheduler::pod_phase::succeeded:
    case scheduler::pod_phase::failed:
      return 2;
  }
  return 0;
}

} // namespace

std::vector<std::string> check_state(const api_state& state, observation_history& history) {
  std::vector<std::string> v;

  // I1 across observations: once seen bound, bound to the same node forever.
  for (const auto& [key, node] : history.node_of) {
    auto p = state.pods.find(key);
    if (p == state.pods.end())
      v.push_back("I1/I5: pod " + key + " was seen bound to " + node + " and is gone");
    else if (p->second.node != node)
      v.push_back("I1: pod " + key + " was seen bound to " + node + " and now shows node '" +
                  p->second.node + "'");
  }
  for (const auto& [key, phase] : history.phase_of) {
    auto p = state.pods.find(key);
    if (p != state.pods.end() && phase_rank(p->second.phase) < phase_rank(phase))
      v.push_back("I5: pod " + key + " was seen " + std::string(scheduler::to_string(phase)) +
                  " and is " + std::string(scheduler::to_string(p->second.phase)) + " now");
  }

  // I2: non-terminal bound pods' requests fit each node's allocatable.
  std::map<std::string, scheduler::resources> used;
  for (const auto& [key, p] : state.pods)
    if (!p.node.empty() && !scheduler::is_terminal(p.phase))
      used[p.node] += p.requests;
  for (const auto& [node, sum] : used) {
    auto n = state.nodes.find(node);
    if (n == state.nodes.end()) {
      v.push_back("I2: pods are bound to node " + node + ", which the node list lacks");
      continue;
    }
    if (!scheduler::fits(sum, n->second))
      v.push_back("I2: node " + node + " is over capacity: its running pods request " +
                  sum.to_string() + " > allocatable " + n->second.to_string());
  }

  // I3: 0 or >= minMember bound per gang, each role its minimum.
  std::map<std::string, std::pair<int32_t, std::map<std::string, int32_t>>> bound;
  for (const auto& [key, p] : state.pods) {
    if (p.group.empty() || p.node.empty())
      continue;
    auto gkey = key.substr(0, key.find('/')) + "/" + p.group;
    auto& b = bound[gkey];
    ++b.first;
    ++b.second[p.role];
  }
  for (const auto& [gkey, b] : bound) {
    auto g = state.groups.find(gkey);
    if (g == state.groups.end()) {
      v.push_back("I3: pods of PodGroup " + gkey + " are bound, but the PodGroup is not listed");
      continue;
    }
    if (b.first < g->second.min_member)
      v.push_back("I3: gang " + gkey + " has " + std::to_string(b.first) +
                  " pods bound, fewer than minMember " + std::to_string(g->second.min_member));
    for (const auto& rm : g->second.min_task_member) {
      auto r = b.second.find(rm.role);
      int32_t have = r == b.second.end() ? 0 : r->second;
      if (have < rm.min)
        v.push_back("I3: gang " + gkey + " role " + rm.role + " has " + std::to_string(have) +
                    " pods bound, fewer than minTaskMember " + std::to_string(rm.min));
    }
  }

  // Remember what was seen.
  for (const auto& [key, p] : state.pods) {
    if (!p.node.empty())
      history.node_of.emplace(key, p.node);
    auto& ph = history.phase_of[key];
    if (phase_rank(p.phase) > phase_rank(ph))
      ph = p.phase;
  }
  for (const auto& [key, g] : state.groups)
    if (g.phase == scheduler::pod_group_phase::running ||
        g.phase == scheduler::pod_group_phase::completed)
      history.groups_ran.insert(key);
  return v;
}

std::string join(const std::vector<std::string>& lines, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
    out += "\n  " + lines[i];
  if (lines.size() > limit)
    out += "\n  ... and " + std::to_string(lines.size() - limit) + " more";
  return out;
}

} // namespace phalanx::crash_tests
