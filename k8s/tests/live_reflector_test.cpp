// Reflectors against the real apiserver: paginated lists, events in order, watches resumed
// where they ended, bookmarks, and every way to 410 (etcd compaction under a watch, an expired
// continue token, the watch cache after an apiserver restart) ending in a complete relist.
//
// ConfigMaps are served by etcd directly in the test control plane (no watch cache; see
// control_plane.hpp), so compaction reaches them at once; Pods go through the watch cache, which
// is what sends bookmarks.

#include "k8s/operations.hpp"
#include "k8s/reflector.hpp"
#include "k8s/testing/control_plane.hpp"

#include "k8s/tests/test_util.hpp"

#include <boost/json.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

namespace phalanx::k8s {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using test::eventually;
using test::name_of;
using test::recording_sink;
using testing::control_plane;

uint64_t rv_number(const std::string& rv) {
  return std::stoull(rv);
}

json::value configmap(const std::string& ns, const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"data", {{"v", value}}}};
}

json::value pod(const std::string& ns, const std::string& name,
                const std::map<std::string, std::string>& labels = {}) {
  json::object l;
  for (const auto& [k, v] : labels)
    l[k] = v;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", l}}},
          {"spec",
           {{"schedulerName", "volcano"},
            {"containers", json::array{{{"name", "main"}, {"image", "busybox"}}}}}}};
}

status create_configmap(client& c, const std::string& ns, const std::string& name,
                        const std::string& value = "0") {
  auto r = post_json(c, "/api/v1/namespaces/" + ns + "/configmaps", configmap(ns, name, value));
  return r.ok() ? status{} : r.error();
}

reflector_options configmaps_in(const std::string& ns) {
  reflector_options o;
  o.path = "/api/v1/namespaces/" + ns + "/configmaps";
  o.kind = "ConfigMap";
  o.api_version = "v1";
  o.seed = 7;
  return o;
}

std::unique_ptr<reflector> start_reflector(client& c, reflector_options o, reflector_sink& sink) {
  auto r = reflector::create(c, std::move(o), sink);
  if (!r)
    throw std::runtime_error(r.error().to_string());
  (*r)->start();
  return std::move(*r);
}

std::set<std::string> names(const std::vector<json::value>& items) {
  std::set<std::string> out;
  for (const auto& i : items)
    out.insert(name_of(i));
  return out;
}

TEST(LiveReflector, PaginatedListSeesEveryObjectOnce) {
  auto& cp = control_plane::shared();
  const std::string ns = "pages";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  constexpr int count = 1200;
  std::atomic<int> failures{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&, t] {
      for (int i = t; i < count; i += 4)
        if (!create_configmap(cp.admin(), ns, "cm-" + std::to_string(i)).ok())
          ++failures;
    });
  for (auto& w : writers)
    w.join();
  ASSERT_EQ(failures.load(), 0);

  // A client of its own, to count the list's requests.
  auto c = client::create(cp.admin_config());
  ASSERT_TRUE(c.ok());
  recording_sink sink;
  auto o = configmaps_in(ns);
  o.page_size = 500;
  auto r = start_reflector(**c, o, sink);
  ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
  EXPECT_EQ((*c)->metrics().responses, 3u);  // 500 + 500 + 200.
  auto lists = sink.lists();
  ASSERT_EQ(lists.size(), 1u);
  const auto& items = lists[0].items;
  EXPECT_EQ(items.size(), std::size_t(count));
  auto seen = names(items);
  EXPECT_EQ(seen.size(), std::size_t(count));  // Each once.
  for (int i = 0; i < count; ++i)
    ASSERT_TRUE(seen.count("cm-" + std::to_string(i))) << "cm-" << i;
  // List items come without kind and apiVersion; the reflector writes them in.
  for (const auto& item : items) {
    ASSERT_EQ(item.at("kind").as_string(), "ConfigMap");
    ASSERT_EQ(item.at("apiVersion").as_string(), "v1");
  }
  EXPECT_EQ(r->last_resource_version(), lists[0].resource_version);
  EXPECT_EQ(r->counters().lists, 1u);
  EXPECT_EQ(r->counters().relists_after_410, 0u);
}

TEST(LiveReflector, EventsArriveInOrder) {
  auto& cp = control_plane::shared();
  const std::string ns = "order";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  ASSERT_TRUE(create_configmap(cp.admin(), ns, "before").ok());
  recording_sink sink;
  auto r = start_reflector(cp.admin(), configmaps_in(ns), sink);
  ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
  ASSERT_EQ(names(sink.lists().at(0).items), std::set<std::string>{"before"});

  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(create_configmap(cp.admin(), ns, "cm-" + std::to_string(i)).ok());
  const std::string path = "/api/v1/namespaces/" + ns + "/configmaps/";
  ASSERT_TRUE(put_json(cp.admin(), path + "cm-3", configmap(ns, "cm-3", "changed")).ok());
  ASSERT_TRUE(delete_object(cp.admin(), path + "cm-5").ok());

  ASSERT_TRUE(eventually([&] { return sink.event_count() >= 22; })) << sink.error_text();
  auto events = sink.events();
  ASSERT_EQ(events.size(), 22u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(events[i].type, event_type::added) << i;
    EXPECT_EQ(events[i].name, "cm-" + std::to_string(i));
  }
  EXPECT_EQ(events[20].type, event_type::modified);
  EXPECT_EQ(events[20].name, "cm-3");
  EXPECT_EQ(events[20].object.at("data").at("v").as_string(), "changed");
  EXPECT_EQ(events[21].type, event_type::deleted);
  EXPECT_EQ(events[21].name, "cm-5");
  for (std::size_t i = 1; i < events.size(); ++i)
    EXPECT_LT(rv_number(events[i - 1].resource_version), rv_number(events[i].resource_version));
  EXPECT_EQ(events[0].object.at("kind").as_string(), "ConfigMap");
  EXPECT_EQ(r->last_resource_version(), events.back().resource_version);
  EXPECT_EQ(r->counters().events, 22u);
}

TEST(LiveReflector, WatchEndsAndResumesWithoutRelisting) {
  auto& cp = control_plane::shared();
  const std::string ns = "resume";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  recording_sink sink;
  auto o = configmaps_in(ns);
  o.min_watch_timeout = 2s;  // Each watch ends after 2-3 s.
  auto r = start_reflector(cp.admin(), o, sink);
  ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
  // Objects created across several watches, with the streams ending in between.
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(create_configmap(cp.admin(), ns, "cm-" + std::to_string(i)).ok());
    const auto restarts = r->counters().watch_restarts;
    ASSERT_TRUE(eventually([&] { return r->counters().watch_restarts > restarts; }))
        << sink.error_text();
  }
  ASSERT_TRUE(eventually([&] { return sink.event_count() >= 4; }));
  auto events = sink.events();
  ASSERT_EQ(events.size(), 4u);  // Each once: a resumed watch sends only what is newer.
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(events[i].name, "cm-" + std::to_string(i));
  EXPECT_EQ(r->counters().lists, 1u);
  EXPECT_GE(r->counters().watch_restarts, 4u);
  EXPECT_TRUE(sink.errors().empty()) << sink.error_text();
}

TEST(LiveReflector, BookmarksMoveTheResourceVersionPastFilteredChanges) {
  auto& cp = control_plane::shared();
  const std::string ns = "bookmarks";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  recording_sink sink;
  reflector_options o;
  o.path = "/api/v1/namespaces/" + ns + "/pods";
  o.kind = "Pod";
  o.api_version = "v1";
  o.label_selector = "app=nothing-matches";
  // The watch cache sends a bookmark 2 s before a watch's timeout: watches of 3-5 s.
  o.min_watch_timeout = 3s;
  auto r = start_reflector(cp.admin(), o, sink);
  ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
  const auto listed = rv_number(r->last_resource_version());
  // A change the selector filters out: no event, but the collection moved on.
  auto created = post_json(cp.admin(), "/api/v1/namespaces/" + ns + "/pods",
                           pod(ns, "unlabelled", {{"app", "other"}}));
  ASSERT_TRUE(created.ok()) << created.error().to_string();
  const auto pod_rv =
      rv_number(std::string(created->at("metadata").at("resourceVersion").as_string()));
  ASSERT_GT(pod_rv, listed);
  ASSERT_TRUE(eventually(
      [&] {
        auto b = sink.bookmarks();
        return !b.empty() && rv_number(b.back()) >= pod_rv;
      },
      30s))
      << "bookmarks: " << sink.bookmark_count() << "\n" << sink.error_text();
  EXPECT_EQ(sink.event_count(), 0u);
  EXPECT_GE(rv_number(r->last_resource_version()), pod_rv);
  EXPECT_GE(r->counters().bookmarks, 1u);
}

TEST(LiveReflector, CompactedResumeGets410AndRelistsTheWholeCollection) {
  auto& cp = control_plane::shared();
  const std::string ns = "compaction";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(create_configmap(cp.admin(), ns, "old-" + std::to_string(i)).ok());
  std::string checkpoint;
  {
    recording_sink sink;
    auto r = start_reflector(cp.admin(), configmaps_in(ns), sink);
    ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
    checkpoint = r->last_resource_version();
  }
  // While "we" were down: one created, one deleted, and etcd compacted past the checkpoint.
  ASSERT_TRUE(create_configmap(cp.admin(), ns, "new").ok());
  ASSERT_TRUE(delete_object(cp.admin(), "/api/v1/namespaces/" + ns + "/configmaps/old-2").ok());
  auto compacted = cp.compact_etcd();
  ASSERT_TRUE(compacted.ok()) << compacted.error().to_string();
  ASSERT_GT(*compacted, int64_t(rv_number(checkpoint)));

  recording_sink sink;
  auto o = configmaps_in(ns);
  o.resume_from = checkpoint;
  auto r = start_reflector(cp.admin(), o, sink);
  ASSERT_TRUE(eventually([&] { return sink.list_count() >= 1; })) << sink.error_text();
  EXPECT_TRUE(r->synced());
  auto lists = sink.lists();
  EXPECT_EQ(names(lists[0].items),
            (std::set<std::string>{"new", "old-0", "old-1", "old-3", "old-4"}));
  EXPECT_EQ(r->counters().relists_after_410, 1u);
  EXPECT_EQ(sink.event_count(), 0u);
  auto errors = sink.error_text();
  EXPECT_NE(errors.find("410"), std::string::npos) << errors;
  // And it watches on from the new list.
  ASSERT_TRUE(create_configmap(cp.admin(), ns, "after").ok());
  ASSERT_TRUE(eventually([&] { return sink.event_count() >= 1; })) << sink.error_text();
  EXPECT_EQ(sink.events()[0].name, "after");
}

TEST(LiveReflector, ResumeFromACheckpointWatchesWithoutListing) {
  auto& cp = control_plane::shared();
  const std::string ns = "checkpoint";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  ASSERT_TRUE(create_configmap(cp.admin(), ns, "a").ok());
  std::string checkpoint;
  {
    recording_sink sink;
    auto r = start_reflector(cp.admin(), configmaps_in(ns), sink);
    ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
    checkpoint = r->last_resource_version();
  }
  ASSERT_TRUE(create_configmap(cp.admin(), ns, "b").ok());
  ASSERT_TRUE(put_json(cp.admin(), "/api/v1/namespaces/" + ns + "/configmaps/a",
                       configmap(ns, "a", "changed"))
                  .ok());

  recording_sink sink;
  auto o = configmaps_in(ns);
  o.resume_from = checkpoint;
  auto r = start_reflector(cp.admin(), o, sink);
  ASSERT_TRUE(eventually([&] { return sink.event_count() >= 2; })) << sink.error_text();
  EXPECT_TRUE(r->synced());
  auto events = sink.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, event_type::added);
  EXPECT_EQ(events[0].name, "b");
  EXPECT_EQ(events[1].type, event_type::modified);
  EXPECT_EQ(events[1].name, "a");
  EXPECT_EQ(sink.list_count(), 0u);
  EXPECT_EQ(r->counters().lists, 0u);
}

TEST(LiveReflector, ExpiredContinueTokenRestartsTheList) {
  auto& cp = control_plane::shared();
  const std::string ns = "continue";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  ASSERT_TRUE(cp.create_namespace("continue-churn").ok());
  for (int i = 0; i < 200; ++i)
    ASSERT_TRUE(create_configmap(cp.admin(), ns, "cm-" + std::to_string(i)).ok());

  // Compactions while the reflector pages through 100 pages of 2: each one moves etcd past the
  // list's resourceVersion, so the next continue token is refused with 410. It stops once the
  // reflector has seen one. (With 20 pages and a compaction every 5 ms, a loaded machine let the
  // reflector through all its pages before the first compaction, once: the pages are many and
  // the compactions back to back now.)
  recording_sink sink;
  std::atomic<bool> churn{true};
  std::thread compactor([&] {
    for (int i = 0; churn && i < 2000; ++i) {
      create_configmap(cp.admin(), "continue-churn", "churn-" + std::to_string(i))
          .permit_unchecked();
      cp.compact_etcd().error().permit_unchecked();
      if (sink.error_text().find("continue token expired") != std::string::npos)
        churn = false;
    }
  });
  auto o = configmaps_in(ns);
  o.page_size = 2;
  auto r = start_reflector(cp.admin(), o, sink);
  bool synced = eventually([&] { return r->synced(); }, 60s);
  churn = false;
  compactor.join();
  ASSERT_TRUE(synced) << sink.error_text();
  auto lists = sink.lists();
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(lists[0].items.size(), 200u);
  EXPECT_EQ(names(lists[0].items).size(), 200u);
  EXPECT_GE(r->counters().relists_after_410, 1u);
  EXPECT_NE(sink.error_text().find("HTTP 410 Expired"), std::string::npos) << sink.error_text();
}

TEST(LiveReflector, StopIsPrompt) {
  auto& cp = control_plane::shared();
  const std::string ns = "stop";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  recording_sink sink;
  auto r = start_reflector(cp.admin(), configmaps_in(ns), sink);
  ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
  std::this_thread::sleep_for(300ms);  // Into a watch read.
  r->stop();                           // Returns after the thread ended; no bound asserted.
  const auto events = sink.event_count();
  ASSERT_TRUE(create_configmap(cp.admin(), ns, "after-stop").ok());
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(sink.event_count(), events);
}

// Last in this file: it restarts the apiserver (the server address may change).
TEST(LiveReflector, WatchCacheAfterApiserverRestartGives410AndARelist) {
  auto& cp = control_plane::shared();
  const std::string ns = "restart";
  ASSERT_TRUE(cp.create_namespace(ns).ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(post_json(cp.admin(), "/api/v1/namespaces/" + ns + "/pods",
                          pod(ns, "p" + std::to_string(i)))
                    .ok());
  reflector_options o;
  o.path = "/api/v1/namespaces/" + ns + "/pods";
  o.kind = "Pod";
  o.api_version = "v1";
  std::string checkpoint;
  {
    recording_sink sink;
    auto r = start_reflector(cp.admin(), o, sink);
    ASSERT_TRUE(eventually([&] { return r->synced(); })) << sink.error_text();
    checkpoint = r->last_resource_version();
  }
  ASSERT_TRUE(cp.restart_apiserver().ok());
  ASSERT_TRUE(post_json(cp.admin(), "/api/v1/namespaces/" + ns + "/pods", pod(ns, "p3")).ok());

  recording_sink sink;
  o.resume_from = checkpoint;
  auto r = start_reflector(cp.admin(), o, sink);
  ASSERT_TRUE(eventually([&] { return sink.list_count() >= 1; })) << sink.error_text();
  EXPECT_EQ(names(sink.lists()[0].items), (std::set<std::string>{"p0", "p1", "p2", "p3"}));
  EXPECT_EQ(r->counters().relists_after_410, 1u);
  EXPECT_NE(sink.error_text().find("too old resource version"), std::string::npos)
      << sink.error_text();
}

} // namespace
} // namespace phalanx::k8s
