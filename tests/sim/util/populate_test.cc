#include "sim/util/populate.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace clustersim {
namespace {

// A fresh anonymous mapping: no page is backed until touched.
class Mapping {
 public:
  explicit Mapping(size_t bytes) : bytes_(bytes) {
    data_ = static_cast<char*>(
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~Mapping() { munmap(data_, bytes_); }
  char* data() const { return data_; }

  // Pages of [offset, offset + bytes) in memory (mincore).
  size_t Resident(size_t offset, size_t bytes) const {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((bytes + page - 1) / page);
    EXPECT_EQ(mincore(data_ + offset, bytes, in.data()), 0);
    size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
  }

 private:
  char* data_;
  size_t bytes_;
};

constexpr size_t kBytes = kPopulateMinBytes + (size_t{8} << 20);

TEST(Populate, BacksTheRangeAndKeepsItsContents) {
  Mapping m(kBytes);
  ASSERT_NE(m.data(), MAP_FAILED);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::memcpy(m.data() + 3 * page + 5, "kept", 4);
  EXPECT_LT(m.Resident(0, kBytes), kBytes / page);
  // An unaligned start is widened to its page.
  if (!PopulateNow(m.data() + 100, kBytes - 100)) {
    GTEST_SKIP() << "one core, or the kernel lacks MADV_POPULATE_WRITE";
  }
  EXPECT_EQ(m.Resident(0, kBytes), kBytes / page);
  EXPECT_EQ(std::memcmp(m.data() + 3 * page + 5, "kept", 4), 0);
  EXPECT_EQ(m.data()[kBytes - 1], 0);
}

TEST(Populate, LeavesSmallRangesToTheFirstTouch) {
  Mapping m(kBytes);
  ASSERT_NE(m.data(), MAP_FAILED);
  EXPECT_FALSE(PopulateNow(m.data(), kPopulateMinBytes - 1));
  EXPECT_EQ(m.Resident(0, kBytes), 0u);
}

}  // namespace
}  // namespace clustersim
