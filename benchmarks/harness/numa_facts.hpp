#pragma once
// Where the memory and the threads of an RDMA run sit, by NUMA node: a NIC writing into a buffer
// on the other socket, or a thread polling it from there, crosses the inter-socket link and can
// cost a host the bandwidth a firmware or driver change is blamed for. Every answer is a string:
// a node list ("0", "0,1"), "none: <why>" where the host has no NUMA nodes, or "unknown: <why>".
#include <sched.h>

#include <cstddef>
#include <map>
#include <span>
#include <string>

namespace wirezip::harness {

// The nodes that hold the resident pages of `bytes` (move_pages(2) asked where each page is; a
// sample of at most 4096 pages spread over the range), e.g. "0" or "0,1".
// "unknown: <why>" where the kernel cannot say, or no page of the range is resident yet.
std::string memory_numa_nodes(std::span<const std::byte> bytes);

// The nodes whose CPUs are in `cpus`, from <root>/sys/devices/system/node/node*/cpulist.
// "none: ..." where sysfs lists no node (a kernel without NUMA), "unknown: ..." where a CPU of
// the set is in no node's list.
std::string cpus_numa_nodes(const cpu_set_t& cpus, const std::string& root = "");

// numa_nodes (how many the host has), thread_numa_nodes (the nodes of the CPUs this thread may run
// on: where a pinned thread runs), buffer_numa_nodes (where a buffer this thread allocates and
// touches lands, as a link's registered buffer does under the default first-touch policy).
std::map<std::string, std::string> numa_facts(const std::string& root = "");

}  // namespace wirezip::harness
