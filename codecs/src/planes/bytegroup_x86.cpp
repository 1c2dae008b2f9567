// AVX2 and AVX-512 byte-grouping kernels. Compiled with per-function target attributes, so the
// library runs on any x86-64 and picks these only where the CPU has them.
#include <immintrin.h>

#include <cstdint>

#include "planes/avx2_shuffles.hpp"
#include "planes/bytegroup_kernels.hpp"

namespace wirezip::codecs::kernels {
namespace {

#define WZ_AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512vbmi")))

using namespace avx2;

WZ_AVX2 void split2_avx2(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    const Halves h = deinterleave2(src + 2 * i);
    store(p0 + i, h.low);
    store(p1 + i, h.high);
  }
  scalar_kernels().split2(src + 2 * i, elements - i, p0 + i, p1 + i);
}

WZ_AVX2 void merge2_avx2(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) interleave2({load(p0 + i), load(p1 + i)}, dst + 2 * i);
  scalar_kernels().merge2(p0 + i, p1 + i, elements - i, dst + 2 * i);
}

WZ_AVX2 void split4_avx2(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    const Quarters q = deinterleave4(src + 4 * i);
    for (int k = 0; k < 4; ++k) store(planes[k] + i, q.byte[k]);
  }
  std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_kernels().split4(src + 4 * i, elements - i, rest);
}

WZ_AVX2 void merge4_avx2(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32)
    interleave4({{load(planes[0] + i), load(planes[1] + i), load(planes[2] + i), load(planes[3] + i)}}, dst + 4 * i);
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
