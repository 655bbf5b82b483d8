#pragma once

// The objects Volcano's job controller writes on the apiserver, as JSON, and what it reads back
// from the pods it made (Kubernetes mode, `phalanxd --controllers job`;
// actors/kube_job_controller.hpp):
// - a job's pod: its task's template (metadata and spec as the user wrote them) under the name,
//   labels and annotations scheduler::expand_job gives it (Volcano's createJobPod: volcano.sh/
//   job-name, job-namespace, task-spec, task-index, queue-name, job-version, template-uid,
//   job-retry-count, scheduling.k8s.io/group-name), owned by the job as its controller;
// - the job's PodGroup "<job>-<job uid>" (scheduler::pod_group_name): minMember, minTaskMember,
//   minResources, queue and priorityClassName of the expansion, the job's labels and annotations,
//   owned by the job;
// - the job's status (Volcano's JobStatus: state, counts, minAvailable, retryCount, version,
//   taskStatusCount, conditions), as api::encode_object writes a job's status;
// - the objects of the job's plugins (scheduler/job_plugins.hpp decides their names and
//   contents): the svc plugin's headless Service and NetworkPolicy, both named as the job, and
//   its ConfigMap "<job>-svc" of host lists; the ssh plugin's Secret "<job>-ssh"; the ray
//   plugin's Service "<job>-head-svc". Each is owned by the job as its controller;
// - the claims of the job's volumes that describe one (volumeClaim), owned by the job, and the
//   patch that writes their generated names into the job's spec (scheduler/job_volumes.hpp).
//
// Pure functions of their arguments; thread-safe.

#include "k8s/ssh_keys.hpp"
#include "scheduler/job_plugins.hpp"
#include "scheduler/job_sync.hpp"
#include "scheduler/model.hpp"
#include "scheduler/object_status.hpp"
#include "scheduler/result.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace phalanx::k8s {

/// Volcano's Job: apiVersion and kind, and its collection.
inline constexpr std::string_view volcano_job_api_version = "batch.volcano.sh/v1alpha1";
inline constexpr std::string_view volcano_job_kind = "Job";
inline constexpr std::string_view volcano_jobs_path = "/apis/batch.volcano.sh/v1alpha1/jobs";

/// The scheduler name of a job's pods when neither the template nor the job names one
/// (Volcano's admission webhook makes the job's "volcano").
inline constexpr std::string_view default_job_scheduler = "volcano";

/// An ownerReference to Volcano Job `name` with `uid` as the controller (Volcano's
/// NewControllerRef: controller and blockOwnerDeletion true).
boost::json::object job_owner_reference(std::string_view name, std::string_view uid);

/// The name and uid of the Volcano Job that controls `object` (its ownerReference with
/// controller true, apiVersion batch.volcano.sh/v1alpha1 and kind Job); nullopt without one.
struct owner_job {
  std::string name;
  std::string uid;
  friend bool operator==(const owner_job&, const owner_job&) = default;
};
std::optional<owner_job> controlling_job(const boost::json::value& object);

/// The pod Volcano's createJobPod makes from `raw_job` (the Job as the apiserver has it; `j` the
/// same Job decoded) for `pod`, one of scheduler::make_job_pods's pods of that job: the template
/// of pod.role's task (spec.tasks[i].template, i being the task whose defaulted name is pod.role)
/// with metadata {name, namespace, labels and annotations of `pod`, ownerReferences: the job},
/// and in its spec schedulerName (the template's, else the job's, else "volcano"),
/// priorityClassName (the template's, else the job's); then what the job's plugins add to a
/// pod's spec and annotations (api::add_job_to_pod, the task index being the pod's annotation
/// volcano.sh/task-index, Volcano's OnPodCreate). Errors: invalid_argument naming the field when
/// the job has no such task, or the template or its spec is not an object.
result<boost::json::value> job_pod_manifest(const boost::json::value& raw_job,
                                            const scheduler::job& j, const scheduler::pod& pod);

/// The PodGroup Volcano's createOrUpdatePodGroup makes for the job: `group` as
/// scheduler::expand_job gives it (name, namespace, labels, annotations, minMember,
/// minTaskMember, queue, priorityClassName, minResources without the "pods" count), owned by
/// the job `owner` (job_owner_reference).
boost::json::value job_pod_group_manifest(const scheduler::pod_group& group,
                                          const boost::json::object& owner);

/// The merge patch that brings PodGroup `current` (the job's, as the apiserver shows it) back in
/// step with its job, as Volcano's createOrUpdatePodGroup does when a job is scaled:
/// spec.minMember, minTaskMember, minResources and priorityClassName of `group` (expand_job's, as
/// job_pod_group_manifest writes them). minResources are compared as amounts ("1.5" and "1500m"
/// agree), "pods" left out; a task or resource `current` has and `group` has not is set to null
/// (removed). The patch carries `current`'s metadata.uid, which the apiserver takes as a
/// precondition (409 when another PodGroup took the name). nullopt when nothing differs.
std::optional<boost::json::object> job_pod_group_update(const scheduler::pod_group& group,
                                                        const boost::json::value& current);

/// The svc plugin's headless Service of job `j` (uid `job_uid`), named as the job: clusterIP
/// None, selecting the job's pods by volcano.sh/job-name and volcano.sh/job-namespace,
/// publishNotReadyAddresses as `svc` says; owned by the job.
boost::json::value job_service_manifest(const scheduler::job& j, std::string_view job_uid,
                                        const scheduler::svc_plugin_settings& svc);

/// The ray plugin's Service "<job>-head-svc" (scheduler::ray_head_service_name) of job `j`
/// (uid `job_uid`): selecting the head task's pods (volcano.sh/job-name, job-namespace and
/// task-spec), ports "gcs", "dashboard" and "client-server" (scheduler::ray_ports), each TCP with
/// the container port of that name as target; owned by the job.
boost::json::value job_ray_head_service_manifest(const scheduler::job& j,
                                                 std::string_view job_uid,
                                                 const scheduler::ray_plugin_settings& ray);

/// The PersistentVolumeClaim `claim` Volcano's createPVC makes for a volume of job `j` (uid
/// `job_uid`) that describes its claim: spec `claim_spec` (the volume's volumeClaim, a
/// PersistentVolumeClaimSpec as the Job holds it), in the job's namespace, owned by the job.
boost::json::value job_volume_claim_manifest(const scheduler::job& j, std::string_view job_uid,
                                             std::string_view claim,
                                             const boost::json::value& claim_spec);

/// The JSON patch that writes the claims' names of `named` (the Job `raw_job` decoded, its
/// claims named by scheduler::name_volume_claims) into the Job, as Volcano's
/// createJobIOIfNotExist updates the Job: for each volume of raw_job's spec.volumes without a
/// volumeClaimName, a test that its mountPath is still the one named and an add of the name;
/// first a test of the Job's uid (another Job of the same name is not written). nullopt when
/// every volume of raw_job already names its claim.
std::optional<boost::json::array> job_volume_claim_names_patch(const boost::json::value& raw_job,
                                                               const scheduler::job& named);

/// The svc plugin's NetworkPolicy of job `j`, named as the job: the job's pods (the Service's
/// selector) admit ingress from the job's own pods only; owned by the job.
boost::json::value job_network_policy_manifest(const scheduler::job& j,
                                               std::string_view job_uid);

/// The svc plugin's ConfigMap "<job>-svc" (scheduler::svc_config_map_name): data
/// scheduler::job_hosts of the job's tasks as they are now (api::task_namings_of); owned by the
/// job.
boost::json::value job_hosts_config_map_manifest(const scheduler::job& j,
                                                 std::string_view job_uid);

/// The merge patch that brings the svc ConfigMap `current` (as the apiserver shows it) in step
/// with job `j`'s tasks (a scaled job), as Volcano's svc OnJobUpdate does: data as
/// job_hosts_config_map_manifest writes it, a key `current` has and the job has not set to null.
/// The patch carries `current`'s metadata.uid as a precondition. nullopt when the data agrees.
std::optional<boost::json::object> job_hosts_config_map_update(const scheduler::job& j,
                                                               const boost::json::value& current);

/// The ssh plugin's Secret "<job>-ssh" (scheduler::ssh_secret_name), type Opaque, its data (each
/// value base64, as a Secret's data holds it): id_rsa the private key, id_rsa.pub and
/// authorized_keys the public key, config scheduler::ssh_config of the job with `port`; owned by
/// the job.
boost::json::value job_ssh_secret_manifest(const scheduler::job& j, std::string_view job_uid,
                                           const ssh_key_pair& keys, int32_t port);

/// The job's status as Volcano writes it (api::encode_object's status of a job), for a JSON
/// patch that sets /status whole.
boost::json::value job_status_json(const scheduler::job_status& status);

/// The component a job controller's Events name as their source (Volcano's recorder names
/// "vc-controller-manager"; these are Phalanx's).
inline constexpr std::string_view job_controller_component = "phalanx-job-controller";

/// A core/v1 Event about Job `raw_job` (the Job as the apiserver has it: its namespace, name and
/// uid go into involvedObject), as client-go's recorder writes one for Volcano's controller:
/// `type` "Normal" or "Warning", `reason`, `message` (cut at 1024 bytes), source.component and
/// reportingComponent job_controller_component, firstTimestamp = lastTimestamp = `now`, count 1,
/// metadata.generateName "<job>." (the apiserver completes the name).
boost::json::value job_event_manifest(const boost::json::value& raw_job, std::string_view type,
                                      std::string_view reason, std::string_view message,
                                      scheduler::timestamp now);

/// What a job controller reads of one of its job's pods.
struct job_pod_facts {
  /// Name, task (annotation volcano.sh/task-spec), phase, terminating (deletionTimestamp set),
  /// out of sync (annotation volcano.sh/controller-out-of-sync), restarts (the restartCount of
  /// every status.containerStatuses and status.initContainerStatuses entry, summed; a missing or
  /// negative one counts 0, the sum saturates at the largest int32_t).
  scheduler::job_pod_view view;
  std::string namespace_name;
  std::string uid;
  /// The controlling job's uid (controlling_job), "" without one.
  std::string job_uid;
  /// Annotation volcano.sh/job-version as a number; nullopt when missing or not one.
  std::optional<int32_t> job_version;
  /// status.containerStatuses[0].state.terminated.exitCode, if any: what a PodFailed policy's
  /// exitCode is matched against (Volcano reads the first container only).
  std::optional<int32_t> exit_code;
};
/// Reads a pod as the apiserver shows it. A phase that is not one of Kubernetes' five (or none)
/// reads as Pending.
job_pod_facts read_job_pod(const boost::json::value& pod);

} // namespace phalanx::k8s
