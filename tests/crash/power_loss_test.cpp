// Power loss under the whole runtime (issue 4, DESIGN.md sections 5 and 8): the runtime runs in
// deterministic mode (CAF's test coordinator) on a store opened on storage's power-loss file
// system (store_options::fault_injection). A seeded workload of nodes, PodGroups and pods is
// submitted through the service interface and scheduled and run by the simulated cluster; the
// power goes inside a seeded file operation (the WAL append or sync of a group commit, the commit
// mark, a flush, ...), dropping every byte not synced. Then the store is reopened and a fresh
// runtime started on it, and:
//   - open succeeds and reports no lost acknowledged writes;
//   - I1-I4 hold on the restarted runtime (check_invariants, at rest once it is idle);
//   - I5: every creation the service acknowledged before the crash is present, with its uid;
//     every binding and every pod phase the runtime showed before the crash (it shows them only
//     once durable) is still there: same node, no phase going back;
//   - life goes on: every complete, feasible gang runs to completion after the restart.
// The crash point, and everything else, follows from the seed, so a failing seed replays:
// PHALANX_CRASH_SEED=<seed> crash_tests --gtest_filter=PowerLossUnderRuntime.OneSeed, and
// ASeedReplaysTheSameRun checks that it does. (The one input that is not the seed's is the wall
// clock of the commit mark's once-a-second sync; a seed's run lasts milliseconds.)
// The workload creates a gang's pods before its PodGroup (crash_support.hpp says why);
// PlaceholdersAcrossRestart covers a gang running on placeholders across a restart. Every
// job_every-th gang is followed by a Volcano Job, whose pods are stored as the job (no records of
// their own: storage/README.md): I5 for an acknowledged job is its pods, all of them, present.

#include "tests/crash/crash_support.hpp"

#include "actors/runtime.hpp"
#include "api/codec.hpp"
#include "storage/store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

namespace phalanx::crash_tests {
namespace {

using namespace std::chrono_literals;

// What a seed's workload created and what the runtime showed before the crash.
struct pre_crash_record {
  struct ack {
    api::resource_kind kind;
    std::string key;
    std::string uid;
  };
  std::vector<ack> acknowledged;
  std::size_t failed = 0; // Answered with an error (after the crash: the store refuses).
  std::map<std::string, std::string> bound;             // Pod key -> node, as shown.
  std::map<std::string, scheduler::pod_phase> terminal; // Pod key -> phase, as shown.
};

constexpr int workload_gangs = 40;
constexpr int job_every = 8;
constexpr int job_replicas = 2;

std::string job_name(uint64_t seed, std::size_t i) {
  return "j" + std::to_string(seed) + "-" + std::to_string(i);
}

// A job of one task, "worker", of job_replicas 250m pods that run for `duration_ms`.
std::string job_body(const std::string& name, int duration_ms) {
  return R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job","metadata":{"name":")" +
         name + R"(","namespace":")" + std::string(workload_namespace) +
         R"("},"spec":{"schedulerName":"phalanx","minAvailable":)" +
         std::to_string(job_replicas) + R"(,"tasks":[{"name":"worker","replicas":)" +
         std::to_string(job_replicas) +
         R"(,"template":{"metadata":{"annotations":{"sim.phalanx.io/duration":")" +
         std::to_string(duration_ms) +
         R"(ms"}},"spec":{"containers":[{"name":"main","image":"sim","resources":{"requests":{"cpu":"250m","memory":"256Mi"}}}]}}}]}})";
}

// What the crash points exercised, to show the checks are not vacuous.
struct tally {
  std::atomic<int> inside{0};          // The power went during the workload, not after it.
  std::atomic<int> acknowledged{0};    // Creations acknowledged before the crash (checked: I5).
  std::atomic<int> bindings{0};        // Bindings shown before the crash (checked: I1, I5).
  std::atomic<int> finished{0};        // Pods shown Succeeded before the crash (checked: I5).
  std::atomic<int> failed{0};          // Creations answered with an error (the store refused).
  std::atomic<int> completed_after{0}; // Gangs that ran to completion after the restart.
  std::atomic<int> jobs{0};            // Jobs acknowledged before the crash (their pods: I5).
};

cluster_shape power_loss_cluster() {
  cluster_shape c;
  c.count = 4;
  return c;
}

// Records the facts the runtime shows: bound pods and finished ones. The facts also list a
// gang's placed placeholders ("<group>-placeholder-<i>"), which are holds, not pods: never
// persisted, so not expected back after a restart.
void observe(actors::runtime& rt, pre_crash_record& rec) {
  auto facts = rt.facts();
  for (const auto& p : facts.pods) {
    if (p.key.find("-placeholder-") != std::string::npos)
      continue;
    if (!p.node.empty())
      rec.bound.emplace(p.key, p.node);
    if (scheduler::is_terminal(p.phase))
      rec.terminal[p.key] = p.phase;
  }
}

// Phase 1: the workload on a fresh store, with the simulator's crash point armed by the caller;
// if the power has not gone by the end, it goes then, with the runtime still running. Returns
// true when the crash point fell inside the workload.
bool run_workload(uint64_t seed, const std::string& path,
                  const std::shared_ptr<storage::power_loss_simulator>& sim,
                  const std::vector<gang_spec>& gangs, pre_crash_record& rec) {
  std::string error;
  auto store = open_store(path, sim, error);
  if (!store)
    return true; // The power went while the store was being created: nothing acknowledged.
  auto started = actors::runtime::start(deterministic_config(seed), store);
  if (!started)
    return true;
  auto& rt = **started;
  std::mt19937_64 rng(seed ^ 0xC0FFEEull);
  auto create = [&](const std::string& body) {
    auto obj = decode_body(body);
    auto kind = api::kind_of(obj);
    const auto& m = api::meta_of(obj);
    auto key = m.namespace_name.empty() ? m.name.str() : m.namespace_name + "/" + m.name;
    rt.service().create(std::move(obj), [&rec, kind, key](result<api::object> r) {
      if (r.ok())
        rec.acknowledged.push_back({kind, key, api::meta_of(*r).uid.str()});
      else
        ++rec.failed;
    });
  };
  for (const auto& body : power_loss_cluster().node_bodies())
    create(body);
  rt.advance(2ms);
  for (std::size_t i = 0; i < gangs.size() && !sim->crashed(); ++i) {
    const auto& g = gangs[i];
    for (int k = 0; k < g.pods; ++k) // Pods first: no placeholders (crash_support.hpp).
      create(g.pod_body(k));
    create(g.podgroup_body());
    if (i % job_every == job_every - 1)
      create(job_body(job_name(seed, i), 5 + static_cast<int>(rng() % 50)));
    rt.advance(std::chrono::milliseconds(rng() % 6));
    if (i % 6 == 5)
      observe(rt, rec);
  }
  // Let it run: gangs complete and free room for others.
  for (int step = 0; step < 400 && !sim->crashed(); ++step) {
    rt.advance(5ms);
    if (step % 10 == 9)
      observe(rt, rec);
  }
  if (!sim->crashed())
    observe(rt, rec);
  // The power goes now if it has not yet: unsynced data is lost with the runtime still running.
  bool inside = sim->crashed();
  sim->crash();
  rt.shutdown();
  return inside;
}

// One seeded crash point; "" when every check passed, else what failed.
std::string crash_once(uint64_t seed, uint64_t operations_estimate, tally& t,
                       std::string* fingerprint = nullptr) {
  scratch_dir dir;
  auto path = dir.sub("db");
  auto sim = storage::power_loss_simulator::create();
  std::mt19937_64 rng(seed * 7919 + 3);
  auto cluster = power_loss_cluster();
  auto gangs = make_gangs(seed, workload_gangs, cluster, 100);
  uint64_t at = 1 + rng() % (operations_estimate + operations_estimate / 5);
  bool sync_lands = rng() % 2 == 0;
  sim->crash_after_operations(at, sync_lands);

  pre_crash_record rec;
  bool inside = run_workload(seed, path, sim, gangs, rec);
  sim->reset();

  std::string where = "seed " + std::to_string(seed) + " (crash in file operation " +
                      std::to_string(at) + (sync_lands ? ", the failing sync lands" : "") + ", " +
                      std::to_string(rec.acknowledged.size()) + " creations acknowledged): ";
  std::string error;
  auto store = open_store(path, sim, error);
  if (!store)
    return where + "reopen failed: " + error;
  if (store->recovery().lost_writes ||
      store->recovery().acknowledged_commit > store->recovery().recovered_commit)
    return where + "the commit mark reports lost acknowledged writes";
  auto started = actors::runtime::start(deterministic_config(seed + 1000003), store);
  if (!started)
    return where + "the runtime did not start: " + started.error().to_string();
  auto& rt = **started;
  rt.run_until_idle();

  std::vector<std::string> problems;
  auto facts = rt.facts();
  if (fingerprint) {
    // Everything the seed decided: what was acknowledged and shown before the crash, and what
    // the restarted runtime holds.
    std::ostringstream f;
    for (const auto& a : rec.acknowledged)
      f << a.key << '=' << a.uid << ';';
    for (const auto& [key, node] : rec.bound)
      f << key << '@' << node << ';';
    for (const auto& [key, phase] : rec.terminal)
      f << key << '!' << scheduler::to_string(phase) << ';';
    f << '|';
    for (const auto& p : facts.pods)
      f << p.key << '@' << p.node << '/' << scheduler::to_string(p.phase) << ';';
    *fingerprint = f.str();
  }
  auto report = actors::check_invariants(facts, /*at_rest=*/true);
  for (const auto& v : report.violations)
    problems.push_back("after restart: " + v);

  // I5 for creations.
  std::map<std::string, const actors::system_facts::pod*> pods;
  for (const auto& p : facts.pods)
    pods[p.key] = &p;
  std::set<std::string> groups, nodes;
  for (const auto& g : facts.groups)
    groups.insert(g.key);
  for (const auto& n : facts.nodes)
    nodes.insert(n.name);
  for (const auto& a : rec.acknowledged) {
    bool present = a.kind == api::resource_kind::pod         ? pods.count(a.key) > 0
                   : a.kind == api::resource_kind::pod_group ? groups.count(a.key) > 0
                   : a.kind == api::resource_kind::node      ? nodes.count(a.key) > 0
                                                             : true;
    if (!present)
      problems.push_back("I5: acknowledged " + std::string(api::to_string(a.kind)) + " " + a.key +
                         " is missing after the restart");
    if (a.kind == api::resource_kind::job) {
      ++t.jobs;
      for (int k = 0; k < job_replicas; ++k)
        if (!pods.count(a.key + "-worker-" + std::to_string(k)))
          problems.push_back("I5: pod " + a.key + "-worker-" + std::to_string(k) +
                             " of acknowledged job " + a.key + " is missing after the restart");
    }
  }
  // Uids: one get per acknowledged object would need the service; the facts carry none, so ask.
  std::size_t uid_mismatches = 0;
  for (const auto& a : rec.acknowledged) {
    auto slash = a.key.find('/');
    std::string ns = slash == std::string::npos ? "" : a.key.substr(0, slash);
    std::string name = slash == std::string::npos ? a.key : a.key.substr(slash + 1);
    std::optional<result<api::object>> got;
    rt.service().get(a.kind, ns, name, [&got](result<api::object> r) { got = std::move(r); });
    rt.run_until_idle();
    if (got && got->ok() && api::meta_of(**got).uid != a.uid && uid_mismatches++ < 5)
      problems.push_back("I5: " + a.key + " was acknowledged with uid " + a.uid +
                         " and is served with uid " + api::meta_of(**got).uid);
  }
  // I5 for the runtime's own writes, and I1 across the restart.
  for (const auto& [key, node] : rec.bound) {
    auto p = pods.find(key);
    if (p == pods.end())
      problems.push_back("I5: pod " + key + " was shown bound to " + node + " and is gone");
    else if (p->second->node != node)
      problems.push_back("I1: pod " + key + " was shown bound to " + node + " and is bound to '" +
                         p->second->node + "' after the restart");
  }
  for (const auto& [key, phase] : rec.terminal) {
    auto p = pods.find(key);
    if (p != pods.end() && !scheduler::is_terminal(p->second->phase))
      problems.push_back(
          "I5: pod " + key + " was shown " + std::string(scheduler::to_string(phase)) + " and is " +
          std::string(scheduler::to_string(p->second->phase)) + " after the restart");
  }

  // Life goes on: every gang whose PodGroup and pods all exist and fit runs to completion.
  std::map<std::string, int> members;
  for (const auto& p : facts.pods)
    if (!p.group_key.empty())
      ++members[p.group_key];
  std::vector<std::string> must_finish;
  for (const auto& g : gangs) {
    auto key = std::string(workload_namespace) + "/" + g.name;
    if (groups.count(key) && members[key] == g.pods && feasible(g, cluster) &&
        nodes.size() == static_cast<std::size_t>(cluster.count))
      must_finish.push_back(key);
  }
  std::vector<std::string> unfinished;
  for (int step = 0; step < 2000; ++step) {
    rt.advance(10ms);
    if (step % 20 != 19)
      continue;
    auto now = rt.facts();
    auto r = actors::check_invariants(now, true);
    for (const auto& v : r.violations)
      problems.push_back("after restart, running on: " + v);
    if (!r.ok())
      break;
    std::map<std::string, bool> done;
    for (const auto& p : now.pods)
      if (!p.group_key.empty()) {
        auto [it, fresh] = done.emplace(p.group_key, true);
        it->second = it->second && p.phase == scheduler::pod_phase::succeeded;
      }
    unfinished.clear();
    for (const auto& key : must_finish)
      if (!done[key])
        unfinished.push_back(key);
    if (unfinished.empty())
      break;
  }
  for (const auto& key : unfinished)
    problems.push_back("gang " + key + " did not run to completion after the restart");
  rt.shutdown();
  if (inside)
    ++t.inside;
  t.acknowledged += static_cast<int>(rec.acknowledged.size());
  t.bindings += static_cast<int>(rec.bound.size());
  t.finished += static_cast<int>(rec.terminal.size());
  t.failed += static_cast<int>(rec.failed);
  if (unfinished.empty())
    t.completed_after += static_cast<int>(must_finish.size());
  if (problems.empty())
    return "";
  return where + join(problems, 10);
}

// File operations of a whole run without a crash (its own seed), to spread crash points over.
uint64_t measure_operations() {
  scratch_dir dir;
  auto sim = storage::power_loss_simulator::create();
  pre_crash_record rec;
  auto gangs = make_gangs(999, workload_gangs, power_loss_cluster(), 100);
  auto before = sim->operations();
  run_workload(999, dir.sub("db"), sim, gangs, rec);
  return sim->operations() - before;
}

void crash_many(uint64_t first_seed, int seeds) {
  uint64_t ops = measure_operations();
  ASSERT_GT(ops, 100u);
  tally t;
  auto errors = run_seeds_on_two_threads(first_seed, seeds, 5,
                                         [&](uint64_t seed) { return crash_once(seed, ops, t); });
  for (const auto& e : errors)
    ADD_FAILURE() << e
                  << "\n  (replay: PHALANX_CRASH_SEED=<seed> crash_tests "
                     "--gtest_filter=PowerLossUnderRuntime.OneSeed)";
  std::printf("  %d crash points over about %llu file operations, %d inside the workload; checked "
              "after the restarts: %d acknowledged creations (%d jobs), %d bindings and %d "
              "finished pods shown before the crash; %d creations refused after the crash; %d "
              "gangs ran to completion after the restart\n",
              seeds, static_cast<unsigned long long>(ops), t.inside.load(), t.acknowledged.load(),
              t.jobs.load(), t.bindings.load(), t.finished.load(), t.failed.load(),
              t.completed_after.load());
  if (errors.empty()) { // After a failure the remaining seeds were skipped.
    EXPECT_GT(t.inside.load(), seeds / 2);
    EXPECT_GT(t.bindings.load(), 0);
    EXPECT_GT(t.jobs.load(), 0);
  }
}

TEST(PowerLossUnderRuntime, TwentySeededCrashPoints) {
  crash_many(1, 20);
}

TEST(PowerLossUnderRuntime, FiveHundredSeededCrashPointsLong) {
  if (!long_tests())
    GTEST_SKIP() << "set PHALANX_LONG_TESTS=1";
  crash_many(1001, 500);
}

// A gang restored with some pods bound and one still pending (an elastic gang: minMember 2 of 3
// pods, room for two) must leave the queue's accounting exact once it has run and finished.
// Found by FiveHundredSeededCrashPointsLong (seeds 1126, 1137, 1140, 1148, 1164): after the
// restart the queue actor counted the restored pods' requests twice on the way out (I4), and the
// drift then kept later gangs from being planned.
TEST(PowerLossUnderRuntime, RestoredGangWithAPendingPodKeepsQueueAccounting) {
  scratch_dir dir;
  auto sim = storage::power_loss_simulator::create();
  std::string error;
  gang_spec g;
  g.name = "elastic";
  g.pods = 3;
  g.min_member = 2;
  g.cpu_milli = 1500;
  g.memory_bytes = int64_t(1) << 30;
  g.duration_ms = 200;
  cluster_shape cluster;
  cluster.count = 1;
  cluster.cpu_milli = 4000; // Two pods fit, the third waits.
  {
    auto store = open_store(dir.sub("db"), sim, error);
    ASSERT_TRUE(store) << error;
    auto rt = actors::runtime::start(deterministic_config(1), store);
    ASSERT_TRUE(rt.ok()) << rt.error().to_string();
    int acked = 0;
    auto create = [&](const std::string& body) {
      (*rt)->service().create(decode_body(body),
                              [&acked](result<api::object> r) { acked += r.ok() ? 1 : 0; });
    };
    create(cluster.node_bodies().front());
    (*rt)->advance(2ms);
    for (int i = 0; i < g.pods; ++i)
      create(g.pod_body(i));
    create(g.podgroup_body());
    for (int i = 0; i < 10; ++i)
      (*rt)->advance(2ms);
    ASSERT_EQ(acked, 5);
    int bound = 0;
    for (const auto& p : (*rt)->facts().pods)
      bound += p.node.empty() ? 0 : 1;
    ASSERT_EQ(bound, 2) << "the scenario needs two pods running and one waiting";
    sim->crash();
    (*rt)->shutdown();
  }
  sim->reset();
  auto store = open_store(dir.sub("db"), sim, error);
  ASSERT_TRUE(store) << error;
  auto rt = actors::runtime::start(deterministic_config(2), store);
  ASSERT_TRUE(rt.ok()) << rt.error().to_string();
  (*rt)->run_until_idle();
  bool all_done = false;
  for (int step = 0; step < 200 && !all_done; ++step) {
    (*rt)->advance(10ms);
    auto facts = (*rt)->facts();
    auto report = actors::check_invariants(facts, true);
    ASSERT_TRUE(report.ok()) << "after " << (step + 1) * 10 << " ms: " << report.to_string();
    all_done = std::all_of(facts.pods.begin(), facts.pods.end(), [](const auto& p) {
      return p.phase == scheduler::pod_phase::succeeded;
    });
  }
  EXPECT_TRUE(all_done) << "the restored gang did not run to completion";
}

// Placeholders across a restart. A Spark-like PodGroup (minMember 3, minResources 3 CPUs) with
// only its driver runs on placeholders: room held for the two executors the driver creates later,
// so that no other gang takes it (the deadlock placeholders exist to prevent). Placeholders are
// holds, never persisted; after a restart the durable state has the driver bound alone. The gang
// must still be all-or-nothing (I3): hold the room again before anything else is placed, so the
// executors created after the restart run even though another gang (created right after the
// restart, wanting every free CPU for an hour) competes for it. Before the restart the same
// sequence works: that half is the control.
struct spark_run {
  bool executors_bound = false;
  int placeholders_before = 0; // Placed for the gang, while the driver runs on them.
  int placeholders_after = 0;  // The same, once the restarted runtime is idle.
  std::string at_restart; // check_invariants (I1-I4, at rest) once the restarted runtime is idle.
  std::string at_end;     // The same at the end. The facts list placed placeholders like pods,
                          // so I3 counts them toward minMember.
};

spark_run placeholders_scenario(bool restart) {
  spark_run out;
  scratch_dir dir;
  auto sim = storage::power_loss_simulator::create();
  std::string error;
  cluster_shape cluster;
  cluster.count = 1;
  cluster.cpu_milli = 4000;
  gang_spec spark;
  spark.name = "spark";
  spark.pods = 3; // The driver, then two executors created later.
  spark.min_member = 3;
  spark.reserve_missing_members = true;
  spark.cpu_milli = 1000;
  spark.memory_bytes = int64_t(1) << 30;
  spark.duration_ms = 60000;
  gang_spec filler; // Wants three CPUs for an hour: all that is free once the driver runs.
  filler.name = "filler";
  filler.pods = 3;
  filler.min_member = 3;
  filler.cpu_milli = 1000;
  filler.memory_bytes = int64_t(1) << 30;
  filler.duration_ms = 3600000;

  auto store = open_store(dir.sub("db"), sim, error);
  if (!store)
    return out;
  auto rt = actors::runtime::start(deterministic_config(5), store);
  if (!rt.ok())
    return out;
  auto create = [&](const std::string& body) {
    (*rt)->service().create(decode_body(body), [](result<api::object>) {});
    (*rt)->advance(2ms);
  };
  // The runtime's facts list placed placeholders like pods, named "<group>-placeholder-<i>".
  auto placeholders = [&] {
    int n = 0;
    for (const auto& p : (*rt)->facts().pods)
      if (p.key.starts_with("crash/spark-placeholder-") && !p.node.empty())
        ++n;
    return n;
  };
  create(cluster.node_bodies().front());
  create(spark.pod_body(0)); // The driver, then its PodGroup: the executors do not exist yet.
  create(spark.podgroup_body());
  for (int i = 0; i < 20; ++i)
    (*rt)->advance(5ms);
  out.placeholders_before = placeholders();
  if (restart) {
    sim->crash();
    (*rt)->shutdown();
    rt = result<std::unique_ptr<actors::runtime>>(status{errc::internal, "restarting"});
    store.reset();
    sim->reset();
    store = open_store(dir.sub("db"), sim, error);
    if (!store)
      return out;
    rt = actors::runtime::start(deterministic_config(6), store);
    if (!rt.ok())
      return out;
    (*rt)->run_until_idle();
    for (int i = 0; i < 20; ++i)
      (*rt)->advance(5ms);
    out.placeholders_after = placeholders();
    auto report = actors::check_invariants((*rt)->facts(), /*at_rest=*/true);
    out.at_restart = report.ok() ? "" : report.to_string();
  }
  for (int i = 0; i < filler.pods; ++i)
    create(filler.pod_body(i));
  create(filler.podgroup_body());
  for (int i = 0; i < 20; ++i)
    (*rt)->advance(5ms);
  for (int i = 1; i < spark.pods; ++i) // The driver creates its executors.
    create(spark.pod_body(i));
  for (int i = 0; i < 200; ++i)
    (*rt)->advance(10ms);
  auto facts = (*rt)->facts();
  int bound = 0;
  for (const auto& p : facts.pods)
    if (p.group_key == "crash/spark" && !p.node.empty() &&
        !p.key.starts_with("crash/spark-placeholder-"))
      ++bound;
  out.executors_bound = bound == 3;
  auto report = actors::check_invariants(facts, /*at_rest=*/true);
  out.at_end = report.ok() ? "" : report.to_string();
  (*rt)->shutdown();
  return out;
}

TEST(PowerLossUnderRuntime, PlaceholdersAcrossRestart) {
  auto control = placeholders_scenario(false);
  ASSERT_EQ(control.placeholders_before, 2)
      << "the scenario needs the driver running with two placeholders";
  ASSERT_TRUE(control.executors_bound) << "without a restart the executors take the placeholders";
  EXPECT_EQ(control.at_end, "");

  auto restarted = placeholders_scenario(true);
  ASSERT_EQ(restarted.placeholders_before, 2);
  EXPECT_EQ(restarted.placeholders_after, 2)
      << "after the restart the gang runs its driver alone and holds no room for its executors: "
         "1 of minMember 3 pods bound (I3), and any other gang may take the room";
  EXPECT_TRUE(restarted.executors_bound)
      << "after the restart another gang took the executors' room: the Spark gang is half bound "
         "for as long as that gang runs (the deadlock placeholders exist to prevent)";
  EXPECT_EQ(restarted.at_restart, "") << "right after the restart, at rest";
  EXPECT_EQ(restarted.at_end, "");
}

// The same seed gives the same run: the same creations acknowledged (with the same uids), the
// same bindings and phases shown, the same state after the restart.
TEST(PowerLossUnderRuntime, ASeedReplaysTheSameRun) {
  auto ops = measure_operations();
  for (uint64_t seed : {3u, 4u, 5u}) {
    tally t;
    std::string first, second;
    EXPECT_EQ(crash_once(seed, ops, t, &first), "");
    EXPECT_EQ(crash_once(seed, ops, t, &second), "");
    EXPECT_FALSE(first.empty());
    EXPECT_TRUE(first == second) << "seed " << seed << " ran differently twice";
  }
}

// Replays one seed, PHALANX_CRASH_SEED=<seed>, to debug a failure the seeded runs reported.
// Without the variable it runs a seed none of the other tests here use.
TEST(PowerLossUnderRuntime, OneSeed) {
  const char* s = std::getenv("PHALANX_CRASH_SEED");
  uint64_t seed = s != nullptr ? std::strtoull(s, nullptr, 10) : 777;
  tally t;
  auto error = crash_once(seed, measure_operations(), t);
  EXPECT_EQ(error, "") << "seed " << seed;
}

} // namespace
} // namespace phalanx::crash_tests
