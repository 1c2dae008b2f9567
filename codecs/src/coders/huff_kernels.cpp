#include "coders/huff_kernels.hpp"

#include <algorithm>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "wirezip/util/error.hpp"

namespace wirezip::codecs::huff {
namespace {

void encode_bulk_scalar(EncodeLane* lanes, std::size_t groups, const PairCodes& pairs) {
  encode_bulk_body(lanes, groups, pairs);
}
void decode_bulk_scalar(DecodeLane* lanes, const DecodeEntry* table) { decode_bulk_body(lanes, table); }
ByteRange byte_range_scalar(const std::uint8_t* src, std::size_t n) { return byte_range_body(src, n); }

#if defined(__x86_64__)
// The same loops for x86-64-v3 CPUs. Per-function target attributes keep the library runnable on
// any x86-64; the always_inline bodies are compiled anew inside each of these.
#define WZ_V3 __attribute__((target("arch=x86-64-v3")))
WZ_V3 void encode_bulk_v3(EncodeLane* lanes, std::size_t groups, const PairCodes& pairs) {
  encode_bulk_body(lanes, groups, pairs);
}
WZ_V3 void decode_bulk_v3(DecodeLane* lanes, const DecodeEntry* table) { decode_bulk_body(lanes, table); }
WZ_V3 ByteRange byte_range_v3(const std::uint8_t* src, std::size_t n) { return byte_range_body(src, n); }

// window_entries, eight windows at a time. The portable loop stops at a different code in each
// window, a branch it mispredicts about once a window; here every window takes the four steps
// (four bytes hold at most four codes), a step adding its code only where every step before it
// did and the code fits the bits and bytes left.
WZ_V3 void window_entries_v3(const FirstCode* first, DecodeEntry* table) {
  const __m256i window_mask = _mm256_set1_epi32(kWindowMask), byte = _mm256_set1_epi32(0xff);
  const __m256i bytes_mask = _mm256_set1_epi32(0xffff), zero = _mm256_setzero_si256();
  const __m256i bits_over = _mm256_set1_epi32(kMaxLength), bytes_over = _mm256_set1_epi32(kMaxBytesPerEntry);
  __m256i window = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (std::uint32_t w = 0; w <= kWindowMask; w += 8, window = _mm256_add_epi32(window, _mm256_set1_epi32(8))) {
    const __m256i f0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(first + w));
    const __m256i length0 = _mm256_srli_epi32(f0, 24), width0 = _mm256_and_si256(_mm256_srli_epi32(f0, 16), byte);
    __m256i ok = _mm256_cmpgt_epi32(length0, zero);  // one code always fits an empty window
    __m256i bytes = _mm256_and_si256(_mm256_and_si256(f0, bytes_mask), ok);
    __m256i used = _mm256_and_si256(length0, ok), n = _mm256_and_si256(width0, ok);
    for (int step = 1; step < 4; ++step) {
      const __m256i at = _mm256_and_si256(_mm256_srlv_epi32(window, used), window_mask);
      const __m256i f = _mm256_i32gather_epi32(reinterpret_cast<const int*>(first), at, 4);
      const __m256i length = _mm256_srli_epi32(f, 24), width = _mm256_and_si256(_mm256_srli_epi32(f, 16), byte);
      const __m256i past = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_add_epi32(used, length), bits_over),
                                           _mm256_cmpgt_epi32(_mm256_add_epi32(n, width), bytes_over));
      ok = _mm256_andnot_si256(_mm256_or_si256(past, _mm256_cmpeq_epi32(length, zero)), ok);
      const __m256i code_bytes = _mm256_sllv_epi32(_mm256_and_si256(f, bytes_mask), _mm256_slli_epi32(n, 3));
      bytes = _mm256_or_si256(bytes, _mm256_and_si256(code_bytes, ok));
      used = _mm256_add_epi32(used, _mm256_and_si256(length, ok));
      n = _mm256_add_epi32(n, _mm256_and_si256(width, ok));
    }
    // The entry's upper half: the first code's bits and width, the bits and bytes of the run.
    const __m256i upper = _mm256_or_si256(_mm256_or_si256(length0, _mm256_slli_epi32(width0, 8)),
                                          _mm256_or_si256(_mm256_slli_epi32(used, 16), _mm256_slli_epi32(n, 24)));
    const __m256i low = _mm256_unpacklo_epi32(bytes, upper), high = _mm256_unpackhi_epi32(bytes, upper);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(table + w), _mm256_permute2x128_si256(low, high, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(table + w + 4), _mm256_permute2x128_si256(low, high, 0x31));
  }
}

// x86-64-v3 is more than AVX2 (which is what selects the avx2 path): check the rest it implies.
bool cpu_is_x86_64_v3() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("fma");
}
#endif

}  // namespace

HuffKernels scalar_huff_kernels() {
  return {encode_bulk_scalar, decode_bulk_scalar, byte_range_scalar, window_entries};
}

#if defined(__x86_64__)
HuffKernels x86_64_v3_huff_kernels() { return {encode_bulk_v3, decode_bulk_v3, byte_range_v3, window_entries_v3}; }
#endif

HuffKernels huff_kernels(SimdPath path) {
  const auto available = available_simd_paths();
  if (std::find(available.begin(), available.end(), path) == available.end())
    fail("huff: SIMD path {} is not available on this CPU or in this build", simd_path_name(path));
  switch (path) {
#if defined(__x86_64__)
    case SimdPath::avx2:
    case SimdPath::avx512:
      // An AVX2 CPU without BMI2 (or a hypervisor that hides it) gets the portable loops.
      return cpu_is_x86_64_v3() ? x86_64_v3_huff_kernels() : scalar_huff_kernels();
#endif
#if defined(__aarch64__)
    case SimdPath::neon:
      return neon_huff_kernels();
#endif
    default:
      return scalar_huff_kernels();
  }
}

}  // namespace wirezip::codecs::huff
