#include "coders/huff_pairs.hpp"

#include <algorithm>
#include <functional>

#include "coders/bit_reader.hpp"

namespace wirezip::codecs::huff {
namespace {

constexpr unsigned kOther = kMaxPaired;  // the rank of a byte that does not pair
constexpr unsigned kSide = kMaxPaired + 1;
using Grid = std::array<std::uint32_t, kSide * kSide>;

// Counts of the samples' pairs by their bytes' ranks (kOther for a byte that does not pair).
Grid rank_grid(std::span<const PairSample> samples, const std::array<std::uint8_t, 256>& rank) {
  Grid grid{};
  for (const PairSample& sample : samples)
    for (auto [pair, count] : sample.pairs) grid[rank[pair & 0xff] * kSide + rank[pair >> 8]] += count;
  return grid;
}

}  // namespace

void PairSampler::sample(const std::uint8_t* src, std::size_t n, bool exact, PairSample& out) {
  // Two tables, for alternate pairs: a run of one pair would otherwise chain every count on the one
  // before it (a store, then a load of the same place).
  counts_.resize(2u << 16);
  // Room for every first seen: at most one per pair counted (two bytes) and per table place.
  seen_.resize(std::min<std::size_t>(n / 2, counts_.size()) + 1);
  std::size_t first_seen = 0;
  out.bytes.fill(0);
  out.pairs.clear();
  // The place is always written and kept only when new: a branch on "new" mispredicts on planes
  // with many distinct pairs, where about every other count is a first.
  auto count = [&](std::uint32_t at) {
    seen_[first_seen] = at;
    first_seen += counts_[at]++ == 0;
  };
  const std::size_t piece = exact ? n : kSamplePiece, every = exact ? n : kSampleEvery;
  for (std::size_t start = 0; start < n; start += every) {
    const std::size_t end = std::min(n, start + piece);
    std::size_t i = start;
    for (; i + 3 < end; i += 4) {
      count(load_le<std::uint16_t>(src + i));
      count(load_le<std::uint16_t>(src + i + 2) | 1u << 16);
    }
    if (i + 1 < end) count(load_le<std::uint16_t>(src + i)), i += 2;
    if (i < end) ++out.bytes[src[i]];  // a piece of odd length: its last byte
  }
  // Each pair seen, in the order first seen (once per table); its counter back to zero.
  for (std::uint32_t at : std::span(seen_).first(first_seen)) {
    const std::uint32_t c = counts_[at];
    const auto pair = static_cast<std::uint16_t>(at);
    counts_[at] = 0;
    out.bytes[pair & 0xff] += c;
    out.bytes[pair >> 8] += c;
    out.pairs.emplace_back(pair, c);
  }
}

PairAlphabet pair_alphabet(std::span<const std::uint8_t> bytes, std::span<const std::uint8_t> chosen) {
  PairAlphabet alphabet;
  const unsigned m = static_cast<unsigned>(bytes.size());
  alphabet.paired = m;
  alphabet.rank.fill(kMaxPaired);
  alphabet.symbol_of.fill(PairAlphabet::kNone);
  for (unsigned i = 0; i < m; ++i) {
    alphabet.bytes[i] = bytes[i];
    alphabet.rank[bytes[i]] = static_cast<std::uint8_t>(i);
  }
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < m; ++j) {
      const unsigned bit = i * m + j, cell = PairAlphabet::cell(i, j);
      if (!(chosen[bit / 8] >> (bit % 8) & 1)) continue;
      alphabet.symbol_of[cell] = static_cast<std::uint16_t>(alphabet.pair_count);
      alphabet.cell_of[alphabet.pair_count++] = static_cast<std::uint8_t>(cell);
    }
  return alphabet;
}

namespace {

// The bytes that may pair: the most counted, at most kMaxPaired of them (ties to the smaller byte,
// so the choice is the same everywhere).
std::vector<std::uint8_t> most_counted(const Counts& counts) {
  std::array<std::uint64_t, 256> keys;  // the count, then the byte's complement: larger is first
  for (unsigned s = 0; s < 256; ++s) keys[s] = std::uint64_t{counts[s]} << 8 | (255 - s);
  std::partial_sort(keys.begin(), keys.begin() + kMaxPaired, keys.end(), std::greater<>());
  std::vector<std::uint8_t> bytes;
  for (std::size_t k = 0; k < kMaxPaired && keys[k] >> 8 > 0; ++k)
    bytes.push_back(static_cast<std::uint8_t>(255 - (keys[k] & 0xff)));
  return bytes;
}

// The sample's counts of the alphabet's symbols, from its grid. The grid knows only how often a
// byte that does not pair occurs, not which: those occurrences are shared out in proportion to
// the byte counts.
std::vector<std::uint32_t> symbol_counts(const Grid& grid, const PairAlphabet& alphabet, const Counts& counts) {
  const std::size_t m = alphabet.paired;
  std::vector<std::uint32_t> sampled(alphabet.size());
  std::uint64_t others = 2 * std::uint64_t{grid[kOther * kSide + kOther]}, others_counted = 0;
  for (std::size_t i = 0; i < m; ++i) others += grid[i * kSide + kOther] + grid[kOther * kSide + i];
  for (unsigned s = 0; s < 256; ++s) others_counted += alphabet.rank[s] == kOther ? counts[s] : 0;
  for (unsigned s = 0; s < 256; ++s)
    if (alphabet.rank[s] == kOther && others_counted > 0)
      sampled[alphabet.byte_symbol(s)] =
          static_cast<std::uint32_t>((counts[s] * others + others_counted / 2) / others_counted);
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint8_t a = alphabet.bytes[i];
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint8_t b = alphabet.bytes[j];
      const std::uint32_t c = grid[i * kSide + j];
      if (alphabet.pairs(a, b)) {
        sampled[alphabet.pair_symbol(a, b)] = c;
      } else {
        sampled[alphabet.byte_symbol(a)] += c;
        sampled[alphabet.byte_symbol(b)] += c;
      }
    }
    // Paired with a byte that does not pair: first, then second.
    sampled[alphabet.byte_symbol(a)] += grid[i * kSide + kOther] + grid[kOther * kSide + i];
  }
  return sampled;
}

}  // namespace

std::optional<PairCode> pair_code_worth_using(std::span<const PairSample> samples, std::size_t n, const Counts& counts,
                                              const Lengths& byte_lengths) {
  // A short block's sample is too thin to fit a pair code to (and its table costs more).
  if (n < kMinPairedBytes) return std::nullopt;
  const std::vector<std::uint8_t> paired = most_counted(counts);
  const std::size_t m = paired.size();
  if (m < 2) return std::nullopt;
  std::array<std::uint8_t, 256> rank;
  rank.fill(kOther);
  for (std::size_t i = 0; i < m; ++i) rank[paired[i]] = static_cast<std::uint8_t>(i);
  const Grid grid = rank_grid(samples, rank);
  std::uint64_t sampled_pairs = 0;
  for (std::uint32_t c : grid) sampled_pairs += c;

  // The pairs the sample saw (at least once in 2^14 pairs) get codes; the others are coded as their
  // two bytes. A pair never seen would still take 2^-11 of the code space.
  PairCode code;
  code.chosen.assign(chosen_bytes(m), 0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint32_t c = grid[i * kSide + j];
      if (c > 0 && std::uint64_t{c} << 14 >= sampled_pairs) code.chosen[(i * m + j) / 8] |= 1 << ((i * m + j) % 8);
    }
  code.alphabet = pair_alphabet(paired, code.chosen);
  const PairAlphabet& alphabet = code.alphabet;
  if (alphabet.pair_count == 0) return std::nullopt;
  const std::vector<std::uint32_t> sampled = symbol_counts(grid, alphabet, counts);

  // Every pair with a code of its own, and every byte the byte code has, needs a code: each gets a
  // count of at least 2^-11 of the total, which the length limit gives it anyway, so that Huffman's
  // own lengths mostly keep to the limit (limited_code_lengths' fast path).
  std::uint64_t total = 0;
  for (std::uint32_t c : sampled) total += c;
  const auto floor = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, total >> kMaxLength));
  std::vector<std::uint32_t> floored = sampled;
  for (std::size_t k = 0; k < alphabet.pair_symbols(); ++k) floored[k] = std::max(floored[k], floor);
  for (unsigned s = 0; s < 256; ++s) {
    std::uint32_t& c = floored[alphabet.byte_symbol(static_cast<std::uint8_t>(s))];
    if (counts[s]) c = std::max(c, floor);
  }
  code.lengths = limited_code_lengths(floored, kMaxLength);

  // Both codes' bits on the sample, in integers so that every architecture decides alike (the
  // products below are taken in 128 bits: a plane may hold up to 2^32 bytes). The pair
  // code's lengths were fitted to this sample, which flatters it: each pair symbol is a parameter,
  // charged log2(e) ~ 1.443 bits (Akaike's criterion); without the charge, thinly sampled blocks
  // chose pairs that coded them worse.
  std::int64_t byte_bits = 0, pair_bits = (1443 * std::int64_t{alphabet.pair_count} + 999) / 1000, sampled_bytes = 0;
  for (std::size_t k = 0; k < sampled.size(); ++k) {
    const std::int64_t c = sampled[k];
    pair_bits += c * code.lengths[k];
    if (k < alphabet.pair_symbols()) {
      const unsigned cell = alphabet.cell_of[k];
      byte_bits +=
          c * (byte_lengths[alphabet.bytes[cell / kMaxPaired]] + byte_lengths[alphabet.bytes[cell % kMaxPaired]]);
      sampled_bytes += 2 * c;
    } else {
      byte_bits += c * byte_lengths[k - alphabet.pair_symbols()];
      sampled_bytes += c;
    }
  }
  if (sampled_bytes == 0) return std::nullopt;

  // In the block's bits (the sample's times n / sampled_bytes): the saving must beat the pair
  // table's extra bytes (m + 1 of header, the chosen bits, 4 bits per pair's length) and a margin
  // of 0.2% of the byte code's bits for the sample's noise.
  __extension__ using Wide = __int128;  // GCC and Clang on every 64-bit target
  const auto block_bytes = static_cast<Wide>(n);
  const Wide table = 8 * static_cast<Wide>(m + 1 + chosen_bytes(m)) + 4 * Wide{alphabet.pair_count};
  if ((byte_bits - pair_bits) * block_bytes <= table * sampled_bytes + byte_bits * block_bytes / 500)
    return std::nullopt;
  return code;
}

// The encoder does one lookup per two bytes. Pairs with a byte that has no code are never read.
void build_pair_codes(const PairAlphabet& alphabet, std::span<const std::uint32_t> codes, PairCodes& pairs) {
  pairs.bits.resize(1u << 16);
  pairs.lengths.resize(1u << 16);
  std::array<std::uint8_t, 256> present;
  int m = 0;
  for (int s = 0; s < 256; ++s)
    if (codes[alphabet.byte_symbol(static_cast<std::uint8_t>(s))]) present[m++] = static_cast<std::uint8_t>(s);
  for (int i = 0; i < m; ++i) {
    const std::uint8_t a = present[i];
    const std::uint32_t first = codes[alphabet.byte_symbol(a)];
    for (int j = 0; j < m; ++j) {
      const std::uint8_t b = present[j];
      const unsigned index = a | (b << 8);
      if (alphabet.pairs(a, b)) {
        const std::uint32_t pair = codes[alphabet.pair_symbol(a, b)];
        pairs.bits[index] = code_bits(pair);
        pairs.lengths[index] = static_cast<std::uint8_t>(code_length(pair));
      } else {
        const std::uint32_t second = codes[alphabet.byte_symbol(b)];
        pairs.bits[index] = code_bits(first) | (code_bits(second) << code_length(first));
        pairs.lengths[index] = static_cast<std::uint8_t>(code_length(first) + code_length(second));
      }
    }
  }
}

void build_decode_table(const PairAlphabet& alphabet, std::span<const std::uint32_t> codes, DecodeEntry* table,
                        void (*entries)(const FirstCode*, DecodeEntry*)) {
  std::vector<WindowSymbol> symbols;
  for (unsigned k = 0; k < alphabet.pair_count; ++k) {
    const unsigned cell = alphabet.cell_of[k];
    const std::uint8_t a = alphabet.bytes[cell / kMaxPaired], b = alphabet.bytes[cell % kMaxPaired];
    symbols.push_back({codes[k], static_cast<std::uint16_t>(a | (b << 8)), 2});
  }
  for (unsigned s = 0; s < 256; ++s)
    if (const std::uint32_t code = codes[alphabet.byte_symbol(static_cast<std::uint8_t>(s))])
      symbols.push_back({code, static_cast<std::uint16_t>(s), 1});
  build_decode_table(symbols, table, entries);
}

}  // namespace wirezip::codecs::huff
