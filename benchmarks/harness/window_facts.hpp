#pragma once
// What bench_codec states about a file data set it reads by windows, found in one more pass over
// the file before the cases: its sha256 and each chunk size's order-0 bounds, equal to the figures
// of the same bytes held in memory (entropy.hpp sums the bits in the same order).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "wirezip/datasets/dataset_reader.hpp"

namespace wirezip::harness {

struct ChunkBounds {
  double entropy = 0, exponent = 0, value = 0;  // bf16: every bound applies
};

struct WindowFacts {
  std::string sha256;
  std::map<std::uint64_t, ChunkBounds> bounds;  // by chunk size
};

// Reads the data set once per chunk size, `window` bytes at a time (rounded down to whole chunks,
// at least one chunk); with no chunk size, once for the digest alone.
WindowFacts window_facts(const datasets::DatasetReader& reader, std::uint64_t window,
                         const std::vector<std::uint64_t>& chunks);

}  // namespace wirezip::harness
