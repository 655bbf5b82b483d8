#include "loadtest/phalanxd_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace phalanx::loadtest {

namespace fs = std::filesystem;

std::string built_phalanxd_path() {
  return PHALANX_PHALANXD_PATH;
}

namespace {

std::optional<uint16_t> read_port(const std::string& path) {
  std::ifstream in(path);
  unsigned long port = 0;
  if (!(in >> port) || port == 0 || port > 65535)
    return std::nullopt;
  return static_cast<uint16_t>(port);
}

// waitpid without blocking; the exit code (128 + signal for a signal) once it exited.
std::optional<int> reap(pid_t pid, bool block) {
  int wstatus = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &wstatus, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid)
    return std::nullopt;
  if (WIFEXITED(wstatus))
    return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus))
    return 128 + WTERMSIG(wstatus);
  return -1;
}

} // namespace

result<pid_t> spawn_with_log(const std::vector<std::string>& args, const std::string& log_file,
                             const spawn_options& how) {
  if (args.empty())
    return status{errc::invalid_argument, "spawn_with_log: no program"};
  std::vector<std::string> copies = args;
  std::vector<char*> argv;
  for (auto& a : copies)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  if (!how.die_with_parent) {
    // posix_spawn: no copy of this process's page tables (vfork-like), which matters when the
    // start itself is timed from a parent holding a big store (restart).
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    if (how.own_process_group) {
      posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
      posix_spawnattr_setpgroup(&attributes, 0);
    }
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
      return status{errc::io_error, "cannot start " + args[0] + ": " + std::strerror(rc)};
    return pid;
  }
  // PR_SET_PDEATHSIG is set in the child, so this path forks. The log is opened before the fork,
  // so the child only calls async-signal-safe functions (this process has threads); a pipe
  // closed on exec carries exec's errno back.
  int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    return status{errc::io_error, "cannot start " + args[0] + ": cannot open its log " +
                                      log_file + ": " + std::strerror(errno)};
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int report[2] = {-1, -1};
  if (null_fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(log_fd);
    if (null_fd >= 0)
      ::close(null_fd);
    return status{errc::io_error, "cannot start " + args[0] + ": " + std::strerror(e)};
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (how.own_process_group)
      ::setpgid(0, 0);
    if (how.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) // The parent died before prctl took effect.
        ::_exit(127);
    }
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execve(argv[0], argv.data(), environ);
    int e = errno;
    [[maybe_unused]] auto n = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  int fork_errno = errno;
  ::close(log_fd);
  ::close(null_fd);
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return status{errc::io_error, "cannot start " + args[0] + ": " + std::strerror(fork_errno)};
  }
  if (how.own_process_group)
    ::setpgid(pid, pid); // Also here: whichever runs first, the group exists before we signal it.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    int ignored = 0;
    ::waitpid(pid, &ignored, 0);
    return status{errc::io_error, "cannot start " + args[0] + ": " + std::strerror(exec_errno)};
  }
  return pid;
}

int stop_process(pid_t pid, std::chrono::milliseconds grace) {
  ::kill(pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto code = reap(pid, false))
      return *code;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  return reap(pid, true).value_or(-1);
}

result<std::unique_ptr<phalanxd_process>> phalanxd_process::start(phalanxd_options options) {
  if (options.data_dir.empty())
    return status{errc::invalid_argument, "phalanxd_options.data_dir: required"};
  if (options.log_file.empty())
    options.log_file = options.data_dir + ".phalanxd.log";
  std::string port_file = options.data_dir + ".port";
  std::error_code ec;
  fs::remove(port_file, ec);

  std::vector<std::string> args{options.binary,  "--data-dir",  options.data_dir,
                                "--listen",      "127.0.0.1:0", "--port-file",
                                port_file};
  if (!options.cluster_file.empty()) {
    args.push_back("--cluster");
    args.push_back(options.cluster_file);
  }
  if (!options.config_file.empty()) {
    args.push_back("--config");
    args.push_back(options.config_file);
  }
  args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
  std::unique_ptr<phalanxd_process> p(new phalanxd_process());
  p->options_ = std::move(options);
  auto forked = std::chrono::steady_clock::now();
  auto pid = spawn_with_log(args, p->options_.log_file,
                            {.own_process_group = p->options_.own_process_group,
                             .die_with_parent = p->options_.die_with_parent});
  if (!pid)
    return pid.error();
  p->pid_ = *pid;

  auto deadline = forked + p->options_.ready_timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto code = reap(p->pid_, false)) {
      p->exit_code_ = code;
      p->pid_ = -1;
      return status{errc::unavailable, "phalanxd exited with code " + std::to_string(*code) +
                                           " before it was ready; its log ends with:\n" +
                                           p->log_tail()};
    }
    if (auto port = read_port(port_file)) {
      p->port_ = *port;
      auto probe_options = p->client_options();
      probe_options.timeout = std::chrono::seconds(5);
      api::http_client probe(probe_options);
      auto res = probe.send({"GET", "/readyz", "", "", "", {}});
      if (res.ok() && res->status == 200) {
        p->seconds_to_ready_ =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - forked).count();
        return p;
      }
    }
    // Every millisecond at first (restarts take a fraction of a second), then 1% of the time
    // waited so far, so that a long start (a first list of a big cluster) is not slowed by the
    // probes it is timed with.
    auto waited = std::chrono::steady_clock::now() - forked;
    std::this_thread::sleep_for(std::clamp<std::chrono::steady_clock::duration>(
        waited / 100, std::chrono::milliseconds(1), std::chrono::milliseconds(20)));
  }
  p->kill();
  return status{errc::unavailable, "phalanxd was not ready within " +
                                       std::to_string(p->options_.ready_timeout.count()) +
                                       " ms; its log ends with:\n" + p->log_tail()};
}

phalanxd_process::~phalanxd_process() {
  if (pid_ > 0)
    kill();
}

api::client_options phalanxd_process::client_options() const {
  auto o = options_.client;
  o.server.host = "127.0.0.1";
  o.server.port = port_;
  return o;
}

std::string phalanxd_process::url() const {
  return client_options().server.to_string();
}

result<int> phalanxd_process::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0)
    return exit_code_.value_or(-1);
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto code = reap(pid_, false)) {
      exit_code_ = code;
      pid_ = -1;
      return *code;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill();
  return status{errc::unavailable, "phalanxd did not stop within " +
                                       std::to_string(grace.count()) + " ms of SIGTERM; killed"};
}

void phalanxd_process::kill() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  exit_code_ = reap(pid_, true);
  pid_ = -1;
}

bool phalanxd_process::running() {
  if (pid_ <= 0)
    return false;
  if (auto code = reap(pid_, false)) {
    exit_code_ = code;
    pid_ = -1;
    return false;
  }
  return true;
}

std::string phalanxd_process::log_tail(std::size_t bytes) const {
  std::ifstream in(options_.log_file, std::ios::binary);
  if (!in)
    return "(no log at " + options_.log_file + ")";
  std::ostringstream s;
  s << in.rdbuf();
  auto text = s.str();
  return text.size() > bytes ? "..." + text.substr(text.size() - bytes) : text;
}

} // namespace phalanx::loadtest
