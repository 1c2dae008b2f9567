#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "wirezip/codecs/bytegroup.hpp"

namespace wirezip::codecs {
namespace {

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

// Every SIMD path must agree with the scalar one, at lengths around every vector width.
TEST(ByteGroup, EveryPathMatchesScalarAndInvertsExactly) {
  const auto paths = available_simd_paths();
  ASSERT_EQ(paths.front(), SimdPath::scalar);
  for (std::size_t width : {1, 2, 3, 4, 8}) {
    for (std::size_t elements : {0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4099}) {
      const std::size_t n = elements * width + (width > 1 ? width - 1 : 0);  // plus a partial element
      const auto src = random_bytes(n, static_cast<unsigned>(n * 31 + width));
      std::vector<std::byte> expected(elements * width);
      std::vector<std::byte*> expected_planes(width);
      for (std::size_t k = 0; k < width; ++k) expected_planes[k] = expected.data() + k * elements;
      split_planes(src, width, expected_planes, SimdPath::scalar);
      for (std::size_t i = 0; i < elements; ++i)
        for (std::size_t k = 0; k < width; ++k) ASSERT_EQ(expected_planes[k][i], src[i * width + k]);

      for (SimdPath path : paths) {
        SCOPED_TRACE(testing::Message() << simd_path_name(path) << " width " << width << " elements " << elements);
        std::vector<std::byte> planes(elements * width + 1, std::byte{0xee});  // +1: a guard byte
        std::vector<std::byte*> plane_ptrs(width);
        for (std::size_t k = 0; k < width; ++k) plane_ptrs[k] = planes.data() + k * elements;
        split_planes(src, width, plane_ptrs, path);
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), planes.begin()));
        ASSERT_EQ(planes.back(), std::byte{0xee});

        std::vector<std::byte> back(n, std::byte{0x55});
        std::vector<const std::byte*> const_ptrs(plane_ptrs.begin(), plane_ptrs.end());
        merge_planes(const_ptrs, width, back, path);
        ASSERT_TRUE(std::equal(src.begin(), src.begin() + elements * width, back.begin()));
        for (std::size_t i = elements * width; i < n; ++i) ASSERT_EQ(back[i], std::byte{0x55});  // tail untouched
      }
    }
  }
}

// No path may assume aligned buffers: frames and pipeline slots put planes at any byte offset.
TEST(ByteGroup, EveryPathHandlesUnalignedBuffers) {
  constexpr std::size_t kElements = 1000;
  for (std::size_t width : {2, 4}) {
    const auto src = random_bytes(kElements * width + 8, static_cast<unsigned>(width));
    for (std::size_t offset = 1; offset < 8; offset += 2) {
      const std::span<const std::byte> input = std::span(src).subspan(offset, kElements * width);
      for (SimdPath path : available_simd_paths()) {
        SCOPED_TRACE(testing::Message() << simd_path_name(path) << " width " << width << " offset " << offset);
        std::vector<std::byte> planes(kElements * width + 2 * offset);
        std::vector<std::byte*> plane_ptrs(width);
        for (std::size_t k = 0; k < width; ++k) plane_ptrs[k] = planes.data() + offset + k * kElements;
        split_planes(input, width, plane_ptrs, path);
        for (std::size_t i = 0; i < kElements; ++i)
          for (std::size_t k = 0; k < width; ++k) ASSERT_EQ(plane_ptrs[k][i], input[i * width + k]);
        std::vector<std::byte> back(kElements * width + offset);
        std::vector<const std::byte*> const_ptrs(plane_ptrs.begin(), plane_ptrs.end());
        merge_planes(const_ptrs, width, std::span(back).subspan(offset), path);
        ASSERT_TRUE(std::equal(input.begin(), input.end(), back.begin() + static_cast<std::ptrdiff_t>(offset)));
      }
    }
  }
}

TEST(ByteGroup, NamesAndBestPath) {
  EXPECT_EQ(simd_path_name(SimdPath::scalar), "scalar");
  EXPECT_EQ(best_simd_path(), available_simd_paths().back());
}

}  // namespace
}  // namespace wirezip::codecs
