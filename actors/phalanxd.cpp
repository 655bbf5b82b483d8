// phalanxd: the Phalanx scheduler daemon.
//
//   phalanxd --mode kubernetes --data-dir DIR [--kubeconfig FILE] [--scheduler-name N,...]
//            [--leader-elect=true|false] [--lock-namespace NS] [--lock-name NAME]
//            [--kube-api-qps Q] [--kube-api-burst B] [--controllers job]
//            [--max-requeue-num N] [--listen ...]
//            [--probe-port N]
//   phalanxd --mode standalone --data-dir DIR [--cluster FILE] [--listen 127.0.0.1:PORT]
//            [--config FILE] [--log-level info] [--token-file F] [--tls-cert F --tls-key F]
//            [--quarantine-corrupt] [--port-file F] [--http-threads N] [--probe-port N]
//
// Standalone mode keeps its own RocksDB in --data-dir and simulates the cluster of --cluster.
// Kubernetes mode schedules a real cluster through its apiserver (actors/kube_world.hpp): it
// watches nodes, pods, PodGroups and Queues, binds the pods whose schedulerName is ours, and
// keeps a checkpoint of its cache and its binding intents in --data-dir. Its own HTTP API then
// only reads; /readyz answers once the caches are synced. With --controllers job it also runs
// Volcano's job controller on the apiserver (actors/kube_job_controller.hpp).
// It answers /readyz only once restart recovery finished, and exits cleanly on SIGTERM/SIGINT.
// Exit codes: 0 stopped by a signal; 1 could not start; 2 bad command line; 3 a vital part of
// the scheduler stopped while it ran (/readyz and /healthz said so first; restart it).

#include "actors/cluster_file.hpp"
#include "actors/runtime.hpp"

#include "api/flags/split.hpp"
#include "api/process_metrics.hpp"
#include "api/server.hpp"
#include "scheduler/quantity.hpp"
#include "storage/store.hpp"

#include "actors/operator_log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#ifdef PHALANX_JEMALLOC
#include <jemalloc/jemalloc.h>

// jemalloc's options for the daemon (MALLOC_CONF still overrides them). Without a background
// thread, freed pages go back to the system only while some thread allocates or frees in their
// arena, so an idle daemon kept what its busy minutes had freed; the thread purges pages unused
// for a second. Measured in docs/PERFORMANCE.md ("seventh session"): no change in throughput.
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc reads this symbol.
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000";
}
#endif

namespace {

using namespace phalanx;

constexpr std::string_view usage = R"(usage: phalanxd --data-dir DIR [options]

  --mode MODE              standalone (default: own store, simulated cluster) or kubernetes
                           (schedule a real cluster through its apiserver)
  --data-dir DIR           RocksDB directory (created when missing); in Kubernetes mode the
                           checkpoint of the cache and the binding intents
  --kubeconfig FILE        Kubernetes mode: how to reach the apiserver (default: in cluster,
                           from the ServiceAccount and KUBERNETES_SERVICE_HOST)
  --scheduler-name N,...   schedulerNames whose pods are ours (default volcano,phalanx)
  --leader-elect BOOL      Kubernetes mode: bind only while holding the Lease (default true)
  --lock-namespace NS      the Lease's namespace (default volcano-system)
  --lock-name NAME         the Lease's name (default phalanx)
  --leader-elect-lease-duration D, --leader-elect-renew-deadline D,
  --leader-elect-retry-period D
                           the Lease's timing (defaults 15s, 10s, 2s, as kube-scheduler's)
  --kube-api-qps Q         requests per second to the apiserver (default 50)
  --kube-api-burst B       requests at once after a quiet spell (default 100)
  --kube-binding-workers N Bindings posted at once, each on a connection of its own (default 16)
  --controllers LIST       Kubernetes mode: controllers to run besides the scheduler; "job" is
                           Volcano's job controller (batch.volcano.sh Jobs get their PodGroup,
                           pods and status from phalanxd). Default: none, since Volcano's own
                           vc-controller-manager usually runs it; never run both
  --max-requeue-num N      the job controller tries a job's failing step again N times, then
                           terminates the job, as Volcano's flag of that name (default 15; -1:
                           without end)
  --cluster FILE           simulated nodes (YAML); created on start unless they exist
  --listen HOST:PORT       HTTP API address (default 127.0.0.1:8080; port 0 picks a free one)
  --config FILE            policy knobs (YAML): overcommit factor, score weights, sampling...
  --log-level LEVEL        trace, debug, info (default), warn, error
  --log-format FORMAT      logfmt (default: ts=... level=info msg="..." key=value) or json
                           (one object per line); timestamps in UTC
  --token-file FILE        require "Authorization: Bearer <token>" with the token in FILE
  --tls-cert FILE          serve HTTPS with this certificate (needs --tls-key)
  --tls-key FILE           the certificate's private key
  --quarantine-corrupt     move undecodable records aside instead of refusing to start
  --port-file FILE         write the listening port here once ready (for scripts and tests)
  --http-threads N         HTTP I/O threads (default 2)
  --probe-port N           also serve /healthz, /livez, /readyz and /metrics on port N of the
                           --listen host, with connections of their own: probes are answered
                           whatever the API's clients do (default: none, the API port only)
  --seed N                 seed of every random choice (default: from the clock)
  --version                print the build (version, compiler, build type) and exit
)";

struct options {
  std::string mode = "standalone";
  std::string data_dir;
  std::string cluster_file;
  std::string listen = "127.0.0.1:8080";
  std::string config_file;
  std::string log_level = "info";
  std::string log_format = "logfmt";
  std::string token_file;
  std::string tls_cert;
  std::string tls_key;
  std::string port_file;
  bool quarantine = false;
  unsigned http_threads = 2;
  std::optional<uint16_t> probe_port;
  std::optional<uint64_t> seed;
  // Kubernetes mode.
  std::string kubeconfig;
  std::vector<std::string> scheduler_names;
  bool leader_elect = true;
  std::string lock_namespace = "volcano-system";
  std::string lock_name = "phalanx";
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  double kube_api_qps = 50;
  int kube_api_burst = 100;
  int kube_binding_workers = 16;
  bool job_controller = false;
  int job_max_requeue = 15;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    auto part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty())
      out.push_back(part);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

[[noreturn]] void fail_usage(const std::string& message) {
  std::cerr << "phalanxd: " << message << "\n\n" << usage;
  std::exit(2);
}

// Every flag usage lists; --leader-elect is a switch that also takes "=true" or "=false".
const std::vector<api::flags::flag_spec>& flag_table() {
  static const std::vector<api::flags::flag_spec> table = {
      {"help", 'h', false},
      {"version", 0, false},
      {"mode"},
      {"data-dir"},
      {"cluster"},
      {"listen"},
      {"config"},
      {"log-level"},
      {"log-format"},
      {"token-file"},
      {"tls-cert"},
      {"tls-key"},
      {"port-file"},
      {"quarantine-corrupt", 0, false},
      {"http-threads"},
      {"probe-port"},
      {"kubeconfig"},
      {"scheduler-name"},
      {"leader-elect", 0, false},
      {"lock-namespace"},
      {"lock-name"},
      {"leader-elect-lease-duration"},
      {"leader-elect-renew-deadline"},
      {"leader-elect-retry-period"},
      {"controllers"},
      {"max-requeue-num"},
      {"kube-binding-workers"},
      {"kube-api-qps"},
      {"kube-api-burst"},
      {"seed"},
  };
  return table;
}

options parse_args(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto split = api::flags::split(args, flag_table());
  if (split.error) {
    const auto& e = *split.error;
    switch (e.failure) {
      case api::flags::split_failure::unknown_flag:
      case api::flags::split_failure::unknown_shorthand:
        fail_usage("unknown option " + e.argument);
      case api::flags::split_failure::missing_value:
        fail_usage(e.spelling + " needs a value");
      case api::flags::split_failure::malformed:
        fail_usage(e.detail);
    }
  }
  if (!split.words.empty())
    fail_usage("unknown option " + split.words.front());

  options o;
  for (const auto& flag : split.flags) {
    const std::string& name = flag.name;
    const std::string& spelling = flag.spelling;
    // A switch's "=VALUE" means something to --leader-elect only; elsewhere it would be read as
    // the switch alone, and --quarantine-corrupt=false as true.
    if (flag.value && (name == "help" || name == "version" || name == "quarantine-corrupt"))
      fail_usage(spelling + ": takes no value");
    const std::string value = flag.value.value_or("");
    if (name == "help") {
      std::cout << usage;
      std::exit(0);
    } else if (name == "version") {
      // What phalanx_build_info says on /metrics, for a shell.
      const auto build = phalanx::api::this_build();
      std::cout << "phalanxd " << build.version << " (" << build.compiler << ", "
                << build.build_type << ")\n";
      std::exit(0);
    } else if (name == "mode") {
      o.mode = value;
    } else if (name == "data-dir") {
      o.data_dir = value;
    } else if (name == "cluster") {
      o.cluster_file = value;
    } else if (name == "listen") {
      o.listen = value;
    } else if (name == "config") {
      o.config_file = value;
    } else if (name == "log-level") {
      o.log_level = value;
    } else if (name == "log-format") {
      o.log_format = value;
    } else if (name == "token-file") {
      o.token_file = value;
    } else if (name == "tls-cert") {
      o.tls_cert = value;
    } else if (name == "tls-key") {
      o.tls_key = value;
    } else if (name == "port-file") {
      o.port_file = value;
    } else if (name == "quarantine-corrupt") {
      o.quarantine = true;
    } else if (name == "http-threads") {
      try {
        o.http_threads = static_cast<unsigned>(std::stoul(value));
      } catch (...) {
        fail_usage(spelling + ": \"" + value + "\" is not a number");
      }
      if (o.http_threads == 0 || o.http_threads > 64)
        fail_usage(spelling + ": must be between 1 and 64");
    } else if (name == "probe-port") {
      try {
        auto p = std::stoul(value);
        if (p > 65535)
          throw std::out_of_range("port");
        o.probe_port = static_cast<uint16_t>(p);
      } catch (...) {
        fail_usage(spelling + ": \"" + value + "\" is not a port number from 0 to 65535");
      }
    } else if (name == "kubeconfig") {
      o.kubeconfig = value;
    } else if (name == "scheduler-name") {
      o.scheduler_names = split_commas(value);
      if (o.scheduler_names.empty())
        fail_usage(spelling + ": name at least one schedulerName");
    } else if (name == "leader-elect") {
      const std::string v = flag.value.value_or("true");
      if (v != "true" && v != "false")
        fail_usage(spelling + ": \"" + v + "\" is not true or false");
      o.leader_elect = v == "true";
    } else if (name == "lock-namespace") {
      o.lock_namespace = value;
    } else if (name == "lock-name") {
      o.lock_name = value;
    } else if (name == "leader-elect-lease-duration" || name == "leader-elect-renew-deadline" ||
               name == "leader-elect-retry-period") {
      auto d = scheduler::parse_duration_ns(value);
      if (!d || *d <= 0)
        fail_usage(spelling + ": \"" + value + "\" is not a duration such as 15s or 500ms");
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(*d));
      if (name == "leader-elect-lease-duration")
        o.lease_duration = ms;
      else if (name == "leader-elect-renew-deadline")
        o.renew_deadline = ms;
      else
        o.retry_period = ms;
    } else if (name == "controllers") {
      for (const auto& c : split_commas(value)) {
        if (c != "job")
          fail_usage(spelling + ": unknown controller \"" + c + "\" (known: job)");
        o.job_controller = true;
      }
    } else if (name == "max-requeue-num") {
      try {
        std::size_t used = 0;
        o.job_max_requeue = std::stoi(value, &used);
        if (used != value.size())
          throw std::invalid_argument(value);
      } catch (...) {
        fail_usage(spelling + ": \"" + value + "\" is not a whole number");
      }
      if (o.job_max_requeue < -1)
        fail_usage(spelling + ": must be -1 (without end) or more");
    } else if (name == "kube-binding-workers") {
      try {
        o.kube_binding_workers = std::stoi(value);
      } catch (...) {
        fail_usage(spelling + ": \"" + value + "\" is not a number");
      }
      if (o.kube_binding_workers < 1 || o.kube_binding_workers > 256)
        fail_usage(spelling + ": must be between 1 and 256");
    } else if (name == "kube-api-qps" || name == "kube-api-burst") {
      try {
        if (name == "kube-api-qps")
          o.kube_api_qps = std::stod(value);
        else
          o.kube_api_burst = std::stoi(value);
      } catch (...) {
        fail_usage(spelling + ": \"" + value + "\" is not a number");
      }
      if (o.kube_api_qps <= 0 || o.kube_api_burst < 1)
        fail_usage(spelling + ": must be positive");
    } else if (name == "seed") {
      try {
        o.seed = std::stoull(value);
      } catch (...) {
        fail_usage(spelling + ": \"" + value + "\" is not a number");
      }
    } else {
      // A flag of flag_table() that this chain forgot.
      fail_usage("unknown option " + spelling);
    }
  }
  if (o.mode != "standalone" && o.mode != "kubernetes")
    fail_usage("--mode " + o.mode + ": must be standalone or kubernetes");
  if (o.mode == "kubernetes" && !o.cluster_file.empty())
    fail_usage("--cluster: Kubernetes mode schedules the cluster's own nodes, not simulated ones");
  if (o.mode == "standalone" && !o.kubeconfig.empty())
    fail_usage("--kubeconfig: only with --mode kubernetes");
  if (o.mode == "standalone" && o.job_controller)
    fail_usage("--controllers: only with --mode kubernetes (standalone mode always runs its own "
               "job controller)");
  if (o.data_dir.empty())
    fail_usage("--data-dir is required");
  if (o.tls_cert.empty() != o.tls_key.empty())
    fail_usage("--tls-cert and --tls-key go together");
  return o;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

[[noreturn]] void die(const std::string& message) {
  actors::oplog::line(spdlog::level::critical, message);
  spdlog::shutdown();
  std::exit(1);
}

// Hands the pages of freed memory back to the system now instead of after the allocator's
// decay time. A no-op without jemalloc (sanitizer builds).
void return_freed_memory() {
#ifdef PHALANX_JEMALLOC
  auto started = std::chrono::steady_clock::now();
  const std::string purge_all = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  if (int error = mallctl(purge_all.c_str(), nullptr, nullptr, nullptr, 0); error != 0)
    actors::oplog::warn("could not return freed memory").kv("mallctl_error", int64_t{error});
  else
    actors::oplog::info("returned freed memory")
        .kv("seconds",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
#endif
}

} // namespace

int main(int argc, char** argv) {
  // Block the stop signals before any thread starts, so every thread inherits the mask and only
  // the main thread's sigwait sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto started = std::chrono::steady_clock::now();
  auto opt = parse_args(argc, argv);

  // Every line is built whole by actors/operator_log.hpp, its timestamp and level included.
  const auto log_format = actors::oplog::format_from_string(opt.log_format);
  if (!log_format)
    fail_usage("--log-format: unknown format \"" + opt.log_format + "\" (logfmt or json)");
  actors::oplog::set_format(*log_format);
  auto logger = spdlog::stderr_logger_mt("phalanxd");
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  auto level = spdlog::level::from_str(opt.log_level);
  if (level == spdlog::level::off && opt.log_level != "off")
    fail_usage("--log-level: unknown level \"" + opt.log_level + "\"");
  spdlog::set_level(level);

  actors::runtime_config config;
  if (!opt.config_file.empty()) {
    auto text = read_file(opt.config_file);
    if (!text)
      die("cannot read --config " + opt.config_file);
    auto parsed = actors::parse_runtime_config(*text);
    if (!parsed)
      die(parsed.error().message());
    config = std::move(*parsed);
  }
  if (opt.seed)
    config.seed = *opt.seed;
  if (!opt.scheduler_names.empty())
    config.scheduling.scheduler_names = opt.scheduler_names;
  if (opt.mode == "kubernetes") {
    auto& k = config.kubernetes;
    k.enabled = true;
    auto connection = opt.kubeconfig.empty() ? k8s::in_cluster_config()
                                             : k8s::load_kubeconfig(opt.kubeconfig);
    if (!connection)
      die("cannot reach the cluster: " + connection.error().message());
    k.connection = std::move(*connection);
    k.connection.qps = opt.kube_api_qps;
    k.connection.burst = opt.kube_api_burst;
    k.binding_workers = opt.kube_binding_workers;
    k.job_controller = opt.job_controller;
    k.job_max_requeue = opt.job_max_requeue;
    k.leader_elect = opt.leader_elect;
    k.lock_namespace = opt.lock_namespace;
    k.lock_name = opt.lock_name;
    k.lease_duration = opt.lease_duration;
    k.renew_deadline = opt.renew_deadline;
    k.retry_period = opt.retry_period;
  }

  std::vector<scheduler::node> cluster_nodes;
  if (!opt.cluster_file.empty()) {
    auto text = read_file(opt.cluster_file);
    if (!text)
      die("cannot read --cluster " + opt.cluster_file);
    auto parsed = actors::parse_cluster_file(*text);
    if (!parsed)
      die("--cluster " + opt.cluster_file + ": " + parsed.error().message());
    cluster_nodes = std::move(*parsed);
  }

  std::string host = opt.listen;
  uint16_t port = 8080;
  if (auto colon = opt.listen.rfind(':'); colon != std::string::npos) {
    host = opt.listen.substr(0, colon);
    try {
      auto p = std::stoul(opt.listen.substr(colon + 1));
      if (p > 65535)
        throw std::out_of_range("port");
      port = static_cast<uint16_t>(p);
    } catch (...) {
      fail_usage("--listen " + opt.listen + ": the port must be a number from 0 to 65535");
    }
  }

  storage::store_options so;
  so.path = opt.data_dir;
  so.quarantine_corrupt = opt.quarantine;
  auto store = storage::store::open(so);
  if (!store)
    die("cannot open the store in " + opt.data_dir + ": " + store.error().message());
  std::shared_ptr<storage::store> shared_store = std::move(*store);
  if (auto from = shared_store->recovery().upgraded_from; from != 0)
    actors::oplog::info("store upgraded")
        .kv("data_dir", opt.data_dir)
        .kv("from_format", int64_t{from})
        .kv("to_format", int64_t{storage::store::format_version});

  auto rt = actors::runtime::start(config, shared_store);
  if (!rt)
    die("cannot start: " + rt.error().message());
  auto& service = (*rt)->service();

  // Create the simulated nodes the store does not have yet. All creations are in flight at once,
  // so they share group commits instead of paying one synced write each.
  int created = 0;
  std::vector<std::future<result<api::object>>> creations;
  std::vector<std::string> names;
  creations.reserve(cluster_nodes.size());
  for (auto& n : cluster_nodes) {
    auto done = std::make_shared<std::promise<result<api::object>>>();
    creations.push_back(done->get_future());
    names.push_back(n.meta.name.str());
    service.create(api::node_object{std::move(n), {}, 0},
                   [done](result<api::object> r) { done->set_value(std::move(r)); });
  }
  for (std::size_t i = 0; i < creations.size(); ++i) {
    auto r = creations[i].get();
    if (r.ok())
      ++created;
    else if (r.error().code() != errc::already_exists)
      die("cannot create node " + names[i] + ": " + r.error().message());
  }

  // Restore decoded the whole store into buffers it has freed by now; jemalloc would keep
  // those pages for ten seconds (its decay time) before giving them back. Ready is the moment
  // operators and the load tester read the daemon's size, so give them back now.
  return_freed_memory();

  api::server_options http;
  http.address = host;
  http.port = port;
  http.threads = opt.http_threads;
  http.probe_port = opt.probe_port;
  http.token_file = opt.token_file;
  http.tls_cert_file = opt.tls_cert;
  http.tls_key_file = opt.tls_key;
  auto server = api::server::start(service, http);
  if (!server)
    die("cannot serve " + opt.listen + ": " + server.error().message());
  if (!opt.port_file.empty()) {
    std::ofstream out(opt.port_file + ".tmp");
    out << (*server)->port() << "\n";
    out.close();
    std::rename((opt.port_file + ".tmp").c_str(), opt.port_file.c_str());
  }
  auto to_ready = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
  actors::oplog::info("ready")
      .kv("url", (*server)->url())
      .kv("probe_port", int64_t{(*server)->probe_port()})
      .kv("data_dir", opt.data_dir)
      .kv("nodes_created", static_cast<int64_t>(created))
      .kv("restore_seconds", (*rt)->seconds_to_ready())
      .kv("process_to_ready_seconds", to_ready.count());

  // Wait for SIGTERM or SIGINT, and watch the runtime meanwhile: if a vital actor stopped, the
  // API can answer nothing more (its probes say so already); exit, so that whoever supervises
  // the process restarts it on its durable state.
  int signal = 0;
  for (;;) {
    timespec second{1, 0};
    signal = sigtimedwait(&stop_signals, nullptr, &second);
    if (signal > 0)
      break;
    if (auto failure = (*rt)->failure(); !failure.empty()) {
      actors::oplog::line(spdlog::level::critical, "exiting: the scheduler cannot go on")
          .kv("reason", failure);
      (*server)->stop();
      spdlog::shutdown();
      std::_Exit(3);
    }
  }
  actors::oplog::info("stopping").kv("signal", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  (*server)->stop();
  server->reset();
  (*rt)->shutdown();
  rt->reset();
  shared_store.reset();
  actors::oplog::info("stopped");
  spdlog::shutdown();
  return 0;
}
