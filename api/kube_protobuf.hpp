#pragma once

// Bodies in Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf): client-go's
// typed clients send built-in kinds that way, among kubectl's commands `create priorityclass`.
// Such a body is read into the JSON form of the object, which then goes the way every other
// body goes (decode, validation, fieldValidation). Answers stay JSON, which client-go reads by
// the response's Content-Type.

#include "api/errors.hpp"

#include <boost/json/value.hpp>

#include <string_view>

namespace phalanx::api {

/// The media type of Kubernetes' protobuf encoding.
inline constexpr std::string_view kube_protobuf_type = "application/vnd.kubernetes.protobuf";

/// The object of a protobuf body as JSON. Kinds read: PriorityClass (scheduling.k8s.io/v1), and
/// a DELETE's DeleteOptions (its dryRun); any other is 415 naming the media types to send
/// instead. A body without the "k8s\0" prefix, or
/// whose envelope or message does not parse, is 400.
outcome<boost::json::value> kube_protobuf_to_json(std::string_view body);

} // namespace phalanx::api
