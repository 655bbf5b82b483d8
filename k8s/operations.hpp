#pragma once

// Typed calls over k8s::client: the Binding of a pod with its outcome classified for the binder,
// and JSON get/put/post/patch/delete helpers for status writes and events.
//
// Thread-safety: each function is as thread-safe as the client (fully).

#include "k8s/client.hpp"

#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace phalanx::k8s {

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
/// pod re-created under the same name is not deleted). Errors as get_json; not_found when it is
/// already gone; conflict when the uid does not match.
status delete_object(client& c, const std::string& path, const std::string& uid = "");

} // namespace phalanx::k8s
