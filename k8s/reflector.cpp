#include "k8s/reflector.hpp"

#include "api/codec.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <random>

namespace phalanx::k8s {

namespace json = boost::json;

namespace {

// Silence on a watch beyond its timeoutSeconds plus this is a dead connection.
constexpr std::chrono::seconds watch_silence_grace{30};

// A watch that ends cleanly sooner than this without a line is treated as a failure.
constexpr std::chrono::milliseconds very_short_watch{1000};

// Lists and events can be large (a page of 500 pods with managedFields) and deep (CRDs).
api::parse_limits big_limits(std::size_t size) {
  api::parse_limits l;
  l.max_bytes = std::max<std::size_t>(size, 1);
  l.max_depth = 128;
  return l;
}

std::string string_at(const json::object& o, std::string_view key) {
  if (auto* p = o.if_contains(key); p && p->is_string())
    return std::string(p->get_string());
  return {};
}

// metadata.resourceVersion of an object, or "".
std::string resource_version_of(const json::value& v) {
  if (!v.is_object())
    return {};
  auto* m = v.get_object().if_contains("metadata");
  if (!m || !m->is_object())
    return {};
  return string_at(m->get_object(), "resourceVersion");
}

} // namespace

std::string_view to_string(event_type t) noexcept {
  switch (t) {
    case event_type::added:
      return "added";
    case event_type::modified:
      return "modified";
    case event_type::deleted:
      return "deleted";
  }
  return "unknown";
}

std::string query_escape(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

result<std::unique_ptr<reflector>> reflector::create(client& c, reflector_options options,
                                                     reflector_sink& sink) {
  auto bad = [](const std::string& what) { return status{errc::invalid_argument, what}; };
  if (options.path.empty() || options.path.front() != '/' ||
      options.path.find('?') != std::string::npos)
    return bad("reflector path \"" + options.path + "\": must start with '/' and have no query");
  if (options.kind.empty())
    return bad("reflector " + options.path + ": kind must be set");
  if (options.api_version.empty())
    return bad("reflector " + options.path + ": api_version must be set");
  if (options.page_size < 1)
    return bad("reflector " + options.path + ": page_size must be at least 1");
  if (options.min_watch_timeout.count() < 1)
    return bad("reflector " + options.path + ": min_watch_timeout must be at least 1 s");
  if (options.initial_backoff.count() < 1 || options.max_backoff < options.initial_backoff)
    return bad("reflector " + options.path +
               ": initial_backoff must be positive and max_backoff at least as long");
  if (options.read_slice.count() < 1)
    return bad("reflector " + options.path + ": read_slice must be positive");
  return std::unique_ptr<reflector>(new reflector(c, std::move(options), sink));
}

reflector::reflector(client& c, reflector_options options, reflector_sink& sink)
  : client_(c), options_(std::move(options)), sink_(sink) {
  rng_.seed(options_.seed != 0 ? options_.seed : std::random_device{}());
  rv_ = options_.resume_from;
}

reflector::~reflector() {
  stop();
}

void reflector::start() {
  if (started_.exchange(true))
    return;
  thread_ = std::thread([this] { run(); });
}

void reflector::stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
    thread_.join();
}

bool reflector::synced() const {
  return synced_.load();
}

std::string reflector::last_resource_version() const {
  std::lock_guard lock(rv_mutex_);
  return rv_;
}

reflector_counters reflector::counters() const {
  reflector_counters c;
  c.lists = lists_.load();
  c.relists_after_410 = relists_after_410_.load();
  c.watch_restarts = watch_restarts_.load();
  c.events = events_.load();
  c.bookmarks = bookmarks_.load();
  c.errors = errors_.load();
  return c;
}

void reflector::set_resource_version(const std::string& rv) {
  std::lock_guard lock(rv_mutex_);
  rv_ = rv;
}

void reflector::report(const status& error) {
  errors_.fetch_add(1);
  sink_.on_error(error);
}

bool reflector::sleep_for(std::chrono::milliseconds d) {
  std::unique_lock lock(stop_mutex_);
  return !stop_cv_.wait_for(lock, d, [&] { return stopping_.load(); });
}

std::chrono::milliseconds reflector::next_backoff() {
  // Full jitter: uniform in [0, min(max, initial x 2^failures)].
  auto cap = options_.initial_backoff;
  for (int i = 0; i < failures_ && cap < options_.max_backoff; ++i)
    cap *= 2;
  cap = std::min(cap, options_.max_backoff);
  ++failures_;
  std::uniform_int_distribution<int64_t> d(0, cap.count());
  return std::chrono::milliseconds(d(rng_));
}

std::string reflector::selectors() const {
  std::string q;
  if (!options_.label_selector.empty())
    q += "&labelSelector=" + query_escape(options_.label_selector);
  if (!options_.field_selector.empty())
    q += "&fieldSelector=" + query_escape(options_.field_selector);
  return q;
}

void reflector::run() {
  std::string rv = options_.resume_from;
  bool need_list = rv.empty();
  bool after_410 = false;
  while (!stopping_) {
    if (need_list) {
      if (auto s = list_all(after_410); !s.ok()) {
        if (stopping_)
          return;
        report(s);
        if (!sleep_for(next_backoff()))
          return;
        continue;
      }
      if (stopping_)
        return;
      failures_ = 0;
      need_list = false;
      after_410 = false;
      rv = last_resource_version();
    }
    bool resuming = !synced_;
    switch (watch_from(rv, resuming)) {
      case watch_end::stopped:
        return;
      case watch_end::clean:
        failures_ = 0;
        break;
      case watch_end::expired:
        need_list = true;
        after_410 = true;
        break;
      case watch_end::failed:
        if (!sleep_for(next_backoff()))
          return;
        break;
    }
    rv = last_resource_version();
  }
}

status reflector::list_all(bool after_410) {
  // A 410 on a later page means the continue token outlived etcd's compaction: start again
  // from the first page, at a new resourceVersion.
  for (;;) {
    std::vector<json::value> items;
    std::string list_rv;
    std::string cont;
    bool restart = false;
    do {
      if (stopping_)
        return {errc::unavailable, "stopped"};
      std::string target = options_.path + "?limit=" + std::to_string(options_.page_size);
      if (!cont.empty())
        target += "&continue=" + query_escape(cont);
      target += selectors();
      request_spec get;
      get.target = target;
      auto res = client_.request(get);
      if (!res)
        return {res.error().code(), "list " + options_.path + ": " + res.error().message()};
      if (res->status == 410 && !cont.empty()) {
        report(status_of(*res, "list " + options_.path + " (continue token expired; relisting)"));
        restart = true;
        after_410 = true;
        break;
      }
      if (res->status != 200)
        return status_of(*res, "list " + options_.path);
      auto parsed = api::parse_json(res->body, big_limits(res->body.size()));
      if (!parsed || !parsed->is_object())
        return {errc::corruption, "list " + options_.path + ": the answer is not a JSON object" +
                                      (parsed ? "" : ": " + parsed.error().message)};
      auto& page = parsed->get_object();
      std::string page_rv;
      if (auto* m = page.if_contains("metadata"); m && m->is_object()) {
        page_rv = string_at(m->get_object(), "resourceVersion");
        cont = string_at(m->get_object(), "continue");
      } else {
        cont.clear();
      }
      if (list_rv.empty())
        list_rv = page_rv;
      if (auto* arr = page.if_contains("items"); arr && arr->is_array()) {
        for (auto& item : arr->get_array()) {
          if (item.is_object()) {
            auto& o = item.get_object();
            if (!o.contains("kind"))
              o["kind"] = options_.kind;
            if (!o.contains("apiVersion"))
              o["apiVersion"] = options_.api_version;
          }
          items.push_back(std::move(item));
        }
      }
    } while (!cont.empty());
    if (restart)
      continue;
    if (list_rv.empty())
      return {errc::corruption, "list " + options_.path + ": no metadata.resourceVersion"};
    if (stopping_)
      return {errc::unavailable, "stopped"};
    lists_.fetch_add(1);
    if (after_410)
      relists_after_410_.fetch_add(1);
    set_resource_version(list_rv);
    sink_.on_list(std::move(items), list_rv);
    synced_ = true;
    return {};
  }
}

reflector::watch_end reflector::watch_from(const std::string& rv, bool resuming) {
  if (!first_watch_)
    watch_restarts_.fetch_add(1);
  first_watch_ = false;

  const auto min_s = options_.min_watch_timeout.count();
  std::uniform_int_distribution<int64_t> d(min_s, 2 * min_s - 1);
  const auto timeout_s = std::max<int64_t>(1, d(rng_));
  std::string target = options_.path + "?watch=1&allowWatchBookmarks=true&resourceVersion=" +
                       query_escape(rv) + "&timeoutSeconds=" + std::to_string(timeout_s) +
                       selectors();
  auto w = client_.open_watch(target);
  if (stopping_)
    return watch_end::stopped;
  if (!w) {
    report({w.error().code(), "watch " + options_.path + ": " + w.error().message()});
    return watch_end::failed;
  }
  auto& stream = **w;
  if (stream.http_status() == 410) {
    report({errc::failed_precondition,
            "watch " + options_.path + " from resourceVersion " + rv + ": 410 Gone; relisting"});
    return watch_end::expired;
  }
  if (stream.http_status() != 200) {
    api::client_response r;
    r.status = stream.http_status();
    r.body = stream.body();
    report(status_of(r, "watch " + options_.path));
    return watch_end::failed;
  }

  const auto silence_limit = std::chrono::seconds(timeout_s) + watch_silence_grace;
  const auto opened_at = std::chrono::steady_clock::now();
  auto last_line = opened_at;
  bool any_line = false;
  std::string line;
  for (;;) {
    if (stopping_)
      return watch_end::stopped;
    switch (stream.next_line(line, options_.read_slice)) {
      case watch_read::line: {
        last_line = std::chrono::steady_clock::now();
        any_line = true;
        if (line.empty())
          continue;
        bool synced_now = false;
        auto end = handle_line(line, synced_now);
        if (end != watch_end::clean)
          return end;
        if (resuming && synced_now)
          synced_ = true;
        break;
      }
      case watch_read::idle:
        // A resumed watch that is still open after a read slice did not get an immediate 410.
        if (resuming)
          synced_ = true;
        if (std::chrono::steady_clock::now() - last_line > silence_limit) {
          report({errc::unavailable, "watch " + options_.path + ": nothing for " +
                                         std::to_string(silence_limit.count()) +
                                         " s; reconnecting"});
          return watch_end::failed;
        }
        break;
      case watch_read::ended:
        // Ended at once with nothing in it: something is wrong (an apiserver going down closes
        // its watches); back off instead of reconnecting in a tight loop, as client-go does.
        if (!any_line && std::chrono::steady_clock::now() - opened_at < very_short_watch) {
          report({errc::unavailable, "watch " + options_.path + ": ended after less than " +
                                         std::to_string(very_short_watch.count()) +
                                         " ms with no event"});
          return watch_end::failed;
        }
        return watch_end::clean;
      case watch_read::broken:
        report({errc::unavailable, "watch " + options_.path + ": the connection broke"});
        return watch_end::failed;
    }
  }
}

reflector::watch_end reflector::handle_line(const std::string& line, bool& synced_now) {
  auto parsed = api::parse_json(line, big_limits(line.size()));
  if (!parsed || !parsed->is_object()) {
    report({errc::corruption, "watch " + options_.path + ": an event is not a JSON object" +
                                  (parsed ? "" : ": " + parsed.error().message)});
    return watch_end::failed;
  }
  auto& ev = parsed->get_object();
  std::string type = string_at(ev, "type");
  json::value* object = ev.if_contains("object");
  if (!object || !object->is_object()) {
    report({errc::corruption, "watch " + options_.path + ": a " + type + " event has no object"});
    return watch_end::failed;
  }
  if (type == "ERROR") {
    const auto& o = object->get_object();
    int64_t code = 0;
    if (auto* c = o.if_contains("code"); c && c->is_int64())
      code = c->get_int64();
    std::string message = string_at(o, "message");
    if (code == 410) {
      report({errc::failed_precondition,
              "watch " + options_.path + ": 410 " + string_at(o, "reason") + ": " + message +
                  "; relisting"});
      return watch_end::expired;
    }
    api::client_response r;
    r.status = static_cast<int>(code);
    r.body = json::serialize(*object);
    report(status_of(r, "watch " + options_.path + " (ERROR event)"));
    return watch_end::failed;
  }
  std::string rv = resource_version_of(*object);
  if (rv.empty()) {
    report({errc::corruption,
            "watch " + options_.path + ": a " + type + " event has no metadata.resourceVersion"});
    return watch_end::failed;
  }
  if (type == "BOOKMARK") {
    set_resource_version(rv);
    bookmarks_.fetch_add(1);
    synced_now = true;
    sink_.on_bookmark(rv);
    return watch_end::clean;
  }
  event_type t;
  if (type == "ADDED")
    t = event_type::added;
  else if (type == "MODIFIED")
    t = event_type::modified;
  else if (type == "DELETED")
    t = event_type::deleted;
  else {
    report({errc::corruption, "watch " + options_.path + ": unknown event type \"" + type + "\""});
    return watch_end::failed;
  }
  auto& o = object->get_object();
  if (!o.contains("kind"))
    o["kind"] = options_.kind;
  if (!o.contains("apiVersion"))
    o["apiVersion"] = options_.api_version;
  set_resource_version(rv);
  events_.fetch_add(1);
  synced_now = true;
  sink_.on_event(t, std::move(*object), rv);
  return watch_end::clean;
}

} // namespace phalanx::k8s
