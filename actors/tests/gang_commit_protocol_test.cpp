// The two-phase gang commit under failures, on CAF's test coordinator:
// - a coordinator killed mid-prepare: every node it holds something on drops the holds (they
//   monitor it), and another gang then gets the room;
// - a coordinator killed after its gang committed with placeholders: the pods stay committed, the
//   placeholders are released;
// - duplicated and reordered reserve/commit/abort/swap messages at a node: each outcome happens
//   once, an abort before the commit wins, and a late duplicate cannot resurrect a transaction.

#include "actors/tests/actor_world.hpp"

#include "scheduler/placeholders.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_gang;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using scheduler::testing::res;

scheduler::resources total_held(actor_world& w) {
  scheduler::resources sum;
  for (std::size_t i = 0; i < w.nodes.size(); ++i)
    if (w.node_state(i).ledger)
      sum += w.node_state(i).ledger->held();
  return sum;
}

scheduler::resources total_committed(actor_world& w) {
  scheduler::resources sum;
  for (std::size_t i = 0; i < w.nodes.size(); ++i)
    if (w.node_state(i).ledger)
      sum += w.node_state(i).ledger->committed();
  return sum;
}

// Runs messages one at a time until `stop` holds; false when the system went idle first.
bool step_until(actor_world& w, const std::function<bool()>& stop) {
  for (int guard = 0; guard < 10000; ++guard) {
    if (stop())
      return true;
    if (w.sched().jobs.empty())
      return stop();
    w.run_job(0);
  }
  return false;
}

// Runs every message but those of `held_back`, one at a time, until only theirs are left.
void run_all_but(actor_world& w, std::initializer_list<caf::abstract_actor*> held_back) {
  auto is_held_back = [&](caf::resumable* job) {
    auto* actor = dynamic_cast<caf::abstract_actor*>(job);
    return std::find(held_back.begin(), held_back.end(), actor) != held_back.end();
  };
  for (int guard = 0; guard < 10000; ++guard) {
    auto& jobs = w.sched().jobs;
    auto next = std::find_if_not(jobs.begin(), jobs.end(), is_held_back);
    if (next == jobs.end())
      return;
    w.run_job(static_cast<std::size_t>(next - jobs.begin()));
  }
}

// A reserve on its way to a node counts against the node in the cluster view (docs/NOTES.md
// "Reserves in flight"): a gang that plans before the node read another gang's reserve sees the
// room as taken, and does not send a reserve the node would refuse.
TEST(GangCommitProtocol, AReserveOnItsWayHidesItsRoomFromOtherPlannersUntilTheNodeReadsIt) {
  actor_world w;
  w.add_node(make_node("n0").cpu("4").memory("8Gi"));
  w.add_gang(make_gang("a", 1).task("worker", 1, res("cpu", "3")), 1);
  w.add_gang(make_gang("b", 1).task("worker", 1, res("cpu", "3")), 2);
  // Everything but the node runs: both gangs plan, and whatever they send the node waits.
  run_all_but(w, {caf::actor_cast<caf::abstract_actor*>(w.nodes[0])});
  EXPECT_EQ(w.ctx().view->in_flight(0), res("cpu", "3", "pods", "1"))
      << "one reserve is on its way";
  scheduler::resources seen;
  w.ctx().view->read_free(0, seen);
  EXPECT_EQ(seen.cpu_milli, 1000) << "planners see the room on its way as taken";
  uint32_t rounds = w.gang_state(0).round + w.gang_state(1).round;
  EXPECT_EQ(rounds, 1u) << "the second gang sent a reserve the node could only refuse";

  w.sched().run();
  EXPECT_TRUE(w.ctx().view->in_flight(0).is_zero()) << "the node read the reserve";
  EXPECT_EQ(total_committed(w), res("cpu", "3", "pods", "1"));
  EXPECT_EQ(w.check_at_rest(), "");
  EXPECT_EQ(w.check_step(), "");
}

// A running gang's extra pods whose round an older gang's hold refused: the hold ends by itself
// (here it commits), and room may be left elsewhere, but nothing is released, so no wake comes.
// The gang tries again after a backoff, as a gang that is not running yet does; before, its
// extra pods waited for the next release anywhere in the cluster, for ever on a quiet one.
TEST(GangCommitProtocol, ARunningGangWhoseExtraPodsWereRefusedTriesAgainWithoutAWake) {
  actor_world w;
  // Views as stale as the mailboxes (two threads planning at once), and one refusal ends the
  // slot (no replan within it).
  w.ctx().config.scheduling.count_reserves_in_flight = false;
  w.ctx().config.scheduling.max_replans = 0;
  w.add_node(make_node("n0").cpu("2").memory("8Gi"));
  w.add_node(make_node("n1").cpu("3").memory("8Gi"));
  auto base = scheduler::timestamp{std::chrono::seconds{1700000000}};
  w.add_gang(make_gang("a", 1).task("worker", 1, res("cpu", "1")).created(base), 1); // Pod 100.
  w.sched().run();
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
  ASSERT_TRUE(w.node_state(0).ledger->is_bound(100)) << "binpack: the fuller node";

  // An older gang and a new pod of the running one arrive together. The older gang's reserve
  // reaches n0 first; the running gang plans before n0 read it, so it sees n0's last cpu free.
  w.add_gang(make_gang("b", 1).task("worker", 1, res("cpu", "1")).created(base - 1s), 2);
  auto* n0 = caf::actor_cast<caf::abstract_actor*>(w.nodes[0]);
  auto* a = caf::actor_cast<caf::abstract_actor*>(w.gangs[0]);
  run_all_but(w, {n0, a});
  pod_refs extra{{101, std::make_shared<const scheduler::pod>(
                           make_pod("a-worker-1").cpu("1").group("a").created(base).obj())}};
  caf::anon_send(w.gangs[0], pods_atom::value, extra);
  run_all_but(w, {n0});
  ASSERT_EQ(w.gang_state(0).round, 2u) << "the extra pod's round was sent";
  w.sched().run();
  EXPECT_TRUE(w.node_state(0).ledger->is_bound(200)) << "the older gang holds and commits";
  EXPECT_FALSE(w.node_state(0).ledger->is_bound(101)) << "the younger reserve was refused";
  EXPECT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);

  // No release follows (and the queue here never wakes anyone): only a timer can bring it back.
  for (int guard = 0; guard < 20 && w.sched().has_pending_timeout(); ++guard) {
    w.sched().trigger_timeout();
    w.sched().run();
  }
  EXPECT_TRUE(w.node_state(1).ledger->is_bound(101)) << "placed on n1, where room was left";
  EXPECT_EQ(w.gang_state(0).round, 3u);
  EXPECT_EQ(w.check_at_rest(), "");
  EXPECT_EQ(w.check_step(), "");
}

// A running gang's extra pod finds no room because another gang holds the last of it; that hold
// then ends without a commit (here its coordinator dies mid-round; a round refused elsewhere
// aborts it the same way). Nothing was released, so no wake comes: the gang tries again after a
// backoff. Before, it waited for a wake, and on a quiet cluster its pod stayed pending for ever
// beside the free room.
TEST(GangCommitProtocol, ARunningGangWithNoRoomTriesAgainWhenAnotherGangsHoldEndsWithoutARelease) {
  actor_world w;
  w.add_node(make_node("n0").cpu("2").memory("8Gi"));
  auto base = scheduler::timestamp{std::chrono::seconds{1700000000}};
  w.add_gang(make_gang("a", 1).task("worker", 1, res("cpu", "1")).created(base), 1); // Pod 100.
  w.sched().run();
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);

  w.add_gang(make_gang("b", 1).task("worker", 1, res("cpu", "1")).created(base), 2); // Pod 200.
  ASSERT_TRUE(step_until(w, [&] { return !total_held(w).is_zero(); })) << "b never held";
  auto* b = caf::actor_cast<caf::abstract_actor*>(w.gangs[1]);
  pod_refs extra{{101, std::make_shared<const scheduler::pod>(
                           make_pod("a-worker-1").cpu("1").group("a").created(base).obj())}};
  caf::anon_send(w.gangs[0], pods_atom::value, extra);
  run_all_but(w, {b});
  ASSERT_EQ(w.gang_state(0).round, 1u) << "b's hold takes the last cpu: no room, no round";
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);

  caf::anon_send_exit(w.gangs[1], caf::exit_reason::kill);
  w.sched().run();
  ASSERT_TRUE(total_held(w).is_zero()) << "n0 dropped the dead coordinator's hold";
  ASSERT_FALSE(w.node_state(0).ledger->is_bound(101)) << "nothing ran a timer yet";

  for (int guard = 0; guard < 20 && w.sched().has_pending_timeout(); ++guard) {
    w.sched().trigger_timeout();
    w.sched().run();
  }
  EXPECT_TRUE(w.node_state(0).ledger->is_bound(101)) << "placed in the room the hold left";
  EXPECT_EQ(w.gang_state(0).round, 2u);
  EXPECT_EQ(total_committed(w), res("cpu", "2", "pods", "2"));
}

TEST(GangCommitProtocol, CoordinatorKilledMidPrepareReleasesEveryHold) {
  actor_world w;
  for (int i = 0; i < 3; ++i)
    w.add_node(make_node("n" + std::to_string(i)).cpu("2").memory("8Gi"));
  // Six 1-cpu pods: the gang needs every node.
  w.add_gang(make_gang("a", 6).task("worker", 6, res("cpu", "1")), 1);
  ASSERT_TRUE(step_until(w, [&] { return total_held(w) == res("cpu", "6", "pods", "6"); }))
      << "the gang never held its six pods";
  EXPECT_TRUE(w.log->durable_pods.empty()) << "killed before its bindings were durable";

  caf::anon_send_exit(w.gangs[0], caf::exit_reason::kill);
  w.sched().run();
  EXPECT_TRUE(total_held(w).is_zero()) << total_held(w).to_string();
  EXPECT_TRUE(total_committed(w).is_zero());
  for (std::size_t i = 0; i < w.nodes.size(); ++i)
    EXPECT_EQ(w.node_state(i).ledger->hold_count(), 0u) << "node " << i;
  EXPECT_TRUE(w.log->bound.empty()) << "nothing may reach the binder";

  // The room is free again: another gang takes all of it.
  w.add_gang(make_gang("b", 6).task("worker", 6, res("cpu", "1")), 2);
  w.sched().run();
  EXPECT_EQ(w.gang_state(1).machine.phase(), scheduler::gang_phase::running);
  EXPECT_EQ(total_committed(w), res("cpu", "6", "pods", "6"));
  EXPECT_EQ(w.check_step(), "");
}

TEST(GangCommitProtocol, CoordinatorKilledAfterCommitKeepsPodsAndReleasesPlaceholders) {
  actor_world w;
  w.add_node(make_node("n0").cpu("4").memory("8Gi"));
  // A driver alone in a gang of three that names its size: two placeholders come with it.
  auto g = make_gang("spark", 3).task("driver", 1, res("cpu", "1")).obj();
  g.group.min_resources = res("cpu", "3");
  g.group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
  w.add_gang(g, 1);
  w.sched().run();
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
  auto& ledger = *w.node_state(0).ledger;
  EXPECT_EQ(ledger.committed(), res("cpu", "3", "pods", "3")) << "driver + two placeholders";
  ASSERT_EQ(w.log->bound.size(), 1u) << "only the driver reaches the binder";
  EXPECT_EQ(w.log->bound[0].second, 100u);

  caf::anon_send_exit(w.gangs[0], caf::exit_reason::kill);
  w.sched().run();
  EXPECT_EQ(ledger.committed(), res("cpu", "1", "pods", "1")) << "the driver stays, placeholders go";
  EXPECT_EQ(ledger.bound_pod_ids(), std::vector<uint64_t>{100});
}

TEST(GangCommitProtocol, LaterMembersTakeOverPlaceholdersAndTheRestIsReleasedAtTheEnd) {
  actor_world w;
  w.add_node(make_node("n0").cpu("4").memory("8Gi"));
  auto g = make_gang("spark", 3).task("driver", 1, res("cpu", "1")).obj();
  g.group.min_resources = res("cpu", "3");
  g.group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
  w.add_gang(g, 1);
  w.sched().run();
  auto& ledger = *w.node_state(0).ledger;
  ASSERT_EQ(ledger.committed(), res("cpu", "3", "pods", "3"));

  // One executor appears: it takes over a placeholder (no new room is needed).
  pod_refs executors{{101, std::make_shared<const scheduler::pod>(
                               make_pod("spark-exec-0").cpu("1").group("spark").obj())}};
  caf::anon_send(w.gangs[0], pods_atom::value, executors);
  w.sched().run();
  EXPECT_EQ(ledger.committed(), res("cpu", "3", "pods", "3"));
  EXPECT_TRUE(ledger.is_bound(101));
  EXPECT_TRUE(w.log->durable_pods.count(101)) << "its binding was made durable before the swap";
  EXPECT_EQ(w.log->bound.size(), 2u);

  // The driver and the executor finish: the gang completes and its last placeholder goes.
  caf::anon_send(w.gangs[0], finished_atom::value,
                 std::vector<pod_outcome>{{100, scheduler::pod_phase::succeeded, false},
                                          {101, scheduler::pod_phase::succeeded, false}});
  w.sched().run();
  EXPECT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::completed);
  // The node releases finished pods on the registry's word (not part of this world), so only the
  // placeholder's cpu has come back here.
  EXPECT_EQ(ledger.committed(), res("cpu", "2", "pods", "2"));
  for (auto id : ledger.bound_pod_ids())
    EXPECT_FALSE(is_placeholder(id)) << id;
}

// A member with rules between pods does not take over a placeholder (no vote would check its
// rules there): the placeholder is released and the member is planned and voted on like any pod.
TEST(GangCommitProtocol, AMemberWithAntiAffinityIsPlacedNotSwappedIntoAPlaceholder) {
  actor_world w;
  w.add_node(make_node("n0").cpu("4").memory("8Gi").label("kubernetes.io/hostname", "n0"));
  w.add_node(make_node("n1").cpu("4").memory("8Gi").label("kubernetes.io/hostname", "n1"));
  auto g = make_gang("spark", 3).task("driver", 1, res("cpu", "1")).obj();
  g.pods[0].meta.labels.set("app", "driver");
  g.group.min_resources = res("cpu", "3");
  g.group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
  w.add_gang(g, 1);
  w.sched().run();
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
  auto driver_node = w.node_state(0).ledger->is_bound(100) ? 0 : 1;
  auto& with_driver = *w.node_state(std::size_t(driver_node)).ledger;
  ASSERT_EQ(with_driver.committed(), res("cpu", "3", "pods", "3")) << "binpack: all on one node";

  pod_refs executors{
      {101, std::make_shared<const scheduler::pod>(
                make_pod("spark-exec-0")
                    .cpu("1")
                    .group("spark")
                    .anti_affinity(scheduler::testing::pods_labelled("app", "driver"))
                    .obj())}};
  caf::anon_send(w.gangs[0], pods_atom::value, executors);
  w.sched().run();
  auto& other = *w.node_state(std::size_t(1 - driver_node)).ledger;
  EXPECT_TRUE(other.is_bound(101)) << "kept off the driver's node";
  EXPECT_FALSE(with_driver.is_bound(101));
  EXPECT_EQ(with_driver.committed(), res("cpu", "2", "pods", "2"))
      << "the driver and one placeholder; the other placeholder was released";
  EXPECT_EQ(w.check_step(), "");
}

// A gang finds its members by pod id (a sorted index): pods that arrive later with lower ids
// than the members before them, and a known pod sent again, are placed and finished by id.
TEST(GangCommitProtocol, MembersArrivingOutOfIdOrderAreFoundByTheirIds) {
  actor_world w;
  w.add_node(make_node("n0").cpu("8").memory("8Gi"));
  w.add_gang(make_gang("job", 1).task("worker", 2, res("cpu", "1")).obj(), 1);  // Pods 100, 101.
  w.sched().run();
  pod_refs later;
  for (uint64_t id : {99, 50, 75})
    later.push_back({id, std::make_shared<const scheduler::pod>(
                             make_pod("w-" + std::to_string(id)).cpu("1").group("job").obj())});
  // Pod 101 again (a newer version of a known pod): no new member.
  later.push_back({101, std::make_shared<const scheduler::pod>(
                            make_pod("job-worker-1").cpu("1").group("job").obj())});
  caf::anon_send(w.gangs[0], pods_atom::value, later);
  w.sched().run();
  auto& ledger = *w.node_state(0).ledger;
  for (uint64_t id : {50, 75, 99, 100, 101})
    EXPECT_TRUE(ledger.is_bound(id)) << id;
  EXPECT_EQ(w.gang_state(0).members.size(), 5u);
  EXPECT_EQ(ledger.committed(), res("cpu", "5", "pods", "5"));

  caf::anon_send(w.gangs[0], finished_atom::value,
                 std::vector<pod_outcome>{{75, scheduler::pod_phase::succeeded, false},
                                          {50, scheduler::pod_phase::failed, false}});
  w.sched().run();
  std::map<uint64_t, gang_actor_state::member_status> status;
  for (const auto& m : w.gang_state(0).members)
    status[m.ref.id] = m.status;
  using member_status = gang_actor_state::member_status;
  EXPECT_EQ(status[50], member_status::finished);
  EXPECT_EQ(status[75], member_status::finished);
  EXPECT_EQ(status[99], member_status::bound);
  EXPECT_EQ(status[100], member_status::bound);
  EXPECT_EQ(status[101], member_status::bound);
}

// A coordinator that only records what nodes tell it.
struct probe_log {
  std::vector<vote> votes;
  std::vector<scheduler::txn_id> committed;
};
struct probe_state {
  std::shared_ptr<probe_log> log;
};
gang_actor::behavior_type probe(gang_actor::stateful_pointer<probe_state> self,
                                std::shared_ptr<probe_log> log) {
  self->state.log = std::move(log);
  return {
    [self](vote_atom, vote& v) { self->state.log->votes.push_back(v); },
    [self](committed_atom, scheduler::txn_id txn, uint32_t) {
      self->state.log->committed.push_back(txn);
    },
    [](admission_atom, admission&) {},
    [](plan_atom, scheduler::ratio) {},
    [](bound_atom, bound_result&) {},
    [](pods_atom, pod_refs&) {},
    [](finished_atom, const std::vector<pod_outcome>&) {},
    [](wake_atom) {},
    [](retry_atom, uint64_t) {},
    [](spec_atom, pod_group_ptr) {},
    [](idle_atom) {},
    [](park_atom) {},
    [](offer_atom, preemption_offer&) {},
    [](cleared_atom, scheduler::txn_id, uint32_t) {},
    [](evict_atom, uint32_t) {},
    [](room_atom, uint32_t, bool) {},
    [](inspect_atom) { return gang_snapshot{}; },
  };
}

pod_refs pods_of(std::initializer_list<uint64_t> ids, const char* cpu = "1") {
  pod_refs out;
  for (auto id : ids)
    out.push_back({id, std::make_shared<const scheduler::pod>(
                           make_pod("p" + std::to_string(id)).cpu(cpu).obj())});
  return out;
}

// A parked gang's new actor has the gang id of the old one, which ended idle (docs/NOTES.md "Idle
// gangs are parked"). The old actor's down message can reach a node after the new one reserved
// there: it must not abort the new actor's hold, and the node answers the new actor.
TEST(GangCommitProtocol, ANewActorOfAGangKeepsItsHoldWhenTheOldOnesEndArrivesLate) {
  actor_world w;
  w.add_node(make_node("n0").cpu("4").memory("8Gi"));
  auto old_log = std::make_shared<probe_log>();
  auto new_log = std::make_shared<probe_log>();
  auto old_actor = w.nodes[0]->home_system().spawn(probe, old_log);
  auto new_actor = w.nodes[0]->home_system().spawn(probe, new_log);
  auto& node = w.nodes[0];
  auto ticket = scheduler::ticket{};
  scheduler::txn_id first{7, 1};
  scheduler::txn_id second{7, 2};

  caf::anon_send(node, reserve_atom::value, reserve_request{first, ticket, pods_of({1}), {}},
                 old_actor);
  caf::anon_send(node, commit_atom::value, first);
  w.sched().run();
  ASSERT_EQ(old_log->committed.size(), 1u);

  caf::anon_send(node, reserve_atom::value, reserve_request{second, ticket, pods_of({2}), {}},
                 new_actor);
  w.sched().run();
  ASSERT_EQ(new_log->votes.size(), 1u);
  EXPECT_EQ(new_log->votes[0].kind, scheduler::vote_kind::reserved);

  caf::anon_send_exit(old_actor, caf::exit_reason::user_shutdown);
  w.sched().run();
  auto& ledger = *w.node_state(0).ledger;
  EXPECT_EQ(ledger.hold_count(), 1u) << "the old actor's end aborted the new actor's hold";
  caf::anon_send(node, commit_atom::value, second);
  w.sched().run();
  EXPECT_EQ(new_log->committed, std::vector<scheduler::txn_id>{second});
  EXPECT_TRUE(ledger.is_bound(1));
  EXPECT_TRUE(ledger.is_bound(2));
  caf::anon_send_exit(new_actor, caf::exit_reason::user_shutdown);
  w.sched().run();
}

TEST(GangCommitProtocol, DuplicatedAndReorderedMessagesAtANode) {
  actor_world w;
  w.add_node(make_node("n0").cpu("4").memory("8Gi"));
  auto log = std::make_shared<probe_log>();
  // Spawned in the world's system, so the node and the probe share the test coordinator.
  auto coordinator = w.nodes[0]->home_system().spawn(probe, log);
  auto& node = w.nodes[0];
  auto ticket = scheduler::ticket{};
  scheduler::txn_id t1{7, 1};
  scheduler::txn_id t2{7, 2};

  // Reserve twice (a duplicate): one hold, the same answer twice.
  caf::anon_send(node, reserve_atom::value, reserve_request{t1, ticket, pods_of({1, 2}), {}},
                 coordinator);
  caf::anon_send(node, reserve_atom::value, reserve_request{t1, ticket, pods_of({1, 2}), {}},
                 coordinator);
  w.sched().run();
  ASSERT_EQ(log->votes.size(), 2u);
  EXPECT_EQ(log->votes[0].kind, scheduler::vote_kind::reserved);
  EXPECT_EQ(log->votes[1].kind, scheduler::vote_kind::reserved);
  EXPECT_EQ(w.node_state(0).ledger->held(), res("cpu", "2", "pods", "2"));

  // Commit twice: committed once, handed to the binder once, answered once.
  caf::anon_send(node, commit_atom::value, t1);
  caf::anon_send(node, commit_atom::value, t1);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->committed(), res("cpu", "2", "pods", "2"));
  EXPECT_TRUE(w.node_state(0).ledger->held().is_zero());
  EXPECT_EQ(w.log->bound.size(), 2u);
  EXPECT_EQ(log->committed.size(), 1u);

  // An abort after the commit (reordered behind it) changes nothing.
  caf::anon_send(node, abort_atom::value, t1);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->committed(), res("cpu", "2", "pods", "2"));

  // Round 2: the abort arrives before the commit; the commit then finds nothing to commit, and a
  // late duplicate of the reserve is refused instead of resurrecting the round.
  caf::anon_send(node, reserve_atom::value, reserve_request{t2, ticket, pods_of({3}), {}},
                 coordinator);
  caf::anon_send(node, abort_atom::value, t2);
  caf::anon_send(node, abort_atom::value, t2);
  caf::anon_send(node, commit_atom::value, t2);
  caf::anon_send(node, reserve_atom::value, reserve_request{t2, ticket, pods_of({3}), {}},
                 coordinator);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->committed(), res("cpu", "2", "pods", "2"));
  EXPECT_TRUE(w.node_state(0).ledger->held().is_zero());
  EXPECT_EQ(w.node_state(0).ledger->hold_count(), 0u);
  EXPECT_EQ(log->committed.size(), 1u);
  ASSERT_EQ(log->votes.size(), 4u);
  EXPECT_EQ(log->votes[3].kind, scheduler::vote_kind::refused_conflict);
  EXPECT_EQ(w.log->bound.size(), 2u);

  // Abort and commit of a transaction the node never saw: acknowledged by doing nothing.
  caf::anon_send(node, abort_atom::value, scheduler::txn_id{99, 1});
  caf::anon_send(node, commit_atom::value, scheduler::txn_id{99, 1});
  // Release of an unknown pod, twice for a known one: its room comes back once.
  caf::anon_send(node, release_atom::value, std::vector<uint64_t>{555});
  caf::anon_send(node, release_atom::value, std::vector<uint64_t>{1});
  caf::anon_send(node, release_atom::value, std::vector<uint64_t>{1});
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->committed(), res("cpu", "1", "pods", "1"));

  // A swap twice: the pod takes over the placeholder once and reaches the binder once.
  scheduler::txn_id t3{7, 3};
  uint64_t ph = placeholder_id_bit | 1;
  caf::anon_send(node, reserve_atom::value, reserve_request{t3, ticket, pods_of({ph}, "2"), {}},
                 coordinator);
  caf::anon_send(node, commit_atom::value, t3);
  w.sched().run();
  EXPECT_EQ(w.log->bound.size(), 2u) << "a placeholder never reaches the binder";
  EXPECT_EQ(w.node_state(0).ledger->committed(), res("cpu", "3", "pods", "2"));
  scheduler::txn_id t4{7, 4};
  placeholder_swaps swaps{{ph, pods_of({4})[0]}};
  caf::anon_send(node, swap_atom::value, t4, swaps);
  caf::anon_send(node, swap_atom::value, t4, swaps);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->committed(), res("cpu", "2", "pods", "2"));
  EXPECT_TRUE(w.node_state(0).ledger->is_bound(4));
  EXPECT_FALSE(w.node_state(0).ledger->is_bound(ph));
  EXPECT_EQ(w.log->bound.size(), 3u);
  EXPECT_EQ(log->committed.size(), 3u) << "t1, t3 and t4 once each";
  caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
}

scheduler::ticket ticket_at(int64_t seconds) {
  scheduler::ticket t;
  t.creation_time = scheduler::timestamp{std::chrono::seconds{seconds}};
  return t;
}

// An older gang's reserve meets a younger gang's hold where its stale view showed room. While it
// has replans left it is refused and places itself elsewhere at once, instead of waiting for the
// younger hold to end (which, after the younger gang's synced write, is mostly a commit that
// leaves no room anyway); on its last attempt it waits, as wait-die has the older do.
TEST(GangCommitProtocol, AnOlderGangReplansElsewhereBeforeItWaitsForAYoungerHold) {
  for (int32_t max_replans : {2, 0}) {
    SCOPED_TRACE("maxReplans " + std::to_string(max_replans));
    actor_world w;
    w.ctx().config.scheduling.count_reserves_in_flight = false;
    w.ctx().config.scheduling.max_replans = max_replans;
    w.add_node(make_node("n0").cpu("2").memory("8Gi"));  // Binpack's choice for both gangs.
    w.add_node(make_node("n1").cpu("8").memory("8Gi"));
    auto base = scheduler::timestamp{std::chrono::seconds{1700000000}};
    // The younger gang is spawned first, so it plans first; the older one plans before n0 read
    // the younger's reserve.
    w.add_gang(make_gang("young", 1).task("worker", 1, res("cpu", "2")).created(base + 1s), 1);
    w.add_gang(make_gang("old", 1).task("worker", 1, res("cpu", "2")).created(base), 2);
    for (int guard = 0; guard < 20; ++guard) {
      w.sched().run();
      if (!w.sched().has_pending_timeout())
        break;
      w.sched().trigger_timeout();
    }
    EXPECT_TRUE(w.node_state(0).ledger->is_bound(100)) << "the younger gang keeps its room";
    EXPECT_TRUE(w.node_state(1).ledger->is_bound(200)) << "the older gang went to n1";
    auto waits = w.ctx().metrics->reserve_waits.value();
    if (max_replans > 0) {
      EXPECT_EQ(waits, 0u) << "a replan was left: no wait";
      EXPECT_EQ(w.gang_state(1).round, 2u) << "refused once, then placed";
    } else {
      EXPECT_EQ(waits, 1u) << "its only attempt waits for the younger hold";
    }
    EXPECT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
    EXPECT_EQ(w.gang_state(1).machine.phase(), scheduler::gang_phase::running);
    EXPECT_EQ(w.check_at_rest(), "");
  }
}

TEST(GangCommitProtocol, AWaitingCoordinatorThatDiesLeavesNoWaiterAndAHolderThatDiesWakesIt) {
  actor_world w;
  w.add_node(make_node("n0").cpu("2").memory("8Gi"));
  auto& node = w.nodes[0];
  auto& sys = node->home_system();
  auto young_log = std::make_shared<probe_log>();
  auto old_log = std::make_shared<probe_log>();
  auto young = sys.spawn(probe, young_log);
  auto old = sys.spawn(probe, old_log);
  scheduler::txn_id young_txn{2, 1};
  scheduler::txn_id old_txn{1, 1};

  // The younger gang holds the node; the older one, arriving with a stale view, waits for it.
  caf::anon_send(node, reserve_atom::value,
                 reserve_request{young_txn, ticket_at(200), pods_of({20, 21}), {}}, young);
  caf::anon_send(node, reserve_atom::value,
                 reserve_request{old_txn, ticket_at(100), pods_of({10, 11}), {}}, old);
  w.sched().run();
  ASSERT_EQ(young_log->votes.size(), 1u);
  EXPECT_TRUE(old_log->votes.empty()) << "the older gang waits: no vote yet";
  EXPECT_EQ(w.node_state(0).ledger->waiter_count(), 1u);

  // A reserve that may not wait is refused instead, and leaves nothing behind.
  auto hasty_log = std::make_shared<probe_log>();
  auto hasty = sys.spawn(probe, hasty_log);
  scheduler::txn_id hasty_txn{4, 1};
  reserve_request hasty_reserve{hasty_txn, ticket_at(150), pods_of({40}), {}};
  hasty_reserve.may_wait = false;
  caf::anon_send(node, reserve_atom::value, hasty_reserve, hasty);
  w.sched().run();
  ASSERT_EQ(hasty_log->votes.size(), 1u);
  EXPECT_EQ(hasty_log->votes[0].kind, scheduler::vote_kind::refused_conflict);
  EXPECT_EQ(w.node_state(0).ledger->waiter_count(), 1u) << "only the first older gang waits";
  caf::anon_send_exit(hasty, caf::exit_reason::user_shutdown);

  // The waiting coordinator dies: its waiting reserve goes with it.
  caf::anon_send_exit(old, caf::exit_reason::kill);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->waiter_count(), 0u);

  // A new older coordinator waits again; now the holder dies: the waiter gets the room.
  auto old2_log = std::make_shared<probe_log>();
  auto old2 = sys.spawn(probe, old2_log);
  scheduler::txn_id old2_txn{3, 1};
  caf::anon_send(node, reserve_atom::value,
                 reserve_request{old2_txn, ticket_at(50), pods_of({30, 31}), {}}, old2);
  w.sched().run();
  ASSERT_TRUE(old2_log->votes.empty());
  caf::anon_send_exit(young, caf::exit_reason::kill);
  w.sched().run();
  ASSERT_EQ(old2_log->votes.size(), 1u);
  EXPECT_EQ(old2_log->votes[0].kind, scheduler::vote_kind::reserved);
  EXPECT_EQ(w.node_state(0).ledger->held(), res("cpu", "2", "pods", "2"));
  caf::anon_send_exit(old2, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace phalanx::actors::testing
