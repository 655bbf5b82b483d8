// The OpenAPI documents (issue 30: "OpenAPI v2 and v3 generated from the same schemas the
// validators use"): the Pod and Node schemas in /openapi/v3 with a sentence for each field a
// user sets, every field the server writes described, the strict check inside a pod's
// affinity and tolerations, and /openapi/v2 as JSON and in kubectl's protobuf encoding.

#include "api/codec.hpp"
#include "api/kinds.hpp"
#include "api/openapi.hpp"
#include "api/tests/server_fixture.hpp"

#include "api/proto/openapi_v2.pb.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace phalanx::api::test {
namespace {

namespace json = boost::json;

// The schemas of a document and how its references are written.
struct schema_book {
  const json::object& schemas;
  std::string prefix;  // "#/components/schemas/" (v3) or "#/definitions/" (v2)

  // The schema a field's schema refers to (v3 wraps the reference in allOf), or itself.
  const json::object& resolve(const json::object& s) const {
    const json::value* ref = s.if_contains("$ref");
    if (ref == nullptr) {
      if (const auto* all = s.if_contains("allOf"))
        ref = all->at(0).as_object().if_contains("$ref");
    }
    if (ref == nullptr)
      return s;
    std::string target(ref->as_string());
    EXPECT_EQ(target.rfind(prefix, 0), 0u) << target;
    auto name = target.substr(prefix.size());
    EXPECT_TRUE(schemas.contains(name)) << "no schema " << name;
    return schemas.at(name).as_object();
  }

  // The schema of the field at `path` ("spec.containers[].resources") from schema `root`: the
  // field's own (its description), not the one it refers to.
  const json::object& field(const std::string& root, const std::string& path) const {
    const json::object* at = &schemas.at(root).as_object();
    std::size_t start = 0;
    const json::object* field = at;
    while (start < path.size()) {
      auto dot = path.find('.', start);
      std::string step = path.substr(start, dot == std::string::npos ? std::string::npos
                                                                     : dot - start);
      bool element = step.ends_with("[]");
      if (element)
        step.resize(step.size() - 2);
      const auto& properties = resolve(*at).at("properties").as_object();
      EXPECT_TRUE(properties.contains(step)) << root << " has no " << path;
      field = &properties.at(step).as_object();
      at = element ? &field->at("items").as_object() : field;
      start = dot == std::string::npos ? path.size() : dot + 1;
    }
    return *field;
  }

  // Every member of `value` is a property of `schema` (followed into objects, arrays and
  // maps): the server writes nothing its documents do not describe.
  void expect_describes(const json::object& schema, const json::value& value,
                        const std::string& path) const {
    const auto& s = resolve(schema);
    if (value.is_array()) {
      ASSERT_TRUE(s.contains("items")) << path << " is an array in the object only";
      for (const auto& v : value.as_array())
        expect_describes(s.at("items").as_object(), v, path + "[]");
      return;
    }
    if (!value.is_object() || s.contains("x-kubernetes-preserve-unknown-fields"))
      return;
    if (const auto* values = s.if_contains("additionalProperties")) {
      for (const auto& kv : value.as_object())
        expect_describes(values->as_object(), kv.value(), path + "." + std::string(kv.key()));
      return;
    }
    ASSERT_TRUE(s.contains("properties")) << path << " is an object in the object only";
    const auto& properties = s.at("properties").as_object();
    for (const auto& kv : value.as_object()) {
      std::string at = path + "." + std::string(kv.key());
      ASSERT_TRUE(properties.contains(kv.key())) << "the schema lacks " << at;
      expect_describes(properties.at(kv.key()).as_object(), kv.value(), at);
    }
  }
};

json::object v3_schemas(std::string_view group, std::string_view version) {
  auto doc = openapi_v3_document(group, version);
  EXPECT_TRUE(doc.has_value());
  return doc->at("components").at("schemas").as_object();
}

std::vector<object> example_objects(const std::string& example) {
  decode_options opts;
  opts.read_status = false;
  opts.default_namespace = "default";
  auto objs = decode_manifests(read_file(example_path(example)), opts);
  EXPECT_TRUE(objs.ok()) << example;
  return objs.ok() ? std::move(*objs) : std::vector<object>{};
}

// The fields of a Pod and a Node a user sets, each with a sentence for `kubectl explain`.
TEST(OpenApi, V3DescribesWhatUsersSetInPodsAndNodes) {
  auto schemas = v3_schemas("", "v1");
  schema_book book{schemas, "#/components/schemas/"};
  const std::string pod = "io.k8s.api.core.v1.Pod";
  const std::string node = "io.k8s.api.core.v1.Node";
  ASSERT_TRUE(schemas.contains(pod));
  ASSERT_TRUE(schemas.contains(node));
  EXPECT_EQ(schemas.at(pod).at("x-kubernetes-group-version-kind"),
            json::parse(R"([{"group":"","version":"v1","kind":"Pod"}])"));
  EXPECT_EQ(schemas.at(node).at("x-kubernetes-group-version-kind"),
            json::parse(R"([{"group":"","version":"v1","kind":"Node"}])"));
  for (const auto& [root, path] : std::vector<std::pair<std::string, std::string>>{
           {pod, "metadata"},
           {pod, "spec"},
           {pod, "spec.containers"},
           {pod, "spec.containers[].resources"},
           {pod, "spec.containers[].resources.requests"},
           {pod, "spec.containers[].resources.limits"},
           {pod, "spec.initContainers"},
           {pod, "spec.nodeSelector"},
           {pod, "spec.affinity"},
           {pod, "spec.affinity.nodeAffinity"},
           {pod, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"},
           {pod, "spec.affinity.podAntiAffinity"},
           {pod, "spec.tolerations"},
           {pod, "spec.tolerations[].effect"},
           {pod, "spec.tolerations[].operator"},
           {pod, "spec.schedulerName"},
           {pod, "spec.priorityClassName"},
           {pod, "spec.schedulingGates"},
           {pod, "spec.schedulingGates[].name"},
           {pod, "spec.topologySpreadConstraints"},
           {node, "spec.unschedulable"},
           {node, "spec.taints"},
           {node, "spec.taints[].effect"},
           {node, "status.capacity"},
           {node, "status.allocatable"},
       }) {
    const auto& f = book.field(root, path);
    ASSERT_TRUE(f.contains("description")) << root << " " << path;
    EXPECT_FALSE(f.at("description").as_string().empty()) << root << " " << path;
  }
  // The annotations Phalanx reads of a pod are named where kubectl explain pod.metadata looks.
  std::string metadata(book.field(pod, "metadata").at("description").as_string());
  for (auto annotation : {"scheduling.k8s.io/group-name", "volcano.sh/task-spec",
                          "scheduling.volcano.sh/queue-name", "sim.phalanx.io/"})
    EXPECT_NE(metadata.find(annotation), std::string::npos) << annotation;
  EXPECT_EQ(book.field(pod, "spec.containers[].resources.requests").at("type"), "object");
  EXPECT_EQ(book.field(node, "spec.unschedulable").at("type"), "boolean");
  // The type kubectl names a field by is the last part of its schema's name.
  EXPECT_EQ(book.field(pod, "spec.containers[].resources").at("allOf").at(0).at("$ref"),
            "#/components/schemas/io.k8s.api.core.v1.ResourceRequirements");

  // Pods and Nodes as the server writes them: every member described.
  for (const auto* example : {"gang-pods.yaml", "nodes.yaml"}) {
    for (const auto& o : example_objects(example)) {
      auto root = kind_of(o) == resource_kind::pod ? pod : node;
      book.expect_describes(schemas.at(root).as_object(), encode_object(o), root);
    }
  }
}

// Every kind of every group-version has its schema, and the documents' revision moved with
// them, so that kubectl's cache reads them again.
TEST(OpenApi, V3HasASchemaForEveryKind) {
  for (const auto& k : all_kinds()) {
    auto schemas = v3_schemas(k.group, k.version);
    bool found = false;
    for (const auto& kv : schemas) {
      if (const auto* gvk = kv.value().as_object().if_contains("x-kubernetes-group-version-kind"))
        found = found || gvk->at(0).at("kind").as_string() == k.kind_name;
    }
    EXPECT_TRUE(found) << k.kind_name;
  }
  auto index = openapi_v3_index();
  EXPECT_EQ(index.at("paths").at("api/v1").at("serverRelativeURL"),
            "/openapi/v3/api/v1?hash=phalanx-6");
}

// /openapi/v2: the same schemas as definitions, referred to as v2 does, each kind's paths with
// its group-version-kind, and its lists.
TEST(OpenApi, V2DefinesEveryKindAndItsPaths) {
  const auto& doc = openapi_v2_document();
  EXPECT_EQ(doc.at("swagger"), "2.0");
  const auto& definitions = doc.at("definitions").as_object();
  schema_book book{definitions, "#/definitions/"};
  // Every reference resolves, and none is v3's.
  std::vector<const json::value*> to_visit{&doc.at("definitions"), &doc.at("paths")};
  while (!to_visit.empty()) {
    const auto* v = to_visit.back();
    to_visit.pop_back();
    if (v->is_array()) {
      for (const auto& e : v->as_array())
        to_visit.push_back(&e);
    } else if (v->is_object()) {
      EXPECT_FALSE(v->as_object().contains("allOf")) << *v;
      if (v->as_object().contains("$ref"))
        book.resolve(v->as_object());
      for (const auto& kv : v->as_object())
        to_visit.push_back(&kv.value());
    }
  }
  const auto& v3 = v3_schemas("", "v1");
  for (const auto& name : {"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec",
                           "io.k8s.api.core.v1.Node", "io.k8s.api.core.v1.Event"}) {
    ASSERT_TRUE(definitions.contains(name)) << name;
    // The same properties and descriptions as /openapi/v3's.
    EXPECT_EQ(definitions.at(name).at("properties").as_object().size(),
              v3.at(name).at("properties").as_object().size())
        << name;
    EXPECT_EQ(definitions.at(name).at("description"), v3.at(name).at("description")) << name;
  }
  EXPECT_EQ(book.field("io.k8s.api.core.v1.Pod", "spec").at("$ref"),
            "#/definitions/io.k8s.api.core.v1.PodSpec");
  EXPECT_FALSE(book.field("io.k8s.api.core.v1.Pod", "spec").at("description").as_string().empty());
  EXPECT_EQ(definitions.at("io.k8s.api.core.v1.PodList").at("x-kubernetes-group-version-kind"),
            json::parse(R"([{"group":"","version":"v1","kind":"PodList"}])"));
  EXPECT_EQ(book.field("io.k8s.api.core.v1.PodList", "items").at("items").at("$ref"),
            "#/definitions/io.k8s.api.core.v1.Pod");
  EXPECT_TRUE(book.field("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "continue")
                  .contains("description"));

  const auto& paths = doc.at("paths").as_object();
  for (const auto& k : all_kinds()) {
    std::string prefix = k.group.empty() ? "/api/v1/"
                                         : "/apis/" + std::string(k.group) + "/" +
                                               std::string(k.version) + "/";
    std::string collection = prefix + (k.namespaced ? "namespaces/{namespace}/" : "") +
                             std::string(k.plural);
    ASSERT_TRUE(paths.contains(collection)) << collection;
    ASSERT_TRUE(paths.contains(collection + "/{name}")) << collection;
    const auto& item = paths.at(collection + "/{name}").as_object();
    for (auto verb : {"get", "put", "patch", "delete"}) {
      ASSERT_TRUE(item.contains(verb)) << collection << " " << verb;
      EXPECT_EQ(item.at(verb).at("x-kubernetes-group-version-kind").at("kind").as_string(),
                k.kind_name);
    }
    EXPECT_EQ(item.at("patch").at("x-kubernetes-action"), "patch");
    EXPECT_EQ(item.at("patch").at("parameters").at(1).at("name"), "fieldValidation");
    // No patch types named: kubectl then builds its patches from its own types.
    EXPECT_FALSE(item.at("patch").as_object().contains("consumes"));
    const auto& list = paths.at(collection).at("get");
    EXPECT_EQ(list.at("x-kubernetes-action"), "list");
    std::string answer(list.at("responses").at("200").at("schema").at("$ref").as_string());
    EXPECT_TRUE(answer.ends_with("." + std::string(k.list_kind))) << answer;
    // Lists come in pages.
    std::set<std::string> parameters;
    for (const auto& p : list.at("parameters").as_array())
      parameters.emplace(p.at("name").as_string());
    EXPECT_TRUE(parameters.count("limit") && parameters.count("continue")) << collection;
    if (k.namespaced) {
      EXPECT_TRUE(paths.contains(prefix + std::string(k.plural))) << k.plural;
    }
  }
  // Events are read-only: reads only.
  const auto& events = paths.at("/api/v1/namespaces/{namespace}/events/{name}").as_object();
  EXPECT_TRUE(events.contains("get"));
  EXPECT_FALSE(events.contains("patch"));
}

// The protobuf kubectl reads says what the JSON says: every definition, property, path and
// operation, and the vendor extensions as YAML (JSON) text.
TEST(OpenApi, V2ProtobufSaysWhatTheJsonSays) {
  const auto& doc = openapi_v2_document();
  const auto& bytes = openapi_v2_protobuf();
  ASSERT_TRUE(bytes.ok()) << bytes.error().message;
  openapi_v2::Document parsed;
  ASSERT_TRUE(parsed.ParseFromString(*bytes));
  EXPECT_EQ(parsed.swagger(), "2.0");
  const auto& definitions = doc.at("definitions").as_object();
  ASSERT_EQ(std::size_t(parsed.definitions().additional_properties_size()), definitions.size());
  for (const auto& named : parsed.definitions().additional_properties()) {
    ASSERT_TRUE(definitions.contains(named.name())) << named.name();
    const auto& json_schema = definitions.at(named.name()).as_object();
    EXPECT_EQ(std::size_t(named.value().properties().additional_properties_size()),
              json_schema.at("properties").as_object().size())
        << named.name();
    if (json_schema.contains("description")) {
      EXPECT_EQ(named.value().description(), json_schema.at("description").as_string());
    }
  }
  const openapi_v2::Schema* pod = nullptr;
  for (const auto& named : parsed.definitions().additional_properties())
    if (named.name() == "io.k8s.api.core.v1.Pod")
      pod = &named.value();
  ASSERT_NE(pod, nullptr);
  ASSERT_EQ(pod->vendor_extension_size(), 1);
  EXPECT_EQ(pod->vendor_extension(0).name(), "x-kubernetes-group-version-kind");
  EXPECT_EQ(json::parse(pod->vendor_extension(0).value().yaml()),
            json::parse(R"([{"group":"","version":"v1","kind":"Pod"}])"));
  EXPECT_EQ(pod->type().value(0), "object");
  for (const auto& p : pod->properties().additional_properties()) {
    if (p.name() == "spec") {
      EXPECT_EQ(p.value().ref(), "#/definitions/io.k8s.api.core.v1.PodSpec");
    }
  }
  const auto& paths = doc.at("paths").as_object();
  ASSERT_EQ(std::size_t(parsed.paths().path_size()), paths.size());
  for (const auto& named : parsed.paths().path()) {
    const auto& item = paths.at(named.name()).as_object();
    EXPECT_EQ(named.value().has_patch(), item.contains("patch")) << named.name();
    EXPECT_EQ(named.value().has_get(), item.contains("get")) << named.name();
    if (named.value().has_patch()) {
      const auto& patch = named.value().patch();
      EXPECT_EQ(std::size_t(patch.parameters_size()),
                item.at("patch").at("parameters").as_array().size());
      EXPECT_EQ(patch.operation_id(), item.at("patch").at("operationId").as_string());
      bool gvk = false;
      for (const auto& e : patch.vendor_extension())
        gvk = gvk || (e.name() == "x-kubernetes-group-version-kind" &&
                      json::parse(e.value().yaml()) ==
                          item.at("patch").at("x-kubernetes-group-version-kind"));
      EXPECT_TRUE(gvk) << named.name();
    }
  }

  // A member the encoding has no field for is an error that names it, not a silent loss.
  auto extra = doc;
  extra.as_object()["definitions"].as_object()["io.k8s.api.core.v1.Pod"].as_object()["oneOf"] =
      json::array{};
  auto refused = openapi_v2_to_protobuf(extra);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("definitions.io.k8s.api.core.v1.Pod.oneOf"),
            std::string::npos)
      << refused.error().message;
}

} // namespace
} // namespace phalanx::api::test
