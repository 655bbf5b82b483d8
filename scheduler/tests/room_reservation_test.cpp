// A starving gang's reservation: which nodes it reserves, what a reserved node keeps from other
// gangs, and how a node ledger decides reserves around it.

#include "scheduler/room_reservation.hpp"

#include "scheduler/node_ledger.hpp"
#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;

TEST(Starvation, CountsFromTheFirstBlockAndAZeroBoundTurnsItOff) {
  const timestamp since{std::chrono::seconds(100)};
  const duration bound = std::chrono::seconds(30);
  EXPECT_FALSE(is_starving(since, since + std::chrono::seconds(29), bound));
  EXPECT_TRUE(is_starving(since, since + std::chrono::seconds(30), bound));
  EXPECT_FALSE(is_starving(since, since + std::chrono::hours(9), duration::zero()));
}

TEST(WithheldRoom, IsTheSmallerOfTheReservationAndTheFreeRoomNeverNegative) {
  EXPECT_EQ(withheld_room(res("cpu", "2"), res("cpu", "8")), res("cpu", "2"));
  EXPECT_EQ(withheld_room(res("cpu", "12"), res("cpu", "8")), res("cpu", "8"));
  auto overdrawn = res("memory", "4Gi");  // Allocatable shrank below what runs: cpu < 0.
  overdrawn.cpu_milli = -1000;
  EXPECT_EQ(withheld_room(overdrawn, res("cpu", "8", "memory", "1Gi")), res("memory", "1Gi"));
}

// A cluster as a snapshot with some load already on its nodes.
struct loaded_cluster {
  cluster_snapshot view;
  loaded_cluster(std::vector<node> nodes, std::vector<std::pair<std::size_t, resources>> load) {
    for (auto& n : nodes)
      view.add_node(std::move(n));
    for (const auto& [n, r] : load)
      view.allocate(n, r);
  }
};

std::vector<std::string> names(const cluster_snapshot& view, const reservation_choice& c) {
  std::vector<std::string> out;
  for (const auto& claim : c.nodes)
    out.push_back(view.at(claim.node).meta.name.str());
  return out;
}

TEST(ChooseReservedNodes, TakesTheNodesClosestToHoldingTheGangAndFillsThemWhole) {
  // Four 8-cpu nodes; n2 is the emptiest, then n0; n1 and n3 are nearly full.
  loaded_cluster c({make_node("n0").cpu("8"), make_node("n1").cpu("8"), make_node("n2").cpu("8"),
                    make_node("n3").cpu("8")},
                   {{0, res("cpu", "4")}, {1, res("cpu", "7")}, {2, res("cpu", "2")},
                    {3, res("cpu", "7")}});
  auto g = make_gang("big", 12).task("worker", 12, res("cpu", "1")).obj();
  auto pods = g.pod_pointers();
  gang_request request{pods, 12, {}, false};
  auto choice = choose_reserved_nodes(c.view, request, {});
  ASSERT_TRUE(choice.found) << choice.detail;
  EXPECT_EQ(names(c.view, choice), (std::vector<std::string>{"n0", "n2"}));
  EXPECT_EQ(choice.nodes[0].amount, res("cpu", "4", "pods", "4"));  // n0 after n2's 8.
  EXPECT_EQ(choice.nodes[1].amount, res("cpu", "8", "pods", "8"));
  EXPECT_EQ(choice.detail, "2 node(s) for 12 pod(s): n0, n2");
}

TEST(ChooseReservedNodes, SkipsNodesTakenByAnotherGangAndNodesThePodsCannotUse) {
  loaded_cluster c({make_node("n0").cpu("8"), make_node("gpu").cpu("8").taint("gpu", "true"),
                    make_node("n2").cpu("8"), make_node("n3").cpu("8")},
                   {});
  auto g = make_gang("big", 8).task("worker", 8, res("cpu", "1")).obj();
  auto pods = g.pod_pointers();
  gang_request request{pods, 8, {}, false};
  auto choice = choose_reserved_nodes(c.view, request, [](std::size_t n) { return n == 0; });
  ASSERT_TRUE(choice.found) << choice.detail;
  EXPECT_EQ(names(c.view, choice), (std::vector<std::string>{"n2"}));

  auto none = choose_reserved_nodes(c.view, request, [](std::size_t n) { return n != 1; });
  EXPECT_FALSE(none.found);
  EXPECT_TRUE(none.nodes.empty());
  EXPECT_EQ(none.detail, "8 of the 8 pod(s) of the gang's minimum fit no node left to reserve");
}

TEST(ChooseReservedNodes, CoversRoleMinimumsFirstAndOnlyTheMinimum) {
  loaded_cluster c({make_node("n0").cpu("4"), make_node("n1").cpu("4")}, {});
  // minMember 3 with one ps required: the ps (2 cpu) and two workers, not the four workers.
  auto g = make_gang("tf", 3)
               .task("worker", 4, res("cpu", "1"))
               .task("ps", 1, res("cpu", "2"), 1)
               .obj();
  auto pods = g.pod_pointers();
  gang_request request{pods, 3, {{"ps", 1}}, true};
  auto choice = choose_reserved_nodes(c.view, request, {});
  ASSERT_TRUE(choice.found) << choice.detail;
  resources total;
  int32_t count = 0;
  for (const auto& claim : choice.nodes) {
    total += claim.amount;
    count += claim.pods;
  }
  EXPECT_EQ(count, 3);
  EXPECT_EQ(total, res("cpu", "4", "pods", "3"));
  EXPECT_EQ(choice.nodes.size(), 1u);  // 4 cpu: one node holds them all.

  gang_request short_of_ps{pods, 3, {{"ps", 2}}, true};
  auto refused = choose_reserved_nodes(c.view, short_of_ps, {});
  EXPECT_FALSE(refused.found);
  EXPECT_EQ(refused.detail, "role ps has 1 pending pod(s) of the 2 its minimum needs");

  gang_request ready{pods, 0, {}, true};
  EXPECT_FALSE(choose_reserved_nodes(c.view, ready, {}).found);
}

TEST(ChooseReservedNodes, NamesThreeNodesAndCountsTheRest) {
  std::vector<node> nodes;
  for (int i = 0; i < 6; ++i)
    nodes.push_back(make_node("n" + std::to_string(i)).cpu("2"));
  loaded_cluster c(std::move(nodes), {});
  auto g = make_gang("wide", 12).task("worker", 12, res("cpu", "1")).obj();
  auto pods = g.pod_pointers();
  auto choice = choose_reserved_nodes(c.view, gang_request{pods, 12, {}, false}, {});
  ASSERT_TRUE(choice.found);
  EXPECT_EQ(choice.detail, "6 node(s) for 12 pod(s): n0, n1, n2 and 3 more");
  EXPECT_EQ(reservation_reason(choice),
            "It has waited past the starvation bound and reserves 6 node(s) for 12 pod(s): n0, "
            "n1, n2 and 3 more; they take no other gang's pods that would delay it.");
}

// -- The ledger around a reservation. Tickets are integers, lower is older; owners are gangs.

using ledger = node_ledger<int>;

std::vector<ledger::item> one(uint64_t pod, resources r) { return {{pod, std::move(r), {}}}; }

TEST(NodeLedgerReservation, OtherGangsGetOnlyTheRoomBeyondIt) {
  ledger l{res("cpu", "8")};
  l.adopt(100, res("cpu", "5"));                         // 3 free.
  ASSERT_TRUE(l.reserve_room(7, res("cpu", "4")));       // Gang 7 waits for 4.
  EXPECT_EQ(l.withheld(), res("cpu", "3"));
  EXPECT_EQ(l.published_free(), resources{});
  // An older gang that would take 1 cpu delays gang 7: a conflict, not a hold.
  EXPECT_EQ(l.reserve({1, 1}, 1, 1, one(1, res("cpu", "1"))).vote, vote_kind::refused_conflict);
  EXPECT_FALSE(l.reserve_room(2, res("cpu", "1")));       // One reservation at a time.

  l.release(100);                                          // 8 free: 4 beyond the reservation.
  EXPECT_EQ(l.withheld(), res("cpu", "4"));
  EXPECT_EQ(l.published_free(), res("cpu", "4"));
  EXPECT_EQ(l.reserve({2, 1}, 2, 2, one(2, res("cpu", "4"))).vote, vote_kind::reserved);
  EXPECT_EQ(l.reserve({3, 1}, 3, 3, one(3, res("cpu", "1"))).vote, vote_kind::refused_conflict);
  // Gang 7 sees its room whole and holds it; its hold is not counted twice.
  EXPECT_EQ(l.reserve({7, 1}, 9, 7, one(7, res("cpu", "4"))).vote, vote_kind::reserved);
  EXPECT_EQ(l.withheld(), resources{});
  EXPECT_EQ(l.room_reserved_for(), 7u);
  // Its commit ends the reservation.
  EXPECT_FALSE(l.commit({7, 1}).empty());
  EXPECT_EQ(l.room_reserved_for(), 0u);
}

TEST(NodeLedgerReservation, APartlyHeldReservationStillKeepsTheRest) {
  ledger l{res("cpu", "8")};
  ASSERT_TRUE(l.reserve_room(7, res("cpu", "6")));
  EXPECT_EQ(l.reserve({7, 1}, 9, 7, one(70, res("cpu", "2"))).vote, vote_kind::reserved);
  EXPECT_EQ(l.withheld(), res("cpu", "4"));
  EXPECT_EQ(l.published_free(), res("cpu", "2"));
  EXPECT_EQ(l.reserve({1, 1}, 1, 1, one(1, res("cpu", "2"))).vote, vote_kind::reserved);
  EXPECT_EQ(l.reserve({2, 1}, 2, 2, one(2, res("cpu", "1"))).vote, vote_kind::refused_conflict);
}

TEST(NodeLedgerReservation, EndsWithItsGangOrWhenGivenBack) {
  ledger l{res("cpu", "4")};
  ASSERT_TRUE(l.reserve_room(7, res("cpu", "4")));
  EXPECT_FALSE(l.release_room(8));
  EXPECT_TRUE(l.reserve_room(7, res("cpu", "2")));  // Its own: replaced.
  EXPECT_EQ(l.withheld(), res("cpu", "2"));
  EXPECT_EQ(l.abort_owner(7), 1u);                   // Its coordinator died.
  EXPECT_EQ(l.room_reserved_for(), 0u);
  ASSERT_TRUE(l.reserve_room(8, res("cpu", "4")));
  EXPECT_TRUE(l.release_room(8));
  EXPECT_EQ(l.published_free(), res("cpu", "4"));
}

TEST(NodeLedgerReservation, APreemptorOfAnotherGangDoesNotTakeTheReservedRoom) {
  ledger l{res("cpu", "4")};
  l.adopt(100, res("cpu", "4"));
  ASSERT_TRUE(l.reserve_room(7, res("cpu", "4")));
  auto v = l.reserve_evicting({1, 1}, 1, 1, one(1, res("cpu", "4")), {100});
  EXPECT_EQ(v.vote, vote_kind::refused_conflict);
  EXPECT_EQ(l.claimed_victim_count(), 0u);
}

} // namespace
} // namespace phalanx::scheduler
