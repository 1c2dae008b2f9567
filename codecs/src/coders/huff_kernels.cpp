#include "coders/huff_kernels.hpp"

#include <algorithm>
#include <array>
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

// window_entries, eight windows at a time, with no chain of lookups. A window's run of codes is its
// first code (length l, width b) followed by the run of window w >> l, an earlier window, cut where
// it passes the 11 - l bits or 4 - b bytes left: each code there is the code w has at that place,
// since a code that ends within those bits is told by them alone, and the cut keeps the codes that
// fit (their stops only grow along a run). So each window takes one lookup of an earlier window's
// stops and bytes. Windows 0-7 may need windows of their own group: the portable loop makes them.
WZ_V3 void window_entries_v3(const FirstCode* first, DecodeEntry* table) {
  alignas(32) std::array<std::uint32_t, kWindowMask + 1> stops, bytes;  // each window's run
  for (std::uint32_t w = 0; w < 8; ++w) {
    table[w] = window_entry(first, w, stops[w]);
    bytes[w] = static_cast<std::uint32_t>(table[w]);
  }
  const __m256i byte = _mm256_set1_epi32(0xff), nibble = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi32(1);
  const __m256i no_stops = _mm256_set1_epi8(kNoStop), zero = _mm256_setzero_si256();
  const __m256i bits = _mm256_set1_epi32(kMaxLength), four = _mm256_set1_epi32(kMaxBytesPerEntry);
  // A shuffle that copies byte 0 of each u32 into its four bytes.
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12, 0, 0, 0, 0, 4, 4, 4, 4, 8,
                                          8, 8, 8, 12, 12, 12, 12);
  __m256i window = _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15);
  for (std::uint32_t w = 8; w <= kWindowMask; w += 8, window = _mm256_add_epi32(window, _mm256_set1_epi32(8))) {
    const __m256i f = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(first + w));
    const __m256i l = _mm256_srli_epi32(f, 24), b = _mm256_and_si256(_mm256_srli_epi32(f, 16), byte);
    const __m256i none = _mm256_cmpeq_epi32(l, zero);   // no code starts the window: an empty run
    // Below w where a code starts the window; window 0 where none does (its result is not used).
    const __m256i rest = _mm256_andnot_si256(none, _mm256_srlv_epi32(window, l));
    const __m256i rest_stops = _mm256_i32gather_epi32(reinterpret_cast<const int*>(stops.data()), rest, 4);
    const __m256i rest_bytes = _mm256_i32gather_epi32(reinterpret_cast<const int*>(bytes.data()), rest, 4);
    // The stops that fit the bits and bytes left; absent ones (kNoStop) never do.
    const __m256i bits_left = _mm256_shuffle_epi8(_mm256_sub_epi32(bits, l), spread);
    const __m256i bytes_left = _mm256_shuffle_epi8(_mm256_sub_epi32(four, b), spread);
    const __m256i over =
        _mm256_or_si256(_mm256_cmpgt_epi8(_mm256_and_si256(rest_stops, nibble), bits_left),
                        _mm256_cmpgt_epi8(_mm256_and_si256(_mm256_srli_epi16(rest_stops, 4), nibble), bytes_left));
    const __m256i kept = _mm256_andnot_si256(over, rest_stops);
    // The last stop kept is the largest byte (stops grow along a run).
    __m256i last = _mm256_max_epu8(kept, _mm256_srli_epi32(kept, 8));
    last = _mm256_and_si256(_mm256_max_epu8(last, _mm256_srli_epi32(last, 16)), byte);
    const __m256i kept_bits = _mm256_and_si256(last, _mm256_set1_epi32(0x0f)), kept_bytes = _mm256_srli_epi32(last, 4);
    // This window's stops: its first code's, then each kept stop moved on by it.
    const __m256i head = _mm256_or_si256(l, _mm256_slli_epi32(b, 4));
    const __m256i moved = _mm256_add_epi8(rest_stops, _mm256_shuffle_epi8(head, spread));
    __m256i run =
        _mm256_or_si256(_mm256_slli_epi32(_mm256_blendv_epi8(no_stops, moved, _mm256_cmpeq_epi8(over, zero)), 8), head);
    run = _mm256_blendv_epi8(run, no_stops, none);
    const __m256i kept_mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, _mm256_slli_epi32(kept_bytes, 3)), one);
    __m256i out = _mm256_or_si256(_mm256_and_si256(f, _mm256_set1_epi32(0xffff)),
                                  _mm256_sllv_epi32(_mm256_and_si256(rest_bytes, kept_mask), _mm256_slli_epi32(b, 3)));
    out = _mm256_andnot_si256(none, out);
    // The entry's upper half: the first code's bits and width, the bits and bytes of the run.
    __m256i upper = _mm256_or_si256(_mm256_or_si256(l, _mm256_slli_epi32(b, 8)),
                                    _mm256_or_si256(_mm256_slli_epi32(_mm256_add_epi32(l, kept_bits), 16),
                                                    _mm256_slli_epi32(_mm256_add_epi32(b, kept_bytes), 24)));
    upper = _mm256_andnot_si256(none, upper);
    _mm256_store_si256(reinterpret_cast<__m256i*>(stops.data() + w), run);
    _mm256_store_si256(reinterpret_cast<__m256i*>(bytes.data() + w), out);
    const __m256i low = _mm256_unpacklo_epi32(out, upper), high = _mm256_unpackhi_epi32(out, upper);
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
