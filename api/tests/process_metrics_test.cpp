// The process_* metrics read from /proc/self, and phalanx_build_info: the parsers on the texts
// proc(5) documents, and the rendered values of this very process.

#include "api/process_metrics.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <sstream>

namespace phalanx::api {
namespace {

// The value of an unlabelled series in the Prometheus text, or NaN.
double sample(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0)
      return std::stod(line.substr(name.size() + 1));
  return std::numeric_limits<double>::quiet_NaN();
}

TEST(ProcessMetrics, ParsesProcStatWithAnAwkwardCommand) {
  // Field 2 may hold spaces and parentheses: fields are counted from the last ')'.
  const std::string line =
      "4242 (phalanx (d) x) S 1 4242 4242 0 -1 4194560 3093 0 0 0 150 25 0 0 20 0 9 0 "
      "123456 987654321 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0\n";
  auto s = parse_proc_stat(line);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->user_ticks, 150u);
  EXPECT_EQ(s->system_ticks, 25u);
  EXPECT_EQ(s->start_ticks, 123456u);
  EXPECT_EQ(s->virtual_bytes, 987654321u);
  EXPECT_EQ(s->resident_pages, 2048u);
  EXPECT_FALSE(parse_proc_stat("4242 (short) S 1 2 3\n"));
  EXPECT_FALSE(parse_proc_stat("no parentheses"));
}

TEST(ProcessMetrics, ParsesLimitsAndBootTime) {
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max open files            1024                 524288               files     \n";
  EXPECT_EQ(parse_max_open_files(limits), 1024u);
  EXPECT_EQ(parse_max_open_files("Max open files            unlimited            unlimited  files\n"),
            std::numeric_limits<uint64_t>::max());
  EXPECT_FALSE(parse_max_open_files("Max processes 10 10 processes\n"));
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"),
            1700000000u);
  EXPECT_FALSE(parse_boot_time("cpu 1 2 3\n"));
}

TEST(ProcessMetrics, RendersThisProcess) {
  metrics_registry r;
  register_process_metrics(r);
  auto text = r.render();
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos) << text;
  EXPECT_GE(sample(text, "process_cpu_seconds_total"), 0);
  EXPECT_GT(sample(text, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(sample(text, "process_virtual_memory_bytes"),
            sample(text, "process_resident_memory_bytes"));
  EXPECT_GE(sample(text, "process_open_fds"), 3);  // stdin, stdout, stderr at least.
  EXPECT_GE(sample(text, "process_max_fds"), sample(text, "process_open_fds"));
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  const double started = sample(text, "process_start_time_seconds");
  EXPECT_LE(started, now + 1);
  EXPECT_GT(started, now - 24 * 3600) << "this test process started today";
}

TEST(ProcessMetrics, BuildInfoNamesTheVersion) {
  metrics_registry r;
  register_build_info(r, {"1.2.3", "g++ 12.2.0", "Release"});
  EXPECT_NE(r.render().find("phalanx_build_info{version=\"1.2.3\",compiler=\"g++ 12.2.0\","
                            "build_type=\"Release\"} 1\n"),
            std::string::npos)
      << r.render();
  auto mine = this_build();
  EXPECT_NE(mine.version, "unknown") << "CMake passes the project's version";
  EXPECT_NE(mine.build_type, "unknown");
}

} // namespace
} // namespace phalanx::api
