// bench_collective: ring all-gather, reduce-scatter and all-reduce of bf16 tensors over MPI
// ranks, raw and with compression overlapped with the ring steps, beside MPI's own collectives.
//
//   mpirun -np N bench_collective [--ops=all_gather,reduce_scatter,all_reduce] [--codecs=SPEC,...]
//       [--sizes=1MiB:256MiB:x2] [--chunk=1MiB] [--depth=8] [--dataset=synthetic:gradients]
//       [--transport=mpi|tcp|verbs] [--bind=ADDRESS] [--timeout-ms=10000]
//       [--placements=out-of-place,in-place] [--benchmark_* flags]
// After the cases, rank 0 prints nccl-tests' table (time, algbw, busbw, #wrong per placement) and
// its closing average bus bandwidth; a case with any wrong value fails (exit 1).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <set>

#include "context.hpp"
#include "failure_summary.hpp"
#include "help.hpp"
#include "link_flags.hpp"
#include "mpi/collective_case.hpp"
#include "mpi/mpi_link_setup.hpp"
#include "mpi/mpi_report.hpp"
#include "mpi/ring_links.hpp"
#include "repeated_case.hpp"
#include "wirezip/codecs/registry.hpp"
#include "wirezip/collective/ring_math.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/mpi/exchange.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"
#include "wirezip/util/size.hpp"

namespace {

using namespace wirezip;

struct Flags {
  std::string ops = "all_gather,reduce_scatter,all_reduce", codecs = std::string(codecs::kBestCodecSpec) + ",bytegroup+lz4";
  std::string sizes = "1MiB:256MiB:x2", chunk = "1MiB", dataset = "synthetic:gradients", transport = "mpi", bind;
  std::string placements = "out-of-place,in-place";
  std::size_t depth = 8;
  long timeout_ms = 10000;
};

// The flags, checked the same way on every rank before any rank talks to another.
struct Config {
  std::vector<collective::Op> ops;
  std::vector<codecs::CodecSpec> codecs;  // memcpy first: the ceiling
  std::vector<std::size_t> sizes;   // requested; each case uses the layout's whole shards
  std::size_t chunk = 0;
  std::vector<bool> in_place;  // the placements asked for: false out-of-place, true in-place
};

Config validate(const Flags& f, int ranks) {
  if (ranks < 2) fail("a ring needs at least 2 ranks: start it with mpirun -np N (N >= 2)");
  if (f.transport != "mpi" && f.transport != "tcp" && f.transport != "verbs")
    fail("--transport={}: expected mpi, tcp or verbs", f.transport);
  if (!f.bind.empty() && f.transport != "tcp") fail("--bind is for --transport=tcp");
  if (f.depth == 0 || f.timeout_ms <= 0) fail("--depth and --timeout-ms must be positive");
  if (f.timeout_ms > harness::kMaxTimeoutMs) fail("--timeout-ms must be at most a day ({} ms)", harness::kMaxTimeoutMs);
  if (f.dataset.rfind("synthetic:", 0) != 0 || f.dataset.find("size=") != std::string::npos ||
      f.dataset.find("seed=") != std::string::npos)
    fail("--dataset={}: expected synthetic:KIND without size or seed (each rank's seed is its rank + 1)", f.dataset);
  Config config;
  for (const std::string& op : flag::list("--ops", f.ops)) config.ops.push_back(collective::parse_op(op));
  config.codecs = {codecs::parse_codec_spec("memcpy")};
  for (const std::string& text : flag::list("--codecs", f.codecs)) {
    codecs::CodecSpec spec = codecs::parse_codec_spec(text);  // a bad spec fails before any case runs
    if (std::find(config.codecs.begin(), config.codecs.end(), spec) == config.codecs.end())
      config.codecs.push_back(std::move(spec));
  }
  for (const std::string& placement : flag::list("--placements", f.placements)) {
    if (placement != "out-of-place" && placement != "in-place")
      fail("--placements={}: expected out-of-place, in-place or both", f.placements);
    const bool in_place = placement == "in-place";
    if (std::find(config.in_place.begin(), config.in_place.end(), in_place) == config.in_place.end())
      config.in_place.push_back(in_place);
  }
  try {
    config.chunk = parse_size(f.chunk);
    for (std::uint64_t size : collective::parse_size_sweep(f.sizes)) {
      collective::Layout::make(size, ranks, config.chunk);  // too small for n ranks: say so now
      config.sizes.push_back(size);
    }
  } catch (const Error& e) {
    fail("--sizes/--chunk: {}", e.what());
  }
  return config;
}

void register_cases(harness::CollectiveRun& run, const Config& config, const std::string& transport) {
  // Ring cases over another transport say so in their names (the MPI baselines' stay as they are).
  const std::string suffix = transport == "mpi" ? "" : "/transport:" + transport;
  for (collective::Op op : config.ops)
    for (std::size_t size : config.sizes) {
      const std::size_t bytes = collective::Layout::make(size, run.ranks, config.chunk).total_bytes();
      // In-place cases end in /inplace:1; out-of-place ones keep the names they always had.
      auto add = [&](harness::CollectiveImpl impl, const codecs::CodecSpec& codec) {
        for (bool in_place : config.in_place) {
          const std::string name =
              fmt::format("collective/{}/{}/{}/size:{}/ranks:{}{}{}", collective::op_name(op), harness::impl_name(impl),
                          codec.empty() ? "none" : codec.text(), bytes, run.ranks,
                          impl == harness::CollectiveImpl::ring ? suffix : "", in_place ? "/inplace:1" : "");
          harness::CollectiveCase c{&run, op, impl, codec, size, in_place};
          harness::register_case(name, [c](benchmark::State& state) { harness::run_collective_case(state, c); })
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
        }
      };
      add(harness::CollectiveImpl::ring, codecs::CodecSpec());
      for (const codecs::CodecSpec& codec : config.codecs) add(harness::CollectiveImpl::ring, codec);
      add(harness::CollectiveImpl::mpi, codecs::CodecSpec());
    }
}

void add_context(int argc, char** argv, const mpi::Session& session, const std::vector<std::string>& hosts,
                 const Flags& f, const datasets::Dataset& data) {
  harness::add_host_context(argc, argv);
  benchmark::AddCustomContext("mpi_library", session.library_version());
  benchmark::AddCustomContext("mpi_ranks", std::to_string(session.size()));
  const std::set<std::string> distinct(hosts.begin(), hosts.end());
  std::string names;
  for (const std::string& host : distinct) names += (names.empty() ? "" : ",") + host;
  benchmark::AddCustomContext("mpi_hosts", names);
  benchmark::AddCustomContext("transport", f.transport);
  benchmark::AddCustomContext("chunk_bytes", std::to_string(parse_size(f.chunk)));
  benchmark::AddCustomContext("depth", std::to_string(f.depth));
  benchmark::AddCustomContext("dataset", f.dataset + " (rank r: seed r + 1)");
  benchmark::AddCustomContext("dataset_rank0", data.description);
}

int run(int argc, char** argv, const Flags& f, const Config& config, mpi::Session& session) {
  mpi::Watchdog watchdog("bench_collective", session);
  harness::CollectiveRun run;
  run.rank = session.rank();
  run.ranks = session.size();
  run.watchdog = &watchdog;
  run.timeout = std::chrono::milliseconds(f.timeout_ms);
  run.chunk_bytes = config.chunk;
  run.depth = f.depth;
  const std::size_t largest = *std::max_element(config.sizes.begin(), config.sizes.end());
  datasets::Dataset data = datasets::load_dataset(fmt::format("{}:size={}:seed={}", f.dataset, largest, run.rank + 1));
  run.input = std::move(data.bytes);
  std::vector<std::string> hosts;
  {
    auto guard = watchdog.guard("exchanging hostnames", run.timeout);
    hosts = mpi::all_gather_strings(run.comm, session.hostname());
  }
  if (f.transport != "mpi") {
    harness::RingLinkConfig links;
    links.kind = rdma::parse_transport(f.transport);
    links.bind = f.bind;
    links.buffer_bytes = harness::ring_link_bytes(config.sizes, config.codecs, run.ranks, config.chunk);
    links.depth = f.depth;
    links.timeout = run.timeout;
    {
      auto guard = watchdog.guard("sharing the job's link secret", run.timeout);
      links.secret = harness::job_secret(run.comm);
    }
    run.connect_links = [&run, &watchdog, &hosts, links] {
      return harness::connect_ring_links(run.comm, links, hosts, watchdog);
    };
  }
  register_cases(run, config, f.transport);
  if (run.rank == 0) {
    add_context(argc, argv, session, hosts, f, data);
    const harness::CaseOutcome outcome = harness::run_cases();
    // nccl-tests' table after Google Benchmark's; on stderr when stdout carries JSON or CSV.
    const bool console = harness::benchmark_format_from_cmdline() == "console";
    fmt::print(console ? stdout : stderr, "{}", run.table.text());
    std::fflush(console ? stdout : stderr);
    return harness::exit_status("bench_collective", outcome);
  }
  harness::SilentReporter silent;
  benchmark::RunSpecifiedBenchmarks(&silent);
  benchmark::Shutdown();
  return run.failed_cases ? harness::kExitCaseFailed : 0;  // every rank fails the same cases
}

// The bound on MPI_Init, which comes before the flags are parsed (the rank decides who reports):
// --timeout-ms as given, or its default where it is absent or out of range (the parse after
// MPI_Init refuses it then).
std::chrono::milliseconds init_bound(int argc, char** argv, long fallback) {
  constexpr std::string_view kFlag = "--timeout-ms";
  std::string_view value;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == kFlag && i + 1 < argc) value = argv[i + 1];
    if (arg.starts_with(kFlag) && arg.size() > kFlag.size() && arg[kFlag.size()] == '=') value = arg.substr(kFlag.size() + 1);
  }
  long ms = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), ms);
  const bool usable = error == std::errc() && end == value.data() + value.size() && ms > 0 && ms <= harness::kMaxTimeoutMs;
  return std::chrono::milliseconds(usable ? ms : fallback);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto status = harness::print_version_if_asked("bench_collective", argc, argv)) return *status;
  std::optional<mpi::Session> session;
  try {
    session.emplace("bench_collective", init_bound(argc, argv, Flags{}.timeout_ms));
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_collective: {}\n", e.what());
    return 2;
  }
  const bool reporting = session->rank() == 0;
  // One JSON file: only rank 0 keeps --benchmark_out.
  if (!reporting) harness::drop_benchmark_out(argc, argv);
  if (auto status = harness::initialize_benchmark("bench_collective", argc, argv, reporting)) return *status;
  CLI::App app{"bench_collective: ring collectives of bf16 tensors over MPI ranks, raw and compressed, beside MPI's own.\n"
               "Start it with mpirun -np N (N >= 2). Google Benchmark's --benchmark_* flags are accepted too."};
  Flags f;
  app.add_option("--ops", f.ops, "collectives: all_gather, reduce_scatter, all_reduce")->capture_default_str();
  app.add_option("--codecs", f.codecs, "codec specs for the compressed ring (memcpy is always added)")->capture_default_str();
  app.add_option("--sizes", f.sizes, "tensor sizes: FROM:TO:xFACTOR or a list (nccl-tests' -b -e -f)")->capture_default_str();
  app.add_option("--placements", f.placements,
                 "out-of-place (result in its own buffer), in-place (result over the input), or both (nccl-tests)")
      ->capture_default_str();
  app.add_option("--chunk", f.chunk, "chunk size: the unit compressed and sent")->capture_default_str();
  app.add_option("--depth", f.depth, "receives posted ahead of the chunk being handled")->capture_default_str();
  app.add_option("--dataset", f.dataset, "synthetic:KIND; rank r uses seed r + 1")->capture_default_str();
  app.add_option("--transport", f.transport, "what carries the ring's chunks: mpi (MPI_Isend/MPI_Irecv), tcp or verbs (wirezip's links)")
      ->capture_default_str();
  app.add_option("--bind", f.bind,
                 "tcp, ranks on several hosts: the interface (its IPv4 address on each host) or address each "
                 "listener binds and is reached at (default: every address, reached by hostname; loopback "
                 "within a host)");
  app.add_option("--timeout-ms", f.timeout_ms, "bound on every wait; past it the job ends with an error")->capture_default_str();
  harness::add_help_footer(app, "mpirun -np 4 bench_collective --ops=all_reduce --sizes=1MiB:64MiB:x4 --benchmark_out=collective.json");
  std::ostream silent(nullptr);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return reporting ? app.exit(e) : app.exit(e, silent, silent);
  }
  Config config;
  try {
    config = validate(f, session->size());
  } catch (const std::exception& e) {
    if (reporting) fmt::print(stderr, "bench_collective: {}\n", e.what());  // every rank saw the same flags
    return 2;
  }
  try {
    return run(argc, argv, f, config, *session);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_collective: rank {}: {}\n", session->rank(), e.what());
    return 2;
  }
}
