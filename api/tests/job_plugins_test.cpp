// What the job plugins write into a pod's spec (api/job_plugins.hpp), against the pod Volcano's
// job controller creates for the same job and plugins (pkg/controllers/job/plugins: env, svc,
// ssh OnPodCreate).

#include "api/job_plugins.hpp"

#include "api/codec.hpp"
#include "scheduler/job_volumes.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::api {
namespace {

namespace json = boost::json;

scheduler::job two_task_job(std::string template_spec = "") {
  scheduler::job j;
  j.meta.name = "tf";
  j.meta.namespace_name = "default";
  scheduler::job_task ps;
  ps.name = "ps";
  ps.replicas = 1;
  ps.pod_template.spec_json = template_spec;
  scheduler::job_task worker;
  worker.name = "worker";
  worker.replicas = 2;
  j.tasks = {ps, worker};
  return j;
}

json::object pod_spec() {
  return json::parse(R"({"containers":[{"name":"main","image":"busybox",
                         "env":[{"name":"A","value":"1"}]}],
                         "initContainers":[{"name":"init","image":"busybox"}]})")
      .as_object();
}

TEST(JobPluginsPodSpec, EnvGivesEveryContainerItsTaskIndex) {
  auto j = two_task_job();
  j.plugins = {{"env", {}}};
  auto spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, scheduler::plugin_settings_of(j), "tf-worker-1", "worker",
                          "1");
  EXPECT_EQ(spec, json::parse(R"({"containers":[{"name":"main","image":"busybox",
      "env":[{"name":"A","value":"1"},{"name":"VK_TASK_INDEX","value":"1"},
             {"name":"VC_TASK_INDEX","value":"1"}]}],
      "initContainers":[{"name":"init","image":"busybox",
      "env":[{"name":"VK_TASK_INDEX","value":"1"},{"name":"VC_TASK_INDEX","value":"1"}]}]})"));
}

TEST(JobPluginsPodSpec, SvcNamesTheHostAndMountsTheHostLists) {
  auto j = two_task_job();
  j.plugins = {{"svc", {}}};
  auto spec = pod_spec();
  spec.erase("initContainers");
  add_plugins_to_pod_spec(spec, j, scheduler::plugin_settings_of(j), "tf-ps-0", "ps", "0");
  auto ref = [](const char* key) {
    json::object selector{{"name", "tf-svc"}, {"key", key}};
    return json::object{{"name", key},
                        {"valueFrom", json::object{{"configMapKeyRef", std::move(selector)}}}};
  };
  json::object want{
      {"containers",
       json::array{json::object{
           {"name", "main"},
           {"image", "busybox"},
           {"env", json::array{json::object{{"name", "A"}, {"value", "1"}}, ref("VC_PS_HOSTS"),
                               ref("VC_PS_NUM"), ref("VC_WORKER_HOSTS"), ref("VC_WORKER_NUM")}},
           {"volumeMounts",
            json::array{json::object{{"mountPath", "/etc/volcano"}, {"name", "tf-svc"}}}}}}},
      {"hostname", "tf-ps-0"},
      {"subdomain", "tf"},
      {"volumes", json::array{json::object{{"name", "tf-svc"},
                                           {"configMap", json::object{{"name", "tf-svc"}}}}}}};
  EXPECT_EQ(spec, want) << json::serialize(spec);

  // A template's own hostname and subdomain stay; without host variables only the mount comes.
  j.plugins = {{"svc", {"--inject-hosts-env=false"}}};
  spec = json::parse(R"({"hostname":"ps","subdomain":"cluster","containers":[{"name":"m"}]})")
             .as_object();
  add_plugins_to_pod_spec(spec, j, scheduler::plugin_settings_of(j), "tf-ps-0", "ps", "0");
  EXPECT_EQ(spec.at("hostname"), "ps");
  EXPECT_EQ(spec.at("subdomain"), "cluster");
  EXPECT_FALSE(spec.at("containers").at(0).as_object().contains("env"))
      << json::serialize(spec);
}

TEST(JobPluginsPodSpec, SshMountsTheKeysAtTheKeyPath) {
  auto j = two_task_job();
  j.plugins = {{"ssh", {}}};
  auto spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, scheduler::plugin_settings_of(j), "tf-ps-0", "ps", "0");
  auto volume = spec.at("volumes").at(0);
  EXPECT_EQ(volume, json::parse(R"({"name":"tf-ssh","secret":{"secretName":"tf-ssh","items":[
      {"key":"id_rsa","path":".ssh/id_rsa"},{"key":"id_rsa.pub","path":".ssh/id_rsa.pub"},
      {"key":"authorized_keys","path":".ssh/authorized_keys"},
      {"key":"config","path":".ssh/config"}],
      "defaultMode":384}})"));
  for (const char* list : {"containers", "initContainers"})
    EXPECT_EQ(spec.at(list).at(0).at("volumeMounts"),
              json::parse(R"([{"mountPath":"/root/.ssh","subPath":".ssh","name":"tf-ssh"}])"))
        << list;

  j.plugins = {{"ssh", {"--ssh-key-file-path=/home/mpi/.ssh"}}};
  spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, scheduler::plugin_settings_of(j), "tf-ps-0", "ps", "0");
  EXPECT_EQ(spec.at("volumes").at(0).at("secret").at("defaultMode"), 420);  // 0644
  EXPECT_EQ(spec.at("containers").at(0).at("volumeMounts").at(0).at("mountPath"),
            "/home/mpi/.ssh");
}

TEST(JobPluginsPodSpec, TemplatesHostNamingIsReadFromTheirSpec) {
  auto j = two_task_job(R"({"hostname":"ps","containers":[]})");
  auto namings = task_namings_of(j);
  ASSERT_EQ(namings.size(), 2u);
  EXPECT_EQ(namings[0].hostname, "ps");
  EXPECT_EQ(namings[0].subdomain, "");
  EXPECT_EQ(namings[1].hostname, "");
}

// The "name" of each object of `list`.
std::vector<std::string> names_of(const json::value& list) {
  std::vector<std::string> out;
  for (const auto& v : list.as_array())
    out.push_back(std::string(v.at("name").as_string()));
  return out;
}

// The names of `c`'s env variables with their values (a value from elsewhere as "<from>").
std::map<std::string, std::string> env_of(const json::value& c) {
  std::map<std::string, std::string> out;
  if (const auto* env = c.as_object().if_contains("env"))
    for (const auto& v : env->as_array())
      out[std::string(v.at("name").as_string())] =
          v.as_object().contains("value") ? std::string(v.at("value").as_string()) : "<from>";
  return out;
}

// mpi: the launcher knows its workers and every container opens sshd's port; the workers
// only open the port. Implied ssh and svc come with it.
TEST(JobPluginsPodSpec, MpiGivesTheLauncherItsWorkersAndOpensThePort) {
  auto j = two_task_job();
  j.tasks[0].name = "master";
  j.plugins = {{"mpi", {}}};
  auto settings = scheduler::plugin_settings_of(j);
  auto spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, settings, "tf-master-0", "master", "0");
  const auto& main = spec.at("containers").at(0);
  EXPECT_EQ(env_of(main)["MPI_HOST"], "tf-worker-0.tf,tf-worker-1.tf");
  EXPECT_EQ(main.at("ports"),
            json::parse(R"([{"name":"mpijob-port","containerPort":22}])"));
  EXPECT_EQ(spec.at("initContainers").at(0).at("ports").as_array().size(), 1u);
  EXPECT_EQ(spec.at("hostname"), "tf-master-0") << "svc comes with mpi";
  EXPECT_EQ(spec.at("volumes").at(0).at("name"), "tf-ssh") << "ssh comes with mpi";

  spec = json::parse(R"({"containers":[{"name":"w","ports":[{"containerPort":22}]}]})")
             .as_object();
  add_plugins_to_pod_spec(spec, j, settings, "tf-worker-1", "worker", "1");
  EXPECT_EQ(spec.at("containers").at(0).at("ports").as_array().size(), 1u) << "already open";
  EXPECT_EQ(env_of(spec.at("containers").at(0)).count("MPI_HOST"), 0u);
}

// pytorch: every container learns the master's address, the port, the world size and its rank;
// a worker waits for the master when asked to.
TEST(JobPluginsPodSpec, PytorchGivesRanksAndAWorkerWaitsForTheMaster) {
  auto j = two_task_job();
  j.tasks[0].name = "master";
  j.plugins = {{"pytorch", {"--wait-master-enabled"}}};
  auto settings = scheduler::plugin_settings_of(j);
  auto spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, settings, "tf-worker-1", "worker", "1");
  auto env = env_of(spec.at("containers").at(0));
  EXPECT_EQ(env["MASTER_ADDR"], "tf-master-0.tf");
  EXPECT_EQ(env["MASTER_PORT"], "23456");
  EXPECT_EQ(env["WORLD_SIZE"], "3");
  EXPECT_EQ(env["RANK"], "2");
  const auto& init = spec.at("initContainers").as_array();
  ASSERT_EQ(init.size(), 2u);
  EXPECT_EQ(init[1].at("name"), "wait-for-master");
  EXPECT_EQ(init[1].at("image"), "busybox:1.36.1");
  EXPECT_EQ(env_of(init[0]).count("MASTER_ADDR"), 0u) << "init containers get no env";

  spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, settings, "tf-master-0", "master", "0");
  EXPECT_EQ(env_of(spec.at("containers").at(0))["RANK"], "0");
  EXPECT_EQ(spec.at("initContainers").as_array().size(), 1u) << "the master waits for nobody";
}

TEST(JobPluginsPodSpec, TensorflowGivesEveryContainerTheClusterSpec) {
  auto j = two_task_job();
  j.plugins = {{"tensorflow", {}}};
  auto spec = pod_spec();
  add_plugins_to_pod_spec(spec, j, scheduler::plugin_settings_of(j), "tf-worker-1", "worker",
                          "1");
  EXPECT_EQ(json::parse(env_of(spec.at("containers").at(0))["TF_CONFIG"]),
            json::parse(R"({"cluster":{"ps":["tf-ps-0.tf:2222"],"worker":["tf-worker-0.tf:2222",
                           "tf-worker-1.tf:2222"]},"task":{"type":"worker","index":1}})"));
}

// hcclrank's annotation, as Volcano's OnPodCreate writes it: one the template gives is kept, a
// container's RANK is copied, else the rank is computed (the master's index, a worker's after
// the master's replicas); another task's pod gets none.
TEST(JobPluginsPodSpec, HcclrankAnnotatesThePodsRank) {
  struct row {
    const char* what;
    const char* spec;
    std::string given;  // The template's hccl/rankIndex; "-": none.
    std::string task, index;
    std::optional<std::string> rank;
  };
  const char* plain = R"({"containers":[{"name":"main"}]})";
  const std::vector<row> rows{
      {"a master by its index", plain, "-", "master", "0", "0"},
      {"a worker after the master's one replica", plain, "-", "worker", "1", "2"},
      {"another task's pod gets none", plain, "-", "ps", "0", std::nullopt},
      {"the template's rank stays", plain, "7", "worker", "1", "7"},
      {"an empty one is written over", plain, "", "worker", "1", "2"},
      {"a container's RANK is copied",
       R"({"containers":[{"name":"a"},{"name":"b","env":[{"name":"RANK","value":"5"}]}]})", "-",
       "ps", "0", "5"},
      {"the first RANK only, and one from elsewhere is no value",
       R"({"containers":[{"name":"a","env":[{"name":"RANK","valueFrom":{}}]},
                         {"name":"b","env":[{"name":"RANK","value":"5"}]}]})",
       "-", "worker", "0", "1"},
      {"an init container's RANK is not read",
       R"({"containers":[{"name":"a"}],
           "initContainers":[{"name":"i","env":[{"name":"RANK","value":"5"}]}]})",
       "-", "master", "0", "0"},
  };
  auto j = two_task_job();
  j.tasks[0].name = "master";
  j.plugins = {{"hcclrank", {}}};
  const auto settings = scheduler::plugin_settings_of(j);
  for (const auto& r : rows) {
    scheduler::label_set annotations{{"volcano.sh/task-index", r.index}};
    if (r.given != "-")
      annotations.set(scheduler::hccl_rank_key, r.given);
    auto spec = json::parse(r.spec).as_object();
    add_plugins_to_pod_annotations(annotations, spec, j, settings, r.task, r.index);
    auto got = annotations.find(scheduler::hccl_rank_key);
    EXPECT_EQ(got ? std::optional<std::string>(*got) : std::nullopt, r.rank) << r.what;
    EXPECT_EQ(spec, json::parse(r.spec)) << r.what << ": the spec is only read";
  }

  // With pytorch, whose RANK the spec gets first: the annotation says pytorch's rank (a
  // worker's index + 1), not its own count (two masters + 1).
  j.tasks[0].replicas = 2;
  j.plugins = {{"hcclrank", {}}, {"pytorch", {}}};
  auto spec = json::parse(plain).as_object();
  scheduler::label_set annotations;
  add_job_to_pod(spec, annotations, j, scheduler::plugin_settings_of(j), "tf-worker-1", "worker",
                 "1");
  EXPECT_EQ(env_of(spec.at("containers").at(0))["RANK"], "2");
  EXPECT_EQ(annotations.find(scheduler::hccl_rank_key), std::optional<std::string_view>("2"));
}

// ray: the head container gets the three ports it lacks and `ray start --head`; a worker
// container `ray start` at the head; other containers and tasks nothing.
TEST(JobPluginsPodSpec, RayStartsTheHeadContainerAndTheWorkerContainers) {
  auto j = two_task_job();
  j.tasks[0].name = "head";
  j.plugins = {{"ray", {"--headContainer=ray", "--workerContainer=ray"}}};
  const auto settings = scheduler::plugin_settings_of(j);
  const char* two_containers = R"({"containers":[
      {"name":"ray","image":"rayproject/ray","ports":[{"name":"own","containerPort":8265}]},
      {"name":"sidecar","image":"busybox"}]})";
  auto spec = json::parse(two_containers).as_object();
  add_plugins_to_pod_spec(spec, j, settings, "tf-head-0", "head", "0");
  const auto& head = spec.at("containers").at(0);
  EXPECT_EQ(head.at("ports"), json::parse(R"([{"name":"own","containerPort":8265},
      {"name":"gcs","containerPort":6379},{"name":"client-server","containerPort":10001}])"));
  EXPECT_EQ(head.at("command"),
            json::parse(R"(["sh","-c","ray start --head --block --dashboard-host=0.0.0.0 )"
                        R"(--port=6379 --dashboard-port=8265 --ray-client-server-port=10001"])"));
  const auto& sidecar = spec.at("containers").at(1).as_object();
  EXPECT_FALSE(sidecar.contains("command") || sidecar.contains("ports")) << json::serialize(spec);

  spec = json::parse(two_containers).as_object();
  add_plugins_to_pod_spec(spec, j, settings, "tf-worker-1", "worker", "1");
  const auto& worker = spec.at("containers").at(0);
  EXPECT_EQ(worker.at("command"),
            json::parse(R"(["sh","-c","ray start --block --address=tf-head-0.tf:6379"])"));
  EXPECT_EQ(worker.at("ports").as_array().size(), 1u) << "a worker opens nothing";
  EXPECT_FALSE(spec.at("containers").at(1).as_object().contains("command"));
}

// A job's volumes, as Volcano's createJobPod writes them: per claim a volume after the
// template's and a mount in every container (not init containers) at the volume's path; a claim
// named twice once, at its first path; before what the plugins add (their volumes follow).
TEST(JobPluginsPodSpec, VolumesMountEveryClaimInEveryContainerBeforeThePlugins) {
  auto j = two_task_job();
  j.volumes = {{"/data", "shared", false},
               {"/scratch", "tf-pvc-0123456789ab", true},
               {"/again", "shared", false},
               {"/unnamed", "", true}};
  j.plugins = {{"ssh", {}}};
  auto spec = json::parse(R"({"volumes":[{"name":"cache","emptyDir":{}}],
      "containers":[{"name":"a","volumeMounts":[{"name":"cache","mountPath":"/cache"}]},
                    {"name":"b"}],
      "initContainers":[{"name":"i"}]})")
                  .as_object();
  scheduler::label_set annotations;
  add_job_to_pod(spec, annotations, j, scheduler::plugin_settings_of(j), "tf-ps-0", "ps", "0");
  const auto shared = scheduler::pod_volume_name("tf", "shared");
  const auto scratch = scheduler::pod_volume_name("tf", "tf-pvc-0123456789ab");
  EXPECT_EQ(names_of(spec.at("volumes")),
            (std::vector<std::string>{"cache", shared, scratch, "tf-ssh"}));
  EXPECT_EQ(spec.at("volumes").at(1),
            json::value(json::object{
                {"name", shared},
                {"persistentVolumeClaim", json::object{{"claimName", "shared"}}}}));
  EXPECT_EQ(spec.at("volumes").at(2).at("persistentVolumeClaim").at("claimName"),
            "tf-pvc-0123456789ab");
  auto mounts_of = [&](const json::value& c) {
    std::vector<std::string> out;
    for (const auto& m : c.at("volumeMounts").as_array())
      out.push_back(std::string(m.at("name").as_string()) + " " +
                    std::string(m.at("mountPath").as_string()));
    return out;
  };
  EXPECT_EQ(mounts_of(spec.at("containers").at(0)),
            (std::vector<std::string>{"cache /cache", shared + " /data", scratch + " /scratch",
                                      "tf-ssh /root/.ssh"}));
  EXPECT_EQ(mounts_of(spec.at("containers").at(1)),
            (std::vector<std::string>{shared + " /data", scratch + " /scratch",
                                      "tf-ssh /root/.ssh"}));
  EXPECT_EQ(mounts_of(spec.at("initContainers").at(0)),
            std::vector<std::string>{"tf-ssh /root/.ssh"})
      << "init containers mount the plugins' volumes only";
}

// The job's status names what its plugins control, as Volcano's OnJobAdd records it.
TEST(JobPluginsPodSpec, TheJobsStatusNamesWhatItsPluginsControl) {
  job_object o;
  o.job = two_task_job();
  o.job.plugins = {
      {"env", {}}, {"hcclrank", {}}, {"mpi", {}}, {"svc", {"--disable-network-policy"}}};
  auto v = encode_object(o);
  EXPECT_EQ(v.at("status").at("controlledResources"),
            json::parse(R"({"plugin-env":"env","plugin-mpi":"mpi","plugin-ssh":"ssh",)"
                        R"("plugin-svc":"svc"})"))
      << json::serialize(v);
  o.job.plugins = {{"ray", {}}};
  v = encode_object(o);
  EXPECT_EQ(v.at("status").at("controlledResources"),
            json::parse(R"({"plugin-ray":"ray","plugin-svc":"svc"})"))
      << json::serialize(v);
  // And the claims its volumes mount, as Volcano's createJobIOIfNotExist records them.
  o.job.plugins.clear();
  o.job.volumes = {{"/data", "shared", false}, {"/scratch", "tf-pvc-0123456789ab", true}};
  v = encode_object(o);
  EXPECT_EQ(v.at("status").at("controlledResources"),
            json::parse(R"({"volume-pvc-shared":"shared",)"
                        R"("volume-pvc-tf-pvc-0123456789ab":"tf-pvc-0123456789ab"})"))
      << json::serialize(v);
  o.job.volumes.clear();
  EXPECT_FALSE(encode_object(o).at("status").as_object().contains("controlledResources"));
}

} // namespace
} // namespace phalanx::api
