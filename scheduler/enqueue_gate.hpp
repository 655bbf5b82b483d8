#pragma once

// The enqueue gate (DESIGN.md section 7; Volcano's enqueue action with the overcommit and
// proportion plugins): may a Pending gang become Inqueue, so that the scheduler starts placing it?
//
// A gang is admitted only when
// 1. its queue is Open (Volcano enqueues nothing from a Closed or Closing queue);
// 2. if it has minResources: the queue stays within its capability,
//      queue allocated + queue inqueue + own minResources <= capability  (capped dimensions);
// 3. if it has minResources: the cluster still holds it after overcommit,
//      cluster inqueue + own minResources <= allocatable * overcommit_factor - used,
//    compared only in the dimensions the gang's minResources names (Volcano's
//    LessEqualWithDimension), so a CPU-only gang is not refused for lack of GPUs.
// A gang without minResources is admitted as soon as its queue is Open, and so is a gang that has
// waited past its sla-waiting-time (scheduler/sla.hpp): 2 and 3 are not asked.
//
// "inqueue" is what admitted gangs still hold a claim on (gate_claim): for a gang admitted and
// not yet started, its minResources less what it has allocated; for a gang started (minMember
// placed once) that still holds minMember pods, the same, clamped at zero (Volcano's
// GetInqueueResource), so a started gang is not counted twice, once as used and once as
// inqueue; for a started gang holding fewer, nothing, as Volcano's overcommit and proportion
// plugins count it: its pods are finishing (a Spark driver done while its executors run), and a
// claim growing as they end would hold back other gangs for room no one will ask for.
//
// The gate is a value built from one consistent view (a scheduling pass); admit() adds each
// admitted gang's minResources to the inqueue sums, so a batch of decisions sees its own earlier
// admissions as Volcano's JobEnqueued hook does. Not thread-safe.

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

/// Volcano's default overcommit-factor, 1.2.
inline constexpr ratio default_overcommit_factor{6, 5};

/// Parses an overcommit factor written as a decimal ("1.2", "1", "1.25", "2.0") into an exact
/// reduced ratio. errc::invalid_argument when the text is not a plain decimal (no sign, no
/// exponent, at most 6 integer and 9 fractional digits) or the value is below 1.0.
result<ratio> parse_overcommit_factor(std::string_view text);

/// "1.2" for 6/5; the exact decimal when the denominator has only the factors 2 and 5 (as every
/// parsed factor does), "num/den" otherwise.
std::string format_factor(ratio factor);

/// Gate configuration.
struct enqueue_config {
  /// Allocatable is multiplied by this before used and inqueue are taken off.
  /// Default: 1.2 (Volcano's overcommit plugin).
  ratio overcommit_factor = default_overcommit_factor;
};

/// What the gate knows about the gang's queue.
struct queue_usage {
  std::string name;
  queue_state state = queue_state::open;
  /// Unlisted dimensions are unlimited.
  resource_limit capability;
  /// Requests of the queue's pods that hold resources.
  resources allocated;
  /// The queue's share of the cluster inqueue amount (see the file comment).
  resources inqueue;
};

enum class admission_code {
  admitted,
  queue_not_open,      // The queue is Closed or Closing; waits until it opens.
  queue_capability,    // The queue's capability would be exceeded; waits for its gangs to finish.
  cluster_overcommit,  // The cluster's overcommitted room is used up; waits for gangs to finish.
};
std::string_view to_string(admission_code c) noexcept;  // "Admitted", "QueueNotOpen", ...
inline constexpr admission_code admission_code_last = admission_code::cluster_overcommit;

struct admission_decision {
  admission_code code = admission_code::admitted;
  /// Empty when admitted. Otherwise names the queue or the cluster, each short resource and the
  /// amounts: `queue "q1" capability: needs cpu 4, has 2 of 10 left` or `cluster overcommit:
  /// needs memory 8Gi, 3Gi left of 1.2 x allocatable`.
  std::string reason;
  /// The short dimensions (requested = the gang's minResources, available = what is left).
  std::vector<shortfall> missing;
  /// Admitted because it waited past its sla-waiting-time, whatever 2 and 3 would say.
  bool waited_past_sla = false;

  bool admitted() const noexcept { return code == admission_code::admitted; }
};

/// What an admitted gang claims at the gate (see the file comment): `started` once it held
/// group.min_member pods; `holding` pods hold room now, and `allocated` is their requests.
resources gate_claim(const pod_group& group, bool started, int64_t holding,
                     const resources& allocated);

class enqueue_gate {
 public:
  /// `allocatable`: sum over live nodes. `used`: requests of every pod holding resources.
  /// `inqueue`: the cluster's inqueue amount (see the file comment). `now`: when the decisions
  /// are made, for gangs' sla-waiting-time.
  enqueue_gate(enqueue_config config, const resources& allocatable, const resources& used,
               const resources& inqueue, timestamp now = {});

  /// The decision for `group` in `queue`, changing nothing.
  admission_decision check(const pod_group& group, const queue_usage& queue) const;

  /// check(); when admitted, adds the gang's minResources to the cluster's inqueue amount and to
  /// `queue.inqueue`, so later decisions see it.
  admission_decision admit(const pod_group& group, queue_usage& queue);

  /// allocatable * overcommit_factor - used - inqueue, per dimension (may be negative).
  resources cluster_room() const;

  const enqueue_config& config() const noexcept { return config_; }

 private:
  enqueue_config config_;
  timestamp now_;
  resources scaled_allocatable_;  // allocatable * overcommit_factor, rounded down.
  resources used_;
  resources inqueue_;
};

} // namespace phalanx::scheduler
