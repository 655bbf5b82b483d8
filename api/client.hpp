#pragma once

// A blocking HTTP/1.1 client for phalanxd's API, over plain TCP or TLS, with keep-alive. One
// implementation serves phalanxctl, the load tester, the demo and the tests, so every client of
// the API speaks it the same way. Beast stays inside client.cpp.
//
// Not thread-safe: one http_client or watch_stream per thread.

#include "scheduler/result.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace phalanx::api {

/// Where the server listens, parsed from "http://HOST:PORT" or "https://HOST:PORT" (a bare
/// "HOST:PORT" means http; the port defaults to 80 or 443).
struct server_address {
  bool tls = false;
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  /// "http://127.0.0.1:8080".
  std::string to_string() const;
};

/// Parses a server URL; the error names the part that is wrong.
result<server_address> parse_server_address(const std::string& url);

struct client_options {
  server_address server;
  /// Sent as "Authorization: Bearer <token>" when not empty.
  std::string token;
  /// TLS: a PEM file of certificates to trust. Empty: the system's trust store.
  std::string ca_file;
  /// TLS: skip certificate verification (tests with self-signed certificates). Default: false.
  bool insecure_skip_verify = false;
  /// Connect, send and receive must each finish within this. Default: 30 s.
  std::chrono::milliseconds timeout{30000};
  /// The largest response body accepted. Default: 256 MiB (a list of every pod of a big cluster).
  std::size_t max_body_bytes = std::size_t(256) << 20;
  std::string user_agent = "phalanx-client";
};

struct client_request {
  std::string method = "GET";
  std::string target = "/";
  std::string body;
  std::string content_type;
  std::string accept;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct client_response {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // Lowercase names.
  /// The header's value or "".
  std::string header(const std::string& lowercase_name) const;
};

/// One keep-alive connection, opened on first use and reopened (once per request) when the server
/// closed it.
class http_client {
 public:
  explicit http_client(client_options options);
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// Sends and reads the answer. Any HTTP status is a value; an error means the exchange failed
  /// (unavailable: cannot connect or the connection broke; io_error: timeout or TLS failure).
  result<client_response> send(const client_request& request);

  /// TCP connections opened so far.
  int connections_opened() const;

  const client_options& options() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// A watch (`?watch=1`): sends the request on its own connection and reads newline-delimited
/// events from the chunked answer.
class watch_stream {
 public:
  /// Connects and reads the answer's header; an error when that fails.
  static result<std::unique_ptr<watch_stream>> open(const client_options& options,
                                                    const client_request& request);
  ~watch_stream();
  watch_stream(const watch_stream&) = delete;
  watch_stream& operator=(const watch_stream&) = delete;

  int status() const;
  std::string header(const std::string& lowercase_name) const;
  /// The next line (without "\n"), or nullopt when the stream ended, failed or `timeout` passed
  /// (ended() tells which).
  std::optional<std::string> next_line(std::chrono::milliseconds timeout);
  /// True once the stream is over: the server ended it (ended_cleanly) or the connection failed.
  bool ended() const;
  /// True once the final (zero-length) chunk arrived: the server ended the stream cleanly.
  bool ended_cleanly() const;
  /// A non-chunked answer (an error Status) has its body here.
  std::string body() const;
  /// Closes the client side.
  void close();

  struct impl;

 private:
  explicit watch_stream(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace phalanx::api
