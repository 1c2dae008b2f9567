// libFuzzer target: any bytes given to a DEFLATE decoder backend as one plane's stream must either
// decode to exactly the plane's size or throw wirezip::Error, with nothing written outside the plane.
// The first byte picks the backend, the next two the plane size (0..65535).
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "wirezip/codecs/decoders.hpp"
#include "wirezip/util/error.hpp"

namespace {
constexpr std::array<const char*, 3> kBackends = {"isal", "libdeflate", "zlib"};
constexpr std::size_t kGuard = 64;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace wirezip::codecs;
  if (size < 3) return 0;
  static std::array<std::unique_ptr<StreamDecoder>, kBackends.size()> decoders;
  auto& decoder = decoders[data[0] % kBackends.size()];
  if (!decoder) decoder = make_decoder(StreamFormat::deflate, kBackends[data[0] % kBackends.size()]);
  const std::size_t plane = data[1] | (data[2] << 8);
  std::vector<std::byte> out(plane + kGuard, std::byte{0xa5});
  try {
    decoder->decode({reinterpret_cast<const std::byte*>(data + 3), size - 3}, std::span(out).first(plane));
  } catch (const wirezip::Error&) {
  }
  for (std::size_t i = plane; i < out.size(); ++i)
    if (out[i] != std::byte{0xa5}) __builtin_trap();
  return 0;
}
