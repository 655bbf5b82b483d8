// Bit flips in a real data directory (issue 4, DESIGN.md section 5): the real phalanxd writes a
// store (PodGroups and pods that ran to completion, some that can never run, nodes, the default
// queue), part of it flushed to table files by a clean stop and the rest left in the WAL by a
// SIGKILL. Each seeded case copies that directory, flips one bit of a WAL (*.log) or table
// (*.sst) file, and starts phalanxd on it, half the cases with --quarantine-corrupt. Allowed:
//   - refusing to start: exit code 1 (never a signal), within the timeout (never a hang), with
//     an error in the log that names a column family, a key or a file, or says that
//     acknowledged writes were lost;
//   - starting: then every object it serves must be one that was acknowledged, with the same
//     content (metadata with uid and resourceVersion, spec, a pod's node and phase), I1-I3 must
//     hold, and an object that is missing must have been reported: the log says records were
//     quarantined (at least as many as are missing). Anything else is wrong state served
//     silently. It must then stop cleanly on SIGTERM.
// The reference is what phalanxd serves from the undamaged copy; two undamaged starts must agree
// (the state is at rest: nothing left to schedule or run), so a difference is the flip's doing.

#include "tests/crash/crash_support.hpp"

#include "api/codec.hpp"
#include "loadtest/phalanxd_process.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

namespace phalanx::crash_tests {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

// Object key -> the canonical JSON of what must not change: metadata, spec, and for pods the
// phase, for nodes the allocatable. Conditions and computed counts are left out.
using served_state = std::map<std::string, std::string>;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

result<served_state> read_served(api::http_client& client) {
  served_state out;
  struct list_path {
    const char* path;
    const char* kind;
  };
  for (auto [path, kind] : {list_path{"/api/v1/pods", "Pod"},
                            list_path{"/apis/scheduling.volcano.sh/v1beta1/podgroups", "PodGroup"},
                            list_path{"/api/v1/nodes", "Node"},
                            list_path{"/apis/scheduling.volcano.sh/v1beta1/queues", "Queue"},
                            list_path{"/apis/batch.volcano.sh/v1alpha1/jobs", "Job"}}) {
    api::client_request req;
    req.target = path;
    req.accept = "application/json";
    auto res = client.send(req);
    if (!res)
      return res.error();
    if (res->status != 200)
      return status{errc::unavailable,
                    std::string("GET ") + path + " answered " + std::to_string(res->status)};
    api::parse_limits limits;
    limits.max_bytes = std::size_t{256} << 20;
    auto parsed = api::parse_json(res->body, limits);
    if (!parsed || !parsed->is_object() || !parsed->as_object().contains("items"))
      return status{errc::internal, std::string("GET ") + path + ": not a list"};
    for (const auto& item : parsed->as_object().at("items").as_array()) {
      const auto& o = item.as_object();
      json::object keep;
      json::object meta = o.at("metadata").as_object();
      keep["metadata"] = meta;
      if (const auto* spec = o.if_contains("spec"))
        keep["spec"] = *spec;
      if (const auto* st = o.if_contains("status"); st != nullptr && st->is_object()) {
        if (const auto* phase = st->as_object().if_contains("phase");
            phase != nullptr && std::string_view(kind) == "Pod")
          keep["phase"] = *phase;
        if (const auto* alloc = st->as_object().if_contains("allocatable"))
          keep["allocatable"] = *alloc;
      }
      std::string key = std::string(kind) + " ";
      if (const auto* ns = meta.if_contains("namespace"))
        key += std::string(ns->as_string()) + "/";
      key += std::string(meta.at("name").as_string());
      if (!out.emplace(key, api::canonical_json(keep)).second)
        return status{errc::internal, "the list names " + key + " twice"};
    }
  }
  return out;
}

// The donor directory: written by the real daemon, at rest.
struct donor {
  scratch_dir dir;
  std::string data;                      // The pristine data directory (the daemon is gone).
  std::vector<std::string> acknowledged; // Keys of the workload objects answered 201.
  served_state reference;
};

// Submits gangs and waits until every feasible one completed.
void submit_and_settle(loadtest::phalanxd_process& d, const std::vector<gang_spec>& gangs,
                       const cluster_shape& cluster, std::vector<std::string>& acked) {
  api::http_client client(d.client_options());
  auto post = [&](const std::string& path, const std::string& body, const std::string& key) {
    api::client_request req;
    req.method = "POST";
    req.target = path;
    req.body = body;
    req.content_type = "application/json";
    auto res = client.send(req);
    ASSERT_TRUE(res.ok()) << res.error().message();
    ASSERT_EQ(res->status, 201) << res->body;
    acked.push_back(key);
  };
  for (const auto& g : gangs) {
    for (int i = 0; i < g.pods; ++i)
      post(pods_path(), g.pod_body(i), "Pod crash/" + g.pod_name(i));
    post(podgroups_path(), g.podgroup_body(), "PodGroup crash/" + g.name);
  }
  auto deadline = clock_type::now() + 60s;
  for (;;) {
    auto state = read_state(client);
    ASSERT_TRUE(state.ok()) << state.error().message();
    bool settled = true;
    for (const auto& g : gangs)
      for (int i = 0; feasible(g, cluster) && i < g.pods; ++i) {
        auto p = state->pods.find("crash/" + g.pod_name(i));
        settled &= p != state->pods.end() && p->second.phase == scheduler::pod_phase::succeeded;
      }
    if (settled)
      return;
    ASSERT_LT(clock_type::now(), deadline) << "the donor's gangs did not complete";
    std::this_thread::sleep_for(20ms);
  }
}

std::vector<gang_spec> donor_gangs(uint64_t seed, int count, const cluster_shape& cluster) {
  auto gangs = make_gangs(seed, count, cluster, 30);
  gangs[1].oversized = true; // Never admitted: pods that stay pending in the store.
  return gangs;
}

void make_donor(donor& out) {
  cluster_shape cluster;
  cluster.count = 4;
  ASSERT_TRUE(write_text_file(out.dir.sub("cluster.yaml"), cluster.yaml()));
  loadtest::phalanxd_options o;
  o.data_dir = out.dir.sub("donor");
  o.cluster_file = out.dir.sub("cluster.yaml");
  o.extra_args = {"--seed", "11"};
  {
    // First part: flushed into table files by a clean stop.
    auto d = loadtest::phalanxd_process::start(o);
    ASSERT_TRUE(d.ok()) << d.error().message();
    submit_and_settle(**d, donor_gangs(11, 30, cluster), cluster, out.acknowledged);
    auto code = (*d)->stop();
    ASSERT_TRUE(code.ok() && *code == 0) << (*d)->log_tail();
  }
  {
    // Second part: only in the WAL (and the page cache), as a SIGKILL leaves it.
    auto d = loadtest::phalanxd_process::start(o);
    ASSERT_TRUE(d.ok()) << d.error().message();
    submit_and_settle(**d, donor_gangs(12, 30, cluster), cluster, out.acknowledged);
    (*d)->kill();
  }
  out.data = o.data_dir;
}

struct outcome_tally {
  int refused = 0;
  int started_same = 0;
  int started_quarantined = 0;
  std::map<std::string, int> messages; // Refusal messages, shortened.
};

// Starts phalanxd on `data`; returns the served state, or nullopt when it refused (checked).
std::optional<served_state> start_and_read(const std::string& data, bool quarantine,
                                           const std::string& where, std::string& log,
                                           outcome_tally* tally) {
  loadtest::phalanxd_options o;
  o.data_dir = data;
  o.ready_timeout = 30s;
  if (quarantine)
    o.extra_args.push_back("--quarantine-corrupt");
  std::error_code ec;
  fs::remove(o.data_dir + ".phalanxd.log", ec); // The log of this start only.
  auto d = loadtest::phalanxd_process::start(o);
  log = read_file(o.data_dir + ".phalanxd.log");
  if (!d) {
    auto m = d.error().message();
    EXPECT_NE(m.find("exited with code 1 "), std::string::npos)
        << where << ": phalanxd neither started nor refused with exit code 1 (a signal is a "
        << "crash, a timeout a hang): " << m;
    static const std::regex names(
        R"((cannot open the store|cannot start).*()"
        R"((\b(nodes|queues|podgroups|pods|jobs|meta|quarantine|default)\b)|)"
        R"([0-9]+\.(sst|log)|MANIFEST|CURRENT|acknowledged writes were lost))");
    std::smatch match;
    EXPECT_TRUE(std::regex_search(log, match, names))
        << where << ": the refusal names no column family, key or file:\n"
        << log;
    if (tally) {
      ++tally->refused;
      auto line = log.substr(
          log.rfind("level=critical") == std::string::npos ? 0 : log.rfind("level=critical"));
      // Shorten: drop paths and numbers so that alike messages count together.
      line = std::regex_replace(line, std::regex(R"(/[^ :,]*)"), "<path>");
      line = std::regex_replace(line, std::regex(R"([0-9]+)"), "N");
      ++tally->messages[line.substr(0, 160)];
    }
    return std::nullopt;
  }
  api::http_client client((*d)->client_options());
  auto served = read_served(client);
  EXPECT_TRUE(served.ok()) << where << ": " << served.error().message();
  auto state = read_state(client);
  EXPECT_TRUE(state.ok()) << where << ": " << state.error().message();
  if (state.ok()) {
    observation_history h;
    auto violations = check_state(*state, h);
    EXPECT_TRUE(violations.empty()) << where << ":" << join(violations);
  }
  auto code = (*d)->stop();
  EXPECT_TRUE(code.ok() && *code == 0) << where << ": no clean stop: " << (*d)->log_tail();
  log = read_file(o.data_dir + ".phalanxd.log");
  if (!served.ok())
    return std::nullopt;
  return std::move(*served);
}

std::size_t quarantined_in(const std::string& log) {
  static const std::regex count(R"(([0-9]+) undecodable records were quarantined)");
  std::smatch m;
  std::size_t total = 0;
  for (auto it = log.cbegin(); std::regex_search(it, log.cend(), m, count); it = m[0].second)
    total += std::stoul(m[1].str());
  return total;
}

void copy_dir(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::remove_all(to, ec);
  fs::copy(from, to, fs::copy_options::recursive, ec);
  ASSERT_FALSE(ec) << "copy " << from << " -> " << to << ": " << ec.message();
}

void flip_many(uint64_t first_seed, int flips) {
  donor d;
  make_donor(d);
  if (::testing::Test::HasFatalFailure())
    return;

  // The reference, and a second undamaged start that must agree with it.
  std::string log;
  copy_dir(d.data, d.dir.sub("reference"));
  auto reference = start_and_read(d.dir.sub("reference"), false, "undamaged", log, nullptr);
  ASSERT_TRUE(reference.has_value()) << "the undamaged copy did not start:\n" << log;
  for (const auto& key : d.acknowledged)
    ASSERT_TRUE(reference->count(key)) << "acknowledged " << key << " is missing undamaged";
  copy_dir(d.data, d.dir.sub("control"));
  auto control = start_and_read(d.dir.sub("control"), false, "control", log, nullptr);
  ASSERT_TRUE(control.has_value());
  ASSERT_TRUE(*control == *reference) << "two undamaged starts serve different states: the "
                                         "donor is not at rest";

  std::vector<std::string> wal, sst;
  for (const auto& e : fs::directory_iterator(d.data)) {
    auto name = e.path().filename().string();
    if (e.is_regular_file() && e.file_size() > 0 && name.ends_with(".log"))
      wal.push_back(e.path().string());
    if (e.is_regular_file() && name.ends_with(".sst"))
      sst.push_back(e.path().string());
  }
  std::sort(wal.begin(), wal.end());
  std::sort(sst.begin(), sst.end());
  ASSERT_FALSE(wal.empty()) << "the donor left no WAL";
  ASSERT_FALSE(sst.empty()) << "the donor left no table file";

  outcome_tally tally;
  for (int i = 0; i < flips && !::testing::Test::HasFailure(); ++i) {
    auto seed = first_seed + static_cast<uint64_t>(i);
    std::mt19937_64 rng(seed * 104729 + 5);
    const auto& files = i % 2 == 0 ? wal : sst;
    auto file = files[rng() % files.size()];
    auto size = fs::file_size(file);
    auto offset = rng() % size;
    int bit = static_cast<int>(rng() % 8);
    bool quarantine = rng() % 2 == 0;
    auto damaged = d.dir.sub("damaged");
    copy_dir(d.data, damaged);
    auto target = damaged + "/" + fs::path(file).filename().string();
    {
      std::fstream f(target, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(offset));
      char c = 0;
      f.get(c);
      c = static_cast<char>(c ^ (1 << bit));
      f.seekp(static_cast<std::streamoff>(offset));
      f.put(c);
    }
    std::string where = "seed " + std::to_string(seed) + ": bit " + std::to_string(bit) +
                        " of byte " + std::to_string(offset) + " of " +
                        fs::path(file).filename().string() + " (" + std::to_string(size) +
                        " bytes)" + (quarantine ? ", --quarantine-corrupt" : "");
    auto served = start_and_read(damaged, quarantine, where, log, &tally);
    if (!served)
      continue;
    std::vector<std::string> wrong, missing;
    for (const auto& [key, content] : *served) {
      auto r = reference->find(key);
      if (r == reference->end())
        wrong.push_back(key + " is served but was never acknowledged: " + content);
      else if (r->second != content)
        wrong.push_back(key + " is served as " + content + "\n    acknowledged as " + r->second);
    }
    for (const auto& [key, content] : *reference)
      if (!served->count(key))
        missing.push_back(key);
    EXPECT_TRUE(wrong.empty()) << where << ": wrong state served:" << join(wrong, 5);
    auto reported = quarantined_in(log);
    EXPECT_LE(missing.size(), reported)
        << where << ": objects missing without being reported as quarantined (" << reported
        << " reported):" << join(missing, 10);
    if (missing.empty() && reported == 0)
      ++tally.started_same;
    else
      ++tally.started_quarantined;
  }
  std::printf("  %d flips (WAL %zu files, SST %zu files): %d refused to start, %d served the "
              "acknowledged state, %d quarantined\n",
              flips, wal.size(), sst.size(), tally.refused, tally.started_same,
              tally.started_quarantined);
  for (const auto& [message, n] : tally.messages)
    std::printf("    %4d x %s\n", n, message.c_str());
}

TEST(BitFlips, AFewFlipsInWalAndTableFiles) {
  flip_many(1, 8);
}

TEST(BitFlips, ManyFlipsLong) {
  if (!long_tests())
    GTEST_SKIP() << "set PHALANX_LONG_TESTS=1";
  flip_many(1001, 300);
}

} // namespace
} // namespace phalanx::crash_tests
