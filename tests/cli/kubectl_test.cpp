// The real kubectl (1.32, on the machine at /usr/bin/kubectl) against the real phalanxd in
// standalone mode: create -f of a Volcano Job, and get of every kind with -o wide and -o yaml.
// (api/tests/kubectl_test.cpp covers more of kubectl against the server over a fake service.)

#include "tests/cli/harness.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <iterator>

namespace phalanx::cli_test {
namespace {

using namespace std::chrono_literals;

class KubectlAgainstPhalanxd : public kubectl_daemon_test {
 protected:

  // kubectl left running (a watch), read line by line.
  std::unique_ptr<ctl_process> kubectl_process(std::vector<std::string> args) {
    ctl_options o;
    o.program = "/usr/bin/kubectl";
    o.env = {{"KUBECONFIG", kubeconfig_}, {"HOME", home_.path()}};
    std::vector<std::string> argv = {"--server", d_->url(), "--cache-dir", home_.path() + "/cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ctl_process::start(argv, o);
  }

  // A pod of 100m cpu that takes `stop_after` to stop when deleted gracefully.
  std::string pod_manifest(const std::string& name, const std::string& stop_after) {
    return home_.write(name + ".yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
                                           "\n  annotations:\n    sim.phalanx.io/stop-after: " +
                                           stop_after +
                                           "\nspec:\n  containers:\n  - name: c\n    image: x\n"
                                           "    resources:\n      requests:\n        cpu: 100m\n");
  }
};

TEST_F(KubectlAgainstPhalanxd, CreatesAVolcanoJobAndShowsEveryKind) {
  auto created = kubectl({"create", "-f", example("tensorflow-job.yaml")});
  ASSERT_TRUE(succeeded(created));
  EXPECT_EQ(created.out, "job.batch.volcano.sh/tensorflow-dist-mnist created\n");

  // The gang runs: three pods Running on nodes, as kubectl shows them.
  ASSERT_TRUE(eventually([&] {
    auto pods = kubectl({"get", "pods", "-o", "wide"});
    int running = 0;
    for (const auto& line : split_lines(pods.out))
      if (line.find("tensorflow-dist-mnist-") == 0 && line.find("Running") != std::string::npos)
        ++running;
    return running == 3;
  })) << kubectl({"get", "pods", "-o", "wide"}).out;

  auto jobs = kubectl({"get", "vcjob"});
  ASSERT_TRUE(succeeded(jobs));
  EXPECT_FALSE(row_of(jobs.out, "tensorflow-dist-mnist").empty()) << jobs.out;
  auto groups = kubectl({"get", "podgroups", "-o", "wide"});
  ASSERT_TRUE(succeeded(groups));
  EXPECT_NE(groups.out.find("tensorflow-dist-mnist-"), std::string::npos) << groups.out;
  EXPECT_NE(groups.out.find("Running"), std::string::npos) << groups.out;
  auto queues = kubectl({"get", "queues"});
  ASSERT_TRUE(succeeded(queues));
  EXPECT_FALSE(row_of(queues.out, "default").empty()) << queues.out;
  auto nodes = kubectl({"get", "nodes", "-o", "wide"});
  ASSERT_TRUE(succeeded(nodes));
  EXPECT_FALSE(row_of(nodes.out, "gpu-0").empty()) << nodes.out;

  auto yaml = kubectl({"get", "pod", "tensorflow-dist-mnist-ps-0", "-o", "yaml"});
  ASSERT_TRUE(succeeded(yaml));
  EXPECT_NE(yaml.out.find("nodeName: "), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("phase: Running"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("scheduling.k8s.io/group-name: tensorflow-dist-mnist-"),
            std::string::npos)
      << yaml.out;

  auto missing = kubectl({"get", "pod", "nope"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("\"nope\" not found"), std::string::npos) << missing.err;
}

// What users change with kubectl, with its default validation (no --validate=false): label and
// taint a node, apply a changed manifest, edit in $EDITOR, replace, label a pending pod. Each
// answer is kubectl's usual line, and the change is what GET shows afterwards.
TEST_F(KubectlAgainstPhalanxd, LabelsTaintsAppliesEditsAndReplaces) {
  auto labelled = kubectl({"label", "node", "cpu-a-0", "disk=ssd"});
  ASSERT_TRUE(succeeded(labelled));
  EXPECT_EQ(labelled.out, "node/cpu-a-0 labeled\n");
  auto tainted = kubectl({"taint", "node", "cpu-a-0", "dedicated=infra:NoSchedule"});
  ASSERT_TRUE(succeeded(tainted));
  EXPECT_EQ(tainted.out, "node/cpu-a-0 tainted\n");
  auto shown = kubectl({"get", "node", "cpu-a-0", "-o",
                        "jsonpath={.metadata.labels.disk} {.spec.taints[0].key}="
                        "{.spec.taints[0].value}:{.spec.taints[0].effect}"});
  ASSERT_TRUE(succeeded(shown));
  EXPECT_EQ(shown.out, "ssd dedicated=infra:NoSchedule");
  auto untainted = kubectl({"taint", "node", "cpu-a-0", "dedicated=infra:NoSchedule-"});
  ASSERT_TRUE(succeeded(untainted));
  EXPECT_EQ(untainted.out, "node/cpu-a-0 untainted\n");
  auto unlabelled = kubectl({"label", "node", "cpu-a-0", "disk-"});
  ASSERT_TRUE(succeeded(unlabelled));
  shown = kubectl({"get", "node", "cpu-a-0", "-o", "jsonpath={.metadata.labels.disk}|{.spec.taints}"});
  EXPECT_EQ(shown.out, "|");

  // apply, then apply of the manifest changed.
  auto queue = [](int weight) {
    return "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata:\n  name: team\n"
           "spec:\n  weight: " + std::to_string(weight) + "\n  reclaimable: true\n";
  };
  auto applied = kubectl({"apply", "-f", home_.write("team.yaml", queue(2))});
  ASSERT_TRUE(succeeded(applied));
  EXPECT_EQ(applied.out, "queue.scheduling.volcano.sh/team created\n");
  applied = kubectl({"apply", "-f", home_.write("team.yaml", queue(5))});
  ASSERT_TRUE(succeeded(applied));
  EXPECT_EQ(applied.out, "queue.scheduling.volcano.sh/team configured\n");
  auto weight = [&] {
    return kubectl({"get", "queue", "team", "-o", "jsonpath={.spec.weight}"}).out;
  };
  EXPECT_EQ(weight(), "5");

  // edit, with an editor that changes the weight.
  ctl_options edit_options;
  edit_options.program = "/usr/bin/kubectl";
  edit_options.env = {{"KUBECONFIG", kubeconfig_},
                      {"HOME", home_.path()},
                      {"KUBE_EDITOR", home_.write("editor.sh",
                                                  "#!/bin/sh\nsed -i 's/weight: 5/weight: 6/' \"$1\"\n")}};
  ASSERT_EQ(::chmod((home_.path() + "/editor.sh").c_str(), 0755), 0);
  auto edited = run_ctl({"--server", d_->url(), "--cache-dir", home_.path() + "/cache", "edit",
                         "queue", "team"},
                        edit_options);
  ASSERT_TRUE(succeeded(edited)) << edited.err;
  EXPECT_EQ(edited.out, "queue.scheduling.volcano.sh/team edited\n");
  EXPECT_EQ(weight(), "6");

  // diff and apply --dry-run=server (dryRun=All): what would change, and nothing changed.
  auto diff = kubectl({"diff", "-f", home_.write("team.yaml", queue(8))});
  EXPECT_EQ(diff.exit_code, 1) << diff.err;  // 1: there are differences.
  EXPECT_NE(diff.out.find("-  weight: 6"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("+  weight: 8"), std::string::npos) << diff.out;
  auto dry = kubectl({"apply", "--dry-run=server", "-f", home_.path() + "/team.yaml"});
  ASSERT_TRUE(succeeded(dry));
  EXPECT_EQ(dry.out, "queue.scheduling.volcano.sh/team configured (server dry run)\n");
  EXPECT_EQ(weight(), "6");

  // replace of a node's manifest: its spec as written, what the server set kept.
  auto replaced = kubectl(
      {"replace", "-f",
       home_.write("node.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: cpu-b-1\n  "
                                "labels: {zone: b, rack: r7}\nspec:\n  unschedulable: true\n")});
  ASSERT_TRUE(succeeded(replaced));
  EXPECT_EQ(replaced.out, "node/cpu-b-1 replaced\n");
  shown = kubectl({"get", "node", "cpu-b-1", "-o",
                   "jsonpath={.metadata.labels.rack} {.spec.unschedulable}"});
  EXPECT_EQ(shown.out, "r7 true");

  // A pending pod's label (a pod no node can hold stays pending).
  ASSERT_TRUE(succeeded(kubectl(
      {"create", "-f",
       home_.write("big.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n  "
                               "containers:\n  - name: c\n    resources:\n      requests:\n"
                               "        cpu: \"1000\"\n")})));
  auto pod_labelled = kubectl({"label", "pod", "big", "tier=batch"});
  ASSERT_TRUE(succeeded(pod_labelled));
  EXPECT_EQ(pod_labelled.out, "pod/big labeled\n");
  EXPECT_EQ(kubectl({"get", "pod", "big", "-o", "jsonpath={.metadata.labels.tier}"}).out, "batch");

  // kubectl's default validation is the server's (fieldValidation=Strict): a misspelt field
  // is refused, and --validate=warn lets it through with a warning.
  auto typo = home_.write("typo.yaml", "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                                       "metadata:\n  name: typo\nspec:\n  wieght: 3\n");
  auto strict = kubectl({"apply", "-f", typo});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("strict decoding error: unknown field \"spec.wieght\""),
            std::string::npos)
      << strict.err;
  auto warned = kubectl({"apply", "--validate=warn", "-f", typo});
  ASSERT_TRUE(succeeded(warned));
  EXPECT_NE(warned.err.find("Warning: unknown field \"spec.wieght\""), std::string::npos)
      << warned.err;

  // What may not change is refused with the field named.
  auto moved = kubectl({"patch", "pod", "big", "--type=merge", "-p",
                        R"({"spec":{"containers":[{"name":"c","image":"other"}]}})"});
  EXPECT_EQ(moved.exit_code, 1);
  EXPECT_NE(moved.err.find("spec: Forbidden: pod updates may not change fields other than"),
            std::string::npos)
      << moved.err;
}

// PriorityClasses as kubectl handles them: `create priorityclass` (its own generator), get with
// kubectl's columns, apply of a changed manifest (a strategic merge patch), the apiserver's 403s
// for a second default and a system class's deletion, 422 for a changed value, and a delete's
// server-side dry run.
TEST_F(KubectlAgainstPhalanxd, CreatesChangesAndDeletesPriorityClasses) {
  auto created = kubectl({"create", "priorityclass", "batch-low", "--value=10",
                          "--description=below the rest"});
  ASSERT_TRUE(succeeded(created)) << created.err;
  EXPECT_EQ(created.out, "priorityclass.scheduling.k8s.io/batch-low created\n");
  auto table = kubectl({"get", "pc"});
  ASSERT_TRUE(succeeded(table)) << table.err;
  auto row = row_of(table.out, "batch-low");
  ASSERT_EQ(row.size(), 5u) << table.out;
  EXPECT_EQ(row[1], "10");
  EXPECT_EQ(row[2], "false");
  EXPECT_EQ(row[4], "PreemptLowerPriority");
  EXPECT_FALSE(row_of(table.out, "system-cluster-critical").empty()) << table.out;

  auto manifest = home_.write("everyday.yaml", R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: everyday
value: 50
globalDefault: true
)");
  auto applied = kubectl({"apply", "-f", manifest});
  ASSERT_TRUE(succeeded(applied)) << applied.err;
  EXPECT_EQ(applied.out, "priorityclass.scheduling.k8s.io/everyday created\n");
  auto changed = home_.write("everyday.yaml", R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: everyday
value: 50
globalDefault: true
description: most work
)");
  applied = kubectl({"apply", "-f", changed});
  ASSERT_TRUE(succeeded(applied)) << applied.err;
  EXPECT_EQ(applied.out, "priorityclass.scheduling.k8s.io/everyday configured\n");
  auto yaml = kubectl({"get", "pc", "everyday", "-o", "yaml"});
  EXPECT_NE(yaml.out.find("description: most work"), std::string::npos) << yaml.out;

  auto second = kubectl({"create", "priorityclass", "another", "--value=60", "--global-default"});
  EXPECT_EQ(second.exit_code, 1);
  // kubectl's words for a `create <generator>` the server refused, then the apiserver's.
  EXPECT_NE(second.err.find("error: failed to create priorityclass: "
                            "priorityclasses.scheduling.k8s.io \"another\" is forbidden: "
                            "PriorityClass everyday is already marked as default. Only one "
                            "default can exist"),
            std::string::npos)
      << second.err;
  auto revalued = kubectl({"patch", "pc", "batch-low", "--type=merge", "-p", R"({"value":11})"});
  EXPECT_EQ(revalued.exit_code, 1);
  EXPECT_NE(revalued.err.find("value: Forbidden: may not be changed in an update."),
            std::string::npos)
      << revalued.err;
  auto system = kubectl({"delete", "pc", "system-node-critical"});
  EXPECT_EQ(system.exit_code, 1);
  EXPECT_NE(system.err.find("this is a system priority class and cannot be deleted"),
            std::string::npos)
      << system.err;
  // A delete's server-side dry run: kubectl's answer, and the class still there.
  auto dry = kubectl({"delete", "pc", "batch-low", "--dry-run=server"});
  ASSERT_TRUE(succeeded(dry)) << dry.err;
  EXPECT_EQ(dry.out, "priorityclass.scheduling.k8s.io \"batch-low\" deleted (server dry run)\n");
  EXPECT_TRUE(succeeded(kubectl({"get", "pc", "batch-low"})));
  auto deleted = kubectl({"delete", "pc", "batch-low"});
  ASSERT_TRUE(succeeded(deleted)) << deleted.err;
  EXPECT_EQ(deleted.out, "priorityclass.scheduling.k8s.io \"batch-low\" deleted\n");
}

// Graceful deletion as kubectl does it: `delete` waits until the pod is gone (a watch on its
// name), `--wait=false` leaves it Terminating with its grace period, and `--grace-period=0
// --force` removes it at once. phalanxctl's --grace-period and --force send the same.
TEST_F(KubectlAgainstPhalanxd, DeletesPodsGracefullyAndByForce) {
  auto pod = [&](const std::string& name, const std::string& stop_after) {
    return pod_manifest(name, stop_after);
  };
  for (const auto& [name, stop] :
       {std::pair{"quick", "2s"}, {"slow", "1h"}, {"other", "1h"}, {"ctl-quick", "2s"}})
    ASSERT_TRUE(succeeded(kubectl({"create", "-f", pod(name, stop)})));
  ASSERT_TRUE(eventually([&] {
    auto out = kubectl({"get", "pods"}).out;
    for (const char* name : {"quick", "slow", "other", "ctl-quick"})
      if (row_of(out, name).size() <= 2 || row_of(out, name)[2] != "Running")
        return false;
    return true;
  })) << kubectl({"get", "pods"}).out;

  // kubectl waits for the pod to stop (2 s) and go.
  auto waited = kubectl({"delete", "pod", "quick"});
  ASSERT_TRUE(succeeded(waited)) << waited.err;
  EXPECT_EQ(waited.out, "pod \"quick\" deleted\n");
  EXPECT_EQ(kubectl({"get", "pod", "quick"}).exit_code, 1);

  auto left = kubectl({"delete", "pod", "slow", "--wait=false"});
  ASSERT_TRUE(succeeded(left)) << left.err;
  auto row = row_of(kubectl({"get", "pods"}).out, "slow");
  ASSERT_GT(row.size(), 2u);
  EXPECT_EQ(row[2], "Terminating");
  EXPECT_EQ(kubectl({"get", "pod", "slow", "-o", "jsonpath={.metadata.deletionGracePeriodSeconds}"})
                .out,
            "30");
  auto forced = kubectl({"delete", "pod", "slow", "--grace-period=0", "--force"});
  ASSERT_TRUE(succeeded(forced)) << forced.err;
  EXPECT_EQ(kubectl({"get", "pod", "slow"}).exit_code, 1);

  // phalanxctl waits as kubectl does, and says when it gave up.
  auto ctl_waited = ctl({"delete", "pod", "ctl-quick"});
  ASSERT_TRUE(succeeded(ctl_waited)) << ctl_waited.err;
  EXPECT_EQ(ctl_waited.out, "pod \"ctl-quick\" deleted\n");
  EXPECT_EQ(kubectl({"get", "pod", "ctl-quick"}).exit_code, 1);
  auto by_ctl = ctl({"delete", "pod", "other", "--grace-period=600", "--timeout=1s"});
  EXPECT_EQ(by_ctl.exit_code, 1);
  EXPECT_EQ(by_ctl.out, "pod \"other\" deleted\n");
  EXPECT_EQ(by_ctl.err, "error: timed out waiting for the condition on pods/other\n");
  auto listed = ctl({"get", "pods"});
  ASSERT_GT(row_of(listed.out, "other").size(), 2u) << listed.out;
  EXPECT_EQ(row_of(listed.out, "other")[2], "Terminating") << listed.out;
  EXPECT_NE(ctl({"describe", "pod", "other"}).out.find("grace period 600s"), std::string::npos);
  auto no_force = ctl({"delete", "pod", "other", "--grace-period=x"});
  EXPECT_NE(no_force.exit_code, 0);
  EXPECT_NE(no_force.err.find("--grace-period"), std::string::npos) << no_force.err;
  auto gone = ctl({"delete", "pod", "other", "--force"});
  ASSERT_TRUE(succeeded(gone)) << gone.err;
  EXPECT_NE(gone.out.find("Immediate deletion"), std::string::npos) << gone.out;
  EXPECT_EQ(kubectl({"get", "pod", "other"}).exit_code, 1);
}

// `kubectl label` and `annotate` of a running pod: the labels change, the pod runs on; then
// `kubectl describe node` of its node, and field selectors on a pod's phase.
TEST_F(KubectlAgainstPhalanxd, LabelsARunningPodAndDescribesItsNode) {
  ASSERT_TRUE(succeeded(kubectl({"create", "-f", pod_manifest("web", "1s")})));
  ASSERT_TRUE(eventually([&] {
    auto row = row_of(kubectl({"get", "pods"}).out, "web");
    return row.size() > 2 && row[2] == "Running";
  }));
  auto labelled = kubectl({"label", "pod", "web", "team=blue"});
  ASSERT_TRUE(succeeded(labelled)) << labelled.err;
  EXPECT_EQ(labelled.out, "pod/web labeled\n");
  auto annotated = kubectl({"annotate", "pod", "web", "owner=ops"});
  ASSERT_TRUE(succeeded(annotated)) << annotated.err;
  auto shown = kubectl({"get", "pods", "-l", "team=blue", "-o",
                        "jsonpath={.items[*].metadata.name} {.items[*].status.phase} "
                        "{.items[*].metadata.annotations.owner}"});
  EXPECT_EQ(shown.out, "web Running ops");
  auto unlabelled = kubectl({"label", "pod", "web", "team-"});
  ASSERT_TRUE(succeeded(unlabelled)) << unlabelled.err;
  EXPECT_EQ(kubectl({"get", "pods", "-l", "team=blue", "-o", "name"}).out, "");

  // kubectl describe node lists the node's pods with field selectors on spec.nodeName and
  // status.phase; --field-selector works for users too.
  auto node = kubectl({"get", "pod", "web", "-o", "jsonpath={.spec.nodeName}"}).out;
  ASSERT_FALSE(node.empty());
  auto described = kubectl({"describe", "node", node});
  ASSERT_TRUE(succeeded(described)) << described.err;
  EXPECT_NE(described.out.find("Non-terminated Pods:"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("web"), std::string::npos) << described.out;
  EXPECT_EQ(kubectl({"get", "pods", "--field-selector", "status.phase=Running", "-o", "name"}).out,
            "pod/web\n");
  EXPECT_EQ(kubectl({"get", "pods", "--field-selector", "status.phase!=Running", "-o", "name"}).out,
            "");
}

// A Volcano Job scaled as its users do it, with kubectl patch (JSON patch) and edit: the worker
// task goes to 3 replicas and the job makes the pod; what Volcano keeps is refused in its words.
// `kubectl explain` of Volcano's kinds (issue 30: "kubectl explain podgroup is NotFound"): the
// PodGroup, Queue and Job schemas in /openapi/v3, with what each field is; and an apply that
// changes a PodGroup still goes through with them served.
TEST_F(KubectlAgainstPhalanxd, ExplainsVolcanoKinds) {
  auto pg = kubectl({"explain", "podgroup"});
  ASSERT_TRUE(succeeded(pg)) << pg.err;
  EXPECT_NE(pg.out.find("KIND:       PodGroup"), std::string::npos) << pg.out;
  EXPECT_NE(pg.out.find("A gang: pods that start together or not at all."), std::string::npos)
      << pg.out;
  EXPECT_NE(pg.out.find("spec\t<PodGroupSpec>"), std::string::npos) << pg.out;
  auto field = kubectl({"explain", "podgroup.spec.minMember"});
  ASSERT_TRUE(succeeded(field)) << field.err;
  EXPECT_NE(field.out.find("FIELD: minMember <integer>"), std::string::npos) << field.out;
  EXPECT_NE(field.out.find("must be placed together"), std::string::npos) << field.out;
  auto queue = kubectl({"explain", "queue.spec"});
  ASSERT_TRUE(succeeded(queue)) << queue.err;
  EXPECT_NE(queue.out.find("reclaimable\t<boolean>"), std::string::npos) << queue.out;
  EXPECT_NE(queue.out.find("weight\t<integer>"), std::string::npos) << queue.out;
  auto job = kubectl({"explain", "vcjob.spec.tasks"});
  ASSERT_TRUE(succeeded(job)) << job.err;
  EXPECT_NE(job.out.find("KIND:       Job"), std::string::npos) << job.out;
  EXPECT_NE(job.out.find("minAvailable\t<integer>"), std::string::npos) << job.out;
  EXPECT_NE(job.out.find("template\t<PodTemplateSpec>"), std::string::npos) << job.out;
  auto plugins = kubectl({"explain", "vcjob.spec.plugins"});
  ASSERT_TRUE(succeeded(plugins)) << plugins.err;
  EXPECT_NE(plugins.out.find("<map[string][]string>"), std::string::npos) << plugins.out;

  ASSERT_TRUE(succeeded(kubectl({"apply", "-f", example("queues.yaml")})));
  ASSERT_TRUE(succeeded(kubectl({"apply", "-f", example("podgroup.yaml")})));
  std::ifstream in(example("podgroup.yaml"));
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto at = text.find("minMember: 4");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "minMember: 3");
  auto changed = kubectl({"apply", "-f", home_.write("pg.yaml", text)});
  ASSERT_TRUE(succeeded(changed)) << changed.err;
  EXPECT_NE(changed.out.find("podgroup.scheduling.volcano.sh/resnet-gang configured"),
            std::string::npos)
      << changed.out;
  EXPECT_EQ(kubectl({"get", "pg", "resnet-gang", "-o", "jsonpath={.spec.minMember}"}).out, "3");
}

// `kubectl explain` of Pods and Nodes (issue 30), from their schemas in /openapi/v3 and, with
// --output=plaintext-openapiv2, from /openapi/v2, which kubectl reads in protobuf; `get --raw
// /openapi/v2` is JSON. A misspelt key inside a pod's tolerations is refused by the server's
// strict field validation with kubectl's message, and only warned of with --validate=warn.
TEST_F(KubectlAgainstPhalanxd, ExplainsPodsAndNodesInBothOpenApiVersions) {
  auto resources = kubectl({"explain", "pod.spec.containers.resources"});
  ASSERT_TRUE(succeeded(resources)) << resources.err;
  EXPECT_NE(resources.out.find("FIELD: resources <ResourceRequirements>"), std::string::npos)
      << resources.out;
  EXPECT_NE(resources.out.find("  requests\t<map[string]string>\n    What the container needs"),
            std::string::npos)
      << resources.out;
  auto spec = kubectl({"explain", "node.spec"});
  ASSERT_TRUE(succeeded(spec)) << spec.err;
  EXPECT_NE(spec.out.find("KIND:       Node"), std::string::npos) << spec.out;
  EXPECT_NE(spec.out.find("  unschedulable\t<boolean>\n    Cordoned (kubectl cordon)"),
            std::string::npos)
      << spec.out;
  EXPECT_NE(spec.out.find("  taints\t<[]Taint>"), std::string::npos) << spec.out;
  // The objects inside a container that Phalanx checks but does not read.
  auto env = kubectl({"explain", "pod.spec.containers.env.valueFrom"});
  ASSERT_TRUE(succeeded(env)) << env.err;
  EXPECT_NE(env.out.find("  configMapKeyRef\t<KeySelector>\n    A key of a ConfigMap."),
            std::string::npos)
      << env.out;
  auto metadata = kubectl({"explain", "pod.metadata"});
  ASSERT_TRUE(succeeded(metadata)) << metadata.err;
  EXPECT_NE(metadata.out.find("scheduling.k8s.io/group-name"), std::string::npos)
      << metadata.out;

  // OpenAPI v2: kubectl asks for protobuf and reads the same schemas.
  auto v2 = kubectl({"explain", "--output=plaintext-openapiv2", "podgroup"});
  ASSERT_TRUE(succeeded(v2)) << v2.err;
  EXPECT_NE(v2.out.find("KIND:     PodGroup"), std::string::npos) << v2.out;
  EXPECT_NE(v2.out.find("A gang: pods that start together or not at all."), std::string::npos)
      << v2.out;
  auto v2_pod = kubectl({"explain", "--output=plaintext-openapiv2",
                         "pod.spec.tolerations.effect"});
  ASSERT_TRUE(succeeded(v2_pod)) << v2_pod.err;
  EXPECT_NE(v2_pod.out.find("FIELD:    effect <string>"), std::string::npos) << v2_pod.out;
  EXPECT_NE(v2_pod.out.find("NoSchedule, PreferNoSchedule or NoExecute"), std::string::npos)
      << v2_pod.out;
  auto raw = kubectl({"get", "--raw", "/openapi/v2"});
  ASSERT_TRUE(succeeded(raw)) << raw.err;
  auto doc = boost::json::parse(raw.out);
  EXPECT_EQ(field(doc, {"swagger"}), "2.0");
  EXPECT_EQ(field(doc, {"definitions", "io.k8s.api.core.v1.Pod", "properties", "spec", "$ref"}),
            "#/definitions/io.k8s.api.core.v1.PodSpec");

  auto pod = [&](const std::string& toleration) {
    return home_.write("tolerant.yaml",
                       "apiVersion: v1\nkind: Pod\nmetadata: {name: tolerant}\nspec:\n"
                       "  containers:\n  - {name: c, image: x}\n  tolerations:\n  - " +
                           toleration + "\n");
  };
  auto refused = kubectl({"apply", "-f", pod("{key: gpu, operator: Exists, efect: NoSchedule}")});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("Error from server (BadRequest): error when creating"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("strict decoding error: unknown field "
                             "\"spec.tolerations[0].efect\""),
            std::string::npos)
      << refused.err;
  auto warned = kubectl({"apply", "--validate=warn", "-f",
                         pod("{key: gpu, operator: Exists, efect: NoSchedule}")});
  ASSERT_TRUE(succeeded(warned)) << warned.err;
  EXPECT_NE(warned.err.find("Warning: unknown field \"spec.tolerations[0].efect\""),
            std::string::npos)
      << warned.err;
  EXPECT_EQ(warned.out, "pod/tolerant created\n");
}

// Lists in pages (issue 30), on the real registry: kubectl's --chunk-size over 5 pods lists each
// once in 3 requests (its -v=6 log shows limit and continue); a watch from the paged list sees
// what changes next; phalanxctl get pages too (--chunk-size, default 500: the server's request
// count tells); and a token once the server has dropped a change made after its first page (it
// keeps 16 here) is kube-apiserver's 410 Expired, whose own token lists the rest.
TEST_F(KubectlAgainstPhalanxd, ListsPodsInPagesAndWatchesFromThem) {
  d_ = daemon::start({"--config", home_.write("config.yaml", "watchHistory: 16\n")});
  auto pod = [](int i) {
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: p-" + std::to_string(i) +
           "}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {cpu: 10m}}}]\n";
  };
  ASSERT_TRUE(succeeded(kubectl(
      {"create", "-f", home_.write("pods.yaml", pod(0) + "---\n" + pod(1) + "---\n" + pod(2) +
                                                    "---\n" + pod(3) + "---\n" + pod(4))})));
  const std::string all = "pod/p-0\npod/p-1\npod/p-2\npod/p-3\npod/p-4\n";

  auto listed = kubectl({"get", "pods", "--chunk-size=2", "-o", "name", "-v=6"});
  ASSERT_TRUE(succeeded(listed)) << listed.err;
  EXPECT_EQ(listed.out, all);
  int requests = 0;
  int continued = 0;
  for (const auto& line : split_lines(listed.err)) {
    if (line.find("GET " + d_->url() + "/api/v1/namespaces/default/pods?") == std::string::npos)
      continue;
    ++requests;
    EXPECT_NE(line.find("limit=2"), std::string::npos) << line;
    continued += line.find("continue=") != std::string::npos;
  }
  EXPECT_EQ(requests, 3) << listed.err;
  EXPECT_EQ(continued, 2) << listed.err;

  // phalanxctl pages as kubectl: the LIST requests the server counted.
  api::http_client http(d_->client_options());
  auto lists = [&] {
    api::client_request r;
    r.target = "/metrics";
    auto m = http.send(r);
    if (!m)
      return -1;
    for (const auto& line : split_lines(m->body))
      if (line.starts_with("phalanx_http_requests_total{verb=\"LIST\",code=\"200\"} "))
        return std::stoi(line.substr(line.rfind(' ') + 1));
    return 0;
  };
  int before = lists();
  auto paged = ctl({"get", "pods", "--chunk-size", "2", "-o", "name"});
  ASSERT_TRUE(succeeded(paged));
  EXPECT_EQ(paged.out, all);
  EXPECT_EQ(lists() - before, 3);
  before = lists();
  auto whole = ctl({"get", "pods", "--chunk-size=0", "-o", "json"});
  ASSERT_TRUE(succeeded(whole));
  EXPECT_EQ(lists() - before, 1);
  before = lists();
  auto joined = ctl_json({"get", "pods", "--chunk-size=2"});
  EXPECT_EQ(lists() - before, 3);
  EXPECT_EQ(joined.at("items").as_array().size(), 5u) << joined;
  EXPECT_FALSE(joined.at("metadata").as_object().contains("continue")) << joined;
  auto refused = ctl({"get", "pods", "--chunk-size=-1"});
  EXPECT_TRUE(failed_with(refused, 2));
  EXPECT_NE(refused.err.find("--chunk-size must be a whole number of items"), std::string::npos)
      << refused.err;

  // A watch after a paged list starts from its version and sees the next change.
  auto watch = kubectl_process({"get", "pods", "--chunk-size=2", "-w", "-o", "name"});
  ASSERT_TRUE(watch->wait_for({"pod/p-4"})) << watch->err();
  ASSERT_TRUE(succeeded(kubectl({"create", "-f", home_.write("p5.yaml", pod(5))})));
  EXPECT_TRUE(watch->wait_for({"pod/p-5"})) << watch->err();
  watch->stop();

  // The first page, then more changes than the history keeps: the token is too old.
  auto get = [&](const std::string& target) {
    api::client_request r;
    r.target = target;
    auto res = http.send(r);
    EXPECT_TRUE(res.ok());
    return res ? *res : api::client_response{};
  };
  auto first = get("/api/v1/namespaces/default/pods?limit=2");
  ASSERT_EQ(first.status, 200) << first.body;
  auto token = field(boost::json::parse(first.body), {"metadata", "continue"});
  ASSERT_FALSE(token.empty()) << first.body;
  // Nodes watched meanwhile: the history keeps the changes of watched kinds, 16 here.
  auto nodes = kubectl_process({"get", "nodes", "-w", "-o", "name"});
  ASSERT_TRUE(nodes->wait_for({"node/cpu-a-0"})) << nodes->err();
  auto beyond = get("/api/v1/namespaces/default/pods?limit=2&continue=" + token);
  EXPECT_EQ(beyond.status, 200) << beyond.body;  // No change dropped yet.
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(succeeded(kubectl({"label", "node", "cpu-a-0", "--overwrite",
                                   "churn=" + std::to_string(i)})));
  nodes->stop();
  auto gone = get("/api/v1/namespaces/default/pods?limit=2&continue=" + token);
  ASSERT_EQ(gone.status, 410) << gone.body;
  auto status = boost::json::parse(gone.body);
  EXPECT_EQ(field(status, {"reason"}), "Expired");
  EXPECT_EQ(field(status, {"message"}).rfind("The provided continue parameter is too old to "
                                             "display a consistent list result. You can start a "
                                             "new list without the continue parameter, or use "
                                             "the continue token in this response",
                                             0),
            0u)
      << gone.body;
  auto rest = get("/api/v1/namespaces/default/pods?continue=" +
                  field(status, {"metadata", "continue"}));
  ASSERT_EQ(rest.status, 200) << rest.body;
  std::vector<std::string> names;
  auto rest_list = boost::json::parse(rest.body);
  for (const auto& item : rest_list.at("items").as_array())
    names.emplace_back(item.at("metadata").at("name").as_string());
  EXPECT_EQ(names, (std::vector<std::string>{"p-2", "p-3", "p-4", "p-5"}));
}

TEST_F(KubectlAgainstPhalanxd, ScalesAVolcanoJob) {
  ASSERT_TRUE(succeeded(kubectl({"create", "-f", example("tensorflow-job.yaml")})));
  auto running = [&](int want) {
    return eventually([&] {
      int n = 0;
      for (const auto& line : split_lines(kubectl({"get", "pods"}).out))
        if (line.find("tensorflow-dist-mnist-") == 0 && line.find("Running") != std::string::npos)
          ++n;
      return n == want;
    });
  };
  ASSERT_TRUE(running(3));
  auto up = kubectl({"patch", "vcjob", "tensorflow-dist-mnist", "--type=json", "-p",
                     R"([{"op":"replace","path":"/spec/tasks/1/replicas","value":3}])"});
  ASSERT_TRUE(succeeded(up)) << up.err;
  EXPECT_EQ(up.out, "job.batch.volcano.sh/tensorflow-dist-mnist patched\n");
  ASSERT_TRUE(running(4)) << kubectl({"get", "pods"}).out;
  EXPECT_EQ(kubectl({"get", "vcjob", "tensorflow-dist-mnist", "-o",
                     "jsonpath={.spec.tasks[1].replicas}"})
                .out,
            "3");

  auto image = kubectl({"patch", "vcjob", "tensorflow-dist-mnist", "--type=json", "-p",
                        R"([{"op":"replace","path":"/spec/queue","value":"elsewhere"}])"});
  EXPECT_EQ(image.exit_code, 1);
  EXPECT_NE(image.err.find("job updates may not change fields other than `minAvailable`"),
            std::string::npos)
      << image.err;

  // Down again with kubectl edit: the editor script rewrites the worker replicas and the job's
  // minimum (3 would be more than its 2 pods: invalid, as Volcano's webhook says).
  auto editor = home_.write("scale-down.sh",
                            "#!/bin/sh\nsed -i -e 's/replicas: 3/replicas: 1/' "
                            "-e 's/^  minAvailable: 3/  minAvailable: 2/' \"$1\"\n");
  ::chmod(editor.c_str(), 0755);
  ctl_options o;
  o.program = "/usr/bin/kubectl";
  o.env = {{"KUBECONFIG", kubeconfig_}, {"HOME", home_.path()}, {"KUBE_EDITOR", editor}};
  o.timeout = 90s;
  auto edited = run_ctl({"--server", d_->url(), "--cache-dir", home_.path() + "/cache", "edit",
                         "vcjob", "tensorflow-dist-mnist"},
                        o);
  ASSERT_TRUE(succeeded(edited)) << edited.err;
  ASSERT_TRUE(running(2)) << kubectl({"get", "pods"}).out;
}

// phalanxctl prints what kubectl prints for get with a template, custom columns, --sort-by and
// several kinds, byte for byte, against the same phalanxd (issue 30).
TEST_F(KubectlAgainstPhalanxd, PhalanxctlPrintsTemplatesAsKubectl) {
  std::string pods;
  const char* cpus[] = {"300m", "1.5", "100m"};
  for (int i = 0; i < 3; ++i)
    pods += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p-" + std::to_string(i) +
            "\n  labels: {app: web, app.kubernetes.io/name: w" + std::to_string(i) +
            "}\nspec:\n  priority: " + std::to_string(10 - i) +
            "\n  containers:\n  - name: c\n    image: x\n    resources:\n      requests:\n"
            "        cpu: \"" + cpus[i] + "\"\n";
  ASSERT_TRUE(succeeded(ctl({"apply", "-f", home_.write("pods.yaml", pods)})));
  ASSERT_TRUE(eventually([&] {
    return kubectl({"get", "pods", "-o", "jsonpath={.items[*].status.phase}"}).out ==
           "Running Running Running";
  }));
  const std::vector<std::vector<std::string>> commands = {
    {"get", "pods", "-o", "jsonpath={.kind} {.metadata} {.items[*].metadata.name}"},
    {"get", "pod", "p-1", "-o", R"(jsonpath={.metadata.labels.app\.kubernetes\.io/name})"},
    {"get", "pods", "-o",
     R"(jsonpath={range .items[*]}{.metadata.name}{"\t"}{.spec.containers[0].resources}{"\n"}{end})"},
    {"get", "pods", "-o", R"(jsonpath={.items[?(@.spec.priority>=9)].metadata.name})"},
    {"get", "pods", "-o", "jsonpath={.items[-1:].metadata.name} {.items[0,2].spec.priority}"},
    {"get", "pods", "-o", "jsonpath={.items[0].metadata.labels}"},
    {"get", "pods", "-o", "jsonpath-as-json={.items[*].metadata.name}"},
    {"get", "pods", "-o", "jsonpath={.a"},
    {"get", "pods", "-o", "custom-columns=NAME:.metadata.name,P:{.spec.priority},"
                          "L:metadata.labels,N:.nope"},
    {"get", "pods", "-o", "custom-columns=NAME:.metadata.name", "--no-headers"},
    {"get", "pods", "-o", "custom-columns=NAME"},
    {"get", "pods", "--sort-by=.spec.containers[0].resources.requests.cpu", "-o", "name"},
    {"get", "pods", "--sort-by={.spec.priority}", "-o", "custom-columns=N:.metadata.name"},
    {"get", "pods", "--sort-by=.nope", "-o", "name"},
    {"get", "pods,pg", "-o", "name"},
    {"get", "pods,pg", "--sort-by=.metadata.name", "-o", "name"},
    {"get", "pods,pg", "-o", "jsonpath={.kind} {.items[*].kind}"},
  };
  for (const auto& c : commands) {
    auto theirs = kubectl(c);
    auto ours = ctl(c);
    EXPECT_EQ(ours.out, theirs.out) << c.back();
    EXPECT_EQ(ours.exit_code, theirs.exit_code) << c.back();
    EXPECT_EQ(split_lines(ours.err).empty() ? "" : split_lines(ours.err)[0],
              split_lines(theirs.err).empty() ? "" : split_lines(theirs.err)[0])
        << c.back();
  }
}

// Events (issue 30): `kubectl get events` lists what phalanxd records about a pending gang
// (the PodGroup's Warning, its pods' FailedScheduling) with kubectl's columns, in every
// namespace and one, selected by kube-apiserver's field selectors; `kubectl describe` of the
// pod, the PodGroup, a cordoned node and a queue lists them under "Events:"; an unsupported field
// selector is kube-apiserver's 400; and events are read-only.
TEST_F(KubectlAgainstPhalanxd, ServesEventsToGetAndDescribe) {
  auto gang = home_.write("gang.yaml", unplaceable_gang_yaml());
  ASSERT_TRUE(succeeded(kubectl({"create", "-f", gang})));

  ctl_result events;
  ASSERT_TRUE(eventually([&] {
    events = kubectl({"get", "events"});
    return events.out.find("FailedScheduling") != std::string::npos;
  })) << events.out << events.err;
  auto lines = split_lines(events.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(cells(lines[0]),
            (std::vector<std::string>{"LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}))
      << events.out;
  auto row_with = [](const std::string& table, const std::string& reason,
                     const std::string& object, std::size_t reason_column) {
    for (const auto& l : split_lines(table)) {
      auto c = cells(l);
      if (c.size() > reason_column + 1 && c[reason_column] == reason &&
          c[reason_column + 1] == object)
        return true;
    }
    return false;
  };
  EXPECT_TRUE(row_with(events.out, "FailedScheduling", "pod/huge-0", 2)) << events.out;
  // No node can ever hold 1000 cpu: the gang is Unresolvable rather than Unschedulable.
  EXPECT_TRUE(row_with(events.out, "Unresolvable", "podgroup/huge-gang", 2)) << events.out;

  // -A adds the NAMESPACE column; -n of another namespace has none of them.
  auto all = kubectl({"get", "events", "-A"});
  ASSERT_TRUE(succeeded(all)) << all.err;
  EXPECT_EQ(cells(split_lines(all.out).at(0)).at(0), "NAMESPACE") << all.out;
  EXPECT_TRUE(row_with(all.out, "FailedScheduling", "pod/huge-1", 3)) << all.out;
  auto elsewhere = kubectl({"get", "ev", "-n", "elsewhere"});
  ASSERT_TRUE(succeeded(elsewhere)) << elsewhere.err;
  // kubectl warns first that `ev` is events.events.k8s.io's short name too, as against
  // kube-apiserver, which serves both.
  EXPECT_EQ(elsewhere.err,
            "Warning: short name \"ev\" could also match lower priority resource "
            "events.events.k8s.io\nNo resources found in elsewhere namespace.\n");

  // Field selectors, as kube-apiserver serves them for events.
  auto selected = kubectl({"get", "events", "--field-selector",
                           "involvedObject.name=huge-1,involvedObject.kind=Pod"});
  ASSERT_TRUE(succeeded(selected)) << selected.err;
  EXPECT_TRUE(row_with(selected.out, "FailedScheduling", "pod/huge-1", 2)) << selected.out;
  EXPECT_FALSE(row_with(selected.out, "FailedScheduling", "pod/huge-0", 2)) << selected.out;
  EXPECT_FALSE(row_with(selected.out, "Unresolvable", "podgroup/huge-gang", 2)) << selected.out;
  auto warnings = kubectl({"get", "events", "--field-selector", "type!=Normal", "-o",
                           "jsonpath={range .items[*]}{.type}{\"\\n\"}{end}"});
  ASSERT_TRUE(succeeded(warnings)) << warnings.err;
  for (const auto& l : split_lines(warnings.out))
    EXPECT_EQ(l, "Warning") << warnings.out;
  auto bad = kubectl({"get", "events", "--field-selector", "spec.nodeName=x"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("Error from server (BadRequest)"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("field label not supported: spec.nodeName"), std::string::npos)
      << bad.err;

  // -o yaml: core/v1 Events.
  auto yaml = kubectl({"get", "events", "--field-selector", "involvedObject.name=huge-gang",
                       "-o", "yaml"});
  ASSERT_TRUE(succeeded(yaml)) << yaml.err;
  EXPECT_NE(yaml.out.find("kind: Event\n"), std::string::npos) << yaml.out;
  EXPECT_NE(yaml.out.find("apiVersion: scheduling.volcano.sh/v1beta1\n    kind: PodGroup"),
            std::string::npos)
      << yaml.out;
  EXPECT_NE(yaml.out.find("reason: Unresolvable"), std::string::npos) << yaml.out;
  // One by name, as kubectl get event NAME asks it.
  auto name = kubectl({"get", "events", "--field-selector",
                       "involvedObject.name=huge-gang,reason=Unresolvable", "-o",
                       "jsonpath={.items[0].metadata.name}"});
  ASSERT_TRUE(succeeded(name)) << name.err;
  EXPECT_EQ(name.out.rfind("huge-gang.", 0), 0u) << name.out;
  auto one = kubectl({"get", "event", name.out, "-o", "jsonpath={.reason}"});
  ASSERT_TRUE(succeeded(one)) << one.err;
  EXPECT_EQ(one.out, "Unresolvable");

  // describe of the pending pod and of its PodGroup (a CRD to kubectl) list their events.
  auto events_section = [](const std::string& out) {
    auto at = out.find("\nEvents:");
    return at == std::string::npos ? std::string() : out.substr(at);
  };
  auto pod = kubectl({"describe", "pod", "huge-0"});
  ASSERT_TRUE(succeeded(pod)) << pod.err;
  EXPECT_TRUE(has_row(events_section(pod.out), {"Warning", "FailedScheduling"})) << pod.out;
  auto group = kubectl({"describe", "podgroup", "huge-gang"});
  ASSERT_TRUE(succeeded(group)) << group.err;
  EXPECT_TRUE(has_row(events_section(group.out), {"Warning", "Unresolvable"})) << group.out;

  // kubectl get events -w streams the events that follow its list: the cordon's below.
  auto watch = kubectl_process({"get", "events", "-w", "--output-watch-events"});
  ASSERT_TRUE(watch->wait_for({"EVENT", "LAST", "SEEN", "REASON"}));
  ASSERT_TRUE(watch->wait_for({"pod/huge-0"}));  // The list, printed first.

  // A cordoned node's NodeNotSchedulable, and a closed queue's event, in their describe.
  ASSERT_TRUE(succeeded(kubectl({"cordon", "cpu-a-0"})));
  auto streamed = watch->wait_for({"ADDED", "Normal", "NodeNotSchedulable", "node/cpu-a-0"});
  EXPECT_TRUE(streamed) << watch->err();
  watch->stop();
  ctl_result node;
  ASSERT_TRUE(eventually([&] {
    node = kubectl({"describe", "node", "cpu-a-0"});
    return has_row(events_section(node.out), {"Normal", "NodeNotSchedulable"});
  })) << node.out << node.err;
  ASSERT_TRUE(succeeded(ctl({"queue", "close", "default"})));
  ctl_result queue;
  ASSERT_TRUE(eventually([&] {
    queue = kubectl({"describe", "queue", "default"});
    return has_row(events_section(queue.out), {"Normal", "Closed"});
  })) << queue.out << queue.err;

  // Read-only: kubectl's create and delete of an Event are refused with 405.
  auto deleted = kubectl({"delete", "event", name.out});
  EXPECT_EQ(deleted.exit_code, 1);
  EXPECT_NE(deleted.err.find("Error from server (MethodNotAllowed): events are read-only"),
            std::string::npos)
      << deleted.err;
  auto event = home_.write("event.yaml", R"(apiVersion: v1
kind: Event
metadata: {name: mine}
involvedObject: {kind: Pod, name: huge-0, namespace: default}
reason: Mine
)");
  auto posted = kubectl({"create", "--validate=false", "-f", event});
  EXPECT_EQ(posted.exit_code, 1);
  EXPECT_NE(posted.err.find("MethodNotAllowed"), std::string::npos) << posted.err;
}

} // namespace
} // namespace phalanx::cli_test
