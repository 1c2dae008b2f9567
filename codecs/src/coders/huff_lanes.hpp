#pragma once
// Internal: the eight interleaved Huffman streams of huff.cpp and the bulk loops that drive them.
// The bulk loops are always_inline bodies so that each SIMD path (huff_kernels.cpp, huff_neon.cpp)
// compiles its own copy for its own target; huff.cpp uses the lanes for the tails.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "coders/bit_reader.hpp"
#include "coders/huff_tables.hpp"

#define WZ_INLINE [[gnu::always_inline]] inline

namespace wirezip::codecs::huff {

constexpr std::size_t kStreams = 8;

struct EncodeLane {
  const std::uint8_t* in;
  std::uint8_t* out;
  std::uint64_t bits = 0;
  unsigned count = 0;

  WZ_INLINE void put(std::uint32_t code_bits, unsigned length) {
    bits |= static_cast<std::uint64_t>(code_bits) << count;
    count += length;
  }
  // At most 7 bits stay pending, so two 22-bit pair codes always fit before the next flush.
  WZ_INLINE void flush() {
    store64(out, bits);
    const unsigned bytes = count >> 3;
    out += bytes;
    bits >>= 8 * bytes;  // bytes <= 6: count never exceeds 7 + 2 * 22
    count &= 7;
  }
  void finish() {
    flush();
    if (count) *out++ = static_cast<std::uint8_t>(bits);
  }
  // Four symbols: two pair lookups.
  WZ_INLINE void round(const std::uint32_t* pair_bits, const std::uint8_t* pair_lengths) {
    const unsigned p0 = in[0] | (in[1] << 8), p1 = in[2] | (in[3] << 8);
    put(pair_bits[p0], pair_lengths[p0]);
    put(pair_bits[p1], pair_lengths[p1]);
    in += 4;
    flush();
  }
};

// The bulk of encoding: `groups` rounds per lane. Two lanes go together: enough independent work
// to hide latency, few enough values to stay in registers. The lanes are copied into locals so
// byte stores cannot alias their state.
WZ_INLINE void encode_bulk_body(EncodeLane* lanes, std::size_t groups, const PairCodes& pairs) {
  const std::uint32_t* bits = pairs.bits.data();
  const std::uint8_t* lengths = pairs.lengths.data();
  for (std::size_t first = 0; first < kStreams; first += 2) {
    EncodeLane a = lanes[first], b = lanes[first + 1];
    for (std::size_t g = 0; g < groups; ++g) {
      a.round(bits, lengths);
      b.round(bits, lengths);
    }
    lanes[first] = a, lanes[first + 1] = b;
  }
}

// A window's symbols at `out` (always four bytes written); returns the place after those it holds.
WZ_INLINE std::uint8_t* put_symbols(std::uint8_t* out, DecodeEntry e) {
  auto symbols = static_cast<std::uint32_t>(e);  // the first symbol in the low byte
  if constexpr (std::endian::native == std::endian::big) symbols = __builtin_bswap32(symbols);
  std::memcpy(out, &symbols, 4);
  return out + (e >> 56);
}

// One stream decoding into its own part of the plane (BitReader: past the stream's end it reads
// zeros and counts them, so a corrupt stream is caught by consumed_bits()).
struct DecodeLane : BitReader {
  std::uint8_t* out;
  std::uint8_t* out_end;

  // Decodes up to four symbols; always writes four bytes at `out`.
  WZ_INLINE void decode_window(const DecodeEntry* table) {
    const DecodeEntry e = table[bits & kWindowMask];
    out = put_symbols(out, e);
    const unsigned used = (e >> 48) & 0xff;
    bits >>= used;
    count -= used;
  }
  // Decodes one code; false, with nothing written, where its bytes would pass out_end (a pair
  // code where one byte is left: a corrupt stream).
  bool decode_one(const DecodeEntry* table) {
    const DecodeEntry e = table[bits & kWindowMask];
    const unsigned width = (e >> 40) & 0xff;
    if (out_end - out < static_cast<std::ptrdiff_t>(width)) return false;
    out[0] = static_cast<std::uint8_t>(e);
    if (width == 2) out[1] = static_cast<std::uint8_t>(e >> 8);
    out += width;
    const unsigned used = (e >> 32) & 0xff;
    bits >>= used;
    count -= used;
    return true;
  }
  // Bits of the buffer at `base` (at or before the stream's start) this lane has taken.
  WZ_INLINE std::size_t bits_taken_since(const std::uint8_t* base) const {
    return 8 * static_cast<std::size_t>(in - base) - count;
  }
  // Room for one bulk round: an 8-byte refill, then five windows that each write 4 bytes.
  WZ_INLINE bool bulk_ready() const { return in_end - in >= 8 && out_end - out >= 5 * kMaxBytesPerEntry; }
  // One refill, then five windows: 56 bits hold five windows' codes of <= 11 bits.
  WZ_INLINE void bulk_round(const DecodeEntry* table) {
    refill_unchecked();
    for (int window = 0; window < 5; ++window) decode_window(table);
  }
};

// f(0), f(1), ..., f(K - 1), unrolled: each lane's state in an array indexed only by constants,
// which the compiler keeps as separate values (in registers where they fit).
template <typename F, std::size_t... Lane>
WZ_INLINE void for_each_lane(F&& f, std::index_sequence<Lane...>) {
  (f(Lane), ...);
}
template <std::size_t K, typename F>
WZ_INLINE void for_each_lane(F&& f) {
  for_each_lane(f, std::make_index_sequence<K>{});
}

// Batches of rounds for K lanes together. A lane's place in its stream is one bit offset from
// `base`, the start of the buffer all the streams lie in: each round loads 8 bytes there afresh, so
// no bit buffer or count is carried from round to round. Each window waits on the one before it in
// its lane (its table entry says how far to shift), so the lanes are what overlaps: eight chains
// keep a core busier than four, even where some lanes' offsets spill to the stack.
// The caller has checked that each lane has room for `rounds` rounds, input and output.
template <std::size_t K>
WZ_INLINE void decode_rounds(const std::uint8_t* base, DecodeLane* const* lanes, std::size_t rounds,
                             const DecodeEntry* table) {
  struct Hot {
    std::size_t at;  // bits of the buffer at `base` already taken
    std::uint8_t* out;
  };
  std::array<Hot, K> hot;
  for_each_lane<K>([&](std::size_t s) { hot[s] = {lanes[s]->bits_taken_since(base), lanes[s]->out}; });
  for (std::size_t r = 0; r < rounds; ++r) {
    // Five windows of <= 11 bits from one load: it leaves at least 57 bits past the offset's bit.
    // Bit 63 is a marker: the windows read bits 0-54 only, and after the round its place tells how
    // many bits were taken (the count of leading zeros), so no per-window count is kept.
    std::array<std::uint64_t, K> bits;
    for_each_lane<K>([&](std::size_t s) {
      bits[s] = (load64(base + (hot[s].at >> 3)) >> (hot[s].at & 7)) | (std::uint64_t{1} << 63);
    });
    for (int w = 0; w < 5; ++w)
      for_each_lane<K>([&](std::size_t s) {
        const DecodeEntry e = table[bits[s] & kWindowMask];
        hot[s].out = put_symbols(hot[s].out, e);
        bits[s] >>= (e >> 48) & 63;  // the total bits: byte 6 (byte 7 is a multiple of 64 after this shift)
      });
    for_each_lane<K>([&](std::size_t s) { hot[s].at += std::countl_zero(bits[s]); });
  }
  for_each_lane<K>([&](std::size_t s) {
    DecodeLane& l = *lanes[s];
    l.in = base + (hot[s].at >> 3), l.bits = 0, l.count = 0;
    l.refill();
    l.take(hot[s].at & 7);
    l.out = hot[s].out;
  });
}

// The rounds a lane surely has room for, input and output (a round takes <= 55 bits, reads 8
// bytes where it starts and writes <= 20).
WZ_INLINE std::size_t rounds_left(const DecodeLane& l, const std::uint8_t* base) {
  constexpr std::size_t kRoundBits = 5 * kMaxLength, kRoundOut = 5 * kMaxBytesPerEntry;
  const std::size_t at = l.bits_taken_since(base);
  // The last round may start at bit `last_load`: 8 bytes from there end at the stream's end.
  const std::ptrdiff_t room = l.in_end - base - 8;
  const std::size_t last_load = room >= 0 ? 8 * static_cast<std::size_t>(room) : 0;
  const std::size_t by_in = room >= 0 && last_load >= at ? (last_load - at) / kRoundBits + 1 : 0;
  return std::min(by_in, static_cast<std::size_t>(l.out_end - l.out) / kRoundOut);
}

// The bulk of decoding: lanes advance together in batches of rounds that none of them can overrun.
// The lanes' streams lie in one buffer in lane order, so lane 0's start is every lane's base.
// Lanes finish unevenly where the statistics shift along a block (a stream of short codes holds
// fewer bits), so once some have fewer than kFewest rounds left the others go on together: a lane
// decoding alone is one chain of dependent lookups, several overlap theirs. Each batch takes at
// least kFewest rounds and no lane's rounds left ever grow, so the loop ends.
WZ_INLINE void decode_bulk_body(DecodeLane* lanes, const DecodeEntry* table) {
  static_assert(kStreams == 8, "one batch size per lane count below");
  constexpr std::size_t kFewest = 8;
  const std::uint8_t* base = lanes[0].start;
  while (true) {
    std::array<DecodeLane*, kStreams> batch;
    std::size_t active = 0, rounds = SIZE_MAX;
    for (std::size_t s = 0; s < kStreams; ++s) {
      const std::size_t left = rounds_left(lanes[s], base);
      if (left < kFewest) continue;
      batch[active++] = &lanes[s];
      rounds = std::min(rounds, left);
    }
    switch (active) {
      case 8: decode_rounds<8>(base, batch.data(), rounds, table); break;
      case 7: decode_rounds<7>(base, batch.data(), rounds, table); break;
      case 6: decode_rounds<6>(base, batch.data(), rounds, table); break;
      case 5: decode_rounds<5>(base, batch.data(), rounds, table); break;
      case 4: decode_rounds<4>(base, batch.data(), rounds, table); break;
      case 3: decode_rounds<3>(base, batch.data(), rounds, table); break;
      case 2: decode_rounds<2>(base, batch.data(), rounds, table); break;
      case 1: decode_rounds<1>(base, batch.data(), rounds, table); break;
      default: break;
    }
    if (active == 0) break;
  }
  // Each lane's last rounds (fewer than kFewest), alone.
  for (std::size_t s = 0; s < kStreams; ++s) {
    DecodeLane lane = lanes[s];
    while (lane.bulk_ready()) lane.bulk_round(table);
    lanes[s] = lane;
  }
}

// ByteRange in plain C++ (min/max and OR reductions the compiler may vectorise for the target it
// compiles for): a byte whose low 7 bits are zero counts as 0xff for the minima and 0 for the maxima.
WZ_INLINE ByteRange byte_range_body(const std::uint8_t* src, std::size_t n) {
  std::uint8_t low = 0xff, high = 0, low7 = 0x7f, high7 = 0, zero = 0, negative_zero = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t b = src[i], b7 = b & 0x7f;
    const std::uint8_t none = b7 == 0 ? 0xff : 0;  // all ones where the low 7 bits are zero
    const std::uint8_t for_low = b | none, for_high = b & ~none, for_low7 = b7 | (none & 0x7f);
    low = for_low < low ? for_low : low;  // not std::min: a template call may stay out of line in a target clone
    high = for_high > high ? for_high : high;
    low7 = for_low7 < low7 ? for_low7 : low7;
    high7 = b7 > high7 ? b7 : high7;
    zero |= b == 0;
    negative_zero |= b == 0x80;
  }
  return {low, high, low7, high7, zero != 0, negative_zero != 0};
}

}  // namespace wirezip::codecs::huff
