// bench_codec: codecs alone. Ratio and throughput in original bytes for every codec x data set x
// chunk size x thread count, compress and decompress, each round trip verified outside the timing.
//
//   bench_codec [--codecs=SPEC,...] [--datasets=SPEC,...] [--chunks=1MiB,...] [--threads=1,2|all]
//               [--cpus=0-15] [--window=SIZE]
//               [--list-codecs] [--benchmark_* flags of Google Benchmark]
//   bench_codec --per-tensor [--per-tensor-out=FILE] --datasets=safetensors:PATH [--codecs=...] [--chunks=...]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <iostream>
#include <optional>

#include "codec_case.hpp"
#include "context.hpp"
#include "failure_summary.hpp"
#include "help.hpp"
#include "instruction_counter.hpp"
#include "max_rss.hpp"
#include "per_tensor.hpp"
#include "repeated_case.hpp"
#include "windowed_dataset.hpp"
#include "wirezip/codecs/container.hpp"
#include "wirezip/codecs/decoders.hpp"
#include "wirezip/codecs/entropy.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/cpus.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace {

using namespace wirezip;
constexpr std::uint64_t kMaxThreads = 1024;  // far past any host here: a larger count is a typo

struct Config {
  std::vector<codecs::CodecSpec> codecs;
  std::vector<std::string> datasets;
  std::vector<std::uint64_t> chunks;
  std::vector<int> threads;
  std::vector<int> cpus;  // --cpus, in the order given; empty: no pinning
};

Config parse_config(const std::string& codecs, const std::string& datasets, const std::string& chunks,
                    const std::string& threads, const std::string& cpu_list, bool per_tensor) {
  Config config;
  std::vector<std::string> specs = codecs.empty() ? codecs::default_codec_specs() : flag::list("--codecs", codecs);
  // memcpy is the ceiling every other codec is read against (vs_memcpy), so it is always in a timed
  // run, and first: its rates must be known when the other cases report.
  if (!per_tensor) {
    std::erase(specs, "memcpy");
    specs.insert(specs.begin(), "memcpy");
  }
  for (const std::string& spec : specs) config.codecs.push_back(codecs::parse_codec_spec(spec));  // bad ones fail now
  config.datasets = flag::spec_list("--datasets", datasets);
  config.chunks = flag::sizes("--chunks", chunks, 1, codecs::ContainerLimits{}.max_chunk);  // as wirezip --chunk
  const std::vector<int> allowed = cpus::allowed();
  if (!cpu_list.empty()) config.cpus = cpus::parse("--cpus", cpu_list, allowed);
  if (threads == "all") {  // a scaling sweep over the CPUs the threads may use
    config.threads = cpus::doubling_up_to(static_cast<int>(config.cpus.empty() ? allowed.size() : config.cpus.size()));
    return config;
  }
  for (std::uint64_t count : flag::counts("--threads", threads, 1, kMaxThreads))
    config.threads.push_back(static_cast<int>(count));
  return config;
}

void print_codec_list() {
  fmt::print("{:<38} {:<28} {}\n", "spec", "library", "what it is");
  for (const codecs::CodecInfo& info : codecs::list_codecs())
    fmt::print("{:<38} {:<28} {}\n", info.spec, info.library, info.description);
  // The codec table itself: every form with its options' ranges and defaults.
  fmt::print("\n{:<62} {:<17} {:<28} {}\n", "form", "role", "library", "decoder= backends");
  for (const codecs::CodecForm& row : codecs::codec_forms())
    fmt::print("{:<62} {:<17} {:<28} {}\n", row.form, row.role, row.library, fmt::join(row.decoders, ", "));
  // The decoder seam: who can decode the standard streams in lz4, igzip and deflate planes.
  fmt::print("\n{:<12} {:<8} {}\n", "decoder=", "format", "library");
  std::vector<std::string> missing;
  for (const codecs::DecoderInfo& d : codecs::list_decoders()) {
    if (d.built)
      fmt::print("{:<12} {:<8} {}\n", d.name, codecs::stream_format_name(d.format), d.library);
    else if (std::find(missing.begin(), missing.end(), d.name) == missing.end())
      fmt::print("{}: {}\n", d.name, d.library), missing.push_back(d.name);
  }
}

// --per-tensor: the records of every tensor, as JSON to `out` ("-": stdout), each written as it is
// made; no timed cases.
int run_per_tensor(const Config& config, std::uint64_t window, const std::string& out, int argc, char** argv) {
  harness::check_per_tensor_datasets(config.datasets);
  std::vector<std::string> args(argv, argv + argc);
  const nlohmann::json context = {{"argv", fmt::format("{}", fmt::join(args, " "))}};
  const harness::PerTensorConfig per_tensor{config.codecs, config.chunks, config.datasets, window};
  if (out == "-") {
    harness::write_per_tensor_records(per_tensor, context, std::cout);
    return 0;
  }
  std::ofstream file(out);
  if (!file) fail("--per-tensor-out: cannot create '{}'", out);
  const std::uint64_t records = harness::write_per_tensor_records(per_tensor, context, file);
  fmt::print("bench_codec: {} per-tensor records in {}\n", records, out);
  return 0;
}

// Names read family/axis:value so --benchmark_filter can select any slice.
std::string case_name(const std::string& codec, const std::string& dataset, std::uint64_t chunk,
                      harness::Direction direction) {
  std::string label = dataset;
  std::replace(label.begin(), label.end(), '/', '_');  // paths must not add name levels
  return fmt::format("codec/{}/{}/chunk:{}/{}", codec, label, chunk,
                     direction == harness::Direction::compress ? "compress" : "decompress");
}

// The exponent split's format for a data set's element width; nullopt where no float format fits.
std::optional<codecs::FloatFormat> float_format(std::size_t width) {
  if (width == 2) return codecs::FloatFormat::bf16;  // the data sets hold bf16 (datasets/README.md)
  if (width == 4) return codecs::FloatFormat::fp32;
  return std::nullopt;
}

void register_cases(const Config& config, const std::deque<harness::RunDataset>& data, std::uint64_t window) {
  auto ceiling = std::make_shared<harness::MemcpyCeiling>();
  for (const harness::RunDataset& run : data) {
    const datasets::Dataset& dataset = run.data;
    harness::add_dataset_context(run, window);
    for (std::uint64_t chunk : config.chunks) {
      double bound = 0, exponent_bound = 0, value_bound = 0;
      if (run.reader) {  // bf16: every bound applies
        const harness::ChunkBounds& b = run.facts.bounds.at(chunk);
        bound = b.entropy, exponent_bound = b.exponent, value_bound = b.value;
      } else {
        bound = codecs::entropy_bound_ratio(dataset.bytes, dataset.element_width, chunk);
        const auto format = float_format(dataset.element_width);
        exponent_bound = format ? codecs::exponent_bound_ratio(dataset.bytes, *format, chunk) : NAN;
        value_bound = dataset.element_width == 2 ? codecs::value_bound_ratio(dataset.bytes, chunk) : NAN;
      }
      for (const codecs::CodecSpec& spec : config.codecs) {
        for (auto direction : {harness::Direction::compress, harness::Direction::decompress}) {
          harness::CodecCase c{.codec_spec = spec, .dataset = &dataset, .chunk_bytes = chunk,
                               .direction = direction, .entropy_bound_ratio = bound,
                               .exponent_bound_ratio = exponent_bound, .value_bound_ratio = value_bound,
                               .ceiling = ceiling, .cpus = config.cpus};
          c.reader = run.reader.get();
          c.window_bytes = window;
          auto* bench = harness::register_case(
              case_name(spec.text(), dataset.spec, chunk, direction),
              [c](benchmark::State& state) { harness::run_codec_case(state, c); });
          bench->UseManualTime();  // the wall time of all threads, see harness::IterationWallClock
          bench->Setup(harness::reset_case_peak);
          for (int t : config.threads) bench->Threads(t);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (auto status = harness::print_version_if_asked("bench_codec", argc, argv)) return *status;
  if (auto status = harness::initialize_benchmark("bench_codec", argc, argv)) return *status;
  CLI::App app{"bench_codec: ratio and throughput (original bytes) of lossless codecs on bf16 traffic.\n"
               "Google Benchmark's --benchmark_* flags are accepted too."};
  std::string codec_list, dataset_list{datasets::kDefaultDatasetSpec}, chunk_list = "1MiB", thread_list = "1", cpu_list;
  bool list_codecs = false, per_tensor = false;
  std::string per_tensor_out = "-", window_text;
  app.add_option("--codecs", codec_list, "codec specs, comma-separated (default: memcpy, every family, peers)");
  app.add_option("--datasets", dataset_list, "dataset specs, comma-separated")->capture_default_str();
  app.add_option("--chunks", chunk_list, "chunk sizes; each chunk is compressed on its own")->capture_default_str();
  app.add_option("--threads", thread_list, "thread counts to sweep, or 'all': 1, 2, 4, ... up to the CPUs allowed "
                 "(or in --cpus), that count included")->capture_default_str();
  app.add_option("--cpus", cpu_list, "pin thread i to the i-th CPU of this list, modulo its length (e.g. 0-15 or "
                 "2,4,6); each CPU must be one this process may run on");
  app.add_option("--window", window_text, "file data sets larger than this are read, coded and checked this many "
                 "bytes at a time (rounded down to whole chunks per thread); default min(1GiB, RAM/8)");
  app.add_flag("--list-codecs", list_codecs, "print representative specs, the codec table (forms, options, libraries) and the decoders, then exit");
  app.add_flag("--per-tensor", per_tensor,
               "instead of timed cases: ratio and bounds of each tensor of safetensors data sets, as JSON");
  app.add_option("--per-tensor-out", per_tensor_out, "--per-tensor: the JSON file (- for stdout)")->capture_default_str();
  harness::add_help_footer(app, "bench_codec --codecs=memcpy,bytegroup:split=exponent+huff,lz4 --datasets=synthetic:weights:size=64MiB --chunks=1MiB --benchmark_out=codec.json");
  if (auto status = harness::parse_command_line(app, "bench_codec", argc, argv)) return *status;
  if (list_codecs) {
    print_codec_list();
    return 0;
  }

  return harness::run_reporting_errors("bench_codec", [&] {
    std::deque<harness::RunDataset> data;  // deque: cases keep pointers to its elements
    Config config = parse_config(codec_list, dataset_list, chunk_list, thread_list, cpu_list, per_tensor);
    const std::uint64_t window = harness::window_from_flag(window_text);
    if (per_tensor) return run_per_tensor(config, window, per_tensor_out, argc, argv);
    for (const std::string& spec : config.datasets) data.push_back(harness::load_run_dataset(spec, window, config.chunks));
    harness::add_host_context(argc, argv);
    harness::add_memory_context(window);  // the peak so far: loading the data sets, and the pass over windowed ones
    // instructions_per_byte is in every case where the PMU counts, and absent (with the reason
    // here) where it does not: a zero would read as a measurement.
    const std::string& no_counter = harness::InstructionCounter::unavailable_reason();
    benchmark::AddCustomContext("instructions", no_counter.empty() ? "perf_event_open, user space" : "unavailable: " + no_counter);
    if (!config.cpus.empty()) benchmark::AddCustomContext("cpus", cpus::format(config.cpus));
    register_cases(config, data, window);
    return harness::exit_status("bench_codec", harness::run_cases());
  });
}
