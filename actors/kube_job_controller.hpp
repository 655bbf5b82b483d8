#pragma once

// Volcano's job controller in Kubernetes mode (`phalanxd --mode kubernetes --controllers job`;
// issue 29). Off by default: on a cluster with Volcano, vc-controller-manager runs it, and two
// controllers of one Job would fight over its pods and status.
//
// It watches batch.volcano.sh/v1alpha1 Jobs, the pods they control (label volcano.sh/job-name),
// PodGroups and bus.volcano.sh/v1alpha1 Commands, and acts on them as Volcano's controller does,
// through the same pure code the standalone world's controller drives (actors/registry_jobs.cpp):
// scheduler::expand_job and make_job_pods make the PodGroup and the pods,
// scheduler::resolve_action and next_state decide every step, scheduler::plan_job_sync says which
// pods a sync makes and deletes. On the apiserver it
// - creates each job's PodGroup "<job>-<job uid>" and its pods "<job>-<task>-<index>"
//   (k8s/job_objects.hpp: Volcano's labels and annotations, the job as controller owner). Unlike
//   Volcano's controller it does not wait for the PodGroup to be Inqueue (Phalanx admits a
//   PodGroup with or without its pods, docs/NOTES.md): the enqueue gate holds the pods unbound
//   until the gang is admitted. A sync brings the PodGroup's minMember, minTaskMember,
//   minResources and priorityClassName in step with the job's spec (a scaled job), as Volcano's
//   createOrUpdatePodGroup does;
// - makes the objects of the job's plugins (scheduler/job_plugins.hpp: svc's headless Service,
//   NetworkPolicy and ConfigMap "<job>-svc" of host lists, ssh's Secret "<job>-ssh" of a key
//   pair, ray's Service "<job>-head-svc") when it first acts on the job, before its PodGroup and
//   pods (Volcano's OnJobAdd), each only when missing: a restarted process keeps the Secret
//   whose keys running pods hold; after a change of the job's spec (a scale) it brings the
//   ConfigMap's host lists in step (Volcano's svc OnJobUpdate; the ssh config is not updated,
//   as in Volcano). Each pod gets what the plugins add to it (k8s::job_pod_manifest). A step
//   whose plugin objects fail is tried again, with a Warning PluginError Event, and makes no pod
//   meanwhile;
// - sees to the claims of the job's volumes after the plugins' objects, before its PodGroup and
//   pods (Volcano's createJobIOIfNotExist): a volume that describes its claim (volumeClaim) gets
//   it made, owned by the job, under a name generated from the job's uid and the volume's index
//   (scheduler/job_volumes.hpp), which is then written into the Job's spec (volumeClaimName); a
//   volume that names a claim waits for it (a Warning PVCError Event, no pod meanwhile, the step
//   tried again). Each pod mounts every claim (k8s::job_pod_manifest);
// - writes the job's status subresource (a JSON patch that sets /status whole): phase with its
//   history in conditions, counts, minAvailable, retryCount, version, and controlledResources
//   ("plugin-env": "env"..., "volume-pvc-<claim>": "<claim>") once the plugins' objects and the
//   claims exist;
// - raises Volcano's events from its pods' changes (PodPending, PodRunning, PodFailed with the
//   first container's exit code, PodEvicted, TaskCompleted, OutOfSync) and its PodGroup's
//   (Unknown), and executes the action the job's policies name: a kill marks each pod
//   volcano.sh/controller-out-of-sync, then deletes it with its uid as precondition (and, for
//   the whole job, the PodGroup); a sync makes the missing pods and deletes surplus and marked
//   ones. A policy's timeout delays its action;
// - runs each Command aimed at a Job (vcctl's job suspend, AbortJob, and resume, ResumeJob)
//   once: deletes it, then executes its action as the job's CommandIssued event;
// - deletes a finished job (Completed, Failed, Terminated) ttlSecondsAfterFinished after the
//   last transition its status holds (Volcano's garbage collector), so the deadline survives a
//   restart;
// - writes core/v1 Events on the Job in Volcano's words (ExecuteAction, CommandIssued,
//   FailedCreate, FailedDelete, PodGroupError, PluginError, PVCError); the same Event again
//   bumps the count and lastTimestamp of the one written before (one line per reason and
//   message, not a flood);
// - deletes the pods and PodGroup of a Job that was deleted (and, once everything is listed,
//   those whose Job is gone), and its plugin objects and claims (those the job controls, read by
//   name: a Job deleted while no controller acted leaves them, which nothing here watches), as
//   the garbage collector would: a cluster without kube-controller-manager has none. Unlike
//   Volcano, a kill (a restart, an abort, the job's end) keeps the plugin objects.
// The state lives on the apiserver: a restarted process lists Jobs, pods and PodGroups again and
// syncs every job, making only the pods no pod of that name is left of.
//
// The actor is detached (a thread of its own): its steps are blocking requests to the apiserver,
// one job step at a time, which is the order Volcano's controller keeps per job. It acts only
// once Jobs, pods and PodGroups were listed (Commands are not waited for: without their CRD,
// only Commands go unrun) and while this process may bind (the Lease): a new leader syncs every
// job. The status it writes is its own record: a job's status from the apiserver is read only
// when the controller first sees the job (a start, a relist), so a watch event of an older write
// never takes it back.
//
// Thread model: the reflectors run on threads of their own and send to the actor; start() and
// stop() are called by the runtime from one thread.

#include "actors/runtime_config.hpp"

#include "scheduler/result.hpp"

#include <caf/fwd.hpp>

#include <functional>
#include <memory>

namespace phalanx::actors {

class kube_job_controller {
 public:
  /// Checks the connection settings (a client of its own, so its writes do not queue behind
  /// Bindings). Errors: invalid_argument from k8s::client::create.
  static result<std::unique_ptr<kube_job_controller>> create(const kubernetes_config& config);

  /// Stops (stop()).
  ~kube_job_controller();
  kube_job_controller(const kube_job_controller&) = delete;
  kube_job_controller& operator=(const kube_job_controller&) = delete;

  /// Spawns the actor in `sys` and starts the watches. `may_act` says whether this process
  /// leads now (thread-safe; called from the actor). Returns the actor (to watch it).
  caf::actor start(caf::actor_system& sys, std::function<bool()> may_act);

  /// Stops the watches and the actor (it ends after the step under way). Idempotent.
  void stop();

  struct impl;

 private:
  explicit kube_job_controller(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace phalanx::actors
