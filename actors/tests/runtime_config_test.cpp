// phalanxd's YAML config (`--config FILE`): the knobs it reads, and the errors that name the key
// path and the rule, so a typo never silently leaves a default in place.

#include "actors/runtime_config.hpp"

#include <gtest/gtest.h>

namespace phalanx::actors {
namespace {

using namespace std::chrono_literals;

TEST(RuntimeConfig, AnEmptyFileKeepsEveryDefault) {
  auto c = parse_runtime_config("");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->scheduling.park_idle_gangs_after, 2'000ms);
  EXPECT_EQ(c->scheduling.backoff_initial, 5ms);
  EXPECT_EQ(c->scheduling.max_replans, 2);
  EXPECT_EQ(c->scheduling.max_planning_per_queue, 2);
  EXPECT_TRUE(c->scheduling.gang_scheduling);
  EXPECT_EQ(c->store.commit_window, 1000us);
  EXPECT_EQ(c->store.flush_when_idle_after, 2000ms);
  EXPECT_EQ(c->store.flush_when_idle_above, std::size_t{1} << 20);
}

TEST(RuntimeConfig, StoreKnobsAreRead) {
  auto c = parse_runtime_config(R"(
store:
  commitWindow: 250us
  maxBatchRecords: 512
  flushWhenIdleAfter: 30s
  flushWhenIdleAbove: 4194304
)");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->store.commit_window, 250us);
  EXPECT_EQ(c->store.max_batch_records, 512u);
  EXPECT_EQ(c->store.flush_when_idle_after, 30'000ms);
  EXPECT_EQ(c->store.flush_when_idle_above, std::size_t{4} << 20);

  auto off = parse_runtime_config("store:\n  flushWhenIdleAfter: 0s\n");
  ASSERT_TRUE(off.ok()) << off.error().to_string();
  EXPECT_EQ(off->store.flush_when_idle_after, 0ms) << "zero never flushes for idleness";
}

TEST(RuntimeConfig, SchedulingKnobsAreRead) {
  auto c = parse_runtime_config(R"(
scheduling:
  parkIdleGangsAfter: 15s
  backoffInitial: 10ms
  backoffMax: 2s
  maxReplans: 4
  fairShareDebounce: 50ms
  countReservesInFlight: false
  starvationBound: 10m
)");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->scheduling.park_idle_gangs_after, 15'000ms);
  EXPECT_EQ(c->scheduling.backoff_initial, 10ms);
  EXPECT_EQ(c->scheduling.backoff_max, 2000ms);
  EXPECT_EQ(c->scheduling.max_replans, 4);
  EXPECT_EQ(c->scheduling.fair_share_debounce, 50ms);
  EXPECT_FALSE(c->scheduling.count_reserves_in_flight);
  EXPECT_EQ(c->scheduling.starvation_bound, 600'000ms);
  EXPECT_EQ(runtime_config{}.scheduling.starvation_bound, 6 * 3600'000ms) << "the default, 6 h";

  auto off = parse_runtime_config("scheduling:\n  parkIdleGangsAfter: 0s\n");
  ASSERT_TRUE(off.ok()) << off.error().to_string();
  EXPECT_EQ(off->scheduling.park_idle_gangs_after, 0ms) << "zero keeps every gang's actor";
}

TEST(RuntimeConfig, BadValuesNameTheKeyAndTheRule) {
  auto expect_error = [](const std::string& yaml, const std::string& needle) {
    auto c = parse_runtime_config(yaml);
    ASSERT_FALSE(c.ok()) << yaml;
    EXPECT_NE(c.error().message().find(needle), std::string::npos)
        << "\"" << c.error().message() << "\" should contain \"" << needle << "\"";
  };
  expect_error("scheduling:\n  parkIdleGangsAfter: soon\n", "scheduling.parkIdleGangsAfter");
  expect_error("scheduling:\n  parkIdleGangsAfter: [1]\n",
               "scheduling.parkIdleGangsAfter: must be a duration");
  expect_error("scheduling:\n  parkIdleGangAfter: 1s\n",
               "scheduling.parkIdleGangAfter: unknown key");
  expect_error("scheduling:\n  starvationBound: -1s\n", "scheduling.starvationBound");
  expect_error("scheduling:\n  countReservesInFlight: sometimes\n",
               "scheduling.countReservesInFlight: must be true or false");
  expect_error("scheduling:\n  gangScheduling: 3\n",
               "scheduling.gangScheduling: must be true or false");
  expect_error("scheduling:\n  maxReplans: 1000\n",
               "scheduling.maxReplans: must be between 0 and 100");
  expect_error("store:\n  flushWhenIdleAfter: later\n", "store.flushWhenIdleAfter");
  expect_error("store:\n  flushWhenIdleAbove: -1\n",
               "store.flushWhenIdleAbove: must be between 0 and");
  expect_error("store:\n  flushWhenIdleAbove: 1MiB\n",
               "store.flushWhenIdleAbove: must be an integer");
  expect_error("scheduling:\n  backoffInitial: 2s\n  backoffMax: 1s\n",
               "scheduling.backoffMax: must not be shorter than scheduling.backoffInitial");
}

} // namespace
} // namespace phalanx::actors
