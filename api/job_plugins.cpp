#include "api/job_plugins.hpp"

#include <boost/json.hpp>

#include <string>

namespace phalanx::api {

namespace json = boost::json;

namespace {

// The string at `spec[key]`, or "".
std::string string_field(const json::object& spec, std::string_view key) {
  const auto* v = spec.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->get_string()) : std::string();
}

// `o[key]` as an array, made one when absent or of another type.
json::array& array_at(json::object& o, std::string_view key) {
  auto& v = o[key];
  if (!v.is_array())
    v = json::array{};
  return v.as_array();
}

// Calls `add` with every container and init container of `spec` that is an object.
template <typename Add>
void for_each_container(json::object& spec, Add add) {
  for (std::string_view list : {"containers", "initContainers"}) {
    auto* v = spec.if_contains(list);
    if (v == nullptr || !v->is_array())
      continue;
    for (auto& c : v->as_array())
      if (c.is_object())
        add(c.as_object());
  }
}

} // namespace

std::vector<scheduler::task_host_naming> task_namings_of(const scheduler::job& j) {
  std::vector<scheduler::task_host_naming> out;
  out.reserve(j.tasks.size());
  for (const auto& t : j.tasks) {
    scheduler::task_host_naming naming;
    if (!t.pod_template.spec_json.empty()) {
      json::error_code ec;
      auto spec = json::parse(t.pod_template.spec_json.view(), ec);
      if (!ec && spec.is_object()) {
        naming.hostname = string_field(spec.get_object(), "hostname");
        naming.subdomain = string_field(spec.get_object(), "subdomain");
      }
    }
    out.push_back(std::move(naming));
  }
  return out;
}

void add_plugins_to_pod_spec(json::object& pod_spec, const scheduler::job& j,
                             const scheduler::job_plugin_settings& settings,
                             std::string_view pod_name, std::string_view task_index) {
  const auto job_name = j.meta.name.view();
  if (settings.env)
    for_each_container(pod_spec, [&](json::object& c) {
      auto& env = array_at(c, "env");
      env.push_back(json::object{{"name", "VK_TASK_INDEX"}, {"value", task_index}});
      env.push_back(json::object{{"name", "VC_TASK_INDEX"}, {"value", task_index}});
    });

  if (settings.ssh) {
    const auto secret = scheduler::ssh_secret_name(job_name);
    json::array items;
    for (auto key : {scheduler::ssh_private_key_key, scheduler::ssh_public_key_key,
                     scheduler::ssh_authorized_keys_key, scheduler::ssh_config_key})
      items.push_back(json::object{{"key", key}, {"path", ".ssh/" + std::string(key)}});
    // 0600 where root reads the keys; another user's path gets them readable (0644).
    const int mode = settings.ssh->key_file_path == "/root/.ssh" ? 0600 : 0644;
    array_at(pod_spec, "volumes")
        .push_back(json::object{{"name", secret},
                                {"secret", json::object{{"secretName", secret},
                                                        {"items", std::move(items)},
                                                        {"defaultMode", mode}}}});
    for_each_container(pod_spec, [&](json::object& c) {
      array_at(c, "volumeMounts")
          .push_back(json::object{{"mountPath", settings.ssh->key_file_path},
                                  {"subPath", ".ssh"},
                                  {"name", secret}});
    });
  }

  if (settings.svc) {
    if (string_field(pod_spec, "hostname").empty())
      pod_spec["hostname"] = pod_name;
    if (string_field(pod_spec, "subdomain").empty())
      pod_spec["subdomain"] = job_name;
    const auto config_map = scheduler::svc_config_map_name(job_name);
    json::array host_env;
    if (settings.svc->inject_hosts_env)
      for (const auto& name : scheduler::svc_host_variables(j))
        host_env.push_back(json::object{
            {"name", name},
            {"valueFrom",
             json::object{{"configMapKeyRef", json::object{{"name", config_map}, {"key", name}}}}}});
    array_at(pod_spec, "volumes")
        .push_back(json::object{{"name", config_map},
                                {"configMap", json::object{{"name", config_map}}}});
    for_each_container(pod_spec, [&](json::object& c) {
      if (!host_env.empty()) {
        auto& env = array_at(c, "env");
        for (const auto& e : host_env)
          env.push_back(e);
      }
      array_at(c, "volumeMounts")
          .push_back(json::object{{"mountPath", scheduler::svc_mount_path}, {"name", config_map}});
    });
  }
}

} // namespace phalanx::api
