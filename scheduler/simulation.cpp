#include "scheduler/simulation.hpp"

#include "scheduler/fair_share.hpp"
#include "scheduler/gang_book.hpp"
#include "scheduler/preemption.hpp"
#include "scheduler/queue_book.hpp"
#include "scheduler/quantity.hpp"
#include "scheduler/room_reservation.hpp"
#include "scheduler/sla.hpp"
#include "scheduler/validation.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>

namespace phalanx::scheduler {

std::string_view to_string(sim_policy p) noexcept {
  switch (p) {
    case sim_policy::pod_by_pod:
      return "pod-by-pod";
    case sim_policy::gang_fifo:
      return "gang-fifo";
    case sim_policy::volcano_like:
      return "volcano-like";
    case sim_policy::phalanx:
      return "phalanx";
  }
  return "unknown";
}

std::string_view to_string(sim_job_phase p) noexcept {
  switch (p) {
    case sim_job_phase::pending:
      return "Pending";
    case sim_job_phase::running:
      return "Running";
    case sim_job_phase::completed:
      return "Completed";
    case sim_job_phase::deadlocked:
      return "Deadlocked";
  }
  return "Unknown";
}

namespace {

constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
static_assert(npos == gang_book::no_role, "a pod without a role minimum has role npos");
constexpr uint64_t never = std::numeric_limits<uint64_t>::max();

// Where a pod is in its life. Placement and creation are independent in the gang policies: a
// pod may be placed (reserved) before it exists.
enum class pod_state : uint8_t {
  not_created,  // Does not exist yet; not placed.
  reserved,     // Does not exist yet; placed (a placeholder holds its node's resources).
  pending,      // Exists; not placed.
  bound,        // Exists and placed; goes Running after the start delay.
  running,
  succeeded,
};

bool holds_resources(pod_state s) noexcept {
  return s == pod_state::reserved || s == pod_state::bound || s == pod_state::running;
}

bool is_unplaced(pod_state s) noexcept {
  return s == pod_state::not_created || s == pod_state::pending;
}

// How many pods of `request` fit in `free`, ignoring constraints: an upper bound. Reads the
// fields directly: this runs for every released node on hot paths.
int64_t fit_count(const resources& free, const resources& request) {
  int64_t count = std::numeric_limits<int64_t>::max();
  auto dimension = [&](int64_t available, int64_t amount) {
    if (amount > 0)
      count = std::min(count, std::max<int64_t>(0, available) / amount);
  };
  dimension(free.cpu_milli, request.cpu_milli);
  dimension(free.memory_bytes, request.memory_bytes);
  dimension(free.ephemeral_bytes, request.ephemeral_bytes);
  dimension(free.pods, request.pods);
  for (const auto& e : request.extended())
    dimension(free.get(e.name), e.amount);
  return count == std::numeric_limits<int64_t>::max() ? 0 : count;
}

// A total order on amounts, for grouping pods by shape.
bool resources_less(const resources& a, const resources& b) {
  auto ka = std::tie(a.cpu_milli, a.memory_bytes, a.ephemeral_bytes, a.pods);
  auto kb = std::tie(b.cpu_milli, b.memory_bytes, b.ephemeral_bytes, b.pods);
  if (ka != kb)
    return ka < kb;
  return std::lexicographical_compare(
      a.extended().begin(), a.extended().end(), b.extended().begin(), b.extended().end(),
      [](const extended_amount& x, const extended_amount& y) {
        return std::tie(x.name, x.amount) < std::tie(y.name, y.amount);
      });
}

// How far a job got. Transitions only move forward.
enum class job_stage : uint8_t {
  waiting,    // Not arrived.
  pending,    // Arrived; phalanx: not admitted by the gate yet.
  inqueue,    // Gang policies: admitted (phalanx) or arrived (gang_fifo); not started.
  started,    // Gang policies: minMember placed.
  completed,
};

struct pod_runtime {
  pod_state state = pod_state::not_created;
  std::size_t node = npos;
  std::size_t role = npos;     // Its gang_book::role_index (npos is gang_book::no_role).
  std::size_t shape = npos;    // pod_by_pod: index of its pod class.
  int32_t children_left = 0;   // Spawned pods that have not succeeded yet.
  bool own_done = false;       // run_time elapsed.
  bool timer_armed = false;
  // Bumped when the pod is evicted: its pending start and timer events are then stale.
  uint32_t generation = 0;
  duration placed_at{};      // When it was last placed.
  duration running_since{};  // When it last went Running.
};

// Why a planning attempt is known to fail again without calling the planner. The planner is
// deterministic and monotone in free resources: what failed fails again until some node gets
// more room, and only releases give room.
struct failure_memo {
  uint64_t epoch = never;  // The release epoch of the last failure.
  uint64_t pass = never;   // The pass of the last failure.
  // Single-shape work: an upper bound on how many of its pods the cluster could take at the last
  // failure (ignoring constraints), raised by every release seen since.
  int64_t capacity = 0;
};

struct job_runtime {
  sim_job spec;
  std::size_t queue = 0;
  job_stage stage = job_stage::waiting;
  std::vector<pod_runtime> pods;
  std::vector<std::vector<std::size_t>> children;
  // Its pods placed and not evicted since (reserved, bound, running or succeeded), by role: what
  // counts toward its minimum, as the live gang's ready members do (scheduler/gang_book.hpp).
  gang_book placed;
  int32_t holding = 0;  // Pods holding resources now.
  int32_t running = 0;
  int32_t succeeded = 0;
  resources allocated;  // Requests of the pods holding resources.
  std::optional<duration> ready_at;        // This run's start (reset by a restart).
  std::optional<duration> first_ready_at;  // The first run's start.
  std::optional<duration> completed_at;
  // phalanx: the first pass after admission that could not place its minimum. The starvation
  // bound counts from here: counted from arrival, a gang that waited at the gate would reserve
  // the moment it is admitted.
  std::optional<duration> blocked_since;
  // phalanx: the nodes it reserved as a starving gang (kept after the reservation ended, for the
  // result), whether it holds them now, since when, and the sentence its reason ends with.
  std::vector<std::size_t> reserved_nodes;
  bool reserving = false;
  std::optional<duration> reserved_at;
  std::string reservation_note;
  // reservation_ends_ when it last found no node to reserve.
  uint64_t no_nodes_at = never;
  failure_memo gang_failure;    // Placing the gang's minimum.
  failure_memo extras_failure;  // Placing one extra pod.
  // phalanx gate: the refusal, valid while no release and no claim change happened since.
  uint64_t refused_epoch = never;
  uint64_t refused_claims = never;
  admission_code refusal = admission_code::admitted;
  bool unresolvable = false;
  bool touched = false;  // Placed or lost something since the last I3 check.
  // Preemption: its last failed ask, valid while no release and no placement in its queue
  // happened since (more room and more candidates are the only things that can help it).
  uint64_t preempt_epoch = never;
  uint64_t preempt_placements = never;
  std::string preemption_note;  // Why its last ask found no plan.
  // Reclaim: its last failed ask, valid while no release, no placement in any queue and no
  // arrival happened since (see reclaim_for).
  uint64_t reclaim_epoch = never;
  uint64_t reclaim_placements = never;
  uint64_t reclaim_arrivals = never;
  std::string reclaim_note;  // Why its last reclaim found no plan.
  int32_t evicted_pods = 0;
  int32_t restarts = 0;
  int64_t wasted_gpu_ms = 0;
  int32_t reclaim_evicted_pods = 0;
  int64_t reclaim_wasted_gpu_ms = 0;
  int32_t preempted_pods = 0;
  int32_t reclaimed_pods = 0;
  // Every pod has the same requests, constraints and role: the cheap checks can count pods.
  bool one_shape = false;
  std::string reason;
};

// pod_by_pod: pending pods of one shape (priority, constraints, requests) in FIFO order. When the
// oldest cannot be placed, none of them can.
struct pod_shape {
  int32_t priority = 0;
  const placement_constraints* constraints = nullptr;
  resources requests;
  failure_memo failure;
  bool unresolvable = false;
  std::string reason;
};

// kube-scheduler's active queue order: priority descending, then creation time.
struct pending_pod_key {
  int32_t neg_priority = 0;
  int64_t created_ns = 0;
  uint32_t job = 0;
  uint32_t pod = 0;
  friend auto operator<=>(const pending_pod_key&, const pending_pod_key&) = default;
};

struct queue_runtime {
  sim_queue spec;
  // The live queue's book (scheduler/queue_book.hpp), its gangs by job index: the arrived jobs
  // waiting for the gate and the admitted ones not started, in gang order; what the queue's
  // pods hold (allocated), what its unplaced pods of arrived jobs ask for (demand), and what
  // admitted gangs claim at the gate (inqueue).
  queue_book<const pod_group*> book;
  resources deserved;      // From compute_deserved, every pass.
  bool share_cut = false;  // Other queues' claims cut its deserved share (share_cut_by_others).
  std::vector<std::size_t> started;  // Started gangs not completed: the victims' gangs.
  uint64_t placements = 0;              // Pods placed so far: new victims for a preemptor.
  // Why it admits nothing though its own state is Open: it has child queues, or an ancestor is
  // not Open (the live registry's refresh_queue_states). Empty when it admits by its own state.
  std::string closed_because;
};

bool overused(const queue_runtime& q) noexcept {
  return queue_overused(q.book.allocated(), q.deserved, q.share_cut);
}

// The victims one plan chooses among: bound and running pods of some gangs, with their gangs.
struct candidate_set {
  std::vector<preemption_candidate> candidates;
  std::vector<victim_gang> gangs;
};

// Why pods are evicted: the counters differ, the bookkeeping does not.
enum class eviction_cause : uint8_t { preemption, reclaim };

// A queue's deserved share as allocations compare with it: no limit on the pod count, which
// every request carries and no share names (the live registry's as_share).
resources as_share(resources deserved) {
  return std::move(deserved.with_pods(std::numeric_limits<int64_t>::max() / 2));
}

// bound_reached: a blocked gang has waited starvation_bound (phalanx); a pass sees it starve.
enum class event_kind : uint8_t {
  arrival,
  pod_created,
  pod_started,
  pod_timer,
  bound_reached,
  sla_due,  // A refused gang's sla-waiting-time ran out: the gate admits it now.
};

struct event {
  duration at{};
  uint64_t seq = 0;
  event_kind kind = event_kind::arrival;
  uint32_t job = 0;
  uint32_t pod = 0;
  // pod_started and pod_timer: the pod's generation when pushed (stale once it was evicted).
  uint32_t generation = 0;
};

struct event_later {
  bool operator()(const event& a, const event& b) const noexcept {
    if (a.at != b.at)
      return a.at > b.at;
    return a.seq > b.seq;
  }
};

// A node a starving gang reserved (room_reservation.hpp): its gang, or npos, and the amount.
struct node_reservation {
  std::size_t owner = npos;
  resources amount;
};

// The cluster as job `viewer` sees it: a node another job reserved keeps withheld_room(free,
// amount) from it; its own reserved nodes, and every node without a reservation, it sees whole.
// With `whole_reservation`, the node keeps the whole amount (its free room may show below
// zero): what a node ledger grants a reserve that evicts, once the victims' room is added, so a
// preemptor plans on this.
class reserved_view final : public node_view {
 public:
  reserved_view(const cluster_snapshot& base, const std::vector<node_reservation>& reservations,
                std::size_t viewer, bool whole_reservation = false)
      : base_(base), reservations_(reservations), viewer_(viewer), whole_(whole_reservation) {}

  std::size_t size() const noexcept override { return base_.size(); }
  const node& at(std::size_t index) const noexcept override { return base_.at(index); }
  bool is_live(std::size_t index) const noexcept override { return base_.is_live(index); }
  namespace_directory_ptr namespaces() const override { return base_.namespaces(); }
  void read_free(std::size_t index, resources& out) const override {
    base_.read_free(index, out);
    const auto& r = reservations_[index];
    if (r.owner != npos && r.owner != viewer_)
      out -= whole_ ? r.amount : withheld_room(out, r.amount);
  }

 private:
  const cluster_snapshot& base_;
  const std::vector<node_reservation>& reservations_;
  std::size_t viewer_;
  bool whole_;
};

std::string describe_plan_failure(const plan_result& r, std::string_view origin_name) {
  std::string out = "pod ";
  out += origin_name;
  out += ": ";
  out += r.detail.empty() ? r.origin.to_string() : r.detail;
  return out;
}

class simulation {
 public:
  simulation(const cluster_snapshot& cluster, std::span<const sim_job> jobs,
             const sim_config& config);

  sim_result run();

 private:
  void add_job(const sim_job& j);
  std::size_t queue_for(const std::string& name);

  void push(duration at, event_kind kind, std::size_t job, std::size_t pod) {
    const uint32_t generation =
        kind == event_kind::pod_started || kind == event_kind::pod_timer
            ? jobs_[job].pods[pod].generation
            : 0;
    events_.push({at, next_seq_++, kind, static_cast<uint32_t>(job), static_cast<uint32_t>(pod),
                  generation});
  }
  void handle(const event& e);
  void on_arrival(std::size_t j);
  void create_pod(std::size_t j, std::size_t p);
  void on_started(std::size_t j, std::size_t p);
  void arm_timer(std::size_t j, std::size_t p);
  void try_finish(std::size_t j, std::size_t p);

  void place(std::size_t j, std::size_t p, std::size_t node);
  bool gang_ready(const job_runtime& job) const;
  void start_gang(std::size_t j);
  // phalanx and volcano_like: queues, the gate, queue-ordered allocation.
  bool queued() const noexcept {
    return config_.policy == sim_policy::phalanx || config_.policy == sim_policy::volcano_like;
  }
  // Zero (no reservation ever) but under phalanx.
  duration starvation_bound() const noexcept {
    return config_.policy == sim_policy::phalanx ? config_.starvation_bound : duration::zero();
  }

  // The request of job j's unplaced pods (their indices in `index`, specs in `candidates`): as a
  // gang (min_pods = what minMember still needs, and each role's minimum) or, with
  // `extras_only`, every placement optional and only the first unplaced pod offered (extras go
  // out one by one).
  gang_request request_for(const job_runtime& job, bool extras_only,
                           std::vector<std::size_t>& index,
                           std::vector<const pod*>& candidates) const;
  // Plans request_for(j) against the cluster as job j sees it (reserved_view). Applies the
  // placements on success; records failures in the job's memo.
  plan_result plan_job(std::size_t j, bool extras_only);
  // False when the last failure recorded in `memo` certainly repeats; then it records that.
  bool worth_planning(job_runtime& job, failure_memo& memo, int64_t needed);
  void remember_failure(failure_memo& memo, const resources* shape);
  // Upper bound on how many pods of `request` fit on `nodes` now (constraints ignored).
  int64_t gained_on(const std::vector<std::size_t>& nodes, const resources& request) const;
  int32_t still_needed(const job_runtime& job) const;

  void pass();
  void pass_pod_by_pod();
  void pass_gang_fifo();
  void pass_phalanx();
  bool phalanx_enqueue();
  bool phalanx_allocate();
  bool place_extras();
  void compute_queue_deserved();
  // Job j's minimum found no placement in this pass: marks it blocked (from now, if it was not)
  // and, once it starves holding no reservation, reserves nodes for it.
  void on_blocked(std::size_t j);
  void reserve_nodes(std::size_t j);
  // Preemption (see the file comment): whether job j, blocked in this pass, may ask; and the ask,
  // which evicts what plan_preemption chooses and places j's minimum. False when no plan.
  bool may_preempt(const job_runtime& job) const;
  // Preemption in j's own queue, then reclaim across queues, each when configured; true when one
  // of them placed j's minimum.
  bool evict_for(std::size_t j);
  bool preempt_for(std::size_t j);
  bool reclaim_for(std::size_t j);
  // Adds the bound and running pods of queue q's started gangs of priority below `below` to
  // `set`, as candidates of victim queue `queue_index` (the registry's add_candidates).
  void add_candidates(std::size_t q, int32_t below, uint32_t queue_index,
                      candidate_set& set) const;
  // Applies a plan found for job j (its pods request_for's `index`): evicts the victims, with
  // the bookkeeping both causes share, and places j's minimum. False if the plan broke its
  // promise (a violation).
  bool apply_eviction_plan(std::size_t j, const preemption_plan& plan,
                           const std::vector<std::size_t>& index, eviction_cause cause);
  // Stops pod p of job j (bound, running or a placeholder) and gives its node the room back; the
  // pod is unplaced again: pending, or not created for a placeholder.
  void unplace(std::size_t j, std::size_t p);
  // Job j lost every running pod: every pod unplaced, back among the admitted gangs not started
  // (waiting again in its queue's order once phalanx_allocate's walk is over: restarted_).
  void restart(std::size_t j);
  // Ends job j's reservation, if it holds one: the other gangs see the room it withheld again.
  void end_reservation(std::size_t j);
  // A bound_reached event whose gang no longer waits for it: skipped without moving the clock.
  bool is_stale(const event& e) const;
  void insert_in_gang_order(std::vector<std::size_t>& list, std::size_t j);

  void check_nodes();
  void check_gangs();
  void full_recount();
  void sample_utilization();
  void violation(std::string text) { result_.violations.push_back(std::move(text)); }

  sim_result finish();

  sim_config config_;
  cluster_snapshot cluster_;
  gang_planner planner_;
  rng random_;
  resources total_;
  std::vector<resources> used_;      // Our own per-node recount, checked against the snapshot.
  std::vector<resources> baseline_;  // Usage the snapshot came with.
  resources used_total_;
  std::vector<job_runtime> jobs_;
  std::vector<queue_runtime> queues_;
  std::map<std::string, std::size_t, std::less<>> queue_index_;

  std::priority_queue<event, std::vector<event>, event_later> events_;
  uint64_t next_seq_ = 0;
  duration now_{};
  // Bumped whenever resources are released. A placement that failed at the current epoch fails
  // again (free amounts only shrank since), so it is not retried.
  uint64_t epoch_ = 0;
  // Bumped when a gate claim shrinks without a release (a gang starts or turns out
  // unresolvable): a refusal of the gate is valid while neither counter moved.
  uint64_t claim_changes_ = 0;
  // Pods placed in any queue, and jobs arrived: with epoch_, what a failed reclaim depends on.
  uint64_t placements_ = 0;
  uint64_t arrivals_ = 0;
  uint64_t pass_ = 0;
  bool dirty_ = false;                        // Something a pass could act on happened.
  // Nodes that got room since the last pass: released, or a reservation on them ended.
  std::vector<std::size_t> released_nodes_;
  // Nodes that got room in this pass: a reservation ended or pods were evicted (the only room a
  // pass itself gives).
  std::vector<std::size_t> unreserved_nodes_;
  // Nodes whose pods were evicted in this pass: released_nodes_ of the next pass.
  std::vector<std::size_t> evicted_nodes_;
  // Gangs that restarted in this pass's allocation walk, to wait again in their queue's order.
  std::vector<std::size_t> restarted_;
  // Reservations ended so far: a starving gang that found no node to reserve finds none again
  // until this moves (choose_reserved_nodes fills nodes up to their allocatable, so only the
  // nodes other gangs reserved, never the free room, decide whether it finds some).
  uint64_t reservation_ends_ = 0;

  // pod_by_pod: shapes, their pending pods, and the shapes ordered by their oldest pod.
  struct shape_less {
    bool operator()(const pod_shape* a, const pod_shape* b) const {
      if (a->priority != b->priority)
        return a->priority < b->priority;
      if (a->constraints != b->constraints)
        return std::less<const placement_constraints*>{}(a->constraints, b->constraints);
      return resources_less(a->requests, b->requests);
    }
  };
  std::deque<pod_shape> shapes_;  // A deque: the index keys point into it.
  std::map<const pod_shape*, std::size_t, shape_less> shape_index_;
  std::vector<std::set<pending_pod_key>> shape_pods_;
  std::set<std::pair<pending_pod_key, std::size_t>> shape_heads_;

  std::vector<std::size_t> unstarted_;  // gang_fifo: arrived jobs not started, FIFO.
  std::vector<std::size_t> elastic_;    // Started jobs with unplaced pods, in gang order.
  std::vector<node_reservation> reservations_;  // phalanx: per node.
  std::vector<std::size_t> reserving_;          // phalanx: jobs holding a reservation.
  std::vector<std::size_t> active_;     // Started, not completed jobs.
  std::vector<std::size_t> touched_nodes_;
  std::vector<std::size_t> touched_jobs_;

  int64_t used_cpu_ = 0;
  int64_t used_gpu_ = 0;
  __int128 cpu_area_ = 0;
  __int128 gpu_area_ = 0;

  sim_result result_;
};

simulation::simulation(const cluster_snapshot& cluster, std::span<const sim_job> jobs,
                       const sim_config& config)
    : config_(config), cluster_(cluster), planner_(config.planner), random_(config.seed) {
  // Usage the snapshot already carries (free < allocatable) is background load: it counts as
  // used for the whole run and is never released.
  used_.resize(cluster_.size());
  baseline_.resize(cluster_.size());
  reservations_.resize(cluster_.size());
  for (std::size_t n = 0; n < cluster_.size(); ++n) {
    if (!cluster_.is_live(n))
      continue;
    baseline_[n] = cluster_.at(n).allocatable - cluster_.free(n);
    used_[n] = baseline_[n];
    used_total_ += baseline_[n];
  }
  used_cpu_ = used_total_.cpu_milli;
  used_gpu_ = used_total_.get(gpu_resource);
  total_ = cluster_.total_allocatable();
  for (const auto& q : config_.queues) {
    queue_index_.emplace(q.name, queues_.size());
    queues_.emplace_back().spec = q;
  }
  jobs_.reserve(jobs.size());
  for (const auto& j : jobs)
    add_job(j);
  // The tree was validated: parents exist and there is no cycle. A queue with children, or under
  // an ancestor that is not Open, admits nothing new, as the live registry gives such a queue an
  // effective state Closed (refresh_queue_states); queue states do not change during a run.
  for (auto& q : queues_) {
    for (const auto& c : queues_)
      if (c.spec.parent == q.spec.name) {
        q.closed_because = "it has child queues (\"" + c.spec.name +
                           "\"); only leaf queues take jobs";
        break;
      }
    for (auto parent = q.spec.parent; q.closed_because.empty() && !is_child_of_root(parent);) {
      const auto& p = queues_[queue_index_.at(parent)];
      if (p.spec.state != queue_state::open)
        q.closed_because = "it is under queue \"" + p.spec.name + "\", which is " +
                           std::string(to_string(p.spec.state));
      parent = p.spec.parent;
    }
  }
}

void simulation::add_job(const sim_job& j) {
  job_runtime rt;
  rt.spec = j;
  if (rt.spec.group.meta.creation_time == timestamp{})
    rt.spec.group.meta.creation_time = timestamp{} + j.arrival;
  rt.queue = queued() ? queue_for(rt.spec.group.queue) : 0;
  rt.pods.resize(j.pods.size());
  rt.children.resize(j.pods.size());
  rt.placed = gang_book(rt.spec.group);
  rt.one_shape = true;
  for (std::size_t p = 0; p < j.pods.size(); ++p) {
    const auto& sp = j.pods[p].spec;
    rt.pods[p].role = gang_book::role_index(rt.spec.group, sp.role);
    if (j.pods[p].spawned_by) {
      rt.children[*j.pods[p].spawned_by].push_back(p);
      ++rt.pods[*j.pods[p].spawned_by].children_left;
    }
    const auto& first = j.pods.front().spec;
    if (sp.requests != first.requests || sp.constraints != first.constraints ||
        sp.role != first.role)
      rt.one_shape = false;
  }
  jobs_.push_back(std::move(rt));
}

std::size_t simulation::queue_for(const std::string& name) {
  if (auto it = queue_index_.find(name); it != queue_index_.end())
    return it->second;
  sim_queue q;
  q.name = name;
  queue_index_.emplace(name, queues_.size());
  queues_.emplace_back().spec = std::move(q);
  return queues_.size() - 1;
}

sim_result simulation::run() {
  result_.policy = config_.policy;
  result_.utilization.push_back({duration{0}, used_cpu_, used_gpu_});
  for (std::size_t j = 0; j < jobs_.size(); ++j)
    push(jobs_[j].spec.arrival, event_kind::arrival, j, 0);

  while (!events_.empty()) {
    if (is_stale(events_.top())) {
      events_.pop();
      continue;
    }
    const duration at = events_.top().at;
    if (config_.end_time && at > *config_.end_time) {
      result_.stopped_at_end_time = true;
      break;
    }
    // Integrate use over the interval that just ended.
    cpu_area_ += __int128{used_cpu_} * (at - now_).count();
    gpu_area_ += __int128{used_gpu_} * (at - now_).count();
    now_ = at;
    while (!events_.empty() && events_.top().at == at) {
      event e = events_.top();
      events_.pop();
      if (is_stale(e))
        continue;
      handle(e);
      ++result_.events_processed;
      if (config_.check_invariants)
        check_nodes();
    }
    pass();
    if (config_.check_invariants) {
      check_nodes();
      check_gangs();
    }
    sample_utilization();
  }
  if (result_.stopped_at_end_time) {
    cpu_area_ += __int128{used_cpu_} * (*config_.end_time - now_).count();
    gpu_area_ += __int128{used_gpu_} * (*config_.end_time - now_).count();
    now_ = *config_.end_time;
  }
  return finish();
}

void simulation::handle(const event& e) {
  switch (e.kind) {
    case event_kind::arrival:
      on_arrival(e.job);
      break;
    case event_kind::pod_created:
      create_pod(e.job, e.pod);
      break;
    case event_kind::pod_started:
      on_started(e.job, e.pod);
      break;
    case event_kind::pod_timer:
      jobs_[e.job].pods[e.pod].own_done = true;
      try_finish(e.job, e.pod);
      break;
    case event_kind::bound_reached:
      dirty_ = true;  // The pass finds it blocked, now starving, and lets it reserve.
      break;
    case event_kind::sla_due:
      dirty_ = true;  // The pass asks the gate again, which admits it now.
      break;
  }
}

bool simulation::is_stale(const event& e) const {
  if (e.kind == event_kind::pod_started || e.kind == event_kind::pod_timer)
    return e.generation != jobs_[e.job].pods[e.pod].generation;  // The pod was evicted since.
  if (e.kind != event_kind::bound_reached)
    return false;
  const auto& job = jobs_[e.job];
  return job.stage != job_stage::inqueue || job.reserving || job.unresolvable;
}

void simulation::insert_in_gang_order(std::vector<std::size_t>& list, std::size_t j) {
  auto at = std::lower_bound(list.begin(), list.end(), j, [&](std::size_t a, std::size_t b) {
    return gang_before(jobs_[a].spec.group, jobs_[b].spec.group);
  });
  list.insert(at, j);
}

void simulation::on_arrival(std::size_t j) {
  auto& job = jobs_[j];
  dirty_ = true;
  ++arrivals_;
  if (queued()) {
    job.stage = job_stage::pending;
    resources demand;
    for (const auto& p : job.spec.pods)
      demand += p.spec.requests;
    queues_[job.queue].book.file(j, &job.spec.group, std::move(demand), false, false);
  } else if (config_.policy == sim_policy::gang_fifo) {
    job.stage = job_stage::inqueue;
    unstarted_.push_back(j);
  } else {
    job.stage = job_stage::inqueue;
  }
  for (std::size_t p = 0; p < job.spec.pods.size(); ++p) {
    const auto& sp = job.spec.pods[p];
    if (sp.spawned_by)
      continue;
    if (sp.created_after == duration{0})
      create_pod(j, p);
    else
      push(now_ + sp.created_after, event_kind::pod_created, j, p);
  }
}

void simulation::create_pod(std::size_t j, std::size_t p) {
  auto& job = jobs_[j];
  auto& pr = job.pods[p];
  if (pr.state == pod_state::reserved) {
    pr.state = pod_state::bound;
    push(now_ + config_.pod_start_delay, event_kind::pod_started, j, p);
    return;
  }
  if (pr.state != pod_state::not_created) {
    violation("pod " + job.spec.pods[p].spec.meta.name + " created twice");
    return;
  }
  pr.state = pod_state::pending;
  dirty_ = true;
  if (config_.policy != sim_policy::pod_by_pod)
    return;
  // Find or make the pod's shape, and queue the pod behind the older pods of that shape.
  const pod& spec = job.spec.pods[p].spec;
  std::size_t shape = npos;
  pod_shape probe{spec.priority, spec.constraints.get(), spec.requests, {}, false, {}};
  if (auto found = shape_index_.find(&probe); found != shape_index_.end()) {
    shape = found->second;
  } else {
    shape = shapes_.size();
    shapes_.push_back(std::move(probe));
    shape_pods_.emplace_back();
    shape_index_.emplace(&shapes_.back(), shape);
  }
  pr.shape = shape;
  const pending_pod_key key{-spec.priority, now_.count(), static_cast<uint32_t>(j),
                            static_cast<uint32_t>(p)};
  auto& queue = shape_pods_[shape];
  if (!queue.empty())
    shape_heads_.erase({*queue.begin(), shape});
  queue.insert(key);
  shape_heads_.insert({*queue.begin(), shape});
}

void simulation::on_started(std::size_t j, std::size_t p) {
  auto& job = jobs_[j];
  auto& pr = job.pods[p];
  if (pr.state != pod_state::bound) {
    violation("pod " + job.spec.pods[p].spec.meta.name + " started while not bound");
    return;
  }
  pr.state = pod_state::running;
  pr.running_since = now_;
  ++job.running;
  // A child exists already when this pod was evicted and placed again while it ran on.
  for (auto child : job.children[p])
    if (job.pods[child].state == pod_state::not_created ||
        job.pods[child].state == pod_state::reserved)
      create_pod(j, child);
  if (!job.ready_at && job.running >= job.spec.group.min_member) {
    job.ready_at = now_;
    if (!job.first_ready_at)
      job.first_ready_at = now_;
    if (job.spec.wait_for_gang)
      for (std::size_t q = 0; q < job.pods.size(); ++q)
        if (job.pods[q].state == pod_state::running)
          arm_timer(j, q);
  }
  if (!job.spec.wait_for_gang || job.ready_at)
    arm_timer(j, p);
}

void simulation::arm_timer(std::size_t j, std::size_t p) {
  auto& pr = jobs_[j].pods[p];
  if (pr.timer_armed)
    return;
  pr.timer_armed = true;
  push(now_ + jobs_[j].spec.pods[p].run_time, event_kind::pod_timer, j, p);
}

void simulation::try_finish(std::size_t j, std::size_t p) {
  auto& job = jobs_[j];
  auto& pr = job.pods[p];
  if (!pr.own_done || pr.children_left > 0 || pr.state != pod_state::running)
    return;
  const auto& request = job.spec.pods[p].spec.requests;
  pr.state = pod_state::succeeded;
  cluster_.release(pr.node, request);
  used_[pr.node] -= request;
  used_total_ -= request;
  touched_nodes_.push_back(pr.node);
  released_nodes_.push_back(pr.node);
  used_cpu_ -= request.cpu_milli;
  used_gpu_ -= request.get(gpu_resource);
  --job.running;
  --job.holding;
  ++job.succeeded;
  job.allocated -= request;
  if (queued())
    queues_[job.queue].book.use(j, {{}, request, 0, 1});
  ++epoch_;
  dirty_ = true;
  if (auto parent = job.spec.pods[p].spawned_by) {
    --job.pods[*parent].children_left;
    try_finish(j, *parent);
  }
  if (job.succeeded == static_cast<int32_t>(job.pods.size())) {
    job.stage = job_stage::completed;
    job.completed_at = now_;
    if (queued()) {
      queues_[job.queue].book.forget(j);
      std::erase(queues_[job.queue].started, j);
    }
    std::erase(active_, j);
    std::erase(elastic_, j);
  }
}

void simulation::place(std::size_t j, std::size_t p, std::size_t node) {
  auto& job = jobs_[j];
  auto& pr = job.pods[p];
  const auto& request = job.spec.pods[p].spec.requests;
  if (!is_unplaced(pr.state)) {
    violation("I1: pod " + job.spec.pods[p].spec.meta.name + " placed twice (second time on " +
              cluster_.at(node).meta.name + ")");
    return;
  }
  if (config_.check_invariants && !fits(request, cluster_.free(node)))
    violation("I2: pod " + job.spec.pods[p].spec.meta.name + " placed on " +
              cluster_.at(node).meta.name + " without room: needs " + request.to_string() +
              ", free " + cluster_.free(node).to_string());
  cluster_.allocate(node, request);
  used_[node] += request;
  used_total_ += request;
  touched_nodes_.push_back(node);
  used_cpu_ += request.cpu_milli;
  used_gpu_ += request.get(gpu_resource);
  pr.node = node;
  pr.placed_at = now_;
  job.placed.count(pr.role);
  ++job.holding;
  if (!job.touched) {
    job.touched = true;
    touched_jobs_.push_back(j);
  }
  job.allocated += request;
  if (queued()) {
    auto& q = queues_[job.queue];
    q.book.use(j, {request, {}, 1, 0});  // Its claim follows (gate_claim), as the live one's.
    ++q.placements;
    ++placements_;
  }
  if (pr.state == pod_state::pending) {
    pr.state = pod_state::bound;
    push(now_ + config_.pod_start_delay, event_kind::pod_started, j, p);
  } else {
    pr.state = pod_state::reserved;
  }
}

bool simulation::gang_ready(const job_runtime& job) const {
  return job.placed.runs_minimum(job.spec.group);
}

void simulation::start_gang(std::size_t j) {
  auto& job = jobs_[j];
  job.stage = job_stage::started;
  active_.push_back(j);
  if (job.placed.ready() < static_cast<int32_t>(job.pods.size()))
    insert_in_gang_order(elastic_, j);
  if (queued()) {
    end_reservation(j);  // Its minimum is placed: the room it reserved is used or not needed.
    auto& q = queues_[job.queue];
    q.book.stop_waiting(j);  // Its claim became a started one as its minimum was placed.
    q.started.push_back(j);
    ++claim_changes_;
  } else {
    std::erase(unstarted_, j);
  }
}

int32_t simulation::still_needed(const job_runtime& job) const {
  return job.placed.members_short(job.spec.group);
}

int64_t simulation::gained_on(const std::vector<std::size_t>& nodes,
                              const resources& request) const {
  int64_t gained = 0;
  for (auto n : nodes)
    gained = saturating_add(gained, fit_count(cluster_.free(n), request));
  return gained;
}

bool simulation::worth_planning(job_runtime& job, failure_memo& memo, int64_t needed) {
  if (memo.epoch == never)
    return true;  // Never failed.
  if (memo.epoch == epoch_) {
    memo.pass = pass_;  // Nothing was released since it failed.
    return false;
  }
  // Only the nodes that got room since it failed can hold more now: if it failed in the previous
  // pass, those released since or unreserved in this pass; if it failed earlier in this pass,
  // those unreserved since (a pass releases nothing). Older failures: the check knows too little.
  const std::vector<std::size_t>* gained_nodes = nullptr;
  if (memo.pass + 1 == pass_)
    gained_nodes = &released_nodes_;
  else if (memo.pass == pass_)
    gained_nodes = &unreserved_nodes_;
  else
    return true;
  bool may_fit = false;
  if (job.one_shape) {
    // memo.capacity counted every node's free room, reserved or not, at the failure.
    const int64_t gained = gained_on(*gained_nodes, job.spec.pods.front().spec.requests);
    may_fit = gained > 0 && saturating_add(memo.capacity, gained) >= needed;
    memo.capacity = saturating_add(memo.capacity, gained);
  } else {
    for (auto n : *gained_nodes) {
      for (std::size_t p = 0; p < job.pods.size() && !may_fit; ++p)
        if (is_unplaced(job.pods[p].state) &&
            fits(job.spec.pods[p].spec.requests, cluster_.free(n)))
          may_fit = true;
      if (may_fit)
        break;
    }
  }
  if (may_fit)
    return true;
  memo.pass = pass_;
  memo.epoch = epoch_;
  return false;
}

void simulation::remember_failure(failure_memo& memo, const resources* shape) {
  memo.epoch = epoch_;
  memo.pass = pass_;
  memo.capacity = 0;
  if (shape)
    for (std::size_t n = 0; n < cluster_.size(); ++n)
      if (cluster_.is_live(n))
        memo.capacity = saturating_add(memo.capacity, fit_count(cluster_.free(n), *shape));
}

gang_request simulation::request_for(const job_runtime& job, bool extras_only,
                                     std::vector<std::size_t>& index,
                                     std::vector<const pod*>& candidates) const {
  for (std::size_t p = 0; p < job.pods.size(); ++p) {
    if (is_unplaced(job.pods[p].state)) {
      index.push_back(p);
      candidates.push_back(&job.spec.pods[p].spec);
      if (extras_only)
        break;
    }
  }
  gang_request request;
  request.pods = candidates;
  // A gang takes its minimum first; extras wait until every unstarted gang had its turn.
  request.place_extra = extras_only;
  if (!extras_only) {
    job.placed.ask_for_minimum(job.spec.group, request);
  }
  return request;
}

plan_result simulation::plan_job(std::size_t j, bool extras_only) {
  auto& job = jobs_[j];
  std::vector<std::size_t> index;
  std::vector<const pod*> candidates;
  const gang_request request = request_for(job, extras_only, index, candidates);
  plan_result r = planner_.plan(reserved_view(cluster_, reservations_, j), request, random_);
  const int32_t before = job.placed.ready();
  if (r.code == plan_code::success) {
    for (const auto& pl : r.placements)
      place(j, index[pl.pod], pl.node);
  } else if (r.origin_pod < index.size()) {
    r.detail = describe_plan_failure(r, job.spec.pods[index[r.origin_pod]].spec.meta.name);
  }
  if (r.code != plan_code::success || job.placed.ready() == before) {
    const resources* shape = job.one_shape ? &job.spec.pods.front().spec.requests : nullptr;
    remember_failure(extras_only ? job.extras_failure : job.gang_failure, shape);
    if (r.code != plan_code::success)
      job.reason = r.detail;
  }
  return r;
}

void simulation::pass() {
  if (!dirty_)
    return;
  dirty_ = false;
  ++pass_;
  std::sort(released_nodes_.begin(), released_nodes_.end());
  released_nodes_.erase(std::unique(released_nodes_.begin(), released_nodes_.end()),
                        released_nodes_.end());
  switch (config_.policy) {
    case sim_policy::pod_by_pod:
      pass_pod_by_pod();
      break;
    case sim_policy::gang_fifo:
      pass_gang_fifo();
      break;
    case sim_policy::volcano_like:
    case sim_policy::phalanx:
      pass_phalanx();
      break;
  }
  // Evictions gave room within the pass: the failures after the pass learn of it as of a release.
  released_nodes_.swap(evicted_nodes_);
  evicted_nodes_.clear();
  unreserved_nodes_.clear();
}

void simulation::pass_pod_by_pod() {
  // Shapes in the order of their oldest pending pod; within a shape, pods in FIFO order. A shape
  // whose oldest pod fails is done for this pass: free amounts only shrink during it.
  for (auto it = shape_heads_.begin(); it != shape_heads_.end();) {
    const std::size_t s = it->second;
    auto& shape = shapes_[s];
    if (shape.unresolvable) {
      ++it;
      continue;
    }
    // A shape is one pod class: the cheap check counts pods of its requests.
    if (shape.failure.epoch != never) {
      bool may_fit = true;
      if (shape.failure.epoch == epoch_) {
        may_fit = false;
      } else if (shape.failure.pass + 1 == pass_) {
        may_fit = gained_on(released_nodes_, shape.requests) > 0;
      }
      if (!may_fit) {
        shape.failure.pass = pass_;
        shape.failure.epoch = epoch_;
        ++it;
        continue;
      }
    }
    const pending_pod_key head = it->first;
    const pod& spec = jobs_[head.job].spec.pods[head.pod].spec;
    const pod* one[] = {&spec};
    gang_request request;
    request.pods = one;
    request.min_pods = 1;
    request.place_extra = false;
    plan_result r = planner_.plan(cluster_, request, random_);
    if (r.code == plan_code::success && !r.placements.empty()) {
      place(head.job, head.pod, r.placements.front().node);
      auto& queue = shape_pods_[s];
      queue.erase(queue.begin());
      it = shape_heads_.erase(it);
      if (!queue.empty()) {
        // The shape's next pod is younger: it comes back later in this same walk.
        auto next = shape_heads_.insert({*queue.begin(), s}).first;
        if (it == shape_heads_.end() || *next < *it)
          it = next;
      }
      continue;
    }
    shape.reason = r.detail.empty() ? r.origin.to_string() : r.detail;
    if (r.code == plan_code::unresolvable)
      shape.unresolvable = true;
    shape.failure.epoch = epoch_;
    shape.failure.pass = pass_;
    ++it;
  }
}

void simulation::pass_gang_fifo() {
  bool blocked = false;
  for (std::size_t k = 0; k < unstarted_.size();) {
    const std::size_t j = unstarted_[k];
    auto& job = jobs_[j];
    if (!worth_planning(job, job.gang_failure, still_needed(job))) {
      blocked = true;  // The head still cannot start: nothing behind it may.
      break;
    }
    plan_result r = plan_job(j, false);
    if (r.code == plan_code::success) {
      start_gang(j);  // Removes it from unstarted_.
      continue;
    }
    if (r.code == plan_code::unresolvable) {
      // Waiting cannot help it; do not let it block the line forever.
      job.unresolvable = true;
      unstarted_.erase(unstarted_.begin() + static_cast<std::ptrdiff_t>(k));
      continue;
    }
    blocked = true;
    break;
  }
  if (!blocked)
    place_extras();
}

bool simulation::place_extras() {
  // One pod at a time, to the first elastic job in gang order, as the live queue grants elastic
  // rounds in its gang order; under phalanx never beyond the queue's capability nor into the
  // room a reserved node keeps (plan_job). A job that fails is done for this pass.
  const bool phalanx = queued();
  bool changed = false;
  // Places one extra pod of job j; false when it cannot take one now.
  auto place_one = [&](std::size_t j) {
    auto& job = jobs_[j];
    if (phalanx) {
      const auto& q = queues_[job.queue];
      if (overused(q))
        return false;  // As its live queue gives no slot for an elastic round.
      std::size_t first = 0;
      while (!is_unplaced(job.pods[first].state))
        ++first;
      if (!q.spec.capability.allows(q.book.allocated() + job.spec.pods[first].spec.requests)) {
        // Only a release in the queue makes room under its capability.
        remember_failure(job.extras_failure, nullptr);
        job.reason = "queue \"" + q.spec.name + "\" capability " + q.spec.capability.to_string() +
                     " reached: " + q.book.allocated().to_string() + " allocated";
        return false;
      }
    }
    const int32_t before = job.placed.ready();
    plan_job(j, true);
    if (job.placed.ready() == before)
      return false;
    changed = true;
    return true;
  };
  auto full = [&](std::size_t j) {
    return jobs_[j].placed.ready() == static_cast<int32_t>(jobs_[j].pods.size());
  };

  // elastic_ is in gang order, and a job's place in it never changes.
  for (auto j : elastic_) {
    if (!worth_planning(jobs_[j], jobs_[j].extras_failure, 1))
      continue;
    while (!full(j) && place_one(j)) {
    }
  }
  std::erase_if(elastic_, full);
  return changed;
}

void simulation::compute_queue_deserved() {
  std::vector<queue_demand> demands;
  demands.reserve(queues_.size());
  for (const auto& q : queues_)
    demands.push_back({q.spec.name, q.spec.weight, q.spec.capability, q.spec.guarantee,
                       (q.book.allocated() + q.book.demand()).clamped_at_zero(), q.spec.parent});
  auto deserved = compute_deserved(total_, demands);
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    queues_[i].share_cut = share_cut_by_others(deserved[i].deserved, demands[i].request, total_);
    queues_[i].deserved = std::move(deserved[i].deserved);
  }
}

bool simulation::phalanx_enqueue() {
  resources claims;
  for (const auto& q : queues_)
    claims += q.book.inqueue();
  const timestamp now = timestamp{} + now_;
  enqueue_gate gate(config_.gate, total_, used_total_, claims, now);
  std::vector<queue_usage> usage;
  usage.reserve(queues_.size());
  std::vector<ratio> share(queues_.size());
  // Each queue's next gang to ask the gate, walking its book's order.
  std::vector<queue_order::const_iterator> next(queues_.size());
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    const auto& q = queues_[i];
    usage.push_back({q.spec.name, q.closed_because.empty() ? q.spec.state : queue_state::closed,
                     q.spec.capability, q.book.allocated(), q.book.inqueue()});
    share[i] = queue_share(q.book.allocated() + q.book.inqueue(), q.deserved);
    next[i] = q.book.to_admit().begin();
  }
  auto rank = [&](std::size_t q) {
    return queue_rank{queues_[q].spec.priority, share[q], queues_[q].spec.name};
  };

  // Queues take turns by share, counting what their admitted gangs claim as if allocated: every
  // admission raises the queue's share, so admissions interleave by weight instead of one queue
  // filling the overcommit room before the others get a turn.
  bool changed = false;
  for (;;) {
    std::size_t best = npos;
    for (std::size_t q = 0; q < queues_.size(); ++q) {
      if (next[q] == queues_[q].book.to_admit().end())
        continue;
      if (best == npos) {
        best = q;
        continue;
      }
      if (rank(q) < rank(best))
        best = q;
    }
    if (best == npos)
      break;
    auto& q = queues_[best];
    const std::size_t j = next[best]->gang;
    auto& job = jobs_[j];
    admission_code code;
    const auto sla = sla_deadline(job.spec.group);
    if (job.refused_epoch == epoch_ && job.refused_claims == claim_changes_ &&
        (!sla || now < *sla)) {
      code = job.refusal;  // Room only shrank since it was refused.
    } else {
      auto decision = gate.admit(job.spec.group, usage[best]);
      code = decision.code;
      if (!decision.admitted()) {
        // Refused before its sla-waiting-time ran out: asked again when it does.
        if (sla && now < *sla && code != admission_code::queue_not_open &&
            job.refused_epoch != epoch_)
          push(sla->time_since_epoch(), event_kind::sla_due, j, 0);
        job.reason = code == admission_code::queue_not_open && !q.closed_because.empty()
                         ? "queue \"" + q.spec.name + "\" admits no gangs: " + q.closed_because
                         : std::move(decision.reason);
        job.refused_epoch = epoch_;
        job.refused_claims = claim_changes_;
        job.refusal = code;
      }
    }
    if (code == admission_code::admitted) {
      job.stage = job_stage::inqueue;
      const auto after = std::next(next[best]);
      q.book.admit(j);  // Waits for a slot, claiming its minResources.
      next[best] = after;
      share[best] = queue_share(usage[best].allocated + usage[best].inqueue, q.deserved);
      changed = true;
      continue;
    }
    // A refused gang holds back nothing after it, as the live gate does not.
    ++next[best];
    if (code == admission_code::queue_not_open)
      next[best] = q.book.to_admit().end();  // Nothing of a closed queue gets in.
  }
  return changed;
}

bool simulation::phalanx_allocate() {
  // Each queue's next admitted gang, walking its book's order. A gang leaves the order only as
  // it starts or is set aside, and restarted victims wait again after the walk: the iterator
  // past the current gang stays valid.
  std::vector<queue_order::const_iterator> next(queues_.size());
  std::vector<ratio> share(queues_.size());
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    share[q] = queue_share(queues_[q].book.allocated(), queues_[q].deserved);
    next[q] = queues_[q].book.to_plan().begin();
  }
  auto rank = [&](std::size_t q) {
    return queue_rank{queues_[q].spec.priority, share[q], queues_[q].spec.name};
  };
  bool changed = false;
  for (;;) {
    // The queue first in queue order among those with gangs left; shares move as gangs start.
    // An overused queue starts none (Volcano's allocate skips it, and the live queue gives no
    // planning slot) unless they may preempt (Volcano's preempt does not skip it).
    std::size_t best = npos;
    for (std::size_t q = 0; q < queues_.size(); ++q) {
      if (next[q] == queues_[q].book.to_plan().end() ||
          (!config_.preemption && overused(queues_[q])))
        continue;
      if (best == npos) {
        best = q;
        continue;
      }
      if (rank(q) < rank(best))
        best = q;
    }
    if (best == npos)
      break;
    auto& q = queues_[best];
    const std::size_t j = next[best]->gang;
    const auto after = std::next(next[best]);
    next[best] = after;
    auto& job = jobs_[j];
    if (worth_planning(job, job.gang_failure, still_needed(job))) {
      plan_result r = plan_job(j, false);
      if (r.code == plan_code::success) {
        start_gang(j);  // It leaves the order.
        share[best] = queue_share(q.book.allocated(), q.deserved);
        changed = true;
        continue;
      }
      if (r.code == plan_code::unresolvable) {
        job.unresolvable = true;
        end_reservation(j);
        q.book.set_aside(j);  // It will never start: it claims nothing.
        ++claim_changes_;
        continue;
      }
    }
    if (may_preempt(job) && evict_for(j)) {
      start_gang(j);
      // Reclaim took from other queues too: every share may have moved.
      for (std::size_t k = 0; k < queues_.size(); ++k)
        share[k] = queue_share(queues_[k].book.allocated(), queues_[k].deserved);
      changed = true;
      continue;
    }
    // Blocked; the gangs after it may still start (backfill).
    on_blocked(j);
  }
  // Victims that restarted wait again in gang order; the next round of the pass tries them.
  for (auto v : restarted_)
    queues_[jobs_[v].queue].book.wait_again(v);
  restarted_.clear();
  return changed;
}

void simulation::on_blocked(std::size_t j) {
  auto& job = jobs_[j];
  const duration bound = starvation_bound();
  if (!job.blocked_since) {
    job.blocked_since = now_;
    // A live gang replans on its own; here the bound's end is an instant of its own.
    if (bound > duration::zero())
      push(now_ + bound, event_kind::bound_reached, j, 0);
  }
  if (!job.reserving && is_starving(timestamp{} + *job.blocked_since, timestamp{} + now_, bound))
    reserve_nodes(j);
}

void simulation::reserve_nodes(std::size_t j) {
  auto& job = jobs_[j];
  if (job.no_nodes_at == reservation_ends_)
    return;  // It found every node it can use reserved, and none was given back since.
  std::vector<std::size_t> index;
  std::vector<const pod*> candidates;
  const gang_request request = request_for(job, false, index, candidates);
  auto choice =
      choose_reserved_nodes(reserved_view(cluster_, reservations_, j), request,
                            [&](std::size_t n) { return reservations_[n].owner != npos; });
  if (!choice.found) {
    // It tries again at its next blocked pass, once a reservation ended.
    job.no_nodes_at = reservation_ends_;
    job.reservation_note =
        "It has waited past the starvation bound but reserves no nodes: " + choice.detail + ".";
    return;
  }
  job.reserved_nodes.clear();
  for (auto& claim : choice.nodes) {
    reservations_[claim.node] = {j, std::move(claim.amount)};
    job.reserved_nodes.push_back(claim.node);
  }
  job.reserving = true;
  if (!job.reserved_at)
    job.reserved_at = now_;
  job.reservation_note = reservation_reason(choice);
  reserving_.push_back(j);
}

void simulation::end_reservation(std::size_t j) {
  auto& job = jobs_[j];
  if (!job.reserving)
    return;
  for (auto n : job.reserved_nodes) {
    reservations_[n] = {};
    // For the other gangs' failure memos, as a release is.
    released_nodes_.push_back(n);
    unreserved_nodes_.push_back(n);
  }
  job.reserving = false;
  job.reservation_note.clear();
  std::erase(reserving_, j);
  ++epoch_;  // Their failures since the reservation may not repeat: they see more room now.
  ++reservation_ends_;
}

bool simulation::may_preempt(const job_runtime& job) const {
  // As the live gang asks: admitted, not started, its minimum placed nowhere but not for ever,
  // and every pod it would place exists (a preemptor is a pod, never a placeholder).
  if (!(config_.preemption || config_.reclaim) || !queued() || job.stage != job_stage::inqueue ||
      job.unresolvable)
    return false;
  return std::none_of(job.pods.begin(), job.pods.end(),
                      [](const pod_runtime& p) { return p.state == pod_state::not_created; });
}

bool simulation::evict_for(std::size_t j) {
  // As the registry's do_preempt: preemption in its own queue first, then reclaim.
  if (config_.preemption && preempt_for(j))
    return true;
  return config_.reclaim && reclaim_for(j);
}

void simulation::add_candidates(std::size_t q, int32_t below, uint32_t queue_index,
                                candidate_set& set) const {
  // A pod's id is its job and index; a gang's is its job + 1 (0 means "no gang").
  for (auto v : queues_[q].started) {
    const auto& victim = jobs_[v];
    if (victim.spec.group.priority >= below)
      continue;
    gang_book ready(victim.spec.group);  // Its pods that exist and were placed.
    const auto before = set.candidates.size();
    for (std::size_t p = 0; p < victim.pods.size(); ++p) {
      const auto& pr = victim.pods[p];
      if (pr.state == pod_state::succeeded)
        ready.count(pr.role);
      if (pr.state != pod_state::bound && pr.state != pod_state::running)
        continue;
      ready.count(pr.role);
      preemption_candidate c;
      c.pod_id = (uint64_t{v} << 32) | p;
      c.node = static_cast<uint32_t>(pr.node);
      c.gang = v + 1;
      c.priority = victim.spec.group.priority;
      c.start_time =
          timestamp{} + (pr.state == pod_state::running ? pr.running_since : pr.placed_at);
      c.request = victim.spec.pods[p].spec.requests;
      c.queue = queue_index;
      set.candidates.push_back(std::move(c));
    }
    if (set.candidates.size() != before)
      set.gangs.push_back(ready.as_victim(victim.spec.group, v + 1));
  }
}

bool simulation::preempt_for(std::size_t j) {
  auto& job = jobs_[j];
  auto& q = queues_[job.queue];
  if (job.preempt_epoch == epoch_ && job.preempt_placements == q.placements)
    return false;  // Neither more room nor a new candidate since its last ask found nothing.
  // The candidates, as the registry gathers them for its own queue: the bound and running pods
  // of lower-priority gangs, each gang with its ready pods and minMember.
  const int32_t priority = job.spec.group.priority;
  candidate_set set;
  add_candidates(job.queue, priority, 0, set);
  auto failed = [&](std::string why) {
    job.preempt_epoch = epoch_;
    job.preempt_placements = q.placements;
    job.preemption_note = "No preemption: " + std::move(why) + ".";
    return false;
  };
  if (set.candidates.empty())
    return failed("no pod of a lower-priority gang of queue " + q.spec.name + " is running");
  std::vector<std::size_t> index;
  std::vector<const pod*> pods;
  preemption_request request;
  request.gang = request_for(job, false, index, pods);
  request.priority = priority;
  request.candidates = set.candidates;
  request.gangs = set.gangs;
  auto plan = plan_preemption(planner_, reserved_view(cluster_, reservations_, j, true), request,
                              random_);
  if (!plan.found)
    return failed(plan.detail);
  return apply_eviction_plan(j, plan, index, eviction_cause::preemption);
}

bool simulation::reclaim_for(std::size_t j) {
  auto& job = jobs_[j];
  const auto& own = queues_[job.queue];
  // What a reclaim ask sees: the free room and the running pods (a release or an eviction moves
  // epoch_; a placement in any queue adds candidates and raises its queue's allocation, which
  // may put that queue above its share), and the deserved shares, computed from every queue's
  // allocation plus pending demand: placements and evictions move demand between the two, so
  // only arrivals and releases change them. A failed ask repeats while none of the three moved;
  // a placement in the reclaimer's own queue alone (preemption's key) is not enough here.
  if (job.reclaim_epoch == epoch_ && job.reclaim_placements == placements_ &&
      job.reclaim_arrivals == arrivals_)
    return false;
  auto failed = [&](std::string why) {
    job.reclaim_epoch = epoch_;
    job.reclaim_placements = placements_;
    job.reclaim_arrivals = arrivals_;
    job.reclaim_note = "No reclaim: " + std::move(why) + ".";
    return false;
  };
  std::vector<std::size_t> index;
  std::vector<const pod*> pods;
  preemption_request request;
  request.gang = request_for(job, false, index, pods);
  // Its queue must stay within its deserved share with the gang's minimum: the first min_pods
  // pods, the planner's preference, as the registry's minimum_request counts them.
  resources minimum;
  for (std::size_t i = 0; i < pods.size() && i < static_cast<std::size_t>(request.gang.min_pods);
       ++i)
    minimum += pods[i]->requests;
  if (!fits(own.book.allocated() + minimum, as_share(own.deserved)))
    return failed("queue " + own.spec.name + " would exceed its deserved share " +
                  without_pods(own.deserved).to_string() + " with this gang's minimum (it holds " +
                  without_pods(own.book.allocated()).to_string() + ")");
  // The candidates: the running pods, of any priority, of every other reclaimable queue that
  // holds more than its deserved share; plan_preemption keeps each above its share but for the
  // last pod, and never below its guarantee.
  candidate_set set;
  std::vector<victim_queue> victims;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    const auto& other = queues_[q];
    if (q == job.queue || !other.spec.reclaimable)
      continue;
    const auto share = as_share(other.deserved);
    if (fits(other.book.allocated(), share))
      continue;  // Within its share: it gives nothing up.
    const auto queue_index = static_cast<uint32_t>(victims.size());
    victims.push_back({queue_index, other.book.allocated(), share, other.spec.guarantee});
    add_candidates(q, std::numeric_limits<int32_t>::max(), queue_index, set);
  }
  if (set.candidates.empty())
    return failed("no reclaimable queue holds more than its deserved share");
  request.priority = std::numeric_limits<int32_t>::max();
  request.candidates = set.candidates;
  request.gangs = set.gangs;
  request.queues = victims;
  auto plan = plan_preemption(planner_, reserved_view(cluster_, reservations_, j, true), request,
                              random_);
  if (!plan.found)
    return failed(plan.detail);
  return apply_eviction_plan(j, plan, index, eviction_cause::reclaim);
}

bool simulation::apply_eviction_plan(std::size_t j, const preemption_plan& plan,
                                     const std::vector<std::size_t>& index,
                                     eviction_cause cause) {
  auto& job = jobs_[j];
  const bool reclaim = cause == eviction_cause::reclaim;
  // The victims stop now; each one's GPUs x the time it ran are wasted.
  std::vector<std::size_t> victims;
  for (const auto& [node, ids] : plan.victims_by_node) {
    for (auto id : ids) {
      const auto v = static_cast<std::size_t>(id >> 32);
      const auto p = static_cast<std::size_t>(id & 0xffff'ffffu);
      auto& victim = jobs_[v];
      const auto& pr = victim.pods[p];
      const duration ran = pr.state == pod_state::running ? now_ - pr.running_since : duration{};
      const int64_t wasted =
          victim.spec.pods[p].spec.requests.get(gpu_resource) *
          std::chrono::duration_cast<std::chrono::milliseconds>(ran).count();
      victim.wasted_gpu_ms += wasted;
      ++victim.evicted_pods;
      result_.summary.wasted_gpu_ms += wasted;
      ++result_.summary.evicted_pods;
      if (reclaim) {
        victim.reclaim_wasted_gpu_ms += wasted;
        ++victim.reclaim_evicted_pods;
        result_.summary.reclaim_wasted_gpu_ms += wasted;
        ++result_.summary.reclaim_evicted_pods;
        ++job.reclaimed_pods;
      } else {
        ++job.preempted_pods;
      }
      unplace(v, p);
      victims.push_back(v);
    }
  }
  std::sort(victims.begin(), victims.end());
  victims.erase(std::unique(victims.begin(), victims.end()), victims.end());
  for (auto v : victims) {
    auto& victim = jobs_[v];
    const bool runs_on = std::any_of(victim.pods.begin(), victim.pods.end(), [](const auto& p) {
      return p.state == pod_state::bound || p.state == pod_state::running;
    });
    if (!runs_on) {
      restart(v);
      continue;
    }
    // It lost pods above its minimum only: it runs on, its evicted pods pending again.
    if (!gang_ready(victim))
      violation("I7: gang " + victim.spec.group.meta.name + " left with " +
                std::to_string(victim.placed.ready()) + " pods placed, minMember " +
                std::to_string(victim.spec.group.min_member) +
                " (or a role below its minimum), by an eviction for " + job.spec.group.meta.name);
    if (std::find(elastic_.begin(), elastic_.end(), v) == elastic_.end())
      insert_in_gang_order(elastic_, v);
  }
  if (!victims.empty())
    ++(reclaim ? result_.summary.reclaims : result_.summary.preemptions);

  for (const auto& pl : plan.placements)
    place(j, index[pl.pod], pl.node);
  job.preemption_note.clear();
  job.reclaim_note.clear();
  if (!gang_ready(job)) {
    violation("gang " + job.spec.group.meta.name + (reclaim ? " reclaimed" : " preempted") +
              " but its minimum is not placed: the plan broke its promise");
    return false;
  }
  return true;
}

void simulation::unplace(std::size_t j, std::size_t p) {
  auto& job = jobs_[j];
  auto& pr = job.pods[p];
  const auto& request = job.spec.pods[p].spec.requests;
  const std::size_t node = pr.node;
  cluster_.release(node, request);
  used_[node] -= request;
  used_total_ -= request;
  touched_nodes_.push_back(node);
  unreserved_nodes_.push_back(node);
  evicted_nodes_.push_back(node);
  used_cpu_ -= request.cpu_milli;
  used_gpu_ -= request.get(gpu_resource);
  if (pr.state == pod_state::running)
    --job.running;
  job.placed.count(pr.role, -1);
  --job.holding;
  job.allocated -= request;
  if (queued()) {
    // Its claim follows at once (gate_claim); the pod asks to be placed again.
    auto& book = queues_[job.queue].book;
    book.use(j, {{}, request, 0, 1});
    book.set_demand(j, book.find(j)->demand + request);
  }
  pr.state = pr.state == pod_state::reserved ? pod_state::not_created : pod_state::pending;
  pr.node = npos;
  ++pr.generation;
  pr.own_done = false;
  pr.timer_armed = false;
  if (!job.touched) {
    job.touched = true;
    touched_jobs_.push_back(j);
  }
  ++epoch_;
  dirty_ = true;
}

void simulation::restart(std::size_t j) {
  auto& job = jobs_[j];
  auto& q = queues_[job.queue];
  // Its placeholders go with it; its succeeded pods run again (the job starts from scratch, as
  // a restarted Volcano job does), and a spawned pod waits for its parent to create it again.
  for (std::size_t p = 0; p < job.pods.size(); ++p)
    if (holds_resources(job.pods[p].state))
      unplace(j, p);
  for (std::size_t p = 0; p < job.pods.size(); ++p) {
    auto& pr = job.pods[p];
    if (pr.state == pod_state::succeeded) {
      pr.state = pod_state::pending;
      --job.succeeded;
      job.placed.count(pr.role, -1);
      q.book.set_demand(j, q.book.find(j)->demand + job.spec.pods[p].spec.requests);
      pr.node = npos;
      ++pr.generation;
    }
    if (job.spec.pods[p].spawned_by && pr.state == pod_state::pending)
      pr.state = pod_state::not_created;
    pr.children_left = static_cast<int32_t>(job.children[p].size());
    pr.own_done = false;
    pr.timer_armed = false;
  }
  job.stage = job_stage::inqueue;
  job.ready_at.reset();
  job.blocked_since.reset();
  job.gang_failure = {};
  job.extras_failure = {};
  q.book.start_over(j);  // Its admission claim comes back.
  std::erase(q.started, j);
  std::erase(active_, j);
  std::erase(elastic_, j);
  restarted_.push_back(j);
  ++job.restarts;
}

void simulation::pass_phalanx() {
  // Admissions can let gangs start, and started gangs release their claims, which can admit
  // more: repeat until nothing moves (each round admits or starts at least one gang, or places
  // an extra pod). A gang that started ended its reservation: the round after it retries what
  // failed before against the room given back (its memo's epoch moved).
  for (;;) {
    compute_queue_deserved();
    bool changed = phalanx_enqueue();
    changed = phalanx_allocate() || changed;
    changed = place_extras() || changed;
    if (!changed)
      break;
  }
}

void simulation::check_nodes() {
  std::sort(touched_nodes_.begin(), touched_nodes_.end());
  touched_nodes_.erase(std::unique(touched_nodes_.begin(), touched_nodes_.end()),
                       touched_nodes_.end());
  for (auto n : touched_nodes_) {
    const auto& free = cluster_.free(n);
    if (free.any_negative())
      violation("I2: node " + cluster_.at(n).meta.name + " over capacity at " +
                format_duration_ns(now_.count()) + ": free " + free.to_string());
    if (cluster_.at(n).allocatable - used_[n] != free)
      violation("I4: node " + cluster_.at(n).meta.name + " free " + free.to_string() +
                " differs from allocatable - recount " +
                (cluster_.at(n).allocatable - used_[n]).to_string());
  }
  touched_nodes_.clear();
}

void simulation::check_gangs() {
  for (auto j : reserving_) {
    const auto& job = jobs_[j];
    if (job.stage != job_stage::inqueue)
      violation("gang " + job.spec.group.meta.name + " holds a reservation after it started");
    for (auto n : job.reserved_nodes)
      if (reservations_[n].owner != j)
        violation("node " + cluster_.at(n).meta.name + " reserved for gang " +
                  job.spec.group.meta.name + " names another owner");
  }
  for (auto j : touched_jobs_) {
    auto& job = jobs_[j];
    job.touched = false;
    if (config_.policy != sim_policy::pod_by_pod && job.placed.ready() != 0 && !gang_ready(job))
      violation("I3: gang " + job.spec.group.meta.name + " at rest with " +
                std::to_string(job.placed.ready()) + " pods placed, minMember " +
                std::to_string(job.spec.group.min_member) + " (or a role below its minimum)");
  }
  touched_jobs_.clear();
}

void simulation::full_recount() {
  std::vector<resources> recount = baseline_;
  for (const auto& job : jobs_)
    for (std::size_t p = 0; p < job.pods.size(); ++p)
      if (holds_resources(job.pods[p].state))
        recount[job.pods[p].node] += job.spec.pods[p].spec.requests;
  for (std::size_t n = 0; n < cluster_.size(); ++n) {
    if (cluster_.at(n).allocatable - recount[n] != cluster_.free(n))
      violation("I4: node " + cluster_.at(n).meta.name + " free " + cluster_.free(n).to_string() +
                " differs from allocatable - recount from pods " +
                (cluster_.at(n).allocatable - recount[n]).to_string());
    if (cluster_.free(n).any_negative())
      violation("I2: node " + cluster_.at(n).meta.name + " over capacity at the end");
  }
}

void simulation::sample_utilization() {
  const auto& last = result_.utilization.back();
  if (last.cpu_milli == used_cpu_ && last.gpu == used_gpu_)
    return;
  if (last.at == now_)
    result_.utilization.back() = {now_, used_cpu_, used_gpu_};
  else
    result_.utilization.push_back({now_, used_cpu_, used_gpu_});
}

sim_result simulation::finish() {
  if (config_.check_invariants)
    full_recount();
  auto& summary = result_.summary;
  summary.makespan = now_;
  summary.jobs = static_cast<int64_t>(jobs_.size());
  std::vector<int64_t> jcts;
  __int128 delay_sum = 0;
  int64_t started = 0;
  for (const auto& job : jobs_) {
    sim_job_result r;
    r.name = job.spec.group.meta.name;
    r.min_member = job.spec.group.min_member;
    r.running = job.running;
    r.succeeded = job.succeeded;
    r.placed = job.placed.ready();
    r.queue = job.spec.group.queue;
    for (const auto& p : job.spec.pods)
      r.requests += p.spec.requests;
    r.reserved_at = job.reserved_at;
    for (auto n : job.reserved_nodes)
      r.reserved_nodes.push_back(cluster_.at(n).meta.name.str());
    if (job.reserved_at)
      ++summary.reserved;
    r.evicted_pods = job.evicted_pods;
    r.restarts = job.restarts;
    r.wasted_gpu_ms = job.wasted_gpu_ms;
    r.reclaim_evicted_pods = job.reclaim_evicted_pods;
    r.reclaim_wasted_gpu_ms = job.reclaim_wasted_gpu_ms;
    r.preempted_pods = job.preempted_pods;
    r.reclaimed_pods = job.reclaimed_pods;
    if (job.evicted_pods > 0)
      ++summary.evicted_jobs;
    summary.restarts += job.restarts;
    if (job.first_ready_at) {
      r.started_at = *job.first_ready_at;
      r.time_to_start = *job.first_ready_at - job.spec.arrival;
      delay_sum += r.time_to_start->count();
      ++started;
    }
    if (job.completed_at) {
      r.completed_at = *job.completed_at;
      r.completion_time = *job.completed_at - job.spec.arrival;
      jcts.push_back(r.completion_time->count());
    }
    std::string why = job.reason;
    if (!job.reservation_note.empty())
      why += (why.empty() ? "" : ". ") + job.reservation_note;
    if (job.stage != job_stage::completed)
      for (const auto* note : {&job.preemption_note, &job.reclaim_note})
        if (!note->empty())
          why += (why.empty() ? "" : ". ") + *note;
    if (config_.policy == sim_policy::pod_by_pod) {
      // The reason of the oldest of its pods that is still waiting.
      for (std::size_t p = 0; p < job.pods.size() && why.empty(); ++p)
        if (job.pods[p].state == pod_state::pending && job.pods[p].shape != npos &&
            !shapes_[job.pods[p].shape].reason.empty())
          why = "pod " + job.spec.pods[p].spec.meta.name + ": " +
                shapes_[job.pods[p].shape].reason;
    }
    if (job.stage == job_stage::completed) {
      r.phase = sim_job_phase::completed;
      ++summary.completed;
    } else if (job.holding > 0) {
      if (result_.stopped_at_end_time) {
        r.phase = sim_job_phase::running;
        ++summary.running;
      } else {
        r.phase = sim_job_phase::deadlocked;
        ++summary.deadlocked;
        r.reason = "holds " + job.allocated.to_string() + " on " + std::to_string(job.holding) +
                   (job.holding == 1 ? " pod, " : " pods, ") + std::to_string(job.running) +
                   " of minMember " + std::to_string(job.spec.group.min_member) +
                   " running; no event is left to change it";
        if (!why.empty())
          r.reason += ": " + why;
      }
    } else {
      r.phase = sim_job_phase::pending;
      ++summary.pending;
      r.reason = job.stage == job_stage::waiting ? "not arrived" : why;
    }
    result_.jobs.push_back(std::move(r));
  }
  if (queued())
    for (const auto& q : queues_)
      result_.queues.push_back({q.spec.name, q.spec.parent, q.deserved});
  if (!jcts.empty()) {
    __int128 sum = 0;
    for (auto v : jcts)
      sum += v;
    summary.mean_jct = duration(static_cast<int64_t>(sum / static_cast<int64_t>(jcts.size())));
    std::sort(jcts.begin(), jcts.end());
    // Nearest rank: the smallest value with at least 95% of the values at or below it.
    std::size_t rank = (95 * jcts.size() + 99) / 100;
    summary.p95_jct = duration(jcts[std::max<std::size_t>(rank, 1) - 1]);
  }
  if (started > 0)
    summary.mean_queueing_delay = duration(static_cast<int64_t>(delay_sum / started));
  auto ppm = [&](__int128 area, int64_t total) -> int64_t {
    if (total <= 0 || now_.count() <= 0)
      return 0;
    return static_cast<int64_t>(area * 1'000'000 / (__int128{total} * now_.count()));
  };
  summary.cpu_utilization_ppm = ppm(cpu_area_, total_.cpu_milli);
  summary.gpu_utilization_ppm = ppm(gpu_area_, total_.get(gpu_resource));
  return std::move(result_);
}

// The queues as a tree: unique names, none named "root", and what check_queue_tree (the live
// API's rules) accepts for each queue among the others.
status validate_queue_tree(std::span<const sim_queue> queues) {
  std::vector<queue> tree;
  tree.reserve(queues.size());
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    const auto& q = queues[i];
    const std::string where = "queues[" + std::to_string(i) + "] (" + q.name + ")";
    if (!names.insert(q.name).second)
      return {errc::invalid_argument, where + ": duplicate queue name"};
    if (q.name == root_queue_name)
      return {errc::invalid_argument,
              where + ": \"root\" names the top of the queue tree, not a queue"};
    queue& spec = tree.emplace_back();
    spec.meta.name = q.name;
    spec.weight = q.weight;
    spec.capability = q.capability;
    spec.guarantee = q.guarantee;
    spec.reclaimable = q.reclaimable;
    spec.state = q.state;
    spec.parent = q.parent;
    spec.priority = q.priority;
  }
  for (std::size_t i = 0; i < tree.size(); ++i) {
    auto errors = check_queue_tree(tree[i], tree);
    if (!errors.empty()) {
      auto s = to_status("Queue", queues[i].name, errors);
      return {errc::invalid_argument, "queues[" + std::to_string(i) + "]: " + s.message()};
    }
  }
  return {};
}

status validate(std::span<const sim_job> jobs, const sim_config& config) {
  auto bad = [](std::string text) { return status{errc::invalid_argument, std::move(text)}; };
  if (config.pod_start_delay < duration{0})
    return bad("pod_start_delay: must be >= 0");
  if (config.starvation_bound < duration{0})
    return bad("starvation_bound: must be >= 0");
  if (auto s = validate_queue_tree(config.queues); !s.ok())
    return s;
  // Only leaf queues take jobs (Volcano's webhook refuses a job in a queue with children).
  std::map<std::string_view, std::string_view> first_child;
  for (const auto& q : config.queues)
    if (!is_child_of_root(q.parent))
      first_child.emplace(q.parent, q.name);
  std::set<std::string, std::less<>> names;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& job = jobs[j];
    const std::string where = "jobs[" + std::to_string(j) + "] (" + job.group.meta.name + ")";
    if (!names.insert(job.group.meta.name.str()).second)
      return bad(where + ": duplicate job name");
    if (job.pods.empty())
      return bad(where + ": has no pods");
    if (job.group.min_member < 1)
      return bad(where + ": min_member must be >= 1");
    if (job.arrival < duration{0})
      return bad(where + ": arrival must be >= 0");
    if (job.group.queue == root_queue_name)
      return bad(where + ": queue \"root\" is the top of the queue tree, not a leaf queue; only "
                         "leaf queues take jobs");
    if (auto child = first_child.find(job.group.queue); child != first_child.end())
      return bad(where + ": queue \"" + job.group.queue + "\" has child queues (\"" +
                 std::string(child->second) + "\"); only leaf queues take jobs");
    for (std::size_t p = 0; p < job.pods.size(); ++p) {
      const auto& sp = job.pods[p];
      const std::string pod_where = where + ".pods[" + std::to_string(p) + "]";
      if (sp.run_time < duration{0} || sp.created_after < duration{0})
        return bad(pod_where + ": run_time and created_after must be >= 0");
      if (sp.spawned_by && *sp.spawned_by >= p)
        return bad(pod_where + ": spawned_by must name an earlier pod of the job");
      if (sp.spec.requests.any_negative())
        return bad(pod_where + ": negative request");
    }
  }
  return {};
}

// Pads `text` to `width` with spaces.
void append_cell(std::string& out, std::string_view text, std::size_t width) {
  out += text;
  out.append(width - text.size(), ' ');
}

} // namespace

result<sim_result> simulate(const cluster_snapshot& cluster, std::span<const sim_job> jobs,
                            const sim_config& config) {
  if (auto s = validate(jobs, config); !s.ok())
    return s;
  simulation sim(cluster, jobs, config);
  return sim.run();
}

std::string render_job_table(std::span<const sim_result> results) {
  static constexpr std::string_view headers[] = {"JOB",     "POLICY",    "PHASE",        "MIN",
                                                 "RUNNING", "SUCCEEDED", "STARTED AFTER"};
  constexpr std::size_t columns = std::size(headers);
  std::vector<std::array<std::string, columns>> rows;
  for (const auto& res : results) {
    for (const auto& j : res.jobs) {
      rows.push_back({j.name, std::string(to_string(res.policy)), std::string(to_string(j.phase)),
                      std::to_string(j.min_member), std::to_string(j.running),
                      std::to_string(j.succeeded),
                      j.time_to_start ? format_duration_ns(j.time_to_start->count()) : "-"});
    }
  }
  std::array<std::size_t, columns> width{};
  for (std::size_t c = 0; c < columns; ++c) {
    width[c] = headers[c].size();
    for (const auto& row : rows)
      width[c] = std::max(width[c], row[c].size());
  }
  // kubectl separates columns by three spaces and does not pad the last one.
  constexpr std::size_t gap = 3;
  std::string out;
  auto emit = [&](auto cell) {
    for (std::size_t c = 0; c < columns; ++c) {
      std::string_view text = cell(c);
      if (c + 1 == columns)
        out += text;
      else
        append_cell(out, text, width[c] + gap);
    }
    out += '\n';
  };
  emit([&](std::size_t c) { return headers[c]; });
  for (const auto& row : rows)
    emit([&](std::size_t c) { return std::string_view(row[c]); });
  return out;
}

std::string render_job_table(const sim_result& result) {
  return render_job_table(std::span<const sim_result>(&result, 1));
}

} // namespace phalanx::scheduler
