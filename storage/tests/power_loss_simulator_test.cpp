// The power-loss file system itself: what survives a crash, what a kill keeps, scheduled crashes.

#include "storage/power_loss_fs.hpp"

#include "storage/tests/test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace phalanx::storage {
namespace {

namespace fs = std::filesystem;
using testing::temp_dir;

class PowerLossSimulator : public ::testing::Test {
 protected:
  std::shared_ptr<power_loss_simulator> sim = power_loss_simulator::create();
  std::shared_ptr<rocksdb::FileSystem> fsys = detail::file_system_of(sim);
  temp_dir dir;

  std::unique_ptr<rocksdb::FSWritableFile> create(const std::string& name) {
    std::unique_ptr<rocksdb::FSWritableFile> f;
    EXPECT_TRUE(fsys->NewWritableFile(dir.sub(name), {}, &f, nullptr).ok());
    return f;
  }
  rocksdb::IOStatus append(rocksdb::FSWritableFile& f, std::string_view data) {
    return f.Append(rocksdb::Slice(data.data(), data.size()), {}, nullptr);
  }
  void sync_dir() {
    std::unique_ptr<rocksdb::FSDirectory> d;
    ASSERT_TRUE(fsys->NewDirectory(dir.path(), {}, &d, nullptr).ok());
    ASSERT_TRUE(d->Fsync({}, nullptr).ok());
  }
  std::string contents(const std::string& name) {
    std::ifstream in(dir.sub(name), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool exists(const std::string& name) { return fs::exists(dir.sub(name)); }
};

TEST_F(PowerLossSimulator, CrashKeepsOnlySyncedBytes) {
  auto f = create("a");
  ASSERT_TRUE(append(*f, "durable").ok());
  ASSERT_TRUE(f->Sync({}, nullptr).ok());
  ASSERT_TRUE(append(*f, "-lost").ok());
  EXPECT_EQ(contents("a"), "durable-lost");
  sim->crash();
  EXPECT_TRUE(sim->crashed());
  EXPECT_EQ(contents("a"), "durable");
  // The dying process cannot write any more.
  EXPECT_FALSE(append(*f, "x").ok());
  EXPECT_FALSE(f->Sync({}, nullptr).ok());
  std::unique_ptr<rocksdb::FSWritableFile> g;
  EXPECT_FALSE(fsys->NewWritableFile(dir.sub("b"), {}, &g, nullptr).ok());
  EXPECT_FALSE(fsys->DeleteFile(dir.sub("a"), {}, nullptr).ok());
  // Closing may rewrite the file's end; reset() applies the crash again.
  f->Close({}, nullptr).PermitUncheckedError();
  f.reset();
  sim->reset();
  EXPECT_FALSE(sim->crashed());
  EXPECT_EQ(contents("a"), "durable");
  auto h = create("c");
  EXPECT_TRUE(append(*h, "after").ok());
}

TEST_F(PowerLossSimulator, NewFilesNeedASyncOrADirectorySync) {
  auto never = create("never-synced");
  ASSERT_TRUE(append(*never, "gone").ok());
  auto synced = create("synced");
  ASSERT_TRUE(append(*synced, "kept").ok());
  ASSERT_TRUE(synced->Sync({}, nullptr).ok());
  sim->crash();
  EXPECT_FALSE(exists("never-synced"));
  EXPECT_EQ(contents("synced"), "kept");
  sim->reset();

  auto listed = create("listed");
  ASSERT_TRUE(append(*listed, "data").ok());
  sync_dir(); // The name is durable, the data is not.
  sim->crash();
  EXPECT_TRUE(exists("listed"));
  EXPECT_EQ(contents("listed"), "");
  sim->reset();
}

TEST_F(PowerLossSimulator, FilesFromBeforeAreDurable) {
  std::ofstream(dir.sub("old")) << "old";
  std::unique_ptr<rocksdb::FSWritableFile> f;
  ASSERT_TRUE(fsys->ReopenWritableFile(dir.sub("old"), {}, &f, nullptr).ok());
  ASSERT_TRUE(append(*f, "+new").ok());
  sim->crash();
  EXPECT_EQ(contents("old"), "old");
  sim->reset();
}

TEST_F(PowerLossSimulator, RenameCarriesTheState) {
  auto f = create("tmp");
  ASSERT_TRUE(append(*f, "x").ok());
  ASSERT_TRUE(f->Sync({}, nullptr).ok());
  ASSERT_TRUE(append(*f, "y").ok());
  ASSERT_TRUE(fsys->RenameFile(dir.sub("tmp"), dir.sub("final"), {}, nullptr).ok());
  sim->crash();
  EXPECT_FALSE(exists("tmp"));
  EXPECT_EQ(contents("final"), "x");
  sim->reset();
}

TEST_F(PowerLossSimulator, KillKeepsEverythingWritten) {
  auto f = create("a");
  ASSERT_TRUE(append(*f, "unsynced").ok());
  sim->kill();
  EXPECT_FALSE(append(*f, "more").ok());
  f.reset();
  sim->reset();
  EXPECT_EQ(contents("a"), "unsynced");
}

TEST_F(PowerLossSimulator, ScheduledCrashFailsTheNthOperation) {
  auto f = create("a");
  uint64_t before = sim->operations();
  sim->crash_after_operations(3);
  EXPECT_TRUE(append(*f, "1").ok());
  EXPECT_TRUE(f->Sync({}, nullptr).ok());
  EXPECT_FALSE(append(*f, "2").ok()); // The third: the power goes.
  EXPECT_TRUE(sim->crashed());
  EXPECT_EQ(sim->operations(), before + 3);
  EXPECT_EQ(contents("a"), "1");
  f.reset();
  sim->reset();
}

TEST_F(PowerLossSimulator, ASyncCanLandAndStillFail) {
  for (bool lands : {false, true}) {
    auto name = lands ? "lands" : "lost";
    auto f = create(name);
    ASSERT_TRUE(append(*f, "data").ok());
    sim->crash_after_operations(1, lands);
    EXPECT_FALSE(f->Sync({}, nullptr).ok());
    EXPECT_TRUE(sim->crashed());
    f.reset();
    sim->reset();
    if (lands)
      EXPECT_EQ(contents(name), "data");
    else
      EXPECT_FALSE(exists(name));
  }
}

} // namespace
} // namespace phalanx::storage
