#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "wirezip/codecs/exponent_split.hpp"

namespace wirezip::codecs {
namespace {

// Little-endian bytes of every 16-bit pattern, in order: each value once, all of them.
std::vector<std::byte> every_16bit_pattern() {
  std::vector<std::byte> bytes(2 << 16);
  for (std::uint32_t v = 0; v < (1u << 16); ++v) {
    bytes[2 * v] = static_cast<std::byte>(v & 0xff);
    bytes[2 * v + 1] = static_cast<std::byte>(v >> 8);
  }
  return bytes;
}

// fp32 patterns that matter: signed zeros, subnormals, the normal extremes, infinities, quiet and
// signalling NaNs with payloads, then random ones.
std::vector<std::byte> fp32_patterns() {
  std::vector<std::uint32_t> values = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00400000, 0x00800000,
                                       0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
                                       0x7fc00000, 0xffc00001, 0x7f800001, 0xffbfffff, 0x7fffffff, 0xffffffff};
  values.push_back(std::bit_cast<std::uint32_t>(std::numeric_limits<float>::denorm_min()));
  values.push_back(std::bit_cast<std::uint32_t>(std::numeric_limits<float>::quiet_NaN()));
  values.push_back(std::bit_cast<std::uint32_t>(std::numeric_limits<float>::signaling_NaN()));
  std::mt19937 rng(5);
  while (values.size() < 20000) values.push_back(static_cast<std::uint32_t>(rng()));
  std::vector<std::byte> bytes(4 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<std::byte>(values[i] >> (8 * b));
  return bytes;
}

std::uint32_t element(std::span<const std::byte> src, std::size_t i, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t b = 0; b < width; ++b) v |= static_cast<std::uint32_t>(src[i * width + b]) << (8 * b);
  return v;
}

struct Planes {
  std::vector<std::byte> bytes;
  std::vector<std::byte*> pointers;
  Planes(std::size_t width, std::size_t elements) : bytes(width * elements + 1, std::byte{0xee}), pointers(width) {
    for (std::size_t k = 0; k < width; ++k) pointers[k] = bytes.data() + k * elements;
  }
  std::vector<const std::byte*> readonly() const { return {pointers.begin(), pointers.end()}; }
  unsigned at(std::size_t k, std::size_t i) const { return static_cast<unsigned>(pointers[k][i]); }
};

// Plane 0 is the exponent field and the planes hold exactly the sign and mantissa bits, per the
// layout in exponent_split.hpp, computed here from the value with shifts of the whole element.
void expect_layout(FloatFormat format, std::span<const std::byte> src, const Planes& planes) {
  const std::size_t width = float_format_width(format), elements = src.size() / width;
  for (std::size_t i = 0; i < elements; ++i) {
    const std::uint32_t v = element(src, i, width);
    SCOPED_TRACE(testing::Message() << float_format_name(format) << " value 0x" << std::hex << v);
    if (format == FloatFormat::bf16) {
      ASSERT_EQ(planes.at(0, i), (v >> 7) & 0xff);
      ASSERT_EQ(planes.at(1, i), ((v >> 15) << 7) | (v & 0x7f));
    } else if (format == FloatFormat::fp16) {
      ASSERT_EQ(planes.at(0, i) & 0x1f, (v >> 10) & 0x1f);
      ASSERT_EQ(planes.at(0, i) >> 5, v & 7);
      ASSERT_EQ(planes.at(1, i), ((v >> 15) << 7) | ((v >> 3) & 0x7f));
    } else {
      ASSERT_EQ(planes.at(0, i), (v >> 23) & 0xff);
      ASSERT_EQ(planes.at(1, i), ((v >> 31) << 7) | ((v >> 16) & 0x7f));
      ASSERT_EQ(planes.at(2, i), (v >> 8) & 0xff);
      ASSERT_EQ(planes.at(3, i), v & 0xff);
    }
  }
}

// Every path splits like the scalar one, the scalar one follows the documented layout, and every
// path's merge restores the input exactly without touching a byte past the whole elements.
void expect_exact(FloatFormat format, std::span<const std::byte> src) {
  const std::size_t width = float_format_width(format), elements = src.size() / width;
  Planes expected(width, elements);
  split_exponent(src, format, expected.pointers, SimdPath::scalar);
  expect_layout(format, src, expected);
  for (SimdPath path : available_simd_paths()) {
    SCOPED_TRACE(testing::Message() << simd_path_name(path) << " " << float_format_name(format) << " elements "
                                    << elements);
    Planes planes(width, elements);
    split_exponent(src, format, planes.pointers, path);
    ASSERT_EQ(planes.bytes, expected.bytes);  // the guard byte included
    std::vector<std::byte> back(src.size() + 3, std::byte{0x55});
    merge_exponent(planes.readonly(), format, std::span(back).first(src.size()), path);
    ASSERT_TRUE(std::equal(src.begin(), src.begin() + elements * width, back.begin()));
    for (std::size_t i = elements * width; i < back.size(); ++i) ASSERT_EQ(back[i], std::byte{0x55});
  }
}

TEST(ExponentSplit, EveryBf16AndFp16BitPatternRoundTripsOnEveryPath) {
  const auto all = every_16bit_pattern();  // zeros, subnormals, infinities and NaNs of both formats
  expect_exact(FloatFormat::bf16, all);
  expect_exact(FloatFormat::fp16, all);
}

TEST(ExponentSplit, Fp32SpecialAndRandomPatternsRoundTripOnEveryPath) { expect_exact(FloatFormat::fp32, fp32_patterns()); }

TEST(ExponentSplit, LengthsAroundEveryVectorWidth) {
  const auto all = every_16bit_pattern();
  const auto wide = fp32_patterns();
  for (std::size_t elements : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000}) {
    for (FloatFormat format : {FloatFormat::bf16, FloatFormat::fp16, FloatFormat::fp32}) {
      const std::size_t width = float_format_width(format);
      const std::size_t offset = 7 * width;  // unaligned start
      const auto& source = width == 4 ? wide : all;
      expect_exact(format, std::span(source).subspan(offset, elements * width + width - 1));
    }
  }
}

TEST(ExponentSplit, PlaneZeroIsTheExponentOfRealFloats) {
  // Cross-check the bit layout against the C library's view of a float: frexp's exponent.
  for (float x : {1.0f, -1.0f, 0.02f, -3.5e-3f, 6.5e4f, 1e-30f}) {
    const auto v = std::bit_cast<std::uint32_t>(x);
    std::vector<std::byte> bytes(4);
    for (int b = 0; b < 4; ++b) bytes[b] = static_cast<std::byte>(v >> (8 * b));
    Planes planes(4, 1);
    split_exponent(bytes, FloatFormat::fp32, planes.pointers);
    int exponent = 0;
    std::frexp(x, &exponent);
    EXPECT_EQ(static_cast<int>(planes.at(0, 0)) - 127, exponent - 1) << x;
    EXPECT_EQ(planes.at(1, 0) >> 7, x < 0 ? 1u : 0u) << x;
  }
}

TEST(ExponentSplit, FormatsAndPlaneCounts) {
  EXPECT_EQ(parse_float_format("bf16"), FloatFormat::bf16);
  EXPECT_EQ(parse_float_format("fp32"), FloatFormat::fp32);
  EXPECT_FALSE(parse_float_format("fp8").has_value());
  EXPECT_EQ(float_format_width(FloatFormat::fp16), 2u);
  EXPECT_EQ(float_format_exponent_bits(FloatFormat::fp16), 5u);
  std::vector<std::byte> src(8), plane(4);
  std::byte* one[1] = {plane.data()};
  EXPECT_ANY_THROW(split_exponent(src, FloatFormat::bf16, one));
}

}  // namespace
}  // namespace wirezip::codecs
