#pragma once
// Internal: the bit streams of wirezip's tANS coder (ans.cpp, ans_context.cpp). Each stream
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

#include "coders/ans_tables.hpp"
#include "coders/bit_reader.hpp"

namespace wirezip::codecs::ans {

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

using Reader = BitReader;

// One decode step: the symbol of `state`, and the state it came from.
inline std::uint8_t decode_symbol(std::uint32_t& state, const DecodeEntry* table, Reader& in) {
  const DecodeEntry e = table[state];
  state = e.base + in.take(e.bits);
  return e.symbol;
}

}  // namespace wirezip::codecs::ans
