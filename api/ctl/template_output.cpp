#include "api/ctl/template_output.hpp"

#include "api/ctl/printers.hpp"
#include "scheduler/quantity.hpp"
#include "scheduler/validation.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <optional>

namespace phalanx::api::ctl {

namespace json = boost::json;

namespace {

status refused(std::string message) {
  return status{errc::invalid_argument, std::move(message)};
}

result<custom_column> make_column(std::string header, std::string_view path) {
  auto relaxed = relaxed_jsonpath(path);
  if (!relaxed)
    return relaxed.error();
  auto compiled = jsonpath::parse(*relaxed);
  if (!compiled)
    return compiled.error();
  return custom_column{std::move(header), std::move(*relaxed), std::move(*compiled)};
}

std::vector<std::string> fields(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
      ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r')
      ++j;
    if (j > i)
      out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// How a sort key compares; kubectl orders by these.
struct sort_key {
  json::value value;
  std::optional<int64_t> quantity_milli;  // A string that parses as a quantity.
};

bool is_number(const json::value& v) {
  return v.is_number();
}

double number_of(const json::value& v) {
  return v.is_double() ? v.get_double()
         : v.is_int64() ? static_cast<double>(v.get_int64())
                        : static_cast<double>(v.get_uint64());
}

// Whether a sorts before b (both have a value).
bool before(const sort_key& a, const sort_key& b) {
  const auto& x = a.value;
  const auto& y = b.value;
  if (is_number(x) && is_number(y)) {
    if (x.is_int64() && y.is_int64())
      return x.get_int64() < y.get_int64();
    return number_of(x) < number_of(y);
  }
  if (x.is_string() && y.is_string()) {
    if (a.quantity_milli && b.quantity_milli)
      return *a.quantity_milli < *b.quantity_milli;
    return x.get_string() < y.get_string();
  }
  if (x.is_bool() && y.is_bool())
    return !x.get_bool() && y.get_bool();
  // Different kinds: numbers, then strings, then booleans, as a fixed order.
  auto rank = [](const json::value& v) { return v.is_number() ? 0 : v.is_string() ? 1 : 2; };
  return rank(x) < rank(y);
}

} // namespace

result<std::vector<custom_column>> parse_custom_columns(std::string_view spec) {
  if (spec.empty())
    return refused("custom-columns format specified but no custom columns given");
  std::vector<custom_column> columns;
  std::size_t start = 0;
  while (true) {
    auto comma = spec.find(',', start);
    std::string_view part =
        spec.substr(start, comma == std::string_view::npos ? comma : comma - start);
    auto colon = part.find(':');
    if (colon == std::string_view::npos)
      return refused("unexpected custom-columns spec: " + std::string(part) +
                     ", expected <header>:<json-path-expr>");
    auto c = make_column(std::string(part.substr(0, colon)), part.substr(colon + 1));
    if (!c)
      return c.error();
    columns.push_back(std::move(*c));
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return columns;
}

result<std::vector<custom_column>> parse_custom_columns_file(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!fields(line).empty())
      lines.push_back(line);
    if (nl == std::string_view::npos)
      break;
    start = nl + 1;
  }
  if (lines.size() != 2)
    return refused("expected two lines, saw " + std::to_string(lines.size()));
  auto headers = fields(lines[0]);
  auto paths = fields(lines[1]);
  if (headers.size() != paths.size())
    return refused("expected " + std::to_string(headers.size()) + " headers, received " +
                   std::to_string(paths.size()));
  std::vector<custom_column> columns;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    auto c = make_column(headers[i], paths[i]);
    if (!c)
      return c.error();
    columns.push_back(std::move(*c));
  }
  return columns;
}

std::string format_custom_columns(const std::vector<custom_column>& columns,
                                  const std::vector<json::value>& items, bool no_headers) {
  std::vector<std::vector<std::string>> lines;
  if (!no_headers) {
    std::vector<std::string> header;
    for (const auto& c : columns)
      header.push_back(c.header);
    lines.push_back(std::move(header));
  }
  for (const auto& item : items) {
    std::vector<std::string> row;
    for (const auto& c : columns) {
      std::string cell;
      auto found = c.compiled.find_results(item);
      if (found)
        for (const auto& action : *found)
          for (const auto& v : action)
            cell += (cell.empty() ? "" : ",") + go_value_text(v);
      row.push_back(cell.empty() ? "<none>" : cell);
    }
    lines.push_back(std::move(row));
  }
  auto widths = column_widths(lines, get_min_width);
  std::string out;
  for (const auto& l : lines)
    out += format_row(l, widths);
  return out;
}

status sort_items(std::vector<json::value>& items, std::string_view sort_by) {
  auto relaxed = relaxed_jsonpath(sort_by);
  if (!relaxed)
    return relaxed.error();
  auto path = jsonpath::parse(*relaxed);
  if (!path)
    return path.error();
  struct entry {
    std::size_t index;
    std::optional<json::value> value;
  };
  std::vector<entry> entries;
  bool any = false;
  for (std::size_t i = 0; i < items.size(); ++i) {
    entry e{i, std::nullopt};
    auto found = path->find_results(items[i]);
    if (!found)
      return found.error();
    for (const auto& action : *found)
      if (!action.empty()) {
        e.value = action.front();
        break;
      }
    any = any || e.value.has_value();
    entries.push_back(std::move(e));
  }
  if (items.empty())
    return status::ok_status();
  if (!any)
    return refused("couldn't find any field with path " + scheduler::go_quote(*relaxed) +
                   " in the list of objects");
  std::vector<entry> missing;
  std::vector<entry> present;
  for (auto& e : entries)
    (e.value ? present : missing).push_back(std::move(e));
  if (present.size() > 1)
    for (const auto& e : present)
      if (e.value->is_object() || e.value->is_array() || e.value->is_null())
        return refused("Field " + *relaxed +
                       " in *unstructured.Unstructured is an unsortable type: interface, err: "
                       "unsortable type: " +
                       std::string(e.value->is_object()  ? "map[string]interface {}"
                                   : e.value->is_array() ? "[]interface {}"
                                                         : "<nil>"));
  std::vector<sort_key> keys(items.size());
  for (const auto& e : present) {
    keys[e.index].value = *e.value;
    if (e.value->is_string()) {
      auto q = scheduler::parse_quantity(e.value->get_string(), scheduler::quantity_unit::milli);
      if (q)
        keys[e.index].quantity_milli = *q;
    }
  }
  std::stable_sort(present.begin(), present.end(), [&](const entry& a, const entry& b) {
    return before(keys[a.index], keys[b.index]);
  });
  std::vector<json::value> sorted;
  sorted.reserve(items.size());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it)
    sorted.push_back(std::move(items[it->index]));
  for (const auto& e : present)
    sorted.push_back(std::move(items[e.index]));
  items = std::move(sorted);
  return status::ok_status();
}

json::value as_list(const std::vector<json::value>& items) {
  json::array a(items.begin(), items.end());
  return json::object{{"apiVersion", "v1"},
                      {"items", std::move(a)},
                      {"kind", "List"},
                      {"metadata", json::object{{"resourceVersion", ""}}}};
}

} // namespace phalanx::api::ctl
