#pragma once

// The OpenAPI documents, generated from the wire messages (api/proto) with their `doc` and
// `type_doc` options: the same messages the decoders and the strict field check read, so what
// `kubectl explain` shows is what the server takes.
//
// - /openapi/v3: an index of one document per group-version, each with its kinds' paths (the
//   writes take fieldValidation: kubectl then leaves validation to the server) and schemas.
// - /openapi/v2: one Swagger 2.0 document with every kind's schema (definitions) and paths, as
//   JSON or in the protobuf encoding kubectl asks for (`kubectl explain
//   --output=plaintext-openapiv2`, and `kubectl apply` for its patches).

#include "api/errors.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace phalanx::api {

/// /openapi/v3: the index of the group-versions' documents, each URL carrying the documents'
/// hash, which clients cache by.
boost::json::value openapi_v3_index();
/// /openapi/v3/api/v1 and /openapi/v3/apis/{group}/{version}: the paths of each kind, with the
/// query parameters a write takes (fieldValidation) and the kind each path is of, which kubectl
/// reads to decide that the server validates fields itself; and every kind's schema (Events in
/// core/v1 and events.k8s.io/v1 too), for `kubectl explain`. nullopt when not served.
std::optional<boost::json::value> openapi_v3_document(std::string_view group,
                                                      std::string_view version);

/// /openapi/v2: every kind's schema and list schema under `definitions` (the kinds' with
/// x-kubernetes-group-version-kind), and the paths Phalanx serves for them, each operation
/// with its group-version-kind and x-kubernetes-action. The PATCH operations name no
/// `consumes`: with strategic merge patch named there, kubectl would build its patches of Pods
/// and Nodes from these schemas, which describe the fields Phalanx reads, rather than from its
/// own types, which know every field.
const boost::json::value& openapi_v2_document();

/// The media type of /openapi/v2 in protobuf: as kubectl asks for it, and as it is answered
/// (kube-apiserver's spelling; Go's media type parser refuses the '@').
inline constexpr std::string_view openapi_v2_protobuf_type =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
inline constexpr std::string_view openapi_v2_protobuf_content_type =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// openapi_v2_document() in the protobuf encoding of gnostic's openapi_v2.Document
/// (api/proto/openapi_v2.proto), made once (thread-safe); an internal error if a part of the
/// document has no place in it (a bug: a test encodes the document).
const outcome<std::string>& openapi_v2_protobuf();

/// `doc` (an OpenAPI v2 document as openapi_v2_document() makes them) in the protobuf
/// encoding; an internal error names the first member that encoding has no place for, so a
/// document never loses a part on its way to kubectl.
outcome<std::string> openapi_v2_to_protobuf(const boost::json::value& doc);

} // namespace phalanx::api
