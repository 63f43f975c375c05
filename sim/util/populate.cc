#include "sim/util/populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace clustersim {
namespace {

#ifndef MADV_POPULATE_WRITE
constexpr int MADV_POPULATE_WRITE = 23;  // linux/mman.h since 5.14; glibc 2.36 names it
#endif

// madvise wants a page-aligned start: the range is widened to whole pages (they hold the
// caller's bytes too, or are mapped for the allocation that contains them).
bool Populate(void* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data) / page * page;
  const auto end = reinterpret_cast<uintptr_t>(data) + bytes;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
}

bool TwoCores() { return std::thread::hardware_concurrency() >= 2; }

}  // namespace

bool PopulateNow(void* data, size_t bytes) {
  if (data == nullptr || bytes < kPopulateMinBytes) return false;
  if (!TwoCores()) return Populate(data, bytes);
  const size_t half = bytes / 2;
  bool second = false;
  std::thread other([&] { second = Populate(static_cast<char*>(data) + half, bytes - half); });
  const bool first = Populate(data, half);
  other.join();
  return first && second;
}

PopulateAhead::PopulateAhead(void* data, size_t bytes) {
  if (data == nullptr || bytes < kPopulateMinBytes || !TwoCores()) return;
  // From the end backwards, a chunk at a time: the caller fills the range from its start, so the
  // two meet somewhere and each backs a part, however fast the other goes (front to back, a
  // slower populating thread would trail the caller and back nothing it needs).
  thread_ = std::thread([data, bytes] {
    constexpr size_t kChunk = size_t{32} << 20;
    char* const begin = static_cast<char*>(data);
    for (size_t end = bytes; end > 0;) {
      const size_t start = end > kChunk ? end - kChunk : 0;
      if (!Populate(begin + start, end - start)) return;
      end = start;
    }
  });
}

PopulateAhead& PopulateAhead::operator=(PopulateAhead&& other) noexcept {
  Wait();
  thread_ = std::move(other.thread_);
  return *this;
}

void PopulateAhead::Wait() {
  if (thread_.joinable()) thread_.join();
}

}  // namespace clustersim
