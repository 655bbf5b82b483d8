#include "scheduler/scores.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <set>

namespace phalanx::scheduler {
namespace {

using testing::res;

TEST(score_strategy, every_value_round_trips) {
  std::set<std::string_view> names;
  for (int i = 0; i <= int(score_strategy_last); ++i) {
    auto s = score_strategy(i);
    auto name = to_string(s);
    EXPECT_NE(name, "unknown");
    names.insert(name);
    EXPECT_EQ(score_strategy_from_string(name), s);
  }
  EXPECT_EQ(names.size(), std::size_t(score_strategy_last) + 1);
  EXPECT_FALSE(score_strategy_from_string("Binpack"));
  EXPECT_FALSE(score_strategy_from_string(""));
}

TEST(score_weights, documented_defaults) {
  score_weights w;
  EXPECT_EQ(w.weight_of("cpu"), 1);
  EXPECT_EQ(w.weight_of("memory"), 1);
  EXPECT_EQ(w.weight_of("ephemeral-storage"), 0);
  EXPECT_EQ(w.weight_of("pods"), 0);
  EXPECT_EQ(w.weight_of("nvidia.com/gpu"), 1);
}

TEST(score_weights, set_by_name_and_from_pairs) {
  std::vector<std::pair<std::string, int64_t>> pairs = {
      {"cpu", 2}, {"nvidia.com/gpu", 10}, {"example.com/fpga", 0}, {"memory", 3}};
  auto w = score_weights::from_pairs(pairs);
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  EXPECT_EQ(w->weight_of("cpu"), 2);
  EXPECT_EQ(w->weight_of("memory"), 3);
  EXPECT_EQ(w->weight_of("nvidia.com/gpu"), 10);
  EXPECT_EQ(w->weight_of("example.com/fpga"), 0);
  EXPECT_EQ(w->weight_of("example.com/other"), 1);
  ASSERT_EQ(w->extended.size(), 2u);
  EXPECT_EQ(w->extended[0].first, "example.com/fpga") << "sorted by name";

  score_weights x;
  EXPECT_TRUE(x.set("nvidia.com/gpu", 4).ok());
  EXPECT_TRUE(x.set("nvidia.com/gpu", 5).ok());
  EXPECT_EQ(x.extended.size(), 1u);
  EXPECT_EQ(x.weight_of("nvidia.com/gpu"), 5);
  EXPECT_TRUE(x.set("pods", 1).ok());
  EXPECT_TRUE(x.set("ephemeral-storage", 2).ok());
  EXPECT_EQ(x.pods, 1);
  EXPECT_EQ(x.ephemeral_storage, 2);
}

TEST(score_weights, rejects_bad_pairs) {
  score_weights w;
  EXPECT_EQ(w.set("cpu", -1).code(), errc::invalid_argument);
  EXPECT_EQ(w.set("cpu", score_weights::max_weight + 1).code(), errc::invalid_argument);
  EXPECT_EQ(w.set("", 1).code(), errc::invalid_argument);
  std::vector<std::pair<std::string, int64_t>> pairs = {{"cpu", 1}, {"memory", -5}};
  auto r = score_weights::from_pairs(pairs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("memory"), std::string::npos);
}

TEST(dimension_score, exact_integer_arithmetic) {
  struct dim_case {
    score_strategy s;
    int64_t used_after;
    int64_t allocatable;
    int64_t want;
  };
  constexpr auto bp = score_strategy::binpack;
  constexpr auto sp = score_strategy::spread;
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  const dim_case cases[] = {
      {bp, 0, 4000, 0},         {bp, 1000, 4000, 2500},
      {bp, 4000, 4000, 10000},  {bp, 1, 3, 3333}, // Rounded down.
      {bp, 2, 3, 6666},         {sp, 1000, 4000, 7500},
      {sp, 1, 3, 6666},         {sp, 4000, 4000, 0},
      {bp, 5000, 4000, 0},                     // Does not fit.
      {bp, -1, 4000, 0},        {bp, 0, 0, 0}, // Node lacks the resource.
      {bp, big, big, 10000},                   // The wide path.
      {bp, big / 2, big, 4999}, {sp, big / 4, big, 7500},
  };
  for (const auto& c : cases)
    EXPECT_EQ(dimension_score(c.s, c.used_after, c.allocatable), c.want)
        << to_string(c.s) << " " << c.used_after << "/" << c.allocatable;
}

TEST(node_score, binpack_is_weighted_most_allocated_over_requested_dimensions) {
  resources alloc = res("cpu", "10", "memory", "10Gi", "pods", "110");
  resources free = res("cpu", "6", "memory", "10Gi", "pods", "110");
  resources request = res("cpu", "1", "memory", "1Gi", "pods", "1");
  score_weights w;
  // cpu: (4 + 1) / 10 = 5000; memory: 1 / 10 = 1000; pods weight 0.
  EXPECT_EQ(node_score(score_strategy::binpack, w, request, free, alloc), (5000 + 1000) / 2);
  w.cpu = 3;
  EXPECT_EQ(node_score(score_strategy::binpack, w, request, free, alloc), (3 * 5000 + 1000) / 4);
  // A dimension the pod does not request is not scored by binpack.
  resources cpu_only = res("cpu", "1", "pods", "1");
  EXPECT_EQ(node_score(score_strategy::binpack, score_weights{}, cpu_only, free, alloc), 5000);
}

TEST(node_score, spread_is_weighted_least_allocated_with_cpu_and_memory_always) {
  resources alloc = res("cpu", "10", "memory", "10Gi");
  resources free = res("cpu", "6", "memory", "10Gi", "pods", "110");
  alloc.pods = 110;
  resources cpu_only = res("cpu", "1", "pods", "1");
  // cpu: (10 - 5) / 10 = 5000; memory: 10 / 10 = 10000 although not requested.
  EXPECT_EQ(node_score(score_strategy::spread, score_weights{}, cpu_only, free, alloc),
            (5000 + 10000) / 2);
}

TEST(node_score, extended_resources_and_missing_dimensions) {
  resources alloc = res("cpu", "10", "memory", "10Gi");
  alloc.set("nvidia.com/gpu", 8);
  resources free = alloc;
  free.set("nvidia.com/gpu", 4);
  resources request = res("cpu", "1");
  request.set("nvidia.com/gpu", 2);
  score_weights w;
  w.memory = 0;
  // cpu: 1/10 = 1000; gpu: (4 + 2) / 8 = 7500; both weight 1.
  EXPECT_EQ(node_score(score_strategy::binpack, w, request, free, alloc), (1000 + 7500) / 2);
  EXPECT_TRUE(w.set("nvidia.com/gpu", 3).ok());
  EXPECT_EQ(node_score(score_strategy::binpack, w, request, free, alloc), (1000 + 3 * 7500) / 4);
  // Does not fit: score 0.
  request.set("nvidia.com/gpu", 5);
  EXPECT_EQ(node_score(score_strategy::binpack, w, request, free, alloc), 0);
  // No scored dimension: 0.
  score_weights none;
  none.cpu = 0;
  none.memory = 0;
  EXPECT_EQ(node_score(score_strategy::binpack, none, res("cpu", "1"), free, alloc), 0);
}

} // namespace
} // namespace phalanx::scheduler
