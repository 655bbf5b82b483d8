#pragma once

// `phalanx-loadtest k8s-restart`: Kubernetes mode's restart on a real kube-apiserver (DESIGN.md
// section 9: <= 2 s to the first new bind after a short outage, at 1,000+ nodes and 20,000+
// pods; Volcano took 8 min 17 s at 5,000 / 140,000). It starts the test control plane
// (k8s/testing), creates the nodes and the pods (bound already, in PodGroups: a running cluster),
// starts phalanxd in Kubernetes mode and times its first start to ready; then, twice, kills it,
// creates a new gang while it is down and restarts it, timing from the start of the process to
// the first of the new gang's pods bound on the apiserver:
//   - short outage: the checkpoint's watches resume (no list);
//   - long outage: the apiserver restarted meanwhile, so its watch caches no longer hold the
//     checkpoint's resourceVersions: 410, and every collection is listed again.
// Leader election is off for the figures (a killed leader's successor waits out its lease by
// design; that wait is the lease's, reported by the failover tests).

#include "scheduler/result.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace phalanx::loadtest {

struct kube_restart_options {
  /// Nodes and pods of the cluster. Default: 1,000 and 20,000.
  int64_t nodes = 1000;
  int64_t pods = 20000;
  /// Pods per PodGroup. Default: 10.
  int64_t gang_size = 10;
  /// The phalanxd binary. Default: the one this build made.
  std::string phalanxd_binary;
  /// Where phalanxd's three logs (first.log, short.log, long.log) are kept. Default: a temporary
  /// directory, removed when every target is met.
  std::string log_dir;
  std::string json_path;
  std::string html_path;
  std::string command;
  std::vector<std::pair<std::string, std::string>> flags_given;
};

result<boost::json::object> run_kube_restart(const kube_restart_options& options);

} // namespace phalanx::loadtest
