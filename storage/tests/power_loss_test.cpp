// Power loss at seeded crash points (DESIGN.md section 5, invariant I5): a writer applies a
// sequence of batches (gang submissions, multi-record gang bindings, completions, deletions) with
// restarts in between, the power goes at a random point (inside a chosen file operation, or from
// another thread at a random time), and after reopening:
// - every batch whose write() returned ok is fully present;
// - every batch is fully present or fully absent (the state is exactly the one after some prefix
//   of the batches, and that prefix is the acknowledged ones, plus the failed one if its data
//   reached the disk before the power went);
// - the store opens without a false "acknowledged writes were lost" alarm, and writes after the
//   restart survive the next restart.

#include "storage/store.hpp"

#include "storage/codec.hpp"
#include "storage/tests/test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

namespace phalanx::storage {
namespace {

namespace sch = phalanx::scheduler;
using testing::random_objects;
using testing::temp_dir;

// key -> value bytes per kind: the store's content, compared exactly.
using image = std::map<std::pair<record_kind, std::string>, std::string>;

// The image holds records as encode() writes them, so a state update is applied by decoding the
// record with the update appended and encoding the result.
void apply(image& img, const write_batch& b) {
  for (const auto& op : b.operations()) {
    switch (op.what) {
      case write_batch::action::erase:
        img.erase({op.kind, op.key});
        break;
      case write_batch::action::put:
        if (op.pod)
          img[{op.kind, key_of(*op.pod)}] = encode(*op.pod);
        else
          img[{op.kind, op.key}] = op.value;
        break;
      case write_batch::action::merge: {
        // A state update by pointer: its key and bytes are made as store::write makes them.
        auto& value = img.at({op.kind, op.pod ? key_of(*op.pod) : op.key});
        auto update = op.state ? encode_pod_state(*op.state) : op.value;
        auto merged = record_decoder().decode_pod(value + update);
        ASSERT_TRUE(merged.ok()) << merged.error().to_string();
        value = encode(*merged);
        break;
      }
    }
  }
}

image image_of(const loaded_state& s) {
  image img;
  for (const auto& x : s.nodes)
    img[{record_kind::node, key_of(x)}] = encode(x);
  for (const auto& x : s.queues)
    img[{record_kind::queue, key_of(x)}] = encode(x);
  for (const auto& x : s.pod_groups)
    img[{record_kind::pod_group, key_of(x)}] = encode(x);
  for (const auto& x : s.pods)
    img[{record_kind::pod, key_of(x)}] = encode(x);
  for (const auto& x : s.jobs)
    img[{record_kind::job, key_of(x)}] = encode(x);
  return img;
}

// One step of the writer: a batch, or a restart (close cleanly, open again).
struct step {
  std::optional<write_batch> batch;
};

// A workload like the runtime's: gangs are submitted (PodGroup + pending pods), bound in one batch
// (every pod with its node, as state updates: the two-phase commit's durable step), pods finish
// one at a time (a state update, or now and then the whole pod again), and finished gangs are
// deleted. Nodes, queues and jobs change now and then.
std::vector<step> make_workload(uint64_t seed, int batches) {
  random_objects gen(seed);
  struct gang {
    std::string name;
    sch::pod_group group;
    std::vector<sch::pod> pods;
    bool bound = false;
  };
  std::vector<gang> gangs;
  std::vector<step> steps;
  int serial = 0;
  for (int i = 0; i < batches; ++i) {
    write_batch b;
    int what = static_cast<int>(gen.between(0, 99));
    if (gangs.empty() || what < 35) {
      gang g;
      g.name = "gang-" + std::to_string(serial++);
      g.group = gen.pod_group().group;
      g.group.meta.namespace_name = "default";
      g.group.meta.name = g.name;
      auto constraints = std::make_shared<const sch::placement_constraints>(gen.constraints());
      sch::shared_string spec(gen.text(300));
      for (int64_t p = gen.between(1, 8); p > 0; --p) {
        auto pod = gen.pod(constraints, spec);
        pod.meta.namespace_name = "default";
        pod.meta.name = g.name + "-" + std::to_string(p);
        pod.group = g.name;
        pod.node_name.clear();
        pod.phase = sch::pod_phase::pending;
        g.pods.push_back(pod);
      }
      b.put(pod_group_record{g.group});
      for (const auto& p : g.pods)
        b.put(p);
      gangs.push_back(std::move(g));
    } else if (what < 65) {
      // Bind a gang: all its pods in one batch.
      auto& g = gangs[static_cast<std::size_t>(gen.between(0, int64_t(gangs.size()) - 1))];
      for (auto& p : g.pods) {
        p.node_name = "node-" + std::to_string(gen.between(0, 9));
        p.phase = sch::pod_phase::running;
        p.start_time = gen.time();
        // As the runtime binds: a state update merged into the record.
        b.put_pod_state(std::make_shared<const sch::pod>(p), scheduler::runtime_of(p));
      }
      g.bound = true;
    } else if (what < 80) {
      auto& g = gangs[static_cast<std::size_t>(gen.between(0, int64_t(gangs.size()) - 1))];
      auto& p = g.pods[static_cast<std::size_t>(gen.between(0, int64_t(g.pods.size()) - 1))];
      p.phase = sch::pod_phase::succeeded;
      p.finish_time = gen.time();
      // Mostly a state update, sometimes the whole record again (an update through the API).
      if (gen.between(0, 3) == 0)
        b.put(p);
      else
        b.put_pod_state(std::make_shared<const sch::pod>(p), scheduler::runtime_of(p));
    } else if (what < 88) {
      auto idx = static_cast<std::size_t>(gen.between(0, int64_t(gangs.size()) - 1));
      auto& g = gangs[idx];
      b.erase(record_kind::pod_group, object_key("default", g.name));
      for (const auto& p : g.pods)
        b.erase(record_kind::pod, key_of(p));
      gangs.erase(gangs.begin() + static_cast<std::ptrdiff_t>(idx));
    } else if (what < 94) {
      auto n = gen.node();
      n.meta.name = "node-" + std::to_string(gen.between(0, 9));
      b.put(n);
    } else if (what < 97) {
      auto q = gen.queue();
      q.queue.meta.name = "queue-" + std::to_string(gen.between(0, 3));
      b.put(q);
    } else {
      auto j = gen.job();
      j.job.meta.namespace_name = "default";
      j.job.meta.name = "job-" + std::to_string(gen.between(0, 5));
      b.put(j);
    }
    steps.push_back({std::move(b)});
    if (gen.chance(8))
      steps.push_back({}); // Restart.
  }
  return steps;
}

store_options options_with(const std::string& path, std::shared_ptr<power_loss_simulator> sim) {
  store_options o;
  o.path = path;
  o.fault_injection = std::move(sim);
  return o;
}

struct run_result {
  std::vector<image> prefixes;  // prefixes[k]: the image after the first k batches.
  std::size_t acknowledged = 0; // Batches whose write returned ok.
  bool all_done = false;        // The writer reached the end without a failure.
};

// Runs the workload until a step fails (the crash) or the end.
run_result run_workload(const std::string& path, const std::vector<step>& steps,
                        const std::shared_ptr<power_loss_simulator>& sim) {
  run_result r;
  r.prefixes.emplace_back();
  auto opened = store::open(options_with(path, sim));
  if (!opened)
    return r;
  auto st = std::move(*opened);
  for (const auto& s : steps) {
    if (!s.batch) {
      st.reset();
      auto again = store::open(options_with(path, sim));
      if (!again)
        return r;
      st = std::move(*again);
      continue;
    }
    image next = r.prefixes.back();
    apply(next, *s.batch);
    r.prefixes.push_back(std::move(next));
    if (!st->write(*s.batch).ok())
      return r;
    ++r.acknowledged;
  }
  r.all_done = true;
  return r;
}

// What the crash points hit, to show the test is not vacuous.
struct tally {
  std::atomic<int> before_end{0};    // The power went before the writer finished.
  std::atomic<int> failed_landed{0}; // A write failed but its data survived (allowed).
  std::atomic<int> failed_lost{0};   // A write failed and its data is gone.
};

// One seeded crash point. Returns "" on success, else what went wrong.
std::string crash_once(uint64_t seed, uint64_t operations_estimate, int batches, tally& t) {
  temp_dir dir;
  auto steps = make_workload(seed, batches);
  auto sim = power_loss_simulator::create();
  std::mt19937_64 rng(seed * 7919 + 1);

  // Two ways to crash: inside the n-th file operation (deterministic, hits every step of a write:
  // WAL append, WAL sync, commit mark, flush, MANIFEST, restart), or from another thread at a
  // random moment.
  bool by_timer = rng() % 10 < 3;
  std::atomic<bool> done{false};
  std::thread timer;
  if (by_timer) {
    auto delay = std::chrono::microseconds(rng() % 30000);
    timer = std::thread([&, delay] {
      auto until = std::chrono::steady_clock::now() + delay;
      while (!done.load() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      sim->crash();
    });
  } else {
    uint64_t at = 1 + rng() % (operations_estimate + operations_estimate / 5);
    sim->crash_after_operations(at, rng() % 2 == 0);
  }
  auto run = run_workload(dir.path(), steps, sim);
  done = true;
  if (timer.joinable())
    timer.join();
  sim->crash(); // Whatever did not happen yet: the power goes now (after the last ack).
  sim->reset();

  std::string where = "seed " + std::to_string(seed) + (by_timer ? " (timer)" : " (operation)") +
                      ", " + std::to_string(run.acknowledged) + " batches acknowledged: ";
  auto opened = store::open(options_with(dir.path(), sim));
  if (!opened)
    return where + "reopen failed: " + opened.error().to_string();
  auto& st = **opened;
  if (st.recovery().lost_writes ||
      st.recovery().acknowledged_commit > st.recovery().recovered_commit)
    return where + "recovery lost acknowledged writes";
  auto state = st.load();
  if (!state)
    return where + "load failed: " + state.error().to_string();
  if (!state->quarantined.empty())
    return where + "records quarantined";
  auto img = image_of(*state);
  std::size_t acked = run.acknowledged;
  bool equals_acked = img == run.prefixes[acked];
  bool equals_next = acked + 1 < run.prefixes.size() && img == run.prefixes[acked + 1];
  if (!run.all_done)
    ++t.before_end;
  if (acked + 1 < run.prefixes.size() && run.prefixes[acked] != run.prefixes[acked + 1])
    ++(equals_next ? t.failed_landed : t.failed_lost);
  if (!equals_acked && !equals_next) {
    for (std::size_t k = 0; k < run.prefixes.size(); ++k)
      if (img == run.prefixes[k])
        return where + "state is the prefix of " + std::to_string(k) + " batches";
    return where + "state is not any prefix of the batches (a torn batch)";
  }

  // Life goes on: a write after recovery survives the next restart.
  write_batch after;
  sch::node n;
  n.meta.name = "after-recovery";
  after.put(n);
  if (auto s = st.write(after); !s.ok())
    return where + "write after recovery failed: " + s.to_string();
  img[{record_kind::node, "after-recovery"}] = encode(n);
  opened->reset();
  auto again = store::open(options_with(dir.path(), sim));
  if (!again)
    return where + "second reopen failed: " + again.error().to_string();
  auto state2 = (*again)->load();
  if (!state2 || image_of(*state2) != img)
    return where + "the write after recovery did not survive a restart";
  return "";
}

// File operations of a whole run without a crash, to spread crash points over it.
uint64_t measure_operations(int batches) {
  temp_dir dir;
  auto sim = power_loss_simulator::create();
  auto steps = make_workload(99, batches);
  uint64_t before = sim->operations();
  auto run = run_workload(dir.path(), steps, sim);
  EXPECT_TRUE(run.all_done);
  return sim->operations() - before;
}

// Seeds run on three threads: each has its own directory and simulator, and much of a seed's time
// is spent waiting (RocksDB sleeps a second after a failed background flush).
void crash_many(uint64_t first_seed, int seeds, int batches) {
  uint64_t ops = measure_operations(batches);
  ASSERT_GT(ops, 50u);
  std::atomic<int> next{0};
  std::mutex mutex;
  std::vector<std::string> errors;
  tally t;
  auto work = [&] {
    for (int i = next++; i < seeds; i = next++) {
      auto error = crash_once(first_seed + static_cast<uint64_t>(i), ops, batches, t);
      if (error.empty())
        continue;
      std::lock_guard lock(mutex);
      errors.push_back(std::move(error));
      if (errors.size() > 5)
        next = seeds; // Enough to debug with.
    }
  };
  std::thread second(work), third(work);
  work();
  second.join();
  third.join();
  for (const auto& e : errors)
    ADD_FAILURE() << e;
  std::printf("  %d crash points: %d before the writer finished; a failed write survived in %d "
              "and vanished in %d\n",
              seeds, t.before_end.load(), t.failed_landed.load(), t.failed_lost.load());
  EXPECT_GT(t.before_end.load(), seeds / 2);
  EXPECT_GT(t.failed_landed.load(), 0);
  EXPECT_GT(t.failed_lost.load(), 0);
}

TEST(PowerLoss, TwoHundredSeededCrashPoints) {
  crash_many(1, 200, 24);
}

// The long variants (ctest label `slow`) run with PHALANX_LONG_TESTS=1.
TEST(PowerLoss, CrashPointsLong) {
  if (!testing::long_tests())
    GTEST_SKIP() << "set PHALANX_LONG_TESTS=1";
  crash_many(10'000, 2000, 24);
}

TEST(PowerLoss, LongerHistoriesLong) {
  if (!testing::long_tests())
    GTEST_SKIP() << "set PHALANX_LONG_TESTS=1";
  crash_many(100'000, 300, 150);
}

// A crash while the store is being created leaves something that opens (as a new store) or that
// is the new, empty store.
TEST(PowerLoss, CrashWhileCreating) {
  uint64_t ops = 0;
  {
    temp_dir dir;
    auto sim = power_loss_simulator::create();
    auto s = store::open(options_with(dir.path(), sim));
    ASSERT_TRUE(s.ok());
    ops = sim->operations();
  }
  for (uint64_t at = 1; at <= ops; ++at) {
    temp_dir dir;
    auto sim = power_loss_simulator::create();
    sim->crash_after_operations(at, at % 2 == 0);
    { auto s = store::open(options_with(dir.path(), sim)); }
    sim->crash();
    sim->reset();
    auto s = store::open(options_with(dir.path(), sim));
    ASSERT_TRUE(s.ok()) << "crash at operation " << at << ": " << s.error().to_string();
    auto state = (*s)->load();
    ASSERT_TRUE(state.ok()) << state.error().to_string();
    EXPECT_TRUE(state->pods.empty() && state->nodes.empty());
  }
}

} // namespace
} // namespace phalanx::storage
