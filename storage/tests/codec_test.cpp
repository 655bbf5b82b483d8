// Codec round trips (decode(encode(x)) == x) for table-driven and seeded random objects of every
// kind, sharing of decoded constraints and spec_json, and decode errors that name the field.

#include "storage/codec.hpp"

#include "records.pb.h"
#include "scheduler/sla.hpp"
#include "scheduler/tests/builders.hpp"
#include "storage/tests/test_support.hpp"

#include <gtest/gtest.h>

#include <set>

namespace phalanx::storage {
namespace {

using namespace std::chrono_literals;
using testing::diff;
using testing::random_objects;
namespace sch = phalanx::scheduler;
namespace st = phalanx::scheduler::testing;

template <class T>
T round_trip(const T& x, record_decoder& d);

template <>
sch::node round_trip(const sch::node& x, record_decoder& d) {
  auto r = d.decode_node(encode(x));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : sch::node{};
}
template <>
queue_record round_trip(const queue_record& x, record_decoder& d) {
  auto r = d.decode_queue(encode(x));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : queue_record{};
}
template <>
pod_group_record round_trip(const pod_group_record& x, record_decoder& d) {
  auto r = d.decode_pod_group(encode(x));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : pod_group_record{};
}
template <>
sch::pod round_trip(const sch::pod& x, record_decoder& d) {
  auto r = d.decode_pod(encode(x));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : sch::pod{};
}
template <>
sch::priority_class round_trip(const sch::priority_class& x, record_decoder& d) {
  auto r = d.decode_priority_class(encode(x));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : sch::priority_class{};
}
template <>
job_record round_trip(const job_record& x, record_decoder& d) {
  auto r = d.decode_job(encode(x));
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? *r : job_record{};
}

template <class T>
void expect_round_trip(const T& x) {
  record_decoder d;
  auto y = round_trip(x, d);
  EXPECT_EQ(diff(x, y), "");
  // Encoding is deterministic: the decoded object encodes to the same bytes.
  EXPECT_EQ(encode(x), encode(y));
}

TEST(RecordKind, EveryKindHasAColumnFamilyName) {
  std::set<std::string_view> names;
  for (int k = 0; k <= int(record_kind_last); ++k) {
    auto name = to_string(static_cast<record_kind>(k));
    EXPECT_NE(name, "unknown") << k;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size_t(record_kind_last) + 1);
  EXPECT_EQ(to_string(record_kind::pod_group), "podgroups");
}

TEST(ObjectKey, NamespacedAndClusterScoped) {
  EXPECT_EQ(object_key("default", "tf-1"), "default/tf-1");
  EXPECT_EQ(object_key("", "node-1"), "node-1");
}

// ---------------------------------------------------------------------------------------------
// Table-driven round trips

sch::placement_constraints gpu_constraints() {
  sch::placement_constraints c;
  c.node_selector.set("accelerator", "a100");
  c.node_selector.set("zone", "eu-1a");
  sch::node_selector_term term;
  term.match_expressions.push_back({"gpu-count", sch::selector_operator::gt, {"3"}});
  term.match_expressions.push_back({"pool", sch::selector_operator::not_in, {"spot", "preempt"}});
  term.match_fields.push_back({"metadata.name", sch::selector_operator::in, {"n1", "n2"}});
  c.required_node_affinity.push_back(term);
  c.required_node_affinity.push_back({{{"ssd", sch::selector_operator::exists, {}}}, {}});
  c.preferred_node_affinity.push_back({70, term});
  c.preferred_node_affinity.push_back({1, {}});  // An empty preference: matches no node.
  c.tolerations.push_back(
      {"nvidia.com/gpu", sch::toleration_operator::exists, "", sch::taint_effect::no_schedule, {}});
  c.tolerations.push_back(
      {"dedicated", sch::toleration_operator::equal, "ml", std::nullopt, int64_t{300}});
  c.tolerations.push_back({"", sch::toleration_operator::exists, "", std::nullopt, std::nullopt});
  c.scheduling_gates = {"kueue.x-k8s.io/admission", "example.com/b"};
  sch::label_selector ps;
  ps.match_labels.set("app", "tf");
  ps.match_labels.set("role", "ps");
  ps.match_expressions.push_back({"tier", sch::selector_operator::not_in, {"cache", "batch"}});
  sch::pod_affinity_term near_ps;
  near_ps.selector = ps;
  near_ps.namespaces = {"ml", "shared"};
  near_ps.topology_key = "topology.kubernetes.io/zone";
  c.required_pod_affinity.push_back(near_ps);
  sch::pod_affinity_term apart;  // Every pod of every namespace, one per node.
  apart.selector = sch::label_selector{};
  apart.namespace_selector = sch::label_selector{};
  apart.topology_key = "kubernetes.io/hostname";
  c.required_pod_anti_affinity.push_back(apart);
  sch::pod_affinity_term nothing;  // A nil labelSelector: matches no pod.
  nothing.topology_key = "kubernetes.io/hostname";
  c.preferred_pod_affinity.push_back({100, nothing});
  sch::label_selector team;
  team.match_expressions.push_back({"team", sch::selector_operator::exists, {}});
  sch::pod_affinity_term spread;
  spread.selector = ps;
  spread.namespace_selector = team;
  spread.topology_key = "kubernetes.io/hostname";
  c.preferred_pod_anti_affinity.push_back({1, spread});
  c.preferred_pod_anti_affinity.push_back({50, near_ps});
  c.host_ports.push_back({"TCP", "", 8080});
  c.host_ports.push_back({"UDP", "", 8080});
  c.host_ports.push_back({"SCTP", "10.0.0.1", 9000});
  sch::topology_spread_constraint by_zone;  // Every default.
  by_zone.topology_key = "topology.kubernetes.io/zone";
  by_zone.selector = ps;
  c.topology_spread.push_back(by_zone);
  sch::topology_spread_constraint by_node;  // Every field away from its default.
  by_node.max_skew = 3;
  by_node.topology_key = "kubernetes.io/hostname";
  by_node.do_not_schedule = false;
  by_node.selector = team;
  by_node.min_domains = 4;
  by_node.honor_node_affinity = false;
  by_node.honor_node_taints = true;
  by_node.match_label_keys = {"pod-template-hash", "example.com/revision"};
  c.topology_spread.push_back(by_node);
  return c;
}

TEST(CodecTable, Nodes) {
  expect_round_trip(sch::node{});
  expect_round_trip(st::make_node("n1").cpu("64").memory("512Gi").gpu(8).obj());
  sch::node tainted = st::make_node("n2")
                          .cpu("500m")
                          .ephemeral("100Gi")
                          .extended("hugepages-2Mi", 1 << 20)
                          .label("zone", "eu-1a")
                          .taint("nvidia.com/gpu", "present", sch::taint_effect::no_schedule)
                          .taint("maintenance", "", sch::taint_effect::no_execute)
                          .taint("spot", "true", sch::taint_effect::prefer_no_schedule)
                          .unschedulable()
                          .obj();
  tainted.meta.resource_version = 42;
  tainted.meta.creation_time = sch::timestamp{1'700'000'000'123'456'789ns};
  expect_round_trip(tainted);
}

TEST(CodecTable, Queues) {
  expect_round_trip(queue_record{});
  queue_record q;
  q.queue.meta.name = "research";
  q.queue.weight = 65535;
  ASSERT_TRUE(q.queue.capability.set("cpu", 100'000));
  ASSERT_TRUE(q.queue.capability.set("nvidia.com/gpu", 16));
  q.queue.guarantee = st::res("cpu", "10", "memory", "64Gi");
  ASSERT_TRUE(q.queue.deserved.set("memory", int64_t{1} << 40));
  q.queue.reclaimable = false;
  q.queue.state = sch::queue_state::closing;
  q.queue.parent = "root-ml";
  q.queue.priority = -7;
  expect_round_trip(q);
}

TEST(CodecTable, PriorityClasses) {
  expect_round_trip(sch::priority_class{});
  sch::priority_class c;
  c.meta.name = "batch-low";
  c.value = -2147483647 - 1;
  c.global_default = true;
  c.description = "not \xff UTF-8";  // Bytes, not UTF-8: records keep them exactly.
  c.preemption = sch::preemption_policy::never;
  expect_round_trip(c);
  c.value = 2000001000;
  c.preemption = sch::preemption_policy::preempt_lower_priority;
  expect_round_trip(c);
}

TEST(CodecTable, PodGroups) {
  expect_round_trip(pod_group_record{});
  st::gang g = st::make_gang("tf-1", 5)
                   .queue("research")
                   .priority(1000)
                   .min_resources(st::res("cpu", "20", "nvidia.com/gpu", "4"))
                   .task("ps", 1, st::res("cpu", "2"), 1)
                   .task("worker", 4, st::res("cpu", "4"), 4)
                   .created(sch::timestamp{5s})
                   .obj();
  g.group.priority_class_name = "high";
  expect_round_trip(pod_group_record{g.group});
  // sla_waiting_time is not a field of the record: it is read again from its annotation.
  g.group.meta.annotations.set(sch::sla_waiting_time_key, "90m");
  g.group.sla_waiting_time = std::chrono::minutes(90);
  expect_round_trip(pod_group_record{g.group});
}

TEST(CodecTable, Pods) {
  expect_round_trip(sch::pod{});
  sch::pod bound = st::make_pod("w-0")
                       .cpu("1500m")
                       .memory("3Gi")
                       .gpu(1)
                       .role("worker")
                       .group("tf-1")
                       .priority(-5)
                       .selector("zone", "eu-1a")
                       .tolerate("dedicated", "ml")
                       .bound_to("node-17", sch::pod_phase::succeeded)
                       .obj();
  bound.start_time = sch::timestamp{10s};
  bound.finish_time = sch::timestamp{70s};
  bound.scheduler_name = "phalanx";
  bound.priority_class_name = "batch-low";
  bound.spec_json = sch::shared_string(R"({"containers":[{"name":"main"}]})");
  expect_round_trip(bound);

  // Null and empty constraints are different values and both survive. (A spec_json is a
  // shared_string: empty is its only "none", and the API never keeps an empty spec.)
  sch::pod empty_not_null = st::make_pod("e").obj();
  empty_not_null.constraints = std::make_shared<const sch::placement_constraints>();
  record_decoder d;
  auto back = round_trip(empty_not_null, d);
  ASSERT_NE(back.constraints, nullptr);
  EXPECT_TRUE(back.constraints->empty());
  EXPECT_TRUE(back.spec_json.empty());
  auto null_back = round_trip(st::make_pod("n").obj(), d);
  EXPECT_EQ(null_back.constraints, nullptr);
  EXPECT_TRUE(null_back.spec_json.empty());

  sch::pod affinity = st::make_pod("a").obj();
  affinity.constraints = std::make_shared<const sch::placement_constraints>(gpu_constraints());
  expect_round_trip(affinity);
}

TEST(CodecTable, AnAbsentSelectorStaysApartFromAnEmptyOne) {
  sch::placement_constraints c;
  sch::pod_affinity_term absent;
  absent.topology_key = "kubernetes.io/hostname";
  sch::pod_affinity_term empty = absent;
  empty.selector = sch::label_selector{};
  empty.namespace_selector = sch::label_selector{};
  c.required_pod_anti_affinity = {absent, empty};
  sch::pod p = st::make_pod("p").obj();
  p.constraints = std::make_shared<const sch::placement_constraints>(c);
  record_decoder d;
  auto back = round_trip(p, d);
  ASSERT_NE(back.constraints, nullptr);
  const auto& terms = back.constraints->required_pod_anti_affinity;
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_FALSE(terms[0].selector);
  EXPECT_FALSE(terms[0].namespace_selector);
  ASSERT_TRUE(terms[1].selector);
  EXPECT_EQ(*terms[1].selector, sch::label_selector{});
  ASSERT_TRUE(terms[1].namespace_selector);
  EXPECT_EQ(*terms[1].namespace_selector, sch::label_selector{});
}

TEST(CodecTable, ASpreadConstraintKeepsItsAbsentsApartFromItsEmpties) {
  sch::topology_spread_constraint absent;  // No selector, no minDomains, no keys.
  absent.topology_key = "kubernetes.io/hostname";
  sch::topology_spread_constraint empty = absent;
  empty.selector = sch::label_selector{};
  empty.min_domains = 0;  // Invalid, but a value: storage keeps what it is given.
  sch::placement_constraints c;
  c.topology_spread = {absent, empty};
  sch::pod p = st::make_pod("p").obj();
  p.constraints = std::make_shared<const sch::placement_constraints>(c);
  record_decoder d;
  auto back = round_trip(p, d);
  ASSERT_NE(back.constraints, nullptr);
  const auto& spread = back.constraints->topology_spread;
  ASSERT_EQ(spread.size(), 2u);
  EXPECT_FALSE(spread[0].selector);
  EXPECT_FALSE(spread[0].min_domains);
  ASSERT_TRUE(spread[1].selector);
  EXPECT_EQ(*spread[1].selector, sch::label_selector{});
  EXPECT_EQ(spread[1].min_domains, std::optional<int32_t>(0));
  // The model's defaults (DoNotSchedule, nodeAffinityPolicy Honor) are not proto3's.
  EXPECT_TRUE(spread[0].do_not_schedule);
  EXPECT_TRUE(spread[0].honor_node_affinity);
  EXPECT_FALSE(spread[0].honor_node_taints);
  EXPECT_EQ(back.constraints->topology_spread, c.topology_spread);
}

TEST(CodecTable, EveryEnumValueSurvives) {
  for (int e = 0; e <= int(sch::pod_phase_last); ++e) {
    sch::pod p = st::make_pod("p").obj();
    p.phase = static_cast<sch::pod_phase>(e);
    expect_round_trip(p);
  }
  for (int e = 0; e <= int(sch::queue_state_last); ++e) {
    queue_record q;
    q.queue.state = static_cast<sch::queue_state>(e);
    expect_round_trip(q);
  }
  for (int e = 0; e <= int(sch::job_phase_last); ++e) {
    job_record j;
    j.status.phase = static_cast<sch::job_phase>(e);
    expect_round_trip(j);
  }
  for (int e = 0; e <= int(sch::taint_effect_last); ++e) {
    sch::node n;
    n.taints.push_back({"k", "v", static_cast<sch::taint_effect>(e)});
    expect_round_trip(n);
  }
  for (int op = 0; op <= int(sch::selector_operator_last); ++op) {
    sch::placement_constraints c;
    c.required_node_affinity.push_back(
        {{{"k", static_cast<sch::selector_operator>(op), {"1"}}}, {}});
    for (int t = 0; t <= int(sch::toleration_operator_last); ++t)
      c.tolerations.push_back({"k", static_cast<sch::toleration_operator>(t), "v", {}, {}});
    sch::pod p;
    p.constraints = std::make_shared<const sch::placement_constraints>(c);
    expect_round_trip(p);
  }
}

TEST(CodecTable, Jobs) {
  expect_round_trip(job_record{});
  job_record r;
  auto& j = r.job;
  j.meta.name = "tf-job";
  j.meta.namespace_name = "ml";
  j.meta.uid = "7f3c";
  j.meta.labels.set(std::string(sch::queue_name_key), "research");
  j.queue = "research";
  j.scheduler_name = "phalanx";
  j.priority_class_name = "high";
  j.priority = 1000;
  j.min_available = 3;
  j.max_retry = 5;
  auto constraints = std::make_shared<const sch::placement_constraints>(gpu_constraints());
  for (std::string role : {"ps", "worker"}) {
    sch::job_task t;
    t.name = role;
    t.replicas = role == "ps" ? 1 : 4;
    if (role == "worker")
      t.min_available = 2;
    t.pod_template = st::make_pod("").cpu("2").memory("4Gi").role(role).obj();
    t.pod_template.constraints = constraints;
    t.pod_template.spec_json = sch::shared_string("{\"image\":\"tf:2\"}");
    t.policies.push_back({"RestartJob", "PodFailed", {}, std::nullopt, std::nullopt});
    t.policies.push_back({"CompleteJob", "", {"TaskCompleted"}, 0, sch::duration{30s}});
    if (role == "ps")
      t.max_retry = 1;
    else {
      t.depends_on = {"ps"};
      t.depends_on_iteration = "any";
    }
    j.tasks.push_back(std::move(t));
  }
  j.policies.push_back({"AbortJob", "PodEvicted", {"Unknown", "OutOfSync"}, {}, {}});
  j.plugins = {{"env", {}}, {"ssh", {}}, {"svc", {"--publish-not-ready-addresses"}}};
  j.volumes = {{"/data", "training-data", false}, {"/scratch", "", true}};
  j.min_success = 3;
  j.ttl_seconds_after_finished = 0;
  j.suspended = true;
  j.spec_json = sch::shared_string("{\"tasks\":[]}");
  j.expansion_version = 41;
  r.status.phase = sch::job_phase::restarting;
  r.status.reason = "PodFailed";
  r.status.message = "worker-2 exited with 137";
  r.status.last_transition_time = sch::timestamp{99s};
  r.status.min_available = 3;
  r.status.running = 2;
  r.status.failed = 1;
  r.status.retry_count = 2;
  r.status.version = 3;
  r.status.running_duration = sch::duration{90500ms};
  r.status.tasks = {{"ps", 0, 1, 0, 0, 0}, {"worker", 1, 1, 0, 1, 1}};
  r.status.conditions = {{sch::job_phase::pending, sch::timestamp{10s}},
                         {sch::job_phase::restarting, sch::timestamp{99s}}};
  expect_round_trip(r);
}

// ---------------------------------------------------------------------------------------------
// Randomized round trips

constexpr int random_rounds = 400;

template <class Make>
void random_round_trips(uint64_t seed, Make make) {
  random_objects gen(seed);
  record_decoder d; // One decoder for all: reuse of its buffers must not leak between records.
  for (int i = 0; i < random_rounds; ++i) {
    auto x = make(gen);
    auto y = round_trip(x, d);
    ASSERT_EQ(diff(x, y), "") << "seed " << seed << " round " << i;
    ASSERT_EQ(encode(x), encode(y)) << "seed " << seed << " round " << i;
  }
}

TEST(CodecRandom, Nodes) {
  random_round_trips(11, [](random_objects& g) { return g.node(); });
}
TEST(CodecRandom, Queues) {
  random_round_trips(12, [](random_objects& g) { return g.queue(); });
}
TEST(CodecRandom, PriorityClasses) {
  random_round_trips(17, [](random_objects& g) { return g.priority_class(); });
}
TEST(CodecRandom, PodGroups) {
  random_round_trips(13, [](random_objects& g) { return g.pod_group(); });
}
TEST(CodecRandom, Pods) {
  random_round_trips(14, [](random_objects& g) { return g.pod(); });
}
TEST(CodecRandom, Jobs) {
  random_round_trips(15, [](random_objects& g) { return g.job(); });
}

// ---------------------------------------------------------------------------------------------
// Sharing

// Decodes `encoded` with one decoder in order, as a restore reads a store's pods.
std::vector<sch::pod> decode_in_order(record_decoder& d, const std::vector<std::string>& encoded) {
  std::vector<sch::pod> pods;
  for (const auto& e : encoded) {
    auto r = d.decode_pod(e);
    if (!r.ok()) {
      ADD_FAILURE() << r.error().to_string();
      continue;
    }
    pods.push_back(std::move(*r));
  }
  return pods;
}

TEST(CodecSharing, PodsOfOneTemplateShareConstraintsAndSpec) {
  random_objects gen(21);
  auto c1 = std::make_shared<const sch::placement_constraints>(gpu_constraints());
  auto c2 = std::make_shared<const sch::placement_constraints>(gen.constraints());
  sch::shared_string s1(std::string(2000, 'x'));
  std::vector<std::string> encoded;
  for (int i = 0; i < 100; ++i) {
    sch::pod p = gen.pod(i % 2 ? c1 : c2, s1);
    encoded.push_back(encode(p));
  }
  // A job task template with the same content shares too.
  job_record job;
  job.job.tasks.push_back({});
  job.job.tasks[0].pod_template.constraints =
      std::make_shared<const sch::placement_constraints>(*c1);
  job.job.tasks[0].pod_template.spec_json = sch::shared_string(s1.view());

  record_decoder d;
  auto pods = decode_in_order(d, encoded);
  ASSERT_EQ(pods.size(), encoded.size());
  auto j = d.decode_job(encode(job));
  ASSERT_TRUE(j.ok()) << j.error().to_string();

  EXPECT_EQ(d.distinct_constraints(), 2u);
  EXPECT_EQ(d.distinct_spec_json(), 1u);
  for (std::size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(pods[i].constraints, pods[i % 2].constraints);
    EXPECT_TRUE(pods[i].spec_json.shares_with(pods[0].spec_json));
  }
  EXPECT_EQ(*pods[1].constraints, *c1);
  EXPECT_EQ(*pods[0].constraints, *c2);
  EXPECT_EQ(j->job.tasks[0].pod_template.constraints, pods[1].constraints);
  EXPECT_TRUE(j->job.tasks[0].pod_template.spec_json.shares_with(pods[0].spec_json));
}

TEST(CodecSharing, PodsShareTheirNamespaceNodeGroupRoleAndSchedulerNames) {
  // Two gangs' pods in key order, as a restore reads them: a gang's pods share its group name
  // (the last value), and a role the gangs both have is one block too (the pool), as do the
  // namespace and the name of a node several pods are bound to.
  std::vector<std::string> encoded;
  int index = 0;
  for (std::string group : {"spark-one-with-a-long-name", "spark-two-with-a-long-name"})
    for (int i = 0; i < 3; ++i, ++index) {
      sch::pod p = st::make_pod(group + "-" + std::to_string(i)).obj();
      p.meta.namespace_name = "team-analytics";
      p.meta.uid = "uid-" + std::to_string(index);
      p.group = group;
      p.role = i == 0 ? "driver" : "executor";
      p.scheduler_name = "volcano";
      p.priority_class_name = "batch-low";
      p.node_name = index % 2 == 0 ? "worker-node-even" : "worker-node-odd";
      p.phase = sch::pod_phase::running;
      encoded.push_back(encode(p));
    }
  record_decoder d;
  auto pods = decode_in_order(d, encoded);
  ASSERT_EQ(pods.size(), encoded.size());
  EXPECT_EQ(pods[0].group, "spark-one-with-a-long-name");
  EXPECT_EQ(pods[3].group, "spark-two-with-a-long-name");
  EXPECT_TRUE(pods[0].group.shares_with(pods[2].group));
  EXPECT_TRUE(pods[3].group.shares_with(pods[5].group));
  EXPECT_FALSE(pods[0].group.shares_with(pods[3].group));
  EXPECT_TRUE(pods[0].role.shares_with(pods[3].role));  // "driver", not each other's neighbour.
  EXPECT_TRUE(pods[1].role.shares_with(pods[5].role));
  EXPECT_EQ(pods[1].role, "executor");
  for (const auto& p : pods) {
    EXPECT_TRUE(p.scheduler_name.shares_with(pods[0].scheduler_name));
    EXPECT_TRUE(p.priority_class_name.shares_with(pods[0].priority_class_name));
  }
  EXPECT_EQ(pods[4].priority_class_name, "batch-low");
  for (std::size_t i = 0; i < pods.size(); ++i) {
    EXPECT_TRUE(pods[i].meta.namespace_name.shares_with(pods[0].meta.namespace_name));
    EXPECT_TRUE(pods[i].node_name.shares_with(pods[i % 2].node_name)) << i;
    EXPECT_EQ(pods[i].meta.uid, "uid-" + std::to_string(i)); // Unique: not shared.
  }
  EXPECT_EQ(pods[0].meta.namespace_name, "team-analytics");
  EXPECT_EQ(pods[4].node_name, "worker-node-even");
  EXPECT_EQ(pods[5].node_name, "worker-node-odd");
  EXPECT_FALSE(pods[0].node_name.shares_with(pods[1].node_name));

  // A state update (a binding after the record, or a job's pod stored as updates only) names its
  // node through the same pool.
  sch::pod_runtime bound;
  bound.phase = sch::pod_phase::running;
  bound.node_name = "worker-node-odd";
  bound.resource_version = 9;
  auto moved = d.decode_pod(encode(sch::pod(pods[0])) + encode_pod_state(bound));
  ASSERT_TRUE(moved.ok()) << moved.error().to_string();
  EXPECT_TRUE(moved->node_name.shares_with(pods[1].node_name));
  sch::pod_runtime only_state;
  bool deleted = false;
  ASSERT_TRUE(d.decode_pod_state(encode_pod_state(bound), only_state, deleted).ok());
  EXPECT_TRUE(only_state.node_name.shares_with(pods[1].node_name));
}

TEST(CodecSharing, DifferentContentIsNotShared) {
  record_decoder d;
  sch::pod a = st::make_pod("a").selector("zone", "a").obj();
  sch::pod b = st::make_pod("b").selector("zone", "b").obj();
  a.spec_json = sch::shared_string("{1}");
  b.spec_json = sch::shared_string("{2}");
  auto x = d.decode_pod(encode(a));
  auto y = d.decode_pod(encode(b));
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_NE(x->constraints, y->constraints);
  EXPECT_NE(x->spec_json, y->spec_json);
  EXPECT_EQ(x->spec_json, "{1}");
  EXPECT_EQ(y->spec_json, "{2}");
}

// ---------------------------------------------------------------------------------------------
// Decode errors: errc::corruption and a message naming the field, never a crash.

template <class Message>
std::string bytes_of(const Message& m) {
  std::string out;
  m.SerializeToString(&out);
  return out;
}

// Records written before preferred node affinity was stored have no field 11: they read back
// with no preferred terms and everything else as it was.
TEST(CodecCompatibility, ConstraintsWrittenBeforePreferredNodeAffinityReadWithoutIt) {
  v1::PlacementConstraints old;
  auto* term = old.add_required_node_affinity()->add_match_expressions();
  term->set_key("ssd");
  term->set_op(v1::SELECTOR_OPERATOR_EXISTS);
  v1::PodRecord r;
  r.set_record_version(record_version);
  r.mutable_pod()->set_phase(v1::POD_PHASE_RUNNING);
  r.mutable_pod()->set_constraints(bytes_of(old));
  record_decoder d;
  auto back = d.decode_pod(bytes_of(r));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_NE(back->constraints, nullptr);
  EXPECT_TRUE(back->constraints->preferred_node_affinity.empty());
  ASSERT_EQ(back->constraints->required_node_affinity.size(), 1u);
  EXPECT_EQ(back->constraints->required_node_affinity[0].match_expressions[0].key, "ssd");
}

void expect_corrupt(const result<sch::pod>& r, std::string_view needle) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::corruption);
  EXPECT_NE(r.error().message().find(needle), std::string::npos) << r.error().message();
}

TEST(CodecErrors, GarbageIsNotARecord) {
  record_decoder d;
  expect_corrupt(d.decode_pod(std::string("\xff\xff\xff\xff garbage", 12)),
                 "not a valid PodRecord");
  auto n = d.decode_node(std::string(1, '\x0a'));
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message().find("NodeRecord"), std::string::npos);
}

TEST(CodecErrors, RecordVersion) {
  record_decoder d;
  v1::PodRecord r;
  r.mutable_pod()->set_phase(v1::POD_PHASE_PENDING);
  expect_corrupt(d.decode_pod(bytes_of(r)), "record_version: missing");
  r.set_record_version(record_version + 1);
  expect_corrupt(d.decode_pod(bytes_of(r)), "record_version 2 is newer than this build reads (1)");
  r.set_record_version(record_version);
  EXPECT_TRUE(d.decode_pod(bytes_of(r)).ok());
}

TEST(CodecErrors, UnknownEnumValue) {
  record_decoder d;
  v1::PodRecord r;
  r.set_record_version(record_version);
  expect_corrupt(d.decode_pod(bytes_of(r)), "phase: unknown value 0");
  r.mutable_pod()->set_phase(static_cast<v1::PodPhase>(99));
  expect_corrupt(d.decode_pod(bytes_of(r)), "phase: unknown value 99");

  v1::NodeRecord n;
  n.set_record_version(record_version);
  n.add_taints()->set_effect(static_cast<v1::TaintEffect>(7));
  auto node = d.decode_node(bytes_of(n));
  ASSERT_FALSE(node.ok());
  EXPECT_NE(node.error().message().find("taints[0].effect: unknown value 7"), std::string::npos)
      << node.error().message();
}

TEST(CodecErrors, LabelsOutOfOrder) {
  record_decoder d;
  v1::PodRecord r;
  r.set_record_version(record_version);
  r.mutable_pod()->set_phase(v1::POD_PHASE_RUNNING);
  auto* labels = r.mutable_pod()->mutable_meta()->mutable_labels();
  auto* b = labels->Add();
  b->set_key("b");
  auto* a = labels->Add();
  a->set_key("a");
  expect_corrupt(d.decode_pod(bytes_of(r)), "meta.labels: keys not sorted or repeated");
  a->set_key("b");
  expect_corrupt(d.decode_pod(bytes_of(r)), "meta.labels: keys not sorted or repeated");
}

TEST(CodecErrors, BadExtendedResources) {
  record_decoder d;
  auto with_extended = [&](std::string name, int64_t amount, int copies) {
    v1::PodRecord r;
    r.set_record_version(record_version);
    r.mutable_pod()->set_phase(v1::POD_PHASE_RUNNING);
    for (int i = 0; i < copies; ++i) {
      auto* e = r.mutable_pod()->mutable_requests()->add_extended();
      e->set_name(name);
      e->set_amount(amount);
    }
    return d.decode_pod(bytes_of(r));
  };
  expect_corrupt(with_extended("cpu", 1, 1), "requests.extended: standard resource \"cpu\"");
  expect_corrupt(with_extended("nvidia.com/gpu", 0, 1), "zero amount");
  expect_corrupt(with_extended("nvidia.com/gpu", 1, 2), "listed twice");
  expect_corrupt(with_extended("", 1, 1), "empty resource name");
  EXPECT_TRUE(with_extended("nvidia.com/gpu", 2, 1).ok());
}

TEST(CodecErrors, BadConstraintsNameTheirPath) {
  record_decoder d;
  v1::PlacementConstraints c;
  auto* req = c.add_required_node_affinity()->add_match_fields();
  req->set_key("metadata.name");
  v1::PodRecord r;
  r.set_record_version(record_version);
  r.mutable_pod()->set_phase(v1::POD_PHASE_RUNNING);
  r.mutable_pod()->set_constraints(bytes_of(c));
  expect_corrupt(d.decode_pod(bytes_of(r)),
                 "constraints.required_node_affinity[0].match_fields[0].op: unknown value 0");
  r.mutable_pod()->set_constraints("\xff\xff");
  expect_corrupt(d.decode_pod(bytes_of(r)), "constraints.not a valid PlacementConstraints");

  v1::PlacementConstraints affinity;
  affinity.add_required_pod_affinity();
  auto* selector = affinity.add_required_pod_anti_affinity()->mutable_selector();
  selector->add_match_labels()->set_key("b");
  selector->add_match_labels()->set_key("a");
  r.mutable_pod()->set_constraints(bytes_of(affinity));
  expect_corrupt(d.decode_pod(bytes_of(r)),
                 "constraints.required_pod_anti_affinity[0].selector.match_labels: keys not "
                 "sorted or repeated at \"a\"");

  v1::PlacementConstraints preferred;
  preferred.add_preferred_pod_affinity();
  auto* term = preferred.add_preferred_pod_affinity()->mutable_term();
  term->mutable_namespace_selector()->add_match_expressions()->set_key("team");
  r.mutable_pod()->set_constraints(bytes_of(preferred));
  expect_corrupt(d.decode_pod(bytes_of(r)),
                 "constraints.preferred_pod_affinity[1].term.namespace_selector."
                 "match_expressions[0].op: unknown value 0");

  v1::PlacementConstraints preferred_node;
  preferred_node.add_preferred_node_affinity();
  preferred_node.add_preferred_node_affinity()
      ->mutable_preference()
      ->add_match_expressions()
      ->set_key("zone");
  r.mutable_pod()->set_constraints(bytes_of(preferred_node));
  expect_corrupt(d.decode_pod(bytes_of(r)),
                 "constraints.preferred_node_affinity[1].preference.match_expressions[0].op: "
                 "unknown value 0");

  v1::PlacementConstraints spread;
  spread.add_topology_spread();
  auto* spread_selector = spread.add_topology_spread()->mutable_selector();
  spread_selector->add_match_labels()->set_key("app");
  spread_selector->add_match_expressions()->set_key("tier");
  r.mutable_pod()->set_constraints(bytes_of(spread));
  expect_corrupt(d.decode_pod(bytes_of(r)),
                 "constraints.topology_spread[1].selector.match_expressions[0].op: unknown "
                 "value 0");
}

TEST(CodecErrors, JobTemplateErrorsNameTheTask) {
  record_decoder d;
  v1::JobRecord r;
  r.set_record_version(record_version);
  r.mutable_status()->set_phase(v1::JOB_PHASE_PENDING);
  r.add_tasks()->mutable_pod_template()->set_phase(v1::POD_PHASE_PENDING);
  r.add_tasks(); // Its template has no phase.
  auto j = d.decode_job(bytes_of(r));
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.error().message().find("tasks[1].pod_template.phase: unknown value 0"),
            std::string::npos)
      << j.error().message();
}

TEST(CodecErrors, TruncatedRecordsNeverCrash) {
  random_objects gen(31);
  record_decoder d;
  for (int i = 0; i < 50; ++i) {
    auto bytes = encode(gen.job());
    for (std::size_t n = 0; n < bytes.size(); n += 1 + bytes.size() / 40) {
      auto r = d.decode_job(std::string_view(bytes).substr(0, n));
      if (!r.ok()) {
        EXPECT_EQ(r.error().code(), errc::corruption);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Pod records are decoded by a wire-format reader, not the generated code. It must agree with the
// generated code on every record it accepts, in any field order, with unknown fields, and reject
// (never crash on) damaged input.

TEST(CodecWire, AgreesWithTheGeneratedCodeOnRandomPods) {
  random_objects gen(41);
  record_decoder d;
  for (int i = 0; i < 300; ++i) {
    auto bytes = encode(gen.pod());
    auto fast = d.decode_pod(bytes);
    auto reference = detail::reference_decode_pod(bytes);
    ASSERT_TRUE(fast.ok() && reference.ok());
    ASSERT_EQ(diff(*fast, *reference), "") << i;
  }
}

// encode(pod) writes the wire format by hand; it must be exactly what the generated code writes,
// including negative numbers, empty and absent optional fields, extended resources and pods that
// share (or stop sharing) one constraints object.
TEST(CodecWire, HandWrittenPodEncodingIsTheGeneratedCodes) {
  random_objects gen(47);
  std::shared_ptr<const sch::placement_constraints> shared;
  for (int i = 0; i < 500; ++i) {
    auto p = gen.pod();
    if (i % 3 == 0) {
      if (!shared || i % 30 == 0)
        shared = std::make_shared<const sch::placement_constraints>(gen.constraints());
      p.constraints = shared;
    }
    if (i % 7 == 0)
      p.priority = -static_cast<int32_t>(gen.between(1, 1000));
    if (i % 11 == 0)
      p.spec_json = sch::shared_string("");
    if (i % 13 == 0)
      p.constraints = std::make_shared<const sch::placement_constraints>();
    if (i % 17 == 0)
      p.meta.labels.set("", "");
    ASSERT_EQ(encode(p), detail::reference_encode_pod(p)) << i;
  }
  sch::pod empty;
  EXPECT_EQ(encode(empty), detail::reference_encode_pod(empty));
}

TEST(CodecWire, AnyFieldOrderAndUnknownFields) {
  sch::pod p = st::make_pod("w-1").cpu("2").gpu(1).role("worker").selector("a", "b").obj();
  p.meta.labels.set("k1", "v1");
  p.meta.labels.set("k2", "v2");
  p.spec_json = sch::shared_string("{}");
  v1::PodRecord rec;
  ASSERT_TRUE(rec.ParseFromString(encode(p)));
  // The pod's fields one by one, in reverse order, with unknown fields between them.
  const auto& pod = rec.pod();
  std::string body;
  auto unknown = [&](int field) {
    v1::Label filler; // Any message: its bytes become an unknown length-delimited field.
    filler.set_key("from-the-future");
    std::string payload = bytes_of(filler);
    std::string out;
    out.push_back(static_cast<char>((field << 3) | 2));
    out.push_back(static_cast<char>(payload.size()));
    return out + payload;
  };
  const auto* descriptor = v1::Pod::descriptor();
  for (int f = descriptor->field_count() - 1; f >= 0; --f) {
    v1::Pod one = pod;
    for (int g = 0; g < descriptor->field_count(); ++g)
      if (g != f)
        one.GetReflection()->ClearField(&one, descriptor->field(g));
    body += bytes_of(one);
    body += unknown(14);
  }
  std::string record;
  record.push_back(static_cast<char>((2 << 3) | 2));
  ASSERT_LT(body.size(), 16384u);
  record.push_back(static_cast<char>(0x80 | (body.size() & 0x7f)));
  record.push_back(static_cast<char>(body.size() >> 7));
  record += body;
  record += unknown(9);
  record.push_back(static_cast<char>(1 << 3)); // record_version last.
  record.push_back(1);
  record_decoder d;
  auto fast = d.decode_pod(record);
  ASSERT_TRUE(fast.ok()) << fast.error().to_string();
  EXPECT_EQ(diff(*fast, p), "");
  auto reference = detail::reference_decode_pod(record);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(diff(*reference, p), "");
}

TEST(CodecWire, DamagedRecordsFailOrAgreeWithTheGeneratedCode) {
  random_objects gen(43);
  record_decoder d;
  std::mt19937_64 rng(44);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 300; ++i) {
    auto bytes = encode(gen.pod());
    for (int m = 0; m < 20; ++m) {
      std::string damaged = bytes;
      switch (rng() % 3) {
        case 0: // Flip a bit.
          damaged[rng() % damaged.size()] ^= static_cast<char>(1 << (rng() % 8));
          break;
        case 1: // Cut.
          damaged.resize(rng() % damaged.size());
          break;
        default: // Overwrite a byte.
          damaged[rng() % damaged.size()] = static_cast<char>(rng());
      }
      auto fast = d.decode_pod(damaged);
      if (!fast.ok()) {
        ++rejected;
        EXPECT_EQ(fast.error().code(), errc::corruption);
        continue;
      }
      ++accepted;
      auto reference = detail::reference_decode_pod(damaged);
      ASSERT_TRUE(reference.ok()) << "the wire decoder accepted what protobuf rejects: "
                                  << reference.error().to_string();
      ASSERT_EQ(diff(*fast, *reference), "");
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

// ---------------------------------------------------------------------------------------------
// Pod state updates (encode_pod_state) appended to a record: the runtime's bindings and phase
// changes. Both decoders must read the record with the last update's state and the rest of the
// pod untouched, including a state that goes back to zero values.

sch::pod with_state(sch::pod p, std::string node, sch::pod_phase phase, int64_t start_s,
                    int64_t finish_s, uint64_t version) {
  p.node_name = std::move(node);
  p.phase = phase;
  p.start_time = start_s == 0 ? sch::timestamp{} : sch::timestamp(std::chrono::seconds(start_s));
  p.finish_time = finish_s == 0 ? sch::timestamp{} : sch::timestamp(std::chrono::seconds(finish_s));
  p.meta.resource_version = version;
  return p;
}

TEST(CodecPodState, UpdatesAppliedInOrderByBothDecoders) {
  random_objects gen(45);
  record_decoder d;
  for (int i = 0; i < 200; ++i) {
    auto p = gen.pod();
    std::string record = encode(p);
    sch::pod expected = p;
    int updates = static_cast<int>(gen.between(1, 4));
    for (int u = 0; u < updates; ++u) {
      auto phase = static_cast<sch::pod_phase>(gen.between(0, int64_t(sch::pod_phase_last)));
      expected =
          with_state(p, u % 2 == 0 ? "node-" + std::to_string(gen.between(0, 9)) : "", phase,
                     gen.between(0, 1) * gen.between(1, 2'000'000'000),
                     gen.between(0, 1) * gen.between(1, 2'000'000'000), gen.between(0, 1'000'000));
      expected.restart_count = static_cast<uint16_t>(gen.between(0, 1) * gen.between(1, 65535));
      record += encode_pod_state(scheduler::runtime_of(expected));
    }
    auto fast = d.decode_pod(record);
    ASSERT_TRUE(fast.ok()) << fast.error().to_string();
    EXPECT_EQ(diff(*fast, expected), "") << i;
    auto reference = detail::reference_decode_pod(record);
    ASSERT_TRUE(reference.ok()) << reference.error().to_string();
    EXPECT_EQ(diff(*reference, expected), "") << i;
    // Re-encoding the merged pod gives the record a full put would have written.
    EXPECT_EQ(encode(*fast), encode(expected));
  }
}

TEST(CodecPodState, AnUpdateIsSmall) {
  auto p = st::make_pod("spark-exec-17").cpu("1").memory("2Gi").obj();
  p.meta.labels.set("app", "spark");
  p.spec_json = sch::shared_string(std::string(400, 'x'));
  auto bound = with_state(p, "node-0042", sch::pod_phase::running, 1'700'000'000, 0, 123456);
  EXPECT_LT(encode_pod_state(scheduler::runtime_of(bound)).size(), 48u);
  EXPECT_GT(encode(bound).size(), 400u);
}

TEST(CodecPodState, AnUpdateWithoutItsPodIsCorrupt) {
  record_decoder d;
  auto alone = d.decode_pod(encode_pod_state(scheduler::runtime_of(st::make_pod("a").obj())));
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.error().code(), errc::corruption);
  EXPECT_NE(alone.error().message().find("record_version"), std::string::npos)
      << alone.error().message();
}

// A pod's container restart count (what TaskFailed sums) is part of its state: kept by a record
// and set by every update, by both decoders, back to 0 too. Records and updates written before
// it existed have no field 15 and read 0, and such an update leaves the count as it was.
TEST(CodecPodState, TheRestartCountIsKeptAndOldRecordsReadZero) {
  record_decoder d;
  auto p = st::make_pod("job-worker-0").cpu("1").obj();
  auto restarted = with_state(p, "n-3", sch::pod_phase::running, 1'700'000'000, 0, 31);
  restarted.restart_count = 4;
  auto record = d.decode_pod(encode(restarted));
  ASSERT_TRUE(record.ok()) << record.error().to_string();
  EXPECT_EQ(record->restart_count, 4);

  auto again = restarted;
  again.restart_count = 5;
  again.meta.resource_version = 32;
  std::string value = encode(restarted) + encode_pod_state(scheduler::runtime_of(again));
  auto fast = d.decode_pod(value);
  ASSERT_TRUE(fast.ok()) << fast.error().to_string();
  EXPECT_EQ(fast->restart_count, 5);
  auto reference = detail::reference_decode_pod(value);
  ASSERT_TRUE(reference.ok()) << reference.error().to_string();
  EXPECT_EQ(reference->restart_count, 5);

  // A pod made again by its job restarts from 0: an update to 0 is written, not left out.
  auto fresh = again;
  fresh.restart_count = 0;
  fresh.meta.resource_version = 33;
  auto reset = d.decode_pod(value + encode_pod_state(scheduler::runtime_of(fresh)));
  ASSERT_TRUE(reset.ok()) << reset.error().to_string();
  EXPECT_EQ(reset->restart_count, 0);

  // Only updates on a key (a job's pod stored as its job) carry it too.
  sch::pod_runtime state;
  bool deleted = false;
  ASSERT_TRUE(d.decode_pod_state(encode_pod_state(scheduler::runtime_of(again)), state, deleted)
                  .ok());
  EXPECT_EQ(state.restart_count, 5);

  // The state update as written before field 15 existed: the same fields, through the generated
  // code, which leaves out a field never set.
  v1::PodRecord old_update;
  auto* old_pod = old_update.mutable_pod();
  old_pod->mutable_meta()->set_resource_version(34);
  old_pod->set_phase(v1::PodPhase(int(sch::pod_phase::running)));
  old_pod->set_node_name("n-3");
  old_pod->set_start_time_ns(1'700'000'000'000'000'000);
  std::string old_bytes = bytes_of(old_update);
  ASSERT_TRUE(record_decoder::holds_only_pod_state(old_bytes));
  ASSERT_TRUE(d.decode_pod_state(old_bytes, state, deleted).ok());
  EXPECT_EQ(state.restart_count, 0);
  EXPECT_EQ(state.node_name, "n-3");
  auto old_record = d.decode_pod(encode(p) + old_bytes);
  ASSERT_TRUE(old_record.ok()) << old_record.error().to_string();
  EXPECT_EQ(old_record->restart_count, 0);
  auto kept = d.decode_pod(value + old_bytes);
  ASSERT_TRUE(kept.ok()) << kept.error().to_string();
  EXPECT_EQ(kept->restart_count, 5);
  EXPECT_EQ(kept->meta.resource_version, 34u);

  // Counts past what the model holds saturate rather than wrap.
  v1::PodRecord huge;
  ASSERT_TRUE(huge.ParseFromString(encode(p)));
  huge.mutable_pod()->set_restart_count(70'000);
  auto saturated = d.decode_pod(bytes_of(huge));
  ASSERT_TRUE(saturated.ok()) << saturated.error().to_string();
  EXPECT_EQ(saturated->restart_count, 65535);
}

// A pod stored as its job's expansion has no record: its key holds only state updates, and a
// tombstone once it is deleted on its own.
TEST(CodecPodState, AKeyWithOnlyUpdatesDecodesToTheLastStateAndATombstone) {
  record_decoder d;
  auto p = st::make_pod("job-worker-0").cpu("1").obj();
  auto bound = with_state(p, "n-7", sch::pod_phase::pending, 0, 0, 21);
  auto running = with_state(p, "n-7", sch::pod_phase::running, 1'700'000'000, 0, 22);
  std::string value = encode_pod_state(scheduler::runtime_of(bound)) +
                      encode_pod_state(scheduler::runtime_of(running));
  EXPECT_TRUE(record_decoder::holds_only_pod_state(value));
  EXPECT_FALSE(record_decoder::holds_only_pod_state(encode(p)));
  EXPECT_FALSE(record_decoder::holds_only_pod_state(""));

  sch::pod_runtime state;
  bool deleted = true;
  ASSERT_TRUE(d.decode_pod_state(value, state, deleted).ok());
  EXPECT_EQ(state, scheduler::runtime_of(running));
  EXPECT_FALSE(deleted);

  value += encode_pod_tombstone(23);
  ASSERT_TRUE(d.decode_pod_state(value, state, deleted).ok());
  EXPECT_TRUE(deleted);
  EXPECT_EQ(state.resource_version, 23u);
  EXPECT_LT(encode_pod_tombstone(23).size(), 16u);

  // A record (its record_version first) is not a state-only value, and a tombstone appended to
  // a pod that has a record is refused: nothing writes one there.
  EXPECT_FALSE(d.decode_pod_state(encode(p), state, deleted).ok());
  auto with_tombstone = d.decode_pod(encode(p) + encode_pod_tombstone(5));
  ASSERT_FALSE(with_tombstone.ok());
  EXPECT_NE(with_tombstone.error().message().find("field 14"), std::string::npos)
      << with_tombstone.error().message();
}

// A key outlives its pods: a job deleted and created again under its name makes pods with the
// same keys. An update or a tombstone of the earlier pod that reaches the store after the newer
// pod's updates (written late) must not undo them: the highest resource version wins, whole.
TEST(CodecPodState, AnOlderUpdateWrittenLateDoesNotUndoANewerOne) {
  record_decoder d;
  auto p = st::make_pod("job-worker-0").cpu("1").obj();
  auto earlier_bound = with_state(p, "n-1", sch::pod_phase::running, 1'600'000'000, 0, 10);
  auto newer_bound = with_state(p, "n-2", sch::pod_phase::pending, 0, 0, 40);
  sch::pod_runtime state;
  bool deleted = false;

  // The earlier pod's tombstone (version 12) after the newer pod's binding (version 40).
  std::string value = encode_pod_state(scheduler::runtime_of(newer_bound)) +
                      encode_pod_tombstone(12);
  ASSERT_TRUE(d.decode_pod_state(value, state, deleted).ok());
  EXPECT_FALSE(deleted);
  EXPECT_EQ(state, scheduler::runtime_of(newer_bound));

  // The earlier pod's state after the newer one's: the newer one stays, every field of it.
  value = encode_pod_state(scheduler::runtime_of(newer_bound)) +
          encode_pod_state(scheduler::runtime_of(earlier_bound));
  ASSERT_TRUE(d.decode_pod_state(value, state, deleted).ok());
  EXPECT_EQ(state, scheduler::runtime_of(newer_bound));

  // A tombstone of the newer pod (its own version) still deletes it; on a tie the later wins.
  value += encode_pod_tombstone(40);
  ASSERT_TRUE(d.decode_pod_state(value, state, deleted).ok());
  EXPECT_TRUE(deleted);
  EXPECT_EQ(state.resource_version, 40u);

  // Only an earlier pod's updates: decoded as they are (the runtime compares the version with
  // the pod the key names now).
  value = encode_pod_state(scheduler::runtime_of(earlier_bound)) + encode_pod_tombstone(11);
  ASSERT_TRUE(d.decode_pod_state(value, state, deleted).ok());
  EXPECT_TRUE(deleted);
  EXPECT_EQ(state.resource_version, 11u);
}

TEST(CodecPodState, AnUpdateCarryingOtherFieldsIsRefused) {
  auto p = st::make_pod("a").cpu("1").obj();
  // A whole pod appended where an update belongs: protobuf would merge its labels and resources,
  // which no writer does, so the wire decoder refuses it rather than guess.
  v1::PodRecord whole;
  ASSERT_TRUE(whole.ParseFromString(encode(p)));
  whole.clear_record_version();
  record_decoder d;
  auto r = d.decode_pod(encode(p) + bytes_of(whole));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::corruption);
  EXPECT_NE(r.error().message().find("pod state update"), std::string::npos) << r.error().message();
}

// ---------------------------------------------------------------------------------------------
// A field added to a model type must reach records.proto and the codec. The sizes below are of
// this platform (x86-64, libstdc++); when one changes, extend the record and codec first, then
// update the number here.

TEST(CodecCoverage, ModelLayoutIsTheOneTheCodecKnows) {
  EXPECT_EQ(sizeof(sch::object_meta), 64u) << "object_meta changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::node), 152u) << "node changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::pod), 208u) << "pod changed: update records.proto/codec";
  // sla_waiting_time (8 bytes) is read from the annotations the record keeps, not stored.
  EXPECT_EQ(sizeof(sch::pod_group), 232u) << "pod_group changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::queue), 224u) << "queue changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::job), 312u) << "job changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::job_task), 344u) << "job_task changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::job_status), 184u) << "job_status changed: update records.proto/codec";
  EXPECT_EQ(sizeof(sch::placement_constraints), 248u) << "placement_constraints changed";
  EXPECT_EQ(sizeof(sch::label_selector), 32u) << "label_selector changed";
  EXPECT_EQ(sizeof(sch::pod_affinity_term), 136u) << "pod_affinity_term changed";
  EXPECT_EQ(sizeof(sch::weighted_pod_affinity_term), 144u) << "weighted_pod_affinity_term changed";
  EXPECT_EQ(sizeof(sch::weighted_node_selector_term), 56u) << "weighted_node_selector_term changed";
  EXPECT_EQ(sizeof(sch::host_port), 72u) << "host_port changed";
  EXPECT_EQ(sizeof(sch::topology_spread_constraint), 128u) << "topology_spread_constraint changed";
  EXPECT_EQ(sizeof(sch::toleration), 96u) << "toleration changed";
  EXPECT_EQ(sizeof(sch::lifecycle_policy), 112u) << "lifecycle_policy changed";
}

} // namespace
} // namespace phalanx::storage
