// bytegroup:split=exponent+ans:context=exponent: the exponent split, the exponent plane coded by
// ans (order 0), and the sign/mantissa plane coded with a model per exponent value. Order-0 coding
// of the planes stops at the exponent bound (1.521 on bf16 weights); the sign and mantissa are not
// independent of the exponent (in the top binades of a bell-shaped distribution small mantissas
// are more likely), and coding them given the exponent reaches for the 16-bit value bound (1.530).
//
// The model: per exponent, frequencies of 32 buckets (sign and the top 4 bits of the plane-1
// byte's mantissa), the low 3 bits written as they are. Whole 256-symbol tables would cost ~0.5 KB
// per exponent and chunk, more than they gain; within a bucket the density is nearly flat, so the
// buckets lose ~0.002 bit per element. Exponents too rare to pay for their table share a uniform
// one that costs exactly 8 bits, so every element goes through the same branch-free decode step.
//
// Plane 1, coded: format byte (3) | table log | u16 LE count k of modelled exponents | k x (exponent,
// 32 x u16 LE bucket frequencies) | streams (ans_model.hpp). This is FramedCodec's plane coder for
// the spec: the frame hands it plane 1 with plane 0 beside it (encode_given, decode_given); the
// other planes, fp32's plain mantissa bytes among them, are order-0 ans planes.
#include <algorithm>
#include <array>
#include <cstring>

#include "coders/ans_model.hpp"
#include "coders/plane_coder.hpp"
#include "wirezip/codecs/exponent_split.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace ans;

constexpr std::uint8_t kContextFormat = 3;  // ans.cpp's formats are 0-2
constexpr unsigned kTableLog = 10, kBuckets = 32, kRaw = 3;
constexpr std::size_t kTableSize = std::size_t{1} << kTableLog;
constexpr std::size_t kMaxContexts = 64;  // tables beyond the most frequent exponents gain nothing
constexpr std::size_t kContextHeaderMax = 4 + kMaxContexts * (1 + 2 * kBuckets);

// Symbol i is coded with the table of its exponent (index 0: the uniform table).
struct ByExponent {
  const std::uint8_t* exponents;
  std::uint8_t mask;  // the exponent bits of a plane-0 byte (fp16 keeps mantissa bits above them)
  const std::uint8_t* index;
  const EncodeTable* encode_tables;
  const DecodeEntry* decode_tables;
  const EncodeTable& encode(std::size_t i) const { return encode_tables[index[exponents[i] & mask]]; }
  const DecodeEntry* decode(std::size_t i) const {
    return decode_tables + (static_cast<std::size_t>(index[exponents[i] & mask]) << kTableLog);
  }
};

WZ_ANS_HOT std::array<EncodedStream, kStreams> encode_by_exponent(
    const std::uint8_t* plane, std::size_t n, const ByExponent& model,
    std::array<std::vector<std::uint8_t>, kStreams>& scratch) {
  return encode_streams<kRaw>(plane, n, kTableLog, model, scratch);
}

WZ_ANS_HOT void decode_by_exponent(const std::array<EncodedStream, kStreams>& streams, std::uint8_t* out, std::size_t n,
                                   const ByExponent& model) {
  decode_streams<kRaw>(streams, kTableLog, out, n, model);
}

Freqs uniform_freqs() {
  Freqs freqs{};
  std::fill_n(freqs.begin(), kBuckets, static_cast<std::uint16_t>(kTableSize / kBuckets));
  return freqs;
}

class ExponentContextCoder final : public PlaneCoder {
 public:
  explicit ExponentContextCoder(FloatFormat format)
      : mask_(format == FloatFormat::fp16 ? 0x1f : 0xff), ans_(make_ans_coder()) {}

  CoderId id() const override { return CoderId::ans; }
  std::size_t bound(std::size_t n) const override {
    return std::max(ans_->bound(n), kContextHeaderMax + kStreamsHeaderSize + kStreams * stream_bound(n / 4 + 3));
  }
  // Planes without the exponents beside them (the exponent plane itself, fp32's low mantissa
  // bytes) are plain order-0 ans planes.
  std::size_t encode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    return ans_->encode(src, dst);
  }
  void decode(std::span<const std::byte> src, std::span<std::byte> dst) override {
    if (!src.empty() && static_cast<std::uint8_t>(src[0]) == kContextFormat)
      fail("corrupt frame: only plane 1 may be coded given the exponents");
    ans_->decode(src, dst);
  }

  std::uint32_t conditioned_planes() const override { return 1u << 1; }
  std::size_t encode_given(std::span<const std::byte> src, std::span<const std::byte> exponents,
                           std::span<std::byte> dst) override {
    if (src.size() < 4) return encode(src, dst);
    return encode_context(reinterpret_cast<const std::uint8_t*>(exponents.data()),
                          reinterpret_cast<const std::uint8_t*>(src.data()), src.size(),
                          reinterpret_cast<std::uint8_t*>(dst.data()));
  }
  void decode_given(std::span<const std::byte> src, std::span<const std::byte> exponents,
                    std::span<std::byte> dst) override {
    if (src.empty() || static_cast<std::uint8_t>(src[0]) != kContextFormat) return decode(src, dst);
    decode_context(src, reinterpret_cast<const std::uint8_t*>(exponents.data()), dst);
  }

 private:
  // The plane given the exponents; returns the size written at out.
  std::size_t encode_context(const std::uint8_t* exponents, const std::uint8_t* plane, std::size_t n,
                             std::uint8_t* out);
  void decode_context(std::span<const std::byte> coded, const std::uint8_t* exponents, std::span<std::byte> plane);

  std::uint8_t mask_;  // the exponent bits of a plane-0 byte (fp16 keeps mantissa bits above them)
  std::unique_ptr<PlaneCoder> ans_;
  std::array<std::vector<std::uint8_t>, kStreams> streams_;
  std::vector<std::array<std::uint32_t, kBuckets>> counts_ = std::vector<std::array<std::uint32_t, kBuckets>>(256);
  std::vector<EncodeTable> encode_tables_;
  std::vector<DecodeEntry> decode_tables_;
};

std::size_t ExponentContextCoder::encode_context(const std::uint8_t* exponents, const std::uint8_t* plane,
                                                 std::size_t n, std::uint8_t* out) {
  // Bucket counts per exponent from a quarter of the plane (256 of every 1024 elements), as huff
  // samples; small planes are counted whole.
  const std::size_t block = n < (64 << 10) ? n : 256, every = n < (64 << 10) ? n : 1024;
  for (auto& c : counts_) c.fill(0);
  for (std::size_t start = 0; start < n; start += every)
    for (std::size_t i = start; i < std::min(n, start + block); ++i) ++counts_[exponents[i] & mask_][plane[i] >> kRaw];
  const double scale = static_cast<double>(every) / static_cast<double>(block);

  // Model an exponent where the table pays for itself: its bits saved over 8 per element exceed
  // the 65 bytes it costs. Every bucket gets a count (+1) so elements the sample missed have codes.
  struct Model {
    std::uint8_t exponent;
    std::uint64_t sampled;
    Freqs freqs;
  };
  std::array<std::uint8_t, 256> index{};
  std::vector<Model> models;
  for (unsigned e = 0; e < 256; ++e) {
    std::uint64_t sampled = 0;
    for (std::uint32_t c : counts_[e]) sampled += c;
    if (sampled * scale < 1024) continue;
    Counts counts{};
    for (unsigned b = 0; b < kBuckets; ++b) counts[b] = counts_[e][b] + 1;
    const Freqs freqs = normalize(counts, kTableLog);
    const double saved = scale * (static_cast<double>(sampled) * (8 - kRaw) - coded_bits(counts, freqs, kTableLog));
    if (saved > 8.0 * (1 + 2 * kBuckets)) models.push_back({static_cast<std::uint8_t>(e), sampled, freqs});
  }
  std::stable_sort(models.begin(), models.end(), [](const Model& a, const Model& b) { return a.sampled > b.sampled; });
  if (models.size() > kMaxContexts) models.resize(kMaxContexts);

  encode_tables_.resize(1 + models.size());
  build_encode_table(uniform_freqs(), kTableLog, encode_tables_[0]);
  out[0] = kContextFormat;
  out[1] = kTableLog;
  out[2] = static_cast<std::uint8_t>(models.size());
  out[3] = static_cast<std::uint8_t>(models.size() >> 8);
  std::uint8_t* at = out + 4;
  for (std::size_t j = 0; j < models.size(); ++j) {
    index[models[j].exponent] = static_cast<std::uint8_t>(j + 1);
    build_encode_table(models[j].freqs, kTableLog, encode_tables_[j + 1]);
    *at++ = models[j].exponent;
    for (unsigned b = 0; b < kBuckets; ++b) {
      *at++ = static_cast<std::uint8_t>(models[j].freqs[b]);
      *at++ = static_cast<std::uint8_t>(models[j].freqs[b] >> 8);
    }
  }
  const ByExponent model{exponents, mask_, index.data(), encode_tables_.data(), nullptr};
  const auto streams = encode_by_exponent(plane, n, model, streams_);
  return static_cast<std::size_t>(write_streams(streams, at) - out);
}

void ExponentContextCoder::decode_context(std::span<const std::byte> coded, const std::uint8_t* exponents,
                                          std::span<std::byte> plane) {
  const auto* in = reinterpret_cast<const std::uint8_t*>(coded.data());
  const std::uint8_t* const end = in + coded.size();
  if (coded.size() < 4 || in[0] != kContextFormat || in[1] != kTableLog)
    fail("corrupt frame: exponent-context plane header ({} bytes)", coded.size());
  const std::size_t k = in[2] | in[3] << 8;
  if (k > kMaxContexts) fail("corrupt frame: {} exponent contexts (at most {})", k, kMaxContexts);
  if (static_cast<std::size_t>(end - in) < 4 + k * (1 + 2 * kBuckets))
    fail("corrupt frame: exponent-context tables are truncated");
  in += 4;
  std::array<std::uint8_t, 256> index{};
  decode_tables_.resize((1 + k) << kTableLog);
  build_decode_table(uniform_freqs(), kTableLog, decode_tables_.data());
  for (std::size_t j = 0; j < k; ++j) {
    const std::uint8_t e = *in++;
    if (index[e] || (e & mask_) != e) fail("corrupt frame: exponent context {} repeated or out of range", e);
    index[e] = static_cast<std::uint8_t>(j + 1);
    Freqs freqs{};
    for (unsigned b = 0; b < kBuckets; ++b, in += 2) freqs[b] = static_cast<std::uint16_t>(in[0] | in[1] << 8);
    check_freqs(freqs, kTableLog);
    build_decode_table(freqs, kTableLog, decode_tables_.data() + ((j + 1) << kTableLog));
  }
  const ByExponent model{exponents, mask_, index.data(), nullptr, decode_tables_.data()};
  decode_by_exponent(read_streams(in, end), reinterpret_cast<std::uint8_t*>(plane.data()), plane.size(), model);
}

}  // namespace

std::unique_ptr<PlaneCoder> make_exponent_context_coder(FloatFormat format) {
  return std::make_unique<ExponentContextCoder>(format);
}

}  // namespace wirezip::codecs
