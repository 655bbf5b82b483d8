#pragma once

// The one generic mapper between JSON (Boost.JSON values) and the wire messages of
// api/proto/*.proto, by protobuf reflection: the schemas are defined once, in .proto.
//
// JSON -> message:
// - an object maps to a message; keys are the fields' JSON names (lowerCamelCase or json_name);
//   unknown keys are ignored, as a non-strict Kubernetes API server ignores them (and reported
//   when asked, for fieldValidation);
// - null stands for an absent value, as Go's encoding/json treats it;
// - int32/int64/uint32/uint64 take JSON integers in range; bool takes true/false; string takes a
//   string, or also a number where the field has the int_or_string option (the number's text is
//   kept: 2 -> "2", 0.5 -> "0.5");
// - repeated fields take arrays, maps take objects; messages with the raw_json option keep any
//   JSON value serialized, those with json_array are bare arrays.
// Every problem is reported with the field path Kubernetes would print
// (`spec.tasks[1].replicas`, `metadata.labels[app]`) and mapping continues, so one answer lists
// every bad field.
//
// message -> JSON: fields in declaration order; a scalar without presence is written when it is
// not the default, a field with presence (optional, message) when set, repeated fields and maps
// when not empty, map keys sorted (Go's encoding/json omitempty output, deterministic).

#include "scheduler/validation.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <vector>

namespace google::protobuf {
class Message;
}

namespace phalanx::api {

/// Fills `out` from `in`, appending problems to `errors` with paths below `path` (empty for the
/// root). `out` is not cleared first. Never throws on any input. With `unknown`, the paths of
/// keys the API type does not have are appended to it, where the message maps its whole type
/// (the strict_fields option of api/proto/meta.proto; "spec.minmember").
void json_to_message(const boost::json::value& in, google::protobuf::Message& out,
                     const std::string& path, scheduler::field_errors& errors,
                     std::vector<std::string>* unknown = nullptr);

/// The JSON object of `in`.
boost::json::object message_to_json(const google::protobuf::Message& in);

/// A JSON value as field errors quote it: a string quoted as Go's %q (the first
/// 64 bytes, then "..."), a number or boolean as JSON,
/// null as "null", objects and arrays as "object" / "array".
std::string render_value(const boost::json::value& v);

/// The text of a JSON number: integers exactly, doubles in their shortest round-trip form.
/// Precondition: v is a number.
std::string number_text(const boost::json::value& v);

} // namespace phalanx::api
