// The Huffman coder's pair code (plane format 5, coders/huff_pairs.hpp): chosen where pairs pay,
// exact on every stream length, its window table against decoding code by code, and its header
// checked field by field.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>

#include "codec_test_data.hpp"
#include "coders/huff_lanes.hpp"
#include "coders/huff_pairs.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using Bytes = std::vector<std::byte>;
constexpr std::byte kPairFormat{5};

// The exponent plane of synthetic bf16 weights: bits 7-14 of each element.
Bytes exponent_plane(std::size_t n) {
  const Bytes weights = testing::codec_inputs(2 * n)[0].bytes;
  Bytes plane(n);
  for (std::size_t i = 0; i < n; ++i)
    plane[i] = static_cast<std::byte>((static_cast<unsigned>(weights[2 * i]) >> 7) |
                                      (static_cast<unsigned>(weights[2 * i + 1]) << 1));
  return plane;
}

// Bytes that repeat their neighbour half the time, else one of eight values: pairs pay clearly.
Bytes correlated_plane(std::size_t n) {
  std::mt19937 rng(12);
  Bytes plane(n);
  std::byte last{0x78};
  for (std::byte& b : plane) b = last = rng() % 2 ? last : static_cast<std::byte>(0x74 + rng() % 8);
  return plane;
}

Bytes encode(PlaneCoder& coder, std::span<const std::byte> plane) {
  Bytes coded(coder.bound(plane.size()));
  coded.resize(coder.encode(plane, coded));
  return coded;
}

std::optional<std::string> decode_error(PlaneCoder& coder, std::span<const std::byte> coded, std::size_t n) {
  Bytes out(n);
  try {
    coder.decode(coded, out);
  } catch (const Error& e) {
    return e.what();
  }
  return std::nullopt;
}

TEST(HuffPairs, ChosenWherePairsPayAndNotOnNoise) {
  auto coder = make_huff_coder();
  const Bytes exponents = exponent_plane(300001);
  const Bytes coded = encode(*coder, exponents);
  EXPECT_EQ(coded[0], kPairFormat);
  // Smaller than the byte code's bits alone, with exact counts and no header: the encoder's
  // estimate from its sample held.
  const auto* src = reinterpret_cast<const std::uint8_t*>(exponents.data());
  huff::Counts counts = huff::histogram(src, exponents.size(), exponents.size(), exponents.size());
  const huff::Lengths lengths = huff::code_lengths(counts);
  double byte_bits = 0;
  for (std::byte b : exponents) byte_bits += lengths[static_cast<std::uint8_t>(b)];
  EXPECT_LT(8.0 * coded.size(), byte_bits);

  const Bytes noise = testing::random_bytes(300001, 4);
  EXPECT_NE(encode(*coder, noise)[0], kPairFormat);
  // Short planes keep the byte code: the pair table would cost more than it saves.
  EXPECT_NE(encode(*coder, std::span(exponents).first(huff::kMinPairedBytes - 1))[0], kPairFormat);
}

// Each pair value's count in the pieces the sampler takes, counted one pair at a time.
std::map<std::uint16_t, std::uint64_t> pairs_counted_one_by_one(const std::uint8_t* src, std::size_t n, bool exact) {
  std::map<std::uint16_t, std::uint64_t> pairs;
  const std::size_t piece = exact ? n : huff::kSamplePiece, every = exact ? n : huff::kSampleEvery;
  for (std::size_t start = 0; start < n; start += every)
    for (std::size_t i = start; i + 1 < std::min(n, start + piece); i += 2) ++pairs[src[i] | src[i + 1] << 8];
  return pairs;
}

// The sampler's byte counts are the byte code's (sample_counts'): the byte code's frames do not
// depend on whether the pair code was weighed. Its pairs, a value's counts added, are those of the
// same pieces counted one by one.
TEST(HuffPairs, SamplerCountsWhatTheByteCodeCounts) {
  const Bytes plane = exponent_plane(300001);
  const auto* src = reinterpret_cast<const std::uint8_t*>(plane.data());
  huff::PairSampler sampler;
  huff::PairSample sample;
  for (std::size_t n : {1, 2, 3, 6, 255, 257, 258, 4097, 65535, 65536, 300001}) {
    for (bool exact : {true, false}) {
      SCOPED_TRACE(::testing::Message() << n << " bytes, exact " << exact);
      sampler.sample(src, n, exact, sample);
      EXPECT_EQ(sample.bytes, huff::sample_counts(src, n, exact));
      std::map<std::uint16_t, std::uint64_t> pairs;
      for (auto [pair, count] : sample.pairs) pairs[pair] += count;
      EXPECT_EQ(pairs, pairs_counted_one_by_one(src, n, exact));
    }
  }
}

TEST(HuffPairs, EveryStreamLengthRoundTrips) {
  auto coder = make_huff_coder();
  const Bytes correlated = correlated_plane(70000);
  // n % 8 from 0 to 7: streams of odd and even length, so odd last bytes in every lane; and one
  // plane in which every byte pairs.
  Bytes two(70000);
  std::mt19937 rng(3);
  for (std::byte& b : two) b = static_cast<std::byte>(rng() % 5 == 0 ? 0x7a : 0x7b);
  std::vector<std::span<const std::byte>> planes{two};
  for (std::size_t n = 65536; n < 65544; ++n) planes.push_back(std::span(correlated).first(n));
  for (auto plane : planes) {
    SCOPED_TRACE(::testing::Message() << plane.size() << " symbols");
    const Bytes coded = encode(*coder, plane);
    ASSERT_EQ(coded[0], kPairFormat);
    Bytes back(plane.size() + 8, std::byte{0xee});
    coder->decode(coded, std::span(back).first(plane.size()));
    EXPECT_TRUE(std::equal(plane.begin(), plane.end(), back.begin()));
    EXPECT_TRUE(std::all_of(back.end() - 8, back.end(), [](std::byte b) { return b == std::byte{0xee}; }));
  }
}

// The window table against decoding each window code by code, for random alphabets of pairs and
// bytes: every entry's bytes, first code and totals.
TEST(HuffPairs, WindowTableDecodesCodeByCode) {
  using namespace huff;
  std::mt19937 rng(41);
  for (int trial = 0; trial < 60; ++trial) {
    const unsigned m = 2 + rng() % (kMaxPaired - 1);
    std::vector<std::uint8_t> bytes(256);
    for (unsigned s = 0; s < 256; ++s) bytes[s] = static_cast<std::uint8_t>(s);
    std::shuffle(bytes.begin(), bytes.end(), rng);
    bytes.resize(m);
    std::vector<std::uint8_t> chosen(chosen_bytes(m));
    for (std::uint8_t& c : chosen) c = static_cast<std::uint8_t>(rng());
    chosen[0] |= 1;  // at least one pair
    const PairAlphabet alphabet = pair_alphabet(bytes, chosen);
    std::vector<std::uint32_t> counts(alphabet.size());
    for (std::uint32_t& c : counts) c = rng() % 3 == 0 ? 0 : 1 + (1u << (rng() % 16));
    for (std::size_t k = 0; k < alphabet.pair_symbols(); ++k) counts[k] = std::max<std::uint32_t>(counts[k], 1);
    const std::vector<std::uint8_t> lengths = limited_code_lengths(counts, kMaxLength);
    std::vector<std::uint32_t> codes(alphabet.size());
    canonical_codes(lengths, codes);
    std::vector<DecodeEntry> table(kWindowMask + 1);
    build_decode_table(alphabet, codes, table.data());

    auto bytes_of = [&](std::size_t symbol) -> std::vector<std::uint8_t> {
      if (symbol >= alphabet.pair_symbols()) return {static_cast<std::uint8_t>(symbol - alphabet.pair_symbols())};
      const unsigned cell = alphabet.cell_of[symbol];
      return {alphabet.bytes[cell / kMaxPaired], alphabet.bytes[cell % kMaxPaired]};
    };
    for (std::uint32_t window = 0; window <= kWindowMask; ++window) {
      std::vector<std::uint8_t> out;
      unsigned used = 0, first_bits = 0, first_width = 0;
      while (true) {
        std::size_t symbol = codes.size();  // the code at the window's next bits
        for (std::size_t s = 0; s < codes.size() && symbol == codes.size(); ++s) {
          const std::uint32_t l = code_length(codes[s]);
          if (l && ((window >> used) & ((1u << l) - 1)) == code_bits(codes[s])) symbol = s;
        }
        ASSERT_LT(symbol, codes.size());
        const auto decoded = bytes_of(symbol);
        const unsigned l = code_length(codes[symbol]);
        if (used + l > kMaxLength || out.size() + decoded.size() > kMaxBytesPerEntry) break;
        if (out.empty()) first_bits = l, first_width = static_cast<unsigned>(decoded.size());
        out.insert(out.end(), decoded.begin(), decoded.end());
        used += l;
      }
      DecodeEntry want = 0;
      for (std::size_t k = 0; k < out.size(); ++k) want |= DecodeEntry{out[k]} << (8 * k);
      want |= (DecodeEntry{first_bits} << 32) | (DecodeEntry{first_width} << 40) | (DecodeEntry{used} << 48) |
              (DecodeEntry{out.size()} << 56);
      ASSERT_EQ(table[window], want) << "trial " << trial << ", window " << window;
    }
  }
}

// Each field of the header, broken, is an error naming the plane's header or its code; flipped
// bytes anywhere are an error or a decode that stays inside the output.
TEST(HuffPairs, CorruptHeadersAreErrors) {
  auto coder = make_huff_coder();
  const Bytes plane = correlated_plane(1 << 16);
  const Bytes coded = encode(*coder, plane);
  ASSERT_EQ(coded[0], kPairFormat);
  const std::size_t m = static_cast<std::size_t>(coded[1]), range_at = 2 + m + huff::chosen_bytes(m);
  for (auto [what, edit, expected] : std::vector<std::tuple<std::string, std::function<void(Bytes&)>, std::string>>{
           {"no bytes pair", [](Bytes& b) { b[1] = std::byte{0}; }, "huff plane header"},
           {"one byte pairs", [](Bytes& b) { b[1] = std::byte{1}; }, "huff plane header"},
           {"17 bytes pair", [](Bytes& b) { b[1] = std::byte{17}; }, "huff plane header"},
           {"first after last", [&](Bytes& b) { b[range_at] = std::byte{0xff}, b[range_at + 1] = std::byte{0}; },
            "huff plane header"},
           {"a length over 11", [&](Bytes& b) { b[range_at + 2] |= std::byte{0x0f}; }, "code length"},
           {"a pair's code dropped", [&](Bytes& b) { b[2 + m] ^= std::byte{1}; }, "huff"},
           {"header cut short", [&](Bytes& b) { b.resize(range_at + 3); }, "huff plane header"},
           {"streams cut short", [](Bytes& b) { b.resize(b.size() - 40); }, "huff stream"}}) {
    Bytes bad = coded;
    edit(bad);
    const auto error = decode_error(*coder, bad, plane.size());
    ASSERT_TRUE(error) << what;
    EXPECT_NE(error->find(expected), std::string::npos) << what << ": " << *error;
  }
  std::mt19937 rng(8);
  for (int trial = 0; trial < 300; ++trial) {
    Bytes bad = coded;
    bad[rng() % (range_at + 2 + 150)] ^= static_cast<std::byte>(1 + rng() % 255);
    decode_error(*coder, bad, plane.size());  // either outcome; ASan checks the writes
  }
}

// A pair code where a stream has one byte left is refused, with nothing written past the end.
TEST(HuffPairs, APairPastTheStreamEndIsRefused) {
  using namespace huff;
  const std::array<std::uint8_t, 2> bytes{0x10, 0x20};
  const std::array<std::uint8_t, 1> chosen{0x0f};  // all four pairs
  const PairAlphabet alphabet = pair_alphabet(bytes, chosen);
  std::vector<std::uint8_t> lengths(alphabet.size());
  lengths[0] = 1, lengths[1] = 2, lengths[2] = 3, lengths[3] = 4;  // the pairs
  lengths[alphabet.byte_symbol(0x10)] = 5, lengths[alphabet.byte_symbol(0x20)] = 5;
  std::vector<std::uint32_t> codes(alphabet.size());
  canonical_codes(lengths, codes);
  std::vector<DecodeEntry> table(kWindowMask + 1);
  build_decode_table(alphabet, codes, table.data());

  const std::array<std::uint8_t, 16> stream{};  // all zero bits: the 1-bit code of pair 0x10 0x10
  std::array<std::uint8_t, 2> out{0xee, 0xee};
  DecodeLane lane{{stream.data(), stream.data(), stream.data() + stream.size()}, out.data(), out.data() + 1};
  lane.refill();
  EXPECT_FALSE(lane.decode_one(table.data()));
  EXPECT_EQ(out[0], 0xee);
  lane.out_end = out.data() + 2;
  EXPECT_TRUE(lane.decode_one(table.data()));
  EXPECT_EQ(out[0], 0x10);
  EXPECT_EQ(out[1], 0x10);
}

}  // namespace
}  // namespace wirezip::codecs
