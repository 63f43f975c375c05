// Fresh memory backed ahead of its first write, on another core.
//
// The kernel backs an anonymous page on its first touch: it finds a page and zeroes it. For a
// run's largest arrays (ten million jobs: 1.6 GB of trace, 720 MB of per-job state) that is
// seconds on the thread that first writes them (bench/README.md, "10,000,000 jobs in 2.35 GB").
// The arrays are written in order by one thread, so the work can be done ahead of it:
// MADV_POPULATE_WRITE (Linux 5.14) backs a range as a write would, without changing what it
// holds, and may be called from any thread on any mapped range, even while another thread writes
// it. Populating memory that is never used only costs resident memory, so callers populate what
// they are about to fill, nothing more. Where the kernel lacks the call nothing happens: the
// pages are then backed on first touch, as before.
#ifndef CLUSTERSIM_SIM_UTIL_POPULATE_H_
#define CLUSTERSIM_SIM_UTIL_POPULATE_H_

#include <cstddef>
#include <thread>

namespace clustersim {

// Ranges smaller than this are left to the first touch: populating them on another thread costs
// more than it saves.
inline constexpr size_t kPopulateMinBytes = size_t{64} << 20;

// Backs [data, data + bytes) now, split over up to two threads (this one and one more, when the
// machine has a second core). Returns true if the kernel populated the range, false if it was
// too small or the kernel lacks the call.
bool PopulateNow(void* data, size_t bytes);

// Backs [data, data + bytes) on a thread of its own, from its end backwards, while the caller
// goes on filling it from its start; the destructor waits for it. Nothing is started for a range
// under kPopulateMinBytes or on a single core.
class PopulateAhead {
 public:
  PopulateAhead() = default;
  PopulateAhead(void* data, size_t bytes);
  PopulateAhead(const PopulateAhead&) = delete;
  PopulateAhead& operator=(const PopulateAhead&) = delete;
  PopulateAhead(PopulateAhead&& other) noexcept = default;
  // Waits for the thread running for this object, if any, then takes over `other`'s.
  PopulateAhead& operator=(PopulateAhead&& other) noexcept;
  ~PopulateAhead() { Wait(); }

  // Waits until the range is backed (or the kernel refused).
  void Wait();

 private:
  std::thread thread_;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_POPULATE_H_
