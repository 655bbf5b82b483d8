#pragma once

// The key pair of a Volcano job's ssh plugin (scheduler/job_plugins.hpp), as Volcano's
// generateRsaKey makes it: an RSA 2048 key, its private half PEM "RSA PRIVATE KEY" (PKCS#1, as
// Go's x509.MarshalPKCS1PrivateKey), its public half one OpenSSH authorized_keys line (as
// golang.org/x/crypto/ssh MarshalAuthorizedKey writes it: "ssh-rsa <base64>\n", the base64 of the
// wire form: string "ssh-rsa", mpint e, mpint n).
//
// Thread-safe (OpenSSL 3's default library context and random generator are).

#include "scheduler/job_plugins.hpp"
#include "scheduler/result.hpp"

#include <string>
#include <string_view>

namespace phalanx::k8s {

struct ssh_key_pair {
  std::string private_key;  // PEM.
  std::string public_key;   // An authorized_keys line, with its newline when generated.
  friend bool operator==(const ssh_key_pair&, const ssh_key_pair&) = default;
};

/// A new RSA 2048 key pair. Errors: internal with OpenSSL's reason when a step fails.
[[nodiscard]] result<ssh_key_pair> generate_ssh_key_pair();

/// The key pair of a job's ssh plugin: --ssh-private-key and --ssh-public-key as given when the
/// private key is given (not checked, as Volcano does not check them; the public key may be
/// empty), else generate_ssh_key_pair()'s. Errors: generate_ssh_key_pair's.
[[nodiscard]] result<ssh_key_pair> ssh_key_pair_for(const scheduler::ssh_plugin_settings& ssh);

/// Standard base64 with padding (RFC 4648 section 4), as Go's base64.StdEncoding writes it and
/// as a Secret's data holds its values.
std::string base64_encode(std::string_view bytes);

} // namespace phalanx::k8s
