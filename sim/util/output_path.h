// Where a command writes: the folder of an output file must exist, so a mistyped path is an
// error instead of a tree of folders made wherever it points (at the filesystem root if asked);
// `--mkdir` (or a command's own default output, such as results/) makes it on purpose.
#ifndef CLUSTERSIM_SIM_UTIL_OUTPUT_PATH_H_
#define CLUSTERSIM_SIM_UTIL_OUTPUT_PATH_H_

#include <string>

namespace clustersim {

// Checks that the folder `path` will be written in exists (the current folder for a bare file
// name); with `make`, creates it and its parents first. Throws InputError naming `option`
// ("--out") and the missing folder, or a folder that cannot be made, or one that is a file.
void PrepareOutputFolder(const std::string& path, const std::string& option, bool make);

// Writes `text` to `path` through a temporary sibling renamed into place, removed if a signal
// stops the process meanwhile (sim/util/temporary_files.h). Throws InputError naming `path` when
// it cannot be written.
void WriteTextFile(const std::string& path, const std::string& text);

// Bytes free to an unprivileged writer on the file system holding `path`'s folder, or -1 when
// unknown.
long long FreeDiskBytes(const std::string& path);

// Bytes of memory available to a new allocation without swapping (MemAvailable of
// /proc/meminfo), or -1 when unknown.
long long AvailableMemoryBytes();

// "4.2 GB", "310 MB", "12 kB" (powers of 1000, as df -H and disk vendors count).
std::string FormatBytes(double bytes);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_OUTPUT_PATH_H_
