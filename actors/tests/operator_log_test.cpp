// The operator log's two formats: every line parses back to the same keys and values, however
// the values are written (quotes, spaces, newlines, control characters, unicode).

#include "actors/operator_log.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace phalanx::actors::oplog {
namespace {

// Restores the format and level a test changed.
struct format_scope {
  explicit format_scope(format f) { set_format(f); }
  ~format_scope() { set_format(format::logfmt); }
};

const std::string nasty = "a \"quoted\" word\\ with = and\nnewline\ttab \x01 \xc3\xa9";

TEST(OperatorLog, JsonLinesParseBackToTheirValues) {
  format_scope scope(format::json);
  auto l = warn("binding refused");
  l.unwritten().kv("pod", "ml/tf-0").kv("error", nasty).kv("attempts", 3).kv("share", 0.25)
      .kv("admitted", true).kv("big", uint64_t{18'000'000'000'000'000'000u});
  auto parsed = boost::json::parse(l.text()).as_object();
  EXPECT_EQ(parsed.at("level"), "warn");
  EXPECT_EQ(parsed.at("msg"), "binding refused");
  EXPECT_EQ(parsed.at("pod"), "ml/tf-0");
  EXPECT_EQ(std::string(parsed.at("error").as_string()), nasty);
  EXPECT_EQ(parsed.at("attempts"), 3);
  EXPECT_EQ(parsed.at("share"), 0.25);
  EXPECT_EQ(parsed.at("admitted"), true);
  EXPECT_EQ(parsed.at("big").as_uint64(), 18'000'000'000'000'000'000u);
  // The timestamp is keyed and in RFC 3339, UTC, with milliseconds.
  const std::string ts(parsed.at("ts").as_string());
  ASSERT_EQ(ts.size(), 24u) << ts;
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts.back(), 'Z');
  // The first keys are always ts, level, msg, in that order.
  EXPECT_EQ(l.text().rfind("{\"ts\":\"", 0), 0u) << l.text();
}

// logfmt: bare values when nothing needs quoting, quoted with JSON's escapes otherwise; the line
// stays one line.
TEST(OperatorLog, LogfmtQuotesOnlyWhatNeedsIt) {
  format_scope scope(format::logfmt);
  auto l = info("gang placed");
  l.unwritten().kv("gang", "ml/tf").kv("pods", 3).kv("reason", "no room").kv("empty", "")
      .kv("error", nasty);
  const auto text = l.text();
  EXPECT_EQ(text.rfind("ts=", 0), 0u) << text;
  EXPECT_NE(text.find(" level=info msg=\"gang placed\" gang=ml/tf pods=3 reason=\"no room\" "
                      "empty=\"\" error=\"a \\\"quoted\\\" word\\\\ with = and\\nnewline\\ttab "
                      "\\u0001 \xc3\xa9\""),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\n'), std::string::npos);
}

TEST(OperatorLog, FormatsAreNamedAsTheFlagTakesThem) {
  EXPECT_EQ(format_from_string("logfmt"), format::logfmt);
  EXPECT_EQ(format_from_string("json"), format::json);
  EXPECT_EQ(format_from_string("JSON"), std::nullopt);
  EXPECT_EQ(format_from_string("text"), std::nullopt);
}

TEST(OperatorLog, ADisabledLevelBuildsNothing) {
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  auto l = info("gang placed");
  l.unwritten().kv("gang", "ml/tf");
  EXPECT_EQ(l.text(), "");
  spdlog::set_level(level);
}

// At most `burst` lines per interval from a call site, across threads; the next line that passes
// counts the calls left out.
TEST(OperatorLog, ARateLimitPassesABurstPerIntervalAndCountsTheRest) {
  rate_limit limit{std::chrono::hours(1), 3};
  EXPECT_EQ(limit.pass(), 0u);
  EXPECT_EQ(limit.pass(), 0u);
  EXPECT_EQ(limit.pass(), 0u);
  std::atomic<int> passed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i)
        if (limit.pass())
          ++passed;
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(passed.load(), 0);

  // A new window: the first line says how many were left out in the last.
  rate_limit fast{std::chrono::milliseconds(20), 1};
  EXPECT_EQ(fast.pass(), 0u);
  EXPECT_EQ(fast.pass(), std::nullopt);
  EXPECT_EQ(fast.pass(), std::nullopt);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(fast.pass(), 2u);
}

} // namespace
} // namespace phalanx::actors::oplog
