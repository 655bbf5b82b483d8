#pragma once

// core/v1 Events as kube-apiserver serves them, made from the events the service records about
// its objects (issue 30): their JSON, their field selectors and their Table. Read-only: phalanxd
// records events itself and takes none from clients.

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

/// What every Event served names as its source.component and reportingComponent (its
/// reportingInstance is "phalanxd").
inline constexpr std::string_view event_component = "phalanx";

/// The namespace an event of an object lives in: the object's, or "default" for a cluster-scoped
/// object (as kubelet's events about nodes do).
std::string event_namespace(const object_event& e);

/// The event's metadata.name: "<object name>.<16 hex digits>", the same for one event (its
/// object, type, reason and first time) however often it is read, and for its count bumps.
std::string event_name(const object_event& e);

/// The core/v1 Event. `resource_version`: the service state's version it was read at.
boost::json::value encode_event(const object_event& e, uint64_t resource_version);

/// A core/v1 EventList of `events`, at `resource_version`.
boost::json::value encode_event_list(const std::vector<object_event>& events,
                                     uint64_t resource_version);

/// One term of an events fieldSelector: `field` equal (= or ==) or not (!=) to `value`.
struct event_field_term {
  std::string field;  // One of event_selectable_fields().
  std::string value;
  bool negated = false;
};

/// The fields kube-apiserver selects events by (involvedObject.kind, ..., metadata.namespace).
std::span<const std::string_view> event_selectable_fields() noexcept;

/// Parses a fieldSelector for events as kube-apiserver does: terms separated by commas, each
/// `field=value`, `field==value` or `field!=value`, with `\,` `\=` `\!` `\\` escapes in values.
/// Fails with invalid_argument: "invalid selector: ..." for a term without an operator, and
/// "field label not supported: <field>" (kube-apiserver's words) for a field it does not select
/// events by.
result<std::vector<event_field_term>> parse_event_field_selector(std::string_view text);

/// The value a field selector reads of an event (for one of event_selectable_fields()).
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
/// changed is MODIFIED. An event that leaves (its object's oldest, past the number kept) is not
/// reported. Not thread-safe; one per watch.
class event_changes {
 public:
  using change = std::pair<watch_event::type, object_event>;
  /// `from_now`: the first snapshot is where the watch starts (a watch from a list's
  /// resourceVersion) and yields nothing; otherwise its events come as ADDED, as a watch from
  /// resourceVersion 0 starts.
  explicit event_changes(bool from_now) : from_now_(from_now) {}
  /// The changes since the last snapshot, in the snapshot's order.
  std::vector<change> next(std::vector<object_event> snapshot);

 private:
  bool from_now_;
  bool started_ = false;
  std::map<std::string, std::pair<int32_t, scheduler::timestamp>> seen_;  // name -> count, last.
};

/// kube-apiserver's Table of Events: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and with -o wide
/// SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME. Rows carry the object as `options.include` says.
boost::json::value encode_event_table(const std::vector<object_event>& events,
                                      uint64_t resource_version, const table_options& options);

} // namespace phalanx::api
