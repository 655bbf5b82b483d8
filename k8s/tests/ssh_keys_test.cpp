// The ssh plugin's key pair (k8s/ssh_keys.hpp), read back with OpenSSL: the public key line is
// the private key's public half in OpenSSH's wire form.

#include "k8s/ssh_keys.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace phalanx::k8s {
namespace {

std::optional<std::string> unbase64(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  std::string out(text.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0)
    return std::nullopt;
  out.resize(static_cast<std::size_t>(n));
  for (auto pad = text.rbegin(); pad != text.rend() && *pad == '='; ++pad)
    out.pop_back();
  return out;
}

// Reads one SSH wire string (a 32-bit big-endian length, then the bytes) from `in` at `at`.
std::optional<std::string> read_string(const std::string& in, std::size_t& at) {
  if (in.size() - at < 4)
    return std::nullopt;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n = (n << 8) | static_cast<unsigned char>(in[at + static_cast<std::size_t>(i)]);
  at += 4;
  if (in.size() - at < n)
    return std::nullopt;
  auto out = in.substr(at, n);
  at += n;
  return out;
}

struct bn_free {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
using bignum = std::unique_ptr<BIGNUM, bn_free>;

bignum from_mpint(const std::string& bytes) {
  return bignum(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()), nullptr));
}

bignum param_of(EVP_PKEY* key, const char* name) {
  BIGNUM* out = nullptr;
  EVP_PKEY_get_bn_param(key, name, &out);
  return bignum(out);
}

TEST(SshKeys, AGeneratedPairIsAPkcs1PrivateKeyAndItsOpenSshPublicKey) {
  auto pair = generate_ssh_key_pair();
  ASSERT_TRUE(pair.ok()) << pair.error().to_string();
  EXPECT_EQ(pair->private_key.rfind("-----BEGIN RSA PRIVATE KEY-----\n", 0), 0u)
      << pair->private_key;
  EXPECT_NE(pair->private_key.find("-----END RSA PRIVATE KEY-----\n"), std::string::npos);

  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pair->private_key.data(), static_cast<int>(pair->private_key.size())),
      &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  ASSERT_TRUE(key) << "the private key does not parse";
  EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 2048);

  // "ssh-rsa <base64>\n", the base64 of string "ssh-rsa", mpint e, mpint n.
  const auto& line = pair->public_key;
  ASSERT_EQ(line.rfind("ssh-rsa ", 0), 0u) << line;
  ASSERT_EQ(line.back(), '\n');
  auto wire = unbase64(std::string_view(line).substr(8, line.size() - 9));
  ASSERT_TRUE(wire.has_value()) << line;
  std::size_t at = 0;
  auto type = read_string(*wire, at);
  auto e = read_string(*wire, at);
  auto n = read_string(*wire, at);
  ASSERT_TRUE(type && e && n) << line;
  EXPECT_EQ(at, wire->size());
  EXPECT_EQ(*type, "ssh-rsa");
  // An mpint of a positive number whose top bit is set starts with a zero byte: the modulus
  // of a 2048-bit key always does.
  ASSERT_EQ(n->size(), 257u);
  EXPECT_EQ((*n)[0], '\0');
  EXPECT_EQ(BN_cmp(from_mpint(*n).get(), param_of(key.get(), OSSL_PKEY_PARAM_RSA_N).get()), 0);
  EXPECT_EQ(BN_cmp(from_mpint(*e).get(), param_of(key.get(), OSSL_PKEY_PARAM_RSA_E).get()), 0);
  EXPECT_EQ(*e, std::string("\x01\x00\x01", 3));  // 65537, OpenSSL's and Go's exponent.

  auto other = generate_ssh_key_pair();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->private_key, pair->private_key);
}

TEST(SshKeys, GivenKeysAreUsedAsTheyAre) {
  scheduler::ssh_plugin_settings given;
  given.private_key = "-----BEGIN RSA PRIVATE KEY-----\nmine\n-----END RSA PRIVATE KEY-----";
  given.public_key = "ssh-rsa AAAAmine";
  auto pair = ssh_key_pair_for(given);
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(*pair, (ssh_key_pair{given.private_key, given.public_key}));

  // Without a private key (a public one alone, as Volcano reads it) a pair is generated.
  scheduler::ssh_plugin_settings public_only;
  public_only.public_key = "ssh-rsa AAAAmine";
  auto generated = ssh_key_pair_for(public_only);
  ASSERT_TRUE(generated.ok());
  EXPECT_NE(generated->public_key, public_only.public_key);
  EXPECT_EQ(generated->public_key.rfind("ssh-rsa AAAA", 0), 0u);
}

TEST(SshKeys, Base64IsTheStandardAlphabetWithPadding) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode(std::string("\xfb\xff", 2)), "+/8=");
}

} // namespace
} // namespace phalanx::k8s
