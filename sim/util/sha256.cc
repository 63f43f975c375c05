#include "sim/util/sha256.h"

#include <openssl/evp.h>

#include "sim/util/error.h"

namespace clustersim {

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  CHECK(context_ != nullptr && EVP_DigestInit_ex(context_, EVP_sha256(), nullptr) == 1,
        "SHA-256: OpenSSL could not start a digest");
}

Sha256::~Sha256() { EVP_MD_CTX_free(context_); }

void Sha256::Update(const void* data, size_t size) {
  CHECK(EVP_DigestUpdate(context_, data, size) == 1, "SHA-256: OpenSSL digest update failed");
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  CHECK(EVP_DigestFinal_ex(context_, digest, &size) == 1 && size == 32,
        "SHA-256: OpenSSL digest failed");
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.HexDigest();
}

}  // namespace clustersim
