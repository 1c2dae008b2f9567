#pragma once
// The self-describing frame every wirezip codec writes (little-endian):
//
//   offset  size  field
//   0       4     magic "WZF1"
//   4       1     version (4)
//   5       1     coder id (what coded planes were coded with; see CoderId, format_ids.hpp)
//   6       1     element width w (1 = no byte grouping)
//   7       1     plane layout (see PlaneLayout: 0 byte planes, 1-3 the exponent split)
//   8       8     original length n
//   16      8     XXH3-64 of the original
//   24      5*w   per plane: mode (0 raw, 1 coded, 2 constant), stored size (u32)
//   then the w planes back to back, the raw ones first (in plane order), then the others (coded
//   and constant, in plane order), then the n % w tail bytes raw.
// Raw planes first lets a compressor split a plane it stores raw straight into its place in the
// frame. The version changes with the bytes any coder writes (version 4: huff12 blocks in eight
// streams); frames of versions 1 to 3 are refused with a message that names the version.
//
// With layout 0, plane k holds byte k of each of the n / w whole elements; with layouts 1-3, the
// planes of the exponent split (exponent_split.hpp) of bf16, fp16 or fp32 elements. A constant
// plane (every byte the same, e.g. the planes of an all-zero tensor) stores that one byte. Coded
// planes of the deflate coder are raw DEFLATE streams (RFC 1951) and those of lz4 plain LZ4 blocks:
// any inflate or LZ4_decompress_safe decodes them alone, given the plane size n / w.
//
// New coder ids and plane modes are new values of existing fields, not a new layout, and a reader
// that does not know a value refuses the frame naming it; the raw-first order was a new layout.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "wirezip/codecs/format_ids.hpp"

namespace wirezip::codecs {

inline constexpr std::uint8_t kFrameVersion = 4;

struct PlaneEntry {
  PlaneMode mode = PlaneMode::raw;
  std::uint32_t stored_size = 0;
};

struct FrameHeader {
  CoderId coder = CoderId::raw;
  std::uint8_t element_width = 1;
  PlaneLayout layout = PlaneLayout::bytes;
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
// Parses and validates a header against the whole frame: magic, version, width, layout, plane modes,
// and that planes + tail exactly fill the frame. Throws wirezip::Error naming what is wrong.
FrameHeader read_frame_header(std::span<const std::byte> frame);

// Where each plane's stored bytes start in the frame (raw planes first, then the others).
std::array<std::size_t, kMaxElementWidth> plane_offsets(const FrameHeader& header);

// XXH3-64 of the bytes: the frame checksum.
std::uint64_t frame_checksum(std::span<const std::byte> bytes);

// The same checksum over bytes given in pieces, in order: lets a codec hash each block of a chunk
// while the block is in cache instead of reading the chunk again. Made once, reset per frame.
class ChecksumStream {
 public:
  ChecksumStream();
  ~ChecksumStream();
  ChecksumStream(const ChecksumStream&) = delete;
  ChecksumStream& operator=(const ChecksumStream&) = delete;

  void reset();
  void update(std::span<const std::byte> bytes);
  std::uint64_t digest();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace wirezip::codecs
