// Codecs: JSON and YAML parsing with limits, every kind's round trip, Volcano's manifests,
// field errors with their paths, times, tables.

#include "api/codec.hpp"
#include "api/json_mapper.hpp"
#include "api/kinds.hpp"
#include "api/table.hpp"
#include "api/tests/test_util.hpp"

#include "api/proto/meta.pb.h"

#include "scheduler/quantity.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <chrono>

namespace phalanx::api {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string example(const std::string& name) {
  return test::read_file(std::string(PHALANX_SOURCE_DIR) + "/examples/" + name);
}

json::value parse_ok(std::string_view text) {
  auto v = parse_json(text);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? *v : json::value{};
}

template <class T>
const T& as(const object& o) {
  return std::get<T>(o);
}

std::string nested(std::size_t depth) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i)
    s += '[';
  for (std::size_t i = 0; i < depth; ++i)
    s += ']';
  return s;
}

scheduler::timestamp at(int64_t seconds) {
  return scheduler::timestamp{std::chrono::seconds(seconds)};
}

// Options for what a user submits: no status, model validation on.
decode_options user() {
  decode_options o;
  o.read_status = false;
  o.default_namespace = "default";
  return o;
}

decode_options expecting(resource_kind k) {
  decode_options o;
  o.expected_kind = k;
  return o;
}

scheduler::object_meta meta(std::string name, std::string ns = "", std::string uid = "",
                            scheduler::timestamp created = {}, uint64_t rv = 0) {
  scheduler::object_meta m;
  m.name = std::move(name);
  m.namespace_name = std::move(ns);
  m.uid = std::move(uid);
  m.creation_time = created;
  m.resource_version = rv;
  return m;
}

// ---------------------------------------------------------------------------------------------
// JSON

TEST(ParseJson, AcceptsDepth32AndRejectsDepth33) {
  EXPECT_TRUE(parse_json(nested(32)).ok());
  auto deep = parse_json(nested(33));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code(), 400);
  EXPECT_NE(deep.error().message.find("nesting deeper than 32 levels"), std::string::npos)
    << deep.error().message;
}

TEST(ParseJson, ReportsWhereTheSyntaxBreaks) {
  auto r = parse_json("{\n  \"a\": 1,\n  \"b\": ]\n}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, status_reason::bad_request);
  EXPECT_NE(r.error().message.find("invalid JSON at line 3"), std::string::npos)
    << r.error().message;
}

TEST(ParseJson, RejectsInvalidUtf8) {
  auto r = parse_json("{\"a\": \"\xff\xfe\"}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("UTF-8"), std::string::npos) << r.error().message;
}

TEST(ParseJson, RejectsTooLargeInput) {
  parse_limits limits;
  limits.max_bytes = 10;
  auto r = parse_json("[1,2,3,4,5,6,7]", limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), 413);
}

TEST(ParseJson, RejectsEmptyTrailingAndNonFinite) {
  EXPECT_FALSE(parse_json("").ok());
  EXPECT_FALSE(parse_json("  \n").ok());
  auto trailing = parse_json("{} x");
  ASSERT_FALSE(trailing.ok());
  EXPECT_NE(trailing.error().message.find("more text after the value"), std::string::npos);
  auto inf = parse_json("[1e400]");
  ASSERT_FALSE(inf.ok());
  EXPECT_NE(inf.error().message.find("out of range"), std::string::npos);
}

TEST(ParseJson, DuplicateKeysKeepTheLast) {
  auto v = parse_ok(R"({"a":1,"a":2})");
  EXPECT_EQ(v.at("a").as_int64(), 2);
}

TEST(Utf8, ValidatesSequences) {
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // Overlong.
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // Surrogate.
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // Beyond U+10FFFF.
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // Truncated.
}

TEST(CanonicalJson, SortsKeysRecursively) {
  auto v = parse_ok(R"({"b":{"y":1,"x":[{"d":1,"c":2}]},"a":true})");
  EXPECT_EQ(canonical_json(v), R"({"a":true,"b":{"x":[{"c":2,"d":1}],"y":1}})");
}

// ---------------------------------------------------------------------------------------------
// YAML

TEST(ParseYaml, ResolvesScalarsAsKubectlDoes) {
  auto docs = parse_yaml(R"(
nulls: [~, null, Null, ]
empty:
bools: [true, False, yes, No, on, OFF]
ints: [0, -12, +7, 0x1f, 0o17, 017, 0b101]
big: 9223372036854775808
floats: [1.5, -.5, 1e3, 2.]
strings: ['true', "1", 1.5.5, 12Mi, 500m, "", abc]
)");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  ASSERT_EQ(docs->size(), 1u);
  const auto& d = docs->front();
  // A trailing comma in a flow sequence adds nothing.
  EXPECT_EQ(json::serialize(d.at("nulls")), "[null,null,null]");
  EXPECT_TRUE(d.at("empty").is_null());
  EXPECT_EQ(json::serialize(d.at("bools")), "[true,false,true,false,true,false]");
  EXPECT_EQ(json::serialize(d.at("ints")), "[0,-12,7,31,15,15,5]");
  EXPECT_TRUE(d.at("big").is_uint64());
  EXPECT_EQ(d.at("floats").at(0).as_double(), 1.5);
  EXPECT_EQ(d.at("floats").at(1).as_double(), -0.5);
  EXPECT_EQ(d.at("floats").at(2).as_double(), 1000.0);
  EXPECT_EQ(d.at("floats").at(3).as_double(), 2.0);
  EXPECT_EQ(json::serialize(d.at("strings")), R"(["true","1","1.5.5","12Mi","500m","","abc"])");
}

TEST(ParseYaml, SplitsDocumentsAndSkipsEmptyOnes) {
  auto docs = parse_yaml("---\na: 1\n---\n---\nb: 2\n...\n");
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(docs->size(), 2u);
}

TEST(ParseYaml, RejectsDuplicateKeys) {
  auto r = parse_yaml("a: 1\nb: 2\na: 3\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("line 3, column 1: duplicate key \"a\""), std::string::npos)
    << r.error().message;
}

TEST(ParseYaml, BoundsAliasExpansion) {
  // A "billion laughs": 9 levels of 10 aliases expand to 10^9 strings.
  std::string bomb = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\","
                     "\"lol\"]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i)
      bomb += std::string(i ? "," : "") + "*" + prev;
    bomb += "]\n";
    prev = c;
  }
  auto start = std::chrono::steady_clock::now();
  auto r = parse_yaml(bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("expands to more than"), std::string::npos) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ParseYaml, RejectsRecursiveAliases) {
  auto r = parse_yaml("a: &a [*a]\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("a recursive alias"), std::string::npos) << r.error().message;
}

TEST(ParseYaml, StopsYamlCppsEndlessDocumentLoop) {
  // On this input yaml-cpp's parser reports empty documents forever.
  std::string input = ",a: &a [\"x\",\"x\",\"x\",\"x\"]\nb: &b 1[*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b]\n"
                      "d: [*c,*c,*c,*c]\n";
  auto start = std::chrono::steady_clock::now();
  auto r = parse_yaml(input);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("more than 1000 documents"), std::string::npos)
    << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ParseYaml, AliasesExpandWithinLimits) {
  auto r = parse_yaml("base: &b {cpu: 1, memory: 2Gi}\nfirst: *b\nsecond: *b\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(json::serialize(r->front().at("second")), R"({"cpu":1,"memory":"2Gi"})");
}

TEST(ParseYaml, LimitsDepthAndRejectsInvalidUtf8) {
  EXPECT_TRUE(parse_yaml(nested(32)).ok());
  auto deep = parse_yaml(nested(33));
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().message.find("nesting deeper than 32"), std::string::npos);
  auto bad = parse_yaml("a: \"\xff\"\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not valid UTF-8"), std::string::npos);
  auto very_deep = parse_yaml(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_FALSE(very_deep.ok());
}

TEST(ParseYaml, ReportsSyntaxErrorsWithTheirPosition) {
  auto r = parse_yaml("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), 400);
  EXPECT_NE(r.error().message.find("invalid YAML at line"), std::string::npos) << r.error().message;
}

TEST(ToYaml, RoundTripsTrickyValues) {
  auto v = parse_ok(R"({
    "strings": ["true", "no", "1", "0x10", "1.5", "", "null", "~", " lead", "trail ", "a: b",
                "- x", "#c", "multi\nline\n", "tab\there", "é€😀", "quote\"s", "back\\slash",
                "{x}", "[y]", "*z", "&w", "!v", "%u", "@t", "`s", "12Mi", "500m", ".inf",
                "---", "...", "cr\r\r", "no final newline\nx", "two\n\n", " lead\nx\n",
                "\nfirst", "bell\u0007", "del\u007f"],
    "numbers": [0, -1, 9223372036854775807, 18446744073709551615, 1.5, -2.25e-5],
    "bools": [true, false], "null": null, "empty_list": [], "empty_map": {},
    "true": "key that reads as a bool", "123": "numeric key", "": "empty key"
  })");
  std::string text = to_yaml(v);
  auto back = parse_yaml(text);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << text;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ(back->front(), v) << text;
}

TEST(ParseManifests, DetectsJsonAndYaml) {
  auto j = parse_manifests(R"([{"a":1},{"b":2}])");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->size(), 2u);
  auto y = parse_manifests("a: 1\n---\nb: 2\n");
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->size(), 2u);
}

// ---------------------------------------------------------------------------------------------
// Times

TEST(Time, FormatsAndParsesRfc3339) {
  auto t = parse_time("2024-05-01T12:34:56Z");
  ASSERT_TRUE(t);
  EXPECT_EQ(format_time(*t), "2024-05-01T12:34:56Z");
  auto offset = parse_time("2024-05-01T14:34:56.250+02:00");
  ASSERT_TRUE(offset);
  EXPECT_EQ(*offset - *t, 250ms);
  EXPECT_EQ(format_time(scheduler::timestamp{}), "");
  for (auto bad : {"", "2024-05-01", "2024-13-01T00:00:00Z", "2024-02-30T00:00:00Z",
                   "2024-05-01T25:00:00Z", "2024-05-01T12:00:00", "2024-05-01T12:00:00.Z",
                   "2024-05-01T12:00:00Zjunk", "2263-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                   "1600-01-01T00:00:00Z"})
    EXPECT_FALSE(parse_time(bad)) << bad;
  // The last representable years still parse.
  EXPECT_TRUE(parse_time("2262-01-01T00:00:00Z"));
  EXPECT_TRUE(parse_time("1678-01-01T00:00:00Z"));
}

TEST(Time, HumanDurationMatchesKubectl) {
  struct row {
    std::chrono::seconds d;
    const char* text;
  };
  for (auto [d, text] : {row{-5s, "<invalid>"}, row{0s, "0s"}, row{59s, "59s"},
                         row{119s, "119s"}, row{120s, "2m"}, row{150s, "2m30s"},
                         row{10min, "10m"}, row{179min, "179m"}, row{3h, "3h"},
                         row{3h + 5min, "3h5m"}, row{8h, "8h"}, row{47h, "47h"}, row{48h, "2d"},
                         row{50h, "2d2h"}, row{8 * 24h, "8d"}, row{800 * 24h, "2y70d"},
                         row{9 * 365 * 24h, "9y"}})
    EXPECT_EQ(human_duration(d), text) << d.count();
}

// ---------------------------------------------------------------------------------------------
// Volcano's manifests

TEST(Examples, TensorflowJob) {
  auto objs = decode_manifests(example("tensorflow-job.yaml"), user());
  ASSERT_TRUE(objs.ok()) << objs.error().message;
  ASSERT_EQ(objs->size(), 1u);
  const auto& j = as<job_object>(objs->front()).job;
  EXPECT_EQ(j.meta.name, "tensorflow-dist-mnist");
  EXPECT_EQ(j.min_available, 3);
  EXPECT_EQ(j.scheduler_name, "volcano");
  EXPECT_EQ(j.queue, "default");
  EXPECT_EQ(j.max_retry, 3);  // Volcano's default.
  ASSERT_EQ(j.plugins.size(), 2u);
  EXPECT_EQ(j.plugins[0].first, "env");
  EXPECT_EQ(j.plugins[1].first, "svc");
  ASSERT_EQ(j.policies.size(), 1u);
  EXPECT_EQ(j.policies[0].event, "PodEvicted");
  EXPECT_EQ(j.policies[0].action, "RestartJob");
  ASSERT_EQ(j.tasks.size(), 2u);
  const auto& ps = j.tasks[0];
  EXPECT_EQ(ps.name, "ps");
  EXPECT_EQ(ps.replicas, 1);
  EXPECT_EQ(ps.pod_template.requests.cpu_milli, 1000);
  EXPECT_EQ(ps.pod_template.requests.memory_bytes, int64_t{2} << 30);
  EXPECT_EQ(ps.pod_template.requests.pods, 1);
  EXPECT_EQ(*ps.pod_template.meta.labels.find("role"), "ps");
  const auto& worker = j.tasks[1];
  EXPECT_EQ(worker.replicas, 2);
  EXPECT_EQ(worker.pod_template.requests.cpu_milli, 2000);
  EXPECT_EQ(worker.pod_template.requests.get("nvidia.com/gpu"), 1);
  ASSERT_EQ(worker.policies.size(), 1u);
  EXPECT_EQ(worker.policies[0].event, "TaskCompleted");
  ASSERT_TRUE(j.spec_json);
  ASSERT_TRUE(worker.pod_template.spec_json);
  // The template keeps what the model does not read.
  EXPECT_NE(worker.pod_template.spec_json.view().find("tfjob-port"), std::string::npos);
  EXPECT_NE(worker.pod_template.spec_json.view().find("\"restartPolicy\":\"OnFailure\""),
            std::string::npos);
}

TEST(Examples, MpiJob) {
  auto objs = decode_manifests(example("mpi-job.yaml"), user());
  ASSERT_TRUE(objs.ok()) << objs.error().message;
  const auto& j = as<job_object>(objs->front()).job;
  EXPECT_EQ(j.max_retry, 2);
  ASSERT_EQ(j.plugins.size(), 2u);
  EXPECT_EQ(j.plugins[0].first, "ssh");
  EXPECT_EQ(j.plugins[1].first, "svc");
  ASSERT_EQ(j.tasks.size(), 2u);
  EXPECT_EQ(j.tasks[0].name, "mpimaster");
  EXPECT_EQ(j.tasks[0].pod_template.requests.cpu_milli, 500);
  EXPECT_EQ(j.tasks[1].replicas, 3);
  EXPECT_EQ(j.tasks[1].pod_template.requests.memory_bytes, int64_t{2} << 30);
}

TEST(Examples, PodGroupAndGangPods) {
  auto pg = decode_manifests(example("podgroup.yaml"), user());
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  ASSERT_EQ(pg->size(), 2u);
  // The PriorityClass the PodGroup names comes first, so the file applies on its own.
  const auto& c = as<priority_class_object>(pg->front()).priority_class;
  EXPECT_EQ(c.meta.name, "high-priority");
  EXPECT_EQ(c.value, 1000);
  const auto& g = as<pod_group_object>(pg->back()).group;
  EXPECT_EQ(g.min_member, 4);
  ASSERT_EQ(g.min_task_member.size(), 2u);
  EXPECT_EQ(g.min_task_member[0], (scheduler::role_minimum{"ps", 1}));
  EXPECT_EQ(g.min_task_member[1], (scheduler::role_minimum{"worker", 3}));
  EXPECT_EQ(g.min_resources.cpu_milli, 7000);
  EXPECT_EQ(g.min_resources.get("nvidia.com/gpu"), 3);
  EXPECT_EQ(g.queue, "research");
  EXPECT_EQ(g.priority_class_name, "high-priority");

  auto pods = decode_manifests(example("gang-pods.yaml"), user());
  ASSERT_TRUE(pods.ok()) << pods.error().message;
  ASSERT_EQ(pods->size(), 2u);
  const auto& ps = as<pod_object>((*pods)[0]).pod;
  EXPECT_EQ(ps.group, "resnet-gang");
  EXPECT_EQ(ps.role, "ps");  // From the annotation.
  EXPECT_FALSE(ps.constraints);
  const auto& worker = as<pod_object>((*pods)[1]).pod;
  EXPECT_EQ(worker.role, "worker");  // From the label.
  // A limit without a request requests the limit, as Kubernetes defaults it.
  EXPECT_EQ(worker.requests.get("nvidia.com/gpu"), 1);
  ASSERT_TRUE(worker.constraints);
  EXPECT_EQ(*worker.constraints->node_selector.find("accelerator"), "nvidia-a100");
  ASSERT_EQ(worker.constraints->tolerations.size(), 1u);
  EXPECT_EQ(worker.constraints->tolerations[0].op, scheduler::toleration_operator::exists);
  EXPECT_EQ(worker.constraints->tolerations[0].effect, scheduler::taint_effect::no_schedule);
}

TEST(Examples, QueuesAndNodes) {
  auto queues = decode_manifests(example("queues.yaml"), user());
  ASSERT_TRUE(queues.ok()) << queues.error().message;
  ASSERT_EQ(queues->size(), 2u);
  const auto& research = as<queue_object>((*queues)[0]).queue;
  EXPECT_EQ(research.weight, 2);
  EXPECT_EQ(research.capability.get("cpu"), 64000);
  EXPECT_EQ(research.capability.get("nvidia.com/gpu"), 8);
  EXPECT_FALSE(research.capability.get("ephemeral-storage"));
  const auto& production = as<queue_object>((*queues)[1]).queue;
  EXPECT_FALSE(production.reclaimable);
  EXPECT_EQ(production.guarantee.cpu_milli, 8000);

  auto nodes = decode_manifests(example("nodes.yaml"), user());
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_EQ(nodes->size(), 3u);
  const auto& cpu = as<node_object>((*nodes)[0]).node;
  EXPECT_EQ(cpu.allocatable.cpu_milli, 31500);
  EXPECT_EQ(cpu.allocatable.memory_bytes, int64_t{125} << 30);
  EXPECT_EQ(cpu.allocatable.pods, 110);
  const auto& gpu = as<node_object>((*nodes)[1]).node;
  ASSERT_EQ(gpu.taints.size(), 1u);
  EXPECT_EQ(gpu.taints[0].effect, scheduler::taint_effect::no_schedule);
  EXPECT_EQ(gpu.allocatable.get("nvidia.com/gpu"), 8);
  EXPECT_TRUE(as<node_object>((*nodes)[2]).node.unschedulable);
}

TEST(Decode, NodeWithoutPodsGetsTheKubeletDefault) {
  auto o = decode_object(
    parse_ok(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},
                 "status":{"capacity":{"cpu":4,"memory":"8Gi"}}})"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  const auto& n = as<node_object>(*o).node;
  EXPECT_EQ(n.allocatable.pods, 110);
  EXPECT_EQ(n.allocatable.cpu_milli, 4000);  // From capacity, a JSON number.
}

// A queue as the apiserver shows it once Volcano's controller (or Kubernetes mode) wrote its
// status: Closing is a Closed queue with PodGroups left, and reads as Closed. It decoded as a
// queue in a state no queue may have, and a watching cache left it out (found by
// KubeMode.AClosedQueueRunsWhatRunsAdmitsNothingNewAndIsClosingUntilItsWorkEnds).
TEST(Decode, AClosingQueueReadsAsClosed) {
  for (const auto& [shown, state] : {std::pair{"Closing", scheduler::queue_state::closed},
                                     std::pair{"Closed", scheduler::queue_state::closed},
                                     std::pair{"Open", scheduler::queue_state::open}}) {
    SCOPED_TRACE(shown);
    auto o = decode_object(parse_ok(
        R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},
            "spec":{"weight":1},"status":{"state":")" + std::string(shown) + R"(","running":1}})"));
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_EQ(as<queue_object>(*o).queue.state, state);
  }
}

TEST(Decode, PodRequestsAreTheEffectiveRequests) {
  auto o = decode_object(parse_ok(R"({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
    "spec": {
      "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}],
      "containers": [
        {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
        {"name": "b", "resources": {"requests": {"cpu": 1.5, "memory": "2Gi"}}}],
      "overhead": {"cpu": "100m"}}})"));
  ASSERT_TRUE(o.ok()) << o.error().message;
  const auto& p = as<pod_object>(*o).pod;
  EXPECT_EQ(p.requests.cpu_milli, 3100);                     // max(2000, 3000) + 100.
  EXPECT_EQ(p.requests.memory_bytes, int64_t{3} << 30);      // max(3Gi, 1Gi).
  EXPECT_EQ(p.requests.pods, 1);
}

TEST(Decode, SlaWaitingTimeIsReadFromTheAnnotation) {
  auto group = [](const char* annotations) {
    return parse_ok(std::string(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
                 "metadata":{"name":"g","namespace":"n","annotations":)") + annotations +
                    R"(},"spec":{"minMember":1}})");
  };
  auto o = decode_object(group(R"({"sla-waiting-time":"1h30m"})"), user());
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(as<pod_group_object>(*o).group.sla_waiting_time, std::chrono::minutes(90));
  auto plain = decode_object(group("{}"), user());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(as<pod_group_object>(*plain).group.sla_waiting_time.count(), 0);
  // What an apiserver sends is not validated: a value that does not read is ignored, as
  // Volcano's sla plugin ignores it.
  decode_options from_apiserver;
  from_apiserver.validate = false;
  auto ignored = decode_object(group(R"({"sla-waiting-time":"soon"})"), from_apiserver);
  ASSERT_TRUE(ignored.ok()) << ignored.error().message;
  EXPECT_EQ(as<pod_group_object>(*ignored).group.sla_waiting_time.count(), 0);
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(RoundTrip, EveryKind) {
  // Pod with status, constraints, group and role.
  pod_object po;
  po.pod.meta = meta("w-0", "team", "u1", at(1700000000), 42);
  po.pod.meta.labels.set("app", "x");
  po.pod.meta.annotations.set("note", "n");
  // Where the gang and the role come from on the wire.
  po.pod.meta.annotations.set(std::string(scheduler::pod_group_annotation), "gang");
  po.pod.meta.annotations.set(std::string(scheduler::task_spec_key), "worker");
  po.pod.group = "gang";
  po.pod.role = "worker";
  po.pod.requests = scheduler::resources{}.with_cpu_milli(1500).with_memory_bytes(3 << 20).with_pods(1);
  po.pod.requests.set("nvidia.com/gpu", 2);
  po.pod.priority = 100;
  po.pod.priority_class_name = "high";
  po.pod.scheduler_name = "volcano";
  auto pc = std::make_shared<scheduler::placement_constraints>();
  pc->node_selector.set("zone", "a");
  pc->required_node_affinity.push_back(
    {{{"gpu", scheduler::selector_operator::gt, {"2"}}}, {{"metadata.name", scheduler::selector_operator::in, {"n1"}}}});
  pc->tolerations.push_back({"k", scheduler::toleration_operator::equal, "v",
                             scheduler::taint_effect::no_execute, 30});
  scheduler::pod_affinity_term apart;
  apart.selector = scheduler::label_selector{};
  apart.topology_key = "kubernetes.io/hostname";
  pc->required_pod_anti_affinity.push_back(apart);
  pc->host_ports.push_back({"UDP", "10.0.0.1", 53});
  scheduler::topology_spread_constraint spread;
  spread.max_skew = 2;
  spread.topology_key = "topology.kubernetes.io/zone";
  spread.selector = scheduler::label_selector{};
  spread.selector->match_labels.set("app", "db");
  spread.min_domains = 3;
  spread.honor_node_taints = true;
  spread.match_label_keys = {"pod-template-hash"};
  pc->topology_spread.push_back(spread);
  po.pod.constraints = pc;
  po.pod.phase = scheduler::pod_phase::running;
  po.pod.node_name = "n1";
  po.pod.start_time = at(1700000100);
  po.conditions.push_back({"PodScheduled", "True", "", "", at(1700000050)});

  node_object no;
  no.node.meta = meta("n1", "", "u2", at(1700000000), 7);
  no.node.meta.labels.set("zone", "a");
  no.node.allocatable = scheduler::resources{}.with_cpu_milli(8000).with_memory_bytes(int64_t{32} << 30).with_pods(110);
  no.node.taints.push_back({"dedicated", "gpu", scheduler::taint_effect::prefer_no_schedule});
  no.node.unschedulable = true;
  no.allocated = scheduler::resources{}.with_cpu_milli(1500).with_pods(1);
  no.pod_count = 1;

  pod_group_object pgo;
  pgo.group.meta = meta("gang", "team", "u3", at(1700000000), 9);
  pgo.group.min_member = 3;
  pgo.group.min_task_member = {{"ps", 1}, {"worker", 2}};
  pgo.group.min_resources = scheduler::resources{}.with_cpu_milli(3000);
  pgo.group.queue = "research";
  pgo.group.priority_class_name = "high";
  pgo.status.phase = scheduler::pod_group_phase::inqueue;
  pgo.status.running = 1;
  pgo.status.failed = 1;
  pgo.status.conditions.push_back({"Unschedulable", "True", "NotEnoughResources",
                                   "3/4 tasks in gang unschedulable", at(1700000200)});

  queue_object qo;
  qo.queue.meta = meta("research", "", "u4", at(1700000000), 3);
  qo.queue.weight = 4;
  qo.queue.capability.set("cpu", 64000);
  qo.queue.capability.set("nvidia.com/gpu", 8);
  qo.queue.guarantee = scheduler::resources{}.with_cpu_milli(2000);
  qo.queue.deserved.set("cpu", 32000);
  qo.queue.reclaimable = false;
  qo.queue.state = scheduler::queue_state::closed;
  qo.queue.parent = "root-q";
  qo.queue.priority = 5;
  qo.status.pending = 2;
  qo.status.running = 1;
  qo.status.allocated = scheduler::resources{}.with_cpu_milli(1500).with_pods(1);
  qo.status.deserved = scheduler::resources{}.with_cpu_milli(32000);

  job_object jo;
  jo.job.meta = meta("tf", "team", "u5", at(1700000000), 11);
  jo.job.queue = "research";
  jo.job.min_available = 3;
  jo.job.max_retry = 5;
  jo.job.scheduler_name = "volcano";
  jo.job.plugins = {{"env", {}}, {"svc", {"--publish-not-ready-addresses"}}};
  jo.job.policies.push_back({"RestartJob", "PodEvicted", {}, std::nullopt, std::nullopt});
  scheduler::job_task t;
  t.name = "worker";
  t.replicas = 3;
  t.min_available = 2;
  t.pod_template.requests = scheduler::resources{}.with_cpu_milli(1000).with_pods(1);
  t.pod_template.meta.labels.set("role", "worker");
  t.policies.push_back({"CompleteJob", "", {}, 3, std::chrono::seconds(90)});
  jo.job.tasks.push_back(t);
  jo.status.phase = scheduler::job_phase::running;
  jo.status.min_available = 3;
  jo.status.running = 3;
  jo.status.retry_count = 1;
  jo.status.version = 2;
  jo.status.running_duration = std::chrono::minutes(5) + std::chrono::milliseconds(250);
  jo.status.tasks.push_back({"worker", 0, 3, 0, 0, 0});
  jo.status.last_transition_time = at(1700000300);
  jo.status.conditions = {{scheduler::job_phase::pending, at(1700000000)},
                          {scheduler::job_phase::restarting, at(1700000300)}};

  priority_class_object pco;
  pco.priority_class.meta = meta("batch-low", "", "u6", at(1700000400), 47);
  pco.priority_class.value = -3;
  pco.priority_class.global_default = true;
  pco.priority_class.description = "below the rest";
  pco.priority_class.preemption = scheduler::preemption_policy::never;

  for (const object& o : std::vector<object>{po, no, pgo, qo, jo, pco}) {
    json::value encoded = encode_object(o);
    SCOPED_TRACE(json::serialize(encoded));
    auto back = decode_object(encoded);
    ASSERT_TRUE(back.ok()) << back.error().message;
    ASSERT_EQ(back->index(), o.index());
    EXPECT_EQ(meta_of(*back), meta_of(o));
    std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const auto& y = std::get<T>(*back);
        if constexpr (std::is_same_v<T, pod_object>) {
          EXPECT_EQ(y.pod.group, x.pod.group);
          EXPECT_EQ(y.pod.role, x.pod.role);
          EXPECT_EQ(y.pod.requests, x.pod.requests);
          EXPECT_EQ(y.pod.priority, x.pod.priority);
          EXPECT_EQ(y.pod.priority_class_name, x.pod.priority_class_name);
          EXPECT_EQ(y.pod.scheduler_name, x.pod.scheduler_name);
          EXPECT_EQ(y.pod.placement(), x.pod.placement());
          EXPECT_EQ(y.pod.phase, x.pod.phase);
          EXPECT_EQ(y.pod.node_name, x.pod.node_name);
          EXPECT_EQ(y.pod.start_time, x.pod.start_time);
          EXPECT_EQ(y.conditions, x.conditions);
        } else if constexpr (std::is_same_v<T, node_object>) {
          EXPECT_EQ(y.node, x.node);
          EXPECT_EQ(y.allocated, x.allocated);
          EXPECT_EQ(y.pod_count, x.pod_count);
        } else if constexpr (std::is_same_v<T, pod_group_object>) {
          EXPECT_EQ(y.group, x.group);
          EXPECT_EQ(y.status, x.status);
        } else if constexpr (std::is_same_v<T, queue_object>) {
          EXPECT_EQ(y.queue, x.queue);
          EXPECT_EQ(y.status, x.status);
        } else if constexpr (std::is_same_v<T, priority_class_object>) {
          EXPECT_EQ(y.priority_class, x.priority_class);
        } else {
          EXPECT_EQ(y.job.queue, x.job.queue);
          EXPECT_EQ(y.job.min_available, x.job.min_available);
          EXPECT_EQ(y.job.max_retry, x.job.max_retry);
          EXPECT_EQ(y.job.scheduler_name, x.job.scheduler_name);
          EXPECT_EQ(y.job.plugins, x.job.plugins);
          EXPECT_EQ(y.job.policies, x.job.policies);
          ASSERT_EQ(y.job.tasks.size(), 1u);
          EXPECT_EQ(y.job.tasks[0].name, "worker");
          EXPECT_EQ(y.job.tasks[0].replicas, 3);
          EXPECT_EQ(y.job.tasks[0].min_available, 2);
          EXPECT_EQ(y.job.tasks[0].policies, x.job.tasks[0].policies);
          EXPECT_EQ(y.job.tasks[0].pod_template.requests, x.job.tasks[0].pod_template.requests);
          EXPECT_EQ(y.job.tasks[0].pod_template.meta.labels, x.job.tasks[0].pod_template.meta.labels);
          EXPECT_EQ(y.status, x.status);
        }
      },
      o);
    // The decoded object encodes the same (its spec now comes from the kept spec_json, whose
    // keys are sorted: compare canonically).
    EXPECT_EQ(canonical_json(encode_object(*back)), canonical_json(encoded));
  }
}

TEST(RoundTrip, PriorityClass) {
  auto v = parse_ok(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
    "metadata":{"name":"batch-low","labels":{"team":"ml"}},"value":-5,"globalDefault":true,
    "description":"below the rest","preemptionPolicy":"Never"})");
  auto o = decode_object(v, user());
  ASSERT_TRUE(o.ok()) << o.error().message;
  const auto& c = std::get<priority_class_object>(*o).priority_class;
  EXPECT_EQ(c.meta.name, "batch-low");
  EXPECT_EQ(c.value, -5);
  EXPECT_TRUE(c.global_default);
  EXPECT_EQ(c.description, "below the rest");
  EXPECT_EQ(c.preemption, scheduler::preemption_policy::never);
  auto encoded = encode_object(*o);
  EXPECT_EQ(encoded.at("apiVersion"), "scheduling.k8s.io/v1");
  EXPECT_EQ(encoded.at("kind"), "PriorityClass");
  EXPECT_EQ(encoded.at("value"), -5);
  EXPECT_EQ(encoded.at("globalDefault"), true);
  EXPECT_EQ(encoded.at("preemptionPolicy"), "Never");
  // Without a policy, the apiserver's default; the value defaults to 0.
  auto plain = decode_object(
      parse_ok(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"p"}})"),
      user());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(encode_object(*plain).at("preemptionPolicy"), "PreemptLowerPriority");
  EXPECT_EQ(encode_object(*plain).at("value"), 0);
}

TEST(RoundTrip, EncodedObjectsConformToTheirSchema) {
  auto objs = decode_manifests(example("tensorflow-job.yaml"), user());
  ASSERT_TRUE(objs.ok()) << objs.error().message;
  json::value v = encode_object(objs->front());
  const auto& o = v.as_object();
  auto it = o.begin();
  EXPECT_EQ(it->key(), "kind");
  EXPECT_EQ((++it)->key(), "apiVersion");
  EXPECT_EQ(o.at("kind"), "Job");
  EXPECT_EQ(o.at("apiVersion"), "batch.volcano.sh/v1alpha1");
}

// Volcano's runningDuration is a metav1.Duration: Go's duration text.
TEST(RoundTrip, AJobsRunningDurationIsAGoDuration) {
  auto objs = decode_manifests(example("tensorflow-job.yaml"), user());
  ASSERT_TRUE(objs.ok()) << objs.error().message;
  auto jo = as<job_object>(objs->front());
  EXPECT_FALSE(encode_object(jo).at("status").as_object().contains("runningDuration"));
  jo.status.running_duration = std::chrono::seconds(90);
  json::value v = encode_object(jo);
  EXPECT_EQ(v.at("status").at("runningDuration"), "1m30s");
  auto back = decode_object(v);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(as<job_object>(*back).status.running_duration, std::chrono::seconds(90));
  v.at("status").as_object()["runningDuration"] = "soon";
  back = decode_object(v);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("status.runningDuration"), std::string::npos)
      << back.error().message;
}

TEST(Encode, PodShowsTheUsersSpecWithTheBindingLaidOver) {
  auto objs = decode_manifests(example("gang-pods.yaml"), user());
  ASSERT_TRUE(objs.ok());
  auto p = as<pod_object>((*objs)[1]);
  p.pod.node_name = "gpu-node-1";
  json::value v = encode_object(p);
  const auto& spec = v.at("spec");
  EXPECT_EQ(spec.at("nodeName"), "gpu-node-1");
  EXPECT_EQ(spec.at("containers").at(0).at("image"), "example/resnet:1.0");
  EXPECT_EQ(spec.at("containers").at(0).at("resources").at("limits").at("nvidia.com/gpu"), 1);
  EXPECT_EQ(v.at("metadata").at("annotations").at("scheduling.k8s.io/group-name"), "resnet-gang");
}

TEST(Encode, JobShowsVolcanosDefaults) {
  auto objs = decode_manifests(
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, namespace: ns}\n"
    "spec:\n  tasks:\n  - {name: t, replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}\n",
    user());
  ASSERT_TRUE(objs.ok()) << objs.error().message;
  json::value v = encode_object(objs->front());
  EXPECT_EQ(v.at("spec").at("queue"), "default");
  EXPECT_EQ(v.at("spec").at("maxRetry"), 3);
  EXPECT_EQ(v.at("spec").at("tasks").at(0).at("template").at("spec").at("containers").at(0).at("image"),
            "i");
}

// dependsOn, volumes, minSuccess and ttlSecondsAfterFinished are read into the job, so that
// admission checks them (a dependsOn cycle, two volumes at one mountPath) as Volcano's webhook
// does; the job's own spec is shown back as given.
TEST(Decode, JobReadsDependsOnVolumesMinSuccessAndTtl) {
  auto objs = decode_manifests(
    "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j, namespace: ns}\n"
    "spec:\n  minSuccess: 2\n  ttlSecondsAfterFinished: 60\n"
    "  volumes:\n  - {mountPath: /data, volumeClaimName: data}\n"
    "  - mountPath: /scratch\n    volumeClaim: {accessModes: [ReadWriteOnce]}\n"
    "  tasks:\n  - {name: a, replicas: 1, template: {spec: {containers: [{name: c, image: i}]}}}\n"
    "  - name: b\n    replicas: 1\n    dependsOn: {name: [a], iteration: any}\n"
    "    template: {spec: {containers: [{name: c, image: i}]}}\n",
    user());
  ASSERT_TRUE(objs.ok()) << objs.error().message;
  const auto& j = as<job_object>(objs->front()).job;
  EXPECT_EQ(j.min_success, 2);
  EXPECT_EQ(j.ttl_seconds_after_finished, 60);
  ASSERT_EQ(j.volumes.size(), 2u);
  EXPECT_EQ(j.volumes[0], (scheduler::job_volume{"/data", "data", false}));
  EXPECT_EQ(j.volumes[1], (scheduler::job_volume{"/scratch", "", true}));
  ASSERT_EQ(j.tasks.size(), 2u);
  EXPECT_TRUE(j.tasks[0].depends_on.empty());
  EXPECT_EQ(j.tasks[1].depends_on, std::vector<std::string>{"a"});
  EXPECT_EQ(j.tasks[1].depends_on_iteration, "any");
  json::value v = encode_object(objs->front());
  EXPECT_EQ(v.at("spec").at("tasks").at(1).at("dependsOn").at("name").at(0), "a");
  EXPECT_EQ(v.at("spec").at("tasks").at(1).at("dependsOn").at("iteration"), "any");
  EXPECT_EQ(v.at("spec").at("volumes").at(1).at("mountPath"), "/scratch");
}

TEST(Encode, ResourceAmountsUseKubernetesSpelling) {
  node_object n;
  n.node.meta.name = "n";
  n.node.allocatable = scheduler::resources{}.with_cpu_milli(2500).with_memory_bytes(int64_t{3} << 30).with_pods(110);
  json::value v = encode_object(n);
  EXPECT_EQ(v.at("status").at("allocatable").at("cpu"), "2500m");
  EXPECT_EQ(v.at("status").at("allocatable").at("memory"), "3Gi");
  EXPECT_EQ(v.at("status").at("allocatable").at("pods"), "110");
}

TEST(Lists, EncodeAndDecode) {
  object_list list;
  list.resource_version = 17;
  queue_object a, b;
  a.queue.meta.name = "a";
  b.queue.meta.name = "b";
  list.items = {a, b};
  json::value v = encode_list(resource_kind::queue, list);
  EXPECT_EQ(v.at("kind"), "QueueList");
  EXPECT_EQ(v.at("metadata").at("resourceVersion"), "17");
  auto back = decode_list(v, resource_kind::queue);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->resource_version, 17u);
  ASSERT_EQ(back->items.size(), 2u);
  EXPECT_EQ(meta_of(back->items[1]).name, "b");
}

TEST(WatchEvents, EncodeAndDecode) {
  node_object n;
  n.node.meta.name = "n";
  n.node.allocatable.pods = 110;
  watch_event e{watch_event::type::modified, n};
  json::value v = encode_watch_event(e);
  EXPECT_EQ(v.at("type"), "MODIFIED");
  auto back = decode_watch_event(v, resource_kind::node);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->kind, watch_event::type::modified);
  api_error gone;
  gone.reason = status_reason::expired;
  gone.message = "too old resource version";
  auto err = decode_watch_event(encode_error_event(gone), resource_kind::node);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.error().reason, status_reason::expired);
}

TEST(Status, EncodeAndDecode) {
  scheduler::field_errors errs{scheduler::invalid_error("spec.minMember", int64_t{-1},
                                                        "must be greater than or equal to 0")};
  api_error e = api_error::invalid("PodGroup.scheduling.volcano.sh", "pg", errs);
  e.kind = "podgroups";
  json::value v = encode_status(e);
  EXPECT_EQ(json::serialize(v),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("PodGroup.scheduling.volcano.sh \"pg\" is invalid: spec.minMember: Invalid value: -1: )"
            R"(must be greater than or equal to 0","reason":"Invalid","details":{"name":"pg",)"
            R"("kind":"podgroups","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: )"
            R"(-1: must be greater than or equal to 0","field":"spec.minMember"}]},"code":422})");
  api_error back = decode_status(v, 422);
  EXPECT_EQ(back, e);
}

// ---------------------------------------------------------------------------------------------
// Field errors

struct field_case {
  const char* name;
  const char* json;
  const char* field;    // The first cause's field.
  const char* message;  // A part of the first cause's message.
};

void PrintTo(const field_case& c, std::ostream* os) {
  *os << c.name;
}

class FieldErrors : public ::testing::TestWithParam<field_case> {};

TEST_P(FieldErrors, NameTheFieldAndTheRule) {
  const auto& c = GetParam();
  auto v = parse_json(c.json);
  ASSERT_TRUE(v.ok()) << v.error().message;
  auto o = decode_object(*v, user());
  ASSERT_FALSE(o.ok()) << "decoded: " << c.json;
  const auto& e = o.error();
  EXPECT_EQ(e.code(), 422) << e.message;
  ASSERT_FALSE(e.causes.empty()) << e.message;
  EXPECT_EQ(e.causes[0].field, c.field) << e.message;
  EXPECT_NE(e.causes[0].message.find(c.message), std::string::npos)
    << "cause: " << e.causes[0].to_string();
  EXPECT_NE(e.message.find(c.field), std::string::npos) << e.message;
}

#define JOB(spec) \
  R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j","namespace":"n"},"spec":)" spec "}"
#define POD(spec) \
  R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"},"spec":)" spec "}"
#define TASK(replicas) R"({"name":"t1","replicas":)" replicas R"(,"template":{"spec":{"containers":[{"name":"c"}]}}})"

INSTANTIATE_TEST_SUITE_P(
  Codec, FieldErrors,
  ::testing::Values(
    field_case{"replicas_not_integer", JOB(R"({"tasks":[)" TASK("1") "," R"({"name":"t2","replicas":"three"}]})"),
               "spec.tasks[1].replicas", R"(Invalid value: "three": must be an integer)"},
    field_case{"replicas_fraction", JOB(R"({"tasks":[)" TASK("1.5") "]}"), "spec.tasks[0].replicas",
               "Invalid value: 1.5: must be an integer"},
    field_case{"sla_waiting_time_not_a_duration",
               R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g","namespace":"n","annotations":{"sla-waiting-time":"2 days"}},"spec":{"minMember":1}})",
               "metadata.annotations[sla-waiting-time]",
               R"(Invalid value: "2 days": unknown unit " days" in duration "2 days")"},
    field_case{"job_sla_waiting_time_not_positive",
               R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j","namespace":"n","annotations":{"sla-waiting-time":"-5m"}},"spec":{"tasks":[)" TASK("1") "]}}",
               "metadata.annotations[sla-waiting-time]", "must be a duration above zero"},
    field_case{"min_member_out_of_range",
               R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g","namespace":"n"},"spec":{"minMember":3000000000}})",
               "spec.minMember", "must be an integer between -2147483648 and 2147483647"},
    field_case{"labels_not_object",
               R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":["a"]}})",
               "metadata.labels", "must be an object"},
    field_case{"label_value_not_string",
               R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"a":1}}})",
               "metadata.labels[a]", "must be a string"},
    field_case{"unschedulable_not_bool",
               R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"unschedulable":"yes"}})",
               "spec.unschedulable", "must be a boolean"},
    field_case{"cpu_negative", POD(R"({"containers":[{"name":"c","resources":{"requests":{"cpu":"-1"}}}]})"),
               "spec.containers[0].resources.requests[cpu]",
               R"(Invalid value: "-1": must be greater than or equal to 0)"},
    field_case{"memory_two_dots", POD(R"({"containers":[{"name":"c","resources":{"requests":{"memory":"1.5.5"}}}]})"),
               "spec.containers[0].resources.requests[memory]", R"(Invalid value: "1.5.5")"},
    field_case{"cpu_beyond_int64", POD(R"({"containers":[{"name":"c","resources":{"limits":{"cpu":"9223372036854775808"}}}]})"),
               "spec.containers[0].resources.limits[cpu]", R"(Invalid value: "9223372036854775808")"},
    field_case{"memory_number_beyond_int64", POD(R"({"containers":[{"name":"c","resources":{"requests":{"memory":9223372036854775808}}}]})"),
               "spec.containers[0].resources.requests[memory]", R"(Invalid value: "9223372036854775808")"},
    field_case{"memory_beyond_2_53", POD(R"({"containers":[{"name":"c","resources":{"requests":{"memory":"10P"}}}]})"),
               "spec.containers[0].resources.requests[memory]", "(2^53, the largest amount accepted)"},
    field_case{"bad_resource_name", POD(R"({"containers":[{"name":"c","resources":{"requests":{"bad name!":"1"}}}]})"),
               "spec.containers[0].resources.requests[bad name!]", R"(Invalid value: "bad name!")"},
    field_case{"toleration_operator", POD(R"({"containers":[{"name":"c"}],"tolerations":[{"key":"k","operator":"Maybe"}]})"),
               "spec.tolerations[0].operator", R"(Unsupported value: "Maybe": supported values: "Exists", "Equal")"},
    field_case{"affinity_operator", POD(R"({"containers":[{"name":"c"}],"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Like","values":["x"]}]}]}}}})"),
               "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator",
               R"(Unsupported value: "Like")"},
    field_case{"taint_effect",
               R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}})",
               "spec.taints[0].effect", R"(Unsupported value: "Sometimes")"},
    field_case{"policy_timeout", JOB(R"({"tasks":[)" TASK("1") R"(],"policies":[{"event":"PodEvicted","action":"RestartJob","timeout":"soon"}]})"),
               "spec.policies[0].timeout", R"(Invalid value: "soon")"},
    field_case{"termination_grace_negative", POD(R"({"containers":[{"name":"c"}],"terminationGracePeriodSeconds":-1})"),
               "spec.terminationGracePeriodSeconds", "Invalid value: -1: must be greater than or equal to 0"},
    field_case{"termination_grace_text", JOB(R"({"tasks":[{"name":"t1","replicas":1,"template":{"spec":{"containers":[{"name":"c"}],"terminationGracePeriodSeconds":"30s"}}}]})"),
               "spec.tasks[0].template.spec.terminationGracePeriodSeconds", "must be an integer"},
    field_case{"pod_name", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"Bad_Name","namespace":"n"},"spec":{"containers":[{"name":"c"}]}})",
               "metadata.name", R"(Invalid value: "Bad_Name")"},
    field_case{"min_available_above_replicas", JOB(R"({"minAvailable":5,"tasks":[)" TASK("2") "]}"),
               "spec.minAvailable", "must be less than or equal to"},
    field_case{"queue_weight_zero",
               R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"},"spec":{"weight":0}})",
               "spec.weight", "Invalid value: 0"},
    field_case{"pod_group_negative_min_member",
               R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g","namespace":"n"},"spec":{"minMember":-1}})",
               "spec.minMember", "Invalid value: -1: must be greater than or equal to 0"},
    field_case{"priority_class_value_above_user_range",
               R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"huge"},"value":1000000001})",
               "value", "Forbidden: maximum allowed value of a user defined priority is 1000000000"},
    field_case{"priority_class_reserved_prefix",
               R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-mine"},"value":5})",
               "metadata.name",
               "Forbidden: priority class names with 'system-' prefix are reserved for system use "
               "only. error: system-mine is not a known system priority class"},
    field_case{"priority_class_system_value",
               R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-node-critical"},"value":5})",
               "metadata.name", "value of system-node-critical PriorityClass must be 2000001000"},
    field_case{"priority_class_policy",
               R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"c"},"value":5,"preemptionPolicy":"Sometimes"})",
               "preemptionPolicy",
               R"(Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never")"},
    field_case{"priority_class_value_not_integer",
               R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"c"},"value":"high"})",
               "value", "must be an integer"},
    field_case{"priority_class_namespaced",
               R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"c","namespace":"n"},"value":5})",
               "metadata.namespace", "not allowed on this type"}),
  [](const ::testing::TestParamInfo<field_case>& info) { return std::string(info.param.name); });

TEST(FieldErrors, ServerSetFieldsAreCheckedWhenRead) {
  auto v = parse_ok(
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","creationTimestamp":"yesterday"}})");
  auto o = decode_object(v);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().causes.at(0).to_string(),
            "metadata.creationTimestamp: Invalid value: \"yesterday\": must be an RFC 3339 time "
            "such as 2024-05-01T12:00:00Z");
  // What a user submits has them ignored.
  EXPECT_TRUE(decode_object(v, user()).ok());
}

TEST(FieldErrors, EveryBadFieldIsReportedAtOnce) {
  auto v = parse_ok(JOB(R"({"maxRetry":"x","tasks":[{"name":"t","replicas":"y","minAvailable":[]}]})"));
  auto o = decode_object(v, user());
  ASSERT_FALSE(o.ok());
  ASSERT_EQ(o.error().causes.size(), 3u) << o.error().message;
  EXPECT_EQ(o.error().message.front(), 'J');
  EXPECT_NE(o.error().message.find("is invalid: ["), std::string::npos) << o.error().message;
}

TEST(Decode, KindAndVersionErrorsAreBadRequests) {
  for (auto [body, text] : std::vector<std::pair<std::string, std::string>>{
         {R"({"kind":"Pod"})", "Object 'apiVersion' is missing"},
         {R"({"apiVersion":"v1"})", "Object 'Kind' is missing"},
         {R"({"apiVersion":"apps/v1","kind":"Deployment"})",
          R"(no kind "Deployment" is registered for version "apps/v1")"},
         {R"({"apiVersion":"scheduling.volcano.sh/v1","kind":"PodGroup"})",
          R"(no kind "PodGroup" is registered for version "scheduling.volcano.sh/v1")"},
         {R"([1])", "must be a JSON object"}}) {
    auto o = decode_object(parse_ok(body));
    ASSERT_FALSE(o.ok()) << body;
    EXPECT_EQ(o.error().code(), 400) << body;
    EXPECT_NE(o.error().message.find(text), std::string::npos) << o.error().message;
  }
  auto mismatch = decode_object(parse_ok(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}})"),
                                expecting(resource_kind::pod));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.error().message.find("does not match the request"), std::string::npos);
}

TEST(Decode, UnknownFieldsAreIgnored) {
  auto o = decode_object(parse_ok(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n",
    "managedFields":[{"x":1}]},"spec":{"podCIDR":"10.0.0.0/24","futureField":{"a":[1]}},"extra":1})"));
  EXPECT_TRUE(o.ok()) << (o.ok() ? "" : o.error().message);
}

// ---------------------------------------------------------------------------------------------
// Tables

TEST(Tables, ColumnsPerKind) {
  auto names = [](resource_kind k, int priority) {
    std::string out;
    for (const auto& c : table_columns(k)) {
      if (c.priority != priority)
        continue;
      if (!out.empty())
        out += ' ';
      std::string upper(c.name);
      for (auto& ch : upper)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      out += upper;
    }
    return out;
  };
  EXPECT_EQ(names(resource_kind::pod_group, 0), "NAME STATUS MINMEMBER RUNNINGS AGE");
  EXPECT_EQ(names(resource_kind::pod_group, 1), "QUEUE");
  EXPECT_EQ(names(resource_kind::queue, 0), "NAME AGE");
  EXPECT_EQ(names(resource_kind::queue, 1), "WEIGHT STATE");
  EXPECT_EQ(names(resource_kind::job, 0), "NAME STATUS MINAVAILABLE RUNNINGS AGE");
  EXPECT_EQ(names(resource_kind::job, 1), "QUEUE");
  EXPECT_EQ(names(resource_kind::pod, 0), "NAME READY STATUS RESTARTS AGE");
  EXPECT_EQ(names(resource_kind::pod, 1), "IP NODE NOMINATED NODE READINESS GATES");
  EXPECT_EQ(names(resource_kind::node, 0), "NAME STATUS ROLES AGE VERSION");
}

TEST(Tables, CellsAndSchema) {
  pod_group_object pg;
  pg.group.meta = meta("g", "ns", "", at(1000));
  pg.group.min_member = 4;
  pg.group.queue = "research";
  pg.status.phase = scheduler::pod_group_phase::running;
  pg.status.running = 4;
  table_options opts;
  opts.now = at(1000 + 150);
  json::value t = encode_table(resource_kind::pod_group, {pg}, 5, opts);
  EXPECT_EQ(json::serialize(t.at("rows").at(0).at("cells")),
            R"(["g","Running",4,4,"2m30s","research"])");
  EXPECT_EQ(t.at("rows").at(0).at("object").at("metadata").at("namespace"), "ns");
  // The table is what the Table schema says.
  v1::Table msg;
  scheduler::field_errors errs;
  json_to_message(t, msg, "", errs);
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(msg.column_definitions_size(), 6);
  EXPECT_EQ(msg.rows(0).cells_size(), 6);

  node_object n;
  n.node.meta.name = "n1";
  n.node.meta.labels.set("node-role.kubernetes.io/worker", "");
  n.node.unschedulable = true;
  auto cells = table_cells(n, at(0));
  EXPECT_EQ(cells[1], "Ready,SchedulingDisabled");
  EXPECT_EQ(cells[2], "worker");

  // A pod's STATUS as kubectl prints it: how a finished pod's containers ended.
  pod_object p;
  p.pod.meta.name = "p";
  p.pod.phase = scheduler::pod_phase::succeeded;
  EXPECT_EQ(table_cells(p, at(0))[2], "Completed");
  p.pod.phase = scheduler::pod_phase::failed;
  EXPECT_EQ(table_cells(p, at(0))[2], "Error");
  p.termination = scheduler::pod_termination{at(0), 30};
  EXPECT_EQ(table_cells(p, at(0))[2], "Terminating");
}

} // namespace
} // namespace phalanx::api
