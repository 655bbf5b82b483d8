#include "api/testing/tls_files.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <stdexcept>

namespace phalanx::api::testing {

cert_paths write_self_signed_cert(const std::string& dir) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (key == nullptr)
    throw std::runtime_error("key generation failed");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, x, x, nullptr, nullptr, 0);
  X509_EXTENSION* san =
    X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
  if (san != nullptr) {
    X509_add_ext(x, san, -1);
    X509_EXTENSION_free(san);
  }
  X509_EXTENSION* bc = X509V3_EXT_conf_nid(nullptr, &v3, NID_basic_constraints, "critical,CA:TRUE");
  if (bc != nullptr) {
    X509_add_ext(x, bc, -1);
    X509_EXTENSION_free(bc);
  }
  X509_sign(x, key, EVP_sha256());
  cert_paths out{dir + "/tls.crt", dir + "/tls.key"};
  FILE* f = std::fopen(out.cert.c_str(), "wb");
  PEM_write_X509(f, x);
  std::fclose(f);
  f = std::fopen(out.key.c_str(), "wb");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

} // namespace phalanx::api::testing
