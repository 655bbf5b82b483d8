// The HTTP server over real loopback connections: every endpoint, watches, TLS, tokens, limits,
// and the table of bad inputs with the status and message each must get.

#include "api/openapi.hpp"
#include "api/tests/server_fixture.hpp"

#include "api/proto/kube_wire.pb.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace phalanx::api::test {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

json::value body_json(const response& r) {
  boost::system::error_code ec;
  auto v = json::parse(r.body, ec);
  EXPECT_FALSE(ec) << r.body;
  return v;
}

request post(std::string target, std::string body, std::string type = "application/json") {
  request r;
  r.method = "POST";
  r.target = std::move(target);
  r.body = std::move(body);
  r.content_type = std::move(type);
  return r;
}

request with_method(std::string method, std::string target, std::string body = "",
                    std::string type = "") {
  request r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  r.content_type = std::move(type);
  return r;
}

constexpr const char* table_accept =
  "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
  "g=meta.k8s.io,application/json";

const char* pod_json(const char* name) {
  static thread_local std::string s;
  s = std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")") + name +
      R"(","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}]}})";
  return s.c_str();
}

class Server : public ::testing::Test {
 protected:
  void SetUp() override { s_ = start_server(); }
  uint16_t port() const { return s_.port(); }
  api::testing::fake_service& svc() { return *s_.svc; }
  running_server s_;
};

// ---------------------------------------------------------------------------------------------
// Discovery, health, metrics

TEST_F(Server, ServesDiscoveryAsKubectlReadsIt) {
  auto api = body_json(get(port(), "/api"));
  EXPECT_EQ(api.at("kind"), "APIVersions");
  EXPECT_EQ(api.at("versions").at(0), "v1");
  EXPECT_EQ(api.at("serverAddressByClientCIDRs").at(0).at("serverAddress").as_string(),
            "127.0.0.1:" + std::to_string(port()));

  auto groups = body_json(get(port(), "/apis"));
  EXPECT_EQ(groups.at("kind"), "APIGroupList");
  EXPECT_EQ(json::serialize(groups.at("groups").at(0).at("preferredVersion")),
            R"({"groupVersion":"scheduling.volcano.sh/v1beta1","version":"v1beta1"})");
  EXPECT_EQ(groups.at("groups").at(1).at("name"), "batch.volcano.sh");

  auto core = body_json(get(port(), "/api/v1"));
  EXPECT_EQ(core.at("groupVersion"), "v1");
  EXPECT_EQ(core.at("resources").at(0).at("name"), "pods");
  EXPECT_EQ(core.at("resources").at(0).at("namespaced"), true);
  EXPECT_EQ(core.at("resources").at(1).at("name"), "nodes");
  EXPECT_EQ(core.at("resources").at(1).at("namespaced"), false);
  EXPECT_NE(json::serialize(core.at("resources").at(1).at("verbs")).find("patch"),
            std::string::npos);

  auto sched = body_json(get(port(), "/apis/scheduling.volcano.sh/v1beta1"));
  EXPECT_EQ(sched.at("resources").at(0).at("name"), "podgroups");
  EXPECT_EQ(json::serialize(sched.at("resources").at(0).at("shortNames")),
            R"(["pg","podgroup-v1beta1"])");
  EXPECT_EQ(json::serialize(sched.at("resources").at(1).at("shortNames")), R"(["q","queue-v1beta1"])");
  auto batch = body_json(get(port(), "/apis/batch.volcano.sh/v1alpha1"));
  EXPECT_EQ(batch.at("resources").at(0).at("kind"), "Job");
  EXPECT_EQ(json::serialize(batch.at("resources").at(0).at("shortNames")), R"(["vcjob","vj"])");

  auto group = body_json(get(port(), "/apis/batch.volcano.sh"));
  EXPECT_EQ(group.at("kind"), "APIGroup");
  EXPECT_EQ(body_json(get(port(), "/version")).at("minor"), "32");
  EXPECT_EQ(get(port(), "/apis/apps/v1").status, 404);
  EXPECT_EQ(get(port(), "/api/v2").status, 404);
  EXPECT_EQ(get(port(), "/").status, 200);
}

TEST_F(Server, HealthReadinessAndMetrics) {
  auto h = get(port(), "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok");
  EXPECT_EQ(get(port(), "/livez").status, 200);
  EXPECT_EQ(get(port(), "/readyz").status, 200);
  svc().set_ready(false);
  auto r = get(port(), "/readyz");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("not ready"), std::string::npos);
  svc().set_ready(true);
  get(port(), "/api/v1/nodes");
  get(port(), "/api/v1/nodes/missing");
  auto m = get(port(), "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(m.body.find("phalanx_fake_objects"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("phalanx_http_requests_total{verb=\"LIST\",code=\"200\"} 1"),
            std::string::npos)
    << m.body;
  EXPECT_NE(m.body.find("phalanx_http_requests_total{verb=\"GET\",code=\"404\"} 1"),
            std::string::npos);
  EXPECT_NE(m.body.find("phalanx_http_request_duration_seconds_bucket{verb=\"LIST\",le=\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(m.body.find("phalanx_http_open_connections "), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Resources

TEST_F(Server, CreatesGetsListsAndDeletesPods) {
  auto created = call(port(), post("/api/v1/namespaces/team/pods", pod_json("web-1")));
  ASSERT_EQ(created.status, 201) << created.body;
  auto obj = body_json(created);
  EXPECT_EQ(obj.at("metadata").at("namespace"), "team");
  EXPECT_FALSE(obj.at("metadata").at("uid").as_string().empty());
  EXPECT_EQ(obj.at("status").at("phase"), "Pending");
  EXPECT_EQ(obj.at("spec").at("containers").at(0).at("image"), "nginx");

  auto got = get(port(), "/api/v1/namespaces/team/pods/web-1");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(body_json(got).at("metadata").at("name"), "web-1");

  auto list = body_json(get(port(), "/api/v1/namespaces/team/pods"));
  EXPECT_EQ(list.at("kind"), "PodList");
  EXPECT_EQ(list.at("items").as_array().size(), 1u);
  auto all = body_json(get(port(), "/api/v1/pods"));
  EXPECT_EQ(all.at("items").as_array().size(), 3u);  // Two gang pods in "default".
  auto selected = body_json(get(port(), "/api/v1/pods?labelSelector=app%3Dweb"));
  EXPECT_EQ(selected.at("items").as_array().size(), 1u);
  auto by_name = body_json(get(port(), "/api/v1/pods?fieldSelector=metadata.name%3Dresnet-ps-0"));
  ASSERT_EQ(by_name.at("items").as_array().size(), 1u);
  // A pod's node and phase, as `kubectl describe node` and `--field-selector` send them.
  auto stored = svc().find(resource_kind::pod, "default", "resnet-ps-0");
  ASSERT_TRUE(stored);
  auto bound = std::get<pod_object>(*stored);
  bound.pod.node_name = "gpu-node-1";
  bound.pod.phase = scheduler::pod_phase::running;
  svc().put(bound);
  auto count = [&](const std::string& selector) {
    auto r = get(port(), "/api/v1/pods?fieldSelector=" + selector);
    EXPECT_EQ(r.status, 200) << selector << ": " << r.body;
    return body_json(r).at("items").as_array().size();
  };
  EXPECT_EQ(count("spec.nodeName%3Dgpu-node-1"), 1u);
  EXPECT_EQ(count("spec.nodeName%3Dgpu-node-1,status.phase!%3DSucceeded,status.phase!%3DFailed"),
            1u);
  EXPECT_EQ(count("spec.nodeName%3Dgpu-node-1,status.phase!%3DRunning"), 0u);
  EXPECT_EQ(count("spec.nodeName%3D"), 2u) << "not bound";
  EXPECT_EQ(count("status.phase%3DPending"), 2u);
  EXPECT_EQ(count("status.phase%3D%3DRunning"), 1u);

  auto gone = call(port(), with_method("DELETE", "/api/v1/namespaces/team/pods/web-1"));
  EXPECT_EQ(gone.status, 200);
  EXPECT_EQ(get(port(), "/api/v1/namespaces/team/pods/web-1").status, 404);
  auto again = call(port(), with_method("DELETE", "/api/v1/namespaces/team/pods/web-1"));
  EXPECT_EQ(again.status, 404);
  EXPECT_NE(again.body.find(R"(pods \"web-1\" not found)"), std::string::npos) << again.body;
}

TEST_F(Server, CreatesEveryKindFromTheExamplesInYamlAndJson) {
  auto job = call(port(), post("/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs",
                               read_file(example_path("mpi-job.yaml")), "application/yaml"));
  ASSERT_EQ(job.status, 201) << job.body;
  auto j = body_json(job);
  EXPECT_EQ(j.at("spec").at("plugins").at("ssh").as_array().size(), 0u);
  EXPECT_EQ(j.at("status").at("state").at("phase"), "Pending");
  EXPECT_EQ(j.at("status").at("minAvailable"), 4);
  // The fake service expands the job as the runtime would.
  auto pods = body_json(get(port(), "/api/v1/namespaces/ml/pods"));
  EXPECT_EQ(pods.at("items").as_array().size(), 4u);
  auto pgs = body_json(get(port(), "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups"));
  EXPECT_EQ(pgs.at("items").as_array().size(), 1u);

  auto q = call(port(), post("/apis/scheduling.volcano.sh/v1beta1/queues",
                             R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
                                 "metadata":{"name":"batch","namespace":"ignored"},
                                 "spec":{"weight":3,"capability":{"cpu":"10"}}})"));
  ASSERT_EQ(q.status, 201) << q.body;
  EXPECT_FALSE(body_json(q).at("metadata").as_object().contains("namespace"));
  EXPECT_EQ(body_json(q).at("status").at("state"), "Open");

  auto node = call(port(), post("/api/v1/nodes",
                                "apiVersion: v1\nkind: Node\nmetadata: {name: extra}\n"
                                "status: {allocatable: {cpu: 4, memory: 8Gi}}\n",
                                "application/yaml"));
  ASSERT_EQ(node.status, 201) << node.body;
  EXPECT_EQ(body_json(node).at("status").at("allocatable").at("pods"), "110");

  auto pg = call(port(), post("/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups",
                              R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
                                  "metadata":{"name":"g"},"spec":{"minMember":2,"queue":"batch"}})"));
  ASSERT_EQ(pg.status, 201) << pg.body;
  auto exists = call(port(), post("/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups",
                                  R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
                                      "metadata":{"name":"g"},"spec":{"minMember":2,"queue":"batch"}})"));
  EXPECT_EQ(exists.status, 409);
  EXPECT_EQ(body_json(exists).at("reason"), "AlreadyExists");
}

TEST_F(Server, GeneratesNames) {
  auto r = call(port(), post("/api/v1/namespaces/team/pods",
                             R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"batch-"},
                                 "spec":{"containers":[{"name":"c"}]}})"));
  ASSERT_EQ(r.status, 201) << r.body;
  std::string name(body_json(r).at("metadata").at("name").as_string());
  EXPECT_EQ(name.size(), std::string("batch-").size() + 5);
  EXPECT_EQ(name.rfind("batch-", 0), 0u);
}

TEST_F(Server, AnswersTablesAndYaml) {
  auto t = get(port(), "/apis/scheduling.volcano.sh/v1beta1/podgroups", table_accept);
  ASSERT_EQ(t.status, 200);
  EXPECT_EQ(t.header("content-type"), "application/json;as=Table;v=v1;g=meta.k8s.io");
  auto table = body_json(t);
  EXPECT_EQ(table.at("kind"), "Table");
  EXPECT_EQ(table.at("columnDefinitions").at(2).at("name"), "minMember");
  EXPECT_EQ(table.at("rows").at(0).at("cells").at(0), "resnet-gang");
  EXPECT_EQ(table.at("rows").at(0).at("cells").at(5), "research");
  EXPECT_EQ(table.at("rows").at(0).at("object").at("kind"), "PartialObjectMetadata");

  auto one = body_json(get(port(), "/api/v1/nodes/gpu-node-1", table_accept));
  EXPECT_EQ(one.at("rows").as_array().size(), 1u);
  auto full = body_json(get(port(), "/api/v1/nodes?includeObject=Object", table_accept));
  EXPECT_EQ(full.at("rows").at(0).at("object").at("kind"), "Node");

  auto y = get(port(), "/apis/scheduling.volcano.sh/v1beta1/queues/research", "application/yaml");
  ASSERT_EQ(y.status, 200);
  EXPECT_EQ(y.header("content-type"), "application/yaml");
  auto docs = parse_yaml(y.body);
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(docs->front().at("spec").at("weight"), 2);
}

// PUT and PATCH of every kind but jobs (api/update.hpp): the answer is the object as stored,
// status is not the request's to change, and a PUT of a manifest keeps what the server set.
TEST_F(Server, PutsAndPatchesNodesQueuesAndPodGroups) {
  const std::string node = "/api/v1/nodes/cpu-node-1";
  auto before = body_json(call(port(), with_method("GET", node)));
  auto tainted = call(port(), with_method("PATCH", node,
                                          R"({"metadata":{"labels":{"disk":"ssd"}},)"
                                          R"("spec":{"taints":[{"key":"k","value":"v","effect":"NoSchedule"}]},)"
                                          R"("status":{"allocatable":{"cpu":"999"}}})",
                                          "application/strategic-merge-patch+json"));
  ASSERT_EQ(tainted.status, 200) << tainted.body;
  auto t = body_json(tainted);
  EXPECT_EQ(t.at("metadata").at("labels").at("disk"), "ssd");
  EXPECT_EQ(t.at("spec").at("taints").at(0).at("effect"), "NoSchedule");
  EXPECT_EQ(t.at("status").at("allocatable"), before.at("status").at("allocatable"));
  EXPECT_EQ(t.at("metadata").at("uid"), before.at("metadata").at("uid"));

  // kubectl replace: the manifest without uid, version or creation time.
  auto replaced = call(port(), with_method("PUT", node,
                                           "apiVersion: v1\nkind: Node\nmetadata:\n  name: "
                                           "cpu-node-1\nspec:\n  unschedulable: true\n",
                                           "application/yaml"));
  ASSERT_EQ(replaced.status, 200) << replaced.body;
  auto r = body_json(replaced);
  EXPECT_EQ(r.at("spec").at("unschedulable"), true);
  EXPECT_FALSE(r.at("spec").as_object().contains("taints"));
  EXPECT_FALSE(r.at("metadata").as_object().contains("labels"));
  EXPECT_EQ(r.at("metadata").at("creationTimestamp"), before.at("metadata").at("creationTimestamp"));

  // A queue: a JSON patch with a test that holds, then a PUT naming the version it read.
  const std::string queue = "/apis/scheduling.volcano.sh/v1beta1/queues/research";
  auto weighted = call(port(), with_method("PATCH", queue,
                                           R"([{"op":"test","path":"/metadata/name","value":"research"},)"
                                           R"({"op":"replace","path":"/spec/weight","value":7}])",
                                           "application/json-patch+json"));
  ASSERT_EQ(weighted.status, 200) << weighted.body;
  auto q = body_json(weighted);
  EXPECT_EQ(q.at("spec").at("weight"), 7);
  q.as_object()["spec"].as_object()["weight"] = 9;
  auto put = call(port(), with_method("PUT", queue, json::serialize(q), "application/json"));
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(body_json(put).at("spec").at("weight"), 9);
  auto stale = call(port(), with_method("PUT", queue, json::serialize(q), "application/json"));
  EXPECT_EQ(stale.status, 409) << stale.body;

  // A PodGroup by merge patch.
  auto group = call(port(), with_method("PATCH",
                                        "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/"
                                        "podgroups/resnet-gang",
                                        R"({"spec":{"minMember":1}})",
                                        "application/merge-patch+json"));
  ASSERT_EQ(group.status, 200) << group.body;
  EXPECT_EQ(body_json(group).at("spec").at("minMember"), 1);

  // A pod's label by PUT of what GET served.
  const std::string pod = "/api/v1/namespaces/default/pods/resnet-ps-0";
  auto served = body_json(call(port(), with_method("GET", pod)));
  served.as_object()["metadata"].as_object()["labels"] = json::object{{"tier", "ps"}};
  auto labelled = call(port(), with_method("PUT", pod, json::serialize(served), "application/json"));
  ASSERT_EQ(labelled.status, 200) << labelled.body;
  EXPECT_EQ(body_json(labelled).at("metadata").at("labels").at("tier"), "ps");
}

// fieldValidation as kube-apiserver takes it: Strict refuses fields the kind's type lacks, Warn
// (the default) tells them in a Warning header, Ignore drops them. A pod's spec and containers
// are looked into too: every field Kubernetes 1.37 has passes, a typo does not.
TEST_F(Server, FieldValidationRefusesWarnsOfOrIgnoresUnknownFields) {
  const std::string queues = "/apis/scheduling.volcano.sh/v1beta1/queues";
  auto queue = [](const std::string& name) {
    return R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":")" +
           name + R"(","labelz":{"a":"b"}},"spec":{"wieght":3,"extendClusters":[]}})";
  };
  auto strict = call(port(), post(queues + "?fieldValidation=Strict", queue("a")));
  EXPECT_EQ(strict.status, 400) << strict.body;
  EXPECT_EQ(body_json(strict).at("message"),
            "strict decoding error: unknown field \"metadata.labelz\", unknown field "
            "\"spec.wieght\"");
  EXPECT_FALSE(svc().find(resource_kind::queue, "", "a"));

  auto warned = call(port(), post(queues, queue("b")));
  EXPECT_EQ(warned.status, 201) << warned.body;
  EXPECT_NE(warned.header("warning").find("299 - \"unknown field \\\""), std::string::npos)
      << warned.header("warning");

  auto ignored = call(port(), post(queues + "?fieldValidation=Ignore", queue("c")));
  EXPECT_EQ(ignored.status, 201) << ignored.body;
  EXPECT_EQ(ignored.header("warning"), "");

  auto bad = call(port(), post(queues + "?fieldValidation=Loose", queue("d")));
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("fieldValidation: Unsupported value: \\\"Loose\\\""),
            std::string::npos)
      << bad.body;

  auto pod = call(port(), post("/api/v1/namespaces/team/pods?fieldValidation=Strict",
                               R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"v"},)"
                               R"("spec":{"restartPolicy":"Never","volumes":[{"name":"x","emptyDir":{}}],)"
                               R"("containers":[{"name":"c","image":"i","volumeMounts":[{"name":"x","mountPath":"/x"}]}]}})"));
  EXPECT_EQ(pod.status, 201) << pod.body;
  // "resource" for "resources": the container would request nothing.
  auto typo = call(port(), post("/api/v1/namespaces/team/pods?fieldValidation=Strict",
                                R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w"},)"
                                R"("spec":{"nodeSelectr":{"a":"b"},"containers":[{"name":"c","image":"i",)"
                                R"("resource":{"requests":{"cpu":"1"}},"ports":[{"containerPort":80,"nam":"x"}]}]}})"));
  EXPECT_EQ(typo.status, 400) << typo.body;
  EXPECT_EQ(body_json(typo).at("message"),
            "strict decoding error: unknown field \"spec.nodeSelectr\", unknown field "
            "\"spec.containers[0].resource\", unknown field \"spec.containers[0].ports[0].nam\"");
  // Inside a container's env, mounts and probes and a pod's volumes too, as the apiserver
  // looks (k8s.io/api v0.37.2): "valu" for "value" would start the container without it.
  auto valid_inside = call(
      port(), post("/api/v1/namespaces/team/pods?fieldValidation=Strict",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"inside"},"spec":{)"
                   R"("volumes":[{"name":"cm","configMap":{"name":"c"}}],"containers":[{"name":"c","image":"i",)"
                   R"("env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"c","key":"k","optional":true}}},)"
                   R"({"name":"C","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},)"
                   R"({"name":"D","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":1}}}],)"
                   R"("envFrom":[{"prefix":"X_","secretRef":{"name":"s"}}],)"
                   R"("volumeMounts":[{"name":"cm","mountPath":"/etc/c","readOnly":true}],)"
                   R"("livenessProbe":{"httpGet":{"path":"/","port":8080,"httpHeaders":[{"name":"h","value":"v"}]},"periodSeconds":5},)"
                   R"("readinessProbe":{"tcpSocket":{"port":"http"}},"startupProbe":{"exec":{"command":["true"]}}}]}})"));
  EXPECT_EQ(valid_inside.status, 201) << valid_inside.body;
  auto typo_inside = call(
      port(), post("/api/v1/namespaces/team/pods?fieldValidation=Strict",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"typo-inside"},"spec":{)"
                   R"("volumes":[{"name":"cm","configmap":{"name":"c"}}],"containers":[{"name":"c","image":"i",)"
                   R"("env":[{"name":"A","valu":"1"},{"name":"B","valueFrom":{"configMapKeyRef":{"nme":"c","key":"k"}}}],)"
                   R"("envFrom":[{"secretref":{"name":"s"}}],"volumeMounts":[{"name":"cm","mountpath":"/etc/c"}],)"
                   R"("livenessProbe":{"httpGet":{"port":8080},"periodSecond":5}}]}})"));
  EXPECT_EQ(typo_inside.status, 400) << typo_inside.body;
  EXPECT_EQ(body_json(typo_inside).at("message"),
            "strict decoding error: unknown field \"spec.volumes[0].configmap\", unknown field "
            "\"spec.containers[0].env[0].valu\", unknown field "
            "\"spec.containers[0].env[1].valueFrom.configMapKeyRef.nme\", unknown field "
            "\"spec.containers[0].envFrom[0].secretref\", unknown field "
            "\"spec.containers[0].volumeMounts[0].mountpath\", unknown field "
            "\"spec.containers[0].livenessProbe.periodSecond\"");
  // A job's pod template is the same type.
  auto job = call(port(), post("/apis/batch.volcano.sh/v1alpha1/namespaces/team/jobs?fieldValidation=Strict",
                               R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":"j"},)"
                               R"("spec":{"minAvailable":1,"tasks":[{"name":"t","replicas":1,"template":{"spec":)"
                               R"({"containers":[{"name":"c","image":"i","resources":{"requets":{"cpu":"1"}}}]}}}]}})"));
  EXPECT_EQ(job.status, 400) << job.body;
  EXPECT_NE(body_json(job).at("message").as_string().find(
                "unknown field \"spec.tasks[0].template.spec.containers[0].resources.requets\""),
            std::string::npos)
      << job.body;

  auto patched = call(port(), with_method("PATCH", queues + "/research?fieldValidation=Strict",
                                          R"({"spec":{"wieght":1}})",
                                          "application/merge-patch+json"));
  EXPECT_EQ(patched.status, 400) << patched.body;
  EXPECT_NE(patched.body.find("unknown field \\\"spec.wieght\\\""), std::string::npos)
      << patched.body;
}

// What kubectl reads before it leaves field validation to the server: without it, every
// `kubectl apply -f` asked for the OpenAPI v2 schema and failed.
TEST_F(Server, ServesOpenApiV3AsKubectlReadsItToValidateOnTheServer) {
  auto index = call(port(), with_method("GET", "/openapi/v3"));
  ASSERT_EQ(index.status, 200) << index.body;
  auto url = body_json(index).at("paths").at("apis/scheduling.volcano.sh/v1beta1")
                 .at("serverRelativeURL").as_string();
  auto doc = call(port(), with_method("GET", std::string(url)));
  ASSERT_EQ(doc.status, 200) << doc.body;
  auto paths = body_json(doc).at("paths");
  const auto& patch =
      paths.at("/apis/scheduling.volcano.sh/v1beta1/namespaces/{namespace}/podgroups/{name}")
          .at("patch");
  EXPECT_EQ(patch.at("x-kubernetes-group-version-kind").at("kind"), "PodGroup");
  EXPECT_EQ(patch.at("parameters").at(0).at("name"), "fieldValidation");
  auto core = call(port(), with_method("GET", "/openapi/v3/api/v1"));
  ASSERT_EQ(core.status, 200);
  EXPECT_TRUE(body_json(core).at("paths").as_object().contains("/api/v1/nodes/{name}"));
  // A job's PATCH is listed (kubectl looks for the parameter there before a create), though it
  // answers 405.
  auto jobs = call(port(), with_method("GET", "/openapi/v3/apis/batch.volcano.sh/v1alpha1"));
  EXPECT_EQ(body_json(jobs)
                .at("paths")
                .at("/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{name}")
                .at("patch")
                .at("x-kubernetes-group-version-kind")
                .at("kind"),
            "Job");
  EXPECT_EQ(call(port(), with_method("GET", "/openapi/v3/apis/apps/v1")).status, 404);
}

// /openapi/v2 in the encoding asked for: protobuf for kubectl (which asks for nothing else),
// JSON for `kubectl get --raw` and curl, and a 406 that says what is served for the rest; never
// one encoding under the other's name.
TEST_F(Server, ServesOpenApiV2AsJsonOrProtobufByAccept) {
  auto v2 = [&](std::string accept) {
    auto r = with_method("GET", "/openapi/v2");
    r.accept = std::move(accept);
    return call(port(), r);
  };
  auto proto = v2("application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
  ASSERT_EQ(proto.status, 200) << proto.body;
  // Answered in kube-apiserver's spelling, which Go's media type parser takes.
  EXPECT_EQ(proto.header("content-type"),
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
  EXPECT_EQ(proto.header("vary"), "Accept");
  ASSERT_TRUE(openapi_v2_protobuf().ok());
  EXPECT_EQ(proto.body, *openapi_v2_protobuf());
  for (const std::string accept : {"", "application/json", "application/json, */*",
                                   "application/yaml;q=0.9, */*;q=0.8"}) {
    auto plain = v2(accept);
    ASSERT_EQ(plain.status, 200) << accept;
    EXPECT_EQ(plain.header("content-type"), "application/json") << accept;
    EXPECT_EQ(body_json(plain), openapi_v2_document()) << accept;
  }
  auto refused = v2("application/yaml");
  EXPECT_EQ(refused.status, 406);
  EXPECT_EQ(refused.header("content-type"), "application/json");
  EXPECT_NE(refused.body.find("/openapi/v2 is served as application/json and as "
                              "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, "
                              "not \\\"application/yaml\\\""),
            std::string::npos)
      << refused.body;
  EXPECT_EQ(call(port(), with_method("POST", "/openapi/v2", "{}", "application/json")).status,
            405);
}

// Strict field validation inside a pod's affinity and tolerations: a misspelt key there would
// drop the rule and place the pod anywhere.
TEST_F(Server, RefusesMisspeltKeysInsideAPodsAffinityAndTolerations) {
  auto pod = [](std::string spec_extra) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: picky}\nspec:\n  containers:\n"
           "  - {name: c, image: x}\n" + spec_extra;
  };
  auto strict = [&](const std::string& body) {
    return call(port(), with_method("POST",
                                    "/api/v1/namespaces/default/pods?fieldValidation=Strict",
                                    body, "application/yaml"));
  };
  auto affinity = strict(pod("  affinity:\n    nodeAffinity:\n      requiredDuringScheduling:\n"
                             "        nodeSelectorTerms: []\n"));
  EXPECT_EQ(affinity.status, 400) << affinity.body;
  EXPECT_NE(affinity.body.find(
                "unknown field \\\"spec.affinity.nodeAffinity.requiredDuringScheduling\\\""),
            std::string::npos)
      << affinity.body;
  auto term = strict(pod("  affinity:\n    podAntiAffinity:\n"
                         "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                         "      - topologyKey: kubernetes.io/hostname\n"
                         "        labelSelector: {matchLabel: {app: x}}\n"));
  EXPECT_EQ(term.status, 400) << term.body;
  EXPECT_NE(term.body.find("unknown field \\\"spec.affinity.podAntiAffinity."
                           "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
                           "matchLabel\\\""),
            std::string::npos)
      << term.body;
  auto toleration = strict(pod("  tolerations:\n  - {key: gpu, operator: Exists, efect: "
                               "NoSchedule}\n"));
  EXPECT_EQ(toleration.status, 400) << toleration.body;
  EXPECT_NE(toleration.body.find("unknown field \\\"spec.tolerations[0].efect\\\""),
            std::string::npos)
      << toleration.body;
  // Spelt right, the same pod goes in.
  auto right = strict(pod("  tolerations:\n  - {key: gpu, operator: Exists, effect: "
                          "NoSchedule}\n"));
  EXPECT_EQ(right.status, 201) << right.body;
}

// dryRun=All: creates, updates and deletes are checked and answered, nothing stored or removed.
TEST_F(Server, ADryRunIsAnsweredAndStoresNothing) {
  const std::string queues = "/apis/scheduling.volcano.sh/v1beta1/queues";
  auto created = call(port(), post(queues + "?dryRun=All",
                                   R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",)"
                                   R"("metadata":{"name":"ghost"},"spec":{"weight":2}})"));
  EXPECT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(body_json(created).at("metadata").at("name"), "ghost");
  EXPECT_FALSE(svc().find(resource_kind::queue, "", "ghost"));

  auto patched = call(port(), with_method("PATCH", queues + "/research?dryRun=All",
                                          R"({"spec":{"weight":9}})",
                                          "application/merge-patch+json"));
  EXPECT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(body_json(patched).at("spec").at("weight"), 9);
  auto stored = svc().find(resource_kind::queue, "", "research");
  ASSERT_TRUE(stored);
  EXPECT_NE(std::get<queue_object>(*stored).queue.weight, 9);

  auto deleted = call(port(), with_method("DELETE", queues + "/research?dryRun=All"));
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(body_json(deleted).at("metadata").at("name"), "research");
  EXPECT_TRUE(svc().find(resource_kind::queue, "", "research"));
  // kubectl delete --dry-run=server says it in its DeleteOptions body.
  auto in_body = call(port(), with_method("DELETE", queues + "/research",
                                          R"({"kind":"DeleteOptions","apiVersion":"v1",)"
                                          R"("dryRun":["All"],"propagationPolicy":"Background"})",
                                          "application/json"));
  EXPECT_EQ(in_body.status, 200) << in_body.body;
  EXPECT_TRUE(svc().find(resource_kind::queue, "", "research"));
  // A typed client sends its DeleteOptions in Kubernetes' protobuf encoding: the dry run holds.
  kube::DeleteOptions proto_options;
  proto_options.add_dry_run("All");
  kube::Unknown envelope;
  envelope.mutable_type_meta()->set_api_version("v1");
  envelope.mutable_type_meta()->set_kind("DeleteOptions");
  envelope.set_raw(proto_options.SerializeAsString());
  auto typed = call(port(), with_method("DELETE", queues + "/research",
                                        std::string("k8s\0", 4) + envelope.SerializeAsString(),
                                        "application/vnd.kubernetes.protobuf"));
  EXPECT_EQ(typed.status, 200) << typed.body;
  EXPECT_TRUE(svc().find(resource_kind::queue, "", "research"));
  for (const char* bad : {R"({"dryRun":["Some"]})", R"({"dryRun":"All"})", "[1]", "not json"}) {
    auto refused = call(port(), with_method("DELETE", queues + "/research", bad,
                                            "application/json"));
    EXPECT_EQ(refused.status, 400) << bad << ": " << refused.body;
  }
  EXPECT_EQ(call(port(), with_method("PATCH", queues + "/research?dryRun=Some", "{}",
                                     "application/merge-patch+json"))
                .status,
            400);
  EXPECT_TRUE(svc().find(resource_kind::queue, "", "research"));
  // Without a dry run, the body's options are taken and the delete goes through.
  auto real = call(port(), with_method("DELETE", queues + "/research",
                                       R"({"kind":"DeleteOptions","apiVersion":"v1"})",
                                       "application/json"));
  EXPECT_EQ(real.status, 200) << real.body;
  EXPECT_FALSE(svc().find(resource_kind::queue, "", "research"));
}

// DeleteOptions.gracePeriodSeconds reaches the service from the query, the JSON body (which
// wins) or a typed client's protobuf body; a negative one is 1 s, as kube-apiserver takes it; a
// value that is not an integer is 400 naming the field.
TEST_F(Server, ADeletesGracePeriodReachesTheService) {
  const std::string pods = "/api/v1/namespaces/default/pods";
  for (const char* name : {"g1", "g2", "g3", "g4", "g5"})
    ASSERT_EQ(call(port(), post(pods, pod_json(name))).status, 201);
  EXPECT_EQ(call(port(), with_method("DELETE", pods + "/g1?gracePeriodSeconds=7")).status, 200);
  EXPECT_EQ(call(port(), with_method("DELETE", pods + "/g2?gracePeriodSeconds=7",
                                     R"({"kind":"DeleteOptions","apiVersion":"v1",)"
                                     R"("gracePeriodSeconds":0})",
                                     "application/json"))
                .status,
            200);
  EXPECT_EQ(call(port(), with_method("DELETE", pods + "/g3?gracePeriodSeconds=-5")).status, 200);
  kube::DeleteOptions proto_options;
  proto_options.set_grace_period_seconds(12);
  kube::Unknown envelope;
  envelope.mutable_type_meta()->set_api_version("v1");
  envelope.mutable_type_meta()->set_kind("DeleteOptions");
  envelope.set_raw(proto_options.SerializeAsString());
  EXPECT_EQ(call(port(), with_method("DELETE", pods + "/g4",
                                     std::string("k8s\0", 4) + envelope.SerializeAsString(),
                                     "application/vnd.kubernetes.protobuf"))
                .status,
            200);
  EXPECT_EQ(call(port(), with_method("DELETE", pods + "/g5")).status, 200);
  EXPECT_EQ(svc().delete_grace_periods(),
            (std::vector<std::optional<int64_t>>{7, 0, 1, 12, std::nullopt}));

  ASSERT_EQ(call(port(), post(pods, pod_json("kept"))).status, 201);
  for (const std::string& bad : {pods + "/kept?gracePeriodSeconds=soon",
                                pods + "/kept?gracePeriodSeconds=1.5"}) {
    auto refused = call(port(), with_method("DELETE", bad));
    EXPECT_EQ(refused.status, 400) << bad;
    EXPECT_NE(refused.body.find("gracePeriodSeconds"), std::string::npos) << refused.body;
  }
  auto in_body = call(port(), with_method("DELETE", pods + "/kept",
                                          R"({"gracePeriodSeconds":"30"})", "application/json"));
  EXPECT_EQ(in_body.status, 400) << in_body.body;
  EXPECT_TRUE(svc().find(resource_kind::pod, "default", "kept"));
}

// A terminating pod shows its deletionTimestamp and grace period, and kubectl's STATUS column
// says Terminating.
TEST_F(Server, ATerminatingPodShowsItsDeletionAndTerminatingInTables) {
  auto created = call(port(), post("/api/v1/namespaces/default/pods", pod_json("leaving")));
  ASSERT_EQ(created.status, 201);
  auto stored = svc().find(resource_kind::pod, "default", "leaving");
  ASSERT_TRUE(stored);
  auto pod = std::get<pod_object>(*stored);
  pod.pod.phase = scheduler::pod_phase::running;
  const auto deadline = std::chrono::time_point_cast<scheduler::duration>(
      scheduler::timestamp{} + std::chrono::seconds(1'800'000'000));
  pod.termination = scheduler::pod_termination{deadline, 30};
  svc().put(pod);
  auto got = body_json(get(port(), "/api/v1/namespaces/default/pods/leaving"));
  EXPECT_EQ(got.at("metadata").at("deletionTimestamp").as_string(), format_time(deadline));
  EXPECT_EQ(got.at("metadata").at("deletionGracePeriodSeconds"), 30);
  auto table = body_json(get(port(), "/api/v1/namespaces/default/pods/leaving", table_accept));
  EXPECT_EQ(table.at("rows").at(0).at("cells").at(2), "Terminating");
}

TEST_F(Server, ActionsAndPatches) {
  auto cordon = call(port(), post("/api/v1/nodes/cpu-node-1/cordon", ""));
  ASSERT_EQ(cordon.status, 200) << cordon.body;
  EXPECT_EQ(body_json(cordon).at("spec").at("unschedulable"), true);
  auto uncordon = call(port(), with_method("PATCH", "/api/v1/nodes/cpu-node-1",
                                           R"({"spec":{"unschedulable":null}})",
                                           "application/strategic-merge-patch+json"));
  ASSERT_EQ(uncordon.status, 200) << uncordon.body;
  EXPECT_FALSE(body_json(uncordon).at("spec").as_object().contains("unschedulable"));
  auto patch = call(port(), with_method("PATCH", "/api/v1/nodes/cpu-node-1",
                                        R"({"spec":{"unschedulable":true}})",
                                        "application/merge-patch+json"));
  EXPECT_EQ(body_json(patch).at("spec").at("unschedulable"), true);
  auto noop = call(port(), with_method("PATCH", "/api/v1/nodes/cpu-node-1", "{}",
                                       "application/merge-patch+json"));
  EXPECT_EQ(noop.status, 200);

  auto close = call(port(), post("/apis/scheduling.volcano.sh/v1beta1/queues/research/close", ""));
  EXPECT_EQ(body_json(close).at("status").at("state"), "Closed");
  auto open = call(port(), post("/apis/scheduling.volcano.sh/v1beta1/queues/research/open", ""));
  EXPECT_EQ(body_json(open).at("status").at("state"), "Open");

  ASSERT_EQ(call(port(), post("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs",
                              read_file(example_path("tensorflow-job.yaml")), "application/yaml"))
              .status,
            201);
  auto suspend = call(port(), post("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/"
                                   "tensorflow-dist-mnist/suspend",
                                   ""));
  EXPECT_EQ(body_json(suspend).at("status").at("state").at("phase"), "Aborted");
  auto resume = call(port(), post("/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/"
                                  "tensorflow-dist-mnist/resume",
                                  ""));
  EXPECT_EQ(body_json(resume).at("status").at("state").at("phase"), "Pending");

  auto fail = call(port(), post("/api/v1/namespaces/default/pods/resnet-ps-0/fail", ""));
  EXPECT_EQ(body_json(fail).at("status").at("phase"), "Failed");
}

TEST_F(Server, EventsOfAnObject) {
  scheduler::event e;
  e.type = "Warning";
  e.reason = "Unschedulable";
  e.message = "3/4 tasks in gang unschedulable";
  e.count = 2;
  svc().add_event(resource_kind::pod_group, "default", "resnet-gang", e);
  auto r = get(port(), "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/"
                       "resnet-gang/events");
  ASSERT_EQ(r.status, 200) << r.body;
  auto v = body_json(r);
  EXPECT_EQ(v.at("kind"), "EventList");
  EXPECT_EQ(v.at("items").at(0).at("reason"), "Unschedulable");
  EXPECT_EQ(v.at("items").at(0).at("involvedObject").at("kind"), "PodGroup");
  EXPECT_EQ(v.at("items").at(0).at("count"), 2);
}

TEST_F(Server, KeepsConnectionsAlive) {
  client c{port()};
  for (int i = 0; i < 20; ++i)
    ASSERT_EQ(c.send(with_method("GET", "/api/v1/nodes")).status, 200);
  EXPECT_EQ(c.connections_opened(), 1);
}

TEST_F(Server, AnswersExpectContinue) {
  raw_connection c{port()};
  std::string body = pod_json("continued");
  ASSERT_TRUE(c.write("POST /api/v1/namespaces/team/pods HTTP/1.1\r\nHost: x\r\n"
                      "Content-Type: application/json\r\nExpect: 100-continue\r\n"
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n"));
  auto interim = c.read_response(5s);
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(c.write(body));
  auto final_answer = c.read_response(5s);
  ASSERT_TRUE(final_answer);
  EXPECT_EQ(final_answer->status, 201) << final_answer->body;
}

TEST_F(Server, ServesManyClientsAtOnce) {
  std::atomic<int> created{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      client c{port()};
      for (int i = 0; i < 25; ++i) {
        std::string name = "p-" + std::to_string(t) + "-" + std::to_string(i);
        if (c.send(post("/api/v1/namespaces/load/pods", pod_json(name.c_str()))).status == 201)
          ++created;
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(created.load(), 200);
  EXPECT_EQ(body_json(get(port(), "/api/v1/namespaces/load/pods")).at("items").as_array().size(),
            200u);
}

TEST_F(Server, SlowServiceDoesNotBlockOtherRequests) {
  svc().set_delay(300ms);
  std::thread slow([&] { EXPECT_EQ(get(port(), "/api/v1/nodes").status, 200); });
  std::this_thread::sleep_for(50ms);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(get(port(), "/healthz").status, 200);  // Answered without the service.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 250ms);
  slow.join();
  svc().set_delay(0ms);
}

TEST(ServerLifetime, LateServiceCallbacksAfterStopAreDropped) {
  auto s = start_server();
  s.svc->set_delay(400ms);
  std::thread t([&] {
    try {
      get(s.port(), "/api/v1/nodes");
    } catch (const std::exception&) {
      // The connection closes without an answer: fine.
    }
  });
  std::this_thread::sleep_for(100ms);
  auto start = std::chrono::steady_clock::now();
  s.srv->stop();
  // The request in flight is answered (the service takes 400 ms), not waited out to the grace.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  s.srv.reset();  // The callback arrives after the server is gone.
  t.join();
  s.svc->drain();
  s.svc->drain();
}

// ---------------------------------------------------------------------------------------------
// Watches

TEST_F(Server, WatchStreamsCurrentObjectsThenChanges) {
  request r;
  r.target = "/api/v1/nodes?watch=1";
  watch_stream w{port(), r};
  ASSERT_EQ(w.status(), 200);
  EXPECT_EQ(w.header("transfer-encoding"), "chunked");
  for (int i = 0; i < 3; ++i) {
    auto line = w.next_line(5s);
    ASSERT_TRUE(line);
    auto e = json::parse(*line);
    EXPECT_EQ(e.at("type"), "ADDED");
    EXPECT_EQ(e.at("object").at("kind"), "Node");
  }
  ASSERT_EQ(call(port(), post("/api/v1/nodes/cpu-node-1/cordon", "")).status, 200);
  auto modified = w.next_line(5s);
  ASSERT_TRUE(modified);
  auto e = json::parse(*modified);
  EXPECT_EQ(e.at("type"), "MODIFIED");
  EXPECT_EQ(e.at("object").at("spec").at("unschedulable"), true);
  // The watch ends cleanly at shutdown.
  s_.srv->stop();
  EXPECT_FALSE(w.next_line(5s));
  EXPECT_TRUE(w.ended_cleanly());
}

TEST_F(Server, WatchFiltersAndResumes) {
  uint64_t rv = svc().resource_version();
  request r;
  r.target = "/api/v1/namespaces/team/pods?watch=true&labelSelector=app%3Dweb&resourceVersion=" +
             std::to_string(rv);
  watch_stream w{port(), r};
  ASSERT_EQ(w.status(), 200);
  call(port(), post("/api/v1/namespaces/other/pods", pod_json("elsewhere")));
  call(port(), post("/api/v1/namespaces/team/pods",
                    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"unlabeled"},"spec":{"containers":[{"name":"c"}]}})"));
  call(port(), post("/api/v1/namespaces/team/pods", pod_json("web-2")));
  call(port(), with_method("DELETE", "/api/v1/namespaces/team/pods/web-2"));
  auto added = w.next_line(5s);
  ASSERT_TRUE(added);
  EXPECT_EQ(json::parse(*added).at("object").at("metadata").at("name"), "web-2");
  auto deleted = w.next_line(5s);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(json::parse(*deleted).at("type"), "DELETED");

  // A version from before: replays what followed it.
  request again;
  again.target = "/api/v1/namespaces/team/pods?watch=1&resourceVersion=" + std::to_string(rv) +
                 "&fieldSelector=metadata.name%3Dweb-2";
  watch_stream w2{port(), again};
  auto first = w2.next_line(5s);
  ASSERT_TRUE(first);
  EXPECT_EQ(json::parse(*first).at("type"), "ADDED");
  auto second = w2.next_line(5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(json::parse(*second).at("type"), "DELETED");
}

TEST_F(Server, WatchFromAVersionThatIsGoneSaysExpired) {
  api::testing::fake_service::options o;
  o.history = 2;
  auto small = std::make_unique<api::testing::fake_service>(o);
  for (int i = 0; i < 5; ++i) {
    node_object n;
    n.node.meta.name = "n" + std::to_string(i);
    small->put(n);
  }
  auto srv = server::start(*small, {});
  ASSERT_TRUE(srv.ok());
  request r;
  r.target = "/api/v1/nodes?watch=1&resourceVersion=1";
  watch_stream w{(*srv)->port(), r};
  auto line = w.next_line(5s);
  ASSERT_TRUE(line);
  auto e = json::parse(*line);
  EXPECT_EQ(e.at("type"), "ERROR");
  EXPECT_EQ(e.at("object").at("code"), 410);
  EXPECT_EQ(e.at("object").at("reason"), "Expired");
  EXPECT_FALSE(w.next_line(5s));
  EXPECT_TRUE(w.ended_cleanly());
  (*srv)->stop();
}

TEST_F(Server, WatchEndsAfterTimeoutSecondsAndWhenTheClientLeaves) {
  request r;
  r.target = "/apis/scheduling.volcano.sh/v1beta1/queues?watch=1&timeoutSeconds=1";
  {
    watch_stream w{port(), r};
    int lines = 0;
    while (w.next_line(5s))
      ++lines;
    EXPECT_EQ(lines, 4);  // default, research, production, closed-q.
    EXPECT_TRUE(w.ended_cleanly());
  }
  request forever;
  forever.target = "/apis/scheduling.volcano.sh/v1beta1/queues?watch=1";
  {
    watch_stream w{port(), forever};
    ASSERT_TRUE(w.next_line(5s));
    EXPECT_EQ(svc().open_watches(), 1u);
    w.close();
  }
  for (int i = 0; i < 100 && svc().open_watches() != 0; ++i)
    std::this_thread::sleep_for(20ms);
  EXPECT_EQ(svc().open_watches(), 0u);
}

TEST_F(Server, WatchAsTable) {
  request r;
  r.target = "/apis/scheduling.volcano.sh/v1beta1/queues?watch=1";
  r.accept = table_accept;
  watch_stream w{port(), r};
  auto first = w.next_line(5s);
  ASSERT_TRUE(first);
  auto e = json::parse(*first);
  EXPECT_EQ(e.at("object").at("kind"), "Table");
  EXPECT_TRUE(e.at("object").as_object().contains("columnDefinitions"));
  auto second = json::parse(w.next_line(5s).value_or("{}"));
  EXPECT_FALSE(second.at("object").as_object().contains("columnDefinitions"));
}

// ---------------------------------------------------------------------------------------------
// TLS and tokens

TEST(ServerSecurity, TlsWithToken) {
  temp_dir dir;
  auto cert = make_self_signed_cert(dir);
  server_options o;
  o.tls_cert_file = cert.cert;
  o.tls_key_file = cert.key;
  o.token_file = dir.write("token", "s3cret-token\n");
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);
  EXPECT_EQ(s.srv->url(), "https://127.0.0.1:" + std::to_string(s.port()));
  tls_client_options tls{true, cert.cert};
  request r;
  r.target = "/api/v1/nodes";
  auto denied = call(s.port(), r, tls);
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(denied.header("www-authenticate"), "Bearer realm=\"phalanx\"");
  EXPECT_EQ(body_json(denied).at("reason"), "Unauthorized");
  r.token = "s3cret-token";
  auto ok = call(s.port(), r, tls);
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(body_json(ok).at("items").as_array().size(), 3u);
  // Probes need no token.
  EXPECT_EQ(call(s.port(), with_method("GET", "/healthz"), tls).status, 200);
  // A watch over TLS.
  request w_req;
  w_req.target = "/api/v1/nodes?watch=1";
  w_req.token = "s3cret-token";
  watch_stream w{s.port(), w_req, tls};
  EXPECT_TRUE(w.next_line(5s));
  // Plain HTTP to the TLS port gets nothing useful.
  raw_connection plain{s.port()};
  plain.write("GET /api/v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(plain.read_until_close(2s).find("HTTP/1.1 200"), std::string::npos);
}

TEST(ServerSecurity, StartFailsOnBadOptions) {
  api::testing::fake_service svc;
  server_options o;
  o.token_file = "/nonexistent/token";
  auto s = server::start(svc, o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), errc::invalid_argument);
  temp_dir dir;
  server_options empty;
  empty.token_file = dir.write("empty", "\n");
  EXPECT_FALSE(server::start(svc, empty).ok());
  server_options tls_half;
  tls_half.tls_cert_file = "/x.crt";
  EXPECT_FALSE(server::start(svc, tls_half).ok());
  server_options bad_cert;
  bad_cert.tls_cert_file = dir.write("bad.crt", "not a cert");
  bad_cert.tls_key_file = dir.write("bad.key", "not a key");
  EXPECT_FALSE(server::start(svc, bad_cert).ok());
  server_options bad_addr;
  bad_addr.address = "not-an-address";
  EXPECT_FALSE(server::start(svc, bad_addr).ok());
}

// ---------------------------------------------------------------------------------------------
// Bad inputs: every one gets its status and a message that names the problem.

enum class profile { plain, token, tight };
enum class how {
  request,             // An ordinary request.
  oversize_declared,   // Content-Length beyond the limit; only the header and a little body sent.
  oversize_chunked,    // A chunked body that grows beyond the limit.
  slow_header,         // Half a header, then nothing.
  slow_body,           // A header and half the body it announced, then nothing.
  too_many_connections,  // max_connections open, all busy (idle ones make room instead).
  huge_header,
};

struct bad_input {
  const char* name;
  int status;
  const char* message;  // A part of the Status message (or of the body).
  how mode = how::request;
  const char* method = "POST";
  std::string target{};
  std::string body{};
  const char* content_type = "application/json";
  const char* accept = "";
  profile server = profile::plain;
  const char* token = "";
};

// Test names show the case's name, not its bytes.
void PrintTo(const bad_input& b, std::ostream* os) {
  *os << b.name;
}

std::string deep_json(int depth) {
  std::string s = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"containers":[{"name":"c"}]},"x":)";
  for (int i = 0; i < depth - 1; ++i)
    s += "[";
  for (int i = 0; i < depth - 1; ++i)
    s += "]";
  return s + "}";
}

std::string deep_yaml(int depth) {
  std::string s = "apiVersion: v1\nkind: Pod\nmetadata: {name: deep}\nx: ";
  for (int i = 0; i < depth - 1; ++i)
    s += "[";
  for (int i = 0; i < depth - 1; ++i)
    s += "]";
  return s + "\n";
}

std::string yaml_bomb() {
  std::string s = "apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\n"
                  "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'i'; ++c) {
    s += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 8; ++i)
      s += std::string(i ? "," : "") + "*" + prev;
    s += "]\n";
    prev = c;
  }
  return s;
}

std::string job(const std::string& spec, const std::string& name = "j") {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" + name +
         R"("},"spec":)" + spec + "}";
}

std::string task(const std::string& name, const std::string& replicas) {
  return R"({"name":")" + name + R"(","replicas":)" + replicas +
         R"(,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}})";
}

std::string pod_with(const std::string& name, const std::string& spec_extra,
                     const std::string& requests = "") {
  std::string res = requests.empty() ? "" : R"(,"resources":{"requests":{)" + requests + "}}";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"("},"spec":{"containers":[{"name":"c")" + res + "}]" + spec_extra + "}}";
}

const std::string pods = "/api/v1/namespaces/team/pods";
const std::string jobs = "/apis/batch.volcano.sh/v1alpha1/namespaces/team/jobs";
const std::string pgs = "/apis/scheduling.volcano.sh/v1beta1/namespaces/team/podgroups";
const std::string queues = "/apis/scheduling.volcano.sh/v1beta1/queues";
const std::string nodes = "/api/v1/nodes";
const std::string default_pods = "/api/v1/namespaces/default/pods";

std::vector<bad_input> bad_inputs() {
  std::vector<bad_input> t;
  auto add = [&](bad_input b) { t.push_back(std::move(b)); };
  // ---- Transport and HTTP.
  add({"oversize_content_length", 413, "the request body is 2097152 bytes; the limit is 1048576 bytes",
       how::oversize_declared, "POST", pods});
  add({"oversize_chunked", 413, "larger than the limit of 1048576 bytes", how::oversize_chunked,
       "POST", pods});
  add({"slow_header", 408, "the request header did not arrive within 300 ms", how::slow_header,
       "GET", nodes, "", "", "", profile::tight});
  add({"slow_body", 408, "the request body did not arrive within 300 ms", how::slow_body, "POST",
       pods, "", "application/json", "", profile::tight});
  add({"too_many_connections", 503, "too many connections: the server serves at most 2 at once",
       how::too_many_connections, "GET", nodes, "", "", "", profile::tight});
  add({"huge_header", 400, "the request header is larger than 65536 bytes", how::huge_header, "GET",
       nodes});
  add({"missing_token", 401, "Unauthorized", how::request, "GET", nodes, "", "", "",
       profile::token});
  add({"wrong_token", 401, "Unauthorized", how::request, "GET", nodes, "", "", "", profile::token,
       "not-the-token"});
  add({"wrong_content_type", 415, R"(the body's Content-Type \"text/plain\" is not supported)",
       how::request, "POST", pods, pod_with("p", ""), "text/plain"});
  add({"missing_content_type", 415, "is not supported: send application/json or application/yaml",
       how::request, "POST", pods, pod_with("p", ""), ""});
  // Jobs take updates now (PrepareUpdate.AJobChangesItsScaleAndPriorityOnly); one that is not
  // there is 404.
  add({"put_job_not_there", 404, R"(jobs \"j\" not found)", how::request, "PUT",
       jobs + "/j", job("{}")});
  add({"put_name_not_the_urls", 400,
       "the name of the provided object (other) does not match the name on the URL (resnet-ps-0)",
       how::request, "PUT", default_pods + "/resnet-ps-0", pod_with("other", "")});
  add({"put_kind_not_the_urls", 400,
       "the kind of the provided object (Node) does not match the kind of the resource on the URL "
       "(Pod)",
       how::request, "PUT", default_pods + "/resnet-ps-0",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"resnet-ps-0"}})"});
  add({"put_queue_without_version", 422,
       "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
       how::request, "PUT", queues + "/default",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"default"},"spec":{"weight":2}})"});
  add({"put_stale_version", 409, "the object has been modified", how::request, "PUT",
       nodes + "/cpu-node-1",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"cpu-node-1","resourceVersion":"1"}})"});
  add({"put_uid_changed", 422, "metadata.uid: Invalid value: \\\"x\\\": field is immutable",
       how::request, "PUT", nodes + "/cpu-node-1",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"cpu-node-1","uid":"x"}})"});
  add({"put_not_yaml_or_json", 415, "is not supported: send application/json or application/yaml",
       how::request, "PUT", nodes + "/cpu-node-1", "x", "text/plain"});
  add({"post_to_item", 405, "POST is not allowed on pods", how::request, "POST",
       pods + "/resnet-ps-0", pod_with("x", "")});
  add({"strategic_patch_of_custom_resource", 415,
       "is not supported for queues: use application/json-patch+json or "
       "application/merge-patch+json",
       how::request, "PATCH", queues + "/default", R"({"spec":{"weight":2}})",
       "application/strategic-merge-patch+json"});
  add({"patch_node_bad_taint", 422, "spec.taints[0].effect: Unsupported value: \\\"Never\\\"",
       how::request, "PATCH", nodes + "/cpu-node-1",
       R"({"spec":{"taints":[{"key":"k","effect":"Never"}]}})", "application/merge-patch+json"});
  add({"patch_unschedulable_string", 422, R"(spec.unschedulable: Invalid value: \"yes\")",
       how::request, "PATCH", nodes + "/cpu-node-1", R"({"spec":{"unschedulable":"yes"}})",
       "application/merge-patch+json"});
  add({"patch_queue_bad_weight", 422, "spec.weight: Invalid value: 0", how::request, "PATCH",
       queues + "/default", R"({"spec":{"weight":0}})", "application/merge-patch+json"});
  add({"patch_podgroup_min_member", 422, "spec.minMember: Invalid value: -1", how::request,
       "PATCH", "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/resnet-gang",
       R"([{"op":"replace","path":"/spec/minMember","value":-1}])", "application/json-patch+json"});
  add({"patch_pod_spec", 422, "spec: Forbidden: pod updates may not change fields other than",
       how::request, "PATCH", default_pods + "/resnet-ps-0", R"({"spec":{"priority":7}})",
       "application/merge-patch+json"});
  add({"patch_pod_name", 422, "metadata.name: Invalid value: \\\"other\\\": field is immutable",
       how::request, "PATCH", default_pods + "/resnet-ps-0", R"({"metadata":{"name":"other"}})",
       "application/merge-patch+json"});
  add({"patch_pod_bad_json_patch", 422, "JSON patch operation 0 (remove): the path /spec/nope",
       how::request, "PATCH", default_pods + "/resnet-ps-0", R"([{"op":"remove","path":"/spec/nope"}])",
       "application/json-patch+json"});
  add({"patch_pod_apply", 415, "the patch type", how::request, "PATCH", default_pods + "/resnet-ps-0",
       "{}", "application/apply-patch+yaml"});
  add({"patch_pod_bad_label", 422, "metadata.labels: Invalid value", how::request, "PATCH",
       default_pods + "/resnet-ps-0", R"({"metadata":{"labels":{"bad key!":"x"}}})",
       "application/merge-patch+json"});
  add({"patch_pod_missing", 404, "not found", how::request, "PATCH", default_pods + "/nope", "{}",
       "application/merge-patch+json"});
  add({"unknown_path", 404, "the server could not find the requested resource", how::request, "GET",
       "/apis/apps/v1/namespaces/team/deployments"});
  add({"cluster_kind_in_namespace", 404, "could not find the requested resource", how::request,
       "GET", "/api/v1/namespaces/team/nodes"});
  add({"unknown_action", 404, "could not find the requested resource", how::request, "POST",
       nodes + "/cpu-node-1/suspend"});
  add({"not_acceptable", 406, "the server can produce application/json", how::request, "GET", nodes,
       "", "", "application/vnd.kubernetes.protobuf"});
  add({"bad_percent_encoding", 400, "malformed request target", how::request, "GET",
       "/api/v1/nodes?labelSelector=%zz"});
  add({"bad_resource_version", 400, R"(resourceVersion must be a decimal number, not \"abc\")",
       how::request, "GET", nodes + "?watch=1&resourceVersion=abc"});
  add({"bad_label_selector", 400, R"(unable to parse label selector \"a in (x\")", how::request,
       "GET", nodes + "?labelSelector=a%20in%20(x"});
  add({"bad_label_key", 400, R"(key \"-bad\")", how::request, "GET",
       nodes + "?labelSelector=-bad%3Dx"});
  add({"unsupported_field_selector", 400, R"(field selector \"spec.nodeName=n1\" is not supported)",
       how::request, "GET", nodes + "?fieldSelector=spec.nodeName%3Dn1"});
  add({"negated_name_field_selector", 400, R"(field selector \"metadata.name!=x\" is not supported)",
       how::request, "GET", "/api/v1/pods?fieldSelector=metadata.name!%3Dx"});
  add({"create_without_namespace", 405, "pods are namespaced", how::request, "POST",
       "/api/v1/pods", pod_with("p", "")});
  // ---- Malformed bodies.
  add({"malformed_json", 400, "invalid JSON at line 1, column", how::request, "POST", pods,
       R"({"apiVersion":"v1","kind":)"});
  add({"json_trailing_data", 400, "more text after the value", how::request, "POST", pods,
       pod_with("p", "") + " {}"});
  add({"empty_body", 400, "the body is empty", how::request, "POST", pods, ""});
  add({"body_is_array", 400, "the body must be a JSON object", how::request, "POST", pods, "[1,2]"});
  add({"json_depth_33", 400, "nesting deeper than 32 levels", how::request, "POST", pods,
       deep_json(33)});
  add({"json_depth_32_accepted", 201, "\"kind\":\"Pod\"", how::request, "POST", pods,
       deep_json(32)});
  add({"json_invalid_utf8", 400, "invalid UTF-8", how::request, "POST", pods,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" "\xff\xfe" R"("}})"});
  add({"malformed_yaml", 400, "invalid YAML at line", how::request, "POST", pods,
       "apiVersion: v1\nkind: [Pod\n", "application/yaml"});
  add({"yaml_depth_33", 400, "nesting deeper than 32 levels", how::request, "POST", pods,
       deep_yaml(33), "application/yaml"});
  add({"yaml_alias_bomb", 400, "expands to more than", how::request, "POST", pods, yaml_bomb(),
       "application/yaml"});
  add({"yaml_invalid_utf8", 400, "not valid UTF-8", how::request, "POST", pods,
       "apiVersion: v1\nkind: Pod\nmetadata: {name: \"\xc3\x28\"}\n", "application/yaml"});
  add({"yaml_duplicate_key", 400, R"(duplicate key \"kind\")", how::request, "POST", pods,
       "apiVersion: v1\nkind: Pod\nkind: Node\n", "application/yaml"});
  add({"yaml_two_documents", 400, "exactly one YAML document, not 2", how::request, "POST", pods,
       "apiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\n", "application/yaml"});
  // ---- Kinds and versions.
  add({"missing_kind", 400, "Object 'Kind' is missing", how::request, "POST", pods,
       R"({"apiVersion":"v1","metadata":{"name":"p"}})"});
  add({"missing_api_version", 400, "Object 'apiVersion' is missing", how::request, "POST", pods,
       R"({"kind":"Pod","metadata":{"name":"p"}})"});
  add({"unknown_kind", 400, R"(no kind \"Deployment\" is registered for version \"apps/v1\")",
       how::request, "POST", pods,
       R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}})"});
  add({"unknown_api_version", 400,
       R"(no kind \"PodGroup\" is registered for version \"scheduling.volcano.sh/v1alpha9\")",
       how::request, "POST", pgs,
       R"({"apiVersion":"scheduling.volcano.sh/v1alpha9","kind":"PodGroup","metadata":{"name":"g"}})"});
  add({"kind_does_not_match_path", 400, "does not match the request, which is for podgroups",
       how::request, "POST", pgs,
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q"}})"});
  add({"namespace_mismatch", 400,
       "the namespace of the provided object (other) does not match the namespace sent on the "
       "request (team)",
       how::request, "POST", pods,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"other"},"spec":{"containers":[{"name":"c"}]}})"});
  // ---- Names and labels.
  add({"bad_pod_name", 422, R"(metadata.name: Invalid value: \"Bad_Name\")", how::request, "POST",
       pods, pod_with("Bad_Name", "")});
  add({"missing_name", 422, "metadata.name: Required value", how::request, "POST", pods,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{},"spec":{"containers":[{"name":"c"}]}})"});
  add({"job_name_too_long", 422, "metadata.name: Invalid value", how::request, "POST", jobs,
       job(R"({"tasks":[)" + task("t", "1") + "]}", std::string(70, 'a'))});
  add({"bad_label_key_in_body", 422, "metadata.labels", how::request, "POST", pods,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"bad key!":"v"}},"spec":{"containers":[{"name":"c"}]}})"});
  // ---- Types.
  add({"replicas_not_integer", 422,
       R"(spec.tasks[1].replicas: Invalid value: \"three\": must be an integer)", how::request,
       "POST", jobs, job(R"({"tasks":[)" + task("a", "1") + "," + task("b", "\"three\"") + "]}")});
  add({"min_member_beyond_int32", 422,
       "spec.minMember: Invalid value: 3000000000: must be an integer between -2147483648 and "
       "2147483647",
       how::request, "POST", pgs,
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g"},"spec":{"minMember":3000000000}})"});
  add({"unschedulable_not_bool", 422, "spec.unschedulable: Invalid value: \\\"yes\\\": must be a boolean",
       how::request, "POST", nodes,
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n9"},"spec":{"unschedulable":"yes"}})"});
  // ---- Quantities.
  add({"quantity_negative", 422,
       R"(spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0)",
       how::request, "POST", pods, pod_with("p", "", R"("cpu":"-1")")});
  add({"quantity_two_dots", 422,
       R"(spec.containers[0].resources.requests[memory]: Invalid value: \"1.5.5\")", how::request,
       "POST", pods, pod_with("p", "", R"("memory":"1.5.5")")});
  add({"quantity_beyond_int64", 422,
       R"(spec.containers[0].resources.requests[cpu]: Invalid value: \"9223372036854775808\")",
       how::request, "POST", pods, pod_with("p", "", R"("cpu":"9223372036854775808")")});
  add({"quantity_number_beyond_int64", 422,
       R"(requests[memory]: Invalid value: \"9223372036854775808\")", how::request, "POST", pods,
       pod_with("p", "", R"("memory":9223372036854775808)")});
  add({"quantity_unknown_suffix", 422, R"(requests[memory]: Invalid value: \"12XB\")",
       how::request, "POST", pods, pod_with("p", "", R"("memory":"12XB")")});
  add({"quantity_beyond_2_53", 422, "(2^53, the largest amount accepted)", how::request, "POST",
       pods, pod_with("p", "", R"("memory":"10P")")});
  add({"quantity_object", 422, R"(requests[cpu]: Invalid value: \"object\": must be a number or a string)",
       how::request, "POST", pods, pod_with("p", "", R"("cpu":{"a":1})")});
  add({"bad_resource_name", 422, R"(requests[bad name!]: Invalid value: \"bad name!\")",
       how::request, "POST", pods, pod_with("p", "", R"("bad name!":"1")")});
  // ---- Enumerations.
  add({"toleration_operator", 422,
       R"(spec.tolerations[0].operator: Unsupported value: \"Maybe\": supported values: \"Exists\", \"Equal\")",
       how::request, "POST", pods,
       pod_with("p", R"(,"tolerations":[{"key":"k","operator":"Maybe"}])")});
  add({"taint_effect", 422, R"(spec.taints[0].effect: Unsupported value: \"Sometimes\")",
       how::request, "POST", nodes,
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n9"},"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}})"});
  add({"node_selector_operator", 422, R"(operator: Unsupported value: \"Like\")", how::request,
       "POST", pods,
       pod_with("p", R"(,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Like"}]}]}}})")});
  // ---- Pod affinity and host ports.
  add({"pod_anti_affinity_without_topology_key", 422,
       "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]."
       "topologyKey: Required value: can not be empty",
       how::request, "POST", pods,
       pod_with("p", R"(,"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{}}]}})")});
  add({"pod_affinity_weight", 422,
       "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "Invalid value: 101: must be in the range 1-100",
       how::request, "POST", pods,
       pod_with("p", R"(,"affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":101,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname"}}]}})")});
  add({"pod_affinity_match_label_keys", 422,
       "requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys: Forbidden: not "
       "supported by Phalanx",
       how::request, "POST", pods,
       pod_with("p", R"(,"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{},"matchLabelKeys":["app"],"topologyKey":"kubernetes.io/hostname"}]}})")});
  add({"duplicate_host_port", 422,
       R"(spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\")", how::request,
       "POST", pods,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":8080}]},{"name":"b","ports":[{"containerPort":80,"hostPort":8080}]}]}})"});
  add({"host_port_protocol", 422,
       R"(spec.containers[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\")",
       how::request, "POST", pods,
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"hostPort":80,"protocol":"HTTP"}]}]}})"});
  // ---- Topology spread constraints.
  add({"spread_when_unsatisfiable", 422,
       R"(spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Never\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\")",
       how::request, "POST", pods,
       pod_with("p", R"(,"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"Never"}])")});
  add({"spread_max_skew_missing", 422,
       "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
       how::request, "POST", pods,
       pod_with("p", R"(,"topologySpreadConstraints":[{"topologyKey":"kubernetes.io/hostname","whenUnsatisfiable":"DoNotSchedule"}])")});
  add({"spread_match_label_key_in_selector", 422,
       R"(spec.topologySpreadConstraints[0].matchLabelKeys[0]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector)",
       how::request, "POST", pods,
       pod_with("p", R"(,"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{"matchLabels":{"app":"db"}},"matchLabelKeys":["app"]}])")});
  // ---- Volcano's rules.
  add({"min_available_above_replicas", 422, "spec.minAvailable: Invalid value: 5", how::request,
       "POST", jobs, job(R"({"minAvailable":5,"tasks":[)" + task("t", "2") + "]}")});
  add({"job_without_tasks", 422, "spec.tasks: Required value", how::request, "POST", jobs,
       job(R"({"tasks":[]})")});
  add({"duplicate_task_names", 422, R"(Duplicate value: \"t\")", how::request, "POST", jobs,
       job(R"({"tasks":[)" + task("t", "1") + "," + task("t", "1") + "]}")});
  add({"ray_without_head_task", 422,
       R"(spec.plugins[ray]: Invalid value: \"head\": the ray head task was not found)",
       how::request, "POST", jobs,
       job(R"({"tasks":[)" + task("worker", "2") + R"(],"plugins":{"ray":[]}})")});
  add({"volume_without_claim", 422,
       "spec.volumes[0]: Required value: either volumeClaim or volumeClaimName must be given",
       how::request, "POST", jobs,
       job(R"({"tasks":[)" + task("t", "1") + R"(],"volumes":[{"mountPath":"/data"}]})")});
  add({"unknown_policy_event", 422, "spec.policies[0]", how::request, "POST", jobs,
       job(R"({"tasks":[)" + task("t", "1") + R"(],"policies":[{"event":"Sunrise","action":"RestartJob"}]})")});
  add({"queue_weight_zero", 422, "spec.weight: Invalid value: 0", how::request, "POST", queues,
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{"name":"q0"},"spec":{"weight":0}})"});
  add({"pod_group_negative_min_member", 422, "spec.minMember: Invalid value: -1", how::request,
       "POST", pgs,
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g"},"spec":{"minMember":-1}})"});
  // ---- From the service.
  add({"unknown_queue", 404, R"(queue \"nowhere\" does not exist)", how::request, "POST", jobs,
       job(R"({"queue":"nowhere","tasks":[)" + task("t", "1") + "]}")});
  add({"closed_queue", 422, R"(queue \"closed-q\" is Closed: it accepts no new PodGroups or jobs)",
       how::request, "POST", pgs,
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"g"},"spec":{"queue":"closed-q"}})"});
  add({"already_exists", 409, R"(podgroups \"resnet-gang\" already exists)", how::request, "POST",
       "/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups",
       R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"resnet-gang"},"spec":{"queue":"research"}})"});
  add({"get_unknown", 404, R"(pods \"nope\" not found)", how::request, "GET", pods + "/nope"});
  add({"action_on_unknown", 404, R"(nodes \"nope\" not found)", how::request, "POST",
       nodes + "/nope/cordon"});
  return t;
}

class BadInput : public ::testing::TestWithParam<bad_input> {};

TEST_P(BadInput, GetsItsStatusAndMessage) {
  const auto& c = GetParam();
  server_options o;
  temp_dir dir;
  if (c.server == profile::token)
    o.token_file = dir.write("token", "the-token");
  if (c.server == profile::tight) {
    o.max_connections = 2;
    o.header_timeout = 300ms;
    o.body_timeout = 300ms;
  }
  auto s = start_server(o);
  ASSERT_TRUE(s.srv);
  std::optional<response> r;
  std::string head = std::string(c.method) + " " + c.target + " HTTP/1.1\r\nHost: x\r\n";
  switch (c.mode) {
    case how::request: {
      request req = with_method(c.method, c.target, c.body, c.content_type);
      req.accept = c.accept;
      req.token = c.token;
      r = call(s.port(), req);
      break;
    }
    case how::oversize_declared: {
      raw_connection conn{s.port()};
      conn.write(head + "Content-Type: application/json\r\nContent-Length: 2097152\r\n\r\n" +
                 std::string(1024, ' '));
      // The answer comes without the rest of the body being sent.
      r = conn.read_response(5s);
      break;
    }
    case how::oversize_chunked: {
      raw_connection conn{s.port()};
      conn.write(head + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      std::string chunk(64 * 1024, ' ');
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
      for (int i = 0; i < 24; ++i) {
        if (!conn.write(size + chunk + "\r\n"))
          break;
      }
      r = conn.read_response(5s);
      break;
    }
    case how::slow_header: {
      raw_connection conn{s.port()};
      conn.write("GET /api/v1/nodes HTTP/1.1\r\nHo");
      auto start = std::chrono::steady_clock::now();
      r = conn.read_response(5s);
      EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
      EXPECT_TRUE(conn.closed_within(2s));
      break;
    }
    case how::slow_body: {
      raw_connection conn{s.port()};
      conn.write(head + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":");
      r = conn.read_response(5s);
      EXPECT_TRUE(conn.closed_within(2s));
      break;
    }
    case how::too_many_connections: {
      // Both connections busy with a watch: none is idle to make room, so the third is refused.
      watch_stream first{s.port(), with_method("GET", "/api/v1/nodes?watch=1")};
      watch_stream second{s.port(), with_method("GET", "/api/v1/nodes?watch=1")};
      ASSERT_EQ(first.status(), 200);
      ASSERT_EQ(second.status(), 200);
      raw_connection third{s.port()};
      third.write(head + "\r\n");
      r = third.read_response(5s);
      EXPECT_TRUE(third.closed_within(2s));
      break;
    }
    case how::huge_header: {
      raw_connection conn{s.port()};
      conn.write(head + "X-Big: " + std::string(70 * 1024, 'a') + "\r\n\r\n");
      r = conn.read_response(5s);
      break;
    }
  }
  ASSERT_TRUE(r) << "no answer";
  EXPECT_EQ(r->status, c.status) << r->body;
  EXPECT_NE(r->body.find(c.message), std::string::npos) << r->body;
  if (c.status >= 400) {
    auto v = body_json(*r);
    EXPECT_EQ(v.at("kind"), "Status") << r->body;
    EXPECT_EQ(v.at("code"), c.status) << r->body;
    EXPECT_EQ(v.at("status"), "Failure");
  }
}

INSTANTIATE_TEST_SUITE_P(Server, BadInput, ::testing::ValuesIn(bad_inputs()),
                         [](const ::testing::TestParamInfo<bad_input>& info) {
                           return std::string(info.param.name);
                         });

TEST(BadInputTable, HasAtLeastFortyCases) {
  EXPECT_GE(bad_inputs().size(), 40u);
}

} // namespace
} // namespace phalanx::api::test
