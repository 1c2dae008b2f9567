#include "windowed_dataset.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>

#include "max_rss.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace wirezip::harness {

void RunDataset::read(std::uint64_t offset, std::span<std::byte> out) const {
  if (reader) return reader->read(offset, out);
  if (offset > data.bytes.size() || out.size() > data.bytes.size() - offset)
    fail("data set '{}': {} bytes at {} run past its {} bytes", data.spec, out.size(), offset, data.bytes.size());
  std::copy_n(data.bytes.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
}

std::uint64_t window_from_flag(const std::string& text) {
  return text.empty() ? datasets::default_window_bytes() : flag::size("--window", text, 1);
}

RunDataset load_run_dataset(const std::string& spec, std::uint64_t window, const std::vector<std::uint64_t>& chunks) {
  RunDataset out;
  if (!datasets::DatasetReader::is_file_spec(spec)) {
    out.data = datasets::load_dataset(spec);
    return out;
  }
  out.reader = std::make_unique<datasets::DatasetReader>(datasets::open_file_dataset(spec));
  out.data.spec = spec;
  out.data.description = out.reader->description();
  if (out.reader->size() <= window) {  // fits: held whole, as a synthetic data set is
    out.data.bytes.resize(out.reader->size());
    out.reader->read(0, out.data.bytes);
    out.reader.reset();
    return out;
  }
  // Before the pass over the whole file, not per case after it: no case could read such a chunk.
  for (std::uint64_t chunk : chunks)
    if (chunk > window)
      fail("--window={} cannot hold one {}-byte chunk of '{}' ({} bytes, read a window at a time)", window, chunk,
           shown(spec), out.reader->size());
  out.facts = window_facts(*out.reader, window, chunks);
  return out;
}

void add_dataset_context(const RunDataset& run, std::uint64_t window) {
  const std::string& spec = run.data.spec;
  benchmark::AddCustomContext("dataset:" + spec, run.data.description);
  benchmark::AddCustomContext("dataset_sha256:" + spec, run.reader ? run.facts.sha256 : datasets::sha256_hex(run.data.bytes));
  if (run.reader)
    benchmark::AddCustomContext("dataset_windowed:" + spec,
                                fmt::format("{} bytes read by windows of at most {} bytes", run.reader->size(), window));
}

void add_memory_context(std::uint64_t window) {
  benchmark::AddCustomContext("window_bytes", std::to_string(window));
  // Read before max_rss_method(), whose first call resets the mark to find out whether the kernel
  // allows it.
  if (const auto peak = peak_rss_bytes()) benchmark::AddCustomContext("max_rss_bytes", std::to_string(*peak));
  benchmark::AddCustomContext("max_rss_method", max_rss_method());
}

}  // namespace wirezip::harness
