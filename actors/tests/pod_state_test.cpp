// A pod's runtime state (phase, node, start and finish times, resource version) on the whole
// runtime under CAF's test coordinator. The registry keeps it beside the pod it created rather
// than in a copy of the pod per change, so these tests check every way the state is read back:
// the API view, the store after a restart, and a node deleted under running pods. A job's pods
// are stored as their job (storage/README.md): the tests below check that restarts give them
// back as they were, that a pod deleted on its own stays deleted, and that a deleted, suspended
// or resumed job leaves nothing behind under its pods' keys.

#include "actors/runtime_probe.hpp"
#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

scheduler::pod get_pod(runtime_harness& h, const std::string& name) { return h.pod(name).pod; }

bool all_running(runtime_harness& h, std::size_t count) {
  auto pods = h.pods();
  if (pods.size() != count)
    return false;
  for (const auto& p : pods)
    if (p.pod.phase != scheduler::pod_phase::running)
      return false;
  return true;
}

TEST(PodState, TheViewAndARestartShowWhatBindingAndStartingWrote) {
  runtime_harness h{deterministic_config(11), {make_node("n-0").cpu("4").memory("8Gi")}};
  auto created = h.create(api::pod_object{make_pod("a").cpu("1"), {}});
  runtime_harness::must_ok(created, "create a");
  auto created_version = std::get<api::pod_object>(*created).pod.meta.resource_version;
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 1); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));

  auto running = get_pod(h, "a");
  EXPECT_EQ(running.node_name, "n-0");
  EXPECT_NE(running.start_time, scheduler::timestamp{});
  EXPECT_EQ(running.finish_time, scheduler::timestamp{});
  EXPECT_GT(running.meta.resource_version, created_version);
  // The spec is the one created.
  EXPECT_EQ(running.requests.cpu_milli, 1000);
  EXPECT_EQ(running.meta.uid, std::get<api::pod_object>(*created).pod.meta.uid);

  h.restart();
  auto restored = get_pod(h, "a");
  EXPECT_EQ(scheduler::runtime_of(restored), scheduler::runtime_of(running));
  EXPECT_EQ(restored.meta.uid, running.meta.uid);
}

// A pod's updates in two registry turns, the second before the first's write is durable (a pod
// that runs for less than a store write takes): the second waits for that write and builds on
// it, so the pod's start time is its Running's, not its end's. The pod is one no node holds, so
// that nothing but these two updates moves it.
TEST(PodState, AnUpdateBuildsOnTheStateStillOnItsWayToTheStore) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("a").cpu("64"), {}}), "create a");
  uint64_t id = 0;
  for (const auto& p : runtime_probe::snapshot(h.rt()).pods)
    if (p.key == "default/a")
      id = p.id;
  ASSERT_NE(id, 0u);
  const auto started = scheduler::timestamp{} + std::chrono::seconds(100);
  const auto ended = scheduler::timestamp{} + std::chrono::seconds(101);
  // Both reach the registry before anything else runs: the first's write is on its way when
  // the second comes.
  const auto registry = runtime_probe::registry(h.rt());
  caf::anon_send(registry, pod_status_atom::value,
                 std::vector<pod_status_update>{{id, scheduler::pod_phase::running, started, ""}});
  caf::anon_send(registry, pod_status_atom::value,
                 std::vector<pod_status_update>{{id, scheduler::pod_phase::succeeded, ended, ""}});
  ASSERT_TRUE(h.run_until(
      [&] { return get_pod(h, "a").phase == scheduler::pod_phase::succeeded; },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  auto done = get_pod(h, "a");
  EXPECT_EQ(done.start_time, started);
  EXPECT_EQ(done.finish_time, ended);
  h.restart();
  EXPECT_EQ(get_pod(h, "a").start_time, started);
}

TEST(PodState, ANodeDeletedUnderRunningPodsFailsThemWhereTheyRan) {
  runtime_harness h{deterministic_config(11), {make_node("n-0").cpu("2").memory("8Gi"),
                                               make_node("n-1").cpu("2").memory("8Gi")}};
  // Two 2-CPU pods: one on each node.
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("a").cpu("2"), {}}), "create a");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("b").cpu("2"), {}}), "create b");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 2); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  const std::string lost = "a";
  const std::string kept = "b";
  auto lost_node = get_pod(h, lost).node_name;
  ASSERT_FALSE(lost_node.empty());
  ASSERT_NE(get_pod(h, kept).node_name, lost_node);

  runtime_harness::must_ok(h.remove(api::resource_kind::node, "", lost_node.str()),
                           "delete the node");
  ASSERT_TRUE(h.run_until(
      [&] { return get_pod(h, lost).phase == scheduler::pod_phase::failed; },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  auto failed = get_pod(h, lost);
  EXPECT_EQ(failed.node_name, lost_node);
  EXPECT_NE(failed.start_time, scheduler::timestamp{});
  EXPECT_NE(failed.finish_time, scheduler::timestamp{});
  EXPECT_EQ(get_pod(h, kept).phase, scheduler::pod_phase::running);

  auto report = h.invariants(true);
  EXPECT_TRUE(report.ok()) << report.to_string();
  h.restart();
  EXPECT_EQ(get_pod(h, lost).phase, scheduler::pod_phase::failed);
  EXPECT_EQ(get_pod(h, lost).node_name, lost_node);
  EXPECT_EQ(get_pod(h, kept).phase, scheduler::pod_phase::running);
}

// Creates one_task_job(name, replicas) and lets it run (the node must hold every pod).
void run_job(runtime_harness& h, const std::string& name, int32_t replicas) {
  runtime_harness::must_ok(h.create(one_task_job(name, replicas)), "create job " + name);
  if (!h.run_until([&] { return all_running(h, static_cast<std::size_t>(replicas)); },
                   std::chrono::milliseconds(5000), std::chrono::milliseconds(10)))
    throw std::runtime_error("job " + name + " did not run");
}

// Every field the API shows of a job's pods, by name.
std::map<std::string, scheduler::pod> job_pods(runtime_harness& h) {
  std::map<std::string, scheduler::pod> out;
  for (auto& p : h.pods())
    out[p.pod.meta.name.str()] = std::move(p.pod);
  return out;
}

void expect_same_pods(const std::map<std::string, scheduler::pod>& a,
                      const std::map<std::string, scheduler::pod>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, p] : a) {
    auto i = b.find(name);
    ASSERT_NE(i, b.end()) << name;
    const auto& q = i->second;
    EXPECT_EQ(p.meta, q.meta) << name;
    EXPECT_EQ(p.group, q.group) << name;
    EXPECT_EQ(p.role, q.role) << name;
    EXPECT_EQ(p.requests, q.requests) << name;
    EXPECT_EQ(p.priority, q.priority) << name;
    EXPECT_EQ(p.scheduler_name, q.scheduler_name) << name;
    EXPECT_EQ(scheduler::runtime_of(p), scheduler::runtime_of(q)) << name;
  }
}

TEST(PodState, AJobsPodsComeBackFromTheJobAfterARestart) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("2").memory("8Gi")}};
  // Three 1-CPU pods on two CPUs, minAvailable 1: two run, one waits.
  auto job = one_task_job("etl", 3);
  job.job.min_available = 1;
  job.job.tasks[0].min_available = 1;
  runtime_harness::must_ok(h.create(job), "create the job");
  ASSERT_TRUE(h.run_until(
      [&] {
        int running = 0;
        for (const auto& [name, p] : job_pods(h))
          running += p.phase == scheduler::pod_phase::running;
        return running == 2;
      },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  auto before = job_pods(h);
  ASSERT_EQ(before.size(), 3u);
  h.restart();
  expect_same_pods(before, job_pods(h));
  auto report = h.invariants(true);
  EXPECT_TRUE(report.ok()) << report.to_string();
}

// A pod of a job that has ended, deleted on its own, has no record to erase: its tombstone keeps
// the job's expansion from bringing it back at the next start (no sync makes a finished job's
// pods again). A running job's deleted pod is made again by its controller: JobController.*.
TEST(PodState, AJobPodDeletedOnItsOwnStaysDeletedAfterARestart) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("4").memory("8Gi")}};
  auto job = one_task_job("etl", 3);
  job.job.tasks[0].pod_template.meta.annotations.set(std::string(sim_duration_key), "1s");
  runtime_harness::must_ok(h.create(job), "create the job");
  ASSERT_TRUE(h.run_until(
      [&] {
        auto pods = job_pods(h);
        return pods.size() == 3 &&
               std::all_of(pods.begin(), pods.end(), [](const auto& p) {
                 return p.second.phase == scheduler::pod_phase::succeeded;
               });
      },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "etl-worker-1"),
                           "delete a pod");
  ASSERT_TRUE(h.run_until([&] { return h.pods().size() == 2; }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  h.pass(std::chrono::milliseconds(500));
  auto before = job_pods(h);
  ASSERT_EQ(before.size(), 2u) << "a finished job's pod is not made again";
  h.restart();
  auto after = job_pods(h);
  EXPECT_EQ(after.count("etl-worker-1"), 0u);
  expect_same_pods(before, after);

  // Its name stays the job's: a pod of another owner there would be lost (or doubled) at the
  // next start, when the job makes its pods again.
  auto taken = h.create(api::pod_object{make_pod("etl-worker-1").cpu("1"), {}});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code(), errc::already_exists);
  EXPECT_NE(taken.error().message().find("job \"etl\""), std::string::npos)
      << taken.error().message();
  // Other names that look like the job's are free: an index beyond its replicas, another task.
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("etl-worker-3").cpu("1"), {}}),
                           "etl-worker-3");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("etl-ps-0").cpu("1"), {}}),
                           "etl-ps-0");
  runtime_harness::must_ok(h.remove(api::resource_kind::job, "default", "etl"), "delete the job");
  ASSERT_TRUE(h.run_until([&] { return h.pods().size() == 2; }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("etl-worker-1").cpu("1"), {}}),
                           "etl-worker-1 once the job is gone");
  h.restart();
  EXPECT_EQ(job_pods(h).size(), 3u);
}

TEST(PodState, ADeletedJobLeavesNothingForTheNextJobOfItsName) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("4").memory("8Gi")}};
  run_job(h, "etl", 2);
  // One pod deleted on its own first: its tombstone must go with the job.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "etl-worker-0"),
                           "delete a pod");
  runtime_harness::must_ok(h.remove(api::resource_kind::job, "default", "etl"), "delete the job");
  ASSERT_TRUE(h.run_until([&] { return h.pods().empty(); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  h.restart();
  EXPECT_TRUE(h.pods().empty());

  // A new job of that name: its pods are pending and then run, whatever the old ones were.
  runtime_harness::must_ok(h.create(one_task_job("etl", 2)), "create the job again");
  h.restart();  // Before they are bound: they come back pending, both of them.
  auto pending = job_pods(h);
  ASSERT_EQ(pending.size(), 2u);
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 2); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  auto running = job_pods(h);
  h.restart();
  expect_same_pods(running, job_pods(h));
}

// A store written before pods were stored as their jobs holds a job's pods as whole records
// (with their state merged in): the records win, and the expansion adds no second copy.
TEST(PodState, JobPodsWithRecordsOfTheirOwnAreNotMadeTwice) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("4").memory("8Gi")}};
  run_job(h, "etl", 2);
  auto before = job_pods(h);
  h.restart_after([&](storage::store& s) {
    // As an older build wrote them: each pod whole, with a label the expansion would not make.
    storage::write_batch b;
    for (auto p : before) {
      p.second.meta.labels.set("written-by", "an-older-build");
      b.put(p.second);
    }
    auto written = s.write(b);
    ASSERT_TRUE(written.ok()) << written.to_string();
  });
  auto after = job_pods(h);
  ASSERT_EQ(after.size(), 2u);
  for (const auto& [name, p] : after) {
    EXPECT_EQ(p.meta.labels.find("written-by").value_or(""), "an-older-build") << name;
    EXPECT_EQ(scheduler::runtime_of(p), scheduler::runtime_of(before.at(name))) << name;
  }
  auto report = h.invariants(true);
  EXPECT_TRUE(report.ok()) << report.to_string();
}

TEST(PodState, ASuspendedThenResumedJobKeepsItsPodsAcrossRestarts) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("4").memory("8Gi")}};
  run_job(h, "etl", 2);
  auto first = job_pods(h);
  runtime_harness::must_ok(
      h.act(api::resource_kind::job, "default", "etl", api::object_action::type::suspend),
      "suspend");
  ASSERT_TRUE(h.run_until([&] { return h.pods().empty(); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  h.restart();
  EXPECT_TRUE(h.pods().empty()) << "a suspended job makes no pods at a start";

  runtime_harness::must_ok(
      h.act(api::resource_kind::job, "default", "etl", api::object_action::type::resume),
      "resume");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 2); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  auto second = job_pods(h);
  for (const auto& [name, p] : second)
    EXPECT_NE(p.meta.uid, first.at(name).meta.uid) << name << ": a new incarnation";
  // The resume gave the gang a new id: its queue finds it under that one.
  auto queue = h.get(api::resource_kind::queue, "", "default");
  ASSERT_TRUE(queue.ok()) << queue.error().to_string();
  EXPECT_EQ(std::get<api::queue_object>(*queue).status.running, 1);
  EXPECT_EQ(std::get<api::queue_object>(*queue).status.allocated.cpu_milli, 2000);
  h.restart();
  expect_same_pods(second, job_pods(h));
}

// A job's pods are not in the registry's name index: a name is resolved through the job's task
// and the pod's position in the job's expansion, which a pod deleted on its own must not shift.
TEST(PodState, AJobsPodsAreFoundByNameThroughTheirJob) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("8").memory("8Gi")}};
  auto job = one_task_job("etl", 3);
  auto ps = job.job.tasks[0];
  ps.name = "ps";
  ps.replicas = 1;
  job.job.tasks.insert(job.job.tasks.begin(), ps);  // Positions: ps-0, worker-0..2.
  runtime_harness::must_ok(h.create(job), "create the job");
  ASSERT_TRUE(h.run_until([&] { return all_running(h, 4); }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));
  auto expect_found = [&](const std::vector<std::string>& present,
                          const std::vector<std::string>& absent, const std::string& when) {
    for (const auto& name : present) {
      auto r = h.get(api::resource_kind::pod, "default", name);
      ASSERT_TRUE(r.ok()) << when << ": " << name << ": " << r.error().to_string();
      EXPECT_EQ(std::get<api::pod_object>(*r).pod.meta.name, name) << when;
    }
    for (const auto& name : absent) {
      auto r = h.get(api::resource_kind::pod, "default", name);
      ASSERT_FALSE(r.ok()) << when << ": " << name;
      EXPECT_EQ(r.error().code(), errc::not_found) << when << ": " << name;
    }
  };
  // Names next to the job's: beyond a task's replicas, a zero-padded index, an unknown task.
  const std::vector<std::string> never = {"etl-worker-3", "etl-worker-01", "etl-ps-1",
                                          "etl-driver-0", "etl-worker-", "etl"};
  expect_found({"etl-ps-0", "etl-worker-0", "etl-worker-1", "etl-worker-2"}, never, "created");

  // A pod deleted while its job runs is made again under its name (a record of its own, found
  // by the name index); the others are still found through the job, at their positions.
  auto uid_of = [&](const std::string& name) {
    auto r = h.get(api::resource_kind::pod, "default", name);
    return r.ok() ? std::get<api::pod_object>(*r).pod.meta.uid.str() : std::string();
  };
  const auto first_uid = uid_of("etl-worker-0");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "etl-worker-0"),
                           "delete worker-0");
  ASSERT_TRUE(h.run_until(
      [&] { return all_running(h, 4) && uid_of("etl-worker-0") != first_uid; },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  const auto made_again = uid_of("etl-worker-0");
  const std::vector<std::string> all = {"etl-ps-0", "etl-worker-0", "etl-worker-1",
                                        "etl-worker-2"};
  expect_found(all, never, "one made again");
  h.restart();
  expect_found(all, never, "after a restart");
  EXPECT_EQ(uid_of("etl-worker-0"), made_again);

  // Deleting by name after the restart reaches the right pod, made again or not.
  const auto second_uid = uid_of("etl-worker-2");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "etl-worker-2"),
                           "delete worker-2");
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "etl-worker-0"),
                           "delete worker-0 again");
  ASSERT_TRUE(h.run_until(
      [&] {
        return all_running(h, 4) && uid_of("etl-worker-2") != second_uid &&
               uid_of("etl-worker-0") != made_again;
      },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  expect_found(all, never, "two more made again");
  auto uids = job_pods(h);
  h.restart();
  expect_found(all, never, "after a second restart");
  for (const auto& [name, p] : job_pods(h))
    EXPECT_EQ(p.meta.uid, uids[name].meta.uid) << name;
  auto report = h.invariants(true);
  EXPECT_TRUE(report.ok()) << report.to_string();
}

// Two jobs make the same pod names exactly when a task of each has the same "<job>-<task>"; a
// pod of its own under a name a job would make keeps the job out too. Each refusal names the
// pod, and leaves nothing taken.
TEST(PodState, AJobWhosePodNamesAreTakenIsRefused) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("8").memory("8Gi")}};
  auto named = [](const std::string& job, const std::string& task, int32_t replicas) {
    auto j = one_task_job(job, replicas);
    j.job.tasks[0].name = task;
    return j;
  };
  auto expect_refused = [&](api::job_object j, const std::string& pod) {
    auto r = h.create(std::move(j));
    ASSERT_FALSE(r.ok()) << pod;
    EXPECT_EQ(r.error().code(), errc::already_exists) << r.error().to_string();
    EXPECT_NE(r.error().message().find("\"" + pod + "\""), std::string::npos)
        << r.error().to_string();
  };
  runtime_harness::must_ok(h.create(named("a", "b-c", 2)), "job a");  // a-b-c-0, a-b-c-1
  expect_refused(named("a-b", "c", 1), "a-b-c-0");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("x-worker-1").cpu("1"), {}}),
                           "a pod of its own");
  expect_refused(one_task_job("x", 2), "x-worker-1");
  // Nothing of the refused jobs stays taken: one replica of x makes only x-worker-0.
  runtime_harness::must_ok(h.create(one_task_job("x", 1)), "job x, one replica");
  h.restart();
  expect_refused(named("a-b", "c", 1), "a-b-c-0");
  auto pod = h.create(api::pod_object{make_pod("x-worker-0").cpu("1"), {}});
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.error().code(), errc::already_exists);
  runtime_harness::must_ok(h.remove(api::resource_kind::job, "default", "a"), "delete job a");
  ASSERT_TRUE(h.run_until(
      [&] { return !h.get(api::resource_kind::job, "default", "a").ok(); },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  runtime_harness::must_ok(h.create(named("a-b", "c", 1)), "job a-b once a is gone");
  EXPECT_EQ(h.pod("a-b-c-0").pod.meta.labels.find(scheduler::job_name_key).value_or(""), "a-b");
}

// A running pod's children (sim.phalanx.io/spawn: "<pod>-exec-<i>") skip a name a job makes: the
// job keeps its pods' names whether or not they exist, and a pod of another owner there would be
// lost or doubled at the next start.
TEST(PodState, ASpawnedPodDoesNotTakeANameAJobMakes) {
  runtime_harness h{deterministic_config(12), {make_node("n-0").cpu("8").memory("16Gi")}};
  auto job = one_task_job("drv", 2);
  job.job.tasks[0].name = "exec";  // Makes drv-exec-0 and drv-exec-1.
  runtime_harness::must_ok(h.create(job), "create the job");
  scheduler::pod driver = make_pod("drv").cpu("1").memory("1Gi");
  driver.meta.annotations.set(std::string(sim_spawn_key), "2");  // drv-exec-1 and drv-exec-2.
  driver.meta.annotations.set(std::string(sim_spawn_cpu_key), "1");
  driver.meta.annotations.set(std::string(sim_spawn_memory_key), "1Gi");
  runtime_harness::must_ok(h.create(api::pod_object{driver, {}}), "create the driver");
  ASSERT_TRUE(h.run_until(
      [&] { return h.get(api::resource_kind::pod, "default", "drv-exec-2").ok(); },
      std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  h.pass(std::chrono::milliseconds(500));
  EXPECT_EQ(h.pods().size(), 4u);  // The job's two, the driver and one child: one drv-exec-1.
  auto pods = job_pods(h);
  ASSERT_EQ(pods.count("drv-exec-1"), 1u);
  EXPECT_EQ(pods.at("drv-exec-1").meta.labels.find(scheduler::job_name_key).value_or(""), "drv")
      << "the job's pod, not a child of the driver";
  EXPECT_FALSE(pods.at("drv-exec-2").meta.labels.contains(scheduler::job_name_key));
  h.restart();
  EXPECT_EQ(h.pods().size(), 4u);
}

// Pods whose schedulerName another scheduler serves are stored and left alone, whether they came
// on their own or from a job, when created, after a restart and when their job is resumed; each
// says why it waits.
TEST(PodState, PodsOfAnotherSchedulerAreStoredAndLeftAlone) {
  runtime_harness h{deterministic_config(13), {make_node("n-0").cpu("8").memory("16Gi")}};
  scheduler::pod plain = make_pod("plain").cpu("1");
  plain.scheduler_name = "default-scheduler";
  runtime_harness::must_ok(h.create(api::pod_object{plain, {}}), "create plain");
  auto theirs = one_task_job("theirs", 2);
  theirs.job.scheduler_name = "default-scheduler";
  runtime_harness::must_ok(h.create(theirs), "create theirs");
  runtime_harness::must_ok(h.create(one_task_job("ours", 2)), "create ours");
  auto ours_running = [&] {
    for (const auto& name : {"ours-worker-0", "ours-worker-1"})
      if (h.pod(name).pod.phase != scheduler::pod_phase::running)
        return false;
    return true;
  };
  // Ours run beside them: the scheduler was not idle, and had the room.
  ASSERT_TRUE(h.run_until(ours_running, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)));

  auto left_alone = [&](const std::string& when) {
    for (const auto& name : {"plain", "theirs-worker-0", "theirs-worker-1"}) {
      auto p = h.pod(name);
      EXPECT_FALSE(p.pod.is_bound()) << name << ", " << when;
      EXPECT_EQ(p.pod.phase, scheduler::pod_phase::pending) << name << ", " << when;
      ASSERT_EQ(p.conditions.size(), 1u) << name << ", " << when;
      EXPECT_EQ(p.conditions[0].message,
                "schedulerName \"default-scheduler\" is not served by this scheduler")
          << name << ", " << when;
    }
  };
  h.pass(std::chrono::milliseconds(500));
  left_alone("after creation");
  h.restart();
  h.pass(std::chrono::milliseconds(500));
  left_alone("after a restart");
  for (auto action : {api::object_action::type::suspend, api::object_action::type::resume})
    runtime_harness::must_ok(h.act(api::resource_kind::job, "default", "theirs", action),
                             "suspend or resume theirs");
  ASSERT_TRUE(h.run_until([&] { return h.get(api::resource_kind::pod, "default",
                                             "theirs-worker-1").ok(); },
                          std::chrono::milliseconds(5000), std::chrono::milliseconds(10)));
  h.pass(std::chrono::milliseconds(500));
  left_alone("after the job was resumed");
  auto report = h.invariants(true);
  EXPECT_TRUE(report.ok()) << report.to_string();
}

} // namespace
} // namespace phalanx::actors::testing
