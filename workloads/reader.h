// Trace readers: each format lives in one file of workloads/ and registers itself; every reader
// produces the one Job type (sim/job.h). LoadTrace auto-detects the format from the file's first
// line (at most its first 64 KiB) unless one is named — specific detectors first, generic ones
// last — sorts jobs by (submit time, input order) and hashes the file.
#ifndef CLUSTERSIM_WORKLOADS_READER_H_
#define CLUSTERSIM_WORKLOADS_READER_H_

#include <functional>
#include <string>
#include <vector>

#include "sim/job.h"

namespace clustersim {

struct TraceReaderEntry {
  std::string name;
  std::string summary;
  // Returns true if a file whose first non-empty line is `first_line` is in this format.
  std::function<bool(const std::string& path, const std::string& first_line)> detect;
  // Appends the file's jobs in file order. Throws InputError (file, line, column, expected).
  std::function<void(const std::string& path, std::vector<Job>* jobs)> read;
  // A catch-all detector (e.g. "any JSON array") is tried only after every specific one.
  bool generic = false;
};

bool RegisterTraceReader(TraceReaderEntry entry);
std::vector<const TraceReaderEntry*> TraceReaders();

// `format` empty = auto-detect. Throws InputError for an unreadable file, an unknown or
// undetectable format, or bad content.
Trace LoadTrace(const std::string& path, const std::string& format = "");

}  // namespace clustersim

#define CLUSTERSIM_REGISTER_TRACE_READER(id, ...) \
  static const bool kReaderRegistered_##id = ::clustersim::RegisterTraceReader({__VA_ARGS__})

#endif  // CLUSTERSIM_WORKLOADS_READER_H_
