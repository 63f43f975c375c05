#include "app/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "app/options.h"
#include "sim/util/error.h"
#include "sim/util/suggest.h"

namespace po = boost::program_options;

namespace clustersim {

std::string FormatWallTime(double seconds) {
  const long long s = std::llround(std::max(0.0, seconds));
  char buffer[48];
  if (s < 60) {
    std::snprintf(buffer, sizeof buffer, "%lld s", s);
  } else if (s < 3600) {
    std::snprintf(buffer, sizeof buffer, "%lld min %02lld s", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lld h %02lld min", s / 3600, s % 3600 / 60);
  }
  return buffer;
}

double EstimateSecondsLeft(double elapsed_seconds, double fraction) {
  if (!(fraction > 0)) return -1;
  return elapsed_seconds * std::max(0.0, 1 - fraction) / fraction;
}

std::string RunProgressDetail(const EngineProgress& p) {
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, "t=%.0f h  jobs %lld/%lld  events %llu", p.sim_time / 3600,
                static_cast<long long>(p.jobs_done), static_cast<long long>(p.jobs_total),
                static_cast<unsigned long long>(p.events));
  return buffer;
}

double RunProgressFraction(const EngineProgress& p) {
  return p.jobs_total > 0 ? static_cast<double>(p.jobs_done) / p.jobs_total : 1.0;
}

void AddProgressOptions(po::options_description& desc, ProgressOptions* options) {
  desc.add_options()(
      "progress", po::value(&options->mode)->default_value("auto"),
      "auto | always | never: auto draws a progress line on a terminal only; always also logs a "
      "line every --progress-interval when stderr is not a terminal (logs, batch jobs)")(
      "progress-interval",
      DurationValue("--progress-interval", &options->interval_seconds)->default_value("60"),
      "time between progress lines when stderr is not a terminal (a duration: 60, 5min)")(
      "no-progress", po::bool_switch(&options->no_progress), "the same as --progress never");
}

ProgressStyle ResolveProgress(const ProgressOptions& options, bool stderr_is_terminal) {
  const std::vector<std::string> modes = {"auto", "always", "never"};
  if (std::find(modes.begin(), modes.end(), options.mode) == modes.end()) {
    throw InputError("--progress " + options.mode + ": expected auto, always or never" +
                     DidYouMean(options.mode, modes));
  }
  if (!(options.interval_seconds > 0) || !std::isfinite(options.interval_seconds)) {
    throw InputError("--progress-interval: expected a positive duration");
  }
  if (options.no_progress && options.mode != "auto" && options.mode != "never") {
    throw InputError("--no-progress and --progress " + options.mode + ": give one of them");
  }
  ProgressStyle style;
  style.log_interval_seconds = options.interval_seconds;
  if (options.no_progress || options.mode == "never") return style;
  if (stderr_is_terminal) {
    style.kind = ProgressStyle::kTerminal;
  } else if (options.mode == "always") {
    style.kind = ProgressStyle::kLog;
  }
  return style;
}

ProgressStyle ResolveProgress(const ProgressOptions& options) {
  return ResolveProgress(options, ::isatty(STDERR_FILENO) != 0);
}

BatchProgress::BatchProgress(std::string noun, size_t total, ProgressStyle style, bool open_ended,
                             std::string command)
    : noun_(std::move(noun)),
      style_(style),
      open_ended_(open_ended),
      command_(std::move(command)),
      start_(std::chrono::steady_clock::now()),
      total_(total) {
  last_draw_ = start_;
}

BatchProgress::~BatchProgress() {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearLocked();
}

void BatchProgress::AddTotal(size_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_ += count;
  DrawLocked(false);
}

int BatchProgress::Begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  const int slot = next_slot_++;
  running_[slot] = 0;
  DrawLocked(true);
  return slot;
}

void BatchProgress::Update(int slot, double fraction) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_[slot] = std::clamp(fraction, 0.0, 1.0);
  DrawLocked(false);
}

void BatchProgress::End(int slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(slot);
  ++done_;
  DrawLocked(true);
}

void BatchProgress::Print(std::FILE* stream, const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  ClearLocked();
  std::fputs(text.c_str(), stream);
  std::fflush(stream);
  DrawLocked(true);
}

void BatchProgress::ClearLocked() {
  if (style_.kind != ProgressStyle::kTerminal || drawn_width_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
  std::fflush(stderr);
  drawn_width_ = 0;
}

void BatchProgress::DrawLocked(bool force) {
  if (!style_.enabled()) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (style_.kind == ProgressStyle::kLog) {
    // A log line per interval, whatever started or ended in between.
    if (since < style_.log_interval_seconds) return;
  } else if (!force && since < 0.2) {
    return;  // at most five redraws a second unless something started or ended
  }
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  double progress = static_cast<double>(done_);
  for (const auto& [slot, fraction] : running_) progress += fraction;
  const double fraction = total_ > 0 ? std::min(1.0, progress / total_) : 0.0;
  char line[200];
  int n = 0;
  if (style_.kind == ProgressStyle::kTerminal) {
    const int width = 20;
    const int filled = static_cast<int>(fraction * width);
    n = std::snprintf(line, sizeof line, "[%-*s] %s %zu/%zu done, %zu running, %s elapsed", width,
                      std::string(filled, '#').c_str(), noun_.c_str(), done_, total_,
                      running_.size(), FormatWallTime(elapsed).c_str());
  } else {
    n = std::snprintf(line, sizeof line,
                      "%s: progress %.1f %%: %s %zu/%zu done, %zu running, %s "
                      "elapsed",
                      command_.c_str(), 100 * fraction, noun_.c_str(), done_, total_,
                      running_.size(), FormatWallTime(elapsed).c_str());
  }
  const double left = EstimateSecondsLeft(elapsed, fraction);
  if (n > 0 && n < static_cast<int>(sizeof line)) {
    if (left >= 0 && done_ < total_) {
      std::snprintf(line + n, sizeof line - n, ", ETA %s%s", FormatWallTime(left).c_str(),
                    open_ended_ ? " (of the queued ones)" : "");
    } else if (style_.kind == ProgressStyle::kLog && done_ < total_) {
      std::snprintf(line + n, sizeof line - n, ", ETA unknown yet");
    }
  }
  const std::string text = line;
  if (style_.kind == ProgressStyle::kLog) {
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
    return;
  }
  std::fprintf(stderr, "\r%s", text.c_str());
  if (text.size() < drawn_width_) {
    std::fprintf(stderr, "%*s", static_cast<int>(drawn_width_ - text.size()), "");
  }
  std::fflush(stderr);
  drawn_width_ = std::max(drawn_width_, text.size());
}

TaskProgress::TaskProgress(std::string command, ProgressStyle style)
    : command_(std::move(command)),
      style_(style),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

TaskProgress::~TaskProgress() {
  if (style_.kind == ProgressStyle::kTerminal && drawn_width_ > 0) {
    std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
    std::fflush(stderr);
  }
}

void TaskProgress::Update(double fraction, const std::string& detail) {
  if (!style_.enabled()) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_draw_).count();
  if (since < (style_.kind == ProgressStyle::kLog ? style_.log_interval_seconds : 0.2)) return;
  last_draw_ = now;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double left = EstimateSecondsLeft(elapsed, fraction);
  const std::string eta = left < 0 ? "unknown yet" : FormatWallTime(left);
  char line[400];
  if (style_.kind == ProgressStyle::kLog) {
    std::snprintf(line, sizeof line, "%s: progress %.1f %%: %s, %s elapsed, ETA %s",
                  command_.c_str(), 100 * fraction, detail.c_str(), FormatWallTime(elapsed).c_str(),
                  eta.c_str());
    std::fprintf(stderr, "%s\n", line);
    std::fflush(stderr);
    return;
  }
  const int width = 30;
  const int filled = static_cast<int>(fraction * width);
  std::snprintf(line, sizeof line, "[%-*s] %5.1f%%  %s  ETA %s", width,
                std::string(filled, '#').c_str(), 100 * fraction, detail.c_str(),
                left < 0 ? "-" : eta.c_str());
  const std::string text = line;
  std::fprintf(stderr, "\r%s", text.c_str());
  if (text.size() < drawn_width_) {
    std::fprintf(stderr, "%*s", static_cast<int>(drawn_width_ - text.size()), "");
  }
  std::fflush(stderr);
  drawn_width_ = std::max(drawn_width_, text.size());
}

}  // namespace clustersim
