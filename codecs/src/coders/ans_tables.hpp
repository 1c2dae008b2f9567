#pragma once
// Internal: table-driven ANS (tANS, the FSE construction) for ans.cpp and the exponent-context
// coder. Huffman codes whole bits per symbol and loses ~0.05 bit/element on the bf16 exponent
// plane (a symbol of probability 0.32 costs 2 bits, not 1.66); tANS codes fractional bits from
// a state of table_log bits and stays within ~0.002 bit of the order-0 bound.
//
// A symbol of frequency f (frequencies sum to L = 2^table_log) takes about table_log - log2(f) bits.
// The decoder is one table lookup per symbol: state x in [0, L) gives the symbol, how many bits to
// read, and the base the bits are added to; the encoder runs backwards with the matching tables.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace wirezip::codecs::ans {

constexpr unsigned kMinTableLog = 5, kMaxTableLog = 12;

using Counts = std::array<std::uint32_t, 256>;
using Freqs = std::array<std::uint16_t, 256>;

// Frequencies summing to 2^table_log, each counted symbol at least 1, close to the counts'
// proportions. Needs two or more counted symbols, and no more than 2^table_log.
Freqs normalize(const Counts& counts, unsigned table_log);
// Throws wirezip::Error unless the frequencies sum to 2^table_log and at least two are non-zero:
// what every table built below relies on. For frequencies read from a frame.
void check_freqs(const Freqs& freqs, unsigned table_log);

// Laid out so one 32-bit load gives bits | symbol << 8 | base << 16 (entry_word): the bit count
// in the low byte is what x86's shift and bzhi instructions read, with no masking step between the
// table load and the next state.
struct DecodeEntry {
  std::uint8_t bits;
  std::uint8_t symbol;
  std::uint16_t base;  // next state = base + the next `bits` bits of the stream
};
static_assert(sizeof(DecodeEntry) == 4, "decoders load an entry as one 32-bit word");
[[gnu::always_inline]] inline std::uint32_t entry_word(const DecodeEntry& entry) {
  std::uint32_t e;
  if constexpr (std::endian::native == std::endian::little)
    std::memcpy(&e, &entry, 4);  // one load, not three
  else
    e = entry.bits | static_cast<std::uint32_t>(entry.symbol) << 8 | static_cast<std::uint32_t>(entry.base) << 16;
  return e;
}
// 2^table_log entries.
void build_decode_table(const Freqs& freqs, unsigned table_log, DecodeEntry* table);

struct EncodeSymbol {
  std::uint32_t delta_bits;  // bits to write = (state + delta_bits) >> 16
  std::int32_t delta_state;  // next state = states[(state >> bits) + delta_state]
};
struct EncodeTable {
  std::array<EncodeSymbol, 256> symbols{};
  std::vector<std::uint16_t> states;  // 2^table_log; states are kept in [L, 2L)
};
void build_encode_table(const Freqs& freqs, unsigned table_log, EncodeTable& table);

// Bits an ideal coder with these frequencies spends on these counts: how the context coder chooses
// between a table and raw bytes.
double coded_bits(const Counts& counts, const Freqs& freqs, unsigned table_log);

}  // namespace wirezip::codecs::ans

namespace wirezip::codecs::ans {
// Throws wirezip::Error: stream `stream` does not end exactly where its symbols do.
[[noreturn]] void fail_stream(std::size_t stream);
}  // namespace wirezip::codecs::ans
