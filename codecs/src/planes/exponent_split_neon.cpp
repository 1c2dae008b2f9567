// NEON exponent-split kernels for aarch64: vld2q/vld4q de-interleave the bytes of 16 elements, the
// byte formulas of exponent_split_kernels.hpp run on whole vectors (NEON has byte shifts), and
// vst2q/vst4q re-interleave.
#include <arm_neon.h>

#include <cstdint>

#include "planes/exponent_split_kernels.hpp"

namespace wirezip::codecs::kernels {
namespace {

const std::uint8_t* u8(const std::byte* p) { return reinterpret_cast<const std::uint8_t*>(p); }
std::uint8_t* u8(std::byte* p) { return reinterpret_cast<std::uint8_t*>(p); }
uint8x16_t pick(uint8x16_t v, std::uint8_t mask) { return vandq_u8(v, vdupq_n_u8(mask)); }

// {low, high} bytes -> {exponent, sign | mantissa} and back.
uint8x16x2_t to_exponent_bf16(uint8x16_t low, uint8x16_t high) {
  return {{vorrq_u8(vshlq_n_u8(high, 1), vshrq_n_u8(low, 7)), vorrq_u8(pick(high, 0x80), pick(low, 0x7f))}};
}
uint8x16x2_t from_exponent_bf16(uint8x16_t e, uint8x16_t sm) {
  return {{vorrq_u8(vshlq_n_u8(e, 7), pick(sm, 0x7f)), vorrq_u8(pick(sm, 0x80), vshrq_n_u8(e, 1))}};
}
uint8x16x2_t to_exponent_fp16(uint8x16_t low, uint8x16_t high) {
  return {{vorrq_u8(pick(vshrq_n_u8(high, 2), 0x1f), vshlq_n_u8(low, 5)),
           vorrq_u8(vorrq_u8(pick(high, 0x80), vshlq_n_u8(pick(high, 3), 5)), vshrq_n_u8(low, 3))}};
}
uint8x16x2_t from_exponent_fp16(uint8x16_t e, uint8x16_t sm) {
  return {{vorrq_u8(vshrq_n_u8(e, 5), vshlq_n_u8(sm, 3)),
           vorrq_u8(vorrq_u8(pick(sm, 0x80), vshlq_n_u8(pick(e, 0x1f), 2)), pick(vshrq_n_u8(sm, 5), 0x03))}};
}

template <uint8x16x2_t (*to)(uint8x16_t, uint8x16_t)>
std::size_t split2(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) {
    const uint8x16x2_t bytes = vld2q_u8(u8(src + 2 * i));
    const uint8x16x2_t planes = to(bytes.val[0], bytes.val[1]);
    vst1q_u8(u8(p0 + i), planes.val[0]);
    vst1q_u8(u8(p1 + i), planes.val[1]);
  }
  return i;
}

template <uint8x16x2_t (*from)(uint8x16_t, uint8x16_t)>
std::size_t merge2(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) vst2q_u8(u8(dst + 2 * i), from(vld1q_u8(u8(p0 + i)), vld1q_u8(u8(p1 + i))));
  return i;
}

void split_bf16_neon(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  const std::size_t i = split2<to_exponent_bf16>(src, elements, p0, p1);
  scalar_exponent_kernels().split_bf16(src + 2 * i, elements - i, p0 + i, p1 + i);
}
void merge_bf16_neon(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  const std::size_t i = merge2<from_exponent_bf16>(p0, p1, elements, dst);
  scalar_exponent_kernels().merge_bf16(p0 + i, p1 + i, elements - i, dst + 2 * i);
}
void split_fp16_neon(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  const std::size_t i = split2<to_exponent_fp16>(src, elements, p0, p1);
  scalar_exponent_kernels().split_fp16(src + 2 * i, elements - i, p0 + i, p1 + i);
}
void merge_fp16_neon(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  const std::size_t i = merge2<from_exponent_fp16>(p0, p1, elements, dst);
  scalar_exponent_kernels().merge_fp16(p0 + i, p1 + i, elements - i, dst + 2 * i);
}

void split_fp32_neon(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) {
    const uint8x16x4_t bytes = vld4q_u8(u8(src + 4 * i));
    const uint8x16x2_t top = to_exponent_bf16(bytes.val[2], bytes.val[3]);
    vst1q_u8(u8(planes[0] + i), top.val[0]);
    vst1q_u8(u8(planes[1] + i), top.val[1]);
    vst1q_u8(u8(planes[2] + i), bytes.val[1]);
    vst1q_u8(u8(planes[3] + i), bytes.val[0]);
  }
  std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_exponent_kernels().split_fp32(src + 4 * i, elements - i, rest);
}

void merge_fp32_neon(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  std::size_t i = 0;
  for (; i + 16 <= elements; i += 16) {
    const uint8x16x2_t top = from_exponent_bf16(vld1q_u8(u8(planes[0] + i)), vld1q_u8(u8(planes[1] + i)));
    vst4q_u8(u8(dst + 4 * i),
             uint8x16x4_t{{vld1q_u8(u8(planes[3] + i)), vld1q_u8(u8(planes[2] + i)), top.val[0], top.val[1]}});
  }
  const std::byte* const rest[4] = {planes[0] + i, planes[1] + i, planes[2] + i, planes[3] + i};
  scalar_exponent_kernels().merge_fp32(rest, elements - i, dst + 4 * i);
}

}  // namespace

ExponentKernels neon_exponent_kernels() {
  return {split_bf16_neon, merge_bf16_neon, split_fp16_neon, merge_fp16_neon, split_fp32_neon, merge_fp32_neon};
}

}  // namespace wirezip::codecs::kernels
