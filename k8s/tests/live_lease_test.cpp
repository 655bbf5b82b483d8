// Leader election against the real apiserver, with short durations (lease 3 s, renew deadline
// 2 s, retry 0.5 s) so that takeovers take seconds. Waits have generous bounds; what is asserted
// exactly is order (a deposed leader's valid_until() is before its successor starts) and state,
// never how fast something happened.

#include "k8s/lease.hpp"
#include "k8s/operations.hpp"
#include "k8s/testing/control_plane.hpp"
#include "k8s/testing/tcp_proxy.hpp"

#include "k8s/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>

namespace phalanx::k8s {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using test::eventually;
using testing::control_plane;
using testing::tcp_proxy;

// An elector with callbacks that record what happened and when.
struct candidate {
  std::unique_ptr<lease_elector> elector;
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  std::atomic<int64_t> started_at_ns{0};
  std::mutex mutex;
  std::vector<std::string> leaders;

  // The elector's callbacks use the members: stop it before they go.
  ~candidate() {
    if (elector)
      elector->stop();
  }

  std::vector<std::string> seen_leaders() {
    std::lock_guard lock(mutex);
    return leaders;
  }
};

lease_options short_lease(const std::string& name, const std::string& identity) {
  lease_options o;
  o.namespace_name = "default";
  o.name = name;
  o.identity = identity;
  o.lease_duration = 3s;
  o.renew_deadline = 2s;
  o.retry_period = 500ms;
  return o;
}

void make(candidate& c, const connection_config& config, lease_options o) {
  o.on_started_leading = [&c] {
    c.started_at_ns = steady::now().time_since_epoch().count();
    ++c.started;
  };
  o.on_stopped_leading = [&c] { ++c.stopped; };
  o.on_new_leader = [&c](const std::string& id) {
    std::lock_guard lock(c.mutex);
    c.leaders.push_back(id);
  };
  auto e = lease_elector::create(config, std::move(o));
  if (!e)
    throw std::runtime_error(e.error().to_string());
  c.elector = std::move(*e);
  c.elector->start();
}

boost::json::value read_lease(const std::string& name) {
  auto r = get_json(control_plane::shared().admin(),
                    "/apis/coordination.k8s.io/v1/namespaces/default/leases/" + name);
  if (!r)
    throw std::runtime_error(r.error().to_string());
  return std::move(*r);
}

TEST(LiveLease, OneLeadsTheOtherFollows) {
  auto& cp = control_plane::shared();
  candidate a, b;
  make(a, cp.admin_config(), short_lease("pair", "a"));
  ASSERT_TRUE(eventually([&] { return a.elector->leading_now(); }));
  make(b, cp.admin_config(), short_lease("pair", "b"));
  ASSERT_TRUE(eventually([&] { return b.elector->observed_leader() == "a"; }));
  // Several lease durations: a keeps renewing, b never leads.
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(a.elector->leading_now());
    ASSERT_FALSE(b.elector->leading_now());
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(a.started.load(), 1);
  EXPECT_EQ(b.started.load(), 0);
  EXPECT_GT(a.elector->valid_until(), steady::now());
  auto lease = read_lease("pair");
  const auto& spec = lease.at("spec");
  EXPECT_EQ(spec.at("holderIdentity").as_string(), "a");
  EXPECT_EQ(spec.at("leaseDurationSeconds").as_int64(), 3);
  EXPECT_EQ(spec.at("leaseTransitions").as_int64(), 0);
  EXPECT_EQ(spec.at("renewTime").as_string().size(), 27u);  // 2006-01-02T15:04:05.000000Z
  EXPECT_EQ(b.seen_leaders(), std::vector<std::string>{"a"});
  EXPECT_GE(a.elector->counters().successes, 5u);
}

TEST(LiveLease, BlockedLeaderStopsAtItsDeadlineBeforeTheOtherTakesOver) {
  auto& cp = control_plane::shared();
  auto proxy = tcp_proxy::start(cp.server());
  ASSERT_TRUE(proxy.ok()) << proxy.error().to_string();
  auto through_proxy = cp.admin_config();
  through_proxy.server = (*proxy)->url();

  candidate a, b;
  auto oa = short_lease("blocked", "a");
  // A's requests hang for long once the network is frozen: its thread is stuck in one while
  // leading_now() must already say no.
  oa.request_timeout = 8s;
  make(a, through_proxy, oa);
  ASSERT_TRUE(eventually([&] { return a.elector->leading_now(); }));
  make(b, cp.admin_config(), short_lease("blocked", "b"));
  ASSERT_TRUE(eventually([&] { return b.elector->observed_leader() == "a"; }));

  const auto frozen_at = steady::now();
  (*proxy)->freeze();
  // Stops leading by its timestamps alone, at the latest renew_deadline after the freeze.
  ASSERT_TRUE(eventually([&] { return !a.elector->leading_now(); }, 20s));
  const auto noticed = steady::now();
  EXPECT_LE(a.elector->valid_until(), frozen_at + 2s);
  // Its thread is still inside the frozen request (8 s): no callback has told it yet.
  if (noticed < frozen_at + 5s) {
    EXPECT_EQ(a.stopped.load(), 0);
  }
  const auto a_valid_until = a.elector->valid_until();

  // B takes over once it has seen no renewal for a lease duration.
  ASSERT_TRUE(eventually([&] { return b.elector->leading_now(); }, 30s));
  const auto b_started = steady::time_point(steady::duration(b.started_at_ns.load()));
  // Never two leaders: A's validity ended before B started.
  EXPECT_LT(a_valid_until, b_started);
  auto ms = [](steady::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  std::cout << "[ timing   ] after the freeze: a's leading_now() false within "
            << ms(noticed - frozen_at) << " ms (valid_until at +" << ms(a_valid_until - frozen_at)
            << " ms, on_stopped_leading not yet called: " << (a.stopped.load() == 0)
            << "); b started leading at +" << ms(b_started - frozen_at) << " ms\n";
  EXPECT_FALSE(a.elector->leading_now());

  // Back on the network, A reads B as holder and stays a follower.
  (*proxy)->thaw();
  ASSERT_TRUE(eventually([&] { return a.stopped.load() == 1; }, 30s));
  ASSERT_TRUE(eventually([&] { return a.elector->observed_leader() == "b"; }, 30s));
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(a.elector->leading_now());
    ASSERT_TRUE(b.elector->leading_now());
    std::this_thread::sleep_for(100ms);
  }
  auto lease = read_lease("blocked");
  EXPECT_EQ(lease.at("spec").at("holderIdentity").as_string(), "b");
  EXPECT_EQ(lease.at("spec").at("leaseTransitions").as_int64(), 1);
  b.elector->stop();
  a.elector->stop();
}

TEST(LiveLease, ReleaseOnStopLetsTheOtherTakeOverAtOnce) {
  auto& cp = control_plane::shared();
  candidate a, b;
  // A lease of 15 s: without the release, B would wait at least that long.
  auto oa = short_lease("release", "a");
  oa.lease_duration = 15s;
  oa.renew_deadline = 10s;
  auto ob = oa;
  ob.identity = "b";
  make(a, cp.admin_config(), oa);
  ASSERT_TRUE(eventually([&] { return a.elector->leading_now(); }));
  make(b, cp.admin_config(), ob);
  ASSERT_TRUE(eventually([&] { return b.elector->observed_leader() == "a"; }));

  const auto stop_at = steady::now();
  a.elector->stop();
  EXPECT_FALSE(a.elector->leading_now());
  EXPECT_EQ(a.stopped.load(), 1);
  ASSERT_TRUE(eventually([&] { return b.elector->leading_now(); }, 30s));
  // Well within the 15 s a crashed leader would have cost.
  EXPECT_LT(steady::now() - stop_at, 10s);
  auto lease = read_lease("release");
  EXPECT_EQ(lease.at("spec").at("holderIdentity").as_string(), "b");
  EXPECT_EQ(lease.at("spec").at("leaseTransitions").as_int64(), 1);
  auto seen = b.seen_leaders();
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0], "a");
  EXPECT_EQ(seen[1], "");  // Released.
  EXPECT_EQ(seen.back(), "b");
}

TEST(LiveLease, ACrashedLeaderIsReplacedAfterTheLeaseDuration) {
  auto& cp = control_plane::shared();
  candidate a, b;
  auto oa = short_lease("crash", "a");
  oa.release_on_stop = false;  // As if the process died.
  make(a, cp.admin_config(), oa);
  ASSERT_TRUE(eventually([&] { return a.elector->leading_now(); }));
  make(b, cp.admin_config(), short_lease("crash", "b"));
  ASSERT_TRUE(eventually([&] { return b.elector->observed_leader() == "a"; }));
  a.elector->stop();
  const auto gone_at = steady::now();
  ASSERT_TRUE(eventually([&] { return b.elector->leading_now(); }, 30s));
  // B waited out the lease: at least its duration minus the renew period it may have seen last.
  EXPECT_GE(steady::now() - gone_at, 2s);
  EXPECT_EQ(read_lease("crash").at("spec").at("holderIdentity").as_string(), "b");
}

TEST(LiveLease, WithoutRbacOnLeasesItNeverLeadsAndSaysWhy) {
  auto& cp = control_plane::shared();
  auto token = cp.service_account_token("default", "no-lease-rights");
  ASSERT_TRUE(token.ok()) << token.error().to_string();
  auto config = cp.admin_config();
  config.token = *token;
  candidate a;
  make(a, config, short_lease("forbidden", "a"));
  ASSERT_TRUE(eventually([&] { return a.elector->counters().failures >= 2; }));
  EXPECT_FALSE(a.elector->leading_now());
  EXPECT_EQ(a.started.load(), 0);
  auto error = a.elector->last_error();
  EXPECT_EQ(error.code(), errc::unauthenticated);
  EXPECT_NE(error.message().find("HTTP 403 Forbidden"), std::string::npos) << error.message();
  EXPECT_NE(error.message().find("system:serviceaccount:default:no-lease-rights"),
            std::string::npos)
      << error.message();
}

} // namespace
} // namespace phalanx::k8s
