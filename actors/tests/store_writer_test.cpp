// The store writer on the whole runtime, in virtual time:
// - its group-commit window: a write that finds the writer quiet goes at once, one that follows
//   a busy group waits for the window to gather the next;
// - its idle flush (docs/NOTES.md, "The write buffers are flushed when writes pause"): once no
//   write has come for store.flushWhenIdleAfter, the writer has RocksDB flush its memtables, so
//   what a burst wrote does not stay in memory until later writes fill them. One flush per quiet
//   period, none while writes go on, none for buffers below store.flushWhenIdleAbove, none when
//   switched off.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_node;

runtime_config idle_flush_config(std::chrono::milliseconds after, std::size_t above) {
  auto c = deterministic_config(7);
  c.store.flush_when_idle_after = after;
  c.store.flush_when_idle_above = above;
  return c;
}

uint64_t idle_flushes(runtime_harness& h) {
  return h.store().stats().write_buffer_flushes;
}

// The flush itself runs on RocksDB's threads, in real time, while virtual time stands still:
// let it end before virtual time moves on, or the next check finds it still writing (and waits).
void let_the_flush_end(runtime_harness& h) {
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (h.store().stats().flushing && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(2ms);
  ASSERT_FALSE(h.store().stats().flushing) << "the flush did not end within 30 s";
}

// Creates every group with all calls in flight, runs every message without letting virtual
// time pass, and says how many were answered (their writes acknowledged).
int answered_without_time(runtime_harness& h, const std::vector<std::string>& names) {
  auto answered = std::make_shared<int>(0);
  for (const auto& name : names)
    h.svc().create(group_of(name, 1), [answered](result<api::object> r) {
      if (r.ok())
        ++*answered;
    });
  h.rt().run_until_idle();
  return *answered;
}

TEST(GroupCommit, AWriteToAQuietWriterGoesAtOnceAndOneAfterABusyGroupWaitsForTheWindow) {
  runtime_harness h(deterministic_config(9), {make_node("n0").cpu("8").obj()});
  h.pass(10ms);
  EXPECT_EQ(answered_without_time(h, {"lone"}), 1) << "quiet: no window to wait for";
  // At once again, though no time passed: the last group was one write, not a load.
  EXPECT_EQ(answered_without_time(h, {"second"}), 1);

  // Eight at once: the first goes alone, the seven that queued meanwhile make one group.
  std::vector<std::string> burst;
  for (int i = 0; i < 8; ++i)
    burst.push_back("burst-" + std::to_string(i));
  EXPECT_EQ(answered_without_time(h, burst), 8);
  auto writes = h.store().stats().writes;

  // Right after a group that large, the next write waits for the window to gather company.
  EXPECT_EQ(answered_without_time(h, {"after-burst"}), 0);
  h.rt().advance(1ms);
  EXPECT_EQ(h.store().stats().writes, writes + 1);
  EXPECT_EQ(h.group("after-burst").group.min_member, 1);
}

TEST(IdleFlush, OnceWritesPauseAndNotWhileTheyGoOn) {
  runtime_harness h(idle_flush_config(2s, 0), {make_node("n0").cpu("8").obj()});
  // The node was written at about 0 s. Another write at 1.5 s: the check due at 2 s finds it
  // 0.5 s old and waits until 3.5 s.
  h.pass(1500ms);
  ASSERT_TRUE(h.create(group_of("first", 1)).ok());
  h.pass(1000ms);
  EXPECT_EQ(idle_flushes(h), 0u) << "a write came 1 s ago";
  h.pass(1100ms);
  EXPECT_EQ(idle_flushes(h), 1u) << "2 s without a write";
  let_the_flush_end(h);

  // Nothing written since: no more flushes however long the quiet lasts.
  h.pass(10s);
  EXPECT_EQ(idle_flushes(h), 1u);

  // Writes every second keep it from flushing; the pause after them ends in one flush.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(h.create(group_of("steady-" + std::to_string(i), 1)).ok());
    h.pass(1s);
  }
  EXPECT_EQ(idle_flushes(h), 1u);
  h.pass(1100ms);
  EXPECT_EQ(idle_flushes(h), 2u);
  let_the_flush_end(h);

  // Everything written before and after the flushes is there.
  EXPECT_EQ(h.group("first").group.min_member, 1);
  EXPECT_EQ(h.group("steady-4").group.min_member, 1);
}

TEST(IdleFlush, SmallBuffersAndAZeroIdleTimeAreLeftAlone) {
  {
    runtime_harness h(idle_flush_config(2s, std::size_t{1} << 30),
                      {make_node("n0").cpu("8").obj()});
    ASSERT_TRUE(h.create(group_of("g", 1)).ok());
    h.pass(5s);
    EXPECT_EQ(idle_flushes(h), 0u) << "far less than 1 GiB in the memtables";
    EXPECT_GT(h.store().stats().write_buffer_bytes, 0u);
  }
  {
    runtime_harness h(idle_flush_config(0ms, 0), {make_node("n0").cpu("8").obj()});
    ASSERT_TRUE(h.create(group_of("g", 1)).ok());
    h.pass(60s);
    EXPECT_EQ(idle_flushes(h), 0u) << "switched off";
  }
}

} // namespace
} // namespace phalanx::actors::testing
