// Spec parsing and the three sources: synthetic generators, safetensors files, raw files.
#include "wirezip/datasets/dataset.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <new>

#include "wirezip/datasets/bf16.hpp"
#include "wirezip/datasets/mapped_file.hpp"
#include "wirezip/datasets/safetensors.hpp"
#include "wirezip/datasets/synthetic.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip::datasets {
namespace {

constexpr std::string_view kValidForms =
    "synthetic:KIND[:size=SIZE][:seed=N] with KIND weights|gradients|activations, "
    "safetensors:PATH[:tensors=REGEX], file:PATH[:dtype=bf16|f32]";

Dataset load_synthetic(std::string_view spec) {
  SpecPart part = parse_spec_part(spec);
  if (part.positional.size() != 1)
    fail("expected synthetic:KIND[:size=SIZE][:seed=N] with KIND weights, gradients or activations");
  SyntheticKind kind = parse_synthetic_kind(part.positional[0]);
  std::uint64_t size = part.take_size("size", 64ull << 20);
  auto seed = static_cast<std::uint64_t>(part.take_int("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
  if (!part.options.empty())
    fail("unknown option '{}' for synthetic (valid: size=SIZE, seed=N)", part.options.begin()->first);
  Dataset dataset;
  dataset.bytes = generate_synthetic(kind, size, seed);
  dataset.description = describe_synthetic(kind, size / 2, seed);
  return dataset;
}

Dataset load_safetensors(std::string_view spec) {
  // The regex may contain ':' and '=', so "tensors=" takes the rest of the spec; it must come last.
  std::string regex;  // empty: an empty pattern matches every name (RE2, partial match)
  constexpr std::string_view kTensors = ":tensors=";
  std::size_t at = spec.find(kTensors);
  if (at != std::string_view::npos) {
    regex = std::string(spec.substr(at + kTensors.size()));
    if (regex.empty()) fail("tensors= needs a regex (omit it to take every tensor)");
    spec = spec.substr(0, at);
  }
  SpecPart part = parse_spec_part(spec);
  if (part.positional.size() != 1) fail("expected safetensors:PATH[:tensors=REGEX] (PATH without ':')");
  if (!part.options.empty())
    fail("unknown option '{}' for safetensors (valid: tensors=REGEX, last)", part.options.begin()->first);
  const std::string& path = part.positional[0];
  SafetensorsSelection selection = read_safetensors_bf16(path, regex);

  std::size_t from_f32 = 0, from_f16 = 0, from_bf16 = 0;
  for (std::size_t i : selection.selected) {
    const std::string_view dtype = selection.header.tensors[i].dtype;
    if (dtype == "F32")
      ++from_f32;
    else if (dtype == "F16")
      ++from_f16;
    else
      ++from_bf16;
  }
  Dataset dataset;
  dataset.description =
      fmt::format("safetensors {}: {} of {} tensors{} (F32 {}, F16 {}, BF16 {}) as bf16, {} bf16 elements", path,
                  selection.selected.size(), selection.header.tensors.size(),
                  regex.empty() ? "" : fmt::format(" matching '{}'", regex), from_f32, from_f16, from_bf16,
                  selection.bf16.size() / 2);
  dataset.bytes = std::move(selection.bf16);
  return dataset;
}

Dataset load_file(std::string_view spec) {
  SpecPart part = parse_spec_part(spec);
  if (part.positional.size() != 1) fail("expected file:PATH[:dtype=bf16|f32] (PATH without ':')");
  std::string dtype = part.take("dtype").value_or("bf16");
  if (dtype != "bf16" && dtype != "f32") fail("unknown dtype '{}' for file (valid: bf16, f32)", dtype);
  if (!part.options.empty()) fail("unknown option '{}' for file (valid: dtype=bf16|f32)", part.options.begin()->first);
  const std::string& path = part.positional[0];
  MappedFile file(path);
  std::span<const std::byte> raw = file.bytes();
  std::size_t width = dtype == "f32" ? 4 : 2;
  if (raw.empty()) fail("'{}' is empty", path);
  if (raw.size() % width != 0)
    fail("'{}' has {} bytes, not a whole number of {}-byte {} elements", path, raw.size(), width, dtype);

  Dataset dataset;
  dataset.bytes.resize(raw.size() / width * 2);
  if (dtype == "f32")
    f32_le_to_bf16_le(raw, dataset.bytes);
  else
    std::copy(raw.begin(), raw.end(), dataset.bytes.begin());
  dataset.description = fmt::format("raw {} file {}{}, {} bf16 elements", dtype, path,
                                    dtype == "f32" ? " converted to bf16" : "", dataset.bytes.size() / 2);
  return dataset;
}

}  // namespace

Dataset load_dataset(std::string_view spec) {
  std::string_view source = spec.substr(0, spec.find(':'));
  Dataset dataset;
  try {
    if (source == "synthetic")
      dataset = load_synthetic(spec);
    else if (source == "safetensors")
      dataset = load_safetensors(spec);
    else if (source == "file")
      dataset = load_file(spec);
    else
      fail("unknown source '{}' (valid: {})", source, kValidForms);
  } catch (const Error& error) {
    fail("dataset '{}': {}", shown(spec), error.what());
  } catch (const std::bad_alloc&) {
    fail("dataset '{}': out of memory", shown(spec));
  }
  dataset.spec = std::string(spec);
  dataset.element_width = 2;
  return dataset;
}

std::string sha256_hex(std::span<const std::byte> bytes) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(context.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(context.get(), digest.data(), &length) != 1)
    fail("sha256: OpenSSL EVP digest failed");
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace wirezip::datasets
