#pragma once

// `phalanx-loadtest big-delete`: one huge Volcano Job (300,000 pods by default) created through
// the HTTP API of a phalanxd it starts, then deleted, while another client reads a small object
// in a loop. The figures are how long the creation and the deletion took and, for each of them,
// how long the other client's reads waited (issue 24: a 300,000-pod delete held every other
// request for 18.7 s). The job's pods never fit the one small node, so they stay pending and the
// figures are the registry's own work, not scheduling.

#include "scheduler/result.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace phalanx::loadtest {

struct big_delete_options {
  /// Pods of the job (one task). Default: 300,000.
  int64_t pods = 300'000;
  /// How long a read may wait for the target to be met, in milliseconds. Default: 100.
  double read_target_ms = 100;
  /// The phalanxd binary. Default: the one this build made.
  std::string phalanxd_binary;
  std::string work_dir;
  std::string json_path;
  std::string html_path;
  std::string command;
  std::vector<std::pair<std::string, std::string>> flags_given;
};

result<boost::json::object> run_big_delete(const big_delete_options& options);

} // namespace phalanx::loadtest
