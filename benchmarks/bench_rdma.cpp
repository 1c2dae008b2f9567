// bench_rdma: the transport alone. One-sided writes of each message size through buffers on
// 4 KiB pages, Transparent Huge Pages or hugetlbfs, with the backing measured, not assumed.
//
//   bench_rdma [--transport=verbs|tcp|mem] [--pages=4k,thp,hugetlb] [--sizes=4KiB,...,8MiB]
//              [--buffer=64MiB] [--depth=16] [--qps=1] [--device=NAME] [--timeout-ms=10000]
//              [--serve [--port=P] [--bind=ADDR] [--max-buffer=SIZE] | --peer=HOST[:PORT]]
//              [--secret-file=PATH] [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "link_flags.hpp"
#include "mpi_pairs.hpp"
#include "rdma_case.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/size.hpp"

namespace {

using namespace wirezip;
constexpr std::uint16_t kDefaultPort = 18515;  // perftest's

struct Flags {
  harness::LinkFlags link;
  std::string pages = "4k,thp", sizes = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,8MiB", buffer = "64MiB";
  std::size_t depth = 16;
  bool list_devices = false;
};

// The transport the user asked for, or verbs when a device exists, else tcp; and why.
std::pair<rdma::TransportKind, std::string> choose_transport(const std::string& flag) {
  if (!flag.empty()) return {rdma::parse_transport(flag), "requested"};
  if (rdma::verbs_available()) return {rdma::TransportKind::verbs, "default: an RDMA device is present"};
  return {rdma::TransportKind::tcp, "default: no RDMA device, so tcp"};
}

void add_transport_context(const harness::RdmaRun& run, const std::string& why) {
  benchmark::AddCustomContext("transport", std::string(rdma::transport_name(run.transport)));
  benchmark::AddCustomContext("transport_choice", why);
  harness::add_link_context(run.peer_host, run.peer_port);
  if (run.transport == rdma::TransportKind::verbs) harness::add_verbs_context(run.options.device);
}

void register_cases(harness::LinkCache& links, const std::vector<rdma::PagePolicy>& pages,
                    const std::vector<std::uint64_t>& sizes) {
  const harness::RdmaRun& run = links.run();
  std::uint32_t seed = 0;
  for (rdma::PagePolicy policy : pages) {
    for (std::uint64_t size : sizes) {
      std::string name = fmt::format("rdma/{}/pages:{}/size:{}/depth:{}", rdma::transport_name(run.transport),
                                     rdma::page_policy_name(policy), size, run.options.depth);
      if (run.transport == rdma::TransportKind::verbs) name += fmt::format("/qps:{}", run.options.qps);
      harness::RdmaCase c{&links, policy, size, seed++};
      benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& state) { harness::run_rdma_case(state, c); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
      // The ceiling, side by side: this host's memcpy of the same messages between the same pages.
      const std::string ceiling = fmt::format("rdma/memcpy/pages:{}/size:{}", rdma::page_policy_name(policy), size);
      benchmark::RegisterBenchmark(ceiling.c_str(), [c](benchmark::State& state) { harness::run_memcpy_case(state, c); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

// Exit status 0 when at least one port is ACTIVE, so scripts can choose the transport.
int list_devices() {
  try {
    bool active = false;
    for (const rdma::VerbsPort& port : rdma::list_verbs_ports()) {
      fmt::print("{} port {}: {} {} mtu {} {} fw {} gid {} netdev {} {}\n", port.device, port.port, port.state,
                 port.link_layer, port.active_mtu, port.speed, port.fw_ver, port.gid, port.netdev, port.ipv4);
      active = active || port.state == "ACTIVE";
    }
    return active ? 0 : 1;
  } catch (const rdma::NoDeviceError& e) {
    fmt::print("bench_rdma: {}\n", e.what());
    return 1;
  }
}

int run(int argc, char** argv, const Flags& flags) {
  if (flags.list_devices) return list_devices();
  auto [transport, why] = choose_transport(flags.link.transport);
  harness::RdmaRun run;
  run.transport = transport;
  run.options = flags.link.options();
  run.options.buffer_bytes = parse_size(flags.buffer);
  run.options.depth = flags.depth;
  if (flags.depth == 0) fail("--depth must be positive");
  if (flags.link.serve) {
    const int served = harness::serve_links(run, flags.link);
    fmt::print("bench_rdma: served {} link(s), done\n", served);
    return 0;
  }
  if (!flags.link.peer.empty())
    std::tie(run.peer_host, run.peer_port) = rdma::parse_host_port(flags.link.peer, kDefaultPort);
  std::vector<rdma::PagePolicy> pages;
  for (const std::string& p : harness::parse_list("--pages", flags.pages)) pages.push_back(rdma::parse_page_policy(p));
  const std::vector<std::uint64_t> sizes = parse_size_list(flags.sizes);

  harness::add_host_context(argc, argv);
  add_transport_context(run, why);
  if (run.peer_host) harness::add_server_context(run.transport, run.options, *run.peer_host, run.peer_port);
  harness::LinkCache links(run);
  register_cases(links, pages, sizes);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  links.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  CLI::App app{"bench_rdma: one-sided write bandwidth per message size and page policy (4k, thp, hugetlb).\n"
               "Google Benchmark's --benchmark_* flags are accepted too."};
  Flags flags;
  harness::add_link_flags(app, flags.link, kDefaultPort, "verbs | tcp | mem (default: verbs when a device exists, else tcp)");
  app.add_option("--pages", flags.pages, "page policies of the buffers: 4k, thp, hugetlb")->capture_default_str();
  app.add_option("--sizes", flags.sizes, "message sizes")->capture_default_str();
  app.add_option("--buffer", flags.buffer, "each side's buffer; messages walk through it")->capture_default_str();
  app.add_option("--depth", flags.depth, "writes in flight")->capture_default_str();
  app.add_flag("--list-devices", flags.list_devices, "print RDMA ports and exit (status 1 when none is active)");
  harness::MpiPairFlags mpi;
  harness::add_mpi_pair_flags(app, mpi);
  CLI11_PARSE(app, argc, argv);
  if (mpi.enabled)  // mpirun -np 2N: this rank's side of one pair is this binary's own run()
    return harness::run_reporting_errors("bench_rdma", [&] {
      return harness::run_mpi_pairs("bench_rdma", mpi, flags.link, [&](const harness::LinkFlags& link) {
        auto side = flags;
        side.link = link;
        return run(argc, argv, side);
      });
    });
  return harness::run_reporting_errors("bench_rdma", [&] { return run(argc, argv, flags); });
}
