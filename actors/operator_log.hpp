#pragma once

// Operator logs (issue 30): one line per event an operator asks about, in one structured format
// chosen at start (`phalanxd --log-format`):
//   logfmt (default): ts=2026-11-29T03:20:00.123Z level=info msg="gang placed" gang=ml/tf pods=3
//   json:             {"ts":"2026-11-29T03:20:00.123Z","level":"info","msg":"gang placed",...}
// Keys are fixed words chosen here; values are escaped as the format needs (quotes, backslashes,
// control characters), so a pod name or an apiserver's error text cannot break a line. spdlog
// still writes the line (phalanxd sets its pattern to "%v"): its sinks, its level filter and its
// locking stay as they were.
//
//   oplog::info("gang placed").kv("gang", key).kv("pods", 3);
//
// The line is built only when its level is enabled, and written when the expression ends.
// Lines a storm could repeat thousands of times a second go through a `rate_limit`.

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace phalanx::actors::oplog {

enum class format { logfmt, json };

/// "logfmt" or "json"; nullopt for anything else.
std::optional<format> format_from_string(std::string_view text) noexcept;

/// The format of every line from now on (phalanxd sets it once, before the runtime starts).
void set_format(format f) noexcept;
format current_format() noexcept;

/// One line: the timestamp, the level and the message first, then each key and value.
class line {
public:
  line(spdlog::level::level_enum level, std::string_view msg);
  line(const line&) = delete;
  line& operator=(const line&) = delete;
  /// Writes the line (when its level is enabled).
  ~line();

  line& kv(std::string_view key, std::string_view value);
  line& kv(std::string_view key, const std::string& value) {
    return kv(key, std::string_view(value));
  }
  line& kv(std::string_view key, const char* value) { return kv(key, std::string_view(value)); }
  line& kv(std::string_view key, int64_t value);
  line& kv(std::string_view key, uint64_t value);
  line& kv(std::string_view key, int32_t value) { return kv(key, int64_t{value}); }
  line& kv(std::string_view key, uint32_t value) { return kv(key, uint64_t{value}); }
  line& kv(std::string_view key, double value);
  line& kv(std::string_view key, bool value);

  /// The line as it would be written (for tests); empty when its level is disabled.
  std::string text() const;
  /// Builds the line but does not write it (for tests).
  line& unwritten() noexcept {
    write_ = false;
    return *this;
  }

private:
  void raw(std::string_view key, std::string_view literal);

  spdlog::level::level_enum level_;
  bool enabled_;
  bool write_ = true;
  std::string text_;
};

/// Whether lines of `level` are written: a hot path asks before it builds a line's values (they
/// are computed before kv() can skip them).
inline bool enabled(spdlog::level::level_enum level) { return spdlog::should_log(level); }

inline line trace(std::string_view msg) { return line(spdlog::level::trace, msg); }
inline line debug(std::string_view msg) { return line(spdlog::level::debug, msg); }
inline line info(std::string_view msg) { return line(spdlog::level::info, msg); }
inline line warn(std::string_view msg) { return line(spdlog::level::warn, msg); }
inline line error(std::string_view msg) { return line(spdlog::level::err, msg); }

/// At most `burst` lines per `interval` from one call site, across threads; the next line that
/// passes says how many were left out (key `suppressed`). Declare one `static` per call site:
///
///   static oplog::rate_limit limit{std::chrono::seconds(1), 5};
///   if (auto left_out = limit.pass()) oplog::warn("watch error").kv("suppressed", *left_out);
class rate_limit {
public:
  rate_limit(std::chrono::steady_clock::duration interval, uint32_t burst) noexcept
      : interval_(interval.count()), burst_(burst) {}

  /// When this call may log: how many calls were left out since the last one that passed.
  /// nullopt when it may not.
  std::optional<uint64_t> pass() noexcept;

private:
  const std::chrono::steady_clock::rep interval_;
  const uint32_t burst_;
  std::atomic<std::chrono::steady_clock::rep> window_start_{
      std::numeric_limits<std::chrono::steady_clock::rep>::min()};
  std::atomic<uint64_t> used_{0};     // Lines passed in this window.
  std::atomic<uint64_t> skipped_{0};  // Calls left out since the last line that passed.
};

} // namespace phalanx::actors::oplog
