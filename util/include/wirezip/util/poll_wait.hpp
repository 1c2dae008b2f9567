#pragma once
// The timeout of a poll(2) loop that moves several waits on at once, each with its own deadline:
// it must wake by the earliest of them, and by the time it stops taking new work, and it looks
// around at least every `most` whatever they say.
#include <algorithm>
#include <chrono>

namespace wirezip {

// The earliest of `first` and the deadline of each item (deadline_of(item)); `first` alone when
// there are no items. Pass steady_clock::time_point::max() as `first` for "no bound of its own".
template <typename Items, typename DeadlineOf>
std::chrono::steady_clock::time_point earliest_deadline(std::chrono::steady_clock::time_point first, const Items& items,
                                                        DeadlineOf deadline_of) {
  for (const auto& item : items) first = std::min(first, deadline_of(item));
  return first;
}

// poll()'s timeout in ms from `now` until `wake`: 0 once it has passed, rounded up before (so the
// loop does not wake just short of a deadline and spin), at most `most`.
inline int poll_timeout_ms(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::time_point wake,
                           std::chrono::milliseconds most) {
  if (wake <= now) return 0;
  const auto left = wake - now;  // wake > now: no overflow, even for time_point::max()
  if (left >= most) return static_cast<int>(most.count());
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

}  // namespace wirezip
