// Inter-pod affinity, anti-affinity and host ports on the whole runtime, under CAF's test
// coordinator: the planner keeps pods apart, the node's vote refuses what a stale plan would
// break, the pending reason is kube-scheduler's, and a pod whose rules are met later binds then.
// Every test ends with the invariant checks, which include the rules between bound pods.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/pod_neighbourhood.hpp"
#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using scheduler::testing::pods_labelled;

constexpr std::string_view zone_key = "topology.kubernetes.io/zone";

scheduler::node host(const std::string& name, const std::string& zone = "") {
  auto b = make_node(name).cpu("8").memory("16Gi").label("kubernetes.io/hostname", name);
  if (!zone.empty())
    b.label(std::string(zone_key), zone);
  return b;
}

std::string scheduled_message(runtime_harness& h, const std::string& name) {
  for (const auto& c : h.pod(name).conditions)
    if (c.type == "PodScheduled")
      return c.reason + ": " + c.message;
  return "(no PodScheduled condition)";
}

TEST(RulesBetweenPods, APodStaysAwayFromThePodItsAntiAffinityNamesUntilThatPodGoes) {
  runtime_harness h{deterministic_config(3), {host("n-0")}};
  h.create_pod(make_pod("db").cpu("1").label("app", "db"));
  ASSERT_TRUE(h.run_until([&] { return h.pod("db").pod.is_bound(); }, settle_limit, settle_step));
  h.create_pod(make_pod("web").cpu("1").anti_affinity(pods_labelled("app", "db")));
  h.pass(std::chrono::milliseconds(2000));
  EXPECT_FALSE(h.pod("web").pod.is_bound()) << "the only node has the pod it must avoid";
  EXPECT_NE(scheduled_message(h, "web").find("node(s) didn't match pod anti-affinity rules"),
            std::string::npos)
      << scheduled_message(h, "web");
  EXPECT_INVARIANTS(h);
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "db"), "delete db");
  ASSERT_TRUE(h.run_until([&] { return h.pod("web").pod.is_bound(); }, settle_limit, settle_step))
      << scheduled_message(h, "web");
  EXPECT_INVARIANTS(h);
}

// A PATCH of a pending pod's labels reaches its gang's plan: a pod kept off the only node by
// the anti-affinity of the pod there binds once it no longer carries the label that rule names.
// A namespaceSelector naming namespaces by the label every namespace carries
// (kubernetes.io/metadata.name): a rule against the pods of namespace "data" holds across
// namespaces; one naming another namespace lets the pod bind beside them.
TEST(RulesBetweenPods, ANamespaceSelectorReachesThePodsOfTheNamespacesItNames) {
  runtime_harness h{deterministic_config(4), {host("n-0")}};
  h.create_pod(make_pod("db").ns("data").cpu("1").label("app", "db"));
  ASSERT_TRUE(h.run_until([&] { return h.pod("db", "data").pod.is_bound(); }, settle_limit,
                          settle_step));
  auto in_namespace = [](const std::string& ns) {
    auto term = pods_labelled("app", "db");
    term.namespace_selector.emplace();
    term.namespace_selector->match_labels.set(scheduler::namespace_name_label, ns);
    return term;
  };
  h.create_pod(make_pod("web").cpu("1").anti_affinity(in_namespace("data")));
  h.create_pod(make_pod("api").cpu("1").anti_affinity(in_namespace("staging")));
  ASSERT_TRUE(h.run_until([&] { return h.pod("api").pod.is_bound(); }, settle_limit, settle_step))
      << scheduled_message(h, "api");
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_FALSE(h.pod("web").pod.is_bound()) << "the db pod of namespace data is on the only node";
  EXPECT_INVARIANTS(h);
}

TEST(RulesBetweenPods, APendingPodRelabelledOutOfAnAntiAffinityRuleBinds) {
  runtime_harness h{deterministic_config(41), {host("n-0")}};
  h.create_pod(make_pod("guard").cpu("1").anti_affinity(pods_labelled("app", "web")));
  ASSERT_TRUE(h.run_until([&] { return h.pod("guard").pod.is_bound(); },
                          settle_limit, settle_step));
  h.create_pod(make_pod("web").cpu("1").label("app", "web"));
  h.pass(std::chrono::milliseconds(2000));
  ASSERT_FALSE(h.pod("web").pod.is_bound()) << "the guard's anti-affinity names it";
  auto web = h.pod("web");
  web.pod.meta.labels = scheduler::label_set{{"app", "api"}};
  runtime_harness::must_ok(h.update(api::object{web}), "relabel web");
  ASSERT_TRUE(h.run_until([&] { return h.pod("web").pod.is_bound(); }, settle_limit, settle_step))
      << scheduled_message(h, "web");
  EXPECT_INVARIANTS(h);
}

TEST(RulesBetweenPods, APodWithoutRulesKeepsAwayFromAPodWhoseAntiAffinityNamesIt) {
  runtime_harness h{deterministic_config(4), {host("n-0"), host("n-1")}};
  h.create_pod(make_pod("guard").cpu("1").anti_affinity(pods_labelled("app", "web")));
  ASSERT_TRUE(h.run_until([&] { return h.pod("guard").pod.is_bound(); },
                          settle_limit, settle_step));
  auto guard_node = h.pod("guard").pod.node_name.str();
  for (int i = 0; i < 4; ++i)
    h.create_pod(make_pod("web-" + std::to_string(i)).cpu("1").label("app", "web"));
  ASSERT_TRUE(h.run_until(
      [&] {
        for (int i = 0; i < 4; ++i)
          if (!h.pod("web-" + std::to_string(i)).pod.is_bound())
            return false;
        return true;
      },
      settle_limit, settle_step));
  for (int i = 0; i < 4; ++i)
    EXPECT_NE(h.pod("web-" + std::to_string(i)).pod.node_name.str(), guard_node);
  EXPECT_INVARIANTS(h);
}

TEST(RulesBetweenPods, TwoPodsAskingOneHostPortNeverShareANode) {
  runtime_harness h{deterministic_config(5), {host("n-0")}};
  h.create_pod(make_pod("a").cpu("1").host_port(8080));
  h.create_pod(make_pod("b").cpu("1").host_port(8080));
  h.create_pod(make_pod("udp").cpu("1").host_port(8080, "UDP"));
  h.pass(std::chrono::milliseconds(2000));
  int bound = 0;
  std::string pending;
  for (const char* name : {"a", "b"}) {
    if (h.pod(name).pod.is_bound())
      ++bound;
    else
      pending = name;
  }
  ASSERT_EQ(bound, 1);
  EXPECT_TRUE(h.pod("udp").pod.is_bound()) << "another protocol is another port";
  EXPECT_NE(scheduled_message(h, pending).find(
                "node(s) didn't have free ports for the requested pod ports"),
            std::string::npos)
      << scheduled_message(h, pending);
  EXPECT_INVARIANTS(h);
  runtime_harness::must_ok(h.create(api::node_object{host("n-1"), {}, 0}), "n-1");
  ASSERT_TRUE(h.run_until([&] { return h.pod(pending).pod.is_bound(); }, settle_limit, settle_step))
      << scheduled_message(h, pending);
  EXPECT_EQ(h.pod(pending).pod.node_name.str(), "n-1");
  EXPECT_INVARIANTS(h);
}

TEST(RulesBetweenPods, AGangWhoseMembersRepelEachOtherLandsApartOrNotAtAll) {
  runtime_harness h{deterministic_config(6), {host("n-0"), host("n-1")}};
  runtime_harness::must_ok(h.create(group_of("ring", 3)), "the PodGroup");
  for (int i = 0; i < 3; ++i)
    h.create_pod(make_pod("ring-" + std::to_string(i))
                      .cpu("1")
                      .group("ring")
                      .label("app", "ring")
                      .anti_affinity(pods_labelled("app", "ring")));
  h.pass(std::chrono::milliseconds(2000));
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(h.pod("ring-" + std::to_string(i)).pod.is_bound())
        << "three members that repel each other do not fit two nodes: none is bound";
  EXPECT_INVARIANTS(h);
  runtime_harness::must_ok(h.create(api::node_object{host("n-2"), {}, 0}), "n-2");
  ASSERT_TRUE(h.run_until(
      [&] {
        for (int i = 0; i < 3; ++i)
          if (!h.pod("ring-" + std::to_string(i)).pod.is_bound())
            return false;
        return true;
      },
      settle_limit, settle_step));
  std::set<std::string> nodes;
  for (int i = 0; i < 3; ++i)
    nodes.insert(h.pod("ring-" + std::to_string(i)).pod.node_name.str());
  EXPECT_EQ(nodes.size(), 3u);
  EXPECT_INVARIANTS(h);
}

// Many single-pod gangs that each want a zone to themselves, against nodes that all have room:
// at most one per zone, whatever order their plans and votes run in. Names are re-used after
// deletes, so the pods of a deleted generation must leave the nodes' pods too.
TEST(RulesBetweenPods, ContendingPodsWithZoneAntiAffinityTakeOneZoneEach) {
  std::vector<scheduler::node> nodes;
  for (int z = 0; z < 3; ++z)
    for (int n = 0; n < 3; ++n)
      nodes.push_back(host("z" + std::to_string(z) + "-n" + std::to_string(n),
                           "zone-" + std::to_string(z)));
  runtime_harness h{deterministic_config(7), nodes};
  for (int generation = 0; generation < 2; ++generation) {
    for (int i = 0; i < 8; ++i)
      h.create_pod(make_pod("solo-" + std::to_string(i))
                        .cpu("1")
                        .label("app", "solo")
                        .anti_affinity(pods_labelled("app", "solo", std::string(zone_key))));
    h.pass(std::chrono::milliseconds(3000));
    std::map<std::string, int> per_zone;
    int bound = 0;
    for (int i = 0; i < 8; ++i) {
      auto p = h.pod("solo-" + std::to_string(i)).pod;
      if (!p.is_bound())
        continue;
      ++bound;
      ++per_zone[p.node_name.str().substr(0, 2)];
    }
    EXPECT_EQ(bound, 3) << "generation " << generation;
    for (const auto& [zone, count] : per_zone)
      EXPECT_EQ(count, 1) << zone;
    EXPECT_INVARIANTS(h);
    for (int i = 0; i < 8; ++i)
      runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default",
                                        "solo-" + std::to_string(i)),
                               "delete");
    h.pass(std::chrono::milliseconds(500));
  }
}

} // namespace
} // namespace phalanx::actors::testing
