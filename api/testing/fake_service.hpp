#pragma once

// An in-memory implementation of api::service for tests (the server's here, phalanxctl's later).
//
// Like the real runtime, it calls back from its own thread: every call is queued to one worker
// thread, which changes the state and runs the callbacks and watch deliveries in order. Thread-safe:
// any thread may call anything, including the test controls below.
//
// Behaviour:
// - Objects are kept per kind, sorted by namespace and name; lists come back in that order.
// - create: fills uid ("fake-<n>"), resource_version (one counter for every change) and
//   creation_time (options.clock); fails with already_exists (`pods "x" already exists`);
//   a PodGroup or job naming a queue that does not exist fails with not_found
//   (`queue "q" does not exist`), a Closed or Closing one with failed_precondition
//   (`queue "q" is Closed: it accepts no new PodGroups or jobs`). Status starts as the runtime's
//   would: pods Pending, PodGroups Pending, jobs Pending with minAvailable and pending counts.
// - remove: not_found for an unknown object; answers the object as it was.
// - act: cordon/uncordon (nodes), suspend/resume (jobs: phase Aborted / Pending), open/close
//   (queues), fail (pods: phase Failed); another action for the kind is invalid_argument.
// - watch: resource_version 0 sends the current objects as ADDED, then changes; a version still
//   in the history (options.history changes) replays what came after it; an older one ends the
//   watch at once with failed_precondition ("too old resource version").
// - The queue "default" exists from the start.

#include "api/events.hpp"
#include "api/service.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace phalanx::api::testing {

class fake_service final : public service {
 public:
  struct options {
    /// The clock for creation times. Default: the system clock.
    std::function<scheduler::timestamp()> clock;
    /// Changes kept for watches that resume from a version. Default: 1,000.
    std::size_t history = 1000;
    /// Create the "default" queue at start. Default: true.
    bool default_queue = true;
  };

  fake_service();
  explicit fake_service(options opts);
  /// Ends every watch (on_close ok) and joins the worker.
  ~fake_service() override;

  using service::create;
  using service::update;
  void create(object obj, const write_options& options, object_callback done) override;
  void get(resource_kind kind, std::string namespace_name, std::string name,
           object_callback done) override;
  void list(resource_kind kind, list_options options, list_callback done) override;
  using service::remove;
  void remove(resource_kind kind, std::string namespace_name, std::string name,
              const write_options& options, object_callback done) override;
  /// Replaces the stored object's labels and annotations (and a pod's spec) with obj's, with
  /// the resourceVersion check of the interface; no other rule.
  void update(object obj, const write_options& options, object_callback done) override;
  void act(resource_kind kind, std::string namespace_name, std::string name,
           object_action action, object_callback done) override;
  void events(resource_kind kind, std::string namespace_name, std::string name,
              events_callback done) override;
  /// The events add_event recorded, by object; the uid is the stored object's, if any.
  void all_events(all_events_callback done) override;
  /// The changes add_event and remove_event made, from a journal that keeps every one.
  void event_changes(uint64_t from, event_changes_callback done) override;
  watch_handle watch(resource_kind kind, list_options options, uint64_t resource_version,
                     std::shared_ptr<watch_sink> sink) override;
  bool ready() const override;
  std::string failure() const override;
  std::string metrics_text() const override;

  // ---- Test controls.

  void set_ready(bool ready);
  /// What failure() says (empty: nothing failed).
  void set_failure(std::string why);
  void set_metrics_text(std::string text);
  /// Inserts or replaces an object as the runtime would (ADDED or MODIFIED to watchers), without
  /// the checks of create. Fills uid, creation_time and resource_version when unset. Returns the
  /// stored object.
  object put(object obj);
  /// Records an event about an object (it need not exist). One with the type, reason and first
  /// time of an event already recorded about the object replaces it (a count bump).
  void add_event(resource_kind kind, std::string namespace_name, std::string name,
                 scheduler::event e);
  /// Forgets the events recorded about an object (they leave: DELETED to events watches).
  void remove_events(resource_kind kind, const std::string& namespace_name,
                     const std::string& name);
  /// The next call of `operation` ("create", "get", "list", "remove", "act", "events",
  /// "all_events", "event_changes") fails
  /// with `error` instead of running.
  void fail_next(std::string operation, status error);
  /// Holds every callback of the following calls back by `delay` (a slow runtime).
  void set_delay(std::chrono::milliseconds delay);
  /// Ends every open watch with `reason`.
  void close_watches(status reason);

  /// The stored object, if any.
  std::optional<object> find(resource_kind kind, const std::string& namespace_name,
                             const std::string& name) const;
  std::size_t count(resource_kind kind) const;
  std::size_t open_watches() const;
  /// The grace period each delete asked for, in the order they came.
  std::vector<std::optional<int64_t>> delete_grace_periods() const;
  uint64_t resource_version() const;
  /// Waits until everything queued so far has run, callbacks included.
  void drain();

 private:
  using key = std::tuple<int, std::string, std::string>;
  struct watcher {
    uint64_t id;
    resource_kind kind;
    list_options options;
    std::shared_ptr<watch_sink> sink;
  };
  struct change {
    uint64_t resource_version;
    watch_event event;
  };
  using delivery = std::pair<std::shared_ptr<watch_sink>, watch_event>;

  void enqueue(std::function<void()> task);
  void run_worker();
  bool take_failure(const std::string& operation, status& out);
  scheduler::timestamp now() const;
  // The following run on the worker with mu_ held; they append to `out` what watchers get.
  void record_change(watch_event::type type, const object& o, std::vector<delivery>& out);
  /// Stores `changed` over `stored` under a new resourceVersion and records the MODIFIED event;
  /// returns the object as stored. Under mu_.
  object store_change(object& stored, object changed, std::vector<delivery>& deliveries);
  void deliver(std::vector<delivery> deliveries);
  object stamp(object o, bool keep_time);
  static bool matches(const watcher& w, const object& o);
  /// The event `e` about the object `k`, with the stored object's uid if any. Under mu_.
  object_event object_event_of(const key& k, scheduler::event e) const;

  options opts_;
  mutable std::mutex mu_;
  std::vector<std::optional<int64_t>> delete_grace_periods_;  // Under mu_.
  std::map<key, object> objects_;
  std::map<key, std::vector<scheduler::event>> events_;
  event_journal event_journal_{1u << 20, 1};  // Keeps every change from the start.
  std::deque<change> history_;
  std::vector<watcher> watchers_;
  std::map<std::string, std::deque<status>> failures_;
  uint64_t rv_ = 0;
  uint64_t next_uid_ = 1;
  uint64_t next_watch_ = 1;
  bool ready_ = true;
  std::string failure_;
  std::string metrics_ = "# HELP phalanx_fake_objects Objects in the fake service.\n"
                         "# TYPE phalanx_fake_objects gauge\n";
  std::chrono::milliseconds delay_{0};

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::function<void()>> queue_;
  std::size_t running_ = 0;
  std::condition_variable idle_cv_;
  bool stop_ = false;
  std::thread worker_;
};

} // namespace phalanx::api::testing
