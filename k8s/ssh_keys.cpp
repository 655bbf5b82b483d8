#include "k8s/ssh_keys.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/encoder.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace phalanx::k8s {

namespace {

constexpr int rsa_bits = 2048;  // Volcano's bitSize.

struct pkey_ctx_free {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct pkey_free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct bn_free {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
struct bio_free {
  void operator()(BIO* p) const { BIO_free(p); }
};
struct encoder_free {
  void operator()(OSSL_ENCODER_CTX* p) const { OSSL_ENCODER_CTX_free(p); }
};

// What OpenSSL's error queue says of the step that failed, emptying it (the queue is per
// thread; a later call must not report this one's errors).
status openssl_error(std::string_view step) {
  std::string message(step);
  while (unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    message += ": ";
    message += text;
  }
  return status{errc::internal, message};
}

// SSH's wire form of a string (RFC 4251 section 5): a 32-bit big-endian length, then the bytes.
void append_string(std::string& out, std::string_view bytes) {
  const auto n = static_cast<uint32_t>(bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((n >> shift) & 0xff));
  out.append(bytes);
}

// SSH's mpint of a non-negative number: its big-endian bytes with a leading zero byte when the
// top bit is set (two's complement), none for zero.
void append_mpint(std::string& out, const BIGNUM& n) {
  std::string bytes(static_cast<std::size_t>(BN_num_bytes(&n)), '\0');
  BN_bn2bin(&n, reinterpret_cast<unsigned char*>(bytes.data()));
  if (!bytes.empty() && (static_cast<unsigned char>(bytes[0]) & 0x80) != 0)
    bytes.insert(bytes.begin(), '\0');
  append_string(out, bytes);
}

result<std::string> authorized_key_of(EVP_PKEY& key) {
  BIGNUM* raw_n = nullptr;
  BIGNUM* raw_e = nullptr;
  const bool have_n = EVP_PKEY_get_bn_param(&key, OSSL_PKEY_PARAM_RSA_N, &raw_n) == 1;
  std::unique_ptr<BIGNUM, bn_free> n(raw_n);
  const bool have_e = EVP_PKEY_get_bn_param(&key, OSSL_PKEY_PARAM_RSA_E, &raw_e) == 1;
  std::unique_ptr<BIGNUM, bn_free> e(raw_e);
  if (!have_n || !have_e)
    return openssl_error("RSA key's modulus or exponent not read");
  std::string wire;
  append_string(wire, "ssh-rsa");
  append_mpint(wire, *e);
  append_mpint(wire, *n);
  return "ssh-rsa " + base64_encode(wire) + "\n";
}

result<std::string> pkcs1_pem_of(EVP_PKEY& key) {
  // "type-specific" is PKCS#1 for RSA, which PEM heads "RSA PRIVATE KEY"; OpenSSL's default,
  // PKCS#8, would head it "PRIVATE KEY".
  std::unique_ptr<OSSL_ENCODER_CTX, encoder_free> encoder(OSSL_ENCODER_CTX_new_for_pkey(
      &key, EVP_PKEY_KEYPAIR, "PEM", "type-specific", nullptr));
  std::unique_ptr<BIO, bio_free> bio(BIO_new(BIO_s_mem()));
  if (!encoder || OSSL_ENCODER_CTX_get_num_encoders(encoder.get()) == 0 || !bio ||
      OSSL_ENCODER_to_bio(encoder.get(), bio.get()) != 1)
    return openssl_error("RSA private key not written as PKCS#1 PEM");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

} // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()),
                      static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

result<ssh_key_pair> generate_ssh_key_pair() {
  std::unique_ptr<EVP_PKEY_CTX, pkey_ctx_free> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), rsa_bits) != 1)
    return openssl_error("RSA key generation not set up");
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_generate(ctx.get(), &raw) != 1)
    return openssl_error("RSA key not generated");
  std::unique_ptr<EVP_PKEY, pkey_free> key(raw);
  auto pem = pkcs1_pem_of(*key);
  if (!pem)
    return pem.error();
  auto line = authorized_key_of(*key);
  if (!line)
    return line.error();
  return ssh_key_pair{std::move(*pem), std::move(*line)};
}

result<ssh_key_pair> ssh_key_pair_for(const scheduler::ssh_plugin_settings& ssh) {
  if (!ssh.private_key.empty())
    return ssh_key_pair{ssh.private_key, ssh.public_key};
  return generate_ssh_key_pair();
}

} // namespace phalanx::k8s
