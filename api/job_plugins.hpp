#pragma once

// What a Volcano job writes into each pod it makes beyond the task's template: its volumes
// (spec.volumes, scheduler/job_volumes.hpp) and what its plugins (scheduler/job_plugins.hpp) add
// to the pod's spec and annotations, as JSON, for both worlds: the Kubernetes-mode job
// controller's pod manifests (k8s/job_objects.hpp) and the standalone catalog's job pods (as
// `get pod -o yaml` shows them). The volumes come first, as in Volcano's createJobPod; plugins
// apply to the spec in name order (env, mpi, pytorch, ray, ssh, svc, tensorflow), then to the
// annotations (hcclrank), which see the variables the spec got (pytorch's RANK); Volcano's order
// is its map's, random.
//
// Pure functions; thread-safe.

#include "scheduler/job_plugins.hpp"
#include "scheduler/model.hpp"

#include <boost/json/object.hpp>

#include <string_view>
#include <vector>

namespace phalanx::api {

/// Each task's spec.hostname and spec.subdomain, read from its template's kept spec (empty
/// where unset), in the job's task order.
std::vector<scheduler::task_host_naming> task_namings_of(const scheduler::job& j);

/// Adds to `pod_spec` (a pod's spec: containers, initContainers, volumes...) what `settings`'
/// plugins give pod `pod_name`, index `task_index` of task `task`, of job `j`:
/// - env: VK_TASK_INDEX and VC_TASK_INDEX in every container and init container;
/// - ssh: the "<job>-ssh" Secret as a volume (its four keys under ".ssh/", mode 0600, or 0644
///   at another path than /root/.ssh), mounted at the key file path with subPath ".ssh";
/// - svc: hostname (the pod's name) and subdomain (the job's) where the spec has none, the
///   "<job>-svc" ConfigMap as a volume mounted at /etc/volcano, and every task's
///   VC_<TASK>_HOSTS and VC_<TASK>_NUM from it (unless --inject-hosts-env=false).
/// - mpi: the port opened in every container lacking it ("mpijob-port"); MPI_HOST in the
///   launcher's (nothing at all for a launcher when the job has no worker task);
/// - pytorch: MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK (a worker's index + 1; the
///   master's 0) in every container, the port opened ("pytorchjob-port"), and a worker's
///   "wait-for-master" init container with --wait-master-enabled;
/// - ray: in the head task's pods, the container named --headContainer gets the GCS, dashboard
///   and client-server ports (those whose number it lacks) and `sh -c` ray_head_command; in the
///   worker task's, the container named --workerContainer gets `sh -c` ray_worker_command
///   (nothing at all when the job has no head task);
/// - tensorflow: TF_CONFIG in every container.
/// A container's env, ports or volumeMounts that is not an array is replaced.
void add_plugins_to_pod_spec(boost::json::object& pod_spec, const scheduler::job& j,
                             const scheduler::job_plugin_settings& settings,
                             std::string_view pod_name, std::string_view task,
                             std::string_view task_index);

/// Adds to `annotations` (the pod's, made from its task's template) what `settings`' plugins
/// give the pod of task `task` at `task_index`, `pod_spec` being its spec as
/// add_plugins_to_pod_spec left it:
/// - hcclrank: hccl/rankIndex, unless the pod has a non-empty one: the value of the first RANK
///   variable of its containers (not init containers) when that is a non-empty value, else
///   scheduler::hccl_rank (none for a pod of another task than the master's or the workers').
void add_plugins_to_pod_annotations(scheduler::label_set& annotations,
                                    const boost::json::object& pod_spec,
                                    const scheduler::job& j,
                                    const scheduler::job_plugin_settings& settings,
                                    std::string_view task, std::string_view task_index);

/// Adds job `j`'s volumes to `pod_spec`, as Volcano's createJobPod does: per claim (a volume's
/// volumeClaimName) a volume {name: scheduler::pod_volume_name, persistentVolumeClaim:
/// {claimName}} after the template's, and in every container (not init containers) a mount of it
/// at the volume's mountPath. A claim named by two volumes is added once, mounted at the first
/// one's path only, as in Volcano. A volume whose claim has no name yet is left out: both worlds
/// name every claim before the job's pods are made (scheduler::name_volume_claims).
void add_volumes_to_pod_spec(boost::json::object& pod_spec, const scheduler::job& j);

/// Everything job `j` gives a pod it makes, in Volcano's order (createJobPod, then each plugin's
/// OnPodCreate): add_volumes_to_pod_spec, add_plugins_to_pod_spec, then
/// add_plugins_to_pod_annotations. The one call both worlds make.
void add_job_to_pod(boost::json::object& pod_spec, scheduler::label_set& annotations,
                    const scheduler::job& j, const scheduler::job_plugin_settings& settings,
                    std::string_view pod_name, std::string_view task,
                    std::string_view task_index);

} // namespace phalanx::api
