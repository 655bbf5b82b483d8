#pragma once

// Direct RocksDB access for tests that plant bad data behind the store's back.

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::storage::testing {

/// Opens the database at `path` with every column family; each call is one synced write.
class raw_db {
 public:
  explicit raw_db(const std::string& path) {
    rocksdb::DBOptions options;
    std::vector<std::string> names;
    status_ = rocksdb::DB::ListColumnFamilies(options, path, &names);
    if (!status_.ok())
      return;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names)
      cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    status_ = rocksdb::DB::Open(options, path, cfs, &handles_, &db_);
  }
  ~raw_db() {
    if (db_ == nullptr)
      return;
    for (auto* h : handles_)
      db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    db_->Close().PermitUncheckedError();
    delete db_;
  }
  raw_db(const raw_db&) = delete;
  raw_db& operator=(const raw_db&) = delete;

  const rocksdb::Status& status() const { return status_; }

  rocksdb::Status put(std::string_view cf, std::string_view key, std::string_view value) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    return db_->Put(wo, handle(cf), rocksdb::Slice(key.data(), key.size()),
                    rocksdb::Slice(value.data(), value.size()));
  }

  std::optional<std::string> get(std::string_view cf, std::string_view key) {
    std::string out;
    auto s =
        db_->Get(rocksdb::ReadOptions(), handle(cf), rocksdb::Slice(key.data(), key.size()), &out);
    if (!s.ok())
      return std::nullopt;
    return out;
  }

  /// Drops a column family, as a store written before it existed lacks it.
  rocksdb::Status drop_family(std::string_view cf) {
    auto* h = handle(cf);
    if (h == nullptr)
      return rocksdb::Status::NotFound(std::string(cf));
    auto s = db_->DropColumnFamily(h);
    if (!s.ok())
      return s;
    handles_.erase(std::find(handles_.begin(), handles_.end(), h));
    return db_->DestroyColumnFamilyHandle(h);
  }

  bool has_family(std::string_view cf) { return handle(cf) != nullptr; }

  std::vector<std::string> keys(std::string_view cf) {
    std::vector<std::string> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handle(cf)));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out.push_back(it->key().ToString());
    return out;
  }

 private:
  rocksdb::ColumnFamilyHandle* handle(std::string_view cf) {
    for (auto* h : handles_)
      if (h->GetName() == cf)
        return h;
    return nullptr;
  }

  rocksdb::Status status_;
  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

} // namespace phalanx::storage::testing
