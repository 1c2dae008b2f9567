// wirezip's own order-0 coder: canonical Huffman, codes of at most 11 bits, eight streams coded and
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
//   4 blocks: count B (2 or 4) | coded sizes of blocks 0..B-2 (u32 LE) | B planes of format 1, 3, 5.
//     With q = n/4, block b holds symbols [b*(4/B)*q, (b+1)*(4/B)*q); the last takes the rest.
//   5 pair Huffman (huff_pairs.hpp): m (2-16) | the m bytes that may pair | ceil(m*m/8) bytes of
//     bits, bit i*m+j (LSB first) set where the pair of bytes i, j has a code | first and last byte
//     with a byte code | code lengths, 4 bits each (low nibble first): the pairs with codes in bit
//     order, then the bytes first..last | STREAMS
// STREAMS: sizes of streams 0-6 (u32 LE) | 8 LSB-first bit streams. Stream s codes symbols
// [s*e, (s+1)*e), e = n/8; the last takes the rest.
// Blocks are for planes whose statistics shift along them (a chunk that spans tensors): each block
// gets its own code when the sampled counts say that saves more than the tables cost.
#include <cstring>

#include "coders/bit_reader.hpp"
#include "coders/huff_kernels.hpp"
#include "coders/huff_pairs.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff;

constexpr std::size_t kSizesBytes = 4 * (kStreams - 1);
// Format 5 with 16 paired bytes and every byte coded; formats 2 and 3 are shorter.
constexpr std::size_t kLongestHeader =
    4 + kMaxPaired + chosen_bytes(kMaxPaired) + (kMaxPaired * kMaxPaired + 256) / 2 + kSizesBytes;
constexpr std::size_t kMaxBlocks = 4;
enum Format : std::uint8_t {
  kEmpty = 0,
  kSingleSymbol = 1,
  kHuffman = 2,
  kHuffmanRange = 3,
  kBlocks = 4,
  kPairHuffman = 5
};

// Where the 1, 2 or 4 blocks of a plane start: at multiples of a quarter (rounded down), so that
// blocks are whole quarters; the last runs to the end.
std::array<std::size_t, 5> quarter_bounds(std::size_t n, std::size_t parts = 4) {
  std::array<std::size_t, 5> bounds{};
  for (std::size_t k = 0; k < parts; ++k) bounds[k] = k * (4 / parts) * (n / 4);
  bounds[parts] = n;
  return bounds;
}

// Where the streams of a block of n symbols start: at multiples of n / kStreams; the last runs to the end.
std::array<std::size_t, kStreams + 1> stream_bounds(std::size_t n) {
  std::array<std::size_t, kStreams + 1> bounds{};
  for (std::size_t s = 0; s < kStreams; ++s) bounds[s] = s * (n / kStreams);
  bounds[kStreams] = n;
  return bounds;
}

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
  // One block: format 1, 3 or 5, from the block's sampled counts and byte range.
  std::size_t encode_block(const std::uint8_t* src, std::size_t n, Counts counts, const ByteRange& range,
                           std::span<const PairSample> samples, std::uint8_t* dst);
  // The streams of a block coded with codes_ and pair_codes_ for `alphabet`.
  std::size_t encode_streams(const std::uint8_t* src, std::size_t n, const PairAlphabet& alphabet, std::uint8_t* dst);
  void decode_block(const std::uint8_t* src, std::size_t size, std::uint8_t* dst, std::size_t n);
  // The code of a format 5 header: its alphabet and lengths; returns the header's size.
  std::size_t read_pair_header(const std::uint8_t* src, std::size_t size, PairAlphabet& alphabet);
  // The streams of a block, decoded with table_ (header: the bytes before the stream sizes).
  void decode_streams(const std::uint8_t* src, std::size_t size, std::size_t header, std::uint8_t* dst, std::size_t n);

  HuffKernels kernels_;
  std::array<std::vector<std::uint8_t>, kStreams> scratch_;  // one bit stream each, then copied out
  PairSampler sampler_;
  std::array<PairSample, kMaxBlocks> samples_;  // of each quarter
  std::vector<std::uint8_t> lengths_;           // the block's code lengths, one per symbol of its alphabet
  std::vector<std::uint32_t> codes_;            // and their codes
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
    sampler_.sample(src + quarters[q], quarters[q + 1] - quarters[q], n < kExactBelow, samples_[q]);
    counts[q] = samples_[q].bytes;
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
    const std::size_t size = encode_block(src + bounds[b], bounds[b + 1] - bounds[b], block_counts, range,
                                          std::span(samples_).subspan(b * per_block, per_block), out);
    if (b + 1 < blocks) store32(dst + 2 + 4 * b, static_cast<std::uint32_t>(size));
    out += size;
  }
  return static_cast<std::size_t>(out - dst);
}

// Code lengths are stored as nibbles, low nibble first: the k-th at `packed`, and all of them at out
// (returning the place after them).
std::uint8_t length_nibble(const std::uint8_t* packed, std::size_t k) {
  return static_cast<std::uint8_t>((packed[k / 2] >> (4 * (k % 2))) & 0xf);
}

std::uint8_t* put_lengths(std::span<const std::uint8_t> lengths, std::uint8_t* out) {
  for (std::size_t k = 0; k < lengths.size(); k += 2)
    *out++ = static_cast<std::uint8_t>(lengths[k] | (k + 1 < lengths.size() ? lengths[k + 1] << 4 : 0));
  return out;
}

std::size_t HuffCoder::encode_block(const std::uint8_t* src, std::size_t n, Counts counts, const ByteRange& range,
                                    std::span<const PairSample> samples, std::uint8_t* dst) {
  if (single_symbol(range)) {
    dst[0] = kSingleSymbol;
    dst[1] = src[0];
    return 2;
  }
  give_every_byte_a_count(counts, range);
  const Lengths byte_lengths = code_lengths(counts);
  const std::optional<PairCode> pair = pair_code_worth_using(samples, n, counts, byte_lengths);
  const PairAlphabet alphabet = pair ? pair->alphabet : PairAlphabet{};  // none paired: the byte code
  if (pair)
    lengths_ = pair->lengths;
  else
    lengths_.assign(byte_lengths.begin(), byte_lengths.end());
  codes_.resize(lengths_.size());
  canonical_codes(lengths_, codes_);
  build_pair_codes(alphabet, codes_, pair_codes_);

  const std::size_t bytes_at = alphabet.pair_symbols();
  unsigned first = 0, last = 255;
  while (!lengths_[bytes_at + first]) ++first;
  while (!lengths_[bytes_at + last]) --last;
  std::uint8_t* out = dst;
  *out++ = pair ? kPairHuffman : kHuffmanRange;
  if (pair) {
    *out++ = static_cast<std::uint8_t>(alphabet.paired);
    out = std::copy_n(alphabet.bytes.begin(), alphabet.paired, out);
    out = std::copy(pair->chosen.begin(), pair->chosen.end(), out);
  }
  *out++ = static_cast<std::uint8_t>(first);
  *out++ = static_cast<std::uint8_t>(last);
  // The pairs' lengths and the bytes' are one run of nibbles.
  lengths_.erase(lengths_.begin() + static_cast<std::ptrdiff_t>(bytes_at + last + 1), lengths_.end());
  lengths_.erase(lengths_.begin() + static_cast<std::ptrdiff_t>(bytes_at),
                 lengths_.begin() + static_cast<std::ptrdiff_t>(bytes_at + first));
  out = put_lengths(lengths_, out);
  return static_cast<std::size_t>(out - dst) + encode_streams(src, n, alphabet, out);
}

std::size_t HuffCoder::encode_streams(const std::uint8_t* src, std::size_t n, const PairAlphabet& alphabet,
                                      std::uint8_t* dst) {
  std::uint8_t* sizes = dst;
  std::uint8_t* out = dst + kSizesBytes;
  const auto bounds = stream_bounds(n);
  std::array<EncodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    scratch_[s].resize((bounds[s + 1] - bounds[s]) * kMaxLength / 8 + 16);
    lanes[s] = {src + bounds[s], scratch_[s].data()};
  }
  kernels_.encode_bulk(lanes.data(), bounds[1] / 4, pair_codes_);
  for (std::size_t s = 0; s < kStreams; ++s) {
    // The rest of the stream a pair at a time, as the bulk went; an odd last byte by its byte code.
    EncodeLane& lane = lanes[s];
    const std::uint8_t* end = src + bounds[s + 1];
    for (; end - lane.in >= 2; lane.in += 2) {
      const unsigned pair = lane.in[0] | (lane.in[1] << 8);
      lane.put(pair_codes_.bits[pair], pair_codes_.lengths[pair]);
      lane.flush();
    }
    if (lane.in < end) {
      const std::uint32_t code = codes_[alphabet.byte_symbol(*lane.in++)];
      lane.put(code_bits(code), code_length(code));
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
  PairAlphabet alphabet;  // none paired but in format 5
  std::size_t header = 0;
  lengths_.assign(256, 0);
  if (src[0] == kHuffman && size >= 1 + 128 + kSizesBytes) {
    for (std::size_t s = 0; s < 256; ++s) lengths_[s] = length_nibble(src + 1, s);
    header = 1 + 128;
  } else if (src[0] == kHuffmanRange && size >= 3 && src[1] <= src[2]) {
    const unsigned first = src[1], last = src[2];
    header = 3 + (last - first + 2) / 2;
    if (size >= header + kSizesBytes)
      for (unsigned s = first; s <= last; ++s) lengths_[s] = length_nibble(src + 3, s - first);
    else
      header = 0;
  } else if (src[0] == kPairHuffman) {
    header = read_pair_header(src, size, alphabet);
  }
  if (header == 0 || n < 2)
    fail("corrupt frame: huff plane header (format {}, {} bytes for {} symbols)", src[0], size, n);
  // Only complete prefix codes are accepted, so every window decodes to real symbols.
  for (std::uint8_t l : lengths_)
    if (l > kMaxLength) fail("corrupt frame: huff code length {} > {}", l, kMaxLength);
  if (!complete_code(lengths_)) fail("corrupt frame: huff code lengths do not form a complete code");
  codes_.resize(lengths_.size());
  canonical_codes(lengths_, codes_);
  build_decode_table(alphabet, codes_, table_.data(), kernels_.window_entries);
  decode_streams(src, size, header, dst, n);
}

std::size_t HuffCoder::read_pair_header(const std::uint8_t* src, std::size_t size, PairAlphabet& alphabet) {
  const std::size_t m = size >= 2 ? src[1] : 0;
  if (m < 2 || m > kMaxPaired) return 0;
  const std::size_t range_at = 2 + m + chosen_bytes(m);  // where first and last are
  if (size < range_at + 2 || src[range_at] > src[range_at + 1]) return 0;
  alphabet = pair_alphabet(std::span(src + 2, m), std::span(src + 2 + m, chosen_bytes(m)));
  const unsigned first = src[range_at], last = src[range_at + 1];
  const std::size_t pairs = alphabet.pair_symbols(), nibbles = pairs + (last - first + 1);
  const std::size_t header = range_at + 2 + (nibbles + 1) / 2;
  if (size < header + kSizesBytes) return 0;
  const std::uint8_t* packed = src + range_at + 2;
  lengths_.assign(alphabet.size(), 0);
  for (std::size_t k = 0; k < pairs; ++k) lengths_[k] = length_nibble(packed, k);
  for (unsigned s = first; s <= last; ++s) lengths_[pairs + s] = length_nibble(packed, pairs + s - first);
  return header;
}

void HuffCoder::decode_streams(const std::uint8_t* src, std::size_t size, std::size_t offset, std::uint8_t* dst,
                               std::size_t n) {
  const std::uint8_t* sizes = src + offset;
  offset += kSizesBytes;
  const auto bounds = stream_bounds(n);
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
      if (!lane.decode_one(table_.data())) fail("corrupt frame: huff stream {} codes a pair past its end", s);
    }
    if (lane.consumed_bits() > 8 * static_cast<std::uint64_t>(lane.in_end - lane.start))
      fail("corrupt frame: huff stream {} ends before its symbols do", s);
  }
}

}  // namespace

std::unique_ptr<PlaneCoder> make_huff_coder(SimdPath path) { return std::make_unique<HuffCoder>(path); }

}  // namespace wirezip::codecs
