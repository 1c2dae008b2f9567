#pragma once
// Peak resident memory, per case: Linux keeps the process's high-water mark (VmHWM in
// /proc/self/status, what getrusage's ru_maxrss reports) and lets a process reset it to the
// current resident size (writing 5 to /proc/self/clear_refs, Linux >= 4.0). Reset before each
// case, read after it, the mark is that case's peak; where the reset is refused, the mark is the
// process's peak so far, which max_rss_method() says in the context.
#include <cstdint>
#include <optional>
#include <string>

namespace benchmark {
class State;
}

namespace wirezip::harness {

// Resets the high-water mark to the current resident size; false where the kernel refuses.
bool reset_peak_rss();
// VmHWM in bytes (ru_maxrss where /proc is not readable); nullopt where neither is known.
std::optional<std::uint64_t> peak_rss_bytes();
// For the context: how max_rss_bytes was measured on this host.
std::string max_rss_method();
// Google Benchmark's Setup hook (Benchmark::Setup): each case's peak starts from what is resident now.
void reset_case_peak(const benchmark::State&);

}  // namespace wirezip::harness
