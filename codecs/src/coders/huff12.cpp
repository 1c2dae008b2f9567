// wirezip's Huffman coder for whole bf16 chunks. Each element's 12 bits below the sign (the 8
// exponent bits and the top 4 mantissa bits) are one symbol of a canonical Huffman code of at most
// 12 bits; the sign and the low 3 mantissa bits, near-random in weights, are stored as they are,
// two elements to a byte. Coding the exponent together with the mantissa's top bits takes what an
// exponent-plane coder leaves behind: the skew of the mantissa inside an octave, and Huffman's
// whole-bit loss, smaller over a larger alphabet (docs/CODECS.md).
//
// A coded chunk of n bytes: m = n / 2 little-endian elements.
//   0 (no element) | the n % 2 tail byte
//   1 (coded) | u16 first | u16 k | 4-bit code lengths (low nibble first, 0: no code) of symbols
//     first .. first + k - 1, then of the escape | u32 sizes of streams 0-6 | nibbles: ceil(m / 2)
//     bytes, element i's in byte i / 2, the low nibble for even i | the n % 2 tail byte |
//     8 LSB-first bit streams; stream s codes the elements i with (i / 2) % 8 = s, in order.
//   2 (blocks) | B (2 or 4) | u32 sizes of blocks 0 .. B-2 | B coded chunks of format 0 or 1; with
//     r = m / 4, block b holds elements [b*(4/B)*r, (b+1)*(4/B)*r), the last the rest and the tail.
// A symbol without a code of its own (absent from the sample the code was built from) is written
// as the escape's code followed by its 12 bits. Blocks are for chunks that span tensors of
// different statistics: each block gets its own code when the sampled counts say that saves more
// than 0.2% after the extra tables.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "coders/bit_reader.hpp"
#include "coders/huff12_lanes.hpp"
#include "coders/huff_tables.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff12;

constexpr std::size_t kHeaderLongest = 1 + 4 + (kEscape + 2) / 2 + 4 * (kStreams - 1);
// The counts come from every element of a short chunk, else from one 256-element block in eight.
constexpr std::size_t kSampleBlock = 256, kSampleEvery = 8 * kSampleBlock, kExactBelow = 32 << 10;
enum Format : std::uint8_t { kNoElements = 0, kCoded = 1, kBlocks = 2 };
constexpr std::size_t kBlockRounds = (16 << 10) / (2 * kRoundElements);  // rounds in 16 KiB of elements
// A block's code is built from a sample of an eighth of it: under 64K elements the sample is too
// thin for ~500 symbols, and more blocks cost more than they save (measured on real checkpoints).
constexpr std::size_t kMaxBlocks = 4, kMinBlockElements = 64 << 10;
using Counts = std::vector<std::uint32_t>;

// Adds the counts of the symbols of elements [0, m): every one of a short run, else one 256-element
// block in eight.
void count_symbols(const std::uint8_t* src, std::size_t m, Counts& counts) {
  const std::size_t block = m < kExactBelow ? m : kSampleBlock, every = m < kExactBelow ? m : kSampleEvery;
  for (std::size_t start = 0; start < m; start += every) {
    const std::size_t end = std::min(m, start + block);
    // The sampled blocks lie apart, past what the hardware prefetcher follows, and the chunk has
    // not been read yet: fetching the next block's lines while this one is counted hides a memory
    // access per line.
    if (start + every + block <= m)
      for (std::size_t line = 0; line < 2 * block; line += 64) __builtin_prefetch(src + 2 * (start + every) + line);
    for (std::size_t i = start; i < end; ++i) ++counts[symbol_of(element(src, i))];
  }
}

// What coding `elements` elements with a code built for these counts costs, estimated in bits:
// their order-0 bits scaled from the counted ones, the table and the stream sizes.
double estimated_bits(const Counts& counts, std::size_t elements) {
  double total = 0, bits = 0;
  std::size_t first = kEscape, last = 0;
  for (std::size_t s = 0; s < kEscape; ++s) {
    if (!counts[s]) continue;
    total += counts[s];
    first = std::min(first, s), last = s;
  }
  if (total == 0) return 0;
  for (std::size_t s = first; s <= last; ++s)
    if (counts[s]) bits += counts[s] * std::log2(total / counts[s]);
  return bits * (static_cast<double>(elements) / total) + 8.0 * (5 + (last - first + 2) / 2 + 4 * (kStreams - 1));
}

// Elements where block b of `blocks` starts: whole quarters of the chunk.
std::size_t block_begin(std::size_t m, std::size_t blocks, std::size_t b) {
  return b == blocks ? m : b * (kMaxBlocks / blocks) * (m / kMaxBlocks);
}

class Huff12Coder final : public HashingChunkCoder {
 public:
  CoderId id() const override { return CoderId::huff12; }
  std::size_t bound(std::size_t n) const override {
    const std::size_t m = n / 2;  // every symbol escaped: 24 bits; 8 bytes of store slack per stream
    return 2 + 4 * (kMaxBlocks - 1) + kMaxBlocks * (kHeaderLongest + 1 + kStreams * 9) + (m + 1) / 2 + 1 + 3 * m;
  }

 private:
  // A block at a time.
  std::size_t encode_chunk(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream* hash) override;
  void decode_chunk(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream* hash) override;
  // Codes n bytes as format 0 or 1, the code built from counts_ (escape excluded).
  std::size_t encode_block(const std::uint8_t* src, std::size_t n, std::uint8_t* dst, ChecksumStream* hash);
  void decode_block(const std::uint8_t* src, std::size_t size, std::uint8_t* dst, std::size_t n, ChecksumStream* hash);
  // The streams of a format 1 block, its tables built: elements into dst, hashed.
  void decode_streams(std::array<BitReader, kStreams>& readers, const std::uint8_t* nibbles, std::uint8_t* dst,
                      std::size_t n, ChecksumStream* hash);
  // 1, 2 or 4: how many blocks of its own code each pay, from the sampled counts of the quarters.
  std::size_t blocks_worth_coding(const std::uint8_t* src, std::size_t m);
  // counts_ = the sum of quarters [first, last).
  void sum_quarters(std::size_t first, std::size_t last);

  Counts counts_ = Counts(kEscape + 1);
  std::array<Counts, kMaxBlocks> quarters_;
  std::vector<std::uint32_t> codes_ = std::vector<std::uint32_t>(kEscape + 1);
  // Per symbol, its code's bits and length apart: the bulk loop loads both instead of unpacking one.
  // A symbol with no code has the escape's code followed by its 12 bits.
  std::vector<std::uint32_t> encode_bits_ = std::vector<std::uint32_t>(kEscape);
  std::vector<std::uint8_t> encode_lengths_ = std::vector<std::uint8_t>(kEscape);
  std::vector<std::uint32_t> decode_table_ = std::vector<std::uint32_t>(std::size_t{1} << kMaxLength);
  std::array<std::vector<std::uint8_t>, kStreams> scratch_;
};

void Huff12Coder::sum_quarters(std::size_t first, std::size_t last) {
  std::fill(counts_.begin(), counts_.end(), 0);
  for (std::size_t q = first; q < last; ++q)
    for (std::size_t s = 0; s < kEscape; ++s) counts_[s] += quarters_[q][s];
}

std::size_t Huff12Coder::blocks_worth_coding(const std::uint8_t* src, std::size_t m) {
  for (std::size_t q = 0; q < kMaxBlocks; ++q) {
    quarters_[q].assign(kEscape + 1, 0);
    const std::size_t begin = block_begin(m, kMaxBlocks, q);
    count_symbols(src + 2 * begin, block_begin(m, kMaxBlocks, q + 1) - begin, quarters_[q]);
  }
  std::array<double, kMaxBlocks + 1> cost{};  // by block count: 1, 2, 4
  for (std::size_t blocks : {1u, 2u, 4u}) {
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t per = kMaxBlocks / blocks;
      sum_quarters(b * per, (b + 1) * per);
      cost[blocks] += estimated_bits(counts_, block_begin(m, blocks, b + 1) - block_begin(m, blocks, b));
    }
  }
  const std::size_t best = m / kMaxBlocks >= kMinBlockElements && cost[4] < cost[2] ? 4 : 2;
  return cost[best] < 0.998 * cost[1] ? best : 1;
}

std::size_t Huff12Coder::encode_chunk(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes,
                                      ChecksumStream* hash) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = src_bytes.size(), m = n / 2;
  if (m < 2 * kMinBlockElements) {
    std::fill(counts_.begin(), counts_.end(), 0);
    count_symbols(src, m, counts_);
    return encode_block(src, n, dst, hash);
  }
  const std::size_t blocks = blocks_worth_coding(src, m);
  if (blocks == 1) {
    sum_quarters(0, kMaxBlocks);
    return encode_block(src, n, dst, hash);
  }
  std::uint8_t* out = dst;
  *out++ = kBlocks;
  *out++ = static_cast<std::uint8_t>(blocks);
  std::uint8_t* sizes = out;
  out += 4 * (blocks - 1);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t per = kMaxBlocks / blocks, begin = 2 * block_begin(m, blocks, b);
    const std::size_t end = b + 1 == blocks ? n : 2 * block_begin(m, blocks, b + 1);
    sum_quarters(b * per, (b + 1) * per);
    const std::size_t size = encode_block(src + begin, end - begin, out, hash);
    if (b + 1 < blocks) store32(sizes + 4 * b, static_cast<std::uint32_t>(size));
    out += size;
  }
  return static_cast<std::size_t>(out - dst);
}

std::size_t Huff12Coder::encode_block(const std::uint8_t* src, std::size_t n, std::uint8_t* dst, ChecksumStream* hash) {
  const std::size_t m = n / 2, tail = n % 2;
  if (m == 0) {
    feed(hash, src, n);
    dst[0] = kNoElements;
    if (tail) dst[1] = src[0];
    return 1 + tail;
  }
  // Symbols the sample missed are escaped; where it saw all 4096, each has a 12-bit code and there
  // is no escape (12 bits cannot hold 4097 codes).
  const bool all_seen =
      std::none_of(counts_.begin(), counts_.begin() + kEscape, [](std::uint32_t c) { return c == 0; });
  counts_[kEscape] = all_seen ? 0 : 1;
  const std::vector<std::uint8_t> lengths = huff::limited_code_lengths(counts_, kMaxLength);
  huff::canonical_codes(lengths, codes_);
  const std::uint32_t escape = codes_[kEscape];
  const unsigned escape_length = huff::code_length(escape);
  std::size_t first = 0, last = kEscape - 1;
  while (!lengths[first]) ++first;  // the sample holds element 0, so some symbol has a code
  while (!lengths[last]) --last;
  for (std::size_t s = 0; s < kEscape; ++s) {
    const bool coded = lengths[s] != 0;
    encode_bits_[s] =
        coded ? huff::code_bits(codes_[s]) : huff::code_bits(escape) | static_cast<std::uint32_t>(s) << escape_length;
    encode_lengths_[s] = static_cast<std::uint8_t>(coded ? lengths[s] : escape_length + kSymbolBits);
  }

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
  std::uint8_t* nibbles = out;
  out += (m + 1) / 2;
  if (tail) *out++ = src[n - 1];

  std::array<EncodeLane, kStreams> lanes;
  // Stream 0 is written in its place (bound() leaves room for its stores' 8 bytes of slack), the
  // others into scratch, copied after it.
  lanes[0].out = out;
  for (std::size_t s = 1; s < kStreams; ++s) {
    scratch_[s].resize(3 * (m / kStreams + 2) + 16);
    lanes[s].out = scratch_[s].data();
  }
  // Rounds of all eight lanes, a 16 KiB block at a time: hashed, then coded while in L1.
  const std::size_t rounds = m / kRoundElements;
  for (std::size_t r = 0; r < rounds; r += kBlockRounds) {
    const std::size_t batch = std::min(kBlockRounds, rounds - r);
    const std::uint8_t* block = src + 2 * kRoundElements * r;
    feed(hash, block, 2 * kRoundElements * batch);
    encode_rounds(lanes, block, batch, encode_bits_.data(), encode_lengths_.data(), nibbles + kStreams * r);
  }
  for (std::size_t i = kRoundElements * rounds; i < m; ++i) {  // the last round's elements, if any
    EncodeLane& lane = lanes[stream_of(i)];
    const unsigned e = element(src, i), symbol = symbol_of(e), nibble = nibble_of(e);
    lane.put(encode_bits_[symbol], encode_lengths_[symbol]);
    lane.flush();
    nibbles[i / 2] = static_cast<std::uint8_t>(i % 2 ? nibbles[i / 2] | nibble << 4 : nibble);
  }
  feed(hash, src + 2 * kRoundElements * rounds, n - 2 * kRoundElements * rounds);
  for (EncodeLane& lane : lanes)
    if (lane.count) *lane.out++ = static_cast<std::uint8_t>(lane.bits);
  store32(sizes, static_cast<std::uint32_t>(lanes[0].out - out));
  out = lanes[0].out;
  for (std::size_t s = 1; s < kStreams; ++s) {
    const auto size = static_cast<std::size_t>(lanes[s].out - scratch_[s].data());
    if (s + 1 < kStreams) store32(sizes + 4 * s, static_cast<std::uint32_t>(size));
    std::memcpy(out, scratch_[s].data(), size);
    out += size;
  }
  return static_cast<std::size_t>(out - dst);
}

}  // namespace

void Huff12Coder::decode_chunk(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes,
                               ChecksumStream* hash) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t size = src_bytes.size(), n = dst_bytes.size(), m = n / 2;
  if (size < 2 || src[0] != kBlocks) return decode_block(src, size, dst, n, hash);
  const std::size_t blocks = src[1];
  if (blocks != 2 && blocks != kMaxBlocks) fail("huff12: {} blocks, not 2 or 4", blocks);
  if (m < kMaxBlocks) fail("huff12: {} blocks for {} elements", blocks, m);
  if (size < 2 + 4 * (blocks - 1)) fail("huff12: coded chunk ends inside its block sizes");
  std::size_t at = 2 + 4 * (blocks - 1);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t left = size - at;
    const std::size_t block_size = b + 1 < blocks ? load32(src + 2 + 4 * b) : left;
    if (block_size > left) fail("huff12: block {} holds {} bytes, {} are left", b, block_size, left);
    const std::size_t begin = 2 * block_begin(m, blocks, b),
                      end = b + 1 == blocks ? n : 2 * block_begin(m, blocks, b + 1);
    if (block_size > 0 && src[at] == kBlocks) fail("huff12: block {} is itself made of blocks", b);
    decode_block(src + at, block_size, dst + begin, end - begin, hash);
    at += block_size;
  }
}

void Huff12Coder::decode_block(const std::uint8_t* in, std::size_t size, std::uint8_t* dst, std::size_t n,
                               ChecksumStream* hash) {
  const std::uint8_t* const end = in + size;
  const std::size_t m = n / 2, tail = n % 2;
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
    feed(hash, dst, n);
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
  std::uint64_t listed = 0;  // each size is under 2^32, so eight of them cannot overflow
  for (std::size_t s = 0; s + 1 < kStreams; ++s) listed += sizes[s];
  if (listed > left) fail("huff12: stream sizes 0-{} sum to {}, over the {} bytes left", kStreams - 2, listed, left);
  sizes[kStreams - 1] = left - listed;

  huff::canonical_codes(lengths, codes_);
  for (std::size_t s = 0; s <= kEscape; ++s) {
    const unsigned length = lengths[s];
    const std::uint32_t entry =
        s < kEscape ? decode_entry(static_cast<std::uint32_t>(s), length) : length | kEscapeFlag;
    for (std::uint32_t fill = 0; length && fill < (1u << (kMaxLength - length)); ++fill)
      decode_table_[huff::code_bits(codes_[s]) | fill << length] = entry;
  }
  std::array<BitReader, kStreams> readers;
  for (std::size_t s = 0; s < kStreams; ++s) {
    readers[s] = {.start = in, .in = in, .in_end = in + sizes[s]};
    in += sizes[s];
  }
  decode_streams(readers, nibbles, dst, n, hash);
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::uint64_t consumed = readers[s].consumed_bits(), held = 8 * sizes[s];
    if (consumed > held || held - consumed >= 8)
      fail("huff12: stream {} holds {} bits, its symbols take {}", s, held, consumed);
  }
}

void Huff12Coder::decode_streams(std::array<BitReader, kStreams>& readers, const std::uint8_t* nibbles,
                                 std::uint8_t* dst, std::size_t n, ChecksumStream* hash) {
  const std::size_t m = n / 2, rounds = m / kRoundElements;
  const std::uint32_t* table = decode_table_.data();
  std::size_t done = 0, hashed = 0;  // rounds
  while (done < rounds) {
    // As many rounds as every reader can take unchecked, up to the end of this 16 KiB block.
    std::size_t batch = std::min(rounds - done, kBlockRounds - done % kBlockRounds);
    // A round loads 8 bytes at a lane's place and moves it at most 6 bytes on; `in` may lie up
    // to 7 bytes past that place (what the reader has buffered), so this count is on the safe side.
    for (const BitReader& reader : readers) {
      const auto left = static_cast<std::size_t>(reader.in_end - reader.in);
      batch = std::min(batch, left < 8 ? 0 : (left - 8) / 6 + 1);
    }
    if (batch == 0) break;  // a stream is near its end: the rest element by element
    decode_rounds(readers, table, nibbles, dst, done, batch);
    done += batch;
    if (done % kBlockRounds == 0) {
      feed(hash, dst + 2 * kRoundElements * hashed, 2 * kRoundElements * (done - hashed));
      hashed = done;
    }
  }
  for (std::size_t i = kRoundElements * done; i < m; ++i) decode_one(readers[stream_of(i)], table, nibbles, dst, i);
  feed(hash, dst + 2 * kRoundElements * hashed, n - 2 * kRoundElements * hashed);
}

std::unique_ptr<PlaneCoder> make_huff12_coder() { return std::make_unique<Huff12Coder>(); }

}  // namespace wirezip::codecs
