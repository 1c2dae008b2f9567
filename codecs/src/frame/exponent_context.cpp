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
// 32 x u16 LE bucket frequencies) | streams (ans_model.hpp). The other planes are stored as by
// FramedCodec with the ans coder; fp32's planes 2 and 3 are plain mantissa bytes.
#include <algorithm>
#include <array>
#include <cstring>

#include "codec_factories.hpp"
#include "coders/ans_model.hpp"
#include "frame/fused_passes.hpp"
#include "planes/plane_layout.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

using namespace ans;

constexpr std::uint8_t kContextFormat = 3;  // ans.cpp's formats are 0-2
constexpr unsigned kTableLog = 10, kBuckets = 32, kRaw = 3;
constexpr std::size_t kTableSize = std::size_t{1} << kTableLog;
constexpr std::size_t kMaxContexts = 64;  // tables beyond the most frequent exponents gain nothing
constexpr std::size_t kContextHeaderMax = 4 + 256 * (1 + 2 * kBuckets);

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

WZ_ANS_HOT std::array<EncodedStream, kStreams> encode_by_exponent(const std::uint8_t* plane, std::size_t n,
                                                            const ByExponent& model,
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

class ExponentContextCodec final : public Codec {
 public:
  ExponentContextCodec(std::string spec, FloatFormat format)
      : spec_(std::move(spec)),
        format_(format),
        width_(float_format_width(format)),
        mask_(format == FloatFormat::fp16 ? 0x1f : 0xff),
        ans_(make_ans_coder()) {}

  const std::string& spec() const override { return spec_; }
  std::size_t element_width() const override { return width_; }
  std::size_t max_compressed_size(std::size_t n) const override {
    const std::size_t plane = n / width_;
    const std::size_t context_bound = kContextHeaderMax + kStreamsHeaderSize + kStreams * stream_bound(plane / 4 + 3);
    return FrameHeader::header_size(width_) + width_ * std::max({plane, ans_->bound(plane), context_bound}) + n % width_;
  }
  std::size_t compress(std::span<const std::byte> src, std::span<std::byte> dst) override;
  std::size_t decompress(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
  PlaneEntry put_plane(std::span<const std::byte> plane, std::byte* out);
  // Plane 1 given plane 0; returns the size written at out.
  std::size_t encode_context(const std::uint8_t* exponents, const std::uint8_t* plane, std::size_t n, std::uint8_t* out);
  void decode_context(std::span<const std::byte> coded, const std::uint8_t* exponents, std::span<std::byte> plane);

  std::string spec_;
  FloatFormat format_;
  std::size_t width_;
  std::uint8_t mask_;
  std::unique_ptr<PlaneCoder> ans_;
  std::vector<std::byte> scratch_;  // split planes (compress) or decoded planes (decompress)
  std::vector<std::byte> staging_;  // planes in plane order, before they take frame order
  ChecksumStream hash_;
  std::array<std::vector<std::uint8_t>, kStreams> streams_;
  std::vector<std::array<std::uint32_t, kBuckets>> counts_ = std::vector<std::array<std::uint32_t, kBuckets>>(256);
  std::vector<EncodeTable> encode_tables_;
  std::vector<DecodeEntry> decode_tables_;
};

PlaneEntry ExponentContextCodec::put_plane(std::span<const std::byte> plane, std::byte* out) {
  if (!looks_incompressible(plane)) {
    const std::size_t size = ans_->encode(plane, {out, ans_->bound(plane.size())});
    if (size < plane.size()) return {PlaneMode::coded, static_cast<std::uint32_t>(size)};
  }
  std::copy_n(plane.data(), plane.size(), out);
  return {PlaneMode::raw, static_cast<std::uint32_t>(plane.size())};
}

std::size_t ExponentContextCodec::encode_context(const std::uint8_t* exponents, const std::uint8_t* plane,
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

void ExponentContextCodec::decode_context(std::span<const std::byte> coded, const std::uint8_t* exponents,
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

std::size_t ExponentContextCodec::compress(std::span<const std::byte> src, std::span<std::byte> dst) {
  const std::size_t plane = checked_plane_size(spec_, src.size(), dst.size(), max_compressed_size(src.size()), width_);
  FrameHeader header{.coder = CoderId::ans, .element_width = static_cast<std::uint8_t>(width_),
                     .layout = exponent_layout(format_), .original_size = src.size()};
  scratch_.resize(width_ * plane);
  std::array<std::byte*, 4> planes{};
  for (std::size_t k = 0; k < width_; ++k) planes[k] = scratch_.data() + k * plane;
  hash_.reset();
  split_and_hash(header.layout, src, width_, {planes.data(), width_}, hash_);
  header.checksum = hash_.digest();

  std::byte* out = dst.data() + header.encoded_size();
  for (std::size_t k = 0; k < width_; ++k) {
    if (k == 1 && plane >= 4) {  // conditioned on the exponents of plane 0
      const std::size_t size = encode_context(reinterpret_cast<const std::uint8_t*>(planes[0]),
                                              reinterpret_cast<const std::uint8_t*>(planes[1]), plane,
                                              reinterpret_cast<std::uint8_t*>(out));
      header.planes[1] = size < plane ? PlaneEntry{PlaneMode::coded, static_cast<std::uint32_t>(size)}
                                      : PlaneEntry{PlaneMode::raw, static_cast<std::uint32_t>(plane)};
      if (size >= plane) std::copy_n(planes[1], plane, out);
    } else {
      header.planes[k] = put_plane({planes[k], plane}, out);
    }
    out += header.planes[k].stored_size;
  }
  // Planes were written in plane order; the frame keeps raw planes first (frame.hpp).
  std::byte* const body = dst.data() + header.encoded_size();
  staging_.assign(body, out);
  const auto offsets = plane_offsets(header);
  std::size_t at = 0;
  for (std::size_t k = 0; k < width_; ++k) {
    std::copy_n(staging_.data() + at, header.planes[k].stored_size, dst.data() + offsets[k]);
    at += header.planes[k].stored_size;
  }
  return finish_frame(header, src, out, dst);
}

std::size_t ExponentContextCodec::decompress(std::span<const std::byte> src, std::span<std::byte> dst) {
  const FrameHeader header = read_frame_header(src);
  if (header.coder != CoderId::ans || header.element_width != width_ || header.layout != exponent_layout(format_))
    fail("{}: frame was written by another codec (coder {}, width {}, layout {})", spec_,
         static_cast<int>(header.coder), header.element_width, layout_name(header.layout));
  if (header.original_size > dst.size())
    fail("{}: frame holds {} bytes, output has room for {}", spec_, header.original_size, dst.size());
  const std::size_t plane = header.plane_size();
  scratch_.resize(width_ * plane);
  std::array<const std::byte*, 4> planes{};
  const auto offsets = plane_offsets(header);
  for (std::size_t k = 0; k < width_; ++k) {
    const PlaneEntry& entry = header.planes[k];
    const std::byte* in = src.data() + offsets[k];
    std::span<const std::byte> stored(in, entry.stored_size);
    std::span<std::byte> target = std::span(scratch_).subspan(k * plane, plane);
    planes[k] = entry.mode == PlaneMode::raw ? in : target.data();
    if (entry.mode == PlaneMode::coded && k == 1 && !stored.empty() &&
        static_cast<std::uint8_t>(stored[0]) == kContextFormat)
      decode_context(stored, reinterpret_cast<const std::uint8_t*>(planes[0]), target);
    else if (entry.mode == PlaneMode::coded)
      ans_->decode(stored, target);
    else if (entry.mode == PlaneMode::constant)  // one byte, every element's (read_frame_header checked it)
      std::fill(target.begin(), target.end(), stored[0]);
  }
  return restore_and_verify(header, {planes.data(), width_}, src, dst, hash_);
}

}  // namespace

std::unique_ptr<Codec> make_exponent_context_codec(std::string spec, FloatFormat format) {
  return std::make_unique<ExponentContextCodec>(std::move(spec), format);
}

}  // namespace wirezip::codecs
