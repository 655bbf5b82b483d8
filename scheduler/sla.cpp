#include "scheduler/sla.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace phalanx::scheduler {

namespace {

struct unit {
  std::string_view name;
  uint64_t nanoseconds;
};

// Go's unitMap. The two spellings of micro are U+00B5 (micro sign) and U+03BC (Greek mu).
constexpr std::array<unit, 8> units{{{"ns", 1},
                                     {"us", 1'000},
                                     {"\u00b5s", 1'000},
                                     {"\u03bcs", 1'000},
                                     {"ms", 1'000'000},
                                     {"s", 1'000'000'000},
                                     {"m", 60'000'000'000},
                                     {"h", 3'600'000'000'000}}};

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

status invalid(std::string_view what, std::string_view text) {
  return status{errc::invalid_argument,
                std::string(what) + " duration \"" + std::string(text) + "\""};
}

} // namespace

result<duration> parse_go_duration(std::string_view text) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0")
    return duration{0};
  if (s.empty())
    return invalid("invalid", text);
  // Go sums in uint64 nanoseconds and refuses more than 1<<63 (or 1<<63 - 1 when positive).
  constexpr uint64_t limit = uint64_t{1} << 63;
  uint64_t total = 0;
  while (!s.empty()) {
    if (!(s.front() == '.' || is_digit(s.front())))
      return invalid("invalid", text);
    uint64_t whole = 0;
    bool pre = false;
    while (!s.empty() && is_digit(s.front())) {
      if (whole > limit / 10)
        return invalid("invalid", text);
      whole = whole * 10 + uint64_t(s.front() - '0');
      if (whole > limit)
        return invalid("invalid", text);
      pre = true;
      s.remove_prefix(1);
    }
    uint64_t fraction = 0;
    double scale = 1;
    bool post = false;
    if (!s.empty() && s.front() == '.') {
      s.remove_prefix(1);
      bool overflow = false;
      for (; !s.empty() && is_digit(s.front()); s.remove_prefix(1)) {
        post = true;
        // Digits past what 63 bits hold are dropped, as Go's leadingFraction drops them.
        if (overflow)
          continue;
        if (fraction > (limit - 1) / 10) {
          overflow = true;
          continue;
        }
        uint64_t next = fraction * 10 + uint64_t(s.front() - '0');
        if (next > limit) {
          overflow = true;
          continue;
        }
        fraction = next;
        scale *= 10;
      }
    }
    if (!pre && !post)
      return invalid("invalid", text);
    std::size_t unit_end = 0;
    while (unit_end < s.size() && s[unit_end] != '.' && !is_digit(s[unit_end]))
      ++unit_end;
    if (unit_end == 0)
      return status{errc::invalid_argument,
                    "missing unit in duration \"" + std::string(text) + "\""};
    auto name = s.substr(0, unit_end);
    s.remove_prefix(unit_end);
    const unit* u = nullptr;
    for (const auto& candidate : units)
      if (candidate.name == name)
        u = &candidate;
    if (!u)
      return status{errc::invalid_argument, "unknown unit \"" + std::string(name) +
                                                "\" in duration \"" + std::string(text) + "\""};
    if (whole > limit / u->nanoseconds)
      return invalid("invalid", text);
    uint64_t value = whole * u->nanoseconds;
    if (fraction > 0) {
      // In floating point, as Go computes it: nanosecond-exact for fractions of an hour.
      value += static_cast<uint64_t>(static_cast<double>(fraction) *
                                     (static_cast<double>(u->nanoseconds) / scale));
      if (value > limit)
        return invalid("invalid", text);
    }
    total += value;
    if (total > limit)
      return invalid("invalid", text);
  }
  if (total == limit && !negative)
    return invalid("invalid", text);
  auto signed_total = total == limit ? std::numeric_limits<int64_t>::min()
                                     : static_cast<int64_t>(total) * (negative ? -1 : 1);
  return duration{signed_total};
}

result<std::optional<duration>> read_sla_waiting_time(const object_meta& meta) {
  auto text = meta.annotations.find(sla_waiting_time_key);
  if (!text)
    return std::optional<duration>{};
  auto parsed = parse_go_duration(*text);
  if (!parsed)
    return parsed.error();
  if (parsed->count() <= 0)
    return status{errc::invalid_argument,
                  "must be a duration above zero, as Go writes one (\"30m\", \"1h30m\")"};
  return std::optional<duration>{*parsed};
}

std::optional<timestamp> sla_deadline(const pod_group& group) noexcept {
  if (group.sla_waiting_time.count() <= 0)
    return std::nullopt;
  return group.meta.creation_time + group.sla_waiting_time;
}

bool sla_due(const pod_group& group, timestamp now) noexcept {
  auto deadline = sla_deadline(group);
  return deadline && now >= *deadline;
}

} // namespace phalanx::scheduler
