#pragma once

// The interface between the HTTP API and the scheduler runtime (DESIGN.md section 2: "Handlers
// call an abstract service interface"). api/ implements the server and the codecs against it;
// actors/ implements it over the actor system; tests implement an in-memory fake.
//
// Every call is asynchronous: the callback runs exactly once, on a thread of the implementation
// (never inside the call itself is allowed but not required), and must not block. A call that
// creates or changes something calls back with success only once the change is durable.

#include "scheduler/model.hpp"
#include "scheduler/object_status.hpp"
#include "scheduler/result.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace phalanx::api {

enum class resource_kind { pod, node, pod_group, queue, job, priority_class };
std::string_view to_string(resource_kind k) noexcept;  // "pods", "nodes", "podgroups", ...
inline constexpr resource_kind resource_kind_last = resource_kind::priority_class;
/// How many kinds there are, for tables indexed by kind.
inline constexpr std::size_t resource_kind_count = std::size_t(resource_kind_last) + 1;

/// Objects as the service keeps them: the model plus the status the runtime computes.
struct pod_object {
  scheduler::pod pod;
  std::vector<scheduler::condition> conditions;  // PodScheduled=False with the pending reason.
  /// Set while the pod is terminating (a graceful delete): metadata.deletionTimestamp and
  /// deletionGracePeriodSeconds.
  std::optional<scheduler::pod_termination> termination = std::nullopt;
  /// Its container's exit code once it ended, when known (standalone: the simulated kubelet's,
  /// sim_cluster.hpp simulated_exit_code): status.containerStatuses[].state.terminated.
  std::optional<int32_t> exit_code = std::nullopt;
};
struct node_object {
  scheduler::node node;
  scheduler::resources allocated;  // Requests of the pods bound to it, not terminal.
  int32_t pod_count = 0;
};
struct pod_group_object {
  scheduler::pod_group group;
  scheduler::pod_group_status status;
};
struct queue_object {
  scheduler::queue queue;
  scheduler::queue_status status;
};
struct job_object {
  scheduler::job job;
  scheduler::job_status status;
};
struct priority_class_object {
  scheduler::priority_class priority_class;
};
/// In resource_kind order: kind_of(o) is o.index().
using object = std::variant<pod_object, node_object, pod_group_object, queue_object, job_object,
                            priority_class_object>;

resource_kind kind_of(const object& o) noexcept;
const scheduler::object_meta& meta_of(const object& o) noexcept;
scheduler::object_meta& meta_of(object& o) noexcept;

/// A parsed Kubernetes label selector ("app=x,tier!=db,env in (a,b),!legacy,gpu").
struct label_requirement {
  enum class op { equals, not_equals, in, not_in, exists, does_not_exist };
  std::string key;
  op operation = op::equals;
  std::vector<std::string> values;
};
struct label_selector {
  std::vector<label_requirement> requirements;  // ANDed; empty matches everything.
  bool matches(const scheduler::label_set& labels) const;
};

/// Which part of a list to answer (?limit and ?continue): lists are in the order of their
/// items' (namespace, name), and a page is the items after the last of the page before.
struct list_page {
  /// At most this many items; 0: every one.
  std::size_t limit = 0;
  /// Only the items whose (namespace, name) comes after this one: the last item of the page
  /// before. Unset: from the first.
  std::optional<std::pair<std::string, std::string>> after;
  /// On a later page of a list that is to stay consistent with its first page: that page's
  /// version (0: none). Pages are read from the service's state when asked, not from the first
  /// page's, so the list and a watch from this version see every change only while the service
  /// keeps the changes since; once it has dropped one for the size of its history (as etcd
  /// compacts), the list fails with failed_precondition.
  uint64_t first_version = 0;
};

struct list_options {
  std::string namespace_name;  // Empty: all namespaces (or a cluster-scoped kind).
  label_selector selector;
  list_page page;
};

struct object_list {
  /// In (namespace, name) order.
  std::vector<object> items;
  uint64_t resource_version = 0;  // The collection's version, to start a watch from.
  /// How many items the options select after this page; 0 when it holds the rest of the list.
  std::size_t remaining = 0;
};

/// One change, as a Kubernetes watch sends it.
struct watch_event {
  enum class type { added, modified, deleted };
  type kind = type::added;
  object obj;
};
std::string_view to_string(watch_event::type t) noexcept;  // "ADDED", "MODIFIED", "DELETED"

/// Receives watch events. Called from the implementation's threads, in order, never concurrently
/// for one sink. Returning false ends the watch (the client went away).
class watch_sink {
 public:
  virtual ~watch_sink() = default;
  virtual bool on_event(const watch_event& event) = 0;
  /// The watch ended from the service side (shutdown, or the sink fell too far behind).
  virtual void on_close(status reason) = 0;
};

/// Cancels a watch when destroyed or reset.
class watch_handle {
 public:
  watch_handle() = default;
  explicit watch_handle(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
  watch_handle(watch_handle&& other) noexcept : cancel_(std::move(other.cancel_)) {
    other.cancel_ = nullptr;
  }
  watch_handle& operator=(watch_handle&& other) noexcept {
    if (this != &other) {
      reset();
      cancel_ = std::move(other.cancel_);
      other.cancel_ = nullptr;
    }
    return *this;
  }
  watch_handle(const watch_handle&) = delete;
  watch_handle& operator=(const watch_handle&) = delete;
  ~watch_handle() { reset(); }
  void reset() {
    if (cancel_) {
      auto c = std::move(cancel_);
      cancel_ = nullptr;
      c();
    }
  }

 private:
  std::function<void()> cancel_;
};

/// An event with the object it is about, as `service::all_events` lists it.
struct object_event {
  resource_kind kind = resource_kind::pod;
  std::string namespace_name;  // Empty for a cluster-scoped object.
  std::string name;
  std::string uid;  // The object's uid; empty once the object is gone and its events remain.
  scheduler::event event;
};

/// Every event kept, as `service::all_events` answers.
struct event_list {
  std::vector<object_event> items;
  /// The events' own version they were read at (api::event_journal): a watch of events from it
  /// gets every change after the read.
  uint64_t resource_version = 0;
};

/// A change of the events, as a watch of events streams it: ADDED, MODIFIED (a count bump),
/// DELETED (an event that left), with the version the change was given (api/events.hpp
/// event_journal).
struct event_change {
  watch_event::type type = watch_event::type::added;
  object_event event;
  uint64_t version = 0;
};

/// The changes of the events after a version, as `service::event_changes` answers.
struct event_change_list {
  std::vector<event_change> items;
  uint64_t resource_version = 0;  // The newest change's: where the next read starts.
};

/// What a client asks to change on an existing object, beyond create and delete.
struct object_action {
  enum class type {
    cordon,        // node: unschedulable = true
    uncordon,      // node: unschedulable = false
    suspend,       // job
    resume,        // job
    open,          // queue
    close,         // queue
    fail_pod,      // standalone simulation: the pod fails now
  };
  type kind;
};
std::string_view to_string(object_action::type t) noexcept;

/// How a create or update is made. `dry_run` (?dryRun=All): every check runs, and the answer is
/// the object as it would be stored; nothing is stored, reserved or scheduled.
struct write_options {
  bool dry_run = false;
  /// A delete's DeleteOptions.gracePeriodSeconds (?gracePeriodSeconds=N): how long a bound pod
  /// may take to stop. Unset: the pod's own terminationGracePeriodSeconds (30 by default); 0:
  /// removed at once (`kubectl delete --grace-period=0 --force`). Other kinds ignore it.
  std::optional<int64_t> grace_period_seconds;
};

class service {
 public:
  using object_callback = std::function<void(result<object>)>;
  using list_callback = std::function<void(result<object_list>)>;
  using events_callback = std::function<void(result<std::vector<scheduler::event>>)>;
  using all_events_callback = std::function<void(result<event_list>)>;
  using event_changes_callback = std::function<void(result<event_change_list>)>;

  virtual ~service() = default;

  /// Creates an object that the API has decoded and validated. Fails with already_exists,
  /// not_found (unknown queue), failed_precondition (closed queue), invalid_argument (rules that
  /// need runtime state, such as a pod joining a gang in another queue), unavailable (not ready).
  /// Calls back with the stored object (uid, resource_version, creation_time filled in).
  virtual void create(object obj, const write_options& options, object_callback done) = 0;
  void create(object obj, object_callback done) { create(std::move(obj), {}, std::move(done)); }

  virtual void get(resource_kind kind, std::string namespace_name, std::string name,
                   object_callback done) = 0;

  /// The objects of a kind that `options` select, in (namespace, name) order; one page of them
  /// when `options.page` says so (api/list_page.hpp finds a page's end). Fails with
  /// failed_precondition when `options.page.first_version` is too old (list_page), and with
  /// unavailable.
  virtual void list(resource_kind kind, list_options options, list_callback done) = 0;

  /// Deletes an object; a job deletes its PodGroup and pods, a PodGroup does not delete its pods.
  /// Calls back with the object as it was.
  /// Dry run: every check of the delete runs, and the answer is the object as it is.
  virtual void remove(resource_kind kind, std::string namespace_name, std::string name,
                      const write_options& options, object_callback done) = 0;
  void remove(resource_kind kind, std::string namespace_name, std::string name,
              object_callback done) {
    remove(kind, std::move(namespace_name), std::move(name), {}, std::move(done));
  }

  /// Takes the changes of `obj` to the stored object of the same kind, namespace and name: a
  /// PUT or PATCH, already made whole, checked and validated by the API (api/update.hpp).
  /// `obj.meta.resource_version`, when not 0, must be the stored one (else conflict: HTTP 409);
  /// another change of the object on its way to the store is a conflict too. What may change
  /// given the object's state is the service's to say (a pod's labels and its gates' removal; a
  /// node's labels, taints and unschedulable; a queue's spec; a PodGroup's spec, its queue only
  /// before a pod of it is bound); anything else fails with invalid_argument naming the field,
  /// or failed_precondition when the object's state forbids it now. An update that changes
  /// nothing keeps the object's version. Calls back with the object as stored.
  virtual void update(object obj, const write_options& options, object_callback done) = 0;
  void update(object obj, object_callback done) { update(std::move(obj), {}, std::move(done)); }

  /// Applies an action; calls back with the changed object.
  virtual void act(resource_kind kind, std::string namespace_name, std::string name,
                   object_action action, object_callback done) = 0;

  /// The events recorded about an object, oldest first.
  virtual void events(resource_kind kind, std::string namespace_name, std::string name,
                      events_callback done) = 0;

  /// Every event the service keeps, of every object (also of objects since deleted whose events
  /// it still keeps), each as `events` gives it for its object (made-up ones included, such as
  /// a bound pod's Scheduled). Ordered by object (kind, namespace, name), then oldest first.
  /// The list's resource_version is the events' own (event_journal), from which event_changes
  /// continues. Fails only with unavailable.
  virtual void all_events(all_events_callback done) = 0;

  /// The changes of the events after `from`, a version all_events or an earlier call gave;
  /// from 0, every event kept, as ADDED. Fails with failed_precondition ("too old resource
  /// version") when the changes after `from` are no longer all known, and with unavailable.
  virtual void event_changes(uint64_t from, event_changes_callback done) = 0;

  /// Streams changes of a collection after `resource_version` (0: from now, after sending the
  /// current objects as ADDED, like a Kubernetes watch without a version).
  virtual watch_handle watch(resource_kind kind, list_options options, uint64_t resource_version,
                             std::shared_ptr<watch_sink> sink) = 0;

  /// True once restart recovery finished and the runtime schedules (`/readyz`); false again
  /// once failure() is set.
  virtual bool ready() const = 0;

  /// Empty while the service works; else why it cannot any more (a vital part of it stopped,
  /// such as the actor behind every call): `/readyz` and `/healthz` then answer 503 with it, so
  /// that a prober restarts the process rather than send it requests that can never be answered.
  virtual std::string failure() const { return {}; }

  /// The runtime's metrics in Prometheus text format (the HTTP server appends its own).
  virtual std::string metrics_text() const = 0;
};

} // namespace phalanx::api
