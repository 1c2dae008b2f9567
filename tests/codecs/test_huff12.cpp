#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <numeric>
#include <random>

#include "chunk_coder_checks.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace chunk_checks;

TEST(Huff12, EverySixteenBitPatternRoundTrips) {
  // Every pattern once, shuffled: the sampled code misses most symbols, so most are escaped.
  std::vector<std::uint16_t> values(65536);
  std::iota(values.begin(), values.end(), 0);
  std::shuffle(values.begin(), values.end(), std::mt19937(7));
  auto coder = make_huff12_coder();
  const auto input = elements(values);
  EXPECT_EQ(decode(*coder, encode(*coder, input), input.size()), input);
  // Sorted, then each pattern twice more: long runs of one symbol beside every other one.
  std::sort(values.begin(), values.end());
  std::vector<std::uint16_t> thrice;
  for (std::uint16_t v : values) thrice.insert(thrice.end(), {v, v, v});
  const auto runs = elements(thrice);
  EXPECT_EQ(decode(*coder, encode(*coder, runs), runs.size()), runs);
}

TEST(Huff12, EverySizeUpTo80BytesAndOddStreamSplitsRoundTrip) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=64KiB:seed=3").bytes;
  auto coder = make_huff12_coder();
  std::vector<std::size_t> sizes(81);
  std::iota(sizes.begin(), sizes.end(), 0);
  for (std::size_t n : {1001u, 4097u, 65535u, 65536u}) sizes.push_back(n);
  expect_prefixes_round_trip(*coder, weights, sizes);
}

TEST(Huff12, PassesTheExponentSplitOnWeights) {
  // Deterministic bytes, so a fixed floor: 16 MiB of synthetic weights at 1 MiB chunks.
  const auto weights = datasets::load_dataset("synthetic:weights:size=16MiB:seed=1").bytes;
  const auto total = [&](const char* spec) { return ratio_at_1mib(spec, weights); };
  const double huff12 = total("huff12"), exponent = total("bytegroup:split=exponent+huff");
  EXPECT_GE(huff12, 1.52);
  EXPECT_GT(huff12, exponent + 0.01);
}

TEST(Huff12, EverySymbolSeenNeedsNoEscape) {
  // 4096 elements, one per symbol (counted exactly): every symbol gets a 12-bit code.
  std::vector<std::uint16_t> values(4096);
  for (std::size_t s = 0; s < values.size(); ++s) values[s] = static_cast<std::uint16_t>(s << 3 | (s & 7));
  auto coder = make_huff12_coder();
  const auto input = elements(values);
  const auto coded = encode(*coder, input);
  EXPECT_EQ(decode(*coder, coded, input.size()), input);
  EXPECT_EQ(static_cast<unsigned>(coded[5]) & 0xf, 12u);  // symbol 0's code length
}

// 1 MiB of weights cut into equal parts, part k made 2^-octaves[k] as large: tensors of different
// scales in one chunk.
std::vector<std::byte> scaled_parts(std::initializer_list<unsigned> octaves) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=1MiB:seed=4").bytes;
  std::vector<std::byte> bytes(weights.begin(), weights.end());
  const std::size_t part = bytes.size() / octaves.size();
  std::size_t begin = 0;
  for (unsigned shift : octaves) {
    for (std::size_t i = begin; i < begin + part; i += 2) {
      const unsigned e = static_cast<unsigned>(bytes[i]) | static_cast<unsigned>(bytes[i + 1]) << 8;
      const unsigned smaller = (e & 0x7f80) > (shift << 7) ? e - (shift << 7) : e;
      bytes[i] = static_cast<std::byte>(smaller & 0xff), bytes[i + 1] = static_cast<std::byte>(smaller >> 8);
    }
    begin += part;
  }
  return bytes;
}
// The second half 2^-10 as large: two tensors.
std::vector<std::byte> two_scales() { return scaled_parts({0, 10}); }

TEST(Huff12, AChunkThatSpansTwoScalesIsCodedAsBlocks) {
  const auto input = two_scales();
  auto coder = make_huff12_coder();
  const auto coded = encode(*coder, input);
  ASSERT_EQ(static_cast<unsigned>(coded[0]), 2u);  // blocks
  EXPECT_EQ(decode(*coder, coded, input.size()), input);
  // Each half alone, one code each: the blocks cost little more than that.
  const std::size_t halves = encode(*coder, std::span(input).first(input.size() / 2)).size() +
                             encode(*coder, std::span(input).subspan(input.size() / 2)).size();
  EXPECT_LT(coded.size(), halves + halves / 500);
}

TEST(Huff12, AChunkOfFourScalesIsCodedAsFourBlocks) {
  const auto input = scaled_parts({0, 12, 4, 16});
  auto coder = make_huff12_coder();
  const auto coded = encode(*coder, input);
  ASSERT_EQ(static_cast<unsigned>(coded[0]), 2u);  // blocks
  ASSERT_EQ(static_cast<unsigned>(coded[1]), 4u);  // four of them
  EXPECT_EQ(decode(*coder, coded, input.size()), input);
  auto codec = make_codec("huff12");
  std::vector<std::byte> frame(codec->max_compressed_size(input.size()));
  frame.resize(codec->compress(input, frame));
  const std::size_t at = FrameHeader::header_size(1);
  for (std::size_t i = at; i < at + 64; ++i) {  // the block count and sizes, the first block's table
    SCOPED_TRACE(i);
    auto bad = frame;
    bad[i] ^= std::byte{0x10};
    expect_rejected_or_exact(*codec, bad, input);
  }
}

TEST(Huff12, CorruptOrTruncatedBlocksAreErrorsOrExact) {
  const auto input = two_scales();
  auto codec = make_codec("huff12");
  std::vector<std::byte> frame(codec->max_compressed_size(input.size()));
  frame.resize(codec->compress(input, frame));
  const std::size_t coded = FrameHeader::header_size(1);
  ASSERT_EQ(static_cast<unsigned>(frame[coded]), 2u);  // blocks
  std::vector<std::byte> out(input.size() + 16);
  const auto rejected_or_exact = [&](std::span<const std::byte> bad) { expect_rejected_or_exact(*codec, bad, input); };
  for (std::size_t i = coded; i < coded + 64; ++i) {  // the block count and sizes, the first block's table
    for (std::uint8_t flip : {0x01, 0x10, 0xff}) {
      SCOPED_TRACE(i);
      auto bad = frame;
      bad[i] ^= std::byte{flip};
      rejected_or_exact(bad);
    }
  }
  // The coder alone, cut short: an error, and nothing written past its output.
  auto coder = make_huff12_coder();
  const std::span<const std::byte> blocks = std::span(frame).subspan(coded);
  for (std::size_t len = 0; len < blocks.size(); len += len < 16 ? 1 : 4099) {
    std::fill(out.begin(), out.end(), std::byte{0x5a});
    EXPECT_THROW(coder->decode(blocks.first(len), std::span(out).first(input.size())), Error);
    EXPECT_TRUE(std::all_of(out.end() - 16, out.end(), [](std::byte b) { return b == std::byte{0x5a}; }));
  }
  for (std::size_t len = coded; len < frame.size(); len += len < coded + 16 ? 1 : 4099) {
    auto bad = std::vector<std::byte>(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(len));
    rejected_or_exact(bad);
  }
}

// Stream sizes moved from one stream to the next, their sum kept: the lanes then start elsewhere in
// the buffer, and a lane's unchecked rounds must still stay inside what it was given.
TEST(Huff12, StreamSizesMovedBetweenStreamsAreErrorsOrExact) {
  const auto input = datasets::load_dataset("synthetic:weights:size=128KiB:seed=5").bytes;  // one block
  auto codec = make_codec("huff12");
  std::vector<std::byte> frame(codec->max_compressed_size(input.size()));
  frame.resize(codec->compress(input, frame));
  const std::size_t coded = FrameHeader::header_size(1);
  ASSERT_EQ(static_cast<unsigned>(frame[coded]), 1u);  // one code
  const std::size_t k = static_cast<unsigned>(frame[coded + 3]) | static_cast<unsigned>(frame[coded + 4]) << 8;
  const std::size_t sizes = coded + 5 + (k + 2) / 2;  // seven u32: streams 0-6 (7 is the rest)
  const auto add = [](std::byte* at, std::int64_t delta) {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(at[i]) << (8 * i);
    v = static_cast<std::uint32_t>(v + delta);
    for (int i = 0; i < 4; ++i) at[i] = static_cast<std::byte>(v >> (8 * i));
  };
  for (std::size_t s = 0; s < 7; ++s) {
    for (std::int64_t delta : {-1000, -7, -1, 1, 7, 1000}) {
      SCOPED_TRACE(::testing::Message() << "stream " << s << ", " << delta << " bytes");
      auto bad = frame;
      add(bad.data() + sizes + 4 * s, delta);
      if (s + 1 < 7) add(bad.data() + sizes + 4 * (s + 1), -delta);  // stream 7's size is what is left
      expect_rejected_or_exact(*codec, bad, input);
    }
  }
}

// A coded chunk of the 8 elements 0x3c00..0x3c07, with its code table's fields at known places.
std::vector<std::byte> small_chunk(PlaneCoder& coder) {
  std::vector<std::uint16_t> values(8);
  std::iota(values.begin(), values.end(), 0x3c00);
  return encode(coder, elements(values));
}

TEST(Huff12, MalformedCodeTablesAreErrorsThatSayWhy) {
  auto coder = make_huff12_coder();
  const auto good = small_chunk(*coder);
  std::vector<std::byte> out(16);
  const auto message = [&](std::vector<std::byte> coded) -> std::string {
    try {
      coder->decode(coded, out);
    } catch (const Error& e) {
      return e.what();
    }
    return "accepted";
  };
  ASSERT_EQ(message(good), "accepted");
  auto bad = good;
  bad[0] = std::byte{9};
  EXPECT_NE(message(bad).find("unknown format 9"), std::string::npos);
  bad = good;
  bad[3] = std::byte{0xff}, bad[4] = std::byte{0xff};  // k = 65535 symbols
  EXPECT_NE(message(bad).find("not within 0..4095"), std::string::npos);
  bad = good;
  bad[5] = std::byte{0xff};  // two lengths of 15
  EXPECT_NE(message(bad).find("code length 15 is over 12"), std::string::npos);
  bad = good;
  bad[5] = std::byte{0x21};  // codes of 1 and 2 bits: a quarter of the code space unused
  EXPECT_NE(message(bad).find("complete code"), std::string::npos);
  bad = good;
  bad[6] = bad[7] = bad[8] = std::byte{0xff};  // stream 0's size (after one byte of lengths): 16 MiB
  EXPECT_NE(message(bad).find("stream sizes 0-6 sum to"), std::string::npos);
  bad = good;
  bad.pop_back();
  EXPECT_NE(message(bad).find("huff12: "), std::string::npos);
  EXPECT_NE(message({}).find("ends inside its format byte"), std::string::npos);
}

TEST(Huff12, StandsAloneOnly) {
  try {
    make_codec("bytegroup+huff12");
    ADD_FAILURE() << "accepted bytegroup+huff12";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("whole bf16 chunks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wirezip::codecs
