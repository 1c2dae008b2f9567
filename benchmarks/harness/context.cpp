#include "context.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/utsname.h>

#include <charconv>
#include <fstream>

#include "wirezip/codecs/bytegroup.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/spec.hpp"

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
  std::map<std::string, std::string> facts{{"wirezip_version", WIREZIP_VERSION}, {"wirezip_git_sha", WIREZIP_GIT_SHA}};
  for (const auto& [name, version] : codecs::library_versions())
    if (name != "wirezip") facts["version_" + name] = version;
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

void add_verbs_context(const std::string& device) {
  try {
    const rdma::VerbsPort port = rdma::pick_verbs_port(device);
    benchmark::AddCustomContext("rdma_device", port.device);
    benchmark::AddCustomContext("rdma_fw_ver", port.fw_ver);
    benchmark::AddCustomContext("rdma_port", fmt::format("{} {}", port.port, port.state));
    benchmark::AddCustomContext("rdma_active_mtu", std::to_string(port.active_mtu));
    benchmark::AddCustomContext("rdma_link_layer", port.link_layer);
    benchmark::AddCustomContext("rdma_speed", port.speed);
    benchmark::AddCustomContext("rdma_gid", port.gid);
  } catch (const std::exception& e) {
    benchmark::AddCustomContext("rdma_device", std::string("none: ") + e.what());
    fmt::print(stderr, "verbs: {}\n", e.what());
  }
}

int run_reporting_errors(std::string_view name, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: {}\n", name, e.what());
    return 2;
  }
}

std::vector<std::string> parse_list(const std::string& flag, const std::string& text) {
  try {
    return split(text, ',');
  } catch (const Error& e) {
    fail("{}: {}", flag, e.what());
  }
}

std::vector<int> parse_positive_ints(const std::string& flag, const std::string& text) {
  std::vector<int> values;
  for (const std::string& item : parse_list(flag, text)) {
    int value = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec != std::errc{} || end != item.data() + item.size() || value <= 0)
      fail("{}: '{}' is not a positive integer", flag, item);
    values.push_back(value);
  }
  return values;
}

}  // namespace wirezip::harness
