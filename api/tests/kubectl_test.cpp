// The real kubectl (1.32) against the server over the fake service: discovery, Tables, short
// names, -o yaml, create -f of a Volcano manifest, cordon/uncordon. Skipped, with the reason,
// when kubectl is not installed.

#include "api/tests/server_fixture.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <regex>

namespace phalanx::api::test {
namespace {

using namespace std::chrono_literals;

class Kubectl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(PHALANX_KUBECTL, X_OK) != 0)
      GTEST_SKIP() << "kubectl is not installed at " PHALANX_KUBECTL
                      ": this test needs the real kubectl 1.32 (Debian: the kubectl package or "
                      "google-cloud-sdk's)";
    s_ = start_server();
    ASSERT_TRUE(s_.srv);
    kubeconfig_ = dir_.write("kubeconfig", "");
  }

  command_result kubectl(std::vector<std::string> args) {
    std::vector<std::string> argv = {PHALANX_KUBECTL, "--server",
                                     "http://127.0.0.1:" + std::to_string(s_.port()),
                                     "--cache-dir", dir_.path() + "/cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run_command(argv, 90s, {{"KUBECONFIG", kubeconfig_}, {"HOME", dir_.path()}});
    std::string cmd;
    for (const auto& a : args)
      cmd += " " + a;
    // Shown in the test log: what kubectl printed.
    std::cout << "$ kubectl" << cmd << "   (exit " << r.exit_code << ")\n" << r.out << r.err;
    return r;
  }

  static bool has_line(const std::string& out, const std::string& pattern) {
    std::regex re(pattern);
    std::size_t start = 0;
    while (start < out.size()) {
      std::size_t end = out.find('\n', start);
      std::string line = out.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (std::regex_search(line, re))
        return true;
      if (end == std::string::npos)
        break;
      start = end + 1;
    }
    return false;
  }

  temp_dir dir_;
  std::string kubeconfig_;
  running_server s_;
};

TEST_F(Kubectl, GetPodsAllNamespaces) {
  auto r = kubectl({"get", "pods", "-A"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, R"(^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^default\s+resnet-ps-0\s+0/1\s+Pending\s+0\s+\S+$)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^default\s+resnet-worker-0\s+0/1\s+Pending)")) << r.out;
}

TEST_F(Kubectl, GetNodesWide) {
  auto r = kubectl({"get", "nodes", "-o", "wide"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, R"(^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$)"))
    << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^cpu-node-1\s+Ready\s+worker\s)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^cpu-node-2\s+Ready,SchedulingDisabled\s+<none>\s)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^gpu-node-1\s+Ready\s)")) << r.out;
}

TEST_F(Kubectl, GetPodGroupsAllNamespacesAndShortName) {
  auto r = kubectl({"get", "podgroups", "-A"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, R"(^NAMESPACE\s+NAME\s+STATUS\s+MINMEMBER\s+RUNNINGS\s+AGE$)")) << r.out;
  EXPECT_TRUE(has_line(r.out, R"(^default\s+resnet-gang\s+Pending\s+4\s+0\s+\S+$)")) << r.out;
  auto wide = kubectl({"get", "pg", "-A", "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_TRUE(has_line(wide.out, R"(^default\s+resnet-gang\s+Pending\s+4\s+0\s+\S+\s+research$)"))
    << wide.out;
}

TEST_F(Kubectl, GetQueues) {
  auto r = kubectl({"get", "queues"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(r.out, R"(^NAME\s+AGE$)")) << r.out;
  for (auto q : {"default", "research", "production", "closed-q"})
    EXPECT_TRUE(has_line(r.out, std::string("^") + q + R"(\s+\S+$)")) << q << "\n" << r.out;
  auto wide = kubectl({"get", "q", "-o", "wide"});
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_TRUE(has_line(wide.out, R"(^NAME\s+AGE\s+WEIGHT\s+STATE$)")) << wide.out;
  EXPECT_TRUE(has_line(wide.out, R"(^closed-q\s+\S+\s+1\s+Closed$)")) << wide.out;
}

TEST_F(Kubectl, CreateTensorflowJobThenGetVcjobYaml) {
  auto created = kubectl({"create", "-f", example_path("tensorflow-job.yaml")});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_NE(created.out.find("job.batch.volcano.sh/tensorflow-dist-mnist created"),
            std::string::npos)
    << created.out;
  ASSERT_TRUE(s_.svc->find(resource_kind::job, "default", "tensorflow-dist-mnist"));

  auto yaml = kubectl({"get", "vcjob", "-A", "-o", "yaml"});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  auto docs = parse_yaml(yaml.out);
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  const auto& list = docs->front();
  EXPECT_EQ(list.at("kind"), "List");
  const auto& job = list.at("items").at(0);
  EXPECT_EQ(job.at("kind"), "Job");
  EXPECT_EQ(job.at("metadata").at("name"), "tensorflow-dist-mnist");
  EXPECT_EQ(job.at("spec").at("minAvailable"), 3);
  // The task templates come back as the user wrote them.
  EXPECT_EQ(job.at("spec").at("tasks").at(1).at("template").at("spec").at("containers").at(0)
              .at("ports").at(0).at("name"),
            "tfjob-port");
  EXPECT_EQ(job.at("status").at("state").at("phase"), "Pending");

  auto table = kubectl({"get", "vj", "-A", "-o", "wide"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_TRUE(has_line(table.out, R"(^NAMESPACE\s+NAME\s+STATUS\s+MINAVAILABLE\s+RUNNINGS\s+AGE\s+QUEUE$)"))
    << table.out;
  EXPECT_TRUE(has_line(table.out, R"(^default\s+tensorflow-dist-mnist\s+Pending\s+3\s+0\s+\S+\s+default$)"))
    << table.out;
}

TEST_F(Kubectl, CordonAndUncordon) {
  auto r = kubectl({"cordon", "cpu-node-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("node/cpu-node-1 cordoned"), std::string::npos) << r.out;
  auto n = s_.svc->find(resource_kind::node, "", "cpu-node-1");
  ASSERT_TRUE(n);
  EXPECT_TRUE(std::get<node_object>(*n).node.unschedulable);

  auto u = kubectl({"uncordon", "cpu-node-1"});
  ASSERT_EQ(u.exit_code, 0) << u.err;
  EXPECT_NE(u.out.find("node/cpu-node-1 uncordoned"), std::string::npos) << u.out;
  n = s_.svc->find(resource_kind::node, "", "cpu-node-1");
  EXPECT_FALSE(std::get<node_object>(*n).node.unschedulable);
}

// kubectl label and annotate send a merge patch, kubectl patch any of the three kinds.
TEST_F(Kubectl, LabelAnnotateAndPatchAPod) {
  auto l = kubectl({"label", "pod", "resnet-ps-0", "-n", "default", "team=vision"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("pod/resnet-ps-0 labeled"), std::string::npos) << l.out;
  auto a = kubectl({"annotate", "pod", "resnet-ps-0", "-n", "default", "owner=ml-infra"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  auto j = kubectl({"patch", "pod", "resnet-ps-0", "-n", "default", "--type=json", "-p",
                    R"([{"op":"add","path":"/metadata/labels/tier","value":"gold"}])"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto p = s_.svc->find(resource_kind::pod, "default", "resnet-ps-0");
  ASSERT_TRUE(p);
  const auto& meta = std::get<pod_object>(*p).pod.meta;
  ASSERT_TRUE(meta.labels.find("team"));
  EXPECT_EQ(*meta.labels.find("team"), "vision");
  ASSERT_TRUE(meta.labels.find("tier"));
  EXPECT_EQ(*meta.labels.find("tier"), "gold");
  ASSERT_TRUE(meta.annotations.find("owner"));
  EXPECT_EQ(*meta.annotations.find("owner"), "ml-infra");

  // A field a pod update may not change: kubectl says why and fails.
  auto bad = kubectl({"patch", "pod", "resnet-ps-0", "-n", "default", "-p",
                      R"({"spec":{"schedulerName":"other"}})"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("pod updates may not change fields"), std::string::npos) << bad.err;
}

TEST_F(Kubectl, ReportsServerErrors) {
  auto r = kubectl({"get", "pod", "nope", "-n", "default"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("NotFound"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"nope\" not found"), std::string::npos) << r.err;
}

} // namespace
} // namespace phalanx::api::test
