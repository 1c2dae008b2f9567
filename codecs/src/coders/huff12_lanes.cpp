#include "coders/huff12_lanes.hpp"

#include "coders/hot_clones.hpp"

namespace wirezip::codecs::huff12 {

namespace {

struct FastLane {
  std::uint64_t bits;
  unsigned count;
  const std::uint8_t* in;
  [[gnu::always_inline]] void round(const std::uint32_t* table, std::uint8_t* out) {
    bits |= load64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    const std::uint32_t first = next_entry(bits, count, table);
    const std::uint32_t second = next_entry(bits, count, table);
    store32(out, first >> 16 | (second & 0xffff0000));  // the nibbles follow, a block at a time
  }
};

}  // namespace

// Two lanes at a time keep their state in registers: lanes 0 and 1 over the rounds, then 2 and 3.
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

// The four lanes together, state in locals (stores to dst cannot alias it).
WZ_HOT_CLONES void decode_rounds(std::array<BitReader, kStreams>& readers, const std::uint32_t* table,
                                 const std::uint8_t* nibbles, std::uint8_t* dst, std::size_t first,
                                 std::size_t rounds) {
  std::array<FastLane, kStreams> fast;
  for (std::size_t s = 0; s < kStreams; ++s) fast[s] = {readers[s].bits, readers[s].count, readers[s].in};
  FastLane a = fast[0], b = fast[1], c = fast[2], d = fast[3];
  for (std::size_t r = first; r < first + rounds; ++r) {
    std::uint8_t* out = dst + 2 * kRoundElements * r;
    a.round(table, out);
    b.round(table, out + 4);
    c.round(table, out + 8);
    d.round(table, out + 12);
  }
  // The sign and low bits of the rounds just written (in L1), in a loop the compiler vectorizes.
  const std::size_t pairs = kStreams * rounds;
  const std::uint8_t* nib = nibbles + kStreams * first;
  std::uint8_t* out = dst + 2 * kRoundElements * first;
  for (std::size_t j = 0; j < pairs; ++j) store32(out + 4 * j, load32(out + 4 * j) | pair_low_bits(nib[j]));
  fast = {a, b, c, d};
  for (std::size_t s = 0; s < kStreams; ++s)
    readers[s].bits = fast[s].bits, readers[s].count = fast[s].count, readers[s].in = fast[s].in;
}

}  // namespace wirezip::codecs::huff12
