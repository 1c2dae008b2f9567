#include "wirezip/util/cpus.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace wirezip::cpus {
namespace {

int cpu_number(std::string_view flag, std::string_view text) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < 0)
    fail("{}: '{}' is not a CPU number (expected a list like 0-3,8)", flag, shown(text));
  return value;
}

}  // namespace

std::vector<int> allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) fail("sched_getaffinity: cannot read this process's CPUs");
  std::vector<int> out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  return out;
}

void pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (const int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0)
    fail("pthread_setaffinity_np(cpu {}): {}", cpu, std::strerror(err));
}

std::vector<int> parse(std::string_view flag, std::string_view text, const std::vector<int>& allowed) {
  std::vector<int> out;
  for (const std::string& item : flag::list(flag, text)) {
    const auto dash = item.find('-');
    const int first = cpu_number(flag, std::string_view(item).substr(0, dash));
    const int last = dash == std::string::npos ? first : cpu_number(flag, std::string_view(item).substr(dash + 1));
    if (last < first) fail("{}: '{}' is a reversed range", flag, item);
    for (int cpu = first; cpu <= last; ++cpu) {
      if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end())
        fail("{}: CPU {} is not one this process may run on ({})", flag, cpu, format(allowed));
      if (std::find(out.begin(), out.end(), cpu) != out.end()) fail("{}: CPU {} is listed twice", flag, cpu);
      out.push_back(cpu);
    }
  }
  return out;
}

std::string format(const std::vector<int>& list) { return fmt::format("{}", fmt::join(list, ",")); }

std::vector<int> doubling_up_to(int n) {
  std::vector<int> out;
  for (int t = 1; t < n; t *= 2) out.push_back(t);
  out.push_back(n);
  return out;
}

}  // namespace wirezip::cpus
