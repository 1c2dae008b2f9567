#pragma once
// CPU lists for pinning (--cpus=0-15, --cpus=2,4,6) and the thread sweep they bound. The parser is
// checked like every flag: a bad list throws wirezip::Error with one line naming the flag.
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::cpus {

// The CPUs this process may run on now (sched_getaffinity), ascending.
std::vector<int> allowed();

// Pins the calling thread to `cpu` (pthread_setaffinity_np); throws wirezip::Error naming the CPU
// and the reason where the kernel refuses (a CPU outside the process's set, or offline).
void pin_this_thread(int cpu);

// "0-3,8" -> {0, 1, 2, 3, 8}, in the order written. Refuses an empty list or item, junk, a
// reversed range (3-1), a CPU listed twice, and a CPU not in `allowed`: pinning a thread to a CPU
// it may not use fails only later, inside a case, or silently shares a CPU.
std::vector<int> parse(std::string_view flag, std::string_view text, const std::vector<int>& allowed);

// {0, 1, 2, 3, 8} -> "0,1,2,3,8": how the JSON context records them.
std::string format(const std::vector<int>& list);

// 1, 2, 4, ... below n, then n itself: --threads=all over n CPUs.
std::vector<int> doubling_up_to(int n);

}  // namespace wirezip::cpus
