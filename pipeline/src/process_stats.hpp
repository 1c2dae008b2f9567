#pragma once
// Internal: what a pipeline end reads about its own process around a run, for the cost model
// (docs/METRICS.md): CPU time, context switches and threads.
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>

namespace wirezip::pipeline {

inline std::uint64_t process_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// Voluntary (blocked) plus involuntary (preempted) switches of every thread of this process.
inline std::uint64_t process_switches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_nvcsw) + static_cast<std::uint64_t>(usage.ru_nivcsw);
}

// Threads of this process now (0 where /proc is not there to say).
inline std::uint64_t process_threads() {
  std::error_code error;
  std::uint64_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end; it.increment(error)) ++n;
  return n;
}

// CPU time of the calling thread: what a stage cost, whatever else shared its core meanwhile.
inline std::uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

inline std::int64_t nanoseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace wirezip::pipeline
