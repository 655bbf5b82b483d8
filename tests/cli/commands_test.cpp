// phalanxctl describe, delete, job suspend|resume, queue open|close, node cordon|uncordon,
// version and help, against a real phalanxd.

#include "tests/cli/harness.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::cli_test {
namespace {

namespace json = boost::json;

std::string job_yaml(const std::string& name, const std::string& cpu, int replicas,
                     const std::string& queue = "default") {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         ", labels: {team: ml}}\nspec:\n  queue: " + queue + "\n  minAvailable: " +
         std::to_string(replicas) + "\n  tasks:\n    - name: t\n      replicas: " +
         std::to_string(replicas) +
         "\n      template:\n        spec:\n          containers:\n            - name: c\n"
         "              image: busybox\n              resources: {requests: {cpu: \"" + cpu +
         "\", memory: 1Gi}}\n";
}

std::string job_path(const std::string& name) {
  return "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/" + name;
}

std::string job_phase(const daemon& d, const std::string& name) {
  return field(d.get_json(job_path(name)), {"status", "state", "phase"});
}

std::size_t pod_count(const daemon& d, const std::string& selector) {
  auto list = d.get_json("/api/v1/namespaces/default/pods?labelSelector=" + selector);
  return list.is_object() ? list.at("items").as_array().size() : 0;
}

class CliDescribe : public daemon_test {};

TEST_F(CliDescribe, PendingPodShowsItsReasonAndConditions) {
  ctl_options in;
  in.input = "apiVersion: v1\nkind: Pod\nmetadata: {name: huge}\nspec:\n  containers:\n"
             "    - name: c\n      image: busybox\n      resources: {requests: {cpu: \"100\"}}\n";
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  ctl_result d;
  ASSERT_TRUE(eventually([&] {
    d = ctl({"describe", "pod", "huge"});
    return d.out.find("Pending Reason:") != std::string::npos &&
           d.out.find("Insufficient cpu") != std::string::npos;
  })) << d.out << d.err;
  EXPECT_EQ(described(d.out, "Name"), "huge");
  EXPECT_EQ(described(d.out, "Namespace"), "default");
  EXPECT_EQ(described(d.out, "Status"), "Pending");
  EXPECT_EQ(described(d.out, "Node"), "<none>");
  EXPECT_EQ(described(d.out, "Requests"), "cpu=100");
  EXPECT_TRUE(has_row(d.out, {"PodScheduled", "False", "Unschedulable"})) << d.out;
  EXPECT_NE(described(d.out, "Pending Reason").value_or("").find("Insufficient cpu"),
            std::string::npos)
      << d.out;
}

TEST_F(CliDescribe, PendingJobShowsItsPodGroupsReasonAndEvents) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job_yaml("big", "40", 2)))));
  ctl_result d;
  ASSERT_TRUE(eventually([&] {
    d = ctl({"describe", "job", "big"});
    return d.out.find("PodGroupPending") != std::string::npos;
  })) << d.out << d.err;
  // The reason names the task, the amount and the nodes (DESIGN.md section 1).
  EXPECT_NE(described(d.out, "Pending Reason")
                .value_or("")
                .find("t needs 40 cpu per pod; the most allocatable on any matching node is 32 "
                      "cpu"),
            std::string::npos)
      << d.out;
  EXPECT_TRUE(has_row(d.out, {"Warning", "PodGroupPending"})) << d.out;
  EXPECT_TRUE(has_row(d.out, {"Normal", "Created"})) << d.out;
  EXPECT_EQ(described(d.out, "Labels"), "team=ml");
  EXPECT_EQ(described(d.out, "Phase"), "Pending");
  auto table = ctl({"get", "jobs"});
  EXPECT_EQ(row_of(table.out, "big").at(2), "Pending");
  EXPECT_EQ(row_of(table.out, "big").at(6), "2");  // PENDING pods.
  // The PodGroup's own describe says the same, with its Unschedulable condition.
  auto job = object(job_path("big"));
  auto pg = ctl({"describe", "pg", "big-" + field(job, {"metadata", "uid"})});
  ASSERT_TRUE(succeeded(pg));
  EXPECT_TRUE(has_row(pg.out, {"Unschedulable", "True"})) << pg.out;
  EXPECT_EQ(described(pg.out, "Min Member"), "2");
}

TEST_F(CliDescribe, EveryObjectOfAKindAndNodesAndQueues) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml")})));
  auto all = ctl({"describe", "queues"});
  ASSERT_TRUE(succeeded(all));
  std::vector<std::string> names;
  for (const auto& l : split_lines(all.out))
    if (l.rfind("Name:", 0) == 0)
      names.push_back(cells(l).at(1));
  EXPECT_EQ(names, (std::vector<std::string>{"default", "production", "research"})) << all.out;
  auto node = ctl({"describe", "node", "gpu-0"});
  ASSERT_TRUE(succeeded(node));
  EXPECT_EQ(described(node.out, "Allocatable"), "cpu=32, memory=128Gi, nvidia.com/gpu=4, pods=110");
  EXPECT_EQ(described(node.out, "Labels"), "accelerator=nvidia-a100");
  EXPECT_EQ(described(node.out, "Unschedulable"), "false");
  // Its pods and what they take, as kubectl describe node shows them.
  EXPECT_EQ(described(node.out, "Non-terminated Pods"), "(0 in total)") << node.out;
  EXPECT_NE(node.out.find("Allocated resources:"), std::string::npos) << node.out;
  EXPECT_EQ(described(node.out, "cpu"), "0 (0%)") << node.out;
  ctl_options in;
  in.input = "apiVersion: v1\nkind: Pod\nmetadata: {name: busy}\nspec:\n  nodeSelector: "
             "{accelerator: nvidia-a100}\n  containers:\n    - name: c\n      image: i\n"
             "      resources: {requests: {cpu: \"8\"}}\n";
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  // Bound first, Running a moment later (the simulated kubelet's start): wait for both.
  ASSERT_TRUE(eventually([&] {
    node = ctl({"describe", "node", "gpu-0"});
    return described(node.out, "Non-terminated Pods") == "(1 in total)" &&
           described(node.out, "default/busy") == "Running";
  })) << node.out;
  EXPECT_EQ(described(node.out, "cpu"), "8 (25%)") << node.out;
  auto missing = ctl({"describe", "queue", "nope"});
  EXPECT_TRUE(failed_with(missing, 1));
  EXPECT_NE(missing.err.find("Error from server (NotFound)"), std::string::npos) << missing.err;
}

class CliDelete : public daemon_test {};

TEST_F(CliDelete, AJobTakesItsPodsAlong) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("mpi-job.yaml")})));
  ASSERT_TRUE(eventually([&] { return pod_count(*d_, "volcano.sh%2Fjob-name%3Dlm-mpi-job") == 4; }));
  auto r = ctl({"delete", "vcjob", "lm-mpi-job"});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "job.batch.volcano.sh \"lm-mpi-job\" deleted\n");
  EXPECT_TRUE(eventually([&] { return pod_count(*d_, "volcano.sh%2Fjob-name%3Dlm-mpi-job") == 0; }));
  auto again = ctl({"delete", "job", "lm-mpi-job"});
  EXPECT_TRUE(failed_with(again, 1));
  EXPECT_NE(again.err.find("Error from server (NotFound)"), std::string::npos) << again.err;
  EXPECT_TRUE(succeeded(ctl({"delete", "job", "lm-mpi-job", "--ignore-not-found"})));
}

TEST_F(CliDelete, FromAFileAndBySelector) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml")})));
  auto r = ctl({"delete", "-f", example("queues.yaml")});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh \"research\" deleted\n"
                   "queue.scheduling.volcano.sh \"production\" deleted\n");
  auto q = ctl({"get", "queues", "-o", "name"});
  EXPECT_EQ(q.out, "queue.scheduling.volcano.sh/default\n");

  ctl_options in;
  in.input = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {app: x}}\nspec: {containers: [{name: c, image: i}]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, labels: {app: x}}\nspec: {containers: [{name: c, image: i}]}\n"
             "---\napiVersion: v1\nkind: Pod\nmetadata: {name: c, labels: {app: other}}\nspec: {containers: [{name: c, image: i}]}\n";
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  auto sel = ctl({"delete", "pods", "-l", "app=x"});
  ASSERT_TRUE(succeeded(sel));
  EXPECT_EQ(sel.out, "pod \"a\" deleted\npod \"b\" deleted\n");
  EXPECT_EQ(ctl({"get", "pods", "-o", "name"}).out, "pod/c\n");
}

class CliActions : public daemon_test {};

TEST_F(CliActions, JobSuspendDeletesItsPodsAndResumeCreatesThemAgain) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job_yaml("sj", "1", 2)))));
  ASSERT_TRUE(eventually([&] { return job_phase(*d_, "sj") == "Running"; }));
  auto s = ctl({"job", "suspend", "sj"});
  ASSERT_TRUE(succeeded(s));
  EXPECT_EQ(s.out, "job.batch.volcano.sh/sj suspended\n");
  EXPECT_TRUE(eventually([&] { return pod_count(*d_, "volcano.sh%2Fjob-name%3Dsj") == 0; }));
  EXPECT_EQ(job_phase(*d_, "sj"), "Aborted");
  EXPECT_EQ(row_of(ctl({"get", "jobs"}).out, "sj").at(2), "Aborted");

  auto r = ctl({"job", "resume", "sj"});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "job.batch.volcano.sh/sj resumed\n");
  EXPECT_TRUE(eventually([&] { return pod_count(*d_, "volcano.sh%2Fjob-name%3Dsj") == 2; }));
  auto desc = ctl({"describe", "job", "sj"});
  EXPECT_TRUE(has_row(desc.out, {"Normal", "Suspended"})) << desc.out;
  EXPECT_TRUE(has_row(desc.out, {"Normal", "Resumed"})) << desc.out;
  // As Volcano's AbortJob and ResumeJob: Aborting then Aborted in its history, and the resume
  // counted as a retry.
  auto yaml = ctl({"get", "job", "sj", "-o", "jsonpath={.status.retryCount} "
                                              "{.status.conditions[*].status}"});
  ASSERT_TRUE(succeeded(yaml)) << yaml.err;
  EXPECT_EQ(yaml.out.substr(0, 2), "1 ") << yaml.out;
  EXPECT_NE(yaml.out.find("Aborting Aborted"), std::string::npos) << yaml.out;
}

// A resumed job runs again: its gang completed when suspend deleted every pod, so the resume
// starts a new incarnation of the gang for the re-created pods.
TEST_F(CliActions, ResumedJobRunsAgain) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job_yaml("rj", "1", 2)))));
  ASSERT_TRUE(eventually([&] { return job_phase(*d_, "rj") == "Running"; }));
  ASSERT_TRUE(succeeded(ctl({"job", "suspend", "rj"})));
  ASSERT_TRUE(eventually([&] { return pod_count(*d_, "volcano.sh%2Fjob-name%3Drj") == 0; }));
  ASSERT_TRUE(succeeded(ctl({"job", "resume", "rj"})));
  EXPECT_TRUE(eventually([&] { return job_phase(*d_, "rj") == "Running"; },
                         std::chrono::seconds(10)))
      << ctl({"describe", "job", "rj"}).out;
}

TEST_F(CliActions, QueueCloseRefusesNewWorkAndOpenAcceptsItAgain) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml")})));
  auto c = ctl({"queue", "close", "production"});
  ASSERT_TRUE(succeeded(c));
  EXPECT_EQ(c.out, "queue.scheduling.volcano.sh/production closed\n");
  EXPECT_EQ(row_of(ctl({"get", "queues"}).out, "production").at(2), "Closed");
  auto refused = ctl({"apply", "-f", "-"}, with_input(job_yaml("late", "1", 1, "production")));
  EXPECT_TRUE(failed_with(refused, 1));
  EXPECT_NE(refused.err.find("queue \"production\" is Closed"), std::string::npos) << refused.err;
  auto o = ctl({"queue", "open", "production"});
  ASSERT_TRUE(succeeded(o));
  EXPECT_EQ(o.out, "queue.scheduling.volcano.sh/production opened\n");
  EXPECT_EQ(row_of(ctl({"get", "queues"}).out, "production").at(2), "Open");
  auto accepted = ctl({"apply", "-f", "-"}, with_input(job_yaml("late", "1", 1, "production")));
  EXPECT_TRUE(succeeded(accepted));
  auto missing = ctl({"queue", "close", "nope"});
  EXPECT_TRUE(failed_with(missing, 1));
  EXPECT_NE(missing.err.find("NotFound"), std::string::npos) << missing.err;
}

TEST_F(CliActions, CordonedNodesTakeNoPodsUntilUncordoned) {
  for (const char* n : {"gpu-0", "gpu-1"}) {
    auto r = ctl({"node", "cordon", n});
    ASSERT_TRUE(succeeded(r));
    EXPECT_EQ(r.out, "node/" + std::string(n) + " cordoned\n");
  }
  auto nodes = ctl({"get", "nodes"});
  EXPECT_EQ(row_of(nodes.out, "gpu-0").at(1), "Ready,SchedulingDisabled");
  // kubectl's --no-headers and --show-labels.
  auto bare = ctl({"get", "nodes", "gpu-0", "--no-headers", "--show-labels"});
  ASSERT_TRUE(succeeded(bare)) << bare.err;
  EXPECT_EQ(bare.out.rfind("gpu-0 ", 0), 0u) << bare.out;
  EXPECT_NE(bare.out.find("accelerator=nvidia-a100"), std::string::npos) << bare.out;
  EXPECT_EQ(row_of(nodes.out, "cpu-a-0").at(1), "Ready");
  // A pod that only GPU nodes can take waits while they are cordoned.
  ctl_options in;
  in.input = "apiVersion: v1\nkind: Pod\nmetadata: {name: g}\nspec:\n  nodeSelector: {accelerator: "
             "nvidia-a100}\n  containers:\n    - name: c\n      image: i\n      resources: {limits: "
             "{nvidia.com/gpu: 1}}\n";
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  ctl_result d;
  ASSERT_TRUE(eventually([&] {
    d = ctl({"describe", "pod", "g"});
    return d.out.find("Pending Reason:") != std::string::npos;
  })) << d.out;
  EXPECT_EQ(field(object("/api/v1/namespaces/default/pods/g"), {"status", "phase"}), "Pending");
  auto u = ctl({"uncordon", "gpu-1"});
  ASSERT_TRUE(succeeded(u));
  EXPECT_EQ(u.out, "node/gpu-1 uncordoned\n");
  EXPECT_TRUE(eventually([&] {
    return field(object("/api/v1/namespaces/default/pods/g"), {"spec", "nodeName"}) == "gpu-1";
  }));
  EXPECT_TRUE(succeeded(ctl({"cordon", "cpu-a-0"})));
  EXPECT_EQ(row_of(ctl({"get", "no", "cpu-a-0"}).out, "cpu-a-0").at(1), "Ready,SchedulingDisabled");
  // As kubectl says it when there is nothing to do.
  auto again = ctl({"cordon", "cpu-a-0"});
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(again.out, "node/cpu-a-0 already cordoned\n");
  EXPECT_TRUE(succeeded(ctl({"node", "uncordon", "cpu-a-0"})));
  auto uncordoned = ctl({"uncordon", "cpu-a-0"});
  ASSERT_TRUE(succeeded(uncordoned));
  EXPECT_EQ(uncordoned.out, "node/cpu-a-0 already uncordoned\n");
}

class CliVersion : public daemon_test {};

TEST_F(CliVersion, ClientAndServer) {
  auto r = ctl({"version"});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "Client Version: v0.1.0\nServer Version: v1.32.0-phalanx (phalanx, linux/amd64)\n");
  auto j = ctl_json({"version"});
  EXPECT_EQ(field(j, {"clientVersion", "gitVersion"}), "v0.1.0");
  EXPECT_EQ(field(j, {"serverVersion", "gitVersion"}), "v1.32.0-phalanx");
  auto y = ctl({"version", "-o", "yaml"});
  ASSERT_TRUE(succeeded(y));
  // Keys sorted, as kubectl's YAML printer writes them.
  EXPECT_NE(y.out.find("serverVersion:\n  compiler: phalanx\n"), std::string::npos) << y.out;
  EXPECT_NE(y.out.find("\n  major: \"1\"\n"), std::string::npos) << y.out;
  // --client needs no server.
  auto c = run_ctl({"version", "--client", "--server", "http://127.0.0.1:1"});
  ASSERT_TRUE(succeeded(c));
  EXPECT_EQ(c.out, "Client Version: v0.1.0\n");
  // phalanxd names its build, as its phalanx_build_info series does.
  ctl_options daemon;
  daemon.program = loadtest::built_phalanxd_path();
  auto d = run_ctl({"--version"}, daemon);
  ASSERT_TRUE(succeeded(d)) << d.err;
  EXPECT_EQ(d.out.rfind("phalanxd 0.1.0 (", 0), 0u) << d.out;
}

TEST(CliHelp, OverviewAndPerCommand) {
  auto r = run_ctl({});
  ASSERT_TRUE(succeeded(r));
  EXPECT_NE(r.out.find("Usage: phalanxctl COMMAND"), std::string::npos);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos);
  auto g = run_ctl({"get", "--help"});
  ASSERT_TRUE(succeeded(g));
  EXPECT_NE(g.out.find("--output-watch-events"), std::string::npos);
  auto a = run_ctl({"help", "apply"});
  ASSERT_TRUE(succeeded(a));
  EXPECT_NE(a.out.find("unchanged"), std::string::npos);
  // A topic it does not know: said once, on stderr, and a usage error.
  auto bogus = run_ctl({"help", "bogus"});
  EXPECT_TRUE(failed_with(bogus, 2));
  EXPECT_EQ(bogus.out, "");
  EXPECT_EQ(bogus.err, "error: unknown help topic \"bogus\"\nSee 'phalanxctl --help' for usage.\n");
  for (const char* topic : {"get", "delete", "job", "queue", "node", "version", "help"})
    EXPECT_TRUE(succeeded(run_ctl({"help", topic}))) << topic;
}

} // namespace
} // namespace phalanx::cli_test
