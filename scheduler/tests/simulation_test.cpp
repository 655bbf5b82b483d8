#include "scheduler/simulation.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include "scheduler/fair_share.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;
using namespace std::chrono_literals;

std::string violations_of(const sim_result& r) {
  std::string out;
  for (const auto& v : r.violations)
    out += v + "\n";
  return out;
}

// A job of `pods` identical pods of `cpu`, each running `run_time`, minMember `min`.
sim_job job(std::string name, int32_t pods, std::string_view cpu, duration run_time,
            duration arrival = 0s, int32_t min = -1, std::string queue = "default") {
  sim_job j;
  if (min < 0)
    min = pods;
  resources per_pod = res("cpu", cpu);
  j.group = make_gang(name, min).queue(queue).min_resources(per_pod.times(min)).obj().group;
  for (int32_t i = 0; i < pods; ++i)
    j.pods.push_back(
        {make_pod(name + "-" + std::to_string(i)).group(name).cpu(cpu).obj(), run_time, {}, {}});
  j.arrival = arrival;
  return j;
}

cluster_snapshot cpus(int nodes, std::string_view per_node) {
  cluster_snapshot c;
  for (int n = 0; n < nodes; ++n)
    c.add_node(make_node("node-" + std::to_string(n)).cpu(per_node).memory("64Gi"));
  return c;
}

sim_result run(const cluster_snapshot& cluster, const std::vector<sim_job>& jobs,
               sim_config config) {
  auto r = simulate(cluster, jobs, config);
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  if (!r.ok())
    return {};
  EXPECT_TRUE(r->violations.empty()) << violations_of(*r);
  return std::move(r).value();
}

sim_config with(sim_policy policy) {
  sim_config c;
  c.policy = policy;
  return c;
}

const sim_job_result& find(const sim_result& r, std::string_view name) {
  for (const auto& j : r.jobs)
    if (j.name == name)
      return j;
  ADD_FAILURE() << "no job " << name;
  return r.jobs.front();
}

TEST(Simulation, EnumsHaveNames) {
  for (int i = 0; i <= int(sim_policy_last); ++i)
    EXPECT_NE(to_string(sim_policy(i)), "unknown") << i;
  for (int i = 0; i <= int(sim_job_phase_last); ++i)
    EXPECT_NE(to_string(sim_job_phase(i)), "Unknown") << i;
  EXPECT_EQ(to_string(sim_policy::pod_by_pod), "pod-by-pod");
  EXPECT_EQ(to_string(sim_policy::volcano_like), "volcano-like");
  EXPECT_EQ(to_string(sim_job_phase::deadlocked), "Deadlocked");
}

TEST(Simulation, OneJobTimeline) {
  for (auto policy : {sim_policy::pod_by_pod, sim_policy::gang_fifo, sim_policy::volcano_like,
                      sim_policy::phalanx}) {
    auto config = with(policy);
    config.pod_start_delay = 2s;
    auto r = run(cpus(1, "4"), {job("solo", 2, "1", 10s, 5s)}, config);
    ASSERT_EQ(r.jobs.size(), 1u);
    const auto& j = r.jobs[0];
    EXPECT_EQ(j.phase, sim_job_phase::completed) << to_string(policy);
    EXPECT_EQ(j.started_at, 7s);
    EXPECT_EQ(j.time_to_start, 2s);
    EXPECT_EQ(j.completed_at, 17s);
    EXPECT_EQ(j.completion_time, 12s);
    EXPECT_EQ(j.succeeded, 2);
    EXPECT_EQ(j.running, 0);
    EXPECT_EQ(j.placed, 2);
    EXPECT_EQ(r.summary.makespan, 17s);
    EXPECT_EQ(r.summary.mean_jct, 12s);
    EXPECT_EQ(r.summary.mean_queueing_delay, 2s);
    // 2 of 4 cpus from 5 s to 17 s, over 17 s: 24 / 68.
    EXPECT_EQ(r.summary.cpu_utilization_ppm, 1'000'000 * 24 / 68);
    EXPECT_EQ(r.summary.gpu_utilization_ppm, 0);
    ASSERT_EQ(r.utilization.size(), 3u);
    EXPECT_EQ(r.utilization[1].at, 5s);
    EXPECT_EQ(r.utilization[1].cpu_milli, 2000);
    EXPECT_EQ(r.utilization[2].at, 17s);
    EXPECT_EQ(r.utilization[2].cpu_milli, 0);
    EXPECT_GT(r.events_processed, 0);
  }
}

// A 4-cpu cluster; "first" holds 2 cpus from 0 to 10 s; "big" (4 cpus) arrives at 1 s, "small"
// (1 cpu) at 2 s.
std::vector<sim_job> head_of_line_jobs() {
  return {job("first", 2, "1", 10s, 0s), job("big", 4, "1", 10s, 1s),
          job("small", 1, "1", 3s, 2s)};
}

TEST(Simulation, GangFifoBlocksBehindTheHead) {
  auto r = run(cpus(1, "4"), head_of_line_jobs(), with(sim_policy::gang_fifo));
  EXPECT_EQ(find(r, "big").started_at, 10s);
  // small fits at 2 s but waits for big, then for big's cpus.
  EXPECT_EQ(find(r, "small").started_at, 20s);
}

TEST(Simulation, PhalanxBackfillsUntilTheGangStarves) {
  // Bound 5 min: big has not starved, small starts at once on the 2 free cpus.
  auto r = run(cpus(1, "4"), head_of_line_jobs(), with(sim_policy::phalanx));
  EXPECT_EQ(find(r, "small").started_at, 2s);
  EXPECT_EQ(find(r, "big").started_at, 10s);  // Not delayed: small ended at 5 s.
  EXPECT_FALSE(find(r, "big").reserved_at);

  // Bound 1 s, and the default gate: 2 cpus used + big's 4 exceed 1.2 x 4, so the gate refuses
  // big until 10 s. A refusal of the gate is not a failed placement: big does not starve, small
  // passes it.
  auto strict = with(sim_policy::phalanx);
  strict.starvation_bound = 1s;
  auto gated = run(cpus(1, "4"), head_of_line_jobs(), strict);
  EXPECT_EQ(find(gated, "small").started_at, 2s);
  EXPECT_FALSE(find(gated, "big").reserved_at);

  // A gate that admits big: blocked since 1 s, it starves at 2 s and reserves the node, which
  // keeps its 2 free cpus from small; small waits for big.
  strict.gate.overcommit_factor = {10, 1};
  auto s = run(cpus(1, "4"), head_of_line_jobs(), strict);
  EXPECT_EQ(find(s, "big").reserved_at, 2s);
  EXPECT_EQ(find(s, "big").reserved_nodes, std::vector<std::string>{"node-0"});
  EXPECT_EQ(find(s, "big").started_at, 10s);
  EXPECT_EQ(find(s, "small").started_at, 20s);
  // small, blocked since 2 s, starves too: it finds the node taken until big starts at 10 s.
  EXPECT_EQ(find(s, "small").reserved_at, 10s);
  EXPECT_EQ(s.summary.reserved, 2);

  // Bound 0 turns reservations off: the policy is then volcano_like, and small passes big.
  for (auto config : {with(sim_policy::volcano_like), with(sim_policy::phalanx)}) {
    if (config.policy == sim_policy::phalanx)
      config.starvation_bound = 0s;
    auto v = run(cpus(1, "4"), head_of_line_jobs(), config);
    EXPECT_EQ(find(v, "small").started_at, 2s);
    EXPECT_EQ(find(v, "big").started_at, 10s);
    EXPECT_EQ(v.summary.reserved, 0);
  }
}

// A 4-cpu node; "hog" jobs of 2 cpus arrive so that one always runs; "wide" (4 cpus, arrived at
// 1 s) fits only on an empty node, so every younger hog that fits backfills past it.
std::vector<sim_job> starving_jobs() {
  std::vector<sim_job> jobs = {job("hog-0", 2, "1", 20s, 0s), job("wide", 4, "1", 5s, 1s)};
  const duration arrivals[] = {10s, 15s, 25s, 35s, 45s};
  for (int i = 0; i < 5; ++i)
    jobs.push_back(job("hog-" + std::to_string(i + 1), 2, "1", 20s, arrivals[i]));
  return jobs;
}

TEST(Simulation, AStarvingGangReservesItsNode) {
  auto config = with(sim_policy::phalanx);
  config.gate.overcommit_factor = {10, 1};  // Let the gate admit everything; test the allocator.
  config.starvation_bound = 30s;
  auto r = run(cpus(1, "4"), starving_jobs(), config);
  // hog-1 10-30, hog-2 20-40, hog-3 30-50 backfill while wide has been blocked < 30 s. At 31 s
  // wide starves and reserves the node: at 40 s it keeps the 2 free cpus from hog-4 (arrived
  // 35 s); at 50 s wide starts.
  EXPECT_EQ(find(r, "hog-2").started_at, 20s);
  EXPECT_EQ(find(r, "hog-3").started_at, 30s);
  EXPECT_EQ(find(r, "wide").reserved_at, 31s);
  EXPECT_EQ(find(r, "wide").started_at, 50s);
  EXPECT_EQ(find(r, "hog-4").started_at, 55s);
  EXPECT_EQ(r.summary.completed, 7);

  // Stopped while it waits, it says what it reserves.
  config.end_time = 45s;
  auto stopped = run(cpus(1, "4"), starving_jobs(), config);
  EXPECT_EQ(find(stopped, "wide").phase, sim_job_phase::pending);
  EXPECT_NE(find(stopped, "wide").reason.find("reserves 1 node(s) for 4 pod(s): node-0"),
            std::string::npos)
      << find(stopped, "wide").reason;
  config.end_time.reset();

  // Without the bound mattering (5 min), hog-4 and hog-5 backfill too and wide waits until 70 s;
  // the wake-up at its bound (301 s) finds it started and does not move the clock.
  config.starvation_bound = 5min;
  auto unbounded = run(cpus(1, "4"), starving_jobs(), config);
  EXPECT_EQ(find(unbounded, "hog-4").started_at, 40s);
  EXPECT_EQ(find(unbounded, "wide").started_at, 70s);
  EXPECT_FALSE(find(unbounded, "wide").reserved_at);
  EXPECT_EQ(unbounded.summary.makespan, 75s);  // wide's end.
}

// At most one gang reserves a node: a starving gang that finds every usable node reserved
// reserves nothing and tries again at its next blocked pass. The bound counts from the first pass
// that could not place a gang, and a reservation ends when its gang starts.
TEST(Simulation, AGangFindingEveryNodeReservedTriesAgain) {
  auto config = with(sim_policy::phalanx);
  config.gate.overcommit_factor = {10, 1};
  config.starvation_bound = 30s;
  // 4 cpus. hog 0-100 s on 2; "first" (3) is blocked from 1 s and reserves the node at 31 s;
  // "second" (4), blocked from 40 s, starves at 70 s but finds the node taken. At 100 s first
  // starts (100-200 s on 3 cpus), its reservation ends, and second, still blocked, reserves the
  // node: "small" (1 cpu, 110 s) does not get its free cpu and waits for second (200-210 s),
  // having starved in turn (at 140 s it finds the node taken; at 200 s it reserves it).
  auto r = run(cpus(1, "4"),
               {job("hog", 2, "1", 100s, 0s), job("first", 3, "1", 100s, 1s),
                job("second", 4, "1", 10s, 40s), job("small", 1, "1", 5s, 110s)},
               config);
  EXPECT_EQ(find(r, "first").reserved_at, 31s);
  EXPECT_EQ(find(r, "first").started_at, 100s);
  EXPECT_EQ(find(r, "second").reserved_at, 100s);
  EXPECT_EQ(find(r, "second").started_at, 200s);
  EXPECT_EQ(find(r, "small").reserved_at, 200s);
  EXPECT_EQ(find(r, "small").started_at, 210s);
  EXPECT_EQ(r.summary.completed, 4);
  EXPECT_EQ(r.summary.reserved, 3);
}

// Ten nodes of 8 cpus and a steady stream of 1-pod gangs (1 cpu, 400 s) for 2 h, one every 5 s:
// from 395 s on all 80 cpus are busy, and every cpu released goes to the small gang arriving at
// that instant, unless a reservation keeps it.
constexpr duration stream_run = 400s;
constexpr duration stream_end = 2h;

std::vector<sim_job> stream_and_big_gangs(const std::vector<std::pair<int32_t, duration>>& big) {
  std::vector<sim_job> jobs;
  for (std::size_t b = 0; b < big.size(); ++b)
    jobs.push_back(job("big-" + std::to_string(b), big[b].first, "1", 600s, big[b].second));
  int i = 0;
  for (duration at = 0s; at < stream_end; at += 5s)
    jobs.push_back(job("small-" + std::to_string(i++), 1, "1", stream_run, at));
  return jobs;
}

sim_config starving_config(sim_policy policy, duration bound) {
  auto config = with(policy);
  // The gate would refuse a 64-cpu gang while 80 cpus are busy; let it admit everything and test
  // the allocator.
  config.gate.overcommit_factor = {10, 1};
  config.starvation_bound = bound;
  return config;
}

// A 64-pod gang of 1 cpu arrives at 100 s, when 60 cpus are free and fewer after.
TEST(Simulation, AStarvingBigGangStartsWithinTheBoundWhileSmallGangsBackfill) {
  const auto jobs = stream_and_big_gangs({{64, 100s}});
  const auto cluster = cpus(10, "8");

  // Volcano-like (and phalanx with bound 0): every cpu released goes to a small gang; the big
  // gang starts only once the stream has ended and its backlog drained.
  for (auto config : {starving_config(sim_policy::volcano_like, 10min),
                      starving_config(sim_policy::phalanx, 0s)}) {
    auto r = run(cluster, jobs, config);
    const auto& big = find(r, "big-0");
    SCOPED_TRACE(to_string(config.policy));
    ASSERT_TRUE(big.started_at);
    EXPECT_GT(*big.started_at, stream_end);
    EXPECT_FALSE(big.reserved_at);
    EXPECT_EQ(r.summary.completed, static_cast<int64_t>(jobs.size()));
  }

  // Phalanx, bound 10 min: blocked from its arrival, it reserves eight nodes at 100 s + 10 min
  // and starts once their small gangs ended, within the longest small run; meanwhile small gangs
  // keep starting on the two other nodes. (Small gangs then wait too, past the bound, and
  // reserve a node each in turn.)
  const duration bound = 10min;
  auto r = run(cluster, jobs, starving_config(sim_policy::phalanx, bound));
  const auto& big = find(r, "big-0");
  ASSERT_TRUE(big.reserved_at);
  EXPECT_EQ(*big.reserved_at, 100s + bound);
  EXPECT_EQ(big.reserved_nodes.size(), 8u);
  ASSERT_TRUE(big.started_at);
  EXPECT_LE(*big.time_to_start, bound + stream_run);
  int backfilled = 0;
  for (const auto& j : r.jobs)
    if (j.name.starts_with("small-") && j.started_at && *j.started_at > *big.reserved_at &&
        *j.started_at < *big.started_at)
      ++backfilled;
  EXPECT_GT(backfilled, 0);
  EXPECT_EQ(r.summary.completed, static_cast<int64_t>(jobs.size()));
}

// Two starving gangs of four nodes each and a third of three, arriving on the full cluster: the
// reservations held at the same time never share a node; the third finds at most two nodes left,
// too few, and reserves once one of the first two started.
std::vector<sim_job> three_big_gangs() {
  return stream_and_big_gangs({{32, 600s}, {32, 610s}, {24, 620s}});
}

TEST(Simulation, TwoStarvingGangsNeverReserveTheSameNode) {
  auto r = run(cpus(10, "8"), three_big_gangs(), starving_config(sim_policy::phalanx, 5min));
  const auto& a = find(r, "big-0");
  const auto& b = find(r, "big-1");
  const auto& c = find(r, "big-2");
  for (const auto* g : {&a, &b, &c}) {
    ASSERT_TRUE(g->reserved_at) << g->name;
    ASSERT_TRUE(g->started_at) << g->name;
  }
  EXPECT_EQ(a.reserved_at, 600s + 5min);
  EXPECT_EQ(b.reserved_at, 610s + 5min);
  EXPECT_EQ(a.reserved_nodes.size(), 4u);
  EXPECT_EQ(b.reserved_nodes.size(), 4u);
  EXPECT_EQ(c.reserved_nodes.size(), 3u);
  EXPECT_GE(*c.reserved_at, std::min(*a.started_at, *b.started_at));
  // Every two reservations held at the same time are on different nodes.
  auto overlap = [](const sim_job_result& x, const sim_job_result& y) {
    return *x.reserved_at < *y.started_at && *y.reserved_at < *x.started_at;
  };
  auto disjoint = [](const sim_job_result& x, const sim_job_result& y) {
    for (const auto& n : x.reserved_nodes)
      if (std::find(y.reserved_nodes.begin(), y.reserved_nodes.end(), n) != y.reserved_nodes.end())
        return false;
    return true;
  };
  EXPECT_TRUE(overlap(a, b));
  EXPECT_TRUE(disjoint(a, b));
  // Small gangs that starved too reserved a node each; every pair, big or small, is checked.
  std::vector<const sim_job_result*> reserving;
  for (const auto& j : r.jobs)
    if (j.reserved_at)
      reserving.push_back(&j);
  EXPECT_GT(reserving.size(), 3u);
  for (std::size_t x = 0; x < reserving.size(); ++x)
    for (std::size_t y = x + 1; y < reserving.size(); ++y)
      if (overlap(*reserving[x], *reserving[y])) {
        EXPECT_TRUE(disjoint(*reserving[x], *reserving[y]))
            << reserving[x]->name << " and " << reserving[y]->name;
      }
}

TEST(Simulation, ReservationsAreDeterministic) {
  const auto config = starving_config(sim_policy::phalanx, 5min);
  auto x = run(cpus(10, "8"), three_big_gangs(), config);
  auto y = run(cpus(10, "8"), three_big_gangs(), config);
  ASSERT_EQ(x.jobs.size(), y.jobs.size());
  for (std::size_t i = 0; i < x.jobs.size(); ++i) {
    EXPECT_EQ(x.jobs[i].started_at, y.jobs[i].started_at) << x.jobs[i].name;
    EXPECT_EQ(x.jobs[i].reserved_at, y.jobs[i].reserved_at) << x.jobs[i].name;
    EXPECT_EQ(x.jobs[i].reserved_nodes, y.jobs[i].reserved_nodes) << x.jobs[i].name;
  }
  EXPECT_EQ(x.events_processed, y.events_processed);
  EXPECT_EQ(x.summary.mean_jct, y.summary.mean_jct);
}

TEST(Simulation, QueuesShareByWeight) {
  // 4 cpus, queues heavy (weight 3) and light (weight 1), each with many 1-cpu jobs.
  std::vector<sim_job> jobs;
  for (int i = 0; i < 8; ++i) {
    jobs.push_back(job("heavy-" + std::to_string(i), 1, "1", 10s, 0s, 1, "heavy"));
    jobs.push_back(job("light-" + std::to_string(i), 1, "1", 10s, 0s, 1, "light"));
  }
  auto config = with(sim_policy::phalanx);
  config.queues = {{"heavy", 3, {}, {}, queue_state::open, 0},
                   {"light", 1, {}, {}, queue_state::open, 0}};
  auto r = run(cpus(1, "4"), jobs, config);
  int heavy_first = 0, light_first = 0;
  for (const auto& j : r.jobs) {
    if (j.started_at != 0s)
      continue;
    (j.name.starts_with("heavy") ? heavy_first : light_first)++;
  }
  // deserved: heavy = 3, light = 1
  EXPECT_EQ(heavy_first, 3);
  EXPECT_EQ(light_first, 1);
  EXPECT_EQ(r.summary.completed, 16);
}

// Volcano's overused rule, as the live queue actor applies it (scheduler::queue_overused): a
// queue holding its deserved share, cut below what it asks by another queue's claim, starts
// nothing new, even with a cpu idle, until what it holds drops. Queue a holds 3 of 4 cpus where
// it deserves 2 (b asks for 2 more).
TEST(Simulation, AnOverusedQueueStartsNothingNew) {
  const std::vector<sim_job> jobs = {job("a-long", 3, "1", 100s, 0s, 3, "a"),
                                     job("b-pair", 2, "1", 10s, 1s, 2, "b"),
                                     job("a-small", 1, "1", 10s, 2s, 1, "a")};
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    SCOPED_TRACE(to_string(policy));
    auto config = with(policy);
    config.queues = {{"a", 1, {}, {}, queue_state::open, 0},
                     {"b", 1, {}, {}, queue_state::open, 0}};
    auto r = run(cpus(1, "4"), jobs, config);
    EXPECT_EQ(find(r, "a-long").started_at, 0s);
    EXPECT_EQ(find(r, "a-small").started_at, 100s);  // Not at 2 s on the idle cpu.
    EXPECT_EQ(find(r, "b-pair").started_at, 100s);
    EXPECT_EQ(r.summary.completed, 3);
    // Alone, a queue is never held back: a-small takes the idle cpu at once.
    auto alone = config;
    alone.queues.pop_back();
    auto solo = run(cpus(1, "4"), {jobs[0], jobs[2]}, alone);
    EXPECT_EQ(find(solo, "a-small").started_at, 2s);
  }
}

TEST(Simulation, ClosedQueueAdmitsNothing) {
  auto config = with(sim_policy::phalanx);
  config.queues = {{"closed", 1, {}, {}, queue_state::closed, 0}};
  auto r = run(cpus(1, "4"),
               {job("a", 1, "1", 1s, 0s, 1, "closed"), job("b", 1, "1", 1s, 0s, 1, "open")},
               config);
  EXPECT_EQ(find(r, "a").phase, sim_job_phase::pending);
  EXPECT_EQ(find(r, "a").reason, "queue \"closed\" is Closed: only an Open queue admits gangs");
  EXPECT_EQ(find(r, "b").phase, sim_job_phase::completed);  // Queue "open" made on demand.
  EXPECT_EQ(r.summary.pending, 1);
}

TEST(Simulation, QueueCapabilityHoldsGangsBack) {
  resource_limit two;
  ASSERT_TRUE(two.set("cpu", 2000));
  auto config = with(sim_policy::phalanx);
  config.queues = {{"capped", 1, two, {}, queue_state::open, 0}};
  auto r = run(cpus(1, "8"),
               {job("a", 2, "1", 10s, 0s, -1, "capped"), job("b", 2, "1", 10s, 0s, -1, "capped")},
               config);
  EXPECT_EQ(find(r, "a").started_at, 0s);
  EXPECT_EQ(find(r, "b").started_at, 10s);  // Only after a's 2 cpus came back.
}

TEST(Simulation, UnresolvableGangIsSkippedAndReported) {
  for (auto policy : {sim_policy::gang_fifo, sim_policy::phalanx}) {
    auto config = with(policy);
    config.gate.overcommit_factor = {10, 1};
    auto r = run(cpus(2, "4"), {job("huge", 1, "8", 1s), job("ok", 1, "1", 1s, 1s)}, config);
    const auto& huge = find(r, "huge");
    EXPECT_EQ(huge.phase, sim_job_phase::pending) << to_string(policy);
    EXPECT_FALSE(huge.reason.empty());
    EXPECT_NE(huge.reason.find("huge-0"), std::string::npos) << huge.reason;
    EXPECT_EQ(find(r, "ok").phase, sim_job_phase::completed) << to_string(policy);
  }
}

TEST(Simulation, StarvingForeverIsPendingNotDeadlocked) {
  // Pod by pod, a pod that can never fit holds nothing: the job starves, it is not deadlocked.
  auto r = run(cpus(1, "2"), {job("wide", 1, "3", 1s)}, with(sim_policy::pod_by_pod));
  EXPECT_EQ(r.jobs[0].phase, sim_job_phase::pending);
  EXPECT_NE(r.jobs[0].reason.find("wide-0"), std::string::npos) << r.jobs[0].reason;
}

TEST(Simulation, EndTimeStopsTheRun) {
  auto config = with(sim_policy::gang_fifo);
  config.end_time = 5s;
  auto r = run(cpus(1, "2"), {job("long", 2, "1", 100s), job("later", 1, "1", 1s, 3s)}, config);
  EXPECT_TRUE(r.stopped_at_end_time);
  EXPECT_EQ(r.summary.makespan, 5s);
  EXPECT_EQ(find(r, "long").phase, sim_job_phase::running);
  EXPECT_EQ(find(r, "later").phase, sim_job_phase::pending);
  EXPECT_EQ(r.summary.running, 1);
  EXPECT_EQ(r.summary.deadlocked, 0);
  EXPECT_EQ(r.summary.cpu_utilization_ppm, 1'000'000);
}

TEST(Simulation, ElasticExtrasComeAfterEveryGangInGangOrder) {
  // Two elastic jobs (minMember 1, 4 pods) on 4 cpus, both at 0 s. Each gets its minimum first;
  // the 2 spare cpus go to a, first in gang order, as the live queue grants elastic rounds.
  auto jobs = std::vector<sim_job>{job("a", 4, "1", 10s, 0s, 1), job("b", 4, "1", 10s, 0s, 1)};
  auto config = with(sim_policy::phalanx);
  config.end_time = 1s;
  auto by_priority = run(cpus(1, "4"), jobs, config);
  EXPECT_EQ(find(by_priority, "a").placed, 3);
  EXPECT_EQ(find(by_priority, "b").placed, 1);
  // Run to the end: everything completes.
  config.end_time.reset();
  auto full = run(cpus(1, "4"), jobs, config);
  EXPECT_EQ(full.summary.completed, 2);
}

TEST(Simulation, GangFifoPlacesExtrasAfterTheGangs) {
  auto r = run(cpus(1, "3"), {job("a", 4, "1", 10s, 0s, 2)}, with(sim_policy::gang_fifo));
  const auto& a = find(r, "a");
  EXPECT_EQ(a.phase, sim_job_phase::completed);
  EXPECT_EQ(a.started_at, 0s);
  EXPECT_EQ(a.completed_at, 20s);  // The fourth pod runs once a cpu frees at 10 s.
}

TEST(Simulation, RolesAreHonoured) {
  // A gang of 1 ps + 2 workers (minTaskMember ps 1, worker 2) on two nodes.
  sim_job j;
  auto g = make_gang("tf", 3)
               .task("ps", 1, res("cpu", "2"), 1)
               .task("worker", 2, res("cpu", "1"), 2)
               .obj();
  j.group = g.group;
  for (const auto& p : g.pods)
    j.pods.push_back({p, 5s, {}, {}});
  auto r = run(cpus(2, "2"), {j}, with(sim_policy::gang_fifo));
  EXPECT_EQ(r.jobs[0].phase, sim_job_phase::completed);
  EXPECT_EQ(r.jobs[0].started_at, 0s);
}

TEST(Simulation, BackgroundUsageIsRespected) {
  auto cluster = cpus(1, "4");
  cluster.allocate(0, res("cpu", "3"));  // Load the simulation does not own.
  auto r = run(cluster, {job("a", 1, "1", 10s), job("b", 2, "1", 10s)},
               with(sim_policy::gang_fifo));
  EXPECT_EQ(find(r, "a").completed_at, 10s);
  EXPECT_EQ(find(r, "b").phase, sim_job_phase::pending);  // Waits for room that never comes.
  EXPECT_NE(find(r, "b").reason.find("b-"), std::string::npos) << find(r, "b").reason;
  // Background and a's pod from 0 s; the background stays after a is done.
  EXPECT_EQ(r.utilization.front().cpu_milli, 4000);
  EXPECT_EQ(r.utilization.back().at, 10s);
  EXPECT_EQ(r.utilization.back().cpu_milli, 3000);
  // 3 cpus of background plus a's 1 cpu, for the whole 10 s.
  EXPECT_EQ(r.summary.cpu_utilization_ppm, 1'000'000);
}

TEST(Simulation, RejectsMalformedInput) {
  auto no_pods = job("x", 1, "1", 1s);
  no_pods.pods.clear();
  auto bad_min = job("x", 1, "1", 1s);
  bad_min.group.min_member = 0;
  auto bad_spawn = job("x", 2, "1", 1s);
  bad_spawn.pods[0].spawned_by = 1;
  auto negative = job("x", 1, "1", 1s);
  negative.pods[0].run_time = -1s;
  struct row {
    const char* what;
    std::vector<sim_job> jobs;
    const char* message;
  };
  const row rows[] = {
      {"no pods", {no_pods}, "has no pods"},
      {"min member", {bad_min}, "min_member must be >= 1"},
      {"spawn order", {bad_spawn}, "spawned_by must name an earlier pod"},
      {"negative time", {negative}, "must be >= 0"},
      {"duplicate", {job("x", 1, "1", 1s), job("x", 1, "1", 1s)}, "duplicate job name"},
  };
  for (const auto& r : rows) {
    auto out = simulate(cpus(1, "1"), r.jobs, {});
    ASSERT_FALSE(out.ok()) << r.what;
    EXPECT_EQ(out.error().code(), errc::invalid_argument);
    EXPECT_NE(out.error().message().find(r.message), std::string::npos)
        << r.what << ": " << out.error().message();
  }
}

TEST(Simulation, RendersAlignedTable) {
  sim_result r;
  r.policy = sim_policy::gang_fifo;
  sim_job_result a;
  a.name = "spark-1";
  a.phase = sim_job_phase::completed;
  a.min_member = 3;
  a.succeeded = 3;
  a.time_to_start = 90s;
  sim_job_result b;
  b.name = "tf";
  b.phase = sim_job_phase::deadlocked;
  b.min_member = 12;
  b.running = 10;
  r.jobs = {a, b};
  EXPECT_EQ(render_job_table(r),
            "JOB       POLICY      PHASE        MIN   RUNNING   SUCCEEDED   STARTED AFTER\n"
            "spark-1   gang-fifo   Completed    3     0         3           1m30s\n"
            "tf        gang-fifo   Deadlocked   12    10        0           -\n");
}

TEST(Simulation, Deterministic) {
  std::vector<sim_job> jobs;
  for (int i = 0; i < 30; ++i)
    jobs.push_back(job("j" + std::to_string(i), 1 + i % 4, "1", duration(1s) * (1 + i % 7),
                       duration(500ms) * i));
  auto config = with(sim_policy::phalanx);
  config.seed = 7;
  auto a = run(cpus(3, "4"), jobs, config);
  auto b = run(cpus(3, "4"), jobs, config);
  EXPECT_EQ(render_job_table(a), render_job_table(b));
  EXPECT_EQ(a.summary.mean_jct, b.summary.mean_jct);
  EXPECT_EQ(a.events_processed, b.events_processed);
}

// A job of `pods` pods of `gpus` GPUs each, of `priority`, minMember `min` (every pod when
// negative).
sim_job gpu_job(std::string name, int32_t pods, int64_t gpus, duration run_time, duration arrival,
                int32_t priority, std::string queue = "q1", int32_t min = -1) {
  sim_job j;
  if (min < 0)
    min = pods;
  resources per_pod;
  per_pod.set(gpu_resource, gpus);
  per_pod.pods = 1;
  j.group = make_gang(name, min)
                .queue(queue)
                .priority(priority)
                .min_resources(per_pod.times(min))
                .obj()
                .group;
  for (int32_t i = 0; i < pods; ++i) {
    auto spec = make_pod(name + "-" + std::to_string(i)).group(name).gpu(gpus);
    j.pods.push_back({spec.priority(priority).obj(), run_time, {}, {}});
  }
  j.arrival = arrival;
  return j;
}

cluster_snapshot gpu_nodes(int nodes, int64_t per_node) {
  cluster_snapshot c;
  for (int n = 0; n < nodes; ++n)
    c.add_node(make_node("node-" + std::to_string(n)).cpu("8").memory("64Gi").gpu(per_node));
  return c;
}

sim_config preempting(sim_policy policy) {
  auto config = with(policy);
  config.gate.overcommit_factor = {10, 1};  // The gate admits everything; test the allocator.
  config.preemption = true;
  return config;
}

// Two nodes of 4 GPUs. "other" (queue q2, priority 0) fills one; "low-1" (q1, priority 1) and
// "low-2" (q1, priority 2) share the other. "high" (q1, priority 10, 2 GPUs) comes at 10 s,
// "equal" (q1, priority 2, 2 GPUs) at 20 s.
std::vector<sim_job> preemption_jobs() {
  return {gpu_job("other", 1, 4, 1000s, 0s, 0, "q2"), gpu_job("low-1", 1, 2, 100s, 1s, 1),
          gpu_job("low-2", 1, 2, 100s, 2s, 2), gpu_job("high", 1, 2, 100s, 10s, 10),
          gpu_job("equal", 1, 2, 100s, 20s, 2)};
}

// high evicts exactly the lowest-priority pod it needs in its own queue: low-1, not other
// (priority 0 but queue q2, and a single victim too), not low-2 (priority 2). equal evicts
// nothing: low-2 has its priority, high a higher one. low-1, evicted, never evicts back.
TEST(Simulation, PreemptionEvictsTheLowestPriorityPodsItNeedsInItsOwnQueue) {
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    auto r = run(gpu_nodes(2, 4), preemption_jobs(), preempting(policy));
    SCOPED_TRACE(std::string(to_string(policy)));
    EXPECT_EQ(find(r, "high").started_at, 10s);
    EXPECT_EQ(find(r, "high").preempted_pods, 1);
    EXPECT_EQ(find(r, "low-1").evicted_pods, 1);
    EXPECT_EQ(find(r, "low-1").restarts, 1);
    for (auto name : {"other", "low-2", "high", "equal"})
      EXPECT_EQ(find(r, name).evicted_pods, 0) << name;
    EXPECT_EQ(find(r, "equal").preempted_pods, 0);
    // low-2 ends at 102 s: equal (priority 2) before low-1 (1); high ends at 110 s: low-1 runs
    // again from scratch, 100 s. It keeps its first start; its JCT includes the wasted 9 s.
    EXPECT_EQ(find(r, "equal").started_at, 102s);
    EXPECT_EQ(find(r, "low-1").started_at, 1s);
    EXPECT_EQ(find(r, "low-1").completed_at, 210s);
    EXPECT_EQ(find(r, "low-1").completion_time, 209s);
    EXPECT_EQ(find(r, "low-1").wasted_gpu_ms, 2 * 9'000);  // 2 GPUs x 9 s.
    EXPECT_EQ(r.summary.completed, 5);
    EXPECT_EQ(r.summary.preemptions, 1);
    EXPECT_EQ(r.summary.evicted_pods, 1);
    EXPECT_EQ(r.summary.evicted_jobs, 1);
    EXPECT_EQ(r.summary.restarts, 1);
    EXPECT_EQ(r.summary.wasted_gpu_ms, 18'000);
  }
  // Off (the default), or under gang FIFO: nobody is evicted; high waits for low-1's end.
  auto off = preempting(sim_policy::phalanx);
  off.preemption = false;
  for (const auto& config : {off, preempting(sim_policy::gang_fifo)}) {
    auto r = run(gpu_nodes(2, 4), preemption_jobs(), config);
    EXPECT_EQ(r.summary.evicted_pods, 0);
    EXPECT_EQ(r.summary.preemptions, 0);
    EXPECT_EQ(find(r, "low-1").restarts, 0);
    EXPECT_EQ(find(r, "high").started_at, 101s);
  }
}

// A victim gang keeps its minMember: an elastic gang (4 pods, minMember 2) loses two spare pods
// and runs on; those two are pending again and run their whole time later.
TEST(Simulation, AVictimGangLosesOnlyPodsAboveItsMinimum) {
  const std::vector<sim_job> jobs = {gpu_job("elastic", 4, 1, 100s, 0s, 0, "q1", 2),
                                     gpu_job("high", 1, 2, 50s, 10s, 5)};
  auto r = run(gpu_nodes(1, 4), jobs, preempting(sim_policy::phalanx));
  const auto& elastic = find(r, "elastic");
  EXPECT_EQ(elastic.evicted_pods, 2);
  EXPECT_EQ(elastic.restarts, 0);
  EXPECT_EQ(elastic.started_at, 0s);
  EXPECT_EQ(elastic.wasted_gpu_ms, 2 * 1 * 10'000);  // 2 pods x 1 GPU x 10 s.
  EXPECT_EQ(find(r, "high").started_at, 10s);
  // high ends at 60 s; the two evicted pods run 60-160 s.
  EXPECT_EQ(elastic.completed_at, 160s);
  EXPECT_EQ(r.summary.restarts, 0);
  EXPECT_EQ(r.summary.evicted_jobs, 1);
}

// A gang at its minimum is evicted whole, though the preemptor needs half of it, restarts from
// scratch once there is room, and its JCT includes the wasted run. With a start delay, the waste
// counts Running time only: 2 pods x 2 GPUs x (30 - 2) s.
TEST(Simulation, AGangAtItsMinimumIsEvictedWholeAndRestarts) {
  sim_job gang = gpu_job("gang", 2, 2, 100s, 0s, 0);
  gang.wait_for_gang = true;
  const std::vector<sim_job> jobs = {gang, gpu_job("high", 1, 2, 50s, 30s, 5)};
  auto config = preempting(sim_policy::volcano_like);
  config.pod_start_delay = 2s;
  auto r = run(gpu_nodes(1, 4), jobs, config);
  const auto& g = find(r, "gang");
  EXPECT_EQ(g.evicted_pods, 2);
  EXPECT_EQ(g.restarts, 1);
  EXPECT_EQ(g.wasted_gpu_ms, 2 * 2 * 28'000);
  EXPECT_EQ(find(r, "high").preempted_pods, 2);
  EXPECT_EQ(find(r, "high").started_at, 32s);  // Placed at 30 s, Running at 32 s.
  // high ends at 82 s; the gang is placed again, Running at 84 s, done at 184 s.
  EXPECT_EQ(g.started_at, 2s);
  EXPECT_EQ(g.completed_at, 184s);
  EXPECT_EQ(g.completion_time, 184s);
  EXPECT_EQ(g.succeeded, 2);
  EXPECT_EQ(r.summary.wasted_gpu_ms, 112'000);
}

// No loop: the evicted gang, lower priority, waits and never evicts back; a gang of the
// preemptor's own priority never evicts it either.
TEST(Simulation, AnEvictedGangNeverEvictsBack) {
  const std::vector<sim_job> jobs = {gpu_job("a", 1, 4, 100s, 0s, 1),
                                     gpu_job("b", 1, 4, 100s, 10s, 2),
                                     gpu_job("c", 1, 4, 100s, 20s, 2)};
  auto r = run(gpu_nodes(1, 4), jobs, preempting(sim_policy::phalanx));
  EXPECT_EQ(find(r, "b").started_at, 10s);
  EXPECT_EQ(find(r, "c").started_at, 110s);  // b's end: c (priority 2) before a (1).
  EXPECT_EQ(find(r, "a").completed_at, 310s);
  EXPECT_EQ(find(r, "a").evicted_pods, 1);
  EXPECT_EQ(find(r, "b").evicted_pods, 0);
  EXPECT_EQ(find(r, "c").evicted_pods, 0);
  EXPECT_EQ(r.summary.preemptions, 1);
}

// Many jobs of two priorities in three queues: every gang keeps its minimum (I3, I7) at every
// step, every job completes, and the same seed gives the same run.
TEST(Simulation, PreemptionKeepsTheInvariantsAndIsDeterministic) {
  std::mt19937_64 random(7);
  std::vector<sim_job> jobs;
  for (int i = 0; i < 600; ++i) {
    const int pods = 1 + int(random() % 4);
    const int min = 1 + int(random() % pods);
    const int64_t gpus = 1 + int64_t(random() % 4);
    const int32_t priority = random() % 4 == 0 ? 100 : 0;
    auto j = gpu_job("job-" + std::to_string(i), pods, gpus,
                     duration(1s) * int64_t(60 + random() % 3600),
                     duration(1s) * int64_t(random() % 20000), priority,
                     "q" + std::to_string(random() % 3), min);
    j.wait_for_gang = random() % 2 == 0;
    jobs.push_back(std::move(j));
  }
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    SCOPED_TRACE(std::string(to_string(policy)));
    auto config = preempting(policy);
    config.gate = {};
    config.starvation_bound = 10min;
    config.pod_start_delay = 1s;
    auto a = run(gpu_nodes(12, 8), jobs, config);
    EXPECT_EQ(a.summary.completed, 600);
    EXPECT_GT(a.summary.preemptions, 0);
    EXPECT_GE(a.summary.evicted_pods, a.summary.preemptions);
    EXPECT_GT(a.summary.wasted_gpu_ms, 0);
    int64_t evicted = 0, wasted = 0, spares_only = 0;
    for (const auto& j : a.jobs) {
      evicted += j.evicted_pods;
      wasted += j.wasted_gpu_ms;
      spares_only += j.evicted_pods > 0 && j.restarts == 0;
    }
    // Both kinds of victim: gangs evicted whole, and gangs that lost spare pods only.
    EXPECT_GT(a.summary.restarts, 0);
    EXPECT_GT(spares_only, 0);
    EXPECT_EQ(evicted, a.summary.evicted_pods);
    EXPECT_EQ(wasted, a.summary.wasted_gpu_ms);
    auto b = run(gpu_nodes(12, 8), jobs, config);
    EXPECT_EQ(render_job_table(a), render_job_table(b));
    EXPECT_EQ(a.summary.mean_jct, b.summary.mean_jct);
    EXPECT_EQ(a.summary.evicted_pods, b.summary.evicted_pods);
    EXPECT_EQ(a.summary.wasted_gpu_ms, b.summary.wasted_gpu_ms);
    EXPECT_EQ(a.events_processed, b.events_processed);
  }
}

// ---------------------------------------------------------------------------------------------
// Reclaim across queues and the queue tree.

// An Open queue `name` of `weight` under `parent` ("" is the root).
sim_queue make_queue(std::string name, int32_t weight = 1, std::string parent = "") {
  sim_queue q;
  q.name = std::move(name);
  q.weight = weight;
  q.parent = std::move(parent);
  return q;
}

resources gpus(int64_t n) {
  resources r;
  r.set(gpu_resource, n);
  return r;
}

sim_config reclaiming(sim_policy policy) {
  auto config = with(policy);
  config.gate.overcommit_factor = {10, 1};  // The gate admits everything; test the allocator.
  config.reclaim = true;
  return config;
}

// Two nodes of 4 GPUs, queues q1, q2, q3 of weight 1. q1 runs a1, a2, a3 (2 GPUs each) and q2 runs
// b (2 GPUs) from 0 s for 1000 s; c (q3, 1 GPU) comes at 10 s. Deserved GPUs then (demands 6, 2,
// 1): q3 1, q2 2, q1 the other 5. q1 holds 6, above its share: it may lose one 2-GPU pod (ending
// one pod below its share, Volcano's rule); q2 holds exactly its share.
std::vector<sim_job> reclaim_jobs() {
  return {gpu_job("a1", 1, 2, 1000s, 0s, 0, "q1"), gpu_job("a2", 1, 2, 1000s, 0s, 0, "q1"),
          gpu_job("a3", 1, 2, 1000s, 0s, 0, "q1"), gpu_job("b", 1, 2, 1000s, 0s, 0, "q2"),
          gpu_job("c", 1, 1, 100s, 10s, 0, "q3")};
}

struct reclaim_case {
  std::string what;
  std::function<void(std::vector<sim_job>&, sim_config&)> change;
  std::optional<duration> c_started_at;
  std::vector<std::string> evicted;  // Jobs that lost one pod each.
  std::string c_reason;              // Ends c's reason when it did not start.
};

TEST(SimulationReclaim, EvictsOnlyFromQueuesAboveTheirShareAndNeverBelowGuarantee) {
  const std::vector<reclaim_case> cases = {
      // The most recently started of q1's pods (all at 0 s: the largest id), not b.
      {"q1 above its share gives up one pod", [](auto&, auto&) {}, 10s, {"a3"}, ""},
      {"a queue within its share is never a victim, whatever its priority",
       [](auto& jobs, auto&) {
         for (auto& j : jobs)
           if (j.group.queue == "q1") {
             j.group.priority = 5;
             for (auto& p : j.pods)
               p.spec.priority = 5;
           }
       },
       10s, {"a3"}, ""},
      {"a queue that is not reclaimable gives nothing",
       [](auto&, auto& config) { config.queues[0].reclaimable = false; }, std::nullopt, {},
       "No reclaim: no reclaimable queue holds more than its deserved share."},
      // Deserved 5 either way; 6 - 2 = 4 would be below the guarantee.
      {"never below the guarantee",
       [](auto&, auto& config) { config.queues[0].guarantee = gpus(5); },
       std::nullopt, {}, "No reclaim: no pods of queues over their deserved share can make room"},
      // c asks 4 GPUs: demands 6, 2, 4 give q3 3 (q2 2, q1 3); 4 would exceed it, though q1
      // (6 > 3) could lose a1 and a2.
      {"not beyond the reclaimer's own share",
       [](auto& jobs, auto&) { jobs[4] = gpu_job("c", 1, 4, 100s, 10s, 0, "q3"); }, std::nullopt,
       {},
       "No reclaim: queue q3 would exceed its deserved share nvidia.com/gpu: 3 with this gang's "
       "minimum (it holds none)."},
      {"off", [](auto&, auto& config) { config.reclaim = false; }, std::nullopt, {}, ""},
  };
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(to_string(policy)) + ": " + c.what);
      auto jobs = reclaim_jobs();
      auto config = reclaiming(policy);
      config.queues = {make_queue("q1"), make_queue("q2"), make_queue("q3")};
      config.end_time = 500s;
      c.change(jobs, config);
      auto r = run(gpu_nodes(2, 4), jobs, config);
      const auto& cj = find(r, "c");
      EXPECT_EQ(cj.started_at, c.c_started_at);
      for (auto name : {"a1", "a2", "a3", "b"}) {
        const bool evicted = std::find(c.evicted.begin(), c.evicted.end(), name) != c.evicted.end();
        EXPECT_EQ(find(r, name).evicted_pods, evicted ? 1 : 0) << name;
        EXPECT_EQ(find(r, name).reclaim_evicted_pods, evicted ? 1 : 0) << name;
      }
      EXPECT_EQ(cj.reclaimed_pods, static_cast<int32_t>(c.evicted.size()));
      EXPECT_EQ(r.summary.reclaims, c.evicted.empty() ? 0 : 1);
      EXPECT_EQ(r.summary.reclaim_evicted_pods, static_cast<int64_t>(c.evicted.size()));
      EXPECT_EQ(r.summary.preemptions, 0);
      if (!c.c_started_at) {
        EXPECT_EQ(cj.phase, sim_job_phase::pending);
        if (c.c_reason.empty()) {
          EXPECT_EQ(cj.reason.find("No reclaim"), std::string::npos) << cj.reason;
        } else {
          EXPECT_NE(cj.reason.find(c.c_reason), std::string::npos) << cj.reason;
        }
      }
    }
  }
  // The victim restarts from scratch: 2 GPUs x 10 s wasted; it waits for room (its queue, now
  // one pod below its share, may not reclaim with 2 GPUs more) until c ends and runs 110-1110 s.
  auto config = reclaiming(sim_policy::phalanx);
  config.queues = {make_queue("q1"), make_queue("q2"), make_queue("q3")};
  auto r = run(gpu_nodes(2, 4), reclaim_jobs(), config);
  EXPECT_EQ(find(r, "a3").restarts, 1);
  EXPECT_EQ(find(r, "a3").reclaim_wasted_gpu_ms, 20'000);
  EXPECT_EQ(find(r, "a3").wasted_gpu_ms, 20'000);
  EXPECT_EQ(find(r, "a3").completed_at, 1110s);
  EXPECT_EQ(find(r, "c").completed_at, 110s);
  EXPECT_EQ(r.summary.reclaim_wasted_gpu_ms, 20'000);
  EXPECT_EQ(r.summary.wasted_gpu_ms, 20'000);
  EXPECT_EQ(r.summary.completed, 5);
}

// A gang of 1 ps and 3 workers of 1 GPU (minTaskMember ps 1, worker 1; minMember 2).
sim_job roles_gang(std::string name, duration run_time, std::string queue) {
  auto g = make_gang(name, 2).queue(queue).task("ps", 1, gpus(1), 1).task("worker", 3, gpus(1), 1);
  sim_job j;
  j.group = g.obj().group;
  auto per_pod = gpus(1);
  per_pod.pods = 1;
  j.group.min_resources = per_pod.times(2);
  for (const auto& p : g.obj().pods)
    j.pods.push_back({p, run_time, {}, {}});
  return j;
}

struct victim_case {
  std::string what;
  sim_job gang;        // Named "a", in q1, priority 0.
  int32_t evicted = 0;
  int32_t restarts = 0;
};

// 8 GPUs; q1 (weight 1) runs gang a and 1-GPU fillers of priority 5 up to 8 GPUs; c (q3, weight 3:
// 6 pods of 1 GPU, minMember 2) comes at 10 s. Deserved: q1 2, q3 6, so q1 may lose all of a; a
// (priority 0) goes before the fillers. Each gang keeps its minimum or goes whole (I7, checked by
// run()), and a gang with role minimums has no spare pods.
TEST(SimulationReclaim, AVictimGangKeepsItsMinimumOrGoesWhole) {
  const std::vector<victim_case> cases = {
      {"a gang at its minimum goes whole", gpu_job("a", 2, 1, 1000s, 0s, 0, "q1", 2), 2, 1},
      {"an elastic gang loses its spare pods only", gpu_job("a", 4, 1, 1000s, 0s, 0, "q1", 2), 2,
       0},
      {"a gang of 4 with minMember 4 goes whole", gpu_job("a", 4, 1, 1000s, 0s, 0, "q1", 4), 4, 1},
      {"a gang with role minimums shows no spare: it goes whole", roles_gang("a", 1000s, "q1"), 4,
       1},
  };
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(to_string(policy)) + ": " + c.what);
      std::vector<sim_job> jobs = {c.gang};
      for (std::size_t i = c.gang.pods.size(); i < 8; ++i)
        jobs.push_back(gpu_job("f" + std::to_string(i), 1, 1, 1000s, 0s, 5, "q1"));
      jobs.push_back(gpu_job("c", 6, 1, 100s, 10s, 0, "q3", 2));
      auto config = reclaiming(policy);
      config.queues = {make_queue("q1", 1), make_queue("q3", 3)};
      auto r = run(gpu_nodes(2, 4), jobs, config);
      EXPECT_EQ(find(r, "c").started_at, 10s);
      EXPECT_EQ(find(r, "a").evicted_pods, c.evicted);
      EXPECT_EQ(find(r, "a").restarts, c.restarts);
      EXPECT_EQ(find(r, "a").started_at, 0s);
      for (const auto& j : r.jobs) {
        if (j.name.starts_with("f")) {
          EXPECT_EQ(j.evicted_pods, 0) << j.name;
        }
      }
      EXPECT_EQ(r.summary.reclaims, 1);
      EXPECT_EQ(r.summary.completed, static_cast<int64_t>(jobs.size()));
    }
  }
}

// q1 runs eight 1-GPU jobs on all 8 GPUs; c (q2, 4 pods, minMember 4) comes at 10 s: deserved 4
// and 4. c reclaims four of them; those restart in q1, which then holds its share: they cannot
// reclaim back (q1 would exceed its share, and q2 is not above its own), so the run ends with one
// reclaim. A rule that let them would evict c and loop within the instant.
TEST(SimulationReclaim, NoLoopBetweenTwoQueues) {
  std::vector<sim_job> jobs;
  for (int i = 1; i <= 8; ++i)
    jobs.push_back(gpu_job("a" + std::to_string(i), 1, 1, 1000s, 0s, 0, "q1"));
  jobs.push_back(gpu_job("c", 4, 1, 1000s, 10s, 0, "q2"));
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    SCOPED_TRACE(std::string(to_string(policy)));
    auto config = reclaiming(policy);
    config.preemption = true;  // Both actions on: neither may start a loop.
    config.queues = {make_queue("q1"), make_queue("q2")};
    auto stopped = config;
    stopped.end_time = 500s;
    auto r = run(gpu_nodes(2, 4), jobs, stopped);
    EXPECT_EQ(find(r, "c").started_at, 10s);
    EXPECT_EQ(find(r, "c").reclaimed_pods, 4);
    EXPECT_EQ(r.summary.reclaims, 1);
    EXPECT_EQ(r.summary.evicted_pods, 4);
    for (int i = 5; i <= 8; ++i) {
      const auto& a = find(r, "a" + std::to_string(i));
      EXPECT_EQ(a.restarts, 1) << a.name;
      EXPECT_EQ(a.phase, sim_job_phase::pending) << a.name;
      EXPECT_NE(a.reason.find("No reclaim: queue q1 would exceed its deserved share "
                              "nvidia.com/gpu: 4 with this gang's minimum (it holds "
                              "nvidia.com/gpu: 4)."),
                std::string::npos)
          << a.reason;
    }
    auto full = run(gpu_nodes(2, 4), jobs, config);
    EXPECT_EQ(full.summary.completed, 9);
    EXPECT_EQ(full.summary.reclaims, 1);
    EXPECT_EQ(find(full, "a8").completed_at, 2000s);  // Placed when a1-a4 end at 1000 s.
  }
}

// Many jobs in three queues of weights 1, 2 and 4, two priorities, reclaim and preemption on:
// every gang keeps its minimum at every step (I3, I7), everything completes, and the same seed
// gives the same run.
TEST(SimulationReclaim, KeepsTheInvariantsAndIsDeterministic) {
  std::mt19937_64 random(11);
  std::vector<sim_job> jobs;
  for (int i = 0; i < 600; ++i) {
    const int pods = 1 + int(random() % 4);
    const int min = 1 + int(random() % pods);
    const int64_t gpu_count = 1 + int64_t(random() % 4);
    const int32_t priority = random() % 4 == 0 ? 100 : 0;
    auto j = gpu_job("job-" + std::to_string(i), pods, gpu_count,
                     duration(1s) * int64_t(60 + random() % 3600),
                     duration(1s) * int64_t(random() % 20000), priority,
                     "q" + std::to_string(random() % 3), min);
    j.wait_for_gang = random() % 2 == 0;
    jobs.push_back(std::move(j));
  }
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    for (bool preemption : {false, true}) {
      SCOPED_TRACE(std::string(to_string(policy)) + (preemption ? " with preemption" : ""));
      auto config = reclaiming(policy);
      config.preemption = preemption;
      config.gate = {};
      config.starvation_bound = 10min;
      config.pod_start_delay = 1s;
      config.queues = {make_queue("q0", 1), make_queue("q1", 2), make_queue("q2", 4)};
      auto a = run(gpu_nodes(12, 8), jobs, config);
      EXPECT_EQ(a.summary.completed, 600);
      EXPECT_GT(a.summary.reclaims, 0);
      EXPECT_GT(a.summary.reclaim_evicted_pods, 0);
      EXPECT_EQ(a.summary.preemptions > 0, preemption);
      int64_t reclaimed = 0, reclaim_evicted = 0, wasted = 0;
      for (const auto& j : a.jobs) {
        reclaimed += j.reclaimed_pods;
        reclaim_evicted += j.reclaim_evicted_pods;
        wasted += j.reclaim_wasted_gpu_ms;
        EXPECT_LE(j.reclaim_evicted_pods, j.evicted_pods) << j.name;
      }
      EXPECT_EQ(reclaimed, a.summary.reclaim_evicted_pods);
      EXPECT_EQ(reclaim_evicted, a.summary.reclaim_evicted_pods);
      EXPECT_EQ(wasted, a.summary.reclaim_wasted_gpu_ms);
      auto b = run(gpu_nodes(12, 8), jobs, config);
      EXPECT_EQ(render_job_table(a), render_job_table(b));
      EXPECT_EQ(a.summary.mean_jct, b.summary.mean_jct);
      EXPECT_EQ(a.summary.reclaim_evicted_pods, b.summary.reclaim_evicted_pods);
      EXPECT_EQ(a.events_processed, b.events_processed);
    }
  }
}

// Two departments of two teams, as FairShareTree.DeservedFlowsDownTheTree: dev (weight 1) with
// d1, d2 (1, 1); prod (3) with p1, p2 (1, 2); 40 cpus. Each team has a job of 50 1-cpu pods
// (more than the cluster) unless a case changes it.
std::vector<sim_queue> departments() {
  return {make_queue("dev", 1),         make_queue("d1", 1, "dev"),  make_queue("d2", 1, "dev"),
          make_queue("prod", 3, "root"), make_queue("p1", 1, "prod"), make_queue("p2", 2, "prod")};
}

struct tree_case {
  std::string what;
  std::function<void(std::vector<sim_queue>&, std::vector<sim_job>&)> change;
  // cpu in millicores, in the order of departments(): dev, d1, d2, prod, p1, p2.
  std::vector<int64_t> expected;
};

TEST(SimulationTree, DeservedIsComputedDownTheTree) {
  const std::vector<tree_case> cases = {
      {"each department splits its weighted share by its teams' weights", [](auto&, auto&) {},
       {10000, 5000, 5000, 30000, 10000, 20000}},
      {"a satisfied team's share goes to its sibling first",
       [](auto&, auto& jobs) { jobs[0] = job("team-d1", 2, "1", 100s, 0s, 1, "d1"); },
       {10000, 2000, 8000, 30000, 10000, 20000}},
      {"a department's capability caps its teams together",
       [](auto& qs, auto&) { ASSERT_TRUE(qs[3].capability.set("cpu", 20000)); },
       {20000, 10000, 10000, 20000, 6667, 13333}},
      {"guarantees at both levels",
       [](auto& qs, auto&) {
         qs[3].guarantee = res("cpu", "30");
         qs[5].guarantee = res("cpu", "25");
       },
       {10000, 5000, 5000, 30000, 5000, 25000}},
  };
  const auto cluster = cpus(5, "8");
  for (auto policy : {sim_policy::volcano_like, sim_policy::phalanx}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(to_string(policy)) + ": " + c.what);
      auto queues = departments();
      std::vector<sim_job> jobs;
      for (auto team : {"d1", "d2", "p1", "p2"})
        jobs.push_back(job(std::string("team-") + team, 50, "1", 100s, 0s, 1, team));
      c.change(queues, jobs);
      auto config = with(policy);
      config.queues = queues;
      config.end_time = 1s;  // Every pod still asks: placed or pending, none finished.
      auto r = run(cluster, jobs, config);
      ASSERT_EQ(r.queues.size(), queues.size());
      std::vector<int64_t> cpu;
      for (const auto& q : r.queues)
        cpu.push_back(q.deserved.cpu_milli);
      EXPECT_EQ(cpu, c.expected);
      // The same tree and requests given to compute_deserved directly: every dimension agrees.
      std::vector<queue_demand> demands;
      for (const auto& q : queues) {
        resources request;
        for (const auto& j : jobs)
          if (j.group.queue == q.name)
            for (const auto& p : j.pods)
              request += p.spec.requests;
        demands.push_back({q.name, q.weight, q.capability, q.guarantee, request, q.parent});
      }
      const auto expected = compute_deserved(cluster.total_allocatable(), demands);
      for (std::size_t i = 0; i < queues.size(); ++i) {
        EXPECT_EQ(r.queues[i].name, queues[i].name);
        EXPECT_EQ(r.queues[i].parent, queues[i].parent);
        EXPECT_EQ(r.queues[i].deserved, expected[i].deserved) << queues[i].name;
      }
    }
  }
}

// A Closed queue closes its subtree to new work, however deep; the queues' own states stay Open.
TEST(SimulationTree, AClosedParentClosesItsChildren) {
  auto config = with(sim_policy::phalanx);
  config.queues = departments();
  config.queues[0].state = queue_state::closed;  // dev.
  config.queues.push_back(make_queue("d3", 1, "dev"));
  config.queues[2].name = "team";  // d2 becomes a parent: dev -> team -> t1.
  config.queues.push_back(make_queue("t1", 1, "team"));
  const std::vector<sim_job> jobs = {job("in-d1", 1, "1", 10s, 0s, 1, "d1"),
                                     job("in-t1", 1, "1", 10s, 0s, 1, "t1"),
                                     job("in-p1", 1, "1", 10s, 0s, 1, "p1")};
  auto r = run(cpus(1, "8"), jobs, config);
  EXPECT_EQ(find(r, "in-d1").phase, sim_job_phase::pending);
  EXPECT_EQ(find(r, "in-d1").reason,
            "queue \"d1\" admits no gangs: it is under queue \"dev\", which is Closed");
  EXPECT_EQ(find(r, "in-t1").phase, sim_job_phase::pending);
  EXPECT_EQ(find(r, "in-t1").reason,
            "queue \"t1\" admits no gangs: it is under queue \"dev\", which is Closed");
  EXPECT_EQ(find(r, "in-p1").phase, sim_job_phase::completed);
  // Open again, the subtree takes work.
  config.queues[0].state = queue_state::open;
  auto open = run(cpus(1, "8"), jobs, config);
  EXPECT_EQ(open.summary.completed, 3);
}

struct refusal_case {
  std::string what;
  std::vector<sim_queue> queues;
  std::string job_queue;
  std::string message;
};

// Input the simulation refuses, with the message that names the queue and the rule.
TEST(SimulationTree, RefusesInvalidTreesAndJobsInQueuesThatAreNotLeaves) {
  auto guaranteed = [](sim_queue q, std::string_view cpu) {
    q.guarantee = res("cpu", cpu);
    return q;
  };
  const std::vector<refusal_case> cases = {
      {"an unknown parent", {make_queue("a", 1, "gone")}, "a",
       "queues[0]: Queue \"a\" is invalid: spec.parent: Invalid value: \"gone\": parent queue "
       "\"gone\" does not exist (a parent must be an existing queue or \"root\")"},
      {"a cycle", {make_queue("a", 1, "b"), make_queue("b", 1, "a"), make_queue("leaf")}, "leaf",
       "queues[0]: Queue \"a\" is invalid: spec.parent: Invalid value: \"b\": queue \"a\" would be "
       "its own ancestor (a -> b -> a)"},
      {"a child's guarantee above its parent's",
       {guaranteed(make_queue("c", 1, "p"), "4"), guaranteed(make_queue("p"), "2")}, "c",
       "queues[0]: Queue \"c\" is invalid: spec.guarantee.resource[cpu]: Invalid value: \"4\": "
       "must be less than or equal to the guarantee of parent queue \"p\" (2)"},
      {"two queues of one name", {make_queue("a"), make_queue("a")}, "a",
       "queues[1] (a): duplicate queue name"},
      {"a queue named root", {make_queue("root")}, "x",
       "queues[0] (root): \"root\" names the top of the queue tree, not a queue"},
      {"a job in a queue with children", {make_queue("p"), make_queue("c", 1, "p")}, "p",
       "jobs[0] (j): queue \"p\" has child queues (\"c\"); only leaf queues take jobs"},
      {"a job in the root", {}, "root",
       "jobs[0] (j): queue \"root\" is the top of the queue tree, not a leaf queue; only leaf "
       "queues take jobs"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto config = with(sim_policy::phalanx);
    config.queues = c.queues;
    const std::vector<sim_job> jobs = {job("j", 1, "1", 1s, 0s, 1, c.job_queue)};
    auto r = simulate(cpus(1, "4"), jobs, config);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
    EXPECT_EQ(r.error().message(), c.message);
  }
}

// Thousands of jobs of random shapes, arriving over a day, on 50 nodes: every policy keeps the
// invariants and, with gangs, finishes everything.
TEST(Simulation, ManyJobsKeepTheInvariants) {
  std::mt19937_64 random(2024);
  std::vector<sim_job> jobs;
  for (int i = 0; i < 2000; ++i) {
    const int pods = 1 + int(random() % 8);
    const int min = 1 + int(random() % pods);
    const std::string cpu = std::to_string(250 * (1 + random() % 8)) + "m";
    jobs.push_back(job("job-" + std::to_string(i), pods, cpu,
                       duration(1s) * int64_t(60 + random() % 3600),
                       duration(1s) * int64_t(random() % 86400), min,
                       "q" + std::to_string(random() % 3)));
  }
  struct variant {
    sim_policy policy;
    duration starvation_bound;
    int nodes;
  };
  // Phalanx twice: as the others, and on fewer nodes (a backlog) with a bound short enough for
  // many gangs to reserve.
  const variant variants[] = {{sim_policy::pod_by_pod, 5min, 50},
                              {sim_policy::gang_fifo, 5min, 50},
                              {sim_policy::volcano_like, 5min, 50},
                              {sim_policy::phalanx, 5min, 50},
                              {sim_policy::phalanx, 1min, 25}};
  for (const auto& v : variants) {
    const auto policy = v.policy;
    auto config = with(policy);
    config.starvation_bound = v.starvation_bound;
    config.pod_start_delay = 2s;
    config.queues = {{"q0", 1, {}, {}, queue_state::open, 0},
                     {"q1", 2, {}, {}, queue_state::open, 0},
                     {"q2", 4, {}, {}, queue_state::open, 0}};
    auto r = run(cpus(v.nodes, "8"), jobs, config);
    EXPECT_EQ(r.summary.completed, 2000) << to_string(policy);
    EXPECT_TRUE(r.summary.p95_jct.has_value());
    EXPECT_GE(*r.summary.p95_jct, *r.summary.mean_jct / 2);
    EXPECT_GT(r.summary.cpu_utilization_ppm, 0);
    EXPECT_LE(r.summary.cpu_utilization_ppm, 1'000'000);
    if (policy != sim_policy::phalanx) {
      EXPECT_EQ(r.summary.reserved, 0) << to_string(policy);
    } else if (v.starvation_bound == 1min) {
      EXPECT_GT(r.summary.reserved, 0);
    }
  }
}

} // namespace
} // namespace phalanx::scheduler
