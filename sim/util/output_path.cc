#include "sim/util/output_path.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sim/util/error.h"
#include "sim/util/temporary_files.h"

namespace clustersim {

namespace fs = std::filesystem;

void PrepareOutputFolder(const std::string& path, const std::string& option, bool make) {
  const fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) return;
  std::error_code ec;
  if (fs::is_directory(folder, ec)) return;
  if (fs::exists(folder, ec)) {
    throw InputError(option + " " + path + ": " + folder.string() + " is not a folder");
  }
  if (!make) {
    throw InputError(option + " " + path + ": the folder " + folder.string() +
                     " does not exist (create it first, or add --mkdir to create it)");
  }
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder)) {
    throw InputError(option + " " + path + ": cannot create the folder " + folder.string() + " (" +
                     ec.message() + ")");
  }
}

void WriteTextFile(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  const RemoveOnSignal remove_on_signal(temporary);
  {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    if (!out.flush()) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw InputError(path, 0, 0, "cannot write file");
    }
  }
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw InputError(path, 0, 0, "cannot write file");
  }
}

long long FreeDiskBytes(const std::string& path) {
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  struct statvfs info {};
  if (::statvfs(folder.c_str(), &info) != 0) return -1;
  return static_cast<long long>(info.f_bavail) * static_cast<long long>(info.f_frsize);
}

long long AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long long kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

std::string FormatBytes(double bytes) {
  const char* units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 6) {
    bytes /= 1000;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.3g %s", bytes, units[unit]);
  return buffer;
}

}  // namespace clustersim
