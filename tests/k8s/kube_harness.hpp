#pragma once

// Kubernetes mode against a real control plane (k8s/testing/control_plane.hpp: etcd and
// kube-apiserver 1.37 built from Go modules, one per test process): the shipped CRDs and RBAC
// applied as a platform team would, phalanxd started as a process with the token of the shipped
// ServiceAccount (so the apiserver's RBAC decides what it may do), nodes without kubelets, and
// the invariants checked from the apiserver's own objects.

#include "k8s/client.hpp"
#include "k8s/testing/control_plane.hpp"
#include "loadtest/phalanxd_process.hpp"

#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace phalanx::kube_tests {

/// A pod as the apiserver shows it.
struct seen_pod {
  std::string uid;
  std::string node;    // spec.nodeName
  std::string group;   // annotation scheduling.k8s.io/group-name
  std::string phase;
  std::string scheduler;
  bool terminating = false;    // metadata.deletionTimestamp is set (no kubelet finishes it).
  std::string nominated_node;  // status.nominatedNodeName
  /// The reason of its DisruptionTarget=True condition, if any.
  std::string disruption_reason;
};

struct seen_group {
  std::string phase;
  int32_t min_member = 0;
  std::string message;  // Of its Unschedulable or Scheduled condition.
};

/// The whole test cluster, seen through the admin's client.
class kube_harness {
 public:
  /// Starts (or finds) the control plane; applies k8s/deploy's CRDs, RBAC and default Queue
  /// (all of k8s/deploy but the Deployment, which nothing here would run); makes the test
  /// namespace `ns`.
  explicit kube_harness(std::string ns = "t");
  ~kube_harness();

  k8s::testing::control_plane& cp() { return cp_; }
  k8s::client& admin() { return cp_.admin(); }
  const std::string& ns() const { return ns_; }

  /// Applies every document of a manifest file of the repository (k8s/deploy/...): creates it, or
  /// replaces it when it exists. Throws on failure.
  void apply_file(const std::string& repo_path);
  /// The same for one object (JSON).
  void apply(const boost::json::value& object);

  /// A node with a kubernetes.io/hostname label (as a kubelet sets it) and `labels`.
  void node(const std::string& name, const std::string& cpu, const std::string& memory = "16Gi",
            const std::map<std::string, std::string>& labels = {});
  void queue(const std::string& name, int weight = 1);
  /// A PodGroup; `min_task_member` by role, `min_cpu` its minResources cpu ("" none).
  void podgroup(const std::string& name, int min_member,
                const std::map<std::string, int>& min_task_member = {},
                const std::string& min_cpu = "", const std::string& queue = "default");
  /// A pod of group `group` ("" none), requesting `cpu`, with schedulerName `scheduler`, and the
  /// role `role` (annotation volcano.sh/task-spec) when given.
  void pod(const std::string& name, const std::string& group, const std::string& cpu,
           const std::string& scheduler = "volcano", const std::string& role = "");
  /// Deletes a pod (immediately: no kubelet waits for it).
  void delete_pod(const std::string& name);
  /// Binds a pod as another scheduler would.
  void bind(const std::string& pod, const std::string& node);

  std::map<std::string, seen_pod> pods();
  std::map<std::string, seen_group> groups();

  /// I1 (a pod bound once stays on its node: against what was seen before), I2 (per node, the
  /// bound pods' requests within allocatable) and I3 (every gang with a PodGroup has 0 or at
  /// least minMember pods bound) on the apiserver's objects. Violations, empty when all hold.
  std::vector<std::string> check_invariants();

  /// Waits up to `limit` for `done`, polling. True when it held.
  bool wait_for(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(30));

  /// A kubeconfig with the token of ServiceAccount phalanx-system/`account` (default: the
  /// shipped phalanx-scheduler), written into the scratch directory.
  std::string kubeconfig_for(const std::string& account = "phalanx-scheduler");

  /// Starts a phalanxd in Kubernetes mode with its own data directory (a name inside the scratch
  /// directory: `on_data`, else `data`; a restart passes the same) and `extra` flags, logging to
  /// `<data>.log`. Waits for /readyz.
  std::unique_ptr<loadtest::phalanxd_process> start_phalanxd(
      const std::string& data, const std::vector<std::string>& extra = {},
      const std::string& kubeconfig = "", const std::string& on_data = "");

  const std::string& scratch() const { return scratch_; }

 private:
  k8s::testing::control_plane& cp_;
  std::string ns_;
  std::string scratch_;
  std::map<std::string, std::string> bound_before_;  // Pod uid -> node, as first seen.
};

/// The kubelet of the test's nodes, on a thread of its own while it lives, over the admin's
/// client: every 100 ms it reads the pods of the harness's namespace and
/// - a pod bound to a node and Pending goes Running (its first container running);
/// - a Running pod annotated sim.phalanx.io/duration (a duration: "0s", "2s") goes Succeeded
///   that long after it went Running (its first container terminated with exit code 0), one
///   annotated sim.phalanx.io/fail-after Failed (exit code sim.phalanx.io/exit-code, default 1);
///   without either it runs until deleted;
/// - a Running pod annotated sim.phalanx.io/restart-every (a duration) has its container
///   restarted that often until it ends (the first after it went Running): it stays Running and
///   its first container's restartCount grows by one, as the apiserver shows it; with
///   sim.phalanx.io/restarts: N it stops once that count is N (standalone's simulated kubelet
///   reads the same annotations, actors/sim_cluster.hpp);
/// - a terminating pod (metadata.deletionTimestamp) has stopped: it is removed (gracePeriodSeconds
///   0), as a kubelet's final delete.
/// Times are the kubelet's own (when it saw the pod Running); tests wait for what follows, they
/// never assert a time.
class test_kubelet {
 public:
  explicit test_kubelet(kube_harness& h);
  ~test_kubelet();
  test_kubelet(const test_kubelet&) = delete;
  test_kubelet& operator=(const test_kubelet&) = delete;

 private:
  void step();
  // Whether running pod `pod` (uid `uid`, Running since `running_since`, its container restarted
  // `restarts` times so far) restarts its container now (sim.phalanx.io/restart-every).
  bool restart_due(const boost::json::value& pod, const std::string& uid,
                   std::chrono::steady_clock::time_point running_since, int64_t restarts);

  kube_harness& h_;
  std::atomic<bool> stopping_{false};
  std::map<std::string, std::chrono::steady_clock::time_point> started_;  // Pod uid -> Running.
  // Pod uid -> its container's last restart by this kubelet.
  std::map<std::string, std::chrono::steady_clock::time_point> restarted_;
  std::thread thread_;
};

} // namespace phalanx::kube_tests
