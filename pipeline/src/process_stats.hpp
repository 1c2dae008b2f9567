#pragma once
// Internal: what a pipeline end reads about its own process around a run, for the cost model
// (docs/METRICS.md): CPU time, context switches, time waiting for a CPU, and threads.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "wirezip/pipeline/pipeline.hpp"

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

// This process's threads now, and the time they all spent runnable but not running, waiting on a
// run queue for a CPU (the second field of /proc/self/task/*/schedstat), from one walk of
// /proc/self/task. Where the host's CPUs also sat idle meanwhile, the queued time is lost to where
// the scheduler put the threads, not to work. A thread that ended drops out of the sum, so sample
// while a run's threads are all there. Zeros where /proc (or the kernel's schedstat) is not there.
struct TaskSample {
  std::uint64_t threads = 0, queued_ns = 0;
};
inline TaskSample sample_tasks() {
  std::error_code error;
  TaskSample sample;
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
       it.increment(error)) {
    ++sample.threads;
    std::ifstream stat(it->path() / "schedstat");
    std::uint64_t run_ns = 0, queued_ns = 0;
    if (stat >> run_ns >> queued_ns) sample.queued_ns += queued_ns;
  }
  return sample;
}

// The whole host's CPU time from /proc/stat's first line (every CPU, every process, interrupts and
// softirq included): where both ends of a run share one host, what the run left idle. Steal (the
// hypervisor running another guest) is neither ours nor idle, so it is kept apart. Zeros where
// /proc/stat cannot be read.
inline Result::HostCpu host_cpu_seconds() {
  std::ifstream stat("/proc/stat");
  std::string label;
  stat >> label;
  if (label != "cpu") return {};
  // user nice system idle iowait irq softirq steal; guest time is already in user and nice.
  std::uint64_t f[8] = {};
  for (auto& field : f) stat >> field;
  if (!stat) return {};
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return {.busy = static_cast<double>(f[0] + f[1] + f[2] + f[5] + f[6]) * tick,
          .idle = static_cast<double>(f[3] + f[4]) * tick,
          .steal = static_cast<double>(f[7]) * tick};
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
