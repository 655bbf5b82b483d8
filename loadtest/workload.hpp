#pragma once

// The synthetic workload of the push and inproc modes: a simulated cluster of uniform CPU nodes
// plus tainted GPU nodes, and PodGroups whose sizes, requests, queues and priorities follow
// configurable distributions. Generation is deterministic: the same spec and seed give the same
// cluster and gangs, so push, inproc and the planner's tight loop see identical work.
//
// The spec's distributions are written on the command line:
//   --gang-sizes "1:40,2-8:30,9-32:20,33-64:10"   size ranges (uniform inside) with weights
//   --queues "research:1,production:2,batch:4"   queue names with their fair-share weights
//   --priorities "0:80,100:15,1000:5"            priority values with weights
// A gang of at least `ps_min_gang` pods has one "ps" pod and the rest "worker" pods, each role
// with its minTaskMember; smaller gangs have one role, "worker".

#include "api/service.hpp"

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::loadtest {

/// A range of gang sizes [min, max], drawn uniformly, chosen with `weight`.
struct size_bucket {
  int32_t min = 1;
  int32_t max = 1;
  double weight = 1;
  friend bool operator==(const size_bucket&, const size_bucket&) = default;
};

/// A value chosen with `weight` (priorities).
struct weighted_value {
  int32_t value = 0;
  double weight = 1;
  friend bool operator==(const weighted_value&, const weighted_value&) = default;
};

struct queue_spec {
  std::string name;
  int32_t weight = 1;
  friend bool operator==(const queue_spec&, const queue_spec&) = default;
};

/// Parses "1:40,2-8:30,33-64:10". Errors name the item and the rule (sizes 1..10000, min <= max,
/// weight > 0, at least one item).
result<std::vector<size_bucket>> parse_gang_sizes(const std::string& text);
/// Parses "research:1,production:2" (DNS-1123 names, unique, weights 1..65535).
result<std::vector<queue_spec>> parse_queues(const std::string& text);
/// Parses "0:80,100:15,1000:5" (priorities 0..1000000000, weights > 0).
result<std::vector<weighted_value>> parse_priorities(const std::string& text);
/// Parses "250m-2" or "1": an inclusive range of a resource amount in its unit (cpu in
/// millicores, memory in bytes), min <= max, min > 0.
result<std::pair<int64_t, int64_t>> parse_amount_range(std::string_view resource,
                                                       const std::string& text);

struct workload_spec {
  /// Nodes of the simulated cluster. Default: 5,000.
  int64_t nodes = 5000;
  /// Allocatable of every node. Default: 64 cpu, 256 GiB, 110 pods.
  int64_t node_cpu_milli = 64000;
  int64_t node_memory_bytes = int64_t{256} << 30;
  int64_t node_pods = 110;
  /// Share of the nodes that carry GPUs (tainted nvidia.com/gpu=present:NoSchedule, labelled
  /// accelerator=gpu). Default: 0.25.
  double gpu_node_fraction = 0.25;
  /// GPUs per GPU node. Default: 8.
  int64_t gpus_per_node = 8;

  /// PodGroups to submit. Default: 10,000.
  int64_t podgroups = 10000;
  std::vector<size_bucket> gang_sizes = {{1, 1, 40}, {2, 8, 30}, {9, 32, 20}, {33, 64, 10}};
  /// Per-pod cpu request range, in steps of 250m. Default: 250m to 2.
  int64_t pod_cpu_min_milli = 250;
  int64_t pod_cpu_max_milli = 2000;
  /// Per-pod memory request range, in steps of 256 MiB. Default: 512 MiB to 4 GiB.
  int64_t pod_memory_min_bytes = int64_t{512} << 20;
  int64_t pod_memory_max_bytes = int64_t{4} << 30;
  /// Share of the gangs whose pods request GPUs (and tolerate the GPU taint). Default: 0.05.
  double gpu_gang_fraction = 0.05;
  /// GPUs per pod of a GPU gang. Default: 1.
  int64_t gpus_per_pod = 1;
  std::vector<queue_spec> queues = {{"research", 1}, {"production", 2}, {"batch", 4}};
  std::vector<weighted_value> priorities = {{0, 80}, {100, 15}, {1000, 5}};
  /// Gangs of at least this many pods get a "ps" role of one pod. Default: 4.
  int32_t ps_min_gang = 4;
  /// How long each pod runs once Running (sim.phalanx.io/duration); nullopt: until the end of
  /// the run. Default: nullopt.
  std::optional<int64_t> pod_duration_ns;
  /// The namespace of every gang. Default: "loadtest".
  std::string namespace_name = "loadtest";
  /// Seed of every random choice. Default: 1.
  uint64_t seed = 1;
};

/// One task of a gang: `count` identical pods.
struct gang_task {
  std::string role;
  int32_t count = 0;
  scheduler::resources requests; // Per pod, including pods: 1.
  bool gpu = false;              // Tolerates the GPU taint.
};

struct gang_spec {
  int64_t index = 0;
  std::string name; // "pg-000042"
  std::string queue;
  int32_t priority = 0;
  std::vector<gang_task> tasks;
  int32_t size() const noexcept;
  /// The sum of every pod's requests.
  scheduler::resources total_requests() const;
};

struct workload {
  std::vector<scheduler::node> nodes;
  std::vector<gang_spec> gangs;
  int64_t total_pods = 0;
  scheduler::resources total_requests;
  scheduler::resources capacity; // Sum of allocatable.
  /// Pods per size bucket, for the report.
  std::vector<int64_t> gangs_per_bucket;
};

/// Checks a spec (counts, ranges, distributions). Errors name the flag.
status validate(const workload_spec& spec);

/// Generates the cluster and the gangs. Precondition: validate(spec) is ok.
workload generate_workload(const workload_spec& spec);

/// Whether a generated workload can run on its cluster, judged before anything is submitted.
///
/// A gang can never run when its pods cannot be placed on the empty cluster, whatever else runs.
/// Two necessary conditions are checked per gang, each exact for the workload's node shapes
/// (every node is one of at most two shapes: CPU nodes, and GPU nodes that only gangs which
/// tolerate the GPU taint may use):
///   - every pod fits, resource by resource, on some node it may use ("a worker pod asks 16
///     nvidia.com/gpu; the largest node it may use has 8");
///   - for each task (role), its count fits the nodes it may use with the cluster empty:
///     count <= sum over those nodes of min over resources floor(allocatable / request), and the
///     gang's whole request fits their sum, resource by resource.
/// A gang failing either is refused. Passing both does not promise a placement (two tasks still
/// compete for the same nodes), but the stall check (--stall-after) stops such a run early.
///
/// Total demand above capacity is not a refusal when pods complete (--pod-duration): gangs
/// queue, as on a real cluster, and the warning says what fraction was asked. When pods run
/// until the end, the run waits for every gang to run at once, which can never happen: refused.
/// Demand is checked on every node, and for pods that do not tolerate the GPU taint on the CPU
/// nodes alone (each resource reported once).
struct fit_check {
  /// Each names a gang (the first of its kind, and how many more) and the resource; non-empty:
  /// the workload can never run (phalanx-loadtest exits 2).
  std::vector<std::string> refusals;
  /// Total demand over capacity with completing pods: "the gangs ask 122% of the cluster's
  /// nvidia.com/gpu (4880 of 4000) in all; they will queue".
  std::vector<std::string> warnings;
};
fit_check check_fit(const workload& w, const workload_spec& spec);

/// The label every submitted object carries with its gang index, so watches map events back.
inline constexpr std::string_view gang_index_label = "loadtest.phalanx.io/gang";
/// The schedulerName of every job and pod, as Volcano's admission webhook sets it on a job that
/// names none: a runtime serving other names leaves them alone (inproc's backlog relies on it).
inline constexpr std::string_view workload_scheduler_name = "volcano";

/// The priority class name of a priority value: "" for 0, else "loadtest-p<value>".
std::string priority_class_of(int32_t priority);
/// The priority classes the workload uses (class name -> value), for phalanxd's config.
std::vector<std::pair<std::string, int32_t>> priority_classes(const workload_spec& spec);

/// A Volcano job for the gang: one task per role, minAvailable = gang size.
api::job_object to_job(const gang_spec& gang, const workload_spec& spec);
/// The PodGroup for the gang (minMember = size, minTaskMember per role, minResources = sum).
api::pod_group_object to_pod_group(const gang_spec& gang, const workload_spec& spec);
/// The gang's pods, joining the PodGroup by name ("<gang>-<role>-<i>").
std::vector<api::pod_object> to_pods(const gang_spec& gang, const workload_spec& spec);
/// The queue objects.
std::vector<api::queue_object> to_queues(const workload_spec& spec);

} // namespace phalanx::loadtest
