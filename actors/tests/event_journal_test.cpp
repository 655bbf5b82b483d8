// A watch of events on the whole runtime (kubectl get events -w, an informer): from a list's
// version, the changes it streams, applied to that list, give the events a list shows later, at
// every step of what users do. Names used again after deletes, pods deleted while their gang
// waits, a PodGroup deleted under its pods and made again, nodes cordoned and given back.

#include "actors/tests/runtime_harness.hpp"

#include "api/events.hpp"
#include "scheduler/tests/builders.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

namespace phalanx::actors::testing {
namespace {

using api::watch_event;
using scheduler::testing::make_node;
using scheduler::testing::make_pod;

// What a client keeps of an event: by name. The object's uid is left out: an event of an object
// since deleted lists with none, where the change that made it named the uid it had.
struct seen_event {
  std::string object;  // "<kind>/<namespace>/<name>"
  std::string type, reason, message;
  int32_t count = 0;
  scheduler::timestamp last_time{};
  bool operator==(const seen_event&) const = default;
};

seen_event seen_of(const api::object_event& e) {
  return {std::to_string(int(e.kind)) + "/" + e.namespace_name + "/" + e.name, e.event.type,
          e.event.reason, e.event.message, e.event.count, e.event.last_time};
}

std::string describe(const std::map<std::string, seen_event>& events) {
  std::ostringstream out;
  for (const auto& [name, e] : events)
    out << "  " << name << " " << e.type << " " << e.reason << " x" << e.count << ": "
        << e.message << "\n";
  return out.str();
}

// A client of the events: lists once, then follows the changes, as a watch streams them.
class events_follower {
 public:
  explicit events_follower(runtime_harness& h) : h_(h) {
    auto list = h_.call<result<api::event_list>>([&](auto done) { h_.svc().all_events(done); });
    runtime_harness::must_ok(list, "list events");
    for (const auto& e : list->items)
      events_.emplace(api::event_name(e), seen_of(e));
    version_ = list->resource_version;
  }

  // Takes the changes since the last call; each must make sense against what it has (ADDED
  // of an event it has not, MODIFIED and DELETED of one it has).
  void follow() {
    auto changes = h_.call<result<api::event_change_list>>(
        [&](auto done) { h_.svc().event_changes(version_, done); });
    runtime_harness::must_ok(changes, "changes of the events");
    for (const auto& c : changes->items) {
      auto name = api::event_name(c.event);
      EXPECT_GT(c.version, version_) << name;
      version_ = c.version;
      auto here = events_.find(name);
      switch (c.type) {
        case watch_event::type::added:
          EXPECT_EQ(here, events_.end()) << "ADDED twice: " << name;
          events_.insert_or_assign(name, seen_of(c.event));
          break;
        case watch_event::type::modified:
          EXPECT_NE(here, events_.end()) << "MODIFIED before ADDED: " << name;
          events_.insert_or_assign(name, seen_of(c.event));
          break;
        case watch_event::type::deleted:
          EXPECT_NE(here, events_.end()) << "DELETED before ADDED: " << name;
          if (here != events_.end())
            events_.erase(here);
          break;
      }
    }
    version_ = changes->resource_version;
  }

  // Checks that what it followed is what a list shows now, at the same version.
  void expect_same_as_a_list(const std::string& step) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      follow();
      auto list = h_.call<result<api::event_list>>([&](auto done) { h_.svc().all_events(done); });
      runtime_harness::must_ok(list, "list events");
      if (list->resource_version != version_)
        continue;  // Something changed in between: follow it first.
      std::map<std::string, seen_event> listed;
      for (const auto& e : list->items)
        listed.emplace(api::event_name(e), seen_of(e));
      EXPECT_EQ(events_, listed) << "after " << step << "\nfollowed:\n"
                                 << describe(events_) << "listed:\n"
                                 << describe(listed);
      ++checked_;
      return;
    }
    ADD_FAILURE() << "after " << step << ": the events never held still";
  }

  std::size_t size() const { return events_.size(); }
  std::size_t count(const std::string& reason) const {
    std::size_t n = 0;
    for (const auto& [name, e] : events_)
      n += e.reason == reason;
    return n;
  }
  int checked() const { return checked_; }

 private:
  runtime_harness& h_;
  uint64_t version_ = 0;
  std::map<std::string, seen_event> events_;
  int checked_ = 0;
};

TEST(EventJournal, AWatchFromAListAgreesWithEveryLaterListThroughWhatUsersDo) {
  runtime_harness h{deterministic_config(11),
                    {make_node("n-0").cpu("4").memory("16Gi"),
                     make_node("n-1").cpu("4").memory("16Gi")}};
  events_follower client{h};
  auto settle = [&] { h.pass(std::chrono::milliseconds(500)); };
  auto step = [&](const std::string& what) {
    settle();
    client.expect_same_as_a_list(what);
  };
  auto pod_in = [&](const std::string& name, const std::string& group, const char* cpu) {
    runtime_harness::must_ok(h.create(api::pod_object{make_pod(name).cpu(cpu).group(group), {}}),
                             name);
  };

  // A gang that fits (Scheduled events) and one that cannot (a warning on its PodGroup and a
  // FailedScheduling on each of its pods).
  runtime_harness::must_ok(h.create(group_of("small", 2)), "small");
  pod_in("small-0", "small", "1");
  pod_in("small-1", "small", "1");
  runtime_harness::must_ok(h.create(group_of("big", 3)), "big");
  for (const char* name : {"big-0", "big-1", "big-2"})
    pod_in(name, "big", "3");
  step("two gangs, one placed");
  EXPECT_EQ(client.count("Scheduled"), 3u);  // Two pods and the gang.
  EXPECT_EQ(client.count("FailedScheduling"), 3u);

  // A pod of the waiting gang deleted: its FailedScheduling goes.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "big-2"), "big-2");
  step("a waiting pod deleted");

  // A node cordoned: its event; the waiting gang's reason changes with the room left.
  runtime_harness::must_ok(
      h.act(api::resource_kind::node, "", "n-1", api::object_action::type::cordon), "cordon");
  step("a node cordoned");

  // The waiting gang's PodGroup deleted under its pods, then made again under the same name.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod_group, "default", "big"), "big");
  step("the PodGroup deleted");
  EXPECT_EQ(client.count("FailedScheduling"), 0u);
  runtime_harness::must_ok(h.create(group_of("big", 2)), "big again");
  step("the PodGroup made again");

  // A bound pod deleted and made again under its name: its Scheduled goes, and comes anew.
  runtime_harness::must_ok(h.remove(api::resource_kind::pod, "default", "small-0"), "small-0");
  step("a bound pod deleted");
  pod_in("small-0", "small", "1");
  step("the bound pod made again");

  // The node given back: the gang that waited fits now, and its pods' FailedScheduling become
  // Scheduled.
  runtime_harness::must_ok(
      h.act(api::resource_kind::node, "", "n-1", api::object_action::type::uncordon),
      "uncordon");
  ASSERT_TRUE(h.run_until([&] { return h.bound("big-0") && h.bound("big-1"); }, settle_limit,
                          settle_step));
  step("the waiting gang placed");
  EXPECT_EQ(client.count("FailedScheduling"), 0u);
  EXPECT_GE(client.checked(), 8);
}

} // namespace
} // namespace phalanx::actors::testing
