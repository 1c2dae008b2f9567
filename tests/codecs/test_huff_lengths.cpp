// The Huffman code builder: lengths under the limit form a complete prefix code (what the window
// table needs) and cost no more than any other code under the same limit.
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

}  // namespace
}  // namespace wirezip::codecs::huff
