#include "scheduler/fair_share.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

using testing::res;

// A queue for the tables: name, weight, request, and optional capability and guarantee.
queue_demand queue_of(std::string name, int32_t weight, resources request,
                      resource_limit capability = {}, resources guarantee = {}) {
  return {std::move(name), weight, std::move(capability), std::move(guarantee),
          std::move(request)};
}

resource_limit cap(std::string_view name, std::string_view amount) {
  resource_limit out;
  EXPECT_TRUE(out.set(name, testing::amount(name, amount)));
  return out;
}

// The cpu (in millicores) each queue deserves, in input order.
std::vector<int64_t> cpu_of(const std::vector<queue_deserved>& d) {
  std::vector<int64_t> out;
  for (const auto& q : d)
    out.push_back(q.deserved.cpu_milli);
  return out;
}

// Plenty: more than any test cluster holds.
const resources plenty = res("cpu", "1000", "memory", "1Ti");

TEST(FairShare, EqualWeightsSplitEvenly) {
  std::vector<queue_demand> qs = {queue_of("a", 1, plenty), queue_of("b", 1, plenty)};
  auto d = compute_deserved(res("cpu", "10"), qs);
  // deserved: a = 5, b = 5
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{5000, 5000}));
  EXPECT_EQ(d[0].name, "a");
  EXPECT_EQ(d[1].name, "b");
}

TEST(FairShare, WeightsSplitProportionally) {
  std::vector<queue_demand> qs = {queue_of("a", 1, plenty), queue_of("b", 3, plenty)};
  auto d = compute_deserved(res("cpu", "8"), qs);
  // deserved: a = 2, b = 6
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{2000, 6000}));
}

TEST(FairShare, RequestCapsAndTheRestFlowsToOthers) {
  std::vector<queue_demand> qs = {queue_of("a", 1, res("cpu", "2")), queue_of("b", 1, plenty)};
  auto d = compute_deserved(res("cpu", "10"), qs);
  // a asks for 2 of its 5; b takes the other 3: a = 2, b = 8
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{2000, 8000}));
}

TEST(FairShare, CapabilityCaps) {
  std::vector<queue_demand> qs = {queue_of("a", 1, plenty, cap("cpu", "3")),
                                  queue_of("b", 1, plenty)};
  auto d = compute_deserved(res("cpu", "10"), qs);
  // a = 3 (capability), b = 7
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{3000, 7000}));
}

TEST(FairShare, GuaranteeFloorsAndIsNeverGivenToOthers) {
  std::vector<queue_demand> qs = {queue_of("a", 1, plenty, {}, res("cpu", "6")),
                                  queue_of("b", 1, plenty)};
  auto d = compute_deserved(res("cpu", "10"), qs);
  // Level 5 would give a 5 < guarantee 6; b's real capability is 10 - 6 = 4: a = 6, b = 4
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{6000, 4000}));
}

TEST(FairShare, GuaranteeHoldsEvenAboveRequest) {
  std::vector<queue_demand> qs = {queue_of("a", 1, res("cpu", "1"), {}, res("cpu", "4")),
                                  queue_of("b", 1, plenty)};
  auto d = compute_deserved(res("cpu", "10"), qs);
  // a asks 1 but is guaranteed 4; b gets the rest: a = 4, b = 6
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{4000, 6000}));
}

TEST(FairShare, OversubscribedGuaranteesAreAllHonoured) {
  std::vector<queue_demand> qs = {queue_of("a", 1, plenty, {}, res("cpu", "3")),
                                  queue_of("b", 1, plenty, {}, res("cpu", "3"))};
  auto d = compute_deserved(res("cpu", "5"), qs);
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{3000, 3000}));
}

TEST(FairShare, EveryoneSatisfiedLeavesTheRestUnassigned) {
  std::vector<queue_demand> qs = {queue_of("a", 1, res("cpu", "1")),
                                  queue_of("b", 2, res("cpu", "2"))};
  auto d = compute_deserved(res("cpu", "10"), qs);
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{1000, 2000}));
}

TEST(FairShare, RemaindersGoToLargestFractionThenName) {
  // 10 units over weights 1 and 2: exact 3.33 and 6.67; the lost unit goes to b (.67 > .33).
  std::vector<std::string> names = {"a", "b"};
  EXPECT_EQ(water_fill(10, std::vector<int64_t>{1, 2}, std::vector<int64_t>{0, 0},
                       std::vector<int64_t>{100, 100}, names),
            (std::vector<int64_t>{3, 7}));
  // 10 units over three equal queues: 3.33 each; the unit goes to the first name.
  std::vector<std::string> three = {"c", "a", "b"};
  EXPECT_EQ(water_fill(10, std::vector<int64_t>{1, 1, 1}, std::vector<int64_t>{0, 0, 0},
                       std::vector<int64_t>{100, 100, 100}, three),
            (std::vector<int64_t>{3, 4, 3}));
}

TEST(FairShare, ThreeQueuesOneSatisfied) {
  std::vector<queue_demand> qs = {queue_of("a", 1, res("cpu", "10")),
                                  queue_of("b", 2, res("cpu", "1")),
                                  queue_of("c", 3, res("cpu", "10"))};
  auto d = compute_deserved(res("cpu", "12"), qs);
  // b stops at its request 1; 11 left over weights 1:3 = 2.75, 8.25; the lost unit goes to a
  // (.75 > .25): a = 3, b = 1, c = 8 (millicores are the unit here: 2750m, 1000m, 8250m).
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{2750, 1000, 8250}));
  auto units = water_fill(12, std::vector<int64_t>{1, 2, 3}, std::vector<int64_t>{0, 0, 0},
                          std::vector<int64_t>{10, 1, 10},
                          std::vector<std::string>{"a", "b", "c"});
  EXPECT_EQ(units, (std::vector<int64_t>{3, 1, 8}));
}

TEST(FairShare, DimensionsFillIndependently) {
  std::vector<queue_demand> qs = {
      queue_of("a", 1, res("cpu", "100", "nvidia.com/gpu", "1")),
      queue_of("b", 1, res("cpu", "1", "nvidia.com/gpu", "100"))};
  auto d = compute_deserved(res("cpu", "10", "nvidia.com/gpu", "8"), qs);
  // cpu: a = 9, b = 1; gpu: a = 1, b = 7
  EXPECT_EQ(d[0].deserved, res("cpu", "9", "nvidia.com/gpu", "1"));
  EXPECT_EQ(d[1].deserved, res("cpu", "1", "nvidia.com/gpu", "7"));
}

TEST(FairShare, ZeroWeightGetsOnlyItsGuarantee) {
  std::vector<queue_demand> qs = {queue_of("a", 0, plenty, {}, res("cpu", "1")),
                                  queue_of("b", 1, plenty)};
  auto d = compute_deserved(res("cpu", "10"), qs);
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{1000, 9000}));
}

TEST(FairShare, ResultDoesNotDependOnInputOrder) {
  std::vector<queue_demand> qs = {queue_of("a", 1, plenty), queue_of("b", 1, plenty),
                                  queue_of("c", 1, plenty)};
  auto forward = compute_deserved(res("cpu", "10m"), qs);
  std::reverse(qs.begin(), qs.end());
  auto backward = compute_deserved(res("cpu", "10m"), qs);
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(forward, backward);
  // 10m over three: a gets the lost unit by name: a = 4m, b = 3m, c = 3m
  EXPECT_EQ(cpu_of(forward), (std::vector<int64_t>{4, 3, 3}));
}

TEST(FairShare, NoQueues) { EXPECT_TRUE(compute_deserved(res("cpu", "4"), {}).empty()); }

TEST(FairShare, HugeAmountsDoNotOverflow) {
  const int64_t big = INT64_MAX / 2;
  std::vector<std::string> names = {"a", "b"};
  auto out = water_fill(big, std::vector<int64_t>{65535, 1}, std::vector<int64_t>{0, 0},
                        std::vector<int64_t>{INT64_MAX, INT64_MAX}, names);
  EXPECT_EQ(out[0] + out[1], big);
  EXPECT_GT(out[0], out[1]);
}

// Properties of water_fill on random inputs: bounds, the sum, and the water-level condition (no
// unit could move from one queue to another and make the levels more even).
TEST(FairShare, WaterFillPropertiesHoldOnRandomInputs) {
  std::mt19937_64 random(42);
  for (int round = 0; round < 2000; ++round) {
    const std::size_t n = 1 + random() % 6;
    std::vector<int64_t> w(n), lo(n), hi(n);
    std::vector<std::string> names(n);
    int64_t total = int64_t(random() % 200);
    for (std::size_t i = 0; i < n; ++i) {
      w[i] = int64_t(random() % 6);  // Sometimes 0: such a queue only gets its floor.
      lo[i] = random() % 4 == 0 ? int64_t(random() % 20) : 0;
      hi[i] = w[i] == 0 ? lo[i] : lo[i] + int64_t(random() % 80);
      names[i] = std::string(1, char('a' + i));
    }
    auto x = water_fill(total, w, lo, hi, names);
    int64_t sum = 0, sum_lo = 0, sum_hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_GE(x[i], lo[i]);
      ASSERT_LE(x[i], hi[i]);
      sum += x[i];
      sum_lo += lo[i];
      sum_hi += hi[i];
    }
    const int64_t expected_sum = sum_lo >= total ? sum_lo : std::min(sum_hi, total);
    ASSERT_EQ(sum, expected_sum);
    // If queue i could grow (below hi) and j could shrink (above lo), j's level minus one unit is
    // not above i's level plus one unit: (x_j - 1) / w_j <= (x_i + 1) / w_i.
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (i != j && x[i] < hi[i] && x[j] > lo[j]) {
          ASSERT_LE((x[j] - 1) * w[i], (x[i] + 1) * w[j])
              << "round " << round << " i " << i << " j " << j;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Hierarchical queues: deserved computed down the tree.

// `q` under `parent`.
queue_demand under(std::string parent, queue_demand q) {
  q.parent = std::move(parent);
  return q;
}

// Two departments with two teams each, every team asking for more than the cluster holds:
// dev (weight 1) with d1, d2 (weights 1, 1); prod (weight 3) with p1, p2 (weights 1, 2).
// Only the teams ask: departments take no jobs.
std::vector<queue_demand> departments() {
  return {queue_of("dev", 1, {}),
          under("dev", queue_of("d1", 1, plenty)),
          under("dev", queue_of("d2", 1, plenty)),
          under("root", queue_of("prod", 3, {})),
          under("prod", queue_of("p1", 1, plenty)),
          under("prod", queue_of("p2", 2, plenty))};
}

// The queue of `qs` named `name`.
queue_demand& named(std::vector<queue_demand>& qs, std::string_view name) {
  auto it = std::find_if(qs.begin(), qs.end(), [&](const auto& q) { return q.name == name; });
  EXPECT_NE(it, qs.end()) << name;
  return *it;
}

struct tree_case {
  std::string what;
  std::function<void(std::vector<queue_demand>&)> change;
  // cpu in millicores, in the order of departments(): dev, d1, d2, prod, p1, p2.
  std::vector<int64_t> expected;
};

TEST(FairShareTree, DeservedFlowsDownTheTree) {
  const std::vector<tree_case> cases = {
      // Root: 40 over 1:3 -> dev 10, prod 30. dev: 10 over 1:1; prod: 30 over 1:2.
      {"each department splits its weighted share by its teams' weights",
       [](auto&) {},
       {10000, 5000, 5000, 30000, 10000, 20000}},
      // d1 takes 2 of its 5; d2, its sibling, gets the other 3. prod does not see them.
      {"a satisfied team's share goes to its sibling first",
       [](auto& qs) { named(qs, "d1").request = res("cpu", "2"); },
       {10000, 2000, 8000, 30000, 10000, 20000}},
      // dev asks for 2 + 3 = 5 of its 10; prod gets 35 = 11.67 + 23.33, the lost unit to p1
      // (remainder .67 > .33).
      {"a satisfied department's share goes up to the other department",
       [](auto& qs) {
         named(qs, "d1").request = res("cpu", "2");
         named(qs, "d2").request = res("cpu", "3");
       },
       {5000, 2000, 3000, 35000, 11667, 23333}},
      // prod stops at 20 (its teams' plenty does not matter); dev takes the other 20. Inside
      // prod: 20 over 1:2 = 6.67 + 13.33, the lost unit to p1.
      {"a department's capability caps its teams together",
       [](auto& qs) { named(qs, "prod").capability = cap("cpu", "20"); },
       {20000, 10000, 10000, 20000, 6667, 13333}},
      // dev's own guarantee 16 beats its teams' 4: dev 16, prod 40 - 16 = 24. Inside dev the
      // level 8 is above d1's floor 4: 8 and 8.
      {"a department's guarantee is a floor",
       [](auto& qs) {
         named(qs, "dev").guarantee = res("cpu", "16");
         named(qs, "d1").guarantee = res("cpu", "4");
       },
       {16000, 8000, 8000, 24000, 8000, 16000}},
      // d1's 12 is dev's guarantee (its children's sum): dev 12, prod 28 = 9.33 + 18.67 (lost
      // unit to p2). Inside dev, d2's real capability is 12 - 12 = 0.
      {"a team's guarantee is a floor for it and for its department",
       [](auto& qs) { named(qs, "d1").guarantee = res("cpu", "12"); },
       {12000, 12000, 0, 28000, 9333, 18667}},
      // Both levels floored: prod promised 30 of which p2 is promised 25. Root: dev's real
      // capability is 40 - 30 = 10. Inside prod: p1's real capability is 30 - 25 = 5.
      {"guarantees at both levels",
       [](auto& qs) {
         named(qs, "prod").guarantee = res("cpu", "30");
         named(qs, "p2").guarantee = res("cpu", "25");
       },
       {10000, 5000, 5000, 30000, 5000, 25000}},
      // With no parent given, prod's teams are at the root: 40 over dev 1, p1 1, p2 2, prod
      // asks nothing -> 10, 10, 20; dev splits its 10.
      {"a parent not in the input is the root",
       [](auto& qs) {
         named(qs, "p1").parent = "gone";
         named(qs, "p2").parent = "";
       },
       {10000, 5000, 5000, 0, 10000, 20000}},
  };
  for (const auto& c : cases) {
    auto qs = departments();
    c.change(qs);
    auto d = compute_deserved(res("cpu", "40"), qs);
    EXPECT_EQ(cpu_of(d), c.expected) << c.what;
    ASSERT_EQ(d.size(), qs.size());
    for (std::size_t i = 0; i < qs.size(); ++i)
      EXPECT_EQ(d[i].name, qs[i].name) << c.what;
  }
}

TEST(FairShareTree, FlatInputIsUnchangedWhateverTheRootIsCalled) {
  std::vector<queue_demand> flat = {queue_of("a", 1, res("cpu", "10")),
                                    queue_of("b", 2, res("cpu", "1"), {}, res("cpu", "1")),
                                    queue_of("c", 3, plenty, cap("cpu", "5"))};
  auto expected = compute_deserved(res("cpu", "12"), flat);
  // c stops at 5, b at its request 1; a takes the other 6.
  EXPECT_EQ(cpu_of(expected), (std::vector<int64_t>{6000, 1000, 5000}));
  for (auto& q : flat)
    q.parent = "root";
  EXPECT_EQ(compute_deserved(res("cpu", "12"), flat), expected);
}

TEST(FairShareTree, ACycleHangsUnderTheRoot) {
  // a -> b -> a: both are treated as children of the root; c under a stays under a.
  std::vector<queue_demand> qs = {under("b", queue_of("a", 1, plenty)),
                                  under("a", queue_of("b", 1, plenty)),
                                  under("a", queue_of("c", 1, plenty))};
  auto d = compute_deserved(res("cpu", "10"), qs);
  // Root: a (with c) and b, 5 each; a's 5 goes to c, its only child.
  EXPECT_EQ(cpu_of(d), (std::vector<int64_t>{5000, 5000, 5000}));
  std::vector<queue_demand> self = {under("a", queue_of("a", 1, plenty))};
  EXPECT_EQ(cpu_of(compute_deserved(res("cpu", "10"), self)), (std::vector<int64_t>{10000}));
}

TEST(FairShareTree, ResultDoesNotDependOnInputOrder) {
  auto qs = departments();
  named(qs, "d1").request = res("cpu", "2m");
  named(qs, "p1").guarantee = res("cpu", "13m");
  // Every order of the six queues gives the same deserved per queue.
  std::vector<std::size_t> order = {0, 1, 2, 3, 4, 5};
  std::map<std::string, resources> first;
  do {
    std::vector<queue_demand> shuffled;
    for (auto i : order)
      shuffled.push_back(qs[i]);
    std::map<std::string, resources> by_name;
    for (auto& q : compute_deserved(res("cpu", "40m"), shuffled))
      by_name[q.name] = q.deserved;
    if (first.empty())
      first = by_name;
    ASSERT_EQ(by_name, first);
  } while (std::next_permutation(order.begin(), order.end()));
  // Root: prod's floor is 13, dev asks 2 + plenty: 40m over 1:3 = 10m, 30m. dev: d1 2m, d2 8m.
  // prod: p1's floor 13m is above its 10m level: p1 13m, p2 17m.
  EXPECT_EQ(first["dev"], res("cpu", "10m"));
  EXPECT_EQ(first["d1"], res("cpu", "2m"));
  EXPECT_EQ(first["d2"], res("cpu", "8m"));
  EXPECT_EQ(first["prod"], res("cpu", "30m"));
  EXPECT_EQ(first["p1"], res("cpu", "13m"));
  EXPECT_EQ(first["p2"], res("cpu", "17m"));
}

// On random trees, a parent's children never deserve more together than the parent does.
TEST(FairShareTree, ChildrenNeverExceedTheirParentOnRandomTrees) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 500; ++round) {
    const std::size_t n = 1 + random() % 8;
    std::vector<queue_demand> qs;
    for (std::size_t i = 0; i < n; ++i) {
      auto q = queue_of(std::string(1, char('a' + i)), int32_t(1 + random() % 4),
                        resources{}.with_cpu_milli(int64_t(random() % 30)));
      if (random() % 3 == 0)
        q.guarantee.cpu_milli = int64_t(random() % 6);
      if (random() % 4 == 0) {
        ASSERT_TRUE(q.capability.set("cpu", int64_t(random() % 20)));
      }
      // Parents come earlier in the input, so there is no cycle.
      if (i > 0 && random() % 3 != 0)
        q.parent = qs[random() % i].name;
      qs.push_back(q);
    }
    auto d = compute_deserved(resources{}.with_cpu_milli(int64_t(random() % 60)), qs);
    for (std::size_t p = 0; p < n; ++p) {
      int64_t children = 0;
      bool any = false;
      for (std::size_t c = 0; c < n; ++c) {
        if (qs[c].parent == qs[p].name) {
          children += d[c].deserved.cpu_milli;
          any = true;
        }
      }
      if (any) {
        ASSERT_LE(children, d[p].deserved.cpu_milli) << "round " << round << " parent " << p;
      }
    }
  }
}

TEST(FairShare, QueueShareIsDominantAllocatedOverDeserved) {
  // shares: cpu 2/4 = .5, memory 1/4 = .25 -> .5
  EXPECT_EQ(queue_share(res("cpu", "2", "memory", "1Gi"), res("cpu", "4", "memory", "4Gi")),
            (ratio{1, 2}));
  // Nothing deserved but something allocated: share 1.
  EXPECT_EQ(queue_share(res("nvidia.com/gpu", "1"), res("cpu", "4")), (ratio{1, 1}));
  // Nothing allocated: 0.
  EXPECT_EQ(queue_share(resources{}, res("cpu", "4")), (ratio{0, 1}));
  // Pods never count.
  EXPECT_EQ(queue_share(res("cpu", "1", "pods", "100"), res("cpu", "4", "pods", "1")),
            (ratio{1, 4}));
}

// Volcano's proportion plugin: overused when what the queue holds reaches its deserved share in
// every dimension but pods (Volcano keeps the pod count out of the resources it compares), here
// only while other queues cut that share.
TEST(FairShare, QueueOverusedTable) {
  struct row {
    const char* what;
    resources allocated, deserved;
    bool overused;
  };
  const std::vector<row> rows = {
      {"below in cpu", res("cpu", "1", "memory", "4Gi"), res("cpu", "2", "memory", "4Gi"), false},
      {"at its share in every dimension", res("cpu", "2", "memory", "4Gi"),
       res("cpu", "2", "memory", "4Gi"), true},
      {"above in one, at in the other", res("cpu", "3", "memory", "4Gi"),
       res("cpu", "2", "memory", "4Gi"), true},
      {"a dimension it is not given counts as reached", res("cpu", "2", "nvidia.com/gpu", "1"),
       res("cpu", "2"), true},
      {"below in the gpus it deserves", res("cpu", "8", "nvidia.com/gpu", "1"),
       res("cpu", "2", "nvidia.com/gpu", "4"), false},
      {"pods waiting raise the pods it deserves: they do not count",
       res("cpu", "2", "pods", "2"), res("cpu", "2", "pods", "5"), true},
      {"pods beyond the share do not count either", res("cpu", "1", "pods", "9"),
       res("cpu", "2", "pods", "5"), false},
      {"nothing deserved yet", res("cpu", "2"), resources{}, false},
      {"a share of pods alone", res("pods", "9"), res("pods", "5"), false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(queue_overused(r.allocated, r.deserved, true), r.overused) << r.what;
    EXPECT_FALSE(queue_overused(r.allocated, r.deserved, false)) << r.what << ", share not cut";
  }
}

// A share is cut when it is below what the queue would get alone: the smaller of what it asks
// and what the cluster has, in some dimension but pods.
TEST(FairShare, ShareCutByOthersTable) {
  const auto total = res("cpu", "8", "memory", "16Gi", "nvidia.com/gpu", "4", "pods", "110");
  struct row {
    const char* what;
    resources deserved, request;
    bool cut;
  };
  const std::vector<row> rows = {
      {"all it asks", res("cpu", "2", "memory", "2Gi"), res("cpu", "2", "memory", "2Gi"), false},
      {"alone, asking more than the cluster has: all of it", res("cpu", "8", "memory", "16Gi"),
       res("cpu", "20", "memory", "40Gi"), false},
      {"half the cpus it asks", res("cpu", "4", "memory", "2Gi"), res("cpu", "8", "memory", "2Gi"),
       true},
      {"gpus cut, the rest not", res("cpu", "2", "nvidia.com/gpu", "1"),
       res("cpu", "2", "nvidia.com/gpu", "3"), true},
      {"fewer pods than it asks do not count", res("cpu", "2", "pods", "2"),
       res("cpu", "2", "pods", "9"), false},
      {"nothing asked", resources{}, resources{}, false},
  };
  for (const auto& r : rows)
    EXPECT_EQ(share_cut_by_others(r.deserved, r.request, total), r.cut) << r.what;
}

TEST(FairShare, DrfShareIsDominantOverClusterTotal) {
  const auto total = res("cpu", "100", "memory", "100Gi", "pods", "1000");
  // shares: cpu .01, memory .10 -> .10
  EXPECT_EQ(drf_share(res("cpu", "1", "memory", "10Gi", "pods", "900"), total), (ratio{1, 10}));
  EXPECT_EQ(without_pods(res("cpu", "1", "pods", "3")), res("cpu", "1"));
}

} // namespace
} // namespace phalanx::scheduler
