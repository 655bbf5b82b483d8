#pragma once

// Helpers for the API tests: a blocking HTTP(S) client over loopback, a raw TCP connection for
// misbehaving clients, a watch stream reader, self-signed certificates, temp files. Beast stays in
// test_util.cpp.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::api::test {

struct response {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // Lowercase names.
  /// The header's value or "".
  std::string header(const std::string& lowercase_name) const;
};

struct request {
  std::string method = "GET";
  std::string target = "/";
  std::string body;
  std::string content_type;
  std::string accept;
  std::string token;  // Sent as "Authorization: Bearer <token>" when not empty.
  std::vector<std::pair<std::string, std::string>> headers;
};

struct tls_client_options {
  bool enabled = false;
  std::string ca_file;  // The server's certificate, trusted; empty: no verification.
};

/// One keep-alive connection; send() reconnects when the server closed it.
class client {
 public:
  explicit client(uint16_t port, tls_client_options tls = {});
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Sends and reads the answer. Throws std::runtime_error on a transport error.
  response send(const request& r);
  /// How many TCP connections it opened so far.
  int connections_opened() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// One request on a fresh connection.
response call(uint16_t port, const request& r, tls_client_options tls = {});
response get(uint16_t port, const std::string& target, const std::string& accept = "");

/// A raw TCP connection: write bytes, read what comes back.
class raw_connection {
 public:
  explicit raw_connection(uint16_t port);
  ~raw_connection();
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  /// Writes; false when the peer closed or reset the connection.
  bool write(const std::string& bytes);
  /// Reads until the peer closes or `timeout` passes; returns what arrived.
  std::string read_until_close(std::chrono::milliseconds timeout);
  /// Reads one HTTP response (status, headers, body by Content-Length or chunked).
  std::optional<response> read_response(std::chrono::milliseconds timeout);
  /// True when the peer closed the connection within `timeout` (or an earlier read saw it
  /// close); false when it is still open after `timeout`.
  bool closed_within(std::chrono::milliseconds timeout);

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// A watch stream: sends the request and reads newline-delimited events.
class watch_stream {
 public:
  watch_stream(uint16_t port, const request& r, tls_client_options tls = {});
  ~watch_stream();
  watch_stream(const watch_stream&) = delete;
  watch_stream& operator=(const watch_stream&) = delete;

  int status() const;
  std::string header(const std::string& lowercase_name) const;
  /// The next line (without "\n"), or nullopt when the stream ended or `timeout` passed.
  std::optional<std::string> next_line(std::chrono::milliseconds timeout);
  /// True once the final (zero-length) chunk arrived: the server ended the stream cleanly.
  bool ended_cleanly() const;
  /// Closes the client side.
  void close();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// A temporary directory, removed (recursively) on destruction.
class temp_dir {
 public:
  temp_dir();
  ~temp_dir();
  const std::string& path() const { return path_; }
  /// Writes a file in it; returns its path.
  std::string write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

/// A self-signed certificate for 127.0.0.1 and localhost, and its key, as PEM files in `dir`.
struct cert_files {
  std::string cert;
  std::string key;
};
cert_files make_self_signed_cert(const temp_dir& dir);

/// The contents of a file (throws when it cannot be read).
std::string read_file(const std::string& path);

/// Runs a command with a time limit; returns the exit code (or -1) and what it printed on
/// stdout and stderr.
struct command_result {
  int exit_code = -1;
  std::string out;
  std::string err;
};
command_result run_command(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                           const std::map<std::string, std::string>& env = {});

} // namespace phalanx::api::test
