// Figures and reports: percentiles, Prometheus histograms and text, progress lines, and the keys
// of the JSON report the modes write.

#include "loadtest/interrupt.hpp"
#include "loadtest/progress.hpp"
#include "loadtest/report.hpp"
#include "loadtest/scheduling_run.hpp"
#include "loadtest/stats.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>

namespace phalanx::loadtest {
namespace {

namespace json = boost::json;

TEST(LoadtestStats, NearestRankPercentiles) {
  auto s = summarize({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  EXPECT_EQ(s.count, 10u);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.p50, 5);
  EXPECT_DOUBLE_EQ(s.p90, 9);
  EXPECT_DOUBLE_EQ(s.p99, 10);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_EQ(summarize({}).count, 0u);
  EXPECT_DOUBLE_EQ(percentile_sorted({1, 2, 3}, 0), 1);
}

TEST(LoadtestStats, ReadsThePrometheusTextFormat) {
  const std::string text = "# HELP phalanx_pods_scheduled_total Pods.\n"
                           "# TYPE phalanx_pods_scheduled_total counter\n"
                           "phalanx_pods_scheduled_total 1234\n"
                           "phalanx_queue_allocated_cpu_cores{queue=\"a\"} 2.5\n"
                           "phalanx_queue_allocated_cpu_cores{queue=\"we\\\"ird\"} 1\n"
                           "h_bucket{le=\"0.001\"} 2\n"
                           "h_bucket{le=\"0.01\"} 6\n"
                           "h_bucket{le=\"+Inf\"} 10\n"
                           "h_sum 0.5\n"
                           "h_count 10\n";
  auto samples = parse_prometheus_text(text);
  ASSERT_TRUE(samples.ok()) << samples.error().message();
  EXPECT_EQ(find_sample(*samples, "phalanx_pods_scheduled_total"), 1234);
  EXPECT_EQ(find_sample(*samples, "phalanx_queue_allocated_cpu_cores", {{"queue", "a"}}), 2.5);
  EXPECT_EQ(find_sample(*samples, "phalanx_queue_allocated_cpu_cores", {{"queue", "we\"ird"}}),
            1);
  EXPECT_FALSE(find_sample(*samples, "phalanx_queue_allocated_cpu_cores", {{"queue", "b"}}));
  auto h = find_histogram(*samples, "h");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->count, 10u);
  EXPECT_EQ(h->cumulative, (std::vector<uint64_t>{2, 6}));
  // Rank 5 of 10 is the 3rd of 4 observations in (0.001, 0.01]: 0.001 + 0.009 * 3/4.
  EXPECT_NEAR(histogram_quantile(*h, 0.5), 0.00775, 1e-12);
  EXPECT_NEAR(histogram_quantile(*h, 0.1), 0.0005, 1e-12);
  EXPECT_DOUBLE_EQ(histogram_quantile(*h, 0.99), 0.01); // In +Inf: the largest finite bound.
  EXPECT_TRUE(std::isinf(histogram_max_bound(*h)));
  histogram_data full{{0.001, 0.01}, {2, 6}, 6, 0};
  EXPECT_DOUBLE_EQ(histogram_max_bound(full), 0.01);
  auto bad = parse_prometheus_text("x{le=\"1} 2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("metrics line 1"), std::string::npos);
  EXPECT_FALSE(parse_prometheus_text("x abc\n").ok());
}


// The figures a run plots come from phalanxd's per-unit queue families (docs/METRICS.md): cores,
// bytes, pods, and GPUs among the extended resources.
TEST(LoadtestStats, ReadsQueueFiguresFromTheFamiliesWithUnits) {
  const std::string text =
      "phalanx_pods_scheduled_total 7\n"
      "phalanx_queue_allocated_cpu_cores{queue=\"q\"} 3.5\n"
      "phalanx_queue_allocated_memory_bytes{queue=\"q\"} 1073741824\n"
      "phalanx_queue_allocated_pods{queue=\"q\"} 7\n"
      "phalanx_queue_allocated_extended_resources{queue=\"q\",resource=\"nvidia.com/gpu\"} 2\n"
      "phalanx_queue_deserved_cpu_cores{queue=\"q\"} 8\n"
      "phalanx_queue_deserved_memory_bytes{queue=\"q\"} 2147483648\n"
      "phalanx_queue_deserved_extended_resources{queue=\"q\",resource=\"nvidia.com/gpu\"} 4\n"
      "volcano_queue_allocated_milli_cpu{queue_name=\"q\"} 3500\n";
  auto samples = parse_prometheus_text(text);
  ASSERT_TRUE(samples.ok()) << samples.error().message();
  auto s = sample_from_metrics(*samples, {queue_spec{"q", 1}});
  EXPECT_EQ(s.pods_scheduled, 7);
  ASSERT_EQ(s.queues.count("q"), 1u);
  const auto& q = s.queues.at("q");
  EXPECT_EQ(q.allocated_cpu, 3.5);
  EXPECT_EQ(q.allocated_memory, 1073741824);
  EXPECT_EQ(q.allocated_pods, 7);
  EXPECT_EQ(q.allocated_gpu, 2);
  EXPECT_EQ(q.deserved_cpu, 8);
  EXPECT_EQ(q.deserved_memory, 2147483648);
  EXPECT_EQ(q.deserved_gpu, 4);
}
TEST(LoadtestProgress, FormatsCountsRatesAndEta) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(-1000), "-1,000");
  EXPECT_EQ(format_rate(21532.4), "21,532/s");
  EXPECT_EQ(format_rate(12.5), "12.5/s");
  EXPECT_EQ(format_eta(0.25), "250ms");
  EXPECT_EQ(format_eta(2.5), "2.5s");
  EXPECT_EQ(format_eta(65), "1m05s");
  EXPECT_EQ(format_eta(7380), "2h03m");
  EXPECT_EQ(format_eta(-1), "--");
  EXPECT_EQ(format_eta(NAN), "--");
  progress_snapshot s{"scheduled", "pods", 50, 100, 2.0};
  EXPECT_EQ(format_progress_line(s, 10),
            "scheduled [#####-----]  50.0%  50/100 pods  25.0/s  ETA 2.0s");
  EXPECT_EQ(format_progress_line(s, 0), "scheduled  50.0%  50/100 pods  25.0/s  ETA 2.0s");
  progress_snapshot unknown{"sent", "requests", 1500, 0, 1.0};
  EXPECT_EQ(format_progress_line(unknown, 10), "sent  1,500 requests  1,500/s");
  // A run that stopped moving says so instead of promising an end.
  progress_snapshot idle{"scheduled", "pods", 50, 100, 60.0, 12.0};
  EXPECT_EQ(format_progress_line(idle, 0),
            "scheduled  50.0%  50/100 pods  0.8/s  no progress for 12.0s");
  idle.idle_seconds = 4;
  EXPECT_EQ(format_progress_line(idle, 0), "scheduled  50.0%  50/100 pods  0.8/s  ETA 1m00s");
}

TEST(LoadtestProgress, PlainLinesWhenNotATerminal) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = ::open_memstream(&buf, &len);
  ASSERT_NE(out, nullptr);
  {
    progress_meter m(out, false, "scheduled", "pods", 10);
    m.update(3); // Drawn: the first update.
    m.update(4); // Within a second: not drawn.
    m.finish(10);
    m.finish(10); // Idempotent.
  }
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("3/10 pods"), std::string::npos) << text;
  EXPECT_NE(text.find("10/10 pods"), std::string::npos) << text;
}

TEST(LoadtestProgress, RedrawsInPlaceOnATerminal) {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* out = ::open_memstream(&buf, &len);
  {
    progress_meter m(out, true, "scheduled", "pods", 10);
    m.update(3);
    m.finish(10);
  }
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  EXPECT_EQ(text.front(), '\r');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("[####################] 100.0%"), std::string::npos) << text;
}

TEST(LoadtestReport, RunReportHasEveryKey) {
  run_options o;
  o.workload.nodes = 4;
  o.workload.podgroups = 3;
  o.command = "phalanx-loadtest inproc --nodes 4";
  auto w = generate_workload(o.workload);
  run_recorder r(w);
  r.start();
  for (int64_t i = 0; i < 3; ++i) {
    r.acknowledged(i, 1);
    r.observed_running(i);
  }
  run_sample s;
  s.t = 0.1;
  s.pods_scheduled = w.total_pods;
  queue_point qp;
  qp.allocated_cpu = 1;
  qp.allocated_memory = 2;
  qp.deserved_cpu = 1;
  qp.deserved_memory = 2;
  s.queues["research"] = qp;
  r.add_sample(s);
  run_extras x;
  x.invariants_checked = true;
  x.invariants_source = "test";
  x.decision_histogram = histogram_data{{0.0001, 0.001}, {2, 3}, 3, 0.0012};
  auto rep = build_run_report("inproc", o, w, r, x, machine_info());
  for (const char* key : {"mode",
                          "command",
                          "parameters",
                          "machine",
                          "workload",
                          "pods_per_second",
                          "scheduled_pods_per_second",
                          "submitted_pods_per_second",
                          "time_to_schedule_all_seconds",
                          "p50_gang_ms",
                          "p90_gang_ms",
                          "p99_gang_ms",
                          "max_gang_ms",
                          "gang_decision",
                          "submit_to_running_ms",
                          "utilization",
                          "queues",
                          "invariants_ok",
                          "invariants_source",
                          "invariant_violations",
                          "targets",
                          "summary",
                          "plots",
                          "all_scheduled"})
    EXPECT_TRUE(rep.contains(key)) << key;
  EXPECT_TRUE(rep["invariants_ok"].as_bool());
  EXPECT_TRUE(rep["all_scheduled"].as_bool());
  EXPECT_TRUE(rep["pods_per_second"].is_number());
  EXPECT_NEAR(rep["max_gang_ms"].to_number<double>(), 1.0, 1e-9);
  EXPECT_EQ(rep["parameters"].as_object()["nodes"].as_int64(), 4);
  EXPECT_EQ(rep["plots"].as_array().size(), 5u);
  // The JSON text parses back.
  auto text = to_pretty_json(rep);
  boost::system::error_code ec;
  auto back = json::parse(text, ec);
  EXPECT_FALSE(ec) << text.substr(0, 300);
  EXPECT_EQ(back.as_object().at("mode").as_string(), "inproc");
}

TEST(LoadtestReport, HtmlIsSelfContained) {
  json::object rep;
  rep["mode"] = "test";
  rep["command"] = "x </script><script>alert(1)</script>";
  rep["plots"] = json::array{};
  auto html = render_html_report(rep, "/* the library */ var Chart = function () {};");
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_NE(html.find("/* the library */ var Chart"), std::string::npos) << "inlined";
  EXPECT_EQ(html.find("</script><script>alert"), std::string::npos)
      << "the embedded JSON must not end the script element";
  EXPECT_NE(html.find("\\u003c/script>"), std::string::npos);
  EXPECT_NE(html.find("id=\"report-data\""), std::string::npos);
}

// Debian's Chart.js goes into the page whole; nothing in it is fetched (its only URLs are in
// its licence comment), and it cannot end the script element it is inlined in.
TEST(LoadtestReport, ChartJsComesFromTheDebianPackage) {
  EXPECT_EQ(default_chart_js_path(), "/usr/share/javascript/chart.js/chart.min.js");
  auto js = read_chart_js(default_chart_js_path());
  ASSERT_TRUE(js.ok()) << js.error().message();
  EXPECT_NE(js->find("Chart.js v3"), std::string::npos);
  auto html = render_html_report(json::object{{"mode", "test"}}, *js);
  EXPECT_NE(html.find(*js), std::string::npos);
  auto missing = read_chart_js("/nonexistent/chart.min.js");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "the HTML report inlines Chart.js from the Debian package libjs-chart.js, and cannot "
            "read /nonexistent/chart.min.js: No such file or directory (make deps installs it; or "
            "leave out --html)");
}

// The verdict of a report and its words at the top of the page, by table.
TEST(LoadtestReport, TheVerdictSaysHowTheRunEndedInWords) {
  struct row {
    json::object report;
    verdict_kind kind;
    std::string headline;
    std::string problem;
  };
  auto target = [](bool met) {
    return json::array{make_target("throughput", "pods_per_second >= 100", 100, 40, met)};
  };
  std::vector<row> rows{
      {{{"outcome", "completed"}, {"targets", target(true)}}, verdict_kind::passed,
       "Passed: the run finished and every target was met.", ""},
      {{{"outcome", "completed"}, {"targets", target(false)}}, verdict_kind::targets_missed,
       "Targets missed: the run finished, but 1 target was not met.",
       "target missed: throughput (pods_per_second &gt;= 100; value 40)"},
      {{{"outcome", "stalled"},
        {"outcome_message", "stalled: no gang started or completed for 30s"},
        {"all_scheduled", false}},
       verdict_kind::failed, "This run FAILED.", "stalled: no gang started or completed for 30s"},
      {{{"outcome", "timed out"}, {"outcome_message", "timed out after 10m0s: 3 of 8 gangs"}},
       verdict_kind::failed, "This run FAILED.", "timed out after 10m0s: 3 of 8 gangs"},
      {{{"outcome", "interrupted"},
        {"outcome_message", "interrupted by SIGTERM 2.0 s into the run"},
        {"invariants_ok", false},
        {"all_scheduled", false},
        {"targets", target(false)}},
       verdict_kind::interrupted, "This run was INTERRUPTED: the figures below are partial.",
       "interrupted by SIGTERM 2.0 s into the run"},
      {{{"invariants_ok", false}, {"invariant_violations", json::array{"I2: node-1 over"}}},
       verdict_kind::failed, "This run FAILED.",
       "invariants violated or not checked: I2: node-1 over"},
  };
  for (const auto& r : rows) {
    auto v = assess_report(r.report);
    EXPECT_EQ(v.kind, r.kind) << json::serialize(r.report);
    auto html = render_html_report(r.report, "");
    auto top = html.substr(html.find("<div id=\"verdict\""), 600);
    EXPECT_NE(top.find("<strong>" + r.headline + "</strong>"), std::string::npos) << top;
    if (!r.problem.empty()) {
      EXPECT_NE(top.find("<li>" + r.problem + "</li>"), std::string::npos) << top;
    }
  }
  // An interrupted run is not also blamed for what it did not get to do.
  EXPECT_EQ(assess_report(rows[4].report).problems.size(), 1u);
  for (int i = 0; i <= static_cast<int>(verdict_kind_last); ++i)
    EXPECT_NE(to_string(static_cast<verdict_kind>(i)), "unknown");
}

// wait_for_gangs stops a run that makes no progress (stalled) and one that is interrupted,
// instead of waiting for its timeout.
TEST(LoadtestReport, WaitingStopsOnAStallAndOnAnInterrupt) {
  workload_spec spec;
  spec.nodes = 2;
  spec.podgroups = 2;
  auto w = generate_workload(spec);
  run_recorder r(w);
  r.start();
  r.acknowledged(0, 1);
  r.observed_running(0); // One of two gangs runs; the other never will.
  std::atomic<bool> submitted{true};
  std::FILE* sink = std::tmpfile();
  progress_meter meter(sink, false, "scheduled", "pods", w.total_pods);
  wait_plan plan{2, false, int64_t{20} * 1'000'000'000, 10'000'000, std::chrono::milliseconds(1),
                 50'000'000};
  EXPECT_EQ(wait_for_gangs(plan, r, meter, submitted, [] {}, {}), run_outcome::stalled);
  EXPECT_EQ(describe_outcome(run_outcome::stalled, plan, r, 12.34),
            "stalled: no gang started or completed for 50ms, stopped 12.3 s into the run; 1 of 2 "
            "gangs running");
  {
    interrupt_guard guard;
    simulate_interrupt(SIGTERM);
    plan.stall_after_ns = 0;
    EXPECT_EQ(wait_for_gangs(plan, r, meter, submitted, [] {}, {}), run_outcome::interrupted);
    EXPECT_EQ(describe_outcome(run_outcome::interrupted, plan, r, 2),
              "interrupted by SIGTERM 2.0 s into the run; 1 of 2 gangs running; the figures are "
              "partial");
  }
  std::fclose(sink);
  for (int i = 0; i <= static_cast<int>(run_outcome_last); ++i)
    EXPECT_NE(to_string(static_cast<run_outcome>(i)), "unknown");
}

// Whole numbers print as integers whatever their JSON kind; other numbers in their shortest
// exact form; the layout keeps scalar arrays on one line.
TEST(LoadtestReport, JsonNumbersReadAsPeopleWriteThem) {
  json::object o;
  o["double_40"] = 40.0;
  o["int_40"] = 40;
  o["negative"] = -3.0;
  o["quarter"] = 0.25;
  o["small"] = 1e-7;
  o["quadrillion"] = 1e15; // Shortest form "1e+15"; an integer below 2^53 prints whole.
  o["huge"] = 1e22;
  o["nan"] = std::nan("");
  o["points"] = json::array{json::array{0.5, 20000.0}, json::array{1.0, 2.0}};
  EXPECT_EQ(report_json_text(o, 0),
            "{\"double_40\":40,\"int_40\":40,\"negative\":-3,\"quarter\":0.25,"
            "\"small\":1e-07,\"quadrillion\":1000000000000000,\"huge\":1e+22,\"nan\":null,"
            "\"points\":[[0.5,20000],[1,2]]}");
  EXPECT_EQ(to_pretty_json(json::object{{"a", 40.0}, {"b", json::array{1.0, 2.5}}}),
            "{\n  \"a\": 40,\n  \"b\": [1, 2.5]\n}\n");
  // A target of 20000 as make_target writes it.
  auto t = report_json_text(make_target("t", "r", 20000, 40, true), 0);
  EXPECT_NE(t.find("\"target\":20000,"), std::string::npos) << t;
  EXPECT_NE(t.find("\"value\":40,"), std::string::npos) << t;
}

TEST(LoadtestReport, QuoteCommand) {
  EXPECT_EQ(quote_command({"phalanx-loadtest", "push", "--json", "build/reports/a.json"}),
            "phalanx-loadtest push --json build/reports/a.json");
  EXPECT_EQ(quote_command({"x", "a b", "it's"}), "x 'a b' 'it'\\''s'");
}

TEST(LoadtestReport, SubmitMethodNamesAreComplete) {
  for (int i = 0; i <= static_cast<int>(submit_method_last); ++i)
    EXPECT_NE(to_string(static_cast<submit_method>(i)), "unknown");
}

} // namespace
} // namespace phalanx::loadtest
