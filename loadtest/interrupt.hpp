#pragma once

// Ctrl-C and SIGTERM during a run (push, inproc, restart). While an interrupt_guard lives, the
// first SIGINT or SIGTERM sets a flag and says on stderr that the run is stopping: the run polls
// the flag, stops its child processes, removes its temporary directory and writes a partial
// report marked "interrupted". The handler is installed with
// SA_RESETHAND, so a second signal takes the default action and ends the process at once (a
// phalanxd child started with die_with_parent then dies with it).
//
// One guard at a time; the flag is process-wide. The handler only stores into a lock-free atomic
// (async-signal-safe).

#include <csignal>

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

/// For tests: sets the flag as the handler would.
void simulate_interrupt(int sig) noexcept;

} // namespace phalanx::loadtest
