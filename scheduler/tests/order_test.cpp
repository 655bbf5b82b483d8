#include "scheduler/order.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::res;
using namespace std::chrono_literals;

timestamp at(std::chrono::seconds s) { return timestamp{} + s; }

pod_group group(std::string name, int32_t priority, std::chrono::seconds created,
                std::string uid = {}) {
  auto g = make_gang(name, 1).priority(priority).created(at(created)).obj().group;
  if (!uid.empty())
    g.meta.uid = std::move(uid);
  return g;
}

TEST(GangOrder, PriorityThenCreationThenUid) {
  struct row {
    const char* what;
    pod_group a, b;
    bool a_first;
  };
  const row rows[] = {
      {"higher priority first", group("a", 1, 10s), group("b", 0, 1s), true},
      {"lower priority last", group("a", 0, 1s), group("b", 5, 10s), false},
      {"same priority: older first", group("a", 0, 1s), group("b", 0, 2s), true},
      {"same priority: younger last", group("a", 0, 3s), group("b", 0, 2s), false},
      {"same age: uid decides", group("a", 0, 1s, "uid-2"), group("b", 0, 1s, "uid-1"), false},
      {"negative priorities", group("a", -1, 1s), group("b", -2, 1s), true},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(gang_before(r.a, r.b), r.a_first) << r.what;
    EXPECT_EQ(gang_before(r.b, r.a), !r.a_first) << r.what;
  }
  auto g = group("same", 0, 1s);
  EXPECT_EQ(compare_gangs(g, g), std::strong_ordering::equal);
  EXPECT_FALSE(gang_before(g, g));
}

TEST(Ticket, QuantizesShareToWholePercent) {
  struct row {
    ratio share;
    int32_t steps;
  };
  const row rows[] = {
      {{0, 1}, 0},     {{1, 3}, 33},     {{301, 1000}, 30}, {{309, 1000}, 30},
      {{1, 1}, 100},   {{3, 2}, 150},    {{10, 1}, 1000},   {{50, 1}, 1000},
      {{-1, 2}, 0},    {{1, 0}, 0},      {{INT64_MAX, 1}, 1000},
  };
  for (const auto& r : rows)
    EXPECT_EQ(quantize_share(r.share), r.steps) << r.share.num << "/" << r.share.den;
}

TEST(Ticket, LowerIsOlder) {
  const auto g = group("g", 5, 10s, "uid-g");
  struct row {
    const char* what;
    ticket a, b;
    bool a_older;
  };
  const row rows[] = {
      {"lower queue share is older", make_ticket(group("a", 0, 99s), {1, 10}),
       make_ticket(group("b", 100, 1s), {1, 2}), true},
      {"same share: higher priority is older", make_ticket(group("a", 5, 9s), {1, 4}),
       make_ticket(group("b", 1, 1s), {1, 4}), true},
      {"same share and priority: earlier creation is older", make_ticket(group("a", 0, 2s), {0, 1}),
       make_ticket(group("b", 0, 1s), {0, 1}), false},
      {"all equal but uid", make_ticket(group("a", 0, 1s, "1"), {0, 1}),
       make_ticket(group("b", 0, 1s, "2"), {0, 1}), true},
      {"shares within one percent tie", make_ticket(group("a", 0, 2s), {301, 1000}),
       make_ticket(group("b", 0, 1s), {309, 1000}), false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(is_older(r.a, r.b), r.a_older) << r.what;
    EXPECT_EQ(is_older(r.b, r.a), !r.a_older) << r.what;
  }
  EXPECT_EQ(make_ticket(g, {1, 4}), make_ticket(g, {1, 4}));
}

TEST(Ticket, StableWhileTheQueueShareDrifts) {
  // A round fixes the ticket; small drifts of the share between rounds keep it equal too.
  const auto g = group("g", 0, 1s);
  EXPECT_EQ(make_ticket(g, {2500, 10000}), make_ticket(g, {2549, 10000}));
  EXPECT_NE(make_ticket(g, {2500, 10000}), make_ticket(g, {2600, 10000}));
}

TEST(Ticket, Text) {
  ticket t = make_ticket(group("g", 7, 90s, "abc"), {1, 4});
  EXPECT_EQ(t.to_string(), "share 0.25, priority 7, created 90.000000000, uid abc");
  ticket u = make_ticket(group("g", 0, 0s, "x"), {3, 1});
  EXPECT_EQ(u.to_string(), "share 3.00, priority 0, created 0.000000000, uid x");
}

std::vector<std::string> queue_names(std::vector<queue_standing> qs) {
  sort_queues(qs);
  std::vector<std::string> out;
  for (const auto& q : qs)
    out.push_back(q.name);
  return out;
}

TEST(QueueOrder, LowestShareFirst) {
  const auto deserved = res("cpu", "10", "memory", "10Gi");
  std::vector<queue_standing> qs = {
      {"a", 0, res("cpu", "500m"), deserved},
      {"b", 0, res("cpu", "600m"), deserved},
      {"c", 0, res("memory", "100Mi"), deserved},
      {"d", 0, res("cpu", "300m"), deserved},
  };
  // shares: a = .05, b = .06, c = .01, d = .03
  EXPECT_EQ(queue_names(qs), (std::vector<std::string>{"c", "d", "a", "b"}));

  qs[2].allocated = res("memory", "1Gi");
  // shares: a = .05, b = .06, c = .10, d = .03
  EXPECT_EQ(queue_names(qs), (std::vector<std::string>{"d", "a", "b", "c"}));
}

TEST(QueueOrder, PriorityFirstThenShareThenName) {
  const auto deserved = res("cpu", "10");
  std::vector<queue_standing> qs = {
      {"b", 0, res("cpu", "1"), deserved},
      {"a", 0, res("cpu", "1"), deserved},
      {"vip", 1, res("cpu", "9"), deserved},
      {"idle", 0, {}, deserved},
  };
  // shares: b = .1, a = .1, vip = .9 (priority 1), idle = 0
  EXPECT_EQ(queue_names(qs), (std::vector<std::string>{"vip", "idle", "a", "b"}));
  EXPECT_TRUE(compare_queues(qs[1], qs[0]) < 0);  // Same share: name.
  EXPECT_TRUE(compare_queues(qs[2], qs[3]) < 0);  // Priority beats share.
}

TEST(QueueOrder, WeightsShowThroughDeserved) {
  // Two queues with the same allocation: the one that deserves more (higher weight) is less
  // served and goes first.
  auto deserved = compute_deserved(
      res("cpu", "12"), std::vector<queue_demand>{{"heavy", 3, {}, {}, res("cpu", "100")},
                                                  {"light", 1, {}, {}, res("cpu", "100")}});
  std::vector<queue_standing> qs = {{"light", 0, res("cpu", "2"), deserved[1].deserved},
                                    {"heavy", 0, res("cpu", "2"), deserved[0].deserved}};
  // shares: heavy = 2/9, light = 2/3
  EXPECT_EQ(queue_names(qs), (std::vector<std::string>{"heavy", "light"}));
}

} // namespace
} // namespace phalanx::scheduler
