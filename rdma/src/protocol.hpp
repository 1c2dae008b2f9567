#pragma once
// Internal: the set-up messages a two-process link exchanges before any data moves (over TCP for
// tcp links; for verbs in rdma_cm private data and on the set-up connection, verbs_setup.hpp).
// Fixed little-endian layouts, so hosts of either architecture talk; a hello and a welcome
// together fit the 56 bytes an RC connect request can carry, and so does a join. These decoders are the trust boundary
// of link set-up: each checks every field against the receiving side's own limits and throws wirezip::Error naming the
// field and its value. docs/PROTOCOL.md has the layouts.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "wirezip/rdma/page_buffer.hpp"
#include "wirezip/rdma/transport.hpp"

namespace wirezip::rdma::protocol {

inline constexpr unsigned kVersion = 3;  // the digit that ends every magic of this layer

// Active -> passive: the buffer the peer should allocate, or "quit".
struct Hello {
  std::uint64_t buffer_bytes = 0;
  std::uint32_t depth = 0;
  PagePolicy pages = PagePolicy::small;
  bool quit = false;
};
inline constexpr std::size_t kHelloSize = 24;
std::array<std::byte, kHelloSize> encode(const Hello& hello);
// The passive side's parser: buffer in [kMinLinkBuffer, limits.max_buffer], depth in [1, kMaxDepth],
// an allowed page policy, quit 0 or 1.
Hello decode_hello(std::span<const std::byte> bytes, const ServerLimits& limits);
// The magic alone: what a passive side checks before the peer authenticated (it learns no limit
// from the answer). Names the peer's protocol version when only that differs.
void check_hello_version(std::span<const std::byte> bytes);
// The protocol version of a hello's magic (1..9), 0 when it is no wirezip hello.
unsigned hello_version(std::span<const std::byte> bytes);

// Passive -> active: what it allocated, where (verbs: address and rkey), and its backing.
struct Welcome {
  std::uint64_t buffer_bytes = 0;
  std::uint64_t address = 0;  // verbs: remote virtual address of the buffer
  std::uint32_t rkey = 0;     // verbs: its memory key
  std::uint32_t huge_ppm = 0;  // huge fraction of the buffer, in parts per million
};
inline constexpr std::size_t kWelcomeSize = 32;
std::array<std::byte, kWelcomeSize> encode(const Welcome& welcome);
// The active side's parser: the buffer must be exactly the one it asked for (`expected_bytes`),
// huge_ppm at most 10^6. A refusal in its place throws its reason.
Welcome decode_welcome(std::span<const std::byte> bytes, std::uint64_t expected_bytes);
// Verbs: the active side describes its own buffer to the passive side the same way; any size from
// kMinLinkBuffer to the passive side's max_buffer is fine there.
Welcome decode_peer_buffer(std::span<const std::byte> bytes, const ServerLimits& limits);

// Verbs, active -> passive: the connect request of each data connection of a link, once set-up
// authenticated its peer. `token` is the passive side's random one from the grant; the passive
// side compares it (constant time) and the index with the link it is setting up.
using Token = std::array<std::byte, 32>;
struct Join {
  std::uint32_t index = 0;  // which data connection, from 0
  Token token{};
};
inline constexpr std::size_t kJoinSize = 40;
inline constexpr std::uint32_t kMaxQps = 64;
std::array<std::byte, kJoinSize> encode(const Join& join);
// A join's magic: a connect request that is a join and not a hello.
bool is_join(std::span<const std::byte> bytes);
// The passive side's parser: index below kMaxQps.
Join decode_join(std::span<const std::byte> bytes);

// Passive -> active instead of a welcome: why the link is refused (a limit, bad hello). Printable
// ASCII only, at most kRefusalText bytes; over tcp it is kRefusalSize bytes, in an rdma_cm reject
// only as long as its text.
inline constexpr std::size_t kRefusalText = 120;
inline constexpr std::size_t kRefusalSize = 8 + kRefusalText;
// `version`: the magic's, so that a peer of another version (its hello said which) reads the reason.
std::array<std::byte, kRefusalSize> encode_refusal(std::string_view reason, unsigned version = kVersion);
// A refusal of any protocol version; decode_refusal adds which when it is not this one.
bool is_refusal(std::span<const std::byte> bytes);
std::string decode_refusal(std::span<const std::byte> bytes);

}  // namespace wirezip::rdma::protocol
