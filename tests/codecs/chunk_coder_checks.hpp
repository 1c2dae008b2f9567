#pragma once
// Checks shared by the tests of whole-chunk bf16 coders (huff12, huff10).
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "coders/plane_coder.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs::chunk_checks {

// Encodes into an output of bound() bytes with guard bytes after it: they must stay as they were.
inline std::vector<std::byte> encode(PlaneCoder& coder, std::span<const std::byte> input) {
  const std::size_t bound = coder.bound(input.size());
  std::vector<std::byte> coded(bound + 16, std::byte{0x5a});
  const std::size_t size = coder.encode(input, std::span(coded).first(bound));
  EXPECT_TRUE(std::all_of(coded.begin() + static_cast<std::ptrdiff_t>(bound), coded.end(),
                          [](std::byte b) { return b == std::byte{0x5a}; }));
  EXPECT_LE(size, bound);
  coded.resize(size);
  return coded;
}

// Decodes into an output with guard bytes after it: they must stay as they were.
inline std::vector<std::byte> decode(PlaneCoder& coder, std::span<const std::byte> coded, std::size_t n) {
  std::vector<std::byte> out(n + 16, std::byte{0x5a});
  coder.decode(coded, std::span(out).first(n));
  EXPECT_TRUE(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(),
                          [](std::byte b) { return b == std::byte{0x5a}; }));
  out.resize(n);
  return out;
}

// The first n bytes of `data` for each n of `sizes` code within the bound and decode to themselves.
inline void expect_prefixes_round_trip(PlaneCoder& coder, std::span<const std::byte> data,
                                       std::span<const std::size_t> sizes) {
  for (std::size_t n : sizes) {
    SCOPED_TRACE(n);
    const std::span<const std::byte> input = data.first(n);
    const auto coded = encode(coder, input);
    EXPECT_LE(coded.size(), coder.bound(n));
    const auto back = decode(coder, coded, n);
    EXPECT_TRUE(std::equal(input.begin(), input.end(), back.begin()));
  }
}

// Little-endian bytes of 16-bit elements.
inline std::vector<std::byte> elements(std::span<const std::uint16_t> values) {
  std::vector<std::byte> bytes(2 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    bytes[2 * i] = static_cast<std::byte>(values[i] & 0xff);
    bytes[2 * i + 1] = static_cast<std::byte>(values[i] >> 8);
  }
  return bytes;
}

// A damaged frame of `input` decompresses to an error or to `input` exactly (the frame's checksum
// tells a wrong restoration from the right one), and nothing is written past the output.
inline void expect_rejected_or_exact(Codec& codec, std::span<const std::byte> bad, std::span<const std::byte> input) {
  std::vector<std::byte> out(input.size() + 16, std::byte{0x5a});
  try {
    ASSERT_EQ(codec.decompress(bad, std::span(out).first(input.size())), input.size());
    EXPECT_TRUE(std::equal(input.begin(), input.end(), out.begin()));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), "");
  }
  EXPECT_TRUE(std::all_of(out.end() - 16, out.end(), [](std::byte b) { return b == std::byte{0x5a}; }));
}

// The ratio of `spec` over `data` cut into 1 MiB chunks.
inline double ratio_at_1mib(const char* spec, std::span<const std::byte> data) {
  auto codec = make_codec(spec);
  std::vector<std::byte> frame(codec->max_compressed_size(1 << 20));
  std::size_t bytes = 0;
  for (std::size_t at = 0; at < data.size(); at += 1 << 20)
    bytes += codec->compress(data.subspan(at, std::min<std::size_t>(1 << 20, data.size() - at)), frame);
  return static_cast<double>(data.size()) / static_cast<double>(bytes);
}

}  // namespace wirezip::codecs::chunk_checks
