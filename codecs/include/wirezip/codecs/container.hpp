#pragma once
// The file format of the wirezip command (build/bin/wirezip), little-endian:
//
//   offset  size  field
//   0       4     magic "WZC1"
//   4       1     version (1)
//   5       3     zero
//   8       8     chunk size c: every frame restores c bytes, the last one 1..c
//   16      2     codec spec length s (1..kMaxContainerSpec)
//   18      s     codec spec (printable ASCII), a codec that writes wirezip frames (not blosc)
//   then per chunk: u32 frame length L (1..c + the largest frame header), the frame (frame.hpp)
//   then the end: u32 0, u64 original bytes in all, u64 frame count
//
// The end record makes a file cut at a frame boundary as detectable as one cut anywhere else.
// Files are untrusted input: ContainerReader is the one parser, checking every field against the
// reader's limits with overflow-checked sizes before anything is allocated or decoded.
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/codecs/frame.hpp"

namespace wirezip::codecs {

inline constexpr std::uint8_t kContainerVersion = 1;
inline constexpr std::size_t kMaxContainerSpec = 256;

struct ContainerLimits {
  std::uint64_t max_chunk = std::uint64_t{1} << 30;  // the largest chunk (and so frame) a reader accepts
  // The most original bytes in all: a frame whose declared original size would pass it is refused
  // before the caller allocates or decodes anything for it (a decompression bomb's 75 bytes can
  // declare 1 GiB a frame).
  std::uint64_t max_original = UINT64_MAX;
  std::string_view max_original_name = "the output cap";  // how the refusal names it (a CLI flag)
};

struct ContainerHeader {
  CodecSpec codec_spec;
  std::uint64_t chunk_bytes = 0;
};

// One frame as read: its bytes (valid until the next call) and its checked header.
struct ContainerFrame {
  std::span<const std::byte> bytes;
  FrameHeader header;
};

class ContainerReader {
 public:
  // Reads and checks the header; throws wirezip::Error naming the field and its value.
  explicit ContainerReader(std::istream& in, ContainerLimits limits = {});
  const ContainerHeader& header() const { return header_; }
  // The next frame, its length and header checked (read_frame_header, original size c or, for the
  // last frame only, 1..c, and within max_original in all); nullopt after the end record, whose totals must match what was read.
  // Throws wirezip::Error on a truncated or corrupt file.
  std::optional<ContainerFrame> next();
  std::uint64_t frames_read() const { return frames_; }
  std::uint64_t original_bytes() const { return original_; }

 private:
  // Exactly n bytes into `out`, growing it only as bytes arrive; throws naming `what` when the file ends.
  void read_exact(std::vector<std::byte>& out, std::size_t n, std::string_view what);

  std::istream& in_;
  ContainerLimits limits_;
  ContainerHeader header_;
  std::vector<std::byte> frame_;
  std::uint64_t frames_ = 0, original_ = 0;
  bool short_frame_seen_ = false, ended_ = false;
};

class ContainerWriter {
 public:
  // Writes the header; throws wirezip::Error on a spec the format cannot hold or a failed write.
  ContainerWriter(std::ostream& out, const CodecSpec& codec_spec, std::uint64_t chunk_bytes);
  void write_frame(std::span<const std::byte> frame, std::uint64_t original_bytes);
  // Writes the end record and flushes.
  void finish();

 private:
  void put(std::span<const std::byte> bytes);

  std::ostream& out_;
  std::uint64_t frames_ = 0, original_ = 0;
};

}  // namespace wirezip::codecs
