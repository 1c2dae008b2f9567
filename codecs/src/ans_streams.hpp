#pragma once
// Internal: the bit streams of wirezip's tANS coder (ans.cpp, exponent_context.cpp). Each stream
// codes a run of symbols with two alternating states, so two table lookups are in flight per
// stream; four streams are coded and decoded interleaved. The encoder runs backwards over the
// symbols and writes its stream from the end of a buffer towards the start, so the decoder reads
// forwards, LSB first, like huff's streams.
//
// Stream: (pad bits of zeros) | state A, state B (table_log bits each) | each symbol's bits in order.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "ans_tables.hpp"

namespace wirezip::codecs::ans {

inline std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
inline void store64(std::uint8_t* p, std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

// Collects bits newest-lowest and stores whole bytes downwards; needs 8 writable bytes below `end`.
struct BackWriter {
  std::uint8_t* end;
  std::uint64_t bits = 0;
  unsigned count = 0;  // at most 7 after flush(); put() at most 56 bits between flushes

  void put(std::uint32_t value, unsigned n) {
    bits = (bits << n) | value;
    count += n;
  }
  void flush() {
    store64(end - 8, (bits << (63 - count)) << 1);  // the `count` valid bits at the top
    end -= count >> 3;
    count &= 7;
  }
  // Flushes everything; returns the pad: zero bits below the last (lowest) valid bit.
  unsigned finish() {
    flush();
    if (!count) return 0;
    *--end = static_cast<std::uint8_t>(bits << (8 - count));
    return 8 - count;
  }
};

// One encode step: writes the bits that leave `state` and moves it to the symbol's next state.
inline void encode_symbol(std::uint32_t& state, std::uint8_t symbol, const EncodeTable& table, BackWriter& out) {
  const EncodeSymbol e = table.symbols[symbol];
  const unsigned n = (state + e.delta_bits) >> 16;
  out.put(state & ((1u << n) - 1), n);
  state = table.states[(state >> n) + e.delta_state];
}

// Reads one stream forwards. Past its end it reads zeros and counts them, so a corrupt stream is
// caught by consumed_bits(), never by an out-of-bounds read.
struct Reader {
  const std::uint8_t* start;
  const std::uint8_t* in;
  const std::uint8_t* in_end;
  std::uint64_t bits = 0;
  unsigned count = 0;
  std::size_t overrun = 0;

  // To >= 56 bits; the caller guarantees 8 readable bytes at `in`.
  void refill_unchecked() {
    bits |= load64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
  }
  void refill() {
    if (in_end - in >= 8) return refill_unchecked();
    std::uint8_t tail[8] = {};
    const std::size_t left = static_cast<std::size_t>(in_end - in);
    std::memcpy(tail, in, left);
    bits |= load64(tail) << count;
    const std::size_t advance = (63 - count) >> 3;
    in += std::min(advance, left);
    overrun += advance - std::min(advance, left);
    count |= 56;
  }
  std::uint32_t take(unsigned n) {  // n <= count
    const auto v = static_cast<std::uint32_t>(bits & ((std::uint64_t{1} << n) - 1));
    bits >>= n;
    count -= n;
    return v;
  }
  std::uint64_t consumed_bits() const { return 8 * static_cast<std::uint64_t>(in - start + overrun) - count; }
};

// One decode step: the symbol of `state`, and the state it came from.
inline std::uint8_t decode_symbol(std::uint32_t& state, const DecodeEntry* table, Reader& in) {
  const DecodeEntry e = table[state];
  state = e.base + in.take(e.bits);
  return e.symbol;
}

}  // namespace wirezip::codecs::ans
