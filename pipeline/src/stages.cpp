// Names, sizes, and each stage measured alone: the yardstick for overlap efficiency.
#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "wire.hpp"
#include "wirezip/pipeline/serve_thread.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/thread_name.hpp"

namespace wirezip::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// Runs body(chunk index, worker's codec) over every chunk with `workers` threads; returns seconds.
template <typename Body>
double run_workers(std::size_t chunks, int workers, const codecs::CodecSpec& spec, Body&& body) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto start = Clock::now();
  {
    std::vector<std::jthread> pool;
    for (int w = 0; w < workers; ++w) {
      pool.emplace_back([&] {
        try {
          auto codec = spec.make();
          for (std::size_t i; (i = next.fetch_add(1)) < chunks;) body(i, *codec);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      });
      threads::name_thread(pool.back(), "wz-stage");
    }
  }
  if (error) std::rethrow_exception(error);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

constexpr EnumNames<Mode, 3> kModeNames{"mode",
                                        {{{Mode::raw, "raw"}, {Mode::serial, "serial"}, {Mode::overlap, "overlap"}}}};

Mode parse_mode(std::string_view text) { return kModeNames.parse(text); }

std::string_view mode_name(Mode mode) { return mode == Mode::link ? "link" : kModeNames.name(mode); }

StageRates measure_stages(rdma::Endpoint& sender, std::span<const std::byte> data, const Config& config,
                          std::size_t batch_bytes) {
  const std::size_t chunks = wire::chunk_count(data.size(), config.chunk_bytes);
  auto chunk = [&](std::size_t i) { return data.subspan(i * config.chunk_bytes, std::min(config.chunk_bytes, data.size() - i * config.chunk_bytes)); };
  const std::size_t batch = batch_bytes == 0 ? chunks : std::max<std::size_t>(1, std::min(batch_bytes / config.chunk_bytes, chunks));
  const auto probe = config.codec_spec.make();
  std::vector<std::vector<std::byte>> frames(batch);
  for (std::size_t i = 0; i < batch; ++i) frames[i].resize(probe->max_compressed_size(chunk(i).size()));
  std::vector<std::byte> restored(std::min(data.size(), batch * config.chunk_bytes));
  std::vector<std::size_t> sizes(chunks);

  // Each batch compressed, then decompressed, by the workers; each stage's time summed over the batches.
  double compress_seconds = 0, decompress_seconds = 0;
  for (std::size_t first = 0; first < chunks; first += batch) {
    const std::size_t count = std::min(batch, chunks - first);
    compress_seconds += run_workers(count, config.workers, config.codec_spec, [&](std::size_t i, codecs::Codec& c) {
      sizes[first + i] = c.compress(chunk(first + i), frames[i]);
    });
    decompress_seconds += run_workers(count, config.workers, config.codec_spec, [&](std::size_t i, codecs::Codec& c) {
      c.decompress(std::span(frames[i]).first(sizes[first + i]),
                   std::span(restored).subspan(i * config.chunk_bytes, chunk(first + i).size()));
    });
    const std::span<const std::byte> original =
        data.subspan(first * config.chunk_bytes, std::min(data.size() - first * config.chunk_bytes, restored.size()));
    if (!std::equal(original.begin(), original.end(), restored.begin()))
      fail("pipeline: stage measurement round trip differs");
  }
  StageRates rates;
  const double bytes = static_cast<double>(data.size());
  rates.compress = bytes / compress_seconds;
  rates.decompress = bytes / decompress_seconds;

  std::vector<std::size_t> wire_sizes(chunks);
  std::size_t compressed = 0;
  for (std::size_t i = 0; i < chunks; ++i) {
    compressed += sizes[i];
    wire_sizes[i] = wire::kChunkHeaderSize + sizes[i];
  }
  rates.ratio = bytes / static_cast<double>(compressed);
  rates.compressed_bytes = compressed;
  // The link alone, carrying exactly these compressed chunks, and what it costs in CPU.
  Config link_only = config;
  link_only.mode = Mode::link;
  start_case(sender, data.size(), link_only);
  const Result link = run_once(sender, data.size(), link_only, &wire_sizes);
  rates.link = bytes / link.seconds;
  rates.link_sender_cpu = link.sender_cpu_seconds;
  rates.link_receiver_cpu = link.receiver_cpu_seconds;
  // Decompression where it happens: one serial run, the receiver decoding one chunk at a time
  // while nothing else runs there. Then the case is restored.
  Config serial = config;
  serial.mode = Mode::serial;
  start_case(sender, data.size(), serial);
  const Result decode = run_once(sender, data.size(), serial);
  if (decode.decompress_seconds <= 0) fail("pipeline: the receiver reported no decoding time");
  rates.receiver_decompress = bytes / decode.decompress_seconds;
  start_case(sender, data.size(), config);
  return rates;
}

ServeThread::ServeThread(rdma::Endpoint& sender, rdma::Endpoint& receiver) : sender_(sender) {
  thread_ = std::jthread([this, &receiver] {
    try {
      serve(receiver);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
  threads::name_thread(thread_, "wz-receiver");
}

void ServeThread::stop() {
  if (!thread_.joinable()) return;
  try {
    stop_serving(sender_);
  } catch (...) {
    // The receiver may be gone already (its failure is the error worth reporting).
  }
  thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

ServeThread::~ServeThread() {
  try {
    stop();
  } catch (...) {
  }
}

}  // namespace wirezip::pipeline
