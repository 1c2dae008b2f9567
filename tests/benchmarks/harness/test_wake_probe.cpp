// wake_probe: every wake-up measured between two CPUs of the set, and a set it cannot use refused
// with the reason (never a made-up figure). No bound on the latency: that is the host's.
#include <gtest/gtest.h>

#include <algorithm>

#include "wake_probe.hpp"
#include "wirezip/util/cpus.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

TEST(WakeProbe, MeasuresEveryWakeupBetweenTwoCpusOfTheSet) {
  const std::vector<int> cpus = cpus::allowed();
  if (cpus.size() < 2) {  // the probe must say why it cannot run, not make a figure up
    EXPECT_THROW(measure_wake_latency(cpus, 20, std::chrono::microseconds(50)), Error);
    return;
  }
  const WakeLatency w = measure_wake_latency(cpus, 20, std::chrono::microseconds(50));
  EXPECT_EQ(w.wakeups, 20);
  EXPECT_NE(w.waker_cpu, w.sleeper_cpu);
  EXPECT_NE(std::find(cpus.begin(), cpus.end(), w.waker_cpu), cpus.end());
  EXPECT_NE(std::find(cpus.begin(), cpus.end(), w.sleeper_cpu), cpus.end());
  EXPECT_GT(w.median_us, 0.0);
  EXPECT_GE(w.p90_us, w.median_us);
}

// The sleeper's CPU kept awake by a SCHED_IDLE spinner: still every wake-up measured, and the
// spinner gone afterwards (the probe returns only once it has stopped; no bound on the figure).
TEST(WakeProbe, MeasuresWithTheSleepersCpuKeptAwake) {
  const std::vector<int> cpus = cpus::allowed();
  if (cpus.size() < 2) {
    EXPECT_THROW(measure_wake_latency(cpus, 20, std::chrono::microseconds(50), SleeperCpu::kept_awake), Error);
    return;
  }
  const WakeLatency w = measure_wake_latency(cpus, 20, std::chrono::microseconds(50), SleeperCpu::kept_awake);
  EXPECT_EQ(w.wakeups, 20);
  EXPECT_NE(w.waker_cpu, w.sleeper_cpu);
  EXPECT_GT(w.median_us, 0.0);
  EXPECT_GE(w.p90_us, w.median_us);
  EXPECT_EQ(wake_latency_context({0}, SleeperCpu::kept_awake),
            "not measured: wake probe: needs two CPUs, the set has 1");
}

TEST(WakeProbe, OneCpuIsNotMeasuredAndSaysWhy) {
  const std::vector<int> one{0};
  try {
    measure_wake_latency(one);
    FAIL() << "measured on one CPU";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "wake probe: needs two CPUs, the set has 1");
  }
  EXPECT_EQ(wake_latency_context(one), "not measured: wake probe: needs two CPUs, the set has 1");
}

TEST(WakeProbe, RefusesZeroWakeups) { EXPECT_THROW(measure_wake_latency(cpus::allowed(), 0), Error); }

}  // namespace
}  // namespace wirezip::harness
