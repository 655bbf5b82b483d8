// The real kubectl (1.32, on the machine at /usr/bin/kubectl) against the real phalanxd in
// standalone mode: create -f of a Volcano Job, and get of every kind with -o wide and -o yaml.
// (api/tests/kubectl_test.cpp covers more of kubectl against the server over a fake service.)

#include "tests/cli/harness.hpp"

#include <gtest/gtest.h>

namespace phalanx::cli_test {
namespace {

using namespace std::chrono_literals;

class KubectlAgainstPhalanxd : public daemon_test {
 protected:
  ctl_result kubectl(std::vector<std::string> args) {
    ctl_options o;
    o.program = "/usr/bin/kubectl";
    o.env = {{"KUBECONFIG", kubeconfig_}, {"HOME", home_.path()}};
    o.timeout = 90s;
    std::vector<std::string> argv = {"--server", d_->url(), "--cache-dir", home_.path() + "/cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_ctl(argv, o);
  }

  scratch_dir home_;
  std::string kubeconfig_ = home_.write("kubeconfig", "");
};

TEST_F(KubectlAgainstPhalanxd, CreatesAVolcanoJobAndShowsEveryKind) {
  auto created = kubectl({"create", "--validate=false", "-f", example("tensorflow-job.yaml")});
  ASSERT_TRUE(succeeded(created));
  EXPECT_EQ(created.out, "job.batch.volcano.sh/tensorflow-dist-mnist created\n");

  // The gang runs: three pods Running on nodes, as kubectl shows them.
  ASSERT_TRUE(eventually([&] {
    auto pods = kubectl({"get", "pods", "-o", "wide"});
    int running = 0;
    for (const auto& line : split_lines(pods.out))
      if (line.find("tensorflow-dist-mnist-") == 0 && line.find("Running") != std::string::npos)
        ++running;
    return running == 3;
  })) << kubectl({"get", "pods", "-o", "wide"}).out;

  auto jobs = kubectl({"get", "vcjob"});
  ASSERT_TRUE(succeeded(jobs));
  EXPECT_FALSE(row_of(jobs.out, "tensorflow-dist-mnist").empty()) << jobs.out;
  auto groups = kubectl({"get", "podgroups", "-o", "wide"});
  ASSERT_TRUE(succeeded(groups));
  EXPECT_NE(groups.out.find("tensorflow-dist-mnist-"), std::string::npos) << groups.out;
  EXPECT_NE(groups.out.find("Running"), std::string::npos) << groups.out;
  auto queues = kubectl({"get", "queues"});
  ASSERT_TRUE(succeeded(queues));
  EXPECT_FALSE(row_of(queues.out, "default").empty()) << queues.out;
  auto nodes = kubectl({"get", "nodes", "-o", "wide"});
  ASSERT_TRUE(succeeded(nodes));
  EXPECT_FALSE(row_of(nodes.out, "gpu-0").empty()) << nodes.out;

  auto yaml = kubectl({"get", "pod", "tensorflow-dist-mnist-ps-0", "-o", "yaml"});
  ASSERT_TRUE(succeeded(yaml));
  EXPECT_NE(yaml.out.find("nodeName: "), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("phase: Running"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("scheduling.k8s.io/group-name: tensorflow-dist-mnist-"),
            std::string::npos)
      << yaml.out;

  auto missing = kubectl({"get", "pod", "nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("\"nope\" not found"), std::string::npos) << missing.err;
}

} // namespace
} // namespace phalanx::cli_test
