// Priority preemption within a queue on the whole runtime under CAF's test coordinator: a gang
// that cannot be placed evicts pods of lower-priority gangs of its own queue (Volcano's `preempt`
// action), the victims' room is held for it alone until they are gone, no victim gang is left
// below its minMember unless all of it goes (I7), and a preemptor that ends first gives the room
// back. Each scenario runs under several seeds, which order the scheduler's messages
// differently; the invariants I1-I4 are checked at every end.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using namespace std::chrono_literals;

runtime_config preempting_config(uint64_t seed, bool preemption = true) {
  auto config = deterministic_config(seed);
  config.scheduling.preemption = preemption;
  config.scheduling.priority_classes["high"] = 1000;
  config.scheduling.priority_classes["low"] = 10;
  return config;
}

// A PriorityClass "high-never": as high as "high", with preemptionPolicy Never.
void create_never_class(runtime_harness& h) {
  api::priority_class_object c;
  c.priority_class.meta.name = "high-never";
  c.priority_class.value = 1000;
  c.priority_class.preemption = scheduler::preemption_policy::never;
  runtime_harness::must_ok(h.create(c), "high-never");
}

// A PodGroup of `min_member` in `queue`, with a priority class ("" none), and its pods of
// `cpu` each, "<name>-<i>".
void gang(runtime_harness& h, const std::string& name, int32_t min_member, int32_t pods,
          const std::string& cpu, const std::string& priority_class,
          const std::string& queue = "default") {
  auto g = group_of(name, min_member);
  g.group.priority_class_name = priority_class;
  g.group.queue = queue;
  runtime_harness::must_ok(h.create(g), name);
  for (int32_t i = 0; i < pods; ++i)
    runtime_harness::must_ok(
        h.create(api::pod_object{
            make_pod(name + "-" + std::to_string(i)).cpu(cpu).group(name), {}}),
        name + " pod");
}

bool exists(runtime_harness& h, const std::string& pod) {
  return h.get(api::resource_kind::pod, "default", pod).ok();
}

bool bound(runtime_harness& h, const std::string& pod) {
  auto r = h.get(api::resource_kind::pod, "default", pod);
  return r && std::get<api::pod_object>(*r).pod.is_bound();
}

int count_bound(runtime_harness& h, const std::string& prefix, int pods) {
  int n = 0;
  for (int i = 0; i < pods; ++i)
    n += bound(h, prefix + "-" + std::to_string(i)) ? 1 : 0;
  return n;
}

int count_existing(runtime_harness& h, const std::string& prefix, int pods) {
  int n = 0;
  for (int i = 0; i < pods; ++i)
    n += exists(h, prefix + "-" + std::to_string(i)) ? 1 : 0;
  return n;
}

bool has_event(runtime_harness& h, api::resource_kind kind, const std::string& name,
               const std::string& reason) {
  for (const auto& e : h.events(kind, name))
    if (e.reason == reason)
      return true;
  return false;
}

std::string pending_message(runtime_harness& h, const std::string& group) {
  for (const auto& c : h.group(group).status.conditions)
    if (c.type == "Unschedulable" && c.status == "True")
      return c.message;
  return {};
}

// Nothing is held or claimed once everything settled: no preemptor keeps room it does not use.
void expect_nothing_held(runtime_harness& h) {
  auto facts = h.rt().facts();
  for (const auto& n : facts.nodes) {
    EXPECT_TRUE(n.held.is_zero()) << n.name << " holds " << n.held.to_string();
    EXPECT_TRUE(n.claimed.is_zero()) << n.name << " claims " << n.claimed.to_string();
  }
}

// Two low-priority pods of a gang that needs one fill the node; a high-priority gang of one
// evicts exactly one of them (the gang keeps its minimum), and is bound where it was.
TEST(Preemption, AHighPriorityGangEvictsWhatItNeedsAndNoMore) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{preempting_config(seed), {make_node("n-0").cpu("4").memory("8Gi")}};
    gang(h, "low", 1, 2, "2", "low");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "low", 2) == 2; }, 5000ms, 10ms));
    gang(h, "high", 1, 1, "2", "high");
    ASSERT_TRUE(h.run_until([&] { return bound(h, "high-0"); }, 5000ms, 10ms))
        << pending_message(h, "high");
    EXPECT_EQ(count_existing(h, "low", 2), 1);
    EXPECT_EQ(count_bound(h, "low", 2), 1);
    EXPECT_TRUE(has_event(h, api::resource_kind::pod_group, "low", "Preempted"));
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// The gang rule holds per role too (I7 with minTaskMember): the victim gang has one pod beyond
// its minMember, but that pod is its only ps, which its role minimum needs. Taking the ps alone
// would make the fewest victims; the victim gang goes whole instead.
TEST(Preemption, AVictimGangKeepsEachRolesMinimumOrGoesWhole) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{preempting_config(seed), {make_node("n-0").cpu("4").memory("8Gi")}};
    auto g = group_of("low", 2);
    g.group.priority_class_name = "low";
    g.group.min_task_member = {{"ps", 1}, {"worker", 1}};
    runtime_harness::must_ok(h.create(g), "low");
    for (const auto& [name, role, cpu] : {std::tuple{"low-ps-0", "ps", "2"},
                                          std::tuple{"low-worker-0", "worker", "1"},
                                          std::tuple{"low-worker-1", "worker", "1"}})
      runtime_harness::must_ok(
          h.create(api::pod_object{make_pod(name).cpu(cpu).group("low").role(role), {}}), name);
    ASSERT_TRUE(h.run_until([&] { return bound(h, "low-ps-0") && bound(h, "low-worker-1"); },
                            5000ms, 10ms));
    gang(h, "high", 1, 1, "2", "high");
    ASSERT_TRUE(h.run_until([&] { return bound(h, "high-0"); }, 5000ms, 10ms))
        << pending_message(h, "high");
    EXPECT_FALSE(exists(h, "low-ps-0"));
    EXPECT_FALSE(exists(h, "low-worker-0"));
    EXPECT_FALSE(exists(h, "low-worker-1"));
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// A gang at its minimum is evicted whole or not at all (I7): the preemptor needs 2 of 4 cpu and
// the victim gang, minMember 2, has 2 pods of 2 cpu: both go.
TEST(Preemption, AGangAtItsMinimumIsEvictedWhole) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{preempting_config(seed), {make_node("n-0").cpu("4").memory("8Gi")}};
    gang(h, "low", 2, 2, "2", "low");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "low", 2) == 2; }, 5000ms, 10ms));
    gang(h, "high", 1, 1, "2", "high");
    ASSERT_TRUE(h.run_until([&] { return bound(h, "high-0"); }, 5000ms, 10ms))
        << pending_message(h, "high");
    EXPECT_EQ(count_existing(h, "low", 2), 0);
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// The lowest priority goes first: a middle and a low gang each hold half the node.
TEST(Preemption, TheLowestPriorityIsEvictedFirst) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto config = preempting_config(seed);
    config.scheduling.priority_classes["middle"] = 500;
    runtime_harness h{config, {make_node("n-0").cpu("4").memory("8Gi")}};
    gang(h, "middle", 1, 1, "2", "middle");
    gang(h, "low", 1, 1, "2", "low");
    ASSERT_TRUE(h.run_until([&] { return bound(h, "middle-0") && bound(h, "low-0"); }, 5000ms,
                            10ms));
    gang(h, "high", 1, 1, "2", "high");
    ASSERT_TRUE(h.run_until([&] { return bound(h, "high-0"); }, 5000ms, 10ms))
        << pending_message(h, "high");
    EXPECT_TRUE(bound(h, "middle-0"));
    EXPECT_FALSE(exists(h, "low-0"));
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
  }
}

// Never equal priority, never another queue's pods, never with preemption off (Volcano's default
// actions leave `preempt` out): the gang stays pending and says why.
TEST(Preemption, NotForEqualPriorityNorAnotherQueueNorWhenOffNorForANeverPolicy) {
  struct scenario {
    const char* name;
    bool preemption;
    const char* victim_class;
    const char* victim_queue;
    const char* preemptor_class = "high";
  };
  for (const auto& s : {scenario{"equal priority", true, "high", "default"},
                        scenario{"another queue", true, "low", "other"},
                        scenario{"preemption off", false, "low", "default"},
                        scenario{"preemptionPolicy Never", true, "low", "default", "high-never"}}) {
    SCOPED_TRACE(s.name);
    runtime_harness h{preempting_config(1, s.preemption),
                      {make_node("n-0").cpu("4").memory("8Gi")}};
    scheduler::queue other;
    other.meta.name = "other";
    runtime_harness::must_ok(h.create(api::queue_object{other, {}}), "queue");
    create_never_class(h);
    gang(h, "victim", 1, 2, "2", s.victim_class, s.victim_queue);
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "victim", 2) == 2; }, 5000ms, 10ms));
    gang(h, "high", 1, 1, "2", s.preemptor_class);
    ASSERT_TRUE(h.run_until([&] { return !pending_message(h, "high").empty(); }, 5000ms, 10ms));
    h.pass(3000ms);
    EXPECT_FALSE(bound(h, "high-0"));
    EXPECT_EQ(h.group("high").group.priority, 1000);
    if (std::string(s.preemptor_class) == "high-never") {
      EXPECT_NE(pending_message(h, "high").find("no preemption: its PriorityClass high-never has "
                                                "preemptionPolicy Never"),
                std::string::npos)
          << pending_message(h, "high");
    }
    EXPECT_EQ(count_bound(h, "victim", 2), 2);
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// No preemption loop: the evicted gang's pods, created again, wait; they never evict the gang
// that evicted theirs (lower priority), however long they wait.
TEST(Preemption, AnEvictedGangDoesNotEvictBack) {
  runtime_harness h{preempting_config(3), {make_node("n-0").cpu("4").memory("8Gi")}};
  gang(h, "low", 2, 2, "2", "low");
  ASSERT_TRUE(h.run_until([&] { return count_bound(h, "low", 2) == 2; }, 5000ms, 10ms));
  gang(h, "high", 1, 2, "2", "high");
  ASSERT_TRUE(h.run_until([&] { return count_bound(h, "high", 2) == 2; }, 5000ms, 10ms))
      << pending_message(h, "high");
  // The low gang's controller makes its pods again.
  for (int i = 0; i < 2; ++i)
    runtime_harness::must_ok(
        h.create(api::pod_object{make_pod("low-" + std::to_string(i)).cpu("2").group("low"), {}}),
        "low pod again");
  h.pass(10'000ms);
  EXPECT_EQ(count_bound(h, "high", 2), 2);
  EXPECT_EQ(count_bound(h, "low", 2), 0);
  EXPECT_FALSE(pending_message(h, "low").empty());
  EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
  expect_nothing_held(h);
}

// Victims are chosen across nodes for a gang of several pods, each node's room for its pods;
// evicting all four pods of a gang that needs one is the whole gang, which the rule allows.
TEST(Preemption, AGangOfSeveralPodsPreemptsOnSeveralNodes) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{preempting_config(seed), {make_node("n-0").cpu("4").memory("8Gi"),
                                                make_node("n-1").cpu("4").memory("8Gi")}};
    gang(h, "low", 1, 4, "2", "low");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "low", 4) == 4; }, 5000ms, 10ms));
    // 3 cpu per pod: each node must lose both its low pods, and the gang needs two nodes.
    gang(h, "high", 2, 2, "3", "high");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "high", 2) == 2; }, 5000ms, 10ms))
        << pending_message(h, "high");
    EXPECT_NE(h.pod("high-0").pod.node_name, h.pod("high-1").pod.node_name);
    EXPECT_EQ(count_existing(h, "low", 4), 0);
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// A preemptor deleted while its victims go: the room they free goes back to everyone, nothing
// stays held or claimed, and another gang takes it.
TEST(Preemption, APreemptorThatEndsGivesTheRoomBack) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{preempting_config(seed), {make_node("n-0").cpu("4").memory("8Gi")}};
    gang(h, "low", 1, 2, "2", "low");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "low", 2) == 2; }, 5000ms, 10ms));
    gang(h, "high", 1, 1, "2", "high");
    // Deleted as soon as it preempts: its actor ends, and the nodes drop its holds and claims.
    ASSERT_TRUE(h.run_until([&] { return count_existing(h, "low", 2) < 2 || bound(h, "high-0"); },
                            5000ms, 1ms));
    runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", "high"), "delete");
    runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "high-0"), "delete");
    gang(h, "later", 1, 1, "2", "");
    ASSERT_TRUE(h.run_until([&] { return bound(h, "later-0"); }, 5000ms, 10ms))
        << pending_message(h, "later");
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}


// A restart in the middle of a preemption: holds and claims are not persisted, the victims'
// deletions that were acknowledged stay done, and the preemptor, restored pending, is placed in
// the room they freed. At every cut the invariants hold and nothing is half done.
TEST(Preemption, ARestartInTheMiddleLosesNothingAndLeavesNothingHeld) {
  for (int cut_ms : {0, 1, 2, 5, 20}) {
    SCOPED_TRACE("restart after " + std::to_string(cut_ms) + " ms");
    runtime_harness h{preempting_config(7), {make_node("n-0").cpu("4").memory("8Gi")}};
    gang(h, "low", 1, 2, "2", "low");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "low", 2) == 2; }, 5000ms, 10ms));
    gang(h, "high", 1, 1, "2", "high");
    h.pass(std::chrono::milliseconds(cut_ms));
    h.restart();
    ASSERT_TRUE(h.run_until([&] { return bound(h, "high-0"); }, 5000ms, 10ms))
        << pending_message(h, "high");
    EXPECT_GE(count_bound(h, "low", 2), 1);  // The gang rule: one victim was enough.
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// On real threads: 20 nodes filled by low-priority gangs of 4 (minMember 2), then 15 high-priority
// gangs of 2-4 pods arrive together and preempt while each other's rounds, evictions and
// commits interleave. Every high gang runs; I1-I4 hold at every check and at rest; no low gang
// is left below its minMember unless all of it went (I7); nothing stays held or claimed.
TEST(Preemption, ManyPreemptorsAtOnceOnRealThreads) {
  runtime_config config;
  config.seed = 5;
  config.threads = 2;
  config.scheduling.preemption = true;
  config.scheduling.priority_classes["high"] = 1000;
  config.scheduling.priority_classes["low"] = 10;
  std::vector<scheduler::node> nodes;
  for (int i = 0; i < 20; ++i)
    nodes.push_back(make_node("n-" + std::to_string(i)).cpu("8").memory("32Gi"));
  runtime_harness h{config, nodes};
  for (int g = 0; g < 20; ++g)
    gang(h, "low" + std::to_string(g), 2, 4, "2", "low");
  ASSERT_TRUE(h.run_until(
      [&] {
        for (int g = 0; g < 20; ++g)
          if (count_bound(h, "low" + std::to_string(g), 4) != 4)
            return false;
        return true;
      },
      30'000ms));
  for (int g = 0; g < 15; ++g)
    gang(h, "high" + std::to_string(g), 2 + g % 3, 2 + g % 3, "2", "high");
  for (int check = 0; check < 20; ++check) {
    auto live = h.invariants(false);
    ASSERT_TRUE(live.ok()) << live.to_string();
    h.pass(50ms);
  }
  ASSERT_TRUE(h.run_until(
      [&] {
        for (int g = 0; g < 15; ++g)
          if (count_bound(h, "high" + std::to_string(g), 2 + g % 3) != 2 + g % 3)
            return false;
        return true;
      },
      60'000ms))
      << pending_message(h, "high0");
  h.pass(500ms);
  for (int g = 0; g < 20; ++g) {
    const auto name = "low" + std::to_string(g);
    const int left = count_bound(h, name, 4);
    EXPECT_TRUE(left == 0 || left >= 2) << name << " kept " << left;
  }
  EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
  expect_nothing_held(h);
}

// -- Reclaim across queues (Volcano's `reclaim` action)

runtime_config reclaiming_config(uint64_t seed) {
  auto config = deterministic_config(seed);
  config.scheduling.reclaim = true;
  return config;
}

void make_queue(runtime_harness& h, const std::string& name, bool reclaimable = true,
                const std::string& guarantee_cpu = "") {
  scheduler::queue q;
  q.meta.name = name;
  q.reclaimable = reclaimable;
  if (!guarantee_cpu.empty())
    q.guarantee = scheduler::testing::res("cpu", guarantee_cpu);
  runtime_harness::must_ok(h.create(api::queue_object{q, {}}), "queue " + name);
}

// Queue a took the whole 8-cpu node while b had nothing to run. b's gang of two 2-cpu pods
// brings b's deserved share to half: a, above its share, gives up two pods (down to its share,
// no further), and b's gang is placed in their room.
TEST(Reclaim, AQueueBelowItsShareTakesRoomFromOneAbove) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{reclaiming_config(seed), {make_node("n-0").cpu("8").memory("16Gi")}};
    make_queue(h, "a");
    make_queue(h, "b");
    gang(h, "greedy", 1, 4, "2", "", "a");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "greedy", 4) == 4; }, 5000ms, 10ms));
    gang(h, "fair", 2, 2, "2", "", "b");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "fair", 2) == 2; }, 10'000ms, 10ms))
        << pending_message(h, "fair");
    EXPECT_EQ(count_existing(h, "greedy", 4), 2);
    EXPECT_TRUE(has_event(h, api::resource_kind::pod_group, "greedy", "Reclaimed"));
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// Nothing is reclaimed from a queue marked `reclaimable: false`, nor below a queue's guarantee,
// nor with reclaim off: b's gang waits and says why.
TEST(Reclaim, NotFromAnUnreclaimableQueueNorBelowItsGuaranteeNorWhenOff) {
  struct scenario {
    const char* name;
    bool reclaim;
    bool reclaimable;
    const char* guarantee;
  };
  for (const auto& s : {scenario{"reclaimable: false", true, false, ""},
                        scenario{"guarantee", true, true, "8"},
                        scenario{"reclaim off", false, true, ""}}) {
    SCOPED_TRACE(s.name);
    auto config = reclaiming_config(1);
    config.scheduling.reclaim = s.reclaim;
    runtime_harness h{config, {make_node("n-0").cpu("8").memory("16Gi")}};
    make_queue(h, "a", s.reclaimable, s.guarantee);
    make_queue(h, "b");
    gang(h, "greedy", 1, 4, "2", "", "a");
    ASSERT_TRUE(h.run_until([&] { return count_bound(h, "greedy", 4) == 4; }, 5000ms, 10ms));
    gang(h, "fair", 2, 2, "2", "", "b");
    ASSERT_TRUE(h.run_until([&] { return !pending_message(h, "fair").empty(); }, 5000ms, 10ms));
    h.pass(5000ms);
    EXPECT_EQ(count_bound(h, "fair", 2), 0);
    EXPECT_EQ(count_bound(h, "greedy", 4), 4);
    EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
    expect_nothing_held(h);
  }
}

// No reclaim loop: a new gang of a, which is at its share, waits; it does not take the room back
// from b, which is within its own.
TEST(Reclaim, AReclaimedQueueDoesNotReclaimBack) {
  runtime_harness h{reclaiming_config(2), {make_node("n-0").cpu("8").memory("16Gi")}};
  make_queue(h, "a");
  make_queue(h, "b");
  gang(h, "greedy", 1, 4, "2", "", "a");
  ASSERT_TRUE(h.run_until([&] { return count_bound(h, "greedy", 4) == 4; }, 5000ms, 10ms));
  gang(h, "fair", 2, 2, "2", "", "b");
  ASSERT_TRUE(h.run_until([&] { return count_bound(h, "fair", 2) == 2; }, 10'000ms, 10ms))
      << pending_message(h, "fair");
  gang(h, "again", 1, 1, "2", "", "a");
  ASSERT_TRUE(h.run_until([&] { return !pending_message(h, "again").empty(); }, 5000ms, 10ms));
  h.pass(10'000ms);
  EXPECT_EQ(count_bound(h, "fair", 2), 2);
  EXPECT_EQ(count_bound(h, "greedy", 4), 2);
  EXPECT_FALSE(bound(h, "again-0"));
  // a holds its deserved share: the gang waits, told either that the queue is overused (when
  // its slot comes after the share was computed with its demand) or that a reclaim would take
  // the queue past its share (when its slot came first).
  EXPECT_NE(pending_message(h, "again").find("deserved share"), std::string::npos)
      << pending_message(h, "again");
  EXPECT_EQ(pending_message(h, "again").find("4611686018427387903"), std::string::npos)
      << pending_message(h, "again");
  EXPECT_TRUE(h.invariants(true).ok()) << h.invariants(true).to_string();
  expect_nothing_held(h);
}

} // namespace
} // namespace phalanx::actors::testing
