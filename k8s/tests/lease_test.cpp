// Leader election's arithmetic, without an apiserver: the MicroTime format, when a lease held
// by someone else counts as expired (local observation only, as client-go), and the options
// the elector refuses.

#include "k8s/lease.hpp"

#include <gtest/gtest.h>

namespace phalanx::k8s {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

TEST(MicroTime, SixFractionDigitsInUtc) {
  using sys = std::chrono::system_clock;
  EXPECT_EQ(format_micro_time(sys::time_point{}), "1970-01-01T00:00:00.000000Z");
  // 2006-01-02T15:04:05.123456Z, Go's reference time.
  auto ref = sys::time_point{} + 1136214245s + 123456us;
  EXPECT_EQ(format_micro_time(ref), "2006-01-02T15:04:05.123456Z");
  // Nanoseconds are cut, not rounded: a time never moves into the next microsecond.
  EXPECT_EQ(format_micro_time(ref + 999ns), "2006-01-02T15:04:05.123456Z");
  EXPECT_EQ(format_micro_time(sys::time_point{} + 951782400s), "2000-02-29T00:00:00.000000Z");
}

lease_record held_by(std::string holder, std::string renew = "2024-01-01T00:00:00.000000Z",
                     int64_t seconds = 15) {
  lease_record r;
  r.holder_identity = std::move(holder);
  r.lease_duration_seconds = seconds;
  r.acquire_time = "2024-01-01T00:00:00.000000Z";
  r.renew_time = std::move(renew);
  return r;
}

TEST(LeaseObservation, ExpiresALeaseDurationAfterTheLastChangeSeen) {
  const auto t0 = steady::time_point{} + 1000s;
  lease_observation o;
  EXPECT_TRUE(o.may_acquire("me", t0));  // Nothing read yet.

  o.observe(held_by("other"), t0);
  EXPECT_FALSE(o.may_acquire("me", t0));
  EXPECT_FALSE(o.may_acquire("me", t0 + 14999ms));
  EXPECT_TRUE(o.expired(t0 + 15s));
  EXPECT_TRUE(o.may_acquire("me", t0 + 15s));
  // The holder itself may always renew.
  EXPECT_TRUE(o.may_acquire("other", t0 + 1s));
}

TEST(LeaseObservation, SameRecordAgainDoesNotRestartTheClockAChangeDoes) {
  const auto t0 = steady::time_point{} + 1000s;
  lease_observation o;
  o.observe(held_by("other", "2024-01-01T00:00:00.000000Z"), t0);
  // Read again unchanged 10 s later: the holder did not renew; the clock runs from t0.
  o.observe(held_by("other", "2024-01-01T00:00:00.000000Z"), t0 + 10s);
  EXPECT_EQ(o.changed_at(), t0);
  EXPECT_TRUE(o.may_acquire("me", t0 + 15s));
  // A renewal (renewTime changed) seen at t0 + 12 s: valid until t0 + 27 s, whatever the
  // renewTime says about the other machine's clock.
  o.observe(held_by("other", "1999-01-01T00:00:00.000000Z"), t0 + 12s);
  EXPECT_FALSE(o.may_acquire("me", t0 + 15s));
  EXPECT_FALSE(o.may_acquire("me", t0 + 26999ms));
  EXPECT_TRUE(o.may_acquire("me", t0 + 27s));
}

TEST(LeaseObservation, ARenewTimeFarInThePastStillWaitsAFullDuration) {
  // A candidate that starts and finds a lease renewed "a year ago" by the record's clock cannot
  // tell a dead holder from a skewed clock: it waits one lease duration from its first read.
  const auto t0 = steady::time_point{} + 1000s;
  lease_observation o;
  o.observe(held_by("other", "2000-01-01T00:00:00.000000Z"), t0);
  EXPECT_FALSE(o.may_acquire("me", t0 + 1s));
  EXPECT_TRUE(o.may_acquire("me", t0 + 15s));
}

TEST(LeaseObservation, ReleasedLeaseIsFreeAtOnce) {
  const auto t0 = steady::time_point{} + 1000s;
  lease_observation o;
  o.observe(held_by("", "2024-01-01T00:00:00.000000Z", 1), t0);
  EXPECT_TRUE(o.may_acquire("me", t0));
}

TEST(LeaseObservation, DurationComesFromTheRecord) {
  const auto t0 = steady::time_point{} + 1000s;
  lease_observation o;
  o.observe(held_by("other", "x", 60), t0);
  EXPECT_FALSE(o.may_acquire("me", t0 + 59s));
  EXPECT_TRUE(o.may_acquire("me", t0 + 60s));
}

TEST(LeaseElector, RefusesInconsistentOptions) {
  connection_config c;
  c.server = "https://127.0.0.1:1";
  struct row {
    const char* what;
    std::function<void(lease_options&)> change;
    const char* message_part;
  };
  const row rows[] = {
      {"no namespace", [](lease_options& o) { o.namespace_name.clear(); }, "namespace_name"},
      {"no name", [](lease_options& o) { o.name.clear(); }, "name must be set"},
      {"no identity", [](lease_options& o) { o.identity.clear(); }, "identity"},
      {"sub-second lease", [](lease_options& o) { o.lease_duration = 900ms; },
       "at least 1 s"},
      {"deadline not below duration", [](lease_options& o) { o.renew_deadline = 15s; },
       "renew_deadline must be shorter than lease_duration"},
      {"deadline within 1.2 x retry",
       [](lease_options& o) {
         o.retry_period = 5s;
         o.renew_deadline = 6s;
       },
       "1.2 x retry_period"},
      {"zero retry", [](lease_options& o) { o.retry_period = 0ms; }, "retry_period"},
  };
  for (const auto& r : rows) {
    lease_options o;
    o.namespace_name = "kube-system";
    o.name = "phalanx";
    o.identity = "me";
    r.change(o);
    auto e = lease_elector::create(c, o);
    ASSERT_FALSE(e.ok()) << r.what;
    EXPECT_EQ(e.error().code(), errc::invalid_argument) << r.what;
    EXPECT_NE(e.error().message().find(r.message_part), std::string::npos)
        << r.what << ": " << e.error().message();
  }
  lease_options ok;
  ok.namespace_name = "kube-system";
  ok.name = "phalanx";
  ok.identity = "me";
  auto e = lease_elector::create(c, ok);
  ASSERT_TRUE(e.ok()) << e.error().to_string();
  EXPECT_FALSE((*e)->leading_now());
  EXPECT_EQ((*e)->valid_until(), steady::time_point::min());
}

} // namespace
} // namespace phalanx::k8s
