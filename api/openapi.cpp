#include "api/openapi.hpp"

#include "api/discovery.hpp"
#include "api/kinds.hpp"

#include "api/proto/core.pb.h"
#include "api/proto/meta.pb.h"
#include "api/proto/volcano.pb.h"

#include <boost/json.hpp>
#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <map>
#include <span>
#include <vector>

namespace phalanx::api {

namespace json = boost::json;
namespace pb = google::protobuf;

namespace {

// Clients cache a v3 document by the hash in its URL: raise the revision whenever the
// documents change.
constexpr std::string_view documents_revision = "phalanx-6";

// A group-version's path in the OpenAPI v3 index: "api/v1", "apis/<group>/<version>".
std::string openapi_path(std::string_view group, std::string_view version) {
  return group.empty() ? "api/" + std::string(version)
                       : "apis/" + std::string(group) + "/" + std::string(version);
}

// The OpenAPI name of a wire message: the name kube-apiserver gives the type it stands for.
std::string schema_name(const pb::Descriptor* d) {
  static const std::map<std::string_view, std::string_view> names = {
    {"phalanx.api.v1.Event", "io.k8s.api.core.v1.Event"},
    {"phalanx.api.v1.EventsV1Event", "io.k8s.api.events.v1.Event"},
    {"phalanx.api.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
    {"phalanx.api.v1.ListMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"},
    {"phalanx.api.v1.OwnerReference", "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"},
    {"phalanx.api.v1.ObjectReference", "io.k8s.api.core.v1.ObjectReference"},
    {"phalanx.api.v1.EventSource", "io.k8s.api.core.v1.EventSource"},
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

// The two versions write the same schemas: v3 refers to components/schemas and wraps a
// reference in allOf, so that a description can sit beside it (as kube-apiserver writes it);
// v2 refers to definitions, with the description beside the $ref.
enum class dialect { v2, v3 };

// The schemas of wire messages, each added once with the messages it holds.
class schema_set {
 public:
  explicit schema_set(dialect d) : dialect_(d) {}

  // A reference to message `d`'s schema, which is added.
  json::object reference(const pb::Descriptor* d) {
    add(d);
    if (dialect_ == dialect::v3)
      return {{"allOf",
               json::array{json::object{{"$ref", "#/components/schemas/" + schema_name(d)}}}}};
    return {{"$ref", "#/definitions/" + schema_name(d)}};
  }

  // Adds the schema of message `d` and of the messages it holds: an object with one property
  // per field, by JSON name in sorted order (as kube-apiserver lists them).
  void add(const pb::Descriptor* d) {
    auto name = schema_name(d);
    if (schemas_.contains(name))
      return;
    schemas_[name] = json::object{};  // Taken, for types that hold themselves.
    std::vector<const pb::FieldDescriptor*> fields;
    for (int i = 0; i < d->field_count(); ++i)
      fields.push_back(d->field(i));
    std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) {
      return a->json_name() < b->json_name();
    });
    json::object properties;
    for (const auto* f : fields)
      properties[f->json_name()] = field_schema(f);
    json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
    if (const auto& doc = d->options().GetExtension(v1::type_doc); !doc.empty())
      schema["description"] = doc;
    schemas_[name] = std::move(schema);
  }

  // Adds the schema of a kind's message, marked with the kind's group-version-kind.
  void add_kind(const pb::Descriptor* d, const json::object& gvk) {
    add(d);
    schemas_[schema_name(d)].as_object()["x-kubernetes-group-version-kind"] = json::array{gvk};
  }

  json::object& schemas() { return schemas_; }

 private:
  // The schema of one value of field `f` (an element, for a repeated field).
  json::object value_schema(const pb::FieldDescriptor* f) {
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
    // Messages that stand for other JSON shapes (meta.proto): a bare array of their one
    // repeated field's values, or any value.
    if (m->options().GetExtension(v1::json_array) && m->field_count() == 1)
      return {{"type", "array"}, {"items", value_schema(m->field(0))}};
    if (m->options().GetExtension(v1::raw_json))
      return {{"x-kubernetes-preserve-unknown-fields", true}};
    return reference(m);
  }

  // The schema of field `f`: its type (arrays and maps included) and its doc.
  json::object field_schema(const pb::FieldDescriptor* f) {
    json::object out;
    if (f->is_map()) {
      out = {{"type", "object"},
             {"additionalProperties", value_schema(f->message_type()->map_value())}};
    } else if (f->is_repeated()) {
      out = {{"type", "array"}, {"items", value_schema(f)}};
    } else {
      out = value_schema(f);
    }
    if (const auto& doc = f->options().GetExtension(v1::doc); !doc.empty())
      out["description"] = doc;
    return out;
  }

  dialect dialect_;
  json::object schemas_;
};

// The wire message of a kind.
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

// The wire message of the Event of a group-version that serves events.
const pb::Descriptor* event_message(std::string_view group) {
  return group.empty() ? v1::Event::descriptor() : v1::EventsV1Event::descriptor();
}

json::object gvk_of(std::string_view group, std::string_view version, std::string_view kind) {
  return {{"group", group}, {"version", version}, {"kind", kind}};
}

// A query parameter an operation takes, and what it does.
struct parameter {
  std::string_view name;
  std::string_view type;  // string, integer or boolean
  std::string_view description;
};

constexpr parameter continue_parameter{
    "continue", "string",
    "The metadata.continue of the page before: the list goes on after its last item."};
constexpr parameter dry_run_parameter{"dryRun", "string",
                                      "All: check and answer the write, and change nothing."};
constexpr parameter field_manager_parameter{"fieldManager", "string",
                                            "The writer's name; accepted, and not recorded."};
constexpr parameter field_selector_parameter{
    "fieldSelector", "string",
    "Selects by fields (=, ==, !=): metadata.name, metadata.namespace, and a kind's own "
    "(a pod's spec.nodeName and status.phase, an event's involvedObject.name...)."};
constexpr parameter field_validation_parameter{
    "fieldValidation", "string",
    "What to do with fields the kind does not have: Strict refuses the write, Warn (the "
    "default) answers with a warning per field, Ignore drops them."};
constexpr parameter grace_period_parameter{
    "gracePeriodSeconds", "integer",
    "How long a bound pod may take to stop once deleted; 0: at once."};
constexpr parameter label_selector_parameter{
    "labelSelector", "string", "Selects by labels: app=x,tier!=db,env in (a,b),!legacy."};
constexpr parameter limit_parameter{
    "limit", "integer",
    "The most items to answer; when more remain, the list's metadata.continue names the next "
    "page."};
constexpr parameter resource_version_parameter{
    "resourceVersion", "string", "With watch: the changes after this version."};
constexpr parameter timeout_parameter{"timeoutSeconds", "integer",
                                      "With watch: end the watch after this many seconds."};
constexpr parameter watch_parameter{"watch", "boolean",
                                    "Stream the changes of the list instead of listing it."};

constexpr parameter read_parameters[] = {continue_parameter,         field_selector_parameter,
                                         label_selector_parameter,   limit_parameter,
                                         resource_version_parameter, timeout_parameter,
                                         watch_parameter};
// fieldValidation first: kubectl looks for it on a kind's PATCH before a create.
constexpr parameter write_parameters[] = {field_validation_parameter, dry_run_parameter,
                                          field_manager_parameter};
constexpr parameter delete_parameters[] = {dry_run_parameter, grace_period_parameter};

json::object v3_parameter(const parameter& p) {
  return json::object{{"name", p.name},
                      {"in", "query"},
                      {"description", p.description},
                      {"schema", json::object{{"type", p.type}}}};
}

// A v3 operation on a kind: a write takes fieldValidation (kubectl checks that a kind's PATCH
// takes it before leaving validation to the server), dryRun and fieldManager; a read takes
// the selectors, paging and watch.
json::object v3_operation(std::string_view id, const json::object& gvk, bool write) {
  json::array parameters;
  for (const auto& p : write ? std::span<const parameter>(write_parameters)
                             : std::span<const parameter>(read_parameters))
    parameters.push_back(v3_parameter(p));
  return json::object{{"operationId", id},
                      {"parameters", std::move(parameters)},
                      {"responses", json::object{{"200", json::object{{"description", "OK"}}}}},
                      {"x-kubernetes-group-version-kind", gvk}};
}

} // namespace

json::value openapi_v3_index() {
  json::object paths;
  for (const auto& [group, version] : served_group_versions()) {
    auto path = openapi_path(group, version);
    paths[path] = json::object{{"serverRelativeURL", "/openapi/v3/" + path + "?hash=" +
                                                         std::string(documents_revision)}};
  }
  return json::object{{"paths", std::move(paths)}};
}

std::optional<json::value> openapi_v3_document(std::string_view group, std::string_view version) {
  json::object paths;
  schema_set schemas(dialect::v3);
  const std::string prefix = "/" + openapi_path(group, version) + "/";
  for (const auto& k : all_kinds()) {
    if (k.group != group || k.version != version)
      continue;
    std::string collection =
        prefix + (k.namespaced ? "namespaces/{namespace}/" : "") + std::string(k.plural);
    auto gvk = gvk_of(k.group, k.version, k.kind_name);
    // Every kind lists its PATCH: kubectl looks for the parameter there for creates too.
    auto name = std::string(k.kind_name);
    paths[collection] = json::object{{"post", v3_operation("create" + name, gvk, true)}};
    paths[collection + "/{name}"] =
        json::object{{"put", v3_operation("replace" + name, gvk, true)},
                     {"patch", v3_operation("patch" + name, gvk, true)}};
    schemas.add_kind(kind_message(k.kind), gvk);
  }
  if (serves_events(group, version)) {
    // Events are read-only, and described: `kubectl explain events` reads the schema. Their
    // writes are listed too, so that kubectl leaves validation to the server, whose 405 says
    // why, rather than validate them itself.
    auto gvk = gvk_of(group, version, "Event");
    paths[prefix + "events"] =
        json::object{{"get", v3_operation("listEventForAllNamespaces", gvk, false)}};
    paths[prefix + "namespaces/{namespace}/events"] =
        json::object{{"get", v3_operation("listNamespacedEvent", gvk, false)},
                     {"post", v3_operation("createNamespacedEvent", gvk, true)}};
    paths[prefix + "namespaces/{namespace}/events/{name}"] =
        json::object{{"get", v3_operation("readNamespacedEvent", gvk, false)},
                     {"put", v3_operation("replaceNamespacedEvent", gvk, true)},
                     {"patch", v3_operation("patchNamespacedEvent", gvk, true)}};
    schemas.add_kind(event_message(group), gvk);
  }
  if (paths.empty())
    return std::nullopt;
  json::object doc{
      {"openapi", "3.0.0"},
      {"info", json::object{{"title", "Phalanx"}, {"version", std::string(version)}}},
      {"paths", std::move(paths)}};
  if (!schemas.schemas().empty())
    doc["components"] = json::object{{"schemas", std::move(schemas.schemas())}};
  return doc;
}

namespace {

// ---- OpenAPI v2

json::object v2_query_parameter(const parameter& p) {
  return json::object{
      {"name", p.name}, {"in", "query"}, {"description", p.description}, {"type", p.type}};
}

json::object v2_path_parameter(std::string_view name, std::string_view description) {
  return json::object{{"name", name},
                      {"in", "path"},
                      {"description", description},
                      {"required", true},
                      {"type", "string"}};
}

json::object ref_to(const std::string& definition) {
  return json::object{{"$ref", "#/definitions/" + definition}};
}

// What one v2 operation is: its id, action and description, the query parameters it takes, the
// body it reads (a schema; null: none) and the definition it answers with.
struct v2_op {
  std::string id;
  std::string_view action;  // x-kubernetes-action: list, get, post, put, patch, delete
  std::string description;
  std::span<const parameter> query;
  json::value body;
  std::string answer;  // A definition's name.
};

json::object v2_operation(const v2_op& op, const json::object& gvk) {
  json::array parameters;
  if (!op.body.is_null())
    parameters.push_back(json::object{
        {"name", "body"}, {"in", "body"}, {"required", true}, {"schema", op.body}});
  for (const auto& p : op.query)
    parameters.push_back(v2_query_parameter(p));
  json::object responses{
      {"200", json::object{{"description", "OK"}, {"schema", ref_to(op.answer)}}}};
  if (op.action == "post")
    responses["201"] = json::object{{"description", "Created"}, {"schema", ref_to(op.answer)}};
  json::object out{{"description", op.description},
                   {"operationId", op.id},
                   {"produces", json::array{"application/json", "application/yaml"}}};
  // A POST or PUT takes the object as JSON or YAML. A PATCH names no media types (see
  // openapi_v2_document in the header).
  if (op.action == "post" || op.action == "put")
    out["consumes"] = json::array{"application/json", "application/yaml"};
  out["parameters"] = std::move(parameters);
  out["responses"] = std::move(responses);
  out["x-kubernetes-action"] = op.action;
  out["x-kubernetes-group-version-kind"] = gvk;
  return out;
}

// The name of a kind's list definition: its schema's name with the list kind last
// (io.k8s.api.core.v1.PodList).
std::string list_definition(const pb::Descriptor* d, std::string_view list_kind) {
  auto name = schema_name(d);
  return name.substr(0, name.rfind('.') + 1) + std::string(list_kind);
}

// Adds the list definition of kind `d`: the items and the list's metadata (where its page's
// continue token is).
void add_list_definition(schema_set& schemas, const pb::Descriptor* d, std::string_view list_kind,
                         std::string_view plural, json::object gvk) {
  auto items = schemas.reference(d);
  auto meta = schemas.reference(v1::ListMeta::descriptor());
  meta["description"] = "The list's version, and when a page does not hold the rest of the "
                        "list, the token of the next page.";
  gvk["kind"] = list_kind;
  schemas.schemas()[list_definition(d, list_kind)] = json::object{
      {"description", "A list of " + std::string(plural) + "."},
      {"type", "object"},
      {"properties",
       json::object{{"apiVersion", json::object{{"type", "string"}}},
                    {"items", json::object{{"type", "array"}, {"items", std::move(items)}}},
                    {"kind", json::object{{"type", "string"}}},
                    {"metadata", std::move(meta)}}},
      {"x-kubernetes-group-version-kind", json::array{std::move(gvk)}}};
}

// The paths of one kind (or of the Events of a group-version): its collections (a namespaced
// kind's in every namespace too) and its items, with the operations Phalanx serves on them.
struct v2_kind {
  std::string prefix;  // "/api/v1/", "/apis/<group>/<version>/"
  std::string_view kind;
  std::string_view plural;
  bool namespaced;
  bool read_only;
  std::string definition;
  std::string list;
};

void add_v2_paths(const v2_kind& k, const json::object& gvk, json::object& paths) {
  const std::string kind(k.kind);
  const std::string ns = k.namespaced ? "Namespaced" : "";
  const std::string plural(k.plural);
  auto with = [&](json::object item, std::vector<json::object> parameters) {
    json::array list;
    for (auto& p : parameters)
      list.push_back(std::move(p));
    item["parameters"] = std::move(list);
    return item;
  };
  auto namespace_parameter = v2_path_parameter("namespace", "The objects' namespace.");
  auto name_parameter = v2_path_parameter("name", "The object's name.");

  std::string collection = k.prefix + (k.namespaced ? "namespaces/{namespace}/" : "") + plural;
  json::object on_collection{
      {"get", v2_operation({"list" + ns + kind, "list", "Lists or watches " + plural + ".",
                            read_parameters, nullptr, k.list},
                           gvk)}};
  if (!k.read_only)
    on_collection["post"] = v2_operation({"create" + ns + kind, "post", "Creates a " + kind + ".",
                                          write_parameters, ref_to(k.definition), k.definition},
                                         gvk);
  std::vector<json::object> collection_parameters;
  if (k.namespaced)
    collection_parameters.push_back(namespace_parameter);
  paths[collection] = with(std::move(on_collection), std::move(collection_parameters));
  if (k.namespaced)
    paths[k.prefix + plural] = json::object{
        {"get", v2_operation({"list" + kind + "ForAllNamespaces", "list",
                              "Lists or watches " + plural + " of every namespace.",
                              read_parameters, nullptr, k.list},
                             gvk)}};

  json::object on_item{{"get", v2_operation({"read" + ns + kind, "get", "Reads a " + kind + ".",
                                             {}, nullptr, k.definition},
                                            gvk)}};
  if (!k.read_only) {
    on_item["put"] = v2_operation({"replace" + ns + kind, "put", "Replaces a " + kind + ".",
                                   write_parameters, ref_to(k.definition), k.definition},
                                  gvk);
    on_item["patch"] = v2_operation(
        {"patch" + ns + kind, "patch",
         "Patches a " + kind + ": a JSON patch, a JSON merge patch, or for the core kinds a "
         "strategic merge patch.",
         write_parameters, json::object{{"type", "object"}}, k.definition},
        gvk);
    on_item["delete"] = v2_operation({"delete" + ns + kind, "delete", "Deletes a " + kind + ".",
                                      delete_parameters, nullptr, k.definition},
                                     gvk);
  }
  std::vector<json::object> item_parameters{name_parameter};
  if (k.namespaced)
    item_parameters.push_back(namespace_parameter);
  paths[collection + "/{name}"] = with(std::move(on_item), std::move(item_parameters));
}

json::value make_openapi_v2_document() {
  schema_set schemas(dialect::v2);
  json::object paths;
  for (const auto& [group, version] : served_group_versions()) {
    std::string prefix = "/" + openapi_path(group, version) + "/";
    for (const auto& k : all_kinds()) {
      if (k.group != group || k.version != version)
        continue;
      const auto* d = kind_message(k.kind);
      auto gvk = gvk_of(k.group, k.version, k.kind_name);
      schemas.add_kind(d, gvk);
      add_list_definition(schemas, d, k.list_kind, k.plural, gvk);
      add_v2_paths({prefix, k.kind_name, k.plural, k.namespaced, false, schema_name(d),
                    list_definition(d, k.list_kind)},
                   gvk, paths);
    }
    if (serves_events(group, version)) {
      const auto* d = event_message(group);
      auto gvk = gvk_of(group, version, "Event");
      schemas.add_kind(d, gvk);
      add_list_definition(schemas, d, "EventList", "events", gvk);
      add_v2_paths({prefix, "Event", "events", true, true, schema_name(d),
                    list_definition(d, "EventList")},
                   gvk, paths);
    }
  }
  return json::object{
      {"swagger", "2.0"},
      {"info", json::object{{"title", "Phalanx"}, {"version", served_git_version}}},
      {"paths", std::move(paths)},
      {"definitions", std::move(schemas.schemas())}};
}

} // namespace

const json::value& openapi_v2_document() {
  static const json::value doc = make_openapi_v2_document();
  return doc;
}

const outcome<std::string>& openapi_v2_protobuf() {
  static const outcome<std::string> bytes = openapi_v2_to_protobuf(openapi_v2_document());
  return bytes;
}

} // namespace phalanx::api
