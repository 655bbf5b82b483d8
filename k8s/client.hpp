#pragma once

// The Kubernetes REST client: a pool of keep-alive connections (api::http_client) behind a
// token-bucket rate limiter, with a bearer token that follows its file as it rotates, and watch
// streams on connections of their own. Requests are never retried here: the caller knows whether
// a request may be repeated (a Binding may, a create without a name may not) and how long it can
// wait, so is_retryable() and retry_after() classify an answer and the caller decides.
//
// Thread model: client is thread-safe; any number of threads may call request() at once (at most
// `connections` are in flight, the others wait for a connection). A watch is owned by one thread.
//
// Rate limiting, as client-go's flowcontrol token bucket: `qps` tokens per second, at most
// `burst` saved up. A request takes a token and waits until the token is due; waiting callers are
// served in arrival order. request_spec::bypass_rate_limit skips the limiter for requests whose
// delay breaks a promise (Lease renewals: a renewal queued behind a burst of bindings could cost
// the lease, DESIGN.md invariant I6). Watches are not rate limited (client-go's are, but a watch is
// one request that lasts minutes, and the reflector backs off on its own).

#include "k8s/config.hpp"

#include "api/client.hpp"
#include "scheduler/result.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace phalanx::k8s {

/// One REST call.
struct request_spec {
  /// Default: "GET".
  std::string method = "GET";
  /// Path and query, starting with '/': "/api/v1/namespaces/default/pods?limit=500".
  /// Default: empty (required).
  std::string target;
  /// Default: empty.
  std::string body;
  /// The body's Content-Type: "application/json", "application/merge-patch+json",
  /// "application/strategic-merge-patch+json"... Default: empty, which sends
  /// "application/json" when the body is not empty.
  std::string content_type;
  /// Skip the rate limiter (see the file comment): Lease renewals and releases.
  /// Default: false.
  bool bypass_rate_limit = false;
};

/// Counters since the client was made; each is read atomically on its own.
struct client_metrics {
  /// request() calls that reached the server and got an answer, of any status.
  uint64_t responses = 0;
  /// request() calls whose exchange failed (cannot connect, connection broken, timeout).
  uint64_t transport_errors = 0;
  /// Answers 429 Too Many Requests.
  uint64_t throttled = 0;
  /// Answers 5xx.
  uint64_t server_errors = 0;
  /// Requests that had to wait for a rate-limiter token, and the total time they waited.
  uint64_t limiter_waits = 0;
  std::chrono::nanoseconds limiter_wait_time{0};
  /// Watches opened (any status).
  uint64_t watches_opened = 0;
  /// Times the token file was (re)read.
  uint64_t token_reads = 0;
};

/// A token bucket as client-go's flowcontrol.NewTokenBucketRateLimiter (golang.org/x/time/rate):
/// `qps` tokens per second, at most `burst` kept. A token is taken ahead of time when none is
/// left: the bucket goes negative and the caller waits until its token is due, so callers that
/// arrive together are spread `1/qps` apart in arrival order.
///
/// Not thread-safe: the client guards it with a mutex.
class token_bucket {
 public:
  using clock = std::chrono::steady_clock;

  /// qps <= 0: unlimited (take() never waits). burst < 1 counts as 1. Starts full.
  token_bucket(double qps, int burst, clock::time_point now);

  /// Takes one token at `now`; returns how long the caller must wait before it may send (zero
  /// when a token was there). `now` must not go backwards between calls.
  clock::duration take(clock::time_point now);

  /// The tokens the bucket would hold at `now` (negative while callers wait for theirs).
  double tokens(clock::time_point now) const;

 private:
  double qps_;
  double burst_;
  double tokens_;
  clock::time_point last_;
};

/// The bearer token: fixed, or read from a file and read again when the file changes (its inode,
/// size or modification time; an atomic rename or the kubelet's symlink swap both change them)
/// or after invalidate(). A file that cannot be read keeps the last token that could.
///
/// Thread-safe.
class bearer_token_source {
 public:
  /// `token_file` empty: `token` always. Otherwise the file, trimmed of surrounding whitespace.
  bearer_token_source(std::string token, std::string token_file);

  /// The token to send now ("" for none). Error (not_found) only when the file has never been
  /// readable; the message names the file.
  result<std::string> current();

  /// Makes the next current() read the file even if it looks unchanged (after a 401: a file
  /// rewritten within the file system's timestamp granularity and with the same size).
  void invalidate();

  /// Times the file was read.
  uint64_t reads() const;

 private:
  struct file_stamp {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = -1;
    int64_t mtime_ns = -1;
    friend bool operator==(const file_stamp&, const file_stamp&) = default;
  };

  const std::string fixed_;
  const std::string file_;
  mutable std::mutex mutex_;
  std::string token_;
  bool have_token_ = false;
  file_stamp stamp_;
  bool force_ = false;
  std::atomic<uint64_t> reads_{0};
};

/// What watch::next_line() found.
enum class watch_read {
  line,    // A line arrived (an event as JSON).
  idle,    // The timeout passed with no complete line; the stream is still open.
  ended,   // The server ended the stream cleanly (timeoutSeconds passed, or it closed).
  broken,  // The connection failed; open a new watch.
};
std::string_view to_string(watch_read r) noexcept;

/// One watch request's stream of newline-delimited events, on a connection of its own. Made by
/// client::open_watch.
///
/// Not thread-safe: owned by one thread.
class watch {
 public:
  explicit watch(std::unique_ptr<api::watch_stream> stream);
  ~watch();
  watch(const watch&) = delete;
  watch& operator=(const watch&) = delete;

  /// The answer's HTTP status: 200 for a stream; otherwise the stream is over and body() holds
  /// the apiserver's Status (410 Expired, 403 Forbidden...).
  int http_status() const;
  /// The body of a non-200 answer.
  std::string body() const;

  /// Waits at most `timeout` for the next line and stores it in `line` (without the newline).
  watch_read next_line(std::string& line, std::chrono::milliseconds timeout);

  /// Closes the connection; later reads give `broken`.
  void close();

 private:
  std::unique_ptr<api::watch_stream> stream_;
};

/// The client. Make it with create(); it is neither copied nor moved (threads hold references).
class client {
 public:
  /// Checks the config (server URL, CA) and prepares the pool; connects lazily.
  /// Errors: invalid_argument for a bad server URL or a non-positive `connections` or timeout;
  /// io_error when the inline CA cannot be written to a temporary file; not_found when the token
  /// file has never been readable.
  static result<std::unique_ptr<client>> create(connection_config config);

  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Sends one request on a pooled connection after the rate limiter lets it (unless bypassed).
  /// Any HTTP status is a value (check `status`, or use status_of()); an error means the exchange
  /// failed: unavailable (cannot connect, connection broken), io_error (timeout, TLS), or
  /// invalid_argument for a target that does not start with '/'. A 401 answer makes the token
  /// file be read again before the next request.
  result<api::client_response> request(const request_spec& spec);

  /// Opens a watch (`target` holds `watch=1` and the rest of the query) on a new connection, not
  /// rate limited. Any HTTP status is a value (see watch::http_status); an error means the
  /// connection or the answer's header failed within the timeout.
  result<std::unique_ptr<watch>> open_watch(const std::string& target);

  /// The config as given (ca_file names the temporary file when ca_pem was inline).
  const connection_config& config() const;

  client_metrics metrics() const;

 private:
  explicit client(connection_config config);

  std::unique_ptr<api::http_client> acquire();
  void release(std::unique_ptr<api::http_client> c);
  api::client_options options() const;

  connection_config config_;
  std::string temp_ca_file_;  // Removed by the destructor.
  bearer_token_source token_;

  std::mutex pool_mutex_;
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<api::http_client>> idle_;
  int created_ = 0;

  std::mutex limiter_mutex_;
  token_bucket limiter_;

  std::atomic<uint64_t> responses_{0};
  std::atomic<uint64_t> transport_errors_{0};
  std::atomic<uint64_t> throttled_{0};
  std::atomic<uint64_t> server_errors_{0};
  std::atomic<uint64_t> limiter_waits_{0};
  std::atomic<int64_t> limiter_wait_ns_{0};
  std::atomic<uint64_t> watches_opened_{0};
};

/// True when repeating the request later may succeed: the exchange failed (cannot connect,
/// broken, timed out), or the answer is 429 Too Many Requests or 5xx. Everything else is the
/// server's final word (4xx).
bool is_retryable(const result<api::client_response>& r);

/// The answer's Retry-After in seconds (the apiserver sends integers with 429 and some 5xx);
/// nullopt when absent, not a number, or the exchange failed.
std::optional<std::chrono::seconds> retry_after(const result<api::client_response>& r);

/// A non-2xx answer as a status, with the apiserver's Status message:
/// `what: HTTP 403 Forbidden: pods is forbidden: User "system:serviceaccount:ns:sa" cannot ...`.
/// Codes as api::errc_of maps Status reasons: 400/422 invalid_argument, 401/403 unauthenticated,
/// 404 not_found, 409 already_exists (reason AlreadyExists) or conflict, 410 failed_precondition,
/// 413 too_large, 429 and 5xx unavailable (retry later). A 2xx answer gives ok.
status status_of(const api::client_response& response, std::string_view what);

/// A call the apiserver's authorizer (RBAC) refused: the rule a (Cluster)Role would need.
struct denied_call {
  std::string verb;       // "create", "update", "list", ...
  std::string resource;   // With its subresource: "pods/binding", "queues/status".
  std::string api_group;  // "" for the core group.
  std::string namespace_name;  // "" when refused at the cluster scope.
};

/// Reads what RBAC refused from a failure's text (a status_of() message, or a bind outcome's):
/// a 403 whose apiserver message says `... cannot VERB resource "RESOURCE" in API group "GROUP"`
/// with `in the namespace "NS"` or `at the cluster scope`. nullopt for anything else (another
/// code, a 403 without that sentence: a webhook's own words).
std::optional<denied_call> denied_call_of(std::string_view failure);

} // namespace phalanx::k8s
