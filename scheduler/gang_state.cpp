#include "scheduler/gang_state.hpp"

#include <algorithm>

namespace phalanx::scheduler {

std::string_view to_string(vote_kind v) noexcept {
  switch (v) {
    case vote_kind::reserved:
      return "reserved";
    case vote_kind::waiting:
      return "waiting";
    case vote_kind::refused_conflict:
      return "refused_conflict";
    case vote_kind::refused_insufficient:
      return "refused_insufficient";
  }
  return "unknown";
}

std::string_view to_string(gang_phase p) noexcept {
  switch (p) {
    case gang_phase::pending:
      return "pending";
    case gang_phase::inqueue:
      return "inqueue";
    case gang_phase::planning:
      return "planning";
    case gang_phase::preparing:
      return "preparing";
    case gang_phase::committing:
      return "committing";
    case gang_phase::running:
      return "running";
    case gang_phase::completed:
      return "completed";
    case gang_phase::backoff:
      return "backoff";
    case gang_phase::failed:
      return "failed";
  }
  return "unknown";
}

bool is_legal_transition(gang_phase from, gang_phase to) noexcept {
  using p = gang_phase;
  if (to == p::failed)
    return from != p::completed && from != p::failed;  // Deletion or a failed job ends any live gang.
  switch (from) {
    case p::pending:
      return to == p::inqueue;
    case p::inqueue:
      return to == p::planning || to == p::pending;  // Back to pending: the queue was closed.
    case p::planning:
      // running: nothing was placeable in an elastic round of a ready gang.
      return to == p::preparing || to == p::backoff || to == p::running;
    case p::preparing:
      // planning: refused, replan at once (bounded); running: a refused elastic round.
      return to == p::committing || to == p::planning || to == p::backoff || to == p::running;
    case p::committing:
      // backoff: the bindings could not be made durable; the holds were aborted.
      return to == p::running || to == p::backoff;
    case p::running:
      return to == p::planning || to == p::completed;
    case p::backoff:
      return to == p::inqueue || to == p::pending;
    case p::completed:
    case p::failed:
      return false;
  }
  return false;
}

status gang_state_machine::transition(gang_phase to) {
  if (!is_legal_transition(phase_, to))
    return {errc::internal, std::string("illegal gang transition ") +
                                std::string(to_string(phase_)) + " -> " +
                                std::string(to_string(to))};
  phase_ = to;
  if (to == gang_phase::running)
    was_ready_ = true;
  return {};
}

status gang_state_machine::restore_running() {
  if (phase_ != gang_phase::pending)
    return {errc::internal, "only a pending gang can be restored as running, not " +
                                std::string(to_string(phase_))};
  phase_ = gang_phase::running;
  was_ready_ = true;
  return {};
}

void vote_tally::start(txn_id txn, std::vector<uint32_t> nodes) {
  txn_ = txn;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  nodes_ = std::move(nodes);
  decided_.assign(nodes_.size(), 0);
  refused_.clear();
  reserved_count_ = 0;
  any_insufficient_ = false;
}

vote_tally::result_kind vote_tally::record(uint32_t node, vote_kind vote) {
  auto i = std::lower_bound(nodes_.begin(), nodes_.end(), node);
  if (i == nodes_.end() || *i != node)
    return state();
  auto& d = decided_[static_cast<std::size_t>(i - nodes_.begin())];
  if (d != 0 || vote == vote_kind::waiting)
    return state();
  if (vote == vote_kind::reserved) {
    d = 1;
    ++reserved_count_;
  } else {
    d = 2;
    refused_.push_back(node);
    if (vote == vote_kind::refused_insufficient)
      any_insufficient_ = true;
  }
  return state();
}

vote_tally::result_kind vote_tally::state() const noexcept {
  if (!refused_.empty())
    return result_kind::refused;
  if (reserved_count_ == nodes_.size())
    return result_kind::all_reserved;
  return result_kind::pending;
}

} // namespace phalanx::scheduler
