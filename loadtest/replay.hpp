#pragma once

// `phalanx-loadtest replay`: a trace-driven simulation on a simulated clock (the pure
// scheduler::simulate, weeks of trace in seconds) of a real trace on a cluster, under several
// policies in one run: pod-by-pod (the default scheduler's behaviour, with deadlock detection),
// gang FIFO, Volcano-like (queues and backfill, no starving-gang reservation) and Phalanx's full
// policy (scheduler/simulation.hpp). Reports per policy the mean and p95 job completion time,
// overall and per queue, the mean queueing delay, the longest wait of a big gang, GPU (and cpu)
// utilization, the deadlocked and starved jobs, and with --preemption or --reclaim the evictions
// and the GPU time they wasted (those of reclaim also on their own), with the cluster used.
//
// Priorities: the traces have none. --priority-gpus N gives priority_high to every job asking
// for at least N GPUs in all (an admin's "big training jobs first"), 0 to the others; the gang
// order of volcano-like and phalanx then puts them first in their queue, pod-by-pod's pod order
// too, and with --preemption they evict lower-priority pods of their queue (sim_config::
// preemption). Gang FIFO ignores both.
//
// Partitions: a cluster made from VC sizes is, by default, simulated one VC at a time, each VC
// with its own scheduler queue over its own nodes, as Philly's virtual clusters ran (and as the
// Helios simulator replays them); --partition shared simulates one cluster in which jobs select
// their VC's nodes and share one queue order (a blocked head in one VC then holds up the others
// under the head-of-line policies); --partition pooled simulates one cluster in which every job
// may run on every node and the VCs are queues sharing it by weight, as Volcano's queues share a
// cluster (the setting reclaim is for: with pinned jobs, no queue can use another's nodes).
// Results are merged over partitions: JCT statistics over all jobs, utilization over the summed
// use of every partition on the whole cluster.
//
// Queues: one per VC (or per queue the trace names), weighted by the VC's node count (1 without
// VC sizes). --queue-parents VC=PARENT,... puts queues under parents (made as queues of weight 1,
// under the root unless named too), --queue-weights NAME=W,... sets any queue's weight, and
// --reclaim runs the live runtime's scheduling.reclaim (sim_config::reclaim) in volcano-like and
// phalanx.

#include "loadtest/trace.hpp"

#include "scheduler/simulation.hpp"

#include <boost/json/object.hpp>

#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace phalanx::loadtest {

struct replay_options {
  std::string trace_path;
  /// A YAML cluster file (actors/cluster_file.hpp) or a node list CSV (openb's). One of
  /// cluster_path, vc_path or uniform_nodes is required.
  std::string cluster_path;
  /// VC sizes (vc,node num): round(count * vc_scale) nodes of vc_shape per VC.
  std::string vc_path;
  double vc_scale = 1.0;
  /// A uniform cluster of this many nodes of `shape`.
  int64_t uniform_nodes = 0;
  node_shape shape;
  /// "auto" (separate when the cluster has VC partitions), "separate", "shared" or "pooled".
  std::string partition = "auto";
  std::vector<scheduler::sim_policy> policies = {
      scheduler::sim_policy::pod_by_pod, scheduler::sim_policy::gang_fifo,
      scheduler::sim_policy::volcano_like, scheduler::sim_policy::phalanx};
  replay_model model;
  trace_read_options read;
  /// phalanx: how long a gang may stay blocked before it reserves nodes (0: never, as
  /// volcano-like). Default: 6 hours, as scheduling.starvationBound.
  int64_t starvation_bound_ns = int64_t{6} * 3600 * 1'000'000'000;
  /// From bind to Running. Default: 0.
  int64_t pod_start_delay_ns = 0;
  /// Stop the simulated clock here (0: run until nothing is left). Default: 0.
  int64_t end_time_ns = 0;
  /// Jobs asking for at least this many GPUs in all get priority_high, the others 0 (0: every
  /// job 0). Default: 0.
  int64_t priority_gpus = 0;
  /// volcano-like and phalanx: preemption within a queue (sim_config::preemption). Default: false.
  bool preemption = false;
  /// volcano-like and phalanx: reclaim across queues (sim_config::reclaim); refused with separate
  /// partitions, where a partition has one queue. Default: false.
  bool reclaim = false;
  /// (queue, parent) pairs: the queue (a VC, a queue the trace names, or a parent) goes under the
  /// parent, which is made as a queue of weight 1 if it is none of those. Default: none.
  std::vector<std::pair<std::string, std::string>> queue_parents;
  /// (queue, weight) pairs, overriding the VC-size weights and parents' weight 1. Default: none.
  std::vector<std::pair<std::string, int64_t>> queue_weights;
  /// Simulations run at once. Default: 1.
  int64_t parallel = 1;
  uint64_t seed = 1;
  std::string json_path;
  std::string html_path;
  std::string command;
  std::vector<std::pair<std::string, std::string>> flags_given;
};

/// A big job, for the longest-wait figure: it asks for at least this many GPUs in all (one pod
/// or several), a whole 8-GPU node or more, the jobs that starve when small ones keep every node
/// partly used. On the Philly excerpt of 5,000 jobs: 144 (131 single 8-GPU pods, 13 gangs).
inline constexpr int64_t big_job_gpus = 8;

/// The priority --priority-gpus gives big jobs.
inline constexpr int32_t priority_high = 1000;

/// Gives priority_high (the PodGroup's and every pod's) to each job asking for at least `gpus`
/// GPUs in all; 0 changes nothing.
void apply_priority_gpus(std::vector<scheduler::sim_job>& jobs, int64_t gpus);

/// One queue's jobs (a VC under Philly).
struct queue_outcome {
  int64_t jobs = 0;
  int64_t completed = 0;
  /// Over all its jobs, a job that did not complete counted with the time from its arrival to
  /// the end of the run (censored: a lower bound); 0 when it has no job.
  double mean_jct_s = 0;
  double p95_jct_s = 0;
  /// Its jobs that did not complete, whose JCT is censored.
  int64_t jct_censored = 0;
  /// Over all its jobs, one that never started counted with the time from its arrival to the end
  /// of the run (a lower bound).
  double mean_queueing_s = 0;
  /// Preemption and reclaim: its pods evicted, and the GPU-hours they had run; and of those, the
  /// ones reclaim evicted.
  int64_t evicted_pods = 0;
  double wasted_gpu_hours = 0;
  int64_t reclaim_evicted_pods = 0;
  double reclaim_wasted_gpu_hours = 0;
  /// Its big jobs (big_job_gpus), those of them that waited to start (time_to_start > 0), and
  /// their mean and longest wait over the started ones (0 when none).
  int64_t big_jobs = 0;
  int64_t big_jobs_waited = 0;
  double big_mean_wait_s = 0;
  double big_longest_wait_s = 0;
};

/// The big jobs (big_job_gpus): how long they waited to start.
struct big_job_outcome {
  int64_t jobs = 0;
  int64_t started = 0;  // The others never started (starved, or stopped by end_time).
  /// Over started big jobs (time_to_start); 0 when none.
  double mean_wait_s = 0;
  double p95_wait_s = 0;
  double longest_wait_s = 0;
  std::string longest_wait_job;
};

/// One partition's figures under one policy.
struct partition_outcome {
  int64_t jobs = 0;
  /// From its first job's arrival to its last one's (to the end of its run when they all arrive
  /// at once): the window utilization is measured over, the same under every policy.
  double window_s = 0;
  /// Useful work in the window over its capacity in the window (see policy_outcome).
  double gpu_utilization = 0;
  double cpu_utilization = 0;
};

/// The merged outcome of one policy.
///
/// JCT and queueing cover every job. A job that never completed has a JCT of at least the time
/// from its arrival to the end of its partition's run, and one that never started a queueing
/// delay of at least that long: they are counted with those lower bounds (censored), not left
/// out, so a policy that never starts its hard jobs does not look faster for it; the counts say
/// how many were censored, and the means are then lower bounds.
///
/// Utilization is useful work: the GPU (cpu) time of the pods of jobs that started (reached
/// min_member running), from the start for the pod's run time, cut at the job's completion or
/// the end of the run; a job that never started, deadlocked ones included, did none, whatever it
/// held. It is measured over each partition's arrival window (partition_outcome::window_s), so
/// every policy is judged over the same time, and the drain at the end (or a deadlock holding
/// the cluster to the end) does not move the figure. Merged: the work of every partition over
/// the sum of each one's capacity times its window. A job evicted whole and started again
/// counts its run once, from its first start.
struct policy_outcome {
  scheduler::sim_policy policy = scheduler::sim_policy::phalanx;
  std::vector<scheduler::sim_job_result> jobs;
  int64_t completed = 0;
  int64_t deadlocked = 0;
  int64_t starved = 0; // Never started: Pending at the end.
  int64_t running = 0; // Started, unfinished at end_time.
  /// Jobs without a start (deadlocked or pending at the end).
  int64_t never_started = 0;
  /// Over every job, censored ones at their lower bound (see above).
  double mean_jct_s = 0;
  double p95_jct_s = 0;
  int64_t jct_censored = 0;
  double mean_queueing_s = 0;
  int64_t queueing_censored = 0;
  /// The same over completed (started) jobs only, as reported before censoring.
  double mean_jct_completed_s = 0;
  double mean_queueing_started_s = 0;
  /// Useful work over the arrival windows (see above).
  double gpu_utilization = 0;
  double cpu_utilization = 0;
  /// Held (allocated, useful or not) over the makespan, of the whole cluster: what a deadlock
  /// inflates. For comparison only.
  double gpu_held_fraction = 0;
  double cpu_held_fraction = 0;
  std::map<std::string, partition_outcome> partitions;
  double makespan_s = 0;
  int64_t events = 0;
  double wall_seconds = 0;
  std::vector<std::string> violations;
  /// By queue name (sim_job_result::queue).
  std::map<std::string, queue_outcome> queues;
  big_job_outcome big_jobs;
  /// Jobs that reserved nodes as starving gangs (phalanx).
  int64_t reserved = 0;
  /// Preemption and reclaim, summed over partitions (sim_summary): preemption plans and reclaim
  /// plans applied; over both, pods evicted, jobs that lost a pod, whole-gang evictions, and the
  /// GPU-hours the evicted pods had run; and the pods and GPU-hours of reclaim alone.
  int64_t preemptions = 0;
  int64_t reclaims = 0;
  int64_t evicted_pods = 0;
  int64_t evicted_jobs = 0;
  int64_t restarts = 0;
  double wasted_gpu_hours = 0;
  int64_t reclaim_evicted_pods = 0;
  double reclaim_wasted_gpu_hours = 0;
  /// (seconds, GPUs in use, cpu cores in use), merged over partitions.
  std::vector<std::array<double, 3>> utilization;
};

/// One partition's simulation, as merge_results takes it.
struct partition_run {
  std::string name;
  const scheduler::sim_result* result = nullptr;
  /// The jobs simulated, in the order of result->jobs (their arrivals and pods' run times).
  std::span<const scheduler::sim_job> jobs;
  /// Its nodes' allocatable.
  scheduler::resources capacity;
};

/// Merges per-partition simulation results of one policy (jobs in the order given, use summed).
/// `total` is the whole cluster's allocatable.
policy_outcome merge_results(scheduler::sim_policy policy, const std::vector<partition_run>& parts,
                             const scheduler::resources& total);

/// Runs the replay and returns its report (written to the JSON/HTML paths when set).
result<boost::json::object> run_replay(const replay_options& options);

/// The queues of a replay: one per VC of `vc_sizes` (named as to_sim_jobs names the jobs'
/// queues, weighted by node count), then one of weight 1 per other queue the jobs name, then the
/// parents of `parents` that are none of those (weight 1, under the root unless named in
/// `parents` too); `weights` then set weights. errc::invalid_argument naming the item: a queue
/// given a parent twice, or a weight outside [1, 65535] or for a queue that does not exist.
result<std::vector<scheduler::sim_queue>> replay_queues(
    const std::map<std::string, int64_t>& vc_sizes, std::span<const scheduler::sim_job> jobs,
    std::span<const std::pair<std::string, std::string>> parents,
    std::span<const std::pair<std::string, int64_t>> weights);

/// Parses "NAME=VALUE,NAME=VALUE" (--queue-parents, --queue-weights) into pairs in order; errors
/// name the item.
result<std::vector<std::pair<std::string, std::string>>> parse_name_values(
    const std::string& text);

/// Parses "pod-by-pod,gang-fifo,volcano-like,phalanx" (any of them, each once); errors name the
/// item.
result<std::vector<scheduler::sim_policy>> parse_policies(const std::string& text);

} // namespace phalanx::loadtest
