#pragma once
// Internal: the pair code of huff.cpp (its plane format 5). Each stream is read as pairs of bytes
// from its start. A pair of two of the block's most frequent bytes (up to kMaxPaired of them) has
// a code of its own; any other pair is coded as its two bytes, each by a byte code of the same
// prefix code, and an odd last byte by its byte code. So the alphabet is m * m pair symbols, then
// 256 byte symbols, and a window of the decode table gives one or two bytes per code.
//
// Why: byte codes lose 0.03-0.05 bit per byte to whole-bit lengths on the exponent planes of bf16
// weights, and in real checkpoints neighbouring exponents are correlated; codes for the likeliest
// pairs win back both. The encoder's loop and the decoder's window loop are the byte code's own:
// only the tables differ.
#include <optional>
#include <span>
#include <vector>

#include "coders/huff_tables.hpp"

namespace wirezip::codecs::huff {

inline constexpr unsigned kMaxPaired = 16;
inline constexpr std::size_t kMinPairedBytes = 64 << 10;  // shorter blocks take the byte code

struct PairAlphabet {
  static constexpr std::uint16_t kNone = 0xffff;
  unsigned paired = 0;                           // m: how many bytes may pair
  std::array<std::uint8_t, kMaxPaired> bytes{};  // those bytes, as listed in the frame
  std::array<std::uint8_t, 256> rank{};          // a byte's index in `bytes`, or kMaxPaired
  unsigned pair_count = 0;                       // how many pairs have a code of their own
  // Per cell i * kMaxPaired + j (bytes i and j): its pair symbol, or kNone; and per pair symbol its cell.
  std::array<std::uint16_t, kMaxPaired * kMaxPaired> symbol_of{};
  std::array<std::uint8_t, kMaxPaired * kMaxPaired> cell_of{};

  std::size_t pair_symbols() const { return pair_count; }
  std::size_t size() const { return pair_symbols() + 256; }
  static unsigned cell(unsigned i, unsigned j) { return i * kMaxPaired + j; }
  bool pairs(std::uint8_t a, std::uint8_t b) const {
    return rank[a] < paired && rank[b] < paired && symbol_of[cell(rank[a], rank[b])] != kNone;
  }
  std::size_t pair_symbol(std::uint8_t a, std::uint8_t b) const { return symbol_of[cell(rank[a], rank[b])]; }
  std::size_t byte_symbol(std::uint8_t s) const { return pair_symbols() + s; }
};

// The alphabet over these bytes (2 to kMaxPaired; a repeat keeps its last place) and, of the
// pairs of them, those with codes of their own: bit i * m + j of `chosen` for bytes i and j.
PairAlphabet pair_alphabet(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> chosen);
// The bytes `chosen` takes for m paired bytes.
constexpr std::size_t chosen_bytes(std::size_t m) { return (m * m + 7) / 8; }

// A sample of part of a plane (the pieces huff_tables.hpp's sample_counts takes): its byte counts,
// the same as sample_counts', and how often each pair of bytes occurs in it (pairs from each
// piece's start). A pair value may be listed twice (counted at alternate pairs in two tables):
// its counts add.
struct PairSample {
  Counts bytes{};
  std::vector<std::pair<std::uint16_t, std::uint32_t>> pairs;  // pair (first byte low), count
};
// Takes PairSamples with two tables of 2^16 counts, zero between calls.
class PairSampler {
 public:
  void sample(const std::uint8_t* src, std::size_t n, bool exact, PairSample& out);

 private:
  std::vector<std::uint32_t> counts_;
  std::vector<std::uint32_t> seen_;
};

// A pair code for a block: its alphabet, the lengths of its symbols, and its `chosen` bits.
struct PairCode {
  PairAlphabet alphabet;
  std::vector<std::uint8_t> lengths;
  std::vector<std::uint8_t> chosen;
};
// The pair code for a block of n bytes when, on the samples of its parts, it codes them in fewer
// bits than the byte code of `byte_lengths` by more than its larger table costs. `counts` are the
// block's byte counts as the byte code had them (every byte present counted at least once).
std::optional<PairCode> pair_code_worth_using(std::span<const PairSample> samples, std::size_t n, const Counts& counts,
                                              const Lengths& byte_lengths);

// The encoder's table: every pair of bytes that have byte codes, as its pair code or its two byte
// codes. codes: canonical codes of the alphabet.
void build_pair_codes(const PairAlphabet& alphabet, std::span<const std::uint32_t> codes, PairCodes& pairs);
// The decoder's window table for a complete code of the alphabet, its entries made by `entries`
// (a kernel path's window_entries).
void build_decode_table(const PairAlphabet& alphabet, std::span<const std::uint32_t> codes, DecodeEntry* table,
                        void (*entries)(const FirstCode*, DecodeEntry*) = window_entries);

}  // namespace wirezip::codecs::huff
