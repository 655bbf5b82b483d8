#pragma once

// What the phalanxctl tests share: a real phalanxd (through loadtest/phalanxd_process) on a
// simulated cluster big enough for the example manifests, phalanxctl run as a child process
// (to completion, or kept running for --watch), and polling with a deadline.

#include "api/client.hpp"
#include "loadtest/phalanxd_process.hpp"

#include <boost/json/value.hpp>
#include <gtest/gtest.h>

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::cli_test {

/// The phalanxctl binary this build made.
std::string ctl_binary();
/// The repository root (for examples/).
std::string source_dir();
/// The text of a file; empty when it cannot be read.
std::string read_text(const std::string& path);

/// A temporary directory, removed with everything in it when destroyed.
class scratch_dir {
 public:
  scratch_dir();
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::string& path() const { return path_; }
  /// Writes `text` to path()/name and returns the full path.
  std::string write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

/// The simulated cluster of the tests: 4 CPU nodes (16 cores, 64Gi) labelled zone=a|b, and 2
/// untainted GPU nodes (32 cores, 128Gi, 4 nvidia.com/gpu) labelled accelerator=nvidia-a100 -
/// room for every example manifest at once, with the GPUs the TensorFlow workers and the resnet
/// gang ask for.
std::string test_cluster_yaml();

struct ctl_result {
  int exit_code = -1;  // 128 + signal when killed.
  std::string out;
  std::string err;
  bool timed_out = false;
};

struct ctl_options {
  /// Environment variables to set (others are inherited, except PHALANX_SERVER and
  /// PHALANX_TOKEN, which are removed unless set here, so the tests do not depend on the shell).
  std::map<std::string, std::string> env;
  /// Written to the child's standard input, which is then closed.
  std::string input;
  /// Killed after this. Default: 60 s.
  std::chrono::milliseconds timeout{60000};
  /// The program to run instead of phalanxctl (the real kubectl, say). Default: phalanxctl.
  std::string program;
};

/// Options that feed `text` to standard input.
inline ctl_options with_input(std::string text) {
  ctl_options o;
  o.input = std::move(text);
  return o;
}

/// Runs phalanxctl with `args` to completion.
ctl_result run_ctl(const std::vector<std::string>& args, const ctl_options& options = {});

/// A phalanxctl that keeps running (get -w), read line by line as it prints.
class ctl_process {
 public:
  static std::unique_ptr<ctl_process> start(const std::vector<std::string>& args,
                                            const ctl_options& options = {});
  ~ctl_process();
  ctl_process(const ctl_process&) = delete;
  ctl_process& operator=(const ctl_process&) = delete;

  /// Waits until some line of standard output satisfies `pred` (lines already read count);
  /// returns it, or nullopt when the deadline passed or the process ended first.
  std::optional<std::string> wait_for_line(const std::function<bool(const std::string&)>& pred,
                                           std::chrono::milliseconds deadline);
  /// wait_for_line for a line containing every one of `parts`.
  std::optional<std::string> wait_for(const std::vector<std::string>& parts,
                                      std::chrono::milliseconds deadline =
                                          std::chrono::seconds(30));
  /// Waits until standard error contains `part`; false after the deadline or the process ended.
  bool wait_for_err(const std::string& part,
                    std::chrono::milliseconds deadline = std::chrono::seconds(30));
  /// Waits for the process to exit by itself; its exit code, or nullopt after the deadline.
  std::optional<int> wait_exit(std::chrono::milliseconds deadline);
  /// SIGTERM, then reaps it.
  void stop();
  /// Every line read so far, and standard error.
  const std::vector<std::string>& lines() const { return lines_; }
  std::string err() const { return err_; }

 private:
  ctl_process() = default;
  // Reads what is available within `wait`; false once both pipes are closed.
  bool pump(std::chrono::milliseconds wait);
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string partial_;
  std::vector<std::string> lines_;
  std::string err_;
  std::optional<int> exit_code_;
};

/// Polls `condition` until it holds or `deadline` passes; true when it held.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds deadline = std::chrono::seconds(30));

/// A phalanxd on the test cluster, and shortcuts to reach it.
class daemon {
 public:
  /// Starts one; `extra_args` go to phalanxd (--token-file, --tls-cert...), `client` is used for
  /// its readiness probe (token, TLS). The binary is this build's phalanxd, or
  /// $PHALANX_TEST_PHALANXD when set (to run the tests against another build).
  static std::unique_ptr<daemon> start(std::vector<std::string> extra_args = {},
                                       api::client_options client = {});
  ~daemon();

  const std::string& url() const { return url_; }
  loadtest::phalanxd_process& process() { return *process_; }
  /// --server URL, then `args`.
  std::vector<std::string> args(std::vector<std::string> args) const;
  /// phalanxctl --server URL args...
  ctl_result ctl(std::vector<std::string> args, const ctl_options& options = {}) const;
  /// GET of a path with an http_client; the body parsed as JSON (null when not JSON or not 200).
  boost::json::value get_json(const std::string& path) const;
  api::client_options client_options() const { return process_->client_options(); }
  const std::string& dir() const { return scratch_->path(); }

 private:
  daemon() = default;
  std::unique_ptr<scratch_dir> scratch_;
  std::unique_ptr<loadtest::phalanxd_process> process_;
  std::string url_;
};

/// The path of an example manifest: examples/NAME.
std::string example(const std::string& name);

/// Success of a phalanxctl run, with its output in the failure message.
::testing::AssertionResult succeeded(const ctl_result& r);
/// A run that failed with `code`, with its output in the failure message.
::testing::AssertionResult failed_with(const ctl_result& r, int code);

/// A test with its own phalanxd (so tests never see each other's objects, whether ctest runs them
/// one process each or the binary runs them all).
class daemon_test : public ::testing::Test {
 protected:
  void SetUp() override;
  ctl_result ctl(std::vector<std::string> args, const ctl_options& options = {}) const {
    return d_->ctl(std::move(args), options);
  }
  /// phalanxctl ... -o json, parsed; null (and a test failure) when it fails.
  boost::json::value ctl_json(std::vector<std::string> args) const;
  /// GET of an object's API path through http_client, parsed.
  boost::json::value object(const std::string& path) const { return d_->get_json(path); }
  std::unique_ptr<daemon> d_;
};

/// A daemon_test with the real kubectl (1.32, /usr/bin/kubectl) pointed at its phalanxd, from a
/// home and a kubeconfig of its own.
class kubectl_daemon_test : public daemon_test {
 protected:
  ctl_result kubectl(std::vector<std::string> args);
  scratch_dir home_;
  std::string kubeconfig_ = home_.write("kubeconfig", "");
};

/// A PodGroup of two pods, "huge-gang" with "huge-0" and "huge-1", that no node can hold (1000
/// cpu each): the events of an unplaceable gang (its Warning, its pods' FailedScheduling).
std::string unplaceable_gang_yaml();

/// The object at `path` of a JSON value as text ("" when missing).
std::string field(const boost::json::value& v, std::initializer_list<std::string_view> path);

/// The lines of a text.
std::vector<std::string> split_lines(const std::string& text);
/// The whitespace-separated cells of a table line.
std::vector<std::string> cells(const std::string& line);
/// The value of the first "Label:  value" line of describe's output (indented or not), with the
/// padding removed; nullopt when there is no such line.
std::optional<std::string> described(const std::string& text, const std::string& label);
/// True when some line's cells start with `prefix` (an event row: {"Normal", "Scheduled"}).
bool has_row(const std::string& text, const std::vector<std::string>& prefix);
/// The table row (cells) whose NAME column (`name_column`) is `name`; empty when none.
std::vector<std::string> row_of(const std::string& table, const std::string& name,
                                std::size_t name_column = 0);

} // namespace phalanx::cli_test
