// Kubeconfig and in-cluster config: what is read, and the error a user reads for each thing
// that is wrong (file and field named).

#include "k8s/config.hpp"

#include "k8s/tests/test_util.hpp"

#include <gtest/gtest.h>

namespace phalanx::k8s {
namespace {

using test::temp_dir;

// "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" in base64.
constexpr const char* pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
constexpr const char* pem_base64 =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=";

std::string kubeconfig(const std::string& cluster, const std::string& user,
                       const std::string& extra_context_fields = "") {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "current-context: main\n"
         "clusters:\n"
         "- name: c1\n"
         "  cluster:\n" +
         cluster +
         "users:\n"
         "- name: u1\n"
         "  user:\n" +
         user +
         "contexts:\n"
         "- name: main\n"
         "  context:\n"
         "    cluster: c1\n"
         "    user: u1\n" +
         extra_context_fields +
         "- name: other\n"
         "  context:\n"
         "    cluster: c1\n"
         "    user: u1\n"
         "    namespace: other-ns\n";
}

TEST(Kubeconfig, ReadsServerInlineCaTokenAndNamespace) {
  temp_dir dir;
  auto path = dir.write("config",
                        kubeconfig("    server: https://10.1.2.3:6443\n"
                                   "    certificate-authority-data: " +
                                       std::string(pem_base64) + "\n",
                                   "    token: abc.def\n", "    namespace: team-a\n"));
  auto c = load_kubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->server, "https://10.1.2.3:6443");
  EXPECT_EQ(c->ca_pem, pem);
  EXPECT_EQ(c->ca_file, "");
  EXPECT_FALSE(c->insecure_skip_verify);
  EXPECT_EQ(c->token, "abc.def");
  EXPECT_EQ(c->token_file, "");
  EXPECT_EQ(c->default_namespace, "team-a");
  // What a kubeconfig does not say keeps the defaults.
  EXPECT_EQ(c->qps, 50);
  EXPECT_EQ(c->burst, 100);
  EXPECT_EQ(c->connections, 4);
  EXPECT_EQ(c->timeout, std::chrono::milliseconds(30000));
}

TEST(Kubeconfig, AnotherContextByName) {
  temp_dir dir;
  auto path = dir.write("config", kubeconfig("    server: https://h:443\n", "    token: t\n"));
  auto c = load_kubeconfig(path, "other");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->default_namespace, "other-ns");
  auto main = load_kubeconfig(path);
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main->default_namespace, "default");
}

TEST(Kubeconfig, RelativeCaFileAndTokenFileResolveBesideTheKubeconfig) {
  temp_dir dir;
  dir.write("ca.crt", pem);
  dir.write("token", "from-file\n");
  auto path = dir.write("config", kubeconfig("    server: https://h:6443\n"
                                             "    certificate-authority: ca.crt\n",
                                             "    token: inline\n"
                                             "    tokenFile: token\n"));
  auto c = load_kubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->ca_file, dir.path() + "/ca.crt");
  EXPECT_EQ(c->token_file, dir.path() + "/token");
  EXPECT_EQ(c->token, "inline");  // Kept, but token_file wins in the client.
}

TEST(Kubeconfig, InsecureSkipVerify) {
  temp_dir dir;
  auto path = dir.write("config", kubeconfig("    server: https://h:6443\n"
                                             "    insecure-skip-tls-verify: true\n",
                                             "    token: t\n"));
  auto c = load_kubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_TRUE(c->insecure_skip_verify);
}

TEST(Kubeconfig, ErrorsNameTheFileAndTheField) {
  struct row {
    const char* what;
    std::string cluster;
    std::string user;
    errc code;
    std::vector<std::string> message_parts;
  };
  const std::string server = "    server: https://h:6443\n";
  const row rows[] = {
      {"client certificate", server,
       "    client-certificate-data: AAAA\n    client-key-data: AAAA\n", errc::invalid_argument,
       {"users[\"u1\"].user.client-certificate-data",
        "client certificates are not supported (user \"u1\")"}},
      {"client certificate file", server, "    client-certificate: /x.crt\n",
       errc::invalid_argument, {"users[\"u1\"].user.client-certificate", "user \"u1\""}},
      {"exec plugin", server, "    exec:\n      command: aws\n", errc::invalid_argument,
       {"users[\"u1\"].user.exec", "exec credential plugins are not supported"}},
      {"basic auth", server, "    username: a\n    password: b\n", errc::invalid_argument,
       {"users[\"u1\"].user.username", "basic authentication"}},
      {"no server", "    certificate-authority-data: " + std::string(pem_base64) + "\n",
       "    token: t\n", errc::invalid_argument,
       {"clusters[\"c1\"].cluster.server", "must be set"}},
      {"bad scheme", "    server: ftp://h:21\n", "    token: t\n", errc::invalid_argument,
       {"clusters[\"c1\"].cluster.server", "scheme"}},
      {"path prefix", "    server: https://h:6443/k8s/clusters/c-1\n", "    token: t\n",
       errc::invalid_argument, {"clusters[\"c1\"].cluster.server", "path"}},
      {"bad base64", server + "    certificate-authority-data: '***'\n", "    token: t\n",
       errc::invalid_argument, {"certificate-authority-data", "not valid base64"}},
      {"missing CA file", server + "    certificate-authority: /nonexistent/ca.crt\n",
       "    token: t\n", errc::not_found,
       {"clusters[\"c1\"].cluster.certificate-authority", "/nonexistent/ca.crt"}},
      {"missing token file", server, "    tokenFile: /nonexistent/token\n", errc::not_found,
       {"users[\"u1\"].user.tokenFile", "/nonexistent/token"}},
      {"insecure with CA",
       server + "    insecure-skip-tls-verify: true\n    certificate-authority-data: " +
           pem_base64 + "\n",
       "    token: t\n", errc::invalid_argument,
       {"insecure-skip-tls-verify", "cannot be combined"}},
      {"insecure not a bool", server + "    insecure-skip-tls-verify: maybe\n", "    token: t\n",
       errc::invalid_argument, {"insecure-skip-tls-verify", "true or false"}},
  };
  for (const auto& r : rows) {
    temp_dir dir;
    auto path = dir.write("config", kubeconfig(r.cluster, r.user));
    auto c = load_kubeconfig(path);
    ASSERT_FALSE(c.ok()) << r.what;
    EXPECT_EQ(c.error().code(), r.code) << r.what << ": " << c.error().to_string();
    EXPECT_NE(c.error().message().find("kubeconfig " + path + ": "), std::string::npos)
        << r.what << ": " << c.error().message();
    for (const auto& part : r.message_parts)
      EXPECT_NE(c.error().message().find(part), std::string::npos)
          << r.what << ": \"" << part << "\" not in: " << c.error().message();
  }
}

TEST(Kubeconfig, MissingFileContextClusterUser) {
  temp_dir dir;
  auto missing = load_kubeconfig(dir.path() + "/nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), errc::not_found);
  EXPECT_NE(missing.error().message().find(dir.path() + "/nope"), std::string::npos);

  auto path = dir.write("config", kubeconfig("    server: https://h:6443\n", "    token: t\n"));
  auto no_context = load_kubeconfig(path, "prod");
  ASSERT_FALSE(no_context.ok());
  EXPECT_EQ(no_context.error().code(), errc::not_found);
  EXPECT_NE(no_context.error().message().find("contexts: no entry named \"prod\""),
            std::string::npos)
      << no_context.error().message();

  auto dangling = dir.write("dangling", "current-context: x\n"
                                        "contexts:\n"
                                        "- name: x\n"
                                        "  context: {cluster: gone, user: u}\n"
                                        "clusters: []\n");
  auto no_cluster = load_kubeconfig(dangling);
  ASSERT_FALSE(no_cluster.ok());
  EXPECT_EQ(no_cluster.error().code(), errc::not_found);
  EXPECT_NE(no_cluster.error().message().find(
                "clusters: no entry named \"gone\" (named by contexts[\"x\"].context.cluster)"),
            std::string::npos)
      << no_cluster.error().message();

  auto no_current = dir.write("nocurrent", "contexts: []\n");
  auto r = load_kubeconfig(no_current);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("current-context: not set"), std::string::npos)
      << r.error().message();
}

TEST(Kubeconfig, MalformedYamlNamesTheLine) {
  temp_dir dir;
  auto path = dir.write("config", "clusters:\n  - name: [unclosed\n");
  auto c = load_kubeconfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), errc::invalid_argument);
  EXPECT_NE(c.error().message().find("invalid YAML at line"), std::string::npos)
      << c.error().message();
}

TEST(InClusterConfig, ReadsEnvironmentAndServiceAccountFiles) {
  temp_dir dir;
  in_cluster_options o;
  o.service_host = "10.96.0.1";
  o.service_port = "443";
  o.token_file = dir.write("token", "sa-token\n");
  o.ca_file = dir.write("ca.crt", pem);
  o.namespace_file = dir.write("namespace", "volcano-system\n");
  auto c = in_cluster_config(o);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, o.token_file);
  EXPECT_EQ(c->token, "");
  EXPECT_EQ(c->ca_file, o.ca_file);
  EXPECT_EQ(c->default_namespace, "volcano-system");

  o.service_host = "fd00::1";
  o.namespace_file = dir.path() + "/absent";
  auto v6 = in_cluster_config(o);
  ASSERT_TRUE(v6.ok()) << v6.error().to_string();
  EXPECT_EQ(v6->server, "https://[fd00::1]:443");
  EXPECT_EQ(v6->default_namespace, "default");
}

TEST(InClusterConfig, FromTheEnvironmentVariables) {
  temp_dir dir;
  in_cluster_options o;
  o.token_file = dir.write("token", "t");
  o.ca_file = dir.write("ca.crt", pem);
  ::setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
  auto c = in_cluster_config(o);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");

  auto outside = in_cluster_config(o);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code(), errc::failed_precondition);
  EXPECT_NE(outside.error().message().find("KUBERNETES_SERVICE_HOST is not set"),
            std::string::npos);
}

TEST(InClusterConfig, MissingFilesAreNamed) {
  temp_dir dir;
  in_cluster_options o;
  o.service_host = "10.0.0.1";
  o.service_port = "443";
  o.token_file = dir.path() + "/no-token";
  o.ca_file = dir.write("ca.crt", pem);
  auto c = in_cluster_config(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), errc::not_found);
  EXPECT_NE(c.error().message().find(dir.path() + "/no-token"), std::string::npos);

  o.token_file = dir.write("token", "t");
  o.ca_file = dir.path() + "/no-ca";
  auto no_ca = in_cluster_config(o);
  ASSERT_FALSE(no_ca.ok());
  EXPECT_NE(no_ca.error().message().find(dir.path() + "/no-ca"), std::string::npos);
}

} // namespace
} // namespace phalanx::k8s
