// The commit mark file on its own: reading, advancing, rotating, and recovering from a failed
// append; and commit numbers under concurrent writers.

#include "storage/commit_mark.hpp"

#include "storage/power_loss_fs.hpp"
#include "storage/store.hpp"
#include "storage/tests/test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace phalanx::storage {
namespace {

namespace fs = std::filesystem;
using detail::commit_mark;
using testing::temp_dir;

TEST(CommitMark, NoFileReadsAsNothing) {
  temp_dir dir;
  auto v = commit_mark::read(*rocksdb::FileSystem::Default(), dir.path());
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_value());
}

TEST(CommitMark, AdvanceAndRotate) {
  temp_dir dir;
  auto fsys = rocksdb::FileSystem::Default();
  auto mark = commit_mark::start(fsys, dir.path(), 5);
  ASSERT_TRUE(mark.ok()) << mark.error().to_string();
  EXPECT_EQ(*commit_mark::read(*fsys, dir.path()).value(), 5u);
  uint64_t last = 5 + commit_mark::rotate_entries + 100;
  for (uint64_t c = 6; c <= last; ++c)
    ASSERT_TRUE((*mark)->advance(c));
  EXPECT_EQ(*commit_mark::read(*fsys, dir.path()).value(), last);
  // Rotation rewrote the file: it holds the entries since, not all of them.
  EXPECT_LE(fs::file_size(dir.sub(commit_mark::file_name)), 16u * 200);
  EXPECT_FALSE(fs::exists(dir.sub(std::string(commit_mark::file_name) + ".tmp")));
  ASSERT_TRUE((*mark)->sync());
}

TEST(CommitMark, AFailedAppendRewritesTheFile) {
  temp_dir dir;
  auto sim = power_loss_simulator::create();
  auto fsys = detail::file_system_of(sim);
  auto mark = commit_mark::start(fsys, dir.path(), 1);
  ASSERT_TRUE(mark.ok());
  ASSERT_TRUE((*mark)->advance(2));
  sim->kill();
  EXPECT_FALSE((*mark)->advance(3)); // Lost: the mark may lag, never lead.
  sim->reset();
  ASSERT_TRUE((*mark)->advance(4)); // Starts over with a whole file.
  EXPECT_EQ(*commit_mark::read(*fsys, dir.path()).value(), 4u);
  mark->reset();
}

TEST(CommitMark, ConcurrentWritersKeepCommitsInOrder) {
  temp_dir dir;
  {
    store_options o;
    o.path = dir.path();
    auto s = store::open(o);
    ASSERT_TRUE(s.ok());
    std::vector<std::thread> writers;
    for (int t = 0; t < 4; ++t)
      writers.emplace_back([&, t] {
        for (int i = 0; i < 40; ++i) {
          write_batch b;
          scheduler::node n;
          n.meta.name = "n-" + std::to_string(t) + "-" + std::to_string(i);
          b.put(n);
          EXPECT_TRUE((*s)->write(b).ok());
        }
      });
    for (auto& w : writers)
      w.join();
    EXPECT_EQ((*s)->stats().commit, 160u);
    EXPECT_EQ((*s)->stats().writes, 160u);
  }
  store_options o;
  o.path = dir.path();
  auto s = store::open(o);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ((*s)->recovery().recovered_commit, 160u);
  EXPECT_EQ((*s)->recovery().acknowledged_commit, 160u);
  auto state = (*s)->load();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->nodes.size(), 160u);
}

} // namespace
} // namespace phalanx::storage
