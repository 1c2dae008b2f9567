#pragma once
// Internal: elements <-> planes by a frame's PlaneLayout, so the framed codecs need not know which
// split they use: byte grouping (bytegroup.hpp) or the exponent split (exponent_split.hpp).
#include <span>
#include <string_view>

#include "wirezip/codecs/exponent_split.hpp"
#include "wirezip/codecs/format_ids.hpp"

namespace wirezip::codecs {

PlaneLayout exponent_layout(FloatFormat format);
// The float format of an exponent layout (the inverse of exponent_layout; not for PlaneLayout::bytes).
FloatFormat exponent_format(PlaneLayout layout);
std::string_view layout_name(PlaneLayout layout);

// split_planes / split_exponent by layout; `width` must be the layout's width for exponent layouts.
void split_layout(PlaneLayout layout, std::span<const std::byte> src, std::size_t width,
                  std::span<std::byte* const> planes);
void merge_layout(PlaneLayout layout, std::span<const std::byte* const> planes, std::size_t width,
                  std::span<std::byte> dst);

}  // namespace wirezip::codecs
