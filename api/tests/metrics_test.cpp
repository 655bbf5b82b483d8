#include "api/metrics.hpp"

#include "api/errors.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace phalanx::api {
namespace {

TEST(Metrics, RendersThePrometheusTextFormat) {
  metrics_registry r;
  auto& requests = r.counter_family("http_requests_total", "Requests.", {"verb", "code"});
  requests.with({"GET", "200"}).inc(3);
  requests.with({"POST", "201"}).inc();
  r.add_gauge("open_connections", "Open.\nConnections \\ now.").set(2);
  auto& h = r.add_histogram("latency_seconds", "Latency.", {0.1, 1});
  h.observe(0.0625);
  h.observe(0.5);
  h.observe(4);
  EXPECT_EQ(r.render(),
            "# HELP http_requests_total Requests.\n"
            "# TYPE http_requests_total counter\n"
            "http_requests_total{verb=\"GET\",code=\"200\"} 3\n"
            "http_requests_total{verb=\"POST\",code=\"201\"} 1\n"
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{le=\"0.1\"} 1\n"
            "latency_seconds_bucket{le=\"1\"} 2\n"
            "latency_seconds_bucket{le=\"+Inf\"} 3\n"
            "latency_seconds_sum 4.5625\n"
            "latency_seconds_count 3\n"
            "# HELP open_connections Open.\\nConnections \\\\ now.\n"
            "# TYPE open_connections gauge\n"
            "open_connections 2\n");
}

TEST(Metrics, EscapesLabelValues) {
  metrics_registry r;
  r.counter_family("c", "C.", {"path"}).with({"a\"b\\c\nd"}).inc();
  EXPECT_NE(r.render().find("c{path=\"a\\\"b\\\\c\\nd\"} 1"), std::string::npos) << r.render();
}

TEST(Metrics, RegisteringAgainReturnsTheSameFamily) {
  metrics_registry r;
  auto& a = r.counter_family("x_total", "X.", {"k"});
  auto& b = r.counter_family("x_total", "X.", {"k"});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(&a.with({"v"}), &b.with({"v"}));
  EXPECT_THROW(r.gauge_family("x_total", "X.", {"k"}), std::invalid_argument);
  EXPECT_THROW(r.counter_family("x_total", "X.", {"other"}), std::invalid_argument);
  EXPECT_THROW(r.counter_family("bad-name", "X."), std::invalid_argument);
  EXPECT_THROW(r.counter_family("ok", "X.", {"le"}), std::invalid_argument);
  EXPECT_THROW(r.add_histogram("h", "H.", {1, 1}), std::invalid_argument);
  EXPECT_THROW(a.with({"v", "w"}), std::invalid_argument);
}

// People read bucket bounds, and a bound's le label must not change spelling between versions
// (std::to_chars's shortest form wrote 0.0001 as "1e-04").
TEST(Metrics, WritesBucketBoundsAndValuesInPlainDecimals) {
  metrics_registry r;
  auto& h = r.add_histogram("h_seconds", "H.", {0.0001, 0.00025, 0.001, 0.5, 2.5, 10});
  h.observe(0.00005);
  auto text = r.render();
  for (const char* le : {"0.0001", "0.00025", "0.001", "0.5", "2.5", "10", "+Inf"})
    EXPECT_NE(text.find("h_seconds_bucket{le=\"" + std::string(le) + "\"}"), std::string::npos)
        << le << " in\n" << text;
  EXPECT_EQ(text.find("e-"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_sum 0.00005\n"), std::string::npos) << text;
  EXPECT_EQ(format_sample_value(0.0001), "0.0001");
  EXPECT_EQ(format_sample_value(1e-7), "0.0000001");
  EXPECT_EQ(format_sample_value(0.1 + 0.2), "0.30000000000000004");  // Reads back the same.
  EXPECT_EQ(format_sample_value(-2.5), "-2.5");
  EXPECT_EQ(format_sample_value(3), "3");
  EXPECT_EQ(format_sample_value(1e300), "1e+300");
}

TEST(Metrics, RemovesTheSeriesOfOneLabelValue) {
  metrics_registry r;
  auto& allocated = r.gauge_family("allocated", "A.", {"queue", "resource"});
  auto& other = r.gauge_family("other", "O.", {"kind"});
  allocated.with({"q1", "cpu"}).set(1);
  allocated.with({"q1", "memory"}).set(2);
  allocated.with({"q2", "cpu"}).set(3);
  other.with({"q1"}).set(4);
  auto held = allocated.share({"q1", "cpu"});

  EXPECT_EQ(allocated.remove_series_with("queue", "q1"), 2u);
  EXPECT_EQ(other.remove_series_with("queue", "q1"), 0u) << "no such label: nothing goes";
  auto text = r.render();
  EXPECT_EQ(text.find("queue=\"q1\""), std::string::npos) << text;
  EXPECT_NE(text.find("allocated{queue=\"q2\",resource=\"cpu\"} 3"), std::string::npos) << text;
  EXPECT_NE(text.find("other{kind=\"q1\"} 4"), std::string::npos) << text;

  // A holder records into its removed series harmlessly; asked for again, the series is new.
  held->set(9);
  EXPECT_EQ(r.render(), text);
  EXPECT_EQ(allocated.with({"q1", "cpu"}).value(), 0);
}

TEST(Metrics, SampledMetricsAreReadAtEachRender) {
  metrics_registry r;
  double seconds = 1.5;
  r.add_sampled("cpu_seconds_total", "CPU.", metric_type::counter, [&] { return seconds; });
  EXPECT_EQ(r.render(), "# HELP cpu_seconds_total CPU.\n# TYPE cpu_seconds_total counter\n"
                        "cpu_seconds_total 1.5\n");
  seconds = 2.25;
  EXPECT_NE(r.render().find("cpu_seconds_total 2.25\n"), std::string::npos);
  EXPECT_THROW(r.add_sampled("cpu_seconds_total", "again", metric_type::gauge, [] { return 0.0; }),
               std::invalid_argument);
  EXPECT_THROW(r.add_gauge("cpu_seconds_total", "again"), std::invalid_argument);
  EXPECT_THROW(r.add_sampled("h", "H.", metric_type::histogram, [] { return 0.0; }),
               std::invalid_argument);
}

TEST(Metrics, CountsFromManyThreads) {
  metrics_registry r;
  auto& c = r.add_counter("n_total", "N.");
  auto& g = r.add_gauge("g", "G.");
  auto& h = r.add_histogram("h", "H.", default_latency_buckets_seconds());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.inc();
        g.inc();
        h.observe(0.001);
      }
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(c.value(), 40000u);
  EXPECT_EQ(g.value(), 40000.0);
  EXPECT_EQ(h.count(), 40000u);
}

TEST(Metrics, EnumsHaveStrings) {
  for (int i = 0; i <= static_cast<int>(metric_type_last); ++i)
    EXPECT_NE(to_string(static_cast<metric_type>(i)), "untyped");
  for (int i = 0; i <= static_cast<int>(status_reason_last); ++i) {
    auto r = static_cast<status_reason>(i);
    EXPECT_FALSE(to_string(r).empty());
    EXPECT_GE(http_code(r), 400);
  }
}

TEST(Errors, StatusCodesFollowTheDocumentedMapping) {
  struct row {
    errc code;
    int http;
    const char* reason;
  };
  for (auto [code, http, reason] :
       {row{errc::invalid_argument, 422, "Invalid"}, row{errc::not_found, 404, "NotFound"},
        row{errc::already_exists, 409, "AlreadyExists"}, row{errc::conflict, 409, "Conflict"},
        row{errc::failed_precondition, 422, "Invalid"},
        row{errc::too_large, 413, "RequestEntityTooLarge"},
        row{errc::unauthenticated, 401, "Unauthorized"},
        row{errc::unavailable, 503, "ServiceUnavailable"},
        row{errc::corruption, 500, "InternalError"}, row{errc::io_error, 500, "InternalError"},
        row{errc::internal, 500, "InternalError"}}) {
    auto e = api_error::from(status{code, "m"});
    EXPECT_EQ(e.code(), http) << to_string(code);
    EXPECT_EQ(to_string(e.reason), reason) << to_string(code);
    EXPECT_EQ(e.message, "m");
  }
}

} // namespace
} // namespace phalanx::api
