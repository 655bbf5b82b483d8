// The PodGroup coordinator's state machine and vote tally.

#include "scheduler/gang_state.hpp"

#include <gtest/gtest.h>

namespace phalanx::scheduler {
namespace {

using p = gang_phase;

TEST(GangState, EveryPhaseHasAName) {
  for (int i = 0; i <= static_cast<int>(gang_phase_last); ++i)
    EXPECT_NE(to_string(static_cast<gang_phase>(i)), "unknown");
}

TEST(GangState, TheHappyPathIsLegal) {
  gang_state_machine m;
  for (auto to : {p::inqueue, p::planning, p::preparing, p::committing, p::running, p::completed})
    EXPECT_TRUE(m.transition(to).ok()) << to_string(to);
  EXPECT_EQ(m.phase(), p::completed);
  EXPECT_TRUE(m.was_ready());
}

TEST(GangState, IllegalMovesAreRefusedAndChangeNothing) {
  struct bad_move {
    gang_phase from;
    gang_phase to;
  };
  for (auto [from, to] : {bad_move{p::pending, p::planning}, bad_move{p::pending, p::running},
                          bad_move{p::inqueue, p::committing}, bad_move{p::preparing, p::completed},
                          bad_move{p::committing, p::planning}, bad_move{p::completed, p::running},
                          bad_move{p::failed, p::pending}, bad_move{p::backoff, p::running}}) {
    EXPECT_FALSE(is_legal_transition(from, to)) << to_string(from) << " -> " << to_string(to);
  }
  gang_state_machine m;
  auto s = m.transition(p::committing);
  EXPECT_EQ(s.code(), errc::internal);
  EXPECT_EQ(s.message(), "illegal gang transition pending -> committing");
  EXPECT_EQ(m.phase(), p::pending);
}

TEST(GangState, RefusalsBackOffAndElasticRoundsReturnToRunning) {
  EXPECT_TRUE(is_legal_transition(p::preparing, p::backoff));
  EXPECT_TRUE(is_legal_transition(p::backoff, p::inqueue));
  EXPECT_TRUE(is_legal_transition(p::running, p::planning));
  EXPECT_TRUE(is_legal_transition(p::planning, p::running));
  EXPECT_TRUE(is_legal_transition(p::preparing, p::running));
  for (int i = 0; i <= static_cast<int>(gang_phase_last); ++i) {
    auto from = static_cast<gang_phase>(i);
    EXPECT_EQ(is_legal_transition(from, p::failed), from != p::completed && from != p::failed);
  }
}

TEST(GangState, RestoreIsOnlyForAPendingGang) {
  gang_state_machine m;
  EXPECT_TRUE(m.restore_running().ok());
  EXPECT_EQ(m.phase(), p::running);
  EXPECT_FALSE(m.restore_running().ok());
}

TEST(VoteTally, CountsOneVotePerNode) {
  vote_tally t;
  t.start({7, 1}, {3, 1, 3, 2});
  EXPECT_EQ(t.nodes(), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(t.record(1, vote_kind::reserved), vote_tally::result_kind::pending);
  EXPECT_EQ(t.record(1, vote_kind::reserved), vote_tally::result_kind::pending);  // Duplicate.
  EXPECT_EQ(t.record(9, vote_kind::refused_conflict), vote_tally::result_kind::pending);  // Stranger.
  EXPECT_EQ(t.record(2, vote_kind::waiting), vote_tally::result_kind::pending);
  EXPECT_EQ(t.record(2, vote_kind::reserved), vote_tally::result_kind::pending);
  EXPECT_EQ(t.record(3, vote_kind::reserved), vote_tally::result_kind::all_reserved);
}

TEST(VoteTally, OneRefusalRefusesTheRound) {
  vote_tally t;
  t.start({7, 2}, {1, 2});
  EXPECT_EQ(t.record(2, vote_kind::refused_insufficient), vote_tally::result_kind::refused);
  EXPECT_EQ(t.record(1, vote_kind::reserved), vote_tally::result_kind::refused);
  EXPECT_TRUE(t.any_insufficient());
  EXPECT_EQ(t.refused_nodes(), std::vector<uint32_t>{2});
}

} // namespace
} // namespace phalanx::scheduler
