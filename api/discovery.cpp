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
  {"events.k8s.io", "v1"},
};

void fill_group(const group_entry& g, v1::APIGroup& out) {
  out.set_name(std::string(g.name));
  auto* v = out.add_versions();
  v->set_group_version(std::string(g.name) + "/" + std::string(g.version));
  v->set_version(std::string(g.version));
  *out.mutable_preferred_version() = *v;
}

} // namespace

bool serves_events(std::string_view group, std::string_view version) {
  return (group.empty() || group == "events.k8s.io") && version == "v1";
}

std::vector<std::pair<std::string_view, std::string_view>> served_group_versions() {
  std::vector<std::pair<std::string_view, std::string_view>> out{{"", "v1"}};
  for (const auto& g : groups)
    out.emplace_back(g.name, g.version);
  return out;
}

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

json::value version_info() {
  v1::VersionInfo out;
  out.set_major(std::string(served_kubernetes_major));
  out.set_minor(std::string(served_kubernetes_minor));
  out.set_git_version(std::string(served_git_version));
  out.set_git_tree_state("clean");
  out.set_go_version("none (C++20)");
  out.set_compiler("phalanx");
  out.set_platform("linux/amd64");
  return message_to_json(out);
}

} // namespace phalanx::api
