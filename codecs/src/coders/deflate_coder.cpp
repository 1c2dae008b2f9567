// bytegroup+deflate's plane coder: each coded plane is one standard raw DEFLATE stream (RFC 1951),
// a single final dynamic-Huffman block of literals only, so any conforming inflate decodes it alone
// (BlueField-3's engine, ISA-L, zlib, libdeflate). Decoding goes through the decoder seam.
//
// The literal code is the huff coder's (huff_tables.hpp: the same sampled histogram and code
// lengths of at most 11 bits, so the ratio matches bytegroup+huff's) plus an end-of-block code made
// by splitting one longest code, so no code is over 12 bits. Four lanes encode quarters
// of the plane interleaved; lanes 1-3 are then appended bit-exactly after lane 0, which writes the
// header and its quarter straight into the output, so the result is one ordinary block.
#include <algorithm>
#include <bit>
#include <cstring>

#include "coders/deflate_block.hpp"
#include "coders/huff_kernels.hpp"
#include "coders/huff_tables.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff;
constexpr std::size_t kLanes = 4;
constexpr unsigned kLongestCode = kMaxLength + 1;  // the split code and end-of-block

void store64(std::uint8_t* p, std::uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

// One LSB-first bit stream. flush() stores 8 bytes and keeps at most 7 bits pending, so two pair
// codes (2 x 24 bits) always fit before the next flush.
struct Lane {
  const std::uint8_t* in;
  std::uint8_t* start;
  std::uint8_t* out;
  std::uint64_t bits = 0;
  unsigned count = 0;

  void put(std::uint32_t code_bits, unsigned length) {
    bits |= static_cast<std::uint64_t>(code_bits) << count;
    count += length;
  }
  void flush() {
    store64(out, bits);
    const unsigned bytes = count >> 3;
    out += bytes;
    bits >>= 8 * bytes;
    count &= 7;
  }
  // Bits written: whole bytes plus the pending ones, which flush() has stored already.
  std::uint64_t bit_count() const { return 8 * static_cast<std::uint64_t>(out - start) + count; }
};

// Rounds of four symbols (two pair lookups) per lane, two lanes at a time (as huff.cpp does).
void encode_bulk(Lane* lanes, std::size_t groups, const PairCodes& pairs) {
  const std::uint32_t* bits = pairs.bits.data();
  const std::uint8_t* lengths = pairs.lengths.data();
  auto round = [bits, lengths](Lane& l) {
    const unsigned p0 = l.in[0] | (l.in[1] << 8), p1 = l.in[2] | (l.in[3] << 8);
    l.put(bits[p0], lengths[p0]);
    l.put(bits[p1], lengths[p1]);
    l.in += 4;
    l.flush();
  };
  for (std::size_t first = 0; first < kLanes; first += 2) {
    Lane a = lanes[first], b = lanes[first + 1];
    for (std::size_t g = 0; g < groups; ++g) {
      round(a);
      round(b);
    }
    lanes[first] = a, lanes[first + 1] = b;
  }
}

// Code lengths for literals and end-of-block: the huff coder's lengths, with one longest code split
// in two (that symbol and end-of-block), which keeps the code complete.
std::array<std::uint8_t, deflate::kLiterals> literal_lengths(const std::uint8_t* src, std::size_t n) {
  std::array<std::uint8_t, deflate::kLiterals> out{};
  const ByteRange range = huff_kernels(best_simd_path()).byte_range(src, n);
  // One symbol: it and end-of-block get one bit each. Frames store such planes as constant planes
  // and never get here; this keeps the coder correct for any plane (huff's lengths need two symbols).
  if (single_symbol(range)) {
    out[src[0]] = out[deflate::kEndOfBlock] = 1;
    return out;
  }
  const Lengths lengths = code_lengths(estimate_counts(src, n, range));
  std::copy(lengths.begin(), lengths.end(), out.begin());
  const auto longest = std::max_element(out.rbegin() + 1, out.rend());  // the last symbol of the longest length
  ++*longest;
  out[deflate::kEndOfBlock] = *longest;
  return out;
}

class DeflateCoder final : public PlaneCoder {
 public:
  explicit DeflateCoder(std::unique_ptr<StreamDecoder> decoder) : decoder_(std::move(decoder)) {}
  CoderId id() const override { return CoderId::deflate; }
  std::size_t bound(std::size_t n) const override {
    return deflate::kMaxHeaderBytes + n * kLongestCode / 8 + 16 * kLanes;
  }
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override;
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override { decoder_->decode(src, dst); }

 private:
  std::unique_ptr<StreamDecoder> decoder_;
  std::array<std::vector<std::uint8_t>, kLanes> scratch_;  // lanes 1-3, appended after lane 0
  PairCodes pair_codes_;
};

std::size_t DeflateCoder::encode(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = src_bytes.size();
  if (n == 0) {  // a final fixed-Huffman block holding only end-of-block
    dst[0] = 0x03, dst[1] = 0x00;
    return 2;
  }
  const std::array<std::uint8_t, deflate::kLiterals> lengths = literal_lengths(src, n);
  std::array<std::uint32_t, deflate::kLiterals> all_codes{};
  canonical_codes(lengths, all_codes);
  build_pair_codes(std::span(all_codes).first(256), pair_codes_);

  deflate::BitWriter header;
  deflate::write_block_header(lengths, header);
  const std::vector<std::uint8_t>& head = header.bytes();
  std::memcpy(dst, head.data(), head.size());

  const std::size_t q = n / kLanes;
  const std::array<std::size_t, kLanes + 1> bounds{0, q, 2 * q, 3 * q, n};
  std::array<Lane, kLanes> lanes;
  // Lane 0 continues the header's last, partial byte in place.
  const std::size_t head_bytes = header.bit_count() / 8;
  lanes[0] = {src, dst, dst + head_bytes, header.bit_count() % 8 ? head.back() : 0u,
              static_cast<unsigned>(header.bit_count() % 8)};
  for (std::size_t s = 1; s < kLanes; ++s) {
    scratch_[s].resize((bounds[s + 1] - bounds[s]) * kLongestCode / 8 + 32);
    lanes[s] = {src + bounds[s], scratch_[s].data(), scratch_[s].data()};
  }
  encode_bulk(lanes.data(), q / 4, pair_codes_);
  for (std::size_t s = 0; s < kLanes; ++s) {
    Lane& lane = lanes[s];
    for (const std::uint8_t* end = src + bounds[s + 1]; lane.in < end; ++lane.in) {
      lane.put(code_bits(all_codes[*lane.in]), code_length(all_codes[*lane.in]));
      lane.flush();
    }
  }
  const std::uint32_t end_of_block = all_codes[deflate::kEndOfBlock];
  lanes[kLanes - 1].put(code_bits(end_of_block), code_length(end_of_block));
  lanes[kLanes - 1].flush();

  std::uint64_t position = lanes[0].bit_count();
  for (std::size_t s = 1; s < kLanes; ++s)
    position = deflate::append_bits(dst, position, lanes[s].start, lanes[s].bit_count());
  return (position + 7) / 8;  // the final block ends the stream; its last byte is zero-padded
}

}  // namespace

std::unique_ptr<PlaneCoder> make_deflate_coder(std::unique_ptr<StreamDecoder> decoder) {
  return std::make_unique<DeflateCoder>(std::move(decoder));
}

}  // namespace wirezip::codecs
