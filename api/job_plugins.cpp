#include "api/job_plugins.hpp"

#include "scheduler/job_volumes.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <optional>
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

// Calls `add` with every container (not init container) of `spec` that is an object.
template <typename Add>
void for_each_app_container(json::object& spec, Add add) {
  auto* v = spec.if_contains("containers");
  if (v == nullptr || !v->is_array())
    return;
  for (auto& c : v->as_array())
    if (c.is_object())
      add(c.as_object());
}

// Whether container `c` has a port numbered `port`.
bool has_port(const json::object& c, int32_t port) {
  const auto* ports = c.if_contains("ports");
  if (ports == nullptr || !ports->is_array())
    return false;
  for (const auto& p : ports->get_array())
    if (p.is_object())
      if (const auto* n = p.get_object().if_contains("containerPort");
          n != nullptr && n->is_int64() && n->get_int64() == port)
        return true;
  return false;
}

// Adds container port `port` named `name` to `c`, unless a port of it has that number.
void open_port(json::object& c, int32_t port, std::string_view name) {
  if (!has_port(c, port))
    array_at(c, "ports").push_back(json::object{{"name", name}, {"containerPort", port}});
}

// Adds each of `wanted` (name, port) that `c` has no port numbered so before any is added, as
// Volcano's ray plugin opens the head's ports.
void open_ports(json::object& c, const std::vector<std::pair<std::string_view, int32_t>>& wanted) {
  std::vector<bool> present;
  for (const auto& [name, port] : wanted)
    present.push_back(has_port(c, port));
  for (std::size_t i = 0; i < wanted.size(); ++i)
    if (!present[i])
      array_at(c, "ports").push_back(
          json::object{{"name", wanted[i].first}, {"containerPort", wanted[i].second}});
}

// `sh -c <script>`, as the plugins write a container's command.
json::array shell_command(std::string script) {
  return json::array{"sh", "-c", std::move(script)};
}

// The value of the first variable `name` in the env of `spec`'s containers (not init
// containers), "" when none has it or it is not a plain value (valueFrom), as Volcano's
// hcclrank getEnv reads it.
std::string first_env_value(const json::object& spec, std::string_view name) {
  const auto* containers = spec.if_contains("containers");
  if (containers == nullptr || !containers->is_array())
    return {};
  for (const auto& c : containers->get_array()) {
    if (!c.is_object())
      continue;
    const auto* env = c.get_object().if_contains("env");
    if (env == nullptr || !env->is_array())
      continue;
    for (const auto& e : env->get_array())
      if (e.is_object() && string_field(e.get_object(), "name") == name)
        return string_field(e.get_object(), "value");
  }
  return {};
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
                             std::string_view pod_name, std::string_view task,
                             std::string_view task_index) {
  const auto job_name = j.meta.name.view();
  int32_t index = 0;
  std::from_chars(task_index.data(), task_index.data() + task_index.size(), index);
  const bool frameworks = settings.tensorflow || settings.mpi || settings.pytorch || settings.ray;
  const auto namings = frameworks ? task_namings_of(j) : std::vector<scheduler::task_host_naming>{};
  if (settings.env)
    for_each_container(pod_spec, [&](json::object& c) {
      auto& env = array_at(c, "env");
      env.push_back(json::object{{"name", "VK_TASK_INDEX"}, {"value", task_index}});
      env.push_back(json::object{{"name", "VC_TASK_INDEX"}, {"value", task_index}});
    });

  if (settings.mpi) {
    const auto& mpi = *settings.mpi;
    std::optional<std::string> hosts;
    const bool launcher = task == mpi.master;
    if (launcher)
      hosts = scheduler::mpi_worker_hosts(j, namings, mpi);
    if (!launcher || hosts)
      for_each_container(pod_spec, [&](json::object& c) {
        open_port(c, mpi.port, "mpijob-port");
        if (launcher)
          array_at(c, "env").push_back(json::object{{"name", "MPI_HOST"}, {"value", *hosts}});
      });
  }

  if (settings.pytorch) {
    const auto& torch = *settings.pytorch;
    if (auto master = scheduler::pytorch_master_address(j, namings, torch)) {
      if (task == torch.worker && torch.wait_master_enabled) {
        auto& init = array_at(pod_spec, "initContainers");
        const bool present = std::any_of(init.begin(), init.end(), [](const json::value& c) {
          return c.is_object() && string_field(c.get_object(), "name") == "wait-for-master";
        });
        if (!present) {
          init.push_back(json::object{
              {"name", "wait-for-master"},
              {"image", torch.wait_master_image},
              {"command", shell_command(scheduler::pytorch_wait_script(*master, torch))}});
        }
      }
      const auto world_size = std::to_string(scheduler::pytorch_world_size(j, torch));
      std::optional<int32_t> rank;
      if (task == torch.worker)
        rank = index + 1;
      else if (task == torch.master)
        rank = 0;
      for_each_app_container(pod_spec, [&](json::object& c) {
        open_port(c, torch.port, "pytorchjob-port");
        auto& env = array_at(c, "env");
        env.push_back(json::object{{"name", "MASTER_ADDR"}, {"value", *master}});
        env.push_back(json::object{{"name", "MASTER_PORT"}, {"value", std::to_string(torch.port)}});
        env.push_back(json::object{{"name", "WORLD_SIZE"}, {"value", world_size}});
        if (rank)
          env.push_back(json::object{{"name", "RANK"}, {"value", std::to_string(*rank)}});
      });
    }
  }

  if (settings.ray) {
    const auto& ray = *settings.ray;
    // Without a head task Volcano fails the pod's creation; validation refuses such a job.
    if (auto worker_command = scheduler::ray_worker_command(j, namings, ray))
      for_each_app_container(pod_spec, [&](json::object& c) {
        const auto name = string_field(c, "name");
        if (task == ray.head && name == ray.head_container) {
          open_ports(c, scheduler::ray_ports(ray));
          c["command"] = shell_command(scheduler::ray_head_command(ray));
        }
        if (task == ray.worker && name == ray.worker_container)
          c["command"] = shell_command(*worker_command);
      });
  }

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
            {"valueFrom", json::object{{"configMapKeyRef",
                                        json::object{{"name", config_map}, {"key", name}}}}}});
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

  if (settings.tensorflow) {
    auto config = scheduler::tensorflow_config(j, namings, *settings.tensorflow, task, index);
    if (!config.empty())
      for_each_app_container(pod_spec, [&](json::object& c) {
        array_at(c, "env").push_back(json::object{{"name", "TF_CONFIG"}, {"value", config}});
      });
  }
}

void add_plugins_to_pod_annotations(scheduler::label_set& annotations,
                                    const json::object& pod_spec, const scheduler::job& j,
                                    const scheduler::job_plugin_settings& settings,
                                    std::string_view task, std::string_view task_index) {
  if (settings.hcclrank) {
    const auto have = annotations.find(scheduler::hccl_rank_key);
    if (!have || have->empty()) {
      if (auto rank = first_env_value(pod_spec, scheduler::hccl_rank_variable); !rank.empty()) {
        annotations.set(scheduler::hccl_rank_key, rank);
      } else {
        int32_t index = 0;
        std::from_chars(task_index.data(), task_index.data() + task_index.size(), index);
        if (auto computed = scheduler::hccl_rank(j, *settings.hcclrank, task, index))
          annotations.set(scheduler::hccl_rank_key, std::to_string(*computed));
      }
    }
  }
}

void add_volumes_to_pod_spec(json::object& pod_spec, const scheduler::job& j) {
  std::vector<std::string_view> claimed;
  for (const auto& v : j.volumes) {
    const std::string_view claim = v.volume_claim_name;
    if (claim.empty() || std::find(claimed.begin(), claimed.end(), claim) != claimed.end())
      continue;
    claimed.push_back(claim);
    const auto name = scheduler::pod_volume_name(j.meta.name.view(), claim);
    array_at(pod_spec, "volumes")
        .push_back(json::object{{"name", name},
                                {"persistentVolumeClaim", json::object{{"claimName", claim}}}});
    for_each_app_container(pod_spec, [&](json::object& c) {
      array_at(c, "volumeMounts")
          .push_back(json::object{{"mountPath", v.mount_path}, {"name", name}});
    });
  }
}

void add_job_to_pod(json::object& pod_spec, scheduler::label_set& annotations,
                    const scheduler::job& j, const scheduler::job_plugin_settings& settings,
                    std::string_view pod_name, std::string_view task,
                    std::string_view task_index) {
  add_volumes_to_pod_spec(pod_spec, j);
  add_plugins_to_pod_spec(pod_spec, j, settings, pod_name, task, task_index);
  add_plugins_to_pod_annotations(annotations, pod_spec, j, settings, task, task_index);
}

} // namespace phalanx::api
