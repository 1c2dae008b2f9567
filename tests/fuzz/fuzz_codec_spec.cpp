// libFuzzer target: any text given to parse_codec_spec, the one parser of codec specs (from flags,
// file headers and peers' case records), must either throw wirezip::Error or give a spec that
// keeps its text byte for byte, builds its codec, round-trips a small input, and survives a
// decoder override.
#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace wirezip::codecs;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CodecSpec spec;
  try {
    spec = parse_codec_spec(text);
  } catch (const wirezip::Error&) {
    return 0;
  }
  if (spec.text() != text || spec.empty()) __builtin_trap();
  std::vector<std::byte> input(1000);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::byte>((i * 7) % 13);
  auto codec = spec.make();
  std::vector<std::byte> frame(spec.max_compressed_size(input.size())), back(input.size());
  const std::size_t n = codec->compress(input, frame);
  if (codec->decompress(std::span(frame).first(n), back) != input.size() || back != input) __builtin_trap();
  try {
    if (spec.with_decoder("zlib").text().find("decoder=zlib") == std::string::npos) __builtin_trap();
  } catch (const wirezip::Error&) {
  }
  return 0;
}
