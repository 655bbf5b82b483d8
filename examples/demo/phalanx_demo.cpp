// phalanx-demo: what `make demo` runs. It starts the real phalanxd in standalone mode, on a fresh
// temporary data directory and a simulated cluster, talks to it over its HTTP API as any client
// would, and shows:
//   1. six Spark word-count jobs submitted at once on 6 CPUs, as gangs: all complete, two at a
//      time (each driver and its two executors: PodGroup minMember 3, minResources 3 CPU, as
//      Spark's Volcano feature step writes it);
//   2. the same six with gang scheduling off, pod by pod like the default scheduler: six drivers
//      fill the six CPUs, twelve executors wait forever, and phalanxd reports the deadlock;
//   3. the examples' TensorFlow job (1 ps + 2 workers, minAvailable 3) and MPI job (1 master +
//      3 workers, minAvailable 4), the manifests as Volcano takes them, to completion.
// It prints a table per run and exits 0 only if the gang runs finished and the pod-by-pod run
// deadlocked as it should.
//
//   phalanx-demo [--phalanxd PATH] [--examples DIR] [--keep]

#include "api/client.hpp"
#include "api/codec.hpp"
#include "loadtest/phalanxd_process.hpp"

#include <boost/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

struct demo_options {
  std::string phalanxd = phalanx::loadtest::built_phalanxd_path();
  std::string examples = PHALANX_EXAMPLES_DIR;
  bool keep = false;  // Keep the data directories (their paths are printed).
};

// What the demo saw of one job.
struct job_row {
  std::string name;
  std::string phase;
  int min = 0;
  int running = 0;
  int succeeded = 0;
  std::optional<double> started_after;  // Seconds from submission to its gang Running.
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory for one run's phalanxd; removed unless --keep.
class scratch {
 public:
  explicit scratch(bool keep) : keep_(keep) {
    std::string tmpl = (fs::temp_directory_path() / "phalanx-demo-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~scratch() {
    std::error_code ec;
    if (!keep_)
      fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
  bool keep_;
};

// One phalanxd and a client to it.
class daemon_session {
 public:
  daemon_session(const demo_options& o, const std::string& cluster_yaml,
                 const std::string& config_yaml)
    : dir_(o.keep) {
    phalanx::loadtest::phalanxd_options po;
    po.binary = o.phalanxd;
    po.data_dir = dir_.path() + "/data";
    po.cluster_file = dir_.write("cluster.yaml", cluster_yaml);
    po.config_file = dir_.write("config.yaml", config_yaml);
    po.extra_args = {"--log-level", "warn"};
    auto d = phalanx::loadtest::phalanxd_process::start(po);
    if (!d)
      throw std::runtime_error("phalanxd did not start: " + d.error().message());
    daemon_ = std::move(*d);
    client_ = std::make_unique<phalanx::api::http_client>(daemon_->client_options());
    if (o.keep)
      std::printf("  (data directory %s, log %s)\n", po.data_dir.c_str(),
                  daemon_->log_file().c_str());
  }

  ~daemon_session() {
    if (daemon_)
      daemon_->stop().error().permit_unchecked();
  }

  std::string url() const { return daemon_->url(); }

  void create(const std::string& path, const std::string& body,
              const std::string& content_type = "application/yaml") {
    phalanx::api::client_request r;
    r.method = "POST";
    r.target = path;
    r.content_type = content_type;
    r.body = body;
    auto res = client_->send(r);
    if (!res)
      throw std::runtime_error("POST " + path + ": " + res.error().message());
    if (res->status != 201)
      throw std::runtime_error("POST " + path + ": HTTP " + std::to_string(res->status) + ": " +
                               res->body);
  }

  json::value get(const std::string& path) {
    auto res = client_->send({"GET", path, "", "", "application/json", {}});
    if (!res || res->status != 200)
      throw std::runtime_error("GET " + path + ": " +
                               (res ? "HTTP " + std::to_string(res->status) + " " + res->body
                                    : res.error().message()));
    return json::parse(res->body);
  }

 private:
  scratch dir_;
  std::unique_ptr<phalanx::loadtest::phalanxd_process> daemon_;
  std::unique_ptr<phalanx::api::http_client> client_;
};

std::string str(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* cur = &v;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->as_object().contains(key))
      return {};
    cur = &cur->as_object().at(key);
  }
  return cur->is_string() ? std::string(cur->as_string()) : std::string();
}

int num(const json::value& v, std::initializer_list<const char*> path) {
  const json::value* cur = &v;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->as_object().contains(key))
      return 0;
    cur = &cur->as_object().at(key);
  }
  return cur->is_int64() ? static_cast<int>(cur->as_int64()) : 0;
}

// The condition of `type` on a PodGroup, or empty.
std::string condition_message(const json::value& group, const std::string& type) {
  const auto* status = group.as_object().if_contains("status");
  if (!status || !status->is_object() || !status->as_object().contains("conditions"))
    return {};
  for (const auto& c : status->as_object().at("conditions").as_array())
    if (str(c, {"type"}) == type)
      return str(c, {"message"});
  return {};
}

void print_table(const std::vector<job_row>& rows) {
  int width = 24;
  for (const auto& r : rows)
    width = std::max(width, static_cast<int>(r.name.size()));
  std::printf("  %-*s %-10s %4s %8s %10s %14s\n", width, "NAME", "PHASE", "MIN", "RUNNING",
              "SUCCEEDED", "TIME TO START");
  for (const auto& r : rows) {
    char start[32] = "never";
    if (r.started_after)
      std::snprintf(start, sizeof start, "%.1fs", *r.started_after);
    std::printf("  %-*s %-10s %4d %8d %10d %14s\n", width, r.name.c_str(), r.phase.c_str(), r.min,
                r.running, r.succeeded, start);
  }
}

// Follows a set of PodGroups until `done` says so or `limit` passes, printing a progress line
// whenever what runs changes. Records when each first ran, and the most running at once.
struct progress_watch {
  explicit progress_watch(daemon_session& session) : d(session) {}

  daemon_session& d;
  clock_type::time_point submitted = clock_type::now();
  std::map<std::string, job_row> rows;
  int most_running = 0;

  json::array groups() {
    auto list = d.get("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups");
    return list.as_object().at("items").as_array();
  }

  bool follow(const std::function<bool(const json::array&)>& done,
              std::chrono::seconds limit) {
    std::string last_line;
    auto deadline = clock_type::now() + limit;
    while (true) {
      auto items = groups();
      double t = std::chrono::duration<double>(clock_type::now() - submitted).count();
      std::vector<std::string> running;
      int completed = 0;
      int waiting = 0;
      for (const auto& g : items) {
        auto name = str(g, {"metadata", "name"});
        auto& row = rows[name];
        row.name = name;
        row.phase = str(g, {"status", "phase"});
        row.min = num(g, {"spec", "minMember"});
        row.running = num(g, {"status", "running"});
        row.succeeded = num(g, {"status", "succeeded"});
        if (row.phase == "Running") {
          running.push_back(name);
          if (!row.started_after)
            row.started_after = t;
        } else if (row.phase == "Completed") {
          ++completed;
          if (!row.started_after)
            row.started_after = t;  // Ran between two looks.
        } else {
          ++waiting;
        }
      }
      most_running = std::max(most_running, static_cast<int>(running.size()));
      std::string line = "running:";
      for (const auto& r : running)
        line += " " + r;
      if (running.empty())
        line += " none";
      line += "   completed: " + std::to_string(completed) + "/" +
              std::to_string(items.size()) + "   waiting: " + std::to_string(waiting);
      if (line != last_line) {
        std::printf("  %5.1fs  %s\n", t, line.c_str());
        std::fflush(stdout);
        last_line = line;
      }
      if (done(items))
        return true;
      if (clock_type::now() > deadline)
        return false;
      std::this_thread::sleep_for(100ms);
    }
  }

  std::vector<job_row> table() const {
    std::vector<job_row> out;
    for (const auto& [name, row] : rows)
      out.push_back(row);
    return out;
  }
};

bool all_in_phase(const json::array& items, const std::string& phase) {
  return !items.empty() && std::all_of(items.begin(), items.end(), [&](const json::value& g) {
    return str(g, {"status", "phase"}) == phase;
  });
}

// Six CPUs: three 2-CPU nodes.
const char* six_cpu_cluster = R"(nodes:
  - name: cpu
    count: 3
    cpu: "2"
    memory: 8Gi
)";

// Starting a container takes a moment; the demo's executors run 4 s.
std::string config_yaml(bool gangs) {
  return std::string("scheduling:\n  gangScheduling: ") + (gangs ? "true" : "false") +
         "\nsimulation:\n  podStartDelay: 500ms\n  stallCheckInterval: 1s\n";
}

// A Spark application as Spark's Volcano feature step submits it: the PodGroup first, then the
// driver, which creates its two executors once it runs (simulated by sim.phalanx.io/spawn).
void submit_spark_jobs(daemon_session& d, int jobs) {
  for (int i = 1; i <= jobs; ++i) {
    auto name = "spark-wordcount-" + std::to_string(i);
    d.create("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
             "metadata:\n  name: " + name + "\n"
             "  annotations: {scheduling.phalanx.io/reserve-missing-members: \"true\"}\n"
             "spec:\n  minMember: 3\n  minResources: {cpu: \"3\", memory: 3Gi}\n"
             "  queue: default\n");
  }
  for (int i = 1; i <= jobs; ++i) {
    auto name = "spark-wordcount-" + std::to_string(i);
    d.create("/api/v1/namespaces/default/pods",
             "apiVersion: v1\nkind: Pod\n"
             "metadata:\n  name: " + name + "-driver\n"
             "  labels: {spark-role: driver, spark-app-selector: " + name + "}\n"
             "  annotations:\n"
             "    scheduling.k8s.io/group-name: " + name + "\n"
             "    sim.phalanx.io/spawn: \"2\"\n"
             "    sim.phalanx.io/spawn-cpu: \"1\"\n"
             "    sim.phalanx.io/spawn-memory: 1Gi\n"
             "    sim.phalanx.io/spawn-duration: 4s\n"
             "    sim.phalanx.io/spawn-role: executor\n"
             "spec:\n  schedulerName: volcano\n"
             "  containers:\n  - name: spark-kubernetes-driver\n"
             "    image: apache/spark:3.5.1\n"
             "    args: [driver, --class, org.apache.spark.examples.JavaWordCount]\n"
             "    resources: {requests: {cpu: \"1\", memory: 1Gi}}\n");
  }
}

bool spark_with_gangs(const demo_options& o) {
  std::printf("\n== 1. Six Spark word-count jobs at once on 6 CPUs, as gangs ==\n");
  std::printf("  Each: a 1-CPU driver that creates two 1-CPU executors once it runs;\n"
              "  PodGroup minMember 3, minResources 3 CPU, and the annotation\n"
              "  scheduling.phalanx.io/reserve-missing-members: the driver's gang reserves room\n"
              "  for its executors (placeholders) before they exist.\n");
  daemon_session d(o, six_cpu_cluster, config_yaml(true));
  progress_watch w(d);
  submit_spark_jobs(d, 6);
  bool done = w.follow([](const json::array& g) { return all_in_phase(g, "Completed"); }, 120s);
  print_table(w.table());
  bool ok = done && w.most_running == 2;
  std::printf("  => %s: %s, at most %d running at once\n", ok ? "OK" : "FAILED",
              done ? "every job completed" : "not every job completed within 120 s",
              w.most_running);
  return ok;
}

bool spark_pod_by_pod(const demo_options& o) {
  std::printf("\n== 2. The same six jobs, pod by pod (gang scheduling off, like the default "
              "scheduler) ==\n");
  daemon_session d(o, six_cpu_cluster, config_yaml(false));
  progress_watch w(d);
  submit_spark_jobs(d, 6);
  auto deadlocked = [](const json::array& items) {
    return !items.empty() && std::all_of(items.begin(), items.end(), [](const json::value& g) {
      return !condition_message(g, "Stalled").empty();
    });
  };
  bool reported = w.follow(deadlocked, 60s);
  // Nothing moves any more: a few more seconds change nothing.
  auto before = w.groups();
  std::this_thread::sleep_for(3s);
  auto after = w.groups();
  int completed = 0;
  for (const auto& g : after)
    completed += str(g, {"status", "phase"}) == "Completed" ? 1 : 0;
  auto pods = d.get("/api/v1/namespaces/default/pods").as_object().at("items").as_array();
  int drivers_running = 0;
  int executors_pending = 0;
  for (const auto& p : pods) {
    auto name = str(p, {"metadata", "name"});
    auto phase = str(p, {"status", "phase"});
    if (name.ends_with("-driver") && phase == "Running")
      ++drivers_running;
    if (name.find("-exec-") != std::string::npos && phase == "Pending")
      ++executors_pending;
  }
  print_table(w.table());
  if (!after.empty())
    std::printf("  phalanxd reports on %s: %s\n", str(after[0], {"metadata", "name"}).c_str(),
                condition_message(after[0], "Stalled").c_str());
  bool ok = reported && completed == 0 && drivers_running == 6 && executors_pending == 12 &&
            json::serialize(before) == json::serialize(after);
  std::printf("  => %s: %d drivers running, %d executors pending, %d jobs completed: %s\n",
              ok ? "OK" : "FAILED", drivers_running, executors_pending, completed,
              reported ? "the deadlock was detected and reported"
                       : "the deadlock was NOT reported");
  return ok;
}

// The example manifest as Volcano takes it (as JSON), plus how long each task runs in the
// simulation:
// `durations` maps a task to its run time; a task without one runs until the job ends (a
// TensorFlow ps, MPI workers running sshd). `barrier`: a task's run time starts once that many
// pods of the job run (workers wait for their peers).
std::string with_simulated_run_times(const std::string& manifest,
                                     const std::map<std::string, std::string>& durations,
                                     int barrier) {
  auto docs = phalanx::api::parse_yaml(manifest);
  if (!docs || docs->size() != 1)
    throw std::runtime_error("the example manifest is not one YAML document");
  auto job = std::move(docs->front());
  for (auto& task : job.at("spec").at("tasks").as_array()) {
    auto it = durations.find(std::string(task.at("name").as_string()));
    if (it == durations.end())
      continue;
    auto& metadata = task.at("template").as_object()["metadata"];
    if (!metadata.is_object())
      metadata = json::object{};
    auto& annotations = metadata.as_object()["annotations"];
    if (!annotations.is_object())
      annotations = json::object{};
    annotations.as_object()["sim.phalanx.io/duration"] = it->second;
    annotations.as_object()["sim.phalanx.io/barrier"] = std::to_string(barrier);
  }
  return json::serialize(job);
}

bool tensorflow_and_mpi(const demo_options& o) {
  std::printf("\n== 3. The examples' TensorFlow (1 ps + 2 workers, minAvailable 3) and MPI "
              "(1 master + 3 workers,\n   minAvailable 4) jobs ==\n");
  const char* cluster = R"(nodes:
  - name: cpu
    count: 2
    cpu: "8"
    memory: 32Gi
  - name: gpu
    count: 1
    cpu: "16"
    memory: 64Gi
    gpu: 4
    labels: {accelerator: nvidia-a100}
)";
  daemon_session d(o, cluster, config_yaml(true));
  progress_watch w(d);
  auto tf = with_simulated_run_times(read_file(o.examples + "/tensorflow-job.yaml"),
                                     {{"worker", "5s"}}, 3);
  auto mpi = with_simulated_run_times(read_file(o.examples + "/mpi-job.yaml"),
                                      {{"mpimaster", "5s"}}, 4);
  d.create("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs", tf, "application/json");
  d.create("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs", mpi, "application/json");
  bool done = w.follow([](const json::array& g) { return all_in_phase(g, "Completed"); }, 120s);
  print_table(w.table());
  auto jobs = d.get("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs");
  bool jobs_completed = true;
  for (const auto& j : jobs.as_object().at("items").as_array()) {
    auto phase = str(j, {"status", "state", "phase"});
    std::printf("  job %-22s %s\n", str(j, {"metadata", "name"}).c_str(), phase.c_str());
    jobs_completed &= phase == "Completed";
  }
  bool ok = done && jobs_completed;
  std::printf("  => %s\n", ok ? "OK: both jobs completed" : "FAILED: not both jobs completed");
  return ok;
}

[[noreturn]] void usage(int code) {
  std::fprintf(code == 0 ? stdout : stderr,
               "usage: phalanx-demo [--phalanxd PATH] [--examples DIR] [--keep]\n");
  std::exit(code);
}

} // namespace

int main(int argc, char** argv) {
  demo_options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h")
      usage(0);
    else if (a == "--keep")
      o.keep = true;
    else if ((a == "--phalanxd" || a == "--examples") && i + 1 < argc)
      (a == "--phalanxd" ? o.phalanxd : o.examples) = argv[++i];
    else
      usage(2);
  }
  std::printf("Phalanx demo: gang scheduling against the deadlock of pod-by-pod placement.\n"
              "Each part starts phalanxd (standalone, fresh data directory, simulated nodes)\n"
              "and talks to it over its HTTP API.\n");
  try {
    bool a = spark_with_gangs(o);
    bool b = spark_pod_by_pod(o);
    bool c = tensorflow_and_mpi(o);
    std::printf("\n%s\n", a && b && c ? "Demo finished: gangs ran, pod by pod deadlocked."
                                      : "Demo FAILED: see the parts marked FAILED above.");
    return a && b && c ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "phalanx-demo: %s\n", e.what());
    return 1;
  }
}
