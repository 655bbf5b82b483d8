#include "scheduler/shared_string.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace phalanx::scheduler {
namespace {

TEST(SharedString, EmptyHoldsNoBlockAndReadsAsAnEmptyCString) {
  shared_string none;
  shared_string from_empty = std::string_view();
  for (const auto* s : {&none, &from_empty}) {
    EXPECT_TRUE(s->empty());
    EXPECT_EQ(s->size(), 0u);
    EXPECT_EQ(s->use_count(), 0u);
    EXPECT_STREQ(s->data(), "");
    EXPECT_EQ(*s, "");
  }
  EXPECT_TRUE(none.shares_with(from_empty));
}

TEST(SharedString, CopiesShareOneBlockAndTheLastOneFreesIt) {
  shared_string a = "a-podgroup-name-longer-than-sso";
  EXPECT_EQ(a.use_count(), 1u);
  {
    shared_string b = a;
    shared_string c;
    c = b;
    EXPECT_TRUE(b.shares_with(a));
    EXPECT_TRUE(c.shares_with(a));
    EXPECT_EQ(a.use_count(), 3u);
    shared_string moved = std::move(c);
    EXPECT_TRUE(c.empty()); // NOLINT(bugprone-use-after-move): a moved-from one is empty.
    EXPECT_EQ(a.use_count(), 3u);
  }
  EXPECT_EQ(a.use_count(), 1u);
  a = a; // Self-assignment keeps the block.
  EXPECT_EQ(a, "a-podgroup-name-longer-than-sso");
  a.clear();
  EXPECT_TRUE(a.empty());
}

TEST(SharedString, ComparesByTextWithEveryStringType) {
  shared_string a = "worker";
  shared_string b = std::string("worker"); // Equal text, another block.
  EXPECT_FALSE(a.shares_with(b));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, "worker");
  EXPECT_EQ(a, std::string("worker"));
  EXPECT_EQ(a, std::string_view("worker"));
  EXPECT_EQ("worker", a);
  EXPECT_NE(a, "ps");
  EXPECT_LT(shared_string("ps"), a);
  EXPECT_EQ(std::string(a), "worker");
  EXPECT_EQ(std::strlen(a.data()), 6u);
  EXPECT_EQ("job-" + a, "job-worker");
  EXPECT_EQ(a + "-0", "worker-0");
  EXPECT_EQ(std::hash<shared_string>{}(a), std::hash<std::string_view>{}("worker"));
}

TEST(SharedString, CopiesOnManyThreadsKeepTheCountExact) {
  const shared_string shared = "driver";
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<shared_string> copies;
      for (int i = 0; i < 10'000; ++i)
        copies.push_back(shared);
      for (int i = 0; i < 10'000; ++i)
        copies.pop_back();
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(shared.use_count(), 1u);
}

TEST(SharedStringPool, EqualTextsShareOneBlock) {
  shared_string_pool pool;
  auto a = pool.share("spark-pi");
  auto b = pool.share(std::string("spark-pi"));
  shared_string separate = "spark-pi";
  pool.share_into(separate);
  EXPECT_TRUE(a.shares_with(b));
  EXPECT_TRUE(separate.shares_with(a));
  EXPECT_TRUE(pool.share("").empty());
  EXPECT_EQ(pool.size(), 1u);
}

TEST(SharedStringPool, ASweepDropsTheTextsNobodyHoldsAndKeepsTheRest) {
  shared_string_pool pool;
  std::vector<shared_string> held;
  for (int i = 0; i < 100; ++i)
    held.push_back(pool.share("held-" + std::to_string(i)));
  // Ten thousand texts nobody keeps: the pool must not keep them all.
  for (int i = 0; i < 10'000; ++i)
    pool.share("gone-" + std::to_string(i));
  EXPECT_LE(pool.size(), 2 * 256u + 1);
  for (int i = 0; i < 100; ++i) {
    auto again = pool.share("held-" + std::to_string(i));
    EXPECT_TRUE(again.shares_with(held[static_cast<std::size_t>(i)])) << i;
  }
}

} // namespace
} // namespace phalanx::scheduler
