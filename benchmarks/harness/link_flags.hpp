#pragma once
// The flags bench_rdma and bench_pipeline share: which transport and device, the bound on every
// wait, and the two-host mode (--serve on one host, --peer on the other) with what a server
// grants (--max-buffer, --allow-pages), where it listens (--bind) and the shared secret. What the
// flags leave open is settled here once: the default transport (transports()) and the secret,
// read when the flags are parsed and held in memory from then on.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wirezip/rdma/transport.hpp"

namespace wirezip::harness {

// The longest --timeout-ms, --max-timeout-ms and --idle-s any binary takes: a day. A longer wait is
// a typo, and far larger counts overflow the clocks they are added to.
constexpr long kMaxTimeoutMs = 86'400'000;

// The transports a run uses, and why: the context records the reason.
struct TransportChoice {
  std::vector<rdma::TransportKind> kinds;
  std::string why;  // "requested", or which default and why
};

struct LinkFlags {
  std::string transport;  // empty: verbs when a device exists, else the binary's fallback
  std::string device;
  int qps = 1;
  long timeout_ms = 10000;
  bool serve = false;
  std::uint16_t port = 0;
  long idle_s = 120;
  std::string peer;
  std::string bind;         // --serve: the address to listen on (an interface's, once parsed); empty = all
  std::string max_buffer;   // --serve: empty = rdma::default_max_buffer()
  std::string allow_pages = "4k,thp,hugetlb";
  long max_timeout_ms = 600'000;
  std::string secret_file;  // or WIREZIP_SECRET_FILE
  // The secret itself, in memory: read from the file above once, when the flags are parsed (see
  // add_link_flags), or the MPI job's own (--mpi). Empty: the links run unauthenticated.
  std::string secret;
  // --mpi: told the port once a --serve side listens (an ephemeral one), to pass it to the peer rank.
  std::function<void(std::uint16_t)> on_listening;

  // --transport's comma-separated list; without one, verbs when a device exists, else `fallback`.
  TransportChoice transports(const std::vector<rdma::TransportKind>& fallback) const;
  // qps, device, timeout, limits and the secret as LinkOptions; throws on values out of range.
  rdma::LinkOptions options() const;
};

// Records in the JSON context whether both ends ran here or against a --serve peer.
void add_link_context(const std::optional<std::string>& peer_host, std::uint16_t peer_port);
// Two-host mode: opens one minimal link to the server to learn about its host, and records that
// as peer_* context keys (so compare --group-by sees both ends of the link).
void add_server_context(rdma::TransportKind kind, const rdma::LinkOptions& options, const std::string& host,
                        std::uint16_t port);
// --serve: the listener's first words. Anyone who can reach an unauthenticated port runs cases.
void announce_listening(std::string_view binary, rdma::TransportKind kind, const LinkFlags& flags,
                        std::uint16_t port);

// Registers the flags on `app`; once `app` has parsed them, reads the secret into flags.secret (a
// bad secret file fails the parse with one line naming it).
void add_link_flags(CLI::App& app, LinkFlags& flags, std::uint16_t default_port, const std::string& transport_help);

}  // namespace wirezip::harness
