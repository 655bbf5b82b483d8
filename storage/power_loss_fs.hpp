#pragma once

// The rocksdb::FileSystem behind power_loss_simulator (store.hpp). Internal to storage/: it
// includes RocksDB headers.

#include "storage/store.hpp"

#include <rocksdb/file_system.h>

#include <memory>

namespace phalanx::storage::detail {

/// The file system a store opened with `options.fault_injection = sim` uses. `sim` must come from
/// power_loss_simulator::create().
std::shared_ptr<rocksdb::FileSystem>
file_system_of(const std::shared_ptr<power_loss_simulator>& sim);

} // namespace phalanx::storage::detail
