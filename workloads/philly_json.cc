// philly-json: the original Philly job log (msr-fiddle/philly-traces `cluster_job_log`), a JSON
// list of jobs {status, vc, jobid, user, submitted_time, attempts: [{start_time, end_time,
// detail: [{ip, gpus: [...]}]}]}, times "%Y-%m-%d %H:%M:%S" or None/null/"None". The file (1 GB
// for the full log) is parsed as a stream of SAX events: memory holds the kept jobs, never the
// document. Detected by a file starting with '[' whose first 64 KB name the keys "jobid",
// "attempts" and "submitted_time". Mapping:
//   job_id = jobid; user; vc; trace_status = status (Pass, Killed, Failed), with a suffix when
//   the record is incomplete (below);
//   submit_time = submitted_time (read as UTC, no daylight saving) minus the earliest one in the
//   file (absolute seconds stored while streaming, shifted at the end);
//   gpus = the number of GPUs of the FIRST attempt (sum of len(gpus) over its detail), as the
//   trace's own analysis notebook counts them; later attempts are usually the same request
//   rescheduled;
//   duration = the SUM over attempts of end_time - start_time: the time the job held GPUs. The
//   gaps between attempts are waits (retries re-queue) and are left to the simulator, unlike the
//   notebook's run time (last end - first start);
//   incomplete records are kept, never dropped, and marked in trace_status so `--filter` can drop
//   them explicitly:
//     no attempts -> gpus 0, duration 0, "<status>:no-attempts" (the engine rejects a job of 0
//     GPUs with a reason);
//     an attempt without start_time or end_time (a logging error, says the trace's README)
//     contributes nothing -> "<status>:missing-times";
//     a last attempt with start_time but no end_time was running when the log was taken: it runs
//     until the latest time found in the file (censored) -> "<status>:running-at-end".
//   recorded schedule: every attempt with a start and an end (the open last one ending at the
//   latest time) is a recorded attempt holding its own GPUs; recorded_start = the first attempt's
//   start_time, recorded_end = the last attempt's end;
//   Unknown keys are ignored; a key of the wrong type, a malformed time or invalid JSON is an
//   error naming the line and column.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "sim/util/error.h"
#include "workloads/reader.h"
#include "workloads/trace_csv.h"

namespace clustersim {
namespace {

// A buffered file (gzip or not) read one byte at a time, counting lines and columns of the bytes
// consumed.
class ByteSource {
 public:
  explicit ByteSource(const std::string& path) : file_(path, "trace file") {
    buffer_.resize(kTraceReadBufferBytes);
  }

  bool AtEnd() {
    if (pos_ < size_) return false;
    try {
      size_ = file_.Read(buffer_.data(), buffer_.size());
    } catch (const InputError& e) {
      throw InputError(file_.path(), static_cast<int>(line_), column(), e.what_expected());
    }
    pos_ = 0;
    return size_ == 0;
  }
  const char& Current() {
    AtEnd();
    return buffer_[pos_];
  }
  void Advance() {
    if (AtEnd()) return;
    if (buffer_[pos_++] == '\n') {
      ++line_;
      column_ = 0;
    } else {
      ++column_;
    }
  }
  int64_t line() const { return line_; }
  int column() const { return std::max(column_, 1); }  // of the last byte consumed

 private:
  InputFile file_;
  std::vector<char> buffer_;
  size_t pos_ = 0;
  size_t size_ = 0;
  int64_t line_ = 1;
  int column_ = 0;
};

// The input iterator nlohmann::json reads through; all copies share one ByteSource.
class ByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  explicit ByteIterator(ByteSource* source) : source_(source) {}
  reference operator*() const { return source_->Current(); }
  ByteIterator& operator++() {
    source_->Advance();
    return *this;
  }
  ByteIterator operator++(int) {
    ByteIterator before = *this;
    source_->Advance();
    return before;
  }
  bool operator==(const ByteIterator& other) const { return AtEnd() == other.AtEnd(); }
  bool operator!=(const ByteIterator& other) const { return !(*this == other); }

 private:
  bool AtEnd() const { return source_ == nullptr || source_->AtEnd(); }
  ByteSource* source_;
};

using Json = nlohmann::json;

class PhillyHandler : public nlohmann::json_sax<Json> {
 public:
  PhillyHandler(const std::string& path, ByteSource* source, JobSink* sink)
      : path_(path), source_(source), sink_(sink) {}

  bool null() override { return Scalar(Kind::kNull, std::string()); }
  bool boolean(bool) override { return Scalar(Kind::kOther, std::string()); }
  bool number_integer(number_integer_t v) override {
    return Scalar(Kind::kNumber, std::to_string(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    return Scalar(Kind::kNumber, std::to_string(v));
  }
  bool number_float(number_float_t, const string_t& s) override { return Scalar(Kind::kNumber, s); }
  bool string(string_t& v) override { return Scalar(Kind::kString, v); }
  bool binary(binary_t&) override { return Scalar(Kind::kOther, std::string()); }

  bool key(string_t& k) override {
    key_ = k;
    return true;
  }

  bool start_object(std::size_t) override {
    const Ctx parent = stack_.empty() ? Ctx::kRoot : stack_.back();
    switch (parent) {
      case Ctx::kRoot:
        Fail("expected a JSON list of jobs ('['), got an object");
      case Ctx::kJobs:
        job_ = PendingJob();
        job_.job.line = source_->line();
        job_.index = job_count_++;
        stack_.push_back(Ctx::kJob);
        return true;
      case Ctx::kAttempts:
        attempt_ = PendingAttempt();
        stack_.push_back(Ctx::kAttempt);
        return true;
      case Ctx::kDetails:
        stack_.push_back(Ctx::kDetail);
        return true;
      case Ctx::kGpus:
        ++attempt_.gpus;
        stack_.push_back(Ctx::kSkip);
        return true;
      default:
        ContainerValue("an object");
        stack_.push_back(Ctx::kSkip);
        return true;
    }
  }

  bool start_array(std::size_t) override {
    const Ctx parent = stack_.empty() ? Ctx::kRoot : stack_.back();
    switch (parent) {
      case Ctx::kRoot:
        stack_.push_back(Ctx::kJobs);
        return true;
      case Ctx::kJobs:
        Fail(Where() + ": expected a job object, got a list");
      case Ctx::kAttempts:
        Fail(Where() + ": expected an attempt object, got a list");
      case Ctx::kDetails:
        Fail(Where() + ": expected a detail object {ip, gpus}, got a list");
      case Ctx::kGpus:
        ++attempt_.gpus;
        stack_.push_back(Ctx::kSkip);
        return true;
      case Ctx::kJob:
        if (key_ == "attempts") {
          stack_.push_back(Ctx::kAttempts);
          return true;
        }
        break;
      case Ctx::kAttempt:
        if (key_ == "detail") {
          stack_.push_back(Ctx::kDetails);
          return true;
        }
        break;
      case Ctx::kDetail:
        if (key_ == "gpus") {
          stack_.push_back(Ctx::kGpus);
          return true;
        }
        break;
      default:
        break;
    }
    ContainerValue("a list");
    stack_.push_back(Ctx::kSkip);
    return true;
  }

  bool end_object() override {
    const Ctx done = stack_.back();
    stack_.pop_back();
    if (done == Ctx::kJob) FinishJob();
    if (done == Ctx::kAttempt) FinishAttempt();
    return true;
  }

  bool end_array() override {
    stack_.pop_back();
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    std::string what = e.what();
    const size_t pos = what.find("syntax error");
    Fail("invalid JSON: " + (pos == std::string::npos ? what : what.substr(pos)));
  }

  // Jobs still running when the log ends are censored at its latest time, known at the end.
  void Finish() {
    for (OpenJob& open : open_jobs_) {
      open.job.duration += latest_time_ - open.start;  // >= 0: start is among the times
      open.attempts.push_back({open.start, latest_time_, open.gpus});
      AddWithRecord(std::move(open.job), open.attempts);
    }
  }

 private:
  enum class Ctx : uint8_t {
    kRoot,
    kJobs,
    kJob,
    kAttempts,
    kAttempt,
    kDetails,
    kDetail,
    kGpus,
    kSkip
  };
  enum class Kind : uint8_t { kNull, kString, kNumber, kOther };

  struct PendingJob {
    Job job;
    int64_t index = 0;
    bool has_id = false;
    bool has_submit = false;
    int attempts = 0;
    int missing_times = 0;
    bool last_open = false;  // the latest attempt has a start but no end
    double open_start = 0;
    int open_gpus = 0;
    std::vector<RecordedAttempt> recorded;  // attempts with both times
  };
  struct PendingAttempt {
    int gpus = 0;
    bool has_start = false;
    bool has_end = false;
    double start = 0;
    double end = 0;
    int64_t end_line = 0;
    int end_column = 0;
  };

  [[noreturn]] void Fail(const std::string& what) const {
    throw InputError(path_, static_cast<int>(source_->line()), source_->column(), what);
  }

  std::string Where() const {
    // Between job objects (a stray value in the list) the index is the next job's.
    const bool in_list = !stack_.empty() && stack_.back() == Ctx::kJobs;
    std::string where = "jobs[" + std::to_string(in_list ? job_count_ : job_.index) + "]";
    for (Ctx c : stack_) {
      if (c == Ctx::kAttempt) where += ".attempts[" + std::to_string(job_.attempts) + "]";
    }
    return where;
  }

  // A container where a known key expects a scalar is an error; under an unknown key it is
  // skipped.
  void ContainerValue(const char* what) const {
    const Ctx parent = stack_.back();
    const bool known = (parent == Ctx::kJob &&
                        (key_ == "status" || key_ == "vc" || key_ == "jobid" || key_ == "user" ||
                         key_ == "submitted_time" || key_ == "attempts")) ||
                       (parent == Ctx::kAttempt &&
                        (key_ == "start_time" || key_ == "end_time" || key_ == "detail")) ||
                       (parent == Ctx::kDetail && key_ == "gpus");
    if (known) {
      Fail(Where() + "." + key_ + ": expected " + ExpectedFor(key_) + ", got " + what);
    }
  }

  static std::string ExpectedFor(const std::string& key) {
    if (key == "attempts" || key == "detail" || key == "gpus") return "a list or null";
    if (key == "submitted_time") return "a time YYYY-MM-DD HH:MM:SS";
    if (key == "start_time" || key == "end_time") return "a time YYYY-MM-DD HH:MM:SS or None";
    if (key == "jobid") return "a string";
    return "a string or null";
  }

  [[noreturn]] void WrongType(const std::string& text) const {
    Fail(Where() + "." + key_ + ": expected " + ExpectedFor(key_) + ", got " +
         (text.empty() ? std::string("another type") : "\"" + text + "\""));
  }

  double Time(const std::string& text) {
    double seconds = 0;
    if (!ParseWallClock(text, &seconds)) WrongType(text);
    latest_time_ = std::max(latest_time_, seconds);
    return seconds;
  }

  static bool IsNone(Kind kind, const std::string& text) {
    return kind == Kind::kNull || (kind == Kind::kString && (text.empty() || text == "None"));
  }

  bool Scalar(Kind kind, const std::string& text) {
    const Ctx parent = stack_.empty() ? Ctx::kRoot : stack_.back();
    switch (parent) {
      case Ctx::kRoot:
        Fail("expected a JSON list of jobs ('[')");
      case Ctx::kJobs:
        Fail(Where() + ": expected a job object");
      case Ctx::kAttempts:
        if (kind == Kind::kNull) return true;
        Fail(Where() + ": expected an attempt object");
      case Ctx::kDetails:
        if (kind == Kind::kNull) return true;
        Fail(Where() + ": expected a detail object {ip, gpus}");
      case Ctx::kGpus:
        ++attempt_.gpus;
        return true;
      case Ctx::kJob:
        JobScalar(kind, text);
        return true;
      case Ctx::kAttempt:
        if (key_ == "start_time" || key_ == "end_time") {
          if (IsNone(kind, text)) return true;
          if (kind != Kind::kString) WrongType(text);
          const double t = Time(text);
          if (key_ == "start_time") {
            attempt_.has_start = true;
            attempt_.start = t;
          } else {
            attempt_.has_end = true;
            attempt_.end = t;
            attempt_.end_line = source_->line();
            attempt_.end_column = source_->column();
          }
        } else if (key_ == "detail" && kind != Kind::kNull) {
          WrongType(text);
        }
        return true;
      case Ctx::kDetail:
        if (key_ == "gpus" && kind != Kind::kNull) WrongType(text);
        return true;
      case Ctx::kSkip:
        return true;
    }
    return true;
  }

  void JobScalar(Kind kind, const std::string& text) {
    Job& job = job_.job;
    if (key_ == "jobid") {
      if ((kind != Kind::kString && kind != Kind::kNumber) || text.empty()) WrongType(text);
      job.id = text;
      job_.has_id = true;
    } else if (key_ == "submitted_time") {
      if (kind != Kind::kString || IsNone(kind, text)) WrongType(text);
      job.submit_time = Time(text);
      job_.has_submit = true;
    } else if (key_ == "status" || key_ == "vc" || key_ == "user") {
      if (kind == Kind::kNull) return;
      if (kind != Kind::kString) WrongType(text);
      if (key_ == "status") job.trace_status = text;
      if (key_ == "vc") job.vc = job.partition = text;  // a partition of a site model
      if (key_ == "user") job.user = text;
    } else if (key_ == "attempts" && kind != Kind::kNull) {
      WrongType(text);
    }
  }

  void FinishAttempt() {
    PendingAttempt& a = attempt_;
    if (job_.attempts == 0) job_.job.gpus = a.gpus;
    ++job_.attempts;
    job_.last_open = false;
    if (a.has_start && a.has_end) {
      if (a.end < a.start) {
        throw InputError(path_, static_cast<int>(a.end_line), a.end_column,
                         Where() + ".attempts[" + std::to_string(job_.attempts - 1) +
                             "].end_time: expected a time >= start_time");
      }
      job_.job.duration += a.end - a.start;
      job_.recorded.push_back({a.start, a.end, a.gpus});
    } else if (a.has_start) {
      job_.last_open = true;  // censored if no later attempt follows
      job_.open_start = a.start;
      job_.open_gpus = a.gpus;
    } else {
      ++job_.missing_times;
    }
  }

  void FinishJob() {
    Job& job = job_.job;
    if (!job_.has_id) {
      throw InputError(path_, static_cast<int>(job.line), 0,
                       "jobs[" + std::to_string(job_.index) + "]: missing the key \"jobid\"");
    }
    if (!job_.has_submit) {
      throw InputError(path_, static_cast<int>(job.line), 0,
                       "jobs[" + std::to_string(job_.index) + "] (" + job.id +
                           "): missing the key \"submitted_time\"");
    }
    const std::string status = job.trace_status.str();
    if (job_.attempts == 0) {
      job.trace_status = status + ":no-attempts";
    } else {
      // An open attempt that is not the last one lacks its end time by a logging error.
      std::string suffix;
      if (job_.missing_times > 0) suffix += ":missing-times";
      if (job_.last_open) {
        suffix += ":running-at-end";
      }
      if (!suffix.empty()) job.trace_status = status + suffix;
    }
    if (job_.attempts > 0 && job_.last_open) {
      open_jobs_.push_back(
          {std::move(job), job_.open_start, job_.open_gpus, std::move(job_.recorded)});
    } else {
      AddWithRecord(std::move(job), job_.recorded);
    }
  }

  // Hands the job to the sink with its recorded attempts (in file order) and the recorded start
  // and end they imply.
  void AddWithRecord(Job&& job, const std::vector<RecordedAttempt>& attempts) {
    if (!attempts.empty()) {
      job.recorded_start = attempts.front().start;
      job.recorded_end = attempts.front().end;
      for (const RecordedAttempt& a : attempts) {
        job.recorded_start = std::min(job.recorded_start, a.start);
        job.recorded_end = std::max(job.recorded_end, a.end);
      }
    }
    sink_->Add(std::move(job), attempts);
  }

  const std::string& path_;
  ByteSource* source_;
  JobSink* sink_;
  std::vector<Ctx> stack_;
  std::string key_;
  PendingJob job_;
  PendingAttempt attempt_;
  int64_t job_count_ = 0;
  double latest_time_ = -std::numeric_limits<double>::infinity();
  struct OpenJob {
    Job job;
    double start;                           // of its open last attempt
    int gpus;                               // of that attempt
    std::vector<RecordedAttempt> attempts;  // its closed attempts
  };
  std::vector<OpenJob> open_jobs_;
};

void ReadPhillyJson(const std::string& path, JobSink* sink) {
  ByteSource source(path);
  PhillyHandler handler(path, &source, sink);
  Json::sax_parse(ByteIterator(&source), ByteIterator(nullptr), &handler);
  handler.Finish();
}

bool IsPhillyJson(const std::string& path, const std::string& first) {
  const size_t start = first.find_first_not_of(" \t");
  if (start == std::string::npos || first[start] != '[') return false;
  std::string head(64 * 1024, '\0');
  InputFile in(path, "trace file");
  head.resize(in.Read(head.data(), head.size()));
  return head.find("\"jobid\"") != std::string::npos &&
         head.find("\"attempts\"") != std::string::npos &&
         head.find("\"submitted_time\"") != std::string::npos;
}

}  // namespace
}  // namespace clustersim

CLUSTERSIM_REGISTER_TRACE_READER(philly_json, "philly-json",
                                 "Philly cluster_job_log JSON: [{status, vc, jobid, user, "
                                 "submitted_time, attempts: [{start_time, end_time, detail}]}]",
                                 clustersim::IsPhillyJson, clustersim::ReadPhillyJson,
                                 /*generic=*/false, clustersim::TraceClock::kWallClock);
