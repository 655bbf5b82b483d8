#include "actors/operator_log.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace phalanx::actors::oplog {
namespace {

std::atomic<format> chosen{format::logfmt};

std::string_view level_name(spdlog::level::level_enum level) noexcept {
  switch (level) {
    case spdlog::level::trace: return "trace";
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "info";
    case spdlog::level::warn: return "warn";
    case spdlog::level::err: return "error";
    case spdlog::level::critical: return "critical";
    default: return "off";
  }
}

// RFC 3339 in UTC with milliseconds: what log shippers parse without a hint.
void append_timestamp(std::string& out) {
  const auto now = std::chrono::system_clock::now();
  const auto seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                          now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                              utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                              utc.tm_min, utc.tm_sec, static_cast<int>(millis));
  out.append(buffer, static_cast<std::size_t>(n));
}

void append_unicode_escape(std::string& out, unsigned char c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
  out += buffer;
}

// A JSON string, quoted; also logfmt's quoted form (logfmt parsers read the same escapes).
void append_quoted(std::string& out, std::string_view value) {
  out += '"';
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f)
          append_unicode_escape(out, c);
        else
          out += ch;
    }
  }
  out += '"';
}

// logfmt leaves a value bare when nothing in it needs quoting.
bool needs_quotes(std::string_view value) noexcept {
  if (value.empty())
    return true;
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || ch == '"' || ch == '=' || ch == '\\' || c == 0x7f)
      return true;
  }
  return false;
}

} // namespace

std::optional<format> format_from_string(std::string_view text) noexcept {
  if (text == "logfmt")
    return format::logfmt;
  if (text == "json")
    return format::json;
  return std::nullopt;
}

void set_format(format f) noexcept { chosen.store(f, std::memory_order_relaxed); }

format current_format() noexcept { return chosen.load(std::memory_order_relaxed); }

line::line(spdlog::level::level_enum level, std::string_view msg)
    : level_(level), enabled_(spdlog::should_log(level)) {
  if (!enabled_)
    return;
  text_.reserve(128 + msg.size());
  if (current_format() == format::json) {
    text_ += "{\"ts\":\"";
    append_timestamp(text_);
    text_ += "\",\"level\":\"";
    text_ += level_name(level);
    text_ += "\",\"msg\":";
    append_quoted(text_, msg);
  } else {
    text_ += "ts=";
    append_timestamp(text_);
    text_ += " level=";
    text_ += level_name(level);
    text_ += " msg=";
    append_quoted(text_, msg);  // Always quoted: a message is words.
  }
}

line::~line() {
  if (!enabled_ || !write_)
    return;
  spdlog::default_logger_raw()->log(level_, "{}", text());
}

std::string line::text() const {
  if (!enabled_)
    return {};
  return current_format() == format::json ? text_ + "}" : text_;
}

void line::raw(std::string_view key, std::string_view literal) {
  if (current_format() == format::json) {
    text_ += ',';
    append_quoted(text_, key);
    text_ += ':';
  } else {
    text_ += ' ';
    text_ += key;
    text_ += '=';
  }
  text_ += literal;
}

line& line::kv(std::string_view key, std::string_view value) {
  if (!enabled_)
    return *this;
  if (current_format() == format::json) {
    text_ += ',';
    append_quoted(text_, key);
    text_ += ':';
    append_quoted(text_, value);
  } else {
    text_ += ' ';
    text_ += key;
    text_ += '=';
    if (needs_quotes(value))
      append_quoted(text_, value);
    else
      text_ += value;
  }
  return *this;
}

line& line::kv(std::string_view key, int64_t value) {
  if (enabled_)
    raw(key, std::to_string(value));
  return *this;
}

line& line::kv(std::string_view key, uint64_t value) {
  if (enabled_)
    raw(key, std::to_string(value));
  return *this;
}

line& line::kv(std::string_view key, double value) {
  if (!enabled_)
    return *this;
  if (!std::isfinite(value))
    return kv(key, std::string_view(std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf"));
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof buffer, "%.6g", value);
  raw(key, std::string_view(buffer, static_cast<std::size_t>(n)));
  return *this;
}

line& line::kv(std::string_view key, bool value) {
  if (enabled_)
    raw(key, value ? "true" : "false");
  return *this;
}

std::optional<uint64_t> rate_limit::pass() noexcept {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  auto start = window_start_.load(std::memory_order_relaxed);
  const bool new_window = start == std::numeric_limits<std::chrono::steady_clock::rep>::min() ||
                          now - start >= interval_;
  if (new_window && window_start_.compare_exchange_strong(start, now, std::memory_order_relaxed))
    used_.store(0, std::memory_order_relaxed);
  if (used_.fetch_add(1, std::memory_order_relaxed) < burst_)
    return skipped_.exchange(0, std::memory_order_relaxed);
  skipped_.fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

} // namespace phalanx::actors::oplog
