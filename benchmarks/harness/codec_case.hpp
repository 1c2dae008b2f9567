#pragma once
// One bench_codec case: a codec compressing (or decompressing) a data set cut into independent
// chunks, as the pipeline will send them. Google Benchmark threads split the chunks between them.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wirezip/codecs/codec_spec.hpp"
#include "wirezip/datasets/dataset.hpp"
#include "wirezip/datasets/dataset_reader.hpp"

namespace wirezip::harness {

enum class Direction { compress, decompress };

// The wall time of one iteration over all threads of a run: from the moment the last thread is
// ready to start to the moment the last one is done. Each thread reports it as its iteration time
// (manual time), so Google Benchmark's mean over the threads is the wall time. Its own clock is
// not: in 1.7.1 each thread's timer stops before the threads wait for each other, and the real time
// it reports is the mean of the threads' times, which overstates throughput whenever threads finish
// apart.
class IterationWallClock {
 public:
  // Waits until every thread of the run that has not left is ready; the last one starts the clock.
  void start(int threads);
  // Waits until every thread that has not left is done; returns the seconds since start().
  double finish(int threads);
  // A thread that stops early (an error) leaves: the others stop waiting for it, in this run.
  void leave(int threads);
  // For the next run; only while no thread of this run uses the clock any more.
  void reset();

 private:
  // One rendezvous of `threads`: the last to arrive (or leave) reads the clock and wakes the rest.
  void arrive(int threads, bool leaving);

  std::mutex mutex_;
  std::condition_variable phase_done_;
  int arrived_ = 0, left_ = 0;
  std::uint64_t phase_ = 0;  // even: the start line, odd: the finish line
  std::chrono::steady_clock::time_point started_;
  double wall_seconds_ = 0;
};

// The memcpy rates of one run, so every case can report its throughput as a share of the ceiling
// measured on the same data set, chunk size, direction and thread count (vs_memcpy). bench_codec
// registers memcpy's cases first, so their repetitions are done before any other codec's start.
// Google Benchmark also runs each case a few times with fewer iterations to size the run it
// reports (and reuses that count for later repetitions): only runs of the largest iteration count
// seen under a key are kept, so the trials never count.
class MemcpyCeiling {
 public:
  void record(const std::string& key, benchmark::IterationCount iterations, double bytes_per_second);
  // The median of the kept rates under `key`; nullopt before any.
  std::optional<double> median(const std::string& key) const;

 private:
  struct Runs {
    benchmark::IterationCount iterations = 0;
    std::vector<double> rates;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Runs> runs_;
};

struct CodecCase {
  codecs::CodecSpec codec_spec;
  const datasets::Dataset* dataset = nullptr;  // spec and description; its bytes unless windowed
  // Windowed: a file data set larger than the window, read window_bytes at a time (codec_chunks.hpp).
  const datasets::DatasetReader* reader = nullptr;
  std::uint64_t window_bytes = 0;
  std::size_t chunk_bytes = 0;
  Direction direction = Direction::compress;
  // Order-0 bounds precomputed for (dataset, chunk); a bound that does not apply is left out (NaN).
  double entropy_bound_ratio = 0;
  double exponent_bound_ratio = 0;
  double value_bound_ratio = 0;
  std::shared_ptr<MemcpyCeiling> ceiling;  // shared by every case of the run; null: no vs_memcpy

  bool is_memcpy() const { return codec_spec.text() == "memcpy"; }
  std::uint64_t data_bytes() const { return reader ? reader->size() : dataset->bytes.size(); }
  // What makes two cases' rates comparable: data set, chunk size, direction and thread count.
  std::string ceiling_key(int threads) const;
  std::vector<int> cpus;  // --cpus: thread i runs on cpus[i % size]; empty: wherever the kernel puts it

  // What the threads of one run share: the wall clock, and totals the last thread to finish reports.
  // Runs (thread counts, repetitions) follow each other, never overlap.
  struct Shared {
    IterationWallClock clock;
    std::atomic<std::uint64_t> compressed{0};
    std::atomic<int> finished{0};
  };
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
};

// The benchmark body; register it with UseManualTime(). Setup and verification run outside the
// timed loop; any error or a round trip that does not restore the input ends the case through
// SkipWithError, with the reason in the JSON.
void run_codec_case(benchmark::State& state, const CodecCase& config);

}  // namespace wirezip::harness
