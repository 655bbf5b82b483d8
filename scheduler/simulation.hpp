#pragma once

// A discrete-event simulation of a cluster under a scheduling policy, on a simulated clock
// (integer nanoseconds since the start of the run). Events sit in a priority queue (time, then
// arrival order), so a week of trace costs the number of events, not the number of ticks; the
// trace replayer and the demo reuse it.
//
// What is simulated:
// - jobs arrive at given times, each a PodGroup and its pods; a pod is created at the job's
//   arrival (plus an optional offset), or, if it is "spawned", when its parent pod starts
//   running (the Spark driver creating its executors);
// - a placed pod holds its node's resources from the bind; it goes Running `pod_start_delay`
//   later, runs `run_time`, and succeeds; a pod that spawned others also waits for all of them to
//   succeed (the driver finishes when its executors do); with `wait_for_gang`, run_time only
//   starts counting once the job has had min_member pods running (TensorFlow or MPI workers wait
//   for their peers);
// - a job completes when every pod of it has succeeded.
//
// Policies:
// - pod_by_pod: like the default kube-scheduler. Pending pods in FIFO order (priority
//   descending, then creation time, then job and pod order), each placed on its own (the planner
//   with a one-pod gang) wherever it fits now; no gang semantics, no enqueue gate.
// - gang_fifo: whole gangs in arrival order, each planned with min_pods = minMember (and every
//   role minimum); strict head-of-line: while the oldest unplaced gang cannot be placed, no later
//   gang is tried. A gang that can never fit on this cluster (planner: unresolvable) is skipped
//   rather than blocking forever.
// - phalanx: the full policy. Pending gangs pass the enqueue gate (overcommit factor, queue
//   state and capability); a refused gang does not hold back the gangs after it, of its queue or
//   another (the live gate has no head of line). Admitted gangs are placed queue by queue in
//   queue order (priority, then lowest share allocated / deserved, with deserved from
//   compute_deserved over the queues' weights, capabilities, guarantees and requests, recomputed
//   every pass), and within a queue in gang order. A gang that cannot be placed does not
//   stop the gangs after it (backfill). No gang starves, by the rule the live runtime applies,
//   computed by scheduler/room_reservation.hpp's functions:
//   - a gang is blocked from the first pass that could not place its minimum after it was
//     admitted (blocked_since; the refusals of the gate do not count), and starving once
//     is_starving(blocked_since, now, starvation_bound) holds (a zero bound: never). The bound
//     is checked on time: the run wakes up at blocked_since + bound even if nothing else happens
//     then (a live gang checks at its next failed plan, which its backoff brings soon);
//   - a starving gang that holds no reservation reserves the nodes choose_reserved_nodes picks
//     for its minimum, skipping every node another gang reserved (at most one gang reserves a
//     node: the first starving one in pass order, queue order then gang order, keeps it). When
//     none are left it tries again at its next blocked pass. It keeps its nodes (it does not
//     choose again each pass) until its minimum is placed, which ends every reservation of it;
//   - a node reserved for gang G keeps withheld_room(free, reserved amount) from every other
//     gang: their gang plans and their elastic extras see its free room less that amount, while
//     G sees the node whole. Room accumulates on G's nodes as their pods end; other gangs keep
//     starting elsewhere, and on a reserved node in the room beyond the reservation.
//   The price: while room drains toward a reservation it may idle (EASY backfill avoids that
//   with runtime estimates, which a scheduler does not have).
// - volcano_like: phalanx without reservations (as phalanx with starvation_bound 0). Volcano's
//   allocate works so: small gangs may pass a big one for ever, each release taken by whichever
//   small gang plans next (volcano #3373).
//
// Gang policies place a job's pods that do not exist yet (spawned later, or created after a
// delay) as reservations - placeholders, as YuniKorn does for Spark: they count toward
// minMember and hold their node's resources; when the pod is created it binds to its reserved
// node. Pods beyond minMember (elastic extras) are placed when room exists, after every unstarted
// gang was tried, one pod at a time, to the first elastic job in gang order; under phalanx and
// volcano_like never beyond the queue's capability.
//
// Preemption (sim_config::preemption; phalanx and volcano_like): the live runtime's rule within a
// queue (Volcano's `preempt`, docs/NOTES.md "Preemption"), chosen by scheduler/preemption.hpp's
// plan_preemption as the registry chooses it:
// - who asks: an admitted gang that has not started, whose minimum found no placement in a pass
//   (not unresolvable), and whose candidate pods all exist (a gang with pods not created yet,
//   placeholders, does not ask). Extras never preempt;
// - the candidates: the bound and running pods of its own queue's gangs of strictly lower
//   priority, each victim_gang with its minMember and its ready pods (bound, running or
//   succeeded; a gang with role minimums shows none spare: plan_preemption's gang rule knows no
//   roles, so such a gang can only go whole). The preemptor plans on the room a node would grant
//   it: a node another gang reserved keeps the whole reservation from it (the node ledger's rule),
//   its own reserved nodes it sees whole;
// - a plan found is applied at once: the victims stop, their nodes get their room back, and the
//   preemptor's minimum is placed where the plan put it (the live runtime waits for the
//   evictions). A victim gang left with running pods (it lost only pods above minMember) keeps
//   running, and its evicted pods are pending again, their run starting over. A gang that lost
//   every running pod restarts from scratch: every pod unplaced (placeholders and succeeded pods
//   too), back among the admitted gangs not started, its run time counting again from its next
//   start, so its JCT includes the wasted run;
// - a failed ask is not repeated until room was released or a pod of the queue was placed;
// - evictions are counted per job and per run, with the GPU time they wasted: per evicted pod,
//   its GPUs times how long it had been Running.
// Only strictly lower priority is ever evicted, so an evicted gang never evicts back.
//
// Reclaim (sim_config::reclaim; phalanx and volcano_like): the live runtime's rule across queues
// (Volcano's `reclaim`, the registry's do_preempt), through the same plan_preemption:
// - who asks: a gang that may ask for preemption (above), when preemption in its own queue found
//   nothing or is off;
// - its queue must stay within its deserved share with the gang's minimum (the first minMember
//   pods it would place, as the registry counts them): allocated + minimum fits deserved, with no
//   limit on the pod count (the registry's as_share);
// - the candidates: the bound and running pods, of any priority (plan_preemption gets priority
//   INT32_MAX, so the lowest still go first), of every other reclaimable queue that holds more
//   than its deserved share; each such queue is a victim_queue with its allocation, deserved
//   share and guarantee, so it loses pods only while it still holds more than its share, and
//   never goes below its guarantee. Gangs with role minimums show no spare pods, as above;
// - a plan found is applied as a preemption's is (the same bookkeeping: restarts, I7, wasted GPU
//   time), and counted apart: sim_summary::reclaims, reclaim_evicted_pods and
//   reclaim_wasted_gpu_ms, sim_job_result::reclaimed_pods and reclaim_evicted_pods; a job whose
//   ask failed ends its reason with "No reclaim: " and why;
// - a failed ask is not repeated until room was released, a pod of any queue was placed (a new
//   candidate, and a queue whose allocation may now exceed its share) or a job arrived (deserved
//   shares follow allocated + pending demand, which only arrivals and releases change).
// No loop: a reclaimer ends within its share, and its victims' queues at or above theirs but for
// the last pod, so neither can reclaim from the other afterwards. Deserved shares and
// allocations are those of the leaf queues, as the registry compares them; an ancestor above its
// own share is not looked at (Volcano's capacity plugin would also check the ancestors).
//
// Queue tree (sim_queue::parent; "" or "root" is the top): deserved shares are computed down the
// tree by compute_deserved, a parent standing for its subtree. Only leaf queues take jobs; a
// queue under an ancestor that is not Open admits nothing new (its gangs' reason says which
// ancestor), as the live registry's effective state Closed does. Queue order in admission and
// allocation compares leaf queues only, each by its own share of its own deserved (Volcano's
// hierarchical proportion orders siblings level by level; here a leaf's deserved already carries
// its ancestors' shares, so a leaf far below its share still comes first). A parent's capability
// caps its subtree's deserved, but the gate checks only the leaf's own capability, as the live
// queue actor knows only its own spec.
//
// phalanx and volcano_like admission: leaf queues take turns by share, counting their admitted
// gangs' claims as if allocated, so the overcommit room is shared by weight rather than filled by
// the first queue.
//
// Deadlock detection: when no event is pending and a job is unfinished, nothing can change any
// more. A stuck job that holds resources (some pod placed, gang not complete) is Deadlocked; one
// that holds nothing is Pending (starving). Each carries the reason of its last failed attempt.
//
// Invariants are checked after every event when `check_invariants` is on: no node over capacity
// and the simulation's own per-node recount equals the snapshot's free amounts (DESIGN.md I2,
// I4); a pod is placed at most once (I1); and, for the gang policies, at rest (after each
// scheduling pass) every gang has 0 or >= minMember pods placed, each role its minimum (I3); a
// gang that lost pods to a preemption or a reclaim still has minMember pods placed unless it lost
// all of them (I7, checked at each eviction); and under phalanx every reserved node's gang is one
// that has not started and holds it.
// Violations are reported in the result, never thrown.
//
// Cost: a scheduling pass runs only at instants where something changed (an arrival, a pod
// created, resources released, a blocked gang's bound reached), and a placement that failed is
// not retried until a release or the end of a reservation (which gives the other gangs the room
// it withheld) gave room on a node where one of its pods fits (the room a gang sees only shrinks
// in between: a new reservation only withholds more; this assumes the planner cannot place with
// less room what it could not place with more, which holds for its fit checks and is an
// approximation only where its bounded search gives up). With preemption, a blocked gang's ask
// (plan_preemption: a few planner runs) is repeated only after a release or a placement in its
// queue; with reclaim, a failed reclaim only after a release, a placement in any queue or an
// arrival. A week of trace with 20,000 jobs and 680,000 events on 300 nodes runs in 10-20 s per
// policy on one core.
//
// Pure and deterministic: the same inputs and seed give the same result. Not thread-safe within
// one run; runs are independent.

#include "scheduler/enqueue_gate.hpp"
#include "scheduler/model.hpp"
#include "scheduler/node_view.hpp"
#include "scheduler/order.hpp"
#include "scheduler/planner.hpp"
#include "scheduler/result.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

enum class sim_policy { pod_by_pod, gang_fifo, volcano_like, phalanx };
/// "pod-by-pod", "gang-fifo", "volcano-like", "phalanx".
std::string_view to_string(sim_policy p) noexcept;
inline constexpr sim_policy sim_policy_last = sim_policy::phalanx;

/// A job's state at the end of a run.
enum class sim_job_phase {
  pending,     // Holds nothing: not arrived, not admitted, or waiting for room (starving).
  running,     // Some pods placed; the run ended (end_time) before it could finish.
  completed,   // Every pod succeeded.
  deadlocked,  // Holds resources, cannot finish, and nothing will ever change.
};
std::string_view to_string(sim_job_phase p) noexcept;  // "Pending", "Running", ...
inline constexpr sim_job_phase sim_job_phase_last = sim_job_phase::deadlocked;

/// One pod of a simulated job.
struct sim_pod {
  /// Name, role, requests (including pods: 1), priority and constraints. Phase and node are
  /// ignored.
  pod spec;
  /// How long the pod runs once Running (see wait_for_gang). Default: 0.
  duration run_time{};
  /// Index (in the job's pods) of the pod that creates this one when it starts running; must be
  /// smaller than this pod's own index. nullopt: created with the job.
  std::optional<std::size_t> spawned_by;
  /// For a pod created with the job: how long after the job's arrival. Default: 0.
  duration created_after{};
};

/// One simulated job.
struct sim_job {
  /// minMember, minTaskMember, minResources, queue, priority, name and uid. A zero creation time
  /// is replaced by the arrival instant (the simulation's epoch is timestamp{}).
  pod_group group;
  std::vector<sim_pod> pods;
  /// When the job arrives, since the start of the run. Default: 0.
  duration arrival{};
  /// True: each pod's run_time counts from the later of its start and the first instant the job
  /// had min_member pods running. Default: false.
  bool wait_for_gang = false;
};

/// A queue, for the phalanx and volcano_like policies. Jobs naming a queue not listed get an Open
/// queue of weight 1 without capability or guarantee, under the root.
struct sim_queue {
  std::string name;
  int32_t weight = 1;
  resource_limit capability;
  resources guarantee;
  queue_state state = queue_state::open;
  int32_t priority = 0;
  /// Reclaim may take this queue's running pods when it holds more than its deserved share (the
  /// queue's spec.reclaimable). Default: true.
  bool reclaimable = true;
  /// The parent queue's name: "" or "root" for a child of the root, else a queue of
  /// sim_config::queues. A queue with children takes no jobs. Default: "".
  std::string parent = {};
};

struct sim_config {
  /// Default: phalanx.
  sim_policy policy = sim_policy::phalanx;
  /// From bind to Running. Default: 0.
  duration pod_start_delay{};
  /// phalanx and volcano_like: the queues. Default: none (every job's queue is created on
  /// demand).
  std::vector<sim_queue> queues;
  /// phalanx and volcano_like: the enqueue gate. Default: overcommit factor 1.2.
  enqueue_config gate;
  /// phalanx: how long a gang may stay blocked (its minimum placed nowhere, counted from the
  /// first pass after admission that could not place it) before it reserves the nodes where it
  /// fits soonest (see the file comment). Zero: no gang ever reserves, the policy is then
  /// volcano_like. Ignored by the other policies. Default: 6 hours, as the live runtime's
  /// scheduling.starvationBound.
  duration starvation_bound = std::chrono::hours(6);
  /// phalanx and volcano_like: a gang blocked in a pass evicts running pods of lower-priority
  /// gangs of its own queue to start (see the file comment), as the live runtime's
  /// scheduling.preemption. Ignored by the other policies. Default: false.
  bool preemption = false;
  /// phalanx and volcano_like: a gang blocked in a pass, for which preemption found nothing (or
  /// is off), evicts running pods of other queues above their deserved share while its own
  /// queue stays within its own (see the file comment), as the live runtime's scheduling.reclaim.
  /// Ignored by the other policies. Default: false.
  bool reclaim = false;
  /// Planner settings for every policy. Default: planner defaults.
  planner_config planner;
  /// Seeds the planner's RNG. Default: 1.
  uint64_t seed = 1;
  /// Stop at this simulated time; unfinished jobs then report Running or Pending, never
  /// Deadlocked. Default: run until no event is left.
  std::optional<duration> end_time;
  /// Check the invariants after every event (see the file comment). Default: true.
  bool check_invariants = true;
};

/// A job at the end of a run.
struct sim_job_result {
  std::string name;
  sim_job_phase phase = sim_job_phase::pending;
  int32_t min_member = 0;
  /// Pods Running at the end.
  int32_t running = 0;
  int32_t succeeded = 0;
  /// Pods placed (bound, reserved, running or finished) at the end.
  int32_t placed = 0;
  /// When the job first had min_member pods running, since the start of the run (a job evicted
  /// whole and started again keeps its first start).
  std::optional<duration> started_at;
  /// started_at - arrival: the queueing delay.
  std::optional<duration> time_to_start;
  /// When the last pod succeeded, since the start of the run.
  std::optional<duration> completed_at;
  /// completed_at - arrival: the job completion time (JCT).
  std::optional<duration> completion_time;
  /// For a job that did not complete: why (the last refusal or planner detail, and the
  /// reservation it holds).
  std::string reason;
  /// The job's queue (pod_group::queue).
  std::string queue;
  /// The sum of the requests of all its pods.
  resources requests;
  /// phalanx: when it first reserved nodes as a starving gang, since the start of the run;
  /// nullopt when it never did.
  std::optional<duration> reserved_at;
  /// phalanx: the names of the nodes it reserved, in node order (kept after the reservation
  /// ended).
  std::vector<std::string> reserved_nodes;
  /// Preemption and reclaim: its pods evicted, over the run (a pod evicted twice counts twice).
  int32_t evicted_pods = 0;
  /// Preemption and reclaim: how many times it lost every running pod and started again from
  /// scratch.
  int32_t restarts = 0;
  /// Preemption and reclaim: GPU time its evicted pods had run, GPU-milliseconds (GPUs requested
  /// x time Running, per evicted pod).
  int64_t wasted_gpu_ms = 0;
  /// Of evicted_pods and wasted_gpu_ms: those evicted by reclaim (for a job of another queue).
  int32_t reclaim_evicted_pods = 0;
  int64_t reclaim_wasted_gpu_ms = 0;
  /// Preemption: pods of other jobs of its queue evicted for it.
  int32_t preempted_pods = 0;
  /// Reclaim: pods of other queues evicted for it.
  int32_t reclaimed_pods = 0;
};

/// Resources in use from `at` until the next sample (a step function).
struct utilization_sample {
  duration at{};
  int64_t cpu_milli = 0;
  int64_t gpu = 0;
};

/// The name of the resource counted as GPUs.
inline constexpr std::string_view gpu_resource = "nvidia.com/gpu";

struct sim_summary {
  int64_t jobs = 0;
  int64_t completed = 0;
  int64_t running = 0;
  int64_t pending = 0;
  int64_t deadlocked = 0;
  /// phalanx: gangs that reserved nodes as starving gangs.
  int64_t reserved = 0;
  /// Preemption and reclaim: preemption plans applied and reclaim plans applied (each evicted at
  /// least one pod); then, over both, pods evicted, jobs that lost at least one pod, whole-gang
  /// evictions (restarts), and the GPU time the evicted pods had run (GPU-milliseconds).
  int64_t preemptions = 0;
  int64_t reclaims = 0;
  int64_t evicted_pods = 0;
  int64_t evicted_jobs = 0;
  int64_t restarts = 0;
  int64_t wasted_gpu_ms = 0;
  /// Of evicted_pods and wasted_gpu_ms: those evicted by reclaim.
  int64_t reclaim_evicted_pods = 0;
  int64_t reclaim_wasted_gpu_ms = 0;
  /// Over completed jobs; nullopt when none completed.
  std::optional<duration> mean_jct;
  /// Nearest-rank 95th percentile over completed jobs.
  std::optional<duration> p95_jct;
  /// Mean time_to_start over jobs that started; nullopt when none did.
  std::optional<duration> mean_queueing_delay;
  /// The instant of the last processed event.
  duration makespan{};
  /// Time-weighted mean use over [0, makespan], in parts per million of the cluster's total
  /// (0 when the cluster has none of the resource or the makespan is 0).
  int64_t cpu_utilization_ppm = 0;
  int64_t gpu_utilization_ppm = 0;
};

/// A queue at the end of a run.
struct sim_queue_result {
  std::string name;
  std::string parent;
  /// Its deserved share as the last scheduling pass computed it (compute_deserved down the
  /// tree); a parent's is what its whole subtree deserves.
  resources deserved;
};

struct sim_result {
  sim_policy policy = sim_policy::phalanx;
  /// One per input job, in input order.
  std::vector<sim_job_result> jobs;
  /// phalanx and volcano_like: one per queue, those of sim_config::queues first in their order,
  /// then those made for jobs naming a queue not listed. Empty under the other policies.
  std::vector<sim_queue_result> queues;
  sim_summary summary;
  /// Use over time: a sample at 0 and at every instant the use changed.
  std::vector<utilization_sample> utilization;
  /// Invariant violations, each a sentence; empty when every check held.
  std::vector<std::string> violations;
  int64_t events_processed = 0;
  /// True when the run stopped at end_time with events still pending.
  bool stopped_at_end_time = false;
};

/// Runs `jobs` on a copy of `cluster` under `config`. Nodes may start with usage (free below
/// allocatable): it counts as used for the whole run and is never released.
/// errc::invalid_argument for malformed input, the message naming the job or queue and the rule:
/// a job without pods or with min_member < 1, a spawned_by that is not an earlier pod of the same
/// job, duplicate job names, negative times; two queues of one name, a queue named "root", a
/// queue tree check_queue_tree refuses (unknown parent, a cycle, a child's guarantee above its
/// parent's); a job in a queue with child queues, or in "root" (Volcano's webhook refuses such a
/// job, so it is not input a run can take). The run itself never fails; what went wrong inside
/// is in the result (deadlocks, violations).
result<sim_result> simulate(const cluster_snapshot& cluster, std::span<const sim_job> jobs,
                            const sim_config& config);

/// The per-job table the demo prints, columns aligned as kubectl aligns them:
///   JOB       POLICY       PHASE        MIN   RUNNING   SUCCEEDED   STARTED AFTER
///   spark-1   pod-by-pod   Deadlocked   3     1         0           -
/// STARTED AFTER is time_to_start in Go's duration format, "-" when the job never started.
std::string render_job_table(const sim_result& result);

/// Several runs in one table (the same jobs under each policy), rows run by run.
std::string render_job_table(std::span<const sim_result> results);

} // namespace phalanx::scheduler
