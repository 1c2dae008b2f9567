#include "pipeline_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "max_rss.hpp"
#include "pipeline_windows.hpp"
#include "repeated_case.hpp"
#include "timed_writes.hpp"
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
  rdma::LinkOptions options = base;
  options.buffer_bytes = bytes;
  options.pages = pages;
  options.depth = config.depth;
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
    if (peer_host && peer_kind_) rdma::send_quit(*peer_kind_, base, *peer_host, peer_port);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_pipeline: closing: {}\n", e.what());
  }
}

namespace {

// Counters of the stages alone and how close the pipeline came to what they allow: overlap is
// bounded by the slowest stage, serial by the sum of the stages' times.
void add_stage_counters(benchmark::State& state, const PipelineCase& c, const pipeline::StageRates& stages,
                        double rate, double bytes) {
  const bool two_hosts = c.links->peer_host.has_value();
  // Decompression runs on the receiver: in two-host mode only its own figure is the stage.
  const double decompress = two_hosts ? stages.receiver_decompress : stages.decompress;
  state.counters["stage_compress"] = stages.compress;
  state.counters["stage_decompress"] = decompress;
  if (two_hosts) state.counters["stage_decompress_sender"] = stages.decompress;
  state.counters["stage_link"] = stages.link;
  // CPU the link alone costs per original byte: this process covers both ends in loopback; in
  // two-host mode the receiver's own report is added (both ends share cores only in linkbed).
  const double link_cpu = stages.link_sender_cpu + (two_hosts ? stages.link_receiver_cpu : 0);
  state.counters["link_cpu_per_byte"] = link_cpu / bytes;
  if (c.config.mode == pipeline::Mode::overlap)
    state.counters["overlap_efficiency"] = rate / std::min({stages.compress, decompress, stages.link});
  if (c.config.mode == pipeline::Mode::serial)
    state.counters["serial_efficiency"] = rate * (1 / stages.compress + 1 / stages.link + 1 / decompress);
}

// Where the runs' time went, per chunk (docs/METRICS.md, "the pipeline's own cost"): each stage's
// clock summed over the timed runs, over the chunks those runs moved.
struct CostTotals {
  pipeline::Result sum;  // seconds and the per-end times added up; chunks counted
  void add(const pipeline::Result& r) {
    sum.seconds += r.seconds;
    sum.chunks += r.chunks;
    sum.decompress_seconds += r.decompress_seconds;
    auto& s = sum.sender;
    s.compress += r.sender.compress, s.hash += r.sender.hash, s.post += r.sender.post, s.wait += r.sender.wait;
    s.compress_cpu += r.sender.compress_cpu;
    sum.original_bytes += r.original_bytes;
    sum.sender_cpu_seconds += r.sender_cpu_seconds, sum.receiver_cpu_seconds += r.receiver_cpu_seconds;
    sum.host_cpu += r.host_cpu;
    s.switches += r.sender.switches, s.threads = std::max(s.threads, r.sender.threads);
    s.queued += r.sender.queued;
    auto& d = sum.receiver;
    d.hash += r.receiver.hash, d.wait += r.receiver.wait, d.credit += r.receiver.credit;
    d.decode_cpu += r.receiver.decode_cpu;
    d.switches += r.receiver.switches, d.threads = std::max(d.threads, r.receiver.threads);
  }
  void write(benchmark::State& state, bool two_hosts, int workers) const {
    if (sum.chunks == 0) return;
    // The codec stages' rates inside the timed runs, on their threads' CPU time: the same data,
    // threads and placement as the pipeline, and what each costs on cores it shares. In the
    // stage_* convention (w busy threads), so that w / rate is the CPU per original byte.
    const double bytes = static_cast<double>(sum.original_bytes);
    if (sum.sender.compress_cpu > 0) state.counters["stage_compress_in_run"] = workers * bytes / sum.sender.compress_cpu;
    if (sum.receiver.decode_cpu > 0) state.counters["stage_decompress_in_run"] = workers * bytes / sum.receiver.decode_cpu;
    // The CPU both ends spent per original byte in the runs themselves, beside the model's w/C +
    // w/D + c_L; and the sending host's CPUs meanwhile (everything on it counted): their busy
    // share of the time the hypervisor gave them, the share it kept (steal), and their busy time
    // per byte, which exceeds cpu_per_byte by what ran outside the pipeline's processes (softirq
    // work in kernel threads, anything else on the host).
    const double cpu = sum.sender_cpu_seconds + (two_hosts ? sum.receiver_cpu_seconds : 0);
    state.counters["cpu_per_byte"] = cpu / bytes;
    const auto& host = sum.host_cpu;
    if (host.busy + host.idle > 0) {
      state.counters["host_busy"] = host.busy / (host.busy + host.idle);
      state.counters["host_steal"] = host.steal / (host.busy + host.idle + host.steal);
      state.counters["host_cpu_per_byte"] = host.busy / bytes;
    }
    const double n = static_cast<double>(sum.chunks);
    auto us = [&](double seconds) { return seconds * 1e6 / n; };
    state.counters["wall_us_per_chunk"] = us(sum.seconds);
    state.counters["compress_us_per_chunk"] = us(sum.sender.compress);
    state.counters["send_hash_us_per_chunk"] = us(sum.sender.hash);
    state.counters["post_us_per_chunk"] = us(sum.sender.post);
    state.counters["send_wait_us_per_chunk"] = us(sum.sender.wait);
    state.counters["decode_us_per_chunk"] = us(sum.decompress_seconds);
    state.counters["recv_hash_us_per_chunk"] = us(sum.receiver.hash);
    state.counters["credit_us_per_chunk"] = us(sum.receiver.credit);
    state.counters["recv_wait_us_per_chunk"] = us(sum.receiver.wait);
    // In loopback both ends are one process: its switches and threads are counted once.
    state.counters["switches_per_chunk"] = static_cast<double>(sum.sender.switches) / n;
    state.counters["queued_us_per_chunk"] = us(sum.sender.queued);
    state.counters["sender_threads"] = static_cast<double>(sum.sender.threads);
    if (two_hosts) {
      state.counters["recv_switches_per_chunk"] = static_cast<double>(sum.receiver.switches) / n;
      state.counters["receiver_threads"] = static_cast<double>(sum.receiver.threads);
    }
  }
};

// bench_rdma's loop over one window's bytes, on the raw case's own link: its chunks as plain
// writes to the offsets the raw run writes them to (what the sender holds now: the bytes do not
// change the time). Timed after each iteration, so raw runs and these writes alternate and their
// ratio is what the pipeline's own machinery costs on this link, without two processes' drift.
double time_plain_writes(rdma::Endpoint& sender, std::size_t bytes, std::size_t chunk) {
  return time_writes(sender, (bytes + chunk - 1) / chunk,
                     [&](std::size_t i) { return std::pair(i * chunk, std::min(chunk, bytes - i * chunk)); });
}

}  // namespace

void run_pipeline_case(benchmark::State& state, const PipelineCase& c) {
  const RunDataset& data = *c.dataset;
  rdma::Endpoint* sender = nullptr;
  std::optional<SenderWindows> windows;
  std::uint64_t runs = 0;  // every clearing's pattern differs: stale bytes never pass
  // Outside the (manual) timing: the window is put in place and, before a run whose destination
  // will be compared with the source, that destination cleared to a pattern of this case and run;
  // then the run itself, which times its own transfer. Only checked runs are cleared: the clearing
  // writes the whole destination just before the run (about 3% of a raw run's rate on a 2-vCPU VM),
  // and a run nobody compares has nothing for it to guard.
  const auto clear_destination = [&] {
    pipeline::prepare_run(*sender, c.seed * 8191 + static_cast<std::uint32_t>(runs++));
  };
  const auto run_window = [&](std::size_t w, bool checked) {
    windows->load(w, *sender, c.config);
    if (checked) clear_destination();
    return pipeline::run_once(*sender, windows->bytes(w), c.config);
  };
  // Raw cases: every window's plain writes, after a clearing where the raw runs had one (the
  // last iteration), so both sides of raw_vs_writes pay the same. A serving peer sees plain writes
  // only on tcp: a keepalive after each window tells it that the link is alive, as bench_rdma does.
  double plain_seconds = 0, plain_bytes = 0;
  const auto plain_iteration = [&](bool checked) {
    for (std::size_t w = 0; w < windows->count(); ++w) {
      if (checked) clear_destination();
      plain_seconds += time_plain_writes(*sender, windows->bytes(w), c.config.chunk_bytes);
      plain_bytes += static_cast<double>(windows->bytes(w));
      if (c.links->peer_host) {
        sender->post_write(0, 0, 0, rdma::kKeepaliveImm);
        sender->wait_in_flight_at_most(0);
      }
    }
  };
  pipeline::StageRates stages;
  try {
    windows.emplace(data, c.config.chunk_bytes, c.window_bytes);
    sender = &c.links->sender(c.transport, c.pages, c.config, windows->largest());
    // Stage rates over every window, each loaded (untimed) first. Raw moves no codec: no stages.
    if (c.config.mode != pipeline::Mode::raw) {
      StageSums sums;
      const std::size_t batch = data.reader ? stage_batch_bytes(c.config) : 0;
      for (std::size_t w = 0; w < windows->count(); ++w) {
        windows->load(w, *sender, c.config);
        const auto window = sender->buffer().bytes().first(windows->bytes(w));
        sums.add(pipeline::measure_stages(*sender, window, c.config, batch), window.size());
      }
      stages = sums.rates();
    }
    // One untimed, verified run over the first window before any timing. The first transfer over
    // a new link costs many times a later one (loopback tcp, 32 MiB: 177 ms against 10-20 ms), and
    // a case whose one iteration outlasts --benchmark_min_time would report exactly that run.
    run_window(0, true);
    windows->verify(0, *sender);
  } catch (const std::exception& e) {
    skip_case(state, e.what());
    c.links->drop();
    return;
  }

  double seconds = 0, compress_busy = 0, link_busy = 0, decompress_busy = 0;
  std::uint64_t wire_bytes = 0, iterations = 0;
  CostTotals cost;
  for (auto _ : state) {
    try {
      // The last iteration's destinations are checked against the data set, each window's right
      // after its run (the next window's run overwrites it).
      const bool last = ++iterations == static_cast<std::uint64_t>(state.max_iterations);
      double iteration = 0;
      wire_bytes = 0;
      for (std::size_t w = 0; w < windows->count(); ++w) {
        const pipeline::Result r = run_window(w, last);
        iteration += r.seconds;
        compress_busy += r.compress_busy * r.seconds;
        link_busy += r.link_busy * r.seconds;
        decompress_busy += r.decompress_busy * r.seconds;
        wire_bytes += r.wire_bytes;
        cost.add(r);
        if (last) windows->verify(w, *sender);
      }
      if (c.config.mode == pipeline::Mode::raw) plain_iteration(last);
      state.SetIterationTime(iteration);
      seconds += iteration;
    } catch (const std::exception& e) {
      skip_case(state, e.what());
      break;
    }
  }
  if (state.error_occurred()) return c.links->drop();

  const double bytes = static_cast<double>(data.size());
  const double rate = bytes * static_cast<double>(state.iterations()) / seconds;
  state.SetBytesProcessed(static_cast<std::int64_t>(data.size() * state.iterations()));
  state.counters["ratio"] = c.config.mode == pipeline::Mode::raw ? 1.0 : stages.ratio;
  if (c.config.mode != pipeline::Mode::raw) state.counters["compressed_bytes"] = static_cast<double>(stages.compressed_bytes);
  state.counters["wire_bytes"] = static_cast<double>(wire_bytes);
  state.counters["compress_busy"] = compress_busy / seconds;
  state.counters["link_busy"] = link_busy / seconds;
  state.counters["decompress_busy"] = decompress_busy / seconds;
  state.counters["verified"] = 1;
  if (plain_seconds > 0) {
    state.counters["plain_writes_rate"] = plain_bytes / plain_seconds;
    state.counters["plain_writes_bytes"] = plain_bytes / static_cast<double>(state.iterations());
    state.counters["raw_vs_writes"] = plain_seconds / seconds;
  }
  if (data.reader) state.counters["windows"] = static_cast<double>(windows->count());
  if (const auto peak = peak_rss_bytes()) state.counters["max_rss_bytes"] = static_cast<double>(*peak);
  cost.write(state, c.links->peer_host.has_value(), c.config.mode == pipeline::Mode::overlap ? c.config.workers : 1);
  if (c.config.mode != pipeline::Mode::raw) add_stage_counters(state, c, stages, rate, bytes);
}

int serve_pipelines(rdma::TransportKind kind, const LinkFlags& flags, const std::string& decoder) {
  const rdma::LinkOptions options = flags.options();
  pipeline::ServeLimits limits;
  limits.max_timeout = std::chrono::milliseconds(flags.max_timeout_ms);
  limits.idle = std::chrono::seconds(flags.idle_s);
  limits.decoder = decoder;
  auto listener = rdma::listen(kind, options, flags.bind, flags.port);
  announce_listening("bench_pipeline", kind, flags, listener->port());
  if (!decoder.empty()) fmt::print("bench_pipeline: decoding every case with decoder={}\n", decoder);
  std::fflush(stdout);
  int served = 0;
  while (true) {
    std::unique_ptr<rdma::Endpoint> endpoint;
    try {
      endpoint = listener->accept(limits.idle);
    } catch (const rdma::PeerError& e) {
      fmt::print(stderr, "bench_pipeline: {}\n", e.what());  // that peer is done; the next one is served
      continue;
    }
    if (!endpoint) break;
    ++served;
    try {
      pipeline::serve(*endpoint, limits);
    } catch (const std::exception& e) {
      fmt::print(stderr, "bench_pipeline: link {} ended: {}\n", served, e.what());
    }
  }
  return served;
}

}  // namespace wirezip::harness
