// bench_rdma: the transport alone. One-sided writes of each message size through buffers on
// 4 KiB pages, Transparent Huge Pages or hugetlbfs, with the backing measured, not assumed.
//
//   bench_rdma [--transport=verbs|tcp|mem] [--pages=4k,thp,hugetlb] [--sizes=4KiB,...,8MiB]
//              [--buffer=64MiB] [--depth=16] [--qps=1] [--device=NAME] [--timeout-ms=10000]
//              [--serve [--port=P] [--bind=ADDR] [--max-buffer=SIZE] | --peer=HOST[:PORT]]
//              [--secret-file=PATH] [--benchmark_* flags]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "context.hpp"
#include "help.hpp"
#include "failure_summary.hpp"
#include "link_flags.hpp"
#include "mpi/mpi_pairs.hpp"
#include "rdma_case.hpp"
#include "repeated_case.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/flag.hpp"

namespace {

using namespace wirezip;
constexpr std::uint16_t kDefaultPort = 18515;  // perftest's
// The link protocol's bound on writes in flight (a --serve side refuses more).
constexpr std::uint64_t kMaxDepth = rdma::kMaxDepth;

// As typed; check_flags turns them into a Config.
struct Flags {
  harness::LinkFlags link;
  std::string pages = "4k,thp", sizes = "4KiB,16KiB,64KiB,256KiB,1MiB,4MiB,8MiB", buffer = "64MiB", depth = "16";
  bool list_devices = false;
};

struct Config {
  harness::RdmaRun run;
  std::string transport_choice;  // why run.transport
  std::vector<rdma::PagePolicy> pages;
  std::vector<std::uint64_t> sizes;
};

std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return flag::kNoMaximum;  // unknown: the allocation will say
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_bytes);
}

// Every flag checked before anything is built or registered; throws one line naming the flag.
Config check_flags(const Flags& flags) {
  Config config;
  const harness::TransportChoice choice = flags.link.transports({rdma::TransportKind::tcp});
  if (choice.kinds.size() != 1) fail("--transport={}: bench_rdma runs one transport at a time", flags.link.transport);
  config.run.transport = choice.kinds.front();
  config.transport_choice = choice.why;
  config.run.options = flags.link.options();
  const std::uint64_t buffer = flag::size("--buffer", flags.buffer, 1);
  if (const std::uint64_t memory = physical_memory_bytes(); buffer > memory)
    fail("--buffer: '{}' is more than this host's physical memory ({:.1f} GiB)", flags.buffer,
         static_cast<double>(memory) / (1ull << 30));
  config.run.options.buffer_bytes = buffer;
  config.run.options.depth = flag::count("--depth", flags.depth, 1, kMaxDepth);
  for (const std::string& p : flag::list("--pages", flags.pages)) config.pages.push_back(rdma::parse_page_policy(p));
  config.sizes = flag::sizes("--sizes", flags.sizes, 1);
  for (std::uint64_t size : config.sizes)
    if (size > buffer) fail("--sizes: {} bytes do not fit the {}-byte --buffer", size, buffer);
  if (!flags.link.peer.empty())
    std::tie(config.run.peer_host, config.run.peer_port) = rdma::parse_host_port(flags.link.peer, kDefaultPort);
  return config;
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
      harness::register_case(name, [c](benchmark::State& state) { harness::run_rdma_case(state, c); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
      // The ceiling, side by side: this host's memcpy of the same messages between the same pages.
      const std::string ceiling = fmt::format("rdma/memcpy/pages:{}/size:{}", rdma::page_policy_name(policy), size);
      harness::register_case(ceiling, [c](benchmark::State& state) { harness::run_memcpy_case(state, c); })
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
  const Config config = check_flags(flags);
  if (flags.list_devices) return list_devices();
  if (flags.link.serve) {
    const int served = harness::serve_links(config.run, flags.link);
    fmt::print("bench_rdma: served {} link(s), done\n", served);
    return 0;
  }
  harness::add_host_context(argc, argv);
  add_transport_context(config.run, config.transport_choice);
  if (config.run.peer_host)
    harness::add_server_context(config.run.transport, config.run.options, *config.run.peer_host, config.run.peer_port);
  harness::LinkCache links(config.run);
  register_cases(links, config.pages, config.sizes);
  const harness::CaseOutcome outcome = harness::run_cases();
  links.finish();
  return harness::exit_status("bench_rdma", outcome);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto status = harness::print_version_if_asked("bench_rdma", argc, argv)) return *status;
  if (auto status = harness::initialize_benchmark("bench_rdma", argc, argv)) return *status;
  CLI::App app{"bench_rdma: one-sided write bandwidth per message size and page policy (4k, thp, hugetlb).\n"
               "Google Benchmark's --benchmark_* flags are accepted too."};
  Flags flags;
  harness::add_link_flags(app, flags.link, kDefaultPort, "verbs | tcp | mem (default: verbs when a device exists, else tcp)");
  app.add_option("--pages", flags.pages, "page policies of the buffers: 4k, thp, hugetlb")->capture_default_str();
  app.add_option("--sizes", flags.sizes, "message sizes")->capture_default_str();
  app.add_option("--buffer", flags.buffer, "each side's buffer (at most the physical memory); messages walk through it")
      ->capture_default_str();
  app.add_option("--depth", flags.depth, "writes in flight, 1..256")->capture_default_str();
  app.add_flag("--list-devices", flags.list_devices, "print RDMA ports and exit (status 1 when none is active)");
  harness::MpiPairFlags mpi;
  harness::add_mpi_pair_flags(app, mpi);
  harness::add_help_footer(app, "bench_rdma --transport=tcp --pages=4k,thp --sizes=64KiB,1MiB --benchmark_out=rdma.json");
  if (auto status = harness::parse_command_line(app, "bench_rdma", argc, argv)) return *status;
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
