#include "actors/gang_actor.hpp"

#include "actors/operator_log.hpp"

#include "scheduler/pod_neighbourhood.hpp"

#include "scheduler/gang_book.hpp"
#include "scheduler/order.hpp"
#include "scheduler/placeholders.hpp"
#include "scheduler/room_reservation.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <atomic>
#include <span>

namespace phalanx::actors {

namespace {

using self_ptr = gang_actor::stateful_pointer<gang_actor_state>;
using member_status = gang_actor_state::member_status;
using scheduler::gang_phase;

// One planner per scheduler thread and runtime: its scratch buffers are reused by every gang that
// runs on the thread, instead of one set per gang (10,000 gangs x per-node scratch would not fit).
scheduler::gang_planner& planner_for(const runtime_context& ctx) {
  struct cached {
    const runtime_context* owner = nullptr;
    uint64_t generation = 0;
    std::unique_ptr<scheduler::gang_planner> planner;
  };
  thread_local std::vector<cached> planners;
  for (auto& c : planners)
    if (c.owner == &ctx && c.generation == ctx.generation)
      return *c.planner;
  planners.push_back(
      {&ctx, ctx.generation,
       std::make_unique<scheduler::gang_planner>(ctx.config.scheduling.planner)});
  if (planners.size() > 8)  // Old runtimes of a test binary: drop the oldest.
    planners.erase(planners.begin());
  return *planners.back().planner;
}

std::string_view gang_name(self_ptr self) {
  return self->state.group->meta.name;
}

// The gang as operators name it, "<ns>/<name>": the first key of each of its lines.
std::string gang_key(self_ptr self) {
  return self->state.group->meta.namespace_name + "/" + std::string(gang_name(self));
}

// The details of its rounds are written at debug (a round: planned, refused, reserved,
// committed, or no placement) and trace (each node's vote), for an operator who asks why one
// gang waits (issue 30: state changes at info, details at debug). A burst makes a few lines per
// gang; with the level off nothing is built: each caller asks first.
bool rounds_logged() { return oplog::enabled(spdlog::level::debug); }

void transition(self_ptr self, gang_phase to) {
  auto st = self->state.machine.transition(to);
  if (!st.ok()) {
    // A bug: the protocol reached a state it should not. Say so loudly, keep the old state.
    oplog::error("illegal gang transition")
        .kv("gang", gang_key(self))
        .kv("error", st.message());
    assert(false && "illegal gang transition");
  }
}

int32_t bound_placeholders(const gang_actor_state& st) {
  int32_t n = 0;
  for (const auto& m : st.members)
    if (m.placeholder && m.status == member_status::bound)
      ++n;
  return n;
}

void report(self_ptr self, std::string reason = {}, std::string code = {},
            std::string origin_pod_reason = {}) {
  auto& st = self->state;
  auto phase = st.machine.phase();
  auto placeholders = bound_placeholders(st);
  if (phase == st.last_reported && reason == st.last_reason &&
      placeholders == st.last_placeholders)
    return;
  st.last_reported = phase;
  st.last_reason = reason;
  st.last_placeholders = placeholders;
  gang_report r;
  r.placeholders = placeholders;
  r.gang = st.id;
  r.phase = phase;
  r.admitted = st.admitted;
  r.pending_reason = std::move(reason);
  r.reason_code = std::move(code);
  r.origin_pod_reason = std::move(origin_pod_reason);
  self->send(st.sink, report_atom::value, std::move(r));
}

// Counts of the real members (pods), plus the bound placeholders, which count toward readiness.
struct gang_counts {
  int32_t total = 0;
  int32_t pending = 0;
  int32_t bound = 0;      // Bound and not finished.
  int32_t succeeded = 0;
  int32_t failed = 0;
  int32_t placeholders = 0;
  int32_t ready() const { return bound + succeeded + placeholders; }
};

gang_counts count_members(const gang_actor_state& st) {
  gang_counts c;
  for (const auto& m : st.members) {
    if (m.placeholder) {
      if (m.status == member_status::bound)
        ++c.placeholders;
      continue;
    }
    ++c.total;
    switch (m.status) {
      case member_status::pending:
      case member_status::reserving:
        ++c.pending;
        break;
      case member_status::bound:
        ++c.bound;
        break;
      case member_status::finished:
        if (m.final_phase == scheduler::pod_phase::succeeded)
          ++c.succeeded;
        else
          ++c.failed;
        break;
    }
  }
  return c;
}

// The gang's book (scheduler/gang_book.hpp): its members that count as ready (bound, or
// succeeded; bound placeholders too), by role. The book says what follows from them.
scheduler::gang_book book_of(const gang_actor_state& st) {
  scheduler::gang_book book(*st.group);
  for (const auto& m : st.members)
    if (m.status == member_status::bound ||
        (m.status == member_status::finished && m.final_phase == scheduler::pod_phase::succeeded))
      book.count(scheduler::gang_book::role_index(*st.group, m.ref.pod->role));
  return book;
}

bool gang_mode(const gang_actor_state& st) { return st.ctx->config.scheduling.gang_scheduling; }

scheduler::resources pending_demand(const gang_actor_state& st) {
  scheduler::resources d;
  for (const auto& m : st.members)
    if (m.status == member_status::pending && !m.placeholder)
      d += m.ref.pod->requests;
  return d;
}

// Pods (not placeholders) waiting to be placed.
bool has_pending(const gang_actor_state& st) {
  return std::any_of(st.members.begin(), st.members.end(), [](const auto& m) {
    return m.status == member_status::pending && !m.placeholder;
  });
}

// A pod that exists and counts toward minMember: anything but a failed or deleted one.
bool counts_as_present(const gang_actor_state::member& m) {
  return !m.placeholder &&
         !(m.status == member_status::finished && m.final_phase != scheduler::pod_phase::succeeded);
}

void rebuild_member_index(gang_actor_state& st) {
  st.member_index.clear();
  for (std::size_t i = 0; i < st.members.size(); ++i)
    if (!st.members[i].placeholder)
      st.member_index.emplace_back(st.members[i].ref.id, static_cast<uint32_t>(i));
  std::sort(st.member_index.begin(), st.member_index.end());
}

// The member (not a placeholder) whose pod id is `id`, or null.
gang_actor_state::member* find_member(gang_actor_state& st, uint64_t id) {
  auto i = std::lower_bound(st.member_index.begin(), st.member_index.end(),
                            std::pair<uint64_t, uint32_t>{id, 0});
  if (i == st.member_index.end() || i->first != id)
    return nullptr;
  return &st.members[i->second];
}

// Before the gang first reaches its minimum: placeholders for the members that do not exist yet,
// sized from what minResources leaves (scheduler/placeholders.hpp). Unplaced placeholders of an
// earlier attempt are replaced, since the pods that exist may have changed since.
void refresh_placeholders(gang_actor_state& st) {
  auto before = st.members.size();
  std::erase_if(st.members, [](const auto& m) {
    return m.placeholder && m.status == member_status::pending;
  });
  if (st.members.size() != before)
    rebuild_member_index(st);
  std::vector<const scheduler::pod*> present;
  for (const auto& m : st.members)
    if (counts_as_present(m))
      present.push_back(m.ref.pod.get());
  for (auto& p : scheduler::make_placeholders(*st.group, present)) {
    gang_actor_state::member m;
    m.ref.id = placeholder_id_bit | (st.id << 24) | (st.next_placeholder++ & 0xFFFFFF);
    m.ref.pod = std::make_shared<const scheduler::pod>(std::move(p));
    m.placeholder = true;
    st.members.push_back(std::move(m));
  }
}

// Releases bound, unclaimed placeholders: every one (`keep` 0: the gang ended, or their room is
// given back), else all but `keep`.
void release_placeholders(self_ptr self, int32_t keep) {
  auto& st = self->state;
  std::unordered_map<uint32_t, std::vector<uint64_t>> per_node;
  usage_delta delta;
  delta.gang = st.id;
  for (auto& m : st.members) {
    if (!m.placeholder || m.status != member_status::bound || m.claimed)
      continue;
    if (keep > 0) {
      --keep;
      continue;
    }
    m.status = member_status::finished;
    per_node[m.node].push_back(m.ref.id);
    delta.removed += m.ref.pod->requests;
  }
  for (auto& [node, ids] : per_node)
    if (auto handle = st.ctx->nodes->at(node))
      self->send(handle, release_atom::value, std::move(ids));
  if (!delta.removed.is_zero())
    self->send(st.queue, usage_atom::value, std::move(delta));
}

// Asks the queue for a planning slot (and admission when not admitted yet).
// The gang runs its minimum now (a gang that ran and lost members below it does not: its
// replacements come before other gangs' extras).
bool runs_its_minimum(const gang_actor_state& st) {
  if (!gang_mode(st))
    return st.machine.was_ready();
  return book_of(st).runs_minimum(*st.group);
}

void register_waiting(self_ptr self) {
  auto& st = self->state;
  // Registered already: again only to tell the queue that pods joined. A gang it has not
  // admitted may have been set aside as one no node can hold; an admitted one waits with the
  // demand it had, and the queue's share counts it: a gang registered for placeholders alone
  // (demand 0) behind a share already used would wait for ever for the pods that joined it.
  if (st.registered && !st.members_joined)
    return;
  st.registered = true;
  self->send(st.queue, waiting_atom::value,
             gang_entry{st.id, st.group, st.admitted, pending_demand(st), st.members_joined,
                        runs_its_minimum(st)},
             gang_actor{self});
  st.members_joined = false;
}

void finish_slot(self_ptr self, plan_outcome outcome) {
  self->send(self->state.queue, planned_atom::value, self->state.id, outcome);
}

void schedule_retry(self_ptr self) {
  auto& st = self->state;
  const auto& cfg = st.ctx->config.scheduling;
  st.backoff = st.backoff.count() == 0 ? cfg.backoff_initial
                                       : std::min(cfg.backoff_max, st.backoff * 2);
  // +-50% jitter spreads gangs that failed together so they do not collide again together.
  auto base = st.backoff.count();
  std::uniform_int_distribution<int64_t> jitter(base / 2, base + base / 2);
  auto delay = std::chrono::milliseconds(std::max<int64_t>(1, jitter(st.random)));
  ++st.backoff_epoch;
  self->delayed_send(self, delay, retry_atom::value, st.backoff_epoch);
}

// Leaves a failed planning slot, and tries again after a backoff whatever the failure: a gang
// that is not running yet backs off; a ready gang goes back to running with its extra pods
// pending. A wake (something was released) that comes first cancels the timer. The timer is
// needed for a ready gang too: room also comes back without a release, when another gang's
// hold or reserve in flight ends in an abort (the plan found no room because of it) or a hold
// that refused this round commits while room is left elsewhere, and no wake follows either.
void leave_failed_round(self_ptr self) {
  auto& st = self->state;
  transition(self, st.machine.was_ready() ? gang_phase::running : gang_phase::backoff);
  schedule_retry(self);
}

// Asks for a planning slot again, when a retry timer fires or a wake comes (whichever is first:
// it cancels the timer): a gang backing off, unless it waits for pods (only their coming ends
// that), or a running gang with extra pods pending (leave_failed_round).
void try_again(self_ptr self) {
  auto& st = self->state;
  if (st.machine.phase() == gang_phase::backoff && !st.waiting_for_pods) {
    ++st.backoff_epoch;
    transition(self, st.admitted ? gang_phase::inqueue : gang_phase::pending);
    register_waiting(self);
  } else if (st.machine.phase() == gang_phase::running && has_pending(st)) {
    ++st.backoff_epoch;
    register_waiting(self);
  }
}

void abort_round(self_ptr self) {
  auto& st = self->state;
  st.preemption.reset();  // Its claim on the victims' room ends with its holds.
  for (auto node : st.tally.nodes())
    if (auto handle = st.ctx->nodes->at(node))
      self->send(handle, abort_atom::value, st.tally.txn());
  for (auto& [node, indices] : st.round_members)
    for (auto i : indices)
      if (st.members[i].status == member_status::reserving)
        st.members[i].status = member_status::pending;
  st.round_members.clear();
}

void plan_round(self_ptr self);
void start_swaps(self_ptr self);
void settle(self_ptr self);

// What the planner must place of `candidates` (the pending members, in preference order): what
// the gang's book says its minimum still lacks, and extras when room exists once the gang runs
// its minimum. Volcano's allocate: every gang reaches its minimum before any gets more; a gang
// places its minimum, then asks for an elastic round, which its queue grants after the gangs
// still short of theirs.
scheduler::gang_request request_for(const gang_actor_state& st,
                                    std::span<const scheduler::pod* const> candidates) {
  scheduler::gang_request request;
  request.pods = candidates;
  if (gang_mode(st)) {
    auto book = book_of(st);
    book.ask_for_minimum(*st.group, request);
    request.place_extra = book.runs_minimum(*st.group);
  } else {
    request.min_pods = candidates.empty() ? 0 : 1;
    request.place_extra = true;
  }
  return request;
}

// Gives every node of the gang's reservation its room back.
void give_back_reservation(self_ptr self) {
  auto& st = self->state;
  if (!st.reservation)
    return;
  for (auto node : st.reservation->nodes)
    if (auto handle = st.ctx->nodes->at(node))
      self->send(handle, unreserve_atom::value, st.id);
  st.reservation.reset();
}

// No starving gang (scheduler/room_reservation.hpp, docs/NOTES.md "No starving gang"). A gang
// admitted and not ready whose minimum found no room counts from that first failure; past
// scheduling.starvationBound it reserves the nodes where it would fit soonest, once: it keeps
// them (room accumulates there as their pods end) until it is ready, ends, or a node goes. A
// node already reserved by another gang is not taken; if a node refuses (another gang was
// faster), the gang gives the rest back and chooses again after its next failed plan. Returns
// the sentence its pending reason ends with, or "".
std::string reserve_if_starving(self_ptr self, const scheduler::plan_result& plan,
                                const std::vector<std::size_t>& candidate_members) {
  auto& st = self->state;
  const auto bound = st.ctx->config.scheduling.starvation_bound;
  if (plan.code != scheduler::plan_code::unschedulable) {
    give_back_reservation(self);  // No room can make an unresolvable gang fit.
    return {};
  }
  if (bound.count() == 0 || !gang_mode(st) || !st.admitted || st.machine.was_ready())
    return {};
  const auto now = self->clock().now();
  if (st.blocked_since == caf::actor_clock::time_point{})
    st.blocked_since = now;
  if (st.reservation) {
    bool all_live = std::all_of(st.reservation->nodes.begin(), st.reservation->nodes.end(),
                                [&](uint32_t n) { return st.ctx->view->is_live(n); });
    if (all_live)
      return st.reservation->reason;
    give_back_reservation(self);
  }
  auto as_timestamp = [](caf::actor_clock::time_point t) {
    return scheduler::timestamp{
        std::chrono::duration_cast<scheduler::duration>(t.time_since_epoch())};
  };
  if (!scheduler::is_starving(as_timestamp(st.blocked_since), as_timestamp(now), bound))
    return {};
  std::vector<const scheduler::pod*> candidates;
  for (auto i : candidate_members)
    candidates.push_back(st.members[i].ref.pod.get());
  auto request = request_for(st, candidates);
  const auto& view = *st.ctx->view;
  auto choice = scheduler::choose_reserved_nodes(view, request, [&](std::size_t n) {
    auto holder = view.reserved_for(n);
    return holder != 0 && holder != st.id;
  });
  if (!choice.found)
    return " It has waited past the starvation bound but reserves no nodes: " + choice.detail +
           ".";
  st.reservation = std::make_unique<gang_actor_state::reservation_state>();
  st.reservation->reason = " " + scheduler::reservation_reason(choice);
  for (auto& claim : choice.nodes) {
    auto node = static_cast<uint32_t>(claim.node);
    st.reservation->nodes.push_back(node);
    if (auto handle = st.ctx->nodes->at(node))
      self->send(handle, room_atom::value, st.id, std::move(claim.amount), gang_actor{self});
  }
  st.ctx->metrics->room_reservations.inc();
  return st.reservation->reason;
}

// A node's answer to a reservation: a refusal (another gang reserved it first) ends the whole
// reservation; the gang chooses again after its next failed plan. A grant for a reservation
// given back meanwhile is given back too.
void on_room_answer(self_ptr self, uint32_t node, bool granted) {
  auto& st = self->state;
  bool current = st.reservation && std::find(st.reservation->nodes.begin(),
                                             st.reservation->nodes.end(),
                                             node) != st.reservation->nodes.end();
  if (granted && !current) {
    if (auto handle = st.ctx->nodes->at(node))
      self->send(handle, unreserve_atom::value, st.id);
  } else if (!granted && current) {
    give_back_reservation(self);
  }
}

// Ends a slot whose plan failed: reports why and backs off.
void fail_plan(self_ptr self, const scheduler::plan_result& plan,
               const std::vector<std::size_t>& candidate_members) {
  auto& st = self->state;
  auto c = count_members(st);
  scheduler::gang_status_counts counts;
  counts.total = c.total;
  counts.running = c.bound;
  counts.succeeded = c.succeeded;
  counts.failed = c.failed;
  counts.pending = c.pending;
  counts.min_available = gang_mode(st) ? st.group->min_member : 1;
  std::string origin_name;
  if (plan.origin_pod < candidate_members.size())
    origin_name = st.members[candidate_members[plan.origin_pod]].ref.pod->meta.name;
  auto message = scheduler::gang_unschedulable_message(counts, origin_name, plan.origin,
                                                       plan.detail);
  bool unresolvable = plan.code == scheduler::plan_code::unresolvable;
  // A gang that can never run on these nodes and holds nothing gives its admission back: it
  // must not keep the enqueue budget from gangs that can run. Its queue does the same on this
  // outcome (it sees the same: no allocation) and admits it again once the nodes change.
  if (unresolvable && !plan.lacks_pods && c.ready() == 0 && st.admitted) {
    st.admitted = false;
    message += " It waits outside the enqueue budget until the nodes change.";
  }
  message += reserve_if_starving(self, plan, candidate_members);
  // A gang short of pods waits for them, not for nodes: to its queue it is only unschedulable.
  finish_slot(self, unresolvable && !plan.lacks_pods ? plan_outcome::unresolvable
                                                     : plan_outcome::unschedulable);
  leave_failed_round(self);
  report(self, std::move(message), unresolvable ? "Unresolvable" : "NotEnoughResources",
         plan.origin.to_string());
}

// Preemption (scheduler/preemption.hpp, docs/NOTES.md "Preemption"): a gang admitted and not
// ready yet whose minimum cannot be placed asks the registry, once per planning slot, for
// victims among lower-priority gangs of its queue. Not for its extra pods, not for a gang with
// placeholders among its candidates (Volcano's preemptors are pods that exist), and not while
// it waits for admission (Volcano: a Pending PodGroup does not preempt).
bool may_preempt(const gang_actor_state& st, const scheduler::plan_result& plan,
                 const std::vector<std::size_t>& candidate_members) {
  const auto& cfg = st.ctx->config.scheduling;
  if (!(cfg.preemption || cfg.reclaim) || !gang_mode(st) || !st.admitted ||
      st.asked_this_slot || st.machine.was_ready() ||
      plan.code != scheduler::plan_code::unschedulable)
    return false;
  return std::none_of(candidate_members.begin(), candidate_members.end(),
                      [&](std::size_t i) { return st.members[i].placeholder; });
}

void on_plan_failure(self_ptr self, scheduler::plan_result plan,
                     const scheduler::gang_request& request,
                     std::vector<std::size_t> candidate_members) {
  auto& st = self->state;
  st.ctx->metrics->plan_failures.inc();
  if (rounds_logged())
    oplog::debug("round found no placement")
        .kv("gang", gang_key(self))
        .kv("code", scheduler::to_string(plan.code))
        .kv("candidates", static_cast<uint64_t>(candidate_members.size()))
        .kv("min_pods", request.min_pods)
        .kv("attempt", st.replans + 1)
        .kv("detail", plan.detail);
  if (!may_preempt(st, plan, candidate_members)) {
    fail_plan(self, plan, candidate_members);
    return;
  }
  // The slot stays this gang's until the offer comes: a round trip to the registry.
  st.asked_this_slot = true;
  preemption_ask ask;
  ask.gang = st.id;
  ask.ask = ++st.preemption_asks;
  for (auto i : candidate_members)
    ask.pods.push_back(st.members[i].ref);
  ask.min_pods = request.min_pods;
  ask.min_per_role = request.min_per_role;
  st.preemption = std::make_unique<gang_actor_state::preemption_state>();
  st.preemption->failed_plan = std::move(plan);
  st.preemption->failed_candidates = std::move(candidate_members);
  self->send(st.sink, preempt_atom::value, std::move(ask), gang_actor{self});
}

void start_round(self_ptr self, const std::vector<std::pair<std::size_t, uint32_t>>& placements,
                 std::unordered_map<uint32_t, std::vector<uint64_t>> victims);

// The registry's answer to the last ask: a round that evicts, or the failure the plan was.
void on_offer(self_ptr self, preemption_offer offer) {
  auto& st = self->state;
  if (offer.ask != st.preemption_asks || !st.preemption || !st.preemption->failed_plan ||
      st.machine.phase() != gang_phase::planning)
    return;  // Not the answer it waits for.
  auto plan = std::move(*st.preemption->failed_plan);
  auto candidates = std::move(st.preemption->failed_candidates);
  st.preemption->failed_plan.reset();
  if (offer.found) {
    // Members may have gone while the registry chose: each placed pod must still be pending.
    std::vector<std::pair<std::size_t, uint32_t>> placements;
    for (const auto& [pod, node] : offer.placements) {
      auto* m = find_member(st, pod);
      if (!m || m->status != member_status::pending)
        break;
      placements.emplace_back(static_cast<std::size_t>(m - st.members.data()), node);
    }
    if (placements.size() == offer.placements.size()) {
      std::unordered_map<uint32_t, std::vector<uint64_t>> victims;
      for (auto& [node, pods] : offer.victims_by_node)
        victims.emplace(node, std::move(pods));
      st.ctx->metrics->preemption_rounds.inc();
      st.preemption->reclaim = offer.reclaim;
      start_round(self, placements, std::move(victims));
      return;
    }
    offer.detail = "the gang changed while its victims were chosen";
  }
  if (!offer.detail.empty())
    plan.detail += "; no preemption: " + offer.detail;
  st.preemption.reset();
  fail_plan(self, plan, candidates);
}

void plan_round(self_ptr self) {
  auto& st = self->state;
  const bool gangs = gang_mode(st);
  if (gangs && !st.machine.was_ready())
    refresh_placeholders(st);

  std::vector<const scheduler::pod*> candidates;
  std::vector<std::size_t> candidate_members;
  for (std::size_t i = 0; i < st.members.size(); ++i)
    if (st.members[i].status == member_status::pending) {
      candidates.push_back(st.members[i].ref.pod.get());
      candidate_members.push_back(i);
    }
  auto counts = count_members(st);
  auto request = request_for(st, candidates);

  if (candidates.empty()) {
    finish_slot(self, plan_outcome::nothing_to_do);
    if (st.machine.was_ready()) {
      transition(self, gang_phase::running);
      settle(self);  // Its last pods may have ended while it waited for the slot.
    } else {
      transition(self, gang_phase::backoff);
      st.waiting_for_pods = true;
    }
    return;
  }
  if (request.min_pods > static_cast<int32_t>(candidates.size())) {
    // Fewer pods exist than the gang needs: no resources can help; wait for the pods. A gang that
    // was ready waits running, as after any failed round, so it still completes when its pods
    // end (a gang restarted after pods failed lands here).
    finish_slot(self, plan_outcome::nothing_to_do);
    if (st.machine.was_ready()) {
      transition(self, gang_phase::running);
      settle(self);
      if (st.machine.phase() == gang_phase::completed)
        return;
    } else {
      transition(self, gang_phase::backoff);
      st.waiting_for_pods = true;
    }
    auto missing = request.min_pods - static_cast<int32_t>(candidates.size());
    report(self,
           "pod group is not ready: " + std::to_string(counts.total) + " pods exist, " +
               std::to_string(counts.ready()) + " ready, minMember " +
               std::to_string(st.group->min_member) + "; waiting for " +
               std::to_string(missing) + " more pod(s) to be created",
           "NotEnoughPods");
    return;
  }

  // A gang with a reservation sees the room its nodes keep from the others as its own.
  std::optional<reserving_gang_view> own_view;
  if (st.reservation)
    own_view.emplace(*st.ctx->view, st.id);
  const scheduler::node_view& view =
      own_view ? static_cast<const scheduler::node_view&>(*own_view) : *st.ctx->view;
  auto plan = planner_for(*st.ctx).plan(view, request, st.random);
  if (plan.code != scheduler::plan_code::success) {
    on_plan_failure(self, std::move(plan), request, std::move(candidate_members));
    return;
  }
  if (plan.placements.empty()) {
    // A ready gang with no room for its extra pods now. They say so: a pending pod without a
    // reason reads as not tried yet (the registry's deadlock report waits for one).
    // The pods get the planner's count of reasons, as the pods of a gang that cannot start do.
    finish_slot(self, plan_outcome::unschedulable);
    leave_failed_round(self);
    std::string why = "no node has room for the " + std::to_string(candidates.size()) +
                      " pod(s) beyond the gang's minimum now";
    if (!plan.detail.empty())
      why += " (" + plan.detail + ")";
    report(self, why + "; they are placed when room appears", "NotEnoughResources",
           plan.origin.empty() ? std::string() : plan.origin.to_string());
    return;
  }

  std::vector<std::pair<std::size_t, uint32_t>> placements;
  placements.reserve(plan.placements.size());
  for (const auto& p : plan.placements)
    placements.emplace_back(candidate_members[p.pod], static_cast<uint32_t>(p.node));
  start_round(self, placements, {});
}

// Starts a reserve round: one reserve per node, for these (member, node) placements. `victims`
// (a preemptor's round) names per node the pods evicted for it there.
void start_round(self_ptr self, const std::vector<std::pair<std::size_t, uint32_t>>& placements,
                 std::unordered_map<uint32_t, std::vector<uint64_t>> victims) {
  auto& st = self->state;
  ++st.round;
  scheduler::txn_id txn{st.id, st.round};
  auto ticket = scheduler::make_ticket(*st.group, st.share);
  // Only the last attempt of a slot waits for younger holds: those commit more often than not,
  // after their bindings' synced write, and then the room is gone anyway. Before that, a refusal
  // and an immediate replan against the view, which shows those holds by now, is faster. The
  // last attempt still waits, so the oldest gang keeps its right of way (wait-die).
  const bool may_wait = st.replans >= st.ctx->config.scheduling.max_replans;
  std::unordered_map<uint32_t, pod_refs> per_node;
  st.round_members.clear();
  if (victims.empty())
    st.preemption.reset();
  for (const auto& [member, node] : placements) {
    st.members[member].status = member_status::reserving;
    st.members[member].node = node;
    per_node[node].push_back(st.members[member].ref);
    st.round_members[node].push_back(member);
  }
  std::vector<uint32_t> nodes;
  nodes.reserve(per_node.size());
  for (const auto& [node, items] : per_node)
    nodes.push_back(node);
  st.tally.start(txn, nodes);
  transition(self, gang_phase::preparing);
  st.ctx->metrics->reserve_rounds.inc();
  if (rounds_logged()) {
    std::size_t victim_count = 0;
    for (const auto& [node, pods] : victims)
      victim_count += pods.size();
    oplog::debug("round planned")
        .kv("gang", gang_key(self))
        .kv("round", st.round)
        .kv("pods", static_cast<uint64_t>(placements.size()))
        .kv("nodes", static_cast<uint64_t>(nodes.size()))
        .kv("victims", static_cast<uint64_t>(victim_count))
        .kv("attempt", st.replans + 1)
        .kv("waits_for_younger", may_wait);
  }
  for (auto& [node, items] : per_node) {
    auto handle = st.ctx->nodes->at(node);
    if (!handle) {
      // The node went away between planning and now: treat as a refusal.
      st.tally.record(node, scheduler::vote_kind::refused_conflict);
      continue;
    }
    // Planners that run before the node reads this see the room as taken already.
    scheduler::resources asked;
    if (st.ctx->config.scheduling.count_reserves_in_flight) {
      asked = total_requests(items);
      st.ctx->view->add_in_flight(node, asked);
    }
    reserve_request req{txn, ticket, std::move(items), std::move(asked), may_wait, {}};
    if (auto v = victims.find(node); v != victims.end() && !v->second.empty()) {
      auto& p = *st.preemption;  // An offer's round: made by on_plan_failure.
      p.victim_nodes.push_back(node);
      p.round_victims.insert(p.round_victims.end(), v->second.begin(), v->second.end());
      req.victims = std::move(v->second);
    }
    self->send(handle, reserve_atom::value, std::move(req), gang_actor{self});
  }
  // Victims on nodes where none of its pods goes: the rest of a victim gang evicted whole
  // (the gang rule), evicted with the others; their room is no node's hold, so anyone's.
  for (auto& [node, pods] : victims)
    if (!pods.empty() && !per_node.count(node)) {
      auto& p = *st.preemption;
      p.round_victims.insert(p.round_victims.end(), pods.begin(), pods.end());
    }
  if (st.tally.state() == scheduler::vote_tally::result_kind::refused) {
    abort_round(self);
    finish_slot(self, plan_outcome::refused);
    leave_failed_round(self);
  }
}

bool victims_gone(const gang_actor_state& st) {
  if (!st.preemption)
    return true;
  const auto& p = *st.preemption;
  return std::all_of(p.victim_nodes.begin(), p.victim_nodes.end(), [&](uint32_t n) {
    return std::find(p.cleared_nodes.begin(), p.cleared_nodes.end(), n) != p.cleared_nodes.end();
  });
}

void on_all_reserved(self_ptr self) {
  auto& st = self->state;
  if (st.preemption && !st.preemption->evicting && !st.preemption->round_victims.empty()) {
    auto& p = *st.preemption;
    // Every node holds the victims' room for this gang: they are evicted now, and the round
    // goes on once each node says they are gone. The slot is free meanwhile (a Kubernetes pod
    // may take its grace period to go).
    p.evicting = true;
    st.slot_finished = true;
    finish_slot(self, plan_outcome::bound);
    eviction_order order;
    order.gang = st.id;
    order.victims = p.round_victims;
    order.reclaim = p.reclaim;
    for (const auto& [node, indices] : st.round_members)
      for (auto i : indices)
        if (!st.members[i].placeholder)
          order.nominated.emplace_back(st.members[i].ref.id, node);
    self->send(st.sink, evict_atom::value, std::move(order));
    st.ctx->metrics->pods_evicted.inc(p.round_victims.size());
    report(self,
           std::string(p.reclaim ? "reclaiming: " : "preempting: ") +
               std::to_string(p.round_victims.size()) +
               (p.reclaim
                    ? " pod(s) of queues above their deserved shares are evicted on "
                    : " pod(s) of lower priority in its queue are evicted on ") +
               std::to_string(p.victim_nodes.size()) +
               " node(s); the gang is placed once they are gone",
           "Preempting");
    self->delayed_send(self, st.ctx->config.scheduling.preemption_wait, evict_atom::value,
                       st.round);
  }
  if (!victims_gone(st))
    return;  // Each node with victims says `cleared` once they are gone.
  st.preemption.reset();  // Its victims are gone: the round goes on as any other.
  if (rounds_logged())
    oplog::debug("round reserved")
        .kv("gang", gang_key(self))
        .kv("round", st.round)
        .kv("nodes", static_cast<uint64_t>(st.round_members.size()));
  st.ctx->metrics->gang_placed_seconds.observe(
      std::chrono::duration<double>(self->clock().now() - st.slot_granted).count());
  transition(self, gang_phase::committing);
  // The planning slot is free; committing needs none.
  if (!std::exchange(st.slot_finished, true))
    finish_slot(self, plan_outcome::bound);
  binding_request req;
  req.gang = st.id;
  req.txn = st.tally.txn();
  for (const auto& [node, indices] : st.round_members)
    for (auto i : indices)
      if (!st.members[i].placeholder)  // Placeholders are never bound nor persisted.
        req.bindings.push_back({st.members[i].ref.id, node, 0, nullptr});
  self->send(st.sink, bind_gang_atom::value, std::move(req), gang_actor{self});
}

void on_refused(self_ptr self) {
  auto& st = self->state;
  st.ctx->metrics->reserve_refusals.inc();
  if (rounds_logged())
    oplog::debug("round refused")
        .kv("gang", gang_key(self))
        .kv("round", st.round)
        .kv("attempt", st.replans + 1)
        .kv("replans_left", st.ctx->config.scheduling.max_replans - st.replans);
  abort_round(self);
  if (st.replans < st.ctx->config.scheduling.max_replans) {
    ++st.replans;
    transition(self, gang_phase::planning);
    plan_round(self);
    return;
  }
  finish_slot(self, plan_outcome::refused);
  leave_failed_round(self);
}

void on_round_committed(self_ptr self) {
  auto& st = self->state;
  usage_delta delta;
  delta.gang = st.id;
  int64_t pods = 0;
  for (const auto& [node, indices] : st.round_members)
    for (auto i : indices) {
      auto& m = st.members[i];
      if (m.status != member_status::reserving)
        continue;  // Deleted after its binding was durable: the registry released it already.
      m.status = member_status::bound;
      delta.added += m.ref.pod->requests;
      if (!m.placeholder)
        ++pods;
    }
  st.round_members = {};  // Frees its buckets too: a running gang may never plan again.
  st.ctx->metrics->pods_scheduled.inc(static_cast<uint64_t>(pods));
  st.ctx->metrics->gangs_scheduled.inc();
  const std::chrono::duration<double> decision = self->clock().now() - st.slot_granted;
  st.ctx->metrics->gang_decision_seconds.observe(decision.count());
  if (rounds_logged())
    oplog::debug("round committed")
        .kv("gang", gang_key(self))
        .kv("round", st.round)
        .kv("pods", pods)
        .kv("decision_ms", decision.count() * 1e3);
  self->send(st.queue, usage_atom::value, std::move(delta));
  st.backoff = std::chrono::milliseconds{0};
  // Ready: the room it reserved is used (its nodes that took pods ended the reservation at the
  // commit) or not needed.
  give_back_reservation(self);
  st.blocked_since = {};
  transition(self, gang_phase::running);
  report(self);
  // Pods created during the round take over placeholders; the rest (elastic extras) try again
  // when room appears.
  settle(self);
  start_swaps(self);
  if (has_pending(st))
    register_waiting(self);
}

void maybe_complete(self_ptr self) {
  auto& st = self->state;
  if (st.machine.phase() != gang_phase::running || st.swapping)
    return;
  auto c = count_members(st);
  if (c.total > 0 && c.pending == 0 && c.bound == 0) {
    release_placeholders(self, 0);
    transition(self, gang_phase::completed);
    self->send(st.queue, removed_atom::value, st.id);
    report(self);
  }
}

// Pending pods that no placeholder fits (sized or placed wrong for them) give back the room of an
// unclaimed placeholder of their role or of none, so they can be placed like any pod instead of
// waiting for room the placeholder keeps.
void release_unusable_placeholders(self_ptr self) {
  auto& st = self->state;
  std::unordered_map<uint32_t, std::vector<uint64_t>> per_node;
  usage_delta delta;
  delta.gang = st.id;
  for (const auto& pod : st.members) {
    if (pod.placeholder || pod.status != member_status::pending)
      continue;
    for (auto& ph : st.members) {
      if (!ph.placeholder || ph.status != member_status::bound || ph.claimed ||
          (!ph.ref.pod->role.empty() && ph.ref.pod->role != pod.ref.pod->role))
        continue;
      ph.status = member_status::finished;
      per_node[ph.node].push_back(ph.ref.id);
      delta.removed += ph.ref.pod->requests;
      break;
    }
  }
  for (auto& [node, ids] : per_node)
    if (auto handle = st.ctx->nodes->at(node))
      self->send(handle, release_atom::value, std::move(ids));
  if (!delta.removed.is_zero())
    self->send(st.queue, usage_atom::value, std::move(delta));
}

// Pending pods take over bound placeholders that fit them (scheduler::pick_placeholder): their
// bindings are made durable first, then each node swaps (on_swaps_committed). One swap at a time.
void start_swaps(self_ptr self) {
  auto& st = self->state;
  if (st.swapping)
    return;
  std::vector<scheduler::placeholder_slot> slots;
  std::vector<std::size_t> slot_members;
  for (std::size_t i = 0; i < st.members.size(); ++i) {
    const auto& m = st.members[i];
    if (m.placeholder && m.status == member_status::bound && !m.claimed) {
      slots.push_back({m.ref.pod.get(), &st.ctx->view->at(m.node)});
      slot_members.push_back(i);
    }
  }
  if (slots.empty())
    return;
  binding_request req;
  req.gang = st.id;
  st.swap_members.clear();
  // A swap is decided here and made durable before its node sees it, so no vote checks the
  // rules between pods (scheduler/pod_neighbourhood.hpp) for it. A pod with such rules, or any
  // pod while some pod in the cluster keeps others away, is placed like any pod instead: the
  // placeholder it would have taken is released (release_unusable_placeholders below).
  const bool others_keep_away = st.ctx->view->anti_affinity_pods() > 0;
  for (std::size_t i = 0; i < st.members.size() && !slots.empty(); ++i) {
    auto& m = st.members[i];
    if (m.placeholder || m.status != member_status::pending)
      continue;
    if (others_keep_away || scheduler::has_neighbour_rules(*m.ref.pod))
      continue;
    auto pick = scheduler::pick_placeholder(*m.ref.pod, slots);
    if (!pick)
      continue;
    auto ph = slot_members[*pick];
    st.members[ph].claimed = true;
    m.status = member_status::reserving;
    m.node = st.members[ph].node;
    m.takes_over = ph;
    st.swap_members.push_back(i);
    req.bindings.push_back({m.ref.id, m.node, st.members[ph].ref.id, m.ref.pod});
    slots.erase(slots.begin() + static_cast<std::ptrdiff_t>(*pick));
    slot_members.erase(slot_members.begin() + static_cast<std::ptrdiff_t>(*pick));
  }
  release_unusable_placeholders(self);
  if (st.swap_members.empty())
    return;
  st.swapping = true;
  st.swap_nodes_pending = 0;
  st.swap_txn = scheduler::txn_id{st.id, ++st.round};
  req.txn = st.swap_txn;
  self->send(st.sink, bind_gang_atom::value, std::move(req), gang_actor{self});
}

// Undoes the claims of the swap under way (its bindings could not be made durable).
void cancel_swaps(gang_actor_state& st) {
  for (auto i : st.swap_members) {
    auto& m = st.members[i];
    st.members[m.takes_over].claimed = false;
    m.takes_over = SIZE_MAX;
    if (m.status == member_status::reserving)
      m.status = member_status::pending;
  }
  st.swap_members.clear();
  st.swapping = false;
}

// The swap's bindings are durable: every node turns placeholders into pods.
// The swaps' bindings are durable, and the registry told each node to swap its pods into their
// placeholders' room (commit_durable_round): count the nodes whose answer is awaited.
void await_swaps(self_ptr self) {
  auto& st = self->state;
  std::unordered_set<uint32_t> nodes;
  for (auto i : st.swap_members)
    nodes.insert(st.members[i].node);
  st.swap_nodes_pending = nodes.size();
}

void maybe_complete(self_ptr self);
void want_scheduling(self_ptr self);

void on_swaps_committed(self_ptr self) {
  auto& st = self->state;
  usage_delta delta;
  delta.gang = st.id;
  for (auto i : st.swap_members) {
    auto& m = st.members[i];
    auto& ph = st.members[m.takes_over];
    ph.status = member_status::finished;
    ph.claimed = false;
    delta.removed += ph.ref.pod->requests;
    m.takes_over = SIZE_MAX;
    if (m.status == member_status::reserving) {
      m.status = member_status::bound;
      delta.added += m.ref.pod->requests;
    } else if (m.status == member_status::finished) {
      // Deleted while its swap ran: the node committed it; return its room there.
      if (auto handle = st.ctx->nodes->at(m.node))
        self->send(handle, release_atom::value, std::vector<uint64_t>{m.ref.id});
    }
  }
  st.ctx->metrics->pods_scheduled.inc(st.swap_members.size());
  st.swap_members.clear();
  st.swapping = false;
  self->send(st.queue, usage_atom::value, std::move(delta));
  settle(self);
  report(self);
  want_scheduling(self);
}

// After members changed: placeholders nobody needs any more go, and a gang whose pods all ended
// completes. A placeholder is needed while the gang's ready pods (bound or succeeded) and the
// pods taking over placeholders fall short of minMember. Call it wherever members finish, bind,
// or a round or swap ends.
void settle(self_ptr self) {
  auto& st = self->state;
  if (st.machine.was_ready() && !st.swapping) {
    int32_t covered = 0;
    for (const auto& m : st.members)
      if (!m.placeholder && (m.status == member_status::bound ||
                             (m.status == member_status::finished &&
                              m.final_phase == scheduler::pod_phase::succeeded)))
        ++covered;
    release_placeholders(self, std::max(0, st.group->min_member - covered));
  }
  maybe_complete(self);
}

void add_members(self_ptr self, pod_refs& pods) {
  auto& st = self->state;
  for (auto& ref : pods) {
    if (auto* known = find_member(st, ref.id)) {
      known->ref.pod = std::move(ref.pod);  // A newer version of a known pod.
      continue;
    }
    gang_actor_state::member m;
    m.ref = std::move(ref);
    st.members_joined = true;
    if (m.ref.pod->is_bound()) {
      // Restart: a persisted binding. The node actor adopted it already.
      if (scheduler::is_terminal(m.ref.pod->phase)) {
        m.status = member_status::finished;
        m.final_phase = m.ref.pod->phase;
      } else {
        m.status = member_status::bound;
      }
    } else if (scheduler::is_terminal(m.ref.pod->phase)) {
      m.status = member_status::finished;
      m.final_phase = m.ref.pod->phase;
    }
    // New pods nearly always come with higher ids than the members before them (the registry
    // counts up), so this appends.
    std::pair<uint64_t, uint32_t> entry{m.ref.id, static_cast<uint32_t>(st.members.size())};
    st.member_index.insert(
        std::lower_bound(st.member_index.begin(), st.member_index.end(), entry), entry);
    st.members.push_back(std::move(m));
  }
}

// After pods arrived or finished: take over placeholders, else decide whether to ask for a slot.
void want_scheduling(self_ptr self) {
  auto& st = self->state;
  start_swaps(self);
  if (!has_pending(st)) {
    // A PodGroup whose pods have not come yet still asks its queue for admission, as Volcano's
    // enqueue admits PodGroups whatever their pods: Volcano's job controller makes a job's pods
    // only once its PodGroup is Inqueue. Admitted, it claims its minResources at the gate and
    // waits for its pods (plan_round, waiting_for_pods).
    if (st.admit_before_pods && st.members.empty() && st.machine.phase() == gang_phase::pending &&
        !st.admitted && !st.registered && gang_mode(st))
      register_waiting(self);
    return;
  }
  if (st.swapping && bound_placeholders(st) > 0)
    return;  // The swap's end offers the placeholders left to the pods still pending.
  switch (st.machine.phase()) {
    case gang_phase::pending:
    case gang_phase::running:
      register_waiting(self);
      break;
    case gang_phase::backoff:
      if (st.waiting_for_pods) {
        st.waiting_for_pods = false;
        transition(self, st.admitted ? gang_phase::inqueue : gang_phase::pending);
        register_waiting(self);
      }
      break;
    default:
      break;  // Inqueue or mid-round: the next round sees the new pods.
  }
}

// Idle: nothing a message from a node, the queue or a timer could still be for (no round, no
// swap, not waiting at the queue) and nothing the pods do not record (no pending pod, no
// placeholder holding room). What the actor knows is then exactly what its pods say, so a new
// actor started from them (the restart path) takes over where this one stopped.
bool parkable(const gang_actor_state& st) {
  auto phase = st.machine.phase();
  // A completed gang may still count as registered (a pending pod was deleted while it waited for
  // a slot): its queue forgot it on completion, dropping any slot it had granted.
  if ((phase != gang_phase::running && phase != gang_phase::completed) || st.swapping ||
      (st.registered && phase != gang_phase::completed) || st.commits_pending > 0)
    return false;
  // A completed gang released its bound placeholders; unplaced ones hold nothing.
  bool completed = phase == gang_phase::completed;
  return std::all_of(st.members.begin(), st.members.end(), [completed](const auto& m) {
    return m.status == member_status::finished || (completed && m.placeholder) ||
           (m.status == member_status::bound && !m.placeholder);
  });
}

} // namespace

gang_actor::behavior_type gang_actor_impl(self_ptr self, context_ptr ctx, uint64_t id,
                                          pod_group_ptr group, pod_refs pods, queue_actor queue,
                                          gang_sink_actor sink, gang_start start) {
  auto& st = self->state;
  st.ctx = std::move(ctx);
  st.id = id;
  st.group = std::move(group);
  st.queue = std::move(queue);
  st.sink = std::move(sink);
  st.random.seed(st.ctx->config.seed ^ (id * 0x9E3779B97F4A7C15ULL));
  st.admit_before_pods = start == gang_start::before_its_pods;
  add_members(self, pods);
  // A gang restored with bound pods was running: bindings are persisted for whole gangs only.
  // Its placeholders were not persisted (like holds): it reserves them again at once, and, being
  // older than anything created after the restart, gets the room they held first.
  auto c = count_members(st);
  const bool ran = c.bound + c.succeeded + c.failed > 0;
  // A woken gang's queue still counts what its parked actor reported, even when every pod has
  // been deleted since: its usage now replaces that.
  if (ran || start == gang_start::woken) {
    usage_delta delta;
    delta.gang = id;
    delta.whole = true;
    for (const auto& m : st.members)
      if (m.status == member_status::bound)
        delta.added += m.ref.pod->requests;
    self->send(st.queue, usage_atom::value, std::move(delta));
  }
  if (ran) {
    st.admitted = true;
    st.machine.restore_running().permit_unchecked();
    // A woken gang held no placeholder when it was parked (parkable): like the actor before
    // it, it keeps room for no pod that failed or was deleted since it was ready.
    if (start == gang_start::fresh && gang_mode(st) && c.ready() < st.group->min_member &&
        c.bound > 0) {
      refresh_placeholders(st);
      if (std::any_of(st.members.begin(), st.members.end(), [](const auto& m) {
            return m.placeholder && m.status == member_status::pending;
          }))
        register_waiting(self);
    }
    maybe_complete(self);
  }
  report(self);
  want_scheduling(self);

  return {
    [self](vote_atom, vote& v) {
      auto& st = self->state;
      if (st.machine.phase() != gang_phase::preparing || v.txn != st.tally.txn())
        return;  // A vote of an earlier round: that round was aborted already.
      if (oplog::enabled(spdlog::level::trace))
        oplog::trace("vote")
            .kv("gang", gang_key(self))
            .kv("round", v.txn.round)
            .kv("node", st.ctx->view->at(v.node).meta.name.view())
            .kv("vote", scheduler::to_string(v.kind));
      switch (st.tally.record(v.node, v.kind)) {
        case scheduler::vote_tally::result_kind::pending:
          break;
        case scheduler::vote_tally::result_kind::all_reserved:
          on_all_reserved(self);
          break;
        case scheduler::vote_tally::result_kind::refused:
          on_refused(self);
          break;
      }
    },
    [self](committed_atom, scheduler::txn_id txn, uint32_t) {
      auto& st = self->state;
      if (st.swapping && txn == st.swap_txn) {
        if (st.swap_nodes_pending > 0 && --st.swap_nodes_pending == 0)
          on_swaps_committed(self);
        return;
      }
      if (st.machine.phase() != gang_phase::committing || txn != st.tally.txn() ||
          st.commits_pending == 0)
        return;
      if (--st.commits_pending == 0)
        on_round_committed(self);
    },
    [self](admission_atom, admission& a) {
      auto& st = self->state;
      if (a.held_back) {
        report(self, a.reason, "QueueOverused");
        return;
      }
      if (!a.admitted) {
        report(self, "pod group is pending admission: " + a.reason, "Admission");
        return;
      }
      if (st.admitted)
        return;
      st.admitted = true;
      if (st.machine.phase() == gang_phase::pending)
        transition(self, gang_phase::inqueue);
      report(self);
    },
    [self](plan_atom, scheduler::ratio share) {
      auto& st = self->state;
      st.registered = false;
      auto phase = st.machine.phase();
      if (phase != gang_phase::inqueue && phase != gang_phase::running) {
        finish_slot(self, plan_outcome::nothing_to_do);
        return;
      }
      st.share = share;
      st.replans = 0;
      st.asked_this_slot = false;
      st.slot_finished = false;
      st.slot_granted = self->clock().now();
      transition(self, gang_phase::planning);
      plan_round(self);
    },
    [self](bound_atom, bound_result& r) {
      auto& st = self->state;
      if (st.swapping && r.txn == st.swap_txn) {
        if (st.swap_nodes_pending > 0)
          return;  // A duplicate: the swap is already under way on the nodes.
        if (r.outcome.ok()) {
          await_swaps(self);
        } else {
          cancel_swaps(st);
          settle(self);
          want_scheduling(self);
        }
        return;
      }
      if (st.machine.phase() != gang_phase::committing || r.txn != st.tally.txn())
        return;
      if (!r.outcome.ok()) {
        // Not durable (a pod was deleted meanwhile, or the store failed): nothing may commit.
        abort_round(self);
        report(self, "binding failed: " + r.outcome.message(), "BindFailed");
        leave_failed_round(self);
        return;
      }
      // The registry told every node holding a pod of the round to commit it as soon as the
      // bindings were durable (commit_durable_round): it must happen even if this actor ends
      // now. Only nodes that hold nothing but placeholders, which are never bound, are this
      // actor's to tell. Each node answers once.
      st.commits_pending = st.tally.nodes().size();
      for (auto node : st.tally.nodes()) {
        auto members = st.round_members.find(node);
        bool has_pods = members != st.round_members.end() &&
                        std::any_of(members->second.begin(), members->second.end(),
                                    [&](std::size_t i) { return !st.members[i].placeholder; });
        if (has_pods)
          continue;
        if (auto handle = st.ctx->nodes->at(node))
          self->send(handle, commit_atom::value, st.tally.txn());
      }
    },
    [self](pods_atom, pod_refs& pods) {
      ++self->state.heard_from_registry;
      add_members(self, pods);
      want_scheduling(self);
    },
    [self](finished_atom, const std::vector<pod_outcome>& outcomes) {
      auto& st = self->state;
      ++st.heard_from_registry;
      usage_delta delta;
      delta.gang = st.id;
      for (const auto& o : outcomes) {
        auto* found = find_member(st, o.pod);
        if (!found)
          continue;
        auto& m = *found;
        if (m.status == member_status::finished)
          continue;
        if (m.status == member_status::bound)
          delta.removed += m.ref.pod->requests;
        m.status = member_status::finished;  // A pod in a reserve round: its bind will fail.
        m.final_phase = o.deleted ? scheduler::pod_phase::failed : o.phase;
      }
      if (!delta.removed.is_zero())
        self->send(st.queue, usage_atom::value, std::move(delta));
      settle(self);
    },
    [self](wake_atom) {
      // The queue holds its slots until each woken gang says whether it waits for one.
      try_again(self);
      if (!self->state.registered)
        self->send(self->state.queue, woken_atom::value, self->state.id);
    },
    [self](retry_atom, uint64_t epoch) {
      if (epoch == self->state.backoff_epoch)
        try_again(self);
    },
    [self](spec_atom, pod_group_ptr group) { self->state.group = std::move(group); },
    [self](offer_atom, preemption_offer& offer) { on_offer(self, std::move(offer)); },
    [self](cleared_atom, scheduler::txn_id txn, uint32_t node) {
      auto& st = self->state;
      if (st.machine.phase() != gang_phase::preparing || txn != st.tally.txn() ||
          !st.preemption)
        return;
      auto& p = *st.preemption;
      if (std::find(p.victim_nodes.begin(), p.victim_nodes.end(), node) ==
              p.victim_nodes.end() ||
          std::find(p.cleared_nodes.begin(), p.cleared_nodes.end(), node) !=
              p.cleared_nodes.end())
        return;
      p.cleared_nodes.push_back(node);
      if (p.evicting && victims_gone(st))
        on_all_reserved(self);
    },
    [self](room_atom, uint32_t node, bool granted) { on_room_answer(self, node, granted); },
    [self](evict_atom, uint32_t round) {
      // The victims did not all go within scheduling.preemptionWait: the room they freed goes
      // back to everyone, and the gang tries again later.
      auto& st = self->state;
      if (!st.preemption || !st.preemption->evicting || round != st.round ||
          st.machine.phase() != gang_phase::preparing)
        return;
      abort_round(self);
      leave_failed_round(self);
      report(self,
             "preempting: the evicted pods did not all go within " +
                 std::to_string(st.ctx->config.scheduling.preemption_wait.count()) +
                 " ms; the gang gives their room back and tries again",
             "NotEnoughResources");
    },
    [self](idle_atom) {
      // The registry heard nothing of this gang for a while: if it is idle, it asks to be parked.
      auto& st = self->state;
      if (parkable(st))
        self->send(st.sink, park_atom::value, st.id, st.heard_from_registry, gang_actor{self});
    },
    [self](park_atom) {
      // Granted: the registry forgot this actor and answers for the gang until it wakes it.
      if (!parkable(self->state))
        oplog::error("gang parked while not idle")
            .kv("gang",
                self->state.group->meta.namespace_name + "/" + std::string(gang_name(self)));
      assert(parkable(self->state) && "a busy gang was parked");
      self->quit();
    },
    [self](inspect_atom) {
      auto& st = self->state;
      auto c = count_members(st);
      gang_snapshot snap;
      snap.gang = st.id;
      snap.phase = st.machine.phase();
      snap.bound = c.bound;
      snap.pending = c.pending;
      snap.finished = c.succeeded + c.failed;
      snap.rounds = static_cast<int32_t>(st.round);
      for (const auto& m : st.members)
        if (m.placeholder && m.status == member_status::bound)
          snap.placeholders.push_back({m.ref.id, m.ref.pod->meta.name.str(), m.ref.pod->role.str(),
                                       m.node, m.ref.pod->requests});
      return snap;
    },
  };
}

} // namespace phalanx::actors
