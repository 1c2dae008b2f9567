#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "chunk_coder_checks.hpp"
#include "coders/huff10_kernels.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace chunk_checks;

TEST(Huff10, KernelsMatchTheirScalarFormsOnEveryPattern) {
  using namespace huff10;
  std::vector<std::uint16_t> values(65536);
  std::iota(values.begin(), values.end(), 0);
  std::shuffle(values.begin(), values.end(), std::mt19937(3));
  const auto bytes = elements(values);
  const auto* src = reinterpret_cast<const std::uint8_t*>(bytes.data());
  // Each output with guard bytes after it, which no pass may touch.
  constexpr std::uint8_t kGuard = 0x5a;
  std::vector<std::uint8_t> sym(values.size() + 16), stored(stored_size(values.size()) + 16), back(bytes.size() + 16);
  std::vector<unsigned> bases;
  for (unsigned base = 1; base < kMaxBase; base += 11) bases.push_back(base);
  bases.push_back(kMaxBase);
  for (unsigned base : bases) {
    SCOPED_TRACE(base);
    const auto b = static_cast<std::uint8_t>(base);
    const bool escaped = split_elements(src, values.size(), b, sym.data(), stored.data());
    bool any = false;
    for (std::size_t i = 0; i < values.size(); ++i) {
      ASSERT_EQ(sym[i], symbol_of(src[2 * i], src[2 * i + 1], b)) << i;
      any = any || sym[i] >= kFirstEscapedByte;
    }
    EXPECT_EQ(escaped, any);
    EXPECT_EQ(merge_elements(sym.data(), stored.data(), values.size(), b, back.data()), any);
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (sym[i] >= kFirstEscapedByte) continue;  // the caller mends these
      ASSERT_EQ(back[2 * i], src[2 * i]) << i;
      ASSERT_EQ(back[2 * i + 1], src[2 * i + 1]) << i;
    }
  }
  for (std::size_t m = 0; m <= 2 * kGroup + 5; ++m) {
    SCOPED_TRACE(m);
    std::fill(sym.begin(), sym.end(), kGuard);
    std::fill(stored.begin(), stored.end(), kGuard);
    std::fill(back.begin(), back.end(), kGuard);
    split_elements(src, m, 120, sym.data(), stored.data());
    merge_elements(sym.data(), stored.data(), m, 120, back.data());
    for (std::size_t i = 0; i < m; ++i) {
      if (sym[i] < kFirstEscapedByte) {
        ASSERT_EQ(back[2 * i] | back[2 * i + 1] << 8, src[2 * i] | src[2 * i + 1] << 8);
      }
    }
    const auto untouched = [&](const std::vector<std::uint8_t>& v, std::size_t from) {
      return std::all_of(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(),
                         [&](std::uint8_t x) { return x == kGuard; });
    };
    EXPECT_TRUE(untouched(sym, m));
    EXPECT_TRUE(untouched(stored, stored_size(m)));
    EXPECT_TRUE(untouched(back, 2 * m));
  }
}

TEST(Huff10, EverySixteenBitPatternRoundTrips) {
  // Every pattern once, shuffled: most exponents lie outside any window and are escaped.
  std::vector<std::uint16_t> values(65536);
  std::iota(values.begin(), values.end(), 0);
  std::shuffle(values.begin(), values.end(), std::mt19937(7));
  auto coder = make_huff10_coder();
  const auto input = elements(values);
  EXPECT_EQ(decode(*coder, encode(*coder, input), input.size()), input);
  std::sort(values.begin(), values.end());
  const auto sorted = elements(values);
  EXPECT_EQ(decode(*coder, encode(*coder, sorted), sorted.size()), sorted);
}

TEST(Huff10, EverySizeUpTo300BytesRoundTrips) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=64KiB:seed=3").bytes;
  auto coder = make_huff10_coder();
  std::vector<std::size_t> sizes(301);
  std::iota(sizes.begin(), sizes.end(), 0);
  for (std::size_t n : {1001u, 4097u, 16385u, 65535u, 65536u}) sizes.push_back(n);
  expect_prefixes_round_trip(*coder, weights, sizes);
}

TEST(Huff10, PassesTheExponentSplitOnWeights) {
  // Deterministic bytes, so a fixed floor: 16 MiB of synthetic weights at 1 MiB chunks.
  const auto weights = datasets::load_dataset("synthetic:weights:size=16MiB:seed=1").bytes;
  const auto total = [&](const char* spec) { return ratio_at_1mib(spec, weights); };
  const double huff10 = total("huff10"), exponent = total("bytegroup:split=exponent+huff");
  EXPECT_GE(huff10, 1.52);
  EXPECT_GT(huff10, exponent + 0.008);
}

// Weights with a few elements far outside the window (and zeros): escapes in several blocks.
TEST(Huff10, ExponentsOutsideTheWindowAreEscapedAndRestored) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=256KiB:seed=9").bytes;
  std::vector<std::byte> input(weights.begin(), weights.end());
  for (std::size_t i = 0; i < input.size() / 2; i += 997) {
    input[2 * i] = std::byte{0x80};
    input[2 * i + 1] = std::byte{static_cast<std::uint8_t>(i % 3 == 0 ? 0x7f : i % 3 == 1 ? 0x00 : 0x40)};
  }
  auto coder = make_huff10_coder();
  const auto coded = encode(*coder, input);
  EXPECT_GT(static_cast<unsigned>(coded[2]) | static_cast<unsigned>(coded[3]) << 8, 0u);  // escapes
  EXPECT_EQ(decode(*coder, coded, input.size()), input);
}

// A chunk small enough that the window's sample is its first 256 elements, and those zero padding:
// the window still comes from the weights after them (escaping all of them would not shrink it).
TEST(Huff10, AChunkThatStartsWithZerosGetsItsWindowFromTheRest) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=8KiB:seed=4").bytes;
  std::vector<std::byte> input(weights.begin(), weights.end());
  std::fill_n(input.begin(), 2 * 256, std::byte{0});
  auto coder = make_huff10_coder();
  const auto coded = encode(*coder, input);
  EXPECT_EQ(static_cast<unsigned>(coded[2]) | static_cast<unsigned>(coded[3]) << 8, 0u);  // no escapes
  EXPECT_LT(coded.size(), input.size() * 7 / 10);
  EXPECT_EQ(decode(*coder, coded, input.size()), input);
}

TEST(Huff10, CorruptOrTruncatedChunksAreErrorsOrExact) {
  // An odd size (a tail byte) and one escape.
  const auto weights = datasets::load_dataset("synthetic:weights:size=64KiB:seed=5").bytes;
  std::vector<std::byte> input(weights.begin(), weights.end() - 1);
  input[10] = std::byte{0}, input[11] = std::byte{0x7f};
  auto codec = make_codec("huff10");
  std::vector<std::byte> frame(codec->max_compressed_size(input.size()));
  frame.resize(codec->compress(input, frame));
  const std::size_t coded = FrameHeader::header_size(1);
  ASSERT_EQ(static_cast<unsigned>(frame[coded]), 1u);
  const std::size_t stored = coded + 6, symbols = stored + huff10::stored_size(input.size() / 2) + 1;
  for (std::size_t i : {coded, coded + 1, coded + 2, coded + 5, stored, stored + 100, symbols - 2, symbols - 1, symbols,
                        symbols + 1, symbols + 40, frame.size() - 1}) {
    for (std::uint8_t flip : {0x01, 0x10, 0xff}) {
      SCOPED_TRACE(::testing::Message() << "byte " << i << " ^ " << int{flip});
      auto bad = frame;
      bad[i] ^= std::byte{flip};
      expect_rejected_or_exact(*codec, bad, input);
    }
  }
  auto coder = make_huff10_coder();
  const std::span<const std::byte> chunk = std::span(frame).subspan(coded);
  std::vector<std::byte> out(input.size() + 16);
  for (std::size_t len = 0; len < chunk.size(); len += len < 16 ? 1 : 997) {
    SCOPED_TRACE(len);
    std::fill(out.begin(), out.end(), std::byte{0x5a});
    EXPECT_THROW(coder->decode(chunk.first(len), std::span(out).first(input.size())), Error);
    EXPECT_TRUE(std::all_of(out.end() - 16, out.end(), [](std::byte b) { return b == std::byte{0x5a}; }));
  }
}

TEST(Huff10, MalformedHeadersAreErrorsThatSayWhy) {
  // 300 elements, two of them with exponents outside the window: two escaped exponents.
  std::vector<std::uint16_t> values(300);
  std::iota(values.begin(), values.end(), 0x3c00);
  values[7] = 0x7f00, values[200] = 0x0100;
  auto coder = make_huff10_coder();
  const auto good = encode(*coder, elements(values));
  ASSERT_EQ(static_cast<unsigned>(good[2]), 2u);
  std::vector<std::byte> out(600 + 16);
  const auto message = [&](std::vector<std::byte> coded, std::size_t n = 600) -> std::string {
    std::fill(out.begin(), out.end(), std::byte{0x5a});
    std::string said = "accepted";
    try {
      coder->decode(coded, std::span(out).first(n));
    } catch (const Error& e) {
      said = e.what();
    }
    EXPECT_TRUE(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(),
                            [](std::byte b) { return b == std::byte{0x5a}; }));
    return said;
  };
  const auto says = [&](const std::string& said, const char* what) {
    EXPECT_NE(said.find(what), std::string::npos) << said;
  };
  ASSERT_EQ(message(good), "accepted");
  auto bad = good;
  bad[0] = std::byte{9};
  says(message(bad), "unknown format 9");
  bad = good;
  bad[1] = std::byte{0};
  says(message(bad), "window base 0 is not within 1..194");
  bad = good;
  bad[1] = std::byte{200};
  says(message(bad), "window base 200");
  bad = good;
  bad[5] = std::byte{0x10};  // 2^28 + 2 escaped exponents
  const std::string too_many = message(bad);
  says(too_many, "268435458 escaped exponents, ");
  says(too_many, "bytes are left");
  bad = good;
  bad[2] = std::byte{1};  // E = 1: the first escaped exponent byte becomes the symbols' last (ignored) byte
  says(message(bad), "more escaped symbols than the 1 escaped exponents");
  bad = good;
  bad[2] = std::byte{3};  // one escaped exponent more than the symbols use, in an added last byte
  bad.push_back(std::byte{0x80});
  says(message(bad), "3 escaped exponents, the symbols use 2");
  says(message({}), "empty coded chunk");
  says(message(std::vector<std::byte>(good.begin(), good.begin() + 20)), "ends inside its");
  says(message({std::byte{0}}), "holds no element, the output 300");
  says(message({std::byte{0}, std::byte{1}, std::byte{2}}, 1), "3 bytes for a chunk of 1 bytes and no element");
  says(message(good, 1), "coded elements for an output of 1 bytes");
}

TEST(Huff10, StandsAloneOnly) {
  try {
    make_codec("bytegroup+huff10");
    ADD_FAILURE() << "accepted bytegroup+huff10";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("whole bf16 chunks"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wirezip::codecs
