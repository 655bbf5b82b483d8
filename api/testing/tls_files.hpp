#pragma once

// TLS material for tests of the server and its clients.

#include <string>

namespace phalanx::api::testing {

struct cert_paths {
  std::string cert;  // PEM certificate
  std::string key;   // PEM private key
};

/// Writes a self-signed certificate for 127.0.0.1 and localhost (a CA, valid for a day) and its
/// key as dir/tls.crt and dir/tls.key. Throws std::runtime_error when OpenSSL fails.
cert_paths write_self_signed_cert(const std::string& dir);

} // namespace phalanx::api::testing
