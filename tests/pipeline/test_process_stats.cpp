#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "../../pipeline/src/process_stats.hpp"
#include "wirezip/util/cpus.hpp"

namespace wirezip::pipeline {
namespace {

using namespace std::chrono_literals;

// Two threads that never block, on one CPU: each waits on the run queue while the other runs, and
// the process's queued time grows by that wait.
TEST(ProcessStats, CountsThreadsAndTheTimeRunnableThreadsWaitForACpu) {
  if (!std::filesystem::exists("/proc/thread-self/schedstat")) GTEST_SKIP() << "this kernel keeps no schedstat";
  const int cpu = cpus::allowed().front();
  std::atomic<bool> stop{false};
  auto spin = [&] {
    cpus::pin_this_thread(cpu);
    while (!stop) {
    }
  };
  const std::uint64_t before = sample_tasks().queued_ns;
  TaskSample during;
  {
    std::jthread a(spin), b(spin);
    std::this_thread::sleep_for(200ms);
    during = sample_tasks();  // while both are there: an ended thread drops out of the sum
    stop = true;
  }
  EXPECT_GT(during.queued_ns, before);
  EXPECT_GE(during.threads, 3u);  // this thread and the two spinners
}

}  // namespace
}  // namespace wirezip::pipeline
