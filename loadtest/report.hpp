#pragma once

// The reports of a run: a JSON document (every figure and the exact parameters) and a
// self-contained HTML page that draws its plots with inline SVG from the same JSON, with no
// external script, style sheet, font or CDN.
//
// The JSON of every mode has: "mode", "tool", "command" (the command line as run), "parameters"
// (every effective setting, defaults included), "machine" (cpus, load averages at start and end),
// "started_at", the mode's figures, "targets" (each DESIGN.md section 9 target with the value
// reached and whether it is met), and "series" for the plots.
//
// The HTML page embeds the JSON in a <script type="application/json"> element; an inline script
// draws one <svg class="plot" data-plot="NAME"> per plot the series allow, then marks
// <body data-rendered="N"> (N plots drawn). A script error marks <body data-error="...">
// instead, so a headless browser's DOM dump shows whether the page rendered.

#include "scheduler/result.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace phalanx::loadtest {

/// Writes `text` to `path` (through a temporary file renamed into place). The error names the
/// path and the reason.
status write_text_file(const std::string& path, const std::string& text);

/// Pretty-printed JSON (two-space indent, keys in insertion order), ending with a newline.
std::string to_pretty_json(const boost::json::value& v);

/// The HTML page for a report (see the file comment).
std::string render_html_report(const boost::json::object& report);

/// {"cpus": N, "load_average_1m": x, "load_average_5m": y, "load_average_15m": z}.
boost::json::object machine_info();

/// The command line, each argument shell-quoted when needed.
std::string quote_command(const std::vector<std::string>& argv);

/// The current UTC time in RFC 3339 with milliseconds.
std::string utc_now_rfc3339();

/// One target of DESIGN.md section 9 as a JSON object.
boost::json::object make_target(std::string name, std::string rule, double target, double value,
                                bool met);

/// Writes the JSON and/or the HTML report when their paths are not empty; prints where to `out`.
status write_reports(const boost::json::object& report, const std::string& json_path,
                     const std::string& html_path);

} // namespace phalanx::loadtest
