#pragma once
// How long this host takes to run a thread woken on a CPU that sat idle: on a virtual machine a
// halted vCPU must be scheduled again by the hypervisor first, which can cost tens of
// microseconds per wake-up. A pipeline hands each chunk from thread to thread several times, and
// the shared-core model counts no wake-up: this figure beside a run says what one costs on the
// host, so runs on different hosts (or with the guest's halt polling on and off) can be compared.
#include <chrono>
#include <string>
#include <vector>

namespace wirezip::harness {

struct WakeLatency {
  double median_us = 0, p90_us = 0;
  int wakeups = 0;
  int waker_cpu = -1, sleeper_cpu = -1;
};

// Wakes a thread pinned to the second CPU of `cpus` (cpus::allowed(), say) from one pinned to the first, `wakeups`
// times, each after the sleeper's CPU sat idle for `idle`; the latency is from the waker's
// notify to the sleeper running. Throws wirezip::Error where `cpus` holds fewer than two CPUs,
// a thread cannot be pinned, or a wake-up takes longer than a second.
WakeLatency measure_wake_latency(const std::vector<int>& cpus, int wakeups = 200,
                                 std::chrono::microseconds idle = std::chrono::microseconds(200));

// The context value: "median 34.1 us, p90 51.2 us (200 wake-ups, cpu 0 -> 1)", or "not measured: <why>".
std::string wake_latency_context(const std::vector<int>& cpus);

}  // namespace wirezip::harness
