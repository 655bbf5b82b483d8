// The whole runtime on real threads under load: 500 nodes, 2,000 gangs of 1-32 pods with random
// requests in three weighted queues, random run times and some failures, some gangs deleted
// while they run. While it runs, I1, I2 and I4 hold at every check; at the end, at rest, I1-I4
// hold, the queues account nothing, and every gang that fits the cluster ran (every gang here
// does, by construction: each pod fits an empty node and each gang fits the cluster).
//
// The seed is printed; PHALANX_STRESS_SEED replays one. `make long` runs a bigger variant.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::testing::make_node;
using scheduler::testing::res;

struct stress_shape {
  int nodes = 500;
  int gangs = 2000;
  int max_gang = 32;
  /// On CAF's test coordinator with virtual time: the same seed gives the same run.
  bool deterministic = false;
};

uint64_t seed_from_env(uint64_t fallback) {
  if (const char* s = std::getenv("PHALANX_STRESS_SEED"))
    return std::strtoull(s, nullptr, 10);
  return fallback;
}

void run_stress(const stress_shape& shape, uint64_t seed) {
  std::printf("stress: %d nodes, %d gangs of 1-%d pods, seed %llu\n", shape.nodes, shape.gangs,
              shape.max_gang, static_cast<unsigned long long>(seed));
  std::mt19937_64 rng{seed};
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

  std::vector<scheduler::node> nodes;
  for (int i = 0; i < shape.nodes; ++i) {
    auto n = make_node("node-" + std::to_string(i)).cpu(i % 3 == 0 ? "32" : "16").memory("64Gi");
    if (i % 10 == 0)
      n.gpu(8);
    nodes.push_back(n);
  }
  runtime_config config;
  config.seed = seed;
  config.threads = 2;
  config.deterministic = shape.deterministic;
  // Park gangs idle for 30 ms (pods run 20-400 ms): gangs are parked and woken again and again
  // between their pods' ends, on real threads, while everything else goes on.
  config.scheduling.park_idle_gangs_after = 30ms;
  runtime_harness h{config, nodes};

  std::vector<api::object> objects;
  const char* queues[] = {"default", "research", "batch"};
  for (int q = 1; q < 3; ++q) {
    scheduler::queue queue;
    queue.meta.name = queues[q];
    queue.weight = q * 2;
    objects.push_back(api::queue_object{queue, {}});
  }
  h.create_all(std::move(objects));

  std::vector<std::string> group_names;
  std::map<std::string, int32_t> min_member_of;
  objects.clear();
  for (int g = 0; g < shape.gangs; ++g) {
    auto name = "gang-" + std::to_string(g);
    int size = pick(1, shape.max_gang);
    int min = pick(1, size);
    bool gpu = pick(0, 9) == 0 && size <= 8;
    scheduler::pod_group group;
    group.meta.name = name;
    group.meta.namespace_name = "default";
    group.min_member = min;
    group.queue = queues[pick(0, 2)];
    group.priority = pick(0, 3) == 0 ? 10 : 0;
    scheduler::resources each = res("cpu", std::to_string(pick(1, 8) * 250) + "m", "memory",
                                    std::to_string(pick(1, 8)) + "Gi");
    if (gpu)
      each.set("nvidia.com/gpu", pick(1, 2));
    group.min_resources = each.times(min);
    group.min_resources.pods = 0;
    objects.push_back(api::pod_group_object{group, {}});
    for (int p = 0; p < size; ++p) {
      scheduler::pod pod = scheduler::testing::make_pod(name + "-" + std::to_string(p))
                               .requests(each)
                               .group(name)
                               .role(p == 0 ? "leader" : "worker");
      auto run_ms = pick(20, 400);
      pod.meta.annotations.set(std::string(pick(0, 49) == 0 ? sim_fail_after_key : sim_duration_key),
                               std::to_string(run_ms) + "ms");
      objects.push_back(api::pod_object{pod, {}});
    }
    group_names.push_back(name);
    min_member_of[name] = min;
  }
  h.create_all(std::move(objects));

  // Delete a few gangs' pods while the load runs, without waiting for the answers, so deletions
  // land in every phase of a gang's rounds: nothing may leak or break.
  std::set<std::string> deleted;
  auto delete_some = [&] {
    auto name = group_names[static_cast<std::size_t>(pick(0, shape.gangs - 1))];
    if (!deleted.insert(name).second)
      return;
    for (const auto& p : h.pods("default"))
      if (p.pod.group == name)
        h.svc().remove(api::resource_kind::pod, "default", p.pod.meta.name.str(),
                       [](result<api::object>) {});
  };
  for (int i = 0; i < shape.gangs / 200; ++i)
    delete_some();

  // A gang can be stranded by design: it ran (reached minMember), then pods failed, and the pods
  // left to place can no longer bring it back to minMember. Nothing recreates bare pods (a Volcano
  // Job would restart by its policy), and gang scheduling, as in Volcano, never binds a gang below
  // minMember, so those pods stay pending forever. Such a gang counts as done once nothing of it
  // runs. (Found by the 10,000-gang run of `make long`, where gangs of up to 64 pods with one pod
  // in 50 failing make it likely.)
  std::set<std::string> stranded;
  auto drop_stranded = [&](std::vector<std::string>& names) {
    struct tally {
      int32_t failed = 0, live = 0, pending = 0, succeeded = 0;
    };
    std::map<std::string, tally> of;
    for (const auto& n : names)
      of[n];
    for (const auto& p : h.pods("default")) {
      auto t = of.find(p.pod.group.str());
      if (t == of.end())
        continue;
      if (p.pod.phase == scheduler::pod_phase::failed)
        ++t->second.failed;
      else if (p.pod.phase == scheduler::pod_phase::succeeded)
        ++t->second.succeeded;
      else if (p.pod.is_bound())
        ++t->second.live;
      else
        ++t->second.pending;
    }
    std::erase_if(names, [&](const std::string& n) {
      const auto& t = of[n];
      bool out = t.failed > 0 && t.live == 0 && t.pending > 0 &&
                 t.succeeded + t.pending < min_member_of[n];
      if (out)
        stranded.insert(n);
      return out;
    });
  };
  // Drained: every gang not deleted completed. The live invariants are checked every ~0.5 s (each
  // check asks every actor, which costs the registry a full copy of the catalog).
  auto unfinished = [&] {
    std::vector<std::string> out;
    auto r = h.list(api::resource_kind::pod_group, "default");
    runtime_harness::must_ok(r, "list podgroups");
    for (const auto& o : r->items) {
      const auto& g = std::get<api::pod_group_object>(o);
      if (g.status.phase != scheduler::pod_group_phase::completed &&
          !deleted.count(g.group.meta.name.str()))
        out.push_back(g.group.meta.name.str());
    }
    // Near the end: worth a look at their pods (a listing of every pod). A seed of `make long`
    // (10,000 gangs, one pod in 50 failing) strands 40 to 60 gangs: looked at only once 50 or
    // fewer were left, 55 of seed 31676 never were, and the drain failed on them alone.
    if (!out.empty() && out.size() <= 500)
      drop_stranded(out);
    return out;
  };
  int checks = 0;
  auto last_check = std::chrono::steady_clock::now() - 1h;
  int rounds = 0;
  bool drained = h.run_until(
      [&] {
        if (++rounds <= 10)
          for (int i = 0; i < shape.gangs / 200; ++i)
            delete_some();
        if (shape.deterministic || std::chrono::steady_clock::now() - last_check > 500ms) {
          auto inv = h.invariants(false);
          EXPECT_TRUE(inv.ok()) << inv.to_string();
          ++checks;
          last_check = std::chrono::steady_clock::now();
        }
        return unfinished().empty();
      },
      std::chrono::minutes(4), shape.deterministic ? 1s : 200ms);
  if (!drained) {
    auto left = unfinished();
    std::string detail;
    for (std::size_t i = 0; i < left.size() && i < 10; ++i) {
      auto g = h.group(left[i]);
      detail += "\n  " + left[i] + ": " + std::string(scheduler::to_string(g.status.phase));
      for (const auto& c : g.status.conditions)
        detail += " [" + c.type + ": " + c.message + "]";
    }
    FAIL() << left.size() << " gangs did not complete within 4 minutes (seed " << seed << "):"
           << detail;
  }
  std::printf("stress: drained, %d live checks, %zu gangs stranded by failed pods\n", checks,
              stranded.size());
  // Every pod ended too (deleted gangs' pods are gone), but the stranded gangs' pending ones.
  for (const auto& p : h.pods("default")) {
    if (!stranded.count(p.pod.group.str())) {
      EXPECT_TRUE(scheduler::is_terminal(p.pod.phase)) << p.pod.meta.name;
    }
  }

  // Every completed gang's actor is parked soon after (30 ms idle), nothing else is left to wake
  // them.
  auto unparked_completed = [&] {
    std::set<std::string> parked;
    for (const auto& g : h.rt().facts().groups)
      if (g.parked)
        parked.insert(g.key);
    std::vector<std::string> out;
    for (const auto& name : group_names)
      if (!deleted.count(name) && !stranded.count(name) && !parked.count("default/" + name))
        out.push_back(name);
    return out;
  };
  EXPECT_TRUE(h.run_until([&] { return unparked_completed().empty(); }, 10s,
                          shape.deterministic ? 100ms : 20ms))
      << unparked_completed().size() << " completed gangs were not parked (seed " << seed << ")";

  // At rest: every invariant, including I3, and nothing left accounted.
  auto facts = h.rt().facts();
  auto inv = check_invariants(facts, true);
  EXPECT_TRUE(inv.ok()) << inv.to_string() << " (seed " << seed << ")";
  for (const auto& q : facts.queues)
    EXPECT_TRUE(q.allocated.is_zero()) << q.name << " still accounts " << q.allocated.to_string();
  for (const auto& n : facts.nodes) {
    EXPECT_TRUE(n.committed.is_zero()) << n.name << " still commits " << n.committed.to_string()
                                       << " for " << ::testing::PrintToString(n.bound_pods);
    EXPECT_TRUE(n.held.is_zero()) << n.name << " still holds " << n.held.to_string();
  }

  // Every gang ran: each of its pods was bound (a deleted gang may have been deleted first).
  std::map<std::string, int32_t> bound_per_group;
  for (const auto& p : h.pods("default"))
    if (p.pod.is_bound())
      ++bound_per_group[p.pod.group.str()];
  for (const auto& name : group_names) {
    if (deleted.count(name))
      continue;
    EXPECT_GE(bound_per_group[name], min_member_of[name])
        << name << " never ran (seed " << seed << ")";
    if (stranded.count(name))
      continue;
    auto g = h.group(name);
    EXPECT_EQ(g.status.phase, scheduler::pod_group_phase::completed) << name;
  }
}

TEST(Stress, FiveHundredNodesTwoThousandGangs) {
  run_stress({}, seed_from_env(20261123));
}

// The same load, smaller, on virtual time: a failing seed replays exactly.
TEST(Stress, DeterministicSeeds) {
  for (uint64_t seed = 1; seed <= 3; ++seed)
    run_stress({100, 300, 32, true}, seed_from_env(seed));
}

// Registered for `make long` only (label slow): 2,000 nodes, 10,000 gangs of 1-64 pods, 5 seeds.
TEST(Stress, Long) {
  for (uint64_t seed = 1; seed <= 5; ++seed)
    run_stress({2000, 10000, 64}, seed_from_env(seed * 7919));
}

} // namespace
} // namespace phalanx::actors::testing
