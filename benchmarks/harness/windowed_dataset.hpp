#pragma once
// A data set as a benchmark run holds it: in memory (synthetic, or a file no larger than the
// window), or a file read window by window (dataset_reader.hpp) with the figures one pass over it
// found. bench_codec and bench_pipeline load their data sets, and state them and the window in
// the context, through here.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "window_facts.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/dataset_reader.hpp"

namespace wirezip::harness {

struct RunDataset {
  datasets::Dataset data;  // spec and description; the bytes unless windowed
  std::unique_ptr<datasets::DatasetReader> reader;  // set: windowed
  WindowFacts facts;                                // windowed: digest, and bounds per chunk size

  std::uint64_t size() const { return reader ? reader->size() : data.bytes.size(); }
  // Stream bytes [offset, offset + out.size()) into `out`: read from the file, or copied.
  void read(std::uint64_t offset, std::span<std::byte> out) const;
};

// --window: SIZE (at least one byte), or the default (datasets::default_window_bytes) when empty.
std::uint64_t window_from_flag(const std::string& text);

// A file data set larger than `window` stays on disk; everything else is loaded whole. The pass
// over a windowed one finds its digest and the order-0 bounds of each of `chunks` (none: the
// digest alone).
RunDataset load_run_dataset(const std::string& spec, std::uint64_t window, const std::vector<std::uint64_t>& chunks);

// Context lines of a data set: dataset:SPEC, dataset_sha256:SPEC, and dataset_windowed:SPEC when
// it is read by windows.
void add_dataset_context(const RunDataset& run, std::uint64_t window);

// Context lines of memory: window_bytes, max_rss_bytes (the peak so far: loading the data sets)
// and max_rss_method. Call once, after loading, before any case.
void add_memory_context(std::uint64_t window);

}  // namespace wirezip::harness
