// Progress on a terminal for commands that run many simulations (compare, sweep, plan), and the
// shared pieces of `run`'s bar.
//
// BatchProgress draws one status line on stderr, rewritten in place with '\r': runs done out of
// the total, runs running, time elapsed and an estimate of the time left. It draws only when
// enabled (the caller passes whether stderr is a terminal), so piped or redirected output never
// holds control characters. Runs execute on worker threads: every method may be called from any
// thread (one mutex). Each running run reports the fraction of its jobs done through the
// engine's progress callback; the ETA is elapsed x (total - progress) / progress with progress =
// runs done + the running runs' fractions, i.e. the throughput so far (all workers together)
// extrapolated to the work left.
#ifndef CLUSTERSIM_APP_PROGRESS_H_
#define CLUSTERSIM_APP_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace clustersim {

// "45 s", "3 min 05 s", "2 h 04 min". REQUIRES: seconds >= 0.
std::string FormatWallTime(double seconds);

// Estimated seconds left when `fraction` (in (0, 1]) of the work took `elapsed_seconds`; a
// negative number when no estimate exists yet (fraction 0).
double EstimateSecondsLeft(double elapsed_seconds, double fraction);

class BatchProgress {
 public:
  // `noun` names the units ("runs", "simulations"). With `open_ended` the total is only what has
  // been queued so far (AddTotal), as in plan's search: the ETA is then for the queued work.
  BatchProgress(std::string noun, size_t total, bool enabled, bool open_ended = false);
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
  bool enabled() const { return enabled_; }

 private:
  void DrawLocked(bool force);
  void ClearLocked();

  const std::string noun_;
  const bool enabled_;
  const bool open_ended_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  size_t total_ = 0;
  size_t done_ = 0;
  int next_slot_ = 0;
  std::map<int, double> running_;  // slot -> fraction done
  std::chrono::steady_clock::time_point last_draw_{};
  size_t drawn_width_ = 0;  // characters of the line on screen
};

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_PROGRESS_H_
