// BoundedQueue<T>: a first-in first-out hand-over between threads holding at most `capacity`
// items. Push blocks while the queue is full, Pop while it is empty; Close() wakes both sides:
// afterwards Push drops its item and returns false, and Pop returns the items still queued, then
// false. Items move through the queue: once pushed, an item belongs to the thread that pops it,
// so no state is shared between the two sides but the queue itself (one mutex, two condition
// variables).
//
// Used by the SQLite writer (sim/output/sqlite_writer.h) to hand row batches from the engine's
// thread to its writer thread, and empty batches back.
#ifndef CLUSTERSIM_SIM_UTIL_BOUNDED_QUEUE_H_
#define CLUSTERSIM_SIM_UTIL_BOUNDED_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <utility>

namespace clustersim {

template <typename T>
class BoundedQueue {
 public:
  // REQUIRES: capacity >= 1.
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Appends `item`, waiting while the queue holds `capacity` items. Returns false (and drops the
  // item) once the queue is closed.
  bool Push(T item) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Moves the oldest item into `*item`, waiting while the queue is empty and open. Returns false
  // when the queue is closed and empty.
  bool Pop(T* item) {
    std::unique_lock<std::mutex> lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }

  // Like Pop, but never waits: returns false when the queue is empty.
  bool TryPop(T* item) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (items_.empty()) return false;
    *item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }

  // No more items: wakes every waiting Push (which then fails) and Pop (which drains the queue).
  void Close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_BOUNDED_QUEUE_H_
