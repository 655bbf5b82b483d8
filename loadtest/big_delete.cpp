#include "loadtest/big_delete.hpp"

#include "loadtest/interrupt.hpp"

#include "loadtest/phalanxd_process.hpp"
#include "loadtest/report.hpp"
#include "loadtest/scheduling_run.hpp"
#include "loadtest/stats.hpp"

#include "api/client.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;

// Reads one small object again and again from its own connection and keeps how long each read
// took, with when it started, until stopped.
class reader {
 public:
  explicit reader(api::client_options client) : client_(std::move(client)) {
    thread_ = std::thread([this] { run(); });
  }
  ~reader() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable())
      thread_.join();
  }
  struct read {
    clock_type::time_point start;
    double ms = 0;
    bool ok = false;
  };
  // The reads that started within [from, to).
  std::vector<read> between(clock_type::time_point from, clock_type::time_point to) {
    std::lock_guard lock(mutex_);
    std::vector<read> out;
    for (const auto& r : reads_)
      if (r.start >= from && r.start < to)
        out.push_back(r);
    return out;
  }

 private:
  void run() {
    api::http_client c(client_);
    while (!stop_) {
      api::client_request req;
      req.target = "/apis/scheduling.volcano.sh/v1beta1/queues/default";
      req.accept = "application/json";
      auto start = clock_type::now();
      auto res = c.send(req);
      double ms = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
      {
        std::lock_guard lock(mutex_);
        reads_.push_back({start, ms, res && res->status == 200});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  api::client_options client_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<read> reads_;
  std::thread thread_;
};

json::object read_figures(const std::vector<reader::read>& reads) {
  std::vector<double> ms;
  int64_t failed = 0;
  for (const auto& r : reads) {
    ms.push_back(r.ms);
    failed += r.ok ? 0 : 1;
  }
  auto s = summarize(ms);
  return json::object{{"reads", static_cast<int64_t>(s.count)}, {"failed", failed},
                      {"p50_ms", s.p50},
                      {"p99_ms", s.p99},
                      {"max_ms", s.max}};
}

std::string job_body(int64_t pods) {
  // Pods bigger than the one node: they stay pending, so the figures are the registry's work.
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"huge",)"
         R"("namespace":"default"},"spec":{"schedulerName":"volcano","minAvailable":1,)"
         R"("tasks":[{"name":"worker","replicas":)" +
         std::to_string(pods) +
         R"(,"template":{"spec":{"containers":[{"name":"main","image":"sim","resources":)"
         R"({"requests":{"cpu":"64"}}}]}}}]}})";
}

} // namespace

result<json::object> run_big_delete(const big_delete_options& o) {
  auto dir = fs::path(o.work_dir.empty() ? fs::temp_directory_path() : fs::path(o.work_dir)) /
             ("phalanx-big-delete-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec)
    return status{errc::io_error, "cannot create " + dir.string() + ": " + ec.message()};
  // On every way out, after the daemon (declared below, so stopped first) is gone.
  dir_cleanup remove_dir(dir.string(), false);
  {
    std::ofstream cluster(dir / "cluster.yaml");
    cluster << "nodes:\n  - name: node\n    count: 1\n    cpu: \"8\"\n    memory: 32Gi\n";
  }
  phalanxd_options po;
  if (!o.phalanxd_binary.empty())
    po.binary = o.phalanxd_binary;
  po.data_dir = (dir / "data").string();
  po.cluster_file = (dir / "cluster.yaml").string();
  po.log_file = (dir / "phalanxd.log").string();
  po.client.timeout = std::chrono::seconds(600);
  auto d = phalanxd_process::start(po);
  if (!d)
    return d.error();
  auto& daemon = **d;

  api::http_client client(daemon.client_options());
  reader other(daemon.client_options());
  if (!sleep_unless_interrupted(std::chrono::milliseconds(200))) // A few reads at rest.
    return interrupted_while("starting");

  auto timed = [&](api::client_request req, double& seconds) -> result<api::client_response> {
    auto start = clock_type::now();
    auto res = client.send(req);
    seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    return res;
  };
  api::client_request create;
  create.method = "POST";
  create.target = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs";
  create.body = job_body(o.pods);
  create.content_type = "application/json";
  double create_seconds = 0;
  auto create_start = clock_type::now();
  auto created = timed(create, create_seconds);
  auto create_end = clock_type::now();
  if (!created || created->status != 201)
    return status{errc::internal,
                  "creating the job failed: " +
                      (created ? std::to_string(created->status) + " " + created->body.substr(0, 300)
                               : created.error().message())};
  // A job of many pods takes a while to create: the signal is seen once it is there, and the
  // daemon (with the job) goes with the run.
  if (!sleep_unless_interrupted(std::chrono::milliseconds(500)))
    return interrupted_while("creating the job");

  api::client_request remove;
  remove.method = "DELETE";
  remove.target = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/huge";
  double delete_seconds = 0;
  auto delete_start = clock_type::now();
  auto deleted = timed(remove, delete_seconds);
  auto delete_end = clock_type::now();
  const bool rested = sleep_unless_interrupted(std::chrono::milliseconds(200));
  other.stop();
  if (!rested)
    return interrupted_while("deleting the job");
  if (!deleted || deleted->status != 200)
    return status{errc::internal,
                  "deleting the job failed: " +
                      (deleted ? std::to_string(deleted->status) + " " + deleted->body.substr(0, 300)
                               : deleted.error().message())};
  // Nothing of it left.
  api::client_request list;
  list.target = "/api/v1/namespaces/default/pods?limit=1";
  auto left = client.send(list);
  bool empty = left && left->status == 200 && left->body.find("\"items\":[]") != std::string::npos;

  auto during_create = read_figures(other.between(create_start, create_end));
  auto during_delete = read_figures(other.between(delete_start, delete_end));
  auto code = daemon.stop();

  json::object rep;
  rep["mode"] = "big-delete";
  rep["tool"] = "phalanx-loadtest";
  rep["command"] = o.command;
  json::object params;
  params["pods"] = o.pods;
  params["read_target_ms"] = o.read_target_ms;
  rep["parameters"] = std::move(params);
  rep["machine"] = machine_info();
  rep["started_at"] = utc_now_rfc3339();
  rep["create_seconds"] = create_seconds;
  rep["delete_seconds"] = delete_seconds;
  rep["reads_during_create"] = during_create;
  rep["reads_during_delete"] = during_delete;
  rep["all_pods_gone"] = empty;
  rep["clean_stop"] = code.ok() && *code == 0;
  double delete_max = during_delete.at("max_ms").to_number<double>();
  double create_max = during_create.at("max_ms").to_number<double>();
  rep["targets"] = json::array{
      make_target("another client's reads during the delete",
                  "reads_during_delete.max_ms <= " + std::to_string(int(o.read_target_ms)),
                  o.read_target_ms, delete_max, delete_max <= o.read_target_ms),
      make_target("another client's reads during the create",
                  "reads_during_create.max_ms <= " + std::to_string(int(o.read_target_ms)),
                  o.read_target_ms, create_max, create_max <= o.read_target_ms),
      make_target("every pod gone", "all_pods_gone", 1, empty ? 1 : 0, empty)};
  std::printf("big-delete: %lld pods: create %.3f s (reads meanwhile: max %.1f ms), delete %.3f s "
              "(reads meanwhile: %lld, p99 %.1f ms, max %.1f ms)\n",
              static_cast<long long>(o.pods), create_seconds, create_max, delete_seconds,
              static_cast<long long>(during_delete.at("reads").as_int64()),
              during_delete.at("p99_ms").to_number<double>(), delete_max);
  std::fflush(stdout);
  return rep;
}

} // namespace phalanx::loadtest
