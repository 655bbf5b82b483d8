// Wait-die under every interleaving we can enumerate: two gangs contending for the same three
// nodes. After every single message the step invariants hold (I1, I2, and no commit before the
// bindings are durable); at the end both gangs run and I3 holds.
//
// Enumeration: all schedules that deviate at most twice from FIFO order (a deviation = running
// another actor's message than the coordinator's next one), as systematic testers bound
// preemptions, plus seeded random schedules. Each schedule replays from a fresh actor system.
//
// Here one actor runs at a time, so a gang always plans against every reserve sent before it
// (the cluster view counts reserves in flight) and never meets a conflict at a node. On many
// threads two gangs plan at the same instant and both miss the other's reserve. The wait-die
// runs turn the counting off, which makes every view as stale as the nodes' mailboxes, so
// contention reaches the nodes; one more enumeration checks that with counting nothing does.

#include "actors/tests/actor_world.hpp"

#include <gtest/gtest.h>

#include <random>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_gang;
using scheduler::testing::make_node;
using scheduler::testing::res;

struct outcome {
  std::vector<std::size_t> choices;   // What ran at each step.
  std::vector<std::size_t> branching; // How many actors could run at each step.
  std::string failure;
  int64_t refusals = 0;
  int64_t waits = 0;
};

// Runs one schedule: the prefix's choices first, then FIFO (or random, with `random`).
outcome run_schedule(const std::vector<std::size_t>& prefix, uint64_t seed,
                     std::mt19937_64* random = nullptr, bool count_in_flight = false) {
  outcome out;
  actor_world w{seed};
  w.ctx().config.scheduling.count_reserves_in_flight = count_in_flight;
  for (int i = 0; i < 3; ++i)
    w.add_node(make_node("n" + std::to_string(i)).cpu("2").memory("8Gi"));
  using namespace std::chrono_literals;
  auto base = scheduler::timestamp{std::chrono::seconds{1700000000}};
  // Gang A is older than B; both need three 1-cpu pods (the cluster holds six), and binpack makes
  // them want the same nodes.
  w.add_gang(make_gang("a", 3).task("worker", 3, res("cpu", "1")).created(base), 1);
  w.add_gang(make_gang("b", 3).task("worker", 3, res("cpu", "1")).created(base + 1s), 2);

  std::size_t step = 0;
  for (std::size_t guard = 0; guard < 5000; ++guard) {
    auto& jobs = w.sched().jobs;
    if (jobs.empty()) {
      if (!w.sched().has_pending_timeout())
        break;
      w.sched().trigger_timeout();  // A backoff timer: the only way time moves here.
      continue;
    }
    std::size_t choice = 0;
    if (step < prefix.size())
      choice = std::min(prefix[step], jobs.size() - 1);
    else if (random != nullptr)
      choice = std::uniform_int_distribution<std::size_t>(0, jobs.size() - 1)(*random);
    out.branching.push_back(jobs.size());
    out.choices.push_back(choice);
    w.run_job(choice);
    ++step;
    if (auto f = w.check_step(); !f.empty()) {
      out.failure = f + " after step " + std::to_string(step);
      return out;
    }
  }
  for (std::size_t i = 0; i < w.gangs.size(); ++i) {
    auto phase = w.gang_state(i).machine.phase();
    if (phase != scheduler::gang_phase::running) {
      out.failure = "gang " + std::to_string(w.gang_ids[i]) + " ended " +
                    std::string(scheduler::to_string(phase)) + ", not running";
      return out;
    }
  }
  if (auto f = w.check_at_rest(); !f.empty())
    out.failure = f;
  out.refusals = static_cast<int64_t>(w.ctx().metrics->reserve_refusals.value());
  for (std::size_t i = 0; i < w.nodes.size(); ++i)
    out.waits += static_cast<int64_t>(w.node_state(i).ledger->waiter_count());
  return out;
}

std::string describe(const std::vector<std::size_t>& choices) {
  std::string s;
  for (auto c : choices)
    s += std::to_string(c) + " ";
  return s;
}

struct exploration {
  int64_t schedules = 0;
  int64_t with_refusal = 0;
};

// Every schedule within two deviations from FIFO, for two seeds; stops at the first failure.
exploration explore(bool count_in_flight) {
  constexpr int max_deviations = 2;
  exploration e;
  for (uint64_t seed : {1u, 2u}) {
    // Depth-first over deviation points; a prefix is the choices up to and including its last
    // deviation.
    std::vector<std::pair<std::vector<std::size_t>, int>> stack{{{}, 0}};
    while (!stack.empty()) {
      auto [prefix, deviations] = std::move(stack.back());
      stack.pop_back();
      auto out = run_schedule(prefix, seed, nullptr, count_in_flight);
      ++e.schedules;
      EXPECT_TRUE(out.failure.empty())
          << out.failure << "\nseed " << seed << ", schedule: " << describe(out.choices);
      if (!out.failure.empty())
        return e;
      e.with_refusal += out.refusals > 0 ? 1 : 0;
      if (deviations == max_deviations)
        continue;
      for (std::size_t i = prefix.size(); i < out.choices.size(); ++i)
        for (std::size_t alt = 1; alt < out.branching[i]; ++alt) {
          std::vector<std::size_t> next(out.choices.begin(),
                                        out.choices.begin() + static_cast<std::ptrdiff_t>(i));
          next.push_back(alt);
          stack.emplace_back(std::move(next), deviations + 1);
        }
    }
  }
  return e;
}

TEST(WaitDieInterleavings, EverySchedulePreservesTheInvariantsAndBothGangsRun) {
  auto e = explore(false);
  // The enumeration must really have explored contention, not only lucky schedules.
  EXPECT_GT(e.schedules, 1000);
  EXPECT_GT(e.with_refusal, 0) << "no schedule made a node refuse a reserve";
  RecordProperty("schedules", std::to_string(e.schedules));
  RecordProperty("schedules_with_refusals", std::to_string(e.with_refusal));
  std::printf("explored %lld schedules, %lld with wait-die refusals\n",
              static_cast<long long>(e.schedules), static_cast<long long>(e.with_refusal));
}

// With reserves counted in flight, a gang sees the other's reserve before the node does, so no
// schedule sends a node a reserve it must refuse.
TEST(WaitDieInterleavings, CountingReservesInFlightLeavesNoScheduleARefusal) {
  auto e = explore(true);
  EXPECT_GT(e.schedules, 1000);
  EXPECT_EQ(e.with_refusal, 0) << "a gang planned onto room another gang's reserve was taking";
  std::printf("explored %lld schedules, %lld with refusals\n", static_cast<long long>(e.schedules),
              static_cast<long long>(e.with_refusal));
}

TEST(WaitDieInterleavings, RandomSchedulesPreserveTheInvariants) {
  std::mt19937_64 random{20261122};
  for (int i = 0; i < 1500; ++i) {
    auto out = run_schedule({}, 1 + static_cast<uint64_t>(i % 7), &random, i % 2 == 0);
    ASSERT_TRUE(out.failure.empty()) << out.failure << "\nrun " << i;
  }
}

} // namespace
} // namespace phalanx::actors::testing
