#pragma once
// Internal: the set-up messages a two-process link exchanges before any data moves (over TCP for
// tcp links, in rdma_cm private data for verbs). Fixed little-endian layouts, so hosts of either
// architecture talk; both fit the 56 bytes an RC connect request can carry.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "wirezip/rdma/page_buffer.hpp"

namespace wirezip::rdma::protocol {

// Active -> passive: the buffer the peer should allocate, or "quit".
struct Hello {
  std::uint64_t buffer_bytes = 0;
  std::uint32_t depth = 0;
  PagePolicy pages = PagePolicy::small;
  bool quit = false;
};
inline constexpr std::size_t kHelloSize = 24;
std::array<std::byte, kHelloSize> encode(const Hello& hello);
Hello decode_hello(std::span<const std::byte> bytes);  // throws wirezip::Error on a bad message

// Passive -> active: what it allocated, where (verbs: address and rkey), and its backing.
struct Welcome {
  std::uint64_t buffer_bytes = 0;
  std::uint64_t address = 0;  // verbs: remote virtual address of the buffer
  std::uint32_t rkey = 0;     // verbs: its memory key
  std::uint32_t huge_ppm = 0;  // huge fraction of the buffer, in parts per million
};
inline constexpr std::size_t kWelcomeSize = 32;
std::array<std::byte, kWelcomeSize> encode(const Welcome& welcome);
Welcome decode_welcome(std::span<const std::byte> bytes);

}  // namespace wirezip::rdma::protocol
