#pragma once
// RDMA devices as libibverbs sees them: what bench_rdma records so results can be compared across
// adapters and firmware versions, and how it decides whether the verbs transport can run at all.
#include <string>
#include <vector>

namespace wirezip::rdma {

struct VerbsPort {
  std::string device;           // e.g. "mlx5_0", "rxe0"
  int port = 1;
  std::string fw_ver;           // ibv_query_device
  std::string node_guid;
  std::string state;            // "ACTIVE", "DOWN", ...
  int active_mtu = 0;           // bytes
  std::string link_layer;       // "InfiniBand" | "Ethernet"
  std::string speed;            // e.g. "4X HDR (50 Gb/s per lane)" or "25 Gb/s x 1"
  double link_bytes_per_second = 0;  // negotiated data rate, bytes per second (0 if unknown)
  std::string gid;              // GID index 0, or the RoCE v2 IPv4 one when present
  std::string netdev;           // Ethernet ports: the netdev under the device (e.g. "dummy0")
  std::string ipv4;             // its IPv4 address, what rdma_cm binds to for loopback
};

// Every port of every device. Throws NoDeviceError with the reason when there is none:
// "no RDMA device found (ibv_get_device_list returned 0); use --transport=tcp or mem".
std::vector<VerbsPort> list_verbs_ports();
// The port a link on `device` uses: the first ACTIVE port (of the named device, if any).
VerbsPort pick_verbs_port(const std::string& device);
bool verbs_available();
// The first IPv4 address of network interface `netdev` ("eth1", "ib0"); empty when it has none
// or there is no such interface.
std::string netdev_ipv4(const std::string& netdev);

}  // namespace wirezip::rdma
