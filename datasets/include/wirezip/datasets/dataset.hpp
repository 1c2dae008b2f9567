#pragma once
// Training traffic to compress: bf16 tensors, generated (seeded, deterministic) or read from files.
//
// Specs:
//   synthetic:KIND[:size=SIZE][:seed=N]   KIND = weights | gradients | activations (default size 64MiB, seed 1)
//   safetensors:PATH[:tensors=REGEX]      tensors whose name matches REGEX (default: all), F32/F16/BF16 -> bf16
//   file:PATH[:dtype=bf16]                raw little-endian bf16 (dtype=f32 converts)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wirezip::datasets {

struct Dataset {
  std::string spec;            // as given by the user
  std::string description;     // one line: what the bytes are (kind, tensors, element count)
  std::size_t element_width = 2;  // bytes per element: 2 for bf16
  std::vector<std::byte> bytes;   // little-endian elements
};

// The data set the main job uses: generated, so it needs no download.
inline constexpr std::string_view kDefaultDatasetSpec = "synthetic:weights:size=64MiB:seed=1";

// Throws wirezip::Error (one line naming the spec and the problem) on a bad spec or unreadable file.
Dataset load_dataset(std::string_view spec);

// Hex sha256 of the bytes, for the benchmark context (same bytes, same digest, on every host).
std::string sha256_hex(std::span<const std::byte> bytes);

}  // namespace wirezip::datasets
