#include "scheduler/predicates.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <set>

namespace phalanx::scheduler {
namespace {

using testing::make_node;
using testing::make_pod;
using testing::res;

TEST(predicate_failure, every_value_has_a_distinct_name) {
  std::set<std::string_view> names;
  for (int i = 0; i <= int(predicate_failure_last); ++i) {
    auto name = to_string(predicate_failure(i));
    EXPECT_NE(name, "unknown") << i;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size_t(predicate_failure_last) + 1);
}

TEST(predicate_failure, only_static_predicates_are_unresolvable) {
  EXPECT_FALSE(is_unresolvable(predicate_failure::none));
  EXPECT_TRUE(is_unresolvable(predicate_failure::node_unschedulable));
  EXPECT_TRUE(is_unresolvable(predicate_failure::untolerated_taint));
  EXPECT_TRUE(is_unresolvable(predicate_failure::node_affinity));
  EXPECT_TRUE(is_unresolvable(predicate_failure::exceeds_allocatable));
  EXPECT_FALSE(is_unresolvable(predicate_failure::insufficient_resources));
  // The pods in the way of a rule between pods may go.
  EXPECT_FALSE(is_unresolvable(predicate_failure::host_ports));
  EXPECT_FALSE(is_unresolvable(predicate_failure::existing_pod_anti_affinity));
  EXPECT_FALSE(is_unresolvable(predicate_failure::pod_affinity));
  EXPECT_FALSE(is_unresolvable(predicate_failure::pod_anti_affinity));
}

// ---------------------------------------------------------------------------------------------
// Node affinity operators

struct requirement_case {
  const char* name;
  selector_operator op;
  std::vector<std::string> values;
  std::optional<std::string> label; // The node's value of key "k"; nullopt: absent.
  bool want;
};

TEST(matches_requirement, every_operator) {
  using so = selector_operator;
  const requirement_case cases[] = {
      {"in hit", so::in, {"a", "b"}, "b", true},
      {"in miss", so::in, {"a", "b"}, "c", false},
      {"in absent", so::in, {"a"}, std::nullopt, false},
      {"in empty value", so::in, {""}, "", true},
      {"notin hit", so::not_in, {"a", "b"}, "a", false},
      {"notin miss", so::not_in, {"a", "b"}, "c", true},
      {"notin absent matches", so::not_in, {"a"}, std::nullopt, true},
      {"exists present", so::exists, {}, "x", true},
      {"exists empty value", so::exists, {}, "", true},
      {"exists absent", so::exists, {}, std::nullopt, false},
      {"doesnotexist absent", so::does_not_exist, {}, std::nullopt, true},
      {"doesnotexist present", so::does_not_exist, {}, "x", false},
      {"gt greater", so::gt, {"5"}, "6", true},
      {"gt equal", so::gt, {"5"}, "5", false},
      {"gt less", so::gt, {"5"}, "4", false},
      {"gt negative", so::gt, {"-3"}, "-2", true},
      {"gt plus sign", so::gt, {"+1"}, "2", true},
      {"gt not a number", so::gt, {"5"}, "six", false},
      {"gt value not a number", so::gt, {"five"}, "6", false},
      {"gt fraction", so::gt, {"5"}, "5.5", false},
      {"gt absent", so::gt, {"5"}, std::nullopt, false},
      {"gt two values", so::gt, {"1", "2"}, "6", false},
      {"gt overflow", so::gt, {"1"}, "99999999999999999999", false},
      {"gt large", so::gt, {"9223372036854775806"}, "9223372036854775807", true},
      {"lt less", so::lt, {"10"}, "9", true},
      {"lt equal", so::lt, {"10"}, "10", false},
      {"lt greater", so::lt, {"10"}, "11", false},
      {"lt leading space", so::lt, {"10"}, " 9", false},
      {"lt empty label", so::lt, {"10"}, "", false},
  };
  for (const auto& c : cases) {
    label_set labels;
    if (c.label)
      labels.set("k", *c.label);
    node_selector_requirement r{"k", c.op, c.values};
    EXPECT_EQ(matches_requirement(labels, r), c.want) << c.name;
  }
}

TEST(matches_term, expressions_are_anded_and_empty_terms_match_nothing) {
  node n = make_node("n1").label("zone", "a").label("disk", "ssd");
  node_selector_term both{
      {{"zone", selector_operator::in, {"a"}}, {"disk", selector_operator::in, {"ssd"}}}, {}};
  node_selector_term one_wrong{
      {{"zone", selector_operator::in, {"a"}}, {"disk", selector_operator::in, {"hdd"}}}, {}};
  EXPECT_TRUE(matches_term(n, both));
  EXPECT_FALSE(matches_term(n, one_wrong));
  EXPECT_FALSE(matches_term(n, node_selector_term{}));
}

TEST(matches_term, match_fields_on_metadata_name) {
  node n = make_node("node-7");
  node_selector_term in{{}, {{"metadata.name", selector_operator::in, {"node-7", "node-8"}}}};
  node_selector_term not_in{{}, {{"metadata.name", selector_operator::not_in, {"node-7"}}}};
  node_selector_term other_field{{}, {{"spec.unschedulable", selector_operator::in, {"n"}}}};
  node_selector_term field_and_label{{{"zone", selector_operator::exists, {}}},
                                     {{"metadata.name", selector_operator::in, {"node-7"}}}};
  EXPECT_TRUE(matches_term(n, in));
  EXPECT_FALSE(matches_term(n, not_in));
  EXPECT_FALSE(matches_term(n, other_field));
  EXPECT_FALSE(matches_term(n, field_and_label));
  n.meta.labels.set("zone", "a");
  EXPECT_TRUE(matches_term(n, field_and_label));
}

TEST(matches_node_affinity, terms_are_ored_and_selector_is_anded) {
  node n = make_node("n1").label("zone", "b").label("gpu", "true");
  node_selector_term zone_a{{{"zone", selector_operator::in, {"a"}}}, {}};
  node_selector_term zone_b{{{"zone", selector_operator::in, {"b"}}}, {}};

  placement_constraints c;
  EXPECT_TRUE(matches_node_affinity(n, c)) << "no constraints";
  c.required_node_affinity = {zone_a};
  EXPECT_FALSE(matches_node_affinity(n, c));
  c.required_node_affinity = {zone_a, zone_b};
  EXPECT_TRUE(matches_node_affinity(n, c)) << "ORed terms";
  c.node_selector.set("gpu", "true");
  EXPECT_TRUE(matches_node_affinity(n, c));
  c.node_selector.set("gpu", "false");
  EXPECT_FALSE(matches_node_affinity(n, c)) << "selector value differs";
  c.node_selector = {};
  c.node_selector.set("missing", "x");
  EXPECT_FALSE(matches_node_affinity(n, c)) << "selector key absent";
}

// ---------------------------------------------------------------------------------------------
// Taints and tolerations

TEST(tolerates, matrix) {
  using te = taint_effect;
  using op = toleration_operator;
  const taint gpu_ns{"gpu", "true", te::no_schedule};
  const taint gpu_ne{"gpu", "true", te::no_execute};
  struct tol_case {
    const char* name;
    toleration t;
    taint tn;
    bool want;
  };
  const tol_case cases[] = {
      {"equal same", {"gpu", op::equal, "true", te::no_schedule, {}}, gpu_ns, true},
      {"equal other value", {"gpu", op::equal, "false", te::no_schedule, {}}, gpu_ns, false},
      {"equal other key", {"fpga", op::equal, "true", te::no_schedule, {}}, gpu_ns, false},
      {"equal other effect", {"gpu", op::equal, "true", te::no_schedule, {}}, gpu_ne, false},
      {"equal any effect", {"gpu", op::equal, "true", std::nullopt, {}}, gpu_ne, true},
      {"exists key", {"gpu", op::exists, "", te::no_schedule, {}}, gpu_ns, true},
      {"exists key ignores value", {"gpu", op::exists, "zzz", te::no_schedule, {}}, gpu_ns, true},
      {"exists other key", {"fpga", op::exists, "", std::nullopt, {}}, gpu_ns, false},
      {"exists empty key tolerates all", {"", op::exists, "", std::nullopt, {}}, gpu_ne, true},
      {"exists empty key, effect differs",
       {"", op::exists, "", te::no_schedule, {}},
       gpu_ne,
       false},
      {"prefer effect only", {"gpu", op::equal, "true", te::prefer_no_schedule, {}}, gpu_ns, false},
  };
  for (const auto& c : cases)
    EXPECT_EQ(tolerates(c.t, c.tn), c.want) << c.name;
}

TEST(first_untolerated_taint, filters_no_schedule_and_no_execute_only) {
  node n = make_node("n1")
               .taint("soft", "x", taint_effect::prefer_no_schedule)
               .taint("gpu", "true", taint_effect::no_schedule)
               .taint("maint", "now", taint_effect::no_execute);
  std::vector<toleration> none;
  EXPECT_EQ(first_untolerated_taint(n, none), 1) << "PreferNoSchedule never filters";
  std::vector<toleration> gpu{{"gpu", toleration_operator::equal, "true", std::nullopt, {}}};
  EXPECT_EQ(first_untolerated_taint(n, gpu), 2);
  gpu.push_back({"maint", toleration_operator::exists, "", taint_effect::no_execute, {}});
  EXPECT_EQ(first_untolerated_taint(n, gpu), -1);
  std::vector<toleration> all{{"", toleration_operator::exists, "", std::nullopt, {}}};
  EXPECT_EQ(first_untolerated_taint(n, all), -1);
}

TEST(untolerated_taint_reason, kubernetes_text) {
  EXPECT_EQ(untolerated_taint_reason({"gpu", "true", taint_effect::no_schedule}),
            "node(s) had untolerated taint {gpu: true}");
  EXPECT_EQ(untolerated_taint_reason({"dedicated", "", taint_effect::no_execute}),
            "node(s) had untolerated taint {dedicated: }");
}

// ---------------------------------------------------------------------------------------------
// Combined static checks

TEST(check_static, order_and_verdicts) {
  pod plain = make_pod("p").cpu("1");
  pod tolerant = make_pod("t").cpu("1").tolerate("gpu", "true").selector("zone", "a");
  pod cordon_tolerant =
      make_pod("c").cpu("1").tolerate_exists(std::string(unschedulable_taint_key));
  node ok = make_node("ok").cpu("4").label("zone", "a");
  node cordoned = make_node("cordoned").cpu("4").unschedulable().taint("gpu", "true");
  node tainted = make_node("tainted").cpu("4").taint("gpu", "true").label("zone", "b");
  node small = make_node("small").cpu("500m").label("zone", "a");

  struct static_case {
    const char* name;
    const node* n;
    const pod* p;
    predicate_failure want;
  };
  const static_case cases[] = {
      {"plain on ok", &ok, &plain, predicate_failure::none},
      {"cordon first", &cordoned, &plain, predicate_failure::node_unschedulable},
      {"cordon tolerated, then taint", &cordoned, &cordon_tolerant,
       predicate_failure::untolerated_taint},
      {"taint before affinity", &tainted, &plain, predicate_failure::untolerated_taint},
      {"taint tolerated, affinity fails", &tainted, &tolerant, predicate_failure::node_affinity},
      {"tolerant on ok", &ok, &tolerant, predicate_failure::none},
      {"too small", &small, &plain, predicate_failure::exceeds_allocatable},
      {"affinity passes, size fails", &small, &tolerant, predicate_failure::exceeds_allocatable},
  };
  for (const auto& c : cases) {
    auto v = check_static(*c.n, c.p->constraints.get(), c.p->requests);
    EXPECT_EQ(v.failure, c.want) << c.name;
  }
  EXPECT_EQ(check_placement(tainted, nullptr).taint_index, 0);
}

// ---------------------------------------------------------------------------------------------
// Diagnosis and messages

TEST(fit_diagnosis, kube_scheduler_example) {
  fit_diagnosis d(6);
  d.add("Insufficient cpu", false, 4);
  d.add(untolerated_taint_reason({"gpu", "true", taint_effect::no_schedule}), true, 2);
  EXPECT_EQ(d.to_string(),
            "0/6 nodes are available: 4 Insufficient cpu, 2 node(s) had untolerated taint "
            "{gpu: true}.");
  EXPECT_FALSE(d.all_unresolvable());
}

TEST(fit_diagnosis, volcano_example) {
  fit_diagnosis d(6);
  d.add("Insufficient cpu", false, 6);
  EXPECT_EQ(d.to_volcano_string(), "0/6 nodes are unavailable: 6 Insufficient cpu.");
}

TEST(fit_diagnosis, ordering_rules) {
  fit_diagnosis d(30);
  d.add("b", true, 2);
  d.add("a", true, 2);
  d.add("c", true, 10);
  // kube style: count descending, then text ascending.
  EXPECT_EQ(d.to_string(), "0/30 nodes are available: 10 c, 2 a, 2 b.");
  // Volcano sorts the "<count> <text>" strings.
  EXPECT_EQ(d.to_volcano_string(), "0/30 nodes are unavailable: 10 c, 2 a, 2 b.");
  fit_diagnosis e(3);
  e.add("x", true, 3);
  e.add("y", true, 1);
  EXPECT_EQ(e.to_string(), "0/3 nodes are available: 3 x, 1 y.");
  EXPECT_EQ(e.to_volcano_string(), "0/3 nodes are unavailable: 1 y, 3 x.");
  EXPECT_EQ(fit_diagnosis(4).to_string(), "0/4 nodes are available.");
}

TEST(fit_diagnosis, merges_by_text_and_tracks_resolvability) {
  fit_diagnosis d(3);
  EXPECT_FALSE(d.all_unresolvable()) << "no reasons";
  d.add("Insufficient cpu", true);
  d.add("Insufficient cpu", true);
  EXPECT_TRUE(d.all_unresolvable());
  d.add("Insufficient cpu", false);
  ASSERT_EQ(d.entries().size(), 1u);
  EXPECT_EQ(d.entries()[0].count, 3);
  EXPECT_EQ(d.entries()[0].unresolvable, 2);
  EXPECT_FALSE(d.all_unresolvable());
  d.clear();
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.node_total(), 3);
}

TEST(insufficient_reason, kubernetes_texts) {
  EXPECT_EQ(insufficient_reason("cpu"), "Insufficient cpu");
  EXPECT_EQ(insufficient_reason("memory"), "Insufficient memory");
  EXPECT_EQ(insufficient_reason("nvidia.com/gpu"), "Insufficient nvidia.com/gpu");
  EXPECT_EQ(insufficient_reason("pods"), "Too many pods");
}

TEST(diagnose_node, one_reason_per_short_dimension) {
  node n = make_node("n").cpu("8").memory("16Gi").gpu(4).pods(10);
  resources free = res("cpu", "1", "memory", "1Gi", "pods", "0");
  free.set("nvidia.com/gpu", 0);
  pod p = make_pod("p").cpu("2").memory("2Gi").gpu(1);
  fit_diagnosis d(1);
  EXPECT_EQ(diagnose_node(n, free, p.requests, nullptr, d),
            predicate_failure::insufficient_resources);
  EXPECT_EQ(d.to_string(), "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 "
                           "Insufficient nvidia.com/gpu, 1 Too many pods.");
  EXPECT_FALSE(d.all_unresolvable());

  fit_diagnosis never(1);
  pod huge = make_pod("h").cpu("16");
  EXPECT_EQ(diagnose_node(n, n.allocatable, huge.requests, nullptr, never),
            predicate_failure::exceeds_allocatable);
  EXPECT_EQ(never.to_string(), "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_TRUE(never.all_unresolvable());

  fit_diagnosis fine(1);
  EXPECT_EQ(diagnose_node(n, n.allocatable, p.requests, nullptr, fine), predicate_failure::none);
  EXPECT_TRUE(fine.empty());
}

TEST(diagnose_node, static_reasons_use_kubernetes_texts) {
  pod p = make_pod("p").cpu("1").selector("zone", "a");
  fit_diagnosis d(3);
  node cordoned = make_node("a").cpu("4").unschedulable().label("zone", "a");
  node tainted = make_node("b").cpu("4").taint("gpu", "true").label("zone", "a");
  node elsewhere = make_node("c").cpu("4").label("zone", "b");
  for (const node* n : {&cordoned, &tainted, &elsewhere})
    (void)diagnose_node(*n, n->allocatable, p.requests, p.constraints.get(), d);
  EXPECT_EQ(d.to_string(),
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 "
            "node(s) had untolerated taint {gpu: true}, 1 node(s) were unschedulable.");
  EXPECT_TRUE(d.all_unresolvable());
}

} // namespace
} // namespace phalanx::scheduler
