// What a platform team installs (issue 26): k8s/deploy/ applied to a real kube-apiserver, and
// phalanxd run as a process with the token of the shipped ServiceAccount, so that the
// apiserver's RBAC, with the shipped ClusterRole, decides what it may do.
//
// Phalanx does not run Volcano's job controller in Kubernetes mode, so the seeds' Volcano Jobs
// (examples/tensorflow-job.yaml, examples/mpi-job.yaml) are stored as Jobs under our CRD, and
// their gangs made here as Volcano's job controller makes them (the admin creates them): the
// PodGroup "<job>-<job uid>", the pods "<job>-<task>-<index>" annotated with their group and
// task. phalanxd must bind each gang all or nothing.

#include "tests/k8s/kube_harness.hpp"

#include "api/codec.hpp"
#include "k8s/operations.hpp"
#include "scheduler/quantity.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace phalanx::kube_tests {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string read_log(const loadtest::phalanxd_process& d) {
  std::ifstream in(d.log_file());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

json::value read_manifest(const std::string& repo_path) {
  std::ifstream in(std::string(PHALANX_SOURCE_DIR) + "/" + repo_path);
  std::ostringstream text;
  text << in.rdbuf();
  auto docs = api::parse_manifests(text.str());
  if (!docs || docs->size() != 1)
    throw std::runtime_error(repo_path + ": not one manifest");
  return (*docs)[0];
}

int bound_of(const std::map<std::string, seen_pod>& pods, const std::string& group) {
  int n = 0;
  for (const auto& [name, p] : pods)
    n += p.group == group && !p.node.empty() ? 1 : 0;
  return n;
}

std::string describe(kube_harness& h) {
  std::string out;
  for (const auto& [name, g] : h.groups())
    out += "podgroup " + name + ": " + g.phase + " \"" + g.message + "\"\n";
  for (const auto& [name, p] : h.pods())
    out += "pod " + name + " (" + p.group + "): node \"" + p.node + "\"\n";
  return out;
}

scheduler::quantity_unit unit_of(std::string_view resource) {
  return resource == "cpu" ? scheduler::quantity_unit::milli : scheduler::quantity_unit::whole;
}

// A quantity as YAML gives it: "2Gi", or a plain number (`nvidia.com/gpu: 1`).
std::string quantity_text(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
}

// A Volcano Job's gang, as Volcano's job controller makes it from the stored Job.
struct job_gang {
  std::string group;  // The PodGroup's name.
  int min_member = 0;
  std::vector<std::string> pods;
};

job_gang make_gang(kube_harness& h, const json::value& job) {
  const auto& meta = job.at("metadata");
  const auto& spec = job.at("spec").as_object();
  auto job_name = std::string(meta.at("name").as_string());
  auto uid = std::string(meta.at("uid").as_string());
  job_gang gang;
  gang.group = job_name + "-" + uid;
  gang.min_member = static_cast<int>(spec.at("minAvailable").as_int64());
  json::object min_task_member;
  // minResources: what the first minAvailable pods request; here every pod, as the seeds'
  // minAvailable is their whole replica count (checked below).
  std::map<std::string, int64_t> min_resources;
  int replicas_total = 0;
  std::vector<json::value> pods;
  for (const auto& task : spec.at("tasks").as_array()) {
    auto task_name = std::string(task.at("name").as_string());
    auto replicas = static_cast<int>(task.at("replicas").as_int64());
    replicas_total += replicas;
    min_task_member[task_name] = replicas;
    const auto& pod_spec = task.at("template").at("spec");
    for (const auto& c : pod_spec.at("containers").as_array())
      if (const auto* requests = c.at("resources").as_object().if_contains("requests"))
        for (const auto& [resource, amount] : requests->as_object())
          min_resources[std::string(resource)] +=
              replicas * scheduler::parse_quantity(quantity_text(amount), unit_of(resource)).value();
    for (int i = 0; i < replicas; ++i) {
      auto name = job_name + "-" + task_name + "-" + std::to_string(i);
      json::object pod_meta{
          {"name", name},
          {"namespace", h.ns()},
          {"annotations", json::object{{"scheduling.k8s.io/group-name", gang.group},
                                       {"volcano.sh/job-name", job_name},
                                       {"volcano.sh/task-spec", task_name},
                                       {"volcano.sh/task-index", std::to_string(i)}}},
          {"labels", json::object{{"volcano.sh/job-name", job_name},
                                  {"volcano.sh/task-spec", task_name}}},
          {"ownerReferences",
           json::array{json::object{{"apiVersion", "batch.volcano.sh/v1alpha1"},
                                    {"kind", "Job"},
                                    {"name", job_name},
                                    {"uid", uid},
                                    {"controller", true}}}}};
      auto s = pod_spec.as_object();
      s["schedulerName"] = spec.at("schedulerName");
      pods.push_back(json::object{{"apiVersion", "v1"},
                                  {"kind", "Pod"},
                                  {"metadata", std::move(pod_meta)},
                                  {"spec", std::move(s)}});
      gang.pods.push_back(name);
    }
  }
  if (replicas_total != gang.min_member)
    throw std::runtime_error(job_name + ": minAvailable is not every replica");
  json::object resources;
  for (const auto& [resource, amount] : min_resources)
    resources[resource] = scheduler::format_quantity(amount, unit_of(resource));
  h.apply(json::object{
      {"apiVersion", "scheduling.volcano.sh/v1beta1"},
      {"kind", "PodGroup"},
      {"metadata",
       json::object{{"name", gang.group},
                    {"namespace", h.ns()},
                    {"ownerReferences",
                     json::array{json::object{{"apiVersion", "batch.volcano.sh/v1alpha1"},
                                              {"kind", "Job"},
                                              {"name", job_name},
                                              {"uid", uid},
                                              {"controller", true}}}}}},
      {"spec", json::object{{"minMember", gang.min_member},
                            {"minTaskMember", std::move(min_task_member)},
                            {"minResources", std::move(resources)},
                            {"queue", spec.at("queue")}}}});
  for (const auto& p : pods)
    h.apply(p);
  return gang;
}

// Stores a seed's Job under the shipped CRD and returns it as stored (with its uid).
json::value store_job(kube_harness& h, const std::string& repo_path) {
  auto job = read_manifest(repo_path);
  job.as_object()["metadata"].as_object()["namespace"] = h.ns();
  h.apply(job);
  auto name = std::string(job.at("metadata").at("name").as_string());
  auto stored = k8s::get_json(
      h.admin(), "/apis/batch.volcano.sh/v1alpha1/namespaces/" + h.ns() + "/jobs/" + name);
  if (!stored)
    throw std::runtime_error("get job: " + stored.error().to_string());
  return std::move(*stored);
}

// The seeds' TensorFlow (ps + 2 GPU workers, 5 CPUs) and MPI (launcher + 3 workers, 6.5 CPUs)
// gangs on 8 CPUs: never both at once. One is bound whole, the other not at all; when the first
// one's pods go, the second is bound whole. phalanxd has only the shipped ServiceAccount's token.
TEST(KubeDeploy, TheSeedsJobsGangsAreBoundAllOrNothingByTheShippedServiceAccount) {
  kube_harness h;
  ASSERT_TRUE(h.wait_for([&] {
    return k8s::get_json(h.admin(), "/apis/batch.volcano.sh/v1alpha1/jobs").ok();
  })) << "the Job CRD was not established";
  h.node("cpu-1", "4");
  ASSERT_TRUE(h.cp().create_node("gpu-1", "4", "16Gi").ok());
  ASSERT_TRUE(k8s::patch_json(h.admin(), "/api/v1/nodes/gpu-1/status",
                              json::parse(R"({"status":{"capacity":{"nvidia.com/gpu":"2"},
                                "allocatable":{"nvidia.com/gpu":"2"}}})"),
                              k8s::patch_type::merge)
                  .ok());
  auto d = h.start_phalanxd("data");  // With the token of phalanx-system/phalanx-scheduler.
  auto tf = make_gang(h, store_job(h, "examples/tensorflow-job.yaml"));
  auto mpi = make_gang(h, store_job(h, "examples/mpi-job.yaml"));
  ASSERT_EQ(tf.pods.size(), 3u);
  ASSERT_EQ(mpi.pods.size(), 4u);

  ASSERT_TRUE(h.wait_for([&] {
    auto p = h.pods();
    return bound_of(p, tf.group) == 3 || bound_of(p, mpi.group) == 4;
  })) << describe(h) << read_log(*d);
  std::this_thread::sleep_for(1s);  // Room for a wrong extra Binding to show.
  auto pods = h.pods();
  bool tf_first = bound_of(pods, tf.group) == 3;
  const auto& first = tf_first ? tf : mpi;
  const auto& second = tf_first ? mpi : tf;
  EXPECT_EQ(bound_of(pods, first.group), first.min_member) << describe(h);
  EXPECT_EQ(bound_of(pods, second.group), 0) << describe(h);
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
  if (tf_first) {  // The GPU workers on the GPU node.
    EXPECT_EQ(pods["tensorflow-dist-mnist-worker-0"].node, "gpu-1");
    EXPECT_EQ(pods["tensorflow-dist-mnist-worker-1"].node, "gpu-1");
  }
  ASSERT_TRUE(h.wait_for([&] { return h.groups()[first.group].phase == "Running"; }))
      << describe(h);

  for (const auto& p : first.pods)
    h.delete_pod(p);
  ASSERT_TRUE(h.wait_for([&] { return bound_of(h.pods(), second.group) == second.min_member; }))
      << describe(h) << read_log(*d);
  ASSERT_TRUE(h.wait_for([&] { return h.groups()[second.group].phase == "Running"; }))
      << describe(h);
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
  auto log = read_log(*d);
  EXPECT_EQ(log.find("forbidden by RBAC"), std::string::npos)
      << "the shipped ClusterRole lacks a rule phalanxd uses:\n" << log;
  EXPECT_EQ(log.find("level=error"), std::string::npos) << log;
}

// The shipped ClusterRole (k8s/deploy/rbac.yaml) with one verb of one rule taken away, bound to
// a ServiceAccount of its own: `account`. Returns that account's name.
std::string shipped_role_without(kube_harness& h, const std::string& account,
                                 const std::string& resource, const std::string& verb) {
  std::ifstream in(std::string(PHALANX_SOURCE_DIR) + "/k8s/deploy/rbac.yaml");
  std::ostringstream text;
  text << in.rdbuf();
  auto docs = api::parse_manifests(text.str());
  if (!docs)
    throw std::runtime_error("rbac.yaml: " + docs.error().message);
  for (auto& doc : *docs) {
    // The scheduler's role (the job controller's has one of its own, not bound here).
    if (doc.at("kind") != "ClusterRole" || doc.at("metadata").at("name") != "phalanx-scheduler")
      continue;
    auto& role = doc.as_object();
    role["metadata"] = json::object{{"name", account}};
    json::array kept;
    bool found = false;
    for (auto& rule : role["rules"].as_array()) {
      bool this_resource = false;
      for (const auto& r : rule.at("resources").as_array())
        this_resource |= r == resource.c_str();
      if (this_resource) {
        json::array verbs;
        for (const auto& v : rule.at("verbs").as_array()) {
          if (v == verb.c_str())
            found = true;
          else
            verbs.push_back(v);
        }
        rule.as_object()["verbs"] = std::move(verbs);
      }
      if (!rule.at("verbs").as_array().empty())
        kept.push_back(rule);
    }
    if (!found)
      throw std::runtime_error("the shipped ClusterRole has no " + verb + " " + resource);
    role["rules"] = std::move(kept);
    h.apply(doc);
  }
  h.apply(json::object{{"apiVersion", "v1"},
                       {"kind", "ServiceAccount"},
                       {"metadata",
                        json::object{{"name", account}, {"namespace", "phalanx-system"}}}});
  h.apply(json::object{
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "ClusterRoleBinding"},
      {"metadata", json::object{{"name", account}}},
      {"roleRef", json::object{{"apiGroup", "rbac.authorization.k8s.io"},
                               {"kind", "ClusterRole"},
                               {"name", account}}},
      {"subjects", json::array{json::object{{"kind", "ServiceAccount"},
                                            {"name", account},
                                            {"namespace", "phalanx-system"}}}}});
  return account;
}

struct denied_case {
  const char* name;
  const char* resource;
  const char* verb;
  /// The log line phalanxd must write, naming the rule.
  const char* says;
  /// Whether the gang's pods are bound all the same (the call denied is not the Binding).
  bool binds;
};

void PrintTo(const denied_case& c, std::ostream* os) {
  *os << c.verb << " " << c.resource << " taken away";
}

class KubeDeniedCall : public ::testing::TestWithParam<denied_case> {};

// RBAC decides: with one rule of the shipped ClusterRole taken away, phalanxd says loudly (an
// error) which call the apiserver refused, naming the verb, the resource and the API group the
// ClusterRole lacks, and what depends on it does not happen.
TEST_P(KubeDeniedCall, FailsLoudlyNamingTheRule) {
  const auto& c = GetParam();
  kube_harness h;
  h.node("n0", "8");
  auto account = shipped_role_without(h, std::string("phalanx-without-") + c.name, c.resource,
                                      c.verb);
  auto d = h.start_phalanxd("data", {}, h.kubeconfig_for(account));
  h.podgroup("g", 2);
  h.pod("g-0", "g", "1");
  h.pod("g-1", "g", "1");
  ASSERT_TRUE(h.wait_for([&] { return read_log(*d).find(c.says) != std::string::npos; }))
      << "expected: " << c.says << "\n" << read_log(*d);
  auto log = read_log(*d);
  auto line_start = log.rfind('\n', log.find(c.says));
  auto line = log.substr(line_start + 1, log.find('\n', log.find(c.says)) - line_start - 1);
  EXPECT_NE(line.find("level=error"), std::string::npos) << line;
  EXPECT_NE(line.find("forbidden by RBAC: the ClusterRole lacks this rule"), std::string::npos)
      << line;
  if (c.binds) {
    ASSERT_TRUE(h.wait_for([&] { return bound_of(h.pods(), "g") == 2; })) << read_log(*d);
    EXPECT_NE(h.groups()["g"].phase, "Running") << "the PodGroup's status was written";
  } else {
    std::this_thread::sleep_for(500ms);
    EXPECT_EQ(bound_of(h.pods(), "g"), 0);
  }
  EXPECT_EQ(h.check_invariants(), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(
    ShippedRoleLessOneRule, KubeDeniedCall,
    ::testing::Values(
        denied_case{"binding", "pods/binding", "create",
                    R"(verb=create resource=pods/binding api_group="")", false},
        denied_case{"podgroup-update", "podgroups", "update",
                    "verb=update resource=podgroups api_group=scheduling.volcano.sh", true}),
    [](const ::testing::TestParamInfo<denied_case>& info) {
      std::string name;
      for (char ch : std::string(info.param.name))
        name += ch == '-' ? '_' : ch;
      return name;
    });

} // namespace
} // namespace phalanx::kube_tests
