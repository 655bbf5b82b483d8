#pragma once

// The commit mark: the store's own record of how far it has acknowledged writes, kept outside the
// WAL so that a WAL that lost acknowledged records can be told apart from one that simply ends.
// Internal to storage/ (it includes RocksDB headers).
//
// Every store write carries a commit number (meta "commit", in the same WriteBatch). After the
// synced write returns, the store appends the number to this file WITHOUT a sync; the file is
// synced at most about once a second, when it is rotated, and at close. So the mark never runs
// ahead of durable data (it is written after the data's sync), costs one small unsynced write per
// commit, and after a power cut lags by at most the unsynced tail. At open, a mark larger than the
// recovered commit number proves that acknowledged writes were lost.
//
// File: "<db>/PHALANX-COMMIT-MARK", a sequence of 16-byte entries: "PXC1", the commit number
// (little endian, 8 bytes), and a 32-bit check of the number. A reader takes the largest entry
// whose check holds and ignores torn or damaged ones. A new file is written beside it, synced and
// renamed over it (then the directory is synced) at open and every `rotate_entries` commits.

#include "scheduler/result.hpp"

#include <rocksdb/file_system.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace phalanx::storage::detail {

class commit_mark {
 public:
  static constexpr const char* file_name = "PHALANX-COMMIT-MARK";
  static constexpr uint64_t rotate_entries = 1 << 16;
  static constexpr std::chrono::milliseconds sync_interval{1000};

  /// The largest valid entry of the mark in `dir`; nullopt when there is no mark file or no valid
  /// entry in it. Fails only when the file exists but cannot be read (errc::io_error).
  static result<std::optional<uint64_t>> read(rocksdb::FileSystem& fs, const std::string& dir);

  /// Durably replaces the mark in `dir` with one holding `commit`, and opens it for appending.
  static result<std::unique_ptr<commit_mark>> start(std::shared_ptr<rocksdb::FileSystem> fs,
                                                    std::string dir, uint64_t commit);

  ~commit_mark();
  commit_mark(const commit_mark&) = delete;
  commit_mark& operator=(const commit_mark&) = delete;

  /// Records that `commit` (larger than every earlier one) is durable. Appends without a sync,
  /// syncs when the last sync is older than sync_interval, rotates after rotate_entries. False on
  /// an I/O error: the mark may then lag (it is rewritten whole by the next call), never lead.
  bool advance(uint64_t commit);

  /// Syncs what was appended. False on an I/O error.
  bool sync();

 private:
  commit_mark(std::shared_ptr<rocksdb::FileSystem> fs, std::string dir);
  status rewrite(uint64_t commit);

  std::shared_ptr<rocksdb::FileSystem> fs_;
  std::string dir_;
  std::unique_ptr<rocksdb::FSWritableFile> file_;
  uint64_t entries_ = 0;
  bool dirty_ = false;
  bool broken_ = false;
  std::chrono::steady_clock::time_point last_sync_;
};

} // namespace phalanx::storage::detail
