#include "k8s/operations.hpp"

#include "api/codec.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>

namespace phalanx::k8s {

const boost::json::value* value_at(const boost::json::value& v,
                                   std::initializer_list<const char*> path) {
  const boost::json::value* at = &v;
  for (const char* key : path) {
    if (!at->is_object())
      return nullptr;
    at = at->as_object().if_contains(key);
    if (at == nullptr)
      return nullptr;
  }
  return at;
}

std::string string_at(const boost::json::value& v, std::initializer_list<const char*> path) {
  const auto* at = value_at(v, path);
  return at && at->is_string() ? std::string(at->as_string()) : std::string{};
}


namespace json = boost::json;

namespace {

result<json::value> parse_body(const api::client_response& r, const std::string& what) {
  api::parse_limits limits;
  limits.max_bytes = std::max<std::size_t>(limits.max_bytes, r.body.size());
  limits.max_depth = 128;
  auto v = api::parse_json(r.body, limits);
  if (!v)
    return status{errc::corruption, what + ": the answer is not JSON: " + v.error().message};
  return std::move(*v);
}

result<json::value> call(client& c, std::string method, const std::string& path, std::string body,
                         std::string content_type) {
  const std::string what = method + " " + path;
  auto res = c.request({.method = std::move(method),
                        .target = path,
                        .body = std::move(body),
                        .content_type = std::move(content_type)});
  if (!res)
    return res.error();
  if (auto s = status_of(*res, what); !s.ok())
    return s;
  return parse_body(*res, what);
}

bool present(const json::value& v, std::string_view section, std::string_view key) {
  if (!v.is_object())
    return false;
  auto* s = v.get_object().if_contains(section);
  if (!s || !s->is_object())
    return false;
  auto* k = s->get_object().if_contains(key);
  if (!k || k->is_null())
    return false;
  return !(k->is_array() && k->get_array().empty());
}

} // namespace

std::string_view to_string(bind_result r) noexcept {
  switch (r) {
    case bind_result::bound:
      return "bound";
    case bind_result::already_bound_here:
      return "already_bound_here";
    case bind_result::gone:
      return "gone";
    case bind_result::retry:
      return "retry";
    case bind_result::rejected:
      return "rejected";
  }
  return "unknown";
}

std::string_view to_string(patch_type t) noexcept {
  switch (t) {
    case patch_type::merge:
      return "merge";
    case patch_type::strategic_merge:
      return "strategic_merge";
    case patch_type::json_patch:
      return "json_patch";
  }
  return "unknown";
}

std::string_view content_type_of(patch_type t) noexcept {
  switch (t) {
    case patch_type::merge:
      return "application/merge-patch+json";
    case patch_type::strategic_merge:
      return "application/strategic-merge-patch+json";
    case patch_type::json_patch:
      return "application/json-patch+json";
  }
  return "application/json";
}

bind_outcome bind_pod(client& c, const std::string& ns, const std::string& name,
                      const std::string& uid, const std::string& node) {
  const std::string pod_path = "/api/v1/namespaces/" + ns + "/pods/" + name;
  const std::string pod = ns + "/" + name;
  json::object binding;
  binding["apiVersion"] = "v1";
  binding["kind"] = "Binding";
  json::object meta{{"name", name}, {"namespace", ns}};
  if (!uid.empty())
    meta["uid"] = uid;
  binding["metadata"] = std::move(meta);
  binding["target"] = {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}};

  auto res = c.request({.method = "POST",
                        .target = pod_path + "/binding",
                        .body = json::serialize(binding),
                        .content_type = "application/json"});
  bind_outcome out;
  if (!res) {
    out.result = bind_result::retry;
    out.message = "bind " + pod + " to " + node + ": " + res.error().message();
    return out;
  }
  if (res->status == 201 || res->status == 200) {
    out.result = bind_result::bound;
    return out;
  }
  out.message = status_of(*res, "bind " + pod + " to " + node).message();
  if (res->status == 404) {
    out.result = bind_result::gone;
    return out;
  }
  if (res->status == 401 || is_retryable(res)) {
    out.result = bind_result::retry;
    out.retry_after = retry_after(res);
    return out;
  }
  if (res->status != 409) {
    out.result = bind_result::rejected;
    return out;
  }

  // 409: read the pod to tell which conflict it was.
  request_spec get;
  get.target = pod_path;
  auto got = c.request(get);
  if (!got || is_retryable(got) || (got->status != 200 && got->status != 404)) {
    out.result = bind_result::retry;
    out.message += got ? " (and reading the pod: HTTP " + std::to_string(got->status) + ")"
                       : " (and reading the pod: " + got.error().message() + ")";
    return out;
  }
  if (got->status == 404) {
    out.result = bind_result::gone;
    out.message = "bind " + pod + ": the pod was deleted";
    return out;
  }
  auto p = parse_body(*got, "GET " + pod_path);
  if (!p) {
    out.result = bind_result::retry;
    out.message += " (and reading the pod: " + p.error().message() + ")";
    return out;
  }
  const std::string current_uid = string_at(*p, {"metadata", "uid"});
  const std::string bound_to = string_at(*p, {"spec", "nodeName"});
  if (!uid.empty() && current_uid != uid) {
    out.result = bind_result::gone;
    out.message = "bind " + pod + ": the pod under that name is another one now (uid " +
                  current_uid + ", ours " + uid + ")";
    return out;
  }
  if (!bound_to.empty()) {
    if (bound_to == node) {
      out.result = bind_result::already_bound_here;
      out.message.clear();
      return out;
    }
    out.result = bind_result::gone;
    out.bound_node = bound_to;
    out.message = "bind " + pod + " to " + node + ": already bound to node " + bound_to;
    return out;
  }
  if (present(*p, "metadata", "deletionTimestamp")) {
    out.result = bind_result::gone;
    out.message = "bind " + pod + ": the pod is being deleted";
    return out;
  }
  if (present(*p, "spec", "schedulingGates")) {
    out.result = bind_result::rejected;
    out.message = "bind " + pod + ": the pod has scheduling gates";
    return out;
  }
  // Unbound, same uid, not terminating: the conflict is gone; binding again may work.
  out.result = bind_result::retry;
  return out;
}

result<json::value> get_json(client& c, const std::string& path) {
  return call(c, "GET", path, "", "");
}

result<json::value> put_json(client& c, const std::string& path, const json::value& body) {
  return call(c, "PUT", path, json::serialize(body), "application/json");
}

result<json::value> post_json(client& c, const std::string& path, const json::value& body) {
  return call(c, "POST", path, json::serialize(body), "application/json");
}

result<json::value> patch_json(client& c, const std::string& path, const json::value& patch,
                               patch_type type) {
  return call(c, "PATCH", path, json::serialize(patch), std::string(content_type_of(type)));
}

result<json::value> patch_pod_status(client& c, const std::string& ns, const std::string& name,
                                     const json::value& patch, patch_type type) {
  return patch_json(c, "/api/v1/namespaces/" + ns + "/pods/" + name + "/status", patch, type);
}

result<json::value> create_event(client& c, const std::string& ns, const json::value& event) {
  return post_json(c, "/api/v1/namespaces/" + ns + "/events", event);
}

status delete_object(client& c, const std::string& path, const std::string& uid,
                     std::optional<std::int64_t> grace_period_seconds) {
  std::string body;
  if (!uid.empty() || grace_period_seconds) {
    json::object opts{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
    if (!uid.empty())
      opts["preconditions"] = {{"uid", uid}};
    if (grace_period_seconds)
      opts["gracePeriodSeconds"] = *grace_period_seconds;
    body = json::serialize(opts);
  }
  auto res = c.request({.method = "DELETE",
                        .target = path,
                        .body = body,
                        .content_type = body.empty() ? "" : "application/json"});
  if (!res)
    return res.error();
  return status_of(*res, "DELETE " + path);
}

evict_outcome evict_pod(client& c, const std::string& ns, const std::string& name,
                        const std::string& uid, const std::string& message,
                        const std::string& component, const std::string& instance) {
  const std::string pod = ns + "/" + name;
  const std::string now = api::format_time(std::chrono::time_point_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now()));
  evict_outcome out;

  // The names are kube-scheduler's (v1.DisruptionTarget, v1.PodReasonPreemptionByScheduler),
  // which Volcano writes too. metadata.uid makes the patch fail on another pod under the name
  // instead of marking it.
  json::object patch{
      {"status",
       {{"conditions", json::array{{{"type", "DisruptionTarget"},
                                    {"status", "True"},
                                    {"reason", "PreemptionByScheduler"},
                                    {"message", message},
                                    {"lastTransitionTime", now}}}}}}};
  if (!uid.empty())
    patch["metadata"] = {{"uid", uid}};
  std::string resource_version;
  bool victim_gone = false;  // Gone, or another pod took its name: no eviction to report.
  if (auto patched = patch_pod_status(c, ns, name, patch); patched) {
    resource_version = string_at(*patched, {"metadata", "resourceVersion"});
  } else if (patched.error().code() == errc::invalid_argument &&
             patched.error().message().find("metadata.uid") != std::string::npos) {
    // The apiserver answers another pod's uid with 422 "metadata.uid: field is immutable".
    victim_gone = true;
    out.condition_written = {errc::conflict, "evict " + pod + ": the pod under that name is not " +
                                                 uid + ": " + patched.error().message()};
  } else {
    victim_gone = patched.error().code() == errc::not_found;
    out.condition_written = patched.error();
  }

  if (victim_gone) {
    out.event_written = {out.condition_written.code(), "evict " + pod + ": event not written: " +
                                                           out.condition_written.message()};
  } else {
    json::object involved{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", name}, {"namespace", ns}};
    if (!uid.empty())
      involved["uid"] = uid;
    if (!resource_version.empty())
      involved["resourceVersion"] = resource_version;
    json::object event{{"apiVersion", "v1"},
                       {"kind", "Event"},
                       {"metadata", {{"generateName", name + "."}, {"namespace", ns}}},
                       {"involvedObject", std::move(involved)},
                       {"reason", "Evict"},
                       {"message", message},
                       {"type", "Warning"},
                       {"source", {{"component", component}}},
                       {"reportingComponent", component},
                       {"firstTimestamp", now},
                       {"lastTimestamp", now},
                       {"count", 1}};
    if (!instance.empty())
      event["reportingInstance"] = instance;
    if (auto posted = create_event(c, ns, event); !posted)
      out.event_written = posted.error();
  }

  out.deleted = delete_object(c, "/api/v1/namespaces/" + ns + "/pods/" + name, uid);
  return out;
}

} // namespace phalanx::k8s
