#pragma once

// phalanxctl: the command-line client of phalanxd's HTTP API (the Kubernetes and Volcano paths
// of api/handler.cpp), over api/client.hpp. main.cpp only hands over argv, the environment and
// the standard streams; everything else is here so that tests can run it too.

#include "api/ctl/command_line.hpp"

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api::ctl {

/// What phalanxctl exits with. Scripts can tell a refused request from a broken command line
/// from an unreachable server.
enum class exit_code : int {
  ok = 0,
  /// The server answered with an error Status (its message, which names the field and rule, is
  /// printed), or some documents of apply or objects of delete failed.
  server_error = 1,
  /// The command line or an input file is wrong: unknown flag or kind, unreadable or malformed
  /// manifest. Nothing was sent.
  usage = 2,
  /// The server could not be reached: connection refused, TLS failure, timeout, a broken watch.
  unreachable = 3,
};
std::string_view to_string(exit_code c) noexcept;  // "ok", "server_error", "usage", "unreachable"
inline constexpr exit_code exit_code_last = exit_code::unreachable;

/// The client's version, as `phalanxctl version` prints it ("0.1.0").
std::string_view client_version() noexcept;

/// The process around a run: streams, environment and clock.
struct environment {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  getenv_fn getenv;
  /// The wall clock, for AGE columns. Default: the system clock.
  std::function<scheduler::timestamp()> now;
};

/// Runs phalanxctl with `args` (argv without the program name) and returns the exit code.
/// Writes results to env.out (flushed after every watch event) and messages to env.err.
exit_code run(const std::vector<std::string>& args, const environment& env);

} // namespace phalanx::api::ctl
