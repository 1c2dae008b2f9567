// Synthetic bf16 traffic. The distributions and why they model training traffic are in datasets/README.md.
#include "wirezip/datasets/synthetic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <limits>
#include <thread>

#include "detmath.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::datasets {
namespace {

using detail::derive_seed;
using detail::det_exp;
using detail::det_log;
using detail::Random;

// Fixed tags, not the enum values, go into seeds: reordering the enum must not change the bytes.
std::uint64_t seed_tag(SyntheticKind kind) {
  switch (kind) {
    case SyntheticKind::weights:
      return 1;
    case SyntheticKind::gradients:
      return 2;
    case SyntheticKind::activations:
      return 3;
  }
  return 0;
}

// A chunk index no real chunk reaches: the stream for per-tensor parameters (gradient scale).
constexpr std::uint64_t kTensorParameterStream = std::numeric_limits<std::uint64_t>::max();

struct LayerTensor {
  std::string_view name;
  std::uint64_t count;
  bool is_norm;
};

using L = LlamaConfig;
// One decoder layer, its modules in Llama's order: attention, MLP, then the two RMSNorm weights.
constexpr std::array<LayerTensor, 9> kLayerTensors{{
    {"self_attn.q_proj.weight", L::heads* L::head_dim* L::hidden, false},     // 2048 x 2048
    {"self_attn.k_proj.weight", L::kv_heads* L::head_dim* L::hidden, false},  // 512 x 2048 (GQA)
    {"self_attn.v_proj.weight", L::kv_heads* L::head_dim* L::hidden, false},  // 512 x 2048
    {"self_attn.o_proj.weight", L::hidden* L::heads* L::head_dim, false},     // 2048 x 2048
    {"mlp.gate_proj.weight", L::intermediate* L::hidden, false},              // 8192 x 2048
    {"mlp.up_proj.weight", L::intermediate* L::hidden, false},                // 8192 x 2048
    {"mlp.down_proj.weight", L::hidden* L::intermediate, false},              // 2048 x 8192
    {"input_layernorm.weight", L::hidden, true},
    {"post_attention_layernorm.weight", L::hidden, true},
}};

void store_bf16(std::byte* out, std::uint64_t i, double value) {
  // double -> float rounds to nearest even, then float -> bf16 does again: deterministic everywhere.
  std::uint16_t bits = fp32_to_bf16(static_cast<float>(value));
  out[2 * i] = static_cast<std::byte>(bits & 0xff);  // little-endian, independent of the host
  out[2 * i + 1] = static_cast<std::byte>(bits >> 8);
}

// Student-t with 4 degrees of freedom: Z / sqrt(V / 4) with V ~ chi-square(4) = -2 ln(U1 U2).
// nu = 4 is heavy-tailed (infinite kurtosis) yet needs just one log per sample.
double student_t4(Random& random) {
  double z = random.normal();
  double v = 0;
  do {
    v = -2.0 * det_log(random.uniform_positive() * random.uniform_positive());
  } while (v <= 0.0);
  return z / std::sqrt(v * 0.25);
}

// GELU, tanh form (as in GPT-2 and PyTorch's approximate="tanh"), written as x * sigmoid(2y), which
// has no cancellation for negative x: 0.5 (1 + tanh y) = 1 / (1 + e^(-2y)).
double gelu(double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  double y = kSqrt2OverPi * (x + 0.044715 * x * x * x);
  return x / (1.0 + det_exp(-2.0 * y));
}

struct WorkItem {
  const SyntheticTensor* tensor;
  std::uint64_t chunk;  // index of the kSeedChunk-sized chunk within the tensor
};

void fill_chunk(SyntheticKind kind, std::uint64_t seed, const WorkItem& item, std::byte* out) {
  const SyntheticTensor& tensor = *item.tensor;
  std::uint64_t begin = item.chunk * kSeedChunk;
  std::uint64_t end = std::min(tensor.count, begin + kSeedChunk);
  std::uint64_t first = tensor.offset + begin;  // element index in the output
  std::uint64_t tag = seed_tag(kind);
  Random random(derive_seed(seed, tag, tensor.index, item.chunk));
  switch (kind) {
    case SyntheticKind::weights: {
      bool is_norm = kLayerTensors[tensor.index % kLayerTensors.size()].is_norm;
      for (std::uint64_t i = 0; i < end - begin; ++i)
        store_bf16(out, first + i, is_norm ? 1.0 : LlamaConfig::initializer_std * random.normal());
      break;
    }
    case SyntheticKind::gradients: {
      // Per-tensor scale, log-uniform in [1e-5, 1e-3], from its own stream so every chunk agrees.
      Random scale_random(derive_seed(seed, tag, tensor.index, kTensorParameterStream));
      constexpr double kLogLow = -11.512925464970229;  // ln 1e-5
      constexpr double kLogSpan = 4.605170185988092;   // ln 100
      double scale = det_exp(kLogLow + kLogSpan * scale_random.uniform());
      for (std::uint64_t i = 0; i < end - begin; ++i) store_bf16(out, first + i, scale * student_t4(random));
      break;
    }
    case SyntheticKind::activations: {
      bool relu = tensor.index % 2 == 1;
      for (std::uint64_t i = 0; i < end - begin; ++i) {
        double x = random.normal();
        store_bf16(out, first + i, relu ? (x > 0.0 ? x : 0.0) : gelu(x));
      }
      break;
    }
  }
}

}  // namespace

constexpr EnumNames<SyntheticKind, 3> kSyntheticKindNames{"synthetic kind",
                                                          {{{SyntheticKind::weights, "weights"},
                                                            {SyntheticKind::gradients, "gradients"},
                                                            {SyntheticKind::activations, "activations"}}}};

SyntheticKind parse_synthetic_kind(std::string_view name) { return kSyntheticKindNames.parse(name); }

std::string_view synthetic_kind_name(SyntheticKind kind) { return kSyntheticKindNames.name(kind); }

std::vector<SyntheticTensor> synthetic_layout(SyntheticKind kind, std::uint64_t elements) {
  std::vector<SyntheticTensor> tensors;
  std::uint64_t offset = 0;
  for (std::uint64_t index = 0; offset < elements; ++index) {
    SyntheticTensor tensor;
    tensor.index = index;
    tensor.offset = offset;
    if (kind == SyntheticKind::activations) {
      tensor.name = fmt::format("activations.{}.{}", index, index % 2 == 0 ? "gelu" : "relu");
      tensor.count = kActivationBlock;
    } else {
      const LayerTensor& layer_tensor = kLayerTensors[index % kLayerTensors.size()];
      std::uint64_t layer = (index / kLayerTensors.size()) % LlamaConfig::layers;
      tensor.name = fmt::format("layers.{}.{}", layer, layer_tensor.name);
      tensor.count = layer_tensor.count;
    }
    tensor.count = std::min(tensor.count, elements - offset);  // truncate the last tensor
    offset += tensor.count;
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

AlignedBytes generate_synthetic(SyntheticKind kind, std::uint64_t size_bytes, std::uint64_t seed, unsigned threads) {
  if (size_bytes == 0 || size_bytes % 2 != 0)
    fail("size {} must be a positive multiple of 2 bytes (one bf16 element)", size_bytes);
  if (size_bytes > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max()))
    fail("size {} is too large for this host", size_bytes);
  std::vector<SyntheticTensor> layout = synthetic_layout(kind, size_bytes / 2);
  std::vector<WorkItem> items;
  for (const SyntheticTensor& tensor : layout)
    for (std::uint64_t chunk = 0; chunk * kSeedChunk < tensor.count; ++chunk) items.push_back({&tensor, chunk});

  AlignedBytes bytes(size_bytes);
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, items.size()));
  // Chunks write disjoint ranges and each has its own seed: any thread may take any chunk.
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < items.size(); i = next.fetch_add(1))
      fill_chunk(kind, seed, items[i], bytes.data());
  };
  {
    std::vector<std::jthread> helpers;
    for (unsigned t = 1; t < threads; ++t) helpers.emplace_back(worker);
    worker();
  }  // helpers join here
  return bytes;
}

std::string describe_synthetic(SyntheticKind kind, std::uint64_t elements, std::uint64_t seed) {
  std::string_view what;
  switch (kind) {
    case SyntheticKind::weights:
      what = "Llama-3.2-1B shapes, std 0.02";
      break;
    case SyntheticKind::gradients:
      what = "Llama-3.2-1B shapes, Student-t nu=4, per-tensor scale log-uniform 1e-5..1e-3";
      break;
    case SyntheticKind::activations:
      what = "GELU/ReLU of N(0,1), alternating per 1Mi-element block";
      break;
  }
  return fmt::format("synthetic {} ({}), {} bf16 elements, seed {}", synthetic_kind_name(kind), what, elements, seed);
}

}  // namespace wirezip::datasets
