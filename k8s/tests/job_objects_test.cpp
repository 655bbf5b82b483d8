// The objects the Kubernetes-mode job controller writes (k8s/job_objects.hpp), from a Volcano Job
// as the apiserver holds it, through the same expansion the standalone controller uses.

#include "k8s/job_objects.hpp"

#include "api/codec.hpp"
#include "api/service.hpp"
#include "k8s/operations.hpp"
#include "scheduler/job.hpp"
#include "scheduler/job_volumes.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::k8s {
namespace {

namespace json = boost::json;

const char* const tf_job = R"({
  "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
  "metadata": {"name": "tf", "namespace": "ml", "uid": "0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90",
               "labels": {"team": "vision"}, "annotations": {"volcano.sh/preemptable": "false"}},
  "spec": {"minAvailable": 3, "queue": "research", "priorityClassName": "high",
    "tasks": [
      {"name": "ps", "replicas": 1, "template": {
        "metadata": {"labels": {"role": "ps"}},
        "spec": {"containers": [{"name": "main", "image": "tf:2",
          "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}}},
      {"name": "worker", "replicas": 2, "template": {
        "spec": {"schedulerName": "phalanx", "priorityClassName": "low",
          "containers": [{"name": "main", "image": "tf:2",
          "resources": {"requests": {"cpu": "2"}}}]}}}]}})";

scheduler::job decode(const json::value& v) {
  api::decode_options o;
  o.read_status = true;
  auto decoded = api::decode_object(v, o);
  EXPECT_TRUE(decoded.ok()) << (decoded.ok() ? "" : decoded.error().message);
  if (!decoded)
    return {};
  return std::get<api::job_object>(*decoded).job;
}

TEST(JobObjects, APodIsItsTemplateUnderVolcanosNamesLabelsAndOwner) {
  auto raw = json::parse(tf_job);
  auto job = decode(raw);
  auto expanded = scheduler::expand_job(job);
  ASSERT_TRUE(expanded.ok()) << expanded.error().to_string();
  ASSERT_EQ(expanded->pods.size(), 3u);

  auto ps = job_pod_manifest(raw, job, expanded->pods[0]);
  ASSERT_TRUE(ps.ok()) << ps.error().to_string();
  EXPECT_EQ(string_at(*ps, {"metadata", "name"}), "tf-ps-0");
  EXPECT_EQ(string_at(*ps, {"metadata", "namespace"}), "ml");
  EXPECT_EQ(string_at(*ps, {"metadata", "labels", "role"}), "ps");
  EXPECT_EQ(string_at(*ps, {"metadata", "labels", "volcano.sh/job-name"}), "tf");
  EXPECT_EQ(string_at(*ps, {"metadata", "labels", "volcano.sh/job-namespace"}), "ml");
  EXPECT_EQ(string_at(*ps, {"metadata", "labels", "volcano.sh/task-index"}), "0");
  EXPECT_EQ(string_at(*ps, {"metadata", "annotations", "volcano.sh/task-spec"}), "ps");
  EXPECT_EQ(string_at(*ps, {"metadata", "annotations", "scheduling.k8s.io/group-name"}),
            "tf-0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90");
  EXPECT_EQ(string_at(*ps, {"metadata", "annotations", "volcano.sh/job-version"}), "0");
  EXPECT_EQ(string_at(*ps, {"metadata", "annotations", "volcano.sh/queue-name"}), "research");
  // The template's spec as written, with the job's scheduler and class where it names none.
  EXPECT_EQ(ps->at("spec").at("containers").at(0).at("image").as_string(), "tf:2");
  EXPECT_EQ(string_at(*ps, {"spec", "schedulerName"}), "volcano");
  EXPECT_EQ(string_at(*ps, {"spec", "priorityClassName"}), "high");
  auto owner = controlling_job(*ps);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(*owner, (owner_job{"tf", "0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90"}));
  EXPECT_TRUE(ps->at("metadata").at("ownerReferences").at(0).at("blockOwnerDeletion").as_bool());

  // A template's own scheduler and class stay.
  auto worker = job_pod_manifest(raw, job, expanded->pods[2]);
  ASSERT_TRUE(worker.ok()) << worker.error().to_string();
  EXPECT_EQ(string_at(*worker, {"metadata", "name"}), "tf-worker-1");
  EXPECT_EQ(string_at(*worker, {"metadata", "labels", "volcano.sh/task-index"}), "1");
  EXPECT_EQ(string_at(*worker, {"spec", "schedulerName"}), "phalanx");
  EXPECT_EQ(string_at(*worker, {"spec", "priorityClassName"}), "low");
}

TEST(JobObjects, APodOfNoTaskOrABrokenTemplateIsAnErrorNamingTheField) {
  auto raw = json::parse(tf_job);
  auto job = decode(raw);
  auto expanded = scheduler::expand_job(job);
  ASSERT_TRUE(expanded.ok());
  auto stray = expanded->pods[0];
  stray.role = "chief";
  auto made = job_pod_manifest(raw, job, stray);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().message(), "spec.tasks: no task \"chief\" for pod tf-ps-0");
  raw.at("spec").at("tasks").at(0).as_object()["template"] = "x";
  made = job_pod_manifest(raw, job, expanded->pods[0]);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().message(), "spec.tasks[0].template: must be an object");
}

TEST(JobObjects, ThePodGroupIsTheExpansionsOwnedByTheJob) {
  auto raw = json::parse(tf_job);
  auto expanded = scheduler::expand_job(decode(raw));
  ASSERT_TRUE(expanded.ok());
  const auto* uid = "0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90";
  auto pg = job_pod_group_manifest(expanded->group, job_owner_reference("tf", uid));
  EXPECT_EQ(string_at(pg, {"metadata", "name"}), "tf-0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90");
  EXPECT_EQ(string_at(pg, {"metadata", "labels", "team"}), "vision");
  EXPECT_EQ(string_at(pg, {"metadata", "annotations", "volcano.sh/preemptable"}), "false");
  EXPECT_EQ(string_at(pg, {"spec", "queue"}), "research");
  EXPECT_EQ(string_at(pg, {"spec", "priorityClassName"}), "high");
  const auto& spec = pg.at("spec").as_object();
  EXPECT_EQ(spec.at("minMember").as_int64(), 3);
  EXPECT_EQ(spec.at("minTaskMember").at("ps").as_int64(), 1);
  EXPECT_EQ(spec.at("minTaskMember").at("worker").as_int64(), 2);
  // 1 + 2 x 2 CPUs; no "pods" count.
  EXPECT_EQ(spec.at("minResources").at("cpu").as_string(), "5");
  EXPECT_FALSE(spec.at("minResources").as_object().contains("pods"));
  EXPECT_TRUE(controlling_job(pg).has_value());
}

// The PodGroup as the apiserver gives back the manifest, with a uid.
json::value stored(const json::value& manifest, const char* uid) {
  auto out = manifest;
  out.at("metadata").as_object()["uid"] = uid;
  return json::parse(json::serialize(out));
}

TEST(JobObjects, APodGroupInStepWithItsJobIsNotPatched) {
  auto expanded = scheduler::expand_job(decode(json::parse(tf_job)));
  ASSERT_TRUE(expanded.ok());
  auto pg = stored(job_pod_group_manifest(expanded->group, job_owner_reference("tf", "j1")), "g1");
  EXPECT_EQ(job_pod_group_update(expanded->group, pg), std::nullopt);
  // The same amounts written otherwise ("5000m" is "5") are the same.
  pg.at("spec").at("minResources").as_object()["cpu"] = "5000m";
  EXPECT_EQ(job_pod_group_update(expanded->group, pg), std::nullopt);
}

TEST(JobObjects, AScaledJobsPodGroupIsPatchedToItsNewMinimum) {
  auto raw = json::parse(tf_job);
  auto expanded = scheduler::expand_job(decode(raw));
  ASSERT_TRUE(expanded.ok());
  auto pg = stored(job_pod_group_manifest(expanded->group, job_owner_reference("tf", "j1")), "g1");
  // What another writer left: a task and a resource the job does not have.
  pg.at("spec").at("minTaskMember").as_object()["evaluator"] = 1;
  pg.at("spec").at("minResources").as_object()["nvidia.com/gpu"] = "1";

  // Scaled down: minAvailable 2, one worker.
  raw.at("spec").as_object()["minAvailable"] = 2;
  raw.at("spec").at("tasks").at(1).as_object()["replicas"] = 1;
  auto scaled = scheduler::expand_job(decode(raw));
  ASSERT_TRUE(scaled.ok());
  auto patch = job_pod_group_update(scaled->group, pg);
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(json::value(*patch), json::parse(R"({
    "metadata": {"uid": "g1"},
    "spec": {"minMember": 2, "minTaskMember": {"ps": 1, "worker": 1, "evaluator": null},
             "minResources": {"cpu": "3", "memory": "1Gi", "nvidia.com/gpu": null}}})"))
      << json::serialize(*patch);
}

TEST(JobObjects, AnEventOnAJob) {
  auto raw = json::parse(tf_job);
  scheduler::timestamp at{std::chrono::seconds(1767225600)};
  auto e = job_event_manifest(raw, "Normal", "ExecuteAction",
                              "Start to execute action RestartJob", at);
  EXPECT_EQ(string_at(e, {"kind"}), "Event");
  EXPECT_EQ(string_at(e, {"metadata", "namespace"}), "ml");
  EXPECT_EQ(string_at(e, {"metadata", "generateName"}), "tf.");
  EXPECT_EQ(string_at(e, {"involvedObject", "apiVersion"}), "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(string_at(e, {"involvedObject", "kind"}), "Job");
  EXPECT_EQ(string_at(e, {"involvedObject", "name"}), "tf");
  EXPECT_EQ(string_at(e, {"involvedObject", "uid"}), "0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90");
  EXPECT_EQ(string_at(e, {"type"}), "Normal");
  EXPECT_EQ(string_at(e, {"reason"}), "ExecuteAction");
  EXPECT_EQ(string_at(e, {"message"}), "Start to execute action RestartJob");
  EXPECT_EQ(string_at(e, {"firstTimestamp"}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(string_at(e, {"lastTimestamp"}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(e.at("count").as_int64(), 1);
  // Kubernetes refuses a message over 1 KiB.
  auto long_one = job_event_manifest(raw, "Warning", "FailedCreate", std::string(5000, 'x'), at);
  EXPECT_EQ(string_at(long_one, {"message"}).size(), 1024u);
}

TEST(JobObjects, TheStatusIsVolcanosJobStatus) {
  scheduler::job_status s;
  s.phase = scheduler::job_phase::restarting;
  s.reason = "RestartJob";
  s.retry_count = 1;
  s.version = 2;
  s.min_available = 3;
  s.terminating = 3;
  s.tasks.push_back({"worker", 0, 1, 0, 1, 0});
  scheduler::timestamp at{std::chrono::seconds(1767225600)};
  s.last_transition_time = at;
  s.conditions = {{scheduler::job_phase::pending, at}, {scheduler::job_phase::restarting, at}};
  auto v = job_status_json(s);
  EXPECT_EQ(string_at(v, {"state", "phase"}), "Restarting");
  EXPECT_EQ(string_at(v, {"state", "lastTransitionTime"}), "2026-01-01T00:00:00Z");
  EXPECT_EQ(v.at("retryCount").as_int64(), 1);
  EXPECT_EQ(v.at("version").as_int64(), 2);
  EXPECT_EQ(v.at("minAvailable").as_int64(), 3);
  EXPECT_EQ(v.at("terminating").as_int64(), 3);
  EXPECT_EQ(v.at("taskStatusCount").at("worker").at("phase").at("Running").as_int64(), 1);
  EXPECT_EQ(v.at("conditions").at(1).at("status").as_string(), "Restarting");
}

TEST(JobObjects, APodReadBack) {
  auto pod = json::parse(R"({"metadata": {"name": "tf-worker-1", "uid": "u1",
      "deletionTimestamp": "2026-01-01T00:00:00Z",
      "annotations": {"volcano.sh/task-spec": "worker", "volcano.sh/job-version": "2",
                      "volcano.sh/controller-out-of-sync": "true"},
      "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                           "name": "tf", "uid": "j1", "controller": true}]},
    "status": {"phase": "Failed", "containerStatuses": [
      {"name": "main", "state": {"terminated": {"exitCode": 137}}}]}})");
  auto f = read_job_pod(pod);
  EXPECT_EQ(f.view, (scheduler::job_pod_view{"tf-worker-1", "worker",
                                             scheduler::pod_phase::failed, true, true, 0}));
  EXPECT_EQ(f.uid, "u1");
  EXPECT_EQ(f.job_uid, "j1");
  EXPECT_EQ(f.job_version, 2);
  EXPECT_EQ(f.exit_code, 137);
  // Another controller, no version, no phase.
  auto other = json::parse(R"({"metadata": {"name": "x", "annotations":
      {"volcano.sh/job-version": "two"}, "ownerReferences": [{"apiVersion": "apps/v1",
      "kind": "ReplicaSet", "name": "r", "uid": "r1", "controller": true}]}})");
  auto g = read_job_pod(other);
  EXPECT_EQ(g.job_uid, "");
  EXPECT_EQ(g.job_version, std::nullopt);
  EXPECT_EQ(g.view.phase, scheduler::pod_phase::pending);
  EXPECT_FALSE(g.view.out_of_sync);
  EXPECT_EQ(g.view.restarts, 0);  // No status at all.
}

// TaskFailed counts a pod's restarts as Volcano's cache does: every container's and every init
// container's restartCount, summed.
TEST(JobObjects, APodsRestartsSumItsContainersAndInitContainers) {
  auto pod = json::parse(R"({"metadata": {"name": "tf-worker-0"},
    "status": {"phase": "Running",
      "initContainerStatuses": [{"name": "setup", "restartCount": 4}],
      "containerStatuses": [{"name": "main", "restartCount": 2},
                            {"name": "sidecar", "restartCount": 1},
                            {"name": "odd", "restartCount": -5},
                            {"name": "none"}]}})");
  auto f = read_job_pod(pod);
  EXPECT_EQ(f.view.restarts, 7);
  // The view's equality sees the count: the same pod restarted once more is another view.
  auto again = pod;
  again.at("status").at("containerStatuses").at(0).as_object()["restartCount"] = 3;
  EXPECT_EQ(read_job_pod(again).view.restarts, 8);
  EXPECT_NE(read_job_pod(again).view, f.view);
  // Counts past an int32 (the apiserver's type) saturate instead of wrapping.
  auto huge = json::parse(R"({"status": {"containerStatuses": [
      {"restartCount": 2147483647}, {"restartCount": 2147483647}]}})");
  EXPECT_EQ(read_job_pod(huge).view.restarts, 2147483647);
}

// -- the plugins' objects and what they add to each pod

// tf with the three plugins Volcano's distributed-training examples name.
json::value tf_job_with_plugins(json::array svc_arguments = {}) {
  auto raw = json::parse(tf_job);
  raw.at("spec").as_object()["plugins"] = json::object{
      {"env", json::array{}}, {"svc", std::move(svc_arguments)}, {"ssh", json::array{}}};
  return raw;
}

const char* const job_uid = "0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90";

// `manifest` (JSON text) with the job as its metadata's owner.
json::value owned_by_tf(std::string_view manifest) {
  auto out = json::parse(manifest);
  out.at("metadata").as_object()["ownerReferences"] =
      json::array{job_owner_reference("tf", job_uid)};
  return out;
}

// Names of the entries of a pod spec's list `list` (volumes, env...) of `o`.
std::vector<std::string> names_in(const json::value& o, const char* list) {
  std::vector<std::string> out;
  if (const auto* a = value_at(o, {list}); a != nullptr && a->is_array())
    for (const auto& item : a->as_array())
      out.push_back(string_at(item, {"name"}));
  return out;
}

std::string env_value(const json::value& container, const std::string& name) {
  for (const auto& e : container.at("env").as_array())
    if (string_at(e, {"name"}) == name)
      return string_at(e, {"value"}) + string_at(e, {"valueFrom", "configMapKeyRef", "name"}) +
             "/" + string_at(e, {"valueFrom", "configMapKeyRef", "key"});
  return "(none)";
}

TEST(JobObjects, APodOfAJobWithPluginsCarriesWhatTheyAdd) {
  auto raw = tf_job_with_plugins();
  auto job = decode(raw);
  auto expanded = scheduler::expand_job(job);
  ASSERT_TRUE(expanded.ok());
  ASSERT_EQ(expanded->pods[2].meta.name.str(), "tf-worker-1");
  auto worker = job_pod_manifest(raw, job, expanded->pods[2]);
  ASSERT_TRUE(worker.ok()) << worker.error().to_string();
  const auto& spec = worker->at("spec");
  EXPECT_EQ(string_at(spec, {"hostname"}), "tf-worker-1");
  EXPECT_EQ(string_at(spec, {"subdomain"}), "tf");
  EXPECT_EQ(names_in(spec, "volumes"), (std::vector<std::string>{"tf-ssh", "tf-svc"}));
  const auto& main = spec.at("containers").at(0);
  // The task index is the pod's annotation volcano.sh/task-index.
  EXPECT_EQ(env_value(main, "VK_TASK_INDEX"), "1/");
  EXPECT_EQ(env_value(main, "VC_TASK_INDEX"), "1/");
  EXPECT_EQ(env_value(main, "VC_WORKER_HOSTS"), "tf-svc/VC_WORKER_HOSTS");
  EXPECT_EQ(env_value(main, "VC_PS_NUM"), "tf-svc/VC_PS_NUM");
  EXPECT_EQ(names_in(main, "volumeMounts"), (std::vector<std::string>{"tf-ssh", "tf-svc"}));

  // Without plugins, the template as it is.
  auto plain = job_pod_manifest(json::parse(tf_job), decode(json::parse(tf_job)),
                                expanded->pods[2]);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->at("spec").as_object().contains("hostname"));
  EXPECT_FALSE(plain->at("spec").at("containers").at(0).as_object().contains("env"));
}

// The frameworks' plugins reach the pods the controller makes: the task name goes with the
// pod (its role), so mpi's launcher (here the ps task) gets the workers' hosts and tensorflow
// every pod its place in the cluster.
TEST(JobObjects, AFrameworkPluginsPodsKnowTheirPeers) {
  auto raw = json::parse(tf_job);
  raw.at("spec").as_object()["plugins"] = json::object{
      {"mpi", json::array{"--master=ps"}}, {"tensorflow", json::array{}}};
  auto job = decode(raw);
  auto expanded = scheduler::expand_job(job);
  ASSERT_TRUE(expanded.ok());
  ASSERT_EQ(expanded->pods[0].meta.name.str(), "tf-ps-0");
  auto ps = job_pod_manifest(raw, job, expanded->pods[0]);
  ASSERT_TRUE(ps.ok()) << ps.error().to_string();
  const auto& main = ps->at("spec").at("containers").at(0);
  EXPECT_EQ(env_value(main, "MPI_HOST"), "tf-worker-0.tf,tf-worker-1.tf/");
  EXPECT_NE(env_value(main, "TF_CONFIG").find(R"("task":{"type":"ps","index":0})"),
            std::string::npos)
      << env_value(main, "TF_CONFIG");
  // mpi brings svc and ssh, as Volcano's webhook adds them.
  EXPECT_EQ(names_in(ps->at("spec"), "volumes"), (std::vector<std::string>{"tf-ssh", "tf-svc"}));
}

TEST(JobObjects, TheSvcPluginsServiceIsHeadlessAndSelectsTheJobsPods) {
  auto job = decode(tf_job_with_plugins());
  EXPECT_EQ(job_service_manifest(job, job_uid, {}), owned_by_tf(R"({
    "apiVersion": "v1", "kind": "Service", "metadata": {"name": "tf", "namespace": "ml"},
    "spec": {"clusterIP": "None",
             "selector": {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "ml"},
             "publishNotReadyAddresses": false}})"));
  scheduler::svc_plugin_settings not_ready;
  not_ready.publish_not_ready_addresses = true;
  EXPECT_EQ(job_service_manifest(job, job_uid, not_ready).at("spec").at(
                "publishNotReadyAddresses"),
            json::value(true));
}

// ray's head Service: the head task's pods (here the ps, --head), its three ports each aimed at
// the head container's port of that name, as Volcano's createServiceIfNotExist makes it.
TEST(JobObjects, TheRayPluginsHeadServiceSelectsTheHeadsPodsPorts) {
  auto raw = json::parse(tf_job);
  raw.at("spec").as_object()["plugins"] =
      json::object{{"ray", json::array{"--head=ps", "--port=7000"}}};
  auto job = decode(raw);
  auto settings = scheduler::plugin_settings_of(job);
  ASSERT_TRUE(settings.ray);
  EXPECT_EQ(job_ray_head_service_manifest(job, job_uid, *settings.ray), owned_by_tf(R"({
    "apiVersion": "v1", "kind": "Service", "metadata": {"name": "tf-head-svc", "namespace": "ml"},
    "spec": {"selector": {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "ml",
                          "volcano.sh/task-spec": "ps"},
             "ports": [
               {"name": "gcs", "port": 7000, "targetPort": "gcs", "protocol": "TCP"},
               {"name": "dashboard", "port": 8265, "targetPort": "dashboard", "protocol": "TCP"},
               {"name": "client-server", "port": 10001, "targetPort": "client-server",
                "protocol": "TCP"}]}})"));
}

// A job's volumes: the claim made for the one that describes it, owned by the job; the patch
// that writes its generated name into the Job (the uid and the volume's path as
// preconditions, the named volume untouched); every pod mounting both claims.
TEST(JobObjects, AJobsVolumesClaimsTheirNamesAndMounts) {
  auto raw = json::parse(tf_job);
  raw.at("spec").as_object()["volumes"] = json::parse(R"([
    {"mountPath": "/data", "volumeClaimName": "shared"},
    {"mountPath": "/scratch", "volumeClaim": {"accessModes": ["ReadWriteOnce"],
                                              "resources": {"requests": {"storage": "1Gi"}}}}])");
  auto job = decode(raw);
  ASSERT_EQ(job.volumes.size(), 2u);
  EXPECT_TRUE(scheduler::name_volume_claims(job));
  const auto claim = scheduler::generated_claim_name("tf", job_uid, 1);
  EXPECT_EQ(job.volumes[1].volume_claim_name, claim);

  EXPECT_EQ(job_volume_claim_manifest(job, job_uid, claim,
                                      raw.at("spec").at("volumes").at(1).at("volumeClaim")),
            owned_by_tf(R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
              "metadata": {"name": ")" + claim + R"(", "namespace": "ml"},
              "spec": {"accessModes": ["ReadWriteOnce"],
                       "resources": {"requests": {"storage": "1Gi"}}}})"));

  auto patch = job_volume_claim_names_patch(raw, job);
  ASSERT_TRUE(patch);
  EXPECT_EQ(json::value(*patch), json::parse(R"([
    {"op": "test", "path": "/metadata/uid", "value": ")" + std::string(job_uid) + R"("},
    {"op": "test", "path": "/spec/volumes/1/mountPath", "value": "/scratch"},
    {"op": "add", "path": "/spec/volumes/1/volumeClaimName", "value": ")" + claim + R"("}])"));
  auto written = raw;
  written.at("spec").at("volumes").at(1).as_object()["volumeClaimName"] = claim;
  EXPECT_FALSE(job_volume_claim_names_patch(written, job)) << "every claim is named already";

  auto expanded = scheduler::expand_job(job);
  ASSERT_TRUE(expanded.ok());
  auto pod = job_pod_manifest(raw, job, expanded->pods[0]);
  ASSERT_TRUE(pod.ok()) << pod.error().to_string();
  EXPECT_EQ(names_in(pod->at("spec"), "volumes"),
            (std::vector<std::string>{scheduler::pod_volume_name("tf", "shared"),
                                      scheduler::pod_volume_name("tf", claim)}));
  EXPECT_EQ(pod->at("spec").at("containers").at(0).at("volumeMounts").at(1),
            json::value(json::object{{"mountPath", "/scratch"},
                                     {"name", scheduler::pod_volume_name("tf", claim)}}));
}

TEST(JobObjects, TheSvcPluginsNetworkPolicyAdmitsTheJobsOwnPodsOnly) {
  auto job = decode(tf_job_with_plugins());
  EXPECT_EQ(job_network_policy_manifest(job, job_uid), owned_by_tf(R"({
    "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
    "metadata": {"name": "tf", "namespace": "ml"},
    "spec": {
      "podSelector": {"matchLabels":
                      {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "ml"}},
      "ingress": [{"from": [{"podSelector": {"matchLabels":
                    {"volcano.sh/job-name": "tf", "volcano.sh/job-namespace": "ml"}}}]}],
      "policyTypes": ["Ingress"]}})"));
}

const char* const tf_hosts = R"({
  "ps.host": "tf-ps-0.tf", "VC_PS_HOSTS": "tf-ps-0.tf", "VC_PS_NUM": "1",
  "worker.host": "tf-worker-0.tf\ntf-worker-1.tf",
  "VC_WORKER_HOSTS": "tf-worker-0.tf,tf-worker-1.tf", "VC_WORKER_NUM": "2"})";

TEST(JobObjects, TheSvcPluginsConfigMapListsEveryTasksHosts) {
  auto job = decode(tf_job_with_plugins());
  auto want = owned_by_tf(R"({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "tf-svc", "namespace": "ml"}})");
  want.as_object()["data"] = json::parse(tf_hosts);
  EXPECT_EQ(job_hosts_config_map_manifest(job, job_uid), want);
}

TEST(JobObjects, AScaledJobsConfigMapIsPatchedToItsNewHosts) {
  auto raw = tf_job_with_plugins();
  auto cm = stored(job_hosts_config_map_manifest(decode(raw), job_uid), "c1");
  EXPECT_EQ(job_hosts_config_map_update(decode(raw), cm), std::nullopt);

  // A third worker, and a key another writer left.
  cm.at("data").as_object()["extra"] = "x";
  raw.at("spec").at("tasks").at(1).as_object()["replicas"] = 3;
  auto patch = job_hosts_config_map_update(decode(raw), cm);
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(json::value(*patch), json::parse(R"({
    "metadata": {"uid": "c1"},
    "data": {"ps.host": "tf-ps-0.tf", "VC_PS_HOSTS": "tf-ps-0.tf", "VC_PS_NUM": "1",
             "worker.host": "tf-worker-0.tf\ntf-worker-1.tf\ntf-worker-2.tf",
             "VC_WORKER_HOSTS": "tf-worker-0.tf,tf-worker-1.tf,tf-worker-2.tf",
             "VC_WORKER_NUM": "3", "extra": null}})"))
      << json::serialize(*patch);
}

// Strict base64 as a Secret's data holds it.
std::string unbase64(std::string_view text) {
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0)
    return "(not base64)";
  out.resize(static_cast<std::size_t>(n));
  // EVP_DecodeBlock counts the padding as zero bytes.
  for (auto pad = text.rbegin(); pad != text.rend() && *pad == '='; ++pad)
    out.pop_back();
  return out;
}

TEST(JobObjects, TheSshPluginsSecretHoldsTheKeysAndTheConfig) {
  auto job = decode(tf_job_with_plugins());
  const ssh_key_pair keys{"-----BEGIN RSA PRIVATE KEY-----\nAB\n-----END RSA PRIVATE KEY-----\n",
                          "ssh-rsa AAAA\n"};
  auto secret = job_ssh_secret_manifest(job, job_uid, keys, 2222);
  EXPECT_EQ(string_at(secret, {"apiVersion"}), "v1");
  EXPECT_EQ(string_at(secret, {"kind"}), "Secret");
  EXPECT_EQ(string_at(secret, {"type"}), "Opaque");
  EXPECT_EQ(secret.at("metadata"),
            owned_by_tf(R"({"metadata": {"name": "tf-ssh", "namespace": "ml"}})").at("metadata"));
  const auto& data = secret.at("data").as_object();
  EXPECT_EQ(data.size(), 4u);
  EXPECT_EQ(unbase64(data.at("id_rsa").as_string()), keys.private_key);
  EXPECT_EQ(unbase64(data.at("id_rsa.pub").as_string()), keys.public_key);
  EXPECT_EQ(unbase64(data.at("authorized_keys").as_string()), keys.public_key);
  EXPECT_EQ(unbase64(data.at("config").as_string()),
            "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
            "Host tf-ps-0\n  HostName tf-ps-0.tf\n  Port 2222\n"
            "Host tf-worker-0\n  HostName tf-worker-0.tf\n  Port 2222\n"
            "Host tf-worker-1\n  HostName tf-worker-1.tf\n  Port 2222\n");
}

} // namespace
} // namespace phalanx::k8s
