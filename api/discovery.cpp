#include "api/discovery.hpp"

#include "api/json_mapper.hpp"
#include "api/kinds.hpp"

#include "api/proto/core.pb.h"
#include "api/proto/discovery.pb.h"
#include "api/proto/meta.pb.h"
#include "api/proto/volcano.pb.h"

#include <boost/json.hpp>
#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <map>

namespace phalanx::api {

namespace json = boost::json;

namespace {

struct group_entry {
  std::string_view name;
  std::string_view version;
};

constexpr group_entry groups[] = {
  {"scheduling.volcano.sh", "v1beta1"},
  {"batch.volcano.sh", "v1alpha1"},
  {"scheduling.k8s.io", "v1"},
  {"events.k8s.io", "v1"},
};

// Events, read-only, are served in core/v1 and in events.k8s.io/v1 (api/events.hpp).
bool serves_events(std::string_view group, std::string_view version) {
  return (group.empty() || group == "events.k8s.io") && version == "v1";
}

void fill_group(const group_entry& g, v1::APIGroup& out) {
  out.set_name(std::string(g.name));
  auto* v = out.add_versions();
  v->set_group_version(std::string(g.name) + "/" + std::string(g.version));
  v->set_version(std::string(g.version));
  *out.mutable_preferred_version() = *v;
}

} // namespace

json::value api_versions(std::string_view server_address) {
  v1::APIVersions out;
  out.set_kind("APIVersions");
  out.add_versions("v1");
  auto* a = out.add_server_address_by_client_cidrs();
  a->set_client_cidr("0.0.0.0/0");
  a->set_server_address(std::string(server_address));
  return message_to_json(out);
}

json::value api_group_list() {
  v1::APIGroupList out;
  out.set_kind("APIGroupList");
  out.set_api_version("v1");
  for (const auto& g : groups)
    fill_group(g, *out.add_groups());
  return message_to_json(out);
}

std::optional<json::value> api_group(std::string_view group) {
  for (const auto& g : groups) {
    if (g.name != group)
      continue;
    v1::APIGroup out;
    out.set_kind("APIGroup");
    out.set_api_version("v1");
    fill_group(g, out);
    return json::value(message_to_json(out));
  }
  return std::nullopt;
}

std::optional<json::value> api_resource_list(std::string_view group, std::string_view version) {
  v1::APIResourceList out;
  out.set_kind("APIResourceList");
  out.set_api_version("v1");
  out.set_group_version(group.empty() ? std::string(version)
                                      : std::string(group) + "/" + std::string(version));
  bool any = false;
  for (const auto& k : all_kinds()) {
    if (k.group != group || k.version != version)
      continue;
    any = true;
    auto* r = out.add_resources();
    r->set_name(std::string(k.plural));
    r->set_singular_name(std::string(k.singular));
    r->set_namespaced(k.namespaced);
    r->set_kind(std::string(k.kind_name));
    for (auto verb : {"create", "delete", "get", "list", "patch", "update", "watch"})
      r->add_verbs(verb);
    for (auto s : k.short_names)
      r->add_short_names(std::string(s));
    if (k.kind == resource_kind::pod)
      r->add_categories("all");
  }
  if (serves_events(group, version)) {
    any = true;
    auto* r = out.add_resources();
    r->set_name("events");
    r->set_singular_name("event");
    r->set_namespaced(true);
    r->set_kind("Event");
    for (auto verb : {"get", "list", "watch"})
      r->add_verbs(verb);
    r->add_short_names("ev");
  }
  if (!any)
    return std::nullopt;
  return json::value(message_to_json(out));
}

namespace {

// A group-version's path in the OpenAPI v3 index: "api/v1", "apis/<group>/<version>".
std::string openapi_path(std::string_view group, std::string_view version) {
  return group.empty() ? "api/" + std::string(version)
                       : "apis/" + std::string(group) + "/" + std::string(version);
}

// Every group-version served, core first.
std::vector<std::pair<std::string_view, std::string_view>> served_group_versions() {
  std::vector<std::pair<std::string_view, std::string_view>> out{{"", "v1"}};
  for (const auto& g : groups)
    out.emplace_back(g.name, g.version);
  return out;
}

} // namespace

json::value openapi_v3_index() {
  json::object paths;
  for (const auto& [group, version] : served_group_versions()) {
    auto path = openapi_path(group, version);
    // Clients cache a document by its hash: raise the revision whenever the documents change.
    paths[path] = json::object{{"serverRelativeURL", "/openapi/v3/" + path + "?hash=phalanx-5"}};
  }
  return json::object{{"paths", std::move(paths)}};
}

namespace {

namespace pb = google::protobuf;

// The OpenAPI name of a wire message: the name kube-apiserver gives the type it stands for.
std::string schema_name(const pb::Descriptor* d) {
  static const std::map<std::string_view, std::string_view> names = {
    {"phalanx.api.v1.Event", "io.k8s.api.core.v1.Event"},
    {"phalanx.api.v1.EventsV1Event", "io.k8s.api.events.v1.Event"},
    {"phalanx.api.v1.ObjectReference", "io.k8s.api.core.v1.ObjectReference"},
    {"phalanx.api.v1.EventSource", "io.k8s.api.core.v1.EventSource"},
    {"phalanx.api.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
    {"phalanx.api.v1.OwnerReference", "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"},
    {"phalanx.api.v1.LabelSelector", "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"},
    {"phalanx.api.v1.LabelSelectorRequirement",
     "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement"},
    {"phalanx.api.v1.PodGroup", "sh.volcano.scheduling.v1beta1.PodGroup"},
    {"phalanx.api.v1.Queue", "sh.volcano.scheduling.v1beta1.Queue"},
    {"phalanx.api.v1.Job", "sh.volcano.batch.v1alpha1.Job"},
    {"phalanx.api.v1.PriorityClass", "io.k8s.api.scheduling.v1.PriorityClass"},
  };
  if (auto it = names.find(d->full_name()); it != names.end())
    return std::string(it->second);
  // The rest of core.proto stands for core/v1 types of the same names (PodSpec, NodeSpec...).
  if (d->file()->name() == "api/proto/core.proto")
    return "io.k8s.api.core.v1." + std::string(d->name());
  return "io.phalanx." + std::string(d->full_name());
}

void add_schema(const pb::Descriptor* d, json::object& schemas);

// The schema of one value of field `f` (an element, for a repeated field); messages are added
// to `schemas` and referred to, as kube-apiserver's documents do.
json::object value_schema(const pb::FieldDescriptor* f, json::object& schemas) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return {{"type", "integer"}, {"format", "int32"}};
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return {{"type", "integer"}, {"format", "int64"}};
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return {{"type", "number"}, {"format", "double"}};
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return {{"type", "boolean"}};
    case pb::FieldDescriptor::CPPTYPE_STRING:
    case pb::FieldDescriptor::CPPTYPE_ENUM:
      if (f->options().GetExtension(v1::date_time))
        return {{"type", "string"}, {"format", "date-time"}};
      return {{"type", "string"}};
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  const auto* m = f->message_type();
  // Messages that stand for other JSON shapes (meta.proto): a bare array of their one repeated
  // field's values, or any value.
  if (m->options().GetExtension(v1::json_array) && m->field_count() == 1)
    return {{"type", "array"}, {"items", value_schema(m->field(0), schemas)}};
  if (m->options().GetExtension(v1::raw_json))
    return {{"x-kubernetes-preserve-unknown-fields", true}};
  add_schema(f->message_type(), schemas);
  return {{"allOf", json::array{json::object{
             {"$ref", "#/components/schemas/" + schema_name(f->message_type())}}}}};
}

// The schema of field `f`: its type (arrays and maps included) and its doc.
json::object field_schema(const pb::FieldDescriptor* f, json::object& schemas) {
  json::object out;
  if (f->is_map()) {
    out = {{"type", "object"},
           {"additionalProperties", value_schema(f->message_type()->map_value(), schemas)}};
  } else if (f->is_repeated()) {
    out = {{"type", "array"}, {"items", value_schema(f, schemas)}};
  } else {
    out = value_schema(f, schemas);
  }
  if (const auto& doc = f->options().GetExtension(v1::doc); !doc.empty())
    out["description"] = doc;
  return out;
}

// Adds the schema of message `d`, and of the messages it holds, to `schemas`: an object with
// one property per field, by JSON name in sorted order (as kube-apiserver lists them).
void add_schema(const pb::Descriptor* d, json::object& schemas) {
  auto name = schema_name(d);
  if (schemas.contains(name))
    return;
  schemas[name] = json::object{};  // Taken, for types that hold themselves.
  std::vector<const pb::FieldDescriptor*> fields;
  for (int i = 0; i < d->field_count(); ++i)
    fields.push_back(d->field(i));
  std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) {
    return a->json_name() < b->json_name();
  });
  json::object properties;
  for (const auto* f : fields)
    properties[f->json_name()] = field_schema(f, schemas);
  json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
  if (const auto& doc = d->options().GetExtension(v1::type_doc); !doc.empty())
    schema["description"] = doc;
  schemas[name] = std::move(schema);
}

// The wire message of a kind, whose schema is served (`kubectl explain pod`).
const pb::Descriptor* kind_message(resource_kind k) {
  switch (k) {
    case resource_kind::pod:
      return v1::Pod::descriptor();
    case resource_kind::node:
      return v1::Node::descriptor();
    case resource_kind::pod_group:
      return v1::PodGroup::descriptor();
    case resource_kind::queue:
      return v1::Queue::descriptor();
    case resource_kind::job:
      return v1::Job::descriptor();
    case resource_kind::priority_class:
      return v1::PriorityClass::descriptor();
  }
  return nullptr;  // Not reached: the switch names every kind.
}

// A query parameter of type string.
json::object query(std::string_view name) {
  return json::object{
      {"name", name}, {"in", "query"}, {"schema", json::object{{"type", "string"}}}};
}

// An operation on a kind: a write takes fieldValidation (kubectl checks that a kind's PATCH
// takes it before leaving validation to the server), dryRun and fieldManager; a read takes the
// selectors and watch.
json::object operation(std::string_view id, const json::object& gvk, bool write) {
  json::array parameters;
  if (write) {
    for (auto p : {"fieldValidation", "dryRun", "fieldManager"})
      parameters.push_back(query(p));
  } else {
    for (auto p : {"fieldSelector", "labelSelector", "resourceVersion", "watch"})
      parameters.push_back(query(p));
  }
  return json::object{{"operationId", id},
                      {"parameters", std::move(parameters)},
                      {"responses", json::object{{"200", json::object{{"description", "OK"}}}}},
                      {"x-kubernetes-group-version-kind", gvk}};
}

} // namespace

std::optional<json::value> openapi_v3_document(std::string_view group, std::string_view version) {
  json::object paths;
  json::object schemas;
  const std::string prefix = "/" + openapi_path(group, version) + "/";
  for (const auto& k : all_kinds()) {
    if (k.group != group || k.version != version)
      continue;
    std::string collection =
        prefix + (k.namespaced ? "namespaces/{namespace}/" : "") + std::string(k.plural);
    json::object gvk{{"group", k.group}, {"version", k.version}, {"kind", k.kind_name}};
    // Every kind lists its PATCH: kubectl looks for the parameter there for creates too.
    auto name = std::string(k.kind_name);
    paths[collection] = json::object{{"post", operation("create" + name, gvk, true)}};
    paths[collection + "/{name}"] = json::object{{"put", operation("replace" + name, gvk, true)},
                                                 {"patch", operation("patch" + name, gvk, true)}};
    const auto* d = kind_message(k.kind);
    add_schema(d, schemas);
    schemas[schema_name(d)].as_object()["x-kubernetes-group-version-kind"] = json::array{gvk};
  }
  if (serves_events(group, version)) {
    // Events are read-only, and described: `kubectl explain events` reads the schema. Their
    // writes are listed too, so that kubectl leaves validation to the server, whose 405 says
    // why, rather than fail looking for the OpenAPI v2 document it would validate with.
    json::object gvk{{"group", group}, {"version", version}, {"kind", "Event"}};
    paths[prefix + "events"] = json::object{{"get", operation("listEventForAllNamespaces", gvk,
                                                              false)}};
    paths[prefix + "namespaces/{namespace}/events"] =
        json::object{{"get", operation("listNamespacedEvent", gvk, false)},
                     {"post", operation("createNamespacedEvent", gvk, true)}};
    paths[prefix + "namespaces/{namespace}/events/{name}"] =
        json::object{{"get", operation("readNamespacedEvent", gvk, false)},
                     {"put", operation("replaceNamespacedEvent", gvk, true)},
                     {"patch", operation("patchNamespacedEvent", gvk, true)}};
    const pb::Descriptor* d = group.empty() ? v1::Event::descriptor()
                                            : v1::EventsV1Event::descriptor();
    add_schema(d, schemas);
    schemas[schema_name(d)].as_object()["x-kubernetes-group-version-kind"] = json::array{gvk};
  }
  if (paths.empty())
    return std::nullopt;
  json::object doc{
      {"openapi", "3.0.0"},
      {"info", json::object{{"title", "Phalanx"}, {"version", std::string(version)}}},
      {"paths", std::move(paths)}};
  if (!schemas.empty())
    doc["components"] = json::object{{"schemas", std::move(schemas)}};
  return doc;
}

json::value version_info() {
  v1::VersionInfo out;
  out.set_major(std::string(served_kubernetes_major));
  out.set_minor(std::string(served_kubernetes_minor));
  out.set_git_version("v1.32.0-phalanx");
  out.set_git_tree_state("clean");
  out.set_go_version("none (C++20)");
  out.set_compiler("phalanx");
  out.set_platform("linux/amd64");
  return message_to_json(out);
}

} // namespace phalanx::api
