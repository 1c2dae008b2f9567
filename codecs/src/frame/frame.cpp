#include "wirezip/codecs/frame.hpp"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t by value, for ChecksumStream
#include <xxhash.h>
#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#include <immintrin.h>
#include <xxh_x86dispatch.h>  // XXH3 on AVX2 / AVX-512 when the CPU has them, chosen at run time
#define WIREZIP_XXH_DISPATCH 1
#endif

#include <array>
#include <cstring>

#include "codec_table.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/little_endian.hpp"

namespace wirezip::codecs {
namespace {

constexpr std::array<std::byte, 4> kMagic{std::byte{'W'}, std::byte{'Z'}, std::byte{'F'}, std::byte{'1'}};

#if WIREZIP_XXH_DISPATCH
// libxxhash's dispatched AVX-512 path returns with the upper vector state dirty (no vzeroupper),
// which slows every later legacy-SSE instruction in the process: measured, blosc:bitshuffle+lz4
// compressed at 1.9 GB/s after a wirezip frame and 3.0 GB/s before one.
__attribute__((target("avx"))) void zero_upper_avx() { _mm256_zeroupper(); }
void clear_upper_vector_state() {
  static const bool has_avx = __builtin_cpu_supports("avx");
  if (has_avx) zero_upper_avx();
}
#else
void clear_upper_vector_state() {}
#endif

// The exponent layouts fix the element width: 2 for bf16 and fp16, 4 for fp32.
PlaneLayout read_layout(std::uint8_t layout, std::uint8_t width) {
  if (layout > static_cast<std::uint8_t>(PlaneLayout::exponent_fp32)) fail("corrupt frame: unknown plane layout {}", layout);
  const auto parsed = static_cast<PlaneLayout>(layout);
  const std::uint8_t needs = parsed == PlaneLayout::exponent_fp32 ? 4 : 2;
  if (parsed != PlaneLayout::bytes && width != needs)
    fail("corrupt frame: plane layout {} needs element width {}, frame has {}", layout, needs, width);
  return parsed;
}

}  // namespace

std::string_view plane_mode_name(PlaneMode mode) {
  constexpr std::array<std::string_view, 3> names{"raw", "coded", "constant"};
  return names.at(static_cast<std::size_t>(mode));
}

void write_frame_header(const FrameHeader& header, std::span<std::byte> dst) {
  std::memcpy(dst.data(), kMagic.data(), kMagic.size());
  store_le<std::uint8_t>(dst, 4, kFrameVersion);
  store_le<std::uint8_t>(dst, 5, static_cast<std::uint8_t>(header.coder));
  store_le<std::uint8_t>(dst, 6, header.element_width);
  store_le<std::uint8_t>(dst, 7, static_cast<std::uint8_t>(header.layout));
  store_le<std::uint64_t>(dst, 8, header.original_size);
  store_le<std::uint64_t>(dst, 16, header.checksum);
  for (std::size_t k = 0; k < header.element_width; ++k) {
    store_le<std::uint8_t>(dst, 24 + 5 * k, static_cast<std::uint8_t>(header.planes[k].mode));
    store_le<std::uint32_t>(dst, 25 + 5 * k, header.planes[k].stored_size);
  }
}

FrameHeader read_frame_header(std::span<const std::byte> frame) {
  if (frame.size() < FrameHeader::header_size(1))
    fail("corrupt frame: {} bytes is shorter than the smallest header ({})", frame.size(),
         FrameHeader::header_size(1));
  if (std::memcmp(frame.data(), kMagic.data(), kMagic.size()) != 0) fail("corrupt frame: bad magic");
  const auto version = load_le<std::uint8_t>(frame, 4);
  if (version >= 1 && version < kFrameVersion) {
    constexpr std::array<const char*, 3> kWhatChanged = {"planes stored in plane order", "huff blocks in four streams",
                                                         "huff12 blocks in four streams"};
    static_assert(kWhatChanged.size() == kFrameVersion - 1, "say what each older version lacks");
    fail(
        "frame version {} is from an older wirezip ({}); this build reads version {} only: compress the "
        "data again with this build",
        version, kWhatChanged[version - 1], kFrameVersion);
  }
  if (version != kFrameVersion) fail("corrupt frame: version {} (this build reads {})", version, kFrameVersion);
  FrameHeader header;
  auto coder = load_le<std::uint8_t>(frame, 5);
  if (!is_coder_id(coder)) fail("corrupt frame: unknown coder id {}", coder);
  header.coder = static_cast<CoderId>(coder);
  header.element_width = load_le<std::uint8_t>(frame, 6);
  if (header.element_width == 0 || header.element_width > kMaxElementWidth)
    fail("corrupt frame: element width {} (1..{})", header.element_width, kMaxElementWidth);
  header.layout = read_layout(load_le<std::uint8_t>(frame, 7), header.element_width);
  if (frame.size() < header.encoded_size())
    fail("truncated frame: {} bytes, header alone needs {}", frame.size(), header.encoded_size());
  header.original_size = load_le<std::uint64_t>(frame, 8);
  header.checksum = load_le<std::uint64_t>(frame, 16);

  std::uint64_t total = header.encoded_size() + header.tail_size();
  for (std::size_t k = 0; k < header.element_width; ++k) {
    PlaneEntry& plane = header.planes[k];
    auto mode = load_le<std::uint8_t>(frame, 24 + 5 * k);
    if (mode > static_cast<std::uint8_t>(PlaneMode::constant)) fail("corrupt frame: plane {} has mode {}", k, mode);
    plane.mode = static_cast<PlaneMode>(mode);
    plane.stored_size = load_le<std::uint32_t>(frame, 25 + 5 * k);
    if (plane.mode == PlaneMode::raw && plane.stored_size != header.plane_size())
      fail("corrupt frame: raw plane {} stores {} bytes, expected {}", k, plane.stored_size, header.plane_size());
    if (plane.mode == PlaneMode::coded && header.coder == CoderId::raw)
      fail("corrupt frame: plane {} is coded but the frame's coder is raw", k);
    if (plane.mode != PlaneMode::raw && header.plane_size() == 0)
      fail("corrupt frame: plane {} is empty but marked {}", k, plane_mode_name(plane.mode));
    if (plane.mode == PlaneMode::constant && plane.stored_size != 1)
      fail("corrupt frame: constant plane {} stores {} bytes, expected 1", k, plane.stored_size);
    total += plane.stored_size;
  }
  if (total != frame.size())
    fail("{} frame: header describes {} bytes, frame has {}", total > frame.size() ? "truncated" : "corrupt",
         total, frame.size());
  return header;
}

std::array<std::size_t, kMaxElementWidth> plane_offsets(const FrameHeader& header) {
  std::array<std::size_t, kMaxElementWidth> offsets{};
  std::size_t at = header.encoded_size();
  for (bool raw : {true, false})  // raw planes, then the others (coded and constant)
    for (std::size_t k = 0; k < header.element_width; ++k)
      if ((header.planes[k].mode == PlaneMode::raw) == raw) {
        offsets[k] = at;
        at += header.planes[k].stored_size;
      }
  return offsets;
}

std::uint64_t frame_checksum(std::span<const std::byte> bytes) {
  const std::uint64_t hash = XXH3_64bits(bytes.data(), bytes.size());
  clear_upper_vector_state();
  return hash;
}

struct ChecksumStream::State {
  XXH3_state_t xxh;
};

ChecksumStream::ChecksumStream() : state_(std::make_unique<State>()) { reset(); }
ChecksumStream::~ChecksumStream() = default;

void ChecksumStream::reset() { XXH3_64bits_reset(&state_->xxh); }

void ChecksumStream::update(std::span<const std::byte> bytes) {
  XXH3_64bits_update(&state_->xxh, bytes.data(), bytes.size());
  clear_upper_vector_state();
}

std::uint64_t ChecksumStream::digest() { return XXH3_64bits_digest(&state_->xxh); }

}  // namespace wirezip::codecs
