#include "scheduler/job_plugins.hpp"

#include "scheduler/job.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

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
                  " plugin knows " + known + ")");
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
              int64_t port = 0;
              std::from_chars(value.data(), value.data() + value.size(), port);
              s.port = port >= 1 && port <= 65535 ? int32_t(port) : 22;
            }
          },
          errors);
      out.ssh = s;
    }
  }
  return out;
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

std::string svc_config_map_name(std::string_view job_name) {
  return std::string(job_name) + "-svc";
}

std::string ssh_secret_name(std::string_view job_name) {
  return std::string(job_name) + "-ssh";
}

} // namespace phalanx::scheduler
