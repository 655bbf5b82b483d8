#include "k8s/config.hpp"

#include "api/client.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace phalanx::k8s {

namespace {

// Strict base64 (RFC 4648 alphabet, padding optional, whitespace ignored): kubeconfig *-data
// fields. nullopt on any other character.
std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (char c : in) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = value(c);
    if (v < 0 || padding)
      return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad())
    return std::nullopt;
  return s.str();
}

std::string trim(std::string s) {
  auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!s.empty() && blank(s.back()))
    s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && blank(s[i]))
    ++i;
  return s.substr(i);
}

// A reader of one kubeconfig that prefixes every error with the file and the field.
class kubeconfig_reader {
 public:
  explicit kubeconfig_reader(std::string path) : path_(std::move(path)) {}

  status error(errc code, const std::string& field, const std::string& what) const {
    return {code, "kubeconfig " + path_ + ": " + field + ": " + what};
  }

  // The entry of `list` (clusters, users, contexts) whose name is `name`.
  result<YAML::Node> named(const YAML::Node& root, const std::string& list,
                           const std::string& name, const std::string& referrer) const {
    const YAML::Node entries = root[list];
    if (entries && !entries.IsSequence())
      return error(errc::invalid_argument, list, "must be a list");
    if (entries) {
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const YAML::Node e = entries[i];
        if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].as<std::string>() == name)
          return e;
      }
    }
    return error(errc::not_found, list,
                 "no entry named \"" + name + "\" (named by " + referrer + ")");
  }

  // A string field of `node`: absent -> "", not a scalar -> an error.
  result<std::string> string_field(const YAML::Node& node, const std::string& key,
                                   const std::string& field) const {
    const YAML::Node v = node[key];
    if (!v || v.IsNull())
      return std::string();
    if (!v.IsScalar())
      return error(errc::invalid_argument, field + "." + key, "must be a string");
    return v.as<std::string>();
  }

  result<bool> bool_field(const YAML::Node& node, const std::string& key,
                          const std::string& field) const {
    const YAML::Node v = node[key];
    if (!v || v.IsNull())
      return false;
    bool out = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out))
      return error(errc::invalid_argument, field + "." + key, "must be true or false");
    return out;
  }

  // A path from the kubeconfig, relative to the kubeconfig's own directory as kubectl resolves it.
  std::string resolve(const std::string& p) const {
    if (p.empty() || p.front() == '/')
      return p;
    return (std::filesystem::path(path_).parent_path() / p).lexically_normal().string();
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

} // namespace

result<connection_config> load_kubeconfig(const std::string& path, const std::string& context) {
  kubeconfig_reader r(path);
  auto text = read_file(path);
  if (!text)
    return status{errc::not_found, "kubeconfig " + path + ": cannot read the file"};
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return status{errc::invalid_argument,
                  "kubeconfig " + path + ": invalid YAML at line " +
                      std::to_string(e.mark.line + 1) +
                      ", column " + std::to_string(e.mark.column + 1) + ": " + e.msg};
  }
  if (!root.IsMap())
    return status{errc::invalid_argument, "kubeconfig " + path + ": not a YAML mapping"};

  try {
    std::string context_name = context;
    if (context_name.empty()) {
      auto current = r.string_field(root, "current-context", "kubeconfig");
      if (!current)
        return current.error();
      if (current->empty())
        return r.error(errc::not_found, "current-context",
                       "not set, and no context was asked for");
      context_name = *current;
    }
    auto ctx_entry = r.named(root, "contexts", context_name,
                             context.empty() ? "current-context" : "the caller");
    if (!ctx_entry)
      return ctx_entry.error();
    const std::string ctx_field = "contexts[\"" + context_name + "\"].context";
    const YAML::Node ctx = (*ctx_entry)["context"];
    if (!ctx || !ctx.IsMap())
      return r.error(errc::invalid_argument, ctx_field, "missing or not a mapping");
    auto cluster_name = r.string_field(ctx, "cluster", ctx_field);
    auto user_name = r.string_field(ctx, "user", ctx_field);
    auto ns = r.string_field(ctx, "namespace", ctx_field);
    if (!cluster_name)
      return cluster_name.error();
    if (!user_name)
      return user_name.error();
    if (!ns)
      return ns.error();
    if (cluster_name->empty())
      return r.error(errc::invalid_argument, ctx_field + ".cluster", "must be set");

    connection_config out;
    if (!ns->empty())
      out.default_namespace = *ns;

    // The cluster: server and how to trust it.
    auto cluster_entry = r.named(root, "clusters", *cluster_name, ctx_field + ".cluster");
    if (!cluster_entry)
      return cluster_entry.error();
    const std::string cl_field = "clusters[\"" + *cluster_name + "\"].cluster";
    const YAML::Node cluster = (*cluster_entry)["cluster"];
    if (!cluster || !cluster.IsMap())
      return r.error(errc::invalid_argument, cl_field, "missing or not a mapping");
    auto server = r.string_field(cluster, "server", cl_field);
    if (!server)
      return server.error();
    if (server->empty())
      return r.error(errc::invalid_argument, cl_field + ".server", "must be set");
    if (auto parsed = api::parse_server_address(*server); !parsed)
      return r.error(errc::invalid_argument, cl_field + ".server", parsed.error().message());
    out.server = *server;
    auto ca_path = r.string_field(cluster, "certificate-authority", cl_field);
    auto ca_data = r.string_field(cluster, "certificate-authority-data", cl_field);
    auto insecure = r.bool_field(cluster, "insecure-skip-tls-verify", cl_field);
    if (!ca_path)
      return ca_path.error();
    if (!ca_data)
      return ca_data.error();
    if (!insecure)
      return insecure.error();
    // kubectl takes the data when both are given.
    if (!ca_data->empty()) {
      auto pem = base64_decode(*ca_data);
      if (!pem)
        return r.error(errc::invalid_argument, cl_field + ".certificate-authority-data",
                       "not valid base64");
      out.ca_pem = std::move(*pem);
    } else if (!ca_path->empty()) {
      out.ca_file = r.resolve(*ca_path);
      if (!read_file(out.ca_file))
        return r.error(errc::not_found, cl_field + ".certificate-authority",
                       "cannot read " + out.ca_file);
    }
    out.insecure_skip_verify = *insecure;
    if (out.insecure_skip_verify && (!out.ca_pem.empty() || !out.ca_file.empty()))
      return r.error(errc::invalid_argument, cl_field + ".insecure-skip-tls-verify",
                     "cannot be combined with a certificate authority (kubectl refuses it too)");
    for (const char* unsupported : {"proxy-url", "tls-server-name"}) {
      auto v = r.string_field(cluster, unsupported, cl_field);
      if (!v)
        return v.error();
      if (!v->empty())
        return r.error(errc::invalid_argument, cl_field + "." + unsupported, "not supported");
    }

    // The user: a token or a token file; everything else is refused by name.
    if (!user_name->empty()) {
      auto user_entry = r.named(root, "users", *user_name, ctx_field + ".user");
      if (!user_entry)
        return user_entry.error();
      const std::string us_field = "users[\"" + *user_name + "\"].user";
      const YAML::Node user = (*user_entry)["user"];
      if (user && !user.IsNull()) {
        if (!user.IsMap())
          return r.error(errc::invalid_argument, us_field, "not a mapping");
        const std::pair<const char*, const char*> refused[] = {
            {"client-certificate", "client certificates are not supported"},
            {"client-certificate-data", "client certificates are not supported"},
            {"client-key", "client certificates are not supported"},
            {"client-key-data", "client certificates are not supported"},
            {"exec", "exec credential plugins are not supported"},
            {"auth-provider", "auth providers are not supported"},
            {"username", "basic authentication is not supported"},
            {"password", "basic authentication is not supported"},
        };
        for (const auto& [key, why] : refused)
          if (user[key] && !user[key].IsNull())
            return r.error(errc::invalid_argument, us_field + "." + key,
                           std::string(why) + " (user \"" + *user_name +
                               "\"): give it a token or tokenFile, e.g. a ServiceAccount's");
        auto token = r.string_field(user, "token", us_field);
        auto token_file = r.string_field(user, "tokenFile", us_field);
        if (!token)
          return token.error();
        if (!token_file)
          return token_file.error();
        out.token = *token;
        if (!token_file->empty()) {
          out.token_file = r.resolve(*token_file);
          if (!read_file(out.token_file))
            return r.error(errc::not_found, us_field + ".tokenFile",
                           "cannot read " + out.token_file);
        }
      }
    }
    return out;
  } catch (const YAML::Exception& e) {
    // A node of an unexpected shape deep inside (yaml-cpp throws on conversions).
    return status{errc::invalid_argument, "kubeconfig " + path + ": " + e.what()};
  }
}

result<connection_config> in_cluster_config(const in_cluster_options& options) {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  std::string host = options.service_host.empty() ? env("KUBERNETES_SERVICE_HOST")
                                                  : options.service_host;
  std::string port = options.service_port.empty() ? env("KUBERNETES_SERVICE_PORT")
                                                  : options.service_port;
  if (host.empty())
    return status{errc::failed_precondition,
                  "not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST is not set"};
  if (port.empty())
    return status{errc::failed_precondition,
                  "not running in a Kubernetes pod: KUBERNETES_SERVICE_PORT is not set"};
  connection_config out;
  out.server = "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
               port;
  if (auto parsed = api::parse_server_address(out.server); !parsed)
    return status{errc::invalid_argument,
                  "KUBERNETES_SERVICE_HOST/PORT: " + parsed.error().message()};
  if (!read_file(options.token_file))
    return status{errc::not_found, "in-cluster token " + options.token_file + ": cannot read it"};
  if (!read_file(options.ca_file))
    return status{errc::not_found, "in-cluster CA " + options.ca_file + ": cannot read it"};
  out.token_file = options.token_file;
  out.ca_file = options.ca_file;
  if (auto ns = read_file(options.namespace_file)) {
    if (auto t = trim(*ns); !t.empty())
      out.default_namespace = t;
  }
  return out;
}

} // namespace phalanx::k8s
