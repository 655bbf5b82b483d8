#include "api/update.hpp"

#include "api/json_patch.hpp"
#include "api/json_mapper.hpp"

#include <boost/json.hpp>

#include <charconv>

namespace phalanx::api {

namespace json = boost::json;

namespace {

constexpr std::string_view json_patch_type = "application/json-patch+json";
constexpr std::string_view merge_patch_type = "application/merge-patch+json";
constexpr std::string_view strategic_patch_type = "application/strategic-merge-patch+json";

// Kubernetes' own kinds (core, scheduling.k8s.io) take strategic merge patches and unconditional
// PUTs; Volcano's are custom resources, which take neither.
bool is_built_in(const kind_info& k) { return !k.group.ends_with("volcano.sh"); }

const json::object& object_at(const json::object& o, std::string_view key) {
  static const json::object empty;
  const auto* v = o.if_contains(key);
  return v && v->is_object() ? v->get_object() : empty;
}

std::string string_at(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// Metadata a request may change, or that the server sets and a request cannot (resourceVersion
// is the update's precondition, read apart; generation and managedFields are the server's).
bool meta_may_change(std::string_view key) {
  return key == "labels" || key == "annotations" || key == "finalizers" ||
         key == "ownerReferences" || key == "resourceVersion" || key == "generation" ||
         key == "managedFields" || key == "selfLink";
}

// The object as the server would keep it: decoded and written again, so that a PUT of the
// manifest an object was created from equals the object as served (defaults filled in the same
// way on both sides). Null when it does not decode (the update's own decode then reports why).
std::optional<json::object> normalized(const json::value& v, resource_kind kind) {
  decode_options options;
  options.expected_kind = kind;
  options.read_status = false;
  options.validate = false;
  auto decoded = decode_object(v, options);
  if (!decoded)
    return std::nullopt;
  return encode_object(*decoded).get_object();
}

std::optional<json::object> normalized_spec(const json::value& v, resource_kind kind) {
  auto whole = normalized(v, kind);
  if (!whole)
    return std::nullopt;
  return object_at(*whole, "spec");
}

// A PriorityClass's value and preemptionPolicy never change (kube-apiserver's
// ValidatePriorityClassUpdate, in its words): objects already took the value.
void check_priority_class(const json::value& before, const json::value& after,
                          scheduler::field_errors& errs) {
  auto a = normalized(before, resource_kind::priority_class);
  auto b = normalized(after, resource_kind::priority_class);
  if (!a || !b)
    return;
  if (a->at("value") != b->at("value"))
    errs.push_back(scheduler::forbidden_error("value", "may not be changed in an update."));
  if (a->at("preemptionPolicy") != b->at("preemptionPolicy"))
    errs.push_back({scheduler::field_error_type::invalid, "preemptionPolicy",
                    scheduler::go_quote(b->at("preemptionPolicy").as_string()),
                    "field is immutable"});
}

// A Volcano Job's update, as Volcano's admission webhook takes it (validateJobUpdate, in its
// words): the tasks stay the same ones, and only minAvailable, each task's replicas and
// minAvailable, and priorityClassName change; the job controller then scales the job. The
// volumeClaimName of a volume that describes its claim (volumeClaim) is left out of the
// comparison on both sides, as Volcano's is: the controller wrote a generated one there, which
// a manifest applied again does not have (the job keeps its claim: the registry's update takes
// the volumes from the job as it is).
void check_job(const json::value& before, const json::value& after,
               scheduler::field_errors& errs) {
  auto a = normalized_spec(before, resource_kind::job);
  auto b = normalized_spec(after, resource_kind::job);
  if (!a || !b)
    return;
  auto tasks = [](json::object& spec) -> json::array* {
    auto* t = spec.if_contains("tasks");
    return t && t->is_array() ? &t->get_array() : nullptr;
  };
  auto* ta = tasks(*a);
  auto* tb = tasks(*b);
  if ((ta ? ta->size() : 0) != (tb ? tb->size() : 0)) {
    errs.push_back(scheduler::forbidden_error("spec.tasks", "job updates may not add or remove tasks"));
    return;
  }
  for (auto* spec : {&*a, &*b}) {
    spec->erase("minAvailable");
    spec->erase("priorityClassName");
    if (auto* volumes = spec->if_contains("volumes"); volumes && volumes->is_array())
      for (auto& v : volumes->get_array())
        if (const auto* claim = v.is_object() ? v.get_object().if_contains("volumeClaim") : nullptr;
            claim != nullptr && !claim->is_null())
          v.get_object().erase("volumeClaimName");
    if (auto* list = tasks(*spec))
      for (auto& t : *list)
        if (t.is_object()) {
          t.get_object().erase("replicas");
          t.get_object().erase("minAvailable");
        }
  }
  if (*a != *b)
    errs.push_back(scheduler::forbidden_error(
        "spec", "job updates may not change fields other than `minAvailable`, "
                "`tasks[*].replicas under spec` and `PriorityClassName`"));
}

// What of the spec the kind lets change after creation: nothing else may differ.
void check_spec(const kind_info& k, const json::value& before, const json::value& after,
                scheduler::field_errors& errs) {
  std::vector<std::string_view> may_change;
  std::string why;
  switch (k.kind) {
    case resource_kind::priority_class:
      return check_priority_class(before, after, errs);
    case resource_kind::job:
      return check_job(before, after, errs);
    case resource_kind::pod:
      may_change = {"schedulingGates"};
      why = "pod updates may not change fields other than `spec.schedulingGates` (only "
            "deletions): Phalanx changes a pod's labels, annotations and scheduling gates";
      break;
    case resource_kind::node:
      may_change = {"unschedulable", "taints"};
      why = "node updates may not change fields other than `spec.unschedulable` and "
            "`spec.taints`";
      break;
    default:
      return;  // Every field of the spec may change; the service checks what needs state.
  }
  auto a = normalized_spec(before, k.kind);
  auto b = normalized_spec(after, k.kind);
  if (!a || !b)
    return;
  for (auto key : may_change) {
    a->erase(key);
    b->erase(key);
  }
  if (*a != *b)
    errs.push_back(scheduler::forbidden_error("spec", why));
}

std::string name_in(const json::object& meta) { return string_at(meta, "name"); }

} // namespace

bool takes_patch_type(const kind_info& k, std::string_view type) {
  return type == json_patch_type || type == merge_patch_type ||
         (is_built_in(k) && type == strategic_patch_type);
}

std::string_view patch_types_of(const kind_info& k) {
  return is_built_in(k) ? "application/json-patch+json, application/merge-patch+json or "
                      "application/strategic-merge-patch+json"
                    : "application/json-patch+json or application/merge-patch+json";
}

outcome<json::value> apply_patch(const kind_info& k, json::value current, const json::value& patch,
                                 std::string_view type) {
  result<json::value> patched = [&]() -> result<json::value> {
    if (type == json_patch_type)
      return apply_json_patch(std::move(current), patch);
    if (type == merge_patch_type)
      return apply_merge_patch(std::move(current), patch);
    return apply_strategic_merge_patch(std::move(current), patch,
                                       strategic_merge_keys(k.kind_name));
  }();
  if (!patched)
    return api_error::from(patched.error());
  return std::move(*patched);
}

outcome<object> prepare_update(const kind_info& k, const json::value& current, json::value next,
                               update_verb verb, std::vector<std::string>* unknown) {
  const bool put = verb == update_verb::put;
  if (!current.is_object())
    return api_error::bad_request("the stored object is not a JSON object");
  if (!next.is_object())
    return api_error::bad_request(put ? "the body must be a JSON object"
                                      : "the patched object is not a JSON object");
  const auto& was = current.get_object();
  auto& after = next.get_object();
  const auto& meta_before = object_at(was, "metadata");
  const std::string name = name_in(meta_before);
  scheduler::field_errors errs;

  for (std::string_view top : {"apiVersion", "kind"}) {
    const auto* v = after.if_contains(top);
    const auto& expected = was.at(top);
    if (put && (v == nullptr || v->is_null() || (v->is_string() && v->get_string().empty()))) {
      after[top] = expected;  // A body without them is read as the URL's kind.
      continue;
    }
    if (v != nullptr && *v == expected)
      continue;
    if (put)
      return api_error::bad_request(
          "the " + std::string(top) + " of the provided object (" +
          (v && v->is_string() ? std::string(v->get_string()) : render_value(*v)) +
          ") does not match the " + std::string(top) + " of the resource on the URL (" +
          std::string(expected.get_string()) + ")");
    errs.push_back({scheduler::field_error_type::invalid, std::string(top),
                    v && v->is_string() ? scheduler::go_quote(v->get_string()) : "",
                    "field is immutable"});
  }

  auto* md = after.if_contains("metadata");
  if (md == nullptr || md->is_null())
    md = &(after["metadata"] = json::object{});
  if (!md->is_object())
    return api_error::invalid(k.qualified_kind, name,
                              {{scheduler::field_error_type::invalid, "metadata",
                                render_value(*md), "must be an object"}});
  auto& meta_after = md->get_object();
  // A PUT's name and namespace are the URL's (a PATCH that changes them is refused below).
  if (put)
    for (std::string_view key : {"name", "namespace"}) {
      auto said = string_at(meta_after, key);
      auto url = string_at(meta_before, key);
      if (said.empty()) {
        if (!url.empty())
          meta_after[key] = url;
        continue;
      }
      if (said != url)
        return api_error::bad_request("the " + std::string(key) + " of the provided object (" +
                                      said + ") does not match the " + std::string(key) +
                                      " on the URL (" + url + ")");
    }
  // What the server set at creation: kept when a PUT leaves it out, never changed.
  for (const auto& [key, value] : meta_before)
    if (!meta_may_change(key) && put && meta_after.if_contains(key) == nullptr)
      meta_after[key] = value;
  const json::object& meta_said = meta_after;
  for (const json::object* side : {&meta_before, &meta_said})
    for (const auto& [key, value] : *side) {
      if (meta_may_change(key) || (side == &meta_said && meta_before.if_contains(key)))
        continue;
      const auto* a = meta_before.if_contains(key);
      const auto* b = meta_after.if_contains(key);
      if ((a == nullptr) != (b == nullptr) || (a && *a != *b))
        errs.push_back({scheduler::field_error_type::invalid, "metadata." + std::string(key),
                        b && b->is_string() ? scheduler::go_quote(b->get_string()) : "",
                        "field is immutable"});
    }
  if (errs.empty())
    check_spec(k, current, next, errs);
  if (!errs.empty())
    return api_error::invalid(k.qualified_kind, name, errs);

  // The resourceVersion the update must find.
  std::string expected = string_at(meta_after, "resourceVersion");
  if (expected.empty() && !put)
    expected = string_at(meta_before, "resourceVersion");
  uint64_t version = 0;
  if (expected.empty()) {
    if (!is_built_in(k))
      return api_error::invalid(k.qualified_kind, name,
                                {{scheduler::field_error_type::invalid, "metadata.resourceVersion",
                                  "0x0", "must be specified for an update"}});
  } else {
    auto [end, ec] = std::from_chars(expected.data(), expected.data() + expected.size(), version);
    if (ec != std::errc{} || end != expected.data() + expected.size())
      return api_error::invalid(k.qualified_kind, name,
                                {{scheduler::field_error_type::invalid, "metadata.resourceVersion",
                                  scheduler::go_quote(expected),
                                  "must be a resource version this server gave"}});
  }

  decode_options options;
  options.expected_kind = k.kind;
  options.read_status = false;
  options.unknown_fields = unknown;
  auto decoded = decode_object(next, options);
  if (!decoded)
    return std::move(decoded).error();
  meta_of(*decoded).resource_version = version;
  return std::move(*decoded);
}

} // namespace phalanx::api
