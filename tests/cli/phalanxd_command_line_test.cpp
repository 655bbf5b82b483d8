// phalanxd's command line, through the real binary: every refusal is exit code 2 with a message
// that names the flag and the rule, followed by the usage; --help and --version exit 0. Nothing
// here starts a daemon: each command line is refused (or answered) before the store is opened.

#include "tests/cli/harness.hpp"

#include "loadtest/phalanxd_process.hpp"

#include <gtest/gtest.h>

namespace phalanx::cli_test {
namespace {

ctl_result run_phalanxd(const std::vector<std::string>& args) {
  ctl_options o;
  o.program = loadtest::built_phalanxd_path();
  o.timeout = std::chrono::seconds(20);
  return run_ctl(args, o);
}

constexpr std::string_view usage_first_line = "usage: phalanxd --data-dir DIR [options]\n";

TEST(PhalanxdCommandLine, RefusalsNameTheFlagAndTheRuleThenShowTheUsage) {
  struct row {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<row> rows = {
      {{"--bogus"}, "unknown option --bogus"},
      {{"--bogus=1", "--data-dir", "d"}, "unknown option --bogus=1"},
      {{"-x"}, "unknown option -x"},
      {{"--data-dir", "d", "stray"}, "unknown option stray"},
      {{"--mode"}, "--mode needs a value"},
      {{"--data-dir", "d", "--mode", "cloud"}, "--mode cloud: must be standalone or kubernetes"},
      {{"--data-dir", "d", "--mode="}, "--mode : must be standalone or kubernetes"},
      {{"--http-threads", "x"}, "--http-threads: \"x\" is not a number"},
      {{"--http-threads=0"}, "--http-threads: must be between 1 and 64"},
      {{"--probe-port", "70000"},
       "--probe-port: \"70000\" is not a port number from 0 to 65535"},
      {{"--leader-elect=maybe"}, "--leader-elect: \"maybe\" is not true or false"},
      // A boolean takes its value after "=" only: the next argument is not it.
      {{"--leader-elect", "false"}, "unknown option false"},
      {{"--scheduler-name", ","}, "--scheduler-name: name at least one schedulerName"},
      {{"--controllers", "job,cron"}, "--controllers: unknown controller \"cron\" (known: job)"},
      {{"--kube-api-qps", "0"}, "--kube-api-qps: must be positive"},
      {{"--kube-api-burst=x"}, "--kube-api-burst: \"x\" is not a number"},
      {{"--kube-binding-workers", "300"}, "--kube-binding-workers: must be between 1 and 256"},
      {{"--max-requeue-num", "15x"}, "--max-requeue-num: \"15x\" is not a whole number"},
      {{"--max-requeue-num=-2"}, "--max-requeue-num: must be -1 (without end) or more"},
      {{"--leader-elect-renew-deadline", "soon"},
       "--leader-elect-renew-deadline: \"soon\" is not a duration such as 15s or 500ms"},
      {{"--seed", "x"}, "--seed: \"x\" is not a number"},
      {{}, "--data-dir is required"},
      {{"--data-dir=d", "--tls-key=k"}, "--tls-cert and --tls-key go together"},
      {{"--data-dir", "d", "--kubeconfig", "k"}, "--kubeconfig: only with --mode kubernetes"},
      {{"--mode", "kubernetes", "--cluster", "c", "--data-dir", "d"},
       "--cluster: Kubernetes mode schedules the cluster's own nodes, not simulated ones"},
      {{"--data-dir", "d", "--controllers", "job"},
       "--controllers: only with --mode kubernetes (standalone mode always runs its own job "
       "controller)"},
      {{"--data-dir", "d", "--log-format", "xml"},
       "--log-format: unknown format \"xml\" (logfmt or json)"},
      {{"--data-dir", "d", "--log-level", "loud"}, "--log-level: unknown level \"loud\""},
      {{"--data-dir", "d", "--listen", "127.0.0.1:99999"},
       "--listen 127.0.0.1:99999: the port must be a number from 0 to 65535"},
      // A switch takes no value; the hand-written parser read --quarantine-corrupt=false as true.
      {{"--data-dir", "d", "--quarantine-corrupt=false"}, "--quarantine-corrupt: takes no value"},
      {{"--help=yes"}, "--help: takes no value"},
      // "--" ends the flags; phalanxd takes no other arguments.
      {{"--data-dir", "d", "--", "--mode"}, "unknown option --mode"},
  };
  for (const auto& r : rows) {
    auto result = run_phalanxd(r.args);
    std::string shown = r.args.empty() ? "(no arguments)" : r.args.front();
    EXPECT_EQ(result.exit_code, 2) << shown << "\n" << result.err;
    EXPECT_EQ(result.err.substr(0, result.err.find('\n')), "phalanxd: " + r.message) << shown;
    EXPECT_NE(result.err.find(std::string("\n\n") + std::string(usage_first_line)),
              std::string::npos)
        << shown << "\n" << result.err;
    EXPECT_EQ(result.out, "") << shown;
  }
}

TEST(PhalanxdCommandLine, HelpAndVersionAnswerAndExitZero) {
  for (const auto& flag : {"--help", "-h"}) {
    auto help = run_phalanxd({flag});
    EXPECT_EQ(help.exit_code, 0) << flag << "\n" << help.err;
    EXPECT_TRUE(help.out.starts_with(usage_first_line)) << flag << "\n" << help.out;
    EXPECT_NE(help.out.find("--probe-port N"), std::string::npos) << help.out;
  }
  auto version = run_phalanxd({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_TRUE(version.out.starts_with("phalanxd ")) << version.out;
  // In order, as given: a refusal before --help is reported.
  auto refused = run_phalanxd({"--http-threads", "0", "--help"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
}

} // namespace
} // namespace phalanx::cli_test
