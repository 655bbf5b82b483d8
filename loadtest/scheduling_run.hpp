#pragma once

// What the push and inproc modes share: their options, the recorder of a run (when each gang was
// acknowledged and when it was seen running), the sampler of the scheduler's metrics (pods
// scheduled, per-queue allocated and deserved) and the report they both write.
//
// Gang decision latency comes from the runtime's own histogram phalanx_gang_decision_seconds
// (from a planning slot granted to every node committed, per committed round): quantiles are
// interpolated inside its buckets, and the max is the upper bound of the highest non-empty
// bucket. The recorder adds the exact client-side latency from a gang's submission being
// acknowledged to its PodGroup being seen Running (queueing included).

#include "loadtest/flags.hpp"
#include "loadtest/progress.hpp"
#include "loadtest/stats.hpp"
#include "loadtest/workload.hpp"

#include "actors/runtime.hpp"

#include <boost/json/object.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::loadtest {

/// How gangs are submitted.
enum class submit_method {
  jobs,      // One Volcano job per gang: its PodGroup and pods in one request.
  podgroups, // A PodGroup, then each of its pods, one request each.
};
std::string_view to_string(submit_method m) noexcept; // "jobs", "podgroups"
inline constexpr submit_method submit_method_last = submit_method::podgroups;

/// Options of push and inproc.
struct run_options {
  workload_spec workload;
  submit_method submit = submit_method::jobs;
  /// Requests (push: client connections, one thread each) or service calls (inproc) in flight.
  int64_t concurrency = 0; // 0: the mode's default.
  /// How often the metrics are sampled for the time series. Default: 100 ms.
  int64_t sample_interval_ns = 100'000'000;
  /// Give up waiting for every gang after this. Default: 10 minutes.
  int64_t timeout_ns = int64_t{600} * 1'000'000'000;
  /// Stop early when no gang started or completed for this long (0: never). With a pod duration
  /// D the gangs may run D without completing, so the default then becomes 30 s + D, and a
  /// shorter value given on the command line is refused. Default: 30 s.
  int64_t stall_after_ns = int64_t{30} * 1'000'000'000;
  /// Spread gangs over this many namespaces ("<namespace>-<i>"). Default: 4.
  int64_t namespaces = 4;
  /// Scheduler worker threads (inproc; push: the phalanxd it starts). Default: 2.
  int64_t threads = 2;
  std::string json_path;
  std::string html_path;
  /// Keep the temporary directory (store, logs). Default: false.
  bool keep = false;
  /// Where temporary directories go. Default: $TMPDIR or /tmp.
  std::string work_dir;
  /// check_fit's warnings, for the report's "workload". Default: none.
  std::vector<std::string> fit_warnings;
  /// The command line, for the report.
  std::string command;
  std::vector<std::pair<std::string, std::string>> flags_given;
};

/// How a push or inproc run ended: the report's "outcome".
enum class run_outcome {
  completed,   // Every gang ran (with a pod duration: every gang completed).
  failed,      // It could not go on: the daemon exited, or submissions failed and nothing moved
               // for 10 s after the last one.
  stalled,     // No gang started or completed for stall_after_ns.
  timed_out,   // timeout_ns passed while gangs still started or completed.
  interrupted, // SIGINT or SIGTERM (interrupt.hpp): the figures are partial.
};
std::string_view to_string(run_outcome o) noexcept; // "completed", "failed", "stalled", ...
inline constexpr run_outcome run_outcome_last = run_outcome::interrupted;

/// Flag values that need parsing after the flags were read.
struct run_flag_texts {
  std::string submit = "jobs";
  std::string gang_sizes = "1:40,2-8:30,9-32:20,33-64:10";
  std::string queues = "research:1,production:2,batch:4";
  std::string priorities = "0:80,100:15,1000:5";
  std::string pod_cpu = "250m-2";
  std::string pod_memory = "512Mi-4Gi";
  std::string node_cpu = "64";
  std::string node_memory = "256Gi";
  int64_t pod_duration_ns = 0; // 0: pods run until the end.
  int64_t seed = 1;
  bool stall_after_given = false; // Set by finish_run_flags' caller: --stall-after was given.
};

/// Declares the flags push and inproc share on `flags`, writing into `o` and `texts`.
void add_run_flags(flag_set& flags, run_options& o, run_flag_texts& texts);
/// Applies the parsed texts to `o` and validates the workload; errors name the flag.
status finish_run_flags(run_options& o, const run_flag_texts& texts);

/// The namespace of gang `index`.
std::string namespace_of(const run_options& o, int64_t index);

/// Per-queue figures of one metrics sample.
struct queue_point {
  double allocated_cpu = 0; // Cores.
  double allocated_memory = 0;
  double allocated_gpu = 0;
  double allocated_pods = 0;
  double deserved_cpu = 0;
  double deserved_memory = 0;
  double deserved_gpu = 0;
};

/// One sample of the scheduler's metrics during a run.
struct run_sample {
  double t = 0; // Seconds since submission started.
  int64_t pods_scheduled = 0;
  int64_t pods_submitted = 0; // Acknowledged by the scheduler.
  int64_t pods_running = 0;   // In gangs seen Running.
  std::map<std::string, queue_point> queues;
};

/// Reads a sample's scheduler figures from parsed metrics.
run_sample sample_from_metrics(const std::vector<prom_sample>& metrics,
                               const std::vector<queue_spec>& queues);

/// True when a sample shows every pod of the workload scheduled and accounted to its queue
/// (the queues' gauges lag the watch by a few messages).
bool settled(const run_sample& s, int64_t total_pods);

/// Tracks one run. acknowledged/observed_* are thread-safe and cheap (watch callbacks call them).
class run_recorder {
 public:
  explicit run_recorder(const workload& w);

  /// Marks the start of submission (t = 0).
  void start();
  double seconds_since_start() const;

  /// One object of gang `index` was acknowledged; the gang counts as submitted once `of` were.
  void acknowledged(int64_t index, int32_t of);
  void observed_running(int64_t index);
  void observed_completed(int64_t index);
  /// A submission failed: counted, and the first messages kept.
  void failed(const std::string& message);

  int64_t gangs_submitted() const { return gangs_submitted_.load(); }
  int64_t pods_submitted() const { return pods_submitted_.load(); }
  int64_t gangs_running() const { return gangs_running_.load(); }
  int64_t pods_running() const { return pods_running_.load(); }
  int64_t gangs_completed() const { return gangs_completed_.load(); }
  int64_t pods_completed() const { return pods_completed_.load(); }
  int64_t failures() const { return failures_.load(); }
  std::vector<std::string> failure_messages() const;

  void add_sample(run_sample s);
  std::vector<run_sample> samples() const;

  /// Seconds since start of the last gang's submission, Running and completion; -1 when none.
  double last_submitted_s() const;
  double last_running_s() const;
  double last_completed_s() const;
  /// Milliseconds from acknowledged to Running per gang that has both.
  std::vector<double> submit_to_running_ms() const;

 private:
  const workload* workload_;
  std::chrono::steady_clock::time_point t0_;
  struct gang_times {
    std::atomic<int32_t> acked{0};
    std::atomic<int64_t> submitted_ns{-1};
    std::atomic<int64_t> running_ns{-1};
    std::atomic<int64_t> completed_ns{-1};
  };
  std::unique_ptr<gang_times[]> gangs_;
  std::atomic<int64_t> gangs_submitted_{0}, pods_submitted_{0}, gangs_running_{0}, pods_running_{0},
      gangs_completed_{0}, pods_completed_{0}, failures_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> failure_messages_;
  std::vector<run_sample> samples_;
  int64_t now_ns() const;
};

/// Handles one PodGroup as a watch shows it: finds the gang by its label and records Running or
/// Completed. Returns false when the PodGroup is not one of ours.
bool record_pod_group(run_recorder& r, const api::pod_group_object& g);

/// Extra figures a mode adds to the common report.
struct run_extras {
  std::string invariants_source; // "runtime" (the actors' own facts) or "api".
  actors::invariant_report invariants;
  bool invariants_checked = false;
  std::optional<histogram_data> decision_histogram;
  /// phalanx_gang_placed_seconds: the same rounds up to every node's yes vote, before the
  /// bindings' synced write (the decision made, not yet durable).
  std::optional<histogram_data> placed_histogram;
  /// phalanx_store_commit_seconds and phalanx_store_batch_records: the synced writes that every
  /// acknowledged change and every gang's bindings wait for.
  std::optional<histogram_data> store_commit_histogram;
  std::optional<histogram_data> store_batch_histogram;
  double setup_seconds = 0;         // Nodes and queues created.
  run_outcome outcome = run_outcome::completed;
  std::string outcome_message;      // describe_outcome's sentence.
  boost::json::object mode_figures; // Added as is (inproc: the tight loop, store).
  boost::json::object mode_parameters;
  std::vector<std::pair<std::string, std::string>> mode_summary;
};

/// Generates the run's workload, saying so on standard output ("<mode>: generating ...").
workload generate_announced(std::string_view mode, const workload_spec& spec);

/// Reads the runtime's histograms (decision, placed, store commit and batch) into `x`.
void read_runtime_histograms(const std::vector<prom_sample>& metrics, run_extras& x);

/// How a run is followed until its gangs run (or complete).
struct wait_plan {
  int64_t gangs = 0;
  bool wait_completion = false;  // Wait for every gang to complete, not only to run.
  int64_t timeout_ns = 0;
  int64_t sample_interval_ns = 0;
  std::chrono::milliseconds poll{2};
  int64_t stall_after_ns = 0; // 0: never stalls.
};

/// Follows the run: samples the metrics (`take_sample`) every sample interval and updates the
/// meter (pods in Running gangs, or in completed gangs when the plan waits for completion) until
/// it ends. completed: every gang runs (or completed); failed: failed submissions
/// left it without progress for 10 s, or `stop_early` said so; stalled: no gang started or
/// completed for plan.stall_after_ns (counted from the call); timed_out: plan.timeout_ns passed;
/// interrupted: interrupt_signal() is set (checked at every poll).
run_outcome wait_for_gangs(const wait_plan& plan, run_recorder& r, progress_meter& meter,
                           const std::atomic<bool>& submitter_done,
                           const std::function<void()>& take_sample,
                           const std::function<bool()>& stop_early);

/// One sentence on how the run ended, for the console and the report: "stalled: no gang started
/// or completed for 30s; 812 of 1000 gangs running, 0 completed". `seconds` is how long the run
/// had gone on.
std::string describe_outcome(run_outcome o, const wait_plan& plan, const run_recorder& r,
                             double seconds);

/// Builds the report of a push or inproc run.
boost::json::object build_run_report(std::string_view mode, const run_options& o, const workload& w,
                                     const run_recorder& r, const run_extras& extras,
                                     const boost::json::object& machine_at_start);

/// Creates a fresh directory "<base>/<prefix>XXXXXX"; the error names the path.
result<std::string> make_temp_dir(const std::string& base, const std::string& prefix);

/// Removes a directory tree when destroyed, unless released.
class dir_cleanup {
 public:
  explicit dir_cleanup(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}
  ~dir_cleanup();
  dir_cleanup(const dir_cleanup&) = delete;
  dir_cleanup& operator=(const dir_cleanup&) = delete;

 private:
  std::string path_;
  bool keep_;
};

/// A JSON number, or null when not finite.
boost::json::value json_number(double v);

} // namespace phalanx::loadtest
