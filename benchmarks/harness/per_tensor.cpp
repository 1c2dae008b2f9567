#include "per_tensor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "context.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/safetensors.hpp"
#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using nlohmann::json;

struct SafetensorsSpec {
  std::string path, regex;
};

// safetensors:PATH[:tensors=REGEX], read as load_dataset reads it: the regex takes the rest.
SafetensorsSpec parse_safetensors_spec(const std::string& spec) {
  constexpr std::string_view kPrefix = "safetensors:", kTensors = ":tensors=";
  if (!spec.starts_with(kPrefix)) fail("--per-tensor: data set '{}' is not safetensors:PATH[:tensors=REGEX]", shown(spec));
  std::string rest = spec.substr(kPrefix.size());
  SafetensorsSpec out;
  if (const std::size_t at = rest.find(kTensors); at != std::string::npos) {
    out.regex = rest.substr(at + kTensors.size());
    rest.resize(at);
  }
  if (rest.empty() || rest.find(':') != std::string::npos)
    fail("--per-tensor: data set '{}' is not safetensors:PATH[:tensors=REGEX]", shown(spec));
  out.path = rest;
  return out;
}

// A bound or ratio as JSON: null where it is not a finite number.
json finite_or_null(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

// Compresses the tensor chunk by chunk and restores every chunk; returns the compressed bytes.
std::uint64_t compressed_size(codecs::Codec& codec, std::span<const std::byte> tensor, std::size_t chunk,
                              std::vector<std::byte>& frame, std::vector<std::byte>& restored) {
  std::uint64_t total = 0;
  for (std::size_t at = 0; at < tensor.size(); at += chunk) {
    const auto piece = tensor.subspan(at, std::min(chunk, tensor.size() - at));
    frame.resize(codec.max_compressed_size(piece.size()));
    const std::size_t size = codec.compress(piece, frame);
    restored.resize(piece.size());
    codec.decompress(std::span(frame).first(size), restored);
    if (!std::equal(piece.begin(), piece.end(), restored.begin()))
      fail("{}: round trip mismatch in the chunk at byte {} of a tensor", codec.spec(), at);
    total += size;
  }
  return total;
}

// One record a line behind the previous one; a stream that cannot be written ends the run now,
// not after millions of records.
class RecordWriter {
 public:
  explicit RecordWriter(std::ostream& out) : out_(out) {}
  void write(const json& record) {
    out_ << (count_ ? ",\n" : "\n") << record.dump();
    if (!out_) fail("--per-tensor-out: write failed after {} records", count_);
    ++count_;
  }
  std::uint64_t count() const { return count_; }

 private:
  std::ostream& out_;
  std::uint64_t count_ = 0;
};

// Writes the records of one data set; returns its context lines.
json add_records(const PerTensorConfig& config, const std::string& spec, RecordWriter& writer) {
  const SafetensorsSpec where = parse_safetensors_spec(spec);
  datasets::SafetensorsSelection selection;
  try {
    selection = datasets::read_safetensors_bf16(where.path, where.regex);
  } catch (const Error& e) {
    fail("dataset '{}': {}", shown(spec), e.what());
  }
  json context = {{"dataset:" + spec, fmt::format("safetensors {}: {} of {} tensors as bf16", where.path,
                                                  selection.selected.size(), selection.header.tensors.size())},
                  {"dataset_sha256:" + spec, datasets::sha256_hex(selection.bf16)}};

  std::vector<std::unique_ptr<codecs::Codec>> codecs;
  for (const codecs::CodecSpec& c : config.codecs) codecs.push_back(c.make());
  std::vector<std::byte> frame, restored;
  std::size_t offset = 0;
  for (std::size_t index : selection.selected) {
    const datasets::SafetensorsTensor& tensor = selection.header.tensors[index];
    std::uint64_t elements = 1;
    json shape = json::array();
    for (std::uint64_t d : tensor.shape) {
      elements = checked_mul(elements, d, "tensor elements");
      shape.push_back(d);
    }
    const std::size_t bytes = checked_mul(elements, 2, "tensor bytes");
    if (checked_add(offset, bytes, "tensor offset") > selection.bf16.size())
      fail("dataset '{}': tensor '{}' runs past the converted data", spec, tensor.name);
    const std::span<const std::byte> data = std::span(selection.bf16).subspan(offset, bytes);
    offset += bytes;
    for (std::uint64_t chunk : config.chunks) {
      json record = {{"dataset", spec},
                     {"name", tensor.name},
                     {"dtype", tensor.dtype},
                     {"shape", shape},
                     {"elements", elements},
                     {"bf16_bytes", bytes},
                     {"chunk", chunk},
                     {"entropy_bound_ratio", finite_or_null(codecs::entropy_bound_ratio(data, 2, chunk))},
                     {"entropy_bound_ratio_bytes", finite_or_null(codecs::entropy_bound_ratio(data, 1, chunk))}};
      for (auto& codec : codecs) {
        const std::uint64_t size = compressed_size(*codec, data, chunk, frame, restored);
        record["codecs"][codec->spec()] = {
            {"compressed_bytes", size},
            {"ratio", size ? json(static_cast<double>(bytes) / static_cast<double>(size)) : json(nullptr)}};
      }
      writer.write(record);
    }
  }
  if (offset != selection.bf16.size())
    fail("dataset '{}': the tensors' shapes cover {} of the {} converted bytes", spec, offset, selection.bf16.size());
  return context;
}

}  // namespace

void check_per_tensor_datasets(const std::vector<std::string>& datasets) {
  for (const std::string& spec : datasets) parse_safetensors_spec(spec);
}

std::uint64_t write_per_tensor_records(const PerTensorConfig& config, const json& context, std::ostream& out) {
  json all = context;
  for (const auto& [key, value] : host_facts()) all[key] = value;
  for (const codecs::CodecSpec& c : config.codecs) all["codecs"].push_back(c.text());
  all["chunks"] = config.chunks;
  out << "{\"tensors\": [";
  RecordWriter writer(out);
  for (const std::string& spec : config.datasets) all.update(add_records(config, spec, writer));
  out << "\n],\n\"context\": " << all.dump(1) << "}\n";
  if (!out.flush()) fail("--per-tensor-out: write failed after {} records", writer.count());
  return writer.count();
}

}  // namespace wirezip::harness
