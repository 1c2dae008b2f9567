#include "collective_case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "repeated_case.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/mpi/exchange.hpp"
#include "wirezip/mpi/ring_channel.hpp"
#include "wirezip/util/clock.hpp"
#include "wirezip/util/enum_names.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using Clock = std::chrono::steady_clock;
using collective::Layout;
using collective::Op;

// One implementation of the case's collective on this rank.
class Runner {
 public:
  Runner(const CollectiveCase& c, const Layout& layout) : c_(c), layout_(layout) {
    if (c.impl != CollectiveImpl::ring) return;
    CollectiveRun& run = *c.run;
    if (run.connect_links && !run.links) run.links = run.connect_links();
    if (!run.links) mpi_channel_.emplace(run.comm, run.timeout);
    collective::RingChannel& channel = run.links ? static_cast<collective::RingChannel&>(*run.links) : *mpi_channel_;
    ring_.emplace(run.rank, run.ranks, channel, collective::RingOptions{c.codec, run.depth, run.timeout});
  }
  // MPI's own collectives block inside MPI: the watchdog bounds them. The ring bounds its own waits.
  collective::RingStats once(std::span<const std::byte> input, std::span<std::byte> out) {
    if (ring_) return run_ring(*ring_, c_.op, layout_, input, out);
    auto guard = c_.run->watchdog->guard(fmt::format("MPI's {}", collective::op_name(c_.op)), c_.run->timeout);
    switch (c_.op) {
      case Op::all_gather: mpi::mpi_all_gather(c_.run->comm, layout_, input.first(layout_.shard_bytes), out); break;
      case Op::reduce_scatter:
        mpi::mpi_reduce_scatter(c_.run->comm, layout_, c_.run->sum, input.first(layout_.total_bytes()), out);
        break;
      case Op::all_reduce:
        mpi::mpi_all_reduce(c_.run->comm, layout_, c_.run->sum, input.first(layout_.total_bytes()), out);
        break;
    }
    return {};
  }

 private:
  const CollectiveCase& c_;
  const Layout& layout_;
  std::optional<mpi::MpiChannel> mpi_channel_;  // the ring's, without links; outlives the ring
  std::optional<collective::Ring> ring_;
};

// Where one iteration reads its input and leaves its result: two buffers, or one in place.
struct Buffers {
  std::vector<std::byte> storage;
  std::span<const std::byte> input;
  std::span<std::byte> result;
  std::span<std::byte> slot;          // in place: where the input goes back before each iteration
  std::span<const std::byte> source;  // ... from here
  void refill() const {
    if (!slot.empty()) std::memcpy(slot.data(), source.data(), slot.size());
  }
};

Buffers make_buffers(const CollectiveCase& c, const Layout& layout) {
  const CollectiveRun& run = *c.run;
  const std::size_t input_bytes = c.op == Op::all_gather ? layout.shard_bytes : layout.total_bytes();
  Buffers b;
  b.source = std::span<const std::byte>(run.input).first(input_bytes);
  if (!c.in_place) {
    b.storage.resize(result_bytes(c.op, layout));
    b.input = b.source;
    b.result = b.storage;
    return b;
  }
  b.storage.resize(layout.total_bytes());
  const std::span<std::byte> all(b.storage);
  const std::size_t mine = static_cast<std::size_t>(run.rank) * layout.shard_bytes;
  b.slot = c.op == Op::all_gather ? all.subspan(mine, input_bytes) : all;
  b.input = b.slot;
  b.result = all;
  if (c.op == Op::reduce_scatter) b.result = all.subspan(c.impl == CollectiveImpl::mpi ? 0 : mine, layout.shard_bytes);
  return b;
}

// Compress and decompress every chunk of this rank's shard alone: the slowest rank's rates.
collective::StageRates measure_codec(CollectiveRun& run, const codecs::CodecSpec& spec, const Layout& layout) {
  collective::StageRates rates;
  if (spec.empty()) return rates;
  const auto key = fmt::format("{}/{}", spec.text(), layout.total_bytes());
  if (auto found = run.stages.find(key); found != run.stages.end()) return found->second;
  auto codec = spec.make();
  const std::span<const std::byte> shard = std::span<const std::byte>(run.input).first(layout.shard_bytes);
  std::vector<std::byte> frames(layout.chunks * codec->max_compressed_size(layout.chunk_bytes)), back(layout.chunk_bytes);
  std::vector<std::size_t> sizes;
  auto start = Clock::now();
  std::size_t at = 0;
  for (std::size_t k = 0; k < layout.chunks; ++k) {
    sizes.push_back(codec->compress(shard.subspan(layout.chunk_offset(k), layout.chunk_length(k)),
                                    std::span(frames).subspan(at)));
    at += sizes.back();
  }
  const double compress = seconds_since(start);
  start = Clock::now();
  at = 0;
  for (std::size_t k = 0; k < layout.chunks; ++k) {
    codec->decompress(std::span(frames).subspan(at, sizes[k]), std::span(back).first(layout.chunk_length(k)));
    at += sizes[k];
  }
  const double decompress = seconds_since(start);
  auto guard = run.watchdog->guard("MPI_Allreduce of the stage times", run.timeout);
  const double bytes = static_cast<double>(layout.shard_bytes);
  rates.compress = bytes / mpi::max_over_ranks(run.comm, compress);
  rates.decompress = bytes / mpi::max_over_ranks(run.comm, decompress);
  return run.stages[key] = rates;
}

// This rank's wrong values (bf16 elements) and the first of them, described.
struct WrongValues {
  std::uint64_t count = 0;
  std::string first;
};

// A ring's result must equal the raw ring's bit for bit (the raw ring's was checked against the
// reference); so must MPI's all-gather. MPI's reductions add in an order of their own: each
// element of this rank's block must lie within twice the rounding bound of the exact sum.
WrongValues count_wrong(const CollectiveCase& c, const Layout& layout, const ExpectedResult& e,
                        std::span<const std::byte> out, bool& bitwise) {
  const std::span<const std::byte> expected(e.bytes);
  WrongValues wrong;
  bitwise = std::equal(out.begin(), out.end(), expected.begin());
  if (bitwise) return wrong;
  if (c.impl == CollectiveImpl::ring || c.op == Op::all_gather) {
    for (std::size_t at = 0; at < out.size(); at += 2) {
      const std::size_t length = std::min<std::size_t>(2, out.size() - at);
      if (std::memcmp(out.data() + at, expected.data() + at, length) == 0) continue;
      if (wrong.count++ == 0)
        wrong.first = fmt::format("byte {} of {} differs from the raw ring's result", at, out.size());
    }
    return wrong;
  }
  const std::size_t base = c.op == Op::all_reduce ? static_cast<std::size_t>(c.run->rank) * layout.shard_bytes : 0;
  for (std::size_t i = 0; i < e.tolerance.size(); ++i) {
    std::uint16_t got, want;
    std::memcpy(&got, out.data() + base + 2 * i, 2);
    std::memcpy(&want, expected.data() + base + 2 * i, 2);
    const float error = std::fabs(datasets::bf16_to_fp32(got) - datasets::bf16_to_fp32(want));
    if (error <= e.tolerance[i]) continue;
    if (wrong.count++ == 0)
      wrong.first = fmt::format("element {} of block {} is {} where the ring order gives {} (bound {})", i, c.run->rank,
                                datasets::bf16_to_fp32(got), datasets::bf16_to_fp32(want), e.tolerance[i]);
  }
  return wrong;
}

// The table's name of a case: op/impl/codec, as the case name starts.
std::string table_key(const CollectiveCase& c) {
  return fmt::format("{}/{}/{}", collective::op_name(c.op), impl_name(c.impl),
                     c.codec.empty() ? "none" : c.codec.text());
}

// nccl-tests' redop column: what the collective reduces with.
const char* redop(const CollectiveCase& c) { return c.op == Op::all_gather ? "none" : "sum"; }

// Every rank fails the same case (each failure is agreed), so every rank drops its links here.
// The case keeps its row in the table, marked failed, however early it failed.
void fail_case(benchmark::State& state, const CollectiveCase& c, const Layout& layout, const std::string& why) {
  CollectiveRun& run = *c.run;
  ++run.failed_cases;
  run.links.reset();
  run.table.add_failure(table_key(c), layout.total_bytes(), redop(c), c.in_place);
  skip_case(state, why);
}

}  // namespace

std::string_view impl_name(CollectiveImpl impl) {
  static constexpr EnumNames<CollectiveImpl, 2> names{"implementation",
                                                      {{{CollectiveImpl::ring, "ring"}, {CollectiveImpl::mpi, "mpi"}}}};
  return names.name(impl);
}

void run_collective_case(benchmark::State& state, const CollectiveCase& c) {
  CollectiveRun& run = *c.run;
  const Layout layout = Layout::make(c.size, run.ranks, run.chunk_bytes);
  const ExpectedResult& expected = prepare_expected(run, c.op, layout);
  if (expected.error) return fail_case(state, c, layout, *expected.error);

  Buffers buffers = make_buffers(c, layout);
  std::optional<Runner> runner;
  collective::StageRates stages;
  if (auto failure = run.agreed("setting up the case", [&] {
        runner.emplace(c, layout);
        stages = measure_codec(run, c.codec, layout);
        buffers.refill();
        runner->once(buffers.input, buffers.result);  // untimed: first-touch of every buffer
      }))
    return fail_case(state, c, layout, *failure);

  double seconds = 0;
  collective::RingStats stats;
  for (auto _ : state) {
    if (c.in_place) {  // the input back where the last iteration left its result; untimed (manual time)
      state.PauseTiming();
      buffers.refill();
      state.ResumeTiming();
    }
    {
      auto guard = run.watchdog->guard("MPI_Barrier before an iteration", run.timeout);
      mpi::check(MPI_Barrier(run.comm), "MPI_Barrier");
    }
    const auto start = Clock::now();
    double elapsed = 0;
    auto failure = run.agreed(fmt::format("{} {}", impl_name(c.impl), collective::op_name(c.op)), [&] {
      stats += runner->once(buffers.input, buffers.result);
      elapsed = seconds_since(start);
    });
    if (failure) return fail_case(state, c, layout, *failure);
    auto guard = run.watchdog->guard("MPI_Allreduce of the iteration time", run.timeout);
    const double slowest = mpi::max_over_ranks(run.comm, elapsed);
    state.SetIterationTime(slowest);
    seconds += slowest;
  }

  bool bitwise = false;
  const WrongValues wrong = count_wrong(c, layout, expected, buffers.result, bitwise);
  std::uint64_t all_wrong = 0;
  {
    auto guard = run.watchdog->guard("MPI_Allreduce of #wrong", run.timeout);
    all_wrong = static_cast<std::uint64_t>(mpi::sum_over_ranks(run.comm, static_cast<double>(wrong.count)));
  }
  const double factor = collective::busbw_factor(c.op, run.ranks);
  run.table.add(table_key(c), layout.total_bytes(), redop(c), c.in_place,
                {seconds, static_cast<double>(state.iterations()), factor, all_wrong});
  if (auto failure = run.agreed("verification", [&] {
        if (wrong.count) fail("{} wrong here, the first: {}", wrong.count, wrong.first);
      }))
    return fail_case(state, c, layout, fmt::format("verification: #wrong {} (all ranks): {}", all_wrong, *failure));

  auto guard = run.watchdog->guard("MPI_Allreduce of the counters", run.timeout);
  const double iterations = static_cast<double>(state.iterations());
  const double total = static_cast<double>(layout.total_bytes());
  const double algbw = total * iterations / seconds;
  state.SetBytesProcessed(static_cast<std::int64_t>(layout.total_bytes()) * state.iterations());
  state.counters["algbw"] = algbw;
  state.counters["busbw"] = algbw * factor;
  state.counters["verified"] = 1;
  state.counters["count"] = static_cast<double>(layout.total_bytes() / 2);  // bf16 elements, as nccl-tests counts
  state.counters["wrong"] = 0;  // nccl-tests' #wrong: a case with any fails above
  state.counters["ranks"] = run.ranks;
  if (c.impl == CollectiveImpl::mpi) {
    state.counters["bitwise_equal_ring"] = mpi::min_over_ranks(run.comm, bitwise ? 1 : 0);
    return;
  }
  const double original = mpi::sum_over_ranks(run.comm, static_cast<double>(stats.original_sent));
  const double wire = mpi::sum_over_ranks(run.comm, static_cast<double>(stats.wire_sent));
  state.counters["ratio"] = original / wire;
  state.counters["compress_busy"] = mpi::max_over_ranks(run.comm, stats.compress_s) / seconds;
  state.counters["decompress_busy"] = mpi::max_over_ranks(run.comm, stats.decompress_s) / seconds;
  state.counters["reduce_busy"] = mpi::max_over_ranks(run.comm, stats.reduce_s) / seconds;
  stages.reduce = c.op == Op::all_gather ? std::numeric_limits<double>::infinity() : expected.reduce;
  stages.link = expected.link;
  stages.ratio = original / wire;
  if (!c.codec.empty()) {
    state.counters["stage_compress"] = stages.compress;
    state.counters["stage_decompress"] = stages.decompress;
  }
  if (c.op != Op::all_gather) state.counters["stage_reduce"] = stages.reduce;
  state.counters["stage_link"] = stages.link;
  const double model = collective::model_seconds(c.op, run.ranks, static_cast<double>(layout.shard_bytes), stages);
  state.counters["model_busbw"] = total / model * factor;
  state.counters["model_efficiency"] = algbw * factor / (total / model * factor);
}

}  // namespace wirezip::harness
