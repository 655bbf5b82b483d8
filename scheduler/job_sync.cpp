#include "scheduler/job_sync.hpp"

#include "scheduler/job.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string_view>

namespace phalanx::scheduler {

job_pods count_job_pods(std::span<const job_pod_view> pods, bool pod_group_admitted) {
  std::map<std::string_view, task_pods> tasks;
  for (const auto& p : pods) {
    auto& t = tasks[p.task];
    t.counts.task = p.task;
    if (p.terminating) {
      ++t.terminating;
      continue;
    }
    switch (p.phase) {
      case pod_phase::pending: ++t.counts.pending; break;
      case pod_phase::running: ++t.counts.running; break;
      case pod_phase::succeeded: ++t.counts.succeeded; break;
      case pod_phase::failed: ++t.counts.failed; break;
      case pod_phase::unknown: ++t.counts.unknown; break;
    }
  }
  job_pods out;
  out.pod_group_admitted = pod_group_admitted;
  for (auto& [name, t] : tasks)
    out.tasks.push_back(std::move(t));
  return out;
}

int32_t saturated_restarts(int64_t sum) noexcept {
  return static_cast<int32_t>(std::min<int64_t>(sum, std::numeric_limits<int32_t>::max()));
}

int32_t task_restarts(std::span<const job_pod_view> pods, std::string_view task) noexcept {
  int64_t sum = 0;
  for (const auto& p : pods)
    if (p.task == task && restarts_count_for_task(p.phase, p.terminating))
      sum += std::max<int32_t>(p.restarts, 0);
  return saturated_restarts(sum);
}

bool kill_takes(const pod_kill& kill, const job_pod_view& p) noexcept {
  switch (kill.scope) {
    case kill_scope::none:
      return false;
    case kill_scope::job:
      return !(kill.keep_finished && is_terminal(p.phase));
    case kill_scope::task:
      return p.task == kill.task;
    case kill_scope::pod:
      return p.name == kill.pod;
  }
  return false;
}

job_sync_plan plan_job_sync(const job& j, std::span<const job_pod_view> pods) {
  const auto ranges = job_task_ranges(j);
  uint32_t total = 0;
  for (const auto& r : ranges)
    total = std::max(total, r.first + static_cast<uint32_t>(r.replicas));
  std::vector<bool> present(total, false);
  job_sync_plan out;
  std::set<std::string_view> seen;
  for (const auto& p : pods) {
    if (!seen.insert(p.name).second)
      continue;
    bool of_spec = false;
    if (auto split = split_job_pod_name(p.name))
      for (const auto& r : ranges)
        if (r.prefix == split->first && split->second < r.replicas) {
          present[r.first + static_cast<uint32_t>(split->second)] = true;
          of_spec = true;
          break;
        }
    if (!p.terminating && (p.out_of_sync || !of_spec))
      out.remove.push_back(p.name);
  }
  // A task's pods are made once the tasks it depends on run (Volcano's
  // waitDependsOnTaskMeetCondition).
  const auto counted = count_job_pods(pods, true);
  uint32_t first = 0;
  for (std::size_t t = 0; t < j.tasks.size(); ++t) {
    const auto replicas = static_cast<uint32_t>(std::max(j.tasks[t].replicas, 0));
    if (task_dependencies_ready(j, t, counted))
      for (uint32_t k = first; k < first + replicas; ++k)
        if (!present[k])
          out.create.push_back(k);
    first += replicas;
  }
  return out;
}

} // namespace phalanx::scheduler
