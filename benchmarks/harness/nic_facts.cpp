#include "nic_facts.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

namespace wirezip::harness {
namespace {

namespace fs = std::filesystem;

// The first line of a sysfs/procfs file, trimmed; "" when it cannot be read.
std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string read_or(const fs::path& path, const std::string& absent) {
  std::string value = first_line(path);
  return value.empty() ? absent : value;
}

// ATS from the PCIe extended capability list (config space from offset 0x100): capability 0x000F,
// whose control register (offset 6) has the enable bit 15. sysfs gives all 4096 bytes to root only.
std::string ats_state(const fs::path& device) {
  std::ifstream in(device / "config", std::ios::binary);
  if (!in) return "unknown: no PCI config space";
  std::vector<unsigned char> config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (config.size() <= 0x100) return "unknown: PCIe extended config space not readable (needs root, or not PCIe)";
  const auto u32 = [&](std::size_t at) {
    return std::uint32_t(config[at]) | std::uint32_t(config[at + 1]) << 8 | std::uint32_t(config[at + 2]) << 16 |
           std::uint32_t(config[at + 3]) << 24;
  };
  std::size_t at = 0x100;
  for (int hops = 0; hops < 64 && at >= 0x100 && at + 8 <= config.size(); ++hops) {  // bounded: a bad list ends
    const std::uint32_t header = u32(at);
    if (header == 0 || header == 0xffffffff) break;
    if ((header & 0xffff) == 0x000f) return (config[at + 7] & 0x80) != 0 ? "supported, enabled" : "supported, disabled";
    at = header >> 20;
  }
  return "none";
}

// The IOMMU domain type of the device's group; "none: ..." when the kernel put it in no group.
std::string iommu_group_type(const fs::path& device) {
  if (!fs::exists(device / "iommu_group")) return "none: no IOMMU group (IOMMU off or absent)";
  return read_or(device / "iommu_group" / "type", "unknown: iommu_group has no type file");
}

std::string pcie_link(const fs::path& device) {
  const std::string speed = first_line(device / "current_link_speed"), width = first_line(device / "current_link_width");
  if (speed.empty() || width.empty()) return "unknown: no PCIe link attributes (not a PCIe device)";
  return fmt::format("{} x{}", speed, width);
}

std::string numa_node(const fs::path& device) {
  const std::string node = first_line(device / "numa_node");
  if (node.empty()) return "unknown: no numa_node attribute";
  return node == "-1" ? "none: the platform reports no NUMA affinity (-1)" : node;
}

// Output of a command run through the shell, first line; "" when it printed nothing.
std::string command_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::array<char, 256> line{};
  std::string out = std::fgets(line.data(), line.size(), pipe.get()) ? line.data() : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string doca_version(const fs::path& root) {
  const fs::path doca = root / "opt/mellanox/doca";
  std::error_code ec;
  if (!fs::is_directory(doca, ec)) return "none";
  for (const auto& entry : fs::recursive_directory_iterator(doca / "lib", ec)) {
    if (entry.path().filename() != "doca-common.pc") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);)
      if (line.rfind("Version:", 0) == 0) return line.substr(line.find_first_not_of(' ', 8));
  }
  return "unknown: /opt/mellanox/doca has no lib/*/pkgconfig/doca-common.pc";
}

// The PCI function under a netdev: its `device` link, or the nearest parent of it with a config
// space (a virtio NIC's device is a virtio bus device whose parent is the PCI function).
std::optional<fs::path> pci_device_of(const fs::path& net) {
  std::error_code ec;
  fs::path device = fs::canonical(net / "device", ec);
  for (int up = 0; !ec && up < 3 && !device.empty(); ++up, device = device.parent_path())
    if (fs::exists(device / "config") && fs::exists(device / "vendor")) return device;
  return std::nullopt;
}

}  // namespace

std::map<std::string, std::string> platform_facts(const std::string& root) {
  std::map<std::string, std::string> facts;
  std::istringstream cmdline(first_line(fs::path(root + "/proc/cmdline")));
  std::string words;
  for (std::string word; cmdline >> word;)
    if (word.starts_with("iommu=") || word.starts_with("intel_iommu=") || word.starts_with("amd_iommu="))
      words += (words.empty() ? "" : " ") + word;
  facts["iommu_cmdline"] = words.empty() ? "none" : words;
  const bool has_ofed = fs::exists(fs::path(root + "/usr/bin/ofed_info"));
  const std::string ofed = has_ofed && root.empty() ? command_output("ofed_info -s 2>/dev/null") : "";
  facts["ofed_version"] = !has_ofed ? "none" : ofed.empty() ? "unknown: ofed_info -s printed nothing" : ofed;
  facts["doca_version"] = doca_version(fs::path(root.empty() ? "/" : root));
  return facts;
}

std::map<std::string, std::string> nic_facts(const std::string& netdev, const std::string& why_no_netdev,
                                             const std::string& root) {
  std::map<std::string, std::string> facts;
  const std::string keys[] = {"nic_netdev", "nic_mtu", "nic_pci", "nic_numa_node", "nic_pcie_link", "nic_ats",
                              "iommu_group_type"};
  if (netdev.empty()) {
    for (const std::string& key : keys) facts[key] = "unknown: " + why_no_netdev;
    return facts;
  }
  const fs::path net = fs::path(root + "/sys/class/net") / netdev;
  facts["nic_netdev"] = netdev;
  facts["nic_mtu"] = read_or(net / "mtu", "unknown: no /sys/class/net/" + netdev + "/mtu");
  const std::optional<fs::path> device = pci_device_of(net);
  if (!device) {
    const std::string why = fmt::format("none: {} has no PCI device (a virtual interface)", netdev);
    for (const std::string& key : keys)
      if (key != "nic_netdev" && key != "nic_mtu") facts[key] = why;
    return facts;
  }
  facts["nic_pci"] = device->filename().string();
  facts["nic_numa_node"] = numa_node(*device);
  facts["nic_pcie_link"] = pcie_link(*device);
  facts["nic_ats"] = ats_state(*device);
  facts["iommu_group_type"] = iommu_group_type(*device);
  return facts;
}

}  // namespace wirezip::harness
