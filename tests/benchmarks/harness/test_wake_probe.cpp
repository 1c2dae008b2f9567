// wake_probe: every wake-up measured between two CPUs of the set, and a set it cannot use refused
// with the reason (never a made-up figure). No bound on the latency: that is the host's.
#include <gtest/gtest.h>
#include <sched.h>

#include "wake_probe.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

cpu_set_t this_process_cpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  EXPECT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  return cpus;
}

TEST(WakeProbe, MeasuresEveryWakeupBetweenTwoCpusOfTheSet) {
  const cpu_set_t cpus = this_process_cpus();
  if (CPU_COUNT(&cpus) < 2) {  // the probe must say why it cannot run, not make a figure up
    EXPECT_THROW(measure_wake_latency(cpus, 20, std::chrono::microseconds(50)), Error);
    return;
  }
  const WakeLatency w = measure_wake_latency(cpus, 20, std::chrono::microseconds(50));
  EXPECT_EQ(w.wakeups, 20);
  EXPECT_NE(w.waker_cpu, w.sleeper_cpu);
  EXPECT_TRUE(CPU_ISSET(w.waker_cpu, &cpus));
  EXPECT_TRUE(CPU_ISSET(w.sleeper_cpu, &cpus));
  EXPECT_GT(w.median_us, 0.0);
  EXPECT_GE(w.p90_us, w.median_us);
}

TEST(WakeProbe, OneCpuIsNotMeasuredAndSaysWhy) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  try {
    measure_wake_latency(one);
    FAIL() << "measured on one CPU";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "wake probe: needs two CPUs, the set has 1");
  }
  EXPECT_EQ(wake_latency_context(one), "not measured: wake probe: needs two CPUs, the set has 1");
}

TEST(WakeProbe, RefusesZeroWakeups) {
  const cpu_set_t cpus = this_process_cpus();
  EXPECT_THROW(measure_wake_latency(cpus, 0), Error);
}

}  // namespace
}  // namespace wirezip::harness
