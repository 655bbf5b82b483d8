// Volcano's job controller in Kubernetes mode (`phalanxd --controllers job`, issue 29) on a real
// kube-apiserver and etcd: Jobs get their PodGroup and pods, the scheduler binds them whole, the
// test's kubelet runs them, and the controller writes the job's phases and acts on its pods'
// events through the lifecycle table (scheduler/job_lifecycle.hpp). One control plane per test
// process: ctest runs each case in a process of its own.

#include "tests/k8s/kube_harness.hpp"

#include "api/codec.hpp"
#include "k8s/operations.hpp"
#include "scheduler/sla.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <chrono>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

namespace phalanx::kube_tests {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

const std::vector<std::string> job_controller = {"--controllers", "job"};

// A task of pods asking for 500m cpu each; the template's annotations (sim.phalanx.io/ ones tell
// the test's kubelet what to do).
struct task_spec {
  task_spec(std::string n, int r, std::map<std::string, std::string> a = {}, int m = 0)
      : name(std::move(n)), replicas(r), annotations(std::move(a)), max_retry(m) {}
  std::string name;
  int replicas;
  std::map<std::string, std::string> annotations;
  int max_retry;  // The task's maxRetry; 0 writes none.
};

// A Volcano Job as a user writes it.
json::value vcjob(const std::string& ns, const std::string& name, int min_available,
                  const std::vector<task_spec>& tasks, json::array policies = {},
                  int max_retry = 0) {
  const json::array containers{json::object{
      {"name", "main"},
      {"image", "registry.k8s.io/pause:3.10"},
      {"resources",
       json::object{{"requests", json::object{{"cpu", "500m"}, {"memory", "64Mi"}}}}}}};
  json::array ts;
  for (const auto& t : tasks) {
    json::object annotations;
    for (const auto& [k, v] : t.annotations)
      annotations[k] = v;
    json::object task{
        {"name", t.name},
        {"replicas", t.replicas},
        {"template",
         json::object{
             {"metadata", json::object{{"annotations", annotations},
                                       {"labels", json::object{{"app", name}}}}},
             {"spec", json::object{{"restartPolicy", "Never"}, {"containers", containers}}}}}};
    if (t.max_retry != 0)
      task["maxRetry"] = t.max_retry;
    ts.push_back(std::move(task));
  }
  json::object spec{{"minAvailable", min_available}, {"schedulerName", "volcano"},
                    {"queue", "default"}, {"tasks", std::move(ts)}};
  if (!policies.empty())
    spec["policies"] = std::move(policies);
  if (max_retry != 0)
    spec["maxRetry"] = max_retry;
  return json::object{{"apiVersion", "batch.volcano.sh/v1alpha1"},
                      {"kind", "Job"},
                      {"metadata", json::object{{"name", name}, {"namespace", ns}}},
                      {"spec", std::move(spec)}};
}

std::string jobs_path(kube_harness& h) {
  return "/apis/batch.volcano.sh/v1alpha1/namespaces/" + h.ns() + "/jobs";
}

json::value get_job(kube_harness& h, const std::string& name) {
  auto j = k8s::get_json(h.admin(), jobs_path(h) + "/" + name);
  return j ? *j : json::value{};
}

std::string phase_of(const json::value& job) {
  return k8s::string_at(job, {"status", "state", "phase"});
}

int64_t int_at(const json::value& v, std::initializer_list<const char*> path) {
  const auto* at = k8s::value_at(v, path);
  return at != nullptr && at->is_int64() ? at->as_int64() : 0;
}

// The job's phase history: status.conditions' phases in order, each with a transition time.
std::vector<std::string> history(const json::value& job) {
  std::vector<std::string> out;
  const auto* conditions = k8s::value_at(job, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array())
    return out;
  for (const auto& c : conditions->as_array())
    out.push_back(k8s::string_at(c, {"status"}) +
                  (k8s::string_at(c, {"lastTransitionTime"}).empty() ? "(no time)" : ""));
  return out;
}

// The namespace's pods as the apiserver has them, whole.
std::map<std::string, json::value> raw_pods(kube_harness& h) {
  std::map<std::string, json::value> out;
  auto list = k8s::get_json(h.admin(), "/api/v1/namespaces/" + h.ns() + "/pods");
  if (list)
    for (const auto& item : list->as_object().at("items").as_array())
      out[k8s::string_at(item, {"metadata", "name"})] = item;
  return out;
}

// Pods of job `name` (by the label Volcano's controller sets) that are not terminating, with
// their phases.
std::map<std::string, seen_pod> job_pods(kube_harness& h, const std::string& name) {
  std::map<std::string, seen_pod> out;
  auto seen = h.pods();
  for (const auto& [pod, raw] : raw_pods(h))
    if (k8s::string_at(raw, {"metadata", "labels", "volcano.sh/job-name"}) == name &&
        k8s::string_at(raw, {"metadata", "deletionTimestamp"}).empty() && seen.count(pod))
      out[pod] = seen[pod];
  return out;
}

bool all_in_phase(const std::map<std::string, seen_pod>& pods, std::size_t n,
                  const std::string& phase) {
  if (pods.size() != n)
    return false;
  for (const auto& [name, p] : pods)
    if (p.phase != phase)
      return false;
  return true;
}

std::string read_log(const loadtest::phalanxd_process& d) {
  std::ifstream in(d.log_file());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// The namespace's jobs, PodGroups and pods: for failure messages.
std::string describe(kube_harness& h) {
  std::string out;
  auto jobs = k8s::get_json(h.admin(), jobs_path(h));
  if (jobs)
    for (const auto& j : jobs->as_object().at("items").as_array())
      out += "job " + k8s::string_at(j, {"metadata", "name"}) + ": " +
             json::serialize(j.as_object().contains("status") ? j.at("status") : json::value{}) +
             "\n";
  for (const auto& [name, g] : h.groups())
    out += "podgroup " + name + ": " + g.phase + " \"" + g.message + "\"\n";
  for (const auto& [name, p] : h.pods())
    out += "pod " + name + ": node \"" + p.node + "\" " + p.phase +
           (p.terminating ? " terminating" : "") + " uid " + p.uid + "\n";
  return out;
}

// Changes pod `pod` as `kubectl patch --type=merge` does.
void patch_pod(kube_harness& h, const std::string& pod, const json::object& patch) {
  auto done = k8s::patch_json(h.admin(), "/api/v1/namespaces/" + h.ns() + "/pods/" + pod, patch,
                              k8s::patch_type::merge);
  ASSERT_TRUE(done.ok()) << pod << ": " << done.error().to_string();
}

// Sets annotation `key` of pod `pod`: the test's kubelet reads the sim.phalanx.io/ ones as the
// pod runs.
void annotate_pod(kube_harness& h, const std::string& pod, const std::string& key,
                  const std::string& value) {
  patch_pod(h, pod, json::object{{"metadata", json::object{{"annotations",
                                                            json::object{{key, value}}}}}});
}

// Tells the test's kubelet that the pods of job `name` are done: they succeed now.
void finish_pods(kube_harness& h, const std::string& name) {
  for (const auto& [pod, p] : job_pods(h, name))
    annotate_pod(h, pod, "sim.phalanx.io/duration", "0s");
}

json::value get_group(kube_harness& h, const std::string& name) {
  auto g = k8s::get_json(h.admin(), "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + h.ns() +
                                        "/podgroups/" + name);
  return g ? *g : json::value{};
}

// Changes a Job as `kubectl patch --type=json` does (a task's replicas, minAvailable...).
void patch_job(kube_harness& h, const std::string& name, json::array operations) {
  auto done = k8s::patch_json(h.admin(), jobs_path(h) + "/" + name, operations,
                              k8s::patch_type::json_patch);
  ASSERT_TRUE(done.ok()) << done.error().to_string();
}

// The job's minimum after a scale: spec.minAvailable and task `task`'s replicas and minAvailable.
json::array scale_operations(int min_available, std::size_t task, int replicas,
                             int task_min_available) {
  const auto at = "/spec/tasks/" + std::to_string(task);
  return json::array{
      json::object{{"op", "replace"}, {"path", "/spec/minAvailable"}, {"value", min_available}},
      json::object{{"op", "replace"}, {"path", at + "/replicas"}, {"value", replicas}},
      json::object{{"op", "add"}, {"path", at + "/minAvailable"}, {"value", task_min_available}}};
}

// The PodGroup's minimum as its spec says it: minMember, minTaskMember, minResources.
struct group_minimum {
  int64_t min_member = 0;
  std::map<std::string, int64_t> min_task_member;
  std::string cpu, memory;
  friend bool operator==(const group_minimum&, const group_minimum&) = default;
};

std::ostream& operator<<(std::ostream& out, const group_minimum& m) {
  out << "minMember " << m.min_member << ", minTaskMember {";
  for (const auto& [task, n] : m.min_task_member)
    out << " " << task << ": " << n;
  return out << " }, minResources cpu " << m.cpu << " memory " << m.memory;
}

group_minimum minimum_of(const json::value& group) {
  group_minimum m;
  m.min_member = int_at(group, {"spec", "minMember"});
  if (const auto* roles = k8s::value_at(group, {"spec", "minTaskMember"});
      roles != nullptr && roles->is_object())
    for (const auto& [task, n] : roles->as_object())
      m.min_task_member[task] = n.is_int64() ? n.as_int64() : -1;
  m.cpu = k8s::string_at(group, {"spec", "minResources", "cpu"});
  m.memory = k8s::string_at(group, {"spec", "minResources", "memory"});
  return m;
}

// The lastTransitionTime of the job's condition for `phase` ("" without one).
std::string entered(const json::value& job, const std::string& phase) {
  if (const auto* conditions = k8s::value_at(job, {"status", "conditions"});
      conditions != nullptr && conditions->is_array())
    for (const auto& c : conditions->as_array())
      if (k8s::string_at(c, {"status"}) == phase)
        return k8s::string_at(c, {"lastTransitionTime"});
  return "";
}

// The core/v1 Events about job `name`, as `kubectl get events --field-selector
// involvedObject.name=<name>` reads them.
std::vector<json::value> job_events(kube_harness& h, const std::string& name) {
  std::vector<json::value> out;
  auto list = k8s::get_json(h.admin(), "/api/v1/namespaces/" + h.ns() +
                                           "/events?fieldSelector=involvedObject.name%3D" + name);
  if (list)
    for (const auto& item : list->as_object().at("items").as_array())
      if (k8s::string_at(item, {"involvedObject", "kind"}) == "Job")
        out.push_back(item);
  return out;
}

std::vector<json::value> with_reason(const std::vector<json::value>& events,
                                     const std::string& reason) {
  std::vector<json::value> out;
  for (const auto& e : events)
    if (k8s::string_at(e, {"reason"}) == reason)
      out.push_back(e);
  return out;
}

std::string describe_events(const std::vector<json::value>& events) {
  std::string out;
  for (const auto& e : events)
    out += k8s::string_at(e, {"type"}) + " " + k8s::string_at(e, {"reason"}) + " x" +
           std::to_string(int_at(e, {"count"})) + ": " + k8s::string_at(e, {"message"}) + "\n";
  return out;
}

// A Command as `vcctl job suspend` (AbortJob) and `vcctl job resume` (ResumeJob) write it
// (pkg/cli/util CreateJobCommand): named "<job>-<action, lower case>-" plus a suffix, owned by
// the job, aimed at it by the same controller reference.
void command(kube_harness& h, const std::string& job, const std::string& action) {
  auto j = get_job(h, job);
  const json::object owner{{"apiVersion", "batch.volcano.sh/v1alpha1"},
                           {"kind", "Job"},
                           {"name", job},
                           {"uid", k8s::string_at(j, {"metadata", "uid"})},
                           {"controller", true},
                           {"blockOwnerDeletion", true}};
  std::string lower;
  for (char c : action)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  json::object cmd{{"apiVersion", "bus.volcano.sh/v1alpha1"},
                   {"kind", "Command"},
                   {"metadata", json::object{{"generateName", job + "-" + lower + "-"},
                                             {"namespace", h.ns()},
                                             {"ownerReferences", json::array{owner}}}},
                   {"target", owner},
                   {"action", action}};
  auto made = k8s::post_json(
      h.admin(), "/apis/bus.volcano.sh/v1alpha1/namespaces/" + h.ns() + "/commands", cmd);
  ASSERT_TRUE(made.ok()) << made.error().to_string();
}

std::size_t command_count(kube_harness& h) {
  auto list =
      k8s::get_json(h.admin(), "/apis/bus.volcano.sh/v1alpha1/namespaces/" + h.ns() + "/commands");
  return list ? list->as_object().at("items").as_array().size() : 99;
}

// A job of two tasks (ps 1, worker 2, minAvailable 3): its PodGroup "<job>-<uid>" and three pods
// "<job>-<task>-<index>" with Volcano's labels, annotations and owner, bound whole, Running, then
// Completed as the kubelet finishes them, the phases' history in status.conditions.
TEST(KubeJobController, ATwoTaskJobGetsItsPodGroupAndPodsRunsAndCompletes) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}));
  auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  const auto group = "tf-" + uid;

  ASSERT_TRUE(h.wait_for([&] { return h.groups().count(group) != 0; })) << read_log(*d);
  auto pg = k8s::get_json(h.admin(), "/apis/scheduling.volcano.sh/v1beta1/namespaces/" + h.ns() +
                                         "/podgroups/" + group);
  ASSERT_TRUE(pg.ok());
  EXPECT_EQ(int_at(*pg, {"spec", "minMember"}), 3);
  EXPECT_EQ(int_at(*pg, {"spec", "minTaskMember", "ps"}), 1);
  EXPECT_EQ(int_at(*pg, {"spec", "minTaskMember", "worker"}), 2);
  EXPECT_EQ(k8s::string_at(*pg, {"spec", "queue"}), "default");
  const auto& pg_owner = pg->at("metadata").at("ownerReferences").at(0);
  EXPECT_EQ(pg_owner.at("kind"), "Job");
  EXPECT_EQ(pg_owner.at("uid"), uid.c_str());
  EXPECT_TRUE(pg_owner.at("controller").as_bool());

  ASSERT_TRUE(h.wait_for([&] { return all_in_phase(job_pods(h, "tf"), 3, "Running"); }))
      << describe(h) << read_log(*d);
  auto raw = raw_pods(h);
  for (const auto& [pod, task, index] :
       {std::tuple{"tf-ps-0", "ps", "0"}, {"tf-worker-0", "worker", "0"},
        {"tf-worker-1", "worker", "1"}}) {
    SCOPED_TRACE(pod);
    ASSERT_TRUE(raw.count(pod));
    const auto& p = raw[pod];
    EXPECT_EQ(k8s::string_at(p, {"metadata", "labels", "volcano.sh/job-name"}), "tf");
    EXPECT_EQ(k8s::string_at(p, {"metadata", "labels", "volcano.sh/job-namespace"}), h.ns());
    EXPECT_EQ(k8s::string_at(p, {"metadata", "labels", "volcano.sh/task-spec"}), task);
    EXPECT_EQ(k8s::string_at(p, {"metadata", "labels", "volcano.sh/task-index"}), index);
    EXPECT_EQ(k8s::string_at(p, {"metadata", "labels", "app"}), "tf");  // The template's.
    EXPECT_EQ(k8s::string_at(p, {"metadata", "annotations", "scheduling.k8s.io/group-name"}),
              group);
    EXPECT_EQ(k8s::string_at(p, {"metadata", "annotations", "volcano.sh/task-spec"}), task);
    EXPECT_EQ(k8s::string_at(p, {"metadata", "annotations", "volcano.sh/job-name"}), "tf");
    EXPECT_EQ(k8s::string_at(p, {"metadata", "annotations", "volcano.sh/job-version"}), "0");
    EXPECT_EQ(k8s::string_at(p, {"spec", "schedulerName"}), "volcano");
    const auto& owner = p.at("metadata").at("ownerReferences").at(0);
    EXPECT_EQ(owner.at("apiVersion"), "batch.volcano.sh/v1alpha1");
    EXPECT_EQ(owner.at("kind"), "Job");
    EXPECT_EQ(owner.at("name"), "tf");
    EXPECT_EQ(owner.at("uid"), uid.c_str());
    EXPECT_TRUE(owner.at("controller").as_bool());
  }
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});  // I3: bound whole.
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Running"; }))
      << describe(h);
  auto running = get_job(h, "tf");
  EXPECT_EQ(int_at(running, {"status", "running"}), 3);
  EXPECT_EQ(int_at(running, {"status", "minAvailable"}), 3);
  EXPECT_EQ(int_at(running, {"status", "taskStatusCount", "worker", "phase", "Running"}), 2);

  finish_pods(h, "tf");
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Completed"; }))
      << describe(h) << read_log(*d);
  auto done = get_job(h, "tf");
  EXPECT_EQ(history(done), (std::vector<std::string>{"Pending", "Running", "Completed"}));
  EXPECT_EQ(int_at(done, {"status", "succeeded"}), 3);
  EXPECT_EQ(int_at(done, {"status", "retryCount"}), 0);
  EXPECT_EQ(count_of(read_log(*d), "msg=\"job pod created\""), 3u);
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
  // A clean stop with the controller running: exit code 0.
  auto stopped = d->stop();
  ASSERT_TRUE(stopped.ok()) << stopped.error().to_string();
  EXPECT_EQ(*stopped, 0) << read_log(*d);
}

// The MPI example's policy, `{event: TaskCompleted, action: CompleteJob}`: the master task ends
// (its one pod succeeded) while the workers still run; the job goes Completing, its running
// workers are deleted, and it ends Completed, as Volcano's CompleteJob does.
TEST(KubeJobController, ATaskThatCompletedCompletesTheJobAsItsPolicySays) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "mpi", 3,
                {{"master", 1, {{"sim.phalanx.io/duration", "2s"}}}, {"worker", 2}},
                json::array{json::object{{"event", "TaskCompleted"}, {"action", "CompleteJob"}}}));
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "mpi")) == "Completed"; }, 60s))
      << describe(h) << read_log(*d);
  auto done = get_job(h, "mpi");
  auto phases = history(done);
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Completing"), phases.end())
      << json::serialize(done);
  EXPECT_EQ(phases.back(), "Completed") << json::serialize(done);
  // Nothing of it runs on; the master's pod that succeeded stays.
  ASSERT_TRUE(h.wait_for([&] {
    for (const auto& [name, p] : job_pods(h, "mpi"))
      if (p.phase == "Running" || p.phase == "Pending")
        return false;
    return true;
  })) << describe(h);
  auto pods = job_pods(h, "mpi");
  ASSERT_TRUE(pods.count("mpi-master-0")) << describe(h);
  EXPECT_EQ(pods.at("mpi-master-0").phase, "Succeeded");
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

// spec.minSuccess (Volcano's runningState sync): a job completes once that many of its pods
// succeeded, whatever still runs, and what still runs is killed (its finished pods kept). Here
// two pods of task "fast" succeed after 2 s while "slow" would run for ever.
TEST(KubeJobController, AJobCompletesOnceMinSuccessPodsSucceeded) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  auto job =
      vcjob(h.ns(), "ms", 3, {{"fast", 2, {{"sim.phalanx.io/duration", "2s"}}}, {"slow", 1}});
  job.at("spec").as_object()["minSuccess"] = 2;
  h.apply(job);
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "ms")) == "Completed"; }, 60s))
      << describe(h) << read_log(*d);
  auto done = get_job(h, "ms");
  auto phases = history(done);
  EXPECT_EQ(phases.back(), "Completed") << json::serialize(done);
  EXPECT_EQ(std::find(phases.begin(), phases.end(), "Failed"), phases.end())
      << json::serialize(done);
  ASSERT_TRUE(h.wait_for([&] {
    auto pods = job_pods(h, "ms");
    return pods.size() == 2 && pods.count("ms-fast-0") && pods.count("ms-fast-1");
  })) << describe(h);
  for (const auto& [name, p] : job_pods(h, "ms"))
    EXPECT_EQ(p.phase, "Succeeded") << name;
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

// `{event: PodPending, action: TerminateJob, timeout: 2s}`: a job whose gang cannot be placed
// (five pods of 500m on a node of 2 cpu) is terminated once its pods stayed pending past the
// timeout, not before, and says so when it delays the action (Volcano's delayAction).
TEST(KubeJobController, APodPendingPastItsTimeoutActsAfterIt) {
  kube_harness h;
  h.node("n0", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "waits", 5, {{"main", 5}},
                json::array{json::object{
                    {"event", "PodPending"}, {"action", "TerminateJob"}, {"timeout", "2s"}}}));
  ASSERT_TRUE(h.wait_for([&] { return job_pods(h, "waits").size() == 5; })) << describe(h);
  const auto made = std::chrono::steady_clock::now();
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "waits")) == "Terminated"; }, 30s))
      << describe(h) << read_log(*d);
  EXPECT_GE(std::chrono::steady_clock::now() - made, 1500ms);  // Not at once: after its timeout.
  std::vector<std::string> messages;
  for (const auto& e : job_events(h, "waits"))
    messages.push_back(k8s::string_at(e, {"message"}));
  EXPECT_NE(std::find(messages.begin(), messages.end(), "Execute action TerminateJob after 2s"),
            messages.end())
      << describe_events(job_events(h, "waits"));
  ASSERT_TRUE(h.wait_for([&] { return job_pods(h, "waits").empty(); })) << describe(h);
}

// `policies: [{event: PodEvicted, action: RestartJob}]`, maxRetry 2: a pod deleted restarts the
// job (retryCount 1, every pod made again with the job's new version), and it runs again. Each
// pod name is made twice in all (once per incarnation), never twice in one.
TEST(KubeJobController, AnEvictedPodRestartsTheJobAndNoPodIsMadeTwice) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}},
                json::array{json::object{{"event", "PodEvicted"}, {"action", "RestartJob"}}}, 2));
  ASSERT_TRUE(h.wait_for([&] { return all_in_phase(job_pods(h, "tf"), 3, "Running"); }))
      << describe(h) << read_log(*d);
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Running"; }))
      << describe(h);
  std::set<std::string> first;
  for (const auto& [name, p] : job_pods(h, "tf"))
    first.insert(p.uid);

  h.delete_pod("tf-worker-1");
  ASSERT_TRUE(h.wait_for([&] { return int_at(get_job(h, "tf"), {"status", "retryCount"}) == 1; }))
      << describe(h) << read_log(*d);
  // Never more than the job's three pods alive at once, while it restarts and runs again.
  bool again = h.wait_for(
      [&] {
        auto pods = job_pods(h, "tf");
        EXPECT_LE(pods.size(), 3u) << describe(h);
        bool fresh = pods.size() == 3;
        for (const auto& [name, p] : pods)
          fresh = fresh && !first.count(p.uid) && p.phase == "Running";
        return fresh && phase_of(get_job(h, "tf")) == "Running";
      },
      60s);
  ASSERT_TRUE(again) << describe(h) << read_log(*d);
  auto job = get_job(h, "tf");
  EXPECT_EQ(int_at(job, {"status", "retryCount"}), 1);
  EXPECT_EQ(int_at(job, {"status", "version"}), 1);
  // Each phase once, at its latest entry: Pending, Running, Restarting, Pending, Running.
  EXPECT_EQ(history(job), (std::vector<std::string>{"Restarting", "Pending", "Running"}));
  for (const auto& [name, raw] : raw_pods(h))
    if (!first.count(k8s::string_at(raw, {"metadata", "uid"}))) {
      EXPECT_EQ(k8s::string_at(raw, {"metadata", "annotations", "volcano.sh/job-version"}), "1")
          << name;
      EXPECT_EQ(k8s::string_at(raw, {"metadata", "annotations", "volcano.sh/job-retry-count"}),
                "1")
          << name;
    }
  auto log = read_log(*d);
  EXPECT_EQ(count_of(log, "msg=\"job pod created\""), 6u) << log;
  for (const auto* name : {"tf-ps-0 ", "tf-worker-0 ", "tf-worker-1 "})
    EXPECT_EQ(count_of(log, std::string("msg=\"job pod created\" pod=") + h.ns() + "/" + name),
              2u)
        << name;
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

// `policies: [{exitCode: 137, action: RestartJob}, {event: PodFailed, action: TerminateJob}]`,
// maxRetry 2: the workers fail with exit code 137 (the container's, as the test kubelet writes
// it), which the first policy takes (read without the exit code, the second would terminate the
// job). The job restarts once, they fail again, and the second restart is past maxRetry:
// Failed, retryCount 2, the pods that failed last kept, none left running.
TEST(KubeJobController, PodsFailingPastMaxRetryFailTheJob) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3,
                {{"ps", 1},
                 {"worker", 2,
                  {{"sim.phalanx.io/fail-after", "1s"}, {"sim.phalanx.io/exit-code", "137"}}}},
                json::array{json::object{{"exitCode", 137}, {"action", "RestartJob"}},
                            json::object{{"event", "PodFailed"}, {"action", "TerminateJob"}}},
                2));
  ASSERT_TRUE(
      h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Failed"; }, 90s))
      << describe(h) << read_log(*d);
  auto job = get_job(h, "tf");
  EXPECT_EQ(int_at(job, {"status", "retryCount"}), 2);
  auto phases = history(job);
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases.back(), "Failed");
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Restarting"), phases.end())
      << json::serialize(job);
  EXPECT_EQ(k8s::string_at(job, {"status", "state", "reason"}), "MaxRetryReached");
  // What runs of it goes; the failed pods of the last attempt stay for their logs.
  ASSERT_TRUE(h.wait_for([&] {
    for (const auto& [name, p] : job_pods(h, "tf"))
      if (p.phase == "Running" || p.phase == "Pending")
        return false;
    return true;
  })) << describe(h);
  int failed = 0;
  for (const auto& [name, p] : job_pods(h, "tf"))
    failed += p.phase == "Failed" ? 1 : 0;
  EXPECT_GE(failed, 1) << describe(h) << read_log(*d);
}

// Deleting a Job deletes its pods and its PodGroup (the test control plane runs no garbage
// collector).
TEST(KubeJobController, DeletingTheJobDeletesItsPodsAndPodGroup) {
  kube_harness h;
  h.node("n0", "4");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}));
  auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] { return all_in_phase(job_pods(h, "tf"), 3, "Running"); }))
      << describe(h) << read_log(*d);
  ASSERT_TRUE(h.groups().count("tf-" + uid));

  auto deleted = k8s::delete_object(h.admin(), jobs_path(h) + "/tf");
  ASSERT_TRUE(deleted.ok()) << deleted.to_string();
  ASSERT_TRUE(h.wait_for([&] { return h.pods().empty() && h.groups().empty(); }))
      << describe(h) << read_log(*d);
}

// phalanxd killed mid-job, and a pod of the job deleted while it is down: the restarted process
// lists again, makes only the pod that is missing (the others keep their uids: none is made
// twice), and the job goes on to Completed.
TEST(KubeJobController, ARestartedPhalanxdMakesOnlyWhatIsMissing) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}));
  ASSERT_TRUE(h.wait_for([&] { return all_in_phase(job_pods(h, "tf"), 3, "Running"); }))
      << describe(h) << read_log(*d);
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Running"; }))
      << describe(h);
  std::map<std::string, std::string> uids;
  for (const auto& [name, p] : job_pods(h, "tf"))
    uids[name] = p.uid;

  d->kill();
  h.delete_pod("tf-worker-0");  // Its deletion is not seen by anyone acting on the job.
  auto again = h.start_phalanxd("data-2", job_controller, "", "data");
  // It acts once it holds the Lease the killed process held (up to its 15 s).
  ASSERT_TRUE(h.wait_for([&] {
    auto pods = job_pods(h, "tf");
    return pods.size() == 3 && pods.count("tf-worker-0") &&
           pods["tf-worker-0"].uid != uids["tf-worker-0"] &&
           pods["tf-worker-0"].phase == "Running";
  }, 60s)) << describe(h) << read_log(*again);
  auto pods = job_pods(h, "tf");
  EXPECT_EQ(pods["tf-ps-0"].uid, uids["tf-ps-0"]);
  EXPECT_EQ(pods["tf-worker-1"].uid, uids["tf-worker-1"]);
  EXPECT_EQ(count_of(read_log(*again), "msg=\"job pod created\""), 1u) << read_log(*again);

  finish_pods(h, "tf");
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Completed"; }))
      << describe(h) << read_log(*again);
  EXPECT_EQ(int_at(get_job(h, "tf"), {"status", "retryCount"}), 0);
  EXPECT_EQ(count_of(read_log(*again), "msg=\"job pod created\""), 1u);
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

// Scaling a running job by patching it (minAvailable, a task's replicas and minAvailable), up,
// down and to no pod of a task: its PodGroup's minMember, minTaskMember and minResources follow
// (Volcano's createOrUpdatePodGroup), the new pods are made and run, a scale-down deletes the
// highest indices and keeps the others, and the job stays Running throughout.
TEST(KubeJobController, ScalingAJobUpdatesItsPodGroupAndItsPods) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  auto job = vcjob(h.ns(), "tf", 2, {{"ps", 1}, {"worker", 2}});
  job.at("spec").at("tasks").at(1).as_object()["minAvailable"] = 1;
  h.apply(job);
  const auto group = "tf-" + k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] { return all_in_phase(job_pods(h, "tf"), 3, "Running"); }))
      << describe(h) << read_log(*d);
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Running"; }))
      << describe(h);
  EXPECT_EQ(minimum_of(get_group(h, group)),
            (group_minimum{2, {{"ps", 1}, {"worker", 1}}, "1", "128Mi"}));
  const auto running_since = entered(get_job(h, "tf"), "Running");
  ASSERT_FALSE(running_since.empty());
  std::map<std::string, std::string> uids;
  for (const auto& [name, p] : job_pods(h, "tf"))
    uids[name] = p.uid;

  struct step {
    const char* what;
    int min_available, replicas, task_min_available;
    group_minimum minimum;
    std::vector<std::string> pods;
  };
  const step steps[] = {
      {"up", 3, 4, 2, {3, {{"ps", 1}, {"worker", 2}}, "1500m", "192Mi"},
       {"tf-ps-0", "tf-worker-0", "tf-worker-1", "tf-worker-2", "tf-worker-3"}},
      {"down", 2, 1, 1, {2, {{"ps", 1}, {"worker", 1}}, "1", "128Mi"},
       {"tf-ps-0", "tf-worker-0"}},
      {"to no worker", 1, 0, 0, {1, {{"ps", 1}, {"worker", 0}}, "500m", "64Mi"}, {"tf-ps-0"}},
  };
  for (const auto& s : steps) {
    SCOPED_TRACE(s.what);
    patch_job(h, "tf", scale_operations(s.min_available, 1, s.replicas, s.task_min_available));
    ASSERT_TRUE(h.wait_for([&] { return minimum_of(get_group(h, group)) == s.minimum; }))
        << minimum_of(get_group(h, group)) << "\n"
        << describe(h) << read_log(*d);
    ASSERT_TRUE(h.wait_for([&] {
      auto pods = job_pods(h, "tf");
      std::vector<std::string> names;
      for (const auto& [name, p] : pods)
        names.push_back(name);
      return names == s.pods && all_in_phase(pods, s.pods.size(), "Running") &&
             int_at(get_job(h, "tf"), {"status", "minAvailable"}) == s.min_available;
    })) << describe(h) << read_log(*d);
    // The pods that stay are the ones there were: none made again.
    for (const auto& [name, p] : job_pods(h, "tf"))
      if (uids.count(name))
        EXPECT_EQ(p.uid, uids[name]) << name;
      else
        uids[name] = p.uid;
    auto now = get_job(h, "tf");
    EXPECT_EQ(phase_of(now), "Running");
    EXPECT_EQ(entered(now, "Running"), running_since) << json::serialize(now);
    EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
  }
  EXPECT_EQ(int_at(get_job(h, "tf"), {"status", "retryCount"}), 0);
}

// ttlSecondsAfterFinished 1: the job, once Completed, is deleted (with its pods and PodGroup),
// while a job without one that completed beside it stays.
TEST(KubeJobController, AFinishedJobIsDeletedItsTtlAfterItFinished) {
  kube_harness h;
  h.node("n0", "4");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  auto done_at_once = std::map<std::string, std::string>{{"sim.phalanx.io/duration", "0s"}};
  auto kept = vcjob(h.ns(), "kept", 1, {{"main", 1, done_at_once}});
  h.apply(kept);
  auto expiring = vcjob(h.ns(), "tf", 2, {{"main", 2, done_at_once}});
  expiring.at("spec").as_object()["ttlSecondsAfterFinished"] = 1;
  h.apply(expiring);
  const auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_FALSE(uid.empty());

  ASSERT_TRUE(h.wait_for([&] {
    return !k8s::get_json(h.admin(), jobs_path(h) + "/tf").ok() && job_pods(h, "tf").empty() &&
           !h.groups().count("tf-" + uid);
  })) << describe(h) << read_log(*d);
  auto log = read_log(*d);
  EXPECT_EQ(count_of(log, "msg=\"job deleted: its ttlSecondsAfterFinished passed\" job=" +
                              h.ns() + "/tf phase=Completed"),
            1u)
      << log;
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "kept")) == "Completed"; }))
      << describe(h);
  EXPECT_EQ(count_of(read_log(*d), "job=" + h.ns() + "/kept phase=Completed"), 0u);
}

// The deadline is the job's last transition, as its status says, not when a process first saw
// it: a Completed job with ttlSecondsAfterFinished 3600, whose status says it finished two hours
// ago (written while phalanxd was down), is deleted by the next phalanxd at once.
TEST(KubeJobController, ARestartedPhalanxdDeletesAJobWhoseTtlPassedWhileItWasDown) {
  kube_harness h;
  h.node("n0", "4");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  auto job = vcjob(h.ns(), "tf", 1, {{"main", 1, {{"sim.phalanx.io/duration", "0s"}}}});
  job.at("spec").as_object()["ttlSecondsAfterFinished"] = 3600;
  h.apply(job);
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Completed"; }))
      << describe(h) << read_log(*d);
  d->kill();

  const auto finished = api::format_time(std::chrono::time_point_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now() - std::chrono::hours(2)));
  auto backdated = k8s::patch_json(
      h.admin(), jobs_path(h) + "/tf/status",
      json::array{json::object{{"op", "replace"},
                               {"path", "/status/state/lastTransitionTime"},
                               {"value", finished}}},
      k8s::patch_type::json_patch);
  ASSERT_TRUE(backdated.ok()) << backdated.error().to_string();

  auto again = h.start_phalanxd("data-2", job_controller, "", "data");
  // It acts once it holds the Lease the killed process held (up to its 15 s).
  ASSERT_TRUE(h.wait_for([&] { return !k8s::get_json(h.admin(), jobs_path(h) + "/tf").ok(); },
                         60s))
      << describe(h) << read_log(*again);
  ASSERT_TRUE(h.wait_for([&] { return h.pods().empty() && h.groups().empty(); }))
      << describe(h) << read_log(*again);
}

// `policies: [{event: PodEvicted, action: RestartJob}]`: each pod deleted by a user restarts
// the job, and the job shows it as Volcano's controller writes it, a Normal ExecuteAction
// Event "Start to execute action RestartJob" on the Job (its uid); the second restart counts on
// the same Event (count 2) instead of adding one.
TEST(KubeJobController, AnActionIsAnEventOnTheJobAndItsRepeatIsCounted) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}},
                json::array{json::object{{"event", "PodEvicted"}, {"action", "RestartJob"}}}, 3));
  const auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  for (int restart = 1; restart <= 2; ++restart) {
    SCOPED_TRACE(restart);
    ASSERT_TRUE(h.wait_for([&] {
      return all_in_phase(job_pods(h, "tf"), 3, "Running") &&
             phase_of(get_job(h, "tf")) == "Running";
    }, 60s)) << describe(h) << read_log(*d);
    h.delete_pod("tf-worker-1");
    ASSERT_TRUE(h.wait_for([&] {
      return int_at(get_job(h, "tf"), {"status", "retryCount"}) == restart;
    })) << describe(h) << read_log(*d);
    ASSERT_TRUE(h.wait_for([&] {
      auto actions = with_reason(job_events(h, "tf"), "ExecuteAction");
      return actions.size() == 1 && int_at(actions[0], {"count"}) == restart;
    })) << describe_events(job_events(h, "tf"));
  }
  auto actions = with_reason(job_events(h, "tf"), "ExecuteAction");
  ASSERT_EQ(actions.size(), 1u) << describe_events(job_events(h, "tf"));
  const auto& e = actions[0];
  EXPECT_EQ(k8s::string_at(e, {"type"}), "Normal");
  EXPECT_EQ(k8s::string_at(e, {"message"}), "Start to execute action RestartJob");
  EXPECT_EQ(k8s::string_at(e, {"involvedObject", "apiVersion"}), "batch.volcano.sh/v1alpha1");
  EXPECT_EQ(k8s::string_at(e, {"involvedObject", "uid"}), uid);
  EXPECT_EQ(k8s::string_at(e, {"source", "component"}), "phalanx-job-controller");
  EXPECT_NE(k8s::string_at(e, {"firstTimestamp"}), "");
  EXPECT_NE(k8s::string_at(e, {"lastTimestamp"}), "");
}

// A job whose pods the apiserver refuses (a container without an image): every retry of its
// sync fails again, and the job shows one Warning FailedCreate Event, in Volcano's words, whose
// count grows, not one Event per retry.
TEST(KubeJobController, AStepThatKeepsFailingIsOneWarningEventThatCounts) {
  kube_harness h;
  h.node("n0", "2");
  auto d = h.start_phalanxd("data", job_controller);
  auto job = vcjob(h.ns(), "tf", 1, {{"main", 1}});
  job.at("spec").at("tasks").at(0).at("template").at("spec").at("containers").at(0)
      .as_object().erase("image");
  h.apply(job);
  ASSERT_TRUE(h.wait_for([&] {
    auto failed = with_reason(job_events(h, "tf"), "FailedCreate");
    return !failed.empty() && int_at(failed[0], {"count"}) >= 3;
  })) << describe_events(job_events(h, "tf")) << read_log(*d);
  auto failed = with_reason(job_events(h, "tf"), "FailedCreate");
  ASSERT_EQ(failed.size(), 1u) << describe_events(job_events(h, "tf"));
  EXPECT_EQ(k8s::string_at(failed[0], {"type"}), "Warning");
  const auto message = k8s::string_at(failed[0], {"message"});
  EXPECT_EQ(message.rfind("Error creating pods: [", 0), 0u) << message;
  EXPECT_NE(message.find("image"), std::string::npos) << message;
  EXPECT_TRUE(job_pods(h, "tf").empty());

  // A job Volcano's admission webhook would refuse (two tasks of one name; the apiserver's
  // schema takes it): a Warning on it names the field and the rule, and nothing is made of it.
  h.apply(vcjob(h.ns(), "twice", 1, {{"main", 1}, {"main", 1}}));
  ASSERT_TRUE(h.wait_for(
      [&] { return !with_reason(job_events(h, "twice"), "InvalidSpec").empty(); }))
      << describe_events(job_events(h, "twice")) << read_log(*d);
  auto invalid = with_reason(job_events(h, "twice"), "InvalidSpec")[0];
  EXPECT_EQ(k8s::string_at(invalid, {"type"}), "Warning");
  EXPECT_NE(k8s::string_at(invalid, {"message"}).find("spec.tasks[1].name"), std::string::npos)
      << json::serialize(invalid);
  EXPECT_TRUE(job_pods(h, "twice").empty());
  EXPECT_TRUE(h.groups().empty() || h.groups().count("twice") == 0);
}

// The same job under `--max-requeue-num 2`: after its step failed twice more than the first
// time, the job is terminated, as Volcano's handleJobError does, with its Normal event, and
// no further step is tried (the FailedCreate count stops).
TEST(KubeJobController, AStepThatFailedPastTheRequeueLimitTerminatesTheJob) {
  kube_harness h;
  h.node("n0", "2");
  auto flags = job_controller;
  flags.insert(flags.end(), {"--max-requeue-num", "2"});
  auto d = h.start_phalanxd("data", flags);
  auto job = vcjob(h.ns(), "tf", 1, {{"main", 1}});
  job.at("spec").at("tasks").at(0).at("template").at("spec").at("containers").at(0)
      .as_object().erase("image");
  h.apply(job);
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Terminated"; }))
      << describe_events(job_events(h, "tf")) << read_log(*d);
  auto limit = with_reason(job_events(h, "tf"), "ExecuteAction");
  ASSERT_EQ(limit.size(), 1u) << describe_events(job_events(h, "tf"));
  EXPECT_EQ(k8s::string_at(limit[0], {"type"}), "Normal");
  EXPECT_EQ(k8s::string_at(limit[0], {"message"}),
            "Job failed on action SyncJob for retry limit reached");
  auto failed = with_reason(job_events(h, "tf"), "FailedCreate");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(int_at(failed[0], {"count"}), 3) << "the first try and two more";
  std::this_thread::sleep_for(3s);  // One retry period and more: nothing is tried again.
  EXPECT_EQ(int_at(with_reason(job_events(h, "tf"), "FailedCreate")[0], {"count"}), 3);
}

// vcctl's suspend and resume: a Command AbortJob on a running job deletes its pods and the job
// ends Aborted; a Command ResumeJob makes its pods again (a restart: retryCount 1) and it runs.
// Each Command is deleted once taken, and the job shows a CommandIssued Event for each.
TEST(KubeJobController, CommandsSuspendAndResumeAJob) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}));
  ASSERT_TRUE(h.wait_for([&] {
    return all_in_phase(job_pods(h, "tf"), 3, "Running") &&
           phase_of(get_job(h, "tf")) == "Running";
  })) << describe(h) << read_log(*d);
  std::set<std::string> first;
  for (const auto& [name, p] : job_pods(h, "tf"))
    first.insert(p.uid);

  command(h, "tf", "AbortJob");
  ASSERT_TRUE(h.wait_for([&] {
    return phase_of(get_job(h, "tf")) == "Aborted" && h.pods().empty() && command_count(h) == 0;
  })) << describe(h) << read_log(*d);
  EXPECT_EQ(history(get_job(h, "tf")),
            (std::vector<std::string>{"Pending", "Running", "Aborting", "Aborted"}));

  command(h, "tf", "ResumeJob");
  ASSERT_TRUE(h.wait_for([&] {
    auto pods = job_pods(h, "tf");
    bool fresh = pods.size() == 3;
    for (const auto& [name, p] : pods)
      fresh = fresh && !first.count(p.uid) && p.phase == "Running";
    return fresh && phase_of(get_job(h, "tf")) == "Running" && command_count(h) == 0;
  }, 60s)) << describe(h) << read_log(*d);
  EXPECT_EQ(int_at(get_job(h, "tf"), {"status", "retryCount"}), 1);
  auto issued = with_reason(job_events(h, "tf"), "CommandIssued");
  std::set<std::string> messages;
  for (const auto& e : issued)
    messages.insert(k8s::string_at(e, {"message"}));
  EXPECT_EQ(messages, (std::set<std::string>{
                          "Start to execute command AbortJob, and clean it up to make sure "
                          "executed not more than once.",
                          "Start to execute command ResumeJob, and clean it up to make sure "
                          "executed not more than once."}))
      << describe_events(job_events(h, "tf"));
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

// `policies: [{event: TaskFailed, action: TerminateJob}]`: a task whose Running and Pending pods
// restarted their containers its maxRetry (2) times in all fails, and its job is terminated, its
// pods deleted. A job whose worker stops restarting at 1 (below maxRetry) with the same policy
// runs on; its restart is in the pod watch before the other job's pods exist, so the controller
// has handled it by the time the first job ends.
TEST(KubeJobController, ATaskWhosePodsRestartedMaxRetryTimesTerminatesItsJob) {
  kube_harness h;
  h.node("n0", "4");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  const json::array on_task_failed{
      json::object{{"event", "TaskFailed"}, {"action", "TerminateJob"}}};
  auto restarts_of = [&](const std::string& pod) {
    auto pods = raw_pods(h);
    auto p = pods.find(pod);
    if (p == pods.end())
      return int64_t{-1};
    const auto* statuses = k8s::value_at(p->second, {"status", "containerStatuses"});
    return statuses != nullptr && statuses->is_array() && !statuses->as_array().empty()
               ? int_at(statuses->as_array()[0], {"restartCount"})
               : int64_t{0};
  };
  h.apply(vcjob(h.ns(), "capped", 2,
                {{"ps", 1},
                 {"worker", 1,
                  {{"sim.phalanx.io/restart-every", "300ms"}, {"sim.phalanx.io/restarts", "1"}},
                  2}},
                on_task_failed));
  ASSERT_TRUE(h.wait_for([&] {
    return all_in_phase(job_pods(h, "capped"), 2, "Running") &&
           restarts_of("capped-worker-0") == 1;
  }, 60s)) << describe(h) << read_log(*d);

  h.apply(vcjob(h.ns(), "tf", 2,
                {{"ps", 1}, {"worker", 1, {{"sim.phalanx.io/restart-every", "300ms"}}, 2}},
                on_task_failed));
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Terminated"; }, 60s))
      << describe(h) << read_log(*d);
  auto phases = history(get_job(h, "tf"));
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Running"), phases.end());
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Terminating"), phases.end());
  auto actions = with_reason(job_events(h, "tf"), "ExecuteAction");
  ASSERT_EQ(actions.size(), 1u) << describe_events(job_events(h, "tf"));
  EXPECT_EQ(k8s::string_at(actions[0], {"message"}), "Start to execute action TerminateJob");
  // Its pods, the ps that never restarted too, are deleted.
  ASSERT_TRUE(h.wait_for([&] { return job_pods(h, "tf").empty(); })) << describe(h);

  // One restart of maxRetry 2: the other job goes on with its pods.
  EXPECT_EQ(phase_of(get_job(h, "capped")), "Running");
  EXPECT_TRUE(all_in_phase(job_pods(h, "capped"), 2, "Running")) << describe(h);
  EXPECT_TRUE(with_reason(job_events(h, "capped"), "ExecuteAction").empty())
      << describe_events(job_events(h, "capped"));
}

// -- what a policy's action takes (Volcano's killTarget) and which policy acts

// The uids of the pods of job `name` that are not terminating, by pod name.
std::map<std::string, std::string> uids_of(kube_harness& h, const std::string& name) {
  std::map<std::string, std::string> out;
  for (const auto& [pod, p] : job_pods(h, name))
    out[pod] = p.uid;
  return out;
}

// Job `name` is Running with its `n` pods Running.
bool runs(kube_harness& h, const std::string& name, std::size_t n) {
  return all_in_phase(job_pods(h, name), n, "Running") && phase_of(get_job(h, name)) == "Running";
}

// Job `name` runs (runs()) with retryCount `retries`, after its pods named in `made_again`
// were made again: each of its pods has another uid than in `before` if it is named there, the
// same otherwise.
bool runs_again(kube_harness& h, const std::string& name, int64_t retries,
                const std::map<std::string, std::string>& before,
                const std::set<std::string>& made_again) {
  if (!runs(h, name, before.size()) ||
      int_at(get_job(h, name), {"status", "retryCount"}) != retries)
    return false;
  for (const auto& [pod, uid] : uids_of(h, name)) {
    auto was = before.find(pod);
    if (was == before.end() || (was->second != uid) != (made_again.count(pod) != 0))
      return false;
  }
  return true;
}

// Pod `pod` fails now, with exit code 1 (its first container's, as the test's kubelet writes
// it).
void fail_pod(kube_harness& h, const std::string& pod) {
  annotate_pod(h, pod, "sim.phalanx.io/fail-after", "0s");
}

// The messages of the job's ExecuteAction Events.
std::set<std::string> actions_on(kube_harness& h, const std::string& name) {
  std::set<std::string> out;
  for (const auto& e : with_reason(job_events(h, name), "ExecuteAction"))
    out.insert(k8s::string_at(e, {"message"}));
  return out;
}

// The job "tf" (ps 1, worker 2, minAvailable 3) whose worker task has the policy
// `{event: PodFailed, action: <worker_action>}`, and the job `job_policies`.
json::value tf_with_worker_policy(kube_harness& h, const std::string& worker_action,
                                  json::array job_policies = {}) {
  auto job = vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}, std::move(job_policies));
  job.at("spec").at("tasks").at(1).as_object()["policies"] =
      json::array{json::object{{"event", "PodFailed"}, {"action", worker_action}}};
  return job;
}

// The job of tf_with_worker_policy(worker_action) runs; tf-worker-0 fails. Its policy's action
// kills the pods named in `made_again` (Volcano's killTarget) and they are made again (new
// uids) while the others run on (the same uids): the job goes Restarting, Pending and Running
// again with retryCount 1, and keeps its version and its PodGroup (a targeted kill does not
// raise the version, which would outdate the events of the pods left, nor delete the PodGroup
// of the pods left running). The new pods carry the same version and the retry count.
void a_failed_worker_makes_again(const std::string& worker_action,
                                 const std::set<std::string>& made_again) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(tf_with_worker_policy(h, worker_action));
  const auto group = "tf-" + k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] { return runs(h, "tf", 3); })) << describe(h) << read_log(*d);
  const auto before = uids_of(h, "tf");
  const auto group_uid = k8s::string_at(get_group(h, group), {"metadata", "uid"});
  ASSERT_FALSE(group_uid.empty()) << describe(h);

  fail_pod(h, "tf-worker-0");
  ASSERT_TRUE(h.wait_for([&] { return runs_again(h, "tf", 1, before, made_again); }))
      << describe(h) << read_log(*d);
  auto job = get_job(h, "tf");
  EXPECT_EQ(int_at(job, {"status", "version"}), 0);
  EXPECT_EQ(history(job), (std::vector<std::string>{"Restarting", "Pending", "Running"}));
  EXPECT_EQ(k8s::string_at(get_group(h, group), {"metadata", "uid"}), group_uid);
  EXPECT_EQ(actions_on(h, "tf"),
            (std::set<std::string>{"Start to execute action " + worker_action}))
      << describe_events(job_events(h, "tf"));
  for (const auto& [name, raw] : raw_pods(h)) {
    SCOPED_TRACE(name);
    const bool again = made_again.count(name) != 0;
    EXPECT_EQ(k8s::string_at(raw, {"metadata", "annotations", "volcano.sh/job-version"}), "0");
    EXPECT_EQ(k8s::string_at(raw, {"metadata", "annotations", "volcano.sh/job-retry-count"}),
              again ? "1" : "0");
  }
  EXPECT_EQ(count_of(read_log(*d), "msg=\"job pod created\""), 3 + made_again.size());
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

// `{event: PodFailed, action: RestartTask}` on the worker task: a failed worker has both
// workers made again, and the ps runs on.
TEST(KubeJobController, RestartTaskMakesTheFailedPodsTaskAgainAndLeavesTheOtherTask) {
  a_failed_worker_makes_again("RestartTask", {"tf-worker-0", "tf-worker-1"});
}

// `{event: PodFailed, action: RestartPod}` on the worker task: only the failed worker is made
// again; the other worker and the ps run on.
TEST(KubeJobController, RestartPodMakesOnlyTheFailedPodAgain) {
  a_failed_worker_makes_again("RestartPod", {"tf-worker-0"});
}

// A task's policy comes before the job's for the same event (Volcano's applyPolicies): the job
// says `{event: PodFailed, action: AbortJob}` and its worker task `{event: PodFailed, action:
// RestartTask}`. A failed worker restarts the worker task, and the job runs on without
// aborting; then a failed ps, whose task names no policy, aborts the job as the job's policy
// says (its running workers deleted, the failed ps kept).
TEST(KubeJobController, ATasksPolicyComesBeforeTheJobsForTheSameEvent) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(tf_with_worker_policy(
      h, "RestartTask", json::array{json::object{{"event", "PodFailed"}, {"action", "AbortJob"}}}));
  ASSERT_TRUE(h.wait_for([&] { return runs(h, "tf", 3); })) << describe(h) << read_log(*d);
  const auto before = uids_of(h, "tf");

  fail_pod(h, "tf-worker-0");
  ASSERT_TRUE(h.wait_for([&] {
    return runs_again(h, "tf", 1, before, {"tf-worker-0", "tf-worker-1"});
  })) << describe(h) << read_log(*d);
  EXPECT_EQ(history(get_job(h, "tf")),
            (std::vector<std::string>{"Restarting", "Pending", "Running"}));
  EXPECT_EQ(actions_on(h, "tf"), (std::set<std::string>{"Start to execute action RestartTask"}))
      << describe_events(job_events(h, "tf"));

  fail_pod(h, "tf-ps-0");
  ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, "tf")) == "Aborted"; }))
      << describe(h) << read_log(*d);
  auto job = get_job(h, "tf");
  EXPECT_EQ(history(job), (std::vector<std::string>{"Restarting", "Pending", "Running",
                                                    "Aborting", "Aborted"}));
  EXPECT_EQ(int_at(job, {"status", "retryCount"}), 1);
  EXPECT_EQ(actions_on(h, "tf"), (std::set<std::string>{"Start to execute action RestartTask",
                                                        "Start to execute action AbortJob"}))
      << describe_events(job_events(h, "tf"));
  ASSERT_TRUE(h.wait_for([&] {
    auto pods = job_pods(h, "tf");
    return pods.size() == 1 && pods.count("tf-ps-0") && pods["tf-ps-0"].phase == "Failed";
  })) << describe(h);
}

// `{event: "*", action: TerminateJob}` (Volcano's AnyEvent) acts on any event a policy may
// name: a pod that failed terminates one job, a pod deleted by a user (PodEvicted) another.
// Each ends Terminated with no pod left running, the failed pod kept. The pods' creation
// (PodPending, which a policy takes only with a timeout) and start (PodRunning, internal) are
// no such event: both jobs run first.
TEST(KubeJobController, AnAnyEventPolicyActsOnAFailedPodAndOnADeletedOne) {
  kube_harness h;
  h.node("n0", "4");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  const json::array on_any{json::object{{"event", "*"}, {"action", "TerminateJob"}}};
  for (const auto* name : {"fails", "evicted"})
    h.apply(vcjob(h.ns(), name, 2, {{"main", 2}}, on_any));
  ASSERT_TRUE(h.wait_for([&] { return runs(h, "fails", 2) && runs(h, "evicted", 2); }))
      << describe(h) << read_log(*d);

  fail_pod(h, "fails-main-0");
  h.delete_pod("evicted-main-0");
  for (const std::string name : {"fails", "evicted"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(h.wait_for([&] { return phase_of(get_job(h, name)) == "Terminated"; }))
        << describe(h) << read_log(*d);
    auto job = get_job(h, name);
    EXPECT_EQ(history(job),
              (std::vector<std::string>{"Pending", "Running", "Terminating", "Terminated"}));
    // Volcano's killJob writes runningDuration: the last transition less the creation, from
    // the transition's time in memory, which the apiserver shows cut to the second.
    auto created = api::parse_time(k8s::string_at(job, {"metadata", "creationTimestamp"}));
    auto ended = api::parse_time(k8s::string_at(job, {"status", "state", "lastTransitionTime"}));
    ASSERT_TRUE(created && ended) << json::serialize(job);
    auto duration =
        scheduler::parse_go_duration(k8s::string_at(job, {"status", "runningDuration"}));
    ASSERT_TRUE(duration.ok()) << json::serialize(job);
    EXPECT_GE(*duration, *ended - *created) << json::serialize(job);
    EXPECT_LT(*duration, *ended - *created + 1s) << json::serialize(job);
    EXPECT_EQ(actions_on(h, name), (std::set<std::string>{"Start to execute action TerminateJob"}))
        << describe_events(job_events(h, name));
  }
  ASSERT_TRUE(h.wait_for([&] {
    auto failed = job_pods(h, "fails");
    return job_pods(h, "evicted").empty() && failed.size() == 1 &&
           failed.count("fails-main-0") && failed["fails-main-0"].phase == "Failed";
  })) << describe(h);
}

// What makes a PodGroup Unknown here: its gang ran and now has fewer than minMember pods bound
// or succeeded, pods of it still running (a worker failed, and with no policy for it nothing
// makes it again). Job "kept" has no policy: its PodGroup goes Unknown and stays so, and the job
// runs on. Job "tf" says `{event: Unknown, action: RestartJob}`: the same failure raises its
// job-level Unknown event (Volcano's updatePodGroup), and the job restarts, every pod made again
// with the new version, and runs.
TEST(KubeJobController, AGangLeftBelowItsMinimumIsUnknownAndRestartsAJobWhosePolicySaysSo) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "kept", 3, {{"ps", 1}, {"worker", 2}}));
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}},
                json::array{json::object{{"event", "Unknown"}, {"action", "RestartJob"}}}));
  const auto kept_group = "kept-" + k8s::string_at(get_job(h, "kept"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] { return runs(h, "kept", 3) && runs(h, "tf", 3); }))
      << describe(h) << read_log(*d);
  const auto before = uids_of(h, "tf");

  fail_pod(h, "kept-worker-0");
  fail_pod(h, "tf-worker-0");
  ASSERT_TRUE(h.wait_for([&] {
    return runs_again(h, "tf", 1, before, {"tf-ps-0", "tf-worker-0", "tf-worker-1"});
  })) << describe(h) << read_log(*d);
  auto job = get_job(h, "tf");
  EXPECT_EQ(int_at(job, {"status", "version"}), 1);
  EXPECT_EQ(history(job), (std::vector<std::string>{"Restarting", "Pending", "Running"}));
  EXPECT_EQ(actions_on(h, "tf"), (std::set<std::string>{"Start to execute action RestartJob"}))
      << describe_events(job_events(h, "tf"));

  ASSERT_TRUE(h.wait_for([&] { return h.groups()[kept_group].phase == "Unknown"; }))
      << describe(h);
  EXPECT_EQ(phase_of(get_job(h, "kept")), "Running");
  EXPECT_EQ(int_at(get_job(h, "kept"), {"status", "retryCount"}), 0);
  EXPECT_TRUE(actions_on(h, "kept").empty()) << describe_events(job_events(h, "kept"));
}

// Keeps pod `pod`, once deleted, from going until release_pod: a finalizer of the test's, as a
// kubelet slow to stop the pod's containers would keep it terminating.
void hold_pod(kube_harness& h, const std::string& pod) {
  patch_pod(h, pod,
            json::object{{"metadata", json::object{{"finalizers",
                                                    json::array{"sim.phalanx.io/hold"}}}}});
}

void release_pod(kube_harness& h, const std::string& pod) {
  patch_pod(h, pod, json::object{{"metadata", json::object{{"finalizers", nullptr}}}});
}

// vcctl's resume while its suspend is still under way: a Command AbortJob on a running job
// whose pods are slow to stop (held by a finalizer) leaves the job Aborting while they are
// terminating; a Command ResumeJob then restarts it (Volcano's abortingState: Restarting,
// retryCount 1), never Aborted; once the old pods are gone it makes them again and runs.
TEST(KubeJobController, AResumeWhileTheJobIsAbortingRestartsIt) {
  kube_harness h;
  h.node("n0", "2");
  h.node("n1", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}));
  ASSERT_TRUE(h.wait_for([&] { return runs(h, "tf", 3); })) << describe(h) << read_log(*d);
  const auto before = uids_of(h, "tf");
  for (const auto& [pod, uid] : before)
    hold_pod(h, pod);

  command(h, "tf", "AbortJob");
  auto terminating = [&] {
    std::size_t n = 0;
    for (const auto& [name, p] : h.pods())
      n += p.terminating ? 1 : 0;
    return n;
  };
  ASSERT_TRUE(h.wait_for([&] {
    return phase_of(get_job(h, "tf")) == "Aborting" && terminating() == 3 &&
           command_count(h) == 0;
  })) << describe(h) << read_log(*d);
  std::this_thread::sleep_for(1s);  // Its pods held, it stays so.
  EXPECT_EQ(phase_of(get_job(h, "tf")), "Aborting") << describe(h);

  command(h, "tf", "ResumeJob");
  ASSERT_TRUE(h.wait_for([&] {
    auto job = get_job(h, "tf");
    return phase_of(job) == "Restarting" && int_at(job, {"status", "retryCount"}) == 1 &&
           command_count(h) == 0;
  })) << describe(h) << read_log(*d);
  EXPECT_EQ(terminating(), 3u) << describe(h);

  for (const auto& [pod, uid] : before)
    release_pod(h, pod);
  ASSERT_TRUE(h.wait_for([&] {
    return runs_again(h, "tf", 1, before, {"tf-ps-0", "tf-worker-0", "tf-worker-1"});
  })) << describe(h) << read_log(*d);
  auto job = get_job(h, "tf");
  EXPECT_EQ(history(job),
            (std::vector<std::string>{"Aborting", "Restarting", "Pending", "Running"}));
  // Each step of an aborting job kills it whole and raises its version, as Volcano's killJob
  // does at every call: at least the abort's and the resume's. The new pods are of the last.
  const auto version = int_at(job, {"status", "version"});
  EXPECT_GE(version, 2);
  for (const auto& [name, raw] : raw_pods(h))
    EXPECT_EQ(k8s::string_at(raw, {"metadata", "annotations", "volcano.sh/job-version"}),
              std::to_string(version))
        << name;
}

// -- the job plugins env, svc and ssh (scheduler/job_plugins.hpp)

// `job` with spec.plugins {env: [], svc: svc_arguments, ssh: []}.
json::value with_plugins(json::value job, json::array svc_arguments = {}) {
  job.at("spec").as_object()["plugins"] = json::object{
      {"env", json::array{}}, {"svc", std::move(svc_arguments)}, {"ssh", json::array{}}};
  return job;
}

// `job` with the ray plugin too: the ps task as the head, "main" the container of the head and
// of the workers.
json::value with_ray(json::value job) {
  job.at("spec").at("plugins").as_object()["ray"] =
      json::array{"--head=ps", "--headContainer=main", "--workerContainer=main"};
  return job;
}

// The object at `path` under the test namespace ("services/tf"), or null when it is not there.
json::value get_in_ns(kube_harness& h, const std::string& path) {
  const bool core = path.rfind("networkpolicies/", 0) != 0;
  const std::string group = core ? "/api/v1" : "/apis/networking.k8s.io/v1";
  auto o = k8s::get_json(h.admin(), group + "/namespaces/" + h.ns() + "/" + path);
  return o ? *o : json::value{};
}

// The paths of the plugin objects of job "tf".
const std::vector<std::string> tf_plugin_objects = {"services/tf", "networkpolicies/tf",
                                                    "configmaps/tf-svc", "secrets/tf-ssh"};

bool owned_by(const json::value& object, const std::string& job_uid) {
  const auto* refs = k8s::value_at(object, {"metadata", "ownerReferences"});
  return refs != nullptr && refs->is_array() && refs->as_array().size() == 1 &&
         k8s::string_at(refs->as_array()[0], {"kind"}) == "Job" &&
         k8s::string_at(refs->as_array()[0], {"uid"}) == job_uid &&
         k8s::value_at(refs->as_array()[0], {"controller"}) != nullptr &&
         refs->as_array()[0].at("controller") == json::value(true);
}

// Base64 as a Secret's data holds it, decoded; "(not base64)" when it is not.
std::string unbase64(std::string_view text) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    if (c == '=')
      break;
    auto at = alphabet.find(c);
    if (at == std::string::npos)
      return "(not base64)";
    bits = (bits << 6) | static_cast<uint32_t>(at);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

std::string secret_value(const json::value& secret, const char* key) {
  return unbase64(k8s::string_at(secret, {"data", key}));
}

// The job "tf" (ps 1, worker 2) as the tests below make it.
const char* const tf_hosts = R"({
  "ps.host": "tf-ps-0.tf", "VC_PS_HOSTS": "tf-ps-0.tf", "VC_PS_NUM": "1",
  "worker.host": "tf-worker-0.tf\ntf-worker-1.tf",
  "VC_WORKER_HOSTS": "tf-worker-0.tf,tf-worker-1.tf", "VC_WORKER_NUM": "2"})";

const char* const tf_ssh_config =
    "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
    "Host tf-ps-0\n  HostName tf-ps-0.tf\n  Port 22\n"
    "Host tf-worker-0\n  HostName tf-worker-0.tf\n  Port 22\n"
    "Host tf-worker-1\n  HostName tf-worker-1.tf\n  Port 22\n";

// The svc plugin: a headless Service named as the job selecting its pods, a NetworkPolicy
// admitting only the job's own pods, and the ConfigMap "<job>-svc" of every task's hosts, each
// owned by the job; the ray plugin: the Service "<job>-head-svc" of the head's pods' ports; the
// job's status records its plugins as Volcano's does (status.controlledResources).
TEST(KubeJobController, TheSvcPluginMakesTheJobsServiceNetworkPolicyAndHosts) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(with_ray(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}))));
  const auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] {
    return !get_in_ns(h, "services/tf").is_null() &&
           !get_in_ns(h, "networkpolicies/tf").is_null() &&
           !get_in_ns(h, "configmaps/tf-svc").is_null() &&
           !get_in_ns(h, "services/tf-head-svc").is_null();
  })) << describe(h) << read_log(*d);

  const json::object job_pods_selector{{"volcano.sh/job-name", "tf"},
                                       {"volcano.sh/job-namespace", h.ns()}};
  auto service = get_in_ns(h, "services/tf");
  EXPECT_TRUE(owned_by(service, uid)) << json::serialize(service);
  EXPECT_EQ(k8s::string_at(service, {"spec", "clusterIP"}), "None");
  EXPECT_EQ(service.at("spec").at("selector"), json::value(job_pods_selector));
  // false, which the apiserver leaves out as Go's omitempty does.
  EXPECT_EQ(k8s::value_at(service, {"spec", "publishNotReadyAddresses"}), nullptr)
      << json::serialize(service);

  auto policy = get_in_ns(h, "networkpolicies/tf");
  EXPECT_TRUE(owned_by(policy, uid)) << json::serialize(policy);
  const json::value own_pods = json::object{{"matchLabels", job_pods_selector}};
  EXPECT_EQ(policy.at("spec").at("podSelector"), own_pods);
  EXPECT_EQ(policy.at("spec").at("ingress"),
            json::value(json::array{json::object{
                {"from", json::array{json::object{{"podSelector", own_pods}}}}}}));
  EXPECT_EQ(policy.at("spec").at("policyTypes"), json::value(json::array{"Ingress"}));

  auto hosts = get_in_ns(h, "configmaps/tf-svc");
  EXPECT_TRUE(owned_by(hosts, uid)) << json::serialize(hosts);
  EXPECT_EQ(hosts.at("data"), json::parse(tf_hosts)) << json::serialize(hosts);

  auto head = get_in_ns(h, "services/tf-head-svc");
  EXPECT_TRUE(owned_by(head, uid)) << json::serialize(head);
  EXPECT_EQ(head.at("spec").at("selector"),
            json::value(json::object{{"volcano.sh/job-name", "tf"},
                                     {"volcano.sh/job-namespace", h.ns()},
                                     {"volcano.sh/task-spec", "ps"}}));
  EXPECT_EQ(head.at("spec").at("ports"), json::parse(R"([
    {"name": "gcs", "port": 6379, "targetPort": "gcs", "protocol": "TCP"},
    {"name": "dashboard", "port": 8265, "targetPort": "dashboard", "protocol": "TCP"},
    {"name": "client-server", "port": 10001, "targetPort": "client-server",
     "protocol": "TCP"}])"))
      << json::serialize(head);

  ASSERT_TRUE(h.wait_for([&] {
    const auto job = get_job(h, "tf");
    const auto* controlled = k8s::value_at(job, {"status", "controlledResources"});
    return controlled != nullptr && *controlled == json::parse(R"({
      "plugin-env": "env", "plugin-svc": "svc", "plugin-ssh": "ssh", "plugin-ray": "ray"})");
  })) << json::serialize(get_job(h, "tf"));
}

// The ssh plugin: the Secret "<job>-ssh" of an RSA key pair (its public half is id_rsa.pub and
// authorized_keys, in OpenSSH's form) and an ssh config naming every host of the job.
TEST(KubeJobController, TheSshPluginMakesASecretOfAKeyPairAndTheHostsConfig) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}})));
  const auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] { return !get_in_ns(h, "secrets/tf-ssh").is_null(); }))
      << describe(h) << read_log(*d);
  auto secret = get_in_ns(h, "secrets/tf-ssh");
  EXPECT_TRUE(owned_by(secret, uid)) << json::serialize(secret);
  EXPECT_EQ(k8s::string_at(secret, {"type"}), "Opaque");
  EXPECT_EQ(secret.at("data").as_object().size(), 4u) << json::serialize(secret);
  const auto private_key = secret_value(secret, "id_rsa");
  EXPECT_EQ(private_key.rfind("-----BEGIN RSA PRIVATE KEY-----\n", 0), 0u) << private_key;
  const auto public_key = secret_value(secret, "id_rsa.pub");
  // The base64 of the wire form starts with the string "ssh-rsa" (length 7).
  EXPECT_EQ(public_key.rfind("ssh-rsa AAAAB3NzaC1yc2E", 0), 0u) << public_key;
  EXPECT_EQ(public_key.back(), '\n');
  EXPECT_EQ(secret_value(secret, "authorized_keys"), public_key);
  EXPECT_EQ(secret_value(secret, "config"), tf_ssh_config);
}

// Each pod of a job with env, svc, ssh, hcclrank and ray gets its task index in VK_TASK_INDEX
// and VC_TASK_INDEX, hostname (its name) and subdomain (the job's), every task's VC_<TASK>_HOSTS
// and VC_<TASK>_NUM from the ConfigMap, the ConfigMap and the Secret as volumes, mounted at
// /etc/volcano and /root/.ssh, its rank in the annotation hccl/rankIndex (the ps, named the
// master, first), and `ray start` as its command (the ps, named the head, with its ports).
TEST(KubeJobController, APodOfAJobWithPluginsCarriesTheirEnvHostnameVolumesAndMounts) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  auto job = with_ray(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}})));
  job.at("spec").at("plugins").as_object()["hcclrank"] = json::array{"--master=ps"};
  h.apply(job);
  ASSERT_TRUE(h.wait_for([&] { return raw_pods(h).size() == 3; })) << describe(h) << read_log(*d);
  const std::map<std::string, std::string> ranks{
      {"tf-ps-0", "0"}, {"tf-worker-0", "1"}, {"tf-worker-1", "2"}};
  for (const auto& [name, pod] : raw_pods(h)) {
    SCOPED_TRACE(name);
    const auto index = name.substr(name.rfind('-') + 1);
    EXPECT_EQ(k8s::string_at(pod, {"metadata", "annotations", "hccl/rankIndex"}), ranks.at(name));
    const auto& spec = pod.at("spec");
    const auto& command = spec.at("containers").at(0).at("command");
    if (name == "tf-ps-0") {
      EXPECT_EQ(command.at(2), "ray start --head --block --dashboard-host=0.0.0.0 --port=6379 "
                               "--dashboard-port=8265 --ray-client-server-port=10001");
      EXPECT_EQ(spec.at("containers").at(0).at("ports").as_array().size(), 3u);
    } else {
      EXPECT_EQ(command,
                json::parse(R"(["sh","-c","ray start --block --address=tf-ps-0.tf:6379"])"));
    }
    EXPECT_EQ(k8s::string_at(spec, {"hostname"}), name);
    EXPECT_EQ(k8s::string_at(spec, {"subdomain"}), "tf");
    std::map<std::string, std::string> env;
    for (const auto& e : spec.at("containers").at(0).at("env").as_array())
      env[k8s::string_at(e, {"name"})] =
          k8s::string_at(e, {"value"}) +
          k8s::string_at(e, {"valueFrom", "configMapKeyRef", "name"}) + "/" +
          k8s::string_at(e, {"valueFrom", "configMapKeyRef", "key"});
    EXPECT_EQ(env, (std::map<std::string, std::string>{
                       {"VK_TASK_INDEX", index + "/"},
                       {"VC_TASK_INDEX", index + "/"},
                       {"VC_PS_HOSTS", "tf-svc/VC_PS_HOSTS"},
                       {"VC_PS_NUM", "tf-svc/VC_PS_NUM"},
                       {"VC_WORKER_HOSTS", "tf-svc/VC_WORKER_HOSTS"},
                       {"VC_WORKER_NUM", "tf-svc/VC_WORKER_NUM"}}));
    std::map<std::string, std::string> volumes;
    for (const auto& v : spec.at("volumes").as_array())
      volumes[k8s::string_at(v, {"name"})] =
          k8s::string_at(v, {"configMap", "name"}) + k8s::string_at(v, {"secret", "secretName"});
    EXPECT_EQ(volumes["tf-svc"], "tf-svc");
    EXPECT_EQ(volumes["tf-ssh"], "tf-ssh");
    std::map<std::string, std::string> mounts;
    for (const auto& m : spec.at("containers").at(0).at("volumeMounts").as_array())
      mounts[k8s::string_at(m, {"name"})] =
          k8s::string_at(m, {"mountPath"}) + ":" + k8s::string_at(m, {"subPath"});
    EXPECT_EQ(mounts, (std::map<std::string, std::string>{{"tf-svc", "/etc/volcano:"},
                                                          {"tf-ssh", "/root/.ssh:.ssh"}}));
  }
}

// Scaling the worker task up (2 to 3) brings the ConfigMap's host lists in step (Volcano's svc
// OnJobUpdate); the ssh config stays as it was made, as Volcano leaves it.
TEST(KubeJobController, ScalingAJobWithTheSvcPluginUpdatesItsHosts) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}})));
  ASSERT_TRUE(h.wait_for([&] { return raw_pods(h).size() == 3; })) << describe(h) << read_log(*d);
  ASSERT_EQ(get_in_ns(h, "configmaps/tf-svc").at("data"), json::parse(tf_hosts));
  const auto secret_before = get_in_ns(h, "secrets/tf-ssh");

  patch_job(h, "tf", scale_operations(3, 1, 3, 2));
  const auto scaled = json::parse(R"({
    "ps.host": "tf-ps-0.tf", "VC_PS_HOSTS": "tf-ps-0.tf", "VC_PS_NUM": "1",
    "worker.host": "tf-worker-0.tf\ntf-worker-1.tf\ntf-worker-2.tf",
    "VC_WORKER_HOSTS": "tf-worker-0.tf,tf-worker-1.tf,tf-worker-2.tf", "VC_WORKER_NUM": "3"})");
  ASSERT_TRUE(h.wait_for([&] {
    const auto hosts = get_in_ns(h, "configmaps/tf-svc");
    const auto* data = k8s::value_at(hosts, {"data"});
    return data != nullptr && *data == scaled;
  })) << json::serialize(get_in_ns(h, "configmaps/tf-svc")) << read_log(*d);
  ASSERT_TRUE(h.wait_for([&] { return raw_pods(h).count("tf-worker-2") == 1; })) << describe(h);
  auto secret_after = get_in_ns(h, "secrets/tf-ssh");
  EXPECT_EQ(secret_after.at("data"), secret_before.at("data"));
  EXPECT_EQ(secret_value(secret_after, "config"), tf_ssh_config);
}

// Deleting the job deletes its Services (svc's and ray's head), NetworkPolicy, ConfigMap and
// Secret with its pods and PodGroup (the test control plane has no garbage collector: the
// controller deletes them).
TEST(KubeJobController, DeletingAJobDeletesItsPluginObjects) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(with_ray(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}))));
  auto objects = tf_plugin_objects;
  objects.push_back("services/tf-head-svc");
  ASSERT_TRUE(h.wait_for([&] {
    for (const auto& path : objects)
      if (get_in_ns(h, path).is_null())
        return false;
    return raw_pods(h).size() == 3;
  })) << describe(h) << read_log(*d);

  auto deleted = k8s::delete_object(h.admin(), jobs_path(h) + "/tf");
  ASSERT_TRUE(deleted.ok()) << deleted.to_string();
  ASSERT_TRUE(h.wait_for([&] {
    for (const auto& path : objects)
      if (!get_in_ns(h, path).is_null())
        return false;
    return h.pods().empty() && h.groups().empty();
  })) << describe(h) << read_log(*d);
}

// phalanxd killed and started again: the new process acts on the job (it makes the pod deleted
// meanwhile) and keeps the job's Secret as it was, the same object and the same key pair, since
// the pods already running hold those keys.
TEST(KubeJobController, ARestartedPhalanxdKeepsTheJobsSshSecret) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}})));
  ASSERT_TRUE(h.wait_for([&] {
    return raw_pods(h).size() == 3 && !get_in_ns(h, "secrets/tf-ssh").is_null();
  })) << describe(h) << read_log(*d);
  const auto before = get_in_ns(h, "secrets/tf-ssh");
  const auto worker_uid = h.pods()["tf-worker-0"].uid;

  d->kill();
  h.delete_pod("tf-worker-0");
  auto again = h.start_phalanxd("data-2", job_controller, "", "data");
  ASSERT_TRUE(h.wait_for([&] {
    auto pods = h.pods();
    return pods.count("tf-worker-0") && pods["tf-worker-0"].uid != worker_uid;
  }, 60s)) << describe(h) << read_log(*again);
  const auto after = get_in_ns(h, "secrets/tf-ssh");
  EXPECT_EQ(k8s::string_at(after, {"metadata", "uid"}),
            k8s::string_at(before, {"metadata", "uid"}));
  EXPECT_EQ(after.at("data"), before.at("data"));
}

// --disable-network-policy: the Service and ConfigMap, and no NetworkPolicy.
TEST(KubeJobController, DisableNetworkPolicyMakesNoNetworkPolicy) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  h.apply(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}}),
                       json::array{"--disable-network-policy"}));
  // The pods come after the plugin objects.
  ASSERT_TRUE(h.wait_for([&] { return raw_pods(h).size() == 3; })) << describe(h) << read_log(*d);
  EXPECT_FALSE(get_in_ns(h, "services/tf").is_null());
  EXPECT_FALSE(get_in_ns(h, "configmaps/tf-svc").is_null());
  EXPECT_TRUE(get_in_ns(h, "networkpolicies/tf").is_null())
      << json::serialize(get_in_ns(h, "networkpolicies/tf"));
}

// A plugin object the apiserver refuses to write (an immutable ConfigMap "<job>-svc" of other
// data, made before the job): the step fails, the job gets a Warning PluginError Event in
// Volcano's words and no pod; once the ConfigMap is gone, the retried step makes it and the pods.
TEST(KubeJobController, APluginObjectNotWrittenIsAWarningAndTheJobWaitsForIt) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  auto stale = k8s::post_json(
      h.admin(), "/api/v1/namespaces/" + h.ns() + "/configmaps",
      json::object{{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", json::object{{"name", "tf-svc"}, {"namespace", h.ns()}}},
                   {"immutable", true},
                   {"data", json::object{{"stale", "x"}}}});
  ASSERT_TRUE(stale.ok()) << stale.error().to_string();
  h.apply(with_plugins(vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}})));
  ASSERT_TRUE(h.wait_for([&] {
    auto failed = with_reason(job_events(h, "tf"), "PluginError");
    return !failed.empty() && int_at(failed[0], {"count"}) >= 2;
  })) << describe_events(job_events(h, "tf")) << read_log(*d);
  auto failed = with_reason(job_events(h, "tf"), "PluginError");
  EXPECT_EQ(k8s::string_at(failed[0], {"type"}), "Warning");
  const auto message = k8s::string_at(failed[0], {"message"});
  EXPECT_EQ(message.rfind("Execute plugin when job add failed, err: ", 0), 0u) << message;
  EXPECT_TRUE(raw_pods(h).empty()) << describe(h);

  auto removed =
      k8s::delete_object(h.admin(), "/api/v1/namespaces/" + h.ns() + "/configmaps/tf-svc");
  ASSERT_TRUE(removed.ok()) << removed.to_string();
  ASSERT_TRUE(h.wait_for([&] { return raw_pods(h).size() == 3; })) << describe(h) << read_log(*d);
  EXPECT_EQ(get_in_ns(h, "configmaps/tf-svc").at("data"), json::parse(tf_hosts));
}

// -- a job's volumes (scheduler/job_volumes.hpp)

// The claims of job `uid`'s namespace that the job controls, by name.
std::map<std::string, json::value> claims_owned_by(kube_harness& h, const std::string& uid) {
  std::map<std::string, json::value> out;
  auto list = k8s::get_json(h.admin(), "/api/v1/namespaces/" + h.ns() + "/persistentvolumeclaims");
  if (list)
    for (const auto& item : list->as_object().at("items").as_array())
      if (owned_by(item, uid))
        out[k8s::string_at(item, {"metadata", "name"})] = item;
  return out;
}

// A job's volumes on the apiserver (Volcano's createJobIOIfNotExist). The volume that names a
// claim ("shared") that does not exist keeps the job from its PodGroup and pods, with a Warning
// PVCError Event in Volcano's words, until the claim is made. The volume that describes its
// claim gets one made, owned by the job, with the spec as written: one only, however often the
// step was tried, under the generated name then written into the Job's spec. Every pod mounts
// both; the status records both; deleting the job deletes the claim it made, not the other.
TEST(KubeJobController, AJobsVolumesGetTheirClaimsAndAMissingOneKeepsItWaiting) {
  kube_harness h;
  auto d = h.start_phalanxd("data", job_controller);
  auto job = vcjob(h.ns(), "tf", 3, {{"ps", 1}, {"worker", 2}});
  job.at("spec").as_object()["volumes"] = json::parse(R"([
    {"mountPath": "/scratch", "volumeClaim": {"accessModes": ["ReadWriteOnce"],
                                              "resources": {"requests": {"storage": "1Gi"}}}},
    {"mountPath": "/data", "volumeClaimName": "shared"}])");
  h.apply(job);
  const auto uid = k8s::string_at(get_job(h, "tf"), {"metadata", "uid"});
  ASSERT_TRUE(h.wait_for([&] {
    auto failed = with_reason(job_events(h, "tf"), "PVCError");
    return !failed.empty() && int_at(failed[0], {"count"}) >= 2;
  })) << describe_events(job_events(h, "tf")) << read_log(*d);
  auto failed = with_reason(job_events(h, "tf"), "PVCError");
  EXPECT_EQ(k8s::string_at(failed[0], {"type"}), "Warning");
  EXPECT_EQ(k8s::string_at(failed[0], {"message"}),
            "Failed to create PVC, err: pvc shared is not found, the job will be in the Pending "
            "state until the PVC is created");
  EXPECT_TRUE(raw_pods(h).empty()) << describe(h);
  EXPECT_TRUE(h.groups().empty()) << describe(h);
  EXPECT_EQ(phase_of(get_job(h, "tf")), "Pending");
  EXPECT_EQ(claims_owned_by(h, uid).size(), 1u) << "one claim made, whatever the tries";

  auto shared = k8s::post_json(
      h.admin(), "/api/v1/namespaces/" + h.ns() + "/persistentvolumeclaims",
      json::parse(R"({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "shared"},
        "spec": {"accessModes": ["ReadWriteMany"],
                 "resources": {"requests": {"storage": "1Gi"}}}})"));
  ASSERT_TRUE(shared.ok()) << shared.error().to_string();
  ASSERT_TRUE(h.wait_for([&] { return raw_pods(h).size() == 3; })) << describe(h) << read_log(*d);

  const auto volumes = get_job(h, "tf").at("spec").at("volumes");
  const auto claim = k8s::string_at(volumes.at(0), {"volumeClaimName"});
  EXPECT_EQ(claim.rfind("tf-pvc-", 0), 0u) << json::serialize(volumes);
  EXPECT_EQ(claim.size(), 19u) << claim;
  EXPECT_EQ(k8s::string_at(volumes.at(1), {"volumeClaimName"}), "shared");
  auto owned = claims_owned_by(h, uid);
  ASSERT_EQ(owned.size(), 1u);
  ASSERT_EQ(owned.count(claim), 1u) << "the claim made is the one the spec names";
  EXPECT_EQ(owned[claim].at("spec").at("accessModes"), json::parse(R"(["ReadWriteOnce"])"));
  EXPECT_EQ(k8s::string_at(owned[claim], {"spec", "resources", "requests", "storage"}), "1Gi");

  for (const auto& [name, pod] : raw_pods(h)) {
    SCOPED_TRACE(name);
    std::map<std::string, std::string> claim_of_volume;
    for (const auto& v : pod.at("spec").at("volumes").as_array())
      if (const auto* c = k8s::value_at(v, {"persistentVolumeClaim", "claimName"}))
        claim_of_volume[k8s::string_at(v, {"name"})] = std::string(c->as_string());
    std::map<std::string, std::string> mounted;
    for (const auto& m : pod.at("spec").at("containers").at(0).at("volumeMounts").as_array())
      if (auto c = claim_of_volume.find(k8s::string_at(m, {"name"})); c != claim_of_volume.end())
        mounted[k8s::string_at(m, {"mountPath"})] = c->second;
    EXPECT_EQ(mounted,
              (std::map<std::string, std::string>{{"/scratch", claim}, {"/data", "shared"}}));
  }
  ASSERT_TRUE(h.wait_for([&] {
    const auto now = get_job(h, "tf");
    const auto* controlled = k8s::value_at(now, {"status", "controlledResources"});
    return controlled != nullptr &&
           *controlled == json::value(json::object{{"volume-pvc-" + claim, claim},
                                                   {"volume-pvc-shared", "shared"}});
  })) << json::serialize(get_job(h, "tf"));

  // Its claim goes with the job (terminating: no controller removes the apiserver's
  // pvc-protection finalizer in the test control plane); "shared" is not the job's.
  auto deleted = k8s::delete_object(h.admin(), jobs_path(h) + "/tf");
  ASSERT_TRUE(deleted.ok()) << deleted.to_string();
  ASSERT_TRUE(h.wait_for([&] {
    const auto made = get_in_ns(h, "persistentvolumeclaims/" + claim);
    return made.is_null() || !k8s::string_at(made, {"metadata", "deletionTimestamp"}).empty();
  })) << json::serialize(get_in_ns(h, "persistentvolumeclaims/" + claim)) << read_log(*d);
  const auto kept = get_in_ns(h, "persistentvolumeclaims/shared");
  EXPECT_TRUE(k8s::string_at(kept, {"metadata", "deletionTimestamp"}).empty())
      << json::serialize(kept);
}

// dependsOn on the apiserver, and why a job waits: the workers depend on the ps, so while no
// node can hold the ps no worker pod is made, and the job carries a PodGroupPending Warning; once a node that fits it comes and it runs, the workers are made and
// run. The workers' task asks for no minimum (minAvailable 0), so the gang runs with the ps
// alone, as a Volcano user writes such a job.
TEST(KubeJobController, ATaskThatDependsOnAnotherGetsPodsOnceItRunsAndTheJobSaysWhyItWaits) {
  kube_harness h;
  h.node("n0", "2");
  test_kubelet kubelet(h);
  auto d = h.start_phalanxd("data", job_controller);
  auto job = vcjob(h.ns(), "tf", 1, {{"ps", 1}, {"worker", 2}});
  auto& tasks = job.at("spec").at("tasks").as_array();
  tasks[0]
      .at("template").at("spec").at("containers").at(0)
      .at("resources").at("requests").as_object()["cpu"] = "4";
  tasks[1].as_object()["minAvailable"] = 0;
  tasks[1].as_object()["dependsOn"] = json::object{{"name", json::array{"ps"}}};
  h.apply(job);
  ASSERT_TRUE(h.wait_for([&] { return job_pods(h, "tf").count("tf-ps-0") == 1; }))
      << describe(h) << read_log(*d);
  // The ps waits for room; its dependents are not made meanwhile.
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(job_pods(h, "tf").size(), 1u) << describe(h);
  EXPECT_EQ(job_pods(h, "tf")["tf-ps-0"].phase, "Pending");
  // Why, on the job itself (Volcano's recordPodGroupEvent): its PodGroup is unschedulable.
  ASSERT_TRUE(h.wait_for([&] {
    return with_reason(job_events(h, "tf"), "PodGroupPending").size() == 1;
  })) << describe_events(job_events(h, "tf"));
  const auto pending = with_reason(job_events(h, "tf"), "PodGroupPending")[0];
  EXPECT_EQ(k8s::string_at(pending, {"type"}), "Warning");
  EXPECT_TRUE(k8s::string_at(pending, {"message"}).starts_with(
      "PodGroup " + h.ns() + ":tf unschedulable, reason: "))
      << k8s::string_at(pending, {"message"});

  h.node("n1", "8");
  ASSERT_TRUE(h.wait_for([&] { return all_in_phase(job_pods(h, "tf"), 3, "Running"); }))
      << describe(h) << read_log(*d);
  EXPECT_EQ(job_pods(h, "tf")["tf-ps-0"].node, "n1");
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

} // namespace
} // namespace phalanx::kube_tests
