#pragma once

// The real traces of the replay mode, read into one normalised shape, and the clusters they run
// on (see /work/shared/data/README.md for where the data comes from):
//
// - philly: the normalised Philly subset (job_id,submit_s,num_pods,gpu_per_pod,cpu_per_pod,
//   mem_per_pod,duration_s,total_gpus,vc,timestamp); a job of more than 8 GPUs is already split
//   into pods of at most 8 GPUs. CPU and memory are blank (GPU-only requests). Queue: the VC.
// - pollux: name,time,application,num_replicas,batch_size. A job is num_replicas pods of one GPU
//   each. The trace has no durations: each application runs for a configured time
//   (--app-durations, defaults below). Queue: "default".
// - openb: the normalised Alibaba pods (job_id,submit_s,num_pods,gpu_per_pod,cpu_per_pod,
//   mem_per_pod_mib,duration_s,gpu_milli,...): single pods with cpu (cores, decimal), memory
//   (MiB) and whole GPUs (gpu_per_pod; a fractional gpu_milli share is rounded up to a whole GPU,
//   since the model has no GPU sharing). Queue: the QoS class, lowercased.
// The format is recognised from the header.
//
// Clusters:
// - the project's YAML cluster file (actors/cluster_file.hpp);
// - a node list CSV as openb ships it (sn,cpu_milli,memory_mib,gpu,model);
// - the VC sizes (vc,node num): every VC gets round(count * scale) nodes (at least 1) of 8 GPUs,
//   labelled phalanx.io/vc=<vc>, so that each VC is its own partition as in Philly;
// - a uniform synthetic cluster (N nodes of a given shape).
//
// Every reader reports a malformed line with the file, line, column and rule.

#include "loadtest/csv.hpp"

#include "scheduler/model.hpp"
#include "scheduler/simulation.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::loadtest {

enum class trace_format { philly, pollux, openb };
std::string_view to_string(trace_format f) noexcept; // "philly", "pollux", "openb"
inline constexpr trace_format trace_format_last = trace_format::openb;

/// One job of a trace, normalised.
struct trace_job {
  std::string name;
  std::size_t line = 0; // Where it came from.
  int64_t submit_s = 0;
  int32_t pods = 1;
  int64_t gpu_per_pod = 0;
  int64_t cpu_milli_per_pod = 0;
  int64_t memory_bytes_per_pod = 0;
  int64_t duration_s = 0;
  /// The VC (philly), the application (pollux) or the QoS class (openb).
  std::string group;
  std::string queue;
};

struct trace_read_options {
  /// pollux: how long each application runs. Default: see default_app_durations().
  std::map<std::string, int64_t> app_duration_s;
  /// pollux: the duration of an application not listed. Default: 1 h.
  int64_t default_duration_s = 3600;
  /// Read at most this many jobs (0: all). Default: 0.
  int64_t max_jobs = 0;
};

/// The applications of the Pollux workloads and a run time of the order their published
/// completion times show on an idle cluster: bert 30m, cifar10 15m, deepspeech2 1h, imagenet 12h,
/// ncf 2m, yolov3 2h.
std::map<std::string, int64_t> default_app_durations();

/// Parses "cifar10=15m,ncf=2m" into seconds (whole seconds, > 0); errors name the item.
result<std::map<std::string, int64_t>> parse_app_durations(const std::string& text);

struct trace {
  trace_format format = trace_format::philly;
  std::string source;
  std::vector<trace_job> jobs;
};

/// Reads a trace from CSV text; `source` names it in errors. Jobs keep the file's order; the
/// replay orders them by submit time (stable).
result<trace> read_trace(std::string_view text, std::string source,
                         const trace_read_options& options = {});

/// The label that puts a node in a VC partition.
inline constexpr std::string_view vc_label = "phalanx.io/vc";

struct replay_cluster {
  std::vector<scheduler::node> nodes;
  /// How it was made, for the report ("philly vc_nodes.csv x 0.5: 184 nodes, 1472 GPUs").
  std::string description;
  /// VC -> node indices, when the cluster came from VC sizes; empty otherwise.
  std::map<std::string, std::vector<std::size_t>> partitions;
  /// VC -> node count before scaling.
  std::map<std::string, int64_t> vc_sizes;
};

/// Shape of VC nodes and synthetic nodes.
struct node_shape {
  int64_t cpu_milli = 64000;
  int64_t memory_bytes = int64_t{512} << 30;
  int64_t gpus = 8;
  int64_t pods = 110;
};

/// From a VC size list (vc,node num). `scale` > 0 multiplies every VC (rounded, at least 1 node).
result<replay_cluster> cluster_from_vc_sizes(std::string_view text, std::string source,
                                             double scale, const node_shape& shape = {});
/// From an openb node list (sn,cpu_milli,memory_mib,gpu,model).
result<replay_cluster> cluster_from_node_list(std::string_view text, std::string source);
/// From the project's YAML cluster file.
result<replay_cluster> cluster_from_yaml(const std::string& text, std::string source);
/// `count` identical nodes.
replay_cluster uniform_cluster(int64_t count, const node_shape& shape);

/// How trace jobs become simulated jobs.
struct replay_model {
  /// The pods of a gang are created this far apart, in order (a controller creating them one by
  /// one); 0 creates them together with the job. Default: 0.
  int64_t pod_interval_ns = 0;
  /// Pods of a multi-pod job start their work only once the whole gang runs (distributed
  /// training waits for its peers). Default: true.
  bool wait_for_gang = true;
  /// Pods select their VC's nodes (nodeSelector phalanx.io/vc) when the cluster has partitions.
  /// Default: true.
  bool pin_to_vc = true;
};

/// `name` made a DNS-1123 name: lowercase, other characters than [a-z0-9.-] replaced by '-'.
std::string dns_safe_name(std::string_view name);

/// The simulated jobs, ordered by submit time (stable), arrival relative to the first job.
/// Names are made DNS-1123 safe (lowercase). Jobs whose VC has no partition are pinned to nothing.
std::vector<scheduler::sim_job> to_sim_jobs(const trace& t, const replay_model& model,
                                            const replay_cluster& cluster);

} // namespace phalanx::loadtest
