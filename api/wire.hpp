#pragma once

// Internal to api/: the model <-> wire message conversions behind codec.hpp. Included only by
// api/*.cpp (it pulls in the generated protobuf headers).
//
// Readers check what the wire format defines (enum spellings, quantities, times, integers'
// meaning) and append field errors under the object's JSON paths; the model's own rules are
// scheduler::validate's, run by the codec afterwards.

#include "api/service.hpp"

#include "api/proto/core.pb.h"
#include "api/proto/meta.pb.h"
#include "api/proto/volcano.pb.h"

#include "scheduler/validation.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace phalanx::api::wire {

namespace v1 = phalanx::api::v1;

/// What a reader needs besides its input.
struct reader {
  /// Read status and server-set metadata (see decode_options::read_status).
  bool read_status = true;
  scheduler::field_errors& errors;
};

/// The kubelet's default number of pods a node takes, used when a node declares none.
inline constexpr int64_t default_max_pods = 110;

void read_meta(const v1::ObjectMeta& in, reader& r, scheduler::object_meta& out);

/// `raw` is the whole object as JSON (for spec_json).
pod_object read_pod(const v1::Pod& in, const boost::json::value& raw, reader& r);
node_object read_node(const v1::Node& in, reader& r);
pod_group_object read_pod_group(const v1::PodGroup& in, reader& r);
queue_object read_queue(const v1::Queue& in, reader& r);
job_object read_job(const v1::Job& in, const boost::json::value& raw, reader& r);
priority_class_object read_priority_class(const v1::PriorityClass& in, reader& r);

void write_meta(const scheduler::object_meta& in, v1::ObjectMeta& out);

/// The spec built from the model only (no spec_json); the codec lays it over spec_json.
v1::Pod write_pod(const pod_object& in);
v1::Node write_node(const node_object& in);
v1::PodGroup write_pod_group(const pod_group_object& in);
v1::Queue write_queue(const queue_object& in);
v1::Job write_job(const job_object& in);
v1::PriorityClass write_priority_class(const priority_class_object& in);

/// A pod spec built from the model: one container "main" requesting the pod's requests (less
/// the "pods" unit) and holding the pod's host ports (containerPort = hostPort), node name,
/// scheduler name, priority, constraints.
v1::PodSpec write_pod_spec(const scheduler::pod& p);

/// "Pending" ... as Volcano spells job phases; nullopt for another text.
std::optional<scheduler::job_phase> job_phase_from_string(std::string_view text) noexcept;

} // namespace phalanx::api::wire
