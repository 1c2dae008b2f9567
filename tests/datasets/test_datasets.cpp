// Tests of the synthetic generators, bf16 conversions and dataset specs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "wirezip/datasets/bf16.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/synthetic.hpp"
#include "wirezip/util/error.hpp"

namespace wd = wirezip::datasets;

namespace {

std::uint16_t element(std::span<const std::byte> bytes, std::size_t i) {
  return static_cast<std::uint16_t>(static_cast<unsigned>(bytes[2 * i]) | static_cast<unsigned>(bytes[2 * i + 1]) << 8);
}

// Order-0 entropy, in bits per byte, of byte `plane` (0 = low, 1 = high) of each bf16 element.
double plane_entropy(std::span<const std::byte> bytes, std::size_t plane) {
  std::array<double, 256> counts{};
  for (std::size_t i = plane; i < bytes.size(); i += 2) counts[static_cast<unsigned>(bytes[i])] += 1;
  double total = static_cast<double>(bytes.size() / 2), bits = 0;
  for (double count : counts)
    if (count > 0) bits -= count / total * std::log2(count / total);
  return bits;
}

// Expects `spec` to throw wirezip::Error whose message contains every one of `parts`.
void expect_error(const std::string& spec, std::initializer_list<std::string> parts) {
  try {
    wd::load_dataset(spec);
    ADD_FAILURE() << "no error for " << spec;
  } catch (const wirezip::Error& error) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
  }
}

bool is_bf16_nan(std::uint16_t bits) { return (bits & 0x7f80) == 0x7f80 && (bits & 0x007f) != 0; }

}  // namespace

TEST(Bf16, RoundsToNearestEven) {
  EXPECT_EQ(wd::fp32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(wd::fp32_to_bf16(-2.5f), 0xc020);
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x3f807fff), 0x3f80);  // just below half: down
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x3f808000), 0x3f80);  // tie, kept half even: stays
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x3f818000), 0x3f82);  // tie, kept half odd: up to even
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x3f808001), 0x3f81);  // just above half: up
  EXPECT_EQ(wd::fp32_bits_to_bf16(0xbf818000), 0xbf82);  // sign does not matter
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x3fffffff), 0x4000);  // carry into the exponent
}

TEST(Bf16, OverflowInfinityAndZero) {
  EXPECT_EQ(wd::fp32_to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to +inf
  EXPECT_EQ(wd::fp32_to_bf16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x7f7f7fff), 0x7f7f);  // largest finite bf16 stays finite
  EXPECT_EQ(wd::fp32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(wd::fp32_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(wd::fp32_to_bf16(0.0f), 0x0000);
  EXPECT_EQ(wd::fp32_to_bf16(-0.0f), 0x8000);
}

TEST(Bf16, NanStaysQuietNan) {
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x7fc00000), 0x7fc0);
  // Payload only in the dropped bits: truncation or rounding would give infinity.
  EXPECT_TRUE(is_bf16_nan(wd::fp32_bits_to_bf16(0x7f800001)));
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x7f800001), 0x7fc0);
  EXPECT_EQ(wd::fp32_bits_to_bf16(0xffffffff), 0xffff);  // all-ones NaN must not carry and wrap
  EXPECT_EQ(wd::fp32_bits_to_bf16(0xff800001), 0xffc0);
  EXPECT_TRUE(is_bf16_nan(wd::fp32_to_bf16(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Bf16, Subnormals) {
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x00000001), 0x0000);  // tiniest fp32 rounds to zero
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x00010000), 0x0001);  // smallest bf16 subnormal is exact
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x00008000), 0x0000);  // tie to even zero
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x00018000), 0x0002);  // tie to even
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x007fffff), 0x0080);  // largest subnormal rounds to the smallest normal
  EXPECT_EQ(wd::fp32_bits_to_bf16(0x80010000), 0x8001);
}

TEST(Bf16, ToFp32IsExact) {
  EXPECT_EQ(wd::bf16_to_fp32(0x3f80), 1.0f);
  EXPECT_EQ(wd::bf16_to_fp32(0xc020), -2.5f);
  EXPECT_EQ(wd::bf16_to_fp32(0x0001), std::ldexp(1.0f, -133));
  EXPECT_TRUE(std::isinf(wd::bf16_to_fp32(0xff80)));
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    auto b = static_cast<std::uint16_t>(bits);
    if (!is_bf16_nan(b)) {
      EXPECT_EQ(wd::fp32_to_bf16(wd::bf16_to_fp32(b)), b);
    }
  }
}

TEST(Bf16, FromFp16) {
  EXPECT_EQ(wd::fp16_to_bf16(0x3c00), 0x3f80);  // 1.0
  EXPECT_EQ(wd::fp16_to_bf16(0xc000), 0xc000);  // -2.0
  EXPECT_EQ(wd::fp16_to_bf16(0x3555), 0x3eab);  // 0.333252 = 0x3eaaa000 rounds up
  EXPECT_EQ(wd::fp16_to_bf16(0x3c01), 0x3f80);  // 1 + 2^-10 rounds down
  EXPECT_EQ(wd::fp16_to_bf16(0x7bff), 0x4780);  // 65504 rounds up to 65536
  EXPECT_EQ(wd::fp16_to_bf16(0x0001), 0x3380);  // smallest subnormal 2^-24 is a bf16 normal
  EXPECT_EQ(wd::fp16_to_bf16(0x8200), 0xb800);  // -2^-15, subnormal in fp16
  EXPECT_EQ(wd::fp16_to_bf16(0x7c00), 0x7f80);  // +inf
  EXPECT_EQ(wd::fp16_to_bf16(0xfc00), 0xff80);  // -inf
  EXPECT_EQ(wd::fp16_to_bf16(0x8000), 0x8000);  // -0
  EXPECT_TRUE(is_bf16_nan(wd::fp16_to_bf16(0x7e00)));
  EXPECT_TRUE(is_bf16_nan(wd::fp16_to_bf16(0x7c01)));  // signalling NaN with a low payload
}

TEST(Bf16, BulkConversionsAreLittleEndianAndUnaligned) {
  // One spare byte in front so the source is misaligned.
  std::vector<std::byte> src = {std::byte{0xff}, std::byte{0x00}, std::byte{0x80}, std::byte{0x81}, std::byte{0x3f},
                                std::byte{0x00}, std::byte{0x00}, std::byte{0x20}, std::byte{0xc0}};
  std::vector<std::byte> dst(4);
  wd::f32_le_to_bf16_le(std::span(src).subspan(1), dst);  // 0x3f818000 -> 0x3f82, -2.5 -> 0xc020
  EXPECT_EQ(element(dst, 0), 0x3f82);
  EXPECT_EQ(element(dst, 1), 0xc020);
  std::vector<std::byte> half = {std::byte{0x00}, std::byte{0x3c}, std::byte{0x55}, std::byte{0x35}};
  wd::f16_le_to_bf16_le(half, dst);
  EXPECT_EQ(element(dst, 0), 0x3f80);
  EXPECT_EQ(element(dst, 1), 0x3eab);
  EXPECT_THROW(wd::f32_le_to_bf16_le(std::span(src).subspan(2), dst), wirezip::Error);  // 7 bytes
  EXPECT_THROW(wd::f16_le_to_bf16_le(half, std::span(dst).first(2)), wirezip::Error);
}

TEST(Synthetic, SameSpecSameBytesDifferentSeedDifferentBytes) {
  for (const char* kind : {"weights", "gradients", "activations"}) {
    std::string spec = std::string("synthetic:") + kind + ":size=256KiB:seed=3";
    wd::Dataset a = wd::load_dataset(spec), b = wd::load_dataset(spec);
    wd::Dataset other = wd::load_dataset(std::string("synthetic:") + kind + ":size=256KiB:seed=4");
    EXPECT_EQ(wd::sha256_hex(a.bytes), wd::sha256_hex(b.bytes)) << kind;
    EXPECT_NE(wd::sha256_hex(a.bytes), wd::sha256_hex(other.bytes)) << kind;
    EXPECT_EQ(a.spec, spec);
    EXPECT_EQ(a.element_width, 2u);
  }
}

// Pinned digests: the generators promise the same bytes on every host, compiler and standard
// library. A change here changes every recorded benchmark result: update only on purpose.
TEST(Synthetic, GoldenDigests) {
  EXPECT_EQ(wd::sha256_hex(wd::load_dataset("synthetic:weights:size=1MiB:seed=7").bytes),
            "a7c339c56138c4266dac7fbe4dc076ac67c5dae70ca03662a7f8024865b429b6");
  EXPECT_EQ(wd::sha256_hex(wd::load_dataset("synthetic:gradients:size=1MiB:seed=7").bytes),
            "5f2572da4a5db2546303acaedcc101d282fcf6c0ea5ff01a17a07b0186df6a9d");
  EXPECT_EQ(wd::sha256_hex(wd::load_dataset("synthetic:activations:size=1MiB:seed=7").bytes),
            "8b041854deb99e1f7922e44558d42857cb593ad0e60bb8f08222c4d7acb59612");
}

TEST(Synthetic, BytesDoNotDependOnThreadsAndSizesArePrefixes) {
  for (auto kind : {wd::SyntheticKind::weights, wd::SyntheticKind::gradients, wd::SyntheticKind::activations}) {
    wd::AlignedBytes one = wd::generate_synthetic(kind, 5u << 20, 9, 1);
    EXPECT_EQ(one, wd::generate_synthetic(kind, 5u << 20, 9, 3));
    wd::AlignedBytes small = wd::generate_synthetic(kind, (3u << 20) + 6, 9, 2);
    EXPECT_TRUE(std::equal(small.begin(), small.end(), one.begin()));
  }
}

TEST(Synthetic, SizesAndDescription) {
  wd::Dataset tiny = wd::load_dataset("synthetic:gradients:size=2");
  EXPECT_EQ(tiny.bytes.size(), 2u);
  wd::Dataset d = wd::load_dataset("synthetic:weights:size=4KiB:seed=5");
  EXPECT_EQ(d.bytes.size(), 4096u);
  EXPECT_EQ(d.description, "synthetic weights (Llama-3.2-1B shapes, std 0.02), 2048 bf16 elements, seed 5");
  wd::Dataset def = wd::load_dataset(wd::kDefaultDatasetSpec);
  EXPECT_EQ(def.bytes.size(), 64u << 20);
  EXPECT_EQ(def.description, "synthetic weights (Llama-3.2-1B shapes, std 0.02), 33554432 bf16 elements, seed 1");
  // Defaults: size 64MiB, seed 1.
  EXPECT_EQ(wd::load_dataset("synthetic:weights").bytes, def.bytes);
}

TEST(Synthetic, BadSpecsGiveOneClearError) {
  expect_error("synthetic:weights:size=3", {"dataset 'synthetic:weights:size=3'", "multiple of 2"});
  expect_error("synthetic:weights:size=0", {"positive multiple of 2"});
  expect_error("synthetic:weights:size=lots", {"bad size 'lots'"});
  expect_error("synthetic:weights:seed=-1", {"seed=-1"});
  expect_error("synthetic:noise", {"unknown synthetic kind 'noise'", "weights, gradients, activations"});
  expect_error("synthetic", {"synthetic:KIND"});
  expect_error("synthetic:weights:extra", {"synthetic:KIND"});
  expect_error("synthetic:weights:sized=1MiB", {"unknown option 'sized'", "size=SIZE, seed=N"});
  expect_error("random:weights", {"unknown source 'random'", "synthetic:KIND", "safetensors:PATH", "file:PATH"});
  expect_error("", {"unknown source ''"});
  EXPECT_THROW(wd::generate_synthetic(wd::SyntheticKind::weights, 7, 1), wirezip::Error);
}

TEST(Synthetic, WeightLayoutFollowsLlamaLayers) {
  std::vector<wd::SyntheticTensor> layout = wd::synthetic_layout(wd::SyntheticKind::weights, 32u << 20);
  ASSERT_EQ(layout.size(), 6u);  // 64 MiB = q, k, v, o, gate and part of up
  EXPECT_EQ(layout[0].name, "layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(layout[0].count, 2048u * 2048u);
  EXPECT_EQ(layout[1].name, "layers.0.self_attn.k_proj.weight");
  EXPECT_EQ(layout[1].count, 512u * 2048u);
  EXPECT_EQ(layout[4].name, "layers.0.mlp.gate_proj.weight");
  EXPECT_EQ(layout[4].count, 8192u * 2048u);
  EXPECT_EQ(layout[5].name, "layers.0.mlp.up_proj.weight");
  EXPECT_EQ(layout[5].offset + layout[5].count, 32u << 20);  // truncated to the size

  constexpr std::uint64_t kLayer = 2 * 2048 * 2048 + 2 * 512 * 2048 + 3 * 8192 * 2048 + 2 * 2048;
  layout = wd::synthetic_layout(wd::SyntheticKind::gradients, 16 * kLayer + 1);
  ASSERT_EQ(layout.size(), 16u * 9 + 1);
  EXPECT_EQ(layout[7].name, "layers.0.input_layernorm.weight");
  EXPECT_EQ(layout[8].name, "layers.0.post_attention_layernorm.weight");
  EXPECT_EQ(layout[9].name, "layers.1.self_attn.q_proj.weight");
  EXPECT_EQ(layout[9].offset, kLayer);
  EXPECT_EQ(layout.back().name, "layers.0.self_attn.q_proj.weight");  // cycles past layer 15
  EXPECT_EQ(layout.back().index, 144u);                               // ...with a new index, so new values
  EXPECT_EQ(layout.back().count, 1u);

  layout = wd::synthetic_layout(wd::SyntheticKind::activations, 3 * wd::kActivationBlock);
  ASSERT_EQ(layout.size(), 3u);
  EXPECT_EQ(layout[0].name, "activations.0.gelu");
  EXPECT_EQ(layout[1].name, "activations.1.relu");
}

// Chunks of a data set start on cache lines only if the data set does: at malloc's 16-byte offset
// a codec's vector loads straddle two lines throughout every chunk, which no real buffer makes it do.
TEST(Synthetic, BytesStartOnAPageBoundary) {
  for (const char* spec : {"synthetic:weights:size=4MiB:seed=1", "synthetic:gradients:size=64KiB:seed=2"}) {
    const wd::Dataset dataset = wd::load_dataset(spec);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(dataset.bytes.data()) % 4096, 0u) << spec;
  }
}

TEST(Synthetic, WeightsLookLikeInitializedLlamaWeights) {
  wd::AlignedBytes bytes = wd::load_dataset("synthetic:weights:size=16MiB:seed=1").bytes;
  // What makes them look like Llama's bf16 weights: exponent plane ~2.7 bits/byte, low plane almost random.
  EXPECT_GT(plane_entropy(bytes, 1), 2.5);
  EXPECT_LT(plane_entropy(bytes, 1), 2.9);
  EXPECT_GT(plane_entropy(bytes, 0), 7.9);
  double sum = 0, squares = 0;
  std::size_t n = bytes.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    double x = wd::bf16_to_fp32(element(bytes, i));
    sum += x;
    squares += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 1e-4);
  EXPECT_NEAR(std::sqrt(squares / n), 0.02, 0.0005);

  // RMSNorm weights are exactly 1.0: generate through the first layer's norms.
  std::vector<wd::SyntheticTensor> layout = wd::synthetic_layout(wd::SyntheticKind::weights, 62u << 20);
  ASSERT_GE(layout.size(), 9u);
  const wd::SyntheticTensor& norm = layout[7];
  bytes = wd::generate_synthetic(wd::SyntheticKind::weights, 2 * (layout[8].offset + layout[8].count + 16), 1);
  for (std::uint64_t i = norm.offset; i < layout[8].offset + layout[8].count; ++i) ASSERT_EQ(element(bytes, i), 0x3f80);
  EXPECT_NE(element(bytes, norm.offset - 1), 0x3f80);
  EXPECT_NE(element(bytes, layout[8].offset + layout[8].count), 0x3f80);
}

TEST(Synthetic, GradientsAreSmallAndHeavyTailed) {
  const wd::AlignedBytes bytes = wd::load_dataset("synthetic:gradients:size=8MiB:seed=2").bytes;
  EXPECT_GT(plane_entropy(bytes, 0), 7.9);
  // Within the first tensor (q_proj, 4Mi elements) the scale is one log-uniform draw.
  double squares = 0, fourth = 0;
  std::size_t n = 2048 * 2048;
  for (std::size_t i = 0; i < n; ++i) {
    double x = wd::bf16_to_fp32(element(bytes, i));
    ASSERT_TRUE(std::isfinite(x));
    squares += x * x;
    fourth += x * x * x * x;
  }
  double variance = squares / n;
  EXPECT_GT(std::sqrt(variance), 1e-5);
  EXPECT_LT(std::sqrt(variance), 2e-3);
  EXPECT_GT(fourth / n / (variance * variance), 6.0);  // kurtosis: a normal would give 3
}

TEST(Synthetic, ActivationsHaveManyExactZeros) {
  const wd::AlignedBytes bytes = wd::load_dataset("synthetic:activations:size=8MiB:seed=1").bytes;
  std::size_t n = bytes.size() / 2, zeros = 0, relu_zeros = 0, relu_negative = 0, gelu_negative = 0;
  float gelu_min = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t bits = element(bytes, i);
    float x = wd::bf16_to_fp32(bits);
    bool relu = (i / wd::kActivationBlock) % 2 == 1;
    if (x == 0.0f) ++zeros;
    if (relu && bits == 0) ++relu_zeros;
    if (relu && x < 0) ++relu_negative;
    if (!relu && x < 0) ++gelu_negative;
    if (!relu) gelu_min = std::min(gelu_min, x);
  }
  EXPECT_GT(static_cast<double>(zeros) / n, 0.2);  // half of each ReLU block
  EXPECT_NEAR(static_cast<double>(relu_zeros) / (n / 2), 0.5, 0.01);
  EXPECT_EQ(relu_negative, 0u);
  EXPECT_GT(gelu_negative, n / 5);  // GELU keeps small negative values (half of its blocks)
  EXPECT_GT(gelu_min, -0.18f);      // GELU's minimum is about -0.17
  EXPECT_LT(plane_entropy(bytes, 1), plane_entropy(bytes, 0));
}

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(wd::sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char* abc = "abc";
  EXPECT_EQ(wd::sha256_hex(std::as_bytes(std::span(abc, 3))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
