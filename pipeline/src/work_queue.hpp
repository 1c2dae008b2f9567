#pragma once
// Internal: a small blocking queue between the pipeline's threads. close() wakes every waiter
// for good, so a failure on one side never leaves a thread blocked on the other.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace wirezip::pipeline {

template <typename T>
class WorkQueue {
 public:
  void push(T item) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(item));
    }
    changed_.notify_one();
  }
  // The next item, or nothing when closed or nothing came within `timeout`.
  std::optional<T> pop(std::chrono::microseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    return take_locked();
  }
  // Without waiting: a timed wait on a deadline already past would still enter the kernel.
  std::optional<T> try_pop() {
    std::lock_guard lock(mutex_);
    return take_locked();
  }
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }
  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  std::optional<T> take_locked() {
    if (items_.empty() || closed_) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace wirezip::pipeline
