#include "api/ctl/paths.hpp"

#include "api/kinds.hpp"

namespace phalanx::api::ctl {

std::string percent_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += ch;
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

namespace {

std::string group_prefix(const kind_info& k) {
  if (k.group.empty())
    return "/api/v1";
  return "/apis/" + std::string(k.api_version);
}

} // namespace

bool namespaced(resource_kind kind) {
  return info(kind).namespaced;
}

std::string collection_path(resource_kind kind, std::string_view namespace_name) {
  const auto& k = info(kind);
  std::string out = group_prefix(k);
  if (k.namespaced && !namespace_name.empty())
    out += "/namespaces/" + percent_encode(namespace_name);
  out += '/';
  out += k.plural;
  return out;
}

std::string item_path(resource_kind kind, std::string_view namespace_name,
                      std::string_view name) {
  return collection_path(kind, namespace_name) + "/" + percent_encode(name);
}

std::string resource_spelling(resource_kind kind) {
  const auto& k = info(kind);
  std::string out(k.singular);
  if (!k.group.empty())
    out += "." + std::string(k.group);
  return out;
}

std::string qualified_name(resource_kind kind, std::string_view name) {
  return resource_spelling(kind) + "/" + std::string(name);
}

std::string events_collection_path(event_version version, std::string_view namespace_name) {
  std::string out = version == event_version::core_v1 ? "/api/v1" : "/apis/events.k8s.io/v1";
  if (!namespace_name.empty())
    out += "/namespaces/" + percent_encode(namespace_name);
  return out + "/events";
}

std::string events_item_path(event_version version, std::string_view namespace_name,
                             std::string_view name) {
  return events_collection_path(version, namespace_name) + "/" + percent_encode(name);
}

std::string events_qualified_name(event_version version, std::string_view name) {
  return (version == event_version::core_v1 ? "event/" : "event.events.k8s.io/") +
         std::string(name);
}

} // namespace phalanx::api::ctl
