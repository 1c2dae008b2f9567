#include "coders/deflate_block.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "coders/huff_tables.hpp"

namespace wirezip::codecs::deflate {
namespace {

constexpr unsigned kMaxCodeLengthCode = 7;  // lengths of the code-length code fit in 3 bits
// The order in which the header lists the code-length code's lengths (RFC 1951 3.2.7).
constexpr std::array<std::uint8_t, 19> kCodeLengthOrder = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                                           11, 4, 12, 3, 13, 2, 14, 1, 15};

struct CodeLengthSymbol {
  std::uint8_t symbol;  // 0..15 a length, 16 repeat the previous, 17 and 18 runs of zeros
  std::uint8_t extra;   // the run length's extra bits
};

// Run-length codes the lengths as RFC 1951 describes (and zlib's send_tree does).
std::vector<CodeLengthSymbol> run_length_code(std::span<const std::uint8_t> lengths) {
  std::vector<CodeLengthSymbol> out;
  for (std::size_t i = 0; i < lengths.size();) {
    const std::uint8_t value = lengths[i];
    std::size_t run = 1;
    while (i + run < lengths.size() && lengths[i + run] == value) ++run;
    i += run;
    if (value == 0) {
      for (; run >= 11; run -= std::min<std::size_t>(run, 138))
        out.push_back({18, static_cast<std::uint8_t>(std::min<std::size_t>(run, 138) - 11)});
      if (run >= 3) out.push_back({17, static_cast<std::uint8_t>(run - 3)}), run = 0;
    } else {
      out.push_back({value, 0});
      for (--run; run >= 3; run -= std::min<std::size_t>(run, 6))
        out.push_back({16, static_cast<std::uint8_t>(std::min<std::size_t>(run, 6) - 3)});
    }
    for (; run > 0; --run) out.push_back({value, 0});
  }
  return out;
}

// Lengths of the code-length code: optimal with none over 7 bits.
std::array<std::uint8_t, 19> code_length_lengths(const std::vector<CodeLengthSymbol>& symbols) {
  huff::Counts counts{};
  for (const CodeLengthSymbol& s : symbols) ++counts[s.symbol];
  // A code needs two symbols; a second one that is never sent costs a few header bits.
  if (std::count_if(counts.begin(), counts.begin() + 19, [](std::uint32_t c) { return c != 0; }) < 2)
    counts[counts[0] ? 1 : 0] = 1;
  const huff::Lengths lengths = huff::code_lengths(counts, kMaxCodeLengthCode);
  std::array<std::uint8_t, 19> out{};
  std::copy_n(lengths.begin(), 19, out.begin());
  return out;
}

}  // namespace

void BitWriter::put(std::uint32_t value, unsigned bits) {
  for (unsigned b = 0; b < bits; ++b, ++bits_) {
    if (bits_ % 8 == 0) bytes_.push_back(0);
    bytes_.back() |= static_cast<std::uint8_t>(((value >> b) & 1u) << (bits_ % 8));
  }
}

void write_block_header(const std::array<std::uint8_t, kLiterals>& lengths, BitWriter& out) {
  std::array<std::uint8_t, kLiterals + 2> all{};
  std::copy(lengths.begin(), lengths.end(), all.begin());
  all[kLiterals] = all[kLiterals + 1] = 1;  // distance codes 0 and 1, never used
  const std::vector<CodeLengthSymbol> symbols = run_length_code(all);
  const std::array<std::uint8_t, 19> cl_lengths = code_length_lengths(symbols);
  std::array<std::uint32_t, 19> cl_codes{};
  huff::canonical_codes(cl_lengths, cl_codes);  // RFC 1951 3.2.2's codes, bit-reversed for LSB-first
  std::size_t listed = 19;  // the header may leave off trailing zero lengths, down to 4
  while (listed > 4 && cl_lengths[kCodeLengthOrder[listed - 1]] == 0) --listed;

  out.put(1, 1);                 // BFINAL: the only block
  out.put(2, 2);                 // BTYPE: dynamic Huffman
  out.put(kLiterals - 257, 5);   // HLIT: 257 literal/length codes
  out.put(2 - 1, 5);             // HDIST: 2 distance codes
  out.put(static_cast<std::uint32_t>(listed - 4), 4);  // HCLEN
  for (std::size_t i = 0; i < listed; ++i) out.put(cl_lengths[kCodeLengthOrder[i]], 3);
  constexpr std::array<unsigned, 3> kExtraBits = {2, 3, 7};  // for symbols 16, 17, 18
  for (const CodeLengthSymbol& s : symbols) {
    out.put(huff::code_bits(cl_codes[s.symbol]), huff::code_length(cl_codes[s.symbol]));
    if (s.symbol >= 16) out.put(s.extra, kExtraBits[s.symbol - 16]);
  }
}

std::uint64_t append_bits(std::uint8_t* dst, std::uint64_t position, const std::uint8_t* src, std::uint64_t bits) {
  const unsigned shift = position % 8;
  std::uint8_t* out = dst + position / 8;
  const std::size_t bytes = (bits + 7) / 8;
  if (shift == 0) {
    std::memcpy(out, src, bytes);
    return position + bits;
  }
  // Eight bytes at a time: each output word is the carried high bits of the last input word below
  // this one's bits shifted up.
  std::uint64_t carry = out[0] & ((1u << shift) - 1);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, src + i, 8);
    if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
    std::uint64_t merged = carry | (word << shift);
    if constexpr (std::endian::native == std::endian::big) merged = __builtin_bswap64(merged);
    std::memcpy(out + i, &merged, 8);
    carry = word >> (64 - shift);
  }
  for (; i < bytes; ++i) {
    const std::uint64_t merged = carry | (static_cast<std::uint64_t>(src[i]) << shift);
    out[i] = static_cast<std::uint8_t>(merged);
    carry = merged >> 8;
  }
  out[bytes] = static_cast<std::uint8_t>(carry);
  return position + bits;
}

}  // namespace wirezip::codecs::deflate
