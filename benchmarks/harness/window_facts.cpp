#include "window_facts.hpp"

#include <algorithm>
#include <optional>

#include "codec_chunks.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/datasets/dataset.hpp"

namespace wirezip::harness {

WindowFacts window_facts(const datasets::DatasetReader& reader, std::uint64_t window,
                         const std::vector<std::uint64_t>& chunks) {
  WindowFacts facts;
  std::optional<datasets::Sha256Stream> digest(std::in_place);
  // One pass per chunk size (the digest rides on the first); no chunk size: one pass, the digest alone.
  std::vector<std::optional<std::uint64_t>> passes(chunks.begin(), chunks.end());
  if (passes.empty()) passes.emplace_back();
  for (const std::optional<std::uint64_t>& chunk : passes) {
    const std::uint64_t step = chunk ? std::max(*chunk, window / *chunk * *chunk) : std::max<std::uint64_t>(window, 1);
    PageSpan buffer(static_cast<std::size_t>(std::min(step, reader.size())));
    double entropy = 0, exponent = 0, value = 0;
    for (std::uint64_t at = 0; at < reader.size(); at += step) {
      const std::span<std::byte> piece = buffer.bytes().first(static_cast<std::size_t>(std::min(step, reader.size() - at)));
      reader.read(at, piece);
      if (digest) digest->update(piece);
      if (!chunk) continue;
      codecs::add_entropy_bound_bits(piece, 2, *chunk, entropy);
      codecs::add_exponent_bound_bits(piece, codecs::FloatFormat::bf16, *chunk, exponent);
      codecs::add_value_bound_bits(piece, *chunk, value);
    }
    if (digest) {
      facts.sha256 = digest->hex();
      digest.reset();
    }
    if (!chunk) continue;
    facts.bounds[*chunk] = {.entropy = codecs::bound_ratio_of_bits(reader.size(), entropy),
                            .exponent = codecs::bound_ratio_of_bits(reader.size(), exponent),
                            .value = codecs::bound_ratio_of_bits(reader.size(), value)};
  }
  return facts;
}

}  // namespace wirezip::harness
