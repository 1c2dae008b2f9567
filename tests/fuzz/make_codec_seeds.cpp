// Writes fuzz_codecs' seeds: for every fuzzed codec, valid frames of 0, 33 and 2048 bytes of
// synthetic weights (so the fuzzer starts inside the planes instead of rediscovering headers) and
// one 512-byte round-trip input. They are kept in tests/fuzz/corpus/fuzz_codecs; run this again
// only when kFuzzedCodecs grows:
//   cmake --build build-fuzz --target make_codec_seeds && build-fuzz/bin/make_codec_seeds tests/fuzz/corpus/fuzz_codecs
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzzed_codecs.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/datasets/dataset.hpp"

namespace {

void write_seed(const std::string& path, char selector, std::span<const std::byte> body) {
  std::ofstream out(path, std::ios::binary);
  out.write(&selector, 1);
  out.write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_codec_seeds DIR\n");
    return 2;
  }
  const auto data = wirezip::datasets::load_dataset("synthetic:weights:size=2KiB:seed=5").bytes;
  const auto larger = wirezip::datasets::load_dataset("synthetic:weights:size=64KiB:seed=5").bytes;
  for (std::size_t i = 0; i < wirezip::fuzz::kFuzzedCodecs.size(); ++i) {
    std::string name(wirezip::fuzz::kFuzzedCodecs[i]);
    std::replace(name.begin(), name.end(), ':', '_');  // file names without ':'
    auto codec = wirezip::codecs::make_codec(wirezip::fuzz::kFuzzedCodecs[i]);
    const char selector = static_cast<char>(i);  // fuzz_codecs' byte 0: codec i, decompress
    for (std::size_t size : {std::size_t{0}, std::size_t{33}, data.size()}) {
      std::vector<std::byte> frame(codec->max_compressed_size(size));
      frame.resize(codec->compress(std::span(data).first(size), frame));
      write_seed(fmt::format("{}/frame-{}-{}", argv[1], name, size), selector, frame);
    }
    // The Huffman coder codes pairs only in blocks of 64 KiB or more, where they pay: one frame of
    // bytes that repeat their neighbour half the time, so its pair tables and streams get fuzzed.
    if (name == "huff") {
      std::vector<std::byte> correlated(70000);
      std::mt19937 rng(12);
      std::byte last{0x78};
      for (std::byte& b : correlated) b = last = rng() % 2 ? last : static_cast<std::byte>(0x74 + rng() % 8);
      std::vector<std::byte> frame(codec->max_compressed_size(correlated.size()));
      frame.resize(codec->compress(correlated, frame));
      write_seed(fmt::format("{}/frame-{}-pairs", argv[1], name), selector, frame);
    }
    // The exponent-context coder models an exponent only when its table pays for itself, which
    // takes more elements than 2 KiB holds: one larger frame, so its tables and streams get fuzzed.
    if (name.find("context=exponent") != std::string::npos) {
      std::vector<std::byte> frame(codec->max_compressed_size(larger.size()));
      frame.resize(codec->compress(larger, frame));
      write_seed(fmt::format("{}/frame-{}-{}", argv[1], name, larger.size()), selector, frame);
    }
    write_seed(fmt::format("{}/roundtrip-{}", argv[1], name), static_cast<char>(selector | 0x80),
               std::span(data).first(512));
  }
  return 0;
}
