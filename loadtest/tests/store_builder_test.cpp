// The restart store is what the restart target and storage_load_bench measure: its records must
// read back as the daemon reads them, or those figures describe a store no user can have.

#include "loadtest/store_builder.hpp"
#include "loadtest/tests/test_util.hpp"
#include "storage/store.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::loadtest {
namespace {

namespace json = boost::json;

TEST(RestartStore, EveryPodSpecIsValidJsonWhoseContainersAskForThePodsRequests) {
  testing::scratch_dir dir;
  restart_store_spec spec;
  spec.pods = 40;
  spec.groups = 4;
  spec.nodes = 4;
  spec.queues = 1;
  spec.jobs = 1;
  spec.spec_bytes = 600;  // Padded with several variables: a separator between each.
  auto built = build_restart_store(spec, dir.path + "/store");
  ASSERT_TRUE(built.ok()) << built.error().to_string();

  storage::store_options options;
  options.path = dir.path + "/store";
  options.create_if_missing = false;
  auto store = storage::store::open(options);
  ASSERT_TRUE(store.ok()) << store.error().to_string();
  auto loaded = (*store)->load();
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  ASSERT_FALSE(loaded->pods.empty()) << "the PodGroups without a job have pods of their own";
  for (const auto& pod : loaded->pods) {
    json::error_code ec;
    auto parsed = json::parse(pod.spec_json.view(), ec);
    ASSERT_FALSE(ec) << pod.meta.name << ": " << ec.message() << "\n" << pod.spec_json.view();
    const auto& container = parsed.at("containers").at(0);
    EXPECT_GE(container.at("env").as_array().size(), 2u) << pod.meta.name;
    const auto& requests = container.at("resources").at("requests");
    EXPECT_EQ(requests.at("cpu").as_string(), "1") << pod.meta.name;
    EXPECT_EQ(requests.at("memory").as_string(), "2Gi") << pod.meta.name;
    EXPECT_EQ(pod.requests.cpu_milli, 1000) << "the record says the same";
    EXPECT_EQ(pod.requests.memory_bytes, int64_t{2} << 30);
  }
  ASSERT_EQ(loaded->jobs.size(), 1u);
  for (const auto& task : loaded->jobs[0].job.tasks) {
    json::error_code ec;
    json::parse(task.pod_template.spec_json.view(), ec);
    EXPECT_FALSE(ec) << task.name << ": " << ec.message();
  }
}

} // namespace
} // namespace phalanx::loadtest
