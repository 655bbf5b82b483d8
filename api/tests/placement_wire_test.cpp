// Pod affinity, pod anti-affinity and host ports on the wire: Kubernetes' JSON shapes read into a
// pod's placement constraints (pods and job templates, as users submit them and as a server
// sends them), the apiserver's defaults and rules with the paths and messages users read, and
// the spec written back from the model.

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
#define ANTI(term)                                                                                 \
  R"({"containers":[{"name":"c"}],"affinity":{"podAntiAffinity":)"                                 \
  R"({"requiredDuringSchedulingIgnoredDuringExecution":[)" term "]}}}"

const std::string anti0 =
  "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";

INSTANTIATE_TEST_SUITE_P(
  Decode, PlacementRules,
  ::testing::Values(
    rule_case{"valid_ports",
              PORTS(R"([{"containerPort":80,"hostPort":80},
                        {"containerPort":80,"hostPort":80,"protocol":"UDP"},
                        {"containerPort":80,"hostPort":80,"hostIP":"10.0.0.1"},
                        {"containerPort":65535}])"),
              {}},
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

#undef PORTS
#undef ANTI

// ---------------------------------------------------------------------------------------------
// Writing back

// A spec with every shape: required and preferred terms of both kinds, absent and empty
// selectors, namespaces, and host ports of every protocol, one with a host IP.
constexpr std::string_view everything = R"({
  "containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":8080},{"containerPort":81}]},
                {"name":"b","ports":[{"containerPort":53,"hostPort":53,"protocol":"UDP",
                                      "hostIP":"10.0.0.1"},
                                     {"containerPort":9,"hostPort":9,"protocol":"SCTP"}]}],
  "affinity":{
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
          "topologyKey":"kubernetes.io/hostname"}}]}}})";

TEST(PlacementWriteBack, APodWrittenFromTheModelReadsBackTheSame) {
  auto original = decode_pod(everything);
  ASSERT_TRUE(original.pod.constraints);
  ASSERT_EQ(original.pod.constraints->host_ports.size(), 3u);
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
  const auto& ports = encoded.at("spec").at("containers").at(0).at("ports");
  ASSERT_EQ(ports.as_array().size(), 3u);
  EXPECT_EQ(ports.at(1), json::value(json::object{{"hostPort", 53},
                                                {"containerPort", 53},
                                                {"protocol", "UDP"},
                                                {"hostIP", "10.0.0.1"}}));

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
