#include "codec_case.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "instruction_counter.hpp"
#include "repeated_case.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using Clock = std::chrono::steady_clock;

// This thread's share: chunks t, t + T, t + 2T, ... each with its own compressed buffer.
struct ThreadChunks {
  std::vector<std::span<const std::byte>> originals;
  std::vector<std::vector<std::byte>> frames;
  std::vector<std::size_t> frame_sizes;
  std::uint64_t original_bytes = 0;
};

ThreadChunks chunks_for_thread(const CodecCase& config, const codecs::Codec& codec, int thread, int threads) {
  ThreadChunks mine;
  std::span<const std::byte> all(config.dataset->bytes);
  const std::size_t chunk = config.chunk_bytes;
  const std::size_t count = (all.size() + chunk - 1) / chunk;
  // Uneven shares would leave a thread idle at the end of every iteration: the wall time would
  // measure the split, not the codec.
  if (count % static_cast<std::size_t>(threads) != 0)
    fail("{} chunks do not split evenly over {} threads (a thread would idle in every iteration); "
         "choose a chunk size or thread count that divides them", count, threads);
  for (std::size_t i = static_cast<std::size_t>(thread); i < count; i += static_cast<std::size_t>(threads)) {
    std::span<const std::byte> piece = all.subspan(i * chunk, std::min(chunk, all.size() - i * chunk));
    mine.originals.push_back(piece);
    mine.frames.emplace_back(codec.max_compressed_size(piece.size()));
    mine.original_bytes += piece.size();
  }
  mine.frame_sizes.assign(mine.originals.size(), 0);
  return mine;
}

void compress_all(codecs::Codec& codec, ThreadChunks& mine) {
  for (std::size_t i = 0; i < mine.originals.size(); ++i)
    mine.frame_sizes[i] = codec.compress(mine.originals[i], mine.frames[i]);
}

void decompress_all(codecs::Codec& codec, ThreadChunks& mine, std::vector<std::byte>& restored) {
  std::size_t offset = 0;
  for (std::size_t i = 0; i < mine.originals.size(); ++i) {
    std::span<std::byte> out(restored.data() + offset, mine.originals[i].size());
    codec.decompress(std::span(mine.frames[i]).first(mine.frame_sizes[i]), out);
    offset += out.size();
  }
}

// The timed work of one iteration, in a function of its own that is never inlined: the
// instruction-count mode (plots/icount.py) collects under cachegrind only inside it
// (--toggle-collect=*timed_codec_pass*), so setup, verification and the harness do not count.
[[gnu::noinline]] void timed_codec_pass(Direction direction, codecs::Codec& codec, ThreadChunks& mine,
                                        std::vector<std::byte>& restored) {
  if (direction == Direction::compress)
    compress_all(codec, mine);
  else
    decompress_all(codec, mine, restored);
}

// Restores every chunk and compares it with the original; throws on the first difference.
void verify(codecs::Codec& codec, ThreadChunks& mine, std::vector<std::byte>& restored, bool decode_again) {
  if (decode_again) decompress_all(codec, mine, restored);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < mine.originals.size(); ++i) {
    if (!std::equal(mine.originals[i].begin(), mine.originals[i].end(), restored.begin() + offset))
      fail("round trip mismatch: chunk {} of this thread does not restore its input", i);
    offset += mine.originals[i].size();
  }
}

void set_if_known(benchmark::State& state, const char* name, double value) {
  if (!std::isnan(value)) state.counters[name] = value;
}

// Thread `thread` of a run onto cpus[thread % size], before it touches its chunks (so they are
// first touched from that CPU). Thread 0 is Google Benchmark's main thread: it stays pinned after
// the run, which is harmless, since each later thread pins itself before its work.
void pin(const std::vector<int>& cpus, int thread) {
  if (cpus.empty()) return;
  const int cpu = cpus[static_cast<std::size_t>(thread) % cpus.size()];
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (const int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0)
    fail("pthread_setaffinity_np(thread {}, cpu {}): {}", thread, cpu, std::strerror(err));
}

// Ratio is a property of all chunks together: the last thread of a run to get here reports it and
// readies the shared state for the next run. Every thread checks in, even after an error.
// `rate` is this run's original bytes per second of wall time (the same in every thread).
void report_totals(benchmark::State& state, const CodecCase& config, std::uint64_t compressed, double rate) {
  CodecCase::Shared& shared = *config.shared;
  shared.compressed += compressed;
  if (shared.finished.fetch_add(1) + 1 != state.threads()) return;
  const std::uint64_t all = shared.compressed.exchange(0);
  shared.finished = 0;
  shared.clock.reset();
  if (state.error_occurred() || all == 0) return;
  state.counters["compressed_bytes"] = static_cast<double>(all);
  state.counters["ratio"] = static_cast<double>(config.dataset->bytes.size()) / static_cast<double>(all);
  set_if_known(state, "entropy_bound_ratio", config.entropy_bound_ratio);
  set_if_known(state, "exponent_bound_ratio", config.exponent_bound_ratio);
  set_if_known(state, "value_bound_ratio", config.value_bound_ratio);
  if (!config.ceiling || rate <= 0) return;
  const std::string key = config.ceiling_key(state.threads());
  if (config.is_memcpy()) config.ceiling->record(key, state.iterations(), rate);
  if (auto memcpy_rate = config.ceiling->median(key)) state.counters["vs_memcpy"] = rate / *memcpy_rate;
}

// Runs `step`, turning an exception into skip_case; returns whether it succeeded.
template <typename Step>
bool guarded(benchmark::State& state, Step&& step) {
  try {
    step();
    return true;
  } catch (const std::exception& e) {
    skip_case(state, e.what());
    return false;
  }
}

}  // namespace

void MemcpyCeiling::record(const std::string& key, benchmark::IterationCount iterations, double bytes_per_second) {
  std::lock_guard lock(mutex_);
  Runs& runs = runs_[key];
  if (iterations < runs.iterations) return;  // a trial run that sized a later one
  if (iterations > runs.iterations) runs = {iterations, {}};
  runs.rates.push_back(bytes_per_second);
}

std::optional<double> MemcpyCeiling::median(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto found = runs_.find(key);
  if (found == runs_.end() || found->second.rates.empty()) return std::nullopt;
  std::vector<double> rates = found->second.rates;
  std::sort(rates.begin(), rates.end());
  const std::size_t n = rates.size();
  return n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
}

std::string CodecCase::ceiling_key(int threads) const {
  return fmt::format("{}/chunk:{}/{}/threads:{}", dataset->spec, chunk_bytes,
                     direction == Direction::compress ? "compress" : "decompress", threads);
}

void IterationWallClock::start(int threads) { arrive(threads, false); }

double IterationWallClock::finish(int threads) {
  arrive(threads, false);
  std::lock_guard lock(mutex_);
  return wall_seconds_;  // stays until this thread arrives again: the next phase needs it
}

void IterationWallClock::leave(int threads) { arrive(threads, true); }

void IterationWallClock::reset() {
  std::lock_guard lock(mutex_);
  arrived_ = 0;
  left_ = 0;
  phase_ = 0;
}

void IterationWallClock::arrive(int threads, bool leaving) {
  std::unique_lock lock(mutex_);
  ++(leaving ? left_ : arrived_);
  if (arrived_ + left_ >= threads) {
    const Clock::time_point now = Clock::now();
    if (phase_ % 2 == 0)
      started_ = now;
    else
      wall_seconds_ = std::chrono::duration<double>(now - started_).count();
    arrived_ = 0;
    ++phase_;
    phase_done_.notify_all();
    return;
  }
  if (leaving) return;
  const std::uint64_t mine = phase_;
  phase_done_.wait(lock, [&] { return phase_ != mine; });
}

void run_codec_case(benchmark::State& state, const CodecCase& config) {
  const int threads = state.threads();
  IterationWallClock& clock = config.shared->clock;
  std::unique_ptr<codecs::Codec> codec;
  ThreadChunks mine;
  std::vector<std::byte> restored;
  // Both directions start from real frames: the decompress case times exactly these.
  bool ok = guarded(state, [&] {
    pin(config.cpus, state.thread_index());
    codec = config.codec_spec.make();
    mine = chunks_for_thread(config, *codec, state.thread_index(), threads);
    restored.resize(mine.original_bytes);
    compress_all(*codec, mine);
  });
  if (!ok) clock.leave(threads);  // an error skips the loop

  double wall_seconds = 0;
  InstructionCounter instructions;  // this thread's, around the timed work only
  for (auto _ : state) {
    clock.start(threads);
    instructions.resume();
    ok = guarded(state, [&] { timed_codec_pass(config.direction, *codec, mine, restored); });
    instructions.pause();
    if (!ok) {
      clock.leave(threads);
      break;
    }
    const double seconds = clock.finish(threads);
    wall_seconds += seconds;
    state.SetIterationTime(seconds);
  }
  if (ok) ok = guarded(state, [&] { verify(*codec, mine, restored, config.direction == Direction::compress); });

  std::uint64_t compressed = 0;
  for (std::size_t size : mine.frame_sizes) compressed += size;
  double rate = 0;  // all threads' bytes over the wall time, as Google Benchmark's bytes_per_second
  if (ok) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * mine.original_bytes));
    const auto count = instructions.total();
    if (count && mine.original_bytes > 0)  // per byte of this thread's share, averaged over threads
      state.counters["instructions_per_byte"] = benchmark::Counter(
          static_cast<double>(*count) / (static_cast<double>(state.iterations()) * static_cast<double>(mine.original_bytes)),
          benchmark::Counter::kAvgThreads);
    if (wall_seconds > 0)
      rate = static_cast<double>(state.iterations()) * static_cast<double>(config.dataset->bytes.size()) / wall_seconds;
  }
  report_totals(state, config, compressed, rate);
}

}  // namespace wirezip::harness
