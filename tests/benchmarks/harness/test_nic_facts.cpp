// nic_facts and platform_facts read a fake /sys and /proc tree: a virtio NIC behind a PCIe port
// with an IOMMU group and ATS, the same NIC with the IOMMU off, and a virtual interface.
#include "nic_facts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

namespace wirezip::harness {
namespace {

namespace fs = std::filesystem;

class NicFacts : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("wirezip-nic-facts-" + std::to_string(getpid()));
    fs::remove_all(root_);
    pci_ = root_ / "sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0";
    fs::create_directories(pci_ / "virtio0");
    fs::create_directories(root_ / "sys/class/net/eth0");
    fs::create_symlink(pci_ / "virtio0", root_ / "sys/class/net/eth0/device");
    write(root_ / "sys/class/net/eth0/mtu", "9000\n");
    write(pci_ / "vendor", "0x1af4\n");
    write(pci_ / "numa_node", "-1\n");
    write(pci_ / "current_link_speed", "16.0 GT/s PCIe\n");
    write(pci_ / "current_link_width", "16\n");
    fs::create_directories(root_ / "proc");
    write(root_ / "proc/cmdline", "console=ttyS0 intel_iommu=on iommu=pt quiet\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  // A config space of `size` bytes whose extended list holds AER (0x0001) and then ATS (0x000f),
  // ATS control's enable bit set or not.
  void config_space(std::size_t size, bool ats_enabled) {
    std::vector<unsigned char> config(size, 0);
    const auto put32 = [&](std::size_t at, std::uint32_t v) {
      for (int i = 0; i < 4; ++i) config[at + i] = static_cast<unsigned char>(v >> (8 * i));
    };
    if (size > 0x200) {
      put32(0x100, 0x0001u | 1u << 16 | 0x180u << 20);
      put32(0x180, 0x000fu | 1u << 16);
      config[0x187] = ats_enabled ? 0x80 : 0;
    }
    std::ofstream(pci_ / "config", std::ios::binary).write(reinterpret_cast<const char*>(config.data()), size);
  }
  void iommu_group(const std::string& type) {
    fs::create_directories(root_ / "sys/kernel/iommu_groups/7");
    write(root_ / "sys/kernel/iommu_groups/7/type", type + "\n");
    fs::create_symlink(root_ / "sys/kernel/iommu_groups/7", pci_ / "iommu_group");
  }

  fs::path root_, pci_;
};

TEST_F(NicFacts, TranslatedNicBehindAnIommuWithAts) {
  config_space(4096, true);
  iommu_group("DMA-FQ");
  const auto facts = nic_facts("eth0", "unused", root_.string());
  EXPECT_EQ(facts.at("nic_netdev"), "eth0");
  EXPECT_EQ(facts.at("nic_mtu"), "9000");
  EXPECT_EQ(facts.at("nic_pci"), "0000:01:00.0");  // the PCI function above the virtio device
  EXPECT_EQ(facts.at("nic_numa_node"), "none: the platform reports no NUMA affinity (-1)");
  EXPECT_EQ(facts.at("nic_pcie_link"), "16.0 GT/s PCIe x16");
  EXPECT_EQ(facts.at("nic_ats"), "supported, enabled");
  EXPECT_EQ(facts.at("iommu_group_type"), "DMA-FQ");
}

TEST_F(NicFacts, NoIommuGroupNoAtsAndAShortConfigSpace) {
  config_space(4096, false);
  EXPECT_EQ(nic_facts("eth0", "unused", root_.string()).at("nic_ats"), "supported, disabled");
  EXPECT_EQ(nic_facts("eth0", "unused", root_.string()).at("iommu_group_type"),
            "none: no IOMMU group (IOMMU off or absent)");
  config_space(64, false);  // what a non-root reader gets
  EXPECT_EQ(nic_facts("eth0", "unused", root_.string()).at("nic_ats").rfind("unknown: ", 0), 0u);
}

TEST_F(NicFacts, EveryKeyIsPresentForAVirtualInterfaceAndForNoInterface) {
  fs::create_directories(root_ / "sys/class/net/dummy0");
  write(root_ / "sys/class/net/dummy0/mtu", "1500\n");
  const auto virtual_nic = nic_facts("dummy0", "unused", root_.string());
  const auto none = nic_facts("", "no active RDMA port", root_.string());
  ASSERT_EQ(virtual_nic.size(), 7u);
  ASSERT_EQ(none.size(), 7u);
  EXPECT_EQ(virtual_nic.at("nic_mtu"), "1500");
  EXPECT_EQ(virtual_nic.at("iommu_group_type"), "none: dummy0 has no PCI device (a virtual interface)");
  for (const auto& [key, value] : none) EXPECT_EQ(value, "unknown: no active RDMA port") << key;
}

TEST_F(NicFacts, PlatformFactsTakeTheIommuWordsOfTheCommandLine) {
  const auto facts = platform_facts(root_.string());
  EXPECT_EQ(facts.at("iommu_cmdline"), "intel_iommu=on iommu=pt");
  EXPECT_EQ(facts.at("ofed_version"), "none");
  EXPECT_EQ(facts.at("doca_version"), "none");
  write(root_ / "proc/cmdline", "console=ttyS0\n");
  fs::create_directories(root_ / "opt/mellanox/doca/lib/aarch64-linux-gnu/pkgconfig");
  write(root_ / "opt/mellanox/doca/lib/aarch64-linux-gnu/pkgconfig/doca-common.pc", "Name: doca\nVersion: 2.9.1\n");
  const auto again = platform_facts(root_.string());
  EXPECT_EQ(again.at("iommu_cmdline"), "none");
  EXPECT_EQ(again.at("doca_version"), "2.9.1");
}

}  // namespace
}  // namespace wirezip::harness
