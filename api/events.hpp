#pragma once

// Events as kube-apiserver serves them, made from the events the service records about its
// objects (issue 30): core/v1 Events and the same events in events.k8s.io/v1, their JSON, their
// field selectors and their Table. Read-only: phalanxd records events itself and takes none from
// clients.

#include "api/service.hpp"
#include "api/table.hpp"

#include <boost/json/value.hpp>

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
/// object, type, reason and first time) however often it is read, and for its count bumps.
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

/// A watch of events made from successive snapshots (the service keeps no history of events):
/// an event whose name was not in the last snapshot is ADDED, one whose count or last time
/// changed is MODIFIED, and one that left (its object's oldest, past the number kept; a
/// FailedScheduling once its pod is bound; its object deleted) is DELETED, as kube-apiserver's
/// watch says of an Event its TTL ends. Not thread-safe; one per watch.
class event_changes {
 public:
  using change = std::pair<watch_event::type, object_event>;
  /// `from_now`: the first snapshot is where the watch starts (a watch from a list's
  /// resourceVersion) and yields nothing; otherwise its events come as ADDED, as a watch from
  /// resourceVersion 0 starts.
  explicit event_changes(bool from_now) : from_now_(from_now) {}
  /// The changes since the last snapshot: ADDED and MODIFIED in the snapshot's order, then
  /// DELETED (with the event as last seen) in name order.
  std::vector<change> next(std::vector<object_event> snapshot);

 private:
  bool from_now_;
  bool started_ = false;
  std::map<std::string, object_event> seen_;  // By name, as last seen: what a DELETED carries.
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
