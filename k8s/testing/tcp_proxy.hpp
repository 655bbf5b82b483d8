#pragma once

// A TCP forwarder on loopback for tests that need the network between a client and the
// apiserver to fail in ways the apiserver itself cannot: freeze() is a partition where packets
// vanish (connections stay open, nothing arrives, requests hang until their timeout), cut()
// closes every connection at once. TLS passes through untouched (the apiserver's certificate
// names 127.0.0.1).
//
// Thread-safety: every member is thread-safe; one thread of its own forwards.

#include "scheduler/result.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace phalanx::k8s::testing {

class tcp_proxy {
 public:
  /// Listens on 127.0.0.1 (a free port) and forwards each connection to `target_url`'s host and
  /// port ("https://127.0.0.1:6443"). Errors: invalid_argument for the URL, io_error when the
  /// socket cannot be made.
  static result<std::unique_ptr<tcp_proxy>> start(const std::string& target_url);

  /// Closes everything and joins the thread.
  ~tcp_proxy();
  tcp_proxy(const tcp_proxy&) = delete;
  tcp_proxy& operator=(const tcp_proxy&) = delete;

  uint16_t port() const { return port_; }
  /// The target's scheme with the proxy's address: "https://127.0.0.1:PORT".
  std::string url() const;

  /// Stops moving bytes either way; new connections are accepted and left hanging too.
  void freeze();
  /// Moves bytes again (what piled up goes through).
  void thaw();
  /// Closes every open connection (both sides); later connections are forwarded as usual.
  void cut();

  /// Connections accepted so far.
  int accepted() const { return accepted_.load(); }

 private:
  tcp_proxy() = default;
  void run();

  std::string scheme_;
  std::string target_host_;
  uint16_t target_port_ = 0;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> frozen_{false};
  std::atomic<int> cut_requests_{0};
  std::atomic<int> accepted_{0};
};

} // namespace phalanx::k8s::testing
