#include "api/discovery.hpp"

#include "api/json_mapper.hpp"
#include "api/kinds.hpp"

#include "api/proto/discovery.pb.h"

#include <boost/json.hpp>

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
};

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
  if (group.empty() && version == "v1") {
    // core/v1 Events, read-only: the events the service records (api/events.hpp).
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
    paths[path] = json::object{{"serverRelativeURL", "/openapi/v3/" + path + "?hash=phalanx-1"}};
  }
  return json::object{{"paths", std::move(paths)}};
}

std::optional<json::value> openapi_v3_document(std::string_view group, std::string_view version) {
  json::object paths;
  for (const auto& k : all_kinds()) {
    if (k.group != group || k.version != version)
      continue;
    std::string prefix = "/" + openapi_path(group, version) + "/";
    std::string collection =
        prefix + (k.namespaced ? "namespaces/{namespace}/" : "") + std::string(k.plural);
    json::object gvk{{"group", k.group}, {"version", k.version}, {"kind", k.kind_name}};
    auto query = [](std::string_view name) {
      return json::object{{"name", name}, {"in", "query"}, {"schema", json::object{{"type", "string"}}}};
    };
    // What a write takes: fieldValidation (kubectl checks that a kind's PATCH takes it before
    // leaving validation to the server) and dryRun.
    auto write = [&](std::string_view id) {
      return json::object{{"operationId", id},
                          {"parameters", json::array{query("fieldValidation"), query("dryRun"),
                                                     query("fieldManager")}},
                          {"responses", json::object{{"200", json::object{{"description", "OK"}}}}},
                          {"x-kubernetes-group-version-kind", gvk}};
    };
    // Every kind lists its PATCH: kubectl looks for the parameter there for creates too.
    auto name = std::string(k.kind_name);
    paths[collection] = json::object{{"post", write("create" + name)}};
    paths[collection + "/{name}"] =
        json::object{{"put", write("replace" + name)}, {"patch", write("patch" + name)}};
  }
  if (paths.empty())
    return std::nullopt;
  return json::object{
      {"openapi", "3.0.0"},
      {"info", json::object{{"title", "Phalanx"}, {"version", std::string(version)}}},
      {"paths", std::move(paths)}};
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
