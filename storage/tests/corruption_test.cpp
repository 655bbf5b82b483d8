// RocksDB-level corruption: bit flips in WAL, table (SST), MANIFEST and other files. Opening and
// loading a damaged store must fail with a clear error or return exactly what was written; never
// crash, and never return different data without an error.
//
// The stores here end as after kill -9 (power_loss_simulator::kill): the operating system keeps
// every written byte, the WAL holds the writes made since the last flush, and the commit mark
// holds the number of the last acknowledged write.

#include "storage/store.hpp"

#include "storage/codec.hpp"
#include "storage/tests/test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace phalanx::storage {
namespace {

namespace fs = std::filesystem;
namespace sch = phalanx::scheduler;
using testing::diff;
using testing::random_objects;
using testing::temp_dir;

store_options options_for(const std::string& path) {
  store_options o;
  o.path = path;
  return o;
}

// The world the damaged stores hold: some of it in table files (written, then the store closed
// cleanly), the rest only in the WAL (written by a child that exits without closing).
struct corpus {
  loaded_state expected;
  std::vector<write_batch> table_batches;
  std::vector<write_batch> wal_batches;
};

corpus make_corpus(uint64_t seed, int table_writes, int wal_writes) {
  random_objects gen(seed);
  corpus c;
  int serial = 0;
  auto add = [&](std::vector<write_batch>& to) {
    write_batch b;
    // A "gang binding": a PodGroup and its pods, plus a node now and then.
    auto g = gen.pod_group();
    g.group.meta.namespace_name = "default";
    g.group.meta.name = "pg-" + std::to_string(1000 + serial);
    b.put(g);
    c.expected.pod_groups.push_back(g);
    for (int i = 0; i < 3; ++i) {
      auto p = gen.pod();
      p.meta.namespace_name = "default";
      p.meta.name = "pg-" + std::to_string(1000 + serial) + "-" + std::to_string(i);
      b.put(p);
      c.expected.pods.push_back(p);
    }
    if (serial % 4 == 0) {
      auto n = gen.node();
      n.meta.name = "node-" + std::to_string(1000 + serial);
      b.put(n);
      c.expected.nodes.push_back(n);
    }
    if (serial % 7 == 0) {
      auto j = gen.job();
      j.job.meta.namespace_name = "default";
      j.job.meta.name = "job-" + std::to_string(1000 + serial);
      b.put(j);
      c.expected.jobs.push_back(j);
    }
    if (serial % 9 == 0) {
      auto q = gen.queue();
      q.queue.meta.name = "queue-" + std::to_string(1000 + serial);
      b.put(q);
      c.expected.queues.push_back(q);
    }
    ++serial;
    to.push_back(std::move(b));
  };
  for (int i = 0; i < table_writes; ++i)
    add(c.table_batches);
  for (int i = 0; i < wal_writes; ++i)
    add(c.wal_batches);
  return c;
}

// Writes the corpus into `path`: table batches, clean close, WAL batches, killed.
void build(const corpus& c, const std::string& path) {
  {
    auto s = store::open(options_for(path));
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    for (const auto& b : c.table_batches)
      ASSERT_TRUE((*s)->write(b).ok());
  }
  auto sim = power_loss_simulator::create();
  {
    auto o = options_for(path);
    o.fault_injection = sim;
    auto s = store::open(o);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    for (const auto& b : c.wal_batches)
      ASSERT_TRUE((*s)->write(b).ok());
    sim->kill(); // The store closes without flushing: the WAL keeps the writes.
  }
  sim->reset();
}

void copy_dir(const std::string& from, const std::string& to) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
}

std::vector<std::string> files_with(const std::string& dir, std::string_view ext) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext)
      out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void flip_bit(const std::string& file, std::uintmax_t offset, int bit) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << file;
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ (1 << bit));
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

enum class outcome { equal, refused, wrong };

// Opens and loads; an error must be a clear one (corruption or I/O), a success must be exact.
outcome open_and_check(const std::string& path, const loaded_state& expected, std::string* why) {
  auto s = store::open(options_for(path));
  if (!s) {
    *why = s.error().to_string();
    return (s.error().code() == errc::corruption || s.error().code() == errc::io_error) &&
                   !s.error().message().empty()
               ? outcome::refused
               : outcome::wrong;
  }
  auto state = (*s)->load();
  if (!state) {
    *why = state.error().to_string();
    return state.error().code() == errc::corruption || state.error().code() == errc::io_error
               ? outcome::refused
               : outcome::wrong;
  }
  *why = diff(*state, expected);
  return why->empty() ? outcome::equal : outcome::wrong;
}

class StoreCorruption : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new temp_dir();
    corpus_ = new corpus(make_corpus(7, 30, 30));
    build(*corpus_, pristine());
  }
  static void TearDownTestSuite() {
    delete corpus_;
    delete dir_;
  }
  static std::string pristine() { return dir_->sub("pristine"); }
  static std::string work() { return dir_->sub("work"); }
  static const loaded_state& expected() { return corpus_->expected; }

  static temp_dir* dir_;
  static corpus* corpus_;
};

temp_dir* StoreCorruption::dir_ = nullptr;
corpus* StoreCorruption::corpus_ = nullptr;

TEST_F(StoreCorruption, UndamagedCopyLoadsExactly) {
  ASSERT_FALSE(files_with(pristine(), ".log").empty());
  ASSERT_FALSE(files_with(pristine(), ".sst").empty());
  copy_dir(pristine(), work());
  std::string why;
  EXPECT_EQ(open_and_check(work(), expected(), &why), outcome::equal) << why;
}

// The WAL file that holds the records written after the clean close.
std::string live_wal(const std::string& dir) {
  std::string best;
  std::uintmax_t size = 0;
  for (const auto& f : files_with(dir, ".log"))
    if (fs::file_size(f) > size) {
      size = fs::file_size(f);
      best = f;
    }
  return best;
}

TEST_F(StoreCorruption, WalDamageInTheMiddleIsReportedAsLostWrites) {
  copy_dir(pristine(), work());
  auto wal = live_wal(work());
  ASSERT_FALSE(wal.empty());
  flip_bit(wal, fs::file_size(wal) / 2, 3);
  auto s = store::open(options_for(work()));
  ASSERT_FALSE(s.ok()) << "point-in-time recovery dropped acknowledged writes silently";
  EXPECT_EQ(s.error().code(), errc::corruption);
  EXPECT_NE(s.error().message().find("acknowledged writes were lost"), std::string::npos)
      << s.error().message();
}

TEST_F(StoreCorruption, WalDamageInTheLastRecordIsReportedAsLostWrites) {
  copy_dir(pristine(), work());
  auto wal = live_wal(work());
  flip_bit(wal, fs::file_size(wal) - 10, 0);
  auto s = store::open(options_for(work()));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("acknowledged writes were lost"), std::string::npos)
      << s.error().message();
}

void expect_lost_writes(const std::string& dir) {
  auto s = store::open(options_for(dir));
  ASSERT_FALSE(s.ok()) << "point-in-time recovery dropped acknowledged writes silently";
  EXPECT_EQ(s.error().code(), errc::corruption);
  EXPECT_NE(s.error().message().find("acknowledged writes were lost"), std::string::npos)
      << s.error().message();
}

TEST_F(StoreCorruption, TruncatedWalIsReportedAsLostWrites) {
  copy_dir(pristine(), work());
  auto wal = live_wal(work());
  fs::resize_file(wal, fs::file_size(wal) / 2);
  expect_lost_writes(work());
}

TEST_F(StoreCorruption, ZeroedWalRegionIsReportedAsLostWrites) {
  copy_dir(pristine(), work());
  auto wal = live_wal(work());
  std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(fs::file_size(wal) / 3));
  std::string zeros(4096, '\0');
  f.write(zeros.data(), static_cast<std::streamsize>(zeros.size()));
  f.close();
  expect_lost_writes(work());
}

TEST_F(StoreCorruption, MissingWalIsReportedAsLostWrites) {
  copy_dir(pristine(), work());
  fs::remove(live_wal(work()));
  expect_lost_writes(work());
}

TEST_F(StoreCorruption, TableFileDamageFailsLoadOrOpen) {
  copy_dir(pristine(), work());
  auto tables = files_with(work(), ".sst");
  // The largest table file holds pod records: damage a data block in its middle.
  auto largest = *std::max_element(tables.begin(), tables.end(), [](auto& a, auto& b) {
    return fs::file_size(a) < fs::file_size(b);
  });
  flip_bit(largest, fs::file_size(largest) / 3, 5);
  std::string why;
  EXPECT_EQ(open_and_check(work(), expected(), &why), outcome::refused) << why;
  EXPECT_NE(why.find("orruption"), std::string::npos) << why;
}

// Many seeded bit flips in every file of the store.
void random_flips(const std::string& pristine_dir, const std::string& work_dir,
                  const loaded_state& expected, uint64_t seed, int trials,
                  std::map<std::string, std::array<int, 3>>& tally) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(pristine_dir))
    if (e.is_regular_file() && fs::file_size(e.path()) > 0 && e.path().filename() != "LOCK")
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  for (int t = 0; t < trials; ++t) {
    // WAL and table files get most of the flips (they hold the data): 40 % each, 20 % for the
    // other files.
    std::vector<std::string> wal, sst, other;
    for (const auto& n : names)
      (n.ends_with(".log") ? wal : n.ends_with(".sst") ? sst : other).push_back(n);
    auto roll = rng() % 10;
    const auto& group = roll < 4 && !wal.empty() ? wal : roll < 8 && !sst.empty() ? sst : other;
    const auto& name = group[rng() % group.size()];
    copy_dir(pristine_dir, work_dir);
    auto file = work_dir + "/" + name;
    auto offset = rng() % fs::file_size(file);
    int bit = static_cast<int>(rng() % 8);
    flip_bit(file, offset, bit);
    std::string why;
    auto o = open_and_check(work_dir, expected, &why);
    std::string kind = name.ends_with(".log")         ? "WAL"
                       : name.ends_with(".sst")       ? "SST"
                       : name.starts_with("MANIFEST") ? "MANIFEST"
                       : name.starts_with("OPTIONS")  ? "OPTIONS"
                       : name.starts_with("LOG")      ? "LOG"
                                                      : name;
    tally[kind][static_cast<int>(o)]++;
    ASSERT_NE(o, outcome::wrong) << "seed " << seed << " trial " << t << ": bit " << bit << " at "
                                 << offset << " of " << name << ": " << why;
  }
}

void seeded_flips(const std::string& pristine_dir, const std::string& work_dir,
                  const loaded_state& expected, uint64_t seed, int trials) {
  std::map<std::string, std::array<int, 3>> tally;
  random_flips(pristine_dir, work_dir, expected, seed, trials, tally);
  int refused_wal = 0, refused_sst = 0;
  for (const auto& [kind, counts] : tally) {
    std::printf("  %-20s equal %4d  refused %4d\n", kind.c_str(), counts[0], counts[1]);
    if (kind == "WAL")
      refused_wal += counts[1];
    if (kind == "SST")
      refused_sst += counts[1];
  }
  // Flips in WAL records and table blocks hit checksummed data and must be caught.
  EXPECT_GT(refused_wal, 0);
  EXPECT_GT(refused_sst, 0);
}

TEST_F(StoreCorruption, SeededBitFlipsNeverReturnWrongData) {
  seeded_flips(pristine(), work(), expected(), 1234, 300);
}

// The long variant (ctest label `slow`) runs with PHALANX_LONG_TESTS=1.
TEST_F(StoreCorruption, SeededBitFlipsLong) {
  if (!testing::long_tests())
    GTEST_SKIP() << "set PHALANX_LONG_TESTS=1";
  seeded_flips(pristine(), work(), expected(), 98765, 3000);
}

TEST_F(StoreCorruption, QuarantineDoesNotHideRocksDbCorruption) {
  copy_dir(pristine(), work());
  auto tables = files_with(work(), ".sst");
  auto largest = *std::max_element(tables.begin(), tables.end(), [](auto& a, auto& b) {
    return fs::file_size(a) < fs::file_size(b);
  });
  flip_bit(largest, fs::file_size(largest) / 3, 5);
  auto o = options_for(work());
  o.quarantine_corrupt = true;
  auto s = store::open(o);
  if (!s.ok()) {
    EXPECT_EQ(s.error().code(), errc::corruption);
    return;
  }
  auto state = (*s)->load();
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().code(), errc::corruption);
  EXPECT_EQ(state.error().message().rfind("pods: ", 0), 0u) << state.error().message();
}

} // namespace
} // namespace phalanx::storage
