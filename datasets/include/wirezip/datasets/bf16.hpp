#pragma once
// bf16 conversions: the one place where floating point becomes the bytes the codecs see.
//
// bf16 is the high half of an IEEE fp32. Converting by truncation would bias every value toward
// zero and turn some NaNs into infinities, so fp32 -> bf16 rounds to nearest, ties to even (what
// PyTorch and the hardware do), and keeps NaN a quiet NaN with its sign.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace wirezip::datasets {

// fp32 bit pattern -> bf16 bit pattern, round to nearest even. Overflow rounds to +-inf, as IEEE says.
constexpr std::uint16_t fp32_bits_to_bf16(std::uint32_t bits) {
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    // NaN: the payload may sit only in the dropped low bits, so set the quiet bit to keep it a NaN.
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  }
  // Adding 0x7fff plus the lowest kept bit carries into the kept half exactly when the dropped half
  // is above one half, or equal to one half and the kept half is odd.
  std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

constexpr std::uint16_t fp32_to_bf16(float value) { return fp32_bits_to_bf16(std::bit_cast<std::uint32_t>(value)); }

// Exact: every bf16 is an fp32.
constexpr float bf16_to_fp32(std::uint16_t bf16) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bf16) << 16);
}

// IEEE binary16 bit pattern -> fp32 bit pattern. Exact: fp32 holds every half, subnormals included.
constexpr std::uint32_t fp16_bits_to_fp32_bits(std::uint16_t half) {
  std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  std::uint32_t exponent = (half >> 10) & 0x1fu;
  std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) {
    // Inf or NaN; a NaN stays a quiet NaN.
    return sign | 0x7f800000u | (mantissa << 13) | (mantissa != 0 ? 0x00400000u : 0u);
  }
  if (exponent == 0) {
    if (mantissa == 0) return sign;  // +-0
    // Subnormal half: shift the leading one up to the implicit position; each shift halves the scale.
    std::uint32_t fp32_exponent = 127 - 15 + 1;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --fp32_exponent;
    }
    return sign | (fp32_exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
}

// fp16 has 10 mantissa bits and bf16 7, so this rounds (to nearest even), via the exact fp32 value.
constexpr std::uint16_t fp16_to_bf16(std::uint16_t half) { return fp32_bits_to_bf16(fp16_bits_to_fp32_bits(half)); }

// Bulk conversions of little-endian byte streams (any alignment), as stored in files.
// Each writes src.size() / source-width bf16 elements, little-endian, to dst; dst must hold them.
// Throws wirezip::Error when src is not a whole number of elements or dst is the wrong size.
void f32_le_to_bf16_le(std::span<const std::byte> src, std::span<std::byte> dst);
void f16_le_to_bf16_le(std::span<const std::byte> src, std::span<std::byte> dst);

}  // namespace wirezip::datasets
