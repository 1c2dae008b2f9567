#include "coders/huff12_lanes.hpp"

#include <algorithm>
#include <cstdint>

#include "coders/hot_clones.hpp"

namespace wirezip::codecs::huff12 {
namespace {

// Rounds every lane can take with no check: a pair of elements each, and 8 readable bytes at every
// refill (a refill moves at most 7 bytes on; a round takes at most 48 of the >= 56 bits it leaves).
std::size_t safe_rounds(const std::array<DecodeLane, kStreams>& lanes) {
  std::size_t rounds = SIZE_MAX;
  for (const DecodeLane& lane : lanes) {
    const auto left = static_cast<std::size_t>(lane.reader.in_end - lane.reader.in);
    rounds = std::min({rounds, left < 8 ? 0 : (left - 8) / 7 + 1, (lane.end - lane.i) / 2});
  }
  return rounds;
}

struct FastLane {
  std::uint64_t bits;
  unsigned count;
  const std::uint8_t* in;
  [[gnu::always_inline]] void round(const std::uint32_t* table, const std::uint8_t* nibbles, std::uint8_t* out) {
    bits |= load64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    const std::uint32_t first = next_entry(bits, count, table);
    const std::uint32_t second = next_entry(bits, count, table);
    store_pair(out, kNibblePairs[*nibbles] | first >> 16 | (second & 0xffff0000));
  }
};

}  // namespace

// Two lanes at a time keep their state in registers.
WZ_HOT_CLONES void encode_pairs(std::array<EncodeLane, kStreams>& lanes, const std::uint8_t* src, std::size_t m,
                                std::size_t pairs, const std::uint32_t* table) {
  for (std::size_t first = 0; first < kStreams; first += 2) {
    EncodeLane a = lanes[first], b = lanes[first + 1];
    const std::uint8_t* in_a = src + 2 * stream_begin(m, first);
    const std::uint8_t* in_b = src + 2 * stream_begin(m, first + 1);
    for (std::size_t pair = 0; pair < pairs; ++pair) {
      const std::uint32_t va = load_pair(in_a + 4 * pair), vb = load_pair(in_b + 4 * pair);
      a.put(table[symbol_of(va)]);
      b.put(table[symbol_of(vb)]);
      a.put(table[symbol_of(va >> 16)]);
      b.put(table[symbol_of(vb >> 16)]);
      a.flush();
      b.flush();
    }
    lanes[first] = a, lanes[first + 1] = b;
  }
}

// The bulk: all four lanes a pair at a time, lane state in locals (stores to dst cannot alias it);
// every lane's i is even here. Then each lane's rest, checked element by element.
WZ_HOT_CLONES void decode_lanes(std::array<DecodeLane, kStreams>& lanes, const std::uint32_t* table,
                                const std::uint8_t* nibbles, std::uint8_t* dst) {
  for (std::size_t rounds; (rounds = safe_rounds(lanes)) > 0;) {
    std::array<FastLane, kStreams> fast;
    for (std::size_t s = 0; s < kStreams; ++s)
      fast[s] = {lanes[s].reader.bits, lanes[s].reader.count, lanes[s].reader.in};
    FastLane a = fast[0], b = fast[1], c = fast[2], d = fast[3];
    const std::size_t ia = lanes[0].i, ib = lanes[1].i, ic = lanes[2].i, id = lanes[3].i;
    for (std::size_t r = 0; r < rounds; ++r) {
      a.round(table, nibbles + ia / 2 + r, dst + 2 * ia + 4 * r);
      b.round(table, nibbles + ib / 2 + r, dst + 2 * ib + 4 * r);
      c.round(table, nibbles + ic / 2 + r, dst + 2 * ic + 4 * r);
      d.round(table, nibbles + id / 2 + r, dst + 2 * id + 4 * r);
    }
    fast = {a, b, c, d};
    for (std::size_t s = 0; s < kStreams; ++s) {
      lanes[s].reader.bits = fast[s].bits, lanes[s].reader.count = fast[s].count, lanes[s].reader.in = fast[s].in;
      lanes[s].i += 2 * rounds;
    }
  }
  for (DecodeLane& lane : lanes) {
    while (lane.i < lane.end) {
      lane.reader.refill();
      lane.decode_one(table, nibbles, dst);
    }
  }
}

}  // namespace wirezip::codecs::huff12
