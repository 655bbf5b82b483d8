// The Volcano manifests of examples/, unchanged, through phalanxctl and a real phalanxd in
// standalone mode: accepted, scheduled (PodGroup phase, pods Running and bound), and shown by get
// and describe as they are.

#include "tests/cli/harness.hpp"

#include "api/codec.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::cli_test {
namespace {

namespace json = boost::json;

// The example's documents, parsed with the API's own YAML reader.
std::vector<json::value> example_docs(const std::string& name) {
  auto docs = api::parse_manifests(read_text(example(name)));
  EXPECT_TRUE(docs.ok()) << name;
  return docs.ok() ? *docs : std::vector<json::value>{};
}

std::string job_path(const std::string& name) {
  return "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs/" + name;
}

// The job is Running with every replica running, its PodGroup Running, and every pod Running on a
// node.
void expect_job_running(const daemon& d, const std::string& name, int replicas) {
  ASSERT_TRUE(eventually([&] {
    auto j = d.get_json(job_path(name));
    return field(j, {"status", "state", "phase"}) == "Running" &&
           field(j, {"status", "running"}) == std::to_string(replicas);
  })) << d.ctl({"describe", "job", name}).out;
}

class CliExamples : public daemon_test {};

TEST_F(CliExamples, TensorflowJobRunsWithItsPsOnAnyNodeAndWorkersOnGpuNodes) {
  auto r = ctl({"apply", "-f", example("tensorflow-job.yaml")});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "job.batch.volcano.sh/tensorflow-dist-mnist created\n");
  expect_job_running(*d_, "tensorflow-dist-mnist", 3);

  // vcctl's columns: Name Creation Phase JobType Replicas Min Pending Running Succeeded Failed
  // Unknown RetryCount.
  auto job = object(job_path("tensorflow-dist-mnist"));
  std::string created = field(job, {"metadata", "creationTimestamp"}).substr(0, 10);
  auto table = ctl({"get", "jobs"});
  ASSERT_TRUE(succeeded(table));
  EXPECT_EQ(cells(split_lines(table.out).at(0)),
            (std::vector<std::string>{"NAME", "CREATION", "PHASE", "JOBTYPE", "REPLICAS", "MIN",
                                      "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "UNKNOWN",
                                      "RETRYCOUNT"}));
  EXPECT_EQ(row_of(table.out, "tensorflow-dist-mnist"),
            (std::vector<std::string>{"tensorflow-dist-mnist", created, "Running", "Batch", "3",
                                      "3", "0", "3", "0", "0", "0", "0"}));

  // Pods: one ps and two workers, Running and bound; the workers ask for a GPU, which only the
  // gpu-* nodes have.
  auto pods = ctl_json({"get", "pods", "-l", "volcano.sh/job-name=tensorflow-dist-mnist"});
  ASSERT_EQ(pods.at("items").as_array().size(), 3u);
  for (const auto& p : pods.at("items").as_array()) {
    std::string name = field(p, {"metadata", "name"});
    EXPECT_EQ(field(p, {"status", "phase"}), "Running") << name;
    std::string node = field(p, {"spec", "nodeName"});
    EXPECT_FALSE(node.empty()) << name;
    if (field(p, {"metadata", "labels", "volcano.sh/task-spec"}) == "worker") {
      EXPECT_EQ(node.rfind("gpu-", 0), 0u) << name << " on " << node;
    }
  }
  auto wide = ctl({"get", "pods", "-o", "wide"});
  ASSERT_TRUE(succeeded(wide));
  auto worker = row_of(wide.out, "tensorflow-dist-mnist-worker-0");
  ASSERT_EQ(worker.size(), 8u) << wide.out;
  EXPECT_EQ(worker[2], "Running");
  EXPECT_EQ(worker[7], "worker");

  // Its PodGroup (<job>-<uid>, as Volcano names it) runs the gang of 3.
  std::string group = "tensorflow-dist-mnist-" + field(job, {"metadata", "uid"});
  auto pg = ctl({"get", "pg", group, "-o", "wide"});
  ASSERT_TRUE(succeeded(pg));
  auto pg_row = row_of(pg.out, group);
  ASSERT_EQ(pg_row.size(), 8u) << pg.out;
  EXPECT_EQ(pg_row[1], "Running");
  EXPECT_EQ(pg_row[2], "3");
  EXPECT_EQ(pg_row[3], "3");
  EXPECT_EQ(pg_row[5], "default");

  // The spec round-trips: plugins env and svc, the policies, the multi-line commands.
  auto docs = example_docs("tensorflow-job.yaml");
  ASSERT_EQ(docs.size(), 1u);
  auto shown = ctl_json({"get", "job", "tensorflow-dist-mnist"});
  EXPECT_EQ(shown.at("spec").at("plugins"), docs[0].at("spec").at("plugins"));
  EXPECT_EQ(shown.at("spec").at("policies"), docs[0].at("spec").at("policies"));
  EXPECT_EQ(shown.at("metadata").at("labels"), docs[0].at("metadata").at("labels"));
  for (std::size_t t = 0; t < 2; ++t)
    EXPECT_EQ(shown.at("spec").at("tasks").at(t).at("template").at("spec").at("containers").at(0)
                  .at("command"),
              docs[0].at("spec").at("tasks").at(t).at("template").at("spec").at("containers")
                  .at(0).at("command"));

  // describe: the plugins, each task with its requests, the status and the PodGroup.
  auto desc = ctl({"describe", "job", "tensorflow-dist-mnist"});
  ASSERT_TRUE(succeeded(desc));
  EXPECT_EQ(described(desc.out, "Plugins"), "env, svc");
  EXPECT_EQ(described(desc.out, "Queue"), "default");
  EXPECT_EQ(described(desc.out, "Phase"), "Running");
  EXPECT_EQ(described(desc.out, "Task Status Count"), "ps: Running=1");
  EXPECT_NE(desc.out.find("worker: Running=2"), std::string::npos) << desc.out;
  auto worker_task = row_of(desc.out, "worker");
  EXPECT_EQ(worker_task, (std::vector<std::string>{"worker", "2", "<none>", "cpu=2,", "memory=4Gi,",
                                                   "nvidia.com/gpu=1"}))
      << desc.out;
  EXPECT_NE(desc.out.find("PodGroup:  " + group + " (Running)"), std::string::npos) << desc.out;

  // What get -o yaml shows applies back as "unchanged": the server kept every field.
  auto yaml = ctl({"get", "job", "tensorflow-dist-mnist", "-o", "yaml"});
  ASSERT_TRUE(succeeded(yaml));
  ctl_options from_stdin;
  from_stdin.input = yaml.out;
  auto again = ctl({"apply", "-f", "-"}, from_stdin);
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(again.out, "job.batch.volcano.sh/tensorflow-dist-mnist unchanged\n");
}

TEST_F(CliExamples, MpiJobRunsMasterAndWorkersAsOneGang) {
  auto r = ctl({"apply", "-f", example("mpi-job.yaml")});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "job.batch.volcano.sh/lm-mpi-job created\n");
  expect_job_running(*d_, "lm-mpi-job", 4);

  auto pods = ctl({"get", "pods", "-l", "volcano.sh/job-name=lm-mpi-job", "-o", "wide"});
  ASSERT_TRUE(succeeded(pods));
  for (const char* name : {"lm-mpi-job-mpimaster-0", "lm-mpi-job-mpiworker-0",
                           "lm-mpi-job-mpiworker-1", "lm-mpi-job-mpiworker-2"}) {
    auto row = row_of(pods.out, name);
    ASSERT_EQ(row.size(), 8u) << name << "\n" << pods.out;
    EXPECT_EQ(row[1], "1/1");
    EXPECT_EQ(row[2], "Running");
    EXPECT_NE(row[5], "<none>") << name << " is not bound";
  }
  auto jobs = ctl({"job", "list"});
  ASSERT_TRUE(succeeded(jobs));
  auto row = row_of(jobs.out, "lm-mpi-job");
  ASSERT_EQ(row.size(), 12u) << jobs.out;
  EXPECT_EQ(row[2], "Running");
  EXPECT_EQ(row[4], "4");   // Replicas.
  EXPECT_EQ(row[5], "4");   // Min.
  EXPECT_EQ(row[7], "4");   // Running.
  auto wide = ctl({"get", "jobs", "-o", "wide", "-A"});
  ASSERT_TRUE(succeeded(wide));
  EXPECT_EQ(cells(split_lines(wide.out).at(0)).back(), "AGE");
  auto wide_row = row_of(wide.out, "lm-mpi-job", 1);
  ASSERT_EQ(wide_row.size(), 15u) << wide.out;
  EXPECT_EQ(wide_row[0], "default");   // NAMESPACE with -A.
  EXPECT_EQ(wide_row[13], "default");  // QUEUE.

  auto docs = example_docs("mpi-job.yaml");
  ASSERT_EQ(docs.size(), 1u);
  auto shown = ctl_json({"get", "vcjob", "lm-mpi-job"});
  EXPECT_EQ(shown.at("spec").at("plugins"), docs[0].at("spec").at("plugins"));
  EXPECT_EQ(shown.at("spec").at("maxRetry"), docs[0].at("spec").at("maxRetry"));
  EXPECT_EQ(shown.at("spec").at("tasks").at(0).at("policies"),
            docs[0].at("spec").at("tasks").at(0).at("policies"));

  auto desc = ctl({"describe", "vcjob", "lm-mpi-job"});
  ASSERT_TRUE(succeeded(desc));
  EXPECT_EQ(described(desc.out, "Plugins"), "ssh, svc");
  EXPECT_EQ(described(desc.out, "Max Retry"), "2");
  EXPECT_EQ(row_of(desc.out, "mpimaster"),
            (std::vector<std::string>{"mpimaster", "1", "<none>", "cpu=500m,", "memory=512Mi"}));
  EXPECT_EQ(desc.out.find("Pending Reason"), std::string::npos) << "a running job waits for nothing";
}

// The MPI seed's plugins as its comment promises: its pods have host names under the job's
// Service, the host list mounted at /etc/volcano (the launcher's command reads
// mpiworker.host) and the ssh keys at /root/.ssh; describe lists the objects its plugins make,
// and the job's status names them, as Volcano's does.
TEST_F(CliExamples, TheMpiSeedsPluginsGiveItsPodsHostListsAndKeys) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("mpi-job.yaml")})));
  expect_job_running(*d_, "lm-mpi-job", 4);
  auto pod = ctl_json({"get", "pod", "lm-mpi-job-mpiworker-1"});
  const auto& spec = pod.at("spec");
  EXPECT_EQ(spec.at("hostname"), "lm-mpi-job-mpiworker-1");
  EXPECT_EQ(spec.at("subdomain"), "lm-mpi-job");
  std::vector<std::string> volumes;
  for (const auto& v : spec.at("volumes").as_array())
    volumes.push_back(std::string(v.at("name").as_string()));
  EXPECT_EQ(volumes, (std::vector<std::string>{"lm-mpi-job-ssh", "lm-mpi-job-svc"}));
  std::vector<std::string> mounts;
  for (const auto& m : spec.at("containers").at(0).at("volumeMounts").as_array())
    mounts.push_back(std::string(m.at("mountPath").as_string()));
  EXPECT_EQ(mounts, (std::vector<std::string>{"/root/.ssh", "/etc/volcano"}));

  auto desc = ctl({"describe", "vcjob", "lm-mpi-job"});
  ASSERT_TRUE(succeeded(desc));
  EXPECT_NE(desc.out.find("mpiworker.host=lm-mpi-job-mpiworker-0.lm-mpi-job "
                          "lm-mpi-job-mpiworker-1.lm-mpi-job lm-mpi-job-mpiworker-2.lm-mpi-job"),
            std::string::npos)
      << desc.out;
  EXPECT_EQ(described(desc.out, "Service lm-mpi-job"),
            "headless, selects volcano.sh/job-name=lm-mpi-job, volcano.sh/job-namespace=default");
  EXPECT_EQ(described(desc.out, "Secret lm-mpi-job-ssh"),
            "id_rsa, id_rsa.pub, authorized_keys, config mounted at /root/.ssh");
  auto job = ctl_json({"get", "vcjob", "lm-mpi-job"});
  EXPECT_EQ(job.at("status").at("controlledResources"),
            boost::json::parse(R"({"plugin-ssh":"ssh","plugin-svc":"svc"})"));
}

// The issue's report, with the seeds as written: the TensorFlow job says `PodEvicted:
// RestartJob`, so a worker deleted restarts the whole job (retry count 1, every pod made again);
// the MPI job has no such policy, so its deleted worker is only made again under its name.
TEST_F(CliExamples, TheSeedsJobsRecoverFromADeletedPodAsTheirManifestsSay) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("tensorflow-job.yaml")})));
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("mpi-job.yaml")})));
  expect_job_running(*d_, "tensorflow-dist-mnist", 3);
  expect_job_running(*d_, "lm-mpi-job", 4);
  auto uid_of = [&](const std::string& pod) {
    return field(d_->get_json("/api/v1/namespaces/default/pods/" + pod), {"metadata", "uid"});
  };
  const auto ps_uid = uid_of("tensorflow-dist-mnist-ps-0");
  const auto master_uid = uid_of("lm-mpi-job-mpimaster-0");
  const auto worker_uid = uid_of("lm-mpi-job-mpiworker-1");
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "tensorflow-dist-mnist-worker-1"})));
  ASSERT_TRUE(succeeded(ctl({"delete", "pod", "lm-mpi-job-mpiworker-1"})));

  ASSERT_TRUE(eventually([&] {
    auto j = d_->get_json(job_path("tensorflow-dist-mnist"));
    return field(j, {"status", "retryCount"}) == "1" &&
           field(j, {"status", "state", "phase"}) == "Running" &&
           field(j, {"status", "running"}) == "3";
  })) << ctl({"describe", "vcjob", "tensorflow-dist-mnist"}).out;
  EXPECT_NE(uid_of("tensorflow-dist-mnist-ps-0"), ps_uid) << "a restart makes every pod again";
  auto desc = ctl({"describe", "vcjob", "tensorflow-dist-mnist"});
  EXPECT_EQ(described(desc.out, "Retry Count"), "1");
  EXPECT_NE(desc.out.find("pod tensorflow-dist-mnist-worker-1 evicted: RestartJob (1 of 2 retries)"),
            std::string::npos)
      << desc.out;

  expect_job_running(*d_, "lm-mpi-job", 4);
  EXPECT_NE(uid_of("lm-mpi-job-mpiworker-1"), worker_uid) << "made again";
  EXPECT_EQ(uid_of("lm-mpi-job-mpimaster-0"), master_uid) << "nothing else touched";
  EXPECT_EQ(field(d_->get_json(job_path("lm-mpi-job")), {"status", "retryCount"}), "");
}

TEST_F(CliExamples, QueuesKeepWeightsCapabilityAndGuarantee) {
  auto r = ctl({"apply", "-f", example("queues.yaml")});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/research created\n"
                   "queue.scheduling.volcano.sh/production created\n");
  // vcctl's columns: Name Weight State Parent Inqueue Pending Running Unknown Completed.
  auto table = ctl({"get", "queues"});
  ASSERT_TRUE(succeeded(table));
  EXPECT_EQ(cells(split_lines(table.out).at(0)),
            (std::vector<std::string>{"NAME", "WEIGHT", "STATE", "PARENT", "INQUEUE", "PENDING",
                                      "RUNNING", "UNKNOWN", "COMPLETED"}));
  EXPECT_EQ(row_of(table.out, "research"),
            (std::vector<std::string>{"research", "2", "Open", "root", "0", "0", "0", "0", "0"}));
  EXPECT_EQ(row_of(table.out, "production"),
            (std::vector<std::string>{"production", "1", "Open", "root", "0", "0", "0", "0", "0"}));
  EXPECT_FALSE(row_of(table.out, "default").empty()) << "the default queue exists from the start";

  auto research = ctl_json({"get", "queue", "research"});
  EXPECT_EQ(field(research, {"spec", "capability", "cpu"}), "64");
  EXPECT_EQ(field(research, {"spec", "capability", "memory"}), "256Gi");
  EXPECT_EQ(field(research, {"spec", "capability", "nvidia.com/gpu"}), "8");
  EXPECT_EQ(field(research, {"spec", "reclaimable"}), "true");
  auto production = ctl_json({"get", "q", "production"});
  EXPECT_EQ(field(production, {"spec", "guarantee", "resource", "cpu"}), "8");
  EXPECT_EQ(field(production, {"spec", "guarantee", "resource", "memory"}), "32Gi");
  EXPECT_EQ(field(production, {"spec", "reclaimable"}), "false");

  auto wide = ctl({"queue", "list", "-o", "wide"});
  ASSERT_TRUE(succeeded(wide));
  auto row = row_of(wide.out, "research");
  ASSERT_EQ(row.size(), 13u) << wide.out;
  EXPECT_EQ(row[11], "cpu=64,memory=256Gi,nvidia.com/gpu=8");
  // Fair share floors production's deserved at its guarantee.
  EXPECT_EQ(row_of(wide.out, "production").at(10), "cpu=8,memory=32Gi");

  auto desc = ctl({"describe", "queue", "production"});
  ASSERT_TRUE(succeeded(desc));
  EXPECT_EQ(described(desc.out, "Guarantee"), "cpu=8, memory=32Gi");
  EXPECT_EQ(described(desc.out, "Capability"), "cpu=32, memory=128Gi");
  EXPECT_EQ(described(desc.out, "Reclaimable"), "false");
  EXPECT_EQ(described(desc.out, "Weight"), "1");

  // Applying the same file again changes nothing and says so.
  auto again = ctl({"apply", "-f", example("queues.yaml")});
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(again.out, "queue.scheduling.volcano.sh/research unchanged\n"
                       "queue.scheduling.volcano.sh/production unchanged\n");
}

// examples/podgroup.yaml brings the PriorityClass its PodGroup names: it applies on a phalanxd
// started without a config file, and a PodGroup naming a class nobody made is refused, naming
// the field.
TEST_F(CliExamples, PodGroupExampleBringsItsPriorityClass) {
  auto r = ctl({"apply", "-f", example("queues.yaml"), "-f", example("podgroup.yaml")});
  ASSERT_TRUE(succeeded(r)) << r.err;
  EXPECT_NE(r.out.find("priorityclass.scheduling.k8s.io/high-priority created\n"
                       "podgroup.scheduling.volcano.sh/resnet-gang created\n"),
            std::string::npos)
      << r.out;
  auto classes = ctl({"get", "priorityclasses"});
  ASSERT_TRUE(succeeded(classes));
  auto high = row_of(classes.out, "high-priority");
  ASSERT_EQ(high.size(), 5u) << classes.out;  // NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY
  EXPECT_EQ(high[1], "1000");
  EXPECT_EQ(high[2], "false");
  EXPECT_EQ(high[4], "PreemptLowerPriority");
  EXPECT_EQ(row_of(classes.out, "system-node-critical").at(1), "2000001000") << classes.out;
  auto typo = ctl({"apply", "-f", "-"},
                  with_input(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup",
                    "metadata":{"name":"typo","namespace":"default"},
                    "spec":{"minMember":1,"priorityClassName":"hihg-priority"}})"));
  EXPECT_TRUE(failed_with(typo, 1));
  EXPECT_NE(typo.err.find("spec.priorityClassName: Not found: \"hihg-priority\""),
            std::string::npos)
      << typo.err;
}

using CliPodGroupExample = CliExamples;

TEST_F(CliPodGroupExample, GangWaitsForMinTaskMemberThenRunsOnGpuNodes) {
  auto r = ctl({"apply", "-f", example("queues.yaml"), "-f", example("podgroup.yaml"), "-f",
                example("gang-pods.yaml")});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "queue.scheduling.volcano.sh/research created\n"
                   "queue.scheduling.volcano.sh/production created\n"
                   "priorityclass.scheduling.k8s.io/high-priority created\n"
                   "podgroup.scheduling.volcano.sh/resnet-gang created\n"
                   "pod/resnet-ps-0 created\n"
                   "pod/resnet-worker-0 created\n");
  auto pg = ctl_json({"get", "podgroup", "resnet-gang"});
  EXPECT_EQ(field(pg, {"spec", "minMember"}), "4");
  EXPECT_EQ(field(pg, {"spec", "minTaskMember", "ps"}), "1");
  EXPECT_EQ(field(pg, {"spec", "minTaskMember", "worker"}), "3");
  EXPECT_EQ(field(pg, {"spec", "minResources", "nvidia.com/gpu"}), "3");

  // Two of four pods exist: the gang waits for the other two (it asks for no placeholders).
  auto first = ctl({"describe", "pg", "resnet-gang"});
  ASSERT_TRUE(succeeded(first));
  EXPECT_EQ(described(first.out, "Queue"), "research");
  EXPECT_EQ(described(first.out, "Min Task Member"), "ps=1, worker=3");
  EXPECT_EQ(described(first.out, "Min Resources"), "cpu=7, memory=14Gi, nvidia.com/gpu=3");
  EXPECT_EQ(described(first.out, "Priority Class Name"), "high-priority");
  auto pod_desc = ctl({"describe", "pod", "resnet-worker-0"});
  EXPECT_EQ(described(pod_desc.out, "Node-Selectors"), "accelerator=nvidia-a100");
  EXPECT_EQ(described(pod_desc.out, "Tolerations"), "nvidia.com/gpu op=Exists:NoSchedule");
  EXPECT_EQ(described(pod_desc.out, "PodGroup"), "resnet-gang");
  EXPECT_EQ(described(pod_desc.out, "Task"), "worker");

  // Two more workers, made from the example's worker, one after the other: with the first the
  // gang still waits for one (TwoWorkersCreatedBackToBackBothRun creates them together); the
  // second brings it, and all four are bound.
  auto docs = example_docs("gang-pods.yaml");
  ASSERT_EQ(docs.size(), 2u);
  for (int i = 1; i <= 2; ++i) {
    std::string name = "resnet-worker-" + std::to_string(i);
    auto w = docs[1];
    w.at("metadata").as_object()["name"] = name;
    auto added = ctl({"apply", "-f", "-"}, with_input(json::serialize(w)));
    ASSERT_TRUE(succeeded(added));
    EXPECT_EQ(added.out, "pod/" + name + " created\n");
    if (i == 1) {
      ASSERT_TRUE(eventually([&] {
        return ctl({"describe", "pg", "resnet-gang"}).out.find("waiting for 1 more pod(s)") !=
               std::string::npos;
      })) << ctl({"describe", "pg", "resnet-gang"}).out;
      EXPECT_EQ(field(object("/api/v1/namespaces/default/pods/" + name), {"spec", "nodeName"}),
                "");
    }
  }
  for (const char* name : {"resnet-ps-0", "resnet-worker-0", "resnet-worker-1", "resnet-worker-2"})
    ASSERT_TRUE(eventually([&] {
      return !field(object(std::string("/api/v1/namespaces/default/pods/") + name),
                    {"spec", "nodeName"})
                  .empty();
    })) << name << "\n" << ctl({"describe", "pg", "resnet-gang"}).out;
  ASSERT_TRUE(eventually([&] {
    return field(object("/apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups/"
                        "resnet-gang"),
                 {"status", "phase"}) == "Running";
  }));
  auto table = ctl({"get", "pg"});
  EXPECT_EQ(row_of(table.out, "resnet-gang").at(1), "Running");
  EXPECT_EQ(row_of(table.out, "resnet-gang").at(2), "4");
  ASSERT_TRUE(eventually([&] {
    return row_of(ctl({"get", "pg"}).out, "resnet-gang").at(3) == "4";  // RUNNINGS.
  })) << ctl({"describe", "pg", "resnet-gang"}).out;
  auto pods = ctl_json({"get", "pods"});
  ASSERT_EQ(pods.at("items").as_array().size(), 4u);
  for (const auto& p : pods.at("items").as_array()) {
    std::string name = field(p, {"metadata", "name"});
    EXPECT_EQ(field(p, {"status", "phase"}), "Running") << name;
    if (name.find("worker") != std::string::npos) {  // nodeSelector accelerator=nvidia-a100.
      EXPECT_EQ(field(p, {"spec", "nodeName"}).rfind("gpu-", 0), 0u) << name;
    } else {
      EXPECT_FALSE(field(p, {"spec", "nodeName"}).empty()) << name;
    }
  }
  // The queue accounts the gang.
  auto q = ctl({"get", "queue", "research"});
  EXPECT_EQ(row_of(q.out, "research").at(6), "1") << q.out;  // RUNNING PodGroups.
}

// The same gang with its two missing workers created back to back (one apply, two POSTs): the
// second arrives while the first takes over a placeholder, and must take over the other one.
TEST_F(CliPodGroupExample, TwoWorkersCreatedBackToBackBothRun) {
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", example("queues.yaml"), "-f", example("podgroup.yaml"),
                             "-f", example("gang-pods.yaml")})));
  auto docs = example_docs("gang-pods.yaml");
  ASSERT_EQ(docs.size(), 2u);
  std::string more = "[";
  for (int i = 1; i <= 2; ++i) {
    auto w = docs[1];
    w.at("metadata").as_object()["name"] = "resnet-worker-" + std::to_string(i);
    more += (i > 1 ? "," : "") + json::serialize(w);
  }
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", "-"}, with_input(more + "]"))));
  EXPECT_TRUE(eventually(
      [&] { return row_of(ctl({"get", "pg"}).out, "resnet-gang").at(3) == "4"; },
      std::chrono::seconds(10)))
      << ctl({"describe", "pg", "resnet-gang"}).out;
}

TEST_F(CliExamples, NodesExampleAddsNodesAndCordonedOneShowsSchedulingDisabled) {
  auto r = ctl({"apply", "-f", example("nodes.yaml")});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(r.out, "node/cpu-node-1 created\nnode/gpu-node-1 created\nnode/cpu-node-2 created\n");
  auto nodes = ctl({"get", "nodes", "-o", "wide"});
  ASSERT_TRUE(succeeded(nodes));
  auto n1 = row_of(nodes.out, "cpu-node-1");
  ASSERT_EQ(n1.size(), 9u) << nodes.out;
  EXPECT_EQ(n1[1], "Ready");
  EXPECT_EQ(n1[2], "worker");  // node-role.kubernetes.io/worker.
  EXPECT_EQ(n1[4], "0/31500m");
  EXPECT_EQ(n1[5], "0/125Gi");
  auto g1 = row_of(nodes.out, "gpu-node-1");
  EXPECT_EQ(g1[6], "0/8");
  EXPECT_EQ(g1[8], "nvidia.com/gpu=present:NoSchedule");
  EXPECT_EQ(row_of(nodes.out, "cpu-node-2").at(1), "Ready,SchedulingDisabled");
  // Again: nothing to change.
  auto again = ctl({"apply", "-f", example("nodes.yaml")});
  ASSERT_TRUE(succeeded(again));
  EXPECT_EQ(again.out,
            "node/cpu-node-1 unchanged\nnode/gpu-node-1 unchanged\nnode/cpu-node-2 unchanged\n");
}

} // namespace
} // namespace phalanx::cli_test
