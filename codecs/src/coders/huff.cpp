// wirezip's own order-0 coder: canonical Huffman, codes of at most 11 bits, four streams coded and
// decoded interleaved so one core overlaps their dependency chains. The encoder looks up two
// symbols at a time; the decoder up to four per 11-bit window. The hot loops come from the coder's
// SIMD path (huff_kernels.hpp); the format and every byte written are the same on every path.
//
// Why our own: htscodecs rANS, zstd with forced literals and ISA-L igzip were measured side by side
// in bench_codec, and none codes the bf16 exponent plane fast enough to match blosc's throughput.
// Huffman loses well under 0.05 bit/byte to the order-0 bound on these planes.
//
// Coded plane: format byte | 256 code lengths, 4 bits each (128 bytes) | sizes of streams 0-2 (u32 LE)
// | 4 LSB-first bit streams. Stream s codes symbols [s*q, (s+1)*q), q = n/4; the last takes the rest.
#include <cstring>

#include "coders/huff_kernels.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff;

constexpr std::size_t kLengthsOffset = 1, kSizesOffset = 1 + 128;
constexpr std::size_t kHeaderSize = kSizesOffset + 4 * (kStreams - 1);
enum Format : std::uint8_t { kEmpty = 0, kSingleSymbol = 1, kHuffman = 2 };

std::uint32_t load32(const std::uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
void store32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::array<std::size_t, kStreams + 1> stream_bounds(std::size_t n) {
  const std::size_t q = n / kStreams;
  return {0, q, 2 * q, 3 * q, n};
}

class HuffCoder final : public PlaneCoder {
 public:
  explicit HuffCoder(SimdPath path) : kernels_(huff_kernels(path)) {}
  CoderId id() const override { return CoderId::huff; }
  std::size_t bound(std::size_t n) const override { return kHeaderSize + n * kMaxLength / 8 + 16 * kStreams; }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override;
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
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
  const ByteRange range = kernels_.byte_range(src, n);
  if (single_symbol(range)) {
    dst[0] = kSingleSymbol;
    dst[1] = src[0];
    return 2;
  }
  const Lengths lengths = code_lengths(estimate_counts(src, n, range));
  const Codes codes = canonical_codes(lengths);
  build_pair_codes(codes, pair_codes_);
  dst[0] = kHuffman;
  for (int i = 0; i < 128; ++i)
    dst[kLengthsOffset + i] = static_cast<std::uint8_t>(lengths[2 * i] | (lengths[2 * i + 1] << 4));

  const auto bounds = stream_bounds(n);
  std::array<EncodeLane, kStreams> lanes;
  for (std::size_t s = 0; s < kStreams; ++s) {
    scratch_[s].resize((bounds[s + 1] - bounds[s]) * kMaxLength / 8 + 16);
    lanes[s] = {src + bounds[s], scratch_[s].data()};
  }
  kernels_.encode_bulk(lanes.data(), bounds[1] / 4, pair_codes_);
  std::uint8_t* out = dst + kHeaderSize;
  for (std::size_t s = 0; s < kStreams; ++s) {
    EncodeLane& lane = lanes[s];
    for (const std::uint8_t* end = src + bounds[s + 1]; lane.in < end; ++lane.in) {
      lane.put(code_bits(codes[*lane.in]), code_length(codes[*lane.in]));
      lane.flush();
    }
    lane.finish();
    const std::size_t size = static_cast<std::size_t>(lane.out - scratch_[s].data());
    if (s + 1 < kStreams) store32(dst + kSizesOffset + 4 * s, static_cast<std::uint32_t>(size));
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
  if (src[0] == kSingleSymbol && size == 2 && n > 0) return void(std::memset(dst, src[1], n));
  if (src[0] != kHuffman || size < kHeaderSize || n < 2)
    fail("corrupt frame: huff plane header (format {}, {} bytes for {} symbols)", src[0], size, n);

  // Only complete prefix codes are accepted, so every window decodes to real symbols.
  std::uint32_t kraft = 0;
  Lengths lengths;
  for (int s = 0; s < 256; ++s) {
    lengths[s] = (src[kLengthsOffset + s / 2] >> (4 * (s % 2))) & 0xf;
    if (lengths[s] > kMaxLength) fail("corrupt frame: huff code length {} > {}", lengths[s], kMaxLength);
    if (lengths[s]) kraft += 1u << (kMaxLength - lengths[s]);
  }
  if (kraft != (1u << kMaxLength)) fail("corrupt frame: huff code lengths do not form a complete code");
  build_decode_table(canonical_codes(lengths), table_.data());

  const auto bounds = stream_bounds(n);
  std::array<DecodeLane, kStreams> lanes;
  std::size_t offset = kHeaderSize;
  for (std::size_t s = 0; s < kStreams; ++s) {
    const std::size_t stream_size = s + 1 < kStreams ? load32(src + kSizesOffset + 4 * s) : size - offset;
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
