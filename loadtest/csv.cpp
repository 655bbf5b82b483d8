#include "loadtest/csv.hpp"

#include "loadtest/flags.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace phalanx::loadtest {

std::optional<std::size_t> csv_table::find_column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name)
      return i;
  return std::nullopt;
}

result<std::size_t> csv_table::column(std::string_view name) const {
  if (auto c = find_column(name))
    return *c;
  std::string have;
  for (const auto& h : header)
    have += (have.empty() ? "" : ",") + h;
  return status{errc::invalid_argument, source + ":1: missing column \"" + std::string(name) +
                                            "\" (the header has: " + have + ")"};
}

status csv_table::field_error(const csv_row& row, std::size_t column,
                              const std::string& rule) const {
  std::string name = column < header.size() ? header[column] : "?";
  return {errc::invalid_argument, source + ":" + std::to_string(row.line) + ":" +
                                      std::to_string(column + 1) + " (" + name + "): " + rule};
}

result<std::optional<int64_t>> csv_table::get_int(const csv_row& row, std::size_t column,
                                                  int64_t min, int64_t max, bool optional) const {
  const auto& f = row.fields[column];
  if (f.empty()) {
    if (optional)
      return std::optional<int64_t>{};
    return field_error(row, column, "required value is empty");
  }
  auto v = parse_int(f);
  if (!v) {
    // "12.0" is an integer written as a decimal in some exports.
    auto d = parse_number(f);
    if (d && *d == static_cast<double>(static_cast<int64_t>(*d)))
      v = static_cast<int64_t>(*d);
  }
  if (!v)
    return field_error(row, column, "\"" + f + "\" is not an integer");
  if (*v < min || *v > max)
    return field_error(row, column,
                       f + " is out of range: must be between " + std::to_string(min) + " and " +
                           std::to_string(max));
  return std::optional<int64_t>{*v};
}

result<std::optional<double>> csv_table::get_number(const csv_row& row, std::size_t column,
                                                    double min, double max, bool optional) const {
  const auto& f = row.fields[column];
  if (f.empty()) {
    if (optional)
      return std::optional<double>{};
    return field_error(row, column, "required value is empty");
  }
  auto v = parse_number(f);
  if (!v)
    return field_error(row, column, "\"" + f + "\" is not a number");
  if (*v < min || *v > max) {
    std::ostringstream s;
    s << f << " is out of range: must be between " << min << " and " << max;
    return field_error(row, column, s.str());
  }
  return std::optional<double>{*v};
}

result<std::string> csv_table::get_text(const csv_row& row, std::size_t column,
                                        bool optional) const {
  const auto& f = row.fields[column];
  if (f.empty() && !optional)
    return field_error(row, column, "required value is empty");
  return f;
}

result<csv_table> parse_csv(std::string_view text, std::string source) {
  csv_table table;
  table.source = std::move(source);
  std::size_t line = 1;
  std::size_t i = 0;
  bool have_header = false;
  while (i < text.size()) {
    // One record; a quoted field may span lines.
    std::size_t record_line = line;
    std::vector<std::string> fields;
    std::string field;
    bool blank = true;
    std::size_t column_start = i;
    while (true) {
      if (i >= text.size() || text[i] == '\n' || text[i] == '\r') {
        fields.push_back(std::move(field));
        break;
      }
      char c = text[i];
      if (c == '"' && field.empty() && i == column_start) {
        blank = false;
        std::size_t quote_col = i;
        std::size_t quote_line = line;
        ++i;
        bool closed = false;
        while (i < text.size()) {
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (text[i] == '\n')
            ++line;
          field += text[i++];
        }
        if (!closed) {
          std::size_t line_start = text.rfind('\n', quote_col);
          std::size_t col = quote_col - (line_start == std::string_view::npos ? 0 : line_start + 1);
          return status{errc::invalid_argument, table.source + ":" + std::to_string(quote_line) +
                                                    ":" + std::to_string(col + 1) +
                                                    ": unterminated quoted field"};
        }
        if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          std::size_t line_start = text.rfind('\n', i);
          std::size_t col = i - (line_start == std::string_view::npos ? 0 : line_start + 1);
          return status{errc::invalid_argument, table.source + ":" + std::to_string(line) + ":" +
                                                    std::to_string(col + 1) +
                                                    ": unexpected character after a closing quote"};
        }
        continue;
      }
      if (c == ',') {
        blank = false;
        fields.push_back(std::move(field));
        field.clear();
        ++i;
        column_start = i;
        continue;
      }
      if (c != ' ' && c != '\t')
        blank = false;
      field += c;
      ++i;
    }
    // End of the record: skip the line end.
    if (i < text.size() && text[i] == '\r')
      ++i;
    if (i < text.size() && text[i] == '\n')
      ++i;
    ++line;
    if (blank && fields.size() == 1)
      continue;
    for (auto& f : fields) {
      // Trim surrounding blanks of unquoted fields (exports pad some columns).
      auto b = f.find_first_not_of(" \t");
      auto e = f.find_last_not_of(" \t");
      f = b == std::string::npos ? std::string() : f.substr(b, e - b + 1);
    }
    if (!have_header) {
      table.header = std::move(fields);
      have_header = true;
      continue;
    }
    if (fields.size() != table.header.size())
      return status{errc::invalid_argument, table.source + ":" + std::to_string(record_line) +
                                                ": " + std::to_string(fields.size()) +
                                                " fields, the header has " +
                                                std::to_string(table.header.size())};
    table.rows.push_back({record_line, std::move(fields)});
  }
  if (!have_header)
    return status{errc::invalid_argument, table.source + ": empty file, expected a header row"};
  return table;
}

result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return status{errc::not_found, "cannot read " + path + ": " + std::strerror(errno)};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace phalanx::loadtest
