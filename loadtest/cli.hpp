#pragma once

// The command line of phalanx-loadtest:
//
//   phalanx-loadtest push    [--server URL] --nodes M --podgroups N [workload flags] [--json F]
//   phalanx-loadtest inproc  --nodes M --podgroups N [workload flags] [--json F] [--html F]
//   phalanx-loadtest replay  --trace FILE (--cluster FILE | --cluster-from-vc FILE
//                            [--vc-scale X] | --nodes N) [--policies ...] [--json F] [--html F]
//   phalanx-loadtest restart --pods 150000 --podgroups 20000 --nodes 5000 [--json F]
//
// `phalanx-loadtest MODE --help` lists a mode's flags with their defaults.
//
// Exit codes (report.hpp's assess_report decides between 0, 1 and 3):
//   0        the run finished; missed targets are reported, not enforced;
//   1        the run failed: a set-up error, timed out, stalled, gangs not all scheduled,
//            submissions refused, an invariant violated or not checked;
//   2        bad usage (the message names the flag and the rule), or a push or inproc workload
//            that can never fit its cluster (workload.hpp's check_fit; the message names the
//            gang and the resource);
//   3        --fail-on-target, and the run finished but missed a target;
//   130, 143 interrupted by SIGINT or SIGTERM (128 + the signal), after stopping the child
//            phalanxd, removing the temporary directory and writing the partial report.

#include <string>
#include <vector>

namespace phalanx::loadtest {

/// Runs phalanx-loadtest with `argv` (argv[0] is the program name). Output goes to stdout,
/// errors to stderr.
int run_cli(const std::vector<std::string>& argv);

} // namespace phalanx::loadtest
