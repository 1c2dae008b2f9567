#include "link_flags.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "wirezip/util/error.hpp"

namespace wirezip::harness {

rdma::LinkOptions LinkFlags::options() const {
  if (qps <= 0 || timeout_ms <= 0 || idle_s <= 0) fail("--qps, --timeout-ms and --idle-s must be positive");
  rdma::LinkOptions options;
  options.qps = qps;
  options.device = device;
  options.timeout = std::chrono::milliseconds(timeout_ms);
  return options;
}

void add_link_context(const std::optional<std::string>& peer_host, std::uint16_t peer_port) {
  benchmark::AddCustomContext("link", peer_host ? fmt::format("two hosts, peer {}:{}", *peer_host, peer_port)
                                                : "loopback, both ends in this process");
}

void add_link_flags(CLI::App& app, LinkFlags& flags, std::uint16_t default_port, const std::string& transport_help) {
  flags.port = default_port;
  app.add_option("--transport", flags.transport, transport_help);
  app.add_option("--device", flags.device, "verbs device (default: the first with an active port)");
  app.add_option("--qps", flags.qps, "verbs queue pairs")->capture_default_str();
  app.add_option("--timeout-ms", flags.timeout_ms, "bound on every wait")->capture_default_str();
  app.add_flag("--serve", flags.serve, "passive side of a two-host run: serve peers until one quits");
  app.add_option("--port", flags.port, "port to serve on (--serve; 0 = any)")->capture_default_str();
  app.add_option("--idle-s", flags.idle_s, "--serve gives up after this long without a peer")->capture_default_str();
  app.add_option("--peer", flags.peer, "active side of a two-host run: HOST[:PORT] of the --serve side");
}

}  // namespace wirezip::harness
