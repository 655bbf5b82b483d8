#include "k8s/client.hpp"

#include "api/codec.hpp"

#include <boost/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace phalanx::k8s {

// ---------------------------------------------------------------------------------------------
// token_bucket

token_bucket::token_bucket(double qps, int burst, clock::time_point now)
  : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_), last_(now) {}

double token_bucket::tokens(clock::time_point now) const {
  if (qps_ <= 0)
    return burst_;
  double elapsed = std::chrono::duration<double>(now - last_).count();
  return std::min(burst_, tokens_ + std::max(0.0, elapsed) * qps_);
}

token_bucket::clock::duration token_bucket::take(clock::time_point now) {
  if (qps_ <= 0)
    return clock::duration::zero();
  tokens_ = tokens(now);
  if (now > last_)
    last_ = now;
  tokens_ -= 1;
  if (tokens_ >= 0)
    return clock::duration::zero();
  const std::chrono::duration<double> wait(-tokens_ / qps_);
  return std::chrono::duration_cast<clock::duration>(wait);
}

// ---------------------------------------------------------------------------------------------
// bearer_token_source

bearer_token_source::bearer_token_source(std::string token, std::string token_file)
  : fixed_(std::move(token)), file_(std::move(token_file)) {}

result<std::string> bearer_token_source::current() {
  if (file_.empty())
    return fixed_;
  std::lock_guard lock(mutex_);
  struct ::stat st {};
  file_stamp now;
  if (::stat(file_.c_str(), &st) == 0) {
    now.dev = st.st_dev;
    now.ino = st.st_ino;
    now.size = st.st_size;
    now.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  }
  if (have_token_ && !force_ && now == stamp_)
    return token_;
  std::ifstream in(file_, std::ios::binary);
  std::ostringstream text;
  if (in)
    text << in.rdbuf();
  if (!in || in.bad()) {
    // The kubelet replaces the file atomically, so a failed read is a moment between two
    // versions or a mount problem: keep the token that worked.
    if (have_token_)
      return token_;
    return status{errc::not_found, "token file " + file_ + ": cannot read it"};
  }
  std::string t = text.str();
  auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!t.empty() && blank(t.back()))
    t.pop_back();
  std::size_t start = 0;
  while (start < t.size() && blank(t[start]))
    ++start;
  token_ = t.substr(start);
  have_token_ = true;
  stamp_ = now;
  force_ = false;
  reads_.fetch_add(1, std::memory_order_relaxed);
  return token_;
}

void bearer_token_source::invalidate() {
  std::lock_guard lock(mutex_);
  force_ = true;
}

uint64_t bearer_token_source::reads() const {
  return reads_.load(std::memory_order_relaxed);
}

// ---------------------------------------------------------------------------------------------
// watch

std::string_view to_string(watch_read r) noexcept {
  switch (r) {
    case watch_read::line:
      return "line";
    case watch_read::idle:
      return "idle";
    case watch_read::ended:
      return "ended";
    case watch_read::broken:
      return "broken";
  }
  return "unknown";
}

watch::watch(std::unique_ptr<api::watch_stream> stream) : stream_(std::move(stream)) {}

watch::~watch() = default;

int watch::http_status() const {
  return stream_->status();
}

std::string watch::body() const {
  return stream_->body();
}

watch_read watch::next_line(std::string& line, std::chrono::milliseconds timeout) {
  if (auto l = stream_->next_line(timeout)) {
    line = std::move(*l);
    return watch_read::line;
  }
  if (stream_->ended_cleanly())
    return watch_read::ended;
  if (stream_->ended())
    return watch_read::broken;
  return watch_read::idle;
}

void watch::close() {
  stream_->close();
}

// ---------------------------------------------------------------------------------------------
// client

namespace {

// Writes `pem` to a new private file in $TMPDIR (or /tmp); its path or "" on failure.
std::string write_temp_ca(const std::string& pem) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/phalanx-k8s-ca-XXXXXX";
  int fd = ::mkstemp(path.data());  // Mode 0600.
  if (fd < 0)
    return "";
  std::size_t done = 0;
  while (done < pem.size()) {
    ssize_t n = ::write(fd, pem.data() + done, pem.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(path.c_str());
      return "";
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return path;
}

} // namespace

client::client(connection_config config)
  : config_(std::move(config)),
    token_(config_.token, config_.token_file),
    limiter_(config_.qps, config_.burst, std::chrono::steady_clock::now()) {}

result<std::unique_ptr<client>> client::create(connection_config config) {
  auto address = api::parse_server_address(config.server);
  if (!address)
    return address.error();
  if (config.connections < 1)
    return status{errc::invalid_argument, "connections must be at least 1"};
  if (config.timeout.count() <= 0)
    return status{errc::invalid_argument, "timeout must be positive"};
  std::string temp;
  if (config.ca_file.empty() && !config.ca_pem.empty()) {
    temp = write_temp_ca(config.ca_pem);
    if (temp.empty())
      return status{errc::io_error, "cannot write the inline CA to a temporary file"};
    config.ca_file = temp;
  }
  std::unique_ptr<client> c(new client(std::move(config)));
  c->temp_ca_file_ = std::move(temp);
  if (auto t = c->token_.current(); !t)
    return t.error();
  return c;
}

client::~client() {
  if (!temp_ca_file_.empty())
    ::unlink(temp_ca_file_.c_str());
}

const connection_config& client::config() const {
  return config_;
}

api::client_options client::options() const {
  api::client_options o;
  o.server = *api::parse_server_address(config_.server);  // Checked by create().
  o.ca_file = config_.ca_file;
  o.insecure_skip_verify = config_.insecure_skip_verify;
  o.timeout = config_.timeout;
  o.user_agent = config_.user_agent;
  // The token goes into each request's headers, so that a rotated token is used at once.
  return o;
}

std::unique_ptr<api::http_client> client::acquire() {
  std::unique_lock lock(pool_mutex_);
  pool_cv_.wait(lock, [&] { return !idle_.empty() || created_ < config_.connections; });
  if (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }
  ++created_;
  lock.unlock();
  return std::make_unique<api::http_client>(options());
}

void client::release(std::unique_ptr<api::http_client> c) {
  {
    std::lock_guard lock(pool_mutex_);
    idle_.push_back(std::move(c));
  }
  pool_cv_.notify_one();
}

result<api::client_response> client::request(const request_spec& spec) {
  if (spec.target.empty() || spec.target.front() != '/')
    return status{errc::invalid_argument,
                  "request target \"" + spec.target + "\" must start with '/'"};
  if (!spec.bypass_rate_limit) {
    std::chrono::steady_clock::duration wait;
    {
      std::lock_guard lock(limiter_mutex_);
      wait = limiter_.take(std::chrono::steady_clock::now());
    }
    if (wait > std::chrono::steady_clock::duration::zero()) {
      limiter_waits_.fetch_add(1, std::memory_order_relaxed);
      limiter_wait_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count(),
                                 std::memory_order_relaxed);
      std::this_thread::sleep_for(wait);
    }
  }
  auto token = token_.current();
  if (!token)
    return token.error();

  api::client_request r;
  r.method = spec.method;
  r.target = spec.target;
  r.body = spec.body;
  r.content_type = spec.content_type.empty() && !spec.body.empty() ? "application/json"
                                                                   : spec.content_type;
  r.accept = "application/json";
  if (!token->empty())
    r.headers.emplace_back("Authorization", "Bearer " + *token);

  auto conn = acquire();
  auto res = conn->send(r);
  release(std::move(conn));

  if (!res) {
    transport_errors_.fetch_add(1, std::memory_order_relaxed);
    return res;
  }
  responses_.fetch_add(1, std::memory_order_relaxed);
  if (res->status == 429)
    throttled_.fetch_add(1, std::memory_order_relaxed);
  else if (res->status >= 500)
    server_errors_.fetch_add(1, std::memory_order_relaxed);
  else if (res->status == 401)
    token_.invalidate();
  return res;
}

result<std::unique_ptr<watch>> client::open_watch(const std::string& target) {
  if (target.empty() || target.front() != '/')
    return status{errc::invalid_argument, "watch target \"" + target + "\" must start with '/'"};
  auto token = token_.current();
  if (!token)
    return token.error();
  api::client_request r;
  r.target = target;
  r.accept = "application/json";
  if (!token->empty())
    r.headers.emplace_back("Authorization", "Bearer " + *token);
  auto stream = api::watch_stream::open(options(), r);
  if (!stream)
    return stream.error();
  watches_opened_.fetch_add(1, std::memory_order_relaxed);
  if ((*stream)->status() == 401)
    token_.invalidate();
  return std::make_unique<watch>(std::move(*stream));
}

client_metrics client::metrics() const {
  client_metrics m;
  m.responses = responses_.load(std::memory_order_relaxed);
  m.transport_errors = transport_errors_.load(std::memory_order_relaxed);
  m.throttled = throttled_.load(std::memory_order_relaxed);
  m.server_errors = server_errors_.load(std::memory_order_relaxed);
  m.limiter_waits = limiter_waits_.load(std::memory_order_relaxed);
  m.limiter_wait_time = std::chrono::nanoseconds(limiter_wait_ns_.load(std::memory_order_relaxed));
  m.watches_opened = watches_opened_.load(std::memory_order_relaxed);
  m.token_reads = token_.reads();
  return m;
}

// ---------------------------------------------------------------------------------------------
// Classifying answers

bool is_retryable(const result<api::client_response>& r) {
  if (!r)
    return r.error().code() == errc::unavailable || r.error().code() == errc::io_error;
  return r->status == 429 || r->status >= 500;
}

std::optional<std::chrono::seconds> retry_after(const result<api::client_response>& r) {
  if (!r)
    return std::nullopt;
  std::string v = r->header("retry-after");
  long long seconds = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seconds);
  if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || seconds < 0)
    return std::nullopt;
  return std::chrono::seconds(seconds);
}

status status_of(const api::client_response& response, std::string_view what) {
  const int code = response.status;
  if (code >= 200 && code < 300)
    return {};
  // The apiserver's Status: reason and message. A body that is not one (a proxy's HTML page)
  // is quoted briefly instead.
  std::string reason;
  std::string message;
  api::parse_limits limits;
  limits.max_bytes = std::max<std::size_t>(limits.max_bytes, response.body.size());
  if (auto v = api::parse_json(response.body, limits); v && v->is_object()) {
    const auto& o = v->get_object();
    if (auto* p = o.if_contains("reason"); p && p->is_string())
      reason = std::string(p->get_string());
    if (auto* p = o.if_contains("message"); p && p->is_string())
      message = std::string(p->get_string());
  }
  if (message.empty())
    message = response.body.substr(0, 200);
  errc e = errc::internal;
  if (code == 400 || code == 422 || code == 405 || code == 406 || code == 415)
    e = errc::invalid_argument;
  else if (code == 401 || code == 403)
    e = errc::unauthenticated;
  else if (code == 404)
    e = errc::not_found;
  else if (code == 409)
    e = reason == "AlreadyExists" ? errc::already_exists : errc::conflict;
  else if (code == 410)
    e = errc::failed_precondition;
  else if (code == 413)
    e = errc::too_large;
  else if (code == 429 || code >= 500 || code == 408)
    e = errc::unavailable;
  std::string text = std::string(what) + ": HTTP " + std::to_string(code);
  if (!reason.empty())
    text += " " + reason;
  if (!message.empty())
    text += ": " + message;
  return {e, std::move(text)};
}

std::optional<denied_call> denied_call_of(std::string_view failure) {
  if (failure.find("HTTP 403") == std::string_view::npos)
    return std::nullopt;
  // The quoted value after `prefix` at `from`, moving `from` past it.
  auto quoted_after = [&](std::string_view prefix,
                          std::size_t& from) -> std::optional<std::string> {
    if (failure.substr(from, prefix.size()) != prefix)
      return std::nullopt;
    auto start = from + prefix.size();
    auto end = failure.find('"', start);
    if (end == std::string_view::npos)
      return std::nullopt;
    from = end + 1;
    return std::string(failure.substr(start, end - start));
  };
  auto at = failure.find("\" cannot ");  // After the user's quoted name.
  if (at == std::string_view::npos)
    return std::nullopt;
  at += std::string_view("\" cannot ").size();
  auto space = failure.find(' ', at);
  if (space == std::string_view::npos)
    return std::nullopt;
  denied_call d;
  d.verb = std::string(failure.substr(at, space - at));
  at = space;
  auto resource = quoted_after(" resource \"", at);
  auto group = resource ? quoted_after(" in API group \"", at) : std::nullopt;
  if (!group)
    return std::nullopt;
  d.resource = std::move(*resource);
  d.api_group = std::move(*group);
  if (auto ns = quoted_after(" in the namespace \"", at))
    d.namespace_name = std::move(*ns);
  return d;
}

} // namespace phalanx::k8s
