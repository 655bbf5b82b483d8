// Pod affinity, pod anti-affinity, preferred node affinity, host ports and topology spread
// constraints on the wire: Kubernetes' JSON shapes read into a pod's placement constraints (pods
// and job templates, as users submit them and as a server sends them), the apiserver's defaults
// and rules with the paths and messages users read, and the spec written back from the model.

#include "api/codec.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api {
namespace {

namespace json = boost::json;
namespace sch = phalanx::scheduler;
using sch::selector_operator;

// What a user submits: no status, validation on.
decode_options user() {
  decode_options o;
  o.read_status = false;
  return o;
}

// What a server (phalanxd, or the apiserver in Kubernetes mode) sends.
decode_options from_server() {
  return {};
}

json::value parse_ok(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? *v : json::value{};
}

json::value pod_json(std::string_view spec) {
  return parse_ok(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},)"
                  R"("spec":)" +
                  std::string(spec) + "}");
}

pod_object decode_pod(std::string_view spec, const decode_options& options = user()) {
  auto o = decode_object(pod_json(spec), options);
  if (!o.ok()) {
    ADD_FAILURE() << o.error().message;
    return {};
  }
  return std::get<pod_object>(*o);
}

// Every cause of the 422 a spec gets, as "<field>: <type>: <value>: <detail>".
std::vector<std::string> causes_of(std::string_view spec, const decode_options& options = user()) {
  auto o = decode_object(pod_json(spec), options);
  if (o.ok())
    return {};
  EXPECT_EQ(o.error().code(), 422) << o.error().message;
  std::vector<std::string> out;
  for (const auto& c : o.error().causes)
    out.push_back(c.to_string());
  return out;
}

sch::label_selector selector(sch::label_set match_labels,
                             std::vector<sch::node_selector_requirement> expressions = {}) {
  return {std::move(match_labels), std::move(expressions)};
}

sch::label_set labels(std::initializer_list<std::pair<std::string, std::string>> pairs) {
  sch::label_set out;
  for (const auto& [k, v] : pairs)
    out.set(k, v);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Decoding

TEST(PodAffinityWire, ReadsEveryShape) {
  auto p = decode_pod(R"({"containers":[{"name":"c"}],"affinity":{
    "podAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[
        {"labelSelector":{"matchLabels":{"app":"db","tier":"a"},
                          "matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]},
                                              {"key":"spot","operator":"DoesNotExist"}]},
         "namespaces":["ns","other"],"topologyKey":"topology.kubernetes.io/zone"}],
      "preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":30,"podAffinityTerm":{
          "labelSelector":{"matchExpressions":[{"key":"app","operator":"NotIn","values":["web"]}]},
          "namespaceSelector":{},"topologyKey":"kubernetes.io/hostname"}}]},
    "podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[
        {"labelSelector":{"matchLabels":{"app":"p"}},"topologyKey":"kubernetes.io/hostname"}],
      "preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":100,"podAffinityTerm":{
          "labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},
          "namespaceSelector":{"matchLabels":{"team":"ml"}},
          "topologyKey":"kubernetes.io/hostname"}}]}}})");
  ASSERT_TRUE(p.pod.constraints);
  const auto& c = *p.pod.constraints;

  sch::pod_affinity_term near_db;
  near_db.selector = selector(labels({{"app", "db"}, {"tier", "a"}}),
                              {{"zone", selector_operator::in, {"a", "b"}},
                               {"spot", selector_operator::does_not_exist, {}}});
  near_db.namespaces = {"ns", "other"};
  near_db.topology_key = "topology.kubernetes.io/zone";
  EXPECT_EQ(c.required_pod_affinity, std::vector<sch::pod_affinity_term>{near_db});

  sch::pod_affinity_term not_web;
  not_web.selector = selector({}, {{"app", selector_operator::not_in, {"web"}}});
  not_web.namespace_selector = sch::label_selector{};
  not_web.topology_key = "kubernetes.io/hostname";
  EXPECT_EQ(c.preferred_pod_affinity,
            (std::vector<sch::weighted_pod_affinity_term>{{30, not_web}}));

  sch::pod_affinity_term apart;
  apart.selector = selector(labels({{"app", "p"}}));
  apart.topology_key = "kubernetes.io/hostname";
  EXPECT_EQ(c.required_pod_anti_affinity, std::vector<sch::pod_affinity_term>{apart});

  sch::pod_affinity_term spread;
  spread.selector = selector({}, {{"app", selector_operator::exists, {}}});
  spread.namespace_selector = selector(labels({{"team", "ml"}}));
  spread.topology_key = "kubernetes.io/hostname";
  EXPECT_EQ(c.preferred_pod_anti_affinity,
            (std::vector<sch::weighted_pod_affinity_term>{{100, spread}}));

  EXPECT_TRUE(c.places_beside_pods());
  EXPECT_TRUE(c.host_ports.empty());
}

TEST(PodAffinityWire, AnAbsentSelectorIsNotAnEmptyOne) {
  auto p = decode_pod(R"({"containers":[{"name":"c"}],"affinity":{"podAntiAffinity":{
    "requiredDuringSchedulingIgnoredDuringExecution":[
      {"topologyKey":"kubernetes.io/hostname"},
      {"labelSelector":{},"namespaceSelector":{},"topologyKey":"kubernetes.io/hostname"},
      {"labelSelector":null,"namespaceSelector":null,"topologyKey":"kubernetes.io/hostname"}]}}})");
  ASSERT_TRUE(p.pod.constraints);
  const auto& terms = p.pod.constraints->required_pod_anti_affinity;
  ASSERT_EQ(terms.size(), 3u);
  // Absent: matches no pod.
  EXPECT_FALSE(terms[0].selector);
  EXPECT_FALSE(terms[0].namespace_selector);
  // {}: matches every pod (in every namespace, for the namespace selector).
  ASSERT_TRUE(terms[1].selector);
  EXPECT_EQ(*terms[1].selector, sch::label_selector{});
  ASSERT_TRUE(terms[1].namespace_selector);
  EXPECT_EQ(*terms[1].namespace_selector, sch::label_selector{});
  // null is absent, as Go decodes it.
  EXPECT_FALSE(terms[2].selector);
  EXPECT_FALSE(terms[2].namespace_selector);
}

TEST(PodAffinityWire, AnAffinityWithoutTermsIsNoConstraint) {
  auto p = decode_pod(R"({"containers":[{"name":"c","ports":[{"containerPort":80}]}],
    "affinity":{"podAffinity":{},"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[],
      "preferredDuringSchedulingIgnoredDuringExecution":null}}})");
  EXPECT_FALSE(p.pod.constraints);
}

TEST(PodAffinityWire, JobTemplatesCarryTheirTerms) {
  auto o = decode_object(parse_ok(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"ns"},"spec":{"tasks":[{"name":"w","replicas":2,
    "template":{"spec":{
      "containers":[{"name":"c","ports":[{"containerPort":29500,"hostPort":29500}]}],
    "affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
      {"labelSelector":{"matchLabels":{"volcano.sh/job-name":"j"}},
       "topologyKey":"kubernetes.io/hostname"}]}}}}}]}})"),
                          user());
  ASSERT_TRUE(o.ok()) << o.error().message;
  const auto& tpl = std::get<job_object>(*o).job.tasks.at(0).pod_template;
  ASSERT_TRUE(tpl.constraints);
  ASSERT_EQ(tpl.constraints->required_pod_anti_affinity.size(), 1u);
  EXPECT_EQ(tpl.constraints->required_pod_anti_affinity[0].selector,
            selector(labels({{"volcano.sh/job-name", "j"}})));
  EXPECT_EQ(tpl.constraints->host_ports, (std::vector<sch::host_port>{{"TCP", "", 29500}}));

  auto bad = decode_object(parse_ok(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"ns"},"spec":{"tasks":[{"name":"w","replicas":1,
    "template":{"spec":{"containers":[{"name":"c"}],"affinity":{"podAffinity":{
      "preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":5,"podAffinityTerm":{}}]}}}}}]}})"),
                           user());
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.error().causes.size(), 1u) << bad.error().message;
  EXPECT_EQ(bad.error().causes[0].to_string(),
            "spec.tasks[0].template.spec.affinity.podAffinity."
            "preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey: "
            "Required value: can not be empty");
}

TEST(NodeAffinityWire, ReadsPreferredTermsBesideRequiredOnes) {
  auto p = decode_pod(R"({"containers":[{"name":"c"}],"affinity":{"nodeAffinity":{
    "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
      {"matchExpressions":[{"key":"gpu","operator":"Exists"}]}]},
    "preferredDuringSchedulingIgnoredDuringExecution":[
      {"weight":80,"preference":{
        "matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}],
        "matchFields":[{"key":"metadata.name","operator":"NotIn","values":["n1"]}]}},
      {"weight":1,"preference":{}}]}}})");
  ASSERT_TRUE(p.pod.constraints);
  const auto& c = *p.pod.constraints;
  ASSERT_EQ(c.required_node_affinity.size(), 1u);
  sch::node_selector_term zone_a_or_b;
  zone_a_or_b.match_expressions = {{"zone", selector_operator::in, {"a", "b"}}};
  zone_a_or_b.match_fields = {{"metadata.name", selector_operator::not_in, {"n1"}}};
  // An empty preference is kept as written: it matches no node.
  EXPECT_EQ(c.preferred_node_affinity,
            (std::vector<sch::weighted_node_selector_term>{{80, zone_a_or_b}, {1, {}}}));
  EXPECT_FALSE(c.places_beside_pods());
  EXPECT_FALSE(c.empty());
}

TEST(NodeAffinityWire, PreferredTermsAloneAreAConstraint) {
  auto p = decode_pod(R"({"containers":[{"name":"c"}],"affinity":{"nodeAffinity":{
    "preferredDuringSchedulingIgnoredDuringExecution":[
      {"weight":5,"preference":{"matchExpressions":[{"key":"ssd","operator":"Exists"}]}}]}}})");
  ASSERT_TRUE(p.pod.constraints);
  EXPECT_TRUE(p.pod.constraints->required_node_affinity.empty());
  ASSERT_EQ(p.pod.constraints->preferred_node_affinity.size(), 1u);
  EXPECT_EQ(p.pod.constraints->preferred_node_affinity[0].weight, 5);
}

// matchLabelKeys and mismatchLabelKeys: the apiserver merges them into labelSelector when it
// creates a pod; Phalanx does not, so it refuses them from users and ignores them from servers.
TEST(PodAffinityWire, LabelKeysAreRefusedFromUsersAndIgnoredFromServers) {
  const std::string spec = R"({"containers":[{"name":"c"}],"affinity":{
    "podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
      {"labelSelector":{"matchLabels":{"app":"db"}},"matchLabelKeys":["pod-template-hash"],
       "topologyKey":"kubernetes.io/hostname"}]},
    "podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,
      "podAffinityTerm":{"labelSelector":{"matchLabels":{"app":"db"}},
                         "mismatchLabelKeys":["tenant"],
                         "topologyKey":"kubernetes.io/hostname"}}]}}})";
  EXPECT_EQ(causes_of(spec),
            (std::vector<std::string>{
              "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
              "matchLabelKeys: Forbidden: not supported by Phalanx: write the requirement into "
              "labelSelector instead",
              "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
              "podAffinityTerm.mismatchLabelKeys: Forbidden: not supported by Phalanx: write the "
              "requirement into labelSelector instead"}));

  auto p = decode_pod(spec, from_server());
  ASSERT_TRUE(p.pod.constraints);
  ASSERT_EQ(p.pod.constraints->required_pod_affinity.size(), 1u);
  EXPECT_EQ(p.pod.constraints->required_pod_affinity[0].selector,
            selector(labels({{"app", "db"}})));
}

TEST(HostPortsWire, ContainersPortsWithAHostPortInOrder) {
  auto p = decode_pod(R"({
    "initContainers":[{"name":"i","ports":[{"containerPort":7000,"hostPort":7000}]}],
    "containers":[
      {"name":"a","ports":[{"containerPort":80,"hostPort":8080},{"containerPort":81},
                           {"containerPort":53,"hostPort":53,"protocol":"UDP"}]},
      {"name":"b","ports":[{"containerPort":80,"hostPort":8080,"hostIP":"10.0.0.1"},
                           {"containerPort":9000,"hostPort":9000,"protocol":"SCTP"},
                           {"containerPort":53,"hostPort":53,"protocol":"TCP"}]}]})");
  ASSERT_TRUE(p.pod.constraints);
  // The init container's port is not the pod's once it runs: kube-scheduler's NodePorts plugin
  // counts containers only.
  EXPECT_EQ(p.pod.constraints->host_ports,
            (std::vector<sch::host_port>{{"TCP", "", 8080},
                                         {"UDP", "", 53},
                                         {"TCP", "10.0.0.1", 8080},
                                         {"SCTP", "", 9000},
                                         {"TCP", "", 53}}));
  EXPECT_TRUE(p.pod.constraints->places_beside_pods());
}

TEST(HostPortsWire, HostNetworkTakesEveryContainerPort) {
  auto p = decode_pod(R"({"hostNetwork":true,
    "initContainers":[{"name":"i","ports":[{"containerPort":7000}]}],
    "containers":[{"name":"a","ports":[
      {"containerPort":8080},{"containerPort":9090,"hostPort":9090,"protocol":"UDP"}]}]})");
  ASSERT_TRUE(p.pod.constraints);
  EXPECT_EQ(p.pod.constraints->host_ports,
            (std::vector<sch::host_port>{{"TCP", "", 8080}, {"UDP", "", 9090}}));
}

TEST(HostPortsWire, PortsWithoutAHostPortAreNoConstraint) {
  auto p = decode_pod(R"({"containers":[{"name":"a","ports":[
    {"containerPort":80},{"containerPort":443,"hostPort":0}]}]})");
  EXPECT_FALSE(p.pod.constraints);
}

TEST(TopologySpreadWire, ReadsEveryShape) {
  auto p = decode_pod(R"({"containers":[{"name":"c"}],"topologySpreadConstraints":[
    {"maxSkew":2,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule",
     "labelSelector":{"matchLabels":{"app":"db"},
                      "matchExpressions":[{"key":"tier","operator":"NotIn","values":["batch"]}]},
     "minDomains":3,"nodeAffinityPolicy":"Ignore","nodeTaintsPolicy":"Honor",
     "matchLabelKeys":["pod-template-hash","example.com/revision"]},
    {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway",
     "labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},
     "nodeAffinityPolicy":"Honor","nodeTaintsPolicy":"Ignore"}]})");
  ASSERT_TRUE(p.pod.constraints);
  const auto& c = *p.pod.constraints;

  sch::topology_spread_constraint by_zone;
  by_zone.max_skew = 2;
  by_zone.topology_key = "topology.kubernetes.io/zone";
  by_zone.do_not_schedule = true;
  by_zone.selector =
    selector(labels({{"app", "db"}}), {{"tier", selector_operator::not_in, {"batch"}}});
  by_zone.min_domains = 3;
  by_zone.honor_node_affinity = false;
  by_zone.honor_node_taints = true;
  // As written: not merged into the selector.
  by_zone.match_label_keys = {"pod-template-hash", "example.com/revision"};

  sch::topology_spread_constraint by_node;
  by_node.max_skew = 1;
  by_node.topology_key = "kubernetes.io/hostname";
  by_node.do_not_schedule = false;
  by_node.selector = selector({}, {{"app", selector_operator::exists, {}}});
  by_node.honor_node_affinity = true;
  by_node.honor_node_taints = false;

  EXPECT_EQ(c.topology_spread, (std::vector<sch::topology_spread_constraint>{by_zone, by_node}));
  EXPECT_TRUE(c.places_beside_pods());
}

// Kubernetes' defaults for what is left out: nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore,
// no minDomains, no selector, no keys.
TEST(TopologySpreadWire, DefaultsOfAbsentFields) {
  for (const auto& options : {user(), from_server()}) {
    auto p = decode_pod(R"({"containers":[{"name":"c"}],"topologySpreadConstraints":[
      {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway",
       "minDomains":null,"nodeAffinityPolicy":null,"matchLabelKeys":null}]})",
                        options);
    ASSERT_TRUE(p.pod.constraints);
    ASSERT_EQ(p.pod.constraints->topology_spread.size(), 1u);
    const auto& t = p.pod.constraints->topology_spread[0];
    EXPECT_FALSE(t.do_not_schedule);
    EXPECT_FALSE(t.selector);
    EXPECT_FALSE(t.min_domains);
    EXPECT_TRUE(t.honor_node_affinity);
    EXPECT_FALSE(t.honor_node_taints);
    EXPECT_TRUE(t.match_label_keys.empty());
  }
}

TEST(TopologySpreadWire, AnAbsentSelectorIsNotAnEmptyOne) {
  auto p = decode_pod(R"({"containers":[{"name":"c"}],"topologySpreadConstraints":[
    {"maxSkew":1,"topologyKey":"a","whenUnsatisfiable":"DoNotSchedule"},
    {"maxSkew":1,"topologyKey":"b","whenUnsatisfiable":"DoNotSchedule","labelSelector":{}},
    {"maxSkew":1,"topologyKey":"c","whenUnsatisfiable":"DoNotSchedule","labelSelector":null}]})");
  ASSERT_TRUE(p.pod.constraints);
  const auto& spread = p.pod.constraints->topology_spread;
  ASSERT_EQ(spread.size(), 3u);
  EXPECT_FALSE(spread[0].selector);  // Absent: counts no pod.
  ASSERT_TRUE(spread[1].selector);   // {}: counts every pod of the namespace.
  EXPECT_EQ(*spread[1].selector, sch::label_selector{});
  EXPECT_FALSE(spread[2].selector);  // null is absent, as Go decodes it.
}

TEST(TopologySpreadWire, NoConstraintsIsNoConstraint) {
  EXPECT_FALSE(decode_pod(R"({"containers":[{"name":"c"}],"topologySpreadConstraints":[]})")
                 .pod.constraints);
  EXPECT_FALSE(decode_pod(R"({"containers":[{"name":"c"}],"topologySpreadConstraints":null})")
                 .pod.constraints);
}

// An apiserver of Kubernetes 1.34 or later writes `key In (value)` into a pod's labelSelector
// for each matchLabelKeys key the pod has a label for. What a server sends is read back to the
// selector as written, so the model is the same in both modes.
TEST(TopologySpreadWire, WhatAnApiserverMergedIsTakenOutAgain) {
  const std::string merged = R"({"containers":[{"name":"c"}],"topologySpreadConstraints":[
    {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule",
     "labelSelector":{"matchLabels":{"app":"db"},"matchExpressions":[
       {"key":"tier","operator":"In","values":["a"]},
       {"key":"pod-template-hash","operator":"In","values":["7d9f"]}]},
     "matchLabelKeys":["pod-template-hash","absent-label"]}]})";
  auto p = decode_pod(merged, from_server());
  ASSERT_TRUE(p.pod.constraints);
  ASSERT_EQ(p.pod.constraints->topology_spread.size(), 1u);
  const auto& t = p.pod.constraints->topology_spread[0];
  EXPECT_EQ(t.selector,
            selector(labels({{"app", "db"}}), {{"tier", selector_operator::in, {"a"}}}));
  EXPECT_EQ(t.match_label_keys, (std::vector<std::string>{"pod-template-hash", "absent-label"}));

  // A user cannot write both: the apiserver's rule.
  EXPECT_EQ(causes_of(merged),
            (std::vector<std::string>{
              "spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "
              "\"pod-template-hash\": exists in both matchLabelKeys and labelSelector"}));

  // Only the merge's shape is taken out (In, one value): anything else on the key stays, and
  // is refused as the apiserver would have refused it.
  const std::string not_merged = R"({"containers":[{"name":"c"}],"topologySpreadConstraints":[
    {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule",
     "labelSelector":{"matchExpressions":[
       {"key":"pod-template-hash","operator":"In","values":["7d9f","8e0a"]}]},
     "matchLabelKeys":["pod-template-hash"]}]})";
  EXPECT_EQ(causes_of(not_merged, from_server()),
            (std::vector<std::string>{
              "spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: "
              "\"pod-template-hash\": exists in both matchLabelKeys and labelSelector"}));
}

TEST(TopologySpreadWire, JobTemplatesCarryTheirConstraints) {
  // A template is never merged into by an apiserver: its selector is read as written.
  const std::string job = R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"ns"},"spec":{"tasks":[{"name":"w","replicas":2,
    "template":{"spec":{"containers":[{"name":"c"}],"topologySpreadConstraints":[
      {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule",
       "labelSelector":{"matchExpressions":[{"key":"rev","operator":"In","values":["1"]}]},
       "matchLabelKeys":["volcano.sh/job-name"]}]}}}]}})";
  for (const auto& options : {user(), from_server()}) {
    auto o = decode_object(parse_ok(job), options);
    ASSERT_TRUE(o.ok()) << o.error().message;
    const auto& tpl = std::get<job_object>(*o).job.tasks.at(0).pod_template;
    ASSERT_TRUE(tpl.constraints);
    ASSERT_EQ(tpl.constraints->topology_spread.size(), 1u);
    EXPECT_EQ(tpl.constraints->topology_spread[0].selector,
              selector({}, {{"rev", selector_operator::in, {"1"}}}));
    EXPECT_EQ(tpl.constraints->topology_spread[0].match_label_keys,
              std::vector<std::string>{"volcano.sh/job-name"});
  }

  auto bad = decode_object(parse_ok(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"ns"},"spec":{"tasks":[{"name":"w","replicas":1,
    "template":{"spec":{"containers":[{"name":"c"}],"topologySpreadConstraints":[
      {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"Later"}]}}}]}})"),
                           user());
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.error().causes.size(), 1u) << bad.error().message;
  EXPECT_EQ(bad.error().causes[0].to_string(),
            "spec.tasks[0].template.spec.topologySpreadConstraints[0].whenUnsatisfiable: "
            "Unsupported value: \"Later\": supported values: \"DoNotSchedule\", "
            "\"ScheduleAnyway\"");
}

// ---------------------------------------------------------------------------------------------
// The apiserver's rules, as decoding reports them (the label selector and term rules are tested
// on their own in scheduler/tests/validation_test.cpp).

const std::string port_range = "must be between 1 and 65535, inclusive";

struct rule_case {
  const char* name;
  const char* spec;
  std::vector<std::string> causes;
};

void PrintTo(const rule_case& c, std::ostream* os) {
  *os << c.name;
}

class PlacementRules : public ::testing::TestWithParam<rule_case> {};

TEST_P(PlacementRules, NameTheFieldTheTypeAndTheRule) {
  EXPECT_EQ(causes_of(GetParam().spec), GetParam().causes);
}

#define PORTS(ports) R"({"containers":[{"name":"c","ports":)" ports "}]}"
#define PREFERRED_NODE(terms)                                                                      \
  R"({"containers":[{"name":"c"}],"affinity":{"nodeAffinity":)"                                    \
  R"({"preferredDuringSchedulingIgnoredDuringExecution":)" terms "}}}"
#define ANTI(term)                                                                                 \
  R"({"containers":[{"name":"c"}],"affinity":{"podAntiAffinity":)"                                 \
  R"({"requiredDuringSchedulingIgnoredDuringExecution":[)" term "]}}}"

const std::string anti0 =
  "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
const std::string preferred_node =
  "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";

INSTANTIATE_TEST_SUITE_P(
  Decode, PlacementRules,
  ::testing::Values(
    rule_case{"valid_ports",
              PORTS(R"([{"containerPort":80,"hostPort":80},
                        {"containerPort":80,"hostPort":80,"protocol":"UDP"},
                        {"containerPort":80,"hostPort":80,"hostIP":"10.0.0.1"},
                        {"containerPort":65535}])"),
              {}},
    rule_case{"preferred_node_weights",
              PREFERRED_NODE(R"([{"weight":1,"preference":{}},
                                 {"weight":100,"preference":{}}])"),
              {}},
    rule_case{"preferred_node_weight_zero",
              PREFERRED_NODE(R"([{"weight":0,"preference":{
                                  "matchExpressions":[{"key":"ssd","operator":"Exists"}]}}])"),
              {preferred_node + "[0].weight: Invalid value: 0: must be in the range 1-100"}},
    rule_case{"preferred_node_weight_absent",
              PREFERRED_NODE(R"([{"preference":{}}])"),
              {preferred_node + "[0].weight: Invalid value: 0: must be in the range 1-100"}},
    rule_case{"preferred_node_weight_above_100",
              PREFERRED_NODE(R"([{"weight":1,"preference":{}},{"weight":101,"preference":{}}])"),
              {preferred_node + "[1].weight: Invalid value: 101: must be in the range 1-100"}},
    rule_case{"preferred_node_term",
              PREFERRED_NODE(R"([{"weight":10,"preference":{
                                  "matchExpressions":[{"key":"cores","operator":"Gt",
                                                       "values":["many"]}],
                                  "matchFields":[{"key":"metadata.labels","operator":"In",
                                                  "values":["x"]}]}}])"),
              {preferred_node + "[0].preference.matchExpressions[0].values[0]: Invalid value: "
                                "\"many\": must be an integer when the operator is 'Gt' or 'Lt'",
               preferred_node + "[0].preference.matchFields[0].key: Unsupported value: "
                                "\"metadata.labels\": supported values: \"metadata.name\""}},
    rule_case{"container_port_missing", PORTS(R"([{"hostPort":8080}])"),
              {"spec.containers[0].ports[0].containerPort: Required value"}},
    rule_case{"container_port_too_big", PORTS(R"([{"containerPort":70000}])"),
              {"spec.containers[0].ports[0].containerPort: Invalid value: 70000: " + port_range}},
    rule_case{"container_port_negative", PORTS(R"([{"containerPort":-1}])"),
              {"spec.containers[0].ports[0].containerPort: Invalid value: -1: " + port_range}},
    rule_case{"host_port_negative", PORTS(R"([{"containerPort":80,"hostPort":-80}])"),
              {"spec.containers[0].ports[0].hostPort: Invalid value: -80: " + port_range}},
    rule_case{"host_port_too_big", PORTS(R"([{"containerPort":80,"hostPort":65536}])"),
              {"spec.containers[0].ports[0].hostPort: Invalid value: 65536: " + port_range}},
    rule_case{"protocol", PORTS(R"([{"containerPort":80,"hostPort":80,"protocol":"HTTP"}])"),
              {"spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported "
               "values: \"SCTP\", \"TCP\", \"UDP\""}},
    rule_case{"protocol_lowercase", PORTS(R"([{"containerPort":80,"protocol":"tcp"}])"),
              {"spec.containers[0].ports[0].protocol: Unsupported value: \"tcp\": supported "
               "values: \"SCTP\", \"TCP\", \"UDP\""}},
    // The default protocol is TCP, so these two are one port.
    rule_case{"duplicate_host_port",
              R"({"containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":8080}]},
                                {"name":"b","ports":[
                                  {"containerPort":81,"hostPort":8080,"protocol":"TCP"}]}]})",
              {"spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\""}},
    rule_case{"duplicate_host_port_and_ip",
              PORTS(R"([{"containerPort":80,"hostPort":53,"protocol":"UDP","hostIP":"10.0.0.1"},
                        {"containerPort":81,"hostPort":53,"protocol":"UDP","hostIP":"10.0.0.1"}])"),
              {"spec.containers[0].ports[1].hostPort: Duplicate value: \"UDP/10.0.0.1/53\""}},
    // Init containers run one after another: only one container's own ports may clash.
    rule_case{"init_containers",
              R"({"containers":[{"name":"c","ports":[{"containerPort":80,"hostPort":8080}]}],
                  "initContainers":[
                    {"name":"a","ports":[{"containerPort":80,"hostPort":8080}]},
                    {"name":"b","ports":[{"containerPort":80,"hostPort":8080},{"containerPort":0},
                                         {"containerPort":80,"hostPort":8080}]}]})",
              {"spec.initContainers[1].ports[1].containerPort: Required value",
               "spec.initContainers[1].ports[2].hostPort: Duplicate value: \"TCP//8080\""}},
    rule_case{"host_network_port_mismatch",
              R"({"hostNetwork":true,"containers":[{"name":"c","ports":[
                   {"containerPort":8080},{"containerPort":8080,"hostPort":8081}]}]})",
              {"spec.containers[0].ports[1].hostPort: Invalid value: 8081: must match "
               "`containerPort` when `hostNetwork` is true"}},
    rule_case{"host_network_duplicate",
              R"({"hostNetwork":true,"containers":[{"name":"c","ports":[
                   {"containerPort":8080},{"containerPort":8080,"hostPort":8080}]}]})",
              {"spec.containers[0].ports[1].hostPort: Duplicate value: \"TCP//8080\""}},
    rule_case{"selector_operator_unknown",
              ANTI(R"({"labelSelector":{"matchExpressions":[
                         {"key":"a","operator":"Like","values":["x"]}]},
                       "topologyKey":"kubernetes.io/hostname"})"),
              {anti0 + ".labelSelector.matchExpressions[0].operator: Invalid value: \"Like\": not "
                       "a valid selector operator"}},
    rule_case{"selector_operator_missing",
              ANTI(R"({"namespaceSelector":{"matchExpressions":[{"key":"a"}]},
                       "topologyKey":"kubernetes.io/hostname"})"),
              {anti0 + ".namespaceSelector.matchExpressions[0].operator: Invalid value: \"\": not "
                       "a valid selector operator"}},
    // Gt and Lt are node selector operators: read, then refused by the model's rules.
    rule_case{"selector_operator_gt",
              ANTI(R"({"labelSelector":{"matchExpressions":[
                         {"key":"a","operator":"Gt","values":["1"]}]},
                       "topologyKey":"kubernetes.io/hostname"})"),
              {anti0 + ".labelSelector.matchExpressions[0].operator: Invalid value: \"Gt\": not "
                       "a valid selector operator"}},
    rule_case{"topology_key_missing", ANTI(R"({"labelSelector":{}})"),
              {anti0 + ".topologyKey: Required value: can not be empty"}},
    rule_case{"weight_missing",
              R"({"containers":[{"name":"c"}],"affinity":{"podAffinity":{
                   "preferredDuringSchedulingIgnoredDuringExecution":[
                     {"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname"}}]}}})",
              {"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
               "weight: Invalid value: 0: must be in the range 1-100"}},
    rule_case{"namespace",
              ANTI(R"({"namespaces":["ok","Not_OK"],"topologyKey":"kubernetes.io/hostname"})"),
              {anti0 + ".namespaces[1]: Invalid value: \"Not_OK\": must be a lowercase RFC 1123 "
                       "label: lowercase letters, digits and '-' only, starting and ending with a "
                       "letter or digit (e.g. 'my-name' or '123-abc')"}}),
  [](const ::testing::TestParamInfo<rule_case>& info) { return std::string(info.param.name); });

#define SPREAD(constraints)                                                                        \
  R"({"containers":[{"name":"c"}],"topologySpreadConstraints":)" constraints "}"

const std::string spread0 = "spec.topologySpreadConstraints[0]";

INSTANTIATE_TEST_SUITE_P(
  Spread, PlacementRules,
  ::testing::Values(
    rule_case{"valid",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "labelSelector":{"matchLabels":{"app":"db"}},"minDomains":2,
                          "nodeAffinityPolicy":"Honor","nodeTaintsPolicy":"Ignore",
                          "matchLabelKeys":["pod-template-hash"]},
                         {"maxSkew":5,"topologyKey":"zone",
                          "whenUnsatisfiable":"ScheduleAnyway"}])"),
              {}},
    rule_case{"max_skew_missing",
              SPREAD(R"([{"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])"),
              {spread0 + ".maxSkew: Invalid value: 0: must be greater than zero"}},
    rule_case{"max_skew_negative",
              SPREAD(R"([{"maxSkew":-2,"topologyKey":"zone",
                          "whenUnsatisfiable":"DoNotSchedule"}])"),
              {spread0 + ".maxSkew: Invalid value: -2: must be greater than zero"}},
    rule_case{"topology_key_missing",
              SPREAD(R"([{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule"}])"),
              {spread0 + ".topologyKey: Required value: can not be empty"}},
    // The apiserver has no default for it: an absent action is an unsupported empty one.
    rule_case{"when_unsatisfiable_missing", SPREAD(R"([{"maxSkew":1,"topologyKey":"zone"}])"),
              {spread0 + ".whenUnsatisfiable: Unsupported value: \"\": supported values: "
                         "\"DoNotSchedule\", \"ScheduleAnyway\""}},
    rule_case{"when_unsatisfiable_lowercase",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"doNotSchedule"}])"),
              {spread0 + ".whenUnsatisfiable: Unsupported value: \"doNotSchedule\": supported "
                         "values: \"DoNotSchedule\", \"ScheduleAnyway\""}},
    rule_case{"node_policies",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "nodeAffinityPolicy":"","nodeTaintsPolicy":"honor"}])"),
              {spread0 + ".nodeAffinityPolicy: Unsupported value: \"\": supported values: "
                         "\"Honor\", \"Ignore\"",
               spread0 + ".nodeTaintsPolicy: Unsupported value: \"honor\": supported values: "
                         "\"Honor\", \"Ignore\""}},
    rule_case{"min_domains_zero",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "minDomains":0}])"),
              {spread0 + ".minDomains: Invalid value: 0: must be greater than zero"}},
    rule_case{"min_domains_schedule_anyway",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway",
                          "minDomains":2}])"),
              {spread0 + ".minDomains: Invalid value: 2: can only use minDomains if "
                         "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"}},
    rule_case{"one_kind_twice",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},
                         {"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"}])"),
              {spread0 + ".{topologyKey, whenUnsatisfiable}: Duplicate value: "
                         "\"{zone, DoNotSchedule}\""}},
    rule_case{"match_label_keys_without_selector",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "matchLabelKeys":["app"]}])"),
              {spread0 + ".matchLabelKeys: Forbidden: must not be specified when labelSelector "
                         "is not set"}},
    rule_case{"match_label_keys_rules",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},
                          "matchLabelKeys":["app","-rev","hash","hash"]}])"),
              {spread0 + ".matchLabelKeys[0]: Invalid value: \"app\": exists in both "
                         "matchLabelKeys and labelSelector",
               spread0 + ".matchLabelKeys[1]: Invalid value: \"-rev\": name part must be "
                         "letters, digits, '-', '_' or '.', starting and ending with a letter or "
                         "digit (e.g. 'MyName', 'my.name' or 'app_1')",
               spread0 + ".matchLabelKeys[3]: Duplicate value: \"hash\""}},
    rule_case{"selector_operator",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "labelSelector":{"matchExpressions":[
                            {"key":"app","operator":"Like","values":["x"]}]}}])"),
              {spread0 + ".labelSelector.matchExpressions[0].operator: Invalid value: \"Like\": "
                         "not a valid selector operator"}},
    rule_case{"selector_values",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "labelSelector":{"matchExpressions":[{"key":"app","operator":"In"}]}}])"),
              {spread0 + ".labelSelector.matchExpressions[0].values: Required value: must be "
                         "specified when `operator` is 'In' or 'NotIn'"}},
    rule_case{"min_domains_not_an_integer",
              SPREAD(R"([{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
                          "minDomains":"2"}])"),
              {spread0 + ".minDomains: Invalid value: \"2\": must be an integer"}}),
  [](const ::testing::TestParamInfo<rule_case>& info) { return std::string(info.param.name); });

#undef PORTS
#undef PREFERRED_NODE
#undef ANTI
#undef SPREAD

// ---------------------------------------------------------------------------------------------
// Writing back

// A spec with every shape: required and preferred node affinity (an empty preference among
// them), required and preferred terms of both kinds, absent and empty
// selectors, namespaces, host ports of every protocol, one with a host IP, and topology spread
// constraints with every field set and with none of the optional ones.
constexpr std::string_view everything = R"({
  "containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":8080},{"containerPort":81}]},
                {"name":"b","ports":[{"containerPort":53,"hostPort":53,"protocol":"UDP",
                                      "hostIP":"10.0.0.1"},
                                     {"containerPort":9,"hostPort":9,"protocol":"SCTP"}]}],
  "affinity":{
    "nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"gpu","operator":"Exists"}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":60,"preference":{
          "matchExpressions":[{"key":"cores","operator":"Gt","values":["16"]}],
          "matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}},
        {"weight":1,"preference":{}}]},
    "podAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[
        {"labelSelector":{"matchLabels":{"app":"db"},
                          "matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
         "namespaces":["ns","other"],"topologyKey":"topology.kubernetes.io/zone"}],
      "preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":7,"podAffinityTerm":{"namespaceSelector":{"matchLabels":{"team":"ml"}},
                                       "topologyKey":"kubernetes.io/hostname"}}]},
    "podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[
        {"topologyKey":"kubernetes.io/hostname"},
        {"labelSelector":{},"namespaceSelector":{},"topologyKey":"kubernetes.io/hostname"}],
      "preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":100,"podAffinityTerm":{
          "labelSelector":{"matchExpressions":[{"key":"app","operator":"Exists"}]},
          "topologyKey":"kubernetes.io/hostname"}}]}},
  "topologySpreadConstraints":[
    {"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule",
     "labelSelector":{"matchLabels":{"app":"db"}},"minDomains":3,
     "matchLabelKeys":["pod-template-hash"]},
    {"maxSkew":2,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"ScheduleAnyway",
     "labelSelector":{},"nodeAffinityPolicy":"Ignore","nodeTaintsPolicy":"Honor"},
    {"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule",
     "nodeAffinityPolicy":"Honor","nodeTaintsPolicy":"Ignore"}]})";

TEST(PlacementWriteBack, APodWrittenFromTheModelReadsBackTheSame) {
  auto original = decode_pod(everything);
  ASSERT_TRUE(original.pod.constraints);
  ASSERT_EQ(original.pod.constraints->host_ports.size(), 3u);
  ASSERT_EQ(original.pod.constraints->topology_spread.size(), 3u);
  ASSERT_EQ(original.pod.constraints->preferred_node_affinity.size(), 2u);
  // Without the user's spec, the spec shown is built from the model alone.
  pod_object from_model = original;
  from_model.pod.spec_json = {};
  json::value encoded = encode_object(from_model);
  SCOPED_TRACE(json::serialize(encoded));

  const auto& anti = encoded.at("spec").at("affinity").at("podAntiAffinity").at(
    "requiredDuringSchedulingIgnoredDuringExecution");
  EXPECT_EQ(anti.at(0).as_object().if_contains("labelSelector"), nullptr);
  EXPECT_EQ(anti.at(1).at("labelSelector"), json::value(json::object{}));
  EXPECT_EQ(anti.at(1).at("namespaceSelector"), json::value(json::object{}));
  const auto& preferred_node = encoded.at("spec").at("affinity").at("nodeAffinity").at(
    "preferredDuringSchedulingIgnoredDuringExecution");
  ASSERT_EQ(preferred_node.as_array().size(), 2u);
  EXPECT_EQ(preferred_node.at(0).at("weight"), json::value(60));
  EXPECT_EQ(preferred_node.at(1), json::value(json::object{{"weight", 1},
                                                         {"preference", json::object{}}}));
  const auto& ports = encoded.at("spec").at("containers").at(0).at("ports");
  ASSERT_EQ(ports.as_array().size(), 3u);
  EXPECT_EQ(ports.at(1), json::value(json::object{{"hostPort", 53},
                                                {"containerPort", 53},
                                                {"protocol", "UDP"},
                                                {"hostIP", "10.0.0.1"}}));

  // The policies only where they are not the default, as Kubernetes leaves them unset; {}
  // stays {} and an absent selector absent.
  const auto& spread = encoded.at("spec").at("topologySpreadConstraints");
  ASSERT_EQ(spread.as_array().size(), 3u);
  EXPECT_EQ(spread.at(0),
            json::value(json::object{{"maxSkew", 1},
                                     {"topologyKey", "topology.kubernetes.io/zone"},
                                     {"whenUnsatisfiable", "DoNotSchedule"},
                                     {"labelSelector",
                                      json::object{{"matchLabels", json::object{{"app", "db"}}}}},
                                     {"minDomains", 3},
                                     {"matchLabelKeys", json::array{"pod-template-hash"}}}));
  EXPECT_EQ(spread.at(1),
            json::value(json::object{{"maxSkew", 2},
                                     {"topologyKey", "kubernetes.io/hostname"},
                                     {"whenUnsatisfiable", "ScheduleAnyway"},
                                     {"labelSelector", json::object{}},
                                     {"nodeAffinityPolicy", "Ignore"},
                                     {"nodeTaintsPolicy", "Honor"}}));
  EXPECT_EQ(spread.at(2), json::value(json::object{{"maxSkew", 1},
                                                   {"topologyKey", "kubernetes.io/hostname"},
                                                   {"whenUnsatisfiable", "DoNotSchedule"}}));

  auto back = decode_object(encoded, from_server());
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(std::get<pod_object>(*back).pod.constraints);
  EXPECT_EQ(*std::get<pod_object>(*back).pod.constraints, *original.pod.constraints);
  // What a user submits back is valid too.
  EXPECT_TRUE(decode_object(encoded, user()).ok());
}

TEST(PlacementWriteBack, APodWithItsSpecShowsTheUsersSpec) {
  auto original = decode_pod(everything);
  json::value encoded = encode_object(original);
  EXPECT_EQ(encoded.at("spec").at("containers").at(0).at("ports").at(1),
            json::value(json::object{{"containerPort", 81}}));
  auto back = decode_object(encoded, from_server());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*std::get<pod_object>(*back).pod.constraints, *original.pod.constraints);
}

TEST(PlacementWriteBack, AJobTemplateWrittenFromTheModelReadsBackTheSame) {
  auto o = decode_object(parse_ok(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"j","namespace":"ns"},"spec":{"tasks":[{"name":"w","replicas":2,
    "template":{"spec":)" + std::string(everything) + "}}]}}"),
                         user());
  ASSERT_TRUE(o.ok()) << o.error().message;
  auto job = std::get<job_object>(*o);
  auto& tpl = job.job.tasks.at(0).pod_template;
  ASSERT_TRUE(tpl.constraints);
  auto expected = *tpl.constraints;
  job.job.spec_json = {};
  tpl.spec_json = {};
  auto back = decode_object(encode_object(job), from_server());
  ASSERT_TRUE(back.ok()) << back.error().message;
  const auto& read = std::get<job_object>(*back).job.tasks.at(0).pod_template;
  ASSERT_TRUE(read.constraints);
  EXPECT_EQ(*read.constraints, expected);
}

} // namespace
} // namespace phalanx::api
