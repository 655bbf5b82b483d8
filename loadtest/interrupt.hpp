#pragma once

// Ctrl-C and SIGTERM during a run (every mode that runs something). While an interrupt_guard
// lives, the first SIGINT or SIGTERM sets a flag and says on stderr that the run is stopping: the
// run polls the flag in its waits, stops its child processes, removes its temporary directory,
// and writes a partial report marked "interrupted" (push, inproc, restart, k8s) or ends with
// "interrupted by SIGTERM while ..." (big-delete, k8s-restart); the exit code is 128 + the
// signal's number. The handler is installed with
// SA_RESETHAND, so a second signal takes the default action and ends the process at once (a
// phalanxd child started with die_with_parent then dies with it).
//
// One guard at a time; the flag is process-wide. The handler only stores into a lock-free atomic
// (async-signal-safe).

#include "scheduler/result.hpp"

#include <chrono>
#include <csignal>
#include <string_view>

namespace phalanx::loadtest {

class interrupt_guard {
 public:
  /// Installs the handlers for SIGINT and SIGTERM and clears the flag.
  interrupt_guard();
  /// Restores the previous handlers and clears the flag.
  ~interrupt_guard();
  interrupt_guard(const interrupt_guard&) = delete;
  interrupt_guard& operator=(const interrupt_guard&) = delete;
};

/// The signal that interrupted the run (SIGINT or SIGTERM), 0 when none did.
int interrupt_signal() noexcept;

/// "SIGINT", "SIGTERM", or "a signal".
const char* signal_name(int sig) noexcept;

/// Sleeps `pause`, or less when a signal interrupts the run: false then.
bool sleep_unless_interrupted(std::chrono::milliseconds pause);

/// What a run that stops for the signal returns: "interrupted by SIGTERM while <doing>".
status interrupted_while(std::string_view doing);

/// For tests: sets the flag as the handler would.
void simulate_interrupt(int sig) noexcept;

} // namespace phalanx::loadtest
