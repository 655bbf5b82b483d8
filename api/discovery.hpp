#pragma once

// Discovery documents, what kubectl reads before anything else (TOOLCHAIN.md): /api
// (APIVersions), /apis (APIGroupList), /apis/{group} (APIGroup), /api/v1 and
// /apis/{group}/{version} (APIResourceList), /version.

#include <boost/json/value.hpp>

#include <optional>
#include <string_view>

namespace phalanx::api {

/// The version /version reports: Kubernetes 1.32's API, as Phalanx serves it.
inline constexpr std::string_view served_kubernetes_major = "1";
inline constexpr std::string_view served_kubernetes_minor = "32";

/// /api: {"kind":"APIVersions","versions":["v1"],...}; `server_address` is host:port.
boost::json::value api_versions(std::string_view server_address);
/// /apis: the groups scheduling.volcano.sh (v1beta1) and batch.volcano.sh (v1alpha1).
boost::json::value api_group_list();
/// /apis/{group}; nullopt for a group Phalanx does not serve.
std::optional<boost::json::value> api_group(std::string_view group);
/// /api/v1 (group "") and /apis/{group}/{version}; nullopt when not served.
std::optional<boost::json::value> api_resource_list(std::string_view group,
                                                    std::string_view version);
/// /version.
boost::json::value version_info();

} // namespace phalanx::api
