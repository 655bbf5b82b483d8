#include "k8s/job_objects.hpp"

#include "api/codec.hpp"
#include "api/job_plugins.hpp"
#include "api/service.hpp"
#include "k8s/operations.hpp"
#include "scheduler/job.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

namespace phalanx::k8s {

namespace json = boost::json;

namespace {

json::object string_map(const scheduler::label_set& set) {
  json::object out;
  for (const auto& [k, v] : set.entries())
    out[k] = v;
  return out;
}

std::optional<int32_t> to_int32(std::string_view text) {
  int32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
    return std::nullopt;
  return n;
}

// A PodGroup's spec.minTaskMember as the job's controller writes it.
json::object min_task_member_of(const scheduler::pod_group& group) {
  json::object roles;
  for (const auto& m : group.min_task_member)
    roles[m.role] = m.min;
  return roles;
}

// A PodGroup's spec.minResources as the job's controller writes it: without the pod count, which
// the model keeps as a resource and Volcano's PodGroup does not.
json::object min_resources_of(const scheduler::pod_group& group) {
  json::object out;
  group.min_resources.for_each([&](std::string_view name, int64_t amount) {
    if (name != scheduler::pods_resource)
      out[name] = scheduler::format_resource_amount(name, amount);
  });
  return out;
}

// Whether `have`, a resource list as the apiserver shows it, holds the same amounts as `want`
// (min_resources_of's). A quantity that does not parse differs from every amount.
bool same_amounts(const json::value* have, const json::object& want) {
  const json::object empty;
  const json::object& h = have != nullptr && have->is_object() ? have->as_object() : empty;
  if (h.size() != want.size())
    return false;
  for (const auto& [name, text] : want) {
    const auto* other = h.if_contains(name);
    if (other == nullptr || !other->is_string())
      return false;
    auto a = scheduler::parse_resource_amount(name, other->as_string());
    auto b = scheduler::parse_resource_amount(name, text.as_string());
    if (!a || !b || *a != *b)
      return false;
  }
  return true;
}

// A merge patch's value for the map `want` over `have`: `want`, with every key of `have` that
// `want` lacks set to null (a merge patch keeps keys it does not name).
json::value replacing(const json::value* have, json::object want) {
  if (have != nullptr && have->is_object())
    for (const auto& [key, value] : have->as_object())
      if (!want.contains(key))
        want[key] = nullptr;
  if (want.empty())
    return nullptr;
  return want;
}

} // namespace

json::object job_owner_reference(std::string_view name, std::string_view uid) {
  return json::object{{"apiVersion", volcano_job_api_version},
                      {"kind", volcano_job_kind},
                      {"name", name},
                      {"uid", uid},
                      {"controller", true},
                      {"blockOwnerDeletion", true}};
}

std::optional<owner_job> controlling_job(const json::value& object) {
  const auto* refs = value_at(object, {"metadata", "ownerReferences"});
  if (refs == nullptr || !refs->is_array())
    return std::nullopt;
  for (const auto& r : refs->as_array()) {
    const auto* controller = value_at(r, {"controller"});
    if (controller == nullptr || !controller->is_bool() || !controller->as_bool())
      continue;
    if (string_at(r, {"apiVersion"}) != volcano_job_api_version ||
        string_at(r, {"kind"}) != volcano_job_kind)
      return std::nullopt;  // One controller only: another kind's.
    auto uid = string_at(r, {"uid"});
    if (uid.empty())
      return std::nullopt;
    return owner_job{string_at(r, {"name"}), std::move(uid)};
  }
  return std::nullopt;
}

result<json::value> job_pod_manifest(const json::value& raw_job, const scheduler::job& j,
                                     const scheduler::pod& pod) {
  const auto* tasks = value_at(raw_job, {"spec", "tasks"});
  if (tasks == nullptr || !tasks->is_array())
    return status{errc::invalid_argument, "spec.tasks: required"};
  const json::value* task = nullptr;
  std::string at;
  for (std::size_t i = 0; i < tasks->as_array().size(); ++i) {
    const auto& t = tasks->as_array()[i];
    auto name = string_at(t, {"name"});
    if (name.empty())
      name = std::string(scheduler::default_task_prefix) + std::to_string(i);
    if (name == pod.role.view()) {
      task = &t;
      at = "spec.tasks[" + std::to_string(i) + "].template";
      break;
    }
  }
  if (task == nullptr)
    return status{errc::invalid_argument,
                  "spec.tasks: no task \"" + pod.role.str() + "\" for pod " + pod.meta.name.str()};
  const auto* tmpl = value_at(*task, {"template"});
  if (tmpl == nullptr || !tmpl->is_object())
    return status{errc::invalid_argument, at + ": must be an object"};
  const auto* spec_in = value_at(*tmpl, {"spec"});
  if (spec_in == nullptr || !spec_in->is_object())
    return status{errc::invalid_argument, at + ".spec: must be an object"};
  json::object spec = spec_in->as_object();
  if (string_at(spec, {"schedulerName"}).empty()) {
    auto name = pod.scheduler_name.str();
    spec["schedulerName"] = name.empty() ? std::string(default_job_scheduler) : name;
  }
  if (string_at(spec, {"priorityClassName"}).empty()) {
    auto job_class = string_at(raw_job, {"spec", "priorityClassName"});
    if (!job_class.empty())
      spec["priorityClassName"] = job_class;
  }
  auto annotations = pod.meta.annotations;
  const std::string index(annotations.find(scheduler::task_index_key).value_or(""));
  api::add_job_to_pod(spec, annotations, j, scheduler::plugin_settings_of(j), pod.meta.name.view(),
                      pod.role.view(), index);
  json::object meta{{"name", pod.meta.name.str()},
                    {"namespace", pod.meta.namespace_name.str()},
                    {"labels", string_map(pod.meta.labels)},
                    {"annotations", string_map(annotations)},
                    {"ownerReferences",
                     json::array{job_owner_reference(string_at(raw_job, {"metadata", "name"}),
                                                     string_at(raw_job, {"metadata", "uid"}))}}};
  return json::value(json::object{{"apiVersion", "v1"},
                                  {"kind", "Pod"},
                                  {"metadata", std::move(meta)},
                                  {"spec", std::move(spec)}});
}

json::value job_pod_group_manifest(const scheduler::pod_group& group, const json::object& owner) {
  json::object spec{{"minMember", group.min_member}, {"queue", group.queue}};
  if (auto roles = min_task_member_of(group); !roles.empty())
    spec["minTaskMember"] = std::move(roles);
  if (!group.priority_class_name.empty())
    spec["priorityClassName"] = group.priority_class_name;
  if (auto min_resources = min_resources_of(group); !min_resources.empty())
    spec["minResources"] = std::move(min_resources);
  json::object meta{{"name", group.meta.name.str()},
                    {"namespace", group.meta.namespace_name.str()},
                    {"ownerReferences", json::array{owner}}};
  if (!group.meta.labels.empty())
    meta["labels"] = string_map(group.meta.labels);
  if (!group.meta.annotations.empty())
    meta["annotations"] = string_map(group.meta.annotations);
  return json::object{{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                      {"kind", "PodGroup"},
                      {"metadata", std::move(meta)},
                      {"spec", std::move(spec)}};
}

std::optional<json::object> job_pod_group_update(const scheduler::pod_group& group,
                                                 const json::value& current) {
  json::object spec;
  const auto* min_member = value_at(current, {"spec", "minMember"});
  if (min_member == nullptr || !min_member->is_int64() ||
      min_member->as_int64() != group.min_member)
    spec["minMember"] = group.min_member;
  auto roles = min_task_member_of(group);
  const auto* have_roles = value_at(current, {"spec", "minTaskMember"});
  if (have_roles == nullptr || !have_roles->is_object() || have_roles->as_object() != roles)
    spec["minTaskMember"] = replacing(have_roles, std::move(roles));
  auto min_resources = min_resources_of(group);
  const auto* have_resources = value_at(current, {"spec", "minResources"});
  if (!same_amounts(have_resources, min_resources))
    spec["minResources"] = replacing(have_resources, std::move(min_resources));
  if (string_at(current, {"spec", "priorityClassName"}) != group.priority_class_name) {
    if (group.priority_class_name.empty())
      spec["priorityClassName"] = nullptr;
    else
      spec["priorityClassName"] = group.priority_class_name;
  }
  if (spec.empty())
    return std::nullopt;
  return json::object{{"metadata", json::object{{"uid", string_at(current, {"metadata", "uid"})}}},
                      {"spec", std::move(spec)}};
}

namespace {

// The metadata of a plugin's object `name` of job `j`: in the job's namespace, owned by it.
json::object plugin_object_meta(const scheduler::job& j, std::string_view job_uid,
                                std::string_view name) {
  return json::object{
      {"name", name},
      {"namespace", j.meta.namespace_name.str()},
      {"ownerReferences", json::array{job_owner_reference(j.meta.name.view(), job_uid)}}};
}

// The labels Volcano's controller gives every pod of job `j`: what selects them.
json::object job_pod_selector(const scheduler::job& j) {
  return json::object{{scheduler::job_name_key, j.meta.name.str()},
                      {scheduler::job_namespace_key, j.meta.namespace_name.str()}};
}

json::object job_hosts_data(const scheduler::job& j) {
  json::object data;
  for (const auto& [key, value] : scheduler::job_hosts(j, api::task_namings_of(j)))
    data[key] = value;
  return data;
}

} // namespace

json::value job_service_manifest(const scheduler::job& j, std::string_view job_uid,
                                 const scheduler::svc_plugin_settings& svc) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", plugin_object_meta(j, job_uid, j.meta.name.view())},
      {"spec", json::object{{"clusterIP", "None"},
                            {"selector", job_pod_selector(j)},
                            {"publishNotReadyAddresses", svc.publish_not_ready_addresses}}}};
}

json::value job_ray_head_service_manifest(const scheduler::job& j, std::string_view job_uid,
                                          const scheduler::ray_plugin_settings& ray) {
  auto selector = job_pod_selector(j);
  selector[scheduler::task_spec_key] = ray.head;
  json::array ports;
  for (const auto& [name, port] : scheduler::ray_ports(ray))
    ports.push_back(json::object{
        {"name", name}, {"port", port}, {"targetPort", name}, {"protocol", "TCP"}});
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata",
       plugin_object_meta(j, job_uid, scheduler::ray_head_service_name(j.meta.name.view()))},
      {"spec", json::object{{"selector", std::move(selector)}, {"ports", std::move(ports)}}}};
}

json::value job_volume_claim_manifest(const scheduler::job& j, std::string_view job_uid,
                                      std::string_view claim, const json::value& claim_spec) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "PersistentVolumeClaim"},
                      {"metadata", plugin_object_meta(j, job_uid, claim)},
                      {"spec", claim_spec}};
}

std::optional<json::array> job_volume_claim_names_patch(const json::value& raw_job,
                                                        const scheduler::job& named) {
  const auto* volumes = value_at(raw_job, {"spec", "volumes"});
  if (volumes == nullptr || !volumes->is_array())
    return std::nullopt;
  json::array patch{json::object{{"op", "test"},
                                 {"path", "/metadata/uid"},
                                 {"value", string_at(raw_job, {"metadata", "uid"})}}};
  for (std::size_t i = 0; i < volumes->as_array().size() && i < named.volumes.size(); ++i) {
    const auto& v = volumes->as_array()[i];
    if (!string_at(v, {"volumeClaimName"}).empty() || named.volumes[i].volume_claim_name.empty())
      continue;
    const auto at = "/spec/volumes/" + std::to_string(i);
    patch.push_back(json::object{
        {"op", "test"}, {"path", at + "/mountPath"}, {"value", string_at(v, {"mountPath"})}});
    patch.push_back(json::object{{"op", "add"},
                                 {"path", at + "/volumeClaimName"},
                                 {"value", named.volumes[i].volume_claim_name}});
  }
  if (patch.size() == 1)
    return std::nullopt;
  return patch;
}

json::value job_network_policy_manifest(const scheduler::job& j, std::string_view job_uid) {
  const json::object own_pods{{"matchLabels", job_pod_selector(j)}};
  return json::object{
      {"apiVersion", "networking.k8s.io/v1"},
      {"kind", "NetworkPolicy"},
      {"metadata", plugin_object_meta(j, job_uid, j.meta.name.view())},
      {"spec", json::object{{"podSelector", own_pods},
                            {"ingress", json::array{json::object{
                                            {"from", json::array{json::object{
                                                         {"podSelector", own_pods}}}}}}},
                            {"policyTypes", json::array{"Ingress"}}}}};
}

json::value job_hosts_config_map_manifest(const scheduler::job& j, std::string_view job_uid) {
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       plugin_object_meta(j, job_uid, scheduler::svc_config_map_name(j.meta.name.view()))},
      {"data", job_hosts_data(j)}};
}

std::optional<json::object> job_hosts_config_map_update(const scheduler::job& j,
                                                        const json::value& current) {
  auto want = job_hosts_data(j);
  const auto* have = value_at(current, {"data"});
  if (have != nullptr && have->is_object() && have->as_object() == want)
    return std::nullopt;
  return json::object{{"metadata", json::object{{"uid", string_at(current, {"metadata", "uid"})}}},
                      {"data", replacing(have, std::move(want))}};
}

json::value job_ssh_secret_manifest(const scheduler::job& j, std::string_view job_uid,
                                    const ssh_key_pair& keys, int32_t port) {
  const auto config = scheduler::ssh_config(j, api::task_namings_of(j), port);
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", plugin_object_meta(j, job_uid, scheduler::ssh_secret_name(j.meta.name.view()))},
      {"type", "Opaque"},
      {"data", json::object{{scheduler::ssh_private_key_key, base64_encode(keys.private_key)},
                            {scheduler::ssh_public_key_key, base64_encode(keys.public_key)},
                            {scheduler::ssh_authorized_keys_key, base64_encode(keys.public_key)},
                            {scheduler::ssh_config_key, base64_encode(config)}}}};
}

json::value job_event_manifest(const json::value& raw_job, std::string_view type,
                               std::string_view reason, std::string_view message,
                               scheduler::timestamp now) {
  const auto ns = string_at(raw_job, {"metadata", "namespace"});
  const auto name = string_at(raw_job, {"metadata", "name"});
  const auto at = api::format_time(now);
  // Kubernetes refuses an Event message longer than 1 KiB.
  constexpr std::size_t max_message_bytes = 1024;
  return json::object{
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", json::object{{"generateName", name + "."}, {"namespace", ns}}},
      {"involvedObject", json::object{{"apiVersion", volcano_job_api_version},
                                      {"kind", volcano_job_kind},
                                      {"namespace", ns},
                                      {"name", name},
                                      {"uid", string_at(raw_job, {"metadata", "uid"})}}},
      {"type", type},
      {"reason", reason},
      {"message", message.substr(0, max_message_bytes)},
      {"source", json::object{{"component", job_controller_component}}},
      {"reportingComponent", job_controller_component},
      {"firstTimestamp", at},
      {"lastTimestamp", at},
      {"count", 1}};
}

json::value job_status_json(const scheduler::job_status& status) {
  api::job_object o;
  o.status = status;
  auto encoded = api::encode_object(api::object{std::move(o)});
  if (const auto* s = encoded.as_object().if_contains("status"))
    return *s;
  return json::object{};
}

job_pod_facts read_job_pod(const json::value& pod) {
  job_pod_facts out;
  auto& v = out.view;
  v.name = string_at(pod, {"metadata", "name"});
  v.task = string_at(pod, {"metadata", "annotations", scheduler::task_spec_key.data()});
  v.phase = scheduler::pod_phase_from_string(string_at(pod, {"status", "phase"}))
                .value_or(scheduler::pod_phase::pending);
  v.terminating = !string_at(pod, {"metadata", "deletionTimestamp"}).empty();
  const auto* annotations = value_at(pod, {"metadata", "annotations"});
  v.out_of_sync = annotations != nullptr && annotations->is_object() &&
                  annotations->as_object().contains(scheduler::out_of_sync_key);
  out.namespace_name = string_at(pod, {"metadata", "namespace"});
  out.uid = string_at(pod, {"metadata", "uid"});
  if (auto owner = controlling_job(pod))
    out.job_uid = owner->uid;
  out.job_version =
      to_int32(string_at(pod, {"metadata", "annotations", scheduler::job_version_key.data()}));
  // Kubernetes counts per container; TaskFailed counts the pod's, init containers included.
  int64_t restarts = 0;
  for (const char* list : {"containerStatuses", "initContainerStatuses"})
    if (const auto* statuses = value_at(pod, {"status", list});
        statuses != nullptr && statuses->is_array())
      for (const auto& c : statuses->as_array())
        if (const auto* n = value_at(c, {"restartCount"}); n != nullptr && n->is_int64())
          restarts += std::clamp<int64_t>(n->as_int64(), 0, std::numeric_limits<int32_t>::max());
  v.restarts =
      static_cast<int32_t>(std::min<int64_t>(restarts, std::numeric_limits<int32_t>::max()));
  if (const auto* statuses = value_at(pod, {"status", "containerStatuses"});
      statuses != nullptr && statuses->is_array() && !statuses->as_array().empty())
    if (const auto* code = value_at(statuses->as_array()[0], {"state", "terminated", "exitCode"});
        code != nullptr && code->is_int64())
      out.exit_code = static_cast<int32_t>(code->as_int64());
  return out;
}

} // namespace phalanx::k8s
