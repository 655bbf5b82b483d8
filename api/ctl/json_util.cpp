#include "api/ctl/json_util.hpp"

#include "api/json_text.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <vector>

namespace phalanx::api::ctl {

namespace json = boost::json;

const json::value* find(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* cur = &v;
  for (auto key : path) {
    if (!cur->is_object())
      return nullptr;
    cur = cur->get_object().if_contains(key);
    if (cur == nullptr)
      return nullptr;
  }
  return cur;
}

std::string scalar_text(const json::value& v) {
  if (v.is_string())
    return std::string(v.get_string());
  if (v.is_null())
    return {};
  return json::serialize(v);
}

std::string string_at(const json::value& v, std::initializer_list<std::string_view> path,
                      std::string fallback) {
  const auto* x = find(v, path);
  if (x == nullptr || x->is_null() || x->is_object() || x->is_array())
    return fallback;
  return scalar_text(*x);
}

int64_t int_at(const json::value& v, std::initializer_list<std::string_view> path,
               int64_t fallback) {
  const auto* x = find(v, path);
  if (x == nullptr)
    return fallback;
  if (x->is_int64())
    return x->get_int64();
  if (x->is_uint64() && x->get_uint64() <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(x->get_uint64());
  return fallback;
}

std::string pretty_json(const json::value& v) {
  return indented_json(v, {.indent = 4, .inline_scalar_arrays = false});
}

namespace {

// `v` with each object rebuilt by `order` (which returns its keys in the order wanted).
template <class Order>
json::value reordered(const json::value& v, const Order& order) {
  if (v.is_array()) {
    json::array out;
    out.reserve(v.get_array().size());
    for (const auto& x : v.get_array())
      out.push_back(reordered(x, order));
    return out;
  }
  if (!v.is_object())
    return v;
  const auto& in = v.get_object();
  json::object out;
  out.reserve(in.size());
  for (const auto& key : order(in))
    out[key] = reordered(in.at(key), order);
  return out;
}

std::vector<std::string_view> keys_of(const json::object& o) {
  std::vector<std::string_view> keys;
  keys.reserve(o.size());
  for (const auto& kv : o)
    keys.push_back(kv.key());
  return keys;
}

} // namespace

json::value api_version_first(const json::value& v) {
  return reordered(v, [](const json::object& o) {
    auto keys = keys_of(o);
    std::stable_partition(keys.begin(), keys.end(),
                          [](std::string_view k) { return k == "apiVersion"; });
    return keys;
  });
}

json::value sorted_keys(const json::value& v) {
  return reordered(v, [](const json::object& o) {
    auto keys = keys_of(o);
    std::sort(keys.begin(), keys.end());
    return keys;
  });
}

} // namespace phalanx::api::ctl
