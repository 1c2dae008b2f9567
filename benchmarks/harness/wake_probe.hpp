#pragma once
// How long this host takes to run a thread woken on a CPU that sat idle: on a virtual machine a
// halted vCPU must be scheduled again by the hypervisor first, which can cost tens of
// microseconds per wake-up. A pipeline hands each chunk from thread to thread several times, and
// the shared-core model counts no wake-up: this figure beside a run says what one costs on the
// host, so runs on different hosts (or with the guest's halt polling on and off) can be compared.
// Measured a second way, with the sleeper's CPU kept awake by a spinning thread of the lowest
// priority (SCHED_IDLE, which yields to the woken thread at once), it tells the two costs apart:
// a CPU's coming out of its idle state (which idle=poll or halt polling remove), and the delivery
// of the wake-up itself (on a virtual machine, the hypervisor's interrupt to the other vCPU).
#include <chrono>
#include <string>
#include <vector>

namespace wirezip::harness {

struct WakeLatency {
  double median_us = 0, p90_us = 0;
  int wakeups = 0;
  int waker_cpu = -1, sleeper_cpu = -1;
};

// How the sleeper's CPU spends the time between wake-ups: idle (it may halt), or running a
// SCHED_IDLE spinner pinned there (it never halts).
enum class SleeperCpu { idle, kept_awake };

// Wakes a thread pinned to the second CPU of `cpus` (cpus::allowed(), say) from one pinned to the first, `wakeups`
// times, each after the sleeper had blocked for `idle`; the latency is from the waker's
// notify to the sleeper running. Throws wirezip::Error where `cpus` holds fewer than two CPUs,
// a thread cannot be pinned, the spinner cannot take SCHED_IDLE, or a wake-up takes longer than a second.
// The probe as bench_pipeline's context runs it (both ways): 200 wake-ups, each after 200 us.
inline constexpr int kContextWakeups = 200;
inline constexpr std::chrono::microseconds kContextIdle{200};

WakeLatency measure_wake_latency(const std::vector<int>& cpus, int wakeups = kContextWakeups,
                                 std::chrono::microseconds idle = kContextIdle,
                                 SleeperCpu sleeper_cpu = SleeperCpu::idle);

// The context value: "median 34.1 us, p90 51.2 us (200 wake-ups, cpu 0 -> 1)", or "not measured: <why>".
std::string wake_latency_context(const std::vector<int>& cpus, SleeperCpu sleeper_cpu = SleeperCpu::idle);

}  // namespace wirezip::harness
