#pragma once
// Internal: the hot loops of the Huffman coder, one set per SIMD path, so tests can force each path
// and hold it to the portable one. The bulk loops are the same C++ (huff_lanes.hpp) compiled for
// each target; byte_range has its own NEON code on aarch64, window_entries its own AVX2 code.
//
//   scalar       portable C++ for the architecture's baseline (x86-64, armv8-a)
//   avx2/avx512  x86-64 with AVX2, BMI1 and BMI2: flag-free shifts (shlx/shrx) in the bit loops
//   neon         aarch64: NEON byte_range; the bit loops need nothing beyond armv8-a, whose
//                variable shifts are flag-free and whose loads may be unaligned
#include <cstddef>
#include <cstdint>

#include "coders/huff_lanes.hpp"
#include "wirezip/codecs/bytegroup.hpp"

namespace wirezip::codecs::huff {

struct HuffKernels {
  // `groups` rounds of four symbols on each of the kStreams lanes.
  void (*encode_bulk)(EncodeLane* lanes, std::size_t groups, const PairCodes& pairs);
  // All lanes while each has room for a whole round; the caller decodes what is left.
  void (*decode_bulk)(DecodeLane* lanes, const DecodeEntry* table);
  ByteRange (*byte_range)(const std::uint8_t* src, std::size_t n);
  // The decode table's entries from its first codes (huff_tables.hpp).
  void (*window_entries)(const FirstCode* first, DecodeEntry* table);
};

// The kernels of `path`; a path this CPU or this build cannot run is an error.
HuffKernels huff_kernels(SimdPath path);

HuffKernels scalar_huff_kernels();
#if defined(__x86_64__)
HuffKernels x86_64_v3_huff_kernels();
#endif
#if defined(__aarch64__)
HuffKernels neon_huff_kernels();
#endif

}  // namespace wirezip::codecs::huff
