#include "api/events.hpp"

#include "api/codec.hpp"
#include "api/json_mapper.hpp"
#include "api/kinds.hpp"
#include "scheduler/validation.hpp"

#include "api/proto/meta.pb.h"

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

namespace phalanx::api {

namespace json = boost::json;

namespace {

// FNV-1a over the texts that make an event the one it is, each ended by a NUL so that
// ("ab", "c") and ("a", "bc") differ. `seed` gives independent hashes for the uid's two halves.
uint64_t event_hash(const object_event& e, uint64_t seed) {
  uint64_t h = 14695981039346656037ull ^ seed;
  auto mix = [&h](std::string_view text) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  mix(info(e.kind).kind_name);
  mix(e.namespace_name);
  mix(e.name);
  mix(e.event.type);
  mix(e.event.reason);
  mix(e.event.message);  // Two events at one time differ by their words (a count bump keeps them).
  mix(std::to_string(e.event.first_time.time_since_epoch().count()));
  return h;
}

std::string hex16(uint64_t v) {
  std::array<char, 17> out{};
  std::snprintf(out.data(), out.size(), "%016llx", static_cast<unsigned long long>(v));
  return std::string(out.data(), 16);
}

// A UUID's shape (8-4-4-4-12 hex digits), stable per event.
std::string event_uid(const object_event& e) {
  std::string hex = hex16(event_hash(e, 0x5bd1e995)) + hex16(event_hash(e, 0x27d4eb2f));
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

// A time as the LAST SEEN and FIRST SEEN columns show it: how long ago; `<unknown>` when the
// event has none (kube-apiserver's translateTimestampSince).
std::string seen(std::string_view time, scheduler::timestamp now) {
  auto t = parse_time(time);
  return !t || *t == scheduler::timestamp{} ? std::string("<unknown>") : human_duration(now - *t);
}

constexpr std::array<std::string_view, 13> core_fields = {
  "involvedObject.kind",       "involvedObject.namespace", "involvedObject.name",
  "involvedObject.uid",        "involvedObject.apiVersion", "involvedObject.resourceVersion",
  "involvedObject.fieldPath",  "reason",                   "reportingComponent",
  "source",                    "type",                     "metadata.name",
  "metadata.namespace"};

// events.k8s.io/v1's selectable fields, each with the core/v1 field it reads (kube-apiserver's
// field label conversion for that version; 1.37 has no `source` there).
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> events_v1_fields = {{
  {"regarding.kind", "involvedObject.kind"},
  {"regarding.namespace", "involvedObject.namespace"},
  {"regarding.name", "involvedObject.name"},
  {"regarding.uid", "involvedObject.uid"},
  {"regarding.apiVersion", "involvedObject.apiVersion"},
  {"regarding.resourceVersion", "involvedObject.resourceVersion"},
  {"regarding.fieldPath", "involvedObject.fieldPath"},
  {"reason", "reason"},
  {"reportingController", "reportingComponent"},
  {"type", "type"},
  {"metadata.name", "metadata.name"},
  {"metadata.namespace", "metadata.namespace"},
}};

constexpr std::array<std::string_view, 12> events_v1_names = [] {
  std::array<std::string_view, 12> out{};
  for (std::size_t i = 0; i < events_v1_fields.size(); ++i)
    out[i] = events_v1_fields[i].first;
  return out;
}();

// The core/v1 field a selector's field of `version` reads; nullopt when it selects none.
std::optional<std::string_view> core_field(std::string_view field, event_version version) {
  switch (version) {
    case event_version::core_v1:
      if (std::find(core_fields.begin(), core_fields.end(), field) != core_fields.end())
        return field;
      return std::nullopt;
    case event_version::events_v1:
      for (const auto& [name, core] : events_v1_fields)
        if (name == field)
          return core;
      return std::nullopt;
  }
  return std::nullopt;
}

// The string at `path` of a JSON object; empty when absent or not a string.
std::string_view text_at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* at = &v;
  for (auto key : path) {
    const auto* o = at->if_object();
    if (o == nullptr)
      return {};
    at = o->if_contains(key);
    if (at == nullptr)
      return {};
  }
  const auto* s = at->if_string();
  return s == nullptr ? std::string_view() : std::string_view(*s);
}

// The first non-empty of two strings.
std::string_view first_set(std::string_view a, std::string_view b) {
  return a.empty() ? b : a;
}

// The first unescaped operator of a term: (position, operator); npos when there is none.
std::pair<std::size_t, std::string_view> find_operator(std::string_view term) {
  for (std::size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '\\') {
      ++i;
      continue;
    }
    for (std::string_view op : {"!=", "==", "="})
      if (term.substr(i, op.size()) == op)
        return {i, op};
  }
  return {std::string_view::npos, {}};
}

// A value's `\\`, `\,` and `\=` escapes undone; an unescaped `,` or `=`, or another escape,
// fails as kube-apiserver's fields.UnescapeValue does.
result<std::string> unescape_value(std::string_view value) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '\\') {
      if (i + 1 >= value.size() ||
          (value[i + 1] != '\\' && value[i + 1] != ',' && value[i + 1] != '='))
        return status{errc::invalid_argument,
                      "invalid field selector: invalid escape sequence: " +
                        std::string(value.substr(i, 2))};
      out += value[++i];
    } else if (c == ',' || c == '=') {
      return status{errc::invalid_argument,
                    "invalid field selector: unescaped character in value: " + std::string(1, c)};
    } else {
      out += c;
    }
  }
  return out;
}

// The terms of a selector: split at commas that are not escaped.
std::vector<std::string_view> split_terms(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == ',') {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(text.substr(start));
  return out;
}

} // namespace

std::string event_namespace(const object_event& e) {
  return e.namespace_name.empty() ? std::string("default") : e.namespace_name;
}

std::string event_name(const object_event& e) {
  return e.name + "." + hex16(event_hash(e, 0));
}

std::string_view to_string(event_version v) noexcept {
  switch (v) {
    case event_version::core_v1:
      return "v1";
    case event_version::events_v1:
      return "events.k8s.io/v1";
  }
  return "v1";
}

namespace {

// `obj` with `key` null right after `after`: Go writes a zero time as null, where proto3 JSON
// leaves an unset string out.
json::object with_null_after(json::object obj, std::string_view after, std::string_view key) {
  json::object out;
  out.reserve(obj.size() + 1);
  for (auto& [k, v] : obj) {
    out.emplace(k, std::move(v));
    if (k == after)
      out.emplace(key, nullptr);
  }
  if (!out.contains(key))
    out.emplace(key, nullptr);
  return out;
}

void fill_metadata(const object_event& e, uint64_t resource_version, v1::ObjectMeta& meta) {
  meta.set_name(event_name(e));
  meta.set_namespace_(event_namespace(e));
  meta.set_uid(event_uid(e));
  if (resource_version != 0)
    meta.set_resource_version(std::to_string(resource_version));
  meta.set_creation_timestamp(format_time(e.event.first_time));
}

void fill_reference(const object_event& e, v1::ObjectReference& ref) {
  const auto& k = info(e.kind);
  ref.set_kind(std::string(k.kind_name));
  ref.set_api_version(std::string(k.api_version));
  ref.set_namespace_(e.namespace_name);
  ref.set_name(e.name);
  ref.set_uid(e.uid);
}

json::object encode_core_v1(const object_event& e, uint64_t resource_version) {
  v1::Event out;
  out.set_kind("Event");
  out.set_api_version(std::string(to_string(event_version::core_v1)));
  fill_metadata(e, resource_version, *out.mutable_metadata());
  fill_reference(e, *out.mutable_involved_object());
  out.set_reason(e.event.reason);
  out.set_message(e.event.message);
  out.mutable_source()->set_component(std::string(event_component));
  out.set_first_timestamp(format_time(e.event.first_time));
  out.set_last_timestamp(format_time(e.event.last_time));
  out.set_count(e.event.count);
  out.set_type(e.event.type);
  out.set_reporting_component(std::string(event_component));
  out.set_reporting_instance(std::string(event_instance));
  // Events a core/v1 recorder made carry a null eventTime.
  return with_null_after(message_to_json(out), "type", "eventTime");
}

json::object encode_events_v1(const object_event& e, uint64_t resource_version) {
  v1::EventsV1Event out;
  out.set_kind("Event");
  out.set_api_version(std::string(to_string(event_version::events_v1)));
  fill_metadata(e, resource_version, *out.mutable_metadata());
  out.set_reporting_controller(std::string(event_component));
  out.set_reporting_instance(std::string(event_instance));
  out.set_reason(e.event.reason);
  fill_reference(e, *out.mutable_regarding());
  out.set_note(e.event.message);
  out.set_type(e.event.type);
  out.mutable_deprecated_source()->set_component(std::string(event_component));
  out.set_deprecated_first_timestamp(format_time(e.event.first_time));
  out.set_deprecated_last_timestamp(format_time(e.event.last_time));
  out.set_deprecated_count(e.event.count);
  // The conversion from core/v1 keeps its null eventTime.
  return with_null_after(message_to_json(out), "metadata", "eventTime");
}

} // namespace

json::value encode_event(const object_event& e, uint64_t resource_version, event_version version) {
  switch (version) {
    case event_version::core_v1:
      return encode_core_v1(e, resource_version);
    case event_version::events_v1:
      return encode_events_v1(e, resource_version);
  }
  return encode_core_v1(e, resource_version);
}

json::value encode_event_list(const std::vector<object_event>& events, uint64_t resource_version,
                              event_version version) {
  json::object out;
  out["kind"] = "EventList";
  out["apiVersion"] = to_string(version);
  json::object meta;
  if (resource_version != 0)
    meta["resourceVersion"] = std::to_string(resource_version);
  out["metadata"] = std::move(meta);
  json::array items;
  items.reserve(events.size());
  for (const auto& e : events)
    items.push_back(encode_event(e, resource_version, version));
  out["items"] = std::move(items);
  return out;
}

std::span<const std::string_view> event_selectable_fields(event_version version) noexcept {
  switch (version) {
    case event_version::core_v1:
      return core_fields;
    case event_version::events_v1:
      return events_v1_names;
  }
  return core_fields;
}

result<std::vector<event_field_term>> parse_event_field_selector(std::string_view text,
                                                                 event_version version) {
  std::vector<event_field_term> out;
  auto terms = split_terms(text);
  // kube-apiserver reads the terms sorted, so the first bad one it names is the first in order.
  std::sort(terms.begin(), terms.end());
  for (auto term : terms) {
    if (term.empty())
      continue;
    auto [at, op] = find_operator(term);
    if (at == std::string_view::npos)
      return status{errc::invalid_argument, "invalid selector: '" + std::string(text) +
                                              "'; can't understand '" + std::string(term) + "'"};
    auto value = unescape_value(term.substr(at + op.size()));
    if (!value)
      return value.error();
    std::string_view field = term.substr(0, at);
    auto core = core_field(field, version);
    if (!core)
      return status{errc::invalid_argument, "field label not supported: " + std::string(field)};
    out.push_back({std::string(*core), std::move(*value), op == "!="});
  }
  return out;
}

std::string event_field(const object_event& e, std::string_view field) {
  const auto& k = info(e.kind);
  if (field == "involvedObject.kind")
    return std::string(k.kind_name);
  if (field == "involvedObject.namespace")
    return e.namespace_name;
  if (field == "involvedObject.name")
    return e.name;
  if (field == "involvedObject.uid")
    return e.uid;
  if (field == "involvedObject.apiVersion")
    return std::string(k.api_version);
  if (field == "reason")
    return e.event.reason;
  if (field == "reportingComponent" || field == "source")
    return std::string(event_component);
  if (field == "type")
    return e.event.type;
  if (field == "metadata.name")
    return event_name(e);
  if (field == "metadata.namespace")
    return event_namespace(e);
  return {};  // involvedObject.resourceVersion and fieldPath: never set.
}

bool event_fields_match(const std::vector<event_field_term>& terms, const object_event& e) {
  return std::all_of(terms.begin(), terms.end(), [&](const event_field_term& t) {
    return (event_field(e, t.field) == t.value) != t.negated;
  });
}

bool event_selection::matches(const object_event& e) const {
  return !none && (namespace_name.empty() || event_namespace(e) == namespace_name) &&
         (!name || event_name(e) == *name) && event_fields_match(fields, e);
}

std::vector<object_event> select_events(std::vector<object_event> events,
                                        const event_selection& selection) {
  std::erase_if(events, [&](const object_event& e) { return !selection.matches(e); });
  std::stable_sort(events.begin(), events.end(), [](const object_event& a, const object_event& b) {
    return std::pair(event_namespace(a), event_name(a)) <
           std::pair(event_namespace(b), event_name(b));
  });
  return events;
}

std::vector<std::pair<watch_event::type, object_event>> diff_events(
  const std::vector<object_event>& before, const std::vector<object_event>& after) {
  std::vector<std::pair<watch_event::type, object_event>> out;
  std::map<std::string, const object_event*> was;
  for (const auto& e : before)
    was.emplace(event_name(e), &e);
  for (const auto& e : after) {
    auto b = was.find(event_name(e));
    if (b == was.end())
      out.emplace_back(watch_event::type::added, e);
    else if (b->second->event.count != e.event.count ||
             b->second->event.last_time != e.event.last_time)
      out.emplace_back(watch_event::type::modified, e);
    if (b != was.end())
      was.erase(b);  // What is left at the end has left.
  }
  for (const auto& e : before)
    if (was.count(event_name(e)) != 0)
      out.emplace_back(watch_event::type::deleted, e);
  return out;
}

void event_journal::start() {
  if (keeping_)
    return;
  keeping_ = true;
  changes_.clear();
  complete_after_ = version_;
}

void event_journal::stop() {
  if (!keeping_)
    return;
  keeping_ = false;
  // A gap: what changes from now on goes unrecorded, so a version given before is too old for
  // the next start, even with no change recorded after it.
  ++version_;
  changes_.clear();
  changes_.shrink_to_fit();
}

void event_journal::add(watch_event::type type, object_event event) {
  if (!keeping_)
    return;
  changes_.push_back({type, std::move(event), ++version_});
  if (changes_.size() > capacity_) {
    complete_after_ = changes_.front().version;
    changes_.pop_front();
  }
}

void event_journal::add_diff(const std::vector<object_event>& before,
                             const std::vector<object_event>& after) {
  if (!keeping_)
    return;
  for (auto& [type, e] : diff_events(before, after))
    add(type, std::move(e));
}

result<event_change_list> event_journal::since(uint64_t from) const {
  if (!keeping_ || from < complete_after_ || from > version_)
    return status{errc::failed_precondition,
                  "too old resource version: " + std::to_string(from) + " (" +
                      (keeping_ ? "the oldest change of events kept is after " +
                                      std::to_string(complete_after_)
                                : std::string("no changes of events are kept now")) +
                      ")"};
  event_change_list out;
  out.resource_version = version_;
  // Versions are consecutive: the change after `from` is at a known place.
  auto first = changes_.begin() + static_cast<std::ptrdiff_t>(from - complete_after_);
  out.items.assign(first, changes_.end());
  return out;
}

std::span<const table_column> event_table_columns() noexcept {
  static constexpr std::array<table_column, 10> columns = {{
    {"Last Seen", "string", "", "The time at which the most recent occurrence of this event was "
                                "recorded.", 0},
    {"Type", "string", "", "Type of this event (Normal, Warning).", 0},
    {"Reason", "string", "", "The reason for the transition into the object's current status.",
     0},
    {"Object", "string", "", "The object that this event is about.", 0},
    {"Subobject", "string", "", "The part of the object the event is about (fieldPath).", 1},
    {"Source", "string", "", "The component reporting this event.", 1},
    {"Message", "string", "", "A human-readable description of the status of this operation.", 0},
    {"First Seen", "string", "", "The time at which the event was first recorded.", 1},
    {"Count", "string", "", "The number of times this event has occurred.", 1},
    {"Name", "string", "name", "The event's name.", 1},
  }};
  return columns;
}

std::vector<json::value> event_table_cells(const json::value& event, scheduler::timestamp now) {
  // Either version's names: core/v1's first, then events.k8s.io/v1's.
  const bool core = text_at(event, {"apiVersion"}) != to_string(event_version::events_v1);
  auto field = [&](std::string_view core_name, std::string_view v1_name) {
    return text_at(event, {core ? core_name : v1_name});
  };
  const json::value* ref = nullptr;
  if (const auto* o = event.if_object())
    ref = o->if_contains(core ? "involvedObject" : "regarding");
  static const json::value no_ref = json::object{};
  const json::value& object = ref != nullptr ? *ref : no_ref;
  std::string kind(text_at(object, {"kind"}));
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  std::string first = seen(field("firstTimestamp", "deprecatedFirstTimestamp"), now);
  if (first == "<unknown>")
    first = seen(text_at(event, {"eventTime"}), now);
  auto last_time = field("lastTimestamp", "deprecatedLastTimestamp");
  std::string last = last_time.empty() ? first : seen(last_time, now);
  int64_t count = 0;
  if (const auto* o = event.if_object())
    if (const auto* c = o->if_contains(core ? "count" : "deprecatedCount"); c && c->is_int64())
      count = c->get_int64();
  if (count == 0)
    count = 1;  // kube-apiserver's printer: an event happened at least once.
  const std::string_view source_key = core ? "source" : "deprecatedSource";
  std::string component(first_set(text_at(event, {source_key, "component"}),
                                  field("reportingComponent", "reportingController")));
  std::string_view instance =
      first_set(text_at(event, {source_key, "host"}), text_at(event, {"reportingInstance"}));
  std::string source = instance.empty() ? component : component + ", " + std::string(instance);
  return {json::value(last),
          json::value(text_at(event, {"type"})),
          json::value(text_at(event, {"reason"})),
          json::value(kind + "/" + std::string(text_at(object, {"name"}))),
          json::value(text_at(object, {"fieldPath"})),
          json::value(source),
          json::value(field("message", "note")),
          json::value(first),
          json::value(count),
          json::value(text_at(event, {"metadata", "name"}))};
}

json::value encode_event_table(const std::vector<object_event>& events,
                               uint64_t resource_version, const table_options& options,
                               event_version version) {
  std::vector<table_row> rows;
  rows.reserve(events.size());
  for (const auto& e : events) {
    auto event = encode_event(e, resource_version, version);
    // kube-apiserver's cells are always the wide ones; kubectl drops priority-1 columns.
    table_row row{event_table_cells(event, options.now), nullptr};
    switch (options.include) {
      case include_object::none:
        break;
      case include_object::metadata:
        row.object = json::object{{"kind", "PartialObjectMetadata"},
                                  {"apiVersion", "meta.k8s.io/v1"},
                                  {"metadata", event.as_object().at("metadata")}};
        break;
      case include_object::object:
        row.object = std::move(event);
        break;
    }
    rows.push_back(std::move(row));
  }
  return make_table(event_table_columns(), std::move(rows), resource_version,
                    options.column_definitions);
}

} // namespace phalanx::api
