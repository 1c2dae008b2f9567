#pragma once
// Internal: the bookkeeping the mem and tcp endpoints share. Writes in flight, arrivals queued,
// and the link's failure: once failed (peer gone, protocol error), every wait throws its reason.
// Every wait is bounded by the link's timeout. Completions and arrivals wake only the threads
// waiting for them (two condition variables): a completion of each write (an ack, a copy done)
// must not wake a thread that waits for the peer's next message, once per chunk, for nothing.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::rdma {

// Throws unless [offset, offset + length) lies inside a buffer of `size` bytes.
void check_range(std::string_view link, const char* side, std::size_t offset, std::size_t length, std::size_t size);

class LinkState {
 public:
  LinkState(std::string name, std::chrono::milliseconds timeout) : name_(std::move(name)), timeout_(timeout) {}

  void add_in_flight();
  double busy_seconds() const;  // time with in_flight > 0, the current stretch included
  void complete_writes(std::size_t count);
  std::size_t in_flight() const;
  void wait_in_flight_at_most(std::size_t count);

  // Queues an arrival. An honest peer never has more than its depth unconsumed; past
  // kMaxQueuedArrivals the peer is flooding and the link fails (memory stays bounded).
  void push_arrival(const Arrival& arrival);
  static constexpr std::size_t kMaxQueuedArrivals = 4096;
  Arrival wait_arrival();
  std::optional<Arrival> poll_arrival();
  std::optional<Arrival> wait_arrival_for(std::chrono::microseconds wait);

  // Marks the link failed (the first reason wins) and wakes every waiter.
  void fail_link(const std::string& reason);
  // Throws the failure, if any.
  void check() const;
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Any message from the peer: stamps the time (Endpoint::last_heard).
  void heard();
  std::chrono::steady_clock::time_point last_heard() const;

 private:
  void check_locked() const;
  std::optional<Arrival> pop_locked();
  // Waits for `ready` under the lock; throws on failure or timeout, naming `what`.
  template <typename Ready>
  void wait(std::condition_variable& changed, std::unique_lock<std::mutex>& lock, const char* what, Ready ready);

  const std::string name_;
  const std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::condition_variable completed_;  // in_flight_ went down (or the link failed)
  std::condition_variable arrived_;    // an arrival was queued (or the link failed)
  std::size_t in_flight_ = 0;
  std::chrono::steady_clock::time_point busy_since_;
  double busy_seconds_ = 0;
  std::deque<Arrival> arrivals_;
  std::chrono::steady_clock::time_point last_heard_ = std::chrono::steady_clock::now();
  std::optional<std::string> failure_;
};

}  // namespace wirezip::rdma
