#include "scheduler/job_plugins.hpp"

#include "scheduler/job.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cstdint>

namespace phalanx::scheduler {

namespace {

// strconv.ParseBool's spellings.
std::optional<bool> parse_go_bool(std::string_view v) {
  for (auto t : {"1", "t", "T", "TRUE", "true", "True"})
    if (v == t)
      return true;
  for (auto f : {"0", "f", "F", "FALSE", "false", "False"})
    if (v == f)
      return false;
  return std::nullopt;
}

// One flag a plugin defines: a bool (set by its name alone), or a string or number that takes a
// value ("=value" or the next argument).
struct flag_spec {
  std::string_view name;
  bool is_bool = false;
  bool is_number = false;
};

// Go's flag.FlagSet.Parse over `args`, calling `set(name, value)` for each flag given; errors
// name the argument's index. Unlike Go's, a positional argument is an error, not the end.
template <typename Set>
void parse_go_flags(const std::string& plugin, std::size_t plugin_index,
                    const std::vector<std::string>& args,
                    std::initializer_list<flag_spec> flags, Set set,
                    std::vector<plugin_argument_error>* errors) {
  auto fail = [&](std::size_t i, std::string message) {
    if (errors)
      errors->push_back({plugin, plugin_index, i, std::move(message)});
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      // The end of the flags; what follows would be positional.
      for (++i; i < args.size(); ++i)
        fail(i, "'" + args[i] + "' is not a flag (flags are written -name or --name)");
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      fail(i, "'" + std::string(arg) + "' is not a flag (flags are written -name or --name)");
      continue;
    }
    std::string_view body = arg.substr(arg[1] == '-' ? 2 : 1);
    if (body.empty() || body[0] == '-' || body[0] == '=') {
      fail(i, "bad flag syntax: " + std::string(arg));
      continue;
    }
    std::optional<std::string_view> value;
    if (auto eq = body.find('='); eq != std::string_view::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    auto spec = std::find_if(flags.begin(), flags.end(),
                             [&](const flag_spec& f) { return f.name == body; });
    if (spec == flags.end()) {
      std::string known;
      for (const auto& f : flags)
        known += (known.empty() ? "--" : ", --") + std::string(f.name);
      fail(i, "flag provided but not defined: --" + std::string(body) + " (the " + plugin +
                  " plugin " + (known.empty() ? "takes no flags" : "knows " + known) + ")");
      continue;
    }
    if (spec->is_bool) {
      auto b = value ? parse_go_bool(*value) : std::optional<bool>(true);
      if (!b) {
        fail(i, "invalid boolean value \"" + std::string(*value) + "\" for flag --" +
                    std::string(body));
        continue;
      }
      set(spec->name, *b ? "true" : "false");
      continue;
    }
    if (!value) {
      if (i + 1 >= args.size()) {
        fail(i, "flag needs an argument: --" + std::string(body));
        continue;
      }
      value = args[++i];
    }
    if (spec->is_number) {
      int64_t n = 0;
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
      if (ec != std::errc{} || end != value->data() + value->size()) {
        fail(i, "invalid value \"" + std::string(*value) + "\" for flag --" + std::string(body) +
                    ": not an integer");
        continue;
      }
    }
    set(spec->name, *value);
  }
}

// A whole number flag's value (parse_go_flags checked it is one); clamped to int32.
int32_t parse_port(std::string_view value) {
  int64_t n = 0;
  std::from_chars(value.data(), value.data() + value.size(), n);
  return int32_t(std::clamp<int64_t>(n, INT32_MIN, INT32_MAX));
}

// Whether the job names plugin `name`.
bool names(const job& j, std::string_view name) {
  return std::any_of(j.plugins.begin(), j.plugins.end(),
                     [&](const auto& p) { return p.first == name; });
}

std::string task_key_of(std::string_view task) {
  std::string key(task);
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

job_plugin_settings plugin_settings_of(const job& j, std::vector<plugin_argument_error>* errors) {
  job_plugin_settings out;
  for (std::size_t p = 0; p < j.plugins.size(); ++p) {
    const auto& [name, args] = j.plugins[p];
    if (name == "env") {
      out.env = true;
      parse_go_flags(name, p, args, {}, [](std::string_view, std::string_view) {}, errors);
    } else if (name == "svc") {
      svc_plugin_settings s;
      parse_go_flags(
          name, p, args,
          {{"publish-not-ready-addresses", true}, {"disable-network-policy", true},
           {"inject-hosts-env", true}},
          [&](std::string_view flag, std::string_view value) {
            bool on = value == "true";
            if (flag == "publish-not-ready-addresses")
              s.publish_not_ready_addresses = on;
            else if (flag == "disable-network-policy")
              s.disable_network_policy = on;
            else
              s.inject_hosts_env = on;
          },
          errors);
      out.svc = s;
    } else if (name == "tensorflow") {
      tensorflow_plugin_settings t;
      parse_go_flags(
          name, p, args,
          {{"ps"}, {"worker"}, {"chief"}, {"evaluator"}, {"port", false, true}},
          [&](std::string_view flag, std::string_view value) {
            if (flag == "ps")
              t.ps = value;
            else if (flag == "worker")
              t.worker = value;
            else if (flag == "chief")
              t.chief = value;
            else if (flag == "evaluator")
              t.evaluator = value;
            else
              t.port = parse_port(value);
          },
          errors);
      out.tensorflow = t;
    } else if (name == "mpi") {
      mpi_plugin_settings m;
      parse_go_flags(
          name, p, args, {{"master"}, {"worker"}, {"port", false, true}},
          [&](std::string_view flag, std::string_view value) {
            if (flag == "master")
              m.master = value;
            else if (flag == "worker")
              m.worker = value;
            else
              m.port = parse_port(value);
          },
          errors);
      out.mpi = m;
    } else if (name == "pytorch") {
      pytorch_plugin_settings t;
      parse_go_flags(
          name, p, args,
          {{"master"}, {"worker"}, {"port", false, true}, {"wait-master-enabled", true},
           {"wait-master-timeout", false, true}, {"wait-master-image"}},
          [&](std::string_view flag, std::string_view value) {
            if (flag == "master")
              t.master = value;
            else if (flag == "worker")
              t.worker = value;
            else if (flag == "port")
              t.port = parse_port(value);
            else if (flag == "wait-master-enabled")
              t.wait_master_enabled = value == "true";
            else if (flag == "wait-master-timeout")
              t.wait_master_timeout = parse_port(value);
            else
              t.wait_master_image = value;
          },
          errors);
      out.pytorch = t;
    } else if (name == "ssh") {
      ssh_plugin_settings s;
      parse_go_flags(
          name, p, args,
          {{"ssh-key-file-path"}, {"ssh-private-key"}, {"ssh-public-key"},
           {"ssh-port", false, true}},
          [&](std::string_view flag, std::string_view value) {
            if (flag == "ssh-key-file-path")
              s.key_file_path = value;
            else if (flag == "ssh-private-key")
              s.private_key = value;
            else if (flag == "ssh-public-key")
              s.public_key = value;
            else {
              const auto port = parse_port(value);
              s.port = port >= 1 && port <= 65535 ? port : 22;
            }
          },
          errors);
      out.ssh = s;
    } else if (name == "hcclrank") {
      hcclrank_plugin_settings h;
      parse_go_flags(
          name, p, args, {{"master"}, {"worker"}},
          [&](std::string_view flag, std::string_view value) {
            if (flag == "master")
              h.master = value;
            else
              h.worker = value;
          },
          errors);
      out.hcclrank = h;
    } else if (name == "ray") {
      ray_plugin_settings r;
      parse_go_flags(
          name, p, args,
          {{"head"}, {"headContainer"}, {"worker"}, {"workerContainer"},
           {"port", false, true}, {"dashboardPort", false, true}, {"clientPort", false, true}},
          [&](std::string_view flag, std::string_view value) {
            if (flag == "head")
              r.head = value;
            else if (flag == "headContainer")
              r.head_container = value;
            else if (flag == "worker")
              r.worker = value;
            else if (flag == "workerContainer")
              r.worker_container = value;
            else if (flag == "port")
              r.port = parse_port(value);
            else if (flag == "dashboardPort")
              r.dashboard_port = parse_port(value);
            else
              r.client_port = parse_port(value);
          },
          errors);
      out.ray = r;
    }
  }
  // What the admission webhook adds (add_implied_plugins), for a job written before it ran.
  if ((out.tensorflow || out.mpi || out.pytorch || out.ray) && !out.svc)
    out.svc = svc_plugin_settings{};
  if (out.mpi && !out.ssh)
    out.ssh = ssh_plugin_settings{};
  return out;
}

std::vector<std::string_view> controlled_plugins(const job_plugin_settings& s) {
  std::vector<std::string_view> out;
  for (const auto& [name, on] : std::initializer_list<std::pair<std::string_view, bool>>{
           {"env", s.env},
           {"svc", s.svc.has_value()},
           {"ssh", s.ssh.has_value()},
           {"tensorflow", s.tensorflow.has_value()},
           {"mpi", s.mpi.has_value()},
           {"pytorch", s.pytorch.has_value()},
           {"ray", s.ray.has_value()}})
    if (on)
      out.push_back(name);
  return out;
}

bool add_implied_plugins(job& j) {
  const bool framework = names(j, "tensorflow") || names(j, "mpi") || names(j, "pytorch") ||
                         names(j, "ray");
  bool added = false;
  auto add = [&](const char* name) {
    if (names(j, name))
      return;
    j.plugins.emplace_back(name, std::vector<std::string>{});
    added = true;
  };
  if (framework)
    add("svc");
  if (names(j, "mpi"))
    add("ssh");
  if (added)
    std::sort(j.plugins.begin(), j.plugins.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  return added;
}

namespace {

// "<host>.<subdomain>" of the pod of task `t` at `index`, as Volcano's MakeDomainName: the
// template's hostname (the same for every replica) or the pod's name.
std::string domain_name(const job& j, const job_task& t, const task_host_naming& naming,
                        int32_t index) {
  const std::string& subdomain = naming.subdomain.empty() ? j.meta.name.str() : naming.subdomain;
  return (naming.hostname.empty() ? job_pod_name(j.meta.name.view(), t.name, index)
                                  : naming.hostname) +
         "." + subdomain;
}

std::optional<std::size_t> task_index_of(const job& j, std::string_view name) {
  for (std::size_t t = 0; t < j.tasks.size(); ++t)
    if (j.tasks[t].name == name)
      return t;
  return std::nullopt;
}

} // namespace

std::string tensorflow_config(const job& j, const std::vector<task_host_naming>& namings,
                              const tensorflow_plugin_settings& s, std::string_view task,
                              int32_t index) {
  if (j.tasks.size() == 1 && j.tasks[0].replicas == 1)
    return {};
  // Go's json.Marshal of Volcano's tfClusterSpec: roles in its field order, empty ones left out.
  std::string cluster;
  for (const auto* role : {&s.ps, &s.worker, &s.chief, &s.evaluator}) {
    auto t = task_index_of(j, *role);
    if (!t || j.tasks[*t].replicas == 0)
      continue;
    std::string hosts;
    for (int32_t i = 0; i < j.tasks[*t].replicas; ++i)
      hosts += std::string(hosts.empty() ? "" : ",") + "\"" +
               domain_name(j, j.tasks[*t], namings.at(*t), i) + ":" + std::to_string(s.port) +
               "\"";
    const char* key = role == &s.ps ? "ps" : role == &s.worker ? "worker"
                                         : role == &s.chief    ? "chief"
                                                               : "evaluator";
    cluster += std::string(cluster.empty() ? "" : ",") + "\"" + key + "\":[" + hosts + "]";
  }
  // A task that is none of the roles is its own type, named as the task.
  std::string type(task);
  if (task == s.chief)
    type = "chief";
  else if (task == s.worker)
    type = "worker";
  else if (task == s.ps)
    type = "ps";
  else if (task == s.evaluator)
    type = "evaluator";
  return "{\"cluster\":{" + cluster + "},\"task\":{\"type\":\"" + type +
         "\",\"index\":" + std::to_string(index) + "}}";
}

std::optional<std::string> mpi_worker_hosts(const job& j,
                                            const std::vector<task_host_naming>& namings,
                                            const mpi_plugin_settings& s) {
  auto t = task_index_of(j, s.worker);
  if (!t)
    return std::nullopt;
  std::string hosts;
  for (const auto& h : task_hosts(j, *t, namings.at(*t)))
    hosts += (hosts.empty() ? "" : ",") + h;
  return hosts;
}

std::optional<std::string> pytorch_master_address(const job& j,
                                                  const std::vector<task_host_naming>& namings,
                                                  const pytorch_plugin_settings& s) {
  auto t = task_index_of(j, s.master);
  if (!t)
    return std::nullopt;
  return domain_name(j, j.tasks[*t], namings.at(*t), 0);
}

int32_t pytorch_world_size(const job& j, const pytorch_plugin_settings& s) {
  int32_t size = 0;
  for (const auto& t : j.tasks)
    if (t.name == s.master || t.name == s.worker)
      size += t.replicas;
  return size;
}

std::string pytorch_wait_script(std::string_view master_address,
                                const pytorch_plugin_settings& s) {
  const std::string target = std::string(master_address) + " " + std::to_string(s.port);
  const std::string where = std::string(master_address) + ":" + std::to_string(s.port);
  // nc where the image has it, else bash's /dev/tcp; one try every 2 s up to the timeout.
  return "waited=0\n"
         "until nc -z " + target + " 2>/dev/null || (echo > /dev/tcp/" +
         std::string(master_address) + "/" + std::to_string(s.port) + ") 2>/dev/null; do\n"
         "  if [ \"$waited\" -ge " + std::to_string(s.wait_master_timeout) + " ]; then\n"
         "    echo \"the master " + where + " did not listen within " +
         std::to_string(s.wait_master_timeout) + " s\"; exit 1\n"
         "  fi\n"
         "  sleep 2; waited=$((waited + 2))\n"
         "done\n"
         "echo \"the master " + where + " listens\"\n";
}

std::vector<std::string> task_hosts(const job& j, std::size_t task,
                                    const task_host_naming& naming) {
  const auto& t = j.tasks[task];
  const std::string& subdomain = naming.subdomain.empty() ? j.meta.name.str() : naming.subdomain;
  std::vector<std::string> hosts;
  for (int32_t i = 0; i < t.replicas; ++i) {
    if (!naming.hostname.empty()) {
      // Every pod of the task has the template's one host name: it is listed once.
      hosts.push_back(naming.hostname + "." + subdomain);
      break;
    }
    hosts.push_back(job_pod_name(j.meta.name.view(), t.name, i) + "." + subdomain);
  }
  return hosts;
}

std::map<std::string, std::string> job_hosts(const job& j,
                                             const std::vector<task_host_naming>& namings) {
  std::map<std::string, std::string> data;
  for (std::size_t t = 0; t < j.tasks.size(); ++t) {
    auto hosts = task_hosts(j, t, namings.at(t));
    std::string lines, commas;
    for (const auto& h : hosts) {
      lines += (lines.empty() ? "" : "\n") + h;
      commas += (commas.empty() ? "" : ",") + h;
    }
    const auto key = task_key_of(j.tasks[t].name);
    data[key + ".host"] = std::move(lines);
    data["VC_" + upper(key) + "_HOSTS"] = std::move(commas);
    data["VC_" + upper(key) + "_NUM"] = std::to_string(hosts.size());
  }
  return data;
}

std::string ssh_config(const job& j, const std::vector<task_host_naming>& namings, int32_t port) {
  std::string config = "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n";
  for (std::size_t t = 0; t < j.tasks.size(); ++t)
    for (const auto& host : task_hosts(j, t, namings.at(t))) {
      const auto name = host.substr(0, host.find('.'));
      config += "Host " + name + "\n  HostName " + host + "\n  Port " + std::to_string(port) +
                "\n";
    }
  return config;
}

std::vector<std::string> svc_host_variables(const job& j) {
  std::vector<std::string> names;
  for (const auto& t : j.tasks) {
    const auto key = upper(task_key_of(t.name));
    names.push_back("VC_" + key + "_HOSTS");
    names.push_back("VC_" + key + "_NUM");
  }
  return names;
}

std::optional<int32_t> hccl_rank(const job& j, const hcclrank_plugin_settings& s,
                                 std::string_view task, int32_t index) {
  if (task == s.master)
    return index;
  if (task != s.worker)
    return std::nullopt;
  const auto master = task_index_of(j, s.master);
  return (master ? j.tasks[*master].replicas : 0) + index;
}

std::string ray_head_command(const ray_plugin_settings& s) {
  return "ray start --head --block --dashboard-host=0.0.0.0 --port=" + std::to_string(s.port) +
         " --dashboard-port=" + std::to_string(s.dashboard_port) +
         " --ray-client-server-port=" + std::to_string(s.client_port);
}

std::optional<std::string> ray_worker_command(const job& j,
                                              const std::vector<task_host_naming>& namings,
                                              const ray_plugin_settings& s) {
  auto t = task_index_of(j, s.head);
  if (!t)
    return std::nullopt;
  return "ray start --block --address=" + domain_name(j, j.tasks[*t], namings.at(*t), 0) + ":" +
         std::to_string(s.port);
}

std::vector<std::pair<std::string_view, int32_t>> ray_ports(const ray_plugin_settings& s) {
  return {{"gcs", s.port}, {"dashboard", s.dashboard_port}, {"client-server", s.client_port}};
}

std::string ray_head_service_name(std::string_view job_name) {
  return std::string(job_name) + "-head-svc";
}

std::string svc_config_map_name(std::string_view job_name) {
  return std::string(job_name) + "-svc";
}

std::string ssh_secret_name(std::string_view job_name) {
  return std::string(job_name) + "-ssh";
}

} // namespace phalanx::scheduler
