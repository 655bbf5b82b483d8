#pragma once

// What `get` prints through a JSONPath: -o jsonpath, -o jsonpath-as-json, -o custom-columns, and
// the order --sort-by gives the items. kubectl's behaviour and messages; pure (files are read by
// the caller).

#include "api/ctl/jsonpath.hpp"
#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api::ctl {

/// One column of -o custom-columns: its header as given (kubectl does not upper-case it) and
/// the JSONPath of its cells.
struct custom_column {
  std::string header;
  std::string path;  // The template, braces added: "{.metadata.name}".
  jsonpath compiled;
};

/// Parses "HEADER:PATH,HEADER:PATH" (PATH as relaxed_jsonpath reads it). Errors are kubectl's:
/// "custom-columns format specified but no custom columns given", "unexpected custom-columns
/// spec: X, expected <header>:<json-path-expr>", the relaxed path's, or the template's parse
/// error ("unterminated array").
result<std::vector<custom_column>> parse_custom_columns(std::string_view spec);

/// Parses a custom-columns file: a line of headers and a line of paths, separated by blanks.
/// Errors as kubectl's: "expected two lines, saw N", "expected N headers, received M".
result<std::vector<custom_column>> parse_custom_columns_file(std::string_view text);

/// The custom-columns table of `items`: the header line (unless `no_headers`), then a row per
/// item, aligned as kubectl's tabwriter aligns them (three spaces between columns). A cell is
/// the column's values joined by commas, each as Go's %v prints it; "<none>" when there is none.
std::string format_custom_columns(const std::vector<custom_column>& columns,
                                  const std::vector<boost::json::value>& items, bool no_headers);

/// Sorts `items` by the value at `sort_by` (a relaxed JSONPath), as kubectl's --sort-by:
/// numbers numerically, strings that are all quantities by amount ("100m" < "1.5" < "2"), other
/// strings bytewise, the first value when the path finds several; stable. Items without a value
/// come first, in reverse order (kubectl's comparison puts each such item before every other).
/// Errors as kubectl's: the path's, "couldn't find any field with path \"{.x}\" in the list of
/// objects" when no item has a value, and "... is an unsortable type ..." for maps and arrays.
status sort_items(std::vector<boost::json::value>& items, std::string_view sort_by);

/// The List kubectl prints for several objects (-o json, jsonpath and yaml of a collection):
/// {"apiVersion":"v1","items":[...],"kind":"List","metadata":{"resourceVersion":""}}.
boost::json::value as_list(const std::vector<boost::json::value>& items);

} // namespace phalanx::api::ctl
