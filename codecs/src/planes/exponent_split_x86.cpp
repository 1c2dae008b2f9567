// AVX2 exponent-split kernels: the byte shuffles of byte grouping (avx2_shuffles.hpp, shared
// with bytegroup_x86.cpp), then the byte formulas of exponent_split_kernels.hpp on whole vectors.
// AVX2 has no byte shifts, so 16-bit shifts are masked back to the bits that stay inside each byte.
#include <immintrin.h>

#include "planes/avx2_shuffles.hpp"
#include "planes/exponent_split_kernels.hpp"

namespace wirezip::codecs::kernels {
namespace {

using namespace avx2;

WZ_AVX2 __m256i bits(int mask) { return _mm256_set1_epi8(static_cast<char>(mask)); }
WZ_AVX2 __m256i pick(__m256i v, int mask) { return _mm256_and_si256(v, bits(mask)); }
WZ_AVX2 __m256i either(__m256i a, __m256i b) { return _mm256_or_si256(a, b); }

// bf16 (and the top half of fp32): {low, high} <-> {exponent, sign | mantissa}.
WZ_AVX2 Halves to_exponent_bf16(Halves h) {
  return {either(_mm256_add_epi8(h.high, h.high), pick(_mm256_srli_epi16(h.low, 7), 0x01)),
          either(pick(h.high, 0x80), pick(h.low, 0x7f))};
}
WZ_AVX2 Halves from_exponent_bf16(__m256i e, __m256i sm) {
  return {either(pick(_mm256_slli_epi16(e, 7), 0x80), pick(sm, 0x7f)),
          either(pick(sm, 0x80), pick(_mm256_srli_epi16(e, 1), 0x7f))};
}

WZ_AVX2 Halves to_exponent_fp16(Halves h) {
  return {either(pick(_mm256_srli_epi16(h.high, 2), 0x1f), pick(_mm256_slli_epi16(h.low, 5), 0xe0)),
          either(either(pick(h.high, 0x80), pick(_mm256_slli_epi16(h.high, 5), 0x60)),
                 pick(_mm256_srli_epi16(h.low, 3), 0x1f))};
}
WZ_AVX2 Halves from_exponent_fp16(__m256i e, __m256i sm) {
  return {either(pick(_mm256_srli_epi16(e, 5), 0x07), pick(_mm256_slli_epi16(sm, 3), 0xf8)),
          either(either(pick(sm, 0x80), pick(_mm256_slli_epi16(e, 2), 0x7c)), pick(_mm256_srli_epi16(sm, 5), 0x03))};
}

template <Halves (*to)(Halves)>
WZ_AVX2 void split2(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1, std::size_t& done) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    const Halves planes = to(deinterleave2(src + 2 * i));
    store(p0 + i, planes.low);
    store(p1 + i, planes.high);
  }
  done = i;
}

template <Halves (*from)(__m256i, __m256i)>
WZ_AVX2 std::size_t merge2(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) interleave2(from(load(p0 + i), load(p1 + i)), dst + 2 * i);
  return i;
}

WZ_AVX2 void split_bf16_avx2(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  std::size_t i = 0;
  split2<to_exponent_bf16>(src, elements, p0, p1, i);
  scalar_exponent_kernels().split_bf16(src + 2 * i, elements - i, p0 + i, p1 + i);
}
WZ_AVX2 void merge_bf16_avx2(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  const std::size_t i = merge2<from_exponent_bf16>(p0, p1, elements, dst);
  scalar_exponent_kernels().merge_bf16(p0 + i, p1 + i, elements - i, dst + 2 * i);
}
WZ_AVX2 void split_fp16_avx2(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  std::size_t i = 0;
  split2<to_exponent_fp16>(src, elements, p0, p1, i);
  scalar_exponent_kernels().split_fp16(src + 2 * i, elements - i, p0 + i, p1 + i);
}
WZ_AVX2 void merge_fp16_avx2(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  const std::size_t i = merge2<from_exponent_fp16>(p0, p1, elements, dst);
  scalar_exponent_kernels().merge_fp16(p0 + i, p1 + i, elements - i, dst + 2 * i);
}

// fp32: deinterleave4 gives byte planes B0..B3; B2, B3 take the bf16
// formulas and the planes come out highest first (exponent, sign | mantissa top, then B1, B0).
WZ_AVX2 void split_fp32_avx2(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    const Quarters q = deinterleave4(src + 4 * i);
    const Halves top = to_exponent_bf16({q.byte[2], q.byte[3]});
    store(planes[0] + i, top.low);
    store(planes[1] + i, top.high);
    store(planes[2] + i, q.byte[1]);
    store(planes[3] + i, q.byte[0]);
  }
  std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_exponent_kernels().split_fp32(src + 4 * i, elements - i, rest);
}

WZ_AVX2 void merge_fp32_avx2(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 32 <= elements; i += 32) {
    const Halves top = from_exponent_bf16(load(planes[0] + i), load(planes[1] + i));
    interleave4({{load(planes[3] + i), load(planes[2] + i), top.low, top.high}}, dst + 4 * i);
  }
  const std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_exponent_kernels().merge_fp32(rest, elements - i, dst + 4 * i);
}

}  // namespace

ExponentKernels avx2_exponent_kernels() {
  return {split_bf16_avx2, merge_bf16_avx2, split_fp16_avx2, merge_fp16_avx2, split_fp32_avx2, merge_fp32_avx2};
}

}  // namespace wirezip::codecs::kernels
