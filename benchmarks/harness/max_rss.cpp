#include "max_rss.hpp"

#include <sys/resource.h>

#include <fstream>
#include <sstream>

namespace wirezip::harness {

bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  return clear && (clear << "5").flush();
}

std::optional<std::uint64_t> peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (!line.starts_with("VmHWM:")) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) == 0 && usage.ru_maxrss > 0)
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;  // kilobytes on Linux
  return std::nullopt;
}

void reset_case_peak(const benchmark::State&) { reset_peak_rss(); }

std::string max_rss_method() {
  static const bool resets = reset_peak_rss();
  return resets ? "VmHWM, reset before each case (/proc/self/clear_refs)"
                : "VmHWM without reset (the kernel refused clear_refs): the process's peak so far";
}

}  // namespace wirezip::harness
