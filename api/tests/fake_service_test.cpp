// The fake service behaves as api/service.hpp promises (callbacks from its own thread, watches in
// order), so tests built on it test the server and not the fake.

#include "api/testing/fake_service.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace phalanx::api::testing {
namespace {

template <class T>
T wait(std::function<void(std::function<void(T)>)> call) {
  std::promise<T> p;
  auto f = p.get_future();
  call([&p](T r) { p.set_value(std::move(r)); });
  return f.get();
}

result<object> create(fake_service& svc, object o) {
  return wait<result<object>>([&](auto done) { svc.create(std::move(o), done); });
}

class recording_sink : public watch_sink {
 public:
  bool on_event(const watch_event& e) override {
    std::lock_guard lock{mu};
    events.push_back(e);
    return true;
  }
  void on_close(status reason) override {
    std::lock_guard lock{mu};
    closed = reason;
    was_closed = true;
  }
  std::mutex mu;
  std::vector<watch_event> events;
  status closed;
  bool was_closed = false;
};

TEST(FakeService, CallsBackFromItsOwnThread) {
  fake_service svc;
  auto caller = std::this_thread::get_id();
  std::promise<std::thread::id> where;
  svc.list(resource_kind::queue, {}, [&](result<object_list> r) {
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r->items.size(), 1u);  // "default".
    where.set_value(std::this_thread::get_id());
  });
  EXPECT_NE(where.get_future().get(), caller);
}

TEST(FakeService, CreateChecksQueuesAndNames) {
  fake_service svc;
  pod_group_object pg;
  pg.group.meta.name = "g";
  pg.group.meta.namespace_name = "ns";
  pg.group.queue = "missing";
  auto r = create(svc, pg);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::not_found);
  pg.group.queue = "default";
  auto ok = create(svc, pg);
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(meta_of(*ok).uid.empty());
  EXPECT_GT(meta_of(*ok).resource_version, 0u);
  auto dup = create(svc, pg);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code(), errc::already_exists);
  svc.fail_next("create", status{errc::unavailable, "not ready"});
  pg.group.meta.name = "h";
  EXPECT_EQ(create(svc, pg).error().code(), errc::unavailable);
}

TEST(FakeService, WatchesDeliverInOrder) {
  fake_service svc;
  auto sink = std::make_shared<recording_sink>();
  list_options all;
  auto handle = svc.watch(resource_kind::node, all, 0, sink);
  for (int i = 0; i < 50; ++i) {
    node_object n;
    n.node.meta.name = "n" + std::to_string(i);
    svc.put(n);
  }
  svc.drain();
  {
    std::lock_guard lock{sink->mu};
    ASSERT_EQ(sink->events.size(), 50u);
    for (int i = 0; i < 50; ++i)
      EXPECT_EQ(meta_of(sink->events[std::size_t(i)].obj).name, "n" + std::to_string(i));
  }
  handle.reset();
  EXPECT_EQ(svc.open_watches(), 0u);
}

TEST(FakeService, ExpandsJobsAndDeletesThemWholly) {
  fake_service svc;
  job_object j;
  j.job.meta.name = "tf";
  j.job.meta.namespace_name = "ns";
  scheduler::job_task t;
  t.name = "worker";
  t.replicas = 2;
  t.pod_template.requests.pods = 1;
  j.job.tasks.push_back(t);
  ASSERT_TRUE(create(svc, j).ok());
  EXPECT_EQ(svc.count(resource_kind::pod), 2u);
  EXPECT_EQ(svc.count(resource_kind::pod_group), 1u);
  auto gone = wait<result<object>>(
    [&](auto done) { svc.remove(resource_kind::job, "ns", "tf", done); });
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(svc.count(resource_kind::pod), 0u);
  EXPECT_EQ(svc.count(resource_kind::pod_group), 0u);
}

TEST(FakeService, EnumsAndKindsHaveStrings) {
  for (int i = 0; i <= static_cast<int>(resource_kind_last); ++i)
    EXPECT_NE(to_string(static_cast<resource_kind>(i)), "unknown");
  EXPECT_EQ(to_string(watch_event::type::added), "ADDED");
  EXPECT_EQ(to_string(watch_event::type::deleted), "DELETED");
  for (auto t : {object_action::type::cordon, object_action::type::uncordon,
                 object_action::type::suspend, object_action::type::resume,
                 object_action::type::open, object_action::type::close,
                 object_action::type::fail_pod})
    EXPECT_NE(to_string(t), "unknown");
}

} // namespace
} // namespace phalanx::api::testing
