// wirezip's own order-0 coder: canonical Huffman, codes of at most 11 bits, four streams coded and
// decoded interleaved so one core overlaps their dependency chains. The encoder looks up two
// symbols at a time; the decoder up to four per 11-bit window.
//
// Why our own: htscodecs rANS, zstd with forced literals and ISA-L igzip were measured side by side
// in bench_codec, and none codes the bf16 exponent plane fast enough to match blosc's throughput.
// Huffman loses well under 0.05 bit/byte to the order-0 bound on these planes.
//
// Coded plane: format byte | 256 code lengths, 4 bits each (128 bytes) | sizes of streams 0-2 (u32 LE)
// | 4 LSB-first bit streams. Stream s codes symbols [s*q, (s+1)*q), q = n/4; the last takes the rest.
#include <algorithm>
#include <bit>
#include <cstring>

#include "huff_tables.hpp"
#include "plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff;

constexpr std::size_t kStreams = 4;
constexpr std::size_t kLengthsOffset = 1, kSizesOffset = 1 + 128;
constexpr std::size_t kHeaderSize = kSizesOffset + 4 * (kStreams - 1);
enum Format : std::uint8_t { kEmpty = 0, kSingleSymbol = 1, kHuffman = 2 };

std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
void store64(std::uint8_t* p, std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
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

struct EncodeLane {
  const std::uint8_t* in;
  std::uint8_t* out;
  std::uint64_t bits = 0;
  unsigned count = 0;

  void put(std::uint32_t code_bits, unsigned length) {
    bits |= static_cast<std::uint64_t>(code_bits) << count;
    count += length;
  }
  // At most 7 bits stay pending, so two 22-bit pair codes always fit before the next flush.
  void flush() {
    store64(out, bits);
    const unsigned bytes = count >> 3;
    out += bytes;
    bits >>= 8 * bytes;  // bytes <= 6: count never exceeds 7 + 2 * 22
    count &= 7;
  }
  void finish() {
    flush();
    if (count) *out++ = static_cast<std::uint8_t>(bits);
  }
};

// The bulk of encoding: `groups` rounds of four symbols (two pair lookups) per lane. Two lanes go
// together: enough independent work to hide latency, few enough values to stay in registers.
// The lanes are copied into locals so byte stores cannot alias their state.
WZ_HOT void encode_bulk(EncodeLane* lanes, std::size_t groups, const PairCodes& pairs) {
  const std::uint32_t* bits = pairs.bits.data();
  const std::uint8_t* lengths = pairs.lengths.data();
  auto round = [bits, lengths](EncodeLane& l) {
    const unsigned p0 = l.in[0] | (l.in[1] << 8), p1 = l.in[2] | (l.in[3] << 8);
    l.put(bits[p0], lengths[p0]);
    l.put(bits[p1], lengths[p1]);
    l.in += 4;
    l.flush();
  };
  for (std::size_t first = 0; first < kStreams; first += 2) {
    EncodeLane a = lanes[first], b = lanes[first + 1];
    for (std::size_t g = 0; g < groups; ++g) {
      round(a);
      round(b);
    }
    lanes[first] = a, lanes[first + 1] = b;
  }
}

// One stream decoding into its own part of the plane. Past the stream's end it reads zeros and
// counts them, so a corrupt stream is caught by consumed_bits(), never by an out-of-bounds read.
struct DecodeLane {
  const std::uint8_t* start;
  const std::uint8_t* in;
  const std::uint8_t* in_end;
  std::uint8_t* out;
  std::uint8_t* out_end;
  std::uint64_t bits = 0;
  unsigned count = 0;
  std::size_t overrun = 0;  // bytes taken past in_end

  // Branch-free refill to >= 56 bits; the caller guarantees 8 readable bytes at `in`.
  void refill_unchecked() {
    bits |= load64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
  }
  void refill() {
    if (in_end - in >= 8) return refill_unchecked();
    std::uint8_t tail[8] = {};
    const std::size_t left = static_cast<std::size_t>(in_end - in);
    std::memcpy(tail, in, left);
    bits |= load64(tail) << count;
    const std::size_t advance = (63 - count) >> 3;
    in += std::min(advance, left);
    overrun += advance - std::min(advance, left);
    count |= 56;
  }
  // Decodes up to four symbols; always writes four bytes at `out`.
  void decode_window(const DecodeEntry* table) {
    const DecodeEntry e = table[bits & kWindowMask];
    auto symbols = static_cast<std::uint32_t>(e);  // the first symbol in the low byte
    if constexpr (std::endian::native == std::endian::big) symbols = __builtin_bswap32(symbols);
    std::memcpy(out, &symbols, 4);
    out += (e >> 32) & 0xff;
    const unsigned used = (e >> 40) & 0xff;
    bits >>= used;
    count -= used;
  }
  void decode_one(const DecodeEntry* table) {
    const DecodeEntry e = table[bits & kWindowMask];
    *out++ = static_cast<std::uint8_t>(e);
    const unsigned used = (e >> 48) & 0xff;
    bits >>= used;
    count -= used;
  }
  std::uint64_t consumed_bits() const { return 8 * static_cast<std::uint64_t>(in - start + overrun) - count; }
  // Room for one bulk round: an 8-byte refill, then five windows that each write 4 bytes.
  bool bulk_ready() const { return in_end - in >= 8 && out_end - out >= 5 * kMaxSymbolsPerEntry; }
};

// The bulk of decoding: all four lanes advance together while each has room for a full round.
WZ_HOT void decode_bulk(DecodeLane* lanes, const DecodeEntry* table) {
  DecodeLane a = lanes[0], b = lanes[1], c = lanes[2], d = lanes[3];
  while (a.bulk_ready() & b.bulk_ready() & c.bulk_ready() & d.bulk_ready()) {
    a.refill_unchecked();
    b.refill_unchecked();
    c.refill_unchecked();
    d.refill_unchecked();
    for (int window = 0; window < 5; ++window) {  // 56 bits hold five windows' codes of <= 11 bits
      a.decode_window(table);
      b.decode_window(table);
      c.decode_window(table);
      d.decode_window(table);
    }
  }
  lanes[0] = a, lanes[1] = b, lanes[2] = c, lanes[3] = d;
  // Lanes finish unevenly (a run of short codes decodes faster): the rest go on one at a time.
  for (std::size_t s = 0; s < kStreams; ++s) {
    DecodeLane lane = lanes[s];
    while (lane.bulk_ready()) {
      lane.refill_unchecked();
      for (int window = 0; window < 5; ++window) lane.decode_window(table);
    }
    lanes[s] = lane;
  }
}

class HuffCoder final : public PlaneCoder {
 public:
  CoderId id() const override { return CoderId::huff; }
  std::size_t bound(std::size_t n) const override { return kHeaderSize + n * kMaxLength / 8 + 16 * kStreams; }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override;
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
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
  const ByteRange range = byte_range(src, n);
  if (range.low == range.high) {
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
  encode_bulk(lanes.data(), bounds[1] / 4, pair_codes_);
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
    lanes[s] = {src + offset, src + offset, src + offset + stream_size, dst + bounds[s], dst + bounds[s + 1]};
    offset += stream_size;
  }
  decode_bulk(lanes.data(), table_.data());
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

std::unique_ptr<PlaneCoder> make_huff_coder() { return std::make_unique<HuffCoder>(); }

}  // namespace wirezip::codecs
