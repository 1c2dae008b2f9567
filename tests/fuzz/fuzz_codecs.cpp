// libFuzzer target: every codec the registry builds, on arbitrary bytes. Byte 0 picks the codec
// (its low 7 bits index kFuzzedCodecs, modulo its size) and what to do with the rest (bit 7):
//   0  the rest is a compressed frame: decompress it into an output exactly as large as its header
//      claims (at most 1 MiB), so a byte written past the claim is an AddressSanitizer report;
//      the codec must restore it or throw wirezip::Error
//   1  the rest is data: compress it, decompress it, and it must come back byte for byte
// Anything else (a crash, a sanitizer report, a leak, a wrong round trip) is a finding.
// This target replaces fuzz_frame, which did mode 0 for 8 framed codecs and none of blosc or igzip.
#include <blosc.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "fuzzed_codecs.hpp"
#include "wirezip/codecs/frame.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/error.hpp"

namespace {

using wirezip::fuzz::kFuzzedCodecs;
constexpr std::size_t kMaxOutput = 1 << 20;

// The original size a compressed input claims, read the way its codec reads it (64 when it has no
// valid header: the decoder must then refuse it whatever the output).
std::size_t claimed_size(std::string_view spec, std::span<const std::byte> frame) {
  std::size_t claimed = 64;
  if (spec.starts_with("blosc")) {
    std::size_t nbytes = 0;
    if (frame.size() >= BLOSC_MIN_HEADER_LENGTH && blosc_cbuffer_validate(frame.data(), frame.size(), &nbytes) == 0)
      claimed = nbytes;
  } else {
    try {
      claimed = wirezip::codecs::read_frame_header(frame).original_size;
    } catch (const wirezip::Error&) {
    }
  }
  return std::min(claimed, kMaxOutput);
}

void decompress_frame(wirezip::codecs::Codec& codec, std::span<const std::byte> frame) {
  std::vector<std::byte> out(claimed_size(codec.spec(), frame));
  try {
    if (codec.decompress(frame, out) > out.size()) __builtin_trap();
  } catch (const wirezip::Error&) {
  }
}

void round_trip(wirezip::codecs::Codec& codec, std::span<const std::byte> data) {
  try {
    std::vector<std::byte> compressed(codec.max_compressed_size(data.size()));
    compressed.resize(codec.compress(data, compressed));
    std::vector<std::byte> restored(data.size());
    if (codec.decompress(compressed, restored) != data.size() ||
        !std::equal(data.begin(), data.end(), restored.begin())) {
      std::fprintf(stderr, "fuzz_codecs: %s: round trip of %zu bytes differs\n", codec.spec().c_str(), data.size());
      std::abort();
    }
  } catch (const wirezip::Error& error) {
    std::fprintf(stderr, "fuzz_codecs: %s: round trip of %zu bytes failed: %s\n", codec.spec().c_str(), data.size(),
                 error.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // Built once and reused, as benchmarks and the pipeline reuse a codec's library contexts.
  static std::array<std::unique_ptr<wirezip::codecs::Codec>, kFuzzedCodecs.size()> codecs;
  const std::size_t index = (data[0] & 0x7f) % kFuzzedCodecs.size();
  if (!codecs[index]) codecs[index] = wirezip::codecs::make_codec(kFuzzedCodecs[index]);
  std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] & 0x80)
    round_trip(*codecs[index], rest);
  else
    decompress_frame(*codecs[index], rest);
  return 0;
}
