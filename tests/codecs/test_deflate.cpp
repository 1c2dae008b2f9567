// Frames a hardware engine can decode: bytegroup+deflate's planes are standard raw DEFLATE streams
// and bytegroup+lz4's plain LZ4 blocks. zlib (called directly, not through wirezip) is the
// conformance oracle; every decoder backend must restore every frame byte-exact.
#include <gtest/gtest.h>
#include <lz4.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "codec_test_data.hpp"
#include "wirezip/codecs/decoders.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

// Every DEFLATE backend this build has: isal, libdeflate, zlib, and doca where the DOCA SDK was found
// (on a BlueField these tests then hold the engine to the same standard).
const std::vector<std::string> kInflaters = [] {
  std::vector<std::string> names;
  for (const DecoderInfo& info : list_decoders())
    if (info.format == StreamFormat::deflate && info.built) names.push_back(info.name);
  return names;
}();
const std::vector<std::string> kDeflateSpecs = {"bytegroup+deflate", "bytegroup:width=4+deflate", "deflate",
                                                "bytegroup:width=3+deflate", "bytegroup+igzip:level=1"};

std::vector<std::byte> compress(Codec& codec, std::span<const std::byte> input) {
  std::vector<std::byte> frame(codec.max_compressed_size(input.size()));
  frame.resize(codec.compress(input, frame));
  return frame;
}

// Plane k of the input as byte grouping makes it: byte k of every whole element.
std::vector<std::byte> plane_of(std::span<const std::byte> input, std::size_t width, std::size_t k) {
  std::vector<std::byte> plane;
  for (std::size_t i = 0; i + width <= input.size(); i += width) plane.push_back(input[i + k]);
  return plane;
}

// The stored bytes of each plane of a frame.
std::vector<std::span<const std::byte>> stored_planes(std::span<const std::byte> frame) {
  const FrameHeader header = read_frame_header(frame);
  std::vector<std::span<const std::byte>> planes;
  const auto offsets = plane_offsets(header);  // raw planes first (frame version 2)
  for (std::size_t k = 0; k < header.element_width; ++k)
    planes.push_back(frame.subspan(offsets[k], header.planes[k].stored_size));
  return planes;
}

// zlib's raw inflate of one whole stream; fails the test unless the stream ends exactly at its end.
std::vector<std::byte> zlib_inflate(std::span<const std::byte> stream, std::size_t expected) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, -15), Z_OK);
  std::vector<std::byte> out(expected + 1);
  z.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(stream.data()));
  z.avail_in = static_cast<uInt>(stream.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the end of the stream";
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

// Inputs whose planes stress the code: every kind, plus a geometric distribution whose rare symbols
// get the longest codes (where end-of-block is split off) and sizes around the four lanes.
std::vector<testing::Input> deflate_inputs() {
  auto inputs = testing::codec_inputs(256 << 10);
  std::mt19937 rng(5);
  std::geometric_distribution<int> geometric(0.35);
  std::vector<std::byte> skewed(200'003);
  for (auto& b : skewed) b = static_cast<std::byte>(std::min(geometric(rng), 255));
  inputs.push_back({"geometric", std::move(skewed)});
  const auto weights = inputs[0].bytes;
  for (std::size_t n : {1, 2, 3, 5, 8, 9, 17, 31, 64, 4097, 65'539})
    inputs.push_back({"weights " + std::to_string(n), {weights.begin(), weights.begin() + n}});
  return inputs;
}

TEST(Deflate, EveryDecoderRestoresEveryFrameAndZlibDecodesEveryPlane) {
  const auto inputs = deflate_inputs();
  for (const std::string& spec : kDeflateSpecs) {
    auto encoder = make_codec(spec);
    for (const auto& input : inputs) {
      SCOPED_TRACE(spec + " on " + input.name);
      const auto frame = compress(*encoder, input.bytes);
      const FrameHeader header = read_frame_header(frame);
      const auto planes = stored_planes(frame);
      for (std::size_t k = 0; k < header.element_width; ++k) {
        if (header.planes[k].mode != PlaneMode::coded) continue;
        const auto expected = plane_of(input.bytes, header.element_width, k);
        const auto inflated = zlib_inflate(planes[k], expected.size());
        ASSERT_TRUE(inflated == expected) << "plane " << k;
      }
      for (const std::string& decoder : kInflaters) {
        SCOPED_TRACE("decoder=" + decoder);
        auto codec = parse_codec_spec(spec).with_decoder(decoder).make();
        std::vector<std::byte> out(input.bytes.size() + 16, std::byte{0x5a});
        ASSERT_EQ(codec->decompress(frame, std::span(out).first(input.bytes.size())), input.bytes.size());
        ASSERT_TRUE(std::equal(input.bytes.begin(), input.bytes.end(), out.begin()));
        for (std::size_t i = input.bytes.size(); i < out.size(); ++i) ASSERT_EQ(out[i], std::byte{0x5a});
      }
    }
  }
}

// Little-endian bf16: plane 1 holds the high bytes (sign and exponent), the one worth coding.
constexpr std::size_t kHighPlane = 1;

TEST(Deflate, TheHighPlaneOfWeightsIsCodedAndTheRatioMatchesHuff) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=4MiB:seed=3").bytes;
  double sizes[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    auto codec = make_codec(i == 0 ? "bytegroup+deflate" : "bytegroup+huff");
    for (std::size_t at = 0; at < weights.size(); at += 1 << 20) {
      const auto frame = compress(*codec, std::span(weights).subspan(at, 1 << 20));
      EXPECT_EQ(read_frame_header(frame).planes[kHighPlane].mode, PlaneMode::coded);
      sizes[i] += static_cast<double>(frame.size());
    }
  }
  // The same code lengths, a smaller header: at most 1% larger than huff's frames (the goal).
  EXPECT_LE(sizes[0], sizes[1] * 1.01);
  EXPECT_LT(sizes[0], static_cast<double>(weights.size()) / 1.3);
}

TEST(Deflate, EveryDecoderRefusesTruncatedCorruptOrMisSizedStreams) {
  const auto input = testing::codec_inputs(64 << 10)[0].bytes;
  const auto frame = compress(*make_codec("bytegroup+deflate"), input);
  const auto stream = stored_planes(frame)[kHighPlane];
  const std::size_t n = input.size() / 2;
  ASSERT_EQ(read_frame_header(frame).planes[kHighPlane].mode, PlaneMode::coded);
  for (const std::string& name : kInflaters) {
    SCOPED_TRACE(name);
    auto decoder = make_decoder(StreamFormat::deflate, name);
    std::vector<std::byte> out(n + 8, std::byte{0x77});
    decoder->decode(stream, std::span(out).first(n));  // the whole stream is fine
    auto expect_error = [&](std::span<const std::byte> src, std::size_t size, const char* what) {
      SCOPED_TRACE(what);
      std::fill(out.begin(), out.end(), std::byte{0x77});
      try {
        decoder->decode(src, std::span(out).first(size));
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();  // names the backend
      }
      for (std::size_t i = size; i < out.size(); ++i) ASSERT_EQ(out[i], std::byte{0x77}) << "wrote past the plane";
    };
    for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{40}, stream.size() / 2, stream.size() - 1})
      expect_error(stream.first(len), n, "truncated");
    std::vector<std::byte> longer(stream.begin(), stream.end());
    longer.push_back(std::byte{0});
    expect_error(longer, n, "a byte after the end");
    expect_error(stream, n - 1, "plane one byte smaller");
    expect_error(stream, n + 1, "plane one byte larger");
    const auto noise = testing::random_bytes(4096, 3);
    expect_error(noise, n, "random bytes");
    std::vector<std::byte> stored_type = {std::byte{0x07}};  // BTYPE 3: reserved
    expect_error(stored_type, n, "reserved block type");
  }
}

TEST(Deflate, CorruptFramesAreRejectedByEveryDecoder) {
  const auto input = testing::codec_inputs(2048)[1].bytes;  // gradients: both planes coded
  const auto frame = compress(*make_codec("bytegroup+deflate"), input);
  for (const std::string& name : kInflaters) {
    auto codec = make_codec("bytegroup+deflate:decoder=" + name);
    std::vector<std::byte> out(input.size() + 32, std::byte{0x3c});
    for (std::size_t i = 0; i < frame.size(); ++i) {
      for (std::uint8_t flip : {0x01, 0x10, 0xff}) {
        auto corrupt = frame;
        corrupt[i] ^= std::byte{flip};
        try {
          codec->decompress(corrupt, std::span(out).first(input.size()));
          ASSERT_TRUE(std::equal(input.begin(), input.end(), out.begin())) << name << " byte " << i;
        } catch (const Error&) {
        }
        for (std::size_t j = input.size(); j < out.size(); ++j) ASSERT_EQ(out[j], std::byte{0x3c});
      }
    }
  }
}

TEST(Lz4Planes, AreBlocksThatLz4DecompressSafeDecodesAlone) {
  for (const auto& input : testing::codec_inputs(256 << 10)) {
    SCOPED_TRACE(input.name);
    const auto frame = compress(*make_codec("bytegroup+lz4"), input.bytes);
    const FrameHeader header = read_frame_header(frame);
    const auto planes = stored_planes(frame);
    for (std::size_t k = 0; k < 2; ++k) {
      const auto expected = plane_of(input.bytes, 2, k);
      if (header.planes[k].mode != PlaneMode::coded) continue;
      std::vector<char> out(expected.size());
      const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(planes[k].data()), out.data(),
                                        static_cast<int>(planes[k].size()), static_cast<int>(out.size()));
      ASSERT_EQ(n, static_cast<int>(expected.size()));
      ASSERT_EQ(std::memcmp(out.data(), expected.data(), expected.size()), 0);
    }
    for (const DecoderInfo& info : list_decoders()) {  // lz4, and doca where built
      if (info.format != StreamFormat::lz4 || !info.built) continue;
      std::vector<std::byte> out(input.bytes.size());
      make_codec("bytegroup+lz4:decoder=" + info.name)->decompress(frame, out);
      EXPECT_TRUE(out == input.bytes) << info.name;
    }
  }
}

TEST(ConstantPlanes, CostOneBytePerPlaneWithEveryCoder) {
  std::vector<std::byte> zeros(1 << 20), ones(1 << 20);
  for (std::size_t i = 0; i < ones.size(); i += 2) ones[i] = std::byte{0x80}, ones[i + 1] = std::byte{0x3f};  // bf16 1.0
  for (const char* spec : {"bytegroup+huff", "bytegroup+deflate", "bytegroup+lz4", "bytegroup+rans", "huff"}) {
    auto codec = make_codec(spec);
    for (const auto* input : {&zeros, &ones}) {
      if (codec->element_width() == 1 && input == &ones) continue;  // ungrouped, 1.0 is two alternating bytes
      const auto frame = compress(*codec, *input);
      const FrameHeader header = read_frame_header(frame);
      EXPECT_EQ(frame.size(), header.encoded_size() + header.element_width) << spec;
      for (std::size_t k = 0; k < header.element_width; ++k) EXPECT_EQ(header.planes[k].mode, PlaneMode::constant);
      std::vector<std::byte> out(input->size());
      codec->decompress(frame, out);
      EXPECT_TRUE(out == *input) << spec;
    }
  }
  // The byte grouping alone and memcpy keep every plane raw: they are the cost of copying.
  EXPECT_EQ(read_frame_header(compress(*make_codec("bytegroup"), zeros)).planes[0].mode, PlaneMode::raw);
}

TEST(DecoderSeam, SpecOptionsAndOverrides) {
  const auto decoded_by = [](const char* spec, const char* decoder) {
    return parse_codec_spec(spec).with_decoder(decoder).text();
  };
  EXPECT_EQ(decoded_by("bytegroup+deflate", "zlib"), "bytegroup+deflate:decoder=zlib");
  EXPECT_EQ(decoded_by("bytegroup:width=4+deflate:decoder=isal", "libdeflate"),
            "bytegroup:width=4+deflate:decoder=libdeflate");
  EXPECT_EQ(decoded_by("lz4:accel=4", "lz4"), "lz4:accel=4:decoder=lz4");
  EXPECT_EQ(decoded_by("bytegroup+igzip:level=1", "zlib"), "bytegroup+igzip:level=1:decoder=zlib");
  for (const char* spec : {"bytegroup+huff", "memcpy", "bytegroup", "zstd:level=1", "blosc:bitshuffle+lz4"})
    EXPECT_THROW(decoded_by(spec, "zlib"), Error) << spec;
  EXPECT_THROW(decoded_by("bytegroup+lz4", "zlib"), Error);  // zlib decodes no LZ4
  EXPECT_THROW(make_codec("bytegroup+deflate:decoder=nope"), Error);
  try {
    make_codec("bytegroup+deflate:decoder=nope");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("valid: isal, libdeflate, zlib"), std::string::npos) << e.what();
  }
  bool doca_listed = false;
  for (const DecoderInfo& info : list_decoders()) {
    if (info.name != "doca") {
      EXPECT_TRUE(info.built) << info.name;
      continue;
    }
    doca_listed = true;
    if (!info.built) {
      EXPECT_EQ(info.library, "not built (DOCA SDK not found)");
      EXPECT_THROW(make_codec("bytegroup+deflate:decoder=doca"), Error);
    }
  }
  EXPECT_TRUE(doca_listed);
}

}  // namespace
}  // namespace wirezip::codecs
