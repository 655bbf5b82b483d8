// The score plugins in plans (planner.cpp with scores.hpp and pod_preferences.hpp): where a
// gang's pods go when they have preferences, as kube-scheduler would place them one by one, and
// that preferences only rank, never refuse.

#include "scheduler/planner.hpp"
#include "scheduler/pod_neighbourhood.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

namespace phalanx::scheduler {
namespace {

using testing::make_node;
using testing::make_pod;
using testing::node_builder;
using testing::pods_labelled;
using testing::res;

constexpr std::string_view hostname = "kubernetes.io/hostname";
constexpr std::string_view zone = "topology.kubernetes.io/zone";

struct fixture {
  cluster_snapshot view;
  std::vector<pod> pods;
  std::vector<const pod*> pointers;

  // `n` pods from make(i), sharing the first one's constraints as a job's pods do.
  void add_gang(int n, const std::function<pod(int)>& make) {
    for (int i = 0; i < n; ++i)
      pods.push_back(make(i));
    const auto shared = pods[pods.size() - std::size_t(n)].constraints;
    for (std::size_t i = pods.size() - std::size_t(n); i < pods.size(); ++i)
      pods[i].constraints = shared;
    pointers.clear();
    for (const auto& p : pods)
      pointers.push_back(&p);
  }
  gang_request request(int32_t min_pods) const {
    gang_request r;
    r.pods = pointers;
    r.min_pods = min_pods;
    return r;
  }
  // Plans every pod as required, with a fresh planner.
  plan_result plan(planner_config config = {}, uint64_t seed = 1) const {
    gang_planner planner(std::move(config));
    rng random(seed);
    return planner.plan(view, request(int32_t(pods.size())), random);
  }
  std::string node_name(std::size_t index) const { return view.at(index).meta.name.str(); }
  std::string label_of(std::size_t index, std::string_view key) const {
    auto v = view.at(index).meta.labels.find(key);
    return v ? std::string(*v) : std::string();
  }
};

node_builder host(std::string name, std::string cpu = "8", std::string zone_name = "") {
  auto b = make_node(name).cpu(cpu).memory("32Gi").label(std::string(hostname), name);
  if (!zone_name.empty())
    b.label(std::string(zone), zone_name);
  return b;
}

planner_config strategy(score_strategy s) {
  planner_config c;
  c.strategy = s;
  return c;
}

node_selector_term labelled(std::string key, std::string value) {
  return {{{std::move(key), selector_operator::in, {std::move(value)}}}, {}};
}

TEST(planner_scores, a_preferred_node_beats_an_emptier_one_when_the_weights_say_so) {
  fixture f;
  f.view.add_node(host("empty"));
  auto ssd = f.view.add_node(host("ssd").label("disk", "ssd"));
  f.view.allocate(ssd, res("cpu", "4"));
  f.add_gang(1, [](int) { return make_pod("p").cpu("1").obj(); });
  // Spread (least allocated) alone takes the empty node.
  auto plain = f.plan(strategy(score_strategy::spread));
  ASSERT_EQ(plain.code, plan_code::success) << plain.detail;
  EXPECT_EQ(f.node_name(plain.placements[0].node), "empty");

  fixture g;
  g.view = f.view;
  g.add_gang(1, [](int) {
    return make_pod("p").cpu("1").prefer_nodes(1, labelled("disk", "ssd")).obj();
  });
  // NodeAffinity (2 x 10000 for the only preferred node) outweighs the resource score's
  // difference (at most 10000), whatever the term's weight.
  auto preferred = g.plan(strategy(score_strategy::spread));
  ASSERT_EQ(preferred.code, plan_code::success) << preferred.detail;
  EXPECT_EQ(g.node_name(preferred.placements[0].node), "ssd");
}

TEST(planner_scores, heavier_preferences_win_over_lighter_ones) {
  fixture f;
  f.view.add_node(host("a").label("disk", "ssd"));
  f.view.add_node(host("b").label("gpu", "yes"));
  f.view.add_node(host("c").label("disk", "ssd").label("gpu", "yes"));
  f.add_gang(1, [](int) {
    return make_pod("p").cpu("1").prefer_nodes(20, labelled("disk", "ssd")).prefer_nodes(
        70, labelled("gpu", "yes")).obj();
  });
  auto r = f.plan();
  ASSERT_EQ(r.code, plan_code::success) << r.detail;
  EXPECT_EQ(f.node_name(r.placements[0].node), "c");
  // Not that one: the gpu node without ssd (70 of 90) beats the ssd node without gpu (20).
  fixture g;
  g.view.add_node(host("a").label("disk", "ssd"));
  g.view.add_node(host("b").label("gpu", "yes"));
  g.add_gang(1, [](int) {
    return make_pod("p").cpu("1").prefer_nodes(20, labelled("disk", "ssd")).prefer_nodes(
        70, labelled("gpu", "yes")).obj();
  });
  auto r2 = g.plan();
  ASSERT_EQ(r2.code, plan_code::success) << r2.detail;
  EXPECT_EQ(g.node_name(r2.placements[0].node), "b");
}

TEST(planner_scores, prefer_no_schedule_is_avoided_while_another_node_fits) {
  fixture f;
  auto spot = f.view.add_node(host("spot").taint("spot", "yes", taint_effect::prefer_no_schedule));
  f.view.allocate(spot, res("cpu", "4"));  // Binpack alone would fill it first.
  auto other = f.view.add_node(host("other"));
  f.add_gang(1, [](int) { return make_pod("p").cpu("1").obj(); });
  auto r = f.plan();
  ASSERT_EQ(r.code, plan_code::success) << r.detail;
  EXPECT_EQ(f.node_name(r.placements[0].node), "other");

  // Tolerated (a toleration of every effect): binpack decides again.
  fixture tolerant;
  tolerant.view = f.view;
  tolerant.add_gang(1, [](int) {
    return make_pod("p").cpu("1").tolerate("spot", "yes", std::nullopt).obj();
  });
  auto t = tolerant.plan();
  ASSERT_EQ(t.code, plan_code::success) << t.detail;
  EXPECT_EQ(tolerant.node_name(t.placements[0].node), "spot");

  // The other node full: the tainted one still takes the pod, it only scores lower.
  f.view.allocate(other, res("cpu", "8"));
  auto only = f.plan();
  ASSERT_EQ(only.code, plan_code::success) << only.detail;
  EXPECT_EQ(f.node_name(only.placements[0].node), "spot");
}

TEST(planner_scores, a_gang_spreading_anyway_over_three_zones_lands_two_two_two) {
  for (auto s : {score_strategy::binpack, score_strategy::spread}) {
    fixture f;
    for (int i = 0; i < 6; ++i)
      f.view.add_node(host("n" + std::to_string(i), "8", std::string(1, char('a' + i % 3))));
    f.add_gang(6, [](int i) {
      return make_pod("s-" + std::to_string(i)).cpu("1").label("app", "web").spread_anyway(
          std::string(zone), 1, "app", "web").obj();
    });
    for (uint64_t seed : {1, 2, 3}) {
      auto r = f.plan(strategy(s), seed);
      ASSERT_EQ(r.code, plan_code::success) << r.detail;
      std::map<std::string, int> per_zone;
      for (const auto& p : r.placements)
        ++per_zone[f.label_of(p.node, zone)];
      EXPECT_EQ(per_zone, (std::map<std::string, int>{{"a", 2}, {"b", 2}, {"c", 2}}))
          << to_string(s) << " seed " << seed << ": binpack alone puts all six on one node";
    }
  }
}

TEST(planner_scores, the_spread_counts_pods_already_running) {
  fixture f;
  for (int i = 0; i < 3; ++i)
    f.view.add_node(host("n" + std::to_string(i), "8", std::string(1, char('a' + i))));
  for (int k = 0; k < 2; ++k)
    f.view.add_pod(0, std::make_shared<const pod>(
                          make_pod("old-" + std::to_string(k)).label("app", "web").bound_to("n0")));
  f.add_gang(4, [](int i) {
    return make_pod("s-" + std::to_string(i)).cpu("1").label("app", "web").spread_anyway(
        std::string(zone), 1, "app", "web").obj();
  });
  auto r = f.plan();
  ASSERT_EQ(r.code, plan_code::success) << r.detail;
  std::map<std::string, int> per_zone;
  for (const auto& p : r.placements)
    ++per_zone[f.label_of(p.node, zone)];
  EXPECT_EQ(per_zone, (std::map<std::string, int>{{"b", 2}, {"c", 2}}))
      << "zone a already holds two: the four even it out";
}

TEST(planner_scores, preferred_anti_affinity_to_itself_spreads_while_nodes_remain) {
  for (auto s : {score_strategy::binpack, score_strategy::spread}) {
    fixture f;
    for (int i = 0; i < 4; ++i)
      f.view.add_node(host("n" + std::to_string(i)));
    f.add_gang(6, [](int i) {
      return make_pod("r-" + std::to_string(i))
          .cpu("1")
          .label("app", "ring")
          .preferred_anti_affinity(100, pods_labelled("app", "ring"))
          .obj();
    });
    auto r = f.plan(strategy(s));
    ASSERT_EQ(r.code, plan_code::success) << r.detail;
    std::map<std::size_t, int> per_node;
    for (const auto& p : r.placements)
      ++per_node[p.node];
    EXPECT_EQ(per_node.size(), 4u) << to_string(s) << ": every node takes one before any takes two";
    for (const auto& [node, count] : per_node)
      EXPECT_LE(count, 2) << f.node_name(node);
  }
}

TEST(planner_scores, a_pod_goes_where_an_existing_pod_wants_it) {
  fixture f;
  f.view.add_node(host("n0"));
  f.view.add_node(host("n1"));
  f.view.add_node(host("n2"));
  f.view.add_pod(1, std::make_shared<const pod>(
                        make_pod("cache")
                            .preferred_affinity(10, pods_labelled("app", "web"))
                            .bound_to("n1")));
  ASSERT_EQ(f.view.scoring_term_pods(), 1);
  f.add_gang(1, [](int) { return make_pod("web").cpu("1").label("app", "web").obj(); });
  for (uint64_t seed : {1, 2, 3}) {
    auto r = f.plan({}, seed);
    ASSERT_EQ(r.code, plan_code::success) << r.detail;
    EXPECT_EQ(f.node_name(r.placements[0].node), "n1") << "seed " << seed;
  }
  // And away from an existing pod's preferred anti-affinity.
  fixture g;
  g.view.add_node(host("n0"));
  g.view.add_node(host("n1"));
  g.view.add_pod(0, std::make_shared<const pod>(
                        make_pod("loner")
                            .preferred_anti_affinity(10, pods_labelled("app", "web"))
                            .bound_to("n0")));
  g.add_gang(1, [](int) { return make_pod("web").cpu("1").label("app", "web").obj(); });
  for (uint64_t seed : {1, 2, 3}) {
    auto r = g.plan({}, seed);
    ASSERT_EQ(r.code, plan_code::success) << r.detail;
    EXPECT_EQ(g.node_name(r.placements[0].node), "n1") << "seed " << seed;
  }
}

TEST(planner_scores, a_member_follows_the_member_whose_preferred_affinity_selects_it) {
  fixture f;
  for (int i = 0; i < 3; ++i)
    f.view.add_node(host("n" + std::to_string(i)));
  // The driver comes first and likes workers on its node; the workers have no preferences of
  // their own, yet each scores the driver's node higher once the driver is placed.
  f.add_gang(1, [](int) {
    return make_pod("driver").cpu("1").label("app", "driver").preferred_affinity(
        100, pods_labelled("app", "worker")).obj();
  });
  f.add_gang(2, [](int i) {
    return make_pod("worker-" + std::to_string(i)).cpu("1").label("app", "worker").obj();
  });
  // Spread (least allocated) would put the workers on the empty nodes.
  auto r = f.plan(strategy(score_strategy::spread));
  ASSERT_EQ(r.code, plan_code::success) << r.detail;
  ASSERT_EQ(r.placements.size(), 3u);
  for (const auto& p : r.placements)
    EXPECT_EQ(p.node, r.placements[0].node) << f.pods[p.pod].meta.name.str();
}

TEST(planner_scores, preferred_terms_select_namespaces_by_their_labels) {
  // A cache in ops prefers web pods of team a's namespaces near it; the web pod in shop (team a)
  // has no preferences of its own, yet scores the cache's node higher once the namespaces'
  // labels are known. Spread (least allocated) alone puts it on the empty node.
  for (bool known : {false, true}) {
    fixture f;
    f.view.add_node(host("n0"));
    f.view.add_node(host("n1"));
    auto term = pods_labelled("app", "web");
    term.namespace_selector.emplace();
    term.namespace_selector->match_labels.set("team", "a");
    f.view.add_pod(1, std::make_shared<const pod>(make_pod("cache")
                                                      .ns("ops")
                                                      .cpu("1")
                                                      .preferred_affinity(100, term)
                                                      .bound_to("n1")));
    f.view.allocate(1, make_pod("x").cpu("1").obj().requests);
    if (known) {
      auto dir = std::make_shared<namespace_directory>();
      dir->set("shop", {{namespace_name_label, "shop"}, {"team", "a"}});
      f.view.set_namespaces(dir);
    }
    f.add_gang(1, [](int) {
      return make_pod("web").ns("shop").cpu("1").label("app", "web").obj();
    });
    auto r = f.plan(strategy(score_strategy::spread));
    ASSERT_EQ(r.code, plan_code::success) << r.detail;
    EXPECT_EQ(f.node_name(r.placements[0].node), known ? "n1" : "n0");
  }
}

TEST(planner_scores, preferences_never_make_a_feasible_gang_unschedulable) {
  fixture f;
  f.view.add_node(host("big", "8").label("disk", "ssd"));
  f.view.add_node(host("small", "4"));
  // The small pod comes first and prefers the big node; greedy puts it there, and then the big
  // pod (7 cpu) fits nowhere. The search finds the way round: small pod on the small node.
  f.add_gang(1, [](int) {
    return make_pod("small").cpu("2").prefer_nodes(100, labelled("disk", "ssd")).obj();
  });
  f.add_gang(1, [](int) { return make_pod("large").cpu("7").obj(); });
  auto r = f.plan();
  ASSERT_EQ(r.code, plan_code::success) << r.detail;
  std::map<std::string, std::string> where;
  for (const auto& p : r.placements)
    where[f.pods[p.pod].meta.name.str()] = f.node_name(p.node);
  EXPECT_EQ(where, (std::map<std::string, std::string>{{"large", "big"}, {"small", "small"}}));
  EXPECT_GT(r.search_steps, 0) << "greedy, led by the preference, failed first";

  // A spread or anti-affinity preference the nodes cannot honour: all land anyway.
  fixture g;
  g.view.add_node(host("only"));
  g.add_gang(3, [](int i) {
    return make_pod("r-" + std::to_string(i))
        .cpu("1")
        .label("app", "ring")
        .preferred_anti_affinity(100, pods_labelled("app", "ring"))
        .spread_anyway(std::string(hostname), 1, "app", "ring")
        .obj();
  });
  auto crowded = g.plan();
  ASSERT_EQ(crowded.code, plan_code::success) << crowded.detail;
  EXPECT_EQ(crowded.placements.size(), 3u);
}

TEST(planner_scores, the_same_input_gives_the_same_plan) {
  fixture f;
  for (int i = 0; i < 30; ++i) {
    auto idx = f.view.add_node(host("n" + std::to_string(i), i % 2 ? "16" : "8",
                                    std::string(1, char('a' + i % 3)))
                                   .label("disk", i % 4 ? "hdd" : "ssd"));
    if (i % 5 == 0)
      f.view.allocate(idx, res("cpu", "3"));
    if (i % 7 == 0)
      f.view.add_pod(idx, std::make_shared<const pod>(make_pod("old-" + std::to_string(i))
                                                          .label("app", "ring")
                                                          .bound_to("n" + std::to_string(i))));
  }
  f.add_gang(12, [](int i) {
    return make_pod("r-" + std::to_string(i))
        .cpu("2")
        .label("app", "ring")
        .preferred_anti_affinity(60, pods_labelled("app", "ring"))
        .spread_anyway(std::string(zone), 2, "app", "ring")
        .prefer_nodes(30, labelled("disk", "ssd"))
        .obj();
  });
  for (uint64_t seed : {1, 9}) {
    auto first = f.plan({}, seed);
    ASSERT_EQ(first.code, plan_code::success) << first.detail;
    gang_planner reused;
    rng random(seed);
    plan_result again;
    reused.plan(f.view, f.request(12), random, again);  // A warm planner gives the same too.
    rng random_again(seed);
    reused.plan(f.view, f.request(12), random_again, again);
    EXPECT_EQ(again.placements, first.placements);
    EXPECT_EQ(f.plan({}, seed).placements, first.placements);
  }
}

} // namespace
} // namespace phalanx::scheduler
