// The synthetic workload: distributions parse with named errors, generation is deterministic and
// follows the distributions, and the objects it submits pass the API's own decoding and
// validation.

#include "loadtest/workload.hpp"

#include "api/codec.hpp"
#include "scheduler/simulation.hpp"
#include "scheduler/validation.hpp"

#include <gtest/gtest.h>

#include <map>

namespace phalanx::loadtest {
namespace {

TEST(LoadtestWorkload, DistributionsParse) {
  auto sizes = parse_gang_sizes("1:40,2-8:30,33-64:10");
  ASSERT_TRUE(sizes.ok()) << sizes.error().message();
  EXPECT_EQ(*sizes, (std::vector<size_bucket>{{1, 1, 40}, {2, 8, 30}, {33, 64, 10}}));
  auto queues = parse_queues("research:1,production:2,batch");
  ASSERT_TRUE(queues.ok()) << queues.error().message();
  EXPECT_EQ(*queues, (std::vector<queue_spec>{{"research", 1}, {"production", 2}, {"batch", 1}}));
  auto prios = parse_priorities("0:80,100:15");
  ASSERT_TRUE(prios.ok());
  EXPECT_EQ(*prios, (std::vector<weighted_value>{{0, 80}, {100, 15}}));
  auto cpu = parse_amount_range("cpu", "250m-2");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(*cpu, (std::pair<int64_t, int64_t>{250, 2000}));
  auto one = parse_amount_range("memory", "1Gi");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->first, one->second);
}

TEST(LoadtestWorkload, DistributionErrorsNameTheItem) {
  struct row {
    result<int> (*parse)(const std::string&);
    std::string text;
    std::string message;
  };
  auto sizes = [](const std::string& t) -> result<int> {
    auto r = parse_gang_sizes(t);
    return r ? result<int>(0) : result<int>(r.error());
  };
  auto queues = [](const std::string& t) -> result<int> {
    auto r = parse_queues(t);
    return r ? result<int>(0) : result<int>(r.error());
  };
  auto prios = [](const std::string& t) -> result<int> {
    auto r = parse_priorities(t);
    return r ? result<int>(0) : result<int>(r.error());
  };
  const std::vector<row> rows = {
      {sizes, "1:40,8-2:30", "item 2 \"8-2:30\": sizes must satisfy 1 <= MIN <= MAX <= 10000"},
      {sizes, "1:40,x:30", "item 2 \"x:30\": expected SIZE:WEIGHT or MIN-MAX:WEIGHT"},
      {sizes, "4", "item 1 \"4\": expected VALUE:WEIGHT"},
      {sizes, "4:0", "item 1 \"4:0\": the weight must be a number greater than 0"},
      {queues, "a:1,a:2", "item 2 \"a:2\": queue named twice"},
      {queues, "Bad_Name:1", "item 1 \"Bad_Name:1\": the queue name must be a DNS-1123"},
      {queues, "a:0", "item 1 \"a:0\": the weight must be an integer from 1 to 65535"},
      {prios, "-1:5", "item 1 \"-1:5\": the priority must be an integer"},
  };
  for (const auto& r : rows) {
    auto out = r.parse(r.text);
    ASSERT_FALSE(out.ok()) << r.text;
    EXPECT_NE(out.error().message().find(r.message), std::string::npos)
        << "got: " << out.error().message() << "\nwant: " << r.message;
  }
  EXPECT_FALSE(parse_amount_range("cpu", "2-1").ok());
  EXPECT_FALSE(parse_amount_range("cpu", "0").ok());
  EXPECT_FALSE(parse_amount_range("cpu", "lots").ok());
}

TEST(LoadtestWorkload, GenerationIsDeterministicAndFollowsTheDistributions) {
  workload_spec spec;
  spec.nodes = 200;
  spec.podgroups = 4000;
  auto a = generate_workload(spec);
  auto b = generate_workload(spec);
  ASSERT_EQ(a.gangs.size(), 4000u);
  ASSERT_EQ(a.nodes.size(), 200u);
  EXPECT_EQ(a.total_pods, b.total_pods);
  for (std::size_t i = 0; i < a.gangs.size(); ++i) {
    EXPECT_EQ(a.gangs[i].size(), b.gangs[i].size());
    EXPECT_EQ(a.gangs[i].queue, b.gangs[i].queue);
  }
  // Sizes stay within 1..64; buckets are drawn by weight (40/30/20/10 %).
  std::map<std::string, int> per_queue;
  int64_t pods = 0;
  int gpu_gangs = 0;
  for (const auto& g : a.gangs) {
    EXPECT_GE(g.size(), 1);
    EXPECT_LE(g.size(), 64);
    pods += g.size();
    ++per_queue[g.queue];
    bool gpu = g.tasks.back().requests.get(scheduler::gpu_resource) > 0;
    gpu_gangs += gpu;
    for (const auto& t : g.tasks) {
      EXPECT_GE(t.requests.cpu_milli, 250);
      EXPECT_LE(t.requests.cpu_milli, 2000);
      EXPECT_EQ(t.requests.cpu_milli % 250, 0);
      EXPECT_EQ(t.requests.pods, 1);
    }
    if (g.size() >= spec.ps_min_gang) {
      ASSERT_EQ(g.tasks.size(), 2u);
      EXPECT_EQ(g.tasks[0].role, "ps");
      EXPECT_EQ(g.tasks[0].count, 1);
    } else {
      ASSERT_EQ(g.tasks.size(), 1u);
    }
  }
  EXPECT_EQ(pods, a.total_pods);
  ASSERT_EQ(a.gangs_per_bucket.size(), 4u);
  const double expected[] = {0.4, 0.3, 0.2, 0.1};
  for (int k = 0; k < 4; ++k)
    EXPECT_NEAR(double(a.gangs_per_bucket[k]) / 4000.0, expected[k], 0.03) << "bucket " << k;
  for (const auto& q : spec.queues)
    EXPECT_NEAR(per_queue[q.name] / 4000.0, 1.0 / 3.0, 0.04) << q.name;
  EXPECT_NEAR(gpu_gangs / 4000.0, spec.gpu_gang_fraction, 0.02);
  // One node in four carries GPUs and is tainted.
  int gpu_nodes = 0;
  for (const auto& n : a.nodes)
    if (n.allocatable.get(scheduler::gpu_resource) > 0) {
      ++gpu_nodes;
      ASSERT_EQ(n.taints.size(), 1u);
    }
  EXPECT_EQ(gpu_nodes, 50);
  spec.seed = 2;
  EXPECT_NE(generate_workload(spec).total_pods, a.total_pods);
}

TEST(LoadtestWorkload, ValidateNamesTheFlag) {
  workload_spec spec;
  spec.podgroups = 0;
  EXPECT_EQ(validate(spec).message(), "--podgroups: must be at least 1");
  spec = {};
  spec.pod_cpu_max_milli = 128000;
  EXPECT_EQ(validate(spec).message(),
            "--pod-cpu: the largest request must fit a node (--node-cpu)");
  spec = {};
  spec.gpu_node_fraction = 0;
  EXPECT_NE(validate(spec).message().find("--gpu-gang-fraction"), std::string::npos);
}

// Every object the load tester submits decodes and validates as the API would take it.
TEST(LoadtestWorkload, SubmittedObjectsPassTheApisDecoder) {
  workload_spec spec;
  spec.nodes = 8;
  spec.podgroups = 60;
  spec.gpu_gang_fraction = 0.3;
  spec.pod_duration_ns = 5'000'000'000;
  auto w = generate_workload(spec);
  api::decode_options opts;
  opts.read_status = false;
  auto roundtrip = [&](const api::object& o) -> api::object {
    auto text = api::to_json_text(api::encode_object(o));
    auto parsed = api::parse_json(text);
    EXPECT_TRUE(parsed.ok());
    auto decoded = api::decode_object(*parsed, opts);
    EXPECT_TRUE(decoded.ok()) << decoded.error().message << "\n" << text;
    return decoded.ok() ? *decoded : o;
  };
  for (const auto& n : w.nodes) {
    auto d = std::get<api::node_object>(roundtrip(api::node_object{n, {}, 0}));
    EXPECT_EQ(d.node.allocatable, n.allocatable);
    EXPECT_EQ(d.node.taints, n.taints);
  }
  for (const auto& q : to_queues(spec))
    roundtrip(q);
  for (const auto& g : w.gangs) {
    auto job = std::get<api::job_object>(roundtrip(to_job(g, spec)));
    EXPECT_EQ(job.job.min_available, g.size());
    ASSERT_EQ(job.job.tasks.size(), g.tasks.size());
    for (std::size_t t = 0; t < g.tasks.size(); ++t) {
      EXPECT_EQ(job.job.tasks[t].replicas, g.tasks[t].count);
      EXPECT_EQ(job.job.tasks[t].pod_template.requests, g.tasks[t].requests);
    }
    EXPECT_EQ(*job.job.meta.labels.find(gang_index_label), std::to_string(g.index));
    auto group = std::get<api::pod_group_object>(roundtrip(to_pod_group(g, spec)));
    EXPECT_EQ(group.group.min_member, g.size());
    EXPECT_EQ(group.group.min_resources, g.total_requests());
    EXPECT_EQ(group.group.priority_class_name, priority_class_of(g.priority));
    auto pods = to_pods(g, spec);
    ASSERT_EQ(pods.size(), static_cast<std::size_t>(g.size()));
    auto pod = std::get<api::pod_object>(roundtrip(pods.back()));
    EXPECT_EQ(pod.pod.group, g.name);
    EXPECT_EQ(pod.pod.role, g.tasks.back().role);
    EXPECT_EQ(pod.pod.requests, g.tasks.back().requests);
    EXPECT_EQ(*pod.pod.meta.annotations.find("sim.phalanx.io/duration"), "5s");
  }
}

TEST(LoadtestWorkload, PriorityClassesCoverNonZeroPriorities) {
  workload_spec spec;
  auto classes = priority_classes(spec);
  ASSERT_EQ(classes.size(), 2u);
  EXPECT_EQ(classes[0], (std::pair<std::string, int32_t>{"loadtest-p100", 100}));
  EXPECT_EQ(classes[1], (std::pair<std::string, int32_t>{"loadtest-p1000", 1000}));
  EXPECT_EQ(priority_class_of(0), "");
}

} // namespace
} // namespace phalanx::loadtest
