#pragma once
// Seeded, deterministic bf16 traffic: what a training job puts on the wire, without a download.
// See datasets/README.md for each distribution and why it models that traffic.
//
// Determinism: every value derives from std::mt19937_64 (fully specified by the standard) through
// transforms written here with + - * / and sqrt only (IEEE correctly rounded), so the same
// (kind, size, seed) gives the same bytes on every host, compiler and thread count.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wirezip/datasets/aligned_bytes.hpp"

namespace wirezip::datasets {

enum class SyntheticKind { weights, gradients, activations };

// "weights" | "gradients" | "activations"; throws wirezip::Error naming the valid kinds.
SyntheticKind parse_synthetic_kind(std::string_view name);
std::string_view synthetic_kind_name(SyntheticKind kind);

// Llama-3.2-1B (config.json of meta-llama/Llama-3.2-1B): the shapes the weights and gradients follow.
struct LlamaConfig {
  static constexpr std::uint64_t hidden = 2048;
  static constexpr std::uint64_t intermediate = 8192;
  static constexpr std::uint64_t layers = 16;
  static constexpr std::uint64_t heads = 32;
  static constexpr std::uint64_t kv_heads = 8;
  static constexpr std::uint64_t head_dim = 64;
  static constexpr std::uint64_t vocab = 128256;
  static constexpr double initializer_std = 0.02;
};

// One tensor of the generated stream: `count` elements starting at element `offset`.
struct SyntheticTensor {
  std::string name;  // e.g. "layers.0.self_attn.q_proj.weight"
  std::uint64_t offset = 0;
  std::uint64_t count = 0;  // the last tensor is truncated to fit the size
  std::uint64_t index = 0;  // position in the endless tensor sequence; part of its seed
};

// The tensors that make up `elements` elements of `kind`, in stream order.
// weights/gradients: per decoder layer q,k,v,o,gate,up,down,input_layernorm,post_attention_layernorm,
// layers 0..15 then again (with fresh random values: the index keeps counting).
// activations: blocks of kActivationBlock elements, GELU then ReLU alternately.
std::vector<SyntheticTensor> synthetic_layout(SyntheticKind kind, std::uint64_t elements);

inline constexpr std::uint64_t kActivationBlock = 1u << 20;  // 512 tokens x hidden 2048
// Each tensor is generated in chunks of this many elements, each from its own seed, so chunks
// can be generated in parallel and the bytes do not depend on the thread count.
inline constexpr std::uint64_t kSeedChunk = 1u << 20;

// size_bytes must be a positive multiple of 2 (throws wirezip::Error otherwise).
// threads = 0 picks a few (hardware concurrency, at most 8); the bytes do not depend on it.
AlignedBytes generate_synthetic(SyntheticKind kind, std::uint64_t size_bytes, std::uint64_t seed, unsigned threads = 0);

// One line: "synthetic weights (Llama-3.2-1B shapes, std 0.02), 33554432 bf16 elements, seed 1".
std::string describe_synthetic(SyntheticKind kind, std::uint64_t elements, std::uint64_t seed);

}  // namespace wirezip::datasets
