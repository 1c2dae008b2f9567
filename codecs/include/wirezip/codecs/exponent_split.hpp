#pragma once
// Exponent-aware grouping: plane 0 holds each float's exponent field, the other planes its sign and
// mantissa. Byte grouping (bytegroup.hpp) cuts a bf16 between exponent bit 0 and the mantissa, so
// its high plane mixes the sign into the exponent and its low plane carries an exponent bit among
// near-random mantissa bits; on bf16 weights that costs ~1.2% of ratio against this split
// (order-0 bounds 1.503 and 1.521 on 64 MiB of synthetic weights).
//
// Plane contents, little-endian elements (s sign, e exponent, m mantissa, bit 0 lowest):
//   bf16 (s e8 m7):   plane 0 = e8                      plane 1 = s << 7 | m7
//   fp16 (s e5 m10):  plane 0 = e5 | (m10 & 7) << 5     plane 1 = s << 7 | m10 >> 3
//   fp32 (s e8 m23):  plane 0 = e8   plane 1 = s << 7 | m23 >> 16   plane 2 = m23 >> 8 & 0xff   plane 3 = m23 & 0xff
// fp16 leaves a byte 3 bits short of the 11 sign and mantissa bits, so plane 0 carries the 3 lowest
// mantissa bits above the exponent: near-random bits cost the same wherever they are coded, and the
// top mantissa bits, which do depend on the exponent, stay in plane 1.
//
// Every bit pattern maps to exactly one plane tuple and back (zeros, subnormals, infinities, NaNs
// alike: no arithmetic, only bit moves). Vectorised paths as in bytegroup.hpp: AVX2 on x86-64,
// NEON on aarch64, each held to the scalar path by the tests.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "wirezip/codecs/bytegroup.hpp"

namespace wirezip::codecs {

enum class FloatFormat : std::uint8_t { bf16 = 0, fp16 = 1, fp32 = 2 };

std::string_view float_format_name(FloatFormat format);
std::optional<FloatFormat> parse_float_format(std::string_view name);
// Bytes per element: 2, 2, 4; the number of planes is the same.
std::size_t float_format_width(FloatFormat format);
// Bits of the exponent field: 8, 5, 8.
unsigned float_format_exponent_bits(FloatFormat format);

// Splits the whole elements of src into float_format_width(format) planes as above; each plane has
// room for src.size() / width bytes. Trailing bytes that do not make a whole element are left to
// the caller.
void split_exponent(std::span<const std::byte> src, FloatFormat format, std::span<std::byte* const> planes,
                    SimdPath path = best_simd_path());
// The exact inverse: fills the first (dst.size() / width) * width bytes of dst.
void merge_exponent(std::span<const std::byte* const> planes, FloatFormat format, std::span<std::byte> dst,
                    SimdPath path = best_simd_path());

}  // namespace wirezip::codecs
