#include "loadtest/report.hpp"

#include "api/json_text.hpp"

#include <boost/json/serialize.hpp>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

namespace phalanx::loadtest {

namespace json = boost::json;

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
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1100px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; }
.muted { color: #666; font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f2f2f2; }
td:first-child, th:first-child { text-align: left; }
.met { color: #176b2c; font-weight: bold; }
.missed { color: #a31515; font-weight: bold; }
svg.plot { display: block; margin: 8px 0 20px 0; border: 1px solid #ddd; background: #fff; }
svg.plot text { font-size: 11px; fill: #333; }
#error { display: none; color: #a31515; font-weight: bold; }
code { font-size: 12px; word-break: break-all; }
</style>
</head>
<body>
<h1 id="title">Phalanx load test report</h1>
<div id="error"></div>
<p class="muted" id="meta"></p>
<div id="content"></div>
<script id="report-data" type="application/json">
)HTML";

constexpr std::string_view html_tail = R"HTML(
</script>
<script>
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                '#7f7f7f', '#bcbd22', '#17becf'];
  function fail(message) {
    document.body.setAttribute('data-error', String(message));
    var e = document.getElementById('error');
    e.textContent = 'Report script error: ' + message;
    e.style.display = 'block';
  }
  window.addEventListener('error', function (ev) { fail(ev.message || 'error'); });
  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs)
      if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, text, parent) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (parent) parent.appendChild(e);
    return e;
  }
  function fmt(v) {
    if (typeof v !== 'number') return String(v);
    if (!isFinite(v)) return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(2);
    if (a >= 100) return String(Math.round(v));
    return String(Math.round(v * 1000) / 1000);
  }
  function niceTicks(lo, hi, count) {
    if (!(hi > lo)) { hi = lo + 1; }
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log(span / count) / Math.LN10));
    var err = count / span * step;
    if (err <= 0.15) step *= 10; else if (err <= 0.35) step *= 5; else if (err <= 0.75) step *= 2;
    var ticks = [], start = Math.ceil(lo / step) * step;
    for (var t = start; t <= hi + step * 1e-9; t += step) ticks.push(t);
    return ticks;
  }
  function frame(plot, w, h) {
    var box = html('div', null, null);
    html('h2', plot.title, box);
    if (plot.note) html('p', plot.note, box).className = 'muted';
    var svg = el('svg', {'class': 'plot', 'data-plot': plot.id, width: w, height: h,
                         viewBox: '0 0 ' + w + ' ' + h});
    box.appendChild(svg);
    return {box: box, svg: svg};
  }
  function lineChart(plot) {
    var W = 900, H = 340, L = 72, R = 250, T = 16, B = 46;
    var f = frame(plot, W, H), svg = f.svg;
    var xs = [], ys = [];
    plot.lines.forEach(function (line) {
      line.points.forEach(function (p) {
        if (isFinite(p[0]) && isFinite(p[1]) && (!plot.x_log || p[0] > 0)) {
          xs.push(p[0]);
          ys.push(p[1]);
        }
      });
    });
    if (xs.length === 0) {
      el('text', {x: L, y: H / 2}, svg).textContent = 'no data';
      return f.box;
    }
    var tx = function (v) { return plot.x_log ? Math.log(v) / Math.LN10 : v; };
    var x0 = Math.min.apply(null, xs.map(tx)), x1 = Math.max.apply(null, xs.map(tx));
    var y0 = Math.min(0, Math.min.apply(null, ys)), y1 = Math.max.apply(null, ys);
    if (plot.y_max !== undefined) y1 = Math.max(y1, plot.y_max);
    if (!(x1 > x0)) x1 = x0 + 1;
    if (!(y1 > y0)) y1 = y0 + 1;
    var sx = function (v) { return L + (tx(v) - x0) / (x1 - x0) * (W - L - R); };
    var sy = function (v) { return H - B - (v - y0) / (y1 - y0) * (H - T - B); };
    el('line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#444'}, svg);
    el('line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#444'}, svg);
    niceTicks(y0, y1, 5).forEach(function (t) {
      el('line', {x1: L, y1: sy(t), x2: W - R, y2: sy(t), stroke: '#eee'}, svg);
      el('text', {x: L - 6, y: sy(t) + 4, 'text-anchor': 'end'}, svg).textContent = fmt(t);
    });
    niceTicks(x0, x1, 6).forEach(function (t) {
      var v = plot.x_log ? Math.pow(10, t) : t;
      if (plot.x_log && Math.abs(t - Math.round(t)) > 1e-9) return;
      el('text', {x: sx(v), y: H - B + 16, 'text-anchor': 'middle'}, svg).textContent = fmt(v);
    });
    el('text', {x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle'}, svg).textContent =
        plot.x_label;
    el('text', {x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle',
                transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')'}, svg).textContent =
        plot.y_label;
    plot.lines.forEach(function (line, i) {
      var color = COLORS[(line.color !== undefined ? line.color : i) % COLORS.length], d = '';
      line.points.forEach(function (p) {
        if (!isFinite(p[0]) || !isFinite(p[1]) || (plot.x_log && p[0] <= 0)) return;
        d += (d === '' ? 'M' : 'L') + sx(p[0]).toFixed(1) + ' ' + sy(p[1]).toFixed(1);
      });
      var attrs = {d: d === '' ? 'M0 0' : d, fill: 'none', stroke: color, 'stroke-width': 1.8,
                   'class': 'series', 'data-series': line.name};
      if (line.dashed) attrs['stroke-dasharray'] = '5 4';
      el('path', attrs, svg);
      el('line', {x1: W - R + 10, y1: T + 10 + i * 16, x2: W - R + 28, y2: T + 10 + i * 16,
                  stroke: color, 'stroke-width': 2,
                  'stroke-dasharray': line.dashed ? '5 4' : 'none'}, svg);
      el('text', {x: W - R + 32, y: T + 14 + i * 16}, svg).textContent = line.name;
    });
    return f.box;
  }
  function barChart(plot) {
    var W = 900, H = 320, L = 72, R = 20, T = 16, B = 60;
    var f = frame(plot, W, H), svg = f.svg;
    var n = plot.bars.length;
    if (n === 0) { el('text', {x: L, y: H / 2}, svg).textContent = 'no data'; return f.box; }
    var y1 = Math.max.apply(null, plot.bars.map(function (b) { return b.value; }));
    if (!(y1 > 0)) y1 = 1;
    var bw = (W - L - R) / n;
    var sy = function (v) { return H - B - v / y1 * (H - T - B); };
    el('line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#444'}, svg);
    el('line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#444'}, svg);
    niceTicks(0, y1, 5).forEach(function (t) {
      el('text', {x: L - 6, y: sy(t) + 4, 'text-anchor': 'end'}, svg).textContent = fmt(t);
      el('line', {x1: L, y1: sy(t), x2: W - R, y2: sy(t), stroke: '#eee'}, svg);
    });
    plot.bars.forEach(function (b, i) {
      var x = L + i * bw;
      el('rect', {x: x + 2, y: sy(b.value), width: Math.max(1, bw - 4), height: H - B - sy(b.value),
                  fill: b.color || COLORS[0], 'class': 'bar'}, svg);
      var label = el('text', {x: x + bw / 2, y: H - B + 14, 'text-anchor': 'end',
                              transform: 'rotate(-35 ' + (x + bw / 2) + ' ' + (H - B + 14) + ')'},
                     svg);
      label.textContent = b.label;
    });
    el('text', {x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle'}, svg).textContent =
        plot.x_label;
    el('text', {x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle',
                transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')'}, svg).textContent =
        plot.y_label;
    return f.box;
  }
  function table(spec, parent) {
    html('h2', spec.title, parent);
    var t = html('table', null, parent);
    var tr = html('tr', null, t);
    spec.columns.forEach(function (c) { html('th', c, tr); });
    spec.rows.forEach(function (row) {
      var r = html('tr', null, t);
      row.forEach(function (cell) { html('td', typeof cell === 'number' ? fmt(cell) : cell, r); });
    });
  }
  try {
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
        html('td', g.name, r); html('td', g.rule, r); html('td', fmt(g.value), r);
        var m = html('td', g.met ? 'yes' : 'no', r);
        m.className = g.met ? 'met' : 'missed';
      });
    }
    (data.tables || []).forEach(function (spec) { table(spec, content); });
    var drawn = 0;
    (data.plots || []).forEach(function (plot) {
      var box = plot.kind === 'bars' ? barChart(plot) : lineChart(plot);
      content.appendChild(box);
      drawn++;
    });
    html('h2', 'Parameters', content);
    html('code', JSON.stringify(data.parameters || {}), content);
    document.body.setAttribute('data-rendered', String(drawn));
  } catch (e) {
    fail(e && e.message ? e.message : e);
  }
})();
</script>
</body>
</html>
)HTML";

} // namespace

std::string to_pretty_json(const json::value& v) {
  return api::indented_json(v, {.indent = 2, .inline_scalar_arrays = true});
}

std::string render_html_report(const json::object& report) {
  std::string data = json::serialize(report);
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
  std::string out;
  out.reserve(html_head.size() + safe.size() + html_tail.size());
  out += html_head;
  out += safe;
  out += html_tail;
  return out;
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
    if (auto s = write_text_file(html_path, render_html_report(report)); !s.ok())
      return s;
    std::printf("wrote %s\n", html_path.c_str());
  }
  std::fflush(stdout);
  return {};
}

} // namespace phalanx::loadtest
