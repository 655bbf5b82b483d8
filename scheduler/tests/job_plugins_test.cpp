// The job plugins' settings and the contents of the objects they make, against what Volcano's
// job controller makes for the same job (pkg/controllers/job/plugins/svc GenerateHosts, ssh
// generateSSHConfig, and their flag sets).

#include "scheduler/job_plugins.hpp"
#include "scheduler/job_volumes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phalanx::scheduler {
namespace {

// Job `name` in namespace "default" with tasks (name, replicas).
job job_of(std::string name, std::vector<std::pair<std::string, int32_t>> tasks) {
  job j;
  j.meta.name = name;
  j.meta.namespace_name = "default";
  for (auto& [task, replicas] : tasks) {
    job_task t;
    t.name = std::move(task);
    t.replicas = replicas;
    j.tasks.push_back(std::move(t));
  }
  return j;
}

job mpi_job() { return job_of("lm-mpi", {{"mpimaster", 1}, {"mpi-worker", 2}}); }

TEST(JobPlugins, SettingsDefaultAsVolcanos) {
  auto j = mpi_job();
  j.plugins = {{"env", {}}, {"ssh", {}}, {"svc", {}}};
  auto s = plugin_settings_of(j);
  EXPECT_TRUE(s.env);
  ASSERT_TRUE(s.svc);
  EXPECT_EQ(*s.svc, svc_plugin_settings{});
  EXPECT_FALSE(s.svc->publish_not_ready_addresses);
  EXPECT_TRUE(s.svc->inject_hosts_env);
  ASSERT_TRUE(s.ssh);
  EXPECT_EQ(s.ssh->key_file_path, "/root/.ssh");
  EXPECT_EQ(s.ssh->port, 22);

  j.plugins = {{"hcclrank", {}}};
  s = plugin_settings_of(j);
  ASSERT_TRUE(s.hcclrank);
  EXPECT_EQ(s.hcclrank->master, "master");
  EXPECT_EQ(s.hcclrank->worker, "worker");
  EXPECT_FALSE(s.svc) << "hcclrank implies nothing";
  EXPECT_TRUE(controlled_plugins(s).empty()) << "Volcano's hcclrank OnJobAdd records nothing";
}

TEST(JobPlugins, FlagsAreReadAsGoReadsThem) {
  auto j = mpi_job();
  j.plugins = {{"ssh", {"-ssh-key-file-path", "/home/mpi/.ssh", "--ssh-port=2222"}},
               {"svc", {"--publish-not-ready-addresses", "-disable-network-policy=true",
                        "--inject-hosts-env=F"}}};
  std::vector<plugin_argument_error> errors;
  auto s = plugin_settings_of(j, &errors);
  EXPECT_EQ(errors, std::vector<plugin_argument_error>{});
  EXPECT_EQ(*s.svc, (svc_plugin_settings{true, true, false}));
  EXPECT_EQ(s.ssh->key_file_path, "/home/mpi/.ssh");
  EXPECT_EQ(s.ssh->port, 2222);

  // A port out of range falls back to 22, as Volcano's validateSSHPort does.
  j.plugins = {{"ssh", {"--ssh-port=70000"}}};
  EXPECT_EQ(plugin_settings_of(j, &errors).ssh->port, 22);
  EXPECT_TRUE(errors.empty());
}

TEST(JobPlugins, BadArgumentsAreNamedAndTheRestStillApply) {
  auto j = mpi_job();
  j.plugins = {{"env", {}}, {"svc", {"--bogus", "--publish-not-ready-addresses", "---x", "--"}}};
  std::vector<plugin_argument_error> errors;
  auto s = plugin_settings_of(j, &errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].plugin, "svc");
  EXPECT_EQ(errors[0].plugin_index, 1u);
  EXPECT_EQ(errors[0].index, 0u);
  EXPECT_EQ(errors[1].index, 2u);
  EXPECT_EQ(errors[1].message, "bad flag syntax: ---x");

  j.plugins = {{"env", {"--index"}}};
  errors.clear();
  plugin_settings_of(j, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "flag provided but not defined: --index (the env plugin takes no flags)");
  EXPECT_TRUE(s.svc->publish_not_ready_addresses);
}

TEST(JobPlugins, HostsPerTaskAsTheSvcConfigMapHoldsThem) {
  auto j = mpi_job();
  auto data = job_hosts(j, {{}, {}});
  const std::map<std::string, std::string> want{
      {"mpimaster.host", "lm-mpi-mpimaster-0.lm-mpi"},
      {"VC_MPIMASTER_HOSTS", "lm-mpi-mpimaster-0.lm-mpi"},
      {"VC_MPIMASTER_NUM", "1"},
      {"mpi_worker.host", "lm-mpi-mpi-worker-0.lm-mpi\nlm-mpi-mpi-worker-1.lm-mpi"},
      {"VC_MPI_WORKER_HOSTS", "lm-mpi-mpi-worker-0.lm-mpi,lm-mpi-mpi-worker-1.lm-mpi"},
      {"VC_MPI_WORKER_NUM", "2"},
  };
  EXPECT_EQ(data, want);
  EXPECT_EQ(svc_host_variables(j),
            (std::vector<std::string>{"VC_MPIMASTER_HOSTS", "VC_MPIMASTER_NUM",
                                      "VC_MPI_WORKER_HOSTS", "VC_MPI_WORKER_NUM"}));
}

TEST(JobPlugins, ATemplatesHostnameIsOneHostAndItsSubdomainReplacesTheJobs) {
  auto j = mpi_job();
  auto data = job_hosts(j, {{"master", ""}, {"", "workers"}});
  EXPECT_EQ(data["mpimaster.host"], "master.lm-mpi");
  EXPECT_EQ(data["VC_MPIMASTER_NUM"], "1");
  EXPECT_EQ(data["VC_MPI_WORKER_HOSTS"], "lm-mpi-mpi-worker-0.workers,lm-mpi-mpi-worker-1.workers");

  j.tasks[1].replicas = 0;  // Scaled to no pod: the task is listed, empty.
  data = job_hosts(j, {{}, {}});
  EXPECT_EQ(data["mpi_worker.host"], "");
  EXPECT_EQ(data["VC_MPI_WORKER_NUM"], "0");
}

TEST(JobPlugins, SshConfigNamesEveryHost) {
  auto j = mpi_job();
  EXPECT_EQ(ssh_config(j, {{}, {}}, 2222),
            "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
            "Host lm-mpi-mpimaster-0\n  HostName lm-mpi-mpimaster-0.lm-mpi\n  Port 2222\n"
            "Host lm-mpi-mpi-worker-0\n  HostName lm-mpi-mpi-worker-0.lm-mpi\n  Port 2222\n"
            "Host lm-mpi-mpi-worker-1\n  HostName lm-mpi-mpi-worker-1.lm-mpi\n  Port 2222\n");
  EXPECT_EQ(svc_config_map_name("lm-mpi"), "lm-mpi-svc");
  EXPECT_EQ(ssh_secret_name("lm-mpi"), "lm-mpi-ssh");
}

// tensorflow's TF_CONFIG, as Volcano's plugin marshals it: the roles in its order, each replica
// "<host>.<subdomain>:<port>", and the pod's own role and index.
TEST(JobPlugins, TensorflowConfigDescribesTheClusterAndThePodsPlace) {
  auto j = job_of("tf", {{"worker", 2}, {"ps", 1}, {"chief", 0}});
  j.plugins = {{"tensorflow", {"--port=3333"}}};
  auto s = *plugin_settings_of(j).tensorflow;
  EXPECT_EQ(tensorflow_config(j, {{}, {}, {}}, s, "worker", 1),
            R"({"cluster":{"ps":["tf-ps-0.tf:3333"],"worker":["tf-worker-0.tf:3333",)"
            R"("tf-worker-1.tf:3333"]},"task":{"type":"worker","index":1}})");
  // A template's hostname names every replica alike (Volcano's MakeDomainName).
  EXPECT_EQ(tensorflow_config(j, {{"w", ""}, {}, {}}, s, "ps", 0),
            R"({"cluster":{"ps":["tf-ps-0.tf:3333"],"worker":["w.tf:3333","w.tf:3333"]},)"
            R"("task":{"type":"ps","index":0}})");
  // One task of one pod: no cluster.
  j.tasks = {j.tasks[1]};
  EXPECT_EQ(tensorflow_config(j, {{}}, s, "ps", 0), "");
}

TEST(JobPlugins, MpiAndPytorchNameTheirPeers) {
  auto j = job_of("lm", {{"master", 1}, {"worker", 3}});
  j.plugins = {{"mpi", {}}, {"pytorch", {"--wait-master-enabled", "--wait-master-timeout=60"}}};
  auto settings = plugin_settings_of(j);
  EXPECT_EQ(mpi_worker_hosts(j, {{}, {}}, *settings.mpi),
            "lm-worker-0.lm,lm-worker-1.lm,lm-worker-2.lm");
  EXPECT_EQ(pytorch_master_address(j, {{}, {}}, *settings.pytorch), "lm-master-0.lm");
  EXPECT_EQ(pytorch_world_size(j, *settings.pytorch), 4);
  EXPECT_TRUE(settings.pytorch->wait_master_enabled);
  EXPECT_EQ(settings.pytorch->wait_master_timeout, 60);
  const auto script = pytorch_wait_script("lm-master-0.lm", *settings.pytorch);
  EXPECT_NE(script.find("nc -z lm-master-0.lm 23456"), std::string::npos) << script;
  EXPECT_NE(script.find("-ge 60 ]"), std::string::npos) << script;
  // Their host names are svc's, and mpi reaches its workers over ssh: both implied.
  EXPECT_TRUE(settings.svc);
  EXPECT_TRUE(settings.ssh);

  j.plugins = {{"mpi", {"--worker=mpiworker"}}};
  EXPECT_EQ(mpi_worker_hosts(j, {{}, {}}, *plugin_settings_of(j).mpi), std::nullopt);
  j.plugins = {{"pytorch", {"--master=chief"}}};
  EXPECT_EQ(pytorch_master_address(j, {{}, {}}, *plugin_settings_of(j).pytorch), std::nullopt);
  EXPECT_FALSE(plugin_settings_of(j).ssh);
}

// hcclrank's rank, as Volcano's OnPodCreate computes it: the master's pods by their index, the
// workers' after all the master's replicas, no rank for another task's pods.
TEST(JobPlugins, HcclrankRanksTheMastersThenTheWorkers) {
  struct row {
    const char* what;
    std::vector<std::string> args;
    std::string task;
    int32_t index;
    std::optional<int32_t> rank;
  };
  const std::vector<row> rows{
      {"the master's first pod", {}, "master", 0, 0},
      {"the master's second pod", {}, "master", 1, 1},
      {"the first worker comes after the two masters", {}, "worker", 0, 2},
      {"the last worker", {}, "worker", 2, 4},
      {"another task's pod is not ranked", {}, "ps", 0, std::nullopt},
      {"--master names the master's task", {"--master=ps", "-worker", "worker"}, "ps", 0, 0},
      {"a worker after a master task the job has not", {"--master=chief"}, "worker", 1, 1},
      {"the default master is no master then", {"--master=chief"}, "master", 1, std::nullopt},
  };
  for (const auto& r : rows) {
    auto j = job_of("hccl", {{"master", 2}, {"worker", 3}, {"ps", 1}});
    j.plugins = {{"hcclrank", r.args}};
    std::vector<plugin_argument_error> errors;
    auto s = plugin_settings_of(j, &errors);
    EXPECT_TRUE(errors.empty()) << r.what;
    EXPECT_EQ(hccl_rank(j, *s.hcclrank, r.task, r.index), r.rank) << r.what;
  }

  auto j = job_of("hccl", {{"master", 1}});
  j.plugins = {{"hcclrank", {"--rank=1"}}};
  std::vector<plugin_argument_error> errors;
  plugin_settings_of(j, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "flag provided but not defined: --rank (the hcclrank plugin knows "
                               "--master, --worker)");
}

// ray, as Volcano's plugin reads its flags (camelCase) and writes its commands: the head starts
// with its three ports, a worker joins the head's first pod at the GCS port, under the head
// template's host naming.
TEST(JobPlugins, RayStartsTheHeadAndPointsTheWorkersAtIt) {
  auto j = job_of("rc", {{"head", 1}, {"worker", 2}});
  j.plugins = {{"ray", {}}};
  auto s = plugin_settings_of(j);
  ASSERT_TRUE(s.ray);
  EXPECT_EQ(*s.ray, ray_plugin_settings{});
  EXPECT_EQ(s.ray->head, "head");
  EXPECT_EQ(s.ray->head_container, "head");
  EXPECT_EQ(s.ray->worker_container, "worker");
  EXPECT_TRUE(s.svc) << "ray implies svc";
  EXPECT_EQ(controlled_plugins(s), (std::vector<std::string_view>{"svc", "ray"}));
  EXPECT_EQ(ray_head_command(*s.ray),
            "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 --dashboard-port=8265 "
            "--ray-client-server-port=10001");
  EXPECT_EQ(ray_worker_command(j, {{}, {}}, *s.ray),
            "ray start --block --address=rc-head-0.rc:6379");
  EXPECT_EQ(ray_worker_command(j, {{"ray-head", "cluster"}, {}}, *s.ray),
            "ray start --block --address=ray-head.cluster:6379");
  EXPECT_EQ(ray_ports(*s.ray), (std::vector<std::pair<std::string_view, int32_t>>{
                                   {"gcs", 6379}, {"dashboard", 8265}, {"client-server", 10001}}));
  EXPECT_EQ(ray_head_service_name("rc"), "rc-head-svc");

  j.plugins = {{"ray",
                {"--head=worker", "-headContainer", "main", "--worker=head",
                 "--workerContainer=w", "--port=7000", "--dashboardPort", "9000",
                 "-clientPort=11000"}}};
  std::vector<plugin_argument_error> errors;
  s = plugin_settings_of(j, &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(*s.ray, (ray_plugin_settings{"worker", "main", "head", "w", 7000, 9000, 11000}));
  EXPECT_EQ(ray_worker_command(j, {{}, {}}, *s.ray),
            "ray start --block --address=rc-worker-0.rc:7000");

  j.plugins = {{"ray", {"--head=chief", "--dashboard-port=1"}}};
  errors.clear();
  s = plugin_settings_of(j, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message,
            "flag provided but not defined: --dashboard-port (the ray plugin knows --head, "
            "--headContainer, --worker, --workerContainer, --port, --dashboardPort, --clientPort)");
  EXPECT_EQ(ray_worker_command(j, {{}, {}}, *s.ray), std::nullopt) << "no head task";
}

TEST(JobPlugins, TheWebhooksImpliedPluginsAreAddedToTheJob) {
  job j;
  j.plugins = {{"mpi", {"--port=2022"}}};
  EXPECT_TRUE(add_implied_plugins(j));
  EXPECT_EQ(j.plugins, (decltype(j.plugins){{"mpi", {"--port=2022"}}, {"ssh", {}}, {"svc", {}}}));
  EXPECT_FALSE(add_implied_plugins(j));
  j.plugins = {{"env", {}}};
  EXPECT_FALSE(add_implied_plugins(j));
  j.plugins = {{"ray", {}}, {"svc", {"--disable-network-policy"}}};
  EXPECT_FALSE(add_implied_plugins(j)) << "a svc of the user's stays as written";
}

// The names of a job's claims and of its pods' volumes: Volcano's shapes ("<job>-pvc-" and 12
// of [0-9a-z]; "<job>-" and 12), the same at every try (a controller that stopped after making
// a claim finds it again), different per volume and per job.
TEST(JobVolumes, GeneratedNamesHaveVolcanosShapeAndAreTheSameAtEveryTry) {
  const std::string uid = "0b0e7c52-3c1f-4f43-9d55-2a1b4c6d8e90";
  auto is_base36 = [](std::string_view s) {
    return s.size() == 12 && std::all_of(s.begin(), s.end(), [](char c) {
             return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
           });
  };
  const auto first = generated_claim_name("tf", uid, 0);
  ASSERT_EQ(first.rfind("tf-pvc-", 0), 0u) << first;
  EXPECT_TRUE(is_base36(first.substr(7))) << first;
  // Fixed by its definition: a process of another build (an upgrade between a claim made and
  // its name written) names the same claim.
  EXPECT_EQ(first, "tf-pvc-9mc6efqyjxj7");
  EXPECT_EQ(generated_claim_name("tf", uid, 0), first);
  EXPECT_NE(generated_claim_name("tf", uid, 1), first);
  EXPECT_NE(generated_claim_name("tf", "another-uid", 0), first);

  const auto volume = pod_volume_name("tf", "shared");
  ASSERT_EQ(volume.rfind("tf-", 0), 0u) << volume;
  EXPECT_TRUE(is_base36(volume.substr(3))) << volume;
  EXPECT_EQ(volume, "tf-dizog9eyp6u1");
  EXPECT_NE(pod_volume_name("tf", "other"), volume);

  auto j = job_of("tf", {{"worker", 1}});
  j.meta.uid = uid;
  j.volumes = {{"/data", "shared", false}, {"/scratch", "", true}, {"/again", "shared", false}};
  EXPECT_TRUE(name_volume_claims(j));
  EXPECT_EQ(j.volumes[0].volume_claim_name, "shared") << "a named claim keeps its name";
  EXPECT_EQ(j.volumes[1].volume_claim_name, generated_claim_name("tf", uid, 1));
  EXPECT_FALSE(name_volume_claims(j)) << "named once";
  EXPECT_EQ(named_claims(j), (std::vector<std::string>{"shared", j.volumes[1].volume_claim_name}));
  EXPECT_EQ(claim_resource_key("shared"), "volume-pvc-shared");
  EXPECT_EQ(claim_not_found_message("shared"),
            "pvc shared is not found, the job will be in the Pending state until the PVC is "
            "created");
}

} // namespace
} // namespace phalanx::scheduler
