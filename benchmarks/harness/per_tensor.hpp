#pragma once
// bench_codec --per-tensor: where a checkpoint's ratio comes from. For each tensor of safetensors
// data sets, each chunk size and each codec: the tensor cut into chunks as the pipeline sends it,
// each compressed on its own and restored (verified), and the order-0 bounds of the same chunks.
// No timing: whole-checkpoint throughput is what the timed cases measure.
//
// The JSON (docs/METRICS.md, "Per-tensor records"):
//   {"context": {host facts, argv, dataset:SPEC, dataset_sha256:SPEC},
//    "tensors": [{"dataset", "name", "dtype", "shape", "elements", "bf16_bytes", "chunk",
//                 "entropy_bound_ratio", "entropy_bound_ratio_bytes",
//                 "codecs": {SPEC: {"compressed_bytes", "ratio"}}}, ...]}
// A bound is null where it is infinite (a constant tensor); a ratio is null for an empty tensor.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wirezip::harness {

struct PerTensorConfig {
  std::vector<std::string> codecs;
  std::vector<std::uint64_t> chunks;
  std::vector<std::string> datasets;  // each safetensors:PATH[:tensors=REGEX]
};

// Throws wirezip::Error naming a data set that is not a safetensors spec; call before any work.
void check_per_tensor_datasets(const std::vector<std::string>& datasets);

// The records of every tensor; throws wirezip::Error on a bad file or a round trip that does not
// restore its tensor.
nlohmann::json per_tensor_records(const PerTensorConfig& config);

}  // namespace wirezip::harness
