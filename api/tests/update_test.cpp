// prepare_update (api/update.hpp): what a PUT or PATCH asks for, made whole against the object as
// served and checked for what may never change, without a server.

#include "api/update.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::api {
namespace {

namespace json = boost::json;

// A pod as the server shows it: what a user created, with what the server set.
json::value served_pod() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","namespace":"default","uid":"0b6e7f1c-4d5e-4a3b-9c2d-1e2f3a4b5c6d",
                "resourceVersion":"41","creationTimestamp":"2026-11-28T10:00:00Z",
                "labels":{"app":"web"}},
    "spec":{"schedulerName":"volcano","containers":[{"name":"c","image":"nginx",
            "resources":{"requests":{"cpu":"1"}}}],
            "schedulingGates":[{"name":"example.com/a"}]},
    "status":{"phase":"Pending"}})");
}

json::value manifest() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"app":"api"}},
    "spec":{"schedulerName":"volcano","containers":[{"name":"c","image":"nginx",
            "resources":{"requests":{"cpu":"1"}}}]}})");
}

const scheduler::pod& pod_of(const object& o) { return std::get<pod_object>(o).pod; }

TEST(PrepareUpdate, APutOfTheManifestKeepsWhatTheServerSetAndIsUnconditionalForAPod) {
  auto out = prepare_update(info(resource_kind::pod), served_pod(), manifest(), update_verb::put);
  ASSERT_TRUE(out) << out.error().message;
  const auto& p = pod_of(*out);
  EXPECT_EQ(p.meta.namespace_name, "default");
  EXPECT_EQ(p.meta.labels.find("app"), "api");
  EXPECT_TRUE(p.placement().scheduling_gates.empty()) << "the PUT removed the gate";
  EXPECT_EQ(p.meta.resource_version, 0u) << "no version named: unconditional";
}

TEST(PrepareUpdate, APatchMustFindTheVersionItWasAppliedToUnlessItNamesOne) {
  auto current = served_pod();
  auto patched = apply_patch(info(resource_kind::pod), current,
                             json::parse(R"({"metadata":{"labels":{"tier":"x"}}})"),
                             "application/merge-patch+json");
  ASSERT_TRUE(patched);
  auto out = prepare_update(info(resource_kind::pod), current, *patched, update_verb::patch);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(pod_of(*out).meta.resource_version, 41u);
  auto named = apply_patch(info(resource_kind::pod), current,
                           json::parse(R"({"metadata":{"resourceVersion":"7"}})"),
                           "application/merge-patch+json");
  ASSERT_TRUE(named);
  out = prepare_update(info(resource_kind::pod), current, *named, update_verb::patch);
  ASSERT_TRUE(out);
  EXPECT_EQ(pod_of(*out).meta.resource_version, 7u);
}

TEST(PrepareUpdate, WhatNeverChangesIsRefusedNamingTheField) {
  auto current = served_pod();
  auto no_uid = current;
  no_uid.as_object()["metadata"].as_object().erase("uid");
  auto out = prepare_update(info(resource_kind::pod), current, no_uid, update_verb::patch);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, status_reason::invalid);
  EXPECT_NE(out.error().message.find("metadata.uid: Invalid value"), std::string::npos)
      << out.error().message;

  auto other_image = manifest();
  other_image.as_object()["spec"].as_object()["containers"].as_array()[0].as_object()["image"] =
      "other";
  out = prepare_update(info(resource_kind::pod), current, other_image, update_verb::put);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find(
                "spec: Forbidden: pod updates may not change fields other than "
                "`spec.schedulingGates`"),
            std::string::npos)
      << out.error().message;
}

TEST(PrepareUpdate, ANodesTaintsAndUnschedulableChangeItsStatusIsIgnored) {
  auto current = json::parse(R"({"apiVersion":"v1","kind":"Node",
    "metadata":{"name":"n","uid":"u","resourceVersion":"3"},
    "spec":{},"status":{"allocatable":{"cpu":"4"},"capacity":{"cpu":"4"}}})");
  auto next = json::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},
    "spec":{"unschedulable":true,"taints":[{"key":"k","effect":"NoSchedule"}]},
    "status":{"allocatable":{"cpu":"64"}}})");
  auto out = prepare_update(info(resource_kind::node), current, next, update_verb::put);
  ASSERT_TRUE(out) << out.error().message;
  const auto& n = std::get<node_object>(*out).node;
  EXPECT_TRUE(n.unschedulable);
  ASSERT_EQ(n.taints.size(), 1u);
}

TEST(PrepareUpdate, ACustomResourcesPutNamesItsVersionAndTakesNoStrategicPatch) {
  auto current = json::parse(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
    "metadata":{"name":"q","uid":"u","resourceVersion":"9"},"spec":{"weight":1}})");
  auto next = json::parse(R"({"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue",
    "metadata":{"name":"q"},"spec":{"weight":4}})");
  auto out = prepare_update(info(resource_kind::queue), current, next, update_verb::put);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find(
                "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"),
            std::string::npos)
      << out.error().message;
  next.as_object()["metadata"].as_object()["resourceVersion"] = "9";
  out = prepare_update(info(resource_kind::queue), current, next, update_verb::put);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(std::get<queue_object>(*out).queue.weight, 4);
  EXPECT_EQ(patch_types_of(info(resource_kind::queue)),
            "application/json-patch+json or application/merge-patch+json");
}

TEST(PrepareUpdate, APriorityClassKeepsItsValueAndPolicyAndTakesAStrategicPatch) {
  const auto& k = info(resource_kind::priority_class);
  auto current = json::parse(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
    "metadata":{"name":"c","uid":"u","resourceVersion":"5"},"value":10,
    "preemptionPolicy":"PreemptLowerPriority","description":"x"})");
  // kubectl apply sends a strategic merge patch for Kubernetes' own kinds.
  EXPECT_TRUE(takes_patch_type(k, "application/strategic-merge-patch+json"));
  auto described = apply_patch(k, current, json::parse(R"({"description":"y","globalDefault":true})"),
                               "application/strategic-merge-patch+json");
  ASSERT_TRUE(described);
  auto out = prepare_update(k, current, *described, update_verb::patch);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(std::get<priority_class_object>(*out).priority_class.description, "y");
  EXPECT_TRUE(std::get<priority_class_object>(*out).priority_class.global_default);

  auto revalued = apply_patch(k, current, json::parse(R"({"value":11,"preemptionPolicy":"Never"})"),
                              "application/merge-patch+json");
  ASSERT_TRUE(revalued);
  out = prepare_update(k, current, *revalued, update_verb::patch);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, status_reason::invalid);
  EXPECT_NE(out.error().message.find("value: Forbidden: may not be changed in an update."),
            std::string::npos)
      << out.error().message;
  EXPECT_NE(out.error().message.find("preemptionPolicy: Invalid value: \"Never\": field is immutable"),
            std::string::npos)
      << out.error().message;
  // A PUT without a version is unconditional, as for every Kubernetes kind.
  auto put = json::parse(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",
    "metadata":{"name":"c"},"value":10,"description":"z"})");
  out = prepare_update(k, current, put, update_verb::put);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(api::meta_of(*out).resource_version, 0u);
}

// A Volcano Job changes as Volcano's webhook lets it: minAvailable, each task's replicas and
// minAvailable, priorityClassName; its tasks stay the same ones, and nothing else changes.
TEST(PrepareUpdate, AJobChangesItsScaleAndPriorityOnly) {
  auto current = json::parse(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"etl","namespace":"default","uid":"u","resourceVersion":"7"},
    "spec":{"minAvailable":2,"queue":"default","tasks":[
      {"name":"worker","replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}})");
  auto scaled = json::parse(R"([{"op":"replace","path":"/spec/tasks/0/replicas","value":4},
                                {"op":"replace","path":"/spec/minAvailable","value":3}])");
  auto patched = apply_patch(info(resource_kind::job), current, scaled,
                             "application/json-patch+json");
  ASSERT_TRUE(patched) << patched.error().message;
  auto out = prepare_update(info(resource_kind::job), current, *patched, update_verb::patch);
  ASSERT_TRUE(out) << out.error().message;
  const auto& j = std::get<job_object>(*out).job;
  EXPECT_EQ(j.tasks[0].replicas, 4);
  EXPECT_EQ(j.min_available, 3);

  auto image = json::parse(
      R"([{"op":"replace","path":"/spec/tasks/0/template/spec/containers/0/image","value":"j"}])");
  patched = apply_patch(info(resource_kind::job), current, image, "application/json-patch+json");
  ASSERT_TRUE(patched);
  out = prepare_update(info(resource_kind::job), current, *patched, update_verb::patch);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("spec: Forbidden: job updates may not change fields other "
                                     "than `minAvailable`, `tasks[*].replicas under spec` and "
                                     "`PriorityClassName`"),
            std::string::npos)
      << out.error().message;

  auto added = json::parse(R"([{"op":"add","path":"/spec/tasks/-","value":
      {"name":"ps","replicas":1,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}}])");
  patched = apply_patch(info(resource_kind::job), current, added, "application/json-patch+json");
  ASSERT_TRUE(patched);
  out = prepare_update(info(resource_kind::job), current, *patched, update_verb::patch);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("spec.tasks: Forbidden: job updates may not add or remove "
                                     "tasks"),
            std::string::npos)
      << out.error().message;

  // Validated as a create: minAvailable above the replicas is refused.
  auto too_many = json::parse(R"([{"op":"replace","path":"/spec/minAvailable","value":5}])");
  patched = apply_patch(info(resource_kind::job), current, too_many, "application/json-patch+json");
  ASSERT_TRUE(patched);
  out = prepare_update(info(resource_kind::job), current, *patched, update_verb::patch);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("spec.minAvailable"), std::string::npos)
      << out.error().message;
}

// A job whose controller named the claim of a volume it describes (volumeClaimName beside
// volumeClaim) takes a scale and a PUT of the manifest it was made from, which lacks the name,
// as Volcano's validateJobUpdate does; its volumes still do not change.
TEST(PrepareUpdate, AJobsGeneratedClaimNameIsNoChange) {
  const auto manifest = std::string(R"({"apiVersion":"batch.volcano.sh/v1alpha1","kind":"Job",
    "metadata":{"name":"etl","namespace":"default","uid":"u","resourceVersion":"7"},
    "spec":{"minAvailable":2,"queue":"default",
      "volumes":[{"mountPath":"/scratch",)");
  const auto rest = std::string(R"("volumeClaim":{"accessModes":["ReadWriteOnce"]}}],
      "tasks":[{"name":"worker","replicas":2,
                "template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]}})");
  auto current = json::parse(manifest + R"("volumeClaimName":"etl-pvc-0123456789ab",)" + rest);

  auto scaled = json::parse(R"([{"op":"replace","path":"/spec/tasks/0/replicas","value":4}])");
  auto patched = apply_patch(info(resource_kind::job), current, scaled,
                             "application/json-patch+json");
  ASSERT_TRUE(patched) << patched.error().message;
  auto out = prepare_update(info(resource_kind::job), current, *patched, update_verb::patch);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(std::get<job_object>(*out).job.tasks[0].replicas, 4);

  out = prepare_update(info(resource_kind::job), current, json::parse(manifest + rest),
                       update_verb::put);
  ASSERT_TRUE(out) << out.error().message;

  auto moved = json::parse(R"([{"op":"replace","path":"/spec/volumes/0/mountPath","value":"/x"}])");
  patched = apply_patch(info(resource_kind::job), current, moved, "application/json-patch+json");
  ASSERT_TRUE(patched);
  out = prepare_update(info(resource_kind::job), current, *patched, update_verb::patch);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message.find("spec: Forbidden: job updates may not change fields"),
            std::string::npos)
      << out.error().message;
}

TEST(PrepareUpdate, APutOfAnotherNameOrKindIsABadRequest) {
  auto renamed = manifest();
  renamed.as_object()["metadata"].as_object()["name"] = "q";
  auto out = prepare_update(info(resource_kind::pod), served_pod(), renamed, update_verb::put);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, status_reason::bad_request);
  EXPECT_EQ(out.error().message,
            "the name of the provided object (q) does not match the name on the URL (p)");
}

} // namespace
} // namespace phalanx::api
