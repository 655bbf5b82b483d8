// Seeded randomized properties of quantities and resource arithmetic: 100,000 cases in total.
//
//   round trips        40,000  parse(format(x)) == x: 15,000 whole, 15,000 milli, 10,000 durations
//   reference parses   30,000  random valid quantity strings against an exact __int128 reference
//   random bytes       20,000  never crash or hang; accepted text matches the grammar
//   arithmetic         10,000  a + b - b == a, commutativity, fits(a, a + b), saturation,
//                              dominant_share monotone
//
// Deterministic: a failure names its seed and case number; rerun reproduces it.

#include "scheduler/quantity.hpp"
#include "scheduler/resources.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {
namespace {

constexpr uint64_t seed = 0x5eed'9a1a'2024ULL;
constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
constexpr int64_t min64 = std::numeric_limits<int64_t>::min();

using rng_t = std::mt19937_64;

int64_t uniform(rng_t& r, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(r);
}

// Amounts from several shapes, so canonical forms with every suffix show up.
int64_t random_amount(rng_t& r) {
  switch (uniform(r, 0, 7)) {
    case 0:
      return int64_t(r()); // Anything, including both extremes' neighbourhoods.
    case 1:
      return uniform(r, -5000, 5000);
    case 2: { // A multiple of a power of 1024.
      int shift = int(uniform(r, 10, 62));
      int64_t limit = max64 >> shift;
      return uniform(r, -limit - 1, limit) * (int64_t{1} << shift);
    }
    case 3: { // A multiple of a power of 1000.
      int64_t factor = 1;
      for (int64_t k = uniform(r, 1, 6); k > 0; --k)
        factor *= 1000;
      int64_t limit = max64 / factor;
      return uniform(r, -limit, limit) * factor;
    }
    case 4:
      return uniform(r, 0, 1) ? max64 - uniform(r, 0, 3000) : min64 + uniform(r, 0, 3000);
    case 5:
      return uniform(r, -(int64_t{1} << 53), int64_t{1} << 53);
    case 6:
      return uniform(r, -1000000, 1000000) * 1000;
    default:
      return int64_t(r() >> uniform(r, 0, 63)) * (uniform(r, 0, 1) ? 1 : -1);
  }
}

TEST(quantity_property, format_parse_round_trip) {
  rng_t r(seed);
  for (int i = 0; i < 30000; ++i) {
    int64_t x = random_amount(r);
    auto unit = i % 2 == 0 ? quantity_unit::whole : quantity_unit::milli;
    std::string text = format_quantity(x, unit);
    ASSERT_LE(text.size(), max_quantity_length) << text;
    auto back = parse_quantity(text, unit);
    ASSERT_TRUE(back.ok()) << "seed " << seed << " case " << i << ": " << x << " -> " << text
                           << ": " << back.error().to_string();
    ASSERT_EQ(*back, x) << "seed " << seed << " case " << i << ": " << text;
  }
  for (int i = 0; i < 10000; ++i) {
    int64_t x = random_amount(r);
    if (x < 0)
      x = x == min64 ? max64 : -x;
    std::string text = format_duration_ns(x);
    auto back = parse_duration_ns(text);
    ASSERT_TRUE(back.ok()) << "seed " << seed << " duration case " << i << ": " << x << " -> "
                           << text << ": " << back.error().to_string();
    ASSERT_EQ(*back, x) << "seed " << seed << " duration case " << i << ": " << text;
  }
}

// ---------------------------------------------------------------------------------------------
// An independent exact reference: value = M * 2^bin * 10^dec with M below 10^18, worked out in
// __int128 with overflow checks, and rounded away from zero.

struct reference_value {
  bool in_range = false;
  int64_t value = 0;
};

reference_value reference(bool negative, const std::string& int_digits,
                          const std::string& frac_digits, int64_t suffix_dec, int suffix_bin,
                          quantity_unit unit) {
  // Significant digits only: leading zeros of the whole part, trailing zeros of the fraction.
  std::string whole =
      int_digits.substr(std::min(int_digits.find_first_not_of('0'), int_digits.size()));
  std::string frac = frac_digits.substr(0, frac_digits.find_last_not_of('0') + 1);
  if (frac_digits.find_last_not_of('0') == std::string::npos)
    frac.clear();
  std::string all = whole + frac;
  std::size_t first = all.find_first_not_of('0');
  if (first == std::string::npos)
    return {true, 0};
  __int128 m = 0;
  for (char c : all.substr(first))
    m = m * 10 + (c - '0');
  int64_t dec = suffix_dec - int64_t(frac.size()) + (unit == quantity_unit::milli ? 3 : 0);
  __int128 magnitude = 0;
  __int128 num = m << suffix_bin; // m < 10^18, so below 2^60 * 2^60.
  if (dec >= 0) {
    for (int64_t k = 0; k < dec; ++k) {
      if (__builtin_mul_overflow(num, __int128(10), &num))
        return {false, 0};
    }
    magnitude = num;
  } else if (-dec > 38) {
    magnitude = 1; // num < 2^120 < 10^37 < den: the value is below one unit.
  } else {
    __int128 den = 1;
    for (int64_t k = 0; k < -dec; ++k)
      den *= 10;
    magnitude = num / den + (num % den != 0 ? 1 : 0);
  }
  __int128 limit = negative ? -__int128(min64) : __int128(max64);
  if (magnitude > limit)
    return {false, 0};
  return {true, int64_t(negative ? -magnitude : magnitude)};
}

std::string random_digits(rng_t& r, int64_t n) {
  std::string out;
  for (int64_t i = 0; i < n; ++i)
    out += char('0' + uniform(r, 0, 9));
  return out;
}

TEST(quantity_property, valid_strings_match_the_exact_reference) {
  rng_t r(seed + 1);
  struct suffix {
    std::string_view text;
    int64_t dec;
    int bin;
  };
  static const suffix suffixes[] = {
      {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
      {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
      {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
  };
  int checked_in_range = 0;
  for (int i = 0; i < 30000; ++i) {
    bool negative = false;
    std::string text;
    switch (uniform(r, 0, 2)) {
      case 1:
        text += '+';
        break;
      case 2:
        text += '-';
        negative = true;
        break;
      default:
        break;
    }
    // Up to 18 significant digits split over the two parts, with optional zero padding.
    int64_t significant = uniform(r, 1, 18);
    int64_t int_len = uniform(r, 0, significant);
    std::string int_digits =
        std::string(std::size_t(uniform(r, 0, 1) ? uniform(r, 0, 25) : 0), '0') +
        random_digits(r, int_len);
    std::string frac_digits =
        random_digits(r, significant - int_len) +
        std::string(std::size_t(uniform(r, 0, 1) ? uniform(r, 0, 25) : 0), '0');
    bool point = !frac_digits.empty() || uniform(r, 0, 3) == 0;
    if (int_digits.empty() && frac_digits.empty())
      int_digits = "0";
    text += int_digits;
    if (point)
      text += '.';
    text += frac_digits;
    int64_t dec = 0;
    int bin = 0;
    if (uniform(r, 0, 2) == 0) {
      // An exponent, sometimes with a sign and leading zeros.
      int64_t e = uniform(r, -45, 45);
      text += uniform(r, 0, 1) ? 'e' : 'E';
      if (e < 0)
        text += '-';
      else if (uniform(r, 0, 1))
        text += '+';
      text += std::string(std::size_t(uniform(r, 0, 2)), '0') + std::to_string(e < 0 ? -e : e);
      dec = e;
    } else {
      const auto& s = suffixes[uniform(r, 0, std::size(suffixes) - 1)];
      text += s.text;
      dec = s.dec;
      bin = s.bin;
    }
    for (auto unit : {quantity_unit::whole, quantity_unit::milli}) {
      auto got = parse_quantity(text, unit);
      if (text.size() > max_quantity_length) {
        ASSERT_FALSE(got.ok()) << text;
        ASSERT_NE(got.error().message().find("is too long"), std::string::npos) << text;
        continue;
      }
      auto want = reference(negative, int_digits, frac_digits, dec, bin, unit);
      if (want.in_range) {
        ++checked_in_range;
        ASSERT_TRUE(got.ok()) << "seed " << seed + 1 << " case " << i << ": \"" << text << "\" ("
                              << to_string(unit) << "): " << got.error().to_string();
        ASSERT_EQ(*got, want.value) << "seed " << seed + 1 << " case " << i << ": \"" << text
                                    << "\" (" << to_string(unit) << ")";
      } else {
        ASSERT_FALSE(got.ok()) << "seed " << seed + 1 << " case " << i << ": \"" << text << "\" ("
                               << to_string(unit) << ") parsed as " << *got;
        ASSERT_NE(got.error().message().find("is out of range"), std::string::npos)
            << got.error().message();
      }
    }
  }
  // The generator must mostly produce amounts that fit, or the comparison proves little.
  EXPECT_GT(checked_in_range, 30000);
}

// ---------------------------------------------------------------------------------------------

int64_t div_away_from_zero(int64_t milli) {
  int64_t q = milli / 1000;
  if (milli % 1000 != 0)
    q += milli > 0 ? 1 : -1;
  return q;
}

// The grammar of quantity.hpp, written independently of the parser as a direct reading of
//   [+-]? ( [0-9]+ ( '.' [0-9]* )? | '.' [0-9]+ ) ( [KMGTPE]i | [numkMGTPE] | [eE][+-]?[0-9]+ )?
// (std::regex would do, but GCC 12 warns inside <regex> under the sanitizers.)
bool matches_grammar(std::string_view s) {
  std::size_t i = 0;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i]))
      ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-'))
    ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0)
      return false;
  } else {
    if (digits() == 0)
      return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  std::string_view rest = s.substr(i);
  if (rest.empty())
    return true;
  if (rest.size() == 2 && rest[1] == 'i' &&
      std::string_view("KMGTPE").find(rest[0]) != std::string_view::npos)
    return true;
  if (rest.size() == 1 && std::string_view("numkMGTPE").find(rest[0]) != std::string_view::npos)
    return true;
  if (rest[0] != 'e' && rest[0] != 'E')
    return false;
  std::size_t j = 1;
  if (j < rest.size() && (rest[j] == '+' || rest[j] == '-'))
    ++j;
  if (j == rest.size())
    return false;
  for (; j < rest.size(); ++j)
    if (!is_digit(rest[j]))
      return false;
  return true;
}

TEST(quantity_property, grammar_matcher_agrees_with_hand_picked_strings) {
  for (std::string_view ok : {"0", "+1", "-.5", "5.", "1.5Ki", "2E", "1e3", "1E-3", "1e+03", "7m"})
    EXPECT_TRUE(matches_grammar(ok)) << ok;
  for (std::string_view bad : {"", ".", "+", "1.2.3", "Gi", "1 Gi", "1gi", "0x10", "1e", "1E+",
                               "1Ki3", "1K", "e3", "1e3.5"})
    EXPECT_FALSE(matches_grammar(bad)) << bad;
}

TEST(quantity_property, random_bytes_never_crash_and_respect_the_grammar) {
  rng_t r(seed + 2);
  static constexpr std::string_view alphabet = "0123456789.+-eEnumkKMGTPi ";
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    int64_t length = uniform(r, 0, i % 10 == 0 ? 80 : 12);
    bool raw = uniform(r, 0, 4) == 0;
    for (int64_t k = 0; k < length; ++k) {
      if (raw || uniform(r, 0, 19) == 0)
        text += char(uniform(r, 0, 255));
      else
        text += alphabet[std::size_t(uniform(r, 0, int64_t(alphabet.size()) - 1))];
    }
    auto whole = parse_quantity(text, quantity_unit::whole);
    auto milli = parse_quantity(text, quantity_unit::milli);
    bool matches = text.size() <= max_quantity_length && matches_grammar(text);
    if (whole.ok() || milli.ok()) {
      ++accepted;
      ASSERT_TRUE(matches) << "seed " << seed + 2 << " case " << i << ": accepted \"" << text
                           << "\"";
    }
    if (matches) {
      for (const auto* res : {&whole, &milli}) {
        if (!res->ok()) {
          ASSERT_NE(res->error().message().find("is out of range"), std::string::npos)
              << "seed " << seed + 2 << " case " << i << ": \"" << text
              << "\": " << res->error().message();
        }
      }
    }
    if (whole.ok() && milli.ok()) {
      ASSERT_EQ(*whole, div_away_from_zero(*milli)) << "\"" << text << "\"";
    }
    if (!whole.ok()) {
      ASSERT_EQ(whole.error().code(), errc::invalid_argument);
    }
    (void)parse_duration_ns(text); // Only must not crash or hang.
  }
  EXPECT_GT(accepted, 1000);
}

// ---------------------------------------------------------------------------------------------
// Resource arithmetic

const std::vector<std::string_view>& dimension_names() {
  static const std::vector<std::string_view> names = {"cpu",
                                                      "memory",
                                                      "ephemeral-storage",
                                                      "pods",
                                                      "nvidia.com/gpu",
                                                      "property.example.com/a",
                                                      "property.example.com/b",
                                                      "property.example.com/c"};
  return names;
}

resources random_resources(rng_t& r, int64_t lo, int64_t hi) {
  resources out;
  for (auto name : dimension_names())
    if (uniform(r, 0, 2) != 0)
      out.set(name, uniform(r, lo, hi));
  return out;
}

void expect_invariant(const resources& x) {
  const auto& ext = x.extended();
  for (std::size_t i = 0; i < ext.size(); ++i) {
    ASSERT_NE(ext[i].amount, 0);
    if (i > 0) {
      ASSERT_LT(ext[i - 1].name, ext[i].name);
    }
  }
}

TEST(resources_property, arithmetic_laws) {
  rng_t r(seed + 3);
  constexpr int64_t small = int64_t{1} << 40;
  for (int i = 0; i < 10000; ++i) {
    SCOPED_TRACE("seed " + std::to_string(seed + 3) + " case " + std::to_string(i));
    // No saturation possible: a + b - b == a, and + commutes.
    resources a = random_resources(r, -small, small);
    resources b = random_resources(r, -small, small);
    ASSERT_EQ((a + b) - b, a);
    ASSERT_EQ(a + b, b + a);
    ASSERT_EQ(a - a, resources{});
    expect_invariant(a + b);

    // Non-negative: a fits in a + b, and a + b needs b's share of what a holds.
    resources na = random_resources(r, 0, small);
    resources nb = random_resources(r, 0, small);
    ASSERT_TRUE(fits(na, na + nb));
    ASSERT_TRUE(fits(na, na));
    ASSERT_EQ(fits(na + nb, na), nb.is_zero()); // Any positive part of b does not fit.
    ASSERT_EQ(fits(nb, na), shortfalls(nb, na).empty());

    // Saturation never wraps: each dimension is the exact sum clamped to the int64 range.
    resources wa = random_resources(r, min64, max64);
    resources wb = random_resources(r, min64, max64);
    resources sum = wa + wb;
    resources diff = wa - wb;
    for (auto name : dimension_names()) {
      __int128 exact_sum = __int128(wa.get(name)) + wb.get(name);
      __int128 exact_diff = __int128(wa.get(name)) - wb.get(name);
      auto clamp = [](__int128 v) { return v > max64 ? max64 : v < min64 ? min64 : int64_t(v); };
      ASSERT_EQ(sum.get(name), clamp(exact_sum)) << name;
      ASSERT_EQ(diff.get(name), clamp(exact_diff)) << name;
    }
    expect_invariant(sum);
    expect_invariant(diff);
    int64_t n = uniform(r, -3, 1000);
    resources scaled = wa.times(n);
    for (auto name : dimension_names()) {
      __int128 exact = __int128(wa.get(name)) * n;
      ASSERT_EQ(scaled.get(name), exact > max64 ? max64 : exact < min64 ? min64 : int64_t(exact));
    }

    // dominant_share is monotone in the amount.
    resources total = random_resources(r, 1, small);
    ratio before = dominant_share(na, total);
    ratio after = dominant_share(na + nb, total);
    ASSERT_LE(before, after);
    ASSERT_GE(before, (ratio{0, 1}));
  }
}

} // namespace
} // namespace phalanx::scheduler
