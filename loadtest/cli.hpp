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
// Exit codes: 0 the run finished (targets are reported, not enforced); 1 the run failed (set-up
// error, gangs not all scheduled, submissions refused, an invariant violated); 2 bad usage (the
// message names the flag and the rule).

#include <string>
#include <vector>

namespace phalanx::loadtest {

/// Runs phalanx-loadtest with `argv` (argv[0] is the program name). Output goes to stdout,
/// errors to stderr.
int run_cli(const std::vector<std::string>& argv);

} // namespace phalanx::loadtest
