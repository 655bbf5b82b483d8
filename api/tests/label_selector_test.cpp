#include "api/label_selector.hpp"

#include <gtest/gtest.h>

namespace phalanx::api {
namespace {

scheduler::label_set labels(std::initializer_list<scheduler::label_set::entry> e) {
  return scheduler::label_set(e);
}

TEST(LabelSelector, ParsesEveryOperator) {
  auto s = parse_label_selector(" app = web , tier==db,env!=prod, zone in (a, b),gpu notin (k80),"
                                "canary, !legacy ");
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto& r = s->requirements;
  ASSERT_EQ(r.size(), 7u);
  EXPECT_EQ(r[0].key, "app");
  EXPECT_EQ(r[0].operation, label_requirement::op::equals);
  EXPECT_EQ(r[0].values, std::vector<std::string>{"web"});
  EXPECT_EQ(r[1].operation, label_requirement::op::equals);
  EXPECT_EQ(r[2].operation, label_requirement::op::not_equals);
  EXPECT_EQ(r[3].operation, label_requirement::op::in);
  EXPECT_EQ(r[3].values, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r[4].operation, label_requirement::op::not_in);
  EXPECT_EQ(r[5].operation, label_requirement::op::exists);
  EXPECT_EQ(r[6].operation, label_requirement::op::does_not_exist);
  EXPECT_EQ(r[6].key, "legacy");
  // Printing and parsing again gives the same selector.
  auto again = parse_label_selector(to_string(*s));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(to_string(*again), to_string(*s));
  EXPECT_EQ(to_string(*s), "app=web,tier=db,env!=prod,zone in (a,b),gpu notin (k80),canary,!legacy");
}

TEST(LabelSelector, EmptySelectsEverything) {
  auto s = parse_label_selector("   ");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->requirements.empty());
  EXPECT_TRUE(s->matches({}));
}

TEST(LabelSelector, EmptyValueAndPrefixedKeys) {
  auto s = parse_label_selector("volcano.sh/job-name=tf,node-role.kubernetes.io/worker=");
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(s->matches(labels({{"volcano.sh/job-name", "tf"}, {"node-role.kubernetes.io/worker", ""}})));
  EXPECT_FALSE(s->matches(labels({{"volcano.sh/job-name", "tf"}})));
}

TEST(LabelSelector, MatchesLikeKubernetes) {
  struct row {
    const char* selector;
    scheduler::label_set labels;
    bool match;
  };
  std::vector<row> rows = {
    {"a=b", labels({{"a", "b"}}), true},
    {"a=b", labels({{"a", "c"}}), false},
    {"a=b", labels({}), false},
    {"a!=b", labels({}), true},  // Absent labels satisfy != and notin.
    {"a!=b", labels({{"a", "b"}}), false},
    {"a in (x,y)", labels({{"a", "y"}}), true},
    {"a in (x,y)", labels({}), false},
    {"a notin (x)", labels({}), true},
    {"a notin (x)", labels({{"a", "x"}}), false},
    {"a", labels({{"a", ""}}), true},
    {"!a", labels({{"a", ""}}), false},
    {"a,b=c", labels({{"a", "1"}, {"b", "c"}}), true},
    {"a,b=c", labels({{"b", "c"}}), false},
  };
  for (const auto& r : rows) {
    auto s = parse_label_selector(r.selector);
    ASSERT_TRUE(s.ok()) << r.selector;
    EXPECT_EQ(s->matches(r.labels), r.match) << r.selector;
  }
}

struct bad_selector {
  const char* text;
  const char* message;
};

void PrintTo(const bad_selector& b, std::ostream* os) {
  *os << b.text;
}

class BadLabelSelector : public ::testing::TestWithParam<bad_selector> {};

TEST_P(BadLabelSelector, SaysWhatWasExpected) {
  auto s = parse_label_selector(GetParam().text);
  ASSERT_FALSE(s.ok()) << GetParam().text;
  EXPECT_EQ(s.error().code(), errc::invalid_argument);
  EXPECT_NE(s.error().message().find(GetParam().message), std::string::npos)
    << s.error().message();
  EXPECT_EQ(s.error().message().rfind("unable to parse label selector", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(
  Parse, BadLabelSelector,
  ::testing::Values(
    bad_selector{"a in (x", R"x(expected "," or ")" after value "x", found the end at position 7)x"},
    bad_selector{"a in x", R"(expected "(" after "in", found "x")"},
    bad_selector{"a in ()", R"(the values of "in" must not be empty)"},
    bad_selector{"a=b=c", R"(expected "," or the end after the requirement on "a", found "=")"},
    bad_selector{"a > 3", R"(the operator ">" is not supported)"},
    bad_selector{"=b", R"(expected a label key or "!", found "=")"},
    bad_selector{"!", R"(expected a label key after "!", found the end)"},
    bad_selector{"a,,b", R"(expected a label key or "!", found ",")"},
    bad_selector{"-bad=x", R"(key "-bad")"},
    bad_selector{"a=-x-", R"(value "-x-" of key "a")"},
    bad_selector{"a b", R"(expected an operator (=, ==, !=, in, notin), "," or the end after key "a", found "b")"}));

TEST(LabelSelector, OperatorsHaveStrings) {
  for (int i = 0; i <= static_cast<int>(label_op_last); ++i) {
    auto op = static_cast<label_requirement::op>(i);
    if (op == label_requirement::op::exists)
      EXPECT_EQ(to_string(op), "");
    else
      EXPECT_FALSE(to_string(op).empty());
  }
}

} // namespace
} // namespace phalanx::api
