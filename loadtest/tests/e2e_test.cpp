// End-to-end runs (label e2e): push against a real phalanxd, restart of a real phalanxd on a
// built store, and the HTML reports rendered by headless Chromium. Chromium must be installed
// (Debian package `chromium`, from `make deps`): without it the render test fails, it does not
// skip.

#include "loadtest/phalanxd_process.hpp"
#include "loadtest/report.hpp"
#include "loadtest/tests/test_util.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <zlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>
#include <tuple>

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

// Waits up to `limit` for `path` to contain `text`; the file's text then.
std::string wait_for_text(const std::string& path, const std::string& text,
                          std::chrono::seconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  std::string got;
  while (std::chrono::steady_clock::now() < until) {
    if (auto t = read_text_file(path); t.ok()) {
      got = *t;
      if (got.find(text) != std::string::npos)
        return got;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return got;
}

// True once `pid` is gone or a zombie (reparented to an init that has not reaped it yet).
bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0)
    return errno == ESRCH;
  auto stat = read_text_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat)
    return true;
  auto close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z';
}

// The load tester as another process, pushing gangs whose pods run for an hour to a phalanxd it
// starts: it runs until stopped. Returns its pid and the daemon's (from "phalanxd (pid N)").
std::pair<pid_t, pid_t> start_endless_push(const scratch_dir& dir, const std::string& log) {
  std::filesystem::create_directories(dir.path + "/work");
  auto pid = spawn_with_log({PHALANX_LOADTEST_BINARY, "push", "--nodes", "4", "--podgroups", "8",
                             "--gang-sizes", "1-2:1", "--gpu-gang-fraction", "0",
                             "--pod-duration", "1h", "--stall-after", "0", "--concurrency", "2",
                             "--work-dir", dir.path + "/work", "--json", dir.path + "/push.json",
                             "--html", dir.path + "/push.html"},
                            log);
  EXPECT_TRUE(pid.ok());
  if (!pid)
    return {-1, -1};
  // Two progress lines (a second apart): the gangs have been submitted and placed by then.
  auto text = wait_for_text(log, " requests (", std::chrono::seconds(120));
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < until;
       std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
    text = read_text_file(log).value_or("");
    std::regex progress("\\n(completed|scheduled) ");
    if (std::distance(std::sregex_iterator(text.begin(), text.end(), progress),
                      std::sregex_iterator()) >= 2)
      break;
  }
  std::smatch m;
  pid_t daemon = -1;
  if (std::regex_search(text, m, std::regex("phalanxd \\(pid ([0-9]+)\\) ready")))
    daemon = static_cast<pid_t>(std::stol(m[1].str()));
  EXPECT_GT(daemon, 0) << text;
  return {*pid, daemon};
}

// The exit status of `pid`, waited for up to two minutes (then SIGKILL).
int wait_exit(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 1200; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  ADD_FAILURE() << "the load tester did not exit within 2 minutes";
  return status;
}

// SIGTERM stops the run: the child phalanxd is stopped, the temporary directory removed, the
// partial report written and marked interrupted, and the exit code is 128 + 15.
TEST(E2eLoadtestInterrupt, SigtermStopsTheDaemonRemovesTheTempDirAndWritesAPartialReport) {
  scratch_dir dir;
  auto log = dir.path + "/tester.log";
  auto [tester, daemon] = start_endless_push(dir, log);
  ASSERT_GT(tester, 0);
  ASSERT_GT(daemon, 0);
  EXPECT_FALSE(process_gone(daemon));
  ASSERT_EQ(::kill(tester, SIGTERM), 0);
  int status = wait_exit(tester);
  auto text = read_text_file(log).value_or("");
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << text;
  EXPECT_EQ(WEXITSTATUS(status), 143) << text;
  EXPECT_TRUE(process_gone(daemon)) << "phalanxd " << daemon << " still runs";
  EXPECT_TRUE(std::filesystem::is_empty(dir.path + "/work")) << "the temporary directory is left";
  auto rep = read_report(dir.path + "/push.json");
  EXPECT_EQ(rep["outcome"].as_string(), "interrupted");
  EXPECT_EQ(rep["interrupted_by"].as_string(), "SIGTERM");
  EXPECT_EQ(rep["verdict"].as_object()["result"].as_string(), "interrupted");
  auto html = read_text_file(dir.path + "/push.html").value_or("");
  EXPECT_NE(html.find("This run was INTERRUPTED: the figures below are partial."),
            std::string::npos);
  EXPECT_NE(html.find("interrupted by SIGTERM"), std::string::npos);
  EXPECT_NE(text.find("push: interrupted by SIGTERM"), std::string::npos) << text;
  // The run waits for completions (pods of an hour), and its progress line counts those: not
  // "scheduled 100.0% ... ETA 0ms" for an hour.
  EXPECT_NE(text.find("completed   0.0%  0/"), std::string::npos) << text;
  EXPECT_EQ(text.find("100.0%"), std::string::npos) << text;
}

// restart: SIGTERM while a round waits out --steady-after ends it at once; the report covers
// the rounds measured, the store's directory is removed.
TEST(E2eLoadtestInterrupt, SigtermDuringRestartReportsTheRoundsMeasured) {
  scratch_dir dir;
  const auto work = dir.path + "/work";
  std::filesystem::create_directories(work);
  auto log = dir.path + "/tester.log";
  auto pid = spawn_with_log({PHALANX_LOADTEST_BINARY, "restart", "--pods", "200", "--podgroups",
                             "20", "--nodes", "10", "--repeat", "3", "--steady-after", "1h",
                             "--work-dir", work, "--json", dir.path + "/restart.json"},
                            log);
  ASSERT_TRUE(pid.ok());
  // The first daemon is listening once its port file exists.
  bool listening = false;
  for (int i = 0; i < 1200 && !listening; ++i) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(work))
      listening |= e.path().filename() == "round-0.port";
    if (!listening)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(listening) << read_text_file(log).value_or("");
  ASSERT_EQ(::kill(*pid, SIGTERM), 0);
  int status = wait_exit(*pid);
  auto text = read_text_file(log).value_or("");
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 143) << text;
  EXPECT_TRUE(std::filesystem::is_empty(work)) << "the store is left";
  auto rep = read_report(dir.path + "/restart.json");
  EXPECT_EQ(rep["outcome"].as_string(), "interrupted");
  EXPECT_EQ(rep["outcome_message"].as_string(),
            "interrupted by SIGTERM after 1 of 3 rounds; the figures are over those");
  EXPECT_GT(number(rep, "restart_seconds"), 0);
  EXPECT_NE(text.find("phalanx-loadtest: stopping"), std::string::npos) << text;
}

// big-delete (a mode that returns its figures at the end): SIGTERM while its job of many pods
// is being made stops the run there; the daemon and the work directory go, and the exit code
// is 128 + 15 with the reason on stderr.
TEST(E2eLoadtestInterrupt, SigtermDuringBigDeleteStopsTheDaemonAndRemovesItsDirectory) {
  scratch_dir dir;
  const auto work = dir.path + "/work";
  std::filesystem::create_directories(work);
  auto log = dir.path + "/tester.log";
  auto pid = spawn_with_log({PHALANX_LOADTEST_BINARY, "big-delete", "--pods", "200000",
                             "--work-dir", work, "--json", dir.path + "/big-delete.json"},
                            log);
  ASSERT_TRUE(pid.ok());
  // The daemon is listening once its log says ready.
  std::string daemon_log;
  for (int i = 0; i < 1200 && daemon_log.find("msg=\"ready\"") == std::string::npos; ++i) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(work))
      if (e.path().filename() == "phalanxd.log")
        daemon_log = read_text_file(e.path().string()).value_or("");
    if (daemon_log.find("msg=\"ready\"") == std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(daemon_log.find("msg=\"ready\""), std::string::npos)
      << read_text_file(log).value_or("");
  ASSERT_EQ(::kill(*pid, SIGTERM), 0);
  int status = wait_exit(*pid);
  auto text = read_text_file(log).value_or("");
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 143) << text;
  EXPECT_TRUE(std::filesystem::is_empty(work)) << "the daemon's directory is left";
  EXPECT_NE(text.find("big-delete: interrupted by SIGTERM while"), std::string::npos) << text;
}

// A load tester killed outright (SIGKILL: no handler runs) takes its phalanxd with it.
TEST(E2eLoadtestInterrupt, SigkillOfTheTesterTakesTheDaemonWithIt) {
  scratch_dir dir;
  auto [tester, daemon] = start_endless_push(dir, dir.path + "/tester.log");
  ASSERT_GT(tester, 0);
  ASSERT_GT(daemon, 0);
  ASSERT_EQ(::kill(tester, SIGKILL), 0);
  wait_exit(tester);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = process_gone(daemon);
    if (!gone)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "phalanxd " << daemon << " outlived the load tester";
  if (!gone)
    ::kill(daemon, SIGKILL);
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

// Every chart is a Chart.js canvas that drew coloured pixels (its series, not only axes): the
// page leaves data-colored="N" on each canvas once drawn.
void expect_rendered(const std::string& dom, int plots, const std::vector<std::string>& ids) {
  auto body = body_tag(dom);
  EXPECT_EQ(body.find("data-error"), std::string::npos) << body;
  EXPECT_EQ(body, "<body data-rendered=\"" + std::to_string(plots) + "\">") << dom.substr(0, 2000);
  std::regex canvas("<canvas class=\"plot\" data-plot=\"([a-z_]+)\"[^>]*data-colored=\"([0-9]+)\"");
  int count = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), canvas); it != std::sregex_iterator();
       ++it) {
    ++count;
    EXPECT_GT(std::stol((*it)[2].str()), 0) << "chart " << (*it)[1].str() << " drew no series";
  }
  EXPECT_EQ(count, plots);
  for (const auto& id : ids)
    EXPECT_NE(dom.find("data-plot=\"" + id + "\""), std::string::npos) << id;
}

// Takes a screenshot of the page; the PNG's bytes, empty when Chromium failed.
std::string screenshot(const std::string& chromium, const std::string& html_path,
                       const std::string& png, const std::string& profile) {
  std::string cmd = "timeout 120 '" + chromium +
                    "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                    "--disable-background-networking --disable-component-update --disable-sync "
                    "--disable-dev-shm-usage --hide-scrollbars --window-size=1400,2400 "
                    "--user-data-dir='" + profile + "' --screenshot='" + png + "' 'file://" +
                    html_path + "' >/dev/null 2>&1";
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "chromium: " << status;
  auto bytes = read_text_file(png);
  return bytes ? *bytes : std::string();
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
  EXPECT_NE(inproc.find("data-verdict=\"targets-missed\""), std::string::npos);
  auto replay = dump_dom(chromium, dir.path + "/replay.html", dir.path + "/profile-2");
  expect_rendered(replay, 5,
                  {"jct_cdf", "gpu_utilization", "jct_cdf_small", "jct_cdf_medium", "jct_cdf_big"});
  EXPECT_NE(replay.find("pod-by-pod"), std::string::npos);
}

// An RGBA image decoded from a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's
// screenshots are); empty when the file is something else.
struct rgba_image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> pixels; // RGBA, row by row.
};

uint32_t big_endian32(const std::string& s, std::size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

rgba_image decode_png(const std::string& png) {
  rgba_image img;
  if (png.size() < 8 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0)
    return img;
  std::string idat;
  uint32_t channels = 0;
  for (std::size_t at = 8; at + 8 <= png.size();) {
    uint32_t length = big_endian32(png, at);
    std::string type = png.substr(at + 4, 4);
    if (at + 12 + length > png.size())
      return {};
    if (type == "IHDR") {
      img.width = big_endian32(png, at + 8);
      img.height = big_endian32(png, at + 12);
      uint8_t depth = uint8_t(png[at + 16]), color = uint8_t(png[at + 17]);
      uint8_t interlace = uint8_t(png[at + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6))
        return {};
      channels = color == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      idat.append(png, at + 8, length);
    }
    at += 12 + length;
  }
  const std::size_t stride = std::size_t(img.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_size = raw.size();
  if (channels == 0 ||
      ::uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()),
                   idat.size()) != Z_OK ||
      raw_size != raw.size())
    return {};
  // Undo each scanline's filter (PNG 1.2 section 6): None, Sub, Up, Average, Paeth.
  std::vector<uint8_t> prev(stride, 0), row(stride);
  img.pixels.reserve(std::size_t(img.width) * img.height * 4);
  for (uint32_t y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    for (std::size_t i = 0; i < stride; ++i) {
      int a = i >= channels ? row[i - channels] : 0, b = prev[i],
          c = i >= channels ? prev[i - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: {
          int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: break;
      }
      row[i] = uint8_t(in[i] + predictor);
    }
    for (uint32_t x = 0; x < img.width; ++x) {
      for (uint32_t k = 0; k < 3; ++k)
        img.pixels.push_back(row[x * channels + k]);
      img.pixels.push_back(channels == 4 ? row[x * channels + 3] : 255);
    }
    prev = row;
  }
  return img;
}

// Pixels that are clearly coloured (not white, grey or black): chart series, legend swatches.
int64_t colored_pixels(const rgba_image& img) {
  int64_t n = 0;
  for (std::size_t i = 0; i + 3 < img.pixels.size(); i += 4) {
    auto [lo, hi] = std::minmax({img.pixels[i], img.pixels[i + 1], img.pixels[i + 2]});
    n += hi - lo > 60;
  }
  return n;
}

// The screenshot itself, decoded: a chart with a line has thousands more coloured pixels than
// the same chart with no points (its axes, legend and the page's text are the same in both).
TEST(E2eLoadtestHtml, TheScreenshotShowsTheChartsLines) {
  auto chromium = find_chromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is required for this test";
  auto chart_js = read_chart_js(default_chart_js_path());
  ASSERT_TRUE(chart_js.ok()) << chart_js.error().message();
  scratch_dir dir;
  std::map<std::string, int64_t> colored;
  for (bool with_points : {true, false}) {
    boost::json::array points;
    if (with_points)
      for (int i = 0; i <= 100; ++i)
        points.push_back(boost::json::array{i, (i * 37) % 100});
    boost::json::object rep;
    rep["mode"] = "push";
    rep["outcome"] = "completed";
    rep["plots"] = boost::json::array{boost::json::object{
        {"id", "zigzag"}, {"kind", "line"}, {"title", "A zigzag"}, {"x_label", "s"},
        {"y_label", "pods"},
        {"lines", boost::json::array{boost::json::object{{"name", "series"},
                                                         {"points", std::move(points)}}}}}};
    std::string name = with_points ? "line" : "empty";
    ASSERT_TRUE(
        write_text_file(dir.path + "/" + name + ".html", render_html_report(rep, *chart_js)).ok());
    auto png = screenshot(chromium, dir.path + "/" + name + ".html",
                          dir.path + "/" + name + ".png", dir.path + "/profile-" + name);
    auto img = decode_png(png);
    ASSERT_GT(img.width, 0u) << name << ": not a PNG Chromium writes (" << png.size() << " bytes)";
    EXPECT_EQ(img.pixels.size(), std::size_t(img.width) * img.height * 4);
    colored[name] = colored_pixels(img);
  }
  std::printf("coloured pixels: %lld with the line, %lld without\n",
              static_cast<long long>(colored["line"]), static_cast<long long>(colored["empty"]));
  EXPECT_GT(colored["line"], colored["empty"] + 2000)
      << "with the line " << colored["line"] << " coloured pixels, without " << colored["empty"];
}

// A run that did not complete says so at the top of its page, in words, and the page still
// draws its charts.
TEST(E2eLoadtestHtml, AStalledOrInterruptedRunSaysSoAtTheTop) {
  auto chromium = find_chromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is required for this test";
  auto chart_js = read_chart_js(default_chart_js_path());
  ASSERT_TRUE(chart_js.ok()) << chart_js.error().message();
  scratch_dir dir;
  int i = 0;
  for (const auto& [outcome, message, words] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"stalled", "stalled: no gang started or completed for 30s, stopped 41.0 s into the "
                       "run; 3 of 8 gangs running", "This run FAILED."},
           {"interrupted", "interrupted by SIGTERM 2.0 s into the run; 3 of 8 gangs running; the "
                           "figures are partial",
            "This run was INTERRUPTED: the figures below are partial."}}) {
    boost::json::object rep;
    rep["mode"] = "push";
    rep["outcome"] = outcome;
    rep["outcome_message"] = message;
    rep["plots"] = boost::json::array{boost::json::object{
        {"id", "scheduled"}, {"kind", "line"}, {"title", "Pods over time"}, {"x_label", "s"},
        {"y_label", "pods"},
        {"lines", boost::json::array{boost::json::object{
                      {"name", "scheduled"},
                      {"points", boost::json::array{boost::json::array{0, 0},
                                                    boost::json::array{1, 10}}}}}}}};
    auto path = dir.path + "/" + outcome + ".html";
    ASSERT_TRUE(write_text_file(path, render_html_report(rep, *chart_js)).ok());
    auto dom = dump_dom(chromium, path, dir.path + "/profile-" + std::to_string(i++));
    EXPECT_NE(dom.find(words), std::string::npos) << dom.substr(0, 3000);
    EXPECT_NE(dom.find(message), std::string::npos) << dom.substr(0, 3000);
    EXPECT_NE(dom.find("data-verdict=\"" + std::string(outcome == "stalled" ? "failed"
                                                                           : "interrupted") +
                       "\""),
              std::string::npos);
    expect_rendered(dom, 1, {"scheduled"});
  }
}

TEST(E2eLoadtestHtml, AScriptErrorShowsInTheDom) {
  auto chromium = find_chromium();
  ASSERT_FALSE(chromium.empty()) << "headless Chromium is required for this test";
  scratch_dir dir;
  boost::json::object rep;
  rep["mode"] = "broken";
  rep["plots"] = boost::json::array{
      boost::json::object{{"id", "x"}, {"kind", "line"}, {"title", "t"}}}; // No lines.
  auto chart_js = read_chart_js(default_chart_js_path());
  ASSERT_TRUE(chart_js.ok()) << chart_js.error().message();
  ASSERT_TRUE(write_text_file(dir.path + "/broken.html", render_html_report(rep, *chart_js)).ok());
  auto dom = dump_dom(chromium, dir.path + "/broken.html", dir.path + "/profile");
  auto body = body_tag(dom);
  EXPECT_NE(body.find("data-error=\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(body.find("data-rendered"), std::string::npos) << body;
  EXPECT_NE(dom.find("Report script error: "), std::string::npos);
}

} // namespace
} // namespace phalanx::loadtest
