// phalanxctl get: tables, -o wide|json|yaml|name, names, -l selectors, -n and -A, and -w
// (changes printed as they happen), against a real phalanxd.

#include "tests/cli/harness.hpp"

#include "api/codec.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace phalanx::cli_test {
namespace {

namespace json = boost::json;

std::string pod_yaml(const std::string& ns, const std::string& name,
                     const std::string& labels = "{}", const std::string& cpu = "100m") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
         "\n  labels: " + labels +
         "\nspec:\n  containers:\n    - name: c\n      image: busybox\n      resources:\n"
         "        requests: {cpu: " + cpu + ", memory: 64Mi}\n";
}

class CliGet : public daemon_test {
 protected:
  void SetUp() override {
    daemon_test::SetUp();
    ctl_options in;
    in.input = pod_yaml("team-a", "web-1", "{app: web, tier: front}") + "---\n" +
               pod_yaml("team-a", "web-2", "{app: web}") + "---\n" +
               pod_yaml("team-a", "db-1", "{app: db, tier: back}") + "---\n" +
               pod_yaml("team-b", "web-3", "{app: web}");
    ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
    ASSERT_TRUE(eventually([&] {
      auto all = d_->get_json("/api/v1/pods");
      if (!all.is_object())
        return false;
      const auto& items = all.at("items").as_array();
      return items.size() == 4 && std::all_of(items.begin(), items.end(), [](const auto& p) {
               return field(p, {"status", "phase"}) == "Running";
             });
    }));
  }

  std::set<std::string> names_in(const std::string& table, std::size_t column = 0) {
    std::set<std::string> out;
    auto lines = split_lines(table);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      auto c = cells(lines[i]);
      if (c.size() > column)
        out.insert(c[column]);
    }
    return out;
  }
};

TEST_F(CliGet, TableShowsKubectlColumnsAndWideAddsTheNode) {
  auto r = ctl({"get", "pods", "-n", "team-a"});
  ASSERT_TRUE(succeeded(r));
  auto lines = split_lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(cells(lines[0]),
            (std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}));
  auto web = row_of(r.out, "web-1");
  ASSERT_EQ(web.size(), 5u);
  EXPECT_EQ(web[1], "1/1");
  EXPECT_EQ(web[2], "Running");
  // Columns line up: every line has NAME's column the same width.
  EXPECT_EQ(lines[0].find("READY"), lines[1].find(web[1]));

  auto wide = ctl({"get", "pods", "-n", "team-a", "-o", "wide"});
  ASSERT_TRUE(succeeded(wide));
  EXPECT_EQ(cells(split_lines(wide.out)[0]),
            (std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE",
                                      "PODGROUP", "TASK"}));
  auto pod = object("/api/v1/namespaces/team-a/pods/web-1");
  EXPECT_EQ(row_of(wide.out, "web-1").at(5), field(pod, {"spec", "nodeName"}));
}

// A pod the simulated kubelet restarts (sim.phalanx.io/restart-every, twice in all): its
// container status and the RESTARTS column count the restarts, under its container's name.
TEST_F(CliGet, RestartsAreTheContainersRestartCount) {
  ctl_options in;
  in.input = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: flaky\n  namespace: team-b\n"
             "  annotations: {sim.phalanx.io/restart-every: 100ms, sim.phalanx.io/restarts: '2'}"
             "\nspec:\n  containers:\n    - name: app\n      image: busybox\n"
             "      resources:\n        requests: {cpu: 100m, memory: 64Mi}\n";
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  ASSERT_TRUE(eventually([&] {
    auto r = ctl({"get", "pods", "-n", "team-b"});
    auto row = row_of(r.out, "flaky");
    return row.size() == 5 && row[3] == "2";
  })) << ctl({"get", "pods", "-n", "team-b"}).out;
  auto pod = object("/api/v1/namespaces/team-b/pods/flaky");
  const auto& statuses = pod.at("status").at("containerStatuses").as_array();
  ASSERT_EQ(statuses.size(), 1u) << json::serialize(pod);
  EXPECT_EQ(field(statuses[0], {"name"}), "app");
  EXPECT_EQ(statuses[0].at("restartCount").to_number<int64_t>(), 2);
  EXPECT_EQ(row_of(ctl({"get", "pods", "-n", "team-a"}).out, "web-1").at(3), "0");
}

TEST_F(CliGet, JsonYamlAndNameOutputs) {
  auto list = ctl_json({"get", "pods", "-n", "team-a"});
  EXPECT_EQ(field(list, {"kind"}), "PodList");
  EXPECT_EQ(list.at("items").as_array().size(), 3u);
  EXPECT_FALSE(field(list, {"metadata", "resourceVersion"}).empty());

  auto one = ctl_json({"get", "pod", "web-1", "-n", "team-a"});
  EXPECT_EQ(field(one, {"kind"}), "Pod");
  EXPECT_EQ(field(one, {"metadata", "labels", "tier"}), "front");

  auto two = ctl_json({"get", "pods", "web-1", "db-1", "-n", "team-a"});
  EXPECT_EQ(field(two, {"kind"}), "List");
  ASSERT_EQ(two.at("items").as_array().size(), 2u);
  EXPECT_EQ(field(two.at("items").at(1), {"metadata", "name"}), "db-1");

  auto yaml = ctl({"get", "po", "-n", "team-a", "-o", "yaml"});
  ASSERT_TRUE(succeeded(yaml));
  // kubectl's order: keys sorted, apiVersion first.
  EXPECT_EQ(yaml.out.rfind("apiVersion: v1\nitems:\n", 0), 0u) << yaml.out.substr(0, 200);
  auto as_json = ctl({"get", "po", "-n", "team-a", "-o", "json"});
  EXPECT_EQ(as_json.out.rfind("{\n    \"apiVersion\": \"v1\",\n", 0), 0u)
      << as_json.out.substr(0, 200);
  auto docs = api::parse_yaml(yaml.out);
  ASSERT_TRUE(docs.ok()) << yaml.out;
  ASSERT_EQ(docs->size(), 1u);
  EXPECT_EQ(field(docs->front(), {"kind"}), "PodList");
  EXPECT_EQ(docs->front().at("items").as_array().size(), 3u);

  auto names = ctl({"get", "pods", "-n", "team-a", "-o", "name"});
  ASSERT_TRUE(succeeded(names));
  auto lines = split_lines(names.out);
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()),
            (std::set<std::string>{"pod/web-1", "pod/web-2", "pod/db-1"}));

  auto slash = ctl({"get", "pod/web-2", "-n", "team-a", "-o", "name"});
  ASSERT_TRUE(succeeded(slash));
  EXPECT_EQ(slash.out, "pod/web-2\n");
}

TEST_F(CliGet, LabelSelectorsFilterOnTheServer) {
  struct row {
    std::vector<std::string> args;
    std::set<std::string> names;
  };
  for (const auto& r : std::vector<row>{
         {{"-n", "team-a", "-l", "app=web"}, {"web-1", "web-2"}},
         {{"-n", "team-a", "-l", "tier in (back)"}, {"db-1"}},
         {{"-n", "team-a", "-l", "!tier"}, {"web-2"}},
         {{"-n", "team-a", "--selector", "app!=web"}, {"db-1"}},
         {{"-A", "-l", "app=web"}, {"web-1", "web-2", "web-3"}},
       }) {
    std::vector<std::string> args{"get", "pods", "-o", "name"};
    args.insert(args.end(), r.args.begin(), r.args.end());
    auto out = ctl(args);
    ASSERT_TRUE(succeeded(out));
    std::set<std::string> got;
    for (const auto& l : split_lines(out.out))
      got.insert(l.substr(l.find('/') + 1));
    EXPECT_EQ(got, r.names) << r.args.back();
  }
  auto bad = ctl({"get", "pods", "-l", "app in (web"});
  EXPECT_TRUE(failed_with(bad, 1));
  EXPECT_NE(bad.err.find("Error from server (BadRequest)"), std::string::npos) << bad.err;
}

TEST_F(CliGet, NamespacesAndAllNamespaces) {
  auto all = ctl({"get", "pods", "--all-namespaces"});
  ASSERT_TRUE(succeeded(all));
  EXPECT_EQ(cells(split_lines(all.out)[0]).at(0), "NAMESPACE");
  EXPECT_EQ(row_of(all.out, "web-3", 1).at(0), "team-b");
  EXPECT_EQ(row_of(all.out, "db-1", 1).at(0), "team-a");
  EXPECT_EQ(names_in(all.out, 1), (std::set<std::string>{"web-1", "web-2", "db-1", "web-3"}));

  auto b = ctl({"get", "pods", "--namespace=team-b"});
  ASSERT_TRUE(succeeded(b));
  EXPECT_EQ(names_in(b.out), (std::set<std::string>{"web-3"}));

  // The default namespace is "default", and it is empty here.
  auto none = ctl({"get", "pods"});
  ASSERT_TRUE(succeeded(none));
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(none.err, "No resources found in default namespace.\n");

  // Cluster-scoped kinds ignore -n.
  auto nodes = ctl({"get", "nodes", "-n", "team-a"});
  ASSERT_TRUE(succeeded(nodes));
  EXPECT_EQ(names_in(nodes.out).size(), 6u);
}

TEST_F(CliGet, MissingNamesAreServerErrorsAndTheOthersStillPrint) {
  auto r = ctl({"get", "pods", "web-1", "ghost", "-n", "team-a"});
  EXPECT_TRUE(failed_with(r, 1));
  EXPECT_FALSE(row_of(r.out, "web-1").empty()) << r.out;
  EXPECT_NE(r.err.find("Error from server (NotFound): pods \"ghost\" not found"),
            std::string::npos)
      << r.err;
}

class CliWatch : public daemon_test {};

TEST_F(CliWatch, PrintsAddedModifiedAndDeletedAsTheyHappen) {
  auto w = ctl_process::start(d_->args({"get", "pods", "-n", "w", "-w", "--output-watch-events"}));
  // Nothing there yet: kubectl's message, then the watch from the listing's version, so nothing
  // created after this line is missed.
  ASSERT_TRUE(w->wait_for_err("No resources found in w namespace."));
  ctl_options in;
  in.input = pod_yaml("w", "p1", "{app: web}");
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  auto added = w->wait_for({"ADDED", "p1"});
  ASSERT_TRUE(added) << w->err();
  auto running = w->wait_for({"MODIFIED", "p1", "1/1", "Running"});
  ASSERT_TRUE(running) << w->err();
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "p1", "-n", "w"})));
  auto deleted = w->wait_for({"DELETED", "p1"});
  ASSERT_TRUE(deleted) << w->err();
  EXPECT_EQ(cells(w->lines().at(0)),
            (std::vector<std::string>{"EVENT", "NAME", "READY", "STATUS", "RESTARTS", "AGE"}));
  w->stop();
}

TEST_F(CliWatch, ListsFirstThenAddsRowsForNewObjects) {
  ctl_options in;
  in.input = pod_yaml("w", "first");
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  ASSERT_TRUE(eventually([&] {
    return field(object("/api/v1/namespaces/w/pods/first"), {"status", "phase"}) == "Running";
  }));
  auto w = ctl_process::start(d_->args({"get", "pods", "-n", "w", "--watch"}));
  ASSERT_TRUE(w->wait_for({"NAME", "READY", "STATUS"}));
  ASSERT_TRUE(w->wait_for({"first", "Running"}));
  in.input = pod_yaml("w", "second");
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  ASSERT_TRUE(w->wait_for({"second", "Running"})) << w->err();
  // A change of an object already listed (here its deletion) comes as a row too.
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "first", "-n", "w"})));
  int seen = 0;
  ASSERT_TRUE(w->wait_for_line(
      [&](const std::string& l) {
        auto c = cells(l);
        return !c.empty() && c[0] == "first" && ++seen == 2;
      },
      std::chrono::seconds(30)))
      << w->err();
  w->stop();
}

TEST_F(CliWatch, OneObjectAsJsonUntilTheRequestTimeoutEndsIt) {
  ctl_options in;
  in.input = pod_yaml("w", "solo") + "---\n" + pod_yaml("w", "other");
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  auto w = ctl_process::start(
      d_->args({"get", "pod", "solo", "-n", "w", "-w", "-o", "json", "--request-timeout=2s"}));
  // The object itself first, then its changes until the server ends the watch after 2 s: the
  // client exits 0 by itself.
  ASSERT_TRUE(w->wait_for({"\"name\": \"solo\""}));
  auto code = w->wait_exit(std::chrono::seconds(30));
  ASSERT_TRUE(code) << "the watch did not end";
  EXPECT_EQ(*code, 0) << w->err();
  for (const auto& l : w->lines())
    EXPECT_EQ(l.find("\"name\": \"other\""), std::string::npos) << "only solo is watched";
}

TEST_F(CliWatch, WatchOnlyNamesAcrossNamespacesWithASelector) {
  auto w = ctl_process::start(d_->args({"get", "pods", "-A", "-l", "app=web", "--watch-only",
                                        "--output-watch-events", "-o", "name"}));
  ctl_options in;
  in.input = pod_yaml("ns-x", "quiet", "{app: db}") + "---\n" +
             pod_yaml("ns-y", "loud", "{app: web}");
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, in)));
  ASSERT_TRUE(w->wait_for({"ADDED pod/loud"})) << w->err();
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "loud", "-n", "ns-y"})));
  ASSERT_TRUE(w->wait_for({"DELETED pod/loud"})) << w->err();
  for (const auto& l : w->lines())
    EXPECT_EQ(l.find("quiet"), std::string::npos) << l;
  w->stop();
}

TEST_F(CliWatch, ADaemonThatDiesEndsTheWatchWithExitThree) {
  auto w = ctl_process::start(d_->args({"get", "nodes", "-w"}));
  ASSERT_TRUE(w->wait_for({"gpu-1", "Ready"}));
  // A change seen through the watch: it is connected.
  ASSERT_TRUE(succeeded(ctl({"cordon", "gpu-1"})));
  ASSERT_TRUE(w->wait_for({"gpu-1", "SchedulingDisabled"}));
  d_->process().kill();
  auto code = w->wait_exit(std::chrono::seconds(30));
  ASSERT_TRUE(code) << "the watch did not notice";
  EXPECT_EQ(*code, 3) << w->err();
  EXPECT_NE(w->err().find("error: the watch of nodes broke"), std::string::npos) << w->err();
}

TEST_F(CliWatch, JobsAndQueuesToo) {
  auto jobs = ctl_process::start(d_->args({"get", "jobs", "-w", "--output-watch-events"}));
  auto queues = ctl_process::start(d_->args({"get", "queues", "-w", "-o", "yaml"}));
  ASSERT_TRUE(queues->wait_for({"name: default"}));
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml"), "-f",
                             example("mpi-job.yaml")})));
  ASSERT_TRUE(queues->wait_for({"name: research"})) << queues->err();
  ASSERT_TRUE(jobs->wait_for({"ADDED", "lm-mpi-job"})) << jobs->err();
  // vcctl's columns after the job type: Replicas Min Pending Running ... - all four pods run.
  auto running = jobs->wait_for_line(
      [](const std::string& line) {
        std::istringstream in(line);
        std::vector<std::string> f{std::istream_iterator<std::string>(in), {}};
        auto type = std::find(f.begin(), f.end(), "Batch");
        return !f.empty() && f[0] == "MODIFIED" &&
               std::find(f.begin(), f.end(), "lm-mpi-job") != f.end() &&
               std::find(f.begin(), type, "Running") != type && f.end() - type > 4 &&
               type[1] == "4" && type[2] == "4" && type[4] == "4";
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(running) << jobs->err();
  jobs->stop();
  queues->stop();
}

// kubectl's -o jsonpath, custom-columns, --sort-by and KIND,KIND, with kubectl's exact text
// (tests/cli/kubectl_test.cpp runs kubectl itself on the same commands).
TEST_F(CliGet, JsonpathCustomColumnsSortByAndSeveralKinds) {
  auto names = ctl({"get", "pods", "-n", "team-a", "--sort-by=.metadata.name", "-o",
                    R"(jsonpath={range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end})"});
  ASSERT_TRUE(succeeded(names));
  EXPECT_EQ(names.out, "db-1\tRunning\nweb-1\tRunning\nweb-2\tRunning\n");
  // A collection is a List; one object is itself.
  auto list = ctl({"get", "pods", "-n", "team-a", "-ojsonpath={.kind} {.metadata}"});
  ASSERT_TRUE(succeeded(list));
  EXPECT_EQ(list.out, R"(List {"resourceVersion":""})");
  auto one = ctl({"get", "pod", "web-1", "-n", "team-a", "--output=jsonpath={.kind} "
                  "{.metadata.labels} {.spec.containers[0].resources.requests.cpu}"});
  ASSERT_TRUE(succeeded(one));
  EXPECT_EQ(one.out, R"(Pod {"app":"web","tier":"front"} 100m)");
  auto filtered = ctl({"get", "pods", "-A", "-o",
                       R"(jsonpath={.items[?(@.metadata.namespace=="team-b")].metadata.name})"});
  ASSERT_TRUE(succeeded(filtered));
  EXPECT_EQ(filtered.out, "web-3");
  auto missing = ctl({"get", "pod", "web-1", "-n", "team-a", "-o", "jsonpath={.nope}|"});
  ASSERT_TRUE(succeeded(missing));
  EXPECT_EQ(missing.out, "|");

  auto columns = ctl({"get", "pods", "-n", "team-a", "--sort-by={.metadata.name}", "-o",
                      "custom-columns=NAME:.metadata.name,tier:.metadata.labels.tier,"
                      "LABELS:metadata.labels"});
  ASSERT_TRUE(succeeded(columns));
  EXPECT_EQ(columns.out,
            "NAME    tier     LABELS\n"
            "db-1    back     map[app:db tier:back]\n"
            "web-1   front    map[app:web tier:front]\n"
            "web-2   <none>   map[app:web]\n");

  // Errors: kubectl's words, exit 1, nothing on standard output.
  auto unclosed = ctl({"get", "pods", "-n", "team-a", "-o", "jsonpath={.a"});
  EXPECT_TRUE(failed_with(unclosed, 1));
  EXPECT_EQ(unclosed.err, "error: error parsing jsonpath {.a, unclosed action\n");
  auto beyond = ctl({"get", "pods", "-n", "team-a", "-o", "jsonpath={.items[9]}"});
  EXPECT_TRUE(failed_with(beyond, 1));
  EXPECT_EQ(beyond.out, "");
  EXPECT_EQ(split_lines(beyond.err).at(0),
            "error: error executing jsonpath \"{.items[9]}\": Error executing template: array "
            "index out of bounds: index 9, length 3. Printing more information for debugging "
            "the template:");
  auto strict = ctl({"get", "pod", "web-1", "-n", "team-a", "-o", "jsonpath={.nope}",
                     "--allow-missing-template-keys=false"});
  EXPECT_TRUE(failed_with(strict, 1));
  EXPECT_NE(strict.err.find("Error executing template: nope is not found."), std::string::npos)
      << strict.err;
  auto spec = ctl({"get", "pods", "-o", "custom-columns=NAME"});
  EXPECT_TRUE(failed_with(spec, 1));
  EXPECT_EQ(spec.err,
            "error: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>\n");
  auto unsortable = ctl({"get", "pods", "-n", "team-a", "--sort-by=.nope", "-o", "name"});
  EXPECT_TRUE(failed_with(unsortable, 1));
  EXPECT_EQ(unsortable.err,
            "error: couldn't find any field with path \"{.nope}\" in the list of objects\n");

  // Several kinds: a table per kind, each name prefixed by its kind, a blank line between.
  auto both = ctl({"get", "pods,pg", "-n", "team-a"});
  ASSERT_TRUE(succeeded(both));
  auto lines = split_lines(both.out);
  ASSERT_EQ(lines.size(), 9u) << both.out;  // 1 + 3 pods, a blank line, 1 + 3 PodGroups.
  EXPECT_EQ(cells(lines[0]),
            (std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}));
  EXPECT_FALSE(row_of(both.out, "pod/web-1").empty()) << both.out;
  EXPECT_EQ(lines[4], "");
  EXPECT_EQ(cells(lines[5]),
            (std::vector<std::string>{"NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE"}));
  EXPECT_EQ(lines[6].rfind("podgroup.scheduling.volcano.sh/", 0), 0u) << both.out;
  auto as_names = ctl({"get", "pg,po", "-n", "team-a", "-o", "name"});
  ASSERT_TRUE(succeeded(as_names));
  auto name_lines = split_lines(as_names.out);
  ASSERT_EQ(name_lines.size(), 6u) << as_names.out;
  EXPECT_EQ(name_lines[0].rfind("podgroup.scheduling.volcano.sh/", 0), 0u);
  EXPECT_EQ(name_lines[3].rfind("pod/", 0), 0u);
  auto as_json = ctl_json({"get", "pods,pg", "-n", "team-a"});
  EXPECT_EQ(field(as_json, {"kind"}), "List");
  EXPECT_EQ(as_json.at("items").as_array().size(), 6u);
}

} // namespace
} // namespace phalanx::cli_test
