#pragma once

// Shared pieces of the crash tests (tests/crash/): scratch directories, the seeded gang workload
// (PodGroups and their pods as the API takes them), reading the whole state back through the
// HTTP API, and the invariant checks of DESIGN.md section 8 on that state (I1, I2, I3; I5 is
// checked by each test against what it recorded as acknowledged).

#include "actors/runtime_config.hpp"
#include "api/client.hpp"
#include "api/service.hpp"
#include "storage/store.hpp"

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::crash_tests {

/// True when PHALANX_LONG_TESTS=1: run the long variants (ctest label `slow`).
bool long_tests();

/// A fresh directory under $TEST_TMPDIR, else /dev/shm, else /tmp, removed with its contents.
/// Durability here comes from the kernel keeping a killed process's writes, or from
/// power_loss_simulator, never from the disk, so a RAM file system only makes the tests faster.
class scratch_dir {
 public:
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::string& path() const { return path_; }
  std::string sub(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

/// Writes `text` to `path`; false on failure.
bool write_text_file(const std::string& path, const std::string& text);

/// The namespace of every workload object.
inline constexpr std::string_view workload_namespace = "crash";

/// The simulated cluster of the crash tests: `count` nodes "node-<i>", each 8 CPUs and 32 GiB.
struct cluster_shape {
  int count = 12;
  int64_t cpu_milli = 8000;
  int64_t memory_bytes = int64_t(32) << 30;
  /// The cluster file phalanxd reads (--cluster).
  std::string yaml() const;
  /// The nodes as API bodies (for an in-process runtime).
  std::vector<std::string> node_bodies() const;
  scheduler::resources total() const;
};

/// One gang of the workload: a PodGroup with `pods` pods and minMember `min_member` (pods, or
/// one less for an elastic gang whose last pod may start in a later round), and with roles one
/// "ps" and the rest "worker" (minTaskMember ps: 1, worker: min_member - 1) when `roles`.
struct gang_spec {
  std::string name;
  int pods = 1;
  int min_member = 1;
  bool roles = false;
  int64_t cpu_milli = 500;  // Per pod.
  int64_t memory_bytes = 0; // Per pod.
  int duration_ms = 50;     // sim.phalanx.io/duration of every pod.
  /// minResources exceed the whole cluster: the enqueue gate never admits it (Pending forever).
  bool oversized = false;
  /// The PodGroup asks for placeholders (scheduling.phalanx.io/reserve-missing-members).
  bool reserve_missing_members = false;

  scheduler::resources min_resources() const;
  std::string pod_name(int index) const;
  std::string role_of(int index) const;
  std::string podgroup_body() const;
  std::string pod_body(int index) const;
};

/// A seeded workload of `count` gangs of 1-4 pods on `cluster`; about a quarter of the gangs of
/// 3-4 pods are elastic (minMember = pods - 1); about one in 100 is oversized (none when count <
/// 100). Names are "g<seed>-<i>".
std::vector<gang_spec> make_gangs(uint64_t seed, int count, const cluster_shape& cluster,
                                  int max_duration_ms);

/// True when a gang's minResources fit the cluster's total: it must run eventually.
bool feasible(const gang_spec& g, const cluster_shape& cluster);

/// API paths of the workload namespace.
std::string pods_path();
std::string podgroups_path();

/// An object as read back through the API.
struct seen_pod {
  std::string group;
  std::string role;
  std::string node;
  scheduler::pod_phase phase = scheduler::pod_phase::pending;
  scheduler::resources requests;
  std::string uid;
};
struct seen_group {
  int32_t min_member = 0;
  std::vector<scheduler::role_minimum> min_task_member;
  scheduler::resources min_resources;
  scheduler::pod_group_phase phase = scheduler::pod_group_phase::pending;
  std::string uid;
};
struct api_state {
  std::map<std::string, seen_pod> pods;              // By "<namespace>/<name>".
  std::map<std::string, seen_group> groups;          // By "<namespace>/<name>".
  std::map<std::string, scheduler::resources> nodes; // Name -> allocatable.
  std::map<std::string, std::string> jobs;           // By "<namespace>/<name>": its uid.
  /// The largest resourceVersion the lists carried: a watch could start there.
  uint64_t resource_version = 0;
};

/// Lists jobs, pods, PodGroups and nodes (in that order; each list is one snapshot of the
/// registry). An error when a request fails, answers non-200, or a list does not decode, or names
/// an object twice (I1: one pod, one record).
result<api_state> read_state(api::http_client& client);
/// The same from lists already read (an in-process service's).
result<api_state> state_of(api::object_list pods, api::object_list groups, api::object_list nodes,
                           api::object_list jobs);

/// What the checks remember across observations and restarts, by pod uid (a name is used again
/// by a later pod): the node every pod was seen bound to and the furthest phase seen. A binding
/// or phase is shown only once durable, so after a restart it must still be there (I1's second
/// half and I5 for the runtime's own writes), unless the pod was deleted meanwhile.
struct observation_history {
  struct seen {
    std::string key;
    std::string node;
    scheduler::pod_phase phase = scheduler::pod_phase::pending;
    uint64_t deletions = 0; // deletions_of(key) when it was first seen.
  };
  std::map<std::string, seen> pods; // By uid.
  std::set<std::string> groups_ran; // PodGroups seen Running or Completed.
  /// Whether a pod that is missing now may have been deleted (its name's deletion acknowledged
  /// or in flight). Unset: nothing is ever deleted.
  std::function<bool(const std::string& key)> may_be_deleted;
  /// How many operations that may delete a key were sent so far: a pod gone after more were
  /// sent than when it was first seen was deleted, even if its name is in use again since.
  /// Unset: nothing is ever deleted.
  std::function<uint64_t(const std::string& key)> deletions_of;
  /// The same as it was before the state being checked was read (a pod first seen in it is
  /// recorded with this count). Unset: deletions_of.
  std::function<uint64_t(const std::string& key)> deletions_before_read;
};

/// Checks one state read through the API and records it in `history`:
///  I1: a pod seen bound to a node is still bound there (never unbound, never another node);
///  I2: per node, the requests of its non-terminal pods fit its allocatable;
///  I3: every PodGroup has 0 or >= minMember pods bound, and each role its minTaskMember.
///      Through the API every state is "at rest" for this check: the registry shows a round's
///      bindings only once they are durable, all of them in one step (one WriteBatch, applied in
///      one handler), and a restart serves exactly what was durable, so a gang seen with some but
///      not enough pods bound is a violation at any moment, right after a restart included.
///      (An elastic gang's later round binds pods beyond minMember: the count only grows.)
///      The workloads create a gang's pods before its PodGroup, so every member exists when the
///      gang is first planned and it never runs on placeholders (room held for members not
///      created yet, neither bound nor persisted). A gang on placeholders has fewer than minMember
///      pods bound by design, and the API shows their number only in a condition message that
///      the gang reports after its bindings are shown, so no API snapshot could check it;
///      PlaceholdersAcrossRestart (power_loss_test.cpp) covers them in process.
///  Phases never go back (Pending < Running < Succeeded/Failed) across observations.
/// Returns the violations (empty when all hold).
std::vector<std::string> check_state(const api_state& state, observation_history& history);

/// A workload body as the API decodes it (status ignored, as on a create); aborts on a body the
/// workload got wrong.
api::object decode_body(const std::string& body);

/// Opens (or creates) the store at `path` on the power-loss simulator `sim`, one load thread;
/// null with `error` set when it fails.
std::shared_ptr<storage::store>
open_store(const std::string& path, const std::shared_ptr<storage::power_loss_simulator>& sim,
           std::string& error);

/// A deterministic runtime configuration (CAF's test coordinator) with `seed`.
actors::runtime_config deterministic_config(uint64_t seed);

/// Joins violation texts for a failure message (at most `limit` of them).
std::string join(const std::vector<std::string>& lines, std::size_t limit = 20);

/// Runs `one(seed)` for the seeds first_seed .. first_seed + seeds - 1 on two threads (each seed
/// has a directory, a simulator and a runtime of its own, and spends much of its time waiting:
/// RocksDB pauses after a failed background flush) and returns the failures' messages (`one`
/// returns an empty one for a pass). No seed starts after `max_failures`: enough to debug with.
std::vector<std::string> run_seeds_on_two_threads(uint64_t first_seed, int seeds,
                                                  std::size_t max_failures,
                                                  const std::function<std::string(uint64_t)>& one);

// ------------------------------------------------------------------------------------------------
// Churn: names created, deleted and created again

/// A workload in which a few names are used again and again, as users do: Volcano Jobs (some
/// pods deleted on their own, so their keys hold tombstones), and gangs of a PodGroup and its
/// pods, each created, deleted (often while its pods are being bound) and created again under
/// the same name. Every name belongs to one client, which runs its operations one after another.
struct churn_job {
  std::string name;
  int workers = 1;       // Pods "<name>-worker-<i>".
  int ps = 0;            // Pods "<name>-ps-<i>".
  int64_t cpu_milli = 500;
  int duration_ms = 50;
  bool too_big = false;  // Its minAvailable cannot fit the cluster: it stays Pending.
  std::string body() const;
  std::vector<std::string> pod_names() const;
};

/// A seeded job shape for `name`: 1-8 workers, sometimes a ps, sometimes too big to fit.
churn_job make_churn_job(std::mt19937_64& rng, std::string name, const cluster_shape& cluster,
                         int max_duration_ms);
/// A seeded gang (PodGroup and pods) for `name`: 1-16 pods, sometimes elastic, sometimes with
/// roles, about one in ten with pods bigger than any node.
gang_spec make_churn_gang(std::mt19937_64& rng, std::string name, const cluster_shape& cluster,
                          int max_duration_ms);

std::string jobs_path();

/// What was acknowledged of every name of a churn, and the checks of a state read back against
/// it (I5 for creates and deletes: an acknowledged create present with its uid and, for a job,
/// all its pods; an acknowledged delete absent, pods and all), and of resource versions (never
/// handed out twice: a daemon's acknowledgments come after every earlier daemon's, and a list
/// after a restart is at or above all of them). Thread-safe.
class churn_book {
 public:
  enum class expect { absent, present, unknown };

  /// An operation on `key` ("<ns>/<name>") is on its way: until acknowledged it may or may not
  /// land.
  void sent(const std::string& key);
  /// The same for a job's creation or deletion: the job and the pods of every job of its name.
  void job_sent(const churn_job& job);
  /// Creations and deletions acknowledged (2xx) by daemon `generation` with `version`.
  void created(const std::string& key, const std::string& uid, uint64_t version,
               uint64_t generation);
  void deleted(const std::string& key, uint64_t version, uint64_t generation);
  /// A job's creation acknowledged: its pods exist with it.
  void job_created(const churn_job& job, const std::string& uid, uint64_t version,
                   uint64_t generation);
  /// A job's deletion acknowledged: its pods are gone with it.
  void job_deleted(const churn_job& job, uint64_t version, uint64_t generation);
  /// The operation was answered and did nothing (404 for a delete of what was absent, 409 for a
  /// create of what exists): `now` is what the answer proved.
  void settled(const std::string& key, expect now, const std::string& uid = "");
  /// A job read back after its outcome was unknown: present with `uid` (then with the pods of
  /// `job`'s shape, unless read back otherwise; with the uid acknowledged last, the calls since
  /// did not take, and its pods are that incarnation's, whatever `job`'s shape) or absent (its
  /// pods too).
  void job_settled(const churn_job& job, expect now, const std::string& uid);
  /// What is expected of a key now (absent for a key never used).
  expect expected(const std::string& key) const;
  bool may_be_deleted(const std::string& key) const;
  /// Operations sent on a key so far (for a job's pod: on its job too), for
  /// observation_history::deletions_of.
  uint64_t operations_on(const std::string& key) const;

  /// A new daemon generation starts: its acknowledgments must all be above every version
  /// acknowledged before (checked as they come, reported by check()).
  void new_generation(uint64_t generation);
  /// Checks `s` against what was acknowledged before it was read (take `before` with
  /// snapshot() right before reading). Returns the violations.
  struct snapshot_t;
  std::shared_ptr<const snapshot_t> snapshot() const;
  std::vector<std::string> check(const api_state& s, const snapshot_t& before,
                                 bool after_restart) const;
  /// operations_on(key) as it was when `before` was taken.
  static uint64_t operations_on(const snapshot_t& before, const std::string& key);

  struct counts {
    std::size_t sent = 0, creates = 0, deletes = 0, reused_names = 0;
  };
  counts totals() const;

 private:
  struct entry {
    expect state = expect::absent;
    std::string uid;
    bool job = false;
    std::vector<std::string> pods; // A job's pod keys.
    /// A job: one of its pods was deleted on its own since it was created. Its controller makes
    /// the pod again, and the new one may wait for room: its gang may be short of its minimum.
    bool lost_members = false;
    bool ever_created = false;
    uint64_t operations = 0;
    std::string history;  // What happened to the key, last few steps, for failure messages.
  };
  void acknowledge(uint64_t version, uint64_t generation);

  mutable std::mutex mutex_;
  std::map<std::string, entry> entries_;
  std::map<std::string, std::string> job_of_pod_; // A job pod's key -> its job's key.
  /// A job's pod, gone, that its job's controller may make again (the mutex held).
  bool may_be_made_again(const std::string& key) const;
  uint64_t generation_ = 0;
  uint64_t max_version_before_generation_ = 0; // The largest acknowledged by earlier daemons.
  uint64_t max_version_ = 0;
  std::vector<std::string> version_violations_;
  counts counts_;
};

/// One API call of a churn, and what its answer means to the book.
struct churn_call {
  enum class verb { create, remove, get } what = verb::create;
  api::resource_kind kind = api::resource_kind::pod;
  std::string name;                 // In workload_namespace.
  std::string body;                 // For a create: the JSON the API takes.
  std::optional<churn_job> job;     // For a job's create or delete.
  /// Books the answer. An error with errc::unavailable or errc::io_error means the outcome is
  /// unknown (the connection broke, the store refused after a crash): the book keeps the key
  /// unknown until it is read back.
  std::function<void(const result<api::object>&)> done;
};

/// The names of a churn and what to do next with each: a name's next script is planned from
/// the book (create what is absent, delete what is present, now and then a job's pod alone, a
/// delete right after its create so that it meets the pods being bound), or, while anything of
/// it is unknown, a read back that settles the book. Drivers run the calls of a name one after
/// another (in process or over HTTP). Not thread-safe: one driver thread per instance.
class churn_planner {
 public:
  churn_planner(uint64_t seed, churn_book& book, std::vector<std::string> job_names,
                std::vector<std::string> gang_names, cluster_shape cluster, int max_duration_ms);

  std::size_t size() const noexcept { return names_.size(); }
  /// The next calls of name `i`.
  std::vector<churn_call> plan(std::size_t i);
  /// Tells the book that `c` is on its way (call right before sending it).
  void sending(const churn_call& c);
  /// Acknowledgments from now on belong to daemon `generation`.
  void set_generation(uint64_t generation) { generation_ = generation; }
  /// Answers that were neither 2xx nor an unknown outcome, with what was asked: the workload is
  /// valid, so each is a failure of the test.
  const std::vector<std::string>& errors() const { return errors_; }
  std::size_t unknown_outcomes() const { return unknown_; }

 private:
  struct name_state {
    std::string name;
    bool is_job = false;
    std::optional<churn_job> job;   // What this planner last created under the name.
    std::optional<gang_spec> gang;
  };
  std::vector<std::string> keys_of(const name_state& n) const;
  void read_back(const name_state& n, std::vector<churn_call>& out);
  churn_call create_job(const churn_job& job);
  churn_call delete_job(const churn_job& job);
  churn_call delete_pod(const std::string& pod);
  std::function<void(const result<api::object>&)> created_by(std::string name);
  std::function<void(const result<api::object>&)> deleted_by(std::string name);
  void failed(const std::string& what, const status& s);

  std::mt19937_64 rng_;
  churn_book& book_;
  cluster_shape cluster_;
  int max_duration_ms_;
  std::vector<name_state> names_;
  uint64_t generation_ = 1;
  std::vector<std::string> errors_;
  std::size_t unknown_ = 0;
};

struct churn_book::snapshot_t {
  std::map<std::string, entry> entries;
  std::map<std::string, std::string> job_of_pod;
  uint64_t max_version = 0;
  std::vector<std::string> version_violations;
};

} // namespace phalanx::crash_tests
