// scheduler::rng: seeded sequences repeat, distinct seeds diverge, the output is uniform enough for
// scan starts and jitter, and the state stays small (it sits in every PodGroup actor).

#include "scheduler/random.hpp"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>

namespace phalanx::scheduler {
namespace {

TEST(rng, same_seed_same_sequence_and_reseeding_restarts_it) {
  rng a(42), b(42);
  std::vector<uint64_t> first;
  for (int i = 0; i < 1000; ++i) {
    first.push_back(a());
    ASSERT_EQ(first.back(), b());
  }
  a.seed(42);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(a(), first[std::size_t(i)]);
  rng c(42);
  c.discard(10);
  EXPECT_EQ(c(), first[10]);
}

TEST(rng, nearby_seeds_give_unrelated_sequences) {
  // Seeds the runtime derives from ids (seed ^ id * constant) differ in few bits.
  std::set<uint64_t> firsts;
  for (uint64_t seed = 0; seed < 1000; ++seed)
    firsts.insert(rng(seed)());
  EXPECT_EQ(firsts.size(), 1000u);
  rng zero(0);
  EXPECT_NE(zero(), 0u) << "seed 0 must not give the all-zero state";
  EXPECT_EQ(rng(), rng(5489u));
}

TEST(rng, uniform_over_buckets_and_bits) {
  rng g(7);
  constexpr int draws = 160000;
  std::array<int, 16> buckets{};
  std::array<int, 64> ones{};
  for (int i = 0; i < draws; ++i) {
    uint64_t x = g();
    ++buckets[x >> 60];
    for (int b = 0; b < 64; ++b)
      ones[std::size_t(b)] += int((x >> b) & 1);
  }
  double chi2 = 0;
  for (int n : buckets)
    chi2 += (n - draws / 16.0) * (n - draws / 16.0) / (draws / 16.0);
  EXPECT_LT(chi2, 37.7) << "chi-square, 15 degrees of freedom, p = 0.001";
  for (int b = 0; b < 64; ++b)
    EXPECT_NEAR(ones[std::size_t(b)], draws / 2, 1200) << "bit " << b;
}

TEST(rng, works_with_standard_distributions_and_is_small) {
  static_assert(std::uniform_random_bit_generator<rng>);
  static_assert(sizeof(rng) == 32);
  rng g(1);
  std::uniform_int_distribution<int> die(1, 6);
  std::array<int, 7> seen{};
  for (int i = 0; i < 6000; ++i)
    ++seen[std::size_t(die(g))];
  EXPECT_EQ(seen[0], 0);
  for (int face = 1; face <= 6; ++face)
    EXPECT_NEAR(seen[std::size_t(face)], 1000, 150) << face;
}

} // namespace
} // namespace phalanx::scheduler
