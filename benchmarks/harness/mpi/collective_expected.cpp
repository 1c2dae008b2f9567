// What each rank's result must be, computed once per (op, size) by every rank together: the
// straightforward reference (MPI moves the data, a plain loop sums it in the ring's order), the
// raw ring checked bit for bit against it, and the stages every case of that size shares.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "collective_case.hpp"
#include "wirezip/datasets/bf16.hpp"
#include "wirezip/mpi/exchange.hpp"
#include "wirezip/mpi/ring_channel.hpp"
#include "wirezip/util/clock.hpp"
#include "wirezip/util/error.hpp"

namespace wirezip::harness {
namespace {

using Clock = std::chrono::steady_clock;
using collective::Layout;
using collective::Op;

// How far MPI's sum may lie from the ring's, element by element: each sum of n bf16 values
// rounds n - 1 times, each time by at most 2^-8 of a partial sum whose magnitude never exceeds
// sum |x_k|; two such sums (MPI's order and the ring's) differ by at most twice that.
std::vector<float> reduction_tolerance(std::span<const std::span<const std::byte>> by_rank) {
  const std::size_t count = by_rank.front().size() / 2;
  std::vector<float> bound(count, 0.0f);
  for (const auto& part : by_rank)
    for (std::size_t i = 0; i < count; ++i) {
      std::uint16_t bits;
      std::memcpy(&bits, part.data() + 2 * i, 2);
      bound[i] += std::fabs(datasets::bf16_to_fp32(bits));
    }
  const float scale = 2.0f * static_cast<float>(by_rank.size() - 1) / 256.0f;
  for (float& b : bound) b *= scale;
  return bound;
}

// The raw ring shifts one shard to the right: the slowest rank's best of three.
double measure_link(CollectiveRun& run, const Layout& layout) {
  std::vector<std::byte> from(run.input.begin(), run.input.begin() + static_cast<std::ptrdiff_t>(layout.shard_bytes));
  std::vector<std::byte> to(layout.shard_bytes);
  const int right = (run.rank + 1) % run.ranks, left = (run.rank + run.ranks - 1) % run.ranks;
  double best = std::numeric_limits<double>::infinity();
  for (int repeat = 0; repeat < 3; ++repeat) {
    {
      auto guard = run.watchdog->guard("MPI_Barrier before the link measurement", run.timeout);
      mpi::check(MPI_Barrier(run.comm), "MPI_Barrier");
    }
    const auto start = Clock::now();
    std::array<MPI_Request, 2> requests{};
    mpi::check(MPI_Irecv(to.data(), static_cast<int>(to.size()), MPI_BYTE, left, 1, run.comm, &requests[0]), "MPI_Irecv");
    mpi::check(MPI_Isend(from.data(), static_cast<int>(from.size()), MPI_BYTE, right, 1, run.comm, &requests[1]), "MPI_Isend");
    mpi::wait_all(requests, run.timeout, "link measurement");
    const double elapsed = seconds_since(start);
    auto guard = run.watchdog->guard("MPI_Allreduce of the link time", run.timeout);
    best = std::min(best, mpi::max_over_ranks(run.comm, elapsed));
  }
  return static_cast<double>(layout.shard_bytes) / best;
}

double measure_reduce(CollectiveRun& run, const Layout& layout) {
  const std::span<const std::byte> input(run.input);
  std::vector<std::byte> sum(layout.shard_bytes);
  const auto start = Clock::now();
  collective::add_bf16(sum, input.first(layout.shard_bytes), input.subspan(layout.shard_bytes, layout.shard_bytes));
  const double elapsed = seconds_since(start);
  auto guard = run.watchdog->guard("MPI_Allreduce of the reduction time", run.timeout);
  return static_cast<double>(layout.shard_bytes) / mpi::max_over_ranks(run.comm, elapsed);
}

// The reference result of `op` on this rank; reductions also fill `tolerance`.
std::vector<std::byte> reference_result(CollectiveRun& run, Op op, const Layout& layout, std::vector<float>& tolerance) {
  const std::span<const std::byte> input(run.input);
  auto guard = run.watchdog->guard(fmt::format("the reference {}", collective::op_name(op)), run.timeout);
  std::vector<std::byte> reference(layout.total_bytes());
  if (op == Op::all_gather) {
    mpi::mpi_all_gather(run.comm, layout, input.first(layout.shard_bytes), reference);
    return reference;
  }
  std::vector<std::byte> blocks(layout.total_bytes());
  mpi::mpi_exchange_blocks(run.comm, layout, input.first(layout.total_bytes()), blocks);
  std::vector<std::span<const std::byte>> by_rank;
  for (int k = 0; k < run.ranks; ++k)
    by_rank.push_back(std::span<const std::byte>(blocks).subspan(static_cast<std::size_t>(k) * layout.shard_bytes,
                                                                 layout.shard_bytes));
  std::vector<std::byte> mine(layout.shard_bytes);
  collective::reference_sum(by_rank, run.rank, mine);
  tolerance = reduction_tolerance(by_rank);
  if (op == Op::reduce_scatter) return mine;
  mpi::mpi_all_gather(run.comm, layout, mine, reference);
  return reference;
}

}  // namespace

std::size_t result_bytes(Op op, const Layout& layout) {
  return op == Op::reduce_scatter ? layout.shard_bytes : layout.total_bytes();
}

collective::RingStats run_ring(collective::Ring& ring, Op op, const Layout& layout, std::span<const std::byte> input,
                               std::span<std::byte> out) {
  switch (op) {
    case Op::all_gather: return ring.all_gather(layout, input.first(layout.shard_bytes), out);
    case Op::reduce_scatter: return ring.reduce_scatter(layout, input.first(layout.total_bytes()), out);
    case Op::all_reduce: return ring.all_reduce(layout, input.first(layout.total_bytes()), out);
  }
  return {};
}

const ExpectedResult& prepare_expected(CollectiveRun& run, Op op, const Layout& layout) {
  ExpectedResult& e = run.expected;
  if (e.op == op && e.total_bytes == layout.total_bytes() && (e.error || !e.bytes.empty())) return e;
  e = ExpectedResult{};
  e.op = op;
  e.total_bytes = layout.total_bytes();
  e.error = run.agreed(fmt::format("checking the raw ring's {}", collective::op_name(op)), [&] {
    std::vector<std::byte> reference = reference_result(run, op, layout, e.tolerance);
    mpi::MpiChannel channel(run.comm, run.timeout);
    collective::Ring ring(run.rank, run.ranks, channel,
                          collective::RingOptions{codecs::CodecSpec(), run.depth, run.timeout});
    std::vector<std::byte> result(reference.size());
    run_ring(ring, op, layout, run.input, result);
    const auto [differs, _] = std::mismatch(result.begin(), result.end(), reference.begin());
    if (differs != result.end())
      fail("verification: the raw ring's {} differs from the reference at byte {} of {}", collective::op_name(op),
           differs - result.begin(), result.size());
    e.bytes = std::move(reference);
    e.link = measure_link(run, layout);
    e.reduce = measure_reduce(run, layout);
  });
  return e;
}

std::optional<std::string> CollectiveRun::agreed(const std::string& what, const std::function<void()>& body) {
  std::optional<std::string> local;
  try {
    body();
  } catch (const std::exception& e) {
    local = e.what();
  }
  // Should the agreement itself hang (a rank stalls), the abort line still carries this rank's reason.
  auto guard = watchdog->guard("agreeing on " + what + (local ? " (failed here: " + *local + ")" : ""), timeout);
  return mpi::agree_on_failure(comm, local);
}

}  // namespace wirezip::harness
