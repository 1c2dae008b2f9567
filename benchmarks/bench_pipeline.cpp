// bench_pipeline: chunked compress -> transfer -> decompress, end to end, with and without
// compression and overlap; the raw baseline always in the same run.
//
//   bench_pipeline [--transport=tcp,mem] [--modes=raw,serial,overlap] [--codecs=SPEC,...]
//                  [--pages=4k,thp] [--chunks=1MiB,...] [--depth=8] [--workers=1]
//                  [--datasets=SPEC,...] [--window=SIZE] [--serve [--port=P] [--serve-decoder=NAME] | --peer=HOST[:PORT]]
//                  [--decoder=NAME]
//                  [--cpus=0-3]
//                  [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "context.hpp"
#include "failure_summary.hpp"
#include "help.hpp"
#include "link_flags.hpp"
#include "max_rss.hpp"
#include "mpi/mpi_pairs.hpp"
#include "pipeline_case.hpp"
#include "repeated_case.hpp"
#include "wake_probe.hpp"
#include "windowed_dataset.hpp"
#include "wirezip/codecs/container.hpp"
#include "wirezip/codecs/decoders.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/util/cpus.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace {

using namespace wirezip;
constexpr std::uint16_t kDefaultPort = 18516;
constexpr std::uint64_t kMaxDepth = 256;    // slots per side; each holds a whole chunk
constexpr std::uint64_t kMaxWorkers = 256;  // threads per side

struct Flags {
  harness::LinkFlags link;
  std::string modes = "raw,serial,overlap", codecs{codecs::kBestCodecSpec}, pages = "4k";
  std::string chunks = "1MiB", datasets{datasets::kDefaultDatasetSpec};
  std::size_t depth = 8;  // from depth_text, checked
  int workers = 1;        // from workers_text, checked
  std::string depth_text = "8", workers_text = "1";
  std::string decoder;        // sending side: the backend each --codecs spec asks the receiver for
  std::string serve_decoder;  // serving side: the backend every case is decoded with, whatever its spec
  std::string cpus;     // --cpus: the whole process runs on these CPUs; empty: no pinning
  std::string window_text;
  std::uint64_t window = 0;  // from window_text, checked
};

// Pins the whole process, before any thread exists: every thread created later (compression and
// decompression workers, transport threads, a serving side's threads) inherits the set, so all of
// them run on these CPUs. Per-thread placement within the set stays the kernel's choice.
std::string pin_process(const std::string& text) {
  const std::vector<int> list = cpus::parse("--cpus", text, cpus::allowed());
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : list) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) fail("sched_setaffinity(--cpus={}): {}", text, std::strerror(errno));
  return cpus::format(list);
}

// The sweep's axes, checked before any data set is made or case registered.
struct Axes {
  std::vector<rdma::TransportKind> transports;
  std::vector<pipeline::Mode> modes;
  std::vector<codecs::CodecSpec> codec_specs;
  std::vector<rdma::PagePolicy> pages;
  std::vector<std::uint64_t> chunks;
  std::vector<std::string> datasets;
};

std::string case_name(rdma::TransportKind t, pipeline::Mode m, const std::string& codec, rdma::PagePolicy p,
                      std::size_t chunk, const Flags& f, const std::string& dataset) {
  std::string label = dataset;
  std::replace(label.begin(), label.end(), '/', '_');
  return fmt::format("pipeline/{}/{}/{}/pages:{}/chunk:{}/depth:{}/workers:{}/{}", rdma::transport_name(t),
                     pipeline::mode_name(m), m == pipeline::Mode::raw ? "none" : codec, rdma::page_policy_name(p),
                     chunk, f.depth, f.workers, label);
}

// A serving side's decoder must be a built backend of some format; each case's codec is checked as
// it comes. `flag` is the flag it was given with.
void check_decoder(std::string_view flag, const std::string& name) {
  for (const codecs::DecoderInfo& d : codecs::list_decoders())
    if (d.name == name && d.built) return;
  for (const codecs::DecoderInfo& d : codecs::list_decoders())
    if (d.name == name) fail("{}={}: {}", flag, name, d.library);
  fail("{}={}: no such decoder (bench_codec --list-codecs lists them)", flag, name);
}

// The serving side's decoder: --serve-decoder, or --decoder given with --serve (its older
// spelling); empty when not serving or not asked.
std::string serving_decoder(const Flags& f) {
  if (!f.link.serve) return "";
  return f.serve_decoder.empty() ? f.decoder : f.serve_decoder;
}

// Every flag of the sweep in range; throws one line naming the flag.
Axes check_axes(const Flags& f) {
  Axes axes;
  axes.transports = f.link.transports({rdma::TransportKind::tcp, rdma::TransportKind::mem}).kinds;
  if (!f.serve_decoder.empty() && !f.link.serve) fail("--serve-decoder={}: needs --serve", f.serve_decoder);
  if (!f.serve_decoder.empty() && f.link.serve && !f.decoder.empty() && f.decoder != f.serve_decoder)
    fail("--decoder={} and --serve-decoder={}: with --serve they name the same choice", f.decoder, f.serve_decoder);
  if (const std::string serving = serving_decoder(f); !serving.empty())
    check_decoder(f.serve_decoder.empty() ? "--decoder" : "--serve-decoder", serving);
  if (!f.decoder.empty() && !f.link.serve) check_decoder("--decoder", f.decoder);
  // Loopback: the receiving side in this process grants a case what a server grants by default.
  const auto granted = pipeline::ServeLimits{}.max_timeout.count();
  if (f.link.peer.empty() && !f.link.serve && f.link.timeout_ms > granted)
    fail("--timeout-ms={}: over {} ms, the most the receiving side grants a case", f.link.timeout_ms, granted);
  for (const std::string& m : flag::list("--modes", f.modes)) axes.modes.push_back(pipeline::parse_mode(m));
  // The uncompressed baseline joins every run, so each result reads as compressed / raw.
  if (std::find(axes.modes.begin(), axes.modes.end(), pipeline::Mode::raw) == axes.modes.end())
    axes.modes.insert(axes.modes.begin(), pipeline::Mode::raw);
  std::stable_partition(axes.modes.begin(), axes.modes.end(),
                        [](pipeline::Mode m) { return m == pipeline::Mode::raw; });
  for (const std::string& text : flag::list("--codecs", f.codecs)) {
    codecs::CodecSpec spec = codecs::parse_codec_spec(text);  // bad specs fail up front
    // Sending side: ask for the decoder in each spec (the receiver builds its codec from the spec,
    // so a loopback run, or a server without its own --serve-decoder, decodes with it).
    axes.codec_specs.push_back(!f.decoder.empty() && !f.link.serve ? spec.with_decoder(f.decoder) : std::move(spec));
  }
  for (const std::string& p : flag::list("--pages", f.pages)) axes.pages.push_back(rdma::parse_page_policy(p));
  axes.chunks = flag::sizes("--chunks", f.chunks, 1, codecs::ContainerLimits{}.max_chunk);  // as wirezip --chunk
  axes.datasets = flag::spec_list("--datasets", f.datasets);
  return axes;
}

// Registers raw first, then every codec in serial and overlap, for each transport x pages x chunk x data set.
void register_cases(harness::PipelineLinks& links, const Flags& f, const Axes& axes,
                    const std::deque<harness::RunDataset>& data) {
  const auto& [transports, modes, codec_specs, pages, chunks, dataset_specs] = axes;
  std::uint32_t seed = 1;
  for (rdma::TransportKind transport : transports)
    for (rdma::PagePolicy policy : pages)
      for (std::uint64_t chunk : chunks)
        for (const harness::RunDataset& dataset : data)
          for (pipeline::Mode mode : modes)
            for (const codecs::CodecSpec& spec : codec_specs) {
              if (mode == pipeline::Mode::raw && spec != codec_specs.front()) continue;  // one raw case
              // Raw moves no codec's frames: it gets a link of its own size, not the first codec's.
              const codecs::CodecSpec codec = mode == pipeline::Mode::raw ? codecs::CodecSpec() : spec;
              harness::PipelineCase c{&links, seed++, transport, policy,
                                      pipeline::Config{mode, codec, chunk, f.depth, f.workers, links.base.timeout},
                                      &dataset, f.window};
              harness::register_case(case_name(transport, mode, spec.text(), policy, chunk, f, dataset.data.spec),
                                     [c](benchmark::State& state) { harness::run_pipeline_case(state, c); })
                  ->UseManualTime()
                  ->Unit(benchmark::kMillisecond)
                  ->Setup(harness::reset_case_peak);
            }
}

int run(int argc, char** argv, const Flags& f) {
  const Axes axes = check_axes(f);
  if (f.link.serve) {
    if (axes.transports.size() != 1) fail("--serve takes exactly one --transport");
    const int served = harness::serve_pipelines(axes.transports.front(), f.link, serving_decoder(f));
    fmt::print("bench_pipeline: served {} link(s), done\n", served);
    return 0;
  }
  harness::PipelineLinks links;
  links.base = f.link.options();
  if (!f.link.peer.empty()) std::tie(links.peer_host, links.peer_port) = rdma::parse_host_port(f.link.peer, kDefaultPort);

  std::deque<harness::RunDataset> data;  // deque: cases point at its elements
  for (const std::string& spec : axes.datasets) data.push_back(harness::load_run_dataset(spec, f.window, {}));
  for (const harness::RunDataset& d : data) harness::add_dataset_context(d, f.window);
  harness::add_host_context(argc, argv);
  harness::add_memory_context(f.window);  // the peak so far: loading the data sets
  if (!f.cpus.empty()) benchmark::AddCustomContext("cpus", f.cpus);
  benchmark::AddCustomContext("wake_latency", harness::wake_latency_context(cpus::allowed()));  // after --cpus
  benchmark::AddCustomContext("wake_latency_awake",
                              harness::wake_latency_context(cpus::allowed(), harness::SleeperCpu::kept_awake));
  harness::add_link_context(links.peer_host, links.peer_port);
  const auto& kinds = axes.transports;
  if (links.peer_host) harness::add_server_context(kinds.front(), links.base, *links.peer_host, links.peer_port);
  if (std::find(kinds.begin(), kinds.end(), rdma::TransportKind::verbs) != kinds.end()) harness::add_verbs_context(f.link.device);
  register_cases(links, f, axes, data);
  const harness::CaseOutcome outcome = harness::run_cases();
  links.finish();
  return harness::exit_status("bench_pipeline", outcome);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto status = harness::print_version_if_asked("bench_pipeline", argc, argv)) return *status;
  if (auto status = harness::initialize_benchmark("bench_pipeline", argc, argv)) return *status;
  CLI::App app{"bench_pipeline: end-to-end rate of original bytes through chunked compress -> transfer -> decompress.\n"
               "Google Benchmark's --benchmark_* flags are accepted too."};
  Flags f;
  harness::add_link_flags(app, f.link, kDefaultPort,
                          "transports, comma-separated (default: verbs when a device exists, else tcp,mem)");
  app.add_option("--modes", f.modes, "raw, serial, overlap (raw is always added)")->capture_default_str();
  app.add_option("--codecs", f.codecs, "codec specs for serial and overlap")->capture_default_str();
  app.add_option("--pages", f.pages, "page policies of both link buffers: 4k, thp, hugetlb")->capture_default_str();
  app.add_option("--chunks", f.chunks, "chunk sizes")->capture_default_str();
  app.add_option("--depth", f.depth_text, "slots on each side (writes in flight), 1..256")->capture_default_str();
  app.add_option("--workers", f.workers_text, "compression threads and decompression threads")->capture_default_str();
  app.add_option("--datasets", f.datasets, "dataset specs")->capture_default_str();
  app.add_option("--window", f.window_text, "file data sets larger than this are sent this many bytes at a time "
                 "(rounded down to whole chunks), each window's runs timed and its I/O not; default min(1GiB, RAM/8)");
  app.add_option("--decoder", f.decoder,
                 "sending side: the decoder backend (isal, libdeflate, zlib, lz4, doca) set in each --codecs spec, "
                 "which the receiver decodes with; given with --serve, it means --serve-decoder");
  app.add_option("--serve-decoder", f.serve_decoder,
                 "serving side (--serve): decode every case with this backend, overriding the spec each sender "
                 "sends (the wire and the chunks' codec tag stay the sender's)");
  app.add_option("--cpus", f.cpus,
                 "run the whole process (codec workers and transport threads alike) on these CPUs, e.g. 0-3 "
                 "or 2,4,6; set before any thread starts, so host_cpus in the context counts them");
  harness::MpiPairFlags mpi;
  harness::add_mpi_pair_flags(app, mpi);
  harness::add_help_footer(app, "bench_pipeline --transport=tcp --codecs=bytegroup:split=exponent+huff --chunks=1MiB --benchmark_out=pipeline.json");
  if (auto status = harness::parse_command_line(app, "bench_pipeline", argc, argv)) return *status;
  return harness::run_reporting_errors("bench_pipeline", [&] {
    f.depth = flag::count("--depth", f.depth_text, 1, kMaxDepth);
    f.workers = static_cast<int>(flag::count("--workers", f.workers_text, 1, kMaxWorkers));
    f.window = harness::window_from_flag(f.window_text);
    if (!f.cpus.empty()) f.cpus = pin_process(f.cpus);  // f.cpus now as the context records it
    if (!mpi.enabled) return run(argc, argv, f);
    // mpirun -np 2N: this rank's side of one pair is this binary's own run()
    return harness::run_mpi_pairs("bench_pipeline", mpi, f.link, [&](const harness::LinkFlags& link) {
      auto side = f;
      side.link = link;
      return run(argc, argv, side);
    });
  });
}
