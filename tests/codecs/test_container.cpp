// The wirezip file format: written by ContainerWriter, read back only by ContainerReader, which
// must refuse every truncated or malformed file with an Error before allocating what it claims.
#include <gtest/gtest.h>

#include <sstream>

#include "codec_test_data.hpp"
#include "error_of.hpp"
#include "wirezip/codecs/container.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::codecs {
namespace {

// A container of `input` cut into `chunk`-byte frames of `spec`.
std::string make_file(const std::string& spec, std::size_t chunk, std::span<const std::byte> input) {
  std::ostringstream out;
  auto codec = make_codec(spec);
  ContainerWriter writer(out, parse_codec_spec(spec), chunk);
  std::vector<std::byte> frame(codec->max_compressed_size(chunk));
  for (std::size_t at = 0; at < input.size(); at += chunk) {
    const auto piece = input.subspan(at, std::min(chunk, input.size() - at));
    writer.write_frame(std::span(frame).first(codec->compress(piece, frame)), piece.size());
  }
  writer.finish();
  return out.str();
}

// Every frame of the file, decompressed and joined; throws what the reader or codec throws.
std::vector<std::byte> read_all(const std::string& file, ContainerLimits limits = {}) {
  std::istringstream in(file);
  ContainerReader reader(in, limits);
  auto codec = reader.header().codec_spec.make();
  std::vector<std::byte> out;
  while (auto frame = reader.next()) {
    std::vector<std::byte> piece(frame->header.original_size);
    codec->decompress(frame->bytes, piece);
    out.insert(out.end(), piece.begin(), piece.end());
  }
  EXPECT_EQ(reader.original_bytes(), out.size());
  return out;
}

std::string with_byte(std::string file, std::size_t at, char value) {
  file[at] = value;
  return file;
}

TEST(Container, RoundTripsEveryShape) {
  const auto all = testing::codec_inputs(300'002)[0].bytes;
  const std::span<const std::byte> input = std::span(all).first(300'001);  // an odd size: a tail byte
  for (const char* spec : {"bytegroup+deflate", "bytegroup+huff", "lz4", "memcpy"}) {
    for (std::size_t chunk : {std::size_t{1} << 16, std::size_t{300'001}, std::size_t{1} << 20, std::size_t{7}}) {
      SCOPED_TRACE(std::string(spec) + " chunk " + std::to_string(chunk));
      const std::span<const std::byte> part = chunk == 7 ? input.first(100) : input;
      const std::string file = make_file(spec, chunk, part);
      EXPECT_TRUE(read_all(file) == std::vector<std::byte>(part.begin(), part.end()));
    }
  }
  const std::string empty = make_file("bytegroup+deflate", 1024, {});
  EXPECT_TRUE(read_all(empty).empty());
}

TEST(Container, EveryTruncationIsAnError) {
  const auto input = testing::codec_inputs(20'000)[1].bytes;
  const std::string file = make_file("bytegroup+deflate", 4096, input);
  for (std::size_t len = 0; len < file.size(); ++len) {
    SCOPED_TRACE(len);
    EXPECT_THROW(read_all(file.substr(0, len)), Error);
  }
  EXPECT_THROW(read_all(file + "x"), Error);  // bytes after the end record
}

TEST(Container, MalformedHeadersAndRecordsAreRefused) {
  const auto input = testing::codec_inputs(10'000)[0].bytes;
  const std::string file = make_file("bytegroup+deflate", 4096, input);
  const std::size_t spec_size = std::string("bytegroup+deflate").size();
  EXPECT_THROW(read_all(with_byte(file, 0, 'X')), Error);   // magic
  EXPECT_THROW(read_all(with_byte(file, 4, 2)), Error);     // version
  EXPECT_THROW(read_all(with_byte(file, 6, 1)), Error);     // reserved
  EXPECT_THROW(read_all(with_byte(file, 18, '\n')), Error);  // spec not printable
  EXPECT_THROW(read_all(with_byte(file, 17, 9)), Error);    // spec length 2321 > 256
  EXPECT_THROW(read_all(with_byte(file, 16, 0)), Error);    // spec length 0: the spec runs into the frames

  std::string chunk_zero = file;
  for (std::size_t i = 8; i < 16; ++i) chunk_zero[i] = 0;
  EXPECT_THROW(read_all(chunk_zero), Error);
  // A chunk over the reader's limit is refused before anything is allocated for it.
  EXPECT_THROW(read_all(file, ContainerLimits{.max_chunk = 1024}), Error);

  // A frame length beyond what the chunk size allows.
  std::string long_frame = file;
  const std::size_t first_length = 18 + spec_size;
  long_frame[first_length + 3] = 0x7f;
  EXPECT_THROW(read_all(long_frame), Error);

  // A frame whose own header is corrupt: the error names the frame.
  const std::size_t first_frame = first_length + 4;
  const std::size_t first_size = load_le<std::uint32_t>(std::as_bytes(std::span(file)), first_length);
  const std::size_t second_frame = first_frame + first_size + 4;
  EXPECT_EQ(testing::error_of([&] {
              read_all(with_byte(file, second_frame + 6, 0));
            }).rfind("frame 1: corrupt frame: element width 0", 0),
            0u);
  EXPECT_EQ(testing::error_of([&] { read_all(with_byte(file, first_frame, 'X')); }).rfind("frame 0: ", 0), 0u);

  // The end record must count what the file holds.
  std::string wrong_total = file;
  wrong_total[wrong_total.size() - 16] ^= 1;
  EXPECT_THROW(read_all(wrong_total), Error);
  std::string wrong_count = file;
  wrong_count[wrong_count.size() - 8] ^= 1;
  EXPECT_THROW(read_all(wrong_count), Error);

  // A codec that writes no wirezip frames, and a spec that names no codec.
  std::string blosc = file;
  blosc.replace(18, spec_size, "blosc:shuffle+lz4");  // the same length as the spec it replaces
  EXPECT_THROW(read_all(blosc), Error);
  EXPECT_THROW(read_all(with_byte(file, 18, 'X')), Error);
}

TEST(Container, OnlyTheLastFrameMayBeShort) {
  const auto input = testing::codec_inputs(10'000)[0].bytes;
  std::ostringstream out;
  auto codec = make_codec("lz4");
  ContainerWriter writer(out, parse_codec_spec("lz4"), 4096);
  std::vector<std::byte> frame(codec->max_compressed_size(4096));
  for (std::size_t size : {std::size_t{1000}, std::size_t{4096}}) {  // short first, then full
    writer.write_frame(std::span(frame).first(codec->compress(std::span(input).first(size), frame)), size);
  }
  writer.finish();
  EXPECT_THROW(read_all(out.str()), Error);
}

// A decompression bomb declares more original bytes than its size suggests; the reader refuses
// the first frame that would pass the cap, before the caller allocates or decodes anything for it.
TEST(Container, OriginalBytesAreCappedBeforeTheFrameIsReturned) {
  const std::vector<std::byte> zeros(5 * 4096);
  const std::string file = make_file("bytegroup+deflate", 4096, zeros);
  EXPECT_EQ(read_all(file, {.max_original = zeros.size()}).size(), zeros.size());  // the cap itself is allowed
  std::istringstream in(file);
  ContainerReader reader(in, {.max_original = 3 * 4096 - 1, .max_original_name = "--cap"});
  ASSERT_TRUE(reader.next());
  ASSERT_TRUE(reader.next());
  EXPECT_EQ(wirezip::testing::error_of([&] { reader.next(); }),
            "frame 2: original size 4096 takes the output past --cap of 12287 bytes (8192 before this frame)");
}

TEST(Container, WriterRefusesWhatTheFormatCannotHold) {
  std::ostringstream out;
  EXPECT_THROW(ContainerWriter(out, parse_codec_spec("blosc:shuffle+lz4"), 1024), Error);
  EXPECT_THROW(ContainerWriter(out, parse_codec_spec("bytegroup+deflate"), 0), Error);
  EXPECT_THROW(ContainerWriter(out, CodecSpec(), 1024), Error);
}

}  // namespace
}  // namespace wirezip::codecs
