// phalanx-loadtest: load tests, trace replay and restart timing of Phalanx. See loadtest/cli.hpp.

#include "loadtest/cli.hpp"

#include <string>
#include <vector>

int main(int argc, char** argv) {
  return phalanx::loadtest::run_cli(std::vector<std::string>(argv, argv + argc));
}
