#include "wake_probe.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "wirezip/util/cpus.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/thread_name.hpp"

namespace wirezip::harness {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::seconds kLongestWakeup{1};

// One wake-up at a time: the waker stamps the time and sets `posted`; the sleeper, blocked on the
// condition variable (not spinning, so its CPU goes idle), takes the difference when it runs.
struct PingState {
  std::mutex mutex;
  std::condition_variable posted_changed, taken_changed;
  bool posted = false, stop = false;
  Clock::time_point posted_at;
  std::vector<double> latencies_us;
  std::string error;
};

void sleep_loop(PingState& s, int cpu, int wakeups) {
  try {
    cpus::pin_this_thread(cpu);
  } catch (const std::exception& e) {
    std::lock_guard lock(s.mutex);
    s.error = fmt::format("wake probe: {}", e.what());
    s.stop = true;
    s.taken_changed.notify_one();
    return;
  }
  std::unique_lock lock(s.mutex);
  for (int i = 0; i < wakeups; ++i) {
    if (!s.posted_changed.wait_for(lock, kLongestWakeup, [&] { return s.posted || s.stop; }) || s.stop) {
      if (!s.stop) s.error = fmt::format("wake probe: a wake-up took over {} s", kLongestWakeup.count());
      s.stop = true;
      break;
    }
    s.latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s.posted_at).count());
    s.posted = false;
    s.taken_changed.notify_one();
  }
}

// Keeps `cpu` awake: pinned there at SCHED_IDLE, it runs only when nothing else would, so that CPU
// never enters its idle state, and a woken thread of any other policy preempts it at once.
// `state` goes from 0 to 1 once it spins, or to 2 with `error` set where it cannot.
class AwakeSpinner {
 public:
  explicit AwakeSpinner(int cpu) : thread_([this, cpu](std::stop_token stop) { spin(stop, cpu); }) {
    threads::name_thread(thread_, "wz-wake-spinner");
    for (const auto until = Clock::now() + kLongestWakeup; state_.load() == 0;) {
      if (Clock::now() > until) fail("wake probe: the spinner did not start within {} s", kLongestWakeup.count());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (state_.load() == 2) fail("{}", error_);
  }

 private:
  void spin(std::stop_token stop, int cpu) {
    try {
      cpus::pin_this_thread(cpu);
      sched_param lowest{};
      if (sched_setscheduler(0, SCHED_IDLE, &lowest) != 0)  // 0: this thread, on Linux
        fail("SCHED_IDLE refused: {}", std::strerror(errno));
    } catch (const std::exception& e) {
      error_ = fmt::format("wake probe: {}", e.what());
      state_.store(2);
      return;
    }
    state_.store(1);
    while (!stop.stop_requested()) {
    }
  }

  std::atomic<int> state_{0};
  std::string error_;
  std::jthread thread_;  // last: it starts once the state above exists, and stops before it goes
};

}  // namespace

WakeLatency measure_wake_latency(const std::vector<int>& cpus, int wakeups, std::chrono::microseconds idle,
                                 SleeperCpu sleeper_cpu) {
  if (cpus.size() < 2) fail("wake probe: needs two CPUs, the set has {}", cpus.size());
  if (wakeups < 1) fail("wake probe: wakeups must be at least 1");
  PingState s;
  std::string waker_error;
  std::optional<AwakeSpinner> spinner;
  if (sleeper_cpu == SleeperCpu::kept_awake) spinner.emplace(cpus[1]);
  {
    std::jthread sleeper([&] { sleep_loop(s, cpus[1], wakeups); });
    threads::name_thread(sleeper, "wz-wake-sleeper");
    std::jthread waker([&] {
      try {
        cpus::pin_this_thread(cpus[0]);
      } catch (const std::exception& e) {
        waker_error = fmt::format("wake probe: {}", e.what());
      }
      for (int i = 0; i < wakeups && waker_error.empty(); ++i) {
        // Busy, so this CPU stays awake while the sleeper's goes idle (or runs the spinner).
        for (const auto until = Clock::now() + idle; Clock::now() < until;) {
        }
        std::unique_lock lock(s.mutex);
        if (s.stop) break;
        s.posted = true;
        s.posted_at = Clock::now();
        s.posted_changed.notify_one();
        if (!s.taken_changed.wait_for(lock, 2 * kLongestWakeup, [&] { return !s.posted || s.stop; })) break;
      }
      std::lock_guard lock(s.mutex);
      s.stop = true;
      s.posted_changed.notify_one();
    });
    threads::name_thread(waker, "wz-wake-waker");
  }
  if (!waker_error.empty()) fail("{}", waker_error);
  if (!s.error.empty()) fail("{}", s.error);
  if (s.latencies_us.size() != static_cast<std::size_t>(wakeups))
    fail("wake probe: {} of {} wake-ups measured", s.latencies_us.size(), wakeups);
  std::sort(s.latencies_us.begin(), s.latencies_us.end());
  return {.median_us = s.latencies_us[s.latencies_us.size() / 2],
          .p90_us = s.latencies_us[s.latencies_us.size() * 9 / 10],
          .wakeups = wakeups,
          .waker_cpu = cpus[0],
          .sleeper_cpu = cpus[1]};
}

std::string wake_latency_context(const std::vector<int>& cpus, SleeperCpu sleeper_cpu) {
  try {
    const WakeLatency w = measure_wake_latency(cpus, kContextWakeups, kContextIdle, sleeper_cpu);
    return fmt::format("median {:.1f} us, p90 {:.1f} us ({} wake-ups, cpu {} -> {})", w.median_us, w.p90_us, w.wakeups,
                       w.waker_cpu, w.sleeper_cpu);
  } catch (const std::exception& e) {
    return fmt::format("not measured: {}", e.what());
  }
}

}  // namespace wirezip::harness
