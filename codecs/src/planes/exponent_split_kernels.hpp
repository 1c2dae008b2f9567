#pragma once
// Internal: the per-architecture kernels behind split_exponent / merge_exponent, one pair per
// float format; each handles a whole number of elements. The byte formulas all paths follow, with
// L and H the low and high byte of a 16-bit element (for fp32, bytes 2 and 3; bytes 0 and 1 are
// mantissa and only move):
//   bf16, fp32:  p0 = H << 1 | L >> 7                   p1 = (H & 0x80) | (L & 0x7f)
//                H  = (p1 & 0x80) | p0 >> 1             L  = p0 << 7 | (p1 & 0x7f)
//   fp16:        p0 = (H >> 2 & 0x1f) | L << 5          p1 = (H & 0x80) | (H & 3) << 5 | L >> 3
//                H  = (p1 & 0x80) | (p0 & 0x1f) << 2 | (p1 >> 5 & 3)    L = p0 >> 5 | (p1 & 0x1f) << 3
#include <cstddef>

namespace wirezip::codecs::kernels {

struct ExponentKernels {
  void (*split_bf16)(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1);
  void (*merge_bf16)(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst);
  void (*split_fp16)(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1);
  void (*merge_fp16)(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst);
  void (*split_fp32)(const std::byte* src, std::size_t elements, std::byte* const* planes);
  void (*merge_fp32)(const std::byte* const* planes, std::size_t elements, std::byte* dst);
};

ExponentKernels scalar_exponent_kernels();
#if defined(__x86_64__)
ExponentKernels avx2_exponent_kernels();
#endif
#if defined(__aarch64__)
ExponentKernels neon_exponent_kernels();
#endif

}  // namespace wirezip::codecs::kernels
