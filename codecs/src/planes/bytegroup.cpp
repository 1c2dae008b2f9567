#include "wirezip/codecs/bytegroup.hpp"

#include <algorithm>

#include "planes/bytegroup_kernels.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace kernels {
namespace {

void split2_scalar(const std::byte* src, std::size_t elements, std::byte* p0, std::byte* p1) {
  for (std::size_t i = 0; i < elements; ++i) {
    p0[i] = src[2 * i];
    p1[i] = src[2 * i + 1];
  }
}

void merge2_scalar(const std::byte* p0, const std::byte* p1, std::size_t elements, std::byte* dst) {
  for (std::size_t i = 0; i < elements; ++i) {
    dst[2 * i] = p0[i];
    dst[2 * i + 1] = p1[i];
  }
}

void split4_scalar(const std::byte* src, std::size_t elements, std::byte* const* planes) {
  for (std::size_t i = 0; i < elements; ++i)
    for (std::size_t k = 0; k < 4; ++k) planes[k][i] = src[4 * i + k];
}

void merge4_scalar(const std::byte* const* planes, std::size_t elements, std::byte* dst) {
  for (std::size_t i = 0; i < elements; ++i)
    for (std::size_t k = 0; k < 4; ++k) dst[4 * i + k] = planes[k][i];
}

}  // namespace

PlaneKernels scalar_kernels() { return {split2_scalar, merge2_scalar, split4_scalar, merge4_scalar}; }

}  // namespace kernels

namespace {

kernels::PlaneKernels kernels_for(SimdPath path) {
  switch (path) {
    case SimdPath::scalar:
      return kernels::scalar_kernels();
#if defined(__x86_64__)
    case SimdPath::avx2:
      return kernels::avx2_kernels();
    case SimdPath::avx512:
      return kernels::avx512_kernels();
#endif
#if defined(__aarch64__)
    case SimdPath::neon:
      return kernels::neon_kernels();
#endif
    default:
      fail("SIMD path {} is not built for this architecture", simd_path_name(path));
  }
}

void check_width(std::size_t width, std::size_t planes) {
  if (width == 0 || width != planes) fail("byte grouping: width {} with {} planes", width, planes);
}

}  // namespace

std::string_view simd_path_name(SimdPath path) {
  static constexpr EnumNames<SimdPath, 4> names{"SIMD path",
                                                {{{SimdPath::scalar, "scalar"},
                                                  {SimdPath::avx2, "avx2"},
                                                  {SimdPath::avx512, "avx512"},
                                                  {SimdPath::neon, "neon"}}}};
  return names.name(path);
}

std::vector<SimdPath> available_simd_paths() {
  std::vector<SimdPath> paths{SimdPath::scalar};
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) paths.push_back(SimdPath::avx2);
  if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi")) paths.push_back(SimdPath::avx512);
#elif defined(__aarch64__)
  paths.push_back(SimdPath::neon);  // NEON (Advanced SIMD) is baseline on aarch64
#endif
  return paths;
}

SimdPath best_simd_path() {
  static const SimdPath best = available_simd_paths().back();
  return best;
}

void split_planes(std::span<const std::byte> src, std::size_t width, std::span<std::byte* const> planes,
                  SimdPath path) {
  check_width(width, planes.size());
  const std::size_t elements = src.size() / width;
  if (width == 1) {
    std::copy_n(src.data(), elements, planes[0]);
    return;
  }
  const kernels::PlaneKernels k = kernels_for(path);
  if (width == 2) return k.split2(src.data(), elements, planes[0], planes[1]);
  if (width == 4) return k.split4(src.data(), elements, planes.data());
  for (std::size_t i = 0; i < elements; ++i)
    for (std::size_t p = 0; p < width; ++p) planes[p][i] = src[i * width + p];
}

void merge_planes(std::span<const std::byte* const> planes, std::size_t width, std::span<std::byte> dst,
                  SimdPath path) {
  check_width(width, planes.size());
  const std::size_t elements = dst.size() / width;
  if (width == 1) {
    std::copy_n(planes[0], elements, dst.data());
    return;
  }
  const kernels::PlaneKernels k = kernels_for(path);
  if (width == 2) return k.merge2(planes[0], planes[1], elements, dst.data());
  if (width == 4) return k.merge4(planes.data(), elements, dst.data());
  for (std::size_t i = 0; i < elements; ++i)
    for (std::size_t p = 0; p < width; ++p) dst[i * width + p] = planes[p][i];
}

}  // namespace wirezip::codecs
