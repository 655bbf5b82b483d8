#include "api/process_metrics.hpp"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <unistd.h>

#ifndef PHALANX_VERSION
#define PHALANX_VERSION "unknown"
#endif
#ifndef PHALANX_BUILD_TYPE
#define PHALANX_BUILD_TYPE "unknown"
#endif

namespace phalanx::api {

namespace {

constexpr double not_read = std::numeric_limits<double>::quiet_NaN();

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::optional<uint64_t> to_u64(std::string_view text) {
  uint64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{} || r.ptr != text.data() + text.size())
    return std::nullopt;
  return v;
}

// The words of `text` separated by spaces and tabs.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n'))
      ++i;
    auto start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\n')
      ++i;
    if (i > start)
      out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::optional<proc_stat> read_self_stat() {
  auto text = read_file("/proc/self/stat");
  if (!text)
    return std::nullopt;
  return parse_proc_stat(*text);
}

double ticks_per_second() {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ticks;
}

// The start time never changes: read once, at registration.
double start_time_seconds() {
  auto stat = read_self_stat();
  auto system = read_file("/proc/stat");
  auto boot = system ? parse_boot_time(*system) : std::nullopt;
  if (!stat || !boot || ticks_per_second() <= 0)
    return not_read;
  return static_cast<double>(*boot) + static_cast<double>(stat->start_ticks) / ticks_per_second();
}

double open_fds() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  if (ec)
    return not_read;
  double n = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec)
      return not_read;
    ++n;
  }
  return n;
}

} // namespace

std::optional<proc_stat> parse_proc_stat(std::string_view line) {
  auto close = line.rfind(')');
  if (close == std::string_view::npos || line.find('(') > close)
    return std::nullopt;
  // Field 3 (the state) is the first word after the command.
  auto fields = words(line.substr(close + 1));
  auto field = [&](std::size_t number) -> std::optional<uint64_t> {
    if (number < 3 || number - 3 >= fields.size())
      return std::nullopt;
    return to_u64(fields[number - 3]);
  };
  auto utime = field(14), stime = field(15), start = field(22), vsize = field(23),
       rss = field(24);
  if (!utime || !stime || !start || !vsize || !rss)
    return std::nullopt;
  return proc_stat{*utime, *stime, *start, *vsize, *rss};
}

std::optional<uint64_t> parse_max_open_files(std::string_view limits) {
  constexpr std::string_view key = "Max open files";
  auto at = limits.find(key);
  if (at == std::string_view::npos)
    return std::nullopt;
  auto end = limits.find('\n', at);
  auto row = words(limits.substr(at + key.size(), end == std::string_view::npos
                                                       ? std::string_view::npos
                                                       : end - at - key.size()));
  if (row.empty())
    return std::nullopt;
  if (row[0] == "unlimited")
    return std::numeric_limits<uint64_t>::max();
  return to_u64(row[0]);  // The soft limit: the one open() is refused at.
}

std::optional<uint64_t> parse_boot_time(std::string_view stat) {
  std::size_t at = 0;
  while (at < stat.size()) {
    auto end = stat.find('\n', at);
    auto line = stat.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    auto w = words(line);
    if (w.size() == 2 && w[0] == "btime")
      return to_u64(w[1]);
    if (end == std::string_view::npos)
      break;
    at = end + 1;
  }
  return std::nullopt;
}

void register_process_metrics(metrics_registry& registry) {
  registry.add_sampled("process_cpu_seconds_total", "CPU time the process used, user and system, in seconds (utime + stime of "
                       "/proc/self/stat).",
                       metric_type::counter, [] {
                         auto s = read_self_stat();
                         if (!s || ticks_per_second() <= 0)
                           return not_read;
                         return static_cast<double>(s->user_ticks + s->system_ticks) /
                                ticks_per_second();
                       });
  registry.add_sampled("process_resident_memory_bytes", "Memory of the process resident in RAM, in bytes (rss of /proc/self/stat "
                       "times the page size).",
                       metric_type::gauge, [] {
                         static const auto page = static_cast<double>(::sysconf(_SC_PAGESIZE));
                         auto s = read_self_stat();
                         return s ? static_cast<double>(s->resident_pages) * page : not_read;
                       });
  registry.add_sampled("process_virtual_memory_bytes", "Size of the process's virtual address space, in bytes (vsize of "
                       "/proc/self/stat).",
                       metric_type::gauge, [] {
                         auto s = read_self_stat();
                         return s ? static_cast<double>(s->virtual_bytes) : not_read;
                       });
  registry.add_sampled("process_open_fds", "File descriptors the process has open (entries of /proc/self/fd).", metric_type::gauge,
                       open_fds);
  registry.add_sampled("process_max_fds", "The process's soft limit on open file descriptors (/proc/self/limits).",
                       metric_type::gauge, [] {
                         auto limits = read_file("/proc/self/limits");
                         auto max = limits ? parse_max_open_files(*limits) : std::nullopt;
                         return max ? static_cast<double>(*max) : not_read;
                       });
  const double started = start_time_seconds();
  registry.add_sampled("process_start_time_seconds",
                       "When the process started, in seconds since the Unix epoch (the boot time "
                       "plus starttime of /proc/self/stat).",
                       metric_type::gauge, [started] { return started; });
}

build_info this_build() {
  std::ostringstream compiler;
#if defined(__clang__)
  compiler << "clang " << __clang_major__ << '.' << __clang_minor__ << '.' << __clang_patchlevel__;
#elif defined(__GNUC__)
  compiler << "g++ " << __GNUC__ << '.' << __GNUC_MINOR__ << '.' << __GNUC_PATCHLEVEL__;
#else
  compiler << "unknown";
#endif
  return {PHALANX_VERSION, compiler.str(), PHALANX_BUILD_TYPE};
}

void register_build_info(metrics_registry& registry, const build_info& build) {
  registry
      .gauge_family("phalanx_build_info",
                    "Always 1; its labels name the build of phalanxd that runs: version (the "
                    "project's), compiler and build_type (CMake's).",
                    {"version", "compiler", "build_type"})
      .with({build.version, build.compiler, build.build_type})
      .set(1);
}

} // namespace phalanx::api
