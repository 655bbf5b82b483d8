// The simulated cluster's handling of what a pod declares (or does not) through its
// sim.phalanx.io/ annotations, on the whole runtime under CAF's test coordinator.

#include "actors/sim_cluster.hpp"
#include "actors/tests/runtime_harness.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>

namespace phalanx::actors::testing {
namespace {

using namespace std::chrono_literals;
using scheduler::pod_phase;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// Captures what the default logger writes at warning level and above while it lives.
class captured_warnings {
 public:
  captured_warnings() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    auto logger = std::make_shared<spdlog::logger>("captured", sink);
    logger->set_level(spdlog::level::warn);
    logger->set_pattern("%v");
    spdlog::set_default_logger(logger);
  }
  ~captured_warnings() { spdlog::set_default_logger(previous_); }
  captured_warnings(const captured_warnings&) = delete;
  captured_warnings& operator=(const captured_warnings&) = delete;

  std::string text() {
    spdlog::default_logger()->flush();
    return text_.str();
  }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

runtime_config deterministic_config() {
  runtime_config c;
  c.deterministic = true;
  c.seed = 11;
  c.simulation.pod_start_delay = 1s;
  return c;
}

scheduler::pod_phase phase_of(runtime_harness& h, const std::string& name) {
  for (const auto& p : h.pods())
    if (p.pod.meta.name == name)
      return p.pod.phase;
  throw std::runtime_error("no pod " + name);
}

// A pod without simulation annotations is the common case (every pod a real workload submits):
// it runs and never ends, and that is no reason to warn. One warning per such pod flooded the log
// of every load test with 100,000 lines.
TEST(SimCluster, APodThatDeclaresNothingRunsWithoutAWarning) {
  captured_warnings warnings;
  runtime_harness h{deterministic_config(), {make_node("n-0").cpu("4").memory("8Gi")}};
  runtime_harness::must_ok(h.create(api::pod_object{make_pod("plain").cpu("1"), {}}),
                           "create plain");
  scheduler::pod timed = make_pod("timed").cpu("1");
  timed.meta.annotations.set(std::string(sim_duration_key), "10s");
  runtime_harness::must_ok(h.create(api::pod_object{timed, {}}), "create timed");

  ASSERT_TRUE(h.run_until([&] { return phase_of(h, "timed") == pod_phase::succeeded; }, 1min));
  EXPECT_EQ(phase_of(h, "plain"), pod_phase::running);
  EXPECT_EQ(warnings.text(), "");
}

// At restore a node's running pods reach the simulated cluster in one message, which it groups
// by gang as it goes. Two pods without a group, names of one length, on one node: the second is
// compared with the first's gang key. That comparison once viewed a temporary built from the
// pod's name (`cond ? std::string : shared_string`), so ASan reports a use after free there.
TEST(SimCluster, PodsWithoutAGroupRestoredOnOneNodeAreEachTheirOwnGang) {
  runtime_harness h{deterministic_config(), {make_node("n-0").cpu("4").memory("8Gi")}};
  for (const char* name : {"solo-a", "solo-b"})
    runtime_harness::must_ok(h.create(api::pod_object{make_pod(name).cpu("1"), {}}), name);
  ASSERT_TRUE(h.run_until(
      [&] {
        return phase_of(h, "solo-a") == pod_phase::running &&
               phase_of(h, "solo-b") == pod_phase::running;
      },
      1min));
  h.restart();
  ASSERT_TRUE(h.run_until([&] { return h.pods().size() == 2u; }, 1min));
  // Each is its own gang: deleting one leaves the other running.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "solo-a"), "delete");
  ASSERT_TRUE(h.run_until([&] { return h.pods().size() == 1u; }, 1min));
  EXPECT_EQ(phase_of(h, "solo-b"), pod_phase::running);
}

// A gang's pods are kept in a list where a leaving pod's place is taken by the last one, which
// must learn its new place. Pods a, b, c of one gang start in that order; a leaves (c moves to
// a's place), then c leaves from there. A barrier pod x (2 running pods) then starts its clock
// only if b is still counted: had c's place been stale, its removal would have dropped b
// instead (or written past the list's end, which ASan reports).
TEST(SimCluster, AGangKeepsCountingItsRunningPodsAfterOthersLeaveFromTheMiddle) {
  runtime_harness h{deterministic_config(), {make_node("n-0").cpu("4").memory("8Gi")}};
  scheduler::pod_group group;
  group.meta.name = "g";
  group.meta.namespace_name = "default";
  group.min_member = 1;
  group.queue = "default";
  runtime_harness::must_ok(h.create(api::pod_group_object{group, {}}), "create podgroup");
  auto start = [&](const std::string& name, std::string_view key, const std::string& value) {
    scheduler::pod p = make_pod(name).cpu("1").group("g");
    if (!key.empty())
      p.meta.annotations.set(std::string(key), value);
    runtime_harness::must_ok(h.create(api::pod_object{p, {}}), "create " + name);
    ASSERT_TRUE(h.run_until([&] { return phase_of(h, name) == pod_phase::running; }, 1min)) << name;
  };
  start("a", sim_duration_key, "5s");
  start("b", sim_duration_key, "1h");
  start("c", sim_duration_key, "20s");
  ASSERT_TRUE(h.run_until([&] { return phase_of(h, "a") == pod_phase::succeeded; }, 1min));
  ASSERT_TRUE(h.run_until([&] { return phase_of(h, "c") == pod_phase::succeeded; }, 1min));
  EXPECT_EQ(phase_of(h, "b"), pod_phase::running);

  scheduler::pod x = make_pod("x").cpu("1").group("g");
  x.meta.annotations.set(std::string(sim_barrier_key), "2");
  x.meta.annotations.set(std::string(sim_duration_key), "3s");
  runtime_harness::must_ok(h.create(api::pod_object{x, {}}), "create x");
  EXPECT_TRUE(h.run_until([&] { return phase_of(h, "x") == pod_phase::succeeded; }, 1min))
      << "x " << scheduler::to_string(phase_of(h, "x")) << ", b "
      << scheduler::to_string(phase_of(h, "b"));
}

} // namespace
} // namespace phalanx::actors::testing
