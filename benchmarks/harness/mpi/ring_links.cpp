#include "ring_links.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "mpi_link_setup.hpp"
#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/collective/ring_math.hpp"
#include "wirezip/mpi/exchange.hpp"
#include "wirezip/rdma/verbs_devices.hpp"
#include "wirezip/util/checked.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

rdma::LinkOptions link_options(const RingLinkConfig& config) {
  rdma::LinkOptions options;
  options.buffer_bytes = config.buffer_bytes;
  options.depth = std::clamp<std::size_t>(config.depth, 1, rdma::kMaxDepth);
  options.timeout = config.timeout;
  options.secret = config.secret;
  // The left neighbour asks for a buffer like its own: grant exactly what this run needs.
  options.limits.max_buffer = config.buffer_bytes;
  return options;
}

// The passive side: the next authenticated peer within the timeout. A stranger that fails set-up
// ends only its own connection; the wait goes on for the left neighbour.
std::unique_ptr<rdma::Endpoint> accept_left(rdma::Listener& listener, std::chrono::milliseconds timeout, int left) {
  const auto deadline = Clock::now() + timeout;
  std::string last_error = "no connection came";
  while (Clock::now() < deadline) {
    try {
      const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (auto endpoint = listener.accept(std::max(left_ms, std::chrono::milliseconds(1)))) return endpoint;
    } catch (const rdma::PeerError& e) {
      last_error = e.what();
    }
  }
  fail("no link from rank {} within {} ms: {}", left, timeout.count(), last_error);
}

}  // namespace

std::unique_ptr<collective::LinkChannel> connect_ring_links(MPI_Comm comm, const RingLinkConfig& config,
                                                            const std::vector<std::string>& hosts,
                                                            mpi::Watchdog& watchdog) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int left = (rank + ranks - 1) % ranks, right = (rank + 1) % ranks;
  const rdma::LinkOptions options = link_options(config);

  // Listen first, then tell every rank where (or why not): no rank waits on one that failed.
  std::unique_ptr<rdma::Listener> listener;
  json mine;
  try {
    // --bind may name an interface: one flag for every host, each rank binding its own address.
    const std::string ip = config.bind.empty() ? "" : rdma::netdev_ipv4(config.bind);
    const auto [address, bind] = serve_address(config.kind, config.device, ip.empty() ? config.bind : ip,
                                               hosts.at(left) == hosts.at(rank), hosts.at(rank));
    listener = rdma::listen(config.kind, options, bind, 0);
    mine = {{"host", address}, {"port", listener->port()}};
  } catch (const std::exception& e) {
    mine = {{"error", e.what()}};
  }
  std::vector<std::string> all;
  {
    auto guard = watchdog.guard("exchanging the ring's link addresses", config.timeout);
    all = mpi::all_gather_strings(comm, mine.dump());
  }
  std::string reached;  // where each rank is reached: what --bind chose, for the log
  for (int r = 0; r < ranks; ++r) {
    const json theirs = json::parse(all[r]);
    if (theirs.contains("error"))
      fail("rank {} cannot listen for its ring link: {}", r, theirs["error"].get<std::string>());
    reached += fmt::format("{}rank {} at {}:{}", r ? ", " : "", r, theirs["host"].get<std::string>(),
                           theirs["port"].get<std::uint16_t>());
  }
  if (rank == 0) fmt::print(stderr, "ring links: {}\n", reached);
  const json where = json::parse(all[right]);

  // Connect to the right while accepting from the left: around a ring, doing one then the other
  // would wait forever.
  std::unique_ptr<rdma::Endpoint> to_right;
  std::exception_ptr connect_error;
  std::jthread connector([&] {
    try {
      to_right = rdma::connect(config.kind, options, where["host"].get<std::string>(), where["port"].get<std::uint16_t>());
    } catch (...) {
      connect_error = std::current_exception();
    }
  });
  std::unique_ptr<rdma::Endpoint> from_left;
  std::string accept_error;
  try {
    from_left = accept_left(*listener, config.timeout, left);
  } catch (const std::exception& e) {
    accept_error = e.what();
  }
  connector.join();
  if (connect_error) {
    try {
      std::rethrow_exception(connect_error);
    } catch (const std::exception& e) {
      fail("rank {}: ring link to rank {}: {}", rank, right, e.what());
    }
  }
  if (!accept_error.empty()) fail("rank {}: {}", rank, accept_error);
  return std::make_unique<collective::LinkChannel>(std::move(to_right), std::move(from_left),
                                                   collective::LinkChannel::Peers{rank, left, right}, config.timeout);
}

std::size_t ring_link_bytes(const std::vector<std::size_t>& sizes, const std::vector<codecs::CodecSpec>& codecs, int ranks,
                            std::size_t chunk_bytes) {
  std::size_t capacity = chunk_bytes;
  for (const codecs::CodecSpec& spec : codecs)
    if (!spec.empty()) capacity = std::max(capacity, spec.max_compressed_size(chunk_bytes));
  std::size_t bytes = rdma::kMinLinkBuffer;
  for (std::size_t size : sizes) {
    const collective::Layout layout = collective::Layout::make(size, ranks, chunk_bytes);
    const std::size_t chunks = checked_mul(static_cast<std::size_t>(ranks - 1), layout.chunks, "ring link chunks");
    bytes = std::max(bytes, checked_mul(chunks, capacity, "ring link buffer"));
  }
  return bytes;
}

}  // namespace wirezip::harness
