#include "scheduler/quantity.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

namespace {

constexpr int64_t int64_max = std::numeric_limits<int64_t>::max();
constexpr int64_t int64_min = std::numeric_limits<int64_t>::min();
constexpr uint64_t int64_max_magnitude = uint64_t(int64_max);
constexpr uint64_t int64_min_magnitude = uint64_t(int64_max) + 1; // |INT64_MIN| = 2^63.

// An exponent's magnitude saturates here while it is read: every non-zero mantissa with an
// exponent this large is out of range (or rounds to one unit) long before, so the exact value
// never matters and the reader never needs more than an int64.
constexpr int64_t exponent_saturation = 1'000'000'000;

bool is_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

// The text of an input inside a message: quoted, with bytes that are not printable ASCII (control
// characters, UTF-8 sequences, stray high bytes) escaped so a message stays one clean line.
std::string quoted(std::string_view text, std::size_t max_chars = max_quantity_length) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  std::size_t shown = text.size() < max_chars ? text.size() : max_chars;
  for (std::size_t i = 0; i < shown; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += char(c);
    }
  }
  out += '"';
  if (shown < text.size())
    out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

status quantity_error(std::string_view text, std::string_view rule) {
  std::string message = "quantity ";
  message += quoted(text);
  message += ' ';
  message += rule;
  return {errc::invalid_argument, std::move(message)};
}

constexpr std::string_view suffix_list =
    "n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as e3";

// What a suffix contributes: value = mantissa * 10^decimal_exponent * 2^binary_exponent.
struct suffix_scale {
  int64_t decimal_exponent = 0;
  int binary_exponent = 0;
};

// Kubernetes' suffix table. Binary suffixes are exact powers of 1024; decimal ones powers of 1000.
// "E" alone is exa; "E" followed by digits is an exponent (handled by the caller).
bool lookup_suffix(std::string_view s, suffix_scale& out) noexcept {
  struct entry {
    std::string_view text;
    suffix_scale scale;
  };
  static constexpr std::array<entry, 16> table{{
      {"", {0, 0}},
      {"n", {-9, 0}},
      {"u", {-6, 0}},
      {"m", {-3, 0}},
      {"k", {3, 0}},
      {"M", {6, 0}},
      {"G", {9, 0}},
      {"T", {12, 0}},
      {"P", {15, 0}},
      {"E", {18, 0}},
      {"Ki", {0, 10}},
      {"Mi", {0, 20}},
      {"Gi", {0, 30}},
      {"Ti", {0, 40}},
      {"Pi", {0, 50}},
      {"Ei", {0, 60}},
  }};
  for (const auto& e : table) {
    if (e.text == s) {
      out = e.scale;
      return true;
    }
  }
  return false;
}

// Reads a decimal exponent "e3", "E-2", "e+10" (the leading letter included). Returns false when
// `s` is not of that form. The magnitude saturates at exponent_saturation.
bool parse_exponent_suffix(std::string_view s, int64_t& out) noexcept {
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E'))
    return false;
  std::size_t i = 1;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  if (i == s.size())
    return false;
  int64_t value = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i]))
      return false;
    if (value < exponent_saturation)
      value = value * 10 + (s[i] - '0');
  }
  if (value > exponent_saturation)
    value = exponent_saturation;
  out = negative ? -value : value;
  return true;
}

// Multiplies a big decimal number (most significant digit first, digit values 0-9) by a small
// factor in place.
void multiply_digits(std::vector<uint8_t>& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (std::size_t i = digits.size(); i-- > 0;) {
    uint64_t x = uint64_t(digits[i]) * factor + carry;
    digits[i] = uint8_t(x % 10);
    carry = x / 10;
  }
  while (carry != 0) {
    digits.insert(digits.begin(), uint8_t(carry % 10));
    carry /= 10;
  }
}

} // namespace

std::string_view to_string(quantity_unit unit) noexcept {
  switch (unit) {
    case quantity_unit::whole:
      return "whole";
    case quantity_unit::milli:
      return "milli";
  }
  return "unknown";
}

result<int64_t> parse_quantity(std::string_view text, quantity_unit unit) {
  if (text.empty())
    return status{errc::invalid_argument,
                  "quantity is empty: expected a number such as 500m, 2Gi or 1.5"};
  if (text.size() > max_quantity_length)
    return status{errc::invalid_argument, "quantity " + quoted(text, 20) +
                                              " is too long: at most " +
                                              std::to_string(max_quantity_length) + " characters"};

  // The number: sign? digits ('.' digits?)? | sign? '.' digits.
  std::size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  std::size_t int_begin = pos;
  while (pos < text.size() && is_digit(text[pos]))
    ++pos;
  std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  bool has_point = false;
  if (pos < text.size() && text[pos] == '.') {
    has_point = true;
    ++pos;
    std::size_t frac_begin = pos;
    while (pos < text.size() && is_digit(text[pos]))
      ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    std::string rule = "is not a quantity: expected a decimal number";
    rule += has_point ? " with a digit before or after the point" : "";
    rule += " and an optional suffix (";
    rule += suffix_list;
    rule += ")";
    return quantity_error(text, rule);
  }

  // The suffix: everything after the number.
  std::string_view suffix = text.substr(pos);
  if (!suffix.empty() && suffix[0] == '.')
    return quantity_error(text, "is not a quantity: a number has at most one decimal point");
  suffix_scale scale;
  if (!lookup_suffix(suffix, scale)) {
    int64_t exponent = 0;
    if (!parse_exponent_suffix(suffix, exponent)) {
      std::string rule = "has an unknown suffix " + quoted(suffix) + ": supported suffixes are ";
      rule += suffix_list;
      return quantity_error(text, rule);
    }
    scale.decimal_exponent = exponent;
  }

  // value = digits * 10^(decimal_exponent - fraction digits) * 2^binary_exponent, expressed in the
  // unit. Only the significant digits take part, so the work stays linear in the input.
  std::vector<uint8_t> digits;
  digits.reserve(int_digits.size() + frac_digits.size() + 20);
  for (char c : int_digits)
    if (!digits.empty() || c != '0')
      digits.push_back(uint8_t(c - '0'));
  for (char c : frac_digits)
    if (!digits.empty() || c != '0')
      digits.push_back(uint8_t(c - '0'));
  if (digits.empty())
    return int64_t{0}; // Zero in any unit, whatever the suffix or exponent.

  int64_t exponent =
      scale.decimal_exponent - int64_t(frac_digits.size()) + (unit == quantity_unit::milli ? 3 : 0);
  // Trailing zeros of the mantissa move into the exponent: "1500000" is 15 * 10^5.
  while (digits.back() == 0) {
    digits.pop_back();
    ++exponent;
  }
  for (int b = scale.binary_exponent; b > 0; b -= 10)
    multiply_digits(digits, 1024);

  const uint64_t limit = negative ? int64_min_magnitude : int64_max_magnitude;
  auto out_of_range = [&] {
    std::string rule = "is out of range: ";
    if (unit == quantity_unit::milli)
      rule += "in thousandths (m) ";
    rule += "it must fit in a signed 64-bit integer (from -9223372036854775808";
    rule +=
        unit == quantity_unit::milli ? "m to 9223372036854775807m)" : " to 9223372036854775807)";
    return quantity_error(text, rule);
  };

  // 19 digits hold every int64 magnitude; 20 or more never fit.
  constexpr int64_t max_digits = 19;
  uint64_t magnitude = 0;
  if (exponent >= 0) {
    if (exponent > max_digits || int64_t(digits.size()) + exponent > max_digits)
      return out_of_range();
    for (uint8_t d : digits)
      magnitude = magnitude * 10 + d;
    for (int64_t i = 0; i < exponent; ++i)
      magnitude *= 10;
  } else {
    // Divide by 10^-exponent: drop that many digits and round away from zero if any was non-zero.
    uint64_t dropped = uint64_t(-exponent);
    bool remainder = false;
    std::size_t kept = 0;
    if (dropped >= digits.size()) {
      remainder = true; // The mantissa is non-zero and entirely below the unit.
    } else {
      kept = digits.size() - std::size_t(dropped);
      for (std::size_t i = kept; i < digits.size() && !remainder; ++i)
        remainder = digits[i] != 0;
    }
    if (int64_t(kept) > max_digits)
      return out_of_range();
    for (std::size_t i = 0; i < kept; ++i)
      magnitude = magnitude * 10 + digits[i];
    if (remainder)
      ++magnitude; // At most 10^19, which a uint64 holds.
  }
  if (magnitude > limit)
    return out_of_range();
  if (negative)
    return magnitude == int64_min_magnitude ? int64_min : -int64_t(magnitude);
  return int64_t(magnitude);
}

std::string format_quantity(int64_t amount, quantity_unit unit) {
  if (amount == 0)
    return "0";
  if (unit == quantity_unit::milli) {
    if (amount % 1000 == 0)
      return std::to_string(amount / 1000);
    return std::to_string(amount) + "m";
  }
  // Candidates: the largest exact binary suffix and the largest exact decimal one. Remainder
  // tests work on negative amounts too, and INT64_MIN is -8Ei.
  static constexpr std::array<std::string_view, 6> binary{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  static constexpr std::array<std::string_view, 6> decimal{"k", "M", "G", "T", "P", "E"};
  std::string best;
  for (int k = 6; k >= 1; --k) {
    int64_t factor = int64_t{1} << (10 * k);
    if (amount % factor == 0) {
      best = std::to_string(amount / factor) + std::string(binary[std::size_t(k - 1)]);
      break;
    }
  }
  int64_t factor = 1'000'000'000'000'000'000;
  for (int k = 6; k >= 1; --k, factor /= 1000) {
    if (amount % factor == 0) {
      std::string text = std::to_string(amount / factor) + std::string(decimal[std::size_t(k - 1)]);
      if (best.empty() || text.size() < best.size())
        best = std::move(text);
      break;
    }
  }
  return best.empty() ? std::to_string(amount) : best;
}

quantity_unit unit_of(std::string_view resource_name) noexcept {
  return resource_name == "cpu" ? quantity_unit::milli : quantity_unit::whole;
}

result<int64_t> parse_resource_amount(std::string_view resource_name, std::string_view text) {
  auto parsed = parse_quantity(text, unit_of(resource_name));
  if (!parsed) {
    std::string message(resource_name);
    message += ": ";
    message += parsed.error().message();
    return status{errc::invalid_argument, std::move(message)};
  }
  if (*parsed < 0) {
    std::string message(resource_name);
    message += ": quantity " + quoted(text) + " must be greater than or equal to 0";
    return status{errc::invalid_argument, std::move(message)};
  }
  return parsed;
}

std::string format_resource_amount(std::string_view resource_name, int64_t amount) {
  return format_quantity(amount, unit_of(resource_name));
}

// ---------------------------------------------------------------------------------------------
// Durations

namespace {

constexpr int64_t nanosecond = 1;
constexpr int64_t microsecond = 1000 * nanosecond;
constexpr int64_t millisecond = 1000 * microsecond;
constexpr int64_t second = 1000 * millisecond;
constexpr int64_t minute = 60 * second;
constexpr int64_t hour = 60 * minute;

// Go accepts both the micro sign (U+00B5) and the Greek small mu (U+03BC) for microseconds.
int64_t duration_unit(std::string_view u) noexcept {
  if (u == "ns")
    return nanosecond;
  if (u == "us" || u == "\u00b5s" || u == "\u03bcs")
    return microsecond;
  if (u == "ms")
    return millisecond;
  if (u == "s")
    return second;
  if (u == "m")
    return minute;
  if (u == "h")
    return hour;
  return 0;
}

status duration_error(std::string_view text, std::string_view rule) {
  std::string message = "duration ";
  message += quoted(text);
  message += ' ';
  message += rule;
  return {errc::invalid_argument, std::move(message)};
}

constexpr std::string_view duration_units_hint = "use ns, us, ms, s, m or h (e.g. 30s, 1m30s)";

} // namespace

result<int64_t> parse_duration_ns(std::string_view text) {
  if (text.empty())
    return status{errc::invalid_argument, "duration is empty: expected e.g. 30s, 1m30s or 500ms"};
  std::string_view s = text;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0")
    return int64_t{0};
  if (s.empty())
    return duration_error(text, "is not a duration: a sign needs a number after it");

  // Every component is checked against this bound as it is added, so nothing below overflows.
  constexpr __int128 max_total = std::numeric_limits<int64_t>::max();
  __int128 total = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || is_digit(s[0])))
      return duration_error(text, "is not a duration: expected a number before each unit");
    // The whole part; it may not overflow on its own.
    __int128 whole = 0;
    std::size_t i = 0;
    bool overflow = false;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      whole = whole * 10 + (s[i] - '0');
      if (whole > max_total) {
        overflow = true;
        whole = max_total + 1; // Keep the accumulator bounded while the digits are skipped.
      }
    }
    bool has_whole = i > 0;
    // The fraction, exact up to 18 digits.
    __int128 fraction = 0;
    __int128 fraction_scale = 1;
    bool has_fraction = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      int kept = 0;
      for (; i < s.size() && is_digit(s[i]); ++i) {
        has_fraction = true;
        if (kept < 18) {
          fraction = fraction * 10 + (s[i] - '0');
          fraction_scale *= 10;
          ++kept;
        }
      }
    }
    if (!has_whole && !has_fraction)
      return duration_error(text, "is not a duration: a point needs a digit before or after it");
    std::size_t unit_begin = i;
    while (i < s.size() && s[i] != '.' && !is_digit(s[i]))
      ++i;
    std::string_view unit_text = s.substr(unit_begin, i - unit_begin);
    if (unit_text.empty())
      return duration_error(text, std::string("has a number without a unit: ") +
                                      std::string(duration_units_hint));
    int64_t unit = duration_unit(unit_text);
    if (unit == 0)
      return duration_error(text, "has an unknown unit " + quoted(unit_text) + ": " +
                                      std::string(duration_units_hint));
    if (overflow)
      return duration_error(text,
                            "is out of range: at most 9223372036854775807ns (about 292 years)");
    total += whole * unit + fraction * unit / fraction_scale;
    if (total > max_total)
      return duration_error(text,
                            "is out of range: at most 9223372036854775807ns (about 292 years)");
    s.remove_prefix(i);
  }
  if (negative && total != 0)
    return duration_error(text, "is negative: a duration must be 0 or more");
  return int64_t(total);
}

namespace {

// Appends the digits of `v` after a decimal point, `precision` digits of it, without trailing
// zeros and without the point when they are all zero; returns v / 10^precision.
uint64_t append_fraction(std::string& out_reversed, uint64_t v, int precision) {
  bool printed = false;
  for (int i = 0; i < precision; ++i) {
    auto digit = char('0' + v % 10);
    printed = printed || digit != '0';
    if (printed)
      out_reversed += digit;
    v /= 10;
  }
  if (printed)
    out_reversed += '.';
  return v;
}

void append_integer(std::string& out_reversed, uint64_t v) {
  if (v == 0) {
    out_reversed += '0';
    return;
  }
  while (v > 0) {
    out_reversed += char('0' + v % 10);
    v /= 10;
  }
}

} // namespace

std::string format_duration_ns(int64_t nanoseconds) {
  if (nanoseconds == 0)
    return "0s";
  // Built from the least significant end, like Go, then reversed once.
  bool negative = nanoseconds < 0;
  uint64_t u = negative ? uint64_t(0) - uint64_t(nanoseconds) : uint64_t(nanoseconds);
  std::string r;
  if (u < uint64_t(second)) {
    // Below a second the largest unit that keeps an integer part is used: 1.5ms, 250ns.
    int precision = 0;
    if (u < uint64_t(microsecond)) {
      r += "sn";
    } else if (u < uint64_t(millisecond)) {
      r += "s\xb5\xc2"; // "µs" reversed byte by byte (U+00B5 is C2 B5 in UTF-8).
      precision = 3;
    } else {
      r += "sm";
      precision = 6;
    }
    u = append_fraction(r, u, precision);
    append_integer(r, u);
  } else {
    r += 's';
    u = append_fraction(r, u, 9);
    append_integer(r, u % 60);
    u /= 60;
    if (u > 0) {
      r += 'm';
      append_integer(r, u % 60);
      u /= 60;
      if (u > 0) {
        r += 'h';
        append_integer(r, u);
      }
    }
  }
  if (negative)
    r += '-';
  return std::string(r.rbegin(), r.rend());
}

} // namespace phalanx::scheduler
