#pragma once

// Discovery documents, what kubectl reads before anything else (TOOLCHAIN.md): /api
// (APIVersions), /apis (APIGroupList), /apis/{group} (APIGroup), /api/v1 and
// /apis/{group}/{version} (APIResourceList) and /version. The OpenAPI documents are
// api/openapi.hpp's.

#include <boost/json/value.hpp>

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace phalanx::api {

/// The version /version reports: Kubernetes 1.32's API, as Phalanx serves it.
inline constexpr std::string_view served_kubernetes_major = "1";
inline constexpr std::string_view served_kubernetes_minor = "32";
/// /version's gitVersion, and the version /openapi/v2 states.
inline constexpr std::string_view served_git_version = "v1.32.0-phalanx";

/// /api: {"kind":"APIVersions","versions":["v1"],...}; `server_address` is host:port.
boost::json::value api_versions(std::string_view server_address);
/// /apis: the groups scheduling.volcano.sh (v1beta1), batch.volcano.sh (v1alpha1),
/// scheduling.k8s.io (v1) and events.k8s.io (v1).
boost::json::value api_group_list();
/// /apis/{group}; nullopt for a group Phalanx does not serve.
std::optional<boost::json::value> api_group(std::string_view group);
/// /api/v1 (group "") and /apis/{group}/{version}; nullopt when not served.
std::optional<boost::json::value> api_resource_list(std::string_view group,
                                                    std::string_view version);
/// /version.
boost::json::value version_info();
/// Whether Events (read-only, api/events.hpp) are served in a group-version: core/v1 and
/// events.k8s.io/v1.
bool serves_events(std::string_view group, std::string_view version);
/// Every group-version served, core/v1 ("", "v1") first.
std::vector<std::pair<std::string_view, std::string_view>> served_group_versions();

} // namespace phalanx::api
