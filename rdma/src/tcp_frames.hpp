#pragma once
// Internal: the frames a tcp link carries once it is up, and their one decoder. Every frame is a
// 24-byte header (type u8, pad[3], imm u32, offset u64, length u64), for writes followed by the
// payload. The decoder checks the type and the padding; offsets and lengths are checked against
// the receiving buffer where they are used (tcp_transport.cpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace wirezip::rdma::tcp {

// A write with an immediate is `notify`: the peer queues an Arrival; a plain `write` is silent.
enum class Frame : std::uint8_t { write = 1, ack = 2, read_request = 3, read_response = 4, notify = 5 };
inline constexpr std::size_t kHeaderSize = 24;

struct Header {
  Frame type = Frame::write;
  std::uint32_t imm = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

std::array<std::byte, kHeaderSize> encode(const Header& header);
// Throws wirezip::Error naming the field: an unknown type, non-zero padding, an ack or read
// response with an offset, an ack with a length.
Header decode(std::span<const std::byte, kHeaderSize> bytes);

}  // namespace wirezip::rdma::tcp
