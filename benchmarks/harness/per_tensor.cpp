#include "per_tensor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>

#include "context.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/dataset_reader.hpp"
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

// Compresses a piece of a tensor (starting at byte `offset` of it) chunk by chunk and restores every
// chunk; returns the compressed bytes.
std::uint64_t compressed_size(codecs::Codec& codec, std::span<const std::byte> piece, std::uint64_t offset,
                              std::size_t chunk, std::vector<std::byte>& frame, std::vector<std::byte>& restored) {
  std::uint64_t total = 0;
  for (std::size_t at = 0; at < piece.size(); at += chunk) {
    const auto data = piece.subspan(at, std::min(chunk, piece.size() - at));
    frame.resize(codec.max_compressed_size(data.size()));
    const std::size_t size = codec.compress(data, frame);
    restored.resize(data.size());
    const std::size_t back = codec.decompress(std::span(frame).first(size), restored);
    if (back != data.size() || !std::equal(data.begin(), data.end(), restored.begin()))
      fail("{}: round trip mismatch in the chunk at byte {} of a tensor", codec.spec(), offset + at);
    total += size;
  }
  return total;
}

// The piece a tensor is read in: the window rounded down to a whole number of every chunk size
// (and of 2), but at least one of each, so every chunk lies in one piece and the figures are those
// of the whole tensor.
std::uint64_t piece_bytes(const PerTensorConfig& config) {
  std::uint64_t unit = 2;
  for (std::uint64_t chunk : config.chunks)
    unit = checked_mul(unit / std::gcd(unit, chunk), chunk, "the least common multiple of the chunk sizes");
  // The piece is what memory holds of a tensor: never more than the window.
  if (unit > config.window_bytes)
    fail(
        "--per-tensor: a piece must hold a whole number of every chunk size, {} bytes, which is over "
        "--window={} (choose chunk sizes that divide one another, or a larger window)",
        unit, config.window_bytes);
  return config.window_bytes / unit * unit;
}

// What the pieces of one tensor add up to, per chunk size: the bounds' coded bits and each codec's
// compressed bytes.
struct TensorTotals {
  std::vector<double> plane_bits, byte_bits;
  std::vector<std::vector<std::uint64_t>> compressed;  // [chunk][codec]
  void clear(std::size_t chunks, std::size_t codecs) {
    plane_bits.assign(chunks, 0);
    byte_bits.assign(chunks, 0);
    compressed.assign(chunks, std::vector<std::uint64_t>(codecs, 0));
  }
};

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

// Writes the records of one data set, a tensor at a time (its files, when PATH is a glob, in the
// order a benchmark streams them); returns its context lines.
json add_records(const PerTensorConfig& config, const std::string& spec, RecordWriter& writer) {
  const SafetensorsSpec where = parse_safetensors_spec(spec);
  std::vector<std::unique_ptr<codecs::Codec>> codecs;
  for (const codecs::CodecSpec& c : config.codecs) codecs.push_back(c.make());
  std::vector<std::byte> frame, restored;
  datasets::Sha256Stream digest;
  TensorTotals totals;
  const auto add_piece = [&](const datasets::StreamTensor& tensor) {
    const std::span<const std::byte> data = tensor.bf16;
    if (tensor.offset == 0) {
      std::uint64_t elements = 1;
      for (std::uint64_t d : tensor.entry.shape) elements = checked_mul(elements, d, "tensor elements");
      if (checked_mul(elements, 2, "tensor bytes") != tensor.bf16_bytes)
        fail("dataset '{}': tensor '{}' has {} elements in {} bf16 bytes", shown(spec), shown(tensor.entry.name),
             elements, tensor.bf16_bytes);
      totals.clear(config.chunks.size(), codecs.size());
    }
    digest.update(data);
    for (std::size_t i = 0; i < config.chunks.size(); ++i) {
      codecs::add_entropy_bound_bits(data, 2, config.chunks[i], totals.plane_bits[i]);
      codecs::add_entropy_bound_bits(data, 1, config.chunks[i], totals.byte_bits[i]);
      for (std::size_t k = 0; k < codecs.size(); ++k)
        totals.compressed[i][k] += compressed_size(*codecs[k], data, tensor.offset, config.chunks[i], frame, restored);
    }
    if (tensor.offset + data.size() < tensor.bf16_bytes) return;  // more pieces of this tensor to come
    json shape = json::array();
    for (std::uint64_t d : tensor.entry.shape) shape.push_back(d);
    for (std::size_t i = 0; i < config.chunks.size(); ++i) {
      json record = {
          {"dataset", spec},
          {"name", tensor.entry.name},
          {"dtype", tensor.entry.dtype},
          {"shape", shape},
          {"elements", tensor.bf16_bytes / 2},
          {"bf16_bytes", tensor.bf16_bytes},
          {"chunk", config.chunks[i]},
          {"entropy_bound_ratio", finite_or_null(codecs::bound_ratio_of_bits(tensor.bf16_bytes, totals.plane_bits[i]))},
          {"entropy_bound_ratio_bytes",
           finite_or_null(codecs::bound_ratio_of_bits(tensor.bf16_bytes, totals.byte_bits[i]))}};
      for (std::size_t k = 0; k < codecs.size(); ++k) {
        const std::uint64_t size = totals.compressed[i][k];
        record["codecs"][codecs[k]->spec()] = {
            {"compressed_bytes", size},
            {"ratio", size ? json(static_cast<double>(tensor.bf16_bytes) / static_cast<double>(size)) : json(nullptr)}};
      }
      writer.write(record);
    }
  };
  const datasets::TensorWalk walk =
      datasets::for_each_tensor(spec, add_piece, piece_bytes(config));  // its errors name the file
  const std::string files = walk.files == 1 ? "" : fmt::format(" ({} files)", walk.files);
  return {{"dataset:" + spec,
           fmt::format("safetensors {}{}: {} of {} tensors as bf16", where.path, files, walk.selected, walk.total)},
          {"dataset_sha256:" + spec, digest.hex()}};
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
