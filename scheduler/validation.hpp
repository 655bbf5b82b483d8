#pragma once

// Validation of model objects (DESIGN.md section 3: "Every decoder validates and returns an error
// that names the field; nothing invalid gets into the model"). Errors read like Kubernetes'
// field errors (k8s.io/apimachinery/pkg/util/validation/field):
//   spec.minMember: Invalid value: -1: must be greater than or equal to 0
//   metadata.name: Required value: name is required
//   spec.tasks[1].name: Duplicate value: "worker"
//   spec.state: Unsupported value: "Paused": supported values: "Open", "Closed"
//
// Rules follow Kubernetes for names, labels, annotations and resources, and Volcano's admission
// webhooks (volcano-sh/volcano pkg/webhooks/admission/{jobs,podgroups,queues}) for jobs,
// PodGroups and queues. Where we differ from Volcano it is said at the validator. Validators
// never stop at the first error: they return every error, in field order.
//
// Pure functions of their arguments; thread-safe.

#include "scheduler/model.hpp"
#include "scheduler/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::scheduler {

// ---------------------------------------------------------------------------------------------
// Limits

/// RFC 1123 label: object names of jobs, namespaces, task names.
inline constexpr std::size_t dns1123_label_max_length = 63;
/// RFC 1123 subdomain: most object names (pods, nodes, PodGroups, queues).
inline constexpr std::size_t dns1123_subdomain_max_length = 253;
/// The name part of a label key or annotation key, and a label value.
inline constexpr std::size_t qualified_name_max_length = 63;
inline constexpr std::size_t label_value_max_length = 63;
/// Kubernetes' limit on the total size of an object's annotations (keys plus values).
inline constexpr std::size_t annotations_max_total_bytes = 256 * 1024;
/// The largest amount of any single resource quantity we accept: 2^53. Every such amount is exact
/// in a JSON number (clients that read numbers as doubles lose nothing), and sums of millions of
/// them stay far from the int64 range where resources' arithmetic saturates. It is 9 * 10^12
/// cores in millicores and 8 PiB in bytes.
inline constexpr int64_t max_resource_amount = int64_t{1} << 53;
/// The most pods one job may make (the sum of its tasks' replicas), and the largest minMember or
/// minTaskMember of a PodGroup. Kubernetes bounds neither; Phalanx holds a job's pods in memory
/// and writes a PodGroup's placeholders one per missing member, so a count taken from a request
/// body is bounded like the body itself: `replicas: 2147483647` would otherwise ask for
/// terabytes. Half a million pods is beyond the largest jobs run today (tens of thousands).
inline constexpr int64_t max_pods_per_job = 500'000;
/// Queue weights, as Volcano's queue CRD bounds them.
inline constexpr int32_t min_queue_weight = 1;
inline constexpr int32_t max_queue_weight = 65535;

// ---------------------------------------------------------------------------------------------
// Field errors

/// What kind of rule a field broke (Kubernetes' field.ErrorType).
enum class field_error_type {
  required,
  invalid,
  not_supported,
  duplicate,
  too_long,
  too_many,
  forbidden
};
/// Kubernetes' text: "Required value", "Invalid value", "Unsupported value", "Duplicate value",
/// "Too long", "Too many", "Forbidden".
std::string_view to_string(field_error_type t) noexcept;
std::optional<field_error_type> field_error_type_from_string(std::string_view text) noexcept;
inline constexpr field_error_type field_error_type_last = field_error_type::forbidden;

/// One broken rule of one field.
struct field_error {
  field_error_type type = field_error_type::invalid;
  /// The field, in the object's JSON spelling: "spec.tasks[1].name", "spec.capability[cpu]".
  std::string path;
  /// The offending value as Kubernetes prints it: a string quoted like Go's %q ("\"worker\""), a
  /// number bare ("0"). Empty when the error shows no value (required, forbidden, too long).
  std::string value;
  /// The rule in plain words: "must be greater than or equal to 1".
  std::string detail;

  /// "<path>: <type>[: <value>][: <detail>]", as Kubernetes' field.Error prints it. The value is
  /// never printed for required, forbidden and too_long.
  std::string to_string() const;

  friend bool operator==(const field_error&, const field_error&) = default;
};

using field_errors = std::vector<field_error>;

/// Builders, one per type, like Kubernetes' field.Required(), field.Invalid(), ...
field_error required_error(std::string path, std::string detail);
field_error invalid_error(std::string path, std::string_view value, std::string detail);
field_error invalid_error(std::string path, int64_t value, std::string detail);
/// Detail: `supported values: "Open", "Closed"`.
field_error not_supported_error(std::string path, std::string_view value,
                                std::span<const std::string_view> supported);
field_error duplicate_error(std::string path, std::string_view value);
field_error duplicate_error(std::string path, int64_t value);
/// Detail: "must have at most <max> bytes".
field_error too_long_error(std::string path, std::size_t max_bytes);
/// Value: the actual count; detail: "must have at most <max> items".
field_error too_many_error(std::string path, int64_t actual, int64_t max);
field_error forbidden_error(std::string path, std::string detail);

/// `text` quoted as Go's %q does: printable ASCII and valid UTF-8 as is, `"` and `\` escaped,
/// control characters as \n, \t, ... or \xNN, invalid UTF-8 bytes as \xNN.
std::string go_quote(std::string_view text);

/// ok when `errors` is empty; else errc::invalid_argument with Kubernetes' message form:
/// `Queue "q1" is invalid: spec.weight: Invalid value: 0: ...` and, for several errors,
/// `... is invalid: [first, second]`.
status to_status(std::string_view kind, std::string_view name, const field_errors& errors);

// ---------------------------------------------------------------------------------------------
// String rules. Each returns the broken rules in plain words; empty when `value` is valid.

/// RFC 1123 label: at most 63 characters of [a-z0-9-], starting and ending alphanumeric.
std::vector<std::string> is_dns1123_label(std::string_view value);
/// RFC 1123 subdomain: at most 253 characters, labels of [a-z0-9-] joined by '.'.
std::vector<std::string> is_dns1123_subdomain(std::string_view value);
/// A label or annotation key: an optional DNS subdomain prefix and '/', then a name of at most
/// 63 characters of [A-Za-z0-9-_.], starting and ending alphanumeric.
std::vector<std::string> is_qualified_name(std::string_view value);
/// A label value: empty, or at most 63 characters like a qualified name's name part.
std::vector<std::string> is_label_value(std::string_view value);
/// A resource name a request or capacity may use: a standard dimension (cpu, memory,
/// ephemeral-storage, pods), "hugepages-<size>" with a positive quantity as size, or an extended
/// resource: a qualified name with a domain prefix outside kubernetes.io ("nvidia.com/gpu").
std::vector<std::string> is_resource_name(std::string_view value);

// ---------------------------------------------------------------------------------------------
// Building blocks for decoders: each appends the errors of one part under `path`.

/// Keys are qualified names, values label values. `path` is e.g. "metadata.labels".
void validate_labels(const label_set& labels, std::string_view path, field_errors& out);
/// Keys are qualified names; keys plus values total at most annotations_max_total_bytes.
void validate_annotations(const label_set& annotations, std::string_view path, field_errors& out);
/// Every dimension has a valid resource name and an amount in [0, max_resource_amount].
/// Paths are "<path>[<resource>]".
void validate_resources(const resources& amounts, std::string_view path, field_errors& out);
/// Every capped dimension has a valid resource name and a cap in [0, max_resource_amount].
void validate_resource_limit(const resource_limit& limit, std::string_view path, field_errors& out);
/// nodeSelector, required node affinity, pod affinity and anti-affinity (Kubernetes' rules and
/// messages: label selectors with In, NotIn, Exists and DoesNotExist only, namespaces DNS-1123
/// labels, topologyKey a required qualified name, weights 1-100), tolerations and topology
/// spread constraints (Kubernetes' rules and messages: maxSkew and minDomains above zero,
/// minDomains only with DoNotSchedule, topologyKey required, no two constraints of one
/// topologyKey and whenUnsatisfiable, matchLabelKeys qualified names, only with a labelSelector
/// and none in it, and here none twice) of a pod spec; `spec_path` is the pod spec ("spec" or
/// "spec.tasks[0].template.spec"). Host ports are checked where containers are read
/// (api/wire.cpp): their errors name the container and port.
void validate_placement(const placement_constraints& constraints, std::string_view spec_path,
                        field_errors& out);

// ---------------------------------------------------------------------------------------------
// Objects

/// A node: name (DNS subdomain, required), no namespace, labels, annotations, allocatable
/// (names and amounts), taints (key, value, effect; no two with the same key and effect).
field_errors validate(const node& n);

/// A pod: name (DNS subdomain) and namespace (DNS label) required, labels, annotations, group
/// (PodGroup name, DNS subdomain, optional), role (task name, DNS label, optional), requests
/// (names, amounts, and exactly one "pods"), priority class, scheduler name, node name,
/// placement constraints.
field_errors validate(const pod& p);

/// A PodGroup. `declared_pods`, when known, is the number of pods that belong to the group.
///
/// - spec.minMember >= 0. Volcano accepts 0 (neither its PodGroup webhook nor its CRD bounds
///   minMember, and its job controller creates PodGroups with minMember 0 for jobs whose tasks
///   all have minAvailable 0), meaning "no gang constraint": we follow it. A negative count has no
///   meaning and is rejected (Volcano does not check).
/// - spec.minMember <= declared_pods when known: the gang could never be ready.
/// - spec.minTaskMember: roles are DNS-1123 labels (Volcano task names), unique, sorted (the
///   model's invariant), each minimum >= 0, and <= declared_pods when known, as is their sum.
///   The sum is NOT required to be <= minMember: Volcano does not require it (a job's
///   minAvailable may be set below the sum of its tasks' minAvailable); readiness then needs
///   both, so the effective minimum is max(minMember, sum).
/// - spec.minResources: names and amounts; spec.queue: DNS subdomain, required;
///   spec.priorityClassName: DNS subdomain, optional.
field_errors validate(const pod_group& group, std::optional<int32_t> declared_pods = std::nullopt);

/// As above with the declared pods themselves: additionally every role of minTaskMember must be
/// the role of some declared pod, with at least that many pods of the role.
field_errors validate(const pod_group& group, std::span<const pod* const> declared_pods);

/// A queue: name (DNS subdomain, required), no namespace; spec.weight in [1, 65535] (Volcano's
/// webhook: "queue weight must be a positive integer"); capability, guarantee and deserved with
/// valid names and amounts in [0, max_resource_amount]; guarantee <= deserved <= capability per
/// dimension where both are set (Volcano's documented rule for the capacity plugin); state Open
/// or Closed (Volcano's webhook accepts only those; Closing is set by the scheduler while a
/// queue drains, never asked for); parent a DNS subdomain and not the queue itself.
field_errors validate(const queue& q);

/// A PriorityClass, as kube-apiserver validates one: name (DNS subdomain, required), no
/// namespace; a name with the "system-" prefix only for Kubernetes' system classes, with their
/// values and not the global default; otherwise value at most highest_user_priority.
/// preemptionPolicy is checked when read (an enum here).
field_errors validate(const priority_class& c);

/// The rules of the queue tree (Volcano's hierarchical queues, `spec.parent`) for `q`, about to
/// be created or to replace the queue of the same name in `existing` (every stored queue; an old
/// version of `q` there is ignored). Meant to run once validate(q) found nothing: q's own fields
/// are validate()'s (a queue naming itself as its parent fails both). Errors, in this order:
/// - spec.parent: the parent is "root", empty, or a queue of `existing`;
/// - spec.parent: q is not its own ancestor through `existing` ("a -> b -> a");
/// - spec.guarantee.resource[<name>]: q's guarantee is at most its parent's in every dimension
///   where the parent has one (a positive amount); and where it is, the guarantees of all the
///   parent's children, q's new one included, add up to at most the parent's;
/// - spec.guarantee.resource[<name>]: where q has a guarantee, its children's guarantees add up
///   to at most it (q lowering its guarantee below what it promised its children).
/// A parent without a guarantee in a dimension does not bound its children there: compute_deserved
/// then guarantees the parent the children's sum. Queues of `existing` that already break a rule
/// are not reported; a walk up a broken chain of `existing` stops where it breaks.
field_errors check_queue_tree(const queue& q, std::span<const queue> existing);

/// A Volcano job, with Volcano's admission rules:
/// - metadata.name a DNS-1123 label (Volcano requires a qualified name of at most 63 characters;
///   object names must also be lowercase subdomains, and together those make a label);
/// - spec.minAvailable >= 0 and <= the sum of the tasks' replicas; spec.maxRetry >= 0;
/// - spec.tasks non-empty; task names DNS-1123 labels, unique; replicas >= 0; minAvailable in
///   [0, replicas]; maxRetry >= 0;
/// - every pod name "<job>-<task>-<index>" fits in 63 characters. Volcano checks this with the
///   task's position in the list as index; we check the largest replica index (replicas - 1),
///   which is the longest name the job really creates;
/// - lifecycle policies (job and task): event/events or exitCode, not both, not neither; events
///   among "*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted",
///   "TaskFailed", "JobUpdated"; "*" alone; no event twice; exit codes non-zero and unique;
///   actions among "AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob",
///   "CompleteJob", "ResumeJob" (RestartPartition is not built: the model has no partitions;
///   Volcano checks actions only on event policies, we check them on exit-code policies too);
///   timeouts >= 0;
/// - each task's pod template: labels, annotations, requests, placement, priority class;
/// - spec.queue a DNS subdomain (required), spec.schedulerName and spec.priorityClassName DNS
///   subdomains (optional); plugin names non-empty, unique and among Volcano's plugins (env,
///   svc, ssh, tensorflow, mpi, pytorch, hcclrank, ray), their arguments as each plugin's flags
///   read them, an mpi job's master task and a ray job's head task among its tasks.
/// - spec.volumes: each with a mountPath, none twice; each with a volumeClaim or a
///   volumeClaimName (a DNS subdomain). Both together is validate_creation's rule only.
field_errors validate(const job& j);

/// What Volcano's webhook checks of a job only at its creation (validateIO): a volume names an
/// existing claim (volumeClaimName) or describes one to make (volumeClaim), not both. Once the
/// job exists, a volume of the second kind carries the name its controller gave the claim
/// (scheduler/job_volumes.hpp), so the job as stored, updated or read back from the apiserver
/// has both; Volcano's update rule ignores that name.
field_errors validate_creation(const job& j);

} // namespace phalanx::scheduler
