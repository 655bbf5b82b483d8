// The HTTP server on Boost.Beast (server.hpp). With http_framing.cpp, the only files of api/
// that include Beast; requests are read through request_framer (http_framing.hpp), responses
// written with Beast.
//
// Ownership and threads:
// - Every connection is a session on its own strand. The server keeps a strong reference to each
//   open session (its registry), so a session waiting for the service stays alive; a session
//   removes itself when its connection closes.
// - The server keeps, per listener, the ids of its idle connections, the longest idle first.
//   A session enters that list when it waits for a request and leaves it when a request's
//   header is complete; at the cap the acceptor evicts the first one. Both sides hold the
//   server's mutex, so a session either leaves the list first (and is busy: not evicted) or
//   finds itself evicted when it tries (and closes without serving the request).
// - What the service calls back (object callbacks, watch sinks) reaches a session only through
//   its mailbox: a mutex, the session's executor and a weak reference. Closing the mailbox
//   (when the connection closes, or at stop()) drops the executor, so a callback that arrives
//   after the server is gone touches nothing of it.

#include "api/server.hpp"

#include "api/codec.hpp"
#include "api/handler.hpp"
#include "api/http_framing.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <atomic>
#include <deque>
#include <fstream>
#include <list>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

namespace phalanx::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

namespace {

using executor_type = net::strand<net::io_context::executor_type>;

// How often a watch of events asks for their changes: how late a change shows in `kubectl get
// events -w`. A read costs the changes since the last one, not the events kept.
constexpr auto event_poll_interval = std::chrono::milliseconds(250);

class session_base;

// The error that ends a watch: a version too old for the service (failed_precondition) is
// kube-apiserver's 410 Expired, after which a client lists again.
api_error watch_end_error(const status& reason) {
  api_error e = api_error::from(reason);
  if (reason.code() == errc::failed_precondition)
    e.reason = status_reason::expired;
  return e;
}

/// The only way callbacks from other threads reach a session (see the file comment).
class mailbox {
 public:
  explicit mailbox(executor_type ex) : ex_(std::move(ex)) {}

  /// Runs `f` on the session's strand; false when the mailbox is closed.
  bool post(std::function<void()> f) {
    std::lock_guard lock{mu_};
    if (!ex_)
      return false;
    net::post(*ex_, std::move(f));
    return true;
  }

  void close() {
    std::lock_guard lock{mu_};
    ex_.reset();
  }

 private:
  std::mutex mu_;
  std::optional<executor_type> ex_;
};

using token_digest = std::array<unsigned char, 32>;

bool sha256(std::string_view data, token_digest& out) {
  unsigned int len = 0;
  return EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr) == 1 &&
         len == out.size();
}

std::string_view trim_ws(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find('?'));
}

bool is_probe_path(std::string_view target) {
  std::string_view path = path_of(target);
  return path == "/healthz" || path == "/livez" || path == "/readyz";
}

// What the probe port serves.
bool is_probe_port_path(std::string_view target) {
  return is_probe_path(target) || path_of(target) == "/metrics";
}

} // namespace

// ---------------------------------------------------------------------------------------------

/// A listening socket and the connections it accepted: the API port, or the probe port.
struct listener {
  listener(net::io_context& ioc, std::size_t cap, bool probes)
    : acceptor(net::make_strand(ioc)), max_connections(cap), probes_only(probes) {}

  tcp::acceptor acceptor;
  const std::size_t max_connections;
  const bool probes_only;  // Serves is_probe_port_path only.
  uint16_t port = 0;
  std::unique_ptr<net::steady_timer> accept_retry;  // Used on the acceptor's strand.
  // Under server::impl::mu:
  std::size_t served = 0;   // Connections counted against max_connections (not evicted ones).
  std::list<uint64_t> idle; // Ids of its idle connections, the longest idle first.
};

struct server::impl {
  impl(service& s, server_options o)
    : svc(s), opts(std::move(o)), api(ioc, opts.max_connections, false),
      registry(opts.metrics != nullptr ? *opts.metrics : own_registry),
      requests(registry.counter_family("phalanx_http_requests_total",
                                       "HTTP requests answered, by verb and status code.",
                                       {"verb", "code"})),
      latency(registry.histogram_family("phalanx_http_request_duration_seconds",
                                        "Time from a request's header to its response, by verb.",
                                        default_latency_buckets_seconds(), {"verb"})),
      open_connections(registry.add_gauge("phalanx_http_open_connections",
                                          "HTTP connections open now.")),
      rejected(registry.add_counter("phalanx_http_rejected_connections_total",
                                    "Connections refused with 503 because max_connections were "
                                    "open and none of them idle.")),
      idle_connections(registry.add_gauge("phalanx_http_idle_connections",
                                          "HTTP connections open now that have no request in "
                                          "progress: the ones a newcomer may replace.")),
      evicted(registry.add_counter("phalanx_http_evicted_connections_total",
                                   "Idle connections closed to make room for a new one, "
                                   "max_connections being open.")),
      watches(registry.add_gauge("phalanx_http_watches", "Watch streams open now.")),
      h(s, handler_options{opts.clock,
                           [this] { return opts.metrics != nullptr ? std::string()
                                                                   : own_registry.render(); },
                           opts.max_body_bytes}) {
    if (opts.probe_port)
      probes = std::make_unique<listener>(ioc, opts.max_probe_connections, true);
  }

  status listen(listener& l, uint16_t port);
  void do_accept(listener& l);
  void on_accept(listener& l, beast::error_code ec, tcp::socket socket, executor_type ex);
  void add(listener& l, const std::shared_ptr<session_base>& s);
  void remove(const session_base& s);
  /// Marks a served session idle (to the back of its listener's list) or busy (out of it).
  /// False when it was evicted: it must close without serving anything more.
  bool set_idle(const session_base& s, bool idle);
  /// Sets the connection gauges; with mu held.
  void count_connections();

  service& svc;
  server_options opts;
  std::optional<ssl::context> tls;  // Before ioc: outlives the sessions the ioc may still hold.
  net::io_context ioc;
  // Keeps the threads running while no operation is pending (sessions waiting for the service).
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  listener api;
  std::unique_ptr<listener> probes;  // With options.probe_port.
  std::vector<std::thread> threads;
  metrics_registry own_registry;
  metrics_registry& registry;
  metric_family<counter>& requests;
  metric_family<histogram>& latency;
  gauge& open_connections;
  counter& rejected;
  gauge& idle_connections;
  counter& evicted;
  gauge& watches;
  handler h;
  std::optional<token_digest> token;

  /// A served session: its listener, its place in that listener's idle list.
  struct slot {
    std::shared_ptr<session_base> session;
    listener* from = nullptr;
    std::optional<std::list<uint64_t>::iterator> idle_at;
    bool evicted = false;  // Closing; no longer counted in from->served.
  };

  std::mutex mu;
  std::unordered_map<uint64_t, slot> sessions;  // Served ones.
  std::size_t rejecting = 0;  // Sessions answering 503.
  uint64_t next_id = 1;
  std::atomic<bool> stopping{false};
  std::once_flag stop_once;
};

namespace {

class session_base : public std::enable_shared_from_this<session_base> {
 public:
  virtual ~session_base() = default;
  virtual void start() = 0;
  /// Asks the session to finish: watches end cleanly, idle connections close, a request in
  /// progress closes after its response. Thread-safe.
  virtual void begin_shutdown() = 0;
  /// Closes the connection now. Thread-safe.
  virtual void force_close() = 0;
  virtual mailbox& box() = 0;

  uint64_t id = 0;
  bool rejecting = false;    // Answers 503 to its one request and closes.
  bool probes_only = false;  // From the probe port.
};

/// Receives a service's watch events and hands them to the session through its mailbox.
class sink_impl final : public watch_sink, public std::enable_shared_from_this<sink_impl> {
 public:
  using event_fn = std::function<void(const watch_event&)>;
  using close_fn = std::function<void(std::optional<api_error>)>;

  sink_impl(std::shared_ptr<mailbox> box, std::size_t limit, event_fn on_event_fn,
            close_fn on_close_fn)
    : box_(std::move(box)), limit_(limit), on_event_(std::move(on_event_fn)),
      on_close_(std::move(on_close_fn)) {}

  bool on_event(const watch_event& e) override {
    if (dead_.load())
      return false;
    if (pending_.fetch_add(1) >= limit_) {
      dead_ = true;
      api_error err;
      err.reason = status_reason::expired;
      err.message = "the watch fell more than " + std::to_string(limit_) +
                    " events behind and was closed: list again and watch from there";
      post_close(std::move(err));
      return false;
    }
    auto self = shared_from_this();
    if (!box_->post([self, e] {
          self->pending_.fetch_sub(1);
          if (!self->closed_on_strand_)
            self->on_event_(e);
        })) {
      dead_ = true;
      return false;
    }
    return true;
  }

  void on_close(status reason) override {
    if (dead_.exchange(true))
      return;
    std::optional<api_error> err;
    if (!reason.ok())
      err = watch_end_error(reason);
    post_close(std::move(err));
  }

  /// Called on the session's strand when the session stops caring.
  void detach() { closed_on_strand_ = true; }

 private:
  void post_close(std::optional<api_error> err) {
    auto self = shared_from_this();
    box_->post([self, err = std::move(err)] {
      if (!self->closed_on_strand_)
        self->on_close_(err);
    });
  }

  std::shared_ptr<mailbox> box_;
  std::size_t limit_;
  event_fn on_event_;
  close_fn on_close_;
  std::atomic<std::size_t> pending_{0};
  std::atomic<bool> dead_{false};
  bool closed_on_strand_ = false;  // Touched on the session's strand only.
};

template <class Stream>
class session final : public session_base {
  static constexpr bool tls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  template <class... Args>
  session(server::impl& srv, executor_type ex, Args&&... args)
    : srv_(srv), stream_(std::forward<Args>(args)...), box_(std::make_shared<mailbox>(ex)),
      ex_(std::move(ex)), timer_(ex_), deadline_(ex_), poll_timer_(ex_),
      framer_(framing_limits{srv.opts.max_header_bytes, srv.opts.max_body_bytes}) {}

  void start() override {
    net::dispatch(ex_, [self = self_ptr()] {
      if constexpr (tls) {
        self->lowest().expires_after(self->header_timeout());
        self->phase_ = phase::reading;
        self->stream_.async_handshake(ssl::stream_base::server,
                                      [self](beast::error_code ec) {
                                        if (ec)
                                          return self->close_now();
                                        self->wait_request();
                                      });
      } else {
        self->wait_request();
      }
    });
  }

  void begin_shutdown() override {
    net::post(ex_, [self = self_ptr()] {
      self->stopping_ = true;
      switch (self->phase_) {
        case phase::waiting:
        case phase::reading:
          self->close_now();
          break;
        case phase::watching:
          self->end_watch(std::nullopt);
          break;
        case phase::processing:
        case phase::writing:
        case phase::closed:
          break;
      }
    });
  }

  void force_close() override {
    net::post(ex_, [self = self_ptr()] { self->close_now(); });
  }

  mailbox& box() override { return *box_; }

 private:
  enum class phase { waiting, reading, processing, writing, watching, closed };

  std::shared_ptr<session> self_ptr() {
    return std::static_pointer_cast<session>(shared_from_this());
  }

  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  std::chrono::milliseconds header_timeout() const {
    if (rejecting)
      return std::min(srv_.opts.header_timeout, std::chrono::milliseconds{2000});
    return srv_.opts.header_timeout;
  }

  std::chrono::milliseconds first_byte_timeout() const {
    if (rejecting)
      return std::min(srv_.opts.first_byte_timeout, std::chrono::milliseconds{2000});
    return srv_.opts.first_byte_timeout;
  }

  // ---- Reading a request. Bytes go through framer_; what it says decides the next step.

  void wait_request() {
    if (stopping_ || phase_ == phase::closed)
      return close_now();
    phase_ = phase::waiting;
    // Between requests the connection is idle: at the cap it may be closed for a newcomer.
    if (!srv_.set_idle(*this, true))
      return close_now();
    if (framer_.buffered_bytes() > 0)
      return read_head();  // Pipelined: the next request is here already.
    lowest().expires_after(first_request_ ? first_byte_timeout() : srv_.opts.idle_timeout);
    stream_.async_read_some(net::buffer(in_),
                            [self = self_ptr()](beast::error_code ec, std::size_t n) {
                              if (self->phase_ == phase::closed)
                                return;
                              if (ec)
                                return self->close_now();
                              self->framer_.feed(std::string_view(self->in_.data(), n));
                              self->read_head();
                            });
  }

  void read_head() {
    phase_ = phase::reading;
    // The header limit is enforced by our own deadline (not the stream's timeout, which would
    // close the socket) so that the client still gets its 408.
    lowest().expires_never();
    arm_deadline(header_timeout());
    continue_head();
  }

  void continue_head() {
    switch (framer_.advance()) {
      case framer_state::reading_head:
        return read_more(false);
      case framer_state::head_ready:
        deadline_.cancel();
        return on_head();
      case framer_state::failed:
        deadline_.cancel();
        return fail_framing();
      case framer_state::reading_body:
      case framer_state::request_ready:
        break;
    }
    close_now();  // Not reached: advance() from reading_head goes nowhere else.
  }

  // Reads more of the request's header (or body); a read the deadline cancelled answers 408.
  void read_more(bool body) {
    stream_.async_read_some(
      net::buffer(in_), [self = self_ptr(), body](beast::error_code ec, std::size_t n) {
        if (self->phase_ == phase::closed)
          return;
        if (ec) {
          self->deadline_.cancel();
          if (!self->timed_out_)
            return self->close_now();  // The client left, or the connection was evicted.
          if (body)
            return self->fail_and_close(status_reason::timeout,
                                        "the request body did not arrive within " +
                                          std::to_string(self->srv_.opts.body_timeout.count()) +
                                          " ms");
          return self->fail_and_close(status_reason::timeout,
                                      "the request header did not arrive within " +
                                        std::to_string(self->header_timeout().count()) + " ms");
        }
        self->framer_.feed(std::string_view(self->in_.data(), n));
        if (body)
          self->continue_body();
        else
          self->continue_head();
      });
  }

  // A deadline for reading a request: on expiry it cancels the read, which then answers 408.
  void arm_deadline(std::chrono::milliseconds d) {
    timed_out_ = false;
    deadline_.expires_after(d);
    deadline_.async_wait([self = self_ptr()](beast::error_code ec) {
      if (ec)
        return;  // Cancelled: the read finished in time.
      self->timed_out_ = true;
      beast::error_code ignored;
      self->lowest().socket().cancel(ignored);
    });
  }

  void on_head() {
    received_ = std::chrono::steady_clock::now();
    const request_head& head = framer_.head();
    keep_alive_ = head.keep_alive;
    // A complete header makes the connection busy: no newcomer closes it from now on.
    if (!srv_.set_idle(*this, false))
      return close_now();
    if (rejecting)
      return fail_and_close(status_reason::service_unavailable,
                            "too many connections: the server serves at most " +
                              std::to_string(probes_only ? srv_.opts.max_probe_connections
                                                         : srv_.opts.max_connections) +
                              " at once; retry later");
    if (stopping_)
      return fail_and_close(status_reason::service_unavailable, "the server is shutting down");
    if (probes_only && !is_probe_port_path(head.target)) {
      api_error e;
      e.reason = status_reason::not_found;
      e.message = "the probe port serves only /healthz, /livez, /readyz and /metrics";
      // Answered without its body: a body still to come would be read as the next request.
      bool next_can_follow = framer_.skip_head();
      return send(handler::error_response(e), !next_can_follow);
    }
    if (srv_.token && !is_probe_path(head.target) && !authorized(head)) {
      api_error e;
      e.reason = status_reason::unauthorized;
      e.message = "Unauthorized";
      auto r = handler::error_response(e);
      r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"phalanx\"");
      bool next_can_follow = framer_.skip_head();
      return send(std::move(r), !next_can_follow);
    }
    bool wants_continue = head.expects_continue();
    switch (framer_.accept_body()) {
      case framer_state::request_ready:
        return dispatch(framer_.take());
      case framer_state::failed:  // Content-Length beyond max_body_bytes.
        return fail_framing();
      case framer_state::reading_body:
        break;
      case framer_state::reading_head:
      case framer_state::head_ready:
        return close_now();  // Not reached.
    }
    if (wants_continue) {
      continue_ = std::make_unique<http::response<http::empty_body>>(http::status::continue_, 11);
      lowest().expires_after(srv_.opts.write_timeout);
      http::async_write(stream_, *continue_,
                        [self = self_ptr()](beast::error_code wec, std::size_t) {
                          self->continue_.reset();
                          if (wec)
                            return self->close_now();
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    lowest().expires_never();
    arm_deadline(srv_.opts.body_timeout);
    continue_body();
  }

  void continue_body() {
    switch (framer_.advance()) {
      case framer_state::reading_body:
        return read_more(true);
      case framer_state::request_ready:
        deadline_.cancel();
        return dispatch(framer_.take());
      case framer_state::failed:
        deadline_.cancel();
        return fail_framing();
      case framer_state::reading_head:
      case framer_state::head_ready:
        break;
    }
    close_now();  // Not reached: advance() from reading_body goes nowhere else.
  }

  // The stream broke a framing rule: answer and close. What the client sent after the fault is
  // drained by the lingering close, never parsed.
  void fail_framing() {
    const framing_error& e = framer_.error();
    fail_and_close(http_status(e.fault) == 413 ? status_reason::request_entity_too_large
                                               : status_reason::bad_request,
                   e.message);
  }

  bool authorized(const request_head& head) const {
    std::string_view auth = head.field("authorization");
    constexpr std::string_view scheme = "bearer ";
    if (auth.size() <= scheme.size() || !iequals(auth.substr(0, scheme.size()), scheme))
      return false;
    std::string_view presented = trim_ws(auth.substr(scheme.size()));
    token_digest d{};
    if (!sha256(presented, d))
      return false;
    return CRYPTO_memcmp(d.data(), srv_.token->data(), d.size()) == 0;
  }

  // ---- Handling.

  void dispatch(framed_request req) {
    phase_ = phase::processing;
    lowest().expires_never();
    http_request r;
    r.method = std::move(req.head.method);
    r.target = std::move(req.head.target);
    r.content_type = std::string(req.head.field("content-type"));
    r.accept = std::string(req.head.field("accept"));
    r.host = std::string(req.head.field("host"));
    r.body = std::move(req.body);
    std::weak_ptr<session_base> weak = shared_from_this();
    auto box = box_;
    auto post = [box, weak](std::function<void()> f) {
      box->post([weak, f = std::move(f)] {
        if (auto s = weak.lock())
          f();
      });
    };
    auto respond = [weak](http_response resp) {
      if (auto s = weak.lock())
        static_cast<session*>(s.get())->send(std::move(resp), false);
    };
    auto plan = srv_.h.handle(std::move(r), std::move(post), std::move(respond));
    if (plan)
      start_watch(std::move(*plan));
  }

  void record(const std::string& verb, int code) {
    srv_.requests.with({verb, std::to_string(code)}).inc();
    auto elapsed = std::chrono::steady_clock::now() - received_;
    srv_.latency.with({verb}).observe(std::chrono::duration<double>(elapsed).count());
  }

  void fail_and_close(status_reason reason, std::string message) {
    api_error e;
    e.reason = reason;
    e.message = std::move(message);
    received_ = std::chrono::steady_clock::now();
    send(handler::error_response(e), true);
  }

  /// Writes a response; `close` ends the connection after it.
  void send(http_response r, bool close) {
    if (phase_ == phase::closed || phase_ == phase::writing || phase_ == phase::watching)
      return;
    record(r.verb, r.status);
    phase_ = phase::writing;
    auto res = std::make_unique<http::response<http::string_body>>(
      static_cast<http::status>(r.status), 11);
    res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers)
      res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive_ && !close && !stopping_);
    res->prepare_payload();
    response_ = std::move(res);
    lowest().expires_after(srv_.opts.write_timeout);
    http::async_write(stream_, *response_,
                      [self = self_ptr()](beast::error_code ec, std::size_t) {
                        bool keep = self->response_ && self->response_->keep_alive();
                        self->response_.reset();
                        if (ec || !keep)
                          return self->close_gracefully();
                        self->first_request_ = false;
                        self->wait_request();
                      });
  }

  // ---- Watches.

  void start_watch(watch_plan plan) {
    phase_ = phase::watching;
    plan_ = std::move(plan);
    srv_.watches.inc();
    watch_counted_ = true;
    record("WATCH", 200);
    lowest().expires_never();
    auto res = std::make_unique<http::response<http::empty_body>>(http::status::ok, 11);
    res->set(http::field::content_type, plan_->table
                                          ? "application/json;as=Table;v=v1;g=meta.k8s.io"
                                          : "application/json");
    res->chunked(true);
    res->keep_alive(false);
    watch_header_ = std::move(res);
    watch_serializer_.emplace(*watch_header_);
    writing_ = true;
    http::async_write_header(stream_, *watch_serializer_,
                             [self = self_ptr()](beast::error_code ec, std::size_t) {
                               self->writing_ = false;
                               if (ec)
                                 return self->close_now();
                               self->subscribe();
                             });
  }

  void subscribe() {
    if (ending_)
      return flush();
    if (plan_->events) {
      events_from_ = plan_->resource_version;
      poll_events();
    } else {
      subscribe_objects();
    }
    if (plan_->timeout.count() > 0) {
      timer_.expires_after(plan_->timeout);
      timer_.async_wait([self = self_ptr()](beast::error_code ec) {
        if (!ec)
          self->end_watch(std::nullopt);
      });
    }
    start_probe();
    flush();
  }

  void subscribe_objects() {
    std::weak_ptr<session_base> weak = shared_from_this();
    sink_ = std::make_shared<sink_impl>(
      box_, srv_.opts.watch_queue_limit,
      [weak](const watch_event& e) {
        if (auto s = weak.lock())
          static_cast<session*>(s.get())->on_watch_event(e);
      },
      [weak](std::optional<api_error> err) {
        if (auto s = weak.lock())
          static_cast<session*>(s.get())->end_watch(std::move(err));
      });
    watch_ = srv_.svc.watch(plan_->kind, plan_->options, plan_->resource_version, sink_);
  }

  // A watch of events: every event_poll_interval the session asks for the changes of the
  // events after the last version it streamed (from 0: every event first, as ADDED).
  void poll_events() {
    if (phase_ != phase::watching || ending_)
      return;
    std::weak_ptr<session_base> weak = shared_from_this();
    auto box = box_;
    srv_.svc.event_changes(events_from_, [box, weak](result<event_change_list> r) {
      auto shared = std::make_shared<result<event_change_list>>(std::move(r));
      box->post([weak, shared] {
        if (auto s = weak.lock())
          static_cast<session*>(s.get())->on_event_changes(std::move(*shared));
      });
    });
  }

  void on_event_changes(result<event_change_list> r) {
    if (phase_ != phase::watching || ending_)
      return;
    if (!r)
      return end_watch(watch_end_error(r.error()));
    events_from_ = r->resource_version;
    for (auto& line : srv_.h.event_watch_lines(*plan_, *r, first_event_))
      chunks_.push_back(std::move(line));
    flush();
    poll_timer_.expires_after(event_poll_interval);
    poll_timer_.async_wait([self = self_ptr()](beast::error_code ec) {
      if (!ec)
        self->poll_events();
    });
  }

  // A watch client sends nothing: a read that completes tells that it went away. Bytes it does
  // send are dropped. Only one read may be pending on a stream, so closing while this read is
  // pending cancels it first (close_gracefully) and continues from its handler.
  void start_probe() {
    probing_ = true;
    stream_.async_read_some(net::buffer(probe_),
                            [self = self_ptr()](beast::error_code ec, std::size_t) {
                              self->probing_ = false;
                              if (self->close_requested_) {
                                self->close_requested_ = false;
                                return self->close_gracefully();
                              }
                              if (self->phase_ != phase::watching)
                                return;
                              if (ec)
                                return self->client_gone();
                              self->start_probe();
                            });
  }

  void on_watch_event(const watch_event& e) {
    if (phase_ != phase::watching || ending_ || !srv_.h.watch_accepts(*plan_, e))
      return;
    chunks_.push_back(srv_.h.watch_line(*plan_, e, first_event_));
    first_event_ = false;
    flush();
  }

  void end_watch(std::optional<api_error> err) {
    if (phase_ != phase::watching || ending_)
      return;
    ending_ = true;
    stop_watch_subscription();
    if (err)
      chunks_.push_back(srv_.h.watch_error_line(*err));
    flush();
  }

  void client_gone() {
    if (phase_ != phase::watching)
      return;
    stop_watch_subscription();
    close_now();
  }

  void stop_watch_subscription() {
    if (sink_)
      sink_->detach();
    watch_.reset();
    timer_.cancel();
    poll_timer_.cancel();
    if (watch_counted_) {
      watch_counted_ = false;
      srv_.watches.dec();
    }
  }

  void flush() {
    if (writing_ || phase_ != phase::watching)
      return;
    if (!chunks_.empty()) {
      writing_ = true;
      net::async_write(stream_, http::make_chunk(net::buffer(chunks_.front())),
                       [self = self_ptr()](beast::error_code ec, std::size_t) {
                         self->writing_ = false;
                         if (ec)
                           return self->client_gone();
                         self->chunks_.pop_front();
                         self->flush();
                       });
      return;
    }
    if (ending_ && !last_written_) {
      last_written_ = true;
      writing_ = true;
      last_chunk_.emplace(http::make_chunk_last());
      lowest().expires_after(srv_.opts.write_timeout);
      net::async_write(stream_, *last_chunk_,
                       [self = self_ptr()](beast::error_code, std::size_t) {
                         self->writing_ = false;
                         self->close_gracefully();
                       });
    }
  }

  // ---- Closing.

  void close_gracefully() {
    if (phase_ == phase::closed)
      return;
    if (probing_) {
      close_requested_ = true;
      beast::error_code ignored;
      lowest().socket().cancel(ignored);
      return;
    }
    if constexpr (tls) {
      finish();
      lowest().expires_after(std::chrono::seconds(1));
      stream_.async_shutdown([self = self_ptr()](beast::error_code) {
        beast::error_code ignored;
        self->lowest().socket().close(ignored);
      });
    } else {
      // Lingering close: stop sending, then read and drop what the client still sends (the
      // rest of a refused body) for a moment, so that closing with unread data does not reset
      // the connection before the client has read the answer.
      finish();
      beast::error_code ignored;
      lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      lowest().expires_after(std::chrono::milliseconds(500));
      linger(0);
    }
  }

  void linger(std::size_t drained) {
    constexpr std::size_t max_drain = std::size_t{4} << 20;
    stream_.async_read_some(net::buffer(probe_),
                            [self = self_ptr(), drained](beast::error_code ec, std::size_t n) {
                              if (ec || drained + n > max_drain) {
                                beast::error_code ignored;
                                self->lowest().socket().close(ignored);
                                return;
                              }
                              self->linger(drained + n);
                            });
  }

  void close_now() {
    if (phase_ != phase::closed)
      finish();
    beast::error_code ignored;
    lowest().socket().close(ignored);
  }

  // Marks the session closed, ends its watch and leaves the registry (once).
  void finish() {
    phase_ = phase::closed;
    if (plan_)
      stop_watch_subscription();
    box_->close();
    timer_.cancel();
    deadline_.cancel();
    if (!removed_) {
      removed_ = true;
      srv_.remove(*this);
    }
  }

  server::impl& srv_;
  Stream stream_;
  std::shared_ptr<mailbox> box_;
  executor_type ex_;
  net::steady_timer timer_;     // A watch's timeoutSeconds.
  net::steady_timer deadline_;  // Reading a request's header or body.
  net::steady_timer poll_timer_;  // An events watch's next poll.
  bool timed_out_ = false;
  request_framer framer_;
  std::array<char, 8192> in_{};  // What one read of the request brings.
  std::unique_ptr<http::response<http::empty_body>> continue_;
  std::unique_ptr<http::response<http::string_body>> response_;
  phase phase_ = phase::waiting;
  bool first_request_ = true;
  bool keep_alive_ = true;
  bool stopping_ = false;
  bool removed_ = false;
  std::chrono::steady_clock::time_point received_ = std::chrono::steady_clock::now();

  // Watch state.
  std::optional<watch_plan> plan_;
  std::unique_ptr<http::response<http::empty_body>> watch_header_;
  std::optional<http::response_serializer<http::empty_body>> watch_serializer_;
  std::shared_ptr<sink_impl> sink_;
  watch_handle watch_;
  uint64_t events_from_ = 0;  // An events watch: the version of the last changes streamed.
  std::deque<std::string> chunks_;
  std::optional<http::chunk_last<http::chunk_crlf>> last_chunk_;
  std::array<char, 4096> probe_{};
  bool writing_ = false;
  bool ending_ = false;
  bool last_written_ = false;
  bool first_event_ = true;
  bool watch_counted_ = false;
  bool probing_ = false;          // The watch's client-gone read is pending.
  bool close_requested_ = false;  // close_gracefully waits for that read to end.
};

} // namespace

void server::impl::add(listener& l, const std::shared_ptr<session_base>& s) {
  std::lock_guard lock{mu};
  s->id = next_id++;
  if (s->rejecting) {
    ++rejecting;
    return;
  }
  // A new connection is idle until its first request's header is complete.
  slot& sl = sessions[s->id];
  sl.session = s;
  sl.from = &l;
  sl.idle_at = l.idle.insert(l.idle.end(), s->id);
  ++l.served;
  count_connections();
}

void server::impl::remove(const session_base& s) {
  std::lock_guard lock{mu};
  if (s.rejecting) {
    --rejecting;
    return;
  }
  auto it = sessions.find(s.id);
  if (it == sessions.end())
    return;
  slot& sl = it->second;
  if (sl.idle_at)
    sl.from->idle.erase(*sl.idle_at);
  if (!sl.evicted)
    --sl.from->served;
  sessions.erase(it);
  count_connections();
}

void server::impl::count_connections() {
  open_connections.set(double(sessions.size()));
  idle_connections.set(double(api.idle.size() + (probes ? probes->idle.size() : 0)));
}

bool server::impl::set_idle(const session_base& s, bool idle) {
  if (s.rejecting)
    return true;  // Not counted, never evicted: it closes after its one answer.
  std::lock_guard lock{mu};
  auto it = sessions.find(s.id);
  if (it == sessions.end() || it->second.evicted)
    return false;
  slot& sl = it->second;
  if (sl.idle_at) {
    sl.from->idle.erase(*sl.idle_at);
    sl.idle_at.reset();
  }
  if (idle)
    sl.idle_at = sl.from->idle.insert(sl.from->idle.end(), s.id);
  count_connections();
  return true;
}

status server::impl::listen(listener& l, uint16_t port) {
  beast::error_code ec;
  auto addr = net::ip::make_address(opts.address, ec);
  if (ec)
    return status{errc::invalid_argument, "bad listen address " + opts.address + ": " +
                                            ec.message()};
  tcp::endpoint ep{addr, port};
  l.acceptor.open(ep.protocol(), ec);
  if (!ec)
    l.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec)
    l.acceptor.bind(ep, ec);
  if (!ec)
    l.acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return status{errc::io_error, "cannot listen on " + opts.address + ":" +
                                    std::to_string(port) + ": " + ec.message()};
  l.port = l.acceptor.local_endpoint().port();
  return status::ok_status();
}

void server::impl::do_accept(listener& l) {
  auto ex = net::make_strand(ioc);
  l.acceptor.async_accept(ex, [this, &l, ex](beast::error_code ec, tcp::socket socket) {
    on_accept(l, ec, std::move(socket), ex);
  });
}

void server::impl::on_accept(listener& l, beast::error_code ec, tcp::socket socket,
                             executor_type ex) {
  if (stopping || !l.acceptor.is_open() || ec == net::error::operation_aborted)
    return;
  if (ec) {
    // Out of file descriptors and the like: do not spin; try again shortly.
    l.accept_retry = std::make_unique<net::steady_timer>(l.acceptor.get_executor());
    l.accept_retry->expires_after(std::chrono::milliseconds(50));
    l.accept_retry->async_wait([this, &l](beast::error_code wec) {
      if (!wec && !stopping)
        do_accept(l);
    });
    return;
  }
  bool reject = false;
  std::shared_ptr<session_base> victim;
  {
    std::lock_guard lock{mu};
    if (l.served >= l.max_connections) {
      if (!l.idle.empty()) {
        // Make room: the connection idle the longest goes, the newcomer is served.
        uint64_t id = l.idle.front();
        l.idle.pop_front();
        slot& sl = sessions.at(id);
        sl.idle_at.reset();
        sl.evicted = true;
        --l.served;
        victim = sl.session;
        evicted.inc();
        count_connections();
      } else {
        reject = true;
        rejected.inc();
        if (rejecting >= 64) {
          // Too many are being refused already: close without an answer.
          beast::error_code ignored;
          socket.close(ignored);
          do_accept(l);
          return;
        }
      }
    }
  }
  if (victim)
    victim->force_close();
  std::shared_ptr<session_base> s;
  if (tls)
    s = std::make_shared<session<beast::ssl_stream<beast::tcp_stream>>>(*this, ex,
                                                                          std::move(socket), *tls);
  else
    s = std::make_shared<session<beast::tcp_stream>>(*this, ex, std::move(socket));
  s->rejecting = reject;
  s->probes_only = l.probes_only;
  add(l, s);
  s->start();
  do_accept(l);
}

// ---------------------------------------------------------------------------------------------

server::server(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

server::~server() {
  stop();
}

result<std::unique_ptr<server>> server::start(service& svc, server_options options) {
  if (options.threads == 0)
    return status{errc::invalid_argument, "server threads must be at least 1"};
  if (options.tls_cert_file.empty() != options.tls_key_file.empty())
    return status{errc::invalid_argument,
                  "TLS needs both a certificate file and a key file, or neither"};
  auto p = std::make_unique<impl>(svc, options);
  if (!options.token_file.empty()) {
    std::ifstream in(options.token_file, std::ios::binary);
    if (!in)
      return status{errc::invalid_argument, "cannot read the token file " + options.token_file};
    std::stringstream ss;
    ss << in.rdbuf();
    std::string_view t = trim_ws(ss.view());
    if (t.empty())
      return status{errc::invalid_argument, "the token file " + options.token_file + " is empty"};
    token_digest d{};
    if (!sha256(t, d))
      return status{errc::internal, "SHA-256 is not available"};
    p->token = d;
  }
  if (!options.tls_cert_file.empty()) {
    try {
      p->tls.emplace(ssl::context::tls_server);
      p->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                          ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                          ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
      p->tls->use_certificate_chain_file(options.tls_cert_file);
      p->tls->use_private_key_file(options.tls_key_file, ssl::context::pem);
    } catch (const std::exception& e) {
      return status{errc::invalid_argument, "TLS: cannot load " + options.tls_cert_file + " / " +
                                              options.tls_key_file + ": " + e.what()};
    }
  }
  if (auto st = p->listen(p->api, options.port); !st.ok())
    return st;
  if (p->probes) {
    if (auto st = p->listen(*p->probes, *options.probe_port); !st.ok())
      return st;
  }
  p->work.emplace(p->ioc.get_executor());
  p->do_accept(p->api);
  if (p->probes)
    p->do_accept(*p->probes);
  for (unsigned i = 0; i < options.threads; ++i)
    p->threads.emplace_back([ioc = &p->ioc] {
      // A handler that throws (out of memory) must not take the process down: keep serving.
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (const std::exception&) {
          continue;
        }
      }
    });
  return std::unique_ptr<server>(new server(std::move(p)));
}

uint16_t server::port() const noexcept {
  return impl_->api.port;
}

uint16_t server::probe_port() const noexcept {
  return impl_->probes ? impl_->probes->port : 0;
}

std::string server::url() const {
  std::string host = impl_->opts.address;
  if (host.find(':') != std::string::npos)
    host = "[" + host + "]";
  return std::string(impl_->tls ? "https://" : "http://") + host + ":" + std::to_string(port());
}

metrics_registry& server::metrics() noexcept {
  return impl_->registry;
}

void server::stop() {
  if (!impl_)
    return;
  auto& p = *impl_;
  std::call_once(p.stop_once, [&p] {
    p.stopping = true;
    for (listener* l : {&p.api, p.probes.get()}) {
      if (l == nullptr)
        continue;
      net::post(l->acceptor.get_executor(), [l] {
        beast::error_code ignored;
        l->acceptor.close(ignored);
        if (l->accept_retry)
          l->accept_retry->cancel();
      });
    }
    std::vector<std::shared_ptr<session_base>> open;
    {
      std::lock_guard lock{p.mu};
      for (auto& [id, sl] : p.sessions)
        open.push_back(sl.session);
    }
    for (auto& s : open)
      s->begin_shutdown();
    auto deadline = std::chrono::steady_clock::now() + p.opts.shutdown_grace;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock{p.mu};
        if (p.sessions.empty() && p.rejecting == 0)
          break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    {
      std::lock_guard lock{p.mu};
      open.clear();
      for (auto& [id, sl] : p.sessions)
        open.push_back(sl.session);
    }
    for (auto& s : open) {
      s->box().close();
      s->force_close();
    }
    // Let the forced closes run, then stop the threads.
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < until) {
      {
        std::lock_guard lock{p.mu};
        if (p.sessions.empty())
          break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    p.work.reset();
    p.ioc.stop();
    for (auto& t : p.threads)
      if (t.joinable())
        t.join();
    std::lock_guard lock{p.mu};
    for (auto& [id, sl] : p.sessions)
      sl.session->box().close();
    p.sessions.clear();
  });
}

} // namespace phalanx::api
