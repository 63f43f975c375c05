// cli/large_pages.cc: allocations of 4 MiB and more start on a 2 MiB boundary and, where the
// kernel offers transparent huge pages, are backed by them once touched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;

// The kB of AnonHugePages in /proc/self/smaps of the mapping that holds `address`, or -1.
long AnonHugePagesKb(const void* address) {
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= target && target < end;
    } else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      return std::stol(line.substr(std::strlen("AnonHugePages:")));
    }
  }
  return -1;
}

TEST(LargePages, LargeAllocationsStartOnAHugePageAndGetOne) {
  const size_t size = size_t{6} << 20;
  std::unique_ptr<char[]> large(new char[size]);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.get()) % kHugePage, 0u);
  std::memset(large.get(), 1, size);
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (mode.find("[never]") != std::string::npos || mode.empty()) {
    GTEST_SKIP() << "transparent huge pages are off on this machine (" << mode << ")";
  }
  // Three whole huge pages were touched; the kernel may lack a free one now and then, not all.
  EXPECT_GT(AnonHugePagesKb(large.get()), 0);
}

TEST(LargePages, SmallAllocationsAreOrdinaryAndUsable) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{4096}, (size_t{4} << 20) - 1}) {
    std::unique_ptr<char[]> small(new char[size + 1]);
    small[size] = 7;
    EXPECT_EQ(small[size], 7);
  }
  auto* nothrow = new (std::nothrow) char[size_t{5} << 20];
  ASSERT_NE(nothrow, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(nothrow) % kHugePage, 0u);
  delete[] nothrow;
}

}  // namespace
