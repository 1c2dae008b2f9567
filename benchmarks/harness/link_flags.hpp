#pragma once
// The flags bench_rdma and bench_pipeline share: which transport and device, the bound on every
// wait, and the two-host mode (--serve on one host, --peer on the other).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::harness {

struct LinkFlags {
  std::string transport;  // empty: verbs when a device exists, else the binary's fallback
  std::string device;
  int qps = 1;
  long timeout_ms = 10000;
  bool serve = false;
  std::uint16_t port = 0;
  long idle_s = 120;
  std::string peer;

  // qps, device and timeout as LinkOptions; throws on values that are not positive.
  rdma::LinkOptions options() const;
};

// Records in the JSON context whether both ends ran here or against a --serve peer.
void add_link_context(const std::optional<std::string>& peer_host, std::uint16_t peer_port);

void add_link_flags(CLI::App& app, LinkFlags& flags, std::uint16_t default_port, const std::string& transport_help);

}  // namespace wirezip::harness
