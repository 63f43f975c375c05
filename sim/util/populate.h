// Fresh memory backed on two cores ahead of its first write.
//
// The kernel backs an anonymous page on its first touch: it finds a page and zeroes it. For a
// run's largest arrays (ten million jobs: 720 MB of per-job state) that takes a second on the
// thread that first writes them (bench/README.md, "10,000,000 jobs in 2.35 GB"), one core's
// work where two could share it. MADV_POPULATE_WRITE (Linux 5.14) backs a range as a write would,
// without changing what it holds, and may be called from any thread on any mapped range.
// Populating memory that is never used only costs resident memory, so callers populate what they
// are about to fill, nothing more. Where the kernel lacks the call nothing happens: the pages are
// then backed on first touch, as before.
#ifndef CLUSTERSIM_SIM_UTIL_POPULATE_H_
#define CLUSTERSIM_SIM_UTIL_POPULATE_H_

#include <cstddef>

namespace clustersim {

// Ranges smaller than this are left to the first touch: starting a thread costs more than it
// saves.
inline constexpr size_t kPopulateMinBytes = size_t{64} << 20;

// Backs [data, data + bytes) now, half on this thread and half on another. Returns true if the
// kernel populated the range; false (nothing done) if it is too small, the machine has one core
// or the kernel lacks the call.
bool PopulateNow(void* data, size_t bytes);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_POPULATE_H_
