#include "coders/huff10_kernels.hpp"

#include "coders/hot_clones.hpp"

namespace wirezip::codecs::huff10 {
namespace {

constexpr std::size_t kQuarter = kGroup / 4;

// A group's loop over its quarter rows: iteration k takes elements k, k + Q, k + 2Q and k + 3Q, so
// every load and store has a unit stride across k and the compiler vectorizes it (32 lanes to an
// AVX2 register). restrict: the buffers never overlap, which spares each group an overlap check.
[[gnu::always_inline]] inline void split_group(const std::uint8_t* __restrict in, std::uint8_t base,
                                               std::uint8_t* __restrict sym, std::uint8_t* __restrict out) {
  for (std::size_t k = 0; k < kQuarter; ++k) {
    std::uint8_t x[4];
    for (std::size_t q = 0; q < 4; ++q) {
      const std::uint8_t lo = in[2 * (k + q * kQuarter)], hi = in[2 * (k + q * kQuarter) + 1];
      sym[k + q * kQuarter] = symbol_of(lo, hi, base);
      x[q] = stored_bits_of(lo, hi);
    }
    for (std::size_t r = 0; r < 3; ++r)
      out[k + r * kQuarter] = static_cast<std::uint8_t>(x[r] | (x[3] >> 2 * r & 3) << 6);
  }
}

[[gnu::always_inline]] inline void merge_group(const std::uint8_t* __restrict sym, const std::uint8_t* __restrict in,
                                               std::uint8_t base, std::uint8_t* __restrict out) {
  for (std::size_t k = 0; k < kQuarter; ++k) {
    const std::uint8_t r0 = in[k], r1 = in[k + kQuarter], r2 = in[k + 2 * kQuarter];
    const std::uint8_t x[4] = {r0, r1, r2, static_cast<std::uint8_t>(r0 >> 6 | (r1 >> 6) << 2 | (r2 >> 6) << 4)};
    for (std::size_t q = 0; q < 4; ++q) {
      const std::uint8_t symbol = sym[k + q * kQuarter];
      out[2 * (k + q * kQuarter)] = low_byte_of(symbol, x[q], base);
      out[2 * (k + q * kQuarter) + 1] = high_byte_of(symbol, x[q], base);
    }
  }
}

// Whether any of n symbols is kEscape: a maximum stays in byte lanes, a count would not.
[[gnu::always_inline]] inline bool any_escaped(const std::uint8_t* sym, std::size_t n) {
  std::uint8_t top = 0;
  for (std::size_t i = 0; i < n; ++i) top = sym[i] > top ? sym[i] : top;
  return top >= kFirstEscapedByte;
}

}  // namespace

WZ_HOT_CLONES bool split_elements(const std::uint8_t* src, std::size_t m, std::uint8_t base, std::uint8_t* sym,
                                  std::uint8_t* stored) {
  const std::size_t groups = m / kGroup;
  for (std::size_t g = 0; g < groups; ++g)
    split_group(src + 2 * kGroup * g, base, sym + kGroup * g, stored + 3 * kQuarter * g);
  for (std::size_t i = groups * kGroup; i < m; ++i) {  // the last few, a byte each
    sym[i] = symbol_of(src[2 * i], src[2 * i + 1], base);
    stored[3 * kQuarter * groups + i - groups * kGroup] = stored_bits_of(src[2 * i], src[2 * i + 1]);
  }
  return any_escaped(sym, m);
}

WZ_HOT_CLONES bool merge_elements(const std::uint8_t* sym, const std::uint8_t* stored, std::size_t m, std::uint8_t base,
                                  std::uint8_t* dst) {
  const std::size_t groups = m / kGroup;
  for (std::size_t g = 0; g < groups; ++g)
    merge_group(sym + kGroup * g, stored + 3 * kQuarter * g, base, dst + 2 * kGroup * g);
  for (std::size_t i = groups * kGroup; i < m; ++i) {
    const std::uint8_t x = stored[3 * kQuarter * groups + i - groups * kGroup];
    dst[2 * i] = low_byte_of(sym[i], x, base), dst[2 * i + 1] = high_byte_of(sym[i], x, base);
  }
  return any_escaped(sym, m);
}

}  // namespace wirezip::codecs::huff10
