// libFuzzer target: any bytes handed to a framed codec's decoder must either restore something
// (whose checksum then matched) or throw wirezip::Error; never crash, leak or write out of bounds
// (AddressSanitizer and UndefinedBehaviorSanitizer watch). The first byte picks the codec.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace {

constexpr std::array<const char*, 8> kSpecs = {"memcpy", "bytegroup", "lz4", "zstd:level=1", "bytegroup+lz4",
                                               "bytegroup+rans", "bytegroup+huff", "bytegroup:width=4+huff"};
constexpr std::size_t kMaxOutput = 1 << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static std::array<std::unique_ptr<wirezip::codecs::Codec>, kSpecs.size()> codecs;
  auto& codec = codecs[data[0] % kSpecs.size()];
  if (!codec) codec = wirezip::codecs::make_codec(kSpecs[data[0] % kSpecs.size()]);
  std::span<const std::byte> frame(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  // Size the output to what the header claims: a write past the original length is an ASan report.
  std::size_t claimed = 64;
  try {
    claimed = std::min<std::size_t>(wirezip::codecs::read_frame_header(frame).original_size, kMaxOutput);
  } catch (const wirezip::Error&) {
  }
  std::vector<std::byte> out(claimed);
  try {
    std::size_t n = codec->decompress(frame, out);
    if (n > out.size()) __builtin_trap();
  } catch (const wirezip::Error&) {
  }
  return 0;
}
