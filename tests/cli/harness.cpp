#include "tests/cli/harness.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace phalanx::cli_test {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string ctl_binary() {
  return PHALANX_CTL_BINARY;
}

std::string source_dir() {
  return PHALANX_SOURCE_DIR;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

scratch_dir::scratch_dir() {
  std::string tmpl = (fs::temp_directory_path() / "phalanx-cli-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

scratch_dir::~scratch_dir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string scratch_dir::write(const std::string& name, const std::string& text) const {
  std::string p = path_ + "/" + name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string test_cluster_yaml() {
  return R"(nodes:
  - name: cpu-a
    count: 2
    cpu: "16"
    memory: 64Gi
    labels: {zone: a}
  - name: cpu-b
    count: 2
    cpu: "16"
    memory: 64Gi
    labels: {zone: b}
  - name: gpu
    count: 2
    cpu: "32"
    memory: 128Gi
    gpu: 4
    labels: {accelerator: nvidia-a100, zone: a}
)";
}

namespace {

using clock_type = std::chrono::steady_clock;

struct spawned {
  pid_t pid = -1;
  int in_fd = -1;
  int out_fd = -1;
  int err_fd = -1;
};

void set_nonblocking(int fd);
bool drain(int fd, std::string& into);

spawned spawn_ctl(const std::vector<std::string>& args, const ctl_options& options) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string s = *e;
    std::string key = s.substr(0, s.find('='));
    if (key == "PHALANX_SERVER" || key == "PHALANX_TOKEN" || options.env.count(key) != 0)
      continue;
    env_strings.push_back(s);
  }
  for (const auto& [k, v] : options.env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  const std::string program = options.program.empty() ? ctl_binary() : options.program;
  std::vector<std::string> argv_strings{program};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  spawned s;
  int rc = ::posix_spawn(&s.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0)
    throw std::runtime_error("cannot start " + program + ": " + std::strerror(rc));
  s.in_fd = in_pipe[1];
  s.out_fd = out_pipe[0];
  s.err_fd = err_pipe[0];
  set_nonblocking(s.out_fd);
  set_nonblocking(s.err_fd);
  return s;
}

int wait_status_code(int wstatus) {
  if (WIFEXITED(wstatus))
    return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus))
    return 128 + WTERMSIG(wstatus);
  return -1;
}

// Reads what `fd` (non-blocking) has into `into`; false at end of file.
bool drain(int fd, std::string& into) {
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return true;
    return false;
  }
}

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

} // namespace

ctl_result run_ctl(const std::vector<std::string>& args, const ctl_options& options) {
  auto s = spawn_ctl(args, options);
  // Standard input is small in every test: write it whole, then close it.
  std::size_t written = 0;
  while (written < options.input.size()) {
    ssize_t n = ::write(s.in_fd, options.input.data() + written, options.input.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    written += static_cast<std::size_t>(n);
  }
  ::close(s.in_fd);
  ctl_result r;
  auto deadline = clock_type::now() + options.timeout;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(s.pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{out_open ? s.out_fd : -1, POLLIN, 0}, {err_open ? s.err_fd : -1, POLLIN, 0}};
    int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno == EINTR)
      continue;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
      out_open = drain(s.out_fd, r.out);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
      err_open = drain(s.err_fd, r.err);
  }
  ::close(s.out_fd);
  ::close(s.err_fd);
  int wstatus = 0;
  while (::waitpid(s.pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = wait_status_code(wstatus);
  return r;
}

std::unique_ptr<ctl_process> ctl_process::start(const std::vector<std::string>& args,
                                                const ctl_options& options) {
  auto s = spawn_ctl(args, options);
  ::close(s.in_fd);
  std::unique_ptr<ctl_process> p(new ctl_process());
  p->pid_ = s.pid;
  p->out_fd_ = s.out_fd;
  p->err_fd_ = s.err_fd;
  return p;
}

ctl_process::~ctl_process() {
  stop();
}

bool ctl_process::pump(std::chrono::milliseconds wait) {
  if (out_fd_ < 0 && err_fd_ < 0)
    return false;
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  int n = ::poll(fds, 2, static_cast<int>(wait.count()));
  if (n <= 0)
    return true;
  if (out_fd_ >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
    if (!drain(out_fd_, partial_)) {
      ::close(out_fd_);
      out_fd_ = -1;
    }
    std::size_t nl;
    while ((nl = partial_.find('\n')) != std::string::npos) {
      lines_.push_back(partial_.substr(0, nl));
      partial_.erase(0, nl + 1);
    }
  }
  if (err_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
    if (!drain(err_fd_, err_)) {
      ::close(err_fd_);
      err_fd_ = -1;
    }
  }
  return out_fd_ >= 0 || err_fd_ >= 0;
}

std::optional<std::string> ctl_process::wait_for_line(
    const std::function<bool(const std::string&)>& pred, std::chrono::milliseconds deadline) {
  auto end = clock_type::now() + deadline;
  std::size_t checked = 0;
  while (true) {
    for (; checked < lines_.size(); ++checked)
      if (pred(lines_[checked]))
        return lines_[checked];
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_type::now());
    if (left.count() <= 0)
      return std::nullopt;
    if (!pump(std::min(left, std::chrono::milliseconds(200))) && checked == lines_.size())
      return std::nullopt;
  }
}

std::optional<std::string> ctl_process::wait_for(const std::vector<std::string>& parts,
                                                 std::chrono::milliseconds deadline) {
  return wait_for_line(
      [&](const std::string& l) {
        for (const auto& p : parts)
          if (l.find(p) == std::string::npos)
            return false;
        return true;
      },
      deadline);
}

bool ctl_process::wait_for_err(const std::string& part, std::chrono::milliseconds deadline) {
  auto end = clock_type::now() + deadline;
  while (err_.find(part) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_type::now());
    if (left.count() <= 0 || !pump(std::min(left, std::chrono::milliseconds(200))))
      return err_.find(part) != std::string::npos;
  }
  return true;
}

std::optional<int> ctl_process::wait_exit(std::chrono::milliseconds deadline) {
  if (exit_code_)
    return exit_code_;
  auto end = clock_type::now() + deadline;
  while (pump(std::chrono::milliseconds(100))) {
    if (clock_type::now() > end)
      return std::nullopt;
  }
  // Both pipes closed: the process is gone or about to be.
  while (clock_type::now() <= end) {
    int wstatus = 0;
    pid_t r = ::waitpid(pid_, &wstatus, WNOHANG);
    if (r == pid_) {
      exit_code_ = wait_status_code(wstatus);
      pid_ = -1;
      return exit_code_;
    }
    if (r < 0 && errno != EINTR)
      return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

void ctl_process::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    // Read what it printed up to its end, then reap it.
    auto end = clock_type::now() + std::chrono::seconds(10);
    while (pump(std::chrono::milliseconds(100)) && clock_type::now() < end) {
    }
    int wstatus = 0;
    bool reaped = false;
    auto grace = clock_type::now() + std::chrono::seconds(5);
    while (!reaped && clock_type::now() < grace) {
      reaped = ::waitpid(pid_, &wstatus, WNOHANG) == pid_;
      if (!reaped)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!reaped) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
      }
    }
    exit_code_ = wait_status_code(wstatus);
    pid_ = -1;
  }
  if (out_fd_ >= 0)
    ::close(out_fd_);
  if (err_fd_ >= 0)
    ::close(err_fd_);
  out_fd_ = err_fd_ = -1;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds deadline) {
  auto end = clock_type::now() + deadline;
  while (true) {
    if (condition())
      return true;
    if (clock_type::now() > end)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::unique_ptr<daemon> daemon::start(std::vector<std::string> extra_args,
                                      api::client_options client) {
  std::unique_ptr<daemon> d(new daemon());
  d->scratch_ = std::make_unique<scratch_dir>();
  loadtest::phalanxd_options o;
  o.data_dir = d->scratch_->path() + "/data";
  o.cluster_file = d->scratch_->write("cluster.yaml", test_cluster_yaml());
  o.extra_args = std::move(extra_args);
  o.extra_args.push_back("--seed");
  o.extra_args.push_back("1");
  o.client = std::move(client);
  if (const char* other = std::getenv("PHALANX_TEST_PHALANXD"); other != nullptr && *other != 0)
    o.binary = other;
  auto p = loadtest::phalanxd_process::start(o);
  if (!p)
    throw std::runtime_error("phalanxd did not start: " + p.error().message());
  d->process_ = std::move(*p);
  d->url_ = d->process_->url();
  return d;
}

daemon::~daemon() {
  if (process_)
    process_->stop(std::chrono::seconds(10)).error().permit_unchecked();
}

std::vector<std::string> daemon::args(std::vector<std::string> args) const {
  args.insert(args.begin(), {"--server", url_});
  return args;
}

ctl_result daemon::ctl(std::vector<std::string> a, const ctl_options& options) const {
  return run_ctl(args(std::move(a)), options);
}

json::value daemon::get_json(const std::string& path) const {
  api::http_client c(process_->client_options());
  api::client_request r;
  r.target = path;
  auto res = c.send(r);
  if (!res || res->status != 200)
    return nullptr;
  json::error_code ec;
  auto v = json::parse(res->body, ec);
  if (ec)
    return nullptr;
  return v;
}

std::string example(const std::string& name) {
  return source_dir() + "/examples/" + name;
}

::testing::AssertionResult succeeded(const ctl_result& r) {
  if (r.exit_code == 0 && !r.timed_out)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "phalanxctl exited with " << r.exit_code
                                       << (r.timed_out ? " (timed out)" : "") << "\nstdout:\n"
                                       << r.out << "stderr:\n" << r.err;
}

::testing::AssertionResult failed_with(const ctl_result& r, int code) {
  if (r.exit_code == code && !r.timed_out)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "phalanxctl exited with " << r.exit_code
                                       << ", expected " << code << "\nstdout:\n"
                                       << r.out << "stderr:\n" << r.err;
}

ctl_result kubectl_daemon_test::kubectl(std::vector<std::string> args) {
  ctl_options o;
  o.program = "/usr/bin/kubectl";
  o.env = {{"KUBECONFIG", kubeconfig_}, {"HOME", home_.path()}};
  o.timeout = std::chrono::seconds(90);
  std::vector<std::string> argv = {"--server", d_->url(), "--cache-dir", home_.path() + "/cache"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_ctl(argv, o);
}

std::string unplaceable_gang_yaml() {
  return R"(apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: huge-gang
spec:
  minMember: 2
---
apiVersion: v1
kind: Pod
metadata:
  name: huge-0
  annotations: {scheduling.k8s.io/group-name: huge-gang}
spec:
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "1000"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: huge-1
  annotations: {scheduling.k8s.io/group-name: huge-gang}
spec:
  containers:
  - name: c
    image: x
    resources: {requests: {cpu: "1000"}}
)";
}

void daemon_test::SetUp() {
  d_ = daemon::start();
}

json::value daemon_test::ctl_json(std::vector<std::string> args) const {
  args.push_back("-o");
  args.push_back("json");
  auto r = ctl(args);
  EXPECT_TRUE(succeeded(r));
  json::error_code ec;
  auto v = json::parse(r.out, ec);
  EXPECT_FALSE(ec) << "not JSON: " << r.out;
  if (ec)
    return nullptr;
  return v;
}

std::string field(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* cur = &v;
  for (auto k : path) {
    if (!cur->is_object())
      return {};
    cur = cur->get_object().if_contains(k);
    if (cur == nullptr)
      return {};
  }
  if (cur->is_string())
    return std::string(cur->get_string());
  if (cur->is_null())
    return {};
  return json::serialize(*cur);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    out.push_back(line);
  return out;
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string c;
  while (in >> c)
    out.push_back(c);
  return out;
}

std::optional<std::string> described(const std::string& text, const std::string& label) {
  for (const auto& l : split_lines(text)) {
    auto start = l.find_first_not_of(' ');
    if (start == std::string::npos || l.compare(start, label.size() + 1, label + ":") != 0)
      continue;
    auto value = l.find_first_not_of(' ', start + label.size() + 1);
    return value == std::string::npos ? std::string() : l.substr(value);
  }
  return std::nullopt;
}

bool has_row(const std::string& text, const std::vector<std::string>& prefix) {
  for (const auto& l : split_lines(text)) {
    auto c = cells(l);
    if (c.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), c.begin()))
      return true;
  }
  return false;
}

std::vector<std::string> row_of(const std::string& table, const std::string& name,
                                std::size_t name_column) {
  for (const auto& l : split_lines(table)) {
    auto c = cells(l);
    if (c.size() > name_column && c[name_column] == name)
      return c;
  }
  return {};
}

} // namespace phalanx::cli_test
