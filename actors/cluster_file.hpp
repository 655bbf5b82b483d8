#pragma once

// The simulated cluster of standalone mode, from a YAML file (phalanxd --cluster FILE):
//
//   nodes:
//     - name: cpu          # nodes cpu-0 .. cpu-2 (a single node keeps the name when count is 1
//       count: 3           #   and `exact: true`)
//       cpu: "2"
//       memory: 8Gi
//       ephemeralStorage: 100Gi   # optional
//       gpu: 0                    # nvidia.com/gpu, optional
//       pods: 110                 # optional, default 110
//       extended: {example.com/fpga: 2}   # optional
//       labels: {zone: a}
//       taints: [{key: gpu, value: "true", effect: NoSchedule}]
//       unschedulable: false
//
// Shapes repeat with `count`. Every error names the entry and field and the rule.

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <string>
#include <vector>

namespace phalanx::actors {

/// The most nodes a cluster file may describe.
inline constexpr int64_t max_cluster_file_nodes = 100000;

result<std::vector<scheduler::node>> parse_cluster_file(const std::string& yaml_text);

} // namespace phalanx::actors
