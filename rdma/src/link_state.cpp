#include "link_state.hpp"

#include "wirezip/util/error.hpp"

namespace wirezip::rdma {

void check_range(std::string_view link, const char* side, std::size_t offset, std::size_t length, std::size_t size) {
  if (offset > size || length > size - offset)
    fail("{}: {} range [{}, +{}) is outside the {}-byte buffer", link, side, offset, length, size);
}

template <typename Ready>
void LinkState::wait(std::condition_variable& changed, std::unique_lock<std::mutex>& lock, const char* what,
                     Ready ready) {
  const bool done = changed.wait_for(lock, timeout_, [&] { return failure_ || ready(); });
  if (ready()) return;  // it happened: a failure after it (the peer's ack, then its close) is for the next wait
  check_locked();
  if (!done) fail("{}: timed out after {} ms waiting for {}", name_, timeout_.count(), what);
}

void LinkState::add_in_flight() {
  std::lock_guard lock(mutex_);
  check_locked();
  if (in_flight_++ == 0) busy_since_ = std::chrono::steady_clock::now();
}

void LinkState::complete_writes(std::size_t count) {
  {
    std::lock_guard lock(mutex_);
    const std::size_t before = in_flight_;
    in_flight_ -= std::min(count, in_flight_);
    if (before > 0 && in_flight_ == 0)
      busy_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_since_).count();
  }
  completed_.notify_all();
}

double LinkState::busy_seconds() const {
  std::lock_guard lock(mutex_);
  double busy = busy_seconds_;
  if (in_flight_ > 0) busy += std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_since_).count();
  return busy;
}

std::size_t LinkState::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

void LinkState::wait_in_flight_at_most(std::size_t count) {
  std::unique_lock lock(mutex_);
  wait(completed_, lock, "write completions", [&] { return in_flight_ <= count; });
}

void LinkState::push_arrival(const Arrival& arrival) {
  bool flood = false;
  {
    std::lock_guard lock(mutex_);
    flood = arrivals_.size() >= kMaxQueuedArrivals;
    if (!flood) arrivals_.push_back(arrival);
  }
  if (flood)
    return fail_link(fmt::format("the peer sent over {} notifications nobody consumed (a flood)", kMaxQueuedArrivals));
  arrived_.notify_all();
}

void LinkState::heard() {
  std::lock_guard lock(mutex_);
  last_heard_ = std::chrono::steady_clock::now();
}

std::chrono::steady_clock::time_point LinkState::last_heard() const {
  std::lock_guard lock(mutex_);
  return last_heard_;
}

Arrival LinkState::wait_arrival() {
  std::unique_lock lock(mutex_);
  // Arrivals that came before a failure are still delivered.
  if (arrivals_.empty()) wait(arrived_, lock, "an arrival from the peer", [&] { return !arrivals_.empty(); });
  Arrival arrival = arrivals_.front();
  arrivals_.pop_front();
  return arrival;
}

std::optional<Arrival> LinkState::wait_arrival_for(std::chrono::microseconds wait) {
  std::unique_lock lock(mutex_);
  // A zero wait is a poll. A timed wait on a deadline already past would still enter the kernel,
  // and register a waiter that every push meanwhile pays a wake-up for.
  if (wait.count() > 0) arrived_.wait_for(lock, wait, [&] { return failure_ || !arrivals_.empty(); });
  return pop_locked();
}

std::optional<Arrival> LinkState::poll_arrival() {
  std::lock_guard lock(mutex_);
  return pop_locked();
}

std::optional<Arrival> LinkState::pop_locked() {
  if (arrivals_.empty()) {
    check_locked();  // nothing queued: a failed link says so
    return std::nullopt;
  }
  Arrival arrival = arrivals_.front();
  arrivals_.pop_front();
  return arrival;
}

void LinkState::fail_link(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = reason;
  }
  completed_.notify_all();
  arrived_.notify_all();
}

void LinkState::check() const {
  std::lock_guard lock(mutex_);
  check_locked();
}

void LinkState::check_locked() const {
  if (!failure_) return;
  // Reasons the transport raised on its own threads may already name the link: once is enough.
  if (failure_->starts_with(name_ + ": ")) fail("{}", *failure_);
  fail("{}: {}", name_, *failure_);
}

}  // namespace wirezip::rdma
