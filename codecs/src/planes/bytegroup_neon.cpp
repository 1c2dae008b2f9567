// NEON byte-grouping kernels for aarch64 (the BlueField-3's Cortex-A78 cores): the structure
// loads vld2q/vld4q de-interleave 2 or 4 planes in one instruction, and vst2q/vst4q re-interleave.
#include <arm_neon.h>

#include <cstdint>

#include "planes/bytegroup_kernels.hpp"

namespace wirezip::codecs::kernels {
namespace {

const std::uint8_t* u8(const std::byte* p) { return reinterpret_cast<const std::uint8_t*>(p); }
std::uint8_t* u8(std::byte* p) { return reinterpret_cast<std::uint8_t*>(p); }

void split2_neon(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) {
    uint8x16x2_t v = vld2q_u8(u8(src + 2 * i));
    vst1q_u8(u8(p0 + i), v.val[0]);
    vst1q_u8(u8(p1 + i), v.val[1]);
  }
  scalar_kernels().split2(src + 2 * i, elements - i, p0 + i, p1 + i);
}

void merge2_neon(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) vst2q_u8(u8(dst + 2 * i), uint8x16x2_t{{vld1q_u8(u8(p0 + i)), vld1q_u8(u8(p1 + i))}});
  scalar_kernels().merge2(p0 + i, p1 + i, elements - i, dst + 2 * i);
}

void split4_neon(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) {
    uint8x16x4_t v = vld4q_u8(u8(src + 4 * i));
    for (int k = 0; k < 4; ++k) vst1q_u8(u8(planes[k] + i), v.val[k]);
  }
  std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_kernels().split4(src + 4 * i, elements - i, rest);
}

void merge4_neon(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) {
    uint8x16x4_t v{{vld1q_u8(u8(planes[0] + i)), vld1q_u8(u8(planes[1] + i)), vld1q_u8(u8(planes[2] + i)),
                    vld1q_u8(u8(planes[3] + i))}};
    vst4q_u8(u8(dst + 4 * i), v);
  }
  const std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_kernels().merge4(rest, elements - i, dst + 4 * i);
}

}  // namespace

PlaneKernels neon_kernels() { return {split2_neon, merge2_neon, split4_neon, merge4_neon}; }

}  // namespace wirezip::codecs::kernels
