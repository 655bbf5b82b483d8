#include "api/json_mapper.hpp"

#include "api/proto/meta.pb.h"

#include <boost/json.hpp>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <variant>

namespace phalanx::api {

namespace json = boost::json;
namespace pb = google::protobuf;

namespace {

using scalar = std::variant<int64_t, uint64_t, double, bool, std::string>;

scheduler::field_error bad_value(std::string path, std::string rendered, std::string detail) {
  return {scheduler::field_error_type::invalid, std::move(path), std::move(rendered),
          std::move(detail)};
}

std::string child_path(const std::string& path, std::string_view name) {
  if (path.empty())
    return std::string(name);
  std::string out = path;
  out += '.';
  out += name;
  return out;
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + '[' + std::to_string(i) + ']';
}

std::string key_path(const std::string& path, std::string_view key) {
  std::string out = path;
  out += '[';
  out += key;
  out += ']';
  return out;
}

bool is_raw_json(const pb::Descriptor* d) {
  return d->options().GetExtension(phalanx::api::v1::raw_json);
}

bool is_json_array(const pb::Descriptor* d) {
  return d->options().GetExtension(phalanx::api::v1::json_array) && d->field_count() == 1 &&
         d->field(0)->is_repeated();
}

// A key of a JSON object that is no field of message `d`'s API type: only a message that maps
// its whole type (strict_fields) can tell.
bool is_unknown_key(const pb::Descriptor* d, std::string_view key) {
  const auto& options = d->options();
  if (!options.GetExtension(phalanx::api::v1::strict_fields))
    return false;
  std::string_view others = options.GetExtension(phalanx::api::v1::other_fields);
  while (!others.empty()) {
    auto comma = others.find(',');
    if (others.substr(0, comma) == key)
      return false;
    if (comma == std::string_view::npos)
      break;
    others.remove_prefix(comma + 1);
  }
  return true;
}

bool is_int_or_string(const pb::FieldDescriptor* f) {
  return f->options().GetExtension(phalanx::api::v1::int_or_string);
}

const pb::FieldDescriptor* find_by_json_name(const pb::Descriptor* d, std::string_view name) {
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (f->json_name() == name)
      return f;
  }
  return nullptr;
}

template <class Int>
std::optional<Int> integer_of(const json::value& v) {
  if (v.is_int64()) {
    int64_t x = v.get_int64();
    if constexpr (std::is_signed_v<Int>) {
      if (x < int64_t(std::numeric_limits<Int>::min()) ||
          x > int64_t(std::numeric_limits<Int>::max()))
        return std::nullopt;
    } else {
      if (x < 0 || uint64_t(x) > uint64_t(std::numeric_limits<Int>::max()))
        return std::nullopt;
    }
    return static_cast<Int>(x);
  }
  if (v.is_uint64()) {
    uint64_t x = v.get_uint64();
    if (x > uint64_t(std::numeric_limits<Int>::max()))
      return std::nullopt;
    return static_cast<Int>(x);
  }
  return std::nullopt;
}

template <class Int>
std::string integer_detail() {
  return "must be an integer between " + std::to_string(std::numeric_limits<Int>::min()) +
         " and " + std::to_string(std::numeric_limits<Int>::max());
}

// Converts a JSON value for a scalar field; nullopt after reporting an error.
// `number_as_text`: the field (or the map holding it) has the int_or_string option.
std::optional<scalar> scalar_of(const json::value& v, const pb::FieldDescriptor* f,
                                bool number_as_text, const std::string& path,
                                scheduler::field_errors& errors) {
  auto fail = [&](std::string_view detail) -> std::optional<scalar> {
    errors.push_back(bad_value(path, render_value(v), std::string(detail)));
    return std::nullopt;
  };
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      if (!v.is_number() || v.is_double())
        return fail("must be an integer");
      if (auto x = integer_of<int32_t>(v))
        return scalar{int64_t{*x}};
      return fail(integer_detail<int32_t>());
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      if (!v.is_number() || v.is_double())
        return fail("must be an integer");
      if (auto x = integer_of<int64_t>(v))
        return scalar{*x};
      return fail(integer_detail<int64_t>());
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      if (!v.is_number() || v.is_double())
        return fail("must be an integer");
      if (auto x = integer_of<uint32_t>(v))
        return scalar{uint64_t{*x}};
      return fail(integer_detail<uint32_t>());
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      if (!v.is_number() || v.is_double())
        return fail("must be an integer");
      if (auto x = integer_of<uint64_t>(v))
        return scalar{*x};
      return fail(integer_detail<uint64_t>());
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      if (!v.is_number())
        return fail("must be a number");
      double d = v.to_number<double>();
      if (!std::isfinite(d))
        return fail("must be a finite number");
      return scalar{d};
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      if (!v.is_bool())
        return fail("must be a boolean");
      return scalar{v.get_bool()};
    case pb::FieldDescriptor::CPPTYPE_STRING:
      if (v.is_string())
        return scalar{std::string(v.get_string())};
      if (number_as_text) {
        if (v.is_number())
          return scalar{number_text(v)};
        return fail("must be a number or a string");
      }
      return fail("must be a string");
    case pb::FieldDescriptor::CPPTYPE_ENUM:
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return fail("has a type the schema does not support");
}

void set_scalar(pb::Message& m, const pb::FieldDescriptor* f, const scalar& s) {
  const auto* r = m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(&m, f, static_cast<int32_t>(std::get<int64_t>(s)));
      break;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(&m, f, std::get<int64_t>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(&m, f, static_cast<uint32_t>(std::get<uint64_t>(s)));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(&m, f, std::get<uint64_t>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      r->SetDouble(&m, f, std::get<double>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      r->SetFloat(&m, f, static_cast<float>(std::get<double>(s)));
      break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(&m, f, std::get<bool>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      r->SetString(&m, f, std::get<std::string>(s));
      break;
    default:
      break;
  }
}

void add_scalar(pb::Message& m, const pb::FieldDescriptor* f, const scalar& s) {
  const auto* r = m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      r->AddInt32(&m, f, static_cast<int32_t>(std::get<int64_t>(s)));
      break;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      r->AddInt64(&m, f, std::get<int64_t>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      r->AddUInt32(&m, f, static_cast<uint32_t>(std::get<uint64_t>(s)));
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      r->AddUInt64(&m, f, std::get<uint64_t>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      r->AddDouble(&m, f, std::get<double>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      r->AddFloat(&m, f, static_cast<float>(std::get<double>(s)));
      break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      r->AddBool(&m, f, std::get<bool>(s));
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      r->AddString(&m, f, std::get<std::string>(s));
      break;
    default:
      break;
  }
}

void message_from_json(const json::value& in, pb::Message& out, const std::string& path,
                       scheduler::field_errors& errors, std::vector<std::string>* unknown);

// One element of a repeated field (not a map).
void add_element(const json::value& v, pb::Message& m, const pb::FieldDescriptor* f,
                 const std::string& path, scheduler::field_errors& errors,
                 std::vector<std::string>* unknown) {
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    pb::Message* child = m.GetReflection()->AddMessage(&m, f);
    if (v.is_null() && !is_raw_json(f->message_type()))
      return;
    message_from_json(v, *child, path, errors, unknown);
    return;
  }
  if (v.is_null()) {
    errors.push_back(bad_value(path, "null", "must not be null"));
    return;
  }
  if (auto s = scalar_of(v, f, is_int_or_string(f), path, errors))
    add_scalar(m, f, *s);
}

void field_from_json(const json::value& v, pb::Message& m, const pb::FieldDescriptor* f,
                     const std::string& path, scheduler::field_errors& errors,
                     std::vector<std::string>* unknown) {
  const auto* r = m.GetReflection();
  if (v.is_null())
    return;  // Absent, as Go decodes null.
  if (f->is_map()) {
    if (!v.is_object()) {
      errors.push_back(bad_value(path, render_value(v), "must be an object"));
      return;
    }
    const auto* entry_type = f->message_type();
    const auto* key_field = entry_type->map_key();
    const auto* value_field = entry_type->map_value();
    for (const auto& kv : v.get_object()) {
      std::string p = key_path(path, kv.key());
      if (kv.value().is_null() && value_field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        // A null map value is an empty value in Go; keep the key with the empty value.
        pb::Message* entry = r->AddMessage(&m, f);
        entry->GetReflection()->SetString(entry, key_field, std::string(kv.key()));
        continue;
      }
      if (value_field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        pb::Message* entry = r->AddMessage(&m, f);
        entry->GetReflection()->SetString(entry, key_field, std::string(kv.key()));
        pb::Message* child = entry->GetReflection()->MutableMessage(entry, value_field);
        message_from_json(kv.value(), *child, p, errors, unknown);
        continue;
      }
      auto s = scalar_of(kv.value(), value_field, is_int_or_string(f), p, errors);
      if (!s)
        continue;
      pb::Message* entry = r->AddMessage(&m, f);
      entry->GetReflection()->SetString(entry, key_field, std::string(kv.key()));
      set_scalar(*entry, value_field, *s);
    }
    return;
  }
  if (f->is_repeated()) {
    if (!v.is_array()) {
      errors.push_back(bad_value(path, render_value(v), "must be an array"));
      return;
    }
    const auto& arr = v.get_array();
    for (std::size_t i = 0; i < arr.size(); ++i)
      add_element(arr[i], m, f, index_path(path, i), errors, unknown);
    return;
  }
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    message_from_json(v, *r->MutableMessage(&m, f), path, errors, unknown);
    return;
  }
  if (auto s = scalar_of(v, f, is_int_or_string(f), path, errors))
    set_scalar(m, f, *s);
}

void message_from_json(const json::value& in, pb::Message& out, const std::string& path,
                       scheduler::field_errors& errors, std::vector<std::string>* unknown) {
  const auto* d = out.GetDescriptor();
  if (is_raw_json(d)) {
    const auto* raw = d->FindFieldByName("raw");
    if (raw != nullptr)
      out.GetReflection()->SetString(&out, raw, json::serialize(in));
    return;
  }
  if (is_json_array(d)) {
    if (in.is_null())
      return;
    if (!in.is_array()) {
      errors.push_back(bad_value(path, render_value(in), "must be an array"));
      return;
    }
    const auto& arr = in.get_array();
    for (std::size_t i = 0; i < arr.size(); ++i)
      add_element(arr[i], out, d->field(0), index_path(path, i), errors, unknown);
    return;
  }
  if (in.is_null())
    return;
  if (!in.is_object()) {
    errors.push_back(bad_value(path, render_value(in), "must be an object"));
    return;
  }
  for (const auto& kv : in.get_object()) {
    const auto* f = find_by_json_name(d, kv.key());
    if (f == nullptr) {
      // Ignored, as a non-strict apiserver ignores it; told when asked and known to be unknown.
      if (unknown != nullptr && is_unknown_key(d, kv.key()))
        unknown->push_back(child_path(path, kv.key()));
      continue;
    }
    field_from_json(kv.value(), out, f, child_path(path, kv.key()), errors, unknown);
  }
}

json::value scalar_to_json(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
  const auto* r = m.GetReflection();
  bool rep = index >= 0;
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return double(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return json::string(rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f));
    default:
      return nullptr;
  }
}

json::value to_json_value(const pb::Message& m);

json::value raw_value(const pb::Message& m) {
  const auto* raw = m.GetDescriptor()->FindFieldByName("raw");
  if (raw == nullptr)
    return nullptr;
  const std::string& text = m.GetReflection()->GetString(m, raw);
  if (text.empty())
    return nullptr;
  json::error_code ec;
  json::parse_options opts;
  opts.max_depth = 1024;  // Produced by us; the limits were applied when it came in.
  json::value v = json::parse(text, ec, {}, opts);
  if (ec)
    return nullptr;
  return v;
}

json::value element_to_json(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    const auto* r = m.GetReflection();
    const pb::Message& child =
      index >= 0 ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f);
    return to_json_value(child);
  }
  return scalar_to_json(m, f, index);
}

bool scalar_is_default(const pb::Message& m, const pb::FieldDescriptor* f) {
  const auto* r = m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return r->GetInt32(m, f) == 0;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return r->GetInt64(m, f) == 0;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return r->GetUInt32(m, f) == 0;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return r->GetUInt64(m, f) == 0;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return r->GetDouble(m, f) == 0;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return r->GetFloat(m, f) == 0;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return !r->GetBool(m, f);
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return r->GetString(m, f).empty();
    default:
      return true;
  }
}

json::object object_of(const pb::Message& m) {
  json::object out;
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    if (f->is_map()) {
      int n = r->FieldSize(m, f);
      if (n == 0)
        continue;
      const auto* key_field = f->message_type()->map_key();
      const auto* value_field = f->message_type()->map_value();
      std::vector<std::pair<std::string, const pb::Message*>> entries;
      entries.reserve(std::size_t(n));
      for (int k = 0; k < n; ++k) {
        const pb::Message& e = r->GetRepeatedMessage(m, f, k);
        entries.emplace_back(e.GetReflection()->GetString(e, key_field), &e);
      }
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      json::object obj;
      for (const auto& [key, e] : entries)
        obj[key] = element_to_json(*e, value_field, -1);
      out[f->json_name()] = std::move(obj);
    } else if (f->is_repeated()) {
      int n = r->FieldSize(m, f);
      if (n == 0)
        continue;
      json::array arr;
      arr.reserve(std::size_t(n));
      for (int k = 0; k < n; ++k)
        arr.push_back(element_to_json(m, f, k));
      out[f->json_name()] = std::move(arr);
    } else if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE || f->has_presence()) {
      if (!r->HasField(m, f))
        continue;
      out[f->json_name()] = element_to_json(m, f, -1);
    } else {
      if (scalar_is_default(m, f))
        continue;
      out[f->json_name()] = scalar_to_json(m, f, -1);
    }
  }
  return out;
}

json::value to_json_value(const pb::Message& m) {
  const auto* d = m.GetDescriptor();
  if (is_raw_json(d))
    return raw_value(m);
  if (is_json_array(d)) {
    json::array arr;
    const auto* f = d->field(0);
    int n = m.GetReflection()->FieldSize(m, f);
    for (int k = 0; k < n; ++k)
      arr.push_back(element_to_json(m, f, k));
    return arr;
  }
  return object_of(m);
}

} // namespace

void json_to_message(const json::value& in, pb::Message& out, const std::string& path,
                     scheduler::field_errors& errors, std::vector<std::string>* unknown) {
  message_from_json(in, out, path, errors, unknown);
}

json::object message_to_json(const pb::Message& in) {
  return object_of(in);
}

std::string render_value(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return v.get_bool() ? "true" : "false";
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_:
      return number_text(v);
    case json::kind::string: {
      std::string_view s = v.get_string();
      constexpr std::size_t max_shown = 64;
      if (s.size() <= max_shown)
        return scheduler::go_quote(s);
      std::size_t cut = max_shown;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
        --cut;  // Do not split a UTF-8 sequence.
      return scheduler::go_quote(s.substr(0, cut)) + "...";
    }
    case json::kind::array:
      return "\"array\"";
    case json::kind::object:
      return "\"object\"";
  }
  return "null";
}

std::string number_text(const json::value& v) {
  if (v.is_int64())
    return std::to_string(v.get_int64());
  if (v.is_uint64())
    return std::to_string(v.get_uint64());
  double d = v.is_double() ? v.get_double() : 0.0;
  if (!std::isfinite(d))
    return d > 0 ? "Inf" : (d < 0 ? "-Inf" : "NaN");
  if (d == std::floor(d) && std::fabs(d) < 9007199254740992.0)  // 2^53: exact as an integer.
    return std::to_string(static_cast<int64_t>(d));
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

} // namespace phalanx::api
