#include "scheduler/job_sync.hpp"

#include "scheduler/job.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

// A job "tf" of tasks given as "ps:1 worker:2" ("worker:2<ps" waits for ps: dependsOn).
job make_job(std::string_view tasks) {
  job j;
  j.meta.name = "tf";
  j.meta.namespace_name = "default";
  j.meta.uid = "6f0c1a2e-1111-4222-8333-444455556666";
  std::istringstream in{std::string(tasks)};
  std::string word;
  while (in >> word) {
    job_task t;
    auto colon = word.find(':');
    auto wait = word.find('<');
    t.name = word.substr(0, colon);
    t.replicas = std::stoi(word.substr(colon + 1, wait - colon - 1));
    if (wait != std::string::npos)
      t.depends_on.push_back(word.substr(wait + 1));
    j.tasks.push_back(std::move(t));
  }
  return j;
}

// Pods as "tf-ps-0:R tf-worker-1:P~ tf-worker-2:RT": the name, its phase letter (P pending,
// R running, S succeeded, F failed, U unknown), T terminating, ~ marked out of sync. The task is
// the name's middle part.
std::vector<job_pod_view> pods(std::string_view spec) {
  std::vector<job_pod_view> out;
  std::istringstream in{std::string(spec)};
  std::string word;
  while (in >> word) {
    job_pod_view p;
    auto colon = word.find(':');
    p.name = word.substr(0, colon);
    auto first_dash = p.name.find('-');
    auto last_dash = p.name.rfind('-');
    p.task = p.name.substr(first_dash + 1, last_dash - first_dash - 1);
    for (char c : word.substr(colon + 1)) {
      switch (c) {
        case 'P': p.phase = pod_phase::pending; break;
        case 'R': p.phase = pod_phase::running; break;
        case 'S': p.phase = pod_phase::succeeded; break;
        case 'F': p.phase = pod_phase::failed; break;
        case 'U': p.phase = pod_phase::unknown; break;
        case 'T': p.terminating = true; break;
        case '~': p.out_of_sync = true; break;
        default: ADD_FAILURE() << "bad letter " << c;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

// "ps:PR.T worker:S" from the counts: per task its letters, T for terminating.
std::string letters(const job_pods& p) {
  std::string out;
  for (const auto& t : p.tasks) {
    if (!out.empty())
      out += ' ';
    out += t.counts.task + ":";
    out.append(std::size_t(t.counts.pending), 'P');
    out.append(std::size_t(t.counts.running), 'R');
    out.append(std::size_t(t.counts.succeeded), 'S');
    out.append(std::size_t(t.counts.failed), 'F');
    out.append(std::size_t(t.counts.unknown), 'U');
    out.append(std::size_t(t.terminating), 'T');
  }
  return out;
}

TEST(JobSync, CountsPodsByTaskAndPhaseWithTerminatingApart) {
  struct row {
    const char* pods;
    const char* counted;
  };
  const row rows[] = {
      {"", ""},
      {"tf-ps-0:R tf-worker-0:P tf-worker-1:S", "ps:R worker:PS"},
      // A terminating pod counts as terminating whatever its phase.
      {"tf-ps-0:RT tf-worker-0:F tf-worker-1:ST", "ps:T worker:FT"},
      {"tf-worker-0:U tf-ps-0:P~", "ps:P worker:U"},
  };
  for (const auto& r : rows) {
    auto views = pods(r.pods);
    auto counted = count_job_pods(views, true);
    EXPECT_EQ(letters(counted), r.counted) << r.pods;
    EXPECT_TRUE(counted.pod_group_admitted);
  }
  EXPECT_FALSE(count_job_pods({}, false).pod_group_admitted);
}

// What TaskFailed compares with maxRetry: the task's Pending and Running pods' restarts, not
// those of other tasks, finished pods or pods being deleted; the sum saturates.
TEST(JobSync, ATasksRestartsSumItsPendingAndRunningPodsOnly) {
  auto views = pods("tf-worker-0:R tf-worker-1:P tf-worker-2:S tf-worker-3:F tf-worker-4:RT "
                    "tf-ps-0:R");
  const std::vector<int32_t> restarts = {2, 3, 5, 7, 11, 13};
  for (std::size_t i = 0; i < views.size(); ++i)
    views[i].restarts = restarts[i];
  EXPECT_EQ(task_restarts(views, "worker"), 2 + 3);
  EXPECT_EQ(task_restarts(views, "ps"), 13);
  EXPECT_EQ(task_restarts(views, "chief"), 0);
  views[0].restarts = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(task_restarts(views, "worker"), std::numeric_limits<int32_t>::max());
}

TEST(JobSync, AKillTakesThePodsOfItsScope) {
  struct row {
    pod_kill kill;
    const char* pods;
    std::vector<std::string> taken;
  };
  const auto all = "tf-ps-0:R tf-worker-0:S tf-worker-1:F tf-worker-2:P";
  const row rows[] = {
      {{kill_scope::none, {}, {}, false}, all, {}},
      {{kill_scope::job, {}, {}, false}, all,
       {"tf-ps-0", "tf-worker-0", "tf-worker-1", "tf-worker-2"}},
      // The last retry, AbortJob, CompleteJob, TerminateJob: the finished pods stay.
      {{kill_scope::job, {}, {}, true}, all, {"tf-ps-0", "tf-worker-2"}},
      // RestartTask takes every pod of the task, finished or not.
      {{kill_scope::task, "worker", {}, false}, all, {"tf-worker-0", "tf-worker-1", "tf-worker-2"}},
      {{kill_scope::pod, "worker", "tf-worker-1", false}, all, {"tf-worker-1"}},
      {{kill_scope::pod, "worker", "tf-worker-9", false}, all, {}},
  };
  for (const auto& r : rows) {
    std::vector<std::string> taken;
    for (const auto& p : pods(r.pods))
      if (kill_takes(r.kill, p))
        taken.push_back(p.name);
    EXPECT_EQ(taken, r.taken) << to_string(r.kill.scope) << " " << r.kill.task << r.kill.pod;
  }
}

TEST(JobSync, ASyncMakesMissingPodsAndDeletesSurplusAndOutOfSyncOnes) {
  struct row {
    const char* what;
    const char* tasks;
    const char* pods;
    std::vector<uint32_t> create;
    std::vector<std::string> remove;
  };
  const row rows[] = {
      {"a new job: every pod", "ps:1 worker:2", "", {0, 1, 2}, {}},
      {"whole: nothing", "ps:1 worker:2", "tf-ps-0:R tf-worker-0:R tf-worker-1:S", {}, {}},
      {"a pod deleted comes back", "ps:1 worker:2", "tf-ps-0:R tf-worker-1:R", {1}, {}},
      {"a failed pod stays: it is there", "ps:1 worker:2", "tf-ps-0:F tf-worker-0:R tf-worker-1:R",
       {}, {}},
      {"a terminating pod holds its name", "ps:1 worker:2",
       "tf-ps-0:RT tf-worker-0:R tf-worker-1:R", {}, {}},
      {"a pod a kill marked is deleted, and not made while it is there", "ps:1 worker:2",
       "tf-ps-0:R~ tf-worker-0:R tf-worker-1:R", {}, {"tf-ps-0"}},
      {"one marked and terminating is left to go", "ps:1 worker:2",
       "tf-ps-0:RT~ tf-worker-0:R tf-worker-1:R", {}, {}},
      {"scaled down: the pods past the replicas go", "ps:1 worker:1",
       "tf-ps-0:R tf-worker-0:R tf-worker-1:R tf-worker-2:P", {}, {"tf-worker-1", "tf-worker-2"}},
      {"a task the job no longer has", "worker:1", "tf-ps-0:R tf-worker-0:R", {}, {"tf-ps-0"}},
      {"names no task makes", "ps:1", "tf-ps-0:R tf-ps-01:R tf-ps:P", {}, {"tf-ps-01", "tf-ps"}},
      {"a task of no replicas", "ps:0 worker:2", "", {0, 1}, {}},
      {"dependsOn: the workers wait for the ps to run", "ps:1 worker:2<ps", "tf-ps-0:P", {}, {}},
      {"dependsOn: and come once it runs", "ps:1 worker:2<ps", "tf-ps-0:R tf-worker-1:P", {1}, {}},
      {"duplicate names count once", "ps:1", "tf-ps-0:R~ tf-ps-0:R~", {}, {"tf-ps-0"}},
  };
  for (const auto& r : rows) {
    auto plan = plan_job_sync(make_job(r.tasks), pods(r.pods));
    EXPECT_EQ(plan.create, r.create) << r.what;
    EXPECT_EQ(plan.remove, r.remove) << r.what;
  }
}

// The positions a sync makes are those of make_job_pods: the pods come with their names.
TEST(JobSync, ThePositionsToMakeAreTheExpansionsNames) {
  auto j = make_job("ps:1 worker:3");
  auto plan = plan_job_sync(j, pods("tf-worker-0:R tf-worker-2:R"));
  auto made = make_job_pods(j, plan.create);
  ASSERT_TRUE(made.ok()) << made.error().to_string();
  std::vector<std::string> names;
  for (const auto& p : *made)
    names.push_back(p.meta.name.str());
  EXPECT_EQ(names, (std::vector<std::string>{"tf-ps-0", "tf-worker-1"}));
}

} // namespace
} // namespace phalanx::scheduler
