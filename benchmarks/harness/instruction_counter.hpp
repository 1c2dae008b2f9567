#pragma once
// Instructions retired in user space by the calling thread, from the CPU's PMU through
// perf_event_open (PERF_COUNT_HW_INSTRUCTIONS). Unlike a time, the count does not move with the
// host's clock or a neighbour's load, so a codec change can be judged on it alone. Many VMs expose
// no CPU PMU (no `cpu` under /sys/bus/event_source/devices): then the counter is not available
// and says why; callers leave the metric out instead of reporting a fake zero.
#include <cstdint>
#include <optional>
#include <string>

namespace wirezip::harness {

class InstructionCounter {
 public:
  // Opens a disabled counter for this thread; on failure available() is false.
  InstructionCounter();
  ~InstructionCounter();
  InstructionCounter(const InstructionCounter&) = delete;
  InstructionCounter& operator=(const InstructionCounter&) = delete;

  bool available() const { return fd_ >= 0; }
  // Counting runs between resume() and pause(); total() sums every such stretch (nullopt when
  // the counter is not available or cannot be read).
  void resume();
  void pause();
  std::optional<std::uint64_t> total() const;

  // "" when a counter opens on this host, else why not (for the JSON context), probed once.
  static const std::string& unavailable_reason();

 private:
  int fd_ = -1;
};

}  // namespace wirezip::harness
