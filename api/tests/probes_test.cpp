// The probes over HTTP when a vital part of the service stopped (issue 24): /readyz and /healthz
// answer 503 naming what stopped, so that Kubernetes restarts the daemon instead of leaving it
// behind green probes while every call times out.

#include "api/tests/server_fixture.hpp"

#include <gtest/gtest.h>

namespace phalanx::api::test {
namespace {

TEST(Probes, AFailedServiceFailsReadinessAndLiveness) {
  auto s = start_server();
  ASSERT_TRUE(s.srv);
  EXPECT_EQ(get(s.port(), "/readyz").status, 200);
  EXPECT_EQ(get(s.port(), "/healthz").status, 200);
  s.svc->set_failure("the registry stopped: unhandled_exception");
  for (const char* path : {"/readyz", "/healthz", "/livez"}) {
    auto r = get(s.port(), path);
    EXPECT_EQ(r.status, 503) << path;
    EXPECT_NE(r.body.find("the registry stopped: unhandled_exception"), std::string::npos)
        << path << ": " << r.body;
  }
}

} // namespace
} // namespace phalanx::api::test
