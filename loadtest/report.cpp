#include "loadtest/report.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;

namespace {

result<std::string> read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return status{errc::unavailable, "cannot read " + path + ": " + std::strerror(errno)};
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad())
    return status{errc::io_error, "cannot read " + path + ": " + std::strerror(errno)};
  return text;
}

} // namespace

status write_text_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return {errc::io_error, "cannot write " + path + ": " + std::strerror(errno)};
    out << text;
    out.close();
    if (!out)
      return {errc::io_error, "cannot write " + path + ": " + std::strerror(errno)};
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return {errc::io_error, "cannot write " + path + ": " + ec.message()};
  return {};
}

namespace {

constexpr std::string_view html_head = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Phalanx load test report</title>
<style>
body { font-family: sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; }
.muted { color: #666; font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f2f2f2; }
td:first-child, th:first-child { text-align: left; }
.met { color: #176b2c; font-weight: bold; }
.missed { color: #a31515; font-weight: bold; }
.verdict { padding: 10px 14px; margin: 10px 0 16px 0; font-size: 15px; border-radius: 4px; }
.verdict ul { margin: 6px 0 0 0; padding-left: 22px; }
.verdict.passed { background: #e6f4ea; border: 1px solid #34a853; }
.verdict.targets-missed { background: #fff4e5; border: 2px solid #e37400; }
.verdict.failed, .verdict.interrupted { background: #fce8e6; border: 2px solid #a31515; }
.panels { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr));
          gap: 0 24px; }
.chart { position: relative; width: 100%; height: 380px; }
#error { display: none; color: #a31515; font-weight: bold; }
code { font-size: 12px; word-break: break-all; }
</style>
</head>
<body>
<h1 id="title">Phalanx load test report</h1>
)HTML";

constexpr std::string_view html_data_open = R"HTML(<div id="error"></div>
<p class="muted" id="meta"></p>
<div id="content"></div>
<script id="report-data" type="application/json">
)HTML";

constexpr std::string_view html_library_open = R"HTML(
</script>
<script>
)HTML";

constexpr std::string_view html_tail = R"HTML(
</script>
<script>
(function () {
  'use strict';
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                '#7f7f7f', '#bcbd22', '#17becf'];
  function fail(message) {
    document.body.setAttribute('data-error', String(message));
    var e = document.getElementById('error');
    e.textContent = 'Report script error: ' + message;
    e.style.display = 'block';
  }
  window.addEventListener('error', function (ev) { fail(ev.message || 'error'); });
  function html(tag, text, parent) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }
  // One notation for every tick: digits up to 999, then SI suffixes (2.5k, 40k, 1.2M), never
  // exponents down to 1e-6; three decimals, two significant digits below 0.01.
  function fmt(v) {
    if (typeof v !== 'number') return v === null || v === undefined ? 'n/a' : String(v);
    if (!isFinite(v)) return String(v);
    var a = Math.abs(v), units = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < units.length; i++)
      if (a >= units[i][0]) return String(Math.round(v / units[i][0] * 100) / 100) + units[i][1];
    if (a > 0 && a < 0.01) return String(Number(v.toPrecision(2))); // 0.0005, not 0.
    return String(Math.round(v * 1000) / 1000);
  }
  // Log axes: a label at 1, 2 and 5 times each power of ten, none between.
  function logTick(v) {
    var m = v / Math.pow(10, Math.floor(Math.log(v) / Math.LN10 + 1e-9));
    return (Math.abs(m - 1) < 1e-6 || Math.abs(m - 2) < 1e-6 || Math.abs(m - 5) < 1e-6) ? fmt(v)
                                                                                      : '';
  }
  function frame(plot, parent) {
    var box = html('div', null, parent);
    html('h2', plot.title, box);
    if (plot.note) html('p', plot.note, box).className = 'muted';
    var holder = html('div', null, box);
    holder.className = 'chart';
    var canvas = html('canvas', null, holder);
    canvas.className = 'plot';
    canvas.setAttribute('data-plot', plot.id);
    return canvas;
  }
  function axis(title, log) {
    return {type: log ? 'logarithmic' : 'linear', title: {display: !!title, text: title || ''},
            ticks: {callback: function (v) { return log ? logTick(v) : fmt(v); }}};
  }
  function lineChart(plot, parent) {
    var canvas = frame(plot, parent);
    if (!plot.lines) throw new Error('plot ' + plot.id + ' has no lines');
    var datasets = plot.lines.map(function (line, i) {
      var color = COLORS[(line.color !== undefined ? line.color : i) % COLORS.length];
      var data = [];
      line.points.forEach(function (p) {
        if (isFinite(p[0]) && isFinite(p[1]) && (!plot.x_log || p[0] > 0))
          data.push({x: p[0], y: p[1]});
      });
      return {label: line.name, data: data, borderColor: color, backgroundColor: color,
              borderWidth: 2, borderDash: line.dashed ? [6, 4] : [], pointRadius: 0,
              stepped: plot.stepped ? 'before' : false, tension: 0};
    });
    var y = axis(plot.y_label, false);
    y.beginAtZero = true;
    if (plot.y_max !== undefined) y.suggestedMax = plot.y_max;
    var x = axis(plot.x_label, !!plot.x_log);
    if (!plot.x_log) x.beginAtZero = true;
    return new Chart(canvas, {
      type: 'line', data: {datasets: datasets},
      options: {animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
                normalized: true, interaction: {mode: 'nearest', intersect: false},
                plugins: {legend: {position: plot.row ? 'top' : 'right'}},
                scales: {x: x, y: y}}});
  }
  function barChart(plot, parent) {
    var canvas = frame(plot, parent);
    return new Chart(canvas, {
      type: 'bar',
      data: {labels: plot.bars.map(function (b) { return b.label; }),
             datasets: [{label: plot.y_label, data: plot.bars.map(function (b) { return b.value; }),
                         backgroundColor: plot.bars.map(function (b) {
                           return b.color || COLORS[0];
                         })}]},
      options: {animation: false, responsive: true, maintainAspectRatio: false,
                plugins: {legend: {display: false}},
                scales: {x: {title: {display: true, text: plot.x_label}},
                         y: axis(plot.y_label, false)}}});
  }
  // Pixels inside a chart's plotting area (not its legend, axes or labels) that are neither
  // transparent nor grey: its series. Left on the canvas as data-colored, so a DOM dump shows
  // that lines and bars were drawn, not only an empty frame.
  function coloredPixels(chart) {
    var a = chart.chartArea, r = chart.currentDevicePixelRatio || 1;
    var x = Math.floor(a.left * r), y = Math.floor(a.top * r);
    var w = Math.max(1, Math.floor((a.right - a.left) * r));
    var h = Math.max(1, Math.floor((a.bottom - a.top) * r));
    var d = chart.ctx.getImageData(x, y, w, h).data;
    var n = 0;
    for (var i = 0; i < d.length; i += 4) {
      if (d[i + 3] < 128) continue;
      var hi = Math.max(d[i], d[i + 1], d[i + 2]), lo = Math.min(d[i], d[i + 1], d[i + 2]);
      if (hi - lo > 60) n++;
    }
    return n;
  }
  // Table cells are exact: whole numbers with thousands separators (4,946), others rounded to
  // the unit from 1,000 on and to three decimals below.
  function cell(v) {
    if (typeof v !== 'number' || !isFinite(v)) return fmt(v);
    if (Math.abs(v) >= 1000 || v === Math.round(v))
      return Math.round(v).toLocaleString('en-US');
    return String(Math.round(v * 1000) / 1000);
  }
  function table(spec, parent) {
    html('h2', spec.title, parent);
    var t = html('table', null, parent);
    var tr = html('tr', null, t);
    spec.columns.forEach(function (c) { html('th', c, tr); });
    spec.rows.forEach(function (row) {
      var r = html('tr', null, t);
      row.forEach(function (v) { html('td', cell(v), r); });
    });
  }
  try {
    if (typeof Chart === 'undefined') throw new Error('Chart.js did not load');
    Chart.defaults.font.size = 12;
    var data = JSON.parse(document.getElementById('report-data').textContent);
    var content = document.getElementById('content');
    document.getElementById('title').textContent = 'Phalanx load test: ' + data.mode;
    document.getElementById('meta').textContent =
        (data.started_at || '') + '  ' + (data.command || '');
    if (data.summary)
      table({title: 'Summary', columns: ['figure', 'value'], rows: data.summary}, content);
    if (data.targets && data.targets.length) {
      html('h2', 'Targets (DESIGN.md section 9)', content);
      var t = html('table', null, content), head = html('tr', null, t);
      ['target', 'rule', 'value', 'met'].forEach(function (c) { html('th', c, head); });
      data.targets.forEach(function (g) {
        var r = html('tr', null, t);
        html('td', g.name, r); html('td', g.rule, r); html('td', cell(g.value), r);
        var m = html('td', g.met ? 'yes' : 'no', r);
        m.className = g.met ? 'met' : 'missed';
      });
    }
    (data.tables || []).forEach(function (spec) { table(spec, content); });
    // Plots that share a "row" sit side by side (the per-size panels), the others take the
    // page's width.
    var charts = [], rows = {};
    (data.plots || []).forEach(function (plot) {
      var parent = content;
      if (plot.row) {
        if (!rows[plot.row]) {
          rows[plot.row] = html('div', null, content);
          rows[plot.row].className = 'panels';
        }
        parent = rows[plot.row];
      }
      charts.push(plot.kind === 'bars' ? barChart(plot, parent) : lineChart(plot, parent));
    });
    html('h2', 'Parameters', content);
    html('code', JSON.stringify(data.parameters || {}), content);
    charts.forEach(function (c) {
      c.canvas.setAttribute('data-colored', String(coloredPixels(c)));
    });
    document.body.setAttribute('data-rendered', String(charts.length));
  } catch (e) {
    fail(e && e.message ? e.message : e);
  }
})();
</script>
</body>
</html>
)HTML";

} // namespace

namespace {

// Integers print as integers whatever their JSON kind: Boost.JSON prints the double 40 as "4E1",
// and a figure that happens to be whole (a target of 20000, a 40-second run) is read by people
// and by scripts that compare it with an integer. 2^53 is where doubles stop holding every
// integer; above it the shortest form (with an exponent) is the honest one.
void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  if (d == std::trunc(d) && std::fabs(d) < 9007199254740992.0) {
    out += std::to_string(static_cast<int64_t>(d));
    return;
  }
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, d); // The shortest text that reads back as d.
  out.append(buf, r.ptr);
}

bool fits_on_one_line(const json::array& a) {
  for (const auto& e : a)
    if (e.is_object() || (e.is_array() && e.get_array().size() > 4))
      return false;
  return true;
}

void write_json(std::string& out, const json::value& v, int depth, int indent) {
  auto pad = [&](int level) {
    if (indent > 0)
      out.append(static_cast<std::size_t>(level) * static_cast<std::size_t>(indent), ' ');
  };
  const char* newline = indent > 0 ? "\n" : "";
  switch (v.kind()) {
    case json::kind::object: {
      const auto& o = v.get_object();
      if (o.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      out += newline;
      std::size_t i = 0;
      for (const auto& kv : o) {
        pad(depth + 1);
        out += json::serialize(json::string_view(kv.key()));
        out += indent > 0 ? ": " : ":";
        write_json(out, kv.value(), depth + 1, indent);
        if (++i < o.size())
          out += ',';
        out += newline;
      }
      pad(depth);
      out += '}';
      return;
    }
    case json::kind::array: {
      const auto& a = v.get_array();
      if (a.empty()) {
        out += "[]";
        return;
      }
      // Arrays of scalars (plot points, histogram buckets) stay on one line.
      const bool inline_items = indent == 0 || fits_on_one_line(a);
      out += '[';
      if (!inline_items)
        out += newline;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!inline_items)
          pad(depth + 1);
        write_json(out, a[i], inline_items ? 0 : depth + 1, inline_items ? 0 : indent);
        if (i + 1 < a.size())
          out += inline_items && indent > 0 ? ", " : ",";
        if (!inline_items)
          out += newline;
      }
      if (!inline_items)
        pad(depth);
      out += ']';
      return;
    }
    case json::kind::double_:
      write_number(out, v.get_double());
      return;
    default:
      out += json::serialize(v); // Strings, integers, booleans, null.
      return;
  }
}

} // namespace

std::string report_json_text(const json::value& v, int indent) {
  std::string out;
  write_json(out, v, 0, indent);
  if (indent > 0)
    out += '\n';
  return out;
}

std::string to_pretty_json(const json::value& v) {
  return report_json_text(v, 2);
}

namespace {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The verdict in words, written into the page itself (not by its script): a failed or
// interrupted run says so at the top even where scripts do not run.
std::string verdict_html(const report_verdict& v) {
  std::string headline;
  switch (v.kind) {
    case verdict_kind::passed:
      headline = "Passed: the run finished and every target was met.";
      break;
    case verdict_kind::targets_missed:
      headline = "Targets missed: the run finished, but " + std::to_string(v.targets_missed) +
                 (v.targets_missed == 1 ? " target was" : " targets were") + " not met.";
      break;
    case verdict_kind::failed:
      headline = "This run FAILED.";
      break;
    case verdict_kind::interrupted:
      headline = "This run was INTERRUPTED: the figures below are partial.";
      break;
  }
  std::string kind(to_string(v.kind));
  std::replace(kind.begin(), kind.end(), ' ', '-');
  std::string out = "<div id=\"verdict\" class=\"verdict " + kind + "\" data-verdict=\"" + kind +
                    "\"><strong>" + html_escape(headline) + "</strong>";
  if (!v.problems.empty()) {
    out += "<ul>";
    for (const auto& p : v.problems)
      out += "<li>" + html_escape(p) + "</li>";
    out += "</ul>";
  }
  out += "</div>\n";
  return out;
}

} // namespace

result<std::string> read_chart_js(const std::string& path) {
  auto text = read_whole_file(path);
  if (!text)
    return status{errc::unavailable,
                  "the HTML report inlines Chart.js from the Debian package libjs-chart.js, and " +
                      text.error().message() +
                      " (make deps installs it; or leave out --html)"};
  // Inlined in a <script> element: text that would end it or open a comment cannot go in.
  std::string lower = *text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.find("</script") != std::string::npos || lower.find("<!--") != std::string::npos)
    return status{errc::invalid_argument,
                  path + " holds \"</script\" or \"<!--\", which cannot be inlined in a page"};
  return text;
}

std::string default_chart_js_path() {
  return PHALANX_CHART_JS_PATH;
}

std::string render_html_report(const json::object& report, std::string_view chart_js) {
  std::string data = report_json_text(report, 0);
  // Keep the JSON from ending the script element or opening a comment.
  std::string safe;
  safe.reserve(data.size() + 64);
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '<' && i + 1 < data.size() && (data[i + 1] == '/' || data[i + 1] == '!')) {
      safe += "\\u003c";
      continue;
    }
    safe += data[i];
  }
  std::string verdict = verdict_html(assess_report(report));
  std::string out;
  out.reserve(html_head.size() + verdict.size() + html_data_open.size() + safe.size() +
              html_library_open.size() + chart_js.size() + html_tail.size());
  out += html_head;
  out += verdict;
  out += html_data_open;
  out += safe;
  out += html_library_open;
  out += chart_js;
  out += html_tail;
  return out;
}

std::string_view to_string(verdict_kind k) noexcept {
  switch (k) {
    case verdict_kind::passed:
      return "passed";
    case verdict_kind::targets_missed:
      return "targets missed";
    case verdict_kind::failed:
      return "failed";
    case verdict_kind::interrupted:
      return "interrupted";
  }
  return "unknown";
}

namespace {

const json::value* member(const json::object& o, std::string_view key) {
  return o.if_contains(key);
}

bool is_false(const json::value* v) {
  return v != nullptr && v->is_bool() && !v->as_bool();
}

// A figure in a sentence: whole from 1,000 on, four significant digits below.
std::string number_text(const json::value& v) {
  if (!v.is_number())
    return "n/a";
  const double d = v.to_number<double>();
  char buf[48];
  std::snprintf(buf, sizeof buf, d == std::trunc(d) || std::fabs(d) >= 1000 ? "%.0f" : "%.4g", d);
  return buf;
}

} // namespace

report_verdict assess_report(const json::object& rep) {
  report_verdict v;
  bool failed = false;
  bool interrupted = false;
  if (const auto* o = member(rep, "outcome"); o != nullptr && o->is_string()) {
    const auto* message = member(rep, "outcome_message");
    std::string text = message != nullptr && message->is_string() && !message->as_string().empty()
                           ? std::string(message->as_string())
                           : std::string(o->as_string());
    if (o->as_string() == "interrupted") {
      interrupted = true;
      v.problems.push_back(text);
    } else if (o->as_string() != "completed") {
      failed = true;
      v.problems.push_back(text);
    }
  }
  // An interrupted run skips the invariant check and its gangs are not all scheduled: only the
  // interruption is news.
  if (!interrupted) {
    if (is_false(member(rep, "invariants_ok"))) {
      failed = true;
      std::string text = "invariants violated or not checked";
      if (const auto* list = member(rep, "invariant_violations");
          list != nullptr && list->is_array())
        for (std::size_t i = 0; i < list->as_array().size() && i < 5; ++i)
          if (list->as_array()[i].is_string())
            text += (i == 0 ? ": " : "; ") + std::string(list->as_array()[i].as_string());
      v.problems.push_back(text);
    }
    if (is_false(member(rep, "all_scheduled"))) {
      failed = true;
      v.problems.push_back("not every gang was scheduled");
    }
    if (const auto* b = member(rep, "backlog"); b != nullptr && b->is_object())
      if (is_false(b->as_object().if_contains("all_scheduled"))) {
        failed = true;
        v.problems.push_back("not every gang of the backlog was scheduled");
      }
    if (const auto* f = member(rep, "submission_failures");
        f != nullptr && f->is_int64() && f->as_int64() > 0) {
      failed = true;
      std::string text = std::to_string(f->as_int64()) + " submissions failed";
      if (const auto* list = member(rep, "submission_failure_messages");
          list != nullptr && list->is_array() && !list->as_array().empty() &&
          list->as_array()[0].is_string())
        text += "; the first: " + std::string(list->as_array()[0].as_string());
      v.problems.push_back(text);
    }
    if (is_false(member(rep, "all_objects_back"))) {
      failed = true;
      v.problems.push_back("the restarted daemon did not list every PodGroup and node");
    }
  }
  // Targets of an interrupted run were judged on partial figures: only the interruption counts.
  if (const auto* t = member(rep, "targets"); t != nullptr && t->is_array() && !interrupted)
    for (const auto& target : t->as_array()) {
      if (!target.is_object())
        continue;
      const auto& o = target.as_object();
      const auto* met = o.if_contains("met");
      if (met == nullptr || !met->is_bool() || met->as_bool())
        continue;
      ++v.targets_missed;
      const auto* name = o.if_contains("name");
      const auto* rule = o.if_contains("rule");
      const auto* value = o.if_contains("value");
      v.problems.push_back(
          "target missed: " +
          (name != nullptr && name->is_string() ? std::string(name->as_string()) : "?") + " (" +
          (rule != nullptr && rule->is_string() ? std::string(rule->as_string()) : "?") +
          "; value " + (value != nullptr ? number_text(*value) : "n/a") + ")");
    }
  v.kind = interrupted             ? verdict_kind::interrupted
           : failed                ? verdict_kind::failed
           : v.targets_missed > 0 ? verdict_kind::targets_missed
                                   : verdict_kind::passed;
  return v;
}

json::object verdict_json(const report_verdict& v) {
  json::array problems;
  for (const auto& p : v.problems)
    problems.push_back(json::value(p));
  return json::object{{"result", std::string(to_string(v.kind))},
                      {"problems", std::move(problems)},
                      {"targets_missed", v.targets_missed}};
}

json::object machine_info() {
  json::object m;
  m["cpus"] = static_cast<int64_t>(std::thread::hardware_concurrency());
  double load[3] = {0, 0, 0};
  if (::getloadavg(load, 3) == 3) {
    m["load_average_1m"] = load[0];
    m["load_average_5m"] = load[1];
    m["load_average_15m"] = load[2];
  }
  return m;
}

std::string quote_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty())
      out += ' ';
    bool plain =
        !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
                                          "UVWXYZ0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

std::string utc_now_rfc3339() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

json::object make_target(std::string name, std::string rule, double target, double value,
                         bool met) {
  json::object t;
  t["name"] = std::move(name);
  t["rule"] = std::move(rule);
  t["target"] = target;
  t["value"] = std::isfinite(value) ? json::value(value) : json::value(nullptr);
  t["met"] = met;
  return t;
}

status write_reports(const json::object& report, const std::string& json_path,
                     const std::string& html_path) {
  if (!json_path.empty()) {
    if (auto s = write_text_file(json_path, to_pretty_json(report)); !s.ok())
      return s;
    std::printf("wrote %s\n", json_path.c_str());
  }
  if (!html_path.empty()) {
    auto chart_js = read_chart_js(default_chart_js_path());
    if (!chart_js)
      return status{chart_js.error().code(), html_path + ": " + chart_js.error().message()};
    if (auto s = write_text_file(html_path, render_html_report(report, *chart_js)); !s.ok())
      return s;
    std::printf("wrote %s\n", html_path.c_str());
  }
  std::fflush(stdout);
  return {};
}

} // namespace phalanx::loadtest
