// A queue's series on the whole runtime (CAF's test coordinator), as /metrics shows them: what it
// has allocated, per resource in families with units, follows its gangs up and back down to zero
// (extended resources included); its PodGroups not running their minimum count as pending
// whatever they wait for; the names of Volcano and kube-scheduler read the same facts; and a
// deleted queue leaves no series behind.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// The value of one series in the Prometheus text, or -1 when it is not there.
double series(runtime_harness& h, const std::string& name_and_labels) {
  std::istringstream text(h.svc().metrics_text());
  std::string line;
  while (std::getline(text, line))
    if (line.rfind(name_and_labels + " ", 0) == 0)
      return std::stod(line.substr(name_and_labels.size() + 1));
  return -1;
}

// The lines of the Prometheus text that contain `text`.
std::string lines_with(runtime_harness& h, const std::string& text) {
  std::istringstream all(h.svc().metrics_text());
  std::string line, out;
  while (std::getline(all, line))
    if (line.find(text) != std::string::npos)
      out += line + "\n";
  return out;
}

TEST(QueueMetrics, AllocatedGpusGoBackToZeroWhenTheGangCompletes) {
  runtime_harness h{deterministic_config(21),
                    {make_node("gpu-0").cpu("8").memory("16Gi").extended("nvidia.com/gpu", 4)}};
  auto job = one_task_job("train", 2);
  auto& pod = job.job.tasks[0].pod_template;
  pod.requests.set("nvidia.com/gpu", 1);
  pod.meta.annotations.set(std::string(sim_duration_key), "2s");
  runtime_harness::must_ok(h.create(job), "create train");

  const std::string gpus =
      R"(phalanx_queue_allocated_extended_resources{queue="default",resource="nvidia.com/gpu"})";
  const std::string cores = R"(phalanx_queue_allocated_cpu_cores{queue="default"})";
  ASSERT_TRUE(h.run_until([&] { return series(h, gpus) == 2; }, std::chrono::milliseconds(1000),
                          std::chrono::milliseconds(10)));
  EXPECT_EQ(series(h, cores), 2);
  EXPECT_EQ(series(h, R"(phalanx_queue_allocated_pods{queue="default"})"), 2);
  // Volcano's units: millicores, and thousandths of a GPU.
  EXPECT_EQ(series(h, R"(volcano_queue_allocated_milli_cpu{queue_name="default"})"), 2000);
  EXPECT_EQ(series(h, R"(volcano_queue_allocated_scalar_resources{queue_name="default",)"
                      R"(resource="nvidia.com/gpu"})"),
            2000);
  EXPECT_EQ(series(h, R"(volcano_queue_pod_group_running_count{queue_name="default"})"), 1);
  EXPECT_EQ(series(h, R"(phalanx_queue_pending_gangs{queue="default"})"), 0);
  // One attempt, which placed the gang.
  EXPECT_EQ(series(h, R"(scheduler_schedule_attempts_total{result="scheduled",profile="phalanx"})"),
            1);
  EXPECT_EQ(series(h, R"(scheduler_scheduling_attempt_duration_seconds_count{result="scheduled",)"
                      R"(profile="phalanx"})"),
            1);
  EXPECT_EQ(series(h, R"(volcano_schedule_attempts_total{result="scheduled"})"), 1);
  EXPECT_EQ(series(h, "volcano_e2e_scheduling_latency_milliseconds_count"), 1);
  EXPECT_EQ(series(h, "volcano_e2e_job_scheduling_latency_milliseconds_count"), 1);

  ASSERT_TRUE(h.run_until([&] { return series(h, cores) == 0; }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)))
      << "the job's pods ended";
  EXPECT_EQ(series(h, gpus), 0) << "not the last non-zero amount";
  EXPECT_EQ(series(h, R"(volcano_queue_pod_group_completed_count{queue_name="default"})"), 1);
  EXPECT_EQ(series(h, R"(volcano_queue_pod_group_running_count{queue_name="default"})"), 0);
}

// Two gangs that can never be placed here (two 3-cpu pods each, one 4-cpu node) were admitted,
// planned and set aside: no slot is theirs, yet they are pending, and say so everywhere.
TEST(QueueMetrics, UnschedulableGangsArePending) {
  runtime_harness h{deterministic_config(22), {make_node("n-0").cpu("4").memory("8Gi")}};
  for (const char* gang : {"a", "b"}) {
    runtime_harness::must_ok(h.create(group_of(gang, 2)), gang);
    for (int i = 0; i < 2; ++i) {
      const std::string name = std::string(gang) + "-" + std::to_string(i);
      runtime_harness::must_ok(
          h.create(api::pod_object{make_pod(name).cpu("3").group(gang), {}}), name);
    }
  }
  const std::string unschedulable_attempts =
      R"(scheduler_schedule_attempts_total{result="unschedulable",profile="phalanx"})";
  ASSERT_TRUE(h.run_until([&] { return series(h, unschedulable_attempts) >= 2; },
                          std::chrono::milliseconds(2000), std::chrono::milliseconds(10)));
  h.pass(std::chrono::milliseconds(100));
  EXPECT_EQ(series(h, R"(phalanx_queue_pending_gangs{queue="default"})"), 2)
      << lines_with(h, "phalanx_queue_pending_gangs");
  EXPECT_EQ(series(h, R"(volcano_queue_pod_group_inqueue_count{queue_name="default"})"), 2);
  EXPECT_EQ(series(h, R"(volcano_queue_pod_group_pending_count{queue_name="default"})"), 0);
  EXPECT_EQ(series(h, R"(scheduler_pending_pods{queue="unschedulable"})"), 4)
      << lines_with(h, "scheduler_pending_pods");
  EXPECT_EQ(series(h, R"(scheduler_pending_pods{queue="active"})"), 0);
  EXPECT_EQ(series(h, R"(scheduler_schedule_attempts_total{result="scheduled",profile="phalanx"})"),
            0);

  // Gone with their PodGroups and pods.
  for (const char* gang : {"a", "b"}) {
    for (int i = 0; i < 2; ++i)
      runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default",
                                        std::string(gang) + "-" + std::to_string(i)),
                               "delete a pod");
    runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", gang), gang);
  }
  ASSERT_TRUE(h.run_until(
      [&] { return series(h, R"(phalanx_queue_pending_gangs{queue="default"})") == 0; },
      std::chrono::milliseconds(2000), std::chrono::milliseconds(10)));
  EXPECT_EQ(series(h, R"(scheduler_pending_pods{queue="unschedulable"})"), 0);
}

TEST(QueueMetrics, ADeletedQueueLeavesNoSeries) {
  runtime_harness h{deterministic_config(23), {make_node("n-0").cpu("4").memory("8Gi")}};
  scheduler::queue q;
  q.meta.name = "short-lived";
  q.weight = 3;
  runtime_harness::must_ok(h.create(api::queue_object{q, {}}), "create the queue");
  h.pass(std::chrono::milliseconds(50));
  EXPECT_EQ(series(h, R"(phalanx_queue_allocated_cpu_cores{queue="short-lived"})"), 0);
  EXPECT_EQ(series(h, R"(phalanx_queue_pending_gangs{queue="short-lived"})"), 0);
  EXPECT_EQ(series(h, R"(volcano_queue_weight{queue_name="short-lived"})"), 3);
  EXPECT_EQ(series(h, R"(volcano_queue_pod_group_pending_count{queue_name="short-lived"})"), 0);

  runtime_harness::must_ok(h.remove(api::resource_kind::queue, "", "short-lived"),
                           "delete the queue");
  h.pass(std::chrono::milliseconds(50));
  EXPECT_EQ(lines_with(h, R"(queue="short-lived")"), "");
  EXPECT_EQ(lines_with(h, R"(queue_name="short-lived")"), "");
  // The other queues' series stay.
  EXPECT_EQ(series(h, R"(phalanx_queue_allocated_cpu_cores{queue="default"})"), 0);

  // A queue made again under the name has its series again, from zero.
  runtime_harness::must_ok(h.create(api::queue_object{q, {}}), "create the queue again");
  h.pass(std::chrono::milliseconds(50));
  EXPECT_EQ(series(h, R"(volcano_queue_weight{queue_name="short-lived"})"), 3);
  EXPECT_EQ(series(h, R"(phalanx_queue_pending_gangs{queue="short-lived"})"), 0);
}

// A queue that plans nothing has a deserved share too, and shows it: here a parent queue (its
// child takes the work). Its share was published only by a queue that planned, so a parent or
// closed queue read 0 (found by KubeMode.DeservedSharesAreComputedDownTheQueueTree).
TEST(QueueMetrics, AParentQueueShowsItsDeservedShare) {
  runtime_harness h{deterministic_config(3), {make_node("n-0").cpu("16").memory("64Gi")}};
  for (const auto& [name, parent] : {std::pair{"dept", ""}, std::pair{"team", "dept"}}) {
    scheduler::queue q;
    q.meta.name = name;
    q.parent = parent;
    runtime_harness::must_ok(h.create(api::queue_object{q, {}}), name);
  }
  auto g = group_of("g", 1);
  g.group.queue = "team";
  runtime_harness::must_ok(h.create(g), "g");
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("g-0").cpu("20").group("g"), {}}),
                           "g-0");
  const std::string team = R"(volcano_queue_deserved_milli_cpu{queue_name="team"})";
  ASSERT_TRUE(h.run_until([&] { return series(h, team) == 16000; },
                          std::chrono::milliseconds(5000), std::chrono::milliseconds(10)))
      << lines_with(h, "deserved_milli_cpu");
  EXPECT_EQ(series(h, R"(volcano_queue_deserved_milli_cpu{queue_name="dept"})"), 16000);
  EXPECT_EQ(series(h, R"(phalanx_queue_deserved_cpu_cores{queue="dept"})"), 16);
}

TEST(QueueMetrics, EnumsHaveStrings) {
  for (int i = 1; i <= static_cast<int>(kube_pending_queue_last); ++i)
    EXPECT_NE(to_string(static_cast<kube_pending_queue>(i)), "");
  for (int i = 0; i <= static_cast<int>(attempt_result_last); ++i)
    EXPECT_NE(to_string(static_cast<attempt_result>(i)), "");
}

} // namespace
} // namespace phalanx::actors::testing
