// The store: open, write, reopen, load; format versions; atomic multi-batch writes; erase;
// undecodable records refused by key or quarantined; the commit mark.

#include "storage/store.hpp"

#include "records.pb.h"
#include "scheduler/tests/builders.hpp"
#include "storage/codec.hpp"
#include "storage/tests/raw_db.hpp"
#include "storage/tests/test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

namespace phalanx::storage {
namespace {

using testing::diff;
using testing::random_objects;
using testing::raw_db;
using testing::temp_dir;
namespace sch = phalanx::scheduler;
namespace st = phalanx::scheduler::testing;

store_options options_for(const std::string& path) {
  store_options o;
  o.path = path;
  return o;
}

std::unique_ptr<store> open_ok(const store_options& o) {
  auto s = store::open(o);
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

std::unique_ptr<store> open_ok(const std::string& path) {
  store_options o;
  o.path = path;
  return open_ok(o);
}

loaded_state load_ok(store& s) {
  auto r = s.load();
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return r.ok() ? std::move(*r) : loaded_state{};
}

// A state with objects of every kind, in key order (as load returns them).
loaded_state sample_state(uint64_t seed, int pods = 40) {
  random_objects gen(seed);
  loaded_state s;
  for (int i = 0; i < 5; ++i) {
    auto n = gen.node();
    n.meta.name = "node-" + std::to_string(i);
    s.nodes.push_back(n);
  }
  for (int i = 0; i < 3; ++i) {
    auto q = gen.queue();
    q.queue.meta.name = "queue-" + std::to_string(i);
    s.queues.push_back(q);
  }
  for (int i = 0; i < 4; ++i) {
    auto g = gen.pod_group();
    g.group.meta.namespace_name = "default";
    g.group.meta.name = "pg-" + std::to_string(i);
    s.pod_groups.push_back(g);
  }
  auto c = std::make_shared<const sch::placement_constraints>(gen.constraints());
  sch::shared_string spec("{\"containers\":[{\"image\":\"train:1\"}]}");
  for (int i = 0; i < pods; ++i) {
    auto p = gen.pod(i % 3 == 0 ? nullptr : c, i % 3 == 0 ? sch::shared_string() : spec);
    p.meta.namespace_name = "default";
    p.meta.name = "pod-" + std::to_string(1000 + i);
    s.pods.push_back(p);
  }
  for (int i = 0; i < 2; ++i) {
    auto j = gen.job();
    j.job.meta.namespace_name = "ml";
    j.job.meta.name = "job-" + std::to_string(i);
    s.jobs.push_back(j);
  }
  for (int i = 0; i < 2; ++i) {
    auto c = gen.priority_class();
    c.meta.name = "class-" + std::to_string(i);
    s.priority_classes.push_back(c);
  }
  return s;
}

write_batch batch_of(const loaded_state& s) {
  write_batch b;
  for (const auto& x : s.nodes)
    b.put(x);
  for (const auto& x : s.queues)
    b.put(x);
  for (const auto& x : s.pod_groups)
    b.put(x);
  for (const auto& x : s.pods)
    b.put(x);
  for (const auto& x : s.jobs)
    b.put(x);
  for (const auto& x : s.priority_classes)
    b.put(x);
  return b;
}

uint64_t max_version(const loaded_state& s) {
  uint64_t v = 0;
  for (const auto& x : s.nodes)
    v = std::max(v, x.meta.resource_version);
  for (const auto& x : s.queues)
    v = std::max(v, x.queue.meta.resource_version);
  for (const auto& x : s.pod_groups)
    v = std::max(v, x.group.meta.resource_version);
  for (const auto& x : s.pods)
    v = std::max(v, x.meta.resource_version);
  for (const auto& x : s.jobs)
    v = std::max(v, x.job.meta.resource_version);
  for (const auto& x : s.priority_classes)
    v = std::max(v, x.meta.resource_version);
  return v;
}

TEST(Store, CreatesLoadsEmptyAndReopens) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->recovery().created);
    EXPECT_EQ(s->recovery().recovered_commit, 0u);
    auto state = load_ok(*s);
    EXPECT_EQ(diff(state, loaded_state{}), "");
    EXPECT_EQ(state.max_resource_version, 0u);
  }
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->recovery().created);
}

TEST(Store, WriteReopenLoadEveryKind) {
  temp_dir dir;
  auto expected = sample_state(1);
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->write(batch_of(expected)).ok());
    // Readable before a restart too.
    auto state = load_ok(*s);
    EXPECT_EQ(diff(state, expected), "");
  }
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  auto state = load_ok(*s);
  EXPECT_EQ(diff(state, expected), "");
  EXPECT_EQ(state.max_resource_version, max_version(expected));
  EXPECT_TRUE(state.quarantined.empty());
  EXPECT_EQ(s->recovery().recovered_commit, 1u);
  EXPECT_EQ(s->recovery().acknowledged_commit, 1u);
  EXPECT_FALSE(s->recovery().lost_writes);
}

TEST(Store, LoadedPodsShareTemplates) {
  temp_dir dir;
  auto expected = sample_state(2, 300);
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s->write(batch_of(expected)).ok());
  }
  auto s = open_ok(dir.path());
  auto state = load_ok(*s);
  ASSERT_EQ(state.pods.size(), 300u);
  std::set<const void*> constraints, specs;
  for (const auto& p : state.pods) {
    if (p.spec_json && p.spec_json == expected.pods[1].spec_json) {
      constraints.insert(p.constraints.get());
      specs.insert(p.spec_json.data());
    }
  }
  // One instance per decoding thread at most.
  EXPECT_LE(constraints.size(), 2u);
  EXPECT_LE(specs.size(), 2u);
}

TEST(Store, ParallelAndSerialLoadAgree) {
  temp_dir dir;
  auto expected = sample_state(3, 5000);
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s->write(batch_of(expected)).ok());
  }
  for (unsigned threads : {1u, 2u, 5u}) {
    store_options o;
    o.path = dir.path();
    o.load_threads = threads;
    auto s = open_ok(o);
    auto state = load_ok(*s);
    EXPECT_EQ(diff(state, expected), "") << threads << " threads";
  }
}

// Loading sizes its vectors from RocksDB's key estimates, which count versions that compaction has
// not merged yet (too many) and subtract deletions of keys in older files (too few). Both must
// still give exactly the records, in key order.
TEST(Store, LoadIsExactWhateverTheKeyEstimates) {
  temp_dir dir;
  random_objects gen(6);
  std::map<std::string, sch::pod> live;
  auto round = [&](int from, int to, bool erase_odd) {
    auto s = open_ok(dir.path());
    write_batch b;
    for (int i = from; i < to; ++i) {
      auto p = gen.pod();
      p.meta.namespace_name = "ns";
      p.meta.name = "p" + std::to_string(10000 + i);
      if (erase_odd && i % 2 == 1) {
        b.erase(record_kind::pod, key_of(p));
        live.erase(key_of(p));
      } else {
        b.put(p);
        live[key_of(p)] = p;
      }
    }
    ASSERT_TRUE(s->write(b).ok());
  }; // Each round closes the store: its writes become one more table file.
  round(0, 3000, false);
  round(0, 3000, false);   // Overwrites: the estimate counts both versions.
  round(1000, 3000, true); // Deletions: the estimate subtracts them twice.
  loaded_state expected;
  for (auto& [key, p] : live)
    expected.pods.push_back(p);
  for (unsigned threads : {1u, 2u}) {
    store_options o = options_for(dir.path());
    o.load_threads = threads;
    auto s = open_ok(o);
    auto state = load_ok(*s);
    EXPECT_EQ(diff(state, expected), "") << threads << " threads";
    EXPECT_LE(state.pods.capacity(), state.pods.size() + state.pods.size() / 8 + 1024);
    // Deleting keys that never existed lowers the estimate below the truth (here to zero: every
    // chunk takes the overflow path).
    write_batch b;
    for (int i = 0; i < 6000; ++i)
      b.erase(record_kind::pod, "ns/never-" + std::to_string(threads) + "-" + std::to_string(i));
    ASSERT_TRUE(s->write(b).ok());
    state = load_ok(*s);
    EXPECT_EQ(diff(state, expected), "") << threads << " threads, low estimate";
  }
}

TEST(Store, MissingDirectoryWithoutCreate) {
  temp_dir dir;
  store_options o;
  o.path = dir.sub("absent");
  o.create_if_missing = false;
  auto s = store::open(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), errc::not_found);
  EXPECT_NE(s.error().message().find("create_if_missing is false"), std::string::npos);
}

TEST(Store, SecondOpenOfOnePathFails) {
  temp_dir dir;
  auto first = open_ok(dir.path());
  ASSERT_TRUE(first);
  auto second = store::open(options_for(dir.path()));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code(), errc::io_error) << second.error().to_string();
}

// ---------------------------------------------------------------------------------------------
// Format version

void set_format_version(const std::string& path, std::string_view value) {
  raw_db db(path);
  ASSERT_TRUE(db.status().ok()) << db.status().ToString();
  ASSERT_TRUE(db.put("meta", "format_version", value).ok());
}

TEST(StoreFormat, NewerVersionIsRefused) {
  temp_dir dir;
  { ASSERT_TRUE(open_ok(dir.path())); }
  set_format_version(dir.path(), "6");
  auto s = store::open(options_for(dir.path()));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), errc::failed_precondition);
  EXPECT_NE(s.error().message().find("store format version 6 is newer than this build reads (5)"),
            std::string::npos)
      << s.error().message();
}

TEST(StoreFormat, VersionsOneTwoAndFourAreUpgradedInPlace) {
  for (uint32_t old_version : {1u, 2u, 4u}) {
    temp_dir dir;
    random_objects gen(11);
    auto pod = gen.pod();
    {
      auto s = open_ok(dir.path());
      ASSERT_TRUE(s);
      EXPECT_EQ(s->recovery().upgraded_from, 0u);
      write_batch b;
      b.put(pod);
      ASSERT_TRUE(s->write(b).ok());
    }
    set_format_version(dir.path(), std::to_string(old_version));
    {
      auto s = open_ok(dir.path());
      ASSERT_TRUE(s);
      EXPECT_EQ(s->recovery().upgraded_from, old_version);
      auto state = s->load();
      ASSERT_TRUE(state.ok()) << state.error().to_string();
      ASSERT_EQ(state->pods.size(), 1u);
      EXPECT_EQ(diff(state->pods[0], pod), "");
    }
    auto again = open_ok(dir.path());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->recovery().upgraded_from, 0u) << "the version was rewritten";
  }
}

// A format 3 store has no priorityclasses family: open creates it, and the store takes classes.
TEST(StoreFormat, VersionThreeGainsThePriorityClassFamily) {
  temp_dir dir;
  random_objects gen(12);
  auto pod = gen.pod();
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s);
    write_batch b;
    b.put(pod);
    ASSERT_TRUE(s->write(b).ok());
  }
  {
    raw_db db(dir.path());
    ASSERT_TRUE(db.status().ok()) << db.status().ToString();
    ASSERT_TRUE(db.drop_family("priorityclasses").ok());
    ASSERT_TRUE(db.put("meta", "format_version", "3").ok());
  }
  {
    raw_db db(dir.path());
    ASSERT_FALSE(db.has_family("priorityclasses")) << "the store looks as format 3 left it";
  }
  auto c = gen.priority_class();
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s);
    EXPECT_EQ(s->recovery().upgraded_from, 3u);
    auto state = load_ok(*s);
    ASSERT_EQ(state.pods.size(), 1u);
    EXPECT_EQ(diff(state.pods[0], pod), "");
    EXPECT_TRUE(state.priority_classes.empty());
    write_batch b;
    b.put(c);
    ASSERT_TRUE(s->write(b).ok());
  }
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->recovery().upgraded_from, 0u);
  auto state = load_ok(*s);
  ASSERT_EQ(state.priority_classes.size(), 1u);
  EXPECT_EQ(diff(state.priority_classes[0], c), "");
}

TEST(StoreFormat, UnknownVersionIsRefused) {
  for (std::string_view bad : {"", "0", "one", "1x", "-1", "99999999999999999999"}) {
    temp_dir dir;
    { ASSERT_TRUE(open_ok(dir.path())); }
    set_format_version(dir.path(), bad);
    auto s = store::open(options_for(dir.path()));
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.error().code(), errc::failed_precondition);
    EXPECT_NE(s.error().message().find("unknown store format version"), std::string::npos)
        << s.error().message();
  }
}

TEST(StoreFormat, DataWithoutVersionIsNotAPhalanxStore) {
  temp_dir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), &db).ok());
    rocksdb::WriteOptions wo;
    ASSERT_TRUE(db->Put(wo, "something", "else").ok());
    delete db;
  }
  auto s = store::open(options_for(dir.path()));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), errc::failed_precondition);
  EXPECT_NE(s.error().message().find("not a Phalanx store"), std::string::npos)
      << s.error().message();
}

TEST(StoreFormat, EmptyDatabaseWithoutVersionIsAdopted) {
  // A creation cut short after RocksDB made the families but before the version was written.
  temp_dir dir;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), &db).ok());
    delete db;
  }
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->recovery().created);
}

// ---------------------------------------------------------------------------------------------
// Writes

TEST(StoreWrite, ManyBatchesAreOneAtomicWrite) {
  temp_dir dir;
  auto s = open_ok(dir.path());
  st::gang g = st::make_gang("tf-1", 3)
                   .task("ps", 1, st::res("cpu", "1"))
                   .task("worker", 2, st::res("cpu", "2"));
  write_batch group, ps, workers;
  group.put(pod_group_record{g.group});
  ps.put(g.pods[0]);
  workers.put(g.pods[1]);
  workers.put(g.pods[2]);
  const write_batch* all[] = {&group, &ps, &workers};
  ASSERT_TRUE(s->write(all).ok());
  auto stats = s->stats();
  EXPECT_EQ(stats.writes, 1u);
  EXPECT_EQ(stats.records_written, 4u);
  EXPECT_EQ(stats.bytes_written, group.byte_size() + ps.byte_size() + workers.byte_size());
  EXPECT_EQ(stats.commit, 1u);
  auto state = load_ok(*s);
  EXPECT_EQ(state.pod_groups.size(), 1u);
  EXPECT_EQ(state.pods.size(), 3u);
}

TEST(StoreWrite, AnEmptyKeyRejectsTheWholeWrite) {
  temp_dir dir;
  auto s = open_ok(dir.path());
  write_batch good, bad;
  good.put(st::make_node("n1").cpu("1").obj());
  bad.put(st::make_node("").cpu("1").obj());
  const write_batch* all[] = {&good, &bad};
  auto r = s->write(all);
  EXPECT_EQ(r.code(), errc::invalid_argument);
  EXPECT_TRUE(load_ok(*s).nodes.empty());
  EXPECT_EQ(s->stats().writes, 0u);
}

// A pod put by pointer is encoded by write(), not by put(): the stored record and key are exactly
// those of put(*pod), the statistics count the real bytes, and one without a name fails the whole
// write as an empty key does.
TEST(StoreWrite, PodsPutByPointerAreEncodedAtWriteTime) {
  temp_dir dir;
  auto s = open_ok(dir.path());
  auto state = sample_state(21, 6);
  write_batch by_value, by_pointer;
  for (std::size_t i = 0; i < state.pods.size(); ++i) {
    if (i % 2 == 0)
      by_value.put(state.pods[i]);
    else
      by_pointer.put(std::make_shared<const sch::pod>(state.pods[i]));
  }
  EXPECT_EQ(by_pointer.size(), 3u);
  EXPECT_TRUE(by_pointer.operations()[0].key.empty());
  const write_batch* both[] = {&by_value, &by_pointer};
  ASSERT_TRUE(s->write(both).ok());
  std::size_t expected_bytes = 0;
  for (const auto& p : state.pods)
    expected_bytes += key_of(p).size() + encode(p).size();
  EXPECT_EQ(s->stats().bytes_written, expected_bytes);
  auto loaded = load_ok(*s);
  ASSERT_EQ(loaded.pods.size(), state.pods.size());
  for (std::size_t i = 0; i < state.pods.size(); ++i)
    EXPECT_EQ(diff(loaded.pods[i], state.pods[i]), "") << i;

  write_batch good, nameless;
  good.put(std::make_shared<const sch::pod>(st::make_pod("fine").cpu("1").obj()));
  auto no_name = st::make_pod("").ns("").cpu("1").obj();
  nameless.put(std::make_shared<const sch::pod>(no_name));
  const write_batch* bad[] = {&good, &nameless};
  auto r = s->write(bad);
  EXPECT_EQ(r.code(), errc::invalid_argument);
  EXPECT_NE(r.message().find("empty key in column family pods"), std::string::npos) << r.message();
  EXPECT_EQ(s->stats().commit, 1u);
  EXPECT_EQ(load_ok(*s).pods.size(), state.pods.size());
}

TEST(StoreWrite, EmptyWriteDoesNothing) {
  temp_dir dir;
  auto s = open_ok(dir.path());
  write_batch empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_TRUE(s->write(empty).ok());
  EXPECT_TRUE(s->write(std::span<const write_batch* const>{}).ok());
  EXPECT_EQ(s->stats().writes, 0u);
  EXPECT_EQ(s->stats().commit, 0u);
}

TEST(StoreWrite, OverwriteAndErase) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    write_batch b;
    b.put(st::make_pod("a").cpu("1").obj());
    b.put(st::make_pod("b").cpu("1").obj());
    b.put(st::make_node("n1").cpu("8").obj());
    ASSERT_TRUE(s->write(b).ok());
    write_batch bind; // The binding: pod a goes to n1.
    bind.put(st::make_pod("a").cpu("1").bound_to("n1").obj());
    bind.erase(record_kind::pod, "default/b");
    bind.erase(record_kind::pod, "default/never-existed");
    ASSERT_TRUE(s->write(bind).ok());
    EXPECT_EQ(s->stats().commit, 2u);
  }
  auto s = open_ok(dir.path());
  auto state = load_ok(*s);
  ASSERT_EQ(state.pods.size(), 1u);
  EXPECT_EQ(state.pods[0].meta.name, "a");
  EXPECT_EQ(state.pods[0].node_name, "n1");
  EXPECT_EQ(state.nodes.size(), 1u);
  EXPECT_EQ(s->recovery().recovered_commit, 2u);
}

// The runtime's path for a pod: created whole, then bound and run as state updates merged into
// its record. Loading must see the last state whether the updates are still in the memtable, were
// flushed with the record, or sit in a newer table file than it.
TEST(StoreWrite, PodStateUpdatesMergeIntoTheRecord) {
  temp_dir dir;
  auto pod = st::make_pod("a").cpu("1").obj();
  pod.meta.resource_version = 10;
  auto other = st::make_pod("b").cpu("2").obj();
  auto bound = pod;
  bound.node_name = "n1";
  bound.meta.resource_version = 11;
  auto running = bound;
  running.phase = sch::pod_phase::running;
  running.start_time = sch::timestamp(std::chrono::seconds(1'700'000'000));
  running.meta.resource_version = 12;
  {
    auto s = open_ok(dir.path());
    write_batch create;
    create.put(pod);
    create.put(other);
    ASSERT_TRUE(s->write(create).ok());
    write_batch bind;
    bind.put_pod_state(std::make_shared<const sch::pod>(bound), scheduler::runtime_of(bound));
    ASSERT_TRUE(s->write(bind).ok());
    auto state = load_ok(*s); // From the memtable.
    ASSERT_EQ(state.pods.size(), 2u);
    EXPECT_EQ(diff(state.pods[0], bound), "");
    EXPECT_EQ(state.max_resource_version, 11u);
  }
  {
    auto s = open_ok(dir.path()); // The close flushed record and update together.
    EXPECT_EQ(diff(load_ok(*s).pods[0], bound), "");
    write_batch run;
    run.put_pod_state(std::make_shared<const sch::pod>(running), scheduler::runtime_of(running));
    ASSERT_TRUE(s->write(run).ok());
  }
  {
    auto s = open_ok(dir.path()); // The update is in a newer table file than the record.
    auto state = load_ok(*s);
    ASSERT_EQ(state.pods.size(), 2u);
    EXPECT_EQ(diff(state.pods[0], running), "");
    EXPECT_EQ(diff(state.pods[1], other), "");
    // A whole record written again replaces the record and every update before it.
    auto relabelled = running;
    relabelled.meta.labels.set("x", "y");
    relabelled.meta.resource_version = 13;
    write_batch put;
    put.put(relabelled);
    ASSERT_TRUE(s->write(put).ok());
    auto finished = relabelled;
    finished.phase = sch::pod_phase::succeeded;
    finished.finish_time = running.start_time + std::chrono::seconds(30);
    finished.meta.resource_version = 14;
    write_batch finish;
    finish.put_pod_state(std::make_shared<const sch::pod>(finished),
                         scheduler::runtime_of(finished));
    finish.erase(record_kind::pod, "default/b");
    ASSERT_TRUE(s->write(finish).ok());
    auto after = load_ok(*s);
    ASSERT_EQ(after.pods.size(), 1u);
    EXPECT_EQ(diff(after.pods[0], finished), "");
  }
}

// The writer calls flush_write_buffers once writes pause, so that a burst's memtables do not
// stay in memory until later writes fill them: the flush runs in the background, frees the
// memtables, and every record (and the updates merged into it) reads back the same, from the
// table files before and after a restart, with writes going on meanwhile.
TEST(StoreWrite, FlushingTheWriteBuffersFreesThemAndKeepsEveryRecord) {
  temp_dir dir;
  auto expected = sample_state(3, 2000);
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s);
    const uint64_t empty = s->stats().write_buffer_bytes;
    ASSERT_TRUE(s->write(batch_of(expected)).ok());
    auto bound = expected.pods[7];
    bound.node_name = "node-1";
    bound.meta.resource_version = max_version(expected) + 1;
    write_batch bind;
    bind.put_pod_state(std::make_shared<const sch::pod>(bound), scheduler::runtime_of(bound));
    ASSERT_TRUE(s->write(bind).ok());
    expected.pods[7] = bound;
    const uint64_t written = s->stats().write_buffer_bytes;
    ASSERT_GT(written, empty + 500'000) << "2,000 pods make more than 500 kB of memtable";

    ASSERT_TRUE(s->flush_write_buffers().ok());
    EXPECT_EQ(s->stats().write_buffer_flushes, 1u);
    // The flush runs on RocksDB's own threads; it is done when the memtables are back to empty.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (s->stats().write_buffer_bytes > empty && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_LE(s->stats().write_buffer_bytes, empty);
    EXPECT_EQ(diff(load_ok(*s), expected), "");

    // Writing goes on after a flush, and a flush with nothing new to write is no error.
    auto relabelled = expected.pods[8];
    relabelled.meta.labels.set("stage", "after-flush");
    relabelled.meta.resource_version = bound.meta.resource_version + 1;
    write_batch put;
    put.put(relabelled);
    ASSERT_TRUE(s->write(put).ok());
    expected.pods[8] = relabelled;
    ASSERT_TRUE(s->flush_write_buffers().ok());
    ASSERT_TRUE(s->flush_write_buffers().ok());
    EXPECT_EQ(s->stats().write_buffer_flushes, 3u);
    EXPECT_EQ(diff(load_ok(*s), expected), "");
  }
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  EXPECT_EQ(diff(load_ok(*s), expected), "");
}

// Once the disk is gone (or a write failed) the store refuses to flush, as it refuses writes:
// a background flush that fails makes RocksDB sleep a second and stop the database.
TEST(StoreWrite, ABrokenStoreRefusesToFlush) {
  temp_dir dir;
  auto sim = power_loss_simulator::create();
  store_options o = options_for(dir.path());
  o.fault_injection = sim;
  {
    auto s = open_ok(o);
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->write(batch_of(sample_state(4))).ok());
    sim->crash();
    auto flushed = s->flush_write_buffers();
    EXPECT_EQ(flushed.code(), errc::io_error);
    EXPECT_NE(flushed.message().find("broken"), std::string::npos) << flushed.message();
    EXPECT_EQ(s->stats().write_buffer_flushes, 0u);
  }
  sim->reset();
}

// Keys with state updates and no record (a job's pods, stored as their job) are loaded as
// pod_states, in key order, beside the pods that have records; nothing is quarantined.
TEST(StorePodState, KeysWithoutARecordAreLoadedAsStates) {
  temp_dir dir;
  auto recorded = st::make_pod("bare").cpu("1").obj();
  recorded.meta.resource_version = 3;
  auto job_pod = st::make_pod("job-worker-0").cpu("1").obj();
  auto deleted_pod = st::make_pod("job-worker-1").cpu("1").obj();
  sch::pod_runtime running;
  running.phase = sch::pod_phase::running;
  running.node_name = "n-1";
  running.start_time = sch::timestamp(std::chrono::seconds(1'700'000'000));
  running.resource_version = 40;
  {
    auto s = open_ok(dir.path());
    write_batch b;
    b.put(recorded);
    auto bound = running;
    bound.phase = sch::pod_phase::pending;
    bound.start_time = {};
    bound.resource_version = 39;
    b.put_pod_state(std::make_shared<const sch::pod>(job_pod), bound);
    b.put_pod_state(std::make_shared<const sch::pod>(deleted_pod), bound);
    ASSERT_TRUE(s->write(b).ok());
    write_batch later;
    later.put_pod_state(std::make_shared<const sch::pod>(job_pod), running);
    later.put_pod_tombstone(deleted_pod, 41);
    ASSERT_TRUE(s->write(later).ok());
  }
  for (int pass = 0; pass < 2; ++pass) {  // From the memtable (flushed by the close), then SSTs.
    auto s = open_ok(dir.path());
    auto state = load_ok(*s);
    ASSERT_EQ(state.pods.size(), 1u);
    EXPECT_EQ(diff(state.pods[0], recorded), "");
    ASSERT_EQ(state.pod_states.size(), 2u);
    EXPECT_EQ(state.pod_states[0].key, "default/job-worker-0");
    EXPECT_EQ(state.pod_states[0].state, running);
    EXPECT_FALSE(state.pod_states[0].deleted);
    EXPECT_EQ(state.pod_states[1].key, "default/job-worker-1");
    EXPECT_TRUE(state.pod_states[1].deleted);
    EXPECT_TRUE(state.quarantined.empty());
    EXPECT_EQ(state.max_resource_version, 41u);
  }
}

// A job's delete erases the keys of all its pods, made in the writer's thread from the job.
TEST(StorePodState, EraseJobPodsErasesEveryKeyOfTheExpansionAndNothingElse) {
  temp_dir dir;
  sch::job j;
  j.meta.name = "tf";
  j.meta.namespace_name = "default";
  sch::job_task ps, worker;
  ps.name = "ps";
  ps.replicas = 1;
  worker.name = "worker";
  worker.replicas = 3;
  j.tasks = {ps, worker};
  sch::pod_runtime bound;
  bound.node_name = "n-1";
  bound.resource_version = 7;
  auto s = open_ok(dir.path());
  write_batch b;
  for (const char* name : {"tf-ps-0", "tf-worker-0", "tf-worker-2", "tf-worker-3", "tfx-worker-0"})
    b.put_pod_state(std::make_shared<const sch::pod>(st::make_pod(name).cpu("1").obj()), bound);
  ASSERT_TRUE(s->write(b).ok());
  write_batch erase;
  erase.erase_job_pods(std::make_shared<const sch::job>(j));
  EXPECT_EQ(erase.size(), 4u);
  ASSERT_TRUE(s->write(erase).ok());
  auto state = load_ok(*s);
  std::vector<std::string> left;
  for (const auto& p : state.pod_states)
    left.push_back(p.key);
  // tf-worker-3 is beyond the job's 3 workers, tfx-worker-0 another job's.
  EXPECT_EQ(left, (std::vector<std::string>{"default/tf-worker-3", "default/tfx-worker-0"}));
}

// The world's meta entries (Kubernetes mode's intents and watch versions) come back at load,
// atomically with the records written beside them, and erased ones stay erased.
TEST(StoreWorldMeta, EntriesComeBackAndErasesStick) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    write_batch b;
    b.put(st::make_pod("a").cpu("1").obj());
    b.put_world_meta("intent/default/a", "uid-1 n-1");
    b.put_world_meta("watch/pods", "12345");
    b.put_world_meta("intent/default/b", "uid-2 n-2");
    ASSERT_TRUE(s->write(b).ok());
    write_batch later;
    later.erase_world_meta("intent/default/b");
    later.put_world_meta("watch/pods", "12399");
    ASSERT_TRUE(s->write(later).ok());
    write_batch bad;
    bad.put_world_meta("", "x");
    EXPECT_EQ(s->write(bad).code(), errc::invalid_argument);
  }
  auto s = open_ok(dir.path());
  auto state = load_ok(*s);
  EXPECT_EQ(state.world_meta, (std::map<std::string, std::string>{
                                  {"intent/default/a", "uid-1 n-1"}, {"watch/pods", "12399"}}));
  EXPECT_EQ(state.pods.size(), 1u);
}

// A delete's resource version is kept by no record: the ceiling the runtime reserves versions
// through is, and only ever grows, whatever order the batches carrying it come in.
TEST(StoreVersionCeiling, TheLargestCeilingSurvivesARestart) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    EXPECT_EQ(load_ok(*s).version_ceiling, 0u);
    write_batch only_ceiling;
    only_ceiling.reserve_versions_through(1000);
    EXPECT_EQ(only_ceiling.size(), 1u);  // Written even with nothing else in the batch.
    ASSERT_TRUE(s->write(only_ceiling).ok());
    write_batch lower, higher;
    lower.reserve_versions_through(500);
    higher.put(st::make_pod("a").cpu("1").obj());
    higher.reserve_versions_through(3000);
    higher.reserve_versions_through(2000);  // A batch keeps its largest.
    const write_batch* both[] = {&higher, &lower};
    ASSERT_TRUE(s->write(std::span<const write_batch* const>(both)).ok());
    write_batch lower_alone;
    lower_alone.reserve_versions_through(2500);
    ASSERT_TRUE(s->write(lower_alone).ok());
    EXPECT_EQ(load_ok(*s).version_ceiling, 3000u);
  }
  auto s = open_ok(dir.path());
  EXPECT_EQ(load_ok(*s).version_ceiling, 3000u);
}

// ---------------------------------------------------------------------------------------------
// Undecodable records

void plant(const std::string& path, std::string_view cf, std::string_view key,
           std::string_view value) {
  raw_db db(path);
  ASSERT_TRUE(db.status().ok()) << db.status().ToString();
  ASSERT_TRUE(db.put(cf, key, value).ok());
}

// Opens with quarantine on and loads: damaged records are moved aside.
loaded_state load_quarantining(const std::string& path) {
  store_options o;
  o.path = path;
  o.quarantine_corrupt = true;
  auto s = open_ok(o);
  return load_ok(*s);
}

TEST(StoreCorruptRecord, LoadRefusesNamingTheKey) {
  temp_dir dir;
  auto expected = sample_state(4);
  { ASSERT_TRUE(open_ok(dir.path())->write(batch_of(expected)).ok()); }
  plant(dir.path(), "podgroups", "default/tf-1", "\x08\x01\x12\xff garbage");
  auto s = open_ok(dir.path());
  auto r = s->load();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::corruption);
  EXPECT_EQ(r.error().message().rfind("podgroups/default/tf-1: record does not decode: ", 0), 0u)
      << r.error().message();
  // Refusing changes nothing: the next load refuses again.
  auto again = s->load();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message(), r.error().message());
}

TEST(StoreCorruptRecord, KeyMustMatchTheRecord) {
  temp_dir dir;
  { ASSERT_TRUE(open_ok(dir.path())); }
  plant(dir.path(), "nodes", "node-b", encode(st::make_node("node-a").obj()));
  auto s = open_ok(dir.path());
  auto r = s->load();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(),
            "nodes/node-b: record does not decode: key does not match the record, which names "
            "\"node-a\"");
}

TEST(StoreCorruptRecord, NewerRecordVersionIsRefused) {
  temp_dir dir;
  { ASSERT_TRUE(open_ok(dir.path())); }
  v1::QueueRecord q;
  q.set_record_version(record_version + 1);
  std::string bytes;
  q.SerializeToString(&bytes);
  plant(dir.path(), "queues", "future", bytes);
  auto r = open_ok(dir.path())->load();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("queues/future: record does not decode: record_version 2"),
            std::string::npos)
      << r.error().message();
}

TEST(StoreCorruptRecord, QuarantineMovesItAsideAndGoesOn) {
  temp_dir dir;
  auto expected = sample_state(5);
  { ASSERT_TRUE(open_ok(dir.path())->write(batch_of(expected)).ok()); }
  plant(dir.path(), "podgroups", "default/tf-1", "\x08\x01\x12\xff garbage");
  plant(dir.path(), "pods", "default/pod-1005", "\x01\x02"); // Replaces a good pod.
  auto without_1005 = expected;
  without_1005.pods.erase(without_1005.pods.begin() + 5);
  {
    auto state = load_quarantining(dir.path());
    EXPECT_EQ(diff(state, without_1005), "");
    ASSERT_EQ(state.quarantined.size(), 2u);
    EXPECT_EQ(state.quarantined[0].kind, record_kind::pod_group);
    EXPECT_EQ(state.quarantined[0].key, "default/tf-1");
    EXPECT_NE(state.quarantined[0].error.find("not a valid PodGroupRecord"), std::string::npos);
    EXPECT_EQ(state.quarantined[1].kind, record_kind::pod);
    EXPECT_EQ(state.quarantined[1].key, "default/pod-1005");
  }
  // Gone from their families, kept in the quarantine family with the error.
  {
    raw_db db(dir.path());
    ASSERT_TRUE(db.status().ok());
    EXPECT_FALSE(db.get("podgroups", "default/tf-1"));
    auto q = db.get("quarantine", "podgroups/default/tf-1");
    ASSERT_TRUE(q);
    v1::QuarantineRecord rec;
    ASSERT_TRUE(rec.ParseFromString(*q));
    EXPECT_EQ(rec.value(), "\x08\x01\x12\xff garbage");
    EXPECT_EQ(rec.column_family(), "podgroups");
    EXPECT_FALSE(rec.error().empty());
    EXPECT_TRUE(db.get("quarantine", "pods/default/pod-1005"));
  }
  // A normal start works again.
  auto s = open_ok(dir.path());
  auto state = load_ok(*s);
  EXPECT_EQ(diff(state, without_1005), "");
  EXPECT_TRUE(state.quarantined.empty());
}

// A key that holds state updates but no record (a job's pod) is damaged like any record: load
// names it, and quarantine moves it aside while the other keys load.
TEST(StoreCorruptRecord, ADamagedStateOnlyKeyIsQuarantined) {
  temp_dir dir;
  auto expected = sample_state(6);
  { ASSERT_TRUE(open_ok(dir.path())->write(batch_of(expected)).ok()); }
  sch::pod_runtime bound;
  bound.node_name = "n-1";
  bound.resource_version = 9;
  auto update = encode_pod_state(bound);
  plant(dir.path(), "pods", "default/job-worker-0", update.substr(0, update.size() - 3));
  {
    auto r = open_ok(dir.path())->load();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message().rfind("pods/default/job-worker-0: record does not decode: ", 0),
              0u)
        << r.error().message();
  }
  auto state = load_quarantining(dir.path());
  EXPECT_EQ(diff(state, expected), "");
  EXPECT_TRUE(state.pod_states.empty());
  ASSERT_EQ(state.quarantined.size(), 1u);
  EXPECT_EQ(state.quarantined[0].key, "default/job-worker-0");
}

// ---------------------------------------------------------------------------------------------
// Commit mark

void write_mark(const std::string& path, uint64_t commit) {
  // Appends an entry in the mark's format: "PXC1", commit (LE), check.
  auto check_of = [](uint64_t v) {
    uint64_t z = v + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<uint32_t>(z ^ (z >> 32));
  };
  std::string e = "PXC1";
  for (int i = 0; i < 8; ++i)
    e.push_back(static_cast<char>((commit >> (8 * i)) & 0xff));
  uint32_t c = check_of(commit);
  for (int i = 0; i < 4; ++i)
    e.push_back(static_cast<char>((c >> (8 * i)) & 0xff));
  std::ofstream(path + "/PHALANX-COMMIT-MARK", std::ios::binary | std::ios::app) << e;
}

TEST(StoreCommitMark, TracksAcknowledgedCommits) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    for (int i = 0; i < 10; ++i) {
      write_batch b;
      b.put(st::make_node("n" + std::to_string(i)).obj());
      ASSERT_TRUE(s->write(b).ok());
    }
    EXPECT_EQ(s->stats().commit, 10u);
    EXPECT_EQ(s->stats().commit_mark_errors, 0u);
  }
  auto s = open_ok(dir.path());
  EXPECT_EQ(s->recovery().recovered_commit, 10u);
  EXPECT_EQ(s->recovery().acknowledged_commit, 10u);
}

TEST(StoreCommitMark, MarkAheadOfDataMeansLostWrites) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    write_batch b;
    b.put(st::make_node("n1").obj());
    ASSERT_TRUE(s->write(b).ok());
  }
  write_mark(dir.path(), 7);
  auto r = store::open(options_for(dir.path()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), errc::corruption);
  EXPECT_NE(r.error().message().find("acknowledged writes were lost: the database recovered to "
                                     "commit 1 but commit 7 had been acknowledged"),
            std::string::npos)
      << r.error().message();
  // It stays refused until an operator accepts the loss.
  EXPECT_FALSE(store::open(options_for(dir.path())).ok());
  {
    store_options o;
    o.path = dir.path();
    o.accept_lost_writes = true;
    auto s = open_ok(o);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->recovery().lost_writes);
    EXPECT_EQ(s->recovery().recovered_commit, 1u);
    EXPECT_EQ(s->recovery().acknowledged_commit, 7u);
    EXPECT_EQ(load_ok(*s).nodes.size(), 1u);
    write_batch b;
    b.put(st::make_node("n2").obj());
    ASSERT_TRUE(s->write(b).ok());
    EXPECT_EQ(s->stats().commit, 2u);
  }
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->recovery().lost_writes);
  EXPECT_EQ(s->recovery().recovered_commit, 2u);
}

TEST(StoreCommitMark, DamagedOrMissingMarkNeverBlocksOpen) {
  temp_dir dir;
  {
    auto s = open_ok(dir.path());
    write_batch b;
    b.put(st::make_node("n1").obj());
    ASSERT_TRUE(s->write(b).ok());
  }
  // Garbage and a torn entry: ignored.
  std::ofstream(dir.path() + "/PHALANX-COMMIT-MARK", std::ios::binary | std::ios::app)
      << "PXC1\x09\0\0\0\0\0\0\0\x01\x02\x03\x04PXC1\x05";
  {
    auto s = open_ok(dir.path());
    ASSERT_TRUE(s);
    EXPECT_EQ(s->recovery().acknowledged_commit, 1u);
  }
  std::filesystem::remove(dir.path() + "/PHALANX-COMMIT-MARK");
  auto s = open_ok(dir.path());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->recovery().acknowledged_commit, 0u);
  EXPECT_EQ(s->recovery().recovered_commit, 1u);
}

} // namespace
} // namespace phalanx::storage
