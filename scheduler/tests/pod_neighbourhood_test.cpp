#include "scheduler/pod_neighbourhood.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace phalanx::scheduler {
namespace {

using testing::make_node;
using testing::make_pod;
using testing::pods_labelled;

constexpr std::string_view hostname = "kubernetes.io/hostname";
constexpr std::string_view zone = "topology.kubernetes.io/zone";

node zoned(std::string name, std::string zone_name) {
  auto b = make_node(name).cpu("8").label(std::string(hostname), name);
  if (!zone_name.empty())
    b.label(std::string(zone), zone_name);
  return b;
}

node_selector_requirement requirement(std::string key, selector_operator op,
                                      std::vector<std::string> values = {}) {
  return {std::move(key), op, std::move(values)};
}

TEST(pod_neighbourhood, label_selectors_read_labels_as_kubernetes_does) {
  label_set labels{{"app", "web"}, {"tier", "front"}};
  label_selector everything;
  EXPECT_TRUE(matches(everything, labels));
  EXPECT_TRUE(matches(everything, {}));
  label_selector s;
  s.match_labels.set("app", "web");
  EXPECT_TRUE(matches(s, labels));
  s.match_expressions.push_back(requirement("tier", selector_operator::in, {"back", "front"}));
  EXPECT_TRUE(matches(s, labels));
  s.match_expressions.push_back(requirement("canary", selector_operator::does_not_exist));
  EXPECT_TRUE(matches(s, labels));
  s.match_expressions.push_back(requirement("tier", selector_operator::not_in, {"front"}));
  EXPECT_FALSE(matches(s, labels));
  label_selector other;
  other.match_labels.set("app", "db");
  EXPECT_FALSE(matches(other, labels));
  label_selector exists;
  exists.match_expressions.push_back(requirement("app", selector_operator::exists));
  EXPECT_TRUE(matches(exists, labels));
  EXPECT_FALSE(matches(exists, {}));
}

TEST(pod_neighbourhood, a_term_selects_by_labels_in_its_namespaces) {
  pod web = make_pod("web").ns("shop").label("app", "web");
  auto term = pods_labelled("app", "web");
  EXPECT_TRUE(term_selects(term, "shop", web));
  EXPECT_FALSE(term_selects(term, "default", web)) << "no namespaces: the owner's own only";
  term.namespaces = {"default", "shop"};
  EXPECT_TRUE(term_selects(term, "default", web));
  term.namespaces = {"default"};
  EXPECT_FALSE(term_selects(term, "shop", web)) << "listed namespaces replace the owner's";
  term.namespace_selector.emplace();
  EXPECT_TRUE(term_selects(term, "default", web)) << "an empty namespace selector: every one";
  term.namespace_selector->match_labels.set("team", "a");
  EXPECT_FALSE(term_selects(term, "default", web))
      << "with no namespace_directory only the name label is known: this adds no namespace";
  // Every namespace carries its name as a label, which a selector may name.
  term.namespaces = {};
  term.namespace_selector = label_selector{};
  term.namespace_selector->match_labels.set(namespace_name_label, "shop");
  EXPECT_TRUE(term_selects(term, "default", web));
  EXPECT_FALSE(term_selects(term, "default", make_pod("web").ns("other").label("app", "web")));
  term.namespace_selector = label_selector{};
  term.namespace_selector->match_expressions.push_back(
      {std::string(namespace_name_label), selector_operator::not_in, {"shop", "default"}});
  EXPECT_FALSE(term_selects(term, "default", web)) << "NotIn the pod's namespace";
  EXPECT_TRUE(term_selects(term, "shop", make_pod("web").ns("team-a").label("app", "web")))
      << "a selector replaces the owner's namespace: team-a is not in the list";
  term.namespaces = {"shop"};
  EXPECT_TRUE(term_selects(term, "default", web)) << "namespaces and the selector: their union";
  pod_affinity_term no_selector;
  no_selector.topology_key = hostname;
  EXPECT_FALSE(term_selects(no_selector, "shop", web)) << "a nil labelSelector selects nothing";
  pod_affinity_term empty_selector = no_selector;
  empty_selector.selector.emplace();
  EXPECT_TRUE(term_selects(empty_selector, "shop", web)) << "an empty one selects every pod";
}

// Two namespaces of team a (one of them also prod), one of team b, and one the directory does
// not hold (created after its snapshot): as kube-scheduler's Namespace lister would list them.
namespace_directory teams() {
  namespace_directory d;
  d.set("shop", {{namespace_name_label, "shop"}, {"team", "a"}, {"env", "prod"}});
  d.set("lab", {{namespace_name_label, "lab"}, {"team", "a"}});
  d.set("ops", {{namespace_name_label, "ops"}, {"team", "b"}});
  return d;
}

TEST(pod_neighbourhood, a_namespace_selector_matches_the_namespaces_labels) {
  const namespace_directory dir = teams();
  auto in = [](std::string ns) { return make_pod("web").ns(std::move(ns)).label("app", "web"); };
  auto term = pods_labelled("app", "web");
  term.namespace_selector.emplace();
  term.namespace_selector->match_labels.set("team", "a");
  struct row {
    std::string_view pod_namespace;
    bool selected;
  };
  for (auto r : {row{"shop", true}, row{"lab", true}, row{"ops", false}, row{"new", false}}) {
    EXPECT_EQ(term_selects(term, "ops", in(std::string(r.pod_namespace)), &dir), r.selected)
        << r.pod_namespace;
    // Without a directory only the name label is known: team=a selects no namespace.
    EXPECT_FALSE(term_selects(term, "ops", in(std::string(r.pod_namespace))));
  }
  // Expressions read the labels as a label selector does; a namespace not held has its name.
  term.namespace_selector = label_selector{};
  term.namespace_selector->match_expressions.push_back(
      requirement("env", selector_operator::exists));
  EXPECT_TRUE(term_selects(term, "ops", in("shop"), &dir));
  EXPECT_FALSE(term_selects(term, "ops", in("lab"), &dir));
  term.namespace_selector = label_selector{};
  term.namespace_selector->match_expressions.push_back(
      requirement("team", selector_operator::not_in, {"a"}));
  EXPECT_TRUE(term_selects(term, "shop", in("ops"), &dir));
  EXPECT_TRUE(term_selects(term, "shop", in("new"), &dir)) << "no team label: NotIn holds";
  EXPECT_FALSE(term_selects(term, "ops", in("lab"), &dir));
  term.namespace_selector->match_expressions = {
      requirement(std::string(namespace_name_label), selector_operator::in, {"new"})};
  EXPECT_TRUE(term_selects(term, "shop", in("new"), &dir)) << "the name label of one not held";
  // The union with listed namespaces stands.
  term.namespaces = {"ops"};
  term.namespace_selector->match_expressions = {requirement("team", selector_operator::in, {"a"})};
  EXPECT_TRUE(term_selects(term, "new", in("ops"), &dir));
  EXPECT_TRUE(term_selects(term, "new", in("lab"), &dir));
  EXPECT_FALSE(term_selects(term, "ops", in("new"), &dir));
}

TEST(pod_neighbourhood, host_ports_conflict_as_kubernetes_host_port_info_says) {
  struct row {
    host_port a, b;
    bool conflict;
  };
  const row rows[] = {
      {{"TCP", "", 80}, {"TCP", "", 80}, true},
      {{"TCP", "", 80}, {"UDP", "", 80}, false},
      {{"TCP", "", 80}, {"TCP", "", 81}, false},
      {{"TCP", "10.0.0.1", 80}, {"TCP", "", 80}, true},
      {{"TCP", "10.0.0.1", 80}, {"TCP", "0.0.0.0", 80}, true},
      {{"TCP", "10.0.0.1", 80}, {"TCP", "10.0.0.2", 80}, false},
      {{"TCP", "10.0.0.1", 80}, {"TCP", "10.0.0.1", 80}, true},
      {{"SCTP", "", 9000}, {"SCTP", "127.0.0.1", 9000}, true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(ports_conflict(r.a, r.b), r.conflict) << r.a.host_ip << " vs " << r.b.host_ip;
    EXPECT_EQ(ports_conflict(r.b, r.a), r.conflict);
  }
  std::vector<host_port> used{{"TCP", "", 80}, {"UDP", "", 53}};
  std::vector<host_port> wanted{{"TCP", "", 53}, {"UDP", "10.0.0.1", 53}};
  EXPECT_TRUE(any_port_conflict(wanted, used));
  wanted.pop_back();
  EXPECT_FALSE(any_port_conflict(wanted, used));
}

// Three nodes: n0 and n1 in zone a, n2 in zone b; n3 has no zone label.
struct cluster {
  std::vector<node> nodes{zoned("n0", "a"), zoned("n1", "a"), zoned("n2", "b"), zoned("n3", "")};
  pod_neighbourhood hood;
  std::vector<predicate_failure> verdicts(uint32_t kind) const {
    std::vector<predicate_failure> out;
    for (uint32_t i = 0; i < nodes.size(); ++i)
      out.push_back(hood.check(kind, i, nodes[i]));
    return out;
  }
};

constexpr auto ok = predicate_failure::none;
constexpr auto anti = predicate_failure::pod_anti_affinity;
constexpr auto existing = predicate_failure::existing_pod_anti_affinity;
constexpr auto affinity = predicate_failure::pod_affinity;
constexpr auto ports = predicate_failure::host_ports;

TEST(pod_neighbourhood, anti_affinity_keeps_a_pod_out_of_the_domains_of_the_pods_it_names) {
  pod db = make_pod("db").label("app", "db");
  pod by_host = make_pod("a").anti_affinity(pods_labelled("app", "db"));
  pod by_zone = make_pod("b").anti_affinity(pods_labelled("app", "db", std::string(zone)));
  cluster c;
  auto host_kind = c.hood.prepare(by_host);
  auto zone_kind = c.hood.prepare(by_zone);
  c.hood.add(0, c.nodes[0], db);
  EXPECT_EQ(c.verdicts(host_kind), (std::vector{anti, ok, ok, ok}));
  // A node without the term's key is in no domain of it: the term does not apply there.
  EXPECT_EQ(c.verdicts(zone_kind), (std::vector{anti, anti, ok, ok}));
  c.hood.remove(0, c.nodes[0], db);
  EXPECT_EQ(c.verdicts(zone_kind), (std::vector{ok, ok, ok, ok}));
}

TEST(pod_neighbourhood, a_pod_keeps_away_what_its_anti_affinity_names_both_ways) {
  pod guard = make_pod("guard").anti_affinity(pods_labelled("app", "web", std::string(zone)));
  pod web = make_pod("web").label("app", "web");
  pod other_namespace = make_pod("web2").ns("elsewhere").label("app", "web");
  pod plain = make_pod("plain").label("app", "db");
  cluster c;
  auto web_kind = c.hood.prepare(web);
  auto other_kind = c.hood.prepare(other_namespace);
  auto plain_kind = c.hood.prepare(plain);
  c.hood.add(2, c.nodes[2], guard);
  EXPECT_EQ(c.verdicts(web_kind), (std::vector{ok, ok, existing, ok}));
  EXPECT_EQ(c.verdicts(other_kind), (std::vector{ok, ok, ok, ok}));
  EXPECT_EQ(c.verdicts(plain_kind), (std::vector{ok, ok, ok, ok}));
}

TEST(pod_neighbourhood, namespace_selectors_read_the_directory_both_ways) {
  // A guard in ops keeps team a's web pods out of its zone; a web pod in ops keeps away from
  // team a's caches. Both are decided with the directory's labels, and not without it.
  const namespace_directory dir = teams();
  auto team_a = [] {
    auto t = pods_labelled("app", "web", std::string(zone));
    t.namespace_selector.emplace();
    t.namespace_selector->match_labels.set("team", "a");
    return t;
  };
  pod guard = make_pod("guard").ns("ops").anti_affinity(team_a());
  pod web_shop = make_pod("web").ns("shop").label("app", "web");
  pod web_ops = make_pod("web").ns("ops").label("app", "web");
  pod seeker = make_pod("seeker").ns("ops").label("app", "other").anti_affinity(team_a());
  for (const namespace_directory* d : {&dir, static_cast<const namespace_directory*>(nullptr)}) {
    cluster c;
    c.hood.set_namespaces(d);
    auto shop_kind = c.hood.prepare(web_shop);
    auto ops_kind = c.hood.prepare(web_ops);
    auto seeker_kind = c.hood.prepare(seeker);
    c.hood.add(2, c.nodes[2], guard);
    c.hood.add(0, c.nodes[0], web_shop);
    if (d) {
      EXPECT_EQ(c.verdicts(shop_kind), (std::vector{ok, ok, existing, ok}));
      EXPECT_EQ(c.verdicts(seeker_kind), (std::vector{anti, anti, ok, ok}));
    } else {
      EXPECT_EQ(c.verdicts(shop_kind), (std::vector{ok, ok, ok, ok}));
      EXPECT_EQ(c.verdicts(seeker_kind), (std::vector{ok, ok, ok, ok}));
    }
    EXPECT_EQ(c.verdicts(ops_kind), (std::vector{ok, ok, ok, ok})) << "ops is team b";
  }
}

TEST(pod_neighbourhood, affinity_needs_a_matching_pod_in_the_domain_of_every_term) {
  pod cache = make_pod("cache").label("app", "cache").label("tier", "mem");
  pod half = make_pod("half").label("app", "cache");  // Matches one term of two.
  pod follower = make_pod("f")
                     .pod_affinity(pods_labelled("app", "cache", std::string(zone)))
                     .pod_affinity(pods_labelled("tier", "mem", std::string(hostname)));
  cluster c;
  auto kind = c.hood.prepare(follower);
  c.hood.add(0, c.nodes[0], half);
  EXPECT_EQ(c.verdicts(kind), (std::vector{affinity, affinity, affinity, affinity}))
      << "a pod counts only when it matches every term";
  c.hood.add(1, c.nodes[1], cache);
  // Zone a has it, but only n1 is its host; n3 lacks the zone key.
  EXPECT_EQ(c.verdicts(kind), (std::vector{affinity, ok, affinity, affinity}));
}

TEST(pod_neighbourhood, the_first_pod_of_a_group_with_affinity_to_itself_may_go_anywhere) {
  pod member = make_pod("m").label("app", "ring").pod_affinity(
      pods_labelled("app", "ring", std::string(zone)));
  pod stranger = make_pod("s").label("app", "other").pod_affinity(
      pods_labelled("app", "ring", std::string(zone)));
  cluster c;
  auto member_kind = c.hood.prepare(member);
  auto stranger_kind = c.hood.prepare(stranger);
  // No ring pod anywhere: a member may start one on any node with the key; a stranger may not.
  EXPECT_EQ(c.verdicts(member_kind), (std::vector{ok, ok, ok, affinity}));
  EXPECT_EQ(c.verdicts(stranger_kind), (std::vector{affinity, affinity, affinity, affinity}));
  // Once one is placed (tentatively), the rest follow it into its zone.
  c.hood.add(2, c.nodes[2], member);
  EXPECT_EQ(c.verdicts(member_kind), (std::vector{affinity, affinity, ok, affinity}));
  EXPECT_EQ(c.verdicts(stranger_kind), (std::vector{affinity, affinity, ok, affinity}));
  c.hood.remove(2, c.nodes[2], member);
  EXPECT_EQ(c.verdicts(member_kind), (std::vector{ok, ok, ok, affinity}));
}

TEST(pod_neighbourhood, host_ports_come_first_and_free_again_on_remove) {
  pod server = make_pod("srv").label("app", "srv").host_port(8080);
  pod twin = make_pod("twin").label("app", "srv").host_port(8080).anti_affinity(
      pods_labelled("app", "srv"));
  pod udp = make_pod("udp").host_port(8080, "UDP");
  cluster c;
  auto twin_kind = c.hood.prepare(twin);
  auto udp_kind = c.hood.prepare(udp);
  c.hood.add(1, c.nodes[1], server);
  EXPECT_EQ(c.verdicts(twin_kind), (std::vector{ok, ports, ok, ok}))
      << "NodePorts is checked before InterPodAffinity";
  EXPECT_EQ(c.verdicts(udp_kind), (std::vector{ok, ok, ok, ok}));
  c.hood.remove(1, c.nodes[1], server);
  EXPECT_EQ(c.verdicts(twin_kind), (std::vector{ok, ok, ok, ok}));
}

constexpr auto skew = predicate_failure::topology_spread;
constexpr auto no_label = predicate_failure::topology_spread_label;

// Every node is a domain candidate before the pods come, as the planner and the vote do it.
void add_nodes(cluster& c) {
  for (uint32_t i = 0; i < c.nodes.size(); ++i)
    c.hood.add_node(i, c.nodes[i]);
}

TEST(pod_neighbourhood, topology_spread_keeps_the_skew_within_max_skew) {
  pod web = make_pod("w").label("app", "web").spread(std::string(zone), 1, "app", "web");
  cluster c;
  auto kind = c.hood.prepare(web);
  ASSERT_TRUE(c.hood.spreads());
  add_nodes(c);
  // Zones a (n0, n1) and b (n2); n3 has no zone, so it is no domain and cannot take the pod.
  EXPECT_EQ(c.verdicts(kind), (std::vector{ok, ok, ok, no_label}));
  pod placed = make_pod("w0").label("app", "web");
  c.hood.add(0, c.nodes[0], placed);
  EXPECT_EQ(c.verdicts(kind), (std::vector{skew, skew, ok, no_label}))
      << "a: 1 + itself - fewest 0 = 2 > 1";
  c.hood.add(2, c.nodes[2], placed);
  EXPECT_EQ(c.verdicts(kind), (std::vector{ok, ok, ok, no_label}));
  // Pods of another namespace or another app are not counted.
  pod stranger = make_pod("s").ns("other").label("app", "web");
  pod other_app = make_pod("o").label("app", "db");
  c.hood.add(0, c.nodes[0], stranger);
  c.hood.add(0, c.nodes[0], other_app);
  EXPECT_EQ(c.verdicts(kind), (std::vector{ok, ok, ok, no_label}));
  c.hood.remove(2, c.nodes[2], placed);
  EXPECT_EQ(c.verdicts(kind), (std::vector{skew, skew, ok, no_label}));
}

TEST(pod_neighbourhood, min_domains_counts_missing_domains_as_empty) {
  auto b = make_pod("w").label("app", "web").spread(std::string(zone), 1, "app", "web");
  pod placed = make_pod("w0").label("app", "web");
  for (std::optional<int32_t> min_domains : {std::optional<int32_t>{}, std::optional<int32_t>{3}}) {
    auto builder = b;
    builder.last_spread().min_domains = min_domains;
    pod web = builder;
    cluster c;
    auto kind = c.hood.prepare(web);
    add_nodes(c);
    c.hood.add(0, c.nodes[0], placed);
    c.hood.add(2, c.nodes[2], placed);
    // Two domains with one pod each: the fewest is 1, or 0 when three domains are asked for.
    auto expected = min_domains ? std::vector{skew, skew, skew, no_label}
                                : std::vector{ok, ok, ok, no_label};
    EXPECT_EQ(c.verdicts(kind), expected) << (min_domains ? "minDomains 3" : "no minDomains");
  }
}

TEST(pod_neighbourhood, spread_domains_honour_node_affinity_unless_told_to_ignore_it) {
  auto b = make_pod("w").label("app", "web").selector(std::string(zone), "a").spread(
      std::string(zone), 1, "app", "web");
  pod placed = make_pod("w0").label("app", "web");
  for (bool honor : {true, false}) {
    auto builder = b;
    builder.last_spread().honor_node_affinity = honor;
    pod web = builder;
    cluster c;
    auto kind = c.hood.prepare(web);
    add_nodes(c);
    c.hood.add(0, c.nodes[0], placed);
    // Honoured, zone b is no domain (the pod may not go there): a is the fewest. Ignored, b
    // counts with 0 pods and a is one too many.
    EXPECT_EQ(c.verdicts(kind)[1], honor ? ok : skew) << (honor ? "Honor" : "Ignore");
  }
}

TEST(pod_neighbourhood, match_label_keys_narrow_the_selector_to_the_pods_own_values) {
  auto builder = make_pod("w").label("app", "web").label("version", "v2").spread(
      std::string(zone), 1, "app", "web");
  builder.last_spread().match_label_keys = {"version", "absent"};
  pod web = builder;
  cluster c;
  auto kind = c.hood.prepare(web);
  add_nodes(c);
  pod old_version = make_pod("v1").label("app", "web").label("version", "v1");
  c.hood.add(0, c.nodes[0], old_version);
  EXPECT_EQ(c.verdicts(kind), (std::vector{ok, ok, ok, no_label}));
  pod same_version = make_pod("v2").label("app", "web").label("version", "v2");
  c.hood.add(0, c.nodes[0], same_version);
  EXPECT_EQ(c.verdicts(kind), (std::vector{skew, skew, ok, no_label}));
}

TEST(pod_neighbourhood, schedule_anyway_constraints_do_not_filter) {
  auto builder = make_pod("w").label("app", "web").spread(std::string(zone), 1, "app", "web");
  builder.last_spread().do_not_schedule = false;
  pod web = builder;
  EXPECT_FALSE(has_neighbour_rules(web));
  cluster c;
  auto kind = c.hood.prepare(web);
  EXPECT_FALSE(c.hood.spreads());
  EXPECT_EQ(c.verdicts(kind), (std::vector{ok, ok, ok, ok}));
}

} // namespace
} // namespace phalanx::scheduler
