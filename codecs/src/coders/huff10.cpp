// wirezip's fast coder for whole bf16 chunks at the ratio of a 10-bit Huffman code. Each element's
// exponent and its top 2 mantissa bits make one byte symbol: the exponent as its place in a window
// of 62 the chunk chooses (exponent 0 apart, any other escaped and stored whole), so the symbol
// plane is coded by huff.cpp, with its byte-pair codes, blocks and multi-symbol SIMD decoding. The
// sign and low 5 mantissa bits, near-random in weights, are stored. Against the exponent split
// (bytegroup:split=exponent+huff) the two mantissa bits spread the exponent's mass over four times
// the symbols, which shrinks Huffman's whole-bit loss (docs/CODECS.md).
//
// A coded chunk of n bytes: m = n / 2 little-endian elements.
//   0 (no element) | the n % 2 tail byte
//   1 (coded) | base (1..194) | u32 E | stored bits: each element's sign and mantissa bits 4-0 as
//     6 bits (the sign highest), packed four to three bytes in groups of 128 elements
//     (huff10_kernels.hpp), the elements after the last whole group a byte each | the n % 2 tail
//     byte | the symbol plane (m bytes) coded by huff | E exponent bytes.
// Symbol byte i: s << 2 | element i's mantissa bits 6-5. s = 0 stands for exponent 0, s in 1..62
// for exponent base + s - 1, and s = 63 for the next of the E exponent bytes (in element order).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "coders/bit_reader.hpp"
#include "coders/huff10_kernels.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace huff10;

enum Format : std::uint8_t { kNoElements = 0, kCoded = 1 };
constexpr std::size_t kHeaderBytes = 1 + 1 + 4;
// Elements per pass of split or merge (a whole number of groups): 16 KiB of them, with their
// symbols and stored bits, stay in L1 while the block is hashed.
constexpr std::size_t kBlockElements = 8 << 10;
// The window is chosen from one 256-element block in 64: it needs the bulk of the exponents, and
// an exponent the sample misses costs its elements an escape, not correctness.
constexpr std::size_t kSampleBlock = 256, kSampleEvery = 64 * kSampleBlock;
// Octaves the window reaches above the largest sampled exponent, where it can.
constexpr int kHeadroom = 4;

// The base of the window for elements [0, m): one that holds the most sampled nonzero exponents.
std::uint8_t choose_base(const std::uint8_t* src, std::size_t m) {
  // Four tables for alternate elements: neighbours share exponents, and one table would chain each
  // count on the one before it (a store, then a load of the same place).
  std::array<std::array<std::uint32_t, 256>, 4> tables{};
  std::array<std::uint32_t, 256> counts{};
  auto count = [&](std::size_t block, std::size_t every) {
    for (std::size_t start = 0; start < m; start += every) {
      const std::size_t end = std::min(m, start + block);
      for (std::size_t i = start; i < end; ++i) ++tables[i % 4][exponent_bits(src[2 * i], src[2 * i + 1])];
    }
    for (std::size_t e = 1; e < 256; ++e) counts[e] = tables[0][e] + tables[1][e] + tables[2][e] + tables[3][e];
  };
  count(kSampleBlock, kSampleEvery);
  // A sample of zeros only (a chunk that starts with zero padding) says nothing of the rest: then
  // every element is counted, once, for such chunks alone.
  if (std::all_of(counts.begin(), counts.end(), [](std::uint32_t c) { return c == 0; })) count(m, m);
  std::array<std::uint32_t, kMaxBase + 1> held{};  // by base: the sampled exponents its window holds
  for (unsigned e = 1; e <= kWindow; ++e) held[1] += counts[e];
  for (unsigned base = 2; base <= kMaxBase; ++base)
    held[base] = held[base - 1] + counts[base + kWindow - 1] - counts[base - 1];
  const std::uint32_t most = *std::max_element(held.begin() + 1, held.end());
  // Of the windows that hold the most, the one whose top lies a few octaves above the largest
  // exponent sampled: larger values the sample missed are few octaves up, while small ones trail
  // off over many octaves down.
  unsigned largest = 0;
  for (unsigned e = 1; e < 256; ++e)
    if (counts[e]) largest = e;
  const int wanted = static_cast<int>(largest) + kHeadroom - static_cast<int>(kWindow - 1);
  unsigned best = 0;
  int off = 256;  // |best - wanted|
  for (unsigned base = 1; base <= kMaxBase; ++base) {
    if (held[base] == most && std::abs(static_cast<int>(base) - wanted) < off)
      best = base, off = std::abs(static_cast<int>(base) - wanted);
  }
  return static_cast<std::uint8_t>(best);
}

class Huff10Coder final : public HashingChunkCoder {
 public:
  CoderId id() const override { return CoderId::huff10; }
  std::size_t bound(std::size_t n) const override {
    const std::size_t m = n / 2;  // every exponent escaped
    return kHeaderBytes + stored_size(m) + 1 + symbols_->bound(m) + m;
  }

 private:
  // A block at a time.
  std::size_t encode_chunk(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream* hash) override;
  void decode_chunk(std::span<const std::byte> src, std::span<std::byte> dst, ChecksumStream* hash) override;

  std::unique_ptr<PlaneCoder> symbols_ = make_huff_coder();
  std::vector<std::uint8_t> sym_;      // the symbol plane
  std::vector<std::uint8_t> escaped_;  // exponents of escaped symbols, in element order
};

std::size_t Huff10Coder::encode_chunk(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes,
                                      ChecksumStream* hash) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t n = src_bytes.size(), m = n / 2, tail = n % 2;
  if (m == 0) {
    feed(hash, src, n);
    dst[0] = kNoElements;
    if (tail) dst[1] = src[0];
    return 1 + tail;
  }
  // E is a u32: frames hold planes under 4 GiB, and this keeps any other caller honest.
  if (m > std::numeric_limits<std::uint32_t>::max()) fail("huff10: a chunk of {} elements is not under 2^32", m);
  const std::uint8_t base = choose_base(src, m);
  std::uint8_t* out = dst;
  *out++ = kCoded;
  *out++ = base;
  std::uint8_t* escape_count = out;
  out += 4;
  std::uint8_t* stored = out;
  out += stored_size(m);
  if (tail) *out++ = src[n - 1];

  sym_.resize(m);
  escaped_.clear();
  for (std::size_t first = 0; first < m; first += kBlockElements) {
    const std::size_t count = std::min(kBlockElements, m - first);
    const std::uint8_t* block = src + 2 * first;
    feed(hash, block, 2 * count);
    if (!split_elements(block, count, base, sym_.data() + first, stored + stored_size(first))) continue;
    for (std::size_t i = 0; i < count; ++i)
      if (sym_[first + i] >= kFirstEscapedByte) escaped_.push_back(exponent_bits(block[2 * i], block[2 * i + 1]));
  }
  feed(hash, src + 2 * m, tail);
  store32(escape_count, static_cast<std::uint32_t>(escaped_.size()));
  const std::span<const std::byte> plane{reinterpret_cast<const std::byte*>(sym_.data()), m};
  out += symbols_->encode(plane, {reinterpret_cast<std::byte*>(out), symbols_->bound(m)});
  std::copy(escaped_.begin(), escaped_.end(), out);
  return static_cast<std::size_t>(out + escaped_.size() - dst);
}

void Huff10Coder::decode_chunk(std::span<const std::byte> src_bytes, std::span<std::byte> dst_bytes,
                               ChecksumStream* hash) {
  const auto* src = reinterpret_cast<const std::uint8_t*>(src_bytes.data());
  auto* dst = reinterpret_cast<std::uint8_t*>(dst_bytes.data());
  const std::size_t size = src_bytes.size(), n = dst_bytes.size(), m = n / 2, tail = n % 2;
  if (size == 0) fail("huff10: empty coded chunk");
  if (src[0] == kNoElements) {
    if (m != 0) fail("huff10: coded chunk holds no element, the output {}", m);
    if (size != 1 + tail) fail("huff10: {} bytes for a chunk of {} bytes and no element", size, n);
    if (tail) dst[0] = src[1];
    feed(hash, dst, n);
    return;
  }
  if (src[0] != kCoded) fail("huff10: unknown format {}", src[0]);
  if (m == 0) fail("huff10: coded elements for an output of {} bytes", n);
  const std::size_t fixed = kHeaderBytes + stored_size(m) + tail;  // m < 2^63: no overflow
  if (size < fixed) fail("huff10: coded chunk of {} bytes ends inside its {}-byte header and low bits", size, fixed);
  const std::uint8_t base = src[1];
  if (base < 1 || base > kMaxBase) fail("huff10: window base {} is not within 1..{}", base, kMaxBase);
  const std::size_t escapes = load32(src + 2);
  if (escapes > size - fixed) fail("huff10: {} escaped exponents, {} bytes are left", escapes, size - fixed);
  const std::uint8_t* stored = src + kHeaderBytes;
  const std::uint8_t* exponents = src + size - escapes;
  sym_.resize(m);
  symbols_->decode({reinterpret_cast<const std::byte*>(src + fixed), size - fixed - escapes},
                   {reinterpret_cast<std::byte*>(sym_.data()), m});

  std::size_t taken = 0;  // escaped exponents used
  for (std::size_t first = 0; first < m; first += kBlockElements) {
    const std::size_t count = std::min(kBlockElements, m - first);
    std::uint8_t* block = dst + 2 * first;
    if (merge_elements(sym_.data() + first, stored + stored_size(first), count, base, block)) {
      for (std::size_t i = 0; i < count; ++i) {
        if (sym_[first + i] < kFirstEscapedByte) continue;
        if (taken == escapes) fail("huff10: more escaped symbols than the {} escaped exponents", escapes);
        const unsigned exponent = exponents[taken++];
        block[2 * i] = static_cast<std::uint8_t>((block[2 * i] & 0x7f) | (exponent & 1) << 7);
        block[2 * i + 1] = static_cast<std::uint8_t>((block[2 * i + 1] & 0x80) | exponent >> 1);
      }
    }
    feed(hash, block, 2 * count);
  }
  if (taken != escapes) fail("huff10: {} escaped exponents, the symbols use {}", escapes, taken);
  if (tail) dst[n - 1] = src[fixed - 1];
  feed(hash, dst + 2 * m, tail);
}

}  // namespace

std::unique_ptr<PlaneCoder> make_huff10_coder() { return std::make_unique<Huff10Coder>(); }

}  // namespace wirezip::codecs
