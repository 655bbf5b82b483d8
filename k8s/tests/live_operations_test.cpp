// Bindings and status writes against the real apiserver: each bind_result the binder acts on,
// a strategic-merge status patch, an Event, the conflicts optimistic concurrency gives, and the
// eviction of a preemption victim (condition, event, delete) with each outcome the caller acts on.

#include "k8s/operations.hpp"
#include "k8s/reflector.hpp"
#include "k8s/testing/control_plane.hpp"

#include "k8s/tests/test_util.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace phalanx::k8s {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::control_plane;

json::value pod(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"schedulerName", "phalanx"},
            {"containers", json::array{{{"name", "main"}, {"image", "busybox"}}}}}}};
}

// Creates the pod; its uid.
std::string create_pod(client& c, const std::string& ns, const std::string& name) {
  auto r = post_json(c, "/api/v1/namespaces/" + ns + "/pods", pod(ns, name));
  if (!r)
    throw std::runtime_error(r.error().to_string());
  return std::string(r->at("metadata").at("uid").as_string());
}

std::string node_of(client& c, const std::string& ns, const std::string& name) {
  auto r = get_json(c, "/api/v1/namespaces/" + ns + "/pods/" + name);
  if (!r)
    return "error: " + r.error().to_string();
  auto* n = r->at("spec").as_object().if_contains("nodeName");
  return n && n->is_string() ? std::string(n->get_string()) : "";
}

class LiveBind : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& cp = control_plane::shared();
    ASSERT_TRUE(cp.create_namespace(ns).ok());
    for (const char* n : {"bind-n1", "bind-n2"}) {
      auto s = cp.create_node(n, "8", "32Gi", 110, {{"phalanx.test/pool", "a"}});
      ASSERT_TRUE(s.ok() || s.code() == errc::already_exists) << s.to_string();
    }
  }
  const std::string ns = "binding";
};

TEST_F(LiveBind, BoundThenAlreadyBoundHereThenGoneElsewhere) {
  auto& c = control_plane::shared().admin();
  auto uid = create_pod(c, ns, "p1");
  auto first = bind_pod(c, ns, "p1", uid, "bind-n1");
  EXPECT_EQ(first.result, bind_result::bound) << first.message;
  EXPECT_EQ(node_of(c, ns, "p1"), "bind-n1");

  // The same Binding again (a retry after a timeout, a restart re-issuing its intent).
  auto again = bind_pod(c, ns, "p1", uid, "bind-n1");
  EXPECT_EQ(again.result, bind_result::already_bound_here) << again.message;

  // Another node: the pod is taken.
  auto elsewhere = bind_pod(c, ns, "p1", uid, "bind-n2");
  EXPECT_EQ(elsewhere.result, bind_result::gone);
  EXPECT_EQ(elsewhere.bound_node, "bind-n1");
  EXPECT_NE(elsewhere.message.find("already bound to node bind-n1"), std::string::npos)
      << elsewhere.message;
  EXPECT_EQ(node_of(c, ns, "p1"), "bind-n1");
}

TEST_F(LiveBind, WrongUidIsGoneAndTheOtherPodStaysUnbound) {
  auto& c = control_plane::shared().admin();
  auto uid = create_pod(c, ns, "p2");
  auto wrong = bind_pod(c, ns, "p2", "00000000-0000-0000-0000-000000000000", "bind-n1");
  EXPECT_EQ(wrong.result, bind_result::gone);
  EXPECT_NE(wrong.message.find("another one now (uid " + uid), std::string::npos) << wrong.message;
  EXPECT_EQ(node_of(c, ns, "p2"), "");
}

TEST_F(LiveBind, PodDeletedAndCreatedAgainUnderItsNameIsGone) {
  auto& c = control_plane::shared().admin();
  auto old_uid = create_pod(c, ns, "p3");
  ASSERT_TRUE(delete_object(c, "/api/v1/namespaces/" + ns + "/pods/p3", old_uid).ok());
  // No kubelet: a pod with no node is deleted at once.
  auto new_uid = create_pod(c, ns, "p3");
  ASSERT_NE(old_uid, new_uid);
  auto stale = bind_pod(c, ns, "p3", old_uid, "bind-n1");
  EXPECT_EQ(stale.result, bind_result::gone) << stale.message;
  EXPECT_EQ(node_of(c, ns, "p3"), "");
  EXPECT_EQ(bind_pod(c, ns, "p3", new_uid, "bind-n2").result, bind_result::bound);
}

TEST_F(LiveBind, MissingPodIsGone) {
  auto& c = control_plane::shared().admin();
  auto missing =
      bind_pod(c, ns, "never-created", "11111111-1111-1111-1111-111111111111", "bind-n1");
  EXPECT_EQ(missing.result, bind_result::gone);
  EXPECT_NE(missing.message.find("HTTP 404 NotFound"), std::string::npos) << missing.message;
}

TEST_F(LiveBind, ForbiddenIsRejectedAndUnreachableIsRetry) {
  auto& cp = control_plane::shared();
  auto uid = create_pod(cp.admin(), ns, "p4");
  auto token = cp.service_account_token(ns, "no-binding-rights");
  ASSERT_TRUE(token.ok()) << token.error().to_string();
  auto config = cp.admin_config();
  config.token = *token;
  auto weak = client::create(config);
  ASSERT_TRUE(weak.ok());
  auto denied = bind_pod(**weak, ns, "p4", uid, "bind-n1");
  EXPECT_EQ(denied.result, bind_result::rejected);
  EXPECT_NE(denied.message.find("system:serviceaccount:binding:no-binding-rights"),
            std::string::npos)
      << denied.message;

  config = cp.admin_config();
  config.server = "https://127.0.0.1:1";
  config.timeout = 2s;
  auto nowhere = client::create(config);
  ASSERT_TRUE(nowhere.ok());
  auto unreachable = bind_pod(**nowhere, ns, "p4", uid, "bind-n1");
  EXPECT_EQ(unreachable.result, bind_result::retry);
  EXPECT_FALSE(unreachable.message.empty());
  EXPECT_EQ(node_of(cp.admin(), ns, "p4"), "");
}

TEST_F(LiveBind, StatusPatchAndEvent) {
  auto& c = control_plane::shared().admin();
  create_pod(c, ns, "p5");
  json::value patch = {
      {"status",
       {{"conditions",
         json::array{{{"type", "PodScheduled"},
                      {"status", "False"},
                      {"reason", "Unschedulable"},
                      {"message", "0/2 nodes are available: 2 Insufficient cpu."}}}}}}};
  auto patched = patch_pod_status(c, ns, "p5", patch);
  ASSERT_TRUE(patched.ok()) << patched.error().to_string();
  const auto& conditions = patched->at("status").at("conditions").as_array();
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].at("reason").as_string(), "Unschedulable");

  // A second condition merges by type (strategic merge) instead of replacing the list.
  json::value ready = {
      {"status",
       {{"conditions", json::array{{{"type", "Ready"}, {"status", "False"}, {"reason", "x"}}}}}}};
  auto merged = patch_pod_status(c, ns, "p5", ready);
  ASSERT_TRUE(merged.ok()) << merged.error().to_string();
  EXPECT_EQ(merged->at("status").at("conditions").as_array().size(), 2u);
  // A merge patch replaces it whole.
  auto replaced = patch_pod_status(c, ns, "p5", ready, patch_type::merge);
  ASSERT_TRUE(replaced.ok()) << replaced.error().to_string();
  EXPECT_EQ(replaced->at("status").at("conditions").as_array().size(), 1u);

  json::value event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", "p5.unschedulable"}, {"namespace", ns}}},
      {"involvedObject",
       {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", "p5"}, {"namespace", ns}}},
      {"reason", "FailedScheduling"},
      {"message", "0/2 nodes are available: 2 Insufficient cpu."},
      {"type", "Warning"},
      {"source", {{"component", "phalanx"}}},
      {"count", 1}};
  auto created = create_event(c, ns, event);
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  EXPECT_EQ(created->at("reason").as_string(), "FailedScheduling");
  auto duplicate = create_event(c, ns, event);
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.error().code(), errc::already_exists);
}

TEST_F(LiveBind, StaleResourceVersionIsAConflict) {
  auto& c = control_plane::shared().admin();
  const std::string path = "/api/v1/namespaces/" + ns + "/configmaps";
  json::value cm = {{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", "occ"}, {"namespace", ns}}},
                    {"data", {{"v", "1"}}}};
  auto first = post_json(c, path, cm);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  auto second = *first;
  second.at("data").as_object()["v"] = "2";
  ASSERT_TRUE(put_json(c, path + "/occ", second).ok());
  // Written over the first version's resourceVersion: refused.
  auto stale = *first;
  stale.at("data").as_object()["v"] = "3";
  auto conflict = put_json(c, path + "/occ", stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code(), errc::conflict);
  EXPECT_NE(conflict.error().message().find("the object has been modified"), std::string::npos)
      << conflict.error().message();
  // Deleting with a uid precondition that does not match: refused too.
  auto wrong_uid = delete_object(c, path + "/occ", "22222222-2222-2222-2222-222222222222");
  EXPECT_EQ(wrong_uid.code(), errc::conflict) << wrong_uid.to_string();
  EXPECT_TRUE(delete_object(c, path + "/occ",
                            std::string(first->at("metadata").at("uid").as_string()))
                  .ok());
  EXPECT_EQ(delete_object(c, path + "/occ").code(), errc::not_found);
}

// -- evict_pod

class LiveEvict : public ::testing::Test {
 protected:
  void SetUp() override {
    auto& cp = control_plane::shared();
    ASSERT_TRUE(cp.create_namespace(ns).ok());
    auto s = cp.create_node(node, "8", "32Gi");
    ASSERT_TRUE(s.ok() || s.code() == errc::already_exists) << s.to_string();
  }

  std::string path_of(const std::string& name) const {
    return "/api/v1/namespaces/" + ns + "/pods/" + name;
  }

  // The pod's condition of `type`, or null.
  static json::value condition_of(const json::value& pod, std::string_view type) {
    const auto* conditions = pod.at("status").as_object().if_contains("conditions");
    if (conditions)
      for (const auto& c : conditions->as_array())
        if (c.at("type").as_string() == type)
          return c;
    return nullptr;
  }

  // The Evict events naming pod `name`.
  std::vector<json::value> evict_events_of(const std::string& name) const {
    auto list = get_json(control_plane::shared().admin(),
                         "/api/v1/namespaces/" + ns + "/events?fieldSelector=" +
                             query_escape("involvedObject.name=" + name + ",reason=Evict"));
    if (!list)
      throw std::runtime_error(list.error().to_string());
    const auto& items = list->at("items").as_array();
    return {items.begin(), items.end()};
  }

  const std::string ns = "eviction";
  const std::string node = "evict-n1";
  const std::string message = "preempted by gang eviction/big in queue prod";
};

TEST_F(LiveEvict, ABoundVictimIsMarkedAndTerminatingThenAForceDeleteRemovesIt) {
  auto& c = control_plane::shared().admin();
  auto uid = create_pod(c, ns, "victim");
  ASSERT_EQ(bind_pod(c, ns, "victim", uid, node).result, bind_result::bound);

  auto out = evict_pod(c, ns, "victim", uid, message);
  EXPECT_TRUE(out.deleted.ok()) << out.deleted.to_string();
  EXPECT_TRUE(out.condition_written.ok()) << out.condition_written.to_string();
  EXPECT_TRUE(out.event_written.ok()) << out.event_written.to_string();

  // No kubelet stops it: it stays terminating, marked as a preemption victim.
  auto got = get_json(c, path_of("victim"));
  ASSERT_TRUE(got.ok()) << got.error().to_string();
  EXPECT_FALSE(string_at(*got, {"metadata", "deletionTimestamp"}).empty());
  auto condition = condition_of(*got, "DisruptionTarget");
  ASSERT_TRUE(condition.is_object()) << json::serialize(got->at("status"));
  EXPECT_EQ(string_at(condition, {"status"}), "True");
  EXPECT_EQ(string_at(condition, {"reason"}), "PreemptionByScheduler");
  EXPECT_EQ(string_at(condition, {"message"}), message);
  EXPECT_FALSE(string_at(condition, {"lastTransitionTime"}).empty());

  auto events = evict_events_of("victim");
  ASSERT_EQ(events.size(), 1u);
  const auto& e = events[0];
  EXPECT_EQ(string_at(e, {"type"}), "Warning");
  EXPECT_EQ(string_at(e, {"message"}), message);
  EXPECT_EQ(string_at(e, {"source", "component"}), "volcano");
  EXPECT_EQ(string_at(e, {"reportingComponent"}), "volcano");
  EXPECT_EQ(string_at(e, {"involvedObject", "kind"}), "Pod");
  EXPECT_EQ(string_at(e, {"involvedObject", "apiVersion"}), "v1");
  EXPECT_EQ(string_at(e, {"involvedObject", "namespace"}), ns);
  EXPECT_EQ(string_at(e, {"involvedObject", "uid"}), uid);
  EXPECT_FALSE(string_at(e, {"firstTimestamp"}).empty());
  EXPECT_EQ(e.at("count").to_number<int>(), 1);

  // Evicting a terminating pod again is harmless: the delete answers with the pod as it is.
  auto again = evict_pod(c, ns, "victim", uid, message);
  EXPECT_TRUE(again.deleted.ok()) << again.deleted.to_string();

  // What the kubelet would finish (or `kubectl delete --force --grace-period=0`): gone at once.
  auto forced = delete_object(c, path_of("victim"), uid, 0);
  EXPECT_TRUE(forced.ok()) << forced.to_string();
  auto after = get_json(c, path_of("victim"));
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code(), errc::not_found);
}

TEST_F(LiveEvict, AnUnboundVictimIsDeletedAtOnce) {
  auto& c = control_plane::shared().admin();
  auto uid = create_pod(c, ns, "unbound");
  auto out = evict_pod(c, ns, "unbound", uid, message, "phalanx", "phalanx-0");
  EXPECT_TRUE(out.deleted.ok()) << out.deleted.to_string();
  EXPECT_TRUE(out.condition_written.ok()) << out.condition_written.to_string();
  EXPECT_TRUE(out.event_written.ok()) << out.event_written.to_string();
  auto after = get_json(c, path_of("unbound"));
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().code(), errc::not_found);

  auto events = evict_events_of("unbound");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(string_at(events[0], {"source", "component"}), "phalanx");
  EXPECT_EQ(string_at(events[0], {"reportingComponent"}), "phalanx");
  EXPECT_EQ(string_at(events[0], {"reportingInstance"}), "phalanx-0");
}

TEST_F(LiveEvict, AnotherPodUnderTheNameIsAConflictAndIsLeftUntouched) {
  auto& c = control_plane::shared().admin();
  auto uid = create_pod(c, ns, "renamed");
  ASSERT_EQ(bind_pod(c, ns, "renamed", uid, node).result, bind_result::bound);

  auto out = evict_pod(c, ns, "renamed", "33333333-3333-3333-3333-333333333333", message);
  EXPECT_EQ(out.deleted.code(), errc::conflict) << out.deleted.to_string();
  EXPECT_EQ(out.condition_written.code(), errc::conflict) << out.condition_written.to_string();
  EXPECT_EQ(out.event_written.code(), errc::conflict) << out.event_written.to_string();

  auto got = get_json(c, path_of("renamed"));
  ASSERT_TRUE(got.ok()) << got.error().to_string();
  EXPECT_EQ(string_at(*got, {"metadata", "deletionTimestamp"}), "");
  EXPECT_TRUE(condition_of(*got, "DisruptionTarget").is_null())
      << json::serialize(got->at("status"));
  EXPECT_TRUE(evict_events_of("renamed").empty());
}

TEST_F(LiveEvict, AMissingPodIsNotFound) {
  auto& c = control_plane::shared().admin();
  auto out = evict_pod(c, ns, "never-created", "44444444-4444-4444-4444-444444444444", message);
  EXPECT_EQ(out.deleted.code(), errc::not_found) << out.deleted.to_string();
  EXPECT_EQ(out.condition_written.code(), errc::not_found) << out.condition_written.to_string();
  EXPECT_EQ(out.event_written.code(), errc::not_found) << out.event_written.to_string();
  EXPECT_TRUE(evict_events_of("never-created").empty());
}

} // namespace
} // namespace phalanx::k8s
