#include "scheduler/preemption.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <map>
#include <set>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;

using victim_list = std::vector<std::pair<uint32_t, std::vector<uint64_t>>>;

// A bound pod of the preemptor's queue, or of another queue for reclaim.
struct bound_pod {
  uint64_t id = 0;
  uint32_t node = 0;
  int32_t priority = 0;
  int started = 0;  // Seconds since the epoch.
  resources request;
  uint64_t gang = 0;
  uint32_t queue = 0;
};

// A cluster, the candidates' bound pods and a preemptor, as data.
struct scenario {
  std::vector<node> nodes = {};
  std::vector<bound_pod> bound = {};
  std::vector<victim_gang> gangs = {};
  std::vector<victim_queue> queues = {};  // Reclaim; empty for preemption within a queue.
  std::vector<std::pair<uint32_t, resources>> others = {};  // Load of pods of other queues.
  std::vector<uint32_t> removed = {};
  std::vector<pod> preemptor = {};
  int32_t min_pods = -1;  // -1: every pod of the preemptor.
  int32_t priority = 10;
};

// A scenario made into a view and a request (which points into this object: not copyable).
struct world {
  cluster_snapshot view;
  std::vector<preemption_candidate> candidates;
  std::vector<victim_gang> gangs;
  std::vector<victim_queue> queues;
  std::vector<pod> pods;
  std::vector<const pod*> pointers;
  preemption_request request;

  explicit world(const scenario& s) : gangs(s.gangs), queues(s.queues), pods(s.preemptor) {
    for (const auto& n : s.nodes)
      view.add_node(n);
    for (const auto& [n, load] : s.others)
      view.allocate(n, load);
    for (const auto& b : s.bound) {
      resources request = b.request;
      request.pods = 1;
      view.allocate(b.node, request);
      candidates.push_back({b.id, b.node, b.gang, b.priority,
                            timestamp{std::chrono::seconds(b.started)}, request, b.queue});
    }
    for (uint32_t n : s.removed)
      view.remove(n);
    for (const auto& p : pods)
      pointers.push_back(&p);
    request.gang.pods = pointers;
    request.gang.min_pods = s.min_pods < 0 ? int32_t(pods.size()) : s.min_pods;
    request.priority = s.priority;
    request.candidates = candidates;
    request.gangs = gangs;
    request.queues = queues;
  }
  world(const world&) = delete;
  world& operator=(const world&) = delete;

  preemption_plan plan(uint64_t seed = 1) const {
    gang_planner planner;
    rng random(seed);
    return plan_preemption(planner, view, request, random);
  }
};

// Checks what every plan promises: when found, the minimum is placed on live nodes and fits
// once the victims are gone; victims are candidates of lower priority on live nodes, listed
// once under their node, nodes ascending; no victim gang drops below its minMember unless all
// of its candidates on live nodes go; with queues, victims are of queues given, and each
// queue's victims keep its limit (queue_rule_holds). When not found, nothing is placed or
// evicted.
// The queue rule, taken pod by pod: a victim only while the queue holds more than its deserved
// share in some dimension, and never below its guarantee. What a queue holds only shrinks as
// victims go, so a sequence keeps the rule exactly when the queue still holds its guarantee at
// the end and held more than its deserved share just before its last victim. The plan shows the
// order only per node; the order the planner took them keeps each node's, so some node's last
// victim of the queue must be a last victim the rule allows.
::testing::AssertionResult queue_rule_holds(const world& w, const preemption_plan& plan) {
  for (const auto& q : w.queues) {
    resources holds = q.allocated;
    std::vector<const preemption_candidate*> last_per_node;
    for (const auto& [node, ids] : plan.victims_by_node) {
      const preemption_candidate* last = nullptr;
      for (uint64_t id : ids)
        for (const auto& c : w.candidates)
          if (c.pod_id == id && c.queue == q.queue) {
            holds -= c.request;
            last = &c;
          }
      if (last != nullptr)
        last_per_node.push_back(last);
    }
    if (last_per_node.empty())
      continue;
    if (!fits(q.guarantee, holds))
      return ::testing::AssertionFailure() << "queue " << q.queue << " below its guarantee";
    const bool over_before_last =
        std::any_of(last_per_node.begin(), last_per_node.end(), [&](const auto* c) {
          return !fits(holds + c->request, q.deserved);
        });
    if (!over_before_last)
      return ::testing::AssertionFailure()
             << "queue " << q.queue << " lost a pod while within its deserved share";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult valid(const world& w, const preemption_plan& plan) {
  if (!plan.found) {
    if (!plan.placements.empty() || !plan.victims_by_node.empty() || plan.detail.empty())
      return ::testing::AssertionFailure() << "not found, yet placed or evicted, or no detail";
    return ::testing::AssertionSuccess();
  }
  if (int64_t(plan.placements.size()) < w.request.gang.min_pods)
    return ::testing::AssertionFailure() << "only " << plan.placements.size() << " placements";
  std::map<uint64_t, const preemption_candidate*> by_id;
  for (const auto& c : w.candidates)
    by_id[c.pod_id] = &c;
  std::map<uint32_t, resources> room;
  std::map<uint64_t, int32_t> evicted;  // Per gang.
  std::set<uint64_t> seen;
  for (std::size_t k = 0; k < plan.victims_by_node.size(); ++k) {
    const auto& [node, ids] = plan.victims_by_node[k];
    if (k > 0 && plan.victims_by_node[k - 1].first >= node)
      return ::testing::AssertionFailure() << "nodes not ascending at " << node;
    if (ids.empty())
      return ::testing::AssertionFailure() << "node " << node << " listed without victims";
    for (uint64_t id : ids) {
      auto it = by_id.find(id);
      if (it == by_id.end() || !seen.insert(id).second)
        return ::testing::AssertionFailure() << "victim " << id << " unknown or listed twice";
      const preemption_candidate& c = *it->second;
      const bool listed =
          w.queues.empty() || std::any_of(w.queues.begin(), w.queues.end(),
                                          [&](const auto& q) { return q.queue == c.queue; });
      if (c.node != node || !w.view.is_live(c.node) || c.priority >= w.request.priority ||
          !listed)
        return ::testing::AssertionFailure() << "victim " << id << " may not be evicted";
      room[node] += c.request;
      if (c.gang != 0)
        ++evicted[c.gang];
    }
  }
  for (const auto& [gang, count] : evicted) {
    int32_t spare = 0;
    for (const auto& g : w.gangs)
      if (g.gang == gang)
        spare = std::max(0, g.ready - g.min_member);
    int32_t live = 0;
    for (const auto& c : w.candidates)
      live += c.gang == gang && w.view.is_live(c.node) ? 1 : 0;
    if (count > spare && count != live)
      return ::testing::AssertionFailure()
             << "gang " << gang << " loses " << count << " of " << live << " with spare " << spare;
  }
  if (auto queues = queue_rule_holds(w, plan); !queues)
    return queues;
  std::map<uint32_t, resources> placed;
  for (const auto& p : plan.placements) {
    if (p.pod >= w.pods.size() || p.node >= w.view.size() || !w.view.is_live(p.node))
      return ::testing::AssertionFailure() << "bad placement";
    placed[uint32_t(p.node)] += w.pods[p.pod].requests;
  }
  for (const auto& [node, amount] : placed)
    if (!fits(amount, w.view.free(node) + room[node]))
      return ::testing::AssertionFailure() << "node " << node << " overcommitted";
  return ::testing::AssertionSuccess();
}

// One row of a table: a scenario and the victims expected (found) or the detail (not found).
struct row {
  const char* name;
  scenario s;
  victim_list victims = {};
  const char* detail = nullptr;  // Set: not found, with exactly this detail.
};

void check(const row& r) {
  SCOPED_TRACE(r.name);
  world w(r.s);
  auto plan = w.plan();
  EXPECT_TRUE(valid(w, plan));
  if (r.detail != nullptr) {
    EXPECT_FALSE(plan.found);
    EXPECT_EQ(plan.detail, r.detail);
    return;
  }
  ASSERT_TRUE(plan.found) << plan.detail;
  EXPECT_EQ(plan.victims_by_node, r.victims);
  std::size_t count = 0;
  for (const auto& [node, ids] : r.victims)
    count += ids.size();
  EXPECT_EQ(plan.victim_count(), count);
}

node cpu_node(std::string name, std::string_view cpu) {
  return make_node(std::move(name)).cpu(cpu).memory("16Gi");
}

pod wants(std::string name, std::string_view cpu) { return make_pod(std::move(name)).cpu(cpu); }

resources cpu(std::string_view amount) { return res("cpu", amount); }

TEST(Preemption, NotFoundWhenNothingBelowCanMakeRoom) {
  const row rows[] = {
      {"equal priority is never evicted",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 10, 5, cpu("4")}},
        .preemptor = {wants("p", "2")}},
       {},
       "no lower-priority pods of the queue can make room: of its 1 bound pod, 1 has priority "
       "10 or higher"},
      {"higher priority, and lower on a removed node",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "4")},
        .bound = {{1, 0, 20, 5, cpu("4")}, {2, 1, 1, 5, cpu("4")}},
        .removed = {1},
        .preemptor = {wants("p", "2")}},
       {},
       "no lower-priority pods of the queue can make room: of its 2 bound pods, 1 has priority "
       "10 or higher and 1 is on a removed node"},
      {"no bound pods",
       {.nodes = {cpu_node("n0", "4")},
        .others = {{0, cpu("4")}},
        .preemptor = {wants("p", "2")}},
       {},
       "no lower-priority pods of the queue can make room: it has no bound pods"},
      {"evicting every lower-priority pod is not enough",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 1, 5, cpu("2")}},
        .others = {{0, cpu("2")}},
        .preemptor = {wants("p", "4")}},
       {},
       // The planner's detail on the room the victims would free.
       "p needs 4 cpu per pod for 1 pod; the most free on any node is 2 cpu (n0); 1 node lacks "
       "cpu"},
      {"bigger than every node",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 1, 5, cpu("4")}},
        .preemptor = {wants("p", "8")}},
       {},
       "p needs 8 cpu per pod; the most allocatable on any matching node is 4 cpu (n0); 1 node "
       "can never fit it"},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, EvictsTheLowestPriorityThenTheMostRecentlyStarted) {
  const row rows[] = {
      {"a single lower-priority pod",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 1, 10, cpu("2")}, {2, 0, 20, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{0, {1}}}},
      {"the lowest priority on a node, though it started earlier",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 5, 20, cpu("2")}, {2, 0, 1, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{0, {2}}}},
      {"the lowest priority on the second node",
       {.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2")},
        .bound = {{1, 0, 5, 20, cpu("2")}, {2, 1, 1, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{1, {2}}}},
      {"the lowest priority on the first node",
       {.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2")},
        .bound = {{1, 0, 1, 10, cpu("2")}, {2, 1, 5, 20, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{0, {1}}}},
      {"the most recently started on a node",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 1, 10, cpu("2")}, {2, 0, 1, 20, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{0, {2}}}},
      {"the most recently started on the first node",
       {.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2")},
        .bound = {{1, 0, 1, 20, cpu("2")}, {2, 1, 1, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{0, {1}}}},
      {"the most recently started on the second node",
       {.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2")},
        .bound = {{1, 0, 1, 10, cpu("2")}, {2, 1, 1, 20, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{1, {2}}}},
      {"the larger pod id on a tie",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{7, 0, 1, 10, cpu("2")}, {9, 0, 1, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {{0, {9}}}},
      {"nothing when it fits now",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 1, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {}},
      {"nothing when it fits now, though binpack would like the node of a victim",
       {.nodes = {cpu_node("n0", "8"), cpu_node("n1", "8")},
        .bound = {{1, 0, 20, 10, cpu("6")}, {2, 0, 1, 10, cpu("2")}},
        .preemptor = {wants("p", "2")}},
       {}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, PrefersTheFewestVictimsAtTheLowestPriority) {
  node zone_a = make_node("n0").cpu("4").memory("16Gi").label("zone", "a");
  node zone_b = make_node("n1").cpu("2").memory("16Gi").label("zone", "b");
  node zone_b_big = make_node("n1").cpu("4").memory("16Gi").label("zone", "b");
  const row rows[] = {
      {"one big pod rather than two small ones",
       {.nodes = {cpu_node("n0", "8")},
        .bound = {{1, 0, 1, 10, cpu("4")}, {2, 0, 1, 20, cpu("2")}, {3, 0, 1, 30, cpu("2")}},
        .preemptor = {wants("p", "4")}},
       {{0, {1}}}},
      {"one big pod on another node rather than two small ones",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "4")},
        .bound = {{2, 0, 1, 20, cpu("2")}, {3, 0, 1, 30, cpu("2")}, {1, 1, 1, 10, cpu("4")}},
        .preemptor = {wants("p", "4")}},
       {{1, {1}}}},
      {"two small ones when the big one has a higher priority",
       {.nodes = {cpu_node("n0", "8")},
        .bound = {{1, 0, 2, 10, cpu("4")}, {2, 0, 1, 20, cpu("2")}, {3, 0, 1, 30, cpu("2")}},
        .preemptor = {wants("p", "4")}},
       {{0, {3, 2}}}},
      {"lower-priority pods on a node, though a higher one there would make room alone",
       // Pod 3 of priority 2 must go for b; on n0, pods 1 and 2 of priority 1 go rather than
       // pod 4 of priority 2.
       {.nodes = {make_node("n0").cpu("8").memory("16Gi").label("zone", "a"), zone_b_big},
        .bound = {{1, 0, 1, 20, cpu("2")},
                  {2, 0, 1, 30, cpu("2")},
                  {4, 0, 2, 10, cpu("4")},
                  {3, 1, 2, 40, cpu("4")}},
        .preemptor = {make_pod("a").cpu("4").selector("zone", "a"),
                      make_pod("b").cpu("4").selector("zone", "b")}},
       {{0, {2, 1}}, {1, {3}}}},
      {"a pod made unnecessary by a whole gang stays",
       // n0 is covered first, by pod 1; then n1 needs gang 100 whole, whose pod 2 on n0 makes
       // room there too, so pod 1 is dropped again.
       {.nodes = {zone_a, zone_b},
        .bound = {{1, 0, 1, 30, cpu("2")},
                  {2, 0, 1, 10, cpu("2"), 100},
                  {3, 1, 1, 10, cpu("2"), 100}},
        .gangs = {{100, 2, 2}},
        .preemptor = {make_pod("a").cpu("2").selector("zone", "a"),
                      make_pod("b").cpu("2").selector("zone", "b")}},
       {{0, {2}}, {1, {3}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, KeepsVictimGangsAtTheirMinMember) {
  // Gang 100: ready 3, minMember 2, so one pod to spare; pods 1 and 2 on n0, pod 3 on n1.
  node zone_a = make_node("n0").cpu("4").memory("16Gi").label("zone", "a");
  std::vector<bound_pod> gang_100 = {{1, 0, 1, 10, cpu("2"), 100},
                                     {2, 0, 1, 20, cpu("2"), 100},
                                     {3, 1, 1, 30, cpu("2"), 100}};
  auto with = [&](bound_pod extra) {
    auto out = gang_100;
    out.push_back(std::move(extra));
    return out;
  };
  const row rows[] = {
      {"a gang with a spare pod loses one",
       {.nodes = {zone_a, cpu_node("n1", "2")},
        .bound = gang_100,
        .gangs = {{100, 3, 2}},
        .preemptor = {make_pod("p").cpu("2").selector("zone", "a")}},
       {{0, {2}}}},
      {"two needed: the whole gang goes, on every node",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "2")},
        .bound = gang_100,
        .gangs = {{100, 3, 2}},
        .preemptor = {wants("p", "4")}},
       {{0, {2, 1}}, {1, {3}}}},
      {"a gang with room to spare loses the pods needed, not all of them",
       {.nodes = {cpu_node("n0", "8")},
        .bound = {{11, 0, 1, 11, cpu("2"), 200},
                  {12, 0, 1, 12, cpu("2"), 200},
                  {13, 0, 1, 13, cpu("2"), 200},
                  {14, 0, 1, 14, cpu("2"), 200}},
        .gangs = {{200, 4, 2}},
        .preemptor = {wants("p", "4")}},
       {{0, {14, 13}}}},
      {"two needed: a pod of its own that makes room alone goes instead",
       {.nodes = {cpu_node("n0", "8"), cpu_node("n1", "2")},
        .bound = with({4, 0, 1, 5, cpu("4")}),
        .gangs = {{100, 3, 2}},
        .preemptor = {wants("p", "4")}},
       {{0, {4}}}},
      {"no spare: the whole gang goes",
       {.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2")},
        .bound = {{1, 0, 1, 10, cpu("2"), 200}, {2, 1, 1, 20, cpu("2"), 200}},
        .gangs = {{200, 2, 2}},
        .preemptor = {wants("p", "2")}},
       {{0, {1}}, {1, {2}}}},
      {"no spare: or none of it when a pod of its own makes room",
       {.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2"), cpu_node("n2", "2")},
        .bound = {{1, 0, 1, 10, cpu("2"), 200},
                  {2, 1, 1, 20, cpu("2"), 200},
                  {3, 2, 1, 5, cpu("2")}},
        .gangs = {{200, 2, 2}},
        .preemptor = {wants("p", "2")}},
       {{2, {3}}}},
      {"a lower-priority gang whole, though a higher one there would make room alone",
       // Pod 3 of priority 2 must go for b; on n0, gang 100 of priority 1 goes rather than gang
       // 200 of priority 2, though that one has fewer pods.
       {.nodes = {make_node("n0").cpu("8").memory("16Gi").label("zone", "a"),
                  make_node("n1").cpu("4").memory("16Gi").label("zone", "b")},
        .bound = {{1, 0, 1, 20, cpu("2"), 100},
                  {2, 0, 1, 30, cpu("2"), 100},
                  {4, 0, 2, 10, cpu("4"), 200},
                  {3, 1, 2, 40, cpu("4")}},
        .gangs = {{100, 2, 2}, {200, 1, 1}},
        .preemptor = {make_pod("a").cpu("4").selector("zone", "a"),
                      make_pod("b").cpu("4").selector("zone", "b")}},
       {{0, {2, 1}}, {1, {3}}}},
      {"a lower-priority gang whole, though a higher pod there would make room alone",
       {.nodes = {make_node("n0").cpu("8").memory("16Gi").label("zone", "a"),
                  make_node("n1").cpu("4").memory("16Gi").label("zone", "b")},
        .bound = {{1, 0, 1, 20, cpu("2"), 100},
                  {2, 0, 1, 30, cpu("2"), 100},
                  {4, 0, 2, 10, cpu("4")},
                  {3, 1, 2, 40, cpu("4")}},
        .gangs = {{100, 2, 2}},
        .preemptor = {make_pod("a").cpu("4").selector("zone", "a"),
                      make_pod("b").cpu("4").selector("zone", "b")}},
       {{0, {2, 1}}, {1, {3}}}},
      {"lower-priority pods, though a higher gang there would make room alone",
       {.nodes = {make_node("n0").cpu("8").memory("16Gi").label("zone", "a"),
                  make_node("n1").cpu("4").memory("16Gi").label("zone", "b")},
        .bound = {{1, 0, 1, 20, cpu("2")},
                  {2, 0, 1, 30, cpu("2")},
                  {4, 0, 2, 10, cpu("4"), 200},
                  {3, 1, 2, 40, cpu("4")}},
        .gangs = {{200, 1, 1}},
        .preemptor = {make_pod("a").cpu("4").selector("zone", "a"),
                      make_pod("b").cpu("4").selector("zone", "b")}},
       {{0, {2, 1}}, {1, {3}}}},
      {"of two gangs that make room alone, the one with fewer pods",
       // Gang 100 started last, but it would cost three pods; gang 200 costs one.
       {.nodes = {make_node("n0").cpu("8").memory("16Gi").label("zone", "a"),
                  cpu_node("n1", "4"), cpu_node("n2", "4")},
        .bound = {{1, 0, 1, 30, cpu("4"), 100},
                  {2, 1, 1, 30, cpu("4"), 100},
                  {3, 2, 1, 30, cpu("4"), 100},
                  {4, 0, 1, 10, cpu("4"), 200}},
        .gangs = {{100, 3, 3}, {200, 1, 1}},
        .preemptor = {make_pod("a").cpu("4").selector("zone", "a")}},
       {{0, {4}}}},
      {"a gang whose pods disagree on priority counts at the highest",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "2")},
        .bound = {{1, 0, 1, 20, cpu("2"), 100},
                  {2, 0, 20, 10, cpu("2"), 100},
                  {3, 1, 5, 10, cpu("2")}},
        .gangs = {{100, 2, 1}},
        .preemptor = {wants("p", "2")}},
       {{1, {3}}}},
      {"a gang missing from the gangs given has no spare",
       {.nodes = {cpu_node("n0", "4")},
        .bound = {{1, 0, 1, 10, cpu("2"), 300}, {2, 0, 1, 20, cpu("2"), 300}},
        .preemptor = {wants("p", "2")}},
       {{0, {2, 1}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, PlacesAGangPreemptorOnTwoNodes) {
  scenario s{.nodes = {cpu_node("n0", "4"), cpu_node("n1", "4"), cpu_node("n2", "4")},
             .bound = {{1, 0, 1, 10, cpu("4")}, {2, 1, 1, 20, cpu("4")}, {3, 2, 5, 30, cpu("4")}},
             .preemptor = make_gang("hi", 2).task("worker", 2, cpu("4")).obj().pods};
  check({"both pods of the gang", s, {{0, {1}}, {1, {2}}}});

  // A third pod beyond the minimum of two is not preempted for.
  s.preemptor = make_gang("hi", 2).task("worker", 3, cpu("4")).obj().pods;
  s.min_pods = 2;
  check({"only the minimum", s, {{0, {1}}, {1, {2}}}});

  world w(s);
  auto plan = w.plan();
  ASSERT_EQ(plan.placements.size(), 2u);
  EXPECT_EQ(std::set<std::size_t>({plan.placements[0].node, plan.placements[1].node}),
            std::set<std::size_t>({0, 1}));
}

TEST(Preemption, EvictsForExtendedResources) {
  auto gpu_node = [](std::string name) {
    return make_node(std::move(name)).cpu("8").memory("16Gi").gpu(4).obj();
  };
  const row rows[] = {
      {"a GPU pod rather than a more recent one without GPUs",
       {.nodes = {gpu_node("n0")},
        .bound = {{1, 0, 1, 10, res("cpu", "1", "nvidia.com/gpu", "2")},
                  {2, 0, 1, 20, cpu("4")},
                  {3, 0, 20, 5, res("cpu", "1", "nvidia.com/gpu", "2")}},
        .preemptor = {make_pod("p").cpu("1").gpu(2)}},
       {{0, {1}}}},
      {"one pod of 4 GPUs rather than two of 2",
       {.nodes = {gpu_node("n0"), gpu_node("n1")},
        .bound = {{1, 0, 1, 20, res("cpu", "1", "nvidia.com/gpu", "2")},
                  {2, 0, 1, 30, res("cpu", "1", "nvidia.com/gpu", "2")},
                  {3, 1, 1, 10, res("cpu", "1", "nvidia.com/gpu", "4")}},
        .preemptor = {make_pod("p").cpu("1").gpu(4)}},
       {{1, {3}}}},
      {"two of 2 GPUs when the pod of 4 has a higher priority",
       {.nodes = {gpu_node("n0"), gpu_node("n1")},
        .bound = {{1, 0, 1, 20, res("cpu", "1", "nvidia.com/gpu", "2")},
                  {2, 0, 1, 30, res("cpu", "1", "nvidia.com/gpu", "2")},
                  {3, 1, 2, 10, res("cpu", "1", "nvidia.com/gpu", "4")}},
        .preemptor = {make_pod("p").cpu("1").gpu(4)}},
       {{0, {2, 1}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, LeavesPodsOnRemovedNodesAlone) {
  const row rows[] = {
      {"a higher-priority pod on a live node instead",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "4")},
        .bound = {{1, 0, 5, 10, cpu("4")}, {2, 1, 1, 20, cpu("4")}},
        .removed = {1},
        .preemptor = {wants("p", "4")}},
       {{0, {1}}}},
      {"a whole gang goes without its pod on a removed node",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "4")},
        .bound = {{1, 0, 1, 10, cpu("4"), 100}, {2, 1, 1, 20, cpu("4"), 100}},
        .gangs = {{100, 2, 2}},
        .removed = {1},
        .preemptor = {wants("p", "4")}},
       {{0, {1}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, IsDeterministic) {
  // Six full nodes with two pods each; priorities 1 and 2, distinct start times. Three pods of
  // 2 cpu need three victims: the three priority-1 pods started last, whatever the seed.
  scenario s{.preemptor = make_gang("hi", 3).task("worker", 3, cpu("2")).obj().pods};
  for (int i = 0; i < 6; ++i)
    s.nodes.push_back(cpu_node("n" + std::to_string(i), "4"));
  for (uint64_t id = 1; id <= 12; ++id)
    s.bound.push_back({id, uint32_t((id - 1) / 2), id % 3 == 0 ? 1 : 2, int(id * 7 % 13),
                       cpu("2")});
  // Priority 1: pods 3, 6, 9, 12, started at 8, 3, 11 and 6.
  const victim_list expected = {{1, {3}}, {4, {9}}, {5, {12}}};
  world w(s);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    auto first = w.plan(seed);
    EXPECT_TRUE(valid(w, first));
    EXPECT_EQ(first.victims_by_node, expected);
    EXPECT_EQ(w.plan(seed), first);
  }
}

// Reclaim: victims of any priority (the caller passes the highest), limited by their queues.
constexpr int32_t reclaim = std::numeric_limits<int32_t>::max();

victim_queue queue(uint32_t id, std::string_view allocated, std::string_view deserved,
                   std::string_view guarantee = "0") {
  return {id, cpu(allocated), cpu(deserved), cpu(guarantee)};
}

// Six full nodes of 2 cpu. Queue 1 (pods 1-4, priority 1) holds 8 cpu; queue 2 (pods 5 and 6,
// priority 2) holds 4 cpu with a deserved share of 1. The preemptor needs four nodes.
scenario two_queues(std::string_view deserved_1) {
  scenario s{.queues = {queue(1, "8", deserved_1), queue(2, "4", "1")},
             .preemptor = make_gang("hi", 4).task("worker", 4, cpu("2")).obj().pods,
             .priority = reclaim};
  for (uint32_t n = 0; n < 6; ++n) {
    s.nodes.push_back(cpu_node("n" + std::to_string(n), "2"));
    const uint64_t id = n + 1;
    s.bound.push_back({id, n, n < 4 ? 1 : 2, int(id * 10), cpu("2"), 0, n < 4 ? 1u : 2u});
  }
  return s;
}

TEST(Preemption, ReclaimTakesAQueueDownToAboutItsDeservedShare) {
  node zone_a = make_node("n0").cpu("4").memory("16Gi").label("zone", "a");
  node zone_b = make_node("n1").cpu("2").memory("16Gi").label("zone", "b");
  const row rows[] = {
      // 8 > 4, 6 > 4, then 4 is within: two pods of queue 1, the most recently started.
      {"over its deserved share by two pods: it loses two, the other queue the rest",
       two_queues("4"),
       {{2, {3}}, {3, {4}}, {4, {5}}, {5, {6}}}},
      // 8, 6 and 4 are over 3; 2 is not: it ends a pod below its deserved share.
      {"it may end one pod below its deserved share",
       two_queues("3"),
       {{1, {2}}, {2, {3}}, {3, {4}}, {5, {6}}}},
      // Queue 1 may lose one pod: the plan relies on pod 1 (on n1) and on pod 3 of queue 2 (on
      // n0). Covering n0 first, pod 2 of queue 1 (priority 1) would go and spend that budget;
      // pod 1 could then not go, so the plan's own victims are taken.
      {"the cover leaves a queue's budget to the victim the plan relies on",
       {.nodes = {zone_a, zone_b},
        .bound = {{2, 0, 1, 30, cpu("2"), 0, 1},
                  {3, 0, 2, 10, cpu("2"), 0, 2},
                  {1, 1, 1, 40, cpu("2"), 0, 1}},
        .queues = {queue(1, "4", "3"), queue(2, "2", "0")},
        .preemptor = {make_pod("a").cpu("2").selector("zone", "a"),
                      make_pod("b").cpu("2").selector("zone", "b")},
        .priority = reclaim},
       {{0, {3}}, {1, {1}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, ReclaimLeavesQueuesWithinTheirDeservedShareAlone) {
  // Queue 1 (pods 1 and 2 on n0, the lowest priority) holds its deserved share exactly.
  std::vector<bound_pod> within = {{1, 0, 1, 10, cpu("2"), 0, 1}, {2, 0, 1, 20, cpu("2"), 0, 1}};
  auto with = [&](std::vector<bound_pod> extra) {
    auto out = within;
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  };
  const row rows[] = {
      {"a higher-priority pod of a queue over its deserved share instead",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "2")},
        .bound = with({{3, 1, 5, 5, cpu("2"), 0, 2}}),
        .queues = {queue(1, "4", "4"), queue(2, "2", "0")},
        .preemptor = {wants("p", "2")},
        .priority = reclaim},
       {{1, {3}}}},
      {"within its deserved share in every dimension it holds",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "2")},
        .bound = with({{3, 1, 5, 5, cpu("2"), 0, 2}}),
        .queues = {{1, cpu("4"), res("cpu", "4", "memory", "1Gi"), {}}, queue(2, "2", "0")},
        .preemptor = {wants("p", "2")},
        .priority = reclaim},
       {{1, {3}}}},
      {"a queue not given is never reclaimed from",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "2"), cpu_node("n2", "2")},
        .bound = with({{3, 1, 5, 5, cpu("2"), 0, 2}, {4, 2, 0, 50, cpu("2"), 0, 3}}),
        .queues = {queue(1, "4", "4"), queue(2, "2", "0")},
        .preemptor = {wants("p", "2")},
        .priority = reclaim},
       {{1, {3}}}},
      {"nothing when no queue is over its deserved share",
       {.nodes = {cpu_node("n0", "4"), cpu_node("n1", "2")},
        .bound = with({{4, 1, 0, 50, cpu("2"), 0, 3}}),
        .queues = {queue(1, "4", "6")},
        .preemptor = {wants("p", "2")},
        .priority = reclaim},
       {},
       "no pods of queues over their deserved share can make room: of their 3 bound pods, 1 is "
       "of a queue not given and 2 are kept by their queues' deserved shares or guarantees"},
      {"nothing when no queue has bound pods",
       {.nodes = {cpu_node("n0", "4")},
        .queues = {queue(1, "0", "0")},
        .others = {{0, cpu("4")}},
        .preemptor = {wants("p", "2")},
        .priority = reclaim},
       {},
       "no pods of queues over their deserved share can make room: they have no bound pods"},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, ReclaimStopsAtTheGuarantee) {
  auto guarded = [](std::string_view guarantee) {
    scenario s = two_queues("2");
    s.queues[0] = queue(1, "8", "2", guarantee);
    s.preemptor = make_gang("hi", 2).task("worker", 2, cpu("2")).obj().pods;
    return s;
  };
  auto guarded_memory = [&] {
    scenario s = guarded("0");
    for (auto& b : s.bound)
      if (b.queue == 1)
        b.request = res("cpu", "2", "memory", "2Gi");
    s.queues[0] = {1, res("cpu", "8", "memory", "8Gi"), cpu("2"), res("memory", "6Gi")};
    return s;
  };
  const row rows[] = {
      // 8 - 2 = 6 keeps the guarantee, 6 - 2 = 4 would not.
      {"over its deserved share, it loses only down to its guarantee",
       guarded("6"),
       {{3, {4}}, {5, {6}}}},
      {"a guarantee of all it holds keeps everything",
       guarded("8"),
       {{4, {5}}, {5, {6}}}},
      {"a guarantee in another dimension",
       guarded_memory(),
       {{3, {4}}, {5, {6}}}},
      {"without a guarantee, the lowest priority",
       guarded("0"),
       {{2, {3}}, {3, {4}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, ReclaimCountsAWholeVictimGangAgainstItsQueue) {
  // Gang 100 of queue 1 (no spare: ready 2, minMember 2) on n0 and n1, priority 1; pod 3 of
  // queue 2 on n2, priority 5. Queue 1 holds 4 cpu.
  auto gang = [](victim_queue limit, int32_t ready = 2) {
    return scenario{.nodes = {cpu_node("n0", "2"), cpu_node("n1", "2"), cpu_node("n2", "2")},
                    .bound = {{1, 0, 1, 10, cpu("2"), 100, 1},
                              {2, 1, 1, 20, cpu("2"), 100, 1},
                              {3, 2, 5, 30, cpu("2"), 0, 2}},
                    .gangs = {{100, ready, 2}},
                    .queues = {limit, queue(2, "2", "0")},
                    .preemptor = {wants("p", "2")},
                    .priority = reclaim};
  };
  scenario spare = gang(queue(1, "6", "5"), 3);
  spare.nodes.push_back(cpu_node("n3", "2"));
  spare.bound.push_back({4, 3, 1, 40, cpu("2"), 100, 1});
  const row rows[] = {
      // 4 > 1, 2 > 1: both pods may go, one after the other.
      {"the whole gang when its queue may lose all of it",
       gang(queue(1, "4", "1")),
       {{0, {1}}, {1, {2}}}},
      // 4 > 3, but then 2 is within: one pod could go, the gang only whole.
      {"not the gang when its second pod would break the rule",
       gang(queue(1, "4", "3")),
       {{2, {3}}}},
      {"not the gang when its second pod would break the guarantee",
       gang(queue(1, "4", "1", "1")),
       {{2, {3}}}},
      // 6 > 5 lets its spare pod go alone (the most recently started), not the rest.
      {"a spare pod alone when the rest would break the rule",
       spare,
       {{3, {4}}}},
  };
  for (const auto& r : rows)
    check(r);
}

TEST(Preemption, ReclaimWithoutQueuesIsPreemption) {
  // The same pods with no queue limit: the four of priority 1, as preemption takes them.
  scenario s = two_queues("4");
  s.queues.clear();
  check({"no queue limit", s, {{0, {1}}, {1, {2}}, {2, {3}}, {3, {4}}}});
  // Queues that allow everything change nothing either.
  s.queues = {queue(1, "8", "0"), queue(2, "4", "0")};
  check({"limits that allow everything", s, {{0, {1}}, {1, {2}}, {2, {3}}, {3, {4}}}});
}

TEST(Preemption, ReclaimIsDeterministic) {
  // Six full nodes with two pods of 2 cpu each, all of priority 1; pod k is in queue k % 3 and
  // started at k * 7 % 13. Queue 0 may lose two pods, queue 1 one, queue 2 none. By start: 11
  // (queue 2, kept), 9 (queue 0), 7 (queue 1), 5 (queue 2, kept), 3 (queue 0).
  scenario s{.queues = {queue(0, "8", "4"), queue(1, "8", "6"), queue(2, "8", "8")},
             .preemptor = make_gang("hi", 3).task("worker", 3, cpu("2")).obj().pods,
             .priority = reclaim};
  for (int i = 0; i < 6; ++i)
    s.nodes.push_back(cpu_node("n" + std::to_string(i), "4"));
  for (uint64_t id = 1; id <= 12; ++id)
    s.bound.push_back(
        {id, uint32_t((id - 1) / 2), 1, int(id * 7 % 13), cpu("2"), 0, uint32_t(id % 3)});
  const victim_list expected = {{1, {3}}, {3, {7}}, {4, {9}}};
  world w(s);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    auto first = w.plan(seed);
    EXPECT_TRUE(valid(w, first));
    EXPECT_EQ(first.victims_by_node, expected);
    EXPECT_EQ(w.plan(seed), first);
  }
}

} // namespace
} // namespace phalanx::scheduler
