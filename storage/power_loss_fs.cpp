#include "storage/power_loss_fs.hpp"

#include <rocksdb/io_status.h>

#include <unistd.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace phalanx::storage {

namespace detail {

namespace {

using rocksdb::FileOptions;
using rocksdb::FSDirectory;
using rocksdb::FSWritableFile;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

std::string parent_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

// Strips trailing slashes so that "db/" and "db" name one directory.
std::string normalized_dir(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/')
    dir.pop_back();
  return dir;
}

IOStatus power_is_off() {
  return IOStatus::IOError("simulated crash: the file system takes no more writes");
}

// The file system. Every mutating operation goes through `begin()`, which fails after a crash and
// counts down to a scheduled one. One mutex serializes mutating operations, including the
// forwarded call, so that a crash never interleaves with a half-done write.
class power_loss_fs final : public rocksdb::FileSystemWrapper, public power_loss_simulator {
 public:
  power_loss_fs() : rocksdb::FileSystemWrapper(rocksdb::FileSystem::Default()) {}

  const char* Name() const override { return "PhalanxPowerLossFileSystem"; }

  // --- power_loss_simulator

  void crash() override {
    std::lock_guard lock(mu_);
    crash_locked();
  }

  void kill() override {
    std::lock_guard lock(mu_);
    off_ = true;
    countdown_ = 0;
  }

  void crash_after_operations(uint64_t n, bool sync_lands) override {
    std::lock_guard lock(mu_);
    countdown_ = n;
    sync_lands_ = sync_lands;
  }

  void reset() override {
    std::lock_guard lock(mu_);
    if (crashed_)
      drop_unsynced_locked();
    // What is on disk now is what survived: from here on every file counts as durable.
    files_.clear();
    crashed_ = false;
    off_ = false;
    countdown_ = 0;
  }

  bool crashed() const override {
    std::lock_guard lock(mu_);
    return off_;
  }

  uint64_t operations() const override {
    std::lock_guard lock(mu_);
    return operations_;
  }

  // --- rocksdb::FileSystem

  IOStatus NewWritableFile(const std::string& fname, const FileOptions& options,
                           std::unique_ptr<FSWritableFile>* result, IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    bool name_durable = durable_name_locked(fname);
    std::unique_ptr<FSWritableFile> file;
    auto s = target()->NewWritableFile(fname, options, &file, dbg);
    if (!s.ok())
      return s;
    // The file starts empty; its name is durable only if it was before (the directory entry of a
    // new file needs a directory fsync).
    files_[fname] = file_state{0, false, name_durable};
    result->reset(new tracked_file(std::move(file), this, fname, 0));
    return s;
  }

  IOStatus ReopenWritableFile(const std::string& fname, const FileOptions& options,
                              std::unique_ptr<FSWritableFile>* result,
                              IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    bool existed = target()->FileExists(fname, IOOptions(), nullptr).ok();
    uint64_t size = 0;
    if (existed)
      target()->GetFileSize(fname, IOOptions(), &size, nullptr).PermitUncheckedError();
    std::unique_ptr<FSWritableFile> file;
    auto s = target()->ReopenWritableFile(fname, options, &file, dbg);
    if (!s.ok())
      return s;
    if (files_.find(fname) == files_.end()) {
      // Not written while we watched: what is there is durable, a new file is not.
      files_[fname] = file_state{size, existed, existed};
    }
    result->reset(new tracked_file(std::move(file), this, fname, size));
    return s;
  }

  IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                             const FileOptions& options, std::unique_ptr<FSWritableFile>* result,
                             IODebugContext* dbg) override {
    // Only with recycle_log_file_num > 0, which the store does not set. The recycled file is
    // rewritten from its start; its old bytes stay durable but are never read as new data.
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    std::unique_ptr<FSWritableFile> file;
    auto s = target()->ReuseWritableFile(fname, old_fname, options, &file, dbg);
    if (!s.ok())
      return s;
    move_state_locked(old_fname, fname);
    files_[fname] = file_state{0, true, durable_name_locked(fname)};
    result->reset(new tracked_file(std::move(file), this, fname, 0));
    return s;
  }

  IOStatus NewDirectory(const std::string& name, const IOOptions& options,
                        std::unique_ptr<FSDirectory>* result, IODebugContext* dbg) override {
    std::unique_ptr<FSDirectory> dir;
    auto s = target()->NewDirectory(name, options, &dir, dbg);
    if (!s.ok())
      return s;
    result->reset(new tracked_directory(std::move(dir), this, normalized_dir(name)));
    return s;
  }

  IOStatus DeleteFile(const std::string& fname, const IOOptions& options,
                      IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    auto s = target()->DeleteFile(fname, options, dbg);
    if (s.ok())
      files_.erase(fname);
    return s;
  }

  IOStatus RenameFile(const std::string& from, const std::string& to, const IOOptions& options,
                      IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    auto s = target()->RenameFile(from, to, options, dbg);
    if (s.ok())
      move_state_locked(from, to);
    return s;
  }

  IOStatus LinkFile(const std::string& from, const std::string& to, const IOOptions& options,
                    IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    return target()->LinkFile(from, to, options, dbg);
  }

  IOStatus Truncate(const std::string& fname, size_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    auto s = target()->Truncate(fname, size, options, dbg);
    if (s.ok())
      if (auto it = files_.find(fname); it != files_.end() && it->second.synced > size)
        it->second.synced = size;
    return s;
  }

  IOStatus CreateDir(const std::string& dir, const IOOptions& options,
                     IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    return target()->CreateDir(dir, options, dbg);
  }

  IOStatus CreateDirIfMissing(const std::string& dir, const IOOptions& options,
                              IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    return target()->CreateDirIfMissing(dir, options, dbg);
  }

  IOStatus DeleteDir(const std::string& dir, const IOOptions& options,
                     IODebugContext* dbg) override {
    std::lock_guard lock(mu_);
    if (auto s = begin_locked(op_kind::other); !s.ok())
      return s;
    return target()->DeleteDir(dir, options, dbg);
  }

 private:
  struct file_state {
    uint64_t synced = 0;        // Bytes that survive a crash.
    bool ever_synced = false;   // Synced at least once (its inode and size are durable).
    bool entry_durable = false; // Its directory entry survives a crash.
  };

  enum class op_kind { other, sync };

  // A writable file that reports appends and syncs to the file system.
  class tracked_file final : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    tracked_file(std::unique_ptr<FSWritableFile> file, power_loss_fs* fs, std::string name,
                 uint64_t size)
        : FSWritableFileOwnerWrapper(std::move(file)), fs_(fs), name_(std::move(name)),
          size_(size) {}

    IOStatus Append(const Slice& data, const IOOptions& options, IODebugContext* dbg) override {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::other); !s.ok())
        return s;
      auto s = target()->Append(data, options, dbg);
      if (s.ok())
        size_ += data.size();
      return s;
    }
    IOStatus Append(const Slice& data, const IOOptions& options,
                    const rocksdb::DataVerificationInfo& /*info*/, IODebugContext* dbg) override {
      return Append(data, options, dbg);
    }
    IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& options,
                              IODebugContext* dbg) override {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::other); !s.ok())
        return s;
      auto s = target()->PositionedAppend(data, offset, options, dbg);
      if (s.ok() && offset + data.size() > size_)
        size_ = offset + data.size();
      return s;
    }
    IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& options,
                              const rocksdb::DataVerificationInfo& /*info*/,
                              IODebugContext* dbg) override {
      return PositionedAppend(data, offset, options, dbg);
    }
    IOStatus Truncate(uint64_t size, const IOOptions& options, IODebugContext* dbg) override {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::other); !s.ok())
        return s;
      auto s = target()->Truncate(size, options, dbg);
      if (s.ok()) {
        size_ = size;
        if (auto* st = fs_->state_locked(name_); st != nullptr && st->synced > size)
          st->synced = size;
      }
      return s;
    }
    IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
      return sync([&] { return target()->Sync(options, dbg); });
    }
    IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
      return sync([&] { return target()->Fsync(options, dbg); });
    }
    // sync_file_range() does not make data durable (no metadata, no device flush): it is not a
    // sync here, only an operation that can fail.
    IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& options,
                       IODebugContext* dbg) override {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::other); !s.ok())
        return s;
      return target()->RangeSync(offset, nbytes, options, dbg);
    }
    // Closing writes nothing that matters to the model; after a crash the wrapped file still
    // closes (its destructor would anyway) and reset() re-applies the crash.
    IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
      auto s = target()->Close(options, dbg);
      std::lock_guard lock(fs_->mu_);
      if (fs_->off_)
        return power_is_off();
      return s;
    }

   private:
    template <class F>
    IOStatus sync(F&& do_sync) {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::sync); !s.ok()) {
        if (fs_->landing_sync_) {
          // The scheduled crash hits this sync after the data reached the disk.
          fs_->landing_sync_ = false;
          do_sync().PermitUncheckedError();
          mark_synced_locked();
          fs_->crash_locked();
        }
        return s;
      }
      auto s = do_sync();
      if (s.ok())
        mark_synced_locked();
      return s;
    }

    void mark_synced_locked() {
      if (auto* st = fs_->state_locked(name_); st != nullptr) {
        st->synced = size_;
        st->ever_synced = true;
      }
    }

    power_loss_fs* fs_;
    std::string name_;
    uint64_t size_ = 0; // The file's length as written through this handle.
  };

  class tracked_directory final : public rocksdb::FSDirectoryWrapper {
   public:
    tracked_directory(std::unique_ptr<FSDirectory> dir, power_loss_fs* fs, std::string name)
        : FSDirectoryWrapper(std::move(dir)), fs_(fs), name_(std::move(name)) {}

    IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::other); !s.ok())
        return s;
      auto s = FSDirectoryWrapper::Fsync(options, dbg);
      if (s.ok())
        fs_->directory_synced_locked(name_);
      return s;
    }
    IOStatus FsyncWithDirOptions(const IOOptions& options, IODebugContext* dbg,
                                 const rocksdb::DirFsyncOptions& dir_options) override {
      std::lock_guard lock(fs_->mu_);
      if (auto s = fs_->begin_locked(op_kind::other); !s.ok())
        return s;
      auto s = FSDirectoryWrapper::FsyncWithDirOptions(options, dbg, dir_options);
      if (s.ok())
        fs_->directory_synced_locked(name_);
      return s;
    }

   private:
    power_loss_fs* fs_;
    std::string name_;
  };

  // Counts a mutating operation; fails it when the power is off or the scheduled crash is due.
  IOStatus begin_locked(op_kind kind) {
    if (off_)
      return power_is_off();
    ++operations_;
    if (countdown_ > 0 && --countdown_ == 0) {
      if (kind == op_kind::sync && sync_lands_) {
        // The caller performs the sync, then crashes (tracked_file::sync).
        landing_sync_ = true;
        return power_is_off();
      }
      crash_locked();
      return power_is_off();
    }
    return IOStatus::OK();
  }

  // True when `name` exists and its directory entry would survive a crash.
  bool durable_name_locked(const std::string& name) {
    if (!target()->FileExists(name, IOOptions(), nullptr).ok())
      return false;
    auto it = files_.find(name);
    return it == files_.end() || it->second.entry_durable;
  }

  file_state* state_locked(const std::string& name) {
    auto it = files_.find(name);
    return it == files_.end() ? nullptr : &it->second;
  }

  void move_state_locked(const std::string& from, const std::string& to) {
    auto it = files_.find(from);
    if (it == files_.end()) {
      files_.erase(to); // The renamed file was durable; so is its new name.
      return;
    }
    file_state st = it->second;
    files_.erase(it);
    files_[to] = st;
  }

  void directory_synced_locked(const std::string& dir) {
    for (auto& [name, st] : files_)
      if (parent_of(name) == dir)
        st.entry_durable = true;
  }

  void crash_locked() {
    crashed_ = true;
    off_ = true;
    countdown_ = 0;
    drop_unsynced_locked();
  }

  // Makes the disk look like it would after the power cut.
  void drop_unsynced_locked() {
    IOOptions io;
    for (const auto& [name, st] : files_) {
      if (!st.ever_synced && !st.entry_durable) {
        target()->DeleteFile(name, io, nullptr).PermitUncheckedError();
        continue;
      }
      // truncate(2) itself: RocksDB's POSIX file system does not implement Truncate by name.
      uint64_t size = 0;
      if (target()->GetFileSize(name, io, &size, nullptr).ok() && size > st.synced)
        (void)::truncate(name.c_str(), static_cast<off_t>(st.synced));
    }
  }

  mutable std::mutex mu_;
  std::unordered_map<std::string, file_state> files_;
  bool crashed_ = false; // The power went: reset() drops what was not synced.
  bool off_ = false;     // Mutating operations fail (after a crash or a kill).
  bool landing_sync_ = false;
  bool sync_lands_ = false;
  uint64_t operations_ = 0;
  uint64_t countdown_ = 0;
};

} // namespace

std::shared_ptr<rocksdb::FileSystem>
file_system_of(const std::shared_ptr<power_loss_simulator>& sim) {
  return std::static_pointer_cast<power_loss_fs>(sim);
}

} // namespace detail

std::shared_ptr<power_loss_simulator> power_loss_simulator::create() {
  return std::make_shared<detail::power_loss_fs>();
}

} // namespace phalanx::storage
