#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "codec_test_data.hpp"
#include "error_of.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

std::vector<std::string> all_specs() {
  std::vector<std::string> specs;
  for (const CodecInfo& info : list_codecs()) specs.push_back(info.spec);
  for (const std::string& spec : default_codec_specs())
    if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
  specs.push_back("bytegroup:width=4+lz4");
  specs.push_back("bytegroup:width=3+zstd:level=-3");
  specs.push_back("blosc:noshuffle+zstd:level=3");
  specs.push_back("bytegroup:split=exponent");
  specs.push_back("bytegroup:split=exponent:format=fp16+huff");
  specs.push_back("bytegroup:split=exponent:width=4+huff");
  specs.push_back("bytegroup:split=exponent+zstd:level=1");
  specs.push_back("ans");
  specs.push_back("bytegroup+ans");
  specs.push_back("bytegroup:split=exponent+ans");
  specs.push_back("bytegroup:split=exponent:width=4+ans");
  specs.push_back("bytegroup:split=exponent:format=fp16+ans:context=exponent");
  specs.push_back("bytegroup:split=exponent:format=fp32+ans:context=exponent");
  return specs;
}

// Compresses and restores `input`; the output buffer has guard bytes that must stay untouched.
void expect_round_trip(Codec& codec, std::span<const std::byte> input) {
  std::vector<std::byte> frame(codec.max_compressed_size(input.size()));
  const std::size_t size = codec.compress(input, frame);
  ASSERT_LE(size, frame.size());
  std::vector<std::byte> back(input.size() + 64, std::byte{0xa5});
  ASSERT_EQ(codec.decompress(std::span(frame).first(size), back), input.size());
  ASSERT_TRUE(std::equal(input.begin(), input.end(), back.begin()));
  for (std::size_t i = input.size(); i < back.size(); ++i) ASSERT_EQ(back[i], std::byte{0xa5});
}

TEST(Codecs, EveryCodecRoundTripsEveryInputKind) {
  const auto inputs = testing::codec_inputs(256 << 10);
  for (const std::string& spec : all_specs()) {
    auto codec = make_codec(spec);
    EXPECT_EQ(codec->spec(), spec);
    for (const auto& input : inputs) {
      SCOPED_TRACE(spec + " on " + input.name);
      expect_round_trip(*codec, input.bytes);
    }
  }
}

TEST(Codecs, AwkwardSizes) {
  const auto data = testing::codec_inputs(1 << 16)[0].bytes;  // weights
  for (const std::string& spec : all_specs()) {
    auto codec = make_codec(spec);
    const std::size_t w = codec->element_width();
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, w - 1, w + 1, 2 * w + 1, std::size_t{63}, std::size_t{4097},
                          std::size_t{65535}}) {
      SCOPED_TRACE(spec + " size " + std::to_string(n));
      expect_round_trip(*codec, std::span(data).first(n));
    }
  }
}

TEST(Codecs, ByteGroupingPaysOnWeightsAndHuffReachesTheBound) {
  const auto weights = testing::codec_inputs(1 << 20)[0].bytes;
  auto ratio = [&](const std::string& spec) {
    auto codec = make_codec(spec);
    std::vector<std::byte> frame(codec->max_compressed_size(weights.size()));
    return static_cast<double>(weights.size()) / static_cast<double>(codec->compress(weights, frame));
  };
  const double bound = entropy_bound_ratio(weights, 2, weights.size());
  EXPECT_GT(bound, 1.4);
  EXPECT_GT(ratio("bytegroup+lz4"), ratio("lz4"));
  EXPECT_GT(ratio("bytegroup+huff"), 0.98 * bound);  // within 2% of the order-0 bound
  EXPECT_LE(ratio("bytegroup+huff"), bound * 1.001);
  EXPECT_NEAR(ratio("memcpy"), 1.0, 0.001);
}

TEST(Codecs, ExponentSplitBeatsBytePlanesOnWeightsWithinItsBound) {
  const auto weights = testing::codec_inputs(1 << 20)[0].bytes;
  auto ratio = [&](const std::string& spec) {
    auto codec = make_codec(spec);
    std::vector<std::byte> frame(codec->max_compressed_size(weights.size()));
    return static_cast<double>(weights.size()) / static_cast<double>(codec->compress(weights, frame));
  };
  const double bound = exponent_bound_ratio(weights, FloatFormat::bf16, weights.size());
  EXPECT_GT(bound, entropy_bound_ratio(weights, 2, weights.size()));
  EXPECT_GT(ratio("bytegroup:split=exponent+huff"), ratio("bytegroup+huff"));
  EXPECT_LE(ratio("bytegroup:split=exponent+huff"), bound);
  EXPECT_LE(bound, value_bound_ratio(weights, weights.size()));
}

TEST(Codecs, AnsAndTheExponentContextPassHuffTowardsTheValueBound) {
  const auto weights = testing::codec_inputs(1 << 20)[0].bytes;
  auto ratio = [&](const std::string& spec) {
    auto codec = make_codec(spec);
    std::vector<std::byte> frame(codec->max_compressed_size(weights.size()));
    return static_cast<double>(weights.size()) / static_cast<double>(codec->compress(weights, frame));
  };
  const double huff = ratio("bytegroup:split=exponent+huff"), ans = ratio("bytegroup:split=exponent+ans");
  const double context = ratio("bytegroup:split=exponent+ans:context=exponent");
  EXPECT_GT(ans, huff);  // fractional bits on the exponent plane
  // Within 0.5% of the exponent bound: the sign/mantissa plane (7.97 bits of entropy) is stored raw.
  EXPECT_GT(ans, 0.995 * exponent_bound_ratio(weights, FloatFormat::bf16, weights.size()));
  EXPECT_GT(context, ans + 0.005);  // the mantissa's dependence on the exponent, used
  EXPECT_LE(context, value_bound_ratio(weights, weights.size()));
}

TEST(Codecs, ExponentContextPlanesAreCodedAndCheckedAgainstCorruption) {
  const auto weights = testing::codec_inputs(64 << 10)[0].bytes;
  auto codec = make_codec("bytegroup:split=exponent+ans:context=exponent");
  std::vector<std::byte> frame(codec->max_compressed_size(weights.size()));
  frame.resize(codec->compress(weights, frame));
  const FrameHeader header = read_frame_header(frame);
  ASSERT_EQ(header.planes[1].mode, PlaneMode::coded);  // the conditioned plane, not stored raw
  const std::size_t plane1 = header.encoded_size() + header.planes[0].stored_size;
  ASSERT_EQ(static_cast<std::uint8_t>(frame[plane1]), 3);  // ans_context.cpp's format
  // Another decoder of ans frames refuses the conditioned plane with a message that says why.
  auto plain = make_codec("bytegroup:split=exponent+ans");
  std::vector<std::byte> out(weights.size() + 16, std::byte{0x3c});
  const std::string plain_error =
      testing::error_of([&] { plain->decompress(frame, std::span(out).first(weights.size())); });
  EXPECT_NE(plain_error.find("context=exponent"), std::string::npos) << plain_error;
  // Only plane 1 may be in the conditioned format: plane 0 claiming it is refused, saying so.
  auto claimed = frame;
  claimed[header.encoded_size()] = std::byte{3};
  const std::string claimed_error =
      testing::error_of([&] { codec->decompress(claimed, std::span(out).first(weights.size())); });
  EXPECT_NE(claimed_error.find("only plane 1"), std::string::npos) << claimed_error;
  for (std::size_t i = plane1; i < frame.size(); i += 7) {  // tables and streams
    auto corrupt = frame;
    corrupt[i] ^= std::byte{static_cast<unsigned char>(1u << (i % 8))};
    try {
      ASSERT_EQ(codec->decompress(corrupt, std::span(out).first(weights.size())), weights.size());
      ASSERT_TRUE(std::equal(weights.begin(), weights.end(), out.begin())) << "byte " << i;
    } catch (const Error&) {
    }
    for (std::size_t j = weights.size(); j < out.size(); ++j) ASSERT_EQ(out[j], std::byte{0x3c});
  }
}

// The conditioned plane is decoded given plane 0 however the frame stores plane 0: here one exponent
// throughout (a constant plane) and mantissas that favour small values, so only the model pays.
TEST(Codecs, ExponentContextDecodesGivenAConstantExponentPlane) {
  std::vector<std::byte> values(64 << 10);
  std::uint32_t state = 12345;
  for (std::size_t i = 0; i < values.size(); i += 2) {
    state = state * 1664525u + 1013904223u;
    const unsigned mantissa = (state >> 24) & (state >> 16) & 0x7f;  // skewed towards zero bits
    const unsigned bf16 = (0x3f << 8 | 0x80) | mantissa;             // exponent 127 (1.0 <= x < 2.0)
    values[i] = static_cast<std::byte>(bf16 & 0xff);
    values[i + 1] = static_cast<std::byte>(bf16 >> 8);
  }
  auto codec = make_codec("bytegroup:split=exponent+ans:context=exponent");
  std::vector<std::byte> frame(codec->max_compressed_size(values.size()));
  frame.resize(codec->compress(values, frame));
  const FrameHeader header = read_frame_header(frame);
  ASSERT_EQ(header.planes[0].mode, PlaneMode::constant);
  ASSERT_EQ(header.planes[1].mode, PlaneMode::coded);
  std::vector<std::byte> out(values.size());
  ASSERT_EQ(codec->decompress(frame, out), values.size());
  EXPECT_EQ(out, values);
}

TEST(Codecs, BadSpecsNameTheValidForms) {
  for (const char* bad : {"", "lz5", "zstd:level=99", "zstd:lvl=1", "bytegroup+", "bytegroup+foo", "lz4+zstd",
                          "blosc:shuffle", "blosc:wiggle+lz4", "blosc:shuffle+lz4+zstd", "memcpy:x=1",
                          "bytegroup:width=0+lz4", "bytegroup:width=17", "huff:fast", "bytegroup:split=mantissa+huff",
                          "bytegroup:format=bf16+huff", "bytegroup:split=exponent:width=3+huff",
                          "bytegroup:split=exponent:format=fp32:width=2", "bytegroup:split=exponent:format=fp8",
                          "bytegroup+ans:context=exponent", "bytegroup:split=exponent+huff:context=exponent",
                          "bytegroup:split=exponent+ans:context=sign", "ans:context=exponent"}) {
    try {
      make_codec(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("valid forms"), std::string::npos) << e.what();
    }
  }
}

TEST(Codecs, ListsEveryFamilyWithAVersion) {
  for (const CodecInfo& info : list_codecs()) {
    EXPECT_NO_THROW(make_codec(info.spec)) << info.spec;
    EXPECT_FALSE(info.library.empty());
  }
  auto defaults = default_codec_specs();
  EXPECT_EQ(defaults.front(), "memcpy");
  EXPECT_NE(std::find(defaults.begin(), defaults.end(), std::string(kBestCodecSpec)), defaults.end());
}

TEST(CodecSpec, ParsedOnceThenCarriedAsAValue) {
  const CodecSpec spec = parse_codec_spec("bytegroup:split=exponent+ans:context=exponent");
  EXPECT_EQ(spec.text(), "bytegroup:split=exponent+ans:context=exponent");  // byte for byte, for the wire
  EXPECT_EQ(spec.make()->spec(), spec.text());
  EXPECT_EQ(spec.max_compressed_size(1 << 20), spec.make()->max_compressed_size(1 << 20));
  EXPECT_TRUE(spec.writes_frames());
  EXPECT_FALSE(parse_codec_spec("blosc:bitshuffle+lz4").writes_frames());
  EXPECT_TRUE(CodecSpec().empty());
  EXPECT_THROW(CodecSpec().make(), Error);
  // Defaults are resolved once, from the table: bytegroup's width follows the split's format.
  const CodecSpec fp32 = parse_codec_spec("bytegroup:split=exponent:format=fp32+huff");
  EXPECT_EQ(fp32.stages()[0].number("width"), 4);
  EXPECT_EQ(parse_codec_spec("bytegroup+deflate").stages()[1].choice("decoder"), "isal");
}

TEST(CodecSpec, TextIsHeldToLimitsBeforeTheTable) {
  EXPECT_NE(testing::error_of([] { parse_codec_spec(std::string(kMaxCodecSpecText + 1, 'a')); }).find("at most 256"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { parse_codec_spec("lz4\x01"); }).find("not printable"), std::string::npos);
  EXPECT_NE(testing::error_of([] { parse_codec_spec("zstd:level=99"); }).find("level=99 must be an integer in ["),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { parse_codec_spec("bytegroup+lz4:decoder=zlib"); }).find("unknown lz4 decoder 'zlib'"),
            std::string::npos);
}

TEST(CodecSpec, FormsAndListingComeFromTheTable) {
  const std::string forms = valid_codec_forms();
  for (const char* form : {"memcpy", "bytegroup[:width=1..16][:split=bytes|exponent][:format=bf16|fp16|fp32][+CODER]",
                           "blosc:{noshuffle|shuffle|bitshuffle}[:width=1..16]+{lz4|lz4hc|zstd|blosclz|zlib}[:level=0..9]",
                           "igzip[:level=0..3][:decoder=isal|libdeflate|zlib]", "ans[:context=exponent]", "huff"})
    EXPECT_NE(forms.find(form), std::string::npos) << form << " not in " << forms;
  bool deflate_listed = false;
  for (const CodecForm& row : codec_forms()) {
    EXPECT_FALSE(row.library.empty()) << row.form;
    if (row.form.starts_with("deflate")) {
      deflate_listed = true;
      EXPECT_EQ(row.form, "deflate[:decoder=isal|libdeflate|zlib, default isal]");
      EXPECT_NE(std::find(row.decoders.begin(), row.decoders.end(), "zlib"), row.decoders.end());
    }
  }
  EXPECT_TRUE(deflate_listed);
  for (const char* key : {"wirezip", "xxhash", "lz4", "zstd", "htscodecs", "isa-l", "zlib", "libdeflate", "blosc"})
    EXPECT_FALSE(library_versions().at(key).empty()) << key;
}

TEST(Entropy, KnownDistributions) {
  EXPECT_DOUBLE_EQ(order0_entropy_bits(std::vector<std::byte>(1000)), 0.0);
  std::vector<std::byte> two(1000);
  for (std::size_t i = 0; i < two.size(); ++i) two[i] = static_cast<std::byte>(i % 2);
  EXPECT_DOUBLE_EQ(order0_entropy_bits(two), 1.0);
  // Seven bytes, four of one value and three of another: every byte counted, the last three too.
  const std::vector<std::byte> seven = {std::byte{9}, std::byte{9}, std::byte{9}, std::byte{9},
                                        std::byte{5}, std::byte{5}, std::byte{5}};
  EXPECT_NEAR(order0_entropy_bits(seven), -(4.0 / 7 * std::log2(4.0 / 7) + 3.0 / 7 * std::log2(3.0 / 7)), 1e-12);
  EXPECT_GT(order0_entropy_bits(testing::random_bytes(1 << 20, 1)), 7.99);
  EXPECT_TRUE(looks_incompressible(testing::random_bytes(1 << 16, 2)));
  std::vector<std::byte> low(1 << 16);  // large enough to be estimated, and far from random
  for (std::size_t i = 0; i < low.size(); ++i) low[i] = static_cast<std::byte>(i % 5);
  EXPECT_FALSE(looks_incompressible(low));
  EXPECT_FALSE(looks_incompressible(testing::random_bytes(4095, 3)));  // under 4096 bytes: always worth a try
  // Width 2 over alternating 0/1: each plane is constant, so the bound is unbounded.
  EXPECT_TRUE(std::isinf(entropy_bound_ratio(two, 2, two.size())));
  EXPECT_NEAR(entropy_bound_ratio(two, 1, two.size()), 8.0, 1e-9);
}

}  // namespace
}  // namespace wirezip::codecs
