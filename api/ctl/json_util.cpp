#include "api/ctl/json_util.hpp"

#include "api/json_text.hpp"

#include <boost/json.hpp>

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

} // namespace phalanx::api::ctl
