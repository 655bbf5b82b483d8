#pragma once

// phalanxctl's command line: the commands, their flags and the environment variables, parsed into
// one `invocation` before anything is sent. A command line that cannot be run is a usage error
// (exit code 2) whose message names the flag or argument and the rule.

#include "api/events.hpp"
#include "api/service.hpp"
#include "scheduler/result.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace phalanx::api::ctl {

enum class command {
  help,      // phalanxctl help [COMMAND], -h, --help
  apply,     // apply -f FILE|DIR|-
  get,       // get KIND [NAME...]
  describe,  // describe KIND [NAME...]
  remove,    // delete KIND NAME... | delete -f FILE
  action,    // job suspend|resume, queue open|close, node cordon|uncordon (and cordon, uncordon)
  version,   // version [--client]
};
std::string_view to_string(command c) noexcept;  // "help", "apply", ..., "delete", ...
inline constexpr command command_last = command::version;

enum class output_format {
  table,
  wide,
  json,
  yaml,
  name,
  jsonpath,          // -o jsonpath=TEMPLATE or jsonpath-file=FILE
  jsonpath_as_json,  // -o jsonpath-as-json=TEMPLATE
  custom_columns,    // -o custom-columns=SPEC or custom-columns-file=FILE
};
// "", "wide", "json", "yaml", "name", "jsonpath", "jsonpath-as-json", "custom-columns"
std::string_view to_string(output_format f) noexcept;
inline constexpr output_format output_format_last = output_format::custom_columns;

/// Where the server is and how to reach it.
struct connection_flags {
  /// --server / -s, else $PHALANX_SERVER. Default: "http://127.0.0.1:8080".
  std::string server = "http://127.0.0.1:8080";
  /// --token, else $PHALANX_TOKEN; sent as a bearer token when not empty.
  std::string token;
  /// --certificate-authority: a PEM file of certificates to trust (https only).
  std::string ca_file;
  /// --insecure-skip-tls-verify. Default: false.
  bool insecure_skip_tls_verify = false;
  /// --request-timeout: how long one request may take; for a watch, how long it lasts (sent as
  /// timeoutSeconds). nullopt or zero: 30 s per request, and a watch lasts until interrupted.
  std::optional<std::chrono::milliseconds> request_timeout;
};

struct invocation {
  command cmd = command::help;
  connection_flags connection;
  /// help: the command to explain ("" for the overview).
  std::string help_topic;

  // What the command works on.
  /// The kind; unset for events.
  std::optional<resource_kind> kind;
  /// get events (event, ev): core/v1 Events; get events.events.k8s.io: events.k8s.io/v1. Set
  /// only for get, alone (kind and kinds are then empty).
  std::optional<event_version> events;
  /// get KIND,KIND...: every kind asked, in order (kind is the first). One for a single kind.
  std::vector<resource_kind> kinds;
  std::vector<std::string> names;
  /// -n / --namespace. Default: "default"; ignored for cluster-scoped kinds.
  std::string namespace_name = "default";
  bool namespace_given = false;
  /// -A / --all-namespaces.
  bool all_namespaces = false;
  /// -l / --selector, sent as labelSelector (the server parses and checks it).
  std::string selector;
  /// get --field-selector, sent as fieldSelector (the server parses and checks it: events by
  /// involvedObject.* or regarding.*, reason, type...; pods by spec.nodeName, status.phase).
  std::string field_selector;
  /// -f / --filename: files, directories, or "-" for standard input.
  std::vector<std::string> files;
  /// get, describe --chunk-size: lists are read in pages of this many items (?limit, following
  /// metadata.continue), as kubectl reads them. 0: each list in one answer. Default: 500.
  int64_t chunk_size = 500;

  // get
  output_format output = output_format::table;
  bool watch = false;                // -w / --watch
  bool watch_only = false;           // --watch-only: no initial listing
  bool output_watch_events = false;  // --output-watch-events: print the event type
  bool no_headers = false;           // --no-headers: the table without its title line
  bool show_labels = false;          // --show-labels: a LABELS column last
  /// -o jsonpath=, jsonpath-as-json=, custom-columns=: the template or the columns' spec, as
  /// given. Empty when output_template_file names a file to read them from.
  std::string output_template;
  /// -o jsonpath-file=FILE, custom-columns-file=FILE: read when get runs.
  std::string output_template_file;
  /// --allow-missing-template-keys: a missing key in a jsonpath template prints nothing rather
  /// than failing. Default: true.
  bool allow_missing_template_keys = true;
  /// --sort-by: a JSONPath (".metadata.name", "{.spec.priority}") whose value orders the items.
  std::string sort_by;

  // delete
  bool ignore_not_found = false;     // --ignore-not-found
  /// --grace-period (sent as gracePeriodSeconds); unset: each pod's own. --force sets 0.
  std::optional<int64_t> grace_period_seconds;
  bool force = false;                // --force
  /// --wait: after the deletes, wait until each deleted object is gone (kubectl's default).
  bool wait_for_deletion = true;
  /// --timeout: how long that wait may take; 0 (the default): a week, as kubectl.
  std::chrono::milliseconds deletion_timeout{0};

  // action: the subresource to POST ("suspend", "resume", "open", "close", "cordon", "uncordon").
  std::string action;

  // version
  bool client_only = false;          // --client
};

/// Reads an environment variable; nullopt when unset.
using getenv_fn = std::function<std::optional<std::string>(const std::string&)>;

/// Parses the arguments after the program name. Flags may come before or after the command and
/// its arguments, in kubectl's spellings (api/flags/split.hpp splits them); "--" ends the flags;
/// a flag given twice takes its last value, except -f, which adds a file each time. Errors are
/// usage errors (errc::invalid_argument) whose message names the flag or argument.
result<invocation> parse_command_line(const std::vector<std::string>& args,
                                      const getenv_fn& getenv);

/// The help text of a command ("" for the overview), as `phalanxctl help COMMAND` prints it.
std::string help_text(std::string_view topic);

/// The kind a resource word names: plural, singular, kind, short names ("pg", "vcjob", "q",
/// "po", "no"), and "plural.group" ("jobs.batch.volcano.sh"), case-insensitively.
std::optional<resource_kind> resolve_resource(std::string_view word);

/// The Events a resource word names: events, event, ev (core/v1) and events.events.k8s.io,
/// event.events.k8s.io (events.k8s.io/v1), case-insensitively; nullopt for any other word.
std::optional<event_version> resolve_events(std::string_view word);

/// Parses a duration for --request-timeout: Go's syntax ("30s", "1m30s", "500ms") or a plain
/// number of seconds ("30").
result<std::chrono::milliseconds> parse_timeout(std::string_view text);

} // namespace phalanx::api::ctl
