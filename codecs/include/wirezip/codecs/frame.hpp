#pragma once
// The self-describing frame every wirezip codec writes (little-endian):
//
//   offset  size  field
//   0       4     magic "WZF1"
//   4       1     version (1)
//   5       1     coder id (what coded planes were coded with; see CoderId)
//   6       1     element width w (1 = no byte grouping)
//   7       1     flags (0)
//   8       8     original length n
//   16      8     XXH3-64 of the original
//   24      5*w   per plane: mode (0 raw, 1 coded, 2 constant), stored size (u32)
//   then the w planes back to back, then the n % w tail bytes raw.
//
// Plane k holds byte k of each of the n / w whole elements. A constant plane (every byte the same,
// e.g. the planes of an all-zero tensor) stores that one byte. Coded planes of the deflate coder are
// raw DEFLATE streams (RFC 1951) and those of lz4 plain LZ4 blocks: any inflate or LZ4_decompress_safe
// decodes them alone, given the plane size n / w.
//
// New coder ids and plane modes are new values of existing fields, not a new layout: the version
// stays 1, and a reader that does not know a value refuses the frame naming it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace wirezip::codecs {

enum class CoderId : std::uint8_t { raw = 0, lz4 = 1, zstd = 2, rans = 3, huff = 4, igzip = 5, deflate = 6 };
enum class PlaneMode : std::uint8_t { raw = 0, coded = 1, constant = 2 };

inline constexpr std::uint8_t kFrameVersion = 1;

// "raw", "lz4", ..., "deflate"; and "raw", "coded", "constant".
std::string_view coder_name(CoderId id);
std::string_view plane_mode_name(PlaneMode mode);

inline constexpr std::size_t kMaxElementWidth = 16;

struct PlaneEntry {
  PlaneMode mode = PlaneMode::raw;
  std::uint32_t stored_size = 0;
};

struct FrameHeader {
  CoderId coder = CoderId::raw;
  std::uint8_t element_width = 1;
  std::uint64_t original_size = 0;
  std::uint64_t checksum = 0;
  std::array<PlaneEntry, kMaxElementWidth> planes{};

  std::size_t plane_size() const { return original_size / element_width; }
  std::size_t tail_size() const { return original_size % element_width; }
  std::size_t encoded_size() const { return header_size(element_width); }
  static constexpr std::size_t header_size(std::size_t width) { return 24 + 5 * width; }
};

// Writes the header into dst (at least header_size(width) bytes).
void write_frame_header(const FrameHeader& header, std::span<std::byte> dst);
// Parses and validates a header against the whole frame: magic, version, width, flags, plane modes,
// and that planes + tail exactly fill the frame. Throws wirezip::Error naming what is wrong.
FrameHeader read_frame_header(std::span<const std::byte> frame);

// XXH3-64 of the bytes: the frame checksum.
std::uint64_t frame_checksum(std::span<const std::byte> bytes);

}  // namespace wirezip::codecs
