// Progress of long commands (run, compare, sweep, plan, validate, trace generate): how it is
// shown, and the two lines that show it.
//
// `--progress auto|always|never` (AddProgressOptions): auto (the default) draws a line rewritten
// in place with '\r' when stderr is a terminal and prints nothing otherwise, so piped output
// never holds control characters; always does the same on a terminal and, when stderr is not a
// terminal (a log file, a batch job), prints a plain line every `--progress-interval` seconds
// (default 60): what is done, the time elapsed and the estimated time left; never prints nothing.
//
// BatchProgress is the line of commands that run many simulations (compare, sweep, plan,
// validate --search): runs done out of the total, runs running, time elapsed and an estimate of
// the time left. Runs execute on worker threads: every method may be called from any thread (one
// mutex). Each running run reports the fraction of its jobs done through the engine's progress
// callback; the ETA is elapsed x (total - progress) / progress with progress = runs done + the
// running runs' fractions, i.e. the throughput so far (all workers together) extrapolated to the
// work left. TaskProgress is the line of one task (a run, a generated trace): its fraction done,
// a detail the caller words, elapsed and ETA on the same rule.
#ifndef CLUSTERSIM_APP_PROGRESS_H_
#define CLUSTERSIM_APP_PROGRESS_H_

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "sim/engine/engine.h"

namespace clustersim {

// "45 s", "3 min 05 s", "2 h 04 min". REQUIRES: seconds >= 0.
std::string FormatWallTime(double seconds);

// Estimated seconds left when `fraction` (in (0, 1]) of the work took `elapsed_seconds`; a
// negative number when no estimate exists yet (fraction 0).
double EstimateSecondsLeft(double elapsed_seconds, double fraction);

// Where progress goes: nowhere, a line redrawn in place on a terminal, or a log line every
// `log_interval_seconds` on stderr.
struct ProgressStyle {
  enum Kind { kOff, kTerminal, kLog } kind = kOff;
  double log_interval_seconds = 60;
  bool enabled() const { return kind != kOff; }
};

// What --progress and --progress-interval parse into (AddProgressOptions).
struct ProgressOptions {
  std::string mode = "auto";
  double interval_seconds = 60;
  bool no_progress = false;  // --no-progress, the former spelling of --progress never
};

// Adds --progress auto|always|never, --progress-interval (a duration) and --no-progress.
void AddProgressOptions(boost::program_options::options_description& desc,
                        ProgressOptions* options);

// The style for `options` given whether stderr is a terminal. Throws InputError for a mode other
// than auto, always or never ("did you mean"), an interval that is not positive, or
// --no-progress with another --progress than never.
ProgressStyle ResolveProgress(const ProgressOptions& options, bool stderr_is_terminal);
// The same, asking whether stderr is a terminal.
ProgressStyle ResolveProgress(const ProgressOptions& options);

// A run's TaskProgress detail: "t=120 h  jobs 4512/10000  events 1200000" (simulated time,
// jobs that reached a final state, events processed).
std::string RunProgressDetail(const EngineProgress& progress);
// The fraction of a run's jobs that reached a final state (1 for a trace without jobs).
double RunProgressFraction(const EngineProgress& progress);

class BatchProgress {
 public:
  // `noun` names the units ("runs", "simulations"). With `open_ended` the total is only what has
  // been queued so far (AddTotal), as in plan's search: the ETA is then for the queued work.
  // `command` prefixes log lines ("clustersim compare").
  BatchProgress(std::string noun, size_t total, ProgressStyle style, bool open_ended = false,
                std::string command = "clustersim");
  ~BatchProgress();  // clears the line
  BatchProgress(const BatchProgress&) = delete;
  BatchProgress& operator=(const BatchProgress&) = delete;

  void AddTotal(size_t count);
  // A run starts: returns its slot for Update and End.
  int Begin();
  // The run in `slot` has done `fraction` in [0, 1] of its jobs.
  void Update(int slot, double fraction);
  void End(int slot);
  // Prints `text` (a whole line or lines, newline included) on `stream` without tearing the
  // status line: clears it, prints, draws it again.
  void Print(std::FILE* stream, const std::string& text);
  bool enabled() const { return style_.enabled(); }

 private:
  void DrawLocked(bool force);
  void ClearLocked();

  const std::string noun_;
  const ProgressStyle style_;
  const bool open_ended_;
  const std::string command_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  size_t total_ = 0;
  size_t done_ = 0;
  int next_slot_ = 0;
  std::map<int, double> running_;  // slot -> fraction done
  std::chrono::steady_clock::time_point last_draw_{};
  size_t drawn_width_ = 0;  // characters of the line on screen
};

// The progress of one task, reported from one thread at a time.
class TaskProgress {
 public:
  // `command` prefixes log lines ("clustersim run").
  TaskProgress(std::string command, ProgressStyle style);
  ~TaskProgress();  // clears the line
  TaskProgress(const TaskProgress&) = delete;
  TaskProgress& operator=(const TaskProgress&) = delete;

  // `fraction` in [0, 1] of the task is done; `detail` says what in the task's terms
  // ("t=120 h  jobs 4512/10000  events 1200000"). Redraws at most five times a second on a
  // terminal, logs at most once per interval otherwise.
  void Update(double fraction, const std::string& detail);
  bool enabled() const { return style_.enabled(); }

 private:
  const std::string command_;
  const ProgressStyle style_;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  size_t drawn_width_ = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_PROGRESS_H_
