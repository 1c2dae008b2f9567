#pragma once
// Elapsed time the way the benchmarks read it: steady_clock, in seconds as a double.
#include <chrono>

namespace wirezip {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace wirezip
