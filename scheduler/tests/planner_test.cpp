#include "scheduler/planner.hpp"
#include "scheduler/pod_neighbourhood.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;

// Checks what every successful plan promises: each pod placed at most once, on a live node
// whose static predicates pass, within the node's free resources (all placements together),
// at least min_pods placements and every role minimum.
::testing::AssertionResult valid_plan(const node_view& view, const gang_request& request,
                                      const plan_result& r) {
  if (r.code != plan_code::success)
    return ::testing::AssertionFailure() << "code " << to_string(r.code) << ": " << r.detail;
  std::set<std::size_t> seen;
  std::map<std::size_t, resources> used;
  std::map<std::string, int64_t> per_role;
  for (const auto& p : r.placements) {
    if (p.pod >= request.pods.size() || p.node >= view.size())
      return ::testing::AssertionFailure() << "index out of range";
    if (!seen.insert(p.pod).second)
      return ::testing::AssertionFailure() << "pod " << p.pod << " placed twice";
    if (!view.is_live(p.node))
      return ::testing::AssertionFailure() << "dead node " << p.node;
    const pod& pd = *request.pods[p.pod];
    auto v = check_static(view.at(p.node), pd.constraints.get(), pd.requests);
    if (!v.ok())
      return ::testing::AssertionFailure()
             << "pod " << p.pod << " on node " << p.node << " fails " << to_string(v.failure);
    used[p.node] += pd.requests;
    ++per_role[pd.role.str()];
  }
  for (const auto& [n, amount] : used) {
    resources free;
    view.read_free(n, free);
    if (!fits(amount, free))
      return ::testing::AssertionFailure() << "node " << n << " overcommitted";
  }
  if (int64_t(r.placements.size()) < request.min_pods)
    return ::testing::AssertionFailure() << "only " << r.placements.size() << " placements";
  for (const auto& rm : request.min_per_role)
    if (per_role[rm.role] < rm.min)
      return ::testing::AssertionFailure() << "role " << rm.role << " has " << per_role[rm.role];
  return ::testing::AssertionSuccess();
}

struct fixture {
  cluster_snapshot view;
  std::vector<pod> pods;
  std::vector<const pod*> pointers;

  void add_pods(std::vector<pod> ps) {
    pods = std::move(ps);
    pointers.clear();
    for (const auto& p : pods)
      pointers.push_back(&p);
  }
  gang_request request(int32_t min_pods, std::vector<role_minimum> roles = {},
                       bool extra = true) const {
    gang_request r;
    r.pods = pointers;
    r.min_pods = min_pods;
    r.min_per_role = std::move(roles);
    r.place_extra = extra;
    return r;
  }
};

TEST(plan_code, every_value_has_a_distinct_name) {
  std::set<std::string_view> names;
  for (int i = 0; i <= int(plan_code_last); ++i) {
    auto name = to_string(plan_code(i));
    EXPECT_NE(name, "unknown");
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size_t(plan_code_last) + 1);
  EXPECT_EQ(to_string(plan_code::success), "Success");
  EXPECT_EQ(to_string(plan_code::unschedulable), "Unschedulable");
}

TEST(planner, binpack_fills_a_node_and_spread_spreads) {
  for (auto strategy : {score_strategy::binpack, score_strategy::spread}) {
    fixture f;
    for (int i = 0; i < 4; ++i)
      f.view.add_node(make_node("n" + std::to_string(i)).cpu("8").memory("32Gi"));
    // n2 is partly used: binpack prefers it, spread avoids it.
    f.view.allocate(2, res("cpu", "4", "memory", "16Gi"));
    f.add_pods(make_gang("g", 2).task("worker", 2, res("cpu", "2", "memory", "8Gi")).obj().pods);
    planner_config cfg;
    cfg.strategy = strategy;
    gang_planner planner(cfg);
    rng random(7);
    auto req = f.request(2);
    auto r = planner.plan(f.view, req, random);
    ASSERT_TRUE(valid_plan(f.view, req, r));
    ASSERT_EQ(r.placements.size(), 2u);
    if (strategy == score_strategy::binpack) {
      EXPECT_EQ(r.placements[0].node, 2u);
      EXPECT_EQ(r.placements[1].node, 2u);
    } else {
      EXPECT_NE(r.placements[0].node, 2u);
      EXPECT_NE(r.placements[1].node, 2u);
      EXPECT_NE(r.placements[0].node, r.placements[1].node);
    }
  }
}

// The exact strings of DESIGN.md section 1 and the brief: Volcano's diagnosis and our detail.
TEST(planner, unschedulable_names_resource_amount_and_nodes) {
  fixture f;
  for (int i = 0; i < 6; ++i)
    f.view.add_node(make_node("node-" + std::to_string(i)).cpu("4").memory("16Gi"));
  for (std::size_t i = 0; i < 6; ++i)
    f.view.allocate(i, res("cpu", i == 4 ? "2500m" : "3"));
  f.add_pods(make_gang("tf", 4).task("worker", 3, res("cpu", "2")).obj().pods);
  gang_planner planner;
  rng random(1);
  auto r = planner.plan(f.view, f.request(3), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.origin.to_volcano_string(), "0/6 nodes are unavailable: 6 Insufficient cpu.");
  EXPECT_FALSE(r.origin.all_unresolvable());
  EXPECT_EQ(r.detail,
            "worker needs 2 cpu per pod for 3 pods; the most free on any node is 1500m cpu "
            "(node-4); 6 nodes lack cpu");
  EXPECT_TRUE(r.placements.empty());

  gang_status_counts counts;
  counts.total = 4;
  counts.running = 1;
  counts.pending = 3;
  counts.min_available = 4;
  // Volcano lists every task status with a count, so "3 Pending" appears between "1 Running"
  // and "4 minAvailable" (the strings sort that way).
  EXPECT_EQ(gang_unschedulable_message(counts, "worker-2", r.origin, r.detail),
            "3/4 tasks in gang unschedulable: pod group is not ready, 1 Running, 3 Pending, 4 "
            "minAvailable; Pending: 3 Unschedulable. Origin reason is worker-2: 0/6 nodes are "
            "unavailable: 6 Insufficient cpu. worker needs 2 cpu per pod for 3 pods; the most "
            "free on any node is 1500m cpu (node-4); 6 nodes lack cpu.");
}

// Two nodes, one short of cpu and one short of memory: each resource is named with the node
// short of it, and the most free of it anywhere (15 cpu, on the node memory rules out) is not
// offered as if it could help.
// n-0 with 1 cpu free, n-1 with 15 cpu and 1Gi memory free.
void add_cpu_full_and_memory_full_nodes(fixture& f) {
  f.view.add_node(make_node("n-0").cpu("16").memory("32Gi"));
  f.view.add_node(make_node("n-1").cpu("16").memory("32Gi"));
  f.view.allocate(0, res("cpu", "15"));
  f.view.allocate(1, res("cpu", "1") + res("memory", "31Gi"));
}

TEST(planner, detail_names_each_short_resource_where_it_is_short) {
  fixture f;
  add_cpu_full_and_memory_full_nodes(f);
  f.add_pods({make_pod("w-0").cpu("2").memory("2Gi").role("worker")});
  gang_planner planner;
  rng random(5);
  auto r = planner.plan(f.view, f.request(1), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.detail,
            "worker needs 2 cpu, 2Gi memory per pod for 1 pod; cpu: 1 node short, the most "
            "free 1 cpu (n-0); memory: 1 node short, the most free 1Gi memory (n-1); no node "
            "has both");

  // A third node with room for one of two: the count replaces "no node has both".
  fixture g;
  add_cpu_full_and_memory_full_nodes(g);
  g.view.add_node(make_node("n-2").cpu("2").memory("2Gi"));
  g.add_pods({make_pod("w-0").cpu("2").memory("2Gi").role("worker"),
              make_pod("w-1").cpu("2").memory("2Gi").role("worker")});
  auto two = planner.plan(g.view, g.request(2), random);
  EXPECT_EQ(two.code, plan_code::unschedulable);
  EXPECT_EQ(two.detail,
            "worker needs 2 cpu, 2Gi memory per pod for 2 pods; cpu: 1 node short, the most "
            "free 1 cpu (n-0); memory: 1 node short, the most free 1Gi memory (n-1); the nodes "
            "have room for 1 of them");
}

TEST(planner, diagnosis_counts_taints_and_resources_kube_style) {
  fixture f;
  for (int i = 0; i < 4; ++i) {
    f.view.add_node(make_node("busy-" + std::to_string(i)).cpu("4"));
    f.view.allocate(std::size_t(i), res("cpu", "3"));
  }
  f.view.add_node(make_node("gpu-0").cpu("32").gpu(8).taint("gpu", "true"));
  f.view.add_node(make_node("gpu-1").cpu("32").gpu(8).taint("gpu", "true"));
  f.add_pods({make_pod("w-0").cpu("2").role("worker")});
  gang_planner planner;
  rng random(3);
  auto r = planner.plan(f.view, f.request(1), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.origin.to_string(),
            "0/6 nodes are available: 4 Insufficient cpu, 2 node(s) had untolerated taint "
            "{gpu: true}.");
  EXPECT_EQ(r.detail,
            "worker needs 2 cpu per pod for 1 pod; the most free on any node is 1 cpu (busy-0); 4 "
            "nodes lack cpu; 2 nodes are ruled out: 2 untolerated taint");
}

TEST(planner, unresolvable_cases) {
  struct unresolvable_case {
    const char* name;
    std::vector<pod> pods;
    int32_t min_pods;
    std::vector<role_minimum> roles;
    const char* detail; // nullptr: not checked.
    const char* diagnosis;
    bool lacks_pods = false;  // More pods resolve it, not nodes.
  };
  const unresolvable_case cases[] = {
      {"bigger than every node",
       {make_pod("w-0").cpu("16").role("worker")},
       1,
       {},
       "worker needs 16 cpu per pod; the most allocatable on any matching node is 8 cpu "
       "(big); 2 nodes can never fit it",
       "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) were unschedulable."},
      {"selector matches nothing",
       {make_pod("w-0").cpu("1").selector("zone", "mars")},
       1,
       {},
       "no node passes the node selector, affinity, taints and cordons of w-0",
       "0/3 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 1 "
       "node(s) were unschedulable."},
      {"role minimum above the pods given",
       {make_pod("ps-0").cpu("1").role("ps")},
       1,
       {{"ps", 2}},
       "role ps needs 2 pods but the gang has 1 pending",
       "0/3 nodes are available.",
       true},
      {"min pods above the pods given",
       {make_pod("a").cpu("1"), make_pod("b").cpu("1")},
       3,
       {},
       "the gang needs 3 pods but has 2 pending",
       nullptr,
       true},
      {"required role only fits nowhere",
       {make_pod("ps-0").cpu("1").role("ps").selector("zone", "mars"),
        make_pod("w-0").cpu("1").role("worker")},
       1,
       {{"ps", 1}},
       nullptr,
       nullptr},
  };
  for (const auto& c : cases) {
    fixture f;
    f.view.add_node(make_node("small").cpu("2"));
    f.view.add_node(make_node("big").cpu("8"));
    f.view.add_node(make_node("cordoned").cpu("4").unschedulable());
    f.add_pods(c.pods);
    gang_planner planner;
    rng random(5);
    auto r = planner.plan(f.view, f.request(c.min_pods, c.roles), random);
    EXPECT_EQ(r.code, plan_code::unresolvable) << c.name << ": " << r.detail;
    EXPECT_EQ(r.lacks_pods, c.lacks_pods) << c.name;
    if (c.detail) {
      EXPECT_EQ(r.detail, c.detail) << c.name;
    }
    if (c.diagnosis) {
      EXPECT_EQ(r.origin.to_string(), c.diagnosis) << c.name;
    }
    EXPECT_TRUE(r.placements.empty()) << c.name;
  }
}

TEST(planner, pod_count_and_extended_resources_in_the_diagnosis) {
  fixture f;
  f.view.add_node(make_node("full").cpu("64").memory("64Gi").gpu(8).pods(2));
  f.view.allocate(0, res("pods", "2"));
  f.view.add_node(make_node("gpus-busy").cpu("64").memory("64Gi").gpu(8));
  resources six_gpus;
  six_gpus.set("nvidia.com/gpu", 6);
  f.view.allocate(1, six_gpus);
  f.view.add_node(make_node("no-gpu").cpu("64").memory("64Gi"));
  f.add_pods({make_pod("t-0").cpu("1").gpu(4).role("trainer")});
  gang_planner planner;
  rng random(1);
  auto r = planner.plan(f.view, f.request(1), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.origin.to_string(),
            "0/3 nodes are available: 2 Insufficient nvidia.com/gpu, 1 Too many pods.");
  // "full" has 8 GPUs free and no pod slot: it is named for what it lacks, not offered as the
  // node with the most GPUs.
  EXPECT_EQ(r.detail,
            "trainer needs 1 cpu, 4 nvidia.com/gpu per pod for 1 pod; pod slots: 1 node short, "
            "the most free 0 pod slots (full); nvidia.com/gpu: 1 node short, the most free 2 "
            "nvidia.com/gpu (gpus-busy); no node has both; 1 node is ruled out: 1 too small");
  // Only the pod count is short.
  fixture g;
  g.view.add_node(make_node("a").cpu("8").pods(1));
  g.view.allocate(0, res("pods", "1"));
  g.add_pods({make_pod("w-0").cpu("1").role("worker")});
  auto slots = planner.plan(g.view, g.request(1), random);
  EXPECT_EQ(slots.detail,
            "worker needs 1 pod slot per pod for 1 pod; the most free on any node is 0 pod slots "
            "(a); 1 node lacks pod slots");
}

TEST(planner, an_impossible_extra_pod_does_not_make_the_gang_unresolvable) {
  fixture f;
  f.view.add_node(make_node("n").cpu("4"));
  f.add_pods({make_pod("a").cpu("1"), make_pod("b").cpu("1").selector("zone", "mars"),
              make_pod("c").cpu("1")});
  gang_planner planner;
  rng random(1);
  auto req = f.request(2);
  auto r = planner.plan(f.view, req, random);
  ASSERT_TRUE(valid_plan(f.view, req, r));
  EXPECT_EQ(r.placements.size(), 2u);
}

TEST(planner, busy_nodes_are_unschedulable_not_unresolvable) {
  fixture f;
  f.view.add_node(make_node("n").cpu("4"));
  f.view.allocate(0, res("cpu", "4"));
  f.add_pods({make_pod("a").cpu("1")});
  gang_planner planner;
  rng random(1);
  auto r = planner.plan(f.view, f.request(1), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_FALSE(r.origin.all_unresolvable());
}

TEST(planner, role_minimums_come_first) {
  fixture f;
  // Room for three pods in total.
  for (int i = 0; i < 3; ++i)
    f.view.add_node(make_node("n" + std::to_string(i)).cpu("1"));
  // Workers come first in preference order; without the role phase they would take every slot.
  f.add_pods(make_gang("tf", 3)
                 .task("worker", 3, res("cpu", "1"))
                 .task("ps", 1, res("cpu", "1"))
                 .obj()
                 .pods);
  gang_planner planner;
  rng random(2);
  auto req = f.request(3, {{"ps", 1}, {"worker", 2}});
  auto r = planner.plan(f.view, req, random);
  ASSERT_TRUE(valid_plan(f.view, req, r));
  EXPECT_EQ(r.placements.size(), 3u);
  EXPECT_EQ(r.placements.back().pod, 3u) << "the ps pod";
}

TEST(planner, role_minimum_beyond_room_is_unschedulable) {
  fixture f;
  f.view.add_node(make_node("n0").cpu("2"));
  f.add_pods(make_gang("tf", 3).task("worker", 3, res("cpu", "1")).obj().pods);
  gang_planner planner;
  rng random(2);
  auto r = planner.plan(f.view, f.request(1, {{"worker", 3}}), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.origin_pod, 2u);
  EXPECT_EQ(r.detail, "worker needs 1 cpu per pod for 3 pods; the nodes have room for 2 of them");
}

TEST(planner, elastic_extras) {
  struct extra_case {
    bool place_extra;
    int32_t min_pods;
    std::size_t want;
  };
  const extra_case cases[] = {{true, 2, 4}, {false, 2, 2}, {true, 0, 4}, {false, 0, 0}};
  for (const auto& c : cases) {
    fixture f;
    f.view.add_node(make_node("n0").cpu("2"));
    f.view.add_node(make_node("n1").cpu("2"));
    f.add_pods(make_gang("el", 2).task("worker", 5, res("cpu", "1")).obj().pods);
    gang_planner planner;
    rng random(4);
    auto req = f.request(c.min_pods, {}, c.place_extra);
    auto r = planner.plan(f.view, req, random);
    ASSERT_TRUE(valid_plan(f.view, req, r));
    EXPECT_EQ(r.placements.size(), c.want) << c.place_extra << " " << c.min_pods;
  }
}

TEST(planner, failed_plan_leaves_view_untouched_and_repeats_exactly) {
  fixture f;
  for (int i = 0; i < 5; ++i)
    f.view.add_node(make_node("n" + std::to_string(i)).cpu("4").memory("8Gi"));
  f.view.allocate(1, res("cpu", "3"));
  // Nine pods of 2 cpu: room for eight (every node but n1 holds two) plus none on n1.
  f.add_pods(make_gang("g", 9).task("worker", 9, res("cpu", "2", "memory", "1Gi")).obj().pods);
  std::vector<resources> before;
  for (std::size_t i = 0; i < f.view.size(); ++i)
    before.push_back(f.view.free(i));
  gang_planner planner;
  rng a(11);
  rng b(11);
  auto first = planner.plan(f.view, f.request(9), a);
  EXPECT_EQ(first.code, plan_code::unschedulable);
  for (std::size_t i = 0; i < f.view.size(); ++i)
    EXPECT_EQ(f.view.free(i), before[i]) << i;
  auto second = planner.plan(f.view, f.request(9), b);
  EXPECT_EQ(second.code, first.code);
  EXPECT_EQ(second.origin, first.origin);
  EXPECT_EQ(second.origin_pod, first.origin_pod);
  EXPECT_EQ(second.detail, first.detail);
  EXPECT_EQ(second.search_steps, first.search_steps);
  EXPECT_EQ(first.detail,
            "worker needs 2 cpu per pod for 9 pods; the most free on any node is 4 cpu (n0); 1 "
            "node lacks cpu; the nodes have room for 8 of them");

  // The planner's scratch is clean afterwards: a feasible plan succeeds, twice identically.
  rng c(12);
  rng d(12);
  auto ok1 = planner.plan(f.view, f.request(8), c);
  auto ok2 = planner.plan(f.view, f.request(8), d);
  auto req8 = f.request(8);
  ASSERT_TRUE(valid_plan(f.view, req8, ok1));
  EXPECT_EQ(ok1.placements, ok2.placements);
}

TEST(planner, plan_into_reuses_the_result) {
  fixture f;
  for (int i = 0; i < 3; ++i)
    f.view.add_node(make_node("n" + std::to_string(i)).cpu("4"));
  f.add_pods(make_gang("g", 3).task("worker", 3, res("cpu", "1")).obj().pods);
  gang_planner planner;
  rng random(1);
  plan_result out;
  auto req = f.request(3);
  planner.plan(f.view, req, random, out);
  ASSERT_TRUE(valid_plan(f.view, req, out));
  // A failure then a success through the same result object.
  auto req_fail = f.request(3);
  f.view.allocate(0, res("cpu", "4"));
  f.view.allocate(1, res("cpu", "4"));
  f.view.allocate(2, res("cpu", "4"));
  planner.plan(f.view, req_fail, random, out);
  EXPECT_EQ(out.code, plan_code::unschedulable);
  f.view.release(0, res("cpu", "4"));
  planner.plan(f.view, req, random, out);
  ASSERT_TRUE(valid_plan(f.view, req, out));
  EXPECT_TRUE(out.origin.empty());
  EXPECT_TRUE(out.detail.empty());
}

// The sample (kube-scheduler's percentageOfNodesToScore) must never turn a feasible gang into
// `unschedulable`: here every node holds one pod, the sample holds fewer pods than the gang,
// and only nodes beyond it complete the gang.
TEST(planner, sampling_never_causes_a_false_unschedulable) {
  fixture f;
  for (int i = 0; i < 400; ++i) {
    f.view.add_node(make_node("n" + std::to_string(i)).cpu("4"));
    f.view.allocate(std::size_t(i), res("cpu", "3"));
  }
  f.add_pods(make_gang("tf", 8)
                 .task("ps", 1, res("cpu", "1"))
                 .task("worker", 7, res("cpu", "1"))
                 .obj()
                 .pods);
  planner_config cfg;
  cfg.percentage_of_nodes_to_score = 1; // 4 nodes of 400.
  cfg.min_feasible_nodes = 1;
  gang_planner planner(cfg);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    rng random(seed);
    auto req = f.request(8, {{"ps", 1}, {"worker", 7}});
    auto r = planner.plan(f.view, req, random);
    ASSERT_TRUE(valid_plan(f.view, req, r)) << seed;
    EXPECT_TRUE(r.widened) << seed;
    std::set<std::size_t> nodes;
    for (const auto& p : r.placements)
      nodes.insert(p.node);
    EXPECT_EQ(nodes.size(), 8u);
  }
}

// Only a block of nodes far from every scan start has the GPUs; the rest are feasible for the
// CPU pods, so a sample that stops early never sees a GPU node.
TEST(planner, sampling_finds_the_rare_nodes) {
  fixture f;
  for (int i = 0; i < 2000; ++i) {
    auto b = make_node("n" + std::to_string(i)).cpu("16").memory("64Gi");
    if (i >= 1500 && i < 1504)
      b.gpu(8);
    f.view.add_node(b);
  }
  f.add_pods(make_gang("tf", 5)
                 .task("driver", 1, res("cpu", "1"))
                 .task("gpu", 4, res("cpu", "1").with("nvidia.com/gpu", 8))
                 .obj()
                 .pods);
  gang_planner planner;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    rng random(seed);
    auto req = f.request(5);
    auto r = planner.plan(f.view, req, random);
    ASSERT_TRUE(valid_plan(f.view, req, r)) << seed;
  }
}

// Greedy puts both workers badly (binpack prefers the smaller node); the search finds the one
// arrangement that holds the whole gang.
TEST(planner, search_rescues_a_greedy_dead_end) {
  fixture f;
  f.view.add_node(make_node("a").cpu("4"));
  f.view.add_node(make_node("b").cpu("3"));
  f.add_pods({make_pod("w-0").cpu("2").role("worker"), make_pod("w-1").cpu("2").role("worker"),
              make_pod("ps-0").cpu("3").role("ps")});
  gang_planner planner;
  rng random(9);
  auto req = f.request(3);
  auto r = planner.plan(f.view, req, random);
  ASSERT_TRUE(valid_plan(f.view, req, r));
  EXPECT_GT(r.search_steps, 0);
  std::map<std::size_t, std::size_t> node_of;
  for (const auto& p : r.placements)
    node_of[p.pod] = p.node;
  EXPECT_EQ(node_of[0], 0u);
  EXPECT_EQ(node_of[1], 0u);
  EXPECT_EQ(node_of[2], 1u);
}

TEST(planner, search_budget_bounds_the_work) {
  fixture f;
  // Every node holds one 2-cpu pod, and no two nodes are alike, so symmetry cannot prune.
  for (int i = 0; i < 12; ++i)
    f.view.add_node(make_node("n" + std::to_string(i))
                        .cpu(std::to_string(2000 + 50 * i) + "m")
                        .label("z", "a"));
  // Thirteen pods of two classes for twelve slots: impossible, though each class alone has
  // room, and the search is cut.
  std::vector<pod> pods;
  for (int i = 0; i < 13; ++i)
    pods.push_back(i < 7 ? make_pod("a-" + std::to_string(i)).cpu("2").obj()
                         : make_pod("b-" + std::to_string(i)).cpu("2").selector("z", "a").obj());
  // One constraints instance for the b pods, so they form one class.
  for (int i = 8; i < 13; ++i)
    pods[std::size_t(i)].constraints = pods[7].constraints;
  f.add_pods(pods);
  planner_config cfg;
  cfg.search_budget = 50;
  gang_planner planner(cfg);
  rng random(1);
  auto r = planner.plan(f.view, f.request(13), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_TRUE(r.search_exhausted);
  EXPECT_EQ(r.search_steps, 51);
  EXPECT_NE(r.detail.find("(search gave up after 51 steps)"), std::string::npos) << r.detail;
}

TEST(planner, skips_removed_nodes_and_honours_constraints) {
  fixture f;
  f.view.add_node(make_node("gone").cpu("64"));
  f.view.add_node(make_node("gpu").cpu("8").gpu(4).taint("gpu", "true").label("zone", "a"));
  f.view.add_node(make_node("plain").cpu("64").label("zone", "a"));
  f.view.remove(0);
  f.add_pods({make_pod("t-0").cpu("1").gpu(2).tolerate("gpu", "true").selector("zone", "a"),
              make_pod("t-1").cpu("1").gpu(2).tolerate("gpu", "true").selector("zone", "a"),
              make_pod("c-0").cpu("1").selector("zone", "a")});
  gang_planner planner;
  rng random(1);
  auto req = f.request(3);
  auto r = planner.plan(f.view, req, random);
  ASSERT_TRUE(valid_plan(f.view, req, r));
  for (const auto& p : r.placements) {
    EXPECT_NE(p.node, 0u);
    if (p.pod < 2) {
      EXPECT_EQ(p.node, 1u);
    }
  }
  // The diagnosis counts live nodes only.
  f.add_pods({make_pod("x").cpu("100")});
  auto bad = planner.plan(f.view, f.request(1), random);
  EXPECT_EQ(bad.code, plan_code::unresolvable);
  EXPECT_EQ(bad.origin.node_total(), 2);
}

TEST(planner, empty_and_ready_gangs) {
  fixture f;
  f.view.add_node(make_node("n").cpu("1"));
  gang_planner planner;
  rng random(1);
  auto r = planner.plan(f.view, f.request(0), random);
  EXPECT_EQ(r.code, plan_code::success);
  EXPECT_TRUE(r.placements.empty());
  // No nodes at all.
  cluster_snapshot none;
  f.add_pods({make_pod("a").cpu("1")});
  gang_request req = f.request(1);
  auto r2 = planner.plan(none, req, random);
  EXPECT_EQ(r2.code, plan_code::unresolvable);
  EXPECT_EQ(r2.origin.node_total(), 0);
}

// Each greedy placement goes to a node with the best node_score given the placements before
// it, also when most candidates wait in the planner's reserve and when classes share nodes.
TEST(planner, greedy_places_each_pod_on_a_best_scoring_node) {
  for (auto strategy : {score_strategy::binpack, score_strategy::spread}) {
    // 1: one class; 2: two classes alternating; 3: sixty pods of one class, then one of
    // another whose best candidates the sixty have changed.
    for (int classes = 1; classes <= 3; ++classes) {
      rng g(uint64_t(100 + classes));
      fixture f;
      for (int i = 0; i < 300; ++i) {
        auto idx = f.view.add_node(make_node("n" + std::to_string(i))
                                       .cpu(std::to_string(8 * (1 + i % 4)))
                                       .memory(std::to_string(32 * (1 + i % 3)) + "Gi"));
        resources used;
        used.cpu_milli = int64_t(g() % uint64_t(f.view.at(idx).allocatable.cpu_milli));
        used.memory_bytes = int64_t(g() % uint64_t(f.view.at(idx).allocatable.memory_bytes));
        f.view.allocate(idx, used);
      }
      auto other = std::make_shared<const placement_constraints>();
      std::vector<pod> pods;
      int count = classes == 3 ? 61 : 40;
      for (int i = 0; i < count; ++i) {
        bool second = classes == 3 ? i < 60 : i % classes != 0;
        pod p = make_pod("p" + std::to_string(i)).cpu(second ? "3" : "2").memory("6Gi");
        if (second)
          p.constraints = other;
        pods.push_back(p);
      }
      f.add_pods(pods);
      planner_config cfg;
      cfg.strategy = strategy;
      cfg.percentage_of_nodes_to_score = 100;
      gang_planner planner(cfg);
      rng random(3);
      auto req = f.request(count);
      auto r = planner.plan(f.view, req, random);
      ASSERT_TRUE(valid_plan(f.view, req, r));
      std::vector<resources> free;
      for (std::size_t i = 0; i < f.view.size(); ++i)
        free.push_back(f.view.free(i));
      for (const auto& p : r.placements) {
        const resources& request = f.pods[p.pod].requests;
        int64_t best = -1;
        for (std::size_t n = 0; n < free.size(); ++n)
          if (fits(request, free[n]))
            best = std::max(best, node_score(strategy, cfg.weights, request, free[n],
                                             f.view.at(n).allocatable));
        EXPECT_EQ(
            node_score(strategy, cfg.weights, request, free[p.node], f.view.at(p.node).allocatable),
            best)
            << to_string(strategy) << " classes " << classes << " pod " << p.pod;
        free[p.node] -= request;
      }
    }
  }
}

TEST(gang_unschedulable_message, volcano_form) {
  fit_diagnosis d(6);
  d.add("Insufficient cpu", false, 6);
  gang_status_counts counts{4, 1, 0, 0, 3, 4};
  EXPECT_EQ(gang_unschedulable_message(counts, "worker-2", d, ""),
            "3/4 tasks in gang unschedulable: pod group is not ready, 1 Running, 3 Pending, 4 "
            "minAvailable; Pending: 3 Unschedulable. Origin reason is worker-2: 0/6 nodes are "
            "unavailable: 6 Insufficient cpu.");
  // Volcano sorts the histogram as strings: "12 Pending" before "8 Running".
  gang_status_counts many{20, 8, 0, 0, 12, 20};
  EXPECT_EQ(gang_unschedulable_message(many, "", d, "ends with a period."),
            "12/20 tasks in gang unschedulable: pod group is not ready, 12 Pending, 20 "
            "minAvailable, 8 Running; Pending: 12 Unschedulable. ends with a period.");
}

// ---------------------------------------------------------------------------------------------
// Rules between pods (pod_neighbourhood.hpp) in plans

std::vector<pod> gang_of(int n, const std::function<pod(int)>& make) {
  std::vector<pod> out;
  for (int i = 0; i < n; ++i)
    out.push_back(make(i));
  return out;
}

// Pods of one template share one constraints instance, as a job's pods do.
std::vector<pod> shared_template(std::vector<pod> pods) {
  for (auto& p : pods)
    p.constraints = pods.front().constraints;
  return pods;
}

void add_hosts(cluster_snapshot& view, int n, std::string_view cpu = "8",
               std::function<std::string(int)> zone_of = {}) {
  for (int i = 0; i < n; ++i) {
    std::string name = "n" + std::to_string(i);
    auto b = make_node(name).cpu(cpu).memory("32Gi").label("kubernetes.io/hostname", name);
    if (zone_of)
      b.label("topology.kubernetes.io/zone", zone_of(i));
    view.add_node(b);
  }
}

TEST(planner_neighbours, members_with_mutual_anti_affinity_land_apart) {
  for (auto strategy : {score_strategy::binpack, score_strategy::spread}) {
    fixture f;
    add_hosts(f.view, 3);
    f.add_pods(shared_template(gang_of(3, [](int i) {
      return make_pod("w-" + std::to_string(i)).cpu("1").label("app", "ring").anti_affinity(
          testing::pods_labelled("app", "ring"));
    })));
    planner_config cfg;
    cfg.strategy = strategy;
    gang_planner planner(cfg);
    rng random(3);
    auto req = f.request(3);
    auto r = planner.plan(f.view, req, random);
    ASSERT_TRUE(valid_plan(f.view, req, r));
    std::set<std::size_t> nodes;
    for (const auto& p : r.placements)
      nodes.insert(p.node);
    EXPECT_EQ(nodes.size(), 3u) << "binpack alone would stack them on one node";
  }
}

TEST(planner_neighbours, too_few_nodes_for_anti_affine_members_is_unschedulable_and_says_why) {
  fixture f;
  add_hosts(f.view, 2);
  f.add_pods(shared_template(gang_of(3, [](int i) {
    return make_pod("w-" + std::to_string(i)).cpu("1").label("app", "ring").anti_affinity(
        testing::pods_labelled("app", "ring"));
  })));
  gang_planner planner;
  rng random(3);
  auto r = planner.plan(f.view, f.request(3), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  // As kube-scheduler orders them: the placed members' anti-affinity is checked first.
  EXPECT_EQ(r.origin.to_string(), "0/2 nodes are available: 2 node(s) didn't satisfy existing "
                                  "pods anti-affinity rules.");
  EXPECT_NE(r.detail.find("rule out the rest"), std::string::npos) << r.detail;
  // With min 2 the third member is an extra that does not fit: two placements.
  auto elastic = planner.plan(f.view, f.request(2), random);
  ASSERT_EQ(elastic.code, plan_code::success) << elastic.detail;
  EXPECT_EQ(elastic.placements.size(), 2u);
}

TEST(planner_neighbours, a_pod_does_not_join_the_pod_its_anti_affinity_names) {
  fixture f;
  add_hosts(f.view, 1);
  f.view.add_pod(0, std::make_shared<const pod>(make_pod("db").label("app", "db").bound_to("n0")));
  f.add_pods({make_pod("a").cpu("1").anti_affinity(testing::pods_labelled("app", "db"))});
  gang_planner planner;
  rng random(1);
  auto r = planner.plan(f.view, f.request(1), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.origin.to_string(),
            "0/1 nodes are available: 1 node(s) didn't match pod anti-affinity rules.");
  EXPECT_NE(r.detail.find("1 node is ruled out by pods there: 1 a pod it must keep away from"),
            std::string::npos)
      << r.detail;
  // The pod goes; the node is free for it.
  f.view.remove_pod(0, nullptr);  // Unknown: nothing changes.
  f.view = cluster_snapshot{};
  add_hosts(f.view, 1);
  EXPECT_EQ(planner.plan(f.view, f.request(1), random).code, plan_code::success);
}

TEST(planner_neighbours, a_pod_keeps_away_the_pods_its_anti_affinity_names) {
  fixture f;
  add_hosts(f.view, 2);
  auto guard = std::make_shared<const pod>(
      make_pod("guard").anti_affinity(testing::pods_labelled("app", "web")).bound_to("n1"));
  f.view.add_pod(1, guard);
  ASSERT_EQ(f.view.anti_affinity_pods(), 1);
  f.add_pods({make_pod("web").cpu("1").label("app", "web"),
              make_pod("web-b").cpu("1").label("app", "web")});
  gang_planner planner;
  rng random(5);
  auto r = planner.plan(f.view, f.request(2), random);
  ASSERT_EQ(r.code, plan_code::success) << r.detail;
  for (const auto& p : r.placements)
    EXPECT_EQ(p.node, 0u) << "a pod without rules still obeys the guard's";
  f.view.remove_pod(1, guard.get());
  EXPECT_EQ(f.view.anti_affinity_pods(), 0);
}

TEST(planner_neighbours, namespace_selectors_read_the_views_namespaces) {
  // Two one-cpu hosts for a gang of two: the gang needs the guard's node. The guard in ops
  // keeps web pods of team a's namespaces off it; whether shop is of team a is the namespaces'
  // labels' to say, and without them team=a selects no namespace.
  fixture f;
  add_hosts(f.view, 2, "1");
  auto term = testing::pods_labelled("app", "web");
  term.namespace_selector.emplace();
  term.namespace_selector->match_labels.set("team", "a");
  f.view.add_pod(1, std::make_shared<const pod>(
                        make_pod("guard").ns("ops").anti_affinity(term).bound_to("n1")));
  f.add_pods(shared_template(gang_of(2, [](int i) {
    return make_pod("web-" + std::to_string(i)).ns("shop").cpu("1").label("app", "web");
  })));
  gang_planner planner;
  rng random(1);
  EXPECT_EQ(planner.plan(f.view, f.request(2), random).code, plan_code::success)
      << "no namespaces' labels: the guard selects nobody";
  auto with_team = [](std::string shop_team) {
    auto dir = std::make_shared<namespace_directory>();
    dir->set("shop", {{namespace_name_label, "shop"}, {"team", shop_team}});
    dir->set("ops", {{namespace_name_label, "ops"}, {"team", "b"}});
    return dir;
  };
  f.view.set_namespaces(with_team("a"));
  auto kept = planner.plan(f.view, f.request(2), random);
  EXPECT_EQ(kept.code, plan_code::unschedulable);
  EXPECT_EQ(kept.origin.to_string(), "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) "
                                     "didn't satisfy existing pods anti-affinity rules.")
      << kept.detail;
  f.view.set_namespaces(with_team("c"));  // shop left team a.
  EXPECT_EQ(planner.plan(f.view, f.request(2), random).code, plan_code::success);
}

TEST(planner_neighbours, two_pods_asking_one_host_port_never_share_a_node) {
  fixture f;
  add_hosts(f.view, 1);
  f.add_pods(shared_template(gang_of(2, [](int i) {
    return make_pod("p-" + std::to_string(i)).cpu("1").host_port(8080);
  })));
  gang_planner planner;
  rng random(2);
  auto r = planner.plan(f.view, f.request(2), random);
  EXPECT_EQ(r.code, plan_code::unschedulable);
  EXPECT_EQ(r.origin.to_string(),
            "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod "
            "ports.");
  add_hosts(f.view, 2);  // n0 again and n1: two nodes now.
  auto two = planner.plan(f.view, f.request(2), random);
  ASSERT_TRUE(valid_plan(f.view, f.request(2), two));
  EXPECT_NE(two.placements[0].node, two.placements[1].node);
}

TEST(planner_neighbours, a_group_with_affinity_to_itself_gathers_in_one_zone) {
  fixture f;
  add_hosts(f.view, 6, "2", [](int i) { return i % 2 == 0 ? "a" : "b"; });
  f.add_pods(shared_template(gang_of(5, [](int i) {
    return make_pod("r-" + std::to_string(i)).cpu("1").label("app", "ring").pod_affinity(
        testing::pods_labelled("app", "ring", "topology.kubernetes.io/zone"));
  })));
  planner_config cfg;
  cfg.strategy = score_strategy::spread;
  gang_planner planner(cfg);
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    rng random(seed);
    auto req = f.request(5);
    auto r = planner.plan(f.view, req, random);
    ASSERT_TRUE(valid_plan(f.view, req, r));
    std::set<std::string> zones;
    for (const auto& p : r.placements)
      zones.insert(std::string(*f.view.at(p.node).meta.labels.find("topology.kubernetes.io/zone")));
    EXPECT_EQ(zones.size(), 1u) << "seed " << seed;
  }
  // Seven pods do not fit one zone (three nodes of two cpus): unschedulable, never split.
  f.add_pods(shared_template(gang_of(7, [](int i) {
    return make_pod("r-" + std::to_string(i)).cpu("1").label("app", "ring").pod_affinity(
        testing::pods_labelled("app", "ring", "topology.kubernetes.io/zone"));
  })));
  rng random(9);
  auto r = planner.plan(f.view, f.request(7), random);
  EXPECT_EQ(r.code, plan_code::unschedulable) << r.detail;
}

TEST(planner_neighbours, topology_spread_evens_a_gang_over_zones_where_binpack_would_pile_it) {
  fixture f;
  add_hosts(f.view, 6, "8", [](int i) { return std::string(1, char('a' + i % 3)); });
  f.add_pods(shared_template(gang_of(6, [](int i) {
    return make_pod("s-" + std::to_string(i)).cpu("1").label("app", "web").spread(
        "topology.kubernetes.io/zone", 1, "app", "web");
  })));
  gang_planner planner;  // Binpack: without the constraint all six go to one node.
  rng random(4);
  auto req = f.request(6);
  auto r = planner.plan(f.view, req, random);
  ASSERT_TRUE(valid_plan(f.view, req, r));
  std::map<std::string, int> per_zone;
  for (const auto& p : r.placements)
    ++per_zone[std::string(*f.view.at(p.node).meta.labels.find("topology.kubernetes.io/zone"))];
  EXPECT_EQ(per_zone, (std::map<std::string, int>{{"a", 2}, {"b", 2}, {"c", 2}}));
  // Zone c full: four pods fit a and b evenly, a fifth would be two ahead of c.
  for (std::size_t i = 0; i < f.view.size(); ++i)
    if (*f.view.at(i).meta.labels.find("topology.kubernetes.io/zone") == "c")
      f.view.allocate(i, res("cpu", "8"));
  auto full = planner.plan(f.view, f.request(5), random);
  EXPECT_EQ(full.code, plan_code::unschedulable);
  EXPECT_NE(full.origin.to_string().find("didn't match pod topology spread constraints"),
            std::string::npos)
      << full.origin.to_string();
}

// A ready gang's extra pods that fit nowhere: nothing was required, so the plan succeeds with no
// placement, but it looked at every node and says why, as a failed plan does.
TEST(planner, extras_that_fit_nowhere_are_diagnosed_over_every_node) {
  fixture f;
  planner_config cfg;
  cfg.min_feasible_nodes = 1;  // Sample few nodes: the answer must still cover all of them.
  cfg.percentage_of_nodes_to_score = 5;
  for (int i = 0; i < 200; ++i)
    f.view.add_node(make_node("n" + std::to_string(i)).cpu("1").memory("4Gi"));
  for (std::size_t i = 0; i < f.view.size(); ++i)
    f.view.allocate(i, res("cpu", "1"));
  f.add_pods(make_gang("g", 1).task("worker", 2, res("cpu", "1")).obj().pods);
  gang_planner planner(cfg);
  rng random(3);
  auto r = planner.plan(f.view, f.request(0), random);
  ASSERT_EQ(r.code, plan_code::success);
  EXPECT_TRUE(r.placements.empty());
  EXPECT_EQ(r.origin.to_string(), "0/200 nodes are available: 200 Insufficient cpu.");
  EXPECT_NE(r.detail.find("worker needs 1 cpu per pod"), std::string::npos) << r.detail;
  // One node frees up: the extra goes there and nothing is diagnosed.
  f.view.release(117, res("cpu", "1"));
  auto placed = planner.plan(f.view, f.request(0), random);
  ASSERT_EQ(placed.placements.size(), 1u);
  EXPECT_EQ(placed.placements[0].node, 117u);
  EXPECT_TRUE(placed.origin.empty());
}

} // namespace
} // namespace phalanx::scheduler
