#include "actors/runtime_metrics.hpp"

#include <string>

namespace phalanx::actors {

std::string_view to_string(kube_pending_queue q) noexcept {
  switch (q) {
    case kube_pending_queue::none:
      return "";
    case kube_pending_queue::active:
      return "active";
    case kube_pending_queue::backoff:
      return "backoff";
    case kube_pending_queue::unschedulable:
      return "unschedulable";
    case kube_pending_queue::gated:
      return "gated";
  }
  return "";
}

std::string_view to_string(attempt_result r) noexcept {
  switch (r) {
    case attempt_result::scheduled:
      return "scheduled";
    case attempt_result::unschedulable:
      return "unschedulable";
    case attempt_result::error:
      return "error";
  }
  return "";
}

runtime_metrics::runtime_metrics() {
  api::register_process_metrics(registry);
  api::register_build_info(registry);
}

queue_amount_families runtime_metrics::amount_families(std::string_view what,
                                                       std::string_view help,
                                                       std::string_view volcano_what) {
  const std::string name = "phalanx_queue_" + std::string(what);
  const std::string text = "Resources " + std::string(help);
  auto out = volcano_amount_families(volcano_what, help);
  out.cpu_cores = &registry.gauge_family(name + "_cpu_cores", text + ": cpu, in cores.", {"queue"});
  out.memory_bytes =
      &registry.gauge_family(name + "_memory_bytes", text + ": memory, in bytes.", {"queue"});
  out.ephemeral_storage_bytes = &registry.gauge_family(
      name + "_ephemeral_storage_bytes", text + ": ephemeral-storage, in bytes.", {"queue"});
  out.pods = &registry.gauge_family(name + "_pods", text + ": the pod count.", {"queue"});
  out.extended = &registry.gauge_family(
      name + "_extended_resources",
      text + ": each extended resource (nvidia.com/gpu, hugepages-2Mi, ...) in its Kubernetes "
             "base unit: devices for a device plugin's resource, bytes for hugepages. A "
             "resource once seen stays, at 0 when none is left.",
      {"queue", "resource"});
  return out;
}

queue_amount_families runtime_metrics::volcano_amount_families(std::string_view what,
                                                               std::string_view help) {
  const std::string name = "volcano_queue_" + std::string(what);
  const std::string text = "Resources " + std::string(help);
  queue_amount_families out;
  out.volcano_milli_cpu =
      &registry.gauge_family(name + "_milli_cpu", text + ": cpu, in millicores.", {"queue_name"});
  out.volcano_memory_bytes =
      &registry.gauge_family(name + "_memory_bytes", text + ": memory, in bytes.", {"queue_name"});
  out.volcano_scalar = &registry.gauge_family(
      name + "_scalar_resources",
      text + ": the other resources in Volcano's units: pods as a count, ephemeral-storage and "
             "extended resources (nvidia.com/gpu) in thousandths of their base unit (1000 per "
             "GPU).",
      {"queue_name", "resource"});
  return out;
}

std::array<api::metric_family<api::gauge>*, 5> runtime_metrics::pod_group_count_families() {
  constexpr std::array<std::string_view, 5> phases = {"Pending", "Inqueue", "Running", "Unknown",
                                                      "Completed"};
  std::array<api::metric_family<api::gauge>*, 5> out{};
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = &registry.gauge_family(pod_group_count_names[i],
                                    "PodGroups of the queue in phase " + std::string(phases[i]) +
                                        ", as the queue's status counts them.",
                                    {"queue_name"});
  return out;
}

void runtime_metrics::remove_queue_series(std::string_view name) {
  pending_gangs.remove_series_with("queue", name);
  for (const auto* amounts : {&allocated, &deserved, &request, &inqueue}) {
    for (auto* family : {amounts->cpu_cores, amounts->memory_bytes,
                         amounts->ephemeral_storage_bytes, amounts->pods, amounts->extended})
      if (family != nullptr)
        family->remove_series_with("queue", name);
    for (auto* family :
         {amounts->volcano_milli_cpu, amounts->volcano_memory_bytes, amounts->volcano_scalar})
      family->remove_series_with("queue_name", name);
  }
  for (auto* family : {&volcano_queue_share, &volcano_queue_weight, &volcano_queue_overused})
    family->remove_series_with("queue_name", name);
  for (auto* family : pod_group_counts)
    family->remove_series_with("queue_name", name);
}

} // namespace phalanx::actors
