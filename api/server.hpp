#pragma once

// The HTTP API server (DESIGN.md section 2), on Boost.Beast. This header does not include Beast:
// everything Beast lives in server.cpp and http_framing.cpp.
//
// - HTTP/1.1 with keep-alive; optional TLS (a certificate chain and a key, PEM files).
// - Kubernetes paths (handler.hpp): /api/v1/..., /apis/scheduling.volcano.sh/v1beta1/...,
//   /apis/batch.volcano.sh/v1alpha1/..., discovery, /version, /healthz, /livez, /readyz,
//   /metrics. Watches (?watch=1) stream chunked newline-delimited JSON events.
// - Request framing (http_framing.hpp): a request whose body length could be read two ways
//   (Content-Length with Transfer-Encoding, two Content-Lengths, a final coding other than
//   chunked, obs-fold...) is answered 400 (413 for a body beyond max_body_bytes) with
//   Connection: close, and the connection is closed: nothing it sent after the fault is read
//   as a request (no request smuggling).
// - Connections: at most max_connections at once. At the cap a new connection is not refused:
//   the connection idle the longest is closed to make room for it, idle meaning it has not
//   sent a complete request header (a new connection, one sending its header slowly) or waits
//   between requests (keep-alive). A connection with a request in progress (its body, the
//   service, the response) or a watch is never closed for a newcomer; only when every one is
//   such is the newcomer answered 503 and closed. A flood of connections that send nothing
//   therefore only closes its own oldest members, and real clients keep being served.
// - Timeouts: a new connection must send its first byte within first_byte_timeout, and its
//   header within header_timeout of that byte; a body must arrive within body_timeout (else
//   408 and close: slow clients cannot hold connections); an idle keep-alive connection closes
//   after idle_timeout; bodies beyond max_body_bytes get 413 as soon as the header says so
//   (Content-Length) or as soon as the limit is crossed (chunked), without reading the rest.
// - Probes under the cap: an optional second listener, probe_port, serves /healthz, /livez,
//   /readyz and /metrics only, with its own connection cap (max_probe_connections) and the
//   same eviction. A separate listener, not a slot reserved on the API port, because the
//   server cannot tell a probe from any other connection until its header has arrived: a
//   reserved slot is taken by whichever connection comes first, and the API port's accept
//   queue is the very thing a flood fills. On its own port the kubelet's probes and the
//   Prometheus scrape neither wait behind nor compete with API clients. Without probe_port,
//   probes reach the API port like any client; they are then answered at the cap as long as
//   some connection there is idle (always so under a flood of idle connections), but not when
//   every connection is busy.
// - Optional bearer-token auth: the token is read from a file at start; requests without it get
//   401 with WWW-Authenticate. /healthz, /livez and /readyz need no token (probes).
// - The server never blocks a thread on the service: service callbacks hop back to the
//   connection's strand; late callbacks after stop() are dropped.
// - Errors are Kubernetes Status bodies; errc -> HTTP codes are in errors.hpp. A watch that the
//   service ends with an error sends {"type":"ERROR","object":<Status>} first; a service ending
//   it with failed_precondition (a resourceVersion too old) is reported as 410 Expired, so
//   clients re-list as they do with Kubernetes.
//
// Metrics it records (in options.metrics, else its own registry), appended to /metrics:
//   phalanx_http_requests_total{verb,code}       counter
//   phalanx_http_request_duration_seconds{verb}  histogram (header read to response ready)
//   phalanx_http_open_connections                gauge
//   phalanx_http_idle_connections                gauge (open, no request in progress)
//   phalanx_http_rejected_connections_total      counter (503: max_connections, all busy)
//   phalanx_http_evicted_connections_total       counter (idle, closed for a newcomer)
//   phalanx_http_watches                         gauge (open watch streams)

#include "api/metrics.hpp"
#include "api/service.hpp"

#include "scheduler/result.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace phalanx::api {

struct server_options {
  /// The address to listen on. Default: loopback only.
  std::string address = "127.0.0.1";
  /// The port; 0 picks a free one (see server::port()). Default: 0.
  uint16_t port = 0;
  /// Threads running the I/O. Default: 2.
  unsigned threads = 2;
  /// Connections served at once. At the cap a newcomer takes the place of the connection idle
  /// the longest, which is closed; when none is idle, it gets 503 and is closed. Default: 1024.
  std::size_t max_connections = 1024;
  /// From a new connection's acceptance (its TLS handshake done) to its first byte.
  /// Default: 5 s.
  std::chrono::milliseconds first_byte_timeout{5'000};
  /// From a request's first byte to the end of its header (slowloris). Default: 10 s.
  std::chrono::milliseconds header_timeout{10'000};
  /// Reading a request's body. Default: 30 s.
  std::chrono::milliseconds body_timeout{30'000};
  /// A keep-alive connection waiting for its next request. Default: 120 s.
  std::chrono::milliseconds idle_timeout{120'000};
  /// Writing one response (not a watch stream). Default: 30 s.
  std::chrono::milliseconds write_timeout{30'000};
  /// Request bodies beyond this get 413. Default: 1 MiB.
  std::size_t max_body_bytes = std::size_t{1} << 20;
  /// Request headers beyond this get 400. Default: 64 KiB.
  std::size_t max_header_bytes = std::size_t{64} << 10;
  /// A second port that serves only /healthz, /livez, /readyz and /metrics (others: 404), on
  /// the same address, with the same TLS and token rules; 0 picks a free one (see
  /// server::probe_port()). Default: none.
  std::optional<uint16_t> probe_port;
  /// Connections the probe port serves at once, with the API port's eviction. Default: 32.
  std::size_t max_probe_connections = 32;
  /// A file holding the bearer token clients must send; empty: no authentication. Default: "".
  std::string token_file;
  /// PEM files for TLS; both or neither. Default: "" (plain HTTP).
  std::string tls_cert_file;
  std::string tls_key_file;
  /// Events queued for a watch client that reads too slowly; beyond, its watch ends (it re-lists
  /// as a Kubernetes client does). Default: 10,000.
  std::size_t watch_queue_limit = 10'000;
  /// How long stop() lets open responses and watch ends drain. Default: 2 s.
  std::chrono::milliseconds shutdown_grace{2'000};
  /// The clock for Table ages. Default: the system clock.
  std::function<scheduler::timestamp()> clock;
  /// Where the server records its metrics; not owned, must outlive the server. Default: null,
  /// the server keeps its own registry.
  metrics_registry* metrics = nullptr;
};

class server {
 public:
  /// Binds, listens and starts the threads. Errors: invalid_argument (options: a missing or
  /// empty token file, unreadable TLS files, zero threads), io_error (the address, or the probe
  /// port, cannot be bound). `svc` must outlive the server.
  static result<std::unique_ptr<server>> start(service& svc, server_options options);

  server(const server&) = delete;
  server& operator=(const server&) = delete;
  /// stop(), then frees everything.
  ~server();

  /// The port it listens on (the chosen one when options.port was 0).
  uint16_t port() const noexcept;
  /// "http://127.0.0.1:PORT" or "https://...".
  std::string url() const;
  /// The probe port (the chosen one when options.probe_port was 0); 0 without one.
  uint16_t probe_port() const noexcept;

  /// Stops accepting, ends watch streams cleanly (their last chunk), lets responses in flight
  /// finish within shutdown_grace, closes every connection and joins the threads. Idempotent;
  /// thread-safe; must not be called from a server thread.
  void stop();

  /// The registry it records into.
  metrics_registry& metrics() noexcept;

  struct impl;

 private:
  explicit server(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace phalanx::api
