// phalanxctl's pure pieces, without a server: the command line, table layout, manifest reading
// and the comparison behind "unchanged". The rest of tests/cli runs the real binaries.

#include "api/ctl/command_line.hpp"
#include "api/ctl/ctl.hpp"
#include "api/ctl/manifests.hpp"
#include "api/ctl/paths.hpp"
#include "api/ctl/printers.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <sstream>

namespace phalanx::api::ctl {
namespace {

namespace json = boost::json;

getenv_fn no_env() {
  return [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
}

result<invocation> parse(std::vector<std::string> args, getenv_fn env = no_env()) {
  return parse_command_line(args, env);
}

TEST(CtlEnums, EveryValueHasAString) {
  for (int i = 0; i <= static_cast<int>(command_last); ++i)
    EXPECT_FALSE(to_string(static_cast<command>(i)).empty()) << i;
  for (int i = 1; i <= static_cast<int>(output_format_last); ++i)
    EXPECT_FALSE(to_string(static_cast<output_format>(i)).empty()) << i;
  for (int i = 0; i <= static_cast<int>(exit_code_last); ++i)
    EXPECT_FALSE(to_string(static_cast<exit_code>(i)).empty()) << i;
}

TEST(CtlCommandLine, ResolvesResourceWords) {
  struct row {
    const char* word;
    resource_kind kind;
  };
  for (auto r : {row{"pg", resource_kind::pod_group}, row{"podgroups", resource_kind::pod_group},
                 row{"PodGroup", resource_kind::pod_group}, row{"vcjob", resource_kind::job},
                 row{"vcjobs", resource_kind::job}, row{"jobs.batch.volcano.sh", resource_kind::job},
                 row{"q", resource_kind::queue}, row{"queue", resource_kind::queue},
                 row{"po", resource_kind::pod}, row{"no", resource_kind::node},
                 row{"nodes", resource_kind::node}})
    EXPECT_EQ(resolve_resource(r.word), r.kind) << r.word;
  EXPECT_FALSE(resolve_resource("deployments"));
}

TEST(CtlCommandLine, FlagsBeforeAndAfterTheCommand) {
  auto inv = parse({"-n", "team", "get", "pg", "-owide", "--selector=app=x", "-Aw"});
  ASSERT_TRUE(inv.ok()) << inv.error().message();
  EXPECT_EQ(inv->kind, resource_kind::pod_group);
  EXPECT_EQ(inv->namespace_name, "team");
  EXPECT_EQ(inv->output, output_format::wide);
  EXPECT_EQ(inv->selector, "app=x");
  EXPECT_TRUE(inv->all_namespaces);
  EXPECT_TRUE(inv->watch);
}

TEST(CtlCommandLine, ParsesGetWithEveryFlag) {
  auto inv = parse({"--server=http://h:1", "get", "pods", "-n", "team", "-o", "wide", "-l",
                    "app=x", "-w", "--output-watch-events", "--request-timeout", "5s"});
  ASSERT_TRUE(inv.ok()) << inv.error().message();
  EXPECT_EQ(inv->cmd, command::get);
  EXPECT_EQ(inv->kind, resource_kind::pod);
  EXPECT_EQ(inv->namespace_name, "team");
  EXPECT_EQ(inv->output, output_format::wide);
  EXPECT_EQ(inv->selector, "app=x");
  EXPECT_TRUE(inv->watch);
  EXPECT_TRUE(inv->output_watch_events);
  EXPECT_EQ(inv->connection.server, "http://h:1");
  EXPECT_EQ(inv->connection.request_timeout, std::chrono::milliseconds(5000));
}

TEST(CtlCommandLine, EnvironmentGivesServerAndTokenAndFlagsWin) {
  auto env = [](const std::string& k) -> std::optional<std::string> {
    if (k == "PHALANX_SERVER")
      return "http://env:9";
    if (k == "PHALANX_TOKEN")
      return "s3cret";
    return std::nullopt;
  };
  auto inv = parse({"version"}, env);
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->connection.server, "http://env:9");
  EXPECT_EQ(inv->connection.token, "s3cret");
  inv = parse({"version", "-s", "http://flag:1", "--token", "t"}, env);
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->connection.server, "http://flag:1");
  EXPECT_EQ(inv->connection.token, "t");
  inv = parse({"version"});
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->connection.server, "http://127.0.0.1:8080");
}

TEST(CtlCommandLine, ResourceSlashNameForms) {
  auto inv = parse({"describe", "job/tf", "vcjob/mpi"});
  ASSERT_TRUE(inv.ok()) << inv.error().message();
  EXPECT_EQ(inv->kind, resource_kind::job);
  EXPECT_EQ(inv->names, (std::vector<std::string>{"tf", "mpi"}));
  EXPECT_FALSE(parse({"describe", "job/tf", "pod/x"}).ok());
}

TEST(CtlCommandLine, SubcommandsMapToActionsAndLists) {
  struct row {
    std::vector<std::string> args;
    command cmd;
    resource_kind kind;
    std::string action;
  };
  for (const auto& r : std::vector<row>{
         {{"job", "suspend", "tf"}, command::action, resource_kind::job, "suspend"},
         {{"job", "resume", "tf"}, command::action, resource_kind::job, "resume"},
         {{"queue", "open", "q1"}, command::action, resource_kind::queue, "open"},
         {{"queue", "close", "q1"}, command::action, resource_kind::queue, "close"},
         {{"node", "cordon", "n1"}, command::action, resource_kind::node, "cordon"},
         {{"uncordon", "n1"}, command::action, resource_kind::node, "uncordon"},
         {{"job", "list"}, command::get, resource_kind::job, ""},
         {{"queue", "list"}, command::get, resource_kind::queue, ""},
       }) {
    auto inv = parse(r.args);
    ASSERT_TRUE(inv.ok()) << r.args[0] << " " << r.args[1] << ": " << inv.error().message();
    EXPECT_EQ(inv->cmd, r.cmd);
    EXPECT_EQ(inv->kind, r.kind);
    EXPECT_EQ(inv->action, r.action);
  }
}

TEST(CtlCommandLine, UsageErrorsNameTheFlagOrArgument) {
  struct row {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& r : std::vector<row>{
         {{"frobnicate"}, "unknown command \"frobnicate\""},
         {{"get"}, "get needs a resource type"},
         {{"get", "deployments"}, "doesn't have a resource type \"deployments\""},
         {{"get", "pods", "--bogus"}, "unknown flag: --bogus"},
         {{"get", "pods", "-o", "xml"}, "unknown output format \"xml\""},
         {{"get", "pods", "-n"}, "-n needs a value"},
         {{"apply"}, "apply needs -f"},
         {{"apply", "-f", "x.yaml", "-w"}, "flag -w does not apply to \"apply\""},
         {{"get", "pods", "a", "-A"}, "across all namespaces"},
         {{"get", "pods", "a", "b", "-w"}, "--watch works on one object"},
         {{"delete", "pods"}, "delete needs the names"},
         {{"job", "suspend"}, "job suspend needs the name of the job"},
         {{"job", "explode", "x"}, "unknown job subcommand \"explode\""},
         {{"get", "pods", "--request-timeout", "soon"}, "--request-timeout: \"soon\""},
         {{"get", "pods", "-w=maybe"}, "-w: \"maybe\" is not a boolean"},
       }) {
    auto inv = parse(r.args);
    ASSERT_FALSE(inv.ok()) << r.args[0];
    EXPECT_NE(inv.error().message().find(r.message), std::string::npos)
        << inv.error().message();
  }
}

// The ways kubectl users write a flag, each read as kubectl reads it.
TEST(CtlCommandLine, EverySpellingOfAFlag) {
  auto env = [](const std::string& k) -> std::optional<std::string> {
    if (k == "PHALANX_TOKEN")
      return "from-env";
    return std::nullopt;
  };
  struct row {
    std::vector<std::string> args;
    std::function<bool(const invocation&)> holds;
    std::string what;
  };
  const std::vector<row> rows = {
      {{"get", "pods", "-n=team"}, [](auto& i) { return i.namespace_name == "team"; }, "-n="},
      {{"get", "pods", "-nteam"}, [](auto& i) { return i.namespace_name == "team"; }, "-nNS"},
      {{"get", "pods", "--namespace=team"}, [](auto& i) { return i.namespace_given; }, "--ns="},
      {{"get", "pods", "-An", "x"},
       [](auto& i) { return i.all_namespaces && i.namespace_name == "x"; }, "bundle, value"},
      {{"get", "pods", "-w=false"}, [](auto& i) { return !i.watch; }, "-w=false"},
      {{"get", "pods", "--watch=true"}, [](auto& i) { return i.watch; }, "--watch=true"},
      {{"get", "pods", "--watch", "web"},
       [](auto& i) { return i.watch && i.names == std::vector<std::string>{"web"}; },
       "a boolean takes no next argument"},
      {{"get", "pods", "-o", "json", "-o", "yaml"},
       [](auto& i) { return i.output == output_format::yaml; }, "the last -o wins"},
      {{"get", "pods", "--", "-x"},
       [](auto& i) { return i.names == std::vector<std::string>{"-x"}; }, "-- ends the flags"},
      {{"version", "--token="}, [](auto& i) { return i.connection.token.empty(); },
       "an empty --token= overrides the environment"},
      {{"apply", "-f", "-", "-f", "b.yaml"},
       [](auto& i) { return i.files == std::vector<std::string>{"-", "b.yaml"}; }, "-f repeats"},
      {{"delete", "pods", "a", "--grace-period", "-1"},
       [](auto& i) { return !i.grace_period_seconds; }, "a negative value after a space"},
      {{"delete", "pods", "a", "--wait=false", "--timeout=1m"},
       [](auto& i) {
         return !i.wait_for_deletion && i.deletion_timeout == std::chrono::minutes(1);
       },
       "--wait=false"},
      {{"get", "pods", "--chunk-size", "0", "--no-headers"},
       [](auto& i) { return i.chunk_size == 0 && i.no_headers; }, "--chunk-size 0"},
  };
  for (const auto& r : rows) {
    auto inv = parse(r.args, env);
    ASSERT_TRUE(inv.ok()) << r.what << ": " << inv.error().message();
    EXPECT_TRUE(r.holds(*inv)) << r.what;
  }

  struct bad {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& b : std::vector<bad>{
         {{"get", "pods", "-Axw"}, "unknown shorthand flag: 'x' in -Axw (see phalanxctl --help)"},
         {{"get", "pods", "--bogus=3"}, "unknown flag: --bogus (see phalanxctl --help)"},
         {{"get", "pods", "--namespace"}, "--namespace needs a value"},
         {{"get", "pods", "-n="}, "-n must not be empty"},
         {{"get", "pods", "--server="}, "--server must not be empty"},
         {{"get", "pods", "--chunk-size=-1"},
          "--chunk-size must be a whole number of items, 0 for one list at once (got \"-1\")"},
         {{"delete", "pods", "a", "--grace-period=soon"},
          "--grace-period must be a whole number of seconds, or -1 for each pod's own (got "
          "\"soon\")"},
         {{"get", "pods", "--watch=maybe"}, "--watch: \"maybe\" is not a boolean (true or false)"},
         {{"apply", "-f="}, "-f must name a file, a directory, or - for standard input"},
         // A shorthand the table knows is not a value (Boost.Program_options' rule; the
         // hand-written parser took "-w" as the namespace).
         {{"get", "pods", "-n", "-w"}, "-n needs a value"},
         // "=VALUE" goes to a shorthand standing alone, not to the last of a bundle.
         {{"get", "pods", "-Aw=false"},
          "unknown shorthand flag: '=' in -Aw=false (see phalanxctl --help)"},
       }) {
    auto r = parse(b.args);
    ASSERT_FALSE(r.ok()) << b.args.back();
    EXPECT_EQ(r.error().message(), b.message);
    EXPECT_EQ(r.error().code(), errc::invalid_argument);
  }
}

// kubectl's spellings of -o with a template, --sort-by, and KIND,KIND (issue 30).
TEST(CtlCommandLine, TemplatesSortByAndSeveralKinds) {
  struct row {
    std::vector<std::string> args;
    output_format format;
    std::string output_template;
    std::string file;
  };
  for (const auto& r : std::vector<row>{
         {{"-o", "jsonpath={.items[*].metadata.name}"}, output_format::jsonpath,
          "{.items[*].metadata.name}", ""},
         {{"-ojsonpath={.kind}"}, output_format::jsonpath, "{.kind}", ""},
         {{"--output=jsonpath={.a}={.b}"}, output_format::jsonpath, "{.a}={.b}", ""},
         {{"-o", "jsonpath-file=t.txt"}, output_format::jsonpath, "", "t.txt"},
         {{"-o", "jsonpath-as-json={.kind}"}, output_format::jsonpath_as_json, "{.kind}", ""},
         {{"-o", "custom-columns=NAME:.metadata.name,N:.spec.nodeName"},
          output_format::custom_columns, "NAME:.metadata.name,N:.spec.nodeName", ""},
         {{"-o", "custom-columns-file=c.txt"}, output_format::custom_columns, "", "c.txt"},
       }) {
    std::vector<std::string> args{"get", "pods"};
    args.insert(args.end(), r.args.begin(), r.args.end());
    auto inv = parse(args);
    ASSERT_TRUE(inv.ok()) << inv.error().message();
    EXPECT_EQ(inv->output, r.format) << r.args.front();
    EXPECT_EQ(inv->output_template, r.output_template) << r.args.front();
    EXPECT_EQ(inv->output_template_file, r.file) << r.args.front();
    EXPECT_TRUE(inv->allow_missing_template_keys);
  }
  auto sorted = parse({"get", "po", "--sort-by={.metadata.creationTimestamp}",
                       "--allow-missing-template-keys=false"});
  ASSERT_TRUE(sorted.ok()) << sorted.error().message();
  EXPECT_EQ(sorted->sort_by, "{.metadata.creationTimestamp}");
  EXPECT_FALSE(sorted->allow_missing_template_keys);

  auto kinds = parse({"get", "pods,pg,pods", "-n", "team"});
  ASSERT_TRUE(kinds.ok()) << kinds.error().message();
  EXPECT_EQ(kinds->kinds, (std::vector<resource_kind>{resource_kind::pod, resource_kind::pod_group}));
  EXPECT_EQ(kinds->kind, resource_kind::pod);
  auto one = parse({"get", "pg"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->kinds, std::vector<resource_kind>{resource_kind::pod_group});

  struct bad {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& b : std::vector<bad>{
         {{"get", "pods", "-o", "jsonpath"}, "template format specified but no template given"},
         {{"get", "pods", "-o", "jsonpath="}, "template format specified but no template given"},
         {{"get", "pods", "-o", "custom-columns"},
          "custom-columns format specified but no custom columns given"},
         {{"get", "pods,deployments"}, "doesn't have a resource type \"deployments\""},
         {{"get", "pods,pg", "-w"}, "--watch works on one kind of resource at a time"},
         {{"get", "pods", "--sort-by="}, "--sort-by needs a JSONPath"},
         {{"describe", "pods", "--sort-by=.a"}, "flag --sort-by does not apply to \"describe\""},
       }) {
    auto r = parse(b.args);
    ASSERT_FALSE(r.ok()) << b.args.back();
    EXPECT_NE(r.error().message().find(b.message), std::string::npos) << r.error().message();
  }
}

TEST(CtlCommandLine, HelpAnywhere) {
  for (auto args : std::vector<std::vector<std::string>>{
         {}, {"--help"}, {"help"}, {"get", "-h"}, {"help", "apply"}, {"job", "--help"}}) {
    auto inv = parse(args);
    ASSERT_TRUE(inv.ok());
    EXPECT_EQ(inv->cmd, command::help);
  }
  EXPECT_NE(help_text("").find("Exit codes"), std::string::npos);
  EXPECT_NE(help_text("get").find("--watch"), std::string::npos);
}

TEST(CtlPaths, PathsAndNames) {
  EXPECT_EQ(collection_path(resource_kind::pod, "team"), "/api/v1/namespaces/team/pods");
  EXPECT_EQ(collection_path(resource_kind::pod, ""), "/api/v1/pods");
  EXPECT_EQ(collection_path(resource_kind::queue, "ignored"),
            "/apis/scheduling.volcano.sh/v1beta1/queues");
  EXPECT_EQ(item_path(resource_kind::job, "default", "tf"),
            "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/tf");
  EXPECT_EQ(qualified_name(resource_kind::job, "tf"), "job.batch.volcano.sh/tf");
  EXPECT_EQ(qualified_name(resource_kind::node, "n1"), "node/n1");
  EXPECT_EQ(percent_encode("env in (a,b)"), "env%20in%20%28a%2Cb%29");
}

TEST(CtlTables, ColumnsAlignWithThreeSpacesAndNoTrailingBlanks) {
  std::string t = format_table({"NAME", "STATUS", "AGE"}, {{"a", "Running", "5s"},
                                                           {"long-name", "", ""}});
  EXPECT_EQ(t, "NAME        STATUS    AGE\n"
               "a           Running   5s\n"
               "long-name\n");
  // A cell wider than its column (a watch row after the header) pushes the rest right.
  EXPECT_EQ(format_row({"wider-than-before", "x"}, {4, 1}), "wider-than-before   x\n");
}

// kubectl's STATUS column: a finished pod shows how its containers ended, a deleted one
// Terminating.
TEST(CtlTables, PodStatusIsKubectls) {
  table_options o;
  auto status_of = [&](const char* json) { return table_row(resource_kind::pod, json::parse(json), o)[2]; };
  EXPECT_EQ(status_of(R"({"metadata":{"name":"a"},"status":{"phase":"Succeeded"}})"), "Completed");
  EXPECT_EQ(status_of(R"({"metadata":{"name":"a"},"status":{"phase":"Failed"}})"), "Error");
  EXPECT_EQ(status_of(R"({"metadata":{"name":"a"},"status":{"phase":"Running"}})"), "Running");
  EXPECT_EQ(status_of(R"({"metadata":{"name":"a","deletionTimestamp":"2026-11-28T10:00:00Z"},
                          "status":{"phase":"Succeeded"}})"),
            "Terminating");
}

// kubectl's RESTARTS column: every container's restartCount, init containers' included; a pod
// with no container status (not bound yet) shows 0.
TEST(CtlTables, PodRestartsSumTheContainerStatuses) {
  table_options o;
  auto restarts_of = [&](const char* json) {
    return table_row(resource_kind::pod, json::parse(json), o)[3];
  };
  EXPECT_EQ(restarts_of(R"({"metadata":{"name":"a"},"status":{"phase":"Pending"}})"), "0");
  EXPECT_EQ(restarts_of(R"({"metadata":{"name":"a"},"status":{"phase":"Running",
                            "containerStatuses":[{"name":"main","restartCount":3},
                                                 {"name":"side","restartCount":1}],
                            "initContainerStatuses":[{"name":"init","restartCount":2}]}})"),
            "6");
}

// --show-labels: kubectl's LABELS column, last, pairs sorted by key.
TEST(CtlTables, ShowLabelsAddsALabelsColumn) {
  table_options o;
  o.show_labels = true;
  auto h = table_header(resource_kind::node, o);
  EXPECT_EQ(h.back(), "LABELS");
  auto row = table_row(resource_kind::node,
                       json::parse(R"({"metadata":{"name":"n","labels":{"zone":"b","arch":"x"}}})"),
                       o);
  EXPECT_EQ(row.back(), "arch=x,zone=b");
  EXPECT_EQ(row.size(), h.size());
  EXPECT_EQ(table_row(resource_kind::node, json::parse(R"({"metadata":{"name":"n"}})"), o).back(),
            "<none>");
}

TEST(CtlTables, JobRowsHaveVcctlColumns) {
  auto job = json::parse(R"({"metadata":{"name":"tf","creationTimestamp":"2024-05-01T12:00:00Z"},
    "spec":{"queue":"default","tasks":[{"replicas":1},{"replicas":2}]},
    "status":{"state":{"phase":"Running"},"minAvailable":3,"running":3,"retryCount":1}})");
  table_options o;
  auto h = table_header(resource_kind::job, o);
  EXPECT_EQ(h, (std::vector<std::string>{"NAME", "CREATION", "PHASE", "JOBTYPE", "REPLICAS",
                                         "MIN", "PENDING", "RUNNING", "SUCCEEDED", "FAILED",
                                         "UNKNOWN", "RETRYCOUNT"}));
  EXPECT_EQ(table_row(resource_kind::job, job, o),
            (std::vector<std::string>{"tf", "2024-05-01", "Running", "Batch", "3", "3", "0", "3",
                                      "0", "0", "0", "1"}));
}

// `describe vcjob` lists what a job's plugins make: here the ray head's Service (and svc's,
// which ray implies), read from the job as served; and its volumes' claims, the one the job
// makes and the one it mounts.
TEST(CtlDescribe, AJobListsTheObjectsItsPluginsMakeAndItsClaims) {
  auto job = json::parse(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"rc","namespace":"ml"},
    "spec":{"queue":"default","plugins":{"ray":["--port=7000"],"svc":[]},
      "volumes":[{"mountPath":"/data","volumeClaimName":"shared"},
                 {"mountPath":"/scratch","volumeClaimName":"rc-pvc-0123456789ab",
                  "volumeClaim":{"accessModes":["ReadWriteOnce"]}}],
      "tasks":[{"name":"head","replicas":1,"template":{"spec":{"containers":[{"name":"head"}]}}},
               {"name":"worker","replicas":2,
                "template":{"spec":{"containers":[{"name":"worker"}]}}}]},
    "status":{"state":{"phase":"Running"}}})");
  const auto out = describe_object(resource_kind::job, job, nullptr, nullptr, {});
  EXPECT_NE(out.find("Plugin Objects:"), std::string::npos) << out;
  EXPECT_NE(out.find("Service rc-head-svc:"), std::string::npos) << out;
  EXPECT_NE(out.find("selects volcano.sh/job-name=rc, volcano.sh/job-namespace=ml, "
                     "volcano.sh/task-spec=head; ports gcs 7000, dashboard 8265, "
                     "client-server 10001"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Volumes:\n"), std::string::npos) << out;
  EXPECT_NE(out.find("/data:"), std::string::npos) << out;
  EXPECT_NE(out.find("claim shared, an existing one"), std::string::npos) << out;
  EXPECT_NE(out.find("claim rc-pvc-0123456789ab, made for the job from its volumeClaim"),
            std::string::npos)
      << out;
}

TEST(CtlManifests, ReadsDocumentsAndRefusesUnknownKindsBeforeSending) {
  std::istringstream in(R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
)");
  auto docs = read_manifests({"-"}, in, "default", false);
  ASSERT_FALSE(docs.ok());
  std::string m = docs.error().message();
  EXPECT_NE(m.find("STDIN: document 2 (\"c\"): no matches for kind \"ConfigMap\" in version \"v1\""),
            std::string::npos) << m;
  EXPECT_NE(m.find("Phalanx serves kind \"Job\" in version \"batch.volcano.sh/v1alpha1\""),
            std::string::npos) << m;
}

TEST(CtlManifests, ExpandsListsAndFillsTheNamespace) {
  std::istringstream in(R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}]})");
  auto docs = read_manifests({"-"}, in, "team", true);
  ASSERT_TRUE(docs.ok()) << docs.error().message();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[0].namespace_name, "team");
  EXPECT_EQ((*docs)[1].namespace_name, "");
  std::istringstream other(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: elsewhere}
)");
  auto clash = read_manifests({"-"}, other, "team", true);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().message().find("does not match the namespace \"team\""),
            std::string::npos);
}

TEST(CtlManifests, DifferencesIgnoreServerFieldsAndCompareQuantitiesByAmount) {
  auto manifest = json::parse(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
    "metadata":{"name":"q","labels":{"a":"b"}},
    "spec":{"weight":2,"reclaimable":false,"capability":{"cpu":"2000m","nvidia.com/gpu":8}}})");
  auto server = json::parse(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
    "metadata":{"name":"q","uid":"u","resourceVersion":"7","labels":{"a":"b"}},
    "spec":{"weight":2,"capability":{"cpu":"2","nvidia.com/gpu":"8"}},
    "status":{"state":"Open"}})");
  EXPECT_TRUE(manifest_differences(resource_kind::queue, manifest, server).empty());
  server.as_object()["spec"].as_object()["weight"] = 3;
  auto d = manifest_differences(resource_kind::queue, manifest, server);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].path, "spec.weight");
  EXPECT_EQ(d[0].manifest, "2");
  EXPECT_EQ(d[0].server, "3");
}

} // namespace
} // namespace phalanx::api::ctl
