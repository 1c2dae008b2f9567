// libFuzzer target: any bytes given to the wirezip file reader (and every frame it yields, to the
// codec its header names) must either decode or throw wirezip::Error; never crash, leak, read or
// write out of bounds, or allocate what the file merely claims (chunks are capped at 1 MiB here, and
// the original bytes at 4 MiB, so that the output cap's refusal is fuzzed too).
#include <cstdint>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "wirezip/codecs/container.hpp"
#include "wirezip/util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One codec per spec, reused; a few dozen at most, as the fuzzer invents new spec texts without end.
  static std::map<std::string, std::unique_ptr<wirezip::codecs::Codec>> codecs;
  if (codecs.size() > 64) codecs.clear();
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    wirezip::codecs::ContainerReader reader(in, {.max_chunk = 1 << 20, .max_original = 4 << 20});
    auto& codec = codecs[reader.header().codec_spec.text()];
    if (!codec) codec = reader.header().codec_spec.make();
    std::vector<std::byte> out;
    while (auto frame = reader.next()) {
      out.resize(frame->header.original_size);
      if (codec->decompress(frame->bytes, out) != out.size()) __builtin_trap();
    }
  } catch (const wirezip::Error&) {
  }
  return 0;
}
