#include "numa_facts.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <vector>

namespace wirezip::harness {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxSampledPages = 4096;

std::string join(const std::set<int>& nodes) {
  std::string text;
  for (int node : nodes) text += fmt::format("{}{}", text.empty() ? "" : ",", node);
  return text;
}

// A sysfs cpulist ("0-3,8,10-11") as CPU numbers; nullopt when it is not one.
std::optional<std::vector<int>> parse_cpulist(const std::string& text) {
  std::vector<int> cpus;
  std::size_t at = 0;
  const auto number = [&](int& out) {
    const std::size_t start = at;
    long value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9' && value <= CPU_SETSIZE)
      value = value * 10 + (text[at++] - '0');
    out = static_cast<int>(value);
    return at > start && value < CPU_SETSIZE;
  };
  while (at < text.size() && text[at] != '\n') {
    int first = 0, last = 0;
    if (!number(first)) return std::nullopt;
    last = first;
    if (at < text.size() && text[at] == '-') {
      ++at;
      if (!number(last) || last < first) return std::nullopt;
    }
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (at < text.size() && text[at] == ',') ++at;
  }
  return cpus;
}

}  // namespace

std::string memory_numa_nodes(std::span<const std::byte> bytes) {
  if (bytes.empty()) return "unknown: an empty buffer";
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto first = reinterpret_cast<std::uintptr_t>(bytes.data()) / page;
  const auto last = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size() - 1) / page;
  const std::size_t pages = last - first + 1;
  const std::size_t step = std::max<std::size_t>(1, pages / kMaxSampledPages);
  std::vector<void*> where;
  for (std::size_t i = 0; i < pages; i += step) where.push_back(reinterpret_cast<void*>((first + i) * page));
  std::vector<int> status(where.size(), 0);
  // nodes = nullptr: move nothing, report in `status` the node of each page (or -errno).
  if (syscall(SYS_move_pages, 0, where.size(), where.data(), nullptr, status.data(), 0) != 0)
    return fmt::format("unknown: move_pages: {}", std::strerror(errno));
  std::set<int> nodes;
  int error = 0;
  for (int s : status) {
    if (s >= 0)
      nodes.insert(s);
    else if (s != -ENOENT)
      error = -s;
  }
  if (!nodes.empty()) return join(nodes);
  if (error) return fmt::format("unknown: move_pages: {}", std::strerror(error));
  return "unknown: no page of the buffer is resident";
}

std::string cpus_numa_nodes(const cpu_set_t& cpus, const std::string& root) {
  const fs::path dir = fs::path(root + "/sys/devices/system/node");
  std::error_code ec;
  std::set<int> nodes;
  std::set<int> placed;  // CPUs of `cpus` found in some node's list
  bool any_node = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0 || name.size() == 4 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    any_node = true;
    std::ifstream in(entry.path() / "cpulist");
    std::string line;
    std::getline(in, line);
    const auto list = parse_cpulist(line);
    if (!list) return fmt::format("unknown: {}/cpulist is not a CPU list: '{}'", entry.path().string(), line);
    for (int cpu : *list)
      if (CPU_ISSET(cpu, &cpus)) {
        nodes.insert(std::stoi(name.substr(4)));
        placed.insert(cpu);
      }
  }
  if (!any_node) return fmt::format("none: no NUMA node in {}", dir.string());
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &cpus) && !placed.count(cpu)) return fmt::format("unknown: CPU {} is in no node's cpulist", cpu);
  if (nodes.empty()) return "unknown: no CPU in the set";
  return join(nodes);
}

std::map<std::string, std::string> numa_facts(const std::string& root) {
  std::map<std::string, std::string> facts;
  const fs::path dir = fs::path(root + "/sys/devices/system/node");
  std::error_code ec;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (const std::string name = entry.path().filename().string();
        name.rfind("node", 0) == 0 && name.size() > 4 && name.find_first_not_of("0123456789", 4) == std::string::npos)
      ++count;
  facts["numa_nodes"] = count ? std::to_string(count) : fmt::format("none: no NUMA node in {}", dir.string());

  cpu_set_t mine;
  CPU_ZERO(&mine);
  facts["thread_numa_nodes"] = sched_getaffinity(0, sizeof mine, &mine) == 0
                                   ? cpus_numa_nodes(mine, root)
                                   : fmt::format("unknown: sched_getaffinity: {}", std::strerror(errno));

  // A 2 MiB buffer touched here lands where a link's buffer, allocated and touched by this thread, does.
  constexpr std::size_t kProbeBytes = 2u << 20;
  void* probe = mmap(nullptr, kProbeBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) {
    facts["buffer_numa_nodes"] = fmt::format("unknown: mmap: {}", std::strerror(errno));
  } else {
    const std::unique_ptr<void, void (*)(void*)> owner(probe, [](void* p) { munmap(p, kProbeBytes); });
    std::memset(probe, 1, kProbeBytes);
    facts["buffer_numa_nodes"] = memory_numa_nodes({static_cast<const std::byte*>(probe), kProbeBytes});
  }
  return facts;
}

}  // namespace wirezip::harness
