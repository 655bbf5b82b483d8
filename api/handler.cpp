#include "api/handler.hpp"

#include "api/codec.hpp"
#include "api/discovery.hpp"
#include "api/events.hpp"
#include "api/json_mapper.hpp"
#include "api/kinds.hpp"
#include "api/kube_protobuf.hpp"
#include "api/label_selector.hpp"
#include "api/list_page.hpp"
#include "api/openapi.hpp"
#include "api/update.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <random>

namespace phalanx::api {

namespace json = boost::json;

std::optional<std::string> percent_decode(std::string_view s, bool form) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size())
        return std::nullopt;
      int hi = hex(s[i + 1]);
      int lo = hex(s[i + 2]);
      if (hi < 0 || lo < 0)
        return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (form && c == '+') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

enum class output { json, yaml, table };

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// The media type of a Content-Type or Accept entry, lowercased, without parameters.
std::string media_type(std::string_view value) {
  auto semi = value.find(';');
  return lower(trim(value.substr(0, semi)));
}

std::map<std::string, std::string> media_params(std::string_view value) {
  std::map<std::string, std::string> out;
  std::size_t pos = value.find(';');
  while (pos != std::string_view::npos) {
    std::size_t next = value.find(';', pos + 1);
    std::string_view p = trim(value.substr(pos + 1, next == std::string_view::npos
                                                       ? std::string_view::npos
                                                       : next - pos - 1));
    auto eq = p.find('=');
    if (eq != std::string_view::npos)
      out[lower(trim(p.substr(0, eq)))] = std::string(trim(p.substr(eq + 1)));
    pos = next;
  }
  return out;
}

// Content negotiation: the first entry of Accept that Phalanx can produce.
std::optional<output> negotiate(std::string_view accept, bool table_ok) {
  if (trim(accept).empty())
    return output::json;
  std::size_t start = 0;
  while (start <= accept.size()) {
    std::size_t comma = accept.find(',', start);
    std::string_view entry =
      accept.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                           : comma - start);
    std::string type = media_type(entry);
    auto params = media_params(entry);
    auto as = params.find("as");
    if (type == "application/json" || type == "*/*" || type == "application/*") {
      if (as == params.end())
        return output::json;
      if (table_ok && as->second == "Table" && params["g"] == "meta.k8s.io" && params["v"] == "v1")
        return output::table;
    } else if (type == "application/yaml" && as == params.end()) {
      return output::yaml;
    }
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return std::nullopt;
}

struct target {
  std::vector<std::string> segments;
  std::map<std::string, std::string> query;
};

std::optional<target> parse_target(std::string_view t) {
  target out;
  auto q = t.find('?');
  std::string_view path = t.substr(0, q);
  if (path.empty() || path.front() != '/')
    return std::nullopt;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t slash = path.find('/', start);
    std::string_view seg =
      path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (!seg.empty()) {
      auto decoded = percent_decode(seg, false);
      if (!decoded)
        return std::nullopt;
      out.segments.push_back(std::move(*decoded));
    }
    if (slash == std::string_view::npos)
      break;
    start = slash + 1;
  }
  if (q != std::string_view::npos) {
    std::string_view query = t.substr(q + 1);
    std::size_t s = 0;
    while (s <= query.size()) {
      std::size_t amp = query.find('&', s);
      std::string_view pair =
        query.substr(s, amp == std::string_view::npos ? std::string_view::npos : amp - s);
      if (!pair.empty()) {
        auto eq = pair.find('=');
        auto k = percent_decode(pair.substr(0, eq), true);
        auto v = eq == std::string_view::npos ? std::optional<std::string>{""}
                                              : percent_decode(pair.substr(eq + 1), true);
        if (!k || !v)
          return std::nullopt;
        out.query[*k] = *v;
      }
      if (amp == std::string_view::npos)
        break;
      s = amp + 1;
    }
  }
  return out;
}

http_response json_response(int status, const json::value& v, output out, std::string verb) {
  http_response r;
  r.status = status;
  r.verb = std::move(verb);
  if (out == output::yaml) {
    r.content_type = "application/yaml";
    r.body = to_yaml(v);
  } else {
    r.content_type =
      out == output::table ? "application/json;as=Table;v=v1;g=meta.k8s.io" : "application/json";
    r.body = json::serialize(v);
  }
  return r;
}

http_response text_response(int status, std::string body, std::string content_type) {
  http_response r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

// The resource a list is of, as continue tokens name it: "pods", "podgroups.scheduling.volcano.sh".
std::string list_resource(const kind_info& k) {
  return k.group.empty() ? std::string(k.plural)
                         : std::string(k.plural) + "." + std::string(k.group);
}

// The encodings /openapi/v2 is served in: JSON, and the protobuf kubectl asks for (alone).
enum class openapi_v2_encoding { json, protobuf };

// The first encoding of the Accept header's that /openapi/v2 is served in (JSON when the
// header is empty); nullopt when it names none of them (YAML is not served, as
// kube-apiserver does not).
std::optional<openapi_v2_encoding> negotiate_openapi_v2(std::string_view accept) {
  if (trim(accept).empty())
    return openapi_v2_encoding::json;
  std::size_t start = 0;
  while (start <= accept.size()) {
    std::size_t comma = accept.find(',', start);
    std::string type = media_type(accept.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (type == openapi_v2_protobuf_type || type == openapi_v2_protobuf_content_type)
      return openapi_v2_encoding::protobuf;
    if (type == "application/json" || type == "*/*" || type == "application/*")
      return openapi_v2_encoding::json;
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return std::nullopt;
}

api_error not_found_path() {
  api_error e;
  e.reason = status_reason::not_found;
  e.message = "the server could not find the requested resource";
  return e;
}

api_error method_not_allowed(std::string message) {
  api_error e;
  e.reason = status_reason::method_not_allowed;
  e.message = std::move(message);
  return e;
}

api_error unsupported_media(std::string message) {
  api_error e;
  e.reason = status_reason::unsupported_media_type;
  e.message = std::move(message);
  return e;
}

// fieldValidation (Kubernetes' server-side field validation): what to do with fields of a
// write's body that the kind's API type does not have. The apiserver's default is Warn.
enum class field_validation { ignore, warn, strict };

std::optional<field_validation> field_validation_of(std::string_view text) {
  if (text.empty() || text == "Warn")
    return field_validation::warn;
  if (text == "Strict")
    return field_validation::strict;
  if (text == "Ignore")
    return field_validation::ignore;
  return std::nullopt;
}

// Strict: the write is refused naming every unknown field, as the apiserver's strict decoding
// says it.
api_error strict_decoding_error(const std::vector<std::string>& unknown) {
  std::string message = "strict decoding error: ";
  for (std::size_t i = 0; i < unknown.size(); ++i)
    message += (i ? ", " : "") + std::string("unknown field ") + scheduler::go_quote(unknown[i]);
  return api_error::bad_request(std::move(message));
}

// Warn: one Warning header per unknown field (RFC 7234 code 299), which kubectl prints.
void add_unknown_field_warnings(http_response& r, const std::vector<std::string>& unknown) {
  for (const auto& path : unknown)
    r.headers.emplace_back("Warning",
                           "299 - " + scheduler::go_quote("unknown field " + scheduler::go_quote(path)));
}

api_error with_details(api_error e, const kind_info& k, std::string_view name) {
  // Kubernetes' StatusDetails name the Kind for an Invalid error ("The Pod \"x\" is invalid",
  // as kubectl prints it) and the resource for the others ("pods \"x\" not found").
  if (e.kind.empty())
    e.kind = std::string(e.reason == status_reason::invalid ? k.kind_name : k.plural);
  if (e.group.empty())
    e.group = std::string(k.group);
  if (e.name.empty())
    e.name = std::string(name);
  return e;
}

// DeleteOptions.dryRun: absent or empty, or ["All"].
outcome<bool> delete_dry_run(const json::object& options) {
  const auto* dry = options.if_contains("dryRun");
  if (dry == nullptr || dry->is_null())
    return false;
  if (!dry->is_array())
    return api_error::bad_request("dryRun: must be a list of strings");
  for (const auto& v : dry->get_array())
    if (!v.is_string() || v.get_string() != "All")
      return api_error::bad_request("dryRun: Unsupported value: " + render_value(v) +
                                    ": supported values: \"All\"");
  return !dry->get_array().empty();
}

// DeleteOptions.gracePeriodSeconds, from the query or the body: an integer, unset when absent.
// A negative one means 1 s, as kube-apiserver takes it on the delete path.
outcome<std::optional<int64_t>> grace_period_of(const json::value* v) {
  if (v == nullptr || v->is_null())
    return std::optional<int64_t>{};
  std::optional<int64_t> seconds;
  if (v->is_int64())
    seconds = v->get_int64();
  else if (v->is_uint64() && v->get_uint64() <= uint64_t(std::numeric_limits<int64_t>::max()))
    seconds = int64_t(v->get_uint64());
  if (!seconds)
    return api_error::bad_request("gracePeriodSeconds: Invalid value: " + render_value(*v) +
                                  ": must be an integer number of seconds");
  return std::optional<int64_t>{*seconds < 0 ? 1 : *seconds};
}

outcome<std::optional<int64_t>> grace_period_of(std::string_view query_value) {
  if (query_value.empty())
    return std::optional<int64_t>{};
  int64_t seconds = 0;
  auto r = std::from_chars(query_value.data(), query_value.data() + query_value.size(), seconds);
  if (r.ec != std::errc{} || r.ptr != query_value.data() + query_value.size())
    return api_error::bad_request("gracePeriodSeconds: Invalid value: " +
                                  scheduler::go_quote(query_value) +
                                  ": must be an integer number of seconds");
  json::value v = seconds;
  return grace_period_of(&v);
}

std::optional<object_action::type> action_of(resource_kind kind, std::string_view sub) {
  using t = object_action::type;
  switch (kind) {
    case resource_kind::node:
      if (sub == "cordon")
        return t::cordon;
      if (sub == "uncordon")
        return t::uncordon;
      break;
    case resource_kind::job:
      if (sub == "suspend")
        return t::suspend;
      if (sub == "resume")
        return t::resume;
      break;
    case resource_kind::queue:
      if (sub == "open")
        return t::open;
      if (sub == "close")
        return t::close;
      break;
    case resource_kind::pod:
      if (sub == "fail")
        return t::fail_pod;
      break;
    case resource_kind::pod_group:
    case resource_kind::priority_class:
      break;
  }
  return std::nullopt;
}

std::string generate_name(std::string_view base) {
  // Kubernetes' alphabet for generated suffixes: no vowels, no look-alike characters.
  static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
  constexpr std::size_t suffix_length = 5;
  constexpr std::size_t max_base = 63 - suffix_length;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out(base.substr(0, std::min(base.size(), max_base)));
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (std::size_t i = 0; i < suffix_length; ++i)
    out += alphabet[pick(rng)];
  return out;
}

// The field selectors Phalanx serves: metadata.name and metadata.namespace with = or ==, and a
// pod's spec.nodeName and status.phase with =, == or != (what `kubectl describe node` and
// `--field-selector status.phase=Pending` send).
struct field_filter {
  std::optional<std::string> name;
  std::optional<std::string> namespace_name;
  std::vector<pod_field_term> pod_fields;
};

result<field_filter> parse_field_selector(std::string_view text, resource_kind kind) {
  field_filter out;
  std::size_t start = 0;
  const std::string served =
      kind == resource_kind::pod
          ? "Phalanx serves metadata.name=, metadata.namespace=, spec.nodeName= and != and "
            "status.phase= and !="
          : "Phalanx serves metadata.name=<name> and metadata.namespace=<namespace>";
  while (start <= text.size() && !trim(text).empty()) {
    std::size_t comma = text.find(',', start);
    std::string_view term = trim(
      text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    auto eq = term.find('=');
    if (eq == std::string_view::npos)
      return status{errc::invalid_argument, "field selector " + scheduler::go_quote(term) +
                                                " is not supported: " + served};
    const bool negated = eq > 0 && term[eq - 1] == '!';
    std::string_view key = trim(term.substr(0, negated ? eq - 1 : eq));
    std::string_view value = term.substr(eq + 1);
    if (!value.empty() && value.front() == '=' && !negated)
      value.remove_prefix(1);
    value = trim(value);
    if (kind == resource_kind::pod && (key == "spec.nodeName" || key == "status.phase")) {
      out.pod_fields.push_back({key == "spec.nodeName" ? pod_field_term::field::node_name
                                                       : pod_field_term::field::phase,
                                std::string(value), negated});
    } else if (negated) {
      return status{errc::invalid_argument, "field selector " + scheduler::go_quote(term) +
                                                " is not supported: " + served};
    } else if (key == "metadata.name") {
      out.name = std::string(value);
    } else if (key == "metadata.namespace") {
      out.namespace_name = std::string(value);
    } else {
      return status{errc::invalid_argument, "field selector " + scheduler::go_quote(term) +
                                                " is not supported: " + served};
    }
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  return out;
}

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty())
    return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// An Accept header the server cannot answer: 406, naming what it can produce.
api_error not_acceptable(const std::string& accept) {
  api_error e;
  e.reason = status_reason::not_acceptable;
  e.message = "the server can produce application/json (also as a meta.k8s.io/v1 Table) and "
              "application/yaml, not " + scheduler::go_quote(accept);
  return e;
}

// A Table request's includeObject: Metadata when absent.
outcome<include_object> include_of(const std::string& text) {
  if (text.empty())
    return include_object::metadata;
  auto v = include_object_from_string(text);
  if (!v)
    return api_error::bad_request("includeObject must be None, Metadata or Object, not " +
                                  scheduler::go_quote(text));
  return *v;
}

// A watch's resourceVersion and timeoutSeconds (either may be empty), read into `plan`; the 400
// of a malformed one.
std::optional<api_error> read_watch_query(const std::string& resource_version,
                                          const std::string& timeout_seconds, watch_plan& plan) {
  if (!resource_version.empty() && !parse_u64(resource_version, plan.resource_version))
    return api_error::bad_request("resourceVersion must be a decimal number, not " +
                                  scheduler::go_quote(resource_version));
  if (!timeout_seconds.empty()) {
    uint64_t secs = 0;
    if (!parse_u64(timeout_seconds, secs))
      return api_error::bad_request("timeoutSeconds must be a decimal number, not " +
                                    scheduler::go_quote(timeout_seconds));
    plan.timeout = std::chrono::seconds(std::min<uint64_t>(secs, 24 * 3600));
  }
  return std::nullopt;
}

// A parsed resource path.
struct resource_route {
  resource_kind kind;
  std::optional<std::string> namespace_name;
  std::optional<std::string> name;
  std::optional<std::string> subresource;
};

enum class route_result { matched, not_a_resource_path, not_found };

route_result parse_resource_route(const std::vector<std::string>& seg, resource_route& out) {
  std::string_view group, version;
  std::size_t i;
  if (seg.size() >= 3 && seg[0] == "api" && seg[1] == "v1") {
    version = "v1";
    i = 2;
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    i = 3;
  } else {
    return route_result::not_a_resource_path;
  }
  std::size_t rest = seg.size() - i;
  if (seg[i] == "namespaces" && rest >= 3) {
    out.namespace_name = seg[i + 1];
    i += 2;
    rest -= 2;
  } else if (seg[i] == "namespaces") {
    return route_result::not_found;  // Namespaces themselves are not served.
  }
  auto kind = kind_of_path(group, version, seg[i]);
  if (!kind || rest > 3)
    return route_result::not_found;
  out.kind = *kind;
  if (rest >= 2)
    out.name = seg[i + 1];
  if (rest == 3)
    out.subresource = seg[i + 2];
  bool namespaced = info(*kind).namespaced;
  if (!namespaced && out.namespace_name)
    return route_result::not_found;
  if (namespaced && !out.namespace_name && out.name)
    return route_result::not_found;
  return route_result::matched;
}

bool is_json_type(const std::string& type) {
  return type == "application/json";
}

bool is_yaml_type(const std::string& type) {
  return type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml";
}

} // namespace

handler::handler(service& svc, handler_options options) : svc_(svc), options_(std::move(options)) {}

scheduler::timestamp handler::now() const {
  if (options_.clock)
    return options_.clock();
  return std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
}

http_response handler::error_response(const api_error& error) {
  http_response r;
  r.status = error.code();
  r.content_type = "application/json";
  r.body = json::serialize(encode_status(error));
  return r;
}

std::optional<watch_plan> handler::handle(http_request req, post_fn post,
                                          respond_fn respond) const {
  auto fail = [&](const api_error& e, std::string verb = "OTHER") {
    auto r = error_response(e);
    r.verb = std::move(verb);
    respond(std::move(r));
    return std::nullopt;
  };
  auto parsed = parse_target(req.target);
  if (!parsed)
    return fail(api_error::bad_request("malformed request target " + scheduler::go_quote(req.target)));
  const auto& seg = parsed->segments;
  const auto& query = parsed->query;
  auto q = [&](const char* k) -> std::string {
    auto it = query.find(k);
    return it == query.end() ? std::string() : it->second;
  };
  const std::string& method = req.method;

  // ---- Health, metrics, version, discovery: GET only.
  auto only_get = [&]() -> bool {
    if (method == "GET")
      return true;
    fail(method_not_allowed("the server does not allow " + method + " on " + req.target));
    return false;
  };
  if (seg.size() == 1 && (seg[0] == "healthz" || seg[0] == "livez")) {
    if (only_get()) {
      if (auto failure = svc_.failure(); !failure.empty())
        respond(text_response(503, "unhealthy: " + failure, "text/plain; charset=utf-8"));
      else
        respond(text_response(200, "ok", "text/plain; charset=utf-8"));
    }
    return std::nullopt;
  }
  if (seg.size() == 1 && seg[0] == "readyz") {
    if (only_get()) {
      if (auto failure = svc_.failure(); !failure.empty())
        respond(text_response(503, "not ready: " + failure, "text/plain; charset=utf-8"));
      else if (svc_.ready())
        respond(text_response(200, "ok", "text/plain; charset=utf-8"));
      else
        respond(text_response(503, "not ready: the scheduler has not finished loading its state",
                              "text/plain; charset=utf-8"));
    }
    return std::nullopt;
  }
  if (seg.size() == 1 && seg[0] == "metrics") {
    if (only_get()) {
      std::string text = svc_.metrics_text();
      if (!text.empty() && text.back() != '\n')
        text += '\n';
      if (options_.extra_metrics)
        text += options_.extra_metrics();
      respond(text_response(200, std::move(text), "text/plain; version=0.0.4; charset=utf-8"));
    }
    return std::nullopt;
  }
  if (seg.size() == 2 && seg[0] == "openapi" && seg[1] == "v2") {
    if (!only_get())
      return std::nullopt;
    auto encoding = negotiate_openapi_v2(req.accept);
    if (!encoding) {
      api_error e;
      e.reason = status_reason::not_acceptable;
      e.message = "/openapi/v2 is served as application/json and as " +
                  std::string(openapi_v2_protobuf_type) + ", not " +
                  scheduler::go_quote(req.accept);
      return fail(e);
    }
    http_response r;
    if (*encoding == openapi_v2_encoding::json) {
      r = json_response(200, openapi_v2_document(), output::json, "OTHER");
    } else {
      const auto& bytes = openapi_v2_protobuf();
      if (!bytes)
        return fail(bytes.error());
      r = text_response(200, *bytes, std::string(openapi_v2_protobuf_content_type));
    }
    r.headers.emplace_back("Vary", "Accept");
    respond(std::move(r));
    return std::nullopt;
  }
  const bool openapi = !seg.empty() && seg[0] == "openapi";
  bool discovery = seg.empty() || (seg.size() == 1 && seg[0] == "version") ||
                   (seg.size() <= 2 && seg[0] == "api") || (seg.size() <= 3 && seg[0] == "apis") ||
                   openapi;
  if (discovery) {
    if (!only_get())
      return std::nullopt;
    auto out = negotiate(req.accept, false);
    if (!out) {
      // Discovery clients that ask only for aggregated discovery fall back on a 406.
      api_error e;
      e.reason = status_reason::not_acceptable;
      e.message = "only application/json and application/yaml are served here";
      return fail(e);
    }
    std::optional<json::value> doc;
    if (seg.empty()) {
      json::array paths;
      for (auto p : {"/api", "/api/v1", "/apis", "/apis/batch.volcano.sh",
                     "/apis/batch.volcano.sh/v1alpha1", "/apis/events.k8s.io",
                     "/apis/events.k8s.io/v1", "/apis/scheduling.k8s.io",
                     "/apis/scheduling.k8s.io/v1", "/apis/scheduling.volcano.sh",
                     "/apis/scheduling.volcano.sh/v1beta1", "/healthz", "/livez", "/metrics",
                     "/openapi/v2", "/openapi/v3", "/readyz", "/version"})
        paths.emplace_back(p);
      doc = json::object{{"paths", std::move(paths)}};
    } else if (openapi) {
      // /openapi/v3, /openapi/v3/api/v1, /openapi/v3/apis/{group}/{version} (v2 is above).
      if (seg.size() == 2 && seg[1] == "v3")
        doc = openapi_v3_index();
      else if (seg.size() == 4 && seg[1] == "v3" && seg[2] == "api")
        doc = openapi_v3_document("", seg[3]);
      else if (seg.size() == 5 && seg[1] == "v3" && seg[2] == "apis")
        doc = openapi_v3_document(seg[3], seg[4]);
    } else if (seg[0] == "version") {
      doc = version_info();
    } else if (seg[0] == "api" && seg.size() == 1) {
      doc = api_versions(req.host.empty() ? std::string("127.0.0.1") : req.host);
    } else if (seg[0] == "api") {
      doc = api_resource_list("", seg[1]);
    } else if (seg.size() == 1) {
      doc = api_group_list();
    } else if (seg.size() == 2) {
      doc = api_group(seg[1]);
    } else {
      doc = api_resource_list(seg[1], seg[2]);
    }
    if (!doc)
      return fail(not_found_path());
    respond(json_response(200, *doc, *out, "OTHER"));
    return std::nullopt;
  }

  // ---- Events, core/v1 and events.k8s.io/v1: the events the service records, read-only.
  if (auto events = events_route(seg))
    return handle_events(req, query, events->version, std::move(events->namespace_name),
                         std::move(events->name), std::move(post), std::move(respond));

  // ---- Resources.
  resource_route route;
  switch (parse_resource_route(seg, route)) {
    case route_result::matched:
      break;
    case route_result::not_a_resource_path:
    case route_result::not_found:
      return fail(not_found_path());
  }
  const kind_info& k = info(route.kind);
  // dryRun=All: a create, update or delete is checked whole and answered, nothing changed.
  write_options write;
  if (auto dry = q("dryRun"); !dry.empty()) {
    if (dry != "All")
      return fail(api_error::bad_request("dryRun: Unsupported value: " + scheduler::go_quote(dry) +
                                         ": supported values: \"All\""));
    write.dry_run = true;
  }
  const auto validation = field_validation_of(q("fieldValidation"));
  if (!validation && (method == "POST" || method == "PUT" || method == "PATCH"))
    return fail(api_error::bad_request("fieldValidation: Unsupported value: " +
                                       scheduler::go_quote(q("fieldValidation")) +
                                       ": supported values: \"Ignore\", \"Strict\", \"Warn\""));
  std::string ns = route.namespace_name.value_or("");
  std::string name = route.name.value_or("");

  // Wraps a service callback: hop to the connection first, then run `f` there.
  auto hop = [post](auto f) {
    return [post, f = std::move(f)](auto r) mutable {
      auto shared = std::make_shared<decltype(r)>(std::move(r));
      post([f = std::move(f), shared]() mutable { f(std::move(*shared)); });
    };
  };
  auto now_fn = [this] { return now(); };
  auto object_answer = [now_fn](const object& o, output out, int status, std::string verb) {
    if (out == output::table) {
      table_options to;
      to.now = now_fn();
      return json_response(status, encode_table(kind_of(o), {o}, meta_of(o).resource_version, to),
                           out, std::move(verb));
    }
    return json_response(status, encode_object(o), out, std::move(verb));
  };

  // GET
  if (method == "GET") {
    bool watch = q("watch") == "1" || q("watch") == "true";
    auto out = negotiate(req.accept, !route.subresource);
    if (!out)
      return fail(not_acceptable(req.accept), watch ? "WATCH" : "GET");
    if (route.subresource) {
      if (*route.subresource != "events")
        return fail(not_found_path(), "GET");
      svc_.events(route.kind, ns, name,
                  hop([respond, k, ns, name, out = *out](
                        result<std::vector<scheduler::event>> r) {
                    if (!r) {
                      auto resp = error_response(with_details(api_error::from(r.error()), k, name));
                      resp.verb = "GET";
                      respond(std::move(resp));
                      return;
                    }
                    std::vector<object_event> events;
                    events.reserve(r->size());
                    for (auto& e : *r)
                      events.push_back({k.kind, ns, name, "", std::move(e)});
                    respond(json_response(200, encode_event_list(events, 0),
                                          out == output::table ? output::json : out, "GET"));
                  }));
      return std::nullopt;
    }
    // Selectors.
    list_options options;
    options.namespace_name = ns;
    auto selector = parse_label_selector(q("labelSelector"));
    if (!selector)
      return fail(api_error::bad_request(selector.error().message()), watch ? "WATCH" : "LIST");
    options.selector = std::move(*selector);
    auto fields = parse_field_selector(q("fieldSelector"), route.kind);
    if (!fields)
      return fail(api_error::bad_request(fields.error().message()), watch ? "WATCH" : "LIST");
    std::optional<std::string> name_filter = fields->name;
    if (route.name)
      name_filter = name;
    if (fields->namespace_name) {
      if (k.namespaced && !ns.empty() && *fields->namespace_name != ns)
        name_filter = std::string("\n");  // Selects nothing: no name contains a newline.
      else if (k.namespaced)
        options.namespace_name = *fields->namespace_name;
    }
    auto include = include_of(q("includeObject"));
    if (!include)
      return fail(include.error());
    if (watch) {
      watch_plan plan;
      plan.kind = route.kind;
      plan.options = std::move(options);
      plan.name = name_filter;
      plan.pod_fields = fields->pod_fields;
      plan.table = *out == output::table;
      plan.include = *include;
      if (auto bad = read_watch_query(q("resourceVersion"), q("timeoutSeconds"), plan))
        return fail(*bad, "WATCH");
      return plan;
    }
    if (route.name) {
      svc_.get(route.kind, ns, name,
               hop([respond, k, name, out = *out, object_answer](result<object> r) {
                 if (!r) {
                   auto resp = error_response(with_details(api_error::from(r.error()), k, name));
                   resp.verb = "GET";
                   respond(std::move(resp));
                   return;
                 }
                 respond(object_answer(*r, out, 200, "GET"));
               }));
      return std::nullopt;
    }
    // Pages (?limit, ?continue; api/list_page.hpp). The service pages by the selectors it
    // applies; the filters below may leave a page shorter than the limit, which clients take
    // (the continue token says whether more follow).
    const std::string resource = list_resource(k);
    auto page = read_page_query(q("limit"), q("continue"), q("resourceVersion"), resource);
    if (!page)
      return fail(page.error(), "LIST");
    options.page = *page;
    const bool selectors = !q("labelSelector").empty() || !q("fieldSelector").empty();
    svc_.list(route.kind, std::move(options),
              hop([respond, k, out = *out, name_filter, pod_fields = fields->pod_fields,
                   include = *include, now_fn, resource, page = *page,
                   selectors](result<object_list> r) {
                if (!r) {
                  const bool expired =
                      r.error().code() == errc::failed_precondition && page.first_version != 0;
                  auto error = expired ? continue_expired(resource, page)
                                       : with_details(api_error::from(r.error()), k, "");
                  auto resp = error_response(error);
                  resp.verb = "LIST";
                  respond(std::move(resp));
                  return;
                }
                object_list list = std::move(*r);
                std::optional<list_key> last;
                if (!list.items.empty())
                  last = list_key{meta_of(list.items.back()).namespace_name,
                                  meta_of(list.items.back()).name};
                auto meta = answer_page(resource, page, list.resource_version, last,
                                        list.remaining, selectors);
                if (name_filter) {
                  std::erase_if(list.items,
                                [&](const object& o) { return meta_of(o).name != *name_filter; });
                }
                if (!pod_fields.empty())
                  std::erase_if(list.items,
                                [&](const object& o) { return !pod_fields_match(pod_fields, o); });
                json::value body;
                if (out == output::table) {
                  table_options to;
                  to.now = now_fn();
                  to.include = include;
                  body = encode_table(k.kind, list.items, meta.resource_version, to);
                } else {
                  list.resource_version = meta.resource_version;
                  body = encode_list(k.kind, list);
                }
                set_page_metadata(body, meta);
                respond(json_response(200, body, out, "LIST"));
              }));
    return std::nullopt;
  }

  auto out = negotiate(req.accept, false).value_or(output::json);

  // A POST's or PUT's body: one object, as JSON or YAML (or, for the kinds typed clients send
  // so, Kubernetes' protobuf encoding), within the body limit.
  auto object_body = [&]() -> outcome<json::value> {
    std::string type = media_type(req.content_type);
    parse_limits limits;
    limits.max_bytes = options_.max_body_bytes;
    if (is_json_type(type))
      return parse_json(req.body, limits);
    if (type == kube_protobuf_type)
      return kube_protobuf_to_json(req.body);
    if (!is_yaml_type(type))
      return unsupported_media("the body's Content-Type " + scheduler::go_quote(req.content_type) +
                               " is not supported: send application/json or application/yaml");
    auto docs = parse_yaml(req.body, limits);
    if (!docs)
      return std::move(docs).error();
    if (docs->size() != 1)
      return api_error::bad_request("the body must hold exactly one YAML document, not " +
                                    std::to_string(docs->size()));
    return std::move(docs->front());
  };

  // POST: create, or an action on an item.
  if (method == "POST") {
    if (route.name) {
      if (!route.subresource)
        return fail(method_not_allowed("POST is not allowed on " + std::string(k.plural) +
                                         " \"" + name + "\": create on the collection, or POST to "
                                         "an action subresource"),
                    "ACTION");
      auto action = action_of(route.kind, *route.subresource);
      if (!action)
        return fail(not_found_path(), "ACTION");
      svc_.act(route.kind, ns, name, object_action{*action},
               hop([respond, k, name, out, object_answer](result<object> r) {
                 if (!r) {
                   auto resp = error_response(with_details(api_error::from(r.error()), k, name));
                   resp.verb = "ACTION";
                   respond(std::move(resp));
                   return;
                 }
                 respond(object_answer(*r, out, 200, "ACTION"));
               }));
      return std::nullopt;
    }
    if (k.namespaced && ns.empty())
      return fail(method_not_allowed(std::string(k.plural) +
                                     " are namespaced: create them with POST to /" +
                                     (k.group.empty() ? std::string("api/v1")
                                                      : "apis/" + std::string(k.api_version)) +
                                     "/namespaces/{namespace}/" + std::string(k.plural)),
                  "CREATE");
    auto body = object_body();
    if (!body)
      return fail(body.error(), "CREATE");
    json::value v = std::move(*body);
    if (!v.is_object())
      return fail(api_error::bad_request("the body must be a JSON object"), "CREATE");
    auto& o = v.as_object();
    auto* md = o.if_contains("metadata");
    if (md == nullptr || md->is_null())
      md = &(o["metadata"] = json::object{});
    if (!md->is_object()) {
      scheduler::field_errors errs{{scheduler::field_error_type::invalid, "metadata",
                                    "\"" + std::string(md->is_array() ? "array" : "scalar") + "\"",
                                    "must be an object"}};
      return fail(api_error::invalid(k.qualified_kind, "", errs), "CREATE");
    }
    auto& meta = md->as_object();
    if (k.namespaced) {
      const auto* body_ns = meta.if_contains("namespace");
      if (body_ns != nullptr && body_ns->is_string() && !body_ns->get_string().empty() &&
          body_ns->get_string() != ns)
        return fail(api_error::bad_request(
                      "the namespace of the provided object (" +
                      std::string(body_ns->get_string()) +
                      ") does not match the namespace sent on the request (" + ns + ")"),
                    "CREATE");
      meta["namespace"] = ns;
    } else {
      meta.erase("namespace");
    }
    const auto* body_name = meta.if_contains("name");
    bool has_name = body_name != nullptr && body_name->is_string() &&
                    !body_name->get_string().empty();
    if (!has_name) {
      const auto* gen = meta.if_contains("generateName");
      if (gen != nullptr && gen->is_string() && !gen->get_string().empty())
        meta["name"] = generate_name(gen->get_string());
    }
    decode_options dopts;
    dopts.expected_kind = route.kind;
    dopts.read_status = false;
    std::vector<std::string> unknown;
    if (*validation != field_validation::ignore)
      dopts.unknown_fields = &unknown;
    auto decoded = decode_object(v, dopts);
    if (*validation == field_validation::strict && !unknown.empty())
      return fail(with_details(strict_decoding_error(unknown), k, ""), "CREATE");
    if (!decoded) {
      api_error e = std::move(decoded).error();
      return fail(with_details(std::move(e), k, ""), "CREATE");
    }
    std::string created_name = meta_of(*decoded).name.str();
    svc_.create(std::move(*decoded), write,
                hop([respond, k, created_name, out, object_answer,
                     unknown = std::move(unknown)](result<object> r) {
                  if (!r) {
                    auto resp =
                      error_response(with_details(api_error::from(r.error()), k, created_name));
                    resp.verb = "CREATE";
                    respond(std::move(resp));
                    return;
                  }
                  auto answer = object_answer(*r, out, 201, "CREATE");
                  add_unknown_field_warnings(answer, unknown);
                  respond(std::move(answer));
                }));
    return std::nullopt;
  }

  if (method == "DELETE") {
    if (!route.name || route.subresource)
      return fail(method_not_allowed("DELETE needs an object: " + std::string(k.plural) +
                                     " collections cannot be deleted at once"),
                  "DELETE");
    // kubectl and client-go send their DeleteOptions as the body (`kubectl delete
    // --dry-run=server` says dryRun there, not in the query).
    if (auto grace = grace_period_of(q("gracePeriodSeconds")); !grace)
      return fail(grace.error(), "DELETE");
    else
      write.grace_period_seconds = *grace;
    if (!req.body.empty()) {
      parse_limits limits;
      limits.max_bytes = options_.max_body_bytes;
      auto options = media_type(req.content_type) == kube_protobuf_type
                         ? kube_protobuf_to_json(req.body)
                         : parse_json(req.body, limits);
      if (!options || !options->is_object())
        return fail(api_error::bad_request("the body of a DELETE must be a DeleteOptions object"),
                    "DELETE");
      if (auto dry = delete_dry_run(options->get_object()); !dry)
        return fail(dry.error(), "DELETE");
      else
        write.dry_run |= *dry;
      // The body's grace period wins over the query's, as the apiserver decodes the body last.
      if (auto grace = grace_period_of(options->get_object().if_contains("gracePeriodSeconds"));
          !grace)
        return fail(grace.error(), "DELETE");
      else if (*grace)
        write.grace_period_seconds = *grace;
    }
    svc_.remove(route.kind, ns, name, write,
                hop([respond, k, name, out, object_answer](result<object> r) {
                  if (!r) {
                    auto resp = error_response(with_details(api_error::from(r.error()), k, name));
                    resp.verb = "DELETE";
                    respond(std::move(resp));
                    return;
                  }
                  respond(object_answer(*r, out, 200, "DELETE"));
                }));
    return std::nullopt;
  }

  // PUT and PATCH: an update of one object, made whole against the object as served now; the
  // update then asks that it did not change in between (its resourceVersion), so two updates
  // never lose one another's change (api/update.hpp).
  if ((method == "PUT" || method == "PATCH") && route.name && !route.subresource) {
    const bool put = method == "PUT";
    const std::string verb = put ? "UPDATE" : "PATCH";
    std::optional<std::string> patch_type;
    json::value body;
    if (put) {
      auto parsed = object_body();
      if (!parsed)
        return fail(parsed.error(), verb);
      body = std::move(*parsed);
    } else {
      patch_type = media_type(req.content_type);
      if (!takes_patch_type(k, *patch_type))
        return fail(unsupported_media("the body of the request was in an unknown format - the "
                                      "patch type " +
                                      scheduler::go_quote(req.content_type) + " is not " +
                                      "supported for " + std::string(k.plural) + ": use " +
                                      std::string(patch_types_of(k))),
                    verb);
      parse_limits limits;
      limits.max_bytes = options_.max_body_bytes;
      auto parsed = parse_json(req.body, limits);
      if (!parsed)
        return fail(parsed.error(), verb);
      body = std::move(*parsed);
    }
    svc_.get(route.kind, ns, name,
             hop([this, respond, k, name, out, object_answer, hop, verb, patch_type, write,
                  validation = *validation, body = std::move(body)](result<object> r) mutable {
               auto answer_error = [&](api_error e) {
                 auto resp = error_response(with_details(std::move(e), k, name));
                 resp.verb = verb;
                 respond(std::move(resp));
               };
               if (!r)
                 return answer_error(api_error::from(r.error()));
               auto current = encode_object(*r);
               json::value next;
               if (patch_type) {
                 auto patched = apply_patch(k, current, body, *patch_type);
                 if (!patched)
                   return answer_error(std::move(patched).error());
                 next = std::move(*patched);
               } else {
                 next = std::move(body);
               }
               std::vector<std::string> unknown;
               auto prepared = prepare_update(
                   k, current, std::move(next), patch_type ? update_verb::patch : update_verb::put,
                   validation == field_validation::ignore ? nullptr : &unknown);
               if (validation == field_validation::strict && !unknown.empty())
                 return answer_error(strict_decoding_error(unknown));
               if (!prepared)
                 return answer_error(std::move(prepared).error());
               svc_.update(std::move(*prepared), write,
                           hop([respond, k, name, out, object_answer, verb,
                                unknown = std::move(unknown)](result<object> done) {
                             if (!done) {
                               auto resp = error_response(
                                   with_details(api_error::from(done.error()), k, name));
                               resp.verb = verb;
                               respond(std::move(resp));
                               return;
                             }
                             auto answer = object_answer(*done, out, 200, verb);
                             add_unknown_field_warnings(answer, unknown);
                             respond(std::move(answer));
                           }));
             }));
    return std::nullopt;
  }

  return fail(method_not_allowed("the server does not allow " + method + " on " +
                                 std::string(k.plural) + ": use GET, POST, PUT, PATCH or DELETE"));
}

bool handler::watch_accepts(const watch_plan& plan, const watch_event& event) const {
  if (plan.name && meta_of(event.obj).name != *plan.name)
    return false;
  return plan.pod_fields.empty() || pod_fields_match(plan.pod_fields, event.obj);
}

bool pod_fields_match(const std::vector<pod_field_term>& terms, const object& o) {
  const auto* p = std::get_if<pod_object>(&o);
  if (p == nullptr)
    return false;
  return std::all_of(terms.begin(), terms.end(), [&](const pod_field_term& t) {
    const std::string_view have = t.which == pod_field_term::field::node_name
                                      ? p->pod.node_name.view()
                                      : scheduler::to_string(p->pod.phase);
    return (have == t.value) != t.negated;
  });
}

std::optional<events_path> events_route(const std::vector<std::string>& seg) {
  // The segments after the group-version's prefix: events, or namespaces/{ns}/events[/{name}].
  std::size_t at = 0;
  events_path out;
  if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v1") {
    at = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis" && seg[1] == "events.k8s.io" && seg[2] == "v1") {
    at = 3;
    out.version = event_version::events_v1;
  } else {
    return std::nullopt;
  }
  const std::size_t rest = seg.size() - at;
  if (rest == 1 && seg[at] == "events")
    return out;
  if ((rest == 3 || rest == 4) && seg[at] == "namespaces" && seg[at + 2] == "events") {
    out.namespace_name = seg[at + 1];
    if (rest == 4)
      out.name = seg[at + 3];
    return out;
  }
  return std::nullopt;
}

std::optional<watch_plan> handler::handle_events(const http_request& req,
                                                 const std::map<std::string, std::string>& query,
                                                 event_version version, std::string ns,
                                                 std::optional<std::string> name, post_fn post,
                                                 respond_fn respond) const {
  auto q = [&](const char* k) -> std::string {
    auto it = query.find(k);
    return it == query.end() ? std::string() : it->second;
  };
  const bool watch = q("watch") == "1" || q("watch") == "true";
  const std::string verb = req.method != "GET" ? "OTHER" : watch ? "WATCH" : name ? "GET" : "LIST";
  auto fail = [&](const api_error& e) {
    auto r = error_response(e);
    r.verb = verb;
    respond(std::move(r));
    return std::nullopt;
  };
  if (req.method != "GET")
    return fail(method_not_allowed(
      "events are read-only here: phalanxd serves the events it records about its objects and "
      "takes none from clients (" + req.method + " is not allowed)"));
  auto out = negotiate(req.accept, true);
  if (!out)
    return fail(not_acceptable(req.accept));
  auto terms = parse_event_field_selector(q("fieldSelector"), version);
  if (!terms)
    return fail(api_error::bad_request(terms.error().message()));
  auto labels = parse_label_selector(q("labelSelector"));
  if (!labels)
    return fail(api_error::bad_request(labels.error().message()));
  event_selection selection;
  selection.namespace_name = std::move(ns);
  selection.name = std::move(name);
  selection.fields = std::move(*terms);
  selection.none = !labels->matches({});
  auto include = include_of(q("includeObject"));
  if (!include)
    return fail(include.error());
  table_options table;
  table.now = now();
  table.include = *include;
  list_page page;
  const std::string resource = version == event_version::core_v1 ? "events"
                                                                  : "events.events.k8s.io";
  if (!watch && !selection.name) {
    auto asked = read_page_query(q("limit"), q("continue"), q("resourceVersion"), resource);
    if (!asked)
      return fail(asked.error());
    page = *asked;
  }
  const bool selectors = !q("labelSelector").empty() || !q("fieldSelector").empty();
  if (watch) {
    watch_plan plan;
    plan.events = std::move(selection);
    plan.events_version = version;
    plan.table = *out == output::table;
    plan.include = table.include;
    if (auto bad = read_watch_query(q("resourceVersion"), q("timeoutSeconds"), plan))
      return fail(*bad);
    return plan;
  }
  auto answer = [respond, selection = std::move(selection), table, out = *out, verb, version,
                 page, resource, selectors](result<event_list> r) {
    if (!r) {
      auto resp = error_response(api_error::from(r.error()));
      resp.verb = verb;
      return respond(std::move(resp));
    }
    auto items = select_events(std::move(r->items), selection);
    if (selection.name && items.empty()) {
      api_error e;
      e.reason = status_reason::not_found;
      e.message = "events " + scheduler::go_quote(*selection.name) + " not found";
      e.kind = "events";
      e.name = *selection.name;
      auto resp = error_response(e);
      resp.verb = verb;
      return respond(std::move(resp));
    }
    if (selection.name)
      return respond(json_response(200, encode_event(items.front(), r->resource_version, version),
                                   out, verb));
    // A page of the events, by the same rule as the objects' pages. Events keep no history,
    // so a page continues from the events as they are, and is never too old.
    std::vector<std::pair<std::string, std::string>> names;
    names.reserve(items.size());
    for (const auto& e : items)
      names.emplace_back(event_namespace(e), event_name(e));
    page_finder finder(page);
    for (const auto& [ns, n] : names)
      finder.offer({ns, n});
    const auto end = finder.end();
    std::vector<object_event> paged;
    std::optional<list_key> last;
    for (std::size_t i = 0; i < items.size(); ++i) {
      list_key key{names[i].first, names[i].second};
      if (in_page(key, page, end)) {
        paged.push_back(std::move(items[i]));
        last = key;
      }
    }
    auto meta = answer_page(resource, page, r->resource_version, last, end.remaining, selectors);
    auto body = out == output::table
                    ? encode_event_table(paged, meta.resource_version, table, version)
                    : encode_event_list(paged, meta.resource_version, version);
    set_page_metadata(body, meta);
    respond(json_response(200, body, out, verb));
  };
  svc_.all_events([post, answer = std::move(answer)](result<event_list> r) {
    auto shared = std::make_shared<result<event_list>>(std::move(r));
    post([answer, shared] { answer(std::move(*shared)); });
  });
  return std::nullopt;
}

std::vector<std::string> handler::event_watch_lines(const watch_plan& plan,
                                                    const event_change_list& changes,
                                                    bool& first) const {
  std::vector<std::string> lines;
  if (!plan.events)
    return lines;
  for (const auto& change : changes.items) {
    if (!plan.events->matches(change.event))
      continue;
    json::object line;
    line["type"] = to_string(change.type);
    if (plan.table) {
      table_options to;
      to.now = now();
      to.include = plan.include;
      to.column_definitions = first;
      line["object"] =
          encode_event_table({change.event}, change.version, to, plan.events_version);
    } else {
      line["object"] = encode_event(change.event, change.version, plan.events_version);
    }
    lines.push_back(json::serialize(line) + "\n");
    first = false;
  }
  return lines;
}

std::string handler::watch_line(const watch_plan& plan, const watch_event& event,
                                bool first) const {
  json::value v;
  if (plan.table) {
    table_options to;
    to.now = now();
    to.include = plan.include;
    to.column_definitions = first;
    json::object e;
    e["type"] = to_string(event.kind);
    e["object"] = encode_table(plan.kind, {event.obj}, meta_of(event.obj).resource_version, to);
    v = std::move(e);
  } else {
    v = encode_watch_event(event);
  }
  std::string line = json::serialize(v);
  line += '\n';
  return line;
}

std::string handler::watch_error_line(const api_error& error) const {
  std::string line = json::serialize(encode_error_event(error));
  line += '\n';
  return line;
}

} // namespace phalanx::api
