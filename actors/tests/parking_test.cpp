// Idle gangs are parked (docs/NOTES.md "Idle gangs are parked"): the registry asks gangs it heard
// nothing of for scheduling.park_idle_gangs_after whether they are idle; an idle one (pods all
// bound or ended, nothing in flight) asks to be parked, and its actor ends; the registry starts a
// new actor from the pods when one of them changes. These tests check the gang's side on the
// deterministic actor world (when it asks, with the count of pod messages it heard), and the
// whole system on the runtime: parking, each way of waking, the queue's accounting (I4) and the
// other invariants after every step, and restarts (a gang with nothing to do comes back parked,
// one that holds placeholders does not).

#include "actors/runtime_probe.hpp"
#include "actors/sim_cluster.hpp"
#include "actors/tests/actor_world.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include "scheduler/placeholders.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_gang;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using scheduler::testing::res;

// -- The gang's side ----------------------------------------------------------------------------

TEST(Parking, AnIdleGangAsksWhenAskedWithThePodMessagesItHeard) {
  actor_world w;
  w.add_node(make_node("n0").cpu("8").memory("8Gi"));
  w.add_gang(make_gang("job", 2).task("worker", 2, res("cpu", "1")).obj(), 1); // Pods 100, 101.
  w.sched().run();
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
  EXPECT_TRUE(w.log->park_requests[1].empty()) << "nobody asked yet";

  caf::anon_send(w.gangs[0], idle_atom::value);
  w.sched().run();
  EXPECT_EQ(w.log->park_requests[1], std::vector<uint64_t>{0});

  // A pod ends (a registry message: counted), and the gang, still idle, asks with the count.
  caf::anon_send(w.gangs[0], finished_atom::value,
                 std::vector<pod_outcome>{{100, scheduler::pod_phase::succeeded, false}});
  caf::anon_send(w.gangs[0], idle_atom::value);
  w.sched().run();
  EXPECT_EQ(w.log->park_requests[1], (std::vector<uint64_t>{0, 1}));

  // A new pod makes it busy (it asks its queue for a slot): asked then, it does not ask.
  pod_refs later{{102, std::make_shared<const scheduler::pod>(
                           make_pod("job-worker-2").cpu("1").group("job").obj())}};
  caf::anon_send(w.gangs[0], pods_atom::value, later);
  caf::anon_send(w.gangs[0], idle_atom::value);
  w.sched().run();
  EXPECT_EQ(w.log->park_requests[1].size(), 2u);
  EXPECT_TRUE(w.node_state(0).ledger->is_bound(102));
  // Placed and running again: idle.
  caf::anon_send(w.gangs[0], idle_atom::value);
  w.sched().run();
  EXPECT_EQ(w.log->park_requests[1], (std::vector<uint64_t>{0, 1, 2}));
}

TEST(Parking, AGangWithAPodItCannotPlaceOrAHeldPlaceholderDoesNotAsk) {
  {
    actor_world w;
    w.add_node(make_node("n0").cpu("4").memory("8Gi"));
    // Elastic: minMember 1 of 6 one-cpu pods on 4 cpus: running, two pods wait for room.
    w.add_gang(make_gang("elastic", 1).task("worker", 6, res("cpu", "1")).obj(), 1);
    w.sched().run();
    ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
    caf::anon_send(w.gangs[0], idle_atom::value);
    w.sched().run();
    EXPECT_TRUE(w.log->park_requests[1].empty()) << "two pods are still pending";
  }
  {
    actor_world w;
    w.add_node(make_node("n0").cpu("4").memory("8Gi"));
    // A Spark driver whose minResources keeps room for two executors not created yet: the room
    // is held by placeholders, which no pod records, so the gang must stay.
    auto spark = make_gang("spark", 3).task("driver", 1, res("cpu", "1")).obj();
    spark.group.min_resources = res("cpu", "3");
  spark.group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
    spark.group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
    w.add_gang(spark, 1);
    w.sched().run();
    ASSERT_EQ(w.node_state(0).ledger->committed(), res("cpu", "3", "pods", "3"));
    caf::anon_send(w.gangs[0], idle_atom::value);
    w.sched().run();
    EXPECT_TRUE(w.log->park_requests[1].empty()) << "placeholders hold room";
  }
}

// A parked gang's new actor counts its rounds from 1 again, under the gang's id. A node that
// still remembered the old actor's finished rounds would take the new actor's first reserve for
// a late duplicate and refuse it: the node forgets a gang's rounds when a new actor of the gang
// reserves (before its reserve is decided; the old actor's down message may come later), and
// when an actor ends.
TEST(Parking, ANodeForgetsAGangsFinishedRoundsWhenItsActorChangesOrEnds) {
  actor_world w;
  w.add_node(make_node("n0").cpu("8").memory("8Gi"));
  auto job = make_gang("job", 2).task("worker", 2, res("cpu", "1")).obj();
  w.add_gang(job, 1); // Pods 100, 101.
  w.sched().run();
  ASSERT_EQ(w.gang_state(0).machine.phase(), scheduler::gang_phase::running);
  EXPECT_EQ(w.node_state(0).ledger->remembered_gang_count(), 1u) << "round 1 committed here";

  // The new actor, as the registry starts one for a woken gang: the bound pods and a new one.
  // The old actor still lives (its down message has not come).
  pod_refs pods;
  for (std::size_t i = 0; i < 2; ++i) {
    auto bound = job.pods[i];
    bound.node_name = "n0";
    bound.phase = scheduler::pod_phase::running;
    pods.push_back({100 + i, std::make_shared<const scheduler::pod>(bound)});
  }
  pods.push_back({102, std::make_shared<const scheduler::pod>(
                           make_pod("job-worker-2").cpu("1").group("job").obj())});
  auto woken = w.add_gang_actor(1, job.group, std::move(pods), gang_start::woken);
  w.sched().run();
  auto& fresh = w.gang_state(woken);
  EXPECT_EQ(fresh.machine.phase(), scheduler::gang_phase::running);
  EXPECT_TRUE(w.node_state(0).ledger->is_bound(102));
  EXPECT_EQ(fresh.round, 1u) << "its first round was taken, not refused as a late duplicate";

  // The old actor ends: its down message must not touch the new actor's memory (it is not the
  // gang's coordinator any more). The new one ends: the gang is forgotten.
  caf::anon_send_exit(w.gangs[0], caf::exit_reason::user_shutdown);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->remembered_gang_count(), 1u);
  caf::anon_send_exit(w.gangs[woken], caf::exit_reason::user_shutdown);
  w.sched().run();
  EXPECT_EQ(w.node_state(0).ledger->remembered_gang_count(), 0u);
}

// -- The whole system ---------------------------------------------------------------------------

runtime_config parking_config(uint64_t seed) {
  auto c = deterministic_config(seed);
  c.scheduling.park_idle_gangs_after = 1000ms;
  return c;
}

api::pod_object member(const std::string& name, const std::string& group,
                       const std::string& duration = "") {
  auto p = make_pod(name).cpu("1").group(group).obj();
  if (!duration.empty())
    p.meta.annotations.set(std::string(sim_duration_key), duration);
  return api::pod_object{p, {}};
}

bool parked(runtime_harness& h, const std::string& group) {
  for (const auto& g : h.rt().facts().groups)
    if (g.key == "default/" + group)
      return g.parked;
  throw std::runtime_error("no group " + group);
}

scheduler::pod_phase phase_of(runtime_harness& h, const std::string& pod) {
  return h.pod(pod).pod.phase;
}

// Lets virtual time pass until `pod` is in `phase`, for at most `limit`; true when it is.
bool reaches(runtime_harness& h, const std::string& pod, scheduler::pod_phase phase,
             std::chrono::milliseconds limit = 2000ms) {
  return h.run_until([&] { return phase_of(h, pod) == phase; }, limit, 10ms);
}

// More than the idle time and the sweep's period (1 s + 0.5 s): an idle gang is parked by then.
constexpr auto long_idle = 1600ms;

TEST(Parking, AParkedGangWakesForEachChangeOfItsPodsWithItsQueueAccountingIntact) {
  runtime_harness h{parking_config(21), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_of("train", 3)), "create the PodGroup");
  runtime_harness::must_ok(h.create(member("w-0", "train", "5s")), "w-0");
  runtime_harness::must_ok(h.create(member("w-1", "train", "60s")), "w-1");
  runtime_harness::must_ok(h.create(member("w-2", "train")), "w-2");
  ASSERT_TRUE(reaches(h, "w-2", scheduler::pod_phase::running));
  EXPECT_FALSE(parked(h, "train"));
  EXPECT_INVARIANTS(h);

  // Idle for a second: parked; the queue still counts its three cpus (I4 recounts from pods).
  h.pass(long_idle);
  EXPECT_TRUE(parked(h, "train"));
  EXPECT_INVARIANTS(h);
  EXPECT_EQ(h.group("train").status.phase, scheduler::pod_group_phase::running);

  // w-0 succeeds at 5 s: the gang wakes, the queue's count drops by one pod, and it parks again.
  ASSERT_TRUE(reaches(h, "w-0", scheduler::pod_phase::succeeded, 5000ms));
  EXPECT_FALSE(parked(h, "train"));
  EXPECT_INVARIANTS(h);
  h.pass(long_idle);
  EXPECT_TRUE(parked(h, "train"));
  EXPECT_INVARIANTS(h);

  // A new pod of the parked gang: woken, and the pod is placed.
  runtime_harness::must_ok(h.create(member("w-3", "train")), "w-3");
  EXPECT_INVARIANTS(h); // Among them: no parked gang has a pod waiting.
  ASSERT_TRUE(reaches(h, "w-3", scheduler::pod_phase::running));
  EXPECT_INVARIANTS(h);
  h.pass(long_idle);
  EXPECT_TRUE(parked(h, "train"));

  // A pod fails, another is deleted: each wakes it, and the accounting follows.
  runtime_harness::must_ok(
      h.act(api::resource_kind::pod, "default", "w-2", api::object_action::type::fail_pod),
      "fail w-2");
  h.pass(10ms);
  EXPECT_EQ(phase_of(h, "w-2"), scheduler::pod_phase::failed);
  EXPECT_FALSE(parked(h, "train"));
  EXPECT_INVARIANTS(h);
  h.pass(long_idle);
  EXPECT_TRUE(parked(h, "train"));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "w-3"), "delete w-3");
  h.pass(10ms);
  EXPECT_INVARIANTS(h);
  // Two of its three left (w-2 failed, w-3 deleted): a gang that ran, below its minimum.
  EXPECT_EQ(h.group("train").status.phase, scheduler::pod_group_phase::unknown);
  h.pass(long_idle);
  EXPECT_TRUE(parked(h, "train"));

  // A restart starts a gang with nothing to do parked (no actor); the queue counts its pods.
  h.restart();
  h.pass(10ms);
  EXPECT_TRUE(parked(h, "train"));
  EXPECT_INVARIANTS(h);
  EXPECT_EQ(phase_of(h, "w-1"), scheduler::pod_phase::running);
  EXPECT_EQ(h.group("train").status.phase, scheduler::pod_group_phase::unknown);

  // The last pod ends: woken, the gang completes and parks completed; the queue forgets it.
  runtime_harness::must_ok(
      h.act(api::resource_kind::pod, "default", "w-1", api::object_action::type::fail_pod),
      "fail w-1");
  h.pass(10ms);
  EXPECT_INVARIANTS(h);
  h.pass(long_idle);
  EXPECT_TRUE(parked(h, "train"));
  EXPECT_INVARIANTS(h);
  // Restarted completed: parked at once, still completed, and a new pod is left alone (as the
  // completed gang's actor would leave it).
  h.restart();
  h.pass(10ms);
  EXPECT_TRUE(parked(h, "train"));
  EXPECT_EQ(h.group("train").status.phase, scheduler::pod_group_phase::completed);
  EXPECT_INVARIANTS(h);

  // Every pod of a parked running gang deleted: the woken actor has no member to report usage
  // for; the queue's count still drops to nothing (it reports its whole usage: none).
  runtime_harness::must_ok(h.create(group_of("solo", 1)), "create PodGroup solo");
  runtime_harness::must_ok(h.create(member("s-0", "solo")), "s-0");
  ASSERT_TRUE(reaches(h, "s-0", scheduler::pod_phase::running));
  h.pass(long_idle);
  ASSERT_TRUE(parked(h, "solo"));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "s-0"), "delete s-0");
  h.pass(10ms);
  EXPECT_FALSE(parked(h, "solo"));
  EXPECT_INVARIANTS(h);

  // Deleting a parked group: the queue forgets it (I4), its pods wait for a group of that name.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", "train"),
                           "delete the PodGroup");
  h.pass(10ms);
  EXPECT_INVARIANTS(h);
}

// The registry's side of the race a park request runs (registry_feedback.cpp, do_park): a gang
// asks with the count of pod messages it heard; when the registry sent it another since, the
// request was overtaken and is refused, since that message may have given the gang work. So is
// a request from an actor that is no longer the gang's. The test plays the gang's requests at
// the moments it chooses, with the counts and handles the registry's snapshot shows, on a
// runtime whose own sweep does not ask within the test (10 s idle by default).
TEST(Parking, TheRegistryRefusesAParkRequestOvertakenByAPodMessageOrFromAnotherActor) {
  runtime_harness h{deterministic_config(23), {make_node("n-0").cpu("8").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_of("train", 2)), "create PodGroup train");
  runtime_harness::must_ok(h.create(member("w-0", "train", "60s")), "w-0");
  runtime_harness::must_ok(h.create(member("w-1", "train", "60s")), "w-1");
  runtime_harness::must_ok(h.create(group_of("other", 1)), "create PodGroup other");
  runtime_harness::must_ok(h.create(member("o-0", "other", "60s")), "o-0");
  ASSERT_TRUE(reaches(h, "w-1", scheduler::pod_phase::running));
  ASSERT_TRUE(reaches(h, "o-0", scheduler::pod_phase::running));

  auto registry = runtime_probe::registry(h.rt());
  auto group_fact = [&](const std::string& name) {
    for (const auto& g : runtime_probe::snapshot(h.rt()).groups)
      if (g.key == "default/" + name)
        return g;
    throw std::runtime_error("no group " + name);
  };
  auto actor_of = [&](uint64_t gang) {
    auto actors = runtime_probe::snapshot(h.rt()).gang_actors;
    auto i = actors.find(gang);
    return i == actors.end() ? gang_actor{} : caf::actor_cast<gang_actor>(i->second);
  };
  auto ask_to_park = [&](uint64_t gang, uint64_t heard, const gang_actor& from) {
    caf::anon_send(registry, park_atom::value, gang, heard, from);
    h.pass(10ms);
  };

  auto train = group_fact("train");
  ASSERT_FALSE(train.parked);
  const auto heard = train.pod_messages; // What an idle gang asked with, right now.
  auto train_actor = actor_of(train.gang);
  ASSERT_TRUE(train_actor);

  // A pod of the gang fails before its request arrives: the registry tells the actor (one more
  // pod message), and the request, sent before the actor heard it, is refused.
  runtime_harness::must_ok(
      h.act(api::resource_kind::pod, "default", "w-0", api::object_action::type::fail_pod),
      "fail w-0");
  h.pass(10ms);
  ASSERT_EQ(phase_of(h, "w-0"), scheduler::pod_phase::failed);
  ASSERT_GT(group_fact("train").pod_messages, heard);
  ask_to_park(train.gang, heard, train_actor);
  EXPECT_FALSE(parked(h, "train"));
  EXPECT_EQ(actor_of(train.gang), train_actor) << "the refused gang keeps its actor";
  EXPECT_INVARIANTS(h);

  // The current count from another gang's actor (as from an actor the gang had before): refused.
  const auto now_heard = group_fact("train").pod_messages;
  auto other = group_fact("other");
  ask_to_park(train.gang, now_heard, actor_of(other.gang));
  EXPECT_FALSE(parked(h, "train"));
  EXPECT_FALSE(parked(h, "other"));
  EXPECT_INVARIANTS(h);

  // The current count from its own actor: granted; the actor ends, the queue keeps its count.
  ask_to_park(train.gang, now_heard, train_actor);
  EXPECT_TRUE(parked(h, "train"));
  EXPECT_FALSE(actor_of(train.gang));
  EXPECT_INVARIANTS(h);
  // The same request again (a duplicate) changes nothing; a change of its pods wakes it.
  ask_to_park(train.gang, now_heard, train_actor);
  EXPECT_TRUE(parked(h, "train"));
  runtime_harness::must_ok(
      h.act(api::resource_kind::pod, "default", "w-1", api::object_action::type::fail_pod),
      "fail w-1");
  h.pass(10ms);
  EXPECT_FALSE(parked(h, "train"));
  EXPECT_INVARIANTS(h);
}

// A restarted gang short of its minimum whose minResources sizes the missing members holds
// placeholders for them at once: it has work to do, so it is not restored parked, and once its
// placeholders are held it is not parked either (no pod records their room).
TEST(Parking, ARestartedGangThatHoldsPlaceholdersIsNotParked) {
  runtime_harness h{parking_config(23), {make_node("n-0").cpu("4").memory("16Gi")}};
  auto spark = group_of("spark", 3);
  spark.group.min_resources = res("cpu", "3");
  spark.group.meta.annotations.set(scheduler::reserve_missing_members_key, "true");
  runtime_harness::must_ok(h.create(spark), "create the PodGroup");
  runtime_harness::must_ok(h.create(member("driver", "spark")), "driver");
  ASSERT_TRUE(reaches(h, "driver", scheduler::pod_phase::running));
  auto committed = [&] {
    for (const auto& n : h.rt().facts().nodes)
      return n.committed;
    return scheduler::resources{};
  };
  EXPECT_EQ(committed(), res("cpu", "3", "pods", "3")) << "the driver and two placeholders";
  h.pass(3000ms);
  EXPECT_FALSE(parked(h, "spark"));

  h.restart();
  h.pass(10ms);
  EXPECT_FALSE(parked(h, "spark"));
  EXPECT_EQ(committed(), res("cpu", "3", "pods", "3")) << "placeholders held again";
  h.pass(3000ms);
  EXPECT_FALSE(parked(h, "spark"));
  EXPECT_INVARIANTS(h);
}

// Many gangs parked and woken at random while nodes stay full: the invariants hold at every
// step, and every gang's pods end.
TEST(Parking, ManyGangsParkedAndWokenKeepEveryInvariant) {
  runtime_harness h{
      parking_config(22),
      {make_node("n-0").cpu("8").memory("16Gi"), make_node("n-1").cpu("8").memory("16Gi")}};
  std::vector<api::object> objects;
  for (int g = 0; g < 12; ++g) {
    auto name = "g" + std::to_string(g);
    objects.push_back(group_of(name, 2));
    for (int i = 0; i < 3; ++i)
      objects.push_back(
          member(name + "-" + std::to_string(i), name, std::to_string(1 + (g * 3 + i) % 7) + "s"));
  }
  h.create_all(std::move(objects));
  int parked_seen = 0;
  for (int step = 0; step < 120; ++step) {
    h.pass(250ms);
    auto report = h.invariants(/*at_rest=*/true);
    ASSERT_TRUE(report.ok()) << "at " << step * 250 << " ms: " << report.to_string();
    for (const auto& g : h.rt().facts().groups)
      parked_seen += g.parked ? 1 : 0;
  }
  EXPECT_GT(parked_seen, 0) << "gangs were parked along the way";
  for (const auto& p : h.pods())
    EXPECT_EQ(p.pod.phase, scheduler::pod_phase::succeeded) << p.pod.meta.name;
}

} // namespace
} // namespace phalanx::actors::testing
