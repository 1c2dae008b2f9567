#pragma once
// Internal: little-endian 32- and 64-bit loads and stores, and the LSB-first bit reader that huff's and
// ans's streams are both read with. Every function is always inlined, so each SIMD path's hot loop
// (compiled for its own target) gets its own copy.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace wirezip::codecs {

// Unsigned integers of 2, 4 or 8 bytes, little-endian whatever the host, at any alignment.
template <typename U>
[[gnu::always_inline]] inline U little_endian(U v) {
  static_assert(sizeof(U) == 2 || sizeof(U) == 4 || sizeof(U) == 8);
  if constexpr (std::endian::native == std::endian::little)
    return v;
  else if constexpr (sizeof(U) == 8)
    return __builtin_bswap64(v);
  else if constexpr (sizeof(U) == 4)
    return __builtin_bswap32(v);
  else
    return __builtin_bswap16(v);
}
template <typename U>
[[gnu::always_inline]] inline U load_le(const std::uint8_t* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  return little_endian(v);
}
template <typename U>
[[gnu::always_inline]] inline void store_le(std::uint8_t* p, U v) {
  v = little_endian(v);
  std::memcpy(p, &v, sizeof v);
}
[[gnu::always_inline]] inline std::uint64_t load64(const std::uint8_t* p) { return load_le<std::uint64_t>(p); }
[[gnu::always_inline]] inline void store64(std::uint8_t* p, std::uint64_t v) { store_le(p, v); }
[[gnu::always_inline]] inline std::uint32_t load32(const std::uint8_t* p) { return load_le<std::uint32_t>(p); }
[[gnu::always_inline]] inline void store32(std::uint8_t* p, std::uint32_t v) { store_le(p, v); }

// Reads one stream forwards, lowest bit first. Past its end it reads zeros and counts them, so a
// corrupt stream is caught by consumed_bits(), never by an out-of-bounds read.
struct BitReader {
  const std::uint8_t* start;
  const std::uint8_t* in;
  const std::uint8_t* in_end;
  std::uint64_t bits = 0;
  unsigned count = 0;
  std::size_t overrun = 0;  // bytes taken past in_end

  // Branch-free refill to >= 56 bits; the caller guarantees 8 readable bytes at `in`.
  [[gnu::always_inline]] void refill_unchecked() {
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

}  // namespace wirezip::codecs
