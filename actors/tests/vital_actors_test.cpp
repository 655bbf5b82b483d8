// A runtime whose vital actor dies must say so rather than sit behind green probes (issue 24):
// the registry, which every API call goes through, killed by an exception (std::bad_alloc of a
// huge job, before its size had a limit) left /healthz and /readyz at 200 while every call timed
// out. Here the registry is ended with an error, as an exception ends it.

#include "actors/runtime_probe.hpp"
#include "actors/tests/runtime_harness.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;

TEST(VitalActors, ARegistryThatDiesTakesReadinessDown) {
  runtime_harness h{deterministic_config(9), {make_node("n-0").cpu("4").memory("8Gi")}};
  ASSERT_TRUE(h.rt().ready());
  EXPECT_EQ(h.rt().failure(), "");
  EXPECT_EQ(h.svc().failure(), "");

  caf::anon_send_exit(runtime_probe::registry(h.rt()), caf::exit_reason::unhandled_exception);
  h.rt().run_until_idle();

  EXPECT_FALSE(h.rt().ready());
  EXPECT_FALSE(h.svc().ready());
  auto failure = h.svc().failure();
  EXPECT_NE(failure.find("registry"), std::string::npos) << failure;
  EXPECT_NE(failure.find("unhandled_exception"), std::string::npos) << failure;
}

TEST(VitalActors, AShutdownIsNotAFailure) {
  runtime_harness h{deterministic_config(9), {make_node("n-0").cpu("4").memory("8Gi")}};
  h.rt().shutdown();
  EXPECT_EQ(h.rt().failure(), "");
}

} // namespace
} // namespace phalanx::actors::testing
