#pragma once

// Events as kube-apiserver serves them, made from the events the service records about its
// objects (issue 30): core/v1 Events and the same events in events.k8s.io/v1, their JSON, their
// field selectors and their Table. Read-only: phalanxd records events itself and takes none from
// clients.

#include "api/service.hpp"
#include "api/table.hpp"

#include <boost/json/value.hpp>

#include <deque>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api {

/// What every Event served names as its source.component and reportingComponent (in
/// events.k8s.io/v1: deprecatedSource.component and reportingController).
inline constexpr std::string_view event_component = "phalanx";
/// Every Event's reportingInstance.
inline constexpr std::string_view event_instance = "phalanxd";

/// The versions an event is served in: the same events, named as each version names them.
enum class event_version {
  core_v1,    // /api/v1: involvedObject, message, source, count, firstTimestamp, lastTimestamp.
  events_v1,  // /apis/events.k8s.io/v1: regarding, note, deprecatedSource, deprecatedCount...
};
std::string_view to_string(event_version v) noexcept;  // "v1", "events.k8s.io/v1"
inline constexpr event_version event_version_last = event_version::events_v1;

/// The namespace an event of an object lives in: the object's, or "default" for a cluster-scoped
/// object (as kubelet's events about nodes do).
std::string event_namespace(const object_event& e);

/// The event's metadata.name: "<object name>.<16 hex digits>", the same for one event (its
/// object, type, reason, message and first time) however often it is read, and for its count
/// bumps. Another message is another event, as Kubernetes' recorder aggregates only repeats.
std::string event_name(const object_event& e);

/// The Event in `version`. `resource_version`: the service state's version it was read at.
/// events.k8s.io/v1 is the core/v1 Event as kube-apiserver converts it: regarding (the
/// involvedObject), note (the message), deprecatedSource, deprecatedFirstTimestamp,
/// deprecatedLastTimestamp, deprecatedCount, reportingController (the reportingComponent),
/// reportingInstance, reason, type, and a null eventTime.
boost::json::value encode_event(const object_event& e, uint64_t resource_version,
                                event_version version = event_version::core_v1);

/// An EventList of `events` in `version`, at `resource_version`.
boost::json::value encode_event_list(const std::vector<object_event>& events,
                                     uint64_t resource_version,
                                     event_version version = event_version::core_v1);

/// One term of an events fieldSelector: `field` equal (= or ==) or not (!=) to `value`.
struct event_field_term {
  std::string field;  // One of event_selectable_fields(core_v1): core/v1's name of the field.
  std::string value;
  bool negated = false;
};

/// The fields kube-apiserver selects events of `version` by. core/v1: involvedObject.kind,
/// namespace, name, uid, apiVersion, resourceVersion, fieldPath, reason, reportingComponent,
/// source, type, metadata.name, metadata.namespace. events.k8s.io/v1: the same with regarding.*
/// for involvedObject.* and reportingController for reportingComponent, and no source.
std::span<const std::string_view> event_selectable_fields(
  event_version version = event_version::core_v1) noexcept;

/// Parses a fieldSelector for events of `version` as kube-apiserver does: terms separated by
/// commas, each `field=value`, `field==value` or `field!=value`, with `\,` `\=` `\\` escapes in
/// values. The terms name core/v1's fields (regarding.name is involvedObject.name). Fails with
/// invalid_argument: "invalid selector: ..." for a term without an operator, and "field label not
/// supported: <field>" (kube-apiserver's words) for a field it does not select events of that
/// version by (involvedObject.name in events.k8s.io/v1, regarding.name in core/v1).
result<std::vector<event_field_term>> parse_event_field_selector(
  std::string_view text, event_version version = event_version::core_v1);

/// The value a field selector reads of an event (for one of event_selectable_fields(core_v1)).
std::string event_field(const object_event& e, std::string_view field);

/// True when the event passes every term.
bool event_fields_match(const std::vector<event_field_term>& terms, const object_event& e);

/// What a list or watch of events selects.
struct event_selection {
  std::string namespace_name;            // The Event's (metadata.namespace); empty: every one.
  std::optional<std::string> name;       // An item path's event name.
  std::vector<event_field_term> fields;  // The fieldSelector.
  bool none = false;  // A labelSelector that needs a label: Events here carry none.
  bool matches(const object_event& e) const;
};

/// The selected events of a snapshot, in kube-apiserver's list order (its store's keys: by
/// namespace, then name).
std::vector<object_event> select_events(std::vector<object_event> events,
                                        const event_selection& selection);

/// How the events `before` became `after` (an object's events, or any set, named by
/// event_name): an event whose name is not in `before` is ADDED; one whose count or last time
/// changed is MODIFIED; one that left (its object's oldest, past the number kept; a
/// FailedScheduling once its pod is bound; a bound pod's Scheduled once the pod is deleted) is
/// DELETED with the event as last seen, as kube-apiserver's watch says of an Event its TTL ends.
/// ADDED and MODIFIED come in `after`'s order, then DELETED in `before`'s.
std::vector<std::pair<watch_event::type, object_event>> diff_events(
  const std::vector<object_event>& before, const std::vector<object_event>& after);

/// The changes of the events, each with a version of its own, for watches of events to replay
/// from any version a list or an earlier change gave them (`kubectl get events -w`, an
/// informer's resume). Its versions are its own sequence, not the objects': an event changes
/// with no write to the store. They start from `first_version`, which a service makes unlike
/// any an earlier run of it gave (its start time, shifted), so that a client resuming from a
/// version of another run is told it is too old rather than given this run's changes after it.
///
/// It keeps changes only while `keeping()` (a service keeps them while events are watched or
/// were listed lately, and stops on its own to spend nothing on a scheduling path nobody
/// reads), and at most `capacity` of them: a watch that fell further behind must list again.
class event_journal {
 public:
  event_journal(std::size_t capacity, uint64_t first_version)
      : capacity_(capacity), version_(first_version), complete_after_(first_version) {}

  bool keeping() const noexcept { return keeping_; }
  /// Keeps every change from now on: a watch from version() on gets them all.
  void start();
  /// Forgets the changes kept; a watch from any version before the next start is too old.
  void stop();
  /// The newest change's version (or where keeping started): what a list of the events as they
  /// are now is at.
  uint64_t version() const noexcept { return version_; }
  /// Records a change, under the next version. Nothing while not keeping.
  void add(watch_event::type type, object_event event);
  /// Records how events went from `before` to `after` (diff_events).
  void add_diff(const std::vector<object_event>& before, const std::vector<object_event>& after);
  /// The changes after version `from`, oldest first. Fails with failed_precondition ("too old
  /// resource version: ...", HTTP 410 Expired) when some of them are not kept: dropped for the
  /// capacity, made while not keeping, or of another run; a version above version() is of
  /// another run too.
  result<event_change_list> since(uint64_t from) const;

 private:
  std::size_t capacity_;
  uint64_t version_;
  /// Every change after this version is in changes_.
  uint64_t complete_after_;
  bool keeping_ = false;
  std::deque<event_change> changes_;
};

/// kube-apiserver's columns of a Table of Events, in either version: LAST SEEN, TYPE, REASON,
/// OBJECT, MESSAGE, and with -o wide (priority 1) SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME.
std::span<const table_column> event_table_columns() noexcept;

/// The cells of an Event's row, one per event_table_columns(), from its JSON in either version
/// (as encode_event makes it, or as a client received it): how long ago it last and first
/// happened, its type, reason, object (`pod/web-0`), subobject, source (`phalanx, phalanxd`:
/// the component and the instance), message, count (an integer) and name, as kube-apiserver's
/// printer makes them. A missing field gives an empty cell, a missing time `<unknown>`.
std::vector<boost::json::value> event_table_cells(const boost::json::value& event,
                                                  scheduler::timestamp now);

/// kube-apiserver's Table of Events, the same in both versions but for the objects its rows
/// carry, as `options.include` says, which are of `version`.
boost::json::value encode_event_table(const std::vector<object_event>& events,
                                      uint64_t resource_version, const table_options& options,
                                      event_version version = event_version::core_v1);

} // namespace phalanx::api
