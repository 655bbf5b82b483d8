#include "k8s/testing/control_plane.hpp"

#include "k8s/operations.hpp"

#include "api/client.hpp"
#include "api/codec.hpp"

#include <boost/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace phalanx::k8s::testing {

namespace json = boost::json;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tail(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  for (std::size_t n = 0; n <= lines && pos > 0; ++n) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos)
      return text;
  }
  return text.substr(pos + 1);
}

// Runs argv with `env` added to the environment, stdin from /dev/null, stdout to `out_file`
// (or /dev/null) and stderr to `err_file` (or /dev/null). The exit code; -1 if it could not run.
int run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
        const std::string& out_file, const std::string& err_file, bool detach = false,
        pid_t* pid_out = nullptr) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    auto eq = s.find('=');
    if (eq != std::string::npos && env.count(s.substr(0, eq)))
      continue;
    env_strings.push_back(std::move(s));
  }
  for (const auto& [k, v] : env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& s : args)
    argp.push_back(s.data());
  argp.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.empty() ? "/dev/null" : out_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.empty() ? "/dev/null" : err_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (detach)
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argp[0], &fa, &attr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    return -1;
  if (pid_out) {
    *pid_out = pid;
    return 0;
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

// A value of control-plane.sh's env file (printf %q): plain, '...' or $'...' quoted.
std::string unquote(std::string v) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'')
    return v.substr(1, v.size() - 2);
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size())
      ++i;
    out.push_back(v[i]);
  }
  return out;
}

} // namespace

control_plane& control_plane::shared() {
  static std::once_flag once;
  static std::unique_ptr<control_plane> instance;
  static std::string failure;
  std::call_once(once, [] {
    try {
      instance.reset(new control_plane());
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!instance)
    throw std::runtime_error(failure);
  return *instance;
}

control_plane::control_plane() : source_dir_(PHALANX_SOURCE_DIR) {
  if (const char* b = std::getenv("PHALANX_CONTROL_PLANE_BIN"); b && *b) {
    bin_ = b;
  } else {
    std::string tmp = std::filesystem::temp_directory_path() / "phalanx-k8s-bin-XXXXXX";
    int fd = ::mkstemp(tmp.data());
    if (fd >= 0)
      ::close(fd);
    int rc = run({"/bin/bash", source_dir_ + "/k8s/testing/build-control-plane.sh", "--print-dir"},
                 {}, tmp, tmp + ".err");
    std::string out = read_text(tmp);
    std::string err = read_text(tmp + ".err");
    ::unlink(tmp.c_str());
    ::unlink((tmp + ".err").c_str());
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    if (rc != 0 || out.empty())
      throw std::runtime_error(
          "the test control plane (kube-apiserver 1.37, etcd 3.6) is not built: run `make "
          "k8s-control-plane` first (a cold build takes 11-15 min; see k8s/testing/README.md). "
          "k8s/testing/build-control-plane.sh --print-dir exited " +
          std::to_string(rc) + ": " + err);
    bin_ = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
  }
  std::string templ = std::filesystem::temp_directory_path() / "phalanx-k8s-cp-XXXXXX";
  if (!::mkdtemp(templ.data()))
    throw std::runtime_error("cannot make a temporary directory for the control plane");
  dir_ = templ;
  start();

  // The watchdog: stops the control plane when this process is gone, whichever way it went. Its
  // own session, so that a signal to the test's process group does not take it along.
  pid_t watchdog = 0;
  std::string script =
      "while kill -0 " + std::to_string(::getpid()) +
      " 2>/dev/null; do sleep 1; done; \"$0\" stop \"$1\"; rm -rf \"$1\"";
  run({"/bin/bash", "-c", script, source_dir_ + "/k8s/testing/control-plane.sh", dir_}, {}, "",
      "", true, &watchdog);
}

void control_plane::start() {
  std::string flags = "--watch-cache-sizes=configmaps#0";
  if (const char* extra = std::getenv("PHALANX_APISERVER_FLAGS"); extra && *extra)
    flags += std::string(" ") + extra;
  std::string log = dir_ + "/control-plane-start.log";
  int rc = run({"/bin/bash", source_dir_ + "/k8s/testing/control-plane.sh", "start", dir_},
               {{"PHALANX_CONTROL_PLANE_BIN", bin_}, {"PHALANX_APISERVER_FLAGS", flags}}, log, log);
  if (rc != 0)
    throw std::runtime_error("k8s/testing/control-plane.sh start " + dir_ + " exited " +
                             std::to_string(rc) + ":\n" + tail(read_text(log), 30));
  read_env();
  auto c = client::create(admin_config());
  if (!c)
    throw std::runtime_error("admin client: " + c.error().to_string());
  std::lock_guard lock(mutex_);
  if (admin_)
    retired_.push_back(std::move(admin_));
  admin_ = std::move(*c);
}

void control_plane::read_env() {
  std::istringstream in(read_text(dir_ + "/env"));
  std::map<std::string, std::string> env;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("export ", 0) != 0)
      continue;
    line = line.substr(7);
    auto eq = line.find('=');
    if (eq == std::string::npos)
      continue;
    env[line.substr(0, eq)] = unquote(line.substr(eq + 1));
  }
  for (const char* key : {"APISERVER_URL", "ETCD_URL", "CA_FILE", "ADMIN_TOKEN", "KUBECONFIG"})
    if (env[key].empty())
      throw std::runtime_error("control-plane.sh wrote no " + std::string(key) + " to " + dir_ +
                               "/env");
  std::lock_guard lock(mutex_);
  env_ = std::move(env);
}

control_plane::~control_plane() {
  run({"/bin/bash", source_dir_ + "/k8s/testing/control-plane.sh", "stop", dir_}, {}, "", "");
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string control_plane::server() const {
  std::lock_guard lock(mutex_);
  return env_.at("APISERVER_URL");
}

std::string control_plane::ca_file() const {
  std::lock_guard lock(mutex_);
  return env_.at("CA_FILE");
}

std::string control_plane::admin_token() const {
  std::lock_guard lock(mutex_);
  return env_.at("ADMIN_TOKEN");
}

std::string control_plane::kubeconfig_path() const {
  std::lock_guard lock(mutex_);
  return env_.at("KUBECONFIG");
}

std::string control_plane::etcd_endpoint() const {
  std::lock_guard lock(mutex_);
  return env_.at("ETCD_URL");
}

connection_config control_plane::admin_config() const {
  connection_config c;
  c.server = server();
  c.ca_file = ca_file();
  c.token = admin_token();
  c.qps = 0;  // Tests set up thousands of objects; the limiter has tests of its own.
  c.user_agent = "phalanx-k8s-tests";
  return c;
}

client& control_plane::admin() {
  std::lock_guard lock(mutex_);
  return *admin_;
}

status control_plane::create_namespace(const std::string& name) {
  json::value ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  auto r = post_json(admin(), "/api/v1/namespaces", ns);
  if (!r && r.error().code() != errc::already_exists)
    return r.error();
  return {};
}

result<std::string> control_plane::service_account_token(const std::string& ns,
                                                         const std::string& name) {
  const std::string sa_path = "/api/v1/namespaces/" + ns + "/serviceaccounts";
  json::value sa = {{"apiVersion", "v1"},
                    {"kind", "ServiceAccount"},
                    {"metadata", {{"name", name}, {"namespace", ns}}}};
  if (auto r = post_json(admin(), sa_path, sa); !r && r.error().code() != errc::already_exists)
    return r.error();
  json::value request = {{"apiVersion", "authentication.k8s.io/v1"},
                         {"kind", "TokenRequest"},
                         {"spec", {{"expirationSeconds", 86400}}}};
  auto r = post_json(admin(), sa_path + "/" + name + "/token", request);
  if (!r)
    return r.error();
  const json::value* token = nullptr;
  if (r->is_object())
    if (auto* st = r->get_object().if_contains("status"); st && st->is_object())
      token = st->get_object().if_contains("token");
  if (!token || !token->is_string())
    return status{errc::internal, "TokenRequest for " + ns + "/" + name + ": no status.token"};
  return std::string(token->get_string());
}

status control_plane::create_node(const std::string& name, const std::string& cpu,
                                  const std::string& memory, int pods,
                                  const std::map<std::string, std::string>& labels) {
  json::object label_object;
  for (const auto& [k, v] : labels)
    label_object[k] = v;
  json::value node = {{"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", name}, {"labels", label_object}}}};
  if (auto r = post_json(admin(), "/api/v1/nodes", node); !r)
    return r.error();
  json::object resources{{"cpu", cpu}, {"memory", memory}, {"pods", std::to_string(pods)}};
  json::value patch = {
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions",
         json::array{{{"type", "Ready"},
                      {"status", "True"},
                      {"reason", "KubeletReady"},
                      {"message", "set by the Phalanx test control plane"}}}}}}};
  if (auto r = patch_json(admin(), "/api/v1/nodes/" + name + "/status", patch, patch_type::merge);
      !r)
    return r.error();
  return {};
}

result<int64_t> control_plane::compact_etcd() {
  auto address = api::parse_server_address(etcd_endpoint());
  if (!address)
    return address.error();
  api::client_options o;
  o.server = *address;
  o.timeout = std::chrono::seconds(30);
  api::http_client etcd(o);
  // The current revision is in every response's header; a range over the key "\0" is cheap.
  auto post = [&](const std::string& target, const std::string& body) {
    api::client_request r;
    r.method = "POST";
    r.target = target;
    r.body = body;
    r.content_type = "application/json";
    return etcd.send(r);
  };
  auto range = post("/v3/kv/range", R"({"key":"AA=="})");
  if (!range)
    return range.error();
  if (range->status != 200)
    return status{errc::unavailable, "etcd /v3/kv/range: HTTP " + std::to_string(range->status) +
                                         ": " + range->body};
  auto v = api::parse_json(range->body);
  if (!v)
    return status{errc::corruption, "etcd /v3/kv/range: " + v.error().message};
  int64_t revision = 0;
  try {
    // The gateway writes int64 fields as strings.
    revision = std::stoll(std::string(v->at("header").at("revision").as_string()));
  } catch (const std::exception&) {
    return status{errc::corruption, "etcd /v3/kv/range: no header.revision: " + range->body};
  }
  auto compact = post("/v3/kv/compaction",
                      R"({"revision":")" + std::to_string(revision) + R"(","physical":true})");
  if (!compact)
    return compact.error();
  if (compact->status != 200)
    return status{errc::unavailable, "etcd /v3/kv/compaction: HTTP " +
                                         std::to_string(compact->status) + ": " + compact->body};
  return revision;
}

status control_plane::restart_apiserver() {
  run({"/bin/bash", source_dir_ + "/k8s/testing/control-plane.sh", "stop", dir_}, {}, "", "");
  try {
    start();
  } catch (const std::exception& e) {
    return {errc::unavailable, e.what()};
  }
  return {};
}

} // namespace phalanx::k8s::testing
