#pragma once

// The kinds the API serves and how Kubernetes names them: group, version, kind, plural,
// scope, short names. One table, used by the codecs (apiVersion + kind of a body), the router
// (URL paths) and discovery (what kubectl reads before anything else).

#include "api/service.hpp"

#include <optional>
#include <span>
#include <string_view>

namespace phalanx::api {

struct kind_info {
  resource_kind kind;
  std::string_view group;        // "" for the core group
  std::string_view version;      // "v1", "v1beta1", "v1alpha1"
  std::string_view api_version;  // "v1", "scheduling.volcano.sh/v1beta1"
  std::string_view kind_name;    // "Pod", "PodGroup", "Job"
  std::string_view list_kind;    // "PodList", ...
  std::string_view plural;       // "pods", ...: the URL segment
  std::string_view singular;     // "pod", ...
  bool namespaced;
  /// Volcano's CRD short names (pg, podgroup-v1beta1; q, queue-v1beta1; vcjob, vj) and
  /// Kubernetes' (po, no).
  std::span<const std::string_view> short_names;
  /// kubectl's "kind.group" spelling in messages: "Pod", "Job.batch.volcano.sh".
  std::string_view qualified_kind;
};

/// The entry of a kind. Every resource_kind has one.
const kind_info& info(resource_kind kind) noexcept;

/// Every kind, in resource_kind order.
std::span<const kind_info> all_kinds() noexcept;

/// The kind of a body by its apiVersion and kind; nullopt when not served.
std::optional<resource_kind> kind_of(std::string_view api_version, std::string_view kind) noexcept;

/// The kind of a URL: group ("" for /api/v1), version and plural; nullopt when not served.
std::optional<resource_kind> kind_of_path(std::string_view group, std::string_view version,
                                          std::string_view plural) noexcept;

} // namespace phalanx::api
