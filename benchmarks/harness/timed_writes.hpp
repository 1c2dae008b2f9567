#pragma once
// bench_rdma's timed loop, shared with the raw pipeline's baseline so that both time the same thing.
#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::harness {

// Posts `count` plain writes back to back (the transport's depth bounds those in flight; none
// notifies the peer), then waits for every completion. `next(i)` gives write i's offset, the same
// on both sides, and its length. Returns the seconds from the first post to the last completion.
template <typename Next>
double time_writes(rdma::Endpoint& sender, std::size_t count, Next&& next) {
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    const std::pair<std::size_t, std::size_t> write = next(i);
    sender.post_write(write.first, write.first, write.second, std::nullopt);
  }
  sender.wait_in_flight_at_most(0);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace wirezip::harness
