#pragma once

// Typed calls over k8s::client: the Binding of a pod with its outcome classified for the binder,
// the eviction of a preemption victim, and JSON get/put/post/patch/delete helpers for status
// writes and events.
//
// Thread-safety: each function is as thread-safe as the client (fully).

#include "k8s/client.hpp"

#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace phalanx::k8s {

/// The value at `path` in `v` ({"metadata", "ownerReferences"}), or null when any step is
/// missing or not an object.
const boost::json::value* value_at(const boost::json::value& v,
                                   std::initializer_list<const char*> path);

/// The string at `path` in `v` ({"metadata", "name"}), or "" when any step is missing or the
/// value is not a string: for reading the few fields of an apiserver object a caller needs.
std::string string_at(const boost::json::value& v, std::initializer_list<const char*> path);

/// What became of a Binding, as the binder must act on it.
enum class bind_result {
  bound,               // 201: the pod is now on the node.
  already_bound_here,  // 409, and the pod (same uid) is on this node: an earlier try of ours
                       // landed (a retry after a timeout, a restart re-issuing an intent).
  gone,                // Not ours to bind any more: 404, another pod under that name (uid),
                       // being deleted, or bound to another node (bound_node says which).
  retry,               // Transient: the exchange failed, 401 (the token may have rotated),
                       // 429, 5xx, or a 409 whose cause could not be read. Try again later.
  rejected,            // The apiserver refused for good: 400, 403 (RBAC), 422, a pod with
                       // scheduling gates. Retrying the same request cannot help.
};
std::string_view to_string(bind_result r) noexcept;
inline constexpr bind_result bind_result_last = bind_result::rejected;

struct bind_outcome {
  bind_result result = bind_result::retry;
  /// For gone because bound elsewhere: that node. Otherwise empty.
  std::string bound_node;
  /// Why, for every result but bound: the apiserver's message or the transport error.
  std::string message;
  /// For retry: the answer's Retry-After, if any.
  std::optional<std::chrono::seconds> retry_after;
};

/// POSTs a Binding of pod `ns`/`name` to `node`: /api/v1/namespaces/NS/pods/NAME/binding with
/// metadata {name, uid}. The apiserver checks metadata.uid as a precondition against the pod (a
/// pod deleted and created again under the same name is not bound by mistake) and answers 409
/// for an assigned pod, a uid mismatch, a terminating pod or scheduling gates; it does not
/// check that the node exists. A 409 is resolved by a GET of the pod (see bind_result). The
/// Binding goes through the client's rate limiter.
bind_outcome bind_pod(client& c, const std::string& ns, const std::string& name,
                      const std::string& uid, const std::string& node);

/// GET `path`: the object. Errors: the exchange's, or status_of() for a non-2xx answer;
/// corruption when the body is not JSON.
result<boost::json::value> get_json(client& c, const std::string& path);

/// PUT `body` to `path` (a full update; metadata.resourceVersion in `body` makes it conditional:
/// conflict on a stale one). The object as stored. Errors as get_json.
result<boost::json::value> put_json(client& c, const std::string& path,
                                    const boost::json::value& body);

/// POST `body` to `path` (a create). The object as stored. Errors as get_json; already_exists
/// when the name is taken.
result<boost::json::value> post_json(client& c, const std::string& path,
                                     const boost::json::value& body);

/// The three patch formats the apiserver takes.
enum class patch_type {
  merge,            // RFC 7386, "application/merge-patch+json": lists are replaced whole.
  strategic_merge,  // "application/strategic-merge-patch+json": built-in kinds only; lists
                    // with a merge key (conditions by type) are merged item by item.
  json_patch,       // RFC 6902, "application/json-patch+json": a list of operations.
};
std::string_view to_string(patch_type t) noexcept;
/// The Content-Type of a patch type.
std::string_view content_type_of(patch_type t) noexcept;

/// PATCH `path` with `patch`. The object as stored. Errors as get_json.
result<boost::json::value> patch_json(client& c, const std::string& path,
                                      const boost::json::value& patch, patch_type type);

/// PATCH the pod's status subresource (/api/v1/namespaces/NS/pods/NAME/status), e.g. a
/// PodScheduled condition; strategic merge by default so that one condition is merged by its
/// type instead of replacing the list. The pod as stored.
result<boost::json::value> patch_pod_status(client& c, const std::string& ns,
                                            const std::string& name,
                                            const boost::json::value& patch,
                                            patch_type type = patch_type::strategic_merge);

/// POST a core/v1 Event to /api/v1/namespaces/NS/events (the Event's own metadata.namespace
/// must be `ns`). The Event as stored.
result<boost::json::value> create_event(client& c, const std::string& ns,
                                        const boost::json::value& event);

/// DELETE `path`, with the uid as a precondition when given (DeleteOptions.preconditions.uid: a
/// pod re-created under the same name is not deleted) and DeleteOptions.gracePeriodSeconds when
/// given (0 on a pod: removed at once, without waiting for its kubelet to stop it; a force delete).
/// Default: no uid precondition; no grace period sent (the object's own default applies, a pod's
/// spec.terminationGracePeriodSeconds). Errors as get_json; not_found when it is already gone;
/// conflict when the uid does not match.
status delete_object(client& c, const std::string& path, const std::string& uid = "",
                     std::optional<std::int64_t> grace_period_seconds = std::nullopt);

/// What evict_pod wrote. `deleted` decides; the other two are best effort, for the caller to log.
struct evict_outcome {
  /// ok: the pod is deleted (unbound: gone now) or terminating (bound: its kubelet stops it
  /// within its grace period). not_found: it was already gone; the eviction counts as done.
  /// conflict: the pod under that name has another uid; the victim is gone and a new pod took
  /// its name: done, nothing was deleted. Any other error (unavailable, unauthenticated...):
  /// nothing is known to be deleted; evict again later.
  status deleted;
  /// ok, or why the DisruptionTarget condition was not written (conflict when the pod under that
  /// name has another uid; not_found when it is gone).
  status condition_written;
  /// ok, or why the Evict event was not written. Not attempted when the condition write found
  /// the pod gone or another pod under its name: no eviction is happening to report.
  status event_written;
};

/// Evicts a preemption victim as Volcano's scheduler and kube-scheduler's preemption do, writing
/// in this order:
///  1. the condition DisruptionTarget (status True, reason PreemptionByScheduler, `message`,
///     lastTransitionTime now) through patch_pod_status (strategic merge: the pod's other
///     conditions stay). The patch carries metadata.uid, so it is refused on another pod that
///     took the name;
///  2. a core/v1 Event on the pod: type Warning, reason Evict, `message`, source.component and
///     reportingComponent `component` (default "volcano", the name Volcano's recorder reports
///     under), reportingInstance `instance` (default empty: not sent, as Volcano's recorder
///     leaves it; kube_world's events send the replica's identity), involvedObject {v1 Pod, ns,
///     name, uid, resourceVersion after step 1}, firstTimestamp = lastTimestamp = now, count 1;
///  3. DELETE of the pod with `uid` as precondition and the default grace period: a bound pod
///     is marked terminating (metadata.deletionTimestamp) and its kubelet stops it; an unbound
///     one is removed at once.
/// Steps 1 and 2 never stop step 3. `uid` should be the victim's (empty: no precondition, any
/// pod under that name is evicted). Three requests, none retried here; evicting again is safe
/// (the condition is rewritten, one more event, the delete answers not_found or ok). Thread-safe.
///
/// Where Volcano's scheduler (pkg/scheduler/cache, defaultEvictor.Evict) differs:
///  - it posts the event first, then writes Ready=False (reason Evict) and DisruptionTarget with a
///    full status update of its cached copy (a stale resourceVersion fails and aborts the
///    eviction), and returns without deleting when the conditions are already there (a retried
///    eviction then never deletes). We write DisruptionTarget alone (the kubelet owns Ready) by a
///    patch, and always go on to the delete;
///  - its event message is "Pod is evicted, because of <reason>" and its DisruptionTarget
///    message kube-scheduler's "<schedulerName>: preempting to accommodate a higher priority
///    pod"; here both are `message`, the caller's words;
///  - its DELETE has no uid precondition (a pod re-created under the name could be deleted);
///  - client-go's recorder names the event "<pod>.<unix nanoseconds, hex>"; we send
///    metadata.generateName "<pod>." (the apiserver appends a random suffix and keeps the name
///    within bounds);
///  - Volcano's SchedulerCache.Evict also posts a Normal "Evict" event on the PodGroup: that one
///    is the caller's, it knows the group.
evict_outcome evict_pod(client& c, const std::string& ns, const std::string& name,
                        const std::string& uid, const std::string& message,
                        const std::string& component = "volcano",
                        const std::string& instance = "");

} // namespace phalanx::k8s
