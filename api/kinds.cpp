#include "api/kinds.hpp"

#include <array>

namespace phalanx::api {

namespace {

constexpr std::string_view pod_short[] = {"po"};
constexpr std::string_view node_short[] = {"no"};
constexpr std::string_view pod_group_short[] = {"pg", "podgroup-v1beta1"};
constexpr std::string_view queue_short[] = {"q", "queue-v1beta1"};
constexpr std::string_view job_short[] = {"vcjob", "vj"};
constexpr std::string_view priority_class_short[] = {"pc"};

constexpr std::array<kind_info, 6> kinds = {{
  {resource_kind::pod, "", "v1", "v1", "Pod", "PodList", "pods", "pod", true, pod_short, "Pod"},
  {resource_kind::node, "", "v1", "v1", "Node", "NodeList", "nodes", "node", false, node_short,
   "Node"},
  {resource_kind::pod_group, "scheduling.volcano.sh", "v1beta1", "scheduling.volcano.sh/v1beta1",
   "PodGroup", "PodGroupList", "podgroups", "podgroup", true, pod_group_short,
   "PodGroup.scheduling.volcano.sh"},
  {resource_kind::queue, "scheduling.volcano.sh", "v1beta1", "scheduling.volcano.sh/v1beta1",
   "Queue", "QueueList", "queues", "queue", false, queue_short, "Queue.scheduling.volcano.sh"},
  {resource_kind::job, "batch.volcano.sh", "v1alpha1", "batch.volcano.sh/v1alpha1", "Job",
   "JobList", "jobs", "job", true, job_short, "Job.batch.volcano.sh"},
  {resource_kind::priority_class, "scheduling.k8s.io", "v1", "scheduling.k8s.io/v1",
   "PriorityClass", "PriorityClassList", "priorityclasses", "priorityclass", false,
   priority_class_short, "PriorityClass.scheduling.k8s.io"},
}};

static_assert(static_cast<std::size_t>(resource_kind_last) + 1 == kinds.size());

} // namespace

const kind_info& info(resource_kind kind) noexcept {
  return kinds[static_cast<std::size_t>(kind)];
}

std::span<const kind_info> all_kinds() noexcept {
  return kinds;
}

std::optional<resource_kind> kind_of(std::string_view api_version,
                                     std::string_view kind) noexcept {
  for (const auto& k : kinds) {
    if (k.api_version == api_version && k.kind_name == kind)
      return k.kind;
  }
  return std::nullopt;
}

std::optional<resource_kind> kind_of_path(std::string_view group, std::string_view version,
                                          std::string_view plural) noexcept {
  for (const auto& k : kinds) {
    if (k.group == group && k.version == version && k.plural == plural)
      return k.kind;
  }
  return std::nullopt;
}

} // namespace phalanx::api
