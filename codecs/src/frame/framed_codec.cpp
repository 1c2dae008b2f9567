// Every wirezip codec: optional byte grouping, each plane coded on its own (or stored raw when it
// would not shrink), wrapped in the self-describing frame of frame.hpp.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "codec_factories.hpp"
#include "coders/plane_coder.hpp"
#include "frame/fused_passes.hpp"
#include "planes/plane_layout.hpp"
#include "wirezip/codecs/bytegroup.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::codecs {
namespace {

class FramedCodec final : public Codec {
 public:
  FramedCodec(std::string spec, std::size_t width, std::unique_ptr<PlaneCoder> coder, PlaneLayout layout)
      : spec_(std::move(spec)), width_(width), layout_(layout), coder_(std::move(coder)) {}

  const std::string& spec() const override { return spec_; }
  std::size_t element_width() const override { return width_; }

  std::size_t max_compressed_size(std::size_t n) const override {
    const std::size_t plane = n / width_;
    const std::size_t stored = coder_ ? std::max(plane, coder_->bound(plane)) : plane;
    return FrameHeader::header_size(width_) + width_ * stored + n % width_;
  }

  std::size_t compress(std::span<const std::byte> src, std::span<std::byte> dst) override;
  std::size_t decompress(std::span<const std::byte> src, std::span<std::byte> dst) override;

 private:
  CoderId coder_id() const { return coder_ ? coder_->id() : CoderId::raw; }
  // Codes a whole chunk at `out` (capacity checked by the caller); stores it raw when coding does not
  // pay. Sets `checksum`: the coder's hash of what it coded, or one pass of its own.
  PlaneEntry put_whole(std::span<const std::byte> src, std::byte* out, std::uint64_t& checksum);
  // Splits src into planes and returns src's checksum: one fused pass (fused_passes.hpp).
  std::uint64_t split_hashed(std::span<const std::byte> src, std::span<std::byte* const> planes) {
    hash_.reset();
    split_and_hash(layout_, src, width_, planes, hash_);
    return hash_.digest();
  }

  // Where plane k (width > 1) is decoded: its part of scratch_. Fuzz builds give each plane an
  // allocation of its own, exactly its size, so that AddressSanitizer catches a coder writing past
  // its plane instead of into the next one.
  std::span<std::byte> plane_target(std::size_t k, std::size_t plane) {
#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
    fuzz_planes_[k] = std::vector<std::byte>(plane);
    return fuzz_planes_[k];
#else
    return std::span(scratch_).subspan(k * plane, plane);
#endif
  }

  std::string spec_;
  std::size_t width_;
  PlaneLayout layout_;  // byte planes or the exponent split
  std::unique_ptr<PlaneCoder> coder_;  // null: planes are stored raw
  std::vector<std::byte> scratch_;     // split planes (compress) or decoded planes (decompress)
  std::vector<std::byte> probe_;       // samples of each plane, to choose raw planes before the split
  ChecksumStream hash_;
#if defined(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  std::array<std::vector<std::byte>, kMaxElementWidth> fuzz_planes_;
#endif
};

// True when every byte equals the first. Comparing the plane with itself shifted by one stops at the
// first difference, so a plane with any structure costs a few bytes of this, a constant one a pass.
bool is_constant(std::span<const std::byte> plane) {
  return !plane.empty() && std::memcmp(plane.data(), plane.data() + 1, plane.size() - 1) == 0;
}

PlaneEntry FramedCodec::put_whole(std::span<const std::byte> src, std::byte* out, std::uint64_t& checksum) {
  // Zero tensors and constant fills (ones, a bias) cost one byte per plane, whatever the coder.
  if (is_constant(src)) {
    checksum = frame_checksum(src);
    *out = src.front();
    return {PlaneMode::constant, 1};
  }
  if (!looks_incompressible(src)) {
    hash_.reset();
    const std::size_t size = coder_->encode_hashed(src, {out, coder_->bound(src.size())}, hash_);
    checksum = hash_.digest();
    if (size < src.size()) return {PlaneMode::coded, static_cast<std::uint32_t>(size)};
  } else {
    checksum = frame_checksum(src);
  }
  std::copy_n(src.data(), src.size(), out);
  return {PlaneMode::raw, static_cast<std::uint32_t>(src.size())};
}

std::size_t FramedCodec::compress(std::span<const std::byte> src, std::span<std::byte> dst) {
  const std::size_t plane = checked_plane_size(spec_, src.size(), dst.size(), max_compressed_size(src.size()), width_);

  // Width 1: memcpy (the ceiling) hashes, then copies; a whole-chunk coder hashes as it codes (put_whole).
  FrameHeader header{.coder = coder_id(),
                     .element_width = static_cast<std::uint8_t>(width_),
                     .layout = layout_,
                     .original_size = src.size(),
                     .checksum = width_ == 1 && !coder_ ? frame_checksum(src) : 0};
  std::byte* out = dst.data() + header.encoded_size();
  if (!coder_) {
    // Raw planes go straight into the frame: one pass, the cost of byte grouping alone.
    std::array<std::byte*, kMaxElementWidth> planes{};
    for (std::size_t k = 0; k < width_; ++k) {
      planes[k] = out + k * plane;
      header.planes[k] = {PlaneMode::raw, static_cast<std::uint32_t>(plane)};
    }
    if (width_ == 1) split_layout(layout_, src, width_, {planes.data(), width_});
    if (width_ > 1) header.checksum = split_hashed(src, {planes.data(), width_});
    out += width_ * plane;
  } else if (width_ == 1) {
    header.planes[0] = put_whole(src.first(plane), out, header.checksum);
    out += header.planes[0].stored_size;
  } else {
    // A plane the probe finds near-random is stored raw, and raw planes come first in the frame
    // (frame.hpp), so the split writes it straight into its place; the others go to scratch and
    // are coded after the raw ones.
    // Planes coded given the exponents are tried whatever the probe says: alone they look random.
    const std::uint32_t conditioned = coder_->conditioned_planes();
    const std::uint32_t raw = incompressible_planes(layout_, src, width_, probe_) & ~conditioned;
    scratch_.resize(width_ * plane);
    std::array<std::byte*, kMaxElementWidth> planes{};
    for (std::size_t k = 0; k < width_; ++k) {
      planes[k] = raw >> k & 1 ? out : scratch_.data() + k * plane;
      if (raw >> k & 1) {
        header.planes[k] = {PlaneMode::raw, static_cast<std::uint32_t>(plane)};
        out += plane;
      }
    }
    header.checksum = split_hashed(src, {planes.data(), width_});
    for (std::size_t k = 0; k < width_; ++k) {
      if (raw >> k & 1) continue;
      if (is_constant({planes[k], plane})) {  // one byte whatever the coder (frame.hpp)
        *out = planes[k][0];
        header.planes[k] = {PlaneMode::constant, 1};
        out += 1;
        continue;
      }
      const std::span<std::byte> room{out, coder_->bound(plane)};
      const std::size_t size = conditioned >> k & 1 ? coder_->encode_given({planes[k], plane}, {planes[0], plane}, room)
                                                    : coder_->encode({planes[k], plane}, room);
      if (size < plane) {
        header.planes[k] = {PlaneMode::coded, static_cast<std::uint32_t>(size)};
        out += size;
        continue;
      }
      // Coding did not pay after all: the plane joins the raw ones in plane order, after those of
      // lower index (every plane before k is settled) and before the rest of what is written.
      std::byte* at = dst.data() + header.encoded_size();
      for (std::size_t j = 0; j < k; ++j)
        if (header.planes[j].mode == PlaneMode::raw) at += plane;
      std::memmove(at + plane, at, static_cast<std::size_t>(out - at));
      std::copy_n(planes[k], plane, at);
      out += plane;
      header.planes[k] = {PlaneMode::raw, static_cast<std::uint32_t>(plane)};
    }
  }
  return finish_frame(header, src, out, dst);
}

std::size_t FramedCodec::decompress(std::span<const std::byte> src, std::span<std::byte> dst) {
  const FrameHeader header = read_frame_header(src);
  if (header.coder != coder_id())
    fail("{}: frame was coded with {}, this codec uses {}", spec_, coder_name(header.coder), coder_name(coder_id()));
  if (header.element_width != width_)
    fail("{}: frame has element width {}, this codec uses {}", spec_, header.element_width, width_);
  if (header.layout != layout_)
    fail("{}: frame has plane layout {}, this codec uses {}", spec_, layout_name(header.layout), layout_name(layout_));
  if (header.original_size > dst.size())
    fail("{}: frame holds {} bytes, output has room for {}", spec_, header.original_size, dst.size());
  const std::size_t plane = header.plane_size();
  std::span<std::byte> whole = dst.first(width_ * plane);

  const auto offsets = plane_offsets(header);
  std::array<const std::byte*, kMaxElementWidth> planes{};
  if (width_ > 1) scratch_.resize(width_ * plane);
  for (std::size_t k = 0; k < width_; ++k) {
    const PlaneEntry& entry = header.planes[k];
    const std::byte* in = src.data() + offsets[k];
    // With one plane, decode straight into the destination; otherwise into scratch, then merge.
    std::span<std::byte> target = width_ == 1 ? whole : plane_target(k, plane);
    if (entry.mode == PlaneMode::coded && width_ == 1) {
      hash_.reset();
      coder_->decode_hashed({in, entry.stored_size}, target, hash_);  // the coder hashes as it restores
      verify_checksum(header, hash_.digest());
      return header.original_size;
    } else if (entry.mode == PlaneMode::coded) {
      if (coder_->conditioned_planes() >> k & 1)
        coder_->decode_given({in, entry.stored_size}, {planes[0], plane}, target);  // plane 0 is restored
      else
        coder_->decode({in, entry.stored_size}, target);
      planes[k] = target.data();
    } else if (entry.mode == PlaneMode::constant) {
      std::fill(target.begin(), target.end(), *in);
      planes[k] = target.data();
    } else if (width_ == 1) {
      std::copy_n(in, target.size(), target.data());
    } else {
      planes[k] = in;  // raw planes merge straight from the frame
    }
  }
  if (width_ > 1) return restore_and_verify(header, {planes.data(), width_}, src, dst, hash_);  // each block hashed while hot
  verify_checksum(header, frame_checksum(whole));
  return header.original_size;
}

}  // namespace

std::unique_ptr<Codec> make_framed_codec(std::string spec, std::size_t width, std::unique_ptr<PlaneCoder> coder,
                                         PlaneLayout layout) {
  return std::make_unique<FramedCodec>(std::move(spec), width, std::move(coder), layout);
}

}  // namespace wirezip::codecs
