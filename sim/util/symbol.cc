#include "sim/util/symbol.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <ostream>
#include <unordered_map>

#include "sim/util/error.h"

namespace clustersim {
namespace {

// Strings live in fixed-size chunks that never move, so a published id can be read without the
// lock while other threads intern new strings.
class Pool {
 public:
  static constexpr uint32_t kChunkBits = 16;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = 1u << 14;  // 2^30 distinct strings

  Pool() { Intern(""); }

  uint32_t Intern(std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = index_.find(text); it != index_.end()) return it->second;
    const uint32_t id = size_;
    const uint32_t chunk = id >> kChunkBits;
    CHECK(chunk < kMaxChunks, "too many distinct strings");
    if (!chunks_[chunk]) chunks_[chunk] = std::make_unique<std::string[]>(kChunkSize);
    std::string& slot = chunks_[chunk][id & (kChunkSize - 1)];
    slot.assign(text);
    index_.emplace(std::string_view(slot), id);
    size_ = id + 1;
    return id;
  }

  const std::string& Get(uint32_t id) const {
    return chunks_[id >> kChunkBits][id & (kChunkSize - 1)];
  }

 private:
  std::mutex mutex_;
  std::array<std::unique_ptr<std::string[]>, kMaxChunks> chunks_;
  std::unordered_map<std::string_view, uint32_t> index_;
  uint32_t size_ = 0;
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: symbols may be read during shutdown
  return *pool;
}

}  // namespace

Symbol::Symbol(std::string_view text) : id_(text.empty() ? 0 : ThePool().Intern(text)) {}

const std::string& Symbol::str() const { return ThePool().Get(id_); }

std::ostream& operator<<(std::ostream& out, Symbol s) { return out << s.str(); }

}  // namespace clustersim
