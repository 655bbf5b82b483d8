// phalanxd's operator log (issue 30), on a real daemon: what an operator does (apply a job, a
// gang that cannot fit, suspend, cordon, close a queue, delete a node with running pods) each
// writes its line, and with --log-format json every line of the log is one JSON object that
// starts with its timestamp, level and message.

#include "tests/cli/harness.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace phalanx::cli_test {
namespace {

namespace json = boost::json;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class OperatorLog : public ::testing::Test {
 protected:
  void SetUp() override { d_ = daemon::start(daemon_flags()); }
  virtual std::vector<std::string> daemon_flags() const { return {"--log-format", "json"}; }

  ctl_result ctl(std::vector<std::string> args, const ctl_options& options = {}) const {
    return d_->ctl(std::move(args), options);
  }

  // The log's lines, parsed; a line that is not a JSON object fails the test.
  std::vector<json::object> lines() const {
    std::vector<json::object> out;
    for (const auto& text : split_lines(read_all(d_->process().log_file()))) {
      if (text.empty())
        continue;
      boost::system::error_code ec;
      auto v = json::parse(text, ec);
      EXPECT_FALSE(ec) << "not JSON: " << text;
      EXPECT_TRUE(!ec && v.is_object()) << "not an object: " << text;
      if (!ec && v.is_object())
        out.push_back(v.as_object());
    }
    return out;
  }

  // The first line whose msg is `msg` and whose `key` is `value`; null when none yet.
  std::optional<json::object> line_of(const std::string& msg, const std::string& key,
                                      const std::string& value) const {
    for (auto& l : lines())
      if (l.at("msg") == msg.c_str() && l.contains(key) && l.at(key).is_string() &&
          l.at(key).as_string() == value.c_str())
        return l;
    return std::nullopt;
  }

  bool logged(const std::string& msg, const std::string& key, const std::string& value) const {
    return eventually([&] { return line_of(msg, key, value).has_value(); },
                      std::chrono::seconds(15));
  }

  std::unique_ptr<daemon> d_;
};

ctl_options with_input(std::string text) {
  ctl_options o;
  o.input = std::move(text);
  return o;
}

std::string job_yaml(const std::string& name, const std::string& cpu, int replicas) {
  return "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: " + name +
         "}\nspec:\n  minAvailable: " + std::to_string(replicas) +
         "\n  tasks:\n    - name: t\n      replicas: " + std::to_string(replicas) +
         "\n      template:\n        spec:\n          containers:\n            - name: c\n"
         "              image: busybox\n              resources: {requests: {cpu: \"" + cpu +
         "\", memory: 1Gi}}\n";
}

TEST_F(OperatorLog, WhatAnOperatorDoesIsLoggedAsOneJsonObjectALine) {
  // A job that fits: its gang is admitted and placed; its suspension is a job event.
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job_yaml("train", "1", 2)))));
  EXPECT_TRUE(logged("gang admitted", "job", "default/train"));
  ASSERT_TRUE(logged("gang placed", "job", "default/train"));
  auto placed = *line_of("gang placed", "job", "default/train");
  EXPECT_EQ(placed.at("queue"), "default");
  EXPECT_EQ(placed.at("phase"), "Running");
  EXPECT_EQ(placed.at("min_member"), 2);
  ASSERT_TRUE(succeeded(ctl({"job", "suspend", "train"})));
  EXPECT_TRUE(logged("job event", "reason", "Suspended")) << read_all(d_->process().log_file());

  // A gang no node can hold says why.
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(unplaceable_gang_yaml()))));
  // Once per new reason: while one pod exists it waits for the other, then for room.
  auto says = [&](const std::string& words) {
    return eventually(
        [&] {
          for (const auto& l : lines())
            if (l.at("msg") == "gang unschedulable" && l.at("gang") == "default/huge-gang" &&
                std::string(l.at("reason").as_string()).find(words) != std::string::npos)
              return true;
          return false;
        },
        std::chrono::seconds(15));
  };
  EXPECT_TRUE(says("Insufficient cpu")) << read_all(d_->process().log_file());

  // Cordon, a queue closed, a node deleted with its pods running.
  ASSERT_TRUE(succeeded(ctl({"cordon", "cpu-b-0"})));
  EXPECT_TRUE(logged("node cordoned", "node", "cpu-b-0"));
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml")})));
  ASSERT_TRUE(succeeded(ctl({"queue", "close", "production"})));
  ASSERT_TRUE(logged("queue changed", "queue", "production"));
  EXPECT_EQ(line_of("queue changed", "queue", "production")->at("state"), "Closed");
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job_yaml("held", "12", 1)))));
  ASSERT_TRUE(logged("gang placed", "job", "default/held"));
  std::string node;
  ASSERT_TRUE(eventually([&] {
    node = field(d_->get_json("/api/v1/namespaces/default/pods/held-t-0"), {"spec", "nodeName"});
    return !node.empty();
  }));
  ASSERT_TRUE(succeeded(ctl({"delete", "node", node})));
  ASSERT_TRUE(logged("node removed", "node", node));
  EXPECT_GE(line_of("node removed", "node", node)->at("pods").as_int64(), 1);

  // The rounds' details are debug and trace lines: none at the default level.
  for (const auto& l : lines())
    EXPECT_TRUE(l.at("level") == "info" || l.at("level") == "warn" || l.at("level") == "error")
        << json::serialize(l);

  // Every line: ts, level and msg first, the timestamp in UTC.
  for (const auto& l : lines()) {
    ASSERT_GE(l.size(), 3u);
    auto key = l.begin();
    EXPECT_EQ(key->key(), "ts");
    EXPECT_EQ((++key)->key(), "level");
    EXPECT_EQ((++key)->key(), "msg");
    EXPECT_EQ(std::string(l.at("ts").as_string()).back(), 'Z');
  }
}

// At --log-level trace the details of each round: the gang's rounds at debug, each node's
// decision and each vote at trace, with the gang named as its PodGroup.
class OperatorLogDetails : public OperatorLog {
 protected:
  std::vector<std::string> daemon_flags() const override {
    return {"--log-format", "json", "--log-level", "trace"};
  }
};

TEST_F(OperatorLogDetails, EachRoundAndEachNodesVoteIsALine) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(job_yaml("train", "1", 2)))));
  ASSERT_TRUE(logged("gang placed", "job", "default/train"));
  const std::string gang(line_of("gang placed", "job", "default/train")->at("gang").as_string());
  ASSERT_TRUE(logged("round committed", "gang", gang)) << read_all(d_->process().log_file());
  const auto planned = *line_of("round planned", "gang", gang);
  EXPECT_EQ(planned.at("level"), "debug");
  EXPECT_EQ(planned.at("pods"), 2);
  const auto committed = *line_of("round committed", "gang", gang);
  EXPECT_EQ(committed.at("round"), planned.at("round"));
  EXPECT_EQ(committed.at("pods"), 2);
  EXPECT_TRUE(line_of("round reserved", "gang", gang).has_value());
  // One reserve and one vote per node of the round, each "reserved".
  int reserves = 0;
  int votes = 0;
  for (const auto& l : lines()) {
    if (!l.contains("gang") || l.at("gang") != gang.c_str())
      continue;
    if (l.at("msg") == "reserve" || l.at("msg") == "vote") {
      EXPECT_EQ(l.at("level"), "trace");
      EXPECT_EQ(l.at("vote"), "reserved") << json::serialize(l);
      EXPECT_FALSE(std::string(l.at("node").as_string()).empty());
      ++(l.at("msg") == "reserve" ? reserves : votes);
    }
  }
  EXPECT_EQ(reserves, planned.at("nodes").as_int64());
  EXPECT_EQ(votes, planned.at("nodes").as_int64());

  // A gang no node can hold: each round that finds nothing says so, with the planner's code.
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(unplaceable_gang_yaml()))));
  ASSERT_TRUE(logged("round found no placement", "gang", "default/huge-gang"))
      << read_all(d_->process().log_file());
  EXPECT_EQ(line_of("round found no placement", "gang", "default/huge-gang")->at("level"),
            "debug");
}

TEST(OperatorLogFlag, AnUnknownFormatIsRefusedNamingTheFlag) {
  scratch_dir dir;
  loadtest::phalanxd_options o;
  o.data_dir = dir.path() + "/data";
  o.extra_args = {"--log-format", "xml"};
  auto p = loadtest::phalanxd_process::start(o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("--log-format: unknown format \"xml\" (logfmt or json)"),
            std::string::npos)
      << p.error().message();
}

} // namespace
} // namespace phalanx::cli_test
