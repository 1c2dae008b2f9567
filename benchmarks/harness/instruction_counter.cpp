#include "instruction_counter.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace wirezip::harness {
namespace {

// Returns the fd, or -1 with errno set.
int open_counter() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;  // the codec's own work; also what perf_event_paranoid=2 allows
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string probe() {
  const int fd = open_counter();
  if (fd >= 0) {
    close(fd);
    return "";
  }
  const int err = errno;
  const bool pmu = std::filesystem::exists("/sys/bus/event_source/devices/cpu");
  return fmt::format("perf_event_open(PERF_COUNT_HW_INSTRUCTIONS): {}{}", std::strerror(err),
                     pmu ? "" : " (the kernel exposes no CPU PMU: no cpu under /sys/bus/event_source/devices)");
}

}  // namespace

InstructionCounter::InstructionCounter() : fd_(open_counter()) {}

InstructionCounter::~InstructionCounter() {
  if (fd_ >= 0) close(fd_);
}

void InstructionCounter::resume() {
  if (fd_ >= 0) ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
}

void InstructionCounter::pause() {
  if (fd_ >= 0) ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
}

std::optional<std::uint64_t> InstructionCounter::total() const {
  std::uint64_t count = 0;
  if (fd_ < 0 || read(fd_, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return std::nullopt;
  return count;
}

const std::string& InstructionCounter::unavailable_reason() {
  static const std::string reason = probe();
  return reason;
}

}  // namespace wirezip::harness
