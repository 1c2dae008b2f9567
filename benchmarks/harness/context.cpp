#include "context.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>

#include <fstream>

#include "nic_facts.hpp"
#include "numa_facts.hpp"
#include "wirezip/codecs/build_info.hpp"
#include "wirezip/codecs/bytegroup.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace wirezip::harness {
namespace {

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t:");
  const auto last = text.find_last_not_of(" \t\n");
  return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

std::string cpu_model() {
  // x86 names the model; aarch64 kernels give the implementer and part numbers instead.
  std::string model = read_first_value("/proc/cpuinfo", "model name");
  if (!model.empty()) return model;
  std::string part = read_first_value("/proc/cpuinfo", "CPU part");
  return part.empty() ? "unknown" : "implementer " + read_first_value("/proc/cpuinfo", "CPU implementer") +
                                        " part " + part;
}

// CLI11 takes the argument after "--flag=" (nothing after the '=') or after a "--flag" that needs a
// value as that value, whatever it is: "--chunks= --threads=2" would read "--threads=2" as the
// chunk list, or swallow an argument that was meant for something else. Refuse both.
void refuse_missing_values(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.starts_with("--") || arg.size() < 3) continue;
    if (arg.ends_with("=")) fail("{}: no value after '='", arg.substr(0, arg.size() - 1));
    if (arg.find('=') != std::string_view::npos) continue;
    const CLI::Option* option = app.get_option_no_throw(std::string(arg));
    const bool takes_value = option != nullptr && option->get_items_expected_max() > 0;  // not a flag
    if (takes_value && i + 1 < argc && std::string_view(argv[i + 1]).starts_with("--"))
      fail("{}: no value (the next argument is {})", arg, argv[i + 1]);
  }
}

}  // namespace

std::string read_first_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return trim(line.substr(key.size()));
  return "";
}

std::string read_kernel_choice(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const auto open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos) return line.empty() ? "unavailable" : line;
  return line.substr(open + 1, close - open - 1);
}

std::map<std::string, std::string> host_facts() {
  std::map<std::string, std::string> facts = codecs::build_facts();
  facts["cpu_model"] = cpu_model();
  utsname host{};
  if (uname(&host) == 0) {
    facts["kernel"] = std::string(host.sysname) + " " + host.release;
    facts["machine"] = host.machine;
    facts["hostname"] = host.nodename;
  }
  facts["thp_enabled"] = read_kernel_choice("/sys/kernel/mm/transparent_hugepage/enabled");
  // defrag decides whether a MADV_HUGEPAGE fault compacts memory synchronously: it shapes first-touch time.
  facts["thp_defrag"] = read_kernel_choice("/sys/kernel/mm/transparent_hugepage/defrag");
  facts["simd_path"] = std::string(codecs::simd_path_name(codecs::best_simd_path()));
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) facts["host_cpus"] = std::to_string(CPU_COUNT(&allowed));
  facts.merge(platform_facts());
  facts.merge(numa_facts());
  // The NIC under the first ACTIVE verbs port: the one a link uses unless --device names another.
  std::string netdev, why = "no active RDMA port";
  try {
    netdev = rdma::pick_verbs_port("").netdev;
    why = "the RDMA port has no netdev";
  } catch (const std::exception&) {
  }
  facts.merge(nic_facts(netdev, why));
  return facts;
}

void add_host_context(int argc, char** argv) {
  for (const auto& [key, value] : host_facts()) benchmark::AddCustomContext(key, value);
  std::string args;
  for (int i = 0; i < argc; ++i) {
    if (i) args += ' ';
    args += argv[i];
  }
  benchmark::AddCustomContext("argv", args);
}

void add_peer_context(const std::map<std::string, std::string>& peer) {
  for (const auto& [key, value] : peer) benchmark::AddCustomContext("peer_" + key, value);
}

std::map<std::string, std::string> verbs_facts(const std::string& device) {
  const rdma::VerbsPort port = rdma::pick_verbs_port(device);
  std::map<std::string, std::string> facts = {{"rdma_device", port.device},
                                              {"rdma_fw_ver", port.fw_ver},
                                              {"rdma_port", fmt::format("{} {}", port.port, port.state)},
                                              {"rdma_active_mtu", std::to_string(port.active_mtu)},
                                              {"rdma_link_layer", port.link_layer},
                                              {"rdma_speed", port.speed},
                                              {"rdma_gid", port.gid}};
  // The link's data rate as a number, for bounds like `>= 0.9 * context:rdma_speed_bytes` (--expect).
  if (port.link_bytes_per_second > 0) facts["rdma_speed_bytes"] = fmt::format("{:.0f}", port.link_bytes_per_second);
  return facts;
}

void add_verbs_context(const std::string& device) {
  try {
    for (const auto& [key, value] : verbs_facts(device)) benchmark::AddCustomContext(key, value);
  } catch (const std::exception& e) {
    benchmark::AddCustomContext("rdma_device", std::string("none: ") + e.what());
    fmt::print(stderr, "verbs: {}\n", e.what());
  }
}

std::optional<int> initialize_benchmark(std::string_view name, int& argc, char** argv, bool report) {
  constexpr std::string_view kRepetitions = "--benchmark_repetitions=";
  constexpr std::uint64_t kMaxRepetitions = 1'000'000;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg.starts_with(kRepetitions))
        flag::count("--benchmark_repetitions", arg.substr(kRepetitions.size()), 1, kMaxRepetitions);
    }
  } catch (const Error& e) {
    if (report) fmt::print(stderr, "{}: {}\n", name, e.what());
    return kExitUsage;
  }
  static char own_help[] = "-h", library_help[] = "--help";
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help") argv[i] = own_help;
    else if (std::string_view(argv[i]) == "--help-benchmark") argv[i] = library_help;
  }
  benchmark::Initialize(&argc, argv);
  return std::nullopt;
}

std::optional<int> parse_command_line(CLI::App& app, std::string_view name, int argc, char** argv) {
  try {
    refuse_missing_values(app, argc, argv);
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "{}: {}\n", name, e.what());
    return kExitUsage;
  } catch (const Error& e) {
    fmt::print(stderr, "{}: {}\n", name, e.what());
    return kExitUsage;
  }
}

int run_reporting_errors(std::string_view name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", name, e.what());
    return kExitUsage;
  }
}

}  // namespace wirezip::harness
