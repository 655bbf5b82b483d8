#include "tests/crash/crash_support.hpp"

#include "api/codec.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

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
                     name + R"(","namespace":")" + std::string(workload_namespace) + R"(")" +
                     (reserve_missing_members
                          ? R"(,"annotations":{"scheduling.phalanx.io/reserve-missing-members":"true"})"
                          : "") +
                     R"(},"spec":{"minMember":)" + std::to_string(min_member);
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

namespace {

result<api_state> fill_state(api_state s, api::object_list pods, api::object_list groups,
                             api::object_list nodes, api::object_list jobs) {
  s.resource_version = std::max({s.resource_version, pods.resource_version,
                                 groups.resource_version, nodes.resource_version,
                                 jobs.resource_version});
  for (auto& o : pods.items) {
    const auto& p = std::get<api::pod_object>(o).pod;
    seen_pod v{p.group.str(), p.role.str(), p.node_name.str(),
               p.phase,       p.requests,   p.meta.uid.str()};
    if (!s.pods.emplace(key_of(p.meta), std::move(v)).second)
      return status{errc::internal, "I1: the pod list names pod " + key_of(p.meta) + " twice"};
  }
  for (auto& o : groups.items) {
    const auto& g = std::get<api::pod_group_object>(o);
    seen_group v{g.group.min_member, g.group.min_task_member, g.group.min_resources, g.status.phase,
                 g.group.meta.uid.str()};
    if (!s.groups.emplace(key_of(g.group.meta), std::move(v)).second)
      return status{errc::internal, "the PodGroup list names " + key_of(g.group.meta) + " twice"};
  }
  for (auto& o : nodes.items) {
    const auto& n = std::get<api::node_object>(o).node;
    s.nodes[n.meta.name.str()] = n.allocatable;
  }
  for (auto& o : jobs.items) {
    const auto& j = std::get<api::job_object>(o).job;
    if (!s.jobs.emplace(key_of(j.meta), j.meta.uid.str()).second)
      return status{errc::internal, "the job list names " + key_of(j.meta) + " twice"};
  }
  return s;
}

} // namespace

result<api_state> state_of(api::object_list pods, api::object_list groups, api::object_list nodes,
                           api::object_list jobs) {
  return fill_state(api_state{}, std::move(pods), std::move(groups), std::move(nodes),
                    std::move(jobs));
}

result<api_state> read_state(api::http_client& client) {
  // Jobs before pods: a job listed was created before the pods were listed, so its pods are in
  // that list (unless it is being deleted, which the checks know). Pods before PodGroups: a pod
  // listed bound had its PodGroup then, so the PodGroup is in the later list (unless deleted).
  auto jobs = list_of(client, jobs_path(), api::resource_kind::job);
  if (!jobs)
    return jobs.error();
  auto pods = list_of(client, pods_path(), api::resource_kind::pod);
  if (!pods)
    return pods.error();
  auto groups = list_of(client, podgroups_path(), api::resource_kind::pod_group);
  if (!groups)
    return groups.error();
  auto nodes = list_of(client, "/api/v1/nodes", api::resource_kind::node);
  if (!nodes)
    return nodes.error();
  return state_of(std::move(*pods), std::move(*groups), std::move(*nodes), std::move(*jobs));
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

  // I1 across observations: once seen bound, bound to the same node for as long as it exists.
  std::map<std::string, const seen_pod*> by_uid;
  for (const auto& [key, p] : state.pods)
    by_uid[p.uid] = &p;
  for (auto it = history.pods.begin(); it != history.pods.end();) {
    const auto& [uid, seen] = *it;
    auto p = by_uid.find(uid);
    if (p == by_uid.end()) {
      // Gone: deleted (its name now holds another pod, or its deletion was asked for), or lost.
      auto now = state.pods.find(seen.key);
      bool replaced = now != state.pods.end() && now->second.uid != uid;
      bool deleted = replaced || (history.may_be_deleted && history.may_be_deleted(seen.key)) ||
                     (history.deletions_of && history.deletions_of(seen.key) > seen.deletions);
      if (!deleted && !seen.node.empty())
        v.push_back("I1/I5: pod " + seen.key + " (uid " + uid + ") was seen bound to " +
                    seen.node + " and is gone");
      it = deleted ? history.pods.erase(it) : std::next(it);
      continue;
    }
    ++it;
    if (!seen.node.empty() && p->second->node != seen.node)
      v.push_back("I1: pod " + seen.key + " was seen bound to " + seen.node +
                  " and now shows node '" + p->second->node + "'");
    if (phase_rank(p->second->phase) < phase_rank(seen.phase))
      v.push_back("I5: pod " + seen.key + " was seen " +
                  std::string(scheduler::to_string(seen.phase)) + " and is " +
                  std::string(scheduler::to_string(p->second->phase)) + " now");
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
    // A gang whose PodGroup or members a user deleted (or is deleting) may be left with fewer.
    if (history.may_be_deleted && history.may_be_deleted(gkey))
      continue;
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
    auto [at, first] = history.pods.try_emplace(p.uid);
    auto& seen = at->second;
    if (first && (history.deletions_before_read || history.deletions_of))
      seen.deletions = history.deletions_before_read ? history.deletions_before_read(key)
                                                     : history.deletions_of(key);
    seen.key = key;
    if (!p.node.empty() && seen.node.empty())
      seen.node = p.node;
    if (phase_rank(p.phase) > phase_rank(seen.phase))
      seen.phase = p.phase;
  }
  for (const auto& [key, g] : state.groups)
    if (g.phase == scheduler::pod_group_phase::running ||
        g.phase == scheduler::pod_group_phase::completed)
      history.groups_ran.insert(key);
  return v;
}

api::object decode_body(const std::string& body) {
  auto json = api::parse_json(body);
  if (!json)
    std::abort();
  api::decode_options o;
  o.read_status = false;
  auto obj = api::decode_object(*json, o);
  if (!obj) {
    std::fprintf(stderr, "workload body does not decode: %s\n%s\n", obj.error().message.c_str(),
                 body.c_str());
    std::abort();
  }
  return std::move(*obj);
}

std::shared_ptr<storage::store>
open_store(const std::string& path, const std::shared_ptr<storage::power_loss_simulator>& sim,
           std::string& error) {
  storage::store_options so;
  so.path = path;
  so.fault_injection = sim;
  so.load_threads = 1;
  auto opened = storage::store::open(so);
  if (!opened) {
    error = opened.error().to_string();
    return nullptr;
  }
  return std::shared_ptr<storage::store>(std::move(*opened));
}

actors::runtime_config deterministic_config(uint64_t seed) {
  actors::runtime_config c;
  c.deterministic = true;
  c.seed = seed;
  return c;
}

std::string join(const std::vector<std::string>& lines, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < limit; ++i)
    out += "\n  " + lines[i];
  if (lines.size() > limit)
    out += "\n  ... and " + std::to_string(lines.size() - limit) + " more";
  return out;
}

std::vector<std::string> run_seeds_on_two_threads(uint64_t first_seed, int seeds,
                                                  std::size_t max_failures,
                                                  const std::function<std::string(uint64_t)>& one) {
  std::atomic<int> next{0};
  std::mutex mutex;
  std::vector<std::string> errors;
  auto work = [&] {
    for (int i = next++; i < seeds; i = next++) {
      auto error = one(first_seed + static_cast<uint64_t>(i));
      if (error.empty())
        continue;
      std::lock_guard lock(mutex);
      errors.push_back(std::move(error));
      if (errors.size() >= max_failures)
        next = seeds;
    }
  };
  std::thread second(work);
  work();
  second.join();
  return errors;
}

// ------------------------------------------------------------------------------------------------
// Churn

std::string jobs_path() {
  return "/apis/batch.volcano.sh/v1alpha1/namespaces/" + std::string(workload_namespace) +
         "/jobs";
}

std::string churn_job::body() const {
  auto task = [&](const char* name, int replicas) {
    return R"({"name":")" + std::string(name) + R"(","replicas":)" + std::to_string(replicas) +
           R"(,"template":{"metadata":{"annotations":{"sim.phalanx.io/duration":")" +
           std::to_string(duration_ms) +
           R"(ms"}},"spec":{"containers":[{"name":"main","image":"sim","resources":{"requests":)"
           R"({"cpu":")" +
           cpu_text(cpu_milli) + R"(","memory":"256Mi"}}}]}}})";
  };
  std::string tasks = task("worker", workers);
  if (ps > 0)
    tasks = task("ps", ps) + "," + tasks;
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"(","namespace":")" + std::string(workload_namespace) +
         R"("},"spec":{"schedulerName":"phalanx","minAvailable":)" +
         std::to_string(workers + ps) + R"(,"tasks":[)" + tasks + "]}}";
}

std::vector<std::string> churn_job::pod_names() const {
  std::vector<std::string> out;
  for (int i = 0; i < ps; ++i)
    out.push_back(name + "-ps-" + std::to_string(i));
  for (int i = 0; i < workers; ++i)
    out.push_back(name + "-worker-" + std::to_string(i));
  return out;
}

churn_job make_churn_job(std::mt19937_64& rng, std::string name, const cluster_shape& cluster,
                         int max_duration_ms) {
  churn_job j;
  j.name = std::move(name);
  j.workers = 1 + static_cast<int>(rng() % 8);
  j.ps = rng() % 3 == 0 ? 1 : 0;
  j.cpu_milli = 250 * (1 + static_cast<int64_t>(rng() % 4));
  j.duration_ms = 5 + static_cast<int>(rng() % static_cast<uint64_t>(max_duration_ms));
  // About one in ten cannot ever be placed: a pod bigger than any node.
  j.too_big = rng() % 10 == 0;
  if (j.too_big)
    j.cpu_milli = cluster.cpu_milli + 1000;
  return j;
}

gang_spec make_churn_gang(std::mt19937_64& rng, std::string name, const cluster_shape& cluster,
                          int max_duration_ms) {
  gang_spec g;
  g.name = std::move(name);
  g.pods = 1 + static_cast<int>(rng() % 16);
  g.min_member = g.pods >= 3 && rng() % 4 == 0 ? g.pods - 1 : g.pods;
  g.roles = g.pods >= 2 && rng() % 2 == 0;
  g.cpu_milli = 250 * (1 + static_cast<int64_t>(rng() % 4));
  g.memory_bytes = int64_t(256) << 20 << (rng() % 2);
  g.duration_ms = 5 + static_cast<int>(rng() % static_cast<uint64_t>(max_duration_ms));
  // About one in ten cannot ever be placed: a pod bigger than any node.
  if (rng() % 10 == 0)
    g.cpu_milli = cluster.cpu_milli + 1000;
  return g;
}

namespace {

void note(std::string& history, const std::string& what) {
  history += " " + what;
  if (history.size() > 400)
    history.erase(0, history.size() - 400);
}

} // namespace

bool churn_book::may_be_made_again(const std::string& key) const {
  // A pod of a job that is (or may be) there, gone, may be made again by the job's controller
  // under its name with a new uid (a sync), unless the job has ended.
  auto j = job_of_pod_.find(key);
  if (j == job_of_pod_.end())
    return false;
  auto job = entries_.find(j->second);
  return job != entries_.end() && job->second.state != expect::absent &&
         std::find(job->second.pods.begin(), job->second.pods.end(), key) !=
             job->second.pods.end();
}

void churn_book::sent(const std::string& key) {
  std::lock_guard lock(mutex_);
  entries_[key].state = expect::unknown;
  note(entries_[key].history, "sent@" + std::to_string(generation_));
  ++entries_[key].operations;
  ++counts_.sent;
}

uint64_t churn_book::operations_on(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto i = entries_.find(key);
  return i == entries_.end() ? 0 : i->second.operations;
}

void churn_book::job_sent(const churn_job& job) {
  std::lock_guard lock(mutex_);
  auto key = std::string(workload_namespace) + "/" + job.name;
  entries_[key].state = expect::unknown;
  entries_[key].job = true;
  ++entries_[key].operations;
  note(entries_[key].history, "job-sent@" + std::to_string(generation_));
  for (const auto& name : job.pod_names())
    job_of_pod_[std::string(workload_namespace) + "/" + name] = key;
  for (auto& [pod_key, job_key] : job_of_pod_)
    if (job_key == key) {
      entries_[pod_key].state = expect::unknown;
      ++entries_[pod_key].operations;
      note(entries_[pod_key].history, "its-job-sent");
    }
  ++counts_.sent;
}

void churn_book::acknowledge(uint64_t version, uint64_t generation) {
  if (generation == generation_ && version <= max_version_before_generation_)
    version_violations_.push_back(
        "resourceVersion " + std::to_string(version) + " acknowledged by daemon #" +
        std::to_string(generation) + " is not above " +
        std::to_string(max_version_before_generation_) + ", acknowledged by an earlier daemon");
  max_version_ = std::max(max_version_, version);
}

void churn_book::created(const std::string& key, const std::string& uid, uint64_t version,
                         uint64_t generation) {
  std::lock_guard lock(mutex_);
  auto& e = entries_[key];
  counts_.reused_names += e.ever_created ? 1 : 0;
  e.state = expect::present;
  e.uid = uid;
  e.ever_created = true;
  note(e.history, "created@" + std::to_string(generation));
  ++counts_.creates;
  acknowledge(version, generation);
}

void churn_book::deleted(const std::string& key, uint64_t version, uint64_t generation) {
  std::lock_guard lock(mutex_);
  auto& e = entries_[key];
  e.state = expect::absent;
  e.uid.clear();
  note(e.history, "deleted@" + std::to_string(generation));
  if (may_be_made_again(key)) {
    e.state = expect::unknown;
    entries_[job_of_pod_.at(key)].lost_members = true;
    note(e.history, "may-be-made-again");
  }
  ++counts_.deletes;
  acknowledge(version, generation);
}

void churn_book::job_created(const churn_job& job, const std::string& uid, uint64_t version,
                             uint64_t generation) {
  std::lock_guard lock(mutex_);
  auto key = std::string(workload_namespace) + "/" + job.name;
  auto& e = entries_[key];
  counts_.reused_names += e.ever_created ? 1 : 0;
  e.state = expect::present;
  e.uid = uid;
  e.job = true;
  e.lost_members = false;
  e.ever_created = true;
  note(e.history, "job-created@" + std::to_string(generation));
  e.pods.clear();
  for (const auto& name : job.pod_names()) {
    auto pod_key = std::string(workload_namespace) + "/" + name;
    e.pods.push_back(pod_key);
    job_of_pod_[pod_key] = key;
    auto& p = entries_[pod_key];
    p.state = expect::present;
    p.uid.clear(); // Made by the job: checked by name.
    note(p.history, "job-created@" + std::to_string(generation));
  }
  ++counts_.creates;
  acknowledge(version, generation);
}

void churn_book::job_deleted(const churn_job& job, uint64_t version, uint64_t generation) {
  std::lock_guard lock(mutex_);
  auto key = std::string(workload_namespace) + "/" + job.name;
  auto& e = entries_[key];
  e.state = expect::absent;
  e.uid.clear();
  note(e.history, "job-deleted@" + std::to_string(generation));
  // Every pod a job of this name ever made is gone with it.
  for (auto& [pod_key, job_key] : job_of_pod_)
    if (job_key == key) {
      entries_[pod_key].state = expect::absent;
      note(entries_[pod_key].history, "job-deleted@" + std::to_string(generation));
    }
  ++counts_.deletes;
  acknowledge(version, generation);
}

void churn_book::settled(const std::string& key, expect now, const std::string& uid) {
  std::lock_guard lock(mutex_);
  auto& e = entries_[key];
  e.state = now == expect::absent && may_be_made_again(key) ? expect::unknown : now;
  note(e.history, std::string("read-") + (now == expect::present ? "present" : "absent"));
  if (!uid.empty())
    e.uid = uid;
}

void churn_book::job_settled(const churn_job& job, expect now, const std::string& uid) {
  std::lock_guard lock(mutex_);
  auto key = std::string(workload_namespace) + "/" + job.name;
  auto& e = entries_[key];
  // Read back with the uid of the incarnation acknowledged last: the calls since (a delete, and
  // a create of `job`, another shape, planned with it) did not take. Its pods are the ones this
  // book recorded for it, not `job`'s: they may be there (unknown, as after any call whose answer
  // was lost); pods of earlier incarnations are gone.
  const bool known_incarnation = now == expect::present && !uid.empty() && uid == e.uid;
  e.state = now;
  e.uid = uid;
  e.job = true;
  for (auto& [pod_key, job_key] : job_of_pod_)
    if (job_key == key) {
      bool its = known_incarnation &&
                 std::find(e.pods.begin(), e.pods.end(), pod_key) != e.pods.end();
      entries_[pod_key].state = its ? expect::unknown : expect::absent;
      note(entries_[pod_key].history, its ? "job-read-same" : "job-read");
    }
  if (now != expect::present || known_incarnation)
    return;
  e.lost_members = false;
  e.pods.clear();
  for (const auto& name : job.pod_names()) {
    auto pod_key = std::string(workload_namespace) + "/" + name;
    e.pods.push_back(pod_key);
    job_of_pod_[pod_key] = key;
    entries_[pod_key].state = expect::unknown; // Read back next.
  }
}

churn_book::expect churn_book::expected(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto i = entries_.find(key);
  return i == entries_.end() ? expect::absent : i->second.state;
}

bool churn_book::may_be_deleted(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto i = entries_.find(key);
  if (i == entries_.end()) {
    // A job's PodGroup, "<job>-<uid>": deleted with its job, short of members deleted alone.
    for (const auto& [job_key, e] : entries_) {
      if (!e.job || !key.starts_with(job_key + "-"))
        continue;
      if (e.state != expect::present || key != job_key + "-" + e.uid || e.lost_members)
        return true;
      for (const auto& pod_key : e.pods)
        if (auto p = entries_.find(pod_key); p == entries_.end() || p->second.state != expect::present)
          return true;
      return false;
    }
    return false;
  }
  if (i->second.state != expect::present)
    return true;
  // A job's pod goes with its job: a pod seen under this name may be an earlier job's.
  if (auto j = job_of_pod_.find(key); j != job_of_pod_.end()) {
    auto job = entries_.find(j->second);
    return job != entries_.end() && job->second.state != expect::present;
  }
  return false;
}

void churn_book::new_generation(uint64_t generation) {
  std::lock_guard lock(mutex_);
  generation_ = generation;
  max_version_before_generation_ = max_version_;
}

std::shared_ptr<const churn_book::snapshot_t> churn_book::snapshot() const {
  std::lock_guard lock(mutex_);
  auto out = std::make_shared<snapshot_t>();
  out->entries = entries_;
  out->job_of_pod = job_of_pod_;
  out->max_version = max_version_;
  out->version_violations = version_violations_;
  return out;
}

uint64_t churn_book::operations_on(const snapshot_t& before, const std::string& key) {
  auto i = before.entries.find(key);
  return i == before.entries.end() ? 0 : i->second.operations;
}

churn_book::counts churn_book::totals() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

std::vector<std::string> churn_book::check(const api_state& s, const snapshot_t& before,
                                           bool after_restart) const {
  std::vector<std::string> v = before.version_violations;
  // What was acknowledged before `s` was read must be in it. What changed after the snapshot
  // (sent, or acknowledged since) is compared with what the book holds now too: the state may
  // show either.
  auto now = snapshot();
  auto present = [&](const std::string& key, const entry& e, std::string* uid) {
    if (auto p = s.pods.find(key); p != s.pods.end()) {
      *uid = p->second.uid;
      return true;
    }
    if (auto g = s.groups.find(key); g != s.groups.end() && !e.job) {
      *uid = g->second.uid;
      return true;
    }
    if (auto j = s.jobs.find(key); j != s.jobs.end()) {
      *uid = j->second;
      return true;
    }
    return false;
  };
  for (const auto& [key, was] : before.entries) {
    auto later = now->entries.find(key);
    if (later == now->entries.end() || later->second.state != was.state ||
        later->second.uid != was.uid || later->second.operations != was.operations)
      continue; // Changed while the state was read (created and deleted again, maybe).
    if (was.state == expect::unknown)
      continue;
    // A name is a pod, a PodGroup or a job: a gang's PodGroup and a job share no names here.
    std::string uid;
    bool here = false;
    if (was.job) {
      if (auto j = s.jobs.find(key); j != s.jobs.end()) {
        here = true;
        uid = j->second;
      }
    } else if (auto j = before.job_of_pod.find(key); j != before.job_of_pod.end()) {
      if (auto p = s.pods.find(key); p != s.pods.end()) {
        here = true;
        uid = p->second.uid;
      }
    } else {
      here = present(key, was, &uid);
    }
    if (was.state == expect::present && !here)
      v.push_back("I5: " + key + " was acknowledged created and is missing;" + was.history);
    else if (was.state == expect::present && !was.uid.empty() && uid != was.uid)
      v.push_back("I5: " + key + " was acknowledged with uid " + was.uid +
                  " and is served with uid " + uid);
    else if (was.state == expect::absent && here)
      v.push_back("I5: " + key + " was acknowledged deleted (or never created) and is present;" +
                  was.history);
  }
  // A job served is whole: every pod of its expansion is there, unless deleted on its own.
  for (const auto& [key, uid] : s.jobs) {
    auto e = now->entries.find(key);
    if (e == now->entries.end() || e->second.uid != uid)
      continue; // Not the incarnation the book knows the pods of (in flight).
    std::size_t missing = 0;
    std::string first;
    for (const auto& pod_key : e->second.pods) {
      auto p = now->entries.find(pod_key);
      bool deleted_alone = p != now->entries.end() && p->second.state != expect::present;
      if (!deleted_alone && !s.pods.count(pod_key) && missing++ == 0)
        first = pod_key;
    }
    if (missing != 0)
      v.push_back("I5: job " + key + " is served with " +
                  std::to_string(e->second.pods.size() - missing) + " of its " +
                  std::to_string(e->second.pods.size()) + " pods (" + first + " missing)");
  }
  if (after_restart && s.resource_version < before.max_version)
    v.push_back("resourceVersion went back: the lists after the restart carry " +
                std::to_string(s.resource_version) + ", below " +
                std::to_string(before.max_version) + ", acknowledged before it");
  return v;
}

// ------------------------------------------------------------------------------------------------
// The churn's plans

namespace {

std::string ns_key(const std::string& name) {
  return std::string(workload_namespace) + "/" + name;
}
uint64_t version_of(const api::object& o) { return api::meta_of(o).resource_version; }
std::string uid_of(const api::object& o) { return api::meta_of(o).uid.str(); }

} // namespace

churn_planner::churn_planner(uint64_t seed, churn_book& book, std::vector<std::string> job_names,
                             std::vector<std::string> gang_names, cluster_shape cluster,
                             int max_duration_ms)
    : rng_(seed * 0x2545F4914F6CDD1Dull + 11), book_(book), cluster_(std::move(cluster)),
      max_duration_ms_(max_duration_ms) {
  for (auto& n : job_names)
    names_.push_back({std::move(n), true, std::nullopt, std::nullopt});
  for (auto& n : gang_names)
    names_.push_back({std::move(n), false, std::nullopt, std::nullopt});
}

void churn_planner::failed(const std::string& what, const status& s) {
  if (s.code() == errc::io_error || s.code() == errc::unavailable) {
    ++unknown_;
    return;
  }
  errors_.push_back(what + ": " + s.to_string());
}

std::vector<std::string> churn_planner::keys_of(const name_state& n) const {
  std::vector<std::string> out{ns_key(n.name)};
  if (n.is_job && n.job)
    for (const auto& pod : n.job->pod_names())
      out.push_back(ns_key(pod));
  if (!n.is_job && n.gang)
    for (int i = 0; i < n.gang->pods; ++i)
      out.push_back(ns_key(n.gang->pod_name(i)));
  return out;
}

std::vector<churn_call> churn_planner::plan(std::size_t i) {
  auto& n = names_[i];
  std::vector<churn_call> out;
  bool unsure = false;
  for (const auto& key : keys_of(n))
    unsure |= book_.expected(key) == churn_book::expect::unknown;
  if (unsure) {
    read_back(n, out);
    return out;
  }
  const bool racing = rng_() % 3 == 0; // Delete right after the create: its pods are binding.
  const bool present = book_.expected(ns_key(n.name)) == churn_book::expect::present;
  if (n.is_job) {
    if (!present) {
      n.job = make_churn_job(rng_, n.name, cluster_, max_duration_ms_);
      out.push_back(create_job(*n.job));
      if (racing)
        out.push_back(delete_job(*n.job));
      return out;
    }
    std::vector<std::string> alive;
    for (const auto& pod : n.job->pod_names())
      if (book_.expected(ns_key(pod)) == churn_book::expect::present)
        alive.push_back(pod);
    if (rng_() % 4 == 0 && alive.size() > 1) {
      // A pod of the job deleted on its own: its key holds a tombstone from then on.
      out.push_back(delete_pod(alive[rng_() % alive.size()]));
      return out;
    }
    out.push_back(delete_job(*n.job));
    if (racing) {
      n.job = make_churn_job(rng_, n.name, cluster_, max_duration_ms_);
      out.push_back(create_job(*n.job));
    }
    return out;
  }
  if (!present && n.gang) {
    // Pods left of an earlier gang of this name (its deletion cut short by a crash) go first: a
    // new PodGroup would adopt them, bound already, and start short of its minMember by the
    // workload's hand, not the scheduler's.
    for (int k = 0; k < n.gang->pods; ++k)
      if (book_.expected(ns_key(n.gang->pod_name(k))) == churn_book::expect::present)
        out.push_back(delete_pod(n.gang->pod_name(k)));
    if (!out.empty())
      return out;
  }
  if (!present) {
    // Pods first, then the PodGroup (crash_support.hpp says why).
    n.gang = make_churn_gang(rng_, n.name, cluster_, max_duration_ms_);
    const auto& g = *n.gang;
    for (int k = 0; k < g.pods; ++k)
      out.push_back({churn_call::verb::create, api::resource_kind::pod, g.pod_name(k),
                     g.pod_body(k), std::nullopt, created_by(g.pod_name(k))});
    out.push_back({churn_call::verb::create, api::resource_kind::pod_group, g.name,
                   g.podgroup_body(), std::nullopt, created_by(g.name)});
    if (!racing)
      return out;
  }
  // The PodGroup first, then its pods: a gang never shows fewer than minMember bound while its
  // PodGroup exists.
  out.push_back({churn_call::verb::remove, api::resource_kind::pod_group, n.gang->name, "",
                 std::nullopt, deleted_by(n.gang->name)});
  for (int k = 0; k < n.gang->pods; ++k)
    if (!present || book_.expected(ns_key(n.gang->pod_name(k))) == churn_book::expect::present)
      out.push_back(delete_pod(n.gang->pod_name(k)));
  return out;
}

void churn_planner::read_back(const name_state& n, std::vector<churn_call>& out) {
  if (n.is_job && n.job) {
    auto job = *n.job;
    out.push_back({churn_call::verb::get, api::resource_kind::job, n.name, "", std::nullopt,
                   [this, job](const result<api::object>& r) {
                     if (r.ok())
                       book_.job_settled(job, churn_book::expect::present, uid_of(*r));
                     else if (r.error().code() == errc::not_found)
                       book_.job_settled(job, churn_book::expect::absent, "");
                   }});
  }
  auto keys = keys_of(n);
  for (std::size_t k = n.is_job ? 1 : 0; k < keys.size(); ++k) {
    auto name = keys[k].substr(keys[k].find('/') + 1);
    auto kind = !n.is_job && k == 0 ? api::resource_kind::pod_group : api::resource_kind::pod;
    out.push_back({churn_call::verb::get, kind, name, "", std::nullopt,
                   [this, key = keys[k]](const result<api::object>& r) {
                     if (r.ok())
                       book_.settled(key, churn_book::expect::present, uid_of(*r));
                     else if (r.error().code() == errc::not_found)
                       book_.settled(key, churn_book::expect::absent);
                   }});
  }
}

churn_call churn_planner::create_job(const churn_job& job) {
  return {churn_call::verb::create, api::resource_kind::job, job.name, job.body(), job,
          [this, job](const result<api::object>& r) {
            if (r.ok())
              book_.job_created(job, uid_of(*r), version_of(*r), generation_);
            else
              failed("create job " + job.name, r.error());
          }};
}

churn_call churn_planner::delete_job(const churn_job& job) {
  return {churn_call::verb::remove, api::resource_kind::job, job.name, "", job,
          [this, job](const result<api::object>& r) {
            if (r.ok())
              book_.job_deleted(job, version_of(*r), generation_);
            else
              failed("delete job " + job.name, r.error());
          }};
}

churn_call churn_planner::delete_pod(const std::string& pod) {
  return {churn_call::verb::remove, api::resource_kind::pod, pod, "", std::nullopt,
          deleted_by(pod)};
}

std::function<void(const result<api::object>&)> churn_planner::created_by(std::string name) {
  return [this, name](const result<api::object>& r) {
    if (r.ok())
      book_.created(ns_key(name), uid_of(*r), version_of(*r), generation_);
    else
      failed("create " + name, r.error());
  };
}

std::function<void(const result<api::object>&)> churn_planner::deleted_by(std::string name) {
  return [this, name](const result<api::object>& r) {
    if (r.ok())
      book_.deleted(ns_key(name), version_of(*r), generation_);
    else
      failed("delete " + name, r.error());
  };
}

void churn_planner::sending(const churn_call& c) {
  if (c.what == churn_call::verb::get)
    return;
  if (c.job)
    book_.job_sent(*c.job);
  else
    book_.sent(ns_key(c.name));
}

} // namespace phalanx::crash_tests
