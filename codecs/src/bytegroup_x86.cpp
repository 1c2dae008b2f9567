// AVX2 and AVX-512 byte-grouping kernels. Compiled with per-function target attributes, so the
// library runs on any x86-64 and picks these only where the CPU has them.
#include <immintrin.h>

#include <cstdint>

#include "bytegroup_kernels.hpp"

namespace wirezip::codecs::kernels {
namespace {

#define WZ_AVX2 __attribute__((target("avx2")))
#define WZ_AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512vbmi")))

WZ_AVX2 __m256i load(const std::byte* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
WZ_AVX2 void store(std::byte* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// Within each 128-bit lane, gathers bytes 0,2,..,14 then 1,3,..,15 (width 2) or transposes a 4x4
// byte matrix (width 4; the transpose is its own inverse, so merge4 uses the same mask).
WZ_AVX2 __m256i deinterleave2_mask() {
  return _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,  //
                          0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
}
WZ_AVX2 __m256i transpose4_mask() {
  return _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,  //
                          0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
}

WZ_AVX2 void split2_avx2(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  const __m256i mask = deinterleave2_mask();
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    // Each lane becomes [8 low bytes | 8 high bytes]; reorder quadwords to [16 low | 16 high].
    __m256i a = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(load(src + 2 * i), mask), 0xD8);
    __m256i b = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(load(src + 2 * i + 32), mask), 0xD8);
    store(p0 + i, _mm256_permute2x128_si256(a, b, 0x20));
    store(p1 + i, _mm256_permute2x128_si256(a, b, 0x31));
  }
  scalar_kernels().split2(src + 2 * i, elements - i, p0 + i, p1 + i);
}

WZ_AVX2 void merge2_avx2(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    __m256i low = load(p0 + i), high = load(p1 + i);
    __m256i first = _mm256_unpacklo_epi8(low, high);  // elements 0-7 | 16-23
    __m256i second = _mm256_unpackhi_epi8(low, high);  // elements 8-15 | 24-31
    store(dst + 2 * i, _mm256_permute2x128_si256(first, second, 0x20));
    store(dst + 2 * i + 32, _mm256_permute2x128_si256(first, second, 0x31));
  }
  scalar_kernels().merge2(p0 + i, p1 + i, elements - i, dst + 2 * i);
}

// Width 4, 32 elements (128 bytes) a step: transpose bytes within lanes, gather each plane's dwords
// into one quadword per plane, then a 4x4 quadword transpose across the four vectors.
WZ_AVX2 void split4_avx2(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  const __m256i mask = transpose4_mask();
  const __m256i gather = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    __m256i v[4];
    for (int j = 0; j < 4; ++j)
      v[j] = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(load(src + 4 * i + 32 * j), mask), gather);
    __m256i t0 = _mm256_unpacklo_epi64(v[0], v[1]), t1 = _mm256_unpackhi_epi64(v[0], v[1]);
    __m256i t2 = _mm256_unpacklo_epi64(v[2], v[3]), t3 = _mm256_unpackhi_epi64(v[2], v[3]);
    store(planes[0] + i, _mm256_permute2x128_si256(t0, t2, 0x20));
    store(planes[1] + i, _mm256_permute2x128_si256(t1, t3, 0x20));
    store(planes[2] + i, _mm256_permute2x128_si256(t0, t2, 0x31));
    store(planes[3] + i, _mm256_permute2x128_si256(t1, t3, 0x31));
  }
  std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_kernels().split4(src + 4 * i, elements - i, rest);
}

WZ_AVX2 void merge4_avx2(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  const __m256i mask = transpose4_mask();
  const __m256i scatter = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    __m256i p0 = load(planes[0] + i), p1 = load(planes[1] + i), p2 = load(planes[2] + i), p3 = load(planes[3] + i);
    __m256i t0 = _mm256_unpacklo_epi64(p0, p1), t1 = _mm256_unpackhi_epi64(p0, p1);
    __m256i t2 = _mm256_unpacklo_epi64(p2, p3), t3 = _mm256_unpackhi_epi64(p2, p3);
    const __m256i v[4] = {_mm256_permute2x128_si256(t0, t2, 0x20), _mm256_permute2x128_si256(t1, t3, 0x20),
                          _mm256_permute2x128_si256(t0, t2, 0x31), _mm256_permute2x128_si256(t1, t3, 0x31)};
    for (int j = 0; j < 4; ++j)
      store(dst + 4 * i + 32 * j, _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(v[j], scatter), mask));
  }
  const std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_kernels().merge4(rest, elements - i, dst + 4 * i);
}

// AVX-512 VBMI: one two-source byte permute picks any 64 of 128 bytes, so width 2 is two permutes.
struct Permutes2 {
  __m512i even, odd, first, second;
};

WZ_AVX512 Permutes2 permutes2() {
  alignas(64) std::uint8_t even[64], odd[64], first[64], second[64];
  for (int j = 0; j < 64; ++j) {
    even[j] = static_cast<std::uint8_t>(2 * j);
    odd[j] = static_cast<std::uint8_t>(2 * j + 1);
    // Interleave: byte j of the output takes element j/2 from the low (index < 64) or high plane.
    first[j] = static_cast<std::uint8_t>((j % 2 ? 64 : 0) + j / 2);
    second[j] = static_cast<std::uint8_t>((j % 2 ? 64 : 0) + 32 + j / 2);
  }
  return {_mm512_load_si512(even), _mm512_load_si512(odd), _mm512_load_si512(first), _mm512_load_si512(second)};
}

WZ_AVX512 void split2_avx512(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  const Permutes2 idx = permutes2();
  std::size_t i = 0;
  for (; i + 64 <= elements; i += 64) {
    __m512i a = _mm512_loadu_si512(src + 2 * i), b = _mm512_loadu_si512(src + 2 * i + 64);
    _mm512_storeu_si512(p0 + i, _mm512_permutex2var_epi8(a, idx.even, b));
    _mm512_storeu_si512(p1 + i, _mm512_permutex2var_epi8(a, idx.odd, b));
  }
  split2_avx2(src + 2 * i, elements - i, p0 + i, p1 + i);
}

WZ_AVX512 void merge2_avx512(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  const Permutes2 idx = permutes2();
  std::size_t i = 0;
  for (; i + 64 <= elements; i += 64) {
    __m512i low = _mm512_loadu_si512(p0 + i), high = _mm512_loadu_si512(p1 + i);
    _mm512_storeu_si512(dst + 2 * i, _mm512_permutex2var_epi8(low, idx.first, high));
    _mm512_storeu_si512(dst + 2 * i + 64, _mm512_permutex2var_epi8(low, idx.second, high));
  }
  merge2_avx2(p0 + i, p1 + i, elements - i, dst + 2 * i);
}

}  // namespace

PlaneKernels avx2_kernels() { return {split2_avx2, merge2_avx2, split4_avx2, merge4_avx2}; }
// Width 4 has no AVX-512 kernel: the AVX2 one already runs at copy speed.
PlaneKernels avx512_kernels() { return {split2_avx512, merge2_avx512, split4_avx2, merge4_avx2}; }

}  // namespace wirezip::codecs::kernels
