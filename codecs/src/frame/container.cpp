#include "wirezip/codecs/container.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::codecs {
namespace {

constexpr std::array<char, 4> kMagic = {'W', 'Z', 'C', '1'};
constexpr std::size_t kFixedHeader = 18;    // through the spec length
constexpr std::size_t kEndRecord = 16;      // after the zero length: total bytes, frame count
constexpr std::size_t kReadStep = 1 << 20;  // a claimed length is trusted only as far as bytes arrive

// The header of the file's frame `index`; an error in it names the frame.
FrameHeader frame_header_of(std::span<const std::byte> frame, std::uint64_t index) {
  try {
    return read_frame_header(frame);
  } catch (const Error& e) {
    fail("frame {}: {}", index, e.what());
  }
}

}  // namespace

ContainerReader::ContainerReader(std::istream& in, ContainerLimits limits) : in_(in), limits_(limits) {
  std::vector<std::byte> fixed;
  read_exact(fixed, kFixedHeader, "the container header");
  if (std::memcmp(fixed.data(), kMagic.data(), kMagic.size()) != 0) fail("not a wirezip file (bad magic)");
  if (auto v = load_le<std::uint8_t>(fixed, 4); v != kContainerVersion)
    fail("container version {} (this build reads {})", v, kContainerVersion);
  for (std::size_t i = 5; i < 8; ++i)
    if (fixed[i] != std::byte{0}) fail("container header byte {} is {}, expected 0", i, static_cast<int>(fixed[i]));
  header_.chunk_bytes = load_le<std::uint64_t>(fixed, 8);
  if (header_.chunk_bytes == 0 || header_.chunk_bytes > limits_.max_chunk)
    fail("container chunk size {} is outside [1, {}]", header_.chunk_bytes, limits_.max_chunk);
  const auto spec_size = load_le<std::uint16_t>(fixed, 16);
  if (spec_size == 0 || spec_size > kMaxContainerSpec)
    fail("container codec spec length {} is outside [1, {}]", spec_size, kMaxContainerSpec);
  std::vector<std::byte> spec;
  read_exact(spec, spec_size, "the codec spec");
  const std::string_view text(reinterpret_cast<const char*>(spec.data()), spec.size());
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    fail("container codec spec has bytes that are not printable");
  header_.codec_spec = parse_codec_spec(text);
  if (!header_.codec_spec.writes_frames()) fail("container codec '{}' does not write wirezip frames", text);
}

void ContainerReader::read_exact(std::vector<std::byte>& out, std::size_t n, std::string_view what) {
  out.clear();
  while (out.size() < n) {
    const std::size_t have = out.size(), step = std::min(n - have, kReadStep);
    out.resize(have + step);
    in_.read(reinterpret_cast<char*>(out.data() + have), static_cast<std::streamsize>(step));
    if (static_cast<std::size_t>(in_.gcount()) != step)
      fail("truncated file: {} ends after {} of its {} bytes", what, have + static_cast<std::size_t>(in_.gcount()), n);
  }
}

std::optional<ContainerFrame> ContainerReader::next() {
  if (ended_) return std::nullopt;
  std::vector<std::byte> word;
  read_exact(word, 4, fmt::format("the length of frame {}", frames_));
  const auto length = load_le<std::uint32_t>(word, 0);
  if (length == 0) {
    std::vector<std::byte> end;
    read_exact(end, kEndRecord, "the end record");
    const auto total = load_le<std::uint64_t>(end, 0), count = load_le<std::uint64_t>(end, 8);
    if (total != original_ || count != frames_)
      fail("corrupt file: the end record counts {} bytes in {} frames, the file holds {} in {}", total, count,
           original_, frames_);
    if (in_.peek() != std::istream::traits_type::eof()) fail("corrupt file: bytes follow the end record");
    ended_ = true;
    return std::nullopt;
  }
  const std::uint64_t max_length = checked_add(FrameHeader::header_size(kMaxElementWidth), header_.chunk_bytes,
                                               "largest frame");
  if (length > max_length) fail("frame {}: length {} is over the {} a {}-byte chunk can take", frames_, length,
                                max_length, header_.chunk_bytes);
  if (short_frame_seen_)
    fail("corrupt file: frame {} follows a frame shorter than the chunk size (only the last may be)", frames_);
  read_exact(frame_, length, fmt::format("frame {}", frames_));
  ContainerFrame frame{frame_, frame_header_of(frame_, frames_)};
  const std::uint64_t size = frame.header.original_size;
  if (size == 0 || size > header_.chunk_bytes)
    fail("frame {}: original size {} is outside [1, {}] (the chunk size)", frames_, size, header_.chunk_bytes);
  if (size > limits_.max_original - original_)
    fail("frame {}: original size {} takes the output past {} of {} bytes ({} before this frame)", frames_, size,
         limits_.max_original_name, limits_.max_original, original_);
  short_frame_seen_ = size < header_.chunk_bytes;
  original_ = checked_add(original_, size, "original bytes");
  ++frames_;
  return frame;
}

ContainerWriter::ContainerWriter(std::ostream& out, const CodecSpec& spec, std::uint64_t chunk_bytes) : out_(out) {
  const std::string& codec_spec = spec.text();
  if (codec_spec.empty() || codec_spec.size() > kMaxContainerSpec)
    fail("codec spec of {} bytes does not fit the file format (1..{})", codec_spec.size(), kMaxContainerSpec);
  if (!spec.writes_frames()) fail("codec '{}' does not write wirezip frames; choose a wirezip codec", codec_spec);
  if (chunk_bytes == 0) fail("chunk size 0");
  std::vector<std::byte> fixed(kFixedHeader);
  std::memcpy(fixed.data(), kMagic.data(), kMagic.size());
  store_le<std::uint8_t>(fixed, 4, kContainerVersion);
  store_le<std::uint64_t>(fixed, 8, chunk_bytes);
  store_le<std::uint16_t>(fixed, 16, static_cast<std::uint16_t>(codec_spec.size()));
  put(fixed);
  put(std::as_bytes(std::span(codec_spec)));
}

void ContainerWriter::write_frame(std::span<const std::byte> frame, std::uint64_t original_bytes) {
  if (frame.empty() || frame.size() > UINT32_MAX) fail("frame of {} bytes does not fit the file format", frame.size());
  std::vector<std::byte> length(4);
  store_le<std::uint32_t>(length, 0, static_cast<std::uint32_t>(frame.size()));
  put(length);
  put(frame);
  original_ = checked_add(original_, original_bytes, "original bytes");
  ++frames_;
}

void ContainerWriter::finish() {
  std::vector<std::byte> end(4 + kEndRecord);
  store_le<std::uint64_t>(end, 4, original_);
  store_le<std::uint64_t>(end, 12, frames_);
  put(end);
  out_.flush();
  if (!out_) fail("writing the output failed");
}

void ContainerWriter::put(std::span<const std::byte> bytes) {
  out_.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out_) fail("writing the output failed");
}

}  // namespace wirezip::codecs
