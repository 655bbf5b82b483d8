#pragma once

// JSON and YAML codecs for the API's objects (DESIGN.md section 2). No Beast, no protobuf here:
// the server, phalanxctl and the runtime include this header.
//
// Reading: text -> JSON values (parse_json / parse_yaml, with limits) -> object (decode_object:
// apiVersion and kind checked, wire shape mapped by the .proto schemas, quantities, enums and
// times converted, then the model's validation). Every failure is an api_error whose causes name
// the field and the rule: `spec.tasks[1].replicas: Invalid value: "three": must be an integer`.
//
// Writing: object -> JSON as Kubernetes and Volcano show it (encode_object), lists, watch events,
// Status bodies and meta.k8s.io/v1 Tables (encode_table, in table.hpp).
//
// Thread-safety: every function is a pure function of its arguments.

#include "api/errors.hpp"
#include "api/service.hpp"

#include "scheduler/model.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api {

// ---------------------------------------------------------------------------------------------
// Text -> JSON values

/// Bounds on what a parser accepts. Inputs beyond them fail with an error; nothing grows
/// without bound and no input crashes.
struct parse_limits {
  /// The input's size. Default: 1 MiB, the server's body limit.
  std::size_t max_bytes = std::size_t{1} << 20;
  /// Nesting of arrays and objects; the top-level value is depth 1. Default: 32.
  std::size_t max_depth = 32;
  /// YAML: values produced after alias expansion (bounds "billion laughs"). Default: 262,144.
  std::size_t max_values = std::size_t{1} << 18;
  /// YAML: bytes of strings produced after alias expansion. Default: 8 MiB.
  std::size_t max_expanded_bytes = std::size_t{8} << 20;
  /// YAML: documents in one stream. Default: 1,000.
  std::size_t max_documents = 1000;
};

/// Parses one JSON text (RFC 8259: valid UTF-8, no comments, no trailing commas, finite
/// numbers). Duplicate keys: the last one wins, as in a non-strict Kubernetes API server.
/// Errors: 413 RequestEntityTooLarge beyond max_bytes; 400 BadRequest otherwise, with the line
/// and column ("invalid JSON at line 3, column 7: syntax error").
outcome<boost::json::value> parse_json(std::string_view text, const parse_limits& limits = {});

/// Parses a YAML stream of one or more documents ("---"), skipping empty documents. Scalars
/// resolve as kubectl's YAML reader (YAML 1.1) resolves them: null/~, true/false/yes/no/on/off,
/// integers (decimal, 0x, 0o, 0b, leading-0 octal; beyond int64 uint64, then a double), floats;
/// quoted scalars and !!str are strings. Map keys are strings; a duplicate key is an error.
/// Anchors and aliases are expanded within max_values / max_expanded_bytes.
/// Errors: 413 beyond max_bytes; 400 with the line and column otherwise.
outcome<std::vector<boost::json::value>> parse_yaml(std::string_view text,
                                                    const parse_limits& limits = {});

/// A manifest file or body: JSON when the first non-blank character is '{' or '[' (a JSON array
/// gives one value per element), YAML otherwise. Objects of kind "List" are not expanded here
/// (decode_manifests does).
outcome<std::vector<boost::json::value>> parse_manifests(std::string_view text,
                                                         const parse_limits& limits = {});

/// True when `text` is valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

/// `v` as block-style YAML, as `kubectl get -o yaml` prints it: strings that would read back as
/// another type are quoted, multi-line strings use the literal style.
std::string to_yaml(const boost::json::value& v);

/// `v` serialized as compact JSON with object keys sorted, recursively: the canonical form kept
/// in pod::spec_json and job::spec_json (equal specs give equal strings).
std::string canonical_json(const boost::json::value& v);

// ---------------------------------------------------------------------------------------------
// Times

/// RFC 3339 in UTC with second precision, as metav1.Time: "2024-05-01T12:00:00Z". A zero
/// timestamp gives "".
std::string format_time(scheduler::timestamp t);
/// Parses RFC 3339 ("2024-05-01T12:00:00Z", "...T12:00:00.5+02:00"); nullopt when malformed.
std::optional<scheduler::timestamp> parse_time(std::string_view text) noexcept;
/// Kubernetes' human duration, as the AGE column shows it: "45s", "5m30s", "3h", "12d", "2y";
/// "<invalid>" for a negative duration below -1 s.
std::string human_duration(scheduler::duration d);

// ---------------------------------------------------------------------------------------------
// JSON values -> objects

struct decode_options {
  /// The kind the request path names: a body of another kind fails with 400.
  std::optional<resource_kind> expected_kind;
  /// Read status and the fields the server sets (uid, resourceVersion, creationTimestamp):
  /// true for what a server sent (a client decoding responses, round trips); false for what a
  /// user submits (they are ignored, as Kubernetes ignores status on create).
  bool read_status = true;
  /// Run the model's validation (scheduler/validation.hpp) after the wire checks.
  bool validate = true;
  /// The namespace of a namespaced object whose metadata names none (kubectl's default
  /// namespace). Empty: none is filled in, and validation then requires one.
  std::string default_namespace;
  /// Where the paths of fields the kind's API type does not have go ("spec.minmember"), for
  /// fieldValidation; null: not looked for. Only where Phalanx maps a whole type
  /// (api/proto/meta.proto strict_fields): a pod's spec and containers are, the objects inside
  /// them (affinity, probes, volumes) are not.
  std::vector<std::string>* unknown_fields = nullptr;
};

/// Decodes one object. Errors: 400 BadRequest when `v` is not an object, lacks apiVersion or kind,
/// names a kind or apiVersion Phalanx does not serve, or another kind than expected; 422 Invalid
/// with every broken rule as a cause otherwise.
///
/// Pods: the requests are scheduler::effective_requests of containers, init containers and
/// overhead; the gang is the annotation scheduling.k8s.io/group-name; the role is the annotation
/// volcano.sh/task-spec, else the label; the spec is kept in spec_json (canonical_json). The
/// host ports are those of the containers (not init containers) with a hostPort, defaulted as
/// the apiserver does (protocol TCP; with hostNetwork, hostPort = containerPort). Pod affinity
/// terms with matchLabelKeys or mismatchLabelKeys are refused when read_status is false (what
/// users submit) and the keys ignored otherwise (the apiserver has merged them into
/// labelSelector). Topology spread constraints keep their matchLabelKeys apart from
/// labelSelector, as written (the scheduler merges them when it evaluates a constraint); from a
/// server, the `key In (value)` requirements an apiserver of Kubernetes 1.34 or later merged into
/// a pod's labelSelector for those keys are taken out again, so both modes hold the same model.
/// Nodes: allocatable is status.allocatable, else status.capacity; a node that declares no "pods"
/// allocatable gets 110, the kubelet's default.
/// Jobs: the spec is kept in job::spec_json, each task's pod spec in its template's spec_json.
outcome<object> decode_object(const boost::json::value& v, const decode_options& options = {});

/// Decodes every object of a manifest text (parse_manifests), expanding kind "List" and
/// "*List" bodies into their items. An error names the document ("document 2: ...").
outcome<std::vector<object>> decode_manifests(std::string_view text,
                                              const decode_options& options = {},
                                              const parse_limits& limits = {});

/// Decodes a list response ("PodList", "List") of `kind`.
outcome<object_list> decode_list(const boost::json::value& v, resource_kind kind);

/// Decodes one watch event line of a stream of `kind`. An "ERROR" event gives its Status as the
/// error.
outcome<watch_event> decode_watch_event(const boost::json::value& v, resource_kind kind);

/// Reads a Status body (what a server answers on failure) back into an api_error. A body that is
/// not a Status gives an InternalError naming `http_code`.
api_error decode_status(const boost::json::value& v, int http_code);

// ---------------------------------------------------------------------------------------------
// Objects -> JSON values

/// The object as Kubernetes and Volcano show it, with kind, apiVersion, metadata, spec and status.
/// A pod's or job's spec is the kept spec_json with what the runtime changed laid over it (a pod's
/// nodeName, schedulerName, priority; a job's defaults: queue, minAvailable, maxRetry,
/// schedulerName); without spec_json it is built from the model.
boost::json::value encode_object(const object& o);

/// A pod's spec.terminationGracePeriodSeconds (kept in its spec JSON), or Kubernetes' default
/// (30) when it names none.
int64_t termination_grace_seconds(const scheduler::pod& p);

/// A "<Kind>List" with the items and metadata.resourceVersion.
boost::json::value encode_list(resource_kind kind, const object_list& list);

/// {"type":"ADDED","object":{...}}.
boost::json::value encode_watch_event(const watch_event& e);
/// {"type":"ERROR","object":<Status>}: how a watch stream reports its end by error.
boost::json::value encode_error_event(const api_error& e);

/// A Status body: {"kind":"Status","apiVersion":"v1","status":"Failure","message":...,
/// "reason":...,"details":{...,"causes":[...]},"code":...}.
boost::json::value encode_status(const api_error& e);
/// A Status with status "Success" (for example the answer to a DELETE that has no object).
boost::json::value encode_success_status(std::string_view message = {});

/// boost::json::serialize, for callers that do not include Boost.JSON's serializer.
std::string to_json_text(const boost::json::value& v);

} // namespace phalanx::api
