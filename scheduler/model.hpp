#pragma once

// The scheduling model (DESIGN.md section 3): nodes, pods, PodGroups, queues and Volcano jobs as
// plain values. Field names follow Volcano's CRDs and Kubernetes' core types, in snake_case.
// Every module converts to and from these; nothing invalid gets in (validation.hpp).

#include "scheduler/object_uid.hpp"
#include "scheduler/resources.hpp"
#include "scheduler/shared_string.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::scheduler {

/// Wall-clock instants and durations. The core never reads a clock: callers pass `now`.
using timestamp = std::chrono::sys_time<std::chrono::nanoseconds>;
using duration = std::chrono::nanoseconds;

/// Labels or annotations: key/value pairs kept sorted by key, keys unique.
///
/// The pairs live in one immutable block (a header, 16 bytes per pair, then the values) shared
/// by every copy (pods are copied into API views, watch events and job expansions), and a Volcano
/// pod carries a dozen keys, so a list of string pairs was a quarter of the memory held per pod.
/// Keys point into a process-wide table of interned keys (they repeat in every pod of a job); a
/// key longer than 128 bytes stays in the block. A change builds a new block, except that a
/// change of one pair in a shared block makes a delta: that pair and a reference to the shared
/// block (each pod of a job task is its task's sets plus its own index). Build a whole set at
/// once with label_set::builder. Reads hand out string_views: a value's stays valid while this
/// label_set (or a copy sharing the block) is unchanged and alive, a key's at least as long. A
/// const label_set may be read from any thread; changing one is as thread-safe as changing a
/// vector.
class label_set {
 public:
  using entry = std::pair<std::string_view, std::string_view>;
  class entries_view;
  class builder;

  label_set() = default;
  /// A later entry with the same key replaces an earlier one.
  label_set(std::initializer_list<entry> entries);
  label_set(const label_set& other) noexcept;
  label_set(label_set&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  label_set& operator=(const label_set& other) noexcept;
  label_set& operator=(label_set&& other) noexcept;
  ~label_set();

  /// The value of `key`, or nullopt.
  std::optional<std::string_view> find(std::string_view key) const noexcept;
  bool contains(std::string_view key) const noexcept { return find(key).has_value(); }
  /// True when some key starts with `prefix` (one search: the keys are sorted).
  bool has_key_with_prefix(std::string_view prefix) const noexcept;
  /// Inserts or replaces (builds a new block unless the value is already there; a delta when
  /// the block is shared with another set).
  void set(std::string_view key, std::string_view value);
  /// Removes `key`; false when absent.
  bool erase(std::string_view key);

  /// The pairs in key order.
  entries_view entries() const noexcept;
  bool empty() const noexcept { return size() == 0; }
  std::size_t size() const noexcept;
  /// Bytes of the block this set holds (0 when empty); a delta's own, not its base's. For memory
  /// accounting.
  std::size_t block_bytes() const noexcept;
  /// True when the block holds one pair over another set's shared block (see set()).
  bool is_delta() const noexcept;
  /// True when both share one block (so equal without comparing); for tests and accounting.
  bool shares_with(const label_set& other) const noexcept {
    return block_ != nullptr && block_ == other.block_;
  }

  friend bool operator==(const label_set& a, const label_set& b) noexcept;

 private:
  struct block;
  explicit label_set(block* b) noexcept : block_(b) {}
  std::size_t lower_bound(std::string_view key) const noexcept;
  // Rebuilds the block with `removed` (0 or 1) pairs at `at` replaced by `added` (or by nothing).
  void replace_range(std::size_t at, std::size_t removed, const entry* added);

  block* block_ = nullptr; // Null when empty; otherwise holds one reference.
};

/// The pairs of a label_set in key order, as string_views into its block.
class label_set::entries_view {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = entry;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = entry;

    iterator() = default;
    entry operator*() const noexcept { return entry_at(block_, index_); }
    entry operator[](difference_type n) const noexcept {
      return entry_at(block_, static_cast<std::size_t>(static_cast<difference_type>(index_) + n));
    }
    iterator& operator++() noexcept {
      ++index_;
      return *this;
    }
    iterator operator++(int) noexcept {
      auto old = *this;
      ++index_;
      return old;
    }
    iterator& operator--() noexcept {
      --index_;
      return *this;
    }
    iterator operator--(int) noexcept {
      auto old = *this;
      --index_;
      return old;
    }
    iterator& operator+=(difference_type n) noexcept {
      index_ = static_cast<std::size_t>(static_cast<difference_type>(index_) + n);
      return *this;
    }
    iterator& operator-=(difference_type n) noexcept { return *this += -n; }
    friend iterator operator+(iterator i, difference_type n) noexcept { return i += n; }
    friend iterator operator+(difference_type n, iterator i) noexcept { return i += n; }
    friend iterator operator-(iterator i, difference_type n) noexcept { return i -= n; }
    friend difference_type operator-(const iterator& a, const iterator& b) noexcept {
      return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept {
      return a.index_ == b.index_;
    }
    friend auto operator<=>(const iterator& a, const iterator& b) noexcept {
      return a.index_ <=> b.index_;
    }

   private:
    friend class entries_view;
    // The block, not the view: an iterator stays valid after the view it came from is gone.
    iterator(const block* b, std::size_t index) : block_(b), index_(index) {}
    const block* block_ = nullptr;
    std::size_t index_ = 0;
  };

  iterator begin() const noexcept { return {block_, 0}; }
  iterator end() const noexcept { return {block_, size_}; }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  entry operator[](std::size_t i) const noexcept { return at(i); }
  entry front() const noexcept { return at(0); }
  entry back() const noexcept { return at(size_ - 1); }
  entry at(std::size_t i) const noexcept { return entry_at(block_, i); }

 private:
  static entry entry_at(const block* b, std::size_t i) noexcept;
  friend class label_set;
  entries_view(const block* b, std::size_t size) : block_(b), size_(size) {}
  const block* block_ = nullptr;
  std::size_t size_ = 0;
};

/// Collects pairs, then makes a label_set with one allocation. The views added must stay valid
/// until build(). A later pair with the same key replaces an earlier one. Reusable: build()
/// leaves it empty with its capacity.
class label_set::builder {
 public:
  builder() = default;
  explicit builder(const label_set& start);
  void reserve(std::size_t n) { pairs_.reserve(n); }
  void clear() noexcept { pairs_.clear(); }
  builder& add(std::string_view key, std::string_view value) {
    pairs_.emplace_back(key, value);
    return *this;
  }
  label_set build();
  /// Like build(), for a decoder of many similar sets (the pods of a job task differ only in
  /// their index): pairs equal to the set this builder last built share its block, and pairs
  /// one pair apart from it (that pair replaced or added) make a delta over it, as
  /// label_set::set does. Keeps that last set alive as long as the builder.
  label_set build_sharing();

 private:
  void sort_unique();

  std::vector<entry> pairs_;
  label_set last_; // The last full set build_sharing() made.
};

/// Metadata shared by every object (a subset of Kubernetes' ObjectMeta). The namespace is a
/// shared_string because every pod of a namespace names it (whoever builds pods makes them share
/// it: a job's expansion, the store decoder's and the registry's pools); the uid is an
/// object_uid, 16 bytes with no heap block for a UUID. The name is a shared_string too, though
/// no two objects of a kind share one: 8 bytes in place of a std::string's 32, whose inline
/// buffer holds 15 characters, fewer than most pod names have ("<job>-<task>-<index>", a
/// ReplicaSet's "<name>-<hash>-<suffix>"), so their text took a heap block either way (the same
/// size class: 17-32 bytes). Copies of an object, which the actors pass around, share it.
struct object_meta {
  shared_string name;
  shared_string namespace_name; // Empty for cluster-scoped kinds (nodes, queues).
  object_uid uid;
  label_set labels;
  label_set annotations;
  timestamp creation_time{};
  /// Increases with every accepted change of the object; assigned by the runtime.
  uint64_t resource_version = 0;
  friend bool operator==(const object_meta&, const object_meta&) = default;
};

/// A hash of an object's namespace and name taken as a pair, the same however the two are held
/// (a "<ns>/<name>" key split at its slash, two shared_strings), so tables keyed by either form
/// can be searched with the other.
std::size_t hash_namespaced_name(std::string_view namespace_name, std::string_view name) noexcept;

// ---------------------------------------------------------------------------------------------
// Placement constraints

enum class taint_effect { no_schedule, prefer_no_schedule, no_execute };
std::string_view to_string(taint_effect e) noexcept;  // "NoSchedule", ...
/// Parses Kubernetes' spelling ("NoSchedule", "PreferNoSchedule", "NoExecute"), case-sensitive;
/// nullopt otherwise. Every *_from_string below is the exact inverse of its to_string.
std::optional<taint_effect> taint_effect_from_string(std::string_view text) noexcept;
inline constexpr taint_effect taint_effect_last = taint_effect::no_execute;

struct taint {
  std::string key;
  std::string value;
  taint_effect effect = taint_effect::no_schedule;
  friend bool operator==(const taint&, const taint&) = default;
};

enum class toleration_operator { equal, exists };
std::string_view to_string(toleration_operator op) noexcept;  // "Equal", "Exists"
std::optional<toleration_operator> toleration_operator_from_string(std::string_view text) noexcept;
inline constexpr toleration_operator toleration_operator_last = toleration_operator::exists;

struct toleration {
  std::string key;  // Empty with operator Exists tolerates every taint.
  toleration_operator op = toleration_operator::equal;
  std::string value;
  std::optional<taint_effect> effect;  // nullopt tolerates every effect.
  std::optional<int64_t> toleration_seconds;
  friend bool operator==(const toleration&, const toleration&) = default;
};

enum class selector_operator { in, not_in, exists, does_not_exist, gt, lt };
std::string_view to_string(selector_operator op) noexcept;  // "In", "NotIn", ...
std::optional<selector_operator> selector_operator_from_string(std::string_view text) noexcept;
inline constexpr selector_operator selector_operator_last = selector_operator::lt;

/// One requirement of a node selector term. Gt and Lt take exactly one integer value.
struct node_selector_requirement {
  std::string key;
  selector_operator op = selector_operator::in;
  std::vector<std::string> values;
  friend bool operator==(const node_selector_requirement&,
                         const node_selector_requirement&) = default;
};

/// The requirements of a term are ANDed. `match_fields` supports the key "metadata.name".
struct node_selector_term {
  std::vector<node_selector_requirement> match_expressions;
  std::vector<node_selector_requirement> match_fields;
  friend bool operator==(const node_selector_term&, const node_selector_term&) = default;
};

/// Kubernetes' LabelSelector: every matchLabels pair and every matchExpressions requirement hold.
/// The operators are In, NotIn, Exists and DoesNotExist (validation refuses Gt and Lt). An empty
/// selector matches every label set; "no selector" is spelled as an absent optional where it
/// differs (a pod affinity term without one matches no pod).
struct label_selector {
  label_set match_labels;
  std::vector<node_selector_requirement> match_expressions;
  friend bool operator==(const label_selector&, const label_selector&) = default;
};

/// A preferredDuringSchedulingIgnoredDuringExecution entry of node affinity: `weight` (1-100)
/// added to the score of nodes the term matches (a term without requirements matches none).
struct weighted_node_selector_term {
  int32_t weight = 1;
  node_selector_term preference;
  friend bool operator==(const weighted_node_selector_term&,
                         const weighted_node_selector_term&) = default;
};

/// One term of podAffinity or podAntiAffinity: the pods it names (by labels, in some namespaces)
/// and the topology domain they share with the pod (nodes with equal values of `topology_key`).
struct pod_affinity_term {
  /// Absent: the term matches no pod (Kubernetes' nil labelSelector).
  std::optional<label_selector> selector;
  /// Namespaces the pods may be in. With no namespaces and no namespace selector: the pod's own.
  std::vector<std::string> namespaces;
  /// Namespaces by their labels. Only the empty selector (every namespace) can be evaluated:
  /// namespaces' labels are not known to the scheduler (docs/NOTES.md, "Pods beside pods").
  std::optional<label_selector> namespace_selector;
  std::string topology_key;
  friend bool operator==(const pod_affinity_term&, const pod_affinity_term&) = default;
};

/// A preferredDuringSchedulingIgnoredDuringExecution entry: `weight` (1-100) added to the score
/// of nodes where the term holds.
struct weighted_pod_affinity_term {
  int32_t weight = 1;
  pod_affinity_term term;
  friend bool operator==(const weighted_pod_affinity_term&,
                         const weighted_pod_affinity_term&) = default;
};

/// A container port the pod asks the node for (a non-zero hostPort).
struct host_port {
  std::string protocol = "TCP";  // TCP, UDP or SCTP.
  std::string host_ip;           // Empty means 0.0.0.0: every address of the node.
  int32_t port = 0;              // 1-65535.
  friend bool operator==(const host_port&, const host_port&) = default;
};

/// One of spec.topologySpreadConstraints: how unevenly the pods it selects may spread over the
/// domains of `topology_key` (kube-scheduler's PodTopologySpread).
struct topology_spread_constraint {
  int32_t max_skew = 1;  // At least 1.
  std::string topology_key;
  /// whenUnsatisfiable: DoNotSchedule (true, a filter) or ScheduleAnyway (false, a score).
  bool do_not_schedule = true;
  /// The pods counted, in the pod's namespace; absent selects none (the pod itself may count).
  std::optional<label_selector> selector;
  /// With fewer eligible domains than this, the global minimum is taken as 0. DoNotSchedule only.
  std::optional<int32_t> min_domains;
  /// nodeAffinityPolicy Honor (default): only nodes passing the pod's node affinity and selector
  /// count as domains; Ignore: every node.
  bool honor_node_affinity = true;
  /// nodeTaintsPolicy Honor: only nodes whose taints the pod tolerates count; Ignore (default).
  bool honor_node_taints = false;
  /// matchLabelKeys: the pod's values of these labels are added to the selector (as In). Kept
  /// apart from `selector`, as written: the scheduler adds them when it evaluates the constraint
  /// (what an apiserver merged into a pod's selector is taken out on reading, api/wire.cpp).
  std::vector<std::string> match_label_keys;
  friend bool operator==(const topology_spread_constraint&,
                         const topology_spread_constraint&) = default;
};

/// Where a pod may run. Pods built from one template share one instance (see pod::constraints),
/// which also lets the planner treat them as one class.
struct placement_constraints {
  label_set node_selector;
  /// requiredDuringSchedulingIgnoredDuringExecution: terms are ORed; empty means any node.
  std::vector<node_selector_term> required_node_affinity;
  /// preferredDuringSchedulingIgnoredDuringExecution of node affinity: only scores.
  std::vector<weighted_node_selector_term> preferred_node_affinity;
  std::vector<toleration> tolerations;
  /// spec.schedulingGates, by name: while any is left the pod is neither placed nor counted
  /// (Kubernetes' PodSchedulingReadiness). Gates may only be removed after creation.
  std::vector<std::string> scheduling_gates;
  /// spec.affinity.podAffinity and podAntiAffinity, required (every term holds) and preferred.
  std::vector<pod_affinity_term> required_pod_affinity;
  std::vector<pod_affinity_term> required_pod_anti_affinity;
  std::vector<weighted_pod_affinity_term> preferred_pod_affinity;
  std::vector<weighted_pod_affinity_term> preferred_pod_anti_affinity;
  /// The hostPorts of the pod's containers, in order, without duplicates.
  std::vector<host_port> host_ports;
  std::vector<topology_spread_constraint> topology_spread;
  bool empty() const noexcept {
    return node_selector.empty() && required_node_affinity.empty() &&
           preferred_node_affinity.empty() && tolerations.empty() && scheduling_gates.empty() &&
           !places_beside_pods();
  }
  /// True when where other pods run matters to this pod: pod (anti-)affinity, host ports or
  /// topology spread.
  bool places_beside_pods() const noexcept {
    return !required_pod_affinity.empty() || !required_pod_anti_affinity.empty() ||
           !preferred_pod_affinity.empty() || !preferred_pod_anti_affinity.empty() ||
           !host_ports.empty() || !topology_spread.empty();
  }
  friend bool operator==(const placement_constraints&, const placement_constraints&) = default;
};

// ---------------------------------------------------------------------------------------------
// Objects

struct node {
  object_meta meta;
  resources allocatable;
  std::vector<taint> taints;
  bool unschedulable = false;
  friend bool operator==(const node&, const node&) = default;
};

// One byte: beside it a pod keeps its container restart count where the phase's other bytes were
// (see pod).
enum class pod_phase : uint8_t { pending, running, succeeded, failed, unknown };
std::string_view to_string(pod_phase p) noexcept;  // "Pending", "Running", ...
std::optional<pod_phase> pod_phase_from_string(std::string_view text) noexcept;
inline constexpr pod_phase pod_phase_last = pod_phase::unknown;

/// True for Succeeded and Failed: the pod holds no resources any more.
constexpr bool is_terminal(pod_phase p) noexcept {
  return p == pod_phase::succeeded || p == pod_phase::failed;
}

/// The resources of one container, as written in the pod spec.
struct container_resources {
  std::string name;
  resources requests;
  resources limits;
  friend bool operator==(const container_resources&, const container_resources&) = default;
};

/// The requests the scheduler charges for a pod, as Kubernetes computes them: per dimension the
/// larger of the sum over containers and the largest init container, plus the pod overhead, and
/// one unit of the "pods" dimension.
resources effective_requests(const std::vector<container_resources>& containers,
                             const std::vector<container_resources>& init_containers,
                             const resources& overhead = {});

struct pod {
  object_meta meta;
  // The four names are shared_strings: the pods of a job task share them (shared_string.hpp).
  // With the pod's own name, the namespace and node name also shared_strings, the uid an
  // object_uid and spec_json a shared_string, the pod is 208 bytes: 224 with make_shared's
  // control block (16 bytes), jemalloc's 224-byte class (232 bytes took a 256 slot, 304 a 320).
  // pod_layout (model_test) checks it.
  shared_string group; // PodGroup name in the pod's namespace; empty: the pod is its own gang.
  shared_string role;  // Task role ("ps", "worker", "driver"); empty when the gang has no roles.
  resources requests;  // effective_requests(); requests.pods is 1.
  int32_t priority = 0;
  // Runtime state (with node_name, start_time and finish_time below); beside `priority` it fills
  // what would be padding, which keeps a pod and its shared_ptr's count small (see above).
  pod_phase phase = pod_phase::pending;
  /// How many times its containers restarted, init containers included (Kubernetes' restartCount
  /// summed over the pod's container statuses). Saturates at 65535 (add_restarts): 16 bits fit
  /// beside the one-byte phase, where an int32 would make the pod 216 bytes (a 256-byte slot);
  /// a container restarting every 10 s, faster than a kubelet's back-off lets it, reaches it
  /// after a week.
  uint16_t restart_count = 0;
  shared_string priority_class_name;
  shared_string scheduler_name;
  /// Shared by pods of one template; nullptr means no constraints.
  std::shared_ptr<const placement_constraints> constraints;
  /// The pod's spec as JSON, kept for display; shared by the pods of one job task. May be empty.
  /// A shared_string rather than a shared pointer to a string: 8 bytes instead of 16, and one
  /// block per distinct spec.
  shared_string spec_json;

  // Runtime state (and `phase` above).
  // Empty until bound; never changes once set (I1). The pods of a node share its block.
  shared_string node_name;
  timestamp start_time{}; // When it went Running; zero before.
  timestamp finish_time{};// When it went Succeeded or Failed; zero before.

  bool is_bound() const noexcept { return !node_name.empty(); }
  /// The pod's constraints; a shared empty instance when `constraints` is null.
  const placement_constraints& placement() const noexcept;
  /// True while the pod has scheduling gates: it waits, unplaced and uncounted, until they go.
  bool is_gated() const noexcept { return constraints && !constraints->scheduling_gates.empty(); }
};

/// Kubernetes' PodScheduled reason and message for a pod held back by scheduling gates, as the
/// apiserver writes them when such a pod is created.
inline constexpr std::string_view scheduling_gated_reason = "SchedulingGated";
inline constexpr std::string_view scheduling_gated_message =
    "Scheduling is blocked due to non-empty scheduling gates";

/// What changes in a pod once it exists: the fields a binding or a phase change writes (the
/// store's state update, storage::encode_pod_state). The runtime's catalog keeps them beside the
/// pod it created, so a state change does not copy the whole pod, which other actors share.
struct pod_runtime {
  pod_phase phase = pod_phase::pending;
  /// pod::restart_count.
  uint16_t restart_count = 0;
  shared_string node_name;
  timestamp start_time{};
  timestamp finish_time{};
  uint64_t resource_version = 0;

  bool is_bound() const noexcept { return !node_name.empty(); }
  friend bool operator==(const pod_runtime&, const pod_runtime&) = default;
};
/// A pod's graceful deletion under way: Kubernetes' metadata.deletionTimestamp (when its grace
/// period ends) and deletionGracePeriodSeconds. A deleted pod that is bound and not finished
/// keeps its node's room while its containers stop; its kubelet removes it once they have
/// stopped, at the latest at the deadline. Kept beside the pod, not in it: a few pods are
/// terminating at a time, and every pod would pay for the fields (docs/NOTES.md "Graceful
/// deletion").
struct pod_termination {
  timestamp deadline{};
  int64_t grace_seconds = 0;
  friend bool operator==(const pod_termination&, const pod_termination&) = default;
};
/// A pod's grace period when neither its spec (terminationGracePeriodSeconds) nor the delete
/// names one: Kubernetes' default.
inline constexpr int64_t default_termination_grace_seconds = 30;

/// `count` plus `more` restarts, saturated at the largest count a pod holds (pod::restart_count);
/// `more` < 0 counts as 0.
constexpr uint16_t add_restarts(uint16_t count, int64_t more) noexcept {
  constexpr int64_t most = std::numeric_limits<uint16_t>::max();
  const int64_t sum = int64_t{count} + std::clamp<int64_t>(more, 0, most);
  return static_cast<uint16_t>(std::min(sum, most));
}

/// The runtime fields of `p`.
pod_runtime runtime_of(const pod& p);
/// Sets the runtime fields of `p` to `r`.
void set_runtime(pod& p, const pod_runtime& r);

enum class pod_group_phase { pending, inqueue, running, unknown, completed };
std::string_view to_string(pod_group_phase p) noexcept;  // Volcano's: "Pending", "Inqueue", ...
std::optional<pod_group_phase> pod_group_phase_from_string(std::string_view text) noexcept;
inline constexpr pod_group_phase pod_group_phase_last = pod_group_phase::completed;

/// The minimum number of pods of one role for a gang to be ready.
struct role_minimum {
  std::string role;
  int32_t min = 0;
  friend bool operator==(const role_minimum&, const role_minimum&) = default;
};

/// A Volcano PodGroup (scheduling.volcano.sh/v1beta1).
struct pod_group {
  object_meta meta;
  int32_t min_member = 1;
  std::vector<role_minimum> min_task_member;  // Sorted by role, roles unique.
  resources min_resources;
  std::string queue = "default";
  std::string priority_class_name;
  int32_t priority = 0;  // Resolved from priority_class_name.
  /// How long it is willing to wait to be enqueued, from the annotation sla-waiting-time
  /// (scheduler/sla.hpp, read where a PodGroup is decoded, restored or made from a job); zero:
  /// none.
  duration sla_waiting_time{};
  friend bool operator==(const pod_group&, const pod_group&) = default;
};

enum class queue_state { open, closed, closing };
std::string_view to_string(queue_state s) noexcept;  // "Open", "Closed", "Closing"
std::optional<queue_state> queue_state_from_string(std::string_view text) noexcept;
inline constexpr queue_state queue_state_last = queue_state::closing;

/// A Volcano Queue (scheduling.volcano.sh/v1beta1). Cluster-scoped.
struct queue {
  object_meta meta;
  int32_t weight = 1;            // 1..65535.
  resource_limit capability;     // Hard cap; unlisted dimensions are unlimited.
  resources guarantee;           // Reserved for this queue; deserved never drops below it.
  resource_limit deserved;       // Volcano's spec.deserved (capacity plugin); unlisted = unset.
  bool reclaimable = true;
  queue_state state = queue_state::open;
  std::string parent;            // Empty for a child of the root.
  int32_t priority = 0;
  friend bool operator==(const queue&, const queue&) = default;
};

/// The name of the queue that exists from the start and takes gangs that name none.
inline constexpr std::string_view default_queue_name = "default";

/// Whether pods of a priority class may preempt lower-priority pods (Kubernetes'
/// spec.preemptionPolicy): PreemptLowerPriority (the default) or Never.
enum class preemption_policy { preempt_lower_priority, never };
std::string_view to_string(preemption_policy p) noexcept;  // "PreemptLowerPriority", "Never"
std::optional<preemption_policy> preemption_policy_from_string(std::string_view text) noexcept;
inline constexpr preemption_policy preemption_policy_last = preemption_policy::never;

/// A PriorityClass (scheduling.k8s.io/v1). Cluster-scoped. Pods, PodGroups and jobs name it;
/// its value is resolved when they are created, as Kubernetes' Priority admission does, so a
/// class changed or deleted later leaves the priorities it gave.
struct priority_class {
  object_meta meta;
  int32_t value = 0;
  /// Objects naming no class take this class's value. At most one class is the default.
  bool global_default = false;
  std::string description;
  preemption_policy preemption = preemption_policy::preempt_lower_priority;
  friend bool operator==(const priority_class&, const priority_class&) = default;
};

/// The highest value a class not reserved for the system may have (Kubernetes'
/// HighestUserDefinablePriority); larger values belong to the system classes.
inline constexpr int32_t highest_user_priority = 1'000'000'000;
/// Names starting with this are reserved for the system classes.
inline constexpr std::string_view system_priority_class_prefix = "system-";
/// Kubernetes' system classes: the apiserver creates them at start, and they cannot be deleted.
struct system_priority_class {
  std::string_view name;
  int32_t value;
};
inline constexpr std::array<system_priority_class, 2> system_priority_classes{{
    {"system-cluster-critical", 2 * highest_user_priority},
    {"system-node-critical", 2 * highest_user_priority + 1000},
}};
/// The system class of that name, or null.
const system_priority_class* find_system_priority_class(std::string_view name) noexcept;

/// One lifecycle policy of a Volcano job or task: on `event` (or any of `events`), or on a
/// container exit code, take `action` (RestartJob, AbortJob, CompleteJob, ...).
struct lifecycle_policy {
  std::string action;
  std::string event;
  std::vector<std::string> events;
  std::optional<int32_t> exit_code;
  std::optional<duration> timeout;
  friend bool operator==(const lifecycle_policy&, const lifecycle_policy&) = default;
};

/// One task of a Volcano job: `replicas` pods from one template.
struct job_task {
  std::string name;
  int32_t replicas = 0;
  std::optional<int32_t> min_available;  // Defaults to replicas.
  /// The pod template: requests, constraints, priority class, labels, annotations and spec_json
  /// of the task's pods (meta.name and group are filled in when the job expands).
  pod pod_template;
  std::vector<lifecycle_policy> policies;
  std::optional<int32_t> max_retry;
  /// dependsOn.name: the tasks that must run before this one's pods start.
  std::vector<std::string> depends_on;
  /// dependsOn.iteration: "any" (one of the tasks named suffices, when it names several) or
  /// "all" (also when empty). Kept as written; validation refuses other values.
  std::string depends_on_iteration;
};

/// A volume of a Volcano job (spec.volumes): a claim mounted in every pod at `mount_path`.
struct job_volume {
  std::string mount_path;
  std::string volume_claim_name;  // An existing claim; empty when the job makes its own.
  bool has_volume_claim = false;  // spec.volumes[].volumeClaim: the claim the job makes.
  friend bool operator==(const job_volume&, const job_volume&) = default;
};

/// A Volcano job (batch.volcano.sh/v1alpha1).
struct job {
  object_meta meta;
  std::string queue = "default";
  std::string scheduler_name;
  std::string priority_class_name;
  int32_t priority = 0;
  std::optional<int32_t> min_available;  // Defaults to the sum of the tasks' replicas.
  int32_t max_retry = 3;
  std::vector<job_task> tasks;
  std::vector<lifecycle_policy> policies;
  /// plugins: {"ssh": [], "svc": ["--publish-not-ready-addresses"], "env": []}, sorted by name.
  std::vector<std::pair<std::string, std::vector<std::string>>> plugins;
  std::vector<job_volume> volumes;
  /// spec.minSuccess: the job completes once this many pods succeeded. Default: unset.
  std::optional<int32_t> min_success;
  /// spec.ttlSecondsAfterFinished: a finished job may be deleted this long after. Default: unset.
  std::optional<int32_t> ttl_seconds_after_finished;
  bool suspended = false;
  /// The job's spec as JSON, kept for display. May be empty.
  shared_string spec_json;
  /// The resource version of the pods its creation made, which a store keeps as the job itself
  /// (storage/README.md) and a start makes again with this version; 0: meta.resource_version.
  /// Set apart when an update changes the job (its version moves, its pods' does not).
  uint64_t expansion_version = 0;
};

/// Volcano's labels and annotations on the objects a job creates.
inline constexpr std::string_view job_name_key = "volcano.sh/job-name";
inline constexpr std::string_view job_namespace_key = "volcano.sh/job-namespace";
inline constexpr std::string_view queue_name_key = "volcano.sh/queue-name";
inline constexpr std::string_view task_spec_key = "volcano.sh/task-spec";
inline constexpr std::string_view task_index_key = "volcano.sh/task-index";
inline constexpr std::string_view job_version_key = "volcano.sh/job-version";
inline constexpr std::string_view pod_group_annotation = "scheduling.k8s.io/group-name";

} // namespace phalanx::scheduler
