#include "api/client.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <openssl/ssl.h>

#include <charconv>
#include <functional>

namespace phalanx::api {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

std::string server_address::to_string() const {
  auto h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(tls ? "https://" : "http://") + h + ":" + std::to_string(port);
}

result<server_address> parse_server_address(const std::string& url) {
  server_address out;
  std::string rest = url;
  if (rest.rfind("https://", 0) == 0) {
    out.tls = true;
    out.port = 443;
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    out.port = 80;
    rest = rest.substr(7);
  } else if (rest.find("://") != std::string::npos) {
    return status{errc::invalid_argument,
                  "server \"" + url + "\": the scheme must be http:// or https://"};
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    if (rest.find_first_not_of('/', slash) != std::string::npos)
      return status{errc::invalid_argument,
                    "server \"" + url + "\": must not have a path (only scheme, host and port)"};
    rest = rest.substr(0, slash);
  }
  std::string port_text;
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8080
    auto close = rest.find(']');
    if (close == std::string::npos)
      return status{errc::invalid_argument, "server \"" + url + "\": unclosed '[' in the host"};
    out.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':')
        return status{errc::invalid_argument, "server \"" + url + "\": expected ':' after ']'"};
      port_text = rest.substr(close + 2);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    out.host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
  } else {
    out.host = rest;
  }
  if (out.host.empty())
    return status{errc::invalid_argument, "server \"" + url + "\": the host is empty"};
  if (!port_text.empty() || (rest.size() && rest.back() == ':')) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || value == 0 ||
        value > 65535)
      return status{errc::invalid_argument,
                    "server \"" + url + "\": the port must be a number between 1 and 65535"};
    out.port = static_cast<uint16_t>(value);
  }
  return out;
}

std::string client_response::header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class Fields>
std::map<std::string, std::string> header_map(const Fields& f) {
  std::map<std::string, std::string> out;
  for (const auto& h : f)
    out[lower(std::string(h.name_string()))] = std::string(h.value());
  return out;
}

http::request<http::string_body> make_request(const client_request& r, const client_options& o) {
  http::request<http::string_body> req{http::string_to_verb(r.method), r.target, 11};
  if (req.method() == http::verb::unknown)
    req.method_string(r.method);
  req.set(http::field::host, o.server.host + ":" + std::to_string(o.server.port));
  req.set(http::field::user_agent, o.user_agent);
  if (!r.content_type.empty())
    req.set(http::field::content_type, r.content_type);
  if (!r.accept.empty())
    req.set(http::field::accept, r.accept);
  if (!o.token.empty())
    req.set(http::field::authorization, "Bearer " + o.token);
  for (const auto& [k, v] : r.headers)
    req.set(k, v);
  req.body() = r.body;
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

// Runs `ioc` until `done` or `timeout`; on timeout runs `cancel` and drains the handlers so no
// callback outlives the caller's stack. True when done. `cancel` must not destroy what the
// pending operations use (a stream): they run, aborted, during the drain.
bool run_until(net::io_context& ioc, const bool& done, std::chrono::milliseconds timeout,
               const std::function<void()>& cancel) {
  ioc.restart();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done && std::chrono::steady_clock::now() < deadline)
    ioc.run_one_for(std::chrono::milliseconds(50));
  if (done)
    return true;
  cancel();
  ioc.restart();
  while (!done && ioc.run_one_for(std::chrono::milliseconds(500)) > 0) {
  }
  return false;
}

// One connection to the server, plain or TLS.
struct connection {
  connection(net::io_context& ioc, ssl::context& ctx, const client_options& o)
    : ioc_(ioc), ctx_(ctx), options_(o) {}

  status open() {
    close();
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    auto endpoints =
        resolver.resolve(options_.server.host, std::to_string(options_.server.port), ec);
    if (ec)
      return {errc::unavailable, "cannot resolve " + options_.server.host + ": " + ec.message()};
    bool done = false;
    auto on_connect = [&](beast::error_code e, const tcp::endpoint&) {
      ec = e;
      done = true;
    };
    if (options_.server.tls) {
      secure_.emplace(ioc_, ctx_);
      if (!SSL_set_tlsext_host_name(secure_->native_handle(), options_.server.host.c_str()))
        return close(), status{errc::io_error, "TLS: cannot set the server name"};
      if (!options_.insecure_skip_verify)
        secure_->set_verify_callback(ssl::host_name_verification(options_.server.host));
      beast::get_lowest_layer(*secure_).async_connect(endpoints, on_connect);
    } else {
      plain_.emplace(ioc_);
      plain_->async_connect(endpoints, on_connect);
    }
    if (!run_until(ioc_, done, options_.timeout, [&] { shut(); })) {
      close();
      return {errc::io_error, "connecting to " + options_.server.to_string() + " timed out"};
    }
    if (ec) {
      close();
      return {errc::unavailable,
              "cannot connect to " + options_.server.to_string() + ": " + ec.message()};
    }
    if (secure_) {
      done = false;
      secure_->async_handshake(ssl::stream_base::client, [&](beast::error_code e) {
        ec = e;
        done = true;
      });
      if (!run_until(ioc_, done, options_.timeout, [&] { shut(); })) {
        close();
        return {errc::io_error, "TLS handshake with " + options_.server.to_string() + " timed out"};
      }
      if (ec) {
        close();
        return {errc::io_error, "TLS handshake with " + options_.server.to_string() + ": " +
                                    ec.message()};
      }
    }
    buffer_.clear();
    ++opened_;
    return {};
  }

  bool is_open() const { return plain_ || secure_; }

  // Closes the socket, so that its pending operations end (operation_aborted), but keeps the
  // stream objects: those operations' handlers still use them until run_until has drained them.
  void shut() {
    beast::error_code ignored;
    if (plain_)
      plain_->socket().close(ignored);
    if (secure_)
      beast::get_lowest_layer(*secure_).socket().close(ignored);
  }

  // Shuts and drops the streams; only once no operation on them is pending.
  void close() {
    shut();
    plain_.reset();
    secure_.reset();
  }

  void cancel() {
    beast::error_code ignored;
    if (plain_)
      plain_->socket().cancel(ignored);
    if (secure_)
      beast::get_lowest_layer(*secure_).socket().cancel(ignored);
  }

  // Calls f(stream) with the open stream, whichever kind it is.
  template <class F>
  auto with_stream(F&& f) {
    if (secure_)
      return f(*secure_);
    return f(*plain_);
  }

  net::io_context& ioc_;
  ssl::context& ctx_;
  const client_options& options_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure_;
  beast::flat_buffer buffer_;
  int opened_ = 0;
};

ssl::context make_tls_context(const client_options& o) {
  ssl::context ctx{ssl::context::tls_client};
  if (!o.server.tls)
    return ctx;
  if (o.insecure_skip_verify) {
    ctx.set_verify_mode(ssl::verify_none);
    return ctx;
  }
  beast::error_code ec;
  if (!o.ca_file.empty())
    ctx.load_verify_file(o.ca_file, ec);
  else
    ctx.set_default_verify_paths(ec);
  // A CA file that cannot be loaded surfaces at the handshake as a verification failure.
  ctx.set_verify_mode(ssl::verify_peer);
  return ctx;
}

} // namespace

// ---------------------------------------------------------------------------------------------

struct http_client::impl {
  explicit impl(client_options o)
    : options(std::move(o)), ctx(make_tls_context(options)), conn(ioc, ctx, options) {}

  result<client_response> exchange(const client_request& r) {
    auto req = make_request(r, options);
    bool done = false;
    beast::error_code ec;
    http::response_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    conn.with_stream([&](auto& s) {
      http::async_write(s, req, [&](beast::error_code wec, std::size_t) {
        if (wec) {
          ec = wec;
          done = true;
          return;
        }
        http::async_read(s, conn.buffer_, parser, [&](beast::error_code rec, std::size_t) {
          ec = rec;
          done = true;
        });
      });
    });
    if (!run_until(ioc, done, options.timeout, [&] { conn.shut(); })) {
      conn.close();
      return status{errc::io_error, r.method + " " + r.target + ": no answer within " +
                                        std::to_string(options.timeout.count()) + " ms"};
    }
    if (ec) {
      conn.close();
      return status{errc::unavailable, r.method + " " + r.target + ": " + ec.message()};
    }
    auto m = parser.release();
    client_response out;
    out.status = static_cast<int>(m.result_int());
    out.body = std::move(m.body());
    out.headers = header_map(m.base());
    if (!m.keep_alive())
      conn.close();
    return out;
  }

  result<client_response> send(const client_request& r) {
    // A kept-alive connection the server closed in the meantime fails on first use: reconnect
    // once. A fresh connection that fails is an answer.
    for (int attempt = 0; attempt < 2; ++attempt) {
      bool fresh = !conn.is_open();
      if (fresh)
        if (auto s = conn.open(); !s.ok())
          return s;
      auto res = exchange(r);
      if (res.ok() || fresh || res.error().code() != errc::unavailable)
        return res;
    }
    return status{errc::unavailable, r.method + " " + r.target + ": the connection broke"};
  }

  client_options options;
  net::io_context ioc;
  ssl::context ctx;
  connection conn;
};

http_client::http_client(client_options options)
  : impl_(std::make_unique<impl>(std::move(options))) {}
http_client::~http_client() = default;

result<client_response> http_client::send(const client_request& request) {
  return impl_->send(request);
}

int http_client::connections_opened() const {
  return impl_->conn.opened_;
}

const client_options& http_client::options() const {
  return impl_->options;
}

// ---------------------------------------------------------------------------------------------

struct watch_stream::impl {
  explicit impl(client_options o)
    : options(std::move(o)), ctx(make_tls_context(options)), conn(ioc, ctx, options) {}

  phalanx::status begin(const client_request& r) {
    if (auto s = conn.open(); !s.ok())
      return s;
    auto req = make_request(r, options);
    bool done = false;
    beast::error_code ec;
    parser.body_limit(boost::none);
    conn.with_stream([&](auto& s) {
      http::async_write(s, req, [&](beast::error_code wec, std::size_t) {
        if (wec) {
          ec = wec;
          done = true;
          return;
        }
        http::async_read_header(s, conn.buffer_, parser, [&](beast::error_code rec, std::size_t) {
          ec = rec;
          done = true;
        });
      });
    });
    if (!run_until(ioc, done, options.timeout, [&] { conn.shut(); }))
      return {errc::io_error, "watch " + r.target + ": no answer within " +
                                  std::to_string(options.timeout.count()) + " ms"};
    if (ec)
      return {errc::unavailable, "watch " + r.target + ": " + ec.message()};
    status_code = static_cast<int>(parser.get().result_int());
    headers = header_map(parser.get().base());
    chunk_cb = [this](std::uint64_t, beast::string_view body, beast::error_code&) {
      pending.append(body.data(), body.size());
      return body.size();
    };
    parser.on_chunk_body(chunk_cb);
    if (!parser.chunked())
      read_plain_body();
    return {};
  }

  // An error answer carries a Status body with a Content-Length: read it whole.
  void read_plain_body() {
    bool done = false;
    beast::error_code ec;
    conn.with_stream([&](auto& s) {
      http::async_read(s, conn.buffer_, parser, [&](beast::error_code rec, std::size_t) {
        ec = rec;
        done = true;
      });
    });
    run_until(ioc, done, options.timeout, [&] { conn.shut(); });
    failed = true;
  }

  std::optional<std::string> next(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      auto nl = pending.find('\n');
      if (nl != std::string::npos) {
        std::string line = pending.substr(0, nl);
        pending.erase(0, nl + 1);
        return line;
      }
      if (parser.is_done() || failed || !conn.is_open())
        return std::nullopt;
      bool done = false;
      beast::error_code ec;
      conn.with_stream([&](auto& s) {
        http::async_read_some(s, conn.buffer_, parser, [&](beast::error_code rec, std::size_t) {
          ec = rec;
          done = true;
        });
      });
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() < 0)
        left = std::chrono::milliseconds(0);
      // A timeout here only means no event yet: cancel the read but keep the connection.
      if (!run_until(ioc, done, left, [&] { conn.cancel(); }))
        return std::nullopt;
      if (ec && ec != net::error::operation_aborted) {
        failed = true;
        if (pending.find('\n') == std::string::npos)
          return std::nullopt;
      } else if (ec) {
        return std::nullopt;
      }
    }
  }

  client_options options;
  net::io_context ioc;
  ssl::context ctx;
  connection conn;
  http::response_parser<http::string_body> parser;
  // The parser keeps a reference to its chunk callback.
  std::function<std::size_t(std::uint64_t, beast::string_view, beast::error_code&)> chunk_cb;
  std::string pending;
  int status_code = 0;
  std::map<std::string, std::string> headers;
  bool failed = false;
};

result<std::unique_ptr<watch_stream>> watch_stream::open(const client_options& options,
                                                         const client_request& request) {
  auto p = std::make_unique<impl>(options);
  if (auto s = p->begin(request); !s.ok())
    return s;
  return std::unique_ptr<watch_stream>(new watch_stream(std::move(p)));
}

watch_stream::watch_stream(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

watch_stream::~watch_stream() {
  close();
}

int watch_stream::status() const {
  return impl_->status_code;
}

std::string watch_stream::header(const std::string& lowercase_name) const {
  auto it = impl_->headers.find(lowercase_name);
  return it == impl_->headers.end() ? std::string() : it->second;
}

std::optional<std::string> watch_stream::next_line(std::chrono::milliseconds timeout) {
  return impl_->next(timeout);
}

bool watch_stream::ended() const {
  return impl_->parser.is_done() || impl_->failed || !impl_->conn.is_open();
}

bool watch_stream::ended_cleanly() const {
  return impl_->parser.is_done() && impl_->parser.chunked();
}

std::string watch_stream::body() const {
  return impl_->parser.get().body();
}

void watch_stream::close() {
  impl_->conn.close();
}

} // namespace phalanx::api
