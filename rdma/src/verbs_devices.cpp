// Device and port discovery through libibverbs: what a result records about the adapter, and the
// port (and its IPv4 address, which rdma_cm connects through) a verbs link runs on.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "verbs_common.hpp"
#include "wirezip/rdma/transport.hpp"

namespace wirezip::rdma {
namespace {

constexpr const char* kNoDevice =
    "no RDMA device found (ibv_get_device_list returned 0); use --transport=tcp or mem";

// Per-lane signalling rate and line-code efficiency of each ibv_port_attr::active_speed code.
// HDR and faster are listed at their per-lane data rate (50, 100, 200 Gb/s, efficiency 1): their
// line rate (53.125 Gbaud PAM4 ...) already pays for FEC and encoding, so 64/66 would undercount.
struct LaneSpeed {
  int code;
  const char* name;
  double gbps;
  double efficiency;
};
constexpr LaneSpeed kLaneSpeeds[] = {
    {1, "SDR", 2.5, 8.0 / 10},           {2, "DDR", 5.0, 8.0 / 10},       {4, "QDR", 10.0, 8.0 / 10},
    {8, "FDR10", 10.3125, 64.0 / 66},    {16, "FDR", 14.0625, 64.0 / 66}, {32, "EDR", 25.78125, 64.0 / 66},
    {64, "HDR", 50.0, 1.0},              {128, "NDR", 100.0, 1.0},        {256, "XDR", 200.0, 1.0},
};

int lanes_of(int width_code) {
  switch (width_code) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}

// Fills speed and link_bytes_per_second from the negotiated speed and width codes.
void describe_speed(VerbsPort& port, int speed_code, int width_code) {
  const int lanes = lanes_of(width_code);
  for (const LaneSpeed& lane : kLaneSpeeds) {
    if (lane.code != speed_code || lanes == 0) continue;
    const double lane_data_gbps = lane.gbps * lane.efficiency;
    port.link_bytes_per_second = lanes * lane_data_gbps * 1e9 / 8;
    port.speed = port.link_layer == "InfiniBand"
                     ? fmt::format("{}X {} ({:g} Gb/s per lane)", lanes, lane.name, lane.gbps)
                     : fmt::format("{:g} Gb/s x {}", lane_data_gbps, lanes);
    return;
  }
  port.speed = fmt::format("unknown (speed code {}, width code {})", speed_code, width_code);
}

std::string link_layer_name(std::uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    default: return "unspecified";
  }
}

std::string format_gid(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.raw, text, sizeof text);
  return text;
}

bool is_ipv4_mapped(const ibv_gid& gid) {
  static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, sizeof kPrefix) == 0;
}

// GID and netdev of a port from the device's GID table: the RoCE v2 IPv4-mapped entry when there
// is one (what rdma_cm uses for IPv4), else index 0; the netdev of the first entry that has one.
void describe_gids(ibv_context* context, const ibv_port_attr& attr, int ports, VerbsPort& port) {
  // The table holds every port's entries: room for all of them, assuming equal tables per port.
  std::vector<ibv_gid_entry> entries(static_cast<std::size_t>(std::max(attr.gid_tbl_len, 1) * std::max(ports, 1)));
  const ssize_t count = ibv_query_gid_table(context, entries.data(), entries.size(), 0);
  for (ssize_t i = 0; i < count; ++i) {
    const ibv_gid_entry& entry = entries[static_cast<std::size_t>(i)];
    if (entry.port_num != static_cast<std::uint32_t>(port.port)) continue;
    char name[IF_NAMESIZE] = {};
    if (port.netdev.empty() && entry.ndev_ifindex != 0 && if_indextoname(entry.ndev_ifindex, name))
      port.netdev = name;
    if (port.gid.empty() && entry.gid_type == IBV_GID_TYPE_ROCE_V2 && is_ipv4_mapped(entry.gid))
      port.gid = format_gid(entry.gid);
  }
  ibv_gid gid{};
  if (port.gid.empty() && ibv_query_gid(context, static_cast<std::uint8_t>(port.port), 0, &gid) == 0)
    port.gid = format_gid(gid);
}

// An InfiniBand port's IPoIB netdev: a netdev of the same PCI device on the same port.
std::string ipoib_netdev(const std::string& device, int port) {
  namespace fs = std::filesystem;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/sys/class/infiniband/" + device + "/device/net", error)) {
    std::ifstream dev_port(entry.path() / "dev_port");
    int index = 0;
    if (!(dev_port >> index) || index == port - 1) return entry.path().filename().string();
  }
  return {};
}

std::string format_guid(__be64 guid) {
  const std::uint64_t value = be64toh(guid);
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", value >> 48, (value >> 32) & 0xffff, (value >> 16) & 0xffff,
                     value & 0xffff);
}

// "rxe0 port 1 DOWN, mlx5_0 port 1 ACTIVE": what an error about a missing port lists.
std::string join_ports(const std::vector<VerbsPort>& ports) {
  std::string names;
  for (const VerbsPort& port : ports)
    names += fmt::format("{}{} port {} {}", names.empty() ? "" : ", ", port.device, port.port, port.state);
  return names;
}

}  // namespace

namespace verbs {

VerbsPort describe_port(ibv_context* context, int port_num) {
  VerbsPort port;
  port.device = ibv_get_device_name(context->device);
  port.port = port_num;
  ibv_device_attr device{};
  if (const int rc = ibv_query_device(context, &device)) fail("ibv_query_device({}): {}", port.device, std::strerror(rc));
  port.fw_ver = device.fw_ver;
  port.node_guid = format_guid(device.node_guid);
  ibv_port_attr attr{};
  if (const int rc = ibv_query_port(context, static_cast<std::uint8_t>(port_num), &attr))
    fail("ibv_query_port({} port {}): {}", port.device, port_num, std::strerror(rc));
  port.state = ibv_port_state_str(attr.state);  // "active", "down": recorded as ACTIVE, DOWN
  std::transform(port.state.begin(), port.state.end(), port.state.begin(), [](unsigned char c) { return std::toupper(c); });
  port.active_mtu = 128 << static_cast<int>(attr.active_mtu);  // IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5
  port.link_layer = link_layer_name(attr.link_layer);
  describe_speed(port, attr.active_speed, attr.active_width);
  describe_gids(context, attr, device.phys_port_cnt, port);
  if (port.netdev.empty() && attr.link_layer == IBV_LINK_LAYER_INFINIBAND)
    port.netdev = ipoib_netdev(port.device, port_num);
  port.ipv4 = netdev_ipv4(port.netdev);
  return port;
}

}  // namespace verbs

std::vector<VerbsPort> list_verbs_ports() {
  int count = 0;
  const verbs::DeviceList list(ibv_get_device_list(&count));
  if (!list || count <= 0) throw NoDeviceError(kNoDevice);
  std::vector<VerbsPort> ports;
  std::string unusable;  // devices listed in sysfs that this process cannot open (no /dev/infiniband)
  for (int i = 0; i < count; ++i) {
    ibv_device* device = list.get()[i];
    const verbs::Context context(ibv_open_device(device));
    if (!context) {
      unusable += fmt::format("{}ibv_open_device({}): {}", unusable.empty() ? "" : "; ",
                              ibv_get_device_name(device), std::strerror(errno));
      continue;
    }
    ibv_device_attr attr{};
    if (const int rc = ibv_query_device(context.get(), &attr))
      fail("ibv_query_device({}): {}", ibv_get_device_name(device), std::strerror(rc));
    for (int port = 1; port <= attr.phys_port_cnt; ++port) ports.push_back(verbs::describe_port(context.get(), port));
  }
  if (ports.empty())
    throw NoDeviceError(fmt::format("no usable RDMA device ({}); use --transport=tcp or mem",
                                    unusable.empty() ? "no ports" : unusable));
  return ports;
}

VerbsPort pick_verbs_port(const std::string& device) {
  const std::vector<VerbsPort> ports = list_verbs_ports();
  bool named = device.empty();
  for (const VerbsPort& port : ports) {
    if (!device.empty() && port.device != device) continue;
    named = true;
    if (port.state == "ACTIVE") return port;
  }
  if (!named) fail("no device named {} (have: {})", device, join_ports(ports));
  if (device.empty()) throw NoDeviceError(fmt::format("no RDMA device has an ACTIVE port (have: {})", join_ports(ports)));
  throw NoDeviceError(fmt::format("device {} has no ACTIVE port (have: {})", device, join_ports(ports)));
}

bool verbs_available() {
  try {
    return !pick_verbs_port("").device.empty();
  } catch (const NoDeviceError&) {
    return false;
  }
}

std::string netdev_ipv4(const std::string& netdev) {
  if (netdev.empty()) return {};
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail("getifaddrs: {}", std::strerror(errno));
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owner(list, &freeifaddrs);
  for (const ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET || netdev != it->ifa_name) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(it->ifa_addr)->sin_addr, text, sizeof text);
    return text;
  }
  return {};
}

}  // namespace wirezip::rdma
