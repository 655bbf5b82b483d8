#include "api/ctl/ctl.hpp"

#include "api/client.hpp"
#include "api/codec.hpp"
#include "api/ctl/json_util.hpp"
#include "api/ctl/manifests.hpp"
#include "api/ctl/paths.hpp"
#include "api/ctl/printers.hpp"
#include "api/ctl/template_output.hpp"
#include "api/kinds.hpp"
#include "scheduler/validation.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <istream>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>
#include <ostream>

#ifndef PHALANX_CTL_VERSION
#define PHALANX_CTL_VERSION "0.0.0"
#endif

namespace phalanx::api::ctl {

namespace json = boost::json;

std::string_view to_string(exit_code c) noexcept {
  switch (c) {
    case exit_code::ok:
      return "ok";
    case exit_code::server_error:
      return "server_error";
    case exit_code::usage:
      return "usage";
    case exit_code::unreachable:
      return "unreachable";
  }
  return "ok";
}

std::string_view client_version() noexcept {
  return PHALANX_CTL_VERSION;
}

namespace {

constexpr std::string_view json_type = "application/json";

exit_code worse(exit_code a, exit_code b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

std::string past_tense(std::string_view action) {
  if (action == "suspend")
    return "suspended";
  if (action == "resume")
    return "resumed";
  if (action == "open")
    return "opened";
  if (action == "close")
    return "closed";
  if (action == "cordon")
    return "cordoned";
  if (action == "uncordon")
    return "uncordoned";
  return std::string(action) + "ed";
}

// What a request answered, when the exchange itself worked.
using answer = std::optional<client_response>;

// What get reads and prints: the objects of a kind, or Events (which are no resource_kind: the
// server makes them, read-only, in core/v1 or events.k8s.io/v1).
struct target {
  std::optional<resource_kind> kind;  // Unset: events.
  event_version events = event_version::core_v1;

  bool is_namespaced() const { return kind ? namespaced(*kind) : true; }
  std::string collection(std::string_view ns) const {
    return kind ? collection_path(*kind, ns) : events_collection_path(events, ns);
  }
  std::string item(std::string_view ns, std::string_view name) const {
    return kind ? item_path(*kind, ns, name) : events_item_path(events, ns, name);
  }
  std::string qualified(std::string_view name) const {
    return kind ? qualified_name(*kind, name) : events_qualified_name(events, name);
  }
  std::string_view plural() const { return kind ? info(*kind).plural : "events"; }
  std::vector<std::string> header(const table_options& o) const {
    return kind ? table_header(*kind, o) : event_table_header(o);
  }
  std::vector<std::string> row(const json::value& obj, const table_options& o,
                               std::string_view type = {}) const {
    return kind ? table_row(*kind, obj, o, type) : event_table_row(obj, o, type);
  }
};

class session {
 public:
  session(const invocation& inv, const environment& env, client_options options)
    : inv_(inv), env_(env), options_(std::move(options)) {}

  exit_code execute() {
    switch (inv_.cmd) {
      case command::help:
        return exit_code::ok;
      case command::apply:
        return apply();
      case command::get:
        return get();
      case command::describe:
        return describe();
      case command::remove:
        return remove();
      case command::action:
        return act();
      case command::version:
        return version();
    }
    return exit_code::ok;
  }

 private:
  // ---- Transport

  // Sends one request; nullopt (with the message printed) when the server cannot be reached.
  answer send(std::string method, std::string target, std::string body = {},
              std::string content_type = {}) {
    if (!client_)
      client_ = std::make_unique<http_client>(options_);
    client_request r;
    r.method = std::move(method);
    r.target = std::move(target);
    r.body = std::move(body);
    r.content_type = std::move(content_type);
    r.accept = std::string(json_type);
    auto res = client_->send(r);
    if (!res) {
      unreachable(res.error());
      return std::nullopt;
    }
    return std::move(*res);
  }

  void unreachable(const status& s) {
    env_.err << "error: cannot reach phalanxd at " << options_.server.to_string() << ": "
             << s.message() << "\n";
    if (s.message().find("handshake") != std::string::npos)
      env_.err << "hint: for a self-signed certificate pass --certificate-authority FILE "
                  "(or --insecure-skip-tls-verify in tests); for a plain HTTP server use "
                  "http:// in --server\n";
    else
      env_.err << "hint: is phalanxd running there? Point --server or PHALANX_SERVER at it\n";
  }

  // Prints a failed answer as kubectl does: `Error from server (NotFound): <message>`, with the
  // fields and rules of an Invalid that the message does not already spell out.
  void server_error(const client_response& r, std::string_view context = {}) {
    auto parsed = parse_json(r.body);
    if (!parsed || !parsed->is_object() || string_at(*parsed, {"kind"}) != "Status") {
      std::string body = r.body;
      while (!body.empty() && (body.back() == '\n' || body.back() == '\r'))
        body.pop_back();
      env_.err << "Error from server (HTTP " << r.status << "): " << context
               << (body.empty() ? "no message" : body) << "\n";
    } else {
      api_error e = decode_status(*parsed, r.status);
      env_.err << "Error from server (" << to_string(e.reason) << "): " << context << e.message
               << "\n";
      for (const auto& c : e.causes) {
        std::string text = c.to_string();
        if (e.message.find(c.message) == std::string::npos)
          env_.err << "  " << text << "\n";
      }
    }
    if (r.status == 401) {
      if (options_.token.empty())
        env_.err << "hint: the server requires a token: pass --token or set PHALANX_TOKEN\n";
      else
        env_.err << "hint: the server refused the token given by --token or PHALANX_TOKEN\n";
    }
  }

  static bool ok(const client_response& r) { return r.status >= 200 && r.status < 300; }

  // Parses a 2xx body; prints and returns nullopt when it is not JSON.
  std::optional<json::value> body_of(const client_response& r) {
    parse_limits limits;
    limits.max_bytes = options_.max_body_bytes;
    limits.max_depth = 128;
    auto v = parse_json(r.body, limits);
    if (!v) {
      env_.err << "error: the server's answer is not JSON: " << v.error().message << "\n";
      return std::nullopt;
    }
    return std::move(*v);
  }

  std::string ns_for(const target& t) const {
    return t.is_namespaced() ? inv_.namespace_name : std::string();
  }
  std::string ns_for(resource_kind kind) const { return ns_for(target{kind}); }

  // What get reads: the kinds asked, or the Events.
  std::vector<target> targets() const {
    if (inv_.events)
      return {target{std::nullopt, *inv_.events}};
    std::vector<target> out;
    for (auto k : inv_.kinds)
      out.push_back(target{k});
    return out;
  }

  scheduler::timestamp now() const {
    if (env_.now)
      return env_.now();
    return std::chrono::time_point_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now());
  }

  // ---- Fetching

  struct fetched {
    std::vector<json::value> items;
    std::string resource_version;  // The list's, to start a watch from.
    json::value raw;               // The list as the server sent it (-o json of a list).
  };

  // GET of each name, or LIST of the collection. Missing names are reported and turn the exit
  // code to 1; the others are still returned. With `for_watch`, one name is read by a LIST with
  // a field selector instead of a GET: the list's resourceVersion is where the watch must start
  // (an object's own version may be older than the server's watch history).
  std::optional<fetched> fetch(const target& t, exit_code& code, bool for_watch = false) {
    fetched f;
    if (!inv_.names.empty() && !for_watch) {
      for (const auto& name : inv_.names) {
        auto r = send("GET", t.item(ns_for(t), name));
        if (!r) {
          code = exit_code::unreachable;
          return std::nullopt;
        }
        if (!ok(*r)) {
          server_error(*r);
          code = worse(code, exit_code::server_error);
          continue;
        }
        auto v = body_of(*r);
        if (!v) {
          code = worse(code, exit_code::server_error);
          continue;
        }
        f.items.push_back(std::move(*v));
      }
      return f;
    }
    std::string path = t.collection(inv_.all_namespaces ? std::string() : ns_for(t));
    path += selector_query('?');
    // In pages of --chunk-size, as kubectl: each page's metadata.continue asks for the next.
    // Every page has the list's resourceVersion, where a watch starts.
    std::string next;
    do {
      std::string page = path;
      auto add = [&](const std::string& parameter) {
        page += (page.find('?') == std::string::npos ? "?" : "&") + parameter;
      };
      if (inv_.chunk_size > 0)
        add("limit=" + std::to_string(inv_.chunk_size));
      if (!next.empty())
        add("continue=" + percent_encode(next));
      auto r = send("GET", page);
      if (!r) {
        code = exit_code::unreachable;
        return std::nullopt;
      }
      if (!ok(*r)) {
        server_error(*r);
        code = worse(code, exit_code::server_error);
        return std::nullopt;
      }
      auto v = body_of(*r);
      if (!v) {
        code = worse(code, exit_code::server_error);
        return std::nullopt;
      }
      f.resource_version = string_at(*v, {"metadata", "resourceVersion"});
      next = string_at(*v, {"metadata", "continue"});
      if (const auto* items = find(*v, {"items"}); items && items->is_array())
        for (const auto& item : items->get_array())
          f.items.push_back(item);
      if (f.raw.is_null())
        f.raw = std::move(*v);
    } while (!next.empty());
    // The list as one answer would have been: every page's items, the list's version.
    if (auto* list = f.raw.if_object()) {
      (*list)["items"] = json::array(f.items.begin(), f.items.end());
      (*list)["metadata"] = json::object{{"resourceVersion", f.resource_version}};
    }
    if (!inv_.names.empty() && f.items.empty()) {
      // The server's own NotFound message.
      auto g = send("GET", t.item(ns_for(t), inv_.names.front()));
      if (!g) {
        code = exit_code::unreachable;
        return std::nullopt;
      }
      if (!ok(*g)) {
        server_error(*g);
        code = worse(code, exit_code::server_error);
      }
    }
    return f;
  }

  // The selectors of a list or watch as query parameters, the first after `first`: -l as
  // labelSelector, --field-selector as fieldSelector, one name as fieldSelector=metadata.name.
  std::string selector_query(char first) const {
    std::string out;
    auto add = [&](std::string_view key, const std::string& value) {
      out += out.empty() ? first : '&';
      out += key;
      out += '=';
      out += percent_encode(value);
    };
    if (!inv_.selector.empty())
      add("labelSelector", inv_.selector);
    if (!inv_.field_selector.empty())
      add("fieldSelector", inv_.field_selector);
    else if (!inv_.names.empty())
      add("fieldSelector", "metadata.name=" + inv_.names.front());
    return out;
  }

  void no_resources(const target& t) {
    if (!t.is_namespaced() || inv_.all_namespaces)
      env_.err << "No resources found\n";
    else
      env_.err << "No resources found in " << inv_.namespace_name << " namespace.\n";
  }

  // ---- get

  // With an EVENT column, rows that follow the first ones say MODIFIED and DELETED: make room.
  std::vector<std::size_t> event_widths(std::vector<std::size_t> widths) const {
    if (inv_.output_watch_events && !widths.empty())
      widths[0] = std::max<std::size_t>(widths[0], std::string_view("MODIFIED").size());
    return widths;
  }

  table_options table_opts(const target& t) const {
    table_options o;
    o.wide = inv_.output == output_format::wide;
    o.with_namespace = inv_.all_namespaces && t.is_namespaced();
    o.with_event = inv_.output_watch_events;
    o.show_labels = inv_.show_labels;
    o.now = now();
    return o;
  }

  // -o json, yaml or name of what get fetched: one object, a List of the named ones, or the
  // server's list as it came.
  void print_objects(const target& t, const fetched& f) {
    switch (inv_.output) {
      case output_format::json:
      case output_format::yaml: {
        json::value doc;
        if (!inv_.names.empty() && f.items.size() == 1) {
          doc = f.items.front();
        } else if (!inv_.names.empty()) {
          json::array items;
          for (const auto& i : f.items)
            items.push_back(i);
          doc = json::object{{"apiVersion", "v1"},
                             {"kind", "List"},
                             {"items", std::move(items)},
                             {"metadata", json::object{{"resourceVersion", ""}}}};
        } else {
          doc = f.raw;
        }
        if (!inv_.names.empty() && f.items.empty())
          return;
        env_.out << (inv_.output == output_format::json ? pretty_json(api_version_first(doc))
                                                      : to_yaml(sorted_keys(doc)));
        break;
      }
      case output_format::name:
        for (const auto& i : f.items)
          env_.out << t.qualified(string_at(i, {"metadata", "name"})) << "\n";
        break;
      case output_format::jsonpath:
      case output_format::jsonpath_as_json:
      case output_format::custom_columns:
      case output_format::table:
      case output_format::wide:
        break;  // get() prints tables itself, with widths that later watch rows keep.
    }
  }

  // One object of a watch in -o json, yaml, name, jsonpath or custom-columns; with
  // --output-watch-events, with its type. False (printed) when a template fails on it.
  bool print_event(const target& t, const std::string& type, const json::value& obj) {
    json::value event;
    if (inv_.output_watch_events && inv_.output != output_format::name)
      event = json::object{{"type", type}, {"object", obj}};
    const json::value& shown = inv_.output_watch_events ? event : obj;
    switch (inv_.output) {
      case output_format::json:
        env_.out << pretty_json(api_version_first(shown));
        break;
      case output_format::yaml:
        env_.out << "---\n" << to_yaml(sorted_keys(shown));
        break;
      case output_format::name:
        if (inv_.output_watch_events)
          env_.out << type << " ";
        env_.out << t.qualified(string_at(obj, {"metadata", "name"})) << "\n";
        break;
      case output_format::jsonpath:
      case output_format::jsonpath_as_json:
        return print_template(shown);
      case output_format::custom_columns:
        env_.out << format_custom_columns(columns_, {obj}, inv_.no_headers || columns_printed_);
        columns_printed_ = true;
        break;
      case output_format::table:
      case output_format::wide:
        break;
    }
    return true;
  }

  // The template of -o jsonpath/custom-columns and the --sort-by path, read and checked before
  // anything is sent. Errors print kubectl's message and exit 1, as kubectl's do.
  bool prepare_templates(exit_code& code) {
    auto fail = [&](const std::string& message) {
      env_.err << "error: " << message << "\n";
      code = exit_code::server_error;
      return false;
    };
    std::string text = inv_.output_template;
    if (!inv_.output_template_file.empty()) {
      std::ifstream in(inv_.output_template_file, std::ios::binary);
      if (!in)
        return fail(std::string(inv_.output == output_format::custom_columns
                                    ? "error reading template "
                                    : "error reading --template ") +
                    inv_.output_template_file + ", open " + inv_.output_template_file +
                    ": no such file or directory");
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (inv_.output == output_format::jsonpath || inv_.output == output_format::jsonpath_as_json) {
      auto t = jsonpath::parse(text);
      if (!t)
        return fail("error parsing jsonpath " + text + ", " + t.error().message());
      template_ = std::move(*t);
    } else if (inv_.output == output_format::custom_columns) {
      auto c = inv_.output_template_file.empty() ? parse_custom_columns(text)
                                                 : parse_custom_columns_file(text);
      if (!c)
        return fail(c.error().message());
      columns_ = std::move(*c);
    }
    if (!inv_.sort_by.empty()) {
      auto relaxed = relaxed_jsonpath(inv_.sort_by);
      if (!relaxed)
        return fail(relaxed.error().message());
      if (auto t = jsonpath::parse(*relaxed); !t)
        return fail("error parsing jsonpath " + *relaxed + ", " + t.error().message());
    }
    return true;
  }

  // -o jsonpath and jsonpath-as-json of one object or a List; false (printed) on an error.
  bool print_template(const json::value& doc) {
    auto r = inv_.output == output_format::jsonpath_as_json
                 ? template_->execute_as_json(doc, inv_.allow_missing_template_keys)
                 : template_->execute(doc, inv_.allow_missing_template_keys);
    if (!r) {
      // kubectl's first lines; it goes on with the object in Go's syntax, left out here.
      env_.err << "error: error executing jsonpath " << scheduler::go_quote(template_->text())
               << ": Error executing template: " << r.error().message()
               << ". Printing more information for debugging the template:\n"
               << "\ttemplate was:\n\t\t" << template_->text() << "\n";
      return false;
    }
    env_.out << *r;
    return true;
  }

  // What get prints of several kinds, of a --sort-by, or through a template: kubectl's one
  // List (json, yaml, jsonpath), one custom-columns table and one list of names for all the
  // items; a table per kind, each NAME prefixed by the kind when there are several.
  exit_code get_listing() {
    exit_code code = exit_code::ok;
    struct kind_items {
      target kind;
      std::vector<json::value> items;
    };
    std::vector<kind_items> fetched_kinds;
    const auto all = targets();
    for (const auto& t : all) {
      auto f = fetch(t, code);
      if (!f) {
        if (code == exit_code::unreachable)
          return code;
        continue;
      }
      fetched_kinds.push_back({t, std::move(f->items)});
    }
    const bool several = all.size() > 1;
    const bool tabular = inv_.output == output_format::table || inv_.output == output_format::wide;
    std::size_t total = 0;
    for (const auto& k : fetched_kinds)
      total += k.items.size();
    auto sort = [&](std::vector<json::value>& items) {
      if (inv_.sort_by.empty())
        return true;
      if (auto s = sort_items(items, inv_.sort_by); !s) {
        env_.err << "error: " << s.message() << "\n";
        code = worse(code, exit_code::server_error);
        return false;
      }
      return true;
    };
    if (tabular) {
      if (total == 0 && inv_.names.empty() && code == exit_code::ok)
        no_resources(all.front());
      bool first = true;
      for (auto& k : fetched_kinds) {
        if (k.items.empty() || !sort(k.items))
          continue;
        auto opts = table_opts(k.kind);
        std::vector<std::vector<std::string>> lines;
        if (!inv_.no_headers)  // kubectl aligns only what it prints.
          lines.push_back(k.kind.header(opts));
        const std::size_t name_column = opts.with_namespace && k.kind.is_namespaced() ? 1 : 0;
        for (const auto& i : k.items) {
          auto row = k.kind.row(i, opts);
          if (several)  // Only kinds come several: events are listed alone.
            row[name_column] = k.kind.qualified(row[name_column]);
          lines.push_back(std::move(row));
        }
        auto widths = column_widths(lines, get_min_width);
        if (!first && !inv_.no_headers)
          env_.out << "\n";
        first = false;
        for (const auto& l : lines)
          env_.out << format_row(l, widths);
      }
      return code;
    }
    // Every other format shows all the items at once, sorted together.
    std::vector<json::value> items;
    for (const auto& k : fetched_kinds)
      for (const auto& i : k.items)
        items.push_back(i);
    if (!sort(items))
      return code;
    if (total == 0 && inv_.names.empty() && inv_.output == output_format::name &&
        code == exit_code::ok)
      no_resources(all.front());
    if (!inv_.names.empty() && items.empty())
      return code;
    const json::value doc =
        !inv_.names.empty() && !several && items.size() == 1 ? items.front() : as_list(items);
    switch (inv_.output) {
      case output_format::json:
        env_.out << pretty_json(api_version_first(doc));
        break;
      case output_format::yaml:
        env_.out << to_yaml(sorted_keys(doc));
        break;
      case output_format::name:
        for (const auto& i : items) {
          auto kind = inv_.events ? std::nullopt : resolve_resource(string_at(i, {"kind"}));
          env_.out << (kind ? target{kind} : all.front()).qualified(
                          string_at(i, {"metadata", "name"}))
                   << "\n";
        }
        break;
      case output_format::jsonpath:
      case output_format::jsonpath_as_json:
        if (!print_template(doc))
          code = worse(code, exit_code::server_error);
        break;
      case output_format::custom_columns:
        env_.out << format_custom_columns(columns_, items, inv_.no_headers);
        break;
      case output_format::table:
      case output_format::wide:
        break;
    }
    return code;
  }

  exit_code get() {
    exit_code code = exit_code::ok;
    if (!prepare_templates(code))
      return code;
    const bool templated = inv_.output == output_format::jsonpath ||
                           inv_.output == output_format::jsonpath_as_json ||
                           inv_.output == output_format::custom_columns;
    if (!inv_.watch && (inv_.kinds.size() > 1 || !inv_.sort_by.empty() || templated))
      return get_listing();
    const target kind = targets().front();
    std::string resource_version;
    std::vector<std::size_t> widths;
    bool header_printed = false;
    auto opts = table_opts(kind);
    bool tabular = inv_.output == output_format::table || inv_.output == output_format::wide;
    if (!inv_.watch_only) {
      auto f = fetch(kind, code, inv_.watch);
      if (!f)
        return code;
      if (!inv_.sort_by.empty())
        if (auto s = sort_items(f->items, inv_.sort_by); !s) {
          env_.err << "error: " << s.message() << "\n";
          return worse(code, exit_code::server_error);
        }
      if (f->items.empty() && inv_.names.empty() && (tabular || inv_.output == output_format::name))
        no_resources(kind);
      if (tabular && !f->items.empty()) {
        std::vector<std::vector<std::string>> lines;
        if (!inv_.no_headers)  // kubectl aligns only what it prints.
          lines.push_back(kind.header(opts));
        for (const auto& i : f->items)
          lines.push_back(kind.row(i, opts, "ADDED"));
        widths = event_widths(column_widths(lines, get_min_width));
        for (const auto& l : lines)
          env_.out << format_row(l, widths);
        header_printed = true;
      } else if (inv_.watch && inv_.output == output_format::custom_columns && !f->items.empty()) {
        // The listing aligned as one table; the events that follow print a row each.
        env_.out << format_custom_columns(columns_, f->items, inv_.no_headers);
        columns_printed_ = true;
      } else if (inv_.watch && !tabular) {
        // As kubectl -w does: each object on its own, as the events that follow print them.
        for (const auto& i : f->items)
          if (!print_event(kind, "ADDED", i))
            return worse(code, exit_code::server_error);
      } else if (!tabular) {
        print_objects(kind, *f);
      }
      env_.out.flush();
      resource_version = f->resource_version;
      if (!inv_.names.empty() && f->items.empty())
        return code;  // kubectl does not watch what it could not get.
    }
    if (!inv_.watch)
      return code;
    return watch(kind, resource_version, widths, header_printed);
  }

  exit_code watch(const target& kind, std::string resource_version,
                  std::vector<std::size_t> widths, bool header_printed) {
    // The listing's version can be gone from the server's watch history by the time the watch
    // starts (410 Expired): then watch from now, which sends every object as ADDED first, so
    // nothing is missed (some rows may repeat).
    for (int attempt = 0;; ++attempt) {
      bool expired = false;
      auto code = watch_from(kind, resource_version, widths, header_printed, expired);
      if (!expired || attempt > 0 || resource_version.empty())
        return code;
      resource_version.clear();
    }
  }

  exit_code watch_from(const target& kind, const std::string& resource_version,
                       std::vector<std::size_t>& widths, bool& header_printed, bool& expired) {
    std::string ns = inv_.all_namespaces ? std::string() : ns_for(kind);
    std::string target = kind.collection(ns) + "?watch=1";
    if (!resource_version.empty())
      target += "&resourceVersion=" + percent_encode(resource_version);
    target += selector_query('&');
    if (inv_.connection.request_timeout && inv_.connection.request_timeout->count() > 0) {
      auto secs = std::max<int64_t>(
          1, (inv_.connection.request_timeout->count() + 999) / 1000);
      target += "&timeoutSeconds=" + std::to_string(secs);
    }
    client_request req;
    req.target = target;
    req.accept = std::string(json_type);
    auto stream = watch_stream::open(options_, req);
    if (!stream) {
      unreachable(stream.error());
      return exit_code::unreachable;
    }
    auto& s = **stream;
    if (s.status() == 410) {
      expired = true;
      return exit_code::server_error;
    }
    if (s.status() < 200 || s.status() >= 300) {
      client_response r;
      r.status = s.status();
      r.body = s.body();
      server_error(r);
      return exit_code::server_error;
    }
    bool any_event = false;
    auto opts = table_opts(kind);
    while (true) {
      auto line = s.next_line(std::chrono::seconds(1));
      if (!line) {
        if (!s.ended())
          continue;
        if (s.ended_cleanly())
          return exit_code::ok;
        env_.err << "error: the watch of " << kind.plural()
                 << " broke: the connection to " << options_.server.to_string()
                 << " was lost\n";
        return exit_code::unreachable;
      }
      if (line->empty())
        continue;
      auto ev = parse_json(*line);
      if (!ev || !ev->is_object()) {
        env_.err << "error: the server sent a watch event that is not JSON: " << *line << "\n";
        return exit_code::server_error;
      }
      std::string type = string_at(*ev, {"type"});
      const json::value* obj = find(*ev, {"object"});
      if (obj == nullptr)
        continue;
      if (type == "ERROR") {
        if (int_at(*obj, {"code"}) == 410 && !any_event) {
          expired = true;
          return exit_code::server_error;
        }
        client_response r;
        r.status = static_cast<int>(int_at(*obj, {"code"}, 500));
        r.body = json::serialize(*obj);
        server_error(r);
        return exit_code::server_error;
      }
      if (type == "BOOKMARK")
        continue;
      any_event = true;
      if (inv_.output == output_format::table || inv_.output == output_format::wide) {
        auto row = kind.row(*obj, opts, type);
        if (!header_printed) {
          auto header = kind.header(opts);
          widths = event_widths(column_widths({header, row}));
          if (!inv_.no_headers)
            env_.out << format_row(header, widths);
          header_printed = true;
        }
        env_.out << format_row(row, widths);
      } else if (!print_event(kind, type, *obj)) {
        return exit_code::server_error;
      }
      env_.out.flush();
    }
  }

  // ---- describe

  exit_code describe() {
    resource_kind kind = *inv_.kind;
    exit_code code = exit_code::ok;
    auto f = fetch(target{kind}, code);
    if (!f)
      return code;
    if (f->items.empty() && inv_.names.empty()) {
      no_resources(target{kind});
      return code;
    }
    bool first = true;
    for (const auto& o : f->items) {
      std::string name = string_at(o, {"metadata", "name"});
      std::string ns = string_at(o, {"metadata", "namespace"});
      std::optional<json::value> events;
      auto er = send("GET", item_path(kind, ns, name) + "/events");
      if (!er)
        return exit_code::unreachable;
      if (ok(*er))
        events = body_of(*er);
      std::optional<json::value> group;  // A job's PodGroup, or a node's pods.
      if (kind == resource_kind::node) {
        // As kubectl describe node asks for them: the pods that hold room there.
        auto pr = send("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" + name +
                                  ",status.phase!%3DSucceeded,status.phase!%3DFailed");
        if (!pr)
          return exit_code::unreachable;
        if (ok(*pr))
          group = body_of(*pr);
      }
      if (kind == resource_kind::job) {
        // A job's PodGroup is "<job>-<uid>", as Volcano names it (scheduler/job.cpp).
        std::string uid = string_at(o, {"metadata", "uid"});
        if (!uid.empty()) {
          auto gr = send("GET", item_path(resource_kind::pod_group, ns, name + "-" + uid));
          if (!gr)
            return exit_code::unreachable;
          if (ok(*gr))
            group = body_of(*gr);
        }
      }
      if (!first)
        env_.out << "\n\n";
      first = false;
      env_.out << describe_object(kind, o, events ? &*events : nullptr, group ? &*group : nullptr,
                                  now());
    }
    return code;
  }

  // ---- delete

  // An object whose delete was accepted, to wait for (by its uid: an object made again under
  // the name meanwhile is another).
  struct deleted_object {
    resource_kind kind;
    std::string namespace_name;
    std::string name;
    std::string uid;
  };
  std::vector<deleted_object> deleted_;

  // Deletes one object; prints kubectl's line. Returns the exit code of this one.
  exit_code delete_one(resource_kind kind, const std::string& ns, const std::string& name,
                       std::string_view context = {}) {
    auto path = item_path(kind, ns, name);
    if (inv_.grace_period_seconds)
      path += "?gracePeriodSeconds=" + std::to_string(*inv_.grace_period_seconds);
    auto r = send("DELETE", path);
    if (!r)
      return exit_code::unreachable;
    if (r->status == 404 && inv_.ignore_not_found)
      return exit_code::ok;
    if (!ok(*r)) {
      server_error(*r, context);
      return exit_code::server_error;
    }
    if (inv_.force && inv_.grace_period_seconds == 0 && kind == resource_kind::pod)
      env_.out << "Warning: Immediate deletion does not wait for confirmation that the running "
                  "resource has been terminated.\n";
    env_.out << resource_spelling(kind) << " \"" << name << "\" deleted\n";
    auto parsed = parse_json(r->body);
    deleted_.push_back({kind, ns, name,
                        parsed ? string_at(*parsed, {"metadata", "uid"}) : std::string()});
    return exit_code::ok;
  }

  // kubectl's --wait: every object whose delete was accepted is gone (404, or another object
  // under its name), a terminating pod once it has stopped. Polled: a deletion ends within a
  // grace period, and a watch per object would cost more connections than it saves.
  exit_code wait_for_deletions(exit_code code) {
    if (!inv_.wait_for_deletion || deleted_.empty() || code == exit_code::unreachable)
      return code;
    const auto timeout = inv_.deletion_timeout.count() > 0
                             ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   inv_.deletion_timeout)
                             : std::chrono::steady_clock::duration(std::chrono::hours(24 * 7));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    auto pause = std::chrono::milliseconds(20);
    for (;;) {
      std::vector<deleted_object> left;
      for (auto& d : deleted_) {
        auto r = send("GET", item_path(d.kind, d.namespace_name, d.name));
        if (!r)
          return exit_code::unreachable;
        if (r->status == 404)
          continue;
        if (ok(*r) && !d.uid.empty())
          if (auto v = parse_json(r->body); v && string_at(*v, {"metadata", "uid"}) != d.uid)
            continue;
        left.push_back(std::move(d));
      }
      deleted_ = std::move(left);
      if (deleted_.empty())
        return code;
      if (std::chrono::steady_clock::now() >= deadline) {
        for (const auto& d : deleted_) {
          const auto& k = info(d.kind);  // kubectl names an object as "<plural>[.<group>]/<name>".
          env_.err << "error: timed out waiting for the condition on " << k.plural
                   << (k.group.empty() ? "" : ".") << k.group << "/" << d.name << "\n";
        }
        return worse(code, exit_code::server_error);
      }
      std::this_thread::sleep_for(pause);
      pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::milliseconds(500));
    }
  }

  exit_code remove() { return wait_for_deletions(delete_all()); }

  exit_code delete_all() {
    exit_code code = exit_code::ok;
    if (!inv_.files.empty()) {
      auto docs = read_manifests(inv_.files, env_.in, inv_.namespace_name, inv_.namespace_given);
      if (!docs) {
        env_.err << docs.error().message() << "\n";
        return exit_code::usage;
      }
      for (const auto& d : *docs) {
        if (d.name.empty()) {
          env_.err << "error: " << d.source << ": document " << d.index
                   << ": metadata.name: Required value (an object named by generateName cannot "
                      "be deleted from its manifest)\n";
          code = worse(code, exit_code::server_error);
          continue;
        }
        auto c = delete_one(d.kind, d.namespace_name, d.name,
                            "error when deleting \"" + d.source + "\": ");
        if (c == exit_code::unreachable)
          return c;
        code = worse(code, c);
      }
      return code;
    }
    resource_kind kind = *inv_.kind;
    if (!inv_.names.empty()) {
      for (const auto& name : inv_.names) {
        auto c = delete_one(kind, ns_for(kind), name);
        if (c == exit_code::unreachable)
          return c;
        code = worse(code, c);
      }
      return code;
    }
    auto f = fetch(target{kind}, code);
    if (!f)
      return code;
    if (f->items.empty()) {
      no_resources(target{kind});
      return code;
    }
    for (const auto& o : f->items) {
      auto c = delete_one(kind, string_at(o, {"metadata", "namespace"}),
                          string_at(o, {"metadata", "name"}));
      if (c == exit_code::unreachable)
        return c;
      code = worse(code, c);
    }
    return code;
  }

  // ---- actions

  exit_code act() {
    resource_kind kind = *inv_.kind;
    exit_code code = exit_code::ok;
    for (const auto& name : inv_.names) {
      // kubectl's words for a node already as asked: "node/x already cordoned", nothing sent.
      if (kind == resource_kind::node && (inv_.action == "cordon" || inv_.action == "uncordon")) {
        auto g = send("GET", item_path(kind, ns_for(kind), name));
        if (!g)
          return exit_code::unreachable;
        if (ok(*g))
          if (auto node = body_of(*g)) {
            const auto* flag = find(*node, {"spec", "unschedulable"});
            const bool cordoned = flag && flag->is_bool() && flag->get_bool();
            if (cordoned == (inv_.action == "cordon")) {
              env_.out << qualified_name(kind, name) << " already " << past_tense(inv_.action)
                       << "\n";
              continue;
            }
          }
      }
      auto r = send("POST", item_path(kind, ns_for(kind), name) + "/" + inv_.action);
      if (!r)
        return exit_code::unreachable;
      if (!ok(*r)) {
        server_error(*r);
        code = worse(code, exit_code::server_error);
        continue;
      }
      env_.out << qualified_name(kind, name) << " " << past_tense(inv_.action) << "\n";
    }
    return code;
  }

  // ---- apply

  exit_code apply() {
    auto docs = read_manifests(inv_.files, env_.in, inv_.namespace_name, inv_.namespace_given);
    if (!docs) {
      env_.err << docs.error().message() << "\n";
      return exit_code::usage;
    }
    exit_code code = exit_code::ok;
    for (const auto& d : *docs) {
      auto c = apply_one(d);
      if (c == exit_code::unreachable)
        return c;
      code = worse(code, c);
    }
    return code;
  }

  exit_code apply_one(const manifest_document& d) {
    std::string context = "error when creating \"" + d.source + "\": ";
    auto r = send("POST", collection_path(d.kind, d.namespace_name), json::serialize(d.body),
                  std::string(json_type));
    if (!r)
      return exit_code::unreachable;
    if (ok(*r)) {
      std::string name = d.name;
      if (name.empty())  // generateName: the server chose it.
        if (auto v = parse_json(r->body); v)
          name = string_at(*v, {"metadata", "name"});
      env_.out << qualified_name(d.kind, name) << " created\n";
      return exit_code::ok;
    }
    auto status = parse_json(r->body);
    bool exists = r->status == 409 && status && string_at(*status, {"reason"}) == "AlreadyExists";
    if (!exists || d.name.empty()) {
      server_error(*r, context);
      return exit_code::server_error;
    }
    // Compare, and say what is true: unchanged, or configured by a merge patch of the manifest
    // (what it leaves out is kept: kubectl's three-way merge of the last applied manifest is
    // not done). What may not change (a Job's template, a pod's spec) the server refuses.
    auto g = send("GET", item_path(d.kind, d.namespace_name, d.name));
    if (!g)
      return exit_code::unreachable;
    if (!ok(*g)) {
      server_error(*g, context);
      return exit_code::server_error;
    }
    auto existing = body_of(*g);
    if (!existing)
      return exit_code::server_error;
    auto diffs = manifest_differences(d.kind, d.body, *existing);
    std::string qualified = qualified_name(d.kind, d.name);
    if (diffs.empty()) {
      env_.out << qualified << " unchanged\n";
      return exit_code::ok;
    }
    const bool status_differs = std::any_of(diffs.begin(), diffs.end(), [](const auto& x) {
      return x.path == "status" || x.path.rfind("status.", 0) == 0;
    });
    if (!status_differs) {
      json::value patch = d.body;
      if (patch.is_object())
        patch.as_object().erase("status");  // The server's to write.
      auto p = send("PATCH", item_path(d.kind, d.namespace_name, d.name), json::serialize(patch),
                    "application/merge-patch+json");
      if (!p)
        return exit_code::unreachable;
      if (!ok(*p)) {
        server_error(*p, "error when patching \"" + d.source + "\": ");
        return exit_code::server_error;
      }
      env_.out << qualified << " configured\n";
      return exit_code::ok;
    }
    env_.err << "error: " << qualified << " already exists and differs from \"" << d.source
             << "\" (document " << d.index << "):\n";
    constexpr std::size_t shown = 5;
    for (std::size_t i = 0; i < diffs.size() && i < shown; ++i)
      env_.err << "  " << diffs[i].path << ": the manifest has " << diffs[i].manifest
               << ", the server has " << diffs[i].server << "\n";
    if (diffs.size() > shown)
      env_.err << "  ... and " << (diffs.size() - shown) << " more\n";
    const std::string kind_name(info(d.kind).kind_name);
    env_.err << "  a " << kind_name << "'s status is written by the server, not by a manifest"
             << ": delete it (phalanxctl delete " << info(d.kind).singular << " "
             << d.name << (namespaced(d.kind) ? " -n " + d.namespace_name : std::string())
             << ") and apply again\n";
    return exit_code::server_error;
  }

  // ---- version

  exit_code version() {
    json::object client{{"gitVersion", "v" + std::string(client_version())},
                        {"program", "phalanxctl"}};
    std::optional<json::value> server;
    exit_code code = exit_code::ok;
    if (!inv_.client_only) {
      auto r = send("GET", "/version");
      if (!r) {
        code = exit_code::unreachable;
      } else if (!ok(*r)) {
        server_error(*r);
        code = exit_code::server_error;
      } else {
        server = body_of(*r);
        if (!server)
          code = exit_code::server_error;
      }
    }
    if (inv_.output == output_format::json || inv_.output == output_format::yaml) {
      json::object doc{{"clientVersion", client}};
      if (server)
        doc["serverVersion"] = *server;
      env_.out << (inv_.output == output_format::json ? pretty_json(api_version_first(doc))
                                                      : to_yaml(sorted_keys(doc)));
      return code;
    }
    env_.out << "Client Version: v" << client_version() << "\n";
    if (server)
      env_.out << "Server Version: " << string_at(*server, {"gitVersion"}, "<unknown>") << " ("
               << string_at(*server, {"compiler"}) << ", " << string_at(*server, {"platform"})
               << ")\n";
    return code;
  }

  const invocation& inv_;
  const environment& env_;
  client_options options_;
  std::unique_ptr<http_client> client_;
  std::optional<jsonpath> template_;    // -o jsonpath, jsonpath-as-json.
  std::vector<custom_column> columns_;  // -o custom-columns.
  bool columns_printed_ = false;        // The custom-columns header of a watch is out.
};

} // namespace

exit_code run(const std::vector<std::string>& args, const environment& env) {
  auto inv = parse_command_line(args, env.getenv);
  if (!inv) {
    env.err << "error: " << inv.error().message() << "\n";
    env.err << "See 'phalanxctl --help' for usage.\n";
    return exit_code::usage;
  }
  if (inv->cmd == command::help) {
    // A topic the help does not know falls back to the overview: say so once, and fail.
    const auto& topic = inv->help_topic;
    if (!topic.empty() && topic != "help" && help_text(topic) == help_text("")) {
      env.err << "error: unknown help topic \"" << topic << "\"\n"
              << "See 'phalanxctl --help' for usage.\n";
      return exit_code::usage;
    }
    env.out << help_text(topic);
    return exit_code::ok;
  }
  auto address = parse_server_address(inv->connection.server);
  if (!address) {
    env.err << "error: --server: " << address.error().message() << "\n";
    return exit_code::usage;
  }
  client_options options;
  options.server = *address;
  options.token = inv->connection.token;
  options.ca_file = inv->connection.ca_file;
  options.insecure_skip_verify = inv->connection.insecure_skip_tls_verify;
  options.user_agent = "phalanxctl/" + std::string(client_version());
  if (inv->connection.request_timeout && inv->connection.request_timeout->count() > 0)
    options.timeout = *inv->connection.request_timeout;
  if (!options.ca_file.empty() && !std::ifstream(options.ca_file)) {
    env.err << "error: --certificate-authority: the file \"" << options.ca_file
            << "\" cannot be read\n";
    return exit_code::usage;
  }
  session s(*inv, env, std::move(options));
  return s.execute();
}

} // namespace phalanx::api::ctl
