// The client's parts that need no apiserver: the token bucket's arithmetic, the token file
// that rotates, the classification of answers, and the enums' strings.

#include "k8s/client.hpp"
#include "k8s/lease.hpp"
#include "k8s/operations.hpp"
#include "k8s/reflector.hpp"

#include "k8s/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>

namespace phalanx::k8s {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;
using test::temp_dir;

TEST(TokenBucket, BurstThenOneEveryPeriod) {
  const auto t0 = clock::time_point{} + 1000s;
  token_bucket b(10, 3, t0);  // 10 qps: one token per 100 ms.
  // Three saved tokens go at once.
  EXPECT_EQ(b.take(t0), clock::duration::zero());
  EXPECT_EQ(b.take(t0), clock::duration::zero());
  EXPECT_EQ(b.take(t0), clock::duration::zero());
  // Then each caller waits for its own token, in arrival order: 100, 200, 300 ms.
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(b.take(t0)), 100ms);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(b.take(t0)), 200ms);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(b.take(t0)), 300ms);
  EXPECT_NEAR(b.tokens(t0), -3.0, 1e-9);
  // 300 ms later the three reservations are due and nothing is saved.
  EXPECT_NEAR(b.tokens(t0 + 300ms), 0.0, 1e-9);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(b.take(t0 + 300ms)), 100ms);
}

TEST(TokenBucket, RefillsUpToBurstOnly) {
  const auto t0 = clock::time_point{} + 1000s;
  token_bucket b(5, 2, t0);
  EXPECT_EQ(b.take(t0), clock::duration::zero());
  EXPECT_EQ(b.take(t0), clock::duration::zero());
  // An hour of quiet saves two tokens, not 18,000.
  const auto later = t0 + 3600s;
  EXPECT_NEAR(b.tokens(later), 2.0, 1e-9);
  EXPECT_EQ(b.take(later), clock::duration::zero());
  EXPECT_EQ(b.take(later), clock::duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(b.take(later)), 200ms);
}

TEST(TokenBucket, SteadyRateOverALongRun) {
  // 1,000 callers spread over time at exactly qps: the total wait is what the rate implies.
  const auto t0 = clock::time_point{} + 1000s;
  token_bucket b(50, 100, t0);
  clock::duration last{};
  for (int i = 0; i < 1000; ++i)
    last = b.take(t0);
  // 100 at once, the other 900 at 50/s: the last one goes 18 s later.
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(last), 18000ms);
}

TEST(TokenBucket, ZeroOrNegativeQpsIsUnlimited) {
  const auto t0 = clock::time_point{} + 1000s;
  for (double qps : {0.0, -1.0}) {
    token_bucket b(qps, 1, t0);
    for (int i = 0; i < 1000; ++i)
      ASSERT_EQ(b.take(t0), clock::duration::zero());
  }
}

TEST(TokenBucket, BurstBelowOneCountsAsOne) {
  const auto t0 = clock::time_point{} + 1000s;
  token_bucket b(1, 0, t0);
  EXPECT_EQ(b.take(t0), clock::duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(b.take(t0)), 1000ms);
}

TEST(BearerTokenSource, FixedTokenWithoutFile) {
  bearer_token_source s("abc", "");
  auto t = s.current();
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, "abc");
  EXPECT_EQ(s.reads(), 0u);
}

TEST(BearerTokenSource, FollowsTheFileAsItRotates) {
  temp_dir dir;
  auto path = dir.write("token", "  first\n");
  bearer_token_source s("ignored", path);
  ASSERT_EQ(*s.current(), "first");
  ASSERT_EQ(*s.current(), "first");
  EXPECT_EQ(s.reads(), 1u);  // Unchanged: not read again.

  // The kubelet's way: a new file renamed over the old one (a new inode).
  auto next = dir.write("token.new", "second");
  ASSERT_EQ(std::rename(next.c_str(), path.c_str()), 0);
  EXPECT_EQ(*s.current(), "second");
  EXPECT_EQ(s.reads(), 2u);

  // Rewritten in place with another length.
  dir.write("token", "third-token");
  EXPECT_EQ(*s.current(), "third-token");

  // Rewritten in place with the same length, within the timestamp granularity: seen after
  // invalidate() (what a 401 does).
  dir.write("token", "fourth-toke");
  s.invalidate();
  EXPECT_EQ(*s.current(), "fourth-toke");

  // Gone for a moment: the last token stays.
  ASSERT_EQ(std::remove(path.c_str()), 0);
  auto kept = s.current();
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, "fourth-toke");
}

TEST(BearerTokenSource, NeverReadableIsAnErrorNamingTheFile) {
  temp_dir dir;
  bearer_token_source s("", dir.path() + "/missing");
  auto t = s.current();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code(), errc::not_found);
  EXPECT_NE(t.error().message().find(dir.path() + "/missing"), std::string::npos);
}

api::client_response answer(int code, std::string body = "",
                            std::map<std::string, std::string> headers = {}) {
  api::client_response r;
  r.status = code;
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

TEST(Classify, RetryableAnswers) {
  struct row {
    result<api::client_response> r;
    bool retryable;
  };
  const row rows[] = {
      {answer(200), false},
      {answer(201), false},
      {answer(400), false},
      {answer(401), false},
      {answer(403), false},
      {answer(404), false},
      {answer(409), false},
      {answer(410), false},
      {answer(422), false},
      {answer(429), true},
      {answer(500), true},
      {answer(503), true},
      {answer(504), true},
      {status{errc::unavailable, "connection refused"}, true},
      {status{errc::io_error, "no answer within 30000 ms"}, true},
      {status{errc::invalid_argument, "bad target"}, false},
  };
  for (const auto& r : rows)
    EXPECT_EQ(is_retryable(r.r), r.retryable)
        << (r.r.ok() ? std::to_string(r.r->status) : r.r.error().to_string());
}

TEST(Classify, RetryAfter) {
  EXPECT_EQ(retry_after(answer(429, "", {{"retry-after", "3"}})), std::chrono::seconds(3));
  EXPECT_EQ(retry_after(answer(503, "", {{"retry-after", "0"}})), std::chrono::seconds(0));
  EXPECT_EQ(retry_after(answer(429)), std::nullopt);
  EXPECT_EQ(retry_after(answer(429, "", {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}})),
            std::nullopt);
  EXPECT_EQ(retry_after(answer(429, "", {{"retry-after", "-1"}})), std::nullopt);
  EXPECT_EQ(retry_after(result<api::client_response>(errc::unavailable, "x")), std::nullopt);
}

// What RBAC refused, read back from the apiserver's own sentences (kube-apiserver 1.37's
// authorizer, as the live tests see them): namespaced, cluster-scoped, a subresource.
TEST(Classify, DeniedCallNamesTheMissingRule) {
  auto forbid = [](std::string_view message) {
    return status_of(answer(403, R"({"kind":"Status","reason":"Forbidden","code":403,"message":")" +
                                     std::string(message) + R"("})"),
                     "bind t/g-0")
        .message();
  };
  auto binding = denied_call_of(forbid(
      R"(pods \"g-0\" is forbidden: User \"system:serviceaccount:phalanx-system:x\" cannot create resource \"pods/binding\" in API group \"\" in the namespace \"t\")"));
  ASSERT_TRUE(binding);
  EXPECT_EQ(binding->verb, "create");
  EXPECT_EQ(binding->resource, "pods/binding");
  EXPECT_EQ(binding->api_group, "");
  EXPECT_EQ(binding->namespace_name, "t");

  auto nodes = denied_call_of(forbid(
      R"(nodes is forbidden: User \"system:serviceaccount:phalanx-system:x\" cannot list resource \"nodes\" in API group \"\" at the cluster scope)"));
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->verb, "list");
  EXPECT_EQ(nodes->resource, "nodes");
  EXPECT_EQ(nodes->namespace_name, "");

  auto update = denied_call_of(forbid(
      R"(podgroups.scheduling.volcano.sh \"g\" is forbidden: User \"system:serviceaccount:phalanx-system:x\" cannot update resource \"podgroups\" in API group \"scheduling.volcano.sh\" in the namespace \"t\")"));
  ASSERT_TRUE(update);
  EXPECT_EQ(update->verb, "update");
  EXPECT_EQ(update->resource, "podgroups");
  EXPECT_EQ(update->api_group, "scheduling.volcano.sh");

  // Not RBAC's sentence, or not a 403: nothing to name.
  EXPECT_EQ(denied_call_of(forbid("admission webhook \\\"x\\\" denied the request")),
            std::nullopt);
  auto unauthorized = status_of(
      answer(401, R"({"kind":"Status","reason":"Unauthorized","message":"Unauthorized"})"),
      "list pods");
  EXPECT_EQ(denied_call_of(unauthorized.message()), std::nullopt);
  EXPECT_EQ(denied_call_of(
                R"(x: HTTP 422 Invalid: User "u" cannot create resource "pods" in API group "")"),
            std::nullopt);
  EXPECT_EQ(denied_call_of(R"(x: HTTP 403 Forbidden: User "u" cannot create resource "pods)"),
            std::nullopt);
}

TEST(Classify, StatusOfAnswerCarriesTheApiserverMessage) {
  const std::string forbidden =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods is forbidden: User \"system:serviceaccount:ns:sa\" cannot list resource \"pods\"","reason":"Forbidden","code":403})";
  auto s = status_of(answer(403, forbidden), "list pods");
  EXPECT_EQ(s.code(), errc::unauthenticated);
  EXPECT_EQ(s.message(),
            "list pods: HTTP 403 Forbidden: pods is forbidden: User "
            "\"system:serviceaccount:ns:sa\" cannot list resource \"pods\"");

  struct row {
    int code;
    std::string reason;
    errc expected;
  };
  const row rows[] = {
      {400, "BadRequest", errc::invalid_argument}, {401, "Unauthorized", errc::unauthenticated},
      {404, "NotFound", errc::not_found},          {409, "AlreadyExists", errc::already_exists},
      {409, "Conflict", errc::conflict},           {410, "Expired", errc::failed_precondition},
      {413, "RequestEntityTooLarge", errc::too_large}, {422, "Invalid", errc::invalid_argument},
      {429, "TooManyRequests", errc::unavailable}, {500, "InternalError", errc::unavailable},
      {503, "ServiceUnavailable", errc::unavailable},
  };
  for (const auto& r : rows) {
    auto st = status_of(
        answer(r.code, R"({"kind":"Status","reason":")" + r.reason + R"(","message":"m"})"), "x");
    EXPECT_EQ(st.code(), r.expected) << r.code << " " << r.reason;
    EXPECT_EQ(st.message(), "x: HTTP " + std::to_string(r.code) + " " + r.reason + ": m");
  }
  EXPECT_TRUE(status_of(answer(201), "x").ok());
  // Not a Status (a proxy's page): quoted.
  auto html = status_of(answer(502, "<html>bad gateway</html>"), "x");
  EXPECT_EQ(html.message(), "x: HTTP 502: <html>bad gateway</html>");
}

TEST(QueryEscape, KeepsUnreservedAndEscapesTheRest) {
  EXPECT_EQ(query_escape("app=web,tier in (a,b)"), "app%3Dweb%2Ctier%20in%20%28a%2Cb%29");
  EXPECT_EQ(query_escape("spec.nodeName!=x"), "spec.nodeName%21%3Dx");
  EXPECT_EQ(query_escape("eyJ2Ijo-_~"), "eyJ2Ijo-_~");
}

TEST(Strings, EveryEnumValueHasOne) {
  std::set<std::string> seen;
  for (auto r : {watch_read::line, watch_read::idle, watch_read::ended, watch_read::broken})
    EXPECT_TRUE(seen.insert(std::string(to_string(r))).second);
  for (auto t : {event_type::added, event_type::modified, event_type::deleted})
    EXPECT_TRUE(seen.insert(std::string(to_string(t))).second);
  for (int i = 0; i <= static_cast<int>(bind_result_last); ++i) {
    auto s = std::string(to_string(static_cast<bind_result>(i)));
    EXPECT_NE(s, "unknown");
    EXPECT_TRUE(seen.insert("bind:" + s).second);
  }
  for (auto t : {patch_type::merge, patch_type::strategic_merge, patch_type::json_patch}) {
    EXPECT_NE(to_string(t), "unknown");
    EXPECT_NE(content_type_of(t), "application/json");
  }
  EXPECT_EQ(content_type_of(patch_type::strategic_merge), "application/strategic-merge-patch+json");
  EXPECT_EQ(content_type_of(patch_type::merge), "application/merge-patch+json");
}

TEST(Client, RefusesBadConfig) {
  connection_config c;
  c.server = "ftp://x";
  auto bad_url = client::create(c);
  ASSERT_FALSE(bad_url.ok());
  EXPECT_EQ(bad_url.error().code(), errc::invalid_argument);
  c.server = "https://127.0.0.1:1";
  c.connections = 0;
  EXPECT_FALSE(client::create(c).ok());
  c.connections = 1;
  c.token_file = "/nonexistent/token";
  auto no_token = client::create(c);
  ASSERT_FALSE(no_token.ok());
  EXPECT_EQ(no_token.error().code(), errc::not_found);
}

TEST(Client, InlineCaGoesToAPrivateFileThatLivesWithTheClient) {
  connection_config c;
  c.server = "https://127.0.0.1:1";
  c.ca_pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  std::string path;
  {
    auto cl = client::create(c);
    ASSERT_TRUE(cl.ok()) << cl.error().to_string();
    path = (*cl)->config().ca_file;
    ASSERT_FALSE(path.empty());
    struct ::stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
  struct ::stat st {};
  EXPECT_NE(::stat(path.c_str(), &st), 0) << path << " outlived its client";
}

TEST(Client, ConnectionRefusedIsARetryableError) {
  connection_config c;
  c.server = "http://127.0.0.1:1";
  c.timeout = 2s;
  auto cl = client::create(c);
  ASSERT_TRUE(cl.ok());
  request_spec r;
  r.target = "/api";
  auto res = (*cl)->request(r);
  ASSERT_FALSE(res.ok());
  EXPECT_TRUE(is_retryable(res)) << res.error().to_string();
  EXPECT_EQ((*cl)->metrics().transport_errors, 1u);
  r.target = "api";
  auto bad = (*cl)->request(r);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), errc::invalid_argument);
}

} // namespace
} // namespace phalanx::k8s
