#pragma once

// `phalanx-loadtest k8s`: Phalanx, kube-scheduler and a do-nothing binder side by side on one real
// kube-apiserver (issue 26 section 2), on the same fake nodes and the same pods, one after the
// other in one run:
//   - binder: binds each pod to the next node round-robin without looking at anything: the
//     ceiling this apiserver allows a scheduler (creations and Bindings compete for it);
//   - kube-scheduler: the one `make k8s-control-plane` builds (v1.37.2), default profile, its
//     client's QPS and burst raised to the same values as the others';
//   - phalanx: phalanxd in Kubernetes mode, leader election off, the same QPS and burst.
// Each scheduler gets a namespace of its own and is started and warmed up (one pod of its own
// bound) before the timed part; then the tool creates the pods as fast as the apiserver takes
// them (--creators threads, no client rate limit), while a watch of the namespace notes when each
// pod shows bound. A pod's latency runs from the moment its creation was answered to the moment
// the watch showed it bound; a scheduler's pods/s are its bound pods over the time from the first
// creation to the last bind. On a machine where the apiserver creates pods slower than the
// schedulers bind them, that measures creation; --backlog creates every pod first and times from
// the scheduler's start (its start, its first list and the binds), as a restart with a backlog
// or a burst of submissions sees it. Afterwards its pods and PodGroups are deleted (grace period 0: no
// kubelet runs here) before the next scheduler starts, so each one sees the nodes empty.
//
// Workloads:
//   - basic: scheduler_perf's SchedulingBasic shape: --nodes nodes, --pods plain pods (100m cpu,
//     500Mi memory each);
//   - gang: --podgroups PodGroups of 1 to --max-gang-size pods (uniform, seeded), each with
//     minMember equal to its size, the pods annotated with their group; their cpu requests add
//     up to --demand times the cluster's cpu. Above 1 not every gang fits: kube-scheduler, placing
//     pod by pod, may leave gangs partly bound, holding room none of them can use (a deadlock);
//     it is reported per scheduler (partial_gangs), never hidden.
// Checked from the apiserver's objects at the end of each scheduler's run: no pod was seen bound
// to one node and then another (I1), no node holds more than its allocatable cpu or pod count
// (I2), and, for Phalanx, every gang is bound whole or not at all (I3). The binder looks at
// nothing and overcommits nodes when the pods do not fit: its checks are reported, not targets.
//
// Without --kubeconfig the tool starts the test control plane itself (k8s/testing, built by
// `make k8s-control-plane`; nothing is built here) and stops it at exit. With --kubeconfig it
// creates its fake nodes on that cluster (labelled phalanx.io/bench=true) and deletes them at the
// end: use a cluster of its own.

#include "scheduler/result.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace phalanx::loadtest {

struct kube_bench_options {
  /// "basic" or "gang". Default: basic.
  std::string workload = "basic";
  /// Default: 5,000 nodes (32 cpu, 128Gi, 110 pods each).
  int64_t nodes = 5000;
  /// basic: the pods. Default: 10,000.
  int64_t pods = 10000;
  /// gang: the PodGroups, their largest size, and their pods' cpu over the cluster's.
  /// Default: 10,000, 64 and 0.8.
  int64_t podgroups = 10000;
  int64_t max_gang_size = 64;
  double demand = 0.8;
  /// Comma-separated, run in this order. Default: all three.
  std::string schedulers = "binder,kube-scheduler,phalanx";
  /// Every scheduler's client: requests per second and burst. Default: 5,000 and 5,000.
  double qps = 5000;
  int64_t burst = 5000;
  /// Threads creating pods, and the binder's threads posting Bindings. Default: 16 and 16.
  int64_t creators = 16;
  int64_t binder_threads = 16;
  /// Create every pod before the scheduler starts, and time from its start: what it decides and
  /// binds per second when creation is not what limits it (on a small machine the apiserver
  /// creates pods slower than a scheduler binds them). Latencies then count from its start.
  /// Default: false (streaming: pods created while it runs).
  bool backlog = false;
  /// A scheduler's run ends when every pod is bound or no pod was bound for this long.
  /// Default: 60 s.
  int64_t stall_seconds = 60;
  /// Seeds the gang sizes. Default: 1.
  int64_t seed = 1;
  /// An existing cluster's kubeconfig; empty: start the test control plane.
  std::string kubeconfig;
  /// Default: the phalanxd this build made, and the control plane's kube-scheduler.
  std::string phalanxd_binary;
  std::string kube_scheduler_binary;
  /// Further phalanxd flags, space-separated ("--log-level debug"). Default: none.
  std::string phalanxd_flags;
  /// Where the schedulers' logs are kept. Default: a temporary directory, removed when every
  /// run passed its checks.
  std::string log_dir;
  std::string json_path;
  std::string html_path;
  std::string command;
  std::vector<std::pair<std::string, std::string>> flags_given;
};

/// Checks the options (the error names the flag): a workload or a scheduler not known, a
/// scheduler named twice.
status validate(const kube_bench_options& options);

result<boost::json::object> run_kube_bench(const kube_bench_options& options);

} // namespace phalanx::loadtest
