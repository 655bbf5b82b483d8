#include "storage/commit_mark.hpp"

#include <array>
#include <cstring>
#include <utility>

namespace phalanx::storage::detail {

namespace {

constexpr std::size_t entry_size = 16;
constexpr char magic[4] = {'P', 'X', 'C', '1'};

// A 32-bit check of the number (splitmix64's finalizer): any flipped bit in the entry fails it.
uint32_t check_of(uint64_t v) noexcept {
  uint64_t z = v + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<uint32_t>(z ^ (z >> 32));
}

std::array<char, entry_size> make_entry(uint64_t commit) noexcept {
  std::array<char, entry_size> out{};
  std::memcpy(out.data(), magic, 4);
  for (int i = 0; i < 8; ++i)
    out[4 + i] = static_cast<char>((commit >> (8 * i)) & 0xff);
  uint32_t check = check_of(commit);
  for (int i = 0; i < 4; ++i)
    out[12 + i] = static_cast<char>((check >> (8 * i)) & 0xff);
  return out;
}

std::optional<uint64_t> parse_entry(const char* p) noexcept {
  if (std::memcmp(p, magic, 4) != 0)
    return std::nullopt;
  uint64_t commit = 0;
  for (int i = 0; i < 8; ++i)
    commit |= uint64_t(static_cast<unsigned char>(p[4 + i])) << (8 * i);
  uint32_t check = 0;
  for (int i = 0; i < 4; ++i)
    check |= uint32_t(static_cast<unsigned char>(p[12 + i])) << (8 * i);
  if (check != check_of(commit))
    return std::nullopt;
  return commit;
}

std::string path_of(const std::string& dir) {
  return dir + "/" + commit_mark::file_name;
}

status io_error(const std::string& what, const rocksdb::IOStatus& s) {
  return {errc::io_error, what + ": " + s.ToString()};
}

} // namespace

result<std::optional<uint64_t>> commit_mark::read(rocksdb::FileSystem& fs, const std::string& dir) {
  std::string data;
  auto s = rocksdb::ReadFileToString(&fs, path_of(dir), &data);
  if (s.IsNotFound() || (s.IsIOError() && !fs.FileExists(path_of(dir), {}, nullptr).ok()))
    return std::optional<uint64_t>{};
  if (!s.ok())
    return io_error("read commit mark " + path_of(dir), s);
  std::optional<uint64_t> best;
  for (std::size_t off = 0; off + entry_size <= data.size(); off += entry_size)
    if (auto v = parse_entry(data.data() + off); v && (!best || *v > *best))
      best = v;
  return best;
}

commit_mark::commit_mark(std::shared_ptr<rocksdb::FileSystem> fs, std::string dir)
    : fs_(std::move(fs)), dir_(std::move(dir)) {}

commit_mark::~commit_mark() {
  if (file_) {
    sync();
    file_->Close({}, nullptr).PermitUncheckedError();
  }
}

result<std::unique_ptr<commit_mark>> commit_mark::start(std::shared_ptr<rocksdb::FileSystem> fs,
                                                        std::string dir, uint64_t commit) {
  std::unique_ptr<commit_mark> mark(new commit_mark(std::move(fs), std::move(dir)));
  if (auto s = mark->rewrite(commit); !s.ok())
    return s;
  return mark;
}

status commit_mark::rewrite(uint64_t commit) {
  if (file_) {
    file_->Close({}, nullptr).PermitUncheckedError();
    file_.reset();
  }
  const std::string final_path = path_of(dir_);
  const std::string tmp_path = final_path + ".tmp";
  rocksdb::FileOptions options;
  rocksdb::IOOptions io;
  {
    std::unique_ptr<rocksdb::FSWritableFile> tmp;
    auto s = fs_->NewWritableFile(tmp_path, options, &tmp, nullptr);
    auto entry = make_entry(commit);
    if (s.ok())
      s = tmp->Append(rocksdb::Slice(entry.data(), entry.size()), io, nullptr);
    if (s.ok())
      s = tmp->Sync(io, nullptr);
    if (tmp) {
      auto c = tmp->Close(io, nullptr);
      if (s.ok())
        s = c;
    }
    if (!s.ok())
      return io_error("write commit mark " + tmp_path, s);
  }
  if (auto s = fs_->RenameFile(tmp_path, final_path, io, nullptr); !s.ok())
    return io_error("rename commit mark to " + final_path, s);
  {
    std::unique_ptr<rocksdb::FSDirectory> dir;
    auto s = fs_->NewDirectory(dir_, io, &dir, nullptr);
    if (s.ok())
      s = dir->Fsync(io, nullptr);
    if (dir)
      dir->Close(io, nullptr).PermitUncheckedError();
    if (!s.ok())
      return io_error("sync directory " + dir_, s);
  }
  auto s = fs_->ReopenWritableFile(final_path, options, &file_, nullptr);
  if (!s.ok()) {
    file_.reset();
    return io_error("open commit mark " + final_path, s);
  }
  entries_ = 1;
  dirty_ = false;
  broken_ = false;
  last_sync_ = std::chrono::steady_clock::now();
  return {};
}

bool commit_mark::advance(uint64_t commit) {
  if (broken_ || !file_ || entries_ >= rotate_entries) {
    // A failed append may have left a partial entry that would misalign the rest: start over.
    if (!rewrite(commit).ok()) {
      broken_ = true;
      return false;
    }
    return true;
  }
  auto entry = make_entry(commit);
  auto s = file_->Append(rocksdb::Slice(entry.data(), entry.size()), {}, nullptr);
  if (s.ok())
    s = file_->Flush({}, nullptr);
  if (!s.ok()) {
    broken_ = true;
    return false;
  }
  ++entries_;
  dirty_ = true;
  if (std::chrono::steady_clock::now() - last_sync_ >= sync_interval)
    return sync();
  return true;
}

bool commit_mark::sync() {
  if (!file_ || broken_)
    return false;
  if (!dirty_)
    return true;
  auto s = file_->Sync({}, nullptr);
  if (!s.ok()) {
    broken_ = true;
    return false;
  }
  dirty_ = false;
  last_sync_ = std::chrono::steady_clock::now();
  return true;
}

} // namespace phalanx::storage::detail
