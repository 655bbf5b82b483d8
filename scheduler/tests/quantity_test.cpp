// Table-driven tests of Kubernetes quantities and Go durations (scheduler/quantity.hpp).

#include "scheduler/quantity.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace phalanx::scheduler {
namespace {

constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
constexpr int64_t min64 = std::numeric_limits<int64_t>::min();
constexpr int64_t ki = int64_t{1} << 10;
constexpr int64_t mi = int64_t{1} << 20;
constexpr int64_t gi = int64_t{1} << 30;
constexpr int64_t ti = int64_t{1} << 40;
constexpr int64_t pi = int64_t{1} << 50;
constexpr int64_t ei = int64_t{1} << 60;

struct parse_case {
  std::string text;
  std::optional<int64_t> whole; // nullopt: an error containing `error`.
  std::optional<int64_t> milli;
  std::string error = {}; // Substring of the error message when either fails.
};

std::ostream& operator<<(std::ostream& os, const parse_case& c) {
  return os << '"' << c.text << '"';
}

class parse_quantity_test : public ::testing::TestWithParam<parse_case> {};

TEST_P(parse_quantity_test, whole_and_milli) {
  const auto& c = GetParam();
  auto w = parse_quantity(c.text, quantity_unit::whole);
  if (c.whole) {
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    EXPECT_EQ(*w, *c.whole);
  } else {
    ASSERT_FALSE(w.ok()) << "parsed as " << *w;
    EXPECT_EQ(w.error().code(), errc::invalid_argument);
    EXPECT_NE(w.error().message().find(c.error), std::string::npos) << w.error().message();
  }
  auto m = parse_quantity(c.text, quantity_unit::milli);
  if (c.milli) {
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    EXPECT_EQ(*m, *c.milli);
  } else {
    ASSERT_FALSE(m.ok()) << "parsed as " << *m;
    EXPECT_EQ(m.error().code(), errc::invalid_argument);
    EXPECT_NE(m.error().message().find(c.error), std::string::npos) << m.error().message();
  }
}

constexpr std::nullopt_t err = std::nullopt;
const std::string out_of_range = "is out of range";
const std::string not_quantity = "is not a quantity";
const std::string unknown_suffix = "unknown suffix";

// Each row: text, Value(), MilliValue(), error substring for the failing side(s).
INSTANTIATE_TEST_SUITE_P(
    kubernetes_grammar, parse_quantity_test,
    ::testing::Values(
        // Plain numbers and signs.
        parse_case{"0", 0, 0}, parse_case{"1", 1, 1000}, parse_case{"+3", 3, 3000},
        parse_case{"-1", -1, -1000}, parse_case{"-0", 0, 0}, parse_case{"+0", 0, 0},
        parse_case{"000", 0, 0}, parse_case{"007", 7, 7000}, parse_case{"0.0", 0, 0},
        parse_case{"12345", 12345, 12345000},
        // Fractions: round away from zero below the unit.
        parse_case{"0.5", 1, 500}, parse_case{".5", 1, 500}, parse_case{"5.", 5, 5000},
        parse_case{"-.5", -1, -500}, parse_case{"-0.5", -1, -500}, parse_case{"1.5", 2, 1500},
        parse_case{"0.0001", 1, 1}, parse_case{"-0.0001", -1, -1}, parse_case{"1.0005", 2, 1001},
        parse_case{"-1.0005", -2, -1001}, parse_case{"2.000", 2, 2000},
        // Decimal SI suffixes.
        parse_case{"100m", 1, 100}, parse_case{"1500m", 2, 1500}, parse_case{"1.5m", 1, 2},
        parse_case{"-1.5m", -1, -2}, parse_case{"0.1m", 1, 1}, parse_case{"1n", 1, 1},
        parse_case{"-1n", -1, -1}, parse_case{"1u", 1, 1}, parse_case{"1000u", 1, 1},
        parse_case{"1000000n", 1, 1}, parse_case{"1000001n", 1, 2}, parse_case{"1k", 1000, 1000000},
        parse_case{"1.5k", 1500, 1500000}, parse_case{"1M", 1000000, 1000000000},
        parse_case{"1G", 1000000000, 1000000000000},
        parse_case{"1T", 1000000000000, 1000000000000000},
        parse_case{"1P", 1000000000000000, 1000000000000000000},
        parse_case{"1E", 1000000000000000000, err, out_of_range},
        parse_case{"2E", 2000000000000000000, err, out_of_range},
        parse_case{"9E", 9000000000000000000, err, out_of_range},
        parse_case{"10E", err, err, out_of_range}, parse_case{"100E", err, err, out_of_range},
        parse_case{"0E", 0, 0}, parse_case{"9.223372036854775807E", max64, err, out_of_range},
        parse_case{"9.223372036854775808E", err, err, out_of_range},
        parse_case{"-9.223372036854775808E", min64, err, out_of_range},
        parse_case{"-9.223372036854775809E", err, err, out_of_range},
        parse_case{"9223372036854775.807", 9223372036854776, max64},
        parse_case{"9223372036854775.808", 9223372036854776, err, out_of_range},
        parse_case{"-9223372036854775.808", -9223372036854776, min64},
        // Binary SI suffixes.
        parse_case{"1Ki", ki, ki * 1000}, parse_case{"2Gi", 2 * gi, 2 * gi * 1000},
        parse_case{"1Mi", mi, mi * 1000}, parse_case{"1Ti", ti, ti * 1000},
        parse_case{"1Pi", pi, pi * 1000}, parse_case{"1Ei", ei, err, out_of_range},
        parse_case{"7Ei", 7 * ei, err, out_of_range}, parse_case{"8Ei", err, err, out_of_range},
        parse_case{"-8Ei", min64, err, out_of_range}, parse_case{".5Ki", 512, 512000},
        parse_case{"1.5Gi", gi + gi / 2, (gi + gi / 2) * 1000},
        parse_case{"1.0001Ki", 1025, 1024103}, parse_case{"-9.5Gi", -10200547328, -10200547328000},
        parse_case{"0.001Ki", 2, 1024},
        parse_case{"8191.99999Pi", 9223372025595776740, err, out_of_range},
        // Decimal exponents.
        parse_case{"1e3", 1000, 1000000}, parse_case{"1E3", 1000, 1000000},
        parse_case{"1e+3", 1000, 1000000}, parse_case{"1E+3", 1000, 1000000},
        parse_case{"1e-3", 1, 1}, parse_case{"2e-3", 1, 2}, parse_case{"-2e-3", -1, -2},
        parse_case{"1e0", 1, 1000}, parse_case{"1e00000000000000000000000000000003", 1000, 1000000},
        parse_case{"1.5e3", 1500, 1500000}, parse_case{"15e-1", 2, 1500},
        parse_case{"1e18", 1000000000000000000, err, out_of_range},
        parse_case{"1e19", err, err, out_of_range}, parse_case{"10e18", err, err, out_of_range},
        parse_case{"0.1e19", 1000000000000000000, err, out_of_range},
        parse_case{"1e15", 1000000000000000, 1000000000000000000},
        parse_case{"0.00000000000000000001e20", 1, 1000},
        parse_case{"123456789012345678901234567890e-20", 1234567891, 1234567890124},
        parse_case{"1e-100", 1, 1}, parse_case{"-1e-100", -1, -1},
        parse_case{"1e100", err, err, out_of_range}, parse_case{"0e1000000000000", 0, 0},
        parse_case{"0.000e-99999999999999999", 0, 0},
        // Absurd exponents fail (or round) at once instead of looping.
        parse_case{"2E6024865272343", err, err, out_of_range},
        parse_case{"2e6024865272343", err, err, out_of_range},
        parse_case{"-2e6024865272343", err, err, out_of_range},
        parse_case{"2e-6024865272343", 1, 1},
        parse_case{"1e99999999999999999999999999999999999999999999999999999999", err, err,
                   out_of_range},
        // The int64 boundaries.
        parse_case{"9223372036854775807", max64, err, out_of_range},
        parse_case{"9223372036854775808", err, err, out_of_range},
        parse_case{"-9223372036854775808", min64, err, out_of_range},
        parse_case{"-9223372036854775809", err, err, out_of_range},
        parse_case{"9223372036854775807m", 9223372036854776, max64},
        parse_case{"9223372036854775808m", 9223372036854776, err, out_of_range},
        parse_case{"-9223372036854775808m", -9223372036854776, min64},
        parse_case{"-9223372036854775809m", -9223372036854776, err, out_of_range},
        parse_case{"9223372036854775806.5", max64, err, out_of_range},
        parse_case{"9223372036854775807.0000001", err, err, out_of_range},
        parse_case{"18446744073709551616", err, err, out_of_range},
        parse_case{"99999999999999999999999999999999999999999999999999999999999999", err, err,
                   out_of_range},
        // Long but valid: exactly 64 characters.
        parse_case{"0000000000000000000000000000000000000000000000000000000000000001", 1, 1000},
        parse_case{"0.00000000000000000000000000000000000000000000000000000000000001", 1, 1},
        parse_case{".000000000000000000000000000000000000000000000000000000000000000", 0, 0},
        // Too long: 65 characters.
        parse_case{"00000000000000000000000000000000000000000000000000000000000000001", err, err,
                   "is too long: at most 64 characters"},
        parse_case{std::string(100000, '9'), err, err, "is too long"},
        // Not quantities.
        parse_case{"", err, err, "quantity is empty"}, parse_case{".", err, err, not_quantity},
        parse_case{"+", err, err, not_quantity}, parse_case{"-", err, err, not_quantity},
        parse_case{"--1", err, err, not_quantity}, parse_case{"+-1", err, err, not_quantity},
        parse_case{"Gi", err, err, not_quantity}, parse_case{"m", err, err, not_quantity},
        parse_case{"e3", err, err, not_quantity}, parse_case{" 1", err, err, not_quantity},
        parse_case{"-.", err, err, not_quantity}, parse_case{".Ki", err, err, not_quantity},
        parse_case{"\xef\xbc\x91", err, err, not_quantity}, // Fullwidth digit one.
        parse_case{"\xff", err, err, not_quantity},
        // Unknown suffixes.
        parse_case{"1.2.3", err, err, "is not a quantity: a number has at most one decimal point"},
        parse_case{"1..2", err, err, "at most one decimal point"},
        parse_case{"..5", err, err, not_quantity}, parse_case{"1 Gi", err, err, unknown_suffix},
        parse_case{"1gi", err, err, unknown_suffix}, parse_case{"1GI", err, err, unknown_suffix},
        parse_case{"1K", err, err, unknown_suffix}, parse_case{"1ki", err, err, unknown_suffix},
        parse_case{"1KI", err, err, unknown_suffix}, parse_case{"1Ki3", err, err, unknown_suffix},
        parse_case{"1m3", err, err, unknown_suffix}, parse_case{"1mm", err, err, unknown_suffix},
        parse_case{"1Eii", err, err, unknown_suffix}, parse_case{"0x10", err, err, unknown_suffix},
        parse_case{"1e", err, err, unknown_suffix}, parse_case{"1E+", err, err, unknown_suffix},
        parse_case{"1e-", err, err, unknown_suffix}, parse_case{"1e3.5", err, err, unknown_suffix},
        parse_case{"1e3Ki", err, err, unknown_suffix}, parse_case{"1 ", err, err, unknown_suffix},
        parse_case{"1\n", err, err, unknown_suffix},
        parse_case{std::string("1\0", 2), err, err, unknown_suffix},
        parse_case{"1\xc2\xb5", err, err, unknown_suffix}, // "1µ"
        parse_case{"1Gi ", err, err, unknown_suffix}, parse_case{"1i", err, err, unknown_suffix},
        parse_case{"1b", err, err, unknown_suffix}, parse_case{"1B", err, err, unknown_suffix},
        parse_case{"1%", err, err, unknown_suffix}, parse_case{"1,5", err, err, unknown_suffix},
        parse_case{"Infinity", err, err, not_quantity}, parse_case{"NaN", err, err, not_quantity}));

TEST(parse_quantity, out_of_range_message_names_the_rule) {
  auto r = parse_quantity("9223372036854775808", quantity_unit::whole);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "quantity \"9223372036854775808\" is out of range: it must fit in a signed 64-bit "
            "integer (from -9223372036854775808 to 9223372036854775807)");
  auto m = parse_quantity("100E", quantity_unit::milli);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(),
            "quantity \"100E\" is out of range: in thousandths (m) it must fit in a signed 64-bit "
            "integer (from -9223372036854775808m to 9223372036854775807m)");
}

TEST(parse_quantity, messages_escape_unprintable_bytes) {
  auto r = parse_quantity("1\x01\xff\"", quantity_unit::whole);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("\"1\\x01\\xff\\\"\""), std::string::npos)
      << r.error().message();
  auto unknown = parse_quantity("1gi", quantity_unit::whole);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message(),
            "quantity \"1gi\" has an unknown suffix \"gi\": supported suffixes are n, u, m, k, M, "
            "G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent such as e3");
  auto long_text = parse_quantity(std::string(65, '1'), quantity_unit::whole);
  ASSERT_FALSE(long_text.ok());
  EXPECT_EQ(long_text.error().message(),
            "quantity \"11111111111111111111\"... (65 bytes) is too long: at most 64 characters");
}

TEST(parse_quantity, every_control_byte_and_high_byte_is_rejected_alone_and_as_suffix) {
  for (int b = 0; b < 256; ++b) {
    if (b >= '0' && b <= '9')
      continue;
    std::string alone(1, char(b));
    EXPECT_FALSE(parse_quantity(alone, quantity_unit::whole).ok()) << b;
    std::string suffixed = "1" + alone;
    auto r = parse_quantity(suffixed, quantity_unit::whole);
    // Only the one-letter SI suffixes are valid after a digit.
    bool valid =
        std::string_view("numkMGTPE").find(char(b)) != std::string_view::npos || char(b) == '.';
    EXPECT_EQ(r.ok(), valid) << b;
  }
}

// ---------------------------------------------------------------------------------------------

struct format_case {
  int64_t amount;
  quantity_unit unit;
  std::string text;
};

class format_quantity_test : public ::testing::TestWithParam<format_case> {};

TEST_P(format_quantity_test, canonical_text_and_round_trip) {
  const auto& c = GetParam();
  EXPECT_EQ(format_quantity(c.amount, c.unit), c.text);
  auto back = parse_quantity(c.text, c.unit);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(*back, c.amount);
}

INSTANTIATE_TEST_SUITE_P(
    canonical, format_quantity_test,
    ::testing::Values(
        format_case{0, quantity_unit::whole, "0"}, format_case{1, quantity_unit::whole, "1"},
        format_case{-1, quantity_unit::whole, "-1"}, format_case{1024, quantity_unit::whole, "1Ki"},
        format_case{-1024, quantity_unit::whole, "-1Ki"},
        format_case{2147483648, quantity_unit::whole, "2Gi"},
        format_case{1500, quantity_unit::whole, "1500"},
        format_case{1000, quantity_unit::whole, "1k"},
        format_case{3000000, quantity_unit::whole, "3M"},
        format_case{1500000, quantity_unit::whole, "1500k"},
        format_case{1001, quantity_unit::whole, "1001"},
        format_case{1536, quantity_unit::whole, "1536"},
        format_case{1024000, quantity_unit::whole, "1024k"},
        format_case{2048000, quantity_unit::whole, "2048k"},
        format_case{1000000000, quantity_unit::whole, "1G"},
        format_case{1000000000000, quantity_unit::whole, "1T"},
        format_case{100000000000, quantity_unit::whole, "100G"},
        format_case{2000000000000000000, quantity_unit::whole, "2E"},
        format_case{ei, quantity_unit::whole, "1Ei"},
        format_case{7 * ei, quantity_unit::whole, "7Ei"},
        format_case{16 * gi, quantity_unit::whole, "16Gi"},
        format_case{3 * ti + 512 * gi, quantity_unit::whole, "3584Gi"},
        format_case{max64, quantity_unit::whole, "9223372036854775807"},
        format_case{min64, quantity_unit::whole, "-8Ei"},
        format_case{min64 + 1, quantity_unit::whole, "-9223372036854775807"},
        format_case{0, quantity_unit::milli, "0"}, format_case{500, quantity_unit::milli, "500m"},
        format_case{2000, quantity_unit::milli, "2"}, format_case{1, quantity_unit::milli, "1m"},
        format_case{-1500, quantity_unit::milli, "-1500m"},
        format_case{-3000, quantity_unit::milli, "-3"},
        format_case{1000000, quantity_unit::milli, "1000"},
        format_case{max64, quantity_unit::milli, "9223372036854775807m"},
        format_case{min64, quantity_unit::milli, "-9223372036854775808m"},
        format_case{9223372036854775000, quantity_unit::milli, "9223372036854775"}));

TEST(quantity_unit, every_value_has_a_name) {
  EXPECT_EQ(to_string(quantity_unit::whole), "whole");
  EXPECT_EQ(to_string(quantity_unit::milli), "milli");
}

TEST(unit_of, cpu_is_milli_everything_else_whole) {
  EXPECT_EQ(unit_of("cpu"), quantity_unit::milli);
  for (std::string_view name : {"memory", "ephemeral-storage", "pods", "nvidia.com/gpu",
                                "hugepages-2Mi", "CPU", "cpu ", ""})
    EXPECT_EQ(unit_of(name), quantity_unit::whole) << name;
}

TEST(parse_resource_amount, unit_follows_the_resource_and_negatives_fail) {
  struct row {
    std::string_view resource;
    std::string_view text;
    std::optional<int64_t> expected;
    std::string_view error;
  };
  const row rows[] = {
      {"cpu", "500m", 500, ""},
      {"cpu", "2", 2000, ""},
      {"cpu", "0.5", 500, ""},
      {"memory", "2Gi", 2 * gi, ""},
      {"memory", "0.5", 1, ""},
      {"pods", "110", 110, ""},
      {"nvidia.com/gpu", "8", 8, ""},
      {"memory", "0", 0, ""},
      {"memory", "-0", 0, ""},
      {"memory", "-9.5Gi", std::nullopt,
       "memory: quantity \"-9.5Gi\" must be greater than or equal to 0"},
      {"cpu", "-1m", std::nullopt, "cpu: quantity \"-1m\" must be greater than or equal to 0"},
      {"cpu", "-0.0001", std::nullopt, "must be greater than or equal to 0"},
      {"memory", "1gi", std::nullopt, "memory: quantity \"1gi\" has an unknown suffix"},
      {"cpu", "9223372036854776", std::nullopt,
       "cpu: quantity \"9223372036854776\" is out of range"},
      {"memory", "", std::nullopt, "memory: quantity is empty"},
  };
  for (const auto& r : rows) {
    auto got = parse_resource_amount(r.resource, r.text);
    if (r.expected) {
      ASSERT_TRUE(got.ok()) << r.resource << "=" << r.text << ": " << got.error().to_string();
      EXPECT_EQ(*got, *r.expected) << r.resource << "=" << r.text;
    } else {
      ASSERT_FALSE(got.ok()) << r.resource << "=" << r.text;
      EXPECT_EQ(got.error().code(), errc::invalid_argument);
      EXPECT_NE(got.error().message().find(r.error), std::string::npos) << got.error().message();
    }
  }
}

TEST(format_resource_amount, unit_follows_the_resource) {
  EXPECT_EQ(format_resource_amount("cpu", 500), "500m");
  EXPECT_EQ(format_resource_amount("cpu", 4000), "4");
  EXPECT_EQ(format_resource_amount("memory", 16 * gi), "16Gi");
  EXPECT_EQ(format_resource_amount("nvidia.com/gpu", 8), "8");
  EXPECT_EQ(format_resource_amount("pods", 110), "110");
}

// ---------------------------------------------------------------------------------------------
// Durations

constexpr int64_t ns = 1;
constexpr int64_t us = 1000 * ns;
constexpr int64_t ms = 1000 * us;
constexpr int64_t sec = 1000 * ms;
constexpr int64_t minute = 60 * sec;
constexpr int64_t hour = 60 * minute;

TEST(parse_duration_ns, go_grammar) {
  struct row {
    std::string text;
    std::optional<int64_t> expected;
    std::string error = {};
  };
  const row rows[] = {
      {"0", 0},
      {"+0", 0},
      {"-0", 0},
      {"0s", 0},
      {"30s", 30 * sec},
      {"1m30s", 90 * sec},
      {"2h", 2 * hour},
      {"500ms", 500 * ms},
      {"1.5s", 1500 * ms},
      {"1.5h", 90 * minute},
      {".5s", 500 * ms},
      {"1.s", sec},
      {"+5s", 5 * sec},
      {"1h1m1s1ms1us1ns", hour + minute + sec + ms + us + ns},
      {"1us", us},
      {"1\xc2\xb5s", us}, // U+00B5 micro sign.
      {"1\xce\xbcs", us}, // U+03BC Greek mu.
      {"1ns", 1},
      {"100ns", 100},
      {"1h0m0s", hour},
      {"1s1s", 2 * sec},
      {"0.000000001s", 1},
      {"0.0000000019s", 1},
      {"0.0000000001s", 0},
      {"1.0000000000000000000000000000009s", sec},
      {"2562047h", 2562047 * hour},
      {"2562047h47m16.854775807s", std::numeric_limits<int64_t>::max()},
      {"9223372036854775807ns", std::numeric_limits<int64_t>::max()},
      {"", std::nullopt, "duration is empty"},
      {"1", std::nullopt, "has a number without a unit"},
      {"1.2.3s", std::nullopt, "has a number without a unit"},
      {"s", std::nullopt, "expected a number before each unit"},
      {"-", std::nullopt, "a sign needs a number"},
      {"1x", std::nullopt, "has an unknown unit \"x\""},
      {"1e3s", std::nullopt, "has an unknown unit \"e\""},
      {"1S", std::nullopt, "unknown unit \"S\""},
      {"1 s", std::nullopt, "unknown unit \" s\""},
      {".s", std::nullopt, "a point needs a digit"},
      {"1h-1m", std::nullopt, "unknown unit \"h-\""},
      {"-1s", std::nullopt, "is negative"},
      {"-1.5h", std::nullopt, "is negative"},
      {"2562048h", std::nullopt, "is out of range"},
      {"2562047h47m16.854775808s", std::nullopt, "is out of range"},
      {"9223372036854775808ns", std::nullopt, "is out of range"},
      {"99999999999999999999999999999999999999999999s", std::nullopt, "is out of range"},
  };
  for (const auto& r : rows) {
    auto got = parse_duration_ns(r.text);
    if (r.expected) {
      ASSERT_TRUE(got.ok()) << r.text << ": " << got.error().to_string();
      EXPECT_EQ(*got, *r.expected) << r.text;
    } else {
      ASSERT_FALSE(got.ok()) << r.text << " parsed as " << *got;
      EXPECT_EQ(got.error().code(), errc::invalid_argument);
      EXPECT_NE(got.error().message().find(r.error), std::string::npos)
          << r.text << ": " << got.error().message();
    }
  }
}

TEST(format_duration_ns, go_string_form) {
  struct row {
    int64_t ns;
    std::string text;
  };
  const row rows[] = {
      {0, "0s"},
      {1, "1ns"},
      {999, "999ns"},
      {1000, "1\xc2\xb5s"},
      {1500, "1.5\xc2\xb5s"},
      {1001, "1.001\xc2\xb5s"},
      {ms, "1ms"},
      {1500 * us, "1.5ms"},
      {999999999, "999.999999ms"},
      {sec, "1s"},
      {1500 * ms, "1.5s"},
      {90 * sec, "1m30s"},
      {minute, "1m0s"},
      {hour, "1h0m0s"},
      {90 * minute, "1h30m0s"},
      {hour + minute + sec + 1, "1h1m1.000000001s"},
      {100 * hour, "100h0m0s"},
      {-1, "-1ns"},
      {-90 * sec, "-1m30s"},
      {std::numeric_limits<int64_t>::max(), "2562047h47m16.854775807s"},
      {std::numeric_limits<int64_t>::min(), "-2562047h47m16.854775808s"},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(format_duration_ns(r.ns), r.text) << r.ns;
    if (r.ns >= 0) {
      auto back = parse_duration_ns(r.text);
      ASSERT_TRUE(back.ok()) << r.text << ": " << back.error().to_string();
      EXPECT_EQ(*back, r.ns) << r.text;
    }
  }
}

} // namespace
} // namespace phalanx::scheduler
