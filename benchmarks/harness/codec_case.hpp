#pragma once
// One bench_codec case: a codec compressing (or decompressing) a data set cut into independent
// chunks, as the pipeline will send them. Google Benchmark threads split the chunks between them.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "wirezip/datasets/dataset.hpp"

namespace wirezip::harness {

enum class Direction { compress, decompress };

struct CodecCase {
  std::string codec_spec;
  const datasets::Dataset* dataset = nullptr;
  std::size_t chunk_bytes = 0;
  Direction direction = Direction::compress;
  double entropy_bound_ratio = 0;  // precomputed for (dataset, chunk)

  // Totals across the threads of one run; the last thread to finish reports them.
  struct Totals {
    std::atomic<std::uint64_t> compressed{0};
    std::atomic<int> finished{0};
  };
  std::shared_ptr<Totals> totals = std::make_shared<Totals>();
};

// The benchmark body. Setup and verification run outside the timed loop; any error or a round trip
// that does not restore the input ends the case through SkipWithError, with the reason in the JSON.
void run_codec_case(benchmark::State& state, const CodecCase& config);

}  // namespace wirezip::harness
