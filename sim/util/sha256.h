// SHA-256 (FIPS 180-4) of strings and streams, for the `runs` table's input hashes: OpenSSL's
// libcrypto (EVP), which uses the CPU's SHA instructions where it has them.
#ifndef CLUSTERSIM_SIM_UTIL_SHA256_H_
#define CLUSTERSIM_SIM_UTIL_SHA256_H_

#include <cstddef>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace clustersim {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* data, size_t size);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Returns the lowercase hex digest. The object must not be updated afterwards.
  std::string HexDigest();

 private:
  evp_md_ctx_st* context_;
};

std::string Sha256Hex(std::string_view data);
// Files: Sha256OfContent in sim/util/input_file.h.

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_SHA256_H_
