#include "fused_passes.hpp"

#include <algorithm>
#include <array>

namespace wirezip::codecs {

void split_and_hash(PlaneLayout layout, std::span<const std::byte> src, std::size_t width,
                    std::span<std::byte* const> planes, ChecksumStream& hash) {
  const std::size_t elements = src.size() / width, per_block = kFusedBlockBytes / width;
  std::array<std::byte*, kMaxElementWidth> at{};
  for (std::size_t first = 0; first < elements; first += per_block) {
    const std::size_t count = std::min(per_block, elements - first);
    for (std::size_t k = 0; k < width; ++k) at[k] = planes[k] + first;
    std::span<const std::byte> block = src.subspan(first * width, count * width);
    split_layout(layout, block, width, {at.data(), width});
    hash.update(block);
  }
  hash.update(src.subspan(elements * width));
}

void merge_and_hash(PlaneLayout layout, std::span<const std::byte* const> planes, std::size_t width,
                    std::span<std::byte> dst, ChecksumStream& hash) {
  const std::size_t elements = dst.size() / width, per_block = kFusedBlockBytes / width;
  std::array<const std::byte*, kMaxElementWidth> at{};
  for (std::size_t first = 0; first < elements; first += per_block) {
    const std::size_t count = std::min(per_block, elements - first);
    for (std::size_t k = 0; k < width; ++k) at[k] = planes[k] + first;
    std::span<std::byte> block = dst.subspan(first * width, count * width);
    merge_layout(layout, {at.data(), width}, width, block);
    hash.update(block);
  }
}

}  // namespace wirezip::codecs
