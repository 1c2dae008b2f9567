// Writes one valid frame per fuzzed codec into a directory: the fuzzer's starting corpus, so it
// spends its time inside the planes rather than rediscovering the header.
#include <fmt/format.h>

#include <array>
#include <fstream>
#include <vector>

#include "wirezip/codecs/registry.hpp"
#include "wirezip/datasets/dataset.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_frame_seeds DIR\n");
    return 2;
  }
  constexpr std::array<const char*, 8> specs = {"memcpy", "bytegroup", "lz4", "zstd:level=1", "bytegroup+lz4",
                                                "bytegroup+rans", "bytegroup+huff", "bytegroup:width=4+huff"};
  const auto data = wirezip::datasets::load_dataset("synthetic:weights:size=4KiB:seed=5").bytes;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto codec = wirezip::codecs::make_codec(specs[i]);
    for (std::size_t size : {std::size_t{0}, std::size_t{33}, data.size()}) {
      std::vector<std::byte> frame(codec->max_compressed_size(size));
      frame.resize(codec->compress(std::span(data).first(size), frame));
      std::ofstream out(fmt::format("{}/seed-{}-{}", argv[1], i, size), std::ios::binary);
      const char selector = static_cast<char>(i);  // the fuzz target's codec selector byte
      out.write(&selector, 1);
      out.write(reinterpret_cast<const char*>(frame.data()), static_cast<std::streamsize>(frame.size()));
    }
  }
  return 0;
}
