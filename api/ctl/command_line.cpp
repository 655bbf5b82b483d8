#include "api/ctl/command_line.hpp"

#include "api/flags/split.hpp"
#include "api/kinds.hpp"
#include "scheduler/quantity.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace phalanx::api::ctl {

std::string_view to_string(command c) noexcept {
  switch (c) {
    case command::help:
      return "help";
    case command::apply:
      return "apply";
    case command::get:
      return "get";
    case command::describe:
      return "describe";
    case command::remove:
      return "delete";
    case command::action:
      return "action";
    case command::version:
      return "version";
  }
  return "help";
}

std::string_view to_string(output_format f) noexcept {
  switch (f) {
    case output_format::table:
      return "";
    case output_format::wide:
      return "wide";
    case output_format::json:
      return "json";
    case output_format::yaml:
      return "yaml";
    case output_format::name:
      return "name";
    case output_format::jsonpath:
      return "jsonpath";
    case output_format::jsonpath_as_json:
      return "jsonpath-as-json";
    case output_format::custom_columns:
      return "custom-columns";
  }
  return "";
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

status usage(std::string message) {
  return status{errc::invalid_argument, std::move(message)};
}

// The commands a flag applies to, as a bit set of `command` values.
constexpr unsigned bit(command c) {
  return 1u << static_cast<unsigned>(c);
}
constexpr unsigned all_commands = ~0u;

enum class flag_id {
  server,
  token,
  certificate_authority,
  insecure_skip_tls_verify,
  request_timeout,
  help,
  namespace_name,
  all_namespaces,
  selector,
  filename,
  output,
  watch,
  watch_only,
  output_watch_events,
  ignore_not_found,
  grace_period,
  force,
  wait,
  timeout,
  no_headers,
  show_labels,
  sort_by,
  allow_missing_template_keys,
  client,
  field_selector,
  chunk_size,
};

struct flag_spec {
  flag_id id;
  std::string_view name;  // Without the leading "--".
  char short_name;        // 0: none.
  bool takes_value;
  unsigned commands;
};

constexpr std::array<flag_spec, 26> known_flags = {{
  {flag_id::server, "server", 's', true, all_commands},
  {flag_id::token, "token", 0, true, all_commands},
  {flag_id::certificate_authority, "certificate-authority", 0, true, all_commands},
  {flag_id::insecure_skip_tls_verify, "insecure-skip-tls-verify", 0, false, all_commands},
  {flag_id::request_timeout, "request-timeout", 0, true, all_commands},
  {flag_id::help, "help", 'h', false, all_commands},
  {flag_id::namespace_name, "namespace", 'n', true,
   bit(command::apply) | bit(command::get) | bit(command::describe) | bit(command::remove) |
     bit(command::action)},
  {flag_id::all_namespaces, "all-namespaces", 'A', false,
   bit(command::get) | bit(command::describe)},
  {flag_id::selector, "selector", 'l', true,
   bit(command::get) | bit(command::describe) | bit(command::remove)},
  {flag_id::filename, "filename", 'f', true, bit(command::apply) | bit(command::remove)},
  {flag_id::output, "output", 'o', true, bit(command::get) | bit(command::version)},
  {flag_id::watch, "watch", 'w', false, bit(command::get)},
  {flag_id::watch_only, "watch-only", 0, false, bit(command::get)},
  {flag_id::output_watch_events, "output-watch-events", 0, false, bit(command::get)},
  {flag_id::no_headers, "no-headers", 0, false, bit(command::get)},
  {flag_id::show_labels, "show-labels", 0, false, bit(command::get)},
  {flag_id::sort_by, "sort-by", 0, true, bit(command::get)},
  {flag_id::allow_missing_template_keys, "allow-missing-template-keys", 0, false,
   bit(command::get)},
  {flag_id::ignore_not_found, "ignore-not-found", 0, false, bit(command::remove)},
  {flag_id::grace_period, "grace-period", 0, true, bit(command::remove)},
  {flag_id::force, "force", 0, false, bit(command::remove)},
  {flag_id::wait, "wait", 0, false, bit(command::remove)},
  {flag_id::timeout, "timeout", 0, true, bit(command::remove)},
  {flag_id::client, "client", 0, false, bit(command::version)},
  {flag_id::field_selector, "field-selector", 0, true, bit(command::get)},
  {flag_id::chunk_size, "chunk-size", 0, true, bit(command::get) | bit(command::describe)},
}};

const flag_spec* find_long(std::string_view name) {
  for (const auto& f : known_flags)
    if (f.name == name)
      return &f;
  return nullptr;
}

// The table as the splitter (api/flags/split.hpp) reads it: every flag of every command, since
// the command may come after its flags.
const std::vector<flags::flag_spec>& split_table() {
  static const std::vector<flags::flag_spec> table = [] {
    std::vector<flags::flag_spec> t;
    for (const auto& f : known_flags)
      t.push_back({std::string(f.name), f.short_name, f.takes_value});
    return t;
  }();
  return table;
}

// The splitter's refusals in kubectl's words.
status split_refused(const flags::split_error& e) {
  switch (e.failure) {
    case flags::split_failure::unknown_flag:
      return usage("unknown flag: " + e.spelling + " (see phalanxctl --help)");
    case flags::split_failure::unknown_shorthand:
      return usage("unknown shorthand flag: '" + e.spelling.substr(1) + "' in " + e.argument +
                   " (see phalanxctl --help)");
    case flags::split_failure::missing_value:
      return usage(e.spelling + " needs a value");
    case flags::split_failure::malformed:
      return usage(e.detail + " (see phalanxctl --help)");
  }
  return usage(e.detail);
}

struct given_flag {
  const flag_spec* spec;
  std::string spelling;  // As typed, for messages: "-w", "--watch".
  std::string value;     // For bool flags: "true" unless given "=VALUE".
};

result<bool> parse_bool(const given_flag& g) {
  if (g.value == "true" || g.value == "1")
    return true;
  if (g.value == "false" || g.value == "0")
    return false;
  return usage(g.spelling + ": \"" + g.value + "\" is not a boolean (true or false)");
}

std::string kinds_list() {
  return "queues (q), podgroups (pg), pods (po), jobs (vcjob), nodes (no), and to get, "
         "events (ev)";
}

// Events in a list of several resource types, or in a command other than get.
status events_refused(std::string_view cmd_name, bool several) {
  if (several)
    return usage(std::string(cmd_name) + ": events are listed on their own, not with other "
                                         "resource types");
  return usage(std::string(cmd_name) + ": events are read-only and listed by get only (phalanxctl "
                                       "get events); describe shows an object's events");
}

struct action_word {
  std::string_view group;  // "job", "queue", "node"
  std::string_view word;   // "suspend"
  resource_kind kind;
};
constexpr std::array<action_word, 6> actions = {{
  {"job", "suspend", resource_kind::job},
  {"job", "resume", resource_kind::job},
  {"queue", "open", resource_kind::queue},
  {"queue", "close", resource_kind::queue},
  {"node", "cordon", resource_kind::node},
  {"node", "uncordon", resource_kind::node},
}};

// -o FORMAT: wide, json, yaml, name, or kubectl's jsonpath=TEMPLATE, jsonpath-file=FILE,
// jsonpath-as-json=TEMPLATE, custom-columns=SPEC and custom-columns-file=FILE.
status parse_output(const given_flag& g, invocation& inv) {
  struct simple {
    std::string_view word;
    output_format format;
  };
  for (auto f : {simple{"wide", output_format::wide}, simple{"json", output_format::json},
                 simple{"yaml", output_format::yaml}, simple{"name", output_format::name}})
    if (g.value == f.word) {
      inv.output = f.format;
      return status::ok_status();
    }
  struct with_template {
    std::string_view word;
    output_format format;
    bool from_file;
  };
  std::string_view v = g.value;
  auto eq = v.find('=');
  std::string_view word = v.substr(0, eq);
  std::string argument(eq == std::string_view::npos ? std::string_view() : v.substr(eq + 1));
  for (auto f : {with_template{"jsonpath", output_format::jsonpath, false},
                 with_template{"jsonpath-file", output_format::jsonpath, true},
                 with_template{"jsonpath-as-json", output_format::jsonpath_as_json, false},
                 with_template{"custom-columns", output_format::custom_columns, false},
                 with_template{"custom-columns-file", output_format::custom_columns, true}}) {
    if (word != f.word)
      continue;
    if (argument.empty())
      return usage(f.format == output_format::custom_columns
                     ? "custom-columns format specified but no custom columns given"
                     : "template format specified but no template given");
    inv.output = f.format;
    (f.from_file ? inv.output_template_file : inv.output_template) = argument;
    return status::ok_status();
  }
  return usage(g.spelling + ": unknown output format \"" + g.value +
               "\": use wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, "
               "jsonpath-as-json=TEMPLATE, custom-columns=SPEC or custom-columns-file=FILE");
}

// Splits KIND [NAME...] or KIND/NAME... into the invocation.
status read_targets(std::string_view cmd_name, const std::vector<std::string>& words,
                    invocation& inv) {
  if (words.empty())
    return status::ok_status();
  bool slashed = words.front().find('/') != std::string::npos;
  if (!slashed && cmd_name == "get" && words.front().find(',') != std::string::npos) {
    // kubectl's KIND,KIND...: no spaces, each a resource word.
    std::string_view list = words.front();
    std::size_t start = 0;
    while (true) {
      auto comma = list.find(',', start);
      std::string word(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (resolve_events(word))
        return events_refused(cmd_name, true);
      auto k = resolve_resource(word);
      if (!k)
        return usage(std::string(cmd_name) + ": the server doesn't have a resource type \"" +
                     word + "\"; Phalanx serves " + kinds_list());
      if (std::find(inv.kinds.begin(), inv.kinds.end(), *k) == inv.kinds.end())
        inv.kinds.push_back(*k);
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
    inv.kind = inv.kinds.front();
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (words[i].empty() || words[i].find('/') != std::string::npos)
        return usage(std::string(cmd_name) + ": \"" + words[i] + "\" is not a name");
      inv.names.push_back(words[i]);
    }
    return status::ok_status();
  }
  // get events [NAME...], get ev/NAME...: Events are no resource_kind (they are made by the
  // server, and read-only).
  auto events_of = [&](std::string_view word) -> status {
    auto v = resolve_events(word);
    if (!v)
      return status::ok_status();
    if (cmd_name != "get")
      return events_refused(cmd_name, false);
    if (inv.events && *inv.events != *v)
      return usage(std::string(cmd_name) +
                   ": every resource/name argument must name the same kind of resource");
    inv.events = v;
    return status::ok_status();
  };
  if (!slashed) {
    if (auto s = events_of(words.front()); !s)
      return s;
    if (inv.events) {
      for (std::size_t i = 1; i < words.size(); ++i) {
        if (words[i].empty() || words[i].find('/') != std::string::npos)
          return usage(std::string(cmd_name) + ": \"" + words[i] + "\" is not a name");
        inv.names.push_back(words[i]);
      }
      return status::ok_status();
    }
    auto k = resolve_resource(words.front());
    if (!k)
      return usage(std::string(cmd_name) + ": the server doesn't have a resource type \"" +
                   words.front() + "\"; Phalanx serves " + kinds_list());
    inv.kind = k;
    for (std::size_t i = 1; i < words.size(); ++i) {
      if (words[i].find('/') != std::string::npos)
        return usage(std::string(cmd_name) + ": there is no need to specify a resource type as "
                     "a separate argument when passing arguments in resource/name form (\"" +
                     words[i] + "\")");
      if (words[i].empty())
        return usage(std::string(cmd_name) + ": a name must not be empty");
      inv.names.push_back(words[i]);
    }
    return status::ok_status();
  }
  for (const auto& w : words) {
    auto slash = w.find('/');
    if (slash == std::string::npos)
      return usage(std::string(cmd_name) + ": \"" + w +
                   "\" is not in resource/name form, like the arguments before it");
    if (auto s = events_of(std::string_view(w).substr(0, slash)); !s)
      return s;
    if (inv.events) {
      if (inv.kind || !resolve_events(std::string_view(w).substr(0, slash)))
        return usage(std::string(cmd_name) +
                     ": every resource/name argument must name the same kind of resource");
      std::string name = w.substr(slash + 1);
      if (name.empty() || name.find('/') != std::string::npos)
        return usage(std::string(cmd_name) + ": \"" + w + "\" must be resource/name");
      inv.names.push_back(std::move(name));
      continue;
    }
    auto k = resolve_resource(std::string_view(w).substr(0, slash));
    if (!k)
      return usage(std::string(cmd_name) + ": the server doesn't have a resource type \"" +
                   w.substr(0, slash) + "\"; Phalanx serves " + kinds_list());
    if (inv.kind && *inv.kind != *k)
      return usage(std::string(cmd_name) +
                   ": every resource/name argument must name the same kind of resource");
    std::string name = w.substr(slash + 1);
    if (name.empty() || name.find('/') != std::string::npos)
      return usage(std::string(cmd_name) + ": \"" + w + "\" must be resource/name");
    inv.kind = k;
    inv.names.push_back(std::move(name));
  }
  return status::ok_status();
}

} // namespace

std::optional<resource_kind> resolve_resource(std::string_view word) {
  std::string w = lower(word);
  for (const auto& k : all_kinds()) {
    if (w == k.plural || w == k.singular || w == lower(k.kind_name))
      return k.kind;
    for (auto s : k.short_names)
      if (w == s)
        return k.kind;
    if (!k.group.empty() && (w == std::string(k.plural) + "." + std::string(k.group) ||
                             w == std::string(k.singular) + "." + std::string(k.group)))
      return k.kind;
  }
  if (w == "vcjobs")  // Volcano's CLI and docs use both spellings.
    return resource_kind::job;
  return std::nullopt;
}

std::optional<event_version> resolve_events(std::string_view word) {
  std::string w = lower(word);
  if (w == "events" || w == "event" || w == "ev")
    return event_version::core_v1;
  if (w == "events.events.k8s.io" || w == "event.events.k8s.io" || w == "ev.events.k8s.io")
    return event_version::events_v1;
  return std::nullopt;
}

// A timeout flag's value: whole seconds ("30") or a duration ("30s", "1m", "500ms").
result<std::chrono::milliseconds> parse_timeout(std::string_view flag, std::string_view text) {
  if (!text.empty() && std::all_of(text.begin(), text.end(),
                                   [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t seconds = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (r.ec != std::errc{} || seconds > 365LL * 24 * 3600)
      return usage(std::string(flag) + ": \"" + std::string(text) + "\" is too long");
    return std::chrono::milliseconds(seconds * 1000);
  }
  auto ns = scheduler::parse_duration_ns(text);
  if (!ns)
    return usage(std::string(flag) + ": \"" + std::string(text) +
                 "\" is not a duration such as 30s, 1m or 500ms: " + ns.error().message());
  return std::chrono::milliseconds(*ns / 1000000);
}

result<invocation> parse_command_line(const std::vector<std::string>& args,
                                      const getenv_fn& getenv) {
  invocation inv;
  if (auto s = getenv("PHALANX_SERVER"); s && !s->empty())
    inv.connection.server = *s;
  if (auto t = getenv("PHALANX_TOKEN"); t && !t->empty())
    inv.connection.token = *t;

  // Pass 1: flags apart from positional words. Which flags apply depends on the command, which
  // may come after them, so they are checked in pass 2.
  const auto split = flags::split(args, split_table());
  if (split.error)
    return split_refused(*split.error);
  std::vector<given_flag> given;
  for (const auto& f : split.flags)
    given.push_back({find_long(f.name), f.spelling, f.value.value_or("true")});
  const std::vector<std::string>& words = split.words;

  // The command.
  bool help_flag = false;
  for (const auto& g : given)
    if (g.spec->id == flag_id::help) {
      auto b = parse_bool(g);
      if (!b)
        return b.error();
      help_flag = help_flag || *b;
    }
  if (words.empty()) {
    inv.cmd = command::help;
    return inv;
  }
  std::string verb = words.front();
  std::vector<std::string> rest(words.begin() + 1, words.end());
  std::string help_topic = verb;
  if (verb == "help") {
    inv.cmd = command::help;
    for (const auto& w : rest)
      inv.help_topic += (inv.help_topic.empty() ? "" : " ") + w;
    return inv;
  } else if (verb == "apply") {
    inv.cmd = command::apply;
  } else if (verb == "get") {
    inv.cmd = command::get;
  } else if (verb == "describe") {
    inv.cmd = command::describe;
  } else if (verb == "delete") {
    inv.cmd = command::remove;
  } else if (verb == "version") {
    inv.cmd = command::version;
  } else if (verb == "cordon" || verb == "uncordon") {
    inv.cmd = command::action;
    inv.kind = resource_kind::node;
    inv.action = verb;
  } else if (verb == "job" || verb == "queue" || verb == "node") {
    if (rest.empty()) {
      if (help_flag) {
        inv.cmd = command::help;
        inv.help_topic = verb;
        return inv;
      }
      return usage(verb + " needs a subcommand: " +
                   (verb == "job"     ? std::string("suspend, resume or list")
                    : verb == "queue" ? std::string("open, close or list")
                                      : std::string("cordon, uncordon or list")));
    }
    std::string sub = rest.front();
    rest.erase(rest.begin());
    help_topic = verb + " " + sub;
    if (sub == "list") {
      inv.cmd = command::get;
      inv.kind = verb == "job" ? resource_kind::job
                 : verb == "queue" ? resource_kind::queue
                                   : resource_kind::node;
    } else {
      auto a = std::find_if(actions.begin(), actions.end(), [&](const action_word& x) {
        return x.group == verb && x.word == sub;
      });
      if (a == actions.end())
        return usage("unknown " + verb + " subcommand \"" + sub + "\": use " +
                     (verb == "job"     ? std::string("suspend, resume or list")
                      : verb == "queue" ? std::string("open, close or list")
                                        : std::string("cordon, uncordon or list")));
      inv.cmd = command::action;
      inv.kind = a->kind;
      inv.action = std::string(a->word);
    }
  } else {
    return usage("unknown command \"" + verb + "\" (see phalanxctl --help)");
  }
  if (help_flag) {
    invocation h;
    h.cmd = command::help;
    h.help_topic = help_topic;
    return h;
  }

  // Pass 2: the flags, now that the command is known.
  for (const auto& g : given) {
    if ((g.spec->commands & bit(inv.cmd)) == 0)
      return usage("flag " + g.spelling + " does not apply to \"" + help_topic +
                   "\" (see phalanxctl help " + help_topic + ")");
    auto boolean = [&](bool& target) -> status {
      auto b = parse_bool(g);
      if (!b)
        return b.error();
      target = *b;
      return status::ok_status();
    };
    status s;
    switch (g.spec->id) {
      case flag_id::server:
        if (g.value.empty())
          return usage(g.spelling + " must not be empty");
        inv.connection.server = g.value;
        break;
      case flag_id::token:
        inv.connection.token = g.value;
        break;
      case flag_id::certificate_authority:
        if (g.value.empty())
          return usage(g.spelling + " must name a PEM file");
        inv.connection.ca_file = g.value;
        break;
      case flag_id::insecure_skip_tls_verify:
        s = boolean(inv.connection.insecure_skip_tls_verify);
        break;
      case flag_id::request_timeout: {
        auto t = parse_timeout(g.spelling, g.value);
        if (!t)
          return t.error();
        inv.connection.request_timeout = *t;
        break;
      }
      case flag_id::help:
        break;
      case flag_id::namespace_name:
        if (g.value.empty())
          return usage(g.spelling + " must not be empty");
        inv.namespace_name = g.value;
        inv.namespace_given = true;
        break;
      case flag_id::all_namespaces:
        s = boolean(inv.all_namespaces);
        break;
      case flag_id::selector:
        inv.selector = g.value;
        break;
      case flag_id::filename:
        if (g.value.empty())
          return usage(g.spelling + " must name a file, a directory, or - for standard input");
        inv.files.push_back(g.value);
        break;
      case flag_id::output:
        if (auto o = parse_output(g, inv); !o)
          return o;
        break;
      case flag_id::sort_by:
        if (g.value.empty())
          return usage(g.spelling + " needs a JSONPath, such as .metadata.name");
        inv.sort_by = g.value;
        break;
      case flag_id::allow_missing_template_keys:
        s = boolean(inv.allow_missing_template_keys);
        break;
      case flag_id::watch:
        s = boolean(inv.watch);
        break;
      case flag_id::watch_only:
        s = boolean(inv.watch_only);
        break;
      case flag_id::output_watch_events:
        s = boolean(inv.output_watch_events);
        break;
      case flag_id::no_headers:
        s = boolean(inv.no_headers);
        break;
      case flag_id::show_labels:
        s = boolean(inv.show_labels);
        break;
      case flag_id::ignore_not_found:
        s = boolean(inv.ignore_not_found);
        break;
      case flag_id::grace_period: {
        int64_t seconds = 0;
        auto [end, ec] = std::from_chars(g.value.data(), g.value.data() + g.value.size(), seconds);
        if (ec != std::errc{} || end != g.value.data() + g.value.size() || seconds < -1)
          return usage(g.spelling + " must be a whole number of seconds, or -1 for each pod's "
                                    "own (got \"" + g.value + "\")");
        if (seconds >= 0)
          inv.grace_period_seconds = seconds;
        break;
      }
      case flag_id::force:
        s = boolean(inv.force);
        break;
      case flag_id::wait:
        s = boolean(inv.wait_for_deletion);
        break;
      case flag_id::timeout: {
        auto t = parse_timeout(g.spelling, g.value);
        if (!t)
          return t.error();
        inv.deletion_timeout = *t;
        break;
      }
      case flag_id::client:
        s = boolean(inv.client_only);
        break;
      case flag_id::field_selector:
        inv.field_selector = g.value;
        break;
      case flag_id::chunk_size: {
        int64_t n = 0;
        auto [end, ec] = std::from_chars(g.value.data(), g.value.data() + g.value.size(), n);
        if (ec != std::errc{} || end != g.value.data() + g.value.size() || n < 0)
          return usage(g.spelling + " must be a whole number of items, 0 for one list at once "
                                    "(got \"" + g.value + "\")");
        inv.chunk_size = n;
        break;
      }
    }
    if (!s)
      return s;
  }

  // Arguments and the rules between flags.
  switch (inv.cmd) {
    case command::help:
      break;
    case command::apply:
      if (!rest.empty())
        return usage("apply takes no arguments, only -f FILE (got \"" + rest.front() + "\")");
      if (inv.files.empty())
        return usage("apply needs -f FILE, -f DIRECTORY or -f - (standard input)");
      break;
    case command::get:
    case command::describe: {
      if (auto s = read_targets(verb, rest, inv); !s)
        return s;
      if (!inv.kind && !inv.events)
        return usage(verb + " needs a resource type: " + kinds_list());
      if (inv.kinds.empty() && inv.kind)
        inv.kinds.push_back(*inv.kind);

      if (inv.all_namespaces && !inv.names.empty())
        return usage("a resource cannot be retrieved by name across all namespaces: drop -A "
                     "or the names");
      if (!inv.selector.empty() && !inv.names.empty())
        return usage("names cannot be given together with a selector (-l)");
      if (!inv.field_selector.empty() && !inv.names.empty())
        return usage("names cannot be given together with a field selector (--field-selector)");
      if (inv.watch_only)
        inv.watch = true;
      if (inv.kinds.size() > 1 && inv.watch)
        return usage("--watch works on one kind of resource at a time, not on " +
                     std::to_string(inv.kinds.size()));
      if (inv.output_watch_events && !inv.watch)
        return usage("--output-watch-events needs --watch (-w)");
      if (inv.watch && inv.names.size() > 1)
        return usage("--watch works on one object or a whole collection, not on " +
                     std::to_string(inv.names.size()) + " names");
      break;
    }
    case command::remove: {
      if (auto s = read_targets(verb, rest, inv); !s)
        return s;
      if (!inv.files.empty()) {
        if (inv.kind)
          return usage("delete takes either -f FILE or KIND NAME..., not both");
        if (!inv.selector.empty())
          return usage("delete takes either -f FILE or -l SELECTOR, not both");
      } else if (!inv.kind) {
        return usage("delete needs KIND NAME..., KIND -l SELECTOR, or -f FILE");
      } else if (inv.names.empty() && inv.selector.empty()) {
        return usage("delete needs the names of the " + std::string(info(*inv.kind).plural) +
                     " to delete, or -l SELECTOR");
      } else if (!inv.names.empty() && !inv.selector.empty()) {
        return usage("names cannot be given together with a selector (-l)");
      }
      // kubectl's rules: --force alone removes at once; --grace-period=0 without --force means
      // the shortest graceful deletion, 1 s.
      if (inv.force && !inv.grace_period_seconds)
        inv.grace_period_seconds = 0;
      else if (!inv.force && inv.grace_period_seconds == 0)
        inv.grace_period_seconds = 1;
      break;
    }
    case command::action:
      for (const auto& w : rest) {
        if (w.empty())
          return usage(help_topic + ": a name must not be empty");
        inv.names.push_back(w);
      }
      if (inv.names.empty())
        return usage(help_topic + " needs the name of the " +
                     std::string(info(*inv.kind).singular));
      break;
    case command::version:
      if (!rest.empty())
        return usage("version takes no arguments (got \"" + rest.front() + "\")");
      if (inv.output != output_format::table && inv.output != output_format::json &&
          inv.output != output_format::yaml)
        return usage("version: -o must be json or yaml");
      break;
  }
  return inv;
}

std::string help_text(std::string_view topic) {
  constexpr std::string_view connection = R"(
Connection flags (every command):
  -s, --server URL                 phalanxd's address (default $PHALANX_SERVER, else
                                   http://127.0.0.1:8080); https://HOST:PORT for TLS
      --token TOKEN                bearer token (default $PHALANX_TOKEN)
      --certificate-authority FILE PEM certificates to trust for https
      --insecure-skip-tls-verify   do not verify the server's certificate (tests only)
      --request-timeout DURATION   limit of one request (default 30s); with --watch, how long
                                   the watch lasts (default: until interrupted)
)";
  constexpr std::string_view exit_codes = R"(
Exit codes:
  0  success
  1  the server refused the request (its Status message says which field and rule), or some
     documents of apply/delete failed
  2  usage error: bad flags or arguments, an unreadable or malformed file, a kind Phalanx does
     not serve; nothing was sent
  3  the server could not be reached (connection refused, TLS failure, timeout)
)";
  std::string t(topic);
  if (t == "apply")
    return R"(Create the objects of manifests (multi-document YAML or JSON).

Usage: phalanxctl apply -f FILE|DIRECTORY|- [-f ...] [-n NAMESPACE]

Kinds: Queue and PodGroup (scheduling.volcano.sh/v1beta1), Job (batch.volcano.sh/v1alpha1),
Pod and Node (v1). Every document is checked before anything is sent. Each prints
"<kind>/<name> created", "unchanged" when an object of that name exists and matches the
manifest, or "configured" when it differed and took the manifest as a merge patch (fields the
manifest leaves out are kept). A Volcano Job does not change after its creation: one that
differs is reported as "already exists" and apply goes on with the other documents, exiting 1
at the end.
)" + std::string(connection);
  if (t == "get")
    return R"(Print objects as a table, or as JSON, YAML or names.

Usage: phalanxctl get KIND[,KIND...] [NAME...] [flags]
       phalanxctl get KIND/NAME...

Kinds: queues (q), podgroups (pg), pods (po), jobs (vcjob, vj), nodes (no). Several kinds
(get pods,pg) print a table per kind, each name prefixed by its kind (pod/web-1), as kubectl.
Events (ev), read-only, on their own: get events (core/v1) or get events.events.k8s.io
(events.k8s.io/v1), with kubectl's columns.

Flags:
  -n, --namespace NS         the namespace (default "default"); cluster-scoped kinds ignore it
  -A, --all-namespaces       every namespace (adds a NAMESPACE column)
  -l, --selector SELECTOR    label selector: app=x,tier!=db,env in (a,b),!legacy
      --field-selector SEL   field selector, checked by the server: for events
                             involvedObject.name=web-0,type=Warning (regarding.name=... for
                             events.events.k8s.io); for pods spec.nodeName=n1,status.phase!=Failed
  -o, --output FORMAT        wide, json, yaml, name, or kubectl's:
        jsonpath=TEMPLATE          -o jsonpath='{.items[*].metadata.name}'
        jsonpath-file=FILE         the template in a file
        jsonpath-as-json=TEMPLATE  each action's results as a JSON array
        custom-columns=SPEC        -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName
        custom-columns-file=FILE   a line of headers and a line of paths
      --sort-by JSONPATH     order by a field: .metadata.name, {.spec.priority},
                             .spec.containers[0].resources.requests.cpu (quantities by amount)
      --allow-missing-template-keys  a key missing from a jsonpath template prints nothing
                             (default true); false: an error
  -w, --watch                after the listing, print every change as it happens
      --watch-only           print only the changes
      --output-watch-events  print the event type (ADDED, MODIFIED, DELETED) with each change
      --no-headers           the table without its title line
      --show-labels          a LABELS column last
      --chunk-size N         read lists in pages of N items (default 500; 0: at once)

Columns: jobs as `vcctl job list` (Name Creation Phase JobType Replicas Min Pending Running
Succeeded Failed Unknown RetryCount), queues as `vcctl queue list` (Name Weight State Parent
Inqueue Pending Running Unknown Completed), pods, podgroups and nodes as kubectl.

JSONPath is kubectl's dialect: {.a.b} {.items[*].x} [0] [-1] [0:2] [*] .* ..name
[?(@.x=="v")] (== != < <= > >=, [?(@.x)] for presence) [0,1] ['a','b'] {.labels.a\.b/c}
{range .items[*]}...{end} {"\n"} {@}. A collection is a List: -o jsonpath='{.items[0].kind}'.
)" + std::string(connection);
  if (t == "describe")
    return R"(Show an object in detail: its spec, status, why it is pending, and its events.

Usage: phalanxctl describe KIND [NAME...] [-n NS | -A] [-l SELECTOR] [--chunk-size N]
)" + std::string(connection);
  if (t == "delete")
    return R"(Delete objects. Deleting a job deletes its PodGroup and pods; deleting a PodGroup
does not delete its pods.

A running pod is deleted gracefully: it shows Terminating and keeps its room until it has
stopped, within its grace period (its spec's terminationGracePeriodSeconds, 30 s by default).

Usage: phalanxctl delete KIND NAME... [-n NS] [--ignore-not-found]
       phalanxctl delete KIND -l SELECTOR [-n NS]
       phalanxctl delete -f FILE|DIRECTORY|- [--ignore-not-found]

  --grace-period=SECONDS  how long a pod may take to stop (-1: each pod's own)
  --force                 with --grace-period=0 (or alone): remove pods at once, without
                          waiting for them to stop
  --wait=false            return once each delete is accepted; by default, as kubectl, wait
                          until the objects are gone (a terminating pod has stopped)
  --timeout=DURATION      how long to wait (0, the default: a week, as kubectl)
)" + std::string(connection);
  if (t == "job" || t.starts_with("job "))
    return R"(Volcano jobs.

Usage: phalanxctl job suspend NAME... [-n NS]   stop the job's pods; keep the job
       phalanxctl job resume NAME... [-n NS]    start it again
       phalanxctl job list [get flags]          the same as: get jobs
)" + std::string(connection);
  if (t == "queue" || t.starts_with("queue "))
    return R"(Volcano queues.

Usage: phalanxctl queue open NAME...     accept new PodGroups
       phalanxctl queue close NAME...    refuse new PodGroups (running ones go on)
       phalanxctl queue list [get flags] the same as: get queues
)" + std::string(connection);
  if (t == "node" || t.starts_with("node ") || t == "cordon" || t == "uncordon")
    return R"(Nodes.

Usage: phalanxctl node cordon NAME...     mark unschedulable (also: phalanxctl cordon NAME)
       phalanxctl node uncordon NAME...   mark schedulable (also: phalanxctl uncordon NAME)
       phalanxctl node list [get flags]   the same as: get nodes
)" + std::string(connection);
  if (t == "version")
    return R"(Print the client's and the server's versions.

Usage: phalanxctl version [--client] [-o json|yaml]
)" + std::string(connection);
  return R"(phalanxctl: the command-line client of phalanxd, Phalanx's gang scheduler.

Usage: phalanxctl COMMAND [ARGS] [flags]

Commands:
  apply -f FILE           create the objects of a manifest (Queue, PodGroup, Job, Pod, Node)
  get KIND [NAME...]      list objects (-o wide|json|yaml|name, -l, -n, -A, -w)
  describe KIND NAME      show an object, why it is pending, and its events
  delete KIND NAME        delete objects (or -f FILE)
  job suspend|resume NAME suspend or resume a Volcano job
  queue open|close NAME   open or close a queue
  node cordon|uncordon N  mark a node unschedulable or schedulable (also cordon, uncordon)
  version                 print the client's and the server's versions
  help [COMMAND]          explain a command
)" + std::string(connection) +
         std::string(exit_codes);
}

} // namespace phalanx::api::ctl
