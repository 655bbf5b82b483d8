// kube-scheduler's score plugins, one table each: the raw score of a node as the plugin computes
// it (TaintToleration, NodeAffinity in scores.hpp; InterPodAffinity and PodTopologySpread in
// pod_preferences.hpp), then the normalization over the nodes scored, with the odd cases
// kube-scheduler's own tests pin down.

#include "scheduler/pod_preferences.hpp"
#include "scheduler/scores.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::make_node;
using testing::make_pod;
using testing::pods_labelled;

constexpr std::string_view zone = "topology.kubernetes.io/zone";

std::vector<int64_t> normalized(std::vector<int64_t> raw, void (*normalize)(std::span<int64_t>)) {
  normalize(raw);
  return raw;
}

// ---------------------------------------------------------------------------------------------
// TaintToleration

toleration tolerate(std::string key, toleration_operator op, std::string value,
                    std::optional<taint_effect> effect) {
  return {std::move(key), op, std::move(value), effect, std::nullopt};
}

TEST(taint_toleration_score, counts_the_prefer_no_schedule_taints_not_tolerated) {
  constexpr auto prefer = taint_effect::prefer_no_schedule;
  constexpr auto equal = toleration_operator::equal;
  constexpr auto exists = toleration_operator::exists;
  struct row {
    const char* name;
    node n;
    std::vector<toleration> tolerations;
    int64_t want;
  };
  const std::vector<row> rows = {
      {"no taints", make_node("n"), {}, 0},
      {"one untolerated", make_node("n").taint("spot", "yes", prefer), {}, 1},
      {"NoSchedule and NoExecute are the filter's",
       make_node("n")
           .taint("a", "1", taint_effect::no_schedule)
           .taint("b", "1", taint_effect::no_execute),
       {},
       0},
      {"tolerated with the effect named",
       make_node("n").taint("spot", "yes", prefer),
       {tolerate("spot", equal, "yes", prefer)},
       0},
      {"a toleration with an empty effect tolerates every effect",
       make_node("n").taint("spot", "yes", prefer),
       {tolerate("spot", equal, "yes", std::nullopt)},
       0},
      {"a NoSchedule toleration does not count for PreferNoSchedule",
       make_node("n").taint("spot", "yes", prefer),
       {tolerate("spot", equal, "yes", taint_effect::no_schedule)},
       1},
      {"the value must match with Equal",
       make_node("n").taint("spot", "yes", prefer),
       {tolerate("spot", equal, "no", prefer)},
       1},
      {"Exists tolerates every value",
       make_node("n").taint("spot", "yes", prefer),
       {tolerate("spot", exists, "", prefer)},
       0},
      {"an empty key with Exists tolerates every taint",
       make_node("n").taint("spot", "yes", prefer).taint("old", "", prefer),
       {tolerate("", exists, "", std::nullopt)},
       0},
      {"each taint counts once",
       make_node("n").taint("spot", "yes", prefer).taint("old", "", prefer).taint("x", "", prefer),
       {tolerate("old", exists, "", std::nullopt)},
       2},
  };
  for (const auto& r : rows)
    EXPECT_EQ(intolerable_preferred_taints(r.n, r.tolerations), r.want) << r.name;
}

TEST(taint_toleration_score, normalized_reversed_over_the_nodes_scored) {
  EXPECT_EQ(normalized({0, 1, 2}, normalize_taint_toleration),
            (std::vector<int64_t>{10000, 5000, 0}));
  EXPECT_EQ(normalized({1, 3, 0}, normalize_taint_toleration),
            (std::vector<int64_t>{6667, 0, 10000}))
      << "10000 - floor(10000 * 1 / 3)";
  EXPECT_EQ(normalized({0, 0}, normalize_taint_toleration), (std::vector<int64_t>{10000, 10000}))
      << "no untolerated taint anywhere: every node gets the maximum";
  EXPECT_EQ(normalized({2, 2}, normalize_taint_toleration), (std::vector<int64_t>{0, 0}));
}

// ---------------------------------------------------------------------------------------------
// NodeAffinity

node_selector_term term_of(std::vector<node_selector_requirement> expressions,
                           std::vector<node_selector_requirement> fields = {}) {
  return {std::move(expressions), std::move(fields)};
}

TEST(node_affinity_score, sums_the_weights_of_the_terms_a_node_matches) {
  constexpr auto in = selector_operator::in;
  const node n1 = make_node("n1").label("zone", "a").label("disk", "ssd").label("cores", "32");
  const std::vector<weighted_node_selector_term> terms = {
      {10, term_of({{"zone", in, {"a", "b"}}})},
      {20, term_of({{"disk", in, {"ssd"}}, {"zone", in, {"b"}}})},  // Every requirement: no.
      {30, term_of({{"cores", selector_operator::gt, {"16"}}})},
      {40, term_of({}, {{"metadata.name", in, {"n1"}}})},
      {50, term_of({})},  // An empty term matches no node.
  };
  EXPECT_EQ(preferred_node_affinity_score(n1, terms), 10 + 30 + 40);
  const node bare = make_node("n2");
  EXPECT_EQ(preferred_node_affinity_score(bare, terms), 0);
  const std::vector<weighted_node_selector_term> zero = {{0, term_of({{"zone", in, {"a"}}})}};
  EXPECT_EQ(preferred_node_affinity_score(n1, zero), 0) << "a term of weight 0 is skipped";
  EXPECT_EQ(preferred_node_affinity_score(n1, {}), 0);
}

TEST(node_affinity_score, normalized_by_the_largest) {
  EXPECT_EQ(normalized({0, 30, 100}, normalize_node_affinity),
            (std::vector<int64_t>{0, 3000, 10000}));
  EXPECT_EQ(normalized({7, 3}, normalize_node_affinity), (std::vector<int64_t>{10000, 4285}));
  EXPECT_EQ(normalized({0, 0, 0}, normalize_node_affinity), (std::vector<int64_t>{0, 0, 0}))
      << "no node matches: all equal at 0";
  EXPECT_EQ(normalized({5, 5}, normalize_node_affinity), (std::vector<int64_t>{10000, 10000}));
}

// ---------------------------------------------------------------------------------------------
// InterPodAffinity

node host(std::string name, std::string zone_name = "") {
  auto b = make_node(name).label("kubernetes.io/hostname", name);
  if (!zone_name.empty())
    b.label(std::string(zone), zone_name);
  return b;
}

// A cluster of nodes with pods on them, and a pod_preferences for one incoming pod.
struct preferences_fixture {
  std::vector<node> nodes;
  std::vector<pod> pods;
  std::vector<std::size_t> pod_node;
  pod_preferences preferences;
  uint32_t kind = 0;

  void put(pod p, std::size_t node_index) {
    pods.push_back(std::move(p));
    pod_node.push_back(node_index);
  }
  // Prepares `incoming` and adds every pod.
  void prepare(const pod& incoming) {
    preferences.clear();
    kind = preferences.prepare(incoming);
    for (std::size_t i = 0; i < pods.size(); ++i)
      preferences.add(uint32_t(pod_node[i]), nodes[pod_node[i]], pods[i]);
  }
  std::vector<scored_node> scored() const {
    std::vector<scored_node> out;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      out.push_back({uint32_t(i), &nodes[i]});
    return out;
  }
  std::vector<int64_t> inter_pod_scores() const {
    std::vector<int64_t> out;
    for (const auto& n : scored())
      out.push_back(preferences.inter_pod_affinity_score(kind, n));
    return out;
  }
  // Raw spread scores of every node, the node lacking a key as nullopt.
  std::vector<std::optional<int64_t>> spread_scores() {
    std::vector<int64_t> weights;
    preferences.topology_weights(kind, scored(), weights);
    std::vector<std::optional<int64_t>> out;
    for (const auto& n : scored())
      out.push_back(preferences.topology_spread_score(kind, n, weights));
    return out;
  }
  std::vector<int64_t> normalized_spread() {
    std::vector<int64_t> raw;
    std::vector<uint8_t> ignored;
    for (const auto& s : spread_scores()) {
      raw.push_back(s.value_or(0));
      ignored.push_back(!s);
    }
    normalize_topology_spread(raw, ignored);
    return raw;
  }
};

TEST(inter_pod_affinity_score, the_incoming_pods_terms_weigh_the_domains_of_pods_they_select) {
  preferences_fixture f;
  f.nodes = {host("n0", "a"), host("n1", "a"), host("n2", "b"), host("n3")};
  f.put(make_pod("db").ns("ns").label("app", "db"), 0);
  f.put(make_pod("web").ns("ns").label("app", "web"), 2);
  f.put(make_pod("other-db").ns("elsewhere").label("app", "db"), 2);
  pod incoming = make_pod("in")
                     .ns("ns")
                     .preferred_affinity(10, pods_labelled("app", "db", std::string(zone)))
                     .preferred_anti_affinity(5, pods_labelled("app", "web"));
  f.prepare(incoming);
  // n0 and n1 share zone a with db (+10); n2 holds web (-5); other-db is in another namespace;
  // n3 has no zone: the zone term adds nothing there.
  EXPECT_EQ(f.inter_pod_scores(), (std::vector<int64_t>{10, 10, -5, 0}));
  EXPECT_TRUE(f.preferences.depends_on_pods(f.kind));
}

TEST(inter_pod_affinity_score, existing_pods_terms_that_select_the_incoming_pod_count_too) {
  preferences_fixture f;
  f.nodes = {host("n0", "a"), host("n1", "b"), host("n2", "c"), host("n3", "d")};
  // Required affinity: hardPodAffinityWeight (1) per term; preferred: its weight, anti negative;
  // required anti-affinity only filters.
  f.put(make_pod("needs-me").ns("ns").pod_affinity(pods_labelled("app", "in", std::string(zone))),
        0);
  f.put(make_pod("likes-me").ns("ns").preferred_affinity(7, pods_labelled("app", "in")), 1);
  f.put(make_pod("avoids-me")
            .ns("ns")
            .preferred_anti_affinity(3, pods_labelled("app", "in"))
            .anti_affinity(pods_labelled("app", "in")),
        2);
  f.put(make_pod("likes-others").ns("ns").preferred_affinity(9, pods_labelled("app", "other")),
        3);
  pod incoming = make_pod("in").ns("ns").label("app", "in");
  f.prepare(incoming);
  EXPECT_EQ(f.inter_pod_scores(), (std::vector<int64_t>{1, 7, -3, 0}));
  EXPECT_TRUE(f.preferences.depends_on_pods(f.kind)) << "selected by existing pods' terms";
  EXPECT_TRUE(scoring_terms_select(f.pods[1], incoming));
  EXPECT_FALSE(scoring_terms_select(f.pods[3], incoming));
}

TEST(inter_pod_affinity_score, a_pod_nobody_selects_does_not_depend_on_pods) {
  preferences_fixture f;
  f.nodes = {host("n0")};
  f.put(make_pod("likes-others").ns("ns").preferred_affinity(9, pods_labelled("app", "other")), 0);
  f.prepare(make_pod("in").ns("ns").label("app", "in"));
  EXPECT_FALSE(f.preferences.depends_on_pods(f.kind));
  EXPECT_EQ(f.inter_pod_scores(), (std::vector<int64_t>{0}));
}

TEST(inter_pod_affinity_score, the_incoming_pod_is_not_counted_against_itself) {
  preferences_fixture f;
  f.nodes = {host("n0"), host("n1")};
  pod incoming = make_pod("in").ns("ns").label("app", "ring").preferred_anti_affinity(
      50, pods_labelled("app", "ring"));
  f.prepare(incoming);
  EXPECT_EQ(f.inter_pod_scores(), (std::vector<int64_t>{0, 0}));
  // A member of its gang placed on n1 is another pod: its domain loses the weight, and its own
  // term (the same) adds the symmetric side.
  pod member = make_pod("member").ns("ns").label("app", "ring").preferred_anti_affinity(
      50, pods_labelled("app", "ring"));
  f.preferences.add(1, f.nodes[1], member);
  EXPECT_EQ(f.inter_pod_scores(), (std::vector<int64_t>{0, -100}));
  f.preferences.remove(1, f.nodes[1], member);
  EXPECT_EQ(f.inter_pod_scores(), (std::vector<int64_t>{0, 0}));
}

TEST(inter_pod_affinity_score, normalized_between_the_least_and_the_most) {
  EXPECT_EQ(normalized({-5, 0, 10}, normalize_inter_pod_affinity),
            (std::vector<int64_t>{0, 3333, 10000}));
  EXPECT_EQ(normalized({-8, -2, -4}, normalize_inter_pod_affinity),
            (std::vector<int64_t>{0, 10000, 6666}))
      << "every sum negative: the least negative is best";
  EXPECT_EQ(normalized({3, 3, 3}, normalize_inter_pod_affinity), (std::vector<int64_t>{0, 0, 0}))
      << "all equal: 0 for every node";
  EXPECT_EQ(normalized({-4}, normalize_inter_pod_affinity), (std::vector<int64_t>{0}));
}

// ---------------------------------------------------------------------------------------------
// PodTopologySpread

TEST(topology_spread_score, counts_per_zone_weighted_by_the_zones_scored) {
  preferences_fixture f;
  f.nodes = {host("a0", "a"), host("a1", "a"), host("b0", "b"), host("c0", "c"), host("none")};
  for (auto [name, at] : {std::pair{"w0", 0}, {"w1", 1}, {"w2", 2}})
    f.put(make_pod(name).ns("ns").label("app", "w"), std::size_t(at));
  f.put(make_pod("db").ns("ns").label("app", "db"), 3);        // Not selected.
  f.put(make_pod("w-far").ns("other").label("app", "w"), 3);   // Another namespace.
  pod incoming = make_pod("in").ns("ns").label("app", "w").spread_anyway(std::string(zone), 1,
                                                                          "app", "w");
  f.prepare(incoming);
  // Three zones among the nodes scored: weight ln 5 = 1.609; a holds 2, b 1, c 0.
  // round(2 * 1.609) = 3, round(1.609) = 2; the node without a zone is not scored.
  EXPECT_EQ(f.spread_scores(),
            (std::vector<std::optional<int64_t>>{3, 3, 2, 0, std::nullopt}));
  // (max + min - raw) * 10000 / max with max 3, min 0; the unscored node gets 0.
  EXPECT_EQ(f.normalized_spread(), (std::vector<int64_t>{0, 0, 3333, 10000, 0}));
}

TEST(topology_spread_score, max_skew_waters_the_differences_down) {
  preferences_fixture f;
  f.nodes = {host("a0", "a"), host("a1", "a"), host("b0", "b"), host("c0", "c")};
  for (auto [name, at] : {std::pair{"w0", 0}, {"w1", 1}, {"w2", 2}})
    f.put(make_pod(name).ns("ns").label("app", "w"), std::size_t(at));
  pod incoming = make_pod("in").ns("ns").label("app", "w").spread_anyway(std::string(zone), 3,
                                                                          "app", "w");
  f.prepare(incoming);
  // + maxSkew - 1 = 2 each: round(5.219) = 5, round(3.609) = 4, 2.
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{5, 5, 4, 2}));
  EXPECT_EQ(f.normalized_spread(), (std::vector<int64_t>{4000, 4000, 6000, 10000}));
}

TEST(topology_spread_score, hostname_counts_each_nodes_own_pods) {
  preferences_fixture f;
  f.nodes = {host("n0"), host("n1"), host("n2")};
  f.put(make_pod("w0").ns("ns").label("app", "w"), 0);
  f.put(make_pod("w1").ns("ns").label("app", "w"), 0);
  f.put(make_pod("w2").ns("ns").label("app", "w"), 1);
  pod incoming = make_pod("in").ns("ns").label("app", "w").spread_anyway(
      "kubernetes.io/hostname", 1, "app", "w");
  f.prepare(incoming);
  // Weight ln(3 nodes + 2): round(3.219) = 3, round(1.609) = 2, 0.
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{3, 2, 0}));
  EXPECT_EQ(f.normalized_spread(), (std::vector<int64_t>{0, 3333, 10000}));
}

TEST(topology_spread_score, every_node_equal_gets_the_maximum) {
  preferences_fixture f;
  f.nodes = {host("a0", "a"), host("b0", "b")};
  pod incoming = make_pod("in").ns("ns").label("app", "w").spread_anyway(std::string(zone), 1,
                                                                          "app", "w");
  f.prepare(incoming);
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{0, 0}));
  EXPECT_EQ(f.normalized_spread(), (std::vector<int64_t>{10000, 10000}));
  f.put(make_pod("w0").ns("ns").label("app", "w"), 0);
  f.put(make_pod("w1").ns("ns").label("app", "w"), 1);
  f.prepare(incoming);
  // ln 4 = 1.386 each: raw 1 everywhere, (1 + 1 - 1) * 10000 / 1.
  EXPECT_EQ(f.normalized_spread(), (std::vector<int64_t>{10000, 10000}));
}

TEST(topology_spread_score, a_node_lacking_any_key_of_the_constraints_is_not_scored) {
  preferences_fixture f;
  f.nodes = {host("a0", "a"), host("b0", "b"), make_node("bare").label(std::string(zone), "a")};
  f.put(make_pod("w0").ns("ns").label("app", "w"), 0);
  f.put(make_pod("w1").ns("ns").label("app", "w"), 2);  // On a node lacking the hostname key.
  pod incoming = make_pod("in")
                     .ns("ns")
                     .label("app", "w")
                     .spread_anyway(std::string(zone), 1, "app", "w")
                     .spread_anyway("kubernetes.io/hostname", 1, "app", "w");
  f.prepare(incoming);
  // Zone counts only eligible nodes (both keys): w1 is not counted in zone a. Zone a: 1,
  // weight ln 4; hostname a0: 1, weight ln 4: round(1.386 + 1.386) = 3.
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{3, 0, std::nullopt}));
  EXPECT_EQ(f.normalized_spread(), (std::vector<int64_t>{0, 10000, 0}));
}

TEST(topology_spread_score, match_label_keys_narrow_the_selector_to_the_pods_own_values) {
  preferences_fixture f;
  f.nodes = {host("a0", "a"), host("b0", "b")};
  f.put(make_pod("old").ns("ns").label("app", "w").label("rev", "1"), 0);
  f.put(make_pod("new").ns("ns").label("app", "w").label("rev", "2"), 1);
  f.put(make_pod("new-b").ns("ns").label("app", "w").label("rev", "2"), 1);
  auto incoming_of = [](std::string rev) {
    auto b = make_pod("in").ns("ns").label("app", "w").label("rev", rev).spread_anyway(
        std::string(zone), 1, "app", "w");
    b.last_spread().match_label_keys = {"rev", "absent-key"};
    return b.obj();
  };
  pod rev2 = incoming_of("2");
  f.prepare(rev2);
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{0, 3}))
      << "only rev=2 pods count (ln 4 * 2 = 2.77); a key the pod lacks is ignored";
  pod rev1 = incoming_of("1");
  f.prepare(rev1);
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{1, 0}));
}

TEST(topology_spread_score, node_inclusion_policies_decide_which_nodes_count) {
  preferences_fixture f;
  f.nodes = {host("a0", "a"), host("a1", "a"), host("b0", "b"), host("b1", "b")};
  f.nodes[1].taints.push_back({"spot", "", taint_effect::no_schedule});
  f.nodes[3].meta.labels.set("pool", "gpu");
  f.put(make_pod("w0").ns("ns").label("app", "w"), 1);  // On the tainted node.
  f.put(make_pod("w1").ns("ns").label("app", "w"), 3);  // On the node the selector refuses.
  auto b =
      make_pod("in").ns("ns").label("app", "w").spread_anyway(std::string(zone), 1, "app", "w");
  b.affinity(term_of({{"pool", selector_operator::does_not_exist, {}}}));
  pod defaults = b.obj();
  f.prepare(defaults);
  // nodeAffinityPolicy Honor: w1's node fails the pod's node affinity, not counted;
  // nodeTaintsPolicy Ignore: w0 on the tainted node counts.
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{1, 1, 0, 0}));
  b.last_spread().honor_node_affinity = false;
  b.last_spread().honor_node_taints = true;
  pod flipped = b.obj();
  f.prepare(flipped);
  EXPECT_EQ(f.spread_scores(), (std::vector<std::optional<int64_t>>{0, 0, 1, 1}));
}

TEST(topology_spread_score, do_not_schedule_constraints_only_filter) {
  preferences_fixture f;
  f.nodes = {host("a0", "a")};
  f.put(make_pod("w0").ns("ns").label("app", "w"), 0);
  pod incoming = make_pod("in").ns("ns").label("app", "w").spread(std::string(zone), 1, "app", "w");
  f.prepare(incoming);
  EXPECT_FALSE(f.preferences.spreads(f.kind));
  EXPECT_FALSE(f.preferences.depends_on_pods(f.kind));
  EXPECT_FALSE(has_pod_preferences(incoming));
}

TEST(topology_spread_score, normalization_takes_the_largest_as_at_least_zero) {
  std::vector<int64_t> raw = {4, 2, 7, 9};
  std::vector<uint8_t> ignored = {0, 0, 1, 0};
  normalize_topology_spread(raw, ignored);
  // max 9, min 2: 10000 * (11 - raw) / 9; the ignored node gets 0 and takes no part.
  EXPECT_EQ(raw, (std::vector<int64_t>{7777, 10000, 0, 2222}));
  std::vector<int64_t> none = {5};
  std::vector<uint8_t> all_ignored = {1};
  normalize_topology_spread(none, all_ignored);
  EXPECT_EQ(none, (std::vector<int64_t>{0}));
}

TEST(topology_weight, the_logarithm_is_integer_arithmetic_close_to_the_real_one) {
  EXPECT_EQ(log_q32(1), 0);
  for (uint64_t n = 1; n <= 100000; ++n) {
    double want = std::log(double(n));
    double got = double(log_q32(n)) / 4294967296.0;
    ASSERT_NEAR(got, want, 1e-9) << n;
  }
  for (uint64_t n : {uint64_t(1) << 20, (uint64_t(1) << 32) - 1, uint64_t(1) << 32})
    EXPECT_NEAR(double(log_q32(n)) / 4294967296.0, std::log(double(n)), 1e-9) << n;
  // kube-scheduler's range for up to 5000 nodes: ln 3 = 1.0986 to ln 5002 = 8.5176.
  EXPECT_NEAR(double(topology_weight_q32(1)) / 4294967296.0, 1.0986, 1e-4);
  EXPECT_NEAR(double(topology_weight_q32(5000)) / 4294967296.0, 8.5176, 1e-4);
}

// ---------------------------------------------------------------------------------------------
// Combined

TEST(combined_score, the_default_profiles_weights) {
  EXPECT_EQ(combined_score({1, 0, 0, 0, 0}), 1);
  EXPECT_EQ(combined_score({0, 1, 0, 0, 0}), 3);
  EXPECT_EQ(combined_score({0, 0, 1, 0, 0}), 2);
  EXPECT_EQ(combined_score({0, 0, 0, 1, 0}), 2);
  EXPECT_EQ(combined_score({0, 0, 0, 0, 1}), 2);
  EXPECT_EQ(combined_score({max_node_score, max_node_score, max_node_score, max_node_score,
                            max_node_score}),
            max_combined_score);
  EXPECT_LT(max_combined_score, int64_t(1) << 32) << "the planner's heap keys hold it";
}

} // namespace
} // namespace phalanx::scheduler
