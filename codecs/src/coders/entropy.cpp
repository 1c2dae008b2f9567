#include "wirezip/codecs/entropy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace wirezip::codecs {
namespace {

using Counts = std::array<std::uint64_t, 256>;

// Total information in bits of `total` symbols with these counts.
template <typename Histogram>
double information_bits(const Histogram& counts, std::uint64_t total) {
  double bits = 0;
  for (std::uint64_t c : counts)
    if (c) bits -= static_cast<double>(c) * std::log2(static_cast<double>(c) / static_cast<double>(total));
  return bits;
}

// Four tables, one per byte position mod 4, summed at the end: a plane of few distinct bytes
// (exponents) would otherwise increment one counter after another, each waiting on the last.
Counts byte_counts(std::span<const std::byte> bytes) {
  std::array<Counts, 4> partial{};
  const std::size_t whole = bytes.size() / 4 * 4;
  for (std::size_t i = 0; i < whole; i += 4)
    for (std::size_t k = 0; k < 4; ++k) ++partial[k][static_cast<std::uint8_t>(bytes[i + k])];
  for (std::size_t i = whole; i < bytes.size(); ++i) ++partial[0][static_cast<std::uint8_t>(bytes[i])];
  Counts counts{};
  for (std::size_t s = 0; s < 256; ++s) counts[s] = partial[0][s] + partial[1][s] + partial[2][s] + partial[3][s];
  return counts;
}

double plane_bits(std::span<const std::byte> plane) { return information_bits(byte_counts(plane), plane.size()); }

double bound(std::size_t bytes, double bits) { return bits > 0 ? 8.0 * static_cast<double>(bytes) / bits : INFINITY; }

}  // namespace

double order0_entropy_bits(std::span<const std::byte> bytes) {
  return bytes.empty() ? 0 : plane_bits(bytes) / static_cast<double>(bytes.size());
}

double bound_ratio_of_bits(std::uint64_t bytes, double bits) {
  return bytes == 0 ? 1.0 : bound(static_cast<std::size_t>(bytes), bits);
}

double entropy_bound_ratio(std::span<const std::byte> data, std::size_t width, std::size_t chunk) {
  if (data.empty() || width == 0 || chunk == 0) return 1.0;
  double bits = 0;
  add_entropy_bound_bits(data, width, chunk, bits);
  return bound(data.size(), bits);
}

void add_entropy_bound_bits(std::span<const std::byte> data, std::size_t width, std::size_t chunk, double& bits) {
  if (width == 0 || chunk == 0) return;
  for (std::size_t start = 0; start < data.size(); start += chunk) {
    std::span<const std::byte> piece = data.subspan(start, std::min(chunk, data.size() - start));
    const std::size_t elements = piece.size() / width;
    for (std::size_t k = 0; k < width && elements; ++k) {
      Counts counts{};
      for (std::size_t i = 0; i < elements; ++i) ++counts[static_cast<std::uint8_t>(piece[i * width + k])];
      bits += information_bits(counts, elements);
    }
    bits += 8.0 * static_cast<double>(piece.size() % width);
  }
}

double exponent_bound_ratio(std::span<const std::byte> data, FloatFormat format, std::size_t chunk) {
  if (data.empty() || chunk == 0) return 1.0;
  double bits = 0;
  add_exponent_bound_bits(data, format, chunk, bits);
  return bound(data.size(), bits);
}

void add_exponent_bound_bits(std::span<const std::byte> data, FloatFormat format, std::size_t chunk, double& bits) {
  if (chunk == 0) return;
  const std::size_t width = float_format_width(format);
  std::vector<std::byte> planes;
  for (std::size_t start = 0; start < data.size(); start += chunk) {
    std::span<const std::byte> piece = data.subspan(start, std::min(chunk, data.size() - start));
    const std::size_t elements = piece.size() / width;
    planes.resize(width * elements);
    std::vector<std::byte*> pointers(width);
    for (std::size_t k = 0; k < width; ++k) pointers[k] = planes.data() + k * elements;
    split_exponent(piece, format, pointers);
    for (std::size_t k = 0; k < width && elements; ++k) bits += plane_bits({pointers[k], elements});
    bits += 8.0 * static_cast<double>(piece.size() % width);
  }
}

double value_bound_ratio(std::span<const std::byte> data, std::size_t chunk) {
  if (data.empty() || chunk == 0) return 1.0;
  double bits = 0;
  add_value_bound_bits(data, chunk, bits);
  return bound(data.size(), bits);
}

void add_value_bound_bits(std::span<const std::byte> data, std::size_t chunk, double& bits) {
  if (chunk == 0) return;
  std::vector<std::uint64_t> counts(1 << 16);
  for (std::size_t start = 0; start < data.size(); start += chunk) {
    std::span<const std::byte> piece = data.subspan(start, std::min(chunk, data.size() - start));
    std::fill(counts.begin(), counts.end(), 0);
    const std::size_t elements = piece.size() / 2;
    for (std::size_t i = 0; i < elements; ++i)
      ++counts[static_cast<std::uint8_t>(piece[2 * i]) | static_cast<std::uint8_t>(piece[2 * i + 1]) << 8];
    bits += information_bits(counts, elements) + 8.0 * static_cast<double>(piece.size() % 2);
  }
}

bool looks_incompressible(std::span<const std::byte> plane) {
  constexpr std::size_t kSlices = 32, kSlice = 256;
  if (plane.size() < 4096) return false;
  // 8 KiB spread over the plane; the estimate's downward bias (~0.02 bit) keeps it conservative.
  Counts counts{};
  std::uint64_t total = 0;
  const std::size_t step = plane.size() / kSlices;
  for (std::size_t s = 0; s < kSlices; ++s) {
    std::span<const std::byte> slice = plane.subspan(s * step, std::min(kSlice, step));
    for (std::byte b : slice) ++counts[static_cast<std::uint8_t>(b)];
    total += slice.size();
  }
  return information_bits(counts, total) / static_cast<double>(total) >= 7.9;
}

}  // namespace wirezip::codecs
