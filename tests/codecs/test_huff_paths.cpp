// Every SIMD path of the Huffman coder against the portable one, on the same inputs: each path is
// forced explicitly, must write exactly the scalar path's bytes, and must decode every other path's
// output (and reject or accept a corrupt plane just as the scalar path does). Under qemu-user
// (scripts/cross-test aarch64) the neon path runs here too; a golden frame hash ties the x86-64 and
// aarch64 builds to the same bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <random>

#include "codec_test_data.hpp"
#include "coders/huff_kernels.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using Bytes = std::vector<std::byte>;

// Plane shapes the coder meets (both planes of bf16 weights) and ones that stress the code builder.
std::vector<testing::Input> plane_kinds(std::size_t n) {
  const Bytes weights = testing::codec_inputs(2 * n)[0].bytes;
  Bytes low(n), high(n);
  for (std::size_t i = 0; i < n; ++i) low[i] = weights[2 * i], high[i] = weights[2 * i + 1];
  std::mt19937 rng(5);
  Bytes geometric(n), signs(n), two(n);
  for (std::size_t i = 0; i < n; ++i) {
    // P(s) ~ 2^-s/3 over all 256 symbols: the longest codes hit the 11-bit limit.
    unsigned s = 0;
    while (s < 255 && rng() % 3 != 0) ++s;
    geometric[i] = static_cast<std::byte>(s);
    signs[i] = static_cast<std::byte>((rng() & 0x80) | (0x3c + rng() % 4));  // both signs, one exponent range
    two[i] = static_cast<std::byte>(rng() % 2 ? 0x3f : 0xbf);
  }
  // Sorted, the first stream holds the shortest codes and the last the longest: the lanes' streams
  // differ several-fold in length, so the lanes finish one by one and the batches go on with 7, 6,
  // ... 1 lanes.
  Bytes sorted = geometric;
  std::sort(sorted.begin(), sorted.end());
  // Two tensors' exponents back to back: each half its own code (blocks, in planes long enough).
  Bytes shifting(n);
  for (std::size_t i = 0; i < n; ++i)
    shifting[i] = static_cast<std::byte>(i < n / 2 ? 0x70 + rng() % 4 : 0x78 + (rng() % 7) * (rng() % 3));
  return {{"exponent plane", high},
          {"two tensors", shifting},
          {"mantissa plane", low},
          {"geometric", geometric},
          {"signs", signs},
          {"two symbols", two},
          {"geometric, sorted", sorted},
          {"random", testing::random_bytes(n, 3)}};
}

std::optional<Bytes> try_decode(PlaneCoder& coder, std::span<const std::byte> coded, std::size_t n) {
  Bytes out(n);
  try {
    coder.decode(coded, out);
  } catch (const Error&) {
    return std::nullopt;
  }
  return out;
}

TEST(HuffPaths, EveryPathWritesTheScalarBytesAndDecodesThem) {
  const auto paths = available_simd_paths();
  ASSERT_EQ(paths.front(), SimdPath::scalar);
  auto scalar = make_huff_coder(SimdPath::scalar);
  // 300001 symbols: above 64 KiB the code comes from a sample; the odd sizes leave lane tails.
  for (const auto& kind : plane_kinds(300001)) {
    for (std::size_t n : {2, 3, 5, 16, 17, 33, 64, 100, 1000, 4099, 65535, 65537, 300001}) {
      const std::span<const std::byte> input = std::span(kind.bytes).first(n);
      Bytes expected(scalar->bound(n));
      expected.resize(scalar->encode(input, expected));
      for (SimdPath path : paths) {
        SCOPED_TRACE(::testing::Message() << simd_path_name(path) << ", " << kind.name << ", " << n << " symbols");
        auto coder = make_huff_coder(path);
        Bytes coded(coder->bound(n));
        coded.resize(coder->encode(input, coded));
        ASSERT_EQ(coded, expected);
        Bytes back(n);
        coder->decode(expected, back);
        ASSERT_TRUE(std::equal(back.begin(), back.end(), input.begin()));
      }
    }
  }
}

// A plane whose statistics shift halfway is coded as blocks, each with its own code, and smaller
// than with one code for all; one that does not shift is one block. Corrupt block headers are
// refused.
TEST(HuffPaths, BlocksWhereStatisticsShift) {
  // n % 4 == 3: halves end one symbol past two quarters. Blocks are whole quarters, so the one
  // symbol that occurs only at the third quarter's start belongs to the second block's code.
  Bytes shifting = plane_kinds(4 * 40000 + 3)[1].bytes;
  shifting[2 * 40000] = std::byte{0x55};
  auto coder = make_huff_coder(SimdPath::scalar);
  Bytes coded(coder->bound(shifting.size()));
  coded.resize(coder->encode(shifting, coded));
  ASSERT_EQ(coded[0], std::byte{4});  // blocks
  ASSERT_TRUE(coded[1] == std::byte{2} || coded[1] == std::byte{4});
  Bytes back(shifting.size());
  coder->decode(coded, back);
  EXPECT_EQ(back, shifting);
  // The same symbols spread evenly: no block pays, and one code for them all costs more.
  Bytes mixed = shifting;
  std::shuffle(mixed.begin(), mixed.end(), std::mt19937(1));
  Bytes whole(coder->bound(mixed.size()));
  whole.resize(coder->encode(mixed, whole));
  EXPECT_TRUE(whole[0] == std::byte{3} || whole[0] == std::byte{5});  // one code: of bytes, or of pairs
  EXPECT_LT(coded.size(), whole.size());

  for (auto [what, edit] : std::vector<std::pair<std::string, std::function<void(Bytes&)>>>{
           {"one block", [](Bytes& b) { b[1] = std::byte{1}; }},
           {"three blocks", [](Bytes& b) { b[1] = std::byte{3}; }},
           {"too many blocks", [](Bytes& b) { b[1] = std::byte{5}; }},
           {"a block past the plane", [](Bytes& b) { b[5] = std::byte{0x7f}; }},
           {"a block of blocks", [](Bytes& b) { b[2 + 4 * (static_cast<int>(b[1]) - 1)] = std::byte{4}; }},
           {"truncated", [](Bytes& b) { b.resize(5); }}}) {
    Bytes bad = coded;
    edit(bad);
    EXPECT_FALSE(try_decode(*coder, bad, shifting.size())) << what;
  }
}

// A flipped byte in a stream is decoded (to wrong symbols) or rejected, identically on every path;
// on the sorted plane too, whose lanes leave the eight-lane batches far apart.
TEST(HuffPaths, EveryPathTreatsCorruptPlanesLikeScalar) {
  auto scalar = make_huff_coder(SimdPath::scalar);
  const auto kinds = plane_kinds(5000);
  for (const Bytes& plane : {kinds[0].bytes, kinds[6].bytes}) {
    Bytes coded(scalar->bound(plane.size()));
    coded.resize(scalar->encode(plane, coded));
    std::mt19937 rng(9);
    for (int trial = 0; trial < 200; ++trial) {
      Bytes bad = coded;
      bad[141 + rng() % (bad.size() - 141)] ^= static_cast<std::byte>(1 + rng() % 255);  // past the first 141 bytes
      if (trial % 4 == 0) bad.resize(bad.size() - 1 - rng() % 8);                        // and truncated
      const auto expected = try_decode(*scalar, bad, plane.size());
      for (SimdPath path : available_simd_paths()) {
        SCOPED_TRACE(::testing::Message() << simd_path_name(path) << ", trial " << trial);
        auto coder = make_huff_coder(path);
        ASSERT_EQ(try_decode(*coder, bad, plane.size()), expected);
      }
    }
  }
}

TEST(HuffPaths, ByteRangeMatchesScalar) {
  const huff::HuffKernels scalar = huff::scalar_huff_kernels();
  std::mt19937 rng(17);
  for (SimdPath path : available_simd_paths()) {
    const huff::HuffKernels kernels = huff::huff_kernels(path);
    for (std::size_t n = 1; n < 4200; n += n < 200 ? 1 : 97) {
      // Values from a narrow band, then planted extremes and zeros of either sign at random places.
      Bytes data(n);
      for (auto& b : data) b = static_cast<std::byte>(0x40 + rng() % 16 + (rng() % 2) * 0x80);
      data[rng() % n] = static_cast<std::byte>(rng() % 256);
      data[rng() % n] = static_cast<std::byte>(rng() % 256);
      if (n % 3 == 0) data[rng() % n] = std::byte{0};
      if (n % 5 == 0) data[rng() % n] = std::byte{0x80};
      if (n % 7 == 0) std::fill(data.begin(), data.end(), std::byte{static_cast<unsigned char>(n % 2 * 0x80)});
      const auto* src = reinterpret_cast<const std::uint8_t*>(data.data());
      const huff::ByteRange want = scalar.byte_range(src, n), got = kernels.byte_range(src, n);
      SCOPED_TRACE(::testing::Message() << simd_path_name(path) << ", " << n << " bytes");
      ASSERT_EQ(got.low, want.low);
      ASSERT_EQ(got.high, want.high);
      ASSERT_EQ(got.low7, want.low7);
      ASSERT_EQ(got.high7, want.high7);
      ASSERT_EQ(got.zero, want.zero);
      ASSERT_EQ(got.negative_zero, want.negative_zero);
    }
  }
}

// Window tables of random codes, complete and not, over one- and two-byte symbols: every path's
// entries are the portable loop's.
TEST(HuffPaths, WindowEntriesMatchScalar) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::uint32_t> counts(2 + rng() % 255);
    for (auto& c : counts) c = 1u << (rng() % (trial % 3 ? 20 : 2));  // long codes, or near-equal ones
    const auto lengths = huff::limited_code_lengths(counts, huff::kMaxLength);
    std::vector<std::uint32_t> codes(counts.size());
    huff::canonical_codes(lengths, codes);
    std::vector<huff::WindowSymbol> alphabet;
    for (std::uint32_t code : codes)
      if (trial % 5 != 0 || rng() % 8 != 0)  // every fifth code incomplete: windows that start no code
        alphabet.push_back({code, static_cast<std::uint16_t>(rng()), static_cast<std::uint8_t>(1 + rng() % 2)});
    huff::FirstCodes first;
    huff::first_codes(alphabet, first);
    std::vector<huff::DecodeEntry> want(huff::kWindowMask + 1);
    huff::window_entries(first.data(), want.data());
    for (SimdPath path : available_simd_paths()) {
      std::vector<huff::DecodeEntry> got(huff::kWindowMask + 1);
      huff::huff_kernels(path).window_entries(first.data(), got.data());
      ASSERT_EQ(got, want) << simd_path_name(path) << ", trial " << trial;
    }
  }
}

// The forced paths are really other code, not the scalar loops under another name.
TEST(HuffPaths, FastPathsAreTheirOwnKernels) {
  const huff::HuffKernels scalar = huff::scalar_huff_kernels();
  for (SimdPath path : available_simd_paths()) {
    if (path == SimdPath::scalar) continue;
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("bmi2")) continue;  // such a CPU runs the portable loops on purpose
#endif
    const huff::HuffKernels kernels = huff::huff_kernels(path);
    EXPECT_NE(kernels.encode_bulk, scalar.encode_bulk) << simd_path_name(path);
    EXPECT_NE(kernels.decode_bulk, scalar.decode_bulk) << simd_path_name(path);
    EXPECT_NE(kernels.byte_range, scalar.byte_range) << simd_path_name(path);
#if defined(__x86_64__)
    EXPECT_NE(kernels.window_entries, scalar.window_entries) << simd_path_name(path);  // NEON shares the loop
#endif
  }
  EXPECT_THROW(make_huff_coder(static_cast<SimdPath>(99)), Error);
}

// wirezip's own frames are the same bytes on every architecture and path: a frame written on the
// x86 host decodes on the Arm DPU. Golden values from x86-64 (and from the coder before it had
// paths); the aarch64 build under qemu must agree. Only a deliberate change to the bytes written (the
// frame format, or how code lengths are chosen) updates them.
TEST(HuffPaths, FramesAreTheSameOnEveryArchitecture) {
  const auto weights = datasets::load_dataset("synthetic:weights:size=256KiB:seed=7").bytes;
  const std::span<const std::byte> input = std::span(weights).first(weights.size() - 3);  // a partial element
  for (const auto& [spec, sha256] : std::vector<std::pair<std::string, std::string>>{
           {"bytegroup+huff", "f2ca1a745a78cfe9d1ecbeb7aa615a50451685409f42042448e3e419c699a2cd"},
           {"bytegroup:width=4+huff", "fc9d954cb25a30e2e4e19a623b98a55b668b753dfafade0e5f6e2c8b0f68b705"},
           {"huff", "8c94eb645cc1b8a789aec14da3a480df2df6eeb7af512d2df13d18026a691c83"},
           {"huff12", "469f312090764f179990a84af39138ebcd2cad69a5fcedc183983dfbd31a714a"},
           {"huff10", "a11d8055d7afbb7a19ff7de77f89bb00ed95b6f45a525a493f3913161506485e"}}) {
    auto codec = make_codec(spec);
    Bytes frame(codec->max_compressed_size(input.size()));
    frame.resize(codec->compress(input, frame));
    EXPECT_EQ(datasets::sha256_hex(frame), sha256) << spec << ", " << frame.size() << " bytes";
  }
  // A chunk whose exponent plane takes the pair code.
  const auto chunk = datasets::load_dataset("synthetic:weights:size=1MiB:seed=7").bytes;
  auto codec = make_codec("bytegroup:split=exponent+huff");
  Bytes frame(codec->max_compressed_size(chunk.size()));
  frame.resize(codec->compress(chunk, frame));
  const FrameHeader header = read_frame_header(frame);
  ASSERT_EQ(header.planes[0].mode, PlaneMode::coded);  // the exponents, after the raw sign/mantissa plane
  ASSERT_EQ(header.planes[1].mode, PlaneMode::raw);
  EXPECT_EQ(frame[header.encoded_size() + header.planes[1].stored_size], std::byte{5});
  EXPECT_EQ(datasets::sha256_hex(frame), "2ebf52252284b1c5fe938cef003d067781b8605b05ab8699605fb1e977b1dddf")
      << frame.size() << " bytes";
}

}  // namespace
}  // namespace wirezip::codecs
