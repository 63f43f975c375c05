#include "workloads/trace_csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "sim/util/error.h"

namespace clustersim {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant, "chrono-
// Compatible Low-Level Date Algorithms", days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Reads exactly `width` digits at text[*pos].
bool Digits(std::string_view text, size_t* pos, size_t width, int* value) {
  if (*pos + width > text.size()) return false;
  int v = 0;
  for (size_t i = 0; i < width; ++i) {
    const char c = text[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += width;
  *value = v;
  return true;
}

bool Expect(std::string_view text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

LineReader::LineReader(const std::string& path)
    : file_(path, "trace file"), buffer_(kTraceReadBufferBytes) {}

bool LineReader::Refill() {
  if (at_end_) return false;
  std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(begin_),
            buffer_.begin() + static_cast<std::ptrdiff_t>(end_), buffer_.begin());
  end_ -= begin_;
  begin_ = 0;
  size_t n = 0;
  try {
    n = file_.Read(buffer_.data() + end_, buffer_.size() - end_);
  } catch (const InputError& e) {
    // Name the line the data stopped in.
    throw InputError(file_.path(), static_cast<int>(line_number_ + 1), 0, e.what_expected());
  }
  if (n == 0) at_end_ = true;
  end_ += n;
  return n > 0;
}

bool LineReader::Next(std::string_view* line) {
  long_line_.clear();
  while (true) {
    const char* start = buffer_.data() + begin_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    if (newline != nullptr) {
      const size_t length = static_cast<size_t>(newline - start);
      begin_ += length + 1;
      if (long_line_.empty()) {
        *line = std::string_view(start, length);
      } else {
        long_line_.append(start, length);
        *line = long_line_;
      }
      break;
    }
    if (end_ - begin_ == buffer_.size()) {
      // A line longer than the buffer: keep its start apart and read on.
      long_line_.append(start, end_ - begin_);
      begin_ = end_ = 0;
    }
    if (!Refill()) {
      if (end_ == begin_ && long_line_.empty()) {
        *line = std::string_view();
        return false;
      }
      // The last line, without a final newline.
      long_line_.append(buffer_.data() + begin_, end_ - begin_);
      begin_ = end_;
      *line = long_line_;
      break;
    }
  }
  ++line_number_;
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  if (line_number_ == 1 && line->substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
    line->remove_prefix(kUtf8ByteOrderMark.size());
  }
  return true;
}

std::vector<std::string_view> SplitPlain(std::string_view line, char separator) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (true) {
    const size_t end = std::min(line.find(separator, i), line.size());
    out.push_back(TrimBlanks(line.substr(i, end - i)));
    if (end >= line.size()) return out;
    i = end + 1;
  }
}

bool HeaderHasColumns(std::string_view first_line,
                      std::initializer_list<std::string_view> required) {
  const std::vector<std::string_view> names = SplitPlain(first_line);
  for (std::string_view r : required) {
    if (std::find(names.begin(), names.end(), r) == names.end()) return false;
  }
  return true;
}

std::string JoinNames(const std::vector<std::string_view>& names, std::string_view separator) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

CsvHeader::CsvHeader(const std::vector<CsvField>& header, std::vector<std::string_view> names,
                     size_t required_count, const std::string& path, int64_t line_number,
                     const std::string& format_columns)
    : positions_(names.size(), -1), width_(header.size()) {
  if (header.size() == 1 && header[0].text.empty()) {
    throw InputError(path, static_cast<int>(std::max<int64_t>(line_number, 1)), 1,
                     "no header: expected a header line naming the columns " + format_columns);
  }
  for (size_t f = 0; f < header.size(); ++f) {
    header_names_.emplace_back(header[f].text);
    for (size_t i = 0; i < names.size(); ++i) {
      if (header[f].text != names[i]) continue;
      if (positions_[i] >= 0) {
        throw InputError(path, static_cast<int>(line_number), header[f].column,
                         "duplicate column \"" + std::string(names[i]) + "\"");
      }
      positions_[i] = static_cast<int>(f);
    }
  }
  for (size_t i = 0; i < required_count; ++i) {
    if (positions_[i] < 0) {
      throw InputError(path, static_cast<int>(line_number), 1,
                       "header lacks the required column \"" + std::string(names[i]) +
                           "\"; expected the columns " + format_columns);
    }
  }
}

void CsvHeader::CheckWidth(const std::vector<CsvField>& row, std::string_view line,
                           const std::string& path, int64_t line_number) const {
  if (row.size() < width_) {
    throw InputError(path, static_cast<int>(line_number), static_cast<int>(line.size()) + 1,
                     "missing field(s): expected " + std::to_string(width_) + " fields (" +
                         header_names_[row.size()] + " is missing), got " +
                         std::to_string(row.size()));
  }
  if (row.size() > width_) {
    throw InputError(path, static_cast<int>(line_number), row[width_].column,
                     "extra field: expected " + std::to_string(width_) + " fields, got " +
                         std::to_string(row.size()));
  }
}

bool CsvFieldParser::IsMissing(std::string_view text) {
  return text.empty() || text == "None" || text == "NaN" || text == "nan" || text == "NULL" ||
         text == "null";
}

double CsvFieldParser::Number(const CsvField& f, std::string_view name) const {
  std::string_view t = f.text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range && ptr == t.data() + t.size()) {
    Fail(f, std::string(name) + ": number out of range: \"" + std::string(f.text) +
                "\" (expected a finite number a double can hold)");
  }
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v)) {
    Fail(f, std::string(name) + ": expected a number, got \"" + std::string(f.text) + "\"");
  }
  return v;
}

double CsvFieldParser::NonNegative(const CsvField& f, std::string_view name) const {
  const double v = Number(f, name);
  if (v < 0) Fail(f, std::string(name) + ": expected a value >= 0, got " + std::string(f.text));
  return v;
}

double CsvFieldParser::Seconds(const CsvField& f, std::string_view name) const {
  double v = 0;
  auto [ptr, ec] = std::from_chars(f.text.data(), f.text.data() + f.text.size(), v);
  if (ec == std::errc::result_out_of_range && ptr == f.text.data() + f.text.size()) {
    Fail(f, std::string(name) + ": number out of range: \"" + std::string(f.text) +
                "\" (expected a finite number of seconds a double can hold)");
  }
  if (f.text.empty() || ec != std::errc() || ptr != f.text.data() + f.text.size() ||
      !std::isfinite(v)) {
    Fail(f,
         std::string(name) + ": expected a number of seconds, got \"" + std::string(f.text) + "\"");
  }
  if (v < 0) Fail(f, std::string(name) + ": expected a value >= 0, got " + std::string(f.text));
  return v;
}

int64_t CsvFieldParser::ParseInteger(const CsvField& f, std::string_view name) const {
  std::string_view t = f.text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (!t.empty() && ec == std::errc() && ptr == t.data() + t.size()) return v;
  double d = 0;
  auto [p2, e2] = std::from_chars(t.data(), t.data() + t.size(), d);
  // A number too large for int64_t or for a double (2^70, 1e400) is still a number: the callers'
  // range checks say so.
  const bool huge =
      (e2 == std::errc::result_out_of_range && p2 == t.data() + t.size()) ||
      (e2 == std::errc() && p2 == t.data() + t.size() && std::isfinite(d) && std::abs(d) > 1e15);
  if (huge) {
    return t.front() == '-' ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
  }
  if (t.empty() || e2 != std::errc() || p2 != t.data() + t.size() || !std::isfinite(d) ||
      d != std::floor(d)) {
    Fail(f, std::string(name) + ": expected an integer, got \"" + std::string(f.text) + "\"");
  }
  return static_cast<int64_t>(d);
}

int64_t CsvFieldParser::Integer(const CsvField& f, std::string_view name, int64_t min,
                                int64_t max) const {
  const int64_t v = ParseInteger(f, name);
  if (v < min || v > max) {
    Fail(f, std::string(name) + ": expected an integer in [" + std::to_string(min) + ", " +
                std::to_string(max) + "], got " + std::string(f.text));
  }
  return v;
}

int64_t CsvFieldParser::Count(const CsvField& f, std::string_view name, int64_t min) const {
  const int64_t v = ParseInteger(f, name);
  if (v < min) {
    Fail(f, std::string(name) + ": expected an integer >= " + std::to_string(min) + ", got " +
                std::string(f.text));
  }
  if (v > kMaxCount) {
    Fail(f, std::string(name) + ": value too large: expected at most " + std::to_string(kMaxCount) +
                ", got " + std::string(f.text));
  }
  return v;
}

double CsvFieldParser::WallClock(const CsvField& f, std::string_view name) const {
  double seconds = 0;
  if (!ParseWallClock(f.text, &seconds)) {
    Fail(f, std::string(name) +
                ": expected a time YYYY-MM-DD HH:MM:SS (optionally with a zone "
                "such as +08:00), got \"" +
                std::string(f.text) + "\"");
  }
  return seconds;
}

std::string_view CsvFieldParser::Text(const CsvField& f, std::string_view name) const {
  if (f.text.empty()) Fail(f, std::string(name) + ": expected a non-empty value");
  return f.text;
}

void CsvFieldParser::Fail(const CsvField& f, const std::string& what) const {
  Fail(f.column, what);
}

void CsvFieldParser::Fail(int column, const std::string& what) const {
  throw InputError(path_, static_cast<int>(line_), column, what);
}

bool ParseWallClock(std::string_view text, double* seconds) {
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, &pos, 4, &year) || !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &month) ||
      !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &day)) {
    return false;
  }
  if (pos >= text.size() || (text[pos] != ' ' && text[pos] != 'T')) return false;
  ++pos;
  if (!Digits(text, &pos, 2, &hour) || !Expect(text, &pos, ':') ||
      !Digits(text, &pos, 2, &minute) || !Expect(text, &pos, ':') ||
      !Digits(text, &pos, 2, &second)) {
    return false;
  }
  static constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 ||
      day > kDaysInMonth[month - 1] + (month == 2 && IsLeap(year)) || hour > 23 || minute > 59 ||
      second > 59) {
    return false;
  }
  double fraction = 0;
  if (pos < text.size() && text[pos] == '.') {
    const size_t begin = pos;
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == begin + 1) return false;
    std::from_chars(text.data() + begin, text.data() + pos, fraction);
  }
  int offset_seconds = 0;
  if (pos < text.size()) {
    if (text[pos] == 'Z' && pos + 1 == text.size()) {
      ++pos;
    } else if (text[pos] == '+' || text[pos] == '-') {
      const int sign = text[pos] == '+' ? 1 : -1;
      ++pos;
      int oh = 0, om = 0;
      if (!Digits(text, &pos, 2, &oh)) return false;
      if (pos < text.size()) {
        Expect(text, &pos, ':');
        if (!Digits(text, &pos, 2, &om)) return false;
      }
      if (oh > 23 || om > 59) return false;
      offset_seconds = sign * (oh * 3600 + om * 60);
    }
  }
  if (pos != text.size()) return false;
  const int64_t days = DaysFromCivil(year, month, day);
  *seconds =
      static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds) +
      fraction;
  return true;
}

void ReadSlurmStyleJobLog(const std::string& path, JobSink* sink, bool has_vc,
                          const char* format_columns) {
  enum Column { kJobId, kUser, kGpuNum, kCpuNum, kState, kSubmit, kStart, kEnd, kDuration, kVc };
  std::vector<std::string_view> names = {"job_id",     "user",     "gpu_num",
                                         "cpu_num",    "state",    "submit_time",
                                         "start_time", "end_time", "duration"};
  if (has_vc) names.push_back("vc");
  const size_t required = names.size();
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  while (reader.Next(&line) && line.find_first_not_of(" \t") == std::string_view::npos) {
  }
  const CsvHeader header(splitter.Split(line, path, reader.line_number()), names, required, path,
                         reader.line_number(), format_columns);
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = reader.line_number();
    const std::vector<CsvField>& row = splitter.Split(line, path, n);
    header.CheckWidth(row, line, path, n);
    const CsvFieldParser parse(path, n);
    auto field = [&](Column c) -> const CsvField& { return row[header.position(c)]; };
    Job job;
    job.line = n;
    job.id = parse.Text(field(kJobId), "job_id");
    job.user = field(kUser).text;
    if (has_vc) job.vc = field(kVc).text;
    job.gpus = static_cast<int>(parse.Integer(field(kGpuNum), "gpu_num", 0, 1'000'000));
    if (!CsvFieldParser::IsMissing(field(kCpuNum).text)) {
      job.cpu_milli =
          static_cast<int>(1000 * parse.Integer(field(kCpuNum), "cpu_num", 0, 2'000'000));
    }
    job.trace_status = field(kState).text;
    job.submit_time = parse.WallClock(field(kSubmit), "submit_time");
    const bool has_start = !CsvFieldParser::IsMissing(field(kStart).text);
    const bool has_end = !CsvFieldParser::IsMissing(field(kEnd).text);
    const double start = has_start ? parse.WallClock(field(kStart), "start_time") : 0;
    const double end = has_end ? parse.WallClock(field(kEnd), "end_time") : 0;
    if (!CsvFieldParser::IsMissing(field(kDuration).text)) {
      job.duration = parse.NonNegative(field(kDuration), "duration");
    } else if (has_start && has_end) {
      if (end < start) parse.Fail(field(kEnd), "end_time: expected a time >= start_time");
      job.duration = end - start;
    }
    // The recorded schedule: the start and end as logged (kept as given, even before the
    // submission; the sanity report counts such records).
    if (has_start) job.recorded_start = start;
    if (has_end) job.recorded_end = end;
    sink->Add(std::move(job));
  }
}

}  // namespace clustersim
