#include "wirezip/collective/model.hpp"

#include <algorithm>

namespace wirezip::collective {
namespace {

// Seconds per original byte of one stage (0 when the stage does not exist).
double per_byte(double rate) { return 1 / rate; }

double all_gather_seconds(int ranks, double shard, const StageRates& r) {
  double seconds = 0;
  for (int step = 0; step < ranks - 1; ++step) {
    const double cpu = per_byte(r.decompress) + (step == 0 ? per_byte(r.compress) : 0);
    seconds += shard * std::max(cpu, 1 / (r.ratio * r.link));
  }
  return seconds;
}

double reduce_scatter_seconds(int ranks, double shard, const StageRates& r) {
  double seconds = 0;
  for (int step = 0; step < ranks - 1; ++step) {
    double cpu = per_byte(r.decompress) + per_byte(r.reduce);
    if (step == 0) cpu += per_byte(r.compress);          // its own block, once
    if (step < ranks - 2) cpu += per_byte(r.compress);   // the partial it forwards
    seconds += shard * std::max(cpu, 1 / (r.ratio * r.link));
  }
  return seconds;
}

}  // namespace

double model_seconds(Op op, int ranks, double shard_bytes, const StageRates& rates) {
  switch (op) {
    case Op::all_gather: return all_gather_seconds(ranks, shard_bytes, rates);
    case Op::reduce_scatter: return reduce_scatter_seconds(ranks, shard_bytes, rates);
    case Op::all_reduce:
      return reduce_scatter_seconds(ranks, shard_bytes, rates) + all_gather_seconds(ranks, shard_bytes, rates);
  }
  return 0;
}

}  // namespace wirezip::collective
