// Shared parsing for the trace readers of public formats (philly_csv.cc, helios.cc, acme.cc,
// openb.cc, pai2020.cc, swf.cc, philly_json.cc): a buffered line reader that counts lines, the CSV
// splitter of sim/util/csv.h (each field keeps its column), a header map by column name, typed
// field parsers and wall-clock time parsing. Every failure is an InputError naming the file, the
// 1-based line and column (character position of the field) and what was expected. Nothing here
// allocates per line beyond the reused buffers, so a reader built on it streams with memory
// proportional to the jobs it keeps.
#ifndef CLUSTERSIM_WORKLOADS_TRACE_CSV_H_
#define CLUSTERSIM_WORKLOADS_TRACE_CSV_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine/job.h"
#include "sim/util/csv.h"
#include "sim/util/input_file.h"
#include "workloads/job_sink.h"

namespace clustersim {

// Bytes of the read buffer of each open trace file (LineReader, the native and Philly JSON
// readers). 1 MiB keeps reading a multi-GB trace to few system calls. The fuzz build, which opens
// thousands of tiny files a second, defines a small value: there each fresh 1 MiB buffer costs
// hundreds of page faults and would be most of the time spent per input.
#ifndef CLUSTERSIM_TRACE_READ_BUFFER_BYTES
#define CLUSTERSIM_TRACE_READ_BUFFER_BYTES (1 << 20)
#endif
inline constexpr size_t kTraceReadBufferBytes = CLUSTERSIM_TRACE_READ_BUFFER_BYTES;

// The UTF-8 byte-order mark some tools (spreadsheets) write at the start of a CSV file. Readers
// skip it: a trace is UTF-8 text, with or without it.
inline constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";

// Reads a file line by line through a 1 MiB buffer, gzip or not (sim/util/input_file.h); strips
// a trailing '\r' and a UTF-8 byte-order mark at the start of the file.
class LineReader {
 public:
  // Throws InputError if the file cannot be opened.
  explicit LineReader(const std::string& path);
  // Returns false at the end of the file; otherwise *line is valid until the next call. Throws
  // InputError (at the line being read) if gzip data is corrupt or truncated.
  bool Next(std::string_view* line);
  // 1-based number of the line last returned by Next (0 before the first call).
  int64_t line_number() const { return line_number_; }

 private:
  // Refills buffer_ after moving its unread bytes to the front; returns false at the end.
  bool Refill();

  InputFile file_;
  std::vector<char> buffer_;
  size_t begin_ = 0;  // first unread byte of buffer_
  size_t end_ = 0;    // end of the valid bytes of buffer_
  bool at_end_ = false;
  std::string long_line_;  // a line longer than the buffer
  int64_t line_number_ = 0;
};

// Returns the fields of `line` split at commas without quote handling (for detectors).
std::vector<std::string_view> SplitPlain(std::string_view line, char separator = ',');

// Returns true if the CSV header `first_line` names every column of `required`.
bool HeaderHasColumns(std::string_view first_line,
                      std::initializer_list<std::string_view> required);

// Maps a format's column names to their positions in a file's header. Columns the format does
// not use are allowed (and ignored); a required one that is missing is an error naming it.
class CsvHeader {
 public:
  // `names`: the columns the reader uses; the first `required_count` are required.
  CsvHeader(const std::vector<CsvField>& header, std::vector<std::string_view> names,
            size_t required_count, const std::string& path, int64_t line_number,
            const std::string& format_columns);
  // Position of names[i] in a row, or -1 if the file lacks this optional column.
  int position(size_t i) const { return positions_[i]; }
  size_t width() const { return width_; }
  // Throws InputError unless `row` has exactly width() fields.
  void CheckWidth(const std::vector<CsvField>& row, std::string_view line, const std::string& path,
                  int64_t line_number) const;

 private:
  std::vector<std::string> header_names_;
  std::vector<int> positions_;
  size_t width_ = 0;
};

// Typed parsing of the fields of one line; failures throw InputError at the field's column.
class CsvFieldParser {
 public:
  CsvFieldParser(const std::string& path, int64_t line_number) : path_(path), line_(line_number) {}

  // Returns true if the field is empty or a conventional missing value ("None", "NaN", "nan",
  // "NULL", "null").
  static bool IsMissing(std::string_view text);
  // A finite number.
  double Number(const CsvField& f, std::string_view name) const;
  // A finite number >= 0.
  double NonNegative(const CsvField& f, std::string_view name) const;
  // A finite number >= 0 of seconds (the native format's times).
  double Seconds(const CsvField& f, std::string_view name) const;
  // An integer in [min, max]; integral decimals such as "4.0" are accepted.
  int64_t Integer(const CsvField& f, std::string_view name, int64_t min, int64_t max) const;
  // An integer in [min, kMaxCount], the errors phrased for a count with a lower bound (">= min",
  // "value too large"); integral decimals are accepted.
  int64_t Count(const CsvField& f, std::string_view name, int64_t min) const;
  static constexpr int64_t kMaxCount = 1'000'000'000;
  // Seconds since 1970-01-01 00:00:00 UTC of "YYYY-MM-DD HH:MM:SS" (a 'T' may separate date and
  // time; optional fractional seconds; optional zone "Z", "+08:00", "+0800" or "+08"). A time
  // without a zone is read as UTC: only differences between times of one file matter, and no
  // daylight-saving adjustment is made.
  double WallClock(const CsvField& f, std::string_view name) const;
  // Non-empty text.
  std::string_view Text(const CsvField& f, std::string_view name) const;

  [[noreturn]] void Fail(const CsvField& f, const std::string& what) const;
  [[noreturn]] void Fail(int column, const std::string& what) const;

 private:
  // The integer in `f` (or INT64_MIN / INT64_MAX for a number too large for it); fails on
  // anything that is not an integer.
  int64_t ParseInteger(const CsvField& f, std::string_view name) const;

  const std::string& path_;
  int64_t line_;
};

// Returns seconds since the epoch (UTC) of `text` in the WallClock format, or false.
bool ParseWallClock(std::string_view text, double* seconds);

// Reads a SLURM-style job log with a header naming job_id, user, [vc,] gpu_num, cpu_num, state,
// submit_time, start_time, end_time, duration (other columns ignored), as Helios and Acme publish
// them: status = state; CPU demand = 1000 x cpu_num; duration from its column, else end - start,
// else 0; wall-clock times (zones honoured) handed over as they are (register the reader with
// TraceClock::kWallClock so that the earliest submission becomes 0).
// `format_columns` names the format's full column list in error messages.
void ReadSlurmStyleJobLog(const std::string& path, JobSink* sink, bool has_vc,
                          const char* format_columns);

// Returns "a, b, c" for messages.
std::string JoinNames(const std::vector<std::string_view>& names, std::string_view separator = ",");

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_TRACE_CSV_H_
