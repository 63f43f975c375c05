#include "app/progress.h"

#include <algorithm>
#include <cmath>

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

BatchProgress::BatchProgress(std::string noun, size_t total, bool enabled, bool open_ended)
    : noun_(std::move(noun)),
      enabled_(enabled),
      open_ended_(open_ended),
      start_(std::chrono::steady_clock::now()),
      total_(total) {}

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
  if (!enabled_ || drawn_width_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(drawn_width_), "");
  std::fflush(stderr);
  drawn_width_ = 0;
}

void BatchProgress::DrawLocked(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // At most five redraws a second unless something started or ended.
  if (!force && now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  double progress = static_cast<double>(done_);
  for (const auto& [slot, fraction] : running_) progress += fraction;
  const double fraction = total_ > 0 ? std::min(1.0, progress / total_) : 0.0;
  const int width = 20;
  const int filled = static_cast<int>(fraction * width);
  char line[200];
  int n = std::snprintf(line, sizeof line, "[%-*s] %s %zu/%zu done, %zu running, %s elapsed", width,
                        std::string(filled, '#').c_str(), noun_.c_str(), done_, total_,
                        running_.size(), FormatWallTime(elapsed).c_str());
  const double left = EstimateSecondsLeft(elapsed, fraction);
  if (left >= 0 && done_ < total_ && n > 0 && n < static_cast<int>(sizeof line)) {
    std::snprintf(line + n, sizeof line - n, ", ETA %s%s", FormatWallTime(left).c_str(),
                  open_ended_ ? " (of the queued ones)" : "");
  }
  const std::string text = line;
  std::fprintf(stderr, "\r%s", text.c_str());
  if (text.size() < drawn_width_) {
    std::fprintf(stderr, "%*s", static_cast<int>(drawn_width_ - text.size()), "");
  }
  std::fflush(stderr);
  drawn_width_ = std::max(drawn_width_, text.size());
}

}  // namespace clustersim
