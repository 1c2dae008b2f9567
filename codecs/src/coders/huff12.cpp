// wirezip's Huffman coder for whole bf16 chunks. Each element's 12 bits below the sign (the 8
// exponent bits and the top 4 mantissa bits) are one symbol of a canonical Huffman code of at most
// 12 bits; the sign and the low 3 mantissa bits, near-random in weights, are stored as they are,
// two elements to a byte. Coding the exponent together with the mantissa's top bits takes what an
// exponent-plane coder leaves behind: the skew of the mantissa inside an octave, and Huffman's
// whole-bit loss, smaller over a larger alphabet (docs/CODECS.md).
//
// A coded chunk of n bytes: m = n / 2 little-endian elements, q = m / 4 rounded down to even.
//   0 (no element) | the n % 2 tail byte
//   1 (coded) | u16 first | u16 k | 4-bit code lengths (low nibble first, 0: no code) of symbols
//     first .. first + k - 1, then of the escape | u32 sizes of streams 0-2 | nibbles: ceil(m / 2)
//     bytes, element i's in byte i / 2, the low nibble for even i | the n % 2 tail byte |
//     4 LSB-first bit streams; stream s codes elements [s*q, (s+1)*q), the last the rest.
// A symbol without a code of its own (absent from the sample the code was built from) is written
// as the escape's code followed by its 12 bits.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "coders/bit_reader.hpp"
#include "coders/hot_clones.hpp"
#include "coders/huff_tables.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

constexpr unsigned kSymbolBits = 12, kMaxLength = 12;
constexpr std::uint32_t kSymbolMask = (1u << kSymbolBits) - 1;
constexpr std::size_t kEscape = std::size_t{1} << kSymbolBits;  // the symbol after the 4096 real ones
constexpr std::size_t kStreams = 4;
constexpr std::size_t kHeaderLongest = 1 + 4 + (kEscape + 2) / 2 + 4 * (kStreams - 1);
// The counts come from every element of a short chunk, else from one 256-element block in eight.
constexpr std::size_t kSampleBlock = 256, kSampleEvery = 8 * kSampleBlock, kExactBelow = 32 << 10;
enum Format : std::uint8_t { kNoElements = 0, kCoded = 1 };

[[gnu::always_inline]] inline unsigned element(const std::uint8_t* src, std::size_t i) {
  return src[2 * i] | (src[2 * i + 1] << 8);
}
[[gnu::always_inline]] inline unsigned symbol_of(unsigned e) { return (e >> 3) & kSymbolMask; }
[[gnu::always_inline]] inline unsigned nibble_of(unsigned e) { return ((e >> 12) & 8) | (e & 7); }

std::uint32_t load32(const std::uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
void store32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Elements [begin(s), begin(s + 1)) go to stream s.
// Streams start at even elements, so a stream's pairs of elements share a byte of nibbles.
std::size_t stream_begin(std::size_t m, std::size_t s) {
  return s == kStreams ? m : s * (m / kStreams & ~std::size_t{1});
}

[[gnu::always_inline]] inline std::uint32_t load_pair(const std::uint8_t* p) {  // elements i and i + 1, i at p
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}
[[gnu::always_inline]] inline void store_pair(std::uint8_t* p, std::uint32_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}

struct EncodeLane {
  std::uint8_t* out;
  std::uint64_t bits = 0;
  unsigned count = 0;
  // One code of up to 24 bits (an escape and its symbol); at most 7 bits stay pending after flush.
  [[gnu::always_inline]] void put(std::uint32_t code) {
    bits |= static_cast<std::uint64_t>(huff::code_bits(code)) << count;
    count += huff::code_length(code);
  }
  [[gnu::always_inline]] void flush() {
    store64(out, bits);
    const unsigned bytes = count >> 3;
    out += bytes;
    bits >>= 8 * bytes;  // bytes <= 6: count never exceeds 7 + 2 * 24
    count &= 7;
  }
};

// Pairs [0, pairs) of each lane's elements; two lanes at a time keep their state in registers.
WZ_HOT_CLONES void encode_pairs(std::array<EncodeLane, kStreams>& lanes, const std::uint8_t* src, std::size_t m,
                                std::size_t pairs, const std::uint32_t* table) {
  for (std::size_t first = 0; first < kStreams; first += 2) {
    EncodeLane a = lanes[first], b = lanes[first + 1];
    const std::uint8_t* in_a = src + 2 * stream_begin(m, first);
    const std::uint8_t* in_b = src + 2 * stream_begin(m, first + 1);
    for (std::size_t pair = 0; pair < pairs; ++pair) {
      const std::uint32_t va = load_pair(in_a + 4 * pair), vb = load_pair(in_b + 4 * pair);
      a.put(table[symbol_of(va)]);
      b.put(table[symbol_of(vb)]);
      a.put(table[symbol_of(va >> 16)]);
      b.put(table[symbol_of(vb >> 16)]);
      a.flush();
      b.flush();
    }
    lanes[first] = a, lanes[first + 1] = b;
  }
}

class Huff12Coder final : public PlaneCoder {
 public:
  CoderId id() const override { return CoderId::huff12; }
  std::size_t bound(std::size_t n) const override {
    const std::size_t m = n / 2;  // every symbol escaped: 24 bits; 8 bytes of store slack per stream
    return kHeaderLongest + (m + 1) / 2 + 1 + 3 * m + kStreams * 9;
  }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override;
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
  void count_symbols(const std::uint8_t* src, std::size_t m);

  std::vector<std::uint32_t> counts_ = std::vector<std::uint32_t>(kEscape + 1);
  std::vector<std::uint32_t> codes_ = std::vector<std::uint32_t>(kEscape + 1);
  std::vector<std::uint32_t> encode_table_ = std::vector<std::uint32_t>(kEscape);  // code | length << 24
  std::vector<std::uint32_t> decode_table_ = std::vector<std::uint32_t>(std::size_t{1} << kMaxLength);
  std::array<std::vector<std::uint8_t>, kStreams> scratch_;
};

void Huff12Coder::count_symbols(const std::uint8_t* src, std::size_t m) {
  std::fill(counts_.begin(), counts_.end(), 0);
  const std::size_t block = m < kExactBelow ? m : kSampleBlock, every = m < kExactBelow ? m : kSampleEvery;
  for (std::size_t start = 0; start < m; start += every) {
    const std::size_t end = std::min(m, start + block);
    for (std::size_t i = start; i < end; ++i) ++counts_[symbol_of(element(src, i))];
  }
  counts_[kEscape] = 1;  // always a code: symbols the sample missed are escaped
}

std::size_t Huff12Coder::encode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = src_bytes.size(), m = n / 2, tail = n % 2;
  if (m == 0) {
    dst[0] = kNoElements;
    if (tail) dst[1] = src[0];
    return 1 + tail;
  }
  count_symbols(src, m);
  const std::vector<std::uint8_t> lengths = huff::limited_code_lengths(counts_, kMaxLength);
  huff::canonical_codes(lengths, codes_);
  const std::uint32_t escape = codes_[kEscape];
  const unsigned escape_length = huff::code_length(escape);
  std::size_t first = 0, last = kEscape - 1;
  while (!lengths[first]) ++first;  // the sample holds element 0, so some symbol has a code
  while (!lengths[last]) --last;
  for (std::size_t s = 0; s < kEscape; ++s)
    encode_table_[s] = lengths[s] ? codes_[s]
                                  : (huff::code_bits(escape) | static_cast<std::uint32_t>(s) << escape_length) |
                                        (escape_length + kSymbolBits) << 24;

  const std::size_t k = last - first + 1;
  std::uint8_t* out = dst;
  *out++ = kCoded;
  out[0] = static_cast<std::uint8_t>(first), out[1] = static_cast<std::uint8_t>(first >> 8);
  out[2] = static_cast<std::uint8_t>(k), out[3] = static_cast<std::uint8_t>(k >> 8);
  out += 4;
  std::memset(out, 0, (k + 2) / 2);
  for (std::size_t j = 0; j <= k; ++j) {
    const unsigned length = j < k ? lengths[first + j] : escape_length;
    out[j / 2] |= static_cast<std::uint8_t>(length << (4 * (j % 2)));
  }
  out += (k + 2) / 2;
  std::uint8_t* sizes = out;
  out += 4 * (kStreams - 1);
  for (std::size_t i = 0; i + 1 < m; i += 2)
    *out++ = static_cast<std::uint8_t>(nibble_of(element(src, i)) | nibble_of(element(src, i + 1)) << 4);
  if (m % 2) *out++ = static_cast<std::uint8_t>(nibble_of(element(src, m - 1)));
  if (tail) *out++ = src[n - 1];

  std::array<EncodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    scratch_[s].resize(3 * (stream_begin(m, s + 1) - stream_begin(m, s)) + 16);
    lanes[s].out = scratch_[s].data();
  }
  // The streams' dependency chains (the bit count) overlap; the last stream's extra elements follow.
  const std::size_t pairs = stream_begin(m, 1) / 2;
  const std::uint32_t* table = encode_table_.data();
  encode_pairs(lanes, src, m, pairs, table);
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::size_t end = stream_begin(m, s + 1);
    for (std::size_t i = stream_begin(m, s) + 2 * pairs; i < end; ++i) {
      lanes[s].put(table[symbol_of(element(src, i))]);
      lanes[s].flush();
    }
    if (lanes[s].count) *lanes[s].out++ = static_cast<std::uint8_t>(lanes[s].bits);
  }
  for (std::size_t s = 0; s < kStreams; ++s) {
    const auto size = static_cast<std::size_t>(lanes[s].out - scratch_[s].data());
    if (s + 1 < kStreams) store32(sizes + 4 * s, static_cast<std::uint32_t>(size));
    std::memcpy(out, scratch_[s].data(), size);
    out += size;
  }
  return static_cast<std::size_t>(out - dst);
}

[[gnu::always_inline]] inline void store16(std::uint8_t* p, unsigned v) {
  const auto little = static_cast<std::uint16_t>(v);
  std::memcpy(p, &little, 2);
  if constexpr (std::endian::native == std::endian::big) std::swap(p[0], p[1]);
}

// A decode table entry (one per 12-bit window): the code's length in bits 0-6, bit 7 set for the
// escape, and the element's bits 3-14 (the symbol in place) in bits 19-30.
constexpr std::uint32_t kEscapeFlag = 0x80;
constexpr std::uint32_t decode_entry(std::uint32_t symbol, unsigned length) { return symbol << 19 | length; }

// The next code's entry; an escape is replaced by the entry of the symbol after it. The reader
// holds >= 24 bits.
[[gnu::always_inline]] inline std::uint32_t next_entry(std::uint64_t& bits, unsigned& count,
                                                       const std::uint32_t* table) {
  const std::uint32_t entry = table[bits & kSymbolMask];
  const unsigned length = entry & 0x7f;
  bits >>= length;
  count -= length;
  if (entry & kEscapeFlag) [[unlikely]] {
    const auto symbol = static_cast<std::uint32_t>(bits & kSymbolMask);
    bits >>= kSymbolBits;
    count -= kSymbolBits;
    return decode_entry(symbol, 0);
  }
  return entry;
}

// A byte of nibbles as the sign and low mantissa bits of two elements, the first in the low half.
constexpr std::array<std::uint32_t, 256> kNibblePairs = [] {
  std::array<std::uint32_t, 256> pairs{};
  for (unsigned b = 0; b < 256; ++b) pairs[b] = ((b & 0x08) << 12 | (b & 7)) | ((b & 0x80) << 8 | ((b >> 4) & 7)) << 16;
  return pairs;
}();

struct DecodeLane {
  BitReader reader;
  std::size_t i, end;  // the next element, and the stream's end

  // One element: its symbol from the stream, its nibble, both merged.
  [[gnu::always_inline]] void decode_one(const std::uint32_t* table, const std::uint8_t* nibbles, std::uint8_t* dst) {
    const std::uint32_t entry = next_entry(reader.bits, reader.count, table);
    const std::uint32_t low_bits = kNibblePairs[nibbles[i / 2]] >> (16 * (i % 2));
    store16(dst + 2 * i, (entry >> 16) | (low_bits & 0xffff));
    ++i;
  }
};

// Rounds every lane can take with no check: a pair of elements each, and 8 readable bytes at every
// refill (a refill moves at most 7 bytes on; a round takes at most 48 of the >= 56 bits it leaves).
std::size_t safe_rounds(const std::array<DecodeLane, kStreams>& lanes) {
  std::size_t rounds = SIZE_MAX;
  for (const DecodeLane& lane : lanes) {
    const auto left = static_cast<std::size_t>(lane.reader.in_end - lane.reader.in);
    rounds = std::min({rounds, left < 8 ? 0 : (left - 8) / 7 + 1, (lane.end - lane.i) / 2});
  }
  return rounds;
}

struct FastLane {
  std::uint64_t bits;
  unsigned count;
  const std::uint8_t* in;
  [[gnu::always_inline]] void round(const std::uint32_t* table, const std::uint8_t* nibbles, std::uint8_t* out) {
    bits |= load64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    const std::uint32_t first = next_entry(bits, count, table);
    const std::uint32_t second = next_entry(bits, count, table);
    store_pair(out, kNibblePairs[*nibbles] | first >> 16 | (second & 0xffff0000));
  }
};

// The bulk: all four lanes a pair at a time, lane state in locals (stores to dst cannot alias it);
// every lane's i is even here. Then each lane's rest, checked element by element.
WZ_HOT_CLONES void decode_lanes(std::array<DecodeLane, kStreams>& lanes, const std::uint32_t* table,
                                const std::uint8_t* nibbles, std::uint8_t* dst) {
  for (std::size_t rounds; (rounds = safe_rounds(lanes)) > 0;) {
    std::array<FastLane, kStreams> fast;
    for (std::size_t s = 0; s < kStreams; ++s)
      fast[s] = {lanes[s].reader.bits, lanes[s].reader.count, lanes[s].reader.in};
    FastLane a = fast[0], b = fast[1], c = fast[2], d = fast[3];
    const std::size_t ia = lanes[0].i, ib = lanes[1].i, ic = lanes[2].i, id = lanes[3].i;
    for (std::size_t r = 0; r < rounds; ++r) {
      a.round(table, nibbles + ia / 2 + r, dst + 2 * ia + 4 * r);
      b.round(table, nibbles + ib / 2 + r, dst + 2 * ib + 4 * r);
      c.round(table, nibbles + ic / 2 + r, dst + 2 * ic + 4 * r);
      d.round(table, nibbles + id / 2 + r, dst + 2 * id + 4 * r);
    }
    fast = {a, b, c, d};
    for (std::size_t s = 0; s < kStreams; ++s) {
      lanes[s].reader.bits = fast[s].bits, lanes[s].reader.count = fast[s].count, lanes[s].reader.in = fast[s].in;
      lanes[s].i += 2 * rounds;
    }
  }
  for (DecodeLane& lane : lanes) {
    while (lane.i < lane.end) {
      lane.reader.refill();
      lane.decode_one(table, nibbles, dst);
    }
  }
}

}  // namespace

void Huff12Coder::decode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* in = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  const std::uint8_t* const end = in + src_bytes.size();
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = dst_bytes.size(), m = n / 2, tail = n % 2;
  const auto need = [&](std::size_t bytes, const char* what) {
    if (static_cast<std::size_t>(end - in) < bytes) fail("huff12: coded chunk ends inside its {}", what);
  };
  need(1, "format byte");
  const std::uint8_t format = *in++;
  if (format == kNoElements) {
    if (m != 0) fail("huff12: coded chunk holds no element, the output {}", m);
    need(tail, "tail byte");
    if (tail) dst[0] = *in++;
    if (in != end) fail("huff12: {} bytes after the coded chunk's end", end - in);
    return;
  }
  if (format != kCoded) fail("huff12: unknown format {}", format);
  if (m == 0) fail("huff12: coded elements for an output of {} bytes", n);
  need(4, "code table");
  const std::size_t first = in[0] | (in[1] << 8), k = in[2] | (in[3] << 8);
  in += 4;
  if (k == 0 || first + k > kEscape)
    fail("huff12: code table's symbols {}..{} are not within 0..4095", first, first + k);
  need((k + 2) / 2, "code lengths");
  std::vector<std::uint8_t> lengths(kEscape + 1);
  std::uint32_t kraft = 0;
  for (std::size_t j = 0; j <= k; ++j) {
    const unsigned length = (in[j / 2] >> (4 * (j % 2))) & 0xf;
    if (length > kMaxLength) fail("huff12: code length {} is over {}", length, kMaxLength);
    lengths[j < k ? first + j : kEscape] = static_cast<std::uint8_t>(length);
    if (length) kraft += 1u << (kMaxLength - length);
  }
  if (kraft != 1u << kMaxLength) fail("huff12: code lengths do not make a complete code");
  in += (k + 2) / 2;
  need(4 * (kStreams - 1), "stream sizes");
  std::array<std::uint64_t, kStreams> sizes{};
  for (std::size_t s = 0; s + 1 < kStreams; ++s) sizes[s] = load32(in + 4 * s);
  in += 4 * (kStreams - 1);
  need((m + 1) / 2 + tail, "nibbles");
  const std::uint8_t* nibbles = in;
  in += (m + 1) / 2;
  if (tail) dst[n - 1] = *in++;
  const auto left = static_cast<std::uint64_t>(end - in);
  if (sizes[0] + sizes[1] + sizes[2] > left)
    fail("huff12: stream sizes {} + {} + {} exceed the {} bytes left", sizes[0], sizes[1], sizes[2], left);
  sizes[3] = left - sizes[0] - sizes[1] - sizes[2];

  huff::canonical_codes(lengths, codes_);
  for (std::size_t s = 0; s <= kEscape; ++s) {
    const unsigned length = lengths[s];
    const std::uint32_t entry =
        s < kEscape ? decode_entry(static_cast<std::uint32_t>(s), length) : length | kEscapeFlag;
    for (std::uint32_t fill = 0; length && fill < (1u << (kMaxLength - length)); ++fill)
      decode_table_[huff::code_bits(codes_[s]) | fill << length] = entry;
  }
  std::array<DecodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    lanes[s] = {.reader = {.start = in, .in = in, .in_end = in + sizes[s]},
                .i = stream_begin(m, s),
                .end = stream_begin(m, s + 1)};
    in += sizes[s];
  }
  decode_lanes(lanes, decode_table_.data(), nibbles, dst);
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::uint64_t consumed = lanes[s].reader.consumed_bits(), held = 8 * sizes[s];
    if (consumed > held || held - consumed >= 8)
      fail("huff12: stream {} holds {} bits, its symbols take {}", s, held, consumed);
  }
}

std::unique_ptr<PlaneCoder> make_huff12_coder() { return std::make_unique<Huff12Coder>(); }

}  // namespace wirezip::codecs
