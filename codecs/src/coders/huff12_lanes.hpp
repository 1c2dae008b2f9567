#pragma once
// Internal: the eight interleaved streams of huff12.cpp (12-bit symbols of whole bf16 elements) and
// the loops that code them. The loops are cloned per target (hot_clones.hpp).
#include <array>
#include <cstddef>
#include <cstdint>

#include "coders/bit_reader.hpp"
#include "coders/huff_tables.hpp"

namespace wirezip::codecs::huff12 {

constexpr unsigned kSymbolBits = 12, kMaxLength = 12;
constexpr std::uint32_t kSymbolMask = (1u << kSymbolBits) - 1;
constexpr std::size_t kEscape = std::size_t{1} << kSymbolBits;  // the symbol after the 4096 real ones
constexpr std::size_t kStreams = 8;

[[gnu::always_inline]] inline unsigned element(const std::uint8_t* src, std::size_t i) {
  return src[2 * i] | (src[2 * i + 1] << 8);
}
[[gnu::always_inline]] inline unsigned symbol_of(unsigned e) { return (e >> 3) & kSymbolMask; }
[[gnu::always_inline]] inline unsigned nibble_of(unsigned e) { return ((e >> 12) & 8) | (e & 7); }

// Element i goes to stream (i / 2) % 8: the streams take turns a pair of elements at a time, so the
// eight lanes read and write the chunk front to back together (a block is hashed while in L1), and
// a pair shares its byte of nibbles.
constexpr std::size_t stream_of(std::size_t i) { return (i >> 1) % kStreams; }
constexpr std::size_t kRoundElements = 2 * kStreams;  // a pair for each lane

struct EncodeLane {
  std::uint8_t* out;
  std::uint64_t bits = 0;
  unsigned count = 0;
  // One code of up to 24 bits (an escape and its symbol); at most 7 bits stay pending after flush.
  [[gnu::always_inline]] void put(std::uint32_t code_bits, unsigned length) {
    bits |= static_cast<std::uint64_t>(code_bits) << count;
    count += length;
  }
  [[gnu::always_inline]] void flush() {
    store64(out, bits);
    const unsigned bytes = count >> 3;
    out += bytes;
    bits >>= 8 * bytes;  // bytes <= 6: count never exceeds 7 + 2 * 24
    count &= 7;
  }
};

// A decode table entry (one per 12-bit window): the code's length in bits 0-5, bit 7 set for the
// escape, and the element's bits 3-14 (the symbol in place) in bits 19-30.
constexpr std::uint32_t kEscapeFlag = 0x80;
constexpr std::uint32_t decode_entry(std::uint32_t symbol, unsigned length) { return symbol << 19 | length; }

// The entry of the next code in `bits` (which hold >= 24 bits), shifted past it; an escape is
// replaced by the entry of the symbol after it, which is taken too. `taken`: the bits taken.
[[gnu::always_inline]] inline std::uint32_t take_entry(std::uint64_t& bits, const std::uint32_t* table,
                                                       unsigned& taken) {
  const std::uint32_t entry = table[bits & kSymbolMask];
  taken = entry & 63;  // the code's length (<= 12); the escape flag lies above these bits
  bits >>= taken;
  if (entry & kEscapeFlag) [[unlikely]] {
    const auto symbol = static_cast<std::uint32_t>(bits & kSymbolMask);
    bits >>= kSymbolBits;
    taken += kSymbolBits;
    return decode_entry(symbol, 0);
  }
  return entry;
}
// The same for a bit buffer that keeps no count.
[[gnu::always_inline]] inline std::uint32_t take_entry(std::uint64_t& bits, const std::uint32_t* table) {
  unsigned taken;
  return take_entry(bits, table, taken);
}

// A byte of nibbles as the sign and low mantissa bits of two elements, the first in the low half
// (what a pair of elements loaded with load32 lacks after its symbols).
[[gnu::always_inline]] constexpr std::uint32_t pair_low_bits(std::uint32_t b) {
  return ((b & 0x08) << 12 | (b & 7)) | ((b & 0x80) << 8 | ((b >> 4) & 7)) << 16;
}

// Element i, decoded from its stream (checked: past its end the reader reads zeros), its nibble, both
// merged into dst.
[[gnu::always_inline]] inline void decode_one(BitReader& reader, const std::uint32_t* table,
                                              const std::uint8_t* nibbles, std::uint8_t* dst, std::size_t i) {
  reader.refill();
  unsigned taken;
  const std::uint32_t entry = take_entry(reader.bits, table, taken);
  reader.count -= taken;
  const std::uint32_t low_bits = pair_low_bits(nibbles[i / 2]) >> (16 * (i % 2));
  store_le(dst + 2 * i, static_cast<std::uint16_t>((entry >> 16) | (low_bits & 0xffff)));
}

// Rounds [0, rounds) of elements from src: the symbols to the lanes, the nibbles to `nibbles`
// (a byte per pair).
void encode_rounds(std::array<EncodeLane, kStreams>& lanes, const std::uint8_t* src, std::size_t rounds,
                   const std::uint32_t* code_bits, const std::uint8_t* code_lengths, std::uint8_t* nibbles);
// Rounds [first, first + rounds) into dst, with no checks: the caller has made sure that every
// round's 8-byte load at each lane's place lies within that lane's stream (a round moves a lane at
// most 6 bytes on), so no reader has read past its end. The readers' streams lie back to back in
// one buffer, in stream order.
void decode_rounds(std::array<BitReader, kStreams>& readers, const std::uint32_t* table, const std::uint8_t* nibbles,
                   std::uint8_t* dst, std::size_t first, std::size_t rounds);

}  // namespace wirezip::codecs::huff12
