#pragma once

// Durable state in RocksDB (DESIGN.md section 5). This header is the whole interface the rest of
// Phalanx sees: it includes no RocksDB or protobuf header.
//
// - One column family per kind (nodes, queues, podgroups, pods, jobs, priorityclasses) plus meta
//   and quarantine.
//   Values are versioned protobuf records (storage/records.proto); meta holds the format version,
//   checked at open.
// - `write` applies batches as one atomic RocksDB WriteBatch with a synced WAL: when it returns ok
//   the change survives a power cut. The store-writer actor group-commits many callers' batches
//   into one `write` call; nothing else writes.
// - Holds are never persisted. A gang's bindings are one batch (all its pods with node names).
// - An undecodable record stops `load` with an error naming the column family and key, or, with
//   `quarantine_corrupt`, moves the record into the quarantine column family and goes on.
// - Every write also stores a commit number (meta "commit"), and after the synced write the store
//   appends that number, unsynced, to a small commit-mark file beside the database; the mark is
//   synced about once a second and at close. Point-in-time WAL recovery stops silently at the
//   first bad WAL record, so `open` compares the recovered commit number with the mark: a mark
//   ahead of the data means acknowledged writes were lost, and `open` fails (errc::corruption)
//   unless accept_lost_writes is set. See storage/README.md for what is and is not detected.

#include "scheduler/model.hpp"
#include "scheduler/object_status.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::storage {

/// The kinds of records, one column family each.
enum class record_kind { node, queue, pod_group, pod, job, priority_class };
std::string_view to_string(record_kind k) noexcept; // The column family name: "nodes", ...
inline constexpr record_kind record_kind_last = record_kind::priority_class;

/// The key of a namespaced object: "<namespace>/<name>"; of a cluster-scoped one: "<name>".
std::string object_key(std::string_view namespace_name, std::string_view name);

class power_loss_simulator;

struct store_options {
  /// The RocksDB directory.
  std::string path;
  /// Create the database when missing. Default: true.
  bool create_if_missing = true;
  /// On an undecodable record, move it to the quarantine column family and continue instead of
  /// failing `load`. Default: false (refuse to start, naming the key).
  bool quarantine_corrupt = false;
  /// Open even when the commit mark shows that acknowledged writes were lost (a corrupt WAL cut
  /// recovery short): the store continues from what it recovered and store::recovery() reports
  /// the loss. For an operator who has decided to go on; never set it by default.
  /// Default: false (open fails with errc::corruption).
  bool accept_lost_writes = false;
  /// Threads that decode column families in parallel in `load`; 0 means one per hardware
  /// thread. Default: 2.
  unsigned load_threads = 2;
  /// Tests of power loss: a file system that can drop unsynced data. Default: none.
  std::shared_ptr<power_loss_simulator> fault_injection;
};

/// What a restart loads.
struct queue_record {
  scheduler::queue queue;
};
struct pod_group_record {
  scheduler::pod_group group;
};
struct job_record {
  scheduler::job job;
  scheduler::job_status status;
};

/// A record that could not be decoded and was moved aside.
struct quarantined_record {
  record_kind kind;
  std::string key;
  std::string error;
};

/// What the store holds under the key of a pod that has no record of its own: a pod that exists
/// as its job's expansion (storage/README.md). Its state updates, or a tombstone.
struct pod_state_record {
  std::string key;  // "<namespace>/<name>"
  scheduler::pod_runtime state;
  bool deleted = false;
};

struct loaded_state {
  std::vector<scheduler::node> nodes;
  std::vector<queue_record> queues;
  std::vector<pod_group_record> pod_groups;
  std::vector<scheduler::pod> pods; // With phase, node_name and times.
  /// In key order. The runtime applies them to the pods it expands from `jobs`.
  std::vector<pod_state_record> pod_states;
  std::vector<job_record> jobs;
  std::vector<scheduler::priority_class> priority_classes;
  /// The largest resource_version of any record, so the runtime continues after it.
  uint64_t max_resource_version = 0;
  /// What the runtime keeps beside the records for its world (write_batch::put_world_meta): in
  /// Kubernetes mode, the binding intents not yet confirmed and each watch's resourceVersion; in
  /// standalone mode, the pods being deleted gracefully.
  /// By key, without the store's prefix.
  std::map<std::string, std::string> world_meta;
  /// The largest ceiling a batch reserved versions through (write_batch::reserve_versions_through),
  /// or 0: versions up to it may have been handed out (a delete's, which no record keeps), so the
  /// runtime continues after the larger of the two.
  uint64_t version_ceiling = 0;
  std::vector<quarantined_record> quarantined;
};

/// Changes to apply atomically. Records are serialized when added, in the caller's thread, so the
/// single writer mostly concatenates bytes; pods added as shared pointers are the exception
/// (see put(pod_ptr)). Movable, not copyable.
class write_batch {
 public:
  write_batch();
  ~write_batch();
  write_batch(write_batch&&) noexcept;
  write_batch& operator=(write_batch&&) noexcept;
  write_batch(const write_batch&) = delete;
  write_batch& operator=(const write_batch&) = delete;

  void put(const scheduler::node& n);
  void put(const queue_record& q);
  void put(const pod_group_record& g);
  void put(const scheduler::pod& p);
  void put(const job_record& j);
  void put(const scheduler::priority_class& c);
  /// The same as put(*p), but the key and record are made by store::write, in the thread that
  /// writes (Phalanx's store writer), not now. For pods created in bulk (a job's): the registry,
  /// which orders every change and is the scheduler's busiest actor, then does not encode them.
  /// The pod is shared and must not change any more.
  void put(std::shared_ptr<const scheduler::pod> p);
  /// Records a pod's runtime state (phase, node name, start and finish times, resource version)
  /// without rewriting the rest of it: a few dozen bytes merged into the pod's record instead of
  /// the whole pod encoded again, for every binding and phase change. The pod's record was put
  /// before (in an earlier batch or earlier in this one), or the pod is stored as its job and has
  /// no record (storage/README.md); only its key is read from `p`. The key and the update are
  /// made by store::write, in the thread that writes, like put(pod_ptr)'s.
  void put_pod_state(std::shared_ptr<const scheduler::pod> p, const scheduler::pod_runtime& state);
  /// Marks a pod deleted that has no record of its own (a job's pod stored as its job):
  /// erasing its key would let the job's expansion bring it back at the next start.
  void put_pod_tombstone(const scheduler::pod& p, uint64_t resource_version);
  void erase(record_kind kind, std::string key);
  /// Erases the key of every pod the job's creation makes (scheduler::job_pod_keys): the keys
  /// are made by store::write, in the thread that writes, like put(pod_ptr)'s, so a job of
  /// 300,000 pods costs its caller a pointer here rather than 300,000 keys. The job is shared
  /// and must not change any more.
  void erase_job_pods(std::shared_ptr<const scheduler::job> job);
  /// Keeps `value` under `key` in the world's own part of the meta column family, atomically
  /// with the rest of the batch (loaded_state::world_meta). For a runtime's small facts about
  /// the world it serves: Kubernetes mode's binding intents ("intent/<ns>/<name>") and watch
  /// resourceVersions ("watch/<collection>"); standalone mode's marks of pods being deleted
  /// gracefully ("terminating/<ns>/<name>"). `key` must not be empty.
  void put_world_meta(std::string key, std::string value);
  void erase_world_meta(std::string key);
  /// Records that resource versions up to `ceiling` may be handed out before the next such
  /// record is durable: the store keeps the largest ceiling it was ever given (meta
  /// "version_ceiling") and `load` returns it, so versions never go back across a restart, also
  /// those no record keeps (a delete's). Counts as one operation.
  void reserve_versions_through(uint64_t ceiling);
  /// The ceiling this batch reserves through; 0: none.
  uint64_t version_ceiling() const noexcept { return version_ceiling_; }

  std::size_t size() const noexcept;
  bool empty() const noexcept { return size() == 0; }
  /// Serialized bytes, for batching limits; pods put as shared pointers count as an estimate
  /// until store::write encodes them.
  std::size_t byte_size() const noexcept;

  enum class action {
    put,   // The value replaces the record.
    merge, // The value (a pod state update) is appended to the record; see put_pod_state.
    erase,
  };
  struct operation {
    record_kind kind;
    std::string key;   // Empty for a pod put by pointer until store::write makes it.
    std::string value; // Serialized record or update; empty for an erase or a pod by pointer.
    action what = action::put;
    /// A pod whose key (and, for a put, record) store::write makes, or null.
    std::shared_ptr<const scheduler::pod> pod;
    /// Set by put_pod_state only (with `pod`): the state update store::write encodes.
    std::optional<scheduler::pod_runtime> state;
    /// Set by erase_job_pods only: the job whose pods' keys store::write erases.
    std::shared_ptr<const scheduler::job> job;
    /// The key (with its prefix) is in the meta column family (put_world_meta); `kind` unused.
    bool world_meta = false;
  };
  const std::vector<operation>& operations() const noexcept { return ops_; }

 private:
  std::vector<operation> ops_;
  std::size_t bytes_ = 0;
  std::size_t job_pod_erases_ = 0; // Keys erase_job_pods will erase, beyond one per operation.
  uint64_t version_ceiling_ = 0;
};

struct store_stats {
  uint64_t writes = 0;          // Calls of write() that applied something.
  uint64_t records_written = 0; // Operations applied.
  uint64_t bytes_written = 0;
  uint64_t commit = 0;             // The commit number of the last durable write.
  uint64_t commit_mark_errors = 0; // Failed appends or syncs of the commit mark (best effort).
  /// What RocksDB's memtables (its write buffers, every column family) hold now, in bytes,
  /// counting those being flushed.
  uint64_t write_buffer_bytes = 0;
  /// Calls of flush_write_buffers() that succeeded (with something to flush or not).
  uint64_t write_buffer_flushes = 0;
  bool flushing = false; // A memtable flush is queued or running (RocksDB's own or ours).
};

/// What `open` found when it recovered the database.
struct recovery_info {
  /// The commit number of the last write the database recovered; 0 for a new store.
  uint64_t recovered_commit = 0;
  /// The largest commit number the commit mark says was acknowledged before the restart; 0 when
  /// no mark was found (a new store, or the mark file was lost: then nothing can be checked).
  uint64_t acknowledged_commit = 0;
  /// True when acknowledged_commit > recovered_commit and accept_lost_writes let open go on.
  bool lost_writes = false;
  /// True when the store was created by this open.
  bool created = false;
  /// The format version the store had when `open` upgraded it to format_version; 0 if it did not.
  uint32_t upgraded_from = 0;
};

/// The RocksDB store. Thread-safe for one writer and concurrent `load` before writing starts;
/// in Phalanx only the store-writer actor calls write(). Concurrent write() calls are serialized
/// inside (commit numbers must reach the WAL in order).
class store {
 public:
  /// Opens (or creates) the database, checks the format version, and recovers the WAL to the
  /// last consistent point. Errors: errc::failed_precondition for a newer or unknown format
  /// version or a database that is not a Phalanx store; errc::corruption for RocksDB-level
  /// corruption (MANIFEST, SST, WAL) and for acknowledged writes that recovery lost;
  /// errc::not_found for a missing directory with create_if_missing = false; errc::io_error
  /// otherwise (lock held by another process, permissions).
  static result<std::unique_ptr<store>> open(const store_options& options);

  ~store();
  store(const store&) = delete;
  store& operator=(const store&) = delete;

  /// Reads every record, decoding column families in parallel (store_options::load_threads).
  /// Fails with errc::corruption naming the column family and key of the first undecodable
  /// record ("podgroups/default/tf-1: record does not decode: ...") unless quarantine_corrupt is
  /// set; then the record is moved to the quarantine column family (one synced write), listed in
  /// loaded_state::quarantined, and left out. RocksDB-level corruption (a block checksum
  /// mismatch) fails with errc::corruption naming the column family. Pods of one template share
  /// their constraints and spec_json instances. Call before writing starts.
  result<loaded_state> load();

  /// Applies all batches as one atomic, synced write: when it returns ok every operation is
  /// durable; when it fails none was applied, or (an I/O error during the sync) the write may
  /// be durable but was not acknowledged. An empty write does nothing. Errors:
  /// errc::invalid_argument for an empty key or an unknown kind (nothing is written),
  /// errc::io_error otherwise.
  /// After an I/O error the database refuses further writes until reopened.
  status write(std::span<const write_batch* const> batches);
  status write(const write_batch& batch);

  /// Starts writing every memtable out to table files and returns without waiting; the memory
  /// each one holds is freed when its flush ends. For the writer to call once writes pause:
  /// otherwise what a burst wrote stays in memory until later writes fill the buffers (up to
  /// 32 MiB for pods) and also in the WAL a crash would replay. Nothing to flush is not an error.
  /// Errors: errc::unavailable while an earlier flush still writes (RocksDB keeps two memtables
  /// per column family: another switch would stop writes); errc::io_error after a failed write
  /// or with the injected file system crashed.
  status flush_write_buffers();
  /// Thread-safe.
  store_stats stats() const noexcept;
  const recovery_info& recovery() const noexcept;
  const std::string& path() const noexcept;

  /// The on-disk format version this build reads and writes.
  /// Version 2 added the pod state updates (put_pod_state) merged into pod records; a version 1
  /// store holds none and is upgraded at open by rewriting the version. Version 3 stores a job's
  /// pods as their job (keys with state updates and no record, tombstones: storage/README.md),
  /// which a build reading version 2 would take for damaged records; a version 1 or 2 store
  /// holds none, and is upgraded the same way. Version 4 added the `priorityclasses` family.
  /// Version 5 keeps a changed job's expansion version apart (JobRecord.expansion_version),
  /// which a build reading version 4 would ignore, making the job's pods at the wrong version
  /// and dropping their states; a version 4 store holds none.
  static constexpr uint32_t format_version = 5;

 private:
  struct impl;
  explicit store(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// A file system for tests that remembers what was synced and, on `crash()`, drops every byte
/// written after the last sync of each file (and files never synced), as a power cut would.
///
/// Model: a file's bytes are durable up to its last Sync/Fsync (RangeSync does not count, as
/// sync_file_range persists no metadata). A file created while the simulator watched and never
/// synced is removed at the crash unless its directory was fsynced after it was created. Renames
/// and deletions take effect at once. Files that existed before are taken as durable.
/// Thread-safe.
class power_loss_simulator {
 public:
  static std::shared_ptr<power_loss_simulator> create();
  virtual ~power_loss_simulator() = default;

  /// Simulates the power cut: unsynced data is gone, and every later mutating file operation
  /// (append, sync, create, rename, delete) fails with an I/O error until reset(). The store using
  /// it must be destroyed before reset().
  virtual void crash() = 0;
  /// Simulates the process dying (kill -9) without a power cut: every later mutating file
  /// operation fails until reset(), but nothing already written is lost, synced or not (the
  /// operating system keeps it). The store can then be destroyed without flushing anything.
  virtual void kill() = 0;
  /// Crashes inside the n-th mutating file operation from now (n >= 1): that operation fails
  /// and, for a sync, `sync_lands` says whether its data became durable before the power went
  /// (a write whose sync failed may still be present after the restart). 0 cancels.
  virtual void crash_after_operations(uint64_t n, bool sync_lands = false) = 0;
  /// Re-applies the crash to files that handles closed after it (a closing file may extend or
  /// rewrite itself), then allows writes again. Call after the store was destroyed and before
  /// reopening.
  virtual void reset() = 0;
  /// True between a crash (or kill) and reset().
  virtual bool crashed() const = 0;
  /// Mutating file operations seen so far, to pick crash points.
  virtual uint64_t operations() const = 0;
};

} // namespace phalanx::storage
