#include "planes/plane_layout.hpp"

#include <array>

#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

FloatFormat format_of(PlaneLayout layout, std::size_t width) {
  const FloatFormat format = exponent_format(layout);
  if (float_format_width(format) != width)
    fail("plane layout {} needs element width {}, not {}", layout_name(layout), float_format_width(format), width);
  return format;
}

}  // namespace

PlaneLayout exponent_layout(FloatFormat format) {
  return static_cast<PlaneLayout>(static_cast<std::uint8_t>(format) + 1);
}

FloatFormat exponent_format(PlaneLayout layout) {
  return static_cast<FloatFormat>(static_cast<std::uint8_t>(layout) - 1);
}

std::string_view layout_name(PlaneLayout layout) {
  constexpr std::array<std::string_view, 4> names{"bytes", "exponent (bf16)", "exponent (fp16)", "exponent (fp32)"};
  return names.at(static_cast<std::size_t>(layout));
}

void split_layout(PlaneLayout layout, std::span<const std::byte> src, std::size_t width,
                  std::span<std::byte* const> planes) {
  if (layout == PlaneLayout::bytes) return split_planes(src, width, planes);
  split_exponent(src, format_of(layout, width), planes);
}

void merge_layout(PlaneLayout layout, std::span<const std::byte* const> planes, std::size_t width,
                  std::span<std::byte> dst) {
  if (layout == PlaneLayout::bytes) return merge_planes(planes, width, dst);
  merge_exponent(planes, format_of(layout, width), dst);
}

}  // namespace wirezip::codecs
