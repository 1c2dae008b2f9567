#include "mpi_pairs.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>

#include "context.hpp"
#include "mpi_link_setup.hpp"
#include "mpi_pairs_merge.hpp"
#include "mpi_report.hpp"
#include "wirezip/collective/pairing.hpp"
#include "wirezip/mpi/exchange.hpp"
#include "wirezip/mpi/session.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using nlohmann::json;
constexpr int kAddressTag = 41;

// A file of this rank's own in /tmp (mode 600), removed when it goes: where the peer side's
// Google Benchmark writes its JSON.
class TempFile {
 public:
  TempFile() {
    std::string pattern = "/tmp/wirezip-mpi-XXXXXX";
    const int fd = mkstemp(pattern.data());
    if (fd < 0) fail("mkstemp({}): {}", pattern, std::strerror(errno));
    path_ = pattern;
    close(fd);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }
  std::string read() const {
    std::ifstream in(path_);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

 private:
  std::string path_;
};

rdma::TransportKind pair_transport(const LinkFlags& link) {
  const std::vector<rdma::TransportKind> kinds = link.transports({rdma::TransportKind::tcp}).kinds;
  if (kinds.size() != 1) fail("--mpi takes exactly one --transport (verbs or tcp)");
  if (kinds.front() == rdma::TransportKind::mem) fail("--mpi: the mem transport cannot join two processes; use verbs or tcp");
  return kinds.front();
}

// This rank's host, as compare --group-by wants to see it: host facts, and the RDMA port's.
json rank_facts(const mpi::Session& session, const LinkFlags& link) {
  json facts = json::object();
  for (const auto& [key, value] : host_facts()) facts[key] = value;
  facts["mpi_rank"] = std::to_string(session.rank());
  try {
    const rdma::VerbsPort port = rdma::pick_verbs_port(link.device);
    facts["rdma_device"] = port.device;
    facts["rdma_fw_ver"] = port.fw_ver;
    facts["rdma_link_layer"] = port.link_layer;
    facts["rdma_speed"] = port.speed;
  } catch (const std::exception& e) {
    facts["rdma_device"] = std::string("none: ") + e.what();
  }
  return facts;
}

struct Side {
  const mpi::Session& session;
  mpi::Watchdog& watchdog;
  const MpiPairFlags& flags;
  LinkFlags link;
  rdma::TransportKind kind;
  const std::function<int(const LinkFlags&)>& run_side;
  std::string binary;

  // The serving rank: listens on an ephemeral port, tells its peer where, serves until it quits.
  void serve(int peer, bool same_host, RankReport& out) {
    bool told = false;
    try {
      LinkFlags side = link;
      side.serve = true;
      side.port = 0;
      std::string address;
      try {
        std::tie(address, side.bind) = serve_address(kind, link.device, link.bind, same_host, session.hostname());
      } catch (const Error& e) {
        fail("--mpi over verbs: {}", e.what());
      }
      side.on_listening = [&](std::uint16_t port) {
        auto guard = watchdog.guard("telling the peer rank the port", link_timeout());
        mpi::send_string(MPI_COMM_WORLD, json{{"host", address}, {"port", port}}.dump(), peer, kAddressTag);
        told = true;
      };
      if (int status = run_side(side); status != 0) fail("the --serve side ended with status {}", status);
    } catch (const std::exception& e) {
      out.error = e.what();
      if (!told) mpi::send_string(MPI_COMM_WORLD, json{{"error", out.error}}.dump(), peer, kAddressTag);
    }
  }

  // The peer rank: learns where its server listens, runs the cases, keeps their JSON.
  void peer(int server, RankReport& out) {
    json where;
    {
      auto guard = watchdog.guard("waiting for the serving rank's port", link_timeout() * 6);
      where = json::parse(mpi::receive_string(MPI_COMM_WORLD, server, kAddressTag));
    }
    if (where.contains("error")) {
      out.error = "the serving rank failed: " + where["error"].get<std::string>();
      return;
    }
    const std::string host = where["host"].get<std::string>();
    const auto port = where["port"].get<std::uint16_t>();
    try {
      TempFile json_out;
      point_benchmark_out(json_out.path());
      LinkFlags side = link;
      side.peer = fmt::format("{}:{}", host, port);
      const int status = run_side(side);
      out.report = json::parse(json_out.read());
      if (status != 0) out.error = fmt::format("the --peer side ended with status {}", status);
    } catch (const std::exception& e) {
      out.error = e.what();
      try {
        rdma::send_quit(kind, link.options(), host, port);  // the server would otherwise idle out
      } catch (const std::exception&) {
        // already gone: nothing waits for it
      }
    }
  }

  std::chrono::milliseconds link_timeout() const { return std::chrono::milliseconds(link.timeout_ms); }
  std::chrono::milliseconds wait_bound() const { return std::chrono::seconds(flags.wait_s); }
};

int write_merged(const json& merged, std::string_view binary) {
  const auto path = benchmark_out_from_cmdline();
  if (path && benchmark_out_format_from_cmdline() != "json")
    fail("--mpi writes JSON only: use --benchmark_out_format=json");
  if (path) {
    std::ofstream out(*path);
    out << merged.dump(2) << "\n";
    if (!out) fail("writing {} failed", *path);
  } else {
    std::cout << merged.dump(2) << "\n";
  }
  for (const json& row : merged["benchmarks"]) {
    const std::string name = row.value("name", std::string());
    if (row.value("error_occurred", false))
      fmt::print(stderr, "{}: {} failed: {}\n", binary, name, row.value("error_message", std::string()));
    else if (path)
      fmt::print("{:<100} {:10.3f} GB/s\n", name, row.value("bytes_per_second", 0.0) / 1e9);
  }
  for (const auto& [key, value] : merged["context"].items())
    if (key.rfind("pair", 0) == 0 && key.ends_with("_error"))
      fmt::print(stderr, "{}: {}: {}\n", binary, key, value.get<std::string>());
  return merged_has_failures(merged) ? 1 : 0;
}

}  // namespace

int run_mpi_pairs(std::string_view binary, const MpiPairFlags& flags, const LinkFlags& link,
                  const std::function<int(const LinkFlags&)>& run_side) {
  if (flags.wait_s <= 0) fail("--mpi-wait-s must be positive");
  const collective::Pairing pairing = collective::parse_pairing(flags.pairing);
  const rdma::TransportKind kind = pair_transport(link);
  link.options();  // its timeouts bound MPI_Init: checked first
  mpi::Session session(binary, std::chrono::milliseconds(link.timeout_ms));
  mpi::Watchdog watchdog(std::string(binary), session);
  Side side{session, watchdog, flags, link, kind, run_side, std::string(binary)};
  side.link.transport = std::string(rdma::transport_name(kind));

  std::vector<std::string> hosts;
  {
    auto guard = watchdog.guard("meeting the other ranks", side.link_timeout());
    hosts = mpi::all_gather_strings(MPI_COMM_WORLD, session.hostname());
    // A secret the user gave wins; otherwise the job makes its own, held in memory like the user's.
    int make = link.secret.empty() ? 1 : 0, all = 0;
    mpi::check(MPI_Allreduce(&make, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce(secret)");
    if (all) side.link.secret = job_secret(MPI_COMM_WORLD);
  }
  const std::vector<collective::RankPair> pairs = collective::make_pairs(hosts, pairing);

  RankReport mine;
  mine.rank = session.rank();
  mine.facts = rank_facts(session, link);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const collective::RankPair& p = pairs[i];
    if (p.serve == session.rank() || p.peer == session.rank()) {
      mine.pair = static_cast<int>(i);
      mine.serving = p.serve == session.rank();
    }
  }
  auto run_my_side = [&] {
    if (mine.pair < 0) return;
    const collective::RankPair& p = pairs[static_cast<std::size_t>(mine.pair)];
    if (mine.serving)
      side.serve(p.peer, hosts[p.serve] == hosts[p.peer], mine);
    else
      side.peer(p.serve, mine);
  };
  if (!flags.one_pair_at_a_time) run_my_side();
  for (std::size_t i = 0; flags.one_pair_at_a_time && i < pairs.size(); ++i) {
    if (mine.pair == static_cast<int>(i)) run_my_side();
    auto guard = watchdog.guard(fmt::format("waiting for pair {} to finish", i), side.wait_bound());
    mpi::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  }

  std::vector<std::string> reports;
  {
    auto guard = watchdog.guard("gathering the reports on rank 0", side.wait_bound());
    reports = mpi::gather_strings(MPI_COMM_WORLD, to_json(mine).dump(), 0);
  }
  if (session.rank() != 0) return mine.error.empty() ? 0 : 1;
  std::vector<RankReport> all;
  for (const std::string& text : reports) all.push_back(rank_report_from_json(json::parse(text)));
  const PairRunInfo info{static_cast<int>(pairs.size()), flags.pairing,
                         flags.one_pair_at_a_time ? "one pair at a time" : "all pairs at once",
                         std::string(rdma::transport_name(kind))};
  return write_merged(merge_pair_reports(all, info), binary);
}

}  // namespace wirezip::harness
