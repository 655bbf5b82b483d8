#pragma once

// What a Volcano job's plugins (spec.plugins) add to it, as Volcano's job controller does it
// (pkg/controllers/job/plugins): the one place where plugin arguments are read and where the
// names and contents of the objects they make are decided, for both worlds.
// - env: every container and init container of a pod gets VK_TASK_INDEX and VC_TASK_INDEX, its
//   index in its task.
// - svc: a headless Service named as the job (selector: the job's name and namespace labels;
//   publishNotReadyAddresses with --publish-not-ready-addresses), a NetworkPolicy of the same name
//   admitting the job's own pods only (not with --disable-network-policy), and the ConfigMap
//   "<job>-svc" of host lists (job_hosts); each pod gets hostname (its name) and subdomain (the
//   job's name) unless its template sets them, the ConfigMap mounted at /etc/volcano, and
//   VC_<TASK>_HOSTS and VC_<TASK>_NUM from it (not with --inject-hosts-env=false).
// - ssh: the Secret "<job>-ssh" of a key pair (generated, or --ssh-private-key and
//   --ssh-public-key), authorized_keys and an ssh config naming every host (ssh_config), mounted
//   in every container at --ssh-key-file-path (default /root/.ssh) with mode 0600 (0644 at
//   another path).
// - tensorflow: TF_CONFIG in every container (tensorflow_config).
// - mpi: MPI_HOST (the workers' hosts) in the launcher's containers, and the port (22) opened in
//   every container.
// - pytorch: MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK, the port (23456) opened, and with
//   --wait-master-enabled a worker's init container that waits for the master to listen.
// - hcclrank: each pod of the master and worker tasks gets the annotation hccl/rankIndex (its
//   rank among them: hccl_rank), unless it has one or a container says its RANK.
// - ray: the head task's Service "<job>-head-svc" (the GCS, dashboard and client-server ports of
//   the head's pods), the head container's ports and its `ray start --head` command
//   (ray_head_command), the worker container's `ray start` at the head's address
//   (ray_worker_command).
//
// Arguments are Go flags as Volcano parses them ("--flag", "-flag", "--flag=value",
// "--flag value" for the string and number flags). Where Volcano logs a bad argument and goes on
// with the defaults, Phalanx refuses the job with the argument's field path (validation.cpp).
//
// Pure functions; the JSON of the pods and objects is written by api/job_plugins.hpp and k8s/.

#include "scheduler/model.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::scheduler {

struct svc_plugin_settings {
  bool publish_not_ready_addresses = false;
  bool disable_network_policy = false;
  bool inject_hosts_env = true;
  friend bool operator==(const svc_plugin_settings&, const svc_plugin_settings&) = default;
};

struct ssh_plugin_settings {
  std::string key_file_path = "/root/.ssh";
  std::string private_key;  // Empty: a key pair is generated for the job.
  std::string public_key;
  int32_t port = 22;        // Out of 1-65535: 22, as Volcano falls back.
  friend bool operator==(const ssh_plugin_settings&, const ssh_plugin_settings&) = default;
};

/// tensorflow: the tasks that are TF_CONFIG's roles, and the port in its host list.
struct tensorflow_plugin_settings {
  std::string ps = "ps";
  std::string worker = "worker";
  std::string chief = "chief";
  std::string evaluator = "evaluator";
  int32_t port = 2222;
  friend bool operator==(const tensorflow_plugin_settings&,
                         const tensorflow_plugin_settings&) = default;
};

/// mpi: the launcher's and the workers' tasks, and the port (sshd's) every container opens.
struct mpi_plugin_settings {
  std::string master = "master";
  std::string worker = "worker";
  int32_t port = 22;
  friend bool operator==(const mpi_plugin_settings&, const mpi_plugin_settings&) = default;
};

/// pytorch: the master's and the workers' tasks, the rendezvous port, and whether workers wait
/// for the master in an init container.
struct pytorch_plugin_settings {
  std::string master = "master";
  std::string worker = "worker";
  int32_t port = 23456;
  bool wait_master_enabled = false;
  int32_t wait_master_timeout = 300;
  std::string wait_master_image = "busybox:1.36.1";
  friend bool operator==(const pytorch_plugin_settings&, const pytorch_plugin_settings&) = default;
};

/// hcclrank: the master's and the workers' tasks, whose pods are ranked (hccl_rank).
struct hcclrank_plugin_settings {
  std::string master = "master";
  std::string worker = "worker";
  friend bool operator==(const hcclrank_plugin_settings&,
                         const hcclrank_plugin_settings&) = default;
};

/// ray: the head's and the workers' tasks, the container of each that runs `ray start`, and the
/// head's ports (--port, --dashboardPort, --clientPort).
struct ray_plugin_settings {
  std::string head = "head";
  std::string head_container = "head";
  std::string worker = "worker";
  std::string worker_container = "worker";
  int32_t port = 6379;
  int32_t dashboard_port = 8265;
  int32_t client_port = 10001;
  friend bool operator==(const ray_plugin_settings&, const ray_plugin_settings&) = default;
};

/// The plugins a job names, with their settings. tensorflow, mpi, pytorch and ray imply svc
/// (their host names are the svc plugin's), and mpi implies ssh, as Volcano's admission webhook
/// adds them to the job.
struct job_plugin_settings {
  bool env = false;
  std::optional<svc_plugin_settings> svc;
  std::optional<ssh_plugin_settings> ssh;
  std::optional<tensorflow_plugin_settings> tensorflow;
  std::optional<mpi_plugin_settings> mpi;
  std::optional<pytorch_plugin_settings> pytorch;
  std::optional<hcclrank_plugin_settings> hcclrank;
  std::optional<ray_plugin_settings> ray;
  friend bool operator==(const job_plugin_settings&, const job_plugin_settings&) = default;
};

/// One argument that does not parse: the plugin (its name, and its place in job::plugins), the
/// argument's index in the plugin's list, and why.
struct plugin_argument_error {
  std::string plugin;
  std::size_t plugin_index = 0;
  std::size_t index = 0;
  std::string message;
  friend bool operator==(const plugin_argument_error&, const plugin_argument_error&) = default;
};

/// The settings of `j`'s plugins; bad arguments (an unknown flag, a value a flag cannot take, a
/// flag lacking its value, a positional argument) go to `errors` when given, and are otherwise
/// left out as Volcano does.
job_plugin_settings plugin_settings_of(const job& j,
                                       std::vector<plugin_argument_error>* errors = nullptr);

/// What a task's template says of its pods' host names: spec.hostname and spec.subdomain (empty
/// when unset). One per task of the job, in the job's order.
struct task_host_naming {
  std::string hostname;
  std::string subdomain;
};

/// The host names of a task's pods, as the svc ConfigMap and the ssh config list them:
/// "<hostname>.<subdomain>", hostname the pod's name (<job>-<task>-<i>) unless the template sets
/// one (then one host only), subdomain the job's name unless the template sets one.
std::vector<std::string> task_hosts(const job& j, std::size_t task, const task_host_naming& naming);

/// The data of the svc plugin's ConfigMap: per task, "<task>.host" (hosts, one per line),
/// "VC_<TASK>_HOSTS" (comma-separated) and "VC_<TASK>_NUM", the task's name with '-' as '_' (and
/// upper-cased in the variable names). `namings` has one entry per task.
std::map<std::string, std::string> job_hosts(const job& j,
                                             const std::vector<task_host_naming>& namings);

/// The ssh plugin's config file: no host key checking, then a Host entry per host of every task
/// with its HostName and Port.
std::string ssh_config(const job& j, const std::vector<task_host_naming>& namings, int32_t port);

/// The environment variable names the svc plugin gives every pod, per task: VC_<TASK>_HOSTS,
/// VC_<TASK>_NUM, in the job's task order.
std::vector<std::string> svc_host_variables(const job& j);

/// The names of the plugins `s` carries out, as a job's status.controlledResources records
/// them ("plugin-<name>": <name>, by Volcano's OnJobAdd): env, svc, ssh, tensorflow, mpi,
/// pytorch, ray; not hcclrank, whose OnJobAdd records nothing.
std::vector<std::string_view> controlled_plugins(const job_plugin_settings& s);

/// The plugins Volcano's admission webhook adds to a job that names tensorflow, mpi, pytorch or
/// ray (svc) or mpi (ssh), with no arguments; true when it added any.
bool add_implied_plugins(job& j);

/// tensorflow's TF_CONFIG for the pod of `task` at `index`: {"cluster": {"ps": [...],
/// "worker": [...], "chief": [...], "evaluator": [...]}, "task": {"type": ..., "index": ...}}, each
/// role's list "<host>.<subdomain>:<port>" per replica (empty roles left out). Empty when the job
/// is one task of one replica (no cluster to describe).
std::string tensorflow_config(const job& j, const std::vector<task_host_naming>& namings,
                              const tensorflow_plugin_settings& s, std::string_view task,
                              int32_t index);

/// mpi's MPI_HOST for the launcher's pods: the worker task's hosts, comma-separated; nullopt
/// when the job has no such task (the launcher then gets nothing, as in Volcano).
std::optional<std::string> mpi_worker_hosts(const job& j,
                                            const std::vector<task_host_naming>& namings,
                                            const mpi_plugin_settings& s);

/// pytorch's MASTER_ADDR: the master task's first host; nullopt when the job has no such task
/// (the plugin then adds nothing).
std::optional<std::string> pytorch_master_address(const job& j,
                                                  const std::vector<task_host_naming>& namings,
                                                  const pytorch_plugin_settings& s);
/// pytorch's WORLD_SIZE: the replicas of the master and worker tasks.
int32_t pytorch_world_size(const job& j, const pytorch_plugin_settings& s);
/// The shell script of the wait-for-master init container: tries a TCP connection to the
/// master every 2 s and fails after the timeout.
std::string pytorch_wait_script(std::string_view master_address, const pytorch_plugin_settings& s);

/// hcclrank's rank of the pod of `task` at `index`: the master's index, or a worker's index
/// after the master's replicas (the master task's replicas in the job, 0 without one); nullopt
/// for a pod of another task (it gets no rank). A pod that already has the annotation, or whose
/// containers set RANK, keeps that (api::add_plugins_to_pod_annotations).
std::optional<int32_t> hccl_rank(const job& j, const hcclrank_plugin_settings& s,
                                 std::string_view task, int32_t index);

/// ray's command for the head container: `ray start --head --block --dashboard-host=0.0.0.0`
/// with the three ports, run by `sh -c`.
std::string ray_head_command(const ray_plugin_settings& s);
/// ray's command for a worker container: `ray start --block --address=<head>:<port>`, the head
/// being the head task's first host ("<hostname>.<subdomain>": the template's hostname, else the
/// pod's name <job>-<head>-0; the template's subdomain, else the job's name); nullopt when the
/// job has no head task (validation refuses such a job).
std::optional<std::string> ray_worker_command(const job& j,
                                              const std::vector<task_host_naming>& namings,
                                              const ray_plugin_settings& s);
/// The head Service's ports and the head container's: (name, port) for the GCS, the dashboard
/// and the client server, in that order.
std::vector<std::pair<std::string_view, int32_t>> ray_ports(const ray_plugin_settings& s);

/// The objects' names: the Service and NetworkPolicy are the job's name.
std::string svc_config_map_name(std::string_view job_name);
std::string ssh_secret_name(std::string_view job_name);
/// ray's head Service: "<job>-head-svc".
std::string ray_head_service_name(std::string_view job_name);

/// The pod annotation hcclrank writes.
inline constexpr std::string_view hccl_rank_key = "hccl/rankIndex";
/// The container variable hcclrank copies into it when a container sets it.
inline constexpr std::string_view hccl_rank_variable = "RANK";

/// Where the svc ConfigMap is mounted in every container.
inline constexpr std::string_view svc_mount_path = "/etc/volcano";
/// The keys of the ssh Secret, each mounted as ".ssh/<key>".
inline constexpr std::string_view ssh_private_key_key = "id_rsa";
inline constexpr std::string_view ssh_public_key_key = "id_rsa.pub";
inline constexpr std::string_view ssh_authorized_keys_key = "authorized_keys";
inline constexpr std::string_view ssh_config_key = "config";

} // namespace phalanx::scheduler
