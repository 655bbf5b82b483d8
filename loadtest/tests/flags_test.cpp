// The flag parser: values, bounds, and errors that name the flag and the rule.

#include "loadtest/flags.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace phalanx::loadtest {
namespace {

struct parsed {
  int64_t nodes = 5;
  double fraction = 0.5;
  std::string name = "x";
  bool keep = false;
  int64_t timeout_ns = 1'000'000'000;
  std::string choice = "a";
  std::string required;
};

status parse(std::vector<std::string> args, parsed& p, bool with_required = false) {
  flag_set f("phalanx-loadtest test", "A test.");
  f.add_int("nodes", &p.nodes, 1, 100, "nodes");
  f.add_double("fraction", &p.fraction, 0, 1, "a fraction");
  f.add_string("name", &p.name, "a name");
  f.add_bool("keep", &p.keep, "keep");
  f.add_duration("timeout", &p.timeout_ns, 1'000'000, 120'000'000'000, "timeout");
  f.add_choice("choice", &p.choice, {"a", "b"}, "a choice");
  if (with_required)
    f.add_string("trace", &p.required, "trace", true);
  return f.parse(args);
}

TEST(LoadtestFlags, ParsesEveryKindInBothSpellings) {
  parsed p;
  auto s = parse({"--nodes", "42", "--fraction=0.25", "--name", "abc", "--keep", "--timeout",
                  "1m30s", "--choice=b"},
                 p);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(p.nodes, 42);
  EXPECT_DOUBLE_EQ(p.fraction, 0.25);
  EXPECT_EQ(p.name, "abc");
  EXPECT_TRUE(p.keep);
  EXPECT_EQ(p.timeout_ns, 90'000'000'000);
  EXPECT_EQ(p.choice, "b");
}

TEST(LoadtestFlags, KeepsDefaultsWhenAbsent) {
  parsed p;
  ASSERT_TRUE(parse({}, p).ok());
  EXPECT_EQ(p.nodes, 5);
  EXPECT_EQ(p.name, "x");
  EXPECT_FALSE(p.keep);
}

// "--" ends the flags (Boost.Program_options' rule; the hand-written parser refused it as an
// unexpected argument): with nothing after it, the command line is whole.
TEST(LoadtestFlags, DoubleDashEndsTheFlags) {
  parsed p;
  auto s = parse({"--nodes", "3", "--"}, p);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(p.nodes, 3);
}

TEST(LoadtestFlags, ErrorsNameTheFlagAndTheRule) {
  struct row {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<row> rows = {
      {{"--nodes", "ten"}, "--nodes: \"ten\" is not an integer"},
      {{"--nodes", "0"}, "--nodes: 0 is out of range: must be between 1 and 100"},
      {{"--nodes", "101"}, "--nodes: 101 is out of range: must be between 1 and 100"},
      {{"--nodes"}, "--nodes: needs a value (N)"},
      {{"--fraction", "1.5"}, "--fraction: 1.5 is out of range: must be between 0 and 1"},
      {{"--fraction", "half"}, "--fraction: \"half\" is not a number"},
      {{"--timeout", "soon"}, "--timeout: \"soon\" is not a duration"},
      {{"--timeout", "2h"}, "--timeout: 2h is out of range: must be between 1ms and 2m0s"},
      {{"--choice", "c"}, "--choice: \"c\" is not one of: a, b"},
      {{"--keep=yes"}, "--keep: takes no value"},
      {{"--colour", "red"}, "unknown flag --colour for phalanx-loadtest test"},
      {{"--nodes", "3", "--nodes", "4"}, "--nodes: given twice"},
      {{"stray"}, "unexpected argument \"stray\""},
      {{"--name="}, "--name: must not be empty"},
      {{"--nodes="}, "--nodes: \"\" is not an integer"},
      {{"-x"}, "unexpected argument \"-x\": flags start with --, and phalanx-loadtest test takes "
               "no positional arguments"},
      {{"--colour=red"}, "unknown flag --colour for phalanx-loadtest test (see --help)"},
      {{"--keep", "--keep"}, "--keep: given twice"},
      {{"--nodes", "--keep"}, "--nodes: \"--keep\" is not an integer"},
      {{"--nodes", "3", "--", "--keep"},
       "unexpected argument \"--keep\": flags start with --, and phalanx-loadtest test takes no "
       "positional arguments"},
  };
  for (const auto& r : rows) {
    parsed p;
    auto s = parse(r.args, p);
    ASSERT_FALSE(s.ok()) << r.message;
    EXPECT_EQ(s.code(), errc::invalid_argument);
    EXPECT_NE(s.message().find(r.message), std::string::npos)
        << "got: " << s.message() << "\nwant: " << r.message;
  }
}

TEST(LoadtestFlags, RequiredFlagMustBeGiven) {
  parsed p;
  auto s = parse({"--nodes", "3"}, p, true);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "--trace is required");
}

TEST(LoadtestFlags, UsageListsEveryFlagWithItsDefault) {
  int64_t n = 7;
  std::string s = "v";
  flag_set f("phalanx-loadtest x", "Summary.");
  f.add_int("nodes", &n, 1, 10, "how many nodes");
  f.add_string("trace", &s, "the trace", true);
  auto u = f.usage();
  EXPECT_NE(u.find("usage: phalanx-loadtest x [flags]"), std::string::npos) << u;
  EXPECT_NE(u.find("--nodes N"), std::string::npos) << u;
  EXPECT_NE(u.find("how many nodes (default 7)"), std::string::npos) << u;
  EXPECT_NE(u.find("the trace [required]"), std::string::npos) << u;
}

TEST(LoadtestFlags, GivenRecordsTheCommandLine) {
  int64_t n = 7;
  bool b = false;
  flag_set f("t");
  f.add_int("nodes", &n, 1, 10, "n");
  f.add_bool("keep", &b, "k");
  ASSERT_TRUE(f.parse(std::vector<std::string>{"--keep", "--nodes=3"}).ok());
  ASSERT_EQ(f.given().size(), 2u);
  EXPECT_EQ(f.given()[0], (std::pair<std::string, std::string>{"keep", "true"}));
  EXPECT_EQ(f.given()[1], (std::pair<std::string, std::string>{"nodes", "3"}));
  EXPECT_TRUE(f.was_set("nodes"));
}

TEST(LoadtestFlags, NumberParsers) {
  EXPECT_EQ(parse_int("12"), 12);
  EXPECT_EQ(parse_int("+12"), 12);
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_FALSE(parse_int("1.5"));
  EXPECT_FALSE(parse_int(""));
  EXPECT_FALSE(parse_int("12x"));
  EXPECT_FALSE(parse_int("99999999999999999999"));
  EXPECT_EQ(parse_number("0.5"), 0.5);
  EXPECT_EQ(parse_number("1e3"), 1000.0);
  EXPECT_FALSE(parse_number("nan"));
  EXPECT_FALSE(parse_number("inf"));
  EXPECT_FALSE(parse_number("1,5"));
}

} // namespace
} // namespace phalanx::loadtest
