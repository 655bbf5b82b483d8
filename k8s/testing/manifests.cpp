#include "k8s/testing/manifests.hpp"

#include "api/codec.hpp"
#include "k8s/operations.hpp"

#include <boost/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

namespace phalanx::k8s::testing {

namespace json = boost::json;

namespace {

} // namespace

result<std::string> collection_of(const json::value& o) {
  auto api_version = string_at(o, {"apiVersion"});
  auto kind = string_at(o, {"kind"});
  auto ns = string_at(o, {"metadata", "namespace"});
  // Kind -> (resource, namespaced).
  static const std::map<std::string, std::pair<std::string, bool>> kinds = {
      {"CustomResourceDefinition", {"customresourcedefinitions", false}},
      {"Namespace", {"namespaces", false}},
      {"ServiceAccount", {"serviceaccounts", true}},
      {"ClusterRole", {"clusterroles", false}},
      {"ClusterRoleBinding", {"clusterrolebindings", false}},
      {"Role", {"roles", true}},
      {"RoleBinding", {"rolebindings", true}},
      {"Queue", {"queues", false}},
      {"PodGroup", {"podgroups", true}},
      {"Job", {"jobs", true}},  // batch.volcano.sh/v1alpha1 (or batch/v1: by apiVersion).
      {"Pod", {"pods", true}},
      {"Node", {"nodes", false}},
      {"PriorityClass", {"priorityclasses", false}},
      {"ReplicaSet", {"replicasets", true}},  // apps/v1: owners of pods (no controller runs).
      {"StatefulSet", {"statefulsets", true}},
  };
  auto k = kinds.find(kind);
  if (k == kinds.end())
    return status{errc::invalid_argument, "apply: kind \"" + kind + "\" is not one it knows"};
  std::string base = api_version == "v1" ? "/api/v1" : "/apis/" + api_version;
  if (k->second.second)
    return base + "/namespaces/" + (ns.empty() ? std::string("default") : ns) + "/" +
           k->second.first;
  return base + "/" + k->second.first;
}

status apply(client& c, const json::value& object) {
  auto path = collection_of(object);
  if (!path)
    return path.error();
  auto created = post_json(c, *path, object);
  if (created)
    return {};
  if (created.error().code() != errc::already_exists)
    return status{created.error().code(), "create " + *path + ": " + created.error().message()};
  auto one = *path + "/" + string_at(object, {"metadata", "name"});
  auto existing = get_json(c, one);
  if (!existing)
    return status{existing.error().code(), "get " + one + ": " + existing.error().message()};
  auto replacement = object;
  replacement.as_object()["metadata"].as_object()["resourceVersion"] =
      string_at(*existing, {"metadata", "resourceVersion"});
  if (auto put = put_json(c, one, replacement); !put)
    return status{put.error().code(), "replace " + one + ": " + put.error().message()};
  return {};
}

status apply_text(client& c, std::string_view text) {
  auto docs = api::parse_manifests(text);
  if (!docs)
    return status{errc::invalid_argument, docs.error().message};
  for (const auto& d : *docs)
    if (auto s = apply(c, d); !s.ok())
      return s;
  return {};
}

status apply_file(client& c, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return status{errc::not_found, "cannot read " + path};
  std::ostringstream s;
  s << in.rdbuf();
  auto applied = apply_text(c, s.str());
  if (!applied.ok())
    return status{applied.code(), path + ": " + applied.message()};
  return {};
}

} // namespace phalanx::k8s::testing
