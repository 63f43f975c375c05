#include "workloads/reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <deque>
#include <fstream>

#include "sim/error.h"
#include "sim/sha256.h"

namespace clustersim {
namespace {

std::deque<TraceReaderEntry>& Table() {
  static std::deque<TraceReaderEntry> table;
  return table;
}

// The first non-blank line, cut at 64 KiB: detection needs the start of a header only, and a
// trace written on one line (a JSON log) must not be read whole for it.
std::string FirstLine(const std::string& path) {
  constexpr size_t kMaxBytes = 64 * 1024;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, "cannot open trace file");
  std::string line;
  char c = 0;
  size_t read = 0;
  while (read < 4 * kMaxBytes && in.get(c)) {
    ++read;
    if (c == '\n') {
      if (line.find_first_not_of(" \t\r") != std::string::npos) break;
      line.clear();
      continue;
    }
    if (line.size() < kMaxBytes) line += c;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) {
    throw InputError(path, 1, 1, "empty trace file: expected a header line");
  }
  return line;
}

}  // namespace

bool RegisterTraceReader(TraceReaderEntry entry) {
  Table().push_back(std::move(entry));
  return true;
}

std::vector<const TraceReaderEntry*> TraceReaders() {
  std::vector<const TraceReaderEntry*> out;
  for (const auto& e : Table()) out.push_back(&e);
  std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return out;
}

Trace LoadTrace(const std::string& path, const std::string& format, const TraceFilter& filter,
                FilterCounts* counts) {
  const TraceReaderEntry* reader = nullptr;
  std::string names;
  for (const TraceReaderEntry* e : TraceReaders()) names += (names.empty() ? "" : ", ") + e->name;
  if (!format.empty()) {
    for (const TraceReaderEntry* e : TraceReaders()) {
      if (e->name == format) reader = e;
    }
    if (!reader) throw InputError("unknown trace format \"" + format + "\"; valid: " + names);
  } else {
    const std::string first = FirstLine(path);
    for (bool generic : {false, true}) {
      for (const TraceReaderEntry* e : TraceReaders()) {
        if (!reader && e->generic == generic && e->detect(path, first)) reader = e;
      }
    }
    if (!reader) {
      throw InputError(path, 1, 1,
                       "cannot detect the trace format from the first line \"" +
                           first.substr(0, 120) + "\"; name one with --format (" + names + ")");
    }
  }
  Trace trace;
  trace.path = path;
  trace.format = reader->name;
  double origin = 0;
  if (reader->clock == TraceClock::kWallClock) {
    origin = std::numeric_limits<double>::quiet_NaN();  // the earliest submission, found at the end
    if (filter.HasWindow()) {
      // The window is relative to the earliest submission: a first pass finds it, keeping nothing.
      TraceFilter keep_none;
      keep_none.first_n = 0;
      JobSink scan(keep_none, 0.0);
      reader->read(path, &scan);
      origin = std::isinf(scan.earliest()) ? 0.0 : scan.earliest();
    }
  }
  JobSink sink(filter, origin);
  reader->read(path, &sink);
  trace.jobs = sink.Finish(counts);
  trace.sha256 = Sha256File(path);
  return trace;
}

}  // namespace clustersim
