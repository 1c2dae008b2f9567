#pragma once
// Internal: the element passes of huff10.cpp. A bf16 element becomes a byte symbol (its exponent,
// as a place in a window of exponents, and mantissa bits 6-5) and 6 stored bits (the sign and
// mantissa bits 4-0); merge is the inverse. The loops are written for the compiler to vectorize and
// cloned per target (hot_clones.hpp); the scalar forms below define them.
#include <cstddef>
#include <cstdint>

namespace wirezip::codecs::huff10 {

// Exponents base .. base + kWindow - 1 are symbols 1 .. kWindow; exponent 0 (zeros, subnormals) is
// symbol 0; any other exponent is kEscape, its value stored apart.
constexpr unsigned kWindow = 62, kEscape = kWindow + 1, kMaxBase = 256 - kWindow;
// Symbol bytes at or above this carry kEscape.
constexpr unsigned kFirstEscapedByte = kEscape << 2;

// The exponent of the element whose bytes are lo and hi (little-endian), its symbol, its stored bits.
[[gnu::always_inline]] constexpr std::uint8_t exponent_bits(std::uint8_t lo, std::uint8_t hi) {
  return static_cast<std::uint8_t>(hi << 1 | lo >> 7);
}
[[gnu::always_inline]] constexpr std::uint8_t symbol_of(std::uint8_t lo, std::uint8_t hi, std::uint8_t base) {
  const std::uint8_t exponent = exponent_bits(lo, hi);
  const auto place = static_cast<std::uint8_t>(exponent - base);
  const std::uint8_t s = exponent == 0 ? 0 : place < kWindow ? static_cast<std::uint8_t>(place + 1) : kEscape;
  return static_cast<std::uint8_t>(s << 2 | ((lo >> 5) & 3));
}
[[gnu::always_inline]] constexpr std::uint8_t stored_bits_of(std::uint8_t lo, std::uint8_t hi) {
  return static_cast<std::uint8_t>((hi >> 2 & 32) | (lo & 31));
}
// The bytes of the element of a symbol (not kEscape) and its stored bits.
[[gnu::always_inline]] constexpr std::uint8_t exponent_of(std::uint8_t symbol, std::uint8_t base) {
  const auto s = static_cast<std::uint8_t>(symbol >> 2);
  return s == 0 ? 0 : static_cast<std::uint8_t>(base - 1 + s);
}
[[gnu::always_inline]] constexpr std::uint8_t low_byte_of(std::uint8_t symbol, std::uint8_t stored, std::uint8_t base) {
  return static_cast<std::uint8_t>(exponent_of(symbol, base) << 7 | (symbol & 3) << 5 | (stored & 31));
}
[[gnu::always_inline]] constexpr std::uint8_t high_byte_of(std::uint8_t symbol, std::uint8_t stored,
                                                           std::uint8_t base) {
  return static_cast<std::uint8_t>((stored & 32) << 2 | exponent_of(symbol, base) >> 1);
}

// Stored bits lie in groups of kGroup elements, 3 kGroup / 4 bytes each, planar so that vector
// lanes line up: with x_j the stored bits of the group's element j and Q = kGroup / 4, byte k + rQ
// (r < 3, k < Q) is x_(k + rQ) | (bits 2r, 2r + 1 of x_(k + 3Q)) << 6. The m % kGroup elements
// after the last whole group store theirs a byte each.
constexpr std::size_t kGroup = 128;
// Bytes of stored bits for m elements.
constexpr std::size_t stored_size(std::size_t m) { return m / kGroup * (3 * kGroup / 4) + m % kGroup; }

// Elements [0, m) of src: symbols into sym, stored bits into `stored` (stored_size(m) bytes).
// Returns whether any symbol is kEscape. m is a multiple of kGroup except at a chunk's end.
bool split_elements(const std::uint8_t* src, std::size_t m, std::uint8_t base, std::uint8_t* sym, std::uint8_t* stored);
// The inverse into dst (2m bytes); an escaped symbol's element gets exponent (base + 62) & 0xff,
// for the caller to mend. Returns whether any symbol is kEscape.
bool merge_elements(const std::uint8_t* sym, const std::uint8_t* stored, std::size_t m, std::uint8_t base,
                    std::uint8_t* dst);

}  // namespace wirezip::codecs::huff10
