// Tests of Kubernetes-style field validation (scheduler/validation.hpp): the string rules, the
// error format, and each object's rules with the exact messages users see.

#include "scheduler/validation.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::make_node;
using testing::make_pod;
using testing::res;

std::vector<std::string> strings(const field_errors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors)
    out.push_back(e.to_string());
  return out;
}

using messages = std::vector<std::string>;

const std::string label_rule =
    "must be a lowercase RFC 1123 label: lowercase letters, digits and '-' only, starting and "
    "ending with a letter or digit (e.g. 'my-name' or '123-abc')";
const std::string subdomain_rule =
    "must be a lowercase RFC 1123 subdomain: one or more labels joined by '.', each of lowercase "
    "letters, digits and '-', starting and ending with a letter or digit (e.g. 'example.com')";
const std::string name_part_rule =
    "name part must be letters, digits, '-', '_' or '.', starting and ending with a letter or "
    "digit (e.g. 'MyName', 'my.name' or 'app_1')";
const std::string resource_rule =
    "must be a standard resource (cpu, memory, ephemeral-storage, pods, hugepages-<size>) or an "
    "extended resource with a domain prefix (e.g. nvidia.com/gpu)";

// ---------------------------------------------------------------------------------------------
// Field errors

TEST(field_error_type, every_value_has_kubernetes_text) {
  const std::vector<std::string_view> want = {
      "Required value", "Invalid value", "Unsupported value", "Duplicate value",
      "Too long",       "Too many",      "Forbidden"};
  ASSERT_EQ(std::size_t(field_error_type_last) + 1, want.size());
  for (int i = 0; i <= int(field_error_type_last); ++i) {
    auto t = field_error_type(i);
    EXPECT_EQ(to_string(t), want[std::size_t(i)]);
    EXPECT_EQ(field_error_type_from_string(want[std::size_t(i)]), t);
  }
  EXPECT_FALSE(field_error_type_from_string("Invalid").has_value());
}

TEST(field_error, prints_like_kubernetes) {
  EXPECT_EQ(
      invalid_error("spec.minMember", int64_t{0}, "must be greater than or equal to 1").to_string(),
      "spec.minMember: Invalid value: 0: must be greater than or equal to 1");
  EXPECT_EQ(required_error("metadata.name", "name is required").to_string(),
            "metadata.name: Required value: name is required");
  EXPECT_EQ(duplicate_error("spec.tasks[1].name", "worker").to_string(),
            "spec.tasks[1].name: Duplicate value: \"worker\"");
  static constexpr std::array<std::string_view, 2> states{"Open", "Closed"};
  EXPECT_EQ(not_supported_error("spec.state", "Paused", states).to_string(),
            "spec.state: Unsupported value: \"Paused\": supported values: \"Open\", \"Closed\"");
  EXPECT_EQ(too_long_error("metadata.annotations", 262144).to_string(),
            "metadata.annotations: Too long: must have at most 262144 bytes");
  EXPECT_EQ(too_many_error("spec.tasks", 5, 3).to_string(),
            "spec.tasks: Too many: 5: must have at most 3 items");
  EXPECT_EQ(forbidden_error("metadata.namespace", "not allowed").to_string(),
            "metadata.namespace: Forbidden: not allowed");
  EXPECT_EQ(invalid_error("x", "", "must not be empty").to_string(),
            "x: Invalid value: \"\": must not be empty");
  EXPECT_EQ(duplicate_error("spec.policies[1].exitCode", int64_t{3}).to_string(),
            "spec.policies[1].exitCode: Duplicate value: 3");
  // Required and forbidden never print a value even when one is stored.
  field_error e{field_error_type::required, "a", "\"v\"", "d"};
  EXPECT_EQ(e.to_string(), "a: Required value: d");
}

TEST(go_quote, escapes_like_go) {
  EXPECT_EQ(go_quote(""), "\"\"");
  EXPECT_EQ(go_quote("worker"), "\"worker\"");
  EXPECT_EQ(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(go_quote("\n\t\r\a\b\f\v"), "\"\\n\\t\\r\\a\\b\\f\\v\"");
  EXPECT_EQ(go_quote(std::string("\x00\x01\x7f", 3)), "\"\\x00\\x01\\x7f\"");
  EXPECT_EQ(go_quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");           // Valid UTF-8 stays.
  EXPECT_EQ(go_quote("\xe2\x82\xac"), "\"\xe2\x82\xac\"");         // Euro sign.
  EXPECT_EQ(go_quote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\""); // Emoji.
  EXPECT_EQ(go_quote("\xff"), "\"\\xff\"");                        // Invalid bytes escape.
  EXPECT_EQ(go_quote("\xc3"), "\"\\xc3\"");                        // Truncated sequence.
  EXPECT_EQ(go_quote("\xc0\x80"), "\"\\xc0\\x80\"");               // Overlong NUL.
  EXPECT_EQ(go_quote("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");      // Surrogate.
  EXPECT_EQ(go_quote("\xe0\x80\xaf"), "\"\\xe0\\x80\\xaf\"");      // Overlong '/'.
}

TEST(to_status, single_and_many_errors) {
  EXPECT_TRUE(to_status("Queue", "q1", {}).ok());
  auto one = to_status("Queue", "q1", {invalid_error("spec.weight", int64_t{0}, "bad")});
  EXPECT_EQ(one.code(), errc::invalid_argument);
  EXPECT_EQ(one.message(), "Queue \"q1\" is invalid: spec.weight: Invalid value: 0: bad");
  auto two = to_status("Job", "tf",
                       {required_error("spec.tasks", "x"), required_error("spec.queue", "y")});
  EXPECT_EQ(
      two.message(),
      "Job \"tf\" is invalid: [spec.tasks: Required value: x, spec.queue: Required value: y]");
}

// ---------------------------------------------------------------------------------------------
// String rules

struct rule_case {
  std::string value;
  std::vector<std::string> rules; // Empty: valid.
};

void expect_rules(std::vector<std::string> (*rule)(std::string_view),
                  const std::vector<rule_case>& cases) {
  for (const auto& c : cases)
    EXPECT_EQ(rule(c.value), c.rules) << '"' << c.value << '"';
}

TEST(is_dns1123_label, table) {
  expect_rules(is_dns1123_label,
               {
                   {"a", {}},
                   {"0", {}},
                   {"my-name", {}},
                   {"123-abc", {}},
                   {"a--b", {}},
                   {std::string(63, 'a'), {}},
                   {"", {label_rule}},
                   {"-a", {label_rule}},
                   {"a-", {label_rule}},
                   {"A", {label_rule}},
                   {"a.b", {label_rule}},
                   {"a_b", {label_rule}},
                   {"a b", {label_rule}},
                   {"\xc3\xa9", {label_rule}},
                   {std::string(64, 'a'), {"must be no more than 63 characters"}},
                   {std::string(64, 'A'), {"must be no more than 63 characters", label_rule}},
               });
}

TEST(is_dns1123_subdomain, table) {
  expect_rules(is_dns1123_subdomain,
               {
                   {"a", {}},
                   {"example.com", {}},
                   {"a.b.c-d.e", {}},
                   {"tf-job-0", {}},
                   {std::string(64, 'a') + ".com", {}}, // No per-label limit in Kubernetes.
                   {std::string(253, 'a'), {}},
                   {"", {subdomain_rule}},
                   {".a", {subdomain_rule}},
                   {"a.", {subdomain_rule}},
                   {"a..b", {subdomain_rule}},
                   {"a.-b", {subdomain_rule}},
                   {"Example.com", {subdomain_rule}},
                   {"a_b", {subdomain_rule}},
                   {std::string(254, 'a'), {"must be no more than 253 characters"}},
               });
}

TEST(is_qualified_name, table) {
  expect_rules(
      is_qualified_name,
      {
          {"app", {}},
          {"MyName", {}},
          {"my.name", {}},
          {"app_1", {}},
          {"a", {}},
          {"example.com/MyName", {}},
          {"kubernetes.io/hostname", {}},
          {"topology.kubernetes.io/zone", {}},
          {std::string(63, 'x'), {}},
          {"", {"name part must not be empty"}},
          {"/a", {"prefix part must not be empty when '/' is present"}},
          {"a/", {"name part must not be empty"}},
          {"a/b/c",
           {"must be a name with an optional DNS subdomain prefix and one '/' (e.g. 'MyName' or "
            "'example.com/MyName')"}},
          {"-app", {name_part_rule}},
          {"app-", {name_part_rule}},
          {"bad key", {name_part_rule}},
          {"Example.com/x", {"prefix part " + subdomain_rule}},
          {std::string(64, 'x'), {"name part must be no more than 63 characters"}},
          {std::string(254, 'a') + "/x", {"prefix part must be no more than 253 characters"}},
      });
}

TEST(is_label_value, table) {
  expect_rules(is_label_value,
               {
                   {"", {}},
                   {"a", {}},
                   {"v1.2_3-x", {}},
                   {"Web", {}},
                   {std::string(63, 'v'), {}},
                   {"-a",
                    {"a label value must be empty or must be letters, digits, '-', '_' or '.', "
                     "starting and ending with a letter or digit (e.g. 'MyName', 'my.name' or "
                     "'app_1')"}},
                   {"a b",
                    {"a label value must be empty or must be letters, digits, '-', '_' or '.', "
                     "starting and ending with a letter or digit (e.g. 'MyName', 'my.name' or "
                     "'app_1')"}},
                   {std::string(64, 'v'), {"must be no more than 63 characters"}},
               });
}

TEST(is_resource_name, table) {
  const std::string hugepages_rule =
      "a hugepages resource must name a positive page size as a quantity (e.g. hugepages-2Mi or "
      "hugepages-1Gi)";
  expect_rules(
      is_resource_name,
      {
          {"cpu", {}},
          {"memory", {}},
          {"ephemeral-storage", {}},
          {"pods", {}},
          {"hugepages-2Mi", {}},
          {"hugepages-1Gi", {}},
          {"nvidia.com/gpu", {}},
          {"example.com/foo_bar.baz", {}},
          {"amd.com/gpu", {}},
          {"gpu", {resource_rule}},
          {"CPU", {resource_rule}},
          {"", {resource_rule}},
          {"hugepages-", {hugepages_rule}},
          {"hugepages-0", {hugepages_rule}},
          {"hugepages-abc", {hugepages_rule}},
          {"hugepages--2Mi", {hugepages_rule}},
          {"kubernetes.io/foo",
           {"the kubernetes.io domain is reserved for Kubernetes' own "
            "resources"}},
          {"node.kubernetes.io/foo",
           {"the kubernetes.io domain is reserved for Kubernetes' own "
            "resources"}},
          {"requests.example.com/x",
           {"must not start with 'requests.', which resource quotas "
            "reserve"}},
          {"Example.com/gpu", {"prefix part " + subdomain_rule}},
          {"example.com/-gpu", {name_part_rule}},
          {std::string(245, 'a') + "/x",
           {"prefix part must be no more than 244 characters so that 'requests.<name>' stays a "
            "valid quota key"}},
      });
}

// ---------------------------------------------------------------------------------------------
// Objects. Each case mutates a valid object and lists every expected message.

template <class T>
struct object_case {
  std::string what;
  std::function<void(T&)> mutate;
  messages expected;
};

template <class T, class Validate>
void run_cases(const T& valid, Validate validate, const std::vector<object_case<T>>& cases) {
  ASSERT_EQ(strings(validate(valid)), messages{}) << "the base object must be valid";
  for (const auto& c : cases) {
    T obj = valid;
    c.mutate(obj);
    EXPECT_EQ(strings(validate(obj)), c.expected) << c.what;
  }
}

TEST(validate_node, table) {
  node valid =
      make_node("node-1").cpu("4").memory("16Gi").gpu(2).label("zone", "a").taint("gpu", "true");
  std::string big(200 * 1024, 'x');
  run_cases<node>(
      valid, [](const node& n) { return validate(n); },
      {
          {"empty name",
           [](node& n) { n.meta.name.clear(); },
           {"metadata.name: Required value: name is required"}},
          {"bad name",
           [](node& n) { n.meta.name = "Node_1"; },
           {"metadata.name: Invalid value: \"Node_1\": " + subdomain_rule}},
          {"long name",
           [](node& n) { n.meta.name = std::string(254, 'a'); },
           {"metadata.name: Invalid value: \"" + std::string(254, 'a') +
            "\": must be no more than 253 characters"}},
          {"dotted name is fine", [](node& n) { n.meta.name = "ip-10-0-0-1.ec2.internal"; }, {}},
          {"namespace on a cluster-scoped object",
           [](node& n) { n.meta.namespace_name = "default"; },
           {"metadata.namespace: Forbidden: not allowed on this type: it is cluster-scoped"}},
          {"uid is optional", [](node& n) { n.meta.uid.clear(); }, {}},
          {"bad label key",
           [](node& n) { n.meta.labels.set("bad key", "v"); },
           {"metadata.labels: Invalid value: \"bad key\": " + name_part_rule}},
          {"long label value",
           [](node& n) { n.meta.labels.set("k", std::string(64, 'a')); },
           {"metadata.labels: Invalid value: \"" + std::string(64, 'a') +
            "\": must be no more than 63 characters"}},
          {"annotations at the limit",
           [&](node& n) {
             n.meta.annotations.set("a", big);
             n.meta.annotations.set("b", std::string(256 * 1024 - big.size() - 2, 'y'));
           },
           {}},
          {"annotations over the limit",
           [&](node& n) {
             n.meta.annotations.set("a", big);
             n.meta.annotations.set("b", std::string(256 * 1024 - big.size() - 1, 'y'));
           },
           {"metadata.annotations: Too long: must have at most 262144 bytes"}},
          {"annotation values may be anything",
           [](node& n) { n.meta.annotations.set("example.com/json", "{\"a\": [1, 2]}\n"); },
           {}},
          {"bad annotation key",
           [](node& n) { n.meta.annotations.set("a/b/c", "v"); },
           {"metadata.annotations: Invalid value: \"a/b/c\": must be a name with an optional DNS "
            "subdomain prefix and one '/' (e.g. 'MyName' or 'example.com/MyName')"}},
          {"negative allocatable",
           [](node& n) { n.allocatable.memory_bytes = -1; },
           {"status.allocatable[memory]: Invalid value: \"-1\": must be greater than or equal to "
            "0"}},
          {"allocatable at 2^53",
           [](node& n) { n.allocatable.cpu_milli = max_resource_amount; },
           {}},
          {"allocatable over 2^53",
           [](node& n) { n.allocatable.cpu_milli = max_resource_amount + 1; },
           {"status.allocatable[cpu]: Invalid value: \"9007199254740993m\": must be less than or "
            "equal to 9007199254740992m (2^53, the largest amount accepted)"}},
          {"memory over 2^53",
           [](node& n) { n.allocatable.memory_bytes = int64_t{1} << 60; },
           {"status.allocatable[memory]: Invalid value: \"1Ei\": must be less than or equal to "
            "8Pi (2^53, the largest amount accepted)"}},
          {"extended name without a domain",
           [](node& n) { n.allocatable.set("gpu", 1); },
           {"status.allocatable[gpu]: Invalid value: \"gpu\": " + resource_rule}},
          {"hugepages", [](node& n) { n.allocatable.set("hugepages-2Mi", 1 << 30); }, {}},
          {"reserved domain",
           [](node& n) { n.allocatable.set("kubernetes.io/batteries", 1); },
           {"status.allocatable[kubernetes.io/batteries]: Invalid value: "
            "\"kubernetes.io/batteries\": the kubernetes.io domain is reserved for Kubernetes' own "
            "resources"}},
          {"taint without key",
           [](node& n) { n.taints[0].key.clear(); },
           {"spec.taints[0].key: Required value: key is required"}},
          {"bad taint value",
           [](node& n) { n.taints[0].value = "a b"; },
           {"spec.taints[0].value: Invalid value: \"a b\": a label value must be empty or must be "
            "letters, digits, '-', '_' or '.', starting and ending with a letter or digit (e.g. "
            "'MyName', 'my.name' or 'app_1')"}},
          {"same key, other effect",
           [](node& n) {
             n.taints.push_back({"gpu", "true", taint_effect::no_execute});
           },
           {}},
          {"duplicate taint",
           [](node& n) {
             n.taints.push_back({"gpu", "false"});
           },
           {"spec.taints[1]: Duplicate value: \"gpu:NoSchedule\": taints must be unique by key "
            "and effect"}},
          {"unknown effect",
           [](node& n) { n.taints[0].effect = static_cast<taint_effect>(3); },
           {"spec.taints[0].effect: Unsupported value: \"unknown\": supported values: "
            "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""}},
          {"several errors, in field order",
           [](node& n) {
             n.meta.name.clear();
             n.allocatable.pods = -1;
             n.taints[0].key.clear();
           },
           {"metadata.name: Required value: name is required",
            "status.allocatable[pods]: Invalid value: \"-1\": must be greater than or equal to 0",
            "spec.taints[0].key: Required value: key is required"}},
      });
}

node_selector_term term(std::vector<node_selector_requirement> exprs,
                        std::vector<node_selector_requirement> fields = {}) {
  return {std::move(exprs), std::move(fields)};
}

const std::string term0 = "spec.affinity.nodeAffinity."
                          "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";

TEST(validate_pod, table) {
  pod valid = make_pod("tf-worker-0")
                  .cpu("1")
                  .memory("2Gi")
                  .gpu(1)
                  .group("tf")
                  .role("worker")
                  .selector("zone", "a")
                  .tolerate("gpu", "true");
  auto with_constraints = [](pod& p, const std::function<void(placement_constraints&)>& f) {
    auto c = std::make_shared<placement_constraints>(p.placement());
    f(*c);
    p.constraints = std::move(c);
  };
  using req = node_selector_requirement;
  run_cases<pod>(
      valid, [](const pod& p) { return validate(p); },
      {
          {"missing namespace",
           [](pod& p) { p.meta.namespace_name.clear(); },
           {"metadata.namespace: Required value: namespace is required"}},
          {"bad namespace",
           [](pod& p) { p.meta.namespace_name = "a.b"; },
           {"metadata.namespace: Invalid value: \"a.b\": " + label_rule}},
          {"no group, no role",
           [](pod& p) {
             p.group.clear();
             p.role.clear();
           },
           {}},
          {"bad group",
           [](pod& p) { p.group = "Bad"; },
           {"metadata.annotations[scheduling.k8s.io/group-name]: Invalid value: \"Bad\": " +
            subdomain_rule}},
          {"bad role",
           [](pod& p) { p.role = "worker.1"; },
           {"metadata.annotations[volcano.sh/task-spec]: Invalid value: \"worker.1\": " +
            label_rule}},
          {"pods must be one",
           [](pod& p) { p.requests.pods = 2; },
           {"spec.requests[pods]: Invalid value: 2: a pod occupies exactly one pod slot"}},
          {"pods missing",
           [](pod& p) { p.requests.pods = 0; },
           {"spec.requests[pods]: Invalid value: 0: a pod occupies exactly one pod slot"}},
          {"negative cpu",
           [](pod& p) { p.requests.cpu_milli = -500; },
           {"spec.requests[cpu]: Invalid value: \"-500m\": must be greater than or equal to 0"}},
          {"bad scheduler name",
           [](pod& p) { p.scheduler_name = "My Scheduler"; },
           {"spec.schedulerName: Invalid value: \"My Scheduler\": " + subdomain_rule}},
          {"bad priority class",
           [](pod& p) { p.priority_class_name = "High"; },
           {"spec.priorityClassName: Invalid value: \"High\": " + subdomain_rule}},
          {"bound",
           [](pod& p) {
             p.node_name = "node-1";
             p.phase = pod_phase::running;
           },
           {}},
          {"bad node name",
           [](pod& p) { p.node_name = "Node 1"; },
           {"spec.nodeName: Invalid value: \"Node 1\": " + subdomain_rule}},
          {"bad node selector",
           [&](pod& p) {
             with_constraints(p, [](auto& c) { c.node_selector.set("zone", "a b"); });
           },
           {"spec.nodeSelector: Invalid value: \"a b\": a label value must be empty or must be "
            "letters, digits, '-', '_' or '.', starting and ending with a letter or digit (e.g. "
            "'MyName', 'my.name' or 'app_1')"}},
          {"good affinity",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {
                   term({req{"zone", selector_operator::in, {"a", "b"}},
                         req{"gpu", selector_operator::exists, {}},
                         req{"spot", selector_operator::does_not_exist, {}},
                         req{"cores", selector_operator::gt, {"8"}},
                         req{"age", selector_operator::lt, {"-3"}},
                         req{"zone", selector_operator::not_in, {"c"}}},
                        {req{"metadata.name", selector_operator::in, {"node-1"}}}),
                   term({})};
             });
           },
           {}},
          {"In without values",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {term({req{"zone", selector_operator::in, {}}})};
             });
           },
           {term0 + ".matchExpressions[0].values: Required value: must be given when the operator "
                    "is 'In' or 'NotIn'"}},
          {"Exists with values",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {term({req{"zone", selector_operator::in, {"a"}},
                                                 req{"gpu", selector_operator::exists, {"x"}}})};
             });
           },
           {term0 + ".matchExpressions[1].values: Forbidden: may not be given when the operator "
                    "is 'Exists' or 'DoesNotExist'"}},
          {"Gt with a word",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {term({req{"cores", selector_operator::gt, {"abc"}}})};
             });
           },
           {term0 + ".matchExpressions[0].values[0]: Invalid value: \"abc\": must be an integer "
                    "when the operator is 'Gt' or 'Lt'"}},
          {"Lt with two values",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {term({req{"cores", selector_operator::lt, {"1", "2"}}})};
             });
           },
           {term0 + ".matchExpressions[0].values: Required value: needs exactly one value when the "
                    "operator is 'Gt' or 'Lt'"}},
          {"bad key",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {term({req{"-zone", selector_operator::exists, {}}})};
             });
           },
           {term0 + ".matchExpressions[0].key: Invalid value: \"-zone\": " + name_part_rule}},
          {"unsupported field",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {
                   term({}, {req{"metadata.labels", selector_operator::in, {"x"}}})};
             });
           },
           {term0 + ".matchFields[0].key: Unsupported value: \"metadata.labels\": supported "
                    "values: \"metadata.name\""}},
          {"field with Exists",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {
                   term({}, {req{"metadata.name", selector_operator::exists, {}}})};
             });
           },
           {term0 + ".matchFields[0].operator: Unsupported value: \"Exists\": supported values: "
                    "\"In\", \"NotIn\""}},
          {"field with two values",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.required_node_affinity = {
                   term({}, {req{"metadata.name", selector_operator::in, {"a", "b"}}})};
             });
           },
           {term0 + ".matchFields[0].values: Required value: a field requirement needs exactly one "
                    "value"}},
          {"tolerate everything",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.tolerations = {{"", toleration_operator::exists, "", std::nullopt, std::nullopt}};
             });
           },
           {}},
          {"empty key with Equal",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.tolerations = {{"", toleration_operator::equal, "", std::nullopt, std::nullopt}};
             });
           },
           {"spec.tolerations[0].operator: Invalid value: \"Equal\": must be Exists when the key "
            "is empty, which tolerates every taint"}},
          {"Exists with a value",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.tolerations = {
                   {"gpu", toleration_operator::exists, "x", std::nullopt, std::nullopt}};
             });
           },
           {"spec.tolerations[0].value: Invalid value: \"x\": must be empty when the operator is "
            "Exists"}},
          {"tolerationSeconds needs NoExecute",
           [&](pod& p) {
             with_constraints(p, [](auto& c) {
               c.tolerations = {
                   {"gpu", toleration_operator::equal, "true", taint_effect::no_schedule, 30},
                   {"gpu", toleration_operator::equal, "true", taint_effect::no_execute, 30},
                   {"gpu", toleration_operator::exists, "", std::nullopt, 30}};
             });
           },
           {"spec.tolerations[0].effect: Invalid value: \"NoSchedule\": must be NoExecute when "
            "tolerationSeconds is set",
            "spec.tolerations[2].effect: Invalid value: \"\": must be NoExecute when "
            "tolerationSeconds is set"}},
      });
}

// Pod affinity and anti-affinity: Kubernetes' rules (validatePodAffinityTerm and apimachinery's
// ValidateLabelSelector) and its messages.
TEST(validate_pod, pod_affinity_table) {
  using req = node_selector_requirement;
  pod_affinity_term near_db;
  near_db.selector = label_selector{{}, {req{"app", selector_operator::in, {"db", "cache"}},
                                         req{"tier", selector_operator::not_in, {"batch"}},
                                         req{"team", selector_operator::exists, {}},
                                         req{"spot", selector_operator::does_not_exist, {}}}};
  near_db.selector->match_labels.set("example.com/role", "primary");
  near_db.namespaces = {"ns", "shared-1"};
  near_db.topology_key = "topology.kubernetes.io/zone";
  pod_affinity_term anywhere;  // No selector: matches no pod, which is valid.
  anywhere.namespace_selector = label_selector{};
  anywhere.topology_key = "kubernetes.io/hostname";

  pod valid = make_pod("db-client-0").cpu("1");
  auto c = std::make_shared<placement_constraints>();
  c->required_pod_affinity = {near_db};
  c->preferred_pod_affinity = {{1, anywhere}};
  c->required_pod_anti_affinity = {anywhere};
  c->preferred_pod_anti_affinity = {{100, near_db}};
  valid.constraints = c;

  // Applies `f` to a copy of the valid constraints.
  auto change = [](std::function<void(placement_constraints&)> f) {
    return [f](pod& p) {
      auto copy = std::make_shared<placement_constraints>(p.placement());
      f(*copy);
      p.constraints = std::move(copy);
    };
  };
  const std::string aff =
      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
  const std::string anti_pref =
      "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]";
  run_cases<pod>(
      valid, [](const pod& p) { return validate(p); },
      {
          {"topologyKey empty",
           change([](auto& c) { c.required_pod_anti_affinity[0].topology_key.clear(); }),
           {"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
            "topologyKey: Required value: can not be empty"}},
          {"topologyKey not a qualified name",
           change([](auto& c) { c.preferred_pod_anti_affinity[0].term.topology_key = "zone/"; }),
           {anti_pref + ".podAffinityTerm.topologyKey: Invalid value: \"zone/\": name part must "
                        "not be empty"}},
          {"weight 0 and 101",
           change([](auto& c) {
             c.preferred_pod_affinity[0].weight = 0;
             c.preferred_pod_anti_affinity[0].weight = 101;
           }),
           {"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
            "Invalid value: 0: must be in the range 1-100",
            anti_pref + ".weight: Invalid value: 101: must be in the range 1-100"}},
          {"Gt and Lt are not label selector operators",
           change([](auto& c) {
             c.required_pod_affinity[0].selector->match_expressions = {
                 req{"cores", selector_operator::gt, {"1"}},
                 req{"cores", selector_operator::lt, {"9"}}};
           }),
           {aff + ".labelSelector.matchExpressions[0].operator: Invalid value: \"Gt\": not a "
                  "valid selector operator",
            aff + ".labelSelector.matchExpressions[1].operator: Invalid value: \"Lt\": not a "
                  "valid selector operator"}},
          {"In without values",
           change([](auto& c) {
             c.required_pod_affinity[0].selector->match_expressions[0].values.clear();
           }),
           {aff + ".labelSelector.matchExpressions[0].values: Required value: must be specified "
                  "when `operator` is 'In' or 'NotIn'"}},
          {"DoesNotExist with values",
           change([](auto& c) {
             c.required_pod_affinity[0].selector->match_expressions[3].values = {"true"};
           }),
           {aff + ".labelSelector.matchExpressions[3].values: Forbidden: may not be specified "
                  "when `operator` is 'Exists' or 'DoesNotExist'"}},
          {"bad expression key and value",
           change([](auto& c) {
             auto& e = c.required_pod_affinity[0].selector->match_expressions[0];
             e.key = "-app";
             e.values = {"db", "no spaces"};
           }),
           {aff + ".labelSelector.matchExpressions[0].key: Invalid value: \"-app\": " +
                name_part_rule,
            aff + ".labelSelector.matchExpressions[0].values[1]: Invalid value: \"no spaces\": "
                  "a label value must be empty or must be letters, digits, '-', '_' or '.', "
                  "starting and ending with a letter or digit (e.g. 'MyName', 'my.name' or "
                  "'app_1')"}},
          {"bad matchLabels key",
           change([](auto& c) {
             c.required_pod_affinity[0].selector->match_labels.set("bad key", "x");
           }),
           {aff + ".labelSelector.matchLabels: Invalid value: \"bad key\": " + name_part_rule}},
          {"namespace selector rules",
           change([](auto& c) {
             c.required_pod_anti_affinity[0].namespace_selector->match_expressions = {
                 req{"team", selector_operator::in, {}}};
           }),
           {"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
            "namespaceSelector.matchExpressions[0].values: Required value: must be specified when "
            "`operator` is 'In' or 'NotIn'"}},
          {"namespace not a DNS label",
           change([](auto& c) { c.required_pod_affinity[0].namespaces[1] = "shared.1"; }),
           {aff + ".namespaces[1]: Invalid value: \"shared.1\": " + label_rule}},
          {"a preferred term's own rules",
           change([](auto& c) {
             c.preferred_pod_anti_affinity[0].term.namespaces = {"Upper"};
           }),
           {anti_pref + ".podAffinityTerm.namespaces[0]: Invalid value: \"Upper\": " +
            label_rule}},
      });
}

// Topology spread constraints: Kubernetes' validateTopologySpreadConstraints and its messages,
// plus no matchLabelKeys key twice.
TEST(validate_pod, topology_spread_table) {
  using req = node_selector_requirement;
  topology_spread_constraint by_zone;
  by_zone.topology_key = "topology.kubernetes.io/zone";
  by_zone.selector = label_selector{{}, {req{"tier", selector_operator::not_in, {"batch"}}}};
  by_zone.selector->match_labels.set("app", "db");
  by_zone.min_domains = 3;
  by_zone.match_label_keys = {"pod-template-hash", "example.com/revision"};
  topology_spread_constraint by_node;  // No selector: counts no pod, which is valid.
  by_node.max_skew = 2;
  by_node.topology_key = "kubernetes.io/hostname";
  by_node.do_not_schedule = false;
  by_node.honor_node_affinity = false;
  by_node.honor_node_taints = true;
  // The same key as by_zone with the other action is another kind of constraint.
  topology_spread_constraint by_zone_anyway;
  by_zone_anyway.topology_key = "topology.kubernetes.io/zone";
  by_zone_anyway.do_not_schedule = false;
  by_zone_anyway.selector = label_selector{};

  pod valid = make_pod("db-0").cpu("1");
  auto c = std::make_shared<placement_constraints>();
  c->topology_spread = {by_zone, by_node, by_zone_anyway};
  valid.constraints = c;

  // Applies `f` to a copy of the valid constraints.
  auto change = [](std::function<void(placement_constraints&)> f) {
    return [f](pod& p) {
      auto copy = std::make_shared<placement_constraints>(p.placement());
      f(*copy);
      p.constraints = std::move(copy);
    };
  };
  const std::string zone = "spec.topologySpreadConstraints[0]";
  const std::string node = "spec.topologySpreadConstraints[1]";
  const std::string anyway = "spec.topologySpreadConstraints[2]";
  run_cases<pod>(
      valid, [](const pod& p) { return validate(p); },
      {
          {"maxSkew 0 and -1",
           change([](auto& c) {
             c.topology_spread[0].max_skew = 0;
             c.topology_spread[1].max_skew = -1;
           }),
           {zone + ".maxSkew: Invalid value: 0: must be greater than zero",
            node + ".maxSkew: Invalid value: -1: must be greater than zero"}},
          {"topologyKey empty",
           change([](auto& c) { c.topology_spread[1].topology_key.clear(); }),
           {node + ".topologyKey: Required value: can not be empty"}},
          // Kubernetes asks no more of the key; no node label has such a key, so the
          // constraint finds no domain.
          {"topologyKey not a qualified name is accepted",
           change([](auto& c) { c.topology_spread[1].topology_key = "zone/"; }),
           {}},
          {"one kind twice",
           change([](auto& c) { c.topology_spread[2].do_not_schedule = true; }),
           {zone + ".{topologyKey, whenUnsatisfiable}: Duplicate value: "
                   "\"{topology.kubernetes.io/zone, DoNotSchedule}\""}},
          {"one kind three times: each but the last reported",
           change([](auto& c) {
             c.topology_spread[0].topology_key = "kubernetes.io/hostname";
             c.topology_spread[0].do_not_schedule = false;
             c.topology_spread[0].min_domains.reset();
             c.topology_spread[2].topology_key = "kubernetes.io/hostname";
           }),
           {zone + ".{topologyKey, whenUnsatisfiable}: Duplicate value: "
                   "\"{kubernetes.io/hostname, ScheduleAnyway}\"",
            node + ".{topologyKey, whenUnsatisfiable}: Duplicate value: "
                   "\"{kubernetes.io/hostname, ScheduleAnyway}\""}},
          {"minDomains 0", change([](auto& c) { c.topology_spread[0].min_domains = 0; }),
           {zone + ".minDomains: Invalid value: 0: must be greater than zero"}},
          {"minDomains with ScheduleAnyway",
           change([](auto& c) { c.topology_spread[1].min_domains = 2; }),
           {node + ".minDomains: Invalid value: 2: can only use minDomains if "
                   "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"}},
          {"minDomains -1 with ScheduleAnyway",
           change([](auto& c) { c.topology_spread[2].min_domains = -1; }),
           {anyway + ".minDomains: Invalid value: -1: must be greater than zero",
            anyway + ".minDomains: Invalid value: -1: can only use minDomains if "
                     "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"}},
          {"matchLabelKeys without a labelSelector",
           change([](auto& c) { c.topology_spread[1].match_label_keys = {"app"}; }),
           {node + ".matchLabelKeys: Forbidden: must not be specified when labelSelector is "
                   "not set"}},
          {"matchLabelKeys not a qualified name",
           change([](auto& c) { c.topology_spread[0].match_label_keys[1] = "bad key"; }),
           {zone + ".matchLabelKeys[1]: Invalid value: \"bad key\": " + name_part_rule}},
          {"matchLabelKeys in matchLabels and in matchExpressions",
           change([](auto& c) { c.topology_spread[0].match_label_keys = {"tier", "app"}; }),
           {zone + ".matchLabelKeys[0]: Invalid value: \"tier\": exists in both matchLabelKeys "
                   "and labelSelector",
            zone + ".matchLabelKeys[1]: Invalid value: \"app\": exists in both matchLabelKeys "
                   "and labelSelector"}},
          {"matchLabelKeys key twice",
           change([](auto& c) {
             c.topology_spread[2].match_label_keys = {"pod-template-hash", "rev",
                                                      "pod-template-hash"};
           }),
           {anyway + ".matchLabelKeys[2]: Duplicate value: \"pod-template-hash\""}},
          {"labelSelector rules",
           change([](auto& c) {
             c.topology_spread[0].selector->match_expressions = {
                 req{"cores", selector_operator::gt, {"1"}},
                 req{"tier", selector_operator::in, {}}};
           }),
           {zone + ".labelSelector.matchExpressions[0].operator: Invalid value: \"Gt\": not a "
                   "valid selector operator",
            zone + ".labelSelector.matchExpressions[1].values: Required value: must be specified "
                   "when `operator` is 'In' or 'NotIn'"}},
          {"every rule of one constraint, in Kubernetes' order",
           change([](auto& c) {
             auto& t = c.topology_spread[1];
             t.max_skew = 0;
             t.topology_key.clear();
             t.min_domains = 0;
             t.selector = label_selector{};
             t.selector->match_labels.set("app", "-db");
             t.match_label_keys = {"app"};
           }),
           {node + ".maxSkew: Invalid value: 0: must be greater than zero",
            node + ".topologyKey: Required value: can not be empty",
            node + ".minDomains: Invalid value: 0: must be greater than zero",
            node + ".minDomains: Invalid value: 0: can only use minDomains if "
                   "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            node + ".matchLabelKeys[0]: Invalid value: \"app\": exists in both matchLabelKeys "
                   "and labelSelector",
            node + ".labelSelector.matchLabels: Invalid value: \"-db\": a label value must be "
                   "empty or must be letters, digits, '-', '_' or '.', starting and ending with a "
                   "letter or digit (e.g. 'MyName', 'my.name' or 'app_1')"}},
      });
}

TEST(validate_pod_group, table) {
  testing::gang g = make_gang("tf", 3)
                        .task("ps", 1, res("cpu", "1"), 1)
                        .task("worker", 2, res("cpu", "2"), 2)
                        .min_resources(res("cpu", "5"));
  auto count = int32_t(g.pods.size());
  run_cases<pod_group>(
      g.group, [&](const pod_group& pg) { return validate(pg, count); },
      {
          {"minMember 0 is accepted (Volcano)", [](pod_group& pg) { pg.min_member = 0; }, {}},
          {"negative minMember",
           [](pod_group& pg) { pg.min_member = -1; },
           {"spec.minMember: Invalid value: -1: must be greater than or equal to 0"}},
          {"minMember above the declared pods",
           [](pod_group& pg) { pg.min_member = 4; },
           {"spec.minMember: Invalid value: 4: must be less than or equal to the number of pods "
            "in the group (3)"}},
          {"role minimums above minMember are accepted (Volcano)",
           [](pod_group& pg) { pg.min_member = 1; },
           {}},
          {"duplicate role",
           [](pod_group& pg) {
             pg.min_task_member.insert(pg.min_task_member.begin(), {"ps", 0});
           },
           {"spec.minTaskMember[ps]: Duplicate value: \"ps\""}},
          {"negative role minimum",
           [](pod_group& pg) { pg.min_task_member[0].min = -1; },
           {"spec.minTaskMember[ps]: Invalid value: -1: must be greater than or equal to 0"}},
          {"role minimum above the declared pods",
           [](pod_group& pg) { pg.min_task_member[1].min = 4; },
           {"spec.minTaskMember[worker]: Invalid value: 4: must be less than or equal to the "
            "number of pods in the group (3)",
            "spec.minTaskMember: Invalid value: 5: the role minimums add up to more than the 3 "
            "pods in the group"}},
          {"role minimums add up to more than the pods",
           [](pod_group& pg) { pg.min_task_member[0].min = 2; },
           {"spec.minTaskMember: Invalid value: 4: the role minimums add up to more than the 3 "
            "pods in the group"}},
          {"unsorted roles",
           [](pod_group& pg) { std::swap(pg.min_task_member[0], pg.min_task_member[1]); },
           {"spec.minTaskMember: Invalid value: must be sorted by role (the model keeps it sorted "
            "for lookups)"}},
          {"bad role name",
           [](pod_group& pg) { pg.min_task_member[1].role = "Worker"; },
           {"spec.minTaskMember[Worker]: Invalid value: \"Worker\": " + label_rule,
            "spec.minTaskMember: Invalid value: must be sorted by role (the model keeps it sorted "
            "for lookups)"}},
          {"empty role name",
           [](pod_group& pg) { pg.min_task_member[0].role.clear(); },
           {"spec.minTaskMember[]: Required value: a role name is required"}},
          {"missing queue",
           [](pod_group& pg) { pg.queue.clear(); },
           {"spec.queue: Required value: queue is required"}},
          {"bad queue",
           [](pod_group& pg) { pg.queue = "Bad_Q"; },
           {"spec.queue: Invalid value: \"Bad_Q\": " + subdomain_rule}},
          {"negative minResources",
           [](pod_group& pg) { pg.min_resources.set("nvidia.com/gpu", -2); },
           {"spec.minResources[nvidia.com/gpu]: Invalid value: \"-2\": must be greater than or "
            "equal to 0"}},
          {"bad priority class",
           [](pod_group& pg) { pg.priority_class_name = "-x"; },
           {"spec.priorityClassName: Invalid value: \"-x\": " + subdomain_rule}},
          {"missing name and namespace",
           [](pod_group& pg) {
             pg.meta.name.clear();
             pg.meta.namespace_name.clear();
           },
           {"metadata.name: Required value: name is required",
            "metadata.namespace: Required value: namespace is required"}},
      });
  // Without a known pod count only the count-free rules apply, and the limit on gang size.
  pod_group big = g.group;
  big.min_member = 100;
  EXPECT_TRUE(validate(big).empty());
  big.min_member = 2147483647;
  big.min_task_member[1].min = 600000;
  auto errors = validate(big);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].to_string(), "spec.minMember: Invalid value: 2147483647: must be less than "
                                   "or equal to 500000 (the most pods in one gang)");
  EXPECT_EQ(errors[1].to_string(), "spec.minTaskMember[worker]: Invalid value: 600000: must be "
                                   "less than or equal to 500000 (the most pods in one gang)");
}

TEST(validate_pod_group, with_the_declared_pods) {
  testing::gang g =
      make_gang("tf", 3).task("ps", 1, res("cpu", "1"), 1).task("worker", 2, res("cpu", "2"), 2);
  auto pods = g.pod_pointers();
  EXPECT_EQ(strings(validate(g.group, pods)), messages{});

  pod_group missing_role = g.group;
  missing_role.min_task_member.insert(missing_role.min_task_member.begin(), {"chief", 0});
  EXPECT_EQ(strings(validate(missing_role, pods)),
            (messages{"spec.minTaskMember[chief]: Invalid value: \"chief\": no pod of the group "
                      "has this role; roles present: \"ps\", \"worker\""}));

  pod_group too_many = g.group;
  too_many.min_task_member[0].min = 2; // ps: 2, but one ps pod; sum 4 > 3.
  EXPECT_EQ(strings(validate(too_many, pods)),
            (messages{"spec.minTaskMember: Invalid value: 4: the role minimums add up to more "
                      "than the 3 pods in the group",
                      "spec.minTaskMember[ps]: Invalid value: 2: only 1 pods of the group have "
                      "this role"}));

  std::vector<const pod*> none;
  pod_group any = g.group;
  any.min_member = 0;
  any.min_task_member = {{"worker", 0}};
  EXPECT_EQ(strings(validate(any, none)),
            (messages{"spec.minTaskMember[worker]: Invalid value: \"worker\": no pod of the group "
                      "has this role (no pod has a role)"}));
}

TEST(validate_queue, table) {
  queue valid;
  valid.meta.name = "q1";
  valid.weight = 1;
  ASSERT_TRUE(valid.capability.set("cpu", 4000));
  ASSERT_TRUE(valid.capability.set("memory", int64_t{32} << 30));
  ASSERT_TRUE(valid.deserved.set("cpu", 3000));
  valid.guarantee = res("cpu", "2");
  run_cases<queue>(
      valid, [](const queue& q) { return validate(q); },
      {
          {"weight 0",
           [](queue& q) { q.weight = 0; },
           {"spec.weight: Invalid value: 0: queue weight must be a positive integer no greater "
            "than 65535"}},
          {"negative weight",
           [](queue& q) { q.weight = -3; },
           {"spec.weight: Invalid value: -3: queue weight must be a positive integer no greater "
            "than 65535"}},
          {"weight 65535", [](queue& q) { q.weight = 65535; }, {}},
          {"weight 65536",
           [](queue& q) { q.weight = 65536; },
           {"spec.weight: Invalid value: 65536: queue weight must be a positive integer no greater "
            "than 65535"}},
          {"closed", [](queue& q) { q.state = queue_state::closed; }, {}},
          {"closing cannot be asked for",
           [](queue& q) { q.state = queue_state::closing; },
           {"spec.state: Unsupported value: \"Closing\": supported values: \"Open\", \"Closed\""}},
          {"guarantee above capability",
           [](queue& q) {
             q.guarantee.cpu_milli = 8000;
             q.deserved = {};
           },
           {"spec.guarantee.resource[cpu]: Invalid value: \"8\": must be less than or equal to "
            "spec.capability[cpu] (4)"}},
          {"guarantee above deserved",
           [](queue& q) { q.guarantee.cpu_milli = 3500; },
           {"spec.guarantee.resource[cpu]: Invalid value: \"3500m\": must be less than or equal "
            "to spec.deserved[cpu] (3)"}},
          {"deserved above capability",
           [](queue& q) { ASSERT_TRUE(q.deserved.set("memory", int64_t{64} << 30)); },
           {"spec.deserved[memory]: Invalid value: \"64Gi\": must be less than or equal to "
            "spec.capability[memory] (32Gi)"}},
          {"guarantee on an uncapped dimension",
           [](queue& q) { q.guarantee.set("nvidia.com/gpu", 8); },
           {}},
          {"negative capability",
           [](queue& q) { ASSERT_TRUE(q.capability.set("nvidia.com/gpu", -1)); },
           {"spec.capability[nvidia.com/gpu]: Invalid value: \"-1\": must be greater than or equal "
            "to 0"}},
          {"zero capability is a valid cap",
           [](queue& q) { ASSERT_TRUE(q.capability.set("nvidia.com/gpu", 0)); },
           {}},
          {"negative guarantee",
           [](queue& q) { q.guarantee.memory_bytes = -1; },
           {"spec.guarantee.resource[memory]: Invalid value: \"-1\": must be greater than or "
            "equal to 0"}},
          {"bad capability name",
           [](queue& q) { ASSERT_TRUE(q.capability.set("gpu", 1)); },
           {"spec.capability[gpu]: Invalid value: \"gpu\": " + resource_rule}},
          {"own parent",
           [](queue& q) { q.parent = "q1"; },
           {"spec.parent: Invalid value: \"q1\": a queue cannot be its own parent"}},
          {"parent", [](queue& q) { q.parent = "root"; }, {}},
          {"bad parent",
           [](queue& q) { q.parent = "Root"; },
           {"spec.parent: Invalid value: \"Root\": " + subdomain_rule}},
          {"namespace",
           [](queue& q) { q.meta.namespace_name = "ns"; },
           {"metadata.namespace: Forbidden: not allowed on this type: it is cluster-scoped"}},
      });
  queue def;
  def.meta.name = std::string(default_queue_name);
  EXPECT_TRUE(validate(def).empty());
}

// ---------------------------------------------------------------------------------------------
// The queue tree

// A queue under `parent` with `guarantee_cpu` cores guaranteed (none when empty).
queue tree_queue(std::string name, std::string parent, std::string_view guarantee_cpu = {}) {
  queue q;
  q.meta.name = std::move(name);
  q.parent = std::move(parent);
  if (!guarantee_cpu.empty())
    q.guarantee = res("cpu", guarantee_cpu);
  return q;
}

// dev (guarantee 10) with d1 (4) and d2 (3); prod (no guarantee) with p1 (2).
std::vector<queue> stored_tree() {
  return {tree_queue("dev", "", "10"), tree_queue("d1", "dev", "4"), tree_queue("d2", "dev", "3"),
          tree_queue("prod", "root"), tree_queue("p1", "prod", "2")};
}

TEST(validate_queue_tree, table) {
  struct tree_case {
    std::string what;
    queue q;  // New, or replacing the stored queue of its name.
    messages expected;
  };
  const std::vector<tree_case> cases = {
      {"a new team fills its department's guarantee exactly", tree_queue("d3", "dev", "3"), {}},
      {"a new department under the root", tree_queue("ops", "root", "5"), {}},
      {"no parent is the root", tree_queue("ops", "", "5"), {}},
      {"a parent without a guarantee does not bound", tree_queue("p2", "prod", "100"), {}},
      {"a team moves to another department", tree_queue("d1", "prod", "4"), {}},
      {"a team raises its guarantee within its department's", tree_queue("d1", "dev", "7"), {}},
      {"missing parent",
       tree_queue("d3", "ops"),
       {"spec.parent: Invalid value: \"ops\": parent queue \"ops\" does not exist (a parent must "
        "be an existing queue or \"root\")"}},
      {"cycle through a child",
       tree_queue("dev", "d1", "10"),
       {"spec.parent: Invalid value: \"d1\": queue \"dev\" would be its own ancestor (dev -> d1 "
        "-> dev)"}},
      {"own parent",
       tree_queue("dev", "dev", "10"),
       {"spec.parent: Invalid value: \"dev\": queue \"dev\" would be its own ancestor (dev -> "
        "dev)"}},
      {"guarantee above the parent's",
       tree_queue("d3", "dev", "12"),
       {"spec.guarantee.resource[cpu]: Invalid value: \"12\": must be less than or equal to the "
        "guarantee of parent queue \"dev\" (10)"}},
      {"children's guarantees above the parent's",
       tree_queue("d3", "dev", "4"),
       {"spec.guarantee.resource[cpu]: Invalid value: \"4\": the guarantees of the children of "
        "queue \"dev\" would add up to 11 (d1: 4, d2: 3, d3: 4), more than its guarantee (10)"}},
      {"a team raises its guarantee beyond its department's",
       tree_queue("d1", "dev", "8"),
       {"spec.guarantee.resource[cpu]: Invalid value: \"8\": the guarantees of the children of "
        "queue \"dev\" would add up to 11 (d1: 8, d2: 3), more than its guarantee (10)"}},
      {"a department lowers its guarantee below its teams'",
       tree_queue("dev", "", "6"),
       {"spec.guarantee.resource[cpu]: Invalid value: \"6\": must be at least the sum of its "
        "children's guarantees: 7 (d1: 4, d2: 3)"}},
  };
  const auto stored = stored_tree();
  for (const auto& stored_queue : stored)
    EXPECT_TRUE(check_queue_tree(stored_queue, stored).empty()) << stored_queue.meta.name;
  for (const auto& c : cases)
    EXPECT_EQ(strings(check_queue_tree(c.q, stored)), c.expected) << c.what;
}

TEST(validate_job, table) {
  job valid;
  valid.meta.name = "tf";
  valid.meta.namespace_name = "default";
  valid.queue = "default";
  valid.min_available = 3;
  job_task ps;
  ps.name = "ps";
  ps.replicas = 1;
  ps.pod_template = make_pod("template").cpu("1").memory("1Gi");
  job_task worker;
  worker.name = "worker";
  worker.replicas = 2;
  worker.min_available = 1;
  worker.pod_template = make_pod("template").cpu("2").gpu(1).tolerate("gpu", "true");
  worker.policies = {{"RestartTask", "PodFailed", {}, std::nullopt, std::nullopt}};
  valid.tasks = {ps, worker};
  valid.policies = {{"AbortJob", "", {"PodEvicted", "TaskFailed"}, std::nullopt, std::nullopt},
                    {"RestartJob", "", {}, 137, std::chrono::seconds(30)}};
  valid.plugins = {{"env", {}}, {"ssh", {}}, {"svc", {"--publish-not-ready-addresses"}}};
  valid.tasks[1].depends_on = {"ps"};
  valid.volumes = {{"/data", "training-data", false}, {"/scratch", "", true}};
  valid.min_success = 2;
  valid.ttl_seconds_after_finished = 600;
  using lp = lifecycle_policy;
  run_cases<job>(
      valid, [](const job& j) { return validate(j); },
      {
          {"no minAvailable", [](job& j) { j.min_available.reset(); }, {}},
          {"no tasks",
           [](job& j) {
             j.tasks.clear();
             j.min_available.reset();
           },
           {"spec.tasks: Required value: a job needs at least one task"}},
          {"duplicate task name",
           [](job& j) { j.tasks[1].name = "ps"; },
           {"spec.tasks[1].name: Duplicate value: \"ps\""}},
          {"bad task name",
           [](job& j) { j.tasks[1].name = "Worker"; },
           {"spec.tasks[1].name: Invalid value: \"Worker\": " + label_rule}},
          {"empty task name",
           [](job& j) { j.tasks[0].name.clear(); },
           {"spec.tasks[0].name: Required value: task name is required",
            // The worker depends on "ps", which no task is called now.
            "spec.tasks[1].dependsOn.name[0]: Invalid value: \"ps\": no task of the job has "
            "this name"}},
          {"negative replicas",
           [](job& j) {
             j.tasks[0].replicas = -1;
             j.min_available = 2;
           },
           {"spec.tasks[0].replicas: Invalid value: -1: must be greater than or equal to 0"}},
          {"zero replicas",
           [](job& j) {
             j.tasks[0].replicas = 0;
             j.min_available = 2;
           },
           {}},
          {"replicas beyond the most pods one job may make",
           [](job& j) { j.tasks[1].replicas = 2147483647; },
           {"spec.tasks[1].replicas: Invalid value: 2147483647: must be less than or equal to "
            "500000 (the most pods one job may make)"}},
          {"replicas that add up beyond the most pods one job may make",
           [](job& j) {
             j.tasks[0].replicas = 300000;
             j.tasks[1].replicas = 300000;
           },
           {"spec.tasks: Invalid value: 600000: the tasks' replicas add up to more than 500000 "
            "pods (the most pods one job may make)"}},
          {"replicas at the limit are accepted",
           [](job& j) {
             j.tasks[0].replicas = 1;
             j.tasks[1].replicas = 499999;
           },
           {}},
          {"task minAvailable above replicas",
           [](job& j) { j.tasks[1].min_available = 3; },
           {"spec.tasks[1].minAvailable: Invalid value: 3: must be less than or equal to "
            "replicas (2)"}},
          {"negative task minAvailable",
           [](job& j) { j.tasks[1].min_available = -1; },
           {"spec.tasks[1].minAvailable: Invalid value: -1: must be greater than or equal to 0"}},
          {"job minAvailable above total replicas",
           [](job& j) { j.min_available = 4; },
           {"spec.minAvailable: Invalid value: 4: must be less than or equal to the total "
            "replicas of the tasks (3)"}},
          {"negative job minAvailable",
           [](job& j) { j.min_available = -1; },
           {"spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"}},
          {"job minAvailable 0", [](job& j) { j.min_available = 0; }, {}},
          {"negative maxRetry",
           [](job& j) { j.max_retry = -1; },
           {"spec.maxRetry: Invalid value: -1: must be greater than or equal to 0"}},
          {"negative task maxRetry",
           [](job& j) { j.tasks[0].max_retry = -2; },
           {"spec.tasks[0].maxRetry: Invalid value: -2: must be greater than or equal to 0"}},
          {"bad job name",
           [](job& j) { j.meta.name = "Tf"; },
           {"metadata.name: Invalid value: \"Tf\": " + label_rule}},
          {"dotted job name",
           [](job& j) { j.meta.name = "tf.v2"; },
           {"metadata.name: Invalid value: \"tf.v2\": " + label_rule}},
          {"longest pod name just fits",
           [](job& j) { j.meta.name = std::string(54, 'a'); }, // 54 + "-worker-1" = 63.
           {}},
          {"longest pod name too long",
           [](job& j) { j.meta.name = std::string(55, 'a'); },
           {"spec.tasks[1].name: Invalid value: \"worker\": pod name \"" + std::string(55, 'a') +
            "-worker-1\" would have 64 characters: the job name, task name and replica index "
            "together must fit in 63"}},
          {"many replicas make the index longer",
           [](job& j) {
             j.meta.name = std::string(50, 'a');
             j.tasks[1].replicas = 100000; // "-worker-99999": 50 + 13 = 63.
           },
           {}},
          {"one more digit",
           [](job& j) {
             j.meta.name = std::string(50, 'a');
             j.tasks[1].replicas = 100001; // "-worker-100000": 64.
           },
           {"spec.tasks[1].name: Invalid value: \"worker\": pod name \"" + std::string(50, 'a') +
            "-worker-100000\" would have 64 characters: the job name, task name and replica "
            "index together must fit in 63"}},
          {"missing queue",
           [](job& j) { j.queue.clear(); },
           {"spec.queue: Required value: queue is required"}},
          {"bad scheduler name",
           [](job& j) { j.scheduler_name = "Volcano"; },
           {"spec.schedulerName: Invalid value: \"Volcano\": " + subdomain_rule}},
          {"bad template resource",
           [](job& j) { j.tasks[0].pod_template.requests.set("gpu", 1); },
           {"spec.tasks[0].template.spec.requests[gpu]: Invalid value: \"gpu\": " + resource_rule}},
          {"bad template label",
           [](job& j) { j.tasks[1].pod_template.meta.labels.set("app", "-x"); },
           {"spec.tasks[1].template.metadata.labels: Invalid value: \"-x\": a label value must be "
            "empty or must be letters, digits, '-', '_' or '.', starting and ending with a letter "
            "or digit (e.g. 'MyName', 'my.name' or 'app_1')"}},
          {"bad template toleration",
           [](job& j) {
             auto c = std::make_shared<placement_constraints>(j.tasks[1].pod_template.placement());
             c->tolerations[0].op = toleration_operator::exists;
             j.tasks[1].pod_template.constraints = c;
           },
           {"spec.tasks[1].template.spec.tolerations[0].value: Invalid value: \"true\": must be "
            "empty when the operator is Exists"}},
          {"event and exit code",
           [](job& j) { j.policies[0].exit_code = 1; },
           {"spec.policies[0].exitCode: Forbidden: may not be given together with event or "
            "events"}},
          {"neither event nor exit code",
           [](job& j) { j.policies[1].exit_code.reset(); },
           {"spec.policies[1]: Required value: either event, events or exitCode must be given"}},
          {"unknown event",
           [](job& j) { j.tasks[1].policies[0].event = "PodRunning"; },
           {"spec.tasks[1].policies[0].event: Unsupported value: \"PodRunning\": supported "
            "values: \"*\", \"PodFailed\", \"PodEvicted\", \"PodPending\", \"Unknown\", "
            "\"TaskCompleted\", \"TaskFailed\", \"JobUpdated\""}},
          {"internal event",
           [](job& j) { j.policies[0].events[1] = "OutOfSync"; },
           {"spec.policies[0].events[1]: Unsupported value: \"OutOfSync\": supported values: "
            "\"*\", \"PodFailed\", \"PodEvicted\", \"PodPending\", \"Unknown\", "
            "\"TaskCompleted\", \"TaskFailed\", \"JobUpdated\""}},
          {"unknown action",
           [](job& j) { j.policies[1].action = "SyncJob"; },
           {"spec.policies[1].action: Unsupported value: \"SyncJob\": supported values: "
            "\"AbortJob\", \"RestartJob\", \"RestartTask\", \"RestartPod\", "
            "\"TerminateJob\", \"CompleteJob\", \"ResumeJob\""}},
          {"missing action",
           [](job& j) { j.policies[0].action.clear(); },
           {"spec.policies[0].action: Required value: action is required"}},
          {"event in two policies",
           [](job& j) {
             j.policies.push_back(lp{"CompleteJob", "TaskFailed", {}, {}, {}});
           },
           {"spec.policies[2].event: Duplicate value: \"TaskFailed\": an event may be handled by "
            "only one policy"}},
          {"event twice in one policy is fine",
           [](job& j) { j.policies[0].event = "PodEvicted"; },
           {}},
          {"* with another event",
           [](job& j) {
             j.policies.push_back(lp{"CompleteJob", "*", {}, {}, {}});
           },
           {"spec.policies: Invalid value: \"*\": when \"*\" is handled no other event may be "
            "listed"}},
          {"* alone",
           [](job& j) {
             j.policies = {lp{"RestartJob", "*", {}, {}, {}}};
           },
           {}},
          {"exit code 0",
           [](job& j) { j.policies[1].exit_code = 0; },
           {"spec.policies[1].exitCode: Invalid value: 0: must not be 0, which means success"}},
          {"exit code twice",
           [](job& j) {
             j.policies.push_back(lp{"AbortJob", "", {}, 137, {}});
           },
           {"spec.policies[2].exitCode: Duplicate value: 137"}},
          {"negative timeout",
           [](job& j) { j.policies[1].timeout = std::chrono::milliseconds(-1500); },
           {"spec.policies[1].timeout: Invalid value: \"-1.5s\": must be greater than or equal to "
            "0"}},
          {"duplicate plugin",
           [](job& j) {
             j.plugins.push_back({"ssh", {}});
           },
           {"spec.plugins[ssh]: Duplicate value: \"ssh\""}},
          {"empty plugin name",
           [](job& j) {
             j.plugins.push_back({"", {}});
           },
           {"spec.plugins[3]: Required value: a plugin name is required"}},
          {"unknown plugin",
           [](job& j) {
             j.plugins.push_back({"big_plugin", {}});
           },
           {"spec.plugins[big_plugin]: Unsupported value: \"big_plugin\": supported values: "
            "\"env\", \"svc\", \"ssh\", \"tensorflow\", \"mpi\", \"pytorch\", "
            "\"hcclrank\", \"ray\""}},
          {"a plugin flag that does not exist",
           [](job& j) { j.plugins[2].second.push_back("--publish-ready"); },
           {"spec.plugins[svc][1]: Invalid value: \"--publish-ready\": flag provided but not "
            "defined: --publish-ready (the svc plugin knows --publish-not-ready-addresses, "
            "--disable-network-policy, --inject-hosts-env)"}},
          {"a plugin's bool flag with another value",
           [](job& j) { j.plugins[2].second = {"--disable-network-policy=yes"}; },
           {"spec.plugins[svc][0]: Invalid value: \"--disable-network-policy=yes\": invalid "
            "boolean value \"yes\" for flag --disable-network-policy"}},
          {"a plugin's number flag with a word",
           [](job& j) { j.plugins[1].second = {"--ssh-port", "ssh"}; },
           {"spec.plugins[ssh][1]: Invalid value: \"ssh\": invalid value \"ssh\" for flag "
            "--ssh-port: not an integer"}},
          {"a plugin's flag without its value",
           [](job& j) { j.plugins[1].second = {"--ssh-key-file-path"}; },
           {"spec.plugins[ssh][0]: Invalid value: \"--ssh-key-file-path\": flag needs an "
            "argument: --ssh-key-file-path"}},
          {"a plugin argument that is not a flag",
           [](job& j) { j.plugins[0].second = {"true"}; },
           {"spec.plugins[env][0]: Invalid value: \"true\": 'true' is not a flag (flags are "
            "written -name or --name)"}},
          {"an mpi launcher that is no task",
           [](job& j) { j.plugins.push_back({"mpi", {"--master=launcher"}}); },
           {"spec.plugins[mpi]: Invalid value: \"launcher\": the specified mpi master task was "
            "not found: no task of the job is named so (--master names it; \"master\" by "
            "default)"}},
          {"a ray head that is no task",
           [](job& j) { j.plugins.push_back({"ray", {}}); },
           {"spec.plugins[ray]: Invalid value: \"head\": the ray head task was not found: no "
            "task of the job is named so (--head names it; \"head\" by default)"}},
          {"a ray head that is a task", [](job& j) { j.plugins.push_back({"ray", {"--head=ps"}}); },
           {}},
          {"dependsOn a cycle",
           [](job& j) { j.tasks[0].depends_on = {"worker"}; },
           {"spec.tasks: Invalid value: \"dependsOn\": the tasks' dependencies form a cycle; "
            "they must form a directed acyclic graph"}},
          {"dependsOn itself",
           [](job& j) { j.tasks[0].depends_on = {"ps"}; },
           {"spec.tasks: Invalid value: \"dependsOn\": the tasks' dependencies form a cycle; "
            "they must form a directed acyclic graph"}},
          {"dependsOn with an unknown iteration",
           [](job& j) { j.tasks[1].depends_on_iteration = "some"; },
           {"spec.tasks[1].dependsOn.iteration: Invalid value: \"some\": must be \"any\" or "
            "\"all\""}},
          {"dependsOn an unknown task",
           [](job& j) { j.tasks[1].depends_on = {"launcher"}; },
           {"spec.tasks[1].dependsOn.name[0]: Invalid value: \"launcher\": no task of the job "
            "has this name"}},
          {"two volumes at one mountPath",
           [](job& j) { j.volumes[1].mount_path = "/data"; },
           {"spec.volumes[1].mountPath: Duplicate value: \"/data\""}},
          {"a volume without mountPath",
           [](job& j) { j.volumes[0].mount_path.clear(); },
           {"spec.volumes[0].mountPath: Required value: mountPath is required"}},
          {"a volume without a claim",
           [](job& j) { j.volumes[1].has_volume_claim = false; },
           {"spec.volumes[1]: Required value: either volumeClaim or volumeClaimName must be "
            "given"}},
          {"a volume with both claims: the name its controller gave the claim",
           [](job& j) { j.volumes[1].volume_claim_name = "j-pvc-0123456789ab"; }, {}},
          {"minSuccess zero",
           [](job& j) { j.min_success = 0; },
           {"spec.minSuccess: Invalid value: \"0\": must be greater than or equal to 1"}},
          {"negative ttlSecondsAfterFinished",
           [](job& j) { j.ttl_seconds_after_finished = -1; },
           {"spec.ttlSecondsAfterFinished: Invalid value: \"-1\": must be greater than or "
            "equal to 0"}},
      });
}

// Volcano's webhook refuses a volume that names a claim and describes one at a job's creation
// only: afterwards the volume carries the name its controller gave the claim.
TEST(validate_job, creation) {
  job j;
  j.volumes = {{"/data", "training-data", false}, {"/scratch", "", true}};
  EXPECT_EQ(strings(validate_creation(j)), messages{});
  j.volumes[1].volume_claim_name = "other";
  EXPECT_EQ(strings(validate_creation(j)),
            (messages{"spec.volumes[1].volumeClaim: Forbidden: may not be given together with "
                      "volumeClaimName: an existing claim is named, or a new one described"}));
}

} // namespace
} // namespace phalanx::scheduler
