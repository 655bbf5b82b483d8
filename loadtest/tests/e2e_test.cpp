// End-to-end runs (label e2e): push against a real phalanxd, restart of a real phalanxd on a
// built store, and the HTML reports rendered by headless Chromium. Chromium must be installed
// (Debian package `chromium`, from `make deps`): without it the render test fails, it does not
// skip.

#include "loadtest/report.hpp"
#include "loadtest/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>

namespace phalanx::loadtest {
namespace {

using testing::number;
using testing::read_report;
using testing::run;
using testing::scratch_dir;
using testing::testdata;

TEST(E2eLoadtestPush, SmallRunAgainstARealPhalanxd) {
  scratch_dir dir;
  auto json = dir.path + "/push.json";
  ASSERT_EQ(run({"push", "--nodes", "30", "--podgroups", "80", "--gang-sizes", "1:50,2-12:50",
                 "--pod-cpu", "250m-1", "--gpu-gang-fraction", "0.05", "--concurrency", "8",
                 "--sample-interval", "50ms", "--work-dir", dir.path, "--json", json}),
            0);
  auto rep = read_report(json);
  EXPECT_EQ(rep["mode"].as_string(), "push");
  EXPECT_TRUE(rep["all_scheduled"].as_bool());
  EXPECT_TRUE(rep["invariants_ok"].as_bool())
      << boost::json::serialize(rep["invariant_violations"]);
  EXPECT_EQ(rep["invariants_source"].as_string().subview(0, 4), "api:");
  EXPECT_EQ(rep["gangs_running"].as_int64(), 80);
  EXPECT_GT(number(rep, "pods_per_second"), 0);
  EXPECT_GT(number(rep, "submitted_pods_per_second"), 0);
  EXPECT_TRUE(rep["p99_gang_ms"].is_number());
  EXPECT_EQ(rep["daemon_exit_code"].as_int64(), 0);
  EXPECT_EQ(rep["submission_failures"].as_int64(), 0);
}

TEST(E2eLoadtestPush, PodGroupsAndPodsOneRequestEach) {
  scratch_dir dir;
  auto json = dir.path + "/push.json";
  ASSERT_EQ(run({"push", "--nodes", "10", "--podgroups", "20", "--gang-sizes", "1-6:1", "--submit",
                 "podgroups", "--gpu-gang-fraction", "0", "--pod-duration", "1s", "--concurrency",
                 "4", "--work-dir", dir.path, "--json", json}),
            0);
  auto rep = read_report(json);
  EXPECT_TRUE(rep["all_scheduled"].as_bool());
  EXPECT_TRUE(rep["invariants_ok"].as_bool());
  // With a pod duration the run waits for every gang to complete.
  EXPECT_EQ(rep["gangs_completed"].as_int64(), 20);
  EXPECT_GE(number(rep, "time_to_complete_all_seconds"), 1.0);
}

TEST(E2eLoadtestRestart, SmallStoreComesBackReady) {
  scratch_dir dir;
  auto json = dir.path + "/restart.json";
  ASSERT_EQ(run({"restart", "--pods", "3000", "--podgroups", "400", "--nodes", "100", "--jobs",
                 "50", "--repeat", "2", "--work-dir", dir.path, "--json", json}),
            0);
  auto rep = read_report(json);
  EXPECT_GT(number(rep, "restart_seconds"), 0);
  EXPECT_LE(number(rep, "restart_seconds_min"), number(rep, "restart_seconds"));
  EXPECT_TRUE(rep["all_objects_back"].as_bool());
  EXPECT_TRUE(rep["clean_stops"].as_bool());
  ASSERT_EQ(rep["rounds"].as_array().size(), 2u);
  EXPECT_EQ(rep["rounds"].as_array()[0].as_object()["podgroups_listed"].as_int64(), 400);
  EXPECT_EQ(rep["store"].as_object()["bound_pods"].as_int64(), 1500);
}

// --steady-after reads the resident set again once the store's pending pods are bound and idle
// gangs parked (10 s of quiet by default, asked every 5 s).
TEST(E2eLoadtestRestart, SteadyAfterReadsTheResidentSetOnceGangsAreParked) {
  scratch_dir dir;
  auto json = dir.path + "/restart.json";
  ASSERT_EQ(run({"restart", "--pods", "1000", "--podgroups", "100", "--nodes", "50", "--repeat",
                 "1", "--steady-after", "20s", "--work-dir", dir.path, "--json", json}),
            0);
  auto rep = read_report(json);
  EXPECT_GT(number(rep, "rss_steady_bytes"), 0);
  EXPECT_GT(number(rep, "rss_steady_bytes_per_pod"), 0);
  auto round = rep["rounds"].as_array()[0].as_object();
  EXPECT_GT(round["rss_steady_bytes"].as_int64(), 0);
  EXPECT_GT(round["parked_gangs"].as_int64(), 0) << "no gang was parked 20 s after ready";
}

// Chromium's path: CHROMIUM, else chromium or chromium-browser on PATH.
std::string find_chromium() {
  if (const char* env = std::getenv("CHROMIUM"); env != nullptr && *env != '\0')
    return env;
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/snap/bin"})
    for (const char* name : {"chromium", "chromium-browser"}) {
      auto p = std::string(dir) + "/" + name;
      if (::access(p.c_str(), X_OK) == 0)
        return p;
    }
  return {};
}

// Loads the page in headless Chromium and returns the DOM after its scripts ran.
std::string dump_dom(const std::string& chromium, const std::string& html_path,
                     const std::string& profile) {
  std::string cmd = "timeout 120 '" + chromium +
                    "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--disable-dev-shm-usage --user-data-dir='" +
                    profile + "' --dump-dom 'file://" + html_path + "' 2>/dev/null";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr)
    return out;
  std::array<char, 65536> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "chromium exited with " << status << " for " << html_path;
  return out;
}

// The <body ...> start tag, where the page's script leaves data-rendered or data-error (the
// script's own text names both attributes, so the whole DOM cannot be searched for them).
std::string body_tag(const std::string& dom) {
  auto start = dom.find("<body");
  if (start == std::string::npos)
    return {};
  return dom.substr(start, dom.find('>', start) - start + 1);
}

void expect_rendered(const std::string& dom, int plots, const std::vector<std::string>& ids) {
  auto body = body_tag(dom);
  EXPECT_EQ(body.find("data-error"), std::string::npos) << body;
  EXPECT_EQ(body, "<body data-rendered=\"" + std::to_string(plots) + "\">") << dom.substr(0, 2000);
  std::regex svg("<svg[^>]*class=\"plot\"");
  auto count =
      std::distance(std::sregex_iterator(dom.begin(), dom.end(), svg), std::sregex_iterator());
  EXPECT_EQ(count, plots);
  for (const auto& id : ids)
    EXPECT_NE(dom.find("data-plot=\"" + id + "\""), std::string::npos) << id;
  // Lines and bars were drawn, not just empty frames.
  EXPECT_NE(dom.find("class=\"series\""), std::string::npos);
}

// A small big-delete: the figures are there, consistent, and every pod is gone afterwards.
TEST(E2eLoadtestBigDelete, SmallJobCreatedAndDeletedWhileAnotherClientReads) {
  scratch_dir dir;
  auto json = dir.path + "/big-delete.json";
  ASSERT_EQ(run({"big-delete", "--pods", "5000", "--work-dir", dir.path, "--json", json}), 0);
  auto rep = read_report(json);
  EXPECT_EQ(rep["mode"].as_string(), "big-delete");
  EXPECT_TRUE(rep["all_pods_gone"].as_bool());
  EXPECT_TRUE(rep["clean_stop"].as_bool());
  EXPECT_GT(number(rep, "create_seconds"), 0);
  EXPECT_GT(number(rep, "delete_seconds"), 0);
  const auto& reads = rep["reads_during_delete"].as_object();
  EXPECT_EQ(reads.at("failed").as_int64(), 0);
  EXPECT_LE(reads.at("p99_ms").to_number<double>(), reads.at("max_ms").to_number<double>());
  EXPECT_EQ(rep["parameters"].as_object().at("pods").as_int64(), 5000);
}

TEST(E2eLoadtestHtml, ReportsRenderInHeadlessChromium) {
  auto chromium = find_chromium();
  ASSERT_FALSE(chromium.empty())
      << "headless Chromium is required for this test: install the Debian package chromium "
         "(make deps installs it) or set CHROMIUM";
  scratch_dir dir;
  // A small inproc run and a small replay write the two kinds of page.
  ASSERT_EQ(run({"inproc", "--nodes", "20", "--podgroups", "40", "--gang-sizes", "1-8:1",
                 "--gpu-gang-fraction", "0", "--sample-interval", "10ms", "--work-dir", dir.path,
                 "--html", dir.path + "/inproc.html"}),
            0);
  ASSERT_EQ(run({"replay", "--trace", testdata("philly_excerpt.csv"), "--cluster-from-vc",
                 testdata("vc_nodes_excerpt.csv"), "--vc-scale", "0.5", "--pod-interval", "30s",
                 "--html", dir.path + "/replay.html"}),
            0);
  auto inproc = dump_dom(chromium, dir.path + "/inproc.html", dir.path + "/profile-1");
  expect_rendered(inproc, 5, {"scheduled", "latency", "submit_latency", "utilization", "queues"});
  auto replay = dump_dom(chromium, dir.path + "/replay.html", dir.path + "/profile-2");
  expect_rendered(replay, 2, {"jct_cdf", "gpu_utilization"});
  EXPECT_NE(replay.find("pod-by-pod"), std::string::npos);
}

TEST(E2eLoadtestHtml, AScriptErrorShowsInTheDom) {
  auto chromium = find_chromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is required for this test";
  scratch_dir dir;
  boost::json::object rep;
  rep["mode"] = "broken";
  rep["plots"] = boost::json::array{
      boost::json::object{{"id", "x"}, {"kind", "line"}, {"title", "t"}}}; // No lines.
  ASSERT_TRUE(write_text_file(dir.path + "/broken.html", render_html_report(rep)).ok());
  auto dom = dump_dom(chromium, dir.path + "/broken.html", dir.path + "/profile");
  auto body = body_tag(dom);
  EXPECT_NE(body.find("data-error=\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(body.find("data-rendered"), std::string::npos) << body;
  EXPECT_NE(dom.find("Report script error: "), std::string::npos);
}

} // namespace
} // namespace phalanx::loadtest
