#include "scheduler/enqueue_gate.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace phalanx::scheduler {
namespace {

using testing::make_gang;
using testing::res;

TEST(OvercommitFactor, ParsesExactly) {
  struct row {
    const char* text;
    ratio value;
  };
  const row rows[] = {
      {"1.2", {6, 5}},        {"1", {1, 1}},         {"1.0", {1, 1}},
      {"2.50", {5, 2}},       {"1.25", {5, 4}},      {"1.000000001", {1000000001, 1000000000}},
      {"999999.5", {1999999, 2}}, {"01.5", {3, 2}},
  };
  for (const auto& r : rows) {
    auto parsed = parse_overcommit_factor(r.text);
    ASSERT_TRUE(parsed.ok()) << r.text << ": " << parsed.error().to_string();
    EXPECT_EQ(parsed->num, r.value.num) << r.text;
    EXPECT_EQ(parsed->den, r.value.den) << r.text;
  }
}

TEST(OvercommitFactor, RejectsMalformedAndBelowOne) {
  struct row {
    const char* text;
    const char* message_part;
  };
  const row rows[] = {
      {"", "not a decimal number"},       {"0.9", "must be >= 1.0"},
      {"0", "must be >= 1.0"},            {"0.999999999", "must be >= 1.0"},
      {"abc", "not a decimal number"},    {"1.", "not a decimal number"},
      {".5", "not a decimal number"},     {"-1.2", "not a decimal number"},
      {"+1.2", "not a decimal number"},   {"1e3", "not a decimal number"},
      {"1.2x", "not a decimal number"},   {" 1.2", "not a decimal number"},
      {"1,2", "not a decimal number"},    {"1234567", "not a decimal number"},
      {"1.0000000001", "not a decimal number"},
  };
  for (const auto& r : rows) {
    auto parsed = parse_overcommit_factor(r.text);
    ASSERT_FALSE(parsed.ok()) << '"' << r.text << '"';
    EXPECT_EQ(parsed.error().code(), errc::invalid_argument);
    EXPECT_NE(parsed.error().message().find(r.message_part), std::string::npos)
        << parsed.error().message();
    EXPECT_NE(parsed.error().message().find(std::string("\"") + r.text + "\""), std::string::npos)
        << parsed.error().message();
  }
}

TEST(OvercommitFactor, Formats) {
  EXPECT_EQ(format_factor({6, 5}), "1.2");
  EXPECT_EQ(format_factor({1, 1}), "1");
  EXPECT_EQ(format_factor({5, 4}), "1.25");
  EXPECT_EQ(format_factor({1, 8}), "0.125");
  EXPECT_EQ(format_factor({1000000001, 1000000000}), "1.000000001");
  EXPECT_EQ(format_factor({4, 3}), "4/3");
  EXPECT_EQ(format_factor(default_overcommit_factor), "1.2");
}

TEST(AdmissionCode, EveryValueHasAName) {
  for (int i = 0; i <= int(admission_code_last); ++i)
    EXPECT_NE(to_string(admission_code(i)), "Unknown") << i;
  EXPECT_EQ(to_string(admission_code::cluster_overcommit), "ClusterOvercommit");
}

resource_limit cap(std::initializer_list<std::pair<std::string_view, std::string_view>> caps) {
  resource_limit out;
  for (auto [name, amount] : caps)
    EXPECT_TRUE(out.set(name, testing::amount(name, amount)));
  return out;
}

// One gate decision as data: the cluster, the queue, the gang's minResources, the expectation.
struct gate_case {
  const char* what;
  resources allocatable, used, inqueue;
  queue_usage queue;
  std::optional<resources> min_resources;
  admission_code code;
  std::string reason;
};

TEST(EnqueueGate, Decisions) {
  const resources ten_cpu = res("cpu", "10", "memory", "10Gi");
  const gate_case cases[] = {
      {"fits the cluster after overcommit", ten_cpu, res("cpu", "8"), {},
       {"q1", queue_state::open, {}, {}, {}}, res("cpu", "4"), admission_code::admitted, ""},
      {"overcommit room 12 - 8 - 2 = 2 < 4", ten_cpu, res("cpu", "8"), res("cpu", "2"),
       {"q1", queue_state::open, {}, {}, {}}, res("cpu", "4"),
       admission_code::cluster_overcommit,
       "cluster overcommit: needs cpu 4, 2 left of 1.2 x allocatable"},
      {"memory 12Gi - 9Gi = 3Gi < 8Gi", ten_cpu, res("memory", "9Gi"), {},
       {"q1", queue_state::open, {}, {}, {}}, res("memory", "8Gi"),
       admission_code::cluster_overcommit,
       "cluster overcommit: needs memory 8Gi, 3Gi left of 1.2 x allocatable"},
      {"every short dimension is named", ten_cpu, res("cpu", "12", "memory", "12Gi"), {},
       {"q1", queue_state::open, {}, {}, {}}, res("cpu", "1", "memory", "1Gi"),
       admission_code::cluster_overcommit,
       "cluster overcommit: needs cpu 1, 0 left of 1.2 x allocatable; needs memory 1Gi, 0 left "
       "of 1.2 x allocatable"},
      {"over-used cluster shows 0 left, not negative", ten_cpu, res("cpu", "20"), {},
       {"q1", queue_state::open, {}, {}, {}}, res("cpu", "1"),
       admission_code::cluster_overcommit,
       "cluster overcommit: needs cpu 1, 0 left of 1.2 x allocatable"},
      {"only the dimensions the gang names count", ten_cpu, {}, {},
       {"q1", queue_state::open, {}, {}, {}}, res("cpu", "1"), admission_code::admitted, ""},
      {"a gpu gang on a cluster without gpus", ten_cpu, {}, {},
       {"q1", queue_state::open, {}, {}, {}}, res("nvidia.com/gpu", "1"),
       admission_code::cluster_overcommit,
       "cluster overcommit: needs nvidia.com/gpu 1, 0 left of 1.2 x allocatable"},
      {"queue capability: 10 - 6 - 2 = 2 < 4", ten_cpu, {}, {},
       {"q1", queue_state::open, cap({{"cpu", "10"}}), res("cpu", "6"), res("cpu", "2")},
       res("cpu", "4"), admission_code::queue_capability,
       "queue \"q1\" capability: needs cpu 4, has 2 of 10 left"},
      {"capability exactly reached is allowed", ten_cpu, {}, {},
       {"q1", queue_state::open, cap({{"cpu", "10"}}), res("cpu", "6"), {}}, res("cpu", "4"),
       admission_code::admitted, ""},
      {"uncapped dimensions are unlimited", ten_cpu, {}, {},
       {"q1", queue_state::open, cap({{"cpu", "10"}}), res("memory", "100Gi"), {}},
       res("cpu", "1", "memory", "1Gi"), admission_code::admitted, ""},
      {"capability is checked before the cluster", ten_cpu, res("cpu", "12"), {},
       {"q2", queue_state::open, cap({{"cpu", "1"}}), {}, {}}, res("cpu", "2"),
       admission_code::queue_capability, "queue \"q2\" capability: needs cpu 2, has 1 of 1 left"},
      {"closed queue", ten_cpu, {}, {}, {"q1", queue_state::closed, {}, {}, {}}, res("cpu", "1"),
       admission_code::queue_not_open, "queue \"q1\" is Closed: only an Open queue admits gangs"},
      {"closing queue", ten_cpu, {}, {}, {"q1", queue_state::closing, {}, {}, {}}, std::nullopt,
       admission_code::queue_not_open, "queue \"q1\" is Closing: only an Open queue admits gangs"},
      {"no minResources: admitted on an open queue even when full", ten_cpu, res("cpu", "99"),
       res("cpu", "99"), {"q1", queue_state::open, cap({{"cpu", "1"}}), res("cpu", "5"), {}},
       std::nullopt, admission_code::admitted, ""},
  };
  for (const auto& c : cases) {
    enqueue_gate gate({}, c.allocatable, c.used, c.inqueue);
    auto g = make_gang("g", 1).obj().group;
    if (c.min_resources)
      g.min_resources = *c.min_resources;
    auto d = gate.check(g, c.queue);
    EXPECT_EQ(d.code, c.code) << c.what << ": " << d.reason;
    EXPECT_EQ(d.reason, c.reason) << c.what;
    EXPECT_EQ(d.admitted(), c.code == admission_code::admitted) << c.what;
    EXPECT_EQ(d.missing.empty(), c.code == admission_code::admitted ||
                                     c.code == admission_code::queue_not_open)
        << c.what;
  }
}

TEST(EnqueueGate, ShortfallsCarryAmounts) {
  enqueue_gate gate({}, res("cpu", "10"), res("cpu", "10"), {});
  auto g = make_gang("g", 1).min_resources(res("cpu", "3")).obj().group;
  auto d = gate.check(g, {"q", queue_state::open, {}, {}, {}});
  ASSERT_EQ(d.missing.size(), 1u);
  EXPECT_EQ(d.missing[0], (shortfall{"cpu", 3000, 2000}));
}

TEST(EnqueueGate, AdmitSeesEarlierAdmissions) {
  // 6 cpu * 1.2 = 7.2 cpu of room: two gangs of 3 cpu fit, the third does not.
  enqueue_gate gate({}, res("cpu", "6"), {}, {});
  queue_usage q{"q", queue_state::open, {}, {}, {}};
  auto g = make_gang("g", 3).min_resources(res("cpu", "3")).obj().group;
  EXPECT_TRUE(gate.admit(g, q).admitted());
  EXPECT_TRUE(gate.admit(g, q).admitted());
  auto third = gate.admit(g, q);
  EXPECT_EQ(third.code, admission_code::cluster_overcommit);
  EXPECT_EQ(third.reason, "cluster overcommit: needs cpu 3, 1200m left of 1.2 x allocatable");
  EXPECT_EQ(q.inqueue, res("cpu", "6"));
  EXPECT_EQ(gate.cluster_room(), res("cpu", "1200m"));
  // check() changes nothing.
  (void)gate.check(g, q);
  EXPECT_EQ(gate.cluster_room(), res("cpu", "1200m"));
}

TEST(EnqueueGate, AdmitCountsQueueCapability) {
  enqueue_gate gate({}, res("cpu", "100"), {}, {});
  queue_usage q{"team", queue_state::open, cap({{"cpu", "5"}}), {}, {}};
  auto g = make_gang("g", 1).min_resources(res("cpu", "2")).obj().group;
  EXPECT_TRUE(gate.admit(g, q).admitted());
  EXPECT_TRUE(gate.admit(g, q).admitted());
  auto d = gate.admit(g, q);
  EXPECT_EQ(d.reason, "queue \"team\" capability: needs cpu 2, has 1 of 5 left");
}

// What an admitted gang claims (Volcano's GetInqueueResource as its overcommit and proportion
// plugins apply it): a gang of 4 pods of 2 cpu, minMember 4, minResources 8 cpu.
TEST(EnqueueGate, GateClaimTable) {
  auto g = make_gang("spark", 4).min_resources(res("cpu", "8")).obj().group;
  struct row {
    const char* what;
    bool started;
    int64_t holding;
    const char* allocated_cpu;
    const char* claim_cpu;  // nullptr: nothing.
  };
  const row rows[] = {
      {"admitted, nothing placed: the whole minResources", false, 0, "0", "8"},
      {"admitted, placing: what it does not hold yet", false, 3, "6", "2"},
      {"started, holding its minimum: nothing left", true, 4, "8", nullptr},
      {"started, minimum held with smaller pods: the rest", true, 4, "6", "2"},
      {"started, finishing (driver done): nothing, not 2 cpu", true, 3, "6", nullptr},
      {"started, every pod ended: nothing, not 8 cpu", true, 0, "0", nullptr},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.what);
    auto claim = gate_claim(g, r.started, r.holding, res("cpu", r.allocated_cpu));
    EXPECT_EQ(claim, r.claim_cpu == nullptr ? resources{} : res("cpu", r.claim_cpu));
  }
}

TEST(EnqueueGate, CustomFactor) {
  auto factor = parse_overcommit_factor("1.5");
  ASSERT_TRUE(factor.ok());
  enqueue_gate gate({*factor}, res("nvidia.com/gpu", "4"), res("nvidia.com/gpu", "4"), {});
  auto g = make_gang("g", 1).min_resources(res("nvidia.com/gpu", "3")).obj().group;
  auto d = gate.check(g, {"q", queue_state::open, {}, {}, {}});
  EXPECT_EQ(d.reason, "cluster overcommit: needs nvidia.com/gpu 3, 2 left of 1.5 x allocatable");
  g.min_resources = res("nvidia.com/gpu", "2");
  EXPECT_TRUE(gate.check(g, {"q", queue_state::open, {}, {}, {}}).admitted());
}

} // namespace
} // namespace phalanx::scheduler
