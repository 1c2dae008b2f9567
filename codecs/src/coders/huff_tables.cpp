#include "coders/huff_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
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

Counts sample_counts(const std::uint8_t* src, std::size_t n, bool exact) {
  // Contiguous 256-byte blocks, one in eight: a strided sample would see only one byte position of
  // data with a period of 2 or 4 (interleaved bf16 or fp32).
  constexpr std::size_t kBlock = 256, kEvery = 8 * kBlock;
  return exact ? histogram(src, n, n, n) : histogram(src, n, kBlock, kEvery);
}

Counts estimate_counts(const std::uint8_t* src, std::size_t n, const ByteRange& range) {
  Counts counts = sample_counts(src, n, n < kExactBelow);
  give_every_byte_a_count(counts, range);
  return counts;
}

void give_every_byte_a_count(Counts& counts, const ByteRange& range) {
  for (unsigned s = 0; s < 256; ++s) {
    const unsigned s7 = s & 0x7f;
    const bool in_range = s7 != 0 && s >= range.low && s <= range.high && s7 >= range.low7 && s7 <= range.high7;
    if (in_range || (s == 0 && range.zero) || (s == 0x80 && range.negative_zero))
      counts[s] = std::max<std::uint32_t>(counts[s], 1);
  }
}

ByteRange merge(const ByteRange& a, const ByteRange& b) {
  return {std::min(a.low, b.low),     std::max(a.high, b.high), std::min(a.low7, b.low7),
          std::max(a.high7, b.high7), a.zero || b.zero,         a.negative_zero || b.negative_zero};
}

namespace {

// Order-0 bits of the counted symbols, and what a table for them costs (format 3 in huff.cpp: its
// symbol range at 4 bits each, 3 bytes and the stream sizes), in the same units.
double order0_bits(const Counts& counts) {
  double total = 0, bits = 0;
  for (std::uint32_t c : counts) total += c;
  for (std::uint32_t c : counts)
    if (c) bits += c * std::log2(total / c);
  return bits;
}
double table_bits(const Counts& counts) {
  int first = 0, last = 255;
  while (first < 255 && !counts[first]) ++first;
  while (last > first && !counts[last]) --last;
  return 8.0 * (3 + (last - first + 2) / 2 + 12);
}

}  // namespace

void add_counts(Counts& into, const Counts& counts) {
  for (int s = 0; s < 256; ++s) into[s] += counts[s];
}

std::size_t blocks_worth_coding(const std::array<Counts, 4>& quarters, std::size_t n) {
  std::array<Counts, 2> halves{};
  Counts all{};
  for (std::size_t q = 0; q < 4; ++q) {
    add_counts(halves[q / 2], quarters[q]);
    add_counts(all, quarters[q]);
  }
  std::uint64_t sampled = 0;
  for (std::uint32_t c : all) sampled += c;
  if (sampled == 0) return 1;
  // The counts are of a sample; the tables' bytes are whole.
  const double per_sampled = static_cast<double>(n) / static_cast<double>(sampled);
  auto cost = [&](const Counts& c) { return per_sampled * order0_bits(c) + table_bits(c); };
  const double one = cost(all), two = cost(halves[0]) + cost(halves[1]);
  double four = 0;
  for (const Counts& q : quarters) four += cost(q);
  const double best = std::min(two, four);
  if (best > one * 0.998) return 1;
  return four <= two ? 4 : 2;
}

bool single_symbol(const ByteRange& range) {
  if (range.low <= range.high) return range.low == range.high && !range.zero && !range.negative_zero;
  return range.zero != range.negative_zero;  // only zeros: of one sign
}

// Optimal lengths under the limit by package-merge (Larmore and Hirschberg): at each of
// max_length levels, from the deepest up, the symbols sorted by count are merged with the pairs
// ("packages") of the level below; the cheapest 2n - 2 items of the top level fix every length,
// since a symbol's length is the number of levels at which it is among the items chosen. Only
// how many leaves each level's chosen prefix holds is needed: leaves are taken in count order.
std::vector<std::uint8_t> limited_code_lengths(std::span<const std::uint32_t> count, unsigned max_length) {
  if (count.size() > 65536) throw std::logic_error("huff: code_lengths: more than 65536 symbols");
  std::vector<std::uint16_t> symbols;
  for (std::size_t s = 0; s < count.size(); ++s)
    if (count[s]) symbols.push_back(static_cast<std::uint16_t>(s));
  const std::size_t n = symbols.size();
  // A code needs two symbols; callers store one-symbol planes another way.
  if (n < 2) throw std::logic_error("huff: code_lengths needs at least two symbols");
  if (max_length > 16 || (std::size_t{1} << max_length) < n)
    throw std::logic_error("huff: code_lengths: limit too short");
  std::stable_sort(symbols.begin(), symbols.end(),
                   [&](std::uint16_t a, std::uint16_t b) { return count[a] < count[b]; });

  // Per level: how many leaves the first k items of its list hold. The list's weights are needed
  // only to make the next level's packages.
  std::vector<std::vector<std::uint32_t>> leaves_before(max_length);
  std::vector<std::uint64_t> list, packages;
  for (unsigned j = 0; j < max_length; ++j) {
    auto& leaves = leaves_before[j];
    list.clear();
    leaves.assign(1, 0);
    std::size_t leaf = 0, package = 0;
    while (leaf < n || package < packages.size()) {
      const bool take_leaf = package == packages.size() || (leaf < n && count[symbols[leaf]] <= packages[package]);
      list.push_back(take_leaf ? count[symbols[leaf++]] : packages[package++]);
      leaves.push_back(static_cast<std::uint32_t>(leaf));
    }
    packages.clear();
    for (std::size_t k = 0; k + 1 < list.size(); k += 2) packages.push_back(list[k] + list[k + 1]);
  }
  std::vector<std::uint8_t> lengths(count.size());
  std::size_t chosen = 2 * n - 2;
  for (unsigned j = max_length; j-- > 0 && chosen > 0;) {
    const std::size_t leaves = leaves_before[j][chosen];
    for (std::size_t k = 0; k < leaves; ++k) ++lengths[symbols[k]];
    chosen = 2 * (chosen - leaves);
  }
  return lengths;
}

Lengths code_lengths(const Counts& count, unsigned max_length) {
  const std::vector<std::uint8_t> lengths = limited_code_lengths(count, max_length);
  Lengths out{};
  std::copy(lengths.begin(), lengths.end(), out.begin());
  return out;
}

void canonical_codes(std::span<const std::uint8_t> lengths, std::span<std::uint32_t> codes) {
  std::array<std::uint32_t, 17> next{}, per_length{};
  for (std::uint8_t l : lengths) ++per_length[l];
  per_length[0] = 0;
  std::uint32_t code = 0;
  for (unsigned l = 1; l <= 16; ++l) {
    code = (code + per_length[l - 1]) << 1;
    next[l] = code;
  }
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    const unsigned l = lengths[s];
    codes[s] = 0;
    if (!l) continue;
    const std::uint32_t canonical = next[l]++;
    std::uint32_t reversed = 0;
    for (unsigned b = 0; b < l; ++b) reversed |= ((canonical >> b) & 1u) << (l - 1 - b);
    codes[s] = reversed | (l << 24);
  }
}

Codes canonical_codes(const Lengths& lengths) {
  Codes codes{};
  canonical_codes(lengths, codes);
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
