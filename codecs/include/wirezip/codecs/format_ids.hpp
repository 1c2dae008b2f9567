#pragma once
// The ids a wirezip frame stores (frame.hpp has the layout): which coder coded the planes, how each
// plane is stored, how elements became planes. Coders and plane transforms need these values, not
// the frame; a new coder is a new CoderId value, which its row in codecs/src/codec_table.cpp names.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace wirezip::codecs {

enum class CoderId : std::uint8_t {
  raw = 0,
  lz4 = 1,
  zstd = 2,
  rans = 3,
  huff = 4,
  igzip = 5,
  deflate = 6,
  ans = 7,
  huff12 = 8,
  huff10 = 9
};
enum class PlaneMode : std::uint8_t { raw = 0, coded = 1, constant = 2 };
// How elements become planes. Byte 7 was a flags byte that had to be 0, so frames written before
// the exponent split still read as byte planes, and an older reader refuses the new layouts.
enum class PlaneLayout : std::uint8_t { bytes = 0, exponent_bf16 = 1, exponent_fp16 = 2, exponent_fp32 = 3 };

// "raw" (no coder) or the name of the codec table's row with that id; "unknown" for any other id.
// And "raw", "coded", "constant".
std::string_view coder_name(CoderId id);
std::string_view plane_mode_name(PlaneMode mode);

// The widest element a frame groups by: its header has room for this many planes.
inline constexpr std::size_t kMaxElementWidth = 16;

}  // namespace wirezip::codecs
