#include "codec_case.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "codec_chunks.hpp"
#include "instruction_counter.hpp"
#include "max_rss.hpp"
#include "repeated_case.hpp"
#include "wirezip/util/cpus.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using Clock = std::chrono::steady_clock;

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
    mine.original_bytes += piece.size();
  }
  mine.make_frames(mine.originals.size(), codec.max_compressed_size(std::min(chunk, all.size())));  // the largest piece
  mine.frame_sizes.assign(mine.originals.size(), 0);
  return mine;
}

// The timed work of one iteration, in a function of its own that is never inlined: the
// instruction-count mode (plots/icount.py) collects under cachegrind only inside it
// (--toggle-collect=*timed_codec_pass*), so setup, verification and the harness do not count.
[[gnu::noinline]] void timed_codec_pass(Direction direction, codecs::Codec& codec, ThreadChunks& mine,
                                        std::span<std::byte> restored) {
  if (direction == Direction::compress)
    compress_all(codec, mine);
  else
    decompress_all(codec, mine, restored);
}

// Restores every chunk and compares it with the original; throws on the first difference.
void verify(codecs::Codec& codec, ThreadChunks& mine, std::span<std::byte> restored, bool decode_again) {
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
  try {
    wirezip::cpus::pin_this_thread(cpus[static_cast<std::size_t>(thread) % cpus.size()]);
  } catch (const Error& e) {
    fail("thread {}: {}", thread, e.what());
  }
}

// Ratio is a property of all chunks together: the last thread of a run to get here reports it and
// readies the shared state for the next run. Every thread checks in, even after an error.
// `rate` is this run's original bytes per second of wall time (the same in every thread);
// `windows` the windows of a file data set's plan (the same in every thread).
void report_totals(benchmark::State& state, const CodecCase& config, std::uint64_t compressed, double rate,
                   std::size_t windows) {
  CodecCase::Shared& shared = *config.shared;
  shared.compressed += compressed;
  if (shared.finished.fetch_add(1) + 1 != state.threads()) return;
  const std::uint64_t all = shared.compressed.exchange(0);
  shared.finished = 0;
  shared.clock.reset();
  if (state.error_occurred() || all == 0) return;
  state.counters["compressed_bytes"] = static_cast<double>(all);
  state.counters["ratio"] = static_cast<double>(config.data_bytes()) / static_cast<double>(all);
  if (const auto peak = peak_rss_bytes()) state.counters["max_rss_bytes"] = static_cast<double>(*peak);
  if (config.reader) state.counters["windows"] = static_cast<double>(windows);
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

namespace {

// What one thread's timed loop leaves for the report.
struct LoopOutcome {
  bool ok = false;
  double wall_seconds = 0;      // timed seconds over all iterations
  std::uint64_t compressed = 0;  // this thread's frames, one pass over the data set
  std::uint64_t bytes = 0;       // this thread's share of the data set, per iteration
  std::size_t windows = 0;       // a file data set's windows (0 in memory, or when planning failed)
};

// The data set in memory: chunked and compressed once, then timed as a whole every iteration.
LoopOutcome in_memory_loop(benchmark::State& state, const CodecCase& config, InstructionCounter& instructions) {
  const int threads = state.threads();
  IterationWallClock& clock = config.shared->clock;
  std::unique_ptr<codecs::Codec> codec;
  ThreadChunks mine;
  datasets::AlignedBytes restored;  // page-aligned, as the data set is: a codec writes it as it reads the input
  LoopOutcome out;
  // Both directions start from real frames: the decompress case times exactly these.
  out.ok = guarded(state, [&] {
    pin(config.cpus, state.thread_index());
    codec = config.codec_spec.make();
    mine = chunks_for_thread(config, *codec, state.thread_index(), threads);
    restored.resize(mine.original_bytes);
    compress_all(*codec, mine);
  });
  if (!out.ok) clock.leave(threads);  // an error skips the loop
  for (auto _ : state) {
    clock.start(threads);
    instructions.resume();
    out.ok = guarded(state, [&] { timed_codec_pass(config.direction, *codec, mine, restored); });
    instructions.pause();
    if (!out.ok) {
      clock.leave(threads);
      break;
    }
    const double seconds = clock.finish(threads);
    out.wall_seconds += seconds;
    state.SetIterationTime(seconds);
  }
  if (out.ok) out.ok = guarded(state, [&] { verify(*codec, mine, restored, config.direction == Direction::compress); });
  for (std::size_t size : mine.frame_sizes) out.compressed += size;
  out.bytes = mine.original_bytes;
  return out;
}

// A file data set a window at a time: every iteration reads each window, codes it (timed, all
// threads between one start and finish line per window) and checks every chunk. The iteration's
// time is the sum of its windows' timed passes: reading, compressing for a decompress case,
// checking and releasing are outside it. Google Benchmark's timer is paused around them too, so its
// CPU time (cpu_time, and scripts/ab's cpu_bytes_per_second) counts the same passes as the wall time.
LoopOutcome windowed_loop(benchmark::State& state, const CodecCase& config, InstructionCounter& instructions) {
  const int threads = state.threads();
  IterationWallClock& clock = config.shared->clock;
  const bool decompress = config.direction == Direction::decompress;
  std::unique_ptr<codecs::Codec> codec;
  std::optional<WindowedChunks> mine;
  LoopOutcome out;
  out.ok = guarded(state, [&] {
    pin(config.cpus, state.thread_index());
    codec = config.codec_spec.make();
    const WindowPlan plan = plan_windows(config.data_bytes(), config.chunk_bytes, config.window_bytes, threads);
    out.windows = plan.windows();
    mine.emplace(*config.reader, plan, *codec, state.thread_index(), threads, decompress);
    out.bytes = mine->total_bytes();
    // One untimed pass over the first window, as the in-memory case's untimed compression is: its
    // pages have been written through once before the timing starts (on a VM the first writes to
    // fresh pages cost several times what later ones do).
    mine->load(0, *codec);
    timed_codec_pass(config.direction, *codec, mine->chunks(), mine->restored());
    mine->verify(*codec);
  });
  if (!out.ok) clock.leave(threads);
  const std::size_t windows = out.ok ? out.windows : 0;
  for (auto _ : state) {
    double iteration = 0;
    std::uint64_t compressed = 0;
    for (std::size_t w = 0; w < windows && out.ok; ++w) {
      state.PauseTiming();
      out.ok = guarded(state, [&] { mine->load(w, *codec); });
      state.ResumeTiming();
      if (!out.ok) break;
      clock.start(threads);
      instructions.resume();
      out.ok = guarded(state, [&] { timed_codec_pass(config.direction, *codec, mine->chunks(), mine->restored()); });
      instructions.pause();
      if (!out.ok) break;
      iteration += clock.finish(threads);
      state.PauseTiming();
      out.ok = guarded(state, [&] { compressed += mine->verify(*codec); });
      state.ResumeTiming();
    }
    if (!out.ok) {
      clock.leave(threads);
      break;
    }
    out.compressed = compressed;
    out.wall_seconds += iteration;
    state.SetIterationTime(iteration);
  }
  return out;
}

}  // namespace

void run_codec_case(benchmark::State& state, const CodecCase& config) {
  InstructionCounter instructions;  // this thread's, around the timed work only
  const LoopOutcome out = config.reader ? windowed_loop(state, config, instructions)
                                        : in_memory_loop(state, config, instructions);
  double rate = 0;  // all threads' bytes over the wall time, as Google Benchmark's bytes_per_second
  if (out.ok) {
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.bytes));
    const auto count = instructions.total();
    if (count && out.bytes > 0)  // per byte of this thread's share, averaged over threads
      state.counters["instructions_per_byte"] = benchmark::Counter(
          static_cast<double>(*count) / (static_cast<double>(state.iterations()) * static_cast<double>(out.bytes)),
          benchmark::Counter::kAvgThreads);
    if (out.wall_seconds > 0)
      rate = static_cast<double>(state.iterations()) * static_cast<double>(config.data_bytes()) / out.wall_seconds;
  }
  report_totals(state, config, out.compressed, rate, out.windows);
}

}  // namespace wirezip::harness
