#include "wirezip/datasets/bf16.hpp"

#include "wirezip/util/error.hpp"

namespace wirezip::datasets {
namespace {

// Bytes are assembled explicitly: file data may be unaligned, and the format is little-endian
// whatever the host is. Compilers turn this into plain loads on little-endian machines.
std::uint32_t load_le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

std::uint16_t load_le16(const std::byte* p) {
  return static_cast<std::uint16_t>(static_cast<unsigned>(p[0]) | static_cast<unsigned>(p[1]) << 8);
}

void store_le16(std::byte* p, std::uint16_t value) {
  p[0] = static_cast<std::byte>(value & 0xff);
  p[1] = static_cast<std::byte>(value >> 8);
}

void check_sizes(const char* what, std::size_t width, std::span<const std::byte> src, std::span<std::byte> dst) {
  if (src.size() % width != 0)
    fail("{} -> bf16: {} bytes is not a whole number of {}-byte elements", what, src.size(), width);
  if (dst.size() != src.size() / width * 2)
    fail("{} -> bf16: destination holds {} bytes, expected {}", what, dst.size(), src.size() / width * 2);
}

}  // namespace

void f32_le_to_bf16_le(std::span<const std::byte> src, std::span<std::byte> dst) {
  check_sizes("f32", 4, src, dst);
  for (std::size_t i = 0; i < src.size() / 4; ++i) store_le16(&dst[2 * i], fp32_bits_to_bf16(load_le32(&src[4 * i])));
}

void f16_le_to_bf16_le(std::span<const std::byte> src, std::span<std::byte> dst) {
  check_sizes("f16", 2, src, dst);
  for (std::size_t i = 0; i < src.size() / 2; ++i) store_le16(&dst[2 * i], fp16_to_bf16(load_le16(&src[2 * i])));
}

}  // namespace wirezip::datasets
