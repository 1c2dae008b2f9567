#include "coders/huff_tables.hpp"

#include "coders/huff_pairs.hpp"

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
  return exact ? histogram(src, n, n, n) : histogram(src, n, kSamplePiece, kSampleEvery);
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

namespace {

// Huffman's code lengths (no limit) for symbols sorted by count (keys count << 16 | symbol), by the
// two-queue method: leaves are taken in count order and the merged nodes are made in weight order,
// so the two lightest are always at the heads of the two queues.
std::vector<std::uint8_t> huffman_lengths(std::span<const std::uint64_t> sorted, std::size_t symbols) {
  const std::size_t n = sorted.size(), nodes = 2 * n - 1;
  std::vector<std::uint64_t> weight(nodes);
  std::vector<std::uint32_t> parent(nodes);
  for (std::size_t k = 0; k < n; ++k) weight[k] = sorted[k] >> 16;
  std::size_t leaf = 0, merged = n;
  auto lightest = [&](std::size_t made) {
    const bool take_leaf = leaf < n && (merged == made || weight[leaf] <= weight[merged]);
    return take_leaf ? leaf++ : merged++;
  };
  for (std::size_t made = n; made < nodes; ++made) {
    const std::size_t a = lightest(made), b = lightest(made);
    weight[made] = weight[a] + weight[b];
    parent[a] = parent[b] = static_cast<std::uint32_t>(made);
  }
  std::vector<std::uint8_t> depth(nodes), lengths(symbols);
  for (std::size_t k = nodes - 1; k-- > 0;) depth[k] = static_cast<std::uint8_t>(std::min(depth[parent[k]] + 1, 255));
  for (std::size_t k = 0; k < n; ++k) lengths[sorted[k] & 0xffff] = depth[k];
  return lengths;
}

}  // namespace

// Optimal lengths under the limit by package-merge (Larmore and Hirschberg): at each of
// max_length levels, from the deepest up, the symbols sorted by count are merged with the pairs
// ("packages") of the level below; the cheapest 2n - 2 items of the top level fix every length,
// since a symbol's length is the number of levels at which it is among the items chosen. Only
// how many leaves each level's chosen prefix holds is needed: leaves are taken in count order.
std::vector<std::uint8_t> limited_code_lengths(std::span<const std::uint32_t> count, unsigned max_length) {
  if (count.size() > 65536) throw std::logic_error("huff: code_lengths: more than 65536 symbols");
  // The symbols in count order (ties: the smaller symbol first), as one sort of count:symbol keys.
  std::vector<std::uint64_t> sorted;
  sorted.reserve(count.size());
  for (std::size_t s = 0; s < count.size(); ++s)
    if (count[s]) sorted.push_back(std::uint64_t{count[s]} << 16 | s);
  const std::size_t n = sorted.size();
  // A code needs two symbols; callers store one-symbol planes another way.
  if (n < 2) throw std::logic_error("huff: code_lengths needs at least two symbols");
  if (max_length > 16 || (std::size_t{1} << max_length) < n)
    throw std::logic_error("huff: code_lengths: limit too short");
  std::sort(sorted.begin(), sorted.end());
  // Where Huffman's own code keeps to the limit it is optimal under it too; package-merge, ten
  // times the work, only where it does not.
  std::vector<std::uint8_t> lengths = huffman_lengths(sorted, count.size());
  if (*std::max_element(lengths.begin(), lengths.end()) <= max_length) return lengths;

  // Per level: how many leaves the first k items of its list hold (a list has at most 2n - 1
  // items: n leaves and fewer than n packages). The list's weights are needed only to make the
  // next level's packages, which replace them in place.
  const std::size_t stride = 2 * n;
  std::vector<std::uint32_t> leaves_before(max_length * stride);
  std::vector<std::uint64_t> list(stride), packages(stride);
  std::size_t package_count = 0;
  for (unsigned j = 0; j < max_length; ++j) {
    std::uint32_t* leaves = leaves_before.data() + j * stride;
    std::size_t leaf = 0, package = 0, items = 0;
    leaves[0] = 0;
    while (leaf < n || package < package_count) {
      const bool take_leaf = package == package_count || (leaf < n && (sorted[leaf] >> 16) <= packages[package]);
      list[items++] = take_leaf ? sorted[leaf++] >> 16 : packages[package++];
      leaves[items] = static_cast<std::uint32_t>(leaf);
    }
    package_count = items / 2;
    for (std::size_t k = 0; k < package_count; ++k) packages[k] = list[2 * k] + list[2 * k + 1];
  }
  std::fill(lengths.begin(), lengths.end(), 0);
  std::size_t chosen = 2 * n - 2;
  for (unsigned j = max_length; j-- > 0 && chosen > 0;) {
    const std::size_t leaves = leaves_before[j * stride + chosen];
    for (std::size_t k = 0; k < leaves; ++k) ++lengths[sorted[k] & 0xffff];
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

namespace {
// The 16 low bits of x in reverse order.
std::uint32_t reverse16(std::uint32_t x) {
  x = ((x & 0x5555) << 1) | ((x >> 1) & 0x5555);
  x = ((x & 0x3333) << 2) | ((x >> 2) & 0x3333);
  x = ((x & 0x0f0f) << 4) | ((x >> 4) & 0x0f0f);
  return ((x & 0x00ff) << 8) | ((x >> 8) & 0x00ff);
}
}  // namespace

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
    codes[s] = (reverse16(next[l]++) >> (16 - l)) | (l << 24);
  }
}

void build_pair_codes(std::span<const std::uint32_t> codes, PairCodes& pairs) {
  build_pair_codes(PairAlphabet{}, codes, pairs);  // no pairs: each entry is two byte codes
}

// A code of length l starts every window whose low l bits are its bits (LSB-first): 2^(11 - l) of them.
void first_codes(std::span<const WindowSymbol> symbols, FirstCodes& first) {
  first.fill(0);
  for (const WindowSymbol& s : symbols) {
    const std::uint32_t l = code_length(s.code);
    const std::uint32_t bytes = s.width == 1 ? s.bytes & 0xff : s.bytes;
    const FirstCode packed = bytes | std::uint32_t{s.width} << 16 | l << 24;
    for (std::uint32_t fill = 0; l && fill < ((kWindowMask + 1) >> l); ++fill)
      first[code_bits(s.code) | (fill << l)] = packed;
  }
}

namespace {

// window_entry, its stops kept only where asked for (the portable loop has no use for them).
template <bool kStops>
DecodeEntry run_of(const FirstCode* first, std::uint32_t window, std::uint32_t* stops) {
  DecodeEntry entry = 0;
  unsigned used = 0, n = 0, codes = 0;
  std::uint32_t run = kNoStop * 0x01010101u;
  while (true) {
    const FirstCode next = first[(window >> used) & kWindowMask];
    const unsigned length = next >> 24, width = (next >> 16) & 0xff;
    // Stop at a code that runs past the bits this window knows, or past four bytes (or at no code:
    // an incomplete code, which callers refuse).
    if (length == 0 || used + length > kMaxLength || n + width > kMaxBytesPerEntry) break;
    entry |= static_cast<DecodeEntry>(next & 0xffff) << (8 * n);
    n += width;
    used += length;
    if constexpr (kStops) run = (run & ~(0xffu << (8 * codes))) | (used | n << 4) << (8 * codes), ++codes;
  }
  if constexpr (kStops) *stops = run;
  return entry | (DecodeEntry{first[window] >> 24} << 32) | (DecodeEntry{(first[window] >> 16) & 0xff} << 40) |
         (DecodeEntry{used} << 48) | (DecodeEntry{n} << 56);
}

}  // namespace

void window_entries(const FirstCode* first, DecodeEntry* table) {
  for (std::uint32_t window = 0; window <= kWindowMask; ++window) table[window] = run_of<false>(first, window, nullptr);
}

DecodeEntry window_entry(const FirstCode* first, std::uint32_t window, std::uint32_t& stops) {
  return run_of<true>(first, window, &stops);
}

void build_decode_table(std::span<const WindowSymbol> symbols, DecodeEntry* table,
                        void (*entries)(const FirstCode*, DecodeEntry*)) {
  FirstCodes first;
  first_codes(symbols, first);
  entries(first.data(), table);
}

bool complete_code(std::span<const std::uint8_t> lengths) {
  std::uint64_t kraft = 0;
  for (std::uint8_t l : lengths) {
    if (l > kMaxLength) return false;
    if (l) kraft += 1u << (kMaxLength - l);
  }
  return kraft == (1u << kMaxLength);
}

}  // namespace wirezip::codecs::huff
