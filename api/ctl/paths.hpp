#pragma once

// The URLs and names of the API's objects as phalanxctl spells them.

#include "api/events.hpp"
#include "api/service.hpp"

#include <string>
#include <string_view>

namespace phalanx::api::ctl {

/// Percent-encodes everything but RFC 3986's unreserved characters (for path segments and query
/// values).
std::string percent_encode(std::string_view s);

/// "/api/v1/namespaces/NS/pods", "/apis/scheduling.volcano.sh/v1beta1/queues". An empty namespace
/// (or a cluster-scoped kind) gives the path of every namespace.
std::string collection_path(resource_kind kind, std::string_view namespace_name);

/// The path of one object. The namespace is ignored for cluster-scoped kinds.
std::string item_path(resource_kind kind, std::string_view namespace_name, std::string_view name);

/// kubectl's resource spelling in messages: "pod", "job.batch.volcano.sh",
/// "queue.scheduling.volcano.sh".
std::string resource_spelling(resource_kind kind);

/// kubectl's -o name form: "job.batch.volcano.sh/tf".
std::string qualified_name(resource_kind kind, std::string_view name);

/// "/api/v1/namespaces/NS/events", "/apis/events.k8s.io/v1/events" (an empty namespace: every
/// namespace's).
std::string events_collection_path(event_version version, std::string_view namespace_name);

/// The path of one Event.
std::string events_item_path(event_version version, std::string_view namespace_name,
                             std::string_view name);

/// kubectl's -o name form of an Event: "event/NAME", "event.events.k8s.io/NAME".
std::string events_qualified_name(event_version version, std::string_view name);

/// True for kinds that live in a namespace (pods, podgroups, jobs).
bool namespaced(resource_kind kind);

} // namespace phalanx::api::ctl
