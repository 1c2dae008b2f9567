#pragma once
// The model's prediction for a ring collective, from stages measured alone (docs/METRICS.md).
#include <limits>

#include "wirezip/collective/ring_math.hpp"

namespace wirezip::collective {

// Rates in original bytes per second; infinite = the stage does not exist.
struct StageRates {
  double compress = std::numeric_limits<double>::infinity();    // C
  double decompress = std::numeric_limits<double>::infinity();  // D
  double reduce = std::numeric_limits<double>::infinity();      // A: bf16 additions
  double link = 0;                                              // L: one ring step of raw bytes
  double ratio = 1;                                             // R
};

// Seconds for `op` over shards of `shard_bytes`. Each ring step moves one shard per rank and
// takes max(cpu, link): link = shard / (R x L); cpu = what the rank's one thread does to that
// step's shard: all-gather decompresses what it receives (and compresses its own shard once, at
// step 0); reduce-scatter decompresses, adds and recompresses (the last step keeps its sum, the
// first compresses its own block). With each stage on its own core this is min(C, R x L, D).
double model_seconds(Op op, int ranks, double shard_bytes, const StageRates& rates);

}  // namespace wirezip::collective
