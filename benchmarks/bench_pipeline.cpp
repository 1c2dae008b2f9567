// bench_pipeline: chunked compress -> transfer -> decompress, end to end, with and without
// compression and overlap; the raw baseline always in the same run.
//
//   bench_pipeline [--transport=tcp,mem] [--modes=raw,serial,overlap] [--codecs=SPEC,...]
//                  [--pages=4k,thp] [--chunks=1MiB,...] [--depth=8] [--workers=1]
//                  [--datasets=SPEC,...] [--serve [--port=P] | --peer=HOST[:PORT]] [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <deque>

#include "context.hpp"
#include "link_flags.hpp"
#include "mpi_pairs.hpp"
#include "pipeline_case.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/size.hpp"

namespace {

using namespace wirezip;
constexpr std::uint16_t kDefaultPort = 18516;

struct Flags {
  harness::LinkFlags link;
  std::string modes = "raw,serial,overlap", codecs{codecs::kBestCodecSpec}, pages = "4k";
  std::string chunks = "1MiB", datasets{datasets::kDefaultDatasetSpec};
  std::size_t depth = 8;
  int workers = 1;
};

std::vector<rdma::TransportKind> choose_transports(const std::string& flag) {
  std::vector<rdma::TransportKind> kinds;
  if (flag.empty()) {
    if (rdma::verbs_available()) return {rdma::TransportKind::verbs};
    return {rdma::TransportKind::tcp, rdma::TransportKind::mem};
  }
  for (const std::string& t : harness::parse_list("--transport", flag)) kinds.push_back(rdma::parse_transport(t));
  return kinds;
}

std::string case_name(rdma::TransportKind t, pipeline::Mode m, const std::string& codec, rdma::PagePolicy p,
                      std::size_t chunk, const Flags& f, const std::string& dataset) {
  std::string label = dataset;
  std::replace(label.begin(), label.end(), '/', '_');
  return fmt::format("pipeline/{}/{}/{}/pages:{}/chunk:{}/depth:{}/workers:{}/{}", rdma::transport_name(t),
                     pipeline::mode_name(m), m == pipeline::Mode::raw ? "none" : codec, rdma::page_policy_name(p),
                     chunk, f.depth, f.workers, label);
}

// Registers raw first, then every codec in serial and overlap, for each transport x pages x chunk x data set.
void register_cases(harness::PipelineLinks& links, const Flags& f, const std::deque<datasets::Dataset>& data) {
  std::vector<pipeline::Mode> modes;
  for (const std::string& m : harness::parse_list("--modes", f.modes)) modes.push_back(pipeline::parse_mode(m));
  // The uncompressed baseline joins every run, so each result reads as compressed / raw.
  if (std::find(modes.begin(), modes.end(), pipeline::Mode::raw) == modes.end()) modes.insert(modes.begin(), pipeline::Mode::raw);
  std::stable_partition(modes.begin(), modes.end(), [](pipeline::Mode m) { return m == pipeline::Mode::raw; });
  const auto codec_specs = harness::parse_list("--codecs", f.codecs);
  for (const std::string& spec : codec_specs) codecs::make_codec(spec);  // bad specs fail before any case runs
  std::vector<rdma::PagePolicy> pages;
  for (const std::string& p : harness::parse_list("--pages", f.pages)) pages.push_back(rdma::parse_page_policy(p));
  std::vector<std::uint64_t> chunks;
  try {
    chunks = parse_size_list(f.chunks);
  } catch (const Error& e) {
    fail("--chunks: {}", e.what());
  }

  std::uint32_t seed = 1;
  for (rdma::TransportKind transport : choose_transports(f.link.transport))
    for (rdma::PagePolicy policy : pages)
      for (std::uint64_t chunk : chunks)
        for (const datasets::Dataset& dataset : data)
          for (pipeline::Mode mode : modes)
            for (const std::string& spec : codec_specs) {
              if (mode == pipeline::Mode::raw && spec != codec_specs.front()) continue;  // one raw case
              // Raw moves no codec's frames: it gets a link of its own size, not the first codec's.
              const std::string codec = mode == pipeline::Mode::raw ? "" : spec;
              harness::PipelineCase c{&links, seed++, transport, policy,
                                      pipeline::Config{mode, codec, chunk, f.depth, f.workers, links.base.timeout},
                                      &dataset};
              benchmark::RegisterBenchmark(case_name(transport, mode, spec, policy, chunk, f, dataset.spec).c_str(),
                                           [c](benchmark::State& state) { harness::run_pipeline_case(state, c); })
                  ->UseManualTime()
                  ->Unit(benchmark::kMillisecond);
            }
}

int run(int argc, char** argv, const Flags& f) {
  if (f.depth == 0 || f.workers <= 0) fail("--depth and --workers must be positive");
  if (f.link.serve) {
    const auto kinds = choose_transports(f.link.transport);
    if (kinds.size() != 1) fail("--serve takes exactly one --transport");
    const int served = harness::serve_pipelines(kinds.front(), f.link);
    fmt::print("bench_pipeline: served {} link(s), done\n", served);
    return 0;
  }
  harness::PipelineLinks links;
  links.base = f.link.options();
  if (!f.link.peer.empty()) std::tie(links.peer_host, links.peer_port) = rdma::parse_host_port(f.link.peer, kDefaultPort);

  std::deque<datasets::Dataset> data;  // deque: cases point at its elements
  for (const std::string& spec : harness::parse_list("--datasets", f.datasets)) data.push_back(datasets::load_dataset(spec));
  for (const datasets::Dataset& d : data) {
    benchmark::AddCustomContext("dataset:" + d.spec, d.description);
    benchmark::AddCustomContext("dataset_sha256:" + d.spec, datasets::sha256_hex(d.bytes));
  }
  harness::add_host_context(argc, argv);
  harness::add_link_context(links.peer_host, links.peer_port);
  const auto kinds = choose_transports(f.link.transport);
  if (links.peer_host) harness::add_server_context(kinds.front(), links.base, *links.peer_host, links.peer_port);
  if (std::find(kinds.begin(), kinds.end(), rdma::TransportKind::verbs) != kinds.end()) harness::add_verbs_context(f.link.device);
  register_cases(links, f, data);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  links.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  CLI::App app{"bench_pipeline: end-to-end rate of original bytes through chunked compress -> transfer -> decompress.\n"
               "Google Benchmark's --benchmark_* flags are accepted too."};
  Flags f;
  harness::add_link_flags(app, f.link, kDefaultPort,
                          "transports, comma-separated (default: verbs when a device exists, else tcp,mem)");
  app.add_option("--modes", f.modes, "raw, serial, overlap (raw is always added)")->capture_default_str();
  app.add_option("--codecs", f.codecs, "codec specs for serial and overlap")->capture_default_str();
  app.add_option("--pages", f.pages, "page policies of both link buffers: 4k, thp, hugetlb")->capture_default_str();
  app.add_option("--chunks", f.chunks, "chunk sizes")->capture_default_str();
  app.add_option("--depth", f.depth, "slots on each side (writes in flight)")->capture_default_str();
  app.add_option("--workers", f.workers, "compression threads and decompression threads")->capture_default_str();
  app.add_option("--datasets", f.datasets, "dataset specs")->capture_default_str();
  harness::MpiPairFlags mpi;
  harness::add_mpi_pair_flags(app, mpi);
  CLI11_PARSE(app, argc, argv);
  if (mpi.enabled)  // mpirun -np 2N: this rank's side of one pair is this binary's own run()
    return harness::run_reporting_errors("bench_pipeline", [&] {
      return harness::run_mpi_pairs("bench_pipeline", mpi, f.link, [&](const harness::LinkFlags& link) {
        auto side = f;
        side.link = link;
        return run(argc, argv, side);
      });
    });
  return harness::run_reporting_errors("bench_pipeline", [&] { return run(argc, argv, f); });
}
