#pragma once
// Internal: the AVX2 byte shuffles of byte grouping, shared by bytegroup_x86.cpp (which stores
// what they produce) and exponent_split_x86.cpp (which applies its exponent formulas in between).
// Each carries the avx2 target attribute: the files that include this still run on any x86-64
// and call these only from their own AVX2 kernels, into which they inline.
#include <immintrin.h>

#include <cstddef>

#define WZ_AVX2 __attribute__((target("avx2")))

namespace wirezip::codecs::kernels::avx2 {

WZ_AVX2 inline __m256i load(const std::byte* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
WZ_AVX2 inline void store(std::byte* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// 32 elements of width 2 as their 32 low bytes and their 32 high bytes.
struct Halves {
  __m256i low, high;
};
// 64 bytes of width-2 elements -> Halves: within each lane bytes 0,2,..,14 then 1,3,..,15, then
// the quadwords reordered to [16 low | 16 high].
WZ_AVX2 inline Halves deinterleave2(const std::byte* src) {
  const __m256i mask = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,  //
                                        0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  const __m256i a = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(load(src), mask), 0xD8);
  const __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(load(src + 32), mask), 0xD8);
  return {_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31)};
}
// The inverse: Halves -> 64 bytes of width-2 elements at dst.
WZ_AVX2 inline void interleave2(Halves h, std::byte* dst) {
  const __m256i first = _mm256_unpacklo_epi8(h.low, h.high);   // elements 0-7 | 16-23
  const __m256i second = _mm256_unpackhi_epi8(h.low, h.high);  // elements 8-15 | 24-31
  store(dst, _mm256_permute2x128_si256(first, second, 0x20));
  store(dst + 32, _mm256_permute2x128_si256(first, second, 0x31));
}

// 32 elements of width 4 as their four byte planes, byte 0 first.
struct Quarters {
  __m256i byte[4];
};
// Within each lane a 4x4 byte transpose (its own inverse, so both directions use this mask).
WZ_AVX2 inline __m256i transpose4_mask() {
  return _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}
// 128 bytes of width-4 elements -> Quarters: transpose bytes within lanes, gather each plane's
// dwords into one quadword per plane, then a 4x4 quadword transpose across the four vectors.
WZ_AVX2 inline Quarters deinterleave4(const std::byte* src) {
  const __m256i mask = transpose4_mask(), gather = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  __m256i v[4];
  for (int j = 0; j < 4; ++j) v[j] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(load(src + 32 * j), mask), gather);
  const __m256i t0 = _mm256_unpacklo_epi64(v[0], v[1]), t1 = _mm256_unpackhi_epi64(v[0], v[1]);
  const __m256i t2 = _mm256_unpacklo_epi64(v[2], v[3]), t3 = _mm256_unpackhi_epi64(v[2], v[3]);
  return {{_mm256_permute2x128_si256(t0, t2, 0x20), _mm256_permute2x128_si256(t1, t3, 0x20),
           _mm256_permute2x128_si256(t0, t2, 0x31), _mm256_permute2x128_si256(t1, t3, 0x31)}};
}
// The inverse: Quarters -> 128 bytes of width-4 elements at dst.
WZ_AVX2 inline void interleave4(const Quarters& q, std::byte* dst) {
  const __m256i mask = transpose4_mask(), scatter = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m256i t0 = _mm256_unpacklo_epi64(q.byte[0], q.byte[1]), t1 = _mm256_unpackhi_epi64(q.byte[0], q.byte[1]);
  const __m256i t2 = _mm256_unpacklo_epi64(q.byte[2], q.byte[3]), t3 = _mm256_unpackhi_epi64(q.byte[2], q.byte[3]);
  const __m256i v[4] = {_mm256_permute2x128_si256(t0, t2, 0x20), _mm256_permute2x128_si256(t1, t3, 0x20),
                        _mm256_permute2x128_si256(t0, t2, 0x31), _mm256_permute2x128_si256(t1, t3, 0x31)};
  for (int j = 0; j < 4; ++j) store(dst + 32 * j, _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(v[j], scatter), mask));
}

}  // namespace wirezip::codecs::kernels::avx2
