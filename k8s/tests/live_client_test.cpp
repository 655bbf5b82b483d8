// The client against the real apiserver (k8s/testing/control_plane.hpp): the kubeconfig that
// control-plane.sh writes, the pool under threads, the rate limiter, a token file that rotates,
// and RBAC's 403 naming who was refused.

#include "k8s/client.hpp"
#include "k8s/config.hpp"
#include "k8s/operations.hpp"
#include "k8s/testing/control_plane.hpp"
#include "k8s/testing/tcp_proxy.hpp"

#include "k8s/tests/test_util.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

namespace phalanx::k8s {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::control_plane;
using test::temp_dir;

request_spec get(std::string target) {
  request_spec r;
  r.target = std::move(target);
  return r;
}

// Who the apiserver says the client is (SelfSubjectReview, allowed to every authenticated user).
std::string whoami(client& c) {
  json::value review = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
  auto r = post_json(c, "/apis/authentication.k8s.io/v1/selfsubjectreviews", review);
  if (!r)
    return "error: " + r.error().to_string();
  return std::string(r->at("status").at("userInfo").at("username").as_string());
}

TEST(LiveClient, KubeconfigOfTheControlPlaneWorks) {
  auto& cp = control_plane::shared();
  auto config = load_kubeconfig(cp.kubeconfig_path());
  ASSERT_TRUE(config.ok()) << config.error().to_string();
  EXPECT_EQ(config->server, cp.server());
  EXPECT_FALSE(config->ca_pem.empty());  // certificate-authority-data, inline.
  EXPECT_EQ(config->default_namespace, "default");
  auto c = client::create(*config);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  auto version = (*c)->request(get("/version"));
  ASSERT_TRUE(version.ok()) << version.error().to_string();
  ASSERT_EQ(version->status, 200) << version->body;
  EXPECT_NE(version->body.find("\"gitVersion\": \"v1.37.2\""), std::string::npos) << version->body;
  EXPECT_EQ(whoami(**c), "admin");
}

TEST(LiveClient, ThreadsShareThePool) {
  auto& cp = control_plane::shared();
  auto config = cp.admin_config();
  config.connections = 3;
  auto c = client::create(config);
  ASSERT_TRUE(c.ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto r = (*c)->request(get("/api/v1/namespaces/default"));
        if (r.ok() && r->status == 200)
          ++ok;
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 200);
  EXPECT_EQ((*c)->metrics().responses, 200u);
  EXPECT_EQ((*c)->metrics().transport_errors, 0u);
}

TEST(LiveClient, RateLimiterMakesCallersWaitUnlessBypassed) {
  auto& cp = control_plane::shared();
  auto config = cp.admin_config();
  config.qps = 20;
  config.burst = 2;
  auto c = client::create(config);
  ASSERT_TRUE(c.ok());
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ((*c)->request(get("/version"))->status, 200);
  // Two from the burst, then every one waited for its token.
  EXPECT_GE((*c)->metrics().limiter_waits, 8u);
  EXPECT_GT((*c)->metrics().limiter_wait_time, 0ns);
  const auto waits = (*c)->metrics().limiter_waits;
  auto urgent = get("/version");
  urgent.bypass_rate_limit = true;
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ((*c)->request(urgent)->status, 200);
  EXPECT_EQ((*c)->metrics().limiter_waits, waits);
}

TEST(LiveClient, TokenFileRotationIsUsedAtOnce) {
  auto& cp = control_plane::shared();
  auto first = cp.service_account_token("default", "rotating-a");
  auto second = cp.service_account_token("default", "rotating-b");
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  ASSERT_TRUE(second.ok()) << second.error().to_string();
  temp_dir dir;
  auto path = dir.write("token", *first + "\n");
  auto config = cp.admin_config();
  config.token = cp.admin_token();  // Ignored: the file wins.
  config.token_file = path;
  auto c = client::create(config);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(whoami(**c), "system:serviceaccount:default:rotating-a");
  EXPECT_EQ(whoami(**c), "system:serviceaccount:default:rotating-a");
  // As the kubelet does it: a new file renamed over the old one.
  auto next = dir.write("token.next", *second);
  ASSERT_EQ(std::rename(next.c_str(), path.c_str()), 0);
  EXPECT_EQ(whoami(**c), "system:serviceaccount:default:rotating-b");
  EXPECT_EQ((*c)->metrics().token_reads, 2u);
}

TEST(LiveClient, ForbiddenNamesTheServiceAccountUntilRbacGrantsIt) {
  auto& cp = control_plane::shared();
  ASSERT_TRUE(cp.create_namespace("rbac").ok());
  auto token = cp.service_account_token("rbac", "nobody");
  ASSERT_TRUE(token.ok()) << token.error().to_string();
  auto config = cp.admin_config();
  config.token = *token;
  auto c = client::create(config);
  ASSERT_TRUE(c.ok());
  auto denied = get_json(**c, "/api/v1/pods");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code(), errc::unauthenticated);
  EXPECT_NE(denied.error().message().find("HTTP 403 Forbidden"), std::string::npos)
      << denied.error().message();
  EXPECT_NE(denied.error().message().find("system:serviceaccount:rbac:nobody"), std::string::npos)
      << denied.error().message();
  // Watches say the same, as an HTTP status.
  auto w = (*c)->open_watch("/api/v1/pods?watch=1");
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  EXPECT_EQ((*w)->http_status(), 403);

  // Granted list on pods: allowed.
  json::value role = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRole"},
      {"metadata", {{"name", "pod-lister"}}},
      {"rules", json::array{{{"apiGroups", json::array{""}},
                             {"resources", json::array{"pods"}},
                             {"verbs", json::array{"list", "watch"}}}}}};
  json::value binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", {{"name", "nobody-lists-pods"}}},
      {"roleRef",
       {{"apiGroup", "rbac.authorization.k8s.io"},
        {"kind", "ClusterRole"},
        {"name", "pod-lister"}}},
      {"subjects",
       json::array{{{"kind", "ServiceAccount"}, {"name", "nobody"}, {"namespace", "rbac"}}}}};
  ASSERT_TRUE(post_json(cp.admin(), "/apis/rbac.authorization.k8s.io/v1/clusterroles", role).ok());
  ASSERT_TRUE(
      post_json(cp.admin(), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
          .ok());
  // RBAC's authorizer follows its informers: allowed within moments.
  EXPECT_TRUE(test::eventually([&] { return get_json(**c, "/api/v1/pods").ok(); }));
}

TEST(LiveClient, UnauthenticatedTokenIs401) {
  auto& cp = control_plane::shared();
  auto config = cp.admin_config();
  config.token = "not-a-token";
  auto c = client::create(config);
  ASSERT_TRUE(c.ok());
  auto r = get_json(**c, "/api/v1/namespaces");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::unauthenticated);
  EXPECT_NE(r.error().message().find("HTTP 401"), std::string::npos) << r.error().message();
}

// A request that gets no answer times out, and the connection it leaves is not used again: the
// aborted read's handlers ran on the stream before it was dropped (ASan found them running on a
// freed stream), and the next request opens a new connection. Both places a timeout can strike:
// in the exchange on an open connection, and in the TLS handshake of a new one.
TEST(LiveClient, ARequestWithoutAnAnswerTimesOutAndTheNextOneWorks) {
  auto& cp = control_plane::shared();
  auto proxy = testing::tcp_proxy::start(cp.server());
  ASSERT_TRUE(proxy.ok()) << proxy.error().to_string();
  auto config = cp.admin_config();
  config.server = (*proxy)->url();
  config.timeout = 700ms;
  config.connections = 1;
  auto c = client::create(config);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  auto version = [&]() -> status {
    auto r = (*c)->request(get("/version"));
    if (!r)
      return r.error();
    if (r->status != 200)
      return {errc::internal, "HTTP " + std::to_string(r->status)};
    return {};
  };
  ASSERT_TRUE(version().ok());

  (*proxy)->freeze();  // The connection is open: the exchange times out.
  auto hung = version();
  EXPECT_EQ(hung.code(), errc::io_error) << hung.to_string();
  EXPECT_NE(hung.message().find("no answer within 700 ms"), std::string::npos) << hung.to_string();
  auto handshake = version();  // A new connection: its TLS handshake times out.
  EXPECT_EQ(handshake.code(), errc::io_error) << handshake.to_string();
  EXPECT_NE(handshake.message().find("timed out"), std::string::npos) << handshake.to_string();

  (*proxy)->thaw();
  EXPECT_TRUE(version().ok());
  EXPECT_GE((*proxy)->accepted(), 3);
}

} // namespace
} // namespace phalanx::k8s
