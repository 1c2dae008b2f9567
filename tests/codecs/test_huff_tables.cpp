// The Huffman code builder: lengths under the limit form a complete prefix code (what the window
// table needs) and cost no more than any other code under the same limit; the counts they are built
// from give every byte of the plane a code and few bytes that never occur one.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <numeric>
#include <queue>
#include <random>
#include <stdexcept>
#include <vector>

#include "coders/huff_kernels.hpp"
#include "coders/huff_pairs.hpp"
#include "coders/huff_tables.hpp"

namespace wirezip::codecs::huff {
namespace {

std::uint64_t cost(const Counts& counts, const Lengths& lengths) {
  std::uint64_t bits = 0;
  for (unsigned s = 0; s < 256; ++s) bits += std::uint64_t{counts[s]} * lengths[s];
  return bits;
}

// Kraft sum in units of 2^-limit: exactly 2^limit for a complete code.
std::uint64_t kraft(const Lengths& lengths, unsigned limit) {
  std::uint64_t sum = 0;
  for (std::uint8_t l : lengths)
    if (l) sum += std::uint64_t{1} << (limit - l);
  return sum;
}

// The unlimited Huffman cost: the sum of every merged weight.
std::uint64_t huffman_cost(const Counts& counts) {
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> queue;
  for (std::uint32_t c : counts)
    if (c) queue.push(c);
  std::uint64_t total = 0;
  while (queue.size() > 1) {
    const std::uint64_t a = queue.top();
    queue.pop();
    const std::uint64_t merged = a + queue.top();
    queue.pop();
    total += merged;
    queue.push(merged);
  }
  return total;
}

// The cheapest lengths under the limit by trying every assignment (a handful of symbols only).
std::uint64_t brute_force_cost(const std::vector<std::uint32_t>& counts, unsigned limit) {
  std::vector<unsigned> lengths(counts.size(), 1);
  std::uint64_t best = UINT64_MAX;
  while (true) {
    std::uint64_t kraft_sum = 0, bits = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      kraft_sum += std::uint64_t{1} << (limit - lengths[i]);
      bits += std::uint64_t{counts[i]} * lengths[i];
    }
    if (kraft_sum <= (std::uint64_t{1} << limit)) best = std::min(best, bits);
    std::size_t i = 0;
    while (i < lengths.size() && lengths[i] == limit) lengths[i++] = 1;
    if (i == lengths.size()) return best;
    ++lengths[i];
  }
}

void expect_complete_and_limited(const Counts& counts, const Lengths& lengths, unsigned limit) {
  for (unsigned s = 0; s < 256; ++s) {
    EXPECT_EQ(counts[s] == 0, lengths[s] == 0) << "symbol " << s;
    EXPECT_LE(lengths[s], limit) << "symbol " << s;
  }
  EXPECT_EQ(kraft(lengths, limit), std::uint64_t{1} << limit);
}

TEST(HuffLengths, OptimalAgainstEveryAssignmentOfSmallAlphabets) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const unsigned n = 2 + rng() % 5, limit = std::max(3u, static_cast<unsigned>(std::bit_width(n - 1)));
    std::vector<std::uint32_t> small(n);
    Counts counts{};
    for (unsigned i = 0; i < n; ++i) {
      small[i] = 1 + rng() % (trial % 2 ? 1000u : 8u) * (1u << (rng() % 12));
      counts[(i * 37 + trial) % 256] = small[i];
    }
    for (unsigned l = limit; l <= limit + 1; ++l) {
      const Lengths lengths = code_lengths(counts, l);
      expect_complete_and_limited(counts, lengths, l);
      EXPECT_EQ(cost(counts, lengths), brute_force_cost(small, l)) << "trial " << trial << ", limit " << l;
    }
  }
}

TEST(HuffLengths, UnlimitedWhereHuffmanFitsAndCompleteWhereItDoesNot) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 50; ++trial) {
    // Geometric counts: deep trees, so the 11-bit limit binds in most trials.
    Counts counts{};
    const unsigned used = 2 + rng() % 255;
    for (unsigned k = 0; k < used; ++k) counts[rng() % 256] = 1 + (1u << (rng() % 24)) + rng() % 7;
    const Lengths limited = code_lengths(counts);
    expect_complete_and_limited(counts, limited, kMaxLength);
    const Lengths wide = code_lengths(counts, 16);
    expect_complete_and_limited(counts, wide, 16);
    const bool huffman_fits = *std::max_element(wide.begin(), wide.end()) < 16;
    if (huffman_fits) {
      EXPECT_EQ(cost(counts, wide), huffman_cost(counts)) << "trial " << trial;
    }
    EXPECT_GE(cost(counts, limited), cost(counts, wide));
  }
}

TEST(HuffLengths, EveryByteAtTheLimitAndTooFewSymbols) {
  Counts all{};
  std::iota(all.begin(), all.end(), 1u);
  const Lengths lengths = code_lengths(all, 8);
  for (unsigned s = 0; s < 256; ++s) EXPECT_EQ(lengths[s], 8) << "symbol " << s;
  EXPECT_THROW(code_lengths(all, 7), std::logic_error);  // 256 symbols need 8 bits
  Counts one{};
  one[9] = 100;
  EXPECT_THROW(code_lengths(one), std::logic_error);
}

// ByteRange by its definition, against the portable kernel: ranges over the bytes whose low 7 bits
// are not zero, and flags for 0x00 and 0x80.
TEST(HuffByteRange, ScalarKernelMatchesTheDefinition) {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::uint8_t> plane(1 + rng() % 300);
    const unsigned band = rng() % 256, width = 1 + rng() % 40;
    for (auto& b : plane) b = static_cast<std::uint8_t>(rng() % 4 == 0 ? (rng() % 2) * 0x80 : band + rng() % width);
    ByteRange want{0xff, 0, 0x7f, 0, false, false};
    for (std::uint8_t b : plane) {
      const std::uint8_t b7 = b & 0x7f;
      want.zero |= b == 0;
      want.negative_zero |= b == 0x80;
      if (b7 == 0) continue;
      want.low = std::min(want.low, b), want.high = std::max(want.high, b);
      want.low7 = std::min(want.low7, b7), want.high7 = std::max(want.high7, b7);
    }
    const ByteRange got = scalar_huff_kernels().byte_range(plane.data(), plane.size());
    ASSERT_EQ(got.low, want.low) << "trial " << trial;
    ASSERT_EQ(got.high, want.high) << "trial " << trial;
    ASSERT_EQ(got.low7, want.low7) << "trial " << trial;
    ASSERT_EQ(got.high7, want.high7) << "trial " << trial;
    ASSERT_EQ(got.zero, want.zero) << "trial " << trial;
    ASSERT_EQ(got.negative_zero, want.negative_zero) << "trial " << trial;
    // Every byte present gets a count, sampled or not.
    const Counts counts = estimate_counts(plane.data(), plane.size(), got);
    for (std::uint8_t b : plane) ASSERT_GT(counts[b], 0u) << "byte " << int{b} << ", trial " << trial;
  }
}

// A plane of exponents 100-120 with zeros among them: no code for the exponents in between that
// never occur (each would take 2^-11 of the code space from those that do).
TEST(HuffByteRange, ZerosDoNotWidenTheRange) {
  std::vector<std::uint8_t> plane(1 << 17);
  std::mt19937 rng(29);
  for (auto& b : plane) b = static_cast<std::uint8_t>(rng() % 50 == 0 ? 0 : 100 + rng() % 21);
  const ByteRange range = scalar_huff_kernels().byte_range(plane.data(), plane.size());
  EXPECT_TRUE(range.zero);
  EXPECT_FALSE(range.negative_zero);
  EXPECT_EQ(range.low, 100);
  const Counts counts = estimate_counts(plane.data(), plane.size(), range);
  EXPECT_GT(counts[0], 0u);
  for (unsigned s = 1; s < 100; ++s) EXPECT_EQ(counts[s], 0u) << "symbol " << s;
  for (unsigned s = 121; s < 256; ++s) EXPECT_EQ(counts[s], 0u) << "symbol " << s;
}

TEST(HuffByteRange, SingleSymbolPlanes) {
  auto single = [](std::vector<std::uint8_t> plane) {
    return single_symbol(scalar_huff_kernels().byte_range(plane.data(), plane.size()));
  };
  EXPECT_TRUE(single({0, 0, 0}));
  EXPECT_TRUE(single({0x80, 0x80}));
  EXPECT_TRUE(single({0x42, 0x42}));
  EXPECT_TRUE(single({0xff}));
  EXPECT_FALSE(single({0, 0x80}));
  EXPECT_FALSE(single({0x42, 0}));
  EXPECT_FALSE(single({0x42, 0x80}));
  EXPECT_FALSE(single({0x42, 0x43}));
  EXPECT_FALSE(single({0x42, 0xc2}));
}

// Blocks only where a code per half or per quarter saves more than the tables cost.
TEST(HuffBlocks, ChosenWhereQuartersDiffer) {
  std::mt19937 rng(31);
  auto quarter = [&](unsigned base, unsigned spread) {
    Counts c{};
    for (int i = 0; i < 8192; ++i) ++c[base + rng() % spread * (rng() % 3)];
    return c;
  };
  const std::size_t n = 4 * 65536;  // sampled one in eight
  EXPECT_EQ(blocks_worth_coding({quarter(100, 9), quarter(100, 9), quarter(100, 9), quarter(100, 9)}, n), 1u);
  EXPECT_EQ(blocks_worth_coding({quarter(100, 9), quarter(100, 9), quarter(140, 9), quarter(140, 9)}, n), 2u);
  EXPECT_EQ(blocks_worth_coding({quarter(100, 9), quarter(120, 9), quarter(140, 9), quarter(160, 9)}, n), 4u);
  // A shift too small to pay for a second table.
  Counts a = quarter(100, 9), b = a;
  ++b[150];
  EXPECT_EQ(blocks_worth_coding({a, a, b, b}, n), 1u);
}

// The window table against decoding each window code by code, for codes of every shape: skewed
// (runs of four short codes), flat (one 8-bit code per window) and at the 11-bit limit.
TEST(HuffDecodeTable, EveryWindowDecodesAsCodeByCode) {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 200; ++trial) {
    Counts counts{};
    const unsigned used = 2 + rng() % 255;
    for (unsigned k = 0; k < used; ++k) counts[rng() % 256] = 1 + (trial % 3 == 0 ? 1000 : 1u << (rng() % 20));
    if (std::count_if(counts.begin(), counts.end(), [](std::uint32_t c) { return c != 0; }) < 2) continue;
    Codes codes{};
    canonical_codes(code_lengths(counts), codes);
    std::vector<DecodeEntry> table(kWindowMask + 1);
    build_decode_table(PairAlphabet{}, codes, table.data());  // a byte code: no pairs
    for (std::uint32_t window = 0; window <= kWindowMask; ++window) {
      DecodeEntry want = 0;
      unsigned used_bits = 0, n = 0, first = 0;
      while (n < kMaxBytesPerEntry) {
        int symbol = -1;  // the code at the window's next bits
        for (int s = 0; s < 256 && symbol < 0; ++s) {
          const std::uint32_t l = code_length(codes[s]);
          if (l && ((window >> used_bits) & ((1u << l) - 1)) == code_bits(codes[s])) symbol = s;
        }
        const unsigned l = code_length(codes[symbol]);
        if (used_bits + l > kMaxLength) break;
        if (n == 0) first = l;
        want |= static_cast<DecodeEntry>(symbol) << (8 * n++);
        used_bits += l;
      }
      want |=
          (DecodeEntry{first} << 32) | (DecodeEntry{1} << 40) | (DecodeEntry{used_bits} << 48) | (DecodeEntry{n} << 56);
      ASSERT_EQ(table[window], want) << "trial " << trial << ", window " << window;
    }
  }
}

}  // namespace
}  // namespace wirezip::codecs::huff
