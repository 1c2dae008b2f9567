#include "link_flags.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>

#include "context.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"
#include "wirezip/util/size.hpp"

namespace wirezip::harness {

TransportChoice LinkFlags::transports(const std::vector<rdma::TransportKind>& fallback) const {
  if (!transport.empty()) {
    TransportChoice choice{{}, "requested"};
    for (const std::string& name : flag::list("--transport", transport))
      choice.kinds.push_back(rdma::parse_transport(name));
    return choice;
  }
  if (rdma::verbs_available()) return {{rdma::TransportKind::verbs}, "default: an RDMA device is present"};
  std::string names;
  for (rdma::TransportKind kind : fallback)
    names += fmt::format("{}{}", names.empty() ? "" : ",", rdma::transport_name(kind));
  return {fallback, "default: no RDMA device, so " + names};
}

rdma::LinkOptions LinkFlags::options() const {
  if (qps <= 0 || qps > 64) fail("--qps must be in [1, 64]");
  if (timeout_ms <= 0 || idle_s <= 0 || max_timeout_ms <= 0) fail("--timeout-ms, --idle-s and --max-timeout-ms must be positive");
  if (timeout_ms > kMaxTimeoutMs || max_timeout_ms > kMaxTimeoutMs || idle_s > kMaxTimeoutMs / 1000)
    fail("--timeout-ms, --idle-s and --max-timeout-ms must be at most a day ({} ms)", kMaxTimeoutMs);
  rdma::LinkOptions options;
  options.qps = qps;
  options.device = device;
  options.timeout = std::chrono::milliseconds(timeout_ms);
  if (!max_buffer.empty()) options.limits.max_buffer = flag::size("--max-buffer", max_buffer, rdma::kMinLinkBuffer);
  options.limits.allow_small = options.limits.allow_thp = options.limits.allow_hugetlb = false;
  for (const std::string& name : flag::list("--allow-pages", allow_pages)) {
    switch (rdma::parse_page_policy(name)) {
      case rdma::PagePolicy::small: options.limits.allow_small = true; break;
      case rdma::PagePolicy::thp: options.limits.allow_thp = true; break;
      case rdma::PagePolicy::hugetlb: options.limits.allow_hugetlb = true; break;
    }
  }
  options.secret = secret;
  options.context = host_facts();
  if (transport.empty() || transport.find("verbs") != std::string::npos) {  // the peer records this side's port (GID, firmware)
    try {
      options.context.merge(verbs_facts(device));
    } catch (const std::exception&) {  // no port: every verbs case fails with the reason
    }
  }
  return options;
}

void add_link_context(const std::optional<std::string>& peer_host, std::uint16_t peer_port) {
  benchmark::AddCustomContext("link", peer_host ? fmt::format("two hosts, peer {}:{}", *peer_host, peer_port)
                                                : "loopback, both ends in this process");
}

void add_server_context(rdma::TransportKind kind, const rdma::LinkOptions& options, const std::string& host,
                        std::uint16_t port) {
  rdma::LinkOptions probe = options;
  probe.buffer_bytes = rdma::kMinLinkBuffer;
  probe.pages = rdma::PagePolicy::small;
  probe.depth = 1;
  add_peer_context(rdma::connect(kind, probe, host, port)->peer_context());
}

void announce_listening(std::string_view binary, rdma::TransportKind kind, const LinkFlags& flags, std::uint16_t port) {
  // "serving T on port N" is what scripts wait for; "listening on ADDR:PORT" says where.
  fmt::print("{}: serving {} on port {}, listening on {}:{}\n", binary, rdma::transport_name(kind), port,
             flags.bind.empty() ? "0.0.0.0" : flags.bind, port);
  if (flags.secret.empty())
    fmt::print("{}: no --secret-file: anyone who can reach this port can run cases and stop this server\n", binary);
  std::fflush(stdout);
  if (flags.on_listening) flags.on_listening(port);
}

void add_link_flags(CLI::App& app, LinkFlags& flags, std::uint16_t default_port, const std::string& transport_help) {
  flags.port = default_port;
  app.add_option("--transport", flags.transport, transport_help);
  app.add_option("--device", flags.device, "verbs device (default: the first with an active port)");
  app.add_option("--qps", flags.qps, "verbs queue pairs")->capture_default_str();
  app.add_option("--timeout-ms", flags.timeout_ms, "bound on every wait")->capture_default_str();
  app.add_flag("--serve", flags.serve, "passive side of a two-host run: serve peers until one quits");
  app.add_option("--port", flags.port, "port to serve on (--serve; 0 = any)")->capture_default_str();
  app.add_option("--bind", flags.bind,
                 "--serve: interface (its IPv4 address) or address to listen on (default: all interfaces)");
  app.add_option("--idle-s", flags.idle_s, "--serve gives up after this long without a peer, and ends a link silent this long")
      ->capture_default_str();
  app.add_option("--max-buffer", flags.max_buffer,
                 "--serve: largest buffer a peer may ask for (default: the smaller of 4GiB and a quarter of memory)");
  app.add_option("--allow-pages", flags.allow_pages, "--serve: page policies a peer may ask for")->capture_default_str();
  app.add_option("--max-timeout-ms", flags.max_timeout_ms, "--serve: largest per-case timeout a peer may ask for")
      ->capture_default_str();
  app.add_option("--secret-file", flags.secret_file,
                 "shared secret (mode 600) both sides must hold: mutual HMAC-SHA256 authentication "
                 "(default: $WIREZIP_SECRET_FILE)");
  app.add_option("--peer", flags.peer, "active side of a two-host run: HOST[:PORT] of the --serve side");
  // The one read of the secret: every link, listener and --mpi pair takes it from flags.secret.
  app.final_callback([&flags] {
    // An interface name stands for its IPv4 address: one command line for hosts with different addresses.
    if (const std::string ip = rdma::netdev_ipv4(flags.bind); !ip.empty()) flags.bind = ip;
    if (const std::string path = rdma::secret_file_path(flags.secret_file); !path.empty())
      flags.secret = rdma::load_secret(path);
  });
}

}  // namespace wirezip::harness
