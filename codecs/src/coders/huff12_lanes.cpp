#include "coders/huff12_lanes.hpp"

#include <bit>

#include "coders/hot_clones.hpp"

namespace wirezip::codecs::huff12 {

// Two lanes at a time keep their state in registers: lanes 0 and 1 over the rounds, then 2 and 3,
// and so on.
WZ_HOT_CLONES void encode_rounds(std::array<EncodeLane, kStreams>& lanes, const std::uint8_t* src, std::size_t rounds,
                                 const std::uint32_t* code_bits, const std::uint8_t* code_lengths,
                                 std::uint8_t* nibbles) {
  for (std::size_t first = 0; first < kStreams; first += 2) {
    EncodeLane a = lanes[first], b = lanes[first + 1];
    for (std::size_t r = 0; r < rounds; ++r) {
      const std::uint8_t* round = src + 2 * kRoundElements * r;
      const std::uint32_t va = load32(round + 4 * first), vb = load32(round + 4 * (first + 1));
      const unsigned a0 = symbol_of(va), b0 = symbol_of(vb), a1 = symbol_of(va >> 16), b1 = symbol_of(vb >> 16);
      a.put(code_bits[a0], code_lengths[a0]);
      b.put(code_bits[b0], code_lengths[b0]);
      a.put(code_bits[a1], code_lengths[a1]);
      b.put(code_bits[b1], code_lengths[b1]);
      a.flush();
      b.flush();
    }
    lanes[first] = a, lanes[first + 1] = b;
  }
  // A byte of nibbles per pair, in a loop the compiler vectorizes.
  for (std::size_t j = 0; j < kStreams * rounds; ++j) {
    const std::uint32_t v = load32(src + 4 * j);
    nibbles[j] = static_cast<std::uint8_t>(nibble_of(v) | nibble_of(v >> 16) << 4);
  }
}

// The eight lanes together. Each lane's place in its stream is one bit offset: a round loads 8 bytes
// there afresh and decodes two elements (<= 48 bits of the >= 57 the load holds), so no bit count
// is kept. Bit 63 is a marker: after the round its place tells how many bits were taken (the count
// of leading zeros).
WZ_HOT_CLONES void decode_rounds(std::array<BitReader, kStreams>& readers, const std::uint32_t* table,
                                 const std::uint8_t* nibbles, std::uint8_t* dst, std::size_t first,
                                 std::size_t rounds) {
  // The streams lie in one buffer in lane order: offsets from stream 0's start leave one base
  // pointer to hold, not eight.
  const std::uint8_t* base = readers[0].start;
  std::array<std::size_t, kStreams> at;  // bits of the buffer at `base` already taken
  for (std::size_t s = 0; s < kStreams; ++s)
    at[s] = 8 * static_cast<std::size_t>(readers[s].start - base) + readers[s].consumed_bits();
  for (std::size_t r = first; r < first + rounds; ++r) {
    std::uint8_t* out = dst + 2 * kRoundElements * r;
#pragma GCC unroll 8
    for (std::size_t s = 0; s < kStreams; ++s) {
      std::uint64_t bits = (load64(base + (at[s] >> 3)) >> (at[s] & 7)) | (std::uint64_t{1} << 63);
      const std::uint32_t first_entry = take_entry(bits, table);
      const std::uint32_t second_entry = take_entry(bits, table);
      store32(out + 4 * s, first_entry >> 16 | (second_entry & 0xffff0000));  // the nibbles follow
      at[s] += static_cast<std::size_t>(std::countl_zero(bits));
    }
  }
  // The sign and low bits of the rounds just written (in L1), in a loop the compiler vectorizes.
  const std::size_t pairs = kStreams * rounds;
  const std::uint8_t* nib = nibbles + kStreams * first;
  std::uint8_t* out = dst + 2 * kRoundElements * first;
  for (std::size_t j = 0; j < pairs; ++j) store32(out + 4 * j, load32(out + 4 * j) | pair_low_bits(nib[j]));
  for (std::size_t s = 0; s < kStreams; ++s) {
    BitReader& reader = readers[s];
    reader.in = base + (at[s] >> 3), reader.bits = 0, reader.count = 0;
    reader.refill();
    reader.take(at[s] & 7);
  }
}

}  // namespace wirezip::codecs::huff12
