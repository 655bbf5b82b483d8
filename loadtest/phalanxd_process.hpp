#pragma once

// A real phalanxd child process: started on a free loopback port with its own data directory,
// waited on until /readyz answers 200, stopped with SIGTERM or killed with SIGKILL. The load
// tester (push, restart) and the end-to-end and crash tests drive the daemon through it.

#include "api/client.hpp"
#include "scheduler/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::loadtest {

/// The phalanxd binary this build made (an absolute path).
std::string built_phalanxd_path();

/// How a child is tied to this process.
struct spawn_options {
  /// The child leads a process group of its own, so a Ctrl-C at the terminal (sent to the
  /// foreground group) reaches only this process, which then stops the child itself. Default:
  /// false (the child shares this process's group).
  bool own_process_group = false;
  /// The kernel sends the child SIGKILL when the thread that started it ends (prctl
  /// PR_SET_PDEATHSIG): a parent killed with SIGKILL leaves no daemon behind. Only for children
  /// started from a thread that outlives them (the main thread). Default: false.
  bool die_with_parent = false;
};

/// Starts `args` (args[0] a path to the program) with stdin from /dev/null and stdout and stderr
/// appended to `log_file`; the child's pid. The error names the program.
result<pid_t> spawn_with_log(const std::vector<std::string>& args, const std::string& log_file,
                             const spawn_options& how = {});

/// SIGTERM to `pid`, then waits up to `grace` for it to exit, SIGKILL after that; reaps it and
/// returns its exit code (128 + the signal when a signal ended it).
int stop_process(pid_t pid, std::chrono::milliseconds grace);

struct phalanxd_options {
  /// The binary. Default: the one this build made.
  std::string binary = built_phalanxd_path();
  /// --data-dir; required.
  std::string data_dir;
  /// --cluster FILE; empty: none (an empty cluster, or what the store holds).
  std::string cluster_file;
  /// --config FILE; empty: none.
  std::string config_file;
  /// Further arguments (--token-file, --tls-cert, --seed, --quarantine-corrupt, ...).
  std::vector<std::string> extra_args;
  /// Where the daemon's stderr goes (appended). Empty: a file "phalanxd.log" beside data_dir.
  std::string log_file;
  /// How long start() waits for /readyz. Default: 60 s.
  std::chrono::milliseconds ready_timeout{60000};
  /// Client settings for the readiness probe (token, TLS); the server address is filled in.
  api::client_options client;
  /// See spawn_options. Default: false.
  bool own_process_group = false;
  bool die_with_parent = false;
};

class phalanxd_process {
 public:
  /// Starts the daemon listening on 127.0.0.1 on a port it picks, and returns once /readyz
  /// answered 200. An error when the process exits first (the message quotes the end of its log)
  /// or ready_timeout passes (the process is killed).
  static result<std::unique_ptr<phalanxd_process>> start(phalanxd_options options);

  /// Kills the process (SIGKILL) if it still runs.
  ~phalanxd_process();
  phalanxd_process(const phalanxd_process&) = delete;
  phalanxd_process& operator=(const phalanxd_process&) = delete;

  pid_t pid() const { return pid_; }
  uint16_t port() const { return port_; }
  /// Client options that reach this daemon (address, token, TLS settings of the options).
  api::client_options client_options() const;
  /// "http://127.0.0.1:PORT" (https with TLS).
  std::string url() const;
  /// Seconds from fork to the first 200 from /readyz.
  double seconds_to_ready() const { return seconds_to_ready_; }
  const std::string& log_file() const { return options_.log_file; }

  /// SIGTERM, then waits up to `grace` for a clean exit; SIGKILL after that. Returns the exit
  /// code (0 for a clean stop), or an error when it had to be killed.
  result<int> stop(std::chrono::milliseconds grace = std::chrono::seconds(30));

  /// SIGKILL now and reap it: a crash as the daemon sees it.
  void kill();

  /// True while the process has not exited.
  bool running();

  /// The last `bytes` of its log, for error messages.
  std::string log_tail(std::size_t bytes = 4000) const;

 private:
  phalanxd_process() = default;
  phalanxd_options options_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  double seconds_to_ready_ = 0;
  std::optional<int> exit_code_;
};

} // namespace phalanx::loadtest
