#include "sim/util/populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <system_error>
#include <thread>

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
  if (data == nullptr || bytes < kPopulateMinBytes || !TwoCores()) return false;
  const size_t half = bytes / 2;
  bool second = false;
  std::thread other;
  try {
    other = std::thread([&] { second = Populate(static_cast<char*>(data) + half, bytes - half); });
  } catch (const std::system_error&) {
    return false;  // no thread to be had: the first touch backs the pages, as without this
  }
  const bool first = Populate(data, half);
  other.join();
  return first && second;
}

}  // namespace clustersim
