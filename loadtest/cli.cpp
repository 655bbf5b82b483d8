#include "loadtest/cli.hpp"
#include "loadtest/big_delete.hpp"

#include "loadtest/flags.hpp"
#include "loadtest/inproc.hpp"
#include "loadtest/interrupt.hpp"
#include "loadtest/kube_bench.hpp"
#include "loadtest/kube_restart.hpp"
#include "loadtest/push.hpp"
#include "loadtest/replay.hpp"
#include "loadtest/report.hpp"
#include "loadtest/restart.hpp"
#include "loadtest/scheduling_run.hpp"

#include "actors/runtime_config.hpp"

#include "scheduler/quantity.hpp"
#include "scheduler/validation.hpp"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <span>

namespace phalanx::loadtest {

namespace json = boost::json;

namespace {

constexpr std::string_view top_usage = R"(usage: phalanx-loadtest MODE [flags]

Load tests and trace replays of the Phalanx scheduler (DESIGN.md section 9).

modes:
  push      the workload end to end through the HTTP API of a phalanxd it starts (or --server)
  inproc    the same workload in one process against the actor runtime, no HTTP: submitted while
            scheduled, then stored first and scheduled from a restart (the backlog), then the
            same decisions by the pure planner in one loop (the actor overhead: backlog / loop)
  replay    a real trace on a simulated clock under pod-by-pod, gang FIFO and Phalanx's policy
  restart   builds a store of 150,000 pods and times phalanxd from start to /readyz
  big-delete  creates and deletes one job of 300,000 pods through phalanxd's API while another
            client reads: how long each took and how long the other client's reads waited
  k8s-restart Kubernetes mode on a real kube-apiserver (the test control plane): restart to the
            first new bind after a short outage (watches resumed) and a long one (410, relist)
  k8s       Phalanx, kube-scheduler and a do-nothing binder side by side on one real apiserver,
            the same nodes and pods: pods/s, latency, gangs bound whole or in part

`phalanx-loadtest MODE --help` lists the flags of a mode.
)";

bool wants_help(std::span<const std::string> args) {
  for (const auto& a : args)
    if (a == "--help" || a == "-h")
      return true;
  return false;
}

int usage_error(const std::string& mode, const std::string& message) {
  std::cerr << "phalanx-loadtest " << mode << ": " << message << "\n"
            << "(phalanx-loadtest " << mode << " --help lists the flags)\n";
  return 2;
}

// Reads Chart.js now when an HTML report is wanted: a missing package fails before the run, not
// after it. The text is read again when the page is written.
int check_html_dependencies(const std::string& mode, const std::string& html_path) {
  if (html_path.empty())
    return 0;
  if (auto js = read_chart_js(default_chart_js_path()); !js) {
    std::cerr << "phalanx-loadtest " << mode << ": --html " << html_path << ": "
              << js.error().message() << "\n";
    return 1;
  }
  return 0;
}

// Writes the reports with their verdict, prints the targets and the problems, and returns the
// exit code (cli.hpp lists them).
int finish(result<json::object> rep, const std::string& mode, const std::string& json_path,
           const std::string& html_path, bool fail_on_target) {
  if (!rep) {
    std::cerr << "phalanx-loadtest " << mode << ": " << rep.error().message() << "\n";
    return interrupt_signal() != 0 ? 128 + interrupt_signal() : 1;
  }
  const auto verdict = assess_report(*rep);
  (*rep)["verdict"] = verdict_json(verdict);
  if (auto s = write_reports(*rep, json_path, html_path); !s.ok()) {
    std::cerr << "phalanx-loadtest " << mode << ": " << s.message() << "\n";
    return 1;
  }
  if (const auto* t = rep->if_contains("targets"); t != nullptr && t->is_array())
    for (const auto& target : t->as_array()) {
      const auto& o = target.as_object();
      std::string value = "n/a";
      if (o.at("value").is_number()) {
        char buf[48];
        double v = o.at("value").to_number<double>();
        std::snprintf(buf, sizeof buf, v == std::trunc(v) || std::fabs(v) >= 1000 ? "%.0f" : "%.4g",
                      v);
        value = buf;
      }
      std::printf("target %-45s %-60s value %-14s %s\n",
                  std::string(o.at("name").as_string()).c_str(),
                  std::string(o.at("rule").as_string()).c_str(), value.c_str(),
                  o.at("met").as_bool() ? "met" : "NOT met");
    }
  std::fflush(stdout);
  for (const auto& p : verdict.problems)
    if (verdict.kind != verdict_kind::targets_missed || fail_on_target)
      std::cerr << "phalanx-loadtest " << mode << ": " << p << "\n";
  // The details behind a failure, as the report keeps them: every violation and the first
  // failed submissions, one a line.
  if (verdict.kind == verdict_kind::failed)
    for (const char* key : {"invariant_violations", "submission_failure_messages"})
      if (const auto* list = rep->if_contains(key); list != nullptr && list->is_array())
        for (const auto& m : list->as_array())
          if (m.is_string())
            std::cerr << "  " << std::string(m.as_string()) << "\n";
  switch (verdict.kind) {
    case verdict_kind::passed:
      return 0;
    case verdict_kind::targets_missed:
      return fail_on_target ? 3 : 0;
    case verdict_kind::failed:
      return 1;
    case verdict_kind::interrupted:
      return 128 + (interrupt_signal() != 0 ? interrupt_signal() : SIGINT);
  }
  return 1;
}

void add_fail_on_target(flag_set& flags, bool* target) {
  flags.add_bool("fail-on-target", target,
                 "exit with 3 when the run finished but missed a target (default: targets are "
                 "reported, the exit code is 0)");
}

int run_scheduling_mode(const std::string& mode, std::span<const std::string> args,
                        const std::string& command) {
  const bool push = mode == "push";
  push_options po;
  inproc_options io;
  run_options& o = push ? po.run : io.run;
  run_flag_texts texts;
  std::string token_file;
  std::string config_file;
  flag_set flags("phalanx-loadtest " + mode,
                 push ? "Submits the workload through the HTTP API of a phalanxd it starts (or "
                        "--server), waits until every gang runs, and reports throughput, gang "
                        "decision latency, utilization, queue shares and the invariants I1-I4."
                      : "Runs the workload against the actor runtime in this process (durable "
                        "RocksDB store in a temporary directory, no HTTP): submitted while it "
                        "schedules, then stored first and scheduled by a restarted runtime (the "
                        "backlog), then plans the same gangs with the pure planner in one loop.");
  add_run_flags(flags, o, texts);
  bool fail_on_target = false;
  add_fail_on_target(flags, &fail_on_target);
  o.concurrency = push ? 32 : 1024;
  flags.add_int("concurrency", &o.concurrency, 1, 100000,
                push ? "client connections submitting at once (one thread each)"
                     : "service calls in flight at once");
  if (push) {
    flags.add_string("server", &po.server,
                     "target this phalanxd (http://HOST:PORT) instead of starting one");
    flags.add_string("token-file", &token_file, "bearer token for --server");
    flags.add_int("http-threads", &po.http_threads, 1, 64, "HTTP threads of the started phalanxd");
    flags.add_string("phalanxd", &po.phalanxd_binary, "the phalanxd binary to start");
  } else {
    flags.add_bool("skip-loop", &io.skip_loop, "skip the pure planner loop");
    flags.add_bool("skip-backlog", &io.skip_backlog,
                   "skip the backlog run (the gangs stored first, then scheduled from a restart)");
    flags.add_string("config", &config_file,
                     "the runtime's policy knobs: a phalanxd --config YAML file (its threads and "
                     "seed give way to the flags)");
  }
  if (wants_help(args)) {
    std::cout << flags.usage();
    return 0;
  }
  if (auto s = flags.parse(args); !s.ok())
    return usage_error(mode, s.message());
  texts.stall_after_given = flags.was_set("stall-after");
  if (auto s = finish_run_flags(o, texts); !s.ok())
    return usage_error(mode, s.message());
  // A workload that can never run is refused before anything starts (workload.hpp, check_fit);
  // the run generates it again, from the same seed.
  {
    auto fit = check_fit(generate_workload(o.workload), o.workload);
    // --server's cluster may hold more nodes than the workload creates: there the judgement is
    // the generated nodes' only, a warning.
    if (push && !po.server.empty()) {
      for (auto& r : fit.refusals)
        fit.warnings.push_back("on the generated nodes alone: " + r);
      fit.refusals.clear();
    }
    if (!fit.refusals.empty()) {
      std::cerr << "phalanx-loadtest " << mode << ": the workload cannot fit its cluster:\n";
      for (const auto& r : fit.refusals)
        std::cerr << "  " << r << "\n";
      return 2;
    }
    for (const auto& w : fit.warnings)
      std::cout << mode << ": warning: " << w << "\n";
    o.fit_warnings = std::move(fit.warnings);
  }
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in)
      return usage_error(mode, "--config: cannot read " + config_file);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto parsed = actors::parse_runtime_config(text);
    if (!parsed)
      return usage_error(mode, "--config " + config_file + ": " + parsed.error().message());
    io.config = std::move(*parsed);
    io.config_path = config_file;
  }
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!(in >> po.token))
      return usage_error(mode, "--token-file: cannot read a token from " + token_file);
  }
  o.command = command;
  o.flags_given = flags.given();
  if (int code = check_html_dependencies(mode, o.html_path); code != 0)
    return code;
  interrupt_guard interrupts;
  if (push)
    return finish(run_push(po), mode, o.json_path, o.html_path, fail_on_target);
  return finish(run_inproc(io), mode, o.json_path, o.html_path, fail_on_target);
}

int run_replay_mode(std::span<const std::string> args, const std::string& command) {
  replay_options o;
  std::string policies = "pod-by-pod,gang-fifo,volcano-like,phalanx";
  std::string app_durations;
  std::string node_cpu = "64";
  std::string node_memory = "512Gi";
  int64_t default_duration_ns = 3600LL * 1'000'000'000;
  bool no_gang_wait = false;
  int64_t seed = 1;
  flag_set flags("phalanx-loadtest replay",
                 "Replays a trace (Philly, Pollux or openb, recognised from its header) on a "
                 "simulated clock under several policies and compares job completion times, "
                 "queueing, GPU utilization, deadlocks and starvation.");
  flags.add_string("trace", &o.trace_path, "the trace CSV", true);
  flags.add_string("cluster", &o.cluster_path,
                   "the cluster: a YAML cluster file or a node list CSV (sn,cpu_milli,memory_mib,"
                   "gpu,model)");
  flags.add_string("cluster-from-vc", &o.vc_path,
                   "the cluster from VC sizes (vc,node num): nodes of --node-gpus GPUs per VC");
  flags.add_double("vc-scale", &o.vc_scale, 0.001, 1000,
                   "multiplies every VC's node count (rounded, at least 1)");
  flags.add_int("nodes", &o.uniform_nodes, 0, 1000000,
                "a uniform cluster of this many nodes of the node shape");
  flags.add_int("node-gpus", &o.shape.gpus, 0, 1024, "GPUs of a VC or uniform node");
  flags.add_string("node-cpu", &node_cpu, "cpu of a VC or uniform node");
  flags.add_string("node-memory", &node_memory, "memory of a VC or uniform node");
  flags.add_choice("partition", &o.partition, {"auto", "separate", "shared", "pooled"},
                   "separate: each VC its own scheduler on its own nodes; shared: one cluster, "
                   "jobs pinned to their VC's nodes; pooled: one cluster, any job on any node, "
                   "VCs as queues sharing it by weight; auto: separate when the cluster has VCs");
  flags.add_string("policies", &policies,
                   "policies to compare, comma-separated, of pod-by-pod, gang-fifo, volcano-like "
                   "(queues and backfill, no reservation) and phalanx");
  flags.add_duration("pod-interval", &o.model.pod_interval_ns, 0, int64_t{3600} * 1'000'000'000,
                     "the pods of a gang are created this far apart (a controller creating "
                     "them one by one)");
  flags.add_bool("no-gang-wait", &no_gang_wait,
                 "pods of a gang start working at once instead of waiting for the whole gang");
  flags.add_string("app-durations", &app_durations,
                   "pollux: run time per application, APP=DURATION items (default "
                   "bert=30m,cifar10=15m,deepspeech2=1h,imagenet=12h,ncf=2m,yolov3=2h)");
  flags.add_duration("default-duration", &default_duration_ns, 1'000'000'000,
                     int64_t{365} * 24 * 3600 * 1'000'000'000,
                     "pollux: run time of an application not listed");
  flags.add_int("max-jobs", &o.read.max_jobs, 0, 100'000'000,
                "read at most this many jobs (0: all)");
  flags.add_duration("starvation-bound", &o.starvation_bound_ns, 0,
                     int64_t{365} * 24 * 3600 * 1'000'000'000,
                     "phalanx: how long a gang may stay blocked before it reserves the nodes "
                     "where it fits soonest (0: never, as volcano-like)");
  flags.add_duration("pod-start-delay", &o.pod_start_delay_ns, 0, int64_t{3600} * 1'000'000'000,
                     "from bind to Running");
  flags.add_int("priority-gpus", &o.priority_gpus, 0, 1'000'000,
                "jobs asking for at least this many GPUs in all get priority 1000, the others 0 "
                "(0: every job 0)");
  flags.add_bool("preemption", &o.preemption,
                 "volcano-like and phalanx: a blocked gang evicts running pods of lower-priority "
                 "gangs of its own queue (scheduling.preemption)");
  flags.add_bool("reclaim", &o.reclaim,
                 "volcano-like and phalanx: a blocked gang whose queue stays within its deserved "
                 "share evicts running pods of queues above theirs (scheduling.reclaim); needs "
                 "one cluster (--partition shared or pooled)");
  flags.add_custom("queue-parents", "VC=PARENT,...",
                   [&](const std::string& text) -> std::optional<std::string> {
                     auto pairs = parse_name_values(text);
                     if (!pairs)
                       return pairs.error().message();
                     o.queue_parents = std::move(*pairs);
                     return std::nullopt;
                   },
                   "puts queues (VCs, or parents named here) under parent queues, made with "
                   "weight 1 when they are not queues already (\"root\": the top)");
  flags.add_custom("queue-weights", "NAME=W,...",
                   [&](const std::string& text) -> std::optional<std::string> {
                     auto pairs = parse_name_values(text);
                     if (!pairs)
                       return pairs.error().message();
                     o.queue_weights.clear();
                     for (std::size_t i = 0; i < pairs->size(); ++i) {
                       const auto& [name, value] = (*pairs)[i];
                       auto w = parse_int(value);
                       if (!w)
                         return "item " + std::to_string(i + 1) + " \"" + name + "=" + value +
                                "\": the weight is not an integer";
                       o.queue_weights.emplace_back(name, *w);
                     }
                     return std::nullopt;
                   },
                   "sets queue weights (default: a VC's node count, 1 for other queues and "
                   "parents)");
  flags.add_duration("end-time", &o.end_time_ns, 0, int64_t{10} * 365 * 24 * 3600 * 1'000'000'000,
                     "stop the simulated clock here (0: when nothing is left)");
  flags.add_int("parallel", &o.parallel, 1, 64, "simulations run at once");
  flags.add_int("seed", &seed, 0, std::numeric_limits<int64_t>::max(), "seed of the planner");
  flags.add_string("json", &o.json_path, "write the JSON report here");
  flags.add_string("html", &o.html_path, "write the HTML report here");
  bool fail_on_target = false;
  add_fail_on_target(flags, &fail_on_target);
  if (wants_help(args)) {
    std::cout << flags.usage();
    return 0;
  }
  if (auto s = flags.parse(args); !s.ok())
    return usage_error("replay", s.message());
  auto p = parse_policies(policies);
  if (!p)
    return usage_error("replay", "--policies: " + p.error().message());
  o.policies = *p;
  if (!app_durations.empty()) {
    auto d = parse_app_durations(app_durations);
    if (!d)
      return usage_error("replay", "--app-durations: " + d.error().message());
    o.read.app_duration_s = *d;
  }
  o.read.default_duration_s = default_duration_ns / 1'000'000'000;
  auto cpu = scheduler::parse_resource_amount("cpu", node_cpu);
  if (!cpu || *cpu <= 0)
    return usage_error("replay", "--node-cpu: \"" + node_cpu + "\" must be a positive quantity");
  o.shape.cpu_milli = *cpu;
  auto mem = scheduler::parse_resource_amount("memory", node_memory);
  if (!mem || *mem <= 0)
    return usage_error("replay",
                       "--node-memory: \"" + node_memory + "\" must be a positive quantity");
  o.shape.memory_bytes = *mem;
  o.model.wait_for_gang = !no_gang_wait;
  o.seed = static_cast<uint64_t>(seed);
  int sources = (!o.cluster_path.empty()) + (!o.vc_path.empty()) + (o.uniform_nodes > 0);
  if (sources != 1)
    return usage_error("replay",
                       "give exactly one of --cluster FILE, --cluster-from-vc FILE or --nodes N");
  if (flags.was_set("vc-scale") && o.vc_path.empty())
    return usage_error("replay", "--vc-scale: applies to --cluster-from-vc only");
  o.command = command;
  o.flags_given = flags.given();
  if (int code = check_html_dependencies("replay", o.html_path); code != 0)
    return code;
  return finish(run_replay(o), "replay", o.json_path, o.html_path, fail_on_target);
}

int run_restart_mode(std::span<const std::string> args, const std::string& command) {
  restart_options o;
  flag_set flags("phalanx-loadtest restart",
                 "Builds a store (PodGroups with a ps and worker task, half the pods bound) and "
                 "times the real phalanxd from process start to /readyz 200 on fresh copies of "
                 "it.");
  flags.add_int("pods", &o.store.pods, 1, 10'000'000, "pods in the store");
  flags.add_int("podgroups", &o.store.groups, 1, 10'000'000, "PodGroups in the store");
  flags.add_int("nodes", &o.store.nodes, 1, 1'000'000, "nodes in the store");
  flags.add_int("queues", &o.store.queues, 1, 10'000, "queues in the store");
  flags.add_int("jobs", &o.store.jobs, 0, 10'000'000,
                "Volcano job records (for the first PodGroups)");
  flags.add_int("spec-bytes", &o.store.spec_bytes, 64, 1 << 20,
                "bytes of each task's pod spec JSON");
  flags.add_bool("bare-pods", &o.store.bare_pods, "pods without Volcano's labels and annotations");
  flags.add_bool("all-bound", &o.store.all_bound,
                 "every pod bound and running (every gang idle once restored)");
  flags.add_int("repeat", &o.repeat, 1, 100, "restarts measured");
  flags.add_duration("ready-timeout", &o.ready_timeout_ns, 1'000'000'000,
                     int64_t{3600} * 1'000'000'000, "how long one start may take");
  flags.add_duration("steady-after", &o.steady_after_ns, 0, int64_t{3600} * 1'000'000'000,
                     "also read the resident set this long after ready (0: not)");
  flags.add_string("phalanxd", &o.phalanxd_binary, "the phalanxd binary to start");
  flags.add_string("work-dir", &o.work_dir, "where the store goes (default $TMPDIR or /tmp)");
  flags.add_bool("keep", &o.keep, "keep the store and the daemon logs");
  flags.add_string("json", &o.json_path, "write the JSON report here");
  flags.add_string("html", &o.html_path, "write the HTML report here");
  bool fail_on_target = false;
  add_fail_on_target(flags, &fail_on_target);
  if (wants_help(args)) {
    std::cout << flags.usage();
    return 0;
  }
  if (auto s = flags.parse(args); !s.ok())
    return usage_error("restart", s.message());
  if (o.store.jobs > o.store.groups && !flags.was_set("jobs"))
    o.store.jobs = o.store.groups;
  if (auto s = validate(o.store); !s.ok())
    return usage_error("restart", s.message());
  if (o.work_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    o.work_dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  o.command = command;
  o.flags_given = flags.given();
  if (int code = check_html_dependencies("restart", o.html_path); code != 0)
    return code;
  interrupt_guard interrupts;
  return finish(run_restart(o), "restart", o.json_path, o.html_path, fail_on_target);
}

// A mode whose flags need no check beyond their own ranges: --json and --html, help, parse, run,
// report.
template <class Options>
int run_plain_mode(const std::string& mode, flag_set& flags, Options& o,
                   std::span<const std::string> args, const std::string& command,
                   result<json::object> (*run)(const Options&)) {
  flags.add_string("json", &o.json_path, "write the JSON report here");
  flags.add_string("html", &o.html_path, "write the HTML report here");
  bool fail_on_target = false;
  add_fail_on_target(flags, &fail_on_target);
  if (wants_help(args)) {
    std::cout << flags.usage();
    return 0;
  }
  if (auto s = flags.parse(args); !s.ok())
    return usage_error(mode, s.message());
  o.command = command;
  o.flags_given = flags.given();
  if (int code = check_html_dependencies(mode, o.html_path); code != 0)
    return code;
  // The run polls it in its waits; finish reads the signal for the exit code.
  interrupt_guard interrupts;
  return finish(run(o), mode, o.json_path, o.html_path, fail_on_target);
}

int run_big_delete_mode(std::span<const std::string> args, const std::string& command) {
  big_delete_options o;
  flag_set flags("phalanx-loadtest big-delete",
                 "Creates one Volcano Job of --pods pods through the API of a phalanxd it starts "
                 "(the pods stay pending), then deletes it, while another client reads a queue "
                 "in a loop; reports both durations and the other client's read latencies.");
  flags.add_int("pods", &o.pods, 1, scheduler::max_pods_per_job, "pods of the job");
  flags.add_string("phalanxd", &o.phalanxd_binary, "the phalanxd binary to start");
  flags.add_string("work-dir", &o.work_dir, "where the daemon's data goes (default $TMPDIR)");
  return run_plain_mode("big-delete", flags, o, args, command, &run_big_delete);
}

int run_kube_restart_mode(std::span<const std::string> args, const std::string& command) {
  kube_restart_options o;
  flag_set flags("phalanx-loadtest k8s-restart",
                 "Starts the test control plane (make k8s-control-plane builds it), creates "
                 "--nodes nodes and --pods bound pods in PodGroups, runs phalanxd in Kubernetes "
                 "mode and times its restarts to the first new bind, after a short outage and "
                 "after a long one (the apiserver restarted: 410, relist).");
  flags.add_int("nodes", &o.nodes, 1, 100'000, "nodes of the cluster");
  flags.add_int("pods", &o.pods, 1, 1'000'000, "pods of the cluster, bound");
  flags.add_int("gang-size", &o.gang_size, 1, 10'000, "pods per PodGroup");
  flags.add_string("phalanxd", &o.phalanxd_binary, "the phalanxd binary to start");
  flags.add_string("logs", &o.log_dir, "keep phalanxd's logs in this directory");
  return run_plain_mode("k8s-restart", flags, o, args, command, &run_kube_restart);
}

int run_kube_bench_mode(std::span<const std::string> args, const std::string& command) {
  kube_bench_options o;
  flag_set flags("phalanx-loadtest k8s",
                 "Runs a do-nothing binder, kube-scheduler and phalanxd (Kubernetes mode) one "
                 "after the other against one real kube-apiserver (the test control plane, or "
                 "--kubeconfig's cluster) on the same fake nodes and the same pods, and reports "
                 "each one's pods/s and creation-to-bound latency and how many gangs each bound "
                 "whole or in part.");
  flags.add_choice("workload", &o.workload, {"basic", "gang"},
                   "basic: plain pods (scheduler_perf's SchedulingBasic); gang: PodGroups of 1 to "
                   "--max-gang-size pods");
  flags.add_int("nodes", &o.nodes, 1, 100'000, "fake nodes (32 cpu, 128Gi, 110 pods each)");
  flags.add_int("pods", &o.pods, 1, 1'000'000, "basic: the pods");
  flags.add_int("podgroups", &o.podgroups, 1, 100'000, "gang: the PodGroups");
  flags.add_int("max-gang-size", &o.max_gang_size, 1, 1'000,
                "gang: sizes are uniform on 1..this");
  flags.add_double("demand", &o.demand, 0.001, 10,
                   "gang: the pods' cpu requests over the cluster's cpu (above 1 not all fit)");
  flags.add_string("schedulers", &o.schedulers,
                   "comma-separated, run in this order: binder, kube-scheduler, phalanx");
  flags.add_double("qps", &o.qps, 1, 1'000'000, "every scheduler's client QPS");
  flags.add_int("burst", &o.burst, 1, 1'000'000, "every scheduler's client burst");
  flags.add_int("creators", &o.creators, 1, 256, "threads creating pods");
  flags.add_int("binder-threads", &o.binder_threads, 1, 256, "the binder's threads");
  flags.add_bool("backlog", &o.backlog,
                 "create every pod before the scheduler starts; time from its start");
  flags.add_int("stall-seconds", &o.stall_seconds, 1, 3600,
                "a run ends when no pod was bound for this long");
  flags.add_int("seed", &o.seed, 0, std::numeric_limits<int64_t>::max(), "seeds the gang sizes");
  flags.add_string("kubeconfig", &o.kubeconfig,
                   "an existing cluster (its own: fake nodes are created there); default: start "
                   "the test control plane");
  flags.add_string("phalanxd", &o.phalanxd_binary, "the phalanxd binary to start");
  flags.add_string("phalanxd-flags", &o.phalanxd_flags,
                   "further phalanxd flags, space-separated (\"--log-level debug\")");
  flags.add_string("kube-scheduler", &o.kube_scheduler_binary,
                   "the kube-scheduler binary (default: the test control plane's)");
  flags.add_string("logs", &o.log_dir, "keep the schedulers' logs in this directory");
  return run_plain_mode("k8s", flags, o, args, command, &run_kube_bench);
}

} // namespace

int run_cli(const std::vector<std::string>& argv) {
  std::signal(SIGPIPE, SIG_IGN); // A daemon closing a connection must not kill the tester.
  if (argv.size() < 2 || argv[1] == "--help" || argv[1] == "-h" || argv[1] == "help") {
    std::cout << top_usage;
    return argv.size() < 2 ? 2 : 0;
  }
  const std::string& mode = argv[1];
  std::span<const std::string> args(argv.data() + 2, argv.size() - 2);
  const std::string command = quote_command(argv);
  if (mode == "push" || mode == "inproc")
    return run_scheduling_mode(mode, args, command);
  if (mode == "replay")
    return run_replay_mode(args, command);
  if (mode == "restart")
    return run_restart_mode(args, command);
  if (mode == "big-delete")
    return run_big_delete_mode(args, command);
  if (mode == "k8s-restart")
    return run_kube_restart_mode(args, command);
  if (mode == "k8s")
    return run_kube_bench_mode(args, command);
  std::cerr << "phalanx-loadtest: unknown mode \"" << mode
            << "\": expected push, inproc, replay, restart, big-delete, k8s-restart or k8s\n\n"
            << top_usage;
  return 2;
}

} // namespace phalanx::loadtest
