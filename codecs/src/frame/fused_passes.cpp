#include "frame/fused_passes.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "wirezip/codecs/entropy.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {

std::uint32_t incompressible_planes(PlaneLayout layout, std::span<const std::byte> src, std::size_t width,
                                    std::vector<std::byte>& probe) {
  constexpr std::size_t kSlices = 32, kSlice = 256;
  const std::size_t elements = src.size() / width;
  if (elements < 4096) return 0;
  const std::size_t step = elements / kSlices, slice = std::min(kSlice, step), sample = kSlices * slice;
  probe.resize(width * sample);
  std::array<std::byte*, kMaxElementWidth> at{};
  for (std::size_t s = 0; s < kSlices; ++s) {
    for (std::size_t k = 0; k < width; ++k) at[k] = probe.data() + k * sample + s * slice;
    split_layout(layout, src.subspan(s * step * width, slice * width), width, {at.data(), width});
  }
  std::uint32_t raw = 0;
  for (std::size_t k = 0; k < width; ++k)
    if (order0_entropy_bits(std::span(probe).subspan(k * sample, sample)) >= 7.9) raw |= 1u << k;
  return raw;
}

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

std::size_t checked_plane_size(std::string_view spec, std::size_t src_size, std::size_t dst_size, std::size_t needed,
                               std::size_t width) {
  if (dst_size < needed)
    fail("{}: output of {} bytes is below the {} bytes compression may need", spec, dst_size, needed);
  const std::size_t plane = src_size / width;
  if (plane > std::numeric_limits<std::uint32_t>::max())
    fail("{}: {} bytes is too large for one frame (split it into chunks)", spec, src_size);
  return plane;
}

std::size_t finish_frame(const FrameHeader& header, std::span<const std::byte> src, std::byte* out,
                         std::span<std::byte> dst) {
  const std::span<const std::byte> tail = src.last(header.tail_size());
  out = std::copy(tail.begin(), tail.end(), out);
  write_frame_header(header, dst);
  return static_cast<std::size_t>(out - dst.data());
}

std::size_t restore_and_verify(const FrameHeader& header, std::span<const std::byte* const> planes,
                               std::span<const std::byte> frame, std::span<std::byte> dst, ChecksumStream& hash) {
  const std::size_t whole = header.element_width * header.plane_size();
  hash.reset();
  merge_and_hash(header.layout, planes, header.element_width, dst.first(whole), hash);
  const std::span<const std::byte> tail = frame.last(header.tail_size());  // read_frame_header checked the sizes
  std::copy(tail.begin(), tail.end(), dst.begin() + static_cast<std::ptrdiff_t>(whole));
  hash.update(dst.subspan(whole, tail.size()));
  verify_checksum(header, hash.digest());
  return header.original_size;
}

void verify_checksum(const FrameHeader& header, std::uint64_t checksum) {
  if (checksum != header.checksum)
    fail("corrupt frame: checksum of the restored {} bytes does not match", header.original_size);
}

}  // namespace wirezip::codecs
