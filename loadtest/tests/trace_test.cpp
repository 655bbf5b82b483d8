// CSV and trace reading: the excerpts of the three real traces, the clusters, and malformed lines
// reported with their file, line, column and rule.

#include "loadtest/csv.hpp"
#include "loadtest/trace.hpp"

#include <gtest/gtest.h>

#include <string>

namespace phalanx::loadtest {
namespace {

std::string testdata(const std::string& name) {
  auto text = read_text_file(std::string(PHALANX_LOADTEST_TESTDATA) + "/" + name);
  EXPECT_TRUE(text.ok()) << text.error().message();
  return text.ok() ? *text : std::string();
}

TEST(LoadtestCsv, ParsesQuotesBlankLinesAndCrlf) {
  auto t = parse_csv("a,b,c\r\n1,\"x,y\",\"say \"\"hi\"\"\"\r\n\r\n2, padded ,\n", "f.csv");
  ASSERT_TRUE(t.ok()) << t.error().message();
  ASSERT_EQ(t->header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0].fields, (std::vector<std::string>{"1", "x,y", "say \"hi\""}));
  EXPECT_EQ(t->rows[1].line, 4u);
  EXPECT_EQ(t->rows[1].fields, (std::vector<std::string>{"2", "padded", ""}));
}

TEST(LoadtestCsv, MalformedInputNamesLineAndColumn) {
  struct row {
    std::string text;
    std::string message;
  };
  const std::vector<row> rows = {
      {"", "f.csv: empty file, expected a header row"},
      {"a,b\n1,2,3\n", "f.csv:2: 3 fields, the header has 2"},
      {"a,b\n1\n", "f.csv:2: 1 fields, the header has 2"},
      {"a,b\n1,\"open\n", "f.csv:2:3: unterminated quoted field"},
      {"a,b\n1,\"x\"y\n", "f.csv:2:6: unexpected character after a closing quote"},
  };
  for (const auto& r : rows) {
    auto t = parse_csv(r.text, "f.csv");
    ASSERT_FALSE(t.ok()) << r.message;
    EXPECT_EQ(t.error().message(), r.message);
  }
}

TEST(LoadtestCsv, TypedFieldsNameLineColumnAndRule) {
  auto t = parse_csv("n,x\n12,0.5\nfour,\n-1,abc\n", "f.csv");
  ASSERT_TRUE(t.ok());
  auto ok = t->get_int(t->rows[0], 0, 0, 100);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(**ok, 12);
  auto bad = t->get_int(t->rows[1], 0, 0, 100);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "f.csv:3:1 (n): \"four\" is not an integer");
  auto empty = t->get_number(t->rows[1], 1, 0, 1);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message(), "f.csv:3:2 (x): required value is empty");
  auto optional = t->get_number(t->rows[1], 1, 0, 1, true);
  ASSERT_TRUE(optional.ok());
  EXPECT_FALSE(optional->has_value());
  auto range = t->get_int(t->rows[2], 0, 0, 100);
  ASSERT_FALSE(range.ok());
  EXPECT_EQ(range.error().message(),
            "f.csv:4:1 (n): -1 is out of range: must be between 0 and 100");
  EXPECT_FALSE(t->column("missing").ok());
  EXPECT_EQ(t->column("missing").error().message(),
            "f.csv:1: missing column \"missing\" (the header has: n,x)");
}

TEST(LoadtestTrace, ReadsThePhillyExcerpt) {
  auto t = read_trace(testdata("philly_excerpt.csv"), "philly_excerpt.csv");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->format, trace_format::philly);
  ASSERT_EQ(t->jobs.size(), 60u);
  int gangs = 0;
  for (const auto& j : t->jobs) {
    EXPECT_GE(j.gpu_per_pod, 1) << j.name;
    EXPECT_EQ(j.cpu_milli_per_pod, 0) << "Philly has no cpu";
    if (j.pods > 1) {
      ++gangs;
      EXPECT_EQ(j.pods, 4);
      EXPECT_EQ(j.gpu_per_pod, 8);
      EXPECT_EQ(j.group, "2869ce");
    }
  }
  EXPECT_EQ(gangs, 8);
  EXPECT_EQ(t->jobs.front().queue, t->jobs.front().group);
}

TEST(LoadtestTrace, ReadsThePolluxExcerptWithApplicationDurations) {
  trace_read_options o;
  auto t = read_trace(testdata("pollux_workload_excerpt.csv"), "w.csv", o);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->format, trace_format::pollux);
  ASSERT_EQ(t->jobs.size(), 30u);
  const auto& first = t->jobs.front(); // cifar10-0,107,cifar10,6,2048
  EXPECT_EQ(first.name, "cifar10-0");
  EXPECT_EQ(first.submit_s, 107);
  EXPECT_EQ(first.pods, 6);
  EXPECT_EQ(first.gpu_per_pod, 1);
  EXPECT_EQ(first.duration_s, 900);
  o.app_duration_s = {{"cifar10", 60}};
  o.default_duration_s = 7;
  auto t2 = read_trace(testdata("pollux_workload_excerpt.csv"), "w.csv", o);
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->jobs.front().duration_s, 60);
  EXPECT_EQ(t2->jobs[1].duration_s, 7); // deepspeech2 is not listed.
}

TEST(LoadtestTrace, ReadsTheOpenbExcerpt) {
  auto t = read_trace(testdata("openb_pods_excerpt.csv"), "p.csv");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->format, trace_format::openb);
  ASSERT_EQ(t->jobs.size(), 40u);
  const auto& first = t->jobs.front(); // openb-pod-0000,0,1,1,12.0,16384,12537496,1000,,LS,...
  EXPECT_EQ(first.cpu_milli_per_pod, 12000);
  EXPECT_EQ(first.memory_bytes_per_pod, int64_t{16384} << 20);
  EXPECT_EQ(first.gpu_per_pod, 1);
  EXPECT_EQ(first.duration_s, 12537496);
  EXPECT_EQ(first.queue, "ls");
}

TEST(LoadtestTrace, MalformedTraceLinesNameLineColumnAndRule) {
  const std::string philly_header =
      "job_id,submit_s,num_pods,gpu_per_pod,cpu_per_pod,mem_per_pod,duration_s,total_gpus,vc,"
      "timestamp\n";
  struct row {
    std::string text;
    std::string message;
  };
  const std::vector<row> rows = {
      {philly_header + "j1,0,1,1,,,30,1,vc1,t\nj2,10,four,1,,,30,1,vc1,t\n",
       "t.csv:3:3 (num_pods): \"four\" is not an integer"},
      {philly_header + "j1,-5,1,1,,,30,1,vc1,t\n",
       "t.csv:2:2 (submit_s): -5 is out of range: must be between 0 and 315360000"},
      {philly_header + "j1,0,0,1,,,30,1,vc1,t\n",
       "t.csv:2:3 (num_pods): 0 is out of range: must be between 1 and 10000"},
      {philly_header + "j1,0,1,1,,,,1,vc1,t\n", "t.csv:2:7 (duration_s): required value is empty"},
      {philly_header + "j1,0,1,1,x,,30,1,vc1,t\n",
       "t.csv:2:5 (cpu_per_pod): \"x\" is not a number"},
      {philly_header + "j1,0,1,1,,,30,1,,t\n", "t.csv:2:9 (vc): required value is empty"},
      {"name,time,application,num_replicas,batch_size\nc-0,107,cifar10,-6,2048\n",
       "t.csv:2:4 (num_replicas): -6 is out of range: must be between 1 and 10000"},
      {"job_id,submit_s,num_pods,gpu_per_pod,cpu_per_pod,mem_per_pod_mib,duration_s\n"
       "p,0,1,1,twelve,16384,5\n",
       "t.csv:2:5 (cpu_per_pod): \"twelve\" is not a number"},
      {"a,b\n1,2\n", "t.csv:1: unknown trace format (header: a,b)"},
  };
  for (const auto& r : rows) {
    auto t = read_trace(r.text, "t.csv");
    ASSERT_FALSE(t.ok()) << r.message;
    EXPECT_NE(t.error().message().find(r.message), std::string::npos)
        << "got: " << t.error().message() << "\nwant: " << r.message;
  }
}

TEST(LoadtestCluster, FromVcSizesScalesEachVc) {
  auto c = cluster_from_vc_sizes(testdata("vc_nodes_excerpt.csv"), "vc.csv", 0.5);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->partitions.size(), 2u);
  EXPECT_EQ(c->partitions["2869ce"].size(), 8u);
  EXPECT_EQ(c->partitions["ed69ec"].size(), 4u);
  EXPECT_EQ(c->nodes.size(), 12u);
  EXPECT_EQ(c->vc_sizes["2869ce"], 16);
  EXPECT_EQ(c->nodes[0].allocatable.get(scheduler::gpu_resource), 8);
  EXPECT_EQ(*c->nodes[0].meta.labels.find(vc_label), "2869ce");
  EXPECT_NE(c->description.find("12 nodes, 96 GPUs"), std::string::npos) << c->description;
  // A tiny scale still leaves one node per VC.
  auto tiny = cluster_from_vc_sizes("vc,node num\na,3\n", "vc.csv", 0.01);
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->nodes.size(), 1u);
}

TEST(LoadtestCluster, MalformedClusterFilesAreNamed) {
  auto dup = cluster_from_vc_sizes("vc,node num\na,3\na,4\n", "vc.csv", 1);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().message(), "vc.csv:3:1 (vc): VC \"a\" is listed twice");
  auto neg = cluster_from_vc_sizes("vc,node num\na,-3\n", "vc.csv", 1);
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.error().message(),
            "vc.csv:2:2 (node num): -3 is out of range: must be between 1 and 100000");
  auto scale = cluster_from_vc_sizes("vc,node num\na,3\n", "vc.csv", 0);
  ASSERT_FALSE(scale.ok());
  auto list =
      cluster_from_node_list("sn,cpu_milli,memory_mib,gpu,model\nn1,lots,1024,0,\n", "nodes.csv");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message(), "nodes.csv:2:2 (cpu_milli): \"lots\" is not an integer");
  auto yaml = cluster_from_yaml("nodes: 3\n", "c.yaml");
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(yaml.error().message().rfind("c.yaml: ", 0), 0u) << yaml.error().message();
}

TEST(LoadtestCluster, FromNodeListAndYaml) {
  auto c = cluster_from_node_list(testdata("openb_nodes_excerpt.csv"), "n.csv");
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_EQ(c->nodes.size(), 20u);
  EXPECT_EQ(c->nodes[0].meta.name, "openb-node-0000");
  EXPECT_EQ(c->nodes[0].allocatable.cpu_milli, 64000);
  EXPECT_EQ(c->nodes[0].allocatable.memory_bytes, int64_t{262144} << 20);
  EXPECT_EQ(c->nodes[0].allocatable.get(scheduler::gpu_resource), 2);
  EXPECT_EQ(*c->nodes[0].meta.labels.find("phalanx.io/gpu-model"), "p100");
  auto y = cluster_from_yaml(testdata("pollux_cluster.yaml"), "p.yaml");
  ASSERT_TRUE(y.ok()) << y.error().message();
  EXPECT_EQ(y->nodes.size(), 16u);
  EXPECT_EQ(y->nodes[0].allocatable.get(scheduler::gpu_resource), 4);
}

TEST(LoadtestTrace, SimJobsAreGangsInSubmitOrder) {
  auto t = read_trace(testdata("philly_excerpt.csv"), "p.csv");
  ASSERT_TRUE(t.ok());
  auto c = cluster_from_vc_sizes(testdata("vc_nodes_excerpt.csv"), "vc.csv", 0.5);
  ASSERT_TRUE(c.ok());
  replay_model m;
  m.pod_interval_ns = 30'000'000'000;
  auto jobs = to_sim_jobs(*t, m, *c);
  ASSERT_EQ(jobs.size(), 60u);
  for (std::size_t i = 1; i < jobs.size(); ++i)
    EXPECT_LE(jobs[i - 1].arrival, jobs[i].arrival);
  EXPECT_EQ(jobs.front().arrival, scheduler::duration{0});
  for (const auto& j : jobs) {
    EXPECT_EQ(static_cast<std::size_t>(j.group.min_member), j.pods.size());
    EXPECT_EQ(j.wait_for_gang, j.pods.size() > 1);
    for (std::size_t k = 0; k < j.pods.size(); ++k) {
      EXPECT_EQ(j.pods[k].created_after, std::chrono::seconds(30 * k));
      ASSERT_TRUE(j.pods[k].spec.constraints);
      EXPECT_TRUE(j.pods[k].spec.constraints->node_selector.contains(vc_label));
      EXPECT_EQ(j.pods[k].spec.requests.pods, 1);
    }
  }
}

TEST(LoadtestTrace, AppDurationsParse) {
  auto d = parse_app_durations("cifar10=15m,ncf=90s");
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->at("cifar10"), 900);
  EXPECT_EQ(d->at("ncf"), 90);
  auto bad = parse_app_durations("cifar10=15m,ncf");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "item 2 \"ncf\": expected APPLICATION=DURATION");
  EXPECT_FALSE(parse_app_durations("a=0s").ok());
}

TEST(LoadtestTrace, FormatNamesAreComplete) {
  for (int i = 0; i <= static_cast<int>(trace_format_last); ++i)
    EXPECT_NE(to_string(static_cast<trace_format>(i)), "unknown");
}

} // namespace
} // namespace phalanx::loadtest
