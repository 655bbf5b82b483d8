// Every endpoint group of the HTTP API once, end to end over loopback through the real phalanxd
// (api/tests covers the server in depth against a fake service): health, readiness and metrics;
// discovery; create, get, list and delete of every kind in JSON and YAML; Tables; the action
// subresources and PATCH; events; watch; and the errors of the routing itself.

#include "tests/cli/harness.hpp"

#include "api/client.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::cli_test {
namespace {

namespace json = boost::json;

class ApiDaemon : public daemon_test {
 protected:
  void SetUp() override {
    daemon_test::SetUp();
    client_ = std::make_unique<api::http_client>(d_->client_options());
  }

  api::client_response send(std::string method, std::string target, std::string body = {},
                            std::string content_type = {}, std::string accept = {}) {
    api::client_request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.accept = std::move(accept);
    auto res = client_->send(r);
    EXPECT_TRUE(res.ok()) << res.error().message();
    return res.ok() ? *res : api::client_response{};
  }

  json::value send_json(std::string method, std::string target, int expect_status,
                        std::string body = {}, std::string content_type = "application/json") {
    auto r = send(method, target, std::move(body), std::move(content_type));
    EXPECT_EQ(r.status, expect_status) << method << " " << target << ": " << r.body;
    json::error_code ec;
    auto v = json::parse(r.body, ec);
    EXPECT_FALSE(ec) << r.body;
    return ec ? json::value(nullptr) : v;
  }

  std::unique_ptr<api::http_client> client_;
};

TEST_F(ApiDaemon, HealthReadinessAndMetrics) {
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    auto r = send("GET", path);
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.body, "ok") << path;
  }
  // Something to count first.
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("mpi-job.yaml")})));
  ASSERT_TRUE(eventually([&] {
    auto m = send("GET", "/metrics");
    return m.body.find("phalanx_pods_scheduled_total 4") != std::string::npos;
  })) << send("GET", "/metrics").body;
  auto m = send("GET", "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(m.body.find("phalanx_gang_decision_seconds_count"), std::string::npos);
  EXPECT_EQ(send("POST", "/healthz").status, 405);
}

TEST_F(ApiDaemon, Discovery) {
  auto root = send_json("GET", "/", 200);
  EXPECT_NE(json::serialize(root).find("/apis/batch.volcano.sh/v1alpha1"), std::string::npos);
  auto version = send_json("GET", "/version", 200);
  EXPECT_EQ(field(version, {"gitVersion"}), "v1.32.0-phalanx");
  auto api = send_json("GET", "/api", 200);
  EXPECT_EQ(field(api, {"kind"}), "APIVersions");
  auto v1 = send_json("GET", "/api/v1", 200);
  EXPECT_EQ(field(v1, {"kind"}), "APIResourceList");
  std::string resources = json::serialize(v1);
  EXPECT_NE(resources.find("\"pods\""), std::string::npos);
  EXPECT_NE(resources.find("\"nodes\""), std::string::npos);
  auto groups = send_json("GET", "/apis", 200);
  EXPECT_EQ(field(groups, {"kind"}), "APIGroupList");
  EXPECT_NE(json::serialize(groups).find("scheduling.volcano.sh/v1beta1"), std::string::npos);
  auto group = send_json("GET", "/apis/scheduling.volcano.sh", 200);
  EXPECT_EQ(field(group, {"kind"}), "APIGroup");
  auto sched = send_json("GET", "/apis/scheduling.volcano.sh/v1beta1", 200);
  std::string s = json::serialize(sched);
  EXPECT_NE(s.find("\"podgroups\""), std::string::npos);
  EXPECT_NE(s.find("\"pg\""), std::string::npos);
  EXPECT_NE(s.find("\"queues\""), std::string::npos);
  auto batch = send_json("GET", "/apis/batch.volcano.sh/v1alpha1", 200);
  EXPECT_NE(json::serialize(batch).find("\"jobs\""), std::string::npos);
  EXPECT_EQ(send("GET", "/apis/apps/v1").status, 404);
}

// Create (JSON and YAML bodies), get (JSON, YAML, Table), list with selectors and delete, for
// each kind.
TEST_F(ApiDaemon, CrudOfEveryKind) {
  struct kind_case {
    std::string collection;
    std::string item;
    std::string body;
    std::string list_kind;
  };
  std::vector<kind_case> cases{
      {"/apis/scheduling.volcano.sh/v1beta1/queues",
       "/apis/scheduling.volcano.sh/v1beta1/queues/crud-q",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
           "metadata":{"name":"crud-q","labels":{"suite":"crud"}},"spec":{"weight":4}})",
       "QueueList"},
      {"/api/v1/nodes", "/api/v1/nodes/crud-n",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"crud-n","labels":{"suite":"crud"}},
           "status":{"allocatable":{"cpu":"2","memory":"4Gi"}}})",
       "NodeList"},
      {"/apis/scheduling.volcano.sh/v1beta1/namespaces/crud/podgroups",
       "/apis/scheduling.volcano.sh/v1beta1/namespaces/crud/podgroups/crud-pg",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
           "metadata":{"name":"crud-pg","labels":{"suite":"crud"}},"spec":{"minMember":2}})",
       "PodGroupList"},
      {"/api/v1/namespaces/crud/pods", "/api/v1/namespaces/crud/pods/crud-p",
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"crud-p","labels":{"suite":"crud"}},
           "spec":{"containers":[{"name":"c","image":"i",
                                  "resources":{"requests":{"cpu":"100m"}}}]}})",
       "PodList"},
      {"/apis/batch.volcano.sh/v1alpha1/namespaces/crud/jobs",
       "/apis/batch.volcano.sh/v1alpha1/namespaces/crud/jobs/crud-j",
       R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
           "metadata":{"name":"crud-j","labels":{"suite":"crud"}},
           "spec":{"tasks":[{"name":"t","replicas":1,"template":{"spec":{"containers":[
             {"name":"c","image":"i","resources":{"requests":{"cpu":"100m"}}}]}}}]}})",
       "JobList"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.item);
    auto created = send_json("POST", c.collection, 201, c.body);
    EXPECT_FALSE(field(created, {"metadata", "uid"}).empty());
    EXPECT_FALSE(field(created, {"metadata", "creationTimestamp"}).empty());
    // The same again: 409 AlreadyExists.
    auto dup = send_json("POST", c.collection, 409, c.body);
    EXPECT_EQ(field(dup, {"reason"}), "AlreadyExists");

    auto got = send_json("GET", c.item, 200);
    EXPECT_EQ(field(got, {"metadata", "uid"}), field(created, {"metadata", "uid"}));
    auto yaml = send("GET", c.item, "", "", "application/yaml");
    EXPECT_EQ(yaml.status, 200);
    EXPECT_NE(yaml.body.find("name: " + field(created, {"metadata", "name"})), std::string::npos);
    auto table = send("GET", c.item, "", "", "application/json;as=Table;v=v1;g=meta.k8s.io");
    EXPECT_EQ(table.status, 200);
    EXPECT_NE(table.body.find("\"kind\":\"Table\""), std::string::npos) << table.body;

    auto list = send_json("GET", c.collection + "?labelSelector=suite%3Dcrud", 200);
    EXPECT_EQ(field(list, {"kind"}), c.list_kind);
    EXPECT_EQ(list.at("items").as_array().size(), 1u);
    auto none = send_json("GET", c.collection + "?labelSelector=suite%3Dother", 200);
    EXPECT_EQ(none.at("items").as_array().size(), 0u);
    auto by_name = send_json(
        "GET", c.collection + "?fieldSelector=metadata.name%3D" + field(created, {"metadata", "name"}),
        200);
    EXPECT_EQ(by_name.at("items").as_array().size(), 1u);
  }
  // The job made its PodGroup and pod; a list across namespaces sees them all.
  ASSERT_TRUE(eventually([&] {
    auto pods = d_->get_json("/api/v1/pods");
    return pods.is_object() && pods.at("items").as_array().size() == 2;
  }));
  // YAML bodies are accepted too.
  auto yaml_created = send("POST", "/apis/scheduling.volcano.sh/v1beta1/queues",
                           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                           "metadata: {name: from-yaml}\nspec: {weight: 2}\n",
                           "application/yaml");
  EXPECT_EQ(yaml_created.status, 201) << yaml_created.body;
  // Delete, in reverse order (the job before its queue's PodGroups), then 404. The running pod
  // is deleted gracefully: it terminates (at once, declaring no stop time) and then goes.
  for (auto c = cases.rbegin(); c != cases.rend(); ++c) {
    SCOPED_TRACE(c->item);
    send_json("DELETE", c->item, 200);
    ASSERT_TRUE(eventually([&] { return send("GET", c->item).status == 404; }));
    auto gone = send_json("GET", c->item, 404);
    EXPECT_EQ(field(gone, {"reason"}), "NotFound");
  }
}

TEST_F(ApiDaemon, ActionsPatchAndEvents) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml"), "-f",
                             example("mpi-job.yaml")})));
  // Queues: close and open.
  auto closed = send_json("POST", "/apis/scheduling.volcano.sh/v1beta1/queues/research/close", 200);
  EXPECT_EQ(field(closed, {"status", "state"}), "Closed");
  auto opened = send_json("POST", "/apis/scheduling.volcano.sh/v1beta1/queues/research/open", 200);
  EXPECT_EQ(field(opened, {"status", "state"}), "Open");
  // Nodes: cordon and uncordon by action, and by PATCH as kubectl does.
  auto cordoned = send_json("POST", "/api/v1/nodes/cpu-a-0/cordon", 200);
  EXPECT_EQ(field(cordoned, {"spec", "unschedulable"}), "true");
  auto uncordoned = send_json("POST", "/api/v1/nodes/cpu-a-0/uncordon", 200);
  EXPECT_NE(field(uncordoned, {"spec", "unschedulable"}), "true");
  auto patched = send_json("PATCH", "/api/v1/nodes/cpu-a-1", 200, R"({"spec":{"unschedulable":true}})",
                           "application/merge-patch+json");
  EXPECT_EQ(field(patched, {"spec", "unschedulable"}), "true");
  send_json("PATCH", "/api/v1/nodes/cpu-a-1", 200, R"({"spec":{"unschedulable":null}})",
            "application/strategic-merge-patch+json");
  auto refused = send_json("PATCH", "/api/v1/nodes/cpu-a-1", 422,
                           R"({"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}})",
                           "application/merge-patch+json");
  EXPECT_EQ(field(refused, {"reason"}), "Invalid");
  // Jobs: suspend and resume.
  std::string job = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/lm-mpi-job";
  ASSERT_TRUE(eventually([&] {
    return field(d_->get_json(job), {"status", "state", "phase"}) == "Running";
  }));
  auto suspended = send_json("POST", job + "/suspend", 200);
  EXPECT_EQ(field(suspended, {"status", "state", "phase"}), "Aborted");
  send_json("POST", job + "/resume", 200);
  // Pods: the simulation's fail action.
  ASSERT_TRUE(eventually([&] {
    auto p = d_->get_json("/api/v1/namespaces/default/pods/lm-mpi-job-mpiworker-0");
    return p.is_object();
  }));
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"},
                            with_input("apiVersion: v1\nkind: Pod\nmetadata: {name: doomed}\n"
                                       "spec: {containers: [{name: c, image: i}]}\n"))));
  std::string doomed = "/api/v1/namespaces/default/pods/doomed";
  ASSERT_TRUE(eventually([&] {
    return field(d_->get_json(doomed), {"status", "phase"}) == "Running";
  }));
  send_json("POST", doomed + "/fail", 200);
  EXPECT_TRUE(eventually([&] {
    return field(d_->get_json(doomed), {"status", "phase"}) == "Failed";
  }));
  // Events of an object.
  auto events = send_json("GET", job + "/events", 200);
  EXPECT_EQ(field(events, {"kind"}), "EventList");
  std::string ev = json::serialize(events);
  EXPECT_NE(ev.find("\"reason\":\"Suspended\""), std::string::npos) << ev;
  EXPECT_NE(ev.find("\"reason\":\"Resumed\""), std::string::npos) << ev;
  auto pod_events = send_json("GET", doomed + "/events", 200);
  EXPECT_NE(json::serialize(pod_events).find("\"reason\":\"Scheduled\""), std::string::npos);
  // An action a kind does not have.
  EXPECT_EQ(send("POST", "/apis/scheduling.volcano.sh/v1beta1/queues/research/suspend").status, 404);
  EXPECT_EQ(send("POST", "/api/v1/nodes/nope/cordon").status, 404);
}

TEST_F(ApiDaemon, WatchStreamsEventsAndTables) {
  api::client_request req;
  req.target = "/api/v1/namespaces/watched/pods?watch=1";
  auto stream = api::watch_stream::open(d_->client_options(), req);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  EXPECT_EQ((*stream)->status(), 200);
  api::client_request table_req;
  table_req.target = "/api/v1/namespaces/watched/pods?watch=1";
  table_req.accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
  auto tables = api::watch_stream::open(d_->client_options(), table_req);
  ASSERT_TRUE(tables.ok()) << tables.error().message();

  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-", "-n", "watched"},
                            with_input("apiVersion: v1\nkind: Pod\nmetadata: {name: w1}\n"
                                       "spec: {containers: [{name: c, image: i}]}\n"))));
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "w1", "-n", "watched"})));
  std::vector<std::string> types;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((types.empty() || types.back() != "DELETED") &&
         std::chrono::steady_clock::now() < deadline) {
    auto line = (*stream)->next_line(std::chrono::seconds(1));
    if (!line)
      continue;
    auto v = json::parse(*line);
    EXPECT_EQ(field(v, {"object", "metadata", "name"}), "w1");
    types.push_back(field(v, {"type"}));
  }
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "ADDED");
  EXPECT_EQ(types.back(), "DELETED");
  auto first_table = (*tables)->next_line(std::chrono::seconds(30));
  ASSERT_TRUE(first_table);
  EXPECT_NE(first_table->find("\"kind\":\"Table\""), std::string::npos) << *first_table;
  EXPECT_NE(first_table->find("\"columnDefinitions\""), std::string::npos) << *first_table;
  (*stream)->close();
  (*tables)->close();
}

TEST_F(ApiDaemon, RoutingErrors) {
  EXPECT_EQ(send("GET", "/api/v1/widgets").status, 404);
  EXPECT_EQ(send("PUT", "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/j", "{}",
                 "application/json")
                .status,
            404);  // Jobs take updates; this one is not there.
  EXPECT_EQ(send("PUT", "/apis/scheduling.volcano.sh/v1beta1/queues/default", "{}",
                 "application/json")
                .status,
            422);  // A custom resource's PUT names the version it replaces.
  EXPECT_EQ(send("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", "weight=1",
                 "application/x-www-form-urlencoded")
                .status,
            415);
  EXPECT_EQ(send("GET", "/api/v1/nodes", "", "", "application/xml").status, 406);
  auto bad = send_json("POST", "/api/v1/namespaces/x/pods", 400, "{not json");
  EXPECT_EQ(field(bad, {"reason"}), "BadRequest");
  auto mismatch = send_json("POST", "/api/v1/namespaces/x/pods", 400,
                            R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)"
                            R"("namespace":"y"},"spec":{"containers":[{"name":"c"}]}})");
  EXPECT_NE(field(mismatch, {"message"}).find("does not match the namespace"), std::string::npos);
}

} // namespace
} // namespace phalanx::cli_test
