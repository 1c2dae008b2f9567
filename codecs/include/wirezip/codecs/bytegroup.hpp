#pragma once
// Byte grouping as NetZIP defines it: for element width w, plane k holds byte k of every element.
// On bf16 the high plane (sign + 7 exponent bits) is very compressible and the low plane (1 exponent
// bit + 7 mantissa bits) is close to random, so separating them lets a coder see the structure.
//
// Vectorised paths are chosen at run time (AVX2 / AVX-512 VBMI on x86-64, NEON on aarch64); the
// scalar path is always there and is the reference the tests hold the others to. The Huffman
// coder's hot loops follow the same path (codecs/src/coders/huff_kernels.hpp).
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace wirezip::codecs {

enum class SimdPath { scalar, avx2, avx512, neon };

std::string_view simd_path_name(SimdPath path);
// Every path this CPU can run, scalar first, fastest last.
std::vector<SimdPath> available_simd_paths();
SimdPath best_simd_path();

// Splits the whole elements of src (src.size() / width of them) into width planes:
// planes[k][i] = src[i * width + k]. Each plane has room for src.size() / width bytes.
// Trailing bytes that do not make a whole element are left to the caller.
void split_planes(std::span<const std::byte> src, std::size_t width, std::span<std::byte* const> planes,
                  SimdPath path = best_simd_path());
// The exact inverse: fills the first (dst.size() / width) * width bytes of dst.
void merge_planes(std::span<const std::byte* const> planes, std::size_t width, std::span<std::byte> dst,
                  SimdPath path = best_simd_path());

}  // namespace wirezip::codecs
