#pragma once
// Internal: the parts of a DEFLATE stream (RFC 1951) that wirezip's literal-only encoder writes:
// canonical codes, the header of a dynamic-Huffman block, and bit-exact concatenation of streams.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace wirezip::codecs::deflate {

constexpr unsigned kMaxCodeLength = 15;    // what RFC 1951 allows for literal/length codes
constexpr std::size_t kLiterals = 257;     // bytes 0..255 and end-of-block (256)
constexpr std::size_t kEndOfBlock = 256;
constexpr std::size_t kMaxHeaderBytes = 512;  // 17 + 19 x 3 + 259 x (7 + 7) bits, rounded up

// LSB-first bit writer into a growing byte vector, for the block header.
class BitWriter {
 public:
  void put(std::uint32_t value, unsigned bits);
  // The bytes so far, the last one partial when bit_count() % 8 != 0 (its unused bits are zero).
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }
  std::uint64_t bit_count() const { return bits_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint64_t bits_ = 0;
};

// Writes the header of a final dynamic-Huffman block (BFINAL = 1, BTYPE = 2) whose literal/length
// code has these lengths for literals and end-of-block, and no match codes. The distance code is
// two unused one-bit codes: a complete code every inflater accepts (some refuse an empty one).
void write_block_header(const std::array<std::uint8_t, kLiterals>& lengths, BitWriter& out);

// Appends `bits` bits from `src` (LSB-first, unused high bits of its last byte zero) at bit `position`
// of dst, whose bits below `position` are kept and whose later bytes are overwritten. Writes up to
// one byte past the last bit; returns the new position.
std::uint64_t append_bits(std::uint8_t* dst, std::uint64_t position, const std::uint8_t* src, std::uint64_t bits);

}  // namespace wirezip::codecs::deflate
