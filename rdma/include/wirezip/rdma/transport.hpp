#pragma once
// One interface for bulk one-sided transfer between registered buffers, over RDMA verbs (RC QPs),
// TCP sockets, or memory (a peer thread copies: the ceiling of what this host can move).
//
// Each Endpoint owns a buffer that it writes from and that its peer writes into. A write names a
// local offset, a remote offset, a length and optionally a 32-bit immediate; it completes when the
// bytes are in the peer's buffer (RC: acknowledged by the remote adapter; TCP: acknowledged by the
// peer after placing them; mem: copied). A write with an immediate (verbs: RDMA WRITE WITH IMM)
// also reaches the peer as an Arrival carrying it; one without (plain RDMA WRITE) is silent, as
// in ib_write_bw. Zero-length writes with an immediate carry just the immediate (credits). Every wait has a timeout;
// a peer that disappears is an error, never a hang.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "wirezip/rdma/page_buffer.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::rdma {

enum class TransportKind { verbs, tcp, mem };
TransportKind parse_transport(std::string_view text);  // "verbs" | "tcp" | "mem"
std::string_view transport_name(TransportKind kind);

// Thrown when the verbs transport has no device to run on, so callers can report a skip.
class NoDeviceError : public Error {
 public:
  using Error::Error;
};

// Thrown by Listener::accept when one peer misbehaved (bad message, failed authentication, a
// request beyond the limits, silence): that connection is over, the listener serves the next.
class PeerError : public Error {
 public:
  using Error::Error;
};

// Link requests a passive side grants, at most (--max-buffer, allowed pages). A request beyond
// them is refused in the reply, with the reason, before anything is allocated.
inline constexpr std::size_t kMinLinkBuffer = 4096;  // room for the set-up messages
inline constexpr std::size_t kMaxDepth = 256;
// A zero-byte write with this immediate tells a passive side the link is alive (verbs cannot see
// plain writes). Its top three bits are zero, as are those of every set-up message.
// Endpoints absorb it (it only moves last_heard()), so a keepalive is never an arrival and a
// passive side that polls slowly cannot see a stream of them as a flood.
inline constexpr std::uint32_t kKeepaliveImm = 0x0057a005;
inline bool is_keepalive(std::uint32_t imm, std::size_t length) { return imm == kKeepaliveImm && length == 0; }
// The default --max-buffer: the smaller of 4 GiB and a quarter of physical memory.
std::size_t default_max_buffer();
struct ServerLimits {
  std::size_t max_buffer = default_max_buffer();
  bool allow_small = true, allow_thp = true, allow_hugetlb = true;
  bool allows(PagePolicy pages) const;
};

struct LinkOptions {
  std::size_t buffer_bytes = 64 << 20;  // each endpoint's registered buffer
  PagePolicy pages = PagePolicy::small;
  std::size_t depth = 16;               // most writes in flight per endpoint
  int qps = 1;                          // verbs: queue pairs (writes are spread over them)
  std::string device;                   // verbs: device name; empty = the first with an active port
  std::chrono::milliseconds timeout{10000};
  // Two-process links: the shared secret both sides prove they hold (empty: no authentication),
  // what the passive side grants, and the facts it tells its peer about itself (host, CPU, ...).
  std::string secret;
  ServerLimits limits;
  std::map<std::string, std::string> context;
};

struct Arrival {
  std::uint32_t imm = 0;
  std::size_t offset = 0;  // where in this endpoint's buffer the bytes landed (verbs: always 0,
                           // a completion does not carry it; encode the place in the immediate)
  std::size_t length = 0;
};

class Endpoint {
 public:
  virtual ~Endpoint() = default;

  virtual TransportKind kind() const = 0;
  virtual const PageBuffer& buffer() const = 0;
  virtual std::size_t remote_buffer_bytes() const = 0;
  // The peer's buffer backing, as the peer measured it when the link was set up.
  virtual double remote_huge_fraction() const = 0;

  // Posts a write of buffer()[local_offset, +length) to the peer's buffer at remote_offset.
  // Blocks while `depth` writes are in flight. Throws on bad ranges, timeout or a failed link.
  virtual void post_write(std::size_t local_offset, std::size_t remote_offset, std::size_t length,
                          std::optional<std::uint32_t> imm) = 0;
  virtual std::size_t in_flight() const = 0;
  // Waits until at most `count` writes are in flight.
  virtual void wait_in_flight_at_most(std::size_t count) = 0;

  // The next write the peer made into this buffer, oldest first.
  virtual Arrival wait_arrival() = 0;
  virtual std::optional<Arrival> poll_arrival() = 0;
  // Like poll_arrival, but waits up to `wait` for one (without spinning where the transport can
  // block). Nothing within `wait` is not an error; a failed link still throws.
  virtual std::optional<Arrival> wait_arrival_for(std::chrono::microseconds wait);

  // Copies the peer's buffer [remote_offset, +into.size()) into `into`: verification, not timed.
  virtual void read_remote(std::size_t remote_offset, std::span<std::byte> into) = 0;

  // Total time so far with at least one write in flight (verbs: until the completion was polled,
  // which the sender does between its own steps, so a little past the wire).
  virtual std::optional<double> busy_seconds() const { return std::nullopt; }

  // When this endpoint last heard from its peer (any message it can see; verbs sees only writes
  // with an immediate). A passive side ends links that stay silent for its idle limit.
  virtual std::chrono::steady_clock::time_point last_heard() const { return std::chrono::steady_clock::now(); }
  // Two-process links: the facts the passive side told about itself (empty otherwise).
  const std::map<std::string, std::string>& peer_context() const { return peer_context_; }
  void set_peer_context(std::map<std::string, std::string> context) { peer_context_ = std::move(context); }

  // Verbs: registration time of the local buffer, device and port facts, negotiated link rate.
  virtual std::optional<double> registration_us() const { return std::nullopt; }
  virtual std::map<std::string, std::string> device_context() const { return {}; }
  virtual std::optional<double> link_bytes_per_second() const { return std::nullopt; }

 private:
  std::map<std::string, std::string> peer_context_;
};

// Accepts peers for the passive side of a two-process link (bench --serve).
class Listener {
 public:
  virtual ~Listener() = default;
  virtual std::uint16_t port() const = 0;
  // The next peer's endpoint, its buffer allocated as the peer asked (size, pages), after the
  // set-up handshake (authenticated where a secret is set). Returns null when an (authenticated)
  // peer says it is done (quit) or no peer came within `idle`. A peer that misbehaves ends its
  // own connection with PeerError naming it and the reason; the listener stays usable.
  virtual std::unique_ptr<Endpoint> accept(std::chrono::milliseconds idle) = 0;
};

struct LinkPair {
  std::unique_ptr<Endpoint> first;   // the active side (it connected)
  std::unique_ptr<Endpoint> second;  // the passive side
};

// Both ends in this process: verbs over one device, tcp over 127.0.0.1, or memory.
LinkPair connect_loopback(TransportKind kind, const LinkOptions& options);
// Passive side on `port` (0 = any free port); "host" binds (empty = all addresses).
std::unique_ptr<Listener> listen(TransportKind kind, const LinkOptions& options, const std::string& host,
                                 std::uint16_t port);
// Active side: connects to a Listener, asking for a peer buffer like its own (options).
std::unique_ptr<Endpoint> connect(TransportKind kind, const LinkOptions& options, const std::string& host,
                                  std::uint16_t port);
// Tells a Listener its peer is done, so accept() returns null and a --serve process exits. With a
// secret the quit is a whole authenticated link set-up on a minimal buffer.
void send_quit(TransportKind kind, const LinkOptions& options, const std::string& host, std::uint16_t port);

// The secret file a side uses: `flag` (--secret-file) when given, else $WIREZIP_SECRET_FILE;
// empty when neither is set. WIREZIP_SECRET_FILE set to "" is an error, not "no authentication".
std::string secret_file_path(const std::string& flag);
// Reads a shared secret for LinkOptions::secret (1..4096 bytes, one trailing newline dropped).
// Refuses a file that group or others can read or write, as ssh refuses such a private key, a
// longer file (never cut to the limit) and anything but a regular file (a FIFO does not block).
std::string load_secret(const std::string& path);

// "HOST[:PORT]" -> host, port (default_port when absent). Throws on a bad port.
std::pair<std::string, std::uint16_t> parse_host_port(std::string_view text, std::uint16_t default_port);

}  // namespace wirezip::rdma
