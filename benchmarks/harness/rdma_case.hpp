#pragma once
// bench_rdma's cases: a stream of one-sided writes of one size through a link whose buffers have
// one page policy. Links are expensive (allocation, population, registration), so one link per
// page policy serves all of that policy's sizes; the next policy's link replaces it.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "link_flags.hpp"
#include "wirezip/rdma/transport.hpp"

namespace wirezip::harness {

struct RdmaRun {
  rdma::TransportKind transport = rdma::TransportKind::tcp;
  rdma::LinkOptions options;              // buffer size, depth, qps, device, timeout (pages per case)
  std::optional<std::string> peer_host;   // two-host mode: the --serve side
  std::uint16_t peer_port = 0;
};

// Owns the one live link and builds links on demand.
class LinkCache {
 public:
  explicit LinkCache(RdmaRun run) : run_(std::move(run)) {}
  // The sending endpoint of a link with `pages`; throws (NoDeviceError included) when none can be made.
  rdma::Endpoint& sender(rdma::PagePolicy pages);
  const RdmaRun& run() const { return run_; }
  // Two local buffers with `pages` for the memcpy ceiling (replacing any link, to bound memory).
  std::pair<rdma::PageBuffer, rdma::PageBuffer>& ceiling_buffers(rdma::PagePolicy pages);
  // Drops the link and, in two-host mode, tells the server the run is over.
  void finish();

 private:
  RdmaRun run_;
  std::optional<rdma::PagePolicy> pages_;
  rdma::LinkPair link_;  // second is empty in two-host mode
  std::optional<rdma::PagePolicy> ceiling_pages_;
  std::pair<rdma::PageBuffer, rdma::PageBuffer> ceiling_;
};

struct RdmaCase {
  LinkCache* links = nullptr;
  rdma::PagePolicy pages = rdma::PagePolicy::small;
  std::size_t message_bytes = 0;
  std::uint32_t seed = 0;  // a different pattern per case, so stale data cannot pass verification
  // Runs of this case so far (Google Benchmark runs a case several times): a new pattern each run.
  std::shared_ptr<std::atomic<std::uint32_t>> runs = std::make_shared<std::atomic<std::uint32_t>>(0);
};

// Timed region: post writes (at most `depth` in flight) until a batch is complete, per iteration
// (manual time, post to last completion). Consecutive batches continue through the buffer where the
// last one stopped, so every size covers all of it. Afterwards everything written is read back
// from the peer's buffer and compared.
void run_rdma_case(benchmark::State& state, const RdmaCase& config);
// The ceiling beside it: the same messages copied by memcpy between two buffers of the same pages.
void run_memcpy_case(benchmark::State& state, const RdmaCase& config);

// The passive side of two-host mode: accepts links one after another until an (authenticated)
// peer quits or no peer comes for --idle-s; keeps each alive until its peer disconnects or stays
// silent that long. A misbehaving peer is logged in one line and the next one served. Returns
// the number of links served.
int serve_links(const RdmaRun& run, const LinkFlags& flags);

}  // namespace wirezip::harness
