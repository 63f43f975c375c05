// SHA-256 (FIPS 180-4) of strings and streams, for the `runs` table's input hashes.
#ifndef CLUSTERSIM_SIM_UTIL_SHA256_H_
#define CLUSTERSIM_SIM_UTIL_SHA256_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace clustersim {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // Returns the lowercase hex digest. The object must not be updated afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* block);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string Sha256Hex(std::string_view data);
// Files: Sha256OfContent in sim/util/input_file.h.

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_SHA256_H_
