#pragma once

// kubectl's JSONPath dialect (the one of `kubectl get -o jsonpath=...`, --sort-by and
// custom-columns), over Boost.JSON values, written from kubectl's documented and observed
// behaviour. Pure: no I/O.
//
// A template is text with actions in braces: `{.metadata.name}`, `{.items[*].spec.nodeName}`,
// `{range .items[*]}{.metadata.name}{"\n"}{end}`. Inside an action:
//   .name  .a\.b (a key with a dot)  .*  ..name (recursive descent)  @ and $ (the current value)
//   [0] [-1] [1:3] [::2] [*] [0,1] ['a','b'] ['a.b'] (read as .a.b, as kubectl does)
//   [?(@.x)] [?(@.x=="v")] with == != < <= > >=, operands @-paths and string, integer, float or
//   boolean literals; "text" and 'text' literals, Go's escapes in double quotes ("\n", "\t").
// Not supported (kubectl has no more): && and || in filters, regular expressions.
//
// Printing is kubectl's: the results of one action joined by a space, strings as they are,
// numbers as Go prints them (1, 1.5, 1e+06), maps and arrays as compact JSON with sorted keys.

#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api::ctl {

namespace jsonpath_detail {
struct node;
} // namespace jsonpath_detail

class jsonpath {
 public:
  /// Parses a template. Failure (errc::invalid_argument) carries kubectl's reason alone, such
  /// as "unclosed action" or "invalid array index x"; callers add "error parsing jsonpath T, ".
  static result<jsonpath> parse(std::string_view text);

  /// The template as text, as given to parse.
  const std::string& text() const noexcept { return text_; }

  /// Executes the template on `data`, as -o jsonpath prints it. With `allow_missing_keys`
  /// (kubectl's --allow-missing-template-keys, default true), a key that is not there prints
  /// nothing; without, it is an error "KEY is not found". Failure (errc::invalid_argument)
  /// carries kubectl's reason, such as "array index out of bounds: index 5, length 2"; callers
  /// add "error executing jsonpath ...: Error executing template: ".
  result<std::string> execute(const boost::json::value& data, bool allow_missing_keys) const;

  /// As -o jsonpath-as-json prints it: each text and action of the template (each time it runs,
  /// in a range) as an indented JSON array of its results, one after the other.
  result<std::string> execute_as_json(const boost::json::value& data,
                                      bool allow_missing_keys) const;

  /// The values each action of the template finds, in order (text between actions has none).
  /// What --sort-by and custom-columns read; missing keys find nothing.
  result<std::vector<std::vector<boost::json::value>>> find_results(
      const boost::json::value& data) const;

 private:
  std::string text_;
  std::shared_ptr<const std::vector<jsonpath_detail::node>> nodes_;
};

/// A value as a jsonpath action prints it: strings as they are, null as "null", numbers as Go's
/// fmt prints a float64 or int64 (1, 1.5, 1e+06, 1.2345678901234567e+19), maps and arrays as
/// go_json.
std::string jsonpath_text(const boost::json::value& v);

/// Compact JSON as Go's encoding/json writes an unstructured object: keys sorted, <, > and &
/// escaped as \u003c..., floats as Go writes them (2, 1e-7, 1e+21), integers beyond int64 as
/// floats. With `indent` > 0, indented by that many spaces per level (json.MarshalIndent).
std::string go_json(const boost::json::value& v, int indent = 0);

/// Converts kubectl's relaxed JSONPath (".metadata.name", "{.metadata.name}", "metadata.name")
/// into a template, as --sort-by and custom-columns do: braces added when missing, and a leading
/// "." when the path does not start with one. A path with braces inside, or an opening brace
/// without its closing one, is kubectl's error "unexpected path string, expected a
/// 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'".
result<std::string> relaxed_jsonpath(std::string_view path);

/// Go's %v of an unstructured value, as kubectl's custom-columns prints a cell: strings as they
/// are, numbers as jsonpath_text, maps as map[k:v k2:v2] (keys sorted), arrays as [a b],
/// null as <nil>.
std::string go_value_text(const boost::json::value& v);

} // namespace phalanx::api::ctl
