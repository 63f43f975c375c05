// Trace readers: each format lives in one file of workloads/ and registers itself; every reader
// produces the one Job type (sim/engine/job.h). LoadTrace auto-detects the format from the file's
// first line (at most its first 64 KiB) unless one is named — specific detectors first, generic
// ones last — sorts jobs by (submit time, input order) and hashes the file's content. A gzip file
// (found by its magic bytes, not its name) is read decompressed by every reader
// (sim/util/input_file.h); detection, the text checks, line numbers and the hash all apply to the
// decompressed text.
#ifndef CLUSTERSIM_WORKLOADS_READER_H_
#define CLUSTERSIM_WORKLOADS_READER_H_

#include <functional>
#include <string>

#include "sim/engine/job.h"
#include "workloads/job_sink.h"

namespace clustersim {

enum class TraceClock { kRelative, kWallClock };

struct TraceReaderEntry {
  std::string name;
  std::string summary;
  // Returns true if a file whose first non-empty line is `first_line` is in this format.
  std::function<bool(const std::string& path, const std::string& first_line)> detect;
  // Hands the file's jobs to `sink` (in file order where it can). Throws InputError (file,
  // line, column, expected).
  std::function<void(const std::string& path, JobSink* sink)> read;
  // A catch-all detector (e.g. "any JSON array") is tried only after every specific one.
  bool generic = false;
  // kWallClock: the reader hands over absolute times (dates, epoch offsets) and the trace starts
  // at its earliest submission; kRelative: times are seconds from the trace's own origin.
  TraceClock clock = TraceClock::kRelative;
  // True if `read` rejects duplicate job ids itself (the trace's sanity report then skips its
  // own search for them).
  bool rejects_duplicate_ids = false;
};

// The folder holding the bundled traces: $CLUSTERSIM_DATA_DIR if set, else the source tree's
// traces/ if it is still there, else the installed copy (<prefix>/share/clustersim/traces, put
// there by `cmake --install`).
std::string BundledTracesDir();

// A relative path "traces/..." that does not exist from the working directory but does in the
// bundled traces folder (BundledTracesDir()) resolves there, so the README's commands work with
// an installed clustersim from any folder; any other path is returned unchanged.
std::string ResolveBundledPath(const std::string& path);

bool RegisterTraceReader(TraceReaderEntry entry);
std::vector<const TraceReaderEntry*> TraceReaders();

// Reads the trace at `path` keeping only what `filter` keeps (see job_sink.h), so memory grows
// with the kept jobs, not the file. `format` empty = auto-detect. `counts` (optional) receives
// the exclusions by reason. `path` goes through ResolveBundledPath first. Throws InputError for
// an unreadable file, an unknown or undetectable format, bad content or a bad filter.
Trace LoadTrace(const std::string& path, const std::string& format = "",
                const TraceFilter& filter = TraceFilter(), FilterCounts* counts = nullptr);

}  // namespace clustersim

#define CLUSTERSIM_REGISTER_TRACE_READER(id, ...) \
  static const bool kReaderRegistered_##id = ::clustersim::RegisterTraceReader({__VA_ARGS__})

#endif  // CLUSTERSIM_WORKLOADS_READER_H_
