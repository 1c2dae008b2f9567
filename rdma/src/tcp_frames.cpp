#include "tcp_frames.hpp"

#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::rdma::tcp {

std::array<std::byte, kHeaderSize> encode(const Header& h) {
  std::array<std::byte, kHeaderSize> out{};
  store_le<std::uint8_t>(out, 0, static_cast<std::uint8_t>(h.type));
  store_le<std::uint32_t>(out, 4, h.imm);
  store_le<std::uint64_t>(out, 8, h.offset);
  store_le<std::uint64_t>(out, 16, h.length);
  return out;
}

Header decode(std::span<const std::byte, kHeaderSize> in) {
  const auto type = load_le<std::uint8_t>(in, 0);
  if (type < static_cast<std::uint8_t>(Frame::write) || type > static_cast<std::uint8_t>(Frame::notify))
    fail("frame.type = {} is no tcp link frame (is the peer a wirezip endpoint?)", type);
  if (load_le<std::uint32_t>(in, 0) >> 8 != 0) fail("frame.pad is not zero");
  const Header header{static_cast<Frame>(type), load_le<std::uint32_t>(in, 4), load_le<std::uint64_t>(in, 8),
                      load_le<std::uint64_t>(in, 16)};
  if ((header.type == Frame::ack || header.type == Frame::read_response) && header.offset != 0)
    fail("frame.offset = {} in an {}", header.offset, header.type == Frame::ack ? "ack" : "read response");
  if (header.type == Frame::ack && header.length != 0) fail("frame.length = {} in an ack", header.length);
  return header;
}

}  // namespace wirezip::rdma::tcp
