#include "workloads/reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <future>
#include <limits>

#include "sim/util/error.h"
#include "sim/util/input_file.h"
#include "sim/util/suggest.h"
#include "workloads/trace_csv.h"

#ifndef CLUSTERSIM_SOURCE_DIR
#define CLUSTERSIM_SOURCE_DIR "."
#endif
#ifndef CLUSTERSIM_INSTALL_DATA_DIR
#define CLUSTERSIM_INSTALL_DATA_DIR "/usr/local/share/clustersim"
#endif

namespace clustersim {
namespace {

std::deque<TraceReaderEntry>& Table() {
  static std::deque<TraceReaderEntry> table;
  return table;
}

// Returns the first `bytes` bytes of the file's content (decompressed if it is gzip), or what
// there is of them before gzip data that stops short: the reader then reports that at its line.
std::string Head(const std::string& path, size_t bytes) {
  InputFile in(path, "trace file");
  std::string head(bytes, '\0');
  size_t filled = 0;
  while (filled < bytes) {
    size_t n = 0;
    try {
      n = in.Read(head.data() + filled, bytes - filled);
    } catch (const InputError&) {
      if (filled == 0) throw;
    }
    if (n == 0) break;
    filled += n;
  }
  head.resize(filled);
  return head;
}

// The first non-blank line, cut at 64 KiB: detection needs the start of a header only, and a
// trace written on one line (a JSON log) must not be read whole for it.
std::string FirstLine(const std::string& path) {
  constexpr size_t kMaxBytes = 64 * 1024;
  const std::string head = Head(path, 4 * kMaxBytes);
  std::string_view bytes = head;
  if (bytes.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
    bytes.remove_prefix(kUtf8ByteOrderMark.size());
  }
  std::string line;
  for (const char c : bytes) {
    if (c == '\n') {
      if (line.find_first_not_of(" \t\r") != std::string::npos) break;
      line.clear();
      continue;
    }
    if (line.size() < kMaxBytes) line += c;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.find_first_not_of(" \t") == std::string::npos) {
    throw InputError(path, 1, 1, "empty trace file: expected a header line or a JSON list of jobs");
  }
  return line;
}

// Traces are UTF-8 (or ASCII) text. The start of the file shows the usual other cases: a UTF-16
// byte-order mark, or a NUL byte (binary data, UTF-16 without a mark, UTF-32). A UTF-8
// byte-order mark is accepted (the readers skip it).
void RejectNonText(const std::string& path) {
  const std::string head = Head(path, 4096);
  const std::string_view bytes = head;
  if (bytes.substr(0, 2) == "\xFF\xFE" || bytes.substr(0, 2) == "\xFE\xFF") {
    throw InputError(path, 1, 1,
                     "the file is UTF-16 text (it starts with a UTF-16 byte-order mark): expected "
                     "UTF-8; convert it, e.g. iconv -f UTF-16 -t UTF-8");
  }
  if (const size_t nul = bytes.find('\0'); nul != std::string_view::npos) {
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < nul; ++i) {
      if (bytes[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    throw InputError(path, line, static_cast<int>(nul - line_start) + 1,
                     "a NUL byte: expected a text file (UTF-8), not binary data or UTF-16/UTF-32 "
                     "text");
  }
}

}  // namespace

std::string BundledTracesDir() {
  if (const char* dir = std::getenv("CLUSTERSIM_DATA_DIR")) return dir;
  const std::string source = std::string(CLUSTERSIM_SOURCE_DIR) + "/traces";
  std::error_code error;
  if (std::filesystem::is_directory(source, error)) return source;
  return std::string(CLUSTERSIM_INSTALL_DATA_DIR) + "/traces";
}

std::string ResolveBundledPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (path.rfind("traces/", 0) != 0 || fs::exists(path, error)) return path;
  const fs::path bundled = fs::path(BundledTracesDir()) / path.substr(7);
  return fs::exists(bundled, error) ? bundled.string() : path;
}

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

Trace LoadTrace(const std::string& given_path, const std::string& format, const TraceFilter& filter,
                FilterCounts* counts) {
  const std::string path = ResolveBundledPath(given_path);
  RejectNonText(path);
  const TraceReaderEntry* reader = nullptr;
  std::string names;
  for (const TraceReaderEntry* e : TraceReaders()) names += (names.empty() ? "" : ", ") + e->name;
  if (!format.empty()) {
    for (const TraceReaderEntry* e : TraceReaders()) {
      if (e->name == format) reader = e;
    }
    if (!reader) {
      std::vector<std::string> list;
      for (const TraceReaderEntry* e : TraceReaders()) list.push_back(e->name);
      throw InputError("unknown trace format \"" + format + "\"" + DidYouMean(format, list) +
                       "; valid: " + names);
    }
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
  // The content hash needs only the file: it is computed on a second thread while the reader
  // parses (a tenth of the read time of a large trace).
  std::future<std::string> sha256 =
      std::async(std::launch::async, [&path] { return Sha256OfContent(path); });
  JobSink sink(filter, origin);
  reader->read(path, &sink);
  trace.jobs = sink.Finish(counts);
  trace.recorded_attempts = sink.TakeAttempts();
  trace.partitions = sink.partitions();
  trace.constraints = sink.TakeConstraints();
  trace.ids_unique = reader->rejects_duplicate_ids;
  trace.priority_map = filter.priority_map;
  trace.unix_origin = sink.unix_origin();
  trace.sha256 = sha256.get();
  return trace;
}

}  // namespace clustersim
