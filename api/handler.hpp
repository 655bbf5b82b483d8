#pragma once

// The API's request handling without the transport: routing of the Kubernetes paths, content
// negotiation, the calls to the service, encoding of answers and errors. server.cpp feeds it
// requests read with Beast and writes what it answers; tests may drive it directly.
//
// Threading: a handler is shared by every connection and is thread-safe. It never blocks on the
// service: every service callback first hops back to the connection through `post`, so encoding
// runs on the server's threads, not the service's.

#include "api/errors.hpp"
#include "api/events.hpp"
#include "api/service.hpp"
#include "api/table.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phalanx::api {

struct http_request {
  std::string method;        // "GET", "POST", ...
  std::string target;        // "/api/v1/pods?labelSelector=app%3Dx"
  std::string content_type;  // The Content-Type header, as sent.
  std::string accept;        // The Accept header, as sent.
  std::string host;          // The Host header (discovery's serverAddress).
  std::string body;
};

struct http_response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // Extra headers.
  /// What the request was, for metrics: GET, LIST, WATCH, CREATE, UPDATE (a PUT), DELETE, PATCH,
  /// ACTION, or OTHER (discovery, health, metrics, unknown paths).
  std::string verb = "OTHER";
};

/// A watch the connection should stream (see handler::handle).
/// A fieldSelector term on a pod's field kubectl selects by: spec.nodeName or status.phase,
/// equal (= or ==) or not (!=) to `value` (an empty node name: not bound).
struct pod_field_term {
  enum class field { node_name, phase } which = field::node_name;
  std::string value;
  bool negated = false;
};
/// True when pod object `o` passes every term.
bool pod_fields_match(const std::vector<pod_field_term>& terms, const object& o);

struct watch_plan {
  resource_kind kind = resource_kind::pod;
  list_options options;
  uint64_t resource_version = 0;
  /// fieldSelector=metadata.name=<name>, or the name of a watch on an item path.
  std::optional<std::string> name;
  /// A pod's fieldSelector terms on spec.nodeName and status.phase (pod_field_term).
  std::vector<pod_field_term> pod_fields;
  bool table = false;  // Events carry Tables (kubectl get -w).
  include_object include = include_object::metadata;
  /// timeoutSeconds; zero: until the client or the server ends it.
  std::chrono::seconds timeout{0};
  /// Set for a watch of core/v1 Events (`kind` is then unused): what it selects. The
  /// connection polls service::event_changes from `resource_version` and streams the changes
  /// it selects (event_watch_lines).
  std::optional<event_selection> events;
  /// The version an events watch sends its Events in.
  event_version events_version = event_version::core_v1;
};

/// The path of events: /api/v1/events, /api/v1/namespaces/{ns}/events[/{name}], and the same
/// under /apis/events.k8s.io/v1.
struct events_path {
  event_version version = event_version::core_v1;
  std::string namespace_name;  // Empty: every namespace.
  std::optional<std::string> name;
};
/// The events path of a request's path segments; nullopt for any other path.
std::optional<events_path> events_route(const std::vector<std::string>& segments);

struct handler_options {
  /// The clock for Table ages and nothing else. Default: the system clock.
  std::function<scheduler::timestamp()> clock;
  /// Text appended to the service's at /metrics (the server's own metrics). May be empty.
  std::function<std::string()> extra_metrics;
  /// The body limit, for messages. Default: 1 MiB.
  std::size_t max_body_bytes = std::size_t{1} << 20;
};

class handler {
 public:
  /// Runs `f` on the connection's executor, or drops it when the connection is gone.
  using post_fn = std::function<void(std::function<void()>)>;
  using respond_fn = std::function<void(http_response)>;

  handler(service& svc, handler_options options);

  /// Handles one request. Either calls `respond` exactly once (maybe before returning, maybe
  /// later through `post`), or returns a watch_plan and never calls it: the caller then streams
  /// the watch (watch_line for each event).
  std::optional<watch_plan> handle(http_request request, post_fn post, respond_fn respond) const;

  /// One line of a watch stream (JSON and "\n"): the event, or with plan.table a Table of the
  /// one object; `first` carries the Table's column definitions.
  std::string watch_line(const watch_plan& plan, const watch_event& event, bool first) const;
  /// The lines of an events watch (plan.events) for changes of the service's events: those
  /// the plan selects, each Event at its change's version; `first` as for watch_line, cleared
  /// once a line is made.
  std::vector<std::string> event_watch_lines(const watch_plan& plan,
                                             const event_change_list& changes,
                                             bool& first) const;
  /// The line that ends a stream by error: {"type":"ERROR","object":<Status>}.
  std::string watch_error_line(const api_error& error) const;
  /// True when an event passes the plan's filters the service does not apply (the name).
  bool watch_accepts(const watch_plan& plan, const watch_event& event) const;

  /// An error answer: the Status body and its code.
  static http_response error_response(const api_error& error);

  service& svc() const noexcept { return svc_; }

 private:
  scheduler::timestamp now() const;
  /// GET of an events_path in `version` (`ns` empty: every namespace), and their watch
  /// (returned as a plan, as handle does). Read-only: other methods are 405.
  std::optional<watch_plan> handle_events(const http_request& req,
                                          const std::map<std::string, std::string>& query,
                                          event_version version, std::string ns,
                                          std::optional<std::string> name, post_fn post,
                                          respond_fn respond) const;

  service& svc_;
  handler_options options_;
};

/// Decodes %XX escapes (and '+' as a space when `form` is true); nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view s, bool form);

} // namespace phalanx::api
