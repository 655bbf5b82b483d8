// storage_load_bench: builds a store shaped like DESIGN.md section 9's restart target (150,000 pods
// in 20,000 PodGroups, 5,000 nodes, plus queues and jobs; loadtest/store_builder.hpp) and times
// store::open + store::load. `phalanx-loadtest restart` times the whole daemon on the same store.
//
//   storage_load_bench [--dir PATH] [--pods N] [--groups N] [--nodes N] [--jobs N]
//                      [--spec-bytes N] [--threads N] [--repeat N] [--wal] [--keep] [--bare-pods]
//
// Pods carry Volcano's four labels and two annotations unless --bare-pods. Each measured round
// runs in a fresh process (as a restart does).
//
// --wal ends the writer as kill -9 would (power_loss_simulator::kill: nothing is lost, nothing
// more is written), so the timed open replays the WAL the store kept (at most about
// max_total_wal_size; older data is already in table files) and flushes it. Without it the writer
// closes cleanly (memtables flushed) and the timed open reads only table files. Times are wall
// clock; the page cache is warm (a restart on the same machine). CPU time is printed too, since a
// busy machine stretches wall time.

#include "api/flags/split.hpp"
#include "loadtest/store_builder.hpp"
#include "storage/store.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace ps = phalanx::storage;
using clock_type = std::chrono::steady_clock;

struct config {
  std::string dir;
  int pods = 150'000;
  int groups = 20'000;
  int nodes = 5'000;
  int queues = 20;
  int jobs = 2'000;
  int spec_bytes = 1024;
  unsigned threads = 2;
  int repeat = 5;
  bool wal = false;
  bool keep = false;
  bool measure = false;   // Internal: open + load once and print a RESULT line.
  bool bare_pods = false; // Pods without Volcano's labels and annotations.
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--dir PATH] [--pods N] [--groups N] [--nodes N] [--jobs N]\n"
      "          [--spec-bytes N] [--threads N] [--repeat N] [--wal] [--keep] [--bare-pods]\n",
      argv0);
  std::exit(2);
}

config parse_args(int argc, char** argv) {
  config c;
  int threads = static_cast<int>(c.threads);
  const std::map<std::string, bool*> switches = {
      {"wal", &c.wal}, {"keep", &c.keep}, {"measure", &c.measure}, {"bare-pods", &c.bare_pods}};
  const std::map<std::string, int*> counts = {
      {"pods", &c.pods},       {"groups", &c.groups},   {"nodes", &c.nodes},
      {"jobs", &c.jobs},       {"threads", &threads},   {"spec-bytes", &c.spec_bytes},
      {"repeat", &c.repeat}};
  std::vector<phalanx::api::flags::flag_spec> table = {{"dir"}};
  for (const auto& [name, target] : switches)
    table.push_back({name, 0, false});
  for (const auto& [name, target] : counts)
    table.push_back({name});

  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto split = phalanx::api::flags::split(args, table);
  if (split.error || !split.words.empty())
    usage(argv[0]);
  for (const auto& f : split.flags) {
    if (auto s = switches.find(f.name); s != switches.end()) {
      if (f.value)
        usage(argv[0]);
      *s->second = true;
    } else if (f.name == "dir") {
      c.dir = *f.value;
    } else {
      const std::string& text = *f.value;
      int n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (ec != std::errc{} || end != text.data() + text.size())
        usage(argv[0]);
      *counts.at(f.name) = n;
    }
  }
  c.threads = static_cast<unsigned>(threads);
  c.groups = std::max(1, c.groups);
  c.repeat = std::max(1, c.repeat);
  return c;
}

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::atol(line.c_str() + 6);
  return 0;
}

double cpu_ms() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
}

// Writes the world (loadtest/store_builder.hpp); with `kill`, ends as kill -9 would.
void build(const config& c, bool kill) {
  phalanx::loadtest::restart_store_spec spec;
  spec.pods = c.pods;
  spec.groups = c.groups;
  spec.nodes = c.nodes;
  spec.queues = c.queues;
  spec.jobs = c.jobs;
  spec.spec_bytes = c.spec_bytes;
  spec.bare_pods = c.bare_pods;
  spec.end_like_kill = kill;
  auto built = phalanx::loadtest::build_restart_store(spec, c.dir);
  if (!built) {
    std::fprintf(stderr, "build: %s\n", built.error().to_string().c_str());
    std::exit(1);
  }
}

std::uintmax_t dir_bytes(const std::string& dir, const char* ext) {
  std::uintmax_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext)
      total += e.file_size();
  return total;
}

struct measurement {
  double open_ms = 0, load_ms = 0, total_ms = 0, cpu_ms = 0;
  long rss_bytes_per_pod = 0;
  long heap_bytes_per_pod = 0;
};

// One restart: open + load in this process, which must not have touched the store before.
// Bytes the allocator has handed out and not taken back (small chunks and mmapped blocks).
std::size_t heap_in_use() {
  auto m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

int measure_once(const config& c) {
  std::size_t heap_before = heap_in_use();
  long rss_before = rss_kib();
  double cpu0 = cpu_ms();
  auto t0 = clock_type::now();
  ps::store_options o;
  o.path = c.dir;
  o.create_if_missing = false;
  o.load_threads = c.threads;
  auto opened = ps::store::open(o);
  if (!opened) {
    std::fprintf(stderr, "open: %s\n", opened.error().to_string().c_str());
    return 1;
  }
  double open_ms = ms_since(t0);
  auto t1 = clock_type::now();
  auto state = (*opened)->load();
  if (!state) {
    std::fprintf(stderr, "load: %s\n", state.error().to_string().c_str());
    return 1;
  }
  double load_ms = ms_since(t1);
  double total_ms = ms_since(t0);
  double cpu = cpu_ms() - cpu0;
  long rss_after = rss_kib();
  std::size_t heap_after = heap_in_use();
  std::set<const void*> constraints, specs;
  for (const auto& p : state->pods) {
    constraints.insert(p.constraints.get());
    specs.insert(p.spec_json.data()); // One block per distinct text.
  }
  long pods = std::max<long>(1, static_cast<long>(state->pods.size()));
  long heap_per_pod = static_cast<long>(heap_after - heap_before) / pods;
  std::printf("  open %.1f ms, load %.1f ms, open+load %.1f ms (CPU %.0f ms); %zu pods, %zu "
              "groups, %zu nodes, %zu queues, %zu jobs; %zu constraints and %zu spec_json "
              "instances; RSS +%ld MiB; heap in use +%zu MiB (%ld bytes per pod, every loaded "
              "object and the open store included)\n",
              open_ms, load_ms, total_ms, cpu, state->pods.size(), state->pod_groups.size(),
              state->nodes.size(), state->queues.size(), state->jobs.size(), constraints.size(),
              specs.size(), (rss_after - rss_before) / 1024, (heap_after - heap_before) >> 20,
              heap_per_pod);
  long per_pod = (rss_after - rss_before) * 1024 / pods;
  std::printf("RESULT %f %f %f %f %ld %ld\n", open_ms, load_ms, total_ms, cpu, per_pod,
              heap_per_pod);
  if (static_cast<int>(state->pods.size()) != c.pods) {
    std::fprintf(stderr, "expected %d pods, loaded %zu\n", c.pods, state->pods.size());
    return 1;
  }
  return 0;
}

// Runs measure_once in a fresh process, as a restart would: a process that loaded before reuses
// memory it already faulted in, which hides a large part of the cost.
bool measure_in_child(const char* self, const config& c, measurement& m) {
  std::string cmd = std::string("'") + self + "' --measure --dir '" + c.dir + "' --pods " +
                    std::to_string(c.pods) + " --threads " + std::to_string(c.threads);
  FILE* out = ::popen(cmd.c_str(), "r");
  if (out == nullptr)
    return false;
  char line[1024];
  bool found = false;
  while (std::fgets(line, sizeof line, out) != nullptr) {
    if (std::sscanf(line, "RESULT %lf %lf %lf %lf %ld %ld", &m.open_ms, &m.load_ms, &m.total_ms,
                    &m.cpu_ms, &m.rss_bytes_per_pod, &m.heap_bytes_per_pod) == 6)
      found = true;
    else
      std::fputs(line, stdout);
  }
  return ::pclose(out) == 0 && found;
}

} // namespace

int main(int argc, char** argv) {
  config c = parse_args(argc, argv);
  if (c.measure)
    return measure_once(c);
  bool temp = c.dir.empty();
  if (temp) {
    char pattern[] = "/tmp/phalanx-load-bench-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      std::perror("mkdtemp");
      return 1;
    }
    c.dir = pattern;
  }
  std::printf("store %s: %d pods in %d groups, %d nodes, %d queues, %d jobs, spec_json %d bytes, "
              "%u load threads, %s; each round is a fresh process\n",
              c.dir.c_str(), c.pods, c.groups, c.nodes, c.queues, c.jobs, c.spec_bytes, c.threads,
              c.wal ? "data in the WAL (crash restart)" : "data in table files (clean restart)");

  std::vector<measurement> rounds;
  for (int round = 0; round < c.repeat; ++round) {
    if (round == 0 || c.wal) {
      std::filesystem::remove_all(c.dir);
      std::filesystem::create_directories(c.dir);
      auto t = clock_type::now();
      build(c, c.wal);
      std::printf("build: %.0f ms; table files %.1f MiB, WAL %.1f MiB\n", ms_since(t),
                  dir_bytes(c.dir, ".sst") / 1048576.0, dir_bytes(c.dir, ".log") / 1048576.0);
    }
    measurement m;
    std::printf("round %d:\n", round);
    std::fflush(stdout);
    if (!measure_in_child(std::filesystem::read_symlink("/proc/self/exe").c_str(), c, m)) {
      std::fprintf(stderr, "round %d failed\n", round);
      return 1;
    }
    rounds.push_back(m);
  }
  auto median = [&](double measurement::*field) {
    std::vector<double> v;
    for (const auto& m : rounds)
      v.push_back(m.*field);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double best = rounds[0].total_ms;
  for (const auto& m : rounds)
    best = std::min(best, m.total_ms);
  std::printf("median of %d: open %.1f ms, load %.1f ms, open+load %.1f ms (min %.1f ms), CPU "
              "%.0f ms; per pod, all loaded objects included: %ld bytes of heap in use, %ld bytes "
              "of RSS growth\n",
              c.repeat, median(&measurement::open_ms), median(&measurement::load_ms),
              median(&measurement::total_ms), best, median(&measurement::cpu_ms),
              rounds[0].heap_bytes_per_pod, rounds[0].rss_bytes_per_pod);
  if (temp && !c.keep)
    std::filesystem::remove_all(c.dir);
  return 0;
}
