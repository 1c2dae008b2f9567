// Spec parsing and the three sources: synthetic generators, safetensors files, raw files.
#include "wirezip/datasets/dataset.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <new>

#include "wirezip/datasets/dataset_reader.hpp"
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

// file: and safetensors: specs, read whole through the reader the windowed benchmarks use.
Dataset load_file_dataset(std::string_view spec) {
  DatasetReader reader(spec);
  Dataset dataset;
  dataset.description = reader.description();
  dataset.bytes.resize(reader.size());
  reader.read(0, dataset.bytes);
  return dataset;
}

}  // namespace

Dataset load_dataset(std::string_view spec) {
  std::string_view source = spec.substr(0, spec.find(':'));
  Dataset dataset;
  try {
    if (source == "synthetic")
      dataset = load_synthetic(spec);
    else if (DatasetReader::is_file_spec(spec))
      dataset = load_file_dataset(spec);
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

DatasetReader open_file_dataset(std::string_view spec) {
  try {
    return DatasetReader(spec);
  } catch (const Error& error) {
    fail("dataset '{}': {}", shown(spec), error.what());
  } catch (const std::bad_alloc&) {
    fail("dataset '{}': out of memory", shown(spec));
  }
}

struct Sha256Stream::Context {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
};

Sha256Stream::Sha256Stream() : context_(std::make_unique<Context>()) {
  if (!context_->md || EVP_DigestInit_ex(context_->md.get(), EVP_sha256(), nullptr) != 1)
    fail("sha256: OpenSSL EVP digest failed");
}

Sha256Stream::~Sha256Stream() = default;

void Sha256Stream::update(std::span<const std::byte> bytes) {
  if (EVP_DigestUpdate(context_->md.get(), bytes.data(), bytes.size()) != 1) fail("sha256: OpenSSL EVP digest failed");
}

std::string Sha256Stream::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->md.get(), digest.data(), &length) != 1) fail("sha256: OpenSSL EVP digest failed");
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string sha256_hex(std::span<const std::byte> bytes) {
  Sha256Stream digest;
  digest.update(bytes);
  return digest.hex();
}

}  // namespace wirezip::datasets
