// Tests of resource amounts, limits and the extended-name intern table (scheduler/resources.hpp).

#include "scheduler/resources.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::res;

constexpr int64_t max64 = std::numeric_limits<int64_t>::max();
constexpr int64_t min64 = std::numeric_limits<int64_t>::min();
constexpr int64_t gi = int64_t{1} << 30;

// Checks the representation invariant through the public view.
void expect_invariant(const resources& r) {
  const auto& ext = r.extended();
  for (std::size_t i = 0; i < ext.size(); ++i) {
    EXPECT_NE(ext[i].amount, 0) << ext[i].name.str();
    if (i > 0) {
      EXPECT_LT(ext[i - 1].name, ext[i].name);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// resource_name

TEST(resource_name, interning_is_idempotent_and_round_trips) {
  auto a = resource_name::intern("nvidia.com/gpu");
  auto b = resource_name::intern("nvidia.com/gpu");
  auto c = resource_name::intern("example.com/fpga");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ(a->str(), "nvidia.com/gpu");
  EXPECT_EQ(c->str(), "example.com/fpga");
  EXPECT_EQ(resource_name::find("nvidia.com/gpu"), a);
}

TEST(resource_name, standard_and_empty_names_cannot_be_interned) {
  for (std::string_view name : {"cpu", "memory", "ephemeral-storage", "pods", ""}) {
    EXPECT_FALSE(resource_name::intern(name).has_value()) << name;
    EXPECT_FALSE(resource_name::find(name).has_value()) << name;
  }
  // Near misses are ordinary names.
  EXPECT_TRUE(resource_name::intern("CPU").has_value());
  EXPECT_TRUE(resource_name::intern("cpu ").has_value());
}

TEST(resource_name, find_and_reads_never_intern) {
  // Intern the name the test writes on purpose first, so only the reads are measured (ctest runs
  // each test in its own process, where nothing is interned yet).
  ASSERT_TRUE(resource_name::intern("nvidia.com/gpu").has_value());
  uint32_t before = resource_name::interned_count();
  EXPECT_FALSE(resource_name::find("never.example.com/interned").has_value());
  resources r = res("cpu", "1").with("nvidia.com/gpu", 1);
  EXPECT_EQ(r.get("never.example.com/interned-either"), 0);
  EXPECT_TRUE(r.set("never.example.com/zero", 0)); // Clearing an absent name is a no-op.
  resource_limit lim;
  EXPECT_FALSE(lim.get("never.example.com/cap").has_value());
  EXPECT_EQ(resource_name::interned_count(), before);
}

TEST(resource_name, concurrent_interning_agrees) {
  constexpr int threads = 8;
  constexpr int names = 64;
  std::vector<std::vector<uint32_t>> ids(threads, std::vector<uint32_t>(names));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([t, &ids] {
      for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < names; ++k) {
          // Each thread walks the names in a different order to collide on new ones.
          int n = (k * (2 * t + 1) + round) % names;
          auto h = resource_name::intern("concurrent.example.com/r" + std::to_string(n));
          if (!h)
            std::abort();
          ids[std::size_t(t)][std::size_t(n)] = h->id();
          if (h->str() != "concurrent.example.com/r" + std::to_string(n))
            std::abort();
        }
      }
    });
  }
  for (auto& th : pool)
    th.join();
  std::set<uint32_t> distinct;
  for (int n = 0; n < names; ++n) {
    for (int t = 1; t < threads; ++t)
      EXPECT_EQ(ids[std::size_t(t)][std::size_t(n)], ids[0][std::size_t(n)]);
    distinct.insert(ids[0][std::size_t(n)]);
  }
  EXPECT_EQ(distinct.size(), std::size_t(names));
}

// Filling the table is process-wide, so it runs in a child process (a death test with exit 0)
// and leaves the table of this test binary alone.
TEST(resource_name_death_test, at_most_max_names_distinct_names) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto fill = [] {
    uint32_t start = resource_name::interned_count();
    uint32_t added = 0;
    while (resource_name::intern("fill.example.com/n" + std::to_string(added)))
      ++added;
    bool ok = start + added == resource_name::max_names &&
              resource_name::interned_count() == resource_name::max_names &&
              resource_name::intern("fill.example.com/n0").has_value() && // Existing: fine.
              !resource_name::intern("fill.example.com/one-more").has_value();
    resources r;
    ok = ok && !r.set("fill.example.com/one-more", 1) && r.set("fill.example.com/n0", 1) &&
         r.set("cpu", 1);
    resource_limit lim;
    ok = ok && !lim.set("fill.example.com/one-more", 1) && lim.set("memory", 1);
    std::exit(ok ? 0 : 1);
  };
  EXPECT_EXIT(fill(), ::testing::ExitedWithCode(0), "");
}

// ---------------------------------------------------------------------------------------------
// get / set

TEST(resources, standard_names_route_to_fields) {
  resources r;
  EXPECT_TRUE(r.set("cpu", 500));
  EXPECT_TRUE(r.set("memory", 2 * gi));
  EXPECT_TRUE(r.set("ephemeral-storage", 10));
  EXPECT_TRUE(r.set("pods", 3));
  EXPECT_EQ(r.cpu_milli, 500);
  EXPECT_EQ(r.memory_bytes, 2 * gi);
  EXPECT_EQ(r.ephemeral_bytes, 10);
  EXPECT_EQ(r.pods, 3);
  EXPECT_TRUE(r.extended().empty());
  EXPECT_EQ(r.get("cpu"), 500);
  EXPECT_EQ(r.get("memory"), 2 * gi);
  EXPECT_EQ(r.get("ephemeral-storage"), 10);
  EXPECT_EQ(r.get("pods"), 3);
}

TEST(resources, extended_set_get_erase_keeps_invariant) {
  resources r;
  EXPECT_TRUE(r.set("zzz.example.com/b", 2));
  EXPECT_TRUE(r.set("aaa.example.com/a", 1));
  EXPECT_TRUE(r.set("nvidia.com/gpu", 4));
  expect_invariant(r);
  EXPECT_EQ(r.extended().size(), 3u);
  EXPECT_EQ(r.get("nvidia.com/gpu"), 4);
  EXPECT_EQ(r.get(*resource_name::find("aaa.example.com/a")), 1);
  EXPECT_TRUE(r.set("nvidia.com/gpu", 7)); // Replace.
  EXPECT_EQ(r.get("nvidia.com/gpu"), 7);
  EXPECT_TRUE(r.set("nvidia.com/gpu", 0)); // Zero erases.
  EXPECT_EQ(r.extended().size(), 2u);
  EXPECT_EQ(r.get("nvidia.com/gpu"), 0);
  r.set(*resource_name::find("zzz.example.com/b"), 0);
  r.set(*resource_name::find("aaa.example.com/a"), 0);
  EXPECT_TRUE(r.extended().empty());
  EXPECT_TRUE(r.is_zero());
  EXPECT_EQ(r, resources{}); // Equality does not see the history.
}

TEST(resources, is_zero_and_any_negative) {
  EXPECT_TRUE(resources{}.is_zero());
  EXPECT_FALSE(resources{}.any_negative());
  EXPECT_FALSE(resources{}.with_pods(1).is_zero());
  EXPECT_FALSE(resources{}.with("nvidia.com/gpu", 1).is_zero());
  EXPECT_TRUE(resources{}.with_cpu_milli(-1).any_negative());
  EXPECT_TRUE(resources{}.with_memory_bytes(-1).any_negative());
  EXPECT_TRUE(resources{}.with_ephemeral_bytes(-1).any_negative());
  EXPECT_TRUE(resources{}.with_pods(-1).any_negative());
  EXPECT_TRUE(resources{}.with("nvidia.com/gpu", -1).any_negative());
  EXPECT_FALSE(resources{}.with("nvidia.com/gpu", 1).with_cpu_milli(5).any_negative());
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

TEST(resources, add_and_subtract_merge_extended) {
  resources a = res("cpu", "1", "memory", "1Gi").with("nvidia.com/gpu", 2).with("example.com/x", 1);
  resources b = res("cpu", "500m", "pods", "1").with("nvidia.com/gpu", 1).with("example.com/y", 5);
  resources sum = a + b;
  EXPECT_EQ(sum.cpu_milli, 1500);
  EXPECT_EQ(sum.memory_bytes, gi);
  EXPECT_EQ(sum.pods, 1);
  EXPECT_EQ(sum.get("nvidia.com/gpu"), 3);
  EXPECT_EQ(sum.get("example.com/x"), 1);
  EXPECT_EQ(sum.get("example.com/y"), 5);
  expect_invariant(sum);
  EXPECT_EQ(sum - b, a);
  resources zero = a - a;
  EXPECT_TRUE(zero.is_zero());
  EXPECT_TRUE(zero.extended().empty());
  resources neg = resources{} - b;
  EXPECT_EQ(neg.get("example.com/y"), -5);
  EXPECT_TRUE(neg.any_negative());
  expect_invariant(neg);
}

TEST(resources, arithmetic_saturates_instead_of_wrapping) {
  struct row {
    int64_t a, b, sum, diff;
  };
  const row rows[] = {
      {max64, 1, max64, max64 - 1}, {max64, max64, max64, 0}, {min64, -1, min64, min64 + 1},
      {min64, 1, min64 + 1, min64}, {0, min64, min64, max64}, {-1, max64, max64 - 1, min64},
      {max64, min64, -1, max64},    {5, -7, -2, 12},
  };
  for (const auto& r : rows) {
    resources a = resources{}.with_cpu_milli(r.a).with_pods(r.a).with("nvidia.com/gpu", r.a);
    resources b = resources{}.with_cpu_milli(r.b).with_pods(r.b).with("nvidia.com/gpu", r.b);
    resources s = a + b;
    resources d = a - b;
    EXPECT_EQ(s.cpu_milli, r.sum) << r.a << " + " << r.b;
    EXPECT_EQ(s.pods, r.sum);
    EXPECT_EQ(s.get("nvidia.com/gpu"), r.sum);
    EXPECT_EQ(d.cpu_milli, r.diff) << r.a << " - " << r.b;
    EXPECT_EQ(d.get("nvidia.com/gpu"), r.diff);
    expect_invariant(s);
    expect_invariant(d);
  }
}

TEST(saturating, helpers) {
  struct row {
    int64_t a, b, add, sub, mul;
  };
  const row rows[] = {
      {0, 0, 0, 0, 0},
      {3, 4, 7, -1, 12},
      {-3, 4, 1, -7, -12},
      {max64, 1, max64, max64 - 1, max64},
      {max64, -1, max64 - 1, max64, -max64},
      {min64, -1, min64, min64 + 1, max64},
      {min64, 1, min64 + 1, min64, min64},
      {min64, min64, min64, 0, max64},
      {max64, 2, max64, max64 - 2, max64},
      {min64, 2, min64 + 2, min64, min64},
      {int64_t{1} << 32, int64_t{1} << 31, (int64_t{1} << 32) + (int64_t{1} << 31),
       int64_t{1} << 31, max64}, // 2^63 does not fit.
      {-(int64_t{1} << 32), int64_t{1} << 32, 0, -(int64_t{1} << 33), min64},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(saturating_add(r.a, r.b), r.add) << r.a << " + " << r.b;
    EXPECT_EQ(saturating_sub(r.a, r.b), r.sub) << r.a << " - " << r.b;
    EXPECT_EQ(saturating_mul(r.a, r.b), r.mul) << r.a << " * " << r.b;
  }
}

TEST(resources, times) {
  resources pod = res("cpu", "250m", "memory", "1Gi", "pods", "1").with("nvidia.com/gpu", 1);
  resources four = pod.times(4);
  EXPECT_EQ(four.cpu_milli, 1000);
  EXPECT_EQ(four.memory_bytes, 4 * gi);
  EXPECT_EQ(four.pods, 4);
  EXPECT_EQ(four.get("nvidia.com/gpu"), 4);
  EXPECT_TRUE(pod.times(0).is_zero());
  EXPECT_TRUE(pod.times(0).extended().empty());
  EXPECT_EQ(pod.times(-1).cpu_milli, -250);
  resources huge = pod.times(max64);
  EXPECT_EQ(huge.memory_bytes, max64);
  EXPECT_EQ(huge.get("nvidia.com/gpu"), max64);
  EXPECT_EQ(pod.times(min64).memory_bytes, min64);
  expect_invariant(four);
}

TEST(resources, scaled_rounds_down_exactly_and_saturates) {
  struct row {
    int64_t x, num, den, expected;
  };
  const row rows[] = {
      {10, 6, 5, 12},
      {7, 6, 5, 8}, // 8.4 -> 8
      {-7, 1, 2, -4},
      {7, 1, 2, 3}, // Floor, not truncation.
      {-7, -1, 2, 3},
      {7, 1, -2, -4}, // Signs of num and den.
      {max64, 2, 1, max64},
      {min64, 2, 1, min64}, // Saturation.
      {max64, 3, 3, max64},
      {max64, 6, 5, max64}, // Exact through 128 bits.
      {max64 - 4, 5, 6, int64_t((__int128(max64 - 4) * 5) / 6)},
      {min64, -1, 1, max64},
      {min64, 1, -1, max64},
      {5, 0, 7, 0},
      {0, 5, 0, 0}, // num/0 of zero is zero.
      {5, 1, 0, max64},
      {-5, 1, 0, min64}, // num/0 saturates toward its sign.
  };
  for (const auto& r : rows) {
    resources a = resources{}.with_memory_bytes(r.x).with("nvidia.com/gpu", r.x);
    resources s = a.scaled(r.num, r.den);
    EXPECT_EQ(s.memory_bytes, r.expected) << r.x << " * " << r.num << " / " << r.den;
    EXPECT_EQ(s.get("nvidia.com/gpu"), r.expected);
    expect_invariant(s);
  }
  // Overcommit of a node: 4 cpu * 1.2 = 4.8 cpu; 1 GPU * 1.2 = 1.
  resources node = res("cpu", "4", "memory", "16Gi").with("nvidia.com/gpu", 1);
  resources over = node.scaled(6, 5);
  EXPECT_EQ(over.cpu_milli, 4800);
  EXPECT_EQ(over.memory_bytes, 16 * gi * 6 / 5);
  EXPECT_EQ(over.get("nvidia.com/gpu"), 1);
  EXPECT_TRUE(node.scaled(1, 3).with("nvidia.com/gpu", 0).extended().empty());
}

TEST(resources, clamp_min_max) {
  resources a = resources{}
                    .with_cpu_milli(-5)
                    .with_memory_bytes(10)
                    .with("example.com/x", -1)
                    .with("example.com/y", 3);
  resources clamped = a.clamped_at_zero();
  EXPECT_EQ(clamped.cpu_milli, 0);
  EXPECT_EQ(clamped.memory_bytes, 10);
  EXPECT_EQ(clamped.get("example.com/x"), 0);
  EXPECT_EQ(clamped.get("example.com/y"), 3);
  expect_invariant(clamped);

  resources b = resources{}.with_cpu_milli(7).with_pods(2).with("example.com/x", 4);
  resources lo = resources::min(a, b);
  resources hi = resources::max(a, b);
  EXPECT_EQ(lo.cpu_milli, -5);
  EXPECT_EQ(hi.cpu_milli, 7);
  EXPECT_EQ(lo.memory_bytes, 0);
  EXPECT_EQ(hi.memory_bytes, 10);
  EXPECT_EQ(lo.pods, 0);
  EXPECT_EQ(hi.pods, 2);
  EXPECT_EQ(lo.get("example.com/x"), -1);
  EXPECT_EQ(hi.get("example.com/x"), 4);
  EXPECT_EQ(lo.get("example.com/y"), 0); // min(3, missing = 0).
  EXPECT_EQ(hi.get("example.com/y"), 3);
  expect_invariant(lo);
  expect_invariant(hi);
}

// ---------------------------------------------------------------------------------------------
// to_string

TEST(resources, to_string_orders_standard_then_extended_by_name) {
  EXPECT_EQ(resources{}.to_string(), "none");
  // Interned in reverse name order, so handle order differs from name order.
  resources r;
  r.set("zz-display.example.com/last", 2);
  r.set("aa-display.example.com/first", 1);
  r.set("pods", 3);
  r.set("ephemeral-storage", 10 * gi);
  r.set("memory", 2 * gi);
  r.set("cpu", 500);
  r.set("nvidia.com/gpu", 1);
  EXPECT_EQ(r.to_string(),
            "cpu: 500m, memory: 2Gi, ephemeral-storage: 10Gi, pods: 3, "
            "aa-display.example.com/first: 1, nvidia.com/gpu: 1, zz-display.example.com/last: 2");
  EXPECT_EQ(res("cpu", "2").to_string(), "cpu: 2");
  EXPECT_EQ(resources{}.with_cpu_milli(-1500).to_string(), "cpu: -1500m");
  EXPECT_EQ(resources{}.with_memory_bytes(1000000).to_string(), "memory: 1M");
}

// ---------------------------------------------------------------------------------------------
// fits and shortfalls

TEST(fits, table) {
  struct row {
    const char* what;
    resources request;
    resources available;
    bool fits;
  };
  const row rows[] = {
      {"zero fits zero", {}, {}, true},
      {"zero fits anything", {}, res("cpu", "1"), true},
      {"equal", res("cpu", "1", "memory", "1Gi"), res("cpu", "1", "memory", "1Gi"), true},
      {"one milli short", res("cpu", "1"), res("cpu", "999m"), false},
      {"one byte short", res("memory", "1Gi"), resources{}.with_memory_bytes(gi - 1), false},
      {"pods", res("pods", "1"), res("pods", "0"), false},
      {"ephemeral", res("ephemeral-storage", "1"), res("cpu", "1"), false},
      {"missing extended", res("cpu", "1").with("nvidia.com/gpu", 1), res("cpu", "1"), false},
      {"enough extended", resources{}.with("nvidia.com/gpu", 2),
       resources{}.with("nvidia.com/gpu", 2).with("example.com/x", 1), true},
      {"extended short", resources{}.with("nvidia.com/gpu", 3),
       resources{}.with("nvidia.com/gpu", 2), false},
      {"unused extended negative on node", res("cpu", "1"),
       res("cpu", "2").with("nvidia.com/gpu", -1), true},
      {"unused standard negative on node", res("cpu", "1"), res("cpu", "2").with_memory_bytes(-5),
       true},
      {"used dimension negative on node", res("memory", "1"), resources{}.with_memory_bytes(-5),
       false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(fits(r.request, r.available), r.fits) << r.what;
    EXPECT_EQ(shortfalls(r.request, r.available).empty(), r.fits) << r.what;
  }
}

TEST(shortfalls, standard_first_then_extended_by_name) {
  resources request = res("cpu", "4", "memory", "8Gi", "pods", "1")
                          .with("zz-short.example.com/b", 2)
                          .with("aa-short.example.com/a", 3)
                          .with("nvidia.com/gpu", 1);
  resources available = res("cpu", "1500m", "memory", "16Gi", "pods", "0")
                            .with("zz-short.example.com/b", 1)
                            .with("nvidia.com/gpu", 1);
  auto got = shortfalls(request, available);
  std::vector<shortfall> want = {
      {"cpu", 4000, 1500},
      {"pods", 1, 0},
      {"aa-short.example.com/a", 3, 0},
      {"zz-short.example.com/b", 2, 1},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(got[0].missing(), 2500);
  shortfall extreme{"memory", max64, min64};
  EXPECT_EQ(extreme.missing(), max64); // Saturates instead of overflowing.
}

// ---------------------------------------------------------------------------------------------
// Dominant share and ratios

TEST(ratio, exact_comparison) {
  EXPECT_LT((ratio{1, 3}), (ratio{1, 2}));
  EXPECT_EQ((ratio{2, 4}), (ratio{1, 2}));
  EXPECT_EQ((ratio{0, 1}), (ratio{0, 7}));
  EXPECT_GT((ratio{3, 2}), (ratio{1, 1}));
  EXPECT_LT((ratio{-1, 2}), (ratio{0, 1}));
  EXPECT_EQ((ratio{1, -2}), (ratio{-1, 2})); // Negative den is normalized.
  // Doubles cannot tell these apart; 128-bit cross products can: a/(a-1) < (a-1)/(a-2).
  ratio x{max64, max64 - 1};
  ratio y{max64 - 1, max64 - 2};
  EXPECT_EQ(x.to_double(), y.to_double());
  EXPECT_LT(x, y);
  EXPECT_NE(x, y);
  EXPECT_EQ((ratio{max64, max64}), (ratio{1, 1}));
  EXPECT_EQ((ratio{3, 4}.to_double()), 0.75);
  EXPECT_EQ((ratio{3, 0}.to_double()), 0.0);
}

TEST(dominant_share, table) {
  resources total = res("cpu", "10", "memory", "100Gi", "pods", "100").with("nvidia.com/gpu", 8);
  struct row {
    const char* what;
    resources amount;
    ratio expected;
  };
  const row rows[] = {
      {"zero", {}, {0, 1}},
      {"cpu dominates", res("cpu", "5", "memory", "10Gi"), {5000, 10000}},
      {"memory dominates", res("cpu", "1", "memory", "50Gi"), {50 * gi, 100 * gi}},
      {"gpu dominates", res("cpu", "1").with("nvidia.com/gpu", 4), {4, 8}},
      {"over the total", res("cpu", "20"), {20000, 10000}},
      {"dimension absent from total counts as full", resources{}.with("example.com/x", 1), {1, 1}},
      {"negative amounts are ignored", resources{}.with_cpu_milli(-5), {0, 1}},
  };
  for (const auto& r : rows)
    EXPECT_EQ(dominant_share(r.amount, total), r.expected) << r.what;
  EXPECT_EQ(dominant_share(res("cpu", "1"), resources{}), (ratio{1, 1}));
}

// ---------------------------------------------------------------------------------------------
// resource_limit

TEST(resource_limit, caps_and_clamps) {
  resource_limit lim;
  EXPECT_TRUE(lim.is_unlimited());
  EXPECT_EQ(lim.to_string(), "unlimited");
  EXPECT_EQ(lim, resource_limit::unlimited());
  EXPECT_TRUE(lim.allows(res("cpu", "1000000")));

  EXPECT_TRUE(lim.set("memory", 64 * gi));
  EXPECT_TRUE(lim.set("nvidia.com/gpu", 4));
  EXPECT_TRUE(lim.set("cpu", 10000));
  EXPECT_TRUE(lim.set("aa-limit.example.com/a", 1));
  EXPECT_FALSE(lim.set("", 1));
  EXPECT_FALSE(lim.is_unlimited());
  EXPECT_EQ(lim.get("cpu"), 10000);
  EXPECT_EQ(lim.get("memory"), 64 * gi);
  EXPECT_EQ(lim.get("nvidia.com/gpu"), 4);
  EXPECT_EQ(lim.get("pods"), std::nullopt);
  EXPECT_EQ(lim.to_string(), "cpu: 10, memory: 64Gi, aa-limit.example.com/a: 1, nvidia.com/gpu: 4");

  EXPECT_TRUE(lim.allows(res("cpu", "10", "memory", "64Gi", "pods", "1000")));
  EXPECT_FALSE(lim.allows(res("cpu", "10001m")));
  EXPECT_FALSE(lim.allows(resources{}.with("nvidia.com/gpu", 5)));
  EXPECT_TRUE(lim.allows(resources{}.with("example.com/uncapped", 500)));

  resources amount = res("cpu", "12", "memory", "1Gi", "pods", "7")
                         .with("nvidia.com/gpu", 6)
                         .with("example.com/uncapped", 500);
  resources clamped = lim.clamp(amount);
  EXPECT_EQ(clamped.cpu_milli, 10000);
  EXPECT_EQ(clamped.memory_bytes, gi);
  EXPECT_EQ(clamped.pods, 7);
  EXPECT_EQ(clamped.get("nvidia.com/gpu"), 4);
  EXPECT_EQ(clamped.get("example.com/uncapped"), 500);
  expect_invariant(clamped);

  EXPECT_TRUE(lim.set("cpu", 2000)); // Replaces.
  EXPECT_EQ(lim.get("cpu"), 2000);
  std::vector<std::string> names;
  lim.for_each([&](std::string_view name, int64_t) { names.emplace_back(name); });
  EXPECT_EQ(names, (std::vector<std::string>{"aa-limit.example.com/a", "cpu", "memory",
                                             "nvidia.com/gpu"}));
  resource_limit same;
  same.set("nvidia.com/gpu", 4);
  same.set("aa-limit.example.com/a", 1);
  same.set("memory", 64 * gi);
  same.set("cpu", 2000);
  EXPECT_EQ(lim, same);
  resource_limit zero_cap;
  zero_cap.set("nvidia.com/gpu", 0);
  EXPECT_FALSE(zero_cap.allows(resources{}.with("nvidia.com/gpu", 1)));
  EXPECT_TRUE(zero_cap.clamp(resources{}.with("nvidia.com/gpu", 3)).extended().empty());
}

} // namespace
} // namespace phalanx::scheduler
