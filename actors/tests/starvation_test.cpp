// No starving gang on the whole runtime (scheduler/room_reservation.hpp): a big gang behind a
// stream of small ones, which would take every release before the big gang sees room for all of
// its pods, reserves nodes once it has been blocked for scheduling.starvationBound and starts
// soon after, while the small gangs keep starting on the other nodes. Under CAF's test
// coordinator (virtual time), several seeds; I1-I4 and the reservation check at every end.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;
using namespace std::chrono_literals;

runtime_config starvation_config(uint64_t seed, std::chrono::milliseconds bound) {
  auto config = deterministic_config(seed);
  config.scheduling.starvation_bound = bound;
  return config;
}

std::vector<scheduler::node> nodes_of_8_cpu(int count) {
  std::vector<scheduler::node> out;
  for (int i = 0; i < count; ++i)
    out.push_back(make_node("n-" + std::to_string(i)).cpu("8").memory("32Gi"));
  return out;
}

// A PodGroup of `min_member` and `pods` pods of 1 cpu, "<name>-<i>", each running `duration`.
void gang(runtime_harness& h, const std::string& name, int32_t min_member, int32_t pods,
          const std::string& duration) {
  runtime_harness::must_ok(h.create(group_of(name, min_member)), name);
  for (int32_t i = 0; i < pods; ++i) {
    auto p = make_pod(name + "-" + std::to_string(i)).cpu("1").group(name).obj();
    p.meta.annotations.set(std::string(sim_duration_key), duration);
    runtime_harness::must_ok(h.create(api::pod_object{p, {}}), name + " pod");
  }
}

// Where each pod is bound now ("" when not), by pod name.
std::map<std::string, std::string> placements(runtime_harness& h) {
  std::map<std::string, std::string> out;
  for (const auto& p : h.pods("default"))
    out[p.pod.meta.name.str()] = p.pod.node_name.str();
  return out;
}

struct stream_outcome {
  std::optional<std::chrono::milliseconds> big_started;  // Since it was created.
  std::set<std::string> reserved_nodes;                  // Ever reserved for the big gang.
  int small_started_beside_reservation = 0;  // Small gangs bound off the reserved nodes meanwhile.
  std::string big_reason;                    // Its pending reason while it reserved.
};

// 12 nodes of 8 cpu, every cpu taken by 1-pod gangs that run 1-4 s, a stream of them that keeps
// 24 waiting, and after 1 s a gang of 64 pods (8 nodes' worth). Runs `horizon` of virtual time
// after the big gang came, or until it started.
stream_outcome run_stream(uint64_t seed, std::chrono::milliseconds bound,
                          std::chrono::milliseconds horizon) {
  runtime_harness h{starvation_config(seed, bound), nodes_of_8_cpu(12)};
  int next_small = 0;
  // Runs of 1 to 4 s, so that releases come a few cpus at a time, never a big gang's worth.
  auto add_small = [&] {
    auto name = "small-" + std::to_string(next_small);
    gang(h, name, 1, 1, std::to_string(1000 + (next_small % 7) * 500) + "ms");
    ++next_small;
  };
  for (int i = 0; i < 96 + 24; ++i)
    add_small();
  h.pass(1000ms);
  gang(h, "big", 64, 64, "30s");

  stream_outcome out;
  std::map<std::string, std::string> before = placements(h);
  for (std::chrono::milliseconds t{0}; t <= horizon; t += 250ms) {
    h.pass(250ms);
    auto now = placements(h);
    std::set<std::string> reserved;
    for (const auto& n : h.rt().facts().nodes)
      if (n.room_reserved_for == "default/big")
        reserved.insert(n.name);
    out.reserved_nodes.insert(reserved.begin(), reserved.end());
    if (!reserved.empty()) {
      for (const auto& [pod, node] : now)
        if (pod.rfind("small-", 0) == 0 && !node.empty() && before[pod].empty() &&
            reserved.count(node) == 0)
          ++out.small_started_beside_reservation;
      if (out.big_reason.empty())
        for (const auto& c : h.group("big").status.conditions)
          if (c.type == "Unschedulable")
            out.big_reason = c.message;
    }
    int bound_big = 0;
    int waiting_small = 0;
    for (const auto& [pod, node] : now) {
      if (pod.rfind("big-", 0) == 0 && !node.empty())
        ++bound_big;
      if (pod.rfind("small-", 0) == 0 && node.empty())
        ++waiting_small;
    }
    if (bound_big == 64) {
      out.big_started = t + 250ms;
      break;
    }
    for (int i = waiting_small; i < 24; ++i)
      add_small();
    before = std::move(now);
  }
  EXPECT_INVARIANTS(h);
  return out;
}

TEST(Starvation, ABigGangBehindAStreamOfSmallOnesStartsWithinTheBound) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    auto out = run_stream(seed, 5000ms, 30000ms);
    ASSERT_TRUE(out.big_started) << "the big gang did not start within 30 s";
    // Blocked from its first plan; the bound, then the small pods on its nodes end (4 s each).
    EXPECT_LE(*out.big_started, 5000ms + 4000ms + 1000ms);
    EXPECT_EQ(out.reserved_nodes.size(), 8u);
    EXPECT_GT(out.small_started_beside_reservation, 0)
        << "no small gang started on the other four nodes during the reservation";
    EXPECT_NE(out.big_reason.find("It has waited past the starvation bound and reserves 8 "
                                  "node(s) for 64 pod(s)"),
              std::string::npos)
        << out.big_reason;
  }
}

// The same stream without the bound (Volcano's behaviour): every release goes to a small gang,
// and the big gang never has room for all its pods at once.
TEST(Starvation, WithoutTheBoundTheStreamStarvesTheBigGang) {
  auto out = run_stream(1, 0ms, 30000ms);
  EXPECT_FALSE(out.big_started);
  EXPECT_TRUE(out.reserved_nodes.empty());
}

// Two big gangs blocked past the bound never reserve the same node; each starts, and no
// reservation outlives its gang.
TEST(Starvation, TwoStarvingGangsReserveDifferentNodesAndBothStart) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    runtime_harness h{starvation_config(seed, 3000ms), nodes_of_8_cpu(6)};
    int next_small = 0;
    auto add_small = [&] {
      gang(h, "small-" + std::to_string(next_small), 1, 1,
           std::to_string(1000 + (next_small % 7) * 500) + "ms");
      ++next_small;
    };
    for (int i = 0; i < 48 + 16; ++i)
      add_small();
    h.pass(500ms);
    gang(h, "big-a", 16, 16, "2s");
    gang(h, "big-b", 16, 16, "2s");
    auto started = [&](const std::map<std::string, std::string>& now, const std::string& g) {
      int n = 0;
      for (const auto& [pod, node] : now)
        n += pod.rfind(g + "-", 0) == 0 && !node.empty() ? 1 : 0;
      return n == 16;
    };
    bool shared = false;
    bool a = false;
    bool b = false;
    bool a_reserved = false;
    bool b_reserved = false;
    for (std::chrono::milliseconds t{0}; t <= 30000ms && !(a && b); t += 250ms) {
      h.pass(250ms);
      std::map<std::string, std::set<std::string>> by_gang;
      for (const auto& n : h.rt().facts().nodes)
        if (!n.room_reserved_for.empty())
          by_gang[n.room_reserved_for].insert(n.name);
      for (const auto& n : by_gang["default/big-a"])
        shared |= by_gang["default/big-b"].count(n) > 0;
      a_reserved |= !by_gang["default/big-a"].empty();
      b_reserved |= !by_gang["default/big-b"].empty();
      auto now = placements(h);
      a = a || started(now, "big-a");
      b = b || started(now, "big-b");
      int waiting = 0;
      for (const auto& [pod, node] : now)
        waiting += pod.rfind("small-", 0) == 0 && node.empty() ? 1 : 0;
      for (int i = waiting; i < 16; ++i)
        add_small();
    }
    EXPECT_FALSE(shared);
    EXPECT_TRUE(a_reserved && b_reserved) << "big-a reserved: " << a_reserved
                                          << ", big-b reserved: " << b_reserved;
    EXPECT_TRUE(a && b) << "big-a started: " << a << ", big-b started: " << b;
    EXPECT_INVARIANTS(h);
  }
}

// A reserving gang deleted gives its nodes back at once: the small gangs take them.
TEST(Starvation, AReservingGangDeletedGivesItsNodesBack) {
  runtime_harness h{starvation_config(1, 1000ms), nodes_of_8_cpu(2)};
  for (int i = 0; i < 16; ++i)
    gang(h, "small-" + std::to_string(i), 1, 1, "2s");
  h.pass(200ms);
  gang(h, "big", 16, 16, "10s");
  for (int i = 16; i < 40; ++i)
    gang(h, "small-" + std::to_string(i), 1, 1, "2s");
  ASSERT_TRUE(h.run_until(
      [&] {
        for (const auto& n : h.rt().facts().nodes)
          if (n.room_reserved_for == "default/big")
            return true;
        return false;
      },
      5000ms, 100ms));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", "big"), "delete");
  for (int i = 0; i < 16; ++i)
    runtime_harness::must_ok(
        h.remove(api::resource_kind::pod, "default", "big-" + std::to_string(i)), "delete pod");
  h.pass(100ms);
  for (const auto& n : h.rt().facts().nodes)
    EXPECT_TRUE(n.room_reserved_for.empty()) << n.name << " keeps room for "
                                             << n.room_reserved_for;
  // Every small gang runs in time: the nodes take pods again.
  EXPECT_TRUE(h.run_until(
      [&] {
        for (const auto& [pod, node] : placements(h))
          if (pod.rfind("small-", 0) == 0 && node.empty())
            return false;
        return true;
      },
      10000ms, 100ms));
  EXPECT_INVARIANTS(h);
}

} // namespace
} // namespace phalanx::actors::testing
