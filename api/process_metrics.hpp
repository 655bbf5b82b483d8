#pragma once

// The metrics every Prometheus client library exports about its process (`process_*`, read from
// /proc/self as client_golang's process collector does), and `phalanx_build_info`, so that the
// dashboards and alerts written for any exporter (memory, CPU, file descriptors near the limit,
// restarts by start time, the version running) work on phalanxd unchanged.

#include "api/metrics.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phalanx::api {

/// The fields of /proc/<pid>/stat the process metrics use (proc(5)).
struct proc_stat {
  uint64_t user_ticks = 0;        // utime, field 14, in clock ticks.
  uint64_t system_ticks = 0;      // stime, field 15.
  uint64_t start_ticks = 0;       // starttime, field 22: clock ticks after boot.
  uint64_t virtual_bytes = 0;     // vsize, field 23.
  uint64_t resident_pages = 0;    // rss, field 24.
};

/// Parses the one line of /proc/<pid>/stat. The command (field 2) is in parentheses and may hold
/// spaces and parentheses itself: fields are counted from the last ')'. nullopt when the line is
/// not of that form.
std::optional<proc_stat> parse_proc_stat(std::string_view line);

/// The soft "Max open files" limit from the text of /proc/<pid>/limits; nullopt when absent.
/// "unlimited" reads as the largest uint64_t.
std::optional<uint64_t> parse_max_open_files(std::string_view limits);

/// The boot time in seconds since the epoch, from the "btime" line of /proc/stat; nullopt when
/// absent.
std::optional<uint64_t> parse_boot_time(std::string_view stat);

/// Registers process_cpu_seconds_total (counter), process_resident_memory_bytes,
/// process_virtual_memory_bytes, process_open_fds, process_max_fds and
/// process_start_time_seconds (gauges), each read from /proc/self when the registry renders. A
/// file that cannot be read renders NaN for the values it gives (not on Linux, or /proc not
/// mounted). Throws std::invalid_argument if one of the names is registered already.
void register_process_metrics(metrics_registry& registry);

/// What phalanx_build_info's labels say: the version of the build (CMake's project version),
/// the compiler that built it and CMake's build type.
struct build_info {
  std::string version;
  std::string compiler;
  std::string build_type;
};

/// This binary's build_info.
build_info this_build();

/// Registers phalanx_build_info{version,compiler,build_type} 1, a gauge always 1 whose labels
/// tell what runs (Prometheus's `<name>_build_info` convention: join on it to label any series
/// with the version).
void register_build_info(metrics_registry& registry, const build_info& build = this_build());

} // namespace phalanx::api
