#pragma once
// bench_pipeline's cases: one pipeline configuration over one data set, end to end, with the raw
// baseline in the same run. Links are cached by (transport, pages, buffer size, depth) so cases
// that fit the same link share it (and its receiver).
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "link_flags.hpp"
#include "windowed_dataset.hpp"
#include "wirezip/pipeline/pipeline.hpp"
#include "wirezip/pipeline/serve_thread.hpp"

namespace wirezip::harness {

struct PipelineLinks {
  rdma::LinkOptions base;                // timeout, qps, device, secret (buffer, pages, depth per case)
  std::optional<std::string> peer_host;  // two-host mode: the --serve side
  std::uint16_t peer_port = 0;

  // The sending endpoint of a link able to carry `config` over `data_bytes`, with a receiver serving.
  rdma::Endpoint& sender(rdma::TransportKind kind, rdma::PagePolicy pages, const pipeline::Config& config,
                         std::size_t data_bytes);
  // Stops the receivers and closes the links; in two-host mode tells the server the run is over.
  void finish();
  // After a failed case: the next case starts on a fresh link.
  void drop();

 private:
  struct Live {
    rdma::LinkPair link;
    std::unique_ptr<pipeline::ServeThread> receiver;  // loopback only
  };
  using Key = std::tuple<rdma::TransportKind, rdma::PagePolicy, std::size_t, std::size_t>;
  std::optional<Key> key_;
  Live live_;
  std::optional<rdma::TransportKind> peer_kind_;
};

struct PipelineCase {
  PipelineLinks* links = nullptr;
  std::uint32_t seed = 0;  // with the run number, the pattern the destination is cleared to
  rdma::TransportKind transport = rdma::TransportKind::tcp;
  rdma::PagePolicy pages = rdma::PagePolicy::small;
  pipeline::Config config;
  const RunDataset* dataset = nullptr;
  // A windowed data set is moved this many bytes (rounded down to whole chunks) at a time.
  std::uint64_t window_bytes = 0;
};

// Stage rates are measured alone first (outside the timing), then each iteration is one run over
// the whole data set (manual time: first chunk read to last chunk decompressed), or one run per
// window of a windowed one (manual time: the sum of those runs). After the last iteration's run
// of each window, the receiver's destination is read back and compared with the data set.
void run_pipeline_case(benchmark::State& state, const PipelineCase& config);

// The --serve side: accepts links one after another and serves each until its sender is done;
// a misbehaving peer or case is logged in one line and the next one served. A non-empty `decoder`
// decodes every case with that backend (pipeline::ServeLimits::decoder).
int serve_pipelines(rdma::TransportKind kind, const LinkFlags& flags, const std::string& decoder = "");

}  // namespace wirezip::harness
