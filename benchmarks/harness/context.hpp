#pragma once
// What every benchmark binary records next to its results, so a JSON file says where and how it
// was measured: suite version and git sha, library versions, CPU, kernel, THP mode, argv. And how
// each binary reports bad usage: one line on stderr and its exit status.
#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace wirezip::harness {

// The host and build facts: codecs::build_facts(), cpu_model, kernel,
// hostname, thp_enabled, thp_defrag, simd_path, host_cpus (CPUs this process may run on), and
// platform_facts() plus nic_facts() of the NIC under the first ACTIVE verbs port (nic_facts.hpp), and
// numa_facts(): the NUMA nodes of this thread's CPUs and of the buffers it touches (numa_facts.hpp).
std::map<std::string, std::string> host_facts();
// Adds host_facts() and argv to Google Benchmark's JSON "context" block.
void add_host_context(int argc, char** argv);
// Two-host mode: what the --serve side told about itself, as peer_<key>.
void add_peer_context(const std::map<std::string, std::string>& peer);
// Adds the verbs port a link on `device` uses ("" = the first ACTIVE one): rdma_device, rdma_fw_ver,
// rdma_port, rdma_active_mtu, rdma_link_layer, rdma_speed, rdma_speed_bytes (its data rate in
// bytes/s, when known), rdma_gid. Without one, rdma_device says "none: <why>" and the reason goes
// to stderr (every verbs case will fail with it too).
void add_verbs_context(const std::string& device);
// The same keys as a map; throws when there is no such port. A --serve side sends them to its peers.
std::map<std::string, std::string> verbs_facts(const std::string& device);

// Each line of a /proc or /sys file that starts with `key`, without the key; "" when absent.
std::string read_first_value(const std::string& path, const std::string& key);
// The bracketed choice in a kernel setting file, e.g. "madvise" from "always [madvise] never".
std::string read_kernel_choice(const std::string& path);

// Exit statuses of every benchmark binary: 0 all cases ran, 1 a case failed (run_cases), 2 bad
// usage or set-up (a flag, a spec, a file, an address), reported before any case is registered.
constexpr int kExitCaseFailed = 1;
constexpr int kExitUsage = 2;

// benchmark::Initialize, after checking the values of its flags that it takes unchecked:
// --benchmark_repetitions must be a whole number in [1, 1000000] (-1 ends in "vector::reserve").
// The library answers --help with its own flags only, so --help becomes -h first (the binary's own
// help, CLI11's) and --help-benchmark becomes --help (the library's).
// Returns kExitUsage after one line "NAME: what" on stderr (when `report`) for a bad value.
std::optional<int> initialize_benchmark(std::string_view name, int& argc, char** argv, bool report = true);

// Parses the flags Google Benchmark left in argv. Returns the status to exit with when the binary
// should stop here: 0 after --help, kExitUsage after one line "NAME: what" on stderr for anything
// CLI11 refuses, for "--flag=" with nothing after the '=', and for a "--flag" that takes a value
// followed by another "--..." (CLI11 would take that next argument as the value). nullopt: go on.
std::optional<int> parse_command_line(CLI::App& app, std::string_view name, int argc, char** argv);

// Runs a binary's `body`; any exception becomes one line "NAME: what" on stderr and kExitUsage.
int run_reporting_errors(std::string_view name, const std::function<int()>& body);

}  // namespace wirezip::harness
