#include "coders/huff_tables.hpp"

#include <algorithm>
#include <cstring>
#include <queue>
#include <stdexcept>

namespace wirezip::codecs::huff {

Counts histogram(const std::uint8_t* src, std::size_t n, std::size_t block, std::size_t every) {
  // Eight sub-histograms fed from one 8-byte load: a skewed plane (a float's exponent byte repeats a
  // few values) would otherwise serialise on the load-increment-store of one hot counter.
  std::array<std::array<std::uint32_t, 256>, 8> sub{};
  for (std::size_t start = 0; start < n; start += every) {
    const std::size_t end = std::min(n, start + block);
    std::size_t i = start;
    for (; i + 8 <= end; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, src + i, 8);
      for (unsigned k = 0; k < 8; ++k) ++sub[k][(word >> (8 * k)) & 0xff];
    }
    for (; i < end; ++i) ++sub[0][src[i]];
  }
  for (int s = 0; s < 256; ++s)
    for (unsigned k = 1; k < 8; ++k) sub[0][s] += sub[k][s];
  return sub[0];
}

Counts estimate_counts(const std::uint8_t* src, std::size_t n, const ByteRange& range) {
  // Contiguous 256-byte blocks, one in eight: a strided sample would see only one byte position of
  // data with a period of 2 or 4 (interleaved bf16 or fp32).
  constexpr std::size_t kExactBelow = 64 << 10, kBlock = 256, kEvery = 8 * kBlock;
  Counts counts = n < kExactBelow ? histogram(src, n, n, n) : histogram(src, n, kBlock, kEvery);
  for (unsigned s = 0; s < 256; ++s) {
    const unsigned s7 = s & 0x7f;
    if (s >= range.low && s <= range.high && s7 >= range.low7 && s7 <= range.high7)
      counts[s] = std::max<std::uint32_t>(counts[s], 1);
  }
  return counts;
}

// Huffman code lengths; when the longest exceeds kMaxLength, halve the counts (keeping every used
// symbol at >= 1) and rebuild: rare symbols get shorter codes at a negligible cost in size.
Lengths code_lengths(Counts count) {
  // A code needs two symbols; callers store one-symbol planes another way.
  if (std::count_if(count.begin(), count.end(), [](std::uint32_t c) { return c != 0; }) < 2)
    throw std::logic_error("huff: code_lengths needs at least two symbols");
  while (true) {
    using Node = std::pair<std::uint64_t, int>;  // weight, node id
    std::priority_queue<Node, std::vector<Node>, std::greater<>> queue;
    std::array<int, 511> parent{};
    for (int s = 0; s < 256; ++s)
      if (count[s]) queue.emplace(count[s], s);
    int next = 256;
    while (queue.size() > 1) {
      auto [wa, a] = queue.top();
      queue.pop();
      auto [wb, b] = queue.top();
      queue.pop();
      parent[a] = parent[b] = next;
      queue.emplace(wa + wb, next++);
    }
    const int root = next - 1;
    Lengths lengths{};
    unsigned longest = 0;
    for (int s = 0; s < 256; ++s) {
      if (!count[s]) continue;
      unsigned depth = 0;
      for (int node = s; node != root; node = parent[node]) ++depth;
      lengths[s] = static_cast<std::uint8_t>(depth);
      longest = std::max(longest, depth);
    }
    if (longest <= kMaxLength) return lengths;
    for (auto& c : count) c = c ? std::max<std::uint32_t>(1, c / 2) : 0;
  }
}

// Canonical codes, bit-reversed for LSB-first streams; entry = code | length << 24.
Codes canonical_codes(const Lengths& lengths) {
  std::array<std::uint32_t, kMaxLength + 1> next{}, per_length{};
  for (std::uint8_t l : lengths) ++per_length[l];
  per_length[0] = 0;
  std::uint32_t code = 0;
  for (unsigned l = 1; l <= kMaxLength; ++l) {
    code = (code + per_length[l - 1]) << 1;
    next[l] = code;
  }
  Codes codes{};
  for (int s = 0; s < 256; ++s) {
    const unsigned l = lengths[s];
    if (!l) continue;
    const std::uint32_t canonical = next[l]++;
    std::uint32_t reversed = 0;
    for (unsigned b = 0; b < l; ++b) reversed |= ((canonical >> b) & 1u) << (l - 1 - b);
    codes[s] = reversed | (l << 24);
  }
  return codes;
}

// The encoder does one lookup per two symbols. Pairs with an absent symbol are never read.
void build_pair_codes(const Codes& codes, PairCodes& pairs) {
  pairs.bits.resize(1u << 16);
  pairs.lengths.resize(1u << 16);
  std::array<int, 256> present;
  int m = 0;
  for (int s = 0; s < 256; ++s)
    if (codes[s]) present[m++] = s;
  for (int i = 0; i < m; ++i) {
    const std::uint32_t first = codes[present[i]];
    for (int j = 0; j < m; ++j) {
      const std::uint32_t second = codes[present[j]];
      const unsigned index = present[i] | (present[j] << 8);
      pairs.bits[index] = code_bits(first) | (code_bits(second) << code_length(first));
      pairs.lengths[index] = static_cast<std::uint8_t>(code_length(first) + code_length(second));
    }
  }
}

// Fills the decode table: for each 11-bit window, the run of whole codes it starts with.
void build_decode_table(const Codes& codes, DecodeEntry* table) {
  std::array<std::uint16_t, kWindowMask + 1> single{};  // symbol | length << 8
  for (int s = 0; s < 256; ++s) {
    const std::uint32_t l = code_length(codes[s]);
    for (std::uint32_t fill = 0; l && fill < ((kWindowMask + 1) >> l); ++fill)
      single[code_bits(codes[s]) | (fill << l)] = static_cast<std::uint16_t>(s | (l << 8));
  }
  for (std::uint32_t window = 0; window <= kWindowMask; ++window) {
    DecodeEntry entry = 0;
    unsigned used = 0, n = 0;
    while (n < kMaxSymbolsPerEntry) {
      const std::uint16_t next = single[(window >> used) & (kWindowMask)];
      const unsigned l = next >> 8;
      if (used + l > kMaxLength) break;  // the code runs past the bits this window knows
      entry |= static_cast<DecodeEntry>(next & 0xff) << (8 * n++);
      used += l;
    }
    const unsigned first = single[window] >> 8;
    table[window] = entry | (DecodeEntry{first} << 32) | (DecodeEntry{used} << 48) | (DecodeEntry{n} << 56);
  }
}

}  // namespace wirezip::codecs::huff
