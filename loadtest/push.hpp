#pragma once

// `phalanx-loadtest push`: the workload end to end through the HTTP API. It starts a phalanxd
// (loadtest/phalanxd_process.hpp) on a fresh data directory, or targets one with --server,
// creates the simulated nodes and the queues, submits the gangs from `concurrency` client
// threads (one keep-alive connection each; bodies are encoded before the clock starts), follows
// the PodGroups with a watch, samples /metrics, and at the end checks the invariants I1-I4 from
// what the API lists (pods, PodGroups, nodes, queues).

#include "loadtest/scheduling_run.hpp"

#include <boost/json/object.hpp>

namespace phalanx::loadtest {

struct push_options {
  run_options run;
  /// Target this server instead of starting phalanxd ("http://127.0.0.1:8080"). Default: "".
  std::string server;
  /// Bearer token for --server. Default: "".
  std::string token;
  /// HTTP threads of the started phalanxd. Default: 2.
  int64_t http_threads = 2;
  /// The phalanxd binary to start. Default: the one this build made.
  std::string phalanxd_binary;
};

/// Builds the facts of DESIGN.md section 8 from API lists and checks I1-I4 at rest. The node
/// ledger is the registry's (status.allocated); a pod's node is its spec.nodeName.
actors::system_facts facts_from_api(const std::vector<api::object>& pods,
                                    const std::vector<api::object>& groups,
                                    const std::vector<api::object>& nodes,
                                    const std::vector<api::object>& queues);

/// Runs the push mode and returns its report. Errors: set-up failures (the daemon does not
/// start, nodes cannot be created, the server does not answer).
result<boost::json::object> run_push(const push_options& options);

} // namespace phalanx::loadtest
