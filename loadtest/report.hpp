#pragma once

// The reports of a run: a JSON document (every figure and the exact parameters) and a
// self-contained HTML page, with no external script, style sheet, font or CDN: it opens from a
// file, offline.
//
// The JSON of every mode has: "mode", "tool", "command" (the command line as run), "parameters"
// (every effective setting, defaults included), "machine" (cpus, load averages at start and end),
// "started_at", the mode's figures, "targets" (each DESIGN.md section 9 target with the value
// reached and whether it is met), "verdict" (assess_report) and "plots" for the charts.
//
// The HTML page says the verdict in words at its top (<div id="verdict" data-verdict="failed">,
// written by this code, so it shows even without scripts), embeds the JSON in a
// <script type="application/json"> element, and draws one <canvas class="plot"
// data-plot="NAME"> per plot with Chart.js. Chart.js comes from the Debian package
// libjs-chart.js and is read when the page is written, not compiled in: the file the package
// manager keeps up to date is the one inlined (as a shared library is), and the binary does not
// carry a second copy. The modes check that it can be read before a run starts, so a missing
// package fails in a second, not after a ten-minute run. Once drawn, each canvas gets
// data-colored="N" (its pixels that are neither transparent nor grey: the series, not the axes)
// and the body data-rendered="N" (charts drawn); a script error marks <body data-error="...">
// instead, so a headless browser's DOM dump shows whether the page rendered.

#include "scheduler/result.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::loadtest {

/// Writes `text` to `path` (through a temporary file renamed into place). The error names the
/// path and the reason.
status write_text_file(const std::string& path, const std::string& text);

/// JSON text of a report, keys in insertion order. Every number that is an integer prints as
/// one ("40", never "4E1" or "40.0"), other numbers in the shortest form that reads back the same
/// ("0.25", "1e-07"), a double that is not finite as null. `indent` spaces per level, arrays of
/// scalars on one line; 0: all on one line, without a trailing newline.
std::string report_json_text(const boost::json::value& v, int indent);

/// report_json_text(v, 2): two-space indent, ending with a newline.
std::string to_pretty_json(const boost::json::value& v);

/// The HTML page for a report (see the file comment), with `chart_js` (read_chart_js's text)
/// inlined.
std::string render_html_report(const boost::json::object& report, std::string_view chart_js);

/// Where Chart.js is: the file of the Debian package libjs-chart.js that CMake found
/// (/usr/share/javascript/chart.js/chart.min.js).
std::string default_chart_js_path();

/// Reads Chart.js for inlining. errc::unavailable naming the path and the package when it cannot
/// be read; errc::invalid_argument when its text would end the <script> element.
result<std::string> read_chart_js(const std::string& path);

/// {"cpus": N, "load_average_1m": x, "load_average_5m": y, "load_average_15m": z}.
boost::json::object machine_info();

/// The command line, each argument shell-quoted when needed.
std::string quote_command(const std::vector<std::string>& argv);

/// The current UTC time in RFC 3339 with milliseconds.
std::string utc_now_rfc3339();

/// One target of DESIGN.md section 9 as a JSON object.
boost::json::object make_target(std::string name, std::string rule, double target, double value,
                                bool met);

/// What a report says about its run: one rule for the exit code, the console, the report's
/// "verdict" and the words at the top of the HTML page.
///   interrupted     "outcome" is "interrupted" (SIGINT or SIGTERM): the figures are partial,
///                   so nothing else is judged (the invariants were not checked, targets not
///                   reached);
///   failed          "outcome" is another than "completed" (failed, stalled, timed out), or
///                   invariants were violated or not checked, not every gang was scheduled (or
///                   not every one of the backlog), submissions failed, or a restarted daemon
///                   did not list every object;
///   targets_missed  none of those, and a target of "targets" is not met;
///   passed          none of those.
enum class verdict_kind { passed, targets_missed, failed, interrupted };
std::string_view to_string(verdict_kind k) noexcept; // "passed", "targets missed", ...
inline constexpr verdict_kind verdict_kind_last = verdict_kind::interrupted;

struct report_verdict {
  verdict_kind kind = verdict_kind::passed;
  /// Sentences, most important first: how the run ended, then what failed, then each missed
  /// target with its rule and value.
  std::vector<std::string> problems;
  /// The missed targets among `problems` (also counted when the run failed).
  int64_t targets_missed = 0;
};
report_verdict assess_report(const boost::json::object& report);

/// {"result": to_string(kind), "problems": [...], "targets_missed": N}.
boost::json::object verdict_json(const report_verdict& v);

/// Writes the JSON and/or the HTML report when their paths are not empty; prints where to `out`.
status write_reports(const boost::json::object& report, const std::string& json_path,
                     const std::string& html_path);

} // namespace phalanx::loadtest
