#pragma once

// Helpers of the load tester's tests: scratch directories, running the CLI in process, reading
// the JSON report back.

#include "loadtest/cli.hpp"
#include "loadtest/csv.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace phalanx::loadtest::testing {

struct scratch_dir {
  scratch_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "phalanx-lt-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

inline std::string testdata(const std::string& name) {
  return std::string(PHALANX_LOADTEST_TESTDATA) + "/" + name;
}

/// Runs phalanx-loadtest MODE ARGS... in this process; returns the exit code.
inline int run(std::vector<std::string> args) {
  args.insert(args.begin(), "phalanx-loadtest");
  return run_cli(args);
}

/// Reads a JSON report; fails the test when it does not parse.
inline boost::json::object read_report(const std::string& path) {
  auto text = read_text_file(path);
  EXPECT_TRUE(text.ok()) << path;
  if (!text.ok())
    return {};
  boost::system::error_code ec;
  auto v = boost::json::parse(*text, ec);
  EXPECT_FALSE(ec) << path << ": " << ec.message();
  if (ec || !v.is_object())
    return {};
  return v.as_object();
}

inline double number(const boost::json::object& o, const char* key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_number()) {
    ADD_FAILURE() << key << " is not a number";
    return -1;
  }
  return v->to_number<double>();
}

} // namespace phalanx::loadtest::testing
