#include "wirezip/codecs/exponent_split.hpp"

#include <array>
#include <cstdint>

#include "planes/exponent_split_kernels.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace kernels {
namespace {

using u8 = std::uint8_t;
u8 byte(std::byte b) { return static_cast<u8>(b); }
std::byte out(unsigned v) { return static_cast<std::byte>(v); }

void split_bf16_scalar(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  for (std::size_t i = 0; i < elements; ++i) {
    const unsigned low = byte(src[2 * i]), high = byte(src[2 * i + 1]);
    p0[i] = out(high << 1 | low >> 7);
    p1[i] = out((high & 0x80) | (low & 0x7f));
  }
}

void merge_bf16_scalar(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  for (std::size_t i = 0; i < elements; ++i) {
    const unsigned e = byte(p0[i]), sm = byte(p1[i]);
    dst[2 * i] = out(e << 7 | (sm & 0x7f));
    dst[2 * i + 1] = out((sm & 0x80) | e >> 1);
  }
}

void split_fp16_scalar(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  for (std::size_t i = 0; i < elements; ++i) {
    const unsigned low = byte(src[2 * i]), high = byte(src[2 * i + 1]);
    p0[i] = out((high >> 2 & 0x1f) | low << 5);
    p1[i] = out((high & 0x80) | (high & 3) << 5 | low >> 3);
  }
}

void merge_fp16_scalar(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  for (std::size_t i = 0; i < elements; ++i) {
    const unsigned e = byte(p0[i]), sm = byte(p1[i]);
    dst[2 * i] = out(e >> 5 | (sm & 0x1f) << 3);
    dst[2 * i + 1] = out((sm & 0x80) | (e & 0x1f) << 2 | (sm >> 5 & 3));
  }
}

void split_fp32_scalar(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  for (std::size_t i = 0; i < elements; ++i) {
    const unsigned b2 = byte(src[4 * i + 2]), b3 = byte(src[4 * i + 3]);
    planes[0][i] = out(b3 << 1 | b2 >> 7);
    planes[1][i] = out((b3 & 0x80) | (b2 & 0x7f));
    planes[2][i] = src[4 * i + 1];
    planes[3][i] = src[4 * i];
  }
}

void merge_fp32_scalar(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  for (std::size_t i = 0; i < elements; ++i) {
    const unsigned e = byte(planes[0][i]), sm = byte(planes[1][i]);
    dst[4 * i] = planes[3][i];
    dst[4 * i + 1] = planes[2][i];
    dst[4 * i + 2] = out(e << 7 | (sm & 0x7f));
    dst[4 * i + 3] = out((sm & 0x80) | e >> 1);
  }
}

}  // namespace

ExponentKernels scalar_exponent_kernels() {
  return {split_bf16_scalar, merge_bf16_scalar, split_fp16_scalar, merge_fp16_scalar, split_fp32_scalar,
          merge_fp32_scalar};
}

}  // namespace kernels

namespace {

constexpr EnumNames<FloatFormat, 3> kFormatNames{
    "float format", {{{FloatFormat::bf16, "bf16"}, {FloatFormat::fp16, "fp16"}, {FloatFormat::fp32, "fp32"}}}};

kernels::ExponentKernels kernels_for(SimdPath path) {
  switch (path) {
    case SimdPath::scalar:
      return kernels::scalar_exponent_kernels();
#if defined(__x86_64__)
    case SimdPath::avx2:
    case SimdPath::avx512:  // AVX2 already runs at copy speed here; AVX-512 adds nothing measurable
      return kernels::avx2_exponent_kernels();
#endif
#if defined(__aarch64__)
    case SimdPath::neon:
      return kernels::neon_exponent_kernels();
#endif
    default:
      fail("SIMD path {} is not built for this architecture", simd_path_name(path));
  }
}

void check_planes(FloatFormat format, std::size_t planes) {
  if (planes != float_format_width(format))
    fail("exponent split: {} needs {} planes, got {}", float_format_name(format), float_format_width(format), planes);
}

}  // namespace

std::string_view float_format_name(FloatFormat format) { return kFormatNames.name(format); }

std::optional<FloatFormat> parse_float_format(std::string_view name) { return kFormatNames.find(name); }

std::size_t float_format_width(FloatFormat format) { return format == FloatFormat::fp32 ? 4 : 2; }

unsigned float_format_exponent_bits(FloatFormat format) { return format == FloatFormat::fp16 ? 5 : 8; }

void split_exponent(std::span<const std::byte> src, FloatFormat format, std::span<std::byte* const> planes,
                    SimdPath path) {
  check_planes(format, planes.size());
  const kernels::ExponentKernels k = kernels_for(path);
  const std::size_t elements = src.size() / float_format_width(format);
  switch (format) {
    case FloatFormat::bf16: return k.split_bf16(src.data(), elements, planes[0], planes[1]);
    case FloatFormat::fp16: return k.split_fp16(src.data(), elements, planes[0], planes[1]);
    case FloatFormat::fp32: return k.split_fp32(src.data(), elements, planes.data());
  }
}

void merge_exponent(std::span<const std::byte* const> planes, FloatFormat format, std::span<std::byte> dst,
                    SimdPath path) {
  check_planes(format, planes.size());
  const kernels::ExponentKernels k = kernels_for(path);
  const std::size_t elements = dst.size() / float_format_width(format);
  switch (format) {
    case FloatFormat::bf16: return k.merge_bf16(planes[0], planes[1], elements, dst.data());
    case FloatFormat::fp16: return k.merge_fp16(planes[0], planes[1], elements, dst.data());
    case FloatFormat::fp32: return k.merge_fp32(planes.data(), elements, dst.data());
  }
}

}  // namespace wirezip::codecs
