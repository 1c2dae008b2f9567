#pragma once
// bench_collective's cases: one collective (all-gather, reduce-scatter, all-reduce) of one size
// over every rank, done by wirezip's ring (raw or with a codec; its chunks over MPI or over
// wirezip's tcp links) or by MPI's own collective. Every
// rank runs the same cases in the same order; each timed iteration is the slowest rank's time,
// so every rank's Google Benchmark makes the same decisions and only rank 0 needs to report.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nccl_table.hpp"
#include "wirezip/collective/model.hpp"
#include "wirezip/collective/ring.hpp"
#include "wirezip/collective/ring_channel.hpp"
#include "wirezip/collective/ring_math.hpp"
#include "wirezip/datasets/aligned_bytes.hpp"
#include "wirezip/mpi/baseline.hpp"
#include "wirezip/mpi/session.hpp"

namespace wirezip::harness {

// What is right for one (op, size): the raw ring's result, itself checked against the
// straightforward reference, and what it takes to check MPI's own reductions.
struct ExpectedResult {
  collective::Op op = collective::Op::all_gather;
  std::size_t total_bytes = 0;
  std::vector<std::byte> bytes;    // the whole result this rank must hold
  std::vector<float> tolerance;    // reductions: per element of this rank's block, 2 (n-1) x 2^-8 x sum |x_k|
  std::optional<std::string> error;
  double link = 0;                 // one raw ring step of a shard, bytes per second (slowest rank)
  double reduce = 0;               // bf16 additions, bytes per second (slowest rank)
};

// Shared by every case of one process; owned by bench_collective's run().
struct CollectiveRun {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0, ranks = 1;
  mpi::Watchdog* watchdog = nullptr;
  std::chrono::milliseconds timeout{10000};
  std::size_t chunk_bytes = 1 << 20, depth = 8;
  datasets::AlignedBytes input;  // this rank's contribution, as large as the largest size
  mpi::Bf16SumOp sum;
  int failed_cases = 0;
  ExpectedResult expected;  // the last (op, size) asked for: cases of one size run together
  std::map<std::string, collective::StageRates> stages;  // codec/size -> compress, decompress
  // --transport other than mpi: sets up the ring's links (every rank together). They are made at
  // the first ring case and kept; a failed case (agreed by every rank) drops them, so the next
  // ring case starts on fresh links rather than on whatever the failure left in flight.
  std::function<std::unique_ptr<collective::LinkChannel>()> connect_links;
  std::unique_ptr<collective::LinkChannel> links;
  NcclTable table;  // rank 0 prints it after the cases

  // Runs `body` as one collective step under the watchdog (bound: twice the timeout), then agrees
  // on whether it failed anywhere: the first failing rank's message, on every rank.
  std::optional<std::string> agreed(const std::string& what, const std::function<void()>& body);
};

// The expected result of (op, size) on this rank, computed by all ranks together when the size
// changes (collective_expected.cpp); a failure is in `error`, agreed by every rank.
const ExpectedResult& prepare_expected(CollectiveRun& run, collective::Op op, const collective::Layout& layout);
// Bytes of result a rank holds: a block for reduce-scatter, the whole tensor otherwise.
std::size_t result_bytes(collective::Op op, const collective::Layout& layout);
// `op` through `ring` on this rank's `input` (its leading bytes, as the layout needs).
collective::RingStats run_ring(collective::Ring& ring, collective::Op op, const collective::Layout& layout,
                               std::span<const std::byte> input, std::span<std::byte> out);

enum class CollectiveImpl { ring, mpi };
std::string_view impl_name(CollectiveImpl impl);

struct CollectiveCase {
  CollectiveRun* run = nullptr;
  collective::Op op = collective::Op::all_gather;
  CollectiveImpl impl = CollectiveImpl::ring;
  codecs::CodecSpec codec;  // ring only; empty: raw
  std::size_t size = 0;
  // nccl-tests' in-place form: the input lies in the result buffer (each library's convention:
  // the ring's and all-gather's at this rank's block, MPI's reduce-scatter leaves its block first)
  // and is copied there again before every iteration, untimed.
  bool in_place = false;
};

// Before the timing: the expected result (once per op and size), stage rates, one untimed run.
// Timed: barrier, the collective, the slowest rank's time. After: each rank counts the values of its
// result that differ from the expected ones; their sum over the ranks is the case's #wrong.
void run_collective_case(benchmark::State& state, const CollectiveCase& c);

}  // namespace wirezip::harness
