#include "api/codec.hpp"

#include "api/json_mapper.hpp"
#include "api/kinds.hpp"
#include "api/wire.hpp"

#include "scheduler/validation.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>

namespace phalanx::api {

namespace json = boost::json;
using scheduler::timestamp;

// ---------------------------------------------------------------------------------------------
// Text -> JSON values

bool is_valid_utf8(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n)
      return false;
    for (std::size_t k = 1; k < len; ++k) {
      unsigned char cc = s[i + k];
      if ((cc & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

namespace {

api_error too_large(std::size_t size, std::size_t limit) {
  api_error e;
  e.reason = status_reason::request_entity_too_large;
  e.message = "the input is " + std::to_string(size) + " bytes; the limit is " +
              std::to_string(limit) + " bytes";
  return e;
}

std::string position(std::string_view text, std::size_t offset) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Finds a number that is not finite (Boost.JSON reads 1e400 as infinity); false when none.
bool has_non_finite(const json::value& v) {
  switch (v.kind()) {
    case json::kind::double_:
      return !std::isfinite(v.get_double());
    case json::kind::array:
      for (const auto& e : v.get_array())
        if (has_non_finite(e))
          return true;
      return false;
    case json::kind::object:
      for (const auto& kv : v.get_object())
        if (has_non_finite(kv.value()))
          return true;
      return false;
    default:
      return false;
  }
}

std::string_view trim_left(std::string_view s) {
  std::size_t i = 0;
  // Skip a UTF-8 byte order mark and blanks.
  if (s.substr(0, 3) == "\xEF\xBB\xBF")
    i = 3;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
    ++i;
  return s.substr(i);
}

} // namespace

outcome<json::value> parse_json(std::string_view text, const parse_limits& limits) {
  if (text.size() > limits.max_bytes)
    return too_large(text.size(), limits.max_bytes);
  if (trim_left(text).empty())
    return api_error::bad_request("invalid JSON: the body is empty");
  json::parse_options opts;
  opts.max_depth = limits.max_depth;
  json::stream_parser p({}, opts);
  json::error_code ec;
  std::size_t consumed = p.write(text.data(), text.size(), ec);
  if (!ec)
    p.finish(ec);
  if (ec) {
    std::string what;
    if (ec == json::error::too_deep)
      what = "nesting deeper than " + std::to_string(limits.max_depth) + " levels";
    else if (ec == json::error::incomplete)
      what = "the text ends before the value does";
    else if (ec == json::error::extra_data)
      what = "more text after the value";
    else if (!is_valid_utf8(text.substr(0, std::min(text.size(), consumed + 4))))
      what = "invalid UTF-8";
    else
      what = ec.message();
    return api_error::bad_request("invalid JSON at " + position(text, consumed) + ": " + what);
  }
  json::value v = p.release();
  if (has_non_finite(v))
    return api_error::bad_request("invalid JSON: a number is out of range");
  return v;
}

outcome<std::vector<json::value>> parse_manifests(std::string_view text,
                                                  const parse_limits& limits) {
  std::string_view body = trim_left(text);
  if (!body.empty() && (body.front() == '{' || body.front() == '[')) {
    auto v = parse_json(text, limits);
    if (!v)
      return std::move(v).error();
    std::vector<json::value> out;
    if (v->is_array()) {
      for (auto& e : v->get_array())
        out.push_back(std::move(e));
    } else {
      out.push_back(std::move(*v));
    }
    return out;
  }
  return parse_yaml(text, limits);
}

namespace {

json::value sorted_copy(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object: {
      const auto& obj = v.get_object();
      std::vector<const json::key_value_pair*> entries;
      entries.reserve(obj.size());
      for (const auto& kv : obj)
        entries.push_back(&kv);
      std::sort(entries.begin(), entries.end(),
                [](const auto* a, const auto* b) { return a->key() < b->key(); });
      json::object out;
      out.reserve(entries.size());
      for (const auto* kv : entries)
        out.emplace(kv->key(), sorted_copy(kv->value()));
      return out;
    }
    case json::kind::array: {
      json::array out;
      out.reserve(v.get_array().size());
      for (const auto& e : v.get_array())
        out.push_back(sorted_copy(e));
      return out;
    }
    default:
      return v;
  }
}

} // namespace

std::string canonical_json(const json::value& v) {
  return json::serialize(sorted_copy(v));
}

std::string to_json_text(const json::value& v) {
  return json::serialize(v);
}

// ---------------------------------------------------------------------------------------------
// Times

std::string format_time(timestamp t) {
  if (t == timestamp{})
    return {};
  using namespace std::chrono;
  auto secs = floor<seconds>(t);
  auto days = floor<std::chrono::days>(secs);
  year_month_day ymd{days};
  hh_mm_ss hms{secs - days};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", int(ymd.year()),
                unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                int(hms.minutes().count()), int(hms.seconds().count()));
  return buf;
}

namespace {

bool read_digits(std::string_view s, std::size_t& i, std::size_t n, int& out) {
  if (i + n > s.size())
    return false;
  int v = 0;
  for (std::size_t k = 0; k < n; ++k) {
    char c = s[i + k];
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + (c - '0');
  }
  i += n;
  out = v;
  return true;
}

} // namespace

std::optional<timestamp> parse_time(std::string_view s) noexcept {
  using namespace std::chrono;
  std::size_t i = 0;
  int y, mo, d, h, mi, se;
  if (!read_digits(s, i, 4, y) || i >= s.size() || s[i++] != '-' || !read_digits(s, i, 2, mo) ||
      i >= s.size() || s[i++] != '-' || !read_digits(s, i, 2, d) || i >= s.size() ||
      (s[i] != 'T' && s[i] != 't' && s[i] != ' '))
    return std::nullopt;
  ++i;
  if (!read_digits(s, i, 2, h) || i >= s.size() || s[i++] != ':' || !read_digits(s, i, 2, mi) ||
      i >= s.size() || s[i++] != ':' || !read_digits(s, i, 2, se))
    return std::nullopt;
  int64_t frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::size_t digits = 0;
    int64_t scale = 100000000;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (digits < 9) {
        frac_ns += (s[i] - '0') * scale;
        scale /= 10;
      }
      ++digits;
      ++i;
    }
    if (digits == 0)
      return std::nullopt;
  }
  int offset_minutes = 0;
  if (i >= s.size())
    return std::nullopt;
  if (s[i] == 'Z' || s[i] == 'z') {
    ++i;
  } else if (s[i] == '+' || s[i] == '-') {
    int sign = s[i] == '-' ? -1 : 1;
    ++i;
    int oh, om;
    if (!read_digits(s, i, 2, oh) || i >= s.size() || s[i++] != ':' || !read_digits(s, i, 2, om) ||
        oh > 23 || om > 59)
      return std::nullopt;
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (i != s.size())
    return std::nullopt;
  year_month_day ymd{year{y}, month{unsigned(mo)}, day{unsigned(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60)
    return std::nullopt;
  auto t = sys_days{ymd} + hours{h} + minutes{mi} + seconds{se} - minutes{offset_minutes};
  // Nanoseconds since the epoch in 64 bits reach from 1677 to 2262: a time outside is refused,
  // never wrapped (found by the mutation fuzzer).
  constexpr int64_t limit_seconds = std::numeric_limits<int64_t>::max() / 1'000'000'000 - 1;
  if (t.time_since_epoch().count() > limit_seconds || t.time_since_epoch().count() < -limit_seconds)
    return std::nullopt;
  return timestamp{duration_cast<nanoseconds>(t.time_since_epoch()) + nanoseconds{frac_ns}};
}

std::string human_duration(scheduler::duration d) {
  using namespace std::chrono;
  int64_t secs = duration_cast<seconds>(d).count();
  if (secs < -1)
    return "<invalid>";
  if (secs < 0)
    return "0s";
  if (secs < 60 * 2)
    return std::to_string(secs) + "s";
  int64_t mins = secs / 60;
  if (mins < 10) {
    int64_t s = secs % 60;
    return s == 0 ? std::to_string(mins) + "m" : std::to_string(mins) + "m" + std::to_string(s) + "s";
  }
  if (mins < 60 * 3)
    return std::to_string(mins) + "m";
  int64_t hrs = secs / 3600;
  if (hrs < 8) {
    int64_t m = mins % 60;
    return m == 0 ? std::to_string(hrs) + "h" : std::to_string(hrs) + "h" + std::to_string(m) + "m";
  }
  if (hrs < 48)
    return std::to_string(hrs) + "h";
  if (hrs < 24 * 8) {
    int64_t h = hrs % 24;
    return h == 0 ? std::to_string(hrs / 24) + "d"
                  : std::to_string(hrs / 24) + "d" + std::to_string(h) + "h";
  }
  if (hrs < 24 * 365 * 2)
    return std::to_string(hrs / 24) + "d";
  if (hrs < 24 * 365 * 8) {
    int64_t dy = (hrs / 24) % 365;
    return dy == 0 ? std::to_string(hrs / 24 / 365) + "y"
                   : std::to_string(hrs / 24 / 365) + "y" + std::to_string(dy) + "d";
  }
  return std::to_string(hrs / 24 / 365) + "y";
}

// ---------------------------------------------------------------------------------------------
// JSON values -> objects

namespace {

std::string_view string_member(const json::object& o, std::string_view name) {
  if (const auto* v = o.if_contains(name); v != nullptr && v->is_string())
    return v->get_string();
  return {};
}

std::string object_name(const json::object& o) {
  if (const auto* md = o.if_contains("metadata"); md != nullptr && md->is_object())
    return std::string(string_member(md->get_object(), "name"));
  return {};
}

template <class Message, class Read>
outcome<object> decode_as(const json::value& v, const decode_options& options,
                          const kind_info& k, Read read) {
  Message msg;
  scheduler::field_errors errors;
  json_to_message(v, msg, "", errors, options.unknown_fields);
  wire::reader r{options.read_status, errors};
  auto obj = read(msg, v, r);
  if (options.validate && errors.empty()) {
    scheduler::field_errors model_errors;
    std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, pod_object>)
          model_errors = scheduler::validate(o.pod);
        else if constexpr (std::is_same_v<T, node_object>)
          model_errors = scheduler::validate(o.node);
        else if constexpr (std::is_same_v<T, pod_group_object>)
          model_errors = scheduler::validate(o.group);
        else if constexpr (std::is_same_v<T, queue_object>)
          model_errors = scheduler::validate(o.queue);
        else if constexpr (std::is_same_v<T, priority_class_object>)
          model_errors = scheduler::validate(o.priority_class);
        else
          model_errors = scheduler::validate(o.job);
      },
      obj);
    errors = std::move(model_errors);
  }
  if (!errors.empty()) {
    auto e = api_error::invalid(k.qualified_kind, object_name(v.get_object()), errors);
    e.kind = std::string(k.plural);
    e.group = std::string(k.group);
    return e;
  }
  return obj;
}

} // namespace

outcome<object> decode_object(const json::value& v, const decode_options& options) {
  if (!v.is_object())
    return api_error::bad_request("the object must be a JSON object, not " +
                                  std::string(v.is_array() ? "an array" : "a scalar"));
  const auto& o = v.get_object();
  std::string_view api_version = string_member(o, "apiVersion");
  std::string_view kind = string_member(o, "kind");
  if (kind.empty())
    return api_error::bad_request("Object 'Kind' is missing: every object needs \"kind\"");
  if (api_version.empty())
    return api_error::bad_request("Object 'apiVersion' is missing: every object needs "
                                  "\"apiVersion\"");
  auto rk = kind_of(api_version, kind);
  if (!rk) {
    std::string msg = "no kind " + scheduler::go_quote(kind) + " is registered for version " +
                      scheduler::go_quote(api_version) + ": Phalanx serves ";
    bool first = true;
    for (const auto& k : all_kinds()) {
      if (!first)
        msg += ", ";
      first = false;
      msg += std::string(k.api_version) + " " + std::string(k.kind_name);
    }
    return api_error::bad_request(std::move(msg));
  }
  if (options.expected_kind && *options.expected_kind != *rk) {
    const auto& want = info(*options.expected_kind);
    return api_error::bad_request("the object's kind " + std::string(kind) + " (" +
                                  std::string(api_version) + ") does not match the request, " +
                                  "which is for " + std::string(want.plural) + " (" +
                                  std::string(want.api_version) + " " +
                                  std::string(want.kind_name) + ")");
  }
  const auto& k = info(*rk);
  if (k.namespaced && !options.default_namespace.empty()) {
    const auto* md = o.if_contains("metadata");
    const json::value* ns = md != nullptr && md->is_object() ? md->get_object().if_contains("namespace")
                                                              : nullptr;
    if (ns == nullptr || (ns->is_string() && ns->get_string().empty()) || ns->is_null()) {
      json::value copy = v;
      auto& obj = copy.as_object();
      auto& meta = obj["metadata"];
      if (!meta.is_object())
        meta = json::object{};
      meta.as_object()["namespace"] = options.default_namespace;
      decode_options rest = options;
      rest.default_namespace.clear();
      return decode_object(copy, rest);
    }
  }
  switch (*rk) {
    case resource_kind::pod:
      return decode_as<v1::Pod>(v, options, k, [](const v1::Pod& m, const json::value& raw,
                                                   wire::reader& r) -> object {
        return wire::read_pod(m, raw, r);
      });
    case resource_kind::node:
      return decode_as<v1::Node>(
        v, options, k,
        [](const v1::Node& m, const json::value&, wire::reader& r) -> object {
          return wire::read_node(m, r);
        });
    case resource_kind::pod_group:
      return decode_as<v1::PodGroup>(
        v, options, k,
        [](const v1::PodGroup& m, const json::value&, wire::reader& r) -> object {
          return wire::read_pod_group(m, r);
        });
    case resource_kind::queue:
      return decode_as<v1::Queue>(
        v, options, k,
        [](const v1::Queue& m, const json::value&, wire::reader& r) -> object {
          return wire::read_queue(m, r);
        });
    case resource_kind::job:
      return decode_as<v1::Job>(v, options, k, [](const v1::Job& m, const json::value& raw,
                                                   wire::reader& r) -> object {
        return wire::read_job(m, raw, r);
      });
    case resource_kind::priority_class:
      return decode_as<v1::PriorityClass>(
        v, options, k,
        [](const v1::PriorityClass& m, const json::value&, wire::reader& r) -> object {
          return wire::read_priority_class(m, r);
        });
  }
  return api_error::bad_request("unknown kind");
}

outcome<std::vector<object>> decode_manifests(std::string_view text,
                                              const decode_options& options,
                                              const parse_limits& limits) {
  auto docs = parse_manifests(text, limits);
  if (!docs)
    return std::move(docs).error();
  std::vector<object> out;
  std::size_t doc_index = 0;
  auto add = [&](const json::value& v) -> std::optional<api_error> {
    auto obj = decode_object(v, options);
    if (!obj) {
      api_error e = obj.error();
      if (docs->size() > 1)
        e.message = "document " + std::to_string(doc_index + 1) + ": " + e.message;
      return e;
    }
    out.push_back(std::move(*obj));
    return std::nullopt;
  };
  for (const auto& doc : *docs) {
    if (doc.is_object()) {
      std::string_view kind = string_member(doc.get_object(), "kind");
      if (kind == "List" || (kind.size() > 4 && kind.ends_with("List"))) {
        const auto* items = doc.get_object().if_contains("items");
        if (items != nullptr && items->is_array()) {
          for (const auto& item : items->get_array()) {
            if (auto e = add(item))
              return std::move(*e);
          }
        }
        ++doc_index;
        continue;
      }
    }
    if (auto e = add(doc))
      return std::move(*e);
    ++doc_index;
  }
  return out;
}

outcome<object_list> decode_list(const json::value& v, resource_kind kind) {
  v1::List list;
  scheduler::field_errors errors;
  json_to_message(v, list, "", errors);
  if (!errors.empty())
    return api_error::invalid("List", "", errors);
  object_list out;
  if (!list.metadata().resource_version().empty()) {
    const auto& rv = list.metadata().resource_version();
    auto r = std::from_chars(rv.data(), rv.data() + rv.size(), out.resource_version);
    if (r.ec != std::errc{})
      out.resource_version = 0;
  }
  if (!v.is_object())
    return api_error::bad_request("a list must be a JSON object");
  const auto* items = v.get_object().if_contains("items");
  if (items == nullptr || items->is_null())
    return out;
  if (!items->is_array())
    return api_error::bad_request("a list's items must be an array");
  decode_options options;
  options.expected_kind = kind;
  options.validate = false;  // What a server sent is valid by construction; do not refuse to show.
  for (const auto& item : items->get_array()) {
    auto obj = decode_object(item, options);
    if (!obj)
      return std::move(obj).error();
    out.items.push_back(std::move(*obj));
  }
  return out;
}

outcome<watch_event> decode_watch_event(const json::value& v, resource_kind kind) {
  if (!v.is_object())
    return api_error::bad_request("a watch event must be a JSON object");
  const auto& o = v.get_object();
  std::string_view type = string_member(o, "type");
  const auto* obj = o.if_contains("object");
  if (type == "ERROR")
    return obj != nullptr ? decode_status(*obj, 500) : api_error::bad_request("empty ERROR event");
  watch_event e;
  if (type == "ADDED")
    e.kind = watch_event::type::added;
  else if (type == "MODIFIED")
    e.kind = watch_event::type::modified;
  else if (type == "DELETED")
    e.kind = watch_event::type::deleted;
  else
    return api_error::bad_request("unknown watch event type " + scheduler::go_quote(type));
  if (obj == nullptr)
    return api_error::bad_request("a watch event needs an object");
  decode_options options;
  options.expected_kind = kind;
  options.validate = false;
  auto decoded = decode_object(*obj, options);
  if (!decoded)
    return std::move(decoded).error();
  e.obj = std::move(*decoded);
  return e;
}

api_error decode_status(const json::value& v, int http_code) {
  v1::Status st;
  scheduler::field_errors errors;
  json_to_message(v, st, "", errors);
  api_error e;
  if (!errors.empty() || st.kind() != "Status") {
    e.reason = status_reason::internal_error;
    e.message = "the server answered " + std::to_string(http_code) + " without a Status body";
    return e;
  }
  e.message = st.message();
  bool found = false;
  for (int i = 0; i <= static_cast<int>(status_reason_last); ++i) {
    auto r = static_cast<status_reason>(i);
    if (to_string(r) == st.reason()) {
      e.reason = r;
      found = true;
      break;
    }
  }
  if (!found) {
    int code = st.code() != 0 ? st.code() : http_code;
    e.reason = status_reason::internal_error;
    for (int i = 0; i <= static_cast<int>(status_reason_last); ++i) {
      auto r = static_cast<status_reason>(i);
      if (api::http_code(r) == code) {
        e.reason = r;
        break;
      }
    }
  }
  e.kind = st.details().kind();
  e.group = st.details().group();
  e.name = st.details().name();
  for (const auto& c : st.details().causes())
    e.causes.push_back({c.reason(), c.message(), c.field()});
  return e;
}

// ---------------------------------------------------------------------------------------------
// Objects -> JSON values

namespace {

json::value parse_kept(std::string_view text) {
  json::error_code ec;
  json::parse_options opts;
  opts.max_depth = 1024;  // Kept by us after the limits applied.
  auto v = json::parse(text, ec, {}, opts);
  if (ec || !v.is_object())
    return json::object{};
  return v;
}

// The displayed spec of a pod: the user's spec with what the runtime sets laid over it.
void overlay_pod_spec(json::object& spec, const scheduler::pod& p) {
  if (!p.node_name.empty())
    spec["nodeName"] = p.node_name.view();
  if (!p.scheduler_name.empty())
    spec["schedulerName"] = p.scheduler_name.view();
  if (p.priority != 0)
    spec["priority"] = p.priority;
}

json::object object_json(const google::protobuf::Message& m) {
  return message_to_json(m);
}

// wire::write_pod shows the one container of the spec it writes; a pod whose own spec is kept
// shows a status per container of that spec, under its name. The pod's restarts are on the first
// one, the container the simulated kubelet restarts; kubectl and phalanxctl sum them.
void name_container_statuses(json::object& pod) {
  auto* status = pod.if_contains("status");
  auto* spec = pod.if_contains("spec");
  if (status == nullptr || !status->is_object() || spec == nullptr || !spec->is_object())
    return;
  auto* written = status->as_object().if_contains("containerStatuses");
  const auto* containers = spec->as_object().if_contains("containers");
  if (written == nullptr || !written->is_array() || written->as_array().size() != 1 ||
      containers == nullptr || !containers->is_array() || containers->as_array().empty())
    return;
  const json::object first = written->as_array().front().as_object();
  json::array statuses;
  for (const auto& c : containers->as_array()) {
    json::object one = first;
    const auto* name = c.is_object() ? c.as_object().if_contains("name") : nullptr;
    one["name"] = name != nullptr && name->is_string() ? *name : json::value("");
    if (!statuses.empty())
      one["restartCount"] = 0;
    statuses.push_back(std::move(one));
  }
  *written = std::move(statuses);
}

} // namespace

json::value encode_object(const object& o) {
  return std::visit(
    [](const auto& x) -> json::value {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, pod_object>) {
        json::object out = object_json(wire::write_pod(x));
        if (x.pod.spec_json) {
          json::value spec = parse_kept(x.pod.spec_json);
          overlay_pod_spec(spec.as_object(), x.pod);
          out["spec"] = std::move(spec);
          name_container_statuses(out);
        }
        return out;
      } else if constexpr (std::is_same_v<T, node_object>) {
        return object_json(wire::write_node(x));
      } else if constexpr (std::is_same_v<T, pod_group_object>) {
        return object_json(wire::write_pod_group(x));
      } else if constexpr (std::is_same_v<T, queue_object>) {
        return object_json(wire::write_queue(x));
      } else if constexpr (std::is_same_v<T, priority_class_object>) {
        return object_json(wire::write_priority_class(x));
      } else {
        json::object out = object_json(wire::write_job(x));
        const auto& j = x.job;
        if (j.spec_json) {
          json::value spec = parse_kept(j.spec_json);
          auto& s = spec.as_object();
          // Volcano's admission defaults, as `get -o yaml` shows them after its webhook.
          s["queue"] = j.queue;
          s["maxRetry"] = j.max_retry;
          if (j.min_available)
            s["minAvailable"] = *j.min_available;
          if (!j.scheduler_name.empty())
            s["schedulerName"] = j.scheduler_name;
          if (!j.priority_class_name.empty())
            s["priorityClassName"] = j.priority_class_name;
          // The claims' names, as Volcano's controller writes a generated one into the spec.
          if (auto* volumes = s.if_contains("volumes"); volumes != nullptr && volumes->is_array())
            for (std::size_t i = 0; i < volumes->as_array().size() && i < j.volumes.size(); ++i)
              if (auto& v = volumes->as_array()[i];
                  v.is_object() && !j.volumes[i].volume_claim_name.empty())
                v.as_object()["volumeClaimName"] = j.volumes[i].volume_claim_name;
          out["spec"] = std::move(spec);
        } else if (auto* spec = out.if_contains("spec"); spec != nullptr && spec->is_object()) {
          // Tasks whose template kept its spec show it.
          auto* tasks = spec->as_object().if_contains("tasks");
          if (tasks != nullptr && tasks->is_array()) {
            auto& arr = tasks->as_array();
            for (std::size_t i = 0; i < arr.size() && i < j.tasks.size(); ++i) {
              const auto& tpl = j.tasks[i].pod_template;
              if (!tpl.spec_json || !arr[i].is_object())
                continue;
              auto* t = arr[i].as_object().if_contains("template");
              if (t != nullptr && t->is_object())
                t->as_object()["spec"] = parse_kept(tpl.spec_json);
            }
          }
        }
        return out;
      }
    },
    o);
}

json::value encode_list(resource_kind kind, const object_list& list) {
  const auto& k = info(kind);
  json::object out;
  out["kind"] = k.list_kind;
  out["apiVersion"] = k.api_version;
  out["metadata"] = json::object{{"resourceVersion", std::to_string(list.resource_version)}};
  json::array items;
  items.reserve(list.items.size());
  for (const auto& o : list.items)
    items.push_back(encode_object(o));
  out["items"] = std::move(items);
  return out;
}

json::value encode_watch_event(const watch_event& e) {
  json::object out;
  out["type"] = to_string(e.kind);
  out["object"] = encode_object(e.obj);
  return out;
}

json::value encode_error_event(const api_error& e) {
  json::object out;
  out["type"] = "ERROR";
  out["object"] = encode_status(e);
  return out;
}

json::value encode_status(const api_error& e) {
  v1::Status st;
  st.set_kind("Status");
  st.set_api_version("v1");
  st.mutable_metadata()->set_continue_(e.continue_token);
  st.set_status("Failure");
  st.set_message(e.message);
  st.set_reason(std::string(to_string(e.reason)));
  if (!e.kind.empty() || !e.name.empty() || !e.group.empty() || !e.causes.empty()) {
    auto* d = st.mutable_details();
    d->set_name(e.name);
    d->set_group(e.group);
    d->set_kind(e.kind);
    for (const auto& c : e.causes) {
      auto* cause = d->add_causes();
      cause->set_reason(c.reason);
      cause->set_message(c.message);
      cause->set_field(c.field);
    }
  }
  st.set_code(e.code());
  return message_to_json(st);
}

json::value encode_success_status(std::string_view message) {
  json::object out;
  out["kind"] = "Status";
  out["apiVersion"] = "v1";
  out["metadata"] = json::object{};
  out["status"] = "Success";
  if (!message.empty())
    out["message"] = message;
  out["code"] = 200;
  return out;
}

int64_t termination_grace_seconds(const scheduler::pod& p) {
  if (p.spec_json.empty())
    return scheduler::default_termination_grace_seconds;
  boost::system::error_code ec;
  auto spec = json::parse(p.spec_json.view(), ec);
  if (ec || !spec.is_object())
    return scheduler::default_termination_grace_seconds;
  // Validated at creation (api/wire.cpp): absent, or an integer of at least 0.
  const auto* grace = spec.get_object().if_contains("terminationGracePeriodSeconds");
  if (grace != nullptr && grace->is_int64() && grace->get_int64() >= 0)
    return grace->get_int64();
  if (grace != nullptr && grace->is_uint64())
    return int64_t(std::min<uint64_t>(grace->get_uint64(),
                                      uint64_t(std::numeric_limits<int64_t>::max())));
  return scheduler::default_termination_grace_seconds;
}

} // namespace phalanx::api
