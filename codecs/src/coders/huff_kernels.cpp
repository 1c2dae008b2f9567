#include "coders/huff_kernels.hpp"

#include <algorithm>

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

// x86-64-v3 is more than AVX2 (which is what selects the avx2 path): check the rest it implies.
bool cpu_is_x86_64_v3() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("fma");
}
#endif

}  // namespace

HuffKernels scalar_huff_kernels() { return {encode_bulk_scalar, decode_bulk_scalar, byte_range_scalar}; }

#if defined(__x86_64__)
HuffKernels x86_64_v3_huff_kernels() { return {encode_bulk_v3, decode_bulk_v3, byte_range_v3}; }
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
