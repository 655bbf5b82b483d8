#include "api/json_text.hpp"

#include <boost/json.hpp>

namespace phalanx::api {

namespace json = boost::json;

namespace {

bool fits_on_one_line(const json::array& a) {
  for (const auto& e : a)
    if (e.is_object() || (e.is_array() && e.get_array().size() > 4))
      return false;
  return true;
}

void write(std::string& out, const json::value& v, int depth, const json_layout& layout) {
  auto pad = [&](int level) {
    out.append(static_cast<std::size_t>(level) * static_cast<std::size_t>(layout.indent), ' ');
  };
  if (v.is_object()) {
    const auto& o = v.get_object();
    if (o.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    std::size_t i = 0;
    for (const auto& kv : o) {
      pad(depth + 1);
      out += json::serialize(json::string_view(kv.key()));
      out += ": ";
      write(out, kv.value(), depth + 1, layout);
      out += ++i < o.size() ? ",\n" : "\n";
    }
    pad(depth);
    out += '}';
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    if (a.empty()) {
      out += "[]";
      return;
    }
    if (layout.inline_scalar_arrays && fits_on_one_line(a)) {
      out += json::serialize(v);
      return;
    }
    out += "[\n";
    for (std::size_t i = 0; i < a.size(); ++i) {
      pad(depth + 1);
      write(out, a[i], depth + 1, layout);
      out += i + 1 < a.size() ? ",\n" : "\n";
    }
    pad(depth);
    out += ']';
  } else {
    out += json::serialize(v);
  }
}

} // namespace

std::string indented_json(const json::value& v, const json_layout& layout) {
  std::string out;
  write(out, v, 0, layout);
  out += '\n';
  return out;
}

} // namespace phalanx::api
