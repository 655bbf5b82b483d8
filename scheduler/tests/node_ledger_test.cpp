// The node ledger's wait-die rule and idempotence, as tables of reserves and expected votes.

#include "scheduler/node_ledger.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace phalanx::scheduler {
namespace {

using testing::res;
// Tickets are plain integers here: lower is older.
using ledger = node_ledger<int>;

std::vector<ledger::item> items(std::initializer_list<std::pair<uint64_t, resources>> list) {
  std::vector<ledger::item> out;
  for (const auto& [id, r] : list)
    out.push_back({id, r, {}});
  return out;
}

txn_id t(uint64_t gang, uint32_t round = 1) { return {gang, round}; }

TEST(NodeLedger, VoteKindsHaveNames) {
  for (int i = 0; i <= static_cast<int>(vote_kind_last); ++i)
    EXPECT_NE(to_string(static_cast<vote_kind>(i)), "unknown");
}

TEST(NodeLedger, ReserveHoldsWhatFits) {
  ledger l{res("cpu", "4")};
  auto v = l.reserve(t(1), 10, 1, items({{1, res("cpu", "3")}}));
  EXPECT_EQ(v.vote, vote_kind::reserved);
  EXPECT_EQ(l.held(), res("cpu", "3"));
  EXPECT_EQ(l.free(), res("cpu", "1"));
}

struct wait_die_case {
  const char* name;
  int holder_ticket;   // The existing hold (3 cpu of 4).
  int request_ticket;  // A new request for 2 cpu.
  vote_kind expected;
};

class WaitDie : public ::testing::TestWithParam<wait_die_case> {};

TEST_P(WaitDie, OlderWaitsYoungerDies) {
  const auto& c = GetParam();
  ledger l{res("cpu", "4")};
  ASSERT_EQ(l.reserve(t(1), c.holder_ticket, 1, items({{1, res("cpu", "3")}})).vote,
            vote_kind::reserved);
  auto v = l.reserve(t(2), c.request_ticket, 2, items({{2, res("cpu", "2")}}));
  EXPECT_EQ(v.vote, c.expected) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, WaitDie,
    ::testing::Values(wait_die_case{"older request waits for a younger hold", 20, 10,
                                    vote_kind::waiting},
                      wait_die_case{"younger request dies on an older hold", 10, 20,
                                    vote_kind::refused_conflict}),
    [](const auto& info) { return std::string(info.param.expected == vote_kind::waiting ? "waits" : "dies"); });

// An older request that may not wait is refused where it would have waited, and leaves no
// waiter, no hold and no way back for a late duplicate of its round.
TEST(NodeLedger, AnOlderRequestThatMayNotWaitIsRefusedInstead) {
  ledger l{res("cpu", "4")};
  ASSERT_EQ(l.reserve(t(1), 20, 1, items({{1, res("cpu", "3")}})).vote, vote_kind::reserved);
  auto v = l.reserve(t(2), 10, 2, items({{2, res("cpu", "2")}}), /*may_wait=*/false);
  EXPECT_EQ(v.vote, vote_kind::refused_conflict);
  EXPECT_EQ(l.waiter_count(), 0u);
  EXPECT_EQ(l.held(), res("cpu", "3"));
  EXPECT_EQ(l.reserve(t(2), 10, 2, items({{2, res("cpu", "2")}})).vote,
            vote_kind::refused_conflict)
      << "the round is over: a duplicate does not wait either";
  // What fits is held whether or not it may wait.
  EXPECT_EQ(l.reserve(t(3), 10, 3, items({{3, res("cpu", "1")}}), false).vote,
            vote_kind::reserved);
}

TEST(NodeLedger, CommittedUsageRefusesWithWhatIsMissing) {
  ledger l{res("cpu", "4", "memory", "8Gi")};
  l.adopt(7, res("cpu", "3"));
  auto v = l.reserve(t(1), 1, 1, items({{1, res("cpu", "2", "memory", "10Gi")}}));
  EXPECT_EQ(v.vote, vote_kind::refused_insufficient);
  ASSERT_EQ(v.missing.size(), 2u);
  EXPECT_EQ(v.missing[0].resource, "cpu");
  EXPECT_EQ(v.missing[0].missing(), 1000);
  EXPECT_EQ(v.missing[1].resource, "memory");
}

TEST(NodeLedger, WaiterIsDecidedWhenTheYoungerHoldAborts) {
  ledger l{res("cpu", "4")};
  l.reserve(t(1), 20, 1, items({{1, res("cpu", "3")}}));
  ASSERT_EQ(l.reserve(t(2), 10, 2, items({{2, res("cpu", "2")}})).vote, vote_kind::waiting);
  EXPECT_TRUE(l.recheck_waiters().empty());  // Nothing changed yet.
  EXPECT_TRUE(l.abort(t(1)));
  auto decided = l.recheck_waiters();
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].txn, t(2));
  EXPECT_EQ(decided[0].owner, 2u);
  EXPECT_EQ(decided[0].outcome.vote, vote_kind::reserved);
  EXPECT_TRUE(l.is_held(t(2)));
}

TEST(NodeLedger, WaiterIsRefusedWhenTheYoungerHoldCommits) {
  ledger l{res("cpu", "4")};
  l.reserve(t(1), 20, 1, items({{1, res("cpu", "3")}}));
  l.reserve(t(2), 10, 2, items({{2, res("cpu", "2")}}));
  ASSERT_EQ(l.commit(t(1)).size(), 1u);
  auto decided = l.recheck_waiters();
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome.vote, vote_kind::refused_insufficient);
  EXPECT_EQ(l.waiter_count(), 0u);
}

TEST(NodeLedger, OlderWaiterBlocksYoungerNewcomers) {
  // Without this, a stream of small young gangs could starve an old one waiting for room.
  ledger l{res("cpu", "4")};
  l.reserve(t(1), 30, 1, items({{1, res("cpu", "3")}}));                    // youngest hold
  ASSERT_EQ(l.reserve(t(2), 10, 2, items({{2, res("cpu", "4")}})).vote, vote_kind::waiting);
  // 1 cpu is free, but the older waiter needs it: the younger newcomer dies.
  EXPECT_EQ(l.reserve(t(3), 20, 3, items({{3, res("cpu", "1")}})).vote,
            vote_kind::refused_conflict);
}

TEST(NodeLedger, OperationsAreIdempotent) {
  ledger l{res("cpu", "4")};
  EXPECT_EQ(l.reserve(t(1), 1, 1, items({{1, res("cpu", "2")}})).vote, vote_kind::reserved);
  EXPECT_EQ(l.reserve(t(1), 1, 1, items({{1, res("cpu", "2")}})).vote, vote_kind::reserved);
  EXPECT_EQ(l.held(), res("cpu", "2"));  // Not held twice.
  EXPECT_EQ(l.commit(t(1)).size(), 1u);
  EXPECT_TRUE(l.commit(t(1)).empty());   // A duplicate commit does nothing.
  EXPECT_FALSE(l.abort(t(1)));           // An abort after the commit does nothing.
  EXPECT_EQ(l.committed(), res("cpu", "2"));
  EXPECT_TRUE(l.release(1));
  EXPECT_FALSE(l.release(1));            // A duplicate release does nothing.
  EXPECT_TRUE(l.committed().is_zero());
  EXPECT_FALSE(l.abort(t(99)));          // Unknown transactions are acknowledged.
  EXPECT_TRUE(l.commit(t(99)).empty());
}

TEST(NodeLedger, AReserveAfterItsAbortIsRefusedNotResurrected) {
  ledger l{res("cpu", "4")};
  EXPECT_FALSE(l.abort(t(5)));  // The abort overtook the reserve.
  EXPECT_EQ(l.reserve(t(5), 1, 5, items({{1, res("cpu", "1")}})).vote,
            vote_kind::refused_conflict);
  EXPECT_EQ(l.hold_count(), 0u);
}

TEST(NodeLedger, CoordinatorDeathAbortsItsHoldsAndWaits) {
  ledger l{res("cpu", "4")};
  l.reserve(t(1, 1), 20, 1, items({{1, res("cpu", "3")}}));
  l.reserve(t(2, 1), 10, 2, items({{2, res("cpu", "2")}}));  // waits
  EXPECT_EQ(l.abort_owner(1), 1u);
  EXPECT_EQ(l.hold_count(), 0u);
  auto decided = l.recheck_waiters();
  ASSERT_EQ(decided.size(), 1u);
  EXPECT_EQ(decided[0].outcome.vote, vote_kind::reserved);
  EXPECT_EQ(l.abort_owner(2), 1u);
  EXPECT_TRUE(l.free() == res("cpu", "4"));
}

TEST(NodeLedger, ReleasingAHeldPodDropsItFromTheHold) {
  // A pod deleted while its gang commits must not stay charged once the commit arrives.
  ledger l{res("cpu", "4")};
  l.reserve(t(1), 1, 1, items({{1, res("cpu", "1")}, {2, res("cpu", "2")}}));
  EXPECT_TRUE(l.release(2));
  EXPECT_EQ(l.held(), res("cpu", "1"));
  auto committed = l.commit(t(1));
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].pod_id, 1u);
  EXPECT_EQ(l.committed(), res("cpu", "1"));
  EXPECT_EQ(l.bound_pod_ids(), std::vector<uint64_t>{1});
}

} // namespace
} // namespace phalanx::scheduler

namespace phalanx::scheduler {
namespace {

TEST(NodeLedger, ReplaceHandsAPlaceholdersRoomToItsPod) {
  node_ledger<int> l{testing::res("cpu", "4")};
  l.adopt(100, testing::res("cpu", "2"));  // The placeholder.
  l.adopt(1, testing::res("cpu", "1"));    // Someone else.
  ASSERT_EQ(l.reserve({9, 1}, 5, 9, {{2, testing::res("cpu", "1"), {}}}).vote,
            vote_kind::reserved);  // A hold takes the last cpu.
  // A pod that fits in the placeholder's room takes it over at once.
  using outcome = node_ledger<int>::replace_outcome;
  EXPECT_EQ(l.replace(100, 7, testing::res("cpu", "1500m")), outcome::replaced);
  EXPECT_FALSE(l.is_bound(100));
  EXPECT_TRUE(l.is_bound(7));
  EXPECT_EQ(l.committed(), testing::res("cpu", "2500m"));
  // Idempotent: the same replacement again changes nothing.
  EXPECT_EQ(l.replace(100, 7, testing::res("cpu", "1500m")), outcome::replaced);
  EXPECT_EQ(l.committed(), testing::res("cpu", "2500m"));

  l.adopt(101, testing::res("cpu", "500m"));
  // Bigger than the placeholder plus what is free (held room is not free): refused, unchanged.
  EXPECT_EQ(l.replace(101, 8, testing::res("cpu", "1")), outcome::refused);
  EXPECT_TRUE(l.is_bound(101));
  EXPECT_FALSE(l.is_bound(8));
  EXPECT_EQ(l.committed(), testing::res("cpu", "3")) << "2.5 committed + the 0.5 placeholder";
  // An unknown placeholder: nothing to take over.
  EXPECT_EQ(l.replace(555, 9, testing::res("cpu", "100m")), outcome::refused);

  // A pod released before its swap arrived (deleted on the way): not committed, and the
  // placeholder's room comes back.
  EXPECT_FALSE(l.release(8));
  EXPECT_EQ(l.replace(101, 8, testing::res("cpu", "100m")), outcome::pod_gone);
  EXPECT_FALSE(l.is_bound(8));
  EXPECT_FALSE(l.is_bound(101));
  EXPECT_EQ(l.committed(), testing::res("cpu", "2500m"));
}

// The ledger keeps each gang's highest finished round, not a window of recent transactions: a
// late reserve of any round up to it is refused however many rounds finished since (the window
// of 1,024 transactions this replaced forgot them, and filled on every node of a long-running
// cluster), with one entry per gang, until its coordinator ends.
TEST(NodeLedger, AReserveOfAFinishedRoundStaysRefusedWithOneEntryPerGang) {
  ledger l{res("cpu", "4")};
  for (uint32_t round = 1; round <= 3000; ++round) {
    ASSERT_EQ(l.reserve(t(1, round), 1, 1, items({{round, res("cpu", "1")}})).vote,
              vote_kind::reserved);
    if (round % 2 == 0) {
      ASSERT_EQ(l.commit(t(1, round)).size(), 1u);
      ASSERT_TRUE(l.release(round)); // The pod ran and ended.
    } else
      ASSERT_TRUE(l.abort(t(1, round)));
  }
  l.abort(t(2, 7)); // Another gang's abort overtook its reserve.
  EXPECT_EQ(l.remembered_gang_count(), 2u);
  for (uint32_t round : {1u, 2u, 1500u, 3000u})
    EXPECT_EQ(l.reserve(t(1, round), 1, 1, items({{9000, res("cpu", "1")}})).vote,
              vote_kind::refused_conflict)
        << "round " << round;
  EXPECT_EQ(l.reserve(t(2, 7), 1, 2, items({{9001, res("cpu", "1")}})).vote,
            vote_kind::refused_conflict);
  EXPECT_EQ(l.reserve(t(2, 6), 1, 2, items({{9002, res("cpu", "1")}})).vote,
            vote_kind::refused_conflict)
      << "an earlier round of the gang cannot arrive after round 7's abort but as a duplicate";
  EXPECT_EQ(l.hold_count(), 0u);

  // The gang's next round is new.
  EXPECT_EQ(l.reserve(t(1, 3001), 1, 1, items({{9003, res("cpu", "1")}})).vote,
            vote_kind::reserved);
  EXPECT_EQ(l.commit(t(1, 3001)).size(), 1u);

  // Its coordinator ended (or a new actor of the gang took over, counting from 1 again): the
  // gang's rounds are forgotten, the other gang's are kept.
  l.forget_finished(1);
  EXPECT_EQ(l.remembered_gang_count(), 1u);
  EXPECT_EQ(l.reserve(t(1, 1), 1, 1, items({{9004, res("cpu", "1")}})).vote, vote_kind::reserved);
  EXPECT_EQ(l.reserve(t(2, 7), 1, 2, items({{9005, res("cpu", "1")}})).vote,
            vote_kind::refused_conflict);
  l.forget_finished(42); // Unknown: nothing happens.
  EXPECT_EQ(l.remembered_gang_count(), 1u) << "gang 1's new round 1 is held, not finished";
}

TEST(NodeLedger, ALedgerOfPodsKeepsEachCommittedPodAndGivesBackItsRequests) {
  // The runtime's ledgers carry the pod as payload and keep it, not a copy of its request.
  using pod_ledger = node_ledger<int, std::shared_ptr<const pod>>;
  auto pod_of = [](const char* name, std::string_view cpu) {
    return std::make_shared<const pod>(testing::make_pod(name).cpu(cpu).obj());
  };
  auto restored = pod_of("restored", "1");
  auto placed = pod_of("placed", "2");
  auto placeholder = pod_of("placeholder", "500m");
  auto taker = pod_of("taker", "400m");
  pod_ledger l{res("cpu", "4", "memory", "8Gi", "pods", "10")};
  l.adopt(1, restored->requests, restored);
  l.adopt(100, placeholder->requests, placeholder);
  ASSERT_EQ(l.reserve(t(1), 1, 1, {{2, placed->requests, placed}}).vote, vote_kind::reserved);
  EXPECT_EQ(l.commit(t(1)).size(), 1u);
  EXPECT_EQ(l.replace(100, 3, taker->requests, taker), pod_ledger::replace_outcome::replaced);
  EXPECT_EQ(l.committed(), restored->requests + placed->requests + taker->requests);
  EXPECT_EQ(placed.use_count(), 2);  // The ledger's reference.
  EXPECT_EQ(placeholder.use_count(), 1);  // Released by the swap.

  EXPECT_TRUE(l.release(2));
  EXPECT_EQ(placed.use_count(), 1);
  EXPECT_EQ(l.committed(), restored->requests + taker->requests);
  EXPECT_TRUE(l.release(3));
  EXPECT_TRUE(l.release(1));
  EXPECT_EQ(l.committed(), resources{});
  EXPECT_FALSE(l.release(1));
}

TEST(RecentValues, KeepsTheLastCapacityDistinctValuesOnly) {
  recent_values<uint64_t, std::unordered_set<uint64_t>> recent{4};
  EXPECT_EQ(recent.size(), 0u);
  for (uint64_t v : {1, 2, 2, 3, 4})  // A repeat is not a new value.
    recent.insert(v);
  EXPECT_EQ(recent.size(), 4u);
  for (uint64_t v = 1; v <= 4; ++v)
    EXPECT_EQ(recent.count(v), 1u) << v;
  for (uint64_t v = 5; v <= 10; ++v)  // Wraps the ring more than once.
    recent.insert(v);
  EXPECT_EQ(recent.size(), 4u);
  for (uint64_t v = 1; v <= 6; ++v)
    EXPECT_EQ(recent.count(v), 0u) << v;
  for (uint64_t v = 7; v <= 10; ++v)
    EXPECT_EQ(recent.count(v), 1u) << v;
}

} // namespace
} // namespace phalanx::scheduler

namespace phalanx::scheduler {
namespace {

// The committed pods' map against a std::map fed the same operations: ids in increasing order
// (the common case, appends), then at random, found, replaced and erased; then nearly emptied,
// when it gives its room back.
TEST(SortedIdMap, AgreesWithAnOrderedMapAndGivesRoomBackWhenEmptied) {
  sorted_id_map<int> map;
  std::map<uint64_t, int> model;
  auto agree = [&] {
    ASSERT_EQ(map.size(), model.size());
    auto m = model.begin();
    for (const auto& [id, value] : map) {
      ASSERT_EQ(id, m->first);
      ASSERT_EQ(value, m->second);
      ++m;
    }
  };
  for (uint64_t id = 10; id < 200; id += 2) {
    EXPECT_TRUE(map.try_emplace(id, int(id)));
    model.emplace(id, int(id));
  }
  agree();
  std::mt19937_64 rng(7);
  for (int step = 0; step < 5000; ++step) {
    uint64_t id = rng() % 400;
    switch (rng() % 4) {
      case 0:
        EXPECT_EQ(map.try_emplace(id, step), model.try_emplace(id, step).second) << id;
        break;
      case 1:
        map.insert_or_assign(id, step);
        model.insert_or_assign(id, step);
        break;
      case 2:
        if (auto i = map.find(id); i != map.end()) {
          map.erase(i);
          EXPECT_EQ(model.erase(id), 1u) << id;
        } else {
          EXPECT_EQ(model.count(id), 0u) << id;
        }
        break;
      default:
        EXPECT_EQ(map.count(id), model.count(id)) << id;
        if (auto i = map.find(id); i != map.end()) {
          EXPECT_EQ(i->second, model.at(id));
        }
    }
  }
  agree();
  const std::size_t full = map.capacity();
  while (map.size() > 2)
    map.erase(map.begin());
  EXPECT_LT(map.capacity(), full / 4) << "emptied, it keeps its room";
  const auto& constant = map;
  EXPECT_EQ(constant.find(map.begin()->first), constant.begin());
  EXPECT_EQ(constant.find(1000), constant.end());
}

// A node's pods come a few at a time and stay: the room grows by a quarter, so a node of 70 pods
// holds room for at most ~91 where doubling would leave it 128.
TEST(SortedIdMap, GrowsByAQuarterNotByDoubling) {
  sorted_id_map<int> map;
  for (uint64_t id = 1; id <= 70; ++id) {
    ASSERT_TRUE(map.try_emplace(id * 2, static_cast<int>(id)));
    EXPECT_LE(map.capacity(), map.size() + map.size() / 4 + 4) << "after " << id;
  }
  map.insert_or_assign(1, -1);  // At the front, into a full vector: the position survives.
  map.insert_or_assign(71, -71);
  EXPECT_EQ(map.begin()->first, 1u);
  EXPECT_EQ(map.find(71)->second, -71);
  EXPECT_EQ(map.find(70)->second, 35);
  EXPECT_TRUE(std::is_sorted(map.begin(), map.end()));
}


// A preemptor's hold (reserve_evicting): the victims' room is its own, nobody else's, and it
// commits only once they are gone.

// Two victims of 2 cpu each committed on a full 4-cpu node.
ledger full_node_with_victims() {
  ledger l{res("cpu", "4")};
  l.adopt(10, res("cpu", "2"));
  l.adopt(11, res("cpu", "2"));
  return l;
}

TEST(NodeLedgerPreemption, TheVictimsRoomIsHeldForThePreemptorOnly) {
  auto l = full_node_with_victims();
  auto v = l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "2")}}), {10});
  ASSERT_EQ(v.vote, vote_kind::reserved);
  EXPECT_EQ(l.victims_pending(t(1)), 1u);
  EXPECT_EQ(l.claimed_victim_count(), 1u);
  EXPECT_TRUE(l.take_cleared().empty());
  // Until the victim goes the node shows less than nothing free, and an older ordinary gang
  // is refused as short, not given the room.
  EXPECT_EQ(l.free(), resources{} - res("cpu", "2"));
  EXPECT_EQ(l.reserve(t(2), 1, 2, items({{2, res("cpu", "1")}})).vote,
            vote_kind::refused_insufficient);
  // Nor does the victim's leaving give it to anyone else: a younger gang dies, an older one
  // waits for the preemptor's hold to end (wait-die, as for any hold).
  ASSERT_TRUE(l.release(10));
  EXPECT_EQ(l.free(), res("cpu", "0"));
  EXPECT_EQ(l.reserve(t(3), 9, 3, items({{3, res("cpu", "1")}})).vote,
            vote_kind::refused_conflict);
  EXPECT_EQ(l.reserve(t(4), 1, 4, items({{4, res("cpu", "1")}})).vote, vote_kind::waiting);
  EXPECT_TRUE(l.abort(t(4)));
  auto cleared = l.take_cleared();
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_EQ(cleared[0].txn, t(1));
  EXPECT_EQ(cleared[0].owner, 1u);
  EXPECT_EQ(l.claimed_victim_count(), 0u);
  EXPECT_EQ(l.commit(t(1)).size(), 1u);
  EXPECT_EQ(l.committed(), res("cpu", "4"));
  EXPECT_EQ(l.held(), resources{});
}

TEST(NodeLedgerPreemption, ItDoesNotCommitWhileAVictimRemains) {
  auto l = full_node_with_victims();
  ASSERT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "4")}}), {10, 11}).vote,
            vote_kind::reserved);
  ASSERT_TRUE(l.release(10));
  EXPECT_TRUE(l.take_cleared().empty());
  EXPECT_TRUE(l.commit(t(1)).empty());
  EXPECT_TRUE(l.is_held(t(1)));
  ASSERT_TRUE(l.release(11));
  EXPECT_EQ(l.take_cleared().size(), 1u);
  EXPECT_EQ(l.commit(t(1)).size(), 1u);
  EXPECT_EQ(l.committed(), res("cpu", "4"));
}

TEST(NodeLedgerPreemption, AnAbortEndsTheClaimAndTheRoomFreedIsAnyones) {
  auto l = full_node_with_victims();
  ASSERT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "2")}}), {10}).vote,
            vote_kind::reserved);
  EXPECT_TRUE(l.abort(t(1)));
  EXPECT_EQ(l.claimed_victim_count(), 0u);
  ASSERT_TRUE(l.release(10));  // The eviction was under way: the victim goes all the same.
  EXPECT_TRUE(l.take_cleared().empty());
  EXPECT_EQ(l.free(), res("cpu", "2"));
  EXPECT_EQ(l.reserve(t(2), 9, 2, items({{2, res("cpu", "2")}})).vote, vote_kind::reserved);
}

TEST(NodeLedgerPreemption, ADeadPreemptorsClaimEndsWithItsHolds) {
  auto l = full_node_with_victims();
  ASSERT_EQ(l.reserve_evicting(t(1), 5, 7, items({{1, res("cpu", "2")}}), {10}).vote,
            vote_kind::reserved);
  EXPECT_EQ(l.abort_owner(7), 1u);
  EXPECT_EQ(l.claimed_victim_count(), 0u);
  EXPECT_EQ(l.held(), resources{});
}

TEST(NodeLedgerPreemption, AVictimClaimedByAnotherPreemptorIsAConflict) {
  auto l = full_node_with_victims();
  ASSERT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "2")}}), {10}).vote,
            vote_kind::reserved);
  EXPECT_EQ(l.reserve_evicting(t(2), 1, 2, items({{2, res("cpu", "2")}}), {10}).vote,
            vote_kind::refused_conflict);
  // The other victim is free to claim: each preemptor takes its own victim's room.
  EXPECT_EQ(l.reserve_evicting(t(3), 1, 3, items({{3, res("cpu", "2")}}), {11}).vote,
            vote_kind::reserved);
  EXPECT_EQ(l.claimed_room(), res("cpu", "4"));
}

// A victim larger than its preemptor's need gives the rest to nobody until it is gone: another
// preemptor, whose own victim is too small, cannot count on it.
TEST(NodeLedgerPreemption, AVictimsRoomBeyondItsPreemptorsNeedIsNotLentOut) {
  ledger l{res("cpu", "8")};
  l.adopt(10, res("cpu", "4"));
  l.adopt(11, res("cpu", "4"));
  ASSERT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "1")}}), {10}).vote,
            vote_kind::reserved);
  EXPECT_EQ(l.claimed_room(), res("cpu", "1"));
  // 8 - 8 + 4 of its own victim: 4, not the 7 that lending the first victim's surplus would give.
  EXPECT_EQ(l.reserve_evicting(t(2), 5, 2, items({{2, res("cpu", "5")}}), {11}).vote,
            vote_kind::refused_insufficient);
  EXPECT_EQ(l.reserve_evicting(t(3), 5, 3, items({{3, res("cpu", "4")}}), {11}).vote,
            vote_kind::reserved);
  // Once the first victim is gone, its surplus is anyone's.
  ASSERT_TRUE(l.release(10));
  EXPECT_EQ(l.free(), resources{} - res("cpu", "1"));  // 8 - 4 (victim 11) - 1 - 4 held.
  ASSERT_TRUE(l.release(11));
  EXPECT_EQ(l.free(), res("cpu", "3"));
}

TEST(NodeLedgerPreemption, TooFewVictimsIsInsufficientAndHoldsNothing) {
  auto l = full_node_with_victims();
  auto v = l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "3")}}), {10});
  EXPECT_EQ(v.vote, vote_kind::refused_insufficient);
  ASSERT_EQ(v.missing.size(), 1u);
  EXPECT_EQ(l.claimed_victim_count(), 0u);
  EXPECT_EQ(l.held(), resources{});
  // Refused is finished: a late duplicate of the round cannot take the victims after all.
  EXPECT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "2")}}), {10}).vote,
            vote_kind::refused_conflict);
}

TEST(NodeLedgerPreemption, VictimsGoneAlreadyAreFreeRoomAndClearAtOnce) {
  auto l = full_node_with_victims();
  ASSERT_TRUE(l.release(10));
  ASSERT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "2")}}), {10}).vote,
            vote_kind::reserved);
  EXPECT_EQ(l.victims_pending(t(1)), 0u);
  EXPECT_EQ(l.take_cleared().size(), 1u);
  EXPECT_EQ(l.commit(t(1)).size(), 1u);
}

TEST(NodeLedgerPreemption, AnotherHoldInTheWayIsAConflict) {
  ledger l{res("cpu", "4")};
  l.adopt(10, res("cpu", "2"));
  ASSERT_EQ(l.reserve(t(9), 1, 9, items({{9, res("cpu", "2")}})).vote, vote_kind::reserved);
  EXPECT_EQ(l.reserve_evicting(t(1), 5, 1, items({{1, res("cpu", "3")}}), {10}).vote,
            vote_kind::refused_conflict);
}

} // namespace
} // namespace phalanx::scheduler
