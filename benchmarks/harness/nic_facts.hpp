#pragma once
// Facts that explain an RDMA result on one host: whether the NIC's DMA goes through an IOMMU (the
// IOTLB is what makes 4 KiB pages slower than huge pages), where the NIC sits (PCI address, NUMA
// node, PCIe link, ATS), its MTU, and the vendor stack (OFED, DOCA). Every key is always present:
// an absent fact reads "none" or "unknown: <why>".
#include <map>
#include <string>

namespace wirezip::harness {

// iommu_cmdline (the iommu=, intel_iommu=, amd_iommu= words of the kernel command line, or
// "none"), ofed_version (`ofed_info -s`), doca_version (DOCA's pkg-config files).
std::map<std::string, std::string> platform_facts(const std::string& root = "");

// For network interface `netdev` (empty: "unknown: <why_no_netdev>" everywhere): nic_netdev,
// nic_mtu, nic_pci, nic_numa_node, nic_pcie_link ("16.0 GT/s PCIe x16"), nic_ats, and
// iommu_group_type (the kernel's domain type: DMA/DMA-FQ = translated, identity = passthrough).
// `root` prefixes every /sys and /proc path (tests point it at a fake tree).
std::map<std::string, std::string> nic_facts(const std::string& netdev, const std::string& why_no_netdev,
                                             const std::string& root = "");

}  // namespace wirezip::harness
