#pragma once
// bench_codec --per-tensor: where a checkpoint's ratio comes from. For each tensor of safetensors
// data sets (PATH may be a glob over shards), each chunk size and each codec: the tensor cut into
// chunks as the pipeline sends it, each compressed on its own and restored (verified), and the
// order-0 bounds of the same chunks. Tensors are read a window at a time (datasets::for_each_tensor),
// so a tensor larger than the window needs no more memory than the window.
// No timing: whole-checkpoint throughput is what the timed cases measure.
//
// The JSON (docs/METRICS.md, "Per-tensor records"):
//   {"tensors": [{"dataset", "name", "dtype", "shape", "elements", "bf16_bytes", "chunk",
//                 "entropy_bound_ratio", "entropy_bound_ratio_bytes",
//                 "codecs": {SPEC: {"compressed_bytes", "ratio"}}}, ...],
//    "context": {host facts, argv, dataset:SPEC, dataset_sha256:SPEC}}
// A bound is null where it is infinite (a constant tensor); a ratio is null for an empty tensor.
// Records are written one a line as they are made, so memory does not grow with the tensor count;
// the context comes last because the data sets' lines in it are known only once each is read.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wirezip/codecs/codec_spec.hpp"

namespace wirezip::harness {

struct PerTensorConfig {
  std::vector<codecs::CodecSpec> codecs;
  std::vector<std::uint64_t> chunks;
  std::vector<std::string> datasets;  // each safetensors:PATH[:tensors=REGEX], PATH a file or a glob
  std::uint64_t window_bytes = 0;     // a tensor is read this many bytes at a time (rounded to whole chunks)
};

// Throws wirezip::Error naming a data set that is not a safetensors spec; call before any work.
void check_per_tensor_datasets(const std::vector<std::string>& datasets);

// Writes the records of every tensor to `out`, then the context with `context` added; returns how
// many records it wrote. Throws wirezip::Error on a bad file or a round trip that does not restore
// its tensor, and when `out` cannot be written.
std::uint64_t write_per_tensor_records(const PerTensorConfig& config, const nlohmann::json& context, std::ostream& out);

}  // namespace wirezip::harness
