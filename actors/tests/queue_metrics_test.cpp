// A queue's gauges on the whole runtime (CAF's test coordinator): what it has allocated, per
// resource, follows its gangs up and back down to zero, extended resources (GPUs) included, which
// the allocation stops listing once their amount is zero.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace phalanx::actors::testing {
namespace {

using scheduler::testing::make_node;

// The value of one series in the Prometheus text, or -1 when it is not there.
double series(runtime_harness& h, const std::string& name_and_labels) {
  std::istringstream text(h.svc().metrics_text());
  std::string line;
  while (std::getline(text, line))
    if (line.rfind(name_and_labels + " ", 0) == 0)
      return std::stod(line.substr(name_and_labels.size() + 1));
  return -1;
}

TEST(QueueMetrics, AllocatedGpusGoBackToZeroWhenTheGangCompletes) {
  runtime_harness h{deterministic_config(21),
                    {make_node("gpu-0").cpu("8").memory("16Gi").extended("nvidia.com/gpu", 4)}};
  auto job = one_task_job("train", 2);
  auto& pod = job.job.tasks[0].pod_template;
  pod.requests.set("nvidia.com/gpu", 1);
  pod.meta.annotations.set(std::string(sim_duration_key), "2s");
  runtime_harness::must_ok(h.create(job), "create train");

  const std::string gpus = R"(phalanx_queue_allocated{queue="default",resource="nvidia.com/gpu"})";
  const std::string cpu = R"(phalanx_queue_allocated{queue="default",resource="cpu"})";
  ASSERT_TRUE(h.run_until([&] { return series(h, gpus) == 2; }, std::chrono::milliseconds(1000),
                          std::chrono::milliseconds(10)));
  EXPECT_EQ(series(h, cpu), 2);
  ASSERT_TRUE(h.run_until([&] { return series(h, cpu) == 0; }, std::chrono::milliseconds(5000),
                          std::chrono::milliseconds(10)))
      << "the job's pods ended";
  EXPECT_EQ(series(h, gpus), 0) << "not the last non-zero amount";
}

} // namespace
} // namespace phalanx::actors::testing
