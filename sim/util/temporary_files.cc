#include "sim/util/temporary_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace clustersim {
namespace {

constexpr int kSlots = 256;
constexpr size_t kPathBytes = 4096;

enum State : int { kFree = 0, kWriting = 1, kFile = 2, kFolder = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathBytes];
};

Slot* Slots() {
  static Slot slots[kSlots];
  return slots;
}

// Unlinks the entries of the folder `path` (one level), then the folder. Only system calls.
void RemoveFolder(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char buffer[8192];
    while (true) {
      const long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t inode;
          int64_t offset;
          unsigned short length;
          unsigned char type;
          char name[1];
        };
        const auto* entry = reinterpret_cast<const Entry*>(buffer + at);
        const char* name = entry->name;
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) {
          ::unlinkat(fd, name, 0);
        }
        at += entry->length;
      }
    }
    ::close(fd);
  }
  ::rmdir(path);
}

}  // namespace

RemoveOnSignal::RemoveOnSignal(const std::string& path, bool is_folder) {
  if (path.empty() || path.size() >= kPathBytes) return;
  Slot* slots = Slots();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots[i].state.compare_exchange_strong(expected, kWriting)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(is_folder ? kFolder : kFile, std::memory_order_release);
    slot_ = i;
    return;
  }
}

RemoveOnSignal::~RemoveOnSignal() {
  if (slot_ >= 0) Slots()[slot_].state.store(kFree, std::memory_order_release);
}

void RemoveTemporaryFiles() {
  Slot* slots = Slots();
  for (int i = 0; i < kSlots; ++i) {
    const int state = slots[i].state.load(std::memory_order_acquire);
    if (state == kFile) ::unlink(slots[i].path);
    if (state == kFolder) RemoveFolder(slots[i].path);
  }
}

}  // namespace clustersim
