// wirezip's own order-0 coder: canonical Huffman, codes of at most 11 bits, four streams coded and
// decoded interleaved so one core overlaps their dependency chains. The encoder looks up two
// symbols at a time; the decoder up to four per 11-bit window. The hot loops come from the coder's
// SIMD path (huff_kernels.hpp); the format and every byte written are the same on every path.
//
// Why our own: htscodecs rANS, zstd with forced literals and ISA-L igzip were measured side by side
// in bench_codec, and none codes the bf16 exponent plane fast enough to match blosc's throughput.
// Huffman loses well under 0.05 bit/byte to the order-0 bound on these planes.
//
// Coded plane, by its first byte:
//   0 empty | 1 single symbol: the symbol
//   2 Huffman: 256 code lengths, 4 bits each (128 bytes) | STREAMS
//   3 Huffman: first and last symbol with a code | their code lengths, 4 bits each (low nibble first)
//     | STREAMS
//   4 blocks: count B (2 or 4) | coded sizes of blocks 0..B-2 (u32 LE) | B planes of format 1-3.
//     With q = n/4, block b holds symbols [b*(4/B)*q, (b+1)*(4/B)*q); the last takes the rest.
// STREAMS: sizes of streams 0-2 (u32 LE) | 4 LSB-first bit streams. Stream s codes symbols
// [s*q, (s+1)*q), q = n/4; the last takes the rest.
// Blocks are for planes whose statistics shift along them (a chunk that spans tensors): each block
// gets its own code when the sampled counts say that saves more than the tables cost.
#include <cstring>

#include "coders/bit_reader.hpp"
#include "coders/huff_kernels.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff;

constexpr std::size_t kSizesBytes = 4 * (kStreams - 1);
constexpr std::size_t kLongestHeader = 1 + 128 + kSizesBytes;  // format 2; format 3 is at most 2 bytes more
constexpr std::size_t kMaxBlocks = 4;
enum Format : std::uint8_t { kEmpty = 0, kSingleSymbol = 1, kHuffman = 2, kHuffmanRange = 3, kBlocks = 4 };

// Where the 4 streams of a block, or the 1, 2 or 4 blocks of a plane, start: at multiples of a
// quarter (rounded down), so that blocks are whole quarters; the last runs to the end.
std::array<std::size_t, 5> quarter_bounds(std::size_t n, std::size_t parts = 4) {
  std::array<std::size_t, 5> bounds{};
  for (std::size_t k = 0; k < parts; ++k) bounds[k] = k * (4 / parts) * (n / 4);
  bounds[parts] = n;
  return bounds;
}
static_assert(kStreams == 4);

class HuffCoder final : public PlaneCoder {
 public:
  explicit HuffCoder(SimdPath path) : kernels_(huff_kernels(path)) {}
  CoderId id() const override { return CoderId::huff; }
  std::size_t bound(std::size_t n) const override {
    return 2 + 4 * kMaxBlocks + kMaxBlocks * (kLongestHeader + 2 + 16 * kStreams) + n * kMaxLength / 8;
  }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override;
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
  // One block: format 1 or 3, from the block's sampled counts and byte range.
  std::size_t encode_block(const std::uint8_t* src, std::size_t n, Counts counts, const ByteRange& range,
                           std::uint8_t* dst);
  void decode_block(const std::uint8_t* src, std::size_t size, std::uint8_t* dst, std::size_t n);
  void decode_streams(const std::uint8_t* src, std::size_t size, std::size_t offset, const Lengths& lengths,
                      std::uint8_t* dst, std::size_t n);

  HuffKernels kernels_;
  std::array<std::vector<std::uint8_t>, kStreams> scratch_;  // one bit stream each, then copied out
  PairCodes pair_codes_;
  std::array<DecodeEntry, kWindowMask + 1> table_{};
};

std::size_t HuffCoder::encode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = src_bytes.size();
  if (n == 0) {
    dst[0] = kEmpty;
    return 1;
  }
  // Counts and byte range per quarter: the plane's own are their sums, and they say whether a code
  // per half or per quarter pays.
  const auto quarters = quarter_bounds(n);
  std::array<Counts, kMaxBlocks> counts;
  std::array<ByteRange, kMaxBlocks> ranges;
  for (std::size_t q = 0; q < kMaxBlocks; ++q) {
    counts[q] = sample_counts(src + quarters[q], quarters[q + 1] - quarters[q], n < kExactBelow);
    ranges[q] = kernels_.byte_range(src + quarters[q], quarters[q + 1] - quarters[q]);
  }
  const std::size_t blocks = n >= kMinBlockSymbols * kMaxBlocks ? blocks_worth_coding(counts, n) : 1;
  std::uint8_t* out = dst;
  if (blocks > 1) {  // one block is a plane of format 1 or 3 with no blocks header
    dst[0] = kBlocks;
    dst[1] = static_cast<std::uint8_t>(blocks);
    out += 2 + 4 * (blocks - 1);
  }
  const auto bounds = quarter_bounds(n, blocks);
  const std::size_t per_block = kMaxBlocks / blocks;  // quarters per block
  for (std::size_t b = 0; b < blocks; ++b) {
    Counts block_counts{};
    ByteRange range = ranges[b * per_block];
    for (std::size_t q = b * per_block; q < (b + 1) * per_block; ++q) {
      add_counts(block_counts, counts[q]);
      range = merge(range, ranges[q]);
    }
    const std::size_t size = encode_block(src + bounds[b], bounds[b + 1] - bounds[b], block_counts, range, out);
    if (b + 1 < blocks) store32(dst + 2 + 4 * b, static_cast<std::uint32_t>(size));
    out += size;
  }
  return static_cast<std::size_t>(out - dst);
}

std::size_t HuffCoder::encode_block(const std::uint8_t* src, std::size_t n, Counts counts, const ByteRange& range,
                                    std::uint8_t* dst) {
  if (single_symbol(range)) {
    dst[0] = kSingleSymbol;
    dst[1] = src[0];
    return 2;
  }
  give_every_byte_a_count(counts, range);
  const Lengths lengths = code_lengths(counts);
  const Codes codes = canonical_codes(lengths);
  build_pair_codes(codes, pair_codes_);
  int first = 0, last = 255;
  while (!lengths[first]) ++first;
  while (!lengths[last]) --last;
  dst[0] = kHuffmanRange;
  dst[1] = static_cast<std::uint8_t>(first);
  dst[2] = static_cast<std::uint8_t>(last);
  std::uint8_t* out = dst + 3;
  for (int s = first; s <= last; s += 2)
    *out++ = static_cast<std::uint8_t>(lengths[s] | (s + 1 <= last ? lengths[s + 1] << 4 : 0));
  std::uint8_t* sizes = out;
  out += kSizesBytes;

  const auto bounds = quarter_bounds(n);
  std::array<EncodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    scratch_[s].resize((bounds[s + 1] - bounds[s]) * kMaxLength / 8 + 16);
    lanes[s] = {src + bounds[s], scratch_[s].data()};
  }
  kernels_.encode_bulk(lanes.data(), bounds[1] / 4, pair_codes_);
  for (std::size_t s = 0; s < kStreams; ++s) {
    EncodeLane& lane = lanes[s];
    for (const std::uint8_t* end = src + bounds[s + 1]; lane.in < end; ++lane.in) {
      lane.put(code_bits(codes[*lane.in]), code_length(codes[*lane.in]));
      lane.flush();
    }
    lane.finish();
    const std::size_t size = static_cast<std::size_t>(lane.out - scratch_[s].data());
    if (s + 1 < kStreams) store32(sizes + 4 * s, static_cast<std::uint32_t>(size));
    std::memcpy(out, scratch_[s].data(), size);
    out += size;
  }
  return static_cast<std::size_t>(out - dst);
}

void HuffCoder::decode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = dst_bytes.size(), size = src_bytes.size();
  if (size == 0) fail("corrupt frame: empty huff plane");
  if (src[0] == kEmpty && size == 1 && n == 0) return;
  if (src[0] != kBlocks) return decode_block(src, size, dst, n);

  const std::size_t blocks = size >= 2 ? src[1] : 0;
  if ((blocks != 2 && blocks != 4) || size < 2 + 4 * (blocks - 1) || n < 4)
    fail("corrupt frame: huff plane header (format {}, {} blocks, {} bytes for {} symbols)", src[0], blocks, size, n);
  const auto bounds = quarter_bounds(n, blocks);
  std::size_t offset = 2 + 4 * (blocks - 1);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t block_size = b + 1 < blocks ? load32(src + 2 + 4 * b) : size - offset;
    if (block_size > size - offset) fail("corrupt frame: huff block {} runs past the plane", b);
    decode_block(src + offset, block_size, dst + bounds[b], bounds[b + 1] - bounds[b]);
    offset += block_size;
  }
}

void HuffCoder::decode_block(const std::uint8_t* src, std::size_t size, std::uint8_t* dst, std::size_t n) {
  if (size == 0) fail("corrupt frame: empty huff block");
  if (src[0] == kSingleSymbol && size == 2 && n > 0) return void(std::memset(dst, src[1], n));
  Lengths lengths{};
  std::size_t header = 0;
  if (src[0] == kHuffman && size >= kLongestHeader) {
    for (int s = 0; s < 256; ++s) lengths[s] = (src[1 + s / 2] >> (4 * (s % 2))) & 0xf;
    header = 1 + 128;
  } else if (src[0] == kHuffmanRange && size >= 3 && src[1] <= src[2]) {
    const unsigned first = src[1], last = src[2];
    header = 3 + (last - first + 2) / 2;
    if (size >= header + kSizesBytes)
      for (unsigned s = first; s <= last; ++s) lengths[s] = (src[3 + (s - first) / 2] >> (4 * ((s - first) % 2))) & 0xf;
    else
      header = 0;
  }
  if (header == 0 || n < 2)
    fail("corrupt frame: huff plane header (format {}, {} bytes for {} symbols)", src[0], size, n);
  decode_streams(src, size, header, lengths, dst, n);
}

void HuffCoder::decode_streams(const std::uint8_t* src, std::size_t size, std::size_t offset, const Lengths& lengths,
                               std::uint8_t* dst, std::size_t n) {
  // Only complete prefix codes are accepted, so every window decodes to real symbols.
  std::uint32_t kraft = 0;
  for (int s = 0; s < 256; ++s) {
    if (lengths[s] > kMaxLength) fail("corrupt frame: huff code length {} > {}", lengths[s], kMaxLength);
    if (lengths[s]) kraft += 1u << (kMaxLength - lengths[s]);
  }
  if (kraft != (1u << kMaxLength)) fail("corrupt frame: huff code lengths do not form a complete code");
  build_decode_table(canonical_codes(lengths), table_.data());

  const std::uint8_t* sizes = src + offset;
  offset += kSizesBytes;
  const auto bounds = quarter_bounds(n);
  std::array<DecodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::size_t stream_size = s + 1 < kStreams ? load32(sizes + 4 * s) : size - offset;
    if (stream_size > size - offset) fail("corrupt frame: huff stream {} runs past the plane", s);
    lanes[s] = {{src + offset, src + offset, src + offset + stream_size}, dst + bounds[s], dst + bounds[s + 1]};
    offset += stream_size;
  }
  kernels_.decode_bulk(lanes.data(), table_.data());
  for (std::size_t s = 0; s < kStreams; ++s) {
    DecodeLane& lane = lanes[s];
    while (lane.out < lane.out_end) {
      lane.refill();
      lane.decode_one(table_.data());
    }
    if (lane.consumed_bits() > 8 * static_cast<std::uint64_t>(lane.in_end - lane.start))
      fail("corrupt frame: huff stream {} ends before its symbols do", s);
  }
}

}  // namespace

std::unique_ptr<PlaneCoder> make_huff_coder(SimdPath path) { return std::make_unique<HuffCoder>(path); }

}  // namespace wirezip::codecs
