#include "api/kube_protobuf.hpp"

#include "api/proto/kube_wire.pb.h"

#include <boost/json.hpp>

#include <string>

namespace phalanx::api {

namespace json = boost::json;

namespace {

// runtime.protobufSerializer's prefix: "k8s" and a zero byte.
constexpr std::string_view envelope_magic{"k8s\0", 4};

json::object meta_json(const kube::ObjectMeta& m) {
  json::object out;
  auto set = [&](std::string_view key, const std::string& value) {
    if (!value.empty())
      out[key] = value;
  };
  set("name", m.name());
  set("generateName", m.generate_name());
  set("namespace", m.namespace_());
  set("uid", m.uid());
  set("resourceVersion", m.resource_version());
  for (auto [key, map] : {std::pair{"labels", &m.labels()}, {"annotations", &m.annotations()}}) {
    if (map->empty())
      continue;
    json::object entries;
    for (const auto& [k, v] : *map)
      entries[k] = v;
    out[key] = std::move(entries);
  }
  if (m.finalizers_size() > 0) {
    json::array finalizers;
    for (const auto& f : m.finalizers())
      finalizers.emplace_back(f);
    out["finalizers"] = std::move(finalizers);
  }
  return out;
}

json::value priority_class_json(const kube::TypeMeta& type, const kube::PriorityClass& c) {
  json::object out{{"apiVersion", type.api_version()}, {"kind", type.kind()}};
  out["metadata"] = meta_json(c.metadata());
  if (c.has_value())
    out["value"] = c.value();
  if (c.has_global_default())
    out["globalDefault"] = c.global_default();
  if (c.has_description())
    out["description"] = c.description();
  if (c.has_preemption_policy())
    out["preemptionPolicy"] = c.preemption_policy();
  return out;
}

} // namespace

outcome<json::value> kube_protobuf_to_json(std::string_view body) {
  if (!body.starts_with(envelope_magic))
    return api_error::bad_request("the body is not in Kubernetes' protobuf encoding: it does not "
                                  "start with the \"k8s\\x00\" prefix");
  body.remove_prefix(envelope_magic.size());
  kube::Unknown envelope;
  if (!envelope.ParseFromArray(body.data(), static_cast<int>(body.size())))
    return api_error::bad_request("the protobuf body's runtime.Unknown envelope does not parse");
  if (!envelope.content_encoding().empty())
    return api_error::bad_request("the protobuf body's contentEncoding " +
                                  envelope.content_encoding() + " is not supported");
  const auto& type = envelope.type_meta();
  if (type.api_version() == "scheduling.k8s.io/v1" && type.kind() == "PriorityClass") {
    kube::PriorityClass c;
    if (!c.ParseFromString(envelope.raw()))
      return api_error::bad_request("the protobuf body's PriorityClass does not parse");
    return priority_class_json(type, c);
  }
  if (type.kind() == "DeleteOptions") {
    kube::DeleteOptions d;
    if (!d.ParseFromString(envelope.raw()))
      return api_error::bad_request("the protobuf body's DeleteOptions does not parse");
    json::array dry_run;
    for (const auto& v : d.dry_run())
      dry_run.emplace_back(v);
    json::object options{{"kind", "DeleteOptions"}, {"dryRun", std::move(dry_run)}};
    if (d.has_grace_period_seconds())
      options["gracePeriodSeconds"] = d.grace_period_seconds();
    return json::value(std::move(options));
  }
  api_error e;
  e.reason = status_reason::unsupported_media_type;
  e.message = "the body's Content-Type " + std::string(kube_protobuf_type) + " is read for " +
              "scheduling.k8s.io/v1 PriorityClass and DeleteOptions only, not " +
              type.api_version() + " " + type.kind() + ": send application/json or application/yaml";
  return e;
}

} // namespace phalanx::api
