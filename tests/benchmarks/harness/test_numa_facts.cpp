// numa_facts: CPUs mapped to nodes through a fake /sys/devices/system/node of two nodes, and the
// node of real memory asked of the kernel (move_pages), resident or not.
#include "numa_facts.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace wirezip::harness {
namespace {

namespace fs = std::filesystem;

cpu_set_t cpus(std::initializer_list<int> list) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : list) CPU_SET(cpu, &set);
  return set;
}

class NumaFacts : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("wirezip-numa-facts-" + std::to_string(getpid()));
    fs::remove_all(root_);
    node("node0", "0-1,4\n");
    node("node1", "2-3,5\n");
    fs::create_directories(nodes() / "power");  // sysfs has entries that are not nodes
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path nodes() const { return root_ / "sys/devices/system/node"; }
  void node(const std::string& name, const std::string& cpulist) {
    fs::create_directories(nodes() / name);
    std::ofstream(nodes() / name / "cpulist") << cpulist;
  }
  fs::path root_;
};

TEST_F(NumaFacts, CpusMapToTheNodesThatListThem) {
  EXPECT_EQ(cpus_numa_nodes(cpus({0, 4}), root_.string()), "0");
  EXPECT_EQ(cpus_numa_nodes(cpus({5}), root_.string()), "1");
  EXPECT_EQ(cpus_numa_nodes(cpus({1, 2}), root_.string()), "0,1");
  EXPECT_EQ(cpus_numa_nodes(cpus({0, 7}), root_.string()), "unknown: CPU 7 is in no node's cpulist");
}

TEST_F(NumaFacts, NoNodeDirectoryIsNoneAndABadCpulistIsUnknown) {
  EXPECT_EQ(cpus_numa_nodes(cpus({0}), (root_ / "elsewhere").string()).rfind("none: no NUMA node in ", 0), 0u);
  node("node2", "3-1\n");
  EXPECT_EQ(cpus_numa_nodes(cpus({0}), root_.string()).rfind("unknown: ", 0), 0u);
  node("node2", "99999999999\n");
  EXPECT_EQ(cpus_numa_nodes(cpus({0}), root_.string()).rfind("unknown: ", 0), 0u);
}

TEST_F(NumaFacts, EveryKeyIsPresent) {
  const auto facts = numa_facts(root_.string());
  EXPECT_EQ(facts.at("numa_nodes"), "2");
  EXPECT_FALSE(facts.at("thread_numa_nodes").empty());
  EXPECT_FALSE(facts.at("buffer_numa_nodes").empty());
  EXPECT_EQ(numa_facts((root_ / "elsewhere").string()).at("thread_numa_nodes").rfind("none: ", 0), 0u);
}

// The kernel's own answer for memory: a node this host has once the pages are touched (or why it
// cannot say, on a kernel without NUMA); never a node for pages not yet resident.
TEST(NumaMemory, TouchedPagesAreOnAHostNodeUntouchedOnesAreUnknown) {
  const std::size_t bytes = 64 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  const std::span<const std::byte> span(static_cast<const std::byte*>(map), bytes);
  EXPECT_EQ(memory_numa_nodes(span).rfind("unknown: ", 0), 0u) << memory_numa_nodes(span);
  std::memset(map, 1, bytes);
  const std::string touched = memory_numa_nodes(span);
  std::set<std::string> host_nodes;
  std::error_code no_sysfs;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/node", no_sysfs))
    if (const std::string name = entry.path().filename().string(); name.rfind("node", 0) == 0)
      host_nodes.insert(name.substr(4));
  if (host_nodes.empty())
    EXPECT_EQ(touched.rfind("unknown: move_pages", 0), 0u) << touched;
  else
    EXPECT_TRUE(host_nodes.count(touched.substr(0, touched.find(',')))) << touched;
  EXPECT_EQ(memory_numa_nodes({}), "unknown: an empty buffer");
  munmap(map, bytes);
}

}  // namespace
}  // namespace wirezip::harness
