// Volcano's allocate order on the whole runtime: every gang reaches its minimum before any gang
// gets pods beyond it. Elastic gangs (more pods than minMember) place their minimum, then ask
// for an elastic round, which their queue grants after the gangs still short of theirs.

#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

std::map<std::string, int> bound_by_group(runtime_harness& h) {
  std::map<std::string, int> out;
  for (const auto& p : h.pods())
    if (p.pod.is_bound())
      ++out[p.pod.group.str()];
  return out;
}

// The case: three jobs each as big as the cluster (8 slots), minAvailable 2, submitted
// together. The first took all 8 slots and the others none; now each gets its 2 first.
void three_cluster_sized_gangs(uint64_t seed) {
  runtime_harness h{deterministic_config(seed),
                    {make_node("n-0").cpu("4").memory("16Gi"), make_node("n-1").cpu("4").memory("16Gi")}};
  std::vector<api::object> objects;
  for (const char* g : {"a", "b", "c"})
    objects.push_back(group_of(g, 2));
  for (int i = 0; i < 8; ++i)
    for (const char* g : {"a", "b", "c"})
      objects.push_back(api::pod_object{
          make_pod(std::string(g) + "-" + std::to_string(i)).cpu("1").group(g), {}});
  h.create_all(std::move(objects));
  ASSERT_TRUE(h.run_until(
      [&] {
        int total = 0;
        for (const auto& [g, n] : bound_by_group(h))
          total += n;
        return total == 8;
      },
      std::chrono::milliseconds(10000), std::chrono::milliseconds(10)));
  h.pass(std::chrono::milliseconds(2000));
  auto bound = bound_by_group(h);
  for (const char* g : {"a", "b", "c"})
    EXPECT_GE(bound[g], 2) << "gang " << g << " did not get its minimum; a " << bound["a"]
                           << ", b " << bound["b"] << ", c " << bound["c"];
  auto report = h.invariants(false);
  EXPECT_TRUE(report.ok()) << report.to_string();
}

TEST(AllocateOrder, EveryGangGetsItsMinimumBeforeAnyGetsMore) {
  for (uint64_t seed : {21u, 22u, 23u})
    three_cluster_sized_gangs(seed);
}

// Alone, an elastic gang still gets every pod that fits: its minimum, then the rest.
TEST(AllocateOrder, AnElasticGangAloneTakesWhatFitsBeyondItsMinimum) {
  runtime_harness h{deterministic_config(24), {make_node("n-0").cpu("4").memory("16Gi")}};
  runtime_harness::must_ok(h.create(group_of("spark", 2)), "the PodGroup");
  std::vector<api::object> pods;
  for (int i = 0; i < 6; ++i)
    pods.push_back(api::pod_object{make_pod("e-" + std::to_string(i)).cpu("1").group("spark"), {}});
  h.create_all(std::move(pods));
  ASSERT_TRUE(h.run_until([&] { return bound_by_group(h)["spark"] == 4; },
                          std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  h.pass(std::chrono::milliseconds(1000));
  EXPECT_EQ(bound_by_group(h)["spark"], 4);
}

} // namespace
} // namespace phalanx::actors::testing
