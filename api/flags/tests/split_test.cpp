// The split of a command line into flags and words: every spelling the programs accept, and
// every failure with the flag as typed.

#include "api/flags/split.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace phalanx::api::flags {
namespace {

const std::vector<flag_spec> kubectl_like = {
    {"namespace", 'n', true},
    {"all-namespaces", 'A', false},
    {"watch", 'w', false},
    {"watch-only", 0, false},
    {"output", 'o', true},
    {"token", 0, true},
};

split_arguments split_of(std::vector<std::string> args,
                         const std::vector<flag_spec>& specs = kubectl_like) {
  return split(args, specs);
}

// "name spelling value" per flag, "<none>" for a switch without a value.
std::vector<std::string> flags_of(const split_arguments& s) {
  std::vector<std::string> out;
  for (const auto& f : s.flags)
    out.push_back(f.name + " " + f.spelling + " " + f.value.value_or("<none>"));
  return out;
}

TEST(FlagsSplit, EverySpellingGivesTheFlagAndHowItWasTyped) {
  struct row {
    std::vector<std::string> args;
    std::vector<std::string> flags;
    std::vector<std::string> words;
  };
  const std::vector<row> rows = {
      {{"-n", "team"}, {"namespace -n team"}, {}},
      {{"-nteam"}, {"namespace -n team"}, {}},
      {{"-n=team"}, {"namespace -n team"}, {}},
      {{"-n="}, {"namespace -n "}, {}},
      {{"--namespace", "team"}, {"namespace --namespace team"}, {}},
      {{"--namespace=team"}, {"namespace --namespace team"}, {}},
      {{"--namespace="}, {"namespace --namespace "}, {}},
      {{"--output=jsonpath={.a}={.b}"}, {"output --output jsonpath={.a}={.b}"}, {}},
      {{"-ojsonpath={.kind}"}, {"output -o jsonpath={.kind}"}, {}},
      {{"-Aw"}, {"all-namespaces -A <none>", "watch -w <none>"}, {}},
      {{"-An", "x"}, {"all-namespaces -A <none>", "namespace -n x"}, {}},
      {{"--watch=false"}, {"watch --watch false"}, {}},
      {{"--watch="}, {"watch --watch "}, {}},
      {{"-w=maybe"}, {"watch -w maybe"}, {}},
      // A switch never takes the next argument; watch-only is not guessed from a prefix.
      {{"--watch", "pods"}, {"watch --watch <none>"}, {"pods"}},
      {{"-w", "pods", "--watch-only"}, {"watch -w <none>", "watch-only --watch-only <none>"},
       {"pods"}},
      // A value may look like a flag the table does not know as a shorthand.
      {{"--token", "-1"}, {"token --token -1"}, {}},
      {{"--token", "--watch"}, {"token --token --watch"}, {}},
      {{"-n", "-"}, {"namespace -n -"}, {}},
      {{"get", "-", "pods"}, {}, {"get", "-", "pods"}},
      {{"get", "--", "-n", "--watch"}, {}, {"get", "-n", "--watch"}},
      {{"-o", "json", "-o", "yaml"}, {"output -o json", "output -o yaml"}, {}},
      {{}, {}, {}},
  };
  for (const auto& r : rows) {
    auto s = split_of(r.args);
    std::string shown = r.args.empty() ? "(none)" : r.args.front();
    ASSERT_FALSE(s.error) << shown << ": " << to_string(s.error->failure) << " "
                          << s.error->spelling;
    EXPECT_EQ(flags_of(s), r.flags) << shown;
    EXPECT_EQ(s.words, r.words) << shown;
  }
}

TEST(FlagsSplit, FailuresNameTheFlagAsTyped) {
  struct row {
    std::vector<std::string> args;
    split_failure failure;
    std::string spelling;
    std::string argument;
  };
  const std::vector<row> rows = {
      {{"--bogus"}, split_failure::unknown_flag, "--bogus", "--bogus"},
      {{"--bogus=1"}, split_failure::unknown_flag, "--bogus", "--bogus=1"},
      {{"--bogus="}, split_failure::unknown_flag, "--bogus", "--bogus="},
      {{"--=x"}, split_failure::unknown_flag, "--=x", "--=x"},
      {{"--name"}, split_failure::unknown_flag, "--name", "--name"},
      {{"-x"}, split_failure::unknown_shorthand, "-x", "-x"},
      {{"-Axw"}, split_failure::unknown_shorthand, "-x", "-Axw"},
      {{"-x=1"}, split_failure::unknown_shorthand, "-x", "-x=1"},
      {{"pods", "--bogus", "--other"}, split_failure::unknown_flag, "--bogus", "--bogus"},
      {{"-n"}, split_failure::missing_value, "-n", "-n"},
      {{"-An"}, split_failure::missing_value, "-n", "-n"},
      {{"--namespace"}, split_failure::missing_value, "--namespace", "--namespace"},
      {{"-n", "-w"}, split_failure::missing_value, "-n", "-n"},
  };
  for (const auto& r : rows) {
    auto s = split_of(r.args);
    ASSERT_TRUE(s.error) << r.args.front();
    EXPECT_EQ(s.error->failure, r.failure) << r.args.front() << ": " << to_string(s.error->failure);
    EXPECT_EQ(s.error->spelling, r.spelling) << r.args.front();
    EXPECT_EQ(s.error->argument, r.argument) << r.args.front();
    EXPECT_TRUE(s.flags.empty() && s.words.empty()) << r.args.front();
  }
}

TEST(FlagsSplit, WithoutShorthandsASingleDashIsAWord) {
  const std::vector<flag_spec> long_only = {{"nodes", 0, true}, {"keep", 0, false}};
  auto s = split_of({"-x", "--nodes", "3", "-5", "--keep"}, long_only);
  ASSERT_FALSE(s.error);
  EXPECT_EQ(flags_of(s), (std::vector<std::string>{"nodes --nodes 3", "keep --keep <none>"}));
  EXPECT_EQ(s.words, (std::vector<std::string>{"-x", "-5"}));
  auto missing = split_of({"--nodes"}, long_only);
  ASSERT_TRUE(missing.error);
  EXPECT_EQ(missing.error->failure, split_failure::missing_value);
  EXPECT_EQ(missing.error->spelling, "--nodes");
}

TEST(FlagsSplit, EveryFailureHasAString) {
  for (int i = 0; i <= static_cast<int>(split_failure_last); ++i)
    EXPECT_FALSE(to_string(static_cast<split_failure>(i)).empty()) << i;
}

} // namespace
} // namespace phalanx::api::flags
