#pragma once
// Training traffic to compress: bf16 tensors, generated (seeded, deterministic) or read from files.
//
// Specs:
//   synthetic:KIND[:size=SIZE][:seed=N]   KIND = weights | gradients | activations (default size 64MiB, seed 1)
//   safetensors:PATH[:tensors=REGEX]      tensors whose name matches REGEX (default: all), F32/F16/BF16 -> bf16
//   file:PATH[:dtype=bf16]                raw little-endian bf16 (dtype=f32 converts)
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/datasets/aligned_bytes.hpp"

namespace wirezip::datasets {

struct Dataset {
  std::string spec;            // as given by the user
  std::string description;     // one line: what the bytes are (kind, tensors, element count)
  std::size_t element_width = 2;  // bytes per element: 2 for bf16
  AlignedBytes bytes;             // little-endian elements, page-aligned
};

// The data set the main job uses: generated, so it needs no download.
inline constexpr std::string_view kDefaultDatasetSpec = "synthetic:weights:size=64MiB:seed=1";

// Throws wirezip::Error (one line naming the spec and the problem) on a bad spec or unreadable file.
Dataset load_dataset(std::string_view spec);

class DatasetReader;
// A file: or safetensors: spec opened for reading by range (dataset_reader.hpp); errors read as
// load_dataset's do.
DatasetReader open_file_dataset(std::string_view spec);

// Hex sha256 of the bytes, for the benchmark context (same bytes, same digest, on every host).
std::string sha256_hex(std::span<const std::byte> bytes);

// The same digest of a stream fed a piece at a time (a data set read by windows).
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void update(std::span<const std::byte> bytes);
  std::string hex();  // once, after the last update

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace wirezip::datasets
