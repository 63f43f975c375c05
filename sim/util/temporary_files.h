// Temporary files that must not outlive a stopped process. A writer creates its output under a
// temporary name and renames it into place when complete (nothing half-written is ever seen under
// the real name); while the temporary exists it is registered here, and RemoveTemporaryFiles,
// called from the SIGINT / SIGTERM handler (app/options.h), deletes every registered one before
// the process ends. A registered folder loses its files (one level deep) and then itself.
//
// The registry is a fixed table written with atomics, so registering is thread-safe and removal
// is async-signal-safe (it only calls open, getdents64, unlinkat, unlink and rmdir).
#ifndef CLUSTERSIM_SIM_UTIL_TEMPORARY_FILES_H_
#define CLUSTERSIM_SIM_UTIL_TEMPORARY_FILES_H_

#include <string>

namespace clustersim {

// Registers `path` while it lives. It never removes the file itself: its owner renames it into
// place or removes it; the destructor only forgets it. Paths longer than 4,095 bytes, or more
// than 256 at once, are not registered (the file is then left behind by a signal, as before).
class RemoveOnSignal {
 public:
  explicit RemoveOnSignal(const std::string& path, bool is_folder = false);
  ~RemoveOnSignal();
  RemoveOnSignal(const RemoveOnSignal&) = delete;
  RemoveOnSignal& operator=(const RemoveOnSignal&) = delete;

 private:
  int slot_ = -1;
};

// Removes every registered file and folder. Async-signal-safe.
void RemoveTemporaryFiles();

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_TEMPORARY_FILES_H_
