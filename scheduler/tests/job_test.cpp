#include "scheduler/job.hpp"

#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>

namespace phalanx::scheduler {
namespace {

using testing::make_pod;
using testing::res;

job_task task(std::string name, int32_t replicas, std::string_view cpu,
              std::optional<int32_t> min = std::nullopt, int32_t priority = 0) {
  job_task t;
  t.name = std::move(name);
  t.replicas = replicas;
  t.min_available = min;
  t.pod_template = make_pod("template").cpu(cpu).priority(priority).obj();
  t.pod_template.meta.name.clear();
  t.pod_template.meta.uid.clear();
  return t;
}

job make_job(std::string name, std::vector<job_task> tasks,
             std::optional<int32_t> min = std::nullopt) {
  job j;
  j.meta.name = std::move(name);
  j.meta.namespace_name = "ml";
  j.meta.uid = "0b5c3a2e-1111-4222-8333-444455556666";
  j.meta.creation_time = timestamp{} + std::chrono::seconds(100);
  j.tasks = std::move(tasks);
  j.min_available = min;
  return j;
}

TEST(Job, Defaults) {
  auto j = make_job("tf", {task("ps", 2, "1"), task("", 4, "1", 3), task("", 1, "1")});
  EXPECT_EQ(task_name(j.tasks[0], 0), "ps");
  EXPECT_EQ(task_name(j.tasks[1], 1), "default1");
  EXPECT_EQ(task_name(j.tasks[2], 2), "default2");
  // A task is found by its name after defaulting.
  EXPECT_EQ(task_named(j, "ps"), &j.tasks[0]);
  EXPECT_EQ(task_named(j, "default2"), &j.tasks[2]);
  EXPECT_EQ(task_named(j, ""), nullptr);
  EXPECT_EQ(task_named(j, "worker"), nullptr);
  EXPECT_EQ(task_min_available(j.tasks[0]), 2);
  EXPECT_EQ(task_min_available(j.tasks[1]), 3);
  // Sum of the tasks' minAvailable: 2 + 3 + 1.
  EXPECT_EQ(job_min_available(j), 6);
  j.min_available = 0;  // Volcano treats 0 as unset.
  EXPECT_EQ(job_min_available(j), 6);
  j.min_available = 4;
  EXPECT_EQ(job_min_available(j), 4);
}

// The table of Volcano's design doc (docs/design/min-avaiable-member-resource.md): master has 2
// replicas of 50m and the higher priority, work has 2 replicas of 100m.
TEST(Job, MinResourcesFollowVolcanosTable) {
  struct row {
    std::optional<int32_t> job_min, master_min, work_min;
    int32_t min_member;
    const char* cpu;
  };
  const row rows[] = {
      {std::nullopt, std::nullopt, 1, 3, "200m"},  // 2 master + 1 work
      {std::nullopt, 1, 1, 2, "150m"},             // master + work
      {3, std::nullopt, 1, 3, "200m"},             // 2 master + 1 work
      {3, 1, std::nullopt, 3, "250m"},             // master + 2 work
      {3, 1, 1, 3, "200m"},                        // master + work, then 1 more master
      {2, 1, 1, 2, "150m"},                        // master + work
      {2, std::nullopt, 1, 2, "100m"},             // 2 master
      {2, 1, std::nullopt, 2, "150m"},             // master + work
  };
  for (const auto& r : rows) {
    auto j = make_job("mr", {task("master", 2, "50m", r.master_min, 100),
                             task("work", 2, "100m", r.work_min, 0)},
                      r.job_min);
    EXPECT_EQ(job_min_available(j), r.min_member);
    auto min = job_min_resources(j);
    EXPECT_EQ(min.cpu_milli, testing::amount("cpu", r.cpu))
        << "job " << r.job_min.value_or(0) << " master " << r.master_min.value_or(-1) << " work "
        << r.work_min.value_or(-1);
    // Every counted pod brings one unit of "pods", as Kubernetes' quota usage does.
    EXPECT_EQ(min.pods, r.min_member);
  }
}

TEST(Job, MinResourcesTakeHigherPriorityTasksFirst) {
  // ps is listed first but worker has the higher priority: the first 2 pods are workers.
  auto j = make_job("tf", {task("ps", 2, "4", 0, 0), task("worker", 4, "1", 0, 10)}, 2);
  EXPECT_EQ(job_min_resources(j), res("cpu", "2", "pods", "2"));
  // Equal priorities keep the job's task order.
  auto k = make_job("tf", {task("ps", 2, "4", 0), task("worker", 4, "1", 0)}, 3);
  EXPECT_EQ(job_min_resources(k), res("cpu", "9", "pods", "3"));
}

TEST(Job, MinResourcesSumExtendedResources) {
  auto t = task("worker", 4, "2", std::nullopt);
  t.pod_template.requests.set("nvidia.com/gpu", 1);
  t.pod_template.requests.memory_bytes = int64_t(8) << 30;
  auto j = make_job("llm", {t});
  EXPECT_EQ(job_min_resources(j),
            res("cpu", "8", "memory", "32Gi", "nvidia.com/gpu", "4", "pods", "4"));
}

// make_job_pods makes the pods at the positions asked for exactly as expand_job makes them
// (names, labels, annotations, uids, requests): what a sync creates again for a job's missing
// pods. Tasks without replicas hold no position; positions must ascend and exist.
TEST(Job, MakeJobPodsMakesThePodsAtTheirPositionsAsTheExpansionDoes) {
  auto j = make_job("my-job", {task("ps", 1, "1"), task("none", 0, "1"), task("worker", 3, "2"),
                               task("", 2, "1")});
  auto expanded = expand_job(j);
  ASSERT_TRUE(expanded.ok()) << expanded.error().to_string();
  ASSERT_EQ(expanded->pods.size(), 6u);
  for (const std::vector<uint32_t>& positions :
       {std::vector<uint32_t>{}, {0}, {2}, {0, 3, 5}, {1, 2, 3}, {4, 5}, {0, 1, 2, 3, 4, 5}}) {
    auto made = make_job_pods(j, positions);
    ASSERT_TRUE(made.ok()) << made.error().to_string();
    ASSERT_EQ(made->size(), positions.size());
    for (std::size_t k = 0; k < positions.size(); ++k) {
      const auto& want = expanded->pods[positions[k]];
      const auto& got = (*made)[k];
      EXPECT_EQ(got.meta.name, want.meta.name);
      EXPECT_EQ(got.meta.uid, want.meta.uid);
      EXPECT_EQ(got.role, want.role);
      EXPECT_EQ(got.group, want.group);
      EXPECT_EQ(got.requests, want.requests);
      EXPECT_EQ(got.meta.labels, want.meta.labels);
      EXPECT_EQ(got.meta.annotations, want.meta.annotations) << got.meta.name;
    }
  }
  EXPECT_EQ(make_job_pods(j, {3, 1}).error().code(), errc::invalid_argument);
  EXPECT_EQ(make_job_pods(j, {1, 1}).error().code(), errc::invalid_argument);
  auto past = make_job_pods(j, {5, 6});
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message().find("past the job's last pod"), std::string::npos);
}

// split_job_pod_name and job_task_ranges invert the expansion's naming: every pod expand_job
// makes is found at its position, and no other name is (an index beyond the replicas, a padded or
// signed index, another task, a prefix of the job). The registry finds a job's pods by name this
// way.
TEST(Job, TaskRangesAndSplitNamesFindExactlyTheExpandedPods) {
  auto j = make_job("my-job", {task("ps", 1, "1"), task("worker-a", 3, "1"), task("none", 0, "1"),
                               task("", 2, "1")});
  auto expanded = expand_job(j);
  ASSERT_TRUE(expanded.ok()) << expanded.error().to_string();
  ASSERT_EQ(expanded->pods.size(), 6u);
  const auto ranges = job_task_ranges(j);
  ASSERT_EQ(ranges.size(), 3u) << "a task without replicas makes no pods";
  auto position_of = [&](std::string_view name) -> std::optional<uint32_t> {
    auto split = split_job_pod_name(name);
    if (!split)
      return std::nullopt;
    for (const auto& r : ranges)
      if (r.prefix == split->first && split->second < r.replicas)
        return r.first + static_cast<uint32_t>(split->second);
    return std::nullopt;
  };
  for (uint32_t k = 0; k < expanded->pods.size(); ++k)
    EXPECT_EQ(position_of(expanded->pods[k].meta.name), k) << expanded->pods[k].meta.name;
  for (std::string_view other : {"my-job-worker-a-3", "my-job-worker-a-01", "my-job-worker-a--1",
                                 "my-job-worker-a-+1", "my-job-worker-0", "my-job-ps",
                                 "my-job-ps-", "my-job-ps-x", "my-job-none-0", "my-jobs-ps-0",
                                 "my-ps-0", "my-job", "other-ps-0", "my-job-ps-99999999999"})
    EXPECT_FALSE(position_of(other)) << other;
  EXPECT_TRUE(pods_are_expansion(j, job_status{}));
  job_status resumed;
  resumed.version = 1;
  EXPECT_FALSE(pods_are_expansion(j, resumed));
  j.suspended = true;
  EXPECT_FALSE(pods_are_expansion(j, job_status{}));
}

TEST(Job, ExpandsIntoPodGroupAndPods) {
  auto ps = task("ps", 1, "2", std::nullopt, 5);
  ps.pod_template.priority_class_name = "high";
  ps.pod_template.constraints = std::make_shared<const placement_constraints>();
  ps.pod_template.spec_json = shared_string("{\"containers\":[]}");
  ps.pod_template.meta.labels.set("app", "tf");
  ps.pod_template.meta.annotations.set("note", "x");
  auto worker = task("worker", 2, "1", 1);
  worker.pod_template.scheduler_name = "custom";
  auto j = make_job("tf", {ps, worker});
  j.queue = "research";
  j.scheduler_name = "phalanx";
  j.priority_class_name = "batch";
  j.priority = 7;
  j.meta.labels.set("team", "ml");
  j.meta.annotations.set("owner", "ana");

  auto expanded = expand_job(j);
  ASSERT_TRUE(expanded.ok()) << expanded.error().to_string();
  const auto& g = expanded->group;
  EXPECT_EQ(g.meta.name, "tf-0b5c3a2e-1111-4222-8333-444455556666");
  EXPECT_EQ(g.meta.namespace_name, "ml");
  EXPECT_EQ(g.meta.uid, derived_uid(j.meta.uid.str(), g.meta.name));
  EXPECT_EQ(g.meta.labels, j.meta.labels);
  EXPECT_EQ(g.meta.annotations, j.meta.annotations);
  EXPECT_EQ(g.meta.creation_time, j.meta.creation_time);
  EXPECT_EQ(g.min_member, 2);  // ps 1 + worker 1.
  EXPECT_EQ(g.min_task_member, (std::vector<role_minimum>{{"ps", 1}, {"worker", 1}}));
  EXPECT_EQ(g.min_resources, res("cpu", "3", "pods", "2"));  // ps (priority 5), then 1 worker.
  EXPECT_EQ(g.queue, "research");
  EXPECT_EQ(g.priority_class_name, "batch");
  EXPECT_EQ(g.priority, 7);

  ASSERT_EQ(expanded->pods.size(), 3u);
  const char* names[] = {"tf-ps-0", "tf-worker-0", "tf-worker-1"};
  const char* roles[] = {"ps", "worker", "worker"};
  const char* index[] = {"0", "0", "1"};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& p = expanded->pods[i];
    EXPECT_EQ(p.meta.name, names[i]);
    EXPECT_EQ(p.meta.namespace_name, "ml");
    EXPECT_EQ(p.meta.uid, derived_uid(j.meta.uid.str(), names[i]));
    EXPECT_EQ(p.meta.creation_time, j.meta.creation_time);
    EXPECT_EQ(p.group, g.meta.name);
    EXPECT_EQ(p.role, roles[i]);
    EXPECT_EQ(p.phase, pod_phase::pending);
    EXPECT_FALSE(p.is_bound());
    const label_set& a = p.meta.annotations;
    const label_set& l = p.meta.labels;
    ASSERT_TRUE(a.find(pod_group_annotation));
    EXPECT_EQ(*a.find(pod_group_annotation), g.meta.name);
    EXPECT_EQ(*a.find(task_spec_key), roles[i]);
    EXPECT_EQ(*a.find(task_index_key), index[i]);
    EXPECT_EQ(*a.find(job_name_key), "tf");
    EXPECT_EQ(*a.find(queue_name_key), "research");
    EXPECT_EQ(*a.find(job_version_key), "0");
    EXPECT_EQ(*a.find(template_uid_key), std::string("tf-") + roles[i]);
    EXPECT_EQ(*a.find(job_retry_count_key), "0");
    EXPECT_EQ(*l.find(job_name_key), "tf");
    EXPECT_EQ(*l.find(job_namespace_key), "ml");
    EXPECT_EQ(*l.find(queue_name_key), "research");
    EXPECT_EQ(*l.find(task_spec_key), roles[i]);
    EXPECT_EQ(*l.find(task_index_key), index[i]);
  }
  const auto& p0 = expanded->pods[0];
  EXPECT_EQ(*p0.meta.labels.find("app"), "tf");
  EXPECT_EQ(*p0.meta.annotations.find("note"), "x");
  EXPECT_EQ(p0.priority, 5);
  EXPECT_EQ(p0.priority_class_name, "high");
  EXPECT_EQ(p0.scheduler_name, "phalanx");  // The job's, as the template names none.
  EXPECT_EQ(expanded->pods[1].scheduler_name, "custom");
  // Shared, not copied: the planner treats pods of one template as one class.
  EXPECT_EQ(p0.constraints.get(), ps.pod_template.constraints.get());
  EXPECT_TRUE(p0.spec_json.shares_with(ps.pod_template.spec_json));
  EXPECT_EQ(expanded->pods[1].constraints, expanded->pods[2].constraints);
  // The names too: one block for the group, one per role and scheduler (shared_string.hpp).
  const auto& w0 = expanded->pods[1];
  const auto& w1 = expanded->pods[2];
  EXPECT_TRUE(p0.group.shares_with(w0.group));
  EXPECT_TRUE(w0.group.shares_with(w1.group));
  EXPECT_TRUE(w0.role.shares_with(w1.role));
  EXPECT_TRUE(w0.scheduler_name.shares_with(w1.scheduler_name));
  // The task's sets carry index 0: the first pod of a task holds them as they are, the others a
  // delta that replaces the index (header, base and the value: 25 bytes, no key of its own).
  EXPECT_FALSE(w0.meta.labels.is_delta());
  EXPECT_FALSE(w0.meta.annotations.is_delta());
  EXPECT_TRUE(w1.meta.labels.is_delta());
  EXPECT_TRUE(w1.meta.annotations.is_delta());
  EXPECT_EQ(w1.meta.labels.block_bytes(), 16u + 8u + 1u);
  EXPECT_EQ(w1.meta.annotations.block_bytes(), 16u + 8u + 1u);
  EXPECT_TRUE(p0.priority_class_name.shares_with(ps.pod_template.priority_class_name));
}

TEST(Job, DefaultQueueAndTaskNames) {
  auto j = make_job("x", {task("", 1, "1")});
  j.queue.clear();
  auto expanded = expand_job(j);
  ASSERT_TRUE(expanded.ok());
  EXPECT_EQ(expanded->group.queue, "default");
  EXPECT_EQ(expanded->pods[0].meta.name, "x-default0-0");
  EXPECT_EQ(expanded->pods[0].role, "default0");
}

TEST(Job, ZeroReplicasMakeNoPods) {
  auto j = make_job("x", {task("a", 0, "1"), task("b", 1, "1")});
  auto expanded = expand_job(j);
  ASSERT_TRUE(expanded.ok());
  ASSERT_EQ(expanded->pods.size(), 1u);
  EXPECT_EQ(expanded->group.min_task_member, (std::vector<role_minimum>{{"a", 0}, {"b", 1}}));
}

TEST(Job, DerivedUidsAreDeterministicDistinctAndWellFormed) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto held = derived_uid("job-uid", "tf-worker-" + std::to_string(i));
    EXPECT_EQ(held, derived_uid("job-uid", "tf-worker-" + std::to_string(i)));
    EXPECT_TRUE(held.is_compact()); // Made as bits; no text is kept.
    const std::string uid = held.str();
    ASSERT_EQ(uid.size(), 36u);
    EXPECT_EQ(uid[8], '-');
    EXPECT_EQ(uid[13], '-');
    EXPECT_EQ(uid[14], '8');  // Version 8.
    EXPECT_EQ(uid[18], '-');
    EXPECT_NE(std::string("89ab").find(uid[19]), std::string::npos);  // RFC 9562 variant.
    EXPECT_EQ(uid[23], '-');
    seen.insert(uid);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_NE(derived_uid("a", "bc"), derived_uid("ab", "c"));
  EXPECT_NE(derived_uid("job-1", "p"), derived_uid("job-2", "p"));
}

// A job's pods are made again from the job at every start (storage/README.md), so a uid derived
// at creation must come out the same from every later build: these values are pinned.
TEST(Job, DerivedUidsDoNotChangeAcrossBuilds) {
  EXPECT_EQ(derived_uid("3f1c2a9e-5b7d-4e21-9c0a-6d8e7f123456", "spark-pi-executor-0"), "2d1923fb-f1cf-8f5e-9a79-3a14cf7396cc");
  EXPECT_EQ(derived_uid("job-uid", "tf-worker-17"), "db2d5ed8-acb5-83aa-9f51-79fccacbcc05");
  EXPECT_EQ(derived_uid("", ""), "4f2db50f-1240-80cd-a576-3d39963d9c07");
  EXPECT_EQ(derived_uid("u", std::string(300, 'n')), "62aefd3a-50bc-8638-93c6-b1087ff01114");
}

TEST(Job, CustomUidGenerator) {
  auto j = make_job("x", {task("a", 2, "1")});
  auto expanded = expand_job(j, [](std::string_view job_uid, std::string_view name) {
    return std::string(job_uid.substr(0, 4)) + "/" + std::string(name);
  });
  ASSERT_TRUE(expanded.ok());
  EXPECT_EQ(expanded->pods[1].meta.uid, "0b5c/x-a-1");
  EXPECT_EQ(expanded->group.meta.uid, "0b5c/x-0b5c3a2e-1111-4222-8333-444455556666");
}

TEST(Job, Errors) {
  struct row {
    const char* what;
    job j;
    const char* message;
  };
  auto no_uid = make_job("x", {task("a", 1, "1")});
  no_uid.meta.uid.clear();
  auto no_name = make_job("", {task("a", 1, "1")});
  auto dup = make_job("x", {task("a", 1, "1"), task("a", 1, "1")});
  auto dup_default = make_job("x", {task("", 1, "1"), task("default0", 1, "1")});
  auto negative = make_job("x", {task("a", -1, "1")});
  auto long_name = make_job(std::string(250, 'j'), {task("a", 1, "1")});
  const row rows[] = {
      {"no uid", no_uid, "metadata.uid: required"},
      {"no name", no_name, "metadata.name: required"},
      {"duplicate task", dup, "spec.tasks: duplicate task name \"a\""},
      {"default name collides", dup_default, "spec.tasks: duplicate task name \"default0\""},
      {"negative replicas", negative, "spec.tasks[0].replicas: must be >= 0"},
      {"too long", long_name, "PodGroup name"},
  };
  for (const auto& r : rows) {
    auto expanded = expand_job(r.j);
    ASSERT_FALSE(expanded.ok()) << r.what;
    EXPECT_EQ(expanded.error().code(), errc::invalid_argument) << r.what;
    EXPECT_NE(expanded.error().message().find(r.message), std::string::npos)
        << r.what << ": " << expanded.error().message();
  }
}

TEST(Job, Names) {
  EXPECT_EQ(job_pod_name("spark", "exec", 12), "spark-exec-12");
  auto j = make_job("pi", {});
  EXPECT_EQ(pod_group_name(j), "pi-0b5c3a2e-1111-4222-8333-444455556666");
}

} // namespace
} // namespace phalanx::scheduler
