#include "pipeline_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "wirezip/util/error.hpp"

namespace wirezip::harness {

void PipelineLinks::drop() {
  try {
    if (live_.receiver)
      live_.receiver->stop();
    else if (live_.link.first && peer_host)
      pipeline::stop_serving(*live_.link.first);
  } catch (const std::exception& e) {
    // Already reported by the case that failed; the link is replaced either way.
    fmt::print(stderr, "bench_pipeline: receiver ended with: {}\n", e.what());
  }
  live_ = {};
  key_.reset();
}

rdma::Endpoint& PipelineLinks::sender(rdma::TransportKind kind, rdma::PagePolicy pages,
                                      const pipeline::Config& config, std::size_t data_bytes) {
  const std::size_t bytes = pipeline::link_buffer_bytes(config, data_bytes);
  const Key key{kind, pages, bytes, config.depth};
  if (key_ == key) return *live_.link.first;
  drop();
  rdma::LinkOptions options;
  options.buffer_bytes = bytes;
  options.pages = pages;
  options.depth = config.depth;
  options.qps = qps;
  options.device = device;
  options.timeout = timeout;
  if (peer_host) {
    live_.link.first = rdma::connect(kind, options, *peer_host, peer_port);
    peer_kind_ = kind;
  } else {
    live_.link = rdma::connect_loopback(kind, options);
    live_.receiver = std::make_unique<pipeline::ServeThread>(*live_.link.first, *live_.link.second);
  }
  key_ = key;
  return *live_.link.first;
}

void PipelineLinks::finish() {
  try {
    drop();
    if (peer_host && peer_kind_) {
      rdma::LinkOptions options;
      options.timeout = timeout;
      rdma::send_quit(*peer_kind_, options, *peer_host, peer_port);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_pipeline: closing: {}\n", e.what());
  }
}

void run_pipeline_case(benchmark::State& state, const PipelineCase& c) {
  const std::span<const std::byte> data(c.dataset->bytes);
  rdma::Endpoint* sender = nullptr;
  pipeline::StageRates stages;
  try {
    sender = &c.links->sender(c.transport, c.pages, c.config, data.size());
    std::copy(data.begin(), data.end(), sender->buffer().bytes().begin());
    pipeline::start_case(*sender, data.size(), c.config);
    if (c.config.mode != pipeline::Mode::raw) stages = pipeline::measure_stages(*sender, data, c.config);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    c.links->drop();
    return;
  }

  double seconds = 0, compress_busy = 0, link_busy = 0, decompress_busy = 0;
  std::uint64_t wire_bytes = 0;
  for (auto _ : state) {
    try {
      const pipeline::Result r = pipeline::run_once(*sender, data.size(), c.config);
      state.SetIterationTime(r.seconds);
      seconds += r.seconds;
      compress_busy += r.compress_busy * r.seconds;
      link_busy += r.link_busy * r.seconds;
      decompress_busy += r.decompress_busy * r.seconds;
      wire_bytes = r.wire_bytes;
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
  if (state.error_occurred()) return c.links->drop();

  try {
    std::vector<std::byte> destination(data.size());
    sender->read_remote(0, destination);
    if (!std::equal(destination.begin(), destination.end(), data.begin()))
      fail("verification: the receiver's destination differs from the source");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }

  const double rate = static_cast<double>(data.size()) * static_cast<double>(state.iterations()) / seconds;
  state.SetBytesProcessed(static_cast<std::int64_t>(data.size() * state.iterations()));
  state.counters["ratio"] = c.config.mode == pipeline::Mode::raw ? 1.0 : stages.ratio;
  state.counters["wire_bytes"] = static_cast<double>(wire_bytes);
  state.counters["compress_busy"] = compress_busy / seconds;
  state.counters["link_busy"] = link_busy / seconds;
  state.counters["decompress_busy"] = decompress_busy / seconds;
  state.counters["verified"] = 1;
  if (c.config.mode != pipeline::Mode::raw) {
    // Each stage alone, in original bytes per second, measured in this same run.
    state.counters["stage_compress"] = stages.compress;
    state.counters["stage_decompress"] = stages.decompress;
    state.counters["stage_link"] = stages.link;
    state.counters["overlap_efficiency"] = rate / std::min({stages.compress, stages.decompress, stages.link});
  }
}

int serve_pipelines(rdma::TransportKind kind, const rdma::LinkOptions& options, std::uint16_t port,
                    std::chrono::milliseconds idle) {
  auto listener = rdma::listen(kind, options, "", port);
  fmt::print("bench_pipeline: serving {} on port {}\n", rdma::transport_name(kind), listener->port());
  std::fflush(stdout);
  int served = 0;
  while (auto endpoint = listener->accept(idle)) {
    ++served;
    try {
      pipeline::serve(*endpoint);
    } catch (const std::exception& e) {
      fmt::print(stderr, "bench_pipeline: link {} ended: {}\n", served, e.what());
    }
  }
  return served;
}

}  // namespace wirezip::harness
