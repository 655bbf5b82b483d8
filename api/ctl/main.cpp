// phalanxctl: hands argv, the environment and the standard streams to ctl::run.

#include "api/ctl/ctl.hpp"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  // A closed pipe (phalanxctl get -w | head) ends the process quietly instead of raising SIGPIPE
  // inside the client library's writes.
  std::signal(SIGPIPE, SIG_IGN);
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  phalanx::api::ctl::environment env{
    std::cin, std::cout, std::cerr,
    [](const std::string& name) -> std::optional<std::string> {
      const char* v = std::getenv(name.c_str());
      if (v == nullptr)
        return std::nullopt;
      return std::string(v);
    },
    {}};
  auto code = phalanx::api::ctl::run(args, env);
  std::cout.flush();
  return static_cast<int>(code);
}
