#pragma once
// Internal: building the canonical Huffman code and its lookup tables for huff.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace wirezip::codecs::huff {

constexpr unsigned kMaxLength = 11;  // longest code, and the decode window's width in bits
constexpr std::uint32_t kWindowMask = (1u << kMaxLength) - 1;
constexpr unsigned kMaxBytesPerEntry = 4;

using Counts = std::array<std::uint32_t, 256>;
using Lengths = std::array<std::uint8_t, 256>;
// Per symbol: its code bit-reversed for LSB-first streams, with the length in the top byte.
using Codes = std::array<std::uint32_t, 256>;
constexpr std::uint32_t code_length(std::uint32_t code) { return code >> 24; }
constexpr std::uint32_t code_bits(std::uint32_t code) { return code & 0xffffff; }

// Decode table entry for one 11-bit window: the run of whole codes it starts with, up to four bytes
// of output (a code gives one byte, or two in the pair code of huff_pairs.hpp).
// Bytes 0-3: the bytes decoded; byte 4: the first code's bits; byte 5: how many bytes the first
// code gives; byte 6: the codes' total bits; byte 7: how many bytes. The counts sit where one shift
// extracts each: no mask for byte 7, and a shift by byte 6 ignores what lies above it.
using DecodeEntry = std::uint64_t;

// Counts of the bytes in [start, start + block) for start = 0, every, 2 * every, ...
Counts histogram(const std::uint8_t* src, std::size_t n, std::size_t block, std::size_t every);

// Which bytes a plane holds, coarsely (HuffKernels::byte_range computes it): the smallest and
// largest byte, and the same with the sign bit (bit 7) masked off, over the bytes whose low 7 bits
// are not all zero; and whether 0x00 and 0x80 (a float's +0 and -0) occur. Zeros stand apart: a
// plane of exponents with a few zeros would otherwise span every exponent below its smallest.
// With no byte of nonzero low 7 bits, low > high.
struct ByteRange {
  std::uint8_t low, high, low7, high7;
  bool zero, negative_zero;
};
// True when the plane holds one byte value only (src[0], for a plane that is not empty).
bool single_symbol(const ByteRange& range);
// The range of two pieces of a plane together.
ByteRange merge(const ByteRange& a, const ByteRange& b);

// The counts the code is built from. Small planes are counted exactly; large ones from a sample of
// an eighth of their bytes (code lengths need proportions, not exact counts; on 64 MiB of synthetic
// weights an eighth codes them as well as a quarter, within 10^-4 in ratio, for half the counting).
// Every symbol inside `range` (both ways: whole byte, and low 7 bits), and 0x00 and 0x80 where they
// occur, gets a count of at least 1, so every byte present has a code. The 7-bit range fits float
// planes, whose top byte is sign + exponent: both signs share the exponent range, so few symbols
// that never occur get a code (each one takes 2^-11 of the code space from those that do).
Counts estimate_counts(const std::uint8_t* src, std::size_t n, const ByteRange& range);
// The two steps of estimate_counts: the counts of the sample (every byte when `exact`), then a
// count of at least 1 for every symbol in `range`.
Counts sample_counts(const std::uint8_t* src, std::size_t n, bool exact);
// That sample: contiguous pieces of kSamplePiece bytes, one every kSampleEvery (a strided sample
// would see only one byte position of data with a period of 2 or 4: interleaved bf16 or fp32).
inline constexpr std::size_t kSamplePiece = 256, kSampleEvery = 8 * kSamplePiece;
void give_every_byte_a_count(Counts& counts, const ByteRange& range);
// into += counts, symbol by symbol (a plane's counts from its pieces').
void add_counts(Counts& into, const Counts& counts);
inline constexpr std::size_t kExactBelow = 64 << 10;  // planes shorter than this are counted exactly

// A plane may be coded as 1, 2 or 4 blocks of its own code each (huff.cpp), each at least this long.
inline constexpr std::size_t kMinBlockSymbols = 32 << 10;
// How many blocks pay for their code tables, from the sampled counts of the four quarters of a plane
// of n symbols: 2 or 4 when the order-0 bits of halves or quarters (with a table's cost for each)
// are below the plane's own by more than 0.2%, else 1.
std::size_t blocks_worth_coding(const std::array<Counts, 4>& quarters, std::size_t n);
// The optimal code lengths for these counts with none longer than max_length (a complete code:
// Kraft sum exactly 1). Needs two or more nonzero counts and 2^max_length >= their number.
Lengths code_lengths(const Counts& counts, unsigned max_length = kMaxLength);
// The same for an alphabet of counts.size() symbols (at most 65536, limit at most 16).
std::vector<std::uint8_t> limited_code_lengths(std::span<const std::uint32_t> counts, unsigned max_length);
// Canonical codes (RFC 1951 3.2.2) for lengths of up to 16 bits, written into codes (one per length,
// 0 where the length is 0), bit-reversed as Codes are: the DEFLATE encoder's too.
void canonical_codes(std::span<const std::uint8_t> lengths, std::span<std::uint32_t> codes);
// Codes for every pair of present symbols, indexed by the two bytes as one little-endian u16.
// Bits and lengths sit in separate tables: two loads are cheaper than unpacking one.
struct PairCodes {
  std::vector<std::uint32_t> bits;
  std::vector<std::uint8_t> lengths;
};
// For a byte code (codes of the 256 bytes).
void build_pair_codes(std::span<const std::uint32_t> codes, PairCodes& pairs);
// One code of a window table's alphabet: its code (as in Codes) and what it decodes to, one or two
// bytes (the first in the low byte).
struct WindowSymbol {
  std::uint32_t code;
  std::uint16_t bytes;
  std::uint8_t width;
};
// The code each window starts with, packed: bits 0-15 what it decodes to (one byte or two, the
// first in the low byte), bits 16-23 its width in bytes, bits 24-31 its length in bits (0 where no
// code starts the window: an incomplete code).
using FirstCode = std::uint32_t;
using FirstCodes = std::array<FirstCode, kWindowMask + 1>;
void first_codes(std::span<const WindowSymbol> symbols, FirstCodes& first);
// Each window's table entry from the codes that start it: the run of whole codes from its first
// bit, while they fit its bits and four bytes. The portable loop; HuffKernels::window_entries is
// the same for a SIMD path.
void window_entries(const FirstCode* first, DecodeEntry* table);
// One window's entry, and in `stops` its run's stops: byte i holds, after the run's code i + 1, the
// bits taken (low nibble) and the bytes given (high nibble), kNoStop where the run has no code i + 1.
DecodeEntry window_entry(const FirstCode* first, std::uint32_t window, std::uint32_t& stops);
inline constexpr std::uint8_t kNoStop = 0x7f;
// The window table (2^kMaxLength entries) for a complete code of any such alphabet.
void build_decode_table(std::span<const WindowSymbol> symbols, DecodeEntry* table,
                        void (*entries)(const FirstCode*, DecodeEntry*) = window_entries);
// Whether these lengths (each <= kMaxLength) form a complete prefix code: Kraft sum exactly 1.
bool complete_code(std::span<const std::uint8_t> lengths);

}  // namespace wirezip::codecs::huff
