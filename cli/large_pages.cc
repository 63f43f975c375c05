// Large arrays on transparent huge pages, for the executables that link this file.
//
// A run's big arrays (the jobs, the engine's per-job state, the reader's buffers) are fresh
// memory: the kernel maps and zeroes each 4 KiB page on first touch, and unmaps each one again
// when the array is freed. On a 100,000-job run that was a third of the engine's construction
// and most of the teardown (bench/README.md, "Large arrays on huge pages"). Debian's kernel
// grants 2 MiB pages only to memory that asks for them (transparent_hugepage=madvise), so
// allocations of at least kLargeBytes ask: one fault per 2 MiB instead of 512. Smaller ones go to
// malloc as before. Everything is released with free(), as the default operator delete does.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// At least two huge pages, so that rounding up to whole huge pages wastes at most a third.
constexpr std::size_t kLargeBytes = 2 * kHugePage;

void* Allocate(std::size_t size) noexcept {
  if (size < kLargeBytes) return std::malloc(size == 0 ? 1 : size);
  const std::size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  // Advice only: where the kernel has no huge page free it maps small ones, as without it.
  if (p != nullptr) madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

}  // namespace

void* operator new(std::size_t size) {
  if (void* p = Allocate(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return Allocate(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return Allocate(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
