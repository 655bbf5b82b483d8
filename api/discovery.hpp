#pragma once

// Discovery documents, what kubectl reads before anything else (TOOLCHAIN.md): /api
// (APIVersions), /apis (APIGroupList), /apis/{group} (APIGroup), /api/v1 and
// /apis/{group}/{version} (APIResourceList), /version, and the OpenAPI v3 documents kubectl reads
// to learn that the server validates fields (/openapi/v3).

#include <boost/json/value.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace phalanx::api {

/// The version /version reports: Kubernetes 1.32's API, as Phalanx serves it.
inline constexpr std::string_view served_kubernetes_major = "1";
inline constexpr std::string_view served_kubernetes_minor = "32";

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
/// /openapi/v3: the index of the group-versions' documents.
boost::json::value openapi_v3_index();
/// /openapi/v3/api/v1 and /openapi/v3/apis/{group}/{version}: the paths of each kind, with the
/// query parameters a write takes (fieldValidation) and the kind each path is of, which kubectl
/// reads to decide that the server validates fields itself; and every kind's schema (Events in
/// core/v1 and events.k8s.io/v1 too), generated from its wire message with the docs of the
/// api/proto files, for `kubectl explain`. nullopt when not served.
std::optional<boost::json::value> openapi_v3_document(std::string_view group,
                                                      std::string_view version);

} // namespace phalanx::api
