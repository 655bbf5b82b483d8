#pragma once

// Applying manifests to a test cluster as `kubectl apply` would for the kinds the tests and the
// load tester use (CRDs, RBAC, namespaces, ServiceAccounts, Queues, PodGroups, Jobs, Pods, Nodes,
// PriorityClasses): create, or replace when the object exists. Not a general apply: no merge,
// no server-side apply, a fixed table of kinds.

#include "k8s/client.hpp"

#include "scheduler/result.hpp"

#include <boost/json/value.hpp>

#include <string>

namespace phalanx::k8s::testing {

/// The collection an object of this apiVersion and kind is created in ("/api/v1/namespaces/NS/
/// pods"). Errors: invalid_argument for a kind outside the table.
result<std::string> collection_of(const boost::json::value& object);

/// Creates `object`, or replaces it (with the stored resourceVersion) when it exists.
status apply(client& c, const boost::json::value& object);

/// The same for every document of a YAML or JSON manifest text, and of the file at `path`.
status apply_text(client& c, std::string_view text);
status apply_file(client& c, const std::string& path);

} // namespace phalanx::k8s::testing
