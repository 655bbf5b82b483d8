#include "storage/store.hpp"

#include "scheduler/job.hpp"

#include "records.pb.h"
#include "storage/codec.hpp"
#include "storage/commit_mark.hpp"
#include "storage/power_loss_fs.hpp"

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

namespace phalanx::storage {

// ------------------------------------------------------------------------------------------------
// Names and keys

std::string_view to_string(record_kind k) noexcept {
  switch (k) {
    case record_kind::node:
      return "nodes";
    case record_kind::queue:
      return "queues";
    case record_kind::pod_group:
      return "podgroups";
    case record_kind::pod:
      return "pods";
    case record_kind::job:
      return "jobs";
    case record_kind::priority_class:
      return "priorityclasses";
  }
  return "unknown";
}

namespace {

// object_key into `key`, reusing its buffer.
void assign_object_key(std::string& key, std::string_view namespace_name, std::string_view name) {
  key.clear();
  if (!namespace_name.empty()) {
    key.reserve(namespace_name.size() + 1 + name.size());
    key.append(namespace_name);
    key.push_back('/');
  }
  key.append(name);
}

} // namespace

std::string object_key(std::string_view namespace_name, std::string_view name) {
  std::string key;
  assign_object_key(key, namespace_name, name);
  return key;
}

// ------------------------------------------------------------------------------------------------
// write_batch

write_batch::write_batch() = default;
write_batch::~write_batch() = default;
write_batch::write_batch(write_batch&&) noexcept = default;
write_batch& write_batch::operator=(write_batch&&) noexcept = default;

namespace {

// The world's part of the meta column family (write_batch::put_world_meta).
constexpr std::string_view world_meta_prefix = "world/";

void add_put(std::vector<write_batch::operation>& ops, std::size_t& bytes, record_kind kind,
             std::string key, std::string value,
             write_batch::action what = write_batch::action::put) {
  bytes += key.size() + value.size();
  ops.push_back(
      {kind, std::move(key), std::move(value), what, nullptr, std::nullopt, nullptr, false});
}

} // namespace

void write_batch::put(const scheduler::node& n) {
  add_put(ops_, bytes_, record_kind::node, key_of(n), encode(n));
}
void write_batch::put(const queue_record& q) {
  add_put(ops_, bytes_, record_kind::queue, key_of(q), encode(q));
}
void write_batch::put(const pod_group_record& g) {
  add_put(ops_, bytes_, record_kind::pod_group, key_of(g), encode(g));
}
void write_batch::put(const scheduler::pod& p) {
  add_put(ops_, bytes_, record_kind::pod, key_of(p), encode(p));
}
void write_batch::put(const job_record& j) {
  add_put(ops_, bytes_, record_kind::job, key_of(j), encode(j));
}
void write_batch::put(const scheduler::priority_class& c) {
  add_put(ops_, bytes_, record_kind::priority_class, key_of(c), encode(c));
}
void write_batch::put(std::shared_ptr<const scheduler::pod> p) {
  // Roughly what the record will take, for byte_size(); store::write counts the real size.
  constexpr std::size_t estimated_pod_record = 512;
  bytes_ += estimated_pod_record;
  ops_.push_back(
      {record_kind::pod, {}, {}, action::put, std::move(p), std::nullopt, nullptr, false});
}
void write_batch::put_pod_state(std::shared_ptr<const scheduler::pod> p,
                                const scheduler::pod_runtime& state) {
  // Roughly what the key and update will take, for byte_size().
  constexpr std::size_t estimated_update = 64;
  bytes_ += estimated_update;
  ops_.push_back({record_kind::pod, {}, {}, action::merge, std::move(p), state, nullptr, false});
}
void write_batch::put_pod_tombstone(const scheduler::pod& p, uint64_t resource_version) {
  add_put(ops_, bytes_, record_kind::pod, key_of(p), encode_pod_tombstone(resource_version),
          action::merge);
}
void write_batch::erase(record_kind kind, std::string key) {
  bytes_ += key.size();
  ops_.push_back({kind, std::move(key), {}, action::erase, nullptr, std::nullopt, nullptr, false});
}
void write_batch::erase_job_pods(std::shared_ptr<const scheduler::job> job) {
  std::size_t pods = 0;
  for (const auto& t : job->tasks)
    pods += static_cast<std::size_t>(std::max(t.replicas, 0));
  if (pods == 0)
    return;
  constexpr std::size_t estimated_key = 48;
  bytes_ += pods * estimated_key;
  job_pod_erases_ += pods - 1;
  ops_.push_back(
      {record_kind::pod, {}, {}, action::erase, nullptr, std::nullopt, std::move(job), false});
}
void write_batch::put_world_meta(std::string key, std::string value) {
  key.insert(0, world_meta_prefix);
  bytes_ += key.size() + value.size();
  ops_.push_back(
      {record_kind::node, std::move(key), std::move(value), action::put, nullptr, std::nullopt,
       nullptr, true});
}
void write_batch::erase_world_meta(std::string key) {
  key.insert(0, world_meta_prefix);
  bytes_ += key.size();
  ops_.push_back(
      {record_kind::node, std::move(key), {}, action::erase, nullptr, std::nullopt, nullptr, true});
}
void write_batch::reserve_versions_through(uint64_t ceiling) {
  if (version_ceiling_ == 0)
    bytes_ += 32;
  version_ceiling_ = std::max(version_ceiling_, ceiling);
}
std::size_t write_batch::size() const noexcept {
  return ops_.size() + job_pod_erases_ + (version_ceiling_ != 0 ? 1 : 0);
}
std::size_t write_batch::byte_size() const noexcept {
  return bytes_;
}

// ------------------------------------------------------------------------------------------------
// The store

namespace {

constexpr std::size_t kind_count = static_cast<std::size_t>(record_kind_last) + 1;
constexpr std::string_view meta_cf = "meta";
constexpr std::string_view quarantine_cf = "quarantine";
constexpr std::string_view format_version_key = "format_version";
constexpr std::string_view commit_key = "commit";
constexpr std::string_view version_ceiling_key = "version_ceiling";
// Stores from this version on are upgraded in place at open (see check_format).
constexpr uint32_t oldest_upgradable_format = 1;

constexpr std::array<record_kind, kind_count> all_kinds = {
    record_kind::node, record_kind::queue, record_kind::pod_group,
    record_kind::pod,  record_kind::job,   record_kind::priority_class};

rocksdb::Slice slice(std::string_view s) {
  return {s.data(), s.size()};
}

// Keys come from names (validated), but a damaged key may hold anything: keep messages readable.
std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

status from_rocksdb(const rocksdb::Status& s, const std::string& what) {
  if (s.ok())
    return {};
  errc code = s.IsCorruption() ? errc::corruption : errc::io_error;
  return {code, what + ": " + s.ToString()};
}

std::string encode_u64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

std::optional<uint64_t> decode_u64(std::string_view s) {
  if (s.size() != 8)
    return std::nullopt;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(static_cast<unsigned char>(s[i])) << (8 * i);
  return v;
}

rocksdb::CompressionType fastest_compression() {
  auto supported = rocksdb::GetSupportedCompressions();
  for (auto c : {rocksdb::kLZ4Compression, rocksdb::kSnappyCompression})
    if (std::find(supported.begin(), supported.end(), c) != supported.end())
      return c;
  return rocksdb::kNoCompression;
}

// Options. Restart speed matters most (DESIGN.md section 9: 150,000 pods ready in 1 s): every
// table file is opened at DB open (max_open_files = -1, which also verifies each file's footer
// and index then), blocks are large and LZ4-compressed for fast sequential scans, there are no
// Bloom filters (the store never does point lookups after load), and loading bypasses the block
// cache. A clean close flushes the memtables, so a normal restart replays no WAL.
rocksdb::DBOptions make_db_options(const store_options& o, rocksdb::Env* env) {
  rocksdb::DBOptions d;
  d.env = env;
  d.create_if_missing = o.create_if_missing;
  d.create_missing_column_families = true;
  d.paranoid_checks = true;
  // Stop at the first damaged WAL record and keep the consistent prefix; the commit mark tells
  // a torn tail (nothing acknowledged lost) from lost acknowledged writes.
  d.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  // Flush what recovery replayed: the damaged WAL becomes obsolete instead of being replayed
  // (and cut short) again, which would hide writes made after this open.
  d.avoid_flush_during_recovery = false;
  // After a background I/O error (a failed flush or MANIFEST write) the database refuses writes
  // until it is reopened: no automatic resume, whose retries sleep a second each and would make
  // a failing disk look healthy again. The writer sees errc::io_error; the runtime restarts.
  d.max_bgerror_resume_count = 0;
  d.max_open_files = -1;
  d.max_file_opening_threads = 2; // The default (16) spawns 16 threads per column family.
  // skip_stats_update_on_db_open stays false: loading sizes its result vectors from
  // rocksdb.estimate-num-keys, which needs the table statistics.
  // Two flush threads (RocksDB would give one): a failed background flush sleeps a second, and
  // the flush threads are shared by every store in the process.
  d.max_background_flushes = 2;
  d.max_background_compactions = 2;
  // The WAL is what a restart after a crash replays: keep it small (the oldest memtables are
  // flushed once the WAL outgrows this). RocksDB also preallocates each new WAL file at about
  // the largest write buffer, so write buffers stay modest.
  d.max_total_wal_size = 64ull << 20;
  d.db_write_buffer_size = 128ull << 20;
  d.log_readahead_size = 2ull << 20;
  d.keep_log_file_num = 4;
  d.max_log_file_size = 8ull << 20;
  d.stats_dump_period_sec = 0;
  // Required by the pods family's vector memtable; there is one writer anyway (the store
  // writer, serialized by write_mutex).
  d.allow_concurrent_memtable_write = false;
  d.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  return d;
}

// Pod records take state updates (write_batch::put_pod_state) as merge operands. An update is
// PodRecord bytes whose Pod holds only the state fields, so the merge is a concatenation: the
// result is a valid PodRecord in which protobuf (and record_decoder) take the last value of each
// state field. Concatenation is associative, so RocksDB may combine operands in any grouping.
class pod_record_merge final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* merged,
             rocksdb::Logger* /*logger*/) const override {
    merged->clear();
    merged->reserve((existing != nullptr ? existing->size() : 0) + value.size());
    if (existing != nullptr)
      merged->assign(existing->data(), existing->size());
    merged->append(value.data(), value.size());
    return true;
  }
  // Stored in the OPTIONS file: a store written with updates needs this operator to be read.
  const char* Name() const override { return "phalanx.PodRecordAppend"; }
};

rocksdb::ColumnFamilyOptions make_cf_options(std::string_view name,
                                             const std::shared_ptr<rocksdb::Cache>& cache) {
  rocksdb::ColumnFamilyOptions cf;
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 32 << 10;
  table.block_cache = cache;
  table.format_version = 5;
  table.checksum = rocksdb::kXXH3;
  cf.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  cf.compression = fastest_compression();
  cf.level_compaction_dynamic_level_bytes = true;
  if (name == to_string(record_kind::pod)) {
    cf.merge_operator = std::make_shared<pod_record_merge>();
    // Pods are written at the scheduler's pace (a record per pod created, then an update per
    // binding and phase change) and never read back while the store runs: load reads them once
    // at start, and the only point lookups are in `meta`. A vector memtable appends each write
    // and sorts once, when the memtable is flushed (or iterated), instead of placing every
    // write in a skip list (~20 key comparisons, most of them cache misses, on the single writer
    // thread): `phalanx-loadtest inproc` 80k -> 88k pods/s (docs/PERFORMANCE.md).
    cf.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
    cf.write_buffer_size = 32ull << 20;
    cf.target_file_size_base = 32ull << 20;
  } else if (name == meta_cf || name == quarantine_cf) {
    cf.write_buffer_size = 2ull << 20;
  } else {
    cf.write_buffer_size = 8ull << 20;
  }
  return cf;
}

} // namespace

struct store::impl {
  store_options options;
  std::shared_ptr<rocksdb::FileSystem> fs;
  std::unique_ptr<rocksdb::Env> env; // Only with fault injection.
  std::shared_ptr<rocksdb::Cache> cache;
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles; // Every open column family.
  std::array<rocksdb::ColumnFamilyHandle*, kind_count> kinds{};
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  rocksdb::ColumnFamilyHandle* quarantine = nullptr;

  std::mutex write_mutex; // Commit numbers must reach the WAL in order.
  uint64_t next_commit = 1;
  /// The version ceiling stored in meta (write_batch::reserve_versions_through); under
  /// write_mutex once writing starts.
  uint64_t version_ceiling = 0;
  std::unique_ptr<detail::commit_mark> mark;
  recovery_info recovery;

  std::atomic<uint64_t> writes{0};
  std::atomic<uint64_t> records_written{0};
  std::atomic<uint64_t> bytes_written{0};
  std::atomic<uint64_t> commit{0};
  std::atomic<uint64_t> mark_errors{0};
  std::atomic<uint64_t> write_buffer_flushes{0};

  rocksdb::ColumnFamilyHandle* handle(record_kind k) const {
    return kinds[static_cast<std::size_t>(k)];
  }

  bool opened = false; // open() completed: the store is ours to flush at close.
  std::atomic<bool> write_failed{false};

  ~impl() { close(); }

  // A failed write, or the injected file system off: a flush would fail, and RocksDB sleeps a
  // second after every failed background flush.
  bool broken() const {
    return write_failed.load() || (options.fault_injection && options.fault_injection->crashed());
  }

  void close() {
    if (db == nullptr)
      return;
    // A clean close leaves no WAL to replay at the next open. Errors (a crashed file system in
    // tests) only mean the next open replays the WAL. A store that open() refused (a newer
    // format, lost writes) is closed without writing anything more, and so is a broken() one.
    if (opened && !broken()) {
      rocksdb::FlushOptions flush;
      flush.wait = true;
      db->Flush(flush, handles).PermitUncheckedError();
    }
    {
      std::lock_guard lock(write_mutex);
      if (mark) {
        if (!mark->sync())
          mark_errors.fetch_add(1, std::memory_order_relaxed);
        mark.reset();
      }
    }
    for (auto* h : handles)
      db->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    handles.clear();
    db->Close().PermitUncheckedError();
    delete db;
    db = nullptr;
  }

  // Applies `batch` plus the next commit number as one synced write. Caller holds write_mutex.
  status commit_locked(rocksdb::WriteBatch& batch, std::size_t ops, std::size_t bytes) {
    uint64_t number = next_commit++;
    if (auto s = batch.Put(meta, slice(commit_key), encode_u64(number)); !s.ok())
      return from_rocksdb(s, "write");
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (auto s = db->Write(wo, &batch); !s.ok()) {
      write_failed = true;
      status out = from_rocksdb(s, "write");
      return {errc::io_error, out.message()};
    }
    commit.store(number, std::memory_order_release);
    writes.fetch_add(1, std::memory_order_relaxed);
    records_written.fetch_add(ops, std::memory_order_relaxed);
    bytes_written.fetch_add(bytes, std::memory_order_relaxed);
    if (!mark->advance(number))
      mark_errors.fetch_add(1, std::memory_order_relaxed);
    return {};
  }

  result<std::optional<std::string>> get(rocksdb::ColumnFamilyHandle* cf, std::string_view key) {
    std::string value;
    auto s = db->Get(rocksdb::ReadOptions(), cf, slice(key), &value);
    if (s.IsNotFound())
      return std::optional<std::string>{};
    if (!s.ok())
      return from_rocksdb(s, std::string(meta_cf) + "/" + std::string(key));
    return std::optional<std::string>(std::move(value));
  }

  result<bool> all_empty() {
    for (auto* h : handles) {
      if (h == meta)
        continue;
      std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), h));
      it->SeekToFirst();
      if (it->Valid())
        return false;
      if (!it->status().ok())
        return from_rocksdb(it->status(), h->GetName());
    }
    return true;
  }

  status open_db(const std::string& path);
  status check_format();
  status recover_commit();
  result<loaded_state> load();
};

status store::impl::open_db(const std::string& path) {
  if (options.fault_injection) {
    fs = detail::file_system_of(options.fault_injection);
    env = rocksdb::NewCompositeEnv(fs);
  } else {
    fs = rocksdb::FileSystem::Default();
  }
  rocksdb::Env* e = env ? env.get() : rocksdb::Env::Default();
  cache = rocksdb::NewLRUCache(8 << 20);
  auto db_options = make_db_options(options, e);

  bool exists = fs->FileExists(path + "/CURRENT", {}, nullptr).ok();
  if (!exists && !options.create_if_missing)
    return {errc::not_found, "open " + path + ": no store here (create_if_missing is false)"};

  std::vector<std::string> names;
  if (exists) {
    auto s = rocksdb::DB::ListColumnFamilies(db_options, path, &names);
    if (!s.ok())
      return from_rocksdb(s, "open " + path);
  }
  auto want = [&](std::string_view n) {
    if (std::find(names.begin(), names.end(), n) == names.end())
      names.emplace_back(n);
  };
  want(rocksdb::kDefaultColumnFamilyName);
  for (auto k : all_kinds)
    want(to_string(k));
  want(meta_cf);
  want(quarantine_cf);

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names)
    descriptors.emplace_back(n, make_cf_options(n, cache));
  auto s = rocksdb::DB::Open(db_options, path, descriptors, &handles, &db);
  if (!s.ok()) {
    db = nullptr;
    handles.clear();
    return from_rocksdb(s, "open " + path);
  }
  for (auto* h : handles) {
    for (auto k : all_kinds)
      if (h->GetName() == to_string(k))
        kinds[static_cast<std::size_t>(k)] = h;
    if (h->GetName() == meta_cf)
      meta = h;
    if (h->GetName() == quarantine_cf)
      quarantine = h;
  }
  return {};
}

status store::impl::check_format() {
  auto version = get(meta, format_version_key);
  if (!version)
    return version.error();
  if (!*version) {
    // No version: a store whose creation was cut short (every family empty) is created now;
    // anything else was not written by Phalanx.
    auto empty = all_empty();
    if (!empty)
      return empty.error();
    if (!*empty)
      return {errc::failed_precondition,
              "open " + options.path +
                  ": not a Phalanx store (it holds data but no meta/format_version)"};
    rocksdb::WriteBatch batch;
    auto text = std::to_string(store::format_version);
    batch.Put(meta, slice(format_version_key), text).PermitUncheckedError();
    batch.Put(meta, slice(commit_key), encode_u64(0)).PermitUncheckedError();
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (auto s = db->Write(wo, &batch); !s.ok())
      return from_rocksdb(s, "create " + options.path);
    recovery.created = true;
    return {};
  }
  const std::string& text = **version;
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v == 0)
    return {errc::failed_precondition,
            "open " + options.path + ": unknown store format version \"" + printable(text) +
                "\" (this build reads " + std::to_string(store::format_version) + ")"};
  if (v > store::format_version)
    return {errc::failed_precondition, "open " + options.path + ": store format version " +
                                           std::to_string(v) + " is newer than this build reads (" +
                                           std::to_string(store::format_version) +
                                           "); run a newer phalanxd or restore a backup"};
  if (v < oldest_upgradable_format)
    return {errc::failed_precondition, "open " + options.path + ": store format version " +
                                           std::to_string(v) + " is older than this build reads (" +
                                           std::to_string(store::format_version) +
                                           ") and no migration exists"};
  if (v < store::format_version) {
    // Version 1 differs in holding no pod state updates, and versions 1 to 3 in lacking the
    // priorityclasses family, which open has just created empty: their records read as they are.
    // Record the new version before anything is written in the new format, so that an older
    // build refuses the store instead of misreading it.
    rocksdb::WriteOptions wo;
    wo.sync = true;
    auto text = std::to_string(store::format_version);
    if (auto s = db->Put(wo, meta, slice(format_version_key), text); !s.ok())
      return from_rocksdb(s, "upgrade " + options.path + " to format version " + text);
    recovery.upgraded_from = v;
  }
  return {};
}

status store::impl::recover_commit() {
  if (auto ceiling = get(meta, version_ceiling_key); !ceiling) {
    return ceiling.error();
  } else if (*ceiling) {
    auto v = decode_u64(**ceiling);
    if (!v)
      return {errc::corruption,
              "meta/version_ceiling: record does not decode: expected 8 bytes, found " +
                  std::to_string((*ceiling)->size())};
    version_ceiling = *v;
  }
  auto value = get(meta, commit_key);
  if (!value)
    return value.error();
  uint64_t recovered = 0;
  if (*value) {
    auto v = decode_u64(**value);
    if (!v)
      return {errc::corruption, "meta/commit: record does not decode: expected 8 bytes, found " +
                                    std::to_string((*value)->size())};
    recovered = *v;
  }
  auto mark_value = detail::commit_mark::read(*fs, options.path);
  if (!mark_value)
    return mark_value.error();
  recovery.recovered_commit = recovered;
  recovery.acknowledged_commit = mark_value->value_or(0);
  if (recovery.acknowledged_commit > recovered) {
    if (!options.accept_lost_writes)
      return {errc::corruption,
              "open " + options.path + ": acknowledged writes were lost: the database recovered " +
                  "to commit " + std::to_string(recovered) + " but commit " +
                  std::to_string(recovery.acknowledged_commit) + " had been acknowledged (" +
                  detail::commit_mark::file_name +
                  "); a damaged WAL record cut point-in-time recovery short. Restore a backup, " +
                  "or open with accept_lost_writes to continue from the recovered state"};
    recovery.lost_writes = true;
  }
  next_commit = recovered + 1;
  commit.store(recovered);
  auto mark_result = detail::commit_mark::start(fs, options.path, recovered);
  if (!mark_result)
    return mark_result.error();
  mark = std::move(*mark_result);
  return {};
}

result<std::unique_ptr<store>> store::open(const store_options& options) {
  if (options.path.empty())
    return result<std::unique_ptr<store>>(errc::invalid_argument, "open: empty path");
  auto p = std::make_unique<impl>();
  p->options = options;
  if (auto s = p->open_db(options.path); !s.ok())
    return s;
  if (auto s = p->check_format(); !s.ok())
    return s;
  if (auto s = p->recover_commit(); !s.ok())
    return s;
  p->opened = true;
  return std::unique_ptr<store>(new store(std::move(p)));
}

store::store(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
store::~store() = default;

const std::string& store::path() const noexcept {
  return impl_->options.path;
}
const recovery_info& store::recovery() const noexcept {
  return impl_->recovery;
}

store_stats store::stats() const noexcept {
  store_stats s;
  s.writes = impl_->writes.load(std::memory_order_relaxed);
  s.records_written = impl_->records_written.load(std::memory_order_relaxed);
  s.bytes_written = impl_->bytes_written.load(std::memory_order_relaxed);
  s.commit = impl_->commit.load(std::memory_order_acquire);
  s.commit_mark_errors = impl_->mark_errors.load(std::memory_order_relaxed);
  s.write_buffer_flushes = impl_->write_buffer_flushes.load(std::memory_order_relaxed);
  if (auto* db = impl_->db) {
    uint64_t bytes = 0, pending = 0, running = 0;
    if (db->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes))
      s.write_buffer_bytes = bytes;
    if (db->GetAggregatedIntProperty(rocksdb::DB::Properties::kMemTableFlushPending, &pending) &&
        db->GetIntProperty(rocksdb::DB::Properties::kNumRunningFlushes, &running))
      s.flushing = pending > 0 || running > 0;
  }
  return s;
}

status store::flush_write_buffers() {
  auto& i = *impl_;
  if (i.broken())
    return {errc::io_error, "flush: the store is broken (a failed write or a crashed disk)"};
  rocksdb::FlushOptions flush;
  flush.wait = false;
  // Not waiting means not waiting for a stall to clear either: a flush is always allowed to add
  // to the level-0 files (the next compaction merges them).
  flush.allow_write_stall = true;
  if (auto s = i.db->Flush(flush, i.handles); s.IsTryAgain())
    return {errc::unavailable, "flush: an earlier flush is still writing: " + s.ToString()};
  else if (!s.ok())
    return {errc::io_error, from_rocksdb(s, "flush").message()};
  i.write_buffer_flushes.fetch_add(1, std::memory_order_relaxed);
  return {};
}

status store::write(const write_batch& batch) {
  const write_batch* one[] = {&batch};
  return write(std::span<const write_batch* const>(one));
}

status store::write(std::span<const write_batch* const> batches) {
  std::size_t ops = 0;
  std::size_t estimated_bytes = 0;
  uint64_t version_ceiling = 0;
  for (const auto* b : batches) {
    version_ceiling = std::max(version_ceiling, b->version_ceiling());
    for (const auto& op : b->operations()) {
      if (static_cast<std::size_t>(op.kind) >= kind_count)
        return {errc::invalid_argument,
                "write: unknown record kind " + std::to_string(static_cast<int>(op.kind))};
      // A pod put by pointer gets its key below: object_key(namespace, name); so do a job's.
      bool empty_key = op.pod   ? op.pod->meta.namespace_name.empty() && op.pod->meta.name.empty()
                       : op.job ? op.job->meta.name.empty()
                                : op.key.empty();
      if (empty_key)
        return {errc::invalid_argument,
                "write: empty key in column family " + std::string(to_string(op.kind))};
      if (op.world_meta && (op.key.size() <= world_meta_prefix.size() ||
                            op.what == write_batch::action::merge))
        return {errc::invalid_argument, "write: an empty world meta key, or a merge into one"};
      if (op.what == write_batch::action::merge && op.kind != record_kind::pod)
        return {errc::invalid_argument, "write: a merge into column family " +
                                            std::string(to_string(op.kind)) +
                                            " (only pod records take state updates)"};
    }
    ops += b->size();
    estimated_bytes += b->byte_size();
  }
  if (ops == 0)
    return {};
  rocksdb::WriteBatch batch(estimated_bytes + ops * 16 + 64);
  std::string key;   // Of a pod put by pointer, encoded here.
  std::string value;
  std::size_t bytes = 0;
  for (const auto* b : batches) {
    for (const auto& op : b->operations()) {
      auto* cf = op.world_meta ? impl_->meta : impl_->handle(op.kind);
      rocksdb::Status s;
      bytes += op.key.size() + op.value.size();
      switch (op.what) {
        case write_batch::action::put:
          if (op.pod) {
            assign_object_key(key, op.pod->meta.namespace_name, op.pod->meta.name);
            encode(*op.pod, value);
            bytes += key.size() + value.size();
            s = batch.Put(cf, slice(key), slice(value));
          } else {
            s = batch.Put(cf, slice(op.key), slice(op.value));
          }
          break;
        case write_batch::action::merge:
          if (op.state) {  // put_pod_state: the key and the update are made here.
            assign_object_key(key, op.pod->meta.namespace_name, op.pod->meta.name);
            encode_pod_state(*op.state, value);
            bytes += key.size() + value.size();
            s = batch.Merge(cf, slice(key), slice(value));
          } else {
            s = batch.Merge(cf, slice(op.key), slice(op.value));
          }
          break;
        case write_batch::action::erase:
          if (op.job) {  // erase_job_pods: the keys are made here, one buffer for all.
            const auto& j = *op.job;
            for (std::size_t ti = 0; ti < j.tasks.size() && s.ok(); ++ti) {
              auto prefix = j.meta.namespace_name + "/" +
                            scheduler::job_task_prefix(j.meta.name,
                                                       scheduler::task_name(j.tasks[ti], ti));
              for (int32_t ix = 0; ix < j.tasks[ti].replicas && s.ok(); ++ix) {
                scheduler::write_job_pod_name(key, prefix, ix);
                bytes += key.size();
                s = batch.Delete(cf, slice(key));
              }
            }
          } else {
            s = batch.Delete(cf, slice(op.key));
          }
          break;
      }
      if (!s.ok())
        return {errc::invalid_argument, "write: " + s.ToString()};
    }
  }
  std::lock_guard lock(impl_->write_mutex);
  if (version_ceiling > impl_->version_ceiling) {
    if (auto s = batch.Put(impl_->meta, slice(version_ceiling_key), encode_u64(version_ceiling));
        !s.ok())
      return {errc::invalid_argument, "write: " + s.ToString()};
  }
  auto written = impl_->commit_locked(batch, ops, bytes);
  if (written.ok())
    impl_->version_ceiling = std::max(impl_->version_ceiling, version_ceiling);
  return written;
}

// ------------------------------------------------------------------------------------------------
// Loading
//
// The threads share one cursor over the column families: each takes the next chunk of raw
// records (copied out under the cursor's lock, which is cheap), decodes it alone (the expensive
// part), and writes each object straight into its final slot: the cursor numbers the records of
// each kind in key order as it hands them out, and the result vectors are sized up front from
// RocksDB's key estimates. So the output keeps key order whatever the layout on disk (memtable,
// one L0 file, many levels), and no decoded object is moved or copied again. Fresh memory is
// what loading costs most (page faults), so nothing is built twice.

namespace {

struct raw_record {
  uint32_t key_offset, key_size, value_offset, value_size;
};

struct raw_chunk {
  std::size_t number = 0; // Hand-out order over all kinds.
  record_kind kind = record_kind::node;
  std::size_t first = 0; // Ordinal of its first record among the records of its kind.
  std::string bytes;
  std::vector<raw_record> records;
  std::string_view key(const raw_record& r) const {
    return {bytes.data() + r.key_offset, r.key_size};
  }
  std::string_view value(const raw_record& r) const {
    return {bytes.data() + r.value_offset, r.value_size};
  }
};

struct bad_record {
  record_kind kind;
  std::size_t ordinal; // Among the records of its kind, in key order.
  std::string key;
  std::string value;
  std::string detail; // What the decoder said.
  std::string message() const {
    return std::string(to_string(kind)) + "/" + printable(key) +
           ": record does not decode: " + detail;
  }
};

constexpr std::size_t chunk_records = 256;
constexpr std::size_t chunk_bytes = 512 << 10;

class shared_cursor {
 public:
  shared_cursor(rocksdb::DB* db, const std::array<rocksdb::ColumnFamilyHandle*, kind_count>& cfs)
      : db_(db), cfs_(cfs) {
    read_.verify_checksums = true;
    read_.fill_cache = false;
    read_.readahead_size = 2 << 20;
  }
  ~shared_cursor() { it_.reset(); } // Before the DB closes (a live iterator aborts the close).

  // The next chunk, or false at the end, after stop(), or after an error (then error() says).
  bool next(raw_chunk& out) {
    std::lock_guard lock(mu_);
    out.bytes.clear();
    out.records.clear();
    while (!stopped_ && kind_index_ < kind_count) {
      if (!it_) {
        it_.reset(db_->NewIterator(read_, cfs_[kind_index_]));
        it_->SeekToFirst();
      }
      while (it_->Valid() && out.records.size() < chunk_records && out.bytes.size() < chunk_bytes) {
        auto k = it_->key();
        auto v = it_->value();
        raw_record r{};
        r.key_offset = static_cast<uint32_t>(out.bytes.size());
        r.key_size = static_cast<uint32_t>(k.size());
        out.bytes.append(k.data(), k.size());
        r.value_offset = static_cast<uint32_t>(out.bytes.size());
        r.value_size = static_cast<uint32_t>(v.size());
        out.bytes.append(v.data(), v.size());
        out.records.push_back(r);
        it_->Next();
      }
      if (!out.records.empty()) {
        out.kind = all_kinds[kind_index_];
        out.number = chunks_++;
        out.first = handed_[kind_index_];
        handed_[kind_index_] += out.records.size();
        return true;
      }
      if (!it_->status().ok()) {
        stopped_ = true;
        auto s = from_rocksdb(it_->status(), std::string(to_string(all_kinds[kind_index_])));
        error_ = {s.code() == errc::corruption ? errc::corruption : errc::io_error, s.message()};
        it_.reset();
        return false;
      }
      it_.reset();
      ++kind_index_;
    }
    return false;
  }

  void stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }

  status error() const {
    std::lock_guard lock(mu_);
    return error_;
  }

  // Records of a kind handed out; final once the workers are done.
  std::size_t handed(record_kind k) const { return handed_[static_cast<std::size_t>(k)]; }

 private:
  rocksdb::DB* db_;
  const std::array<rocksdb::ColumnFamilyHandle*, kind_count>& cfs_;
  rocksdb::ReadOptions read_;
  mutable std::mutex mu_;
  std::unique_ptr<rocksdb::Iterator> it_;
  std::size_t kind_index_ = 0;
  std::size_t chunks_ = 0;
  std::array<std::size_t, kind_count> handed_{};
  bool stopped_ = false;
  status error_;
};

// Asks for transparent huge pages on a large, not yet touched buffer: creating 150,000 pods
// touches ~70 MB at once, and on virtual machines each 4 KiB page fault is expensive. A hint only.
void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t huge = uintptr_t{2} << 20;
  auto begin = (reinterpret_cast<uintptr_t>(data) + huge - 1) & ~(huge - 1);
  auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(huge - 1);
  if (data != nullptr && end > begin)
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

const scheduler::object_meta& meta_of(const scheduler::node& x) {
  return x.meta;
}
const scheduler::object_meta& meta_of(const queue_record& x) {
  return x.queue.meta;
}
const scheduler::object_meta& meta_of(const pod_group_record& x) {
  return x.group.meta;
}
const scheduler::object_meta& meta_of(const scheduler::pod& x) {
  return x.meta;
}
const scheduler::object_meta& meta_of(const job_record& x) {
  return x.job.meta;
}
const scheduler::object_meta& meta_of(const scheduler::priority_class& x) {
  return x.meta;
}

// The records of one kind: the final vector, pre-sized, plus chunks that did not fit in it.
template <class T>
struct kind_output {
  std::vector<T>& list;
  std::size_t capacity = 0;                                     // Slots created up front.
  std::mutex mutex;                                             // Guards overflow, states.
  std::vector<std::pair<std::size_t, std::vector<T>>> overflow; // (first ordinal, objects).
  // Pods only: keys that hold state updates without a record (a job's pods, stored as their
  // job), with their ordinals, which finish() removes from `list` like bad records.
  std::vector<std::pair<std::size_t, pod_state_record>> states;

  explicit kind_output(std::vector<T>& l) : list(l) {}

  void presize(std::size_t n) {
    capacity = n;
    list.reserve(n);
    advise_huge_pages(list.data(), n * sizeof(T));
    list.resize(n);
  }

  // Fills the chunk's slots; returns the bad records.
  void decode(const raw_chunk& c, record_decoder& decoder, std::vector<bad_record>& bad,
              uint64_t& max_version) {
    std::vector<T> spill;
    T* out = nullptr;
    if (c.first + c.records.size() <= capacity) {
      out = list.data() + c.first;
    } else {
      spill.resize(c.records.size());
      out = spill.data();
    }
    std::vector<std::pair<std::size_t, pod_state_record>> my_states;
    for (std::size_t i = 0; i < c.records.size(); ++i) {
      const auto& r = c.records[i];
      auto key = c.key(r);
      T& slot = out[i];
      if constexpr (std::is_same_v<T, scheduler::pod>) {
        if (record_decoder::holds_only_pod_state(c.value(r))) {
          pod_state_record rec;
          rec.key = std::string(key);
          if (auto s = decoder.decode_pod_state(c.value(r), rec.state, rec.deleted); !s.ok()) {
            bad.push_back(
                {c.kind, c.first + i, std::string(key), std::string(c.value(r)), s.message()});
            continue;
          }
          max_version = std::max(max_version, rec.state.resource_version);
          my_states.emplace_back(c.first + i, std::move(rec));
          continue;
        }
      }
      if (auto s = decoder.decode(c.value(r), slot); !s.ok()) {
        bad.push_back(
            {c.kind, c.first + i, std::string(key), std::string(c.value(r)), s.message()});
        continue;
      }
      const auto& meta = meta_of(slot);
      auto expected = object_key(meta.namespace_name, meta.name);
      if (expected != key) {
        bad.push_back(
            {c.kind, c.first + i, std::string(key), std::string(c.value(r)),
             "key does not match the record, which names \"" + printable(expected) + "\""});
        continue;
      }
      max_version = std::max(max_version, meta.resource_version);
    }
    if (!spill.empty() || !my_states.empty()) {
      std::lock_guard lock(mutex);
      if (!spill.empty())
        overflow.emplace_back(c.first, std::move(spill));
      for (auto& s : my_states)
        states.push_back(std::move(s));
    }
  }

  // Every slot that holds no object, sorted: `bad_ordinals` and the ordinals of `states`. Puts
  // `states` in key order too.
  std::vector<std::size_t> empty_slots(std::vector<std::size_t> bad_ordinals) {
    std::sort(states.begin(), states.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& s : states)
      bad_ordinals.push_back(s.first);
    std::sort(bad_ordinals.begin(), bad_ordinals.end());
    return bad_ordinals;
  }

  // Puts the records in key order: the slots that were filled, then the overflow chunks. Every
  // record ends at the index of its ordinal. `bad` ordinals are removed.
  void finish(std::size_t total, const std::vector<std::size_t>& bad_ordinals) {
    std::sort(overflow.begin(), overflow.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::size_t in_place = overflow.empty() ? total : overflow.front().first;
    list.resize(in_place);
    list.reserve(total);
    for (auto& [first, objects] : overflow)
      for (auto& o : objects)
        list.push_back(std::move(o));
    overflow.clear();
    remove(bad_ordinals);
    // The estimate counts overwritten and deleted versions not yet compacted away; do not keep
    // a much larger buffer than the records need for the life of the state.
    if (list.capacity() > list.size() + list.size() / 8 + 1024)
      list.shrink_to_fit();
  }

  void remove(const std::vector<std::size_t>& bad_ordinals) {
    if (bad_ordinals.empty())
      return;
    std::size_t next_bad = 0;
    std::size_t write = 0;
    for (std::size_t read = 0; read < list.size(); ++read) {
      if (next_bad < bad_ordinals.size() && bad_ordinals[next_bad] == read) {
        ++next_bad;
        continue;
      }
      if (write != read)
        list[write] = std::move(list[read]);
      ++write;
    }
    list.resize(write);
  }
};

uint64_t estimate_keys(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
  uint64_t n = 0;
  if (!db->GetIntProperty(cf, rocksdb::DB::Properties::kEstimateNumKeys, &n))
    return 0;
  return std::min<uint64_t>(n, 50'000'000);
}

} // namespace

result<loaded_state> store::impl::load() {
  unsigned threads = options.load_threads != 0 ? options.load_threads
                                               : std::max(1u, std::thread::hardware_concurrency());
  loaded_state state;
  kind_output<scheduler::node> nodes(state.nodes);
  kind_output<queue_record> queues(state.queues);
  kind_output<pod_group_record> pod_groups(state.pod_groups);
  kind_output<scheduler::pod> pods(state.pods);
  kind_output<job_record> jobs(state.jobs);
  kind_output<scheduler::priority_class> priority_classes(state.priority_classes);
  // The small kinds are sized now; pods and jobs (iterated last) are sized by this thread while
  // the others start decoding, so creating their slots overlaps useful work.
  nodes.presize(estimate_keys(db, handle(record_kind::node)));
  queues.presize(estimate_keys(db, handle(record_kind::queue)));
  pod_groups.presize(estimate_keys(db, handle(record_kind::pod_group)));
  std::mutex sized_mutex;
  std::condition_variable sized_cv;
  bool all_sized = false;
  auto wait_sized = [&] {
    std::unique_lock lock(sized_mutex);
    sized_cv.wait(lock, [&] { return all_sized; });
  };

  shared_cursor cursor(db, kinds);
  std::mutex shared_mutex;
  std::vector<bad_record> bad;
  uint64_t max_version = 0;

  auto work = [&] {
    record_decoder decoder;
    raw_chunk chunk;
    std::vector<bad_record> my_bad;
    uint64_t my_max = 0;
    while (cursor.next(chunk)) {
      switch (chunk.kind) {
        case record_kind::node:
          nodes.decode(chunk, decoder, my_bad, my_max);
          break;
        case record_kind::queue:
          queues.decode(chunk, decoder, my_bad, my_max);
          break;
        case record_kind::pod_group:
          pod_groups.decode(chunk, decoder, my_bad, my_max);
          break;
        case record_kind::pod:
          wait_sized();
          pods.decode(chunk, decoder, my_bad, my_max);
          break;
        case record_kind::job:
          wait_sized();
          jobs.decode(chunk, decoder, my_bad, my_max);
          break;
        case record_kind::priority_class:
          priority_classes.decode(chunk, decoder, my_bad, my_max);
          break;
      }
      // Without quarantine the first bad record ends the load. Chunks handed out before this
      // one still finish, so the earliest bad record in key order is among those found.
      if (!my_bad.empty() && !options.quarantine_corrupt)
        cursor.stop();
    }
    std::lock_guard lock(shared_mutex);
    max_version = std::max(max_version, my_max);
    for (auto& b : my_bad)
      bad.push_back(std::move(b));
  };
  {
    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i)
      pool.emplace_back(work);
    pods.presize(estimate_keys(db, handle(record_kind::pod)));
    jobs.presize(estimate_keys(db, handle(record_kind::job)));
    {
      std::lock_guard lock(sized_mutex);
      all_sized = true;
    }
    sized_cv.notify_all();
    work();
    for (auto& t : pool)
      t.join();
  }
  if (auto s = cursor.error(); !s.ok())
    return s;
  std::sort(bad.begin(), bad.end(), [](const bad_record& a, const bad_record& b) {
    return std::pair(a.kind, a.ordinal) < std::pair(b.kind, b.ordinal);
  });
  if (!bad.empty() && !options.quarantine_corrupt)
    return status{errc::corruption, bad.front().message()};

  auto bad_of = [&](record_kind k) {
    std::vector<std::size_t> out;
    for (const auto& b : bad)
      if (b.kind == k)
        out.push_back(b.ordinal);
    return out;
  };
  nodes.finish(cursor.handed(record_kind::node), bad_of(record_kind::node));
  queues.finish(cursor.handed(record_kind::queue), bad_of(record_kind::queue));
  pod_groups.finish(cursor.handed(record_kind::pod_group), bad_of(record_kind::pod_group));
  pods.finish(cursor.handed(record_kind::pod), pods.empty_slots(bad_of(record_kind::pod)));
  state.pod_states.reserve(pods.states.size());
  for (auto& s : pods.states)
    state.pod_states.push_back(std::move(s.second));
  jobs.finish(cursor.handed(record_kind::job), bad_of(record_kind::job));
  priority_classes.finish(cursor.handed(record_kind::priority_class),
                          bad_of(record_kind::priority_class));
  state.max_resource_version = max_version;
  state.version_ceiling = version_ceiling;
  {
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, meta));
    for (it->Seek(slice(world_meta_prefix));
         it->Valid() && it->key().starts_with(slice(world_meta_prefix)); it->Next()) {
      auto key = it->key();
      key.remove_prefix(world_meta_prefix.size());
      state.world_meta.emplace(key.ToString(), it->value().ToString());
    }
    if (!it->status().ok())
      return from_rocksdb(it->status(), std::string(meta_cf) + "/" +
                                            std::string(world_meta_prefix));
  }

  if (!bad.empty()) {
    // Move the records aside in one synced write, so the next start does not trip on them.
    rocksdb::WriteBatch batch;
    std::size_t bytes = 0;
    auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    for (const auto& b : bad) {
      v1::QuarantineRecord q;
      q.set_record_version(record_version);
      q.set_column_family(std::string(to_string(b.kind)));
      q.set_key(b.key);
      q.set_value(b.value);
      q.set_error(b.detail);
      q.set_quarantined_at_ns(now_ns);
      std::string qkey = std::string(to_string(b.kind)) + "/" + b.key;
      std::string qvalue;
      q.SerializeToString(&qvalue);
      bytes += qkey.size() + qvalue.size();
      batch.Delete(handle(b.kind), slice(b.key)).PermitUncheckedError();
      batch.Put(quarantine, slice(qkey), slice(qvalue)).PermitUncheckedError();
      state.quarantined.push_back({b.kind, b.key, b.detail});
    }
    std::lock_guard lock(write_mutex);
    if (auto s = commit_locked(batch, bad.size() * 2, bytes); !s.ok())
      return status{s.code(), "quarantine: " + s.message()};
  }
  return state;
}

result<loaded_state> store::load() {
  return impl_->load();
}

} // namespace phalanx::storage
