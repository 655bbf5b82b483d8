// Events in events.k8s.io/v1 and in /openapi/v3, and phalanxctl get events (issue 30), against a
// real phalanxd with the real kubectl (1.32, /usr/bin/kubectl): kubectl get
// events.events.k8s.io, its field selectors, kubectl explain, kubectl create of an Event reaching
// the server's 405 without --validate=false, and phalanxctl printing what kubectl prints.

#include "tests/cli/harness.hpp"

#include <gtest/gtest.h>

namespace phalanx::cli_test {
namespace {

using namespace std::chrono_literals;

class KubectlEvents : public kubectl_daemon_test {
 protected:
  void SetUp() override {
    kubectl_daemon_test::SetUp();
    // A gang no node can hold: its PodGroup's Unresolvable and its pods' FailedScheduling.
    auto gang = home_.write("gang.yaml", unplaceable_gang_yaml());
    ASSERT_TRUE(succeeded(ctl({"apply", "-f", gang})));
    ASSERT_TRUE(eventually([&] {
      auto r = ctl({"get", "events", "--field-selector", "reason=FailedScheduling", "-o", "name"});
      return split_lines(r.out).size() == 2;
    }));
  }
};

TEST_F(KubectlEvents, ServesEventsK8sIoV1ToKubectl) {
  auto table = kubectl({"get", "events.events.k8s.io"});
  ASSERT_TRUE(succeeded(table)) << table.err;
  auto lines = split_lines(table.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(cells(lines[0]),
            (std::vector<std::string>{"LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}))
      << table.out;
  bool pod_row = false;
  for (const auto& l : lines) {
    auto c = cells(l);
    pod_row = pod_row || (c.size() > 3 && c[1] == "Warning" && c[2] == "FailedScheduling" &&
                          c[3] == "pod/huge-0");
  }
  EXPECT_TRUE(pod_row) << table.out;

  // That version's field selectors: regarding.*, and involvedObject.* refused as kube-apiserver
  // refuses it.
  auto selected = kubectl({"get", "events.events.k8s.io", "--field-selector",
                           "regarding.name=huge-1,reason=FailedScheduling", "-o", "yaml"});
  ASSERT_TRUE(succeeded(selected)) << selected.err;
  EXPECT_NE(selected.out.find("apiVersion: events.k8s.io/v1\n"), std::string::npos)
      << selected.out;
  EXPECT_NE(selected.out.find("\n  regarding:\n"), std::string::npos) << selected.out;
  EXPECT_NE(selected.out.find("name: huge-1\n"), std::string::npos) << selected.out;
  EXPECT_NE(selected.out.find("  note: '0/"), std::string::npos) << selected.out;
  EXPECT_NE(selected.out.find("  deprecatedCount: "), std::string::npos) << selected.out;
  EXPECT_EQ(selected.out.find("huge-0"), std::string::npos) << selected.out;
  auto refused = kubectl({"get", "events.events.k8s.io", "--field-selector",
                          "involvedObject.name=huge-1"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("field label not supported: involvedObject.name"),
            std::string::npos)
      << refused.err;

  // kubectl explain reads the schemas of /openapi/v3.
  auto explained = kubectl({"explain", "events.involvedObject"});
  ASSERT_TRUE(succeeded(explained)) << explained.err;
  EXPECT_NE(explained.out.find("FIELD: involvedObject <ObjectReference>"), std::string::npos)
      << explained.out;
  EXPECT_NE(explained.out.find("  uid\t<string>"), std::string::npos) << explained.out;
  auto v1 = kubectl({"explain", "events", "--api-version=events.k8s.io/v1"});
  ASSERT_TRUE(succeeded(v1)) << v1.err;
  EXPECT_NE(v1.out.find("GROUP:      events.k8s.io"), std::string::npos) << v1.out;
  EXPECT_NE(v1.out.find("  regarding\t<ObjectReference>"), std::string::npos) << v1.out;
  EXPECT_NE(v1.out.find("  deprecatedCount\t<integer>"), std::string::npos) << v1.out;

  // kubectl create -f of an Event, with kubectl's default validation, reaches the server: it
  // leaves validation to it (/openapi/v3 lists fieldValidation), which refuses with 405.
  auto event = home_.write("event.yaml", R"(apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: mine}
regarding: {kind: Pod, name: huge-0, namespace: default}
reason: Mine
)");
  auto posted = kubectl({"create", "-f", event});
  EXPECT_EQ(posted.exit_code, 1);
  EXPECT_NE(posted.err.find("Error from server (MethodNotAllowed)"), std::string::npos)
      << posted.err;

  auto resources = kubectl({"api-resources", "--api-group=events.k8s.io", "--no-headers"});
  ASSERT_TRUE(succeeded(resources)) << resources.err;
  EXPECT_EQ(cells(resources.out),
            (std::vector<std::string>{"events", "ev", "events.k8s.io/v1", "true", "Event"}))
      << resources.out;
}

// phalanxctl get events prints what kubectl prints of the same events (ages are read at each
// run, so a pair of runs that straddles a second is run again).
TEST_F(KubectlEvents, PhalanxctlPrintsEventsAsKubectl) {
  const std::vector<std::vector<std::string>> commands = {
    {"get", "events"},
    {"get", "ev", "-o", "wide"},
    {"get", "events", "-A", "--field-selector", "type=Warning"},
    {"get", "events", "--field-selector", "involvedObject.kind=PodGroup", "--no-headers"},
    {"get", "events.events.k8s.io", "-o", "wide", "--field-selector", "regarding.kind=Pod"},
    {"get", "events.events.k8s.io", "--field-selector", "reportingController=phalanx,type!=Normal"},
    {"get", "ev", "-o", "name", "--field-selector", "involvedObject.name=huge-0"},
    {"get", "events.events.k8s.io", "-o", "name", "--field-selector", "regarding.name=huge-0"},
    {"get", "ev", "-o",
     R"(jsonpath={range .items[*]}{.involvedObject.name}{" "}{.reason}{"\n"}{end})"},
    {"get", "events.events.k8s.io", "--field-selector", "type=Warning", "-o",
     R"(jsonpath={range .items[*]}{.regarding.kind} {.note}{"\n"}{end})"},
    {"get", "ev", "-n", "elsewhere"},
    {"get", "ev", "--field-selector", "type=Warning", "-o",
     "custom-columns=OBJ:.involvedObject.name,R:.reason", "--sort-by=.reason"},
  };
  for (const auto& c : commands) {
    ctl_result theirs;
    ctl_result ours;
    EXPECT_TRUE(eventually(
        [&] {
          theirs = kubectl(c);
          ours = ctl(c);
          return ours.out == theirs.out;
        },
        10s))
        << c.back() << "\nkubectl:\n" << theirs.out << "\nphalanxctl:\n" << ours.out;
    EXPECT_EQ(ours.exit_code, theirs.exit_code) << c.back();
    // kubectl warns that `ev` is also events.events.k8s.io's short name (as it does against
    // kube-apiserver, which lists both); phalanxctl takes core/v1's without a word.
    std::string their_err = theirs.err;
    const std::string ambiguous =
        "Warning: short name \"ev\" could also match lower priority resource "
        "events.events.k8s.io\n";
    if (their_err.rfind(ambiguous, 0) == 0)
      their_err = their_err.substr(ambiguous.size());
    EXPECT_EQ(ours.err, their_err) << c.back();
  }
  // An event by name, as get prints one object.
  auto name = ctl({"get", "ev", "--field-selector", "involvedObject.name=huge-gang", "-o",
                   "jsonpath={.items[0].metadata.name}"});
  ASSERT_TRUE(succeeded(name));
  for (const char* resource : {"ev", "events.events.k8s.io"}) {
    std::vector<std::string> c = {"get", resource, name.out, "-o", "jsonpath={.metadata.name}"};
    EXPECT_EQ(ctl(c).out, kubectl(c).out) << resource;
  }
  // A field kube-apiserver does not select events by: both exit 1 with the server's reason.
  auto bad = ctl({"get", "events.events.k8s.io", "--field-selector", "source=phalanx"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "Error from server (BadRequest): field label not supported: source\n");
}

// phalanxctl get events -w: the events that follow, as rows. --watch-only watches from version
// 0, which sends every event ADDED first, so the cordon's comes whether the watch starts before
// the cordon or after it.
TEST_F(KubectlEvents, PhalanxctlWatchesEvents) {
  auto watch = ctl_process::start(
      d_->args({"get", "events.events.k8s.io", "--watch-only", "--output-watch-events",
                "--field-selector", "regarding.kind=Node"}));
  ASSERT_TRUE(watch->wait_for({"EVENT", "LAST", "SEEN", "REASON", "OBJECT", "MESSAGE"}))
      << watch->err();
  ASSERT_TRUE(succeeded(ctl({"cordon", "cpu-a-0"})));
  EXPECT_TRUE(watch->wait_for({"ADDED", "Normal", "NodeNotSchedulable", "node/cpu-a-0"}))
      << watch->err();
  watch->stop();
  for (const auto& l : watch->lines())
    EXPECT_EQ(l.find("pod/"), std::string::npos) << l;
}

// An event that leaves is DELETED in a watch: a pod's FailedScheduling goes with the pod.
TEST_F(KubectlEvents, AWatchSaysDeletedOfAnEventThatLeaves) {
  auto watch = ctl_process::start(
      d_->args({"get", "events", "--watch", "--output-watch-events", "--field-selector",
                "involvedObject.name=huge-0,reason=FailedScheduling"}));
  ASSERT_TRUE(watch->wait_for({"ADDED", "Warning", "FailedScheduling", "pod/huge-0"}))
      << watch->err();
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "huge-0"})));
  EXPECT_TRUE(watch->wait_for({"DELETED", "Warning", "FailedScheduling", "pod/huge-0"}))
      << watch->err();
  watch->stop();
}

} // namespace
} // namespace phalanx::cli_test
