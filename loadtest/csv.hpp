#pragma once

// A small CSV reader for the traces and node lists (RFC 4180: comma-separated, optional double
// quotes with "" as an escaped quote, LF or CRLF line ends, a header row). Every error names the
// source, the line, the column and the rule:
//   philly_5000.csv:17:3 (num_pods): "four" is not an integer
//   vc_nodes.csv:4: 3 fields, the header has 2
//
// Pure functions; thread-safe.

#include "scheduler/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::loadtest {

struct csv_row {
  std::size_t line = 0; // 1-based line number in the source.
  std::vector<std::string> fields;
};

struct csv_table {
  std::string source; // For messages: the file name.
  std::vector<std::string> header;
  std::vector<csv_row> rows;

  /// The index of a header column; nullopt when absent.
  std::optional<std::size_t> find_column(std::string_view name) const;
  /// The same, or an error naming the source and the missing column.
  result<std::size_t> column(std::string_view name) const;

  /// "SOURCE:LINE:COL (NAME): RULE" for field `column` of `row`.
  status field_error(const csv_row& row, std::size_t column, const std::string& rule) const;

  /// Typed reads of one field. An empty field is an error unless `optional` (then nullopt).
  result<std::optional<int64_t>> get_int(const csv_row& row, std::size_t column, int64_t min,
                                         int64_t max, bool optional = false) const;
  /// A decimal number ("12.0", "0.5").
  result<std::optional<double>> get_number(const csv_row& row, std::size_t column, double min,
                                           double max, bool optional = false) const;
  result<std::string> get_text(const csv_row& row, std::size_t column, bool optional = false) const;
};

/// Parses `text`. Blank lines are skipped. Errors: an empty input (no header), an unterminated
/// quote, a character after a closing quote, a row whose field count differs from the header's.
result<csv_table> parse_csv(std::string_view text, std::string source);

/// Reads a whole file; the error names the path.
result<std::string> read_text_file(const std::string& path);

} // namespace phalanx::loadtest
