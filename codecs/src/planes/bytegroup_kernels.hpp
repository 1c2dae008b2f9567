#pragma once
// Internal: the per-architecture kernels behind split_planes / merge_planes. Each handles a whole
// number of elements of width 2 or 4; the widths NetZIP uses (bf16/fp16, fp32).
#include <cstddef>

namespace wirezip::codecs::kernels {

struct PlaneKernels {
  void (*split2)(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1);
  void (*merge2)(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst);
  void (*split4)(const std::byte* src, std::size_t elements, std::byte* const* planes);
  void (*merge4)(const std::byte* const* planes, std::size_t elements, std::byte* dst);
};

PlaneKernels scalar_kernels();
#if defined(__x86_64__)
PlaneKernels avx2_kernels();
PlaneKernels avx512_kernels();
#endif
#if defined(__aarch64__)
PlaneKernels neon_kernels();
#endif

}  // namespace wirezip::codecs::kernels
